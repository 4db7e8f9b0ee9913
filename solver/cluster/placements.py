"""Chosen ways as `Placement`s (`as_placement`), which GPUs each job takes on its node (`gpus_on_nodes`), and what
they use of each pool (`pool_use`): the search and the greedy baseline give their answers so; and which of them stay
where they run now, move (and why: `why_moved`), start or stop (`with_current`)."""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import TypeVar

from solver.cluster.options import (
    Option,
    Planner,
    WallClockPassed,
    asks_length,
    host_capacity_tenths,
    keeps_running,
    layout,
    release_kept,
)
from solver.cluster.widen import ways_to_grow
from solver.memory import rollout_engines, shown_host_need
from solver.results import (
    Caution,
    ClusterResult,
    MoveCode,
    Placement,
    PoolUse,
    PurchaseResult,
    RunsAt,
    StayCode,
    Unplaced,
    node_host_need_caution,
    trainer_spans_nodes_caution,
)
from solver.rules import trainer_node_count, trainer_nodes_of
from solver.tables import NO_CRITIC, AtLeast, Fleet, Job, Pool, RunningJob, and_joined, counted, either
from solver.tables.peft_match import ALL_LINEAR

Answered = TypeVar("Answered", ClusterResult, PurchaseResult)
"""A placement (`ClusterResult`) or a purchase (`PurchaseResult`): `with_solve_best` gives back what it is given."""


def pool_use(fleet: Fleet, placements: Sequence[Placement]) -> tuple[PoolUse, ...]:
    """What `placements` use of each pool of `fleet`: the nodes a job uses, the GPUs the jobs take and the host memory
    they need together on the fullest node (`fullest_node_host_gb`), beside the node's own; and the nodes that are
    down."""
    return tuple(PoolUse(pool=pool.name, nodes=pool.nodes, gpus=pool.nodes * pool.gpus_per_node, down=pool.down,
                         nodes_used=len({node for p in placements if p.pool == pool.name for node in p.nodes}),
                         gpus_used=sum(p.trainer_gpus + p.rollout_gpus for p in placements if p.pool == pool.name),
                         host_ram_gb=pool.host_ram_gb, fullest_node_host_gb=fullest_node_host_gb(pool, placements))
                 for pool in fleet.pools)


def fullest_node_host_gb(pool: Pool, placements: Sequence[Placement]) -> float | None:
    """The most host memory the jobs placed in `pool` (those of `placements` there) need together on one of its nodes,
    GiB: each one's `host_need_gb` on the nodes its trainer runs on, added up in the tenths the tables show; None where
    none needs any, or the pool gives no ``host_ram_gb`` (most of its jobs without Offload have no need counted then,
    so a sum would understate the node's: `FULLEST_NODE_WORDS`)."""
    if pool.host_ram_gb is None:
        return None
    tenths = [sum(round(gib * 10) for _, gib in needs) for needs in _host_needs_by_node(pool, placements).values()]
    return max(tenths) / 10 if tenths else None


def _host_needs_by_node(pool: Pool, placements: Sequence[Placement]) -> dict[int, list[tuple[str, float]]]:
    """Per node of `pool`, the jobs of `placements` whose trainer runs there with a host memory need counted
    (`Placement.host_need_gb`), each with that need, GiB."""
    on_node: dict[int, list[tuple[str, float]]] = defaultdict(list)
    for placement in placements:
        if placement.pool == pool.name and (need := placement.host_need_gb) is not None:
            for node in placement.trainer_nodes:
                on_node[node].append((placement.job, need))
    return on_node


def with_node_host_cautions(planner: Planner, fleet: Fleet, placements: tuple[Placement, ...]
                            ) -> tuple[Placement, ...]:
    """`placements`, those of each node of a pool without ``host_ram_gb`` whose jobs' host memory needs there (their
    `host_need_gb`, on the nodes their trainer runs on) add up past what the node is assumed to have cautioned so
    (`node_host_need_caution`), each with its node's words."""
    cautions: dict[str, list[Caution]] = defaultdict(list)
    for pool in fleet.pools:
        if pool.host_ram_gb is not None:
            continue
        for node, needs in sorted(_host_needs_by_node(pool, placements).items()):
            caution = node_host_need_caution(pool.name, node, needs, planner.catalog.gpu(pool.gpu), pool.gpus_per_node)
            if caution is not None:
                for job, _ in needs:
                    cautions[job].append(caution)
    cautioned = []
    for placement in placements:
        plan = placement.plan
        for caution in cautions[placement.job]:
            plan = plan.with_caution(caution)
        cautioned.append(placement if plan is placement.plan else placement.model_copy(update={"plan": plan}))
    return tuple(cautioned)


