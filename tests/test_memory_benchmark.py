"""`benchmarks/memory_model.py` against `memory_benchmark_reference.py`, cell by cell: the same cells, the same
training cells per split, and the same prediction and outcome (exact, conservative, unsafe) for the memory model,
Trinity's rough check and the Env-on choice; and each split's row of benchmarks/README.md as that scoring gives it."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from benchmark_modules import load_benchmark
from memory_benchmark_reference import (
    GIB,
    SHAPES,
    Cell,
    Choice,
    candidates,
    cheapest,
    classify,
    parse_setting,
    source_cells,
    trinity_fits,
    trinity_gib,
)

from solver.calibrate import calibrate, observations
from solver.memory import breakdown
from solver.tables import DEFAULT_MARGIN, Setting, load_catalog

BENCHMARK = load_benchmark("memory_model")
CATALOG = load_catalog()
MEMORY_GIB = {gpu.name: gpu.memory_gib for gpu in CATALOG.documented_gpu_types}
CELLS = source_cells()
README = Path(__file__).resolve().parent.parent / "benchmarks" / "README.md"
SMALL = ("Qwen3-0.6B", "Qwen3-1.7B", "Qwen3-4B")
Held = Callable[[Cell], bool]

# (name, training cells, held-out cells), issue 6 item 5's splits and then the benchmark's extrapolating ones.
SPLITS: list[tuple[str, Held, Held]] = [
    ("fit A100, predict H20", lambda c: c.gpu == "A100-80GB", lambda c: c.gpu == "H20-96GB"),
    ("fit H20, predict A100", lambda c: c.gpu == "H20-96GB", lambda c: c.gpu == "A100-80GB"),
    *[(f"leave out {n} GPU{'s' if n > 1 else ''}", lambda c, n=n: c.gpus != n, lambda c, n=n: c.gpus == n)
      for n in (1, 2, 4, 6)],
    *[(f"leave out {m}", lambda c, m=m: c.model != m, lambda c, m=m: c.model == m) for m in SHAPES],
    ("all cells, in sample", lambda c: True, lambda c: True),
    ("fit 0.6B-4B, predict 8B and 14B", lambda c: c.model in SMALL, lambda c: c.model not in SMALL),
    ("fit 1-2 GPUs, predict 4 and 6", lambda c: c.gpus <= 2, lambda c: c.gpus >= 4),
    ("fit 0.6B-4B on 1-2 GPUs, predict 8B-14B on 4-6", lambda c: c.model in SMALL and c.gpus <= 2,
     lambda c: c.model not in SMALL and c.gpus >= 4),
    ("  the same, fit on A100, predict H20", lambda c: c.gpu == "A100-80GB" and c.model in SMALL and c.gpus <= 2,
     lambda c: c.gpu == "H20-96GB" and c.model not in SMALL and c.gpus >= 4),
    ("  the same, fit on H20, predict A100", lambda c: c.gpu == "H20-96GB" and c.model in SMALL and c.gpus <= 2,
     lambda c: c.gpu == "A100-80GB" and c.model not in SMALL and c.gpus >= 4),
]

Outcomes = dict[tuple[str, int, str, int], tuple[Choice | None, Choice | None, str]]


def as_choice(setting: Setting | None) -> Choice | None:
    """The planner's `setting` as the reference's `Choice`."""
    return None if setting is None else Choice(setting.env, setting.offload, setting.sp)


def benchmark_outcomes(found: list[tuple]) -> Outcomes:
    """The benchmark's `outcomes` keyed by cell, in the reference's types."""
    return {(gpu, gpus, model, length): (as_choice(documented), as_choice(predicted), outcome)
            for gpu, gpus, model, length, documented, predicted, outcome in found}


def reference_outcomes(held: Held, predict: Callable[[Cell], Choice | None],
                       documented_as: Callable[[Choice | None], Choice | None] = lambda choice: choice) -> Outcomes:
    """The reference's outcome of every held-out cell."""
    found: Outcomes = {}
    for cell in filter(held, CELLS):
        documented, predicted = documented_as(cell.setting), predict(cell)
        found[(cell.gpu, cell.gpus, cell.model, cell.length)] = (documented, predicted, classify(documented, predicted))
    return found


def with_env(choice: Choice | None) -> Choice | None:
    """A documented setting with Env turned on, as the Env-on columns score it."""
    return None if choice is None else Choice(True, choice.offload, choice.sp)


def readme_rows() -> dict[str, list[str]]:
    """benchmarks/README.md's memory-model rows: split name to its cells, percentages and counts as written."""
    rows: dict[str, list[str]] = {}
    for line in README.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 9 and re.fullmatch(r"\d+", cells[1]):
            rows[cells[0]] = cells[1:]
    return rows


def _shares(outcomes: dict, *kinds: str) -> list[str]:
    found = [outcome for _, _, outcome in outcomes.values()]
    return [f"{100 * found.count(kind) / len(found):.1f}%" for kind in kinds]


def test_reference_reads_the_source_as_the_catalogue_does():
    shipped = {(gpu.name, table.gpus, name, row.max_model_len): as_choice(row.setting(name))
               for gpu in CATALOG.documented_gpu_types for table in gpu.tables for name in table.models
               for row in table.rows}
    assert len(CELLS) == 560
    assert {(c.gpu, c.gpus, c.model, c.length): c.setting for c in CELLS} == shipped


