"""The wall clock the cluster commands' safety nets read (`seconds_left`): the deadlines of working out the jobs'
ways and the reasons of those left out, of the search's stages, of widening (and each of its solves' own second) and
of the smaller asks. Each of those steps has a limit that is the same on every run too (CP-SAT's deterministic time,
or a count of the planner's questions: the ways', the smaller asks', the reasons' after the search); a test of exact
answers replaces `seconds_left` (the ``no_wall_clock`` fixture) so that those limits alone end them, whatever the
machine's load. The seconds an answer reports it took are the real ones."""

from __future__ import annotations

import time


def seconds_left(deadline: float) -> float:
    """Seconds of the wall clock left until `deadline` (a `time.monotonic()`): 0 or less once it has passed."""
    return deadline - time.monotonic()
