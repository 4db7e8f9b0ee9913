"""ERNIE-4.5-MoE's, Hunyuan-MoE's and Llama 4 text's layouts read by --model-config, as transformers 5.25's classes
lay them out (modeling_ernie4_5_moe.py, modeling_hunyuan_v1_moe.py, modeling_llama4.py), and their multi-token
prediction layers, which transformers does not load; gpt-oss's and MiniMax-M2's, as transformers 5.9.0's classes lay
them out (modeling_gpt_oss.py, modeling_minimax_m2.py), and AFMoE's, refused."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from solver.memory import lora_parameters
from solver.tables import TableError, load_model_config
from solver.tables.peft_match import peft_target_refusal
from solver.tables.schema import Model, MoE

ERNIE_DEFAULTS = {
    "model_type": "ernie4_5_moe", "vocab_size": 103424, "hidden_size": 2560, "intermediate_size": 12288,
    "num_hidden_layers": 28, "num_attention_heads": 20, "num_key_value_heads": 4, "max_position_embeddings": 131072,
    "tie_word_embeddings": True, "moe_intermediate_size": 1536, "moe_k": 6, "moe_num_experts": 64,
    "moe_num_shared_experts": 2, "moe_layer_start_index": 1, "moe_layer_end_index": -1, "moe_layer_interval": 1}
"""transformers' ``Ernie4_5_MoeConfig`` defaults (configuration_ernie4_5_moe.py): ERNIE-4.5-21B-A3B's shape."""
HUNYUAN_DEFAULTS = {
    "model_type": "hunyuan_v1_moe", "vocab_size": 290943, "hidden_size": 4096, "intermediate_size": 11008,
    "num_hidden_layers": 32, "num_attention_heads": 32, "max_position_embeddings": 2048, "tie_word_embeddings": False,
    "num_experts": 1, "moe_topk": 1}
"""transformers' ``HunYuanMoEV1Config`` defaults (configuration_hunyuan_v1_moe.py): one routed expert, top-1."""
LLAMA4_TEXT_DEFAULTS = {
    "model_type": "llama4_text", "vocab_size": 202048, "hidden_size": 5120, "intermediate_size": 8192,
    "intermediate_size_mlp": 16384, "num_hidden_layers": 48, "num_attention_heads": 40, "num_key_value_heads": 8,
    "head_dim": 128, "max_position_embeddings": 131072, "tie_word_embeddings": False, "num_experts_per_tok": 1,
    "num_local_experts": 16, "interleave_moe_layer_step": 1}
"""transformers' ``Llama4TextConfig`` defaults (configuration_llama4.py): Llama-4-Scout's text model's shape."""

GPT_OSS_20B = {
    "model_type": "gpt_oss", "_name_or_path": "openai/gpt-oss-20b", "vocab_size": 201088, "hidden_size": 2880,
    "intermediate_size": 2880, "num_hidden_layers": 24, "num_attention_heads": 64, "num_key_value_heads": 8,
    "max_position_embeddings": 131072, "num_local_experts": 32, "num_experts_per_tok": 4, "sliding_window": 128,
    "layer_types": ["sliding_attention", "full_attention"] * 12, "attention_bias": True, "rope_theta": 150000,
    "rope_scaling": {"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0, "truncate": False,
                     "original_max_position_embeddings": 4096}}
"""openai/gpt-oss-20b's config.json as published, less its mxfp4 ``quantization_config`` (the bf16 checkpoints') and
its ``head_dim`` (64) and ``tie_word_embeddings`` (false), which ``GptOssConfig``'s defaults give."""
MINIMAX_M2 = {
    "model_type": "minimax_m2", "_name_or_path": "MiniMaxAI/MiniMax-M2", "vocab_size": 200064, "hidden_size": 3072,
    "intermediate_size": 1536, "num_hidden_layers": 62, "num_attention_heads": 48, "num_key_value_heads": 8,
    "max_position_embeddings": 196608, "num_local_experts": 256, "num_experts_per_tok": 8, "rope_theta": 5000000,
    "shared_intermediate_size": 0, "use_qk_norm": True, "scoring_func": "sigmoid", "rotary_dim": 64}
