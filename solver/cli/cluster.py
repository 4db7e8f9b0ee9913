"""``solve cluster``: many Trinity jobs placed on a fleet of GPU node pools."""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import signal
import sys
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from solver.cli.argtypes import comma_names, path_argument, positive_seconds
from solver.cli.atomic import (
    cannot_write,
    errors_named_by,
    not_a_regular_file,
    not_writable_words,
    refuse_one_file_twice,
    signals_held,
    writable_status,
    write_all_atomically,
)
from solver.cli.catalogs import catalog_with
from solver.cli.notes import (
    note_adapters_of_jobs,
    note_added_models_of_jobs,
    note_cells_elsewhere,
    note_gpu_variants_of_pools,
    note_replaced_yarn_factor,
    note_short_job_lengths,
    note_small_pool_host_ram,
    note_thousands_of_job_lengths,
)
from solver.cli.options import (
    add_cells_option,
    add_estimate_options,
    add_memory_model_options,
    add_token_budget_option,
    add_trinity_version_option,
    add_weights_option,
    add_workers_option,
    memory_model_option,
    planning_check_options,
    weights_option,
)
from solver.cli.output import ProgressLine, escaped_line, print_escaped, print_note, print_view
from solver.cli.parser import Parser
from solver.cli.paths import input_at, input_paths, refuse_nameless, refuse_tables_folder
from solver.cli.status import INTERRUPTED, NO_PLAN, STATUSES_AFTER_BAD_INPUT
from solver.tables import (
    EVERY_JOB,
    JOBS_NAMED,
    QueryError,
    and_joined,
    counted,
    it_or_them,
    meant_fleet_name,
    named_jobs,
    shown_number,
)

if TYPE_CHECKING:
    from solver.results import ClusterResult, JobGone, Placement, PurchaseResult, Unplaced
    from solver.tables import Catalog, Fleet, GpuType, Weights

    Found = TypeVar("Found", ClusterResult, PurchaseResult)
    """What a search of the fleet finds: a placement, or (--buy) a purchase."""

TIME_LIMIT_S = 10.0
"""The default of --time-limit, seconds."""

FILE_FIELDS = {
    "--gpu": "a pool's gpu", "--gpu-memory": "a pool's gpu_memory_gb or gpu_memory_mib",
    "--gpu-interconnect": "a pool's gpu_interconnect",
    "--node-gpus": "a pool's gpus_per_node", "--host-ram": "a pool's host_ram_gb",
    "--gpus": "a pool's nodes and gpus_per_node; the placement chooses each job's trainer GPUs",
    "--model": "a job's model", "--model-config": "a job's model_config", "--len": "a job's max_model_len",
    "--rollout-gpus": "a job's rollout_gpus", "--train-batch-size": "a job's train_batch_size",
    "--lora-rank": "a job's lora_rank", "--reference": "a job's reference_model",
    "--no-reference": "a job's reference_model", "--critic": "a job's critic", "--dpo": "a job's dpo",
    "--lora-targets": "a job's lora_targets", "--lora-exclude": "a job's lora_exclude_modules",
    "--maximize": "a job's max_model_len as {at_least: N}, longer where a plan allows",
}
"""The planner's options whose values a cluster file gives, by the field that gives them."""

FILE_ONLY_FIELDS = dict.fromkeys(("--pool", "--pools"), "a job's pool, the one pool it may use and so the one --buy "
                                                        "adds nodes to for it")
"""Options no command has whose values a cluster file gives, by the field that gives them."""


def build_cluster_parser() -> Parser:
    """The argument parser for ``solve cluster``."""
    parser = Parser(
        prog="solve cluster",
        description="Place many Trinity jobs on a fleet of GPU node pools: which fit, where, with which plans.",
        epilog=("Exit status: 0 every job placed (with --buy, every required job placed once the nodes it names "
                "are added, however many; a job not required and left out leaves it 0), 1 some job unplaced, or no "
                "placement (required jobs that do not all fit; with --buy, a required job that no purchase places, "
                f"or no purchase found), 2 bad input, {STATUSES_AFTER_BAD_INPUT}."),
        elsewhere={("minimize", "gpus"): ("the fewest GPUs for one job: solve --minimize gpus --model M --len L; the "
                                          "fewest to add to the pools so that every job is placed: --buy"),
                   ("minimize", "cost"): ("a placement takes the least cost already, after the most priority and "
                                          "length; the cheapest plan for one job: solve --model M --len L")},
        in_file={**FILE_FIELDS, **FILE_ONLY_FIELDS},
        interrupted_early=say_interrupted_before_search,
    )
    parser.add_argument("file", metavar="FILE.yaml", type=path_argument("file to read"), help=(
        "pools and jobs: pools: [{name, gpu, nodes, gpus_per_node}], jobs: [{name, model, max_model_len}] (every "
        "field: docs/cluster.md in rft-solver's source)"))
    parser.add_argument("--minimize", choices=["nodes"], help="place every job, on the fewest nodes")
    parser.add_argument("--buy", action="store_true",
                        help="instead of placing the jobs, say the fewest GPUs, then nodes, to add to the file's pools "
                        "with which every job (every required one, where some are) is placed")
    parser.add_argument("--required", metavar="JOB[,JOB...]", type=comma_names("a job's name", "math-4b,code-8b"),
                        help=f"these jobs must be placed, besides those the file marks required: true ({EVERY_JOB}: "
                        "every job)")
    parser.add_argument("--current", metavar="PLACEMENT.json", type=path_argument("file to read"),
                        help="the placement the fleet runs now (what solve cluster --json printed): its jobs stay on "
                        "their nodes and GPUs unless moving one places more priority (with --minimize nodes, uses "
                        "fewer nodes); each placed job is marked stays, moves or starts, and a job left out that runs "
                        "now, stops")
    parser.add_argument("--no-widen", action="store_false", dest="widen",
                        help="leave idle GPUs and nodes idle (by default a placed job grows onto idle GPUs of its "
                        "node, or moves to a node no job uses, where more GPUs run it faster or, for a max_model_len "
                        "of at_least N, at a longer length)")
    parser.add_argument("--time-limit", metavar="SECONDS", type=positive_seconds, default=TIME_LIMIT_S,
                        help="seconds from the start for the planner's queries and the placement search after "
                        f"them (default {TIME_LIMIT_S:g}): the same file gives the same placement whatever the "
                        "machine's load, unless the wall clock stops the search first (the answer says so)")
    add_workers_option(parser, "a placement proven best does not depend on it; one the time limit stops "
                               "repeats only with 1 worker")
    add_weights_option(parser)
    parser.add_argument("--json", action="store_true", help="print the placement as JSON")
    parser.add_argument("--emit-dir", metavar="DIR", type=path_argument("folder to write in"),
                        help="write each placed job's Trinity config to DIR")
    add_trinity_version_option(parser, "--emit-dir; a job's own trinity_version comes first",
                               "write both, count 0.6's")
    add_estimate_options(parser)
    add_memory_model_options(parser)
    add_token_budget_option(parser)
    add_cells_option(parser)
    return parser


