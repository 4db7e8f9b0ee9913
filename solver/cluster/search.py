"""The placement's search (`place`): the jobs' ways worked out, the placement model solved one objective after
another within the time limit (Ctrl-C keeps the best placement so far: `StopOnInterrupt`), and the answer read back
as `Placement`s on their nodes, grown onto idle GPUs and with the reasons of the jobs left out."""

from __future__ import annotations

import signal
import threading
import time
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Literal

from ortools.sat.python import cp_model

from solver import clock
from solver.cluster.greedy import greedy_choice
from solver.cluster.model import (
    Kept,
    PlacementModel,
    build_placement_model,
    count_of,
    first_stage_objective,
    hint_placement,
    keep_running_jobs,
    most_priority,
    placement_solver,
    placement_stages,
    required_jobs,
    required_names,
)
from solver.cluster.options import (
    Footprint,
    Option,
    Planner,
    WaysLimit,
    fleet_options,
    jobs_without_ways,
    keeps_running,
    pools_with_ways,
)
from solver.cluster.placements import (
    as_placement,
    gpus_on_nodes,
    pool_use,
    with_current,
    with_node_host_cautions,
    with_solve_best,
)
from solver.cluster.reasons import (
    SmallerAsks,
    all_unplaced,
    left_out,
    reasons_may_ask_reach,
    unplaced_reasons,
    unplaced_without_a_way,
    why_no_option,
)
from solver.cluster.widen import widen_jobs
from solver.model import SolverStatus, stopped_by_wall_clock
from solver.query import Progress
from solver.results import (
    ClusterResult,
    Placement,
    PlacementCount,
    Status,
    Unplaced,
    UnplacedCode,
)
from solver.rules import OptionNames
from solver.solve import checked, run_deadline
from solver.tables import DETERMINISTIC_PER_SECOND, Fleet, RunningJob

if TYPE_CHECKING:  # Python 3.11's typing.Self, for the type checker alone (annotations are not evaluated)
    from typing_extensions import Self

REASONS_SHARE = 0.6
"""The time the search leaves for the unplaced jobs' reasons, as a share of the time working out the jobs' ways
took: where a job has no way in a pool it may use, its reason asks the planner why, once per job shape, after
the search (0.3 to 0.57 of that time in benchmarks/cluster.py's fleets)."""


SEARCH_SHARE = 0.97
"""The share of the time limit by which the search ends (less `READ_BACK_S` and the reasons' time), leaving the rest
to read the answer back."""

READ_BACK_S = 0.02
"""Seconds kept, besides `SEARCH_SHARE`'s rest, to read the answer back."""

LEAST_WORK = 0.01
"""The least deterministic time a solve of the placement search is given (where the stages before it spent the
budget): enough to read back the placement hinted to it."""


def least_time_limit_to_search_s(planning_s: float, building_s: float = 0.0) -> float:
    """The time limit below which the search gets no time after `planning_s` of working out the jobs' ways,
    `building_s` of building the placement model on them, and the time kept for the unplaced jobs' reasons
    (`REASONS_SHARE` of `planning_s`, at the most)."""
    return (planning_s * (1 + REASONS_SHARE) + building_s + READ_BACK_S) / SEARCH_SHARE


STAGES = {"priority": "placed priority", "nodes": "nodes used", "stays": "running jobs kept",
          "jobs": "jobs tied in priority", "length": "longer contexts", "cost": "step-time cost",
          "tie-break": "tie-break", "bought GPUs": "GPUs bought", "bought nodes": "nodes bought"}


class ProgressCallback(cp_model.CpSolverSolutionCallback):
    """Reports each better placement of a stage to `report` (`Progress`): what the stage counts in its objective's
    value and bound (`counted`), the bound through `bounded` then; only where one of them changes (a first stage
    that keeps running jobs finds placements that keep more of them at the same count)."""

    def __init__(self, stage: str, report: Progress, started: float, bounded: Callable[[int], int],
                 counted: Callable[[int], int]) -> None:
        super().__init__()
        self.stage, self.report, self.started, self.bounded, self.counted = stage, report, started, bounded, counted
        self.reported: tuple[int, int] | None = None

    def on_solution_callback(self) -> None:
        shown = (self.counted(round(self.objective_value)),
                 self.bounded(self.counted(round(self.best_objective_bound))))
        if shown != self.reported:
            self.reported = shown
            self.report(self.stage, *shown, time.monotonic() - self.started)


def place(
    fleet: Fleet,
    planner: Planner,
    *,
    minimize: Literal["nodes"] | None = None,
    workers: int = 1,
    seed: int = 0,
    progress: Progress | None = None,
    widen: bool = True,
    running: Sequence[RunningJob] = (),
) -> ClusterResult:
    """Place `fleet`'s jobs on its pools (see `solver.cluster`'s docstring for the model and objectives), within
    `planner`'s time limit, with its ways to run (a `Planner` of `fleet`'s catalogue, fresh: it keeps this run's
    answers and spends its deterministic time); `widen`: let placed jobs grow onto idle GPUs of their nodes where that
    makes them faster or longer; `running`: the jobs that run now (`read_current`), kept where they run unless moving
    one places more priority (or, with `minimize`, uses fewer nodes); each placement and unplaced job then says
    whether it stays, moves, starts or stops (`with_current`). Each of the planner's solves ends with the time limit
    (`run_deadline`)."""
    started = time.monotonic()
    with run_deadline(started + planner.time_limit_s):
        return _place(fleet, planner, minimize, workers, seed, progress, widen, running, started)


