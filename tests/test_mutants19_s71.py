"""Tests that kill hand-made mutants session 71's mutants19 ran where few had been: a ranking whose solves stop
before their proofs (each plan found is excluded alone, not the better ones still unfound), and the one-GPU caution's
code of the least host memory plan a host-memory refusal names."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from ortools.sat.python import cp_model
from rich.table import Table
from test_cluster import CATALOG, fleet_of

import solver.solve
from solver.api import plan
from solver.cluster.greedy import greedy
from solver.model import PlanningData
from solver.query import Query
from solver.render.layout import TableOrBlocks, check_text_options, view_text
from solver.results import CautionCode
from solver.tables import QueryError

Cli = Callable[..., tuple[int, str, str]]

EXAMPLES = Path(__file__).parent.parent / "docs" / "examples"


def test_a_ranking_whose_solves_stop_unproven_still_finds_the_better_plans_after_the_first(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Each solve stops at its first plan (as a time limit stops it before its proof, here deterministically): the
    first is not proven the best, so only it and those it dominates are excluded, and the next solves find the
    better plans (the 4-GPU one, for the fewest GPUs) as well; excluding every plan scoring no better than an
    unproven one would leave the ranking at its first plan."""
    ranking_solver = solver.solve._ranking_solver

    def stopping_at_first_plan(data: PlanningData, query: Query) -> cp_model.CpSolver:
        stopping = ranking_solver(data, query)
        stopping.parameters.stop_after_first_solution = True
        stopping.parameters.search_branching = cp_model.AUTOMATIC_SEARCH
        return stopping

    monkeypatch.setattr(solver.solve, "_ranking_solver", stopping_at_first_plan)
    (answer,) = plan("Qwen3-32B", gpu="a100", objective="min_gpus", budget_gpus=8, max_model_len=16384, top=3)
    assert answer.status == "feasible"
    assert [(p.gpus, p.setting.label) for p in answer.plans] == [
        (8, "Env + Offload + SP=8"), (8, "Env + Offload + SP=4"), (4, "Env + Offload + SP=4")]


def test_the_least_host_memory_plan_on_one_gpu_carries_its_caution_code_into_the_reason() -> None:
    """--host-ram too small for every plan: the reason names the best plan without it (on 8 GPUs, no caution) and
    the plan needing the least host memory, on one GPU past 20K tokens, whose one-GPU caution the reason says; its
    code is the answer's too (the best plan's words carry none)."""
    (answer,) = plan("Qwen3-0.6B", gpu="a100", objective="cheapest", budget_gpus=8, max_model_len=24576,
                     host_ram_gb=2)
    assert answer.status == "infeasible"
    assert answer.reason == (
        "nothing in the tables and the memory model's estimates for Qwen3-0.6B on A100-80GB within 8 GPUs trains "
        "with host_ram_gb=2; without host_ram_gb, vanilla on 8 GPUs trains it (24576 tokens), and it needs 20.8 GiB "
        "of host memory per node while the model loads; at the least, Env on 1 GPU trains it (24576 tokens; one "
        "trainer GPU: Trinity-RFT's guide strongly advises more GPUs), and it needs 5.2 GiB of host memory per node "
        "while the model loads")
    assert answer.reason_caution_codes == (CautionCode.SINGLE_GPU_ADVISED_AGAINST,)


def test_a_config_without_problems_has_its_verdict_right_above_the_best_plan(cli: Cli) -> None:
    """The verdict on a config that has no problems of its own is followed by the best plan at once: no empty
    table of problems (a blank line) between them."""
    status, out, err = cli("--from-config", str(EXAMPLES / "trinity.yaml"), "--gpu", "A100-80GB")
    assert (status, err) == (0, "")
    assert out.splitlines()[:4] == [
        "A100-80GB · Qwen3-8B · cheapest plan for 32768 tokens on exactly 6 GPUs: optimal",
        ("trinity.yaml runs vanilla on 6 trainer GPUs at 32768 tokens (Env off, "
         "PYTORCH_CUDA_ALLOC_CONF unset in this shell): the A100-80GB table for 6 GPUs says 'Env' at"),
        ("16384, so vanilla ran out of memory there. At 32768 tokens each GPU holds more than at 16384. The best plan "
         "follows."),
        "plan           Env + SP=2 on 6 of 6 GPUs, with 2 rollout GPUs"]


def test_greedy_places_a_job_whose_host_need_is_exactly_what_the_node_has_left(tmp_path: Path) -> None:
    """Two Qwen3-4B jobs on a node of 16 A100s: the first takes its cheapest plan, 6 trainer GPUs that need 105.8 GiB
    of host memory (six ranks' fp32 loads of the tied model beside the reference model's fp32 shards, all six on
    this node); the second then fits on 2 trainer GPUs (51.1 GiB) where the node has exactly that left, and not where
    it has a tenth less."""
    def placed(host_ram_gb: float) -> list[tuple[str, int, float | None]]:
        job = {"model": "Qwen3-4B", "max_model_len": 8192, "rollout_gpus": 4}
        pool = {"name": "one", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 16, "host_ram_gb": host_ram_gb}
        fleet = fleet_of({"pools": [pool], "jobs": [{**job, "name": "b"}, {**job, "name": "c"}]}, tmp_path)
        return [(p.job, p.trainer_gpus, p.plan.host_memory_gb) for p in greedy(fleet, CATALOG).placements]

    assert placed(156.9) == [("b", 6, 105.8), ("c", 2, 51.1)]
    assert placed(156.8) == [("b", 6, 105.8)]


