"""LoRA's loose ends (loraleft, session 78): the config read alone says whose module names its counting note assumes
(no other type's modules named as the model's), and the verdict remakes the note on the model's own; ``solve memory
--lora-rank`` on a mixture of experts cautions as a plan does; Hunyuan-MoE's router ``mlp.gate.wg`` is matched as
PEFT matches it (``gate`` is the router's ``gate.weight`` alone); ``all-linear`` on a mixture of experts PEFT converts
adapts no shared expert nor dense layer's MLP. The counts were checked against PEFT 0.21.2 on transformers 5.12.1 with
tiny random models of the configs below (``get_peft_model``, the adapter's parameters summed)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import solver
from solver.memory import adapted_shapes, lora_parameters
from solver.tables.peft_match import TargetMatch, peft_target_match, peft_target_refusal
from solver.tables.peft_names import PEFT_NAMES_BY_MODEL_TYPE
from solver.trinity.checks import lora_targets_problem
from solver.trinity.config import read_trinity_config

Cli = Callable[..., tuple[int, str, str]]
TINY = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 128,
        "intermediate_size": 96, "max_position_embeddings": 256, "tie_word_embeddings": False}
"""A tiny model's common keys: 2 layers of hidden width 64, 4 heads, MLPs 96 wide."""
MOE: dict[str, dict[str, Any]] = {
    "deepseek_v3": {**TINY, "model_type": "deepseek_v3", "num_key_value_heads": 4, "moe_intermediate_size": 32,
                    "n_routed_experts": 4, "n_shared_experts": 1, "num_experts_per_tok": 2, "first_k_dense_replace": 1,
                    "q_lora_rank": None, "kv_lora_rank": 16, "qk_rope_head_dim": 8, "qk_nope_head_dim": 8,
                    "v_head_dim": 16},
    "glm4_moe": {**TINY, "model_type": "glm4_moe", "num_key_value_heads": 2, "head_dim": 16,
                 "moe_intermediate_size": 32, "n_routed_experts": 4, "n_shared_experts": 1, "num_experts_per_tok": 2,
                 "first_k_dense_replace": 1},
    "hunyuan_v1_moe": {**TINY, "model_type": "hunyuan_v1_moe", "num_key_value_heads": 2, "head_dim": 16,
                       "num_experts": 4, "moe_topk": 2, "num_shared_expert": 1, "moe_intermediate_size": 96},
    "mixtral": {**TINY, "model_type": "mixtral", "num_key_value_heads": 2, "num_local_experts": 4,
                "num_experts_per_tok": 2},
}
"""Tiny mixtures of experts: DeepSeek-V3 and GLM-4-MoE with a dense first layer and one shared expert 32 wide beside
4 routed experts 32 wide; Hunyuan-MoE with 4 experts and a shared one, 96 wide, in both layers."""
UNSAVED = ("LoRA on mine, a mixture of experts: with transformers 5 (Trinity 0.6 requires 5.12.1 or later) PEFT makes "
           "the adapter's target_parameters a set, which Trinity's _save_lora cannot write as JSON, so the explorer's "
           "vLLM fails to reload the adapter at the first weight sync: train mine without LoRA, or patch _save_lora to "
           "write target_parameters as a list")
COUNTED_HEAD = ("with LoRA (model.lora_configs) the trainer holds gradients and optimizer states for the adapter "
                "alone: the verdict and the plans count LoRA rank 16's states (the frozen base's fp32 weights and the "
                "adapter's on every linear layer but the output projection, unless --lora-rank gives another")
FEWER_HEAD = COUNTED_HEAD.replace(" on every linear layer but the output projection", "")
"""The head where a regex adapts fewer modules: those it matches alone are named, not every linear layer (s79)."""
COUNTED_TAIL = ("), and the tables, which measured full fine-tuning, vouch for it by inference and refute nothing")


