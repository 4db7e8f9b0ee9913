"""Files the ``solve`` commands write: in full under a temporary name beside them, then renamed into place; errors
about a file an option gives name the option (`errors_named_by`)."""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from solver.cli.status import WRITE_FAILURES
from solver.tables import OneLineError, QueryError

HELD_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))
"""Ctrl-C and the requests to end (``kill``, ``timeout``, a closed terminal): held while files are written."""
TEMPORARY_NAME_CHARACTERS = 32
"""At most this much of a file's name goes into its temporary file's name (``.NAME.RANDOM.tmp``), which must
stay within the folder's limit (255 bytes, mostly) for any name that is within it."""


class WriteFailed(QueryError):
    """A file the command was asked to write (or a folder for it) that the file system could not take for want of
    room or an I/O error (`WRITE_FAILURES`): the command exits with 74 (`WRITE_FAILED`), not bad input's 2."""


def cannot_write(error: OSError) -> type[QueryError]:
    """The error to raise for a file or folder that `error` kept from being written: `WriteFailed` for want of room
    or an I/O error (`WRITE_FAILURES`), `QueryError` for the place named (permission, no such folder, ...)."""
    return WriteFailed if error.errno in WRITE_FAILURES else QueryError


def write_atomically(path: Path, text: str, option: str | None = None) -> None:
    """Write `text` to `path` through a temporary file in the same folder and a rename: a reader sees
    the old file or the whole new one, never half of it; on failure nothing is left behind. The file
    keeps the permissions of the one it replaces (and its owner, where the user may give it: root), and a
    file the user may not write is refused; a new file gets the usual ones (0666 less the umask).
    A symbolic link is written through (the file it names is replaced); a target that exists and is not a
    regular file (a device, a FIFO, a folder) is refused. Ctrl-C, or a request to end, while it writes comes
    once the file is in place (`signals_held`). Its errors name the `option` that gives the file (if any)."""
    write_all_atomically({path: text}, None if option is None else {path: option})


def write_all_atomically(files: dict[Path, str], options: Mapping[Path, str] | None = None) -> None:
    """`write_atomically` for several files at once: every file is written in full to its temporary name
    before the first is renamed into place, so a failure to write (a full disk, a folder without write
    permission) leaves every target as it was. Should a rename itself fail (rare: an immutable file), the
    message names the files already in place. Two paths that are one file (a link to the other) are refused:
    the second written would replace the first. An error about a file names the option that gives it, from
    `options` (by path; a file of none, in a positional argument's folder, is named alone)."""
    from solver.tables import resolved_path
    refuse_one_file_twice(list(files))
    staged: list[tuple[str, Path, Path]] = []  # (temporary name, target, the path given)
    with signals_held():
        try:
            for path, text in files.items():
                with _named_by(path, options):
                    staged.append((*_staged(resolved_path(path), text), path))
            for done, (temporary, target, path) in enumerate(staged):
                try:
                    os.replace(temporary, target)
                except OSError as error:
                    written = [str(placed) for _, placed, _ in staged[:done]]
                    also = f" (already written: {', '.join(written)})" if written else ""
                    with _named_by(path, options):
                        raise cannot_write(error)(f"{target}: cannot write: {error.strerror}{also}") from None
        finally:
            for temporary, _, _ in staged:
                Path(temporary).unlink(missing_ok=True)  # those not renamed into place


@contextlib.contextmanager
def errors_named_by(flag: str) -> Iterator[None]:
    """Errors raised within about the file option `flag` gives (their message starts with its path) name the option
    before the file (``--memory-model FILE: ...``, ``--out FILE: cannot write: ...``): every file an option gives,
    to read or to write, is named so in its errors."""
    try:
        yield
    except OneLineError as error:
        raise type(error)(f"{flag} {error}") from None


def _named_by(path: Path, options: Mapping[Path, str] | None) -> contextlib.AbstractContextManager[None]:
    """`errors_named_by` the option that gives `path`, from `options`; errors as they are where none does."""
    flag = (options or {}).get(path)
    return contextlib.nullcontext() if flag is None else errors_named_by(flag)


def refuse_one_file_twice(paths: Sequence[Path]) -> None:
    """`QueryError` when two of the `paths` to write are one file (one a link to the other, or to where the other
    would be made): written in turn, the second would replace the first."""
    from solver.tables import file_identity
    seen: dict[tuple[int, int] | str, Path] = {}  # each path looked at once: a cluster file may have 20000 jobs
    for path in paths:
        identity = file_identity(path)
        if identity in seen:
            raise QueryError(f"{seen[identity]} and {path} are one file (through a link): writing both would lose the "
                             "first; remove the link, or write elsewhere")
        seen[identity] = path


def not_a_regular_file(path: Path) -> bool:
    """Whether something is at `path` that a file written there would not replace: a folder, a device, a
    FIFO, a dangling or looping link."""
    return (path.exists() or path.is_symlink()) and not path.is_file()


