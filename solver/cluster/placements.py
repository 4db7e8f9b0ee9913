"""Chosen ways as `Placement`s (`as_placement`), where each job's GPUs start on its node (`first_gpus`), and what
they use of each pool (`pool_use`): the search and the greedy baseline give their answers so."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from solver.cluster.options import Option, Planner
from solver.memory import rollout_engines, shown_host_need
from solver.results import Placement, PoolUse
from solver.tables import AtLeast, Fleet


def pool_use(fleet: Fleet, placements: Sequence[Placement]) -> tuple[PoolUse, ...]:
    """What `placements` use of each pool of `fleet`: the nodes a job uses, and the GPUs the jobs take."""
    return tuple(PoolUse(pool=pool.name, nodes=pool.nodes, gpus=pool.nodes * pool.gpus_per_node,
                         nodes_used=len({node for p in placements if p.pool == pool.name for node in p.nodes}),
                         gpus_used=sum(p.trainer_gpus + p.rollout_gpus for p in placements if p.pool == pool.name))
                 for pool in fleet.pools)


def first_gpus(in_order: Iterable[tuple[int, Option, int]]) -> dict[int, int]:
    """Where each job's GPUs start on its first node, given (job, option, first node) in the order a shared node
    fills from GPU 0; 0 for a job on whole nodes."""
    first_gpu: dict[int, int] = {}
    used: Counter[tuple[int, int]] = Counter()
    for job, option, node in in_order:
        first_gpu[job] = used[option.pool, node] if option.size else 0
        used[option.pool, node] += option.size
    return first_gpu


def as_placement(planner: Planner, fleet: Fleet, option: Option, nodes: list[int], first_gpu: int,
                 widened_from: int | None = None) -> Placement:
    """A chosen option on its nodes, its GPUs on a shared node starting at `first_gpu` (a whole node: all), and,
    in a pool that checks it, the host memory it needs per node, and its rollout's engines (`rollout_engines`); its
    plan cautioned where the tables say it runs out of memory (`Planner.with_tables_caution`, with --estimate);
    `widened_from`: the trainer GPUs it was placed with, where it grew onto idle GPUs of its node."""
    job, pool = fleet.jobs[option.job], fleet.pools[option.pool]
    model = planner.catalog.model(job.model)
    host = None if pool.host_ram_gb is None else shown_host_need(
        model, option.plan.gpus, pool.gpus_per_node, option.plan.offload)
    engines = rollout_engines(model, planner.catalog.gpu(pool.gpu).memory_gib, option.rollout_gpus,
                              option.plan.max_model_len, pool.gpus_per_node) if option.rollout_gpus else None
    return Placement(job=job.name, pool=pool.name, model=job.model, gpu=pool.gpu, nodes=tuple(nodes),
                     gpu_indexes=tuple(range(first_gpu, first_gpu + option.gpus_per_node(pool.gpus_per_node))),
                     trainer_gpus=option.plan.gpus, rollout_gpus=option.rollout_gpus,
                     asked_rollout_gpus=job.rollout_gpus, widened_from=widened_from,
                     asked_max_model_len=job.asked_max_model_len, at_least=isinstance(job.max_model_len, AtLeast),
                     at_most=job.at_most,
                     plan=planner.with_tables_caution(pool.gpu, job.model, option.plan).model_copy(
                         update={"nodes": len(nodes), "rollout_gpus": option.rollout_gpus}),
                     host_memory_gb=host, rollout_engine_size=None if engines is None else engines.size,
                     rollout_engines=engines)
