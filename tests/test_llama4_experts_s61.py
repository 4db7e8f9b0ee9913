"""Llama 4's experts as transformers runs them (s61): ``Llama4TextMoe`` (modeling_llama4.py) passes every token through
every expert, the ones its router did not choose with a weight of 0, so its recompute and one expert layer's peak
count every expert's width and routed copies, not the active one's; every other model's answers stay as they were."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from solver.memory import (
    GIB,
    PER_TOKEN_TERMS,
    Setting,
    breakdown,
    feed_forward_peak_bytes,
    layer_peak_bytes,
    token_features,
    token_floor_gib,
)
from solver.tables import load_catalog, load_memory_model, load_model_config
from solver.tables.schema import Model

CATALOG = load_catalog()
COEFFICIENTS = load_memory_model().coefficients
CONFIGS = Path(__file__).parent / "data" / "hf-configs"
SCOUT = {
    "model_type": "llama4_text", "vocab_size": 202048, "hidden_size": 5120, "intermediate_size": 8192,
    "intermediate_size_mlp": 16384, "num_hidden_layers": 48, "num_attention_heads": 40, "num_key_value_heads": 8,
    "head_dim": 128, "max_position_embeddings": 131072, "tie_word_embeddings": False, "num_experts_per_tok": 1,
    "num_local_experts": 16, "interleave_moe_layer_step": 1}
"""transformers' ``Llama4TextConfig`` defaults: Llama-4-Scout's text model (16 experts, one a token, in every layer)."""
MAVERICK = {**SCOUT, "num_local_experts": 128, "interleave_moe_layer_step": 2}
"""Llama-4-Maverick's text model: 128 experts in every other layer, the others dense, 16384 wide."""
ATTENTION_BYTES = 20 * 5120 + 14 * 40 * 128 + 14 * 8 * 128
"""Both models' layer peak besides the feed-forward: the norms (20 x hidden), 40 query heads and 8 key heads of 128."""


