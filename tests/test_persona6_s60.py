"""What an RL engineer with Qwen3-30B-A3B on 8-GPU H100 nodes reads before pinning an SP degree (session 60): the
help of `solve` and `solve memory` names the rules an SP degree keeps, the KV heads' among them (30B-A3B has 4), as
the error for a degree that breaks one names the degrees allowed."""

from __future__ import annotations

import pytest

SP_RULES = ("it must divide the trainer GPUs and the attention heads, SP and the KV heads must divide one another, "
            "and a trainer that spans nodes keeps each SP group in one")


@pytest.mark.parametrize(("command", "option"), [((), "--sp N pin the Ulysses SP degree: "),
                                                 (("memory",), "--sp S Ulysses SP degree (default 1): ")])
def test_the_sp_help_names_the_rules_a_degree_keeps(cli, command, option):
    status, out, _ = cli(*command, "--help")
    assert status == 0
    assert option + SP_RULES in " ".join(out.split())


def test_a_degree_the_kv_heads_refuse_is_named_with_the_degrees_allowed(cli):
    status, out, err = cli("--model", "14B", "--gpu", "h100", "--gpus", "5", "--len", "32k", "--sp", "5")
    assert (status, out) == (2, "")
    assert err.strip().splitlines()[-1] == (
        "solve: error: --sp 5 is not allowed for Qwen3-14B: SP=5 and its 8 KV heads do not divide one another (the "
        "degrees that fit the budget of 5 GPUs, that Qwen3-14B's heads allow and that keep an SP group in a node of 8 "
        "GPUs: 1, 2, 4)")
