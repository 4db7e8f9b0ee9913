"""What each Trinity release refuses of the keys rft-solver reads or ``--write`` writes, settled in session 59
(keys05).

Every key of `READ_KEYS`, and every key `keys_for_plan` writes, was given a value and null and loaded with the
``load_config`` of Trinity 0.5.0, 0.5.1, 0.5.2 and 0.6.0, then, for 0.5, with ``trainer.trainer_config`` merged into
that release's ``veRLConfig`` (their other imports stubbed, OmegaConf 2.3.0). What that run found and rft-solver did
not say:

- every 0.5 release refuses, in any value, null too: the rollout model's (and each auxiliary model's)
  ``data_parallel_size`` and ``pipeline_parallel_size``, the actor's ``fsdp_config`` entropy keys, a role's ``engine``
  (``unknown-key-refused`` with ``--trinity-version 0.5``); 0.5.0 and 0.5.1 refuse ``model.external_model``, 0.5.2
  takes it (``unknown-key``);
- every 0.5 release refuses a section under ``trainer.trainer_config`` written null, and the critic's
  ``fsdp_config`` offload flags written null (``typed-null-refused`` with 0.5, else ``typed-null``: 0.6 fails on them
  with verl before 0.8);
- an actor ``offload_policy`` written null beside Trinity 0.6's ``trainer.offload_policy: true``: verl 0.8 reads it
  as false, so the verdict takes Offload as off, as for a ``false`` there.

``--write --trinity-version 0.5`` writes none of the keys 0.5 refuses: it leaves a role's ``engine`` alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from config_cases import ARR, BASE, config_lines, with_key, written

from solver.query import ACTOR_ROLLOUT_REF, make_query
from solver.solve import plan
from solver.tables import load_catalog
from solver.trinity.keys import KEYS_05_LACKS, keys_05_refuses
from solver.trinity.plan_keys import keys_for_plan

CRITIC = "trainer.trainer_config.critic"
UNKNOWN_05 = {None: [], "0.5": ["unknown-key-refused"], "0.6": []}
"""A key every Trinity 0.5 release lacks, given a value: refused with 0.5; 0.6 takes it."""
NULL_UNDER_TRAINER_CONFIG = {None: ["typed-null"], "0.5": ["typed-null-refused"], "0.6": ["typed-null"]}
"""A null that Trinity 0.5's ``veRLConfig`` refuses: 0.6 fails on it with verl before 0.8 alone."""

