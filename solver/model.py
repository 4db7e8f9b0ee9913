"""The CP-SAT model of one planning question for one GPU type and model.

`prepare` turns the tables into plain data; `build_model` adds one constraint family per function:
the variables, the parallelism rules, the node rule, the documented cells as evidence, the budget, the
length, host memory, the pins, and the objective. The solver chooses; nothing here picks a plan.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property, lru_cache
from types import MappingProxyType
from typing import NamedTuple

from ortools.sat.python import cp_model

from solver.memory import CEILING, GRID, estimated_cells, estimated_counts, fits_host_ram, shown_host_need
from solver.query import CHOOSES_COUNT, EstimateMode, Objective, Query, resolve_margin
from solver.rules import (
    NO_CELLS,
    TableCells,
    failures_by_row,
    larger_tables,
    lowered_reach,
    one_sequence_per_micro_batch,
    own_table_limit,
    rollout_layout_violation,
    sp_within_node,
    splits_batch,
    table_cells,
    table_words,
    whole_nodes_violation,
)
from solver.tables import (
    HOST_HELD_CRITICS,
    MAX_TOKENS,
    ByIdentity,
    Catalog,
    Coefficients,
    CriticStates,
    ExpertLayout,
    GpuType,
    Interconnect,
    MemoryModel,
    Model,
    ModelLoading,
    Setting,
    TableOrigin,
    TokenBudgetMode,
    TrinityVersion,
    Weights,
    sp_suits_kv_heads,
    vouches_for,
)

Combination = tuple[int, int, int, int]
"""(trainer GPUs n, Env e, Offload o, SP degree s), with e and o as 0/1."""

TableValues = tuple[int, ...]
"""The rows a CP-SAT table constraint allows, row after row in one flat tuple (`table_values`)."""

SolverStatus = object
"""What `CpSolver.solve` returns, compared with `cp_model.OPTIMAL`, `FEASIBLE`, `INFEASIBLE`, `UNKNOWN` and
`MODEL_INVALID`: OR-Tools 9.12's annotations call it `cp_model_pb2.CpSolverStatus`, 9.15's `cp_model.CpSolverStatus`,
and neither name is in the other (the package supports both)."""


class RankedCombination(NamedTuple):
    """A combination (n, e, o, s) and its places in the orders plans are ranked by (`cost_ranks`)."""

    gpus: int
    env: int
    offload: int
    sp: int
    rank: int
    """Its place in the objective's order (0: the best)."""
    cost_rank: int
    """Its place by cost alone, ties broken as for the cheapest plan (0: the cheapest)."""
    cost_tier: int
    """The cost rank of the first combination of exactly its cost (equal costs, one tier)."""

    @property
    def combination(self) -> Combination:
        """(n, e, o, s)."""
        return self.gpus, self.env, self.offload, self.sp


@dataclass(frozen=True)
class PlanningData:
    """What the model needs of the tables, for one GPU type and one model."""

    inputs: PlanningInputs
    """What it was prepared from (`prepare_inputs`)."""
    gpu: str
    table_origins: Mapping[int, TableOrigin]
    """For each GPU count whose table is borrowed from a GPU type with `gpu`'s memory, or measured cells of yours,
    whose it is (`Catalog.table_origins`)."""
    model: str
    shape: Model
    interconnect: Interconnect | None
    """How the GPU type's GPUs reach one another (`GpuType.interconnect`), which SP's cost depends on."""
    compute_capability: str | None
    """The GPU type's compute capability (`GpuType.compute_capability`), which decides which ranks load the model at
    start-up (`solver.query.Query.model_loading`), and so its host memory need."""
    columns: Mapping[int, str]
    """Per GPU count with a table, the name it gives the model's cells (`Table.name_for`)."""
    larger: tuple[tuple[str, TableCells], ...]
    """The model's cells in the tables of GPU types with at least this one's memory (`larger_tables`), whose
    failures cap the estimates too; empty for --estimate (the memory model alone)."""
    counts: tuple[int, ...]
    """Trainer GPU counts the plan may use: those whose table has the model, those more than a table's
    count (which its cells may vouch for), and those estimated."""
    rows: tuple[tuple[int, int], ...]
    """(n, max_model_len) of every row of those tables."""
    ranks: tuple[RankedCombination, ...]
    """(n, e, o, s, rank, cost rank, cost tier) for every combination: rank 0 is the best by the objective's
    ordering, cost rank 0 the cheapest (`cost_ranks`)."""
    settings: Mapping[tuple[int, int], Setting]
    """The documented setting at (n, max_model_len), for the cells where something trains."""
    estimates: tuple[tuple[int, int, int, int, int], ...]
    """(n, e, o, s, longest length that fits) by the memory model, for every GPU count it covers; on a
    count with a table, no longer than where that table says the setting runs out of memory. With the
    query's token budget ``auto``, the longest length a lowered budget reaches (`lowered_reach`), but for a model
    that reads none (`solver.rules.one_sequence_per_micro_batch`)."""
    estimate_longest: Mapping[Combination, int]
    """Where `estimates` lower the budget: each estimate's longest length at Trinity's default budget, whose
    default the tokens per GPU of a lowered budget may not exceed (`solver.rules.most_estimated_tokens`); empty
    otherwise."""
    longest_estimate: Mapping[int, int]
    """The longest length any estimate fits, per GPU count."""
    table_stops: tuple[tuple[int, int, int, int, int], ...]
    """(n, e, o, s, length) of each estimate that a table stops short of the memory model's longest fitting length
    (`within_refuting_tables`: at `solver.rules.own_table_limit`, which may lie off the grid, 30002 tokens at SP=4
    past a row at 30001); none where the budget is lowered (`lowers_budget`), whose estimates reach further. When
    maximising, an estimated plan's length is on the grid or its estimate's stop."""
    witnesses: tuple[tuple[int, int, int, int, int, int, int], ...]
    """(plan's GPU count, witness's GPU count, length it vouches up to, e, o, s, estimated) for every cell
    and estimate that may vouch for a plan on that count: a cell of the plan's count's table, or of a
    table for fewer GPUs (two or more) up to where the plan's count's own table says the cell's setting
    runs out of memory (`solver.rules.refuting_row`); an estimate for exactly its count. Of one table's cells
    with one setting, only the one that vouches the longest (`cell_witnesses`)."""

    @cached_property
    def lengths(self) -> tuple[int, ...]:
        """Every length a plan may have when the length is maximised: the rows, the estimates' grid up to the
        longest estimate, and where tables stop estimates (worked out when first asked: a question of one length never
        asks)."""
        longest = max(self.longest_estimate.values(), default=0)
        return tuple(sorted({length for _, length in self.rows} | set(range(GRID, longest + 1, GRID))
                            | {stop for *_, stop in self.table_stops}))

    def table_gpu(self, count: int) -> str:
        """The GPU type whose table for `count` GPUs it is: `gpu`, or the one it is borrowed from."""
        origin = self.table_origins.get(count)
        return origin.gpu if origin is not None and origin.gpu is not None else self.gpu

    def table_words(self, count: int) -> str:
        """The table for `count` GPUs in words: whose it is, and your cells' source where it is theirs
        (`solver.rules.table_words`)."""
        origin = self.table_origins.get(count)
        return table_words(self.table_gpu(count), count, origin.source if origin is not None else None)

    @property
    def capping_gpus(self) -> str:
        """The GPU types of the `larger` tables that cap the estimates, in words (``A100-80GB and H20-96GB``); "" for
        none."""
        return " and ".join(name for name, _ in self.larger)

    @property
    def lowers_budget(self) -> bool:
        """Whether an estimate whose Trinity default budget does not fit takes a lower one (`lowers_budget`)."""
        return lowers_budget(self.inputs.token_budget, self.shape)

    @property
    def sp_degrees(self) -> range:
        """The SP degrees a plan may take before the divisibility rules: 1 to the most GPUs it may use."""
        return range(1, max(self.counts) + 1)

    def holds_no_plan(self, query: Query) -> bool:
        """Whether no plan can exist, so that no model is built: no GPU count, or, when the length is
        maximised, no length (the estimates fit less than one grid step)."""
        return not self.counts or (query.max_model_len is None and not self.lengths)


