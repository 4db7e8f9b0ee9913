"""Review of session 79's nodesdown, pinnedplace, dpoeverywhere and docstruth15 (review79c): a pool's ``down`` read in
ascending order whatever the file's order (its title, its JSON and `check_placed_on` saw the file's order, so
``[2, 0]`` showed ``nodes 2 and 0 down`` and a result of it failed against the same pool written ``[0, 2]``), a
``down`` in a pool of ``nodes: 0`` refused with what to do; the LoRA-on-a-mixture-of-experts caution said once
beside ``--from-config`` of a config without LoRA (the apply lines' comment says it since docstruth15 writes the
adapter there, and the caution row said it again); the pinned host blocks as verl 0.7 places them, figure for
figure."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from cluster_reference import check_placements

import solver
from solver.memory import pinned_rounding, shard_values
from solver.results import check_placed_on
from solver.tables import QueryError
from solver.tables.loaders import load_catalog

Cli = Callable[..., tuple[int, str, str]]

CATALOG = load_catalog()
ROOT = Path(__file__).resolve().parent.parent
TRINITY_EXAMPLE = ROOT / "docs" / "examples" / "trinity.yaml"
POOL = {"name": "a100", "gpu": "A100-80GB", "nodes": 3, "gpus_per_node": 8}
JOBS = [{"name": "small", "model": "Qwen3-0.6B", "max_model_len": 8192, "rollout_gpus": 1}]


def _fleet(tmp_path: Path, name: str, **pool: object) -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump({"pools": [{**POOL, **pool}], "jobs": JOBS}), encoding="utf-8")
    return path


def test_down_is_read_in_ascending_order_shown_and_compared_so(cli: Cli, tmp_path: Path):
    status, out, err = cli("cluster", str(_fleet(tmp_path, "unsorted.yaml", down=[2, 0])), "--json")
    assert (status, err) == (0, "")
    result = json.loads(out)
    assert result["pools"] == [{"pool": "a100", "nodes": 3, "gpus": 24, "down": [0, 2], "nodes_used": 1,
                                "gpus_used": 7, "host_ram_gb": None, "fullest_node_host_gb": None}]
    assert [(p["job"], p["nodes"]) for p in result["placements"]] == [("small", [1])]
    instance = {"pools": [{**POOL, "down": [2, 0]}], "jobs": JOBS}  # the reference checker reads it so too
    assert check_placements(CATALOG, instance, result, ignore_unused_gpus=True, estimates=True) == []
    status, text, _ = cli("cluster", str(_fleet(tmp_path, "unsorted.yaml", down=[2, 0])))
    assert status == 0
    assert "pool a100: 3 x 8 A100-80GB, nodes 0 and 2 down; 1 node and 7 of 24 GPUs used" in text
    placed = solver.place(_fleet(tmp_path, "unsorted.yaml", down=[2, 0]))
    assert placed.pools[0].down == (0, 2)
    check_placed_on(placed, solver.load_fleet(_fleet(tmp_path, "sorted.yaml", down=[0, 2])))  # the same nodes down
    with pytest.raises(QueryError, match=r"^result has nodes \[0, 2\] of pool a100 down, fleet has \[0\]: pass the "
                                         r"fleet it placed$"):
        check_placed_on(placed, solver.load_fleet(_fleet(tmp_path, "one.yaml", down=[0])))
    assert solver.Pool(name="p", gpu="A100-80GB", nodes=4, gpus_per_node=8, down=(3, 1)).down == (1, 3)


def test_down_in_a_pool_of_no_nodes_says_what_to_do(cli: Cli, tmp_path: Path):
    path = _fleet(tmp_path, "none.yaml", nodes=0, down=[0])
    status, out, err = cli("cluster", str(path))
    assert (status, out) == (2, "")
    assert err == (f"solve cluster: error: {path}: line 7: pool a100: down names nodes of a pool of none (nodes: 0): "
                   "drop down, or give the pool its nodes\n")


LORA_MOE_SET = "PEFT makes the adapter's target_parameters a set"
LORA_MOE_ROW = "LoRA on Qwen3-30B-A3B, a mixture of experts"
"""The caution row's first words (its apply comment points to it)."""


def test_the_lora_moe_caution_is_said_once_beside_a_config_without_lora(cli: Cli, tmp_path: Path):
    config = tmp_path / "moe.yaml"
    config.write_text(TRINITY_EXAMPLE.read_text(encoding="utf-8").replace("Qwen/Qwen3-8B", "Qwen/Qwen3-30B-A3B"),
                      encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--lora-rank", "8")
    assert status == 0
    # once, in a caution row, which the apply lines' comment points to (smallslips37)
    assert out.count(LORA_MOE_ROW) == 1 and " ".join(out.split()).count(LORA_MOE_SET) == 1
    assert ("# a new adapter on all-linear (Trinity's default target_modules), as planned; with LoRA Trinity builds "
            "no reference model; but see the caution above on how Trinity saves its config:\n"
            "model.lora_configs: [{lora_rank: 8}]\n") in out
    status, bare, _ = cli("--model", "Qwen3-30B-A3B", "--gpu", "h100", "--len", "32768", "--lora-rank", "8")
    assert status == 0 and bare.count(LORA_MOE_ROW) == 1 and " ".join(bare.split()).count(LORA_MOE_SET) == 1


def test_the_pinned_blocks_are_verl_07s_placement_tensor_by_tensor():
    # verl 0.7's get_shard_placement_fn: the first dimension the GPUs divide, else the rows (padded by FSDP2).
    assert shard_values((4096, 12288), 6, first_even_dim=True) == 4096 * 2048  # down_proj: by its columns
    assert shard_values((4096, 12288), 6) == 683 * 12288  # by rows, padded
    assert shard_values((4096, 4096), 6, first_even_dim=True) == 683 * 4096  # neither: rows, padded
    assert shard_values((128, 1536, 2048), 6, first_even_dim=True) == 128 * 256 * 2048  # a fused expert tensor
    assert shard_values((128, 1536, 2048), 6) == 22 * 1536 * 2048
    qwen3_8b = CATALOG.model("Qwen3-8B")
    placed, by_rows = pinned_rounding(qwen3_8b, 6, 2, 0, "fused", True), pinned_rounding(qwen3_8b, 6, 2)
    assert placed < by_rows
    assert round(placed * 2 * qwen3_8b.parameters_b * 1e9 / 6 / 2**30, 2) == 2.89
    assert round(by_rows * 2 * qwen3_8b.parameters_b * 1e9 / 6 / 2**30, 2) == 3.45
    # 0.5.1 (verl's rule: rank 0 alone loads this untied model) and 0.6 on H100s (rank 0): training's need, the pinned
    # blocks'. 0.5.2, and 0.5 named alone (which may be it), load it on every rank: 6 x 4 bytes x 8.19e9 at start-up
    # beside the pinned shards (the reference model's bf16 blocks as placed, the actor's fp32), 235.2, more.
    for version, need in (("0.5.1", 147.8), ("0.5", 235.2), ("0.5.2", 235.2), ("0.6", 185.4)):
        estimate = solver.estimate_memory("Qwen3-8B", "h100", 6, 8192, offload=True, trinity_version=version)
        assert estimate.host_memory_gib == need, version
