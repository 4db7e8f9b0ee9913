"""Cluster capacity planning: which Trinity jobs fit on a fleet, where, and with which plans.

Each job's ways to run come from the planner (CP-SAT decides the cheapest plan for every pool and
trainer GPU count, or the longest length for jobs that may run longer). A second CP-SAT model then
chooses one way, or none, per job. Nodes in a pool are identical, so that model does not name nodes: it
counts how many nodes of each pool are filled with each *pattern* (a multiset of job footprints that fits
a node, among the footprints the jobs can have: GPUs, and the host memory a job needs there (its Offload
states, or its load at start-up) where the pool gives its nodes' host memory), and a job that needs more
than one node takes whole nodes.
The chosen patterns are then filled in node order to give each job its node indexes.

Objectives, one after the other (each stage keeps the value the stage before it reached): the total
priority of placed jobs (or, with ``minimize="nodes"``, every job placed on the fewest nodes), then the
longer contexts of jobs that asked for ``at_least`` a length, then the least total step-time cost.
Last, the jobs of a node with idle GPUs may grow onto them (`_widen`), where more GPUs run them faster or longer.
"""

from __future__ import annotations

import signal
import threading
import time
import zlib
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Literal

from ortools.sat.python import cp_model

from solver.memory import (
    estimated_counts,
    held_host_tenths,
    host_memory_gib,
    rollout_engines,
    shown_host_need,
    shown_host_tenths,
)
from solver.model import LeanCpModel, PlanningData, PlanningInputs, new_cp_solver, prepare_inputs
from solver.query import EstimateMode, Objective, Progress, Query, TokenBudgetMode, check_token_budget, make_query
from solver.results import (
    ClusterResult,
    Placement,
    PlacementCount,
    Plan,
    PoolCode,
    PoolUse,
    Status,
    Unplaced,
    UnplacedCode,
    UnplacedPool,
)
from solver.rules import batch_split_violation, rollout_layout, validated_length
from solver.solve import answer_for, checked, estimated_plan_words, host_over_words, least_host_words
from solver.tables import (
    MAX_ESTIMATED_GPUS,
    AtLeast,
    Catalog,
    Fleet,
    Job,
    MemoryModel,
    Pool,
    Weights,
    counted,
    load_weights,
    named_jobs,
)

COST_SCALE = 10_000
"""Costs enter the model as whole numbers: the step-time cost times this."""
JOB_BATCH_SOURCE = "the job's train_batch_size"
"""Where a job's train batch comes from, as messages name it."""
POOL_HOST_RAM_SOURCE = "the pool's host_ram_gb"
"""Where a job's host memory per node comes from, as messages name it (`host_ram_words`, `host_ram_bound_words`)."""
REASONS_SHARE = 0.6
"""The time the search leaves for the unplaced jobs' reasons, as a share of the time working out the jobs' ways
took: where a job has no way in a pool it may use, its reason asks the planner why, once per job shape, after
the search (0.3 to 0.57 of that time in benchmarks/cluster.py's fleets)."""

STAGES = {"priority": "placed priority", "nodes": "nodes used", "length": "longer contexts", "cost": "step-time cost",
          "tie-break": "tie-break"}


@dataclass(frozen=True)
class Option:
    """One way to run a job: a pool, a plan, and the room it takes there."""

    job: int
    pool: int
    plan: Plan
    size: int
    """GPUs on one node (trainer + rollout), or 0 when the job takes whole nodes."""
    whole_nodes: int
    """Nodes the job takes whole (0 when it sits on one node)."""
    rollout_gpus: int
    gain: int
    """For an ``at_least`` job: how much longer than asked, in units of 1024 tokens."""
    cost: int
    """The plan's step-time cost times `COST_SCALE`."""
    host_tenths: int = 0
    """Host memory, tenths of a GiB, that a job sharing a node takes there (an Offload job's states, or the model
    while it loads, whichever is more; without Offload, the model while it loads), where the pool gives its nodes'
    host memory and jobs sharing a node could exceed it (else 0)."""

    @property
    def footprint(self) -> Footprint:
        """What the job takes of a node it shares: (GPUs, host memory in tenths of a GiB)."""
        return self.size, self.host_tenths

    def gpus_per_node(self, node_gpus: int) -> int:
        """GPUs the job takes on each of its nodes, in a pool of `node_gpus`-GPU nodes."""
        return self.size or node_gpus

    def gpus_taken(self, node_gpus: int) -> int:
        """GPUs the job takes in all (whole nodes counted whole), in a pool of `node_gpus`-GPU nodes."""
        return self.size or self.whole_nodes * node_gpus


Footprint = tuple[int, int]
"""What one job takes of a shared node: (GPUs, tenths of a GiB of host memory)."""


def layout(trainer_gpus: int, rollout_gpus: int, node_gpus: int) -> tuple[int, int, int] | None:
    """(GPUs on one node, whole nodes, rollout GPUs) for a job, or None when no layout exists.

    The planner's `rollout_layout`: a job whose trainer and rollout GPUs fit in one node stays in one
    node; a larger one takes whole nodes (a trainer in part of the first with the rollout filling the
    rest, or a trainer on whole nodes with the rollout on the nodes after them).
    """
    if trainer_gpus + rollout_gpus <= node_gpus:
        return trainer_gpus + rollout_gpus, 0, rollout_gpus
    room = rollout_layout(trainer_gpus, rollout_gpus, node_gpus)
    return None if room is None else (0, *room)


class _Planner:
    """The planner's best plan for one job shape, asked once per shape."""

    def __init__(self, catalog: Catalog, weights: Weights, estimate: EstimateMode, time_limit_s: float = 10.0,
                 memory: MemoryModel | None = None, margin: float | None = None,
                 token_budget: TokenBudgetMode = "default") -> None:
        self.catalog = catalog
        self.weights = weights
        self.estimate = estimate
        self.token_budget = token_budget
        """``auto``: estimated plans may lower their token budget (the tables' tiers keep Trinity's default)."""
        self.time_limit_s = time_limit_s
        """The limit of each of the planner's solves (a few milliseconds each, in practice)."""
        self.memory = memory
        self.margin = margin
        """The memory model of the estimates and their safety margin (None: the shipped model, its margin)."""
        self.cache: dict[tuple[object, ...], Plan | None] = {}
        self.prepared: dict[PlanningInputs, PlanningData] = {}
        """The tables' data of the questions, prepared once for those of the same inputs (differing in length,
        host memory or the Offload pin)."""
        self.undecided = 0
        """How many of the solves behind `best` ran out of time (their ways left out, the placement unproven)."""
        self.reasons: dict[tuple[object, ...], _Why] = {}
        """Why a job of a shape (model, length, rollout GPUs, train batch, pool) has no way to run, once asked."""

    def best(self, gpu: str, model: str, gpus: int, length: int | None, node_gpus: int,
             estimate: EstimateMode, host_ram_gb: float | None = None, offload: bool | None = None,
             train_batch_size: int | None = None) -> Plan | None:
        """Cheapest plan on exactly `gpus` GPUs at `length`, or (None) the longest length there, on the
        evidence `estimate` allows (only where a node's `host_ram_gb` holds the model while it loads, and with
        Offload a node's share of the states; `offload` pins it; with `train_batch_size`, SP leaves data-parallel
        ranks that divide it)."""
        key = (gpu, model, gpus, length, node_gpus, estimate, host_ram_gb, offload, train_batch_size)
        if key not in self.cache:
            query = self.question(gpu, model, node_gpus, estimate, host_ram_gb, train_batch_size, budget_gpus=gpus,
                                  exact=True, objective="cheapest" if length else "max_len", max_model_len=length,
                                  offload=offload)
            inputs = PlanningInputs.of(gpu, query)
            if inputs not in self.prepared:
                self.prepared[inputs] = prepare_inputs(self.catalog, inputs)
            answer = answer_for(self.catalog, query, gpu, explained=False, data=self.prepared[inputs])
            self.undecided += not answer.decided  # a way left out, or a plan perhaps not its best
            self.cache[key] = answer.best
        return self.cache[key]

    def question(self, gpu: str, model: str, node_gpus: int, estimate: EstimateMode, host_ram_gb: float | None,
                 train_batch_size: int | None, *, objective: Objective, budget_gpus: int, max_model_len: int | None,
                 exact: bool = False, offload: bool | None = None) -> Query:
        """`make_query` for a job of `model` in a pool of `gpu` nodes of `node_gpus` GPUs (each with `host_ram_gb`)
        on `estimate`'s evidence, with the planner's weights, time limit, memory model and token budget (where
        estimates are on: the tables' tiers keep Trinity's default), and the pool's and the job's limits named as a
        cluster file gives them."""
        return make_query(self.catalog, model=model, gpu=gpu, objective=objective, budget_gpus=budget_gpus,
                          exact=exact, max_model_len=max_model_len, offload=offload, weights=self.weights,
                          estimate=estimate, time_limit_s=self.time_limit_s, memory=self.memory, margin=self.margin,
                          host_ram_gb=host_ram_gb, node_gpus=node_gpus, host_ram_source=POOL_HOST_RAM_SOURCE,
                          token_budget=self.token_budget if estimate != "never" else "default",
                          train_batch_size=train_batch_size, train_batch_source=JOB_BATCH_SOURCE,
                          ).model_copy(update={"host_ram_hardware": "the pool's", "count_nodes": True})

    def host_tenths(self, model: str, gpus: int, offload: bool) -> int:
        """Host memory, tenths of a GiB, that a trainer of `gpus` GPUs on one node needs there (`host_memory_gib`,
        as placements give it: `shown_host_tenths`, rounded up to a tenth, a whole number of them: the jobs' figures,
        added up exactly, are what a node's host memory must hold)."""
        return shown_host_tenths(host_memory_gib(self.catalog.model(model), gpus, offload=offload))