KEYS: list[tuple[str, Any, dict[str | None, list[str]]]] = [
    ("explorer.rollout_model.data_parallel_size", 1, UNKNOWN_05),
    ("explorer.rollout_model.pipeline_parallel_size", 1, UNKNOWN_05),
    ("explorer.rollout_model.enable_expert_parallel", True, UNKNOWN_05),
    ("explorer.rollout_model.enable_expert_parallel", False, UNKNOWN_05),
    ("explorer.rollout_model.enable_expert_parallel", None,
     {None: ["typed-null-refused"], "0.5": ["unknown-key-refused"], "0.6": ["typed-null-refused"]}),
    # a null: 0.5 lacks the key, said once; 0.6 types it int
    ("explorer.rollout_model.data_parallel_size", None,
     {None: ["typed-null-refused"], "0.5": ["unknown-key-refused"], "0.6": ["typed-null-refused"]}),
    ("explorer.auxiliary_models", [{"model_path": "Qwen/Qwen3-0.6B", "engine_num": 0, "pipeline_parallel_size": 1}],
     UNKNOWN_05),
    ("explorer.auxiliary_models", [{"model_path": "Qwen/Qwen3-0.6B", "engine_num": 0, "enable_expert_parallel": True}],
     UNKNOWN_05),
    # a null in an auxiliary model alike: said once with 0.5, as the key it lacks
    ("explorer.auxiliary_models", [{"model_path": "Qwen/Qwen3-0.6B", "engine_num": 0, "pipeline_parallel_size": None}],
     {None: ["typed-null-refused"], "0.5": ["unknown-key-refused"], "0.6": ["typed-null-refused"]}),
    (f"{ARR}.actor.fsdp_config.entropy_checkpointing", True, UNKNOWN_05),
    (f"{ARR}.actor.fsdp_config.entropy_from_logits_with_chunking", False, UNKNOWN_05),
    (f"{ARR}.actor.fsdp_config.entropy_from_logits_with_chunking", None, UNKNOWN_05),
    (f"{ARR}.actor.engine", {"param_offload": True},
     {None: ["offload-flags-under-engine"], "0.5": ["unknown-key-refused"], "0.6": ["offload-flags-under-engine"]}),
    (f"{ARR}.ref.engine", None, UNKNOWN_05),
    (f"{CRITIC}.fsdp", {"param_offload": True}, UNKNOWN_05),
    (f"{CRITIC}.fsdp", None, UNKNOWN_05),
    ("model.external_model", {"enable": False}, {None: [], "0.5": ["unknown-key"], "0.6": []}),
    # a null: 0.5.0 and 0.5.1 lack the key, 0.5.2 and 0.6 refuse the null: one line, refused by every release
    ("model.external_model", None,
     {None: ["typed-null-refused"], "0.5": ["typed-null-refused"], "0.6": ["typed-null-refused"]}),
    *((f"{ARR}{section}", None, NULL_UNDER_TRAINER_CONFIG)
      for section in ("", ".actor", ".ref", ".rollout", ".model", ".actor.fsdp_config", ".ref.fsdp_config")),
    *((f"{CRITIC}{section}", None, NULL_UNDER_TRAINER_CONFIG) for section in ("", ".model", ".model.fsdp_config")),
    *((f"{CRITIC}.model.fsdp_config.{flag}", None, NULL_UNDER_TRAINER_CONFIG)
      for flag in ("param_offload", "optimizer_offload", "offload_policy")),
    # what 0.5 takes: no line
    (f"{ARR}.actor.entropy_checkpointing", True, {None: [], "0.5": [], "0.6": []}),
    ("explorer.rollout_model.tensor_parallel_size", 1, {None: [], "0.5": [], "0.6": []}),
]
"""(key, value, the codes of the lines on it by ``--trinity-version``: none given, 0.5, 0.6), as each release's own
``load_config`` (and, for 0.5, ``veRLConfig``) takes the key."""


def _codes(cli, tmp_path: Path, config: dict[str, Any], version: str | None) -> tuple[list[str], bool, int]:
    """The config's problem codes as ``solve --from-config --json`` gives them on H100 80GB with `version`, whether
    it is refused, and the exit status of the same with ``--check``."""
    lines, refused, check_status = config_lines(cli, written(tmp_path, config), "",
                                                *(("--trinity-version", version) if version else ()))
    return [code for code, _ in lines], refused, check_status


@pytest.mark.parametrize("version", [None, "0.5", "0.6"])
def test_the_config_the_keys_are_added_to_has_no_line_with_each_release(cli, tmp_path: Path, version: str | None):
    assert _codes(cli, tmp_path, BASE, version)[0] == []


@pytest.mark.parametrize(("key", "value", "by_version"), KEYS)
@pytest.mark.parametrize("version", [None, "0.5", "0.6"])
def test_each_key_is_said_as_each_release_takes_it(cli, tmp_path: Path, key: str, value: Any,
                                                   by_version: dict[str | None, list[str]], version: str | None):
    codes, refused, check_status = _codes(cli, tmp_path, with_key(key, value), version)
    expected = by_version[version]
    assert codes == expected
    assert refused is any(code.endswith("-refused") for code in expected)
    assert check_status == (1 if refused else 0)


