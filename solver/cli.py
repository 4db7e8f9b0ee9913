"""The ``solve`` command line: parse arguments, call the library, print. The only code that prints.

Exit status: 0 success, 2 bad input (one line on stderr, no traceback).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Optional

from rich.console import Console

from solver import __version__
from solver.render import cells_json, tables_view
from solver.tables import QueryError, TableError, load_catalog

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


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for ``solve`` and its subcommands."""
    parser = argparse.ArgumentParser(
        prog="solve",
        description="Plan trainer GPU layouts for Trinity-RFT from its documented feasibility tables.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    tables = commands.add_parser(
        "tables",
        help="show the documented feasibility tables",
        description="Show the source's feasibility tables: one per GPU type and trainer GPU count.",
    )
    tables.add_argument("--gpu", metavar="G", help="only this GPU type (A100-80GB, H20-96GB; a100, h20)")
    tables.add_argument("--gpus", metavar="N", type=positive_int, help="only the table for N trainer GPUs")
    tables.add_argument("--model", metavar="M", help="only this model's column (Qwen3-4B, 4B, qwen3-4b)")
    tables.add_argument("--json", action="store_true", help="print a JSON array of cells")
    tables.set_defaults(handler=run_tables)
    return parser


def run_tables(args: argparse.Namespace) -> int:
    """``solve tables``: print the documented tables, narrowed by the filters."""
    catalog = load_catalog().narrowed(gpu=args.gpu, gpus=args.gpus, model=args.model)
    if args.json:
        sys.stdout.write(cells_json(catalog.cells()) + "\n")
    else:
        _console().print(tables_view(catalog))
    return 0


def _console() -> Console:
    """A console for stdout; piped output gets room for the widest table instead of 80 columns."""
    console = Console()
    if not console.is_terminal:
        console = Console(width=max(console.width, 160))
    return console


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run ``solve`` with `argv` (default: the process's arguments); returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_usage(sys.stderr)
        print("solve: error: choose a command: tables", file=sys.stderr)
        return BAD_INPUT
    try:
        return args.handler(args)
    except (QueryError, TableError) as error:
        print(f"solve: error: {error}", file=sys.stderr)
        return BAD_INPUT
