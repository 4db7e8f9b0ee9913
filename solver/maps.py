"""Maps: the planner's answers over a grid, for `solve map`.

- by model: for each model and GPU budget, the longest context within the budget (and its plan);
- by length: for one model, the cheapest plan for each length and GPU budget.

Each cell is a planner answer (CP-SAT, as for `solve`), so it carries its evidence: documented,
inferred or estimated.
"""

from __future__ import annotations

from collections.abc import Sequence

from solver.query import Plan, make_query
from solver.solve import answer_for
from solver.tables import Catalog

Grid = dict[tuple[str | int, int], Plan | None]
"""(row, GPU budget) -> the best plan, or None."""


def longest_by_model(catalog: Catalog, gpu: str, models: Sequence[str], budgets: Sequence[int]) -> Grid:
    """For each model and budget: the plan with the longest context on at most that many GPUs."""
    grid: Grid = {}
    for model in models:
        for budget in budgets:
            query = make_query(catalog, model=model, gpu=gpu, objective="max_len", budget_gpus=budget)
            answer = answer_for(catalog, query, catalog.gpu(gpu).name)
            grid[(model, budget)] = answer.plans[0] if answer.plans else None
    return grid


def cheapest_by_length(catalog: Catalog, gpu: str, model: str, lengths: Sequence[int], budgets: Sequence[int]) -> Grid:
    """For each length and budget: the cheapest plan for `model` on at most that many GPUs."""
    grid: Grid = {}
    for length in lengths:
        for budget in budgets:
            query = make_query(catalog, model=model, gpu=gpu, max_model_len=length, budget_gpus=budget)
            answer = answer_for(catalog, query, catalog.gpu(gpu).name)
            grid[(length, budget)] = answer.plans[0] if answer.plans else None
    return grid