class IdleRoom:
    """The room the `final` placement (each placed job's option and nodes, grown onto idle GPUs) leaves idle: per
    pool, each node's idle GPUs (`gpus`) and host memory (`host`, tenths of a GiB: the pool's less the placed jobs' own
    needs on a node they share, `Planner.host_tenths`; 0 where the pool does not give it; none on a node that is
    down), and the nodes no job uses (`empty`: not those down)."""

    def __init__(self, planner: Planner, fleet: Fleet, final: Mapping[int, tuple[Option, Sequence[int]]]) -> None:
        self.planner, self.fleet = planner, fleet
        self.gpus = [[0 if node in pool.down else pool.gpus_per_node for node in range(pool.nodes)]
                     for pool in fleet.pools]
        self.host = [[0 if node in pool.down else host_capacity_tenths(pool) or 0 for node in range(pool.nodes)]
                     for pool in fleet.pools]
        for job, (option, nodes) in final.items():
            pool = fleet.pools[option.pool]
            for node in nodes:
                self.gpus[option.pool][node] -= option.gpus_per_node(pool.gpus_per_node)
                self.host[option.pool][node] -= (0 if pool.host_ram_gb is None or not option.size else
                                                 planner.host_tenths(fleet.jobs[job], option.plan))
        self.empty = [[node for node in range(pool.nodes) if self.gpus[index][node] == pool.gpus_per_node]
                      for index, pool in enumerate(fleet.pools)]

    def room_for(self, option: Option, job: Job) -> tuple[int, ...]:
        """The first node whose idle GPUs and host memory hold `option` (a way of `job`), or the first idle
        nodes it takes whole; () where the idle room holds it nowhere."""
        pool = self.fleet.pools[option.pool]
        if not option.size:
            empty = self.empty[option.pool]
            return tuple(empty[:option.whole_nodes]) if len(empty) >= option.whole_nodes else ()
        need = 0 if pool.host_ram_gb is None else self.planner.host_tenths(job, option.plan)
        return next(((node,) for node in range(pool.nodes) if option.size <= self.gpus[option.pool][node]
                     and need <= self.host[option.pool][node]), ())


def gpus_on_nodes(fleet: Fleet, in_order: Iterable[tuple[int, Option, int]],
                  staying: Mapping[int, RunningJob] | None = None) -> dict[int, tuple[int, ...]]:
    """The GPUs each job takes on each of its nodes, given (job, option, first node) in the order a shared node fills
    from GPU 0: the lowest GPUs the jobs before it leave; a running job that stays (`staying`) those it runs on, which
    the others then leave to it; every GPU of a node taken whole."""
    in_order = list(in_order)
    staying = staying or {}
    used: dict[tuple[int, int], set[int]] = defaultdict(set)
    for job, option, node in in_order:
        if job in staying and option.size:
            used[option.pool, node].update(staying[job].gpu_indexes)
    gpus: dict[int, tuple[int, ...]] = {}
    for job, option, node in in_order:
        node_gpus = range(fleet.pools[option.pool].gpus_per_node)
        if not option.size or job in staying:
            gpus[job] = tuple(node_gpus) if not option.size else staying[job].gpu_indexes
            continue
        gpus[job] = tuple([gpu for gpu in node_gpus if gpu not in used[option.pool, node]][:option.size])
        used[option.pool, node].update(gpus[job])
    return gpus


