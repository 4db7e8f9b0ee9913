"""The cluster's required jobs shown, and its loose ends (s63): `ClusterResult.required` (JSON) and the pools' tables
mark the required jobs from it; `--buy`'s status line names every required job, and its left-out line says beside
which jobs there is no room; `more_nodes_reach` tries `--token-budget auto` too and says which budget (the --buy note
gives it), its questions drawing on the run's deterministic time (`Planner.reach_work`), which the search's stages get
that much less of."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cluster_api import place
from ortools.sat.python import cp_model
from test_clusterbuy_s60 import CATALOG, fleet_file

import solver
import solver.cluster.options
import solver.cluster.search
from solver.cli import main
from solver.cluster import greedy
from solver.cluster.options import REACH_SHARE
from solver.render.cluster import REQUIRED_NOTE
from solver.solve import WorkBudget, work_budget
from solver.tables import DETERMINISTIC_PER_SECOND, load_fleet

ONE_NODE = {"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}
TWO_SMALL = {"pools": [ONE_NODE], "jobs": [
    {"name": "a", "model": "Qwen3-0.6B", "max_model_len": 8192, "rollout_gpus": 1, "required": True},
    {"name": "b", "model": "Qwen3-0.6B", "max_model_len": 8192, "rollout_gpus": 1}]}
"""Two small jobs that share the node: a is required, b is not."""


def test_the_placement_lists_the_required_jobs_and_its_tables_mark_them(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]):
    path = fleet_file(TWO_SMALL, tmp_path)
    assert main(["cluster", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["required"] == ["a"]
    assert main(["cluster", str(path), "--json", "--required", "b"]) == 0  # the flag adds to the file's marks
    assert json.loads(capsys.readouterr().out)["required"] == ["a", "b"]
    assert main(["cluster", str(path), "--no-widen"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line.split("│")[3].strip() for line in lines if line.startswith("│ 0 ")]
    assert rows == ["a (required)", "b"] and REQUIRED_NOTE in lines
    # Where every job is required, every placement places them all: nothing is marked (nor with --minimize nodes,
    # which places every job, and lists only those marked).
    assert main(["cluster", str(path), "--required", "b"]) == 0
    out = capsys.readouterr().out
    assert "(required)" not in out and REQUIRED_NOTE not in out
    assert main(["cluster", str(path), "--minimize", "nodes", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["required"] == ["a"]
    # The greedy baseline lists them too, as does an infeasible placement.
    assert greedy(load_fleet(path, CATALOG), CATALOG).required == ("a",)
    assert solver.place(path, required=["b"]).required == ("a", "b")
    crowded = {"pools": [ONE_NODE], "jobs": [
        {"name": name, "model": "Qwen3-4B", "max_model_len": 8192, "rollout_gpus": 4, "required": True}
        for name in ("x", "y")]}
    assert main(["cluster", str(fleet_file(crowded, tmp_path)), "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    assert (result["status"], result["required"]) == ("infeasible", ["x", "y"])


FIVE_REQUIRED = {"pools": [{**ONE_NODE, "nodes": 2}], "jobs": [
    *({"name": f"r{i}", "model": "Qwen3-0.6B", "max_model_len": 8192, "rollout_gpus": 1, "required": True}
      for i in range(5)),
    {"name": "big", "model": "Qwen3-8B", "max_model_len": 32768, "rollout_gpus": 4, "priority": 9},
    {"name": "small", "model": "Qwen3-0.6B", "max_model_len": 8192, "rollout_gpus": 1}]}
"""Five small required jobs (2 GPUs each at the fewest) on two nodes of 8, beside a job of priority 9 (6 GPUs at the
fewest) that takes the rest, and a small one that finds no room beside them all."""


def test_buy_names_every_required_job_and_the_jobs_beside_which_there_is_no_room(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    path = fleet_file(FIVE_REQUIRED, tmp_path)
    assert main(["cluster", str(path), "--buy", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["gpus"], result["left_out"]) == (0, ["small"])
    assert {placement["job"] for placement in result["placements"]} == {"r0", "r1", "r2", "r3", "r4", "big"}
    assert main(["cluster", str(path), "--buy"]) == 0
    lines = capsys.readouterr().out.splitlines()
    # It said "(r0, r1, r2, r3 and 1 more job)"; and "beside the required jobs", where big, not required, took room.
    assert lines[0] == ("status: optimal; nothing to buy: the pools as they are place the required jobs (r0, r1, r2, "
                        "r3, r4)")
    assert lines[-2:] == [  # s81: what buys for it too
        ("left out (not required): small: no room for it beside the jobs placed (the required ones, then the most "
         "priority of the others) on the pools as they are;"),
        "--required all buys for every job"]
    assert sum(line.startswith("│") and "(required)" in line for line in lines) == 5 and REQUIRED_NOTE in lines
    # With eight required jobs, they alone hold the room (2 GPUs each).
    alone = {**FIVE_REQUIRED, "jobs": [*FIVE_REQUIRED["jobs"][:5], *(
        {**FIVE_REQUIRED["jobs"][0], "name": f"r{i}"} for i in range(5, 8)), FIVE_REQUIRED["jobs"][-1]]}
    assert main(["cluster", str(fleet_file(alone, tmp_path)), "--buy"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "left out (not required): small: no room for it beside the required jobs on the pools as they are; --required "
        "all buys for every job")


BOX = {"name": "box", "gpu": "RTX-4090", "nodes": 1, "gpus_per_node": 8, "host_ram_gb": 80}
"""A node of 8 RTX 4090s with 80 GiB of host memory: too little for Offload (Qwen3-8B's 162.6 GiB on 8 GPUs, 81.3 on
16, under Trinity 0.5.1), enough to load it without (50.9 GiB), so a model's states need many GPUs."""
REACH = {"pools": [BOX], "jobs": [{"name": "mid", "model": "Qwen3-8B", "max_model_len": 8192,
                                   "trinity_version": "0.5.1"},
                                  {"name": "long", "model": "Qwen3-8B", "max_model_len": 65536,
                                   "trinity_version": "0.5.1"},
                                  {"name": "huge", "model": "Qwen3-4B", "max_model_len": 9000000}]}