def test_the_splits_are_the_benchmarks():
    assert [name for name, _, _ in SPLITS] == [name for name, _, _ in
                                               (*BENCHMARK.splits(CATALOG), *BENCHMARK.extrapolating_splits())]


@pytest.mark.parametrize("index", range(len(SPLITS)), ids=[name.strip() for name, _, _ in SPLITS])
def test_benchmark_scores_every_cell_as_the_reference(index):
    _, train, held = SPLITS[index]
    _, bench_train, bench_held = [*BENCHMARK.splits(CATALOG), *BENCHMARK.extrapolating_splits()][index]
    training = observations(CATALOG, lambda g, n, m: train(Cell(g, n, m, 0, None)))
    assert observations(CATALOG, bench_train) == training
    coefficients, _ = calibrate(training)

    def fits(cell: Cell, choice: Choice) -> bool:
        setting = Setting(env=choice.env, offload=choice.offload, sp=choice.sp)
        return breakdown(CATALOG.model(cell.model), MEMORY_GIB[cell.gpu], cell.gpus, setting, cell.length,
                         coefficients, DEFAULT_MARGIN).fits

    model = reference_outcomes(held, lambda c: cheapest(SHAPES[c.model], c.gpus, lambda choice: fits(c, choice)))
    assert benchmark_outcomes(BENCHMARK.outcomes(
        CATALOG, bench_held, BENCHMARK.predictor(coefficients, DEFAULT_MARGIN))) == model
    trinity = reference_outcomes(held, lambda c: cheapest(
        SHAPES[c.model], c.gpus, lambda choice: trinity_fits(SHAPES[c.model], MEMORY_GIB[c.gpu], c.gpus, choice,
                                                             c.length)))
    assert benchmark_outcomes(BENCHMARK.outcomes(CATALOG, bench_held, BENCHMARK.trinity_cell)) == trinity
    env_on = reference_outcomes(held, lambda c: cheapest(
        SHAPES[c.model], c.gpus, lambda choice: choice.env and fits(c, choice)), with_env)
    assert benchmark_outcomes(BENCHMARK.outcomes(
        CATALOG, bench_held, BENCHMARK.predictor(coefficients, DEFAULT_MARGIN, env_only=True),
        BENCHMARK.with_env)) == env_on
    scored = [str(len(model)), *_shares(model, "exact", "conservative", "unsafe"),
              *_shares(trinity, "exact", "unsafe"), *_shares(env_on, "exact", "unsafe")]
    assert readme_rows()[SPLITS[index][0].strip()] == scored


def test_classify_by_cost():
    vanilla, env, sp2 = Choice(False, False, 1), Choice(True, False, 1), Choice(False, False, 2)
    env_offload = Choice(True, True, 1)
    assert classify(env, env) == "exact"
    assert classify(None, None) == "exact"
    assert classify(env, vanilla) == "unsafe"
    assert classify(None, env_offload) == "unsafe"
    assert classify(sp2, env) == "unsafe"
    assert classify(env, sp2) == "conservative"
    assert classify(Choice(True, False, 4), env_offload) == "conservative"
    assert classify(env_offload, None) == "conservative"


def test_candidates_follow_the_source_order_and_the_sp_rules():
    assert [(c.env, c.offload, c.sp) for c in candidates(SHAPES["Qwen3-14B"], 4)] == [
        (False, False, 1), (True, False, 1), (False, False, 2), (True, False, 2), (False, False, 4),
        (True, False, 4), (True, True, 1), (True, True, 2), (True, True, 4)]
    assert [c.sp for c in candidates(SHAPES["Qwen3-0.6B"], 6)] == [1, 1, 2, 2, 1, 2]
    assert parse_setting("Env + Offload + SP=2") == Choice(True, True, 2)
    assert parse_setting("vanilla") == Choice(False, False, 1)
    assert parse_setting(" - ") is None


def test_trinity_check_by_hand():
    # Qwen3-0.6B, 1 GPU, vanilla, 4096 tokens: T = 8192; states 18 * 0.596e9 = 10.728e9; hidden states
    # 2 * 8192 * 1024 * 32 = 536870912; logits 8 * 8192 * 151936 = 9957277696 (above the backward buffers'
    # 4 * 151936 * 1024 + 80 * 8192 * 1024 = 1293418496): 21222148608 bytes in all.
    assert trinity_gib(SHAPES["Qwen3-0.6B"], 1, Choice(False, False, 1), 4096) == pytest.approx(21222148608 / GIB)
    # Qwen3-8B on one A100 at 4096: 18 * 8.191e9 bytes of states alone pass 64 GiB; Env + Offload holds none
    # (hidden states 2684354560, logits 9957277696 against backward 5173673984: 12641632256 bytes).
    shape = SHAPES["Qwen3-8B"]
    assert trinity_gib(shape, 1, Choice(True, True, 1), 4096) == pytest.approx(12641632256 / GIB)
    assert cheapest(shape, 1, lambda c: trinity_fits(shape, 80.0, 1, c, 4096)) == Choice(True, True, 1)