@dataclass(frozen=True)
class PlanVariables:
    """The decision variables of one plan and of the documented cell (or estimate) that vouches for it."""

    gpus: cp_model.IntVar
    env: cp_model.IntVar
    offload: cp_model.IntVar
    sp: cp_model.IntVar
    max_model_len: cp_model.IntVar
    rank: cp_model.IntVar
    """The combination's place in the objective's order (0: the best)."""
    cost_rank: cp_model.IntVar
    """Its place by cost alone, ties broken as for the cheapest plan: the same variable as `rank` where the two
    orders agree (the fewest GPUs do not come first) or only one plan is asked for (then it is not read)."""
    witness_gpus: cp_model.IntVar
    """The GPU count of the witness's table: the plan's, or fewer (what trains on fewer GPUs trains on more)."""
    witness_len: cp_model.IntVar
    witness_env: cp_model.IntVar
    witness_offload: cp_model.IntVar
    witness_sp: cp_model.IntVar
    estimated: cp_model.IntVar
    """True when the witness is the memory model's estimate (its length the longest that fits) instead
    of a documented cell."""

    @property
    def plan(self) -> list[cp_model.IntVar]:
        """The variables that tell two plans apart."""
        return [self.gpus, self.env, self.offload, self.sp, self.max_model_len]


@dataclass(frozen=True)
class FoundPlan:
    """What `exclude_dominated` needs of a plan a solve found: its GPU count, length, cost rank, and whether
    only the memory model's estimate vouches for it (no cell of the tables does)."""

    gpus: int
    max_model_len: int
    cost_rank: int
    estimated: bool


@lru_cache(maxsize=4096)
def exact_cost(weights: Weights, held_per_active: Fraction, interconnect: Interconnect | None,
               combination: Combination, critic: CriticStates | None = None) -> Fraction:
    """The relative step time ``(1/n)(1 + w_off*r*o + c)(1 + w_sp*p*(s-1))(1 + w_env*e)``, exactly, for a model that
    holds `held_per_active` parameters (r, `Model.held_per_active`) per parameter a token computes with, on GPUs that
    reach one another over `interconnect` (p: the weights' ``sp_pcie_factor`` on ``pcie``, else 1), with a PPO
    `critic` beside the actor or none (c, `critic_work`; cached: every plan's cost asks again, and fractions are slow
    to multiply).

    Offload's weight is its added time for a dense model (r = 1); it scales with r, since Offload moves and updates
    every parameter held each step, while the step's compute scales with the active ones, unless the weights turn
    that off (`Weights.offload_moe_scaling`: r taken as 1). SP's weight is its added time per extra rank over
    NVLink; over PCIe its all-to-all, every layer, is slower. The critic runs on the plan's GPUs with its SP and Env,
    but the plan's Offload moves the actor's states alone. Weights are read as the decimals they are written as
    (``0.1`` is 1/10), so equal costs are equal.
    """
    n, env, offload, sp = combination
    w_off, w_sp, w_env = _weight_fractions(weights, interconnect)
    r = held_per_active if weights.offload_moe_scaling else 1
    work = 1 + w_off * r * offload + critic_work(weights, held_per_active, critic)
    return Fraction(1, n) * work * (1 + w_sp * (sp - 1)) * (1 + w_env * env)


def critic_work(weights: Weights, held_per_active: Fraction, critic: CriticStates | None) -> Fraction:
    """A PPO `critic`'s work per step against the actor's without Offload, for a model of `held_per_active` parameters
    per active one: 0 for none; else the weights' ``critic``, times ``1 + w_off*r`` where its states are in host
    memory (offloaded or reloaded: `HOST_HELD_CRITICS`), which the actor's Offload adds to the actor's step."""
    if critic is None:
        return Fraction(0)
    w_off = Fraction(repr(weights.offload))
    r = held_per_active if weights.offload_moe_scaling else 1
    return Fraction(repr(weights.critic)) * (1 + w_off * r * int(critic in HOST_HELD_CRITICS))


@lru_cache(maxsize=16)
def _weight_fractions(weights: Weights, interconnect: Interconnect | None) -> tuple[Fraction, Fraction, Fraction]:
    """Offload's, SP's (times ``sp_pcie_factor`` over PCIe) and Env's weights, as the fractions they are written as."""
    sp_factor = Fraction(repr(weights.sp_pcie_factor)) if interconnect == "pcie" else 1
    return Fraction(repr(weights.offload)), Fraction(repr(weights.sp)) * sp_factor, Fraction(repr(weights.env))


def ranking_key(objective: Objective, combination: Combination, cost: Fraction | int) -> tuple[Fraction | int, ...]:
    """The objective's order on combinations, given each one's exact `cost` (or any multiple of it by
    one positive number): cost (GPUs first for min_gpus; for min_gpu_hours the GPU-hours, GPUs x cost, first), then
    fewer GPUs, fewer settings on, lower SP, no Env, no Offload. It is total, so the best plan is unique.

    The cost is 1/n of its setting's cost on one GPU, so a setting's GPU-hours are the same on every count: of equal
    GPU-hours, the fewest GPUs come first (the longer step of the same GPU-hours)."""
    n, env, offload, sp = combination
    settings_on = env + offload + (sp > 1)
    lead = {"min_gpus": (n, cost), "min_gpu_hours": (n * cost, n)}.get(objective, (cost, n))
    return (*lead, settings_on, sp, env, offload)