LACKING_WORDS = {
    "explorer.rollout_model.data_parallel_size": (
        "Trinity 0.6's inference model", "InferenceModelConfig",
        "Trinity 0.5 takes an engine's GPUs as its tensor_parallel_size"),
    "explorer.rollout_model.pipeline_parallel_size": (
        "Trinity 0.6's inference model", "InferenceModelConfig",
        "Trinity 0.5 takes an engine's GPUs as its tensor_parallel_size"),
    "explorer.rollout_model.enable_expert_parallel": (
        "Trinity 0.6's inference model", "InferenceModelConfig",
        "Trinity 0.5's rollout engines run without expert parallelism"),
    f"{ARR}.actor.fsdp_config.entropy_from_logits_with_chunking": (
        "verl 0.8's fsdp_config", "FSDPConfig", "verl before 0.8, which Trinity 0.5 runs, reads the actor's own"),
    f"{ARR}.actor.fsdp_config.entropy_checkpointing": (
        "verl 0.8's fsdp_config", "FSDPConfig", "verl before 0.8, which Trinity 0.5 runs, reads the actor's own"),
    **{f"{ARR}.{role}.fsdp_config.ulysses_sequence_parallel_size": (
        "verl 0.8's fsdp_config", "FSDPConfig", ("verl before 0.8, which Trinity 0.5 runs, reads the role's own "
                                                 "ulysses_sequence_parallel_size")) for role in ("actor", "ref")},  # recompute88: from the fields' table
    f"{ARR}.actor.engine": ("verl 0.8's actor", "Actor",
                            "Trinity 0.5 reads a role's offload flags from its fsdp_config"),
    f"{ARR}.ref.engine": ("verl 0.8's ref", "Ref", "Trinity 0.5 reads a role's offload flags from its fsdp_config"),
    f"{CRITIC}.fsdp": ("verl 0.8's critic", "Critic",
                       "Trinity 0.5 reads the critic's offload flags from its model.fsdp_config"),
}
"""Each key every Trinity 0.5 release lacks: whose section has it, the class of 0.5 that lacks it, and the line's
last words."""


def test_the_keys_0_5_lacks_are_those_the_run_found():
    assert sorted(".".join(path) for path in KEYS_05_LACKS) == sorted(LACKING_WORDS)


@pytest.mark.parametrize("key", sorted(LACKING_WORDS))
def test_a_key_0_5_lacks_is_named_with_its_section_and_what_to_do(cli, tmp_path: Path, key: str):
    value = None if key.endswith(("engine", "fsdp")) else True if key.endswith("parallel") else 1
    path = written(tmp_path, with_key(key, value))
    status, out, err = cli("--from-config", str(path), "--gpu", "h100", "--trinity-version", "0.5", "--json")
    assert status == 0, err
    whose, schema, why = LACKING_WORDS[key]
    assert json.loads(out)[0]["current"]["config_problems"] == [(
        f"{key}: a key of {whose}, which Trinity 0.5 refuses (its {schema} has no such key), so the config does not "
        f"load: remove it (--write leaves it to you; {why})")]


TRAINER_OFFLOAD = {"trainer_strategy": "fsdp2", "param_offload": True, "optimizer_offload": True,
                   "offload_policy": True}
"""Trinity 0.6's offload flags under ``trainer``, all on, with FSDP2: Offload."""


@pytest.mark.parametrize("version", [None, "0.6"])
def test_an_actor_offload_policy_null_beside_the_trainers_turns_offload_off(
        cli, tmp_path: Path, version: str | None):
    base = {**BASE, "trainer": TRAINER_OFFLOAD}
    policy = f"{ARR}.actor.fsdp_config.offload_policy"
    flags = ("--gpu", "h100", "--json", *(("--trinity-version", version) if version else ()))
    answers = {}
    for name, value in (("on", True), ("null", None), ("false", False)):
        status, out, err = cli("--from-config", str(written(tmp_path, with_key(policy, value, base))), *flags)
        assert status == 0, err
        answers[name] = json.loads(out)[0]["current"]
    assert answers["on"]["offload"] is True and answers["on"]["config_problem_codes"] == []
    # verl 0.8 reads the null as false: as with false there, Offload is off, said on one line
    assert answers["null"]["offload"] is False
    assert answers["null"]["config_problem_codes"] == ["typed-null"]
    assert ", so the verdict takes Offload as off; remove the key" in answers["null"]["config_problems"][0]
    assert answers["false"]["offload"] is False
    assert answers["false"]["config_problem_codes"] == ["offload-policies-disagree"]


def test_a_ref_offload_policy_null_beside_the_trainers_leaves_offload_on(cli, tmp_path: Path):
    # The verdict's Offload is the actor's: the ref's null is said, with no words on the verdict.
    policy = f"{ARR}.ref.fsdp_config.offload_policy"
    config = written(tmp_path, with_key(policy, None, {**BASE, "trainer": TRAINER_OFFLOAD}))
    status, out, err = cli("--from-config", str(config), "--gpu", "h100", "--json")
    assert status == 0, err
    current = json.loads(out)[0]["current"]
    assert current["offload"] is True and current["config_problem_codes"] == ["typed-null"]
    assert "verdict" not in current["config_problems"][0]