def writable_status(path: Path) -> os.stat_result | None:
    """The status of the file at `path` (None where there is none yet); `QueryError` where a file written there
    would not be written (not a regular file, not writable) or would lose what the command prints (stdout or
    stderr goes to it). Checked before any work, and again as the file is written."""
    try:
        if not_a_regular_file(path):
            raise QueryError(f"{path}: not a regular file; give a file name to write")
        existing = path.stat() if path.exists() else None
        if existing is not None and not os.access(path, os.W_OK):
            raise QueryError(f"{path}: cannot write: Read-only file system" if on_read_only_mount(path) else
                             f"{path}: cannot write: Permission denied (the file is not writable)")
        if existing is not None and any(_stream_writes_to(existing, stream) for stream in (1, 2)):
            raise QueryError(f"{path}: the command's own output goes there; name another file, or drop the option to "
                             "print it")
        if path.parent.is_dir() and not os.access(path.parent, os.W_OK | os.X_OK):
            raise _no_temporary_file(path, f"the folder {not_writable_words(path.parent)}")
    except OSError as error:
        raise cannot_write(error)(f"{path}: cannot write: {error.strerror}") from None
    return existing


def on_read_only_mount(path: Path) -> bool:
    """Whether `path` lies on a file system mounted read-only (a container's, say), where no permission lets it be
    written: said so, rather than "Permission denied", which would send the user to chmod."""
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # statvfs is POSIX's alone
        return False


def not_writable_words(folder: Path) -> str:
    """What keeps files from being made in `folder`, which `os.access` says may not be written: "is on a read-only
    file system" or "is not writable"."""
    return "is on a read-only file system" if on_read_only_mount(folder) else "is not writable"


def _staged(path: Path, text: str) -> tuple[str, Path]:
    """`text` written in full, synced and given `path`'s permissions, under a temporary name beside
    `path`: (the temporary name, `path`). Nothing is left behind on failure."""
    existing = writable_status(path)
    mode = stat.S_IMODE(existing.st_mode) if existing is not None else 0o666 & ~_umask()
    try:
        handle = tempfile.NamedTemporaryFile(  # noqa: SIM115 (closed below, by `with handle`)
            "w", encoding="utf-8", dir=path.parent, prefix=f".{path.name[:TEMPORARY_NAME_CHARACTERS]}.",
            suffix=".tmp", delete=False)
    except OSError as error:  # the new text goes beside it first, then takes its place
        raise _no_temporary_file(path, error.strerror or str(error), cannot_write(error)) from None
    try:
        with handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(handle.name, mode)
        if existing is not None and hasattr(os, "chown") and (existing.st_uid, existing.st_gid) != (
                os.geteuid(), os.getegid()):
            with contextlib.suppress(PermissionError):  # only root may give a file to another user
                os.chown(handle.name, existing.st_uid, existing.st_gid)
    except BaseException as error:
        Path(handle.name).unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise cannot_write(error)(f"{path}: cannot write: {error.strerror}") from None
        raise
    return handle.name, path


def _no_temporary_file(path: Path, reason: str, kind: type[QueryError] = QueryError) -> QueryError:
    """The error (of `kind`: `cannot_write`'s) for a file whose temporary file cannot be made beside it, for
    `reason`."""
    return kind(f"{path}: cannot write: a temporary file cannot be created in {path.parent} ({reason}); the file is "
                "written there first, then renamed into place")


@contextlib.contextmanager
def signals_held() -> Iterator[list[int]]:
    """Hold Ctrl-C and the requests to end (`HELD_SIGNALS`) while the block writes files, then deliver each that
    came, in turn, to its own handler again (one the process ignores stays ignored): every file is renamed into
    place or none is, and no temporary file is left behind. Nested, the inner block's signals come to the outer's
    hold (``solve cluster --emit-dir``: its configs and the placement that names them). The block gets the signals
    that came, in order: one it takes out of that list is not delivered. Outside the main thread, where Python cannot
    handle signals, the block runs as it is."""
    came: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield came
        return

    def hold(number: int, _frame: object) -> None:
        came.append(number)

    previous = {number: signal.signal(number, hold) for number in HELD_SIGNALS}
    try:
        yield came
    finally:
        # Ctrl-C's handler last: a Ctrl-C the moment it is back raises KeyboardInterrupt with none of them held.
        for number, handler in reversed(previous.items()):
            signal.signal(number, signal.SIG_DFL if handler is None else handler)  # None: not set from Python
        for number in dict.fromkeys(came):
            signal.raise_signal(number)  # Ctrl-C raises KeyboardInterrupt here; a request to end ends the process


def _stream_writes_to(status: os.stat_result, descriptor: int) -> bool:
    """Whether the file of `status` is the one `descriptor` (stdout, stderr) writes to: renamed over, what the
    stream had written would be lost (``--out plan.yaml > plan.yaml``, ``--out /dev/stdout``)."""
    try:
        stream = os.fstat(descriptor)
    except OSError:  # closed
        return False
    return stat.S_ISREG(stream.st_mode) and (stream.st_dev, stream.st_ino) == (status.st_dev, status.st_ino)


def _umask() -> int:
    """The process's umask (reading it means setting it, so it is set straight back)."""
    current = os.umask(0o022)
    os.umask(current)
    return current
