"""Chosen ways as `Placement`s (`as_placement`), which GPUs each job takes on its node (`gpus_on_nodes`), and what
they use of each pool (`pool_use`): the search and the greedy baseline give their answers so; and which of them stay
where they run now, move (and why: `why_moved`), start or stop (`with_current`)."""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from solver.cluster.model import Kept
from solver.cluster.options import Option, Planner, asks_length, keeps_running, layout
from solver.memory import rollout_engines, shown_host_need
from solver.results import ClusterResult, MoveCode, Placement, PoolUse
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
        option.plan.reference_model, option.plan.lora_rank)
    engines = rollout_engines(model, planner.catalog.gpu(pool.gpu).memory_gib, option.rollout_gpus,
                              option.plan.max_model_len, pool.gpus_per_node) if option.rollout_gpus else None
    return Placement(job=job.name, pool=pool.name, model=job.model, gpu=pool.gpu, nodes=tuple(nodes),
                     gpu_indexes=gpus,
                     trainer_gpus=option.plan.gpus, rollout_gpus=option.rollout_gpus,
                     asked_rollout_gpus=job.rollout_gpus, widened_from=widened_from,
                     moved_to_widen=moved_to_widen or None,
                     asked_max_model_len=job.asked_max_model_len, at_least=isinstance(job.max_model_len, AtLeast),
                     at_most=job.at_most,
                     plan=planner.with_tables_caution(pool.gpu, job.model, option.plan).model_copy(
                         update={"nodes": len(nodes), "rollout_gpus": option.rollout_gpus}),
                     host_memory_gb=host, rollout_engine_size=None if engines is None else engines.size,
                     rollout_engines=engines)


def with_current(planner: Planner, fleet: Fleet, result: ClusterResult, running: Sequence[RunningJob],
                 options: Sequence[Option] = (), kept: Kept | None = None) -> ClusterResult:
    """`result` with each placement's `current`, where the fleet runs `running` now: ``stays`` where it runs as it
    does now (its model, pool, nodes, GPUs, trainer and rollout GPUs, and its plan's length, SP and Offload),
    ``moves`` otherwise, with why (`why_moved`: from the ways the search had, `options`, and the running jobs it
    `kept`, None where the greedy placement stands), ``starts`` where it does not run now; and each unplaced job that
    runs now marked ``stops``. A result without a placement (no objective: `infeasible`, `unknown`) is left as it is:
    it tells no running job to stop."""
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
        if as_now == as_placed and job.model in (None, placed.model):
            return {"current": "stays"}
        pool = fleet.pools[job.pool].name
        holders = list(dict.fromkeys(holder for node, gpu in itertools.product(job.nodes, job.gpu_indexes)
                                     for holder in taking[pool, node, gpu] if holder[0] != placed.job))
        code, words = why_moved(planner, fleet, result, job, (ways[job.job, job.pool], holders), kept)
        return {"current": "moves", "move_reason": words, "move_reason_code": code}

    return result.model_copy(update={
        "placements": tuple(placed.model_copy(update=current(placed)) for placed in result.placements),
        "unplaced": tuple(left.model_copy(update={"current": "stops" if left.job in now else None})
                          for left in result.unplaced)})


def why_moved(planner: Planner, fleet: Fleet, result: ClusterResult, job: RunningJob,
              there: tuple[Sequence[Option], Sequence[tuple[str, int]]], kept: Kept | None) -> tuple[MoveCode, str]:
    """Why the running `job` moves in `result` (its code and words), from the file as it asks the job now, the
    ways the search had for it in its pool and the jobs `result` places on its GPUs (`there`: each job's name and
    priority): the file pins it to another pool, asks another model, length or rollout GPUs;
    no way runs it at its trainer GPU count in its pool, or none as it runs (`keeps_running`: on as many GPUs and
    nodes, with its SP and Offload); else the search chose
    to move it though a way keeps it: where the placement is proven (`result.status` optimal, its running jobs
    `kept` known), keeping it as well as those kept would place less priority (or use more nodes), as the stage of
    running jobs kept proves (it would keep one more); not proven otherwise. A reason about its ways is not proven
    where a solve behind the ways ran out of time (`ClusterResult.undecided_ways`)."""
    pool = fleet.pools[job.pool]
    changed = _asks_otherwise(planner, fleet, job)
    if changed is not None:
        return changed
    mine, holders = there
    unproven = (MoveCode.MOVE_UNPROVEN, f"the placement is not proven best (raise {planner.option_names.time_limit})")
    if not any(keeps_running(fleet, option, job) for option in mine):
        if result.undecided_ways:
            return unproven
        counts = sorted({option.plan.gpus for option in mine})
        if job.trainer_gpus not in counts:
            ways = f"its ways there take {either([str(count) for count in counts])}" if counts else "no way there"
            return (MoveCode.NO_WAY_AT_COUNT,
                    f"no way to run it on {job.trainer_gpus} trainer GPUs in pool {pool.name} ({ways})")
        at_count = min((option for option in mine if option.plan.gpus == job.trainer_gpus), key=lambda o: o.cost)
        takes = (at_count.gpus_per_node(pool.gpus_per_node), at_count.nodes)
        if takes != (len(job.gpu_indexes), len(job.nodes)):
            shape = (f"its ways on {job.trainer_gpus} trainer GPUs in pool {pool.name} take {_gpus_on(*takes)}, "
                     f"not the {_gpus_on(len(job.gpu_indexes), len(job.nodes))} it runs on")
            return MoveCode.NO_WAY_AS_IT_RUNS, shape
        offload = "with Offload" if job.offload else "without Offload"
        settings = (f"the planner has no plan for it with SP={job.sp} {offload} at {job.max_model_len} tokens on "
                    f"its {job.trainer_gpus} trainer GPUs in pool {pool.name} (its plan there: "
                    f"{at_count.plan.setting.label})")
        return MoveCode.NO_WAY_AS_IT_RUNS, settings
    nodes = result.objective_counts == "nodes"
    named = [name if nodes else f"{name} (priority {priority})" for name, priority in holders]
    on_its_gpus = f"; its GPUs now run {and_joined(named)}" if named else ""
    if result.status != "optimal" or kept is None:
        return unproven[0], unproven[1] + on_its_gpus
    staying = f" (as well as the {counted(len(kept.staying), 'running job')} kept)" if kept.staying else ""
    worse = "uses more nodes than" if nodes else "places less priority than"
    return (MoveCode.FEWER_NODES if nodes else MoveCode.MORE_PRIORITY,
            f"keeping it where it runs{staying} {worse} this placement ({result.objective}){on_its_gpus}")


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
