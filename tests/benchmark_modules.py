"""Scripts of `benchmarks/` loaded as modules for the tests (benchmarks/ is no package)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).parents[1] / "benchmarks"


def load_benchmark(script: str) -> ModuleType:
    """`benchmarks/<script>.py` as a module."""
    spec = importlib.util.spec_from_file_location(f"{script}_benchmark", BENCHMARKS / f"{script}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
