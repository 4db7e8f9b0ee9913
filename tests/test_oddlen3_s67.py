"""Edges of odd lengths left by session 66 (tests/test_oddlen_s66.py, tests/test_oddlen2_s66.py): with
--token-budget auto, past an estimate that a row stops short of its tokens' reach (cells that contradict themselves),
the lowered budget stays below the tokens that row ran out of memory with, and the planner's reach
(`solver.rules.lowered_reach`) is exactly the lengths that get a budget, so a row under SP tokens no longer crashes
the planner; and the words for an estimate's longest length name the grid or a table's stop, whichever it is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from command_words import make_query
from reference import check_plan, enumerate_plans, ranked_alternatives
from test_oddlen2_s66 import CONTRADICTING_CELLS, _catalog
from test_oddlen_s66 import ODD_CELLS

import solver
from solver.maps import length_rows
from solver.rules import (
    default_budget_reach,
    least_token_budget,
    lowered_reach,
    lowered_token_budget,
    most_estimated_tokens,
    token_budget,
)
from solver.solve import plan as solve_plan

# The 8-GPU table's row at 1 token says SP=8; the row at 2 says Env + SP=8, so SP=8 ran out of memory there, at the
# 1 token per GPU (ceil(2 x 2 / 8)) the row at 1 trained with: cells that contradict themselves at 1 token per GPU.
TINY_CELLS = """gpu: H800-80GB
memory_gb: 80
source: "made-up: a row of 1 token"
tables:
  - gpus: 8
    section: "8 x H800"
    models: [Qwen3-8B]
    rows:
      - {max_model_len: 1, cells: {Qwen3-8B: SP=8}}
      - {max_model_len: 2, cells: {Qwen3-8B: Env + SP=8}}
