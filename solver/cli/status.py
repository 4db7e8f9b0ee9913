"""Exit statuses of the ``solve`` commands."""

from __future__ import annotations

NO_PLAN = 1
BAD_INPUT = 2
INTERRUPTED = 130
TERMINATED = 143
"""128 + SIGTERM: the exit status of a command ended by ``kill``, ``timeout`` or a batch scheduler."""
CLOSED_PIPE = 141
"""128 + SIGPIPE: the exit status of a command whose output pipe closed (as `yes | head` gives)."""
