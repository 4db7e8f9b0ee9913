"""Session 81, mapfuzz: `solver.map_plans` (``solve map``) refuses what all its cells share once, before any cell, and
the fuzz targets reach the map's newer options.

Before, the map checked the run's kind (``dpo`` beside a ``critic``), the token budget mode and the release in its
first cell's query, after its rows' LoRA targets: ``solve map --dpo --critic resident --lora-rank 8 --lora-targets
xyz`` named the targets where ``solve`` names the DPO conflict, and a token budget cap on a model of the rows that
reads none was refused only once the rows before it were solved. Now `check_run_options` (the checks `make_query`
makes first) runs once before the grid, `check_rows` checks each row's cap and targets before any solve, and past them
each cell is the solver's own answer for its budget."""

from __future__ import annotations

from typing import Any

import pytest
from fuzz_targets import MAP_ARGVS, MAP_OPTIONS, MAP_WORDS, TARGETS
from hypothesis import given, settings
from test_padbound_s71 import INTERNLM2, Cli

import solver
import solver.maps
from solver.tables import QueryError, load_catalog
from solver.tables.model_config import load_model_config

DPO_CRITIC = "--dpo trains no PPO critic (Trinity's dpo algorithm uses none): drop --critic resident"
INTERNLM2_CAP = ("token_budget 8192: internlm2-7b trains one padded sequence per micro-batch, which reads no token "
                 "budget: leave token_budget out")


@pytest.fixture
def no_solve(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The map's cells' queries, recorded; a solve fails the test."""
    queries: list[Any] = []

    def solved(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a cell was solved before the refusal")

    def recorded(*args: Any, **kwargs: Any) -> None:
        queries.append(kwargs)
        raise AssertionError("a cell's query was made before the refusal")

    monkeypatch.setattr(solver.maps, "best_plan", solved)
    monkeypatch.setattr(solver.maps, "make_query", recorded)
    return queries


def test_a_dpo_conflict_is_refused_before_the_rows_targets_as_solve_refuses_it(cli: Cli, no_solve: list[Any]):
    args = ("--gpu", "h100", "--dpo", "--critic", "resident", "--lora-rank", "8", "--lora-targets", "xyz")
    assert cli("map", *args) == (2, "", f"solve map: error: {DPO_CRITIC}\n")
    assert cli("--model", "8B", *args)[2] == f"solve: error: {DPO_CRITIC}\n"
    assert no_solve == []


@pytest.mark.parametrize(("keywords", "message"), [
    ({"dpo": True, "critic": "resident", "lora_rank": 8, "lora_targets": "xyz"},
     "dpo=True trains no PPO critic (Trinity's dpo algorithm uses none): drop critic='resident'"),
    ({"token_budget": "auto", "estimate": "never", "lora_rank": 8, "lora_targets": "xyz"},
     ('token_budget="auto" lowers the token budget of estimated plans, which estimate="never" turns off: drop one of '
      "them")),
    ({"critic": "gae"}, "critic must be one of None, none, resident, offloaded, reloaded, got 'gae'"),
    ({"time_limit_s": 0.0}, "time_limit_s must be above 0 seconds and at most 1000000000, got 0.0"),
])
def test_what_every_cell_shares_is_refused_once_before_any_query(no_solve: list[Any], keywords: dict[str, Any],
                                                                 message: str):
    for by, model in (("model", ["8B", "4B"]), ("len", "8B")):
        with pytest.raises(QueryError) as refused:
            solver.map_plans(model, gpu=["h100", "a100"], by=by, gpus_up_to=2, **keywords)
        assert str(refused.value) == message
    assert no_solve == []


def test_a_cap_on_a_row_that_reads_none_is_refused_before_any_solve(no_solve: list[Any]):
    model = load_model_config(INTERNLM2)
    catalog = load_catalog().with_model(model)
    two = "; of the map's 2 models, it is read on Qwen3-8B alone: map those (model=['Qwen3-8B'])"
    three = ("; of the map's 3 models, it is read on Qwen3-8B, Qwen3-4B alone: map those (model=['Qwen3-8B', "
             "'Qwen3-4B'])")
    for rows, tail in ((["8B", model.name], two), ([model.name], ""), (["8B", model.name, "4B"], three)):
        with pytest.raises(QueryError) as refused:
            solver.map_plans(rows, gpu="h100", gpus_up_to=2, token_budget=8192, catalog=catalog)
        assert str(refused.value) == INTERNLM2_CAP + tail
    assert no_solve == []


def test_each_cell_is_judged_on_its_own_budget(cli: Cli):
    status, out, err = cli("map", "--gpu", "h100", "--model", "14B", "--critic", "resident", "--budgets", "1,2,8",
                           "--time-limit", "5")
    assert (status, err) == (0, "")
    assert out.splitlines()[0] == "H100-80GB: longest context per model and GPU budget, critic resident"
    (row,) = [line for line in out.splitlines() if line.startswith("│ Qwen3-14B")]
    assert row == "│ Qwen3-14B │   -    │    -    │ 129k E+O+SP8@8~!^ │"
    (answer,) = solver.plan("14B", gpu="h100", objective="max_len", budget_gpus=8, critic="resident", time_limit_s=5)
    assert (answer.plans[0].max_model_len, answer.plans[0].gpus) == (132096, 8)  # the map's 129k cell, as solve's


def test_the_fuzz_targets_draw_the_maps_options():
    for word in ("--lora-targets", "--lora-exclude", "--dpo", "--critic", "--token-budget", "--trinity-version",
                 "--by", "--budgets", "--gpus-up-to"):
        assert word in MAP_WORDS
    drawn: list[list[str]] = []

    @settings(max_examples=200, database=None, derandomize=True)
    @given(MAP_ARGVS)
    def draw(argv: list[str]) -> None:
        drawn.append(argv)

    draw()
    assert all(argv[0] == "map" for argv in drawn)
    assert {"--dpo", "--critic", "--lora-targets", "--trinity-version"} <= {word for argv in drawn for word in argv}
    assert {"map command lines", "map_plans keywords"} <= set(TARGETS)
    assert set(MAP_OPTIONS) == {"lora_targets", "lora_exclude_modules", "dpo", "critic", "token_budget",
                                "trinity_version", "lora_rank", "reference_model", "by", "estimate"}
