"""DeepSeek-style configs read by --model-config: latent attention (MLA), dense first layers, shared experts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from solver.memory import GIB, Setting, breakdown, layer_peak_bytes, rollout_engines, weight_shapes
from solver.tables import TableError, load_catalog, load_memory_model, load_model_config, sp_rule_violation
from solver.tables.schema import MLA, Model, MoE

CATALOG = load_catalog()

DEEPSEEK_V2_LITE = {
    "_name_or_path": "deepseek-ai/DeepSeek-V2-Lite", "model_type": "deepseek_v2", "hidden_size": 2048,
    "intermediate_size": 10944, "moe_intermediate_size": 1408, "num_hidden_layers": 27, "num_attention_heads": 16,
    "num_key_value_heads": 16, "n_routed_experts": 64, "n_shared_experts": 2, "num_experts_per_tok": 6,
    "first_k_dense_replace": 1, "moe_layer_freq": 1, "q_lora_rank": None, "kv_lora_rank": 512,
    "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "vocab_size": 102400,
    "tie_word_embeddings": False, "max_position_embeddings": 163840,
    "rope_scaling": {"type": "yarn", "factor": 40, "original_max_position_embeddings": 4096, "beta_fast": 32,
                     "beta_slow": 1, "mscale": 0.707, "mscale_all_dim": 0.707}}
"""DeepSeek-V2-Lite's shape as its published config.json gives it."""
DEEPSEEK_MOE_16B = {
    "_name_or_path": "deepseek-ai/deepseek-moe-16b-base", "model_type": "deepseek", "hidden_size": 2048,
    "intermediate_size": 10944, "moe_intermediate_size": 1408, "num_hidden_layers": 28, "num_attention_heads": 16,
    "num_key_value_heads": 16, "n_routed_experts": 64, "n_shared_experts": 2, "num_experts_per_tok": 6,
    "first_k_dense_replace": 1, "moe_layer_freq": 1, "vocab_size": 102400, "tie_word_embeddings": False,
    "max_position_embeddings": 4096}
"""DeepSeek-MoE-16B's shape as its published (remote-code) config.json gives it: attention of 16 heads of 128."""
TINY_V3 = {
    "model_type": "deepseek_v3", "hidden_size": 64, "intermediate_size": 96, "moe_intermediate_size": 16,
    "num_hidden_layers": 4, "num_attention_heads": 4, "n_routed_experts": 8, "n_shared_experts": 1,
    "num_experts_per_tok": 2, "first_k_dense_replace": 2, "q_lora_rank": 24, "kv_lora_rank": 32,
    "qk_nope_head_dim": 16, "qk_rope_head_dim": 8, "v_head_dim": 12, "vocab_size": 1000, "tie_word_embeddings": True,
    "max_position_embeddings": 4096, "num_nextn_predict_layers": 0}
"""A small DeepSeek-V3-style config: a query latent, two dense layers of four, tied embeddings, no MTP layer."""
TINY_GLM4_MOE = {
    "model_type": "glm4_moe", "hidden_size": 64, "intermediate_size": 200, "moe_intermediate_size": 16,
    "num_hidden_layers": 3, "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 32, "n_routed_experts": 8,
    "n_shared_experts": 1, "num_experts_per_tok": 2, "first_k_dense_replace": 1, "vocab_size": 1000,
    "max_position_embeddings": 4096}
"""A small GLM-4-MoE-style config: grouped-query attention, a dense first layer wider than the experts' path."""


def _config(tmp_path: Path, config: dict[str, object], **changes: object) -> Path:
    """`config` with `changes` (a key changed to ``...`` left out) written as ``config.json`` under `tmp_path`."""
    path = tmp_path / "config.json"
    changed = {key: value for key, value in {**config, **changes}.items() if value is not ...}
    path.write_text(json.dumps(changed), encoding="utf-8")
    return path


def _weights(model: Model) -> int:
    """The values of the weight tensors FSDP2 shards (`weight_shapes`)."""
    return sum(rows * columns * count for rows, columns, count in weight_shapes(model))


