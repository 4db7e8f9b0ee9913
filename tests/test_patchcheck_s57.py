"""Tests for session 57's patchcheck: what --write warns of a config it patched is decided in solver.trinity
(`patched_config_problems`, with codes), so that an API user gets the lines --write prints: one on Trinity 0.6's keys
a ``<<: *anchor`` merges into ``trainer`` for 0.5 (which the patch leaves), not the check's, which say --write
removes them; and the CLI's warnings are those problems' words, as before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from command_words import trinity_config_problems

import solver
from solver.query import REFUSED_CONFIG_CODES, ConfigProblem, ConfigProblemCode, QueryError
from solver.rules import COMMAND_OPTIONS
from solver.trinity import load_config_mapping, patched_trinity_config
from solver.trinity import patched_config_problems as api_patched_config_problems


def patched_config_problems(*args: Any, **kwargs: Any) -> list[ConfigProblem]:
    """`solver.trinity.patched_config_problems` in the words --write prints (the command's flags, `COMMAND_OPTIONS`;
    the API's own name `patch_trinity_config`: tests/test_apiwords2_s63.py)."""
    return api_patched_config_problems(*args, option_names=COMMAND_OPTIONS, **kwargs)

C = ConfigProblemCode
HEAD = ("mode: both\nalgorithm: {algorithm_type: grpo}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
        "explorer: {rollout_model: {engine_num: 2, tensor_parallel_size: 1}}\n"
        "model: {model_path: Qwen/Qwen3-8B, max_model_len: 16384}\n")
"""6 trainer GPUs of A100 80GB for Qwen3-8B at 16384 tokens, with nothing to warn of; a trainer section may follow."""
MERGED = HEAD + "base: &base\n  balance_batch: true\n  param_offload: false\ntrainer:\n  <<: *base\n  megatron: {}\n"
"""A trainer section with a key of 0.6's of its own (megatron) and two merged in from an anchor (an offload flag and
balance_batch), whose lines in the check have codes of their own."""
BASE_REFUSED = ConfigProblem(C.NO_SUCH_KEY_REFUSED, (
    "base: no release of Trinity (0.5.0 to 0.6.0) has this key there, so Trinity refuses the config (it knows no such "
    "key): remove it, or move it where Trinity reads it; where it parks YAML anchors, put each anchor on the first key "
    "that uses it, then remove it"))
"""The anchor's own key, ``base``, which Trinity's typed Config lacks in every release: the configs that hold it are
refused for it too (s74), whatever the patch does."""
MERGED_WORDS = ("trainer.param_offload, trainer.balance_batch: keys of Trinity 0.6's trainer, which Trinity 0.5 "
                "refuses (its TrainerConfig has no such key), so the config does not load; a '<<: *anchor' merges "
                "them into trainer, and --write leaves the anchor as it is, since other sections may share it: remove "
                "them there")
ANCHORED = ("mode: both\nalgorithm: {algorithm_type: grpo}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
            "model: {model_path: Qwen/Qwen3-8B, max_model_len: &len 65536}\n"
            "explorer:\n  max_timeout: *len\n"
            "  rollout_model: {engine_num: 2, tensor_parallel_size: 1, max_model_len: 49152}\n")
"""The model's length an anchor, which the explorer's timeout repeats: the plan at 16384 changes the one, not the
other; and the rollout's own length, other than the model's."""
ANCHORED_WORDS = ("model.max_model_len is the anchor &len, which other keys repeat (*len): the patch sets it to 16384 "
                  "and leaves explorer.max_timeout at 65536 (the anchor moves there)")

ROLLOUT_WORDS = ("explorer.rollout_model.max_model_len 49152 is beyond Qwen3-8B's native context of 40960, which the "
                 "rollout's vLLM takes as its longest length: the rollout's vLLM refuses it unless "
                 "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set before Ray starts; set it (and check that the model handles "
                 "this length), or lower explorer.rollout_model.max_model_len to 40960")
"""The rollout's own length, other than the model's, which the patch leaves (session 67: vLLM refuses it, no YaRN
given)."""


@pytest.fixture(scope="module")
def plan_and_model() -> tuple[solver.Plan, solver.Model]:
    """The cheapest plan of Qwen3-8B at 16384 tokens on A100 80GB (Env on 6 GPUs), and the model."""
    (answer,) = solver.plan("8B", gpu="a100-80g", max_model_len=16384)
    assert answer.best is not None and (answer.best.gpus, answer.best.setting.label) == (6, "Env")
    return answer.best, solver.load_catalog().model("8B")


def test_merged_keys_for_05_get_their_own_line_not_the_checks(plan_and_model):
    plan, model = plan_and_model
    patched = patched_trinity_config(MERGED, plan, model, version="0.5")
    assert (patched.removed_for_05, patched.merged_for_05) == (
        ("trainer.megatron",), ("trainer.param_offload", "trainer.balance_batch"))
    # The check alone, on the patched text, says what --write does not do: remove the merged keys.
    checked = trinity_config_problems(load_config_mapping(patched.text, "patched"), model, plan.gpus, version="0.5")
    assert [problem.code for problem in checked] == [C.TRAINER_OFFLOAD_KEYS_REFUSED, C.TRAINER_KEYS_REFUSED,
                                                     C.NO_SUCH_KEY_REFUSED]
    assert all("--write does" in problem.words for problem in checked[:2])
    assert patched_config_problems(MERGED, patched, plan, model, version="0.5") == [
        ConfigProblem(C.TRAINER_KEYS_MERGED_REFUSED, MERGED_WORDS), BASE_REFUSED]
    assert C.TRAINER_KEYS_MERGED_REFUSED in REFUSED_CONFIG_CODES  # Trinity 0.5 does not load it


def test_a_05_key_the_trainer_sets_and_an_anchor_merges_in_too_is_left_merged_not_said_removed(plan_and_model):
    # The patch removes the section's own megatron, and the anchor's shows through: the config still does not load
    # with 0.5, so the line is the merged keys' (the check's says --write removes it), naming it with balance_batch.
    plan, model = plan_and_model
    text = HEAD + "base: &base\n  megatron: {}\n  balance_batch: true\ntrainer:\n  <<: *base\n  megatron: {}\n"
    patched = patched_trinity_config(text, plan, model, version="0.5")
    assert (patched.removed_for_05, patched.merged_for_05) == (
        ("trainer.megatron",), ("trainer.balance_batch", "trainer.megatron"))
    assert patched_config_problems(text, patched, plan, model, version="0.5") == [ConfigProblem(
        C.TRAINER_KEYS_MERGED_REFUSED, MERGED_WORDS.replace("trainer.param_offload, trainer.balance_batch",
                                                            "trainer.balance_batch, trainer.megatron")), BASE_REFUSED]


def test_a_patched_config_without_problems_has_none(plan_and_model):
    # MERGED has the anchor's key alone (for 0.6, its trainer keys load).
    plan, model = plan_and_model
    for text, version in ((HEAD, None), (HEAD, "0.5"), (MERGED, "0.6"), (MERGED, None)):
        patched = patched_trinity_config(text, plan, model, version=version)
        assert patched_config_problems(text, patched, plan, model, version=version) == (
            [] if text == HEAD else [BASE_REFUSED]), (text, version)


def test_a_key_the_patch_changes_on_an_anchor_is_a_problem_with_its_code(plan_and_model):
    plan, model = plan_and_model
    patched = patched_trinity_config(ANCHORED, plan, model)
    assert patched_config_problems(ANCHORED, patched, plan, model) == [
        ConfigProblem(C.ROLLOUT_LENGTH_REFUSED, ROLLOUT_WORDS), ConfigProblem(C.ANCHORED_KEY_CHANGED, ANCHORED_WORDS)]


def test_an_anchored_trainer_key_the_05_patch_removes_is_said_removed_not_left(plan_and_model):
    plan, model = plan_and_model
    actor = "trainer.trainer_config.actor_rollout_ref.actor.fsdp_config.param_offload"
    ref = "trainer.trainer_config.actor_rollout_ref.ref.fsdp_config.param_offload"
    alone = (HEAD + "trainer:\n  param_offload: &off true\n  trainer_config:\n    actor_rollout_ref:\n      actor:\n"
             "        fsdp_config: {param_offload: *off}\n")
    patched = patched_trinity_config(alone, plan, model, version="0.5")
    assert patched.removed_for_05 == ("trainer.param_offload",) and "&off" not in patched.text
    why = "a key of Trinity 0.6's trainer, which Trinity 0.5 refuses (its TrainerConfig has no such key)"
    assert patched_config_problems(alone, patched, plan, model, version="0.5") == [ConfigProblem(
        C.ANCHORED_KEY_CHANGED, f"trainer.param_offload is the anchor &off, which other keys repeat (*off): the patch "
        f"sets {actor} to false, written out (&off and *off go), and removes it: {why}")]
    # With the ref's alias too, which the patch leaves: the anchor moves there; without 0.5 the patch sets the key.
    both = alone + "      ref:\n        fsdp_config: {param_offload: *off}\n"
    patched = patched_trinity_config(both, plan, model, version="0.5")
    assert [problem.words for problem in patched_config_problems(both, patched, plan, model, version="0.5")] == [
        (f"trainer.param_offload is the anchor &off, which other keys repeat (*off): the patch sets {actor} to false, "
         f"written out (no longer *off), and leaves {ref} at true (the anchor moves there), and removes it: {why}")]
    # The anchor on a key the patch sets, one alias it leaves and one it removes: each said, in that order.
    elsewhere = (HEAD + "trainer:\n  trainer_config:\n    actor_rollout_ref:\n      actor:\n"
                 "        fsdp_config: {param_offload: &off true}\n  param_offload: *off\n"
                 "monitor: {enable_ray_timeline: *off}\n")
    patched = patched_trinity_config(elsewhere, plan, model, version="0.5")
    assert [problem.words for problem in patched_config_problems(elsewhere, patched, plan, model, version="0.5")] == [
        (f"{actor} is the anchor &off, which other keys repeat (*off): the patch sets it to false and leaves "
         f"monitor.enable_ray_timeline at true (the anchor moves there), and removes trainer.param_offload: {why}")]
    patched = patched_trinity_config(both, plan, model, version="0.6")
    assert [problem.words for problem in patched_config_problems(both, patched, plan, model, version="0.6")] == [
        (f"trainer.param_offload is the anchor &off, which other keys repeat (*off): the patch sets it to false and "
         f"{actor} to false, written out (no longer *off), and leaves {ref} at true (the anchor moves there)")]


def test_patched_config_problems_refuses_wrong_types(plan_and_model):
    plan, model = plan_and_model
    with pytest.raises(QueryError, match="^patched must be a PatchedConfig, got "):
        patched_config_problems(HEAD, HEAD, plan, model)  # type: ignore[arg-type]
    patched = patched_trinity_config(HEAD, plan, model)
    with pytest.raises(QueryError, match=r"^version takes 0\.5, .*, got '0\.7' \(rft-solver knows"):
        patched_config_problems(HEAD, patched, plan, model, version="0.7")


def test_write_warns_of_the_patched_configs_problems_in_order(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # Merged keys, a rule the patched config still breaks and an anchored key: --write's warnings, word for word and
    # in that order, are the API's problems.
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    text = (ANCHORED + "base: &base\n  balance_batch: true\n  param_offload: false\ntrainer:\n  <<: *base\n"
            "  megatron: {}\n  trainer_config:\n    actor_rollout_ref:\n"
            "      ref: {fsdp_config: {offload_policy: true}}\n")
    config, patched = tmp_path / "trinity.yaml", tmp_path / "patched.yaml"
    config.write_text(text, encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "a100-80g", "--len", "16k", "--trinity-version", "0.5",
                         "--write", str(patched))
    rule = ("trainer.trainer_config.actor_rollout_ref.ref.fsdp_config.offload_policy needs trainer.trainer_strategy "
            "fsdp2, got none (Trinity 0.5 takes fsdp)")
    assert (status, [line for line in err.splitlines() if line.startswith("solve: warning:")]) == (0, [
        f"solve: warning: {patched}: {words}"
        for words in (MERGED_WORDS, ROLLOUT_WORDS, rule, BASE_REFUSED.words, ANCHORED_WORDS)])
    plan, model = solver.plan("8B", gpu="a100-80g", max_model_len=16384, budget_gpus=6, exact=True)[0].best, (
        solver.load_catalog().model("8B"))
    assert plan is not None
    problems = patched_config_problems(text, patched_trinity_config(text, plan, model, version="0.5"), plan, model,
                                       version="0.5")
    assert [(problem.code, problem.words) for problem in problems] == [
        (C.TRAINER_KEYS_MERGED_REFUSED, MERGED_WORDS), (C.ROLLOUT_LENGTH_REFUSED, ROLLOUT_WORDS),
        (C.OFFLOAD_NEEDS_FSDP2, rule), (BASE_REFUSED.code, BASE_REFUSED.words),
        (C.ANCHORED_KEY_CHANGED, ANCHORED_WORDS)]


def test_a_key_the_trainer_overrides_on_a_merged_one_is_said_left_where_the_05_patch_removes_its_own(plan_and_model):
    # s58: the section's own megatron is removed, and its anchor's, which it overrode, is read again: the patched text
    # still gives the key, so the merged line says it (the check's line said --write removes it, which it had).
    plan, model = plan_and_model
    overridden = HEAD + "base: &base\n  megatron: {a: 1}\ntrainer:\n  <<: *base\n  megatron: {b: 2}\n"
    patched = patched_trinity_config(overridden, plan, model, version="0.5")
    assert (patched.removed_for_05, patched.merged_for_05) == (("trainer.megatron",), ("trainer.megatron",))
    assert patched_config_problems(overridden, patched, plan, model, version="0.5") == [ConfigProblem(
        C.TRAINER_KEYS_MERGED_REFUSED, (
            "trainer.megatron: a key of Trinity 0.6's trainer, which Trinity 0.5 refuses (its TrainerConfig has no "
            "such key), so the config does not load; a '<<: *anchor' merges it into trainer, and --write leaves the "
            "anchor as it is, since other sections may share it: remove it there")), BASE_REFUSED]
