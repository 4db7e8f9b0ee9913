"""The greedy baseline (`greedy`): jobs by priority (the required ones first), each on its first way and the first
node with room (`greedy_choice`, from which the search starts too, the jobs that run now kept where they run first)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from solver.cluster.model import required_jobs, required_names
from solver.cluster.options import (
    Option,
    Planner,
    fleet_options,
    host_capacity_tenths,
    jobs_without_ways,
    keeps_running,
)
from solver.cluster.placements import as_placement, gpus_on_nodes, pool_use, with_node_host_cautions, with_solve_best
from solver.cluster.reasons import unplaced_reasons
from solver.query import EstimateMode
from solver.results import ClusterResult
from solver.tables import Catalog, Fleet, RunningJob, Weights, load_weights


def greedy_choice(
    fleet: Fleet, options: list[Option], smallest_first: bool = False, running: Sequence[RunningJob] = ()
) -> dict[int, tuple[Option, list[int]]]:
    """Jobs by priority (the required ones first), each on its first option (by pool, then cost; or, `smallest_first`,
    by the GPUs it takes, then cost) on the first nodes with room (GPUs, and host memory where it is checked). The jobs
    that run now (`running`) come first, each kept on its nodes with the way that keeps it as it runs
    (`keeps_running`) where it has one and its nodes have room; where that leaves a required job out, the required
    jobs come first (the running ones among them kept first), then the other running jobs, kept where they still
    fit. A running job not kept is placed as the others are."""
    by_job: dict[int, list[Option]] = defaultdict(list)
    for option in options:
        by_job[option.job].append(option)
    keeping = {job.job: (way, list(job.nodes)) for job in running
               for way in [next((o for o in by_job[job.job] if keeps_running(fleet, o, job)), None)] if way is not None}
    choice = _placed_in_order(fleet, by_job, keeping, smallest_first, required_first=False)
    if keeping and not required_jobs(fleet, every_job=False) <= choice.keys():
        return _placed_in_order(fleet, by_job, keeping, smallest_first, required_first=True)
    return choice


def _placed_in_order(fleet: Fleet, by_job: dict[int, list[Option]], keeping: dict[int, tuple[Option, list[int]]],
                     smallest_first: bool, required_first: bool) -> dict[int, tuple[Option, list[int]]]:
    """`greedy_choice`'s placement of the jobs' ways (`by_job`): the jobs `keeping` gives a way and nodes (the running
    jobs kept as they run) on them where they have room, before the required jobs (or, `required_first`, after them);
    then the others, and each job kept nowhere, on its first way with room on the first nodes that have it (a node
    that is down has none)."""
    free = {p: [(0, 0) if node in pool.down else (pool.gpus_per_node, host_capacity_tenths(pool))
                for node in range(pool.nodes)] for p, pool in enumerate(fleet.pools)}
    untouched = {p: [node not in pool.down for node in range(pool.nodes)] for p, pool in enumerate(fleet.pools)}
    choice: dict[int, tuple[Option, list[int]]] = {}

    def order_key(o: Option) -> tuple[int, ...]:
        taken = o.gpus_taken(fleet.pools[o.pool].gpus_per_node)
        return (taken, o.cost, o.pool) if smallest_first else (o.pool, o.cost)

    def job_order(i: int) -> tuple[int, ...]:
        not_kept, not_required = i not in keeping, not fleet.jobs[i].required
        return (*((not_required, not_kept) if required_first else (not_kept, not_required)), -fleet.jobs[i].priority,
                i)

    def take(index: int, option: Option, spot: list[int]) -> None:
        for node in spot:
            gpus, host = free[option.pool][node]
            free[option.pool][node] = (gpus - option.gpus_per_node(fleet.pools[option.pool].gpus_per_node),
                                       None if host is None else host - option.host_tenths)
            untouched[option.pool][node] = False
        choice[index] = (option, spot)

    for index in sorted(range(len(fleet.jobs)), key=job_order):
        kept = keeping.get(index)
        if kept is not None and _has_room(kept[0], kept[1], free[kept[0].pool], untouched[kept[0].pool]):
            take(index, *kept)
            continue
        for option in sorted(by_job[index], key=order_key):
            spot = _first_fit(option, free[option.pool], untouched[option.pool])
            if spot is not None:
                take(index, option, spot)
                break
    return choice


def greedy(fleet: Fleet, catalog: Catalog, weights: Weights | None = None,
           estimate: EstimateMode = "auto") -> ClusterResult:
    """The baseline (benchmarks/cluster.py's `greedy` column): jobs by priority (the required ones first), each on its
    first plan (pool order, then cost) and first node that has room. The same options and rules as `place` with the
    shipped memory model and Trinity's default token budget (`place` takes others), and no search. It weighs no
    running jobs (it takes no `running`: a baseline of a fresh fleet); the greedy placement `place` starts from, and
    falls back on where time runs out before its search's first (`search.greedy_start`), keeps them where they run
    first, on each job's smallest way."""
    planner = Planner(catalog.for_fleet(fleet), weights if weights is not None else load_weights(), estimate)
    options = fleet_options(planner, fleet).options
    choice = greedy_choice(fleet, options)
    # In the order they were placed.
    gpus = gpus_on_nodes(fleet, ((index, option, spot[0]) for index, (option, spot) in choice.items()))
    placements = with_node_host_cautions(planner, fleet, tuple(as_placement(planner, fleet, o, spot, gpus[i])
                                                               for i, (o, spot) in sorted(choice.items())))
    unplaced = unplaced_reasons(planner, fleet, options, choice).unplaced
    total = sum(fleet.jobs[i].priority for i in choice)
    result = ClusterResult(status="feasible", objective=total, bound=None, placements=placements, unplaced=unplaced,
                           required=required_names(fleet),
                           no_way_to_run=tuple(fleet.jobs[i].name for i in jobs_without_ways(fleet, options)),
                           pools=pool_use(fleet, placements))
    return with_solve_best(planner, fleet, result, {job: option for job, (option, _) in choice.items()}, None)


def _first_fit(option: Option, free: list[tuple[int, int | None]], untouched: list[bool]) -> list[int] | None:
    """The first node with room for `option` (`free`: GPUs and host tenths of a GiB per node), or the first nodes still
    `untouched` that a whole-node option takes; None where the pool has no room."""
    if option.size:
        return next(([node] for node in range(len(free)) if _has_room(option, [node], free, untouched)), None)
    empty = [node for node, fresh in enumerate(untouched) if fresh]
    return empty[: option.whole_nodes] if len(empty) >= option.whole_nodes else None


def _has_room(option: Option, nodes: list[int], free: list[tuple[int, int | None]], untouched: list[bool]) -> bool:
    """Whether `nodes` of a pool (`free`: its GPUs and host tenths of a GiB per node; `untouched`: its nodes no job
    takes yet) hold `option`: on its node, its GPUs and host memory; taken whole, nodes no job takes."""
    if not option.size:
        return all(untouched[node] for node in nodes)
    gpus, host = free[nodes[0]]
    return gpus >= option.size and (host is None or host >= option.host_tenths)