def test_deepseek_v2_lite_counts_its_latent_attention_dense_layer_and_shared_experts(tmp_path: Path):
    # Per layer, the latent attention: q_proj (2048 x 16 x 192, no query latent), kv_a_proj_with_mqa (2048 x (512 +
    # 64)), kv_a_layernorm (512), kv_b_proj (512 x 16 x (128 + 128)), o_proj (16 x 128 x 2048); two RMSNorms. The
    # first layer's MLP is dense (10944 wide); the other 26 hold 64 experts of 1408 with their router rows and two
    # shared experts, one ungated MLP 2 x 1408 wide. Untied embeddings of 102400 and the final norm.
    model = load_model_config(_config(tmp_path, DEEPSEEK_V2_LITE))
    attention = 2048 * 16 * 192 + 2048 * 576 + 512 + 512 * 16 * 256 + 16 * 128 * 2048
    experts = 64 * (3 * 2048 * 1408 + 2048) + 3 * 2048 * 2816
    total = 27 * (attention + 2 * 2048) + 3 * 2048 * 10944 + 26 * experts + 2 * 102400 * 2048 + 2048
    assert attention == 13763072 and total == 15706484224
    assert model.parameters_b * 1e9 == pytest.approx(total)
    # Active: all but the 58 idle experts of each of the 26 MoE layers. The card says 15.7B and 2.4B: DeepSeek counts
    # active parameters without the input embeddings (2.66 - 0.21 = 2.45).
    assert model.active_parameters_b * 1e9 == pytest.approx(total - 26 * 58 * 3 * 2048 * 1408)
    assert (round(model.parameters_b, 2), round(model.active_parameters_b, 2)) == (15.71, 2.66)
    assert model.mla == MLA(q_lora_rank=0, kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64,
                            v_head_dim=128)
    assert model.moe == MoE(experts=64, active_experts=6, moe_intermediate_size=1408,
                            shared_expert_intermediate_size=2816, shared_expert_gate=False, dense_layers=1,
                            dense_intermediate_size=10944)
    # Every head its own key and value after decompression: 16 KV heads, each query and key 192 wide.
    assert (model.num_attention_heads, model.num_key_value_heads, model.head_size) == (16, 16, 192)
    # Its widest layer path: 6 experts and the shared ones (6 x 1408 + 2816 = 11264), wider than the dense 10944.
    assert model.intermediate_size == 11264
    assert model.name == "DeepSeek-V2-Lite" and model.unchecked_layout is None
    assert _weights(model) == total
    # Its YaRN (factor 40 over 4096, its attention scaled by mscale_all_dim) is its own: its context is 163840, and
    # no factor is written over it.
    assert (model.native_context, model.rope_scaling, model.yarn_factor(65536)) == (163840, "yarn", None)


def test_deepseek_moe_16b_counts_its_dense_layer_and_shared_experts(tmp_path: Path):
    # Attention of 4 x 2048 x 2048 per layer, one dense layer 10944 wide, 27 MoE layers as DeepSeek-V2-Lite's.
    model = load_model_config(_config(tmp_path, DEEPSEEK_MOE_16B))
    experts = 64 * (3 * 2048 * 1408 + 2048) + 3 * 2048 * 2816
    total = 28 * (4 * 2048 * 2048 + 2 * 2048) + 3 * 2048 * 10944 + 27 * experts + 2 * 102400 * 2048 + 2048
    assert model.parameters_b * 1e9 == pytest.approx(total)
    # The card's 16.4B and 2.8B.
    assert (round(model.parameters_b, 2), round(model.active_parameters_b, 2)) == (16.38, 2.83)
    assert (model.mla, model.head_size, model.num_key_value_heads) == (None, 128, 16)
    assert _weights(model) == total + 28 * 2 * 128  # and Qwen3's query and key norms, which it has not (0.0004%)


