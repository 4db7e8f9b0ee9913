"""The ``solve`` command line: parse arguments, call the library, print. The only code that prints.

Exit status: 0 when every answer has a plan, 1 when some answer has none (its reason says why; or none was
found within the time limit), 2 for bad input or output that cannot be written where named (one line on stderr,
after a one-line usage for argument errors; no traceback), 74 for output the file system could not take (a full
disk, an I/O error: `status.WRITE_FAILURES`), 130 for Ctrl-C, 143 for a request to end (SIGTERM), 141 when a
write to stdout fails because its reader has gone; `solver.__main__` gives 70 for an exception no command handles.

The command is a package: `solver.cli.planner` (``solve [options]``) with `solver.cli.trinity_options` (its Trinity
configs), one module per other command (`tables`, `cluster`, `calibrate`, `memory`, `maps`, `examples`), and what
they share: `status` (exit statuses), `parser` and `argtypes` (argparse), `options` (options several commands take),
`catalogs` (the catalogue to plan with), `paths` and `atomic` (files read and written), `notes` (notes after an
answer) and `output` (stdout and stderr). Each uses only those before it in this order: status, output, atomic,
paths, argtypes, parser, options, catalogs, notes, trinity_options, planner, tables, cluster, calibrate, memory,
maps, examples. `main` here picks the command; it is the package's one public name (the rest are imported from their
modules).
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from importlib import import_module
from types import FrameType
from typing import NoReturn

from solver.cli.atomic import WriteFailed
from solver.cli.notes import (
    note_gpu_name_meant,
    note_memory_as_sold,
    note_short_length,
    note_small_host_ram,
    note_thousands_meant,
)
from solver.cli.output import OutputError, print_escaped, standard_streams_open
from solver.cli.parser import Parser, full_width_note
from solver.cli.paths import check_inputs_apart, check_outputs_spare_inputs, refuse_missing_examples
from solver.cli.status import BAD_INPUT, CLOSED_PIPE, INTERRUPTED, NO_PLAN, TERMINATED, WRITE_FAILED, WRITE_FAILURES
from solver.tables import OneLineError, Undecided, brief

__all__ = ["main"]


Command = tuple[Callable[[], Parser], Callable[[argparse.Namespace], int]]
"""A command's parser (what builds it) and what runs it."""

_PLANNER = ("planner", "build_parser", "run_planner")
"""The module of ``solve [options]``, the planner, with the names of what builds its parser and what runs it."""
_COMMANDS = {
    "tables": ("tables", "build_tables_parser", "run_tables"),
    "cluster": ("cluster", "build_cluster_parser", "run_cluster"),
    "calibrate": ("calibrate", "build_calibrate_parser", "run_calibrate"),
    "memory": ("memory", "build_memory_parser", "run_memory"),
    "map": ("maps", "build_map_parser", "run_map"),
    "examples": ("examples", "build_examples_parser", "run_examples"),
}
"""The commands a first word names, by it, as `_PLANNER` names the planner. Only the command asked for is imported
(`_command`), and what its parser needs: what it runs with is imported as it runs, so that ``solve --help``,
``--version`` and a usage error load no models nor OR-Tools."""


