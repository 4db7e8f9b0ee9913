"""Small slips left by session 69's reviews (helper smallslips11): a placement whose search never ran says so (a
required job's ways cut short by the time limit); ..."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

import solver
from solver.tables import load_catalog, load_fleet

Cli = Callable[..., tuple[int, str, str]]

CATALOG = load_catalog()

TWO_REQUIRED = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}],
                "jobs": [{"name": name, "model": "Qwen3-4B", "max_model_len": 4096, "required": name != "c"}
                         for name in ("a", "b", "c")]}
"""Three small jobs, a and b required: at 0.01 s the count of the planner's questions ends after a's ways."""

NEVER_RAN = ("status: unknown: time ran out working out the jobs' ways to run, so the search for a placement never ran "
             "(raise --time-limit)")


def _write(tmp_path: Path, fleet: dict) -> Path:
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(fleet), encoding="utf-8")
    return path


@pytest.mark.usefixtures("no_wall_clock")
@pytest.mark.parametrize("options", [(), ("--minimize", "nodes")])
def test_a_placement_whose_required_jobs_ways_were_cut_short_says_its_search_never_ran(
        cli: Cli, tmp_path: Path, options: tuple[str, ...]):
    # The status line said only "status: unknown", as if the search had run and found nothing.
    status, out, err = cli("cluster", str(_write(tmp_path, TWO_REQUIRED)), "--time-limit", "0.01", *options)
    assert (status, err, out.splitlines()[:2]) == (1, "", [
        NEVER_RAN,
        "the time limit cut working out the jobs' ways short: b, c got none (the jobs of more priority are asked "
        "first), so no placement was found (raise --time-limit)"])
    placed = json.loads(cli("cluster", str(_write(tmp_path, TWO_REQUIRED)), "--time-limit", "0.01", "--json",
                            *options)[1])
    assert (placed["status"], placed["placements"], placed["ways_cut_short"]) == ("unknown", [], ["b", "c"])


@pytest.mark.usefixtures("no_wall_clock")
def test_a_placement_whose_jobs_not_required_were_cut_short_searched(tmp_path: Path):
    fleet = load_fleet(_write(tmp_path, {**TWO_REQUIRED, "jobs": TWO_REQUIRED["jobs"][:1] + [
        {**job, "required": False} for job in TWO_REQUIRED["jobs"][1:]]}), CATALOG)
    result = solver.place(fleet, catalog=CATALOG, time_limit_s=0.01)
    assert (result.status, [p.job for p in result.placements], result.ways_cut_short, result.search_never_ran) == (
        "feasible", ["a"], ("b", "c"), False)
    text = solver.cluster_text(result, fleet)
    assert text.splitlines()[0] == (
        "status: feasible; placed priority (of 3): 1, bound 1 on the jobs whose ways were worked out")
    cut = solver.place(fleet, catalog=CATALOG, time_limit_s=0.01, minimize="nodes")
    assert cut.search_never_ran and solver.cluster_text(cut, fleet).splitlines()[0] == (
        "status: unknown: time ran out working out the jobs' ways to run, so the search for a placement never ran "
        "(raise time_limit_s)")
