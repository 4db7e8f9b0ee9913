"""The cluster search's budget (s64): the search keeps the questions whether more nodes reach a length their share
only where the reasons may ask them (`reasons_may_ask_reach`, decided before the search on the same deterministic
time)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from cluster_reference import random_instance
from ortools.sat.python import cp_model
from test_cluster import CATALOG
from test_clusterbuy_s60 import fleet_file

import solver.cluster.reasons
import solver.cluster.search
from solver.cluster import place
from solver.cluster.options import Planner
from solver.query import DETERMINISTIC_PER_SECOND
from solver.tables import load_fleet

A100 = {"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}
TWO_14B = [{"name": name, "model": "Qwen3-14B", "max_model_len": 65536, "rollout_gpus": 2} for name in ("x", "y")]
"""Two jobs that each take 6 of the a100 node's GPUs (4 trainer, 2 rollout): one is left out."""


class _Recorder:
    """The first stage's deterministic time (`solve_stages`' `_set_limits`) and the planner of each `place`."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.given: list[float] = []
        self.planners: list[Planner] = []
        set_limits, planner_class = solver.cluster.search._set_limits, solver.cluster.search.Planner

        def recorded(solver_: cp_model.CpSolver, work: float, deadline: float) -> None:
            self.given.append(work)
            set_limits(solver_, work, deadline)

        def kept(*args: object, **kwargs: object) -> Planner:
            self.planners.append(planner_class(*args, **kwargs))  # type: ignore[arg-type]
            return self.planners[-1]

        monkeypatch.setattr(solver.cluster.search, "_set_limits", recorded)
        monkeypatch.setattr(solver.cluster.search, "Planner", kept)

    def first_stage(self, instance: dict, tmp_path: Path) -> tuple[float, float, solver.ClusterResult]:
        """The first stage's work, what the questions spent before it, and the placement, at a 10 s limit."""
        self.given.clear()
        result = place(load_fleet(fleet_file(instance, tmp_path), CATALOG), CATALOG, time_limit_s=10)
        return self.given[0], self.planners[-1].reach_work.spent, result


def test_a_fleet_whose_reasons_will_not_ask_gets_the_full_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    recorder = _Recorder(monkeypatch)
    full = 0.6 * DETERMINISTIC_PER_SECOND * 10  # the first stage's 60%, nothing kept for the questions
    # y is left out of a100, and its reason names the other pool it may use: its rollout takes all of pair's GPUs,
    # so no question is asked there (before s64 the stages got 2% less wherever a job lacked a way in a pool).
    pair = {"name": "pair", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 2}
    work, spent, result = recorder.first_stage({"pools": [A100, pair], "jobs": TWO_14B}, tmp_path)
    assert (work, spent) == (full, 0.0)
    [unplaced] = result.unplaced
    assert (unplaced.job, [pool.reason_code for pool in unplaced.pools]) == ("y", ["no-room", "rollout-takes-pool"])
    assert recorder.planners[-1].reach_work.spent == 0.0  # nor after it
    # On box, 2 RTX 4090s beside the rollout train Qwen3-14B at no length: asked before the search (on the questions'
    # deterministic time, the same on every run), its reason asks nothing more.
    box = {"name": "box", "gpu": "RTX-4090", "nodes": 1, "gpus_per_node": 4, "host_ram_gb": 64}
    work, spent, result = recorder.first_stage({"pools": [A100, box], "jobs": TWO_14B}, tmp_path)
    assert 0 < spent < 1e-4 and work == pytest.approx(0.6 * (DETERMINISTIC_PER_SECOND * 10 - spent), abs=1e-12)
    assert [pool.plan_reason_code for pool in result.unplaced[0].pools] == [None, "nothing-trains"]
    assert recorder.planners[-1].reach_work.spent == spent
    assert recorder.first_stage({"pools": [A100, box], "jobs": TWO_14B}, tmp_path)[:2] == (work, spent)


def test_the_reasons_ask_whether_more_nodes_reach_only_where_the_search_kept_their_share(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    decided: list[bool] = []
    asked_after: list[bool] = []
    may_ask, more_nodes_reach = solver.cluster.reasons.reasons_may_ask_reach, solver.cluster.reasons._more_nodes_reach

    def deciding(planner: Planner, *args: object) -> bool:
        decided.append(may_ask(planner, *args))  # type: ignore[arg-type]
        return decided[-1]

    def asking(planner: Planner, *args: object) -> object:
        spent = planner.reach_work.spent
        answer = more_nodes_reach(planner, *args)  # type: ignore[arg-type]
        if decided:  # after the search: a question that spent anything was asked
            asked_after[-1] |= planner.reach_work.spent > spent
        return answer

    monkeypatch.setattr(solver.cluster.search, "reasons_may_ask_reach", deciding)
    monkeypatch.setattr(solver.cluster.reasons, "_more_nodes_reach", asking)
    outcomes = []
    for seed in range(40):
        decided.clear()
        asked_after.append(False)
        place(load_fleet(fleet_file(random_instance(random.Random(seed)), tmp_path), CATALOG), CATALOG)
        outcomes.append((decided[0], asked_after[-1]))
    assert (False, True) not in outcomes
    assert (True, True) in outcomes and (False, False) in outcomes  # both kinds of fleet were tried