def as_placement(planner: Planner, fleet: Fleet, option: Option, nodes: list[int], gpus: tuple[int, ...],
                 widened_from: int | None = None, moved_to_widen: bool = False) -> Placement:
    """A chosen option on its nodes, taking `gpus` of each (`gpus_on_nodes`), and,
    in a pool that checks it, the host memory it needs per node, and its rollout's engines (`rollout_engines`); its
    plan cautioned where the tables say it runs out of memory (`Planner.with_tables_caution`, with --estimate);
    `widened_from`: the trainer GPUs it was placed with, where it grew onto idle GPUs of its node; `moved_to_widen`:
    whether widening moved it alone onto a node no job used. Its `solve_best` is asked last (`with_solve_best`)."""
    job, pool = fleet.jobs[option.job], fleet.pools[option.pool]
    model = planner.catalog.model(job.model)  # its rollout's vLLM keeps LoRA slots for every module it supports
    release = planner.release_of(job.training)
    host = None if pool.host_ram_gb is None else shown_host_need(
        planner.job_model(job), option.plan.gpus, pool.gpus_per_node, option.plan.offload, release.version,
        option.plan.reference_model, option.plan.lora_rank, option.plan.critic, release.expert_layout,
        option.plan.model_loading)
    engines = rollout_engines(model, planner.catalog.gpu(pool.gpu).memory_gib, option.rollout_gpus,
                              option.plan.max_model_len, pool.gpus_per_node,
                              lora_rank=option.plan.lora_rank) if option.rollout_gpus else None
    plan = planner.with_tables_caution(pool.gpu, job, option.plan)
    spans = trainer_spans_nodes_caution(trainer_nodes_of(option.plan.gpus, pool.gpus_per_node), pool.node_interconnect)
    return Placement(job=job.name, pool=pool.name, model=job.model, gpu=pool.gpu, nodes=tuple(nodes),
                     gpu_indexes=gpus,
                     trainer_gpus=option.plan.gpus, rollout_gpus=option.rollout_gpus,
                     asked_rollout_gpus=job.rollout_gpus, widened_from=widened_from,
                     moved_to_widen=moved_to_widen or None,
                     asked_max_model_len=job.asked_max_model_len, at_least=isinstance(job.max_model_len, AtLeast),
                     at_most=job.at_most, stopped_at_validated=option.stopped_at_validated or None,
                     plan=(plan if spans is None else plan.with_caution(spans)).model_copy(
                         update={"nodes": len(nodes), "rollout_gpus": option.rollout_gpus}),
                     host_memory_gb=host, rollout_engine_size=None if engines is None else engines.size,
                     rollout_engines=engines)


def with_solve_best(planner: Planner, fleet: Fleet, result: Answered, ways: Mapping[int, Option],
                    until: float | None) -> Answered:
    """`result` (a placement, or a purchase's) with each placed job's `solve_best`, the cheaper estimate `solve` gives
    it on its trainer GPUs where its plan is the tables' (`Planner.solve_best`, of its way as placed: `ways`, job ->
    option), asked last, in the placements' order, until the wall clock's `until` (a `time.monotonic()`: the answer's
    deadline; None: none), a question asked before answered still; a job whose ways the time limit cut short
    (`Option.ways_cut_short`) asks nothing. A question the time cut short (not asked by then, or its solve undecided)
    is skipped, the job left without one: `solve_best_unasked` counts them, and ``solve best`` in
    `wall_clock_stopped` says the wall clock cut them; once Ctrl-C has come (before, `result.interrupted`, or while
    they are asked: then `solve_best_interrupted`, the answer whole), the rest are skipped and counted so."""
    by_name = {fleet.jobs[job].name: option for job, option in ways.items()}
    placements: list[Placement] = []
    unasked, cut, came = 0, False, False
    with planner.asking_until(until):
        for placed in result.placements:
            option = by_name[placed.job]
            asks, best = not option.ways_cut_short and planner.asks_solve_best(option.plan), None
            if asks and (result.interrupted or came):
                unasked += 1
            elif asks:
                try:
                    best = planner.solve_best(fleet.pools[option.pool], fleet.jobs[option.job], option.plan)
                except WallClockPassed:
                    cut, unasked = True, unasked + 1
                except KeyboardInterrupt:  # the placement stands, worked out: the questions left are not asked
                    came, unasked = True, unasked + 1
            placements.append(placed if best is None else placed.model_copy(update={"solve_best": best}))
    return result.model_copy(update={
        "placements": tuple(placements), "solve_best_unasked": unasked, "solve_best_interrupted": came,
        "wall_clock_stopped": result.wall_clock_stopped + (("solve best",) if cut else ())})


