"""Offload's cost for a mixture of experts (session 61): Offload moves and updates every parameter held each step,
while the step computes with the active ones, so its weight scales with the parameters held per parameter active
(30.5B / 3.32B for Qwen3-30B-A3B); a dense model's costs are unchanged."""

from __future__ import annotations

import json
import shutil
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml
from cluster_reference import best_value, check_placements, value_of
from reference import held_per_active

import solver
from solver.tables import TableError, shipped_tables_directory

CATALOG = solver.load_catalog()
QWEN3_30B_A3B_IDLE = 48 * (128 - 8) * 3 * 2048 * 768
"""Qwen3-30B-A3B's parameters a token does not pass through: in each of its 48 layers, the gated MLPs (3 matrices of
2048 x 768) of the 120 of its 128 experts it does not take."""
MOE_RATIO = Fraction(30_500_000_000, 30_500_000_000 - QWEN3_30B_A3B_IDLE)
REVIEW = ("--model", "30B-A3B", "--gpu", "h100", "--gpus", "16", "--maximize", "len", "--top", "5")
"""The review's command: the longest context of Qwen3-30B-A3B within 16 H100s, five ranked plans."""


DEEPSEEK_V2_LITE_LIKE = {
    "model_type": "deepseek_v2", "hidden_size": 2048, "intermediate_size": 10944, "num_hidden_layers": 27,
    "num_attention_heads": 16, "num_key_value_heads": 16, "vocab_size": 102400, "kv_lora_rank": 512,
    "q_lora_rank": None, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "n_routed_experts": 64,
    "num_experts_per_tok": 6, "moe_intermediate_size": 1408, "n_shared_experts": 2, "first_k_dense_replace": 1,
    "tie_word_embeddings": False, "max_position_embeddings": 163840}
"""A DeepSeek-V2-Lite-like config.json: 27 layers, the first dense, 64 routed experts of 1408, 6 taken, 2 shared."""


def test_a_mixture_of_experts_holds_its_parameters_over_its_active_ones_per_active_one():
    moe = CATALOG.model("Qwen3-30B-A3B")
    assert moe.held_per_active == MOE_RATIO == Fraction(23828125, 2594461)  # 9.18: 30.5B held, 3.32B active
    assert round(float(MOE_RATIO), 2) == round(moe.parameters_b / moe.active_parameters_b, 2) == 9.18
    for model in CATALOG.models:  # the reference works it out on its own, from the shapes
        assert model.held_per_active == held_per_active(model) == (1 if model.moe is None else MOE_RATIO), model.name


def test_a_mixture_of_experts_read_from_a_config_gets_its_ratio_from_its_shape(tmp_path: Path):
    # DeepSeek-V2-Lite-like: 27 layers, the first dense, 64 routed experts of 1408, 6 taken, and 2 shared experts
    # (always taken): the ratio counts the 63 x 26 routed experts a token does not take.
    config = DEEPSEEK_V2_LITE_LIKE
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    model = solver.load_model_config(tmp_path)
    idle = 26 * (64 - 6) * 3 * 2048 * 1408
    held = Fraction(repr(model.parameters_b)) * 10**9
    assert model.held_per_active == held / (held - idle) == held_per_active(model)
    assert 5 < model.held_per_active < 6  # 15.7B held, 2.7B active: DeepSeek-V2-Lite's card says 16B and 2.4B


def test_the_reviews_ranking_keeps_its_order_and_prices_offload_for_the_experts(cli):
    # Maximising the length ranks by length first: the same five plans in the same order; Offload's plans cost
    # (1 + 9.18) where they cost 2 before, so the plan without it (#3) is 0.10x the best's cost, not 0.50x.
    status, out, err = cli(*REVIEW, "--json")
    [answer] = json.loads(out)
    assert (status, err) == (0, "")
    plans = [(p["gpus"], p["env"], p["offload"], p["sp"], p["max_model_len"], p["cost"]) for p in answer["plans"]]

    def cost(gpus: int, offload: bool, sp: int) -> float:
        return float(Fraction(1, gpus) * (1 + MOE_RATIO * offload) * (1 + Fraction(1, 10) * (sp - 1))
                     * Fraction(101, 100))

    assert plans == [
        (16, True, True, 8, 210944, cost(16, True, 8)),
        (8, True, True, 8, 210944, cost(8, True, 8)),
        (16, True, False, 8, 118784, cost(16, False, 8)),
        (8, True, True, 4, 105472, cost(8, True, 4)),
        (4, True, True, 4, 105472, cost(4, True, 4)),
    ]
    assert plans[0][-1] == pytest.approx(1.0928951177624178, rel=1e-15)
    assert plans[2][-1] == 0.1073125  # no Offload: the cost it had
    status, out, _ = cli(*REVIEW)
    rows = [line for line in out.splitlines() if line.startswith(("│ 1 ", "│ 3 "))]
    assert status == 0 and "1.093 (best)" in rows[0] and "0.1073 (0.10x #1)" in rows[1]