def job_options(planner: _Planner, fleet: Fleet, index: int) -> list[Option]:
    """Every way to run job `index`: per allowed pool and trainer GPU count, the planner's plan (the
    longest one for an ``at_least`` job) with a layout that fits the pool's nodes.

    Measured plans come first: where the tables give the job a way in a pool at their own GPU counts, only
    those counts and plans are used there. Where they give none (a length past them, a layout their counts
    do not fit), every count the planner considers on the pool's nodes is tried with the tables alone
    (their cells vouch for more GPUs too); where that gives none either (a GPU type or model without
    tables), with the memory model's estimates (marked ``estimated``), unless estimates are off. Each tier
    keeps the placement model small: the tables' counts alone give most jobs their ways."""
    job = fleet.jobs[index]
    options = []
    for pool_index, pool in enumerate(fleet.pools):
        if not job.may_use(pool):
            continue
        model = planner.catalog.model(job.model)
        tabled = [table.gpus for table in planner.catalog.tables_for(pool.gpu, model).tables]
        counts = estimated_counts(pool.gpus_per_node, pool.nodes * pool.gpus_per_node)
        tiers: list[tuple[Sequence[int], EstimateMode]] = [] if planner.estimate == "only" else [
            (tabled, "never"), (counts, "never")]
        tiers += [] if planner.estimate == "never" else [(counts, planner.estimate)]
        found: list[Option] = []
        for tier_counts, estimate in tiers:
            found = found or _ways(planner, fleet, index, pool_index, tier_counts, estimate)
        options += found
    return options


def _ways(planner: _Planner, fleet: Fleet, index: int, pool_index: int, counts: Sequence[int],
          estimate: EstimateMode) -> list[Option]:
    """Job `index`'s ways to run in one pool with these trainer GPU counts, on `estimate`'s evidence: per
    count, the best plan and, where it offloads onto a node whose host memory jobs share, the best plan
    without Offload too (it leaves the node's host memory to others)."""
    job, pool = fleet.jobs[index], fleet.pools[pool_index]
    asked = job.max_model_len
    length = None if isinstance(asked, AtLeast) else asked
    # An at_least job grows no further than YaRN is validated for (or its model's own scaling reaches), unless asked.
    ceiling = max(asked.at_least, validated_length(planner.catalog.model(job.model))) if isinstance(asked, AtLeast) \
        else None

    def best(gpus: int, host_ram_gb: float | None = None, offload: bool | None = None) -> Plan | None:
        found = planner.best(pool.gpu, job.model, gpus, length, pool.gpus_per_node, estimate, host_ram_gb, offload,
                             job.train_batch_size)
        if found is not None and ceiling is not None and found.max_model_len > ceiling:
            found = planner.best(pool.gpu, job.model, gpus, ceiling, pool.gpus_per_node, estimate, host_ram_gb, offload,
                                 job.train_batch_size)
        return found

    ways = []
    for gpus in counts:
        room = layout(gpus, job.rollout_gpus, pool.gpus_per_node)
        if room is None or room[1] > pool.nodes:
            continue
        # On one node, which other jobs may share, of a pool that gives its nodes' host memory: the jobs there share it.
        shares_node = bool(room[0]) and pool.host_ram_gb is not None
        plan = best(gpus, pool.host_ram_gb)
        plans = [plan]
        if plan is not None and plan.offload and shares_node:
            plans.append(best(gpus, pool.host_ram_gb, offload=False))
        for found in plans:
            if found is None or (isinstance(asked, AtLeast) and found.max_model_len < asked.at_least):
                continue
            gain = (found.max_model_len - asked.at_least) // 1024 if isinstance(asked, AtLeast) else 0
            ways.append(Option(job=index, pool=pool_index, plan=found, size=room[0], whole_nodes=room[1],
                               rollout_gpus=room[2], gain=gain, cost=round(found.cost * COST_SCALE),
                               host_tenths=planner.host_tenths(job.model, gpus, found.offload) if shares_node else 0))
    return ways


def _without_ways(fleet: Fleet, options: Sequence[Option]) -> list[int]:
    """The jobs (indexes) that `options` give no way to run in any pool they may use."""
    with_options = {option.job for option in options}
    return [index for index in range(len(fleet.jobs)) if index not in with_options]


def pool_use(fleet: Fleet, placements: Sequence[Placement]) -> tuple[PoolUse, ...]:
    """What `placements` use of each pool of `fleet`: the nodes a job uses, and the GPUs the jobs take."""
    return tuple(PoolUse(pool=pool.name, nodes=pool.nodes, gpus=pool.nodes * pool.gpus_per_node,
                         nodes_used=len({node for p in placements if p.pool == pool.name for node in p.nodes}),
                         gpus_used=sum(p.trainer_gpus + p.rollout_gpus for p in placements if p.pool == pool.name))
                 for pool in fleet.pools)


def option_name(fleet: Fleet, option: Option) -> str:
    """One way to run a job, named: job, pool and trainer GPUs, and, in a pool that checks host memory
    (where a count may have a way with Offload and one without), whether it offloads."""
    pool = fleet.pools[option.pool]
    name = f"{fleet.jobs[option.job].name}|{pool.name}|{option.plan.gpus}"
    return name + (f"|offload={option.plan.offload}" if pool.host_ram_gb is not None else "")


def host_capacity_tenths(pool: Pool) -> int | None:
    """A node's host memory in whole tenths of a GiB, as a job's need fits it (`held_host_tenths`; None: not
    checked)."""
    return None if pool.host_ram_gb is None else held_host_tenths(pool.host_ram_gb)


PATTERN_GROWTH, PATTERN_FLOOR, PATTERN_BUDGET = 4, 256, 50_000
"""How many ways to fill a node (`patterns`) a pool's placement weighs with host memory, before the host
memory of its jobs is counted in fewer, larger steps (`host_footprints`): the most of this many
times as many as without it, this many, and this many divided by the jobs that may use the pool times its
nodes (five jobs on one node weigh 9000 in a second or two; with hundreds of jobs, thousands of patterns
per pool left a placement 23% below its bound within the time limit)."""