"""
SP8_WITHOUT_ENV = ("--model", "8B", "--gpu", "H800", "--gpus", "8", "--exact", "--sp", "8", "--no-env", "--no-offload")
SP4 = ("--model", "8B", "--gpu", "H800", "--gpus", "8", "--exact", "--sp", "4", "--no-offload")


@pytest.mark.parametrize("sp", [1, 2, 3, 4, 8, 16])
def test_every_length_up_to_the_lowered_reach_and_none_past_it_gets_a_budget_below_what_ran_out(sp: int):
    # brute force over longest lengths, those a row stops short of their tokens' reach among them
    for longest in range(1, 4 * sp + 3):
        at_longest = token_budget(longest, sp)
        stopped = longest < default_budget_reach(longest, sp)  # a longer length with those tokens ran out of memory
        budgets = {length: lowered_token_budget(length, sp, most_estimated_tokens(length, sp, longest))
                   for length in range(longest + 1, 2 * sp * (at_longest + 1) + 2)}
        assert [length for length, budget in budgets.items() if budget is not None] == list(
            range(longest + 1, lowered_reach(longest, sp) + 1)), (sp, longest)
        for length, budget in budgets.items():
            if budget is not None:  # lowered, holding a sequence, and below what a row ran out of memory with
                assert least_token_budget(length, sp) <= budget < token_budget(length, sp), (sp, longest, length)
                assert budget < at_longest if stopped else budget <= at_longest, (sp, longest, length)


@pytest.mark.parametrize(("longest", "sp", "reach"), [
    (1, 8, 1),  # 1 token per GPU ran out of memory at 2..4: nothing past 1 (was 8, which _plan could not budget)
    (4, 8, 8),  # 4 is the reach of 1 token per GPU at SP=8: up to 8 with 1
    (30001, 4, 60000),  # the row at 30002 ran out of memory with 30001's 15001: up to 4 x 15000 (was 60004)
    (30002, 4, 60004), (30000, 1, 60000), (3, 3, 6),
])
def test_the_lowered_reach(longest: int, sp: int, reach: int):
    assert lowered_reach(longest, sp) == reach


@pytest.mark.parametrize("length", [2, 3, 4, 5, 8])
@pytest.mark.parametrize("budget", ["default", "auto"])
def test_a_row_under_sp_tokens_that_contradicts_the_one_before_is_no_traceback(cli, tmp_path: Path, length: int,
                                                                               budget: str):
    _, cells = _catalog(tmp_path, TINY_CELLS)
    status, out, err = cli("--cells", str(cells), *SP8_WITHOUT_ENV, "--len", str(length), "--token-budget", budget,
                           "--json")
    (answer,) = json.loads(out)
    with_env = "documented" if length == 2 else "estimated, extrapolated"
    assert (status, answer["status"], answer["plans"]) == (1, "infeasible", [])
    assert answer["reason"] == (
        f"{length} tokens is beyond what the tables and the memory model's estimates allow for Qwen3-8B on H800-80GB "
        "on exactly 8 GPUs with --sp 8 --no-env --no-offload: the longest is 1 (SP=8 on 8 GPUs, documented); "
        f"{length} tokens trains if you drop --no-env: Env + SP=8 on 8 GPUs ({with_env})")
    assert "Traceback" not in err and all(line.startswith("solve: note: ") for line in err.splitlines())


def test_the_command_says_so_in_one_answer_and_exit_status_1(cli, tmp_path: Path):
    # In-process: a traceback would fail the test as it would fail the installed command.
    _, cells = _catalog(tmp_path, TINY_CELLS)
    status, out, err = cli("--cells", str(cells), *SP8_WITHOUT_ENV, "--len", "3", "--token-budget", "auto")
    assert status == 1 and "Traceback" not in err
    assert out.splitlines()[1].startswith("no plan: 3 tokens is beyond what the tables and the memory model's")


@pytest.mark.parametrize("budget", ["default", "auto"])
def test_the_api_answers_without_a_plan_where_it_raised(tmp_path: Path, budget: str):
    catalog, _ = _catalog(tmp_path, TINY_CELLS)
    (answer,) = solver.plan("8B", gpu="H800", max_model_len=3, budget_gpus=8, exact=True, sp=8, env=False,
                            offload=False, token_budget=budget, catalog=catalog, explain=True)
    reasons = {reason.rule: reason.detail for reason in answer.explanation}
    assert (answer.status, answer.plans, answer.nearest.max_model_len if answer.nearest else None) == (
        "infeasible", (), 1)
    lowered = {"default": "", "auto": " (at Trinity's default budget; lowered, SP=8 has no budget left: a row says it "
                                      "ran out of memory at 1 token per GPU, the least budget)"}
    assert reasons["beyond_table"] == ("the H800-80GB table for 8 GPUs of your cells (made-up: a row of 1 token) ends "
                                       f"at 2 tokens, where Qwen3-8B still trains{lowered[budget]}")


@pytest.mark.parametrize("cells", ["tiny", "contradicting"])
@pytest.mark.parametrize("token_budget", ["default", "auto"])
def test_the_plans_are_the_references(tmp_path: Path, cells: str, token_budget: str):
    catalog, _ = _catalog(tmp_path, TINY_CELLS if cells == "tiny" else CONTRADICTING_CELLS)
    sp, lengths = (8, (1, 2, 3, 4, 5, 8, 9)) if cells == "tiny" else (4, (30001, 30002, 59392, 60000, 60001, 60004))
    model, gpu = catalog.model("Qwen3-8B"), catalog.gpu("H800-80GB")
    for length in lengths:
        query = {"gpu": "H800-80GB", "model": "Qwen3-8B", "max_model_len": length, "budget_gpus": 8, "exact": True,
                 "sp": sp, "offload": False, "env": False if cells == "tiny" else None}
        (answer,) = solve_plan(make_query(catalog, top=3, token_budget=token_budget, **query), catalog)
        every = enumerate_plans(catalog, objective="cheapest", estimates=True, token_budget=token_budget, **query)
        found = [p.model_dump(mode="json") for p in answer.plans]
        assert found == ranked_alternatives(every, model, gpu)[:3], query
        for plan in found:
            assert check_plan(catalog, plan, estimates=True, token_budget=token_budget, **query) == [], query


@pytest.mark.parametrize(("length", "auto"), [
    (60000, (0, 15000)),  # ceil(60000 / 4) = 15000 holds a sequence, below the 15001 the row at 30002 ran out with
    (60004, (1, None)),  # it takes 15001 at the least: the budget the row at 30002 ran out of memory with
])
def test_no_length_past_the_longest_gets_the_tokens_a_row_ran_out_with(cli, tmp_path: Path, length: int,
                                                                       auto: tuple):
    _, cells = _catalog(tmp_path, CONTRADICTING_CELLS)
    status, out, err = cli("--cells", str(cells), *SP4, "--len", str(length), "--token-budget", "auto", "--json")
    plans = json.loads(out)[0]["plans"]
    assert (status, plans[0]["max_token_len_per_gpu"] if plans else None) == auto and "Traceback" not in err


def test_a_longest_length_where_a_table_stops_its_estimate_says_that_alone(cli, tmp_path: Path):
    _, cells = _catalog(tmp_path, ODD_CELLS)
    _, out, _ = cli("--cells", str(cells), *SP4, "--len", "30003", "--json")
    assert json.loads(out)[0]["reason"].startswith(
        "30003 tokens is beyond what the tables and the memory model's estimates allow for Qwen3-8B on H800-80GB on "
        "exactly 8 GPUs with --sp 4 --no-offload: the longest is 30002 where a table stops its estimate (Env + SP=4 "
        "on 8 GPUs, estimated, extrapolated); ")
    _, out, _ = cli("--cells", str(cells), *SP4, "--maximize", "len", "--explain", "--json")
    reasons = {reason["rule"]: reason["detail"] for reason in json.loads(out)[0]["explanation"]}
    assert reasons["choice"].startswith(
        "30002 tokens is the longest length with a plan on exactly 8 GPUs where a table stops its estimate, and "
        "Env + SP=4 on 8 GPUs is the cheapest plan there; ")


def test_a_longest_length_on_the_grid_says_that_alone(cli, tmp_path: Path):
    _, cells = _catalog(tmp_path, ODD_CELLS)
    _, out, _ = cli("--cells", str(cells), *SP4, "--len", "61000", "--token-budget", "auto", "--explain", "--json")
    (answer,) = json.loads(out)
    reasons = {reason["rule"]: reason["detail"] for reason in answer["explanation"]}
    assert "the longest is 59392 on the 1024-token grid (Env + SP=4 on 8 GPUs with a lowered" in answer["reason"]
    assert reasons["shorter_length"].startswith(
        "on exactly 8 GPUs the longest length with a plan is 59392 tokens on the 1024-token grid (1608 fewer): "
        "Env + SP=4 on 8 GPUs at 59392 tokens with a lowered max_token_len_per_gpu of 14848 (estimated")


@pytest.mark.parametrize(("cells", "rows", "first"), [("odd", 5, [15001, 20001, 25003, 30001, 40000, 50176, 60416]),
                                                      ("tiny", 2, [1, 2, 10240, 20480, 30720])])
def test_a_by_length_maps_rows_past_an_odd_last_row_are_on_the_grid(tmp_path: Path, cells: str, rows: int,
                                                                    first: list[int]):
    catalog, _ = _catalog(tmp_path, ODD_CELLS if cells == "odd" else TINY_CELLS)
    lengths = length_rows(catalog, "H800-80GB", "Qwen3-8B", [8])
    assert lengths[:len(first)] == first
    # past the table's rows, every 10240 tokens on the 1024-token grid, then the longest the budget reaches
    assert all(later - earlier == 10240 for earlier, later in zip(lengths[rows:-2], lengths[rows + 1:-1]))
    assert all(length % 1024 == 0 for length in lengths[rows:])