@pytest.mark.parametrize("trainer", [BASE["trainer"], {**TRAINER_OFFLOAD, "offload_policy": False}])
def test_an_actor_offload_policy_null_without_the_trainers_policy_on_gets_no_verdict_words(
        cli, tmp_path: Path, trainer: dict[str, Any]):
    # Without Trinity 0.6's flags under trainer, or with its offload_policy off, the null turns nothing off.
    policy = f"{ARR}.actor.fsdp_config.offload_policy"
    (line,), _, _ = config_lines(cli, written(tmp_path, with_key(policy, None, {**BASE, "trainer": trainer})), policy)
    assert line[0] == "typed-null" and "verdict" not in line[1]
    assert line[1].endswith("remove the key for Trinity's default, or write true or false")


FAILS_WITH_06 = ("Trinity 0.6 fails on it as it checks the config with verl before 0.8 (synchronize_config reads the "
                 "section), and on verl 0.8 or later hands verl the null in place of the section; ")
SECTION_NULL_WORDS = {
    None: ("typed-null", f"Trinity 0.5's typed config refuses it (the section is not Optional); {FAILS_WITH_06}"),
    "0.5": ("typed-null-refused",
            "Trinity's typed config refuses it (the section is not Optional), with Trinity 0.5: "),
    "0.6": ("typed-null", FAILS_WITH_06),
}
"""A section under ``trainer.trainer_config`` written null: the code and the words between "not a mapping: " and the
fix, by ``--trinity-version``."""


@pytest.mark.parametrize("version", [None, "0.5", "0.6"])
def test_a_null_section_under_trainer_config_is_told_it_is_not_a_mapping(cli, tmp_path: Path, version: str | None):
    code, words = SECTION_NULL_WORDS[version]
    config = written(tmp_path, with_key(CRITIC, None))
    assert config_lines(cli, config, CRITIC, *(("--trinity-version", version) if version else ()))[0] == [(code, (
        f"{CRITIC} is null, not a mapping: {words}remove the key for Trinity's defaults, or write a mapping"))]


def test_write_for_0_5_writes_no_key_0_5_refuses(cli, tmp_path: Path):
    config = with_key(f"{ARR}.actor.engine", {"param_offload": True, "offload_policy": True},
                      with_key(f"{ARR}.ref.engine", {"param_offload": False}))
    source, out = written(tmp_path, config), tmp_path / "out.yaml"
    status, _, err = cli("--from-config", str(source), "--gpu", "h100", "--offload", "--trinity-version", "0.5",
                         "--write", str(out))
    assert status == 0, err
    patched = yaml.safe_load(out.read_text(encoding="utf-8"))
    roles = patched["trainer"]["trainer_config"]["actor_rollout_ref"]
    assert roles["actor"]["engine"] == {"param_offload": True, "offload_policy": True}  # as it was: left to the user
    assert roles["ref"]["engine"] == {"param_offload": False}
    assert roles["actor"]["fsdp_config"]["offload_policy"] is True
    assert "actor.engine: a key of verl 0.8's actor, which Trinity 0.5 refuses" in err


def test_the_keys_a_plan_sets_for_0_5_are_none_0_5_refuses():
    catalog = load_catalog()
    (answer,) = plan(make_query(catalog, gpu="a100", model="4B", objective="max_len", budget_gpus=6), catalog)
    offload = answer.plans[0]  # Env + Offload + SP=4: the offload flags, YaRN, FSDP2
    assert offload.offload
    config = with_key(f"{ARR}.actor.engine", {"param_offload": False},
                      with_key(f"{ARR}.ref.engine", {"param_offload": False}))
    model = catalog.model("4B")
    written = {key.path for key in keys_for_plan(offload, model, config, version="0.5")}
    assert {path for path in written for lacking in KEYS_05_LACKS if path[:len(lacking)] == lacking} == set()
    assert keys_05_refuses({path[1]: 1 for path in written if len(path) == 2 and path[0] == "trainer"}) == ()
    assert (*ACTOR_ROLLOUT_REF, "actor", "fsdp_config", "offload_policy") in written
    # for 0.6, the engine's flags are set alike, so none says otherwise
    assert (*ACTOR_ROLLOUT_REF, "actor", "engine", "param_offload") in {
        key.path for key in keys_for_plan(offload, model, config, version="0.6")}
