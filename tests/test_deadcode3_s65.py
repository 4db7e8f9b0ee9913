"""Session 65, deadcode3: what coverage of the session's merged code left unchecked. `Planner.answer` keeps only a
decided answer (one the reach questions' work budget cut short is asked again); `--buy`'s ways cut by the wall clock
say so ('ways'); and the API's text view of a purchase that found none (no pools: cut short by the time limit, or
infeasible), which raised an IndexError from the pools' check, gives the command's text in the API's words."""

from __future__ import annotations

from importlib import import_module
from pathlib import Path

import pytest
from cluster_api import buy
from test_cluster import CATALOG
from test_clusterbuy_s60 import fleet_file
from test_clusterdedup_s65 import A100, TOO_LONG
from test_minnodes_s64 import _fleet_file, _questions_per_second

import solver
from solver.cli import main
from solver.cluster.options import Planner
from solver.rules import COMMAND_OPTIONS
from solver.solve import WorkBudget, work_budget
from solver.tables import JobTraining, QueryError, load_weights

BUY_MODULE = import_module("solver.cluster.buy")
"""`solver.cluster.buy` the module (the package's `buy` is its function)."""
WIDE = 400
"""Columns wide enough that no line wraps: ``time_limit_s`` longer than ``--time-limit`` then moves no break."""


def test_an_undecided_answer_is_not_kept_and_is_asked_again():
    planner = Planner(CATALOG, load_weights(), "auto")
    query = planner.question("H20-96GB", "Qwen3-32B", 8, "auto", None, JobTraining(), objective="min_gpus",
                             budget_gpus=64, max_model_len=131072)
    with work_budget(WorkBudget(0.0)):  # no deterministic time left: the solve stops undecided
        first = planner.answer(query, "H20-96GB", explained=False)
        again = planner.answer(query, "H20-96GB", explained=False)
    assert (first.status, first.decided, again.status) == ("unknown", False, "unknown")
    assert again is not first and (planner.asked, planner.answers) == (2, {})
    decided = planner.answer(query, "H20-96GB", explained=False)  # with the time it needs: decided, then kept
    assert decided.decided and planner.answer(query, "H20-96GB", explained=False) is decided and planner.asked == 3


@pytest.mark.wall_clock  # about the wall clock: keeps the real one
def test_a_purchase_whose_ways_the_wall_clock_cut_names_the_step(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    _questions_per_second(monkeypatch, 1000, wall_share=0.0)  # the net at once: no job's ways are asked
    result = solver.buy_nodes(_fleet_file(tmp_path), time_limit_s=4, option_names=COMMAND_OPTIONS)
    assert (result.status, result.gpus, result.pools, result.wall_clock_stopped, len(result.ways_cut_short)) == (
        "unknown", None, (), ("ways",), 12)


@pytest.mark.parametrize("case", ["cut short", "infeasible"])
def test_the_api_text_of_a_purchase_that_found_none_is_the_command_s_in_the_api_s_words(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], case: str):
    monkeypatch.setenv("COLUMNS", str(WIDE))
    if case == "cut short":
        _questions_per_second(monkeypatch, 3)
        path = _fleet_file(tmp_path)
    else:
        path = fleet_file({"pools": [A100], "jobs": [TOO_LONG]}, tmp_path)
    assert main(["cluster", str(path), "--buy", "--time-limit", "4"]) == 1
    printed = capsys.readouterr().out
    result = buy(path, time_limit_s=4)  # its reasons in the command's words: the view's own lines alone differ
    assert (result.status, result.pools) == ("unknown" if case == "cut short" else "infeasible", ())
    text = solver.cluster_text(result, path, width=WIDE)
    assert text == printed.replace("--time-limit ", "time_limit_s=").replace("--time-limit", "time_limit_s")
    assert ("raise time_limit_s" in text) == (case == "cut short")
    assert solver.cluster_text(result, path, width=WIDE, option_names=COMMAND_OPTIONS) == printed


def test_a_placement_on_other_pools_is_still_refused_in_one_line(tmp_path: Path):
    result = solver.place(fleet_file({"pools": [A100], "jobs": [TOO_LONG]}, tmp_path), time_limit_s=1)
    (tmp_path / "other").mkdir()
    other = fleet_file({"pools": [{**A100, "name": "b100"}], "jobs": [TOO_LONG]}, tmp_path / "other")
    with pytest.raises(QueryError, match=r"^result is on the pools a100, fleet has b100: pass the fleet it placed$"):
        solver.cluster_text(result, other)


@pytest.mark.wall_clock  # about the wall clock: keeps the real one
def test_ctrl_c_while_a_purchase_s_placement_widens_keeps_it_as_placed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = fleet_file({"pools": [A100], "jobs": [
        {"name": "small", "model": "Qwen3-0.6B", "max_model_len": 8192, "rollout_gpus": 1}]}, tmp_path)
    widened = buy(path, time_limit_s=10)
    assert (widened.status, widened.interrupted, widened.placement_proven) == ("optimal", False, True)
    grown = BUY_MODULE.grown_placements

    def interrupted(*args: object) -> object:
        if args[-1] is not None:  # widening, by a deadline: Ctrl-C comes
            raise KeyboardInterrupt
        return grown(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(BUY_MODULE, "grown_placements", interrupted)
    result = buy(path, time_limit_s=10)
    assert (result.status, result.interrupted, result.placement_proven, result.gpus) == (
        "optimal", True, False, widened.gpus)
    assert result.placements == widened.placements  # here widening grows nothing: the placement, as placed
