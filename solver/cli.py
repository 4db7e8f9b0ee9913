"""The ``solve`` command line: parse arguments, call the library, print. The only code that prints.

Exit status: 0 when every answer has a plan, 1 when some answer has none (its reason says why),
2 for bad input (one line on stderr, after a usage line; no traceback).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Optional

from rich.console import Console

from solver import __version__
from solver.query import MAX_TOP, Objective, make_query
from solver.render import answers_json, answers_view, cells_json, tables_view
from solver.tables import QueryError, TableError, load_catalog, load_weights

NO_PLAN = 1
BAD_INPUT = 2


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def token_count(text: str) -> int:
    """An argparse type: a length in tokens, a whole number or thousands of 1024 (``32k`` = 32768)."""
    if text[-1:] in ("k", "K"):
        return positive_int(text[:-1]) * 1024
    return positive_int(text)


def positive_seconds(text: str) -> float:
    """An argparse type: a number of seconds above zero."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be above 0, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The planner's argument parser: ``solve [options]``."""
    parser = argparse.ArgumentParser(
        prog="solve",
        description="Plan trainer GPUs for Trinity-RFT: Env, FSDP2 Offload and Ulysses SP, from the "
        "documented feasibility tables, solved with OR-Tools CP-SAT.",
        epilog="Other command: solve tables --help (the documented tables). "
        "Exit status: 0 every answer has a plan, 1 some answer has none, 2 bad input.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("--model", metavar="M", required=True, help="model: Qwen3-4B, 4B, qwen3-4b, ...")
    parser.add_argument("--gpu", metavar="G", help="GPU type (A100-80GB, H20-96GB; a100, h20); default: each")
    parser.add_argument("--gpus", metavar="N", type=positive_int, help="trainer GPU budget: use at most N")
    parser.add_argument("--len", metavar="L", type=token_count, dest="max_model_len",
                        help="max_model_len in tokens (32768 or 32k)")
    goal = parser.add_mutually_exclusive_group()
    goal.add_argument("--maximize", choices=["len"], help="the longest context within --gpus")
    goal.add_argument("--minimize", choices=["gpus"], help="the fewest trainer GPUs for --len")
    parser.add_argument("--exact", action="store_true", help="the trainer uses exactly --gpus GPUs")
    parser.add_argument("--sp", metavar="N", type=positive_int, help="pin the Ulysses SP degree")
    parser.add_argument("--env", action=argparse.BooleanOptionalAction, help="pin Env (expandable_segments) on/off")
    parser.add_argument("--offload", action=argparse.BooleanOptionalAction, help="pin FSDP2 CPU Offload on/off")
    parser.add_argument("--top", metavar="K", type=positive_int, default=1,
                        help=f"the K best distinct plans, best first (at most {MAX_TOP})")
    parser.add_argument("--weights", metavar="FILE", type=Path, help="cost weights YAML (offload, sp, env)")
    parser.add_argument("--time-limit", metavar="S", type=positive_seconds, default=10.0,
                        help="seconds the solver may take per answer (default 10)")
    parser.add_argument("--workers", metavar="W", type=positive_int, default=1,
                        help="CP-SAT search workers (default 1; answers do not depend on it)")
    parser.add_argument("--explain", action="store_true",
                        help="say why: the rule that rules out each cheaper plan, or what stops any plan")
    parser.add_argument("--json", action="store_true", help="print a JSON array, one answer per GPU type")
    return parser


def build_tables_parser() -> argparse.ArgumentParser:
    """The argument parser for ``solve tables``."""
    parser = argparse.ArgumentParser(
        prog="solve tables",
        description="Show the source's feasibility tables: one per GPU type and trainer GPU count.",
    )
    parser.add_argument("--gpu", metavar="G", help="only this GPU type (A100-80GB, H20-96GB; a100, h20)")
    parser.add_argument("--gpus", metavar="N", type=positive_int, help="only the table for N trainer GPUs")
    parser.add_argument("--model", metavar="M", help="only this model's column (Qwen3-4B, 4B, qwen3-4b)")
    parser.add_argument("--json", action="store_true", help="print a JSON array of cells")
    return parser


def run_tables(args: argparse.Namespace) -> int:
    """``solve tables``: print the documented tables, narrowed by the filters."""
    catalog = load_catalog().narrowed(gpu=args.gpu, gpus=args.gpus, model=args.model)
    if args.json:
        sys.stdout.write(cells_json(catalog.cells()) + "\n")
    else:
        _console().print(tables_view(catalog))
    return 0


def run_planner(args: argparse.Namespace) -> int:
    """``solve``: answer the planning question for each GPU type asked about."""
    catalog = load_catalog()
    objective: Objective = "max_len" if args.maximize else "min_gpus" if args.minimize else "cheapest"
    query = make_query(
        catalog,
        model=args.model,
        gpu=args.gpu,
        objective=objective,
        budget_gpus=args.gpus,
        exact=args.exact,
        max_model_len=args.max_model_len,
        sp=args.sp,
        env=args.env,
        offload=args.offload,
        top=args.top,
        weights=load_weights(args.weights) if args.weights else None,
        time_limit_s=args.time_limit,
        workers=args.workers,
    )
    from solver.solve import (
        plan,  # imports OR-Tools: only commands that solve pay for it
    )

    answers = plan(query, catalog)
    if args.explain:
        from solver.explain import explain

        answers = tuple(answer.model_copy(update={"explanation": explain(catalog, query, answer)}) for answer in answers)
    if args.json:
        sys.stdout.write(answers_json(answers) + "\n")
    else:
        _console().print(answers_view(answers, query, catalog))
    return 0 if all(answer.plans for answer in answers) else NO_PLAN


def _console() -> Console:
    """A console for stdout; piped output gets room for the widest table instead of 80 columns."""
    console = Console()
    if not console.is_terminal:
        console = Console(width=max(console.width, 160))
    return console


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run ``solve`` with `argv` (default: the process's arguments); returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["tables"]:
        parser, handler, argv = build_tables_parser(), run_tables, argv[1:]
    else:
        parser, handler = build_parser(), run_planner
    args = parser.parse_args(argv)
    try:
        return handler(args)
    except (QueryError, TableError) as error:
        parser.print_usage(sys.stderr)
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return BAD_INPUT