@dataclass(frozen=True)
class PlanningInputs:
    """What `prepare` reads of a query on a GPU type, all it reads of the query: on one catalogue, questions with
    equal inputs (differing in the length, exactness, host memory, the SP and Offload pins, the rollout, the plans
    asked for or the time limit) have equal data, which a caller asking many of them may prepare once."""

    gpu: str
    model: str
    objective: Objective
    budget_gpus: int
    node_gpus: int
    estimate: EstimateMode
    without_env: bool
    """Whether the query pins Env off (estimates without it then)."""
    token_budget: TokenBudgetMode
    weights: Weights
    memory: MemoryModel
    margin: float | None
    """The query's --margin (None: the default on the GPU type, `default_margin`)."""
    lora_rank: int = 0
    """The query's LoRA rank (`Query.lora_rank`; 0: full fine-tuning)."""
    critic: CriticStates | None = None
    """The query's PPO critic (`Query.critic`; None: none)."""
    dpo: bool = False
    """Whether the query's run trains DPO (`Query.dpo`)."""
    expert_layout: ExpertLayout = "fused"
    """How the query's Trinity release holds a mixture of experts' routed experts (`Query.expert_layout`)."""

    @classmethod
    def of(cls, gpu: str, query: Query) -> PlanningInputs:
        """The inputs of `query` on `gpu`."""
        return cls(gpu=gpu, model=query.model, objective=query.objective, budget_gpus=query.budget_gpus,
                   node_gpus=query.node_gpus, estimate=query.estimate, without_env=query.env is False,
                   token_budget=query.token_budget, weights=query.weights, memory=query.memory, margin=query.margin,
                   lora_rank=query.lora_rank, critic=query.critic, dpo=query.dpo, expert_layout=query.expert_layout)


def lowers_budget(token_budget: TokenBudgetMode, shape: Model) -> bool:
    """Whether an estimated plan of `shape` whose Trinity default budget does not fit takes a lower one: the token
    budget mode ``auto``, for a model that reads a budget (not `one_sequence_per_micro_batch`, whose estimate counts
    one sequence, the least budget)."""
    return token_budget == "auto" and not one_sequence_per_micro_batch(shape)


def prepare(catalog: Catalog, gpu: str, query: Query) -> PlanningData:
    """Gather the tables' rows and cells for the query's model on `gpu`, the memory model's estimates
    where the tables are silent (per the query's estimate mode), and the objective's rank per
    combination (`prepare_inputs` of the query's `PlanningInputs`)."""
    return prepare_inputs(catalog, PlanningInputs.of(gpu, query))


def prepare_inputs(catalog: Catalog, inputs: PlanningInputs) -> PlanningData:
    """`prepare`, from what it reads of a query (`PlanningInputs.of`). Cached: the data are the catalogue's (frozen)
    for those inputs, and an answer's questions, a sweep's and a server's ask again."""
    return _prepared_inputs(ByIdentity(catalog), inputs)


@lru_cache(maxsize=128)
def _prepared_inputs(same: ByIdentity[Catalog], inputs: PlanningInputs) -> PlanningData:
    """`prepare_inputs`, worked out (the catalogue as a key by identity: hashing all of it took longer than the lookup
    saves)."""
    catalog = same.held
    gpu = inputs.gpu
    shape = catalog.model(inputs.model)
    gpu_type, tabled = catalog.gpu(gpu), catalog.tables_for(gpu, shape)  # tabled: with the tables it borrows
    rows, settings, columns = NO_CELLS if inputs.estimate == "only" else table_cells(tabled, shape)
    documented = tuple(columns)
    estimable = estimated_counts(inputs.node_gpus, inputs.budget_gpus)
    untabled = tuple(n for n in estimable if n not in documented)
    beyond_tables = tuple(n for n in untabled if documented and n > min(documented))  # a smaller table may vouch
    # The tables of GPU types with at least this one's memory cap its estimates too (not for --estimate alone); for
    # LoRA no table refutes anything: they measured full fine-tuning (`solver.rules.tables_verdict`).
    larger = () if inputs.estimate == "only" or inputs.lora_rank else larger_tables(catalog, gpu, shape)
    refuting = ((tabled,) if documented and not inputs.lora_rank else ()) + tuple(
        catalog.gpu(name) for name, _ in larger)
    margin = resolve_margin(inputs.memory, inputs.margin, gpu_type.memory_gib)
    at_default = () if inputs.estimate == "never" else tuple(
        cell for gpus in estimable for cell in capped_estimates(
            shape, gpu_type.memory_gib, gpus, inputs.memory.coefficients, margin, inputs.without_env, refuting,
            inputs.lora_rank, inputs.critic, inputs.dpo, inputs.expert_layout))
    lowering = lowers_budget(inputs.token_budget, shape)
    estimates = at_default if not lowering else tuple(
        (n, e, o, s, min(lowered_reach(longest, s), CEILING)) for n, e, o, s, longest in at_default)
    counts = tuple(sorted({*documented, *beyond_tables, *(cell[0] for cell in estimates)}))
    longest_estimate: dict[int, int] = {}
    for n, *_, fitting in estimates:
        longest_estimate[n] = max(longest_estimate.get(n, 0), fitting)
    return PlanningData(
        inputs=inputs,
        gpu=gpu,
        table_origins=catalog.table_origins(gpu, shape),
        model=shape.name,
        shape=shape,
        interconnect=gpu_type.interconnect,
        compute_capability=gpu_type.compute_capability,
        columns=columns,
        larger=larger,
        counts=counts,
        rows=rows,
        ranks=cost_ranks(counts, inputs.objective, inputs.weights, shape.held_per_active, gpu_type.interconnect,
                         inputs.critic),
        settings=settings,
        estimates=estimates,
        estimate_longest=MappingProxyType({} if not lowering else {
            (n, e, o, s): longest for n, e, o, s, longest in at_default}),
        longest_estimate=MappingProxyType(longest_estimate),
        table_stops=() if lowering or not at_default else stopped_estimates(
            at_default, estimated_cells(shape, gpu_type.memory_gib, estimable, inputs.memory.coefficients, margin,
                                        inputs.without_env, inputs.lora_rank, inputs.critic, inputs.dpo,
                                        inputs.expert_layout)),
        # With a critic no cell vouches: the cells measured the actor alone (`solver.rules.tables_verdict`).
        witnesses=tuple((n, n, fitting, e, o, s, 1) for n, e, o, s, fitting in estimates)
        + (cell_witnesses(tabled, refuting, shape, counts) if settings and inputs.critic is None else ()),
    )


@lru_cache(maxsize=256)
def own_limits(gpu_type: GpuType, shape: Model) -> Mapping[Combination, int]:
    """For each count with a table of `gpu_type` and each setting: the longest length at which that count's
    own table does not say the setting runs out of memory (`own_table_limit`), up to which a table for
    fewer GPUs may vouch for it, or the memory model estimate it; keyed by combination (n, e, o, s), which
    hashes faster than a setting (cached: every query asks again)."""
    rows, settings, _ = table_cells(gpu_type, shape)
    degrees = range(1, max((n for n, _ in rows), default=1) + 1)
    every = {Setting(env=env, offload=offload, sp=sp) for env in (False, True) for offload in (False, True)
             for sp in degrees}
    limits = {}
    for n in sorted({count for count, _ in rows}):
        failures = failures_by_row(shape, rows, settings, n)
        for setting in every:
            limits[n, int(setting.env), int(setting.offload), setting.sp] = own_table_limit(failures, setting)
    return MappingProxyType(limits)


