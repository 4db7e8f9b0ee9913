"""The ``solve`` command line: parse arguments, call the library, print. The only code that prints.

Exit status: 0 when every answer has a plan, 1 when some answer has none (its reason says why; or none was
found within the time limit), 2 for bad input or output that cannot be written (one line on stderr, after a
one-line usage for argument errors; no traceback), 141 when a write to stdout fails because its reader has gone.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import errno
import io
import json
import os
import re
import stat
import sys
import tempfile
from collections.abc import Sequence
from math import ceil
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, get_args

from rich.console import Console, Group, RenderableType
from rich.table import Table

from solver import __version__
from solver.memory import DEFAULT_MARGIN, RolloutEngines, rollout_engines
from solver.query import (
    MAX_TIME_LIMIT_S,
    MAX_TOP,
    MAX_WORKERS,
    Objective,
    Query,
    TokenBudgetMode,
    TrinityVersion,
    Undecided,
    make_query,
    resolve_margin,
)
from solver.render import answers_json, answers_view, cells_json, tables_view
from solver.results import ENV_EXPORT, Answer, Plan
from solver.rules import NODE_GPUS
from solver.tables import (
    CONFIG_SHAPE,
    LEAST_DRIVER_MIB,
    LEAST_GPU_MEMORY_GB,
    MAX_ESTIMATED_GPUS,
    MAX_GPU_MEMORY_GB,
    MAX_TOKENS,
    OWN_GPU_HINT,
    Catalog,
    Fleet,
    Model,
    OneLineError,
    QueryError,
    Setting,
    TableError,
    and_more,
    brief,
    counted,
    cut,
    described_gpu_type,
    fleet_models,
    load_catalog,
    load_fleet,
    load_gpu_type,
    load_memory_model,
    load_model_config,
    load_weights,
    model_config_file,
    read_user_file,
    shipped_tables_directory,
)

if TYPE_CHECKING:
    from solver.calibrate import Observation
    from solver.tables import Coefficients, FitSummary, GpuType
    from solver.trinity import TrinityConfig

NO_PLAN = 1
BAD_INPUT = 2
INTERRUPTED = 130
CLOSED_PIPE = 141
"""128 + SIGPIPE: the exit status of a command whose output pipe closed (as `yes | head` gives)."""
MAX_CONFIG_BYTES = 256 * 1024
"""The largest Trinity config read: they run to a few KB, and a YAML parser written in Python (ruamel's round
trip, which keeps the comments) takes seconds per 100 KB, several times over with --write."""


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line usage on errors: the problem, not the whole synopsis."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # A negative number in any form (-1k, -1e-9, -5GB) is a value to refuse as such, not an unknown option.
        self._negative_number_matcher = re.compile(r"^-\.?\d")
        # An option that takes a value takes it once (its argument groups share this registry).
        self.register("action", None, _Once)
        self.register("action", "store", _Once)

    def parse_known_args(self, *args: Any, **kwargs: Any) -> Any:
        """argparse's, without the bookkeeping of `_Once` in the namespace."""
        namespace, rest = super().parse_known_args(*args, **kwargs)
        namespace.__dict__.pop("_given_once", None)
        return namespace, rest

    def parse_args(self, *args: Any, **kwargs: Any) -> Any:
        """argparse's, with the unrecognized arguments cut as `cut` cuts (argparse names them all)."""
        namespace, rest = self.parse_known_args(*args, **kwargs)
        if rest:
            self.error(f"unrecognized arguments: {cut(' '.join(rest))}")
        return namespace

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        """argparse's, with the invalid choice shown as `brief` shows it (argparse shows it whole)."""
        if action.choices is not None and value not in action.choices:
            accepted = ", ".join(map(repr, action.choices))
            raise argparse.ArgumentError(action, f"invalid choice: {brief(value)} (choose from {accepted})")

    def error(self, message: str) -> NoReturn:
        self.exit(BAD_INPUT, f"usage: {self.prog} [options] (--help lists them)\n{self.prog}: error: {message}\n")


class _Once(argparse.Action):
    """Store an option's value, refusing a second one: given twice, ``--gpu a100 --gpu h20`` would
    otherwise answer for the H20 alone, silently."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 _option_string: str | None = None) -> None:
        _refuse_twice(self, parser, namespace)
        setattr(namespace, self.dest, values)


class _OnceFlag(argparse.BooleanOptionalAction):
    """``--flag`` / ``--no-flag``, refusing a second one: ``--env --no-env`` would pin the last, silently."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        _refuse_twice(self, parser, namespace)
        super().__call__(parser, namespace, values, option_string)


def _refuse_twice(action: argparse.Action, parser: argparse.ArgumentParser, namespace: argparse.Namespace) -> None:
    """A usage error when `action`'s option was given before (bookkeeping in the namespace, which
    `_Parser.parse_known_args` removes)."""
    given = namespace.__dict__.setdefault("_given_once", set())
    if action.option_strings and action.dest in given:
        parser.error(f"argument {'/'.join(action.option_strings)}: given twice: give it once")
    given.add(action.dest)


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    return _whole_number(text, least=1)


def count_argument(text: str) -> int:
    """An argparse type: a whole number of at least 0."""
    return _whole_number(text, least=0)


WHOLE_NUMBER = re.compile(r"\s*([+-]?)([0-9]+)\s*")
"""A whole number as the command line takes it: ASCII digits, a sign, no ``_`` (which int() reads as nothing)."""
MOST_DIGITS = 4000
"""The most significant digits a number on the command line may have (int() refuses 4300)."""


def _whole_number(text: str, least: int) -> int:
    """A whole number written in ASCII digits, of at least `least` (for argparse: a type error otherwise)."""
    match = WHOLE_NUMBER.fullmatch(text)
    if match is None:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {brief(text)}")
    digits = match[2].lstrip("0") or "0"
    if len(digits) > MOST_DIGITS and match[1] == "-":
        raise argparse.ArgumentTypeError(f"must be at least {least}, got {cut(text.strip())}")
    if len(digits) > MOST_DIGITS:
        raise argparse.ArgumentTypeError(f"expected a number of at most {MOST_DIGITS} digits, got one of {len(digits)}")
    value = int(match[1] + digits)
    if value < least:
        raise argparse.ArgumentTypeError(f"must be at least {least}, got {brief(value)}")
    return value


def gpu_memory(text: str) -> tuple[int | None, int | None]:
    """An argparse type: a GPU's memory as (GB as sold, the driver's MiB), one of them None: ``80`` or
    ``80GB`` (taken as GiB by the memory model, as for a catalogue GPU without the driver's figure),
    ``81559MiB`` (nvidia-smi's total), or ``64GiB`` (65536 MiB)."""
    forms = "64, 64GB (as sold), 65536MiB (nvidia-smi's total) or 64GiB"
    match = re.fullmatch(r"\s*(\d+)\s*(mib|gib|gb)?\s*", text, flags=re.IGNORECASE) if text.isascii() else None
    if match is None:
        raise argparse.ArgumentTypeError(f"expected {forms}, got {brief(text)}")
    unit = (match[2] or "gb").lower()
    limit = MAX_GPU_MEMORY_GB * (1024 if unit == "mib" else 1)
    least = {"mib": LEAST_DRIVER_MIB, "gib": LEAST_GPU_MEMORY_GB, "gb": LEAST_GPU_MEMORY_GB}[unit]  # described_gpu_type's
    significant = match[1].lstrip("0") or "0"  # int() refuses 4300 digits, leading zeros too
    value = int(significant) if len(significant) <= len(str(limit)) else limit + 1
    if not least <= value <= limit:
        suffix = {"mib": "MiB", "gib": "GiB", "gb": ""}[unit]
        raise argparse.ArgumentTypeError(f"must be from {least}{suffix} to {limit}{suffix or ' (GB)'}, got {brief(text)}")
    return (value, None) if unit == "gb" else (None, value * 1024 if unit == "gib" else value)


def path_argument(text: str) -> Path:
    """An argparse type: a file or folder path, not empty, nor ``-`` (which many read as standard input or
    output, and which would be a file of that name here)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"expected a path, got {text!r}")
    if text == "-":
        raise argparse.ArgumentTypeError("expected a file name, got '-' (rft-solver reads and writes named files; "
                                         "what it would write goes to standard output without the option)")
    return Path(text)


STANDARD_STREAM_PATH = re.compile(r"^/(dev/(stdout|stderr|stdin|fd/\d+)|proc/(self|\d+)/fd/\d+)$")
"""Names of the process's own streams: written by rename, they would replace what the stream is redirected to."""


def output_path(text: str) -> Path:
    """An argparse type: the name of a file to write (not a folder's, ``out/``, nor a standard stream's,
    ``/dev/stdout``)."""
    path = path_argument(text)
    if text.endswith(("/", os.sep)):
        raise argparse.ArgumentTypeError(f"expected a file name, got the folder name {text!r}")
    if STANDARD_STREAM_PATH.match(os.path.normpath(text)):
        raise argparse.ArgumentTypeError(f"expected a file name, got {text} (what it would write goes to standard "
                                         "output without the option)")
    return path


def token_budget_mode(text: str) -> TokenBudgetMode:
    """An argparse type: the planner's ``--token-budget``, ``default`` or ``auto``."""
    for mode in get_args(TokenBudgetMode):
        if text == mode:
            return mode
    raise argparse.ArgumentTypeError(f"takes default or auto, got {brief(text)} (a budget of your own, in tokens per "
                                     "GPU: solve memory --token-budget T)")


def token_count(text: str) -> int:
    """An argparse type: a length in tokens, a whole number or thousands of 1024 (``32k`` = 32768)."""
    stripped = text.strip()
    thousands = stripped[-1:] in ("k", "K")
    match = WHOLE_NUMBER.fullmatch(stripped[:-1] if thousands else stripped)
    if match is None or match[0] != match[0].strip():  # no space before the k
        raise argparse.ArgumentTypeError(f"expected a whole number of tokens or of k (1024), got {brief(text)}")
    digits = match[2].lstrip("0") or "0"
    if match[1] == "-" or digits == "0":
        raise argparse.ArgumentTypeError(f"must be at least 1, got {cut(stripped)}")
    if len(digits) > MOST_DIGITS:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_TOKENS}, got {brief(stripped)}")
    return int(digits) * (1024 if thousands else 1)


def number(text: str) -> float:
    """An argparse type: a number written in ASCII (float() reads the digits of every script)."""
    if not text.isascii() or "_" in text:  # float() also reads 1_0 as 10
        raise argparse.ArgumentTypeError(f"expected a number, got {brief(text)}")
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {brief(text)}") from None


def host_memory(text: str) -> float:
    """An argparse type: a node's host memory in GB as RAM is sold (binary, so GiB): ``512``, ``512GB`` or
    ``512GiB``."""
    try:
        return number(re.sub(r"\s*(gib|gb)\s*$", "", text, flags=re.IGNORECASE))
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected 512, 512GB or 512GiB, got {brief(text)}") from None


