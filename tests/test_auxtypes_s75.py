"""An ``explorer.auxiliary_models`` entry's typed keys (session s75, helper auxtypes): Trinity types each entry as it
types the rollout model (``InferenceModelConfig``: ``auxiliary_models: List[InferenceModelConfig]``,
``trinity/common/config.py:760`` in 0.6.0, ``:719`` in 0.5.2), so OmegaConf refuses the same wrong types there as it
loads the config; rft-solver judges them with the rollout model's rules and words. ``enable_expert_parallel``, a
``bool`` field (``:525`` in 0.6.0), is judged as a flag in both."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from config_cases import BASE, config_lines, with_key, written

from solver.tables import load_catalog
from solver.trinity import trinity_config_problems

ROLLOUT_ONE_FEWER = {**BASE, "explorer": {"rollout_model": {"engine_num": 3}}}
"""`BASE` with a rollout engine fewer, which one auxiliary model's engine (1 GPU) takes back."""
EVERY_RELEASE = "every Trinity release refuses the config as it loads it"
WRONG = [  # keys the plan does not read in an auxiliary model: the plan goes on, the config refused
    ("enable_lora", "maybe", "flag-not-boolean-refused",
     f"must be true or false, got 'maybe': {EVERY_RELEASE} (its typed config's bool field)"),
    ("enable_expert_parallel", "maybe", "flag-not-boolean-refused",
     f"must be true or false, got 'maybe': {EVERY_RELEASE} (its typed config's bool field)"),
    ("max_model_len", "x", "wrong-type-refused",
     f"must be a whole number, got 'x': {EVERY_RELEASE} (its typed config's int field)"),
]


def _auxiliary(tmp_path: Path, key: str, value: object) -> Path:
    models = [{"model_path": "Qwen/Qwen3-0.6B", key: value}]
    return written(tmp_path, with_key("explorer.auxiliary_models", models, ROLLOUT_ONE_FEWER))


@pytest.mark.parametrize(("key", "value", "code", "words"), WRONG)
def test_a_wrong_type_in_an_auxiliary_model_is_refused_as_in_the_rollout_model(cli, tmp_path: Path, key: str,
                                                                               value: object, code: str, words: str):
    named = f"explorer.auxiliary_models[0].{key}"
    assert config_lines(cli, _auxiliary(tmp_path, key, value), named) == ([(code, f"{named} {words}")], True, 1)
    rollout = written(tmp_path, with_key(f"explorer.rollout_model.{key}", value))
    rollout_named = f"explorer.rollout_model.{key}"
    assert config_lines(cli, rollout, rollout_named) == ([(code, f"{rollout_named} {words}")], True, 1)


@pytest.mark.parametrize(("key", "value"), [("enable_lora", True), ("enable_expert_parallel", "false"),
                                            ("engine_num", 1), ("engine_type", "vllm"), ("max_model_len", 4096)])
def test_an_auxiliary_model_with_values_of_its_types_has_no_line(cli, tmp_path: Path, key: str, value: object):
    assert config_lines(cli, _auxiliary(tmp_path, key, value), "explorer.auxiliary_models[") == ([], False, 0)


def test_keys_the_rollout_model_does_not_type_check_are_left_alone_in_an_auxiliary_model(cli, tmp_path: Path):
    # gpu_memory_utilization and dtype: read for the rollout's memory alone, not judged for their type there either
    for key in ("gpu_memory_utilization", "dtype"):
        assert config_lines(cli, _auxiliary(tmp_path, key, ["a"]), "explorer.auxiliary_models[") == ([], False, 0)


def test_each_auxiliary_entry_is_named_by_its_index(cli, tmp_path: Path):
    models = [{"model_path": "Qwen/Qwen3-0.6B"}, {"model_path": "Qwen/Qwen3-0.6B", "enable_lora": "maybe"}]
    config = written(tmp_path, with_key("explorer.auxiliary_models", models,
                                        {**BASE, "explorer": {"rollout_model": {"engine_num": 2}}}))
    assert config_lines(cli, config, "explorer.auxiliary_models[") == ([("flag-not-boolean-refused", (
        f"explorer.auxiliary_models[1].enable_lora must be true or false, got 'maybe': {EVERY_RELEASE} (its typed "
        "config's bool field)"))], True, 1)


PLANNED = [("engine_num", "x", "must be a whole number, got 'x'", "int"),
           ("engine_type", ["vllm"], "must be text, got ['vllm']", "str"),
           ("tensor_parallel_size", "x", "must be a whole number, got 'x'", "int")]
"""Keys the plan reads for the explorer's GPUs: a wrong type there is bad input to the command (as the rollout
model's), and a line of `trinity_config_problems`."""


@pytest.mark.parametrize("version", [None, "0.5"])
@pytest.mark.parametrize(("key", "value", "wrong", "field"), PLANNED)
def test_a_wrong_type_the_plan_reads_in_an_auxiliary_model_is_refused_as_in_the_rollout_model(
        cli, tmp_path: Path, key: str, value: object, wrong: str, field: str, version: str | None):
    model = load_catalog().model("qwen3-8b")
    for section in ("explorer.rollout_model", "explorer.auxiliary_models[0]"):
        named = f"{section}.{key}"
        if section == "explorer.rollout_model":
            config = written(tmp_path, with_key(f"{section}.{key}", value))
        else:
            config = _auxiliary(tmp_path, key, value)
        mapping = yaml.safe_load(config.read_text(encoding="utf-8"))
        problems = trinity_config_problems(mapping, model, 8, version=version)  # type: ignore[arg-type]
        assert [(problem.code.value, problem.words) for problem in problems] == [("wrong-type-refused", (
            f"{named} {wrong}: {EVERY_RELEASE} (its typed config's {field} field)"))]
        flags = ("--trinity-version", version) if version else ()
        assert cli("--from-config", str(config), "--gpu", "h100", "--check", *flags) == (
            2, "", f"solve: error: --from-config {config}: {named} {wrong}\n")
