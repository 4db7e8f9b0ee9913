"""``python -m solver`` and the ``solve`` command: the command line of `solver.cli`, loaded here so that Ctrl-C or
a request to end (SIGTERM) while its libraries load ends as quietly as it does while it solves."""

import atexit
import contextlib
import gc
import os
import signal
import sys
import traceback
from types import FrameType
from typing import NoReturn

START_UP_OBJECTS = 250_000
"""The objects the command may make before the garbage collector's first run (`_collect_after_start_up`): more than
a command makes while it loads its modules and tables (about 165,000 for the planner), all of which live on."""

INTERNAL_ERROR = 70
"""The exit status of an exception no command handles (a defect, or a library that fails to load; sysexits'
EX_SOFTWARE): not 1, which says an answer has no plan, so that a script never takes a crash for one;
`solver.cli.status.INTERNAL_ERROR`, which may not have loaded, as each command's help gives it."""


def main() -> NoReturn:
    """The ``solve`` command and ``python -m solver``: `run`, then the process ends with its status at once
    (`_exit_at_once`). Code that runs the command in-process calls `run` (or `solver.cli.main`)."""
    _collect_after_start_up()
    _exit_at_once(run())


def _collect_after_start_up() -> None:
    """Hold the garbage collector's first run until `START_UP_OBJECTS` objects are made, then collect as the
    interpreter's own thresholds say. Loading the modules and the tables makes objects that all live on, which the
    default thresholds (a collection for each 700 made) traversed again and again for nothing: 4.8% of a plain
    ``solve``'s instructions (s93), with 1,000 objects to free. Commands that run on (a cluster's search, maps,
    explanations) collect from then on as before."""
    thresholds = gc.get_threshold()
    if not gc.isenabled() or thresholds[0] == 0:  # a host that runs the collector its own way keeps it
        return

    def as_before(phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and gc.get_threshold()[0] == START_UP_OBJECTS:
            gc.set_threshold(*thresholds)

    gc.callbacks.append(as_before)  # stays, idle (removed, it would hide the stop of a callback added after it)
    gc.set_threshold(START_UP_OBJECTS, *thresholds[1:])


def run() -> int:
    """`_load_and_run`, whose uncaught exception (a defect, not bad input) prints its traceback and a line saying so,
    with exit status `INTERNAL_ERROR`."""
    try:
        return _load_and_run()
    except Exception:  # noqa: BLE001 (any exception left is a defect: its traceback is what a report needs)
        if sys.stderr is not None:  # closed (2>&-) or full, it loses the words, not the status
            with contextlib.suppress(OSError):
                traceback.print_exc()
                print(f"solve: internal error (the traceback above): no answer, and no bad input; exit status "
                      f"{INTERNAL_ERROR}", file=sys.stderr)
        return INTERNAL_ERROR


def _load_and_run() -> int:
    """Load `solver.cli` and run its `main`; exit status 130 for Ctrl-C and 143 for SIGTERM while loading, one line
    each (``solve: interrupted``, ``solve: terminated``), as `solver.cli.main` says them later."""
    terminated: list[int] = []

    def end(number: int, frame: FrameType | None) -> None:
        terminated.append(number)
        raise KeyboardInterrupt  # the same way out as Ctrl-C's, also where Ctrl-C is ignored

    ours = signal.getsignal(signal.SIGTERM) == signal.SIG_DFL  # a parent's ignored SIGTERM stays ignored
    try:
        try:
            if ours:
                signal.signal(signal.SIGTERM, end)
            from solver.cli import main as cli_main
        finally:
            if ours:  # solver.cli.main puts its own in place over the default, for the rest of the command
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
    except (KeyboardInterrupt, ImportError) as error:
        if isinstance(error, ImportError) and not isinstance(error.__cause__, KeyboardInterrupt):
            raise  # a library's extension module that failed to load for a reason of its own
        print("solve: terminated" if terminated else "solve: interrupted", file=sys.stderr)
        return 143 if terminated else 130  # solver.cli.status's TERMINATED and INTERRUPTED, which may not have loaded
    status = cli_main()
    _ignore_signals_while_exiting(ours)
    return status


def _ignore_signals_while_exiting(ours: bool) -> None:
    """Once the command has answered, Ctrl-C and SIGTERM (where it was `ours`, as the command took it over) ignored
    while the process exits (`_exit_at_once`), where either would end it by the signal (130 or 143 to a shell, with no
    word), after an answer whose files are whole and whose own status stands."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    if ours:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)


def _exit_at_once(status: int) -> NoReturn:
    """End the process with `status` as the interpreter would, its exit handlers run (`atexit`: logging's) and stdout
    and stderr flushed, less its teardown of the modules (OR-Tools', NumPy's, pandas'), which took a quarter of a
    second after the answer and a sixth of a plain ``solve``'s CPU time. By then the command's files are written whole
    and renamed into place, and the planner's threads have no work left. A flush that fails (stdout's reader gone with
    output still held) leaves the exit to the interpreter, whose own flush then fails and says so as it always has."""
    atexit._run_exitfuncs()
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None and not stream.closed:
                stream.flush()
    except Exception:  # noqa: BLE001 (the interpreter's exit handles the failure: its own flush meets it again)
        sys.exit(status)
    os._exit(status)


if __name__ == "__main__":
    main()
