"""Nulls in a Trinity config that session 58 left unsaid, settled in session 59 (nulls2).

- A flag under ``trainer.trainer_config`` written null: Trinity 0.5 merges the section into its typed ``veRLConfig``
  (``bool`` fields) and refuses it; Trinity 0.6 keeps it as written, then fails on it as the trainer starts with verl
  before 0.8 (``OmegaConf.structured``) unless it sets the flag to the trainer's, and on verl 0.8 or later hands it to
  verl as written, whose FSDP engine reads None as false (checked with OmegaConf 2.3.0 and hydra-core 1.3.8).
- A whole section written null (``cluster: null``): every release's ``load_config`` refuses it ("field 'cluster' is
  not Optional", checked with the ``load_config`` of Trinity 0.5.0 to 0.6.0); ``trainer.trainer_config`` is typed
  ``Any``, so a null there loads.
- ``explorer.auxiliary_models[i]``'s keys are the rollout model's (``InferenceModelConfig``): a null is refused alike.
- With ``--trinity-version 0.5``, a null in one of Trinity 0.6's ``trainer`` keys is said once, by the line on the key
  0.5 lacks."""

from __future__ import annotations

from pathlib import Path

import pytest
from config_cases import ARR, BASE, config_lines, with_key, written

OFFLOAD_FLAGS = ("param_offload", "optimizer_offload", "offload_policy")
FIX = "remove the key for Trinity's default, or write true or false"
FAILS = "fails on it as the trainer starts with verl before 0.8"
IN_06 = {
    f"{ARR}.model.enable_gradient_checkpointing": (
        f"{FAILS}, and on verl 0.8 or later reads it as false (gradient checkpointing off, which the verdict assumes "
        "on)"),
    f"{ARR}.actor.entropy_from_logits_with_chunking": f"{FAILS} (on verl 0.8 or later it does not read it)",
    f"{ARR}.actor.entropy_checkpointing": f"{FAILS} (on verl 0.8 or later it does not read it)",
    **{f"{ARR}.{role}.fsdp_config.{flag}": (
        f"sets it to trainer.{flag} with verl before 0.8, and on verl 0.8 or later reads it as false (unset, it takes "
        f"trainer.{flag})") for role in ("actor", "ref") for flag in OFFLOAD_FLAGS},
    f"{ARR}.model.use_remove_padding": "sets it to trainer.use_remove_padding whatever it says",
}
"""What Trinity 0.6 does with each flag under ``trainer.trainer_config`` written null, in the line's words."""


@pytest.mark.parametrize("key", list(IN_06))
@pytest.mark.parametrize("version", [None, "0.5", "0.6"])
def test_a_null_flag_under_trainer_config_is_said_as_each_release_takes_it(cli, tmp_path: Path, key: str,
                                                                           version: str | None):
    flags = ("--trinity-version", version) if version else ()
    null = f"{key} is null, not true or false"
    if version == "0.5":
        expected = [("typed-null-refused", (
            f"{null}: Trinity's typed config (OmegaConf's bool field) refuses it, with Trinity 0.5: {FIX}"))]
    elif version == "0.6" and key.endswith("model.use_remove_padding"):  # set to the trainer's, as unset
        expected = []
    else:
        refused_05 = "Trinity 0.5's typed config (OmegaConf's bool field) refuses it; " if version is None else ""
        expected = [("typed-null", f"{null}: {refused_05}Trinity 0.6 {IN_06[key]}; {FIX}")]
    refused = version == "0.5"
    assert config_lines(cli, written(tmp_path, with_key(key, None)), key, *flags) == (expected, refused, int(refused))