def positive_seconds(text: str) -> float:
    """An argparse type: a number of seconds above zero."""
    try:
        value = number(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {brief(text)}") from None
    if not 0 < value <= MAX_TIME_LIMIT_S:
        raise argparse.ArgumentTypeError(f"must be a number above 0 and at most {MAX_TIME_LIMIT_S:.0f}, "
                                         f"got {cut(text)}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The planner's argument parser: ``solve [options]``."""
    parser = _Parser(
        prog="solve",
        description="Plan trainer GPUs for Trinity-RFT: Env, FSDP2 Offload and Ulysses SP, from the "
        "documented feasibility tables, solved with OR-Tools CP-SAT.",
        epilog="Other commands: solve tables (the documented tables), solve map (what fits, as a map), "
        "solve cluster (many jobs on a fleet), solve memory (one GPU's memory breakdown), solve calibrate "
        "(fit the memory model); each has --help. "
        "Exit status: 0 every answer has a plan, 1 some answer has none (or found none within --time-limit), "
        "2 bad input.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("--model", metavar="M", help="model: Qwen3-4B, 4B, qwen3-4b, ... (or from --from-config)")
    parser.add_argument("--gpu", metavar="G", help="GPU type (a100, h20, h100, b200, ...; an unknown name lists "
                        "them all); default: each one with tables")
    parser.add_argument("--gpus", metavar="N", type=positive_int, help="trainer GPU budget: use at most N")
    parser.add_argument("--len", metavar="L", type=token_count, dest="max_model_len",
                        help="max_model_len in tokens (32768 or 32k)")
    goal = parser.add_mutually_exclusive_group()
    goal.add_argument("--maximize", choices=["len"], help="the longest context within --gpus")
    goal.add_argument("--minimize", choices=["gpus"], help="the fewest trainer GPUs for --len")
    parser.add_argument("--exact", action="store_true", help="the trainer uses exactly --gpus GPUs")
    parser.add_argument("--sp", metavar="N", type=positive_int, help="pin the Ulysses SP degree")
    parser.add_argument("--env", action=_OnceFlag, help="pin Env (expandable_segments) on/off")
    parser.add_argument("--offload", action=_OnceFlag, help="pin FSDP2 CPU Offload on/off")
    parser.add_argument("--top", metavar="K", type=positive_int, default=1,
                        help=f"the K best plans, best first, each longer, faster, on fewer GPUs or better vouched for "
                             f"than those before it (at most {MAX_TOP})")
    parser.add_argument("--weights", metavar="FILE", type=path_argument, help="cost weights YAML (offload, sp, env)")
    parser.add_argument("--time-limit", metavar="S", type=positive_seconds, default=10.0,
                        help="seconds the solver may take per answer, its ranked plans together; the questions "
                        "behind its reasons get their own (default 10)")
    parser.add_argument("--workers", metavar="W", type=positive_int, default=1,
                        help=f"CP-SAT search workers (default 1, at most {MAX_WORKERS}; answers do not depend on it)")
    estimates = parser.add_argument_group("memory model")
    mode = estimates.add_mutually_exclusive_group()
    mode.add_argument("--estimate", action="store_const", const="only", dest="estimate_mode",
                      help="answer from the memory model alone, ignoring the tables (to compare)")
    mode.add_argument("--no-estimate", action="store_const", const="never", dest="estimate_mode",
                      help="no estimates: only documented and inferred plans")
    _add_memory_model_options(estimates)
    _add_token_budget_option(estimates, from_config=True)
    estimates.add_argument("--host-ram", metavar="GB", type=host_memory,
                           help="host memory per node (GB as RAM is sold, binary: GiB): rules out plans that do "
                           "not fit there (the model while it loads; with Offload, its states too)")
    estimates.add_argument("--node-gpus", metavar="G", type=positive_int,
                           help="GPUs per node (default: --from-config's cluster.gpu_per_node, else 8): a trainer "
                           "on more keeps each SP group in one node")
    estimates.add_argument("--model-config", metavar="PATH", type=path_argument,
                           help="a local Hugging Face config.json for a model the catalogue lacks")
    _add_cells_option(estimates)
    _add_gpu_memory_option(estimates)
    parser.add_argument("--explain", action="store_true",
                        help="say why: the rule that rules out each cheaper plan, or what stops any plan")
    parser.add_argument("--json", action="store_true", help="print a JSON array, one answer per GPU type")
    trinity = parser.add_argument_group("Trinity config")
    trinity.add_argument("--emit", choices=["trinity"], help="print the best plan as a Trinity YAML fragment")
    trinity.add_argument("--out", metavar="FILE", type=output_path, help="write that fragment to FILE")
    trinity.add_argument("--rollout-gpus", metavar="R", type=count_argument,
                         help="R rollout GPUs beside the trainer: the plan leaves them room (in the trainer's node, "
                              "or nodes of their own); --emit and --out add the cluster section (0: none here, "
                              "mode: train)")
    trinity.add_argument("--from-config", metavar="FILE", type=path_argument,
                         help="read model, max_model_len and trainer GPUs from a Trinity config; say whether its "
                         "settings train (flags override what the file says)")
    trinity.add_argument("--write", metavar="FILE", type=output_path,
                         help="with --from-config: write a copy of the config with the best plan applied")
    _add_trinity_version_option(trinity, "--emit, --out, --write",
                                "as the config has them, a fragment both", read=True)
    return parser


def _add_trinity_version_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup, made: str,
                                default: str, read: bool = False) -> None:
    """--trinity-version, for the commands that write Trinity configs (`made`: the options that write them;
    `read`: --from-config's config is read as that release's too)."""
    reads = "the config's release (with 0.6 an unset trainer_strategy is fsdp2), and " if read else ""
    parser.add_argument("--trinity-version", choices=get_args(TrinityVersion),
                        help=f"{reads}the Trinity-RFT release to write for ({made}): 0.6 gets the offload flags "
                             "under trainer too (with verl before 0.8 it takes those), 0.5 the roles' only (it "
                             f"refuses the others); default: {default}")


def build_tables_parser() -> argparse.ArgumentParser:
    """The argument parser for ``solve tables``."""
    parser = _Parser(
        prog="solve tables",
        description="Show the source's feasibility tables: one per GPU type and trainer GPU count.",
    )
    parser.add_argument("--gpu", metavar="G", help="only this GPU type (A100-80GB, H20-96GB; a100, h20)")
    parser.add_argument("--gpus", metavar="N", type=positive_int, help="only the table for N trainer GPUs")
    parser.add_argument("--model", metavar="M", help="only this model's column (Qwen3-4B, 4B, qwen3-4b)")
    parser.add_argument("--json", action="store_true", help="print a JSON array of cells")
    parser.add_argument("--check", action="store_true",
                        help="report where the tables contradict the semantics (exit 1 if anywhere)")
    _add_cells_option(parser)
    return parser


def build_cluster_parser() -> argparse.ArgumentParser:
    """The argument parser for ``solve cluster``."""
    parser = _Parser(
        prog="solve cluster",
        description="Place many Trinity jobs on a fleet of GPU node pools: which fit, where, with which plans.",
        epilog="Exit status: 0 every job placed, 1 some job unplaced (or no placement), 2 bad input.",
    )
    parser.add_argument("file", metavar="FILE.yaml", type=path_argument, help="pools and jobs (see docs/cluster.md)")
    parser.add_argument("--minimize", choices=["nodes"], help="place every job, on the fewest nodes")
    parser.add_argument("--no-widen", action="store_false", dest="widen",
                        help="leave idle GPUs idle (by default a placed job grows onto idle GPUs of its node where "
                        "more GPUs run it faster, or longer for at_least)")
    parser.add_argument("--time-limit", metavar="S", type=positive_seconds, default=10.0,
                        help="seconds from the start for the planner's queries and the placement search after "
                        "them (default 10; each query may take at most as long; widening after them, at most a "
                        "second per stage)")
    parser.add_argument("--workers", metavar="W", type=positive_int, default=1,
                        help=f"CP-SAT search workers (default 1, at most {MAX_WORKERS})")
    parser.add_argument("--weights", metavar="FILE", type=path_argument, help="cost weights YAML (offload, sp, env)")
    parser.add_argument("--json", action="store_true", help="print the placement as JSON")
    parser.add_argument("--emit-dir", metavar="DIR", type=path_argument, help="write each placed job's Trinity config to DIR")
    _add_trinity_version_option(parser, "--emit-dir", "both, with a comment on the trainer's")
    parser.add_argument("--no-estimate", action="store_const", const="never", default="auto", dest="estimate_mode",
                        help="plans from the tables alone: their GPU counts and cells, no memory-model estimates")
    _add_memory_model_options(parser)
    _add_token_budget_option(parser)
    _add_cells_option(parser)
    return parser


def _add_gpu_memory_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """--gpu-memory, for the commands that plan or estimate one GPU type."""
    parser.add_argument("--gpu-memory", metavar="M", type=gpu_memory,
                        help="the memory of --gpu NAME, a GPU type the catalogue lacks: GB as sold (64), "
                        "nvidia-smi's total (65536MiB) or GiB (64GiB); its plans are estimates, or with the memory "
                        "of a GPU type with tables (81920MiB, 80GiB: the A100-80GB's), that type's")


def _add_cells_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """--cells, for the commands that plan or estimate with tables."""
    parser.add_argument("--cells", metavar="FILE", type=path_argument, action="append",
                        help="cells you measured, a GPU table file in the tables' format (as solve calibrate "
                        "--cells; repeatable): tables of their GPU type, which vouch for plans as the source's do")


def _add_token_budget_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup,
                             from_config: bool = False) -> None:
    """--token-budget, for the commands that plan (`from_config`: the one that also reads a Trinity config)."""
    default = "default, unless --from-config's config sets a lower one" if from_config else "default"
    parser.add_argument("--token-budget", metavar="MODE", type=token_budget_mode,
                        help="trainer.max_token_len_per_gpu: Trinity's default, ceil(2 x L / SP), for every plan "
                        f"({default}); or auto: an estimated plan that "
                        "does not fit at the default takes the most tokens per GPU the memory model fits, at least "
                        "ceil(L / SP) (more micro-batches: slower steps, which the cost does not count)")


def _add_memory_model_options(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """--margin and --memory-model, for the commands that estimate."""
    parser.add_argument("--margin", metavar="F", type=number,
                        help="safety margin of estimates, a fraction of usable memory (default: the memory model's, "
                        f"{DEFAULT_MARGIN} for the shipped one)")
    parser.add_argument("--memory-model", metavar="FILE", type=path_argument,
                        help="coefficients from `solve calibrate --out`")


def run_cluster(args: argparse.Namespace) -> int:
    """``solve cluster``: place the jobs of a cluster file on its pools."""
    from solver.api import place
    from solver.render import cluster_json, cluster_view

    if args.trinity_version and args.emit_dir is None:
        raise QueryError("--trinity-version says which Trinity release --emit-dir writes for: give --emit-dir DIR")
    fleet, catalog = _fleet_and_catalog(args.file, args.cells or ())
    weights = load_weights(args.weights) if args.weights else None
    if args.emit_dir is not None:
        try:
            _check_emit_dir(args.emit_dir, [job.name for job in fleet.jobs],
                            [*_inputs(args), *(("a job's model_config", path) for path in fleet.model_config_files)])
        except OSError as error:  # a folder on the way without search permission (Path raises before Python 3.14)
            raise QueryError(f"--emit-dir {args.emit_dir}: cannot write: {error.strerror or error}") from None
    progress = _ProgressLine()
    memory = load_memory_model(args.memory_model) if args.memory_model else None
    result = place(fleet, catalog=catalog, minimize=args.minimize, weights=weights, time_limit_s=args.time_limit,
                   workers=args.workers, progress=progress, estimate=args.estimate_mode, memory=memory,
                   margin=args.margin, token_budget=args.token_budget or "default", widen=args.widen)
    progress.close()
    if args.emit_dir is not None and result.interrupted:
        print(f"solve cluster: interrupted: no configs written to {args.emit_dir} (the placement may not be the best)",
              file=sys.stderr)
    elif args.emit_dir is not None:
        from solver.trinity import trinity_fragment

        fragments = {}
        for placement in result.placements:
            model = catalog.model(next(job.model for job in fleet.jobs if job.name == placement.job))
            rollout = placement.rollout_gpus  # 0 too: the cluster section still gives the job's nodes
            pool = next(p for p in fleet.pools if p.name == placement.pool)
            shared = placement.gpu_indexes if len(placement.gpu_indexes) < pool.gpus_per_node else None
            size = rollout_engines(model, catalog.gpu(pool.gpu).memory_gib, rollout, placement.plan.max_model_len,
                                   pool.gpus_per_node).size if rollout else 1
            fragments[placement.job] = trinity_fragment(placement.plan, model, rollout, nodes=len(placement.nodes),
                                                        gpu=pool.gpu, shared_gpus=shared, engines=(0, size),
                                                        version=args.trinity_version, rocm=catalog.gpu(pool.gpu).rocm)
        made = bool(fragments) and not args.emit_dir.is_dir()
        if made:  # the folder is made only now, once there is an answer to write
            try:
                args.emit_dir.mkdir()
            except OSError as error:
                raise QueryError(f"--emit-dir {args.emit_dir}: cannot make the folder: {error.strerror}") from None
        try:
            write_all_atomically({args.emit_dir / f"{name}.yaml": fragment for name, fragment in fragments.items()})
        except QueryError:
            if made:  # nothing written (or, rarely, some: then the folder stays with them)
                with contextlib.suppress(OSError):
                    args.emit_dir.rmdir()
            raise
        stale = [unplaced.job for unplaced in result.unplaced if (args.emit_dir / f"{unplaced.job}.yaml").exists()]
        if stale:  # a config of an earlier run, for a job this placement leaves out, is not this run's
            print(f"solve cluster: note: {args.emit_dir} still holds configs from an earlier run for "
                  f"{', '.join(f'{name}.yaml' for name in stale)}, which this placement does not place",
                  file=sys.stderr)
    if args.json:
        sys.stdout.write(cluster_json(result) + "\n")
    else:
        _print_view(cluster_view(result, fleet, minimize_nodes=args.minimize == "nodes"), "solve cluster")
    if result.interrupted:
        print("solve cluster: interrupted: the best placement found so far is above", file=sys.stderr)
        return INTERRUPTED
    return 0 if result.placements and not result.unplaced else NO_PLAN


def _check_emit_dir(folder: Path, jobs: list[str], inputs: list[tuple[str, Path]]) -> None:
    """`QueryError` unless `folder` is one, or can be made, and each job's config in it is a file to write
    that overwrites none of the `inputs`: every target checked before the first is written."""
    if not folder.is_dir() and (folder.exists() or folder.is_symlink() or not folder.absolute().parent.is_dir()):
        problem = ("not a folder" if folder.exists() or folder.is_symlink()
                   else "no such folder, nor a folder to make it in")
        raise QueryError(f"{folder}: {problem} (--emit-dir writes one config per placed job into it)")
    if _same_file(folder, shipped_tables_directory() / "feasibility"):
        raise QueryError(f"--emit-dir {folder}: the shipped tables are read from there (every YAML file in it): "
                         "write the configs to another folder")
    for job in jobs:
        target = folder / f"{job}.yaml"
        overwritten = _input_at(inputs, target)
        if overwritten:
            raise QueryError(f"--emit-dir {folder}: job {job}'s config would overwrite {overwritten} "
                             f"{target}: write the configs to another folder")
        resolved = _resolved(target)
        if _not_a_regular_file(resolved) or (
                target.is_symlink() and not resolved.parent.is_dir()):
            raise QueryError(f"--emit-dir {folder}: job {job}'s config {target} is not a regular file "
                             "(or a link to a place one can be written)")


class _ProgressLine:
    """A live line on a terminal's stderr while a solve runs longer than a second: best and bound so far."""

    def __init__(self) -> None:
        self.shown = False

    def __call__(self, stage: str, best: float, bound: float, seconds: float) -> None:
        if seconds >= 1 and sys.stderr.isatty():
            sys.stderr.write(f"\r{stage}: best {best:g}, bound {bound:g} ({seconds:.1f} s)   ")
            sys.stderr.flush()
            self.shown = True

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\n")


def build_calibrate_parser() -> argparse.ArgumentParser:
    """The argument parser for ``solve calibrate``."""
    parser = _Parser(
        prog="solve calibrate",
        description="Fit the memory model's coefficients on documented cells (positive and negative evidence) "
        "and print them as a memory-model file.",
    )
    parser.add_argument("--cells", metavar="FILE", type=path_argument, action="append",
                        help="your own measured cells, a GPU table file in the tables' format (repeatable); "
                        "default: the shipped tables")
    parser.add_argument("--with-tables", action="store_true",
                        help="with --cells: fit on your cells and the shipped tables together")
    parser.add_argument("--model-config", metavar="PATH", type=path_argument,
                        help="a local Hugging Face config.json of a model your cells name that the catalogue lacks")
    parser.add_argument("--out", metavar="FILE", type=output_path, help="write the memory-model file to FILE")
    parser.set_defaults(regenerates=SHIPPED_MEMORY_MODEL)  # the one shipped file a command may write
    return parser


def run_calibrate(args: argparse.Namespace) -> int:
    """``solve calibrate``: fit the coefficients and print (or write) a memory-model file."""
    from solver.calibrate import calibrate

    _check_calibrate_args(args)
    catalog, added = _catalog_with(load_model_config(args.model_config) if args.model_config else None)
    gpu_types = [load_gpu_type(path, catalog.models, catalog.gpu_types) for path in args.cells] if args.cells else None
    if added and not any(added in table.models for gpu_type in gpu_types or [] for table in gpu_type.tables):
        print(f"solve calibrate: warning: no cell of yours names {added}, the model of --model-config (the cells name "
              "their models as the catalogue or the config does)", file=sys.stderr)
    evidence, yours, contradicted = _calibration_evidence(args, catalog, gpu_types)
    if not evidence:
        raise QueryError("no cells to calibrate on")
    coefficients, fit = calibrate(evidence)
    if not fit.positives:
        raise QueryError("no cell names a setting that trained (all are '-'): nothing shows how much memory a "
                         "run may take; add cells that trained")
    _report_fit(args, coefficients, fit, yours, contradicted)
    return 0


def _check_calibrate_args(args: argparse.Namespace) -> None:
    """`QueryError` for ``solve calibrate`` options that need --cells without it, or a file given twice."""
    if args.with_tables and not args.cells:
        raise QueryError("--with-tables adds the shipped tables to the cells of --cells FILE")
    if args.model_config and not args.cells:
        raise QueryError("--model-config describes a model that the cells of --cells FILE name")
    _check_once("--cells", args.cells or [])


def _calibration_evidence(args: argparse.Namespace, catalog: Catalog, gpu_types: list[GpuType] | None
                          ) -> tuple[list[Observation], list[Observation], bool]:
    """The observations to fit, those of your cells (whose misses are named) and whether any cells contradict;
    warns on stderr of the contradictions."""
    from solver.calibrate import contradictions, observations, own_contradictions

    evidence = observations(catalog, gpu_types=gpu_types)
    yours = list(evidence) if args.cells else []  # the cells whose misses are named, not the shipped tables'
    own = own_contradictions(catalog.models, gpu_types) if gpu_types else []
    if own:
        print(f"solve calibrate: warning: your cells contradict themselves, and the fit takes both sides: {own[0]}"
              f"{and_more(own)}; check the cells", file=sys.stderr)
    clashes: list[str] = []
    if args.cells and args.with_tables:
        evidence += observations(catalog)
        clashes += contradictions(gpu_types or [], catalog.documented_gpu_types)
        for measured in gpu_types or []:  # and across GPU counts: those the shipped tables lack, beside theirs
            across = catalog.new_contradictions(catalog.with_new_tables(measured), measured.name)
            clashes += [found for found in across if found not in own]  # those of your cells alone are said above
        if clashes:
            print(f"solve calibrate: warning: your cells contradict the documented tables "
                  f"({counted(len(clashes), 'contradiction')}), and the fit takes both sides: {clashes[0]}"
                  f"{and_more(clashes)}",
                  file=sys.stderr)
    return evidence, yours, bool(own or clashes)


def _report_fit(args: argparse.Namespace, coefficients: Coefficients, fit: FitSummary, yours: list[Observation],
                contradicted: bool) -> None:
    """Print (or write to --out) the memory-model file, with warnings and notes on stderr: coefficients at an edge
    of their range, and which of `yours` the fit predicts the other way."""
    from solver.calibrate import at_bounds, mispredicted
    from solver.render import memory_model_yaml

    cells = ", ".join(path.name for path in args.cells) if args.cells else "the documented tables"
    cells += " and the documented tables" if args.with_tables else ""
    text = memory_model_yaml(coefficients, fit, DEFAULT_MARGIN, cells)
    edges = at_bounds(coefficients)
    if edges:
        more = "" if args.with_tables or not args.cells else ", or --with-tables to fit with the documented ones too"
        mend = "mend the contradictions above, or " if contradicted else ""
        print(f"solve calibrate: warning: {', '.join(edges)} ended at the edge of the plausible range: "
              f"{counted(fit.observations, 'observation')} do not pin the model down; "
              f"{mend}add cells{more}", file=sys.stderr)
    if args.out:
        write_atomically(args.out, text)
        within = fit.failures_within_margin or 0
        print(f"wrote {args.out}: {counted(fit.observations, 'observation')}, "
              f"{fit.wrong_fits} predicted to fit that did not, "
              f"{fit.wrong_failures} predicted not to fit that did"
              + (f", and {within} that fit but not within the default safety margin of {DEFAULT_MARGIN} (plans "
                 f"take them with --margin 0{', or as tables with --cells' if args.cells else ''})" if within else ""))
    else:
        sys.stdout.write(text)
    if missed := mispredicted(yours, coefficients):  # a mistyped cell shows here first
        more = and_more(missed, CALIBRATE_MISSES_SHOWN)
        breaks = f"solve memory --memory-model {args.out}" if args.out else "solve memory, with the model written out,"
        print(f"solve calibrate: note: of your cells, the fit predicts the other way: "
              f"{'; '.join(missed[:CALIBRATE_MISSES_SHOWN])}{more} ({breaks} breaks each down)", file=sys.stderr)


CALIBRATE_MISSES_SHOWN = 3
"""How many of your cells that the fit predicts the other way `solve calibrate` names."""


def build_memory_parser() -> argparse.ArgumentParser:
    """The argument parser for ``solve memory``."""
    parser = _Parser(prog="solve memory",
                     description="Predicted peak memory of one trainer GPU, term by term, and whether it fits.")
    parser.add_argument("--model", metavar="M", help="model (or --model-config)")
    parser.add_argument("--model-config", metavar="PATH", type=path_argument, help="a local Hugging Face config.json")
    _add_cells_option(parser)
    parser.add_argument("--gpu", metavar="G", required=True, help="GPU type (any of gpus.yaml: h100, b200, ...)")
    parser.add_argument("--gpus", metavar="N", type=positive_int, required=True, help="trainer GPUs")
    parser.add_argument("--len", metavar="L", type=token_count, required=True, dest="max_model_len",
                        help="max_model_len in tokens")
    parser.add_argument("--sp", metavar="S", type=positive_int, default=1, help="Ulysses SP degree (default 1)")
    parser.add_argument("--token-budget", metavar="T", type=token_count,
                        help="trainer.max_token_len_per_gpu of your own (default: Trinity's, ceil(2 x L / S), which "
                        "the tables measured; at least ceil(L / S)); the tables speak where their tokens per GPU decide")
    parser.add_argument("--env", action="store_true", help="with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True")
    parser.add_argument("--offload", action="store_true", help="with FSDP2 CPU offload")
    parser.add_argument("--node-gpus", metavar="G", type=positive_int, default=NODE_GPUS,
                        help=f"GPUs per node (default {NODE_GPUS}): beyond one node, SP must divide a node")
    parser.add_argument("--host-ram", metavar="GB", type=host_memory,
                        help="host memory per node (GB as RAM is sold, binary: GiB): whether what the setting "
                        "holds there fits (the model while it loads; with --offload, its states too)")
    _add_gpu_memory_option(parser)
    _add_memory_model_options(parser)
    parser.add_argument("--json", action="store_true", help="print the breakdown as JSON")
    return parser


def run_memory(args: argparse.Namespace) -> int:
    """``solve memory``: one GPU's predicted peak memory and the verdict; exit 1 when it does not fit."""
    from solver.api import estimate_memory
    from solver.render import memory_json, memory_view

    _check_model_flags(args, "--model M (e.g. 4B) or --model-config PATH")
    catalog, added = _catalog_with(load_model_config(args.model_config) if args.model_config else None, args.gpu,
                                   args.gpu_memory, args.cells or ())
    model = catalog.model(args.model or added)
    gpu = catalog.gpu(args.gpu)
    memory_model = load_memory_model(args.memory_model)
    result = estimate_memory(model.name, gpu.name, args.gpus, args.max_model_len, sp=args.sp, env=args.env,
                             offload=args.offload, margin=args.margin, node_gpus=args.node_gpus, catalog=catalog,
                             memory=memory_model, max_token_len_per_gpu=args.token_budget, host_ram_gb=args.host_ram)
    margin = resolve_margin(memory_model, args.margin)
    setting = Setting(env=args.env, offload=args.offload, sp=args.sp)
    if args.json:
        asked = {"model": model.name, "gpu": gpu.name, "gpus": args.gpus, "max_model_len": args.max_model_len,
                 "sp": args.sp, "env": args.env, "offload": args.offload, "margin": margin,
                 "max_token_len_per_gpu": args.token_budget, "node_gpus": args.node_gpus,
                 "memory_model": str(args.memory_model) if args.memory_model else None}
        sys.stdout.write(memory_json(result, asked) + "\n")
    else:
        label = (f"{model.name} on {args.gpus} x {gpu.name} ({result.memory_gib:.1f} GiB), {setting.label}, "
                 f"{args.max_model_len} tokens ({result.tokens_per_gpu} per GPU"
                 f"{', your token budget' if args.token_budget else ''}), margin {margin:g}")
        _console().print(memory_view(result, label, gpu.name, model.name, args.gpus, args.offload,
                                     own_budget=args.token_budget is not None))
    return 0 if result.trains else NO_PLAN


def _fleet_and_catalog(path: Path, cells: Sequence[Path]) -> tuple[Fleet, Catalog]:
    """A cluster file's fleet, and the catalogue to place it with: the shipped one with the --cells tables and
    the fleet's models and GPU types. The cells may define a GPU type the fleet's pools name, so they come
    first; where they name a job's model_config model, which only the fleet defines, its models come first."""
    try:
        base, _ = _catalog_with(None, cells=cells)
    except OneLineError as cells_error:
        try:  # cells that name a job's model_config model: the fleet's models first, then the cells, then its pools
            base, _ = _catalog_with(None, cells=cells, start=load_catalog().with_models(fleet_models(path, load_catalog())))
            fleet = load_fleet(path, base)
            return fleet, base.for_fleet(fleet)
        except OneLineError:
            raise cells_error from None
    fleet = load_fleet(path, base)
    return fleet, base.for_fleet(fleet)


def _catalog_with(model: Model | None, gpu: str | None = None,
                  memory: tuple[int | None, int | None] | None = None,
                  cells: Sequence[Path] = (), start: Catalog | None = None,
                  keep_contradictions: bool = False) -> tuple[Catalog, str]:
    """The shipped catalogue (or `start`), with `model` added (--model-config's), the tables of the --cells
    files (which may name it; with `keep_contradictions`, even where they contradict themselves or the tables, to
    list them), and the GPU type that --gpu NAME --gpu-memory M describes; and that model's name as the
    catalogue gives it ("" without one)."""
    catalog, added = start or load_catalog(), ""
    if model is not None:
        catalog = catalog.with_model(model)
        added = catalog.models[-1].name  # with_model adds it last, renamed if it only borrows a name
    _check_once("--cells", cells)
    tabled_by: dict[tuple[str, int], Path] = {}  # (GPU type, count): the --cells file that gave its table
    for path in cells:
        before = _tables_in(catalog)
        try:
            catalog = catalog.with_cells(path, keep_contradictions=keep_contradictions)
        except QueryError as error:
            measured = load_gpu_type(path, catalog.models, catalog.gpu_types)  # loaded before the merge failed
            other = next((tabled_by[(measured.name, t.gpus)] for t in measured.tables
                          if (measured.name, t.gpus) in tabled_by), None)
            raise QueryError(f"--cells {path}: a table for a GPU count that --cells {other} has already: give each "
                             "table once" if other else f"--cells {error}") from None
        tabled_by.update(dict.fromkeys(_tables_in(catalog) - before, path))
    if memory is None and gpu is not None:
        try:
            catalog.gpu(gpu)
        except QueryError as error:
            raise QueryError(f"{error}{OWN_GPU_HINT.format('--gpu-memory M')}") from None
    if memory is not None:
        if gpu is None:
            raise QueryError("--gpu-memory gives the memory of the GPU type --gpu NAME names: give --gpu too")
        try:
            known = catalog.gpu(gpu)
        except QueryError:
            catalog = catalog.with_gpu_types([described_gpu_type(gpu, *memory, source="--gpu-memory")])
        else:
            raise QueryError(f"--gpu {cut(gpu)} names {known.name} ({known.memory_gib:.1f} GiB), a GPU type "
                             "whose memory is known: drop --gpu-memory, or give your GPU type a name of its own")
    return catalog, added


def _tables_in(catalog: Catalog) -> set[tuple[str, int]]:
    """(GPU type, trainer GPU count) of every table in `catalog`."""
    return {(gpu_type.name, table.gpus) for gpu_type in catalog.gpu_types for table in gpu_type.tables}


def _note_memory_as_sold(args: argparse.Namespace, prog: str) -> None:
    """A note on stderr where --gpu-memory gives GB as sold, which the memory model takes as GiB: a card with
    ECC GDDR memory reports less, and nvidia-smi's total is exact."""
    memory = getattr(args, "gpu_memory", None)
    if memory is not None and memory[1] is None:
        print(f"{prog}: note: --gpu-memory {memory[0]} is taken as {memory[0]} GiB; a card with ECC "
              "GDDR memory reports less (an L40S 48GB: 45.0 GiB), so give nvidia-smi's total where you have it "
              "(--gpu-memory 46068MiB for an L40S)", file=sys.stderr)


def _confusable(name: str) -> str:
    """A GPU name with the letters that pass for digits as those digits (O for 0, I and l for 1), in any case."""
    return name.casefold().translate(str.maketrans("oil", "011"))


def _note_cells_elsewhere(args: argparse.Namespace, prog: str) -> None:
    """Notes on stderr for --cells files that may not be what was meant: one for a GPU type the catalogue lacks whose
    name is one it has but for letters that pass for digits (`_confusable`: a typo makes a GPU type of its own,
    silently; not where --gpu names it), and one where --gpu asks for a GPU
    type the file's tables do not speak for (neither it nor one with its driver-reported memory): with less memory
    they are not used; with more, only their cells that say a setting ran out of memory are (`larger_gpu_types`)."""
    paths = getattr(args, "cells", None) or ()
    if not paths:
        return
    model_config = getattr(args, "model_config", None)
    try:
        catalog = _catalog_with(load_model_config(model_config) if model_config else None, getattr(args, "gpu", None),
                                getattr(args, "gpu_memory", None), paths, keep_contradictions=True)[0]
        asked = catalog.with_same_memory(args.gpu) if getattr(args, "gpu", None) else None
        measured = [(path, catalog.gpu(load_gpu_type(path, catalog.models, catalog.gpu_types).name)) for path in paths]
    except OneLineError:  # what a command refused is said already
        return
    shipped = load_catalog().gpu_types
    known = {_confusable(known): gpu_type.name for gpu_type in shipped for known in (gpu_type.name, *gpu_type.aliases)}
    for path, gpu_type in measured:
        meant = known.get(_confusable(gpu_type.name))  # H10O for H100: not RTX-3090 for RTX-4090, another card
        if meant is not None and meant != gpu_type.name and (asked is None or asked.gpu_types[0] != gpu_type):
            print(f"{prog}: note: {path}: {gpu_type.name} is not a GPU type of the catalogue, so its cells make one of "
                  f"their own (did you mean {meant}?)", file=sys.stderr)
        if asked is None or any(gpu_type.name == speaking.name for speaking in asked.gpu_types):
            continue
        own = asked.gpu_types[0]
        used = ("only those that say a setting ran out of memory count here (it does with less memory too)"
                if gpu_type.memory_gib >= own.memory_gib else "they are not used here")
        print(f"{prog}: note: {path}: its cells are for {gpu_type.name} ({gpu_type.memory_gib:.1f} GiB), not for "
              f"{own.name} ({own.memory_gib:.1f} GiB) or a GPU type of its driver-reported memory: {used}",
              file=sys.stderr)


SHORT_LENGTH_NOTED = 256
"""The longest --len that gets a note suggesting thousands (``256`` may well mean ``256k``)."""


def _note_short_length(args: argparse.Namespace, prog: str) -> None:
    """A note on stderr where --len is a few hundred tokens at most: ``--len 32`` is 32 tokens, likely meant as 32k."""
    length = getattr(args, "max_model_len", None)
    if length is not None and length <= SHORT_LENGTH_NOTED:
        print(f"{prog}: note: --len {length} is {counted(length, 'token')}; for {length * 1024} tokens write --len "
              f"{length}k", file=sys.stderr)


def _check_once(flag: str, paths: Sequence[Path]) -> None:
    """`QueryError` when two of the files a repeatable `flag` names are the same file."""
    twice = next((path for i, path in enumerate(paths) if any(_same_file(path, other) for other in paths[:i])), None)
    if twice is not None:
        raise QueryError(f"{flag} {twice}: the same file is given twice; give each file once")


def build_map_parser() -> argparse.ArgumentParser:
    """The argument parser for ``solve map``."""
    parser = _Parser(prog="solve map", description="Maps of what fits: the longest context per model and GPU "
                     "budget, or (--by len) the cheapest setting per length and budget.",
                     epilog="Exit status: 0 the maps are printed, 1 a cell's solve ran out of time (nothing is "
                     "printed), 2 bad input.")
    parser.add_argument("--gpu", metavar="G", help="GPU type (default: each with tables)")
    parser.add_argument("--model", metavar="M", help="only this model (needed with --by len)")
    parser.add_argument("--gpus-up-to", metavar="N", type=positive_int, default=8, help="GPU budgets 1 to N (default 8)")
    parser.add_argument("--by", choices=["model", "len"], default="model", help="rows: models (default) or lengths")
    parser.add_argument("--svg", metavar="FILE", type=output_path, help="also save the map as SVG")
    parser.add_argument("--json", action="store_true",
                        help="print the maps as JSON: per GPU type, each row's best plan at each budget (null: none)")
    parser.add_argument("--model-config", metavar="PATH", type=path_argument,
                        help="a local Hugging Face config.json, for a model the catalogue lacks (as --model)")
    _add_gpu_memory_option(parser)
    _add_cells_option(parser)
    _add_memory_model_options(parser)
    return parser


def run_map(args: argparse.Namespace) -> int:
    """``solve map``: heatmaps of the planner's answers over GPU budgets."""
    from solver.maps import cheapest_by_length, length_rows, longest_by_model
    from solver.render import map_json, map_view

    _check_model_flags(args, "--model M or --model-config PATH", given=True)  # one at most: a map may have none
    catalog, added = _catalog_with(load_model_config(args.model_config) if args.model_config else None, args.gpu,
                                   args.gpu_memory, args.cells or ())
    estimates = {"memory": load_memory_model(args.memory_model) if args.memory_model else None,
                 "margin": args.margin}
    if args.gpus_up_to > MAX_ESTIMATED_GPUS:
        raise QueryError(f"--gpus-up-to must be at most {MAX_ESTIMATED_GPUS}, got {args.gpus_up_to}")
    if args.by == "len" and args.model is None and not added:
        raise QueryError("--by len maps one model: give --model M (or --model-config PATH)")
    gpus = [catalog.gpu(args.gpu)] if args.gpu else list(catalog.documented_gpu_types)
    asked = catalog.model(args.model).name if args.model else added or None
    budgets = list(range(1, args.gpus_up_to + 1))
    screen = _console()
    views, maps = [], []
    for gpu in gpus:
        if asked is not None and args.by == "len":
            rows: list[Any] = length_rows(catalog, gpu.name, asked, budgets, **estimates)
            grid = cheapest_by_length(catalog, gpu.name, asked, rows, budgets, **estimates)
            title = f"{gpu.name} · {asked}: cheapest setting per length and GPU budget"
        else:
            documented = [m.name for m in catalog.models if any(m.name in t.models for t in gpu.tables)]
            rows = [asked] if asked else documented or [
                m.name for m in catalog.models if any(m.name in t.models for g in catalog.gpu_types for t in g.tables)]
            grid = longest_by_model(catalog, gpu.name, rows, budgets, **estimates)
            title = f"{gpu.name}: longest context per model and GPU budget"
        views.append(map_view(grid, rows, budgets, title, by_length=args.by == "len"))
        maps.append((gpu.name, grid, rows))
    # Every budget keeps a readable column: a file or pipe gets the maps' full width, and a terminal too
    # narrow for them a note (rich would squeeze the columns empty).
    unbounded = Console(width=1 << 16, file=io.StringIO(), **PLAIN_TEXT)
    needed = max(unbounded.measure(view.renderables[1]).maximum for view in views)  # the table, not title or legend
    if not screen.is_terminal:
        screen = _console(max(needed, screen.width))
    elif needed > screen.width and not args.json:
        print(f"solve map: note: the maps need {needed} columns and the terminal has {screen.width}: widen it, "
              "pipe the output (| less -S), or save it with --svg FILE", file=sys.stderr)
    if args.svg:  # written first: a file that cannot be written is bad input, with nothing printed
        recorder = Console(record=True, width=max(needed, 80), file=io.StringIO(), **PLAIN_TEXT)
        for view in views:
            recorder.print(view)
        write_atomically(args.svg, recorder.export_svg(title="rft-solver map"))
    if args.json:
        sys.stdout.write(map_json(maps, budgets, model=asked if args.by == "len" else None) + "\n")
        return 0
    for view in views:
        screen.print(view)
    return 0


def run_tables(args: argparse.Namespace) -> int:
    """``solve tables``: print the documented tables, narrowed by the filters."""
    full = _catalog_with(None, cells=args.cells or (), keep_contradictions=args.check)[0]
    try:
        catalog = full.narrowed(gpu=args.gpu, gpus=args.gpus, model=args.model)
    except QueryError as error:
        if args.gpu is None or full.gpu(args.gpu).tables:
            raise
        raise QueryError(f"{error}; solve map --gpu {args.gpu} maps what the planner answers for it") from None
    if args.check:  # a GPU type is checked against those with its memory, whose tables it borrows
        found = (full.with_same_memory(args.gpu).narrowed(gpus=args.gpus, model=args.model) if args.gpu
                 else catalog).contradictions()
        if args.json:
            sys.stdout.write(json.dumps(found, indent=2) + "\n")
        else:
            for line in found:
                print(f"warning: {line}")
            print(f"{counted(len(found), 'contradiction')} in {counted(len(list(catalog.cells())), 'cell')}")
        return NO_PLAN if found else 0
    if args.json:
        sys.stdout.write(cells_json(catalog.cells()) + "\n")
    else:
        _print_view(tables_view(catalog), "solve tables")
    model = catalog.model(args.model) if args.model else None
    if model is not None and model.tables_of is not None:  # beside JSON, on stderr: the array stays the cells
        print(f"{'solve tables: note: ' if args.json else ''}{model.tables_of}'s cells stand for {model.name}, "
              "of the same shape", file=sys.stderr if args.json else sys.stdout)
    return 0


def _check_trinity_flags(args: argparse.Namespace) -> None:
    if args.emit and args.json:
        raise QueryError("--emit trinity prints YAML: drop --json")
    if args.write and not args.from_config:
        raise QueryError("--write patches the config of --from-config FILE")
    if args.trinity_version and not (args.emit or args.out or args.write or args.from_config):
        raise QueryError("--trinity-version says which Trinity release --emit, --out and --write write for, and "
                         "--from-config's config is: give one of them")
    if args.emit and (args.top > 1 or args.explain):
        raise QueryError("--emit trinity prints the best plan's YAML alone: drop --top and --explain")
    _check_model_flags(args, "--model M (e.g. 4B), --model-config PATH or --from-config FILE",
                       given=args.from_config is not None)


def _check_model_flags(args: argparse.Namespace, ways: str, given: bool = False) -> None:
    """One way to name the model: --model or --model-config (or, with `given`, another the caller has)."""
    if args.model is not None and args.model_config is not None:
        raise QueryError("--model and --model-config both name the model: give one")
    if args.model is None and args.model_config is None and not given:
        raise QueryError(f"which model? give {ways}")


INPUT_FLAGS = ("from_config", "weights", "memory_model", "model_config", "cells", "file")
"""The arguments that name files the command reads (cells is a list)."""
OUTPUT_FLAGS = ("out", "write", "svg")
"""The arguments that name files the command writes."""


def _check_outputs_spare_inputs(args: argparse.Namespace) -> None:
    """`QueryError`, before any work, when a file the command would write is one it reads (nothing given
    is ever lost), is not a regular file, or has no folder to go in."""
    inputs = _inputs(args)
    written: list[tuple[str, Path]] = []
    for name in OUTPUT_FLAGS:
        target: Path | None = getattr(args, name, None)
        if target is None:
            continue
        resolved = _resolved(target)
        try:
            if _not_a_regular_file(resolved):
                raise QueryError(f"{resolved}: not a regular file; give a file name to write")
            if not resolved.parent.is_dir():
                problem = "is not a folder" if resolved.parent.exists() else "does not exist"
                raise QueryError(f"{target}: cannot write: {resolved.parent} {problem}")
        except OSError as error:  # a folder on the way without search permission (Path raises before Python 3.14)
            raise QueryError(f"{target}: cannot write: {error.strerror or error}") from None
        for other, path in written:
            if _same_file(target, path):
                raise QueryError(f"--{other} and --{name} both write {target}: give each its own file")
        written.append((name, target))
        _refuse_overwriting(name, target, inputs)


def _refuse_overwriting(name: str, target: Path, inputs: list[tuple[str, Path]]) -> None:
    """`QueryError` when the output of argument `name`, `target`, would overwrite one of the `inputs`."""
    overwritten = _input_at(inputs, target)
    if overwritten:
        raise QueryError(f"--{name} {target} would overwrite {overwritten}: write to another file")


SHIPPED_MEMORY_MODEL = "memory-model.yaml"
"""The shipped file `solve calibrate --out` regenerates; no command writes any other shipped table."""


def _inputs(args: argparse.Namespace) -> list[tuple[str, Path]]:
    """(what it is, in words; path) of every file the command reads (`INPUT_FLAGS`; for --model-config of a
    folder, the folder's config.json), and the shipped tables every command reads (but the memory model that
    `solve calibrate --out` regenerates from the shipped tables alone)."""
    shipped = shipped_tables_directory()
    regenerates = getattr(args, "regenerates", None)
    yours = regenerates is not None and getattr(args, "cells", None)  # a fit on your cells is not the shipped one
    inputs = [("the shipped memory model (a fit on your cells goes to a file of its own, for --memory-model FILE)"
               if yours and path.name == regenerates else "the shipped tables' file", path)
              for path in (*shipped.glob("*.yaml"), *shipped.glob("feasibility/*"))
              if yours or path.name != regenerates]
    for name in INPUT_FLAGS:
        value = getattr(args, name, None)
        words = "the cluster file" if name == "file" else f"the file of --{name.replace('_', '-')}"
        inputs += [(words, model_config_file(path) if name == "model_config" else path)
                   for path in (value if isinstance(value, list) else [value]) if path is not None]
    return inputs


MODEL_PATH = "model.model_path"
"""The Trinity config key that names the model: a Hugging Face id, or a local folder."""


def _input_at(inputs: list[tuple[str, Path]], target: Path) -> str | None:
    """Which of the `inputs` writing `target` would overwrite, in words (None when none)."""
    return next((words for words, path in inputs if _same_file(target, path)), None)


def _same_file(path: Path, other: Path) -> bool:
    """Whether two paths name the same file (an existing one, or the same resolved path)."""
    try:
        return path.samefile(other)
    except OSError:
        return _resolved(path) == _resolved(other)


def _resolved(path: Path) -> Path:
    """Where a path leads (through links); a link in a loop, one that leads nowhere, or a path that cannot
    be looked at (in a folder without search permission), is itself."""
    try:
        if not path.is_symlink():
            return path
        return path.resolve(strict=False)  # a dangling link leads to where its file would be
    except (OSError, RuntimeError):  # a loop (RuntimeError before Python 3.13)
        return path


def _read_config(path: Path, version: TrinityVersion | None) -> tuple[str, TrinityConfig]:
    from solver.trinity import ConfigError, read_trinity_config

    text = read_user_file(path, MAX_CONFIG_BYTES)
    try:
        return text, read_trinity_config(text, str(path), os.environ, version)
    except ConfigError as error:
        raise QueryError(str(error)) from None


def _model_path_file(config: TrinityConfig | None) -> Path | None:
    """The config.json that the config's ``model.model_path`` names on this machine (a folder holding one,
    or the file itself; relative to the working directory, as Trinity reads it); None otherwise (a Hugging
    Face id, say: nothing is fetched)."""
    if config is None or config.model_path is None:
        return None
    try:
        file = model_config_file(Path(config.model_path))
        return file if file.is_file() else None
    except (OSError, TableError):  # a name too long for a path, a folder it may not look into: nothing local
        return None


def _not_found_locally(config: TrinityConfig) -> str:
    """Where the config's model path is a local one (not a Hugging Face id) without a config.json: where it was
    looked for, in words ("" otherwise)."""
    path = config.model_path or ""
    if path.startswith("/"):
        return f" (and no config.json at {path})"
    if path.startswith(("./", "../")):  # else a Hugging Face id, or a name
        return f" (and no config.json at {path}, from the working directory {Path.cwd()}, as Trinity reads it)"
    return ""


def _model_path_model(file: Path, config: TrinityConfig) -> Model | None:
    """The model that the local `file` (`_model_path_file`) describes, read as --model-config reads it
    (known by its folder too: a checkpoint of Qwen3-8B's shape in a folder ``Qwen3-8B`` is that model,
    whatever its ``_name_or_path``). None where it cannot be read as a dense model's (a MoE checkpoint)
    and the path names a catalogue model: the name stands, as for a Hugging Face id."""
    try:
        return load_model_config(file)
    except TableError as unreadable:
        try:
            load_catalog().model(config.model)
        except QueryError:  # the user's own model, which only its config.json describes: why it cannot be read
            raise unreadable from None
        return None


def run_planner(args: argparse.Namespace) -> int:
    """``solve``: answer the planning question for each GPU type asked about."""
    _check_trinity_flags(args)
    config_text, config = _read_config(args.from_config, args.trinity_version) if args.from_config else ("", None)
    catalog, added = _planner_catalog(args, config)
    objective: Objective = "max_len" if args.maximize else "min_gpus" if args.minimize else "cheapest"
    if config is not None:
        _check_planner_config(args, catalog, added, config, objective)
    query = _planner_query(args, catalog, added, config, objective)
    from solver.api import answer_query, with_config_verdicts  # as solving, only where it is asked

    answers = answer_query(query, catalog, explain=args.explain)
    if config is not None:
        answers = with_config_verdicts(answers, query, catalog, config, config_text, args.from_config.name, os.environ,
                                       args.trinity_version)
    fragments = _write_trinity(args, answers, catalog, catalog.model(query.model), config_text,
                               query.node_gpus, config)
    _print_planner(args, answers, fragments, query, catalog)
    return 0 if all(answer.plans for answer in answers) else NO_PLAN


def _planner_catalog(args: argparse.Namespace, config: TrinityConfig | None) -> tuple[Catalog, str]:
    """The catalogue to plan with (--model-config's model, or the local one the config names, added; --gpu
    --gpu-memory and --cells) and the added model's name; refuses an output over the config's config.json."""
    local = _model_path_file(config)
    if local is not None:  # an input, read or not: no output may overwrite it
        for name in OUTPUT_FLAGS:
            if getattr(args, name, None) is not None:
                _refuse_overwriting(name, getattr(args, name), [(f"the config.json that {MODEL_PATH} names", local)])
    if args.model_config is not None:
        described: Model | None = load_model_config(args.model_config)
    elif local is not None and config is not None and args.model is None:
        described = _model_path_model(local, config)
    else:
        described = None
    return _catalog_with(described, args.gpu, args.gpu_memory, args.cells or ())


def _check_planner_config(args: argparse.Namespace, catalog: Catalog, added: str, config: TrinityConfig,
                          objective: Objective) -> None:
    """`QueryError` where --from-config's config and the other options cannot be planned together: a trainer
    other than FSDP, an unknown model, no length, a --write or --rollout-gpus at odds with the config."""
    if (args.write or args.emit or args.out) and config.strategy not in (None, "fsdp", "fsdp2"):
        raise QueryError(f"{args.from_config}: trainer.trainer_strategy is {config.strategy}: rft-solver plans FSDP "
                         "trainers (fsdp, or fsdp2 for Offload), whose settings do not carry over to it; plan it "
                         "by hand")
    if args.model is None and not added:
        try:
            catalog.model(config.model)
        except QueryError as error:
            raise QueryError(f"{args.from_config}: {MODEL_PATH}: {error}{_not_found_locally(config)}; or give --model "
                             "M, or --model-config PATH (the model's config.json)") from None
    if objective != "max_len" and args.max_model_len is None and config.max_model_len is None:
        raise QueryError(f"{args.from_config}: no model.max_model_len to plan for: give --len L (or --maximize len)")
    if args.write:
        _check_write_keeps_gpus(args, objective, config)
    if args.write or args.out or args.emit:
        _check_write_keeps_model(args, catalog, config)
    if args.rollout_gpus is not None and config.trainer_gpus is not None and args.rollout_gpus != config.rollout_gpus:
        raise QueryError(f"--rollout-gpus {args.rollout_gpus}: {args.from_config} gives rollout {config.rollout_gpus} "
                         "GPUs (its engines times their GPUs each): drop --rollout-gpus")


def _planner_query(args: argparse.Namespace, catalog: Catalog, added: str, config: TrinityConfig | None,
                   objective: Objective) -> Query:
    """The query the options (and --from-config's config) ask; `QueryError` where --out or --write would have
    more than one GPU type's plan."""
    asked = {"model": args.model or added or None, "gpu": args.gpu, "objective": objective, "budget_gpus": args.gpus,
             "exact": args.exact, "max_model_len": args.max_model_len, "sp": args.sp, "env": args.env,
             "offload": args.offload, "top": args.top, "weights": load_weights(args.weights) if args.weights else None,
             "time_limit_s": args.time_limit, "workers": args.workers, "estimate": args.estimate_mode or "auto",
             "memory": load_memory_model(args.memory_model) if args.memory_model else None, "margin": args.margin,
             "host_ram_gb": args.host_ram, "rollout_gpus": args.rollout_gpus}  # --model-config describes the model
    from solver.api import config_query  # as solving, only where it is asked

    if config is None:
        query = make_query(catalog, **{**asked, "model": asked["model"] or ""},
                           token_budget=args.token_budget or "default", node_gpus=args.node_gpus or NODE_GPUS)
    else:  # --write plans for the config's own GPU count, whatever the objective
        query = config_query(catalog, config, **{**asked, "exact": True if args.exact or args.write else None},
                             token_budget=args.token_budget, node_gpus=args.node_gpus)
    if (args.out or args.write) and len(query.gpus) > 1:
        raise QueryError(f"--out and --write take one plan: choose one GPU type with --gpu ({' or '.join(query.gpus)}, "
                         "the ones this answer covers, or any other of the catalogue)")
    return query


def _print_planner(args: argparse.Namespace, answers: tuple[Answer, ...], fragments: Sequence[str], query: Query,
                   catalog: Catalog) -> None:
    """Print the answers: the Trinity fragments (--emit), JSON (--json) or the view, with the --cells
    optimism note on stderr and a line for each file written."""
    if args.cells and (note := _optimism_note(args.cells, catalog, answers, query)):
        print(note, file=sys.stderr)
    if args.emit:
        sys.stdout.write("---\n".join(fragments))
    elif args.json:
        sys.stdout.write(answers_json(answers) + "\n")
    else:
        console = _print_view(answers_view(answers, query, catalog, args.trinity_version), "solve")
        for written in (args.out, args.write):
            if written is not None and answers[0].plans:
                console.print(f"wrote {written}")


def _optimism_note(cells: Sequence[Path], catalog: Catalog, answers: Sequence[Answer], query: Query) -> str | None:
    """Where an answer's best plan is an estimate for a GPU type and model that cells of yours measured (of that
    GPU type, or of one with its memory), and some of them ran out of memory with Env where the memory model
    predicts a fit: that (its estimates near those cells may be optimistic too), and the margin under which it
    agrees with them; None otherwise. The files are read again for your cells alone: the catalogue has merged
    them with the shipped ones."""
    from solver.calibrate import observations, optimistic

    estimated = {(answer.gpu, answer.model) for answer in answers if answer.best and answer.best.evidence == "estimated"}
    mine = [load_gpu_type(path, catalog.models, catalog.gpu_types) for path in cells]

    def near(gpu: str, model: str) -> bool:  # cells of the GPU type, or of one whose tables it borrows
        return any(model == name and (gpu == planned or catalog.gpu(gpu).memory_mib is not None
                                      and catalog.gpu(gpu).memory_mib == catalog.gpu(planned).memory_mib)
                   for planned, name in estimated)

    estimable = (seen for seen in observations(catalog, lambda gpu, _, model: near(gpu, model), mine)
                 if seen.setting.env or query.env is False)  # estimates turn Env on unless --no-env
    wrong = optimistic(estimable, query.memory.coefficients, query.margin)
    if not wrong:
        return None
    seen, total, usable = wrong[0]
    # usable is proportional to 1 - margin: the least margin (in hundredths) under which each predicted peak exceeds it
    margin = ceil(100 * (1 - (1 - query.margin) * min(total / usable for _, total, usable in wrong)) + 1e-9) / 100
    return (f"solve: note: your cells say {counted(len(wrong), 'setting')} ran out of memory where the memory model "
            f"predicts a fit ({seen.setting.label} on {counted(seen.gpus, seen.gpu + ' GPU')} for {seen.model.name} at "
            f"{seen.max_model_len}: {total:.1f} GiB predicted of {usable:.1f} usable), so its estimates near them may be "
            f"optimistic too: with --margin {margin:g} it predicts that each of them runs out")


def _engines_note(engines: RolloutEngines, model: Model, gpu: str) -> str | None:
    """Why the rollout engines are larger than one GPU, or that even the largest holds too little; None
    for engines of one GPU that hold enough."""
    held = (f"{model.name}'s bf16 weights ({engines.weights_gib:.1f} GiB) and one sequence's KV cache "
            f"({engines.kv_cache_gib:.1f} GiB) per GPU")
    advice = ("no larger tensor-parallel size stays in a node and suits the heads: the rollout needs GPUs with more "
              "memory" if engines.largest else "give the rollout more GPUs, a count that a larger tensor-parallel "
              "size divides")
    if engines.weights_gib + engines.kv_cache_gib > engines.room_gib:
        return (f"solve: note: {held} at tensor-parallel size {engines.size} take more than vLLM takes of one {gpu} "
                f"({engines.room_gib:.1f} GiB): the engines cannot hold them; {advice}")
    if not engines.fits:
        return (f"solve: note: {held} at tensor-parallel size {engines.size} take more than half of what vLLM takes "
                f"of one {gpu} ({engines.room_gib:.1f} GiB): little room for sequences in flight; {advice}")
    if engines.size > 1:
        return (f"solve: note: rollout engines of tensor-parallel size {engines.size}: {held} take at most half of "
                f"what vLLM takes of one {gpu} ({engines.room_gib:.1f} GiB), leaving the rest to sequences in flight")
    return None


def _check_write_keeps_model(args: argparse.Namespace, catalog: Catalog, config: TrinityConfig) -> None:
    """--write patches the config's model, and --out and --emit give keys to merge into it: a --model, or a
    --model-config named after a catalogue model, that names another catalogue model would apply that model's
    plan to it. (A name the catalogue does not know, a local path say, is the user's to give.)"""
    flag = "--model" if args.model else "--model-config"
    local = _model_path_file(config)
    if args.model_config and local is not None and _same_file(model_config_file(args.model_config), local):
        return  # the config.json its model.model_path names: the config's own model
    try:
        configured = catalog.model(config.model).name
        if args.model:
            named = catalog.model(args.model).name
        elif args.model_config:  # named after a catalogue model (its shape or not)? else it is the user's own
            named = load_catalog().model(catalog.models[-1].name.removesuffix(CONFIG_SHAPE)).name
        else:
            return
    except QueryError:
        return
    if named != configured:
        made = "--write" if args.write else "--out" if args.out else "--emit trinity"
        raise QueryError(f"{flag} names {named}, but {args.from_config} trains {configured} (model.model_path): "
                         f"{made} would give it another model's plan; drop {flag}")


def _check_write_keeps_gpus(args: argparse.Namespace, objective: Objective, config: TrinityConfig) -> None:
    """--write changes the plan's keys, not the config's cluster: the plan must use the trainer GPUs the
    config gives it (or, for a config that does not say, that --gpus gives)."""
    if config.trainer_gpus is None:
        if args.gpus is None or objective == "min_gpus":
            raise QueryError(f"--write keeps {args.from_config}'s cluster, which does not say how many GPUs the "
                             "trainer gets (no cluster.gpu_per_node): give them with --gpus N")
        return
    trainer_gpus = config.trainer_gpus
    keeps = (f"--write keeps {args.from_config}'s cluster, which gives the trainer {trainer_gpus} GPUs, "
             "so the plan must use exactly those")
    if objective == "min_gpus":
        raise QueryError(f"{keeps}: drop --minimize gpus (or use --out FILE for a fragment with its own cluster)")
    if args.gpus is not None and args.gpus != trainer_gpus:
        raise QueryError(f"{keeps}: drop --gpus {args.gpus} or change the config's cluster "
                         "(or use --out FILE for a fragment with its own cluster)")


def _write_trinity(args: argparse.Namespace, answers: tuple[Answer, ...], catalog: Catalog, model: Model,
                   config_text: str, node_gpus: int, config: TrinityConfig | None) -> list[str]:
    """The Trinity fragments of the best plans (for --emit), after writing --out and --write if asked.
    A fragment leaves the rollout engines alone when its rollout GPUs are the `config`'s, and otherwise
    keeps its engines' size and auxiliary models (refused when they do not divide);
    without a config, its engines are of the size `rollout_engines` suggests.

    Every fragment is checked against Trinity's own rules (by `trinity_fragment`); a patched user config
    that still breaks them (a hand-set token limit, say) is written with a warning on stderr.
    """
    if not (args.emit or args.out or args.write):
        return []
    from solver.trinity import (
        TRINITY_06_OFFLOAD,
        anchored_keys,
        check_trinity_config,
        load_config_mapping,
        patch_trinity_config,
        trainer_level_offload,
        unused_length,
    )

    unused: str | None = None  # the length written that prompt and response leave unused
    layout = load_config_mapping(config_text, str(args.from_config)) if config is not None else None
    fragments, notes = _fragments(args, answers, catalog, model, node_gpus, config, layout)
    if config is not None and config.trainer_gpus is None and answers[0].plans:
        plan = answers[0].plans[0]
        notes.append(f"solve: note: {args.from_config} gives no cluster (node_num, gpu_per_node): Trinity takes the GPUs "
                     f"Ray finds, and the plan holds where that leaves exactly {counted(plan.gpus, 'trainer GPU')} beside "
                     f"the {counted(config.rollout_gpus, 'rollout GPU')}: set cluster.node_num x cluster.gpu_per_node to "
                     f"{plan.gpus + config.rollout_gpus}")
    best = answers[0].best
    offloaded = any(answer.plans and answer.plans[0].offload for answer in answers)
    if offloaded and layout is not None and not trainer_level_offload(layout) and args.trinity_version is None:
        notes.append(f"solve: note: {args.from_config} has no offload flags under trainer itself (Trinity 0.6's), so "
                     f"what is made from it sets the roles' only: {TRINITY_06_OFFLOAD}")
    # The patched config is made (or refused) before any file is written: a refusal leaves none.
    patched = patch_trinity_config(config_text, best, model, name=str(args.from_config), environ=os.environ,
                                   version=args.trinity_version) if (
        args.write and best is not None) else None
    files = {args.out: fragments[0]} if args.out and best is not None else {}
    if args.write and best is not None and patched is not None:
        # The patched config as ruamel reads it, as the original was (PyYAML refuses some YAML ruamel takes).
        mapping = load_config_mapping(patched, str(args.write))
        problems = check_trinity_config(mapping, model, best.gpus, environ=os.environ, version=args.trinity_version)
        problems += anchored_keys(config_text, best, model, name=str(args.from_config), environ=os.environ,
                                  version=args.trinity_version)
        notes += [f"solve: warning: {args.write}: {problem}" for problem in problems]
        files[args.write] = patched
        unused = unused_length(mapping, str(args.write), os.environ)  # the length the plan pays for, and no sequence uses
    write_all_atomically(files)  # both or neither
    for note in notes:  # only once the files are in place: a refusal, or a failed write, is one line
        print(note, file=sys.stderr)
    for unwritten in (path for path in (args.out, args.write) if path is not None and best is None):
        stale = " (the file there is left as it was)" if unwritten.exists() else ""
        print(f"solve: note: no plan, so {unwritten} is not written{stale}", file=sys.stderr)
    if args.write and best is not None and patched is not None:
        for note in _written_notes(args, config_text, best, model, config, unused):
            print(note, file=sys.stderr)
    return fragments


def _fragments(args: argparse.Namespace, answers: tuple[Answer, ...], catalog: Catalog, model: Model,
               node_gpus: int, config: TrinityConfig | None, layout: Any) -> tuple[list[str], list[str]]:
    """The Trinity fragment of each answer's best plan (`_write_trinity` says of which engines), and the notes on
    them: the cluster's layout, the engines' size, an answer without a plan (for --emit)."""
    from solver.trinity import EngineError, trinity_fragment

    fragments, notes = [], []
    for answer in answers:
        if answer.plans:
            nodes, rollout, note = _cluster_layout(answer.plans[0], answer.rollout_gpus, node_gpus)
            notes += [note] if note else []
            engines: tuple[int, int] | None = (0, 1)  # without rollout GPUs, no engines are written
            if config is not None:  # the config's own engines, or engines of their size for other rollout GPUs
                engines = None if rollout == config.rollout_gpus else (config.auxiliary_gpus, config.rollout_engine_gpus)
            elif rollout:
                suggested = rollout_engines(model, catalog.gpu(answer.gpu).memory_gib, rollout,
                                            answer.plans[0].max_model_len, node_gpus)
                notes += [note] if (note := _engines_note(suggested, model, answer.gpu)) else []
                engines = (0, suggested.size)
            try:
                fragments.append(trinity_fragment(answer.plans[0], model, rollout, gpu=answer.gpu, nodes=nodes,
                                                  engines=engines, layout=layout, version=args.trinity_version,
                                                  rocm=catalog.gpu(answer.gpu).rocm))
            except EngineError as error:  # the config's engines cannot take the rollout GPUs this plan leaves
                raise QueryError(f"{args.from_config}: {error} on nodes of {node_gpus}: choose a trainer size with "
                                 "--gpus that leaves the config's engines exactly their GPUs") from None
        elif args.emit:
            notes.append(f"solve: {answer.gpu}: {answer.no_plan_line}")
    return fragments, notes


def _written_notes(args: argparse.Namespace, config_text: str, best: Plan, model: Model,
                   config: TrinityConfig | None, unused: str | None) -> list[str]:
    """The notes on a config --write patched for `best`: interpolations kept, a length no sequence uses (`unused`),
    role token budgets lowered, and Env, which no config key can carry."""
    from solver.trinity import ROLE_KEYS_IGNORED, kept_interpolations

    notes = [f"solve: note: {args.write}: {kept}" for kept in kept_interpolations(
        config_text, best, model, name=str(args.from_config), environ=os.environ, version=args.trinity_version)]
    notes += [f"solve: note: {args.write}: {unused}"] if unused else []
    notes += [f"solve: note: {args.write}: {key} {budget} lowered to the plan's {best.max_token_len_per_gpu}: set by "
              f"hand, it overrides trainer.max_token_len_per_gpu for its role ({ROLE_KEYS_IGNORED})"
              for key, budget in (config.role_token_budgets if config is not None else ())
              if budget > best.max_token_len_per_gpu]  # the patch lowered it
    if best.env:  # no config key can carry Env
        notes.append(f"solve: note: {args.write} needs Env, which a config cannot set: {ENV_EXPORT} before Ray starts")
    return notes


def _cluster_layout(plan: Plan, rollout_gpus: int | None, node_gpus: int) -> tuple[int, int | None, str | None]:
    """(nodes, rollout GPUs, a note for stderr) of the fragment's ``cluster``: the plan's layout with the
    `rollout_gpus` asked for (`Plan.nodes`), and the note when the rollout gets more GPUs than asked."""
    if rollout_gpus is None or plan.nodes is None or plan.rollout_gpus is None:
        return 1, None, None
    note = None if plan.rollout_gpus == rollout_gpus else (
        f"solve: note: rollout gets {counted(plan.rollout_gpus, 'GPU')}, not {rollout_gpus}: the trainer's {plan.gpus} GPUs take "
        f"whole nodes of {node_gpus}, and rollout the rest of the {plan.nodes} nodes")
    return plan.nodes, plan.rollout_gpus, note


def write_atomically(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file in the same folder and a rename: a reader sees
    the old file or the whole new one, never half of it; on failure nothing is left behind. The file
    keeps the permissions of the one it replaces (and its owner, where the user may give it: root), and a
    file the user may not write is refused; a new file gets the usual ones (0666 less the umask).
    A symbolic link is written through (the file it names is replaced); a target that exists and is not a
    regular file (a device, a FIFO, a folder) is refused."""
    write_all_atomically({path: text})


def write_all_atomically(files: dict[Path, str]) -> None:
    """`write_atomically` for several files at once: every file is written in full to its temporary name
    before the first is renamed into place, so a failure to write (a full disk, a folder without write
    permission) leaves every target as it was. Should a rename itself fail (rare: an immutable file), the
    message names the files already in place."""
    staged: list[tuple[str, Path]] = []
    try:
        for path, text in files.items():
            staged.append(_staged(_resolved(path), text))
        for done, (temporary, target) in enumerate(staged):
            try:
                os.replace(temporary, target)
            except OSError as error:
                written = [str(path) for _, path in staged[:done]]
                also = f" (already written: {', '.join(written)})" if written else ""
                raise QueryError(f"{target}: cannot write: {error.strerror}{also}") from None
    finally:
        for temporary, _ in staged:
            Path(temporary).unlink(missing_ok=True)  # those not renamed into place


def _not_a_regular_file(path: Path) -> bool:
    """Whether something is at `path` that a file written there would not replace: a folder, a device, a
    FIFO, a dangling or looping link."""
    return (path.exists() or path.is_symlink()) and not path.is_file()


def _staged(path: Path, text: str) -> tuple[str, Path]:
    """`text` written in full, synced and given `path`'s permissions, under a temporary name beside
    `path`: (the temporary name, `path`). Nothing is left behind on failure."""
    try:
        if _not_a_regular_file(path):
            raise QueryError(f"{path}: not a regular file; give a file name to write")
        existing = path.stat() if path.exists() else None
        if existing is not None and not os.access(path, os.W_OK):
            raise QueryError(f"{path}: cannot write: Permission denied (the file is not writable)")
        if existing is not None and any(_stream_writes_to(existing, stream) for stream in (1, 2)):
            raise QueryError(f"{path}: the command's own output goes there; name another file, or drop the option to "
                             "print it")
        mode = stat.S_IMODE(existing.st_mode) if existing is not None else 0o666 & ~_umask()
    except OSError as error:
        raise QueryError(f"{path}: cannot write: {error.strerror}") from None
    try:
        handle = tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.",
                                             suffix=".tmp", delete=False)
    except OSError as error:  # the new text goes beside it first, then takes its place
        raise QueryError(f"{path}: cannot write: {error.strerror} (a file is written in {path.parent} first, "
                         "then renamed into place)") from None
    try:
        with handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(handle.name, mode)
        if existing is not None and hasattr(os, "chown") and (existing.st_uid, existing.st_gid) != (
                os.geteuid(), os.getegid()):
            with contextlib.suppress(PermissionError):  # only root may give a file to another user
                os.chown(handle.name, existing.st_uid, existing.st_gid)
    except BaseException as error:
        Path(handle.name).unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise QueryError(f"{path}: cannot write: {error.strerror}") from None
        raise
    return handle.name, path


def _stream_writes_to(status: os.stat_result, descriptor: int) -> bool:
    """Whether the file of `status` is the one `descriptor` (stdout, stderr) writes to: renamed over, what the
    stream had written would be lost (``--out plan.yaml > plan.yaml``, ``--out /dev/stdout``)."""
    try:
        stream = os.fstat(descriptor)
    except OSError:  # closed
        return False
    return stat.S_ISREG(stream.st_mode) and (stream.st_dev, stream.st_ino) == (status.st_dev, status.st_ino)


def _umask() -> int:
    """The process's umask (reading it means setting it, so it is set straight back)."""
    current = os.umask(0o022)
    os.umask(current)
    return current


MIN_TERMINAL_WIDTH = 20
"""A terminal that says it is narrower (``COLUMNS=0``, as some containers set it) is taken as 80 columns."""
PLAIN_TEXT: dict[str, Any] = {"markup": False, "emoji": False}
"""Consoles print strings as they are: a name with brackets or colons (a pool ``p[/]``) is not markup."""


def _print_view(view: RenderableType, prog: str) -> Console:
    """Print `view` on stdout (`_console`); on a terminal too narrow for one of its tables with a header (the
    ranked plans, a placement), a note on stderr first: rich would break their words or cut their cells. The
    console, for more lines."""
    console = _console()
    if console.is_terminal:
        unbounded = Console(width=1 << 16, file=io.StringIO(), **PLAIN_TEXT)
        parts = view.renderables if isinstance(view, Group) else [view]
        needed = max((_needed_width(part, unbounded) for part in parts if isinstance(part, Table) and part.show_header),
                     default=0)
        if needed > console.width:
            print(f"{prog}: note: the table needs {needed} columns and the terminal has {console.width}: widen it, "
                  "pipe the output (| less -S), or use --json", file=sys.stderr)
    console.print(view)
    return console


def _needed_width(table: Table, console: Console) -> int:
    """The columns `table` needs not to break words or cut cells: its minimum width (above it, it wraps at
    spaces), or its whole width where no column wraps (a table of the source's cells)."""
    measured = console.measure(table)
    return measured.maximum if all(column.no_wrap for column in table.columns) else measured.minimum


def _console(width: int = 160) -> Console:
    """A console for stdout; piped output gets room for `width` columns (the widest table) instead of 80,
    and its lines come without the padding to the tables' width."""
    console = Console(**PLAIN_TEXT)
    if console.is_terminal and console.width < MIN_TERMINAL_WIDTH:  # COLUMNS=0, say: nothing would print
        return Console(width=80, **PLAIN_TEXT)
    return console if console.is_terminal else _PipedConsole(width=max(console.width, width), **PLAIN_TEXT)


class _PipedConsole(Console):
    """A console for stdout that is not a terminal: each line as rich lays it out, less trailing spaces."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        """Rich's print, with the trailing spaces of every line removed."""
        with self.capture() as captured:
            super().print(*objects, **kwargs)
        self.file.write("\n".join(line.rstrip() for line in captured.get().split("\n")))

    def on_broken_pipe(self) -> None:
        """A reader that has gone: leave it to `main` (SIGPIPE's status, 141), not rich's exit with 1."""
        raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))


class _OutputError(Exception):
    """Stdout refused a write for another reason than a closed pipe (a full disk, say): the message is
    the reason (``No space left on device``)."""


class _WholeWrites(io.RawIOBase):
    """A file descriptor that takes all it is given, or raises (`BrokenPipeError` once a pipe's reader has
    gone, `_OutputError` on any other failure): CPython's own stdout can drop the rest of a large write
    that a closing pipe cut short, and exit 0 as if the reader had it all."""

    def __init__(self, descriptor: int) -> None:
        super().__init__()
        self.descriptor = descriptor

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.descriptor

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        written = 0
        while written < len(view):
            try:
                written += os.write(self.descriptor, view[written:])
            except BrokenPipeError:
                raise
            except OSError as error:
                raise _OutputError(error.strerror or str(error)) from None
        return written


def _whole_writes_to_piped_stdout() -> None:
    """When the process's own stdout is a pipe or a file, write it through `_WholeWrites`, so that a reader
    that stops early (``| head``) ends the command with SIGPIPE's status, as the docs say."""
    stdout = sys.__stdout__
    if stdout is None or sys.stdout is not stdout:  # captured, or already replaced by an earlier call
        return
    try:
        descriptor = stdout.fileno()
    except (OSError, ValueError, io.UnsupportedOperation):
        return
    if os.isatty(descriptor):
        return
    stdout.flush()
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(_WholeWrites(descriptor)), encoding=stdout.encoding,
                                  errors=stdout.errors, line_buffering=stdout.line_buffering)


