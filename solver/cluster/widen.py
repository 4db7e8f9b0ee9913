"""Widening (`widen_jobs`): the jobs of a node with idle GPUs grow onto them, where the planner has a plan for more GPUs
there that runs them longer or faster (a small CP-SAT model of those nodes)."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

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


def _widening_counts(catalog: Catalog, pool: Pool) -> set[int]:
    """The trainer GPU counts a job may grow to on a node of `pool`: the counts the tables of its GPU type measured,
    and powers of two. verl splits each batch evenly over a trainer's data-parallel ranks (its GPUs over SP), so
    a count the user never chose, such as 7, would break the batch sizes they run with; these are the usual ones."""
    measured = catalog.tabled_counts(pool.gpu)
    return measured | {1 << power for power in range(pool.gpus_per_node.bit_length())}


class Way(NamedTuple):
    """One way to run a job in the widening model: the option, its literal (true: the job runs that way), and
    whether it runs so on an idle node of its pool, alone (`moves`), rather than on its own node."""

    option: Option
    literal: cp_model.IntVar
    moves: bool = False


@dataclass(frozen=True)
class WideningModel:
    """The widening model: the ways of the jobs on nodes with idle GPUs (or, where jobs may move, on any node they
    share in a pool with idle nodes) and their literals, node by node (by pool index, then node index); the idle nodes
    of each pool a job may move to (pool index -> node indexes, in order)."""

    model: cp_model.CpModel
    ways: tuple[Way, ...]
    idle_nodes: dict[int, list[int]]

    def total(self, weight: Callable[[Way], int]) -> cp_model.LinearExprT:
        """The sum of the chosen ways' `weight`."""
        return sum(weight(way) * way.literal for way in self.ways)

    def hint(self, value: Callable[[Way], int | bool]) -> None:
        """Start the next solve from the ways `value` picks (it gives each way's literal a value)."""
        self.model.clear_hints()
        for way in self.ways:
            self.model.add_hint(way.literal, value(way))

    def moved_to(self, moved: list[Way]) -> dict[int, int]:
        """The node each job of the `moved` ways takes (job -> node): in each pool, the jobs in file order take its
        idle nodes in order."""
        by_pool: dict[int, list[int]] = defaultdict(list)
        for way in sorted(moved, key=lambda way: way.option.job):
            by_pool[way.option.pool].append(way.option.job)
        return {job: node for pool, jobs in by_pool.items() for job, node in zip(jobs, self.idle_nodes[pool])}


@dataclass(frozen=True)
class Widened:
    """What `widen_jobs` grew: the jobs that grow and their new ways (job -> option), the jobs that move to an idle
    node of their pool (job -> node), and whether the wall clock stopped one of its solves before its deterministic
    work (another run may then grow them otherwise)."""

    grown: dict[int, Option]
    moved: dict[int, int] = field(default_factory=dict)
    wall_clock_stopped: bool = False


def widen_jobs(planner: Planner, fleet: Fleet, chosen: dict[int, Option], nodes: dict[int, list[int]], seed: int,
               kept: frozenset[int], onto_idle_nodes: bool, until: float) -> Widened:
    """The jobs that grow onto idle GPUs of the node they share, or move to an idle node of their pool, and their new
    ways and nodes (`Widened`).

    A job on a node with idle GPUs may take more trainer GPUs there (`_widening_counts`), where the planner has a
    plan for that many on the same evidence (the tables' alone, unless its plan is already an estimate) with a layout on
    the node. Where `onto_idle_nodes`, a job sharing a node may instead take a node of its pool that no job uses, alone
    (with its own way or a wider one, up to the node's GPUs), which leaves its GPUs to the others on its node. CP-SAT
    picks each such job's way, so that each node's GPUs and host memory hold them and the jobs that move have an idle
    node each: the most length gained by ``at_least`` jobs, then the least step-time cost, then the fewest GPUs, then
    (where a job may move) the fewest jobs moved, the last in file order first (one worker, so the answer is the same
    whatever ``--workers`` is). Each solve does at most `WIDEN_DETERMINISTIC_TIME` of work, and, as a safety net, ends
    within `WIDEN_TIME_LIMIT_S` and by `until` (a `time.monotonic()`: the placement's time limit), both read on
    `clock`: a solve gets only what is left of them (none once `until` has passed: the previous stage's answer
    stands), and past `until` no job's wider ways are asked (the placement stands as placed). The jobs `kept` where
    they run now neither grow nor move (either would restart them)."""
    if clock.seconds_left(until) <= 0:  # no time left: nor for the planner's questions of the wider ways
        return Widened({}, wall_clock_stopped=True)
    built = build_widening_model(planner, fleet, chosen, nodes, kept, onto_idle_nodes)
    if len(built.ways) == len({way.option.job for way in built.ways}):  # no job has another way
        return Widened({})
    def as_placed(way: Way) -> bool:
        return way.option is chosen[way.option.job] and not way.moves

    picked = [way for way in built.ways if as_placed(way)]
    built.hint(as_placed)
    solver = new_cp_solver(1, seed)  # Ctrl-C raises KeyboardInterrupt: `place` keeps the placement
    last_first = len(fleet.jobs) ** 2 + 1  # outweighs any sum of file positions: the fewest moves come first
    stages = [(built.total(lambda way: way.option.gain), True), (built.total(lambda way: way.option.cost), False),
              (built.total(lambda way: way.option.size), False)]
    if any(way.moves for way in built.ways):
        stages.append((built.total(lambda way: way.moves * (last_first + len(fleet.jobs) - way.option.job)), False))
    solver.parameters.max_deterministic_time = WIDEN_DETERMINISTIC_TIME
    wall_clock_stopped = False
    for expression, maximise in stages:
        (built.model.maximize if maximise else built.model.minimize)(expression)
        ends_by = min(until, time.monotonic() + WIDEN_TIME_LIMIT_S)  # its own net, or the placement's limit first
        solver.parameters.max_time_in_seconds = max(clock.seconds_left(ends_by), 0.0)  # none left: it stops at once
        status = checked(solver, built.model, solver.solve(built.model))
        wall_clock_stopped |= stopped_by_wall_clock(solver, status)
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            break  # out of time: the previous stage's answer stands
        picked = [way for way in built.ways if solver.value(way.literal)]
        reached = round(solver.objective_value)
        built.model.add(expression >= reached if maximise else expression <= reached)
        built.hint(lambda way: solver.value(way.literal))
    return Widened({way.option.job: way.option for way in picked if way.option is not chosen[way.option.job]},
                   built.moved_to([way for way in picked if way.moves]), wall_clock_stopped)