def test_a_deepseek_v3_style_config_with_a_query_latent_is_counted_by_hand(tmp_path: Path):
    model = load_model_config(_config(tmp_path, TINY_V3))
    # q_a_proj 64 x 24, q_a_layernorm 24, q_b_proj 24 x 4 x 24, kv_a_proj_with_mqa 64 x (32 + 8), kv_a_layernorm
    # 32, kv_b_proj 32 x 4 x (16 + 12), o_proj 4 x 12 x 64.
    attention = 64 * 24 + 24 + 24 * 96 + 64 * 40 + 32 + 32 * 112 + 48 * 64
    assert attention == 13112
    experts = 8 * (3 * 64 * 16 + 64) + 3 * 64 * 16  # 8 routed experts with the router, one shared expert
    total = 4 * (attention + 2 * 64) + 2 * 3 * 64 * 96 + 2 * experts + 1000 * 64 + 64
    assert model.parameters_b * 1e9 == pytest.approx(total)
    assert model.active_parameters_b * 1e9 == pytest.approx(total - 2 * 6 * 3 * 64 * 16)
    assert (model.head_size, model.num_key_value_heads, model.tied_embeddings) == (24, 4, True)
    assert _weights(model) == total
    # DeepSeek-V3's own shape (its bf16 weights, without the MTP layer): 671B and 37B active, as its card says.
    v3 = {"hidden_size": 7168, "intermediate_size": 18432, "moe_intermediate_size": 2048, "num_hidden_layers": 61,
          "num_attention_heads": 128, "n_routed_experts": 256, "num_experts_per_tok": 8, "first_k_dense_replace": 3,
          "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
          "v_head_dim": 128, "vocab_size": 129280, "tie_word_embeddings": False}
    full = load_model_config(_config(tmp_path, TINY_V3, **v3))
    assert (round(full.parameters_b), round(full.active_parameters_b)) == (671, 38)
    assert round(full.active_parameters_b, 2) == 37.55


def test_a_glm4_moe_style_config_is_counted_by_hand(tmp_path: Path):
    model = load_model_config(_config(tmp_path, TINY_GLM4_MOE))
    attention = 64 * 32 * (2 * 8 + 2 * 2)
    experts = 8 * (3 * 64 * 16 + 64) + 3 * 64 * 16
    total = 3 * (attention + 2 * 64) + 3 * 64 * 200 + 2 * experts + 2 * 1000 * 64 + 64  # untied, as its class says
    assert model.parameters_b * 1e9 == pytest.approx(total)
    assert model.active_parameters_b * 1e9 == pytest.approx(total - 2 * 6 * 3 * 64 * 16)
    # The dense layer's 200 is wider than 2 experts and the shared one (48): one layer's recompute and peak take it.
    assert model.intermediate_size == 200 and model.moe is not None and model.moe.ffn_width == 200
    assert layer_peak_bytes(model) == 20 * 64 + 14 * 8 * 32 + 14 * 2 * 32 + 12 * 200
    # GLM-4.5-Air's shape (without its MTP layer): 106.85B and 13.42B active (12.2B without the embeddings; its card
    # says 106B and 12B).
    air = {"hidden_size": 4096, "intermediate_size": 10944, "moe_intermediate_size": 1408, "num_hidden_layers": 46,
           "num_attention_heads": 96, "num_key_value_heads": 8, "head_dim": 128, "n_routed_experts": 128,
           "num_experts_per_tok": 8, "vocab_size": 151552}
    full = load_model_config(_config(tmp_path, TINY_GLM4_MOE, **air))
    assert (round(full.parameters_b, 2), round(full.active_parameters_b, 2)) == (106.85, 13.42)


def test_latent_attention_widens_one_layers_peak_by_its_latents(tmp_path: Path):
    # 20 h, 14 bytes per query width and per key width (16 heads of 192 each, the values padded to the keys'), 12 per
    # feed-forward width (11264), 4 per hidden width for each of the 6 experts a token is routed to (its copies in and
    # out), and 8 per latent width (no query latent; 512 + 64).
    model = load_model_config(_config(tmp_path, DEEPSEEK_V2_LITE))
    assert layer_peak_bytes(model) == 20 * 2048 + 14 * 3072 + 14 * 3072 + 12 * 11264 + 4 * 6 * 2048 + 8 * 576 == 315904
    with_query_latent = load_model_config(_config(tmp_path, DEEPSEEK_V2_LITE, q_lora_rank=1536))
    assert layer_peak_bytes(with_query_latent) == 315904 + 8 * 1536


