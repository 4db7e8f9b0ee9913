"""What to buy (`buy`): the fewest nodes to add to the fleet's pools so that every job (or every required one) is
placed, weighed by their GPUs (a node of 8 GPUs counts 8, so two nodes of 4 tie with it and the fewer nodes break the
tie). CP-SAT decides: the placement model on the pools raised to a bound, each required job placed, with a count of
nodes bought per pool (`add_bought_nodes`), minimised; then, on the purchase, the placement's own stages (the other
jobs' priority, the jobs tied in it, length, cost, tie-break), which choose among the purchases of as few GPUs and
nodes; last, on the pools as bought, `place`'s own placement (its ways there, its model and stages), which comes with
the answer: the one `solve cluster` makes on them, where placements tie too. The jobs no number of nodes would run are
named apart."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from math import ceil, inf
from typing import NamedTuple

from ortools.sat.python import cp_model

from solver.cluster.model import (
    PlacementModel,
    add_bought_nodes,
    build_placement_model,
    fewest_gpus,
    most_priority,
    placement_solver,
    placement_stages,
)
from solver.cluster.options import (
    Option,
    Planner,
    WaysLimit,
    evidence_tiers,
    fleet_options,
    host_footprints,
    jobs_without_ways,
    layout,
    ways_in_pool,
    ways_order,
)
from solver.cluster.placements import pool_use, with_solve_best
from solver.cluster.reasons import unplaced_without_a_way, why_no_option
from solver.cluster.search import (
    READ_BACK_S,
    SEARCH_SHARE,
    HoldInterrupt,
    ProgressCallback,
    Search,
    StopOnInterrupt,
    before_search,
    greedy_start,
    grown_placements,
    node_indexes,
    placement_search,
    solve_stages,
)
from solver.query import Progress
from solver.results import PoolPurchase, PurchaseResult, Status
from solver.solve import run_deadline
from solver.tables import BUY_WAYS_FACTOR, DETERMINISTIC_PER_SECOND, MAX_ESTIMATED_GPUS, Fleet

PURCHASE_CHOICE_SHARE = 0.5
"""The share of the deterministic time the purchase's stages leave that the placement's stages on the purchase model
get (they choose, among the purchases of as few GPUs and nodes, the one that places the jobs best); the rest goes to
`place`'s own placement on the pools as bought (`_placed_as_bought`)."""


def buy(
    fleet: Fleet,
    planner: Planner,
    *,
    workers: int = 1,
    seed: int = 0,
    progress: Progress | None = None,
    widen: bool = True,
) -> PurchaseResult:
    """The fewest GPUs (then nodes) to add to `fleet`'s pools so that every job with a way to run in some pool it may
    use is placed, as `place` places them (only the jobs the fleet marks ``required``, where it marks some: the others
    where room is left), with the jobs that have none named apart, and the placement with the nodes bought (`place`'s
    own there: `_placed_as_bought`), grown onto idle GPUs as a placement's unless not `widen`; the planner and the
    options as `place`'s (each of the planner's solves ends with the time limit: `run_deadline`)."""
    started = time.monotonic()
    with run_deadline(started + planner.time_limit_s):
        return _buy(fleet, planner, workers, seed, progress, widen, started)