def build_widening_model(planner: Planner, fleet: Fleet, chosen: dict[int, Option], nodes: dict[int, list[int]],
                         kept: frozenset[int] = frozenset(), onto_idle_nodes: bool = False) -> WideningModel:
    """`widen_jobs`'s model: for each job on a node with idle GPUs (where `onto_idle_nodes`, on any node it shares with
    other jobs in a pool with a node no job uses), one literal per way (its own, and each wider one the planner has;
    where it shares a node in a pool with idle nodes, each of those again on an idle node; the jobs `kept` where they
    run, their own alone), exactly one of them chosen, within each node's GPUs and host memory, the jobs that move at
    most the pool's idle nodes."""
    by_node: dict[tuple[int, int], list[Option]] = defaultdict(list)
    for job, option in sorted(chosen.items()):
        if option.size:
            by_node[option.pool, nodes[job][0]].append(option)
    used = {(option.pool, node) for job, option in chosen.items() for node in nodes[job]}
    idle_nodes = {pool_index: [node for node in pool.up_node_indexes if (pool_index, node) not in used]
                  if onto_idle_nodes else [] for pool_index, pool in enumerate(fleet.pools)}
    model = LeanCpModel()
    model.name = "widen jobs onto idle GPUs"
    every_way: list[Way] = []
    for (pool_index, node), here in sorted(by_node.items()):
        pool = fleet.pools[pool_index]
        may_move = bool(idle_nodes[pool_index]) and len(here) > 1  # a job alone moves to a node just like its own
        idle = pool.gpus_per_node - sum(option.size for option in here)
        if not idle and not may_move:
            continue
        on_node: list[Way] = []
        to_idle_nodes: list[Way] = []
        for option in here:
            free = option.job not in kept
            room = pool.gpus_per_node - option.size if may_move else idle  # others may leave, or it moves
            grown = ways_to_grow(planner, fleet, option, room) if free else [option]
            ways = [Way(o, model.new_bool_var(f"pool{pool_index}_node{node}_{option_name(fleet, o)}")) for o in grown]
            moves = [Way(o, model.new_bool_var(f"pool{pool_index}_idle_node_{option_name(fleet, o)}"), moves=True)
                     for o in grown] if free and may_move else []
            _one_way_per_job(model, [way.literal for way in ways + moves])
            for way in moves:  # alone on its node
                _within_node_host_memory(model, planner, fleet, pool, [way])
            on_node += ways
            to_idle_nodes += moves
        _within_node_gpus(model, pool, on_node)
        _within_node_host_memory(model, planner, fleet, pool, on_node)
        every_way += on_node + to_idle_nodes
    for pool_index, idle_here in idle_nodes.items():
        moving = [way.literal for way in every_way if way.moves and way.option.pool == pool_index]
        if moving:
            model.add(sum(moving) <= len(idle_here))
    return WideningModel(model=model, ways=tuple(every_way), idle_nodes=idle_nodes)


def ways_to_grow(planner: Planner, fleet: Fleet, option: Option, idle: int) -> list[Option]:
    """A placed job's ways with `idle` GPUs beside it: its own (`option`), then those the planner has for each wider
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
    model.add(sum(way.option.size * way.literal for way in on_node) <= pool.gpus_per_node)


def _within_node_host_memory(model: cp_model.CpModel, planner: Planner, fleet: Fleet, pool: Pool,
                             on_node: list[Way]) -> None:
    """The ways chosen on a node (`on_node`) need its host memory at most, where the pool gives it."""
    capacity = host_capacity_tenths(pool)
    if capacity is not None:
        model.add(sum(planner.host_tenths(fleet.jobs[way.option.job], way.option.plan) * way.literal
                      for way in on_node) <= capacity)
