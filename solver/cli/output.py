"""Stdout and stderr of the ``solve`` commands: consoles, tables on narrow terminals, a progress line, whole
writes to a pipe, closed streams."""

from __future__ import annotations

import codecs
import errno
import functools
import io
import os
import sys
import textwrap
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any, TextIO

from rich.console import Console

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.text import Text


class ProgressLine:
    """A live line on a terminal's stderr while a solve runs longer than a second: best and bound so far."""

    def __init__(self) -> None:
        self.shown = False

    def __call__(self, stage: str, best: float, bound: float, seconds: float) -> None:
        if seconds >= 1 and sys.stderr.isatty():
            sys.stderr.write(f"\r{stage}: best {best:g}, bound {bound:g} ({seconds:.1f} s)   ")
            sys.stderr.flush()
            self.shown = True

    def close(self) -> None:
        """End the line, where one was shown, so that what follows starts on a line of its own."""
        if self.shown:
            sys.stderr.write("\n")


def print_view(view: RenderableType, prog: str) -> Console:
    """Print `view` on stdout (`new_console`), a line past the terminal's width uncut; on a terminal too narrow for
    one of its tables with a header (the source's cells), a note on stderr first: rich would break their words or cut
    their cells (the ranked plans and the placements print as blocks there instead: `TableOrBlocks`). The console,
    for more lines."""
    from rich.console import Group
    from rich.table import Table

    from solver.render import needed_width
    console = new_console()
    if on_terminal(console):
        parts = view.renderables if isinstance(view, Group) else [view]
        tables = [part for part in parts if isinstance(part, Table) and part.show_header]
        needed = max((needed_width(table, console, console.options) for table in tables), default=0)
        if needed > console.width:
            print_note(f"{prog}: note: the table needs {needed} columns and the terminal has {console.width}: widen "
                       "it, pipe the output (| less -S), or use --json")
    console.print(view, crop=False)  # a line rich was told not to wrap (a plan's apply line) stays whole
    return console


def new_console(width: int | None = None) -> Console:
    """A console for stdout; piped output gets room for `width` columns (the widest table; None: `PIPED_WIDTH`)
    instead of 80, and its lines come without the padding to the tables' width. A pipe is laid out as one also where the
    environment has rich take it for a terminal (``FORCE_COLOR``, ``TTY_COMPATIBLE``: colour in a CI's log), which
    would lay it out for 80 columns and cut the tables' cells: those variables give colour, not a terminal's width."""
    from solver.render import MIN_TERMINAL_WIDTH, PIPED_WIDTH, PLAIN_TEXT
    console = _SpelledConsole(**PLAIN_TEXT)
    if not _isatty(console.file):  # the height too, or rich takes TERM=dumb's 80 columns over the width
        return _PipedConsole(width=max(console.width, PIPED_WIDTH if width is None else width), height=console.height,
                             **PLAIN_TEXT)
    if console.width < MIN_TERMINAL_WIDTH:  # COLUMNS=0, say: nothing would print
        return _SpelledConsole(width=80, **PLAIN_TEXT)
    return console


def piped_columns() -> int | None:
    """The columns ``COLUMNS`` gives stdout where it is no terminal (a pipe told its reader's width: ``COLUMNS=100
    solve map | less``), as rich reads it; None where it is unset or says fewer than `MIN_TERMINAL_WIDTH` (0, as some
    containers set it)."""
    from solver.render import MIN_TERMINAL_WIDTH
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) >= MIN_TERMINAL_WIDTH else None


def on_terminal(console: Console) -> bool:
    """Whether `console` (of `new_console`) lays its output out for a terminal's width, not a pipe's."""
    return console.is_terminal and not isinstance(console, _PipedConsole)


def _isatty(stream: IO[str]) -> bool:
    """Whether `stream` writes to a terminal (a closed or detached one does not)."""
    try:
        return stream.isatty()
    except (ValueError, OSError):
        return False


class _SpelledConsole(Console):
    """A console whose strings (a table's cells and headers: a map's ``≤8 GPUs``, a placement's ``(≥32768)``) have
    the tool's own characters in ASCII (`ASCII_SPELLINGS`) where its stream's encoding lacks them, before rich lays
    them out: spelled as the stream writes them, after layout, they would push a table's borders out of line."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        """Rich's, of `text` with the characters its stream cannot encode spelled (`spelled_for`)."""
        return super().render_str(spelled_for(self.encoding, text), **kwargs)


