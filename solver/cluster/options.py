"""The jobs' ways to run (the placement's candidates): `Option` (a pool, a plan and the room it takes there), the
planner asked once per job shape (`Planner`, which keeps why a shape has no way: `NoWayReason`), every way a job has
(`job_options`), and the ways to fill a node with the ways' footprints (`patterns`), their host memory counted in as
few classes as keep those few (`host_footprints`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from math import ceil
from typing import Literal

from solver import clock
from solver.memory import estimated_counts, held_host_tenths, host_memory_gib, margin_room, shown_host_tenths
from solver.model import PlanningData, PlanningInputs, prepare_inputs
from solver.query import EstimateMode, Objective, Query, counts_reference, make_query, resolve_margin
from solver.results import Answer, CautionCode, Plan, ReasonCode, ReasonWords, UnplacedPool, tables_refute_caution
from solver.rules import COMMAND_OPTIONS, EXCLUDED_KEY, OptionNames, rollout_layout, validated_length
from solver.solve import WorkBudget, answer_for, at_token_budget, estimate_tables_verdict, past_run_deadline
from solver.tables import (
    AS_IT_RUNS_FLOOR_S,
    DETERMINISTIC_PER_SECOND,
    WAYS_QUESTIONS_PER_SECOND,
    WAYS_WALL_SHARE,
    AtLeast,
    BatchDivisor,
    Catalog,
    ExpertLayout,
    Fleet,
    Job,
    JobTraining,
    MemoryModel,
    Model,
    Pool,
    QueryError,
    ReleaseCounts,
    RunningJob,
    Setting,
    TokenBudgetMode,
    TrinityVersion,
    Weights,
    load_memory_model,
    release_counts,
    releases_agree,
)
from solver.tables.peft_names import LoraTargets

COST_SCALE = 10_000
"""Costs enter the model as whole numbers: the step-time cost times this."""


JOB_BATCH_SOURCE = "the job's train_batch_size"
"""Where a job's train batch comes from, as messages name it."""

JOB_LORA_KEYS = ("the job's lora_rank", "the job's lora_targets", f"the job's {EXCLUDED_KEY}")
"""The keys that give a job's LoRA rank, targets and exclusions, as messages name them (`OptionNames.lora_keys`)."""

JOB_VERSION_KEY = "the job's trinity_version"
"""The key that names a job's own Trinity release, as messages name it (`OptionNames.release_key`)."""

JOB_CRITIC_KEY = "the job's critic"
"""The key that gives a job's PPO critic, as messages name it (`OptionNames.critic_key`)."""

JOB_REFERENCE_KEY = "the job's reference_model"
"""The key that says whether a job's run builds a reference model, as messages name it
(`OptionNames.reference_key`)."""

JOB_LENGTH_KEY = "the job's max_model_len"
"""The key that gives a job's length, as messages name it (`OptionNames.length_key`)."""

JOB_RELEASE_KEY = f"{JOB_VERSION_KEY} 0.5"
"""The key that gives a job's own Trinity release, as a fragment's comments name it (`OptionNames.trinity_05`)."""

PLAN_RELEASE_KEY = "its plan's trinity_version 0.5"
"""What gives the Trinity release of a job that runs now and names none of its own, as a fragment's comments name it
(`OptionNames.trinity_05`): its placed plan's, counted for the release its running plan names (`running_releases`),
else the run's, which the fragment's writer does not know apart."""

JOB_ROLLOUT_SOURCE = "the job's rollout_gpus"
"""Where a job's rollout GPUs come from, as messages name them (`Query.rollout_source`)."""


POOL_HOST_RAM_SOURCE = "the pool's host_ram_gb"
"""Where a job's host memory per node comes from, as messages name it (`host_ram_words`, `host_ram_bound_words`)."""

POOL_NODE_SOURCE = "the pool's gpus_per_node"
"""Where a job's node size comes from, as messages name it (`Query.node_source`)."""

REACH_SHARE = 0.02
"""The share of a run's deterministic time (`DETERMINISTIC_PER_SECOND` per second of its time limit) that the
questions whether more of a pool's nodes train a length (`reasons`' `more_nodes_reach`) may take together, taken from
the search's (`search.place`, `buy.buy`): about 0.0001 each, so about a thousand at the default 10 s."""


class WallClockPassed(Exception):
    """`Planner.best` was to ask a new question past the deadline `Planner.asking_until` set (or `Planner.solve_best`'s
    solve ran out of time): what it was asked for (a job's ways, asked whole or not at all) is left unasked."""


