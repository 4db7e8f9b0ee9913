"""`solve` in a script's pipeline: a crash has an exit status of its own (70), never 1, which says an answer has no
plan; a file or folder on a read-only mount is said to be there, not "Permission denied" (docs/cli.md)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import pytest

import solver.api
from solver.__main__ import run
from solver.tables import Undecided

FLEET = Path(__file__).parent.parent / "docs" / "examples" / "fleet.yaml"
TRINITY = Path(__file__).parent.parent / "docs" / "examples" / "trinity.yaml"

CRASH_LINE = "solve: internal error (the traceback above): no answer, and no bad input; exit status 70\n"


def crashed(*args: Any, **kwargs: Any) -> NoReturn:
    raise RuntimeError("a defect")


@pytest.mark.parametrize(("name", "argv"), [
    ("answer_query", ["--model", "4B", "--gpu", "a100", "--len", "8k", "--json"]),
    ("place", ["cluster", str(FLEET), "--json"]),
])
def test_a_crash_exits_70_with_its_traceback_and_a_line_saying_so(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], name: str, argv: list[str]):
    monkeypatch.setattr(solver.api, name, crashed)  # the library call the command makes
    monkeypatch.setattr(sys, "argv", ["solve", *argv])
    status = run()
    out, err = capsys.readouterr()
    assert (status, out) == (70, "")
    assert err.startswith("Traceback (most recent call last):\n")
    assert err.endswith(f"RuntimeError: a defect\n{CRASH_LINE}")


def test_a_crash_with_standard_error_closed_still_exits_70_and_prints_nothing(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    monkeypatch.setattr(solver.api, "answer_query", crashed)
    monkeypatch.setattr(sys, "argv", ["solve", "--model", "4B", "--gpu", "a100", "--len", "8k", "--json"])
    monkeypatch.setattr(sys, "stderr", None)  # 2>&-: Python starts with no sys.stderr
    assert run() == 70
    assert capsys.readouterr() == ("", "")


def test_an_undecided_config_verdict_exits_1_with_no_json(
        cli: Callable[..., tuple[int, str, str]], monkeypatch: pytest.MonkeyPatch):
    # Exit 1 of `solve --json` comes with the answers, but for a --from-config verdict the time limit left open
    # (docs/cli.md's (a)): then stdout is empty, so a script's JSON parser must not be handed it.
    def undecided(*args: Any, **kwargs: Any) -> NoReturn:
        raise Undecided("no plan found for Qwen3-8B on H100-80GB within the time limit of 0.01 s")

    monkeypatch.setattr(solver.api, "with_config_verdicts", undecided)
    assert cli("--from-config", str(TRINITY), "--gpu", "h100", "--json") == (
        1, "", ("solve: undecided: no plan found for Qwen3-8B on H100-80GB within the time limit of 0.01 s; nothing "
                "printed (a longer --time-limit may decide it)\n"))


@pytest.fixture
def read_only_mount(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder `ro` holding `o.yaml`, on what the commands see as a read-only mount (as root, where permissions
    would not stop a write); the working directory is its parent."""
    folder = tmp_path / "ro"
    folder.mkdir()
    (folder / "o.yaml").write_text("mine\n", encoding="utf-8")
    real_access, real_statvfs = os.access, os.statvfs

    def on_it(path: Any) -> bool:
        return folder in (Path(path).absolute(), *Path(path).absolute().parents)

    def access(path: Any, mode: int, **kwargs: Any) -> bool:
        return not (mode & os.W_OK and on_it(path)) and real_access(path, mode, **kwargs)

    def statvfs(path: Any) -> Any:
        return types.SimpleNamespace(f_flag=os.ST_RDONLY) if on_it(path) else real_statvfs(path)

    monkeypatch.setattr(os, "access", access)
    monkeypatch.setattr(os, "statvfs", statvfs)
    monkeypatch.chdir(tmp_path)
    return folder


@pytest.mark.skipif(os.name == "nt", reason="POSIX mounts")
@pytest.mark.parametrize(("argv", "message"), [
    (["--model", "4B", "--len", "8k", "--gpu", "a100", "--out", "ro/o.yaml"],
     "solve: error: --out ro/o.yaml: cannot write: Read-only file system"),
    (["--model", "4B", "--len", "8k", "--gpu", "a100", "--out", "ro/new.yaml"],
     ("solve: error: --out ro/new.yaml: cannot write: a temporary file cannot be created in ro (the folder is on a "
      "read-only file system); the file is written there first, then renamed into place")),
    (["cluster", str(FLEET), "--emit-dir", "ro/new"],
     "solve cluster: error: --emit-dir ro/new: cannot make the folder: ro is on a read-only file system"),
    (["examples", "ro/new"], "solve examples: error: ro/new: cannot make the folder: ro is on a read-only file system"),
], ids=["out", "out-new", "emit-dir-to-make", "examples-to-make"])
def test_a_read_only_mount_is_named_not_taken_for_permissions(
        cli: Callable[..., tuple[int, str, str]], read_only_mount: Path, argv: list[str], message: str):
    assert cli(*argv) == (2, "", f"{message}\n")
    assert [path.name for path in read_only_mount.iterdir()] == ["o.yaml"]


@pytest.mark.skipif(os.name == "nt", reason="POSIX mounts")
def test_a_real_read_only_mount_is_named(tmp_path: Path, solve_script: Path):
    # A bind mount made read-only in a mount namespace of its own (root, or where user namespaces are allowed).
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-rm", "true"], capture_output=True,
                                                         check=False).returncode != 0:
        pytest.skip("no mount namespace to make a read-only mount in")
    (tmp_path / "ro").mkdir()
    (tmp_path / "ro" / "o.yaml").write_text("mine\n", encoding="utf-8")
    script = ('mount --bind ro ro && mount -o remount,bind,ro ro && exec "$0" --model 4B --len 8k --gpu a100 '
              '--out ro/o.yaml')
    result = subprocess.run(["unshare", "-rm", "sh", "-c", script, str(solve_script)], cwd=tmp_path,
                            capture_output=True, text=True, timeout=60, check=False)
    assert (result.returncode, result.stdout, result.stderr) == (
        2, "", "solve: error: --out ro/o.yaml: cannot write: Read-only file system\n")
    assert (tmp_path / "ro" / "o.yaml").read_text(encoding="utf-8") == "mine\n"