def _escaped(line: str) -> str:
    """`line` with its control characters (from a file's name, say) escaped as Python writes them (``\\x1b``),
    so that it stays one line and cannot restyle the terminal."""
    return "".join(character if character.isprintable() else repr(character)[1:-1] for character in line)


def _standard_streams_open() -> bool:
    """Whether stdout is open; prepares both for the command. A closed stdout or stderr (``>&-``: Python's
    `sys.stdout` is None) has its descriptor held on os.devnull, so that no file the command opens takes it
    (and the output with it); a closed stderr takes the notes nowhere. Stdout that cannot encode a character
    (``PYTHONIOENCODING=ascii``) writes it as ``?``."""
    closed = [number for number, stream in ((1, sys.stdout), (2, sys.stderr)) if stream is None]
    for number in closed:
        spare = os.open(os.devnull, os.O_WRONLY)  # the lowest free descriptor: the closed one itself, mostly
        if spare != number:
            os.dup2(spare, number)
            os.close(spare)
    if 2 in closed:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 (for the whole process)
    if 1 in closed:
        return False
    if isinstance(sys.stdout, io.TextIOWrapper) and sys.stdout.errors == "strict":
        sys.stdout.reconfigure(errors="replace")
    _whole_writes_to_piped_stdout()
    return True


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``solve`` with `argv` (default: the process's arguments); returns the exit status."""
    if not _standard_streams_open():
        print("solve: error: cannot write the output: standard output is closed", file=sys.stderr)
        return BAD_INPUT
    argv = list(sys.argv[1:] if argv is None else argv)
    commands = {
        "tables": (build_tables_parser, run_tables),
        "cluster": (build_cluster_parser, run_cluster),
        "calibrate": (build_calibrate_parser, run_calibrate),
        "memory": (build_memory_parser, run_memory),
        "map": (build_map_parser, run_map),
    }
    if argv[:1] and argv[0] in commands:
        build, handler = commands[argv.pop(0)]
        parser = build()
    else:
        parser, handler = build_parser(), run_planner
        if argv[:1] and not argv[0].startswith("-"):  # the planner takes options only: a word names a command
            close = difflib.get_close_matches(argv[0], commands, n=1, cutoff=0.7)
            flag = f"--{argv[0]}"  # solve explain: the planner's --explain (argparse's own option lookup, unexported)
            guess = (f" (did you mean {close[0]}?)" if close else
                     f" (did you mean the option {flag}?)" if flag in parser._option_string_actions else "")
            parser.error(f"unknown command {brief(argv[0])}{guess}; commands: {', '.join(commands)}, or none to plan")
    try:
        try:
            args = parser.parse_args(argv)
        except SystemExit as done:  # --help and --version print, then exit (as a usage error does)
            status = int(done.code or 0)
        else:
            _check_outputs_spare_inputs(args)
            status = handler(args)
            _note_memory_as_sold(args, parser.prog)  # after the answer: bad input has one line on stderr
            _note_cells_elsewhere(args, parser.prog)
            _note_short_length(args, parser.prog)
        sys.stdout.flush()  # a reader that stopped early, or a full disk, shows here, not at exit
        return status
    except OneLineError as error:  # bad input: a query, a table or a Trinity config
        print(f"{parser.prog}: error: {_escaped(str(error))}", file=sys.stderr)
        return BAD_INPUT
    except Undecided as error:  # a question behind the answer (a map's cell, a config's verdict) ran out of time
        print(f"{parser.prog}: undecided: {error}; nothing printed", file=sys.stderr)
        return NO_PLAN
    except KeyboardInterrupt:
        print(f"{parser.prog}: interrupted", file=sys.stderr)
        return INTERRUPTED
    except (BrokenPipeError, _OutputError) as error:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing more to flush at exit
        if isinstance(error, BrokenPipeError):  # the reader stopped early (| head): quietly, as SIGPIPE's victim
            return CLOSED_PIPE
        print(f"{parser.prog}: error: cannot write the output: {error}", file=sys.stderr)
        return BAD_INPUT
