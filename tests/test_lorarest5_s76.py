"""LoRA findings left by lorarest4 (session 76): a ``target_modules`` regex that matches a module PEFT cannot adapt
(a norm, an MLP block, the experts' block, a decoder layer) refused as PEFT refuses it; LoRA on a mixture of experts
cautioned, as PEFT leaves its ``target_parameters`` a set that Trinity's ``_save_lora`` cannot write as JSON (checked
on CPU with peft 0.21.2, transformers 5.12.1 and a tiny random Qwen3-MoE: docs/trinity.md)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from solver.tables.peft_match import QWEN3, QWEN3_MOE, peft_target_refusal

Cli = Callable[..., tuple[int, str, str]]
HEAD = ("algorithm: {algorithm_type: grpo}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
        "buffer: {batch_size: 15, train_batch_size: 60}\n")
NAMES = ("model.layers.N.self_attn.{q,k,v,o}_proj, model.layers.N.mlp.{gate,up,down}_proj, model.embed_tokens and "
         "lm_head")
FIX = ("and Trinity fails as it makes the adapter: give all-linear, or a regular expression that matches whole names, "
       "such as .*\\.(q_proj|v_proj)")
UNSUPPORTED = ("which PEFT cannot adapt (\"Target module ... is not supported\": it adapts linear layers and "
               "embeddings alone)")


COUNTED_FULL = ("with model.lora_configs refused (lora-configs-refused says why), the verdict and the plans count "
                "full fine-tuning, which holds more than a LoRA run: fix model.lora_configs and plan again to count "
                "the LoRA run, or remove it to train every parameter")
"""The line that says what a config's verdict and plans count where Trinity refuses its LoRA configs (s80)."""


def _config(lora: str, model: str = "Qwen3-8B") -> str:
    return (HEAD + f"model:\n  model_path: Qwen/{model}\n  max_model_len: 8192\n" + lora
            + "explorer:\n  rollout_model:\n    engine_num: 2\n    tensor_parallel_size: 1\n")


