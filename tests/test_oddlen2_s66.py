"""Follow-ups of rows of odd lengths (session 66, tests/test_oddlen_s66.py): maximising takes where a table stops an
estimate (`PlanningData.table_stops`), so the longest length an answer or --explain names is one --len plans; with
--token-budget auto, a length past an estimate's longest at Trinity's default gets a budget below its default
(`solver.rules.most_estimated_tokens`), even where cells that contradict themselves give it the longest's; and a
token budget of one's own is judged at the shortest length whose default reaches it
(`solver.rules.shortest_length_of_budget`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from command_words import make_query
from reference import enumerate_plans, ranked_alternatives
from test_oddlen_s66 import ODD_CELLS

from solver.model import prepare
from solver.rules import shortest_length_of_budget, token_budget
from solver.solve import plan as solve_plan
from solver.tables import Catalog, load_catalog

CATALOG = load_catalog()

# The 8-GPU table's row at 30002 says SP=8 (SP=4 and Env + SP=4 ran out of memory) at the 15001 tokens per GPU at
# SP=4 that the row at 30001, which says SP=4, trained with: cells that contradict themselves.
CONTRADICTING_CELLS = ODD_CELLS.replace("{max_model_len: 40000, cells: {Qwen3-8B: SP=8}}",
                                        "{max_model_len: 30002, cells: {Qwen3-8B: SP=8}}")
PINNED = ("--model", "8B", "--gpu", "H800", "--gpus", "8", "--exact", "--sp", "4", "--no-offload")


def _catalog(tmp_path: Path, text: str) -> tuple[Catalog, Path]:
    cells = tmp_path / "cells.yaml"
    cells.write_text(text, encoding="utf-8")
    return CATALOG.with_cells(cells), cells


def test_explain_names_as_the_longest_length_the_one_past_the_row_that_len_plans(cli, tmp_path: Path):
    _, cells = _catalog(tmp_path, ODD_CELLS)
    status, out, err = cli("--cells", str(cells), *PINNED, "--len", "30003", "--explain", "--json")
    reasons = {reason["rule"]: reason["detail"] for reason in json.loads(out)[0]["explanation"]}
    assert status == 1 and "Traceback" not in err
    assert reasons["shorter_length"].startswith(
        "on exactly 8 GPUs the longest length with a plan is 30002 tokens where a table stops its estimate (1 fewer): "
        "Env + SP=4 on 8 GPUs at 30002 tokens (estimated")
    found = {}
    for asked in (("--len", "30002"), ("--maximize", "len")):
        status, out, _ = cli("--cells", str(cells), *PINNED, *asked, "--json")
        (best, *_) = json.loads(out)[0]["plans"]
        found[asked[0]] = (status, best["max_model_len"], best["sp"], best["env"], best["evidence"],
                           best["max_token_len_per_gpu"])
    assert found == {"--len": (0, 30002, 4, True, "estimated", 15001),
                     "--maximize": (0, 30002, 4, True, "estimated", 15001)}


def test_where_a_table_stops_an_estimate_is_a_length_to_maximise_at_the_default_budget_alone(tmp_path: Path):
    catalog, _ = _catalog(tmp_path, ODD_CELLS)
    stops = {}
    for budget in ("default", "auto"):
        query = make_query(catalog, gpu="H800-80GB", model="Qwen3-8B", objective="max_len", budget_gpus=8,
                           exact=True, token_budget=budget)
        data = prepare(catalog, "H800-80GB", query)
        stops[budget] = {stop for stop in data.table_stops if stop[:4] == (8, 1, 0, 4)}
    # Env + SP=4 on 8 GPUs: the row at 40000 stops it at 30002; with auto its estimate reaches on (4 x 15001)
    assert stops == {"default": {(8, 1, 0, 4, 30002)}, "auto": set()}


@pytest.mark.parametrize("cells", ["odd", "contradicting"])
@pytest.mark.parametrize("token_budget", ["default", "auto"])
def test_the_longest_plans_are_the_references(tmp_path: Path, cells: str, token_budget: str):
    catalog, _ = _catalog(tmp_path, ODD_CELLS if cells == "odd" else CONTRADICTING_CELLS)
    pins = [{"budget_gpus": 8}, {"budget_gpus": 8, "env": True}] + [
        {"budget_gpus": gpus, "exact": True, "sp": sp, "offload": False} for gpus, sps in ((4, (2, 4)), (8, (2, 4)))
        for sp in sps]
    for pin in pins:
        query = {"gpu": "H800-80GB", "model": "Qwen3-8B", **pin}
        (answer,) = solve_plan(make_query(catalog, top=3, objective="max_len", token_budget=token_budget, **query),
                               catalog)
        every = enumerate_plans(catalog, objective="max_len", estimates=True, token_budget=token_budget, **query)
        assert [p.model_dump(mode="json") for p in answer.plans] == ranked_alternatives(
            every, catalog.model("Qwen3-8B"), catalog.gpu("H800-80GB"))[:3], query


@pytest.mark.parametrize(("length", "default", "auto"), [
    (30001, (0, 15001), (0, 15001)),  # its row says SP=4: the default budget in both modes
    (30002, (1, None), (0, 14336)),  # its row says SP=4 ran out at 15001 tokens per GPU: auto lowers below it
    (30003, (1, None), (0, 14336)),
])
def test_auto_gives_no_length_the_budget_that_a_row_says_ran_out_of_memory(cli, tmp_path: Path, length: int,
                                                                           default: tuple, auto: tuple):
    catalog, cells = _catalog(tmp_path, CONTRADICTING_CELLS)
    found = []
    for budget in ("default", "auto"):
        status, out, err = cli("--cells", str(cells), *PINNED, "--len", str(length), "--token-budget", budget, "--json")
        plans = json.loads(out)[0]["plans"]
        found.append((status, plans[0]["max_token_len_per_gpu"] if plans else None))
        assert "Traceback" not in err
    assert found == [default, auto]
    query = {"gpu": "H800-80GB", "model": "Qwen3-8B", "max_model_len": length, "budget_gpus": 8, "exact": True,
             "sp": 4, "offload": False}
    every = enumerate_plans(catalog, objective="cheapest", estimates=True, token_budget="auto", **query)
    assert [plan["max_token_len_per_gpu"] for plan in every][:1] == [auto[1]]


@pytest.mark.parametrize("sp", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("tokens", [1, 2, 15000, 15001, 15002])
def test_the_shortest_length_of_a_budget_is_the_first_whose_default_reaches_it(sp: int, tokens: int):
    shortest = shortest_length_of_budget(tokens, sp)
    assert token_budget(shortest, sp) >= tokens > token_budget(shortest - 1, sp)


@pytest.mark.parametrize(("budget", "trains_at"), [(15000, 30001), (15001, 30001), (15002, None)])
def test_solve_memory_at_a_budget_a_row_measured_is_vouched_for_by_that_row(cli, tmp_path: Path, budget: int,
                                                                            trains_at: int | None):
    # 20000 tokens at SP=4 take 10000 per GPU by default; 15001, given, is what the row at 30001 trained with (not
    # only 30002's, the longest length of that default): that row vouches. 15002 is more than any row below 40000
    # measured, and the row at 40000 says Env + SP=4 ran out of memory.
    _, cells = _catalog(tmp_path, ODD_CELLS)
    _, out, err = cli("memory", "--cells", str(cells), "--model", "8B", "--gpu", "H800", "--gpus", "8", "--len",
                      "20000", "--sp", "4", "--env", "--token-budget", str(budget), "--json")
    tables = json.loads(out)["tables"]
    assert "Traceback" not in err
    assert (tables["trains"], tables["source"]["max_model_len"]) == (
        (True, trains_at) if trains_at else (False, 40000))
