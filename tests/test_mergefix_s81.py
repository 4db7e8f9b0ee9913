"""Session 81, the lead's merge of loracautions beside lorarule: the ``lora-excluded-adapted`` caution is said of the
LoRA adapter Trinity makes anew wherever the config gives it (`solver.trinity.config.new_adapter`): under Trinity 0.5,
verl's own ``actor_rollout_ref.model`` keys, named as such; and an ``exclude_modules`` that is no regular expression
is the config reading's refusal alone (no caution, no traceback)."""

from __future__ import annotations

from typing import Any

import solver
from solver.query import ConfigProblemCode
from solver.trinity import trinity_config_problems

CATALOG = solver.load_catalog()
MOE = CATALOG.model("Qwen3-30B-A3B")
VERL_MODEL = ("trainer", "trainer_config", "actor_rollout_ref", "model")


def _excluded_adapted(mapping: dict[str, Any], version: str) -> list[str]:
    problems = trinity_config_problems(mapping, MOE, 8, version=version, experts="either")  # type: ignore[arg-type]
    return [problem.words for problem in problems if problem.code is ConfigProblemCode.LORA_EXCLUDED_ADAPTED]


def _verl_lora(excluded: str) -> dict[str, Any]:
    return {"model": {"model_path": "x", "max_model_len": 8192},
            "trainer": {"trainer_config": {"actor_rollout_ref": {"model": {
                "lora_rank": 8, "target_modules": "all-linear", "exclude_modules": excluded}}}}}


def test_verls_own_lora_keys_under_0_5_get_the_caution_naming_their_own_key():
    said = _excluded_adapted(_verl_lora(".*\\.mlp\\..*"), "0.5")
    assert len(said) == 1
    assert said[0].startswith("trainer.trainer_config.actor_rollout_ref.model.exclude_modules '.*\\.mlp\\..*' matches "
                              "Qwen3-30B-A3B's router (mlp.gate) and routed experts")


def test_verls_own_lora_keys_under_0_6_are_unread_so_no_caution():
    assert _excluded_adapted(_verl_lora(".*\\.mlp\\..*"), "0.6") == []


def test_an_exclusion_that_is_no_regular_expression_is_refused_alone():
    mapping = {"model": {"model_path": "x", "max_model_len": 8192, "lora_configs": [
        {"lora_rank": 8, "target_modules": "all-linear", "exclude_modules": "(["}]}}
    problems = trinity_config_problems(mapping, MOE, 8, version="0.6")
    codes = [problem.code for problem in problems if problem.code.value.startswith("lora")]
    assert ConfigProblemCode.LORA_EXCLUDED_ADAPTED not in codes
    assert ConfigProblemCode.LORA_CONFIGS_REFUSED not in codes  # the reading's refusal, said before the checks
