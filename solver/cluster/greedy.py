"""The greedy baseline (`greedy`): jobs by priority (the required ones first), each on its first way and the first
node with room (`greedy_choice`, from which the search starts too)."""

from __future__ import annotations

from collections import defaultdict

from solver.cluster.model import required_names
from solver.cluster.options import Option, Planner, fleet_options, host_capacity_tenths, jobs_without_ways
from solver.cluster.placements import as_placement, gpus_on_nodes, pool_use
from solver.cluster.reasons import unplaced_reasons
from solver.query import EstimateMode
from solver.results import ClusterResult
from solver.tables import Catalog, Fleet, Weights, load_weights


def greedy_choice(
    fleet: Fleet, options: list[Option], smallest_first: bool = False
) -> dict[int, tuple[Option, list[int]]]:
    """Jobs by priority (the required ones first), each on its first option (by pool, then cost; or, `smallest_first`,
    by the GPUs it takes, then cost) on the first nodes with room (GPUs, and host memory where it is checked)."""
    free = {p: [(pool.gpus_per_node, host_capacity_tenths(pool))] * pool.nodes for p, pool in enumerate(fleet.pools)}
    untouched = {p: [True] * pool.nodes for p, pool in enumerate(fleet.pools)}
    choice: dict[int, tuple[Option, list[int]]] = {}
    by_job: dict[int, list[Option]] = defaultdict(list)
    for option in options:
        by_job[option.job].append(option)

    def order_key(o: Option) -> tuple[int, ...]:
        taken = o.gpus_taken(fleet.pools[o.pool].gpus_per_node)
        return (taken, o.cost, o.pool) if smallest_first else (o.pool, o.cost)

    for index in sorted(range(len(fleet.jobs)), key=lambda i: (not fleet.jobs[i].required, -fleet.jobs[i].priority, i)):
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
    planner = Planner(catalog.for_fleet(fleet), weights if weights is not None else load_weights(), estimate)
    options = fleet_options(planner, fleet).options
    choice = greedy_choice(fleet, options)
    # In the order they were placed.
    gpus = gpus_on_nodes(fleet, ((index, option, spot[0]) for index, (option, spot) in choice.items()))
    placements = tuple(as_placement(planner, fleet, o, spot, gpus[i]) for i, (o, spot) in sorted(choice.items()))
    unplaced = unplaced_reasons(planner, fleet, options, choice).unplaced
    total = sum(fleet.jobs[i].priority for i in choice)
    return ClusterResult(status="feasible", objective=total, bound=None, placements=placements, unplaced=unplaced,
                         required=required_names(fleet),
                         no_way_to_run=tuple(fleet.jobs[i].name for i in jobs_without_ways(fleet, options)),
                         pools=pool_use(fleet, placements))


def _first_fit(option: Option, free: list[tuple[int, int | None]], untouched: list[bool]) -> list[int] | None:
    """The first node with room for `option` (`free`: GPUs and host tenths of a GiB per node), or the first nodes still
    `untouched` that a whole-node option takes; None where the pool has no room."""
    if option.size:
        return next(([node] for node, (gpus, host) in enumerate(free)
                     if gpus >= option.size and (host is None or host >= option.host_tenths)), None)
    empty = [node for node, fresh in enumerate(untouched) if fresh]
    return empty[: option.whole_nodes] if len(empty) >= option.whole_nodes else None
