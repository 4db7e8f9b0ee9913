"""review76b (session 76): lorarest5's caution that a mixture of experts' LoRA adapter config is cut short
(``lora-moe-config-unsaved``) holds only where PEFT 0.21.2 converts the model type's LoRA config for transformers 5's
fused experts (``_convert_peft_config_moe`` returns at once for a model type transformers'
``_MODEL_TO_CONVERSION_PATTERN`` does not map, Mixtral aside): not for Qwen2-MoE (Qwen1.5-MoE-A2.7B), whose
``target_parameters`` stays None and whose adapter config Trinity saves whole (`MoE.peft_converts_experts`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from solver.tables.model_config import PEFT_CONVERTED_MODEL_TYPES, load_model_config
from solver.tables.peft_match import QWEN3, QWEN3_MOE, TargetMatch, peft_target_match, peft_target_refusal

Cli = Callable[..., tuple[int, str, str]]
HF_CONFIGS = Path(__file__).parent / "data" / "hf-configs"


@pytest.mark.parametrize(("name", "converted"), [
    ("Qwen1.5-MoE-A2.7B", False),  # qwen2_moe: not a key of _MODEL_TO_CONVERSION_PATTERN
    ("Qwen2-57B-A14B", False),  # qwen2_moe too
    ("Qwen3-30B-A3B", True),  # qwen3_moe -> qwen2_moe's conversion
    ("Mixtral-8x7B-v0.1", True),  # mixtral: PEFT adds it
    ("DeepSeek-V2-Lite", True),  # deepseek_v2 -> qwen2_moe's conversion
])
def test_a_config_json_says_whether_peft_converts_its_experts(name: str, converted: bool) -> None:
    model = load_model_config(HF_CONFIGS / f"{name}.json")
    assert model.moe is not None and model.moe.peft_converts_experts is converted


def test_the_converted_model_types_are_transformers_and_mixtral_not_qwen2_moe() -> None:
    assert "qwen2_moe" not in PEFT_CONVERTED_MODEL_TYPES and "granitemoe" not in PEFT_CONVERTED_MODEL_TYPES
    assert {"qwen3_moe", "mixtral", "deepseek_v3", "olmoe"} <= set(PEFT_CONVERTED_MODEL_TYPES)
    assert len(PEFT_CONVERTED_MODEL_TYPES) == 25 == len(set(PEFT_CONVERTED_MODEL_TYPES))


def _codes(tmp_path: Path, cli: Cli, name: str) -> tuple[bool, list[str]]:
    config = tmp_path / "trinity.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
                      "buffer: {batch_size: 15, train_batch_size: 60}\n"
                      f"model:\n  model_path: /models/{name}\n  max_model_len: 8192\n"
                      "  lora_configs: [{lora_rank: 16}]\n"
                      "explorer:\n  rollout_model:\n    engine_num: 2\n    tensor_parallel_size: 1\n", encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--model-config", str(HF_CONFIGS / f"{name}.json"),
                           "--gpu", "h100", "--json")
    assert (status, err) == (0, "")
    current = json.loads(out)[0]["current"]
    return current["refused"], current["config_problem_codes"]


def test_lora_on_qwen2_moe_is_not_cautioned_as_cut_short(tmp_path: Path, cli: Cli) -> None:
    # Before: ['lora-moe-config-unsaved', 'lora-counted-as-full'] though PEFT saves Qwen2-MoE's config whole.
    assert _codes(tmp_path, cli, "Qwen1.5-MoE-A2.7B") == (False, ["lora-counted-as-full"])


def test_lora_on_mixtral_is_still_cautioned_as_cut_short(tmp_path: Path, cli: Cli) -> None:
    assert _codes(tmp_path, cli, "Mixtral-8x7B-v0.1") == (
        True, ["lora-moe-config-unsaved", "lora-counted-as-full", "rollout-engine-memory-refused"])


# PEFT skips the model itself ("") as it matches target_modules (inject_adapter, tuners/tuners_utils.py:949-950 in
# peft 0.21.2): a regex that also matches the empty string adapts what else it matches, and is not refused.

OPTIONAL_Q = "(.*\\.q_proj)?"


def test_a_regex_matching_the_empty_string_matches_no_other_module() -> None:
    assert peft_target_match(OPTIONAL_Q) == TargetMatch(("q_proj",), (), None)  # was other="the model itself"
    assert [peft_target_refusal(OPTIONAL_Q, None, names) for names in (QWEN3, QWEN3_MOE)] == [None, None]
    assert peft_target_match(".*").other == "model"  # the first module PEFT fails on: Qwen3Model


def test_a_config_whose_regex_matches_the_empty_string_is_taken(tmp_path: Path, cli: Cli) -> None:
    config = tmp_path / "trinity.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
                      "model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 8192\n"
                      f"  lora_configs: [{{lora_rank: 16, target_modules: '{OPTIONAL_Q}'}}]\n", encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h100", "--check", "--json")
    current = json.loads(out)[0]["current"]
    # Before: refused, "matches the model itself, which PEFT cannot adapt".
    assert (status, err, current["refused"]) == (0, "", False)
    assert "lora-configs-refused" not in current["config_problem_codes"]
