"""Rows of odd lengths (session 66): a table's row speaks for the lengths between it and the row before, except
those that take no more tokens per GPU at Trinity's default budget, ceil(2L / SP), than the row before, which
speaks for them (`solver.rules.own_table_limit`): the memory follows the tokens. So the default token budget and
``--token-budget auto`` agree where auto keeps the default (30002 tokens at SP=4 take 15001 per GPU, as 30001
does), and the planner still answers as the brute-force reference (tests/reference.py) does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from command_words import make_query
from reference import enumerate_plans, ranked_alternatives

from solver.maps import length_rows
from solver.rules import (
    default_budget_reach,
    failures_by_row,
    own_table_limit,
    refuting_row,
    table_cells,
    token_budget,
)
from solver.solve import plan as solve_plan
from solver.tables import MAX_TOKENS, Catalog, Setting, load_catalog

CATALOG = load_catalog()

# Made-up H800 cells of Qwen3-8B at odd lengths. On 8 GPUs: SP=2 trains at 20001 (vanilla and Env ran out),
# SP=4 at 30001 (SP=2 and Env + SP=2 ran out), SP=8 at 40000 (SP=4 and Env + SP=4 ran out). On 4 GPUs: SP=4 at
# 15001, Env + Offload + SP=4 at 25003 (Env + SP=4 ran out).
ODD_CELLS = """gpu: H800-80GB
memory_gb: 80
source: "made-up: rows of odd lengths"
tables:
  - gpus: 4
    section: "4 x H800"
    models: [Qwen3-8B]
    rows:
      - {max_model_len: 15001, cells: {Qwen3-8B: SP=4}}
      - {max_model_len: 25003, cells: {Qwen3-8B: Env + Offload + SP=4}}
  - gpus: 8
    section: "8 x H800"
    models: [Qwen3-8B]
    rows:
      - {max_model_len: 20001, cells: {Qwen3-8B: SP=2}}
      - {max_model_len: 30001, cells: {Qwen3-8B: SP=4}}
      - {max_model_len: 40000, cells: {Qwen3-8B: SP=8}}
"""


@pytest.fixture(scope="module")
def odd_catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    cells = tmp_path_factory.mktemp("odd") / "odd.yaml"
    cells.write_text(ODD_CELLS, encoding="utf-8")
    return CATALOG.with_cells(cells)


def _failures(catalog: Catalog, gpus: int) -> list:
    """`failures_by_row` of Qwen3-8B's H800 table for `gpus` GPUs in `catalog`."""
    shape = catalog.model("Qwen3-8B")
    rows, settings, _ = table_cells(catalog.gpu("H800-80GB"), shape)
    return failures_by_row(shape, rows, settings, gpus)


@pytest.mark.parametrize(("length", "sp", "reach"), [
    (30001, 1, 30001), (30001, 2, 30001), (30001, 4, 30002), (30001, 8, 30004),  # odd: SP above 2 rounds up
    (30000, 1, 30000), (30000, 2, 30000), (30000, 4, 30000), (30000, 8, 30000),  # 2L a multiple of SP
    (30002, 8, 30004), (30003, 4, 30004), (20000, 3, 20001), (20002, 3, 20002), (0, 4, 0),
])
def test_the_default_budgets_reach_is_the_longest_length_of_the_same_tokens_per_gpu(length: int, sp: int,
                                                                                    reach: int):
    assert default_budget_reach(length, sp) == reach
    # brute force: the lengths from `length` up that take no more tokens per GPU end at the reach
    tokens = token_budget(length, sp)
    assert max(longer for longer in range(length, length + 2 * sp + 1) if token_budget(longer, sp) <= tokens) == reach


@pytest.mark.parametrize(("gpus", "setting", "limit", "refuted"), [
    (8, Setting(env=True, sp=4), 30002, 40000),  # 30001's 15001 tokens per GPU reach 30002 at SP=4
    (8, Setting(env=True, sp=2), 20001, 30001),  # SP=2: 20001 takes 20001 tokens, 20002 one more
    (8, Setting(env=True), 0, 20001),  # the first row says Env ran out: every length
    (8, Setting(env=True, sp=8), None, None),  # no row says SP=8 ran out
    (4, Setting(env=True, sp=4), 15002, 25003),
])
def test_a_tables_limit_reaches_the_lengths_of_the_row_befores_tokens(odd_catalog: Catalog, gpus: int,
                                                                      setting: Setting, limit: int | None,
                                                                      refuted: int | None):
    shape = odd_catalog.model("Qwen3-8B")
    rows, settings, _ = table_cells(odd_catalog.gpu("H800-80GB"), shape)
    assert own_table_limit(_failures(odd_catalog, gpus), setting) == (limit if limit is not None else MAX_TOKENS)
    around = {1, 40000, 40001} | ({length for length in range(limit - 2, limit + 4) if length > 0} if limit else set())
    for length in sorted(around):
        expected = refuted if limit is not None and length > limit else None
        assert refuting_row(shape, rows, settings, gpus, setting, length) == expected, length