@lru_cache(maxsize=256)
def least_limits(gpu_types: tuple[GpuType, ...], shape: Model) -> Mapping[Combination, int]:
    """The `own_limits` of each of `gpu_types` (one, or a GPU type and those with at least its memory), the least
    per combination: a setting that runs out of memory on a GPU count with more memory does with less."""
    limits: dict[Combination, int] = {}
    for gpu_type in gpu_types:
        for combination, limit in own_limits(gpu_type, shape).items():
            limits[combination] = min(limit, limits.get(combination, MAX_TOKENS))
    return MappingProxyType(limits)


@lru_cache(maxsize=1024)
def capped_estimates(shape: Model, memory_gib: float, gpus: int, coefficients: Coefficients, margin: float,
                     without_env: bool, refuting: tuple[GpuType, ...], lora_rank: int = 0,
                     critic: CriticStates | None = None, dpo: bool = False,
                     experts: ExpertLayout = "fused") -> tuple[tuple[int, int, int, int, int], ...]:
    """The memory model's estimates for `shape` on `gpus` GPUs of `memory_gib` (`estimated_cells`, of a LoRA run of
    `lora_rank` or full fine-tuning, with a PPO `critic` or not, for DPO or not: `dpo`, its routed experts laid out
    as `experts`), each capped where the tables
    of `refuting` say its setting runs out of memory (`within_refuting_tables` of their `least_limits`). Cached per
    count, as the estimates are: the questions on one GPU type and model ask again."""
    return within_refuting_tables(
        estimated_cells(shape, memory_gib, (gpus,), coefficients, margin, without_env, lora_rank, critic, dpo,
                        experts),
        least_limits(refuting, shape))


def within_refuting_tables(
    estimates: tuple[tuple[int, int, int, int, int], ...], limits: Mapping[Combination, int],
) -> tuple[tuple[int, int, int, int, int], ...]:
    """The estimates, each no longer than where the table of its count, or of more GPUs, says its setting
    runs out of memory (`own_limits`): the tables' failures and ``-`` rows stand, and what runs out of memory
    on more GPUs does on fewer (they hold more of the states each, and the same tokens). A table of fewer GPUs
    caps it where it says the setting with Offload runs out of memory: the states are in host memory then, so
    a GPU holds the same at any count, and without Offload it holds them besides (`refuting_cell`)."""
    tabled = sorted({n for n, *_ in limits})
    capped = []
    for n, env, offload, sp, longest in estimates:
        limit = min((limits[key] for m in tabled if (key := (m, env, offload if m >= n else 1, sp)) in limits),
                    default=MAX_TOKENS)
        if min(longest, limit) > 0:
            capped.append((n, env, offload, sp, min(longest, limit)))
    return tuple(capped)


def stopped_estimates(
    capped: tuple[tuple[int, int, int, int, int], ...], estimates: tuple[tuple[int, int, int, int, int], ...],
) -> tuple[tuple[int, int, int, int, int], ...]:
    """The estimates of `capped` (`within_refuting_tables` of `estimates`) that a table stops short of the memory
    model's longest fitting length (in `estimates`)."""
    fitting = {cell[:4]: cell[4] for cell in estimates}
    return tuple(cell for cell in capped if cell[4] < fitting[cell[:4]])


@lru_cache(maxsize=256)
def cell_witnesses(tabled: GpuType, refuting: tuple[GpuType, ...], shape: Model,
                   counts: tuple[int, ...]) -> tuple[tuple[int, int, int, int, int, int, int], ...]:
    """The `PlanningData.witnesses` of `shape`'s cells in `tabled`'s tables (`table_cells`) for plans on `counts`,
    each up to where the tables of `refuting` say its setting runs out of memory on the plan's count (`least_limits`);
    of a table's cells with one setting, only the one that vouches the longest for each count (a witness's length
    only bounds the plan's from above, so a shorter one allows no plan the longest does not). Cached: the questions
    on one GPU type and model ask again."""
    _, settings, _ = table_cells(tabled, shape)
    limits = least_limits(refuting, shape)
    vouched_counts = {m: [n for n in counts if vouches_for(m, n)] for m, _ in settings}
    longest: dict[tuple[int, int, int, int, int], int] = {}  # (n, m, e, o, s): the longest length vouched for
    for (m, row), setting in sorted(settings.items()):
        env, offload, sp = int(setting.env), int(setting.offload), setting.sp
        for n in vouched_counts[m]:
            vouched = row if n == m else min(row, limits.get((n, env, offload, sp), MAX_TOKENS))
            key = (n, m, env, offload, sp)
            longest[key] = max(longest.get(key, 0), vouched)
    return tuple((n, m, vouched, env, offload, sp, 0) for (n, m, env, offload, sp), vouched in longest.items())


