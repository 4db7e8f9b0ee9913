"""Chosen ways as `Placement`s (`as_placement`), which GPUs each job takes on its node (`gpus_on_nodes`), and what
they use of each pool (`pool_use`): the search and the greedy baseline give their answers so; and which of them stay
where they run now, move, start or stop (`with_current`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from solver.cluster.options import Option, Planner
from solver.memory import rollout_engines, shown_host_need
from solver.results import ClusterResult, Placement, PoolUse
from solver.tables import AtLeast, Fleet, RunningJob


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
        model, option.plan.gpus, pool.gpus_per_node, option.plan.offload, planner.trinity_version)
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


def with_current(fleet: Fleet, result: ClusterResult, running: Sequence[RunningJob]) -> ClusterResult:
    """`result` with each placement's `current`, where the fleet runs `running` now: ``stays`` where it runs as it
    does now (its pool, nodes, GPUs, trainer and rollout GPUs, and its plan's length, SP and Offload), ``moves``
    otherwise, ``starts`` where it does not run now; and each unplaced job that runs now marked ``stops``. A result
    without a placement (no objective: `infeasible`, `unknown`) is left as it is: it tells no running job to stop."""
    if result.objective is None:
        return result
    now = {fleet.jobs[job.job].name: job for job in running}

    def current(placed: Placement) -> str:
        job = now.get(placed.job)
        if job is None:
            return "starts"
        as_now = (fleet.pools[job.pool].name, job.nodes, job.gpu_indexes, job.trainer_gpus, job.rollout_gpus,
                  job.max_model_len, job.sp, job.offload)
        plan = placed.plan
        as_placed = (placed.pool, placed.nodes, placed.gpu_indexes, placed.trainer_gpus, placed.rollout_gpus,
                     plan.max_model_len, plan.sp, plan.offload)
        return "stays" if as_now == as_placed else "moves"

    return result.model_copy(update={
        "placements": tuple(placed.model_copy(update={"current": current(placed)}) for placed in result.placements),
        "unplaced": tuple(left.model_copy(update={"current": "stops" if left.job in now else None})
                          for left in result.unplaced)})
