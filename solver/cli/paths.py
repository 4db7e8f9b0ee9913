"""The files a ``solve`` command reads and writes: no output overwrites an input (`solver.tables.check_once`: a file
is given once)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path, PurePosixPath

from solver.cli.atomic import errors_named_by, writable_status
from solver.tables import QueryError

INPUT_FLAGS = ("from_config", "weights", "memory_model", "model_config", "cells", "file", "current")
"""The arguments that name files the command reads (cells is a list)."""
OUTPUT_FLAGS = ("out", "write", "svg")
"""The arguments that name files the command writes."""
EXAMPLES_FOLDER = Path("docs", "examples")
"""Where the docs' commands look for the example files, relative to the folder they run in (`solve examples`)."""


def refuse_missing_examples(args: argparse.Namespace) -> None:
    """`QueryError`, before any work, where a file the command reads is one of the docs' examples as the docs name
    it (``docs/examples/my-cells.yaml``) and is not here: it says where they are and that `solve examples` writes
    them."""
    for name in INPUT_FLAGS:
        value = getattr(args, name, None)
        for path in value if isinstance(value, list) else [value]:
            if path is None or path.parts[:2] != EXAMPLES_FOLDER.parts or os.path.exists(path):
                continue
            from solver.tables import shipped_examples
            named = PurePosixPath(*path.parts[2:])
            if named.parts and any(named in (shipped, *shipped.parents) for shipped in shipped_examples()):
                flag = "" if name == "file" else f"--{name.replace('_', '-')} "
                raise QueryError(f"{flag}{path}: no such file here: it is one of the docs' example files, relative "
                                 "to the repository's root; run the command there, or run `solve examples` here "
                                 f"first, which writes them to {EXAMPLES_FOLDER.as_posix()}")


def check_outputs_spare_inputs(args: argparse.Namespace) -> None:
    """`QueryError`, before any work, when a file the command would write is one it reads (nothing given
    is ever lost), is not a regular file, is not writable, is where the command's own output goes, has no
    folder to go in, goes in the shipped GPU tables' folder (`refuse_tables_folder`), or, for --out and --svg, is named
    ``.json`` (`refuse_json_name`), or, for --svg, as another format's file (`refuse_other_image_name`)."""
    from solver.tables import resolved_path, same_file
    inputs = input_paths(args)
    written: list[tuple[str, Path]] = []
    for name in OUTPUT_FLAGS:
        target: Path | None = getattr(args, name, None)
        if target is None:
            continue
        refuse_nameless(f"--{name}", target)
        resolved = resolved_path(target)
        with errors_named_by(f"--{name}"):
            writable_status(resolved)  # one line for a folder on the way without search permission, too
            if not resolved.parent.is_dir():  # which writable_status looked at already: no OSError here
                problem = "is not a folder" if resolved.parent.exists() else "does not exist"
                raise QueryError(f"{target}: cannot write: {resolved.parent} {problem}")
        for other, path in written:
            if same_file(target, path):
                raise QueryError(f"--{other} and --{name} both write {target}: give each its own file")
        written.append((name, target))
        refuse_overwriting(name, target, inputs)
        if name in WRITTEN_AS:
            refuse_json_name(name, target)
        if name == "svg":
            refuse_other_image_name(target)
        refuse_tables_folder(resolved.parent, f"--{name} {target}", "file")  # a new file there loads as a table


def refuse_nameless(flag: str, path: Path) -> None:
    """`QueryError` naming `flag` where `path` names no file: a relative one, where the working directory has been
    removed under the command (`file_identity`)."""
    from solver.tables import file_identity
    with errors_named_by(flag):
        file_identity(path)


WRITTEN_AS = {"out": ("YAML", ".yaml"), "svg": ("an SVG image", ".svg")}
"""What the options that write a file of one kind write, and the suffix to name it with: never JSON."""


def refuse_json_name(name: str, target: Path) -> None:
    """`QueryError` where the `target` of option `name` (`WRITTEN_AS`) is named ``.json``: every --out writes YAML (a
    Trinity fragment, a memory model), --svg an image, and --json prints its JSON on standard output, never to
    their file."""
    kind, suffix = WRITTEN_AS[name]
    if target.suffix.lower() == ".json":
        raise QueryError(f"--{name} {target}: --{name} writes {kind}, not JSON: name the file {suffix} (--json prints "
                         f"the JSON on standard output: redirect that, > {target})")


NOT_SVG_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tif", ".tiff", ".pdf", ".eps", ".ps",
                    ".html", ".htm", ".yaml", ".yml")
"""The file names --svg refuses beside ``.json`` (`refuse_json_name`): another format's, which a viewer of that
format would not open SVG text as."""


