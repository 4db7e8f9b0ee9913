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
from collections import Counter
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
CURRENT_SIZES = [  # (GPUs in the fleet, jobs): fleets re-placed with --current, at each of CURRENT_LIMITS
    (64, 50),
    (128, 120),
    (256, 250),
    (512, 400),
]
CURRENT_LIMITS = [1, 3, 10, 30]
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


def changed_fleet(fleet: dict, seed: int) -> dict:
    """`fleet` (`generate`'s) as it is re-planned: a fifth of its jobs at another length, one node fewer in its first
    pool, and a tenth more jobs (from `generate` with another seed)."""
    rng = random.Random(seed)
    jobs = [dict(job) for job in fleet["jobs"]]
    for job in rng.sample(jobs, len(jobs) // 5):
        job["max_model_len"] = rng.choice(LENGTHS)
    pools = [dict(pool) for pool in fleet["pools"]]
    pools[0]["nodes"] = max(1, pools[0]["nodes"] - 1)
    added = generate(8, max(1, len(jobs) // 10), seed + 1000)["jobs"]
    jobs += [{**job, "name": f"new-{index:04d}", **({"pool": rng.choice(pools)["name"]} if "pool" in job else {})}
             for index, job in enumerate(added)]
    return {"pools": pools, "jobs": jobs}


def run_current(gpus: int, jobs: int, limits: list[int], seed: int) -> dict:
    """Place one fleet (10 s), change it (`changed_fleet`) and place it again with the first placement as what runs
    now (`current`), at each time limit: per limit the seconds, status, priority and bound, the running jobs that
    stay, move and stop, when the first stage reached its best priority and when it ended (the stage of running jobs
    kept reports its first placement: the time between, CP-SAT kept more running jobs and proved the count), as the
    progress reports time them; and what the greedy start alone keeps."""
    import solver
    from solver.cluster import Planner
    from solver.cluster.options import fleet_options
    from solver.cluster.search import placement_search
    from solver.results import SCHEMA_VERSION
    from solver.tables import load_catalog, load_fleet, load_weights, read_current

    catalog = load_catalog()
    figures: dict = {"gpus": gpus, "jobs": jobs, "runs": []}
    with tempfile.TemporaryDirectory() as folder:
        first_path, path, now = Path(folder) / "first.yaml", Path(folder) / "fleet.yaml", Path(folder) / "now.json"
        first = generate(gpus, jobs, seed)
        first_path.write_text(yaml.safe_dump(first), encoding="utf-8")
        now.write_text(solver.place(first_path, time_limit_s=10).model_dump_json(), encoding="utf-8")
        path.write_text(yaml.safe_dump(changed_fleet(first, seed)), encoding="utf-8")
        fleet = load_fleet(path, catalog)
        running = read_current(now, fleet, SCHEMA_VERSION)
        figures.update(jobs=len(fleet.jobs), gpus=sum(p.nodes * p.gpus_per_node for p in fleet.pools),
                       running=len(running))
        planner = Planner(catalog.for_fleet(fleet), load_weights(), "auto", 30)
        options = fleet_options(planner, fleet, running=running).options
        _, _, start = placement_search(fleet, options, False, running)
        placed = {option.job for option, value in zip(options, start.values) if value}
        staying = 0 if start.kept is None else len(start.kept.staying)
        figures["greedy"] = {"priority": start.objective, "stay": staying,
                             "move": sum(job.job in placed for job in running) - staying,
                             "stop": sum(job.job not in placed for job in running)}
        for limit in limits:
            reports: list[tuple[str, float, float, float]] = []
            started = time.perf_counter()
            result = solver.place(path, time_limit_s=limit, current=now,
                                  progress=lambda *report, reports=reports: reports.append(report))
            seconds = time.perf_counter() - started
            priority = [report for report in reports if report[0] == "placed priority"]
            kept = [report for report in reports if report[0] == "running jobs kept"]
            said = Counter(p.current for p in result.placements) + Counter(u.current for u in result.unplaced)
            figures["runs"].append({
                "limit": limit, "seconds": seconds, "status": result.status, "objective": result.objective,
                "bound": result.bound, "stay": said["stays"], "move": said["moves"], "stop": said["stops"],
                "best_at_s": next((report[3] for report in priority if report[1] == priority[-1][1]), None),
                "first_stage_ends_s": kept[0][3] if kept else None,
                "priority_reports": len(priority), "cut_short": len(result.ways_cut_short),
                "stopped": list(result.wall_clock_stopped)})
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
    parser.add_argument("--current", action="store_true",
                        help="fleets re-placed with what runs now (--current) at time limits 1, 3, 10 and 30 s: the "
                             "running jobs that stay, move and stop, beside the greedy start's (--largest: how many "
                             "fleets)")
    args = parser.parse_args()
    if args.idle:
        idle_table(args.seed)
        return
    if args.current:
        current_table(args.seed, min(args.largest, len(CURRENT_SIZES)))
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


def current_table(seed: int, fleets: int) -> None:
    """Print the figures of the first `fleets` of `CURRENT_SIZES` re-placed with --current (`run_current`)."""
    table = Table(title=f"rft-solver cluster benchmarks with running jobs (seed {seed}): --current, then greedy start")
    for column in ("GPUs", "jobs", "running", "limit s", "time s", "status", "priority", "bound", "cut short",
                   "stay/move/stop", "best priority at s", "1st stage ends s", "greedy priority",
                   "greedy stay/move/stop"):
        table.add_column(column, justify="right")
    for gpus, jobs in CURRENT_SIZES[:fleets]:
        row = run_current(gpus, jobs, CURRENT_LIMITS, seed)
        kept = row["greedy"]
        for run in row["runs"]:
            table.add_row(str(row["gpus"]), str(row["jobs"]), str(row["running"]), str(run["limit"]),
                          f"{run['seconds']:.1f}", run["status"], str(run["objective"]), str(run["bound"]),
                          str(run["cut_short"]), f"{run['stay']}/{run['move']}/{run['stop']}",
                          *("-" if run[key] is None else f"{run[key]:.1f}"
                            for key in ("best_at_s", "first_stage_ends_s")),
                          str(kept["priority"]),
                          f"{kept['stay']}/{kept['move']}/{kept['stop']}")
    Console(width=max(Console().width, 160)).print(table)


if __name__ == "__main__":
    main()