def _buy(fleet: Fleet, planner: Planner, workers: int, seed: int, progress: Progress | None, widen: bool,
         started: float) -> PurchaseResult:
    """`buy`'s purchase, begun at `started` (a `time.monotonic()`)."""
    marked = any(job.required for job in fleet.jobs)
    must = [job.name for job in fleet.jobs if job.required or not marked]
    with before_search():
        limit = WaysLimit.of(planner, started, BUY_WAYS_FACTOR)
        # The fleet the jobs' ways are asked on: each pool with room for every way its jobs may have, side by side.
        asked = _raised(fleet, [sum(_most_nodes(planner, fleet, job, pool) for job in range(len(fleet.jobs))
                                    if fleet.jobs[job].may_use(fleet.pools[pool])) for pool in range(len(fleet.pools))])
        ways = _ways_by_tier(planner, asked, limit)
        options, tiers = ways.options, ways.tiers
        most_by_job: dict[tuple[int, int], int] = {}  # (job, pool): the most nodes a way of the job's there takes
        for option in options:
            most_by_job[option.job, option.pool] = max(most_by_job.get((option.job, option.pool), 0), option.nodes)
        # No purchase needs more nodes in a pool than its jobs on their largest ways there, each on nodes of its own.
        most = [sum(nodes for (_, at), nodes in most_by_job.items() if at == pool) for pool in range(len(fleet.pools))]
        raised = _raised(fleet, most)
        stuck = [job for job in jobs_without_ways(raised, options) if job not in ways.cut_short]
        # Asked where the ways were, so that a reason's GPUs are those no purchase goes past, not what the others need.
        reasons = [why_no_option(planner, asked, job, limit=limit) for job in stuck]
        fits_nowhere = tuple(unplaced_without_a_way(raised.jobs[job], why) for job, why in zip(stuck, reasons))
        # Where the time limit cut the jobs' ways (or the reasons of those with none) short on the wall clock.
        ways_stopped = ("ways",) if ways.wall_clock_cut or any(why.cut_short == "wall clock" for why in reasons) else ()
        cut_short = tuple(fleet.jobs[job].name for job in ways.cut_short)
        placed = [job for job in range(len(fleet.jobs)) if job not in stuck and job not in ways.cut_short]
        if not placed or set(cut_short) & set(must):  # no job to place, or one that must be has no ways yet
            return PurchaseResult(status="unknown" if cut_short else "infeasible", gpus=None, nodes=None, bound=None,
                                  pools=(), fits_nowhere=fits_nowhere, required=tuple(must), searched=False,
                                  undecided_ways=planner.undecided, ways_cut_short=cut_short,
                                  ways_time_limit_s=ways.covering_time_limit_s,
                                  wall_clock_stopped=ways_stopped, wall_time_s=time.monotonic() - started)
        index = {job: new for new, job in enumerate(placed)}
        exact = [replace(option, job=index[option.job]) for option in options]
        jobs = {"jobs": tuple(fleet.jobs[job].model_copy(update={"required": fleet.jobs[job].name in must})
                              for job in placed)}
        owned = fleet.model_copy(update=jobs)
        model = _PurchaseModel.of(owned, exact, tiers, most)
    solver = placement_solver(workers, seed)
    deadline = started + planner.time_limit_s * SEARCH_SHARE - READ_BACK_S
    # The run's deterministic time, less what the reasons' questions whether more nodes reach a length took.
    budget = DETERMINISTIC_PER_SECOND * planner.time_limit_s - planner.reach_work.spent
    report = None if progress is None else partial(ProgressCallback, report=progress, started=started)
    with StopOnInterrupt(solver) as interrupt:
        staged = solve_stages(greedy_start(model.raised, model.options, model.built), model.built, model.purchase,
                              interrupt, deadline, budget, lambda bound: max(bound, 0), report)
        if model.host_rounded and staged.first_failed is None and not interrupt.caught:
            # Rounded host needs may buy more than the exact ones need: every purchase of no more GPUs than this one
            # buys few enough nodes per pool that fewer classes may do, or none (`host_footprints` weighs the
            # pool's nodes); where they round fewer pools, the purchase is asked again on them, this one its bound.
            gpus = sum(more * pool.gpus_per_node
                       for more, pool in zip(_bought(fleet, model.options, staged.search), fleet.pools))
            tighter = [min(up_to, gpus // pool.gpus_per_node) for up_to, pool in zip(most, fleet.pools)]
            again = _PurchaseModel.of(owned, exact, tiers, tighter)
            if len(again.host_rounded) < len(model.host_rounded):
                restaged = solve_stages(greedy_start(again.raised, again.options, again.built), again.built,
                                        again.purchase, interrupt, deadline, budget - staged.spent,
                                        lambda bound: max(bound, 0), report)
                if restaged.first_failed is None:
                    model, staged = again, replace(restaged, spent=staged.spent + restaged.spent)
        options, host_rounded, built = model.options, model.host_rounded, model.built
        if staged.first_failed is None:
            # The purchase that places the jobs best, then the jobs on the pools as bought as solve cluster places them.
            chose = solve_stages(staged.search, built, model.placing, interrupt, deadline,
                                 (budget - staged.spent) * PURCHASE_CHOICE_SHARE, int, report,
                                 most_priority(model.raised, options))
            extra = _bought(fleet, options, chose.search)
            after = _raised(owned, extra)
            placed_with, search = _placed_as_bought(planner, after, limit, interrupt,
                                                    (deadline, budget - staged.spent - chose.spent), report,
                                                    (options, chose.search))
    fewest, _ = fewest_gpus(owned, [option for option in exact if owned.jobs[option.job].required])
    unfound = PurchaseResult(status="unknown", gpus=None, nodes=None, bound=None, pools=(), fits_nowhere=fits_nowhere,
                             fewest_gpus=sum(fewest.values()),
                             fleet_gpus=sum(pool.up_nodes * pool.gpus_per_node for pool in fleet.pools),
                             required=tuple(must), searched=True, host_rounded=host_rounded,
                             undecided_ways=planner.undecided,
                             ways_cut_short=cut_short, ways_time_limit_s=ways.covering_time_limit_s,
                             interrupted=interrupt.caught,
                             wall_clock_stopped=ways_stopped + staged.search.wall_clock_stopped)
    if staged.first_failed is not None:  # no purchase found (none exists only where CP-SAT proved it)
        failed: Status = "infeasible" if staged.first_failed == cp_model.INFEASIBLE else "unknown"
        return unfound.model_copy(update={"status": failed, "wall_time_s": time.monotonic() - started})
    chosen = {option.job: option for option, value in zip(placed_with, search.values) if value}
    nodes = node_indexes(after, chosen, search.counts)
    # Widening ends by the time limit, less the time kept to read the answer back, as `place`'s does.
    ends_by = started + planner.time_limit_s - READ_BACK_S
    widen_by = ends_by if widen and not interrupt.caught else None
    undecided = planner.undecided  # widening's own questions leave the purchase as it is, as `place`'s placement
    try:
        grown = grown_placements(planner, after, chosen, nodes, seed, widen_by)
    except KeyboardInterrupt:  # Ctrl-C while widening: the placement stands, as placed, made again with Ctrl-C held
        interrupt.caught = True  # (`HoldInterrupt`, as `place`'s): the purchase comes out, interrupted
        with HoldInterrupt():
            grown = grown_placements(planner, after, chosen, nodes, seed, None)
    placements = grown.placements
    pools = tuple(PoolPurchase(pool=pool.name, gpu=pool.gpu, nodes_bought=more,
                               gpus_bought=more * pool.gpus_per_node, nodes_after=pool.nodes + more, down=pool.down,
                               nodes_used=use.nodes_used, gpus_used=use.gpus_used, host_ram_gb=use.host_ram_gb,
                               fullest_node_host_gb=use.fullest_node_host_gb)
                  for pool, more, use in zip(fleet.pools, extra, pool_use(after, placements)))
    proven = staged.search.proven and not host_rounded and not undecided and not cut_short
    bought = unfound.model_copy(update={
        "status": "optimal" if proven else "feasible", "gpus": sum(pool.gpus_bought for pool in pools),
        "nodes": sum(pool.nodes_bought for pool in pools), "bound": staged.search.bound, "pools": pools,
        "placements": placements,
        "wall_clock_stopped": tuple(dict.fromkeys(ways_stopped + chose.search.wall_clock_stopped
                                                  + search.wall_clock_stopped + grown.wall_clock_stopped)),
        "left_out": tuple(job.name for job in owned.jobs if job.name not in must
                          and job.name not in {placement.job for placement in placements}),
        "placement_proven": chose.search.proven and search.proven and not interrupt.caught,
        "interrupted": interrupt.caught})
    # Last, by the time limit, as widening: solve's best on the placed jobs' trainer GPUs (their questions, of no way
    # to place a job, leave the purchase and its counts as they are).
    answered = with_solve_best(planner, after, bought, grown.ways, ends_by)
    return answered.model_copy(update={"wall_time_s": time.monotonic() - started})


@dataclass(frozen=True)
class _PurchaseModel:
    """The purchase's model: the placement model on the fleet with each pool raised by its bound (`raised`), on the
    jobs' ways with the host memory they take on a node as it counts it (`options`: `host_footprints` on the raised
    pools, which rounds it up in `host_rounded`), the nodes bought per pool (`add_bought_nodes`), its stages (the
    fewest GPUs bought, then nodes: `purchase`) and the placement's stages on the purchase (`placing`)."""

    raised: Fleet
    options: list[Option]
    host_rounded: tuple[str, ...]
    built: PlacementModel
    purchase: list[tuple[str, cp_model.LinearExprT, bool]]
    placing: list[tuple[str, cp_model.LinearExprT, bool]]

    @classmethod
    def of(cls, owned: Fleet, exact: list[Option], tiers: Sequence[int], most: Sequence[int]) -> _PurchaseModel:
        """The model of buying up to `most` nodes per pool of `owned`, on the jobs' ways with their own host needs
        (`exact`, each of its evidence tier in `tiers`)."""
        raised = _raised(owned, list(most))
        options, host_rounded = host_footprints(raised, exact)
        built = build_placement_model(raised, options, every_job=False)
        bought = add_bought_nodes(built, owned, options, tiers, most)
        gpus = sum(count * pool.gpus_per_node for count, pool in zip(bought, owned.pools))
        # The placement's stages on the purchase, which choose among the purchases of as few GPUs and nodes.
        placing = _weighed_stages(placement_stages(raised, options, built, every_job=False), raised)
        purchase: list[tuple[str, cp_model.LinearExprT, bool]] = [
            ("bought GPUs", gpus, False), ("bought nodes", sum(bought), False)]
        return cls(raised, options, host_rounded, built, purchase, placing)


def _placed_as_bought(planner: Planner, after: Fleet, limit: WaysLimit, interrupt: StopOnInterrupt,
                      limits: tuple[float, float], report: Callable[..., ProgressCallback] | None,
                      purchased: tuple[list[Option], Search]) -> tuple[list[Option], Search]:
    """The jobs placed on the pools as bought (`after`) as `place` places them, so that solve cluster on those pools
    places them so too: their ways there (`fleet_options`, within `limit`), `place`'s model and stages on them
    (`placement_search`: its tie-break weighs these ways and node patterns, not the purchase's), solved with
    `interrupt`'s solver within `limits` (the wall clock's deadline, the deterministic time left). Returns the ways
    with the placement; where the time limit leaves a job without its ways there, its first stage finds none in time,
    or Ctrl-C came before it, the purchase's own (`purchased`: its ways and placement), unproven. The placement's
    `wall_clock_stopped` names these stages alone (`ways` where the wall clock cut the ways short)."""
    purchase_options, purchase = purchased
    if interrupt.caught:  # no stage would run: the purchase's placement stands, not the search's greedy start
        return purchase_options, replace(purchase, proven=False, wall_clock_stopped=())
    ways = fleet_options(planner, after, limit)
    if ways.cut_short:  # a placement without the jobs cut short would leave them out for no reason: the purchase's
        return purchase_options, replace(purchase, proven=False, wall_clock_stopped=("ways",) * ways.wall_clock_cut)
    options = ways.options
    built, stages, start = placement_search(after, options, every_job=False)
    staged = solve_stages(start, built, _weighed_stages(stages, after), interrupt, *limits, int, report,
                          most_priority(after, options))
    if staged.first_failed is None:
        return options, staged.search
    return purchase_options, replace(purchase, proven=False, wall_clock_stopped=staged.search.wall_clock_stopped)


def _weighed_stages(stages: list[tuple[str, cp_model.LinearExprT, bool]],
                    fleet: Fleet) -> list[tuple[str, cp_model.LinearExprT, bool]]:
    """The placement's `stages` (`placement_stages`), less its priority stage where every job of `fleet` is required
    (where the fleet marks none, `buy` requires each): it then weighs nothing, the priority placed being theirs."""
    return stages[0 if any(not job.required for job in fleet.jobs) else 1:]


def _raised(fleet: Fleet, extra: list[int]) -> Fleet:
    """`fleet` with `extra` nodes more in each pool."""
    return fleet.model_copy(update={"pools": tuple(pool.model_copy(update={"nodes": pool.nodes + more})
                                                   for pool, more in zip(fleet.pools, extra))})


def _most_nodes(planner: Planner, fleet: Fleet, job: int, pool_index: int) -> int:
    """The most nodes of the pool one way to run `job` can take: its largest trainer GPU count (the tables' or the
    estimates') on whole nodes, and its rollout GPUs on whole nodes after them: the pools raised by these together
    have room for every way the jobs have."""
    pool = fleet.pools[pool_index]
    largest = max([MAX_ESTIMATED_GPUS, *(count for counts, _ in evidence_tiers(planner, fleet, job, pool_index)
                                         for count in counts)])
    return ceil(largest / pool.gpus_per_node) + ceil(fleet.jobs[job].rollout_gpus / pool.gpus_per_node)


class _TieredWays(NamedTuple):
    """The jobs' ways of `_ways_by_tier`, each way's tier, the jobs (indexes) whose ways the time limit left unasked
    (`cut_short`), and whether the wall clock cut them (else the count of questions, or nothing; where it did, the
    time limit that would likely work them all out: `covering_time_limit_s`)."""

    options: list[Option]
    tiers: list[int]
    cut_short: tuple[int, ...]
    wall_clock_cut: bool
    covering_time_limit_s: int | None


def _ways_by_tier(planner: Planner, fleet: Fleet, limit: WaysLimit) -> _TieredWays:
    """Every job's ways in every pool it may use, of every evidence tier (`evidence_tiers`: `job_options` keeps the
    first tier that gives a way on the pool's nodes, which depends on how many are bought), with each way's tier. A
    tier is asked only for the trainer GPU counts that take fewer nodes than the earlier tiers' ways at their fewest:
    on as many nodes or more, those ways are there, and the tier's are never weighed (so a job that one node runs
    with the tables' own counts is asked about them alone, as a placement asks). Within `limit`, in `ways_order`, each
    job's ways whole, as a placement's (`fleet_options`); the jobs past it get none."""
    by_job: dict[int, list[tuple[Option, int]]] = {}  # job -> its ways, each with its tier
    cut_short: tuple[int, ...] = ()
    wall_clock_cut, covering = False, None
    order = ways_order(fleet)
    for position, job in enumerate(order):
        if reached := limit.reached(planner):
            cut_short, wall_clock_cut = tuple(sorted(order[position:])), reached == "wall clock"
            covering = limit.covering_time_limit_s(planner, fleet, order, position)
            break
        by_job[job] = [way for pool in range(len(fleet.pools)) for way in _tiered_ways(planner, fleet, job, pool)]
    tiered = [way for job in sorted(by_job) for way in by_job[job]]  # in the file's order, as a placement's
    return _TieredWays([option for option, _ in tiered], [tier for _, tier in tiered], cut_short, wall_clock_cut,
                       covering)


def _tiered_ways(planner: Planner, fleet: Fleet, job: int, pool_index: int) -> list[tuple[Option, int]]:
    """`job`'s ways in one pool, of every evidence tier, each with its tier (`_ways_by_tier`); none where it may not
    use the pool (`Job.may_use`, not `Job.may_run_in`: a pool of ``nodes: 0`` is one to buy into, docs/cluster.md)."""
    pool = fleet.pools[pool_index]
    if not fleet.jobs[job].may_use(pool):
        return []
    found: list[tuple[Option, int]] = []
    fewest = inf
    for tier, (counts, estimate) in enumerate(evidence_tiers(planner, fleet, job, pool_index)):
        fewer = [count for count in counts if (room := layout(count, fleet.jobs[job].rollout_gpus,
                                                              pool.gpus_per_node)) and (room[1] or 1) < fewest]
        ways = ways_in_pool(planner, fleet, job, pool_index, fewer, estimate)
        found += [(way, tier) for way in ways]
        fewest = min([fewest, *(way.nodes for way in ways)])
    return found


def _bought(fleet: Fleet, options: list[Option], search: Search) -> list[int]:
    """The nodes the search's placement needs beyond each pool's own (read back from the placement: the counts bought
    are at least these, and no more where their total is the least)."""
    chosen = [option for option, value in zip(options, search.values) if value]
    extra = []
    for index, pool in enumerate(fleet.pools):
        filled = sum(count for (at, _), count in search.counts.items() if at == index)
        used = filled + sum(option.whole_nodes for option in chosen if option.pool == index)
        extra.append(max(used - pool.up_nodes, 0))
    return extra