def refuse_other_image_name(target: Path) -> None:
    """`QueryError` where --svg's `target` is named as a file of another format (`NOT_SVG_SUFFIXES`: ``map.png``):
    --svg writes SVG text alone, whatever the name."""
    if target.suffix.lower() in NOT_SVG_SUFFIXES:
        raise QueryError(f"--svg {target}: --svg writes SVG, not {target.suffix[1:].upper()}: name the file .svg")


def refuse_overwriting(name: str, target: Path, inputs: list[tuple[str, Path]]) -> None:
    """`QueryError` when the output of argument `name`, `target`, would overwrite one of the `inputs`."""
    overwritten = input_at(inputs, target)
    if overwritten:
        raise QueryError(f"--{name} {target} would overwrite {overwritten}: write to another file")


def input_paths(args: argparse.Namespace) -> list[tuple[str, Path]]:
    """(what it is, in words; path) of every file the command reads (`INPUT_FLAGS`; for --model-config of a
    folder, the folder's config.json), and the shipped tables every command reads (but the memory model that
    `solve calibrate --out` regenerates from the shipped tables alone)."""
    from solver.tables import shipped_table_files
    regenerates = getattr(args, "regenerates", None)
    yours = regenerates is not None and getattr(args, "cells", None)  # a fit on your cells is not the shipped one
    inputs = [("the shipped memory model (a fit on your cells goes to a file of its own, for --memory-model FILE)"
               if yours and path.name == regenerates else "the shipped tables' file", path)
              for path in shipped_table_files()
              if yours or path.name != regenerates]
    return inputs + [(option if option == CLUSTER_FILE else f"the file of {option}", path)
                     for option, path in given_inputs(args)]


CLUSTER_FILE = "the cluster file"
"""How an error names ``solve cluster``'s FILE beside the options that name files."""


def given_inputs(args: argparse.Namespace) -> list[tuple[str, Path]]:
    """(the option, or `CLUSTER_FILE`; path) of every file the command line names to read (`INPUT_FLAGS`; for
    --model-config of a folder, the folder's config.json), in `INPUT_FLAGS`' order."""
    from solver.tables import model_config_file
    given: list[tuple[str, Path]] = []
    for name in INPUT_FLAGS:
        value = getattr(args, name, None)
        option = CLUSTER_FILE if name == "file" else f"--{name.replace('_', '-')}"
        with errors_named_by("--model-config"):  # only its folder is looked into, which may refuse it
            given += [(option, model_config_file(path) if name == "model_config" else path)
                      for path in (value if isinstance(value, list) else [value]) if path is not None]
    return given


def file_name_shown(path: Path) -> str:
    """How the lines name a file read (a config's verdict, its notes): by its name, or, where it is one of the
    process's streams (`names_a_stream`: ``/dev/stdin``, a shell's ``/dev/fd/63``), by the path given, as the docs name
    standard input (``stdin`` alone would name a file in the working directory)."""
    from solver.tables import names_a_stream
    return str(path) if names_a_stream(path) else path.name


def check_inputs_apart(args: argparse.Namespace) -> None:
    """`QueryError`, before any file is read, where two options (or the cluster file and an option) name one file:
    each reads a file of its own kind, and standard input (``/dev/stdin`` twice) is read once, leaving the second
    option an empty file. A file named twice by one option is `check_once`'s, and a missing one its reader's."""
    from solver.tables import file_identity, names_a_stream
    seen: dict[tuple[int, int] | str, tuple[str, Path]] = {}
    for option, path in given_inputs(args):
        if not os.path.exists(path):
            continue
        first, first_path = seen.setdefault(file_identity(path), (option, path))
        if first != option:
            stream = ", and standard input is read once" if names_a_stream(path) or names_a_stream(first_path) else ""
            raise QueryError(f"{first} {first_path} and {option} {path} name one file: each reads a file of its own "
                             f"kind{stream}: give each its own file")


def input_at(inputs: list[tuple[str, Path]], target: Path) -> str | None:
    """Which of the `inputs` writing `target` would overwrite, in words (None when none)."""
    from solver.tables import same_file
    return next((words for words, path in inputs if same_file(target, path)), None)


def refuse_tables_folder(folder: Path, named: str, written: str) -> None:
    """`QueryError` where `folder` is the shipped tables' folder of GPU tables, which every command reads whole:
    a YAML file written there (`written`, in words; the folder as the error names it: `named`) would load as one."""
    from solver.tables import same_file, shipped_tables_directory
    if same_file(folder, shipped_tables_directory() / "feasibility"):
        raise QueryError(f"{named}: the shipped tables are read from there (every YAML file in it): write the "
                         f"{written} to another folder")