def run_cluster(args: argparse.Namespace) -> int:
    """``solve cluster``: place the jobs of a cluster file on its pools (with --buy, say what to add to them)."""
    try:  # Ctrl-C while the libraries load and the inputs are read: before the search, as while the ways are asked
        from solver.api import check_fleet_lora_targets, place
        _refuse_beside_buy(args)
        fleet, catalog, cells, written_gpus = _fleet_and_catalog(args.file, args.cells or ())
        check_fleet_lora_targets(fleet, catalog, args.trinity_release, str(args.file))  # naming the file, as others
        weights = weights_option(args.weights)
        if args.emit_dir is not None:  # not beside --buy: refused above
            _check_emit_dir_before_placing(args, fleet)
    except KeyboardInterrupt:
        say_interrupted_before_search(args)
        return INTERRUPTED
    if args.buy:
        return _run_buy(args, fleet, catalog, weights, cells, written_gpus)
    result = _searched(args, fleet, catalog, weights, partial(place, minimize=args.minimize, widen=args.widen,
                                                              current=args.current, source=str(args.file)))
    if result is None:
        return INTERRUPTED
    # Ctrl-C once the placement is worked out comes once the configs are all in place and the placement naming them is
    # printed, with its notes: it stops nothing then, and the exit status is the placement's, as its JSON's
    # "interrupted" says.
    with signals_held() as came:
        written = _write_emit_dir(args, result, fleet, catalog) if args.emit_dir is not None else {}
        result = _naming_configs(result, written)
        _print_placement(args, result, fleet, list(written.values()))
        sys.stdout.flush()  # all of it out before a Ctrl-C held comes
        _note_what_was_read(result.placements, fleet, catalog, cells, written_gpus)
        if args.current is not None:
            _note_pools_gone(args.current, args.file, fleet)
            _note_jobs_gone(args.current, args.file, result.jobs_gone, fleet)
            _note_other_release(args.current, args.file, fleet, args.trinity_release)
        if not args.json:
            _note_buy(args, result, fleet)
        _say_ctrl_c_stopped_nothing(came, "placement", result.interrupted or result.solve_best_interrupted,
                                    " (its configs too)" if written else "")
    if result.interrupted:
        print_escaped("solve cluster: interrupted: the best placement found so far is above", file=sys.stderr)
        return INTERRUPTED
    if result.solve_best_interrupted:
        return _solve_best_interrupted(result, "placement", " (its configs too)" if written else "")
    return 0 if result.placements and not result.unplaced else NO_PLAN