"""MiniMaxAI/MiniMax-M2's config.json as published, less its fp8 ``quantization_config``, its ``head_dim`` (128, not
3072 / 48 = 64) and ``tie_word_embeddings`` (false), which ``MiniMaxM2Config``'s defaults give; its ``rotary_dim``
(64) as its model card gives it (read from the card, no network here), which vLLM 0.19.1's class needs."""


def _read(tmp_path: Path, config: dict[str, object], **changes: object) -> Model:
    """`config` with `changes` (a key changed to ``...`` left out), written as a config.json and read."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps({key: value for key, value in {**config, **changes}.items() if value is not ...}),
                    encoding="utf-8")
    return load_model_config(path)


def test_ernies_defaults_count_a_dense_first_layer_and_two_ungated_shared_experts(tmp_path: Path):
    model = _read(tmp_path, ERNIE_DEFAULTS)
    attention = 2560 * 128 * (2 * 20 + 2 * 4)
    expert_layer = 64 * (3 * 2560 * 1536 + 2560) + 3 * 2560 * (2 * 1536)  # experts with router rows, shared ones
    total = 28 * (attention + 2 * 2560) + 3 * 2560 * 12288 + 27 * expert_layer + 103424 * 2560 + 2560
    assert total == 21825436160  # its card: 21B total (21.8B in its safetensors), 3B active
    assert model.parameters_b * 1e9 == pytest.approx(total, abs=1)
    assert model.active_parameters_b == pytest.approx((total - 27 * 58 * 3 * 2560 * 1536) / 1e9)  # 3.35B
    assert model.moe == MoE(experts=64, active_experts=6, moe_intermediate_size=1536,
                            shared_expert_intermediate_size=3072, shared_expert_gate=False, dense_layers=1,
                            dense_intermediate_size=12288)
    assert (model.unchecked_layout, model.uncounted_mtp_layers, model.tied_embeddings) == (None, 0, True)


@pytest.mark.parametrize(("changes", "dense"), [
    ({"moe_layer_interval": 2}, 14),  # layers 1, 3, ..., 27 hold the experts
    ({"moe_layer_start_index": 0, "moe_layer_end_index": 9}, 18),  # layers 0 to 9
    ({"moe_layer_start_index": ..., "moe_layer_end_index": None, "moe_num_shared_experts": ...}, 1),  # the defaults
    ({"moe_layer_start_index": 0, "moe_layer_end_index": 27}, 0),
])
def test_ernies_expert_layers_follow_its_start_end_and_interval(
        tmp_path: Path, changes: dict[str, object], dense: int):
    moe = _read(tmp_path, ERNIE_DEFAULTS, **changes).moe
    assert moe is not None
    assert (moe.dense_layers, moe.dense_intermediate_size, moe.shared_expert_intermediate_size) == (
        dense, 12288 if dense else 0, 3072)


def test_mtp_layers_are_read_uncounted_for_ernie_and_glm(tmp_path: Path):
    # Ernie4_5_MoePreTrainedModel ignores "mtp" weights on load; Glm4MoePreTrainedModel layers 46 and 92.
    without = _read(tmp_path, ERNIE_DEFAULTS)
    model = _read(tmp_path, ERNIE_DEFAULTS, num_nextn_predict_layers=1)
    assert (model.parameters_b, model.uncounted_mtp_layers) == (without.parameters_b, 1)
    with pytest.raises(TableError, match="num_nextn_predict_layers: expected a whole number from 1 to 65536, got -1"):
        _read(tmp_path, ERNIE_DEFAULTS, num_nextn_predict_layers=-1)


def test_hunyuans_defaults_count_a_shared_expert_as_wide_as_the_routed_ones(tmp_path: Path):
    model = _read(tmp_path, HUNYUAN_DEFAULTS)
    mlp = 3 * 4096 * 11008
    total = 32 * (4096 * 128 * 4 * 32 + 2 * 4096 + (mlp + 4096) + mlp) + 2 * 290943 * 4096 + 4096
    assert total == 13188329472
    assert model.parameters_b * 1e9 == pytest.approx(total, abs=1)
    assert model.moe == MoE(experts=1, active_experts=1, moe_intermediate_size=11008,
                            shared_expert_intermediate_size=11008, shared_expert_gate=False)
    assert model.unchecked_layout is None


def test_hunyuan_a13bs_per_layer_lists_read_as_its_card_counts(tmp_path: Path):
    # Hunyuan-A13B's shape on the class's defaults: 64 experts 3072 wide, 8 a token, lists of one value per layer.
    model = _read(tmp_path, HUNYUAN_DEFAULTS, vocab_size=128167, intermediate_size=3072, num_key_value_heads=8,
                  num_experts=64, moe_topk=[8] * 32, moe_intermediate_size=[3072] * 32, num_shared_expert=[1] * 32,
                  tie_word_embeddings=True)
    mlp = 3 * 4096 * 3072
    total = 32 * (4096 * 128 * (64 + 16) + 2 * 4096 + 64 * (mlp + 4096) + mlp) + 128167 * 4096 + 4096
    assert (total, model.parameters_b * 1e9) == (80393175040, pytest.approx(total, abs=1))  # card: 80B total
    assert model.active_parameters_b == pytest.approx((total - 32 * 56 * mlp) / 1e9)  # 12.75B; card: 13B active


@pytest.mark.parametrize(("changes", "message"), [
    ({"num_experts": 64, "moe_topk": [8] * 31 + [2]},
     r"moe_topk: differs between layers \(8 and 2\); rft-solver counts one value for every layer$"),
    ({"moe_intermediate_size": 4096},
     (r"moe_intermediate_size 4096: transformers' hunyuan_v1_moe class builds its experts 11008 wide "
      r"\(intermediate_size\) whatever this says, so its checkpoint would not load$")),
    ({"num_shared_expert": [2] * 32}, "num_shared_expert .*: transformers' hunyuan_v1_moe class builds one shared"),
    ({"moe_topk": []}, r"moe_topk: expected a whole number, or one per layer, got \[\]$"),
    ({"num_experts": 64, "moe_topk": [8] * 31},  # the class takes moe_topk[layer_idx]: layer 31 would fail
     (r"moe_topk: 31 values for 32 layers: transformers' class takes each layer's by its index, so give one per "
      r"layer \(or one whole number\)$")),
    ({"num_experts": ...}, "missing the count of routed experts .*: model_type hunyuan_v1_moe is a mixture"),
])
def test_hunyuan_configs_transformers_would_build_otherwise_are_refused(
        tmp_path: Path, changes: dict[str, object], message: str):
    with pytest.raises(TableError, match=message):
        _read(tmp_path, HUNYUAN_DEFAULTS, **changes)


def test_llama4_texts_defaults_count_scouts_experts_and_shared_expert(tmp_path: Path):
    model = _read(tmp_path, LLAMA4_TEXT_DEFAULTS)
    mlp = 3 * 5120 * 8192
    layer = 5120 * 128 * (80 + 16) + 2 * 5120 + 16 * (mlp + 5120) + mlp
    total = 48 * layer + 2 * 202048 * 5120 + 5120
    assert total == 107769861120  # its card: 109B with the vision encoder, 17B active
    assert model.parameters_b * 1e9 == pytest.approx(total, abs=1)
    assert model.active_parameters_b == pytest.approx((total - 48 * 15 * mlp) / 1e9)  # 17.17B
    assert (model.moe, model.unchecked_layout) == (MoE(
        experts=16, active_experts=1, moe_intermediate_size=8192, shared_expert_intermediate_size=8192,
        shared_expert_gate=False, computes_every_expert=True, peft_converts_experts=False), None)


@pytest.mark.parametrize("changes", [
    {"num_local_experts": 128, "interleave_moe_layer_step": 2},  # Llama-4-Maverick's: layers 1, 3, ..., 47
    {"num_local_experts": 128, "interleave_moe_layer_step": ..., "moe_layers": list(range(1, 48, 2))},
])
def test_llama4_maverick_counts_its_dense_layers_at_intermediate_size_mlp(
        tmp_path: Path, changes: dict[str, object]):
    model = _read(tmp_path, LLAMA4_TEXT_DEFAULTS, **changes)
    mlp = 3 * 5120 * 8192
    total = (48 * (5120 * 128 * 96 + 2 * 5120) + 24 * (128 * (mlp + 5120) + mlp) + 24 * 3 * 5120 * 16384
             + 2 * 202048 * 5120 + 5120)
    assert total == 400711848960  # its card: 400B total
    assert model.parameters_b * 1e9 == pytest.approx(total, abs=1)
    assert model.moe is not None and (model.moe.dense_layers, model.moe.dense_intermediate_size) == (24, 16384)


@pytest.mark.parametrize(("changes", "message"), [
    ({"moe_layers": [0, 48]}, r"moe_layers: expected a list of layer indices from 0 to 47, or null, got \[0, 48\]$"),
    ({"moe_layers": []}, r"moe_layers: expected a list of layer indices from 0 to 47, or null, got \[\]$"),
    ({"interleave_moe_layer_step": 49},
     r"interleave_moe_layer_step 49: leaves none of num_hidden_layers \(48\) holding the experts$"),
    ({"quantization_config": {"quant_method": "fbgemm_fp8"}},
     r"quantization_config \{'quant_method': 'fbgemm_fp8'\}: quantized weights"),
])
def test_llama4_text_configs_that_cannot_be_counted_are_refused(
        tmp_path: Path, changes: dict[str, object], message: str):
    with pytest.raises(TableError, match=message):
        _read(tmp_path, LLAMA4_TEXT_DEFAULTS, **changes)


def test_solve_memory_refuses_a_bad_ernie_layout_in_one_line(cli, tmp_path: Path):
    (tmp_path / "config.json").write_text(json.dumps({**ERNIE_DEFAULTS, "moe_layer_start_index": 28}),
                                          encoding="utf-8")
    status, out, err = cli("memory", "--model-config", str(tmp_path), "--gpu", "h100", "--gpus", "8", "--len", "8192")
    assert (status, out) == (2, "")
    assert err == (f"solve memory: error: --model-config {tmp_path / 'config.json'}: moe_layer_start_index 28, "
                   "moe_layer_end_index -1 and moe_layer_interval 1 leave no layer of 28 holding the experts\n")


def test_solve_cluster_notes_a_jobs_uncounted_mtp_layer(cli, tmp_path: Path):
    # A small GLM-4-MoE-style config with an MTP layer (as GLM-4.5's): placed as without it, with a note naming its job.
    config = {"model_type": "glm4_moe", "hidden_size": 64, "intermediate_size": 200, "moe_intermediate_size": 16,
              "num_hidden_layers": 3, "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 32,
              "n_routed_experts": 8, "n_shared_experts": 1, "num_experts_per_tok": 2, "first_k_dense_replace": 1,
              "vocab_size": 1000, "max_position_embeddings": 4096}
    (tmp_path / "glm").mkdir()
    (tmp_path / "glm" / "config.json").write_text(json.dumps(config), encoding="utf-8")
    path = tmp_path / "fleet.yaml"
    path.write_text("pools:\n  - {name: a, gpu: h20, nodes: 1, gpus_per_node: 8}\njobs:\n"
                    "  - {name: small, model_config: glm, max_model_len: 4096, rollout_gpus: 0}\n", encoding="utf-8")
    status, without, err = cli("cluster", str(path), "--json")
    assert (status, err) == (0, "")
    (tmp_path / "glm" / "config.json").write_text(json.dumps({**config, "num_nextn_predict_layers": 1}),
                                                  encoding="utf-8")
    status, out, err = cli("cluster", str(path), "--json")
    assert (status, out) == (0, without)
    assert err == ("solve cluster: note: glm (job small) declares 1 multi-token prediction layer "
                   "(num_nextn_predict_layers), not counted: transformers' class does not load their weights, so "
                   "verl's FSDP trainer holds none of them (verl's Megatron trainer with model.mtp.enable would)\n")


@pytest.mark.parametrize(("config", "experts", "card_b", "heading"), [
    (GPT_OSS_20B, 32, 20.91, "gpt-oss-20b (20.9B parameters, 4.2B active)"),  # its card: 20.91B total
    (MINIMAX_M2, 256, 230, "MiniMax-M2 (228.7B parameters, 11.0B active)"),  # its card: 230B total, 10B active
], ids=["gpt_oss", "minimax_m2"])
def test_gpt_oss_and_minimax_m2_read_as_their_classes_build_them(
        cli, tmp_path: Path, config: dict[str, object], experts: int, card_b: float, heading: str):
    # Routed experts of gated MLPs intermediate_size wide in every layer; head_dim and untied embeddings by default.
    model = _read(tmp_path, config)
    hidden, width, layers = config["hidden_size"], config["intermediate_size"], config["num_hidden_layers"]
    head_dim = 64 if config is GPT_OSS_20B else 128
    attention = hidden * head_dim * 2 * (config["num_attention_heads"] + config["num_key_value_heads"])
    total = (layers * (attention + 2 * hidden + experts * (3 * hidden * width + hidden))
             + 2 * config["vocab_size"] * hidden + hidden)
    assert model.parameters_b * 1e9 == pytest.approx(total, abs=1)
    assert model.parameters_b == pytest.approx(card_b, rel=0.01)
    assert (model.head_dim, model.tied_embeddings, model.unchecked_layout) == (head_dim, False, None)
    assert model.moe == MoE(experts=experts, active_experts=config["num_experts_per_tok"], moe_intermediate_size=width,
                            peft_converts_experts=config is MINIMAX_M2)
    status, out, err = cli("memory", "--model-config", str(tmp_path), "--gpu", "h100", "--gpus", "8", "--len", "4096")
    assert (status, err) == (0 if config is GPT_OSS_20B else 1, "")
    assert out.startswith(heading) and "has not checked" not in out and "YaRN" not in out
    with pytest.raises(TableError, match=r"missing the count of routed experts \(num_experts, num_local_experts, "):
        _read(tmp_path, config, num_local_experts=...)


def test_gpt_oss_reads_its_own_yarn_and_alternating_windows_from_its_class(tmp_path: Path):
    # Its YaRN (factor 32 over 4096 positions) is its own: the native context is 131072, and no factor is written.
    model = _read(tmp_path, GPT_OSS_20B)
    assert (model.native_context, model.rope_scaling, model.config_yarn_factor) == (131072, "yarn", None)
    # Without layer_types, GptOssConfig alternates sliding and full layers: vLLM 0.19.1 caches its even layers over
    # 128 tokens (by index, whatever mixed layer_types say), all 24 where the types are all one.
    assert _read(tmp_path, GPT_OSS_20B).vllm_sliding_window == (128, 12)
    assert _read(tmp_path, GPT_OSS_20B, layer_types=...).vllm_sliding_window == (128, 12)
    assert _read(tmp_path, GPT_OSS_20B, layer_types=["full_attention", "sliding_attention"] * 11
                 + ["full_attention"] * 2).vllm_sliding_window == (128, 12)
    assert _read(tmp_path, GPT_OSS_20B, layer_types=["sliding_attention"] * 24).vllm_sliding_window == (128, 24)
    # mutants47: of 5 layers, the even ones are 0, 2 and 4
    assert _read(tmp_path, GPT_OSS_20B, num_hidden_layers=5, layer_types=...).vllm_sliding_window == (128, 3)


TINY = {"vocab_size": 64, "hidden_size": 32, "intermediate_size": 16, "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 2, "head_dim": 8, "max_position_embeddings": 4096}
"""A tiny model's shape, 4 experts of which a token takes 2 where the type has experts."""


