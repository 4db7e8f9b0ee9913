"""`solve cluster --current` says exactly why (session 73): a job whose own ways were all decided gets its real move
reason though another job's solve ran out of time; the stage of running jobs kept proves `more-priority` alone,
whatever the stages after it proved; a job that stays on settings the planner would not pick says that they are
kept as they run (`stay_reason`, `stay_reason_code`, a `stays:` line)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from ortools.sat.python import cp_model
from test_clusterkeep2_s71 import _fleet, _running_now
from test_keepplaced_s70 import JOBS, POOLS
from test_movereason_s72 import _changed, _hand_started, _moves, _now, _written
from test_mutants18_s70 import ONE_JOB, RUNS_ON_NODE_1

import solver.cluster.options
import solver.cluster.search
from solver.cluster.options import Planner, fleet_options
from solver.results import Answer
from solver.tables import Fleet, Job, Pool, load_catalog, load_weights

Cli = Callable[..., tuple[int, str, str]]


def undecided_for(monkeypatch: pytest.MonkeyPatch, model: str) -> None:
    """Every decided answer the ways ask about `model` left undecided, as a solve that ran out of time leaves it:
    ``feasible`` where it has plans, ``unknown`` where it has none."""
    asked = solver.cluster.options.answer_for

    def out_of_time(catalog: Any, query: Any, gpu: str, *args: Any, **kwargs: Any) -> Answer:
        answer = asked(catalog, query, gpu, *args, **kwargs)
        if query.model != model or not answer.decided:
            return answer
        return answer.model_copy(update={"status": "feasible" if answer.plans else "unknown"})

    monkeypatch.setattr(solver.cluster.options, "answer_for", out_of_time)


def _duo_on_two_gpus(cli: Cli, tmp_path: Path) -> tuple[dict[str, Any], str]:
    """s71's fleet with duo started by hand on 2 GPUs (no plan trains it there): its JSON, and the command's text."""
    now = _running_now(cli, tmp_path, (1, {"trainer_gpus": 2, "gpu_indexes": [0, 1]}))
    status, out, _ = cli("cluster", str(_fleet(tmp_path)), "--current", str(now), "--json")
    assert status == 0
    return json.loads(out), cli("cluster", str(_fleet(tmp_path)), "--current", str(now))[1]


def test_another_jobs_undecided_solve_leaves_a_jobs_real_reason(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # solo's (Qwen3-8B) solves run out of time, duo's (Qwen3-4B) do not: duo's reason rests on its own ways alone.
    # Before, any undecided solve of the fleet turned it into move-unproven.
    undecided_for(monkeypatch, "Qwen3-8B")
    result, text = _duo_on_two_gpus(cli, tmp_path)
    why = "no way to run it on 2 trainer GPUs in pool a100 (its ways there take 4)"
    duo = result["placements"][1]
    assert result["status"] == "feasible" and result["undecided_ways"] > 0
    assert (duo["job"], duo["current"], duo["move_reason_code"], duo["move_reason"]) == (
        "duo", "moves", "no-way-at-count", why)
    assert f"moves: duo: it runs on node 1 of pool a100 (GPUs 0-1) now, and restarts as placed: {why}" in (
        text.splitlines())


def test_a_job_reusing_an_undecided_answer_is_undecided_too(monkeypatch: pytest.MonkeyPatch):
    # Two jobs of one shape: the second asks nothing new, its ways are the first one's answers, undecided. Before,
    # only the job whose turn asked them was counted.
    undecided_for(monkeypatch, "Qwen3-0.6B")
    job = Job(name="a", model="Qwen3-0.6B", max_model_len=8192, rollout_gpus=1)
    fleet = Fleet(pools=(Pool(name="a100", gpu="A100-80GB", nodes=1, gpus_per_node=8),),
                  jobs=(job, job.model_copy(update={"name": "b"})))
    planner = Planner(load_catalog().for_fleet(fleet), load_weights(), "auto")
    ways = fleet_options(planner, fleet)
    assert {option.job for option in ways.options} == {0, 1} and ways.undecided_jobs == frozenset({0, 1})


def _stage_unproven_from(monkeypatch: pytest.MonkeyPatch, stage: int) -> None:
    """Each search's stages from the `stage`-th on (1: priority, 2: running jobs kept, 3: length, ...) answer
    ``FEASIBLE`` where CP-SAT proved them: as a time limit that ran out on the proof leaves them."""
    checked, staged, solved = solver.cluster.search.checked, solver.cluster.search.solve_stages, []

    def counted(*args: Any, **kwargs: Any) -> Any:
        solved.clear()
        return staged(*args, **kwargs)

    def unproven(solver_: cp_model.CpSolver, model: cp_model.CpModel, status: Any) -> Any:
        solved.append(status)
        status = checked(solver_, model, status)
        return cp_model.FEASIBLE if status == cp_model.OPTIMAL and len(solved) >= stage else status

    monkeypatch.setattr(solver.cluster.search, "solve_stages", counted)
    monkeypatch.setattr(solver.cluster.search, "checked", unproven)


def _raised(cli: Cli, tmp_path: Path) -> tuple[dict[str, Any], str]:
    """s70's fleet with c8-b raised to priority 3 (q14-a moves for it), with --current: its JSON and text."""
    now = _now(cli, _written(tmp_path / "now.yaml", POOLS, JOBS))
    fleet = _written(tmp_path / "raised.yaml", POOLS, _changed("c8-b", priority=3))
    status, out, _ = cli("cluster", str(fleet), "--current", str(now), "--json")
    assert status == 1
    return json.loads(out), cli("cluster", str(fleet), "--current", str(now))[1]


