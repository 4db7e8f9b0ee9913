"""The lead's mends in s65: words the session's merges left."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_minnodes_s64 import _fleet_file, _questions_per_second

import solver
from solver.tables import load_catalog, load_fleet

CATALOG = load_catalog()


def test_a_placement_cut_short_with_none_found_says_none_was_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # With --minimize nodes every job must be placed and some jobs' ways are cut short, so no placement is found; the
    # view says that, not that none was searched for (a search that ran and found nothing in time reads the same).
    _questions_per_second(monkeypatch, 3)
    fleet = load_fleet(_fleet_file(tmp_path), CATALOG)
    result = solver.place(fleet, catalog=CATALOG, minimize="nodes", time_limit_s=4)
    assert (result.status, result.placements, bool(result.ways_cut_short)) == ("unknown", (), True)
    text = " ".join(solver.cluster_text(result, fleet, width=400).split())
    cut_short = "got none (the jobs of more priority are asked first), so no placement was found"
    assert cut_short in text and f"{cut_short} (raise" not in text  # the status line says to raise time_limit_s
    assert "searched for" not in text