def _note_buy(args: argparse.Namespace, result: ClusterResult, fleet: Fleet) -> None:
    """On stderr, the jobs with no way to run that --token-budget auto trains on the pools' nodes as they are
    (`_note_token_budget_auto`); where jobs are left out for want of room, or have no way to run that more nodes may
    give them (`short_of_nodes`, `short_of_gpus`, or a length that more of a pool's GPUs train), and that
    --token-budget auto does not give them, that --buy names the fewest GPUs, then nodes, to add (with --required naming
    the run's --required jobs and, where the required jobs are placed or with --minimize nodes, every other job but
    those no nodes place: --buy buys for the required ones alone, and drops the others it need not; more than
    `JOBS_NAMED` of them, or every job, as ``--required all`` where they are every job the run does not require
    already (`EVERY_JOB`), else as ``--required JOBS``, counted and named in full after the command; with none where
    the file marks no job required and nodes may place each one it would name (``--required all``'s too): --buy alone
    buys for every such job; with --token-budget auto where the run has it, or where only that gives a job's length
    a way on more nodes or on the nodes as they are; with the run's options that ask the same question, `_buy_command`);
    and the jobs whose length no number of nodes reaches (`_note_beyond_any_nodes`)."""
    from solver.results import PoolCode, ReasonCode, UnplacedCode
    # The reasons a job is left out that more nodes remove: a placement with one of them (text, not --json)
    # names --buy in a note on stderr.
    for_want_of_room = (UnplacedCode.NO_ROOM, UnplacedCode.PRIORITY_TIE, UnplacedCode.NO_ROOM_UNPROVEN,
                        UnplacedCode.JOBS_DO_NOT_FIT_TOGETHER)
    # Why a pool has no way for a job that more of its nodes may give one: it has none (nodes: 0), or its rollout
    # takes the pool's GPUs, or leaves no trainer count a layout on its nodes (a job with no way for one is named),
    # unless more of its nodes train the job's length nowhere beside its rollout (a host memory need per node, say).
    short_of_nodes = (PoolCode.NO_NODES, PoolCode.ROLLOUT_TAKES_POOL, PoolCode.NO_LAYOUT_BESIDE_ROLLOUT)
    # The planner's reasons for a pool's having no plan for a job that more of the pool's GPUs may remove. (Not
    # ReasonCode.ROLLOUT_LEAVES_NO_LAYOUT: a pool's trainer room beside the rollout, or a node of it, always has a
    # layout, and the planner's counts run unbroken up to it, so a pool never gets that code.)
    short_of_gpus = (ReasonCode.BUDGET_BELOW_SMALLEST_COUNT,)
    unplaced = result.unplaced
    short_of_room = [job.job for job in unplaced if job.reason_code in for_want_of_room]
    wayless_jobs = [job for job in unplaced if job.reason_code == UnplacedCode.NO_WAY_TO_RUN]
    auto_now = [job.job for job in wayless_jobs if any(pool.token_budget_auto_reach for pool in job.pools)]
    more_nodes = {job.job: [pool.more_nodes_token_budget or "default" for pool in job.pools
                            if (pool.reason_code in short_of_nodes and pool.more_nodes_reach is not False)
                            or pool.plan_reason_code in short_of_gpus or pool.more_nodes_reach]
                  for job in wayless_jobs if job.job not in auto_now}
    wayless = [job for job, budgets in more_nodes.items() if budgets]
    auto_only = [job for job, budgets in more_nodes.items() if budgets and "default" not in budgets]
    _note_token_budget_auto(auto_now)
    beyond = _beyond_any_nodes(unplaced)
    _note_beyond_any_nodes(beyond)
    if not short_of_room and not wayless:
        return
    required, goal, jobs_said = "", "to place every job", ""
    if result.required:
        # A new run needs --required's jobs again (all of them for --required all); the file's stay required.
        every = [job.name for job in fleet.jobs] if fleet.all_names_every_job else [EVERY_JOB]
        named = dict.fromkeys(name for given in args.required or () for name in (every if given == EVERY_JOB
                                                                                 else [given]))
        placed = [placement.job for placement in result.placements]
        placeable = {*placed, *short_of_room, *wayless, *auto_now, *result.ways_cut_short}
        if result.placements or args.minimize:  # --buy would buy for the required jobs alone
            named.update(dict.fromkeys(job.name for job in fleet.jobs
                                       if job.name in placeable and job.name not in result.required))
            goal = "to place the jobs left out too" if result.placements else goal
        else:  # --buy alone would buy for every job, unless the run requires them all
            goal = "to place the required jobs"
        every_named = named.keys() >= {job.name for job in fleet.jobs} or bool(result.placements or args.minimize)
        if not any(job.required for job in fleet.jobs) and every_named and placeable.issuperset(named):
            named = {}  # every job nodes place is named: --buy alone buys for them all, the same purchase
        others = [job.name for job in fleet.jobs if job.name not in named]
        if ((len(named) > JOBS_NAMED or named and not others) and set(others) <= set(result.required)
                and fleet.all_names_every_job):  # every job, none left unmarked: in one word
            required = EVERY_JOB
        elif len(named) > JOBS_NAMED:  # a name list this long hides the command: named in full after it
            required = "JOBS"
            jobs_said = f"; JOBS (every job{_but_words(others, result.required, beyond)}): {','.join(named)}"
        elif named:
            required = shlex.quote(','.join(named))
    # --token-budget auto: lengths only it reaches, or the run's own
    command = _buy_command(args, required, bool(auto_only or auto_now or args.token_budget == "auto"))
    auto = ("" if not auto_only or args.token_budget == "auto" else "with --token-budget auto"
            if auto_only == wayless else f"{named_jobs(auto_only)} with --token-budget auto")
    why = (f"{named_jobs(wayless)}: no way to run on the pools' nodes as they are, but more nodes may give "
           f"{it_or_them(len(wayless))} a way to run{f' ({auto})' if auto else ''}" if not short_of_room
           else f"{goal} (more nodes may give {named_jobs(wayless)} a way to run too{f', {auto}' if auto else ''})"
           if wayless else goal)
    print_note(f"solve cluster: note: {why}: {command} names the fewest GPUs, then nodes, to add to the pools (and "
               f"the jobs no number of nodes runs){jobs_said}")