@lru_cache(maxsize=64)
def cost_ranks(counts: tuple[int, ...], objective: Objective, weights: Weights, held_per_active: Fraction,
               interconnect: Interconnect | None, critic: CriticStates | None = None) -> tuple[RankedCombination, ...]:
    """(n, e, o, s, rank, cost rank, cost tier) for every combination of the GPU `counts`, Env, Offload and SP
    up to the largest count, for a model of `held_per_active` parameters on GPUs joined by `interconnect`, with a PPO
    `critic` or none (`exact_cost`): its place in the objective's order (`ranking_key`: the fewest GPU-hours, a
    constant per combination, are a rank like the others), 0 for the best, and in the cheapest plan's order, and the
    cost rank of the first combination of exactly its cost (its tier: equal costs, one tier).
    Every combination gets them, feasible or not; the constraints decide which the plan may take."""
    combinations = [
        (n, env, offload, sp)
        for n in counts
        for env in (0, 1)
        for offload in (0, 1)
        for sp in range(1, max(counts, default=1) + 1)
    ]
    # Costs as whole numbers, times one multiple of every denominator, so that the sort compares integers
    # instead of fractions (the same order, much faster for many GPU counts): the cost on one GPU of each
    # setting, exactly, then divided by the count.
    per_setting = {setting: exact_cost(weights, held_per_active, interconnect, (1, *setting), critic)
                   for setting in {c[1:] for c in combinations}}
    scale = math.lcm(*(cost.denominator for cost in per_setting.values())) * math.lcm(*counts)
    on_one_gpu = {setting: cost.numerator * (scale // cost.denominator) for setting, cost in per_setting.items()}
    whole_cost = {c: on_one_gpu[c[1:]] // c[0] for c in combinations}  # worked out once: 16384 for 64 GPUs

    by_cost = sorted(combinations, key=lambda c: ranking_key("cheapest", c, whole_cost[c]))
    ordered = by_cost if objective not in CHOOSES_COUNT else sorted(
        combinations, key=lambda c: ranking_key(objective, c, whole_cost[c]))
    cost_rank = {combination: rank for rank, combination in enumerate(by_cost)}
    tier: dict[int, int] = {}  # whole cost -> the first cost rank of that cost
    for rank, combination in enumerate(by_cost):
        tier.setdefault(whole_cost[combination], rank)
    return tuple(RankedCombination(*combination, rank, cost_rank[combination], tier[whole_cost[combination]])
                 for rank, combination in enumerate(ordered))


@lru_cache(maxsize=64)
def ranks_table(counts: tuple[int, ...], objective: Objective, weights: Weights, held_per_active: Fraction,
                interconnect: Interconnect | None, columns: int, critic: CriticStates | None = None) -> TableValues:
    """The first `columns` of each of `cost_ranks`' entries (of a run with a PPO `critic` or none), as a CP-SAT table's
    values (`table_values`; cached: every model with these counts has this table, thousands of rows for 64 GPUs)."""
    return table_values([entry[:columns]
                         for entry in cost_ranks(counts, objective, weights, held_per_active, interconnect, critic)])


def table_values(rows: Sequence[Sequence[int]]) -> TableValues:
    """The `rows` a table constraint allows, row after row in one flat tuple: a CP-SAT table's values, for
    `add_table`."""
    return tuple(value for row in rows for value in row)


def add_table(model: cp_model.CpModel, expressions: list[cp_model.IntVar], values: TableValues) -> cp_model.Constraint:
    """`model.add_allowed_assignments(expressions, rows)`, the same constraint, for rows given as one flat tuple of
    `values` (`table_values`, cached by its callers): extended in one call, where the Python wrapper converts each
    row again for each model (0.57 ms for the 3840 rows of a 64-GPU budget's ranks, 0.26 ms extended)."""
    constraint = model.add_allowed_assignments(expressions, ())
    constraint.proto.table.values.extend(values)
    return constraint


def add_plan_variables(model: cp_model.CpModel, data: PlanningData, query: Query) -> PlanVariables:
    """The plan (n, e, o, s, L), its cost rank, and the documented cell (witness) it rests on.

    L is the asked length, or, when maximising, one of the tables' row lengths or, for an estimate, a length on
    the estimates' grid or where a table stops it (`add_length`).
    """
    largest = max(data.counts)
    rank = model.new_int_var(0, len(data.ranks) - 1, "objective_rank")
    return PlanVariables(
        gpus=model.new_int_var_from_domain(cp_model.Domain.from_values(data.counts), "trainer_gpus"),
        env=model.new_bool_var("env_expandable_segments"),
        offload=model.new_bool_var("fsdp2_cpu_offload"),
        sp=model.new_int_var(1, largest, "ulysses_sp_degree"),
        max_model_len=model.new_int_var_from_domain(cp_model.Domain.from_values(data.lengths), "max_model_len")
        if query.max_model_len is None
        else model.new_constant(query.max_model_len),
        rank=rank,
        cost_rank=model.new_int_var(0, len(data.ranks) - 1, "cost_rank") if _ranks_apart(query) else rank,
        witness_gpus=model.new_int_var_from_domain(cp_model.Domain.from_values(data.counts), "witness_gpus"),
        witness_len=model.new_int_var_from_domain(
            cp_model.Domain.from_values(sorted({0, *(witness[2] for witness in data.witnesses)})), "witness_length"),
        witness_env=model.new_bool_var("witness_env"),
        witness_offload=model.new_bool_var("witness_offload"),
        witness_sp=model.new_int_var(1, largest, "witness_sp_degree"),
        estimated=model.new_bool_var("estimated_by_memory_model"),
    )


RULES = (
    "budget",
    "whole_nodes",
    "rollout_layout",
    "table_rows",
    "sp_divides_gpus",
    "sp_divides_heads",
    "sp_kv_heads",
    "sp_attention",
    "sp_within_node",
    "batch_divides",
    "token_cap",
    "pin_sp",
    "pin_env",
    "pin_offload",
    "host_ram",
    "evidence",
)
"""The constraint families that can rule a plan out, each of which `build_model` can guard with a literal;
in the order explanations name them: GPU counts, then SP degrees, then settings."""

Guards = Mapping[str, cp_model.IntVar]
"""An enforcement literal per rule (see `RULES`); empty for the plain model, where every rule holds."""


def _guarded(constraint: cp_model.Constraint, guards: Guards, rule: str) -> None:
    if rule in guards:
        constraint.only_enforce_if(guards[rule])


def add_parallelism_rules(model: cp_model.CpModel, data: PlanningData, plan: PlanVariables, guards: Guards) -> None:
    """SP divides the trainer GPUs and the attention heads; SP and the KV heads divide one another; SP is 1 for a
    model whose attention verl's Ulysses patch does not reach (`Model.ulysses_unreached`).

    Each divisibility relation is a table of the (GPU count, SP) or SP values it allows, which CP-SAT
    propagates fully (a modulo with a variable divisor propagates weakly, and large budgets made the
    search slow)."""
    divides_gpus, divides_heads, suits_kv_heads = _parallelism_tables(
        data.counts, data.sp_degrees, data.shape.num_attention_heads, data.shape.num_key_value_heads)
    _guarded(add_table(model, [plan.gpus, plan.sp], divides_gpus), guards, "sp_divides_gpus")
    _guarded(add_table(model, [plan.sp], divides_heads), guards, "sp_divides_heads")
    _guarded(add_table(model, [plan.sp], suits_kv_heads), guards, "sp_kv_heads")
    if data.shape.ulysses_unreached is not None:
        _guarded(model.add(plan.sp == 1), guards, "sp_attention")


@lru_cache(maxsize=256)
def _parallelism_tables(counts: tuple[int, ...], degrees: range, heads: int,
                        kv_heads: int) -> tuple[TableValues, ...]:
    """`add_parallelism_rules`' tables for plans on `counts` of a model with `heads` attention and `kv_heads` KV heads:
    the (GPU count, SP) pairs whose SP divides the count, and the SP `degrees` that divide the heads and suit the KV
    heads. Cached: each question of one budget asks again."""
    return (table_values([(n, s) for n in counts for s in degrees if n % s == 0]),
            table_values([(s,) for s in degrees if heads % s == 0]),
            table_values([(s,) for s in degrees if sp_suits_kv_heads(kv_heads, s)]))


def add_batch_rule(model: cp_model.CpModel, data: PlanningData, query: Query, plan: PlanVariables,
                   guards: Guards) -> None:
    """With `train_batch_size`, the trainer's data-parallel ranks (GPUs / SP) divide it (`splits_batch`), twice them
    for DPO (`Query.pair_batch`), and its GPUs too for a Trinity release that refuses a batch they
    do not divide (`Query.batch_divisor` ``gpus``: 0.5.0, 0.5.1):
    a table of the (GPU count, SP) pairs it allows, which leaves to `sp_divides_gpus` the pairs whose SP does not
    divide."""
    size = query.train_batch_size
    if size is None:
        return
    gpus_divide = query.batch_divisor == "gpus"
    allowed = [(n, s) for n in data.counts for s in data.sp_degrees
               if splits_batch(size, n, s, query.pair_batch) and not (gpus_divide and size % n)]
    _guarded(model.add_allowed_assignments([plan.gpus, plan.sp], allowed), guards, "batch_divides")


def add_node_rule(model: cp_model.CpModel, data: PlanningData, query: Query, plan: PlanVariables,
                  guards: Guards) -> None:
    """With `node_gpus`, a trainer spanning nodes uses whole nodes (Trinity's rule) and keeps each SP group
    inside a node: SP divides the node (tables of the GPU counts and (GPU count, SP) pairs these allow).
    With `rollout_gpus` too, the trainer's GPU count leaves the rollout GPUs a layout."""
    node = query.node_gpus
    whole_nodes, within_node = _node_tables(data.counts, data.sp_degrees, node)
    _guarded(add_table(model, [plan.gpus], whole_nodes), guards, "whole_nodes")
    _guarded(add_table(model, [plan.gpus, plan.sp], within_node), guards, "sp_within_node")
    if query.rollout_gpus:
        laid_out = [(n,) for n in data.counts if not rollout_layout_violation(n, query.rollout_gpus, node)]
        _guarded(model.add_allowed_assignments([plan.gpus], laid_out), guards, "rollout_layout")


@lru_cache(maxsize=256)
def _node_tables(counts: tuple[int, ...], degrees: range, node_gpus: int) -> tuple[TableValues, ...]:
    """`add_node_rule`'s tables for plans on `counts` in nodes of `node_gpus`: the counts that are whole nodes or fit
    one, and the (GPU count, SP of `degrees`) pairs whose SP groups stay inside a node. Cached: each question of one
    budget asks again."""
    return (table_values([(n,) for n in counts if not whole_nodes_violation(n, node_gpus)]),
            table_values([(n, s) for n in counts for s in degrees if sp_within_node(n, node_gpus, s)]))


def add_cell_evidence(model: cp_model.CpModel, data: PlanningData, plan: PlanVariables, guards: Guards) -> None:
    """A witness vouches for the plan (`PlanningData.witnesses`): a documented cell of the same GPU count
    or fewer, vouching up to a length no shorter than L, whose setting the plan includes; or, where the
    tables are silent, the memory model's estimate for exactly the plan's setting, whose longest fitting
    length (capped where the count's own table says the setting ran out of memory) is no shorter than L."""
    not_estimated = 1 - plan.estimated
    for constraint in (
        model.add_allowed_assignments(
            [plan.gpus, plan.witness_gpus, plan.witness_len, plan.witness_env, plan.witness_offload, plan.witness_sp,
             plan.estimated],
            list(data.witnesses)),
        model.add(plan.witness_len >= plan.max_model_len),
        model.add(plan.env >= plan.witness_env),
        model.add(plan.offload >= plan.witness_offload),
        model.add(plan.sp >= plan.witness_sp),
        model.add(plan.env <= plan.witness_env + not_estimated),  # an estimate is for exactly its setting
        model.add(plan.offload <= plan.witness_offload + not_estimated),
        model.add(plan.sp <= plan.witness_sp + max(data.counts) * not_estimated),
    ):
        _guarded(constraint, guards, "evidence")


def add_budget(model: cp_model.CpModel, query: Query, plan: PlanVariables, guards: Guards) -> None:
    """At most `budget_gpus` trainer GPUs, or exactly that many with `exact`."""
    if query.exact:
        _guarded(model.add(plan.gpus == query.budget_gpus), guards, "budget")
    else:
        _guarded(model.add(plan.gpus <= query.budget_gpus), guards, "budget")


def add_length(model: cp_model.CpModel, data: PlanningData, query: Query, plan: PlanVariables, guards: Guards) -> None:
    """When maximising, L is a row of the witness's table, or for an estimate, a multiple of the
    estimates' grid up to the longest estimate for the plan's GPU count, or where a table stops the estimate
    (`PlanningData.table_stops`).

    The grid is a linear rule and the per-count limit a small table, rather than one tuple per grid length
    and count (thousands for 64 GPUs, which made CP-SAT's search slow)."""
    if query.max_model_len is None:
        rows = model.add_allowed_assignments([plan.witness_gpus, plan.max_model_len], list(data.rows))
        rows.only_enforce_if(~plan.estimated)
        longest = max(data.longest_estimate.values(), default=0)
        count_limit = model.new_int_var(0, longest, "longest_estimate_of_count")
        limits = [(n, 0, 0) for n in data.counts]  # the witness's rows limit a plan that is not estimated
        limits += [(n, top, 1) for n, top in sorted(data.longest_estimate.items())]
        grid_steps = model.new_int_var(0, longest // GRID, "grid_steps")
        at_table_stop = model.new_bool_var("at_table_stop")  # else on the grid
        stops = model.add_allowed_assignments([plan.gpus, plan.env, plan.offload, plan.sp, plan.max_model_len],
                                              list(data.table_stops))
        stops.only_enforce_if([plan.estimated, at_table_stop])
        on_grid = model.add(plan.max_model_len == GRID * grid_steps)
        on_grid.only_enforce_if([plan.estimated, ~at_table_stop])
        for constraint in (
            rows,
            model.add_allowed_assignments([plan.gpus, count_limit, plan.estimated], limits),
            model.add(plan.max_model_len <= count_limit).only_enforce_if(plan.estimated),
            on_grid,
            stops,
        ):
            _guarded(constraint, guards, "table_rows")


def add_token_cap(model: cp_model.CpModel, query: Query, plan: PlanVariables, guards: Guards) -> None:
    """With a token budget cap (`Query.token_budget_cap`, N), a plan only where a micro-batch of N tokens per GPU
    holds a sequence over its SP group: ``L <= N * s`` (verl's rule, ``ceil(L / s) <= N``)."""
    if query.token_budget_cap is not None:
        _guarded(model.add(plan.max_model_len <= query.token_budget_cap * plan.sp), guards, "token_cap")


def minimize_token_cap(model: cp_model.CpModel, data: PlanningData, length: int,
                       plan: PlanVariables) -> cp_model.IntVar:
    """Make the model minimise the token budget cap that holds a sequence of `length` tokens over the plan's SP group
    (``ceil(length / s)``, `add_token_cap`'s rule), then the objective's rank: the plan at the smallest cap, and that
    cap (the variable returned). It replaces the objective `add_objective` set; the model holds no cap of its own."""
    cap = model.new_int_var(1, length, "token_cap")
    model.add_allowed_assignments([plan.sp, cap], [(sp, -(-length // sp)) for sp in data.sp_degrees])
    model.minimize(cap * len(data.ranks) + plan.rank)
    return cap


def add_host_ram(model: cp_model.CpModel, data: PlanningData, query: Query, plan: PlanVariables,
                 guards: Guards) -> None:
    """With ``host_ram_gb``, a plan only where a node's host memory holds what it needs there: the model while it
    loads, and with Offload a node's share of the states (`fits_host_ram`)."""
    if query.host_ram_gb is None:
        return
    shape = ByIdentity(data.shape)
    room = [(n, offload) for n in data.counts for offload in (0, 1)
            if _fits_host_ram(shape, n, query.node_gpus, query.host_ram_gb, bool(offload),
                              query.trinity_version, query.reference_model, query.lora_rank, query.critic,
                              query.expert_layout, query.model_loading(data.compute_capability, bool(offload)))]
    _guarded(model.add_allowed_assignments([plan.gpus, plan.offload], room), guards, "host_ram")


@lru_cache(maxsize=4096)
def _fits_host_ram(shape: ByIdentity[Model], gpus: int, node_gpus: int, host_ram_gb: float, offload: bool,
                   version: TrinityVersion | None, reference: bool, lora_rank: int, critic: CriticStates | None,
                   experts: ExpertLayout, loading: ModelLoading) -> bool:
    """`fits_host_ram` of the `shape` (by identity: hashing a model took longer than the figure), cached: the questions
    of one job ask it again for each GPU count they prepare, at each trainer GPU count asked."""
    return fits_host_ram(shape.held, gpus, node_gpus, host_ram_gb, offload, version, reference, lora_rank, critic,
                         experts, loading)


def host_need(data: PlanningData, query: Query, gpus: int, offload: bool) -> float:
    """The host memory per node a plan of `data` on `gpus` GPUs, with Offload or without, needs as `query` counts it
    (`shown_host_need`: its Trinity release, reference model, LoRA, critic and loading ranks), GiB as shown."""
    return shown_host_need(data.shape, gpus, query.node_gpus, offload, query.trinity_version, query.reference_model,
                           query.lora_rank, query.critic, query.expert_layout,
                           query.model_loading(data.compute_capability, offload))


def minimize_host_need(model: cp_model.CpModel, data: PlanningData, query: Query, plan: PlanVariables) -> None:
    """Make the model minimise the host memory per node the plan needs (its place among the needs a plan of
    the prepared counts may have, as `fits_host_ram` reckons them), then the objective's rank: the plan that
    needs the least host memory. It replaces the objective `add_objective` set."""
    needs = {(n, offload): host_need(data, query, n, bool(offload)) for n in data.counts for offload in (0, 1)}
    levels = sorted(set(needs.values()))
    level = model.new_int_var(0, len(levels) - 1, "host_need_level")
    model.add_allowed_assignments([plan.gpus, plan.offload, level],
                                  [(n, offload, levels.index(need)) for (n, offload), need in needs.items()])
    model.minimize(level * len(data.ranks) + plan.rank)


def add_lifted_budget(model: cp_model.CpModel, plan: PlanVariables, budget_gpus: int) -> cp_model.IntVar:
    """A literal true exactly where the plan takes more than `budget_gpus` trainer GPUs: the budget lifted (for a model
    prepared for a larger budget, as the nearest plan's is)."""
    lifted = model.new_bool_var("budget_lifted")
    model.add(plan.gpus >= budget_gpus + 1).only_enforce_if(lifted)
    model.add(plan.gpus <= budget_gpus).only_enforce_if(~lifted)
    return lifted


def add_lifted_token_budget(model: cp_model.CpModel, plan: PlanVariables,
                            at_default: list[Combination]) -> cp_model.IntVar:
    """A literal that an estimated plan needs unless its combination is one of `at_default`, those whose estimate holds
    the asked length at Trinity's default token budget: the default lifted (``--token-budget auto``), for a model
    prepared with lowered budgets."""
    lifted = model.new_bool_var("token_budget_lifted")
    model.add_allowed_assignments([plan.gpus, plan.env, plan.offload, plan.sp], at_default).only_enforce_if(
        [plan.estimated, ~lifted])
    return lifted


def minimize_lifts(model: cp_model.CpModel, data: PlanningData, query: Query, plan: PlanVariables,
                   lifts: list[tuple[cp_model.LiteralT, int]], more_gpus: cp_model.LiteralT) -> None:
    """Make the model minimise the weighted sum of the limits lifted (each a literal and its weight), then, where
    `more_gpus` (the budget lifted), the GPUs, then the objective (`objective_expression`: maximising the length, the
    longer length, then the rank), as the planner orders the plans at that count: the nearest plan. It replaces the
    objective `add_objective` set."""
    lifted = cp_model.LinearExpr.weighted_sum([literal for literal, _ in lifts], [weight for _, weight in lifts])
    gpus_past_budget = model.new_int_var(0, max(data.counts), "gpus_past_budget")
    model.add(gpus_past_budget == plan.gpus).only_enforce_if(more_gpus)
    model.add(gpus_past_budget == 0).only_enforce_if(~more_gpus)
    # Each lift counts more than every count of GPUs, and each GPU more than every value of the objective.
    model.minimize((lifted * (max(data.counts) + 1) + gpus_past_budget) * _objective_values(data, query)
                   + objective_expression(data, query, plan))


def _objective_values(data: PlanningData, query: Query) -> int:
    """More than the largest value `objective_expression` takes: a weight that makes what it multiplies count before
    the objective (lexicographically, exactly)."""
    return len(data.ranks) * (max(data.lengths) + 1 if query.objective == "max_len" else 1)


PIN_RULES = {"pin_sp": "sp", "pin_env": "env", "pin_offload": "offload"}
"""The rules of the settings a query pins (`add_pins`), each with the query's field that pins it."""


def minimize_limits_dropped(model: cp_model.CpModel, data: PlanningData, query: Query, plan: PlanVariables,
                            guards: Guards) -> None:
    """Make a guarded model of `query` (`build_model`'s `guarded`) hold every rule but the settings it pins and the
    host memory it gives, which become soft (their literals in `guards`: true where kept), and minimise the limits
    dropped, then the objective (`objective_expression`): a plan without the host memory alone (every pin kept)
    first, then plans that keep it, by the fewest pins dropped. So its best plan is `query`'s best without the host
    memory, where that alone rules its plans out, else its best without the fewest pins that do (of those sets of
    pins, the one whose best plan is best), the host memory kept; a pin the plan has counts as kept. Lexicographic
    by weights: a pin dropped counts 2 and the host memory 1 (never dropped with a pin), and each such count more
    than every value of the objective (`_objective_values`). It replaces the objective `add_objective` set."""
    soft = {rule for rule, field in PIN_RULES.items() if getattr(query, field) is not None}
    pins = [guards[rule] for rule in PIN_RULES if rule in soft]
    soft |= {"host_ram"} if query.host_ram_gb is not None else set()
    model.add_bool_and([literal for rule, literal in guards.items() if rule not in soft])
    host = guards["host_ram"]
    model.add_bool_and(pins).only_enforce_if(~host)
    dropped = 2 * (len(pins) - cp_model.LinearExpr.sum(pins)) + 1 - host
    model.minimize(dropped * _objective_values(data, query) + objective_expression(data, query, plan))


def add_pins(model: cp_model.CpModel, query: Query, plan: PlanVariables, guards: Guards) -> None:
    """Fix the settings the user pinned (--sp, --env/--no-env, --offload/--no-offload)."""
    for rule, field in PIN_RULES.items():
        if (pinned := getattr(query, field)) is not None:
            _guarded(model.add(getattr(plan, field) == int(pinned)), guards, rule)


def objective_expression(data: PlanningData, query: Query, plan: PlanVariables) -> cp_model.LinearExpr:
    """What the plan minimises: the objective's rank; when maximising the length, the length first (each
    length below the longest counts more than every rank), then the rank. Distinct plans score
    differently (a combination has one rank, and when maximising one length)."""
    if query.objective == "max_len":
        return (max(data.lengths) - plan.max_model_len) * len(data.ranks) + plan.rank
    return plan.rank


def _ranks_apart(query: Query) -> bool:
    """Whether the cost rank needs a variable of its own: only for ranked plans (`exclude_dominated`) when the
    fewest GPUs or GPU-hours come first; otherwise the objective's order is the cost's."""
    return query.objective in CHOOSES_COUNT and query.top > 1


def add_objective(model: cp_model.CpModel, data: PlanningData, query: Query, plan: PlanVariables) -> None:
    """Minimise `objective_expression`: the objective's rank; when maximising the length, longer L first, then
    the rank (and search in that order)."""
    if _ranks_apart(query):
        add_table(model, [plan.gpus, plan.env, plan.offload, plan.sp, plan.rank, plan.cost_rank],
                  ranks_table(data.counts, query.objective, query.weights, data.shape.held_per_active,
                              data.interconnect, columns=6, critic=query.critic))
    else:  # one rank: a column more made large tables (64 GPUs) three times slower to search
        add_table(model, [plan.gpus, plan.env, plan.offload, plan.sp, plan.rank],
                  ranks_table(data.counts, query.objective, query.weights, data.shape.held_per_active,
                              data.interconnect, columns=5, critic=query.critic))
    model.minimize(objective_expression(data, query, plan))
    if query.objective == "max_len":
        # Search the longest lengths first, then the cheapest ranks (solve.py makes the search follow it).
        _decide_next(model, plan.max_model_len, largest_first=True)
        _decide_next(model, plan.rank)
    else:
        # Search the fewest GPUs first when they come first, then the cheapest ranks: the first plan found
        # is then the best one, which large budgets (up to 64 GPUs) make worth it.
        if query.objective == "min_gpus":
            _decide_next(model, plan.gpus)
        _decide_next(model, plan.rank)


def _decide_next(model: cp_model.CpModel, variable: cp_model.IntVar, *, largest_first: bool = False) -> None:
    """Make CP-SAT's search fix `variable` after the variables of the earlier calls, trying its smallest value first
    (its largest with `largest_first`)."""
    values = cp_model.SELECT_MAX_VALUE if largest_first else cp_model.SELECT_MIN_VALUE
    # OR-Tools 9.12's annotations want the strategy enums' classes, not these values of them (9.15's take them):
    # the ignore is for 9.12, unused (and not reported) with 9.15.
    model.add_decision_strategy([variable], cp_model.CHOOSE_FIRST, values)  # type: ignore[arg-type, unused-ignore]


class LeanCpModel(cp_model.CpModel):
    """A CP-SAT model without the deprecated camelCase aliases that OR-Tools sets on every new model
    (about 0.5 ms each, a fifth of a planning query; this project uses the snake_case names only)."""

    def _add_pre_pep8_methods(self) -> None:
        """Skip adding the aliases."""


def new_cp_solver(workers: int, seed: int) -> cp_model.CpSolver:
    """A CP-SAT solver with `workers` search workers and the random `seed` (answers are repeatable for a seed),
    which leaves Ctrl-C to Python; the caller sets the time limit."""
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = workers
    solver.parameters.random_seed = seed
    solver.parameters.catch_sigint_signal = False
    return solver


def stopped_by_wall_clock(solver: cp_model.CpSolver, status: SolverStatus) -> bool:
    """Whether `solver`'s last solve (its `status`) ended on its wall-clock limit (`max_time_in_seconds`), not on
    its deterministic one (`max_deterministic_time`) or a proof: the one stop that depends on the machine's load,
    so that another run may end elsewhere. Told by which of the two limits it used the larger share of: neither is
    reported exactly at its limit (OR-Tools 9.12 stops 1% to 11% short of a deterministic limit, 9.15 just past it;
    a wall-clock limit of 0.01 s may end a little before it). (Ctrl-C's stop reads the same: the caller tells it
    apart.)"""
    if status in (cp_model.OPTIMAL, cp_model.INFEASIBLE):
        return False
    def share(used: float, limit: float) -> float:  # a limit of 0 is used up at once
        return used / limit if limit > 0 else 1.0

    parameters = solver.parameters
    return (share(solver.wall_time, parameters.max_time_in_seconds)
            > share(solver.response_proto.deterministic_time, parameters.max_deterministic_time))


def build_model(
    data: PlanningData, query: Query, guarded: bool = False, ranked: bool = True
) -> tuple[cp_model.CpModel, PlanVariables, Guards]:
    """The whole CP-SAT model for `query` on the prepared `data` (which must hold a plan's GPU counts:
    `PlanningData.holds_no_plan` is false).

    With `guarded`, every rule of `RULES` holds only under its own literal (returned), so that solving
    under assumptions tells which rules rule a plan out; otherwise every rule simply holds. Without `ranked`,
    for questions of feasibility alone, the model lacks the objective (`add_objective`): its ranks table gives
    every combination of the plan's domains a rank, so it rules no plan out.
    """
    model = LeanCpModel()
    model.name = f"plan {data.model} on {data.gpu}"
    guards = {rule: model.new_bool_var(f"rule_{rule}") for rule in RULES} if guarded else {}
    plan = add_plan_variables(model, data, query)
    add_parallelism_rules(model, data, plan, guards)
    add_node_rule(model, data, query, plan, guards)
    add_batch_rule(model, data, query, plan, guards)
    add_cell_evidence(model, data, plan, guards)
    add_budget(model, query, plan, guards)
    add_length(model, data, query, plan, guards)
    add_pins(model, query, plan, guards)
    add_token_cap(model, query, plan, guards)
    add_host_ram(model, data, query, plan, guards)
    if ranked:
        add_objective(model, data, query, plan)
    return model, plan, guards


def exclude_dominated(model: cp_model.CpModel, data: PlanningData, plan: PlanVariables, found: FoundPlan,
                      longer_possible: bool) -> None:
    """Exclude the `found` plan and every plan it dominates, so that the next solve finds the next best that
    is an alternative to it: on fewer GPUs, cheaper (by exact cost: an equal cost is no gain), vouched for by
    the tables where the found plan is an estimate, or (where `longer_possible`: the found plan is not proven
    the best when maximising) longer. So the same combination at a shorter length is no alternative, unless
    the tables vouch for it where the found plan is an estimate.

    The cost rank of a combination says its GPU count and cost too, so the rule is a domain of the cost rank:
    the ranks of the combinations on fewer GPUs or of a lower cost tier (a disjunction of literals per plan
    made ranked plans twice as slow to find)."""
    tier = next(entry.cost_tier for entry in data.ranks if entry.cost_rank == found.cost_rank)
    alternatives = sorted(entry.cost_rank for entry in data.ranks if entry.cost_tier < tier or entry.gpus < found.gpus)
    constraint = model.add_linear_expression_in_domain(plan.cost_rank, cp_model.Domain.from_values(alternatives))
    escapes: list[cp_model.LiteralT] = [plan.estimated] if found.estimated else []  # the tables vouch: an alternative
    if longer_possible:
        longer = model.new_bool_var(f"longer_than_{found.max_model_len}")
        model.add(plan.max_model_len >= found.max_model_len + 1).only_enforce_if(longer)
        escapes.append(~longer)
    if escapes:
        constraint.only_enforce_if(escapes)

