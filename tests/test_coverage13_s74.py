"""Session 74's changed lines that no test ran (helper coverage13): vLLM's LoRA slots of a latent attention and of a
mixture of experts (`vllm_lora_widths`), a config.json's RoPE scaling that transformers builds without (not Phi-3's
rules), an ``at_least`` stretch whose roomy stop falls short of the least asked, and ``--buy``'s second question on
less rounded host needs where it rounds as many pools, or finds no purchase in its time."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from cluster_api import buy
from cluster_reference import check_placements
from ortools.sat.python import cp_model
from test_atleastcap_s63 import moe_64k, placed
from test_cluster import solved
from test_latent_moe import TINY_V3

from solver.cluster.search import _Staged
from solver.memory import vllm_lora_bytes, vllm_lora_widths
from solver.tables import TableError, load_catalog, load_fleet, load_model_config
from solver.tables.schema import MoE

CATALOG = load_catalog()
buy_module = importlib.import_module("solver.cluster.buy")  # `solver.cluster.buy` the name is the function


def test_vllm_lora_slots_of_qwen3_30b_a3b_by_hand() -> None:
    # hidden 2048, 48 layers, 32 query heads and 4 KV heads of 128, 128 experts 768 wide, untied vocabulary 151936.
    # At size 4: q 4096 / 4 = 1024 outputs, k and v 4 x 128 / 4 = 128, o 1024 inputs; the router (2048 -> 128)
    # replicated; 128 x 48 = 6144 experts, each a gated MLP 768 / 4 = 192 wide; no shared expert, no dense layer.
    model = CATALOG.model("Qwen3-30B-A3B")
    assert vllm_lora_widths(model, 4) == (
        (151936, 2048, 1), (2048, 151936, 1), (2048, 1024, 48), (2048, 128, 96), (1024, 2048, 48),
        (2048, 128, 48), (2048, 192, 12288), (192, 2048, 6144))
    widths = 2 * (151936 + 2048) + 3072 * 48 + 2176 * 96 + 3072 * 48 + 2176 * 48 + 2240 * 12288 + 2240 * 6144
    assert sum((i + o) * n for i, o, n in vllm_lora_widths(model, 4)) == widths == 42_203_904
    assert vllm_lora_bytes(model, 4, 16) == 16 * widths * 2 + 56 * 2048  # 4 slots of rank 16, 2-byte values


def test_a_shared_expert_adds_its_mlp_and_qwen2_moes_gate_its_router() -> None:
    base = CATALOG.model("Qwen3-30B-A3B")
    moe = MoE(experts=128, active_experts=8, moe_intermediate_size=768, shared_expert_intermediate_size=512,
              shared_expert_gate=True)
    gated, ungated = (base.model_copy(update={"moe": moe.model_copy(update={"shared_expert_gate": gate})})
                      for gate in (True, False))
    routed = vllm_lora_widths(base, 2)[:6]
    experts = ((2048, 384.0, 12288), (384.0, 2048, 6144))  # 768 / 2 wide
    shared = ((2048, 256.0, 96), (256.0, 2048, 48))  # 512 / 2 wide, one per layer
    assert vllm_lora_widths(gated, 2) == routed + ((2048, 1, 48),) + experts + shared
    assert vllm_lora_widths(ungated, 2) == routed + experts + shared


def test_a_latent_attentions_projections_are_whole_on_every_gpu(tmp_path: Path) -> None:
    # TINY_V3: hidden 64, 4 layers (2 dense, 96 wide), 4 heads; a query latent of 24, a KV latent of 32 (+ 8 rotary),
    # nope 16, value 12; 8 experts 16 wide and one shared expert 16 wide, ungated; tied vocabulary of 1000.
    path = tmp_path / "config.json"
    path.write_text(json.dumps(TINY_V3), encoding="utf-8")
    model = load_model_config(path)
    latent = ((64, 24, 4), (24, 96, 4), (64, 40, 4), (32, 112, 4), (48, 64, 4))  # q_a, q_b, kv_a, kv_b, o
    assert vllm_lora_widths(model, 2) == (
        ((1000, 64, 2), (64, 1000, 1)) + latent + ((64, 8, 2),)  # the router of the 2 sparse layers
        + ((64, 8.0, 32), (8.0, 64, 16))  # 8 x 2 experts, 16 / 2 wide
        + ((64, 8.0, 4), (8.0, 64, 2))  # the shared expert of the 2 sparse layers
        + ((64, 48.0, 4), (48.0, 64, 2)))  # the 2 dense layers' MLP, 96 / 2 wide
    assert vllm_lora_widths(model, 1)[2:7] == latent  # the same at any size


@pytest.mark.parametrize(("scaling", "problem"), [
    ({"type": "yarn", "original_max_position_embeddings": 1024},
     "rope_scaling: missing factor: transformers refuses rope_type yarn without it"),
    ({"rope_type": "wavy", "factor": 2.0},
     ("rope_scaling: rope_type 'wavy': transformers builds no such RoPE scaling; it builds default, linear, "
      "dynamic, yarn, longrope, llama3 or proportional")),
])
def test_a_config_jsons_rope_scaling_transformers_cannot_build_is_refused(tmp_path: Path, scaling: dict[str, Any],
                                                                          problem: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**TINY_V3, "rope_scaling": scaling}), encoding="utf-8")
    with pytest.raises(TableError) as refused:
        load_model_config(path)
    assert str(refused.value) == f"{path}: {problem}"


def test_a_least_past_the_roomy_stop_runs_at_the_least_with_the_caution(tmp_path: Path) -> None:
    # moe-64k on 4 H20s reaches 129024 with thin headroom; with the room the caution asks for, 124928
    # (test_clustersearch_s64). A least of 126976 is past that stop: the job runs at its least, as asked, and keeps
    # the caution (1.35 GiB to spare).
    assert placed(solved(moe_64k({"at_least": 126976}), tmp_path)) == (
        4, 126976, (True, True, 4), 1.35, ["thin-headroom"], "estimated")
    assert placed(solved(moe_64k({"at_least": 124928}), tmp_path))[1:5] == (124928, (True, True, 4), 2.64, [])


def _host_bound_fleet(nodes: int, models: list[str], host_ram_gb: int = 192) -> dict[str, Any]:
    """Required jobs of `models` on `nodes` nodes of 16 A100s with `host_ram_gb` of host memory each (by default 192,
    test_clusterrest_s74's 128 GB raised as every rank of a job's node loads the model at start-up where no release
    is named: Qwen3-8B's 30.5 GiB on each, so that the host memory still decides how many jobs share a node)."""
    return {"pools": [{"name": "p", "gpu": "A100-80GB", "nodes": nodes, "gpus_per_node": 16,
                       "host_ram_gb": host_ram_gb}],
            "jobs": [{"name": f"j{index}", "model": model, "max_model_len": 8192, "rollout_gpus": 0,
                      "required": True} for index, model in enumerate(models)]}


def _bought(tmp_path: Path, instance: dict[str, Any]) -> dict[str, Any]:
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(instance), encoding="utf-8")
    return json.loads(buy(load_fleet(path, CATALOG), catalog=CATALOG, time_limit_s=60).model_dump_json())