def _read(folder: Path, config: dict[str, object]) -> Model:
    """`config` written as `folder`/config.json and read."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return load_model_config(folder)


def test_llama4_text_computes_every_expert_and_hunyuan_of_its_shape_routes(tmp_path: Path):
    scout = _read(tmp_path / "scout", SCOUT)
    assert scout.moe is not None and scout.moe.computes_every_expert is True
    assert (scout.moe.computed_experts, scout.moe.active_experts) == (16, 1)
    # Hunyuan-MoE's class holds the same layout (routed experts and one ungated shared one, intermediate_size wide)
    # but routes each token to its chosen experts: the same parameters, the active expert's width, another shape.
    llama4_only = ("num_local_experts", "num_experts_per_tok", "intermediate_size_mlp", "interleave_moe_layer_step")
    hunyuan = _read(tmp_path / "hunyuan", {
        **{key: value for key, value in SCOUT.items() if key not in llama4_only},
        "model_type": "hunyuan_v1_moe", "num_experts": 16, "moe_topk": 1})
    assert hunyuan.moe is not None and hunyuan.moe.computes_every_expert is False
    assert hunyuan.moe.computed_experts == 1 and hunyuan.moe.routed_width == 8192 + 8192
    assert hunyuan.parameters_b == scout.parameters_b
    differing = [term for term, (mine, theirs) in enumerate(zip(scout.shape, hunyuan.shape, strict=True))
                 if mine != theirs]
    # The width a token passes through (a config's MoE reads as its feed-forward width) and the experts' terms.
    assert differing == [5, 8]
    assert (scout.shape[5], hunyuan.shape[5]) == (139264, 16384)
    assert (scout.shape[8], hunyuan.shape[8]) == ((16, 1, 8192, 8192, True), (16, 1, 8192, 8192))


def test_scouts_per_token_terms_count_all_16_experts_by_hand(tmp_path: Path):
    model = _read(tmp_path, SCOUT)
    assert model.moe is not None
    # All 16 experts' 8192 and the shared expert's: 16 x 8192 + 8192 wide, where routing would pass 1 x 8192 + 8192.
    assert model.moe.routed_width == model.moe.ffn_width == 16 * 8192 + 8192 == 139264
    # recompute: 2 bytes per hidden and feed-forward width a token.
    assert token_features(model, 1, Setting(), 1)["recompute"] * GIB == 2 * (5120 + 139264) == 288768
    # The layer peak: 12 bytes per width, and the hidden state repeated for the 16 experts and that copy scaled by
    # its router score, bf16, both kept for the backward (4 x 16 x 5120).
    assert feed_forward_peak_bytes(model) == 12 * 139264 + 4 * 16 * 5120 == 1998848
    assert layer_peak_bytes(model) == ATTENTION_BYTES + 1998848 == 2187264
    # It outweighs the logits' 7 bytes per logit (1414336), so the floor is the checkpoints and the layer peak.
    assert 7 * 202048 == 1414336
    assert token_floor_gib(model, 2048) == 2048 * (2 * 5120 * 49 + 2187264) / GIB


def test_mavericks_per_token_terms_count_all_128_experts_by_hand(tmp_path: Path):
    model = _read(tmp_path, MAVERICK)
    assert model.moe is not None and (model.moe.dense_layers, model.moe.dense_intermediate_size) == (24, 16384)
    # 128 x 8192 + 8192 outweighs the dense layers' 16384.
    assert model.moe.routed_width == model.moe.ffn_width == 128 * 8192 + 8192 == 1056768
    assert token_features(model, 1, Setting(), 1)["recompute"] * GIB == 2 * (5120 + 1056768) == 2123776
    assert feed_forward_peak_bytes(model) == 12 * 1056768 + 4 * 128 * 5120 == 15302656
    assert layer_peak_bytes(model) == ATTENTION_BYTES + 15302656 == 15491072
    assert token_floor_gib(model, 2048) == 2048 * (2 * 5120 * 49 + 15491072) / GIB


def test_scouts_estimate_rises_to_its_floor(tmp_path: Path):
    model = _read(tmp_path, SCOUT)
    setting = Setting(env=True, sp=8)
    after = breakdown(model, 140.4, 16, setting, 8192, COEFFICIENTS)
    assert after.tokens_per_gpu == 2048
    assert after.terms["recompute"] == 2 * 2048 * (5120 + 139264) * COEFFICIENTS.recompute / GIB
    assert sum(after.terms[term] for term in PER_TOKEN_TERMS) == pytest.approx(
        2048 * (2 * 5120 * 49 + 2187264) / GIB, rel=1e-12)
    assert after.total_gib == pytest.approx(128.67838653229853, rel=1e-12)
    # Counted as a routing class would run it (the active expert only), it was 127.23 GiB, as before this change.
    assert model.moe is not None
    routing = model.model_copy(update={"moe": model.moe.model_copy(update={"computes_every_expert": False})})
    before = breakdown(routing, 140.4, 16, setting, 8192, COEFFICIENTS)
    assert before.total_gib == pytest.approx(127.23161668317742, rel=1e-12)


def test_solve_memory_for_scout_before_and_after(tmp_path: Path, cli: Callable[..., tuple[int, str, str]]):
    # Before (the active expert's width): checkpoints 0.59, recompute 0.08, total 127.23 GiB, 1.82 GiB to spare,
    # and 11264 tokens the longest length that fits. After: the floor's layer peak binds.
    _read(tmp_path / "scout", SCOUT)
    status, out, err = cli("memory", "--model-config", str(tmp_path / "scout"), "--gpu", "h200", "--gpus", "16",
                           "--len", "8192", "--sp", "8", "--env")
    assert status == 0 and err.startswith("solve memory: note: scout passes every token through all 16 of its experts")
    rows = {line.split("│")[1].strip(): line.split("│")[2].strip() for line in out.splitlines() if "│" in line}
    shown = (rows["checkpoints"], rows["logits"], rows["recompute"], rows["total"])
    assert shown == ("1.57", "3.01", "0.55", "128.68")
    assert "fits (estimated): 0.38 GiB to spare of the usable memory" in out
    assert "longest length the memory model fits with this setting: 8192 tokens (on a 1024-token grid)" in out


def test_a_qwen3_moe_and_a_dense_model_are_unchanged():
    a3b, dense = CATALOG.model("30B-A3B"), CATALOG.model("8B")
    assert a3b.moe is not None and a3b.moe.computes_every_expert is False
    assert (a3b.moe.computed_experts, a3b.moe.routed_width, layer_peak_bytes(a3b)) == (8, 8 * 768, 244736)
    assert layer_peak_bytes(dense) == 301056
    # Totals as the code before this change gave them.
    assert breakdown(a3b, 140.4, 8, Setting(env=True, sp=4), 105472, COEFFICIENTS).total_gib == pytest.approx(
        131.41052533422476, rel=1e-12)
    assert breakdown(dense, 79.6, 2, Setting(env=True), 32768, COEFFICIENTS).total_gib == pytest.approx(
        152.80278573080798, rel=1e-12)
    read = load_model_config(CONFIGS / "Qwen3-30B-A3B.json")
    assert read.moe is not None and read.moe.computes_every_expert is False and read.shape == a3b.shape


def test_offload_costs_llama4_as_a_dense_model_since_its_compute_passes_through_every_expert(tmp_path: Path):
    # Offload's cost scales with the parameters held per parameter computed with: transformers computes Llama 4's
    # every expert for every token, so that is 1, as for a dense model, not Scout's 6.3 held per active.
    scout = _read(tmp_path / "scout", SCOUT)
    assert scout.held_per_active == 1 and scout.parameters_b / scout.active_parameters_b > 6
    hunyuan = _read(tmp_path / "hunyuan", {
        **{key: value for key, value in SCOUT.items()
           if key not in ("num_local_experts", "num_experts_per_tok", "intermediate_size_mlp",
                          "interleave_moe_layer_step")},
        "model_type": "hunyuan_v1_moe", "num_experts": 16, "moe_topk": 1})
    assert float(hunyuan.held_per_active) == pytest.approx(hunyuan.parameters_b / hunyuan.active_parameters_b)
    assert hunyuan.held_per_active > 6
