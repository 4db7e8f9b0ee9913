"""Lines of solver/ that no test ran in session 68's coverage pass (the whole suite, its ``solve`` subprocesses
too), each run here for what it does: Ctrl-C while a file is written, a file system that cannot be asked whether it
is read-only, a non-finite number in a key that is not a count, the variables a config's interpolations may read
listed without reading them, and a closed pipe under rich's own writes."""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import solver.cli.atomic
from solver.cli.atomic import on_read_only_mount
from solver.cli.output import new_console
from solver.tables import load_catalog
from solver.trinity import trinity_config_problems
from solver.trinity.interpolation import VariablesRead


def test_ctrl_c_while_the_file_is_written_leaves_no_file(cli: Callable[..., tuple[int, str, str]], tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch):
    # Interrupted before the new text is in place: the temporary file beside it is removed, the interrupt goes on to
    # main (130, one line), and the folder is as it was.
    def interrupted(descriptor: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(solver.cli.atomic.os, "fsync", interrupted)
    status, out, err = cli("--model", "4B", "--len", "32k", "--gpu", "a100", "--out", str(tmp_path / "plan.yaml"))
    assert (status, out, err) == (130, "", "solve: interrupted\n")
    assert list(tmp_path.iterdir()) == []


def test_a_file_system_that_cannot_be_asked_is_not_read_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # "Read-only file system" only where statvfs says so: not for a path it cannot look up, nor where the platform
    # has no statvfs (Windows), where "Permission denied" stands.
    assert on_read_only_mount(tmp_path) is False
    assert on_read_only_mount(tmp_path / "missing" / "plan.yaml") is False
    monkeypatch.delattr(os, "statvfs")
    assert on_read_only_mount(tmp_path) is False


@pytest.mark.parametrize(("value", "shown"), [(float("inf"), ".inf"), (float("nan"), ".nan")])
def test_a_non_finite_rope_factor_is_not_a_number(value: float, shown: str):
    # OmegaConf reads .inf and .nan as floats: a YaRN factor, no count (`NUMBER_KEYS`), is refused as no number too.
    rope = {"rope_type": "yarn", "factor": value, "original_max_position_embeddings": 32768, "rope_theta": 1000000}
    mapping = {"model": {"model_path": "Qwen/Qwen3-8B", "max_model_len": 65536, "rope_scaling": rope}}
    problems = trinity_config_problems(mapping, load_catalog().model("8B"), 8)
    assert [(problem.code.value, problem.words) for problem in problems] == [
        ("not-a-number", f"model.rope_scaling.factor must be a finite number, got {shown}")]


def test_listing_the_variables_reads_none_of_them():
    # Only a variable read (or asked for) counts as found: listing the environment's names reads no value.
    variables = VariablesRead({"NGPUS": "8", "HF_TOKEN": "secret"})
    assert (list(variables), len(variables), variables.found) == (["NGPUS", "HF_TOKEN"], 2, {})
    assert variables["NGPUS"] == "8" and variables.found == {"NGPUS": "8"}


def test_a_closed_pipe_under_rich_s_own_write_is_left_to_main(monkeypatch: pytest.MonkeyPatch):
    # Rich's own handler would point stdout at os.devnull and exit 1; the piped console raises it on for main, which
    # exits with SIGPIPE's status (141).
    class Gone(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stdout", Gone())
    console = new_console()
    assert not console.is_terminal
    with pytest.raises(BrokenPipeError):
        console.out("a line")
