"""Shared test fixtures."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest


@pytest.fixture
def solve_script() -> Path:
    """The installed ``solve`` console script of the interpreter running the tests."""
    script = Path(sys.executable).parent / ("solve.exe" if os.name == "nt" else "solve")
    assert script.exists(), f"no console script beside {sys.executable}: pip install the package first"
    return script