"""Qwen3-8B at 8192 tokens trains on 16 of the box's GPUs; at 65536 on 24, with --token-budget auto only (at
Trinity's default budget no count up to 64 trains it); Qwen3-4B at 9000000 on none. The Qwen3-8B jobs name Trinity
0.5.1, whose verl rule loads the untied model on rank 0 alone: every rank loads it on RTX 4090s under the other
releases and with none named (s84), 8 loads of 30.5 GiB, more than the box holds."""


def _reach(result: solver.ClusterResult) -> dict[str, tuple[bool | None, str | None]]:
    """Per job left out, its pool's more_nodes_reach and more_nodes_token_budget."""
    return {job.job: (job.pools[0].more_nodes_reach, job.pools[0].more_nodes_token_budget) for job in result.unplaced}


def test_more_nodes_reach_tries_the_auto_token_budget_and_says_which(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]):
    path = fleet_file(REACH, tmp_path)
    assert _reach(solver.place(path)) == {"mid": (True, "default"), "long": (True, "auto"), "huge": (False, None)}
    # With --token-budget auto, that is the run's own budget.
    assert _reach(solver.place(path, token_budget="auto")) == {"mid": (True, "auto"), "long": (True, "auto"),
                                                               "huge": (False, None)}
    assert main(["cluster", str(path)]) == 1
    note = capsys.readouterr().err.splitlines()[-1]
    assert note == (
        "solve cluster: note: mid, long: no way to run on the pools' nodes as they are, but more nodes may give them "
        f"a way to run (long with --token-budget auto): solve cluster {path} --buy --token-budget auto names the "
        "fewest GPUs, then nodes, to add to the pools (and the jobs no number of nodes runs)")
    assert main(["cluster", str(path), "--token-budget", "auto"]) == 1  # the run's own: in the command, unsaid
    assert capsys.readouterr().err.splitlines()[-1] == (
        "solve cluster: note: mid, long: no way to run on the pools' nodes as they are, but more nodes may give them "
        f"a way to run: solve cluster {path} --buy --token-budget auto names the "
        "fewest GPUs, then nodes, to add to the pools "
        "(and the jobs no number of nodes runs)")
    # The command the note gives places both: long on 3 nodes of its own.
    purchase = solver.buy_nodes(path, token_budget="auto")
    assert ([p.job for p in purchase.placements], [j.job for j in purchase.fits_nowhere]) == (["mid", "long"],
                                                                                              ["huge"])
    # --buy's own reasons ask at 64 GPUs already: the auto budget is asked there too.
    default_buy = solver.buy_nodes(path)
    assert {job.job: (job.pools[0].more_nodes_reach, job.pools[0].more_nodes_token_budget)
            for job in default_buy.fits_nowhere} == {"long": (True, "auto"), "huge": (False, None)}


