"""`solve cluster --current` under a short time limit (session 75): the running jobs' ways are worked out before the
other jobs' of their priority, and a running job whose ways the time limit cut short is kept as it runs (its way as it
runs alone, stay code `ways-cut-short`), never told to stop for want of time."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from test_minnodes_s64 import _questions_per_second

from solver.cluster.options import ways_order
from solver.tables import load_fleet

Cli = Callable[..., tuple[int, str, str]]

POOL = {"name": "a100", "gpu": "A100-80GB", "nodes": 2, "gpus_per_node": 8}
JOBS = [{"name": "new", "model": "Qwen3-8B", "max_model_len": "32k", "rollout_gpus": 2, "priority": 2},
        {"name": "runs", "model": "Qwen3-4B", "max_model_len": "16k", "rollout_gpus": 2, "priority": 1},
        {"name": "also", "model": "Qwen3-1.7B", "max_model_len": "8k", "rollout_gpus": 1, "priority": 1}]


def _fleet(tmp_path: Path, jobs: list[dict[str, object]]) -> Path:
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump({"pools": [POOL], "jobs": jobs}), encoding="utf-8")
    return path


def _running(cli: Cli, tmp_path: Path, names: set[str]) -> Path:
    """The placement of the jobs `names` alone, as `solve cluster --json` gives it, where `--current` reads it."""
    status, out, err = cli("cluster", str(_fleet(tmp_path, [job for job in JOBS if job["name"] in names])), "--json")
    assert status == 0, err
    path = tmp_path / "now.json"
    path.write_text(out, encoding="utf-8")
    return path


def test_ways_order_puts_running_jobs_before_the_others_of_their_priority(tmp_path: Path):
    fleet = load_fleet(_fleet(tmp_path, JOBS))
    assert (ways_order(fleet), ways_order(fleet, frozenset({2}))) == ([0, 1, 2], [0, 2, 1])


def _placed(cli: Cli, tmp_path: Path, now: Path) -> tuple[object, ...]:
    status, out, _ = cli("cluster", str(_fleet(tmp_path, JOBS)), "--json", "--current", str(now), "--time-limit", "1")
    answer = json.loads(out)
    return (status, answer["status"], answer["ways_cut_short"],
            [(placed["job"], placed.get("current"), placed.get("stay_reason_code"), placed.get("stay_reason"))
             for placed in answer["placements"]],
            [(u["job"], u.get("current"), u["reason"]) for u in answer["unplaced"]])


KEPT = ("kept as it runs: the time limit cut working out its ways short, so no other way of its was weighed "
        "(raise --time-limit)")


def test_a_running_job_whose_ways_were_cut_short_stays_as_it_runs(cli: Cli, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch):
    # 6 questions a second: new's ways (priority 2) are asked, then runs's (running, as also is: then file order);
    # also's are cut short: it gets its way as it runs alone, and stays so (it stopped before session 75).
    now = _running(cli, tmp_path, {"runs", "also"})
    _questions_per_second(monkeypatch, 6)
    assert _placed(cli, tmp_path, now) == (0, "feasible", [], [
        ("new", "starts", None, None), ("runs", "moves", None, None),
        ("also", "stays", "ways-cut-short", KEPT)], [])


def test_a_running_job_kept_as_it_runs_still_stops_for_more_priority(cli: Cli, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch):
    # 1 question a second: new's ways alone are asked; runs and also have their ways as they run, and new (priority 2)
    # needs the room of one of them: also stops for priority, named by its room (its other ways unweighed, it says).
    now = _running(cli, tmp_path, {"runs", "also"})
    _questions_per_second(monkeypatch, 1)
    assert _placed(cli, tmp_path, now) == (1, "feasible", [], [
        ("new", "starts", None, None), ("runs", "stays", "ways-cut-short", KEPT)], [
        ("also", "stops", ("no room left in a100 (it needs at least 7 GPUs (6 trainer + 1 rollout) of one node) after "
                           "the jobs placed (the "
                           "most priority in all, then running jobs kept where they run, then the jobs earlier in the "
                           "file where priorities tie, then length, then cost) (on "
                           "its way as it runs alone: the time limit cut working out its other ways short; raise "
                           "--time-limit); runs (priority 1) holds the room it needs"))])


def test_the_status_line_bounds_the_ways_worked_out_where_a_running_job_was_kept_on_its_way_alone(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    now = _running(cli, tmp_path, {"runs", "also"})
    _questions_per_second(monkeypatch, 6)
    status, out, _ = cli("cluster", str(_fleet(tmp_path, JOBS)), "--current", str(now), "--time-limit", "1")
    assert (status, out.splitlines()[:2]) == (0, [
        "status: feasible; placed priority (of 4): 4, bound 4 on the ways worked out",
        "running now: 1 stays, 1 moves, 0 stop; 1 starts"])
    assert f"stays: also: {KEPT}" in out.replace("\n", " ")

