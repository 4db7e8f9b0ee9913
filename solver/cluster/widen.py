"""Widening (`widen_jobs`): the jobs of a node with idle GPUs grow onto them, where the planner has a plan for more GPUs
there that runs them longer or faster (a small CP-SAT model of those nodes)."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from ortools.sat.python import cp_model

from solver import clock
from solver.cluster.options import Option, Planner, host_capacity_tenths, option_name, ways_in_pool
from solver.model import LeanCpModel, new_cp_solver, stopped_by_wall_clock
from solver.solve import checked
from solver.tables import Catalog, Fleet, Pool

WIDEN_DETERMINISTIC_TIME = 0.5
"""The work each of `widen_jobs`'s solves is given, in CP-SAT's deterministic time (the same on every run whatever
the machine's load; a few thousandths of it each, in practice)."""

WIDEN_TIME_LIMIT_S = 1.0
"""The wall-clock limit of each of `widen_jobs`'s solves, a safety net behind `WIDEN_DETERMINISTIC_TIME` (read on
`clock`, as the placement's deadlines are: a test of exact answers lets the deterministic limit alone end them)."""


WIDEN_LEAST_S = 0.05
"""The time each of `widen_jobs`'s solves is given where the placement's time limit has passed (the previous stage's
answer stands where it runs out)."""


def _widening_counts(catalog: Catalog, pool: Pool) -> set[int]:
    """The trainer GPU counts a job may grow to on a node of `pool`: the counts the tables of its GPU type measured,
    and powers of two. verl splits each batch evenly over a trainer's data-parallel ranks (its GPUs over SP), so
    a count the user never chose, such as 7, would break the batch sizes they run with; these are the usual ones."""
    measured = catalog.tabled_counts(pool.gpu)
    return measured | {1 << power for power in range(pool.gpus_per_node.bit_length())}


Way = tuple[Option, cp_model.IntVar]
"""One way to run a job in the widening model, and its literal (true: the job runs that way)."""


@dataclass(frozen=True)
class WideningModel:
    """The widening model: the ways of the jobs on nodes with idle GPUs and their literals, node by node (by pool
    index, then node index)."""

    model: cp_model.CpModel
    ways: tuple[Way, ...]

    def total(self, weight: Callable[[Option], int]) -> cp_model.LinearExprT:
        """The sum of the chosen ways' `weight`."""
        return sum(weight(option) * literal for option, literal in self.ways)

    def hint(self, value: Callable[[Option, cp_model.IntVar], int | bool]) -> None:
        """Start the next solve from the ways `value` picks (it gives each way's literal a value)."""
        self.model.clear_hints()
        for option, literal in self.ways:
            self.model.add_hint(literal, value(option, literal))


@dataclass(frozen=True)
class Widened:
    """What `widen_jobs` grew: the jobs that grow and their new ways (job -> option), and whether the wall clock
    stopped one of its solves before its deterministic work (another run may then grow them otherwise)."""

    grown: dict[int, Option]
    wall_clock_stopped: bool = False


def widen_jobs(planner: Planner, fleet: Fleet, chosen: dict[int, Option], nodes: dict[int, list[int]], seed: int,
               kept: frozenset[int], until: float) -> Widened:
    """The jobs that grow onto idle GPUs of the node they share, and their new ways (`Widened`).

    A job on a node with idle GPUs may take more trainer GPUs there (`_widening_counts`), where the planner has a
    plan for that many on the same evidence (the tables' alone, unless its plan is already an estimate) with a layout on
    the node. CP-SAT picks each such job's way, its own or a wider one, so that the node's GPUs and host
    memory hold them: the most length gained by ``at_least`` jobs, then the least step-time cost, then
    the fewest GPUs (one worker, so the answer is the same whatever ``--workers`` is). Each solve does at most
    `WIDEN_DETERMINISTIC_TIME` of work, and, as a safety net, ends within `WIDEN_TIME_LIMIT_S` and by `until` (a
    `time.monotonic()`: the placement's time limit), both read on `clock`, given at least `WIDEN_LEAST_S`. The jobs
    `kept` where they run now do not grow (more GPUs would restart them)."""
    built = build_widening_model(planner, fleet, chosen, nodes, kept)
    if len(built.ways) == len({o.job for o, _ in built.ways}):  # no job has a wider way
        return Widened({})
    picked = [o for o, _ in built.ways if o is chosen[o.job]]
    built.hint(lambda o, _: o is chosen[o.job])
    solver = new_cp_solver(1, seed)  # Ctrl-C raises KeyboardInterrupt: `place` keeps the placement
    stages = ((built.total(lambda o: o.gain), True), (built.total(lambda o: o.cost), False),
              (built.total(lambda o: o.size), False))
    solver.parameters.max_deterministic_time = WIDEN_DETERMINISTIC_TIME
    wall_clock_stopped = False
    for expression, maximise in stages:
        (built.model.maximize if maximise else built.model.minimize)(expression)
        ends_by = min(until, time.monotonic() + WIDEN_TIME_LIMIT_S)  # its own net, or the placement's limit first
        solver.parameters.max_time_in_seconds = max(clock.seconds_left(ends_by), WIDEN_LEAST_S)
        status = checked(solver, built.model, solver.solve(built.model))
        wall_clock_stopped |= stopped_by_wall_clock(solver, status)
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            break  # out of time: the previous stage's answer stands
        picked = [o for o, x in built.ways if solver.value(x)]
        reached = round(solver.objective_value)
        built.model.add(expression >= reached if maximise else expression <= reached)
        built.hint(lambda _, x: solver.value(x))
    return Widened({o.job: o for o in picked if o is not chosen[o.job]}, wall_clock_stopped)


def build_widening_model(planner: Planner, fleet: Fleet, chosen: dict[int, Option],
                         nodes: dict[int, list[int]], kept: frozenset[int] = frozenset()) -> WideningModel:
    """`widen_jobs`'s model: for each job on a node with idle GPUs, one literal per way (its own, and each wider one the
    planner has; the jobs `kept` where they run, their own alone), exactly one of them chosen, within the node's GPUs
    and host memory."""
    by_node: dict[tuple[int, int], list[Option]] = defaultdict(list)
    for job, option in sorted(chosen.items()):
        if option.size:
            by_node[option.pool, nodes[job][0]].append(option)
    model = LeanCpModel()
    model.name = "widen jobs onto idle GPUs"
    every_way: list[Way] = []
    for (pool_index, node), here in sorted(by_node.items()):
        pool = fleet.pools[pool_index]
        idle = pool.gpus_per_node - sum(option.size for option in here)
        if not idle:
            continue
        on_node: list[Way] = []
        for option in here:
            ways = [option] if option.job in kept else _ways_to_grow(planner, fleet, option, idle)
            literals = [model.new_bool_var(f"pool{pool_index}_node{node}_{option_name(fleet, o)}") for o in ways]
            _one_way_per_job(model, literals)
            on_node += zip(ways, literals)
        _within_node_gpus(model, pool, on_node)
        _within_node_host_memory(model, planner, fleet, pool, on_node)
        every_way += on_node
    return WideningModel(model=model, ways=tuple(every_way))


def _ways_to_grow(planner: Planner, fleet: Fleet, option: Option, idle: int) -> list[Option]:
    """A placed job's ways on its node with `idle` GPUs: its own (`option`), then those the planner has for each wider
    count it may grow to (`_widening_counts`) on the same evidence."""
    evidence = planner.estimate if option.plan.evidence == "estimated" else "never"
    grow_to = _widening_counts(planner.catalog, fleet.pools[option.pool])
    wider = [n for n in range(option.plan.gpus + 1, option.plan.gpus + idle + 1) if n in grow_to]
    return [option, *ways_in_pool(planner, fleet, option.job, option.pool, wider, evidence)]


def _one_way_per_job(model: cp_model.CpModel, literals: list[cp_model.IntVar]) -> None:
    """A job runs exactly one of its ways (`literals`)."""
    model.add_exactly_one(literals)


def _within_node_gpus(model: cp_model.CpModel, pool: Pool, on_node: list[Way]) -> None:
    """The ways chosen on a node (`on_node`) take its GPUs at most."""
    model.add(sum(o.size * x for o, x in on_node) <= pool.gpus_per_node)


def _within_node_host_memory(model: cp_model.CpModel, planner: Planner, fleet: Fleet, pool: Pool,
                             on_node: list[Way]) -> None:
    """The ways chosen on a node (`on_node`) need its host memory at most, where the pool gives it."""
    capacity = host_capacity_tenths(pool)
    if capacity is not None:
        model.add(sum(planner.host_tenths(fleet.jobs[o.job].model, o.plan.gpus, o.plan.offload) * x
                      for o, x in on_node) <= capacity)
