"""A brute-force reference of the cluster placer's semantics (`solve cluster FILE.yaml`), for tiny instances.

Written from the cluster spec only, as plainly as possible: no ortools. The single-job semantics come from
`tests/reference.py` (`enumerate_plans`, `check_plan`); this file adds pools, nodes and the objective.

Instance (plain dicts, as loaded from YAML)::

    {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 2, "gpus_per_node": 8, "host_ram_gb": 1024}, ...],
     "jobs": [{"name": "math-4b", "model": "Qwen3-4B", "max_model_len": 32768 | {"at_least": 32768},
               "rollout_gpus": 2, "priority": 3, "pool": "a100"}, ...]}

`priority` defaults to 1, `required` to false (true: the job must be placed, else there is no placement),
`pool` to any pool, `rollout_gpus` to 0, `host_ram_gb` and `train_batch_size` to
unchecked, `critic` to "none" (else "resident", "offloaded" or "reloaded": a PPO critic its plans count, as
`reference.enumerate_plans(..., critic=...)` does), `reference_model` to true (false: the run builds none, and its
host memory counts no reference shards, as `reference.enumerate_plans(..., reference_model=False)`), `trinity_version`
to none named, or in `check_placements` the
run's release (else the Trinity release its plans are counted for, as `reference.enumerate_plans(...,
trinity_version=...)` counts them), `dpo` to false (true: the run trains DPO, its plans as
`reference.enumerate_plans(..., dpo=True)` counts them, at Trinity's default token budget whatever the run's),
`lora_rank` to 0 (else a LoRA adapter of that rank, with no reference model, on `lora_modules`: None for all-linear,
else the module names a job's `lora_targets` lists, as `reference.enumerate_plans(..., lora_rank=...,
lora_modules=...)` counts them; its rollout engines' LoRA slots are checked, `_vllm_lora_gib`). GPU and
model names may be aliases.

Rules, with g = the pool's gpus_per_node, r = the job's rollout_gpus, n = trainer GPUs:

- a job is placed at most once, in one pool (its `pool` if given), with a plan that
  `enumerate_plans(catalog, gpu=..., model=..., objective="cheapest", budget_gpus=n, exact=True,
  max_model_len=L, train_batch_size=the job's)` allows,
  n over the documented GPU counts of the pool's GPU type; with no such plan
  with a layout in the pool, n over every count within a node, then whole nodes, up to the pool's GPUs and
  64 (the tables' cells vouch for more GPUs); with `estimates=True` (what `solve cluster` does unless
  `--no-estimate`) and still none, `enumerate_plans(..., estimates=True)` over those counts;
- length: exactly L for `max_model_len: L`; for `{at_least: A}` (at most `ceiling`: A, or more up to what the
  model is known to handle, and no more than M for `{at_least: A, at_most: M}`) any L in {A, the ceiling} + {row
  lengths > A of the GPU type's tables (all of them, whatever their GPU count)} for which a plan exists, and with
  estimates the longest length that any plan on exactly n GPUs reaches (and, on a shared node of a pool with
  `host_ram_gb`, the longest that a plan without Offload reaches); where that longest plan carries the
  thin-headroom caution past A, the stretch stops short: at the longest length a plan with Env reaches with
  estimates held to the margin that keeps exactly the room the caution asks for, that plan (not above A: at A), and
  no length above it (`_stretch_plan`);
- SP within a node: when n > g the plan's SP degree divides g;
- layout: n + r <= g: one node, n + r of its GPUs; otherwise n % g == 0 is needed and the job takes
  k = n/g + ceil(r/g) WHOLE nodes (nobody else on them), rollout gets k*g - n GPUs; otherwise not allowed;
- each node holds at most g GPUs of one-node jobs, and a node taken whole holds nothing else;
- host memory, where the pool gives `host_ram_gb`: every plan passes `enumerate_plans(..., host_ram_gb=...)`
  (a job alone on its nodes fits), and the jobs sharing a node need together at most `host_ram_gb` GiB
  (an Offload job its states, `reference._host_need` with its n GPUs on the node; one without Offload the
  model while it loads beside the reference model's pinned shards, `reference._load_need`).

Objective (lexicographic): max total priority of placed jobs, then, where priority ties, which jobs are placed: the
earlier in the file (max total over the placed jobs not required of their priority times their place counted from
the end of the file, the first of n jobs n), then max
total gain of placed `at_least` jobs (gain = (L - A) // 1024), then min total cost (each job's
round(plan["cost"] * 10000)); the value is the triple (total_priority, total_gain, total_cost). With minimize_nodes
every job must be placed (else
None) and the value is (nodes_used, total_gain, total_cost): fewest nodes used (a node is used when
anything is on it), then max gain, then min cost.

The search. For each job and allowed pool, every (n, L) with a plan is listed with its cheapest plan among
those that pass the SP-within-node rule (the layout depends on n only, so nothing cheaper can be lost). Each
such candidate has a *footprint*: ("one", n + r) or ("whole", k), with the host memory it takes on a shared
node. Once every job's pool, footprint and
nodes are fixed, whether the placement fits and how many nodes it uses no longer depend on the rest of
the choice, and each job's (gain, cost) is added independently; so for a fixed footprint the job's best
candidate (max gain, then min cost) is always at least as good as any other, and only it is kept. Then
every combination of (unplaced | pool + footprint + node(s)) per job is tried, depth first, dropping a
partial placement only once it already overfills a node (it can only get worse).
`best_value_naive` skips the footprint step (it tries every (n, L) candidate) as a check of that step.

A placed plan whose trainer spans nodes of a pool that states no ``node_interconnect: infiniband`` or ``roce`` carries
the ``trainer-spans-nodes`` caution, in the solver's words (`solver.results.trainer_spans_nodes_caution`, shared).
"""

from __future__ import annotations

import copy
import functools
import itertools
import math
import re
from typing import Any

from reference import (
    LAYER_LINEARS,
    Adapter,
    Release,
    _estimate_margin,
    _host_need,
    _load_need,
    _memory_model,
    _up_to_a_tenth,
    check_plan,
    enumerate_plans,
    lora_counted,
)

from solver.memory import margin_room
from solver.results import trainer_spans_nodes_caution
from solver.tables import Catalog, Setting, Weights

ONE = "one"
WHOLE = "whole"


# --- reading an instance -----------------------------------------------------------------------------------


def _pools(instance: dict) -> dict[str, dict]:
    pools = {}
    for pool in instance["pools"]:
        if pool["name"] in pools:
            raise ValueError(f"pool {pool['name']!r} is named twice")
        pools[pool["name"]] = pool
    return pools


def _jobs(instance: dict) -> list[dict]:
    names = [job["name"] for job in instance["jobs"]]
    if len(set(names)) != len(names):
        raise ValueError(f"a job name is used twice: {names}")
    return list(instance["jobs"])


def _under_release(job: dict, run_release: str | None) -> dict:
    """The job counted for its own Trinity release, else (it names none) for the run's `run_release`."""
    return job if job.get("trinity_version") is not None else {**job, "trinity_version": run_release}


def _estimated_with(job: dict, margin: float | None, memory: Any | None) -> dict:
    """The job with the run's estimates: held to its `margin` (``--margin``; None: the default on the card), made
    with its `memory` model (``--memory-model``, one of one's own; None: the shipped one)."""
    return {**job, "margin": margin, "memory": memory}


def _job_budget(job: dict, run_budget: str) -> str:
    """The token budget the job's plans are counted at: the run's `run_budget`, but Trinity's default for a job that
    trains DPO, whose actor reads none (``--token-budget auto`` lowers no DPO job's: docs/cluster.md)."""
    return "default" if job.get("dpo") else run_budget


def _priority(job: dict) -> int:
    return job.get("priority", 1)


def _rollout(job: dict) -> int:
    return job.get("rollout_gpus", 0)


def _critic(job: dict) -> str | None:
    """The PPO critic the job trains beside the actor ("resident", "offloaded" or "reloaded"); None for none."""
    critic = job.get("critic", "none")
    return None if critic == "none" else critic


def _length_request(job: dict) -> tuple[int, bool]:
    """(L or A, is_at_least)."""
    spec = job["max_model_len"]
    if isinstance(spec, dict):
        if not {"at_least"} <= set(spec) <= {"at_least", "at_most"}:
            raise ValueError(f"job {job['name']!r}: max_model_len mapping must be {{at_least: N[, at_most: M]}}, "
                             f"got {spec!r}")
        return spec["at_least"], True
    return spec, False


def _shortened(job: dict, cut: int) -> dict | int:
    """The job's max_model_len with `cut` for its length (an at_least job's least; its at_most kept)."""
    return {**job["max_model_len"], "at_least": cut} if isinstance(job["max_model_len"], dict) else cut


def _gain(job: dict, length: int) -> int:
    wanted, at_least = _length_request(job)
    return (length - wanted) // 1024 if at_least else 0


def _cost_int(plan: dict) -> int:
    return round(plan["cost"] * 10000)