def _place(fleet: Fleet, planner: Planner, minimize: Literal["nodes"] | None, workers: int, seed: int,
           progress: Progress | None, widen: bool, running: Sequence[RunningJob], started: float) -> ClusterResult:
    """`place`'s placement, begun at `started` (a `time.monotonic()`)."""
    time_limit_s = planner.time_limit_s
    every_job = minimize == "nodes"
    required = required_jobs(fleet, every_job)
    with before_search():
        planned, stuck, unplaced = _plan_jobs(planner, fleet, every_job, started, running)
        # A required job fits nowhere: infeasible (unknown where its ways rest on a solve out of time), whatever the
        # jobs cut short would have; the other jobs are not placed either, and say why.
        if required & set(stuck):
            return _none_placed(planned, [job for job in stuck if job in required], unplaced)
        if required & set(planned.cut_short):  # a job that must be placed has no ways yet: no placement can be found
            return _ways_cut_short_result(planned)
        options = planned.options
        built, stages, start = placement_search(fleet, options, every_job, running)
    solver = placement_solver(workers, seed)
    building_s = time.monotonic() - started - planned.planning_s
    with_ways = pools_with_ways(options)
    # The wall clock's safety net: it leaves time to read the answer back and to say why the jobs left out are.
    reasons_s = _time_for_reasons(fleet, with_ways, planned.planning_s)
    deadline = started + time_limit_s * SEARCH_SHARE - READ_BACK_S - reasons_s
    # The questions whether more nodes reach a length draw on the same deterministic time: the stages get what those
    # asked already took less, and where the reasons after the search may ask more, less what is left to them.
    reach = planner.reach_work
    kept = reach.left if reasons_may_ask_reach(planner, fleet, with_ways) else 0.0  # its own questions spend first
    budget = DETERMINISTIC_PER_SECOND * time_limit_s - reach.spent - kept
    with StopOnInterrupt(solver) as interrupt:
        staged = solve_stages(start, built, stages, interrupt, deadline, budget,
                              partial(_trivially_bounded, fleet=fleet, options=options, every_job=every_job),
                              None if progress is None else partial(ProgressCallback, report=progress,
                                                                    started=started),
                              most_priority(fleet, options))
        search, first_failed = staged.search, staged.first_failed
        # No first solution: the greedy placement (still the search's) stands in, unless it is empty, CP-SAT proved
        # that none exists, every job must be placed, or it leaves out a required job.
        placed_jobs = {option.job for option, value in zip(options, search.values) if value}
        if first_failed is not None and not (first_failed != cp_model.INFEASIBLE and placed_jobs and not every_job
                                             and required <= placed_jobs):
            return _no_placement_result(planned, staged, interrupt, (budget - staged.spent, deadline), building_s)
    if first_failed is not None:  # out of time before a first solution: the greedy placement stands, its priority
        search = replace(search, proven=False)  # its objective (`placement_search`)
    # After the search, within the time limit: widening, then the hints, leave the reasons their time.
    reasons_by = started + time_limit_s - READ_BACK_S
    widen_by = reasons_by - reasons_s if widen and not interrupt.caught else None
    hints_by = None if interrupt.caught else reasons_by - reasons_s
    return _placed_result(planned, search, planner, widen_by, interrupt.caught, seed, building_s,
                          (hints_by, reasons_by))


def _plan_jobs(planner: Planner, fleet: Fleet, every_job: bool, started: float,
               running: Sequence[RunningJob]) -> tuple[_Planned, list[int], tuple[Unplaced, ...]]:
    """What the placement search starts from (`_Planned`, placing since `started`), with the jobs that have no way to
    run (`stuck`, indexes) and why (`Unplaced`): both asked now, within the time limit (`WaysLimit`: the ways first,
    then the reasons, which get what the ways left of it), so that the time they take counts against it."""
    limit = WaysLimit.of(planner, started)
    ways = fleet_options(planner, fleet, limit, running, required_jobs(fleet, every_job))
    stuck = [job for job in jobs_without_ways(fleet, ways.options) if job not in ways.cut_short]
    reasons = [why_no_option(planner, fleet, i, limit=limit) for i in stuck]
    unplaced = tuple(unplaced_without_a_way(fleet.jobs[i], why) for i, why in zip(stuck, reasons))
    wall_clock_cut = ways.wall_clock_cut or any(why.cut_short == "wall clock" for why in reasons)
    planned = _Planned(fleet=fleet, options=ways.options, every_job=every_job, host_rounded=ways.host_rounded,
                       no_way=tuple(fleet.jobs[i].name for i in stuck), undecided=planner.undecided, started=started,
                       planning_s=time.monotonic() - started, option_names=planner.option_names,
                       cut_short=ways.cut_short, wall_clock_cut=wall_clock_cut, undecided_jobs=ways.undecided_jobs,
                       running=tuple(running), covering_time_limit_s=ways.covering_time_limit_s)
    return planned, stuck, unplaced