@pytest.mark.parametrize(("model_type", "experts", "adapter"), [
    # PEFT 0.21.2's all-linear adapter at rank 2 on tiny transformers 5.12.1 models of these shapes: gpt-oss's
    # attention alone (its router and experts are parameters, and PEFT converts no gpt_oss config), 2 x 2 x (64 + 48
    # + 48 + 64); MiniMax-M2's converted as Mixtral's (the router, 2 x (32 + 4), and 4 experts' w1 and w3 at rank 4,
    # 4 x (32 + 32), and w2, 2 x (32 + 16), a layer) and Ministral 3's attention and gated MLP, as Mistral's.
    ("gpt_oss", 4, 896), ("minimax_m2", 4, 896 + 2 * (72 + 4 * (256 + 96))), ("ministral3", 0, 896 + 2 * 3 * 96)])
def test_lora_counts_gpt_oss_minimax_m2_and_ministral3_on_their_own_module_names(
        tmp_path: Path, model_type: str, experts: int, adapter: int):
    model = _read(tmp_path, {"model_type": model_type, **TINY,
                             **({"num_local_experts": experts, "num_experts_per_tok": 2} if experts else {}),
                             **({"rotary_dim": 4} if model_type == "minimax_m2" else {})})  # vLLM's class needs it
    assert (lora_parameters(model, 2), model.peft_names.assumed) == (adapter, False)
    names = model.peft_names
    # What PEFT would refuse on each: gpt-oss has no mlp.gate (Qwen3-MoE's assumed names had one), MiniMax-M2 fuses
    # w1 with w3, Ministral 3 has no query norm.
    refused = {"gpt_oss": r".*mlp\.gate", "minimax_m2": r".*\.w1", "ministral3": r".*q_norm"}[model_type]
    assert peft_target_refusal(refused, None, names) is not None
    assert peft_target_refusal(r".*\.(q_proj|v_proj)", None, names) is None


