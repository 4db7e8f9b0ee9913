"""A new user's first hour (persona43, s76): GRPO on Qwen3-14B and PPO on Qwen3-30B-A3B on two nodes of 8 H20s, at
64k-128k tokens, with the rollout on GPUs of its own."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

CLI = Callable[..., tuple[int, str, str]]

PPO_MOE = ("--model", "30B-A3B", "--gpu", "h20", "--len", "128k", "--gpus", "8", "--critic", "resident", "--explain")
"""Qwen3-30B-A3B at 131072 tokens on 8 H20s with a resident critic: no plan (the longest is 123904 on 8 GPUs, and a
resident critic's states leave 7 GPUs 12288 and fewer nothing)."""


def limit_line(out: str) -> str:
    """The `limit` reason of `--explain`'s table, its wrapped lines joined."""
    words = " ".join(out.split())
    start = words.index("limit no plan passes")
    return words[start:words.index(")) ", start) + 2]


def test_explain_lists_only_the_exact_count_on_exactly_n_gpus(cli: CLI) -> None:
    """With --exact (or a config's cluster) the limit lists the longest length on that count alone: 7 GPUs, which
    the exact count rules out, were listed before."""
    status, out, _ = cli(*PPO_MOE, "--exact")
    assert status == 1
    assert limit_line(out) == (
        "limit no plan passes this rule: nothing in the tables and the memory model's estimates vouches for "
        "Qwen3-30B-A3B on H20-96GB at 131072 tokens on exactly 8 GPUs (longest per GPU count: 8 GPUs: 123904 "
        "(estimated, extrapolated))")


def test_explain_lists_every_count_within_a_budget(cli: CLI) -> None:
    """Within a budget (no --exact) every count with a plan up to it is listed, as before."""
    status, out, _ = cli(*PPO_MOE)
    assert status == 1
    assert limit_line(out) == (
        "limit no plan passes this rule: nothing in the tables and the memory model's estimates vouches for "
        "Qwen3-30B-A3B on H20-96GB at 131072 tokens within 8 GPUs (longest per GPU count: 7 GPUs: 12288 "
        "(estimated, extrapolated), 8 GPUs: 123904 (estimated, extrapolated))")


GRPO_14B = """\
algorithm:
  algorithm_type: grpo
model:
  model_path: Qwen/Qwen3-14B
  max_model_len: 65536
  rope_scaling: {rope_type: yarn, factor: 1.6, original_max_position_embeddings: 40960}
cluster:
  node_num: 2
  gpu_per_node: 8
explorer:
  rollout_model:
    engine_num: 4
    tensor_parallel_size: 2
"""
"""GRPO's config (shortened) for Qwen3-14B at 65536 tokens on 2 nodes of 8 H20s: 4 engines of 2 GPUs, 8 trainer GPUs."""


def rollout_layout_line(out: str) -> str:
    """`--explain`'s rollout_layout reason, its wrapped lines joined."""
    words = " ".join(out.split())
    return words[words.index("rollout_layout "):words.index(" sp_divides_gpus")]


def test_explain_names_a_configs_rollout_gpus_by_its_explorer(cli: CLI, tmp_path: Path) -> None:
    """The rollout GPUs a config's explorer takes are named so in --explain's rules (as its node size is named
    cluster.gpu_per_node), not as --rollout-gpus, which the command line did not give."""
    config = tmp_path / "grpo.yaml"
    config.write_text(GRPO_14B)
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--minimize", "gpus", "--explain")
    assert status == 0
    assert rollout_layout_line(out) == (
        "rollout_layout 1-7 trainer GPUs: with the 8 rollout GPUs (the config's explorer) they fit neither one node of "
        "8, nor whole nodes with the trainer in one of them, nor with the trainer on whole nodes")
    status, out, _ = cli("--model", "14B", "--gpu", "h20", "--len", "64k", "--gpus", "8", "--rollout-gpus", "8",
                         "--minimize", "gpus", "--explain")
    assert status == 0
    assert "rollout_layout 1-7 trainer GPUs: with the 8 rollout GPUs (--rollout-gpus) they fit neither" in " ".join(
        out.split())


def test_a_resident_critics_figure_says_it_is_12_of_its_16_bytes(cli: CLI) -> None:
    """`solve memory`'s critic line says which of the 16 bytes per parameter its figure holds beside the actor: 12,
    so that 30.19B parameters on 16 GPUs read as 21.09 GiB (12 bytes), not 28.1 (16), for PPO on Qwen3-30B-A3B on
    two nodes of 8 H20s."""
    status, out, _ = cli("memory", "--model", "30B-A3B", "--gpu", "h20", "--gpus", "16", "--len", "128k", "--sp", "8",
                         "--env", "--offload", "--critic", "resident")
    assert status == 0
    assert ("critic: 30.2B parameters (the model with a value head for its output projection), 16 bytes each (fp32 "
            "weights, gradients and Adam's two moments), 21.09 GiB on each GPU beside the actor's pass and optimizer "
            "step: 12 of the 16 bytes, less the gradients, which the critic's own update frees as it ends; the tables "
            "measured the actor alone") in " ".join(out.split())


def test_an_exact_count_without_room_for_a_configs_rollout_names_its_explorer(cli: CLI, tmp_path: Path) -> None:
    """`--gpus 7 --exact` beside the config's 8 rollout GPUs: the reason names them as the config's explorer's."""
    config = tmp_path / "grpo.yaml"
    config.write_text(GRPO_14B)
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--gpus", "7", "--exact")
    assert status == 1
    assert ("no plan for exactly 7 trainer GPUs with Qwen3-14B on H20-96GB: 7 trainer + 8 rollout GPUs (the config's "
            "explorer) fit neither one node of 8, nor whole nodes with the trainer in one of them, nor with the "
            "trainer on whole nodes;") in " ".join(out.split())