@dataclass(frozen=True)
class _Planned:
    """What the placement search starts from, worked out before it: every job's ways (`options`), whether every job
    must be placed (`every_job`: ``--minimize nodes``), the pools whose host memory the ways rounded up, the jobs
    with no way at all (`no_way`, their names), how many of the planner's solves behind the ways ran out of time
    (`undecided`; widening's own questions leave the placement as it is), when placing `started`
    (`time.monotonic`) and the seconds planning took."""

    fleet: Fleet
    options: list[Option]
    every_job: bool
    host_rounded: tuple[str, ...]
    no_way: tuple[str, ...]
    undecided: int
    started: float
    planning_s: float
    option_names: OptionNames
    cut_short: tuple[int, ...] = ()
    """The jobs (indexes) whose ways the time limit left unasked (`WaysLimit`): they are left out."""
    wall_clock_cut: bool = False
    """Whether the wall clock cut the jobs' ways, or the reasons of the jobs with none, short (else their count of
    questions, the same on every run, did, or nothing)."""
    undecided_jobs: frozenset[int] = frozenset()
    """The jobs (indexes) whose ways rest on a solve that ran out of time (`FleetWays.undecided_jobs`)."""
    running: tuple[RunningJob, ...] = ()
    """The jobs that run now (``--current``), which the answer says stay, move or stop (`with_current`)."""
    covering_time_limit_s: int | None = None
    """The time limit that would likely work out the ways of the jobs `cut_short` (`FleetWays`')."""

    @property
    def unproven(self) -> bool:
        """Whether the ways leave any placement unproven: host memory rounded up, ways undecided or left unasked (a
        running job's too, kept as it runs: `Option.ways_cut_short`)."""
        return bool(self.host_rounded or self.undecided or self.cut_short
                    or any(option.ways_cut_short for option in self.options))

    @property
    def required_undecided(self) -> bool:
        """Whether a solve behind the ways of the jobs that must be placed ran out of time (a way of theirs may be left
        out): they are asked first, so every answer their ways rest on was asked in one of their turns."""
        return bool(self.undecided_jobs & required_jobs(self.fleet, self.every_job))

    @property
    def cut_short_names(self) -> tuple[str, ...]:
        """The jobs whose ways the time limit left unasked, by name."""
        return tuple(self.fleet.jobs[job].name for job in self.cut_short)

    @property
    def ways_stopped(self) -> tuple[str, ...]:
        """``ways`` where the wall clock cut the jobs' ways short (`Search.wall_clock_stopped`'s first step)."""
        return ("ways",) if self.wall_clock_cut else ()

    @property
    def counted_by(self) -> PlacementCount:
        """What the first stage counts: the nodes used where every job must be placed, else the placed priority."""
        return "nodes" if self.every_job else "priority"


def placement_search(fleet: Fleet, options: list[Option], every_job: bool, running: Sequence[RunningJob] = ()
                     ) -> tuple[PlacementModel, list[tuple[str, cp_model.LinearExprT, bool]], Search]:
    """What `place` searches on `fleet` with these ways (`options`): the placement model (keeping the `running` jobs
    where they run: `keep_running_jobs`), its stages (`placement_stages`) and the search's start (`greedy_start`), for
    `solve_stages`."""
    built = build_placement_model(fleet, options, every_job)
    if running:
        built = keep_running_jobs(built, fleet, options, running)
    start = greedy_start(fleet, options, built, running)
    return (built, placement_stages(fleet, options, built, every_job),
            replace(start, objective=_first_stage_value(fleet, options, start, every_job)))


def _first_stage_value(fleet: Fleet, options: list[Option], search: Search, every_job: bool) -> int | None:
    """What the first stage counts (`placement_stages`) of the placement `search` holds: the nodes it uses where
    `every_job` must be placed, else the priority it places; None where it leaves a required job out (no placement of
    the model)."""
    chosen = [option for option, value in zip(options, search.values) if value]
    if not required_jobs(fleet, every_job) <= {option.job for option in chosen}:
        return None
    if every_job:
        return sum(search.counts.values()) + sum(option.whole_nodes for option in chosen)
    return sum(fleet.jobs[option.job].priority for option in chosen)


def greedy_start(fleet: Fleet, options: list[Option], built: PlacementModel,
                 running: Sequence[RunningJob] = ()) -> Search:
    """The search's start: a greedy placement (`greedy_choice`: the `running` jobs kept where they run first), hinted to
    CP-SAT (which never returns less); it stands if time runs out before a first solution, the running jobs it keeps
    staying where they run (`Search.kept`)."""
    choice = greedy_choice(fleet, options, smallest_first=True, running=running)
    values, filling = _as_model_values(built, choice, options)
    filled = Counter(filling.values())
    counts = {key: filled[key] for key in built.pattern_counts}
    if not running:
        hint_placement(built, values, counts)
        return Search(values=values, counts=counts)
    staying = {job.job: job for job in running if job.job in choice and choice[job.job][1] == list(job.nodes)
               and keeps_running(fleet, choice[job.job][0], job)}
    fills = {(job.pool, job.nodes[0]): filling[job.pool, job.nodes[0]][1] for job in staying.values()
             if choice[job.job][0].size}
    kept = Kept(staying, fills, tuple(running))
    hint_placement(built, values, counts, kept)
    return Search(values=values, counts=counts, kept=kept)


def _placed_result(planned: _Planned, search: Search, planner: Planner, widen_by: float | None, interrupted: bool,
                   seed: int, building_s: float, asked_by: tuple[float | None, float]) -> ClusterResult:
    """The answer of the search's placement: the chosen ways on their nodes, grown onto idle GPUs of their nodes
    until `widen_by` (None: not grown), the smaller asks of the jobs left out asked until `asked_by`'s first (None:
    not asked; Ctrl-C while growing or asking them leaves the placement as placed, without them) and their reasons
    until its second (each a `time.monotonic()`), with the seconds building the placement model took
    (`building_s`). Ctrl-C after the search (`interrupted` where it stopped the search) stops widening, the hints
    and the reasons, which are asked again with Ctrl-C held (`HoldInterrupt`), or marking the jobs that run now
    (`with_current`), marked again so: the placement comes out as placed, `interrupted`. Last, until the reasons'
    deadline too, each placed job's `solve_best` (`with_solve_best`: those left unasked counted)."""
    hints_by, reasons_by = asked_by
    fleet, options, values, counts = planned.fleet, planned.options, search.values, search.counts
    first_proven = search.bound is not None and search.objective == search.bound  # no placement holds more priority
    # ... of all that the jobs' ways allow: their host memory exact, none of them left out for want of time.
    certain = first_proven and not planned.unproven
    kept_most = search.kept_most
    widened = widen_by is not None  # whether the placement grew its jobs onto idle GPUs
    try:
        placements, unplaced, stopped, final = _decode(
            fleet, options, values, counts, planner, widen_by, first_proven, seed, certain, (hints_by, reasons_by),
            planned.cut_short, search.kept, onto_idle_nodes=not planned.every_job, proven_stages=search.proven_stages,
            stages_solved=search.stages_solved)
    except KeyboardInterrupt:  # Ctrl-C while widening, asking the hints or the reasons: the placement stands, as
        interrupted, widened = True, False  # placed, with its reasons (Ctrl-C held meanwhile: the answer comes out)
        with HoldInterrupt():
            placements, unplaced, stopped, final = _decode(
                fleet, options, values, counts, planner, None, first_proven, certain=certain,
                asked_by=(None, reasons_by), cut_short=planned.cut_short, kept=search.kept,
                proven_stages=search.proven_stages, stages_solved=search.stages_solved)
    proven = search.proven and not planned.unproven
    result = ClusterResult(status="optimal" if proven else "feasible", objective=search.objective, bound=search.bound,
                           objective_counts=planned.counted_by, placements=placements, unplaced=unplaced,
                           required=required_names(fleet), no_way_to_run=planned.no_way,
                           pools=pool_use(fleet, placements),
                           host_rounded=planned.host_rounded, undecided_ways=planned.undecided,
                           tie_broken=search.tie_broken,
                           wall_clock_stopped=planned.ways_stopped + search.wall_clock_stopped + stopped,
                           ways_cut_short=planned.cut_short_names, ways_time_limit_s=planned.covering_time_limit_s,
                           wall_time_s=time.monotonic() - planned.started,
                           planning_s=planned.planning_s, building_s=building_s,
                           least_time_limit_s=least_time_limit_to_search_s(planned.planning_s, building_s),
                           interrupted=interrupted)
    if planned.running:
        result = _marked_current(result, planner, planned, kept_most, final, widened, reasons_by)
    # Last, within what is left of the time limit: solve's best on the placed jobs' trainer GPUs.
    asked = with_solve_best(planner, fleet, result, {job: way for job, (way, _) in final.items()}, reasons_by)
    return asked.model_copy(update={"wall_time_s": time.monotonic() - planned.started})


