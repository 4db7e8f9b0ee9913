"""The CP-SAT placement model: a literal per way to run a job and, per pool, how many of its nodes each pattern
fills (`build_placement_model`), with the GPUs each job takes at its fewest (`fewest_gpus`) held to the pools' where
every job runs; the nodes a placement uses (`nodes_used`), the nodes bought where a pool may grow
(`add_bought_nodes`); the running jobs kept where they run (`keep_running_jobs`), weighed in the first stage's
objective too (`first_stage_objective`); which jobs are placed where priority ties (`tied_jobs_order`; no set of
jobs differs where a placement places `most_priority`), the tie-break among equally good placements (`tie_break`),
and a placement hinted as the next search's start (`hint_placement`)."""

from __future__ import annotations

import zlib
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from ortools.sat.python import cp_model

from solver.cluster.options import (
    Footprint,
    Option,
    host_capacity_tenths,
    keeps_running,
    option_name,
    pattern_name,
    patterns,
    pools_with_ways,
)
from solver.model import LeanCpModel, new_cp_solver
from solver.tables import Fleet, Pool, RunningJob

PatternCounts = dict[tuple[int, tuple[Footprint, ...]], cp_model.IntVar]
"""Per (pool index, node pattern), how many of the pool's nodes the pattern fills."""


@dataclass(frozen=True)
class PlacementModel:
    """The placement model: a literal per option, and node-pattern counts per pool."""

    model: cp_model.CpModel
    chosen: list[cp_model.IntVar]
    pattern_counts: PatternCounts
    kept: KeptJobs | None = None
    """The running jobs' literals (`keep_running_jobs`), where the fleet runs a placement now."""


@dataclass(frozen=True)
class KeptJobs:
    """The running jobs in the placement model (`keep_running_jobs`): per running job that a way of its keeps as it
    runs, that way (`ways`, job -> option) and a literal true where it stays on its nodes and GPUs (`stays`); per node
    that running jobs share, a literal per pattern of its pool that may fill it (`fills`, by (pool, node))."""

    running: dict[int, RunningJob]
    ways: dict[int, Option]
    stays: dict[int, cp_model.IntVar]
    fills: dict[tuple[int, int], dict[tuple[Footprint, ...], cp_model.IntVar]]

    def kept(self, value: Callable[[cp_model.IntVar], int]) -> Kept:
        """The jobs that stay, and the pattern that fills each node running jobs share, as `value` reads them."""
        fills = {node: next(pattern for pattern, literal in by_pattern.items() if value(literal))
                 for node, by_pattern in self.fills.items() if any(map(value, by_pattern.values()))}
        return Kept({job: self.running[job] for job, literal in self.stays.items() if value(literal)}, fills,
                    tuple(self.running.values()))


@dataclass(frozen=True)
class Kept:
    """A placement's running jobs that stay (`staying`: job -> where it runs), the pattern that fills each node
    that running jobs share and the placement keeps (`fills`, by (pool, node): those nodes keep their indexes), and
    every job that runs now, staying or not (`running`)."""

    staying: dict[int, RunningJob]
    fills: dict[tuple[int, int], tuple[Footprint, ...]]
    running: tuple[RunningJob, ...] = ()


def required_jobs(fleet: Fleet, every_job: bool) -> frozenset[int]:
    """The jobs (indexes) a placement must place: every one with `every_job`, else those the fleet marks required."""
    return frozenset(index for index, job in enumerate(fleet.jobs) if every_job or job.required)


def required_names(fleet: Fleet) -> tuple[str, ...]:
    """The names of the jobs the fleet marks required, in its order (`ClusterResult.required`)."""
    return tuple(job.name for job in fleet.jobs if job.required)