def _buy_command(args: argparse.Namespace, required: str, token_budget_auto: bool) -> str:
    """The --buy command a note suggests for the run `args`: its file, --required `required` (as the command line
    writes it; "" for none), the run's --trinity-version, whose host memory counts differ, --token-budget auto where
    `token_budget_auto`, and the run's other options that ask the same question (`_same_question_options`)."""
    command = f"solve cluster {shlex.quote(str(args.file))} --buy" + (f" --required {required}" if required else "")
    if args.trinity_release is not None:
        command += f" --trinity-version {shlex.quote(args.trinity_release)}"
    if token_budget_auto:
        command += " --token-budget auto"
    return command + "".join(f" {shlex.quote(option)}" for option in _same_question_options(args))


def _same_question_options(args: argparse.Namespace) -> tuple[str, ...]:
    """The run's own options, as given, that the --buy it suggests needs to ask the question it asked (the plans'
    evidence and memory model, `planning_check_options`; the cost weights; the time limit, where not the default;
    --no-widen, for the placement with the nodes bought): none of them is the purchase's default."""
    return (*planning_check_options(args), *(("--weights", str(args.weights)) if args.weights is not None else ()),
            *(("--time-limit", shown_number(args.time_limit)) if args.time_limit != TIME_LIMIT_S else ()),
            *(() if args.widen else ("--no-widen",)))


def _note_token_budget_auto(jobs: list[str]) -> None:
    """On stderr, the `jobs` with no way to run at Trinity's default token budget that --token-budget auto trains
    on the pools' nodes as they are (`UnplacedPool.token_budget_auto_reach`): that before any nodes are bought."""
    if jobs:
        print_note(f"solve cluster: note: {named_jobs(jobs)}: --token-budget auto trains "
                   f"{'its' if len(jobs) == 1 else 'their'} max_model_len on the pools' nodes as they are (Trinity's "
                   f"default token budget does not): run again with it to place {it_or_them(len(jobs))} "
                   "where there is room")


def _but_words(others: list[str], required: tuple[str, ...], beyond: list[str]) -> str:
    """The jobs a ``--required JOBS`` list leaves out (`others`), after "every job": where they are the `required`
    ones and jobs no number of nodes runs (`beyond`), each kind said, and that ``--required all`` buys the same but
    exits 1 for those; "" where it leaves none out (a job named all among them: every job named)."""
    if not others:
        return ""
    kept, never = [job for job in others if job in required], [job for job in others if job in beyond]
    if not never or len(kept) + len(never) < len(others):
        return f" but {', '.join(others)}"
    kept_words = (f"{', '.join(kept)}, {'which is' if len(kept) == 1 else 'which are'} required already, and "
                  if kept else "")
    return (f" but {kept_words}{', '.join(never)}, which no number of nodes runs: --required all buys the same, but "
            f"exits with status 1 for {it_or_them(len(never))}")


def _beyond_any_nodes(unplaced: tuple[Unplaced, ...]) -> list[str]:
    """The jobs with no way to run whose length no pool they may use trains however many nodes it has
    (`UnplacedPool.more_nodes_reach` false in each: beyond its GPUs' reach, or a host memory need per node past its
    nodes'; a job whose reason the time limit left unasked names no pool, and is not one)."""
    from solver.results import UnplacedCode
    return [job.job for job in unplaced if job.reason_code == UnplacedCode.NO_WAY_TO_RUN
            and job.pools and all(pool.more_nodes_reach is False for pool in job.pools)]


def _note_beyond_any_nodes(beyond: list[str]) -> None:
    """On stderr, the jobs no number of nodes runs (`_beyond_any_nodes`): --buy would not place them either."""
    if beyond:
        print_note(f"solve cluster: note: {named_jobs(beyond)}: no number of nodes trains "
                   f"{'its' if len(beyond) == 1 else 'their'} max_model_len in any pool "
                   f"{'it' if len(beyond) == 1 else 'they'} may use, so --buy would not place "
                   f"{it_or_them(len(beyond))} either: a shorter max_model_len, or another GPU type, may")


def _refuse_beside_buy(args: argparse.Namespace) -> None:
    """`QueryError` for --buy beside an option of a placement: --minimize nodes (--buy places every job already),
    --current (it keeps no running jobs) or --emit-dir (it writes no placement)."""
    if args.buy and args.minimize is not None:
        raise QueryError("--buy with --minimize nodes: --buy places every job on the pools with the nodes it adds; "
                         "give one of them")
    if args.buy and args.current is not None:
        raise QueryError("--buy with --current: --buy weighs no running jobs; run solve cluster --current on the "
                         "file with the nodes it names added")
    if args.buy and args.emit_dir is not None:
        raise QueryError("--buy with --emit-dir: --buy writes no configs; add the nodes it names to the file and "
                         "run solve cluster --emit-dir on it")


def _run_buy(args: argparse.Namespace, fleet: Fleet, catalog: Catalog, weights: Weights | None,
             cells: tuple[tuple[Path, GpuType], ...], written_gpus: dict[str, str]) -> int:
    """``solve cluster --buy``: the fewest GPUs, then nodes, to add so that every job (or every --required one) is
    placed, and the placement with them, on stdout; 0 where every required job is placed with them, 1 where one fits
    no pool's nodes or no purchase was found."""
    from solver.api import buy_nodes
    from solver.render import purchase_json, purchase_view
    result = _searched(args, fleet, catalog, weights, partial(buy_nodes, widen=args.widen))
    if result is None:
        return INTERRUPTED
    # Ctrl-C once the purchase is worked out comes once it is printed, with its notes: it stops nothing then, as a
    # placement's.
    with signals_held() as came:
        if args.json:
            sys.stdout.write(purchase_json(result) + "\n")
        else:
            print_view(purchase_view(result, fleet), "solve cluster")
        sys.stdout.flush()  # all of it out before a Ctrl-C held comes
        _note_what_was_read(result.placements, fleet, catalog, cells, written_gpus)
        if not args.json:
            _note_buy_token_budget_auto(args, result, fleet)
        _say_ctrl_c_stopped_nothing(came, "purchase", result.interrupted or result.solve_best_interrupted)
    if result.interrupted:
        print_escaped("solve cluster: interrupted: the best purchase found so far is above", file=sys.stderr)
        return INTERRUPTED
    if result.solve_best_interrupted:
        return _solve_best_interrupted(result, "purchase")
    required_nowhere = {unplaced.job for unplaced in result.fits_nowhere} & set(result.required)
    return 0 if result.gpus is not None and not required_nowhere else NO_PLAN


