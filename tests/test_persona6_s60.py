"""What an RL engineer with Qwen3-30B-A3B on 8-GPU H100 nodes reads (session 60): the help of `solve` and `solve
memory` names the rules an SP degree keeps, the KV heads' among them (30B-A3B has 4), as the error for a degree that
breaks one names the degrees allowed; the README names the mixture of experts and what its estimates extrapolate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from option_reference import option_reference

SP_RULES = "it divides the trainer GPUs and the attention heads, and SP and the KV heads divide one another"


@pytest.mark.parametrize(("command", "option"), [
    ((), "--sp S pin the Ulysses SP degree: "),
    (("memory",), "--sp S Ulysses SP degree (default 1): ")])
def test_the_sp_help_names_the_rules_a_degree_keeps(cli, command, option):
    status, out, _ = cli(*command, "--help")
    assert status == 0
    assert option + SP_RULES in " ".join(out.split())
    # docs/cli.md's option reference, in full (session 93): the nodes' rule too, the same in solve memory
    assert ("--sp S: the Ulysses SP degree to pin. It must divide the trainer GPUs and the attention heads, SP and the "
            "KV heads must divide one another, and a trainer that spans nodes keeps each SP group in one node"
            ) in option_reference()


def test_a_degree_the_kv_heads_refuse_is_named_with_the_degrees_allowed(cli):
    status, out, err = cli("--model", "14B", "--gpu", "h100", "--gpus", "5", "--len", "32k", "--sp", "5")
    assert (status, out) == (2, "")
    assert err.strip().splitlines()[-1] == (
        "solve: error: --sp 5 is not allowed for Qwen3-14B: SP=5 and its 8 KV heads do not divide one another (the "
        "degrees that fit the budget of 5 GPUs, that Qwen3-14B's heads allow and that keep an SP group in a node of 8 "
        "GPUs: 1, 2, 4)")


def test_the_readme_names_the_mixture_of_experts_and_what_its_estimates_extrapolate():
    readme = " ".join((Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8").split())
    assert ("Qwen3-30B-A3B, a mixture of experts: all its experts held, the active ones computed" in readme)
    assert ("beyond what the model was calibrated on (a larger model, a mixture of experts, more GPUs or nodes, a "
            "larger SP degree, more tokens per GPU, other GPU memory)") in readme


def test_a_mixture_of_experts_estimate_says_it_extrapolates_as_the_readme_says(cli):
    status, out, _ = cli("--model", "30B-A3B", "--gpu", "h100", "--gpus", "8", "--len", "128k", "--json")
    assert status == 0
    plan = json.loads(out)[0]["plans"][0]
    assert plan["beyond_calibration_codes"] == ["larger-model", "mixture-of-experts", "more-gpus", "larger-sp"]
