"""``solve examples``: write the example files the docs' commands read (shipped in the package) into a folder."""

from __future__ import annotations

import argparse
import contextlib
import os
from pathlib import Path

from solver.cli.argtypes import path_argument
from solver.cli.atomic import (
    cannot_write,
    not_a_regular_file,
    not_writable_words,
    writable_status,
    write_all_atomically,
)
from solver.cli.output import print_escaped
from solver.cli.parser import FILE_SUFFIXES, Parser
from solver.cli.paths import EXAMPLES_FOLDER, refuse_tables_folder
from solver.cli.status import STATUSES_AFTER_BAD_INPUT
from solver.tables import QueryError, it_or_them


def build_examples_parser() -> Parser:
    """The argument parser for ``solve examples``."""
    parser = Parser(prog="solve examples",
                    description="Write the example files that the commands of rft-solver's docs read (four cluster "
                    "files, cells of your own and too few of them, a Trinity config, two models' config.json) into "
                    "DIR, each one's name as the docs give it. A file there already is left as it is where it holds "
                    "the example (unchanged), and refused where it differs (--force overwrites it): then nothing is "
                    "written.",
                    epilog="Exit status: 0 the files are written (or unchanged), 2 bad input (a file there that "
                    "differs without --force, a DIR that is not a folder (or, not made yet, is named like a file: "
                    "x.yaml), cannot be written or is the shipped GPU tables' folder, feasibility/), "
                    f"{STATUSES_AFTER_BAD_INPUT}.")
    parser.add_argument("dir", metavar="DIR", nargs="?", type=path_argument("folder to write in"),
                        default=EXAMPLES_FOLDER,
                        help=f"the folder to write them into, made if missing; default: {EXAMPLES_FOLDER.as_posix()} "
                        "under the current directory, where the docs' commands, run from this directory, find them")
    parser.add_argument("--force", action="store_true", help="overwrite the files there that differ from the examples")
    return parser


def run_examples(args: argparse.Namespace) -> int:
    """``solve examples``: every target checked before the first is written, then all written at once; a line for
    each file, written or unchanged."""
    from solver.tables import resolved_path, shipped_examples
    folder: Path = args.dir
    refuse_tables_folder(folder, str(folder), "examples")
    if folder.suffix.lower() in FILE_SUFFIXES and not folder.is_dir():  # solve examples x.yaml: a file's name
        raise QueryError(f"{folder}: named like a file, and DIR is the folder to write all the examples into: name a "
                         f"folder (made if missing; default {EXAMPLES_FOLDER.as_posix()}), or make this one first")
    targets = {folder / name: text for name, text in shipped_examples().items()}
    try:
        unchanged = {target for target, text in targets.items() if _holds_example(target, text)}
        differing = [str(target) for target in targets if target.exists() and target not in unchanged]
        if differing and not args.force:
            raise QueryError(f"{', '.join(differing)}: there already, and not the example; --force overwrites "
                             f"{it_or_them(len(differing))} (nothing written)")
        to_write = {target: text for target, text in targets.items() if target not in unchanged}
        folders = sorted({target.parent for target in to_write}, key=lambda path: (len(path.parts), path))
        for parent in folders:
            _check_folder(parent)
        for target in to_write:
            if target.parent.is_dir():  # a file there now: one that may not be written, or that takes stdout
                writable_status(resolved_path(target))
    except OSError as error:  # a folder on the way without search permission (Path raises before Python 3.14)
        raise QueryError(f"{folder}: cannot write: {error.strerror or error}") from None
    made: list[Path] = []
    try:
        _make_folders(folders, made)
        write_all_atomically(to_write)
    except QueryError:
        for path in reversed(made):  # nothing written (or, rarely, some: then their folders stay)
            with contextlib.suppress(OSError):
                path.rmdir()
        raise
    for target in targets:
        print_escaped(f"{'unchanged' if target in unchanged else 'wrote'} {target}")
    return 0


def _holds_example(target: Path, text: str) -> bool:
    """Whether `target` is a file that holds the example's `text` already; `QueryError` where something there is
    not a file a write would replace (a folder, a dangling link)."""
    from solver.tables import holds_text, resolved_path
    resolved = resolved_path(target)
    if not_a_regular_file(resolved) or (target.is_symlink() and not resolved.parent.is_dir()):
        raise QueryError(f"{target}: not a regular file (or a link to a place one can be written); move it, or "
                         "write the examples to another folder")
    return resolved.is_file() and holds_text(resolved, text)


def _check_folder(parent: Path) -> None:
    """`QueryError` unless `parent` is a folder, or can be made in the nearest folder above it that exists."""
    existing = next((path for path in (parent, *parent.parents) if path.exists() or path.is_symlink()), Path("."))
    if not existing.is_dir():
        raise QueryError(f"{parent}: not a folder; name a folder (made if missing) to write the examples into"
                         if existing == parent else f"{parent}: cannot make the folder: {existing} is not a folder")
    if existing != parent and not os.access(existing, os.W_OK | os.X_OK):
        raise QueryError(f"{parent}: cannot make the folder: {existing} {not_writable_words(existing)}")


def _make_folders(folders: list[Path], made: list[Path]) -> None:
    """Make each of `folders` (and those above it) that is missing, adding each folder made to `made`, outermost
    first (so that a failure can remove them)."""
    for parent in folders:
        for path in reversed([path for path in (parent, *parent.parents) if not path.exists()]):
            try:
                path.mkdir()
            except OSError as error:
                if os.path.isdir(path):  # another run made it meanwhile (two writing one folder at once)
                    continue
                raise cannot_write(error)(f"{path}: cannot make the folder: {error.strerror or error}") from None
            made.append(path)
