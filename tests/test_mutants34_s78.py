"""Mutation testing of the v4names and loraleft merges (mutants34, session 78): transformers 4's module names
(`SEPARATE_NAMES_BY_MODEL_TYPE`, `Model.peft_names_of`, the expert index ``E``), the names PEFT's conversion maps
(`CONVERTED_MLPS`), the checks' layouts (`LAYOUTS_TAKEN`) and the LoRA note's names (`_fewer_targets`). Each test kills
a mutant that the session's tests let live; the values are the current code's, checked against the tables' sources
(transformers 4.57.6's ``modeling_<type>.py``, PEFT 0.21.2's conversion) as the docstrings of those tables cite."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import solver
from solver.tables.peft_match import TargetMatch, peft_target_match
from solver.tables.peft_names import PEFT_NAMES_BY_MODEL_TYPE, separate_module_names
from solver.trinity.checks import lora_targets_problem
from solver.trinity.config import read_trinity_config

TINY = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 128,
        "intermediate_size": 96, "max_position_embeddings": 256, "tie_word_embeddings": False}
"""A tiny model's common keys (as tests/test_loraleft_s78.py's)."""
GLM4_MOE = {**TINY, "model_type": "glm4_moe", "num_key_value_heads": 2, "head_dim": 16, "moe_intermediate_size": 32,
            "n_routed_experts": 4, "n_shared_experts": 1, "num_experts_per_tok": 2, "first_k_dense_replace": 1}
"""A tiny GLM-4-MoE: a dense first layer (its MLP ``mlp.{gate,up,down}_proj``), then 4 routed experts."""
Cli = Callable[..., tuple[int, str, str]]
MIXTRAL = solver.load_model_config(Path(__file__).parent / "data" / "hf-configs" / "Mixtral-8x7B-v0.1.json")
FIX = ("and Trinity fails as it makes the adapter: give all-linear, or a regular expression that matches whole names, "
       "such as .*\\.(q_proj|v_proj)")


def _model(tmp_path: Path, config: dict[str, Any]) -> solver.Model:
    folder = tmp_path / "mine"
    folder.mkdir(exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return solver.load_model_config(folder)


def _counted_note(lora: str) -> str:
    """The config read alone's LoRA note (``lora-counted-as-full``) on a model it knows nothing of."""
    text = f"model:\n  model_path: /models/internlm2-7b\n  lora_configs: [{{lora_rank: 16, {lora}}}]\n"
    config = read_trinity_config(text, "trinity.yaml", {})
    return dict(zip((code.value for code in config.note_codes), config.notes, strict=True))["lora-counted-as-full"]


def test_the_config_read_alone_matches_transformers_4s_experts_up_to_the_eighth() -> None:
    # PEFT_EXPERTS: the reading matches a regex against experts 0 to 7 of each expert layer (Mixtral's 8, the fewest
    # of any known type's released models), so .*experts\.7\.w1 is Mixtral's last expert under transformers 4 ...
    assert _counted_note("target_modules: '.*experts\\.7\\.w1'") == (
        "with LoRA (model.lora_configs) the trainer holds gradients and optimizer states for the adapter alone: the "
        "verdict and the plans count LoRA rank 16's states (the frozen base's fp32 weights and the adapter's, unless "
        "--lora-rank gives another; its target_modules "
        "'.*experts\\.7\\.w1' matches experts.E.w1 alone among mixtral's module names, which the config read alone "
        "assumes, knowing no model, its adapter counted on what it matches of the model's own names alone), and the "
        "tables, which measured full fine-tuning, vouch for it by inference and refute nothing")
    # ... and an eighth (index 8) no type's names hold: counted as full fine-tuning
    assert "(its target_modules '.*experts\\.8\\.w1' matches no module)" in _counted_note(
        "target_modules: '.*experts\\.8\\.w1'")