def _marked_current(result: ClusterResult, planner: Planner, planned: _Planned, kept_most: int | None,
                    final: dict[int, tuple[Option, list[int]]], widened: bool, until: float) -> ClusterResult:
    """`result` with its placements and unplaced jobs marked as to the jobs that run now (`with_current`: with each
    placed job's way and nodes as the placement ends, `final`; `widened`: whether it grew its jobs; its questions
    asked until `until`, a `time.monotonic()`). Ctrl-C while they are marked leaves the placement as it stands,
    marked again with Ctrl-C held (`HoldInterrupt`), `interrupted`."""
    # Not over every job's ways (some left out, or host memory rounded up): another placement may keep one more.
    marked = partial(with_current, planner, planned.fleet, running=planned.running, options=planned.options,
                     kept_most=None if planned.unproven else kept_most, undecided_jobs=planned.undecided_jobs,
                     final=final, widens=widened, until=until)
    if not result.interrupted:
        try:
            return marked(result)
        except KeyboardInterrupt:  # Ctrl-C while the running jobs are marked: the placement stands, as for widening
            result = result.model_copy(update={"interrupted": True})
    with HoldInterrupt():  # Ctrl-C held: the answer comes out, its running jobs marked
        return marked(result)


def _no_placement_result(planned: _Planned, staged: _Staged, interrupt: StopOnInterrupt,
                         limits: tuple[float, float], building_s: float) -> ClusterResult:
    """The answer where the search's first stage found no placement (its CP-SAT status `staged.first_failed`) and
    no greedy one stands in: infeasible where CP-SAT proved it, unless the host memory of the pools
    `planned.host_rounded` was rounded up (and the jobs are not proved not to fit with it left out, within `limits`:
    the deterministic time left, and the wall clock's deadline) or some of the required jobs' ways were left out
    (`planned.required_undecided`; the jobs not required may have been cut short, or left undecided); unknown
    otherwise (time ran out, or Ctrl-C came first). Every job is left out, for that
    reason. Where time ran out, the least time limit that leaves the search time after working out the jobs' ways
    and `building_s` of building the placement model on them comes with it, for the view to name."""
    fleet, host_rounded, failed = planned.fleet, planned.host_rounded, staged.first_failed
    stopped = staged.search.wall_clock_stopped
    # With host memory rounded, no placement of the rounded needs proves nothing, unless the jobs do not
    # fit even with host memory left out.
    rounded_only = False
    if failed == cp_model.INFEASIBLE and host_rounded:
        proved_without_host, wall_stopped = _infeasible_without_host(fleet, planned.options, planned.every_job,
                                                                     interrupt, *limits)
        rounded_only, stopped = not proved_without_host, stopped + (("without host",) if wall_stopped else ())
    # The jobs cut short and the undecided ways of the others are those of jobs not required: no way of theirs makes
    # room for the required jobs, which a placement may place without them.
    proved = failed == cp_model.INFEASIBLE and not rounded_only and not planned.required_undecided
    verdict: Status = "infeasible" if proved else "unknown"
    return ClusterResult(status=verdict, objective=None, bound=None, objective_counts=planned.counted_by,
                         placements=(), pools=pool_use(fleet, ()), required=required_names(fleet),
                         unplaced=all_unplaced(fleet, verdict, interrupt.caught,
                                               host_rounded if rounded_only else (), planned.options,
                                               None if planned.every_job else required_jobs(fleet, False),
                                               planned.option_names),
                         no_way_to_run=planned.no_way, host_rounded=host_rounded, undecided_ways=planned.undecided,
                         wall_clock_stopped=planned.ways_stopped + stopped, ways_cut_short=planned.cut_short_names,
                         ways_time_limit_s=planned.covering_time_limit_s,
                         wall_time_s=time.monotonic() - planned.started,
                         interrupted=interrupt.caught, planning_s=planned.planning_s, building_s=building_s,
                         least_time_limit_s=(least_time_limit_to_search_s(planned.planning_s, building_s)
                                             if failed != cp_model.INFEASIBLE and not interrupt.caught else None))


