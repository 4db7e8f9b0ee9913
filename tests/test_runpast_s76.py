"""`solve cluster --current` where the time limit cuts the jobs' ways short (session 76, helper runpast): the running
jobs' ways as they run, asked past the ways' limit, are asked only where a placement will be searched (not where a job
that must be placed, every job with ``--minimize nodes``, is left without ways: persona46's ``--time-limit 0.5`` spent
0.70 s of its 0.87 s on them), and each solve of theirs has what is left of the run's time limit, or
`AS_IT_RUNS_FLOOR_S` (1 s) where less, not a whole ``--time-limit``. On a fake clock, exact."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml
from cluster_api import place
from test_minnodes_s64 import _questions_per_second

import solver.clock
import solver.cluster.search
import solver.solve
from solver.tables import AS_IT_RUNS_FLOOR_S, load_catalog, load_fleet

CATALOG = load_catalog()
POOL = {"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}
JOBS = [{"name": "a", "model": "Qwen3-4B", "max_model_len": 16384, "rollout_gpus": 0},
        {"name": "b", "model": "Qwen3-1.7B", "max_model_len": 8192, "rollout_gpus": 0}]
NOW = [1000.0]
"""The fake clock's reading: `time.monotonic` and `clock.seconds_left` read it alone."""


def _fleet(tmp_path: Path, jobs: list[dict[str, object]], name: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"pools": [POOL], "jobs": jobs}), encoding="utf-8")
    return path


def _running(tmp_path: Path, jobs: list[dict[str, object]]) -> Path:
    """The placement of `jobs` alone (no time limit reached), where `--current` reads it."""
    path = tmp_path / "running.json"
    fleet = load_fleet(_fleet(tmp_path, jobs, "before"), CATALOG)
    path.write_text(place(fleet, catalog=CATALOG).model_dump_json(), encoding="utf-8")
    return path


def _solve_limits(monkeypatch: pytest.MonkeyPatch, late_by: float) -> list[float]:
    """On the fake clock, with the placement begun `late_by` seconds after its start (the ways' questions and the
    run's time limit then as far spent), the wall-clock limits of the planner's solves from then on, as they come."""
    limits: list[float] = []

    def recording(cp_solver, model, status, checked=solver.solve.checked):
        limits.append(cp_solver.parameters.max_time_in_seconds)
        return checked(cp_solver, model, status)

    run = solver.cluster.search._place

    def late(*args):
        NOW[0] += late_by
        return run(*args)

    monkeypatch.setattr(solver.solve, "checked", recording)
    monkeypatch.setattr(time, "monotonic", lambda: NOW[0])
    monkeypatch.setattr(solver.clock, "seconds_left", lambda deadline: deadline - NOW[0])
    monkeypatch.setattr(solver.cluster.search, "_place", late)
    return limits


@pytest.mark.parametrize(("late_by", "limit"), [(11.0, AS_IT_RUNS_FLOOR_S), (9.5, AS_IT_RUNS_FLOOR_S), (5.0, 5.0)])
def test_a_way_as_it_runs_has_what_is_left_of_the_run_or_the_floor_where_less(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, late_by: float, limit: float):
    # The count of questions cuts the ways short before a's turn (none a second): a, running, gets its way as it runs
    # from one question (the tables' tier has its plan), with 1 s where the run (10 s) is past or has 0.5 s left, else
    # the 5 s left of it, not the whole 10 s of --time-limit.
    running = _running(tmp_path, JOBS[:1])
    fleet = load_fleet(_fleet(tmp_path, JOBS[:1], "now"), CATALOG)
    _questions_per_second(monkeypatch, 0)
    limits = _solve_limits(monkeypatch, late_by)
    result = json.loads(place(fleet, catalog=CATALOG, time_limit_s=10.0, current=running).model_dump_json())
    (placed,) = result["placements"]
    assert (AS_IT_RUNS_FLOOR_S, limits[0], result["ways_cut_short"], placed["current"], placed["stay_reason_code"]) == (
        1.0, limit, [], "stays", "ways-cut-short")


@pytest.mark.parametrize(("minimize", "asked", "cut_short"), [("nodes", 0, ["a", "b"]), (None, 1, ["b"])])
def test_no_way_as_it_runs_is_asked_where_a_job_that_must_be_placed_has_no_ways(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, minimize: str | None, asked: int, cut_short: list[str]):
    # a runs, b does not; the count cuts both short. With --minimize nodes b must be placed: no placement is searched,
    # so a's way as it runs goes unasked (a is named cut short with b); without it, a gets its way and stays.
    running = _running(tmp_path, JOBS[:1])
    fleet = load_fleet(_fleet(tmp_path, JOBS, "now"), CATALOG)
    _questions_per_second(monkeypatch, 0)
    limits = _solve_limits(monkeypatch, 0.0)
    result = place(fleet, catalog=CATALOG, time_limit_s=10.0, current=running, minimize=minimize)
    assert (result.status, len(limits), list(result.ways_cut_short),
            [(placed.job, placed.current) for placed in result.placements]) == (
        "unknown" if minimize else "feasible", asked, cut_short, [] if minimize else [("a", "stays")])


def test_the_ways_as_they_run_stop_at_a_required_running_job_that_has_none(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch):
    # a and b both run; a now asks twice its length, which it does not run at: it has no way as it runs (none asked),
    # so with --minimize nodes no placement is searched, and b's way as it runs (one question) goes unasked.
    running = _running(tmp_path, JOBS)
    fleet = load_fleet(_fleet(tmp_path, [{**JOBS[0], "max_model_len": 32768}, JOBS[1]], "now"), CATALOG)
    _questions_per_second(monkeypatch, 0)
    limits = _solve_limits(monkeypatch, 0.0)
    result = place(fleet, catalog=CATALOG, time_limit_s=10.0, current=running, minimize="nodes")
    assert (result.status, limits, result.ways_cut_short, result.placements) == ("unknown", [], ("a", "b"), ())
    # Not for want of a question: without --minimize nodes, b's is asked, and b stays as it runs.
    limits.clear()
    result = place(fleet, catalog=CATALOG, time_limit_s=10.0, current=running)
    assert (len(limits), result.ways_cut_short, [(placed.job, placed.current) for placed in result.placements]) == (
        1, ("a",), [("b", "stays")])