def spelled_for(encoding: str, text: str) -> str:
    """`text` with each character of `ASCII_SPELLINGS` that `encoding` cannot encode in ASCII."""
    if text.isascii():  # most of a view's strings: none of those characters (all past ASCII) to look up
        return text
    return "".join(ASCII_SPELLINGS[character] if character in ASCII_SPELLINGS and not _encodes(encoding, character)
                   else character for character in text)


@functools.cache
def _encodes(encoding: str, character: str) -> bool:
    """Whether `encoding` encodes `character` (an encoding Python does not know: as ASCII does, not)."""
    try:
        character.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


class _PipedConsole(_SpelledConsole):
    """A console for stdout that is not a terminal: each line as rich lays it out, less trailing spaces."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        """Rich's print, with the trailing spaces of every line removed."""
        from solver.render import without_trailing_spaces
        with self.capture() as captured:
            super().print(*objects, **kwargs)
        self.file.write(without_trailing_spaces(captured.get()))

    def on_broken_pipe(self) -> None:
        """A reader that has gone: leave it to `main` (SIGPIPE's status, 141), not rich's exit with 1."""
        raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))


class OutputError(Exception):
    """Stdout refused a write for another reason than a closed pipe (a full disk, say): the message is
    the reason (``No space left on device``), `errno` the error's number."""

    def __init__(self, error: OSError) -> None:
        super().__init__(error.strerror or str(error))
        self.errno = error.errno


class _WholeWrites(io.RawIOBase):
    """A file descriptor that takes all it is given, or raises (`BrokenPipeError` once a pipe's reader has
    gone, `OutputError` on any other failure): CPython's own stdout can drop the rest of a large write
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
                raise OutputError(error) from None
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


class _DroppedWhenUnwritable(io.FileIO):
    """Stderr's file descriptor, where a write that fails (a full disk, a reader that has gone) is dropped: a note
    or an error's line is lost, as with a closed stderr, rather than raise and end the command with a traceback
    (itself unwritable) and exit status 1 in place of its own."""

    def write(self, data: Any) -> int:
        try:
            return super().write(data)
        except OSError:
            return memoryview(data).nbytes


def _unwritable_stderr_dropped() -> None:
    """When the process's own stderr writes to its descriptor, write it through `_DroppedWhenUnwritable`, with the
    tool's own characters spelled in ASCII where its encoding lacks them (`SPELLED_ERRORS`)."""
    stderr = sys.__stderr__
    if stderr is None or sys.stderr is not stderr:  # closed (taken to os.devnull), captured, or replaced already
        return
    try:
        descriptor = stderr.fileno()
    except (OSError, ValueError, io.UnsupportedOperation):
        return
    stderr.flush()
    errors = stderr.errors and SPELLED_ERRORS.get(stderr.errors, stderr.errors)
    sys.stderr = io.TextIOWrapper(io.BufferedWriter(_DroppedWhenUnwritable(descriptor, "w", closefd=False)),
                                  encoding=stderr.encoding, errors=errors, line_buffering=True, write_through=True)


ASCII_SPELLINGS = {"\u2264": "<=", "\u2265": ">=", "\u00b7": "-", "\u2026": "...", "\u2020": "#"}
"""The characters the commands write of their own (a map's ``\u22648 GPUs`` and one-GPU mark ``\u2020``, a cluster's
``(\u226532768)``, a title's `` \u00b7 ``; rich's ``\u2026`` where it cuts a cell), as a stream that cannot encode them
gets them."""


def _spelled_in_ascii(fallback: str, other: Callable[[str], str]) -> str:
    """Register a codec error handler that writes the characters of `ASCII_SPELLINGS` as their ASCII and any other
    as the `fallback` handler does (`other`: ``replace``'s ``?``, ``backslashreplace``'s ``\\xe9``); its name."""

    def spell(error: UnicodeError) -> tuple[str, int]:
        if not isinstance(error, UnicodeEncodeError):
            raise error
        unencodable = error.object[error.start:error.end]
        return "".join(ASCII_SPELLINGS.get(character) or other(character) for character in unencodable), error.end

    name = f"rft-solver-ascii-{fallback}"
    codecs.register_error(name, spell)
    return name


