"""Dropped keys in ``stages`` and on each verl Trinity 0.6 runs on (s83, helper stagesdrop): a stage's
``trainer.trainer_config`` gets the lines the config's own does (``key-dropped``, ``verl-key``, ``verl-key-refused``),
naming the stage's path, 0.5's refusal coming as that stage starts; and the lines on a key Trinity 0.6's legacy
``veRLConfig`` lacks say what 0.6 does with it on verl before 0.8 and on verl 0.8 or later (the verl installed chooses,
no key): dropped outside the sections it passes verl, ignored where it sets the key itself, else passed to verl's own
config. ``solve --from-config`` refuses a config whose stage sets ``trainer`` before it checks it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from config_cases import ARR, with_key, written
from test_release06_s82 import PASSED_08
from test_smallslips24_s77 import Cli

from solver.tables import load_catalog
from solver.trinity import trinity_config_problems

KL_TOP = f"{ARR}.actor.kl_loss_coef"
REFUSED_05 = "Trinity 0.5 refuses the config as {} (its veRLConfig has no such key there)"
SLIP = "; did you mean ppo_mini_batch_size?"
ANY_VERL = ("Trinity 0.6 drops it on any verl (its veRLConfig on verl before 0.8 has no such key there, and on 0.8 or "
            "later {}), so it does nothing")
ALONE = "it passes verl model, actor, ref, rollout and critic alone"
SECTION_TAKEN = ("Trinity 0.6 drops it on verl before 0.8 (its veRLConfig has no such key there), where it does "
                 "nothing, and on verl 0.8 or later takes its keys into verl's own {} config, which fails the trainer "
                 "as it starts on any the installed verl lacks (not judged here)")


def _problems(config: dict[str, Any], version: str | None) -> list[tuple[str, str]]:
    return [(problem.code.value, problem.words) for problem in trinity_config_problems(
        config, load_catalog().model("Qwen3-8B"), 4, version=version)]


def _staged() -> dict[str, Any]:
    """The base config with two stages, each setting a trainer whose ``trainer_config`` has a slip of the actor's
    ``ppo_mini_batch_size`` (and a known key, which no line names)."""
    own = {"trainer_config": {"actor_rollout_ref": {"actor": {"ppo_mini_batchsize": 4, "ppo_epochs": 2}}}}
    return with_key("stages", [{"stage_name": "warm", "trainer": own}, {"stage_name": "main", "trainer": own}])


def _stage_key(index: int) -> str:
    return f"stages[{index}].trainer.trainer_config.actor_rollout_ref.actor.ppo_mini_batchsize"


FIRST = REFUSED_05.format("it starts stages[0]")
LATER = REFUSED_05.format("it starts stages[1], after the stages before it have run")
ACTOR_08 = PASSED_08.format("actor")


@pytest.mark.parametrize(("version", "expected"), [
    ("0.5", [("verl-key-refused", f"{_stage_key(0)}: {FIRST}: remove it{SLIP}"),
             ("verl-key-refused", f"{_stage_key(1)}: {LATER}: remove it{SLIP}")]),
    ("0.6", [("key-dropped", f"{_stage_key(0)}: {ACTOR_08}{SLIP}"),
             ("key-dropped", f"{_stage_key(1)}: {ACTOR_08}{SLIP}")]),
    (None, [("verl-key", f"{_stage_key(0)}: {FIRST}, and {ACTOR_08}{SLIP}"),
            ("verl-key", f"{_stage_key(1)}: {LATER}, and {ACTOR_08}{SLIP}")]),
])
def test_a_stages_trainer_config_gets_the_lines_naming_the_stage(version: str | None,
                                                                 expected: list[tuple[str, str]]):
    codes = ("verl-key-refused", "verl-key", "key-dropped")
    assert [line for line in _problems(_staged(), version) if line[0] in codes] == expected


def test_a_stage_without_a_trainer_config_or_not_a_mapping_gets_none():
    config = with_key("stages", [{"stage_name": "a"}, "b", {"stage_name": "c", "trainer": {"trainer_config": 3}},
                                 {"stage_name": "d", "trainer": {"trainer_config": {"actor_rollout_ref": {
                                     "actor": {"ppo_mini_batch_size": 8}}}}}])
    assert [code for code, _ in _problems(config, "0.6") if code == "key-dropped"] == []
    assert [code for code, _ in _problems(with_key("stages", {"a": 1}), "0.6") if code == "key-dropped"] == []


def test_the_keys_left_to_other_lines_at_the_top_are_said_at_a_stage():
    # at the top, the ref's model has its own line (ref-model) and verl 0.8's critic engine is read by rft-solver;
    # a stage's get the dropped-key line, no other line speaking of them
    trainer = {"trainer_config": {"actor_rollout_ref": {"ref": {"model": {"path": "/m"}}},
                                  "critic": {"fsdp": {"param_offload": True}}}}
    lines = _problems(with_key("stages", [{"stage_name": "a", "trainer": trainer}]), "0.6")
    at = "stages[0].trainer.trainer_config"
    assert lines == [("key-dropped", f"{at}.actor_rollout_ref.ref.model: {PASSED_08.format('ref')}"),
                     ("key-dropped", f"{at}.critic.fsdp: {PASSED_08.format('critic')}")]


@pytest.mark.parametrize(("key", "value", "words"), [
    # a key of a section 0.6 passes verl 0.8: verl's own config takes it, or fails on it
    (f"{ARR}.actor.ppo_mini_batchsize", 16, PASSED_08.format("actor") + SLIP),
    ("trainer.trainer_config.critic.use_torch_compile", True, PASSED_08.format("critic")),
    # one it sets itself (FROZEN_KEYS), which the legacy veRLConfig lacks too
    (f"{ARR}.actor.rollout_n", 8, ANY_VERL.format("it sets verl's actor.rollout_n itself")),
    (f"{ARR}.ref.rollout_n", 8, ANY_VERL.format("it sets verl's ref.rollout_n itself")),
    # outside model, actor, ref, rollout and critic
    ("trainer.trainer_config.data.foo", 1, ANY_VERL.format(ALONE)),
    (f"{ARR}.foo", 1, ANY_VERL.format(ALONE)),
    # a role's section written flat in trainer_config, or actor_rollout_ref's critic: taken, where not shadowed
    ("trainer.trainer_config.rollout", {"n": 2}, SECTION_TAKEN.format("rollout")),
    (f"{ARR}.critic", {"ppo_epochs": 2}, SECTION_TAKEN.format("critic")),
])
def test_the_line_says_what_each_verl_path_does(key: str, value: Any, words: str):
    assert [line for line in _problems(with_key(key, value), "0.6") if line[0] == "key-dropped"] == [
        ("key-dropped", f"{key}: {words}")]


@pytest.mark.parametrize(("key", "shadow", "taken"), [
    ("trainer.trainer_config.actor", f"{ARR}.actor", "it takes actor_rollout_ref.actor in its place"),
    (f"{ARR}.critic", "trainer.trainer_config.critic", "it takes the section's own critic in its place")])
def test_a_section_verl_08_takes_from_elsewhere_is_dropped_on_any_verl(key: str, shadow: str, taken: str):
    config = with_key(shadow, {"ppo_epochs": 2}, with_key(key, {"ppo_epochs": 2}))
    assert [line for line in _problems(config, "0.6") if line[0] == "key-dropped"] == [
        ("key-dropped", f"{key}: {ANY_VERL.format(taken)}")]


TOP = with_key(f"{ARR}.actor.rollout_n", 8, with_key("trainer.trainer_config.data.foo", 1))
ROLLOUT_N = (f"{ARR}.actor.rollout_n: Trinity 0.6 drops it on any verl (its veRLConfig on verl before 0.8 has no such "
             "key there, and on 0.8 or later it sets verl's actor.rollout_n itself), so it does nothing")
DATA_FOO = ("trainer.trainer_config.data.foo: Trinity 0.6 drops it on any verl (its veRLConfig on verl before 0.8 has "
            "no such key there, and on 0.8 or later it passes verl model, actor, ref, rollout and critic alone), so it "
            "does nothing")


def test_check_says_each_path_in_text_and_json(cli: Cli, tmp_path: Path):
    config = str(written(tmp_path, TOP))
    status, out, err = cli("--from-config", config, "--gpu", "h100", "--check", "--trinity-version", "0.6")
    flat = " ".join(out.split())
    assert (status, err) == (0, "")
    assert f"but: {ROLLOUT_N} but: {DATA_FOO} plan " in flat
    status, out, err = cli("--from-config", config, "--gpu", "h100", "--trinity-version", "0.6", "--json")
    current = json.loads(out)[0]["current"]
    assert (status, err, current["refused"]) == (0, "", False)
    assert (current["config_problem_codes"], current["config_problems"]) == (
        ["key-dropped", "key-dropped"], [ROLLOUT_N, DATA_FOO])


@pytest.mark.parametrize("flags", [(), ("--json",)])
def test_from_config_refuses_a_stage_that_sets_a_trainer_before_checking_it(cli: Cli, tmp_path: Path,
                                                                            flags: tuple[str, ...]):
    config = written(tmp_path, _staged())
    assert cli("--from-config", str(config), "--gpu", "h100", "--check", "--trinity-version", "0.6", *flags) == (
        2, "", (f"solve: error: --from-config {config}: stages[0] sets trainer: Trinity runs that stage with it in "
                "place of the config's own, whole, so not the trainer rft-solver plans from the config (or not on its "
                "GPUs, or at its batch); plan each stage from a config of its own, with that stage's sections in "
                "place of the config's\n"))


@pytest.mark.parametrize(("stages", "expected"), [
    # the config's own trainer is built as the first stage that keeps it starts; by none, never
    ([{"stage_name": "a"}], [f"{KL_TOP}: {REFUSED_05.format('it loads it')}: remove it"]),
    ([{"stage_name": "a", "trainer": {}}, {"stage_name": "b", "trainer": None}],
     [f"{KL_TOP}: {REFUSED_05.format('it starts stages[1], after the stages before it have run')}: remove it"]),
    ([{"stage_name": "a", "trainer": {}}, {"stage_name": "b", "trainer": {}}], []),
])
def test_the_configs_own_section_is_refused_as_the_first_stage_that_keeps_it_starts(stages: list[dict[str, Any]],
                                                                                    expected: list[str]):
    config = with_key("stages", stages, with_key(KL_TOP, 0.01))
    assert [words for code, words in _problems(config, "0.5") if code == "verl-key-refused"] == expected