def test_more_nodes_questions_draw_on_the_runs_deterministic_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    reach_fleet = load_fleet(fleet_file(REACH, tmp_path), CATALOG)
    given: list[float] = []
    set_limits = solver.cluster.search._set_limits

    def recorded(solver_: cp_model.CpSolver, work: float, deadline: float) -> None:
        given.append(work)
        set_limits(solver_, work, deadline)

    monkeypatch.setattr(solver.cluster.search, "_set_limits", recorded)
    planners: list[solver.cluster.options.Planner] = []
    planner_class = solver.cluster.Planner

    def kept(*args: object, **kwargs: object) -> solver.cluster.options.Planner:
        planners.append(planner_class(*args, **kwargs))  # type: ignore[arg-type]
        return planners[-1]

    monkeypatch.setattr(solver.cluster, "Planner", kept)  # the API builds the planner it hands the search
    # One pool, every job without a way there: all asked before the search, whose first stage gets 60% of the
    # budget less what they took (nothing is kept for reasons after it: no job has a way to be left out with).
    place(load_fleet(fleet_file({**REACH, "jobs": [*REACH["jobs"], TWO_SMALL["jobs"][1]]}, tmp_path), CATALOG),
          catalog=CATALOG, time_limit_s=10)
    reach = planners[-1].reach_work
    assert reach.spent > 0 and reach.left + reach.spent == pytest.approx(REACH_SHARE * DETERMINISTIC_PER_SECOND * 10)
    assert given[0] == pytest.approx(0.6 * (DETERMINISTIC_PER_SECOND * 10 - reach.spent))
    # Where a job with a way lacks one in a pool it may use, and its model trains some length there (asked before the
    # search, on the questions' share: s64), its reason may ask after the search: the stages get the budget less all
    # of the questions' share, whatever they then ask.
    given.clear()
    two_pools = {"pools": [BOX, ONE_NODE], "jobs": [REACH["jobs"][1], TWO_SMALL["jobs"][1]]}
    result = place(load_fleet(fleet_file(two_pools, tmp_path), CATALOG), catalog=CATALOG, time_limit_s=10)
    assert [(p.job, p.pool) for p in result.placements] == [("long", "a100"), ("b", "box")]
    assert planners[-1].reach_work.spent > 0
    assert given[0] == pytest.approx(0.6 * DETERMINISTIC_PER_SECOND * 10 * (1 - REACH_SHARE))
    # None left: not decided (null), on every run alike.
    monkeypatch.setattr(solver.cluster.options, "REACH_SHARE", 0.0)
    assert _reach(place(reach_fleet, catalog=CATALOG)) == {job: (None, None) for job in ("mid", "long", "huge")}


def test_a_work_budget_stops_the_solves_it_holds_and_counts_what_they_spend():
    from solver.query import make_query
    from solver.solve import answer_for
    query = make_query(CATALOG, model="8B", gpu="a100", max_model_len=32768, budget_gpus=64, objective="min_gpus")
    budget = WorkBudget(1.0)
    with work_budget(budget):
        assert answer_for(CATALOG, query, "A100-80GB", explained=False).plans
    assert 0 < budget.spent == pytest.approx(1.0 - budget.left)
    spent = budget.spent
    empty = WorkBudget(0.0)
    with work_budget(empty):
        assert answer_for(CATALOG, query, "A100-80GB", explained=False).status == "unknown"
    assert answer_for(CATALOG, query, "A100-80GB", explained=False).plans  # outside the block, unbounded again
    assert budget.spent == spent
