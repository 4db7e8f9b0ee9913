"""Exit statuses of the ``solve`` commands."""

from __future__ import annotations

import errno

NO_PLAN = 1
BAD_INPUT = 2
WRITE_FAILED = 74
"""sysexits' EX_IOERR: output (a file asked for, or stdout) that the file system could not take for want of room or
an I/O error (`WRITE_FAILURES`): the same command may succeed once there is room, where bad input (2) would not."""
WRITE_FAILURES = frozenset(getattr(errno, name) for name in ("ENOSPC", "EDQUOT", "EIO") if hasattr(errno, name))
"""The errors of a write that exit with `WRITE_FAILED`: no space left, a disk quota exceeded, an I/O error. Any
other failure to write (permission, a read-only file system, no such folder) is the place named, exit 2."""
INTERRUPTED = 130
TERMINATED = 143
"""128 + SIGTERM: the exit status of a command ended by ``kill``, ``timeout`` or a batch scheduler."""
CLOSED_PIPE = 141
"""128 + SIGPIPE: the exit status of a command whose output pipe closed (as `yes | head` gives)."""
INTERNAL_ERROR = 70
"""sysexits' EX_SOFTWARE: the exit status of an exception no command handles, which ``solver.__main__`` gives (its
own `INTERNAL_ERROR`, the same: it cannot import this module, which may be the one that fails to load; the solver
layers import nothing from it)."""

STATUSES_AFTER_BAD_INPUT = (f"{WRITE_FAILED} a full disk, {INTERRUPTED} Ctrl-C, {TERMINATED} a request to end "
                            f"(SIGTERM), {CLOSED_PIPE} a reader gone (| head), {INTERNAL_ERROR} an internal error")
"""How each command's help ends its exit statuses, after 2: `WRITE_FAILED` (docs/cli.md's exit table: its 74
column), then those docs/cli.md gives every command, Ctrl-C, a request to end, a reader gone and a defect."""
