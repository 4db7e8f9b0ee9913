"""Long fuzzing runs of the targets in tests/fuzz_targets.py: random command lines, mutated table files,
random cluster files and Trinity configs, and published model configs with keys changed.

Run from the repository root with the test extra installed:  python benchmarks/fuzz.py --examples 2000
It prints, per target, how many inputs were tried, how long it took, and whether any broke the contract.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis.strategies import SearchStrategy
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from fuzz_targets import TARGETS


def fuzz(strategy: SearchStrategy[Any], check: Callable[[Any, Path], object], folder: Path,
         examples: int) -> tuple[int, float, float, str]:
    """Run `check` on `examples` inputs drawn from `strategy`, their files in `folder`: (tried, seconds, slowest
    input, failure)."""
    count, slowest = 0, 0.0

    @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def run(value: Any) -> None:
        nonlocal count, slowest
        started = time.perf_counter()
        check(value, folder)
        slowest = max(slowest, time.perf_counter() - started)
        count += 1

    started = time.perf_counter()
    try:
        run()
    except Exception as error:  # noqa: BLE001 - reported in the table
        return count, time.perf_counter() - started, slowest, f"yes: {type(error).__name__}: {str(error)[:80]}"
    return count, time.perf_counter() - started, slowest, "no"


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--examples", type=int, default=2000, help="inputs per target (default 2000)")
    args = parser.parse_args()
    table = Table(title=f"fuzzing, {args.examples} inputs per target")
    for column in ("target", "tried", "seconds", "slowest s", "broke the contract"):
        table.add_column(column, justify="left" if column == "target" else "right")
    with tempfile.TemporaryDirectory() as folder:
        for name, (strategy, check) in TARGETS.items():
            tried, seconds, slowest, failure = fuzz(strategy, check, Path(folder), args.examples)
            table.add_row(name, str(tried), f"{seconds:.1f}", f"{slowest:.2f}", failure)
    Console(width=max(Console().width, 140)).print(table)


if __name__ == "__main__":
    main()
