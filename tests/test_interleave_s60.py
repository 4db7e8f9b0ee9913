"""`solve cluster --workers` above 1 (session 60): CP-SAT's one repeatable parallel mode, ``interleave_search``, was
measured on benchmarks/cluster.py's fleets and left out (it found less in the same deterministic work: docs/cluster.md's
Determinism); the help says so, and docs/cli.md's option reference why (session 93)."""

from __future__ import annotations

from option_reference import option_reference


def test_the_workers_help_says_why_more_workers_are_not_repeatable(cli):
    status, out, _ = cli("cluster", "--help")
    assert status == 0
    assert ("a placement proven best does not depend on it; one the time limit stops repeats only with 1 worker"
            ) in " ".join(out.split())
    assert ("(solve cluster's is the same on every run only with 1 worker: CP-SAT's one repeatable parallel mode found "
            "less in the same work, so it is not used)") in option_reference()
