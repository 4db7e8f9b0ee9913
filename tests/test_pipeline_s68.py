"""`solve` in a script's pipeline: a crash has an exit status of its own (70), never 1, which says an answer has no
plan (docs/cli.md)."""

from __future__ import annotations

import sys
from typing import Any, NoReturn

import pytest

import solver.api
from solver.__main__ import main

CRASH_LINE = "solve: internal error (the traceback above): no answer, and no bad input; exit status 70\n"


def crashed(*args: Any, **kwargs: Any) -> NoReturn:
    raise RuntimeError("a defect")


@pytest.mark.parametrize(("name", "argv"), [
    ("answer_query", ["--model", "4B", "--gpu", "a100", "--len", "8k", "--json"]),
    ("place", ["cluster", "docs/examples/fleet.yaml", "--json"]),
])
def test_a_crash_exits_70_with_its_traceback_and_a_line_saying_so(monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str], name: str,
                                                                   argv: list[str]):
    monkeypatch.setattr(solver.api, name, crashed)  # the library call the command makes
    monkeypatch.setattr(sys, "argv", ["solve", *argv])
    status = main()
    out, err = capsys.readouterr()
    assert (status, out) == (70, "")
    assert err.startswith("Traceback (most recent call last):\n")
    assert err.endswith(f"RuntimeError: a defect\n{CRASH_LINE}")


def test_a_crash_with_standard_error_closed_still_exits_70_and_prints_nothing(monkeypatch: pytest.MonkeyPatch,
                                                                             capsys: pytest.CaptureFixture[str]):
    monkeypatch.setattr(solver.api, "answer_query", crashed)
    monkeypatch.setattr(sys, "argv", ["solve", "--model", "4B", "--gpu", "a100", "--len", "8k", "--json"])
    monkeypatch.setattr(sys, "stderr", None)  # 2>&-: Python starts with no sys.stderr
    assert main() == 70
    assert capsys.readouterr() == ("", "")