def _allowed_pools(instance: dict, job: dict) -> list[dict]:
    pools = _pools(instance)
    if "pool" in job and job["pool"] is not None:
        if job["pool"] not in pools:
            raise ValueError(f"job {job['name']!r} names unknown pool {job['pool']!r} (pools: {sorted(pools)})")
        return [pools[job["pool"]]]
    return list(instance["pools"])


def ceiling(catalog: Catalog, job: dict) -> int:
    """How long an at_least job may grow: the length it asks for at least, or more up to what its model is known
    to handle: with a RoPE scaling of its own, or for a model Qwen's model cards do not speak for (``qwen_yarn``
    false: a config.json of another ``model_type``), its native context; else YaRN as Qwen's model cards validate
    it, a factor of 4 over the native context and 131072 tokens at most (never below the native context); and
    never past the job's at_most, where it gives one."""
    wanted, _ = _length_request(job)
    model = catalog.model(job["model"])
    known = model.native_context if model.rope_scaling is not None or not model.qwen_yarn else max(
        model.native_context, min(4 * model.native_context, 131072))
    return min(max(wanted, known), job["max_model_len"].get("at_most") or 1 << 30)


def _candidate_lengths(catalog: Catalog, gpu: str, job: dict) -> list[int]:
    wanted, at_least = _length_request(job)
    if not at_least:
        return [wanted]
    rows = {row.max_model_len for table in catalog.gpu(gpu).tables for row in table.rows}
    top = ceiling(catalog, job)
    return sorted({wanted, top} | {length for length in rows if wanted < length <= top})


def _trainer_counts(catalog: Catalog, gpu: str, pool: dict, every: bool) -> list[int]:
    """The documented GPU counts of the GPU type; with `every`, every count within a node, then whole
    nodes, up to the pool's GPUs and 64."""
    if not every:
        return sorted({table.gpus for table in catalog.gpu(gpu).tables})
    g = pool["gpus_per_node"]
    return [n for n in range(1, min(pool["nodes"] * g, 64) + 1) if n <= g or n % g == 0]


