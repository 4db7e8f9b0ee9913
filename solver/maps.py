"""Maps: the planner's answers over a grid, for `solve map`.

- by model: for each model and GPU budget, the longest context within the budget (and its plan);
- by length: for one model, the cheapest plan for each length and GPU budget;

and each GPU type's map as a `GpuMap` (`gpu_map`), which ``solve map --json`` prints and `solver.map_plans` returns.

Each cell is a planner answer (CP-SAT, as for `solve`), so it carries its evidence: documented,
inferred or estimated.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from solver.memory import GRID
from solver.model import prepare
from solver.query import (
    check_dpo_budget_unread,
    check_token_budget_read,
    given_lora_targets,
    make_query,
    token_budget_mode_and_cap,
)
from solver.results import GpuMap, LengthMapRow, ModelMapRow, Plan
from solver.rules import OptionNames
from solver.solve import best_plan
from solver.tables import NODE_GPUS, Catalog, QueryError, counted_expert_layout
from solver.tables.peft_match import ALL_LINEAR, lora_targets_pattern

Grid = dict[tuple[str | int, int], Plan | None]
"""(row, GPU budget) -> the best plan, or None."""


def longest_by_model(catalog: Catalog, gpu: str, models: Sequence[str], budgets: Sequence[int],
                     **options: Any) -> Grid:
    """For each model and budget: the plan with the longest context on at most that many GPUs (`options`:
    `make_query`'s keywords but the model, GPU, budget, objective and length)."""
    return _grid(catalog, gpu, budgets, {model: {"model": model, "objective": "max_len", **options}
                                         for model in models})


def mapped_models(catalog: Catalog, gpu: str) -> list[str]:
    """The rows of a by-model map on `gpu`: the models its tables document, else those any GPU type's tables
    document (a GPU type without tables: its plans are estimates)."""
    documented = [m.name for m in catalog.models if any(m.name in t.models for t in catalog.gpu(gpu).tables)]
    return documented or [m.name for m in catalog.models
                          if any(m.name in t.models for g in catalog.gpu_types for t in g.tables)]


def check_rows(catalog: Catalog, gpus: Sequence[str], models: Sequence[str], **options: Any) -> None:
    """Before any solve, `QueryError` where what `options` (as `longest_by_model`'s) ask of every row is refused on
    a model of the maps' rows (`models`, else each of `gpus`' `mapped_models`) as that row's query refuses it: a
    `token_budget` cap on a model that reads none (`check_token_budget_read`), or other than the default for `dpo`
    (`check_dpo_budget_unread`), then the `lora_targets`, less their
    `lora_exclude_modules`, or those exclusions alone (`given_lora_targets`). The first row's refusal, and on a map of
    several models those that take what is refused, or that the others refuse it too (a refusal alike on every row,
    naming no model, as it is)."""
    targets, lora_rank, names = options.get("lora_targets"), options.get("lora_rank") or 0, options["option_names"]
    excluded, cap = options.get("lora_exclude_modules"), options.get("token_budget", "default")
    rows = list(dict.fromkeys(models or [row for gpu in gpus for row in mapped_models(catalog, gpu)]))
    if isinstance(cap, int):
        _refuse_on_rows(rows, lambda row: check_token_budget_read(cap, catalog.model(row), names), "it is read",
                        "it", names)
    if options.get("dpo"):
        _refuse_on_rows(rows, lambda row: check_dpo_budget_unread(cap, None, catalog.model(row), names, dpo=True),
                        "it is read", "it", names)
    if targets is not None or excluded is not None:
        experts = counted_expert_layout(options.get("trinity_version"))
        _refuse_on_rows(rows, lambda row: given_lora_targets(targets, lora_rank, catalog.model(row), experts, names,
                                                             excluded), "they are counted", "them", names)


def _refuse_on_rows(rows: Sequence[str], check: Callable[[str], object], taken: str, them: str,
                    names: OptionNames) -> None:
    """`QueryError` where `check` refuses a model of `rows`: the first refusal, and where there are several rows, those
    that take what it refuses (`taken` on them: "they are counted"), or that the others refuse it (`them`) too."""
    refused: dict[str, str] = {}
    for row in rows:
        try:
            check(row)
        except QueryError as error:
            refused[row] = str(error)
    if not refused:
        return
    first = next(iter(refused.values()))
    counted = [row for row in rows if row not in refused]
    if len(rows) == 1 or (not counted and len(set(refused.values())) == 1):
        raise QueryError(first)
    if not counted:
        others = "other model refuses" if len(rows) == 2 else f"{len(rows) - 1} other models refuse"
        raise QueryError(f"{first}; the map's {others} {them} too")
    model = names.named("model")
    alone = f"{model}={counted!r}" if names.keywords else f"{model} {','.join(counted)}"
    raise QueryError(f"{first}; of the map's {len(rows)} models, {taken} on {', '.join(counted)} alone: "
                     f"map those ({alone})")


def cheapest_by_length(catalog: Catalog, gpu: str, model: str, lengths: Sequence[int], budgets: Sequence[int],
                       **options: Any) -> Grid:
    """For each length and budget: the cheapest plan for `model` on at most that many GPUs (`options`:
    `make_query`'s keywords but the model, GPU, budget, objective and length)."""
    return _grid(catalog, gpu, budgets, {length: {"model": model, "max_model_len": length, **options}
                                         for length in lengths})


LENGTH_STEP = 10240
"""Past the rows of a GPU type's tables, a by-length map's rows go in steps of this many tokens, as the source's
tables do past 40960."""
UNTABLED_LENGTHS = tuple(4096 * step for step in range(1, 33))
"""A by-length map's rows for a GPU type without tables for the model, before any past them: 4096 to 131072."""


def length_rows(catalog: Catalog, gpu: str, model: str, budgets: Sequence[int], **options: Any) -> list[int]:
    """The lengths of a by-length map of `model` on `gpu`: the rows of the tables that speak for it
    (`Catalog.tables_for`; `UNTABLED_LENGTHS` without), then every `LENGTH_STEP` tokens from the last, on the
    estimates' grid (past a row of your cells off it, 30001, the first is 39936), up to the longest length the largest
    budget reaches, and that length (`options`: as `longest_by_model`'s)."""
    tabled = sorted({row.max_model_len for table in catalog.tables_for(gpu, catalog.model(model)).tables
                     for row in table.rows}) or list(UNTABLED_LENGTHS)
    most = max(budgets)
    longest = longest_by_model(catalog, gpu, [model], [most], **options)[model, most]
    reach = longest.max_model_len if longest is not None else 0
    steps = range(tabled[-1] - tabled[-1] % GRID + LENGTH_STEP, reach, LENGTH_STEP)
    return tabled + [*steps, *([reach] if reach > tabled[-1] else [])]


def gpu_map(catalog: Catalog, gpu: str, models: Sequence[str], budgets: Sequence[int], by_length: bool = False, *,
            weights_file: str | None = None, budgets_listed: bool = False, **options: Any) -> GpuMap:
    """`gpu`'s map, as ``solve map`` prints it: by model, a row per model of `models` (none: `mapped_models`) with its
    longest plan at each of `budgets`; with `by_length`, a row per length (`length_rows`) of `models`' one model with
    its cheapest plan at each; and the `options` (as `longest_by_model`'s) that change its cells, where given, the
    file the cost weights were read from (`weights_file`, as given) and whether the budgets were listed
    (`budgets_listed`, as ``--budgets`` lists them)."""
    name = catalog.gpu(gpu).name
    rows: tuple[ModelMapRow, ...] | tuple[LengthMapRow, ...]
    if by_length:
        (model,) = models
        lengths = length_rows(catalog, name, model, budgets, **options)
        grid = cheapest_by_length(catalog, name, model, lengths, budgets, **options)
        rows = tuple(LengthMapRow(max_model_len=length, plans=tuple(grid[length, budget] for budget in budgets))
                     for length in lengths)
    else:
        names = list(models) or mapped_models(catalog, name)
        grid = longest_by_model(catalog, name, names, budgets, **options)
        rows = tuple(ModelMapRow(model=row, plans=tuple(grid[row, budget] for budget in budgets)) for row in names)
    mode, cap = token_budget_mode_and_cap(options.get("token_budget", "default"), options.get("estimate", "auto"))
    targets = options.get("lora_targets")  # checked by each cell's query: None, or a LoRA adapter's
    excluded = options.get("lora_exclude_modules")  # checked alike: None, or the modules the adapter leaves out
    adapted = (lora_targets_pattern(targets) if targets is not None  # None: all-linear alone, as the plans say
               else ALL_LINEAR if excluded is not None else None)
    return GpuMap(gpu=name, by="len" if by_length else "model", model=models[0] if by_length else None,
                  train_batch_size=options.get("train_batch_size"), host_ram_gb=options.get("host_ram_gb"),
                  node_gpus=None if options.get("node_gpus") in (None, NODE_GPUS) else options["node_gpus"],
                  estimate=None if options.get("estimate", "auto") == "auto" else options["estimate"],
                  token_budget="auto" if mode == "auto" else None, token_budget_cap=cap,
                  lora_rank=options.get("lora_rank") or None, lora_target_modules=adapted,
                  lora_exclude_modules=excluded,
                  reference_model=options.get("reference_model"), critic=options.get("critic"),
                  dpo=True if options.get("dpo") else None, trinity_version=options.get("trinity_version"),
                  weights=weights_file,
                  memory_model_source=memory.own_source if (memory := options.get("memory")) is not None else None,
                  budgets_listed=True if budgets_listed else None, budget_gpus=tuple(budgets), rows=rows)


def _grid(catalog: Catalog, gpu: str, budgets: Sequence[int], requests: Mapping[str | int, dict[str, Any]]) -> Grid:
    """The best plan for each row's request (`make_query`'s arguments) and each budget.

    Budgets that leave the planner the same GPU counts ask the same question (9 to 15 GPUs on nodes of
    8 allow what 8 do), so it is solved once and its plan shared, with its own unused GPUs. Each plan is proven the
    best (`Undecided` where a solve's time limit left that open), so a map is the same whatever CP-SAT's seed."""
    name = catalog.gpu(gpu).name
    grid: Grid = {}
    solved: dict[tuple[str | int, tuple[int, ...]], Plan | None] = {}
    for row, request in requests.items():
        for budget in budgets:
            query = make_query(catalog, gpu=gpu, budget_gpus=budget, **request)
            counted = query.counted_catalog(catalog)  # the adapter on --lora-targets' modules less --lora-exclude's
            counts = tuple(n for n in prepare(counted, name, query).counts if n <= budget)
            if (row, counts) not in solved:
                solved[row, counts] = best_plan(counted, query, name, proven=True)  # the same whatever the seed
            plan = solved[row, counts]
            grid[row, budget] = plan.model_copy(update={"unused_gpus": budget - plan.gpus}) if plan else None
    return grid