def with_current(planner: Planner, fleet: Fleet, result: ClusterResult, running: Sequence[RunningJob],
                 options: Sequence[Option] = (), kept_most: int | None = None,
                 undecided_jobs: frozenset[int] = frozenset(), *,
                 final: Mapping[int, tuple[Option, Sequence[int]]], widens: bool,
                 until: float | None = None) -> ClusterResult:
    """`result` with each placement's `current`, where the fleet runs `running` now: ``stays`` where it runs as it
    does now (its model, pool, nodes, GPUs, trainer and rollout GPUs, and its plan's length, SP and Offload), saying
    so where its trainer GPU count or settings are its own, not the planner's (`kept_as_it_runs`), and where keeping
    it forgoes a wider way on the idle GPUs beside it (`widens`: where the placement grows jobs) or a cheaper way in
    another pool's idle room (`forgone_words`, the room `final` leaves: each placed job's way and nodes); ``moves``
    otherwise, with why (`why_moved`: from the ways the search had, `options`, the running jobs it keeps where that is
    proven the most a placement of its objective keeps over every job's ways, `kept_most`, else None, and the jobs
    whose ways rest on a solve that ran out of time, `undecided_jobs`, indexes), ``starts`` where it does not run now;
    and each unplaced job that runs now marked ``stops``, with what the file asks of it otherwise now than it runs
    (`stop_reason`: a node or GPU its pool no longer has, ...; as a moving job's first reasons). A result without a
    placement (no objective: `infeasible`, `unknown`) is left as it is: it tells no running job to stop. The planner's
    questions of the wider ways are asked until the wall clock's `until` (a `time.monotonic()`, the run's time limit;
    None: no limit): a job whose wider ways it leaves unasked says so (`unweighed_words`), and the answer names the
    step (``stay notes``) in `wall_clock_stopped`."""
    if result.objective is None:
        return result
    now = {fleet.jobs[job.job].name: job for job in running}
    idle = IdleRoom(planner, fleet, final)
    ways: dict[tuple[int, int], list[Option]] = defaultdict(list)  # (job, pool) -> its ways there
    for option in options:
        ways[option.job, option.pool].append(option)
    priorities = {fleet_job.name: fleet_job.priority for fleet_job in fleet.jobs}
    unweighed: list[str] = []  # the jobs whose wider ways the wall clock left unasked
    taking: dict[tuple[str, int, int], list[tuple[str, int]]] = defaultdict(list)  # (pool, node, GPU) -> its jobs
    for placed in result.placements:
        for node, gpu in itertools.product(placed.nodes, placed.gpu_indexes):
            taking[placed.pool, node, gpu].append((placed.job, priorities[placed.job]))

    def placed_as_it_runs(placed: Placement, job: RunningJob) -> bool:
        """Whether the running `job` is `placed` as it runs: its pool, nodes, GPUs, plan and Trinity release."""
        as_now = (fleet.pools[job.pool].name, job.nodes, job.gpu_indexes, job.trainer_gpus, job.rollout_gpus,
                  job.max_model_len, job.sp, job.offload)
        plan = placed.plan
        as_placed = (placed.pool, placed.nodes, placed.gpu_indexes, placed.trainer_gpus, placed.rollout_gpus,
                     plan.max_model_len, plan.sp, plan.offload)
        trains_as_now = job.training in (None, (plan.lora_rank, plan.critic, plan.dpo, plan.lora_target_modules,
                                                plan.lora_exclude_modules))
        return (as_now == as_placed and job.model in (None, placed.model) and trains_as_now
                and release_kept(fleet, job))

    # The jobs that stay, as the placement keeps them running (beside which a job that moves may have had no room).
    kept = [placed for placed in result.placements
            if (job := now.get(placed.job)) is not None and placed_as_it_runs(placed, job)]

    def current(placed: Placement) -> dict[str, object]:
        job = now.get(placed.job)
        if job is None:
            return {"current": "starts"}
        mine = ways[job.job, job.pool]
        if any(option.ways_cut_short for option in mine):
            return {"current": "stays", "stay_reason_code": StayCode.WAYS_CUT_SHORT, "stay_reason": (
                "kept as it runs: the time limit cut working out its ways short, so no other way of its was weighed "
                f"(raise {planner.option_names.time_limit})")}
        if placed in kept:
            ways_kept = (final[job.job][0], options)
            try:
                with planner.asking_until(until):
                    forgone = forgone_words(planner, fleet, job, ways_kept, idle, widens)
            except WallClockPassed:  # its wider ways unasked: another pool's weighed against its own way alone
                unweighed.append(placed.job)
                forgone = (unweighed_words(planner, idle, job), forgone_words(planner, fleet, job, ways_kept, idle,
                                                                              widens=False)[1])
            kept_so = stay_words(job, kept_as_it_runs(fleet, job, mine), forgone)
            return {"current": "stays"} if kept_so is None else {
                "current": "stays", "stay_reason": kept_so[1], "stay_reason_code": kept_so[0]}
        pool = fleet.pools[job.pool].name
        holders = list(dict.fromkeys(holder for node, gpu in itertools.product(job.nodes, job.gpu_indexes)
                                     for holder in taking[pool, node, gpu] if holder[0] != placed.job))
        code, words = why_moved(planner, fleet, result, job, (mine, holders, kept),
                                (kept_most, job.job in undecided_jobs))
        return {"current": "moves", "move_reason": words, "move_reason_code": code,
                "moved_from": RunsAt(pool=pool, nodes=job.nodes, gpu_indexes=job.gpu_indexes, trainer_nodes=job.nodes[
                    :trainer_node_count(job.trainer_gpus, job.rollout_gpus, len(job.nodes))])}

    def stopped(left: Unplaced) -> dict[str, object]:
        job = now.get(left.job)
        if job is None:
            return {"current": None}
        changed = _asks_otherwise(planner, fleet, job)  # what it cannot stay as it runs for, as a moving job's
        return {"current": "stops"} if changed is None else {
            "current": "stops", "stop_reason_code": changed[0], "stop_reason": changed[1]}

    placements = tuple(placed.model_copy(update=current(placed)) for placed in result.placements)
    return result.model_copy(update={
        "placements": placements,
        "unplaced": tuple(left.model_copy(update=stopped(left)) for left in result.unplaced),
        "wall_clock_stopped": result.wall_clock_stopped + (("stay notes",) if unweighed else ())})


