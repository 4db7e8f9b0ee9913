"""`solve cluster`'s time limit and its cost comparisons (session 76, clusterlimits): a running job kept by
``--current`` names another pool's idle room that would run it for less (``pool-kept``) only where that pool's GPU type
is its own (a cost counts GPUs and settings, not a GPU type's speed)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

Cli = Callable[..., tuple[int, str, str]]

A100_4 = {"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 4}
A100_WIDE = {"name": "a100-wide", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}
H20_WIDE = {"name": "h20-wide", "gpu": "H20-96GB", "nodes": 1, "gpus_per_node": 8}
JOB = {"name": "j", "model": "Qwen3-8B", "max_model_len": 32768, "rollout_gpus": 0}


def _fleet(tmp_path: Path, name: str, pools: list[dict[str, Any]]) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"pools": pools, "jobs": [JOB]}), encoding="utf-8")
    return path


def _stays(cli: Cli, tmp_path: Path, pools: list[dict[str, Any]]) -> tuple[object, ...]:
    """Qwen3-8B at 32768, placed on a node of 4 A100s alone (SP=4, cost 0.325), then run with --current on `pools`:
    its current, stay code and words."""
    running = tmp_path / "running.json"
    running.write_text(cli("cluster", str(_fleet(tmp_path, "alone", [A100_4])), "--json")[1], encoding="utf-8")
    status, out, _ = cli("cluster", str(_fleet(tmp_path, "now", pools)), "--current", str(running), "--json")
    (placed,) = json.loads(out)["placements"]
    return status, placed["pool"], placed["current"], placed.get("stay_reason_code"), placed.get("stay_reason")


def test_a_pool_of_its_own_gpu_type_is_named_for_less(cli: Cli, tmp_path: Path):
    assert _stays(cli, tmp_path, [A100_4, A100_WIDE]) == (0, "a100", "stays", "pool-kept", (
        "kept in pool a100, where it runs, though pool a100-wide's idle room would run it for less (6 trainer GPUs, "
        "Env + SP=2, cost 0.1852, not 0.325)"))


def test_a_pool_of_another_gpu_type_is_not_named_though_its_way_costs_less(cli: Cli, tmp_path: Path):
    # 8 H20s run it for less than 6 A100s by cost (it counts GPUs and settings alone): before session 76, h20-wide
    # was named; no cost says the job runs faster on another GPU type, so only a100-wide is named.
    fresh = json.loads(cli("cluster", str(_fleet(tmp_path, "fresh", [A100_4, H20_WIDE, A100_WIDE])), "--json")[1])
    assert [(placed["pool"], placed["trainer_gpus"]) for placed in fresh["placements"]] == [("h20-wide", 8)]
    assert _stays(cli, tmp_path, [A100_4, H20_WIDE, A100_WIDE])[3:] == ("pool-kept", (
        "kept in pool a100, where it runs, though pool a100-wide's idle room would run it for less (6 trainer GPUs, "
        "Env + SP=2, cost 0.1852, not 0.325)"))
    assert _stays(cli, tmp_path, [A100_4, H20_WIDE]) == (0, "a100", "stays", None, None)
