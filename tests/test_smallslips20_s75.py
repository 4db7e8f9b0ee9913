"""Small slips of earlier sessions (s75, smallslips20): no step of ``solve cluster`` is given time past its time limit
(a job's ways stop between two questions once the ways' wall clock has passed, the later steps get what is left, none
once it has passed)."""

from __future__ import annotations

import importlib
import math
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from cluster_api import buy, place

import solver.clock
import solver.cluster.reasons
import solver.cluster.search
import solver.cluster.widen
from solver.cluster.options import Planner, WaysLimit, fleet_options
from solver.tables import load_catalog, load_fleet, load_weights

CATALOG = load_catalog()
buy_module = importlib.import_module("solver.cluster.buy")  # `solver.cluster.buy` the name is the function


def _fleet(tmp_path: Path, jobs: list[dict], nodes: int = 1):
    """A pool of `nodes` 8-GPU A100 nodes and `jobs`."""
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump({"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": nodes,
                                               "gpus_per_node": 8}], "jobs": jobs}), encoding="utf-8")
    return load_fleet(path, CATALOG)


PROBE = {"name": "probe", "model": "0.6B", "max_model_len": 8192}
"""A job that its ways place on 6 GPUs of a node of 8, and widening grows onto the other 2."""


@pytest.fixture
def cluster_solve_limits(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, float]]:
    """The wall-clock limit (`max_time_in_seconds`) of each CP-SAT solve of the cluster's own steps from here on (the
    search's stages and its proof without host memory, widening's, the least priorities'), with its model's name;
    not the planner's."""
    limits: list[tuple[str, float]] = []
    for module in (solver.cluster.search, solver.cluster.widen, solver.cluster.reasons):
        def recording(cp_solver, model, status, checked=module.checked):
            limits.append((model.name, cp_solver.parameters.max_time_in_seconds))
            return checked(cp_solver, model, status)

        monkeypatch.setattr(module, "checked", recording)
    return limits


def _late_after_the_ways(monkeypatch: pytest.MonkeyPatch, late_s: float) -> None:
    """The wall clock reads no deadline while the jobs' ways are worked out (as conftest's), then `late_s` seconds
    past the placement's time limit (its start plus the limit): as if the ways had taken all of it and more."""
    now = [-math.inf]
    plan_jobs = solver.cluster.search._plan_jobs

    def ways_then_late(planner, fleet, every_job, started, running):
        planned = plan_jobs(planner, fleet, every_job, started, running)
        now[0] = started + planner.time_limit_s + late_s
        return planned

    monkeypatch.setattr(solver.cluster.search, "_plan_jobs", ways_then_late)
    monkeypatch.setattr(solver.clock, "seconds_left", lambda deadline: deadline - now[0])


def test_past_the_time_limit_the_search_and_widening_get_no_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 cluster_solve_limits: list[tuple[str, float]]):
    # In time, the search solves its stages and widening grows the job onto its node's idle GPUs.
    fleet = _fleet(tmp_path, [PROBE])
    in_time = place(fleet, catalog=CATALOG, time_limit_s=5.0)
    assert (in_time.placements[0].widened_from, in_time.wall_clock_stopped) == (6, ())
    assert {name for name, _ in cluster_solve_limits} == {"place jobs", "widen jobs onto idle GPUs"}
    # Past the limit once the ways are worked out: the first stage gets no time (it stops at once, and the greedy
    # placement stands: the job on its smallest way), no later stage is solved, and widening asks and solves nothing (before: 0.01 s a stage,
    # 0.05 s a widening solve).
    _late_after_the_ways(monkeypatch, 1.0)
    cluster_solve_limits.clear()
    late = place(fleet, catalog=CATALOG, time_limit_s=5.0)
    assert cluster_solve_limits == [("place jobs", 0.0)]
    assert (late.status, late.bound, late.wall_clock_stopped) == ("feasible", None, ("priority", "widening"))
    assert [(p.job, p.trainer_gpus, p.widened_from) for p in late.placements] == [("probe", 1, None)]  # greedy's