def unweighed_words(planner: Planner, idle: IdleRoom, job: RunningJob) -> str:
    """What the running `job`, kept beside idle GPUs on its node, says where the time limit left the planner's
    questions of its wider ways there unasked (`with_current`)."""
    free_gpus = idle.gpus[job.pool][job.nodes[0]]
    return (f"the time limit ran out before the wider ways the {counted(free_gpus, 'idle GPU')} beside it on its node "
            f"would give it were weighed (raise {planner.option_names.time_limit})")


def why_moved(planner: Planner, fleet: Fleet, result: ClusterResult, job: RunningJob,
              there: tuple[Sequence[Option], Sequence[tuple[str, int]], Sequence[Placement]],
              proofs: tuple[int | None, bool]) -> tuple[MoveCode, str]:
    """Why the running `job` moves in `result` (its code and words), from the file as it asks the job now, the
    ways the search had for it in its pool, the jobs `result` places on its GPUs (each job's name and priority) and
    the running jobs it keeps as they run (`there`): the file pins it to another pool, its pool has no nodes now or
    not its nodes or GPUs, or the file asks another model, length or rollout GPUs;
    no way runs it at its trainer GPU count in its pool, or none as it runs (`keeps_running`: on as many GPUs and
    nodes, with its SP and Offload); else the search chose to move it though a way keeps it: where the stage of
    running jobs kept proved the most a placement of `result`'s objective keeps (`proofs`' first: that many, the
    jobs it keeps; None where not proven, or not over every job's ways), keeping it as well would keep one more, so
    that placement would place less priority (or use more nodes), naming the host memory of its node where it does
    not hold the job beside the jobs kept there (`_host_kept_words`); not proven otherwise (naming the pools whose host
    memory `result` rounded, where it did: no time limit proves it then). A reason about its ways is not proven where
    a solve behind them ran out of time (`proofs`' second)."""
    pool = fleet.pools[job.pool]
    changed = _asks_otherwise(planner, fleet, job)
    if changed is not None:
        return changed
    mine, holders, kept = there
    kept_most, undecided = proofs
    unproven = (MoveCode.MOVE_UNPROVEN, f"the placement is not proven best (raise {planner.option_names.time_limit})")
    if not any(keeps_running(fleet, option, job) for option in mine):
        if undecided:
            return unproven
        at_count = _planners_pick(mine, job.trainer_gpus)  # none of `mine` is its own settings: none keeps it
        if at_count is None:
            counts = [str(count) for count in sorted({option.plan.gpus for option in mine})]
            ways = f"its ways there take {either(counts)}" if counts else "no way there"
            return (MoveCode.NO_WAY_AT_COUNT,
                    f"no way to run it on {job.trainer_gpus} trainer GPUs in pool {pool.name} ({ways})")
        takes = (at_count.gpus_per_node(pool.gpus_per_node), at_count.nodes)
        if takes != (len(job.gpu_indexes), len(job.nodes)):
            shape = (f"its ways on {job.trainer_gpus} trainer GPUs in pool {pool.name} take {_gpus_on(*takes)}, "
                     f"not the {_gpus_on(len(job.gpu_indexes), len(job.nodes))} it runs on")
            return MoveCode.NO_WAY_AS_IT_RUNS, shape
        if at_count.rollout_gpus != job.rollout_gpus:  # a rollout of whole nodes listed as the job asked it, say
            return MoveCode.NO_WAY_AS_IT_RUNS, (
                f"its ways on {job.trainer_gpus} trainer GPUs in pool {pool.name} give its rollout "
                f"{at_count.rollout_gpus} GPUs, not the {job.rollout_gpus} it runs with")
        settings = (f"the planner has no plan for it with {_settings(job)} on its {job.trainer_gpus} trainer GPUs in "
                    f"pool {pool.name} (its cheapest way there: {at_count.plan.setting.label})")
        return MoveCode.NO_WAY_AS_IT_RUNS, settings
    nodes = result.objective_counts == "nodes"
    named = [name if nodes else f"{name} (priority {priority})" for name, priority in holders]
    on_its_gpus = f"; its GPUs now run {and_joined(named)}" if named else ""
    if kept_most is None and result.host_rounded:  # never proven over rounded needs, however long the search
        return unproven[0], (f"the placement is not proven best: the host memory of the jobs in "
                             f"{and_joined(list(result.host_rounded))} was rounded up into classes, which a longer "
                             f"{planner.option_names.time_limit} does not lift{on_its_gpus}")
    if kept_most is None:
        return unproven[0], unproven[1] + on_its_gpus
    staying = f" (as well as the {counted(kept_most, 'running job')} kept)" if kept_most else ""
    worse = "uses more nodes than" if nodes else "places less priority than"
    host = _host_kept_words(planner, fleet, job, mine, kept)
    return (MoveCode.FEWER_NODES if nodes else MoveCode.MORE_PRIORITY,
            f"keeping it where it runs{staying} {worse} this placement ({result.objective}){host}{on_its_gpus}")


