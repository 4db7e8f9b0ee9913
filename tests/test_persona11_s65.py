"""Three new users' first hour (review s65, helper persona11): a GPU name with a bare memory size after a known one
(``h20-141``, the 141 GB H20) gets no guess of the catalogue's card of another memory, as ``h20-141gb`` gets none;
and the commands the guide's shell blocks give read files that a fresh clone has, run from its root."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from solver import QueryError, load_catalog

ROOT = Path(__file__).resolve().parent.parent

FILE_OPTIONS = ("--cells", "--from-config", "--model-config", "--memory-model", "--weights")
"""The options of `solve` that read a file the user gives."""


@pytest.mark.parametrize(("name", "guess"), [
    ("h20-141", ""),  # the H20 of 141 GB: another card than the H20-96GB (was guessed so)
    ("h100-94", ""),  # the H100 NVL's memory, not the H100-80GB (was guessed so)
    ("a100-48", ""),  # no A100 has 48 GB: no guess (was the A100-80GB)
    ("l40s-96", ""),
    ("a100-40", " (did you mean A100-40GB?)"),  # the start of a name that has that memory: still guessed
])
def test_a_bare_memory_size_after_a_gpu_name_is_another_card(name: str, guess: str):
    with pytest.raises(QueryError) as raised:
        load_catalog().gpu(name)
    assert str(raised.value).startswith(f"unknown GPU {name!r}{guess}; accepted: A100-40GB/80GB, ")


def _shell_commands(page: Path) -> list[list[str]]:
    """The ``solve ...`` lines of `page`'s ```bash blocks, each split as a shell would, comments left out."""
    blocks = re.findall(r"```bash\n(.*?)```", page.read_text(encoding="utf-8"), re.DOTALL)
    return [shlex.split(line, comments=True) for block in blocks for line in block.splitlines()
            if line.strip().startswith("solve ")]


@pytest.mark.parametrize("page", ["README.md", "docs/guide.md"])
def test_the_files_the_shell_blocks_read_are_in_a_fresh_clone(page: str):
    commands = _shell_commands(ROOT / page)
    written: set[str] = set()
    missing = []
    for words in commands:
        for option, value in zip(words, words[1:]):
            if option in FILE_OPTIONS and value not in written and not (ROOT / value).exists():
                missing.append(f"{option} {value}")
            if option == "--out":
                written.add(value)
    assert missing == []
    if page == "docs/guide.md":  # the calibration's two commands, the second reading what the first writes
        assert any("--memory-model" in words for words in commands)
