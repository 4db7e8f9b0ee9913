"""``solve calibrate``: the memory model's coefficients fitted on cells."""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import TYPE_CHECKING

from solver.cli.argtypes import output_path, path_argument
from solver.cli.atomic import write_atomically
from solver.cli.catalogs import catalog_with
from solver.cli.notes import note_cells_elsewhere
from solver.cli.options import MODEL_CONFIG_HELP, model_config_option
from solver.cli.output import print_escaped, print_note
from solver.cli.parser import Parser
from solver.cli.status import STATUSES_AFTER_BAD_INPUT
from solver.tables import (
    DEFAULT_MARGIN,
    MEMORY_MODEL_FILE,
    QueryError,
    and_joined,
    and_more,
    counted,
    it_or_them,
)

if TYPE_CHECKING:
    from solver.results import Calibration


CALIBRATE_MISSES_SHOWN = 3
"""How many of your cells that the fit predicts the other way `solve calibrate` names."""


def build_calibrate_parser() -> Parser:
    """The argument parser for ``solve calibrate``."""
    parser = Parser(
        prog="solve calibrate",
        description="Fit the memory model's coefficients on documented cells (positive and negative evidence) "
        "and print them as a memory-model file.",
        epilog=("Exit status: 0 the memory model is printed (or written), 2 bad input (or cells that contradict "
                f"themselves or one another, or that are all '-'), {STATUSES_AFTER_BAD_INPUT}."),
    )
    parser.add_argument("--cells", metavar="FILE", type=path_argument("file to read"), action="append",
                        help="your own measured cells, a GPU table file in the tables' format (repeatable); "
                        "default: the shipped tables")
    parser.add_argument("--with-tables", action="store_true",
                        help="with --cells: fit on your cells and the shipped tables together")
    parser.add_argument("--model-config", metavar="PATH", type=path_argument("file or folder to read"),
                        help=f"{MODEL_CONFIG_HELP} of a model your cells name that the catalogue lacks")
    parser.add_argument("--out", metavar="FILE", type=output_path, help="write the memory-model file to FILE")
    parser.add_argument("--json", action="store_true",
                        help="print the fit as JSON: the memory model's coefficients and fit, and what the fit found "
                        "in your cells (with --out, the file is written as well)")
    parser.set_defaults(regenerates=MEMORY_MODEL_FILE)  # the one shipped file a command may write
    return parser


def run_calibrate(args: argparse.Namespace) -> int:
    """``solve calibrate``: fit the coefficients and print (or write) a memory-model file."""
    from solver.calibrate import calibration  # imports OR-Tools: only calibrating pays for it

    _check_calibrate_args(args)
    catalog, added, cells = catalog_with(model_config_option(args.model_config),
                                         cells=args.cells or (), join=False)  # read once, as planning reads them
    if added and not any(added in table.models for _, gpu_type in cells for table in gpu_type.tables):
        print_note(
            f"solve calibrate: warning: no cell of yours names {added}, the model of --model-config (the cells name "
            "their models as the catalogue or the config does)")
    fitted = calibration(catalog, cells, with_tables=args.with_tables, flag="--cells ")
    _note_fits_alone(args, fitted)
    _warn_of_table_contradictions(fitted, with_tables=args.with_tables)
    _report_fit(args, fitted)
    if args.out and not args.json:  # the JSON says it all: first_principles, the coefficients, the file's own name
        _say_what_moved(fitted, with_tables=args.with_tables)
        if args.cells:
            _say_how_to_plan(args, sorted({gpu_type.name for _, gpu_type in cells}),
                             as_tables=not fitted.table_contradictions)
    note_cells_elsewhere("solve calibrate", cells, catalog)
    return 0


def _check_calibrate_args(args: argparse.Namespace) -> None:
    """`QueryError` for ``solve calibrate`` options that need --cells without it."""
    if args.with_tables and not args.cells:
        raise QueryError("--with-tables adds the shipped tables to the cells of --cells FILE")
    if args.model_config and not args.cells:
        raise QueryError("--model-config describes a model that the cells of --cells FILE name: give them too, the "
                         "measurements to fit on")


def _note_fits_alone(args: argparse.Namespace, fitted: Calibration) -> None:
    """Note on stderr where none of your cells says a setting ran out of memory (the fit's mirror of cells that are
    all '-', which are refused): they bound a run's memory from above alone, so nothing raises an estimate."""
    if args.cells and not args.with_tables and not fitted.memory_model.fit.negatives:
        print_note(
            "solve calibrate: note: none of your cells says a setting ran out of memory (each is vanilla, the first "
            "setting tried, or one outside the order cells are read in): they bound the memory a run takes from above "
            "alone, so nothing in them raises an estimate; add a length where a setting ran out (the cell of the one "
            "that trained next, or '-'), or fit with the documented ones too (--with-tables)")