def _note_buy_token_budget_auto(args: argparse.Namespace, result: PurchaseResult, fleet: Fleet) -> None:
    """On stderr, the jobs no purchase places at Trinity's default token budget that --token-budget auto gives a way
    to run, on a pool's nodes as they are or on more of them (`UnplacedPool.token_budget_auto_reach`,
    `more_nodes_token_budget`), with the --buy command that buys for them too: the run's (`_buy_command`), with
    --token-budget auto and, where the run buys for the required jobs alone, these jobs added to its --required."""
    jobs = [job.job for job in result.fits_nowhere
            if any(pool.token_budget_auto_reach or pool.more_nodes_reach and pool.more_nodes_token_budget == "auto"
                   for pool in job.pools)]
    if not jobs or args.token_budget == "auto":
        return
    named = list(args.required or ())
    if (named or any(job.required for job in fleet.jobs)) and EVERY_JOB not in named:
        named += [job for job in jobs if job not in result.required]  # --buy buys for the required jobs alone
    command = _buy_command(args, shlex.quote(','.join(named)) if named else "", token_budget_auto=True)
    print_note(f"solve cluster: note: {named_jobs(jobs)}: --token-budget auto gives {it_or_them(len(jobs))} a way "
               f"to run (Trinity's default token budget gives {it_or_them(len(jobs))} none, however many nodes): "
               f"{command} buys for {it_or_them(len(jobs))} too")


def _solve_best_interrupted(result: ClusterResult | PurchaseResult, answer: str, also: str = "") -> int:
    """For Ctrl-C that came while solve's best was asked, once the `answer` (placement, purchase) was worked out
    (`solve_best_interrupted`): on stderr, that the answer above is whole (`also` saying what else is) and which
    questions were skipped; the exit status for Ctrl-C, 130."""
    print_escaped(f"solve cluster: interrupted once the {answer} was worked out: the {answer} above is whole{also}; "
                  f"solve's best was not asked for {counted(result.solve_best_unasked, 'job')} placed on the tables' "
                  "plans", file=sys.stderr)
    return INTERRUPTED


def _say_ctrl_c_stopped_nothing(came: list[int], answer: str, interrupted: bool, also: str = "") -> None:
    """Where Ctrl-C came (among the signals held, `came`) once the `answer` (placement, purchase) was worked out and
    printed, take it out of `came`, so that it is not delivered: it stops nothing. On stderr, that the answer is whole
    (`also` saying what else is); not for an answer an earlier Ctrl-C `interrupted`, the best found so far, which the
    line after the block says stands."""
    if signal.SIGINT in came:
        came[:] = [number for number in came if number != signal.SIGINT]
        if not interrupted:
            print_escaped(f"solve cluster: Ctrl-C came once the {answer} was worked out: the {answer} above is "
                          f"whole{also}", file=sys.stderr)


def _check_emit_dir_before_placing(args: argparse.Namespace, fleet: Fleet) -> None:
    """`QueryError` unless --emit-dir is a folder that each job's config can be written in (`_check_emit_dir`),
    overwriting neither the command's inputs nor a job's model_config: checked before the placement's search."""
    refuse_nameless("--emit-dir", args.emit_dir)
    try:
        configs = [("a job's model_config", path) for path in fleet.model_config_files]
        _check_emit_dir(args.emit_dir, [job.name for job in fleet.jobs], [*input_paths(args), *configs])
    except OSError as error:  # a folder on the way without search permission (Path raises before Python 3.14)
        raise QueryError(f"--emit-dir {args.emit_dir}: cannot write: {error.strerror or error}") from None


def say_interrupted_before_search(args: argparse.Namespace) -> None:
    """On stderr, that Ctrl-C came before the search for a placement (a purchase, --buy) began: while the libraries
    loaded, the inputs were read, or the jobs' ways were worked out, there is no best found so far to print: nothing
    was placed (nor, with --emit-dir, written)."""
    answer = "a purchase" if args.buy else "a placement"
    print_escaped(f"solve cluster: interrupted before the search for {answer} began: nothing placed"
                  f"{', no configs written' if args.emit_dir is not None and not args.buy else ''}", file=sys.stderr)


