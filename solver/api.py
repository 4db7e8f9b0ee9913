"""The library API: what the ``solve`` command does, as functions returning frozen pydantic results.

Every result's ``model_dump(mode="json")`` is the JSON the command prints (``--json``), and the command
is a thin layer over these same functions (`solver.query.make_query`, `solver.solve.plan`,
`solver.explain.explain`, `solver.cluster.place`, `solver.memory.breakdown`). (`estimate_memory` is not
named `memory`, the name of the module it uses.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from solver.memory import Breakdown, breakdown
from solver.query import Answer, ClusterResult, EstimateMode, Objective, make_query
from solver.tables import Catalog, Fleet, Setting, Weights, load_catalog, load_fleet, load_memory_model


def plan(
    model: str,
    *,
    gpu: str | None = None,
    objective: Objective = "cheapest",
    budget_gpus: int | None = None,
    max_model_len: int | None = None,
    exact: bool = False,
    sp: int | None = None,
    env: bool | None = None,
    offload: bool | None = None,
    top: int = 1,
    weights: Weights | None = None,
    estimate: EstimateMode = "auto",
    margin: float | None = None,
    host_ram_gb: float | None = None,
    explain: bool = False,
    time_limit_s: float = 10.0,
    workers: int = 1,
    catalog: Catalog | None = None,
) -> tuple[Answer, ...]:
    """Answer a planning question, one `Answer` per GPU type (every documented one unless `gpu`).

    ``objective``: ``"cheapest"`` (needs `max_model_len`), ``"max_len"`` (needs `budget_gpus`) or
    ``"min_gpus"`` (needs `max_model_len`). Raises `solver.tables.QueryError` for a request that makes no
    sense (unknown names, missing numbers, pins no rule allows), with one line saying why.
    """
    from solver.explain import explain as explain_answer
    from solver.solve import plan as solve

    catalog = catalog if catalog is not None else load_catalog()
    query = make_query(catalog, model=model, gpu=gpu, objective=objective, budget_gpus=budget_gpus,
                       max_model_len=max_model_len, exact=exact, sp=sp, env=env, offload=offload, top=top,
                       weights=weights, estimate=estimate, margin=margin, host_ram_gb=host_ram_gb,
                       time_limit_s=time_limit_s, workers=workers)
    answers = solve(query, catalog)
    if explain:
        answers = tuple(a.model_copy(update={"explanation": explain_answer(catalog, query, a)}) for a in answers)
    return answers


def place(
    fleet: Fleet | Path | str,
    *,
    minimize: Literal["nodes"] | None = None,
    weights: Weights | None = None,
    time_limit_s: float = 10.0,
    workers: int = 1,
    catalog: Catalog | None = None,
) -> ClusterResult:
    """Place a fleet's jobs (a `Fleet`, or the path of a cluster file) on its pools."""
    from solver.cluster import place as place_jobs

    catalog = catalog if catalog is not None else load_catalog()
    if not isinstance(fleet, Fleet):
        fleet = load_fleet(Path(fleet), catalog)
    return place_jobs(fleet, catalog, minimize=minimize, weights=weights, time_limit_s=time_limit_s,
                      workers=workers)


def estimate_memory(
    model: str,
    gpu: str,
    gpus: int,
    max_model_len: int,
    *,
    sp: int = 1,
    env: bool = False,
    offload: bool = False,
    margin: float | None = None,
    catalog: Catalog | None = None,
) -> Breakdown:
    """The memory model's breakdown of one trainer GPU's peak memory, and whether it fits."""
    catalog = catalog if catalog is not None else load_catalog()
    calibrated = load_memory_model()
    return breakdown(catalog.model(model), catalog.gpu(gpu).memory_gb, gpus, Setting(env=env, offload=offload, sp=sp),
                     max_model_len, calibrated.coefficients, calibrated.margin if margin is None else margin)
