"""The library API: what the ``solve`` command does, as functions returning frozen pydantic results.

Every result's ``model_dump(mode="json")`` is the JSON the command prints (``--json``), and the command
is a thin layer over these same functions (`solver.query.make_query`, `solver.solve.plan`,
`solver.explain.explain`, `solver.cluster.place`, `solver.memory.breakdown`). (`estimate_memory` is not
named `memory`, the name of the module it uses.)
"""

from __future__ import annotations

from collections.abc import Callable
from math import ceil
from pathlib import Path
from typing import TYPE_CHECKING, Literal, get_args

from solver.memory import MemoryEstimate, beyond_calibration, breakdown, host_memory_gib, longest_fitting
from solver.query import (
    MAX_WORKERS,
    NODE_GPUS,
    Answer,
    ClusterResult,
    EstimateMode,
    Objective,
    Query,
    TokenBudgetMode,
    check_choice,
    check_counts,
    check_host_ram,
    check_seed,
    check_time_limit,
    check_token_budget,
    larger_tables,
    least_token_budget,
    make_query,
    resolve_margin,
    sp_layout_violation,
    table_cells,
    tables_verdict,
    token_budget,
    whole_nodes_violation,
)
from solver.tables import (
    MAX_GPUS,
    MAX_TOKENS,
    Catalog,
    Fleet,
    MemoryModel,
    QueryError,
    Setting,
    Weights,
    check_types,
    load_catalog,
    load_fleet,
    load_memory_model,
)

if TYPE_CHECKING:
    from solver.cluster import Progress  # imports OR-Tools: only for the type


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
    token_budget: TokenBudgetMode = "default",
    host_ram_gb: float | None = None,
    node_gpus: int = NODE_GPUS,
    rollout_gpus: int | None = None,
    memory: MemoryModel | None = None,
    explain: bool = False,
    time_limit_s: float = 10.0,
    workers: int = 1,
    catalog: Catalog | None = None,
) -> tuple[Answer, ...]:
    """Answer a planning question, one `Answer` per GPU type (every documented one unless `gpu`).

    ``objective``: ``"cheapest"`` (needs `max_model_len`), ``"max_len"`` (needs `budget_gpus`) or
    ``"min_gpus"`` (needs `max_model_len`). ``token_budget="auto"`` lets an estimated plan whose
    Trinity-default ``max_token_len_per_gpu`` does not fit take a lower one (the plan's
    ``max_token_len_per_gpu`` says which). Raises `solver.tables.QueryError` for a request that makes no
    sense (unknown names, missing numbers, pins no rule allows, a value of the wrong type), with one line
    saying why.
    """
    check_types(("explain", explain, bool), ("catalog", catalog, Catalog | None))
    catalog = catalog if catalog is not None else load_catalog()
    query = make_query(catalog, model=model, gpu=gpu, objective=objective, budget_gpus=budget_gpus,
                       max_model_len=max_model_len, exact=exact, sp=sp, env=env, offload=offload, top=top,
                       weights=weights, estimate=estimate, margin=margin, token_budget=token_budget,
                       host_ram_gb=host_ram_gb,
                       node_gpus=node_gpus, rollout_gpus=rollout_gpus, memory=memory, time_limit_s=time_limit_s,
                       workers=workers)
    return answer_query(query, catalog, explain=explain)