def test_the_stays_stage_alone_proves_more_priority(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # Length and cost left unproven: the placement is not proven best, but the stage of running jobs kept proved it
    # kept the most a placement of priority 9 keeps, so keeping q14-a too would place less. Before: move-unproven.
    _stage_unproven_from(monkeypatch, 3)
    result, text = _raised(cli, tmp_path)
    why = ("keeping it where it runs (as well as the 3 running jobs kept) places less priority than this placement "
           "(9); its GPUs now run c8-b (priority 3)")
    assert result["status"] == "feasible" and [move for move in _moves(json.dumps(result)) if move[1] == "moves"] == [
        ("q14-a", "moves", "more-priority", why)]
    assert f"moves: q14-a: it runs on node 0 of pool h20 (all its GPUs) now, and restarts as placed: {why}" in (
        " ".join(text.split()))  # the line wraps


def test_a_stays_stage_left_unproven_proves_no_move(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    _stage_unproven_from(monkeypatch, 2)
    result, _ = _raised(cli, tmp_path)
    assert [move for move in _moves(json.dumps(result)) if move[1] == "moves"] == [
        ("q14-a", "moves", "move-unproven",
         "the placement is not proven best (raise --time-limit); its GPUs now run c8-b (priority 3)")]


def _stays(out: str) -> list[tuple[str, str | None, str | None, str | None]]:
    """Each placement's job, `current`, `stay_reason_code` and `stay_reason`, from --json."""
    return [(p["job"], p.get("current"), p.get("stay_reason_code"), p.get("stay_reason"))
            for p in json.loads(out)["placements"]]


def test_a_job_kept_on_settings_the_planner_would_not_pick_says_so(cli: Cli, tmp_path: Path):
    # Started with SP=4 at 16k on 8 A100s, where the planner picks Env (SP=1): it stays, and says its settings are
    # kept as they run. Before, it read `stays` with no word.
    # 8 is no count its ways on the A100 take (1, 2, 4 or 6), so its count is named too (session 74: count-kept).
    why = ("its trainer GPU count and settings are kept as they run (SP=4 without Offload at 16384 tokens on 8 trainer "
           "GPUs; its other ways in pool a100 take 1, 2, 4 or 6; the planner's cheapest way on 8 trainer GPUs: Env)")
    assert _stays(_hand_started(cli, tmp_path, "16k", 4)) == [("hand", "stays", "count-kept", why)]
    now = tmp_path / "hand.json"
    status, text, _ = cli("cluster", str(tmp_path / "hand.yaml"), "--current", str(now))
    assert status == 0 and f"stays: hand: {why}" in " ".join(text.split())  # its line wraps now


def test_a_job_kept_on_the_planners_own_settings_says_nothing_more(cli: Cli, tmp_path: Path):
    now = _now(cli, _written(tmp_path / "now.yaml", POOLS, JOBS))
    status, out, _ = cli("cluster", str(tmp_path / "now.yaml"), "--current", str(now), "--json")
    assert status == 1 and {(current, code) for _, current, code, _ in _stays(out)} == {("stays", None)}
    assert not any("stay_reason" in placed for placed in json.loads(out)["placements"])
    assert "stays:" not in cli("cluster", str(tmp_path / "now.yaml"), "--current", str(now))[1]


def test_a_job_kept_with_its_own_offload_names_it(cli: Cli, tmp_path: Path):
    # s70's job on node 1 with Offload, where the planner picks vanilla there: it stays, and says so.
    fleet, now = tmp_path / "fleet.yaml", tmp_path / "now.json"
    fleet.write_text(yaml.safe_dump(ONE_JOB), encoding="utf-8")
    running = {**RUNS_ON_NODE_1, "plan": {**RUNS_ON_NODE_1["plan"], "offload": True}}
    now.write_text(json.dumps({"schema_version": 1, "placements": [running]}), encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet), "--current", str(now), "--json")
    assert status == 0 and _stays(out) == [("p06-a", "stays", "settings-kept", (
        "its settings are kept as they run (SP=1 with Offload at 8192 tokens on 6 trainer GPUs; the planner's "
        "cheapest way on 6 trainer GPUs: vanilla)"))]
