"""Shared test fixtures."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from solver.cli import main


@pytest.fixture
def solve_script() -> Path:
    """The installed ``solve`` console script of the interpreter running the tests."""
    script = Path(sys.executable).parent / ("solve.exe" if os.name == "nt" else "solve")
    assert script.exists(), f"no console script beside {sys.executable}: pip install the package first"
    return script


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """Run ``solve`` in-process through its entry point: ``cli("tables", "--json")`` gives
    (exit status, stdout, stderr), counting argparse's exits (usage errors, --help) as statuses."""

    def run(*argv: str) -> tuple[int, str, str]:
        try:
            status = main(list(argv))
        except SystemExit as exit_:
            status = int(exit_.code or 0)
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    return run