def _ranked_table() -> Table:
    """A titled, captioned table of three columns, the last not wrapping: 38 columns wide whole."""
    table = Table(title="ranked plans", caption="* a lowered token budget")
    table.add_column("plan")
    table.add_column("GPUs")
    table.add_column("setting", no_wrap=True)
    table.add_row("1", "8", "Env + Offload + SP=8")
    table.add_row("2", "4", "")
    return table


def test_a_table_is_shown_whole_where_it_just_fits_and_as_blocks_a_column_narrower() -> None:
    """At its own width the table is shown; a column less, its rows turn into blocks under its title and over its
    caption: each row's heading once, beside each other column's header and non-empty cell."""
    assert view_text(TableOrBlocks(_ranked_table(), 0, "plan {}"), 38) == (
        "             ranked plans\n"
        "┏━━━━━━┳━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━┓\n"
        "┃ plan ┃ GPUs ┃ setting              ┃\n"
        "┡━━━━━━╇━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━┩\n"
        "│ 1    │ 8    │ Env + Offload + SP=8 │\n"
        "│ 2    │ 4    │                      │\n"
        "└──────┴──────┴──────────────────────┘\n"
        "       * a lowered token budget\n")
    assert view_text(TableOrBlocks(_ranked_table(), 0, "plan {}"), 37) == (
        "ranked plans\n"
        "plan 1  GPUs     8\n"
        "        setting  Env + Offload + SP=8\n"
        "plan 2  GPUs     4\n"
        "* a lowered token budget\n")


def test_a_table_whose_wrapped_words_just_fit_is_shown_as_a_table() -> None:
    """A table wider than the terminal whose wrapping column, narrowed to its longest word, needs just its width is a
    table still; a column less, blocks (mutants57: a table needing the very width was laid out as blocks)."""
    def words_table() -> Table:
        table = Table(title="t")
        table.add_column("n", no_wrap=True)
        table.add_column("words")
        table.add_row("1", "aaaa bbbb")
        return table

    assert view_text(TableOrBlocks(words_table(), 0), 13) == (
        "      t\n┏━━━┳━━━━━━━┓\n┃ n ┃ words ┃\n┡━━━╇━━━━━━━┩\n│ 1 │ aaaa  │\n│   │ bbbb  │\n└───┴───────┘\n")
    assert view_text(TableOrBlocks(words_table(), 0), 12).startswith("t\n1  words  ")


def test_tables_for_exactly_the_most_gpus_the_map_maps_send_to_the_map_for_them(cli: Cli) -> None:
    """No table for 64 trainer GPUs: solve map maps that many (the most it maps), so the hint is a map for it; past
    it (65), up to 64 GPUs, the most it maps."""
    hint = "solve map --gpu a100 --gpus-up-to 64 maps what the planner answers"
    for gpus, covered in ((64, "for it"), (65, "up to 64 GPUs, the most it maps")):
        assert cli("tables", "--gpus", str(gpus), "--gpu", "a100") == (2, "", (
            f"solve tables: error: no table of A100-80GB for {gpus} trainer GPUs; documented counts: 1, 2, 4, 6; "
            f"{hint} {covered}\n"))


def test_a_text_view_takes_the_fewest_columns_and_refuses_one_less() -> None:
    """20 columns, the fewest a view is laid out for, is a width a text view takes; 19 is refused, naming the
    range."""
    check_text_options(20, False)
    with pytest.raises(QueryError) as refused:
        check_text_options(19, False)
    assert str(refused.value) == "width must be a whole number of columns from 20 to 65536, got 19"


def test_a_table_whose_words_fit_when_its_wrapping_column_narrows_stays_a_table() -> None:
    """A note of 46 columns that may wrap: at 30 columns the table still fits with the note wrapped at its words
    (its longest, Offload, fits), so it is no blocks."""
    table = Table(title="ranked plans")
    table.add_column("plan")
    table.add_column("note")
    table.add_row("1", "Env + Offload + SP=8 on every node of the pool")
    assert view_text(TableOrBlocks(table, 0, "plan {}"), 30) == (
        "         ranked plans\n"
        "┏━━━━━━┳━━━━━━━━━━━━━━━━━━━━━┓\n"
        "┃ plan ┃ note                ┃\n"
        "┡━━━━━━╇━━━━━━━━━━━━━━━━━━━━━┩\n"
        "│ 1    │ Env + Offload +     │\n"
        "│      │ SP=8 on every node  │\n"
        "│      │ of the pool         │\n"
        "└──────┴─────────────────────┘\n")


@pytest.mark.parametrize(("memory", "error"), [
    ("81559GB", "must be from 8 to 4096 (GB), got '81559GB'"),  # GB written: no guess that it is the driver's MiB
    ("4194305MiB", "must be from 8192MiB to 4194304MiB, got '4194305MiB'"),  # 4096 GB in MiB, the most
])
def test_gpu_memory_out_of_range_names_its_bounds_in_the_unit_written(cli: Cli, memory: str, error: str) -> None:
    """A GPU memory out of range is refused with the bounds in the unit it was written in, and the driver's-MiB
    guess only for a bare number."""
    assert cli("memory", "--model", "4B", "--gpu", "a100", "--gpus", "1", "--len", "8k", "--gpu-memory", memory) == (
        2, "", ("usage: solve memory [options] (--help lists them)\n"
                f"solve memory: error: argument --gpu-memory: {error}\n"))
