"""LoRA's ``target_modules`` matched against each model type's own module names (peftnames, session 77:
solver/tables/peft_names.py, read from transformers 5.12.1's modeling code and PEFT 0.21.2's conversion), not Qwen3's
alone: Mixtral's ``w1``/``w3`` and Phi-3's ``qkv_proj`` taken, Qwen2-MoE's shared expert no fused half, the adapter
counted on each type's linear layers (Phi-3's fused ones; no routed experts PEFT does not convert), and an unknown
type's names assumed, which cautions rather than refuses."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import solver
from solver.memory import lora_parameters
from solver.tables.model_config import PEFT_CONVERTED_MODEL_TYPES
from solver.tables.peft_match import QWEN3, QWEN3_MOE, peft_target_refusal, shown_module_names
from solver.tables.peft_names import PEFT_NAMES_BY_MODEL_TYPE, peft_module_names
from solver.trinity.config import read_trinity_config

Cli = Callable[..., tuple[int, str, str]]
RANK = 16
SMALL = {"hidden_size": 1024, "num_hidden_layers": 4, "num_attention_heads": 8, "vocab_size": 32000,
         "max_position_embeddings": 4096, "tie_word_embeddings": False}
"""A made-up model's common keys: 4 layers of hidden width 1024, 8 heads of 128."""
CONFIGS: dict[str, dict[str, Any]] = {
    "phi3": {**SMALL, "model_type": "phi3", "num_key_value_heads": 8, "intermediate_size": 2816},
    "llama": {**SMALL, "model_type": "llama", "num_key_value_heads": 8, "intermediate_size": 2816},
    "glm4": {**SMALL, "model_type": "glm4", "num_key_value_heads": 2, "intermediate_size": 2816},
    "mixtral": {**SMALL, "model_type": "mixtral", "num_key_value_heads": 2, "intermediate_size": 2048,
                "num_local_experts": 8, "num_experts_per_tok": 2},
    "olmoe": {**SMALL, "model_type": "olmoe", "num_key_value_heads": 8, "intermediate_size": 512,
              "num_experts": 8, "num_experts_per_tok": 2},
    "qwen2_moe": {**SMALL, "model_type": "qwen2_moe", "num_key_value_heads": 2, "intermediate_size": 4096,
                  "moe_intermediate_size": 512, "num_experts": 8, "num_experts_per_tok": 2,
                  "shared_expert_intermediate_size": 1024},
}
"""Small made-up configs of each kind (`test_the_adapter_is_counted_on_each_types_linear_layers`)."""
SAVED_SPLIT_AND_COUNTED = ["lora-counted-as-full", "lora-targets-saved-split"]
"""The config reading's lines on any new adapter from a regex."""
FIX = ("and Trinity fails as it makes the adapter: give all-linear, or a regular expression that matches whole names, "
       "such as .*\\.(q_proj|v_proj)")


def _model(tmp_path: Path, config: dict[str, Any], name: str = "mine") -> solver.Model:
    folder = tmp_path / name
    folder.mkdir(exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return solver.load_model_config(folder)


def test_qwen3s_names_are_unchanged_and_the_table_agrees_with_the_types_peft_converts() -> None:
    assert QWEN3.adapted == ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
                             "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj")
    assert QWEN3.others == ("", "self_attn", "self_attn.q_norm", "self_attn.k_norm", "mlp", "mlp.act_fn",
                            "input_layernorm", "post_attention_layernorm")
    assert QWEN3_MOE.adapted == ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
                                 "mlp.gate", "mlp.experts.gate_proj", "mlp.experts.up_proj", "mlp.experts.down_proj")
    converted = {names.model_type for names in PEFT_NAMES_BY_MODEL_TYPE.values() if names.fused}
    routed = {"qwen3_moe", "mixtral", "olmoe", "qwen2_moe", "deepseek_v2", "deepseek_v3", "glm4_moe", "ernie4_5_moe",
              "hunyuan_v1_moe", "llama4_text", "granitemoe", "phimoe", "gpt_oss", "minimax_m2"}
    assert converted == routed & set(PEFT_CONVERTED_MODEL_TYPES) == routed - {"qwen2_moe", "llama4_text", "granitemoe",
                                                                              "phimoe", "gpt_oss"}
    assert peft_module_names("exaone", False) == QWEN3._replace(assumed=True)  # named fallback, said so
    assert peft_module_names(None, True) == QWEN3_MOE._replace(assumed=True)
    assert shown_module_names(PEFT_NAMES_BY_MODEL_TYPE["mixtral"]) == (
        "model.layers.N.self_attn.{q,k,v,o}_proj, model.layers.N.mlp.gate, model.layers.N.mlp.experts.{w1,w3,w2}, "
        "model.embed_tokens and lm_head")


