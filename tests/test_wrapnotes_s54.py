"""Notes and warnings on stderr wrap at spaces to a terminal's width, with a hanging indent; to a pipe or a file each
stays one line (scripts grep them), and an error's line always does."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from terminal import read_until_closed

from solver.cli.output import NOTE_INDENT, print_note

pytestmark = pytest.mark.skipif(os.name == "nt", reason="a pseudo-terminal")

MEMORY_AS_SOLD = ["--gpu", "mycard", "--gpu-memory", "24", "--model", "1.7B", "--gpus", "1", "--len", "8192",
                  "--margin", "0.01"]  # a plan (exit 0) at the memory model's own margin, not a 24 GiB card's default
MEMORY_AS_SOLD_NOTE = (
    "solve: note: --gpu-memory 24GB is taken as 24 GiB, and as sold it borrows no other GPU type's tables (24GiB or "
    "nvidia-smi's total would, where a GPU type's driver reports as much); a card may report less than it is sold "
    "with, of HBM (an H100 80GB: 79.6 GiB) or of GDDR with ECC (an L40S 48GB: 45.0 GiB), so give nvidia-smi's total "
    "where you have it (--gpu-memory 81559MiB for an H100 80GB, 46068MiB for an L40S)")


def _stderr_on_a_terminal(command: list[str], columns: str) -> tuple[int, str]:
    """Run `command` with stderr on a pseudo-terminal (stdout to nowhere) that ``COLUMNS`` sizes: its exit status
    and what the terminal shows (its line ends as ``\\n``)."""
    leader, follower = os.openpty()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=follower,
                               env={**os.environ, "TERM": "xterm-256color", "COLUMNS": columns})
    os.close(follower)
    shown = read_until_closed(leader)
    return process.wait(timeout=60), shown.decode().replace("\r\n", "\n")


def test_a_note_on_an_80_column_terminal_wraps_at_spaces_with_a_hanging_indent(solve_script: Path):
    status, shown = _stderr_on_a_terminal([str(solve_script), *MEMORY_AS_SOLD], "80")
    assert (status, shown) == (0, (
        "solve: note: --gpu-memory 24GB is taken as 24 GiB, and as sold it borrows no\n"
        "  other GPU type's tables (24GiB or nvidia-smi's total would, where a GPU type's\n"
        "  driver reports as much); a card may report less than it is sold with, of HBM\n"
        "  (an H100 80GB: 79.6 GiB) or of GDDR with ECC (an L40S 48GB: 45.0 GiB), so give\n"
        "  nvidia-smi's total where you have it (--gpu-memory 81559MiB for an H100 80GB,\n"
        "  46068MiB for an L40S)\n"))
    # the same words as the pipe's line: only spaces became line ends and indents
    assert " ".join(line.strip() for line in shown.splitlines()) == MEMORY_AS_SOLD_NOTE
    # docs/cli.md shows it (in a list item: indented two more)
    shown_in_docs = "".join(f"  {line}\n" for line in shown.splitlines())
    assert f"  ```text\n{shown_in_docs}  ```\n" in (Path(__file__).parents[1] / "docs" / "cli.md").read_text()


def test_the_table_width_note_wraps_on_the_terminal_that_is_too_narrow(solve_script: Path):
    # Stdout and stderr on one 80-column terminal: the A100's 6-GPU table needs 112 columns, and its note wraps there.
    leader, follower = os.openpty()
    process = subprocess.Popen([str(solve_script), "tables", "--gpu", "a100-80g", "--gpus", "6"], stdout=follower,
                               stderr=follower, env={**os.environ, "TERM": "xterm-256color", "COLUMNS": "80"})
    os.close(follower)
    shown = read_until_closed(leader).decode().replace("\r\n", "\n")
    assert process.wait(timeout=60) == 0
    assert ("solve tables: note: the table needs 112 columns and the terminal has 80: widen\n"
            f"{NOTE_INDENT}it, pipe the output (| less -S), or use --json\n") in shown


@pytest.mark.parametrize("colour", [{}, {"FORCE_COLOR": "1"}, {"TTY_COMPATIBLE": "1"}])
def test_a_note_to_a_pipe_is_its_one_line_unchanged(cli, monkeypatch: pytest.MonkeyPatch, colour: dict[str, str]):
    # also where FORCE_COLOR or TTY_COMPATIBLE has rich take the pipe for a terminal (colour in a CI's log, no width)
    for name, value in {"COLUMNS": "80", **colour}.items():
        monkeypatch.setenv(name, value)
    status, _, err = cli(*MEMORY_AS_SOLD)
    assert (status, err) == (0, MEMORY_AS_SOLD_NOTE + "\n")


def test_a_note_to_a_real_pipe_where_force_color_is_set_is_its_one_line_unchanged(solve_script: Path):
    # the case above through the console script, its stderr a pipe
    process = subprocess.run([str(solve_script), *MEMORY_AS_SOLD], check=False, capture_output=True, timeout=60,
                             env={**os.environ, "COLUMNS": "80", "FORCE_COLOR": "1"})
    assert (process.returncode, process.stderr.decode()) == (0, MEMORY_AS_SOLD_NOTE + "\n")


def test_an_error_on_an_80_column_terminal_stays_one_line(solve_script: Path):
    status, shown = _stderr_on_a_terminal([str(solve_script), "--gpu", "h100", "--gpu-memory", "80", "--model", "4B"],
                                          "80")
    assert (status, shown) == (2, (
        "solve: error: --gpu h100 names H100-80GB (79.6 GiB), a GPU type whose memory is known: drop --gpu-memory, "
        "or give your GPU type a name of its own\n"))


def _shown_on_a_terminal(line: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """What `print_note(line)` shows with stderr on a pseudo-terminal (the environment as the test set it)."""
    leader, follower = os.openpty()
    with open(follower, "w", encoding="utf-8") as terminal, monkeypatch.context() as patch:
        patch.setattr(sys, "stderr", terminal)
        print_note(line)
    # All of it, until the closed end: one read of a pseudo-terminal may return only its first lines.
    return read_until_closed(leader).decode().replace("\r\n", "\n")


WORDS = "solve: note: " + " ".join(f"word{number}" for number in range(40))


@pytest.mark.parametrize("columns", ["40", "80", "120"])
def test_a_note_wraps_to_the_columns_the_terminal_has(monkeypatch: pytest.MonkeyPatch, columns: str):
    monkeypatch.setenv("COLUMNS", columns)
    lines = _shown_on_a_terminal(WORDS, monkeypatch).splitlines()
    assert max(map(len, lines)) <= int(columns) < max(map(len, lines)) + len(" word10")
    assert all(line.startswith(NOTE_INDENT + "word") for line in lines[1:])
    assert " ".join(line.strip() for line in lines) == WORDS


@pytest.mark.parametrize("columns", ["0", "5"])
def test_a_terminal_that_says_it_has_no_columns_wraps_notes_at_80(monkeypatch: pytest.MonkeyPatch, columns: str):
    # as stdout's layout takes it (COLUMNS=0, as some containers set it): 80 columns, not a word a line
    monkeypatch.setenv("COLUMNS", columns)
    assert [len(line) for line in _shown_on_a_terminal(WORDS, monkeypatch).splitlines()] == [79, 78, 78, 50]


def test_a_terminal_tty_compatible_0_says_is_none_gets_the_one_line(monkeypatch: pytest.MonkeyPatch):
    # rich from 14 takes TTY_COMPATIBLE=0 for no terminal (rich 13 ignores it: wrapped there)
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("TTY_COMPATIBLE", "0")
    shown = _shown_on_a_terminal(WORDS, monkeypatch)
    assert (shown == WORDS + "\n") is (int(version("rich").split(".")[0]) >= 14)


def test_a_word_longer_than_the_terminal_is_not_broken(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("COLUMNS", "40")
    path = "/data/" + "x" * 60 + "/cells.yaml"
    assert _shown_on_a_terminal(f"solve: note: {path}: its cells are for H20-96GB", monkeypatch) == (
        f"solve: note:\n{NOTE_INDENT}{path}:\n{NOTE_INDENT}its cells are for H20-96GB\n")


def test_a_note_to_a_file_keeps_its_escapes_on_one_line(monkeypatch: pytest.MonkeyPatch):
    stderr = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    monkeypatch.setenv("COLUMNS", "20")
    print_note("solve: note: a\x1b[31m name " + "and more words " * 10)
    assert stderr.getvalue() == "solve: note: a\\x1b[31m name " + "and more words " * 10 + "\n"
