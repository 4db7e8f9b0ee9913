"""The wall clock every time limit's safety net reads (`seconds_left`): the planner's solves (`solve.within_deadline`:
the query's time limit, a call's deadline_s, an explanation's deadline) and the cluster commands' deadlines (working
out the jobs' ways and the reasons of those left out, the search's stages, widening and each of its solves' own
second, the smaller asks). The cluster's steps have a limit that is the same on every run too (CP-SAT's deterministic
time, or a count of the planner's questions), and the planner's small solves end on their proofs: a test of exact
answers replaces `seconds_left` (conftest's ``_no_wall_clock``) so that those alone end them, whatever the machine's
load. The seconds an answer reports it took are the real ones."""

from __future__ import annotations

import time


def seconds_left(deadline: float) -> float:
    """Seconds of the wall clock left until `deadline` (a `time.monotonic()`): 0 or less once it has passed."""
    return deadline - time.monotonic()