def test_a_row_still_speaks_for_its_own_length_where_the_row_before_takes_as_many_tokens(tmp_path: Path):
    # Cells that contradict themselves: 30001 and 30002 both take 15001 tokens per GPU at SP=4, and Env + SP=4 ran
    # out of memory at 30002. That row decides its own length; 30001 still stands.
    cells = tmp_path / "contra.yaml"
    cells.write_text(ODD_CELLS.replace("{max_model_len: 40000, cells: {Qwen3-8B: SP=8}}",
                                       "{max_model_len: 30002, cells: {Qwen3-8B: SP=8}}"), encoding="utf-8")
    catalog = CATALOG.with_cells(cells)
    shape = catalog.model("Qwen3-8B")
    rows, settings, _ = table_cells(catalog.gpu("H800-80GB"), shape)
    assert own_table_limit(_failures(catalog, 8), Setting(env=True, sp=4)) == 30001
    assert [refuting_row(shape, rows, settings, 8, Setting(env=True, sp=4), length) for length in (30001, 30002)] == [
        None, 30002]


# Every length around the rows, each SP pin on exactly 4 and 8 GPUs and none within 8, Env pinned on or free,
# at the default token budget and with --token-budget auto: the planner's plans are the reference's.
LENGTHS = (15002, 15003, 20001, 20002, 25003, 30002, 30003, 30004, 40001)
PINS = [{"budget_gpus": 8}, {"budget_gpus": 8, "env": True}] + [
    {"budget_gpus": gpus, "exact": True, "sp": sp, "offload": False} for gpus, sps in ((4, (2, 4)), (8, (1, 2, 4, 8)))
    for sp in sps]


@pytest.mark.parametrize("token_budget", ["default", "auto"])
def test_odd_rows_are_planned_as_the_reference_plans_them(odd_catalog: Catalog, token_budget: str):
    compared = 0
    for length in LENGTHS:
        for pin in PINS:
            query = {"gpu": "H800-80GB", "model": "Qwen3-8B", "max_model_len": length, **pin}
            (answer,) = solve_plan(make_query(odd_catalog, top=3, token_budget=token_budget, **query), odd_catalog)
            every = enumerate_plans(odd_catalog, objective="cheapest", estimates=True, token_budget=token_budget,
                                    **query)
            assert [p.model_dump(mode="json") for p in answer.plans] == ranked_alternatives(
                every, odd_catalog.model("Qwen3-8B"), odd_catalog.gpu("H800-80GB"))[:3], query
            compared += 1
    assert compared == len(LENGTHS) * len(PINS)


@pytest.mark.parametrize(("length", "sp", "default", "auto"), [
    (30002, 4, (0, 15001), (0, 15001)),  # 30001's tokens per GPU: the default budget in both modes
    (30003, 4, (1, None), (0, 14336)),  # a token more per GPU than 30001's: lowered with auto alone
    (30000, 4, (0, 15000), (0, 15000)),  # even, below the row: the documented SP=4 at 30001
    (20002, 2, (1, None), (0, 14336)),  # SP=2: 20002 takes a token more per GPU than 20001 (the 4-GPU table caps
    # Env + Offload + SP=2 at 15001 tokens per GPU, and so Env + SP=2 on more GPUs)
    (30004, 8, (0, 7501), (0, 7501)),  # SP=8: documented at 40000, the next row up
])
def test_the_default_budget_trains_what_auto_trains_at_the_default_budget(cli, tmp_path: Path, length: int, sp: int,
                                                                          default: tuple, auto: tuple):
    cells = tmp_path / "odd.yaml"
    cells.write_text(ODD_CELLS, encoding="utf-8")
    found = []
    for budget in ("default", "auto"):
        status, out, err = cli("--cells", str(cells), "--model", "8B", "--gpu", "H800", "--gpus", "8", "--exact",
                               "--sp", str(sp), "--no-offload", "--len", str(length), "--token-budget", budget,
                               "--json")
        plans = json.loads(out)[0]["plans"]
        found.append((status, plans[0]["max_token_len_per_gpu"] if plans else None))
        assert "Traceback" not in err
    assert found == [default, auto]


@pytest.mark.parametrize(("budget", "status", "refuted_at"), [(15001, 0, None), (15002, 1, 40000)])
def test_solve_memory_at_a_budget_the_row_before_measured_is_not_refuted(cli, tmp_path: Path, budget: int, status: int,
                                                                         refuted_at: int | None):
    # 15001 tokens per GPU at SP=4 is what 30001 took, where SP=4 trained: the 40000 row speaks of more.
    cells = tmp_path / "odd.yaml"
    cells.write_text(ODD_CELLS, encoding="utf-8")
    exit_status, out, _ = cli("memory", "--cells", str(cells), "--model", "8B", "--gpu", "H800", "--gpus", "8",
                              "--len", "40000", "--sp", "4", "--env", "--token-budget", str(budget), "--json")
    tables = json.loads(out)["tables"]
    assert (exit_status, tables and (tables["trains"], tables["source"]["max_model_len"])) == (
        status, refuted_at and (False, refuted_at))


def test_a_length_maps_rows_past_an_odd_last_row_go_on_from_the_grid(odd_catalog: Catalog):
    # Past the last row, 40000 (off the estimates' 1024-token grid), the rows go on from 39936 + 10240, on the grid,
    # to the longest length 4 GPUs reach.
    assert length_rows(odd_catalog, "H800-80GB", "Qwen3-8B", [4]) == [15001, 20001, 25003, 30001, 40000, 50176, 60416,
                                                                      70656, 80896, 91136, 101376]