@pytest.mark.parametrize(("model_type", "parameters"), [
    # Phi-3 (hidden 1024, 8 heads of 128, 8 KV heads, MLP 2816, 4 layers), r * (inputs + outputs) per matrix:
    # qkv_proj 16 * (1024 + 3 * 1024) = 65536, o_proj 16 * (1024 + 1024) = 32768, gate_up_proj 16 * (1024 + 2 * 2816)
    # = 106496, down_proj 16 * (2816 + 1024) = 61440: 266240 a layer, 1064960 in 4 (split as Llama's: 1261568).
    ("phi3", 1_064_960),
    ("llama", 1_261_568),
    # GLM-4 (2 KV heads): q 16 * 2048, k and v 16 * (1024 + 256) each, o 16 * 2048, gate_up_proj 106496, down 61440:
    # 274432 a layer, 1097728 in 4.
    ("glm4", 1_097_728),
    # Mixtral (2 KV heads, 8 experts of 2048): q 32768, k and v 20480 each, o 32768; router 16 * (1024 + 8) = 16512;
    # per expert gate_up_proj at twice the rank 2 * 16 * (1024 + 4096) = 163840, w2 16 * (2048 + 1024) = 49152, times
    # 8: 1703936; 1826944 a layer, 7307776 in 4.
    ("mixtral", 7_307_776),
    # OLMoE (8 experts of 512): attention 4 * 32768, router 16512, per expert 2 * 16 * (1024 + 1024) and
    # 16 * (512 + 1024), times 8: 720896; 868480 a layer, 3473920 in 4.
    ("olmoe", 3_473_920),
    # Qwen2-MoE: PEFT converts none of its routed experts and its router is no nn.Linear: attention 106496, shared
    # expert 3 * 16 * (1024 + 1024) = 98304, shared gate 16 * (1024 + 1) = 16400: 221200 a layer, 884800 in 4.
    ("qwen2_moe", 884_800),
])
def test_the_adapter_is_counted_on_each_types_linear_layers(tmp_path: Path, model_type: str, parameters: int) -> None:
    assert lora_parameters(_model(tmp_path, CONFIGS[model_type]), RANK) == parameters


@pytest.mark.parametrize(("model_type", "pattern", "refusal"), [
    ("mixtral", ".*\\.(w1|w3)", None),
    ("mixtral", ".*experts\\.w1", ("matches the routed experts' w1 without their w3, which PEFT fuses into "
                                   "gate_up_proj (\"Cannot convert PEFT target(s) ... because they are fused\")")),
    ("mixtral", ".*gate_proj", "matches no module"),
    ("phi3", ".*qkv_proj", None),
    ("phi3", ".*q_proj", "matches no module"),
    ("qwen2_moe", ".*shared_expert\\.gate_proj", None),  # an nn.Linear, no fused half
    ("qwen2_moe", ".*mlp\\.gate", ("matches model.layers.N.mlp.gate, which PEFT cannot adapt (\"Target module ... "
                                   "is not supported\": it adapts linear layers and embeddings alone)")),
    ("llama4_text", ".*feed_forward\\.router", None),
    ("deepseek_v2", ".*kv_a_proj_with_mqa", None),
])
def test_a_regex_is_judged_on_its_model_types_names(model_type: str, pattern: str, refusal: str | None) -> None:
    assert peft_target_refusal(pattern, None, PEFT_NAMES_BY_MODEL_TYPE[model_type]) == refusal


def test_the_config_alone_refuses_no_regex_that_compiles() -> None:
    def notes(pattern: str) -> list[tuple[str, str]]:
        text = ("model:\n  model_path: /m\n  lora_configs: [{lora_rank: 16, target_modules: '" + pattern + "'}]\n")
        config = read_trinity_config(text, "trinity.yaml", {}, None)
        return [(code.value, words) for words, code in zip(config.notes, config.note_codes, strict=True)
                if code.value == "lora-configs-refused"]

    # Mixtral's, Phi-3's, and one no known type takes (InternLM2's): the checks, which know the model, judge them
    # (peftgap_s77: the reading refused the last on Qwen3's names)
    assert notes(".*\\.(w1|w3)") == notes(".*qkv_proj") == notes(".*wqkv") == []


