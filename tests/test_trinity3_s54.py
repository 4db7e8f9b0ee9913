"""Trinity 0.5's role-sp-differs words under an explicit release, the ref's budget over the actor's SP groups read
from the same budgets as the verdict (`TrinityConfig.role_budgets_in_effect`), and a ref SP above an actor SP of 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from solver.query import TrinityConfig

REF_SP = "trainer.trainer_config.actor_rollout_ref.ref.ulysses_sequence_parallel_size"
ACTOR_BUDGET = "trainer.trainer_config.actor_rollout_ref.actor.ppo_max_token_len_per_gpu"
REF_BUDGET = "trainer.trainer_config.actor_rollout_ref.ref.log_prob_max_token_len_per_gpu"
HEAD = ("algorithm: {algorithm_type: grpo}\nmodel: {model_path: Qwen/Qwen3-8B, max_model_len: 8192}\n"
        "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 4}}\ntrainer:\n")
# The actor sets no SP (it takes the trainer's 1); the ref sets 2 and a budget of its own.
REF_ABOVE_ONE = HEAD + ("  trainer_config:\n    actor_rollout_ref:\n"
                        "      ref: {ulysses_sequence_parallel_size: 2, log_prob_max_token_len_per_gpu: 8192}\n")
UNGROUPED = (f"{REF_SP} 2 is above the actor's 1: Trinity 0.5 builds no SP groups at an actor SP of 1, so verl 0.7 "
             "splits each of the ref's micro-batches over all the trainer GPUs but gives every GPU the first part, "
             "and gathers none back: the ref's log-probs are fewer than its tokens, so the first ref step fails "
             "(remove padding on, its default): set the ref's SP to the actor's (--write does)")
FAILS_BEFORE_08 = ("{REF_SP} 2 is not trainer.ulysses_sequence_parallel_size 1: Trinity 0.6 on verl 0.8 or later runs "
                   "the ref at SP 1, but {who} builds no SP groups at the actor's SP 1, so the "
                   "ref's forward at SP 2 gathers none of its split micro-batches back and fails at its first step "
                   "(remove padding on); the verdict is at SP 1: set them alike (--write does)")


def _current(cli, config: Path, *args: str) -> tuple[int, dict]:
    """The status of ``--json`` on `config` (A100 80GB) with `args`, and its current settings."""
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100-80g", "--json", *args)
    return status, json.loads(out)[0]["current"]


@pytest.mark.parametrize(("version", "code", "words", "check"), [
    (("--trinity-version", "0.5"), "ref-sp-ungrouped-refused", UNGROUPED, 1),
    (("--trinity-version", "0.6"), "role-sp-differs",
     FAILS_BEFORE_08.format(REF_SP=REF_SP, who="Trinity 0.6 on verl before 0.8"), 0),
    ((), "role-sp-differs", FAILS_BEFORE_08.format(REF_SP=REF_SP, who="Trinity with verl before 0.8"), 0)])
def test_a_ref_sp_above_an_actor_sp_of_one(cli, tmp_path: Path, version: tuple[str, ...], code: str, words: str,
                                           check: int):
    # Trinity 0.5 sets no Ulysses group at the actor's SP 1 (fsdp_workers.py:140, :148 in 0.5.2), so verl 0.7.0 and
    # 0.7.1 slice the ref's input over the default group at rank 0 and gather nothing back (ulysses.py:119-120, :267):
    # pad_input raises at the first ref step, a refusal (--check fails). Trinity 0.6.0's verl_legacy path (verl 0.7.1)
    # does the same, but on verl 0.8 or later it runs the ref at the trainer's SP: said, not refused.
    config = tmp_path / "trinity.yaml"
    config.write_text(REF_ABOVE_ONE, encoding="utf-8")
    status, current = _current(cli, config, *version)
    assert (status, current["trains"], current["refused"], current["config_problem_codes"]) == (
        0, True, bool(check), [code, "token-budget-below-verdict"])
    assert current["config_problems"][0] == words
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100-80g", "--check", *version)
    assert status == check
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100-80g", *version)
    prefix = "refused:" if check else "but:"
    assert status == 0 and f"{prefix} {' '.join(words.split()[:6])}" in " ".join(out.split())


def test_a_ref_taking_a_trainer_sp_above_an_actor_sp_of_one(cli, tmp_path: Path):
    # The actor sets SP 1, the trainer 2, the ref none: Trinity 0.5 fills the ref's from the trainer's, above the
    # actor's 1; the actor's line names no Trinity 0.6 path under 0.5.
    config = tmp_path / "trinity.yaml"
    config.write_text(HEAD + ("  ulysses_sequence_parallel_size: 2\n  trainer_config:\n    actor_rollout_ref:\n"
                              "      actor: {ulysses_sequence_parallel_size: 1}\n"), encoding="utf-8")
    status, current = _current(cli, config, "--trinity-version", "0.5")
    assert (status, current["sp"], current["config_problem_codes"][:2]) == (
        0, 1, ["role-sp-differs", "ref-sp-ungrouped-refused"])
    assert current["config_problems"][:2] == [
        ("trainer.trainer_config.actor_rollout_ref.actor.ulysses_sequence_parallel_size 1 is not "
         "trainer.ulysses_sequence_parallel_size 2: Trinity 0.5 runs the trainer at the actor's (it takes the "
         "trainer's only where a role sets none), so the verdict is at SP 1: set them alike (--write does)"),
        "trainer.ulysses_sequence_parallel_size 2, the ref's SP (it sets none of its own)," + UNGROUPED[len(
            f"{REF_SP} 2"):]]


def test_under_05_a_ref_sp_under_the_trainer_key_gets_05_words(cli, tmp_path: Path):
    # No actor SP: the trainer's 2 is the actor's; the ref's 4 runs within its groups. Without a release the words
    # speak of both paths, with the trainer's budget (the ref sets none).
    config = tmp_path / "trinity.yaml"
    config.write_text(HEAD + ("  ulysses_sequence_parallel_size: 2\n  trainer_config:\n    actor_rollout_ref:\n"
                              "      ref: {ulysses_sequence_parallel_size: 4}\n"), encoding="utf-8")
    words = {}
    for version in (("--trinity-version", "0.5"), ()):
        status, current = _current(cli, config, *version)
        assert (status, current["config_problem_codes"][0]) == (0, "role-sp-differs")
        words[version[1:]] = current["config_problems"][0]
    assert words == {
        ("0.5",): (f"{REF_SP} 4 is not the actor's 2: Trinity 0.5 runs that role's forward at SP 4 within the actor's "
                   "SP groups; the verdict is at SP 2: set them alike (--write does)"),
        (): (f"{REF_SP} 4 is not trainer.ulysses_sequence_parallel_size 2: Trinity with verl before 0.8 runs that "
             "role's forward at SP 4 (with the trainer's token budget) within the actor's SP groups, Trinity 0.6 on "
             "verl 0.8 or later at SP 2; the verdict is at SP 2: set them alike (--write does)")}


def test_the_refs_line_reads_a_followed_trainer_budget_as_unset(cli, tmp_path: Path):
    # trainer.max_token_len_per_gpu 8192 writes out the default at the config's own 8192 tokens and SP 2: at --len
    # 16384 the verdict reads it as unset (16384), and so does the ref's line: 16384 x 4 / 2 = 32768 per GPU, above
    # the verdict's 16384 (the written 8192 gave 16384, the verdict's, and no line).
    config = tmp_path / "trinity.yaml"
    config.write_text(HEAD + ("  ulysses_sequence_parallel_size: 2\n  max_token_len_per_gpu: 8192\n"
                              "  trainer_config:\n    actor_rollout_ref:\n"
                              "      ref: {ulysses_sequence_parallel_size: 4}\n"), encoding="utf-8")
    status, current = _current(cli, config, "--trinity-version", "0.5", "--len", "16384")
    assert (status, current["config_problem_codes"]) == (
        0, ["role-sp-differs", "token-budget-below-verdict", "token-budget-above-verdict"])
    assert current["config_problems"][2] == (
        "trainer.max_token_len_per_gpu 8192 (what Trinity gives it unset at the config's own 8192 tokens, so read as "
        "unset: 16384 at 16384 tokens), which the ref takes, at the ref's SP 4: each of the ref's micro-batches holds "
        "16384 x 4 tokens, but Trinity 0.5 runs its forward in the actor's SP groups of 2 GPUs, so each GPU takes "
        "16384 x 4 / 2 = 32768 tokens there, more than the verdict's 16384: set the ref's SP to the actor's "
        "(--write does)")
    # At the config's own length the key is the budget as written.
    status, current = _current(cli, config, "--trinity-version", "0.5")
    assert current["config_problems"][1].startswith("trainer.max_token_len_per_gpu 8192, which the ref takes, at the "
                                                    "ref's SP 4: each of the ref's micro-batches holds 8192 x 4 tokens")


def test_role_budgets_in_effect_count_a_followed_key_as_unset():
    # One source for the verdict's budget and the ref's: the followed trainer key follows the default at 16384.
    config = TrinityConfig(model="Qwen3-8B", max_model_len=8192, sp=2, max_token_len_per_gpu=8192, version="0.5",
                           role_token_budgets=((ACTOR_BUDGET, 4096),))
    assert config.own_budgets() == {ACTOR_BUDGET: 4096}
    assert config.role_budgets_in_effect(16384) == {
        ACTOR_BUDGET: 16384,  # 0.5.0 raises 4096
        REF_BUDGET: 16384, "trainer.trainer_config.actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu": 16384}
    assert config.budget_in_effect(16384) == 16384
