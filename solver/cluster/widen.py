"""Widening (`widen_jobs`): the jobs of a node with idle GPUs grow onto them, where the planner has a plan for more GPUs
there that runs them longer or faster (a small CP-SAT model of those nodes)."""

from __future__ import annotations

import time
from collections import defaultdict

from ortools.sat.python import cp_model

from solver.cluster.options import Option, Planner, host_capacity_tenths, option_name, ways_in_pool
from solver.model import LeanCpModel, new_cp_solver
from solver.solve import checked
from solver.tables import Catalog, Fleet, Pool

WIDEN_TIME_LIMIT_S = 1.0
"""The limit of each of `widen_jobs`'s solves (a few milliseconds each, in practice)."""


WIDEN_LEAST_S = 0.05
"""The time each of `widen_jobs`'s solves is given where the placement's time limit has passed (the previous stage's
answer stands where it runs out)."""


def _widening_counts(catalog: Catalog, pool: Pool) -> set[int]:
    """The trainer GPU counts a job may grow to on a node of `pool`: the counts the tables of its GPU type measured,
    and powers of two. verl splits each batch evenly over a trainer's data-parallel ranks (its GPUs over SP), so
    a count the user never chose, such as 7, would break the batch sizes they run with; these are the usual ones."""
    measured = catalog.tabled_counts(pool.gpu)
    return measured | {1 << power for power in range(pool.gpus_per_node.bit_length())}


def widen_jobs(planner: Planner, fleet: Fleet, chosen: dict[int, Option], nodes: dict[int, list[int]], seed: int,
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


def _widening_model(planner: Planner, fleet: Fleet, chosen: dict[int, Option],
                    nodes: dict[int, list[int]]) -> tuple[cp_model.CpModel, list[tuple[Option, cp_model.IntVar]]]:
    """`widen_jobs`'s model: for each job on a node with idle GPUs, one literal per way (its own, and each wider one the
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
            candidates = [option, *ways_in_pool(planner, fleet, option.job, pool_index, wider, evidence)]
            literals = [model.new_bool_var(f"pool{pool_index}_node{node}_{option_name(fleet, o)}") for o in candidates]
            model.add_exactly_one(literals)
            on_node += zip(candidates, literals)
        model.add(sum(o.size * x for o, x in on_node) <= pool.gpus_per_node)
        if capacity is not None:
            model.add(sum(planner.host_tenths(fleet.jobs[o.job].model, o.plan.gpus, o.plan.offload) * x
                          for o, x in on_node) <= capacity)
        ways += on_node
    return model, ways
