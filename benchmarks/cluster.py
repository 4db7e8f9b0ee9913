"""Cluster benchmarks: seeded fleets and job lists from 8 GPUs / 10 jobs to 4096 GPUs / 5000 jobs,
solved by `solve cluster`'s CP-SAT model and by the greedy baseline, one table.

Run from the repository root with the package installed:  python benchmarks/cluster.py [--host-ram GB]
Each size runs in its own process, so that the peak memory (max RSS) is that size's alone. With
--host-ram, every node has that much host memory per 8 GPUs, which the Offload jobs on it share.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from rich.console import Console
from rich.table import Table

SIZES = [  # (GPUs in the fleet, jobs, time limit in seconds)
    (8, 10, 10),
    (64, 100, 10),
    (512, 1000, 10),
    (4096, 5000, 60),
]
IDLE_SIZES = [  # (GPUs in the fleet, jobs, time limit in seconds): fewer jobs than the fleet has room for
    (64, 8, 10),
    (512, 60, 10),
]
MODELS = ["Qwen3-0.6B", "Qwen3-1.7B", "Qwen3-4B", "Qwen3-8B", "Qwen3-14B"]
LENGTHS = [4096, 8192, 16384, 20480, 32768, 40960, 51200, 65536, 81920, 102400]


def generate(gpus: int, jobs: int, seed: int, host_ram_gb: float | None = None) -> dict:
    """A fleet of about `gpus` GPUs in A100 and H20 pools of 8-GPU (and some 4-GPU) nodes, with
    `host_ram_gb` of host memory per 8 GPUs of a node (or none given), and `jobs` jobs with mixed models,
    lengths (a quarter of them `at_least`), rollout GPUs, priorities and pools."""
    rng = random.Random(seed)
    pools = []
    remaining = gpus
    kinds = [("a100", "A100-80GB", 8), ("h20", "H20-96GB", 8), ("a100-small", "A100-80GB", 4)]
    for index, (name, gpu, per_node) in enumerate(kinds):
        share = remaining if index == len(kinds) - 1 else max(per_node, gpus // len(kinds) // per_node * per_node)
        nodes = max(1, share // per_node)
        pools.append({"name": name, "gpu": gpu, "nodes": nodes, "gpus_per_node": per_node,
                      **({"host_ram_gb": host_ram_gb * per_node / 8} if host_ram_gb is not None else {})})
        remaining = max(0, remaining - nodes * per_node)
        if remaining == 0:
            break
    job_list = []
    for index in range(jobs):
        length = rng.choice(LENGTHS)
        job = {
            "name": f"job-{index:04d}",
            "model": rng.choice(MODELS),
            "max_model_len": {"at_least": length} if rng.random() < 0.25 else length,
            "rollout_gpus": rng.choice([0, 1, 2, 2, 4]),
            "priority": rng.choice([1, 1, 2, 3, 5]),
        }
        if rng.random() < 0.2:
            job["pool"] = rng.choice(pools)["name"]
        job_list.append(job)
    return {"pools": pools, "jobs": job_list}


def run_idle(gpus: int, jobs: int, limit: float, seed: int) -> dict:
    """Solve one fleet with idle GPUs with and without widening; returns the figures as a dict."""
    from solver.cluster import Planner, place
    from solver.tables import load_catalog, load_fleet, load_weights

    catalog = load_catalog()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fleet.yaml"
        path.write_text(yaml.safe_dump(generate(gpus, jobs, seed)), encoding="utf-8")
        fleet = load_fleet(path, catalog)
    figures: dict = {"gpus": sum(p.nodes * p.gpus_per_node for p in fleet.pools), "jobs": jobs, "limit": limit}
    for widen in (False, True):
        started = time.perf_counter()
        result = place(fleet, Planner(catalog.for_fleet(fleet), load_weights(), "auto", limit), widen=widen)
        key = "widened" if widen else "plain"
        figures[key] = {
            "seconds": time.perf_counter() - started, "status": result.status, "placed": len(result.placements),
            "cost": sum(p.plan.cost for p in result.placements),
            "gpus_used": sum(p.trainer_gpus + p.rollout_gpus for p in result.placements),
            "grown": sum(p.widened_from is not None for p in result.placements)}
    return figures


def run_one(gpus: int, jobs: int, limit: float, seed: int, host_ram_gb: float | None) -> dict:
    """Solve one size in this process; returns the figures (and peak memory) as a dict."""
    from solver.cluster import Planner, greedy, place
    from solver.tables import load_catalog, load_fleet, load_weights

    catalog = load_catalog()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fleet.yaml"
        path.write_text(yaml.safe_dump(generate(gpus, jobs, seed, host_ram_gb)), encoding="utf-8")
        fleet = load_fleet(path, catalog)
    started = time.perf_counter()
    baseline = greedy(fleet, catalog)
    greedy_seconds = time.perf_counter() - started
    started = time.perf_counter()
    result = place(fleet, Planner(catalog.for_fleet(fleet), load_weights(), "auto", limit))
    seconds = time.perf_counter() - started
    return {
        "gpus": sum(p.nodes * p.gpus_per_node for p in fleet.pools), "jobs": jobs, "limit": limit,
        "seconds": seconds, "status": result.status, "objective": result.objective, "bound": result.bound,
        "gap": result.gap or 0.0, "greedy": baseline.objective, "greedy_seconds": greedy_seconds,
        "placed": len(result.placements),
        "widened": sum(placement.widened_from is not None for placement in result.placements), "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "host_rounded": len(result.host_rounded),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--seed", type=int, default=1, help="generator seed (default 1)")
    parser.add_argument("--one", nargs=3, type=float, metavar=("GPUS", "JOBS", "LIMIT"), help=argparse.SUPPRESS)
    parser.add_argument("--largest", type=int, default=len(SIZES),
                        help="how many sizes to run, from the smallest (1: 8 GPUs only; 3: 8 to 512 GPUs; "
                             "default 4: all, up to 4096 GPUs)")
    parser.add_argument("--host-ram", type=float, metavar="GB",
                        help="host memory per 8 GPUs of a node (half on a 4-GPU node), shared by the jobs on it: "
                             "every job's start-up load and Offload jobs' states (default: not checked)")
    parser.add_argument("--idle", action="store_true",
                        help="fleets with fewer jobs than room: the placement with and without widening onto idle GPUs")
    args = parser.parse_args()
    if args.idle:
        idle_table(args.seed)
        return
    if args.one:
        gpus, jobs, limit = args.one
        print(json.dumps(run_one(int(gpus), int(jobs), limit, args.seed, args.host_ram)))
        return
    host = f", {args.host_ram:g} GB host memory per 8 GPUs" if args.host_ram is not None else ""
    table = Table(title=f"rft-solver cluster benchmarks (seed {args.seed}{host})")
    for column in ("GPUs", "jobs", "limit s", "time s", "status", "objective", "bound", "gap", "greedy",
                   "placed", "widened", "peak MB", "pools rounded"):
        table.add_column(column, justify="right")
    for gpus, jobs, limit in SIZES[: args.largest]:
        command = [sys.executable, __file__, "--seed", str(args.seed), "--one", str(gpus), str(jobs), str(limit),
                   *(["--host-ram", str(args.host_ram)] if args.host_ram is not None else [])]
        row = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
        table.add_row(str(row["gpus"]), str(row["jobs"]), f"{row['limit']:g}", f"{row['seconds']:.1f}", row["status"],
                      str(row["objective"]), str(row["bound"]), f"{row['gap']:.2%}", str(row["greedy"]),
                      str(row["placed"]), str(row["widened"]), f"{row['peak_mb']:.0f}", str(row["host_rounded"]))
    Console(width=max(Console().width, 140)).print(table)


def idle_table(seed: int) -> None:
    """Print the widening figures of `IDLE_SIZES`."""
    table = Table(title=f"rft-solver cluster benchmarks with idle GPUs (seed {seed}): --no-widen, then widened")
    for column in ("GPUs", "jobs", "placed", "time s", "cost", "GPUs used", "widened time s", "widened cost",
                   "widened GPUs used", "jobs grown"):
        table.add_column(column, justify="right")
    for gpus, jobs, limit in IDLE_SIZES:
        row = run_idle(gpus, jobs, limit, seed)
        plain, widened = row["plain"], row["widened"]
        table.add_row(str(row["gpus"]), str(jobs), str(plain["placed"]), f"{plain['seconds']:.1f}", f"{plain['cost']:.3f}",
                      str(plain["gpus_used"]), f"{widened['seconds']:.1f}", f"{widened['cost']:.3f}",
                      str(widened["gpus_used"]), str(widened["grown"]))
    Console(width=max(Console().width, 140)).print(table)


if __name__ == "__main__":
    main()
