"""A ``--current`` placement whose job names one node or one GPU index twice (a hand-written file, or one edited) is
refused in one line, exit status 2, as ``down: [3, 3]`` is: counted, the name given twice was two nodes or GPUs
(``nodes: [0, 0]`` moved the job for running on "8 GPUs of each of 2 nodes")."""

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
