"""Small slips (s84, smallslips45): ``solve memory --dpo --token-budget`` refused as ``solve --dpo`` refuses it; ..."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import solver
from solver.tables import QueryError

Cli = Callable[..., tuple[int, str, str]]
DPO_BUDGET_UNREAD = ("runs with dynamic batch sizes off in the actor's update, as its Trinity keys write (on, they "
                     "split DPO's pairs), which reads no token budget: each micro-batch holds one pair, a chosen and "
                     "a rejected sequence, which the plans count at Trinity's default budget, ceil(2 x max_model_len "
                     "/ SP) tokens per GPU: leave {option} out")
MEMORY = ("memory", "--model", "Qwen3-8B", "--gpu", "h100", "--gpus", "8", "--len", "8192")


@pytest.mark.parametrize("budget", ["9000", "4096"])  # one that holds a sequence, one that does not
def test_solve_memory_refuses_a_token_budget_beside_dpo_as_solve_does(cli: Cli, budget: str):
    words = DPO_BUDGET_UNREAD.format(option="--token-budget")
    assert cli(*MEMORY, "--dpo", "--token-budget", budget) == (
        2, "", f"solve memory: error: --token-budget {budget}: --dpo {words}\n")
    status, _, _ = cli(*MEMORY, "--dpo")
    assert status == 0


def test_solve_memory_keeps_a_token_budget_without_dpo(cli: Cli):
    status, out, err = cli(*MEMORY, "--token-budget", "9000")
    assert (status, err) == (0, "") and "9000" in out


@pytest.mark.parametrize("estimate", [solver.estimate_memory, solver.memory_answer])
def test_the_api_memory_estimate_refuses_a_token_budget_beside_dpo_naming_its_keyword(estimate):
    words = DPO_BUDGET_UNREAD.format(option="max_token_len_per_gpu")
    with pytest.raises(QueryError) as refused:
        estimate("Qwen3-8B", "h100", 8, 8192, dpo=True, max_token_len_per_gpu=16384)
    assert str(refused.value) == f"max_token_len_per_gpu=16384: dpo=True {words}"