_SPELLED_OR_REPLACED = _spelled_in_ascii("replace", lambda _: "?")
SPELLED_ERRORS = {
    **dict.fromkeys(("strict", "surrogateescape", "replace"), _SPELLED_OR_REPLACED),
    "backslashreplace": _spelled_in_ascii("backslashreplace",
                                          lambda character: character.encode("ascii", "backslashreplace").decode()),
}
"""For a stream's errors, those the commands write with (`standard_streams_open`): the tool's own characters
spelled in ASCII where the encoding lacks them (`ASCII_SPELLINGS`); any other (a name from the input) as ``?`` on
stdout (where it would otherwise end the command with a traceback) and escaped on stderr."""


def escaped_line(line: str) -> str:
    """`line` with its control characters (from a file's name, say) escaped as Python writes them (``\\x1b``),
    so that it stays one line and cannot restyle the terminal; a byte of a name that is not UTF-8 (or, in the C locale
    without UTF-8 mode, not ASCII), which Python holds as a lone surrogate (``\\udce9``), as that byte (``\\xe9``)."""
    return "".join(character if character.isprintable() else _escaped(character) for character in line)


def _escaped(character: str) -> str:
    """`character` as `escaped_line` writes it."""
    if "\udc80" <= character <= "\udcff":  # os.fsdecode's surrogateescape of the byte 0x80 to 0xff
        return f"\\x{ord(character) - 0xDC00:02x}"
    return repr(character)[1:-1]


def print_escaped(line: str, file: TextIO | None = None) -> None:
    """Print `line` (an error, a ``wrote`` line; notes and warnings on stderr take `print_note`) on stdout, or on
    `file` (``sys.stderr``), as `escaped_line`: a name from the input (a file's, say) keeps it one line and cannot
    restyle the terminal."""
    print(escaped_line(line), file=file)


NOTE_INDENT = "  "
"""The indent of a note's (or a warning's) further lines where a terminal's width wraps it (`print_note`)."""


def print_note(line: str) -> None:
    """Print `line` (a note or a warning) on stderr as `escaped_line`; on a terminal (`note_width`), wrapped at spaces
    to its width, further lines indented by `NOTE_INDENT`, so that none breaks a word. To a pipe or a file it stays one
    line, as scripts grep it (an error's line always does)."""
    escaped = escaped_line(line)
    width = note_width()
    if width is not None:
        escaped = "\n".join(textwrap.wrap(escaped, width, subsequent_indent=NOTE_INDENT, break_long_words=False,
                                          break_on_hyphens=False))  # a flag (--gpu-memory) or a path stays whole
    print(escaped, file=sys.stderr)


def note_width() -> int | None:
    """The columns a note on stderr wraps to: its terminal's as rich takes them (``COLUMNS`` first; fewer than
    `MIN_TERMINAL_WIDTH` taken as 80); None where stderr is a pipe or a file, even one that ``FORCE_COLOR`` or
    ``TTY_COMPATIBLE=1`` has rich take for a terminal (colour, not a width: as `new_console` lays out stdout), or a
    terminal that ``TTY_COMPATIBLE=0`` says is none."""
    from solver.render import MIN_TERMINAL_WIDTH, PLAIN_TEXT
    console = Console(file=sys.stderr, **PLAIN_TEXT)
    if not (_isatty(console.file) and console.is_terminal):
        return None
    return console.width if console.width >= MIN_TERMINAL_WIDTH else 80


def standard_streams_open() -> bool:
    """Whether stdout is open; prepares both for the command. A closed stdout or stderr (``>&-``: Python's
    `sys.stdout` is None) has its descriptor held on os.devnull, so that no file the command opens takes it
    (and the output with it); a closed stderr takes the notes nowhere, and so does one that cannot be written (a full
    disk). Stdout that cannot encode a character (``PYTHONIOENCODING=ascii``; the C locale without UTF-8 mode, whose
    errors are ``surrogateescape``) writes it in ASCII (``\u2264``: ``<=``) where it is the tool's own, else as ``?``
    (`SPELLED_ERRORS`)."""
    closed = [number for number, stream in ((1, sys.stdout), (2, sys.stderr)) if stream is None]
    for number in closed:
        spare = os.open(os.devnull, os.O_WRONLY)  # the lowest free descriptor: the closed one itself, mostly
        if spare != number:
            os.dup2(spare, number)
            os.close(spare)
    if 2 in closed:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 (for the whole process)
    _unwritable_stderr_dropped()
    if 1 in closed:
        return False
    if isinstance(sys.stdout, io.TextIOWrapper) and sys.stdout.errors in SPELLED_ERRORS:
        sys.stdout.reconfigure(errors=SPELLED_ERRORS[sys.stdout.errors])
    _whole_writes_to_piped_stdout()
    return True
