"""Two Trinity lines made exact against the released wheels (session 57).

A forward's own token budget (the rollout's, the critic's forward's), which Trinity never raises: verl before 0.8
asserts that each step's batch fits a micro-batch, at its longest sequence with Trinity 0.5.2 and 0.6.0 (their own
``rearrange_micro_batches``), at its padded width (its longest prompt plus its longest response) with 0.5.0 and 0.5.1
(verl 0.7.0's). A batch of short enough sequences passes either way, so the line refuses nothing.

A flag under ``trainer.trainer_config`` that is not a boolean: Trinity 0.6.0 on verl before 0.8 loads it as written
(``build_dataclass_from_mapping``), sets the actor's dynamic-batch and the model's remove-padding flags to the
trainer's (``synchronize_config``, ``verl_legacy/verl_config.py:701``, ``:708``), and fails on the others as its
trainer starts (``OmegaConf.structured``, ``verl_legacy/verl_trainer.py:198``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import config_lines

CONFIG = ("model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 16384\nalgorithm: {{algorithm_type: {algorithm}}}\n"
          "cluster: {{node_num: 1, gpu_per_node: 8}}\nbuffer: {{train_batch_size: 64}}\n"
          "explorer: {{rollout_model: {{engine_num: 4}}}}\n"
          "trainer:\n  ulysses_sequence_parallel_size: 2\n  trainer_config:\n{section}")
"""Qwen3-8B at 16384 tokens, SP 2 on 4 trainer GPUs of 8; `section`: the lines under ``trainer_config``."""
ARR = "trainer.trainer_config.actor_rollout_ref"


def _lines(cli, tmp_path: Path, section: str, flags: tuple[str, ...], prefix: str,
           algorithm: str = "grpo") -> tuple[list[tuple[str, str]], bool, int]:
    """The (code, words) of `--from-config`'s lines whose code starts with `prefix`, on H100 80GB, whether the config
    is refused, and the exit status of the same with `--check`."""
    return config_lines(cli, tmp_path, CONFIG.format(algorithm=algorithm, section=section), flags, prefix)


STOPS = ("stops at the first step whose batch holds a sequence longer than that ({longest}) or is padded wider than "
         "that, to its longest prompt plus its longest response (0.5.0 and 0.5.1)")


@pytest.mark.parametrize(("section", "algorithm", "named"), [
    (("    actor_rollout_ref:\n      rollout: {log_prob_max_token_len_per_gpu: 4096}\n"
      "    algorithm: {rollout_correction: {bypass_mode: false}}\n"), "grpo",  # the recompute runs
     f"{ARR}.rollout.log_prob_max_token_len_per_gpu 4096 x SP 2 is below model.max_model_len 16384: "),
    ("    critic: {forward_max_token_len_per_gpu: 4096}\n", "ppo",
     "trainer.trainer_config.critic.forward_max_token_len_per_gpu 4096 x SP 2 is below model.max_model_len 16384: "),
])
@pytest.mark.parametrize(("flags", "effect"), [
    # Trinity 0.5: 0.5.2's own check takes the longest sequence, 0.5.0's and 0.5.1's (verl 0.7.0's) the padded width.
    (("--trinity-version", "0.5"),
     "Trinity 0.5 never raises it, and in {forward} its verl (before 0.8) " + STOPS.format(longest="Trinity 0.5.2")),
    # No release: 0.6.0 on verl before 0.8 takes the longest sequence too.
    ((), "in {forward} verl before 0.8 " + STOPS.format(longest="Trinity 0.5.2 and 0.6")
     + ", and Trinity 0.6 on verl 0.8 or later ignores the key"),
    # Trinity 0.6: its own check alone, the longest sequence.
    (("--trinity-version", "0.6"), ("verl before 0.8 stops at the first sequence longer than that in {forward}, and "
                                    "Trinity 0.6 on verl 0.8 or later ignores the key")),
])
def test_a_forward_budget_below_the_length_names_the_check_each_release_makes(
        cli, tmp_path: Path, section: str, algorithm: str, named: str, flags: tuple[str, ...], effect: str):
    forward = "the critic's value forward" if algorithm == "ppo" else "the actor's log-prob recompute"
    lines, refused, check = _lines(cli, tmp_path, section, flags, "token-budget-below-length", algorithm)
    assert lines == [("token-budget-below-length", named + effect.format(forward=forward))]
    # A but: line with every release: a batch of short enough sequences passes both checks. PPO's critic, counted
    # resident (s74), puts its 28.20 GiB beside the actor's 61.07 on each of the 4 H100s, 89.26 of the 70.97 usable
    # (`solve memory --model 8B --gpu h100 --gpus 4 --len 16k --sp 2 --critic resident`): --check exits 1 on that.
    assert (refused, check) == (False, 1 if algorithm == "ppo" else 0)


KEPT_AS_WRITTEN = ("keeps it as written, which its trainer's typed config (OmegaConf's bool field) refuses as the "
                   "trainer starts")
TAKEN_BY_06 = {
    "actor: {use_dynamic_bsz: maybe}": ("actor.use_dynamic_bsz", (
        "sets it to trainer.use_dynamic_bsz, and on verl 0.8 or later sets it to trainer.use_dynamic_bsz too")),
    "model: {use_remove_padding: maybe}": ("model.use_remove_padding", (
        "sets it to trainer.use_remove_padding, and on verl 0.8 or later sets it to trainer.use_remove_padding too")),
    "ref: {log_prob_use_dynamic_bsz: maybe}": ("ref.log_prob_use_dynamic_bsz",
                                               f"{KEPT_AS_WRITTEN}, and on verl 0.8 or later ignores it"),
    "model: {enable_gradient_checkpointing: maybe}": (
        "model.enable_gradient_checkpointing", (f"{KEPT_AS_WRITTEN}, and on verl 0.8 or later hands it to verl as "
                                                "written, which reads it as true (Python's truth of it)")),
}
"""Each flag the checks read under ``actor_rollout_ref``, set to ``maybe``: its key there, and what Trinity 0.6.0 on
verl before 0.8, and on 0.8 or later, does with it (checks90: one function says it for every flag)."""


@pytest.mark.parametrize("flag", TAKEN_BY_06)
@pytest.mark.parametrize(("flags", "code", "words", "check"), [
    ((), "flag-not-boolean", "Trinity 0.5 refuses the config, and 0.6 on verl before 0.8 {taken}", 0),
    (("--trinity-version", "0.6"), "flag-not-boolean", "Trinity 0.6 on verl before 0.8 {taken}", 0),
    (("--trinity-version", "0.5"), "flag-not-boolean-refused", "Trinity refuses the config", 1),
])
def test_a_flag_that_is_not_a_boolean_says_what_each_release_does_with_it(
        cli, tmp_path: Path, flag: str, flags: tuple[str, ...], code: str, words: str, check: int):
    key, taken = TAKEN_BY_06[flag]
    lines, refused, status = _lines(cli, tmp_path, f"    actor_rollout_ref:\n      {flag}\n", flags, "flag-not-boolean")
    assert lines == [(code, f"{ARR}.{key} must be true or false, got 'maybe': {words.format(taken=taken)}")]
    assert (refused, status) == (code.endswith("-refused"), check)
