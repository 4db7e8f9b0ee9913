"""Session 74's changed lines and alternatives that no related test ran (helper coverage14): ``--explain``'s
per-count host memory reason where a PPO critic's states are in host memory (the offloaded critic's need, with
Offload the actor's and the critic's states), and its memory model prediction where the optimizer step alone does
not fit (the words kept beside the critic's own update's)."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

Cli = Callable[..., tuple[int, str, str]]

HOST_RAM_16 = ("--gpu", "h20", "--model", "8B", "--len", "4096", "--gpus", "8", "--exact", "--sp", "8", "--no-env",
               "--host-ram", "16", "--no-estimate", "--explain", "--json")
"""Qwen3-8B on exactly 8 H20s with 16 GiB of host memory per node: too little to load the model, or to hold a
critic's states, with Offload or without."""


def _details(cli: Cli, rule: str, *argv: str) -> list[str]:
    """The details of the explanation's steps of `rule` for `argv`, which finds no plan (exit 1, nothing on stderr)."""
    status, out, err = cli(*argv)
    assert (status, err) == (1, "")
    (answer,) = json.loads(out)
    return [step["detail"] for step in answer["explanation"] if step["rule"] == rule]


@pytest.mark.parametrize(("flags", "detail"), [
    (("--no-offload", "--critic", "offloaded"), (
        "the offloaded critic needs more host memory (the critic's states and the reference model's shards, or the "
        "model while it loads beside the reference model's pinned shards, whichever is more) than --host-ram 16 GiB "
        "(on 8 GPUs: 284.8 GiB per node)")),
    (("--no-offload", "--critic", "reloaded", "--no-reference"), (
        "the offloaded critic needs more host memory (the critic's states, or the model while it loads, whichever is "
        "more; no reference model) than --host-ram 16 GiB (on 8 GPUs: 244.2 GiB per node)")),
    (("--offload", "--critic", "offloaded", "--no-reference"), (
        "Offload needs more host memory (the actor's states and the critic's states, or the model while it loads "
        "beside the actor's pinned shards, whichever is more; no reference model) than --host-ram 16 GiB (on 8 "
        "GPUs: 284.8 GiB per node)")),
    (("--no-offload", "--critic", "resident"), (
        "loading the model needs more host memory (verl reads it in fp32 before FSDP shards it, beside the reference "
        "model's pinned shards) than --host-ram 16 GiB (on 8 GPUs: 284.8 GiB per node)")),
])
def test_explain_s_host_memory_reason_names_a_host_held_critic(cli: Cli, flags: tuple[str, ...], detail: str) -> None:
    # Without Offload a critic held in host memory (offloaded, or reloaded for its own update) is what needs it: "the
    # offloaded critic needs", not "loading the model needs"; with Offload the states are the actor's and the
    # critic's; a resident critic holds nothing there, so the words are the load's, as without a critic.
    assert _details(cli, "host_ram", *HOST_RAM_16, *flags) == [detail]


def test_explain_s_prediction_where_the_optimizer_step_alone_does_not_fit(cli: Cli) -> None:
    # Qwen3-14B with Env on 2 H200s at 1024 tokens (no table has the H200's memory): the peak fits, the optimizer
    # step does not, 138.54 GiB of the 136.22 it may take (98% of the 140 GiB less the 1 GiB margin). Without a
    # critic its own update fits trivially, so the words are the step's, as before the critic's were added.
    details = _details(cli, "memory_model", "--gpu", "h200", "--model", "14B", "--len", "1024", "--gpus", "2",
                       "--exact", "--sp", "1", "--env", "--no-offload", "--estimate", "--explain", "--json")
    assert details == [
        ("on 2 GPUs: no table speaks for H200-141GB (none has its memory); the memory model predicts at 1024 tokens: "
         "Env 138.54 GiB at the optimizer step, more than the 136.22 it may take")]
