"""What a new user's first hour found (session 64, persona10): each test runs what the words describe and checks
the words against what the code does."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from solver.tables import shipped_examples

ROOT = Path(__file__).resolve().parent.parent
REQUIRED = ROOT / "docs" / "examples" / "required.yaml"
"""Four jobs on two nodes of 8; code-8b, chat-14b and probe-4b required, math-8b not."""

Cli = Callable[..., tuple[int, str, str]]


def flat(text: str) -> str:
    """Text with its line breaks read as spaces, as a reader reads a paragraph."""
    return " ".join(text.split())


def test_minimize_nodes_sends_a_fleet_with_required_jobs_to_a_purchase_for_every_job(cli: Cli):
    # --minimize nodes places every job or none; --buy alone buys for the required jobs only, so the note's command
    # must name the others (it said "to place the required jobs: ... --buy", which buys for three of the four).
    status, _, err = cli("cluster", str(REQUIRED), "--minimize", "nodes")
    assert status == 1
    assert f"note: to place every job: solve cluster {REQUIRED} --buy --required math-8b names the fewest" in err
    status, out, _ = cli("cluster", str(REQUIRED), "--buy", "--required", "math-8b", "--json")
    purchase = json.loads(out)
    assert status == 0 and purchase["required"] == ["code-8b", "math-8b", "chat-14b", "probe-4b"]
    assert {placement["job"] for placement in purchase["placements"]} == set(purchase["required"])
    # A job --required names is named again (a new run needs it); the file's required ones are not.
    status, _, err = cli("cluster", str(REQUIRED), "--minimize", "nodes", "--required", "math-8b")
    assert status == 1 and f"note: to place every job: solve cluster {REQUIRED} --buy --required math-8b names" in err
    # Without --minimize nodes nothing changes: the required jobs do not fit, and --buy buys for them.
    status, _, err = cli("cluster", str(REQUIRED))
    assert status == 1 and f"note: to place the required jobs: solve cluster {REQUIRED} --buy names the" in err