def test_a_null_flag_given_by_an_interpolation_is_said_too(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("S59_NULLS", raising=False)
    key = f"{ARR}.model.enable_gradient_checkpointing"
    config = written(tmp_path, with_key(key, "${oc.env:S59_NULLS,null}"))
    lines, refused, check = config_lines(cli, config, key, "--trinity-version", "0.5")
    assert ([code for code, _ in lines], refused, check) == (["typed-null-refused"], True, 1)


@pytest.mark.parametrize(("section", "kind"), [
    ("cluster", "a mapping"), ("trainer", "a mapping"), ("explorer", "a mapping"), ("algorithm", "a mapping"),
    ("buffer", "a mapping"), ("model.tinker", "a mapping"), ("model.external_model", "a mapping"),
    ("explorer.rollout_model", "a mapping"), ("explorer.auxiliary_models", "a list")])
@pytest.mark.parametrize("version", [None, "0.5", "0.6"])
def test_a_section_written_null_is_refused_with_every_release(cli, tmp_path: Path, section: str, kind: str,
                                                              version: str | None):
    flags = ("--trinity-version", version) if version else ()
    expected = [("typed-null-refused", (
        f"{section} is null, not {kind}: Trinity's typed config refuses it (the section is not Optional), with every "
        f"Trinity release and verl version: remove the key for Trinity's defaults, or write {kind}"))]
    assert config_lines(cli, written(tmp_path, with_key(section, None)), section, *flags) == (expected, True, 1)


def test_a_null_trainer_config_loads_as_none(cli, tmp_path: Path):
    key = "trainer.trainer_config"
    assert config_lines(cli, written(tmp_path, with_key(key, None)), key) == ([], False, 0)


AUXILIARY = {**BASE, "explorer": {"rollout_model": {"engine_num": 3}}}
"""`BASE` with a rollout engine fewer: one auxiliary model's engine (1 GPU unset) leaves the trainer its 4 GPUs."""


@pytest.mark.parametrize(("key", "field_type", "kind"), [
    ("engine_num", "int", "a whole number"), ("tensor_parallel_size", "int", "a whole number"),
    ("data_parallel_size", "int", "a whole number"), ("pipeline_parallel_size", "int", "a whole number"),
    ("engine_type", "str", "text")])
def test_a_null_in_an_auxiliary_model_is_refused_as_in_the_rollout_model(cli, tmp_path: Path, key: str,
                                                                         field_type: str, kind: str):
    models = [{"model_path": "Qwen/Qwen3-0.6B"}, {"model_path": "Qwen/Qwen3-0.6B", key: None}]
    config = written(tmp_path, with_key("explorer.auxiliary_models", models,
                                        {**AUXILIARY, "explorer": {"rollout_model": {"engine_num": 2}}}))
    named = f"explorer.auxiliary_models[1].{key}"
    expected = [("typed-null-refused", (
        f"{named} is null, not {kind}: Trinity's typed config (OmegaConf's {field_type} field) refuses it, with every "
        f"Trinity release and verl version: remove the key for Trinity's default, or write {kind}"))]
    assert config_lines(cli, config, "explorer.auxiliary_models[") == (expected, True, 1)


def test_an_auxiliary_model_with_values_has_no_null_line(cli, tmp_path: Path):
    config = written(tmp_path, with_key("explorer.auxiliary_models",
                                        [{"model_path": "Qwen/Qwen3-0.6B", "engine_num": 1}], AUXILIARY))
    assert config_lines(cli, config, "explorer.auxiliary_models[") == ([], False, 0)


@pytest.mark.parametrize(("key", "code"), [("trainer.param_offload", "trainer-offload-keys-refused"),
                                           ("trainer.offload_policy", "trainer-offload-keys-refused"),
                                           ("trainer.use_remove_padding", "trainer-keys-refused")])
def test_with_trinity_05_a_null_in_a_key_it_lacks_is_said_once(cli, tmp_path: Path, key: str, code: str):
    lines, refused, check = config_lines(cli, written(tmp_path, with_key(key, None)), key, "--trinity-version", "0.5")
    assert ([line_code for line_code, _ in lines], refused, check) == ([code], True, 1)
    assert "Trinity 0.5 refuses" in lines[0][1]


def test_a_null_section_is_said_before_the_null_keys(cli, tmp_path: Path):
    config = written(tmp_path, with_key("model.critic_model_path", None,
                                        {**BASE, "model": {**BASE["model"], "tinker": None}}))
    lines, refused, check = config_lines(cli, config, "model.")
    assert ([words.split(" ")[0] for _, words in lines], refused, check) == (
        ["model.tinker", "model.critic_model_path"], True, 1)
