"""Chosen ways as `Placement`s (`as_placement`), which GPUs each job takes on its node (`gpus_on_nodes`), and what
they use of each pool (`pool_use`): the search and the greedy baseline give their answers so; and which of them stay
where they run now, move (and why: `why_moved`), start or stop (`with_current`)."""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from solver.cluster.options import Option, Planner, asks_length, keeps_running, layout
from solver.memory import rollout_engines, shown_host_need
from solver.results import ClusterResult, MoveCode, Placement, PoolUse, StayCode, trainer_spans_nodes_caution
from solver.rules import trainer_nodes_of
from solver.tables import AtLeast, Fleet, RunningJob, and_joined, counted, either


def pool_use(fleet: Fleet, placements: Sequence[Placement]) -> tuple[PoolUse, ...]:
    """What `placements` use of each pool of `fleet`: the nodes a job uses, and the GPUs the jobs take."""
    return tuple(PoolUse(pool=pool.name, nodes=pool.nodes, gpus=pool.nodes * pool.gpus_per_node,
                         nodes_used=len({node for p in placements if p.pool == pool.name for node in p.nodes}),
                         gpus_used=sum(p.trainer_gpus + p.rollout_gpus for p in placements if p.pool == pool.name))
                 for pool in fleet.pools)


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
    whether widening moved it alone onto a node no job used."""
    job, pool = fleet.jobs[option.job], fleet.pools[option.pool]
    model = planner.catalog.model(job.model)
    host = None if pool.host_ram_gb is None else shown_host_need(
        model, option.plan.gpus, pool.gpus_per_node, option.plan.offload, planner.trinity_version,
        option.plan.reference_model, option.plan.lora_rank, option.plan.critic)
    engines = rollout_engines(model, planner.catalog.gpu(pool.gpu).memory_gib, option.rollout_gpus,
                              option.plan.max_model_len, pool.gpus_per_node,
                              lora_rank=option.plan.lora_rank) if option.rollout_gpus else None
    plan = planner.with_tables_caution(pool.gpu, job.model, option.plan)
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


def with_current(planner: Planner, fleet: Fleet, result: ClusterResult, running: Sequence[RunningJob],
                 options: Sequence[Option] = (), kept_most: int | None = None,
                 undecided_jobs: frozenset[int] = frozenset()) -> ClusterResult:
    """`result` with each placement's `current`, where the fleet runs `running` now: ``stays`` where it runs as it
    does now (its model, pool, nodes, GPUs, trainer and rollout GPUs, and its plan's length, SP and Offload), saying
    so where its trainer GPU count or settings are its own, not the planner's (`kept_as_it_runs`); ``moves``
    otherwise, with why (`why_moved`: from the ways the search had, `options`, the running jobs it keeps where that is
    proven the most a placement of its objective keeps over every job's ways, `kept_most`, else None, and the jobs
    whose ways rest on a solve that ran out of time, `undecided_jobs`, indexes), ``starts`` where it does not run now;
    and each unplaced job that runs now marked ``stops``. A result without a placement (no objective: `infeasible`,
    `unknown`) is left as it is: it tells no running job to stop."""
    if result.objective is None:
        return result
    now = {fleet.jobs[job.job].name: job for job in running}
    ways: dict[tuple[int, int], list[Option]] = defaultdict(list)  # (job, pool) -> its ways there
    for option in options:
        ways[option.job, option.pool].append(option)
    priorities = {fleet_job.name: fleet_job.priority for fleet_job in fleet.jobs}
    taking: dict[tuple[str, int, int], list[tuple[str, int]]] = defaultdict(list)  # (pool, node, GPU) -> its jobs
    for placed in result.placements:
        for node, gpu in itertools.product(placed.nodes, placed.gpu_indexes):
            taking[placed.pool, node, gpu].append((placed.job, priorities[placed.job]))

    def current(placed: Placement) -> dict[str, object]:
        job = now.get(placed.job)
        if job is None:
            return {"current": "starts"}
        as_now = (fleet.pools[job.pool].name, job.nodes, job.gpu_indexes, job.trainer_gpus, job.rollout_gpus,
                  job.max_model_len, job.sp, job.offload)
        plan = placed.plan
        as_placed = (placed.pool, placed.nodes, placed.gpu_indexes, placed.trainer_gpus, placed.rollout_gpus,
                     plan.max_model_len, plan.sp, plan.offload)
        mine = ways[job.job, job.pool]
        if as_now == as_placed and job.model in (None, placed.model):
            kept_so = kept_as_it_runs(fleet, job, mine)
            return {"current": "stays"} if kept_so is None else {
                "current": "stays", "stay_reason": kept_so[1], "stay_reason_code": kept_so[0]}
        pool = fleet.pools[job.pool].name
        holders = list(dict.fromkeys(holder for node, gpu in itertools.product(job.nodes, job.gpu_indexes)
                                     for holder in taking[pool, node, gpu] if holder[0] != placed.job))
        code, words = why_moved(planner, fleet, result, job, (mine, holders), (kept_most, job.job in undecided_jobs))
        return {"current": "moves", "move_reason": words, "move_reason_code": code}

    return result.model_copy(update={
        "placements": tuple(placed.model_copy(update=current(placed)) for placed in result.placements),
        "unplaced": tuple(left.model_copy(update={"current": "stops" if left.job in now else None})
                          for left in result.unplaced)})


def why_moved(planner: Planner, fleet: Fleet, result: ClusterResult, job: RunningJob,
              there: tuple[Sequence[Option], Sequence[tuple[str, int]]],
              proofs: tuple[int | None, bool]) -> tuple[MoveCode, str]:
    """Why the running `job` moves in `result` (its code and words), from the file as it asks the job now, the
    ways the search had for it in its pool and the jobs `result` places on its GPUs (`there`: each job's name and
    priority): the file pins it to another pool, asks another model, length or rollout GPUs;
    no way runs it at its trainer GPU count in its pool, or none as it runs (`keeps_running`: on as many GPUs and
    nodes, with its SP and Offload); else the search chose to move it though a way keeps it: where the stage of
    running jobs kept proved the most a placement of `result`'s objective keeps (`proofs`' first: that many, the
    jobs it keeps; None where not proven, or not over every job's ways), keeping it as well would keep one more, so
    that placement would place less priority (or use more nodes); not proven otherwise. A reason about its ways is
    not proven where a solve behind them ran out of time (`proofs`' second)."""
    pool = fleet.pools[job.pool]
    changed = _asks_otherwise(planner, fleet, job)
    if changed is not None:
        return changed
    mine, holders = there
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
        settings = (f"the planner has no plan for it with {_settings(job)} on its {job.trainer_gpus} trainer GPUs in "
                    f"pool {pool.name} (its plan there: {at_count.plan.setting.label})")
        return MoveCode.NO_WAY_AS_IT_RUNS, settings
    nodes = result.objective_counts == "nodes"
    named = [name if nodes else f"{name} (priority {priority})" for name, priority in holders]
    on_its_gpus = f"; its GPUs now run {and_joined(named)}" if named else ""
    if kept_most is None:
        return unproven[0], unproven[1] + on_its_gpus
    staying = f" (as well as the {counted(kept_most, 'running job')} kept)" if kept_most else ""
    worse = "uses more nodes than" if nodes else "places less priority than"
    return (MoveCode.FEWER_NODES if nodes else MoveCode.MORE_PRIORITY,
            f"keeping it where it runs{staying} {worse} this placement ({result.objective}){on_its_gpus}")


def kept_as_it_runs(fleet: Fleet, job: RunningJob, mine: Sequence[Option]) -> tuple[StayCode, str] | None:
    """Where the running `job` stays on a trainer GPU count its ways in its pool do not take (`Option.at_running_count`:
    grown past them, or started so by hand), or on its own settings (`Option.as_it_runs`: its SP, Offload or length
    are not the planner's pick on its trainer GPUs), that they are kept as they run, with its code, in words naming
    the counts its other ways there take or the planner's plan there (`mine`: its ways in its pool); else None."""
    own_count = not any(option.plan.gpus == job.trainer_gpus and not (option.at_running_count or option.as_it_runs)
                        for option in mine)
    own_settings = any(option.as_it_runs for option in mine)
    if not (own_count or own_settings):
        return None
    pick = _planners_pick(mine, job.trainer_gpus)
    instead = "" if pick is None or not own_settings else f"; the planner's plan there: {pick.plan.setting.label}"
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


def _planners_pick(mine: Sequence[Option], trainer_gpus: int) -> Option | None:
    """The planner's own way among `mine` on `trainer_gpus` trainer GPUs, the cheapest; None where it has none."""
    return min((option for option in mine if option.plan.gpus == trainer_gpus and not option.as_it_runs),
               key=lambda option: option.cost, default=None)


def _settings(job: RunningJob) -> str:
    """The settings the running `job` runs with, in words: ``SP=4 without Offload at 16384 tokens``."""
    return f"SP={job.sp} {'with' if job.offload else 'without'} Offload at {job.max_model_len} tokens"


def _asks_otherwise(planner: Planner, fleet: Fleet, job: RunningJob) -> tuple[MoveCode, str] | None:
    """Where the file asks the running `job` otherwise now than it runs (another pool, model, length or rollout GPUs),
    the code and words of the first such change; else None."""
    asked, pool = fleet.jobs[job.job], fleet.pools[job.pool]
    if not asked.may_use(pool):
        return MoveCode.POOL_NOT_ALLOWED, f"the file pins it to pool {asked.pool} now; it runs in pool {pool.name}"
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
    return None


def _gpus_on(gpus: int, nodes: int) -> str:
    """GPUs on nodes, in words: ``6 GPUs of one node``, ``8 GPUs of each of 2 nodes``."""
    return f"{counted(gpus, 'GPU')} of {'one node' if nodes == 1 else f'each of {nodes} nodes'}"