def _ways_cut_short_result(planned: _Planned) -> ClusterResult:
    """The answer where the time limit left a job that must be placed (every job, with ``--minimize nodes``) without
    its ways (`planned.cut_short`): status unknown, no placement, every job left out for want of time."""
    fleet = planned.fleet
    return ClusterResult(status="unknown", objective=None, bound=None, objective_counts=planned.counted_by,
                         placements=(), pools=pool_use(fleet, ()), required=required_names(fleet),
                         unplaced=all_unplaced(fleet, "unknown", False, option_names=planned.option_names),
                         no_way_to_run=(), host_rounded=planned.host_rounded, undecided_ways=planned.undecided,
                         wall_clock_stopped=planned.ways_stopped, ways_cut_short=planned.cut_short_names,
                         ways_time_limit_s=planned.covering_time_limit_s,
                         wall_time_s=time.monotonic() - planned.started, planning_s=planned.planning_s)


def _none_placed(planned: _Planned, stuck: list[int], unplaced: tuple[Unplaced, ...]) -> ClusterResult:
    """The answer where the required jobs `stuck` (indexes) fit nowhere, as `unplaced` says: ``--minimize nodes``
    places every job or none, and a placement places every required job or is none; the other jobs are not placed
    either, for that reason: infeasible, unless a solve behind the required jobs' ways ran out of time (unknown)."""
    fleet, names = planned.fleet, ", ".join(fleet_job.name for i, fleet_job in enumerate(planned.fleet.jobs)
                                            if i in stuck)
    fit = "fits" if len(stuck) == 1 else "fit"
    why = (f"{planned.option_names.minimize_nodes} places every job or none, and {names} {fit} nowhere"
           if planned.every_job else
           f"the required {'job' if len(stuck) == 1 else 'jobs'} {names} {fit} nowhere, and a placement places "
           "every required job or none")
    without_way = {unplaced_job.job for unplaced_job in unplaced}
    others = tuple(left_out(job, reason=why, reason_code=UnplacedCode.ANOTHER_JOB_FITS_NOWHERE)
                   for job in fleet.jobs if job.name not in without_way)
    return ClusterResult(status="unknown" if planned.required_undecided else "infeasible", objective=None, bound=None,
                         objective_counts=planned.counted_by, placements=(), unplaced=unplaced + others,
                         required=required_names(fleet), no_way_to_run=planned.no_way, pools=pool_use(fleet, ()),
                         host_rounded=planned.host_rounded, undecided_ways=planned.undecided,
                         wall_clock_stopped=planned.ways_stopped,
                         ways_cut_short=planned.cut_short_names, ways_time_limit_s=planned.covering_time_limit_s,
                         wall_time_s=time.monotonic() - planned.started, planning_s=planned.planning_s)


def _time_for_reasons(fleet: Fleet, with_ways: dict[int, frozenset[int]], planning_s: float) -> float:
    """Seconds the search leaves for the reasons of the jobs it leaves out (`REASONS_SHARE` of `planning_s`, the
    time their ways took): none where they ask the planner nothing (`_reasons_ask_planner`)."""
    return REASONS_SHARE * planning_s if _reasons_ask_planner(fleet, with_ways) else 0.0


def _reasons_ask_planner(fleet: Fleet, with_ways: dict[int, frozenset[int]]) -> bool:
    """Whether the reasons of the jobs the search leaves out may ask the planner questions (why a pool they may use
    has no way for them): where some job with a way lacks one in a pool it may use (`with_ways`: each job with ways ->
    the pools it has them in; a job with none was asked about before the search; a job left out then has no pool to
    ask about). The search then leaves them time (`_time_for_reasons`)."""
    return any(len(pools) < sum(map(fleet.jobs[job].may_use, fleet.pools)) for job, pools in with_ways.items())


@dataclass(frozen=True)
class Search:
    """The staged search's placement so far (the options' values and the pattern counts), the first stage's
    objective and bound, whether every stage solved so far is proven, and whether the tie-break proved its pick."""

    values: list[int]
    counts: dict[tuple[int, tuple[Footprint, ...]], int]
    objective: int | None = None
    bound: int | None = None
    proven: bool = True
    tie_broken: bool = False
    """Whether the tie-break ran and proved its pick among the equally good placements."""
    wall_clock_stopped: tuple[str, ...] = ()
    """The stages (`STAGES`' keys) the wall clock stopped before their deterministic time ran out."""
    kept: Kept | None = None
    """The running jobs that stay, and the pattern that fills each node they share (`KeptJobs.kept`); None where the
    fleet runs nothing now, or the search found no placement."""
    kept_proven: bool = False
    """Whether the stage of running jobs kept (``stays``) proved its count the most that a placement of the first
    stage's objective keeps (the later stages hold it: their placements keep as many)."""
    stages_solved: tuple[str, ...] = ()
    """The stages (`placement_stages`' names) that found a placement, in the order solved: not those skipped, left
    unsolved by the time limit or Ctrl-C, or never reached (the reasons of the jobs left out name them)."""

    @property
    def kept_most(self) -> int | None:
        """How many running jobs the placement keeps where they run, where the stage of running jobs kept proved that
        the most a placement of the first stage's objective keeps (whatever the stages after it proved); else None."""
        return len(self.kept.staying) if self.kept is not None and self.kept_proven else None

    @property
    def proven_stages(self) -> frozenset[str]:
        """The stages after the first (`placement_stages`' names) that the search proved: the running jobs kept where
        that stage proved its count (`kept_proven`), and, where every stage is proven, the jobs placed in a tie of
        priority, the length and the cost too."""
        proven = ["stays", "jobs", "length", "cost"] if self.proven else []
        return frozenset([*(["stays"] if self.kept_proven else []), *proven])


@dataclass(frozen=True)
class _Staged:
    """What `solve_stages` reached: the placement of the last stage it solved (`search`; the start it was given where
    none), the first stage's CP-SAT status where that stage found no placement (`first_failed`; else None), and the
    deterministic time its stages spent."""

    search: Search
    first_failed: SolverStatus | None = None
    spent: float = 0.0


