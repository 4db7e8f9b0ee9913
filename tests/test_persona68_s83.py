"""A ``--current`` placement whose job names one node or one GPU index twice (a hand-written file, or one edited) is
refused in one line, exit status 2, as ``down: [3, 3]`` is: counted, the name given twice was two nodes or GPUs
(``nodes: [0, 0]`` moved the job for running on "8 GPUs of each of 2 nodes"). Its GPU indexes in another order are
the same GPUs: a job on whole nodes whose ``gpu_indexes`` ran 3 to 0 moved, "keeping it where it runs (as well as
the 2 running jobs kept)" though it was one of the 2, and a job sharing a node was shown on GPUs ``[3, 2]``. A job
on whole nodes whose file gives its rollout as the job asked it (2), not the whole node its ways give it (4), moves
saying so, not that the planner has no plan with the settings its cheapest way has."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import solver

Cli = Callable[..., tuple[int, str, str]]

FLEET = """\
pools:
  - {name: a100, gpu: A100-80GB, nodes: 2, gpus_per_node: 8}
jobs:
  - {name: probe, model: Qwen3-0.6B, max_model_len: 8192, rollout_gpus: 1}
"""


def _now(tmp_path: Path, **changed: Any) -> Path:
    """A placement that runs probe on GPUs 0-1 of node 0 (1 trainer, 1 rollout), with the keys `changed`."""
    placed = {"job": "probe", "pool": "a100", "nodes": [0], "gpu_indexes": [0, 1], "trainer_gpus": 1,
              "rollout_gpus": 1, "plan": {"max_model_len": 8192, "sp": 1, "offload": False}, **changed}
    path = tmp_path / "now.json"
    path.write_text(json.dumps({"schema_version": 1, "placements": [placed]}), encoding="utf-8")
    return path


@pytest.mark.parametrize(("changed", "said"), [
    ({"nodes": [0, 0]}, "job probe, nodes: names node 0 twice: a placement names each once"),
    ({"gpu_indexes": [0, 1, 1]}, "job probe, gpu_indexes: names GPU 1 twice: a placement names each once"),
    ({"nodes": [1, 0, 1], "gpu_indexes": [3, 3]}, "job probe, nodes: names node 1 twice: a placement names each once"),
])
def test_a_node_or_gpu_named_twice_in_current_is_refused_in_one_line(cli: Cli, tmp_path: Path,
                                                                     changed: dict[str, Any], said: str) -> None:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET, encoding="utf-8")
    now = _now(tmp_path, **changed)
    error = f"solve cluster: error: --current {now}: {said}\n"
    assert cli("cluster", str(fleet), "--current", str(now)) == (2, "", error)


def test_the_same_placement_named_once_stays(cli: Cli, tmp_path: Path) -> None:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET, encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet), "--current", str(_now(tmp_path)), "--no-widen", "--json")
    assert status == 0
    assert [(placed["job"], placed["current"]) for placed in json.loads(out)["placements"]] == [("probe", "stays")]


def test_the_api_refuses_a_result_whose_job_names_a_gpu_twice(tmp_path: Path) -> None:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET, encoding="utf-8")
    now = solver.place(fleet, widen=False)
    placed = now.placements[0]
    twice = now.model_copy(update={"placements": (
        placed.model_copy(update={"gpu_indexes": (*placed.gpu_indexes, placed.gpu_indexes[0])}),)})
    with pytest.raises(solver.QueryError) as refused:
        solver.place(fleet, current=twice)
    assert str(refused.value) == (f"current: job probe, gpu_indexes: names GPU {placed.gpu_indexes[0]} twice: a "
                                  "placement names each once")


WHOLE_AND_SHARED = """\
pools:
  - {name: h100, gpu: H100-80GB, nodes: 3, gpus_per_node: 4, node_interconnect: infiniband}
jobs:
  - {name: wide, model: Qwen3-8B, max_model_len: 32768, rollout_gpus: 4}
  - {name: probe, model: Qwen3-0.6B, max_model_len: 8192, rollout_gpus: 1}
"""
"""wide takes nodes 0 and 1 whole (its trainer on node 0, its rollout on node 1); probe runs on GPUs 2-3 of node 2."""


def test_gpu_indexes_in_another_order_are_the_same_gpus(cli: Cli, tmp_path: Path) -> None:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(WHOLE_AND_SHARED, encoding="utf-8")
    plan = {"max_model_len": 8192, "sp": 1, "offload": False}
    placed = [("wide", [0, 1], [0, 1, 2, 3], 4, 4, {**plan, "max_model_len": 32768, "sp": 4}),
              ("probe", [2], [2, 3], 1, 1, plan)]
    answers = []
    for order in (1, -1):
        now = tmp_path / f"now{order}.json"
        now.write_text(json.dumps({"schema_version": 1, "placements": [
            {"job": job, "pool": "h100", "nodes": nodes, "gpu_indexes": gpus[::order], "trainer_gpus": trainer,
             "rollout_gpus": rollout, "plan": its_plan} for job, nodes, gpus, trainer, rollout, its_plan in placed]}),
            encoding="utf-8")
        status, out, _ = cli("cluster", str(fleet), "--current", str(now), "--no-widen", "--json")
        answers.append((status, json.loads(out)["placements"]))
    assert answers[0] == answers[1]
    assert [(p["job"], p["nodes"], p["gpu_indexes"], p["current"]) for p in answers[1][1]] == [
        ("wide", [0, 1], [0, 1, 2, 3], "stays"), ("probe", [2], [2, 3], "stays")]


def test_a_rollout_of_whole_nodes_given_as_asked_moves_saying_so(cli: Cli, tmp_path: Path) -> None:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(WHOLE_AND_SHARED.replace("rollout_gpus: 4}", "rollout_gpus: 2}"), encoding="utf-8")
    moved = []
    for rollout in (2, 4):
        now = tmp_path / f"now{rollout}.json"
        now.write_text(json.dumps({"schema_version": 1, "placements": [
            {"job": "wide", "pool": "h100", "nodes": [0, 1], "gpu_indexes": [0, 1, 2, 3], "trainer_gpus": 4,
             "rollout_gpus": rollout, "plan": {"max_model_len": 32768, "sp": 4, "offload": False}}]}), encoding="utf-8")
        status, out, _ = cli("cluster", str(fleet), "--current", str(now), "--no-widen", "--json")
        wide = json.loads(out)["placements"][0]
        moved.append((status, wide["job"], wide["rollout_gpus"], wide["current"], wide.get("move_reason_code"),
                      wide.get("move_reason")))
    assert moved == [
        (0, "wide", 4, "moves", "no-way-as-it-runs",
         "its ways on 4 trainer GPUs in pool h100 give its rollout 4 GPUs, not the 2 it runs with"),
        (0, "wide", 4, "stays", None, None)]
