"""`solve cluster --minimize nodes` proves a fleet too small for its jobs as CP-SAT loads the model (session 61): the
GPUs each job takes at its fewest, summed, are held to the pools' GPUs in the model itself, so that the proof needs no
search work, and a short time limit, whose wall clock the jobs' ways may use up, still gets it."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import yaml
from cluster_api import place

import solver.cluster.search
from solver.tables import load_catalog, load_fleet

CATALOG = load_catalog()
MODELS = ["Qwen3-0.6B", "Qwen3-1.7B", "Qwen3-4B", "Qwen3-8B", "Qwen3-14B"]
TOO_MANY = ("the jobs do not all fit the fleet together: at their fewest they take 46 GPUs, more than the fleet's 16; "
            "without --minimize nodes, as many as fit are placed")
"""The reason of each of `_fleet`'s 10 jobs where the fleet has one node of 8 GPUs in each pool."""


def _fleet(tmp_path: Path, jobs: int = 10, a100_nodes: int = 1, pinned: int = 0, seed: int = 3):
    """An A100 pool of `a100_nodes` 8-GPU nodes and an H20 pool of one, and `jobs` seeded random jobs, the first
    `pinned` of them to the H20 pool."""
    rng = random.Random(seed)
    instance = {
        "pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": a100_nodes, "gpus_per_node": 8},
                  {"name": "h20", "gpu": "H20-96GB", "nodes": 1, "gpus_per_node": 8}],
        "jobs": [{"name": f"job-{i}", "model": rng.choice(MODELS), "max_model_len": rng.choice([8192, 32768, 65536]),
                  "rollout_gpus": rng.choice([0, 1, 2, 4]), **({"pool": "h20"} if i < pinned else {})}
                 for i in range(jobs)]}
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(instance), encoding="utf-8")
    return load_fleet(path, CATALOG)


def _no_search_work(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Give every search stage no deterministic time at all (nor `LEAST_WORK`); returns the work each is given."""
    monkeypatch.setattr(solver.cluster.search, "DETERMINISTIC_PER_SECOND", 0.0, raising=False)
    monkeypatch.setattr(solver.cluster.search, "LEAST_WORK", 0.0)
    given: list[float] = []
    set_limits = solver.cluster.search._set_limits

    def recorded(cp_solver, work, deadline):
        given.append(work)
        set_limits(cp_solver, work, deadline)

    monkeypatch.setattr(solver.cluster.search, "_set_limits", recorded)
    return given


def test_a_fleet_too_small_for_its_jobs_is_proven_so_with_no_search_work(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # 10 jobs that take 46 GPUs at their fewest, on 16: proven as the model loads, where before the first stage
    # needed search work to prove it (and without it, the answer was `unknown`: time ran out).
    given = _no_search_work(monkeypatch)
    result = place(_fleet(tmp_path), catalog=CATALOG, minimize="nodes")
    assert given == [0.0]
    assert (result.status, result.placements, result.wall_clock_stopped) == ("infeasible", (), ())
    assert {(entry.reason, entry.reason_code) for entry in result.unplaced} == {
        (TOO_MANY, "jobs-do-not-fit-together")}
    assert result.least_time_limit_s is None


def test_jobs_too_many_for_the_one_pool_they_may_use_are_proven_so_with_no_search_work(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # Two jobs only the H20 pool may run take more than its 8 GPUs at their fewest, though all 6 fit the 40 GPUs
    # of the fleet: the pool's own GPUs prove it.
    _no_search_work(monkeypatch)
    result = place(_fleet(tmp_path, jobs=6, a100_nodes=4, pinned=2), catalog=CATALOG, minimize="nodes")
    assert (result.status, result.wall_clock_stopped) == ("infeasible", ())
    assert {entry.reason for entry in result.unplaced} == {(
        "the jobs do not all fit the fleet together: the 2 jobs only pool h20 can run (job-0, job-1) take at their "
        "fewest 13 GPUs, more than its 8; without --minimize nodes, as many as fit are placed")}


@pytest.mark.wall_clock  # about the wall clock: keeps the real one
def test_a_fleet_too_small_is_proven_where_the_wall_clock_leaves_the_search_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # As where the jobs' ways took the whole --time-limit on a busy machine: the search's solves get no wall-clock
    # time (CP-SAT stops at once where a search is needed), and the fleet is still proven too small.
    set_limits = solver.cluster.search._set_limits

    def no_time(cp_solver, work, deadline):
        set_limits(cp_solver, work, deadline)
        cp_solver.parameters.max_time_in_seconds = 0.0

    monkeypatch.setattr(solver.cluster.search, "_set_limits", no_time)
    result = place(_fleet(tmp_path), catalog=CATALOG, minimize="nodes")
    assert (result.status, result.wall_clock_stopped) == ("infeasible", ())
    assert {entry.reason for entry in result.unplaced} == {TOO_MANY}


def test_jobs_that_fill_the_fleet_exactly_at_their_fewest_are_all_placed(tmp_path: Path):
    # Qwen3-4B at 32768 tokens takes 2 trainer GPUs at the fewest, 4 with its 2 rollout GPUs: two such jobs fill the
    # one node of 8, in the pool they are pinned to, all its GPUs and all the fleet's (not more).
    job = {"model": "4B", "max_model_len": 32768, "rollout_gpus": 2}
    instance = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}],
                "jobs": [{"name": "j0", **job}, {"name": "j1", **job, "pool": "a100"}]}
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(instance), encoding="utf-8")
    result = place(load_fleet(path, CATALOG), catalog=CATALOG, minimize="nodes")
    assert (result.status, result.objective, result.bound) == ("optimal", 1, 1)
    assert [(p.job, p.nodes, p.trainer_gpus, p.rollout_gpus) for p in result.placements] == [
        ("j0", (0,), 2, 2), ("j1", (0,), 2, 2)]