def solve_stages(start: Search, built: PlacementModel, stages: list[tuple[str, cp_model.LinearExprT, bool]],
                 interrupt: StopOnInterrupt, deadline: float, budget: float, first_bound: Callable[[int], int],
                 progress: Callable[..., ProgressCallback] | None, most: int | None = None) -> _Staged:
    """Solve the `stages` (name, expression, maximise) one after the other with `interrupt`'s solver within `budget`
    of CP-SAT's deterministic time, each keeping the value the one before it reached and starting from its answer
    (the first from `start`, a greedy placement; where running jobs may stay, the first stage weighs them below its
    own count: `first_stage_objective`, its objective and bound read back as that count, which the stages after it
    keep; proven where its bound, as `first_bound` reports it, meets it); the first stage gets 60% of the budget, the
    second half of what is left then (as does the stage of length after it; the stage of jobs tied in priority,
    which settles which jobs run, three quarters), the rest the rest (what a stage leaves goes to the next). The
    wall clock's `deadline` is a safety net for all of them together: a stage it stops first is named in the answer
    (`Search.wall_clock_stopped`).
    Returns the placement reached (`_Staged`), with the first stage's CP-SAT status where it found no placement; a
    later stage left unsolved keeps the previous stage's answer. The stage of jobs tied in priority is skipped where
    the first stage placed `most` priority (`most_priority`: every job with a way placed, so no set of jobs differs and
    it can change nothing), its share left to the stages after it. The tie-break is solved only where every stage
    before it is proven."""
    model, solver = built.model, interrupt.solver
    search, spent = start, 0.0
    for position, (name, expression, maximise) in enumerate(stages):
        if interrupt.caught or (name == "tie-break" and not search.proven):
            return _Staged(replace(search, proven=search.proven and not interrupt.caught), spent=spent)
        if name == "jobs" and search.objective == most:
            continue
        share = 0.6 if position == 0 else 0.75 if name == "jobs" else 0.5 if position == 1 or name == "length" else 1.0
        _set_limits(solver, (budget - spent) * share, deadline)
        objective, weight = first_stage_objective(built, expression, maximise) if position == 0 else (expression, 1)
        counted = partial(count_of, weight=weight, maximise=maximise)
        (model.maximize if maximise else model.minimize)(objective)
        callback = None if progress is None else progress(STAGES[name], bounded=first_bound if position == 0 else int,
                                                          counted=counted)
        status = checked(solver, model, interrupt.solve(model, callback))
        spent += solver.response_proto.deterministic_time
        if stopped_by_wall_clock(solver, status) and not interrupt.caught:
            search = replace(search, wall_clock_stopped=(*search.wall_clock_stopped, name))
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            if position == 0:
                return _Staged(search, first_failed=status, spent=spent)
            # A stage left unsolved proves nothing; the previous stage's answer stands (its hint is still in the model).
            return _Staged(replace(search, proven=search.proven and name == "tie-break"), spent=spent)
        search = replace(search, values=[solver.value(x) for x in built.chosen],
                         counts={key: solver.value(var) for key, var in built.pattern_counts.items()},
                         kept=None if built.kept is None else built.kept.kept(solver.value),
                         stages_solved=(*search.stages_solved, name))
        if name == "stays":  # OPTIMAL is a proof, even where Ctrl-C came as it ended
            search = replace(search, kept_proven=status == cp_model.OPTIMAL)
        reached, bound = counted(round(solver.objective_value)), counted(round(solver.best_objective_bound))
        if position == 0:
            search = replace(search, objective=reached, bound=first_bound(bound))
        # The first stage proves its count where its bound, as the answer reports it (`first_bound`), meets it, though
        # not yet the most running jobs kept with it (the stage after it proves that).
        optimal = status == cp_model.OPTIMAL or (position == 0 and reached == search.bound)
        if name != "tie-break":
            search = replace(search, proven=search.proven and optimal and not interrupt.caught)
        else:  # its outcome leaves the status as it is: only which of the equally good placements comes out
            # Proven, even where Ctrl-C came as it ended.
            search = replace(search, tie_broken=status == cp_model.OPTIMAL)
        model.add(expression >= reached if maximise else expression <= reached)
        hint_placement(built, search.values, search.counts, search.kept)
    return _Staged(search, spent=spent)


def _set_limits(solver: cp_model.CpSolver, work: float, deadline: float) -> None:
    """Limit `solver`'s next solve to `work` of deterministic time (at least `LEAST_WORK`) and, as a safety net, to
    the wall clock's `deadline` (a `time.monotonic()`, read on `clock`): what is left of it, none once it has passed
    (CP-SAT then stops at once, as the wall clock's stop)."""
    solver.parameters.max_deterministic_time = max(work, LEAST_WORK)
    solver.parameters.max_time_in_seconds = max(clock.seconds_left(deadline), 0.0)


class InterruptedBeforeSearch(KeyboardInterrupt):
    """Ctrl-C (or a request to end where Ctrl-C is ignored) before the search for a placement or purchase began, while
    the jobs' ways were worked out (`before_search`): there is no best found so far to keep, as the search keeps
    one. A `KeyboardInterrupt`, so that a caller who catches Ctrl-C catches it."""


@contextmanager
def before_search() -> Iterator[None]:
    """While in the block (the jobs' ways, the model, before the search), Ctrl-C is raised as
    `InterruptedBeforeSearch`."""
    try:
        yield
    except KeyboardInterrupt:
        raise InterruptedBeforeSearch from None