def _host_kept_words(planner: Planner, fleet: Fleet, job: RunningJob, mine: Sequence[Option],
                     kept: Sequence[Placement]) -> str:
    """Where the host memory of the node the running `job` shares (its way as it runs, of `mine`, on one node) does
    not hold its need beside the running jobs kept there (of `kept`): that, in words after a colon (``: node 0's 900
    GiB of host memory holds p (664.2 GiB), kept there, not it too (664.2 GiB more)``); "" otherwise."""
    pool = fleet.pools[job.pool]
    capacity = host_capacity_tenths(pool)
    own = next((option for option in mine if option.size and keeps_running(fleet, option, job)), None)
    node = job.nodes[0]
    there = [(placed.job, round(need * 10)) for placed in kept
             if placed.pool == pool.name and node in placed.trainer_nodes and (need := placed.host_need_gb) is not None]
    if capacity is None or own is None or not there:
        return ""
    need = planner.host_tenths(fleet.jobs[job.job], own.plan)
    if need + sum(tenths for _, tenths in there) <= capacity:
        return ""
    held = and_joined([f"{name} ({tenths / 10:.1f} GiB)" for name, tenths in there])
    return (f": node {node}'s {pool.host_ram_gb:g} GiB of host memory holds {held}, kept there, not it too "
            f"({need / 10:.1f} GiB more)")


def kept_as_it_runs(fleet: Fleet, job: RunningJob, mine: Sequence[Option]) -> tuple[StayCode, str] | None:
    """Where the running `job` stays on a trainer GPU count its ways in its pool do not take (`Option.at_running_count`:
    grown past them, or started so by hand), or on its own settings (`Option.as_it_runs`: its SP, Offload or length
    are not the planner's pick on its trainer GPUs), that they are kept as they run, with its code, in words naming
    the counts its other ways there take or the planner's cheapest way on its trainer GPUs (`_planners_pick`; a
    placement may take another, a longer one for an ``at_least`` job), of `mine`, its ways in its pool; else None."""
    own_count = not any(option.plan.gpus == job.trainer_gpus and not (option.at_running_count or option.as_it_runs)
                        for option in mine)
    own_settings = any(option.as_it_runs for option in mine)
    if not (own_count or own_settings):
        return None
    pick = _planners_pick(mine, job.trainer_gpus)
    instead = ("" if pick is None or not own_settings else
               f"; the planner's cheapest way on {job.trainer_gpus} trainer GPUs: {pick.plan.setting.label}")
    if not own_count:
        return (StayCode.SETTINGS_KEPT,
                f"its settings are kept as they run ({_settings(job)} on {job.trainer_gpus} trainer GPUs{instead})")
    counts = [str(count) for count in sorted({option.plan.gpus for option in mine
                                              if not (option.at_running_count or option.as_it_runs)})]
    others = (f"its other ways in pool {fleet.pools[job.pool].name} take {either(counts)}" if counts
              else f"no other way of its runs in pool {fleet.pools[job.pool].name}")
    on = f"{job.trainer_gpus} trainer GPUs"
    if not own_settings:
        return StayCode.COUNT_KEPT, f"its trainer GPU count is kept as it runs ({on}; {others})"
    return StayCode.COUNT_KEPT, (f"its trainer GPU count and settings are kept as they run ({_settings(job)} on {on}; "
                                 f"{others}{instead})")