def _answer(tmp_path: Path, cli: Cli, text: str, *check: str) -> tuple[int, dict[str, object]]:
    config = tmp_path / "trinity.yaml"
    config.write_text(text, encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h100", *check, "--json")
    assert err == ""
    return status, json.loads(out)[0]["current"]


def _coded(current: dict[str, object], code: str) -> list[str]:
    problems, codes = current["config_problems"], current["config_problem_codes"]
    assert isinstance(problems, list) and isinstance(codes, list)
    return [words for words, given in zip(problems, codes, strict=True) if given == code]


@pytest.mark.parametrize(("pattern", "module"), [
    (".*norm", "model.norm"),  # was counted as full fine-tuning: test_lorarest3_s75
    (".*\\.mlp", "model.layers.N.mlp"),
    ("model\\.layers\\.\\d+", "model.layers.N"),
    # OLMo 2's layers have no input_layernorm: refused all the same on Qwen3-8B's names (peftnames_s77)
    (".*\\.(q_proj|input_layernorm)", "model.layers.N.input_layernorm"),
    (".*", "model"),  # the model (Qwen3Model): PEFT skips the root, "" (review76b)
])
def test_a_regex_matching_a_module_peft_cannot_adapt_is_refused_naming_it(tmp_path: Path, cli: Cli, pattern: str,
                                                                          module: str) -> None:
    lora = f"  lora_configs: [{{lora_rank: 16, target_modules: '{pattern}'}}]\n"
    status, current = _answer(tmp_path, cli, _config(lora), "--check")
    # the checks' refusal on the model's names alone (peftgap_s77: the config's reading no longer judges the regex, and
    # its lines on the adapter's count and save are moot)
    # the plans count full fine-tuning, and say so, also where the reading counted LoRA on q_proj (refusedlora, s80)
    assert (status, current["refused"], current["config_problem_codes"]) == (
        1, True, ["lora-configs-refused", "lora-counted-as-full"])
    assert current["config_problems"] == [(
        f"model.lora_configs[0].target_modules '{pattern}', on Qwen3-8B (a dense model), matches {module}, "
        f"{UNSUPPORTED}: peft matches it whole (re.fullmatch) against each module's full name ({NAMES}), {FIX}"),
        COUNTED_FULL]


def test_peft_refuses_a_module_it_cannot_adapt_after_a_fused_half_and_takes_linears_and_embeddings() -> None:
    assert peft_target_refusal(".*norm", None, QWEN3) == f"matches model.norm, {UNSUPPORTED}"
    assert peft_target_refusal(".*mlp\\.experts", None, QWEN3_MOE) == (
        f"matches model.layers.N.mlp.experts, {UNSUPPORTED}")
    assert peft_target_refusal(".*mlp\\.experts", None, QWEN3) == "matches no module"
    # PEFT's conversion refuses a fused half before it adapts any module.
    assert peft_target_refusal(".*(experts\\.gate_proj|norm)", None, QWEN3_MOE) == (
        "matches the routed experts' gate_proj without their up_proj, which PEFT fuses into gate_up_proj (\"Cannot "
        "convert PEFT target(s) ... because they are fused\")")
    assert peft_target_refusal(".*norm", ".*norm", QWEN3) == "matches no module"  # excluded: nothing left
    for pattern in (".*embed_tokens|.*_proj", "lm_head", ".*mlp\\.gate"):
        assert peft_target_refusal(pattern, None, QWEN3_MOE if pattern == ".*mlp\\.gate" else QWEN3) is None


MOE_NAMES = ("model.layers.N.self_attn.{q,k,v,o}_proj, model.layers.N.mlp.gate, "
             "model.layers.N.mlp.experts.{gate,up,down}_proj, model.embed_tokens and lm_head")


@pytest.mark.parametrize(("pattern", "why"), [
    (".*mlp\\.experts", f"matches model.layers.N.mlp.experts, {UNSUPPORTED}"),
    # Refused on neither before: the checks left it to this line, which took the experts' match as PEFT's.
    (".*experts\\.gate_proj", (
        "matches the routed experts' gate_proj without their up_proj, which PEFT fuses into gate_up_proj (\"Cannot "
        "convert PEFT target(s) ... because they are fused\")")),
])
def test_a_regex_peft_fails_on_with_either_architecture_is_refused_on_a_mixture_of_experts(
        tmp_path: Path, cli: Cli, pattern: str, why: str) -> None:
    lora = f"  lora_configs: [{{lora_rank: 16, target_modules: '{pattern}'}}]\n"
    status, current = _answer(tmp_path, cli, _config(lora, "Qwen3-30B-A3B"), "--check")
    # the plans count full fine-tuning, and say so, also where the reading counted LoRA on gate_proj (refusedlora, s80)
    assert (status, current["refused"], current["config_problem_codes"]) == (
        1, True, ["lora-configs-refused", "lora-counted-as-full"])
    # on the model's own names alone since peftgap_s77 (the config's reading gave a dense model's and a MoE's)
    assert current["config_problems"] == [(
        f"model.lora_configs[0].target_modules '{pattern}', on Qwen3-30B-A3B (a mixture of experts), {why}: peft "
        f"matches it whole (re.fullmatch) against each module's full name ({MOE_NAMES}), {FIX}"),
        COUNTED_FULL]


MOE_UNSAVED = (
    "model.lora_configs trains LoRA on Qwen3-30B-A3B, a mixture of experts: with transformers 5 (Trinity 0.6 requires "
    "5.12.1 or later) peft 0.21.2 makes the adapter's target_parameters a set for the routed experts, which Trinity's "
    "_save_lora cannot write as JSON; it logs the error and leaves each checkpoint's lora_adapter/adapter_config.json "
    "cut short at \"target_parameters\": (its target_modules, a set of module names by then, are not saved split), so "
    "the explorer's vLLM fails to reload the adapter at the first weight sync (json.load), and so does any later load "
    "of it: train Qwen3-30B-A3B without LoRA (drop model.lora_configs), or patch Trinity's _save_lora to write "
    "target_parameters as a list before the run")


@pytest.mark.parametrize(("entry", "codes"), [
    ("{lora_rank: 16}", ["lora-moe-config-unsaved", "lora-counted-as-full"]),
    # the dense model's lora-targets-saved-split is left out: no regex is saved split here (s79)
    ("{lora_rank: 16, target_modules: '.*\\.(q_proj|v_proj)'}", ["lora-moe-config-unsaved", "lora-counted-as-full"]),
    ("{lora_rank: 16, path: /ckpt/adapter}", ["lora-moe-config-unsaved", "lora-counted-as-full"]),
])
def test_lora_on_a_mixture_of_experts_is_cautioned_as_its_adapter_config_is_cut_short(
        tmp_path: Path, cli: Cli, entry: str, codes: list[str]) -> None:
    status, current = _answer(tmp_path, cli, _config(f"  lora_configs: [{entry}]\n", "Qwen3-30B-A3B"))
    assert (status, current["refused"], current["config_problem_codes"]) == (0, False, codes)
    # a regex: the short names PEFT makes of it, which it adapts in every layer (peftgap_s77)
    made = "; peft made that set of '.*\\.(q_proj|v_proj)': q_proj, v_proj, which it adapts in every layer, whatever "
    made += "layers the regular expression names"
    # an attention regex adapts no router nor routed expert: PEFT's target_parameters an empty set (s79)
    empty = "a set (an empty one here: its target_modules name neither the router nor a routed expert),"
    assert _coded(current, "lora-moe-config-unsaved") == [
        MOE_UNSAVED.replace("split)", f"split{made})").replace("a set for the routed experts,", empty)
        if "target_modules" in entry else MOE_UNSAVED]


@pytest.mark.parametrize(("entry", "model"), [
    ("{lora_rank: 16}", "Qwen3-8B"),  # a dense model: PEFT converts nothing, and the config is saved whole
    ("{lora_rank: 0, path: /ckpt/adapter}", "Qwen3-30B-A3B"),  # no LoRA on verl 0.8 or later
    ("{lora_rank: 16, target_modules: '.*norm'}", "Qwen3-30B-A3B"),  # refused as such
    ("{lora_rank: 16, target_modules: [q_proj]}", "Qwen3-30B-A3B"),  # refused as such
])
def test_no_moe_caution_without_lora_a_mixture_of_experts_trains(tmp_path: Path, cli: Cli, entry: str,
                                                                 model: str) -> None:
    _, current = _answer(tmp_path, cli, _config(f"  lora_configs: [{entry}]\n", model))
    assert "lora-moe-config-unsaved" not in current["config_problem_codes"]
