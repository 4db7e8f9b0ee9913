"""s71, a service that embeds the API (persona31): an explanation past the call's deadline asks CP-SAT nothing and sets
no assumptions (thousands of them took seconds past a 0.3 s deadline); a `current` file nested thousands deep is a
one-line `TableError`, not a RecursionError; the caches of names' forms keep no long name a user sent."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest
from command_words import make_query
from ortools.sat.python import cp_model

import solver
from solver.explain import _Prober
from solver.model import prepare
from solver.solve import plan
from solver.tables import TableError, load_catalog
from solver.tables.text import CACHED_NAME_LENGTH, gpu_name_forms, normalise

CATALOG = load_catalog()
FLEET = Path(__file__).resolve().parents[1] / "docs" / "examples" / "fleet.yaml"


def test_a_question_past_the_deadline_is_undecided_without_setting_its_assumptions(
        monkeypatch: pytest.MonkeyPatch) -> None:
    query = make_query(CATALOG, gpu="a100", model="8B", max_model_len=32768, budget_gpus=6, estimate="never")
    data = prepare(CATALOG, "A100-80GB", query)
    combinations = [entry.combination for entry in data.ranks]
    prober = _Prober(data, query)
    prober.deadline = 0.0  # long passed
    set_assumptions: list[object] = []
    monkeypatch.setattr(prober.model, "add_assumptions", set_assumptions.append)
    monkeypatch.setattr(prober.solver, "solve", lambda model: pytest.fail("solved past the deadline"))
    assert prober.classify(combinations, None) == []
    assert set_assumptions == []
    assert prober.undecided >= len(combinations) > 0
    assert prober.binding_rules() is None  # undecided, as a solve cut short is


def test_an_explanation_in_time_is_unchanged_by_the_shortcut() -> None:
    # The same prober's questions, in time, still put each cheaper combination down to its rule.
    query = make_query(CATALOG, gpu="a100", model="8B", max_model_len=32768, budget_gpus=6, estimate="never")
    (answer,) = plan(query, CATALOG)
    data = prepare(CATALOG, answer.gpu, query)
    prober = _Prober(data, query)
    assert prober.binding_rules() is not None
    assert prober._status(list(prober.guards.values())) in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    assert prober.undecided == 0


def test_a_current_file_nested_too_deeply_is_a_one_line_table_error(tmp_path: Path, cli) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 10_000 + "]" * 10_000)
    with pytest.raises(TableError) as caught:
        solver.place(FLEET, current=deep)
    said = f"{deep}: nested too deeply: a placement is what solve cluster --json printed"
    assert str(caught.value) == said
    assert cli("cluster", str(FLEET), "--current", str(deep)) == (2, "", f"solve cluster: error: --current {said}\n")


def test_the_name_caches_keep_short_names_and_no_long_one() -> None:
    assert normalise("A100 80GB") == "a100-80gb" and normalise("A100 80GB") is normalise("A100 80GB")  # cached
    long_name = "NVIDIA " + "Y" * CACHED_NAME_LENGTH
    assert normalise(long_name) == "nvidia-" + "y" * CACHED_NAME_LENGTH  # worked out as any name is
    assert gpu_name_forms(long_name) == ("nvidia-" + "y" * CACHED_NAME_LENGTH, "y" * CACHED_NAME_LENGTH)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for sent in range(10):  # 200 kB names: 4 MB kept in the cache before (each name and its form)
            normalise(f"{sent} " + "x" * 200_000)
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < 1_000_000