def stay_words(job: RunningJob, kept_so: tuple[StayCode, str] | None,
               forgone: tuple[str, str]) -> tuple[StayCode, str] | None:
    """What the running `job`, which stays, says (its code and words): that its count or settings are kept as they run
    (`kept_so`: `kept_as_it_runs`'), then what keeping it forgoes (`forgone`: `forgone_words`' wider way on the idle
    GPUs beside it, where it fits one, its count said kept as it runs, `count-kept`, and cheaper ways in another pool,
    else `pool-kept`), one after the other; None where it says nothing."""
    wider, cheaper = forgone
    if kept_so is None and not wider:
        return None if not cheaper else (StayCode.POOL_KEPT, cheaper)
    count = f"its trainer GPU count is kept as it runs ({counted(job.trainer_gpus, 'trainer GPU')})"
    code, words = kept_so or (StayCode.COUNT_KEPT, count)
    return code, "; ".join(said for said in (words, wider, cheaper) if said)


def forgone_words(planner: Planner, fleet: Fleet, job: RunningJob, ways: tuple[Option, Sequence[Option]],
                  idle: IdleRoom, widens: bool) -> tuple[str, str]:
    """What keeping the running `job` where it runs forgoes, in words ("" for none of each), in the room the
    placement leaves `idle`: where the placement grows jobs (`widens`), the wider way of its (`ways_to_grow`) that
    widening would pick on the idle GPUs and host memory of its node (the most length, then the least cost, then the
    fewest GPUs) where that is not its own (`ways`' first, the way that keeps it); and, where a way of its in another
    pool of its pool's GPU type (among `ways`' second, the search's) fits that pool's idle room and runs it as long as
    that for less cost than it runs at and than that (docs/json.md's ``pool-kept``), the cheapest such, with its length
    where longer than its own (an ``at_least`` job's). A pool of another GPU type is not named: a cost counts GPUs and
    settings, not a GPU type's speed (docs/planner.md), so a lower one there says nothing of a faster step."""
    own, options = ways
    wider, grown = "", own
    free_gpus = idle.gpus[job.pool][job.nodes[0]]
    if widens and own.size and free_gpus:
        asked = fleet.jobs[job.job]
        free_host = idle.host[job.pool][job.nodes[0]] + planner.host_tenths(asked, own.plan)
        grown = min((way for way in ways_to_grow(planner, fleet, own, free_gpus)
                     if fleet.pools[job.pool].host_ram_gb is None
                     or planner.host_tenths(asked, way.plan) <= free_host),
                    key=lambda way: (-way.gain, way.cost, way.size))
        if grown is not own:
            wider = (f"the {counted(free_gpus, 'idle GPU')} beside it on its node would grow it to {grown.plan.gpus} "
                     f"trainer GPUs ({grown.plan.setting.label}, cost {grown.plan.cost:.4g}, not {own.plan.cost:.4g}"
                     f"{_longer_words(grown, own)}), which would restart it")
    gpu = fleet.pools[job.pool].gpu
    cheaper = min((option for option in options if option.job == job.job and option.pool != job.pool
                   and fleet.pools[option.pool].gpu == gpu and option.gain >= grown.gain
                   and option.cost < min(own.cost, grown.cost) and idle.room_for(option, fleet.jobs[job.job])),
                  key=lambda option: option.cost, default=None)
    return wider, "" if cheaper is None else (
        f"kept in pool {fleet.pools[job.pool].name}, where it runs, though pool {fleet.pools[cheaper.pool].name}'s "
        f"idle room would run it for less ({cheaper.plan.gpus} trainer GPUs, {cheaper.plan.setting.label}, cost "
        f"{cheaper.plan.cost:.4g}, not {own.plan.cost:.4g}{_longer_words(cheaper, own)})")


def _longer_words(way: Option, own: Option) -> str:
    """Where `way` runs a job longer than its `own` way (an ``at_least`` job's gain), its length against that, after a
    comma; "" otherwise."""
    return f", {way.plan.max_model_len} tokens, not {own.plan.max_model_len}" if way.gain > own.gain else ""


def _planners_pick(mine: Sequence[Option], trainer_gpus: int) -> Option | None:
    """The planner's own way among `mine` on `trainer_gpus` trainer GPUs, the cheapest; None where it has none."""
    return min((option for option in mine if option.plan.gpus == trainer_gpus and not option.as_it_runs),
               key=lambda option: option.cost, default=None)