def host_footprints(fleet: Fleet, options: list[Option]) -> tuple[list[Option], tuple[str, ...]]:
    """The options, with the host memory each takes on a node it shares as the placement counts it, and
    the pools where that is rounded up:
    - 0 in a pool where jobs sharing a node can never exceed it (each takes at most its share of the
      node's GPUs in host memory): there it constrains nothing, and leaving it out keeps the patterns few;
    - else its own need, where the pool's ways to fill a node stay within the limit (`PATTERN_GROWTH`);
    - else the largest need of its class, the jobs' needs grouped into fewer classes until they
      do (each distinct need makes the ways to fill a node multiply): conservative, never more than a
      node has.
    Needs and the node's host memory are whole tenths of a GiB (`host_capacity_tenths`), so that they add up
    exactly: no plan the planner let fit a node alone needs more than it has."""
    result, rounded_pools = list(options), []
    for pool_index, pool in enumerate(fleet.pools):
        capacity = host_capacity_tenths(pool)
        here = [i for i, o in enumerate(result) if o.pool == pool_index and o.host_tenths]
        if capacity is None or not here:
            continue
        if all(result[i].host_tenths * pool.gpus_per_node <= capacity * result[i].size for i in here):
            for i in here:
                result[i] = replace(result[i], host_tenths=0)
            continue
        needs = sorted({result[i].host_tenths for i in here})
        plain = {o.footprint for o in result if o.pool == pool_index and o.size and not o.host_tenths}
        sizes = {(o.size, 0) for o in result if o.pool == pool_index and o.size}
        jobs = len({o.job for o in result if o.pool == pool_index})
        limit = max(PATTERN_FLOOR, PATTERN_GROWTH * len(patterns(sizes, pool.gpus_per_node)),
                    PATTERN_BUDGET // (jobs * pool.nodes))
        for classes in range(len(needs), 0, -1):
            groups = [needs[len(needs) * c // classes: len(needs) * (c + 1) // classes] for c in range(classes)]
            rounded = {need: group[-1] for group in groups for need in group}
            footprints = plain | {(result[i].size, rounded[result[i].host_tenths]) for i in here}
            if classes == 1:
                break
            try:
                patterns(footprints, pool.gpus_per_node, capacity, limit=limit)
                break
            except TooManyPatterns:
                continue
        if classes < len(needs):
            rounded_pools.append(pool.name)
        for i in here:
            result[i] = replace(result[i], host_tenths=rounded[result[i].host_tenths])
    return result, tuple(rounded_pools)


class TooManyPatterns(Exception):
    """More ways to fill a node than `patterns` was asked to list."""


def patterns(footprints: set[Footprint], node_gpus: int, host_tenths: int | None = None,
             limit: int | None = None) -> list[tuple[Footprint, ...]]:
    """The maximal ways to fill one node with jobs of these footprints (GPUs, host tenths of a GiB): multisets
    (sorted, largest first) whose GPUs fit the node and whose host memory fits `host_tenths` (None: any), and to
    which no footprint can be added. Any packing of a node fits inside one of them. `TooManyPatterns` when
    there are more than `limit`."""
    ordered = sorted(footprints, reverse=True)
    host_room = host_tenths if host_tenths is not None else sum(host for _, host in ordered) * node_gpus
    least_host: dict[int, int] = {}  # per GPU count, its footprints' least host memory: a node none fits is full
    for gpus, host in ordered:
        least_host[gpus] = min(host, least_host.get(gpus, host))

    def full(free_gpus: int, free_host: int) -> bool:
        return not any(gpus <= free_gpus and host <= free_host for gpus, host in least_host.items())

    found: list[tuple[Footprint, ...]] = []

    def extend(prefix: tuple[Footprint, ...], start: int, free_gpus: int, free_host: int) -> None:
        grew = False
        for position in range(start, len(ordered)):
            gpus, host = ordered[position]
            if gpus <= free_gpus and host <= free_host:
                grew = True
                extend((*prefix, ordered[position]), position, free_gpus - gpus, free_host - host)
        if not grew and prefix and full(free_gpus, free_host):
            found.append(prefix)
            if limit is not None and len(found) > limit:
                raise TooManyPatterns

    extend((), 0, node_gpus, host_room)
    return found


def pattern_name(pattern: tuple[Footprint, ...]) -> str:
    """A pattern in words: its jobs' GPUs joined by '+', each with its host memory where it has some, in whole MiB
    (its tenths of a GiB times 102.4, rounded): `_tie_break` weighs the patterns by these names, and in MiB they
    keep its choice among equally good placements what it was before host memory was counted in tenths."""
    return "+".join(f"{gpus}" + (f"h{round(host / 10 * 1024)}" if host else "") for gpus, host in pattern)


@dataclass
class _Model:
    """The placement model: a literal per option, and node-pattern counts per pool."""

    model: cp_model.CpModel
    chosen: list[cp_model.IntVar]
    pattern_counts: dict[tuple[int, tuple[Footprint, ...]], cp_model.IntVar]


def build_placement_model(fleet: Fleet, options: list[Option], every_job: bool) -> _Model:
    """Choose at most one option per job (exactly one with `every_job`) so that every pool has room."""
    model = LeanCpModel()
    model.name = "place jobs"
    chosen = [model.new_bool_var(f"way_{option_name(fleet, o)}") for o in options]
    by_job: dict[int, list[cp_model.IntVar]] = defaultdict(list)
    for option, literal in zip(options, chosen):
        by_job[option.job].append(literal)
    for job in range(len(fleet.jobs)):
        literals = by_job.get(job, [])
        if every_job:
            model.add_exactly_one(literals)
        else:
            model.add_at_most_one(literals)
    pattern_counts = {}
    for pool_index, pool in enumerate(fleet.pools):
        here = [(o, x) for o, x in zip(options, chosen) if o.pool == pool_index]
        footprints = {o.footprint for o, _ in here if o.size}
        for pattern in patterns(footprints, pool.gpus_per_node, host_capacity_tenths(pool)):
            pattern_counts[(pool_index, pattern)] = model.new_int_var(
                0, pool.nodes, f"pool{pool_index}_nodes_filled_{pattern_name(pattern)}")
        filled = [count for (p, _), count in pattern_counts.items() if p == pool_index]
        whole = [o.whole_nodes * x for o, x in here if o.whole_nodes]
        model.add(sum(filled) + sum(whole) <= pool.nodes)
        for footprint in footprints:
            slots = [pattern.count(footprint) * count for (p, pattern), count in pattern_counts.items()
                     if p == pool_index and footprint in pattern]
            model.add(sum(x for o, x in here if o.size and o.footprint == footprint) <= sum(slots))
    return _Model(model=model, chosen=chosen, pattern_counts=pattern_counts)


class _ProgressCallback(cp_model.CpSolverSolutionCallback):
    """Reports each better placement of a stage to `report` (`Progress`), its bound through `bounded`."""

    def __init__(self, stage: str, report: Progress, started: float, bounded: Callable[[int], int]) -> None:
        super().__init__()
        self.stage, self.report, self.started, self.bounded = stage, report, started, bounded

    def on_solution_callback(self) -> None:
        self.report(self.stage, self.objective_value, self.bounded(round(self.best_objective_bound)),
                    time.monotonic() - self.started)


def place(
    fleet: Fleet,
    catalog: Catalog,
    *,
    minimize: Literal["nodes"] | None = None,
    weights: Weights | None = None,
    time_limit_s: float = 10.0,
    workers: int = 1,
    seed: int = 0,
    progress: Progress | None = None,
    estimate: EstimateMode = "auto",
    memory: MemoryModel | None = None,
    margin: float | None = None,
    token_budget: TokenBudgetMode = "default",
    widen: bool = True,
) -> ClusterResult:
    """Place `fleet`'s jobs on its pools (see the module's docstring for the model and objectives);
    `estimate`, `memory`, `margin` and `token_budget` as in `solve` ("never": the tables' plans alone);
    `widen`: let placed jobs grow onto idle GPUs of their nodes where that makes them faster or longer."""
    started = time.monotonic()
    check_token_budget(token_budget, estimate)
    planner = _Planner(catalog.for_fleet(fleet), weights if weights is not None else load_weights(),
                       estimate, time_limit_s, memory, margin, token_budget)
    every_job = minimize == "nodes"
    planned, stuck, unplaced = _plan_jobs(planner, fleet, every_job, started)
    if every_job and stuck:  # all or none: the other jobs are not placed either, and say why
        return _none_placed(planned, stuck, unplaced)
    options = planned.options
    built = build_placement_model(fleet, options, every_job)
    stages = _stages(fleet, options, built, every_job)
    search = _greedy_start(fleet, options, built)
    solver = _placement_solver(workers, seed)
    # Leave time to read the answer back and to say why the jobs left out are.
    deadline = started + time_limit_s * 0.97 - 0.02 - _time_for_reasons(fleet, options, planned.planning_s)
    with _StopOnInterrupt(solver) as interrupt:
        first_failed = _solve_stages(search, built, stages, interrupt, deadline,
                                     partial(_trivially_bounded, fleet=fleet, options=options, every_job=every_job),
                                     None if progress is None else partial(_ProgressCallback, report=progress,
                                                                           started=started))
        # No first solution: the greedy placement (still the search's) stands in, unless it is empty, CP-SAT proved
        # that none exists, or every job must be placed.
        if first_failed is not None and not (first_failed != cp_model.INFEASIBLE and any(search.values)
                                             and not every_job):
            return _no_placement_result(planned, first_failed, interrupt, deadline)
    if first_failed is not None:  # out of time before a first solution: the greedy placement stands
        search.proven = False
        search.objective = sum(fleet.jobs[o.job].priority for o, value in zip(options, search.values) if value)
    widen_by = started + time_limit_s if widen and not interrupt.caught else None
    return _placed_result(planned, search, planner, widen_by, interrupt.caught, seed)


def _plan_jobs(planner: _Planner, fleet: Fleet, every_job: bool,
               started: float) -> tuple[_Planned, list[int], tuple[Unplaced, ...]]:
    """What the placement search starts from (`_Planned`, placing since `started`), with the jobs that have no way to
    run (`stuck`, indexes) and why (`Unplaced`): asked now, so that the time it takes counts against the limit."""
    options, host_rounded = host_footprints(fleet, [option for index in range(len(fleet.jobs))
                                                    for option in job_options(planner, fleet, index)])
    stuck = _without_ways(fleet, options)
    unplaced = tuple(_no_way_to_run(fleet.jobs[i], _why_no_option(planner, fleet, i)) for i in stuck)
    planned = _Planned(fleet=fleet, options=options, every_job=every_job, host_rounded=host_rounded,
                       no_way=tuple(fleet.jobs[i].name for i in stuck), undecided=planner.undecided, started=started,
                       planning_s=time.monotonic() - started)
    return planned, stuck, unplaced


def _placement_solver(workers: int, seed: int) -> cp_model.CpSolver:
    """The placement's CP-SAT solver (`new_cp_solver`: Ctrl-C is left to `_StopOnInterrupt`), relaxing every
    constraint: the LP relaxation of all of them, not only the linear ones, closes the pattern counts' bounds within a
    second where the default level took the whole time limit (host memory, few nodes; benchmarks/README.md)."""
    solver = new_cp_solver(workers, seed)
    solver.parameters.linearization_level = 2
    return solver


@dataclass(frozen=True)
class _Planned:
    """What the placement search starts from, worked out before it: every job's ways (`options`), whether every job
    must be placed (`every_job`: ``--minimize nodes``), the pools whose host memory the ways rounded up, the jobs
    with no way at all (`no_way`, their names), how many of the planner's solves behind the ways ran out of time
    (`undecided`; widening's own questions leave the placement as it is), when placing `started`
    (`time.monotonic`) and the seconds planning took."""

    fleet: Fleet
    options: list[Option]
    every_job: bool
    host_rounded: tuple[str, ...]
    no_way: tuple[str, ...]
    undecided: int
    started: float
    planning_s: float

    @property
    def counted_by(self) -> PlacementCount:
        """What the first stage counts: the nodes used where every job must be placed, else the placed priority."""
        return "nodes" if self.every_job else "priority"


def _greedy_start(fleet: Fleet, options: list[Option], built: _Model) -> _Search:
    """The search's start: a greedy placement, hinted to CP-SAT (which never returns less); it stands if time runs
    out before a first solution."""
    values, counts = _as_model_values(built, _greedy_choice(fleet, options, smallest_first=True), options, fleet)
    _hint(built, values, counts)
    return _Search(values=values, counts=counts)


def _placed_result(planned: _Planned, search: _Search, planner: _Planner, widen_by: float | None, interrupted: bool,
                   seed: int) -> ClusterResult:
    """The answer of the search's placement: the chosen ways on their nodes, grown onto idle GPUs of their nodes
    until `widen_by` (None: not grown; Ctrl-C while growing leaves the placement as placed)."""
    fleet, options, values, counts = planned.fleet, planned.options, search.values, search.counts
    first_proven = search.bound is not None and search.objective == search.bound  # no placement holds more priority
    try:
        placements, unplaced = _decode(fleet, options, values, counts, planner, widen_by, first_proven, seed)
    except KeyboardInterrupt:  # Ctrl-C while widening: the placement stands, as placed
        interrupted = True
        placements, unplaced = _decode(fleet, options, values, counts, planner, None, first_proven)
    proven = search.proven and not planned.host_rounded and not planned.undecided
    return ClusterResult(status="optimal" if proven else "feasible", objective=search.objective, bound=search.bound,
                         objective_counts=planned.counted_by, placements=placements, unplaced=unplaced,
                         no_way_to_run=planned.no_way, pools=pool_use(fleet, placements),
                         host_rounded=planned.host_rounded, undecided_ways=planned.undecided,
                         tie_broken=search.tie_broken, wall_time_s=time.monotonic() - planned.started,
                         planning_s=planned.planning_s, interrupted=interrupted)


def _no_placement_result(planned: _Planned, failed: cp_model.CpSolverStatus, interrupt: _StopOnInterrupt,
                         deadline: float) -> ClusterResult:
    """The answer where the search's first stage found no placement (its CP-SAT status `failed`) and no greedy one
    stands in: infeasible where CP-SAT proved it, unless the host memory of the pools `planned.host_rounded` was
    rounded up (and the jobs are not proved not to fit with it left out) or some of the jobs' ways were left out
    (`planned.undecided`); unknown otherwise (time ran out, or Ctrl-C came first). Every job is left out, for that
    reason."""
    fleet, host_rounded = planned.fleet, planned.host_rounded
    # With host memory rounded, no placement of the rounded needs proves nothing, unless the jobs do not
    # fit even with host memory left out.
    rounded_only = failed == cp_model.INFEASIBLE and bool(host_rounded) and not _infeasible_without_host(
        fleet, planned.options, planned.every_job, interrupt.solver, deadline)
    proved = failed == cp_model.INFEASIBLE and not rounded_only and not planned.undecided
    verdict: Status = "infeasible" if proved else "unknown"
    return ClusterResult(status=verdict, objective=None, bound=None, objective_counts=planned.counted_by,
                         placements=(), pools=pool_use(fleet, ()),
                         unplaced=_all_unplaced(fleet, verdict, interrupt.caught,
                                                host_rounded if rounded_only else (), planned.options),
                         no_way_to_run=planned.no_way, host_rounded=host_rounded, undecided_ways=planned.undecided,
                         wall_time_s=time.monotonic() - planned.started, interrupted=interrupt.caught)


def _none_placed(planned: _Planned, stuck: list[int], unplaced: tuple[Unplaced, ...]) -> ClusterResult:
    """The answer of ``--minimize nodes`` (every job or none) where the jobs `stuck` (indexes) fit nowhere, as
    `unplaced` says: the other jobs are not placed either, for that reason."""
    fleet, names = planned.fleet, ", ".join(planned.no_way)
    fit = "fits" if len(stuck) == 1 else "fit"
    others = tuple(Unplaced(job=job.name, reason=f"--minimize nodes places every job or none, and {names} {fit} "
                                                 "nowhere", reason_code=UnplacedCode.ANOTHER_JOB_FITS_NOWHERE)
                   for i, job in enumerate(fleet.jobs) if i not in stuck)
    return ClusterResult(status="unknown" if planned.undecided else "infeasible", objective=None, bound=None,
                         objective_counts="nodes", placements=(), unplaced=unplaced + others,
                         no_way_to_run=planned.no_way, pools=pool_use(fleet, ()),
                         undecided_ways=planned.undecided, wall_time_s=time.monotonic() - planned.started)


def _stages(fleet: Fleet, options: list[Option], built: _Model,
            every_job: bool) -> list[tuple[str, cp_model.LinearExprT, bool]]:
    """The objectives `_solve_stages` solves in turn, as (name, expression, maximise): the total priority of the
    placed jobs (with `every_job`, the fewest nodes used instead), the length the ``at_least`` jobs gain, the
    least total cost, and last a tie-break."""
    nodes_used = sum(built.pattern_counts.values()) + sum(
        o.whole_nodes * x for o, x in zip(options, built.chosen) if o.whole_nodes)
    priority = sum(fleet.jobs[o.job].priority * x for o, x in zip(options, built.chosen))
    gain = sum(o.gain * x for o, x in zip(options, built.chosen) if o.gain)
    cost = sum(o.cost * x for o, x in zip(options, built.chosen))
    first_stage = ("nodes", nodes_used, False) if every_job else ("priority", priority, True)
    return [first_stage, ("length", gain, True), ("cost", cost, False),
            ("tie-break", _tie_break(fleet, options, built), False)]


def _time_for_reasons(fleet: Fleet, options: list[Option], planning_s: float) -> float:
    """Seconds the search leaves for the reasons of the jobs it leaves out (`REASONS_SHARE` of `planning_s`, the
    time their ways took): none where every job with a way has one in every pool it may use (a job left out then
    has no pool to ask the planner about)."""
    with_ways: dict[int, set[int]] = defaultdict(set)
    for option in options:
        with_ways[option.job].add(option.pool)
    lacking = any(len(pools) < sum(map(fleet.jobs[job].may_use, fleet.pools))
                  for job, pools in with_ways.items())
    return REASONS_SHARE * planning_s if lacking else 0.0


@dataclass
class _Search:
    """The staged search's placement so far (the options' values and the pattern counts), the first stage's
    objective and bound, whether every stage solved so far is proven, and whether the tie-break proved its pick."""

    values: list[int]
    counts: dict[tuple[int, tuple[Footprint, ...]], int]
    objective: int | None = None
    bound: int | None = None
    proven: bool = True
    tie_broken: bool = False
    """Whether the tie-break ran and proved its pick among the equally good placements."""


def _solve_stages(search: _Search, built: _Model, stages: list[tuple[str, cp_model.LinearExprT, bool]],
                  interrupt: _StopOnInterrupt, deadline: float, first_bound: Callable[[int], int],
                  progress: Callable[..., _ProgressCallback] | None) -> cp_model.CpSolverStatus | None:
    """Solve the `stages` (name, expression, maximise) one after the other with `interrupt`'s solver within
    `deadline`, each keeping the value the one before it reached and starting from its answer (the first from
    `search`'s, a greedy placement), into `search`; the first stage gets 60% of the time left, the second half of
    what is left then, the rest the rest. Returns the first stage's CP-SAT status where it found no placement (else
    None); a later stage left unsolved keeps the previous stage's answer. The tie-break is solved only where every
    stage before it is proven."""
    model, solver = built.model, interrupt.solver
    for position, (name, expression, maximise) in enumerate(stages):
        if interrupt.caught or (name == "tie-break" and not search.proven):
            search.proven = search.proven and not interrupt.caught
            return None
        left = deadline - time.monotonic()
        solver.parameters.max_time_in_seconds = max(left * (0.6 if position == 0 else 0.5 if position == 1 else 1.0),
                                                    0.01)
        (model.maximize if maximise else model.minimize)(expression)
        callback = None if progress is None else progress(STAGES[name], bounded=first_bound if position == 0 else int)
        status = checked(solver, model, interrupt.solve(model, callback))
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            if position == 0:
                return status
            search.proven = search.proven and name == "tie-break"  # a stage left unsolved proves nothing
            return None  # the previous stage's answer stands (its hint is still in the model)
        if name != "tie-break":
            search.proven = search.proven and status == cp_model.OPTIMAL and not interrupt.caught
        else:  # its outcome leaves the status as it is: only which of the equally good placements comes out
            search.tie_broken = status == cp_model.OPTIMAL  # proven, even where Ctrl-C came as it ended
        search.values = [solver.value(x) for x in built.chosen]
        search.counts = {key: solver.value(var) for key, var in built.pattern_counts.items()}
        if position == 0:
            search.objective = round(solver.objective_value)
            search.bound = first_bound(round(solver.best_objective_bound))
        reached = round(solver.objective_value)
        model.add(expression >= reached if maximise else expression <= reached)
        _hint(built, search.values, search.counts)
    return None


class _StopOnInterrupt:
    """While solving, Ctrl-C (SIGINT) stops the search and keeps the best placement found so far; a process that
    ignores Ctrl-C (a job a script starts in the background) keeps ignoring it."""

    def __init__(self, solver: cp_model.CpSolver) -> None:
        self.solver = solver
        self.caught = False
        self.previous: object = None

    def _stop(self, signum: int, frame: object) -> None:
        self.caught = True
        self.solver.stop_search()

    def solve(self, model: cp_model.CpModel, callback: cp_model.CpSolverSolutionCallback | None
              ) -> cp_model.CpSolverStatus:
        """Solve in a worker thread, so that this (main) thread stays free to take Ctrl-C; what the worker
        raises is raised here. What a signal's handler raises here while it waits (KeyboardInterrupt where Ctrl-C is
        not ours to catch, or a request to end) stops the search, which ends before it is raised: a search left
        running would abort the process as it exits."""
        outcome: list[cp_model.CpSolverStatus] = []
        failure: list[BaseException] = []
        finished = threading.Event()  # not the thread's join, which an exception can leave taking it for ended

        def work() -> None:
            try:
                outcome.append(self.solver.solve(model, callback))
            except BaseException as error:  # noqa: BLE001 - handed to the main thread, which raises it
                failure.append(error)
            finally:
                finished.set()

        try:
            threading.Thread(target=work, daemon=True).start()
            while not finished.wait(0.05):
                if self.caught:  # again, in case the search had not started when Ctrl-C came
                    self.solver.stop_search()
        except BaseException:
            ends_by = time.monotonic() + self.solver.parameters.max_time_in_seconds  # had the worker not started
            while not finished.is_set() and time.monotonic() < ends_by:  # a stop as the search starts is lost: again
                self.solver.stop_search()
                finished.wait(0.05)
            raise
        if failure:
            raise failure[0]
        return outcome[0]

    def __enter__(self) -> _StopOnInterrupt:
        # Only in the main thread (the only one Python lets set a handler), only over a handler Python can put back
        # (a host program's own, None from Python, keeps Ctrl-C), and not over an ignored one (a script's background
        # job keeps ignoring it).
        in_main_thread = threading.current_thread() is threading.main_thread()
        if in_main_thread and signal.getsignal(signal.SIGINT) not in (None, signal.SIG_IGN):
            self.previous = signal.signal(signal.SIGINT, self._stop)
        return self

    def __exit__(self, *_: object) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)  # type: ignore[arg-type]


def _decode(
    fleet: Fleet, options: list[Option], values: list[int], counts: dict[tuple[int, tuple[Footprint, ...]], int],
    planner: _Planner, widen_by: float | None, proven: bool = True, seed: int = 0,
) -> tuple[tuple[Placement, ...], tuple[Unplaced, ...]]:
    """The chosen options on their nodes (`_node_indexes`), the jobs of a node with idle GPUs grown onto them
    (`_widen`, with CP-SAT's `seed`, its solves ending by `widen_by`, a `time.monotonic()`; None: no widening);
    and why the others are left out. `proven`: whether the placed priority is proven the most (the unplaced jobs'
    reasons say so otherwise)."""
    chosen = {o.job: o for o, value in zip(options, values) if value}
    nodes = _node_indexes(fleet, chosen, counts)
    placed = dict(chosen)
    if widen_by is not None:
        placed.update(_widen(planner, fleet, chosen, nodes, seed, widen_by))
    first_gpu = _first_gpus((job, option, nodes[job][0]) for job, option in sorted(placed.items()))
    placements = tuple(_placement(planner, fleet, placed[job], nodes[job], first_gpu[job],
                                  widened_from=chosen[job].plan.gpus if placed[job] is not chosen[job] else None)
                       for job in sorted(placed))
    return placements, _unplaced(planner, fleet, options, set(chosen), proven)


def _node_indexes(fleet: Fleet, chosen: dict[int, Option],
                  counts: dict[tuple[int, tuple[Footprint, ...]], int]) -> dict[int, list[int]]:
    """The nodes of its pool each chosen option (job -> option) takes: whole-node jobs first, then the nodes that
    the chosen patterns (`counts`) fill, in order."""
    nodes: dict[int, list[int]] = {}
    for pool_index in range(len(fleet.pools)):
        here = sorted((o for o in chosen.values() if o.pool == pool_index), key=lambda o: o.job)
        next_node = 0
        for option in (o for o in here if o.whole_nodes):
            nodes[option.job] = list(range(next_node, next_node + option.whole_nodes))
            next_node += option.whole_nodes
        waiting: dict[Footprint, deque[Option]] = defaultdict(deque)
        for option in (o for o in here if o.size):
            waiting[option.footprint].append(option)
        for (p, pattern), count in sorted(counts.items()):
            if p != pool_index:
                continue
            for _ in range(count):
                filled = False
                for footprint in pattern:
                    if waiting[footprint]:
                        nodes[waiting[footprint].popleft().job], filled = [next_node], True
                next_node += filled
    return nodes


def _first_gpus(in_order: Iterable[tuple[int, Option, int]]) -> dict[int, int]:
    """Where each job's GPUs start on its first node, given (job, option, first node) in the order a shared node
    fills from GPU 0; 0 for a job on whole nodes."""
    first_gpu: dict[int, int] = {}
    used: Counter[tuple[int, int]] = Counter()
    for job, option, node in in_order:
        first_gpu[job] = used[option.pool, node] if option.size else 0
        used[option.pool, node] += option.size
    return first_gpu


WIDEN_TIME_LIMIT_S = 1.0
"""The limit of each of `_widen`'s solves (a few milliseconds each, in practice)."""
WIDEN_LEAST_S = 0.05
"""The time each of `_widen`'s solves is given where the placement's time limit has passed (the previous stage's
answer stands where it runs out)."""


def _widening_counts(catalog: Catalog, pool: Pool) -> set[int]:
    """The trainer GPU counts a job may grow to on a node of `pool`: the counts the tables of its GPU type measured,
    and powers of two. verl splits each batch evenly over a trainer's data-parallel ranks (its GPUs over SP), so
    a count the user never chose, such as 7, would break the batch sizes they run with; these are the usual ones."""
    measured = catalog.tabled_counts(pool.gpu)
    return measured | {1 << power for power in range(pool.gpus_per_node.bit_length())}


def _widen(planner: _Planner, fleet: Fleet, chosen: dict[int, Option], nodes: dict[int, list[int]], seed: int,
           until: float) -> dict[int, Option]:
    """The jobs that grow onto idle GPUs of the node they share, and their new ways (job -> option).

    A job on a node with idle GPUs may take more trainer GPUs there (`_widening_counts`), where the planner has a
    plan for that many on the same evidence (the tables' alone, unless its plan is already an estimate) with a layout on
    the node. CP-SAT picks each such job's way, its own or a wider one, so that the node's GPUs and host
    memory hold them: the most length gained by ``at_least`` jobs, then the least step-time cost, then
    the fewest GPUs (one worker, so the answer is the same whatever ``--workers`` is). Each solve ends within
    `WIDEN_TIME_LIMIT_S` and by `until` (a `time.monotonic()`: the placement's time limit), given at least
    `WIDEN_LEAST_S`."""
    model, ways = _widening_model(planner, fleet, chosen, nodes)
    if len(ways) == len({o.job for o, _ in ways}):  # no job has a wider way
        return {}
    picked = [o for o, _ in ways if o is chosen[o.job]]
    for o, x in ways:
        model.add_hint(x, o is chosen[o.job])
    solver = new_cp_solver(1, seed)  # Ctrl-C raises KeyboardInterrupt: `place` keeps the placement
    for expression, maximise in ((sum(o.gain * x for o, x in ways), True), (sum(o.cost * x for o, x in ways), False),
                                 (sum(o.size * x for o, x in ways), False)):
        (model.maximize if maximise else model.minimize)(expression)
        solver.parameters.max_time_in_seconds = max(min(WIDEN_TIME_LIMIT_S, until - time.monotonic()), WIDEN_LEAST_S)
        if checked(solver, model, solver.solve(model)) not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            break  # out of time: the previous stage's answer stands
        picked = [o for o, x in ways if solver.value(x)]
        reached = round(solver.objective_value)
        model.add(expression >= reached if maximise else expression <= reached)
        model.clear_hints()
        for _, x in ways:
            model.add_hint(x, solver.value(x))
    return {o.job: o for o in picked if o is not chosen[o.job]}


def _widening_model(planner: _Planner, fleet: Fleet, chosen: dict[int, Option],
                    nodes: dict[int, list[int]]) -> tuple[cp_model.CpModel, list[tuple[Option, cp_model.IntVar]]]:
    """`_widen`'s model: for each job on a node with idle GPUs, one literal per way (its own, and each wider one the
    planner has), exactly one of them chosen, within the node's GPUs and host memory; and those (way, literal)."""
    by_node: dict[tuple[int, int], list[Option]] = defaultdict(list)
    for job, option in sorted(chosen.items()):
        if option.size:
            by_node[option.pool, nodes[job][0]].append(option)
    model = LeanCpModel()
    model.name = "widen jobs onto idle GPUs"
    ways: list[tuple[Option, cp_model.IntVar]] = []
    for (pool_index, node), here in sorted(by_node.items()):
        pool = fleet.pools[pool_index]
        idle = pool.gpus_per_node - sum(option.size for option in here)
        if not idle:
            continue
        capacity = host_capacity_tenths(pool)
        grow_to = _widening_counts(planner.catalog, pool)
        on_node: list[tuple[Option, cp_model.IntVar]] = []
        for option in here:
            evidence = planner.estimate if option.plan.evidence == "estimated" else "never"
            wider = [n for n in range(option.plan.gpus + 1, option.plan.gpus + idle + 1) if n in grow_to]
            candidates = [option, *_ways(planner, fleet, option.job, pool_index, wider, evidence)]
            literals = [model.new_bool_var(f"pool{pool_index}_node{node}_{option_name(fleet, o)}") for o in candidates]
            model.add_exactly_one(literals)
            on_node += zip(candidates, literals)
        model.add(sum(o.size * x for o, x in on_node) <= pool.gpus_per_node)
        if capacity is not None:
            model.add(sum(planner.host_tenths(fleet.jobs[o.job].model, o.plan.gpus, o.plan.offload) * x
                          for o, x in on_node) <= capacity)
        ways += on_node
    return model, ways


def _placement(planner: _Planner, fleet: Fleet, option: Option, nodes: list[int], first_gpu: int,
               widened_from: int | None = None) -> Placement:
    """A chosen option on its nodes, its GPUs on a shared node starting at `first_gpu` (a whole node: all), and,
    in a pool that checks it, the host memory it needs per node; `widened_from`: the trainer GPUs it was placed
    with, where it grew onto idle GPUs of its node."""
    job, pool = fleet.jobs[option.job], fleet.pools[option.pool]
    model, asked = planner.catalog.model(job.model), job.max_model_len
    host = None if pool.host_ram_gb is None else shown_host_need(
        model, option.plan.gpus, pool.gpus_per_node, option.plan.offload)
    engines = rollout_engines(model, planner.catalog.gpu(pool.gpu).memory_gib, option.rollout_gpus,
                              option.plan.max_model_len, pool.gpus_per_node).size if option.rollout_gpus else None
    return Placement(job=job.name, pool=pool.name, model=job.model, gpu=pool.gpu, nodes=tuple(nodes),
                     gpu_indexes=tuple(range(first_gpu, first_gpu + option.gpus_per_node(pool.gpus_per_node))),
                     trainer_gpus=option.plan.gpus, rollout_gpus=option.rollout_gpus,
                     asked_rollout_gpus=job.rollout_gpus, widened_from=widened_from,
                     asked_max_model_len=asked.at_least if isinstance(asked, AtLeast) else asked,
                     at_least=isinstance(asked, AtLeast),
                     plan=option.plan.model_copy(update={"nodes": len(nodes), "rollout_gpus": option.rollout_gpus}),
                     host_memory_gb=host, rollout_engine_size=engines)


def _unplaced(planner: _Planner, fleet: Fleet, options: list[Option], placed: set[int],
              proven: bool = True) -> tuple[Unplaced, ...]:
    """Why each job left out is: no room where it could go (as far as the search got, unless `proven`: the
    placed priority is its bound), and why the other pools it may use have no plan for it; or no plan that
    fits any pool it may use."""
    unproven = "" if proven else (" as far as the search got: the placement is not proven best within the time "
                                  "limit (raise --time-limit)")
    pools: dict[int, dict[str, list[Option]]] = defaultdict(lambda: defaultdict(list))
    host_checked: dict[int, bool] = defaultdict(bool)
    for option in options:
        pools[option.job][fleet.pools[option.pool].name].append(option)
        host_checked[option.job] |= option.host_tenths > 0
    no_room, pool_room = ((UnplacedCode.NO_ROOM, PoolCode.NO_ROOM) if proven
                          else (UnplacedCode.NO_ROOM_UNPROVEN, PoolCode.NO_ROOM_UNPROVEN))
    unplaced = []
    for index, job in enumerate(fleet.jobs):
        if index in placed:
            continue
        if not pools[index]:
            unplaced.append(_no_way_to_run(job, _why_no_option(planner, fleet, index)))
            continue
        elsewhere = _elsewhere(planner, fleet, index, frozenset(pools[index]))
        unplaced.append(Unplaced(
            job=job.name, reason_code=no_room,
            reason=(f"no room{' (GPUs or host memory)' if host_checked[index] else ''} left in "
                    f"{_least_rooms(planner, job, pools[index])} after the jobs placed (the most priority in all, "
                    f"then length, then cost){unproven}{'; ' if elsewhere.words else ''}{elsewhere.words}"),
            pools=(*(UnplacedPool(pool=name, reason_code=pool_room) for name in pools[index]), *elsewhere.pools)))
    return tuple(unplaced)


def _no_way_to_run(job: Job, why: _Why) -> Unplaced:
    """A job left out for want of a way to run in any pool it may use, and `why`."""
    return Unplaced(job=job.name, reason=why.words, reason_code=UnplacedCode.NO_WAY_TO_RUN, pools=why.pools)


def _least_rooms(planner: _Planner, job: Job, ways: dict[str, list[Option]]) -> str:
    """The pools a job has `ways` in (keyed by pool name, in the fleet's order), each with the least its ways there
    take, in words: the fewest GPUs of one node (where the pool's host memory could run short, each (GPUs, host
    memory) of a way that no other way needs less of both: an Offload way may take fewer GPUs and more host memory),
    or the fewest whole nodes."""
    rooms = []
    for name, options in ways.items():
        shared = [option for option in options if option.size]
        if not shared:
            rooms.append(f"{name} (it needs at least {min(option.whole_nodes for option in options)} whole nodes)")
            continue
        if not any(option.host_tenths for option in shared):
            rooms.append(f"{name} (it needs at least {counted(min(option.size for option in shared), 'GPU')} of one "
                         "node)")
            continue
        least: list[tuple[int, int]] = []  # by GPUs, each with less host memory than the ways of fewer GPUs
        own_footprints = {(option.size, planner.host_tenths(job.model, option.plan.gpus, option.plan.offload))
                          for option in shared}
        for gpus, tenths in sorted(own_footprints):
            if not least or tenths < least[-1][1]:
                least.append((gpus, tenths))
        needs = [f"{counted(gpus, 'GPU')} and {tenths / 10:.1f} GiB" for gpus, tenths in least]
        rooms.append(f"{name} (it needs at least {needs[0]} of host memory{''.join(f', or {n}' for n in needs[1:])}"
                     f"{',' if len(needs) > 1 else ''} on one node)")
    return ", ".join(rooms)


@dataclass(frozen=True)
class _Why:
    """Why a job has no way to run in the pools it may use: in words, and each pool's code in the order the words
    name them."""

    words: str
    pools: tuple[UnplacedPool, ...] = ()


def _elsewhere(planner: _Planner, fleet: Fleet, index: int, with_room: frozenset[str]) -> _Why:
    """For a job with ways to run in the pools named `with_room` (none of them left): why each other pool it may
    use has none (no words where there is no other)."""
    job = fleet.jobs[index]
    others = [pool.name for pool in fleet.pools if job.may_use(pool) and pool.name not in with_room]
    return _why_no_option(planner, fleet, index, with_room) if others else _Why("")


def _why_no_option(planner: _Planner, fleet: Fleet, index: int, without: frozenset[str] = frozenset()) -> _Why:
    """Why a job has no plan with a layout in any pool it may use but those named `without` (asked once per job
    shape)."""
    job = fleet.jobs[index]
    shape = (job.model, job.max_model_len, job.rollout_gpus, job.train_batch_size, job.pool, without)
    if shape not in planner.reasons:
        planner.reasons[shape] = _reasons(planner, fleet, index, without)
    return planner.reasons[shape]


def _reasons(planner: _Planner, fleet: Fleet, index: int, without: frozenset[str]) -> _Why:
    """Why job `index` has no way to run in each pool it may use but those named `without`, asked of the planner:
    a rollout that leaves no trainer GPU, a trainer count with no layout beside the rollout, or the planner's own
    reason (with what estimates would give, under ``--no-estimate``), joined by semicolons, each with its code."""
    job = fleet.jobs[index]
    reasons = []
    codes = []
    rollout = counted(job.rollout_gpus, "rollout GPU")
    for pool in fleet.pools:
        if not job.may_use(pool) or pool.name in without:
            continue
        pool_gpus = pool.nodes * pool.gpus_per_node
        trainer_room = pool_gpus - job.rollout_gpus
        if trainer_room < 1:
            taken = "take all" if trainer_room == 0 else "are more than"
            reasons.append(f"{pool.name}: the job's {rollout} {taken} the pool's {counted(pool_gpus, 'GPU')}, leaving "
                           "none for a trainer")
            codes.append(UnplacedPool(pool=pool.name, reason_code=PoolCode.ROLLOUT_TAKES_POOL))
            continue
        asked = job.max_model_len
        length = asked.at_least if isinstance(asked, AtLeast) else asked
        query = planner.question(pool.gpu, job.model, pool.gpus_per_node, planner.estimate, pool.host_ram_gb,
                                 job.train_batch_size, max_model_len=length, objective="min_gpus",
                                 budget_gpus=min(pool_gpus, MAX_ESTIMATED_GPUS))
        answer = answer_for(planner.catalog, query, pool.gpu)
        if answer.plans:
            layouts = _limits_words(planner, query, pool, job.rollout_gpus)
            reasons.append(f"{pool.name}: with {rollout}, no trainer GPU count that trains it ({answer.plans[0].gpus} "
                           f"at the fewest) has a layout on its {counted(pool.nodes, 'node')} of {pool.gpus_per_node} "
                           f"GPUs{layouts}")
            codes.append(UnplacedPool(pool=pool.name, reason_code=PoolCode.NO_LAYOUT_BESIDE_ROLLOUT))
        else:
            # With a rollout: what the trainer reaches on the GPUs it leaves (the whole pool may reach more, or name a
            # way with no room beside the rollout), said as such where that differs.
            where = pool.name
            if job.rollout_gpus:
                query = query.model_copy(update={"budget_gpus": min(trainer_room, MAX_ESTIMATED_GPUS),
                                                 "rollout_gpus": job.rollout_gpus})
                if (beside := answer_for(planner.catalog, query, pool.gpu)).reason != answer.reason:
                    where = f"{pool.name} (up to {trainer_room} of its GPUs for the trainer, beside {rollout})"
                    answer = beside
            reasons.append(f"{where}: {answer.reason}"
                           f"{_estimates_would(planner, query, pool, job.rollout_gpus, answer.limits_named)}")
            codes.append(UnplacedPool(pool=pool.name, reason_code=PoolCode.NO_PLAN,
                                      plan_reason_code=answer.reason_code))
    return _Why("; ".join(reasons) or "no pool it may use", tuple(codes))


def _beside(trainer_gpus: int, rollout_gpus: int, pool: Pool) -> bool:
    """Whether a trainer of `trainer_gpus` GPUs has a layout beside `rollout_gpus` on the pool's nodes."""
    room = layout(trainer_gpus, rollout_gpus, pool.gpus_per_node)
    return room is not None and room[1] <= pool.nodes


def _estimates_would(planner: _Planner, query: Query, pool: Pool, rollout_gpus: int, limits_named: bool) -> str:
    """With estimates off (``--no-estimate``): the plan the memory model's estimates give the job's model and length
    on the fewest GPUs of the pool that leave its `rollout_gpus` a layout there, in words, where they give one; else,
    where the pool's host memory rules theirs out and the tables' too (a plan of the tables on nodes with more of it
    is the reason's to name), the one they would give without it and the host memory it needs, with the least host
    memory one of theirs beside the rollout needs, where that is less ("" otherwise): in parentheses after the
    planner's reason, or, where that named the pool's host memory in full already among its limits (`limits_named`;
    it may end in their parentheses), in a clause after a semicolon, as the reason's own, that does not name the
    figure again."""
    if planner.estimate != "never":
        return ""
    (opening, closing) = ("; ", "") if limits_named else (" (", ")")
    if plan := _way_without(planner, query, pool, rollout_gpus, estimate="auto"):
        return f"{opening}{estimated_plan_words(plan)}: drop --no-estimate{closing}"
    if pool.host_ram_gb is None or _way_without(planner, query, pool, rollout_gpus, host_ram_gb=None):
        return ""
    if plan := _way_without(planner, query, pool, rollout_gpus, estimate="auto", host_ram_gb=None):
        lifted = query.model_copy(update={"estimate": "auto", "host_ram_gb": None, "rollout_gpus": rollout_gpus})
        least = least_host_words(planner.catalog, lifted, plan, pool.gpu)
        bound = "the pool's nodes have" if limits_named else query.host_ram_bound_words
        return (f"{opening}{estimated_plan_words(plan)}, but {_host_over_pool_words(planner, query, plan, bound)}"
                f"{least}{closing}")
    return ""


def _host_over_pool_words(planner: _Planner, query: Query, plan: Plan, bound: str) -> str:
    """The host memory a plan of `query`'s model needs per node, more than its pool's (`bound`, the pool's host memory
    in words: `Query.host_ram_bound_words`, or what its nodes have), in words."""
    return host_over_words(planner.catalog.model(query.model), plan, query.node_gpus, bound)


def _limits_words(planner: _Planner, query: Query, pool: Pool, rollout_gpus: int) -> str:
    """For a job whose trainer has no layout beside its `rollout_gpus` on the pool's nodes: where the pool's host
    memory, or the job's train batch, is what rules out the counts that would have one, the fewest that would train
    the job without it, and the host memory they need (with Offload, or while the model loads) or the rule their
    data-parallel ranks break, in words ("" otherwise)."""
    hints = []
    if pool.host_ram_gb is not None and (plan := _way_without(planner, query, pool, rollout_gpus, host_ram_gb=None)):
        hints.append(f"{plan.gpus} would, with {plan.setting.label}, but "
                     f"{_host_over_pool_words(planner, query, plan, query.host_ram_bound_words)}")
    if query.train_batch_size is not None and (plan := _way_without(planner, query, pool, rollout_gpus,
                                                                    train_batch_size=None)):
        broken = batch_split_violation(query.train_batch_size, plan.gpus, plan.sp, query.train_batch_source)
        hints += [f"{plan.gpus} would, with {plan.setting.label}, but {broken}"] if broken else []
    return f" ({'; '.join(hints)})" if hints else ""


def _way_without(planner: _Planner, query: Query, pool: Pool, rollout_gpus: int, **lifted: object) -> Plan | None:
    """The plan on the fewest trainer GPUs that `query` gets with a limit lifted (`lifted`: its fields set so, such
    as ``host_ram_gb=None``), beside `rollout_gpus` on the pool's nodes; None where it has none there."""
    plan = answer_for(planner.catalog, query.model_copy(update={**lifted, "rollout_gpus": rollout_gpus}), pool.gpu,
                      explained=False).best
    return plan if plan is not None and _beside(plan.gpus, rollout_gpus, pool) else None


def _trivially_bounded(bound: int, fleet: Fleet, options: list[Option], every_job: bool) -> int:
    """CP-SAT's bound on the first stage, never weaker than the obvious one: a search stopped early can
    report more priority than the jobs with a way to run have together (or fewer than no nodes)."""
    if every_job:
        return max(bound, 0)
    return min(bound, sum(fleet.jobs[job].priority for job in {option.job for option in options}))


def _infeasible_without_host(fleet: Fleet, options: list[Option], every_job: bool, solver: cp_model.CpSolver,
                             deadline: float) -> bool:
    """Whether CP-SAT proves, before `deadline`, that the jobs do not fit even with host memory left out."""
    relaxed = build_placement_model(fleet, [replace(o, host_tenths=0) for o in options], every_job).model
    solver.parameters.max_time_in_seconds = max(deadline - time.monotonic(), 0.01)
    return checked(solver, relaxed, solver.solve(relaxed)) == cp_model.INFEASIBLE


def _fewest_gpus_words(fleet: Fleet, options: Sequence[Option]) -> str:
    """What the jobs need at the least against what the fleet has, in words: the GPUs of each job's smallest
    way to run (whole nodes counted whole), summed; and what to do."""
    fewest: dict[int, int] = {}
    pools: dict[int, set[int]] = {}
    for option in options:
        gpus = option.gpus_taken(fleet.pools[option.pool].gpus_per_node)
        fewest[option.job] = min(fewest.get(option.job, gpus), gpus)
        pools.setdefault(option.job, set()).add(option.pool)
    after = "; without --minimize nodes, as many as fit are placed"
    host = any(option.host_tenths > 0 for option in options)  # a pool's host memory holds what the jobs need too
    packing = ("but their layouts, with the host memory they need on a node, do not pack into the nodes"
               if host else "but their layouts do not pack into the nodes")
    has, need = sum(pool.nodes * pool.gpus_per_node for pool in fleet.pools), sum(fewest.values())
    if need > has:
        return f": at their fewest they take {need} GPUs, more than the fleet's {has}{after}"
    tightest = None  # (share of the pool, words) of the pool its own jobs fill the most
    for index, pool in enumerate(fleet.pools if len(fleet.pools) > 1 else ()):  # the jobs only one pool can run
        bound = [job for job, where in pools.items() if where == {index}]
        bound_need, pool_has = sum(fewest[job] for job in bound), pool.nodes * pool.gpus_per_node
        named = named_jobs([fleet.jobs[job].name for job in bound])
        jobs = (f"the job only pool {pool.name} can run ({named}) takes at its fewest" if len(bound) == 1 else
                f"the {len(bound)} jobs only pool {pool.name} can run ({named}) take at their fewest")
        if bound_need > pool_has:
            return f": {jobs} {bound_need} GPUs, more than its {pool_has}{after}"
        if bound and (tightest is None or bound_need / pool_has > tightest[0]):
            tightest = (bound_need / pool_has, f": {jobs} {bound_need} of its {pool_has} GPUs, {packing}")
    if tightest is not None:
        return tightest[1] + after
    return f": at their fewest they take {need} of the fleet's {has} GPUs, {packing}{after}"


def _all_unplaced(fleet: Fleet, verdict: Status, interrupted: bool,
                  host_rounded: tuple[str, ...] = (), options: Sequence[Option] = ()) -> tuple[Unplaced, ...]:
    """Every job left out, for one reason, where the search placed none: the jobs do not fit together (`verdict`
    infeasible), Ctrl-C came first, the host memory of the pools `host_rounded` was rounded up, or time ran out."""
    code, reason = (
        (UnplacedCode.JOBS_DO_NOT_FIT_TOGETHER,
         f"the jobs do not all fit the fleet together{_fewest_gpus_words(fleet, options)}")
        if verdict == "infeasible" else
        (UnplacedCode.INTERRUPTED, "interrupted before a placement was found") if interrupted else
        (UnplacedCode.HOST_MEMORY_ROUNDED, (f"the jobs do not all fit the fleet with the host memory of "
                                            f"{', '.join(host_rounded)} rounded up; they may with the exact figures"))
        if host_rounded else
        (UnplacedCode.TIME_LIMIT, "no placement found within the time limit"))
    return tuple(Unplaced(job=job.name, reason=reason, reason_code=code) for job in fleet.jobs)


def _tie_break(fleet: Fleet, options: list[Option], built: _Model) -> cp_model.LinearExprT:
    """An objective that picks one placement among equally good ones, the same whatever the search did:
    a fixed pseudo-random weight per option and per node pattern (CRC-32 of their names) makes the
    lightest of the optimal placements unique with high probability (the isolation lemma)."""
    spread = 4 * (len(options) + len(built.pattern_counts)) ** 2

    def weight(text: str) -> int:
        return 1 + zlib.crc32(text.encode()) % spread

    chosen = [weight(option_name(fleet, o)) * x
              for o, x in zip(options, built.chosen)]
    filled = [weight(f"{fleet.pools[pool].name}|{pattern_name(pattern)}") * count for (pool, pattern), count
              in built.pattern_counts.items()]
    return sum(chosen) + sum(filled)


def _hint(built: _Model, values: list[int], counts: dict[tuple[int, tuple[Footprint, ...]], int]) -> None:
    """Start the next search from this placement."""
    built.model.clear_hints()
    for literal, value in zip(built.chosen, values):
        built.model.add_hint(literal, value)
    for key, var in built.pattern_counts.items():
        built.model.add_hint(var, counts[key])


def _greedy_choice(
    fleet: Fleet, options: list[Option], smallest_first: bool = False
) -> dict[int, tuple[Option, list[int]]]:
    """Jobs by priority, each on its first option (by pool, then cost; or, `smallest_first`, by the
    GPUs it takes, then cost) on the first nodes with room (GPUs, and host memory where it is checked)."""
    free = {p: [(pool.gpus_per_node, host_capacity_tenths(pool))] * pool.nodes for p, pool in enumerate(fleet.pools)}
    untouched = {p: [True] * pool.nodes for p, pool in enumerate(fleet.pools)}
    choice: dict[int, tuple[Option, list[int]]] = {}
    by_job: dict[int, list[Option]] = defaultdict(list)
    for option in options:
        by_job[option.job].append(option)

    def order_key(o: Option) -> tuple[int, ...]:
        taken = o.gpus_taken(fleet.pools[o.pool].gpus_per_node)
        return (taken, o.cost, o.pool) if smallest_first else (o.pool, o.cost)

    for index in sorted(range(len(fleet.jobs)), key=lambda i: (-fleet.jobs[i].priority, i)):
        for option in sorted(by_job[index], key=order_key):
            spot = _first_fit(option, free[option.pool], untouched[option.pool])
            if spot is not None:
                for node in spot:
                    gpus, host = free[option.pool][node]
                    free[option.pool][node] = (gpus - option.gpus_per_node(fleet.pools[option.pool].gpus_per_node),
                                               None if host is None else host - option.host_tenths)
                    untouched[option.pool][node] = False
                choice[index] = (option, spot)
                break
    return choice


def greedy(fleet: Fleet, catalog: Catalog, weights: Weights | None = None,
           estimate: EstimateMode = "auto") -> ClusterResult:
    """The baseline: jobs by priority, each on its first plan (pool order, then cost) and first node
    that has room. The same options and rules as `place` with the shipped memory model and Trinity's default
    token budget (`place` takes others), and no search."""
    planner = _Planner(catalog.for_fleet(fleet), weights if weights is not None else load_weights(),
                       estimate)
    options, _ = host_footprints(fleet, [option for index in range(len(fleet.jobs))
                                         for option in job_options(planner, fleet, index)])
    choice = _greedy_choice(fleet, options)
    # In the order they were placed.
    first_gpu = _first_gpus((index, option, spot[0]) for index, (option, spot) in choice.items())
    placements = tuple(_placement(planner, fleet, o, spot, first_gpu[i]) for i, (o, spot) in sorted(choice.items()))
    unplaced = _unplaced(planner, fleet, options, set(choice))
    total = sum(fleet.jobs[i].priority for i in choice)
    return ClusterResult(status="feasible", objective=total, bound=None, placements=placements, unplaced=unplaced,
                         no_way_to_run=tuple(fleet.jobs[i].name for i in _without_ways(fleet, options)),
                         pools=pool_use(fleet, placements))


def _first_fit(option: Option, free: list[tuple[int, int | None]], untouched: list[bool]) -> list[int] | None:
    """The first node with room for `option` (`free`: GPUs and host tenths of a GiB per node), or the first nodes still
    `untouched` that a whole-node option takes; None where the pool has no room."""
    if option.size:
        return next(([node] for node, (gpus, host) in enumerate(free)
                     if gpus >= option.size and (host is None or host >= option.host_tenths)), None)
    empty = [node for node, fresh in enumerate(untouched) if fresh]
    return empty[: option.whole_nodes] if len(empty) >= option.whole_nodes else None


def _as_model_values(
    built: _Model, choice: dict[int, tuple[Option, list[int]]], options: list[Option], fleet: Fleet
) -> tuple[list[int], dict[tuple[int, tuple[Footprint, ...]], int]]:
    """A greedy placement in the model's terms: the options' literals and the node-pattern counts."""
    picked = {id(option) for option, _ in choice.values()}
    values = [int(id(option) in picked) for option in options]
    filled: Counter[tuple[int, tuple[Footprint, ...]]] = Counter()
    for pool_index in range(len(fleet.pools)):
        keys = [key for key in built.pattern_counts if key[0] == pool_index]
        per_node: dict[int, list[Footprint]] = defaultdict(list)
        for option, spot in choice.values():
            if option.pool == pool_index and option.size:
                per_node[spot[0]].append(option.footprint)
        for contents in per_node.values():
            match = next((key for key in keys if not Counter(contents) - Counter(key[1])), None)
            if match is not None:
                filled[match] += 1
    return values, {key: filled[key] for key in built.pattern_counts}