def test_a_dense_layers_mlp_is_adapted_under_transformers_4(tmp_path: Path) -> None:
    # GLM-4-MoE's first layer is dense: transformers 4.57.6 holds its MLP as three nn.Linear that PEFT adapts as they
    # are (no conversion); under transformers 5 PEFT maps down_proj to the routed experts' down_proj parameter.
    model = _model(tmp_path, GLM4_MOE)
    assert peft_target_match(".*layers\\.0\\.mlp\\.down_proj", None, model.peft_names_of("separate")) == TargetMatch(
        ("down_proj",), (), None)
    assert peft_target_match(".*layers\\.0\\.mlp\\.down_proj", None, model.peft_names) == TargetMatch(
        ("experts.down_proj",), (), None)
    assert [lora_targets_problem(".*layers\\.0\\.mlp\\.down_proj", None, model, layout)
            for layout in ("fused", "separate", "either")] == [None, None, None]


def test_stablelms_attention_holds_its_own_rotary_embedding_under_transformers_4(tmp_path: Path) -> None:
    # a module PEFT cannot adapt under 0.5.1's transformers 4; no module of that name under transformers 5
    model = _model(tmp_path, {**TINY, "model_type": "stablelm", "num_key_value_heads": 4})
    names = ("model.layers.N.self_attn.{q,k,v,o}_proj, model.layers.N.mlp.{gate,up,down}_proj, model.embed_tokens "
             "and lm_head")
    words = {layout: problem.words for layout in ("fused", "separate")
             if (problem := lora_targets_problem(".*self_attn\\.rotary_emb", None, model, layout)) is not None}
    assert words == {
        "fused": ("model.lora_configs[0].target_modules '.*self_attn\\.rotary_emb', on mine (a dense model, model_type "
                  "stablelm), matches no module: peft matches it whole (re.fullmatch) against each module's full name "
                  f"({names}), {FIX}"),
        "separate": ("model.lora_configs[0].target_modules '.*self_attn\\.rotary_emb', on mine (a dense model, "
                     "model_type stablelm), matches model.layers.N.self_attn.rotary_emb, which PEFT cannot adapt "
                     "(\"Target module ... is not supported\": it adapts linear layers and embeddings alone): peft "
                     f"matches it whole (re.fullmatch) against each module's full name ({names}), {FIX}")}


@pytest.mark.parametrize(("model_type", "pattern"), [
    *((model_type, pattern) for model_type in ("deepseek_v3", "glm4_moe", "ernie4_5_moe")
      for pattern in ("model\\.layers\\.0\\.mlp\\.(gate|up)_proj", ".*shared_experts\\.(gate|up)_proj")),
    ("hunyuan_v1_moe", ".*shared_mlp\\.(gate|up)_proj"),
])
def test_a_dense_mlp_or_shared_expert_named_is_the_routed_experts_half_where_peft_converts(model_type: str,
                                                                                           pattern: str) -> None:
    # CONVERTED_MLPS (and Hunyuan-MoE's shared_mlp): PEFT makes gate_proj and up_proj of the names the regex matches
    # (a dense layer's MLP, a shared expert), which it maps to the routed experts' gate_up_proj parameter: those
    # adapted, nothing of the MLP matched.
    assert peft_target_match(pattern, None, PEFT_NAMES_BY_MODEL_TYPE[model_type]) == TargetMatch(
        ("experts.gate_proj", "experts.up_proj"), (), None)


@pytest.mark.parametrize("experts", ["fused", "separate"])
def test_the_layer_itself_is_a_module_a_regex_matches(experts: str) -> None:
    # model.layers.0 (a decoder layer, no nn.Linear) is among the modules PEFT matches a regex against
    assert peft_target_match("model\\.layers\\.[0-9]+", None, MIXTRAL.peft_names_of(
        "fused" if experts == "fused" else "separate")) == TargetMatch((), (), "model.layers.N")


