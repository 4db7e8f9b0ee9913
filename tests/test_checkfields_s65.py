"""Trinity's field names as a shipped table, per release; OmegaConf's ``???`` where Trinity's merge keeps it; a given
``model.rope_scaling``'s type read as vLLM reads it (session 65)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_trinity import long_plan

import solver.tables.loaders
from solver.query import ConfigProblemCode
from solver.results import Plan
from solver.tables import TableError, load_catalog, load_trinity_fields
from solver.tables.inputs import TrinityFields
from solver.tables.reading import load_validated
from solver.trinity import trinity_config_problems
from solver.trinity.patch import _stale_rope
from solver.trinity.plan_keys import keys_for_plan

C = ConfigProblemCode
REFUSED_WORDS = ("is ???, a value missing: every Trinity release refuses the config as it loads it ({section} is no "
                 "typed section, so the merge keeps the ??? and OmegaConf.to_object raises on it); give it a value, or "
                 "remove the key")


def _problems(mapping: dict[str, object], model: str = "8B") -> list[tuple[str, str]]:
    return [(problem.code.value, problem.words)
            for problem in trinity_config_problems(mapping, load_catalog().model(model), 8)]


def test_the_shipped_field_names_are_each_releases_as_its_wheel_has_them():
    # each section's fields as its release's wheel has them (keyed by section since session 66: test_checkclass_s66)
    releases = load_trinity_fields().releases
    assert list(releases) == ["0.5.0", "0.5.1", "0.5.2", "0.6.0"]
    trainer = {release: set(schema.sections["trainer"]) for release, schema in releases.items()}
    assert trainer["0.5.2"] < trainer["0.6.0"] and {"megatron", "offload_policy"} <= trainer["0.6.0"] - trainer["0.5.2"]
    buffer = {release: set(schema.sections["buffer"]) for release, schema in releases.items()}
    assert buffer["0.5.0"] - buffer["0.5.1"] == {"pad_token_id"}
    model = {release: set(schema.sections["model"]) for release, schema in releases.items()}
    assert "external_model" in model["0.5.2"] - model["0.5.1"]


@pytest.mark.parametrize(("field", "code"), [
    ("tinker", "unresolved-value"),  # a section of every release's ModelConfig: the merge fills it in
    ("pad_token_id", "unresolved-value-refused"),  # 0.5.0's BufferConfig has it, no release's ModelConfig
    ("megatron", "unresolved-value-refused"),  # 0.6.0's TrainerConfig alone
    ("pad_token_idz", "unresolved-value-refused"),
])
def test_a_reference_to_a_field_of_some_release_is_not_refused(field: str, code: str):
    ((said, words),) = _problems({"model": {"model_path": "Qwen/Qwen3-8B", "critic_model_path": f"${{model.{field}}}"}})
    assert said == code and f"the config has no model.{field}" in words


RELEASE = 'releases:\n  "0.6.0":\n    algorithms: [ppo]\n    '  # algorithms since session 82


@pytest.mark.parametrize(("text", "words"), [
    (RELEASE + 'sections: {"": [b, a]}\n    open: {}\n    null: []\n',
     'releases, 0.6.0: sections, "": not sorted; sort them'),
    (RELEASE + 'sections: {"": [a, a]}\n    open: {}\n    null: []\n',
     'releases, 0.6.0: sections, "" lists \'a\' twice; list each once'),
    (RELEASE + 'sections: {"": [a, yes]}\n    open: {}\n    null: []\n',
     'releases, 0.6.0, sections, "" item 2: must be text, got true'),
    (RELEASE + 'sections: {"": [a, Max-Len]}\n    open: {}\n    null: []\n',
     'releases, 0.6.0: sections, "": \'Max-Len\' is no field name'),
    ('releases:\n  "0.6":\n    algorithms: [ppo]\n    sections: {"": [a]}\n    open: {}\n    null: []\n',
     "releases: '0.6' is no release: name one as 0.6.0 is"),
    (RELEASE + 'sections: {"": []}\n    open: {}\n    null: []\n',
     'releases, 0.6.0, sections, "": must list at least 1, got []'),
    ("releases: {}\n", "releases: must list at least 1, got {}"),
    ("fields: [a]\n", "unknown field 'fields' (fields: releases)"),
    ('releases:\n  "0.5.0": [a]\n', "releases, 0.5.0: must be a mapping, got ['a']"),  # session 65's names alone
])
def test_a_malformed_field_names_file_is_refused_in_one_line(tmp_path: Path, text: str, words: str):
    path = tmp_path / "trinity-fields.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TableError) as refused:
        load_validated(TrinityFields, path)
    message = str(refused.value)
    assert message.startswith(f"{path}: {words}") and "\n" not in message


def test_check_exits_2_in_one_line_where_the_shipped_field_names_are_malformed(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    tables = tmp_path / "tables"
    shutil.copytree(solver.tables.loaders.shipped_tables_directory(), tables)
    (tables / "trinity-fields.yaml").write_text(RELEASE + 'sections: {"": [b, a]}\n    open: {}\n    null: []\n',
                                                encoding="utf-8")
    config = tmp_path / "c.yaml"
    config.write_text("model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 4096\n"
                      "  critic_model_path: ${model.max_prompt_tokens}\n", encoding="utf-8")
    monkeypatch.setattr(solver.tables.loaders, "shipped_tables_directory", lambda: tables)
    load_trinity_fields.cache_clear()
    try:
        status, out, err = cli("--from-config", str(config), "--gpu", "h200", "--check")
    finally:
        load_trinity_fields.cache_clear()
    assert status == 2 and out == "" and "Traceback" not in err
    assert err.strip().splitlines() == [
        f"solve: error: {tables / 'trinity-fields.yaml'}: releases, 0.6.0: sections, \"\": not sorted; sort them"]


TRAINER_CONFIG = ("trainer", "trainer_config")


@pytest.mark.parametrize(("mapping", "places"), [
    # a key --check reads, one it does not, a list's item: Trinity's merge copies trainer_config (typed Any) as written
    ({"trainer": {"trainer_config": {"actor_rollout_ref": {"actor": {
        "ppo_max_token_len_per_gpu": "???", "optim": {"lr": "???"},
        "checkpoint": {"save_contents": ["model", "???"]}}}}}},
     ["trainer.trainer_config.actor_rollout_ref.actor.ppo_max_token_len_per_gpu",
      "trainer.trainer_config.actor_rollout_ref.actor.optim.lr",
      "trainer.trainer_config.actor_rollout_ref.actor.checkpoint.save_contents[1]"]),
    ({"trainer": {"trainer_config": {"actor_rollout_ref": "???"}}}, ["trainer.trainer_config.actor_rollout_ref"]),
    ({"model": {"model_path": "Qwen/Qwen3-8B", "rope_scaling": {"rope_type": "yarn", "factor": "???"}}},
     ["model.rope_scaling.factor"]),
    ({"explorer": {"rollout_model": {"rope_scaling": {"rope_type": "yarn", "factor": "???"}}}},
     ["explorer.rollout_model.rope_scaling.factor"]),
    # read through a reference, and where it is: one line
    ({"model": {"model_path": "Qwen/Qwen3-8B", "critic_model_path": "${trainer.trainer_config.a.b}"},
      "trainer": {"trainer_config": {"a": {"b": "???"}}}}, ["trainer.trainer_config.a.b"]),
])
def test_a_missing_value_inside_an_untyped_section_is_refused_once(mapping: dict[str, object], places: list[str]):
    mapping.setdefault("model", {"model_path": "Qwen/Qwen3-8B"})
    problems = [(code, words) for code, words in _problems(mapping) if "???" in words]
    sections = [next(section for section in ("trainer.trainer_config", "explorer.rollout_model.rope_scaling",
                                             "model.rope_scaling") if place.startswith(section)) for place in places]
    assert problems == [("unresolved-value-refused", f"{place} {REFUSED_WORDS.format(section=section)}")
                        for place, section in zip(places, sections)]


@pytest.mark.parametrize("mapping", [
    # a typed field, or the untyped section itself (a typed field): the merge keeps Trinity's default
    {"model": {"model_path": "Qwen/Qwen3-8B", "max_prompt_tokens": "???"}},
    {"model": {"model_path": "Qwen/Qwen3-8B", "rope_scaling": "???"}},
    {"model": {"model_path": "Qwen/Qwen3-8B"}, "trainer": {"max_token_len_per_gpu": "???"}},
    {"model": {"model_path": "Qwen/Qwen3-8B", "critic_model_path": "${model.max_prompt_tokens}",
               "max_prompt_tokens": "???"}},
])
def test_a_missing_value_trinity_gives_its_default_is_not_refused(mapping: dict[str, object]):
    problems = _problems(mapping)
    assert problems and all(code == "unresolved-value" and words.startswith("cannot check") for code, words in problems)


def test_check_refuses_a_missing_value_under_trainer_config(cli, tmp_path: Path):
    config = tmp_path / "c.yaml"
    example = (Path(__file__).parents[1] / "docs" / "examples" / "trinity.yaml").read_text(encoding="utf-8")
    config.write_text(example.replace("          param_offload: false", "          param_offload: false\n"
                                      "        optim:\n          lr: ???", 1), encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h200", "--check", "--json")
    assert status == 1 and "Traceback" not in err
    current = json.loads(out)[0]["current"]
    assert current["refused"] is True and current["config_problem_codes"] == ["unresolved-value-refused"]
    assert current["config_problems"] == [
        "trainer.trainer_config.actor_rollout_ref.actor.optim.lr "
        + REFUSED_WORDS.format(section="trainer.trainer_config")]


YARN_4 = {"factor": 4.0, "original_max_position_embeddings": 32768,
          "rope_theta": 1000000}  # a base: no line that Trinity 0.6's trainer needs one (ropecheck, s79)


def test_a_legacy_type_key_is_read_as_rope_type():
    # transformers copies type to rope_type where rope_type is absent (standardize_rope_params): mode train
    legacy = _problems({"mode": "train", "model": {"model_path": "x", "max_model_len": 131072,
                                                   "rope_scaling": {"type": "yarn", **YARN_4}}})
    modern = _problems({"mode": "train", "model": {"model_path": "x", "max_model_len": 131072,
                                                   "rope_scaling": {"rope_type": "yarn", **YARN_4}}})
    assert legacy == modern and [code for code, _ in legacy] == ["rope-scaling-off-guide"]
    # Trinity hands a vLLM rollout the mapping past that: vLLM reads rope_type alone (s73, test_ropesix_s73)
    rollout = _problems({"model": {"model_path": "x", "max_model_len": 131072,
                                   "rope_scaling": {"type": "yarn", **YARN_4}}})
    assert [code for code, _ in rollout] == ["rope-type-missing-refused", "rope-scaling-off-guide"]


def test_a_rope_type_key_is_read_whatever_its_value_as_vllm_reads_it():
    # vLLM reads rope_type where the key is there, null too, not the legacy type beside it
    problems = _problems({"model": {"model_path": "x", "max_model_len": 131072,
                                    "rope_scaling": {"rope_type": None, "type": "yarn", **YARN_4}}})
    assert ("rope-scaling-wrong", "model.rope_scaling.rope_type must be yarn, got null") in problems


def test_write_removes_a_rope_scaling_whose_rope_type_is_not_the_models_own():
    llama = load_catalog().model("Llama-3.1-8B")
    plan = Plan.model_construct(max_model_len=32768)
    assert _stale_rope({"rope_type": None, "type": "llama3", "factor": 8.0}, plan, llama)
    assert not _stale_rope({"type": "llama3", "factor": 8.0}, plan, llama)
    assert not _stale_rope({"rope_type": "llama3", "type": "llama3", "factor": 8.0}, plan, llama)


@pytest.mark.parametrize("rope_scaling", [{"type": None}, {"rope_type": None, "type": "yarn"}, {"type": "yarn"},
                                          {"factor": 2.0}])
def test_the_plan_names_the_yarn_type_with_the_key_vllm_reads(rope_scaling: dict[str, object]):
    # rope_type always, which vLLM reads alone as Trinity hands it the mapping; type where the config has it (s73)
    keys = {key.path[-1]: key.existing_only for key in keys_for_plan(
        long_plan(), load_catalog().model("4B"), {"model": {"rope_scaling": rope_scaling}})
            if key.path[:2] == ("model", "rope_scaling")}
    assert keys == {"rope_type": False, "type": True, "factor": False, "original_max_position_embeddings": False,
                    "rope_theta": False}  # added where missing: the model's own, for 0.6's trainer (ropetheta, s78)