def test_latent_attention_sp_splits_its_attention_heads(tmp_path: Path):
    # Ulysses splits heads: after decompression each of the 16 heads has its key and value, so SP must divide 16 and
    # the KV-head rule holds with it.
    model = load_model_config(_config(tmp_path, DEEPSEEK_V2_LITE))
    heads, kv_heads = model.num_attention_heads, model.num_key_value_heads
    allowed = [sp for sp in range(1, 33) if not sp_rule_violation(heads, kv_heads, sp)]
    assert allowed == [1, 2, 4, 8, 16]


def test_a_latent_attention_rollout_caches_its_latent(tmp_path: Path):
    # vLLM caches the 512-wide latent and the 64-wide RoPE key, bf16, whole on each GPU of an engine: 2 x 27 x 576
    # bytes a token.
    model = load_model_config(_config(tmp_path, DEEPSEEK_V2_LITE))
    engines = rollout_engines(model, 80, 8, 32768)
    assert engines.kv_cache_gib == pytest.approx(2 * 27 * 576 * 32768 / GIB)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        # DeepSeek-V2's class declares no MTP layers (V3's, GLM-4.5's and ERNIE-4.5's are read: test_moe_layouts.py).
        ({"num_nextn_predict_layers": 1},
         (r"num_nextn_predict_layers 1: multi-token prediction layers, which this model_type's class does not "
          r"declare \(DeepSeek-V3's, GLM-4.5's and ERNIE-4.5's are read, their weights not loaded\): set it to 0$")),
        ({"quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}},
         (r"quantization_config \{.*: quantized weights \(DeepSeek-V3's fp8\), which transformers loads frozen \(its "
          r"FP8 layers pass no gradient to their weights, integrations/finegrained_fp8.py\)")),
        ({"moe_layer_freq": 2}, "moe_layer_freq 2: some layers dense, the others mixtures of experts"),
        ({"first_k_dense_replace": 27},
         r"first_k_dense_replace: expected a whole number from 0 to 26 \(fewer than num_hidden_layers\), got 27$"),
        ({"first_k_dense_replace": True}, "first_k_dense_replace: expected a whole number from 0 to 26"),
        ({"num_key_value_heads": 8},
         (r"num_key_value_heads 8: multi-head latent attention decompresses keys and values into every one of "
          r"num_attention_heads \(16\); give 16 or leave it out$")),
        ({"qk_rope_head_dim": None}, r"missing qk_rope_head_dim: a model's config.json gives it"),
        ({"q_lora_rank": 0}, r"q_lora_rank: expected a whole number from 1 to 65536, got 0$"),
        # Keys whose transformers defaults would apply where they are missing: refused, not read as none.
        ({"kv_lora_rank": None}, r"missing kv_lora_rank: a model's config.json gives it"),
        ({"q_lora_rank": ...}, (r"missing q_lora_rank: a deepseek_v2 config gives it, null for a full query projection "
                                r"\(its class's default, 1536, would apply\)$")),
        ({"n_shared_experts": ...}, r"missing n_shared_experts: a deepseek_v2 config gives it \(0 for none; the "),
        ({"first_k_dense_replace": ...}, "missing first_k_dense_replace: a deepseek_v2 config gives it"),
        ({"n_shared_experts": 1.5}, "n_shared_experts: expected a whole number from 1"),
        ({"intermediate_size": None}, "missing intermediate_size"),  # the dense layer's width
        ({"model_type": "minicpm3"}, r"kv_lora_rank: multi-head latent attention \(MiniCPM3's\)"),
    ],
)
def test_what_a_deepseek_config_cannot_be_counted_by_is_refused(tmp_path: Path, changes: dict[str, object],
                                                                message: str):
    with pytest.raises(TableError, match=message):
        load_model_config(_config(tmp_path, DEEPSEEK_V2_LITE, **changes))


