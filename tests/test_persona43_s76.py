"""A new user's first hour (persona43, s76): GRPO on Qwen3-14B and PPO on Qwen3-30B-A3B on two nodes of 8 H20s, at
64k-128k tokens, with the rollout on GPUs of its own."""

from __future__ import annotations

from collections.abc import Callable

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