def _searched(args: argparse.Namespace, fleet: Fleet, catalog: Catalog, weights: Weights | None,
              search: Callable[..., Found]) -> Found | None:
    """What `search` (`place`, or `buy_nodes`) finds for `fleet`'s jobs with the command's options, a live progress
    line on a terminal meanwhile; None where Ctrl-C came before the search began (`InterruptedBeforeSearch`: while
    the memory model was read or the jobs' ways were worked out), which has no best found so far: one line on stderr
    says that nothing was placed (`say_interrupted_before_search`)."""
    try:  # Ctrl-C while the search's libraries (OR-Tools) load or the memory model is read: before the search too
        from solver.cluster.search import InterruptedBeforeSearch
        from solver.rules import COMMAND_OPTIONS
        memory = memory_model_option(args.memory_model, "solve cluster")  # its warning before the progress line
    except KeyboardInterrupt:
        say_interrupted_before_search(args)
        return None
    progress = ProgressLine()
    try:
        result = search(fleet, catalog=catalog, weights=weights, time_limit_s=args.time_limit, workers=args.workers,
                        progress=progress, estimate=args.estimate_mode, memory=memory,
                        margin=args.margin, token_budget=args.token_budget or "default",
                        trinity_version=args.trinity_release, required=args.required, option_names=COMMAND_OPTIONS)
    except InterruptedBeforeSearch:  # the search itself takes Ctrl-C, keeping its best so far: this came before it
        progress.close()
        say_interrupted_before_search(args)
        return None
    progress.close()
    return result


def _write_emit_dir(args: argparse.Namespace, result: ClusterResult, fleet: Fleet,
                    catalog: Catalog) -> dict[str, Path]:
    """The configs of the placed jobs, written to --emit-dir (none where the search was interrupted, which it says),
    with notes on their rollout engines and on the folder's configs this run did not write; the path written for
    each job."""
    from solver.api import placement_configs
    from solver.rules import COMMAND_OPTIONS
    if result.interrupted:
        print_escaped(
            f"solve cluster: interrupted: no configs written to {args.emit_dir} (the placement may not be the best)",
            file=sys.stderr)
        return {}
    fragments = placement_configs(result, fleet, catalog, check_options=planning_check_options(args),
                                  option_names=COMMAND_OPTIONS)  # each its plan's release
    written = _write_configs(args.emit_dir, fragments)
    _note_rollout_engines(result, catalog)
    _note_configs_not_written(args, result, list(written.values()))
    return written


def _naming_configs(result: ClusterResult, written: dict[str, Path]) -> ClusterResult:
    """`result` with each placement naming the config --emit-dir wrote for its job (`written`, by job)."""
    return result.model_copy(update={"placements": tuple(
        placement.model_copy(update={"config_file": str(written[placement.job])}) if placement.job in written
        else placement for placement in result.placements)})


def _write_configs(folder: Path, fragments: dict[str, str]) -> dict[str, Path]:
    """Each job's config of `fragments` (by job) written as ``JOB.yaml`` in `folder`, all or none, the folder made
    only now that there is an answer to write (and removed again where nothing could be written, an error stopping
    the write: Ctrl-C and the requests to end are held until it is done, `signals_held`); their paths, by job."""
    made = bool(fragments) and not folder.is_dir() and _made_folder(folder)
    written = {name: folder / f"{name}.yaml" for name in fragments}
    try:
        texts = dict(zip(written.values(), fragments.values(), strict=True))
        write_all_atomically(texts, dict.fromkeys(texts, "--emit-dir"))
    except QueryError:
        if made:  # nothing written (or, rarely, some: then the folder stays with them)
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise
    return written


def _made_folder(folder: Path) -> bool:
    """Whether this run made `folder`: False where another run made it meanwhile (two writing one folder at once:
    it stays theirs); `QueryError` where it cannot be made."""
    try:
        folder.mkdir()
    except OSError as error:
        if not os.path.isdir(folder):  # (Path.is_dir raises on a name too long)
            raise cannot_write(error)(f"--emit-dir {folder}: cannot make the folder: {error.strerror}") from None
        return False
    return True


def _note_configs_not_written(args: argparse.Namespace, result: ClusterResult, written: list[Path]) -> None:
    """On stderr, the configs in --emit-dir that this run did not write (`written`: those it did): an earlier run's for
    a job this placement leaves out, and the others, named for no job of the file (in another case than its job's
    too)."""
    stale = [unplaced.job for unplaced in result.unplaced if (args.emit_dir / f"{unplaced.job}.yaml").exists()]
    if stale:  # an earlier run's config, for a job this placement leaves out: a loop over the folder would start it
        files = ", ".join(f"{name}.yaml" for name in stale)
        configs = ("a config an earlier run wrote for a job" if len(stale) == 1
                   else "configs earlier runs wrote for jobs")
        print_note(f"solve cluster: note: {args.emit_dir} still holds {files}, {configs} this placement does not "
                   "place: left in place; start only the configs this run wrote")
    named = [*written, *(args.emit_dir / f"{job}.yaml" for job in stale)]
    if others := _configs_of_no_job(args.emit_dir, named, input_paths(args)):
        print_note(f"solve cluster: note: {args.emit_dir} also holds {named_jobs(others, 'file')}, named for no "
                   f"job of {args.file} (from an earlier run, of a job since renamed or removed?): left in place; "
                   "start only the configs this run wrote")


def _print_placement(args: argparse.Namespace, result: ClusterResult, fleet: Fleet, written: list[Path]) -> None:
    """The placement on stdout: as JSON, or as tables followed by a line per config written."""
    from solver.render import cluster_json, cluster_view
    if args.json:
        sys.stdout.write(cluster_json(result) + "\n")
        return
    console = print_view(cluster_view(result, fleet, minimize_nodes=args.minimize == "nodes"), "solve cluster")
    for path in written:  # as solve's --out and --write: a line per file written
        console.print(escaped_line(f"wrote {path}"))