def test_exclude_modules_leaves_out_every_module_of_each_expert_by_its_index() -> None:
    # [^E]* matches every full module name (none holds a capital E): every expert's module by its own index
    # (block_sparse_moe.experts.0.w1 to .7.w1), not the E that stands for it in the names a refusal shows
    problem = lora_targets_problem(".*\\.w1", "[^E]*", MIXTRAL, "separate")
    assert problem is not None and problem.words == (
        "model.lora_configs[0].exclude_modules '[^E]*', on Mixtral-8x7B-v0.1 (a mixture of experts, model_type "
        "mixtral), leaves out every module target_modules '.*\\.w1' matches (\"All modules were excluded\"): peft "
        "matches it whole (re.fullmatch) against each module's full name (transformers 4's: "
        "model.layers.N.self_attn.{q,k,v,o}_proj, model.layers.N.block_sparse_moe.gate, "
        "model.layers.N.block_sparse_moe.experts.E.{w1,w3,w2}, model.embed_tokens and lm_head), and Trinity fails as "
        "it makes the adapter: exclude fewer, or remove it")


def test_either_layouts_exclude_modules_refusal_is_said_of_the_names_the_regex_matches() -> None:
    # Under 0.5.0's or 0.5.2's transformers 4 or 5 (either): the regex matches transformers 4's names alone, which
    # exclude_modules then leaves out; PEFT fails under both, and the refusal says that of exclude_modules (on
    # transformers 5's names it is the regex that matches no module)
    problem = lora_targets_problem(".*block_sparse_moe\\.experts\\.[0-9]+\\.w1", ".*experts\\.[0-9]+\\.w1", MIXTRAL,
                                   "either")
    assert problem is not None and problem.words == (
        "model.lora_configs[0].exclude_modules '.*experts\\.[0-9]+\\.w1', on Mixtral-8x7B-v0.1 (a mixture of experts, "
        "model_type mixtral), leaves out every module target_modules '.*block_sparse_moe\\.experts\\.[0-9]+\\.w1' "
        "matches (\"No modules were targeted for adaptation\"): peft matches it whole (re.fullmatch) against each "
        "module's full name (transformers 5's: model.layers.N.self_attn.{q,k,v,o}_proj, model.layers.N.mlp.gate, "
        "model.layers.N.mlp.experts.{w1,w3,w2}, model.embed_tokens and lm_head; transformers 4's: "
        "model.layers.N.self_attn.{q,k,v,o}_proj, model.layers.N.block_sparse_moe.gate, "
        "model.layers.N.block_sparse_moe.experts.E.{w1,w3,w2}, model.embed_tokens and lm_head), and Trinity fails as "
        "it makes the adapter: exclude fewer, or remove it")


def test_the_config_read_alone_names_no_type_for_a_module_outside_the_layers() -> None:
    # model.norm is every type's (outside the layers): no type's names assumed in the words
    assert "(its target_modules 'model\\.norm' matches model.norm, which all-linear leaves out and rft-solver does " \
        "not count): a LoRA run" in _counted_note("target_modules: 'model\\.norm'")


def test_the_config_read_alone_assumes_transformers_5s_names_first() -> None:
    # Qwen3's (transformers 5's first type) take .*q_proj before Qwen3-MoE's under transformers 4
    assert "its target_modules '.*q_proj' matches q_proj alone among qwen3's module names, which the config read " \
        "alone assumes, knowing no model," in _counted_note("target_modules: '.*q_proj'")