def test_solve_memory_breaks_deepseek_v2_lite_down_by_hand(cli, tmp_path: Path):
    # 8 H100s, Env and SP=2 at 32768 tokens: T = 32768 a GPU. Each term from first principles, times the shipped
    # coefficient: states 16 bytes a parameter over 8 GPUs; gathered the two embedding matrices' 4 bytes a value and
    # 10 bytes per parameter of the largest layer, an expert layer (the mean per layer, and what its 64 experts with
    # their router rows and its shared experts hold beyond the one dense layer's MLP, spread over the 27); checkpoints
    # a 2048-wide bf16 state per layer; fp32 logits over 102400; recompute one layer of 2048 + 11264; SP buffers
    # 2048 wide; no fragmentation with Env. The per-token terms clear their floor (T x (2 x 2048 x 28 + 7 x 102400)
    # bytes, 25.375 GiB).
    _config(tmp_path, DEEPSEEK_V2_LITE)
    status, out, _ = cli("memory", "--model-config", str(tmp_path), "--gpu", "h100", "--gpus", "8", "--len", "32768",
                         "--env", "--sp", "2", "--json")
    answer = json.loads(out)
    parameters, embeddings, tokens = 15706484224, 102400 * 2048, 32768
    beyond_dense = 64 * (3 * 2048 * 1408 + 2048) + 3 * 2048 * 2816 - 3 * 2048 * 10944
    raw = {"states": 16 * parameters / 8,
           "gathered": 4 * embeddings + 10 * (parameters - 2 * embeddings + beyond_dense) / 27,
           "checkpoints": 2 * tokens * 2048 * 27, "logits": 4 * tokens * 102400,
           "recompute": 2 * tokens * (2048 + 11264), "sp_buffers": 2 * tokens * 2048, "fragmentation": 0,
           "overhead": GIB}
    coefficients = load_memory_model().coefficients
    expected = {term: raw[term] / GIB * coefficients.multiplier(term) for term in raw}
    assert sum(expected[term] for term in ("checkpoints", "logits", "recompute")) > tokens * (114688 + 716800) / GIB
    assert status == 0 and answer["model"] == "DeepSeek-V2-Lite"
    assert answer["terms"] == pytest.approx(expected, abs=1e-4)
    assert answer["total_gib"] == pytest.approx(sum(expected.values()), abs=1e-4)
    memory = CATALOG.gpu("h100").memory_gib
    assert answer["usable_gib"] == pytest.approx(memory * coefficients.usable_env * 0.99, abs=1e-4)
    assert (answer["model_parameters_b"], answer["model_active_parameters_b"]) == (15.706, 2.661)
    # Estimated, and labelled so: a mixture of experts rests on the dense models' calibration.
    assert "mixture-of-experts" in answer["beyond_calibration_codes"] and answer["tables"] is None
    assert answer["cautions"] == []  # 32768 tokens within its own YaRN's 163840
    assert breakdown(load_model_config(tmp_path), memory, 8, Setting(env=True, sp=2), 32768, coefficients,
                     0.01).fits == answer["fits"] is True


def test_solve_memory_reads_deepseek_v3s_mtp_layer_uncounted_with_a_note(cli, tmp_path: Path):
    # transformers' DeepseekV3 class builds num_hidden_layers layers and ignores the MTP layer's weights on load
    # (modeling_deepseek_v3.py, _keys_to_ignore_on_load_unexpected): the same estimate as without it, and a note.
    _config(tmp_path, TINY_V3)
    args = ("memory", "--model-config", str(tmp_path), "--gpu", "h100", "--gpus", "8", "--len", "8192", "--json")
    status, without, err = cli(*args)
    assert (status, err) == (0, "")
    _config(tmp_path, TINY_V3, num_nextn_predict_layers=1)
    assert load_model_config(tmp_path).uncounted_mtp_layers == 1
    status, out, err = cli(*args)
    assert (status, out) == (0, without)
    assert err == (f"solve memory: note: {tmp_path.name} declares 1 multi-token prediction layer "
                   "(num_nextn_predict_layers), not counted: transformers' class does not load their weights, so "
                   "verl's FSDP trainer holds none of them (verl's Megatron trainer with model.mtp.enable would)\n")
