"""Answer planning queries with CP-SAT: one answer per GPU type, its plans best first.

Determinism: every objective ranks plans by a total order (see `solver.model.ranking_key`), so the
best plan, and each next best once the earlier ones are excluded, is unique; CP-SAT runs with a fixed
seed and, by default, one worker. The same query gives the same answer.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from types import MappingProxyType
from typing import Any, Literal, NamedTuple

from ortools.sat.python import cp_model

from solver import clock
from solver.memory import (
    GRID,
    beyond_calibration,
    breakdown,
    expert_layout_words,
    fits_host_ram,
    host_critic_gib,
    margin_room,
    rollout_unheld_caution,
    shown_host_need,
    shown_training_host_need,
    unestimated_count_words,
)
from solver.model import (
    PIN_RULES,
    FoundPlan,
    PlanningData,
    PlanningInputs,
    PlanVariables,
    SolverStatus,
    add_lifted_budget,
    add_lifted_token_budget,
    build_model,
    exact_cost,
    exclude_dominated,
    lowers_budget,
    minimize_host_need,
    minimize_lifts,
    minimize_limits_dropped,
    minimize_token_cap,
    new_cp_solver,
    objective_expression,
    prepare,
)
from solver.query import CHOOSES_COUNT, Objective, Pins, Query, token_cap_source
from solver.results import (
    AlternativeName,
    Alternatives,
    Answer,
    CautionCode,
    MarginRoom,
    Plan,
    ReasonCode,
    ReasonWords,
    RolloutKept,
    RoomKept,
    Status,
    WithoutSp,
    beyond_fields,
    exceeds_assumed_host_ram,
    host_need_words,
    past_validated,
)
from solver.rules import (
    Evidence,
    SourceCell,
    TablesVerdict,
    cited_tables_verdict,
    counts_dpo_pairs,
    dividing_batch_words,
    kept_for_rollout,
    larger_tables,
    lowered_token_budget,
    most_estimated_tokens,
    rollout_layout,
    rollout_layout_violation,
    sp_degrees_within,
    token_budget,
    trainer_gpus_on_node,
    trainer_nodes_of,
    validated_length,
    vouching_cell,
    whole_nodes_violation,
)
from solver.tables import (
    CRITIC_STATES,
    HOST_HELD_CRITICS,
    MAX_ESTIMATED_GPUS,
    MAX_HOST_RAM_GB,
    MAX_NODE_GPUS,
    Catalog,
    GpuType,
    Model,
    Setting,
    Undecided,
    and_joined,
    counted,
    load_catalog,
    lower_host_count_clause,
    model_loaders,
    patch_releases_to_ask,
)

ASKED_FIRST_SHARE = 0.5
"""The share of an answer's time limit that the questions `plan` asks before the query's own ranking (`_asked_first`:
without the pins, with the most host memory) may take, from its start: the ranking always has the rest, and what they
leave (none where one of them answers the query too), so that a comparison never leaves the question asked
``unknown``."""

FIXED_SEARCH_RANKS = 1000
"""Up to this many combinations of GPU count, Env, Offload and SP (budgets up to 24 GPUs), the search follows
the objective's order; past it, CP-SAT's own."""


def plan(query: Query, catalog: Catalog | None = None) -> tuple[Answer, ...]:
    """Answer `query` for each of its GPU types, in order, from `catalog` as the query counts it (its LoRA adapter on
    its targets' modules: `Query.counted_catalog`, as `solver.api.answer_query` passes it; an uncounted one counts
    ``all-linear``'s). The GPU types after the first are solved in
    worker threads while this one solves the first (CP-SAT releases the interpreter while it searches), and those
    no worker has started by then in this one;
    each answer depends only on its own model, so the answers are the same as one after the other."""
    catalog = catalog if catalog is not None else load_catalog()
    group, deadline = _SolveGroup(), _CALL_DEADLINE.get()

    def answer(gpu: str) -> Answer:
        joined, timed = _SOLVE_GROUP.set(group), _CALL_DEADLINE.set(deadline)  # the caller's, in the pool's threads
        asked_sp_one = _SP_ONE_FITS.set({})  # this answer's own, asked afresh for each query
        started = time.monotonic()
        ends_by = started + query.time_limit_s  # the time limit all the answer's solves share
        try:
            asked = _asked_first(catalog, query, gpu, started + query.time_limit_s * ASKED_FIRST_SHARE)
            answer = _with_asked_first(catalog, query, answer_for(catalog, query, gpu, asked=asked.questions,
                                                                  ends_by=ends_by), asked)
            further = (_with_measured, _with_fewer_nodes, _with_trainer_alone, _with_validated, _with_rollout_kept,
                       _with_other_batch, *asked.unasked, _with_named_release, _with_lowered_fewer, _with_room_kept)
            answer = _further_answers(catalog, query, answer, further, ends_by)
            answer = _with_larger_gpu_cell(catalog, query, answer)
            answer = _with_tables_verdict(catalog, query, answer)
            answer = _further_answers(catalog, query, answer, (_with_estimated_plan,), ends_by)
            return answer.model_copy(update={"deadline_passed": True}) if deadline_passed() else answer
        finally:
            _SOLVE_GROUP.reset(joined)
            _CALL_DEADLINE.reset(timed)
            _SP_ONE_FITS.reset(asked_sp_one)

    others = [_workers().submit(answer, gpu) for gpu in query.gpus[1:]]
    try:
        first = answer(query.gpus[0])
        # One no pool thread has started (other calls' solves keep them busy) this thread solves itself: a call never
        # waits behind another's solves, so its deadline_s holds however busy the pool is.
        rest = zip(query.gpus[1:], others, strict=True)
        return (first, *(answer(gpu) if other.cancel() else other.result() for gpu, other in rest))
    except KeyboardInterrupt:  # Ctrl-C: stop the other GPU types' solves too, so that the process can exit now
        group.stop()
        while wait(others, timeout=STOP_AGAIN_S).not_done:  # a stop that comes as a solve starts is lost: again
            group.stop()
        raise


class _SolveGroup:
    """The CP-SAT solves of one `plan` call, across its threads: `stop` ends those running and refuses the
    next (each then raises KeyboardInterrupt in its thread)."""

    def __init__(self) -> None:
        self.stopped = False
        self.running: set[cp_model.CpSolver] = set()
        self.lock = threading.Lock()

    def solve(self, solver: cp_model.CpSolver, model: cp_model.CpModel) -> SolverStatus:
        """`solver.solve(model)`, unless the group is stopped (before or during it)."""
        with self.lock:
            if self.stopped:
                raise KeyboardInterrupt
            self.running.add(solver)
        try:
            status = solver.solve(model)
        finally:
            with self.lock:
                self.running.discard(solver)
        if self.stopped:  # read without the lock: it only ever turns True
            raise KeyboardInterrupt
        return status

    def stop(self) -> None:
        """Stop the running solves and refuse the next (a stop that comes while a solve starts is lost: CP-SAT
        takes one only once its search is set up, so the caller stops again until they end)."""
        with self.lock:
            self.stopped = True
            for solver in self.running:
                solver.stop_search()


STOP_AGAIN_S = 0.02
"""Seconds between Ctrl-C's stops of the solves still running (`_SolveGroup.stop`)."""

_SOLVE_GROUP: ContextVar[_SolveGroup | None] = ContextVar("rft_solver_solve_group", default=None)
"""The `plan` call whose solves this thread's belong to (None: outside one)."""


_CALL_DEADLINE: ContextVar[float | None] = ContextVar("rft_solver_call_deadline", default=None)
"""The `time.monotonic()` by which this thread's solves must end (`call_deadline`; None: none)."""

_RUN_DEADLINE: ContextVar[float | None] = ContextVar("rft_solver_run_deadline", default=None)
"""The `time.monotonic()` by which this thread's solves must end, where a cluster command's planner asks them: the end
of the run's time limit (`run_deadline`; None: none)."""

_RUN_FLOOR: ContextVar[float] = ContextVar("rft_solver_run_floor", default=0.0)
"""The seconds from its start that each of this thread's solves may run, where the run's deadline leaves it fewer
(`past_run_deadline`; 0: none)."""

_SP_ONE_FITS: ContextVar[dict[tuple[str, Query], WithoutSp] | None] = ContextVar("rft_solver_sp_one_fits", default=None)
"""Within one answer of a `plan` call, the SP=1 questions `_fits_without_sp` asked (on a GPU type) and what each
answered, so that its plans at one length ask theirs once (None: outside one, where each asks it)."""


@contextmanager
def call_deadline(seconds: float | None) -> Iterator[None]:
    """Within the block, every solve of this thread (and of the `plan` calls it makes, in their threads too) ends
    within `seconds` from now, however much of its own time limit is left (None: no deadline but theirs)."""
    token = _CALL_DEADLINE.set(None if seconds is None else time.monotonic() + seconds)
    try:
        yield
    finally:
        _CALL_DEADLINE.reset(token)


@contextmanager
def run_deadline(deadline: float | None) -> Iterator[None]:
    """Within the block, every solve of this thread ends by `deadline` (a `time.monotonic()`: the end of the time
    limit of the cluster command whose planner asks it; None: no deadline but theirs), however much of its own time
    limit is left: that is the run's, so a solve it cuts short ran out of the time limit its words name."""
    token = _RUN_DEADLINE.set(deadline)
    try:
        yield
    finally:
        _RUN_DEADLINE.reset(token)


@contextmanager
def past_run_deadline(floor_s: float) -> Iterator[None]:
    """Within the block, every solve of this thread may run `floor_s` seconds from its start where `run_deadline`'s
    deadline leaves it fewer (or none: it has passed), and no more than its own time limit: a question whose answer
    is wanted past the run's end (a millisecond may leave it none), bounded all the same."""
    token = _RUN_FLOOR.set(floor_s)
    try:
        yield
    finally:
        _RUN_FLOOR.reset(token)


class WorkBudget:
    """CP-SAT's deterministic time (its count of its work, the same on every run whatever the machine's load) that
    the solves of `work_budget` blocks may spend together (`work`): what they have `spent`, and what is `left`."""

    def __init__(self, work: float) -> None:
        self.work = work
        self.spent = 0.0

    @property
    def left(self) -> float:
        """What the solves may still spend (below zero where the last one overran it)."""
        return self.work - self.spent


_WORK_BUDGET: ContextVar[WorkBudget | None] = ContextVar("rft_solver_work_budget", default=None)
"""The deterministic time this thread's solves draw on (`work_budget`; None: none)."""


@contextmanager
def work_budget(budget: WorkBudget) -> Iterator[None]:
    """Within the block, each solve of this thread (not those of `plan`'s other threads) ends within what is left of
    `budget`, and what it spends is taken from it; a solve it stops is undecided (its wall-clock limit still holds)."""
    token = _WORK_BUDGET.set(budget)
    try:
        yield
    finally:
        _WORK_BUDGET.reset(token)


def within_deadline(seconds: float) -> float:
    """The seconds of the wall clock a solve that starts now may run: `seconds`, or fewer where this thread's
    `call_deadline` or `run_deadline` comes sooner (`clock.seconds_left`; at least a millisecond, CP-SAT's smallest
    useful limit); the run's, no sooner than `past_run_deadline`'s floor from now."""
    now, run = time.monotonic(), _RUN_DEADLINE.get()
    deadlines = (_CALL_DEADLINE.get(), None if run is None else max(run, now + _RUN_FLOOR.get()))
    ends_by = min([now + seconds, *(deadline for deadline in deadlines if deadline is not None)])
    return max(clock.seconds_left(ends_by), 0.001)


def time_limit_words(query: Query) -> str:
    """The time limit a solve of `query` ran out of, in words: its own (``10 s``), with the call's deadline where that
    has passed (`deadline_words`)."""
    return f"{query.time_limit_words}{deadline_words()}"


def deadline_passed() -> bool:
    """Whether this thread's `call_deadline` has passed: it may have cut the solves short."""
    deadline = _CALL_DEADLINE.get()
    return deadline is not None and clock.seconds_left(deadline) <= 0


def deadline_words(passed: bool | None = None) -> str:
    """Where this thread's `call_deadline` has passed (`deadline_passed`; or where `passed` says so: an answer's
    `Answer.deadline_passed`, as it was when it was given), that it may have cut the solves short, in words to follow
    a time limit's: ``, or the call's deadline_s, which came first``; "" otherwise."""
    return ", or the call's deadline_s, which came first" if (deadline_passed() if passed is None else passed) else ""


@cache
def _workers() -> ThreadPoolExecutor:
    """The threads that solve a query's other GPU types, started once per process (starting them for
    each query took longer than the small solves themselves)."""
    return ThreadPoolExecutor(max_workers=8, thread_name_prefix="rft-solver-plan")


os.register_at_fork(after_in_child=_workers.cache_clear)  # a forked child has none of the parent's threads: its own


def _with_measured(catalog: Catalog, query: Query, answer: Answer) -> Answer:
    """The answer, with the tables' best plan for the same question when its best plan is estimated (more
    GPUs cost less, so an estimated count can beat a documented one): the measured alternative."""
    if query.estimate != "auto" or not answer.plans or answer.plans[0].evidence != "estimated":
        return answer
    measured = optional_best(catalog, query.model_copy(update={"estimate": "never", "top": 1}), answer.gpu)
    return answer if measured is None else answer.model_copy(update={"measured": measured})


LARGER_GPU_SHARE = 1.03
"""A GPU type with more memory than an estimate's, at most this share of it, is near enough to name its cell beside
the estimate (the A100-80GB's 81920 MiB for the H100-80GB's 81559; the H20-96GB's for the H100-NVL-94GB)."""


def _with_larger_gpu_cell(catalog: Catalog, query: Query, answer: Answer) -> Answer:
    """The answer, where its best plan is an estimate at Trinity's default token budget, with the cell of a GPU type
    with a little more memory (`LARGER_GPU_SHARE`) that documents exactly its setting on as many GPUs at its length
    (the row at or next above it): it trained there, on a GPU with that much more memory (the planner's rules keep
    it from vouching here)."""
    best, model = answer.best, catalog.model(query.model)
    if best is None or best.evidence != "estimated" or best.lowered_budget or query.estimate == "only":
        return answer
    memory = catalog.gpu(answer.gpu).memory_gib
    for name, cells in larger_tables(catalog, answer.gpu, model):  # the least memory first
        if catalog.gpu(name).memory_gib > memory * LARGER_GPU_SHARE:
            break
        if catalog.gpu(name).memory_gib == memory:  # the same memory: not "a little more"
            continue
        found = vouching_cell(model, cells.rows, cells.settings, best.gpus, best.setting, best.max_model_len,
                              columns=cells.columns)
        if found is not None and found[0] == "documented":
            return answer.model_copy(update={"larger_gpu_cell": found[1].model_copy(update={"gpu": name})})
    return answer


def _with_validated(catalog: Catalog, query: Query, answer: Answer) -> Answer:
    """The answer, when it maximises the length past what the model is known to handle (`validated_length`:
    YaRN past what Qwen's model cards validate, or a length past the native context on the model's own RoPE
    scaling), with the cheapest plan at that length within the same budget and pins (the best plan's setting
    and GPU count, where they are the cheapest there too): what to run for a length that needs no quality check."""
    best, model = answer.best, catalog.model(query.model)
    if query.objective != "max_len" or best is None or best.max_model_len <= validated_length(model):
        return answer
    within = optional_best(catalog, query.model_copy(update={
        "objective": "cheapest", "max_model_len": validated_length(model), "top": 1}), answer.gpu)
    return answer if within is None else answer.model_copy(update={"validated": within})


def _with_other_batch(catalog: Catalog, query: Query, answer: Answer) -> Answer:
    """With a train batch, the answer with the best plan without it where that is another plan (so better by the
    objective: the batch ruled it out): what a batch its data-parallel ranks divide would run. Without a plan,
    the reason says as much (`_batch_need`)."""
    best = answer.best
    if query.train_batch_size is None or best is None:
        return answer
    free_query = query.model_copy(update={"train_batch_size": None, "top": 1})
    free = optional_best(catalog, free_query, answer.gpu)
    if free is None or not best.another_than(free):
        return answer
    # Its cautions but the one on its ranks, which the answer's other_batch says already (a batch they divide).
    gpu = catalog.gpu(answer.gpu)
    model = catalog.model(query.model)
    free = _with_rollout_caution(free.with_cautions(
        model, gpu, _margin_room(query, gpu, free.setting, model), query.train_batch_size,
        version=query.trinity_version, unchecked_host_ram=query.unchecked_host_ram, node_gpus=query.node_gpus,
        option_names=query.option_names, node_gpus_given=query.node_gpus_given,
        fits_without_sp=_fits_without_sp(catalog, free_query, gpu, free.sp, free.max_model_len), dpo=query.dpo),
        model, gpu, query)
    return answer.model_copy(update={"other_batch": free})


def _with_unpinned(catalog: Catalog, query: Query, answer: Answer, asked: _Asked | None = None) -> Answer:
    """Where the caller pinned settings or the GPU count (`Query.given_pins`), the answer with the best plan of the
    same question without those pins (`_unpinned_question`, `_with_limit_lifted`; `asked`: where it was asked before
    the query, `_asked_first`, and its answer)."""
    if not query.given_pins:
        return answer
    question, answered = (asked.query, asked.answer) if asked is not None else (_unpinned_question(query), None)
    return _with_limit_lifted(catalog, question, answer, "unpinned", answered)


def _with_more_host_ram(catalog: Catalog, query: Query, answer: Answer, asked: _Asked | None = None) -> Answer:
    """Where a node's host memory was given (`Query.host_ram_gb`: --host-ram, or a source's own), the answer with the
    best plan of the same question on nodes with the most host memory any has (`_more_host_ram_question`,
    `_with_limit_lifted`; `asked` as `_with_unpinned`'s): what more host memory would run."""
    if query.host_ram_gb is None:
        return answer
    question, answered = (asked.query, asked.answer) if asked is not None else (_more_host_ram_question(query), None)
    return _with_limit_lifted(catalog, question, answer, "more_host_ram", answered)


def _with_limit_lifted(catalog: Catalog, lifted: Query, answer: Answer, field: Literal["unpinned", "more_host_ram"],
                       answered: Answer | None = None) -> Answer:
    """Where the answer has a plan, the answer with `lifted`'s best plan (the same question without one of the
    caller's limits; `answered`: its answer, where it was asked before) as its `field` (its own best plan where the
    limit costs nothing), as CP-SAT proves it within the query's time limit; the answer as it is where the limit
    leaves that unproven."""
    if answer.best is None:
        return answer
    if answered is not None:
        best = answered.best if answered.decided else None
    else:
        try:
            best = best_plan(catalog, lifted, answer.gpu, proven=True)
        except Undecided:
            return answer
    return answer if best is None else answer.model_copy(update={field: best})


class _Asked(NamedTuple):
    """A question asked on the way to another's answer (`_asked_first`), and its answer."""

    query: Query
    answer: Answer


def _asked_answer(asked: tuple[_Asked, ...], question: Query) -> Answer | None:
    """The answer of the question of `asked` that is `question`; None where none is."""
    return next((answered.answer for answered in asked if answered.query == question), None)


class _AskedFirst(NamedTuple):
    """The questions `_asked_first` asked, each with its answer, None where it was not asked."""

    unpinned: _Asked | None
    more_host_ram: _Asked | None

    @property
    def questions(self) -> tuple[_Asked, ...]:
        """Those asked."""
        return tuple(asked for asked in self if asked is not None)

    @property
    def unasked(self) -> tuple[Callable[[Catalog, Query, Answer], Answer], ...]:
        """The further questions (`_further_answers`) of the fields whose questions were not asked first: those of
        the others are in hand (`_with_asked_first`)."""
        fields = ((_with_unpinned, self.unpinned), (_with_more_host_ram, self.more_host_ram))
        return tuple(question for question, asked in fields if asked is None)


def _with_asked_first(catalog: Catalog, query: Query, answer: Answer, asked: _AskedFirst) -> Answer:
    """The answer with its `unpinned` and `more_host_ram` where `_asked_first` asked their questions, from the answers
    in hand: no solve, so however much of the answer's time limit is left (`_AskedFirst.unasked` are asked after)."""
    if asked.unpinned is not None:
        answer = _with_unpinned(catalog, query, answer, asked.unpinned)
    if asked.more_host_ram is not None:
        answer = _with_more_host_ram(catalog, query, answer, asked.more_host_ram)
    return answer


def _asked_first(catalog: Catalog, query: Query, gpu: str, ends_by: float | None = None) -> _AskedFirst:
    """The questions wider than `query` (their plans `query`'s and more, of the same prepared data) that `plan` asks
    for its answer's `unpinned` and `more_host_ram`, asked before `query` on `gpu` with their answers (unexplained), so
    that `answer_for` may answer `query` from them (`_ranked_from_asked`): `query` without its pins
    (`_unpinned_first`), then, where a node's host memory is given and that leaves `query` a plan to have (the
    field is asked only then), `query` on nodes with the most host memory (`_more_host_ram_question`). Where a
    wider question's best plan is within `query`, one solve answers both: where the limit costs nothing. Each ranking
    ends by `ends_by` (a `time.monotonic()`: `plan`'s share of the answer's time limit for them, `ASKED_FIRST_SHARE`;
    the second is not asked once it has passed; None: each its own time limit)."""
    unpinned = _unpinned_first(catalog, query, gpu, ends_by)
    if (query.host_ram_gb is None or (unpinned is not None and unpinned.answer.status == "infeasible")
            or (ends_by is not None and clock.seconds_left(ends_by) <= 0)):
        return _AskedFirst(unpinned, None)
    lifted = _more_host_ram_question(query)
    return _AskedFirst(unpinned, _Asked(lifted, answer_for(catalog, lifted, gpu, explained=False, ends_by=ends_by)))


def _more_host_ram_question(query: Query) -> Query:
    """`query` on nodes with the most host memory a node may have (`MAX_HOST_RAM_GB`, past every plan's need, which its
    plans then state), one plan asked: the question whose best plan says what the host memory given costs
    (`_with_more_host_ram`)."""
    return query.model_copy(update={"host_ram_gb": MAX_HOST_RAM_GB, "top": 1})


def _unpinned_question(query: Query) -> Query:
    """`query` without the pins the caller gave (`Query.given_pins`: a config's exact count is kept), one plan asked:
    the question whose best plan says what the pins cost (`_with_unpinned`)."""
    return _unpinned(query, top=1, exact=query.exact and not query.exact_pinned)


def _unpinned_first(catalog: Catalog, query: Query, gpu: str, ends_by: float | None = None) -> _Asked | None:
    """Where `query` has pins (`Query.given_pins`) that leave what `prepare` gives as it is (all but --no-env, whose
    estimates are without Env): `_unpinned_question` on `gpu` and its answer (unexplained, its ranking ending by
    `ends_by`, as `answer_for`'s), asked before `query` (`_asked_first`); None otherwise."""
    if not query.given_pins:
        return None
    free = _unpinned_question(query)
    if PlanningInputs.of(gpu, free) != PlanningInputs.of(gpu, query):
        return None
    return _Asked(free, answer_for(catalog, free, gpu, explained=False, ends_by=ends_by))


def _within(query: Query, data: PlanningData, plan: Plan) -> bool:
    """Whether `plan`, of a question wider than `query` on `data` (`_asked_first`), is one of `query`'s: it has every
    setting `query` pins, where its count is exact that count, and it fits a node's host memory where that is given
    (`fits_host_ram`, the model's rule)."""
    pinned = ((query.sp, plan.sp), (query.env, plan.env), (query.offload, plan.offload))
    return (all(pin is None or pin == value for pin, value in pinned)
            and (not query.exact or plan.gpus == query.budget_gpus)
            and fits_host_ram(data.shape, plan.gpus, query.node_gpus, query.host_ram_gb, plan.offload,
                              query.trinity_version, query.reference_model, query.lora_rank, query.critic,
                              query.expert_layout, query.model_loading(data.compute_capability, plan.offload)))


def _with_lowered_fewer(catalog: Catalog, query: Query, answer: Answer) -> Answer:
    """Under --minimize gpus, the answer with the fewest GPUs that train its length with a lowered budget, where fewer
    than its best plan's (`lowered_fewer`)."""
    best = answer.best
    asked = lowered_fewer(catalog, query, best, answer.gpu) if best is not None else None
    if asked is None or asked[0] is None:
        return answer
    fewer = asked[0]
    unused = 0 if answer.open_budget else answer.budget_gpus - fewer.gpus  # of the budget asked, as the others'
    return answer.model_copy(update={"token_budget_auto": fewer.model_copy(update={"unused_gpus": unused})})


def _with_room_kept(catalog: Catalog, query: Query, answer: Answer) -> Answer:
    """The answer, where its best plan carries the thin-headroom caution, with the same question asked at the margin
    that caution names (`MarginRoom.keeping` the room `MarginRoom.thin_gib` asks for, with the plan's setting, as
    `Plan.with_cautions` weighs it: ``--margin 0.04``) and its best plan, or none: CP-SAT's answer to what keeping that
    room costs, which the ranking (every plan at the query's margin) leaves out. Unchanged where it is undecided (its
    solve ends by the answer's deadline: `_further_answers`)."""
    best = answer.best
    if best is None or CautionCode.THIN_HEADROOM not in best.caution_codes:
        return answer
    room = _margin_room(query, catalog.gpu(answer.gpu), best.setting, catalog.model(query.model))
    margin = room.keeping(room.thin_gib)
    roomy = answer_for(catalog, query.model_copy(update={"margin": margin, "top": 1}), answer.gpu, explained=False)
    if roomy.status == "unknown":
        return answer
    return answer.model_copy(update={"room_kept": RoomKept(margin=margin, plan=roomy.best)})


def _further_answers(catalog: Catalog, query: Query, answer: Answer,
                     questions: Iterable[Callable[[Catalog, Query, Answer], Answer]], ends_by: float) -> Answer:
    """`answer` with what each of `questions` (`_with_measured`, `_with_room_kept`, ...: the further questions `plan`
    asks of its ranking's answer, in order) adds, each solve of theirs ending by `ends_by` (a `time.monotonic()`: the
    answer's deadline, the end of the time limit the questions asked first and its ranking share too, or the run's
    deadline where that comes first: `run_deadline`); a question is not asked once that has passed (the answer stays
    without what it adds)."""
    run = _RUN_DEADLINE.get()
    with run_deadline(ends_by if run is None else min(run, ends_by)):
        for question in questions:
            if clock.seconds_left(ends_by) <= 0:
                break
            answer = question(catalog, query, answer)
    return answer


def lowered_fewer(catalog: Catalog, query: Query, best: Plan, gpu: str) -> tuple[Plan | None, bool] | None:
    """Under --minimize gpus, where --token-budget auto may lower a budget (`_may_lower_budget`) and `best` (the
    query's best plan on `gpu`) takes more than one GPU: the plan with the fewest GPUs that trains the query's length
    with a lowered budget on fewer than `best`'s, or None where none does, and whether that was decided in the query's
    time limit. It is the question with --token-budget auto (`_changed`, as an infeasible answer's alternative is
    asked) within one GPU fewer than `best`: CP-SAT decides. None where the question does not arise."""
    lowered = _changed(query, "token_budget_auto", catalog.model(query.model))
    if query.objective != "min_gpus" or lowered is None or best.gpus == 1:
        return None
    found = answer_for(catalog, lowered.model_copy(update={"budget_gpus": best.gpus - 1}), gpu, explained=False)
    fewer = found.best
    # A plan at the default budget would mean the time limit left `best` unproven: not one that lowering gives.
    return (fewer if fewer is not None and fewer.lowered_budget else None), found.decided


def _with_fewer_nodes(catalog: Catalog, query: Query, answer: Answer) -> Answer:
    """The answer, with the best plan on fewer nodes where the best plan's trainer takes whole nodes and
    so gives the rollout more GPUs than `--rollout-gpus` asked (8 trainer GPUs and 2 rollout GPUs on two
    nodes of 8, where 6 and 2 fit one): CP-SAT's best within the largest budget whose layouts take fewer
    nodes, unless the count is exact."""
    best, rollout = answer.best, query.rollout_gpus
    if query.exact or rollout is None or best is None or best.nodes is None or best.rollout_gpus in (None, rollout):
        return answer
    layouts = {n: rollout_layout(n, rollout, query.node_gpus) for n in range(1, best.gpus)}
    # Never empty: this best's trainer takes whole nodes and its rollout a part of its own nodes, so a trainer of
    # node_gpus - rollout % node_gpus GPUs (fewer than best.gpus) shares a node with that rollout, on fewer nodes.
    fewer = [n for n, layout in layouts.items() if layout is not None and layout[0] < best.nodes]
    alternative = optional_best(catalog, query.model_copy(update={"budget_gpus": max(fewer), "top": 1}), answer.gpu)
    if alternative is None:
        return answer
    unused = 0 if answer.open_budget else answer.budget_gpus - alternative.gpus  # of the budget asked, as the others'
    return answer.model_copy(update={"fewer_nodes": alternative.model_copy(update={"unused_gpus": unused})})


def _with_trainer_alone(catalog: Catalog, query: Query, answer: Answer) -> Answer:
    """The answer, under --minimize gpus with rollout GPUs beside the trainer, where their layout rules out trainers
    of fewer GPUs than the best plan's (8 rollout GPUs on nodes of 8 leave a trainer of 4 no layout: 12 GPUs are
    neither one node nor whole nodes), with the plan of fewest GPUs that trains the length with no rollout beside it
    (``--rollout-gpus 0``), where that is fewer: what the trainer needs, as the words name it beside the split. None
    where the layout is not what stops a smaller trainer."""
    best, rollout = answer.best, query.rollout_gpus
    if query.objective != "min_gpus" or query.exact or not rollout or best is None or not any(
            rollout_layout(n, rollout, query.node_gpus) is None for n in range(1, best.gpus)):
        return answer
    alone = optional_best(catalog, query.model_copy(update={
        "rollout_gpus": 0, "budget_gpus": best.gpus - 1, "open_budget": False, "top": 1}), answer.gpu)
    if alone is None or rollout_layout(alone.gpus, rollout, query.node_gpus) is not None:
        return answer
    unused = 0 if answer.open_budget else answer.budget_gpus - alone.gpus  # of the budget asked, as the others'
    return answer.model_copy(update={"trainer_alone": alone.model_copy(update={"unused_gpus": unused})})


def _with_rollout_kept(catalog: Catalog, query: Query, answer: Answer) -> Answer:
    """The answer, where its best plan takes the user's whole budget and no rollout GPUs were given (``--gpus``
    counts the trainer's alone, so the rollout has none left) and the run is no DPO's (which has no explorer: mode
    train), with the same question asked with some of the budget
    kept for the rollout (`kept_for_rollout`: ``--gpus N-K --rollout-gpus K``) and its best plan, or none: so that the
    hint the answer gives names a request that plans. Where that plan leaves some of `N-K` unused, the question is
    asked once more with them kept for the rollout too (``--gpus n --rollout-gpus N-n``), and its plan taken where it
    has one: within one node, the first plan as that question lays it out (`_widened_within_node`). A budget of one
    GPU keeps it, with no plan and no solve: the trainer has none left. Where the kept question has no plan and the
    host memory given (--host-ram) or the settings the query pins (--sp, --env, --offload) may rule them out, one
    solve more (`fewest_limits_dropped`): its best plan without the host memory, where that alone rules them out
    (`without_host_ram`), else its best plan without the fewest pins that do (`without_pins`: ``--sp 8`` leaves 6
    trainer GPUs none); where neither does, its best plan with ``--token-budget auto`` where that may lower a budget
    (`_changed`), taken as the kept question's plan (its `Plan.lowered_budget` says so; the GPUs it leaves unused
    kept for the rollout too within one node alone, where that takes no solve). Unchanged where the first solve is
    undecided."""
    best = answer.best
    if query.rollout_gpus is not None or query.dpo or query.open_budget or best is None or best.unused_gpus:
        return answer
    kept = kept_for_rollout(query.budget_gpus, query.node_gpus)
    if kept == query.budget_gpus:
        return answer.model_copy(update={"rollout_kept": RolloutKept(rollout_gpus=kept, plan=None)})
    kept_answer = answer_for(catalog, _keeping(query, kept), answer.gpu, explained=False)
    if kept_answer.status == "unknown":
        return answer
    lowered = None
    if kept_answer.best is None:
        lifted, unpinned = (None, None) if query.host_ram_gb is None and not query.pin_flags else fewest_limits_dropped(
            catalog, _keeping(query, kept), answer.gpu)
        lowered = None if lifted or unpinned else _changed(query, "token_budget_auto", catalog.model(query.model))
        lowered_answer = None if lowered is None else answer_for(catalog, _keeping(lowered, kept), answer.gpu,
                                                                 explained=False)
        if lowered is None or lowered_answer is None or lowered_answer.best is None:
            return answer.model_copy(update={"rollout_kept": RolloutKept(
                rollout_gpus=kept, plan=None, without_host_ram=lifted, without_pins=unpinned)})
        query, kept_answer = lowered, lowered_answer  # the GPUs it leaves unused are asked for with it too
    kept_plan = kept_answer.best
    if kept_plan is not None and kept_plan.unused_gpus:
        widened_query = _keeping(query, query.budget_gpus - kept_plan.gpus)
        # Past one node a solve more, which a lowered budget's, asked after one or two, leaves out (docs/api.md's
        # bound on an answer's solves).
        widened = (_widened_within_node(catalog, widened_query, answer.gpu, kept_plan)
                   if kept_answer.decided and query.budget_gpus <= query.node_gpus
                   else None if lowered else optional_best(catalog, widened_query, answer.gpu))
        if widened is not None:
            kept, kept_plan = query.budget_gpus - kept_plan.gpus, widened
    return answer.model_copy(update={"rollout_kept": RolloutKept(rollout_gpus=kept, plan=kept_plan)})


def _keeping(query: Query, kept: int) -> Query:
    """`query` with `kept` of its budget's GPUs kept for the rollout (``--gpus N-kept --rollout-gpus kept``), its best
    plan asked within them (with ``--exact`` too: the trainer's count is then the rollout's to share)."""
    return query.model_copy(update={"budget_gpus": query.budget_gpus - kept, "rollout_gpus": kept, "top": 1,
                                    "exact": False})


def _widened_within_node(catalog: Catalog, widened: Query, gpu: str, kept_plan: Plan) -> Plan:
    """The best plan of `widened` (`_keeping` the GPUs `kept_plan` left unused too), where the whole budget fits one
    node and `kept_plan` is proven the best with fewer GPUs kept: `kept_plan` as `widened` lays it out, without a
    solve. In one node every trainer count has a layout beside a rollout that fills the node at most, so `widened`'s
    plans are those of `kept_plan`'s question on at most its GPUs; the best of those is the best of these (the
    objective's order is total)."""
    values = [kept_plan.gpus, int(kept_plan.env), int(kept_plan.offload), kept_plan.sp, kept_plan.max_model_len]
    return _plan(catalog, prepare(catalog, gpu, widened), widened, values, estimated=kept_plan.evidence == "estimated")


def _with_tables_verdict(catalog: Catalog, query: Query, answer: Answer) -> Answer:
    """With ``--estimate`` (the memory model alone): the answer, with what the tables say of its best plan's
    setting on its GPUs at its length (at Trinity's default token budget, which they measured), where they
    speak."""
    best = answer.best
    verdict = None if query.estimate != "only" or best is None else estimate_tables_verdict(
        catalog, answer.gpu, catalog.model(query.model), best)
    return answer if verdict is None else answer.model_copy(update={"tables": verdict})


def estimate_tables_verdict(catalog: Catalog, gpu: str, model: Model, plan: Plan) -> TablesVerdict | None:
    """What `gpu`'s tables say of `plan`'s setting of `model` on its GPUs at its length (`cited_tables_verdict`), at
    Trinity's default token budget, which they measured (for a LoRA plan, only where they vouch: `Plan.lora_rank`; with
    a critic, only where they refute: `Plan.critic`): None where they do not speak, or the plan lowers it."""
    return None if plan.lowered_budget else cited_tables_verdict(catalog, gpu, model, plan.gpus, plan.setting,
                                                                 plan.max_model_len, lora=plan.lora_rank > 0,
                                                                 critic=plan.critic is not None)


def more_gpus_changes(data: PlanningData) -> dict[str, object]:
    """A query's changes to ask for the fewest trainer GPUs that train its length, past its budget: at any count up
    to the most the estimates or `data`'s tables (which may vouch past the estimates') cover."""
    return {"objective": "min_gpus", "budget_gpus": max((MAX_ESTIMATED_GPUS, *data.counts)), "open_budget": True,
            "exact": False}


def _with_estimated_plan(catalog: Catalog, query: Query, answer: Answer) -> Answer:
    """With ``--no-estimate`` and no plan: the answer, its reason saying so where the memory model's estimates give
    a plan (the same question solved with them), or would but for --host-ram where the tables' plans would not (then
    with the host memory it needs: a plan of the tables without it is the reason's to name), or else their nearest
    plan where the tables vouch for none as near (`nearest_plan`, naming the other limits it lifts, the GPUs it
    takes, and larger nodes where only they have one). `solve cluster` says so in its own words, for its layouts."""
    if query.estimate != "never" or answer.status != "infeasible":
        return answer
    with_estimates = query.model_copy(update={"estimate": "auto", "top": 1})
    if estimated := optional_best(catalog, with_estimates, answer.gpu):
        return answer.with_reason(answer.reason_words + "; " + estimated_plan_words(estimated)
                                  + f": drop {query.option_names.no_estimate}")
    unlimited = with_estimates.model_copy(update={"host_ram_gb": None})
    if query.host_ram_gb is not None and (estimated := optional_best(catalog, unlimited, answer.gpu)):
        if optional_best(catalog, query.model_copy(update={"host_ram_gb": None, "top": 1}), answer.gpu):
            return answer  # the tables train it without --host-ram: the reason names that plan and its need already
        over = host_over_words(catalog.model(query.model), estimated, query.node_gpus, query.host_ram_bound_words,
                               query)
        least = least_host_words(catalog, unlimited, estimated, answer.gpu)
        return answer.with_reason(answer.reason_words + "; " + estimated_plan_words(estimated) + f", but {over}"
                                  + least)
    # Where the estimates alone give none: the nearest plan with them (`nearest_plan`, lifting --no-estimate), unless
    # the tables vouch for one as near (the reason's own ways are the tables').
    data = prepare(catalog, answer.gpu, query)
    try:
        nearest = _nearest_on_nodes(catalog, data, with_estimates)
    except Undecided:
        return answer
    if nearest is None:  # none with the estimates either, so none of the tables' (`_nearest_words` said nothing)
        return answer.with_reason(answer.reason_words + _no_nearest_words(catalog, with_estimates, no_estimate=True))
    if "estimate" not in nearest.lifted:
        return answer
    estimated = nearest.plan
    other_count = "budget" in nearest.lifted or query.exact and estimated.gpus != query.budget_gpus
    gpus = f" and take {query.budget_option(estimated.gpus)}" if other_count else ""
    return answer.with_reason(answer.reason_words + f"; {nearest.nodes_words(query, answer.limits_named)}"
                              + estimated_plan_words(estimated)
                              + f": {nearest.lift_words(query)}{gpus}"
                              + nearest.host_words(data.shape, query))


def host_over_words(model: Model, plan: Plan, node_gpus: int, limit: str, query: Query) -> str:
    """The host memory per node `plan` of `model` needs as `query` counts it (`_shown_host_need`), more than `limit`
    (`host_ram_bound_words`), in words: ``with Offload it needs 594.2 GiB of host memory per node, more than
    --host-ram 400 GiB``."""
    return f"{_host_need_words(model, node_gpus, plan, query)}, more than {limit}"


def estimated_plan_words(plan: Plan) -> ReasonWords:
    """The plan the memory model estimates where estimates are off (``--no-estimate``), in words: ``the memory model
    estimates a plan, Env + SP=4 on 16 GPUs at 32768 tokens``, with its lowered token budget where it takes one (a
    nearest plan's, which lifting ``--no-estimate`` for ``--token-budget auto`` allows), and the guide's caution
    against one GPU in short where it carries it, with its code (`Plan.cautioned`): ``... on 1 GPU at 40960 tokens
    (one trainer GPU: ...)``."""
    caution = plan.cautioned("")
    return (f"the memory model estimates a plan, {plan.setting.label} on {counted(plan.gpus, 'GPU')} at "
            f"{counted(plan.max_model_len, 'token')}{plan.lowered_words}"
            + (" (" + caution + ")" if caution else ReasonWords()))


def answer_for(catalog: Catalog, query: Query, gpu: str, explained: bool = True, data: PlanningData | None = None,
               asked: tuple[_Asked, ...] = (), ends_by: float | None = None) -> Answer:
    """Solve `query` on one GPU type: up to `query.top` distinct plans, or the reason there is none (unless
    `explained` is False: working it out takes more solves, which a caller that only wants plans spares).
    `data`: what `prepare` gives for the query on `catalog`, prepared before (for a question of the same
    `PlanningInputs`); a `ValueError` where it was prepared for other inputs. `asked`: questions wider than `query`,
    asked before (`_asked_first`): where one's best plan is proven and within `query`, it is the answer's best, without
    a solve, and the plans after it are ranked on from it (`_ranked_from_asked`); where one has no plan, neither has
    `query`; and a reason that asks one of them again takes its answer. `ends_by`: the
    `time.monotonic()` by which the ranking ends (a `plan` answer's deadline, which its other solves share); None: the
    query's time limit from now. A reason's solves have their own."""
    data = _prepared(catalog, query, gpu, data)
    started = time.monotonic()
    ends_by = started + query.time_limit_s if ends_by is None else ends_by
    if data.holds_no_plan(query):
        steps = (_offloaded_critic_words(catalog, query, gpu) + _nearest_words(catalog, data, query) if explained
                 else ReasonWords())
        code, reason = _no_data_reason(data, query, gpu)
        return _answer(catalog, query, gpu, "infeasible", (), started, reason=reason + steps, reason_code=code)
    ranked = (_ranked_from_asked(catalog, data, query, asked, ends_by)
              or _ranked_plans(catalog, data, query, ends_by))
    if ranked.plans:
        proven = all(s in (cp_model.OPTIMAL, cp_model.INFEASIBLE) for s in ranked.statuses)
        return _answer(catalog, query, gpu, "optimal" if proven else "feasible", ranked.plans, started,
                       ranked.objective_value, ranked.bound)
    if ranked.statuses[0] == cp_model.INFEASIBLE:
        if not explained:
            return _answer(catalog, query, gpu, "infeasible", (), started, reason="no plan",
                           reason_code=ReasonCode.NOT_EXPLAINED)
        nearby = _Nearby(catalog, query, gpu, asked)
        why = _no_plan_reason(catalog, data, query, nearby)
        raised = smallest_cap_plan(catalog, data, query)
        answer = _answer(catalog, query, gpu, "infeasible", (), started,
                         reason=why.text + _raised_cap_words(query, raised), reason_code=why.code,
                         nearest=why.nearest, alternatives=nearby.solved(), limits_named=why.limits_named)
        return answer if raised is None else answer.model_copy(update={"token_budget_cap_raised": raised})
    return _answer(catalog, query, gpu, "unknown", (), started,
                   reason=f"no plan found within the time limit of {time_limit_words(query)}",
                   reason_code=ReasonCode.TIME_LIMIT)


def _prepared(catalog: Catalog, query: Query, gpu: str, data: PlanningData | None) -> PlanningData:
    """`answer_for`'s `data`: what `prepare` gives for `query` on `gpu`, prepared now where it is None; a
    `ValueError` where it was prepared for other inputs."""
    if data is None:
        return prepare(catalog, gpu, query)
    if data.inputs != PlanningInputs.of(gpu, query):
        raise ValueError(f"data prepared for other inputs than those of the query on {gpu}")
    return data


class _Ranked(NamedTuple):
    """The plans `_ranked_plans` found, best first, with the status of each solve, each plan's objective value
    (`objective_expression`) and the first solve's bound."""

    plans: list[Plan]
    statuses: list[SolverStatus]
    scores: list[int]
    bound: float | None

    @property
    def objective_value(self) -> int | None:
        """The best plan's objective value; None where there is none."""
        return self.scores[0] if self.scores else None


def _ranked_plans(catalog: Catalog, data: PlanningData, query: Query, deadline: float,
                  found: _Ranked | None = None) -> _Ranked:
    """Up to `query.top` distinct plans for `query` on `data`'s GPU type, best first, solved one after another by
    `deadline` (each solve excluding the plans found and those they dominate), until the search stops finding
    them; ranked on from `found` where given (`query`'s first plans, each proven the best of those left: a wider
    question's best, `_ranked_from_asked`), as its own first solves would have left the search."""
    model, variables, _ = build_model(data, query)
    solver = _ranking_solver(data, query)
    ranked = _Ranked([], [], [], None) if found is None else found._replace(
        plans=list(found.plans), statuses=list(found.statuses), scores=list(found.scores))
    for plan, score in zip(ranked.plans, ranked.scores, strict=True):  # each proven the best of those left
        cost_rank = next(entry.cost_rank for entry in data.ranks if (entry.gpus, entry.env, entry.offload, entry.sp)
                         == (plan.gpus, plan.env, plan.offload, plan.sp))
        _exclude_found(model, data, query, variables, plan, cost_rank, score)
    if ranked.plans:
        solver.parameters.search_branching = cp_model.AUTOMATIC_SEARCH  # as for a ranking's later solves
    while len(ranked.plans) < query.top:  # until the query's top plans are found, or the search stops finding them
        solver.parameters.max_time_in_seconds = max(clock.seconds_left(deadline), 0.001)
        status = _solved(solver, model)
        ranked.statuses.append(status)
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            break
        if not ranked.plans:
            ranked = ranked._replace(bound=solver.best_objective_bound)
        values = [solver.value(variable) for variable in variables.plan]
        ranked.plans.append(_plan(catalog, data, query, values, estimated=bool(solver.value(variables.estimated))))
        ranked.scores.append(int(solver.objective_value))
        if len(ranked.plans) == query.top:
            break
        _exclude_found(model, data, query, variables, ranked.plans[-1], solver.value(variables.cost_rank),
                       ranked.scores[-1] if status == cp_model.OPTIMAL else None)
        solver.parameters.search_branching = cp_model.AUTOMATIC_SEARCH  # the strategy only pays once
    return ranked


def _exclude_found(model: cp_model.CpModel, data: PlanningData, query: Query, variables: PlanVariables, plan: Plan,
                   cost_rank: int, proven_score: int | None) -> None:
    """Exclude `plan`, which a solve of a ranking found (its combination's `cost_rank`), and the plans it dominates
    (`exclude_dominated`); and where the solve proved it the best (`proven_score`: its objective value), every plan
    that scores no better: the next solve finds the next best (distinct plans score differently)."""
    exclude_dominated(model, data, variables, FoundPlan(gpus=plan.gpus, max_model_len=plan.max_model_len,
                                                        cost_rank=cost_rank, estimated=plan.evidence == "estimated"),
                      longer_possible=query.objective == "max_len" and proven_score is None)
    if proven_score is not None:
        model.add(objective_expression(data, query, variables) >= proven_score + 1)


def _ranked_from_asked(catalog: Catalog, data: PlanningData, query: Query, asked: tuple[_Asked, ...],
                       deadline: float) -> _Ranked | None:
    """`query`'s ranked plans (`_ranked_plans`) where a wider question asked before settles its first solve (`asked`:
    their plans `query`'s and more, of the same data, ranked by the same objective, `_asked_first`): where one has no
    plan, none; where one's best, proven, is within `query` (`_within`), it is `query`'s best (distinct plans score
    differently), and `query`'s next best are ranked on from it (one solve fewer); None where none settles it."""
    for wider in asked:
        first = wider.answer
        if first.status == "infeasible":
            return _Ranked([], [cp_model.INFEASIBLE], [], None)
        if first.status == "optimal" and first.objective_value is not None and _within(query, data, first.plans[0]):
            ranked = _Ranked([first.plans[0]], [cp_model.OPTIMAL], [first.objective_value], first.bound)
            return ranked if query.top == 1 else _ranked_plans(catalog, data, query, deadline, ranked)
    return None


def _no_data_reason(data: PlanningData, query: Query, gpu: str) -> tuple[ReasonCode, str]:
    """Why `query` has no plan on `gpu` where `data` holds none (`PlanningData.holds_no_plan`), with its code: no table
    of the model, and (where estimates are on) nothing the memory model fits with the PPO critic counted, within what
    larger GPUs' tables allow; first, where --exact asks for a count the estimates never consider, why they do not
    (`unestimated_count_words`: not whole nodes, or past their counts), as the explanation says."""
    capping = data.capping_gpus  # their failures cap the estimates too
    nothing_fits = f"the memory model estimates that nothing fits (not even {GRID} tokens)" + (
        f" within what the {capping} tables allow (their GPUs have at least this one's memory)" if capping else "")
    if query.estimate == "only":
        code = ReasonCode.ESTIMATE_FITS_NOTHING
        reason = f"with {query.option_names.estimate_only} (the tables set aside),{query.critic_words} {nothing_fits}"
    else:
        code = ReasonCode.NO_TABLE_FOR_MODEL
        reason = (f"the tables have no {query.model} on {gpu}"
                  + ("" if query.estimate == "never" else f", and{query.critic_words} {nothing_fits}"))
    unestimated = query.exact and query.estimate != "never" and unestimated_count_words(
        query.budget_gpus, query.node_gpus, query.node_source)
    if not unestimated:
        return code, reason
    exactly = f"no plan for exactly {counted(query.budget_gpus, 'trainer GPU')} with {data.model} on {gpu}"
    return ReasonCode.EXACT_COUNT_HAS_NO_PLAN, f"{exactly}: {unestimated}; on fewer GPUs, {reason}"


def _offloaded_critic_words(catalog: Catalog, query: Query, gpu: str) -> ReasonWords:
    """Where `query` counts a PPO critic held on the GPUs (resident, or reloaded for its own update) and has no plan on
    `gpu`: its best plan with the critic offloaded (in host memory throughout), the next step that keeps its GPUs, in
    words (``; with --critic offloaded (its states in host memory throughout), Env + Offload + SP=2 on 4 GPUs trains
    65536 tokens (estimated)``); "" where the critic is none or offloaded, or that has no plan either."""
    if query.critic not in ("resident", "reloaded"):
        return ReasonWords()
    plan = optional_best(catalog, query.model_copy(update={"critic": "offloaded", "top": 1}), gpu)
    if plan is None:
        return ReasonWords()
    return (f"; with {query.option_names.planned_critic('offloaded')} (its states in host memory throughout), "
            f"{plan.setting.label} on {counted(plan.gpus, 'GPU')} trains {counted(plan.max_model_len, 'token')}"
            f"{plan.lowered_words} (" + plan.evidence_cautioned + ")")


def _ranking_solver(data: PlanningData, query: Query) -> cp_model.CpSolver:
    """`new_solver` for `answer_for`'s ranked solves, tuned for these small models."""
    solver = new_solver(query)
    # SAT inprocessing costs these small models more than it saves (an explanation's solves, whose cores it may shape,
    # keep it): without it the benchmark mix's solves take a sixth less CPU time, 64-GPU queries half, and ranked plans
    # on 64 GPUs (each solve proving the next best) a seventh.
    solver.parameters.use_sat_inprocessing = False
    # Nor do two steps of loading them pay: detecting "greater than at least one of" constraints and implied bounds
    # (the same solutions; the mix's solves about an eighth less CPU time).
    solver.parameters.auto_detect_greater_than_at_least_one_of = False
    solver.parameters.use_implied_bounds = False
    # Follow the model's strategy (add_objective) where it pays: for the fewest GPUs, and on small models;
    # with many GPU counts CP-SAT's own search finds the cheapest or longest plan three times faster.
    fixed = query.objective == "min_gpus" or len(data.ranks) <= FIXED_SEARCH_RANKS
    solver.parameters.search_branching = cp_model.FIXED_SEARCH if fixed else cp_model.AUTOMATIC_SEARCH
    return solver


def _solved(solver: cp_model.CpSolver, model: cp_model.CpModel) -> SolverStatus:
    """`solver.solve(model)`, `checked`, within this thread's `plan` call (whose Ctrl-C stops it), its deadline
    (`call_deadline`) and its deterministic time (`work_budget`)."""
    solver.parameters.max_time_in_seconds = within_deadline(solver.parameters.max_time_in_seconds)
    budget = _WORK_BUDGET.get()
    if budget is not None:
        solver.parameters.max_deterministic_time = max(budget.left, 0.0)
    group = _SOLVE_GROUP.get()
    status = checked(solver, model, group.solve(solver, model) if group is not None else solver.solve(model))
    if budget is not None:
        budget.spent += solver.response_proto.deterministic_time
    return status


def checked(solver: cp_model.CpSolver, model: cp_model.CpModel, status: SolverStatus) -> SolverStatus:
    """`status`, which `solver` returned for `model`; `RuntimeError` for MODEL_INVALID, a defect of the
    model's (never of the input) that must not pass for a time-out."""
    if status == cp_model.MODEL_INVALID:
        raise RuntimeError(f"CP-SAT answered {solver.status_name(status)}: {model.validate()}")
    return status


def plan_for_settings(
    catalog: Catalog, query: Query, gpu: str, gpus: int, setting: Setting
) -> Plan | None:
    """The plan that trains `query`'s model and length on exactly `gpus` GPUs with exactly `setting`
    (with its evidence), or None when the tables do not vouch for it."""
    pinned = {"objective": "cheapest", "budget_gpus": gpus, "exact": True, "top": 1,
              "sp": setting.sp, "env": setting.env, "offload": setting.offload}
    return best_plan(catalog, query.model_copy(update=pinned), gpu)


def best_plan(catalog: Catalog, query: Query, gpu: str, *, proven: bool = False) -> Plan | None:
    """The best plan of `query` on the GPU type `gpu`, or None when it has none; `Undecided` when the time
    limit left that open, and with `proven` (a map's cell) also where it cut the search before proving the plan
    found the best (a plan another run, seed or worker count may better)."""
    answer = answer_for(catalog, query, gpu, explained=False)
    if answer.status == "unknown":
        raise Undecided(f"no plan found for {query.model} on {gpu} within the time limit of {time_limit_words(query)}")
    if proven and not answer.decided:
        raise Undecided(f"a plan for {query.model} on {gpu} was found but not proven the best within the time limit "
                        f"of {time_limit_words(query)}")
    return answer.best


def optional_best(catalog: Catalog, query: Query, gpu: str) -> Plan | None:
    """`best_plan`, or None where it is undecided too: for what an answer or a reason may leave out."""
    try:
        return best_plan(catalog, query, gpu)
    except Undecided:
        return None


def new_solver(query: Query) -> cp_model.CpSolver:
    """A CP-SAT solver with the query's workers and seed (the caller sets the time limit)."""
    solver = new_cp_solver(query.workers, query.seed)  # Ctrl-C is Python's: the command exits with 130
    # The models are tiny (a few dozen variables): presolve and probing cost more than they save.
    solver.parameters.cp_model_presolve = False
    solver.parameters.cp_model_probing_level = 0
    solver.parameters.linearization_level = 0
    solver.parameters.table_compression_level = 0
    solver.parameters.symmetry_level = 0
    return solver


def _answer(
    catalog: Catalog,
    query: Query,
    gpu: str,
    status: Status,
    plans: tuple[Plan, ...] | list[Plan],
    started: float,
    objective_value: int | None = None,
    bound: float | None = None,
    reason: ReasonWords | str | None = None,
    reason_code: ReasonCode | None = None,
    nearest: Plan | None = None,
    alternatives: Alternatives | None = None,
    limits_named: bool = False,
) -> Answer:
    """The answer on `gpu`: what `query` asked (with the margin its estimates there are held to, and the memory
    model's own where that is not it), its status, plans and reason (with its code, and the codes of the cautions its
    words say: plain words say none), and the time since `started`."""
    margin = query.margin_on(catalog.gpu(gpu).memory_gib)
    words = ReasonWords(reason) if isinstance(reason, str) else reason
    answer = Answer(
        gpu=gpu,
        model=query.model,
        objective=query.objective,
        budget_gpus=query.budget_gpus,
        open_budget=query.open_budget,
        max_model_len=query.max_model_len,
        exact=query.exact,
        pins=query.pins,
        train_batch_size=query.train_batch_size,
        rollout_gpus=query.rollout_gpus,
        total_gpus=query.total_gpus,
        node_gpus=query.node_gpus,
        host_ram_gb=query.host_ram_gb,
        reference_model=query.reference_model,
        lora_rank=query.lora_rank,
        critic=query.critic,
        dpo_pairs=True if counts_dpo_pairs(catalog.model(query.model), query.dpo) else None,
        margin=margin,
        memory_model_margin=query.memory.margin if margin != query.memory.margin else None,
        token_budget=query.token_budget,
        token_budget_cap=query.token_budget_cap,
        token_budget_cap_source=query.token_budget_cap_source,
        memory_model_source=query.memory.own_source,
        status=status,
        reason=None if words is None else words.text,
        reason_code=reason_code,
        plans=tuple(plans),
        nearest=nearest,
        alternatives=alternatives,
        limits_named=limits_named,
        objective_value=objective_value,
        bound=bound,
        wall_time_s=time.monotonic() - started,
    )
    return answer if words is None else answer.with_reason(words)


def _plan(catalog: Catalog, data: PlanningData, query: Query, values: list[int], estimated: bool) -> Plan:
    """The solver's values (n, e, o, s, L) as a plan: its cost, the evidence it rests on, and the memory
    model's prediction of its peak memory."""
    gpus, env, offload, sp, length = values
    setting = Setting(env=bool(env), offload=bool(offload), sp=sp)
    evidence: Evidence
    source: SourceCell | None
    # A cell vouches for the plan even where the solver's witness was an estimate: the table is the better evidence.
    found = None if query.critic else vouching_cell(  # with a critic no cell vouches (`solver.rules.tables_verdict`)
        data.shape, data.rows, data.settings, gpus, setting, length, columns=data.columns, larger=data.larger,
        lora=query.lora_rank > 0)
    if found is None and not estimated:  # a defect of the model's, never of the input
        raise RuntimeError(f"the solver returned {setting.label} on {gpus} GPUs at {length} with no cell behind it")
    evidence, source = found or ("estimated", None)
    source = source.cited(data.table_origins) if source is not None else None
    most = None if source is not None or not data.lowers_budget else \
        most_estimated_tokens(length, sp, data.estimate_longest[gpus, env, offload, sp])
    tokens = token_budget(length, sp) if most is None else lowered_token_budget(length, sp, most)
    cap = query.token_budget_cap  # the model holds a sequence at it: L <= cap x SP (`add_token_cap`)
    capped = tokens is not None and cap is not None and tokens > cap
    tokens = cap if capped else tokens
    if tokens is None:  # a defect of the model's: an estimate's reach is what its most tokens hold
        raise RuntimeError(f"the solver returned {setting.label} on {gpus} GPUs at {length} beyond its estimate")
    layout = (rollout_layout(gpus, query.rollout_gpus, query.node_gpus) if query.rollout_gpus is not None
              else None)
    if query.rollout_gpus is not None and layout is None:  # a defect of the model's: its rollout_layout rule holds
        raise RuntimeError(f"{gpus} trainer + {query.rollout_gpus} rollout GPUs have no layout")
    gpu = catalog.gpu(data.gpu)
    loading = query.model_loading(gpu.compute_capability, bool(offload))
    host_need = shown_host_need(data.shape, gpus, query.node_gpus, bool(offload), query.trinity_version,
                                query.reference_model, query.lora_rank, query.critic, query.expert_layout, loading)
    cost = exact_cost(query.weights, data.shape.held_per_active, data.interconnect, (gpus, env, offload, sp),
                      query.critic)
    return _with_rollout_caution(Plan(
        gpus=gpus,
        unused_gpus=0 if query.open_budget else query.budget_gpus - gpus,
        env=bool(env),
        offload=bool(offload),
        sp=sp,
        max_model_len=length,
        max_token_len_per_gpu=tokens,
        token_budget_cap=cap if capped else None,
        rope_scaling_factor=data.shape.yarn_factor(length),
        yarn_beyond_validated=data.shape.yarn_beyond_validated(length),
        past_validated_length=past_validated(data.shape, length),
        cost=float(cost),
        gpu_hours=float(gpus * cost) if query.objective == "min_gpu_hours" else None,
        evidence=evidence,
        source=source,
        **_memory_figures(data.shape, gpu, query, gpus, setting, length, tokens, estimated=source is None),
        host_memory_gb=host_need if offload or query.critic in HOST_HELD_CRITICS or query.host_ram_gb is not None
        or exceeds_assumed_host_ram(host_need, gpu, trainer_gpus_on_node(gpus, query.node_gpus),
                                    query.node_gpus if query.node_gpus_given else None) else None,
        host_critic_gb=host_critic_gib(data.shape, gpus, query.node_gpus, query.critic, query.expert_layout,
                                       query.trinity_version) or None,
        host_training_gb=shown_training_host_need(data.shape, gpus, query.node_gpus, bool(offload),
                                                  query.trinity_version, query.reference_model, query.lora_rank,
                                                  query.critic, query.expert_layout, loading),
        model_loading=model_loaders(loading, data.shape.tied_embeddings),
        compute_capability=gpu.compute_capability,
        reference_model=query.reference_model,
        lora_rank=query.lora_rank,
        lora_target_modules=None if query.lora_targets is None else query.lora_targets.pattern,
        lora_exclude_modules=None if query.lora_targets is None else query.lora_targets.excluded,
        config_lora=query.config_lora,
        config_adapter=query.config_adapter,
        dpo=query.dpo,
        mode_train=query.mode_train,
        critic=query.critic,
        expert_layout=query.expert_layout,
        trinity_version=query.trinity_release,
        experts_counted=None if data.shape.moe is None else expert_layout_words(data.shape, query.expert_layout,
                                                                                query.lora_rank),
        trainer_nodes=trainer_nodes_of(gpus, query.node_gpus),
        nodes=layout[0] if layout else None,
        rollout_gpus=layout[1] if layout else None,
    ).with_cautions(data.shape, gpu, _margin_room(query, gpu, setting, data.shape), query.train_batch_size,
                    query.train_batch_source, query.trinity_version, query.unchecked_host_ram, query.node_gpus,
                    query.option_names, query.node_gpus_given, _fits_without_sp(catalog, query, gpu, sp, length),
                    query.dpo, query.batch_divisor), data.shape, gpu, query)


def _with_rollout_caution(plan: Plan, model: Model, gpu: GpuType, query: Query) -> Plan:
    """`plan` (of `model` on `gpu`, for `query`) with the caution that its rollout GPUs' engines cannot hold the model
    (`rollout_unheld_caution`), where they cannot: after `Plan.with_cautions`, which gives the others."""
    caution = rollout_unheld_caution(model, gpu, plan.rollout_gpus, plan.max_model_len, query.node_gpus,
                                     plan.lora_rank)
    return plan if caution is None else plan.with_caution(caution)


def _fits_without_sp(catalog: Catalog, query: Query, gpu: GpuType, sp: int, length: int) -> WithoutSp:
    """For a plan of `query` with SP degree `sp` at `length` tokens on `gpu`, a GPU type whose GPUs reach one another
    over PCIe alone: whether the same question with SP 1 pinned (the cheapest plan at that length) has a plan, as one
    more solve proves it, and where it has none at Trinity's default token budget, whether --token-budget auto gives
    one (``lowered``: `_changed`); None where a solve leaves it open, and for any other plan (the SP-over-PCIe
    caution, which names SP 1 only where it fits, is not said)."""
    if sp == 1 or gpu.interconnect != "pcie":
        return None
    question = query.model_copy(update={"sp": 1, "objective": "cheapest", "max_model_len": length, "top": 1})
    asked = _SP_ONE_FITS.get()
    if asked is not None and (gpu.name, question) in asked:
        return asked[gpu.name, question]
    without_sp = answer_for(catalog, question, gpu.name, explained=False)
    fits: WithoutSp = None if without_sp.status == "unknown" else without_sp.best is not None
    lowered = _changed(question, "token_budget_auto", catalog.model(query.model)) if fits is False else None
    if lowered is not None:
        with_auto = answer_for(catalog, lowered, gpu.name, explained=False)
        fits = None if with_auto.status == "unknown" else "lowered" if with_auto.best is not None else False
    if asked is not None:
        asked[gpu.name, question] = fits
    return fits


def _memory_figures(shape: Model, gpu: GpuType, query: Query, gpus: int, setting: Setting, length: int,
                    tokens: int, estimated: bool, states_gpus: tuple[int, int] | None = None,
                    critic_at: tuple[int, int] | None = None) -> dict[str, Any]:
    """A plan's memory model figures on `gpu` at a budget of `tokens` per GPU (the tokens it counts:
    `solver.rules.counted_tokens`): peak and headroom (an estimate's against the margin estimates are held to,
    `Query.margin_on`), what that margin keeps back beside it, and for an estimate where it lies beyond the
    calibration; the actor's states and the critic's sharded over `states_gpus` (a config's hybrid ``fsdp_size``
    groups) where given, else over the `gpus`; the critic's own update at `critic_at`'s SP, its budget raised there to
    its tokens (a config's verdict's count, `solver.memory.breakdown`'s ``critic_sp`` and ``critic_raised``), where
    given."""
    margin = query.margin_on(gpu.memory_gib, estimated)
    states, critic_gpus = (gpus, None) if states_gpus is None else states_gpus
    critic_sp, critic_raised = (None, None) if critic_at is None else critic_at
    memory = breakdown(shape, gpu.memory_gib, states, setting, length, query.memory.coefficients, margin, tokens,
                       query.lora_rank, query.critic, query.dpo, query.expert_layout, critic_sp, critic_gpus,
                       critic_raised)
    beyond = (beyond_calibration(query.memory.fit.range, shape, gpu.memory_gib, gpus, setting, memory.tokens_per_gpu,
                                 query.node_gpus, gpu.rocm, query.expert_layout, query.lora_rank)
              if estimated else ())
    return {"memory_gb": memory.total_gib, "headroom_gb": memory.headroom_gib,
            "margin_gb": memory.margin_kept_gib(margin),
            "headroom_at_step": memory.step_binds, "headroom_at_critic_pass": memory.critic_pass_binds,
            "critic_pass_gb": None if query.critic is None else memory.critic_pass_gib,
            **beyond_fields(beyond)}


def at_token_budget(catalog: Catalog, query: Query, gpu: str, plan: Plan, tokens: int,
                    states_gpus: tuple[int, int] | None = None, critic_at: tuple[int, int] | None = None) -> Plan:
    """`plan` of `query` on `gpu` with `tokens` per GPU instead of its own budget (a config's own), its memory
    figures at that budget, with the actor's states and the critic's over `states_gpus` where given (a config's
    hybrid ``fsdp_size`` groups, as its verdict counts them), else over the plan's GPUs, and the critic's own update
    at `critic_at`'s SP and raised budget where given (as a config's verdict counts it: `_memory_figures`)."""
    model, gpu_type = catalog.model(query.model), catalog.gpu(gpu)
    figures = _memory_figures(model, gpu_type, query, plan.gpus, plan.setting, plan.max_model_len, tokens,
                              estimated=plan.source is None, states_gpus=states_gpus, critic_at=critic_at)
    return _with_rollout_caution(plan.model_copy(update={"max_token_len_per_gpu": tokens, **figures}).with_cautions(
        model, gpu_type, _margin_room(query, gpu_type, plan.setting, model), query.train_batch_size,
        query.train_batch_source, query.trinity_version, query.unchecked_host_ram, query.node_gpus, query.option_names,
        query.node_gpus_given, _fits_without_sp(catalog, query, gpu_type, plan.sp, plan.max_model_len),
        dpo=query.dpo, batch_divisor=query.batch_divisor), model, gpu_type, query)


def _margin_room(query: Query, gpu: GpuType, setting: Setting, model: Model) -> MarginRoom:
    """The margin `query`'s estimates of `model` with `setting` on `gpu` are held to, as `Plan.with_cautions` weighs
    it."""
    return margin_room(query.memory, query.margin_on(gpu.memory_gib), gpu.memory_gib, setting, model)


def _uncounted(data: PlanningData, query: Query) -> str:
    """Why no plan considers exactly the budget's GPU count, a count the whole-nodes and rollout rules allow: past
    the estimates' counts, estimates off, or else none of the memory model's estimates on it fits (within the
    tables' limits, where there are tables to cap them: `within_refuting_tables`)."""
    if query.budget_gpus > MAX_ESTIMATED_GPUS:
        return f"; estimated plans go up to {MAX_ESTIMATED_GPUS} trainer GPUs"  # tables may vouch for more
    if query.estimate == "never":
        return f"; other counts need estimates, which {query.option_names.no_estimate} turns off"
    capped = " within what the tables allow" if data.columns or data.larger else ""
    return f"; the memory model estimates that nothing fits on {counted(query.budget_gpus, 'GPU')}{capped}"


def _free_for_rollout(query: Query, gpus: int) -> str:
    """The exact budget's GPUs that a plan on `gpus` of them leaves free for the rollout, in words: ``, the other 4
    free for rollout``; where the rollout's GPUs come from a config's explorer or a job's (`Query.rollout_source`),
    which the budget follows, with the rollout they then make: ``(then 8 GPUs in the config's explorer)``."""
    free = query.budget_gpus - gpus
    then = "" if query.rollout_source is None or query.rollout_gpus is None else (
        f" (then {counted(query.rollout_gpus + free, 'GPU')} in {query.rollout_source})")
    return f", the other {free} free for rollout{then}"


def _fewer_gpus_words(catalog: Catalog, data: PlanningData, query: Query, nearby: _Nearby) -> ReasonWords:
    """For an exact GPU count: the cheapest plan at the same length on fewer GPUs, in words ("" when none,
    and when maximising the length; `nearby`'s `asked` answer where it is that question)."""
    if not query.exact or query.max_model_len is None:
        return ReasonWords()
    within = query.model_copy(update={"exact": False, "top": 1})
    fewer = nearby.asked_answer(within)
    if fewer is None:
        fewer = answer_for(catalog, within, data.gpu, explained=False, asked=nearby.wider(within))
    if not fewer.plans:
        return ReasonWords()
    plan = fewer.plans[0]
    return (f"; fewer trainer GPUs train {counted(query.max_model_len, 'token')}: {plan.setting.label} on "
            f"{counted(plan.gpus, 'GPU')}{plan.lowered_words} (" + plan.evidence_cautioned
            + ")" + _free_for_rollout(query, plan.gpus))


SOFT_LIMITS: Mapping[str, str] = MappingProxyType({
    "pin_sp": "sp", "pin_env": "env", "pin_offload": "offload", "host_ram": "host_ram_gb",
    "batch_divides": "train_batch_size", "rollout_layout": "rollout_gpus"})
"""The rules of a query's own limits that the nearest plan may lift (`nearest_plan`), each with the query's field
that sets the limit (None lifts it)."""
LIFT_WEIGHTS: Mapping[str, int] = MappingProxyType({"estimate": 1, "token_budget": 2, "budget": 5, "rollout_layout": 8})
"""What lifting a limit costs the nearest plan: an estimate under --no-estimate least (the tables' plan where one is
as near); a lowered token budget (the planner's own knob) next; each of the query's pins, host memory and train batch
`USER_LIMIT_WEIGHT`; more GPUs more than one of those, less than it with a lowered budget (a reason names the pins' or
host memory's plan before more GPUs, and more GPUs before both a lowered budget and no pins); the rollout's GPUs as
much as two limits (a rollout needs them)."""
USER_LIMIT_WEIGHT = 4


def nearest_plan(catalog: Catalog, data: PlanningData, query: Query) -> tuple[Plan, frozenset[str]] | None:
    """The nearest plan of `query` (which has none; `data`: its prepared data) in one solve, and the limits it lifts:
    each of the query's limits (its `SOFT_LIMITS`, the budget up to `more_gpus_changes`' count, Trinity's default
    token budget where `_may_lower_budget`) holds unless a literal lifts it, the model minimising the lifts'
    `LIFT_WEIGHTS`, then past the budget the fewest GPUs, then the objective (maximising the length, the longest,
    then the rank: the plan the planner gives at that count). An exact count is none: the question is the nearest
    count. Where `data` was prepared without estimates (--no-estimate) and `query` asks with them, an estimated plan
    lifts --no-estimate ("estimate"). None where nothing trains it; `Undecided` where the time limit left that open."""
    lowering = _may_lower_budget(query, data.shape)
    wide = query.model_copy(update={**more_gpus_changes(data), "objective": query.objective, "top": 1,
                                    "token_budget": "auto" if lowering else query.token_budget})
    # Under --no-env the estimates are those without Env (`estimates_setting`): lifting it, only cells vouch for Env.
    wide_data = prepare(catalog, data.gpu, wide)
    if wide_data.holds_no_plan(wide):
        return None
    model, variables, lifts = _lifts_model(data, query, wide, wide_data)
    solver = new_solver(query)
    # Proving the fewest lifts pays for presolve, as an explanation's guarded model does: it made these solves
    # five to fifty times faster (0.1 s rather than 1 to 7 s).
    solver.parameters.cp_model_presolve = True
    # But its further rounds, its search for overlapping big linear constraints and SAT inprocessing cost more than
    # they save: without them the nearest plans of the tests' no-plan answers took a third less CPU time. The search
    # does not change which plan is nearest: the objective tells any two plans apart, and a plan's lifts are the
    # fewest it needs (the rules it breaks; an estimate, and a lowered budget, only where no cell vouches for it).
    solver.parameters.max_presolve_iterations = 1
    solver.parameters.find_big_linear_overlap = False
    solver.parameters.use_sat_inprocessing = False
    solver.parameters.max_time_in_seconds = query.time_limit_s
    status = _solved(solver, model)
    if status == cp_model.INFEASIBLE:
        return None
    if status != cp_model.OPTIMAL:
        raise Undecided(f"no nearest plan proven within the time limit of {time_limit_words(query)}")
    lifted = frozenset(name for name, literal in lifts.items() if solver.boolean_value(literal))
    changes = {SOFT_LIMITS[name]: None for name in lifted & SOFT_LIMITS.keys()}
    token_budget = "auto" if "token_budget" in lifted else query.token_budget  # a lowered one the query's own too
    changed = wide.model_copy(update={**changes, "token_budget": token_budget})
    values = [solver.value(variable) for variable in variables.plan]
    return _plan(catalog, wide_data, changed, values, estimated=bool(solver.value(variables.estimated))), lifted


def _lifts_model(data: PlanningData, query: Query, wide: Query,
                 wide_data: PlanningData) -> tuple[cp_model.CpModel, PlanVariables, Mapping[str, cp_model.LiteralT]]:
    """`nearest_plan`'s model of the `wide` query (`wide_data`: its prepared data) and its lifts, each a literal by
    its name: one per limit of `query` it may lift, the budget, --no-estimate where `data` was prepared without
    estimates, and Trinity's default token budget where `_may_lower_budget` (the estimates that reach the length at
    it: `wide_data`'s, prepared with lowered budgets, keep each one's longest at the default)."""
    model, variables, guards = build_model(wide_data, wide, guarded=True)
    lifts = {rule: guards[rule].Not() for rule, field in SOFT_LIMITS.items() if getattr(query, field) is not None}
    model.add_bool_and([guard for rule, guard in guards.items() if rule not in lifts])
    lifts["budget"] = add_lifted_budget(model, variables, query.budget_gpus)
    if data.inputs.estimate == "never" and query.estimate != "never":
        lifts["estimate"] = variables.estimated
    if _may_lower_budget(query, data.shape) and (asked := query.max_model_len) is not None:
        lifts["token_budget"] = add_lifted_token_budget(
            model, variables, [combination for combination, longest in wide_data.estimate_longest.items()
                               if longest >= asked])
    minimize_lifts(model, wide_data, wide, variables,
                   [(literal, LIFT_WEIGHTS.get(name, USER_LIMIT_WEIGHT)) for name, literal in lifts.items()],
                   more_gpus=lifts["budget"])
    return model, variables, lifts


class _Nearest(NamedTuple):
    """A nearest plan (`nearest_plan`), the limits it lifts, and the GPUs per node it takes (`_nearest_on_nodes`)."""

    plan: Plan
    lifted: frozenset[str]
    node_gpus: int

    def nodes_words(self, query: Query, named: bool = False) -> str:
        """Where the plan takes other nodes than `query`'s, larger ones or, where its host memory is hardware, ones with
        more of it, or, where `query.count_nodes` or its node size is given (`Query.node_gpus_given`), more GPUs than
        one of `query`'s nodes: those, in words, with how many it takes in the last case (the trainer's, and the
        rollout's where the plan keeps its layout: ``on 2 nodes of 8 GPUs with more host memory than the pool's 32 GiB,
        ``, ``on nodes of 16 GPUs (--node-gpus), ``: other nodes than the query's named with the option that gives
        them; the figure left out where the words before have `named` the host memory:
        `Query.more_host_ram_words`); "" otherwise."""
        layout = (rollout_layout(self.plan.gpus, query.rollout_gpus, self.node_gpus)
                  if query.rollout_gpus and "rollout_layout" not in self.lifted else None)
        nodes = layout[0] if layout else -(-self.plan.gpus // self.node_gpus)
        spans = (query.count_nodes or query.node_gpus_given) and nodes > 1
        larger = self.node_gpus != query.node_gpus  # nodes larger than the query's: named with the option giving them
        size = (f" of {counted(self.node_gpus, 'GPU')}{f' ({query.option_names.node_gpus})' if larger else ''}"
                if larger or spans else "")
        more = query.more_host_ram_words(named)
        host = f" {more}" if "host_ram" in self.lifted and more else ""
        return f"on {counted(nodes, 'node') if spans else 'nodes'}{size}{host}, " if size or host else ""

    def lift_words(self, query: Query) -> str:
        """The changes to `query` that lift its limits the plan lifts, but more GPUs and host memory that is hardware
        (`nodes_words`), in words: ``drop --no-estimate and --sp 1 --host-ram 32 GiB and add --token-budget auto`` (the
        API's ``drop estimate="never" and sp=1, host_ram_gb=32 and add token_budget="auto"``: `Query.option_names`)."""
        lifted, names = self.lifted, query.option_names
        rollout = query.rollout_limit if "rollout_layout" in lifted else ("", True)
        flags = query.options_then_words((
            (query.model_copy(update={pin: getattr(query, pin) if f"pin_{pin}" in lifted else None
                                      for pin in ("sp", "env", "offload")}).pin_flags, True),
            (query.host_ram_limit_words if "host_ram" in lifted and not query.more_host_ram_words() else "", True),
            rollout))
        drops = " and ".join(filter(None, (names.no_estimate if "estimate" in lifted else "", flags)))
        batch = dividing_batch_words(self.plan.gpus, self.plan.sp, query.batch_divisor == "gpus",
                                     query.train_batch_size, query.batch_set_at, query.pair_batch)
        return " and ".join(filter(None, (
            drops and f"drop {drops}", f"add {names.token_budget_auto}" if "token_budget" in lifted else "",
            f"take {batch}" if "batch_divides" in lifted else "")))

    def host_words(self, model: Model, query: Query) -> str:
        """Where the plan lifts the query's host memory: the host memory per node it needs as `query` counts it
        (`_shown_host_need`), in words (``, and with Offload it needs ...``); "" otherwise."""
        return (f", and {_host_need_words(model, self.node_gpus, self.plan, query)}" if "host_ram" in self.lifted
                else "")


def _nearest_on_nodes(catalog: Catalog, data: PlanningData, query: Query) -> _Nearest | None:
    """`nearest_plan` of `query`, and the GPUs per node it takes: the query's; where it has none there and the node
    size is the default (not `Query.node_gpus_given`), the nearest plan on nodes of `MAX_NODE_GPUS`, whose SP=16 groups
    reach lengths nodes of 8 cannot. A node size given is hardware, no limit to lift: whole nodes, SP within a node,
    the rollout's layout and host memory per node depend on it, so more GPUs are more nodes of that size. None where
    none trains; `Undecided` where the time limit left that open."""
    def on_nodes(node_gpus: int) -> _Nearest | None:
        found = nearest_plan(catalog, data, query.model_copy(update={"node_gpus": node_gpus}))
        return None if found is None else _Nearest(*found, node_gpus)

    nearest = on_nodes(query.node_gpus)
    if nearest is not None or query.node_gpus_given or query.node_gpus >= MAX_NODE_GPUS:
        return nearest
    return on_nodes(MAX_NODE_GPUS)


def _no_nearest_words(catalog: Catalog, query: Query, no_estimate: bool = False) -> str:
    """Where no count of the nodes `query` gives (`Query.node_gpus_given`) trains it, with every limit the nearest
    plan may lift lifted (`nearest_plan`; --no-estimate too where `no_estimate`): that, in words, and the SP their size
    holds (``; no count of nodes of 2 GPUs (--node-gpus) trains it, even without --host-ram 48 GiB: an SP group stays
    within one node, so SP=2 at most``); "" for the default node size (the nearest plan's search goes on to larger
    nodes)."""
    if not query.node_gpus_given:
        return ""
    node_gpus, more_host, names = query.node_gpus, query.more_host_ram_words(), query.option_names
    dropped = query.options_then_words((
        (names.no_estimate if no_estimate else "", True), (query.pin_flags, True),
        ("", False) if more_host else query.host_ram_limit, query.batch_limit, query.rollout_limit))
    lowered = f"with {names.token_budget_auto}" if _may_lower_budget(query, catalog.model(query.model)) else ""
    lifted = [dropped and f"without {dropped}", more_host, lowered]
    even = f", even {' and '.join(filter(None, lifted))}" if any(lifted) else ""
    largest = max(sp_degrees_within(catalog.model(query.model), node_gpus, node_gpus))
    within = f"SP={largest} at most" if largest > 1 else "no SP"
    return (f"; no count of nodes of {counted(node_gpus, 'GPU')} ({query.node_source}) trains it{even}: an SP group "
            f"stays within one node, so {within}")


def _nearest_words(catalog: Catalog, data: PlanningData, query: Query, named: bool = False) -> ReasonWords:
    """The nearest plan of `query`, which has none (`_nearest_on_nodes`), and the changes it takes, in words: ``; more
    trainer GPUs train 65536 tokens if you also drop --host-ram 32: Env + SP=8 on 16 GPUs (estimated), and ...``,
    ``; on nodes of 8 GPUs, 131072 tokens trains: ...``; where the nodes given have none, that (`_no_nearest_words`;
    not under --no-estimate, whose estimates' search says it: `_with_estimated_plan`); "" when none otherwise, and
    for an exact count when maximising the length: which count's longest is nearest is no question of lifts;
    `named`: the words before name the query's limits (`_Nearest.nodes_words`)."""
    if query.exact and query.max_model_len is None:
        return ReasonWords()
    try:
        nearest = _nearest_on_nodes(catalog, data, query)
    except Undecided:
        return ReasonWords()
    if nearest is None:
        return ReasonWords("" if data.inputs.estimate == "never" else _no_nearest_words(catalog, query))
    plan = nearest.plan
    changes = nearest.lift_words(query)
    fewer = query.exact and plan.gpus < query.budget_gpus
    head = "more trainer GPUs" if "budget" in nearest.lifted else "fewer trainer GPUs" if fewer else ""
    condition = f" if you {'also ' if head else ''}{changes}" if changes else ""
    if query.max_model_len is None:
        said = f"{head or 'there is'} {'have ' if head else ''}a plan{condition}"
    else:
        tokens = counted(query.max_model_len, "token")
        said = f"{head + ' train' if head else ''} {tokens}{'' if head else ' trains'}{condition}"
    at_length = f" at {counted(plan.max_model_len, 'token')}" if query.max_model_len is None else ""
    free = _free_for_rollout(query, plan.gpus) if fewer else ""
    return (f"; {nearest.nodes_words(query, named)}{said.strip()}: {plan.setting.label} on {counted(plan.gpus, 'GPU')}"
            f"{at_length}{plan.lowered_words} (" + plan.evidence_cautioned + f"){free}"
            + nearest.host_words(data.shape, query))


def _changed(query: Query, name: AlternativeName, model: Model) -> Query | None:
    """`query` changed one way (`Alternatives`): with --token-budget auto where that may lower a budget of `model`
    (asking for the longest length, maximised, as well), or without the pins where it has some; None where it cannot
    be changed so."""
    if name == "token_budget_auto":
        return query.model_copy(update={"token_budget": "auto", "top": 1}) if _may_lower_budget(query, model) else None
    if name == "token_budget_auto_longest":
        return query.model_copy(update={"token_budget": "auto", "objective": "max_len", "max_model_len": None,
                                        "top": 1}) if _may_lower_budget(query, model) else None
    return _unpinned(query, top=1) if query.pin_flags else None


def _unpinned(query: Query, **changes: object) -> Query:
    """`query` with none of its settings pinned (`Query.pins`), changed further as `changes` say."""
    return query.model_copy(update={**dict.fromkeys(Pins.model_fields, None), **changes})


class _Nearby:
    """The best plans on one GPU type of an infeasible query changed one way, each solved when its reason
    asks for it (`solved` records them for the explanation)."""

    def __init__(self, catalog: Catalog, query: Query, gpu: str, asked: tuple[_Asked, ...] = ()) -> None:
        self.catalog, self.query, self.gpu, self.asked = catalog, query, gpu, asked
        self.found: dict[AlternativeName, Plan | None] = {}
        self.undecided: set[AlternativeName] = set()

    def plan(self, name: AlternativeName) -> Plan | None:
        """The best plan changed as `name` says (solved once, however often a reason asks; not at all where one of
        `asked` is that question)."""
        if name in self.found:
            return self.found[name]
        changed = _changed(self.query, name, self.catalog.model(self.query.model))
        if changed is not None and (asked := self.asked_answer(changed)) is not None:
            best, decided = asked.best, asked.decided
        else:
            best, decided = (None, True) if changed is None else _alternative_best(self.catalog, self.query, changed,
                                                                                   name, self.gpu, self.wider(changed))
        self.found[name] = best
        if not decided:
            self.undecided.add(name)
        return best

    def asked_answer(self, question: Query) -> Answer | None:
        """The answer (unexplained) of the question of `asked` that is `question`; None where none is."""
        return _asked_answer(self.asked, question)

    def wider(self, question: Query) -> tuple[_Asked, ...]:
        """Those of `asked` whose question is `question` without its pins (`_unpinned_question`): its plans and more,
        of the same data where it was asked (`_unpinned_first`), for `answer_for`'s `asked`."""
        return tuple(asked for asked in self.asked if asked.query == _unpinned_question(question))

    def solved(self) -> Alternatives:
        """The plans solved so far, and which of them were decided, for the answer's `alternatives`."""
        return Alternatives(**self.found, solved=frozenset(self.found.keys() - self.undecided))


def alternative_plan(catalog: Catalog, query: Query, answer: Answer, name: AlternativeName,
                     time_limit_s: float) -> tuple[Plan | None, bool]:
    """The best plan of `query` (`answer`'s, which has none) changed as `name` says: as its reason solved it,
    else solved now within `time_limit_s`; and whether that was decided in time."""
    if answer.alternatives is not None and name in answer.alternatives.solved:
        return getattr(answer.alternatives, name), True
    changed = _changed(query, name, catalog.model(query.model))
    if changed is None:
        return None, True
    return _alternative_best(catalog, query, changed.model_copy(update={"time_limit_s": time_limit_s}), name,
                             answer.gpu)


def _alternative_best(catalog: Catalog, query: Query, changed: Query, name: AlternativeName,
                      gpu: str, asked: tuple[_Asked, ...] = ()) -> tuple[Plan | None, bool]:
    """The best plan of `changed` (`query` changed as `name` says) on `gpu`, and whether that was decided (`asked`:
    questions wider than `changed` asked before, as `answer_for` takes them); for the longest at a lowered budget, on
    the fewest GPUs at its length where `query` minimises them (`_fewest_at_length`), as the query's own longest is."""
    found = answer_for(catalog, changed, gpu, explained=False, asked=asked)
    if found.best is None or name != "token_budget_auto_longest":
        return found.best, found.decided
    as_asked = changed.model_copy(update={"objective": query.objective})
    return _fewest_at_length(catalog, as_asked, gpu, found.best), found.decided


def _fewest_at_length(catalog: Catalog, query: Query, gpu: str, longest: Plan) -> Plan:
    """`longest`, the longest plan of `query` (maximising the length ranks its plans by cost), or, where `query`
    minimises GPUs or GPU-hours, the plan with the fewest GPUs (or GPU-hours) at its length (the longest's are the
    cheapest)."""
    if query.objective not in CHOOSES_COUNT:
        return longest
    at_length = query.model_copy(update={"max_model_len": longest.max_model_len, "top": 1})
    return optional_best(catalog, at_length, gpu) or longest


def _may_lower_budget(query: Query, model: Model) -> bool:
    """Whether --token-budget auto may train what `query` asks of `model` and does not get: a length at Trinity's
    default token budget, with estimates (the budgets it lowers are theirs), of a model that reads a budget
    (`lowers_budget`), not for DPO, whose actor's update runs with dynamic batch sizes off and reads none
    (`solver.query.check_dpo_budget_unread`)."""
    return (query.token_budget == "default" and query.estimate != "never" and query.max_model_len is not None
            and not query.dpo and lowers_budget("auto", model))


class _NoPlanReason(NamedTuple):
    """Why a query has no plan (`code` and `text`); the longest plan within its budget and pins where only the length
    is out of reach (`nearest`); and whether `text` names the query's limits (`Query.limit_flags`) in full."""

    code: ReasonCode
    text: ReasonWords
    nearest: Plan | None = None
    limits_named: bool = False


def _no_plan_reason(catalog: Catalog, data: PlanningData, query: Query, nearby: _Nearby) -> _NoPlanReason:
    """Name the limit that leaves `query` without a plan on this GPU type, found by solving again (and from
    the plans `nearby`), naming the PPO critic it counts; and, when only the length is out of reach, the longest plan
    within the same budget and pins."""
    where = f"{data.model}{query.critic_words} on {data.gpu}"
    if query.exact and (exact := _exact_count_reason(catalog, data, query, where, nearby)):
        return _NoPlanReason(ReasonCode.EXACT_COUNT_HAS_NO_PLAN, exact)
    if min(data.counts) > query.budget_gpus:
        return _NoPlanReason(ReasonCode.BUDGET_BELOW_SMALLEST_COUNT,
                             ReasonWords(f"no plan for {query.budget_gpus} or fewer trainer GPUs with {where} "
                                         f"({_counts_words(data)})"))
    if rollout := _rollout_layout_reason(catalog, data, query, where):
        return _NoPlanReason(ReasonCode.ROLLOUT_LEAVES_NO_LAYOUT, rollout)
    if query.objective != "max_len" and (beyond := _beyond_length_reason(catalog, data, query, nearby, where)):
        return beyond
    sources, within, limits = query.evidence_sources, query.within_budget, query.limit_flags
    trains = f"trains{' with ' + limits if limits else ''}"
    named = bool(limits)
    pins, lifted = (_without_pins(catalog, data, query, nearby),
                    _lifted_limits_words(catalog, data, query, nearby, named))
    # The longest without the pins is a shorter length, no way forward: the fewest GPUs past the budget may be one.
    way = bool(lifted.words) or bool(query.pin_flags and nearby.plan("without_pins") is not None)
    # The default budget reaches none.
    reach = ReasonWords() if lifted.lowered_named else _lower_budget_reach_words(query, nearby, 0)
    return _NoPlanReason(ReasonCode.NOTHING_TRAINS,
                         f"nothing in {sources} for {where} {within} {trains}" + pins + lifted.words
                         + (ReasonWords() if way else _nearest_words(catalog, data, query, named)) + reach,
                         limits_named=named)


def _counts_words(data: PlanningData) -> str:
    """The GPU counts with a plan at some length, in words: ``counts with a plan at some length: 1, 2, 4``."""
    return "counts with a plan at some length: " + ", ".join(map(str, data.counts))


def _exact_count_reason(catalog: Catalog, data: PlanningData, query: Query, where: str,
                        nearby: _Nearby) -> ReasonWords:
    """Why no plan takes `query`'s exact GPU count (no plan `where` says): the count's layout on the nodes, or no
    plan at it at any length; with the plan on fewer GPUs (`_fewer_gpus_words`, of `nearby`), else the nearest plan
    ("" where neither stops it)."""
    spread = (whole_nodes_violation(query.budget_gpus, query.node_gpus, query.node_source)
              or rollout_layout_violation(query.budget_gpus, query.rollout_gpus, query.node_gpus, query.rollout_named))
    exactly = f"no plan for exactly {counted(query.budget_gpus, 'trainer GPU')} with {where}"
    if spread:
        head = f"{exactly}: {spread}"
    elif query.budget_gpus not in data.counts:
        head = f"{exactly} ({_counts_words(data)}){_uncounted(data, query)}"
    else:
        return ReasonWords()
    return head + (_fewer_gpus_words(catalog, data, query, nearby) or _nearest_words(catalog, data, query))


def _rollout_layout_reason(catalog: Catalog, data: PlanningData, query: Query, where: str) -> ReasonWords:
    """Where the rollout's GPUs (--rollout-gpus) rule out every count within `query`'s budget that a trainer may take
    whole-node-wise: that, with the nearest plan ("" where they do not, and where no count is left: the rollout is
    then not what stops a plan)."""
    laid_out = [n for n in data.counts if n <= query.budget_gpus
                and not whole_nodes_violation(n, query.node_gpus, query.node_source)]
    if not (query.rollout_gpus and laid_out and all(rollout_layout_violation(n, query.rollout_gpus, query.node_gpus)
                                                    for n in laid_out)):
        return ReasonWords()
    return (f"no plan for {query.budget_gpus} or fewer trainer GPUs with {where}: none of them leaves the "
            f"{counted(query.rollout_gpus, 'rollout GPU')} ({query.rollout_named}) "
            f"room on nodes of {query.node_gpus}, "
            "in the trainer's node, filling it and whole nodes more, or on nodes of their own beside a trainer on "
            "whole nodes" + _nearest_words(catalog, data, query))


def _beyond_length_reason(catalog: Catalog, data: PlanningData, query: Query, nearby: _Nearby,
                          where: str) -> _NoPlanReason | None:
    """For `query`'s length, which no plan trains: that it is beyond what the tables allow, with the longest plan
    within the same budget and pins (and that plan), or that a shorter length was left open by the time limit (each
    with its code); None where no length trains."""
    sources, within, limits = query.evidence_sources, query.within_budget, query.limit_flags
    longest = answer_for(catalog, query.model_copy(update={"objective": "max_len", "max_model_len": None, "top": 1}),
                         data.gpu, explained=False)
    if longest.status == "unknown":  # a shorter length may train: that much is open
        return _NoPlanReason(ReasonCode.SHORTER_LENGTH_UNDECIDED, ReasonWords(
            f"{counted(query.max_model_len or 0, 'token')} has no plan in {sources} for {where} {within}; whether a "
            f"shorter length has one was not decided within the time limit of {time_limit_words(query)}"))
    if not longest.plans:
        return None
    best = _fewest_at_length(catalog, query, data.gpu, longest.plans[0])
    limit, named = (f" with {limits}" if limits else ""), bool(limits)
    lifted = _lifted_limits_words(catalog, data, query, nearby, named)
    reach = ReasonWords() if lifted.lowered_named else _lower_budget_reach_words(query, nearby, best.max_model_len)
    return _NoPlanReason(ReasonCode.LENGTH_BEYOND_REACH,
                         f"{counted(query.max_model_len or 0, 'token')} is beyond what {sources} allow for {where} "
                         f"{within}{limit}: "
                         f"the longest is {best.max_model_len}{grid_words(best)} ({best.setting.label} on "
                         f"{counted(best.gpus, 'GPU')}{best.lowered_words}, " + best.evidence_cautioned + ")"
                         + (lifted.words + _node_cap_words(data, query) if lifted.words
                            else _nearest_words(catalog, data, query, named)) + reach, best, named)


def node_caps_sp(model: Model, query: Query) -> int | None:
    """The largest SP degree a node of `query`'s given size (`Query.node_gpus_given`) holds, where its heads and
    budget would allow a larger one on larger nodes (up to `MAX_NODE_GPUS`); None where the node is not what stops SP
    (a size not given, SP pinned, or no larger degree allowed)."""
    if not query.node_gpus_given or query.sp is not None or query.node_gpus >= MAX_NODE_GPUS:
        return None
    within = max(sp_degrees_within(model, query.budget_gpus, query.node_gpus))
    larger = max(sp_degrees_within(model, query.budget_gpus, MAX_NODE_GPUS))
    return within if larger > within else None


def _node_cap_words(data: PlanningData, query: Query) -> str:
    """Where the node size given caps SP (`node_caps_sp`), that, in `_no_nearest_words`' words (``; on nodes of 4
    GPUs (--node-gpus) an SP group stays within one node, so SP=4 at most``); "" otherwise. A node size given is
    hardware: no plan on larger nodes is named."""
    most = node_caps_sp(data.shape, query)
    return ("" if most is None else f"; on nodes of {counted(query.node_gpus, 'GPU')} ({query.node_source}) an SP "
            f"group stays within one node, so SP={most} at most")


class _LiftedLimits(NamedTuple):
    """What trains the asked length with one of a query's limits lifted, in words (`_lifted_limits_words`), and
    whether they name a plan at a lowered token budget that trains it (`_lower_budget_words`)."""

    words: ReasonWords
    lowered_named: bool


def _lifted_limits_words(catalog: Catalog, data: PlanningData, query: Query, nearby: _Nearby,
                         named: bool = False) -> _LiftedLimits:
    """What trains the asked length with one of `query`'s limits lifted, in words, each after a semicolon: without
    --host-ram, with a train batch its ranks divide, on fewer GPUs than an exact count, with a lowered token
    budget ("" where none does), and whether the last is said; `named`: the words before name the query's limits
    (`_host_need`)."""
    host, batch = _host_need(catalog, data, query, nearby, named), _batch_need(catalog, data, query)
    fewer = _fewer_gpus_words(catalog, data, query, nearby)
    lowered = _lower_budget_words(catalog, data, query, nearby, fewer_said=bool(fewer))
    return _LiftedLimits(host + batch + fewer + lowered, lowered_named=bool(lowered))


def grid_words(plan: Plan) -> str:
    """For the longest length of `plan`, after it: where maximising put an estimated one, in words: on the
    estimates' grid (a length asked with --len may lie up to a grid step past it), or, off the grid, where a table
    stops its estimate (`PlanningData.table_stops`, the only lengths off it); "" for a documented or inferred plan,
    whose longest length is a table's row."""
    if plan.evidence != "estimated":
        return ""
    return f" on the {GRID}-token grid" if plan.max_model_len % GRID == 0 else " where a table stops its estimate"


def _lower_budget_words(catalog: Catalog, data: PlanningData, query: Query, nearby: _Nearby,
                        fewer_said: bool = False) -> ReasonWords:
    """When a lowered token budget (``--token-budget auto``) trains the asked length: its plan, in words; for an
    exact count, on that count, else (unless `fewer_said`: fewer GPUs were named already) on fewer GPUs, said
    so. "" when it does not, when the query lowers budgets already or has no estimates, and when maximising
    the length."""
    lowered = nearby.plan("token_budget_auto")
    if lowered is None and query.exact and not fewer_said and _may_lower_budget(query, data.shape):
        lowered = optional_best(catalog, query.model_copy(update={"token_budget": "auto", "exact": False, "top": 1}),
                                data.gpu)
    if lowered is None or not lowered.lowered_budget:  # a plan at the default budget is not the lowered one's
        return ReasonWords()
    plan = _lowered_plan_words(lowered)
    if query.exact and lowered.gpus < query.budget_gpus:
        return (f"; with {query.option_names.token_budget_auto} fewer trainer GPUs train "
                f"{counted(query.max_model_len or 0, 'token')}: " + plan
                + _free_for_rollout(query, lowered.gpus))
    return f"; {query.option_names.token_budget_auto} trains {counted(query.max_model_len or 0, 'token')}: " + plan


def _lowered_plan_words(plan: Plan) -> ReasonWords:
    """A plan at a lowered token budget, in words: ``Env + SP=2 on 2 GPUs with max_token_len_per_gpu = 14848
    (estimated)``."""
    return (f"{plan.setting.label} on {counted(plan.gpus, 'GPU')} with max_token_len_per_gpu = "
            f"{plan.max_token_len_per_gpu} (" + plan.evidence_cautioned + ")")


def _lower_budget_reach_words(query: Query, nearby: _Nearby, longest: int) -> ReasonWords:
    """When a lowered token budget (``--token-budget auto``) does not train the asked length but reaches further
    than `longest` (the longest at Trinity's default budget, within the same budget and pins, 0 where none trains; on
    an exact count, on it): the longest it reaches and its plan, in words, which CP-SAT finds maximising the length.
    "" where it reaches no further, and where the query lowers budgets already or has no estimates. Asked only where
    `_lower_budget_words` named no plan: a lowered budget trains the asked length nowhere (a plan of
    ``token_budget_auto`` at the default budget would be the query's own, which has none)."""
    reach = nearby.plan("token_budget_auto_longest")
    if reach is None or reach.max_model_len <= longest:
        return ReasonWords()
    return (f"; {query.option_names.token_budget_auto} reaches {counted(reach.max_model_len, 'token')}"
            f"{grid_words(reach)}: " + _lowered_plan_words(reach))


def _without_pins(catalog: Catalog, data: PlanningData, query: Query, nearby: _Nearby) -> ReasonWords:
    """When the pins leave no plan at any length: what the same question gets without them, or else the longest
    length it gets, in words ("" when nothing, or no pins)."""
    if not query.pin_flags:
        return ReasonWords()
    best = nearby.plan("without_pins")  # maximising the length: the longest
    if query.objective != "max_len":
        if best is not None:
            return (f" (without {query.pin_flags}: {best.setting.label} on {counted(best.gpus, 'GPU')}"
                    f"{best.lowered_words} trains it, " + best.evidence_cautioned + ")")
        best = optional_best(catalog, _unpinned(query, top=1, objective="max_len", max_model_len=None), data.gpu)
    if best is None:
        return ReasonWords()
    return (f" (without {query.pin_flags} the longest is {best.max_model_len}{grid_words(best)}: "
            f"{best.setting.label} on {counted(best.gpus, 'GPU')}{best.lowered_words}, "
            + best.evidence_cautioned + ")")


def _host_need(catalog: Catalog, data: PlanningData, query: Query, nearby: _Nearby,
               named: bool = False) -> ReasonWords:
    """When --host-ram is what rules the plans out (without it one exists): the plan without it, and the host
    memory per node it needs, in words, with the least a plan needs where that is less; where the pins rule out
    the plans without it and it those without them, the plan without both (nothing where the pins alone rule them
    out: the nearest plan's words name them); else where Trinity's default token budget rules them out too (a
    lowered one alone trains nothing), the plan without it at a lowered one (``--token-budget auto``); "" otherwise.
    `named`: the words before name the query's host memory (`Query.without_host_ram_words`)."""
    if query.host_ram_gb is None:
        return ReasonWords()
    unlimited = query.model_copy(update={"host_ram_gb": None, "top": 1})
    lifted = nearby.asked_answer(_more_host_ram_question(query))
    if lifted is None or not _lifts_every_need(data, query):
        lifted = answer_for(catalog, unlimited, data.gpu, explained=False)
    best = lifted.best
    if best is not None:
        return (f"; {query.without_host_ram_words(named)}, "
                + _host_words(data.shape, query.node_gpus, best, query)
                + least_host_words(catalog, unlimited, best, data.gpu)
                + _lifting_release_words(catalog, data, query)
                + _lifting_critic_words(catalog, data, query))
    if query.pin_flags:
        if nearby.plan("without_pins") is not None:  # the question the pins' own words ask: solved once
            return ReasonWords()  # the pins alone rule the plans out: the nearest plan's words name them
        best = answer_for(catalog, _unpinned(unlimited), data.gpu, explained=False).best
        if best is not None:
            return (f"; without {query.pin_flags} and {query.host_ram_source}, "
                    + _host_words(data.shape, query.node_gpus, best, query))
    # lowering alone trains it where token_budget_auto has a plan
    if not _may_lower_budget(query, data.shape) or nearby.plan("token_budget_auto") is not None:
        return ReasonWords()
    lowered = unlimited.model_copy(update={"token_budget": "auto"})
    best = answer_for(catalog, lowered, data.gpu, explained=False).best
    if best is None or not best.lowered_budget:
        return ReasonWords()
    return (f"; {query.without_host_ram_words(named)} and with {query.option_names.token_budget_auto}, "
            + _host_words(data.shape, query.node_gpus, best, query))


def _lifting_release_words(catalog: Catalog, data: PlanningData, query: Query) -> ReasonWords:
    """Where `query` names no Trinity release (or a minor version without its patch) and some release counts less host
    memory per node, so that it holds a GPU count the count for none (or that minor version's) does not
    (`_lifting_releases`): the first such release asked whose question has a plan,
    why it counts less (`lower_host_count_clause`), that plan and its host need, and the other releases that lift the
    limit, in words:
    ``; with --trinity-version 0.5.1, whose rank 0 alone loads the model and whose verl 0.7 builds the reference model
    in bf16 and places the pinned blocks, Env + Offload + SP=4 on 12 GPUs trains it (28672 tokens), and with Offload
    it needs 61.2 GiB of host memory per node; 0.5.0 counts less host memory too, enough for that plan; 0.5.2 counts
    less too, but not enough for that plan`` (`_other_releases_words`); "" otherwise."""
    lifting = _lifting_releases(data, query)
    for release, named in lifting.asked:
        best = answer_for(catalog, named, data.gpu, explained=False).best
        if best is not None:
            why = lower_host_count_clause(release, data.shape.tied_embeddings, data.compute_capability,
                                          query.trinity_release)
            others = [other for other in lifting.releases if other != release]
            return (f"; with {query.option_names.planned_release(release)}{f', {why}' if why else ''}, "
                    + _host_words(data.shape, query.node_gpus, best, named)
                    + _other_releases_words(others, lifting.fitting, best))
    return ReasonWords()


def _other_releases_words(others: list[str], fitting: dict[str, frozenset[tuple[int, bool]]], plan: Plan) -> str:
    """The `others` releases that count less host memory too, beside the one whose `plan` is named, in words: those
    whose host memory per node holds that plan's GPUs and Offload (`fitting`), then the rest: ``; 0.5.0 counts less
    host memory too, enough for that plan; 0.5.2 counts less too, but not enough for that plan``; "" for none."""
    enough = [other for other in others if (plan.gpus, plan.offload) in fitting[other]]
    short = [other for other in others if other not in enough]
    words = [f"{and_joined(releases)} count{'s' if len(releases) == 1 else ''} less {what}"
             for releases, what in ((enough, "host memory too, enough for that plan"),
                                    (short, f"{'too' if enough else 'host memory too'}, but not enough for that plan"))
             if releases]
    return "".join(f"; {part}" for part in words)


class _LiftingReleases(NamedTuple):
    """The Trinity releases that lift a host memory limit no release named sets (`_lifting_releases`)."""

    releases: list[str]
    """All of them, newest first."""
    fitting: dict[str, frozenset[tuple[int, bool]]]
    """Each one's GPU counts, with Offload or without, whose host need its host memory holds (`_host_fitting`)."""
    asked: list[tuple[str, Query]]
    """Those worth asking, newest first, each with its question (one plan asked)."""


def _lifting_releases(data: PlanningData, query: Query) -> _LiftingReleases:
    """Where `query` names no Trinity release (its count of host memory the most any release needs: every rank loading
    the model, 0.6's reference model in fp32, its pinned blocks by rows), or a minor version without its patch (0.5:
    every rank loading the model, the most its patches load), the releases of `patch_releases_to_ask` that count less,
    so that their host memory per node holds a GPU count, with Offload or without, that the query's count does not
    (`_host_fitting`), and those of them worth asking: not a release whose fitting counts are among those of a release
    asked already (0.5.0's are 0.5.1's), or fewer than those of another patch of its minor version (0.5.2's where 0.5.1
    loads an untied model on rank 0 alone). None where `query` names a patch."""
    releases = patch_releases_to_ask(query.trinity_release)
    if not releases:
        return _LiftingReleases([], {}, [])
    unnamed = _host_fitting(data, query)
    lifting = [(release, named, fitting) for release in releases
               if (fitting := _host_fitting(data, named := query.under_release(release).model_copy(
                   update={"top": 1}))) - unnamed]
    asked: list[tuple[str, Query]] = []
    fittings: list[frozenset[tuple[int, bool]]] = []
    for release, named, fitting in lifting:
        if any(fitting <= done for done in fittings) or any(
                fitting < other and named.trinity_version == another.trinity_version
                for _, another, other in lifting):
            continue  # asked already, or a patch of the same minor version lifts more (0.5.1's untied loading)
        fittings.append(fitting)
        asked.append((release, named))
    return _LiftingReleases([release for release, _, _ in lifting],
                            {release: fitting for release, _, fitting in lifting}, asked)


def _with_named_release(catalog: Catalog, query: Query, answer: Answer) -> Answer:
    """Where `query` names no Trinity release (or a minor version without its patch) and its host memory costs the best
    plan something (`more_host_ram` is another plan), the answer with the best plan of the first release worth asking
    that counts less host memory per node (`_lifting_releases`: the newest, its rank 0 alone loading the model on
    compute capability 9 or more under FSDP2, ...), within the same host memory, where CP-SAT proves it and it ranks
    before the best plan by the objective (`_ranks_before`): one solve, as `named_release`."""
    best, free = answer.best, answer.more_host_ram
    if best is None or not best.another_than(free):
        return answer
    asked = _lifting_releases(prepare(catalog, answer.gpu, query), query).asked
    if not asked:
        return answer
    found = answer_for(catalog, asked[0][1], answer.gpu, explained=False)
    if not found.decided or found.best is None or not _ranks_before(found.best, best, query.objective):
        return answer
    return answer.model_copy(update={"named_release": found.best})


def _ranks_before(other: Plan, plan: Plan, objective: Objective) -> bool:
    """Whether `other` is a better answer than `plan` by `objective`'s first term: longer (maximising the length), on
    fewer GPUs (the fewest GPUs), of fewer GPU-hours (the fewest GPU-hours), else cheaper."""
    if objective == "max_len":
        return other.max_model_len > plan.max_model_len
    if objective == "min_gpus":
        return other.gpus < plan.gpus
    if objective == "min_gpu_hours" and other.gpu_hours is not None and plan.gpu_hours is not None:
        return other.gpu_hours < plan.gpu_hours
    return other.cost < plan.cost


def _lifting_critic_words(catalog: Catalog, data: PlanningData, query: Query) -> ReasonWords:
    """Where `query`'s PPO critic is held in host memory (`HOST_HELD_CRITICS`), whose host memory rules its plans out:
    each other way to hold it (`CRITIC_STATES`) whose question, the host memory kept, the planner answers with a plan,
    that plan and its host need, in words: ``; with --critic resident, Env + SP=8 on 8 GPUs trains it (65536 tokens),
    and it needs 135.6 GiB of host memory per node while the model loads``; "" where none has one."""
    if query.critic not in HOST_HELD_CRITICS:
        return ReasonWords()
    words = ReasonWords()
    for critic in (critic for critic in CRITIC_STATES if critic != query.critic):
        held = query.model_copy(update={"critic": critic, "top": 1})
        if (best := answer_for(catalog, held, data.gpu, explained=False).best) is not None:
            words += (f"; with {query.option_names.planned_critic(critic)}, "
                      + _host_words(data.shape, query.node_gpus, best, held))
    return words


def _host_fitting(data: PlanningData, query: Query) -> frozenset[tuple[int, bool]]:
    """The GPU counts of `data`, each with Offload or without, whose host need per node as `query` counts it
    (`fits_host_ram`, whatever the length) `query`'s host memory holds."""
    return frozenset((gpus, offload) for (gpus, offload), fits in zip(
        ((gpus, offload) for gpus in data.counts for offload in (False, True)),
        _host_fits(data, query, query.host_ram_gb), strict=True) if fits)


def _lifts_every_need(data: PlanningData, query: Query) -> bool:
    """Whether the most host memory a node may have (`_more_host_ram_question`'s) holds what every plan of `data` needs
    (`fits_host_ram`, the model's rule), so that the question on such nodes has the plans of the one without a host
    limit, and its best plan their GPUs, settings and length (not their words: it states its host need, with no
    caution on an unchecked one)."""
    return all(_host_fits(data, query, MAX_HOST_RAM_GB))


def _host_fits(data: PlanningData, query: Query, host_ram_gb: float | None) -> Iterator[bool]:
    """For each GPU count of `data`, without Offload and with it, whether `host_ram_gb` per node holds what a plan
    needs as `query` counts it (`fits_host_ram`)."""
    return (fits_host_ram(data.shape, gpus, query.node_gpus, host_ram_gb, offload, query.trinity_version,
                          query.reference_model, query.lora_rank, query.critic, query.expert_layout,
                          query.model_loading(data.compute_capability, offload))
            for gpus in data.counts for offload in (False, True))


def least_host_words(catalog: Catalog, unlimited: Query, best: Plan, gpu: str) -> ReasonWords:
    """Where a plan that `unlimited` (a question without --host-ram) gets at `best`'s length needs less host memory
    per node than `best`, its best plan: the one that needs the least (`least_host_plan`), and its need, in words
    (``; at the least, ...``); "" otherwise."""
    objective = "cheapest" if unlimited.objective == "max_len" else unlimited.objective  # ties: as asked
    at_length = unlimited.model_copy(update={"objective": objective, "max_model_len": best.max_model_len,
                                             "exact": False, "top": 1})
    lighter = least_host_plan(catalog, at_length, gpu)
    model, node_gpus = catalog.model(unlimited.model), unlimited.node_gpus
    if lighter is None or (_shown_host_need(model, node_gpus, lighter, unlimited)
                           >= _shown_host_need(model, node_gpus, best, unlimited)):
        return ReasonWords()
    return "; at the least, " + _host_words(model, node_gpus, lighter, unlimited)


def fewest_limits_dropped(catalog: Catalog, query: Query, gpu: str) -> tuple[Plan | None, Plan | None]:
    """For `query`, which has no plan on the GPU type `gpu`, in one solve (`minimize_limits_dropped`: the host memory
    given and the pins soft): its best plan without the host memory, where that alone rules its plans out, else
    None; and, where it does not, its best plan without the fewest of its pins (`Query.pins`) that rule them out, the
    host memory kept (the pins that plan lacks are those), else None. Both None where the time limit left the solve
    unproven. With one pin and no host memory given, the fewest is that pin: one plain solve without it, which is
    cheaper than the guarded model's."""
    pinned = [field for field in PIN_RULES.values() if getattr(query, field) is not None]
    if query.host_ram_gb is None and len(pinned) == 1:
        try:
            return None, best_plan(catalog, query.model_copy(update={pinned[0]: None}), gpu, proven=True)
        except Undecided:
            return None, None
    data = prepare(catalog, gpu, query)  # as asked: --no-env's estimates are of plans that keep the pin
    if data.holds_no_plan(query):
        return None, None
    model, variables, guards = build_model(data, query, guarded=True)
    minimize_limits_dropped(model, data, query, variables, guards)
    solver = new_solver(query)
    solver.parameters.max_time_in_seconds = query.time_limit_s
    if _solved(solver, model) != cp_model.OPTIMAL:
        return None, None
    values = [solver.value(variable) for variable in variables.plan]
    estimated = bool(solver.value(variables.estimated))
    if not solver.value(guards["host_ram"]):
        return _plan(catalog, data, query.model_copy(update={"host_ram_gb": None}), values, estimated), None
    dropped = {field: None for rule, field in PIN_RULES.items() if not solver.value(guards[rule])}
    return None, _plan(catalog, data, query.model_copy(update=dropped), values, estimated) if dropped else None


def least_host_plan(catalog: Catalog, query: Query, gpu: str) -> Plan | None:
    """The plan of `query` (which asks for one length) on the GPU type `gpu` that needs the least host memory per
    node (`minimize_host_need`; of those, the best by the objective's rank), or None where it has none or the time
    limit left the least unproven. (Host memory is not monotone in the GPUs: tied embeddings load on every rank,
    and pinned blocks round up to powers of two.)"""
    data = prepare(catalog, gpu, query)
    if data.holds_no_plan(query):
        return None
    model, variables, _ = build_model(data, query)
    minimize_host_need(model, data, query, variables)
    solver = new_solver(query)
    solver.parameters.max_time_in_seconds = query.time_limit_s
    if _solved(solver, model) != cp_model.OPTIMAL:
        return None
    values = [solver.value(variable) for variable in variables.plan]
    return _plan(catalog, data, query, values, estimated=bool(solver.value(variables.estimated)))


def smallest_cap_plan(catalog: Catalog, data: PlanningData, query: Query) -> Plan | None:
    """Where `query` (`data`: its prepared data) caps the token budget (`Query.token_budget_cap`) and asks for a length:
    the best plan at the smallest cap that trains that length within the same budget, pins and other limits, in one
    solve of the query without its cap (`minimize_token_cap`, the cap a variable: a micro-batch of ``ceil(L / SP)``
    tokens per GPU holds a sequence), its budget at that cap; None where no cap trains it there, where the time limit
    left the smallest unproven, and without a cap or a length."""
    length = query.max_model_len
    if query.token_budget_cap is None or length is None:
        return None
    uncapped = query.model_copy(update={"token_budget_cap": None, "top": 1})
    model, variables, _ = build_model(data, uncapped)
    cap = minimize_token_cap(model, data, length, variables)
    solver = new_solver(query)
    solver.parameters.max_time_in_seconds = query.time_limit_s
    if _solved(solver, model) != cp_model.OPTIMAL:
        return None
    values = [solver.value(variable) for variable in variables.plan]
    capped = query.model_copy(update={"token_budget_cap": solver.value(cap)})
    return _plan(catalog, data, capped, values, estimated=bool(solver.value(variables.estimated)))


def raised_cap_words(query: Query, plan: Plan) -> str:
    """What `plan`, the plan at the smallest token budget cap that trains `query`'s length within its budget
    (`smallest_cap_plan`, the answer's `token_budget_cap_raised`), does, naming the option that sets that cap and,
    where the query's cap came from elsewhere (`Query.token_budget_cap_source`), that source raised to it: ``a cap of
    16384 tokens per GPU (--token-budget 16384) trains 65536 tokens within 4 GPUs``."""
    cap, names = plan.max_token_len_per_gpu, query.option_names
    option, source = token_cap_source(cap, None, names), query.token_budget_cap_source
    how = option if source is None else f"{source} raised to it, or {option}"
    return (f"a cap of {counted(cap, 'token')} per GPU ({how}) trains {counted(query.max_model_len or 0, 'token')} "
            f"{query.within_budget}")


def _raised_cap_words(query: Query, plan: Plan | None) -> ReasonWords:
    """The plan at the smallest token budget cap that trains `query`'s length within its budget (`smallest_cap_plan`),
    in words (`raised_cap_words`): ``; a cap of 16384 tokens per GPU (--token-budget 16384) trains 65536 tokens within
    4 GPUs: SP=4 on 4 GPUs with max_token_len_per_gpu = 16384 (inferred)``; "" where there is none."""
    if plan is None:
        return ReasonWords()
    return f"; {raised_cap_words(query, plan)}: " + _lowered_plan_words(plan)


def _batch_need(catalog: Catalog, data: PlanningData, query: Query) -> ReasonWords:
    """When the train batch is what rules the plans out (without it one exists): the plan without it and the
    data-parallel ranks (or, for Trinity 0.5.0 and 0.5.1, GPUs) a batch must split over for it, with the nearest such
    batch to the one asked for, in words ("" otherwise)."""
    if query.train_batch_size is None:
        return ReasonWords()
    best = answer_for(catalog, query.model_copy(update={"train_batch_size": None, "top": 1}), data.gpu,
                      explained=False).best
    if best is None:
        return ReasonWords()
    words = dividing_batch_words(best.gpus, best.sp, query.batch_divisor == "gpus", query.train_batch_size,
                                 query.batch_set_at, query.pair_batch)
    return (f"; {words} lets {best.setting.label} on "
            f"{counted(best.gpus, 'GPU')} train it ({counted(best.max_model_len, 'token')}, "
            + best.evidence_cautioned + ")")


def _shown_host_need(model: Model, node_gpus: int, plan: Plan, query: Query) -> float:
    """The host memory per node `plan` of `model` needs on nodes of `node_gpus` as `query` counts it (under its
    Trinity release, with a reference model or not), GiB as shown (`shown_host_need`)."""
    return shown_host_need(model, plan.gpus, node_gpus, plan.offload, query.trinity_version, query.reference_model,
                           query.lora_rank, query.critic, query.expert_layout, plan.model_loading)


def _host_need_words(model: Model, node_gpus: int, plan: Plan, query: Query) -> str:
    """The host memory per node `plan` of `model` needs on nodes of `node_gpus` as `query` counts it, in words
    (`host_need_words`)."""
    return host_need_words(f"{_shown_host_need(model, node_gpus, plan, query):.1f}", plan.offload, plan.critic)


def _host_words(model: Model, node_gpus: int, plan: Plan, query: Query) -> ReasonWords:
    """A plan found without --host-ram and the host memory per node it needs, in words, with the codes of the cautions
    they say (`Plan.cautioned`)."""
    return (f"{plan.setting.label} on {counted(plan.gpus, 'GPU')}{plan.lowered_words} trains it ("
            + plan.cautioned(counted(plan.max_model_len, 'token'))
            + f"), and {_host_need_words(model, node_gpus, plan, query)}")
