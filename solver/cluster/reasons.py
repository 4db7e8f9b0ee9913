"""Why jobs are left out (`Unplaced`): no room left where they could go (`unplaced_reasons`, with the placed jobs
that hold the room, `_RoomHolders`, the priority that places a job there, and the smaller asks that would fit it
into the room left idle, `SmallerAsks`), no plan with a layout in a pool they
may use (`why_no_option`: asked of the planner once per job shape, with what estimates or more host memory would
give), or, where none is placed, one reason for every job (`all_unplaced`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from math import ceil
from typing import Any, Literal, NamedTuple

from ortools.sat.python import cp_model

from solver import clock
from solver.cluster.model import (
    PlacementModel,
    build_placement_model,
    fewest_gpus,
    keep_running_jobs,
    placement_solver,
    placement_stages,
    tied_job_weight,
)
from solver.cluster.options import (
    Footprint,
    NoWayReason,
    Option,
    Planner,
    WallClockPassed,
    WaysLimit,
    host_capacity_tenths,
    job_options,
    layout,
    pool_counts,
    ways_in_pool,
)
from solver.cluster.placements import IdleRoom
from solver.model import stopped_by_wall_clock
from solver.query import Query, counts_reference
from solver.results import (
    Answer,
    FitsWith,
    Plan,
    PoolCode,
    ReasonCode,
    ReasonWords,
    Status,
    Unplaced,
    UnplacedCode,
    UnplacedPool,
    fleet_gpus_words,
)
from solver.rules import COMMAND_OPTIONS, OptionNames, batch_split_violation, counts_dpo_pairs
from solver.solve import checked, estimated_plan_words, host_over_words, least_host_words, work_budget
from solver.tables import (
    DETERMINISTIC_PER_SECOND,
    HINTS_QUESTIONS_PER_SECOND,
    MAX_ESTIMATED_GPUS,
    PATCH_RELEASES_NEWEST_FIRST,
    REASONS_QUESTIONS_PER_SECOND,
    AtLeast,
    Fleet,
    Job,
    JobTraining,
    Pool,
    RunningJob,
    TokenBudgetMode,
    and_joined,
    counted,
    named_jobs,
)
from solver.tables.peft_match import adapted_brief


class LeftOut(NamedTuple):
    """Why each job a placement leaves out is (`unplaced_reasons`), and whether the wall clock left the reasons of
    some unasked (`wall_clock_cut`: why the other pools a job with ways may use have none), and whether it stopped a
    solve of the least priority that places one (`least_priority_stopped`: `LeastPriority`)."""

    unplaced: tuple[Unplaced, ...]
    wall_clock_cut: bool
    least_priority_stopped: bool = False


def unplaced_reasons(planner: Planner, fleet: Fleet, options: list[Option],
                     placed: dict[int, tuple[Option, list[int]]], proven: bool = True,
                     certain: bool = False, smaller_asks: SmallerAsks | None = None,
                     cut_short: Collection[int] = (), reasons_by: float | None = None,
                     final: Mapping[int, tuple[Option, list[int]]] | None = None,
                     running: Sequence[RunningJob] = (), proven_stages: frozenset[str] = frozenset(),
                     seed: int = 0, stages_solved: Sequence[str] = ()) -> LeftOut:
    """Why each job left out of the placement (`placed`: each placed job's option and nodes; `final`: the placement
    as it ends, grown onto idle GPUs and nodes, whose idle nodes the words of a pinned job count; None: `placed`;
    `running`: the jobs that run now, which the placement kept where they run, after priority; `proven_stages`: the
    stages after priority that the search proved, `Search.proven_stages`; `stages_solved`: those it solved,
    `Search.stages_solved`, the goals after priority that the words name: `goals_words`) is: no room where it could
    go (as far as the search got, unless `proven`: the placed priority is its bound), with the placed jobs that hold
    the room it needs and, where the placed priority is `certain` (proven the most that the jobs' ways allow: none
    left out, their host memory exact), the priority that places it (`LeastPriority`, with CP-SAT's `seed`, by the wall
    clock's `reasons_by`, which the search, the one caller with a proven placement, gives); where
    `smaller_asks` (None: no hints) finds one of its ways that would fit the room the final placement leaves idle
    with fewer rollout GPUs or at a shorter length, the least of each change; and why the other pools it may use
    have no plan for it; or no plan that fits any pool it may use; or, for the jobs `cut_short`, that the time limit
    left their ways unasked. The smaller asks come first (on their own count of questions), then the planner's
    questions why the other pools have no plan, within `REASONS_QUESTIONS_PER_SECOND` new ones per second of the
    time limit and the wall clock's `reasons_by` (a `time.monotonic()`; None: no limit): a job shape reached past it
    is told that why was not worked out (`LeftOut.wall_clock_cut`, where the wall clock cut it)."""
    goals = goals_words(stages_solved)
    unproven = "" if proven else (" as far as the search got: the placement is not proven best within the time "
                                  f"limit (raise {planner.option_names.time_limit})")
    pools: dict[int, dict[str, list[Option]]] = defaultdict(lambda: defaultdict(list))
    host_checked: dict[int, bool] = defaultdict(bool)
    for option in options:
        pools[option.job][fleet.pools[option.pool].name].append(option)
        host_checked[option.job] |= option.host_tenths > 0
    no_room, pool_room = ((UnplacedCode.NO_ROOM, PoolCode.NO_ROOM) if proven
                          else (UnplacedCode.NO_ROOM_UNPROVEN, PoolCode.NO_ROOM_UNPROVEN))
    least = LeastPriority(fleet, options, sum(fleet.jobs[job].priority for job in placed), seed,
                          LEAST_PRIORITY_SHARE * DETERMINISTIC_PER_SECOND * planner.time_limit_s,
                          reasons_by, running, proven_stages) if certain and reasons_by is not None else None
    holders = _RoomHolders(fleet, placed, options, placed if final is None else final, least, planner.option_names)
    short_of_room = [index for index in range(len(fleet.jobs))
                     if index not in placed and index not in cut_short and pools[index]]
    fits_with = {index: () if smaller_asks is None else smaller_asks.fits_with(index) for index in short_of_room}
    limit = None if reasons_by is None else WaysLimit.after_search(planner, REASONS_QUESTIONS_PER_SECOND, reasons_by)
    unplaced = []
    wall_clock_cut = False
    for index, job in enumerate(fleet.jobs):
        if index in placed:
            continue
        if index in cut_short:
            unplaced.append(left_out(job, reason_code=UnplacedCode.TIME_LIMIT, reason=(
                "no ways to run worked out within the time limit (the jobs of more priority are asked first; raise "
                f"{planner.option_names.time_limit})")))
            continue
        if not pools[index]:
            unplaced.append(unplaced_without_a_way(job, why_no_option(planner, fleet, index)))
            continue
        elsewhere = _elsewhere(planner, fleet, index, frozenset(pools[index]), limit)
        estimated = _estimated_ways(planner, fleet, index, pools[index], limit)
        wall_clock_cut |= elsewhere.cut_short == "wall clock" or estimated.wall_clock_cut
        room = _NoRoom(planner, index, job, pools[index], host_checked[index], goals, unproven, holders, certain,
                       elsewhere, smaller_asks, fits_with[index], estimated.ways)
        words = room.words(several=False)
        tied = certain and holders.left_out_in_tie(index)
        unplaced.append(left_out(
            job, reason_code=UnplacedCode.PRIORITY_TIE if tied else no_room, reason=words.text,
            reason_for_several=room.words(several=True).text,
            pools=(*(UnplacedPool(pool=name, reason_code=pool_room) for name in pools[index]), *elsewhere.pools),
            fits_with=fits_with[index]).with_reason(words))
    return LeftOut(tuple(unplaced), wall_clock_cut, least is not None and least.wall_clock_stopped)


GOAL_WORDS = {"stays": "running jobs kept where they run", "jobs": "the jobs earlier in the file where priorities tie",
              "length": "length", "cost": "cost"}
"""The goals of the placement's stages after priority (`placement_stages`, but the tie-break), in words."""


def goals_words(stages_solved: Sequence[str]) -> str:
    """The placement's goals in order, in words: the most priority (the first stage's, and the greedy placement's
    that stands in where it found none), then each stage after it that the search solved (`stages_solved`, in order:
    not one skipped or left unsolved)."""
    return ", then ".join(["the most priority in all", *(GOAL_WORDS[stage] for stage in stages_solved
                                                         if stage in GOAL_WORDS)])


@dataclass(frozen=True)
class _NoRoom:
    """What `unplaced_reasons` found of a `job` left out for want of room (its `ways`, by pool name): whether its
    ways' host memory is checked, the placement's goals in order (`goals`), the words of a placement not proven best
    (`unproven`), the placed jobs that hold its room, whether the placed priority is `certain`, why the other pools it
    may use have no plan for it (`elsewhere`), the smaller asks that would fit it (`fits_with`, found by
    `smaller_asks`: None, no hints), and its ways on the estimates alone in the pools where they take less room than
    the tables' whole nodes (`estimated`, by pool name: `EstimatedWays`)."""

    planner: Planner
    index: int
    job: Job
    ways: dict[str, list[Option]]
    host_checked: bool
    goals: str
    unproven: str
    holders: _RoomHolders
    certain: bool
    elsewhere: NoWayReason
    smaller_asks: SmallerAsks | None
    fits_with: tuple[FitsWith, ...]
    estimated: Mapping[str, list[Option]]

    def words(self, several: bool) -> ReasonWords:
        """The reason, in words for one job or, where `several`, for several jobs given it, true of each alone, with
        the codes of the cautions they say; for a job left out in a tie of priority (`_RoomHolders.left_out_in_tie`),
        that tie first, naming the placed jobs it ties with (`_RoomHolders.tie_words`)."""
        elsewhere = self.elsewhere.words_for_several if several else self.elsewhere.words
        cut_short = any(option.ways_cut_short for ways in self.ways.values() for option in ways)
        weighed = (" (on its way as it runs alone: the time limit cut working out its other ways short; raise "
                   f"{self.planner.option_names.time_limit})" if cut_short else "")  # a running job's, each alone
        rooms = _least_rooms(self.planner, self.job, self.ways, several, self.estimated)
        if self.certain and self.holders.left_out_in_tie(self.index):
            opening = (f"left out in a tie{self.holders.tie_words(self.index, self.ways, several)} in {rooms}"
                       f"{weighed}; a tie goes to the jobs earlier in the file: give priorities to choose, priority "
                       f"{self.job.priority + 1} places {'one of them' if several else 'it'}")
        else:
            opening = (f"no room{' (GPUs or host memory)' if self.host_checked else ''} left in {rooms} after the jobs "
                       f"placed ({self.goals}){weighed}{self.unproven}"
                       f"{self.holders.words(self.index, self.ways, self.certain, several)}")
        return (f"{opening}{self.holders.pin_words(self.job, several)}{'; ' if elsewhere else ''}" + elsewhere
                + ('' if self.smaller_asks is None else self.smaller_asks.words(self.job, self.fits_with, several)))


@dataclass(frozen=True)
class _Room:
    """Room for a job in a pool, made by taking placed jobs out of the placement and putting others sharing their node
    on ways of theirs that take less of it (none moved to another node): the priority of those taken out together,
    the jobs taken out and those put on other ways (indexes, in the order of the file), and those taken out that
    must be placed (`required`, which no priority takes the room of)."""

    priority: int
    jobs: tuple[int, ...]
    other_ways: tuple[int, ...] = ()
    required: tuple[int, ...] = ()

    @property
    def rank(self) -> tuple[int, int, int, int, tuple[int, ...], tuple[int, ...]]:
        """The order of rooms, the least first: by the required jobs taken out, fewest first, then by priority, then
        by the jobs taken out, fewest first, then by those put on other ways, then first in the file."""
        return len(self.required), self.priority, len(self.jobs), len(self.other_ways), self.jobs, self.other_ways


LEAST_PRIORITY_SHARE = 0.05
"""The share of a run's deterministic time (`DETERMINISTIC_PER_SECOND` per second of its time limit) that the solves
of the least priority placing each job left out (`LeastPriority`) take together, after the search."""


_TIE_BROKEN = {"stays": "more running jobs stay with {it}", "jobs": "a tie goes to the jobs earlier in the file",
               "length": "the at_least jobs run longer with {it}", "cost": "the placed jobs cost less with {it}"}
"""What breaks the tie at the least priority that places a job left out, by stage (`LeastPriority.tied`): the
stages after priority but the tie-break (`placement_stages`); length and cost only where the jobs' order ties too
(`tied_jobs_order`: rare, two sets of jobs whose places, weighed by priority, sum alike)."""


class LeastPriority:
    """The least priority that surely places a job left out of a placement whose priority is proven the most
    (`placed_priority`): one more than the placed priority less the most the other jobs hold in a placement with the
    job (with it, that placement holds more than every one without it; with one less, one without it holds as much),
    or that one less where, at it, the stages after priority break the tie in the job's favour (`tied`, job -> the
    stage: the most running jobs kept where they run, where jobs run now (`running`), then the order of jobs tied in
    priority, the job weighed at that one less (`tied_job_weight`), then, where that ties too, the longest
    ``at_least`` lengths and the least cost, as `placement_stages` orders them, each where the search proved it:
    `proven_stages`): the best placement with the job, its other jobs holding that most, beats the
    best without it, holding the placed priority, at the first stage where they differ. A job that a placement with
    it of as much priority (and running jobs kept) would place, left out by that fixed order alone, is left out in
    a tie (`in_tie`).
    Those are CP-SAT solves of the placement model (`build_placement_model`, the required jobs placed, with
    `keep_running_jobs`, built once) with the job placed or not (an assumption), asked once per job (`of`), with
    CP-SAT's `seed`, within `work` of deterministic time for all the jobs together and, as a safety net, by the wall
    clock's `deadline` (a `time.monotonic()`; `wall_clock_stopped` where it stopped one); None where the first solve
    is not proven optimal within them (not one less where a solve of a stage after it is not)."""

    def __init__(self, fleet: Fleet, options: list[Option], placed_priority: int, seed: int, work: float,
                 deadline: float, running: Sequence[RunningJob] = (), proven_stages: frozenset[str] = frozenset()
                 ) -> None:
        self.fleet, self.options, self.placed_priority, self.seed = fleet, options, placed_priority, seed
        self.work, self.deadline, self.running, self.proven_stages = work, deadline, running, proven_stages
        self.found: dict[int, int | None] = {}
        self.tied: dict[int, str] = {}
        self.in_tie: set[int] = set()
        self.wall_clock_stopped = False
        self.built: PlacementModel | None = None
        self.stages: list[tuple[str, cp_model.LinearExprT, bool]] = []
        """The placement's stages (`placement_stages`) but its tie-break (`_TIE_BROKEN`'s, after priority), on the
        model `_built` builds."""

    def of(self, index: int) -> int | None:
        """The least priority that surely places job `index`; None where not proven."""
        if index not in self.found:
            out_of_time = clock.seconds_left(self.deadline) <= 0
            self.wall_clock_stopped |= out_of_time
            self.found[index] = None if self.work <= 0 or out_of_time else self._solved(index)
        return self.found[index]

    def _solved(self, index: int) -> int | None:
        built = self._built()
        model = built.model
        name = self.fleet.jobs[index].name
        placed = model.new_bool_var(f"least_priority_places_{name}")
        ways = sum(x for option, x in zip(self.options, built.chosen) if option.job == index)
        model.add(ways == 1).only_enforce_if(placed)
        model.add(ways == 0).only_enforce_if(~placed)
        (_, priority, _), *after = self.stages
        held = self._best(priority, True, [placed])
        if held is None:
            return None
        least = self.placed_priority - (held - self.fleet.jobs[index].priority) + 1
        with_it: list[cp_model.LiteralT] = [placed, self._holding(priority, held)]
        without_it: list[cp_model.LiteralT] = [~placed, self._holding(priority, self.placed_priority)]
        for stage, objective, maximise in after:
            if stage not in self.proven_stages:  # the search may not reach the best of this stage: no tie it breaks
                return least
            best_with = self._best(objective, maximise, with_it)
            best_without = self._best(objective, maximise, without_it)
            if best_with is None or best_without is None:
                return least
            # The job's weight in the order of jobs tied in priority grows with its priority: at least - 1, not its own
            raised = (best_with if stage != "jobs" else best_with + tied_job_weight(self.fleet, index, least - 1)
                      - tied_job_weight(self.fleet, index, self.fleet.jobs[index].priority))
            if raised != best_without:
                if (raised > best_without) == maximise:
                    self.tied[index] = stage
                    return least - 1
                if stage == "jobs" and least == self.fleet.jobs[index].priority + 1:  # as much placed with it
                    self.in_tie.add(index)
                return least
            with_it.append(self._holding(objective, best_with))
            without_it.append(self._holding(objective, best_without))
        return least

    def _built(self) -> PlacementModel:
        """The placement model, with the running jobs' literals where jobs run now, and its `stages` (built once)."""
        if self.built is None:
            built = build_placement_model(self.fleet, self.options, every_job=False)
            self.built = keep_running_jobs(built, self.fleet, self.options, self.running) if self.running else built
            self.stages = [stage for stage in placement_stages(self.fleet, self.options, self.built, every_job=False)
                           if stage[0] == "priority" or stage[0] in _TIE_BROKEN]
        return self.built

    def _holding(self, objective: cp_model.LinearExprT, value: int) -> cp_model.IntVar:
        """A literal that holds `objective` at `value` where true (an assumption of a later solve)."""
        holds = self._built().model.new_bool_var(f"least_priority_holds_{value}")
        self._built().model.add(objective == value).only_enforce_if(holds)
        return holds

    def _best(self, objective: cp_model.LinearExprT, maximise: bool, assumed: list[cp_model.LiteralT]) -> int | None:
        """The most (or, unless `maximise`, the least) of `objective` the placement model reaches with the literals
        `assumed` true, within the work and the wall clock left; None where the solve is not proven optimal."""
        model = self._built().model
        (model.maximize if maximise else model.minimize)(objective)
        model.clear_assumptions()
        model.add_assumptions(assumed)
        solver = placement_solver(1, self.seed)
        solver.parameters.max_deterministic_time = max(self.work, 0.0)
        solver.parameters.max_time_in_seconds = max(clock.seconds_left(self.deadline), 0.0)  # none left: stops at once
        status = checked(solver, model, solver.solve(model))
        self.work -= solver.response_proto.deterministic_time
        self.wall_clock_stopped |= stopped_by_wall_clock(solver, status)
        return round(solver.objective_value) if status == cp_model.OPTIMAL else None


class _RoomHolders:
    """The placed jobs (`placed`: each job's option and nodes) that hold the room a job left out needs: of those
    whose removal from the placement, moving no other job (but for jobs sharing their node put on ways of theirs,
    among `options`, that take no more GPUs and host memory), leaves room for one of its ways, the ones of the least
    priority together (then the fewest, then the first in the file), asked once per pool and footprint (or
    number of whole nodes)."""

    def __init__(self, fleet: Fleet, placed: dict[int, tuple[Option, list[int]]], options: list[Option],
                 final: Mapping[int, tuple[Option, list[int]]], least: LeastPriority | None,
                 option_names: OptionNames) -> None:
        self.fleet, self.option_names = fleet, option_names
        self.placed_priority = sum(fleet.jobs[job].priority for job in placed)
        self.least = least
        """Where the placed priority is proven the most, the least priority that places each job left out."""
        self.used_nodes = {(option.pool, node) for option, nodes in final.values() for node in nodes}
        """The nodes (pool, node) the placement as it ends (`final`: grown, some jobs moved to idle nodes) uses."""
        self.ways: dict[tuple[int, int], list[Option]] = defaultdict(list)  # (job, pool) -> its ways on one node
        self.pools_of: dict[int, set[int]] = defaultdict(set)  # job -> the pools it has a way in
        for option in options:
            self.pools_of[option.job].add(option.pool)
            if option.size:
                self.ways[option.job, option.pool].append(option)
        self.whole: list[dict[int, int]] = [{} for _ in fleet.pools]  # per pool: node -> the job taking it whole
        # per pool: node (up, not down) -> the jobs sharing it
        self.shared: list[dict[int, list[Option]]] = [{node: [] for node in pool.up_node_indexes}
                                                      for pool in fleet.pools]
        for job, (option, nodes) in sorted(placed.items()):
            for node in nodes:
                if option.size:
                    self.shared[option.pool][node].append(option)
                else:
                    self.whole[option.pool][node] = job
        self.rooms: dict[tuple[int, Footprint | int], _Room] = {}

    def words(self, left_out: int, ways: dict[str, list[Option]], certain: bool, several: bool) -> str:
        """The placed jobs that hold the room the job `left_out` (its index in the fleet's jobs) needs (its `ways`, by
        pool name), the priority they hold together, and, where the placed priority is `certain`, the least priority
        that surely places it: one more than theirs where they hold as much as its own (length and cost chose them,
        after the running jobs kept where the fleet runs some now),
        else as `LeastPriority` proves it (less than theirs where moving other jobs makes room), or, where it does not
        within its work, one more than theirs (a priority that places it); where every room takes a required job
        out, those alone, which leave it too little room with every other job taken out, and, where no placement
        moves them (`_required_stuck`), that no priority places it; in words after a semicolon, for one job
        or, where `several`, for several jobs given them, true of each alone (the room is each one's: it places one
        of them)."""
        room, pool = self._least_of(ways)
        where = f" in {pool}" if len(ways) > 1 else ""
        moved = [self.fleet.jobs[index].name for index in room.other_ways]
        shrunk = (f", with {named_jobs(moved)} on {'another of its' if len(moved) == 1 else 'other'} ways"
                  if moved else "")
        it, needs, places = ("one of them", "each needs", "one of them") if several else ("it", "it needs", "it")
        if not room.jobs:  # only where the placement is not proven: with the job, it would hold more priority
            return (f"; yet {'each' if several else 'it'} fits in the room left{where}{shrunk}: a placement with {it} "
                    "holds more priority")
        names = [self.fleet.jobs[index].name for index in room.jobs]
        held = (f"priority {room.priority}" if len(names) == 1 else f"priority {room.priority} together")
        holds = "holds" if len(names) == 1 else "hold"
        if room.required:  # every room takes a required job out: the others there, all taken out, leave too little
            required = [self.fleet.jobs[index].name for index in room.required]
            leaves = "leaves" if len(required) == 1 else "leave"
            each, any_of = ("each of them", "any of them") if several else ("it", "it")
            as_placed = "" if self._required_stuck(ways) else ", where placed,"
            stuck = (f": no priority places {any_of}, more nodes would ({self.option_names.buy})" if not as_placed
                     else "")
            return (f"; {named_jobs(required)} (required){as_placed} {leaves} too little room for {each}{where}, even "
                    f"with every other job taken out{stuck}")
        if not certain:
            return f"; {named_jobs(names)} ({held}) {holds} the room {needs}{where}{shrunk}"
        if room.priority == self.fleet.jobs[left_out].priority:
            own = "each one's own" if several else "its own"
            return (f"; {named_jobs(names)} ({held}, as much as {own}) {holds} the room {needs}{where}{shrunk}: "
                    f"priority {room.priority + 1} is the least that places {places}")
        least = None if self.least is None else self.least.of(left_out)
        if least is None:
            return (f"; {named_jobs(names)} ({held}) {holds} the room {needs}{where}{shrunk}: "
                    f"priority {room.priority + 1} would place {places}")
        tied = None if self.least is None else self.least.tied.get(left_out)
        why = [*(["moving other jobs"] if least + (1 if tied else 0) <= room.priority else []),
               *([f"with as much priority placed, {_TIE_BROKEN[tied].format(it=it)}"] if tied else [])]
        return (f"; {named_jobs(names)} ({held}) {holds} the room {needs}{where}{shrunk}: "
                f"priority {least} is the least that places {places}" + (f" ({'; '.join(why)})" if why else ""))

    def _required_stuck(self, ways: dict[str, list[Option]]) -> bool:
        """Whether, in every pool of `ways` (a job left out's, by pool name), the least room takes out required jobs
        that no placement moves: the pool has one node up, and they have no way in another pool."""
        for options in ways.values():
            pool_index = options[0].pool  # a pool's ways, all of them in it
            room = min((self._least_room(option) for option in options), key=lambda found: found.rank)
            if (not room.required or len(self.fleet.pools[pool_index].up_node_indexes) != 1
                    or any(self.pools_of[job] != {pool_index} for job in room.required)):
                return False
        return True

    def left_out_in_tie(self, left_out: int) -> bool:
        """Whether the job `left_out` (its index) is left out in a tie of priority: a placement with it places as
        much priority (and, where jobs run now, keeps as many running jobs) as this one, and only the fixed order of
        jobs tied in priority left it out (`LeastPriority.in_tie`; False where that was not proven)."""
        if self.least is None:
            return False
        self.least.of(left_out)
        return left_out in self.least.in_tie

    def tie_words(self, left_out: int, ways: dict[str, list[Option]], several: bool) -> str:
        """Whom the job `left_out` (its index; its `ways`, by pool name) ties with, in words after "left out in a
        tie", for one job or, where `several`, for several jobs given them, true of each alone: the placed jobs that
        hold the room it needs where they hold as much priority as its own, else a placement with it, moving other
        jobs, that places as much; up to the pools it needs room in."""
        job = self.fleet.jobs[left_out]
        room, _ = self._least_of(ways)
        it = "one of them" if several else "it"
        if room.priority != job.priority or room.required:
            return (f": a placement with {it}, moving other jobs, places as much priority as this one "
                    f"({self.placed_priority}), and needs room")
        names = named_jobs([self.fleet.jobs[index].name for index in room.jobs])
        if len(room.jobs) == 1:
            return f" with {names}: equal priority {job.priority}, and only one of them fits"
        own = "each one's own" if several else "its own"
        return f" with {names} (priority {room.priority} together, as much as {own}): not all of them fit"

    def _least_of(self, ways: dict[str, list[Option]]) -> tuple[_Room, str]:
        """The least room (`_Room.rank`) that one of `ways` (by pool name) needs, and its pool's name."""
        rooms = [(self._least_room(option), name) for name, options in ways.items() for option in options]
        return min(rooms, key=lambda pair: pair[0].rank)

    def pin_words(self, job: Job, several: bool) -> str:
        """Where `job` names its pool (``pool:``) and other pools have nodes the placement as it ends leaves idle (no
        job on them, none grown or moved onto them): that its pool keeps it out of them, in words after a semicolon,
        for one job or `several` ("" otherwise)."""
        if job.pool is None:
            return ""
        idle = [f"{pool.name} ({counted(idle_nodes, 'idle node')})" for index, pool in enumerate(self.fleet.pools)
                if pool.name != job.pool and (idle_nodes := self._idle_nodes(index))]
        if not idle:
            return ""
        whose, kept = ("their", "them") if several else ("its", "it")
        return f"; {whose} pool: {job.pool} keeps {kept} out of {and_joined(idle)}"

    def _idle_nodes(self, pool_index: int) -> int:
        """The nodes of the pool that no job is on as the placement ends (not those down)."""
        return sum((pool_index, node) not in self.used_nodes for node in self.fleet.pools[pool_index].up_node_indexes)

    def _least_room(self, option: Option) -> _Room:
        """The least priority of placed jobs whose removal leaves room for `option` (a way of a job left out)."""
        key = (option.pool, option.footprint if option.size else option.whole_nodes)
        if key not in self.rooms:
            self.rooms[key] = (self._node_room(option.pool, option.footprint) if option.size
                               else self._whole_nodes_room(option.pool, option.whole_nodes))
        return self.rooms[key]

    def _node_room(self, pool_index: int, footprint: Footprint) -> _Room:
        """The least priority of placed jobs whose removal leaves one node of the pool room for `footprint`: a job
        taking the node whole, or some of the jobs sharing it."""
        pool = self.fleet.pools[pool_index]
        capacity = host_capacity_tenths(pool)
        rooms = []
        for node, sharing in self.shared[pool_index].items():
            if node in self.whole[pool_index]:
                rooms.append(self._room([self.whole[pool_index][node]]))
                continue
            short_gpus = footprint[0] - (pool.gpus_per_node - sum(option.size for option in sharing))
            short_host = 0 if capacity is None else footprint[1] - (capacity - sum(o.host_tenths for o in sharing))
            rooms.append(self._least_freeing(sharing, max(short_gpus, 0), max(short_host, 0)))
        return min(rooms, key=lambda room: room.rank)

    def _least_freeing(self, sharing: list[Option], short_gpus: int, short_host: int) -> _Room:
        """The least priority of the jobs `sharing` a node whose removal frees `short_gpus` GPUs and `short_host`
        tenths of a GiB of host memory, the others there on ways that take less of it where that helps: each
        choice's (GPUs, host memory) freed, counted up to what is short."""
        best: dict[tuple[int, int], _Room] = {(0, 0): _Room(0, ())}
        for option in sharing:
            smaller = [way for way in self.ways[option.job, option.pool] if way.footprint != option.footprint
                       and way.size <= option.size and way.host_tenths <= option.host_tenths]
            for (gpus, host), room in list(best.items()):
                choices = [(option.size, option.host_tenths, self._room([*room.jobs, option.job], room.other_ways))]
                choices += [(option.size - way.size, option.host_tenths - way.host_tenths,
                             self._room(list(room.jobs), (*room.other_ways, option.job))) for way in smaller]
                for freed_gpus, freed_host, grown in choices:
                    freed = (min(gpus + freed_gpus, short_gpus), min(host + freed_host, short_host))
                    if freed not in best or grown.rank < best[freed].rank:
                        best[freed] = grown
        return best[short_gpus, short_host]

    def _whole_nodes_room(self, pool_index: int, whole_nodes: int) -> _Room:
        """The least priority of placed jobs whose removal leaves `whole_nodes` nodes of the pool empty: each node
        emptied of the jobs sharing it, or each job on whole nodes taken out with all of them (a cover of the count,
        fewest priority first)."""
        units = [(1, [option.job for option in sharing]) for node, sharing in self.shared[pool_index].items()
                 if node not in self.whole[pool_index]]
        taking: dict[int, int] = defaultdict(int)
        for job in self.whole[pool_index].values():
            taking[job] += 1
        units += [(nodes, [job]) for job, nodes in sorted(taking.items())]
        best: dict[int, _Room] = {0: _Room(0, ())}  # nodes emptied, up to `whole_nodes` -> the least room
        for nodes, jobs in units:
            for emptied, room in list(best.items()):
                reached, grown = min(emptied + nodes, whole_nodes), self._room([*room.jobs, *jobs])
                if reached not in best or grown.rank < best[reached].rank:
                    best[reached] = grown
        return best[whole_nodes]

    def _room(self, jobs: list[int], other_ways: tuple[int, ...] = ()) -> _Room:
        """The room of taking these placed jobs out (and putting `other_ways`' on other ways): their priority
        together, and the jobs (and the required ones among them) in the file's order."""
        return _Room(sum(self.fleet.jobs[job].priority for job in jobs), tuple(sorted(jobs)), tuple(sorted(other_ways)),
                     tuple(sorted(job for job in jobs if self.fleet.jobs[job].required)))


FEWER_ROLLOUT_TRIES = 8
"""How many rollout GPU counts (each fewer than the job's, the fewest dropped first) `SmallerAsks` asks the planner
about for one job left out: each a `job_options` of the changed job, whose trainer plans the planner has mostly
answered already (a plan does not depend on the rollout). Eight reach from a node's 8 idle GPUs down to a rollout of
none; a job on whole nodes may want more, and is then told nothing."""

SHORTER_TRIES = 4
"""How many lengths (the longest first) `SmallerAsks` asks the `job_options` of for one job left out, until one of
its ways fits the idle room: of the planner's longest on each trainer GPU count that a node's idle GPUs leave room for
beside its rollout."""


class SmallerAsks:
    """The room the `final` placement (each placed job's option and nodes, grown onto idle GPUs) leaves idle
    (`IdleRoom`); and, for a job left out for want of room, the smaller asks with which one of the planner's ways for it
    (`job_options`) fits there (`fits_with`): the fewest rollout GPUs dropped, and the least length cut, asked within
    `HINTS_QUESTIONS_PER_SECOND` new questions per second of the time limit, counted from those asked as it is made,
    and until the wall clock's `until` (a `time.monotonic()`, read on `clock`), the safety net (`limit`;
    `wall_clock_stopped` says whether the wall clock cut them short)."""

    def __init__(self, planner: Planner, fleet: Fleet, final: dict[int, tuple[Option, list[int]]],
                 until: float) -> None:
        self.planner, self.fleet = planner, fleet
        self.limit = WaysLimit.after_search(planner, HINTS_QUESTIONS_PER_SECOND, until)
        self.wall_clock_stopped = False
        self.cut_short: dict[str, str] = {}
        """The jobs (names) whose smaller asks the limit left some of unasked, with those, in words (their reasons say
        so)."""
        self.idle = IdleRoom(planner, fleet, final)

    def fits_with(self, index: int) -> tuple[FitsWith, ...]:
        """For job `index`, left out: with the fewest rollout GPUs dropped (`_fewer_rollout`), and at the least length
        cut (`_shorter`), where one of the planner's ways for it fits the idle room, and where; each where one does."""
        return tuple(fits for fits in (self._fewer_rollout(index), self._shorter(index)) if fits is not None)

    def _fewer_rollout(self, index: int) -> FitsWith | None:
        """The most rollout GPUs, fewer than job `index`'s own, with which one of the planner's ways for it fits the
        idle room (within `FEWER_ROLLOUT_TRIES` counts, from the most that leave a trainer GPU room on one node's idle
        GPUs or on the idle nodes of a pool it may use), and where; None where none does."""
        job = self.fleet.jobs[index]
        usable = [p for p, pool in enumerate(self.fleet.pools) if job.may_run_in(pool)]
        # A rollout of more than this leaves no trainer GPU room on any one node's idle GPUs or all the idle nodes.
        most = max((max(*self.idle.gpus[p], len(self.idle.empty[p]) * self.fleet.pools[p].gpus_per_node) - 1
                    for p in usable), default=-1)
        for rollout in range(min(most, job.rollout_gpus - 1), -1, -1)[:FEWER_ROLLOUT_TRIES]:
            if self._out_of_time(index, "fewer rollout GPUs or a shorter length"):
                return None
            if fits := self._first_fit(index, {"rollout_gpus": rollout}):
                return fits
        return None

    def _shorter(self, index: int) -> FitsWith | None:
        """The longest length, shorter than job `index`'s own (for an ``at_least`` job, than its least), at which one
        of the planner's ways for it fits the idle room, and where; None where none does. The lengths asked are the
        planner's longest on each trainer GPU count that the idle GPUs of a node of a pool it may use leave room for
        beside its rollout (fewer GPUs may reach further: a count the tables do not measure, or one whose
        data-parallel ranks do not divide the train batch), the longest `SHORTER_TRIES` of them."""
        job = self.fleet.jobs[index]
        length = job.asked_max_model_len
        cuts = set()
        for p, pool in enumerate(self.fleet.pools):
            if not job.may_run_in(pool):
                continue
            for trainer_gpus in range(1, max(self.idle.gpus[p]) - job.rollout_gpus + 1):
                if self._out_of_time(index, "a shorter length"):
                    return None
                longest = self.planner.best(pool.gpu, job.model, trainer_gpus, None, pool.gpus_per_node,
                                            self.planner.estimate, pool.host_ram_gb, None, job.training)
                cuts |= {longest.max_model_len} if longest is not None and longest.max_model_len < length else set()
        for cut in sorted(cuts, reverse=True)[:SHORTER_TRIES]:
            if self._out_of_time(index, "a shorter length"):
                return None
            shorter = AtLeast(at_least=cut, at_most=job.at_most) if isinstance(job.max_model_len, AtLeast) else cut
            if fits := self._first_fit(index, {"max_model_len": shorter}):
                return fits
        return None

    def _out_of_time(self, index: int, unasked: str) -> bool:
        """Whether the hints' `limit` is reached as job `index`'s next ask comes (the asks left, `unasked` in words, are
        then not asked: `cut_short`); `wall_clock_stopped` says whether the wall clock reached it (before their count
        of questions)."""
        reached = self.limit.reached(self.planner)
        self.wall_clock_stopped |= reached == "wall clock"
        if reached is not None:
            self.cut_short.setdefault(self.fleet.jobs[index].name, unasked)  # the first: the asks left after it
        return reached is not None

    def _first_fit(self, index: int, change: dict[str, object]) -> FitsWith | None:
        """The first of the planner's ways for job `index` with its fields set as `change` says (`job_options`) that
        fits the idle room, and where; None where none does."""
        job = self.fleet.jobs[index]
        changed_job = job.model_copy(update=change)
        changed = self.fleet.model_copy(update={"jobs": tuple(
            changed_job if i == index else other for i, other in enumerate(self.fleet.jobs))})
        for option in job_options(self.planner, changed, index):
            if nodes := self.idle.room_for(option, job):
                return FitsWith(rollout_gpus=changed_job.rollout_gpus, max_model_len=changed_job.asked_max_model_len,
                                pool=self.fleet.pools[option.pool].name, nodes=nodes, whole_nodes=option.whole_nodes,
                                trainer_gpus=option.plan.gpus)
        return None

    def words(self, job: Job, fits_with: tuple[FitsWith, ...], several: bool) -> str:
        """The clause saying that `job` would fit the idle room each of `fits_with` names with its smaller ask ("" for
        none): with fewer rollout GPUs, or at a shorter length; where `several` jobs are given it, that one of them
        would (the room holds one); and, where the limit left some of its asks unasked (`cut_short`), which."""
        length = job.asked_max_model_len
        at = "with at_least" if isinstance(job.max_model_len, AtLeast) else "at"
        clauses: list[str] = []
        for fits in fits_with:
            explorer = "the explorer" if several else "its explorer"
            outside = f"; {explorer} on GPUs outside the fleet" if not fits.rollout_gpus else ""
            change = (f"with rollout_gpus {fits.rollout_gpus} (not {job.rollout_gpus}{outside})"
                      if fits.rollout_gpus != job.rollout_gpus else f"{at} {counted(fits.max_model_len, 'token')} "
                                                                    f"(not {length})")
            would = f" {'one of them' if several else 'it'} would fit" if not clauses else ""
            clauses.append(f"{change}{would} {self._room_words(fits)}")
        found = f"; {', or '.join(clauses)}" if clauses else ""
        if job.name not in self.cut_short:
            return found
        return (f"{found}; whether {self.cut_short[job.name]} would fit {'one of them' if several else 'it'} in the "
                f"idle room was not worked out within the time limit (raise {self.planner.option_names.time_limit})")

    def _room_words(self, fits: FitsWith) -> str:
        """The idle room `fits` names, in words, with the trainer GPUs of the way that fits it."""
        index = next(i for i, pool in enumerate(self.fleet.pools) if pool.name == fits.pool)
        pool, nodes = self.fleet.pools[index], fits.nodes
        where = f" in {pool.name}" if len(self.fleet.pools) > 1 else ""
        if not fits.whole_nodes:
            host = ("" if pool.host_ram_gb is None else
                    f" and {self.idle.host[index][nodes[0]] / 10:.1f} GiB of idle host memory")
            room = f"in node {nodes[0]}'s {counted(self.idle.gpus[index][nodes[0]], 'idle GPU')}{host}"
        else:
            empty = len(self.idle.empty[index])
            room = (f"on the {counted(empty, 'idle node')}" if len(nodes) == empty else
                    f"on {len(nodes)} of the {counted(empty, 'idle node')}")
        return f"{room}{where} (a trainer of {counted(fits.trainer_gpus, 'GPU')})"


def unplaced_without_a_way(job: Job, why: NoWayReason) -> Unplaced:
    """A job left out for want of a way to run in any pool it may use, and `why` (no words for several jobs where
    its words read true of each as they are: `Unplaced.reason_for_several`)."""
    several = None if why.words_for_several == why.words else why.words_for_several.text
    return left_out(job, reason=why.words.text, reason_for_several=several, reason_code=UnplacedCode.NO_WAY_TO_RUN,
                    pools=why.pools).with_reason(why.words)


def left_out(job: Job, **why: Any) -> Unplaced:
    """`job` left out for `why` (`Unplaced`'s fields but the job's own): where it trains LoRA, builds no reference
    model, trains a PPO critic or trains DPO, with its LoRA rank, whether its run builds one, its critic and DPO, as
    its plans would count them; its LoRA targets' regex where not all-linear, and its exclusions' where it gives
    them; and its own Trinity release, where it names one."""
    reference = counts_reference(job.reference_model, job.lora_rank)
    critic, targets = job.training.critic, job.training.counted_targets
    as_default = reference and not job.lora_rank and critic is None and not job.dpo
    return Unplaced(job=job.name, lora_rank=None if as_default else job.lora_rank,
                    reference_model=None if as_default else reference, critic=critic, dpo=job.dpo or None,
                    lora_target_modules=None if targets is None else targets.pattern,
                    lora_exclude_modules=None if targets is None else targets.excluded,
                    trinity_version=job.trinity_version, **why)


def _least_rooms(planner: Planner, job: Job, ways: dict[str, list[Option]], several: bool,
                 estimated: Mapping[str, list[Option]]) -> str:
    """The pools a job has `ways` in (keyed by pool name, in the fleet's order), each with the least its ways there
    take, in words: the fewest GPUs of one node (where the pool's host memory could run short, each (GPUs, host
    memory) of a way that no other way needs less of both: an Offload way may take fewer GPUs and more host memory),
    or the fewest whole nodes; where `several` jobs are given them, what each needs; with what else its plans count
    that may set that need (`_counted_besides`). Pools of one need are named together, before it, where the first of
    them comes: ``a100 and h20 (it needs at least 8 GPUs (6 trainer + 2 rollout) of one node)``, a job's rollout GPUs
    counted in with its trainer's (`_node_gpus`). Where the tables' plans take whole nodes and the estimates' take
    less (`estimated`, by pool name: `EstimatedWays`), the least of theirs too, and the option that plans with them
    alone: ``(it needs at least 2 whole nodes on the tables' plans, which come first; on the memory model's estimates,
    which --estimate plans every job with, at least 8 GPUs (6 trainer + 2 rollout) of one node)``."""
    needs = "each needs" if several else "it needs"
    counted_too = _counted_besides(planner, job, several)
    by_need: dict[str, list[str]] = {}  # the need in words -> its pools, in the fleet's order
    for name, options in ways.items():
        need = _least_room(planner, job, options, f"{needs} at least", counted_too, name in estimated)
        if name in estimated:
            need += (f"; on the memory model's estimates, which {planner.option_names.estimate_only} plans every job "
                     f"with, {_least_room(planner, job, estimated[name], 'at least', '')}")
        by_need.setdefault(need, []).append(name)
    return ", ".join(f"{and_joined(names)} ({need})" for need, names in by_need.items())


def _least_room(planner: Planner, job: Job, options: list[Option], needs: str, counted_too: str,
                tables_first: bool = False) -> str:
    """The least `job`'s ways in one pool (`options`) take, in words after `needs` (`_least_rooms`); whole nodes said
    to be the tables' plans' where the estimates' take less (`tables_first`)."""
    shared = [option for option in options if option.size]
    if not shared:
        tables = " on the tables' plans, which come first" if tables_first else ""
        return f"{needs} {min(option.whole_nodes for option in options)} whole nodes{tables}{counted_too}"
    if not any(option.host_tenths for option in shared):
        return f"{needs} {_node_gpus(min(option.size for option in shared), job)} of one node{counted_too}"
    least: list[tuple[int, int]] = []  # by GPUs, each with less host memory than the ways of fewer GPUs
    own_footprints = {(option.size, planner.host_tenths(job, option.plan))
                      for option in shared}
    for gpus, tenths in sorted(own_footprints):
        if not least or tenths < least[-1][1]:
            least.append((gpus, tenths))
    least_needs = [f"{_node_gpus(gpus, job)} and {tenths / 10:.1f} GiB" for gpus, tenths in least]
    return (f"{needs} {least_needs[0]} of host memory{''.join(f', or {n}' for n in least_needs[1:])}"
            f"{',' if len(least_needs) > 1 else ''} on one node{counted_too}")


class EstimatedWays(NamedTuple):
    """A job's ways on the memory model's estimates alone (``--estimate``: `ways_in_pool` on every count of the pool,
    `pool_counts`) in the pools where its ways, all the tables' plans, which come first (`evidence_tiers`), take whole
    nodes and those take less room: a node it shares, or fewer whole nodes (`ways`, by pool name); and whether the
    wall clock cut asking them short (`wall_clock_cut`: the pools past it are left out)."""

    ways: dict[str, list[Option]]
    wall_clock_cut: bool = False


def _estimated_ways(planner: Planner, fleet: Fleet, index: int, ways: dict[str, list[Option]],
                    limit: WaysLimit | None) -> EstimatedWays:
    """Job `index`'s `EstimatedWays`, where its `ways` (by pool name) take whole nodes on the tables' plans, asked
    within `limit` (None: none): each pool's whole or not at all, none past it."""
    estimated: dict[str, list[Option]] = {}
    for pool_index, pool in enumerate(fleet.pools):
        tables = ways.get(pool.name, [])
        if not tables or any(option.size or option.plan.evidence == "estimated" for option in tables):
            continue
        reached = None if limit is None else limit.reached(planner)
        try:
            if reached is not None:
                raise WallClockPassed
            with planner.asking_until(None if limit is None else limit.deadline):
                found = ways_in_pool(planner, fleet, index, pool_index, pool_counts(pool), "only")
        except WallClockPassed:
            return EstimatedWays(estimated, reached != "questions")
        fewest = min(option.whole_nodes for option in tables)
        if any(option.size or option.whole_nodes < fewest for option in found):
            estimated[pool.name] = found
    return EstimatedWays(estimated)


def _node_gpus(gpus: int, job: Job) -> str:
    """The `gpus` a way of `job` takes on the one node it shares, in words, with its trainer's and its rollout's where
    it has a rollout, which they count together: ``8 GPUs (4 trainer + 4 rollout)``; ``6 GPUs`` without one."""
    split = f" ({gpus - job.rollout_gpus} trainer + {job.rollout_gpus} rollout)" if job.rollout_gpus else ""
    return f"{counted(gpus, 'GPU')}{split}"


def _elsewhere(planner: Planner, fleet: Fleet, index: int, with_room: frozenset[str],
               limit: WaysLimit | None) -> NoWayReason:
    """For a job with ways to run in the pools named `with_room` (none of them left): why each other pool it may
    use has none, asked within `limit` (None: none; no words where there is no other)."""
    job = fleet.jobs[index]
    others = [pool.name for pool in fleet.pools if job.may_use(pool) and pool.name not in with_room]
    none = ReasonWords()
    return why_no_option(planner, fleet, index, with_room, limit) if others else NoWayReason(none, none)


def why_no_option(planner: Planner, fleet: Fleet, index: int, without: frozenset[str] = frozenset(),
                  limit: WaysLimit | None = None) -> NoWayReason:
    """Why a job has no plan with a layout in any pool it may use but those named `without` (asked once per job
    shape and fleet's pools: one planner serves `buy`'s pools raised and as bought), within `limit` (None: none): a
    shape it reaches first is told that it was not asked (`_not_asked`), here and after."""
    job = fleet.jobs[index]
    shape = (job.model, job.max_model_len, job.rollout_gpus, job.training, job.pool, without, fleet.pools)
    if shape not in planner.reasons:
        reached = None if limit is None else limit.reached(planner)
        planner.reasons[shape] = (_reasons(planner, fleet, index, without) if reached is None
                                  else _not_asked(planner, fleet, index, without, reached))
    return planner.reasons[shape]


def _not_asked(planner: Planner, fleet: Fleet, index: int, without: frozenset[str],
               reached: Literal["questions", "wall clock"]) -> NoWayReason:
    """The reason of job `index`, with no way to run in the pools it may use but those named `without`, whose reasons
    the time limit left unasked (`reached`: which of its limits, `WaysLimit`)."""
    unasked = f"why was not worked out within the time limit; raise {planner.option_names.time_limit}"
    if not without:
        return NoWayReason(ReasonWords(f"no way to run in any pool it may use ({unasked})"),
                           ReasonWords(f"no way to run in any pool each may use ({unasked})"), cut_short=reached)
    job = fleet.jobs[index]
    others = " or ".join(pool.name for pool in fleet.pools if job.may_use(pool) and pool.name not in without)
    words = ReasonWords(f"no way to run in {others} ({unasked})")
    return NoWayReason(words, words, cut_short=reached)


def _reasons(planner: Planner, fleet: Fleet, index: int, without: frozenset[str]) -> NoWayReason:
    """Why job `index` has no way to run in each pool it may use but those named `without`, asked of the planner:
    a rollout that leaves no trainer GPU, a trainer count with no layout beside the rollout, or the planner's own
    reason (with what estimates would give, under ``--no-estimate``), joined by semicolons, each with its code; and in
    the words for several jobs given it, true of each alone."""
    job = fleet.jobs[index]
    reasons: list[tuple[ReasonWords | str, ReasonWords | str]] = []  # each pool's, for one job and for several
    codes = []
    rollout = counted(job.rollout_gpus, "rollout GPU")
    for pool in fleet.pools:
        if not job.may_use(pool) or pool.name in without:
            continue
        if not pool.nodes:
            out_of_service = f"{pool.name}: the pool has no nodes now (nodes: 0)"
            reasons.append((out_of_service, out_of_service))
            reach, budget = _bought_nodes_reach(planner, job, pool, without)
            codes.append(UnplacedPool(pool=pool.name, reason_code=PoolCode.NO_NODES, more_nodes_reach=reach,
                                      more_nodes_token_budget=budget))
            continue
        pool_gpus = pool.up_nodes * pool.gpus_per_node
        trainer_room = pool_gpus - job.rollout_gpus
        if trainer_room < 1:
            taken = "take all" if trainer_room == 0 else "are more than"
            one, several = (f"{pool.name}: {whose} {rollout} {taken} the pool's {counted(pool_gpus, 'GPU')}"
                            f"{_up(pool)}, leaving none for a trainer" for whose in ("the job's", "each job's"))
            reasons.append((one, several))
            reach, budget = _bought_nodes_reach(planner, job, pool, without)
            codes.append(UnplacedPool(pool=pool.name, reason_code=PoolCode.ROLLOUT_TAKES_POOL, more_nodes_reach=reach,
                                      more_nodes_token_budget=budget))
            continue
        length = job.asked_max_model_len
        query = _whole_pool_question(planner, job, pool, length)
        answer = planner.answer(query, pool.gpu)  # asked already where `reasons_may_ask_reach` asked it first
        if answer.plans:
            layouts = _limits_words(planner, query, pool, job.rollout_gpus, trainer_room)
            no_layout, no_layouts = (
                f"{pool.name}{_counted_besides(planner, job, them)}: with {rollout}, no trainer GPU count that trains "
                f"{it} ({answer.plans[0].gpus} at the fewest) has a layout on {_nodes_words(pool, job.rollout_gpus)}"
                + layouts
                + _fewer_rollout_words(answer.plans[0].gpus, job.rollout_gpus, pool, them)
                for it, them in (("it", False), ("them", True)))
            reasons.append((no_layout, no_layouts))
            # --token-budget auto may train the length on fewer GPUs, which have a layout beside the rollout (asked
            # only where its answer may tell that: its reason's search is the dearest of the planner's)
            beside_query = _beside_rollout(query, trainer_room, job.rollout_gpus)
            auto_reach = (_token_budget_auto_reach(beside_query, planner.answer(beside_query, pool.gpu), pool,
                                                   job.rollout_gpus) if _auto_may_reach(beside_query) else None)
            reach, budget = _bought_nodes_reach(planner, job, pool, without)
            codes.append(UnplacedPool(pool=pool.name, reason_code=PoolCode.NO_LAYOUT_BESIDE_ROLLOUT,
                                      more_nodes_reach=reach, more_nodes_token_budget=budget,
                                      token_budget_auto_reach=auto_reach))
        else:
            # With a rollout: what the trainer reaches on the GPUs it leaves (the whole pool may reach more, or name a
            # way with no room beside the rollout), said as such where that differs.
            where, whole_pool = pool.name, query
            if job.rollout_gpus:
                query = _beside_rollout(query, trainer_room, job.rollout_gpus)
                if (beside := planner.answer(query, pool.gpu)).reason != answer.reason:
                    # The pool's GPUs bound the trainer only where they leave it fewer than the planner weighs (the
                    # reason names that bound: one, not two; with --buy's pools raised, never the pool's).
                    room = (f"up to {trainer_room} of its GPUs for the trainer, " if trainer_room < MAX_ESTIMATED_GPUS
                            else "")
                    where = f"{pool.name} ({room}beside {rollout})"
                    answer = beside
            # The planner's reason speaks of the model and the critic it counts, for one job or several; what else
            # the job's plans count is said before it.
            would = _estimates_would(planner, query, pool, job.rollout_gpus, answer.limits_named)
            reasons.append(((f"{where}{_counted_besides(planner, job, False, critic=False)}: " + answer.reason_words
                             + would),
                            (f"{where}{_counted_besides(planner, job, True, critic=False)}: " + answer.reason_words
                             + would)))
            reach, budget = ((None, None) if answer.reason_code != ReasonCode.LENGTH_BEYOND_REACH
                             else _more_nodes_reach(planner, whole_pool, pool))
            auto_reach = _token_budget_auto_reach(query, answer, pool, job.rollout_gpus)
            codes.append(UnplacedPool(pool=pool.name, reason_code=PoolCode.NO_PLAN,
                                      plan_reason_code=answer.reason_code, more_nodes_reach=reach,
                                      more_nodes_token_budget=budget, token_budget_auto_reach=auto_reach))
    # One pool at least: every job may use one (`Fleet` checks a job's pool), and `_elsewhere` asks where one is left.
    return NoWayReason(ReasonWords.joined("; ", (one for one, _ in reasons)),
                       ReasonWords.joined("; ", (several for _, several in reasons)), tuple(codes))


def _counted_besides(planner: Planner, job: Job, several: bool, critic: bool = True) -> str:
    """What the planner's answers for `job` count besides its model and length that may be what keeps it out, in
    words after a comma, for one job or, where `several` are given them, each of them: its LoRA adapter on the modules
    its ``lora_targets`` name less those its ``lora_exclude_modules`` matches (not all-linear's: `adapted_brief`), its
    PPO critic (`JobTraining.critic`; not where `critic` is false: the planner's own reason names it) and its DPO pair
    per micro-batch (where its model is trained one padded sequence per micro-batch, `counts_dpo_pairs`); "" for a job
    with none of them."""
    whose = "each one's" if several else "its"
    targets, states = job.training.counted_targets, job.training.critic
    counted_too = [
        *([f"{whose} LoRA adapter{adapted_brief(targets.pattern, targets.excluded)}"] if targets is not None else []),
        *([f"{whose} PPO critic ({states})"] if critic and states is not None else []),
        *([f"{whose} DPO pair per micro-batch"] if counts_dpo_pairs(planner.job_model(job), job.dpo) else [])]
    return f", with {and_joined(counted_too)} counted" if counted_too else ""


def _beside_rollout(query: Query, trainer_room: int, rollout_gpus: int) -> Query:
    """`query` asked of the `trainer_room` GPUs a pool leaves the trainer beside a job's `rollout_gpus` (at most
    `MAX_ESTIMATED_GPUS`), the rollout beside it."""
    return query.model_copy(update={"budget_gpus": min(trainer_room, MAX_ESTIMATED_GPUS), "rollout_gpus": rollout_gpus})


def _token_budget_auto_reach(query: Query, answer: Answer, pool: Pool, rollout_gpus: int) -> bool | None:
    """Where `answer` (to `query`, or to it without the rollout) finds a job's length beyond the reach of the pool's
    GPUs at Trinity's default token budget with estimates on: whether ``--token-budget auto`` trains it on them as
    they are, as the answer's reason found (its plan on the fewest GPUs, with a layout beside the job's
    `rollout_gpus`); None otherwise, or where the reason left that undecided."""
    alternatives = answer.alternatives
    if (answer.reason_code != ReasonCode.LENGTH_BEYOND_REACH or not _auto_may_reach(query)
            or alternatives is None or "token_budget_auto" not in alternatives.solved):
        return None
    lowered = alternatives.token_budget_auto
    return lowered is not None and _beside(lowered.gpus, rollout_gpus, pool)


def _auto_may_reach(query: Query) -> bool:
    """Whether an answer to `query` may tell that ``--token-budget auto`` trains its length
    (`_token_budget_auto_reach`): asked at Trinity's default token budget with estimates on."""
    return query.token_budget == "default" and query.estimate != "never"


def _whole_pool_question(planner: Planner, job: Job, pool: Pool, length: int | None,
                         budget_gpus: int | None = None) -> Query:
    """The planner's question of `job`'s model on the pool's GPUs (`MAX_ESTIMATED_GPUS` at most; `budget_gpus` where
    given), no rollout beside the trainer: the fewest that train `length`, or (None) the longest length they train."""
    return planner.question(pool.gpu, job.model, pool.gpus_per_node, planner.estimate, pool.host_ram_gb,
                            job.training, max_model_len=length,
                            objective="max_len" if length is None else "min_gpus",
                            budget_gpus=(min(pool.up_nodes * pool.gpus_per_node, MAX_ESTIMATED_GPUS)
                                         if budget_gpus is None else budget_gpus))


def _bought_nodes_reach(planner: Planner, job: Job, pool: Pool,
                        without: frozenset[str]) -> tuple[bool | None, TokenBudgetMode | None]:
    """For a pool whose nodes leave `job` no trainer (it has none now, or its rollout takes them all or leaves no
    trainer count a layout): whether more of its nodes train the job's length beside its rollout, each node with the
    pool's host memory, and with which token budget (`_more_nodes_reach`, asked from one trainer GPU up, so with the
    run's own budget too): --buy places the job there only where they do (a GPU count nodes fix, not a host memory
    need per node they cannot). Asked only for a job with no way to run in any pool (none `without`: its reason is
    asked before the placement's search, on `Planner.reach_work`); (None, None) otherwise."""
    if without:
        return None, None
    from_one_gpu = _whole_pool_question(planner, job, pool, job.asked_max_model_len, budget_gpus=1)
    return _more_nodes_reach(planner, from_one_gpu.model_copy(update={"rollout_gpus": job.rollout_gpus}), pool)


def _more_nodes_reach(planner: Planner, query: Query, pool: Pool) -> tuple[bool | None, TokenBudgetMode | None]:
    """Whether the length `query` asks of the pool's GPUs (its whole pool, no rollout beside the trainer), beyond
    their reach, trains on more of them, and with which token budget: the planner asked again with the most trainer
    GPUs it plans for (`MAX_ESTIMATED_GPUS`; a rollout goes on nodes of its own then), with each of `_reach_budgets`.
    Each question draws on `Planner.reach_work`, CP-SAT's deterministic time, so the answer is the same on every run;
    (None, None) where it ran out first."""
    for budget in _reach_budgets(query):
        if planner.reach_work.left <= 0:
            return None, None
        with work_budget(planner.reach_work):
            asked = query.model_copy(update={"budget_gpus": MAX_ESTIMATED_GPUS, "token_budget": budget})
            answer = planner.answer(asked, pool.gpu, explained=False)
        if answer.plans:
            return True, budget
        if answer.status != "infeasible":  # its deterministic time (or the wall clock's limit) ran out
            return None, None
    return False, None


def _reach_budgets(query: Query) -> list[TokenBudgetMode]:
    """The token budgets `_more_nodes_reach` asks with at the most trainer GPUs: the query's own, unless it asked there
    already (the question its reason answered), and, where that is Trinity's default and estimates are on, ``auto``
    too (a user would try it: long lengths often need it), but not for DPO, whose plans keep the default
    (`Planner.question`)."""
    own: list[TokenBudgetMode] = [] if query.budget_gpus >= MAX_ESTIMATED_GPUS else [query.token_budget]
    return own + (["auto"] if query.token_budget == "default" and query.estimate != "never" and not query.dpo
                  else [])


def reasons_may_ask_reach(planner: Planner, fleet: Fleet, with_ways: dict[int, frozenset[int]]) -> bool:
    """Whether the reasons of the jobs that a placement leaves out may ask whether more nodes reach a length
    (`_more_nodes_reach`, on `Planner.reach_work`): only where a job with a way (`with_ways`: each job with ways -> the
    pools it has them in, `pools_with_ways`) lacks one in a pool it may use (`_elsewhere`), its rollout leaves a
    trainer GPU there, a question is left to ask (`_reach_budgets`) and its length may be beyond the reach of the
    pool's GPUs (`_may_be_beyond_reach`). That is asked now, on
    `Planner.reach_work` too, so the answer is the same on every run; a question left undecided counts as may."""
    beyond: dict[tuple[str, JobTraining, int, int], bool] = {}  # (model, training, pool, length) -> may be beyond
    for index, pools in sorted(with_ways.items()):
        job = fleet.jobs[index]
        for pool_index, pool in enumerate(fleet.pools):
            if (pool_index in pools or not job.may_use(pool)
                    or pool.up_nodes * pool.gpus_per_node <= job.rollout_gpus):
                continue
            least = _whole_pool_question(planner, job, pool, job.asked_max_model_len)
            if not _reach_budgets(least):
                continue
            key = (job.model, job.training, pool_index, job.asked_max_model_len)
            if key not in beyond:
                beyond[key] = _may_be_beyond_reach(planner, job, pool, least)
            if beyond[key]:
                return True
    return False


def _may_be_beyond_reach(planner: Planner, job: Job, pool: Pool, least: Query) -> bool:
    """Whether `_reasons` may find `job`'s length beyond the reach of the pool's GPUs: not where the whole pool
    trains its least length (`least`, `_whole_pool_question`: the reason is then a trainer count with no layout beside
    the rollout), nor where the pool's GPUs train no length (the length is then not what is beyond them). Each asked
    on `Planner.reach_work` (`_plans_on_reach_work`); one left undecided counts as may."""
    trains_it = _plans_on_reach_work(planner, least, pool)
    if trains_it is not False:
        return trains_it is None
    return _plans_on_reach_work(planner, _whole_pool_question(planner, job, pool, None), pool) is not False


def _plans_on_reach_work(planner: Planner, query: Query, pool: Pool) -> bool | None:
    """Whether `query` has a plan on the pool's GPU type, asked on `Planner.reach_work`; None where that is spent or
    the question is left undecided."""
    if planner.reach_work.left <= 0:
        return None
    with work_budget(planner.reach_work):
        answer = planner.answer(query, pool.gpu, explained=False)
    return True if answer.plans else False if answer.status == "infeasible" else None


def _nodes_words(pool: Pool, rollout_gpus: int) -> str:
    """The pool's nodes a trainer beside `rollout_gpus` is laid out on, in words: ``its 2 nodes of 8 GPUs``, or, where
    they hold the most trainer GPUs the planner weighs (`MAX_ESTIMATED_GPUS`) and the rollout on nodes of their own
    (more would give no layout; --buy asks on pools so raised), ``nodes of 8 GPUs, however many``."""
    if pool.up_nodes >= ceil(MAX_ESTIMATED_GPUS / pool.gpus_per_node) + ceil(rollout_gpus / pool.gpus_per_node):
        return f"nodes of {pool.gpus_per_node} GPUs, however many"
    return f"its {counted(pool.up_nodes, 'node')}{_up(pool)} of {pool.gpus_per_node} GPUs"


def _up(pool: Pool) -> str:
    """" up" after a count of the pool's nodes or GPUs where some of its nodes are ``down`` (not counted), else ""."""
    return " up" if pool.down else ""


def _beside(trainer_gpus: int, rollout_gpus: int, pool: Pool) -> bool:
    """Whether a trainer of `trainer_gpus` GPUs has a layout beside `rollout_gpus` on the pool's nodes."""
    room = layout(trainer_gpus, rollout_gpus, pool.gpus_per_node)
    return room is not None and room[1] <= pool.up_nodes


def _fewer_rollout_words(trainer_gpus: int, rollout_gpus: int, pool: Pool, several: bool) -> str:
    """Where fewer rollout GPUs than the job's `rollout_gpus` leave a trainer of `trainer_gpus` a layout on the pool's
    nodes: the most that do, in words for one job or `several` ("" where none does)."""
    fewer = max((room for room in range(rollout_gpus) if _beside(trainer_gpus, room, pool)), default=None)
    if fewer is None:
        return ""
    explorer = "their explorers" if several else "its explorer"
    rollout = f"{fewer} or fewer" if fewer else f"0 ({explorer} on GPUs outside the fleet)"
    return f"; with rollout_gpus: {rollout}, a trainer of {counted(trainer_gpus, 'GPU')} has one"


def _estimates_would(planner: Planner, query: Query, pool: Pool, rollout_gpus: int,
                     limits_named: bool) -> ReasonWords:
    """With estimates off (``--no-estimate``): the plan the memory model's estimates give the job's model and length
    on the fewest GPUs of the pool that leave its `rollout_gpus` a layout there, in words, where they give one; else,
    where the pool's host memory rules theirs out and the tables' too (a plan of the tables on nodes with more of it
    is the reason's to name), the one they would give without it and the host memory it needs, with the least host
    memory one of theirs beside the rollout needs, where that is less ("" otherwise): in parentheses after the
    planner's reason, or, where that named the pool's host memory in full already among its limits (`limits_named`;
    it may end in their parentheses), in a clause after a semicolon, as the reason's own, that does not name the
    figure again; with the codes of the cautions they say."""
    if planner.estimate != "never":
        return ReasonWords()
    (opening, closing) = ("; ", "") if limits_named else (" (", ")")
    if plan := _way_without(planner, query, pool, rollout_gpus, estimate="auto"):
        return opening + estimated_plan_words(plan) + f": drop {planner.option_names.no_estimate}{closing}"
    if pool.host_ram_gb is None or _way_without(planner, query, pool, rollout_gpus, host_ram_gb=None):
        return ReasonWords()
    if plan := _way_without(planner, query, pool, rollout_gpus, estimate="auto", host_ram_gb=None):
        lifted = query.model_copy(update={"estimate": "auto", "host_ram_gb": None, "rollout_gpus": rollout_gpus})
        least = least_host_words(query.counted_catalog(planner.catalog), lifted, plan, pool.gpu)
        bound = "the pool's nodes have" if limits_named else query.host_ram_bound_words
        return (opening + estimated_plan_words(plan) + f", but {_host_over_pool_words(planner, query, plan, bound)}"
                + least + closing)
    return ReasonWords()


def _host_over_pool_words(planner: Planner, query: Query, plan: Plan, bound: str) -> str:
    """The host memory a plan of `query`'s model needs per node, more than its pool's (`bound`, the pool's host memory
    in words: `Query.host_ram_bound_words`, or what its nodes have), in words."""
    model = query.counted_catalog(planner.catalog).model(query.model)  # its LoRA adapter on the job's targets
    return host_over_words(model, plan, query.node_gpus, bound, query)


def _limits_words(planner: Planner, query: Query, pool: Pool, rollout_gpus: int, trainer_room: int) -> ReasonWords:
    """For a job whose trainer has no layout beside its `rollout_gpus` on the pool's nodes: where the pool's host
    memory, or the job's train batch, is what rules out the counts that would have one, the fewest that would train
    the job without it, and the host memory they need (with Offload, or while the model loads) with the least host
    memory a count of at most `trainer_room` GPUs beside the rollout needs where that is less (`least_host_words`),
    or the rule their data-parallel ranks break, in words ("" otherwise)."""
    hints: list[ReasonWords | str] = []
    if pool.host_ram_gb is not None and (plan := _way_without(planner, query, pool, rollout_gpus, host_ram_gb=None)):
        lifted = query.model_copy(update={"host_ram_gb": None, "rollout_gpus": rollout_gpus,
                                          "budget_gpus": min(trainer_room, MAX_ESTIMATED_GPUS)})
        least = least_host_words(query.counted_catalog(planner.catalog), lifted, plan, pool.gpu)
        hints.append(f"{plan.gpus} would, with {plan.setting.label}, but "
                     f"{_host_over_pool_words(planner, query, plan, query.host_ram_bound_words)}" + least
                     + _job_release_words(planner, query, pool, rollout_gpus))
    if query.train_batch_size is not None and (plan := _way_without(planner, query, pool, rollout_gpus,
                                                                    train_batch_size=None)):
        broken = batch_split_violation(query.train_batch_size, plan.gpus, plan.sp, query.train_batch_source,
                                       query.pair_batch)
        hints += [f"{plan.gpus} would, with {plan.setting.label}, but {broken}"] if broken else []
    return " (" + ReasonWords.joined("; ", hints) + ")" if hints else ReasonWords()


def _job_release_words(planner: Planner, query: Query, pool: Pool, rollout_gpus: int) -> str:
    """Where the job names no Trinity release (its host memory counted as the most any release needs: every rank
    loading the model), the newest release (`PATCH_RELEASES_NEWEST_FIRST`) whose count gives its trainer a way
    to run beside `rollout_gpus` within the pool's host memory, with that trainer and its need, in words (``; with the
    job's trinity_version 0.6.0, 8 would, with Env + Offload + SP=4, in 1404.7 GiB of host memory per node``), as
    solve's reason names --trinity-version; "" otherwise."""
    if query.trinity_version is not None:
        return ""
    for release in PATCH_RELEASES_NEWEST_FIRST:
        if plan := _way_without(planner, query.under_release(release), pool, rollout_gpus):
            need = f", in {plan.host_memory_gb:.1f} GiB of host memory per node" if plan.host_memory_gb else ""
            return (f"; with {query.option_names.planned_release(release)}, {plan.gpus} would, with "
                    f"{plan.setting.label}{need}")
    return ""


def _way_without(planner: Planner, query: Query, pool: Pool, rollout_gpus: int, **lifted: object) -> Plan | None:
    """The plan on the fewest trainer GPUs that `query` gets with a limit lifted (`lifted`: its fields set so, such
    as ``host_ram_gb=None``), beside `rollout_gpus` on the pool's nodes; None where it has none there."""
    plan = planner.answer(query.model_copy(update={**lifted, "rollout_gpus": rollout_gpus}), pool.gpu,
                          explained=False).best
    return plan if plan is not None and _beside(plan.gpus, rollout_gpus, pool) else None


def _not_together_words(fleet: Fleet, options: Sequence[Option], required: Collection[int] | None,
                        option_names: OptionNames) -> str:
    """Why no placement exists, in words: every job must be placed (`required` None: ``--minimize nodes``) and they
    do not fit together, or the `required` ones (indexes) do not; the options named as `option_names` do."""
    if required is None:
        placed = f"; without {option_names.minimize_nodes}, as many as fit are placed"
        return f"the jobs do not all fit the fleet together{_fewest_gpus_words(fleet, options, placed)}"
    # Two required jobs at least: one alone always fits (a way it has fits its pool's nodes, which are all free).
    names = [fleet.jobs[job].name for job in sorted(required)]
    words = _fewest_gpus_words(fleet, [option for option in options if option.job in required],
                               f"; {option_names.buy} names the nodes to add for them")
    return f"the required jobs ({named_jobs(names)}) do not all fit the fleet together{words}"


def _fewest_gpus_words(fleet: Fleet, options: Sequence[Option], after: str) -> str:
    """What the jobs of `options` need at the least against what the fleet has, in words: the GPUs of each job's
    smallest way to run (whole nodes counted whole), summed; and what to do (`after`)."""
    fewest, pools = fewest_gpus(fleet, options)
    host = any(option.host_tenths > 0 for option in options)  # a pool's host memory holds what the jobs need too
    packing = ("but their layouts, with the host memory they need on a node, do not pack into the nodes"
               if host else "but their layouts do not pack into the nodes")
    has, need = sum(pool.up_nodes * pool.gpus_per_node for pool in fleet.pools), sum(fewest.values())
    any_down = any(pool.down for pool in fleet.pools)
    if need > has:
        return f": at their fewest they take {counted(need, 'GPU')}, more than {fleet_gpus_words(has, any_down)}{after}"
    tightest = None  # (share of the pool, words) of the pool its own jobs fill the most
    for index, pool in enumerate(fleet.pools if len(fleet.pools) > 1 else ()):  # the jobs only one pool can run
        bound = [job for job, where in pools.items() if where == {index}]
        bound_need, pool_has = sum(fewest[job] for job in bound), pool.up_nodes * pool.gpus_per_node
        named = named_jobs([fleet.jobs[job].name for job in bound])
        jobs, fewest_words = ((f"the job only pool {pool.name} can run ({named}) takes", "at its fewest")
                              if len(bound) == 1 else
                              (f"the {len(bound)} jobs only pool {pool.name} can run ({named}) take",
                               "at their fewest"))
        if bound_need > pool_has:
            return f": {jobs} {fewest_words} {counted(bound_need, 'GPU')}, more than its {pool_has}{after}"
        if bound and (tightest is None or bound_need / pool_has > tightest[0]):
            tightest = (bound_need / pool_has, f" ({jobs} {bound_need} of its {pool_has})")
    # Where no pool's own jobs overflow it, the packing is the fleet's: the pool its own jobs fill the most is named
    # beside it, not as the cause (its jobs may pack there alone, the others leaving no room for them elsewhere).
    within = "" if tightest is None else tightest[1]
    return (f": at their fewest they take {need} of {fleet_gpus_words(has, any_down, noun=True)}{within}, "
            f"{packing}{after}")


def all_unplaced(fleet: Fleet, verdict: Status, interrupted: bool, host_rounded: tuple[str, ...] = (),
                 options: Sequence[Option] = (), required: Collection[int] | None = None,
                 option_names: OptionNames = COMMAND_OPTIONS) -> tuple[Unplaced, ...]:
    """Every job left out, for one reason, where the search placed none: the jobs that must be placed (every one,
    as ``--minimize nodes`` asks, where `required` is None; else the `required` ones, indexes) do not fit together
    (`verdict` infeasible), Ctrl-C came first, the host memory of the pools `host_rounded` was rounded up, or time ran
    out."""
    code, reason = (
        (UnplacedCode.JOBS_DO_NOT_FIT_TOGETHER, _not_together_words(fleet, options, required, option_names))
        if verdict == "infeasible" else
        (UnplacedCode.INTERRUPTED, "interrupted before a placement was found") if interrupted else
        (UnplacedCode.HOST_MEMORY_ROUNDED, (f"the jobs do not all fit the fleet with the host memory of "
                                            f"{', '.join(host_rounded)} rounded up; they may with the exact "
                                            "figures, which fewer jobs per run may keep"))
        if host_rounded else
        (UnplacedCode.TIME_LIMIT, f"no placement found within the time limit (raise {option_names.time_limit})"))
    return tuple(left_out(job, reason=reason, reason_code=code) for job in fleet.jobs)