def build_placement_model(fleet: Fleet, options: list[Option], every_job: bool) -> PlacementModel:
    """Choose at most one option per job (exactly one for each required job: every job with `every_job`, else those
    the fleet marks ``required``, where the GPUs they take at their fewest are held to the pools' too:
    `_within_fleet_gpus`) so that every pool has room."""
    model = LeanCpModel()
    model.name = "place jobs"
    chosen = [model.new_bool_var(f"way_{option_name(fleet, o)}") for o in options]
    required = required_jobs(fleet, every_job)
    _one_way_per_job(model, len(fleet.jobs), options, chosen, required)
    pattern_counts: PatternCounts = {}
    for pool_index, pool in enumerate(fleet.pools):
        here = [(o, x) for o, x in zip(options, chosen) if o.pool == pool_index]
        footprints = {o.footprint for o, _ in here if o.size}
        filled = _nodes_filled(model, pool_index, pool, footprints)
        _within_pool_nodes(model, pool, filled, here)
        _within_pattern_slots(model, filled, here, footprints)
        pattern_counts.update(filled)
    if required:
        _within_fleet_gpus(model, fleet, options, chosen, required)
    return PlacementModel(model=model, chosen=chosen, pattern_counts=pattern_counts)


def _one_way_per_job(model: cp_model.CpModel, jobs: int, options: list[Option], chosen: list[cp_model.IntVar],
                     required: frozenset[int]) -> None:
    """Each of the `jobs` runs one of its ways at most (exactly one where it is `required`: a required job without a
    way makes the model infeasible)."""
    by_job: dict[int, list[cp_model.IntVar]] = defaultdict(list)
    for option, literal in zip(options, chosen):
        by_job[option.job].append(literal)
    for job in range(jobs):
        literals = by_job.get(job, [])
        if job in required:
            model.add_exactly_one(literals)
        else:
            model.add_at_most_one(literals)


def fewest_gpus(fleet: Fleet, options: Sequence[Option]) -> tuple[dict[int, int], dict[int, frozenset[int]]]:
    """Per job with a way: the fewest GPUs a way of its takes (whole nodes counted whole), and the pools (indexes) its
    ways are in."""
    fewest: dict[int, int] = {}
    for option in options:
        gpus = option.gpus_taken(fleet.pools[option.pool].gpus_per_node)
        fewest[option.job] = min(fewest.get(option.job, gpus), gpus)
    return fewest, pools_with_ways(options)


def _within_fleet_gpus(model: cp_model.CpModel, fleet: Fleet, options: list[Option],
                       chosen: list[cp_model.IntVar], required: frozenset[int]) -> None:
    """Where the `required` jobs each run one of their ways: in the whole fleet, and in each set of pools that some
    required job's ways are all in, the GPUs the ways chosen there take (whole nodes counted whole) are at most those
    pools' GPUs. Redundant with the pattern counts, but put so that CP-SAT proves a fleet too small as it loads the
    model, before any search: each required job whose ways are all in the set is counted at its fewest GPUs
    (`fewest_gpus`) on the right-hand side, and only the GPUs its way takes beyond them on the left (its ways'
    literals sum to one); a job not required counts whole on the left."""
    fewest, reach = fewest_gpus(fleet, options)
    reach = {job: where for job, where in reach.items() if job in required}
    everywhere = frozenset(range(len(fleet.pools)))
    for pools in sorted(set(reach.values()) | {everywhere}, key=sorted):
        confined = {job for job, where in reach.items() if where <= pools}
        beyond = [(option.gpus_taken(fleet.pools[option.pool].gpus_per_node)
                   - (fewest[option.job] if option.job in confined else 0)) * literal
                  for option, literal in zip(options, chosen) if option.pool in pools]
        has = sum(fleet.pools[index].up_nodes * fleet.pools[index].gpus_per_node for index in pools)
        model.add(sum(beyond) <= has - sum(fewest[job] for job in confined))


def _nodes_filled(model: cp_model.CpModel, pool_index: int, pool: Pool, footprints: set[Footprint]) -> PatternCounts:
    """A count per way to fill one of the pool's nodes with these footprints (`patterns`): how many nodes it fills (of
    those up)."""
    return {(pool_index, pattern): model.new_int_var(0, pool.up_nodes,
                                                     f"pool{pool_index}_nodes_filled_{pattern_name(pattern)}")
            for pattern in patterns(footprints, pool.gpus_per_node, host_capacity_tenths(pool))}


def _within_pool_nodes(model: cp_model.CpModel, pool: Pool, filled: PatternCounts,
                       here: list[tuple[Option, cp_model.IntVar]]) -> None:
    """The nodes the patterns fill and those the pool's whole-node ways (`here`) take are the pool's at most, less
    those ``down``."""
    whole = [o.whole_nodes * x for o, x in here if o.whole_nodes]
    model.add(sum(filled.values()) + sum(whole) <= pool.up_nodes)