def test_a_little_past_the_time_limit_still_gives_no_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          cluster_solve_limits: list[tuple[str, float]]):
    # A millisecond past it is past it: every limit given is 0, none the least time it once was.
    _late_after_the_ways(monkeypatch, 0.001)
    place(_fleet(tmp_path, [PROBE]), catalog=CATALOG, time_limit_s=5.0)
    assert cluster_solve_limits == [("place jobs", 0.0)]


def test_each_widening_solve_gets_what_is_left_and_none_past_the_end(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch,
                                                                    cluster_solve_limits: list[tuple[str, float]]):
    # Widening alone on a clock 0.25 s later at each look, 0.6 s before its end: it starts (0.35 s left), its first
    # solve gets 0.1 s, its second none (the first's answer stands, and the answer names widening).
    widen = solver.cluster.search.widen_jobs

    def on_a_fake_clock(*args):
        ticks = iter(range(1, 100))
        fake = SimpleNamespace(seconds_left=lambda deadline: deadline - 100 - 0.25 * next(ticks))
        with monkeypatch.context() as patched:
            patched.setattr(solver.cluster.widen, "clock", fake)
            return widen(*args[:-1], 100.6)

    monkeypatch.setattr(solver.cluster.search, "widen_jobs", on_a_fake_clock)
    result = place(_fleet(tmp_path, [PROBE]), catalog=CATALOG)
    widening = [limit for name, limit in cluster_solve_limits if name == "widen jobs onto idle GPUs"]
    assert widening == pytest.approx([0.1, 0.0])
    assert (result.placements[0].widened_from, result.wall_clock_stopped) == (6, ("widening",))


def test_a_jobs_ways_stop_between_two_of_its_questions_once_the_wall_clock_passes(tmp_path: Path,
                                                                                   monkeypatch: pytest.MonkeyPatch):
    # The 14B job at 64k asks the planner about several GPU counts. With no wall clock, all of them; where the ways'
    # deadline passes after its second question, it asks no third, and gets no ways at all (a job's ways are whole or
    # none): cut short by the wall clock, with no time limit estimated.
    fleet = _fleet(tmp_path, [{"name": "long", "model": "14B", "max_model_len": 65536}], nodes=2)
    whole = Planner(CATALOG.for_fleet(fleet), load_weights(), "auto")
    asked_all = fleet_options(whole, fleet, WaysLimit.of(whole, time.monotonic()))
    assert whole.asked > 2 and asked_all.options and (asked_all.cut_short, asked_all.wall_clock_cut) == ((), False)
    planner = Planner(CATALOG.for_fleet(fleet), load_weights(), "auto")
    monkeypatch.setattr(solver.clock, "seconds_left", lambda deadline: math.inf if planner.asked < 2 else -1.0)
    cut = fleet_options(planner, fleet, WaysLimit.of(planner, time.monotonic()))
    assert (cut.options, cut.cut_short, cut.wall_clock_cut, cut.covering_time_limit_s) == ([], (0,), True, None)
    assert planner.asked == 2 and planner.asks_until is None  # the deadline set for the job's questions is lifted


def test_a_purchase_widens_by_the_time_limit_less_the_read_back_time(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch):
    # As a placement's widening ends (test_cluster's test_widening_ends_by_the_time_limit_from_the_placements_start):
    # by the limit from the purchase's start, less the time kept to read the answer back (before: the whole limit).
    readings: list[float] = []

    def monotonic() -> float:
        readings.append(time.monotonic())
        return readings[-1]

    untils: list[float | None] = []
    grown = buy_module.grown_placements
    monkeypatch.setattr(buy_module, "time", SimpleNamespace(monotonic=monotonic))
    monkeypatch.setattr(buy_module, "grown_placements",
                        lambda *args: untils.append(args[-1]) or grown(*args))
    bought = buy(_fleet(tmp_path, [PROBE], nodes=0), catalog=CATALOG, time_limit_s=7.0)
    assert (bought.nodes, bought.placements[0].widened_from) == (1, 6)
    assert untils == [readings[0] + 7.0 - solver.cluster.search.READ_BACK_S]
