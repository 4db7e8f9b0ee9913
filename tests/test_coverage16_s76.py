"""Coverage of session 76's changed lines (helper coverage16): a ``target_modules`` that is a number or a boolean,
read as the text Trinity's typed config makes of it, refused as matching no module; verl before 0.8's
``target_modules`` that is no regular expression, counted as full fine-tuning without the saved-adapter caution; on a
mixture of experts, a new adapter's regex PEFT cannot compile refused with no ``lora-moe-config-unsaved`` caution."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_lorarest4_s76 import Cli, _check, _config, _lines
from test_lorarest5_s76 import _answer, _coded
from test_lorarest5_s76 import _config as _moe_config

NO_MATCH = (
    "matches no module: peft matches it whole (re.fullmatch) against each module's full name "
    "(model.layers.N.self_attn.{q,k,v,o}_proj, model.layers.N.mlp.{gate,up,down}_proj, model.embed_tokens and "
    "lm_head), and Trinity fails as it makes the adapter: give all-linear, or a regular expression that matches whole "
    "names, such as .*\\.(q_proj|v_proj)")
WHOLE = (": peft matches it whole (re.fullmatch) against each module's full name, and Trinity fails as it makes the "
         "adapter: give all-linear, or a regular expression that matches whole names, such as .*\\.(q_proj|v_proj)")
"""A regex that does not compile: the config's reading refuses it, naming no model's module names (peftgap_s77)."""
LEGACY = "trainer:\n  trainer_config:\n    actor_rollout_ref:\n      model: {{lora_rank: 8, target_modules: {}}}\n"
FULL = (" the trainer holds gradients and optimizer states for the adapter alone, but the verdict and the plans count "
        "full fine-tuning's, as the tables measured ({why}): a LoRA run needs less memory than shown (conservative: "
        "without Offload, LoRA leaves each GPU's shard about 4 of the 16 bytes per parameter counted; solve "
        "--lora-rank RANK counts a new adapter's)")


COUNTED_FULL = ("with model.lora_configs refused (lora-configs-refused says why), the verdict and the plans count "
                "full fine-tuning, which holds more than a LoRA run: fix model.lora_configs and plan again to count "
                "the LoRA run, or remove it to train every parameter")
"""The line that says what a config's verdict and plans count where Trinity refuses its LoRA configs (s80)."""


@pytest.mark.parametrize(("written", "read"), [("5", "5"), ("true", "True"), ("1.5", "1.5"), ("'5'", "5")])
def test_a_number_or_boolean_target_modules_is_refused_as_the_text_trinity_reads(
        tmp_path: Path, cli: Cli, written: str, read: str) -> None:
    # LoRAConfig.target_modules is a str: OmegaConf's StringNode makes str(value) of a scalar, a regex matching none;
    # the checks refuse it on the model's names (peftgap_s77: the config's reading counts it as that text).
    text = _config(f"  lora_configs: [{{lora_rank: 16, target_modules: {written}}}]\n")
    assert _lines(text)[0] == ("lora-counted-as-full", (
        "with LoRA (model.lora_configs)" + FULL.format(why=f"its target_modules '{read}' matches no module")))
    status, current = _check(tmp_path, cli, text)
    assert (status, current["refused"], current["config_problem_codes"]) == (1, True, ["lora-configs-refused",
                                                                                       "lora-counted-as-full"])
    assert current["config_problems"] == [(f"model.lora_configs[0].target_modules '{read}', on Qwen3-8B (a dense "
                                          f"model), {NO_MATCH}"), COUNTED_FULL]


def test_verl_before_08_target_modules_no_regex_is_counted_as_full_without_the_saved_caution() -> None:
    refused_regex = _lines(_config() + LEGACY.format("'(['"), "0.5")
    assert refused_regex == [("lora-counted-as-full", (
        "with LoRA (trainer.trainer_config.actor_rollout_ref.model.lora_rank)"
        + FULL.format(why="its target_modules '([' is no regular expression")))]
    # a regex PEFT takes there is cautioned, naming verl before 0.8's key; on Trinity 0.6 verl 0.8 ignores the rank,
    # and the line says so rather than judge the regex.
    taken = _lines(_config() + LEGACY.format("'.*q_proj'"), "0.5")
    assert [code for code, _ in taken] == ["lora-counted-as-full", "lora-targets-saved-split"]
    assert taken[1][1].startswith(
        "trainer.trainer_config.actor_rollout_ref.model.target_modules '.*q_proj' is a regular expression, which ")
    assert _lines(_config() + LEGACY.format("'(['")) == [("lora-counted-as-full", (
        "with verl before 0.8 LoRA (trainer.trainer_config.actor_rollout_ref.model.lora_rank)"
        + FULL.format(why="Trinity 0.6 on verl 0.8 or later ignores lora_rank and trains every parameter")))]


@pytest.mark.parametrize(("entry", "refusal"), [
    ("{lora_rank: 16, target_modules: '(['}",
     "target_modules '([' is no regular expression (unterminated character set at position 1)" + WHOLE),
    ("{lora_rank: 16, target_modules: '.*q_proj', exclude_modules: '('}", (
        "exclude_modules '(' is no regular expression (missing ), unterminated subpattern at position 0): peft "
        "matches it whole (re.fullmatch) against each module's full name, and Trinity fails as it makes the adapter: "
        "give a regular expression that matches whole names, such as .*\\.v_proj, or remove it")),
    ("{lora_rank: 16, target_modules: 5}", "target_modules '5', on Qwen3-30B-A3B (a mixture of experts), "
     + NO_MATCH.replace("mlp.{gate,up,down}_proj", "mlp.gate, model.layers.N.mlp.experts.{gate,up,down}_proj")),
])
def test_a_mixture_of_experts_new_adapter_refused_as_no_regex_gets_no_unsaved_caution(
        tmp_path: Path, cli: Cli, entry: str, refusal: str) -> None:
    # The caution is on an adapter PEFT makes (lora-moe-config-unsaved); one PEFT cannot compile is refused alone.
    status, current = _answer(tmp_path, cli, _moe_config(f"  lora_configs: [{entry}]\n", "Qwen3-30B-A3B"))
    # an exclude_modules that is no regex counts full fine-tuning too, and says so (refusedlora, s80)
    assert (status, current["refused"], current["config_problem_codes"]) == (0, True, ["lora-configs-refused",
                                                                                       "lora-counted-as-full"])
    assert _coded(current, "lora-configs-refused") == [f"model.lora_configs[0].{refusal}"]