def test_a_dense_models_costs_are_exactly_the_flat_formula(cli):
    status, out, _ = cli("--model", "8B", "--gpu", "h100", "--gpus", "16", "--maximize", "len", "--top", "5", "--json")
    [answer] = json.loads(out)
    assert status == 0
    for plan in answer["plans"]:
        assert plan["cost"] == float(Fraction(1, plan["gpus"]) * (1 + plan["offload"])
                                     * (1 + Fraction(1, 10) * (plan["sp"] - 1)) * (1 + Fraction(1, 100) * plan["env"]))
    assert [p["cost"] for p in answer["plans"]] == [0.214625, 0.42925, 0.1073125, 0.214625, 0.6565]


def test_weights_of_ones_own_scale_offloads_weight_by_the_ratio(cli, tmp_path: Path):
    weights = tmp_path / "weights.yaml"
    weights.write_text("offload: 0.5\nsp: 0.1\nenv: 0.0\n", encoding="utf-8")
    for model, ratio in (("30B-A3B", MOE_RATIO), ("8B", Fraction(1))):
        status, out, _ = cli("--model", model, "--gpu", "h100", "--gpus", "8", "--len", "32k", "--offload",
                             "--sp", "2", "--exact", "--weights", str(weights), "--json")
        [answer] = json.loads(out)
        assert status == 0 and [p["cost"] for p in answer["plans"]] == [
            float(Fraction(1, 8) * (1 + Fraction(1, 2) * ratio) * Fraction(11, 10))], model


def _placed(instance: dict[str, Any], tmp_path: Path) -> dict[str, tuple[int, bool, int]]:
    """Each job's trainer GPUs, Offload and SP as `place` puts them, checked by the reference placer and at its
    optimum."""
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(instance), encoding="utf-8")
    result = json.loads(solver.place(path).model_dump_json())
    assert check_placements(CATALOG, instance, result, estimates=True) == []
    assert value_of(CATALOG, instance, result) == best_value(CATALOG, instance, estimates=True)
    return {p["job"]: (p["trainer_gpus"], p["plan"]["offload"], p["plan"]["sp"]) for p in result["placements"]}


def test_the_cluster_spares_the_mixture_of_experts_offload_before_a_dense_job(tmp_path: Path):
    # 24 H100s for Qwen3-30B-A3B at 32768 and Qwen3-32B at 65536: each trains on 16 without Offload or on 8 with it.
    # Offload costs the MoE 1.41 on 8 against 0.08 on 16; the 32B, 0.33 against 0.11: the MoE takes the 16 (with a
    # flat 2x, 0.28 against 0.08 for the MoE, so the 32B took them).
    instance = {"pools": [{"name": "h100", "gpu": "H100-80GB", "nodes": 3, "gpus_per_node": 8}],
                "jobs": [{"name": "moe", "model": "Qwen3-30B-A3B", "max_model_len": 32768, "rollout_gpus": 0},
                         {"name": "dense", "model": "Qwen3-32B", "max_model_len": 65536, "rollout_gpus": 0}]}
    assert _placed(instance, tmp_path) == {"moe": (16, False, 4), "dense": (8, True, 4)}


def test_a_mixture_of_experts_holding_no_more_than_its_idle_experts_is_refused(tmp_path: Path):
    # Its active parameters would be none or fewer, and Offload's scale undefined: refused as the catalogue loads.
    shutil.copytree(shipped_tables_directory(), tmp_path, dirs_exist_ok=True)
    models = (tmp_path / "models.yaml").read_text(encoding="utf-8")
    assert models.count("    parameters_b: 30.5\n") == 4
    (tmp_path / "models.yaml").write_text(models.replace("    parameters_b: 30.5\n", "    parameters_b: 27.0\n"),
                                          encoding="utf-8")
    with pytest.raises(TableError) as refused:
        solver.load_catalog(tmp_path)
    message = str(refused.value)
    assert "\n" not in message and message.startswith(
        f"{tmp_path / 'models.yaml'}: model Qwen3-30B-A3B: parameters_b 27.0 is not more than its idle experts' "
        "27.18B parameters (the gated MLPs of the experts a token does not take): give every parameter the model "
        "holds, its experts' too")