def test_the_verdicts_note_says_nothing_of_a_regex_that_matches_a_module_peft_cannot_adapt(
        cli: Cli, tmp_path: Path) -> None:
    # InternLM2 (Qwen3's names assumed): .*(q_proj|q_norm) matches q_norm there, which the checks caution on
    # (lora-targets-assumed); the config read alone took it on Llama's names (q_proj alone), but the verdict's note,
    # remade on the model's, says nothing of what it adapts
    model = tmp_path / "internlm2"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({**TINY, "model_type": "internlm2", "num_key_value_heads": 2,
                                                   "max_position_embeddings": 4096}), encoding="utf-8")
    config = tmp_path / "trinity.yaml"
    config.write_text(
        "algorithm: {algorithm_type: grpo}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
        "buffer: {batch_size: 16, train_batch_size: 64}\n"
        f"model:\n  model_path: {model}\n  max_model_len: 4096\n"
        "  lora_configs: [{lora_rank: 16, target_modules: '.*(q_proj|q_norm)'}]\n"
        "explorer:\n  rollout_model: {engine_num: 4, tensor_parallel_size: 1}\n", encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h100", "--check", "--json")
    assert (status, err) == (0, ""), out
    current = json.loads(out)[0]["current"]
    problems = dict(zip(current["config_problem_codes"], current["config_problems"], strict=True))
    assert list(problems) == ["lora-targets-assumed", "lora-counted-as-full", "lora-targets-saved-split"]
    assert problems["lora-counted-as-full"] == (
        "with LoRA (model.lora_configs) the trainer holds gradients and optimizer states for the adapter alone: the "
        "verdict and the plans count LoRA rank 16's states (the frozen base's fp32 weights and the adapter's on every "
        "linear layer but the output projection, unless --lora-rank gives another), and the tables, which measured "
        "full fine-tuning, vouch for it by inference and refute nothing")


@pytest.mark.parametrize("release", ["0.6", "0.5.2"])
def test_the_verdicts_note_is_said_on_transformers_5s_names_unless_the_release_runs_4_alone(
        cli: Cli, tmp_path: Path, release: str) -> None:
    # Qwen3-30B-A3B: .*mlp\.experts\.(gate_proj|up_proj) names transformers 5's fused experts (PEFT converts it to the
    # routed experts' gate_up_proj); 0.6 runs transformers 5, 0.5.2 either (the checks take it where either does),
    # whose note names each transformers' match (s80: before, transformers 5's alone)
    config = tmp_path / "trinity.yaml"
    config.write_text(
        "algorithm: {algorithm_type: grpo}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
        "buffer: {batch_size: 16, train_batch_size: 64}\n"
        "model:\n  model_path: Qwen/Qwen3-30B-A3B\n  max_model_len: 4096\n"
        "  lora_configs: [{lora_rank: 16, target_modules: '.*mlp\\.experts\\.(gate_proj|up_proj)'}]\n"
        "explorer:\n  rollout_model: {engine_num: 4, tensor_parallel_size: 1}\n", encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h100", "--check", "--trinity-version", release,
                           "--json")
    # under 0.6 the mixture of experts' adapter config is saved cut short, which 0.6 cannot reload: refused since s83
    # (release06b), the note said all the same
    assert (status, err) == (1 if release == "0.6" else 0, ""), out
    current = json.loads(out)[0]["current"]
    problems = dict(zip(current["config_problem_codes"], current["config_problems"], strict=True))
    assert ("lora-moe-config-unsaved-refused" in problems) == (release == "0.6")
    matched = "experts.gate_proj and experts.up_proj alone"
    counted = (f"{matched}, on which alone its adapter is counted)" if release == "0.6" else
               f"{matched} under transformers 5 and no module under transformers 4, its adapter counted on the larger "
               "of the two)")
    assert f"; its target_modules '.*mlp\\.experts\\.(gate_proj|up_proj)' matches {counted}" in problems[
        "lora-counted-as-full"]


def test_a_type_whose_names_hold_no_expert_index_counts_no_experts_under_transformers_4() -> None:
    # StableLM's transformers 4 names differ (its attention's rotary_emb) but hold no experts.E.: no expert count,
    # whatever count is given (PeftModuleNames.expert_count: 0 where no name holds an expert index)
    assert separate_module_names(PEFT_NAMES_BY_MODEL_TYPE["stablelm"], 8).expert_count == 0
    assert separate_module_names(PEFT_NAMES_BY_MODEL_TYPE["mixtral"], 8).expert_count == 8
