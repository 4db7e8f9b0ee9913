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
from solver.memory import pinned_rounding
from solver.query import QueryError
from solver.tables import load_catalog
from solver.tables.peft_match import peft_target_match, routed_target_names
from solver.tables.peft_names import PEFT_NAMES_BY_MODEL_TYPE

QWEN3_8B = load_catalog().model("Qwen3-8B")


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


def test_the_pinned_blocks_are_counted_by_rows_where_no_placement_is_named() -> None:
    # docs/memory.md: Qwen3-8B's bf16 shards on 6 GPUs, each block a power of two: the embeddings' 2 of 256 MiB,
    # q_proj's and o_proj's 72 of 8 MiB, k_proj's and v_proj's 72 of 2 MiB, gate and up's 72 of 16 MiB, and
    # down_proj's 36 (4096 x 12288) of 32 MiB: 683 x 12288 x 2 bytes by rows, where verl 0.7's placement (Trinity
    # 0.5's, test_pinnedplace_s79) shards it by its columns, 4096 x 2048 x 2 = 16 MiB; with the norms' 2048 +
    # 147,456 + 4608 bytes.
    by_rows = (2 * 2**28 + 72 * 2**23 + 72 * 2**21 + 72 * 2**24 + 36 * 2**25 + 2048 + 147_456 + 4608)
    assert by_rows == 3_707_918_848
    assert pinned_rounding(QWEN3_8B, 6, 2) * (2 * 8_190_735_360 / 6) == pytest.approx(by_rows, rel=1e-12)