def _purchase_bounds(monkeypatch: pytest.MonkeyPatch) -> list[tuple[list[int], tuple[str, ...]]]:
    """The node bounds each purchase model of `buy` is made with, and the pools it rounds, in order."""
    made: list[tuple[list[int], tuple[str, ...]]] = []
    of = buy_module._PurchaseModel.of

    def recorded(*args: Any) -> Any:
        model = of(*args)
        made.append((list(args[3]), model.host_rounded))
        return model

    monkeypatch.setattr(buy_module._PurchaseModel, "of", recorded)
    return made


SMALL_QWEN3 = ["Qwen3-0.6B", "Qwen3-1.7B", "Qwen3-4B", "Qwen3-8B"]


def test_buy_keeps_its_purchase_where_the_tighter_bound_rounds_as_many_pools(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # Twelve jobs: the bound's 12 nodes round the host needs, and so do the 5 the purchase buys; nothing is asked
    # again, and the purchase stands, feasible (rounded), its placement checked by the reference.
    made = _purchase_bounds(monkeypatch)
    purchase = _bought(tmp_path, _host_bound_fleet(0, SMALL_QWEN3 * 3))
    assert made == [([12], ("p",)), ([5], ("p",))]
    assert (purchase["status"], purchase["gpus"], purchase["nodes"], purchase["host_rounded"]) == (
        "feasible", 80, 5, ["p"])
    as_placed = {"placements": purchase["placements"], "unplaced": []}
    assert check_placements(CATALOG, _host_bound_fleet(5, SMALL_QWEN3 * 3), as_placed, minimize_nodes=True,
                            estimates=True) == []


def test_buy_keeps_its_first_purchase_where_the_question_asked_again_finds_none(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # test_clusterrest_s74's eight jobs on nodes of 136 GB (every rank loading the model; 133 to 139 GB give this
    # sequence, 132 no rounding, 140 a second rounded purchase): asked again on 4 nodes (unrounded), the purchase is 4
    # nodes, optimal. Where that second question finds nothing in its time (as CP-SAT's UNKNOWN), the first purchase
    # stands: 4 nodes, rounded.
    made = _purchase_bounds(monkeypatch)
    solve_stages, calls = buy_module.solve_stages, [0]

    def second_unsolved(start: Any, *args: Any) -> Any:
        calls[0] += 1
        if calls[0] == 2:
            return _Staged(start, first_failed=cp_model.UNKNOWN)
        return solve_stages(start, *args)

    monkeypatch.setattr(buy_module, "solve_stages", second_unsolved)
    purchase = _bought(tmp_path, _host_bound_fleet(0, SMALL_QWEN3 * 2, 136))
    assert made == [([8], ("p",)), ([4], ())]
    assert (purchase["status"], purchase["gpus"], purchase["nodes"], purchase["host_rounded"]) == (
        "feasible", 64, 4, ["p"])
    as_placed = {"placements": purchase["placements"], "unplaced": []}
    assert check_placements(CATALOG, _host_bound_fleet(4, SMALL_QWEN3 * 2, 136), as_placed, minimize_nodes=True,
                            estimates=True) == []
