"""The cluster search's budget, the thin-headroom stop and the table's caps (s64): the search keeps the questions
whether more nodes reach a length their share only where the reasons may ask them (`reasons_may_ask_reach`, decided
before the search on the same deterministic time); an ``at_least`` stretch stops exactly at the last length on the
grid that keeps the room the thin-headroom caution asks for, with its token budget under ``--token-budget auto``;
and a pool's table shows an ``at_most`` cap beside the least asked."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from cluster_api import place
from cluster_reference import best_value, random_instance, value_of
from conftest import planner_answers_shared
from ortools.sat.python import cp_model
from test_atleastcap_s63 import moe_64k, placed
from test_cluster import CATALOG, solved
from test_clusterbuy_s60 import fleet_file

import solver.cluster
import solver.cluster.reasons
import solver.cluster.search
from solver.cli import main
from solver.cluster.options import Planner
from solver.render import AT_LEAST_NOTE, AT_MOST_NOTE
from solver.results import CautionCode
from solver.tables import DETERMINISTIC_PER_SECOND, Job, JobTraining, load_fleet, load_weights


@pytest.fixture(autouse=True)
def _planner_answers_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test here shares the planners' answers with the others of its process (`planner_answers_shared`)."""
    planner_answers_shared(monkeypatch)


A100 = {"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}
TWO_14B = [{"name": name, "model": "Qwen3-14B", "max_model_len": 65536, "rollout_gpus": 2} for name in ("x", "y")]
"""Two jobs that each take 6 of the a100 node's GPUs (4 trainer, 2 rollout): one is left out."""


def reach_questions(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A count, kept in the one-item list returned, of the questions the reasons ask on `Planner.reach_work` (each
    in a `work_budget` block): a question CP-SAT answers in presolve spends no deterministic time on OR-Tools 9.12,
    so what was spent does not say whether one was asked."""
    asked = [0]
    work_budget = solver.cluster.reasons.work_budget

    def counted(budget: object) -> object:
        asked[0] += 1
        return work_budget(budget)  # type: ignore[arg-type]

    monkeypatch.setattr(solver.cluster.reasons, "work_budget", counted)
    return asked


class _Recorder:
    """The first stage's deterministic time (`solve_stages`' `_set_limits`) and the planner of each `place`."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.given: list[float] = []
        self.planners: list[Planner] = []
        set_limits, planner_class = solver.cluster.search._set_limits, solver.cluster.Planner

        def recorded(solver_: cp_model.CpSolver, work: float, deadline: float) -> None:
            self.given.append(work)
            set_limits(solver_, work, deadline)

        def kept(*args: object, **kwargs: object) -> Planner:
            self.planners.append(planner_class(*args, **kwargs))  # type: ignore[arg-type]
            return self.planners[-1]

        monkeypatch.setattr(solver.cluster.search, "_set_limits", recorded)
        monkeypatch.setattr(solver.cluster, "Planner", kept)

    def first_stage(self, instance: dict, tmp_path: Path) -> tuple[float, float, solver.ClusterResult]:
        """The first stage's work, what the questions spent before it, and the placement, at a 10 s limit."""
        self.given.clear()
        result = place(load_fleet(fleet_file(instance, tmp_path), CATALOG), catalog=CATALOG, time_limit_s=10)
        return self.given[0], self.planners[-1].reach_work.spent, result


def test_a_fleet_whose_reasons_will_not_ask_gets_the_full_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    recorder = _Recorder(monkeypatch)
    asked = reach_questions(monkeypatch)
    full = 0.6 * DETERMINISTIC_PER_SECOND * 10  # the first stage's 60%, nothing kept for the questions
    # y is left out of a100, and its reason names the other pool it may use: its rollout takes all of pair's GPUs,
    # so no question is asked there (before s64 the stages got 2% less wherever a job lacked a way in a pool).
    pair = {"name": "pair", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 2}
    work, spent, result = recorder.first_stage({"pools": [A100, pair], "jobs": TWO_14B}, tmp_path)
    assert (work, spent) == (full, 0.0)
    [unplaced] = result.unplaced
    assert (unplaced.job, [pool.reason_code for pool in unplaced.pools]) == ("y", ["no-room", "rollout-takes-pool"])
    assert recorder.planners[-1].reach_work.spent == 0.0 and asked == [0]  # nor after it
    # On box, 2 RTX 4090s beside the rollout train Qwen3-14B at no length: asked before the search (on the questions'
    # deterministic time, the same on every run), its reason asks nothing more.
    box = {"name": "box", "gpu": "RTX-4090", "nodes": 1, "gpus_per_node": 4, "host_ram_gb": 64}
    work, spent, result = recorder.first_stage({"pools": [A100, box], "jobs": TWO_14B}, tmp_path)
    assert 0 <= spent < 1e-4 and work == pytest.approx(0.6 * (DETERMINISTIC_PER_SECOND * 10 - spent), abs=1e-12)
    assert [pool.plan_reason_code for pool in result.unplaced[0].pools] == [None, "nothing-trains"]
    assert recorder.planners[-1].reach_work.spent == spent and asked == [2]  # both before the search
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
        before = asked[0]
        answer = more_nodes_reach(planner, *args)  # type: ignore[arg-type]
        if decided:  # after the search
            asked_after[-1] |= asked[0] > before
        return answer

    asked = reach_questions(monkeypatch)
    monkeypatch.setattr(solver.cluster.search, "reasons_may_ask_reach", deciding)
    monkeypatch.setattr(solver.cluster.reasons, "_more_nodes_reach", asking)
    outcomes = []
    for seed in range(40):
        decided.clear()
        asked_after.append(False)
        place(load_fleet(fleet_file(random_instance(random.Random(seed)), tmp_path), CATALOG), catalog=CATALOG)
        outcomes.append((decided[0], asked_after[-1]))
    assert (False, True) not in outcomes
    assert (True, True) in outcomes and (False, False) in outcomes  # both kinds of fleet were tried


def test_a_stretch_stops_at_the_last_length_on_the_grid_with_the_room_the_caution_asks_for(tmp_path: Path):
    # moe-64k on 4 H20s: the caution asks 2.49 GiB to spare and names --margin 0.04, rounded up from 0.0381, at which
    # the longest is 123904. The stop is one step further: 124928 keeps 2.64, 125952 (its setting, at the run's
    # margin) 1.99, which carries the caution.
    instance = moe_64k({"at_least": 65536})
    assert placed(solved(instance, tmp_path)) == (4, 124928, (True, True, 4), 2.64, [], "estimated")
    planner = Planner(CATALOG, load_weights(), "auto")
    job = Job(name="moe", model="Qwen3-30B-A3B", max_model_len={"at_least": 65536})
    assert planner.roomy_margin("H20-96GB", job) == pytest.approx(0.038062, abs=1e-6)
    thin = planner.best("H20-96GB", "Qwen3-30B-A3B", 4, None, 8, "auto", 1024, None, JobTraining())
    assert thin is not None and thin.max_model_len == 129024 and "--margin 0.04 keeps 2.7 GiB" in thin.cautions[0]
    rounded = planner.best("H20-96GB", "Qwen3-30B-A3B", 4, None, 8, "auto", 1024, None, JobTraining(), margin=0.04)
    assert rounded is not None and rounded.max_model_len == 123904
    past = planner.best("H20-96GB", "Qwen3-30B-A3B", 4, 124928 + 1024, 8, "auto", 1024, None, JobTraining(),
                        env=True)
    assert past is not None and (past.setting, round(past.headroom_gb, 2)) == (thin.setting, 1.99)
    assert CautionCode.THIN_HEADROOM in past.caution_codes


def test_token_budget_auto_keeps_the_stop_its_room(tmp_path: Path):
    # With --token-budget auto the stretch reaches the validated 131072 by lowering the budget; at the run's margin the
    # planner lowers it to 64512, with 0.06 GiB to spare. The stop keeps the budget of the margin it stopped at,
    # 62464, and so the room the caution asks for (before s64 it ran at 64512 with the caution).
    instance = moe_64k({"at_least": 65536})
    result = solved(instance, tmp_path, token_budget="auto")
    assert placed(result) == (4, 131072, (True, True, 4), 2.64, [], "estimated")
    plan = result["placements"][0]["plan"]
    assert (plan["max_token_len_per_gpu"], plan["lowered_budget"]) == (62464, True)
    assert value_of(CATALOG, instance, result) == best_value(CATALOG, instance, estimates=True, token_budget="auto")
    at_run_margin = Planner(CATALOG, load_weights(), "auto", token_budget="auto").best(
        "H20-96GB", "Qwen3-30B-A3B", 4, 131072, 8, "auto", 1024, True, JobTraining(), env=True)
    assert at_run_margin is not None and at_run_margin.max_token_len_per_gpu == 64512
    assert CautionCode.THIN_HEADROOM in at_run_margin.caution_codes


def test_a_pools_table_shows_the_cap_of_an_at_least_job(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["cluster", "docs/examples/stretch.yaml"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = {line.split("│")[3].strip(): line.split("│")[7].strip() for line in lines if line.startswith("│ ")}
    assert rows == {"moe-64k": "124928 (≥65536)", "chat-14b": "81920 (65536..81920)"}
    assert lines[-4:-1] == [AT_LEAST_NOTE, AT_MOST_NOTE,  # then the estimated plan's memory (smallslips23_s76)
                            "moe-64k: 85.2 GiB per GPU predicted, 2.6 GiB to spare (memory model)"]
    # Without a cap, no note of one; a capped job at its least shows neither.
    path = tmp_path / "fleet.yaml"
    path.write_text(json.dumps(moe_64k({"at_least": 65536})), encoding="utf-8")
    assert main(["cluster", str(path)]) == 0
    out = capsys.readouterr().out
    assert AT_LEAST_NOTE in out and AT_MOST_NOTE not in out
    path.write_text(json.dumps(moe_64k({"at_least": 65536, "at_most": 65536})), encoding="utf-8")
    assert main(["cluster", str(path)]) == 0
    out = capsys.readouterr().out
    assert " 65536 " in out and "(≥" not in out and "(65536.." not in out and AT_MOST_NOTE not in out