def _warn_of_table_contradictions(fitted: Calibration, *, with_tables: bool) -> None:
    """Warn on stderr of cells that contradict the documented tables (those that contradict themselves or one another
    are refused), which planning with them refuses: `with_tables`, the fit takes both sides."""
    if clashes := fitted.table_contradictions:
        what = "the fit takes both sides" if with_tables else "planning with them as tables (--cells) refuses them"
        print_note(f"solve calibrate: warning: your cells contradict the documented tables "
                   f"({counted(len(clashes), 'contradiction')}), and {what}: {clashes[0]}{and_more(clashes)}")


def _say_what_moved(fitted: Calibration, *, with_tables: bool) -> None:
    """Say which multipliers the fit moved from first principles, which ended at an edge of their range (`BOUNDS`,
    0 too), which the physical floor per token holds off 1 (`Calibration.at_token_floor`: the floor sets them, not
    the cells, or their sum), and which it left there: estimates rest on the cells' fit for the first, on the
    derivation for the last (one cell moves one or two); then, where they differ, each coefficient's shipped value and
    the fitted one (`Calibration.from_shipped`). `with_tables`: the fit was on your cells and the documented tables,
    so it is the observations, not your cells, that leave them."""
    from solver.calibrate import at_edge
    from solver.memory import TERMS
    coefficients = fitted.memory_model.coefficients

    def shown(terms: list[str]) -> str:
        return and_joined([f"{term} ({coefficients.multiplier(term):.2f})" for term in terms])

    def sits(terms: list[str]) -> str:
        return "sits" if len(terms) == 1 else "sit"

    held = list(fitted.at_token_floor)
    edged = [term for term in TERMS if at_edge(coefficients, term, dropped=True) and term not in held]
    moved = [term for term in TERMS if term not in (*fitted.first_principles, *held, *edged)]
    stayed = fitted.first_principles
    evidence = "your cells and the documented tables do" if with_tables else "the cells do"
    edges = (f"; {shown(edged)} {sits(edged)} at an edge of {'its' if len(edged) == 1 else 'their'} plausible "
             "range") if edged else ""
    sets = "it, not the cells" if len(held) == 1 else "their sum (the cells only how it is shared)"
    floor = (f"; {shown(held)} {sits(held)} at the physical floor per token that checkpoints, logits and recompute "
             f"take together, which sets {sets}") if held else ""
    left = (f"; {and_joined(stayed)} {'stays' if len(stayed) == 1 else 'stay'} at 1, as derived ({evidence} not move "
            f"{it_or_them(len(stayed))})") if stayed and len(stayed) < len(TERMS) else ""
    print_escaped(f"the fit moved {shown(moved) or 'no multiplier'} from first principles{edges}{floor}{left}")
    if fitted.from_shipped:
        print_escaped(f"against the shipped fit (tables/{MEMORY_MODEL_FILE}): {', '.join(fitted.from_shipped)}")


def _say_how_to_plan(args: argparse.Namespace, gpu_names: list[str], *, as_tables: bool) -> None:
    """Print the command that plans with the written model and the cells it was fitted on, and what each answers
    (for the model of --model-config, which names the model in place of --model); without the cells where they
    cannot vouch `as_tables` (they contradict the documented tables, and planning refuses them)."""
    gpu = gpu_names[0] if len(gpu_names) == 1 else "G"
    model = ("--model-config", str(args.model_config)) if args.model_config else ("--model", "M")
    cells = [word for path in args.cells for word in ("--cells", str(path))] if as_tables else []
    words = ["solve", *model, "--gpu", gpu, "--len", "L", "--memory-model", str(args.out), *cells]
    print_escaped(f"plan with it: {shlex.join(words)} ("
                  + ("your cells vouch for the settings they measured, as tables do; the fit estimates the rest)"
                     if as_tables else "the fit estimates; your cells vouch as tables, with --cells, once they no "
                     "longer contradict the documented tables)"))


def _warn_of_unphysical(args: argparse.Namespace, fitted: Calibration) -> None:
    """Warn on stderr of fitted multipliers outside their physical range (`Calibration.unphysical`), with what it
    likely means: cells too few to pin the model down (with --with-tables: yours pulling it there against the
    documented ones), or measured with another framework or precision than the derivation's."""
    if not fitted.unphysical:
        return
    fit = fitted.memory_model.fit
    few = (f"too few cells to pin the model down ({counted(fit.observations, 'observation')}; add cells"
           f"{'' if args.with_tables or not args.cells else ', or fit with the documented ones too: --with-tables'})")
    likely = ("your cells pulling it there against the documented tables (check them for typos)"
              if args.with_tables and args.cells else few)
    print_note(
        f"solve calibrate: warning: {'; '.join(fitted.unphysical)}; likely {likely}, or cells measured with another "
        "framework or precision than verl's FSDP with bf16 and Adam: estimates from this fit may not hold")