def _checked(cli: Cli, tmp_path: Path, config: dict[str, Any], pattern: str) -> tuple[int, dict[str, Any]]:
    model = tmp_path / "mine"
    model.mkdir(exist_ok=True)
    (model / "config.json").write_text(json.dumps(config), encoding="utf-8")
    trinity = tmp_path / "trinity.yaml"
    trinity.write_text(
        "algorithm: {algorithm_type: grpo}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
        "buffer: {batch_size: 16, train_batch_size: 64}\n"
        f"model:\n  model_path: {model}\n  max_model_len: 4096\n"
        f"  lora_configs: [{{lora_rank: 16, target_modules: '{pattern}'}}]\n"
        "explorer:\n  rollout_model: {engine_num: 4, tensor_parallel_size: 1}\n", encoding="utf-8")
    status, out, err = cli("--from-config", str(trinity), "--model-config", str(model), "--gpu", "h100", "--check",
                           "--json")
    assert err == ""
    current: dict[str, Any] = json.loads(out)[0]["current"]
    return status, current


@pytest.mark.parametrize(("model_type", "pattern", "codes"), [
    # a mixture of experts PEFT converts saves no regex split: lora-moe-config-unsaved alone says what fails (s79)
    ("mixtral", ".*\\.(w1|w3)", ["lora-moe-config-unsaved", "lora-counted-as-full"]),
    ("phi3", ".*qkv_proj", SAVED_SPLIT_AND_COUNTED),
    # no fused half, and no caution on the adapter's saved config: PEFT does not convert Qwen2-MoE's
    ("qwen2_moe", ".*shared_expert\\.gate_proj", SAVED_SPLIT_AND_COUNTED),
])
def test_the_cli_takes_each_types_own_names(cli: Cli, tmp_path: Path, model_type: str, pattern: str,
                                            codes: list[str]) -> None:
    status, current = _checked(cli, tmp_path, CONFIGS[model_type], pattern)
    assert (status, current["refused"], current["config_problem_codes"]) == (0, False, codes)


@pytest.mark.parametrize(("model_type", "pattern", "kind", "names"), [
    ("mixtral", ".*qkv_proj", "a mixture of experts", (
        "model.layers.N.self_attn.{q,k,v,o}_proj, model.layers.N.mlp.gate, model.layers.N.mlp.experts.{w1,w3,w2}")),
    ("phi3", ".*\\.(w1|w3)", "a dense model", ("model.layers.N.self_attn.{qkv,o}_proj, "
                                               "model.layers.N.mlp.{gate_up,down}_proj")),
])
def test_the_cli_refuses_another_types_names_naming_the_models(cli: Cli, tmp_path: Path, model_type: str,
                                                               pattern: str, kind: str, names: str) -> None:
    status, current = _checked(cli, tmp_path, CONFIGS[model_type], pattern)
    # the plans count full fine-tuning, and say so (refusedlora, s80)
    assert (status, current["refused"], current["config_problem_codes"]) == (
        1, True, ["lora-configs-refused", "lora-counted-as-full"])
    assert current["config_problems"][0] == (
        f"model.lora_configs[0].target_modules '{pattern}', on mine ({kind}, model_type {model_type}), matches no "
        f"module: peft matches it whole (re.fullmatch) against each module's full name ({names}, model.embed_tokens "
        f"and lm_head), {FIX}")


def test_an_unknown_types_assumed_names_caution_rather_than_refuse(cli: Cli, tmp_path: Path) -> None:
    # exaone: a type the table does not hold; Qwen3's names assumed, on which Phi-3's .*qkv_proj matches nothing.
    status, current = _checked(cli, tmp_path, {**CONFIGS["llama"], "model_type": "exaone"}, ".*qkv_proj")
    assert (status, current["refused"]) == (0, False)
    assumed = [words for words, code in zip(current["config_problems"], current["config_problem_codes"], strict=True)
               if code == "lora-targets-assumed"]
    assert assumed == [(
        "model.lora_configs[0].target_modules '.*qkv_proj', on mine (a dense model, model_type exaone, whose module "
        "names rft-solver has not read), matches no module among qwen3's names, which it assumes "
        "(model.layers.N.self_attn.{q,k,v,o}_proj, model.layers.N.mlp.{gate,up,down}_proj, model.embed_tokens and "
        "lm_head): peft fails as Trinity makes the adapter where they are the model's; check the regular expression "
        "against the model's own module names (model.named_modules())")]
