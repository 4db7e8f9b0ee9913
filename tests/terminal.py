"""Reading what a command shows on a pseudo-terminal, for the tests that give it one."""

from __future__ import annotations

import os


def read_until_closed(leader: int) -> bytes:
    """Everything the pseudo-terminal whose leader end is `leader` shows until its other end closes; closes `leader`."""
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # EIO: the terminal's other end has closed
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    return shown