def _caution_of_far_moves(args: argparse.Namespace, fitted: Calibration) -> None:
    """Caution on stderr of fitted multipliers far beyond both the shipped fit's value and first principles'
    (`Calibration.far_from_shipped`, inside their plausible and physical ranges, so unwarned otherwise): which, by
    how much, and that few cells decide them (with --with-tables, that your cells pull them there)."""
    if not (far := fitted.far_from_shipped):
        return
    them = it_or_them(len(far))
    cells = (("your only cell" if fitted.your_cells == 1 else f"your {fitted.your_cells} cells") if args.cells
             else "the cells")
    why = (f"{cells} pull {them} there against the documented tables; check them for typos" if args.with_tables
           else f"few cells decide {them}, {cells} ({counted(fitted.memory_model.fit.observations, 'observation')}); "
           "add cells" + ("" if not args.cells else ", or fit with the documented ones too (--with-tables)"))
    print_note(f"solve calibrate: caution: {'; '.join(far)}: {why}; estimates from this fit may not hold")


def _report_fit(args: argparse.Namespace, fitted: Calibration) -> None:
    """Print (or write to --out) the memory-model file, or with --json print the fit as JSON, with warnings and notes
    on stderr: coefficients at an edge of their range, and which of your cells the fit predicts the other way."""
    from solver.render import calibration_json, memory_model_yaml
    fit = fitted.memory_model.fit
    text = memory_model_yaml(fitted.memory_model)
    if fitted.at_bounds:
        more = "" if args.with_tables or not args.cells else ", or --with-tables to fit with the documented ones too"
        mend = "mend the contradictions above, or " if fitted.table_contradictions else ""  # (only --with-tables')
        # The documented tables alone pin every coefficient inside its range: beside them, your cells pull it out.
        why = (f"your cells pull it there against the documented tables; {mend}check them for typos, or fit on them "
               "alone (without --with-tables) where your hardware differs") if args.with_tables and args.cells else (
            f"{counted(fit.observations, 'observation')} {'does' if fit.observations == 1 else 'do'} not pin the "
            f"model down; add cells{more}")
        print_note(
            f"solve calibrate: warning: {', '.join(fitted.at_bounds)} ended at the edge of the plausible range: "
            f"{why}")
    _warn_of_unphysical(args, fitted)
    _caution_of_far_moves(args, fitted)
    if args.out:
        write_atomically(args.out, text, "--out")
    if args.json:
        sys.stdout.write(calibration_json(fitted) + "\n")
    elif args.out:
        within = fit.failures_within_margin or 0
        as_tables = args.cells and not fitted.table_contradictions  # planning refuses cells that contradict them
        print_escaped(
            f"wrote {args.out}: {counted(fit.observations, 'observation')}, "
            f"{fit.wrong_fits} predicted to fit that did not, "
            f"{fit.wrong_failures} predicted not to fit that did"
            + (f", and {within} that fit but not within the default safety margin of {DEFAULT_MARGIN} (plans "
               f"take them with --margin 0{', or as tables with --cells' if as_tables else ''})" if within else ""))
    else:
        sys.stdout.write(text)
    if missed := fitted.mispredicted:  # a mistyped cell shows here first
        more = and_more(missed, CALIBRATE_MISSES_SHOWN)
        breaks = f"solve memory --memory-model {args.out}" if args.out else "solve memory, with the model written out,"
        mine = ("your only cell" if fitted.your_cells == 1 else f"all {fitted.your_cells} of your cells"
                if len(missed) == fitted.your_cells else f"{len(missed)} of your {fitted.your_cells} cells")
        said = (f"warning: the fit predicts {mine} the other way" if fitted.poor_fit
                else "note: of your cells, the fit predicts the other way")
        more_cells = "" if fitted.at_bounds else (  # the warning on the edges said so
            f", add cells{'' if args.with_tables else ', or fit with the documented ones too (--with-tables)'}")
        them = it_or_them(len(missed))
        advice = f"; check {them} for typos{more_cells}" if fitted.poor_fit else ""
        print_note(
            f"solve calibrate: {said}: "
            f"{'; '.join(missed[:CALIBRATE_MISSES_SHOWN])}{more} (usable: before any safety margin; {breaks} breaks "
            f"each down){advice}")