@pytest.mark.parametrize(("model_type", "unsupported"), [
    ("cohere2_moe", "prefix_dense_intermediate_size wide"), ("hy_v3", "given by mlp_layer_types"),
    ("laguna", "(g_proj, hidden_size x heads)"), ("longcat_flash", "two latent attentions and two dense MLPs"),
    ("hrm_text", "over H_cycles x L_cycles cycles")])
def test_transformers_5_types_the_terms_do_not_hold_are_refused(tmp_path: Path, model_type: str, unsupported: str):
    # A layout of their own, which the head_dim default (128) alone would not size: refused, naming what.
    with pytest.raises(TableError, match=rf": model_type {model_type}: .*{re.escape(unsupported)}.*"
                                         r"\(transformers 5\.12\.1 \w+\.py:\d+") as raised:
        _read(tmp_path, {"model_type": model_type, **TINY, "num_experts": 4, "num_experts_per_tok": 2})
    assert "\n" not in str(raised.value)


def test_solve_memory_refuses_afmoe_in_one_line(cli, tmp_path: Path):
    # arcee-ai/Trinity-Mini's shape: AfmoeAttention's output gate and its dense first layers are not counted.
    (tmp_path / "config.json").write_text(json.dumps({
        "model_type": "afmoe", "vocab_size": 200192, "hidden_size": 2048, "intermediate_size": 6144,
        "moe_intermediate_size": 1024, "num_hidden_layers": 32, "num_dense_layers": 2, "num_attention_heads": 32,
        "num_key_value_heads": 4, "head_dim": 128, "max_position_embeddings": 131072, "num_experts": 128,
        "num_experts_per_tok": 8, "num_shared_experts": 1, "sliding_window": 2048}), encoding="utf-8")
    status, out, err = cli("memory", "--model-config", str(tmp_path), "--gpu", "h100", "--gpus", "8", "--len", "8192")
    assert (status, out) == (2, "")
    assert err == (f"solve memory: error: --model-config {tmp_path / 'config.json'}: model_type afmoe: AFMoE's "
                   "attention gates its output with a projection of its own (gate_proj, hidden_size x "
                   "num_attention_heads x head_dim), and its first num_dense_layers layers are dense beside experts "
                   "with num_shared_experts shared ones, which rft-solver does not count (transformers 5.9.0 "
                   "modeling_afmoe.py:361, :436, :233)\n")