def _within_pattern_slots(model: cp_model.CpModel, filled: PatternCounts, here: list[tuple[Option, cp_model.IntVar]],
                          footprints: set[Footprint]) -> None:
    """The pool's ways (`here`) of each footprint that share a node are at most its places in the patterns filled."""
    for footprint in footprints:
        slots = [pattern.count(footprint) * count for (_, pattern), count in filled.items() if footprint in pattern]
        model.add(sum(x for o, x in here if o.size and o.footprint == footprint) <= sum(slots))


def nodes_used(built: PlacementModel, options: list[Option], pool_index: int | None = None) -> cp_model.LinearExprT:
    """The nodes the placement uses: those its patterns fill and those its whole-node ways take, in one pool (None:
    in all)."""
    filled = [count for (pool, _), count in built.pattern_counts.items() if pool_index in (None, pool)]
    whole = [o.whole_nodes * x for o, x in zip(options, built.chosen)
             if o.whole_nodes and pool_index in (None, o.pool)]
    return sum(filled) + sum(whole)


def add_bought_nodes(built: PlacementModel, owned: Fleet, options: list[Option], tiers: Sequence[int],
                     most: Sequence[int]) -> list[cp_model.IntVar]:
    """Per pool of the fleet as `owned`, how many nodes are bought (0 to its `most`), to a model built on the fleet
    with each pool's nodes raised by its `most`: the nodes a pool's placement uses are at most those owned and bought.
    A way (`options`, each of its evidence tier in `tiers`, as `evidence_tiers` orders them) runs only where the pool
    has its nodes, and only where no way of an earlier tier for its job there does (`job_options` asks the tiers in
    turn and keeps the first that gives a way on the pool's nodes)."""
    model = built.model
    bought = [model.new_int_var(0, up_to, f"pool{index}_bought") for index, up_to in enumerate(most)]
    for index, pool in enumerate(owned.pools):
        model.add(nodes_used(built, options, index) <= pool.up_nodes + bought[index])
    fewest: dict[tuple[int, int], dict[int, int]] = defaultdict(dict)  # (job, pool): per tier, its ways' fewest nodes
    for option, tier in zip(options, tiers):
        by_tier = fewest[option.job, option.pool]
        by_tier[tier] = min(by_tier.get(tier, option.nodes), option.nodes)
    for option, tier, chosen in zip(options, tiers, built.chosen):
        owned_nodes = owned.pools[option.pool].up_nodes
        if option.nodes > owned_nodes:
            model.add(bought[option.pool] >= option.nodes - owned_nodes).only_enforce_if(chosen)
        for earlier, nodes in fewest[option.job, option.pool].items():
            if earlier < tier:  # that tier's ways run once the pool has their nodes: this one only on fewer
                model.add(bought[option.pool] <= nodes - owned_nodes - 1).only_enforce_if(chosen)
    return bought


def keep_running_jobs(built: PlacementModel, fleet: Fleet, options: list[Option],
                      running: Sequence[RunningJob]) -> PlacementModel:
    """`built` with a literal per `running` job that one of its ways keeps as it runs (`keeps_running`): true only where
    the job runs that way on its nodes. A job on whole nodes keeps them with its way; a job sharing a node keeps it
    where one of the patterns the pool fills is that node's (a literal per pattern, at most one; a pattern's nodes
    kept are among those it fills) and holds, with the other running jobs that stay there, their footprints."""
    model = built.model
    ways: dict[int, Option] = {}
    stays: dict[int, cp_model.IntVar] = {}
    on_node: dict[tuple[int, int], list[tuple[Footprint, cp_model.IntVar]]] = defaultdict(list)
    for job in running:
        found = next(((o, x) for o, x in zip(options, built.chosen)
                      if o.job == job.job and keeps_running(fleet, o, job)), None)
        if found is None:
            continue
        ways[job.job], way = found
        stays[job.job] = model.new_bool_var(f"stays_{fleet.jobs[job.job].name}")
        model.add_implication(stays[job.job], way)
        if ways[job.job].size:
            on_node[job.pool, job.nodes[0]].append((ways[job.job].footprint, stays[job.job]))
    fills = {(pool, node): {pattern: model.new_bool_var(f"pool{pool}_node{node}_kept_{pattern_name(pattern)}")
                            for (p, pattern) in built.pattern_counts if p == pool} for pool, node in on_node}
    for spot, staying in on_node.items():
        model.add_at_most_one(fills[spot].values())
        for footprint in {footprint for footprint, _ in staying}:
            model.add(sum(stay for f, stay in staying if f == footprint)
                      <= sum(pattern.count(footprint) * literal for pattern, literal in fills[spot].items()))
    for (pool, pattern), count in built.pattern_counts.items():
        kept_here = [by_pattern[pattern] for (p, _), by_pattern in fills.items() if p == pool]
        if kept_here:
            model.add(count >= sum(kept_here))
    return replace(built, kept=KeptJobs({job.job: job for job in running}, ways, stays, fills))