def _command(names: tuple[str, str, str]) -> Command:
    """The parser and the runner of the command `names` names (`_COMMANDS`), its module imported."""
    module, build, run = names
    commands = import_module(f"solver.cli.{module}")
    return getattr(commands, build), getattr(commands, run)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``solve`` with `argv` (default: the process's arguments); returns the exit status."""
    if not standard_streams_open():
        print_escaped("solve: error: cannot write the output: standard output is closed", file=sys.stderr)
        return BAD_INPUT
    asked, argv = _command_asked(list(sys.argv[1:] if argv is None else argv))
    parser, handler = _command_parser(asked)
    if asked is None and argv[:1] and not argv[0].startswith("-"):  # the planner takes options: a word names a command
        _refuse_unknown_command(parser, argv[0])
    terminated: list[int] = []
    try:
        with _terminated_as_interrupted(terminated):
            status = _parse_and_run(parser, handler, argv)
            sys.stdout.flush()  # a reader that stopped early, or a full disk, shows here, not at exit
        if terminated:  # solve cluster's search, stopped as by Ctrl-C: its best placement is printed
            print_escaped(f"{parser.prog}: terminated", file=sys.stderr)
            return TERMINATED
        return status
    except OneLineError as error:  # bad input: a query, a file of the user's (a table, a fleet) or a Trinity config
        # a word typed in full-width characters (--model ８Ｂ, a fleet's model: ８Ｂ) named in ASCII, as a usage error's
        print_escaped(f"{parser.prog}: error: {error}{full_width_note(str(error))}", file=sys.stderr)
        return WRITE_FAILED if isinstance(error, WriteFailed) else BAD_INPUT
    except Undecided as error:  # a question behind the answer (a map's cell, a config's verdict) ran out of time
        print_escaped(f"{parser.prog}: undecided: {error}; nothing printed (a longer --time-limit may decide it)",
                      file=sys.stderr)
        return NO_PLAN
    except (KeyboardInterrupt, ImportError) as error:
        if isinstance(error, ImportError) and not isinstance(error.__cause__, KeyboardInterrupt):
            raise
        # Ctrl-C or SIGTERM, also one while a library loads (OR-Tools' extension says so as an ImportError)
        print_escaped(f"{parser.prog}: {'terminated' if terminated else 'interrupted'}", file=sys.stderr)
        return TERMINATED if terminated else INTERRUPTED
    except (BrokenPipeError, OutputError) as error:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing more to flush at exit
        if isinstance(error, BrokenPipeError):  # the reader stopped early (| head): quietly, as SIGPIPE's victim
            return CLOSED_PIPE
        print_escaped(f"{parser.prog}: error: cannot write the output: {error}", file=sys.stderr)
        return WRITE_FAILED if error.errno in WRITE_FAILURES else BAD_INPUT


def _command_asked(argv: list[str]) -> tuple[str | None, list[str]]:
    """The command `argv`'s first word names (None: the planner's), and the arguments for it; ``solve -h map`` asks
    for map's help."""
    if argv[:1] in (["-h"], ["--help"]) and argv[1:2] and argv[1] in _COMMANDS:  # solve -h map: map's help
        argv[:2] = argv[1::-1]
    return (argv[0], argv[1:]) if argv[:1] and argv[0] in _COMMANDS else (None, argv)


def _command_parser(asked: str | None) -> tuple[Parser, Callable[[argparse.Namespace], int]]:
    """The parser of the command `asked` (None: the planner), which knows the other commands' options (to say whose
    an option it lacks is), and what runs the command."""
    names = _COMMANDS[asked] if asked is not None else _PLANNER
    return _built_parser(names), _command(names)[1]


_built = threading.local()
"""This thread's parsers (`_built_parser`), by the names of their commands."""


def _built_parser(names: tuple[str, str, str]) -> Parser:
    """The parser of the command `names` names (`_COMMANDS`), which knows the other commands' options (to say whose
    an option it lacks is): built once in each thread (building one takes about 2 ms, a twentieth of an answer's
    time in-process). A parse leaves a parser as it found it (the values go to a namespace of their own), but turns
    its required options off while it reads (`Parser.parse_args`), which a parse in another thread would see: so no
    thread shares one."""
    parsers: dict[tuple[str, str, str], Parser] = _built.__dict__.setdefault("parsers", {})
    if names not in parsers:
        parser = parsers[names] = _command(names)[0]()
        parser.others = lambda: {other.prog: other._option_string_actions.keys() for other in (  # an option of theirs
            _built_parser(each) for each in (_PLANNER, *_COMMANDS.values()) if each != names)}
    return parsers[names]


def _refuse_unknown_command(parser: Parser, word: str) -> NoReturn:
    """The usage error for a first `word` that names no command (the planner takes options): the command it is
    close to, or the one it starts alone (``solve mem``: memory), or to drop it where it is the program's own name
    (``solve solve``), or the planner's option it names (``solve explain``: --explain), or the option whose value it
    is (``solve 8b 32k``: --model 8b)."""
    started = [command for command in _COMMANDS if len(word) > 1 and command.startswith(word.lower())]
    close = difflib.get_close_matches(word, _COMMANDS, n=1, cutoff=0.7) or (started if len(started) == 1 else [])
    guess = (f" (did you mean {close[0]}?)" if close else parser.program_name_hint(word)
             or parser.option_word_hint(word) or parser.file_hint(word) or parser.value_hint(word))
    parser.error(f"unknown command {brief(word)}{guess}; commands: {', '.join(_COMMANDS)}, or none to plan")


def _parse_and_run(parser: Parser, handler: Callable[[argparse.Namespace], int], argv: list[str]) -> int:
    """The exit status of the command run with `argv` as `parser` reads them, and its notes after the answer; of
    --help and --version, which print, and of a usage error, argparse's."""
    try:
        args = parser.parse_args(argv)
    except SystemExit as done:  # --help and --version print, then exit (as a usage error does)
        return int(done.code or 0)
    try:  # these load the libraries the inputs' checks need, much of a command's first seconds
        refuse_missing_examples(args)
        check_inputs_apart(args)
        check_outputs_spare_inputs(args)
    except KeyboardInterrupt:
        if parser.interrupted_early is None:
            raise
        parser.interrupted_early(args)
        return INTERRUPTED
    status = handler(args)
    note_gpu_name_meant(args, parser.prog)  # after the answer: bad input has one line on stderr
    note_memory_as_sold(args, parser.prog)
    note_short_length(args, parser.prog)
    note_thousands_meant(args, parser.prog, argv)
    note_small_host_ram(args, parser.prog, argv)
    return status


@contextlib.contextmanager
def _terminated_as_interrupted(terminated: list[int]) -> Iterator[None]:
    """While the block runs, a request to end (SIGTERM: ``kill``, ``timeout``, a batch scheduler) does what Ctrl-C
    does at that point (raises KeyboardInterrupt; stops solve cluster's search, which keeps its best placement; waits
    for the files being written), and is noted in `terminated`, so that the command says it was terminated and exits
    with 143, without a traceback. Only in the main thread, and only over SIGTERM's default: a host program's own
    handler, or an ignored SIGTERM, stays."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
        yield
        return

    def end(number: int, frame: FrameType | None) -> None:
        terminated.append(number)
        interrupt = signal.getsignal(signal.SIGINT)
        if not callable(interrupt):  # Ctrl-C ignored (a job a script starts in the background), or C's own handler
            raise KeyboardInterrupt
        interrupt(signal.SIGINT, frame)

    previous = signal.signal(signal.SIGTERM, end)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
