"""Trinity 0.6's legacy worker path at the roles' own SP, and two critic/engine words (session 85, legacyref).

1. Trinity 0.6.0 on verl before 0.8 (``verl>=0.7.1``, METADATA; ``trainer/trainer.py:371`` ``is_verl_legacy``) builds
   the trainer's Ulysses groups from the actor's SP (``trainer/verl_legacy/fsdp_workers.py:158-180``, as 0.5.2's
   ``trainer/verl/fsdp_workers.py:144-166``) and runs the ref's forward in them (``compute_ref_log_prob``, ``:1062``,
   the actor's sharding manager), while verl 0.7.1 sizes the ref's micro-batches at the ref's own SP
   (``workers/actor/dp_actor.py:72``, ``:467``): the same code as 0.5.2's. So with ``--trinity-version 0.6`` (or none)
   a ref SP above the actor's 2 takes budget x its SP / 2 tokens per GPU there, and a ref at SP 1 takes its
   micro-batches whole (counted as with 0.5); Trinity 0.6 on verl 0.8 or later runs it at the trainer's SP.
2. ``--critic none`` leaves the critic out: the line on its own SP claimed that the verdict counted its update.
3. verl 0.8.0's FSDP engine builds its Ulysses mesh of ``world // sp`` x ``sp`` GPUs
   (``workers/engine/fsdp/transformer_impl.py:220-226``): at SP 3 on 4 GPUs the GPU left out fails on
   ``self.ulysses_device_mesh["sp"].get_group()`` (``:226``; torch's ``DeviceMesh.get_group`` raises ``IndexError``,
   run on torch 2.13 with gloo over 4 ranks), so the critic's engine SP 3 is no SP the critic runs at."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

Cli = Callable[..., tuple[int, str, str]]
HEAD = ("algorithm: {{algorithm_type: {algorithm}}}\nmodel: {{model_path: Qwen/Qwen3-8B, max_model_len: 8192}}\n"
        "cluster: {{node_num: 1, gpu_per_node: 8}}\nexplorer: {{rollout_model: {{engine_num: 4}}}}\ntrainer:\n")
"""Qwen3-8B at 8192 tokens on 4 trainer GPUs (4 rollout), of an algorithm; YAML lines under ``trainer`` follow."""
REF_SP = "trainer.trainer_config.actor_rollout_ref.ref.ulysses_sequence_parallel_size"


def _current(cli: Cli, tmp_path: Path, text: str, *options: str) -> dict:
    """``--from-config --json``'s ``current`` for the config `text` on A100 80GB with `options`."""
    path = tmp_path / "trinity.yaml"
    path.write_text(text, encoding="utf-8")
    status, out, _ = cli("--from-config", str(path), "--gpu", "a100-80g", "--json", *options)
    assert status == 0
    return json.loads(out)[0]["current"]


def _lines(current: dict) -> list[tuple[str, str]]:
    """(code, words) of each of the verdict's problems."""
    return list(zip(current["config_problem_codes"], current["config_problems"], strict=True))


REF_AT_4 = HEAD.format(algorithm="grpo") + (
    "  ulysses_sequence_parallel_size: 2\n  trainer_config:\n    actor_rollout_ref:\n"
    "      ref: {ulysses_sequence_parallel_size: 4}\n")
"""GRPO (its ref's forward runs) at the trainer's SP 2, the ref at its own SP 4."""


def test_06_sizes_a_ref_above_the_actors_sp_within_the_actors_groups(cli, tmp_path: Path):
    # Before: "runs that role at SP 4" and no line on the ref's tokens per GPU, which 0.5 gives for the same code.
    for options, who in (((("--trinity-version", "0.6"), "Trinity 0.6 on verl before 0.8")),
                         ((), "Trinity with verl before 0.8")):
        lines = _lines(_current(cli, tmp_path, REF_AT_4, *options))
        assert lines == [
            ("role-sp-differs", (
                f"{REF_SP} 4 is not trainer.ulysses_sequence_parallel_size 2: {who} runs that "
                "role's forward at SP 4 (with the trainer's token budget) within the actor's SP groups, Trinity 0.6 "
                "on verl 0.8 or later at SP 2; the verdict is at SP 2: set them alike (--write does)")),
            ("token-budget-above-verdict", (
                "the unset trainer.max_token_len_per_gpu, which Trinity fills with 8192 and the ref takes, at the "
                "ref's SP 4: each of the ref's micro-batches holds 8192 x 4 tokens, but "
                f"{who} runs its forward in the actor's SP groups of 2 GPUs, so each GPU takes 8192 x 4 / 2 = 16384 "
                "tokens there, more than the verdict's 8192; Trinity 0.6 on verl 0.8 or later runs it at SP 2: set "
                "the ref's SP to the actor's (--write does)"))]
    # 0.5's words stand: no verl 0.8 clause.
    assert _lines(_current(cli, tmp_path, REF_AT_4, "--trinity-version", "0.5"))[1][1].endswith(
        "8192 x 4 / 2 = 16384 tokens there, more than the verdict's 8192: set the ref's SP to the actor's (--write "
        "does)")