class HoldInterrupt:
    """While in the block, Ctrl-C (SIGINT) raises nothing: it is held, `caught` saying it came; a process that ignores
    Ctrl-C (a job a script starts in the background) keeps ignoring it. Only in the main thread (the only one Python
    lets set a handler), and only over a handler Python can put back (a host program's own, None from Python, keeps
    Ctrl-C)."""

    def __init__(self) -> None:
        self.caught = False
        self.previous: object = None

    def _stop(self, signum: int, frame: object) -> None:
        self.caught = True

    def __enter__(self) -> Self:
        in_main_thread = threading.current_thread() is threading.main_thread()
        if in_main_thread and signal.getsignal(signal.SIGINT) not in (None, signal.SIG_IGN):
            self.previous = signal.signal(signal.SIGINT, self._stop)
        return self

    def __exit__(self, *_: object) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)  # type: ignore[arg-type]


class StopOnInterrupt(HoldInterrupt):
    """While solving, Ctrl-C (SIGINT) stops the search and keeps the best placement found so far (`HoldInterrupt`)."""

    def __init__(self, solver: cp_model.CpSolver) -> None:
        super().__init__()
        self.solver = solver

    def _stop(self, signum: int, frame: object) -> None:
        self.caught = True
        self.solver.stop_search()

    def solve(self, model: cp_model.CpModel, callback: cp_model.CpSolverSolutionCallback | None) -> SolverStatus:
        """Solve in a worker thread, so that this (main) thread stays free to take Ctrl-C; what the worker
        raises is raised here. What a signal's handler raises here while it waits (KeyboardInterrupt where Ctrl-C is
        not ours to catch, or a request to end) stops the search, which ends before it is raised: a search left
        running would abort the process as it exits."""
        outcome: list[SolverStatus] = []
        failure: list[BaseException] = []
        finished = threading.Event()  # not the thread's join, which an exception can leave taking it for ended

        def work() -> None:
            try:
                outcome.append(self.solver.solve(model, callback))
            except BaseException as error:  # noqa: BLE001 - handed to the main thread, which raises it
                failure.append(error)
            finally:
                finished.set()

        try:
            threading.Thread(target=work, daemon=True).start()
            while not finished.wait(0.05):
                if self.caught:  # again, in case the search had not started when Ctrl-C came
                    self.solver.stop_search()
        except BaseException:
            ends_by = time.monotonic() + self.solver.parameters.max_time_in_seconds  # had the worker not started
            while not finished.is_set() and time.monotonic() < ends_by:  # a stop as the search starts is lost: again
                self.solver.stop_search()
                finished.wait(0.05)
            raise
        if failure:
            raise failure[0]
        return outcome[0]


def _decode(
    fleet: Fleet, options: list[Option], values: list[int], counts: dict[tuple[int, tuple[Footprint, ...]], int],
    planner: Planner, widen_by: float | None, proven: bool = True, seed: int = 0, certain: bool = False,
    asked_by: tuple[float | None, float | None] = (None, None), cut_short: tuple[int, ...] = (),
    kept: Kept | None = None, onto_idle_nodes: bool = True, proven_stages: frozenset[str] = frozenset(),
    stages_solved: tuple[str, ...] = (),
) -> tuple[tuple[Placement, ...], tuple[Unplaced, ...], tuple[str, ...], dict[int, tuple[Option, list[int]]]]:
    """The chosen options on their nodes (`node_indexes`), the jobs of a node with idle GPUs grown onto them or, where
    `onto_idle_nodes`, moved to a node of their pool no job uses (`widen_jobs`, with CP-SAT's `seed`, its solves ending
    by `widen_by`, a `time.monotonic()`; None: no widening); and why the others are left out. `proven`: whether the
    placed priority is proven the most (the unplaced jobs' reasons say so otherwise); `certain`: the most of all that
    the jobs' ways allow (their reasons then say what priority places them); the hints of smaller asks, on the placement
    as grown, are asked within their count of questions and until `asked_by`'s first (None: no hints), and why the other
    pools a job left out may use have no way for it within theirs and until its second (None: no limit; each a
    `time.monotonic()`, the wall clock's safety net: `WaysLimit.after_search`); the jobs `cut_short` (their ways left
    unasked) are left out for want of time; the running jobs `kept` stay where they run; the search proved the
    `proven_stages` after its first (`Search.proven_stages`) and solved the `stages_solved`
    (`Search.stages_solved`: the goals the reasons name). Then the steps the wall clock
    stopped (``widening``, ``hints``, ``reasons``, ``least priority``); last, each placed job's way and nodes as the
    placement ends (grown, some jobs moved to idle nodes)."""
    chosen = {o.job: o for o, value in zip(options, values) if value}
    nodes = node_indexes(fleet, chosen, counts, kept)
    grown = grown_placements(planner, fleet, chosen, nodes, seed, widen_by, {} if kept is None else kept.staying,
                             onto_idle_nodes)
    where = {job: (option, nodes[job]) for job, option in chosen.items()}
    final = {job: (option, grown.nodes[job]) for job, option in grown.ways.items()}
    hints_by, reasons_by = asked_by
    smaller_asks = None if hints_by is None else SmallerAsks(planner, fleet, final, hints_by)
    left_out = unplaced_reasons(planner, fleet, options, where, proven, certain, smaller_asks, cut_short, reasons_by,
                                final, running=() if kept is None else kept.running, proven_stages=proven_stages,
                                seed=seed, stages_solved=stages_solved)
    stopped = (grown.wall_clock_stopped + (("hints",) if smaller_asks is not None and smaller_asks.wall_clock_stopped
                                           else ()) + (("reasons",) if left_out.wall_clock_cut else ())
               + (("least priority",) if left_out.least_priority_stopped else ()))
    return grown.placements, left_out.unplaced, stopped, final


@dataclass(frozen=True)
class Grown:
    """The placement as it ends (`grown_placements`): its `placements`, each job's way as placed (`ways`, job ->
    option: grown or its own) and its nodes (`nodes`, job -> node indexes: moved to an idle node or its own), and
    ``("widening",)`` where the wall clock stopped widening (else empty)."""

    placements: tuple[Placement, ...]
    ways: dict[int, Option]
    nodes: dict[int, list[int]]
    wall_clock_stopped: tuple[str, ...]


