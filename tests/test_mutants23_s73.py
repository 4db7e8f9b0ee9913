"""Tests that kill mutants of session 72's code which its own tests let live (mutants23; the table:
/work/keep/review-s73-mutants23.md): a least-priority solve the wall clock stops is named in the answer, and a tie
in the job's favour counts only the placements with it that hold as much priority as the most."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from ortools.sat.python import cp_model
from test_clusterkeep2_s71 import A100_NODES, DUO

import solver.cluster.reasons
from solver.cluster.model import placement_solver
from solver.memory import expert_padding, lora_states_bytes
from solver.tables import load_catalog

Cli = Callable[..., tuple[int, str, str]]

X_Y_AND_J = [{**DUO, "name": name, "priority": priority} for name, priority in (("x", 5), ("y", 5), ("j", 1))]
"""Three 4-GPU jobs for one node of 8 A100s: x and y (priority 5 each) take it, j (1) is left out; with j placed, the
other jobs hold 5 at most, so priority 6 is the least that places it."""


def _cluster(cli: Cli, tmp_path: Path, jobs: list[dict], *options: str) -> tuple[int, dict]:
    """`solve cluster --json` on one A100 node (host memory unchecked) running `jobs`: its status and answer."""
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(yaml.safe_dump({"pools": [{**A100_NODES, "nodes": 1, "host_ram_gb": None}], "jobs": jobs}),
                     encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet), "--json", *options)
    return status, json.loads(out)


def test_a_least_priority_solve_the_wall_clock_stops_is_named_in_the_answer(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # The least-priority solves end on their wall-clock limit at once, as on a machine too busy to give them any
    # time: j's least priority is unproven (the holders' priority plus one), and the answer names the step.
    def stopped_by_the_wall_clock(workers: int, seed: int) -> cp_model.CpSolver:
        stopping = placement_solver(workers, seed)
        solve = stopping.solve

        def at_once(model: cp_model.CpModel, callback: cp_model.CpSolverSolutionCallback | None = None
                    ) -> cp_model.CpSolverStatus:
            stopping.parameters.max_time_in_seconds = 0.0
            return solve(model, callback)

        stopping.solve = at_once  # type: ignore[method-assign]
        return stopping

    monkeypatch.setattr(solver.cluster.reasons, "placement_solver", stopped_by_the_wall_clock)
    _, answer = _cluster(cli, tmp_path, X_Y_AND_J)
    assert answer["wall_clock_stopped"] == ["least priority"]
    assert [(left["job"], left["reason"].split("; ", 1)[1]) for left in answer["unplaced"]] == [
        ("j", "x (priority 5) holds the room it needs: priority 6 would place it")]


def test_a_tie_in_the_jobs_favour_counts_no_placement_of_less_priority(cli: Cli, tmp_path: Path):
    # r (priority 4) runs on GPUs 4-7 and stops: x and y place 10. With j placed, x beside it holds 6, keeping no
    # running job; r beside it holds one less, 5, and keeps r. That placement breaks no tie at 6: 6 is the least that
    # places j (at 5 it only ties with x and y, neither keeping a running job), while r's 5 ties and keeps r.
    current = tmp_path / "now.json"
    current.write_text(json.dumps({"schema_version": 1, "placements": [{
        "job": "r", "pool": "a100", "nodes": [0], "gpu_indexes": [4, 5, 6, 7], "trainer_gpus": 4, "rollout_gpus": 0,
        "plan": {"max_model_len": 65536, "sp": 4, "offload": False}}]}), encoding="utf-8")
    jobs = [*X_Y_AND_J[:2], {**DUO, "name": "r", "priority": 4}, X_Y_AND_J[2]]
    status, answer = _cluster(cli, tmp_path, jobs, "--current", str(current))
    assert (status, answer["status"], [(placed["job"], placed["current"]) for placed in answer["placements"]]) == (
        1, "optimal", [("x", "starts"), ("y", "starts")])
    assert [(left["job"], left.get("current"), left["reason"].split("; ", 1)[1]) for left in answer["unplaced"]] == [
        ("r", "stops", "x (priority 5) holds the room it needs: priority 5 is the least that places it (with as much "
                       "priority placed, more running jobs stay with it)"),
        ("j", None, "x (priority 5) holds the room it needs: priority 6 is the least that places it")]


def test_a_lora_runs_whole_routed_experts_are_frozen_weights():
    # Qwen3-30B-A3B on 6 GPUs: FSDP2 holds 22 of each layer's 128 routed experts on the fullest GPU, 2/3 of an
    # expert (3 x 2048 x 768 parameters) x 48 layers more than an even share; with LoRA they are frozen, 4 bytes each.
    moe = load_catalog().model("30B-A3B")
    assert expert_padding(moe, 6) == pytest.approx(2 / 3 * 3 * 2048 * 768 * 48) == pytest.approx(150_994_944)
    assert lora_states_bytes(moe, 6, 32, 16) == pytest.approx(
        4 * moe.parameters_b * 1e9 / 6 + 4 * 150_994_944 + 16 * 30_081_024 / 6)