def placement_stages(fleet: Fleet, options: list[Option], built: PlacementModel,
                     every_job: bool) -> list[tuple[str, cp_model.LinearExprT, bool]]:
    """The objectives `solve_stages` solves in turn, as (name, expression, maximise): the total priority of the
    placed jobs (with `every_job`, the fewest nodes used instead), the running jobs kept where they run (where
    `built` keeps them: `keep_running_jobs`), which jobs are placed where priority ties (`tied_jobs_order`; not where
    every job must be placed, and `solve_stages` skips it where the first stage places `most_priority`), the length
    the ``at_least`` jobs gain, the least total cost, and last a tie-break.
    Which jobs run is thus settled before length and cost (but where `tied_jobs_order` ties too), which weigh only how
    the same jobs run: a plan's cost is relative to its own model's vanilla step, so the costs of different jobs do
    not compare."""
    priority = sum(fleet.jobs[o.job].priority * x for o, x in zip(options, built.chosen))
    gain = sum(o.gain * x for o, x in zip(options, built.chosen) if o.gain)
    cost = sum(o.cost * x for o, x in zip(options, built.chosen))
    first_stage = ("nodes", nodes_used(built, options), False) if every_job else ("priority", priority, True)
    stays: list[tuple[str, cp_model.LinearExprT, bool]] = [] if built.kept is None else [
        ("stays", sum(built.kept.stays.values()), True)]
    required = required_jobs(fleet, every_job)
    jobs: list[tuple[str, cp_model.LinearExprT, bool]] = [] if len(required) == len(fleet.jobs) else [
        ("jobs", tied_jobs_order(fleet, options, built, required), True)]
    return [first_stage, *stays, *jobs, ("length", gain, True), ("cost", cost, False),
            ("tie-break", tie_break(fleet, options, built), False)]


def tied_jobs_order(fleet: Fleet, options: list[Option], built: PlacementModel,
                    required: frozenset[int]) -> cp_model.LinearExprT:
    """An objective (maximised) that picks which jobs are placed among placements of as much priority (and running
    jobs kept): the priority placed earlier in the file, as a queue serves jobs first. Each placed job not `required`
    weighs its priority times its place counted from the end of the file (the first of n jobs n, the last 1), so
    the count of jobs, which priority already weighs, favours no set: where every job one placement places and the
    other does not comes earlier in the file than every job the other places instead, the first wins, however many
    jobs each holds (a job of priority 2 first in the file is placed before two of priority 1 after it). Where those
    sums tie too, the stages after it decide, as before it. The same on every run; no judgment of the jobs (their
    priorities are the user's), so a job it leaves out is said to be left out in a tie."""
    return sum(tied_job_weight(fleet, o.job, fleet.jobs[o.job].priority) * x
               for o, x in zip(options, built.chosen) if o.job not in required)


def most_priority(fleet: Fleet, options: Sequence[Option]) -> int:
    """The priority of every job with a way (`options`) together: the most a placement places. A placement that places
    it places every job with a way (each job's priority is at least 1), so no set of jobs differs from it and the
    stage of jobs tied in priority (`tied_jobs_order`) can change nothing (`solve_stages` skips it)."""
    return sum(fleet.jobs[job].priority for job in {option.job for option in options})