REF_AT_1_SIZE_2 = HEAD.format(algorithm="grpo") + (
    "  ulysses_sequence_parallel_size: 2\n  use_dynamic_bsz: false\n  trainer_config:\n    actor_rollout_ref:\n"
    "      actor: {ppo_micro_batch_size_per_gpu: 1}\n"
    "      rollout: {log_prob_micro_batch_size_per_gpu: 1}\n"
    "      ref: {ulysses_sequence_parallel_size: 1, log_prob_micro_batch_size_per_gpu: 2}\n")
"""Dynamic batch sizes off, the trainer at SP 2, the ref at its own SP 1 with 2 sequences per micro-batch."""


def test_06_counts_a_ref_at_its_own_sp_1_whole_as_05_does(cli, tmp_path: Path):
    # verl 0.7.1 slices a role's micro-batch only where its own SP is above 1 (dp_actor.py:72-73): 2 x 8192 tokens
    # per GPU on verl before 0.8, 2 x 4096 on verl 0.8 (the trainer's SP 2). Before, 0.6 said nothing (2 x 4096 = the
    # default 8192); now it counts the larger, as 0.5 does.
    head = ("dynamic batch sizes off: verl reads no token budget and fills each micro-batch with 2 sequences (the "
            "largest micro-batch size per GPU, 1 where unset), up to 2 x ceil(8192 / 1) = 16384 tokens per GPU (the "
            "ref's forward: ")
    for options, who, on_08 in ((("--trinity-version", "0.5"), "Trinity 0.5", ""),
                                (("--trinity-version", "0.6"), "Trinity 0.6 on verl before 0.8",
                                 "; Trinity 0.6 on verl 0.8 or later runs it at SP 2")):
        above = [words for code, words in _lines(_current(cli, tmp_path, REF_AT_1_SIZE_2, *options))
                 if code == "token-budget-above-verdict"]
        assert len(above) == 1 and above[0].startswith(
            f"{head}{who} runs it at the ref's own SP 1, slicing none of its micro-batches{on_08}), more than")


PPO_CRITIC_SP_2 = HEAD.format(algorithm="ppo") + "  trainer_config:\n    critic: {ulysses_sequence_parallel_size: 2}\n"
"""PPO with the critic at its own SP 2, the trainer at SP 1."""


def test_critic_none_says_the_critic_sp_line_counts_no_critic(cli, tmp_path: Path):
    counted = ("the verdict and its plan count the critic's update at the one of SP 1 and SP 2 that needs the most")
    left_out = "the verdict and the plans count no critic (--critic none leaves it out): set them alike (--write does)"
    line = _lines(_current(cli, tmp_path, PPO_CRITIC_SP_2, "--trinity-version", "0.6"))[0][1]
    assert counted in line and left_out not in line
    current = _current(cli, tmp_path, PPO_CRITIC_SP_2, "--trinity-version", "0.6", "--critic", "none")
    assert current["critic_sps"] == []
    line = _lines(current)[0][1]
    assert counted not in line and line.endswith(f"runs the critic at SP 1; {left_out}")


ENGINE_AT_3 = HEAD.format(algorithm="ppo") + "  trainer_config:\n    critic: {fsdp: {ulysses_sequence_parallel_size: 3}}\n"
"""PPO with the critic's engine at SP 3 on the 4 trainer GPUs."""


def test_an_engine_sp_that_does_not_divide_the_gpus_is_no_run_sp(cli, tmp_path: Path):
    # Before: critic_sps [1, 3], the verdict counting the update at SP 3 (69.2 GiB) where verl 0.8 fails to start.
    current = _current(cli, tmp_path, ENGINE_AT_3, "--trinity-version", "0.6")
    assert current["critic_sps"] == []
    assert _lines(current)[0] == ("role-sp-differs", (
        "trainer.trainer_config.critic.fsdp.ulysses_sequence_parallel_size 3 is not trainer.ulysses_sequence_parallel_"
        "size 1: Trinity 0.6 on verl 0.8 or later takes SP 3, its engine's over the trainer's (checking it against "
        "nothing), where SP=3 does not divide 4 GPUs: its engine's SP mesh holds 3 of them and it fails as it starts "
        "on the 1 left out, and with verl before 0.8 no release reads it; the verdict and the plans count the critic "
        "at SP 1: set them alike (--write does)"))
    # An engine SP that divides them still counts there.
    assert _current(cli, tmp_path, ENGINE_AT_3.replace("size: 3", "size: 2"), "--trinity-version", "0.6")[
        "critic_sps"] == [1, 2]
    # Beside a legacy SP of its own: the words on verl 0.8 say that it fails there, and only SP 2 is counted.
    both = ENGINE_AT_3.replace("critic: {", "critic: {ulysses_sequence_parallel_size: 2, ")
    current = _current(cli, tmp_path, both, "--trinity-version", "0.6")
    assert current["critic_sps"] == [2]
    assert ("Trinity 0.6 on verl 0.8 or later ignores the key and runs the critic at SP 3 (trainer.trainer_config."
            "critic.fsdp.ulysses_sequence_parallel_size), where SP=3 does not divide 4 GPUs: its engine's SP mesh "
            "holds 3 of them and it fails as it starts on the 1 left out; the verdict and its plan count the "
            "critic's update at SP 2") in " ".join(words for _, words in _lines(current))
