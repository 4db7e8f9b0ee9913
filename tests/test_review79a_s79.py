"""A review of session 79's first merges (helper review79a): ``--exact``'s help names the budget ``--total-gpus``
less ``--rollout-gpus`` gives, which it keeps to; ``--exact`` beside ``--minimize gpus`` without a budget is told to
drop ``--exact``, not to give a budget that is refused in turn; PEFT's names for a mixture of experts' router and
routed experts come from one helper (``routed_target_names``), which ``lora-moe-config-unsaved`` and
``peft_target_match`` share."""

from __future__ import annotations

import json

import pytest
from test_smallslips24_s77 import Cli

import solver
from solver.cli.planner import build_parser
from solver.query import QueryError
from solver.tables.peft_match import peft_target_match, routed_target_names
from solver.tables.peft_names import PEFT_NAMES_BY_MODEL_TYPE


def test_exact_help_names_the_total_budget_too() -> None:
    # Before: "the trainer uses exactly --gpus GPUs", though --total-gpus T with --rollout-gpus R gives it T - R.
    exact = next(action.help for action in build_parser()._actions if "--exact" in action.option_strings)
    assert exact == "the trainer uses exactly the budget's GPUs: --gpus, or --total-gpus less --rollout-gpus"


def test_exact_with_total_gpus_uses_the_total_less_the_rollout(cli: Cli) -> None:
    status, out, err = cli("--model", "8B", "--gpu", "h100", "--total-gpus", "8", "--rollout-gpus", "2", "--len",
                           "32k", "--exact", "--json")
    answer = json.loads(out)[0]
    assert (status, err, answer["budget_gpus"], answer["total_gpus"], answer["exact"]) == (0, "", 6, 8, True)
    assert [(plan["gpus"], plan["unused_gpus"], plan["rollout_gpus"]) for plan in answer["plans"]] == [(6, 0, 2)]


def test_exact_beside_minimize_gpus_is_told_to_go_whatever_the_budget(cli: Cli) -> None:
    # Before: without a budget, "--exact needs --gpus N, or ..."; given --gpus, "drop --exact": two refusals in turn.
    asked = ("--model", "4B", "--len", "8192", "--exact", "--minimize", "gpus")
    refusal = "solve: error: --minimize gpus chooses the GPU count: drop --exact\n"
    assert cli(*asked) == cli(*asked, "--gpus", "4") == (2, "", refusal)
    with pytest.raises(QueryError) as raised:
        solver.plan("4B", gpu="h100", max_model_len=8192, exact=True, objective="min_gpus")
    assert str(raised.value) == 'objective="min_gpus" chooses the GPU count: drop exact=True'


def test_peft_maps_the_router_and_the_routed_experts_short_names() -> None:
    names = PEFT_NAMES_BY_MODEL_TYPE
    assert routed_target_names(names["mixtral"]) == {"gate", "w1", "w2", "w3"}
    assert routed_target_names(names["qwen3_moe"]) == {"gate", "gate_proj", "up_proj", "down_proj"}
    assert routed_target_names(names["qwen3"]) == {"gate"}  # a dense model: the router's name alone, never adapted


def test_a_regex_naming_a_mapped_name_adapts_no_linear_of_that_name() -> None:
    # On Qwen3-MoE, "down_proj" is the routed experts' (PEFT maps it to their parameter): no nn.Linear is adapted by
    # it, while on dense Qwen3 it is each layer's MLP's.
    assert peft_target_match(r".*\.down_proj", None, PEFT_NAMES_BY_MODEL_TYPE["qwen3_moe"]).linears == (
        "experts.down_proj",)
    assert peft_target_match(r".*\.down_proj", None, PEFT_NAMES_BY_MODEL_TYPE["qwen3"]).linears == ("down_proj",)