def tied_job_weight(fleet: Fleet, job: int, priority: int) -> int:
    """What job `job` (its index) placed weighs in `tied_jobs_order` at `priority`: that times its place counted
    from the end of the file."""
    return priority * (len(fleet.jobs) - job)


def first_stage_objective(built: PlacementModel, count: cp_model.LinearExprT, maximise: bool
                         ) -> tuple[cp_model.LinearExprT, int]:
    """The first stage's objective as CP-SAT solves it, and the weight of the stage's own `count` in it: where `built`
    keeps running jobs (`keep_running_jobs`), the count weighed one more than the running jobs that may stay, plus
    (maximised; minimised, minus) those that stay, so that the stage's placement keeps the most running jobs that a
    placement of its count keeps, should the stage of running jobs kept not run (`count_of` reads the count back);
    else the count itself, weight 1."""
    if built.kept is None:
        return count, 1
    weight = len(built.kept.stays) + 1
    stays = sum(built.kept.stays.values())
    return weight * count + (stays if maximise else -stays), weight


def count_of(value: int, weight: int, maximise: bool) -> int:
    """The first stage's own count in a `value` (or bound) of its objective as `first_stage_objective` weighs it: the
    running jobs kept, fewer than `weight`, taken off (maximised: rounded down; minimised: up)."""
    return value // weight if maximise else -(-value // weight)


def placement_solver(workers: int, seed: int) -> cp_model.CpSolver:
    """The placement's CP-SAT solver (`new_cp_solver`: Ctrl-C is left to `search.StopOnInterrupt`), relaxing every
    constraint: the LP relaxation of all of them, not only the linear ones, closes the pattern counts' bounds within a
    second where the default level took the whole time limit (host memory, few nodes; benchmarks/README.md)."""
    solver = new_cp_solver(workers, seed)
    solver.parameters.linearization_level = 2
    return solver


def tie_break(fleet: Fleet, options: list[Option], built: PlacementModel) -> cp_model.LinearExprT:
    """An objective that picks one placement among equally good ones, the same whatever the search did:
    a fixed pseudo-random weight per option and per node pattern (CRC-32 of their names; with running jobs, per job
    kept and per pattern that may fill a node they share too) makes the lightest of the optimal placements unique
    with high probability (the isolation lemma)."""
    kept_literals = 0 if built.kept is None else len(built.kept.stays) + sum(map(len, built.kept.fills.values()))
    spread = 4 * (len(options) + len(built.pattern_counts) + kept_literals) ** 2

    def weight(text: str) -> int:
        return 1 + zlib.crc32(text.encode()) % spread

    chosen = [weight(option_name(fleet, o)) * x
              for o, x in zip(options, built.chosen)]
    filled = [weight(f"{fleet.pools[pool].name}|{pattern_name(pattern)}") * count for (pool, pattern), count
              in built.pattern_counts.items()]
    kept = [] if built.kept is None else [
        *(weight(f"stays|{fleet.jobs[job].name}") * literal for job, literal in built.kept.stays.items()),
        *(weight(f"{fleet.pools[pool].name}|{node}|{pattern_name(pattern)}") * literal
          for (pool, node), by_pattern in built.kept.fills.items() for pattern, literal in by_pattern.items())]
    return sum(chosen) + sum(filled) + sum(kept)


def hint_placement(built: PlacementModel, values: list[int],
                   counts: dict[tuple[int, tuple[Footprint, ...]], int], kept: Kept | None = None) -> None:
    """Start the next search from this placement: with the running jobs it keeps where they run and the patterns
    filling the nodes they share (`kept`), where `built` keeps running jobs (`keep_running_jobs`)."""
    built.model.clear_hints()
    for literal, value in zip(built.chosen, values):
        built.model.add_hint(literal, value)
    for key, var in built.pattern_counts.items():
        built.model.add_hint(var, counts[key])
    if built.kept is None or kept is None:
        return
    for job, stays in built.kept.stays.items():
        built.model.add_hint(stays, job in kept.staying)
    for spot, by_pattern in built.kept.fills.items():
        for pattern, literal in by_pattern.items():
            built.model.add_hint(literal, kept.fills.get(spot) == pattern)