def grown_placements(planner: Planner, fleet: Fleet, chosen: dict[int, Option], nodes: dict[int, list[int]],
                     seed: int, widen_by: float | None, staying: dict[int, RunningJob] | None = None,
                     onto_idle_nodes: bool = True) -> Grown:
    """The `chosen` ways (job -> option) on their `nodes` as `Placement`s, the jobs of a node with idle GPUs grown onto
    them, or, where `onto_idle_nodes`, moved to a node of their pool that no job uses (`widen_jobs`, with CP-SAT's
    `seed`, its solves ending by `widen_by`, a `time.monotonic()`; None: not grown), a job's GPUs on a shared node
    starting where the jobs before it in file order end (`gpus_on_nodes`); the running jobs `staying` keep their
    GPUs, neither grown nor moved (either would restart them)."""
    placed = dict(chosen)
    staying = staying or {}
    widened = None if widen_by is None else widen_jobs(planner, fleet, chosen, nodes, seed, frozenset(staying),
                                                       onto_idle_nodes, widen_by)
    if widened is not None:
        placed.update(widened.grown)
        nodes = {**nodes, **{job: [node] for job, node in widened.moved.items()}}
    gpus = gpus_on_nodes(fleet, ((job, option, nodes[job][0]) for job, option in sorted(placed.items())), staying)
    placements = with_node_host_cautions(planner, fleet, tuple(
        as_placement(planner, fleet, placed[job], nodes[job], gpus[job],
                     widened_from=chosen[job].plan.gpus if placed[job] is not chosen[job] else None,
                     moved_to_widen=widened is not None and job in widened.moved)
        for job in sorted(placed)))
    return Grown(placements, placed, nodes, ("widening",) if widened is not None and widened.wall_clock_stopped else ())


def node_indexes(fleet: Fleet, chosen: dict[int, Option], counts: dict[tuple[int, tuple[Footprint, ...]], int],
                 kept: Kept | None = None) -> dict[int, list[int]]:
    """The nodes of its pool each chosen option (job -> option) takes: the running jobs that stay (`kept`) their own,
    the nodes they share filled with the patterns `kept` gives them; then, on the nodes left in order (not those down),
    whole-node jobs,
    then the nodes that the other chosen patterns (`counts`) fill."""
    kept = kept or Kept({}, {})
    nodes: dict[int, list[int]] = {job: list(running.nodes) for job, running in kept.staying.items()}
    for pool_index, pool in enumerate(fleet.pools):
        here = sorted((o for o in chosen.values() if o.pool == pool_index and o.job not in nodes), key=lambda o: o.job)
        own = {node for (p, node) in kept.fills if p == pool_index} | {
            node for running in kept.staying.values() if running.pool == pool_index for node in running.nodes}
        free = iter([node for node in pool.up_node_indexes if node not in own])
        for option in (o for o in here if o.whole_nodes):
            nodes[option.job] = [next(free) for _ in range(option.whole_nodes)]
        waiting: dict[Footprint, deque[Option]] = defaultdict(deque)
        for option in (o for o in here if o.size):
            waiting[option.footprint].append(option)
        left = {pattern: count for (p, pattern), count in counts.items() if p == pool_index}
        for (p, node), pattern in sorted(kept.fills.items()):
            if p == pool_index:
                left[pattern] -= 1
                slots = Counter(pattern) - Counter(chosen[job].footprint for job, running in kept.staying.items()
                                                   if (running.pool, running.nodes[0]) == (p, node))
                for footprint in slots.elements():
                    if waiting[footprint]:
                        nodes[waiting[footprint].popleft().job] = [node]
        for pattern, count in sorted(left.items()):
            for _ in range(count):
                fill = [waiting[footprint].popleft().job for footprint in pattern if waiting[footprint]]
                if fill:
                    node = next(free)
                    nodes.update((job, [node]) for job in fill)
    return nodes


def _trivially_bounded(bound: int, fleet: Fleet, options: list[Option], every_job: bool) -> int:
    """CP-SAT's bound on the first stage, never weaker than the obvious one: a search stopped early can
    report more priority than the jobs with a way to run have together (`most_priority`), or fewer than no nodes."""
    if every_job:
        return max(bound, 0)
    return min(bound, most_priority(fleet, options))


def _infeasible_without_host(fleet: Fleet, options: list[Option], every_job: bool, interrupt: StopOnInterrupt,
                             budget: float, deadline: float) -> tuple[bool, bool]:
    """Whether CP-SAT proves, within `budget` of deterministic time and before `deadline` (the wall clock's safety
    net), that the jobs do not fit even with host memory left out; and whether the wall clock stopped it first."""
    relaxed = build_placement_model(fleet, [replace(o, host_tenths=0) for o in options], every_job).model
    solver = interrupt.solver
    _set_limits(solver, budget, deadline)
    status = checked(solver, relaxed, solver.solve(relaxed))
    return status == cp_model.INFEASIBLE, stopped_by_wall_clock(solver, status) and not interrupt.caught


def _as_model_values(built: PlacementModel, choice: dict[int, tuple[Option, list[int]]], options: list[Option]
                     ) -> tuple[list[int], dict[tuple[int, int], tuple[int, tuple[Footprint, ...]]]]:
    """A greedy placement in the model's terms: the options' literals, and the node pattern (a key of
    `built.pattern_counts`) that fills each node (pool, node) that its jobs share."""
    picked = {id(option) for option, _ in choice.values()}
    values = [int(id(option) in picked) for option in options]
    per_node: dict[tuple[int, int], list[Footprint]] = defaultdict(list)
    for option, spot in choice.values():
        if option.size:
            per_node[option.pool, spot[0]].append(option.footprint)
    # A node's packing fits within one of its pool's patterns (`patterns`).
    return values, {(pool, node): next(key for key in built.pattern_counts
                                       if key[0] == pool and not Counter(contents) - Counter(key[1]))
                    for (pool, node), contents in per_node.items()}