def layout(n: int, rollout: int, gpus_per_node: int) -> tuple[str, int] | None:
    """("one", GPUs used on the node) or ("whole", nodes taken), or None when the layout is not allowed."""
    g = gpus_per_node
    if n + rollout <= g:
        return (ONE, n + rollout)
    if n < g and (n + rollout) % g == 0:  # the trainer in part of a node, the rollout filling it and more
        return (WHOLE, (n + rollout) // g)
    if n % g == 0:
        return (WHOLE, n // g + math.ceil(rollout / g))
    return None


def sp_fits_nodes(n: int, sp: int, gpus_per_node: int) -> bool:
    """SP within a node: when the trainer spans nodes (n > g), SP divides g."""
    return n <= gpus_per_node or gpus_per_node % sp == 0


# --- candidates ----------------------------------------------------------------------------------------------


@functools.cache
def _plans_cached(catalog: Catalog, gpu: str, model: str, n: int, length: int | None, node_gpus: int,
                  estimates: bool, host_ram_gb: float | None, token_budget: str,
                  train_batch_size: int | None, margin: float | None, host_node_gpus: int,
                  critic: str | None, trinity_version: str | None, reference_model: bool,
                  dpo: bool, memory: Any | None, lora_rank: int,
                  lora_modules: tuple[str, ...] | None, lora_pattern: str | None,
                  lora_exclude: str | None) -> tuple[dict, ...]:
    return tuple(
        enumerate_plans(
            catalog, gpu=gpu, model=model, objective="max_len" if length is None else "cheapest", budget_gpus=n,
            exact=True, max_model_len=length, node_gpus=node_gpus, host_node_gpus=host_node_gpus,
            estimates=estimates, host_ram_gb=host_ram_gb,
            token_budget=token_budget if estimates else "default", train_batch_size=train_batch_size, margin=margin,
            critic=critic, trinity_version=trinity_version, reference_model=reference_model, dpo=dpo, memory=memory,
            lora_rank=lora_rank, lora_modules=lora_modules, lora_pattern=lora_pattern, lora_exclude=lora_exclude,
        )
    )


def _plans(catalog: Catalog, gpu: str, job: dict, n: int, length: int | None, pool: dict,
           estimates: bool, token_budget: str = "default", margin: float | None = None) -> tuple[dict, ...]:
    """enumerate_plans for the job's model, train batch, critic and Trinity release with exactly n trainer GPUs at length L (None: the
    longest first), best first (shared: copy to keep); a trainer on more than one node has the pool's nodes, which
    sets the host memory Offload needs per node (checked against the pool's host memory) and the counts the memory
    model estimates; estimates held to `margin` (None: the run's, `_estimated_with`, else the default on the card)
    and made with the run's memory model; a DPO job's at Trinity's default token budget whatever the run's
    (`_job_budget`)."""
    g = pool["gpus_per_node"]
    return _plans_cached(catalog, gpu, catalog.model(job["model"]).name, n, length, g if n > g else n, estimates,
                         pool.get("host_ram_gb"), _job_budget(job, token_budget), job.get("train_batch_size"),
                         job.get("margin") if margin is None else margin, g, _critic(job), job.get("trinity_version"),
                         job.get("reference_model", True), job.get("dpo", False), job.get("memory"),
                         job.get("lora_rank", 0), job.get("lora_modules"), job.get("lora_pattern"),
                         job.get("lora_exclude"))


def _stretch_plan(catalog: Catalog, gpu: str, job: dict, n: int, pool: dict, estimates: bool, token_budget: str,
                  without_offload: bool) -> tuple[dict | None, bool]:
    """An at_least job's plan on exactly n GPUs (without Offload where asked), and whether it stopped short of thin
    headroom: its longest, capped at its ceiling (there, the cheapest); where that plan carries the thin-headroom
    caution past the least asked, the longest plan with Env at the margin that keeps exactly the room the caution asks
    for (`_roomy_margin`), capped alike, where that reaches the least asked (its length, setting, token budget and
    cost, which the placement weighs, are the stop's; its memory figures are that margin's), else the cheapest at the
    least asked. None where it has none."""
    g = pool["gpus_per_node"]
    wanted, _ = _length_request(job)

    def first(length: int | None, margin: float | None = None, env_only: bool = False) -> dict | None:
        return next((p for p in _plans(catalog, gpu, job, n, length, pool, estimates, token_budget, margin)
                     if sp_fits_nodes(n, p["sp"], g) and not (without_offload and p["offload"])
                     and (p["env"] or not env_only)), None)

    def longest(margin: float | None = None, env_only: bool = False) -> dict | None:
        found = first(None, margin, env_only)
        if found is not None and found["max_model_len"] > ceiling(catalog, job):
            found = first(ceiling(catalog, job), margin, env_only)
        return found

    top = longest()
    if top is None or top["max_model_len"] <= wanted or "thin-headroom" not in top["caution_codes"]:
        return top, False
    roomy = longest(_roomy_margin(catalog, gpu, job), env_only=True)
    if roomy is None or roomy["max_model_len"] < wanted:
        return first(wanted), True
    return roomy, True


def _roomy_margin(catalog: Catalog, gpu: str, job: dict) -> float:
    """The margin at which an estimate with Env fits exactly where, at the run's margin (`_estimated_with`; none: the
    default on the card) and with its memory model, it keeps the room the thin-headroom caution asks for (a GiB, and
    what the model's gathered layers may take more): that margin raised by that room over Env's usable memory, not
    rounded."""
    gpu_gib, memory = catalog.gpu(gpu).memory_gib, job.get("memory")
    room = margin_room(_memory_model(memory), _estimate_margin(gpu_gib, job.get("margin"), memory), gpu_gib,
                       Setting(env=True), catalog.model(job["model"]))
    return room.default + room.thin_gib / room.usable_gib


def shared_host_need(catalog: Catalog, job: dict, n: int, plan: dict, shape: tuple[str, int], pool: dict) -> float:
    """GiB of host memory `job` takes with `plan` on a node it shares, where the pool checks host memory: with Offload
    its states (or the model while it loads), without it the model while it loads, each beside the reference model's
    pinned shards, and a critic's states where the plan's (its "critic") are held there, a LoRA job's adapter beside
    the frozen base, as the Trinity release the plan names (its "trinity_version") counts them on the pool's GPU;
    rounded up to a tenth, as placements give it."""
    if shape[0] != ONE or pool.get("host_ram_gb") is None:
        return 0.0
    need = _host_need if plan["offload"] else _load_need
    rank = job.get("lora_rank", 0)
    return _up_to_a_tenth(need(catalog.model(job["model"]), n, n, plan.get("critic"),
                               Release.named(plan.get("trinity_version")),
                               catalog.gpu(pool["gpu"]).compute_capability, plan.get("reference_model", True),
                               Adapter(rank, job.get("lora_modules"), job.get("lora_pattern"), job.get("lora_exclude"))
                               if rank else None))


def job_candidates(catalog: Catalog, job: dict, pool: dict, estimates: bool = False,
                   token_budget: str = "default") -> list[dict]:
    """Every (n, L) the job can run at in this pool, each with its cheapest plan that passes the SP rule and
    its layout: dicts {"n", "length", "plan", "layout", "gain", "cost"}. The tables' candidates at their own
    counts; with none, the tables' candidates at every count; with `estimates` and none either, those of
    every count with the memory model's estimates (and their lowered token budgets with `token_budget` auto)."""
    tiers = [(False, False), (True, False)] + ([(True, True)] if estimates else [])
    for every, estimated in tiers:
        found = _candidates(catalog, job, pool, every=every, estimates=estimated, token_budget=token_budget)
        if found:
            return found
    return []


def _candidates(catalog: Catalog, job: dict, pool: dict, every: bool, estimates: bool,
                token_budget: str = "default") -> list[dict]:
    """job_candidates over the tables' counts, or with `every` over every count, with `estimates` or not,
    and for an at_least job with estimates also the longest length at each count."""
    gpu = catalog.gpu(pool["gpu"]).name
    g = pool["gpus_per_node"]
    wanted, at_least = _length_request(job)
    found = []
    for n in _trainer_counts(catalog, gpu, pool, every):
        where = layout(n, _rollout(job), g)
        if where is None:
            continue
        if where[0] == WHOLE and where[1] > pool["nodes"]:
            continue  # the pool has too few nodes
        lengths = _candidate_lengths(catalog, gpu, job)
        stretched: dict[int, dict] = {}
        if estimates and at_least:
            # The longest, and on a shared node of a pool with host memory the longest without Offload.
            withouts = (False, True) if where[0] == ONE and pool.get("host_ram_gb") is not None else (False,)
            tops = [top for without in withouts
                    if (top := _stretch_plan(catalog, gpu, job, n, pool, estimates, token_budget, without))[0]]
            reach = max((plan["max_model_len"] for plan, _ in tops), default=wanted)
            for plan, short in tops:  # a stretch stopped short of thin headroom: that plan, not the cheapest there
                if short and plan["max_model_len"] >= wanted:
                    stretched.setdefault(plan["max_model_len"], plan)
            lengths = sorted({length for length in lengths if length <= reach}
                             | {plan["max_model_len"] for plan, _ in tops if plan["max_model_len"] > wanted})
        for length in lengths:
            plans = [plan for plan in _plans(catalog, gpu, job, n, length, pool, estimates, token_budget)
                     if sp_fits_nodes(n, plan["sp"], g)]
            if not plans:
                continue
            plan = copy.deepcopy(stretched.get(length, plans[0]))  # best first: the cheapest
            found.append(
                {
                    "n": n,
                    "length": length,
                    "plan": plan,
                    "layout": where,
                    "host": shared_host_need(catalog, job, n, plan, where, pool),
                    "gain": _gain(job, length),
                    "cost": _cost_int(plan),
                }
            )
    return found


def _node_choices(pool: dict, where: tuple[str, int]) -> list[tuple[int, ...]]:
    kind, size = where
    if kind == ONE:
        return [(node,) for node in range(pool["nodes"])]
    return list(itertools.combinations(range(pool["nodes"]), size))


def _options(catalog: Catalog, instance: dict, job: dict, per_footprint: bool, estimates: bool,
             token_budget: str = "default") -> list[dict | None]:
    """None (unplaced) and every (pool, candidate, nodes) choice of the job."""
    options: list[dict | None] = [None]
    for pool in _allowed_pools(instance, job):
        candidates = job_candidates(catalog, job, pool, estimates, token_budget)
        if per_footprint:
            best: dict[tuple[tuple[str, int], float], dict] = {}
            for candidate in candidates:
                key = (candidate["layout"], candidate["host"])
                if key not in best or (-candidate["gain"], candidate["cost"]) < (-best[key]["gain"], best[key]["cost"]):
                    best[key] = candidate
            candidates = list(best.values())
        for candidate in candidates:
            for nodes in _node_choices(pool, candidate["layout"]):
                options.append({"pool": pool, "candidate": candidate, "nodes": nodes})
    return options


# --- fitting and scoring -------------------------------------------------------------------------------------


def _add(usage: dict, option: dict) -> bool:
    """Put the option on the nodes in `usage` ({(pool, node): (gpus used, taken whole, host GiB used)});
    False if it overfills one (GPUs, or the pool's host memory)."""
    pool = option["pool"]
    kind, size = option["candidate"]["layout"]
    for node in option["nodes"]:
        used, whole, host = usage.get((pool["name"], node), (0, False, 0.0))
        if whole:
            return False
        if kind == WHOLE:
            if used > 0:
                return False
            usage[(pool["name"], node)] = (pool["gpus_per_node"], True, 0.0)
        else:
            host += option["candidate"]["host"]
            if used + size > pool["gpus_per_node"] or (pool.get("host_ram_gb") is not None
                                                       and host > pool["host_ram_gb"]):
                return False
            usage[(pool["name"], node)] = (used + size, False, host)
    return True


def _score(jobs: list[dict], choice: list[dict | None], nodes_used: int, minimize_nodes: bool) -> tuple[int, int, int]:
    priority = sum(_priority(job) for job, option in zip(jobs, choice) if option is not None)
    gain = sum(option["candidate"]["gain"] for option in choice if option is not None)
    cost = sum(option["candidate"]["cost"] for option in choice if option is not None)
    if minimize_nodes:
        return (nodes_used, gain, cost)
    return (priority, gain, cost)


def _tied_order(jobs: list[dict], choice: list[dict | None]) -> int:
    """Which jobs a tie of priority places, the more the better: over the placed jobs not required, each one's
    priority times its place counted from the end of the file, summed."""
    return sum(_priority(job) * (len(jobs) - index) for index, (job, option) in enumerate(zip(jobs, choice))
               if option is not None and not job.get("required"))


def _sort_key(value: tuple[int, int, int], order: int, minimize_nodes: bool) -> tuple[int, int, int, int]:
    """Smaller is better (`order`: `_tied_order`, which counts only where every job is not placed anyway)."""
    first, gain, cost = value
    return (first if minimize_nodes else -first, 0 if minimize_nodes else -order, -gain, cost)


def _search(catalog: Catalog, instance: dict, minimize_nodes: bool, per_footprint: bool, estimates: bool,
            token_budget: str = "default", left_out: str | None = None, trinity_version: str | None = None):
    """The best placement (value, choice, jobs), with the job named `left_out` (if any) not placed, each job counted
    for its own Trinity release, else for the run's `trinity_version` (`_under_release`)."""
    jobs = [_under_release(job, trinity_version) for job in _jobs(instance)]
    options = [[None] if job["name"] == left_out else _options(catalog, instance, job, per_footprint, estimates,
                                                               token_budget) for job in jobs]
    # Every job must be placed with minimize_nodes, and each `required: true` one always.
    options = [[option for option in job_options if option is not None] if minimize_nodes or job.get("required")
               else job_options for job, job_options in zip(jobs, options)]
    best: list[Any] = [None, None, None]  # value, choice, sort key

    def walk(index: int, usage: dict, choice: list) -> None:
        if index == len(jobs):
            value = _score(jobs, choice, len(usage), minimize_nodes)
            key = _sort_key(value, _tied_order(jobs, choice), minimize_nodes)
            if best[2] is None or key < best[2]:
                best[0], best[1], best[2] = value, list(choice), key
            return
        for option in options[index]:
            trial = dict(usage)
            if option is not None and not _add(trial, option):
                continue
            choice.append(option)
            walk(index + 1, trial, choice)
            choice.pop()

    walk(0, {}, [])
    return best[0], best[1], jobs


def best_value(catalog: Catalog, instance: dict, minimize_nodes: bool = False,
               estimates: bool = False, token_budget: str = "default",
               trinity_version: str | None = None) -> tuple[int, int, int] | None:
    """The optimal objective triple of the instance, or None (minimize_nodes and some job cannot be placed);
    with `estimates`, plans may also rest on the memory model (as `solve cluster` by default), with
    `token_budget` auto, estimated plans may lower their token budget (as `solve cluster --token-budget auto`), and
    the jobs that name no Trinity release are counted for the run's `trinity_version` (``--trinity-version``)."""
    value, _, _ = _search(catalog, instance, minimize_nodes, per_footprint=True, estimates=estimates,
                          token_budget=token_budget, trinity_version=trinity_version)
    return value


def best_value_naive(catalog: Catalog, instance: dict, minimize_nodes: bool = False,
                     estimates: bool = False) -> tuple[int, int, int] | None:
    """best_value without keeping one candidate per footprint: every (n, L) is tried (slower; a check)."""
    value, _, _ = _search(catalog, instance, minimize_nodes, per_footprint=False, estimates=estimates)
    return value


def best_placement(catalog: Catalog, instance: dict, minimize_nodes: bool = False,
                   estimates: bool = False, token_budget: str = "default") -> dict | None:
    """An optimal placement in the solver's JSON shape (None when there is none), for self-checks."""
    value, choice, jobs = _search(catalog, instance, minimize_nodes, per_footprint=True, estimates=estimates,
                                  token_budget=token_budget)
    if value is None:
        return None
    placements, unplaced = [], []
    filled: dict[tuple[str, int], int] = {}  # GPUs of a shared node given out so far, from GPU 0
    for job, option in zip(jobs, choice):
        if option is None:
            unplaced.append({"job": job["name"], "reason": "not placed by the reference"})
            continue
        candidate = option["candidate"]
        kind, size = candidate["layout"]
        g = option["pool"]["gpus_per_node"]
        rollout = _rollout(job) if kind == ONE else size * g - candidate["n"]
        if kind == ONE:
            spot = (option["pool"]["name"], option["nodes"][0])
            first = filled.get(spot, 0)
            filled[spot] = first + size
            indexes = list(range(first, first + size))
        else:
            indexes = list(range(g))
        plan = {**candidate["plan"], "nodes": len(option["nodes"]), "rollout_gpus": rollout}
        # A trainer across nodes no fast fabric is said to join: the caution's words are the solver's, shared.
        spans = trainer_spans_nodes_caution(-(-candidate["n"] // g), option["pool"].get("node_interconnect"))
        if spans is not None:
            plan.update(cautions=[*plan["cautions"], spans.words],
                        caution_codes=[*plan["caution_codes"], spans.code.value])
        placements.append(
            {
                "job": job["name"],
                "pool": option["pool"]["name"],
                "nodes": list(option["nodes"]),
                "gpu_indexes": indexes,
                "trainer_gpus": candidate["n"],
                "rollout_gpus": rollout,
                "plan": plan,
            }
        )
    return {"status": "optimal", "objective": None, "bound": None, "placements": placements, "unplaced": unplaced}


# --- checking a solver's result ------------------------------------------------------------------------------


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def counted_model(model: Any) -> bool:
    """Whether the reference counts `model` (a catalogue `Model`, or a ``model_config``'s of any ``model_type``: its
    layout of attention and a gated MLP per layer is the catalogue's Qwen3 models', its own attention code, trained one
    padded sequence per micro-batch, `reference._padded`) as the product does: none of the traits of other
    architectures that docs/memory.md counts apart and the reference does not re-derive: an unchecked layout, latent
    attention, soft-capped logits, MTP layers, a sliding window (each its own cautions and length rules)."""
    return (model.unchecked_layout is None and model.mla is None and not model.logit_softcapping
            and not model.uncounted_mtp_layers and model.vllm_sliding_window is None)


def _lora_targets(targets: str | None) -> tuple[tuple[str, ...] | None, str | None] | None:
    """(module names, regex) of a job's ``lora_targets``: (None, None) for ``all-linear`` (or none given); the linear
    modules it lists (``q_proj, v_proj``: each name once, in its order, an empty one dropped), each one of
    `reference.LAYER_LINEARS`; else the regex PEFT matches whole names with; None for a list of other names, which the
    reference does not count."""
    if targets is None or targets.lower() == "all-linear":
        return None, None
    if re.fullmatch(r"[\w\s,]+", targets) is None:
        return None, targets
    names = tuple(dict.fromkeys(name.strip() for name in targets.split(",") if name.strip()))
    return (names, None) if names and set(names) <= set(LAYER_LINEARS) else None


def fleet_instance(catalog: Catalog, fleet: Any) -> dict | None:
    """The instance of a fleet as `solve cluster` reads it (a `solver.tables.Fleet`: its names resolved, its
    ``model_config`` models in `catalog`, as `Catalog.for_fleet` gives them), as this reference reads one; None where a
    job trains what the reference does not count: a model not `counted_model`, or a LoRA adapter that
    `reference.lora_counted` does not count (its ``lora_targets``, `_lora_targets`, less its ``lora_exclude_modules``:
    on another model type, or a mixture of experts' regexes and exclusions that touch its router or routed experts,
    whose PEFT conversion per transformers is a second PEFT, not a cheap check). A LoRA job builds no reference model
    (docs/memory.md, "LoRA")."""
    targets = {job.name: _lora_targets(job.lora_targets) for job in fleet.jobs}
    if any(not counted_model(catalog.model(job.model)) or job.lora_rank and (
            targets[job.name] is None or not lora_counted(catalog.model(job.model), Adapter(
                job.lora_rank, *targets[job.name] or (None, None), job.lora_exclude_modules)))
           for job in fleet.jobs):
        return None
    pools = [{"name": pool.name, "gpu": pool.gpu, "nodes": pool.nodes, "gpus_per_node": pool.gpus_per_node,
              "host_ram_gb": pool.host_ram_gb, "node_interconnect": pool.node_interconnect, "down": list(pool.down)}
             for pool in fleet.pools]
    jobs = [{"name": job.name, "model": job.model, "rollout_gpus": job.rollout_gpus, "priority": job.priority,
             "pool": job.pool, "required": job.required, "train_batch_size": job.train_batch_size,
             "critic": job.critic, "trinity_version": job.trinity_version,
             "reference_model": job.reference_model is not False and not job.lora_rank, "dpo": job.dpo,
             "lora_rank": job.lora_rank, "lora_modules": (targets[job.name] or (None,))[0] if job.lora_rank else None,
             "lora_pattern": (targets[job.name] or (None, None))[1] if job.lora_rank else None,
             "lora_exclude": job.lora_exclude_modules if job.lora_rank else None,
             "max_model_len": job.max_model_len if _is_int(job.max_model_len) else {
                 "at_least": job.max_model_len.at_least,
                 **({} if job.max_model_len.at_most is None else {"at_most": job.max_model_len.at_most})}}
            for job in fleet.jobs]
    return {"pools": pools, "jobs": jobs}


def _fullest_node_host(placements: list[dict], pool: dict) -> float | None:
    """What a pool's title and its JSON's fullest_node_host_gb say the jobs placed in `pool` need together on its
    fullest node, where it gives host_ram_gb: each job's host_memory_gb (else its plan's) on its trainer's nodes
    (the first ceil(trainer_gpus / gpus_per_node) of its nodes), in tenths of a GiB as its table shows it."""
    tenths: dict[int, int] = {}
    for entry in placements:
        need = entry.get("host_memory_gb")
        need = entry.get("plan", {}).get("host_memory_gb") if need is None else need
        if entry.get("pool") != pool["name"] or need is None:
            continue
        for node in entry["nodes"][:math.ceil(entry["trainer_gpus"] / pool["gpus_per_node"])]:
            tenths[node] = tenths.get(node, 0) + round(need * 10)
    return max(tenths.values()) / 10 if tenths and pool.get("host_ram_gb") is not None else None


VLLM_LORA_TOKEN_BYTES, VLLM_BATCHED_TOKENS = 56, 2048
"""What vLLM's punica wrapper keeps for LoRA per batched token, and the tokens an engine batches (docs/memory.md,
"LoRA": Qwen3-8B's slots at rank 16 on one GPU hold 114,688 bytes of them)."""


def _vllm_lora_gib(model: Any, size: int, rank: int) -> float:
    """What one GPU of a vLLM rollout engine of tensor-parallel `size` holds for a LoRA adapter of `rank` on a dense
    model (docs/memory.md, "LoRA"): one slot of rank x (inputs + outputs) bf16 values on every linear layer and the
    embeddings, whatever the adapter's targets (a column-parallel layer's outputs and a row-parallel one's inputs
    split over the engine, the KV heads' at least one head a GPU; the vocabulary whole for the embeddings, a tied
    output projection and the logits), and the punica wrapper's indices per batched token; on a mixture of experts
    (`reference.lora_counted`'s, every layer an expert layer) each layer's replicated router whole and its routed
    experts each a gated MLP (vLLM's ``FusedMoEWithLoRA``)."""
    hidden, layers = model.hidden_size, model.num_layers
    width, mlps = (model.intermediate_size, 1) if model.moe is None else (model.moe.moe_intermediate_size,
                                                                          model.moe.experts)
    queries, kv_heads = model.num_attention_heads * model.head_size, model.num_key_value_heads
    keys = kv_heads * model.head_size / min(size, kv_heads)
    vocabulary = (model.vocab_size + hidden) * (3 if model.tied_embeddings else 2)
    router = 0 if model.moe is None else hidden + model.moe.experts
    layer = (hidden + queries / size) * 2 + (hidden + keys) * 2 + (hidden + width / size) * 3 * mlps + router
    return (2 * rank * (vocabulary + layers * layer) + VLLM_LORA_TOKEN_BYTES * VLLM_BATCHED_TOKENS) / 2**30


def _lora_slots_problems(model: Any, job: dict, entry: dict) -> list[str]:
    """Problems with the LoRA slots a placement's rollout engines hold (``rollout_engines.lora_gib``, at the size it
    gives): `_vllm_lora_gib` for a LoRA job, none for another."""
    engines = entry.get("rollout_engines")
    if not isinstance(engines, dict) or not _is_int(engines.get("size")):
        return []
    rank = job.get("lora_rank", 0)
    want = round(_vllm_lora_gib(model, engines["size"], rank), 2) if rank else None
    if engines.get("lora_gib") == want:
        return []
    return [f"rollout_engines.lora_gib={engines.get('lora_gib')!r}, expected {want!r}"]


def check_placements(
    catalog: Catalog,
    instance: dict,
    result: dict,
    *,
    minimize_nodes: bool = False,
    ignore_unused_gpus: bool = False,
    estimates: bool = False,
    token_budget: str = "default",
    trinity_version: str | None = None,
    weights: Weights | None = None,
    margin: float | None = None,
    memory: Any | None = None,
) -> list[str]:
    """Problems with a solver result (validity only, not optimality); an empty list means valid.

    The plan of each placement is checked with `reference.check_plan(..., budget_gpus=trainer_gpus,
    exact=True)`, which wants unused_gpus == 0; `ignore_unused_gpus=True` drops only that one complaint. A plan
    whose trainer spans nodes (more GPUs than a node) is cautioned ``trainer-spans-nodes`` unless its pool states
    ``node_interconnect: infiniband`` or ``roce``. With minimize_nodes every job must be placed. `trinity_version` is
    the run's release (``solve cluster --trinity-version``, `place`'s keyword): each job's plans are counted for its
    own ``trinity_version``, else for the run's (docs/cluster.md). `weights`: the cost weights the plans were weighed
    with (None: the shipped ones); `margin` and `memory`: the margin estimates are held to and the memory model that
    makes them (``--margin``, ``--memory-model``; None: the default on the card, the shipped model).
    """
    problems: list[str] = []
    jobs = {job["name"]: _estimated_with(_under_release(job, trinity_version), margin, memory)
            for job in _jobs(instance)}
    pools = _pools(instance)
    placements = result.get("placements")
    unplaced = result.get("unplaced")
    if not isinstance(placements, list) or not isinstance(unplaced, list):
        return ["the result needs lists 'placements' and 'unplaced'"]

    # Every job exactly once.
    seen: dict[str, int] = {}
    for entry in [*placements, *unplaced]:
        name = entry.get("job") if isinstance(entry, dict) else None
        if not isinstance(name, str) or name not in jobs:
            problems.append(f"unknown job {name!r} in the result")
            continue
        seen[name] = seen.get(name, 0) + 1
    for name in jobs:
        if seen.get(name, 0) == 0:
            problems.append(f"job {name!r} is neither placed nor unplaced")
        elif seen[name] > 1:
            problems.append(f"job {name!r} appears {seen[name]} times")
    if minimize_nodes:
        for entry in unplaced:
            problems.append(f"job {entry.get('job')!r} is unplaced, but minimize nodes must place every job")

    # Each placement on its own, collecting node usage: (pool, node) -> list of (job, gpus, whole), and
    # which job holds each GPU index of a node.
    usage: dict[tuple[str, int], list[tuple[str, int, bool]]] = {}
    gpus_taken: dict[tuple[str, int], dict[int, str]] = {}
    for entry in placements:
        name = entry.get("job")
        if name not in jobs:
            continue
        job = jobs[name]
        where = f"job {name!r}"
        pool = pools.get(entry.get("pool"))
        if pool is None:
            problems.append(f"{where}: unknown pool {entry.get('pool')!r}")
            continue
        if job.get("pool") is not None and job["pool"] != pool["name"]:
            problems.append(f"{where}: placed in pool {pool['name']!r}, but it asks for pool {job['pool']!r}")
        gpu = catalog.gpu(pool["gpu"]).name
        model = catalog.model(job["model"]).name
        g = pool["gpus_per_node"]
        r = _rollout(job)
        n = entry.get("trainer_gpus")
        plan = entry.get("plan")
        nodes = entry.get("nodes")
        if not _is_int(n) or n < 1:
            problems.append(f"{where}: trainer_gpus={n!r} is not a positive int")
            continue
        if not isinstance(plan, dict):
            problems.append(f"{where}: plan is {plan!r}, not a dict")
            continue
        if not isinstance(nodes, list) or not all(_is_int(node) for node in nodes):
            problems.append(f"{where}: nodes={nodes!r} is not a list of ints")
            continue

        # The plan.
        if plan.get("gpus") != n:
            problems.append(f"{where}: plan gpus={plan.get('gpus')!r} but trainer_gpus={n}")
        length: Any = plan.get("max_model_len")
        # The plan's layout is the placement's (its nodes counted); the rest is the planner's for n GPUs.
        if (plan.get("nodes"), plan.get("rollout_gpus")) != (len(nodes), entry.get("rollout_gpus")):
            problems.append(f"{where}: plan nodes/rollout_gpus {plan.get('nodes')}/{plan.get('rollout_gpus')}, "
                            f"expected {len(nodes)}/{entry.get('rollout_gpus')}")
        # A stretch stopped short of thin headroom keeps the token budget of the margin it stopped at.
        budget = _job_budget(job, token_budget)
        stopped = estimates and budget == "auto" and _length_request(job)[1] and any(
            short and stop is not None and stop["max_model_len"] == length
            for stop, short in (_stretch_plan(catalog, gpu, job, n, pool, estimates, token_budget, without)
                                for without in (False, True)))
        plan_problems = check_plan(catalog, {**plan, "nodes": None, "rollout_gpus": None}, gpu=gpu, model=model,
                                   budget_gpus=n, max_model_len=length, exact=True, node_gpus=g if n > g else n,
                                   host_node_gpus=g,
                                   estimates=estimates, token_budget=budget if estimates else "default",
                                   host_ram_gb=pool.get("host_ram_gb"), train_batch_size=job.get("train_batch_size"),
                                   budget_margin=_roomy_margin(catalog, gpu, job) if stopped else None,
                                   critic=_critic(job), trinity_version=job.get("trinity_version"),
                                   weights=weights, reference_model=job.get("reference_model", True),
                                   dpo=job.get("dpo", False), margin=margin, memory=memory,
                                   lora_rank=job.get("lora_rank", 0), lora_modules=job.get("lora_modules"),
                                   lora_pattern=job.get("lora_pattern"), lora_exclude=job.get("lora_exclude"))
        if ignore_unused_gpus:
            plan_problems = [p for p in plan_problems if not p.startswith("unused_gpus=")]
        problems.extend(f"{where}: plan: {p}" for p in plan_problems)
        problems.extend(f"{where}: {p}" for p in _lora_slots_problems(catalog.model(model), job, entry))
        spans = "trainer-spans-nodes" in (plan.get("caution_codes") or [])
        if spans != (n > g and pool.get("node_interconnect") not in ("infiniband", "roce")):
            problems.append(f"{where}: a trainer-spans-nodes caution {'given' if spans else 'missing'} ({n} trainer "
                            f"GPUs on nodes of {g}, node_interconnect {pool.get('node_interconnect')!r})")

        # The length.
        wanted, at_least = _length_request(job)
        if _is_int(length):
            if at_least and length < wanted:
                problems.append(f"{where}: max_model_len={length} is below at_least {wanted}")
            if at_least and length > job["max_model_len"].get("at_most", length):
                problems.append(f"{where}: max_model_len={length} is above at_most {job['max_model_len']['at_most']}")
            if not at_least and length != wanted:
                problems.append(f"{where}: max_model_len={length}, but the job asks for exactly {wanted}")

        # The layout.
        shape = layout(n, r, g)
        if n > g and _is_int(plan.get("sp")) and plan["sp"] >= 1 and g % plan["sp"] != 0:
            problems.append(
                f"{where}: SP={plan['sp']} spans nodes: the trainer's {n} GPUs exceed a node of {g}, "
                f"and SP must divide {g}"
            )
        if shape is None:
            problems.append(
                f"{where}: {n} trainer + {r} rollout GPUs do not fit one node of {g}, and {n} trainer "
                f"GPUs are not whole nodes of {g}"
            )
        elif shape[0] == ONE:
            if len(nodes) != 1:
                problems.append(f"{where}: {n} + {r} GPUs fit one node but it is on {len(nodes)} nodes")
            if entry.get("rollout_gpus") != r:
                problems.append(f"{where}: rollout_gpus={entry.get('rollout_gpus')!r}, expected {r}")
        else:
            k = shape[1]
            if len(nodes) != k:
                problems.append(
                    f"{where}: takes {len(nodes)} whole nodes, expected {k} ({n}/{g} trainer + ceil({r}/{g}) rollout)"
                )
            if entry.get("rollout_gpus") != k * g - n:
                problems.append(
                    f"{where}: rollout_gpus={entry.get('rollout_gpus')!r}, expected {k * g - n} ({k} nodes x {g} - {n})"
                )

        # The GPUs on its nodes: n + r of a shared node, or all of each node taken whole.
        # (Optional in a result written by hand; `solve cluster` always gives them.)
        indexes = entry.get("gpu_indexes", "absent")
        wanted = (n + r) if shape is not None and shape[0] == ONE else g
        if indexes == "absent":
            pass
        elif (not isinstance(indexes, list) or len(indexes) != wanted or len(set(indexes)) != wanted
                or not all(_is_int(i) and 0 <= i < g for i in indexes)):
            problems.append(f"{where}: gpu_indexes={indexes!r}, expected {wanted} distinct GPUs of 0..{g - 1}")
        else:
            for node in set(nodes):
                taken = gpus_taken.setdefault((pool["name"], node), {})
                for index in indexes:
                    if index in taken:
                        problems.append(f"{where}: GPU {index} of node {node} is also {taken[index]!r}'s")
                    taken[index] = name

        # The nodes.
        if len(set(nodes)) != len(nodes):
            problems.append(f"{where}: a node is listed twice in {nodes}")
        for node in set(nodes):
            if not 0 <= node < pool["nodes"]:
                problems.append(f"{where}: node {node} is outside pool {pool['name']!r} (nodes 0..{pool['nodes'] - 1})")
                continue
            if node in pool.get("down", []):
                problems.append(f"{where}: node {node} of pool {pool['name']!r} is down")
                continue
            if shape is not None and shape[0] == ONE:
                host = shared_host_need(catalog, job, n, plan, shape, pool) if "offload" in plan else 0.0
                usage.setdefault((pool["name"], node), []).append((name, n + r, False, host))
            else:
                usage.setdefault((pool["name"], node), []).append((name, g, True, 0.0))

    # What the result says it uses of each pool: the nodes the placements list, and their trainer and rollout GPUs.
    if "pools" in result:
        expected = [{"pool": name, "nodes": pool["nodes"], "gpus": pool["nodes"] * pool["gpus_per_node"],
                     "down": sorted(pool.get("down", [])),  # read in ascending order
                     "nodes_used": len({(entry["pool"], node) for entry in placements if entry.get("pool") == name
                                        for node in entry.get("nodes", [])}),
                     "gpus_used": sum(entry.get("trainer_gpus", 0) + entry.get("rollout_gpus", 0)
                                      for entry in placements if entry.get("pool") == name),
                     "host_ram_gb": pool.get("host_ram_gb"),
                     "fullest_node_host_gb": _fullest_node_host(placements, pool)}
                    for name, pool in pools.items()]
        if result["pools"] != expected:
            problems.append(f"pools {result['pools']}, expected {expected}")

    # Capacity.
    for (pool_name, node), users in sorted(usage.items()):
        g, host_ram = pools[pool_name]["gpus_per_node"], pools[pool_name].get("host_ram_gb")
        whole = [user for user, _, is_whole, _ in users if is_whole]
        names = [user for user, _, _, _ in users]
        if whole and len(users) > 1:
            problems.append(f"pool {pool_name!r} node {node}: taken whole by {whole[0]!r} but used by {names}")
        elif not whole:
            total = sum(gpus for _, gpus, _, _ in users)
            if total > g:
                problems.append(f"pool {pool_name!r} node {node}: {total} GPUs used by {names}, over its {g}")
            host = sum(need for _, _, _, need in users)
            if host_ram is not None and host > host_ram:
                problems.append(f"pool {pool_name!r} node {node}: Offload jobs {names} need {host:.1f} GiB of host "
                                f"memory, over its {host_ram:g}")
    return problems


ROOM_HOLDERS = re.compile(r"; (?P<names>[^;]+?) \(priority (?P<priority>\d+)(?: together)?(?P<tie>, as much as "
                          r"its own)?\) holds? the room it needs(?: in (?P<pool>[^:;,]+))?(?:, with [^:;]+ on "
                          r"(?:another of its|other) ways)?(?:: priority (?P<least>\d+) (?:(?P<exact>is the least "
                          r"that places it)(?: \((?P<moving>moving other jobs)?(?:; )?(?P<broken>with as much "
                          r"priority placed, [^);]+)?\))?|would place it))?(?:;|$)")
"""A no-room reason's clause naming the placed jobs that hold the room the job needs (four named, the rest
counted), the priority they hold together, the pool where the job has ways in several (and the jobs sharing their
node put on other ways of theirs), and, in a placement whose
priority is proven the most, the priority that places the job: the least (`exact`; below theirs where other jobs
move: `moving`; at which a stage after priority breaks the tie in its favour: `broken`), or one that does."""


def least_placing_priority(catalog: Catalog, instance: dict, name: str, estimates: bool = False,
                           token_budget: str = "default") -> int | None:
    """The least priority at which the best placement places job `name` (None where it has no way to run):
    `_least_placing`'s, the tie weighed."""
    least = _least_placing(catalog, instance, name, estimates, token_budget)
    return None if least is None else least[1]


def _least_placing(catalog: Catalog, instance: dict, name: str, estimates: bool,
                   token_budget: str) -> tuple[int, int] | None:
    """For job `name`: one more than the priority the best placement without it holds beyond the best with it, and
    the least priority that places it: that, or one less where, at that, the jobs placed with it come earlier in the
    file (`_tied_order`, the job at that priority: the stage after priority), or, where those tie too, the longer
    lengths, then the lower cost (as `_sort_key` orders them); None where it has no way to run."""
    jobs = _jobs(instance)
    outweighing = 1 + sum(_priority(job) for job in jobs)  # a priority every placement with the job beats all without
    raised = {**instance, "jobs": [{**job, "priority": outweighing} if job["name"] == name else job for job in jobs]}
    best_without, choice_without, _ = _search(catalog, instance, False, True, estimates, token_budget, left_out=name)
    best_with, choice_with, _ = _search(catalog, raised, False, True, estimates, token_budget)
    if best_without is None or best_with is None or best_with[0] <= best_without[0]:
        return None
    least = best_without[0] - (best_with[0] - outweighing) + 1
    at_one_less = [{**job, "priority": least - 1} if job["name"] == name else job for job in jobs]
    _, gain_with, cost_with = _score(jobs, choice_with, 0, False)
    _, gain_without, cost_without = _score(jobs, choice_without, 0, False)
    weighs_more = ((_tied_order(at_one_less, choice_with), gain_with, -cost_with)
                   > (_tied_order(jobs, choice_without), gain_without, -cost_without))
    return least, least - 1 if weighs_more else least


def check_tie_claims(catalog: Catalog, instance: dict, result: dict, estimates: bool = False,
                     token_budget: str = "default") -> list[str]:
    """Problems with the jobs a result says are left out in a tie of priority (`priority-tie`): each is one that a
    placement with it of as much priority would place, left out by the file order alone, and the priority its
    reason says places it (one more than its own) is the least that does (brute force). An empty list means none."""
    problems: list[str] = []
    jobs = {job["name"]: job for job in _jobs(instance)}
    for entry in result["unplaced"]:
        if entry["reason_code"] != "priority-tie":
            continue
        own = _priority(jobs[entry["job"]])
        least = _least_placing(catalog, instance, entry["job"], estimates, token_budget)
        if least != (own + 1, own + 1) or f"priority {own + 1} places it" not in entry["reason"]:
            problems.append(f"{entry['job']}: priority {own}, least placing it {least}: {entry['reason']}")
    return problems


def check_room_claims(catalog: Catalog, instance: dict, result: dict, estimates: bool = False,
                      token_budget: str = "default") -> list[str]:
    """Problems with what the no-room reasons of a result say of the room each job needs (`ROOM_HOLDERS`): the
    jobs named are placed (in the pool named), hold the priority it says together, at least the job's own; and
    the priority that places it, where it names one (an optimal result must), does (brute force), and is the least
    that does where it says so (one more than they hold where that is its own, else as CP-SAT proved it), or else
    one more than they hold. An empty list means none."""
    problems: list[str] = []
    jobs = {job["name"]: job for job in _jobs(instance)}
    placed = {entry["job"]: entry["pool"] for entry in result["placements"]}
    for entry in result["unplaced"]:
        if entry["reason_code"] not in ("no-room", "no-room-unproven"):
            continue
        name, claim = entry["job"], ROOM_HOLDERS.search(entry["reason"])
        if claim is None:
            if "; the room left" not in entry["reason"] or result["status"] == "optimal":
                problems.append(f"{name}: no room, but no jobs named that hold it: {entry['reason']}")
            continue
        holders = claim["names"].split(", ")
        if " more job" not in claim["names"]:
            if any(holder not in placed or (claim["pool"] or placed[holder]) != placed[holder] for holder in holders):
                problems.append(f"{name}: {holders} are not all placed in {claim['pool'] or 'one pool'}: {placed}")
            elif sum(_priority(jobs[holder]) for holder in holders) != int(claim["priority"]):
                problems.append(f"{name}: {holders} do not hold priority {claim['priority']} together")
        if claim["least"] is None:
            if result["status"] == "optimal":
                problems.append(f"{name}: an optimal placement, but no priority that places it: {entry['reason']}")
            continue
        own, held = _priority(jobs[name]), int(claim["priority"])
        said, exact = int(claim["least"]), claim["exact"] is not None
        if held < own or (held == own) != bool(claim["tie"]) or (claim["tie"] and not exact) or said > held + 1 or (
                not exact and said != held + 1) or bool(claim["moving"]) != (said + bool(claim["broken"]) <= held):
            problems.append(f"{name}: priority {own}, its room held by {held}: {entry['reason']}")
        least = least_placing_priority(catalog, instance, name, estimates, token_budget)
        if least is None or least > said or (exact and least != said):
            problems.append(f"{name}: the least priority that places it is {least}: {entry['reason']}")
    return problems


def idle_room(catalog: Catalog, instance: dict, result: dict) -> dict[tuple[str, int], tuple[int, float]]:
    """Per (pool, node) of a result's placements: the GPUs and the host memory (GiB; 0 where the pool gives none)
    that no placed job takes; a node a job takes whole has none of either."""
    jobs, pools = {job["name"]: job for job in _jobs(instance)}, _pools(instance)
    idle = {(name, node): (pool["gpus_per_node"], pool.get("host_ram_gb") or 0.0)
            for name, pool in pools.items() for node in range(pool["nodes"])}
    for entry in result["placements"]:
        pool, job = pools[entry["pool"]], jobs[entry["job"]]
        where = layout(entry["trainer_gpus"], _rollout(job), pool["gpus_per_node"])
        for node in entry["nodes"]:
            gpus, host = idle[entry["pool"], node]
            if where[0] == WHOLE:
                idle[entry["pool"], node] = (0, 0.0)
            else:
                idle[entry["pool"], node] = (gpus - where[1], host - shared_host_need(
                    catalog, job, entry["trainer_gpus"], entry["plan"], where, pool))
    return idle


def _fits_idle(catalog: Catalog, instance: dict, job: dict, idle: dict[tuple[str, int], tuple[int, float]],
               estimates: bool, token_budget: str) -> list[tuple[str, tuple[int, ...], int]]:
    """Every (pool, nodes, trainer GPUs) where one of the job's candidates fits the `idle` room: on one node whose
    idle GPUs and host memory hold it (with the least host memory a plan of its count needs there), or on as many
    wholly idle nodes as it takes."""
    fits = []
    for pool in _allowed_pools(instance, job):
        gpu, g = catalog.gpu(pool["gpu"]).name, pool["gpus_per_node"]
        empty = tuple(node for node in range(pool["nodes"]) if idle[pool["name"], node][0] == g)
        for candidate in job_candidates(catalog, job, pool, estimates, token_budget):
            n, (kind, size) = candidate["n"], candidate["layout"]
            if kind == WHOLE:
                fits += [(pool["name"], empty[:size], n)] if len(empty) >= size else []
                continue
            estimated = candidate["plan"]["evidence"] == "estimated"
            plans = [p for p in _plans(catalog, gpu, job, n, candidate["length"], pool, estimated, token_budget)
                     if sp_fits_nodes(n, p["sp"], g)]
            host = min(shared_host_need(catalog, job, n, p, (kind, size), pool) for p in plans)
            fits += [(pool["name"], (node,), n) for node in range(pool["nodes"])
                     if size <= idle[pool["name"], node][0]
                     and (pool.get("host_ram_gb") is None or host <= idle[pool["name"], node][1])]
    return fits


def _room_words(instance: dict, idle: dict[tuple[str, int], tuple[int, float]], fits: dict) -> str:
    """The idle room a `fits_with` entry names, in words, as the reason's last clause gives it."""
    pools = _pools(instance)
    pool = pools[fits["pool"]]
    g, node = pool["gpus_per_node"], fits["nodes"][0]
    where = f" in {pool['name']}" if len(pools) > 1 else ""
    if not fits["whole_nodes"]:
        gpus, host = idle[pool["name"], node]
        room = f"in node {node}'s {gpus} idle GPU{'s' if gpus != 1 else ''}" + (
            f" and {host:.1f} GiB of idle host memory" if pool.get("host_ram_gb") is not None else "")
    else:
        empty = sum(idle[pool["name"], n][0] == g for n in range(pool["nodes"]))
        nodes = f"{empty} idle node{'s' if empty != 1 else ''}"
        room = f"on the {nodes}" if len(fits["nodes"]) == empty else f"on {len(fits['nodes'])} of the {nodes}"
    trainer = fits["trainer_gpus"]
    return f"{room}{where} (a trainer of {trainer} GPU{'s' if trainer != 1 else ''})"


def _longest_cuts(catalog: Catalog, instance: dict, job: dict, idle: dict[tuple[str, int], tuple[int, float]],
                  estimates: bool, token_budget: str) -> list[int]:
    """The lengths shorter than the job's that a shorter ask is chosen among, the longest 4 of them, the longest first:
    per pool it may use, the longest length of a plan on exactly each trainer GPU count that a node's idle GPUs leave
    room for beside its rollout."""
    length, _ = _length_request(job)
    cuts = set()
    for pool in _allowed_pools(instance, job):
        gpu, g = catalog.gpu(pool["gpu"]).name, pool["gpus_per_node"]
        room = max(idle[pool["name"], node][0] for node in range(pool["nodes"])) - _rollout(job)
        for n in range(1, room + 1):
            plans = [p for p in _plans(catalog, gpu, job, n, None, pool, estimates, token_budget)
                     if sp_fits_nodes(n, p["sp"], g)]
            cuts |= {plans[0]["max_model_len"]} if plans and plans[0]["max_model_len"] < length else set()
    return sorted(cuts, reverse=True)[:4]


def check_smaller_asks(catalog: Catalog, instance: dict, result: dict, estimates: bool = False,
                       token_budget: str = "default") -> list[str]:
    """Problems with what a result says of the smaller asks with which a job left out for want of room would fit the
    room its placement leaves idle (`fits_with` in the JSON, and the reason's last clause, word for word), by brute
    force: the fewer rollout GPUs are the first count below the job's (the most first) with which one of its
    candidates fits the idle room; the shorter length the first of the longest lengths on the trainer GPUs each idle
    node leaves beside its rollout (`_longest_cuts`) at which one does; each where one fits, and its pool, nodes and
    trainer count among those that fit; a result Ctrl-C cut short (``interrupted``) tells none. An empty list means
    none."""
    if result.get("interrupted"):
        return [f"{entry['job']}: fits with {entry['fits_with']} after Ctrl-C" for entry in result["unplaced"]
                if entry.get("fits_with")]
    problems: list[str] = []
    jobs, idle = {job["name"]: job for job in _jobs(instance)}, idle_room(catalog, instance, result)
    for entry in result["unplaced"]:
        if entry["reason_code"] not in ("no-room", "no-room-unproven"):
            continue
        job = jobs[entry["job"]]
        length, at_least = _length_request(job)
        fewer = next(((rollout, fits) for rollout in range(_rollout(job) - 1, -1, -1)
                      if (fits := _fits_idle(catalog, instance, {**job, "rollout_gpus": rollout}, idle, estimates,
                                             token_budget))), None)
        shorter = next(((cut, fits) for cut in _longest_cuts(catalog, instance, job, idle, estimates, token_budget)
                        if (fits := _fits_idle(catalog, instance, {**job, "max_model_len": _shortened(job, cut)}, idle,
                                               estimates, token_budget))), None)
        expected = [(rollout, length, fits) for rollout, fits in ([fewer] if fewer else [])]
        expected += [(_rollout(job), cut, fits) for cut, fits in ([shorter] if shorter else [])]
        claimed = entry["fits_with"]
        if [(c["rollout_gpus"], c["max_model_len"]) for c in claimed] != [(r, n) for r, n, _ in expected]:
            problems.append(f"{entry['job']}: fits with {expected}, but the result says {claimed}")
            continue
        clauses = []
        for claim, (_, _, fits) in zip(claimed, expected):
            if (claim["pool"], tuple(claim["nodes"]), claim["trainer_gpus"]) not in fits:
                problems.append(f"{entry['job']}: {claim} is not where it fits ({fits})")
            outside = "; its explorer on GPUs outside the fleet" if not claim["rollout_gpus"] else ""
            change = (f"with rollout_gpus {claim['rollout_gpus']} (not {_rollout(job)}{outside})"
                      if claim["rollout_gpus"] != _rollout(job) else
                      f"{'with at_least' if at_least else 'at'} {claim['max_model_len']} tokens (not {length})")
            clauses.append(f"{change}{'' if clauses else ' it would fit'} {_room_words(instance, idle, claim)}")
        words = f"; {', or '.join(clauses)}" if clauses else ""
        if clauses and not entry["reason"].endswith(words):
            problems.append(f"{entry['job']}: the reason does not end with {words!r}: {entry['reason']}")
    return problems


def value_of(catalog: Catalog, instance: dict, result: dict, minimize_nodes: bool = False) -> tuple[int, int, int]:
    """The objective triple of a result (assumed valid: run check_placements first).

    (total_priority, total_gain, total_cost), or with minimize_nodes (nodes_used, total_gain, total_cost);
    minimize_nodes with an unplaced job raises ValueError (such a result has no value in that mode).
    """
    jobs = {job["name"]: job for job in _jobs(instance)}
    if minimize_nodes and result["unplaced"]:
        raise ValueError(f"minimize nodes, but jobs are unplaced: {[e['job'] for e in result['unplaced']]}")
    priority = gain = cost = 0
    used: set[tuple[str, int]] = set()
    for entry in result["placements"]:
        job = jobs[entry["job"]]
        priority += _priority(job)
        gain += _gain(job, entry["plan"]["max_model_len"])
        cost += _cost_int(entry["plan"])
        used.update((entry["pool"], node) for node in entry["nodes"])
    return (len(used), gain, cost) if minimize_nodes else (priority, gain, cost)


# --- widening onto idle GPUs --------------------------------------------------------------------------------


def _wider_ways(catalog: Catalog, job: dict, pool: dict, placed: dict, idle: int, estimates: bool,
                token_budget: str) -> list[dict]:
    """The ways a job placed on a shared node (`placed`, its unwidened placement) may grow onto `idle` GPUs of
    it: {"gain", "cost", "gpus", "host"} for its own plan and, for each larger trainer count n that fits the
    node and is a count the GPU type's tables measured or a power of two, the best plan on exactly n GPUs at
    its length (at_least: the longest), on the evidence of its own
    plan (the tables alone unless it is an estimate), and in a pool with host memory the best without Offload
    too."""
    gpu = catalog.gpu(pool["gpu"]).name
    wanted, at_least = _length_request(job)
    estimated = estimates and placed["plan"]["evidence"] == "estimated"
    n0, size0 = placed["trainer_gpus"], placed["trainer_gpus"] + _rollout(job)

    def way(n: int, plan: dict) -> dict:
        host = shared_host_need(catalog, job, n, plan, (ONE, n + _rollout(job)), pool)
        return {"gain": _gain(job, plan["max_model_len"]), "cost": _cost_int(plan), "gpus": n + _rollout(job),
                "host": host}

    ways = [way(n0, placed["plan"])]
    measured = {table.gpus for table in catalog.gpu(gpu).tables}
    for n in range(n0 + 1, n0 + idle + 1):
        if n not in measured and n & (n - 1):  # only to a count the tables measured, or a power of two
            continue
        withouts = (False, True) if pool.get("host_ram_gb") is not None else (False,)
        if at_least:
            firsts = [_stretch_plan(catalog, gpu, job, n, pool, estimated, token_budget, without)[0]
                      for without in withouts]
        else:
            plans = _plans(catalog, gpu, job, n, wanted, pool, estimated, token_budget)
            firsts = [next((p for p in plans if not (without and p["offload"])), None) for without in withouts]
        ways += [way(n, plan) for plan in firsts if plan is not None and plan["max_model_len"] >= wanted]
    assert all(w["gpus"] <= size0 + idle for w in ways)
    return ways


def best_widening(catalog: Catalog, instance: dict, unwidened: dict, estimates: bool = False,
                  token_budget: str = "default") -> dict[tuple[str, int], tuple[int, int, int]]:
    """Per shared node of an unwidened placement, with idle GPUs and jobs on it: the best (gain, -cost, -GPUs)
    its jobs reach together when each may grow onto its idle GPUs (`_wider_ways`), within the node's GPUs
    and host memory: the most length gained, then the least cost, then the fewest GPUs."""
    jobs, pools = {job["name"]: job for job in _jobs(instance)}, _pools(instance)
    by_node: dict[tuple[str, int], list[dict]] = {}
    for entry in unwidened["placements"]:
        pool = pools[entry["pool"]]
        if layout(entry["trainer_gpus"], _rollout(jobs[entry["job"]]), pool["gpus_per_node"])[0] == ONE:
            by_node.setdefault((pool["name"], entry["nodes"][0]), []).append(entry)
    best = {}
    for (pool_name, node), here in by_node.items():
        pool = pools[pool_name]
        g, host_ram = pool["gpus_per_node"], pool.get("host_ram_gb")
        idle = g - sum(e["trainer_gpus"] + _rollout(jobs[e["job"]]) for e in here)
        if not idle:
            continue
        choices = [_wider_ways(catalog, jobs[e["job"]], pool, e, idle, estimates, token_budget) for e in here]
        values = [
            (sum(w["gain"] for w in combination), -sum(w["cost"] for w in combination),
             -sum(w["gpus"] for w in combination))
            for combination in itertools.product(*choices)
            if sum(w["gpus"] for w in combination) <= g
            and (host_ram is None or sum(w["host"] for w in combination) <= host_ram)
        ]
        best[(pool_name, node)] = max(values)
    return best


def widening_value(instance: dict, result: dict, nodes: Any) -> dict[tuple[str, int], tuple[int, int, int]]:
    """The (gain, -cost, -GPUs) of the jobs on each of these (pool, node)s in a result."""
    jobs = {job["name"]: job for job in _jobs(instance)}
    value: dict[tuple[str, int], tuple[int, int, int]] = {}
    for entry in result["placements"]:
        key = (entry["pool"], entry["nodes"][0])
        if key in nodes and len(entry["nodes"]) == 1:
            gain, cost, gpus = value.get(key, (0, 0, 0))
            job = jobs[entry["job"]]
            value[key] = (gain + _gain(job, entry["plan"]["max_model_len"]), cost - _cost_int(entry["plan"]),
                          gpus - entry["trainer_gpus"] - _rollout(job))
    return value


# --- random tiny instances -----------------------------------------------------------------------------------

RANDOM_GPUS = ("A100-80GB", "H20-96GB", "a100", "h20")
RANDOM_MODELS = ("Qwen3-0.6B", "Qwen3-1.7B", "Qwen3-4B", "Qwen3-8B", "Qwen3-14B", "4B", "0.6B")
RANDOM_LENGTHS = (4096, 8192, 16384, 20000, 30001, 32768, 40960, 51200, 65536, 100500)
"""Lengths of random jobs: the tables' rows, and some between them (an at_least job gains in steps of 1024 tokens)."""
RANDOM_TRAIN_BATCHES = (1, 3, 6, 10, 256)
"""Train batches of random jobs: ones that only some data-parallel rank counts divide."""


RANDOM_HOST_RAM_GB = (None, None, 100, 300, 420)
"""Host memory per node of random pools: unchecked, or so little that Offload jobs of Qwen3-8B (about 141
GiB) and Qwen3-14B (about 255 GiB) cannot run there at all, cannot share a node, or share it in some pairs."""


def random_instance(rng: Any) -> dict:
    """A tiny random instance: 1-2 pools (A100-80GB / H20-96GB, 1-2 nodes of 2, 3, 4 or 8 GPUs, at most 3 nodes
    in all, sometimes with host memory), 1-4 jobs (Qwen3 0.6B-14B, a length from a small set, sometimes at_least, rollout 0-4, priority
    1-3, sometimes a pool, sometimes a train batch). Names are sometimes aliases."""
    pool_count = rng.randint(1, 2)
    pools = []
    budget = 3
    for index in range(pool_count):
        nodes = rng.randint(1, min(2, budget - (pool_count - 1 - index)))
        budget -= nodes
        pools.append(
            {
                "name": f"p{index}",
                "gpu": rng.choice(RANDOM_GPUS),
                "nodes": nodes,
                "gpus_per_node": rng.choice((2, 3, 4, 8)),
            }
        )
        host_ram_gb = rng.choice(RANDOM_HOST_RAM_GB)
        if host_ram_gb is not None:
            pools[-1]["host_ram_gb"] = host_ram_gb
    jobs = []
    for index in range(rng.randint(1, 4)):
        length = rng.choice(RANDOM_LENGTHS)
        job: dict[str, Any] = {
            "name": f"j{index}",
            "model": rng.choice(RANDOM_MODELS),
            "max_model_len": {"at_least": length} if rng.random() < 0.35 else length,
            "rollout_gpus": rng.randint(0, 4),
        }
        if rng.random() < 0.7:
            job["priority"] = rng.randint(1, 3)
        if rng.random() < 0.3:
            job["pool"] = rng.choice(pools)["name"]
        if rng.random() < 0.3:
            job["train_batch_size"] = rng.choice(RANDOM_TRAIN_BATCHES)
        jobs.append(job)
    return {"pools": pools, "jobs": jobs}


def random_idle_instance(rng: Any) -> dict:
    """A tiny random instance with room to spare: one pool of 1-2 nodes of 8 GPUs (sometimes with host memory)
    and 1-3 jobs with 0-2 rollout GPUs, so that placed jobs often leave a node's GPUs idle."""
    pool: dict[str, Any] = {"name": "p0", "gpu": rng.choice(RANDOM_GPUS), "nodes": rng.randint(1, 2), "gpus_per_node": 8}
    host_ram_gb = rng.choice(RANDOM_HOST_RAM_GB)
    if host_ram_gb is not None:
        pool["host_ram_gb"] = host_ram_gb
    jobs = []
    for index in range(rng.randint(1, 3)):
        length = rng.choice(RANDOM_LENGTHS)
        jobs.append({"name": f"j{index}", "model": rng.choice(RANDOM_MODELS),
                     "max_model_len": {"at_least": length} if rng.random() < 0.35 else length,
                     "rollout_gpus": rng.randint(0, 2), "priority": rng.randint(1, 3)})
        if rng.random() < 0.3:
            jobs[-1]["train_batch_size"] = rng.choice(RANDOM_TRAIN_BATCHES)
    return {"pools": [pool], "jobs": jobs}