def _folder(tmp_path: Path, config: dict[str, Any]) -> Path:
    folder = tmp_path / "mine"
    folder.mkdir(exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


def _trinity(tmp_path: Path, model_path: str, lora: str) -> Path:
    config = tmp_path / "trinity.yaml"
    config.write_text(
        "algorithm: {algorithm_type: grpo}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
        "buffer: {batch_size: 16, train_batch_size: 64}\n"
        f"model:\n  model_path: {model_path}\n  max_model_len: 4096\n  lora_configs: [{{lora_rank: 16, {lora}}}]\n"
        "explorer:\n  rollout_model: {engine_num: 4, tensor_parallel_size: 1}\n", encoding="utf-8")
    return config


def _problems(cli: Cli, *args: str) -> dict[str, str]:
    status, out, err = cli(*args, "--gpu", "h100", "--check", "--json")
    assert (status, err) == (0, ""), out
    current = json.loads(out)[0]["current"]
    return dict(zip(current["config_problem_codes"], current["config_problems"], strict=True))


# (1) The config read alone knows no model: it names the type whose names it matched on, and that it assumes them.

def test_the_config_read_alone_says_whose_names_it_assumes() -> None:
    def counted(lora: str) -> str:
        text = ("model:\n  model_path: /models/internlm2-7b\n"
                f"  lora_configs: [{{lora_rank: 16, {lora}}}]\n")
        config = read_trinity_config(text, "trinity.yaml", {})
        return dict(zip((code.value for code in config.note_codes), config.notes, strict=True))["lora-counted-as-full"]

    # Qwen3's names take no module less .*proj; Qwen3-MoE's router and routed experts (parameters PEFT adds for
    # all-linear whatever it excludes) are the first type's that PEFT takes.
    assert counted("exclude_modules: '.*proj'") == (
        f"{FEWER_HEAD}; its target_modules 'all-linear' less exclude_modules '.*proj' matches gate, experts.gate_proj, "
        "experts.up_proj and experts.down_proj alone among qwen3_moe's module names, which the config read alone "
        "assumes, knowing no model, its adapter counted on what "
        f"it matches of the model's own names alone{COUNTED_TAIL}")
    # A norm of the layers no type takes: no type assumed since s81 (loracautions; before, "matches
    # model.layers.N.self_attn.q_norm ... among qwen3's module names", which most types' names lack)
    assert counted("target_modules: '.*q_norm'") == (
        "with LoRA (model.lora_configs) the trainer holds gradients and optimizer states for the adapter alone, but "
        "the verdict and the plans count full fine-tuning's, as the tables measured (its target_modules '.*q_norm' "
        "is taken on no model type's module names rft-solver holds: peft fails on it with each, and the checks on the "
        "model's names say why): a LoRA run needs less memory than shown "
        "(conservative: without Offload, LoRA leaves each GPU's shard about 4 of the 16 bytes per parameter counted; "
        "solve --lora-rank RANK counts a new adapter's)")


def test_the_verdict_remakes_the_note_on_the_models_own_names(cli: Cli, tmp_path: Path) -> None:
    # InternLM2 (a type rft-solver has not read): Qwen3's names assumed, on which all-linear less .*proj takes nothing:
    # the checks caution (lora-targets-assumed) and the note names no module (it said Qwen3-MoE's router and experts).
    model = _folder(tmp_path, {**TINY, "model_type": "internlm2", "num_key_value_heads": 2,
                               "max_position_embeddings": 4096})
    excluded = _problems(cli, "--from-config", str(_trinity(tmp_path, str(model), "exclude_modules: '.*proj'")))
    assert list(excluded) == ["lora-targets-assumed", "lora-counted-as-full"]
    assert excluded["lora-counted-as-full"] == f"{COUNTED_HEAD}{COUNTED_TAIL}"
    one = _problems(cli, "--from-config", str(_trinity(tmp_path, str(model), "target_modules: '.*q_proj'")))
    assert one["lora-counted-as-full"] == (
        f"{FEWER_HEAD}; its target_modules '.*q_proj' matches q_proj alone among qwen3's module names, which it "
        f"assumes for a model type it has not read, on which alone its adapter is counted{COUNTED_TAIL}")
    # A catalogue mixture of experts: its own names, nothing assumed.
    known = _problems(cli, "--from-config", str(_trinity(tmp_path, "Qwen/Qwen3-30B-A3B", "exclude_modules: '.*proj'")))
    assert known["lora-counted-as-full"] == (
        f"{FEWER_HEAD}; its target_modules 'all-linear' less exclude_modules '.*proj' matches gate, experts.gate_proj, "
        f"experts.up_proj and experts.down_proj alone, on which alone its adapter is counted{COUNTED_TAIL}")


# (2) solve memory --lora-rank on a mixture of experts carries the plan's caution (since smallslips27, s77), a
# --model-config's too; none on a dense model, nor under 0.5.1 (transformers 4: PEFT converts nothing).

@pytest.mark.parametrize(("config", "release", "cautions"), [
    (MOE["mixtral"], [], [UNSAVED]),
    (MOE["mixtral"], ["--trinity-version", "0.5.1"], []),
    (MOE["glm4_moe"], [], [UNSAVED]),
    ({**TINY, "model_type": "llama", "num_key_value_heads": 2}, [], []),
])
def test_solve_memory_cautions_on_lora_as_a_plan_does(cli: Cli, tmp_path: Path, config: dict[str, Any],
                                                      release: list[str], cautions: list[str]) -> None:
    folder = _folder(tmp_path, {**config, "max_position_embeddings": 4096})  # no YaRN at 4096 tokens
    status, out, err = cli("memory", "--model-config", str(folder), "--gpu", "h100", "--gpus", "2",
                           "--len", "4096", "--lora-rank", "16", *release, "--json")
    estimate = json.loads(out)
    assert (status, err, estimate["cautions"]) == (0, "", cautions)
    assert estimate["caution_codes"] == ["lora-moe-config-unsaved"] * len(cautions)


# (3) Hunyuan-MoE's router: mlp.gate holds an nn.Linear, mlp.gate.wg. PEFT adapts wg by its name; "gate", the
# router's v4 name, it maps to a gate.weight parameter, which Hunyuan lacks, so it adapts nothing there.

@pytest.mark.parametrize(("model_type", "pattern", "match", "refusal"), [
    # PEFT: "No `target_modules` passed but also no `target_parameters` found" (it was refused as a module PEFT
    # cannot adapt, mlp.gate)
    ("hunyuan_v1_moe", ".*mlp\\.gate", TargetMatch((), (), None), "matches no module"),
    # PEFT adapts q_proj alone, and warns that gate.weight matched no parameter (it was refused)
    ("hunyuan_v1_moe", ".*(mlp\\.gate|q_proj)", TargetMatch(("q_proj",), (), None), None),
    ("hunyuan_v1_moe", ".*mlp\\.gate\\.wg", TargetMatch(("gate.wg",), (), None), None),
    # the other routers: gate.weight, their own
    ("qwen3_moe", ".*mlp\\.gate", TargetMatch(("gate",), (), None), None),
    ("deepseek_v3", ".*mlp\\.gate", TargetMatch(("gate",), (), None), None),
])
def test_a_router_is_matched_as_peft_maps_gate(model_type: str, pattern: str, match: TargetMatch,
                                               refusal: str | None) -> None:
    names = PEFT_NAMES_BY_MODEL_TYPE[model_type]
    assert (peft_target_match(pattern, None, names), peft_target_refusal(pattern, None, names)) == (match, refusal)


def test_the_checks_take_a_regex_naming_hunyuans_gate_beside_a_linear(tmp_path: Path) -> None:
    model = solver.load_model_config(_folder(tmp_path, MOE["hunyuan_v1_moe"]))
    assert lora_targets_problem(".*(mlp\\.gate|q_proj)", None, model) is None
    refused = lora_targets_problem(".*mlp\\.gate", None, model)
    assert refused is not None and refused.words == (
        "model.lora_configs[0].target_modules '.*mlp\\.gate', on mine (a mixture of experts, model_type "
        "hunyuan_v1_moe), matches no module: peft matches it whole (re.fullmatch) against each module's full name "
        "(model.layers.N.self_attn.{q,k,v,o}_proj, model.layers.N.mlp.gate.wg, model.layers.N.mlp.experts.{gate,up,"
        "down}_proj, model.embed_tokens and lm_head), and Trinity fails as it makes the adapter: give all-linear, or a "
        "regular expression that matches whole names, such as .*\\.(q_proj|v_proj)")


# (4) all-linear on a mixture of experts PEFT converts: transformers 5.12.1 holds DeepSeek's, GLM-4-MoE's and
# Hunyuan-MoE's shared experts and dense layers' MLPs as nn.Linear gate_proj, up_proj and down_proj, but PEFT maps
# those names to the routed experts' parameters (target_parameters gate_up_proj, down_proj), so it adapts them not.

@pytest.mark.parametrize(("model_type", "fused", "separate"), [
    # Rank 4. DeepSeek-V3 (latent attention, no q_lora_rank): per layer q_proj 4 x (64 + 64) = 512, kv_a_proj_with_mqa
    # 4 x (64 + 24) = 352, kv_b_proj 4 x (16 + 96) = 448, o_proj 4 x (64 + 64) = 512: 1824, 3648 in 2. Layer 1: the
    # router 4 x (64 + 4) = 272, each of 4 experts gate_up_proj at twice the rank 8 x (64 + 64) = 1024 and down_proj
    # 4 x (32 + 64) = 384: 5632. Fused (PEFT: 9552): 3648 + 272 + 5632. Separate (transformers 4, no conversion, the
    # router DeepseekV3TopkRouter's weight, no nn.Linear): 3648, each expert's three 4 x 96 = 1152 a expert, 4608, the
    # shared expert's 1152, the dense layer's MLP 3 x 4 x (64 + 96) = 1920: 11328.
    ("deepseek_v3", 9552, 11328),
    # GLM-4-MoE: attention q 512, k and v 4 x (64 + 32) = 384 each, o 512: 1792 a layer, 3584 in 2; then as DeepSeek:
    # fused (PEFT: 9488) 3584 + 272 + 5632; separate 3584 + 4608 + 1152 + 1920 = 11264.
    ("glm4_moe", 9488, 11264),
    # Hunyuan-MoE (experts and the shared one 96 wide, in both layers): attention 3584; the router's wg 272 a layer,
    # 544; each expert 8 x (64 + 192) = 2048 and 4 x (96 + 64) = 640, 4 x 2688 = 10752 a layer, 21504: fused (PEFT:
    # 25632) 3584 + 544 + 21504, no shared_mlp. Separate: 3584 + 544, each expert's three 4 x 160 = 1920 a expert,
    # 15360, and the shared MLP's 1920 a layer, 3840: 23328.
    ("hunyuan_v1_moe", 25632, 23328),
])
def test_all_linear_adapts_no_shared_expert_nor_dense_mlp_where_peft_converts(
        tmp_path: Path, model_type: str, fused: int, separate: int) -> None:
    model = solver.load_model_config(_folder(tmp_path, MOE[model_type]))
    assert (lora_parameters(model, 4, "fused"), lora_parameters(model, 4, "separate")) == (fused, separate)
    names = PEFT_NAMES_BY_MODEL_TYPE[model_type]
    assert [name for name in names.adapted if "shared" in name or name.startswith("mlp.gate_proj")] == []
    assert peft_target_match("all-linear", None, names).linears[-3:] == (
        "experts.gate_proj", "experts.up_proj", "experts.down_proj")


def test_a_shared_expert_named_alone_is_the_routed_experts_half() -> None:
    # PEFT turns .*shared_experts\.(gate_proj|up_proj) into gate_proj and up_proj, the routed experts' fused halves
    # (target_parameters gate_up_proj): the routed experts' gate_up_proj adapted, no shared expert.
    names = PEFT_NAMES_BY_MODEL_TYPE["deepseek_v3"]
    assert peft_target_match(".*shared_experts\\.(gate_proj|up_proj)", None, names) == TargetMatch(
        ("experts.gate_proj", "experts.up_proj"), (), None)


def test_deepseek_v2_lites_fused_adapter_leaves_its_shared_experts_and_dense_mlp_out() -> None:
    lite = solver.load_model_config(Path(__file__).parent / "data" / "hf-configs" / "DeepSeek-V2-Lite.json")
    # hidden 2048; the first layer's MLP 10944 wide, 26 expert layers' two shared experts 1408 wide each: at rank 32
    # 32 x 3 x (2048 + 10944) = 1,247,232 and 26 x 32 x 3 x (2048 + 2816) = 12,140,544 left out of the fused count.
    assert lora_parameters(lite, 32, "fused") == 731_377_664 - 1_247_232 - 12_140_544 == 717_989_888
    assert (10944, 2048, 1) not in adapted_shapes(lite, "fused")  # the dense gate and up projections, one entry each
    assert adapted_shapes(lite, "separate").count((10944, 2048, 1)) == 2
