"""Planner benchmarks: start-up cost of `solve`, in-process latency per query, a sweep of every cell, and
the time `--explain` takes on large GPU budgets.

Run from the repository root after installing the package:  python benchmarks/planner.py
It prints one table: each measure, its figure, the target, and whether the figure meets it.
"""

from __future__ import annotations

import argparse
import compileall
import statistics
import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

import solver
from solver.explain import explain
from solver.query import make_query
from solver.solve import plan
from solver.tables import load_catalog

MAIN_JOB = ["--maximize", "len", "--gpus", "6", "--model", "4B"]
BARE_IMPORT = "from ortools.sat.python import cp_model"
STACK_FLOOR = (
    "from ortools.sat.python import cp_model\nimport argparse, rich.console, rich.table\n"
    "from pydantic import BaseModel\nclass A(BaseModel):\n    x: int\nA(x=1)"
)
"""The least any CLI on this stack pays: OR-Tools, argparse, rich, and one pydantic validation."""


def wall_times(command: list[str], runs: int) -> list[float]:
    """Wall seconds of `runs` runs of `command`, output discarded."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - started)
    return times


def start_up(runs: int) -> tuple[float, float, float]:
    """Median wall times of the main job through the installed `solve`, of the bare OR-Tools import,
    and of the stack's floor (OR-Tools, argparse, rich and pydantic, doing nothing)."""
    solve = str(Path(sys.executable).parent / "solve")
    # As `pip install .` leaves it: the package's bytecode compiled. (An editable install run with
    # PYTHONDONTWRITEBYTECODE=1, as on the development machine, would compile the sources on every run.)
    compileall.compile_dir(Path(solver.__file__).parent, quiet=1)
    bare, job, floor = [], [], []
    for _ in range(runs):  # interleaved, so that drift in machine load hits all alike
        bare += wall_times([sys.executable, "-c", BARE_IMPORT], 1)
        job += wall_times([solve, *MAIN_JOB], 1)
        floor += wall_times([sys.executable, "-c", STACK_FLOOR], 1)
    return statistics.median(job), statistics.median(bare), statistics.median(floor)


def latency(rounds: int, gpu: str | None) -> tuple[float, float, int]:
    """p50 and p95 seconds of one query over a mix of objectives, models and pins: on one GPU type
    (one answer), or on every GPU type (`gpu` None, one answer each, as `solve` without --gpu)."""
    catalog = load_catalog()
    requests = [
        dict(model="4B", objective="max_len", budget_gpus=6),
        dict(model="8B", max_model_len=32768, budget_gpus=4),
        dict(model="8B", objective="min_gpus", max_model_len=65536),
        dict(model="14B", max_model_len=40960, budget_gpus=6, offload=False),
        dict(model="0.6B", max_model_len=20000, budget_gpus=2, exact=True, sp=2),
        dict(model="1.7B", objective="max_len", budget_gpus=4, top=5),
        dict(model="8B", max_model_len=200000, budget_gpus=4),
    ]
    queries = [make_query(catalog, gpu=gpu, **request) for request in requests]
    for query in queries:
        plan(query, catalog)  # warm caches
    times = []
    for _ in range(rounds):
        for query in queries:
            started = time.perf_counter()
            plan(query, catalog)
            times.append(time.perf_counter() - started)
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))], len(times)


def sweep() -> tuple[float, int]:
    """Seconds to solve every documented cell (cheapest, exact count, at its row) and every table's
    longest length per model (maximise, exact count), in one process; and how many solves."""
    catalog = load_catalog()
    started = time.perf_counter()
    solved = 0
    for gpu in catalog.gpu_types:
        for table in gpu.tables:
            for model in table.models:
                for row in table.rows:
                    query = make_query(catalog, model=model, gpu=gpu.name, budget_gpus=table.gpus, exact=True,
                                       max_model_len=row.max_model_len)
                    plan(query, catalog)
                    solved += 1
                query = make_query(catalog, model=model, gpu=gpu.name, objective="max_len",
                                   budget_gpus=table.gpus, exact=True)
                plan(query, catalog)
                solved += 1
    return time.perf_counter() - started, solved


EXPLAINED = (("Qwen3-8B", "A100-80GB", 64), ("Qwen3-32B", "H100-80GB", 32), ("Qwen3-4B", "H20-96GB", 16))
"""Longest-context questions whose explanations ask the most: (model, GPU type, GPU budget)."""


def explanations(runs: int) -> list[tuple[str, float, bool]]:
    """For each of `EXPLAINED`, the median seconds its explanation takes (at the default 10 s time limit) over
    `runs` runs, and whether every question behind it was decided (no `incomplete` reason)."""
    catalog = load_catalog()
    found = []
    for model, gpu, budget in EXPLAINED:
        query = make_query(catalog, model=model, gpu=gpu, objective="max_len", budget_gpus=budget)
        (answer,) = plan(query, catalog)
        times, complete = [], True
        for _ in range(runs):
            started = time.perf_counter()
            reasons = explain(catalog, query, answer)
            times.append(time.perf_counter() - started)
            complete = complete and all(reason.rule != "incomplete" for reason in reasons)
        found.append((f"{model} within {budget} {gpu}", statistics.median(times), complete))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--runs", type=int, default=15, help="start-up runs of each command (default 15)")
    parser.add_argument("--rounds", type=int, default=100, help="rounds of the latency query mix (default 100)")
    parser.add_argument("--explain-runs", type=int, default=3, help="runs of each explanation (default 3)")
    args = parser.parse_args()

    job, bare, floor = start_up(args.runs)
    p50, p95, count = latency(args.rounds, gpu=None)
    one_p50, one_p95, one_count = latency(args.rounds, gpu="A100-80GB")
    swept, solves = sweep()
    explained = explanations(args.explain_runs)
    ratio = job / bare

    table = Table(title="rft-solver planner benchmarks")
    for column in ("measure", "figure", "target", "met"):
        table.add_column(column)
    table.add_row(f"`solve {' '.join(MAIN_JOB)}`, median wall", f"{job * 1000:.0f} ms", "", "")
    table.add_row(f"bare `{BARE_IMPORT}`, median wall", f"{bare * 1000:.0f} ms", "", "")
    table.add_row("start-up ratio (solve / bare import)", f"{ratio:.2f}", "<= 1.25", "yes" if ratio <= 1.25 else "NO")
    table.add_row("floor ratio (OR-Tools + argparse + rich + pydantic, no work / bare import)",
                  f"{floor / bare:.2f}", "", "")
    table.add_row(f"query latency, both GPU types, p50 ({count} queries)", f"{p50 * 1000:.2f} ms", "<= 5 ms",
                  "yes" if p50 <= 0.005 else "NO")
    table.add_row("query latency, both GPU types, p95", f"{p95 * 1000:.2f} ms", "", "")
    table.add_row(f"query latency, one GPU type, p50 ({one_count} queries)", f"{one_p50 * 1000:.2f} ms", "", "")
    table.add_row("query latency, one GPU type, p95", f"{one_p95 * 1000:.2f} ms", "", "")
    table.add_row(f"sweep: every cell and every table's longest ({solves} queries)", f"{swept:.2f} s", "<= 3 s",
                  "yes" if swept <= 3 else "NO")
    for name, seconds, complete in explained:
        table.add_row(f"--explain, longest context of {name}, median", f"{seconds:.2f} s",
                      "complete within 10 s", "yes" if complete and seconds <= 10 else "NO")
    Console().print(table)


if __name__ == "__main__":
    main()