def _settings(job: RunningJob) -> str:
    """The settings the running `job` runs with, in words: ``SP=4 without Offload at 16384 tokens``."""
    return f"SP={job.sp} {'with' if job.offload else 'without'} Offload at {job.max_model_len} tokens"


def _asks_otherwise(planner: Planner, fleet: Fleet, job: RunningJob) -> tuple[MoveCode, str] | None:
    """Where the file asks the running `job` otherwise now than it runs (another pool, its pool out of service or
    without one of its nodes or GPUs, or with one of its nodes down, model, length, rollout GPUs, LoRA rank, critic,
    DPO or Trinity release), the code and words of the first such change; else None."""
    asked, pool = fleet.jobs[job.job], fleet.pools[job.pool]
    if not asked.may_use(pool):
        return MoveCode.POOL_NOT_ALLOWED, f"the file pins it to pool {asked.pool} now; it runs in pool {pool.name}"
    if not pool.nodes:
        return MoveCode.POOL_NO_NODES, f"pool {pool.name}, where it runs, has no nodes now (nodes: 0)"
    down = f"down (down: [{', '.join(map(str, pool.down))}])"
    lost = ((MoveCode.NODE_GONE, job.gone_nodes(pool), "node", f"no longer in the pool (nodes: {pool.nodes})"),
            (MoveCode.NODE_DOWN, job.down_nodes(pool), "node", down),
            (MoveCode.GPU_GONE, job.gone_gpus(pool), "GPU",
             f"no longer in the pool (gpus_per_node: {pool.gpus_per_node})"))
    for code, gone, what, state in lost:
        if gone:
            named = f"{what} {gone[0]} of pool {pool.name}, where it runs, is" if len(gone) == 1 else \
                f"{what}s {and_joined([str(index) for index in gone])} of pool {pool.name}, where it runs, are"
            return code, f"{named} {state}"
    if job.model not in (None, asked.model):
        return MoveCode.MODEL_CHANGED, f"the file asks model {asked.model} now; it runs {job.model}"
    length = asked.max_model_len
    if not asks_length(length, job.max_model_len, planner.catalog.model(asked.model)):
        if not isinstance(length, AtLeast):
            words = f"max_model_len {length}"
        elif job.max_model_len < length.at_least or length.at_most is None:
            words = f"at_least {length.at_least}" + ("" if length.at_most is None else f" (at_most {length.at_most})")
        else:
            words = f"at_most {length.at_most}"
        return MoveCode.LENGTH_CHANGED, f"the file asks {words} now; it runs at {job.max_model_len}"
    room = layout(job.trainer_gpus, asked.rollout_gpus, pool.gpus_per_node)
    if asked.rollout_gpus != job.rollout_gpus and (room is None or room[2] != job.rollout_gpus):
        return (MoveCode.ROLLOUT_CHANGED,
                f"the file asks {counted(asked.rollout_gpus, 'rollout GPU')} now; it runs with {job.rollout_gpus}")
    training = asked.training
    if job.training is not None and job.training != training.as_running:
        rank, critic, dpo, targets, excluded = job.training
        asked_targets = training.counted_targets
        same_targets = (ALL_LINEAR if asked_targets is None else asked_targets.pattern) == (targets or ALL_LINEAR)
        changed = ((f"lora_rank {training.lora_rank}", f"lora_rank {rank}") if rank != training.lora_rank
                   else (f"critic {training.critic or NO_CRITIC}", f"critic {critic or NO_CRITIC}")
                   if critic != training.critic else (f"dpo {str(training.dpo).lower()}", f"dpo {str(dpo).lower()}")
                   if dpo != training.dpo else (f"lora_targets {training.lora_targets or ALL_LINEAR}",
                                                f"target_modules {targets or ALL_LINEAR}")
                   if not same_targets else (f"lora_exclude_modules {training.lora_exclude_modules or 'none'}",
                                             f"exclude_modules {excluded or 'none'}"))
        return MoveCode.TRAINING_CHANGED, f"the file asks {changed[0]} now; it runs with {changed[1]}"
    if not release_kept(fleet, job):
        return (MoveCode.RELEASE_CHANGED,
                f"the file asks trinity_version {asked.trinity_version} now; it runs on Trinity {job.trinity_version}")
    return None


def _gpus_on(gpus: int, nodes: int) -> str:
    """GPUs on nodes, in words: ``6 GPUs of one node``, ``8 GPUs of each of 2 nodes``."""
    return f"{counted(gpus, 'GPU')} of {'one node' if nodes == 1 else f'each of {nodes} nodes'}"