def answer_query(query: Query, catalog: Catalog, *, explain: bool = False) -> tuple[Answer, ...]:
    """The answers to a prepared `query` (from `make_query`), each with its explanation if asked."""
    from solver.explain import explain as explain_answer  # these import OR-Tools: only solving pays for it
    from solver.solve import plan as solve

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
    estimate: EstimateMode = "auto",
    memory: MemoryModel | None = None,
    margin: float | None = None,
    token_budget: TokenBudgetMode = "default",
    catalog: Catalog | None = None,
    seed: int = 0,
    progress: Progress | None = None,
) -> ClusterResult:
    """Place a fleet's jobs (a `Fleet`, or the path of a cluster file) on its pools; `estimate`, `memory`,
    `margin` and `token_budget` as in `plan` ("never": the tables' GPU counts and cells alone), `seed`
    CP-SAT's, `progress` called at each better placement (`solver.cluster.Progress`). Raises `QueryError`
    (one line) for a bad option, `TableError` for a bad cluster file."""
    from solver.cluster import place as place_jobs

    check_types(("fleet", fleet, Fleet | Path | str), ("weights", weights, Weights | None),
                ("workers", workers, int), ("memory", memory, MemoryModel | None), ("catalog", catalog, Catalog | None),
                ("progress", progress, Callable | None))
    resolve_margin(memory if memory is not None else load_memory_model(), margin)
    check_choice("minimize", minimize, (None, "nodes"))
    check_choice("estimate", estimate, get_args(EstimateMode))
    check_token_budget(token_budget, estimate)
    check_counts(("--workers", workers, MAX_WORKERS))
    check_time_limit(time_limit_s)
    check_seed(seed)
    catalog = catalog if catalog is not None else load_catalog()
    if not isinstance(fleet, Fleet):
        fleet = load_fleet(fleet, catalog)
    return place_jobs(fleet, catalog, minimize=minimize, weights=weights, time_limit_s=time_limit_s,
                      workers=workers, seed=seed, progress=progress, estimate=estimate, memory=memory, margin=margin,
                      token_budget=token_budget)


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
    node_gpus: int = NODE_GPUS,
    catalog: Catalog | None = None,
    memory: MemoryModel | None = None,
    max_token_len_per_gpu: int | None = None,
    host_ram_gb: float | None = None,
) -> MemoryEstimate:
    """The memory model's breakdown of one trainer GPU's peak memory, whether it fits, the longest length
    that would fit with the same setting, and what the GPU type's tables say of it (``tables``);
    `QueryError` for an unknown name, a count out of range or
    an SP degree the model's heads, the GPU count or the node size (a trainer on more GPUs than a node of
    `node_gpus` keeps each SP group in a node) rule out, or a value of the wrong type.

    `max_token_len_per_gpu` (Trinity's ``trainer.max_token_len_per_gpu``; default: its own default,
    ``ceil(2 x max_model_len / sp)``, which the tables measured) sets the tokens per GPU instead: at least
    ``ceil(max_model_len / sp)``, so that an SP group holds the longest sequence. The tables then speak
    where they say it trains with at least as many tokens per GPU, or ran out of memory with no more.

    `host_ram_gb` (a node's host memory, GiB) makes an Offload setting train only where its offloaded states fit
    there (``host_fits``)."""
    check_types(("gpus", gpus, int), ("max_model_len", max_model_len, int), ("sp", sp, int), ("env", env, bool),
                ("offload", offload, bool), ("node_gpus", node_gpus, int), ("catalog", catalog, Catalog | None),
                ("memory", memory, MemoryModel | None), ("max_token_len_per_gpu", max_token_len_per_gpu, int | None),
                ("host_ram_gb", host_ram_gb, float | None))
    catalog = catalog if catalog is not None else load_catalog()
    memory = memory if memory is not None else load_memory_model()
    margin = resolve_margin(memory, margin)
    check_counts(("--gpus", gpus, MAX_GPUS), ("--len", max_model_len, MAX_TOKENS), ("--sp", sp, MAX_GPUS),
                 ("--node-gpus", node_gpus, MAX_GPUS))
    check_host_ram(host_ram_gb)
    resolved = catalog.model(model)
    spread = whole_nodes_violation(gpus, node_gpus)
    if spread:
        raise QueryError(f"--gpus {gpus} is not allowed: {spread}")
    problem = sp_layout_violation(resolved, gpus, sp, node_gpus)
    if problem:
        raise QueryError(f"--sp {sp} is not allowed: {problem}")
    default = token_budget(max_model_len, sp)
    budget = default if max_token_len_per_gpu is None else max_token_len_per_gpu
    if budget < least_token_budget(max_model_len, sp):
        raise QueryError(f"--token-budget {budget} holds no sequence of {max_model_len} tokens with SP={sp}: it must "
                         f"be at least ceil({max_model_len} / {sp}) = {least_token_budget(max_model_len, sp)}")
    check_counts(("--token-budget", budget, MAX_TOKENS))
    gpu_type, setting = catalog.gpu(gpu), Setting(env=env, offload=offload, sp=sp)
    result = breakdown(resolved, gpu_type.memory_gib, gpus, setting, max_model_len, memory.coefficients, margin,
                       budget)
    if max_token_len_per_gpu is None:
        longest = longest_fitting(resolved, gpu_type.memory_gib, gpus, setting, memory.coefficients, margin)
    else:  # the memory is the budget's whatever the length: any length its SP group holds
        longest = min(budget * sp, MAX_TOKENS) if result.fits else None
    rows, settings, columns = table_cells(gpu_type.tables, resolved)
    # The tables measured the default budget. Another budget is the default of the length `by_tokens`: a cell
    # vouches for it at a row at or beyond both that length and L, and it runs out of memory where the tables
    # say so of that length (the next row up, as the planner's --token-budget auto takes it).
    by_tokens = ceil(budget * sp / 2)
    larger = larger_tables(catalog, gpu, resolved)  # GPU types with at least this one's memory: their failures hold
    tables = tables_verdict(resolved, rows, settings, gpus, setting,
                            max_model_len if budget == default else max(max_model_len, by_tokens), columns=columns,
                            larger=larger)
    if budget != default and tables is not None and not tables.trains:
        refuted = tables_verdict(resolved, rows, settings, gpus, setting, by_tokens, columns=columns, larger=larger)
        tables = refuted if refuted is not None and not refuted.trains else None
    return MemoryEstimate(**dict(result), longest_len=longest,
                          beyond_calibration=beyond_calibration(memory.fit.range, resolved, gpu_type.memory_gib, gpus,
                                                                setting, budget),
                          host_memory_gib=host_memory_gib(resolved, gpus, memory.coefficients, node_gpus)
                          if offload else None,
                          host_ram_gib=host_ram_gb, tables=tables)