@dataclass(frozen=True)
class WaysLimit:
    """How far working out the jobs' ways, and why the jobs with none have none, may go (or, after the search, the
    smaller asks or the reasons of the jobs left out: `after_search`): until the planner has asked `questions` new
    questions in all (`Planner.asked`), and, as a safety net, until the wall clock's `deadline` (a `time.monotonic()`,
    read on `clock`). A job's ways, a job shape's reasons and each smaller ask are asked whole or not at all."""

    questions: float
    deadline: float
    since: int = 0
    """The questions the planner had asked when the limit began (`Planner.asked`)."""
    per_second: float | None = None
    """The new questions per second of the time limit that gave `questions` (`covering_time_limit_s` counts at it;
    None: `WAYS_QUESTIONS_PER_SECOND`)."""

    @classmethod
    def of(cls, planner: Planner, started: float, factor: int = 1) -> WaysLimit:
        """The limit of a run of `planner`'s time limit that began at `started`, counted from the questions it has
        asked (`WAYS_QUESTIONS_PER_SECOND`, `factor` times as many: `BUY_WAYS_FACTOR`; `WAYS_WALL_SHARE`)."""
        per_second = factor * WAYS_QUESTIONS_PER_SECOND
        return cls(questions=planner.asked + ceil(per_second * planner.time_limit_s),
                   deadline=started + WAYS_WALL_SHARE * planner.time_limit_s, since=planner.asked,
                   per_second=None if factor == 1 else per_second)

    @classmethod
    def after_search(cls, planner: Planner, per_second: float, deadline: float) -> WaysLimit:
        """The limit of a step after the search that asks the planner (the smaller asks,
        `solver.tables.HINTS_QUESTIONS_PER_SECOND`; the reasons of the jobs left out,
        `solver.tables.REASONS_QUESTIONS_PER_SECOND`): `per_second` new questions per second of `planner`'s time limit,
        counted from those it has asked by now, and, as a safety net, the wall clock's `deadline`."""
        return cls(questions=planner.asked + ceil(per_second * planner.time_limit_s), deadline=deadline,
                   since=planner.asked, per_second=per_second)

    def reached(self, planner: Planner) -> Literal["questions", "wall clock"] | None:
        """What of the limit `planner` has reached: its count of questions (the same on every run), or else the wall
        clock; None where neither."""
        if planner.asked >= self.questions:
            return "questions"
        return "wall clock" if clock.seconds_left(self.deadline) <= 0 else None

    def covering_time_limit_s(self, planner: Planner, fleet: Fleet, order: Sequence[int], reached: int) -> int | None:
        """Where the count of questions (`of`'s: `WAYS_QUESTIONS_PER_SECOND`) cut the jobs' ways short after the first
        `reached` jobs of `order` (`ways_order`), the time limit, in whole seconds, that would likely work them all out:
        the questions asked, and for each shape (`ways_shape`) of the jobs left that none of them had, as many as they
        asked per shape they asked about (a shape asked about already asks few more, often none), raised by one part
        in the number of those shapes, at `per_second`; None where the wall clock cut them, or the count
        before any job's turn (nothing to go by). An estimate from counts alone, the same on every run: only asking the
        questions would tell their number. The raise is a floor under it where a short limit reached few shapes, which
        may ask fewer than those after them (at ``--time-limit 1``, their mean alone named 11 s for
        tests/data/cluster-40-jobs.yaml, which needs 13); where it reached many, it is small."""
        asked_shapes = {ways_shape(fleet.jobs[index]) for index in order[:reached]}
        if planner.asked < self.questions or not asked_shapes:  # the wall clock cut them, or no job had a turn
            return None
        new_shapes = {ways_shape(fleet.jobs[index]) for index in order[reached:]} - asked_shapes
        asked, shapes = planner.asked - self.since, len(asked_shapes)
        likely = asked - (-asked * (shapes + 1) * len(new_shapes) // shapes ** 2)  # rounded up
        # a count above them all: no job's turn finds it reached
        return int(likely // (self.per_second or WAYS_QUESTIONS_PER_SECOND)) + 1


@dataclass(frozen=True)
class FleetWays:
    """The jobs' ways (`fleet_options`): the `options`, the pools whose host memory they round up, the jobs (indexes)
    whose ways the time limit left unasked (`cut_short`), and whether the wall clock cut them (else the count)."""

    options: list[Option]
    host_rounded: tuple[str, ...]
    cut_short: tuple[int, ...] = ()
    wall_clock_cut: bool = False
    undecided_jobs: frozenset[int] = frozenset()
    """The jobs (indexes) whose ways rest on a solve that ran out of time (`Planner.undecided_given`), asked in their
    own turn or reused from an earlier job's."""
    covering_time_limit_s: int | None = None
    """Where the count of questions cut the ways short, the time limit that would likely work them all out
    (`covering_time_limit_s`); else None."""


@dataclass(frozen=True)
class Option:
    """One way to run a job: a pool, a plan, and the room it takes there."""

    job: int
    pool: int
    plan: Plan
    size: int
    """GPUs on one node (trainer + rollout), or 0 when the job takes whole nodes."""
    whole_nodes: int
    """Nodes the job takes whole (0 when it sits on one node)."""
    rollout_gpus: int
    gain: int
    """For an ``at_least`` job: how much longer than asked, in units of 1024 tokens."""
    cost: int
    """The plan's step-time cost times `COST_SCALE`."""
    host_tenths: int = 0
    """Host memory, tenths of a GiB, that a job sharing a node takes there (`solver.tables.HOST_NEED_WORDS`), where
    the pool gives its nodes' host memory and jobs sharing a node could exceed it (else 0)."""
    as_it_runs: bool = False
    """Whether it is a running job's own settings (`as_it_runs_ways`), which the planner would not pick there."""
    at_running_count: bool = False
    """Whether it is a way at a running job's trainer GPU count that its other ways in the pool do not take
    (`running_count_ways`)."""
    ways_cut_short: bool = False
    """Whether it is a running job's way as it runs, its only one: the time limit cut working out its ways short
    (`fleet_options`), so the placement may keep it as it runs (`keep_running_jobs`), not stop it for want of time."""
    stopped_at_validated: bool = False
    """Whether an ``at_least`` job's stretch stops at the longest its model is known to handle (`stretch_ceiling`'s
    `validated_length`, below its ``at_most``) where a plan on its GPUs reaches further."""

    @property
    def footprint(self) -> Footprint:
        """What the job takes of a node it shares: (GPUs, host memory in tenths of a GiB)."""
        return self.size, self.host_tenths

    @property
    def nodes(self) -> int:
        """The nodes the job takes: one it may share, or those it takes whole."""
        return self.whole_nodes or 1

    def gpus_per_node(self, node_gpus: int) -> int:
        """GPUs the job takes on each of its nodes, in a pool of `node_gpus`-GPU nodes."""
        return self.size or node_gpus

    def gpus_taken(self, node_gpus: int) -> int:
        """GPUs the job takes in all (whole nodes counted whole), in a pool of `node_gpus`-GPU nodes."""
        return self.size or self.whole_nodes * node_gpus


Footprint = tuple[int, int]
"""What one job takes of a shared node: (GPUs, tenths of a GiB of host memory)."""


def layout(trainer_gpus: int, rollout_gpus: int, node_gpus: int) -> tuple[int, int, int] | None:
    """(GPUs on one node, whole nodes, rollout GPUs) for a job, or None when no layout exists.

    The planner's `rollout_layout`: a job whose trainer and rollout GPUs fit in one node stays in one
    node; a larger one takes whole nodes (a trainer in part of the first with the rollout filling the
    rest, or a trainer on whole nodes with the rollout on the nodes after them).
    """
    if trainer_gpus + rollout_gpus <= node_gpus:
        return trainer_gpus + rollout_gpus, 0, rollout_gpus
    room = rollout_layout(trainer_gpus, rollout_gpus, node_gpus)
    return None if room is None else (0, *room)


@dataclass(frozen=True)
class NoWayReason:
    """Why a job has no way to run in the pools it may use: in words, in the words for several jobs it is true of
    each alone (`Unplaced.reason_for_several`), each with the codes of the cautions they say, and each pool's code in
    the order the words name them."""

    words: ReasonWords
    words_for_several: ReasonWords
    pools: tuple[UnplacedPool, ...] = ()
    cut_short: Literal["questions", "wall clock"] | None = None
    """Where the time limit left the reason unasked, which of its limits did (`WaysLimit.reached`); else None."""


class Planner:
    """The planner's best plan for one job shape, asked once per shape."""

    def __init__(self, catalog: Catalog, weights: Weights, estimate: EstimateMode, time_limit_s: float = 10.0,
                 memory: MemoryModel | None = None, margin: float | None = None,
                 token_budget: TokenBudgetMode = "default", trinity_version: TrinityVersion | None = None,
                 option_names: OptionNames = COMMAND_OPTIONS, expert_layout: ExpertLayout = "fused",
                 batch_divisor: BatchDivisor = "ranks", trinity_release: str | None = None) -> None:
        self.catalog = catalog
        self.weights = weights
        self.estimate = estimate
        self.token_budget = token_budget
        """``auto``: estimated plans may lower their token budget (the tables' tiers keep Trinity's default)."""
        self.time_limit_s = time_limit_s
        """The limit of each of the planner's solves (a few milliseconds each, in practice)."""
        self.memory = memory
        self.margin = margin
        """The memory model of the estimates and their safety margin (None: the shipped model, its margin)."""
        self.trinity_version = trinity_version
        """The Trinity release the plans of a job that names none are for (`release_of`), as `Query.trinity_version`
        (their cautions name its rules)."""
        self.expert_layout = expert_layout
        """How that release holds a mixture of experts' routed experts, as `Query.expert_layout`."""
        self.batch_divisor = batch_divisor
        """What must divide a job's train batch for that release, as `Query.batch_divisor`."""
        self.trinity_release = trinity_release
        """That release as its plans name it (`Query.trinity_release`: 0.5.1)."""
        self.option_names = option_names
        """How the reasons and cautions name the options they point to (`Query.option_names`)."""
        self.cache: dict[tuple[object, ...], Plan | None] = {}
        self.prepared: dict[tuple[PlanningInputs, LoraTargets | None], PlanningData] = {}
        """The tables' data of the questions, prepared once for those of the same inputs (differing in length,
        host memory or the Offload pin)."""
        self.asked = 0
        """How many new questions `best` and `answer` have asked (those their caches did not answer)."""
        self.undecided_keys: set[tuple[object, ...]] = set()
        """The questions of `best` whose solve ran out of time (`undecided` counts them)."""
        self.undecided_given = 0
        """How many times `best` gave one of those answers, asked then or earlier: what a caller's ways rest on."""
        self.answers: dict[tuple[str, Query], Answer] = {}
        """The decided answers `answer` got (`Answer.decided`), by GPU type and question: a question asked again gets
        the same answer, unasked."""
        self.reasons: dict[tuple[object, ...], NoWayReason] = {}
        """Why a job of a shape (model, length, rollout GPUs, training: its `JobTraining`, the train batch, LoRA rank,
        reference model and critic; pool; the pools the question leaves out; and the fleet's pools, whose nodes the
        reasons count) has no way to run, once asked (`why_no_option`)."""
        self.reach_work = WorkBudget(REACH_SHARE * DETERMINISTIC_PER_SECOND * time_limit_s)
        """The deterministic time left to the questions whether more nodes train a length (`REACH_SHARE`), and what
        they spent: the search's stages get that much less (`place`, `buy`)."""
        self.asks_until: float | None = None
        """While `asking_until` sets it, the wall clock's deadline (a `time.monotonic()`, read on `clock`) past which
        `best` asks no new question (`WallClockPassed`); None: no such deadline."""

    @contextmanager
    def asking_until(self, deadline: float | None) -> Iterator[None]:
        """Within the block, `best` raises `WallClockPassed` in place of a new question once the wall clock has passed
        `deadline` (None: no deadline); a question it has answered before is answered still."""
        previous, self.asks_until = self.asks_until, deadline
        try:
            yield
        finally:
            self.asks_until = previous

    @property
    def undecided(self) -> int:
        """How many of the solves behind `best` ran out of time (their ways left out, the placement unproven)."""
        return len(self.undecided_keys)

    def best(self, gpu: str, model: str, gpus: int, length: int | None, node_gpus: int,
             estimate: EstimateMode, host_ram_gb: float | None, offload: bool | None, training: JobTraining, *,
             env: bool | None = None,
             margin: float | None = None, sp: int | None = None) -> Plan | None:
        """Cheapest plan on exactly `gpus` GPUs at `length`, or (None) the longest length there, on the
        evidence `estimate` allows (only where a node's `host_ram_gb` holds its need, `host_memory_gib`; `offload`
        pins it, `env` pins Env, `sp` the SP degree; with the job's `training`'s train batch, SP leaves data-parallel
        ranks that divide it; its LoRA rank and reference model count), its estimates held to `margin` (None: the
        planner's)."""
        key = (gpu, model, gpus, length, node_gpus, estimate, host_ram_gb, offload, training, env, margin, sp)
        if key not in self.cache:
            if self.asks_until is not None and clock.seconds_left(self.asks_until) <= 0:
                raise WallClockPassed
            query = self.question(gpu, model, node_gpus, estimate, host_ram_gb, training, budget_gpus=gpus,
                                  exact=True, objective="cheapest" if length else "max_len", max_model_len=length,
                                  offload=offload, env=env, margin=margin, sp=sp)
            inputs, counted = PlanningInputs.of(gpu, query), query.counted_catalog(self.catalog)
            if (inputs, query.lora_targets) not in self.prepared:  # the data count the job's LoRA targets
                self.prepared[inputs, query.lora_targets] = prepare_inputs(counted, inputs)
            answer = answer_for(counted, query, gpu, explained=False, data=self.prepared[inputs, query.lora_targets])
            self.asked += 1
            if not answer.decided:  # a way left out, or a plan perhaps not its best
                self.undecided_keys.add(key)
            self.cache[key] = answer.best
        self.undecided_given += key in self.undecided_keys
        return self.cache[key]

    def answer(self, query: Query, gpu: str, explained: bool = True) -> Answer:
        """`answer_for` of `query` on `gpu`, asked once: a decided answer is kept and given again (one got without its
        explanation, `explained` False, only where it has plans or none is wanted); a new question counts in
        `asked`."""
        kept = self.answers.get((gpu, query))
        if kept is not None and (kept.plans or not explained or kept.reason_code != ReasonCode.NOT_EXPLAINED):
            return kept
        answer = answer_for(query.counted_catalog(self.catalog), query, gpu, explained=explained)
        self.asked += 1
        if answer.decided:
            self.answers[gpu, query] = answer
        return answer

    def question(self, gpu: str, model: str, node_gpus: int, estimate: EstimateMode, host_ram_gb: float | None,
                 training: JobTraining, *, objective: Objective, budget_gpus: int, max_model_len: int | None,
                 exact: bool = False, offload: bool | None = None, env: bool | None = None, sp: int | None = None,
                 margin: float | None = None) -> Query:
        """`make_query` for a job of `model` in a pool of `gpu` nodes of `node_gpus` GPUs (each with `host_ram_gb`)
        on `estimate`'s evidence, with the planner's weights, time limit, memory model, margin (unless `margin`
        raises it) and token budget (where estimates are on: the tables' tiers keep Trinity's default, as a DPO job
        does, whose actor's update its config runs in rows, dynamic batch sizes off: `check_dpo_budget_unread`) and
        Trinity release (`release_of`: the job's own, else the run's), the job's `training` (its train batch, LoRA rank,
        reference model, critic, DPO, LoRA targets and exclusions), and the pool's and the job's limits named as a
        cluster file gives them."""
        release = self.release_of(training)
        return make_query(self.catalog, model=model, gpu=gpu, objective=objective, budget_gpus=budget_gpus,
                          exact=exact, max_model_len=max_model_len, offload=offload, env=env, sp=sp,
                          weights=self.weights, estimate=estimate, time_limit_s=self.time_limit_s, memory=self.memory,
                          margin=self.margin if margin is None else margin,
                          host_ram_gb=host_ram_gb, node_gpus=node_gpus, node_source=POOL_NODE_SOURCE,
                          host_ram_source=POOL_HOST_RAM_SOURCE,
                          token_budget=self.token_budget if estimate != "never" and not training.dpo else "default",
                          train_batch_size=training.train_batch_size, train_batch_source=JOB_BATCH_SOURCE,
                          trinity_version=release.name,
                          option_names=self._job_option_names(training),
                          lora_rank=training.lora_rank, reference_model=training.reference_model,
                          critic=training.critic, dpo=training.dpo, lora_targets=training.lora_targets,
                          lora_exclude_modules=training.lora_exclude_modules,
                          ).model_copy(update={"host_ram_hardware": "the pool's", "count_nodes": True,
                                               "rollout_source": JOB_ROLLOUT_SOURCE,
                                               "expert_layout": release.expert_layout,
                                               "batch_divisor": release.batch_divisor,
                                               "trinity_release": release.name})

    def _job_option_names(self, training: JobTraining) -> OptionNames:
        """The planner's option names, with the keys a job of `training` gives its limits by, as a cluster file gives
        them; its Trinity release named by the job's key where it names its own (`JOB_VERSION_KEY`), by the run's
        option where that gives it, and where neither names one, by the key with the run's option after it
        (`OptionNames.run_release`)."""
        own, run = training.trinity_version is not None, self.trinity_version is not None
        return self.option_names._replace(lora_keys=JOB_LORA_KEYS,
                                          release_key=JOB_VERSION_KEY if own or not run else None,
                                          run_release=not own and not run, critic_key=JOB_CRITIC_KEY,
                                          reference_key=JOB_REFERENCE_KEY, length_key=JOB_LENGTH_KEY,
                                          settings_chosen=True)

    def release_of(self, training: JobTraining) -> ReleaseCounts:
        """What the plans of a job of `training` count for its Trinity release: its own
        (`JobTraining.trinity_version`), else the run's (the planner's)."""
        if training.trinity_version is None:
            return ReleaseCounts(self.trinity_version, self.expert_layout, self.batch_divisor, self.trinity_release)
        return release_counts(training.trinity_version)

    def asks_solve_best(self, plan: Plan) -> bool:
        """Whether `solve_best` asks a question of a job placed on `plan`: where it is the tables' (documented or
        inferred) and estimates are on (``auto``)."""
        return self.estimate == "auto" and plan.evidence != "estimated"

    def solve_best(self, pool: Pool, job: Job, plan: Plan) -> Plan | None:
        """For `plan`, `job`'s placed plan in `pool`, where `asks_solve_best` (the tables' plan, estimates on: its
        caller, `with_solve_best`, asks only then), the plan `solve` gives the job on its trainer GPUs at its length
        (``--gpus N --exact``: the same question with the estimates beside the tables), where that is the memory
        model's estimate: the cheaper plan the cluster forgoes by taking the tables' first (`job_options`), as `solve`
        names the tables' on its ``tables' best`` line; None otherwise. `WallClockPassed` where the question is new
        past the deadline `asking_until` sets, or its solve ran out of time (undecided: not `solve`'s answer)."""
        undecided = self.undecided_given
        best = self.best(pool.gpu, job.model, plan.gpus, plan.max_model_len, pool.gpus_per_node, self.estimate,
                         pool.host_ram_gb, None, job.training)
        if self.undecided_given > undecided:
            raise WallClockPassed
        return best if best is not None and best.evidence == "estimated" else None

    def roomy_margin(self, gpu: str, job: Job) -> float:
        """The margin at which an estimate of `job`'s model (`job_model`: its adapter on its own targets) with Env on
        `gpu` fits exactly where, at the planner's margin, it keeps the room to spare that the thin-headroom caution
        asks for (the caution's own margin before it is rounded up to a hundredth, which would stop a stretch up to a
        hundredth of the usable memory short)."""
        memory = self.memory if self.memory is not None else load_memory_model()
        memory_gib = self.catalog.gpu(gpu).memory_gib
        room = margin_room(memory, resolve_margin(memory, self.margin, memory_gib), memory_gib, Setting(env=True),
                           self.job_model(job))
        return room.holding(room.thin_gib)

    def restated(self, gpu: str, model: str, plan: Plan, node_gpus: int, estimate: EstimateMode,
                 host_ram_gb: float | None, training: JobTraining) -> Plan:
        """`plan` (an answer of `best` whose estimates were held to another margin) as it is at the planner's margin:
        the same GPUs, setting, length and token budget, with the memory figures and cautions of that margin."""
        query = self.question(gpu, model, node_gpus, estimate, host_ram_gb, training, budget_gpus=plan.gpus,
                              exact=True, objective="cheapest", max_model_len=plan.max_model_len)
        return at_token_budget(query.counted_catalog(self.catalog), query, gpu, plan, plan.max_token_len_per_gpu)

    def with_tables_caution(self, gpu: str, job: Job, plan: Plan) -> Plan:
        """`plan` of `job` on `gpu`, where the estimates alone make the plans (``--estimate``) and the tables say its
        setting of the job's model (`job_model`) runs out of memory there (`estimate_tables_verdict`), cautioned so
        (`tables_refute_caution`, as ``solve --estimate``'s tables row says it); else `plan` as it is."""
        verdict = None if self.estimate != "only" else estimate_tables_verdict(
            self.job_catalog(job), gpu, self.job_model(job), plan)
        if verdict is None or verdict.trains:
            return plan
        return plan.with_caution(tables_refute_caution(verdict, gpu, job.model, plan, self.option_names))

    def job_catalog(self, job: Job) -> Catalog:
        """The planner's catalogue with `job`'s model counting its LoRA adapter on the modules its ``lora_targets``
        less its ``lora_exclude_modules`` adapt (`JobTraining.counted_targets`, as its plans count it:
        `Query.counted_catalog`): one model per job."""
        return self.catalog.with_lora_targets(job.model, job.training.counted_targets)

    def job_model(self, job: Job) -> Model:
        """`job`'s model as `job_catalog` counts it: its LoRA adapter on its own targets."""
        return self.job_catalog(job).model(job.model)

    def host_tenths(self, job: Job, plan: Plan) -> int:
        """Host memory, tenths of a GiB, that a trainer of `job` on `plan`'s GPUs on one node needs there
        (`host_memory_gib`, with its LoRA rank, reference model and critic, as placements give it: `shown_host_tenths`,
        rounded up to a tenth, a whole number of them: the jobs' figures, added up exactly, are what a node's host
        memory must hold), under its Trinity release (`release_of`), with Offload where `plan` has it and the ranks
        loading the model that it counts (`Plan.model_loading`). No node size is counted: each way it is asked of
        shares a node (`Option.size`), its trainer within it, whose figure a node's size leaves alone
        (`solver.rules.trainer_gpus_on_node`); a way across whole nodes is held to the host memory by the planner's
        question."""
        release = self.release_of(job.training)
        return shown_host_tenths(host_memory_gib(
            self.job_model(job), plan.gpus, offload=plan.offload, version=release.version,
            reference=counts_reference(job.reference_model, job.lora_rank), lora_rank=job.lora_rank,
            critic=job.training.critic, experts=release.expert_layout, loading=plan.model_loading))


def job_options(planner: Planner, fleet: Fleet, index: int) -> list[Option]:
    """Every way to run job `index`: per allowed pool and trainer GPU count, the planner's plan (the
    longest one for an ``at_least`` job) with a layout that fits the pool's nodes.

    Measured plans come first: where the tables give the job a way in a pool at their own GPU counts, only
    those counts and plans are used there. Where they give none (a length past them, a layout their counts
    do not fit), every count the planner considers on the pool's nodes is tried with the tables alone
    (their cells vouch for more GPUs too); where that gives none either (a GPU type or model without
    tables), with the memory model's estimates (marked ``estimated``), unless estimates are off. Each tier
    keeps the placement model small: the tables' counts alone give most jobs their ways."""
    options = []
    for pool_index, pool in enumerate(fleet.pools):
        if not fleet.jobs[index].may_run_in(pool):
            continue
        found: list[Option] = []
        for tier_counts, estimate in evidence_tiers(planner, fleet, index, pool_index):
            found = found or ways_in_pool(planner, fleet, index, pool_index, tier_counts, estimate)
        options += found
    return options


def running_count_ways(planner: Planner, fleet: Fleet, running: RunningJob, offered: Sequence[Option]) -> list[Option]:
    """The ways of a job that runs now (`running`) at the trainer GPU count it runs with, in its pool, where its ways
    there (`offered`) have none at that count (it was grown past the counts the planner offers, or started by hand):
    those of the first evidence tier that has a plan for it (`evidence_tiers`: the tables alone, then the estimates),
    so that the placement may keep it as it runs; none where the job may no longer run in the pool (`Job.may_run_in`)
    or on its nodes and GPUs (`RunningJob.runs_where_gone`), or its ways have one at that count there."""
    pool = fleet.pools[running.pool]
    if not fleet.jobs[running.job].may_run_in(pool) or running.runs_where_gone(pool) or any(
            option.pool == running.pool and option.plan.gpus == running.trainer_gpus for option in offered):
        return []
    tiers = evidence_tiers(planner, fleet, running.job, running.pool)
    for estimate in dict.fromkeys(estimate for _, estimate in tiers):  # the tiers' evidence, each once, in order
        found = ways_in_pool(planner, fleet, running.job, running.pool, [running.trainer_gpus], estimate)
        if found:
            return [replace(way, at_running_count=True) for way in found]
    return []


def running_ways(planner: Planner, fleet: Fleet, running: RunningJob, offered: Sequence[Option]) -> list[Option]:
    """The ways a job that runs now (`running`) gets besides its own (`offered`), so that the placement may keep it as
    it runs: those at the trainer GPU count it runs with (`running_count_ways`), and, where no way then keeps it as it
    runs (`keeps_running`: its SP or Offload is not the planner's pick there, say), its own settings there, where the
    planner has a plan with them (`as_it_runs_ways`)."""
    added = running_count_ways(planner, fleet, running, offered)
    if any(keeps_running(fleet, option, running) for option in [*offered, *added]):
        return added
    return added + as_it_runs_ways(planner, fleet, running)


def as_it_runs_ways(planner: Planner, fleet: Fleet, running: RunningJob) -> list[Option]:
    """The way that keeps a job that runs now (`running`) as it runs (`keeps_running`): the planner's plan with its
    SP degree and Offload on its trainer GPUs at its length, from the first evidence tier that has one
    (`evidence_tiers`), in its pool and layout; none where the job may no longer run in the pool (`Job.may_run_in`)
    or on its nodes and GPUs (`RunningJob.runs_where_gone`), runs another model or a length it no longer asks
    (`asks_length`), or the planner has no such plan (or refuses its SP there)."""
    job, pool = fleet.jobs[running.job], fleet.pools[running.pool]
    room = layout(running.trainer_gpus, job.rollout_gpus, pool.gpus_per_node)
    if (room is None or not job.may_run_in(pool) or running.runs_where_gone(pool)
            or running.model not in (None, job.model)
            or not asks_length(job.max_model_len, running.max_model_len, planner.catalog.model(job.model))):
        return []
    tiers = evidence_tiers(planner, fleet, running.job, running.pool)
    for estimate in dict.fromkeys(estimate for _, estimate in tiers):  # the tiers' evidence, each once, in order
        try:
            plan = planner.best(pool.gpu, job.model, running.trainer_gpus, running.max_model_len, pool.gpus_per_node,
                                estimate, pool.host_ram_gb, running.offload, job.training, sp=running.sp)
        except QueryError:  # an SP the rules refuse there (one that does not divide its GPUs): no plan has it
            return []
        if plan is not None:
            way = replace(way_with(planner, fleet, running.job, running.pool, room, plan), as_it_runs=True)
            return [way] if keeps_running(fleet, way, running) else []
    return []


def asks_length(asked: int | AtLeast, length: int, model: Model) -> bool:
    """Whether a job that asks for `asked` (a length, or ``at_least`` one) of `model` may run at `length`: exactly it,
    or from its least to its ceiling (`stretch_ceiling`)."""
    if isinstance(asked, AtLeast):
        return asked.at_least <= length <= stretch_ceiling(asked, model)
    return length == asked


def keeps_running(fleet: Fleet, option: Option, running: RunningJob) -> bool:
    """Whether `option` runs its job as it runs now (`running`): the model the fleet asks (where `running` names
    one), in its pool, on as many nodes and GPUs of them, with its trainer and rollout GPUs and its plan's length, SP
    degree and Offload, and (where `running` gives them) the LoRA rank, critic and DPO the fleet asks, and a Trinity
    release that agrees with the one the fleet asks (`releases_agree`); never where its pool no longer has one of its
    nodes or GPUs (`RunningJob.runs_where_gone`)."""
    plan, training = option.plan, fleet.jobs[option.job].training
    return (running.model in (None, fleet.jobs[option.job].model) and option.pool == running.pool
            and not running.runs_where_gone(fleet.pools[running.pool])
            and running.training in (None, training.as_running) and release_kept(fleet, running)
            and option.nodes == len(running.nodes)
            and option.gpus_per_node(fleet.pools[running.pool].gpus_per_node) == len(running.gpu_indexes)
            and plan.gpus == running.trainer_gpus and option.rollout_gpus == running.rollout_gpus
            and plan.max_model_len == running.max_model_len and plan.sp == running.sp
            and plan.offload == running.offload)


def release_kept(fleet: Fleet, running: RunningJob) -> bool:
    """Whether the Trinity release `fleet` asks of the job that runs now as `running` agrees with the one it runs on
    (`releases_agree`: no restart); true where either is not named (not compared)."""
    asked = fleet.jobs[running.job].trinity_version
    return running.trinity_version is None or asked is None or releases_agree(asked, running.trinity_version)


def evidence_tiers(planner: Planner, fleet: Fleet, index: int,
                   pool_index: int) -> list[tuple[Sequence[int], EstimateMode]]:
    """The tiers `job_options` asks job `index`'s ways in a pool from, in order (trainer GPU counts, evidence): the
    tables' own counts on the tables, every count on the pool's nodes on the tables alone, then on the estimates."""
    pool = fleet.pools[pool_index]
    model = planner.catalog.model(fleet.jobs[index].model)
    tabled = [table.gpus for table in planner.catalog.tables_for(pool.gpu, model).tables]
    counts = pool_counts(pool)
    tiers: list[tuple[Sequence[int], EstimateMode]] = [] if planner.estimate == "only" else [
        (tabled, "never"), (counts, "never")]
    return tiers + ([] if planner.estimate == "never" else [(counts, planner.estimate)])


def pool_counts(pool: Pool) -> tuple[int, ...]:
    """Every trainer GPU count the planner considers on the pool's nodes (`estimated_counts`, up to its GPUs up)."""
    return estimated_counts(pool.gpus_per_node, pool.up_nodes * pool.gpus_per_node)


def ways_in_pool(planner: Planner, fleet: Fleet, index: int, pool_index: int, counts: Sequence[int],
                 estimate: EstimateMode) -> list[Option]:
    """Job `index`'s ways to run in one pool with these trainer GPU counts, on `estimate`'s evidence: per
    count, the best plan and, where it offloads onto a node whose host memory jobs share, the best plan
    without Offload too (it leaves the node's host memory to others)."""
    job, pool = fleet.jobs[index], fleet.pools[pool_index]
    asked = job.max_model_len
    length = None if isinstance(asked, AtLeast) else asked
    ceiling = stretch_ceiling(asked, planner.catalog.model(job.model)) if isinstance(asked, AtLeast) else None

    def plan_at(gpus: int, host_ram_gb: float | None, offload: bool | None, at: int | None,
                env: bool | None = None, margin: float | None = None) -> Plan | None:
        return planner.best(pool.gpu, job.model, gpus, at, pool.gpus_per_node, estimate, host_ram_gb, offload,
                            job.training, env=env, margin=margin)

    # Where the ceiling is the longest the model is known to handle (not the job's least above it, nor its at_most):
    # a least that asks for that length alone stops there too.
    validated_ceiling = (isinstance(asked, AtLeast) and ceiling == validated_length(planner.catalog.model(job.model))
                         != asked.at_most)

    def longest(gpus: int, host_ram_gb: float | None, offload: bool | None, env: bool | None = None,
                margin: float | None = None) -> tuple[Plan | None, bool]:
        """The longest plan, and whether it stops at the model's validated length though a plan reaches further."""
        found = plan_at(gpus, host_ram_gb, offload, length, env, margin)
        if found is not None and ceiling is not None and found.max_model_len > ceiling:
            return plan_at(gpus, host_ram_gb, offload, ceiling, env, margin), validated_ceiling
        return found, False

    def best(gpus: int, host_ram_gb: float | None = None, offload: bool | None = None) -> tuple[Plan | None, bool]:
        found, stopped = longest(gpus, host_ram_gb, offload)
        if not (isinstance(asked, AtLeast) and found is not None and found.max_model_len > asked.at_least
                and CautionCode.THIN_HEADROOM in found.caution_codes):
            return found, stopped
        # A stretch onto thin headroom goes as far as a plan keeps the room the caution asks for: the longest with
        # Env (whose plans reach furthest: more usable memory, no fragmentation), held to the margin that keeps
        # exactly that room, restated at the run's margin with its token budget (--token-budget auto would raise it
        # back onto thin headroom there); no shorter than the least asked.
        roomy, stopped = longest(gpus, host_ram_gb, offload, env=True,
                                 margin=planner.roomy_margin(pool.gpu, job))
        if roomy is None or roomy.max_model_len < asked.at_least:
            return plan_at(gpus, host_ram_gb, offload, asked.at_least), False
        return planner.restated(pool.gpu, job.model, roomy, pool.gpus_per_node, estimate, host_ram_gb,
                                job.training), stopped

    ways = []
    for gpus in counts:
        room = layout(gpus, job.rollout_gpus, pool.gpus_per_node)
        if room is None or room[1] > pool.up_nodes:
            continue
        # On one node, which other jobs may share, of a pool that gives its nodes' host memory: the jobs there share it.
        shares_node = bool(room[0]) and pool.host_ram_gb is not None
        plan, stopped = best(gpus, pool.host_ram_gb)
        plans = [(plan, stopped)]
        if plan is not None and plan.offload and shares_node:
            plans.append(best(gpus, pool.host_ram_gb, offload=False))
        ways += [replace(way_with(planner, fleet, index, pool_index, room, found), stopped_at_validated=stopped)
                 for found, stopped in plans
                 if found is not None and not (isinstance(asked, AtLeast) and found.max_model_len < asked.at_least)]
    return ways


def way_with(planner: Planner, fleet: Fleet, index: int, pool_index: int, room: tuple[int, int, int],
             plan: Plan) -> Option:
    """Job `index`'s way to run in one pool with `plan`, in its `room` there (`layout`): what it gains past an
    ``at_least`` length, its cost, and, on a node it shares in a pool that gives its nodes' host memory, the host
    memory it takes there."""
    job, pool = fleet.jobs[index], fleet.pools[pool_index]
    asked = job.max_model_len
    shares_node = bool(room[0]) and pool.host_ram_gb is not None
    gain = (plan.max_model_len - asked.at_least) // 1024 if isinstance(asked, AtLeast) else 0
    return Option(job=index, pool=pool_index, plan=plan, size=room[0], whole_nodes=room[1], rollout_gpus=room[2],
                  gain=gain, cost=round(plan.cost * COST_SCALE),
                  host_tenths=planner.host_tenths(job, plan) if shares_node else 0)


def stretch_ceiling(asked: AtLeast, model: Model) -> int:
    """The longest an ``at_least`` job grows to: what YaRN is validated for (or its model's own scaling reaches), or
    its least where that asks for more; no further than its ``at_most``, where it gives one."""
    known = max(asked.at_least, validated_length(model))
    return known if asked.at_most is None else min(known, asked.at_most)


def fleet_options(planner: Planner, fleet: Fleet, limit: WaysLimit | None = None,
                  running: Sequence[RunningJob] = (), required: frozenset[int] = frozenset()) -> FleetWays:
    """Every job's ways to run (`job_options`, and for the jobs `running` now, the ways that may keep them as they run:
    `running_ways`), with the host memory each takes on a node it shares and the pools where that is rounded up
    (`host_footprints`): what the search and the greedy baseline place. Within `limit` (None: no limit), in
    `ways_order`; the jobs past it get none, and so does the job whose questions its wall clock's deadline passes
    between (`Planner.asking_until`): no job's ways run on past it. A running job among them gets its way as it runs
    alone (`as_it_runs_ways`' questions, past the limit: one per evidence tier at most, each with what is left of
    `run_deadline`'s, or `AS_IT_RUNS_FLOOR_S` where less: `past_run_deadline`), marked `ways_cut_short`; none where a
    job the placement must place (`required`, indexes) is cut short (it runs not, or has no way as it runs: the
    required come first) or has no way at all, as no placement is then searched (`search.place`), which those ways
    were for."""
    running_by_job = {job.job: job for job in running}
    by_job: dict[int, list[Option]] = {}
    wall_clock_cut, covering = False, None
    undecided: set[int] = set()
    order = ways_order(fleet, frozenset(running_by_job))
    for position, index in enumerate(order):
        reached = None if limit is None else limit.reached(planner)
        if reached is None:
            before = planner.undecided_given
            try:  # a job's ways whole, or none: the wall clock may pass between two of its questions
                with planner.asking_until(None if limit is None else limit.deadline):
                    ways = job_options(planner, fleet, index)
                    if index in running_by_job:
                        ways += running_ways(planner, fleet, running_by_job[index], ways)
            except WallClockPassed:
                reached = "wall clock"
            else:
                by_job[index] = ways
                if planner.undecided_given > before:
                    undecided.add(index)
        if limit is not None and reached is not None:
            wall_clock_cut = reached == "wall clock"
            covering = None if wall_clock_cut else limit.covering_time_limit_s(planner, fleet, order, position)
            left = order[position:]
            if any(index in required and index not in running_by_job for index in left):
                break  # a required job cut short: no placement is searched, for the ways as they run to serve
            if any(index in required and not by_job[index] for index in order[:position]):
                break  # a required job has no way at all: the placement is infeasible, whatever runs as it runs
            for index in (index for index in left if index in running_by_job):
                with past_run_deadline(AS_IT_RUNS_FLOOR_S):  # a millisecond past the run's end may leave it no way
                    as_it_runs = as_it_runs_ways(planner, fleet, running_by_job[index])
                if as_it_runs:
                    by_job[index] = [replace(way, as_it_runs=False, ways_cut_short=True) for way in as_it_runs]
                elif index in required:  # cut short with the others: no placement is searched (the required first)
                    break
            break
    options, host_rounded = host_footprints(fleet, [option for index in sorted(by_job) for option in by_job[index]])
    return FleetWays(options, host_rounded, tuple(sorted(set(range(len(fleet.jobs))) - set(by_job))), wall_clock_cut,
                     frozenset(undecided), covering)


def ways_order(fleet: Fleet, running: frozenset[int] = frozenset()) -> list[int]:
    """The order the jobs' ways are worked out in within a `WaysLimit` (indexes): the required jobs first, then by
    priority, the jobs `running` now (indexes) before the others of theirs, then in the file's order."""
    return sorted(range(len(fleet.jobs)), key=lambda index: (not fleet.jobs[index].required,
                                                             -fleet.jobs[index].priority, index not in running, index))


def ways_shape(job: Job) -> tuple[object, ...]:
    """What the planner's questions about a job's ways depend on (`ways_in_pool`): its model, length, training (its
    `JobTraining`: train batch, LoRA rank, reference model and critic) and the pool it names (its rollout GPUs only
    leave some GPU counts no layout)."""
    return job.model, job.max_model_len, job.training, job.pool


def jobs_without_ways(fleet: Fleet, options: Sequence[Option]) -> list[int]:
    """The jobs (indexes) that `options` give no way to run in any pool they may use."""
    with_options = {option.job for option in options}
    return [index for index in range(len(fleet.jobs)) if index not in with_options]


def pools_with_ways(options: Sequence[Option]) -> dict[int, frozenset[int]]:
    """Each job that `options` give a way to run (index) -> the pools (indexes) it has one in."""
    pools: dict[int, set[int]] = defaultdict(set)
    for option in options:
        pools[option.job].add(option.pool)
    return {job: frozenset(where) for job, where in pools.items()}


def option_name(fleet: Fleet, option: Option) -> str:
    """One way to run a job, named: job, pool and trainer GPUs, and, in a pool that checks host memory
    (where a count may have a way with Offload and one without), whether it offloads."""
    pool = fleet.pools[option.pool]
    name = f"{fleet.jobs[option.job].name}|{pool.name}|{option.plan.gpus}"
    return name + (f"|offload={option.plan.offload}" if pool.host_ram_gb is not None else "")


def host_capacity_tenths(pool: Pool) -> int | None:
    """A node's host memory in whole tenths of a GiB, as a job's need fits it (`held_host_tenths`; None: not
    checked)."""
    return None if pool.host_ram_gb is None else held_host_tenths(pool.host_ram_gb)


PATTERN_GROWTH, PATTERN_FLOOR, PATTERN_BUDGET = 4, 256, 50_000
"""How many ways to fill a node (`patterns`) a pool's placement weighs with host memory, before the host
memory of its jobs is counted in fewer, larger steps (`host_footprints`): the most of this many
times as many as without it, this many, and this many divided by the jobs that may use the pool times its
nodes (five jobs on one node weigh 9000 in a second or two; with hundreds of jobs, thousands of patterns
per pool left a placement 23% below its bound within the time limit)."""


def host_footprints(fleet: Fleet, options: list[Option]) -> tuple[list[Option], tuple[str, ...]]:
    """The options, with the host memory each takes on a node it shares as the placement counts it, and
    the pools where that is rounded up:
    - 0 in a pool where jobs sharing a node can never exceed it (each takes at most its share of the
      node's GPUs in host memory): there it constrains nothing, and leaving it out keeps the patterns few;
    - else its own need, where the pool's ways to fill a node stay within the limit (`PATTERN_GROWTH`);
    - else the largest need of its class, the jobs' needs grouped into fewer classes until they
      do (each distinct need makes the ways to fill a node multiply): conservative, never more than a
      node has.
    Needs and the node's host memory are whole tenths of a GiB (`host_capacity_tenths`), so that they add up
    exactly: no plan the planner let fit a node alone needs more than it has."""
    result, rounded_pools = list(options), []
    for pool_index, pool in enumerate(fleet.pools):
        capacity = host_capacity_tenths(pool)
        here = [i for i, o in enumerate(result) if o.pool == pool_index and o.host_tenths]
        if capacity is None or not here:
            continue
        if all(result[i].host_tenths * pool.gpus_per_node <= capacity * result[i].size for i in here):
            for i in here:
                result[i] = replace(result[i], host_tenths=0)
            continue
        needs = sorted({result[i].host_tenths for i in here})
        plain = {o.footprint for o in result if o.pool == pool_index and o.size and not o.host_tenths}
        sizes = {(o.size, 0) for o in result if o.pool == pool_index and o.size}
        jobs = len({o.job for o in result if o.pool == pool_index})
        limit = max(PATTERN_FLOOR, PATTERN_GROWTH * len(patterns(sizes, pool.gpus_per_node)),
                    PATTERN_BUDGET // (jobs * pool.up_nodes))
        for classes in range(len(needs), 1, -1):
            groups = [needs[len(needs) * c // classes: len(needs) * (c + 1) // classes] for c in range(classes)]
            rounded = {need: group[-1] for group in groups for need in group}
            footprints = plain | {(result[i].size, rounded[result[i].host_tenths]) for i in here}
            try:
                patterns(footprints, pool.gpus_per_node, capacity, limit=limit)
                break
            except TooManyPatterns:
                continue
        else:  # one class: every job's need rounded up to the largest
            classes, rounded = 1, dict.fromkeys(needs, needs[-1])
        if classes < len(needs):
            rounded_pools.append(pool.name)
        for i in here:
            result[i] = replace(result[i], host_tenths=rounded[result[i].host_tenths])
    return result, tuple(rounded_pools)


class TooManyPatterns(Exception):
    """More ways to fill a node than `patterns` was asked to list."""


def patterns(footprints: set[Footprint], node_gpus: int, host_tenths: int | None = None,
             limit: int | None = None) -> list[tuple[Footprint, ...]]:
    """The maximal ways to fill one node with jobs of these footprints (GPUs, host tenths of a GiB): multisets
    (sorted, largest first) whose GPUs fit the node and whose host memory fits `host_tenths` (None: any), and to
    which no footprint can be added. Any packing of a node fits inside one of them. `TooManyPatterns` when
    there are more than `limit`."""
    ordered = sorted(footprints, reverse=True)
    host_room = host_tenths if host_tenths is not None else sum(host for _, host in ordered) * node_gpus
    least_host: dict[int, int] = {}  # per GPU count, its footprints' least host memory: a node none fits is full
    for gpus, host in ordered:
        least_host[gpus] = min(host, least_host.get(gpus, host))

    def full(free_gpus: int, free_host: int) -> bool:
        return not any(gpus <= free_gpus and host <= free_host for gpus, host in least_host.items())

    found: list[tuple[Footprint, ...]] = []

    def extend(prefix: tuple[Footprint, ...], start: int, free_gpus: int, free_host: int) -> None:
        grew = False
        for position in range(start, len(ordered)):
            gpus, host = ordered[position]
            if gpus <= free_gpus and host <= free_host:
                grew = True
                extend((*prefix, ordered[position]), position, free_gpus - gpus, free_host - host)
        if not grew and prefix and full(free_gpus, free_host):
            found.append(prefix)
            if limit is not None and len(found) > limit:
                raise TooManyPatterns

    extend((), 0, node_gpus, host_room)
    return found


def pattern_name(pattern: tuple[Footprint, ...]) -> str:
    """A pattern in words: its jobs' GPUs joined by '+', each with its host memory where it has some, in whole MiB
    (its tenths of a GiB times 102.4, rounded): `tie_break` weighs the patterns by these names, and in MiB they
    keep its choice among equally good placements what it was before host memory was counted in tenths."""
    return "+".join(f"{gpus}" + (f"h{round(host / 10 * 1024)}" if host else "") for gpus, host in pattern)