def _note_what_was_read(placements: tuple[Placement, ...], fleet: Fleet, catalog: Catalog,
                        cells: tuple[tuple[Path, GpuType], ...], written_gpus: dict[str, str]) -> None:
    """On stderr, after the placement, what the planner made of the file's jobs and pools and of the --cells tables:
    short lengths, lengths in thousands cut (131k), cells that belong elsewhere, models added, YaRN factors replaced,
    GPU variants."""
    note_short_job_lengths(fleet, "solve cluster")
    note_thousands_of_job_lengths(fleet, "solve cluster")
    note_small_pool_host_ram(fleet, "solve cluster")
    note_cells_elsewhere("solve cluster", cells, catalog)
    note_added_models_of_jobs("solve cluster", catalog, fleet)
    note_adapters_of_jobs("solve cluster", fleet)
    for model in fleet.models:
        note_replaced_yarn_factor("solve cluster", catalog.model(model.name), (
            placement.plan.rope_scaling_factor for placement in placements
            if placement.model == model.name and placement.plan.rope_scaling_factor is not None))
    note_gpu_variants_of_pools("solve cluster", catalog, fleet, written_gpus)


def _note_pools_gone(current: Path, file: Path, fleet: Fleet) -> None:
    """On stderr, for each pool the --current placement runs jobs of the fleet in that the cluster `file` has none
    of (`pools_gone`), that its jobs are taken as not running, though they run there until stopped."""
    from solver.tables import pools_gone
    for pool, jobs in pools_gone(current, fleet).items():
        them, they_run = it_or_them(len(jobs)), "it runs" if len(jobs) == 1 else "they run"
        meant = _meant_in_file([pool], [known.name for known in fleet.pools], "pool", file)
        print_note(f"solve cluster: note: --current {current} runs {named_jobs(list(jobs))} in pool {pool}, which "
                   f"{file} lacks{meant}: the placement takes {them} as not running and starts {them} where it places "
                   f"{them}, though {they_run} there until stopped; if the pool was renamed, name it {pool} again to "
                   f"keep {them} where {they_run}")


def _note_other_release(current: Path, file: Path, fleet: Fleet, trinity_version: str | None) -> None:
    """On stderr, for the jobs the --current placement runs on plans that name no Trinity release rft-solver knows and
    that the cluster `file` names none for (`releases_differing`), that the placement judges them under this run's
    --trinity-version, and how to judge them as they run: a running job whose plan names a release it knows keeps
    that one, and a job's own trinity_version is its release, which for a plan of a release it does not know
    (``0.7``), and trinity_version refuses, must be another the job runs on."""
    from solver.tables import release_name
    from solver.tables.bounds import TRINITY_RELEASE_FORMS
    from solver.tables.fleets import releases_differing
    now = release_name(trinity_version)
    this_run = f"Trinity {now} (--trinity-version {now})" if now else "no Trinity release named (0.6's counts)"
    for counted_for, jobs in releases_differing(current, fleet, now).items():
        one = len(jobs) == 1
        them, they_run, their = it_or_them(len(jobs)), "it runs" if one else "they run", "its" if one else "their"
        was = f"Trinity {counted_for}" if counted_for else "no Trinity release named (0.6's counts)"
        judge = (f"give {them} the release {they_run} on as trinity_version in {file} (or run again without "
                 f"--trinity-version to judge {them} as {they_run})" if counted_for is None else
                 f"rft-solver knows no rules of Trinity {counted_for}, which trinity_version refuses (it takes "
                 f"{TRINITY_RELEASE_FORMS}): to judge {them} by {their} own release, run {them} on one of those and "
                 f"give it as {their} trinity_version in {file}")
        print_note(f"solve cluster: note: --current {current} runs {named_jobs(list(jobs))} on plans counted for "
                   f"{was}, this run for {this_run}: whether {'it stays' if one else 'they stay'} is judged by this "
                   f"run's release, not the one {they_run} on; {judge}")


def _meant_in_file(names: Sequence[str], known: Sequence[str], kind: str, file: Path) -> str:
    """Where the --current placement's pool or job `names` (`kind`) that the cluster `file` lacks are likely `known`
    ones of the file in another case or with a slip (`meant_fleet_name`), which: `` (did you mean fleet.yaml's pool
    a100?)``, or for several, `` (did you mean math-4b for Math-4b?)``; "" where none is."""
    meant = {name: known_name for name in names if (known_name := meant_fleet_name(name, known)) is not None}
    if not meant:
        return ""
    if len(names) == 1:
        return f" (did you mean {file}'s {kind} {meant[names[0]]}?)"
    return f" (did you mean {and_joined([f'{known_name} for {name}' for name, known_name in meant.items()])}?)"


