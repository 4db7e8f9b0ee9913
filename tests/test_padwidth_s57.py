"""Trinity lines made exact against the released wheels (session 57).

A forward's own token budget (the rollout's, the critic's forward's), which Trinity never raises: verl before 0.8
asserts that each step's batch fits a micro-batch, at its longest sequence with Trinity 0.5.2 and 0.6.0 (their own
``rearrange_micro_batches``), at its padded width (its longest prompt plus its longest response) with 0.5.0 and 0.5.1
(verl 0.7.0's). A batch of short enough sequences passes either way, so the line refuses nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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
    config = tmp_path / "trinity.yaml"
    config.write_text(CONFIG.format(algorithm=algorithm, section=section), encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--json", *flags)
    assert status == 0
    current = json.loads(out)[0]["current"]
    lines = [(code, words) for code, words in zip(current["config_problem_codes"], current["config_problems"],
                                                  strict=True) if code.startswith(prefix)]
    return lines, current["refused"], cli("--from-config", str(config), "--gpu", "h100", "--check", *flags)[0]


STOPS = ("stops at the first step whose batch holds a sequence longer than that ({longest}) or is padded wider than "
         "that, to its longest prompt plus its longest response (0.5.0 and 0.5.1)")


@pytest.mark.parametrize(("section", "algorithm", "named"), [
    ("    actor_rollout_ref:\n      rollout: {log_prob_max_token_len_per_gpu: 4096}\n", "grpo",
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
    # A but: line with every release: a batch of short enough sequences passes both checks.
    assert (refused, check) == (False, 0)

