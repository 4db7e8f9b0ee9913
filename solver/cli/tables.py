"""``solve tables``: the documented feasibility tables."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections import Counter
from typing import TYPE_CHECKING

from solver.cli.argtypes import gpu_name, model_name, path_argument, whole_number
from solver.cli.catalogs import catalog_with
from solver.cli.notes import note_cells_elsewhere, note_gpu_variant
from solver.cli.options import GPU_NAMES, MODEL_CONFIG_HELP, MODEL_NAMES, add_cells_option, model_config_option
from solver.cli.output import print_escaped, print_view
from solver.cli.parser import Parser
from solver.cli.status import NO_PLAN, STATUSES_AFTER_BAD_INPUT
from solver.tables import MAX_ESTIMATED_GPUS, MAX_GPUS, ListedNamesError, OneLineError, QueryError, counted

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from solver.tables import Catalog, GpuType


def build_tables_parser() -> Parser:
    """The argument parser for ``solve tables``."""
    parser = Parser(
        prog="solve tables",
        description="Show the source's feasibility tables: one per GPU type and trainer GPU count.",
        epilog=f"Exit status: 0 the tables are printed, 1 --check found a contradiction, 2 bad input, "
        f"{STATUSES_AFTER_BAD_INPUT}.",
    )
    parser.add_argument("--gpu", metavar="G", type=gpu_name,
                        help=f"only this GPU type, one ({GPU_NAMES}); without it, each")
    parser.add_argument("--gpus", metavar="N",
                        type=whole_number(1, MAX_GPUS, "one count: without --gpus, the tables for every count"),
                        help="only the table for N trainer GPUs")
    parser.add_argument("--model", metavar="M", type=model_name, help=f"only this model's column ({MODEL_NAMES})")
    parser.add_argument("--json", action="store_true", help="print a JSON array of cells")
    parser.add_argument("--check", action="store_true",
                        help=("report the cells that contradict the others as they are read (a setting is the first "
                              "that trained; memory grows with the length, shrinks on more GPUs; models of one shape "
                              "and GPU types of one memory agree): exit 1 if any"))
    add_cells_option(parser)
    parser.add_argument("--model-config", metavar="PATH", type=path_argument("file or folder to read"),
                        help=f"{MODEL_CONFIG_HELP} of a model your --cells name that the catalogue lacks")
    return parser


def run_tables(args: argparse.Namespace) -> int:
    """``solve tables``: print the documented tables, narrowed by the filters."""
    if args.model_config and not args.cells:
        raise QueryError("--model-config describes a model that the cells of --cells FILE name: give them too (the "
                         "documented tables name no model of yours; solve map --model-config "
                         f"{shlex.quote(str(args.model_config))} maps what the planner answers for it)")
    model = model_config_option(args.model_config)
    full, added, cells = catalog_with(model, cells=args.cells or (), keep_contradictions=args.check)
    status = _print_tables(args, full, cells, added)
    note_cells_elsewhere("solve tables", cells, full, args.gpu)
    note_gpu_variant("solve tables", full, args.gpu, tables=True)  # 40 GB A100s reading the 80 GB ones' as theirs
    return status


def _map_command(args: argparse.Namespace, own_model: bool) -> str:
    """The `solve map` command that covers what the filters of `solve tables` asked for where no table does (its
    budgets up to --gpus, or as far as it maps), with the --cells files that may name the GPU type, and the
    --model-config of a model they may name (in --model's place where it names that model: `own_model`); each value
    quoted as a shell needs it. Where --model names a catalogue model beside --model-config, which map refuses (it
    plans one model), --model alone, and the --cells files that name no model of yours (`_read_alone`), with words
    on those left out."""
    budgets = None if args.gpus is None else min(args.gpus, MAX_ESTIMATED_GPUS)
    catalogue_model = args.model is not None and not own_model and args.model_config is not None
    cells = [path for path in args.cells or () if not catalogue_model or _read_alone(path)]
    filters = [("--gpu", args.gpu), ("--model", None if own_model else args.model),
               ("--model-config", None if catalogue_model else args.model_config), ("--gpus-up-to", budgets),
               *(("--cells", path) for path in cells)]
    left = [shlex.quote(str(path)) for path in args.cells or () if path not in cells]
    without = (f" (without {', '.join(left)}, which {'names' if len(left) == 1 else 'name'} the model of "
               "--model-config: map plans one model)" if left else "")
    return " ".join(["solve map", *(f"{flag} {shlex.quote(str(value))}" for flag, value in filters
                                    if value is not None)]) + without


def _read_alone(cells: Path) -> bool:
    """Whether the --cells file `cells` reads beside the shipped catalogue alone, naming no model of
    --model-config's."""
    try:
        catalog_with(None, cells=[cells])
    except OneLineError:  # a model it names unknown (TableError), or any other refusal: left out
        return False
    return True


def _one_name(flag: str, every: str, find: Callable[[], object]) -> None:
    """`find` the name `flag` gives; a list of names (``h20,a100``) is refused as the catalogue words it, with what
    shows them all, as ``--gpus 4,6`` is told: ``without --gpu, the tables for every GPU type``."""
    try:
        find()
    except ListedNamesError as error:
        raise QueryError(f"{error}; without {flag}, the tables for every {every}") from None


def _cells_by_origin(catalog: Catalog, cells: Sequence[tuple[Path, GpuType]]) -> str:
    """How many cells `catalog` (narrowed as asked; for --check with --gpu, with the GPU types of its memory that it
    was checked against) holds, and with --cells files (`cells`, each with the GPU type it gave), how many of them are
    each file's and how many the shipped tables': ``568 cells: 8 of mine.yaml's, 560 of the shipped tables``,
    ``2 cells, all mine.yaml's``, ``1 cell, mine.yaml's``."""
    tables = {(gpu_type.name, table.gpus): str(path) for path, gpu_type in cells for table in gpu_type.tables}
    counts = Counter(tables.get((cell.gpu, cell.gpus)) for cell in catalog.cells())
    total = counted(counts.total(), "cell")
    if not cells:
        return total
    parts = [(counts[path], f"{path}'s", f"{path}'s") for path in dict.fromkeys(tables.values()) if counts[path]]
    if counts[None]:
        parts.append((counts[None], "the shipped tables", "the shipped tables'"))
    if len(parts) == 1:
        return f"{total}, {'all ' if counts.total() > 1 else ''}{parts[0][2]}"
    return f"{total}: " + ", ".join(f"{count} of {whose}" for count, whose, _ in parts)


def _print_tables(args: argparse.Namespace, full: Catalog, cells: Sequence[tuple[Path, GpuType]], added: str) -> int:
    """Print the tables of `full` (the catalogue with the --cells tables, each file's with the GPU type it gave:
    `cells`, and --model-config's model, `added`: "" without one) the filters keep, or with --check where they
    contradict the semantics; the exit status."""
    from solver.render import cells_json, tables_view
    if args.gpu is not None:  # an unknown name is refused as such, without the map's hint below
        _one_name("--gpu", "GPU type", lambda: full.gpu(
            args.gpu, lambda found: found.refused("--gpu ", f"--gpu {found.name} --gpus {found.gpus}")))
    if args.model is not None:
        _one_name("--model", "model", lambda: full.model(args.model))
    try:
        catalog = full.narrowed(gpu=args.gpu, gpus=args.gpus, model=args.model)
    except QueryError as error:
        beyond = args.gpus is not None and args.gpus > MAX_ESTIMATED_GPUS
        covered = f"up to {MAX_ESTIMATED_GPUS} GPUs, the most it maps" if beyond else "for it"
        own_model = args.model is not None and full.model(args.model).name == added
        raise QueryError(f"{error}; {_map_command(args, own_model)} maps what the planner answers {covered}") from None
    if args.check:  # a GPU type is checked against those with its memory, whose tables it borrows
        checked = (full.with_same_memory(args.gpu).narrowed(gpus=args.gpus, model=args.model) if args.gpu
                   else catalog)
        found = checked.contradictions()
        if args.json:
            sys.stdout.write(json.dumps(found, indent=2) + "\n")
        else:
            for line in found:
                print_escaped(f"solve tables: warning: {line}")
            print_escaped(f"{counted(len(found), 'contradiction')} in {_cells_by_origin(checked, cells)}")
        return NO_PLAN if found else 0
    if args.json:
        sys.stdout.write(cells_json(catalog.cells()) + "\n")
    else:
        print_view(tables_view(catalog), "solve tables")
    model = catalog.model(args.model) if args.model else None
    if model is not None and model.tables_of is not None:  # beside JSON, on stderr: the array stays the cells
        print_escaped(f"{'solve tables: note: ' if args.json else ''}{model.tables_of}'s cells stand for {model.name}, "
                      "of the same shape", file=sys.stderr if args.json else sys.stdout)
    return 0
