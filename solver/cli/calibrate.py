"""``solve calibrate``: the memory model's coefficients fitted on cells."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from solver.cli.argtypes import output_path, path_argument
from solver.cli.atomic import write_atomically
from solver.cli.catalogs import catalog_with
from solver.cli.parser import Parser
from solver.cli.paths import check_once
from solver.memory import DEFAULT_MARGIN
from solver.render import memory_model_yaml
from solver.tables import MEMORY_MODEL_FILE, Catalog, QueryError, and_more, counted, load_gpu_type, load_model_config

if TYPE_CHECKING:
    from solver.calibrate import Observation
    from solver.tables import Coefficients, FitSummary, GpuType


CALIBRATE_MISSES_SHOWN = 3
"""How many of your cells that the fit predicts the other way `solve calibrate` names."""


def build_calibrate_parser() -> argparse.ArgumentParser:
    """The argument parser for ``solve calibrate``."""
    parser = Parser(
        prog="solve calibrate",
        description="Fit the memory model's coefficients on documented cells (positive and negative evidence) "
        "and print them as a memory-model file.",
        epilog="Exit status: 0 the memory model is printed (or written), 2 bad input (or cells that are all '-').",
    )
    parser.add_argument("--cells", metavar="FILE", type=path_argument, action="append",
                        help="your own measured cells, a GPU table file in the tables' format (repeatable); "
                        "default: the shipped tables")
    parser.add_argument("--with-tables", action="store_true",
                        help="with --cells: fit on your cells and the shipped tables together")
    parser.add_argument("--model-config", metavar="PATH", type=path_argument,
                        help="a local Hugging Face config.json of a model your cells name that the catalogue lacks")
    parser.add_argument("--out", metavar="FILE", type=output_path, help="write the memory-model file to FILE")
    parser.set_defaults(regenerates=MEMORY_MODEL_FILE)  # the one shipped file a command may write
    return parser


def run_calibrate(args: argparse.Namespace) -> int:
    """``solve calibrate``: fit the coefficients and print (or write) a memory-model file."""
    from solver.calibrate import calibrate

    _check_calibrate_args(args)
    catalog, added = catalog_with(load_model_config(args.model_config) if args.model_config else None)
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
    check_once("--cells", args.cells or [])


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