def _note_jobs_gone(current: Path, file: Path, gone: Iterable[JobGone], fleet: Fleet) -> None:
    """On stderr, for each pool of the fleet the --current placement runs jobs in that the cluster `file` has none of
    (`gone`, the placement's `jobs_gone`: renamed or removed), that the placement takes their GPUs as free, though
    they run there until stopped (as its JSON's ``jobs_gone`` says)."""
    by_pool: dict[str, list[str]] = {}
    for job in gone:
        by_pool.setdefault(job.pool, []).append(job.job)
    for pool, jobs in by_pool.items():
        one = len(jobs) == 1
        them, they_run, their = it_or_them(len(jobs)), "it runs" if one else "they run", "its" if one else "their"
        renamed = f"name it {jobs[0]} again" if one else "give it its name again"
        meant = _meant_in_file(jobs, [job.name for job in fleet.jobs], "job", file)
        print_note(f"solve cluster: note: --current {current} runs {named_jobs(list(jobs))} in pool {pool}, "
                   f"{'a job' if one else 'jobs'} {file} lacks{meant}: the placement takes {their} GPUs as free, "
                   f"though {they_run} on them until stopped; stop {them} before a job starts there, or, if "
                   f"{'the job' if one else 'a job'} was renamed, {renamed} to keep it where it runs")


def _note_rollout_engines(result: ClusterResult, catalog: Catalog) -> None:
    """On stderr, for each job whose --emit-dir config sizes rollout engines above one GPU or too small, what
    `solve --emit trinity` says of the same engines (`engines_note`), naming the job."""
    from solver.memory import engines_note
    for placement in result.placements:
        engines = placement.rollout_engines
        if engines is not None and (note := engines_note(engines, placement.model, catalog.gpu(placement.gpu),
                                                         prefix=f"solve cluster: note: {placement.job}: ")):
            print_note(note)


def _configs_of_no_job(folder: Path, named: list[Path], inputs: list[tuple[str, Path]]) -> list[str]:
    """The ``*.yaml`` files in `folder`, by name, other than the `named` configs (those this run wrote and those of
    the jobs it leaves out) and the command's `inputs`: a removed or renamed job's config from an earlier run, say, or
    one named for a job in another case (``Probe.yaml`` beside ``probe.yaml``), another file where the file system
    tells case apart (on one that does not, a job's file under any case is the one `named`: the same file)."""
    names, files = {path.name for path in named}, {_file_identity(path) for path in named} - {None}
    return sorted(path.name for path in folder.glob("*.yaml")
                  if path.name not in names and _file_identity(path) not in files and not input_at(inputs, path))


def _file_identity(path: Path) -> tuple[int, int] | None:
    """The device and inode of the file at `path` (through a link), None where there is none to read."""
    try:
        status = path.stat()
    except OSError:
        return None
    return status.st_dev, status.st_ino


def _check_emit_dir(folder: Path, jobs: list[str], inputs: list[tuple[str, Path]]) -> None:
    """`QueryError` unless `folder` is one, or can be made, and each job's config in it is a file to write
    that overwrites none of the `inputs`: every target checked before the first is written."""
    from solver.tables import resolved_path
    if not folder.is_dir() and (folder.exists() or folder.is_symlink() or not folder.absolute().parent.is_dir()):
        problem = ("not a folder" if folder.exists() or folder.is_symlink()
                   else "no such folder, nor a folder to make it in")
        raise QueryError(f"--emit-dir {folder}: {problem} (it writes one config per placed job into it)")
    refuse_tables_folder(folder, f"--emit-dir {folder}", "configs")
    for job in jobs:
        target = folder / f"{job}.yaml"
        overwritten = input_at(inputs, target)
        if overwritten:
            raise QueryError(f"--emit-dir {folder}: job {job}'s config would overwrite {overwritten} "
                             f"{target}: write the configs to another folder")
        resolved = resolved_path(target)
        if not_a_regular_file(resolved) or (
                target.is_symlink() and not resolved.parent.is_dir()):
            raise QueryError(f"--emit-dir {folder}: job {job}'s config {target} is not a regular file "
                             "(or a link to a place one can be written)")
        if resolved.parent.is_dir():  # a file there now: one that may not be written, or that takes stdout
            with errors_named_by("--emit-dir"):
                writable_status(resolved)
    with errors_named_by("--emit-dir"):
        refuse_one_file_twice([folder / f"{job}.yaml" for job in jobs])
    if not folder.is_dir() and not os.access(folder.absolute().parent, os.W_OK | os.X_OK):
        raise QueryError(f"--emit-dir {folder}: cannot make the folder: {folder.parent} "
                         f"{not_writable_words(folder.absolute().parent)}")


def _fleet_and_catalog(path: Path, cells: Sequence[Path]) -> tuple[
        Fleet, Catalog, tuple[tuple[Path, GpuType], ...], dict[str, str]]:
    """A cluster file's fleet, the catalogue to place it with (the shipped one with the fleet's models, the --cells
    tables and the fleet's GPU types), the GPU type of each --cells file, and each pool's GPU type as the file wrote
    it (by pool name; the fleet's are canonical), every file read once (a pipe reads once). The cells may name a
    job's model_config model, so the fleet's models come before them; they may define a GPU type the fleet's pools
    name, so its pools are checked after them, and its jobs' names against the catalogue's models, as `load_fleet`
    checks them (a job's model is the catalogue's or its own model_config's)."""
    from solver.rules import COMMAND_OPTIONS
    from solver.tables import checked_fleet, load_catalog, read_fleet
    shipped = load_catalog()
    read = read_fleet(path, shipped, COMMAND_OPTIONS.file_readers)
    base, _, measured = catalog_with(None, cells=cells, start=shipped.with_models(read.models))
    fleet = checked_fleet(read, base.model_copy(update={"models": shipped.models}))
    return fleet, base.for_fleet(fleet), measured, {pool.name: pool.gpu for pool in read.entries.pools}
