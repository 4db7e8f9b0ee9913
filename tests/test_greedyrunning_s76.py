"""`solve cluster --current` where time runs out before the search's first placement (session 76): the greedy
placement that stands then keeps the running jobs where they run first (`greedy_choice`), and places the others after
them; where keeping them leaves a required job out, the required jobs come first. Before, it placed every job afresh,
and moved or stopped running jobs that a placement of as much priority keeps."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import planner_answers_shared
from test_runningfirst_s75 import JOBS, _fleet, _running
from test_smallslips20_s75 import FORTY_JOBS

import solver
import solver.cluster.search
import solver.render

Cli = Callable[..., tuple[int, str, str]]


def _written(tmp_path: Path, jobs: list[tuple[str, int, list[int], int, int, int, bool]]) -> Path:
    """A placement in pool a100 as `--current` reads it: each job's name, node, GPUs, trainer and rollout GPUs, length
    and Offload (SP 1)."""
    path = tmp_path / "now.json"
    path.write_text(json.dumps({"schema_version": 1, "placements": [
        {"job": job, "pool": "a100", "nodes": [node], "gpu_indexes": gpus, "trainer_gpus": trainer,
         "rollout_gpus": rollout, "plan": {"max_model_len": length, "sp": 1, "offload": offload}}
        for job, node, gpus, trainer, rollout, length, offload in jobs]}), encoding="utf-8")
    return path


def _no_first_placement(monkeypatch: pytest.MonkeyPatch) -> None:
    """The search's stages find the wall clock past their deadline (no load makes it so: the same on every run), so
    its first stage finds no placement and the greedy one stands."""
    monkeypatch.setattr(solver.cluster.search, "clock", SimpleNamespace(seconds_left=lambda deadline: 0.0))


def _where(answer: dict[str, Any]) -> list[tuple[object, ...]]:
    """Each placement's job, nodes, GPUs, trainer and rollout GPUs, and `current`."""
    return [(p["job"], p["nodes"], p["gpu_indexes"], p["trainer_gpus"], p["rollout_gpus"], p.get("current"))
            for p in answer["placements"]]


def _text_and_json(cli: Cli, *argv: str) -> tuple[int, str, str, dict[str, Any]]:
    """`solve ARGV` (a placement's text): its exit status, stdout and stderr, and the JSON `--json` prints for the
    placement it showed (`cluster_json` of the result it rendered: one search where a second run with --json would
    place it again)."""
    shown: list[solver.ClusterResult] = []

    def recorded(result: solver.ClusterResult, *args: Any, **kwargs: Any) -> Any:
        shown.append(result)
        return rendered(result, *args, **kwargs)

    rendered = solver.render.cluster_view
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(solver.render, "cluster_view", recorded)
        status, text, err = cli(*argv)
    [result] = shown
    return status, text, err, json.loads(solver.render.cluster_json(result))


def _fallback(cli: Cli, fleet: Path, now: Path, *options: str) -> tuple[int, str, list[str], dict[str, Any]]:
    """`solve cluster FLEET --current NOW` where the search finds no first placement: its exit status, its stderr, the
    text's lines, and its JSON."""
    status, text, err, answer = _text_and_json(cli, "cluster", str(fleet), "--current", str(now), *options)
    return status, err, text.splitlines(), answer


def running_now(lines: list[str]) -> str:
    """The text's ``running now:`` line, wherever lines that depend on the wall clock (a stage it stopped, how long
    working out the jobs' ways took, on a slow machine) put it."""
    return next(line for line in lines if line.startswith("running now: "))


_FORTY_JOBS_PLACED: list[tuple[int, str, str]] = []


def _forty_jobs_placed(cli: Cli) -> tuple[int, str, str]:
    """`solve cluster cluster-40-jobs.yaml --json --time-limit 15`: its exit status, stdout and stderr, run once per
    test process (the same on every run: CP-SAT's deterministic time bounds it) for the tests that take it as now."""
    if not _FORTY_JOBS_PLACED:
        _FORTY_JOBS_PLACED.append(cli("cluster", str(FORTY_JOBS), "--json", "--time-limit", "15"))
    return _FORTY_JOBS_PLACED[0]


GREEDY = ("status: feasible; placed priority (of 4): 4, no bound proven (time ran out before the search's first "
          "placement: the greedy one stands; raise --time-limit)")


def test_the_greedy_placement_keeps_every_running_job_where_it_runs(cli: Cli, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch):
    # The three jobs as placed (new on node 1, widened to 6 trainer GPUs; runs and also sharing node 0): the greedy
    # placement by priority, each on its smallest way, moved all three (0 stay, 3 move); it now keeps them as they run.
    now = _running(cli, tmp_path, {"new", "runs", "also"})
    running = _where(json.loads(now.read_text()))
    _no_first_placement(monkeypatch)
    status, err, lines, answer = _fallback(cli, _fleet(tmp_path, JOBS), now)
    assert (status, err, lines[0], running_now(lines)) == (0, "", GREEDY,
                                                           "running now: 3 stay, 0 move, 0 stop; 0 start")
    assert _where(answer) == [(*placed[:-1], "stays") for placed in running] == [
        ("new", [1], list(range(8)), 6, 2, "stays"), ("runs", [0], [0, 1, 2, 3], 2, 2, "stays"),
        ("also", [0], [4, 5, 6], 2, 1, "stays")]
    assert (answer["status"], answer["objective"], answer["bound"], answer["wall_clock_stopped"],
            answer["unplaced"]) == ("feasible", 4, None, ["priority"], [])


def test_a_required_job_the_kept_jobs_leave_no_room_is_placed_first(cli: Cli, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch):
    # runs on node 0 and also on node 1 (moved there by hand), each on its smallest way; the required job needs 8 GPUs
    # of one node (2 trainer beside 6 rollout), which keeping both leaves it nowhere. The required job then comes
    # first (node 0), the running jobs after it, kept where they still fit: also stays; runs, on node 0, moves to node
    # 1 beside it. (Keeping both would leave no placement at all: a placement places every required job.)
    now = _written(tmp_path, [("runs", 0, [0, 1, 2], 1, 2, 16384, True), ("also", 1, [0, 1], 1, 1, 8192, False)])
    must = {"name": "must", "model": "Qwen3-14B", "max_model_len": "32k", "rollout_gpus": 6, "required": True}
    _no_first_placement(monkeypatch)
    status, err, lines, answer = _fallback(cli, _fleet(tmp_path, [must, *JOBS[1:]]), now, "--no-widen")
    assert (status, err, lines[0], running_now(lines)) == (0, "", GREEDY.replace("(of 4): 4", "(of 3): 3"),
                                                           "running now: 1 stays, 1 moves, 0 stop; 1 starts")
    assert ("moves: runs: it runs on node 0 of pool a100 (GPUs 0-2) now, "
            "and restarts as placed: the placement is not proven best "
            "(raise --time-limit); its GPUs now run must (priority 1)"
            in " ".join(" ".join(lines).split()))  # the line wraps
    assert _where(answer) == [("must", [0], list(range(8)), 2, 6, "starts"), ("runs", [1], [2, 3, 4], 1, 2, "moves"),
                              ("also", [1], [0, 1], 1, 1, "stays")]


def test_the_forty_jobs_fleet_keeps_its_25_running_jobs(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # The 40 jobs as a 15 s placement places them (25 jobs, priority 90), then again with that as --current: the greedy
    # placement said 1 stays, 10 move, 14 stop; 4 start (priority 69); it keeps all 25, and places no other job.
    planner_answers_shared(monkeypatch)
    status, out, err = _forty_jobs_placed(cli)
    now = tmp_path / "now.json"
    now.write_text(out, encoding="utf-8")
    running = _where(json.loads(out))
    _no_first_placement(monkeypatch)
    fallback, noted, lines, answer = _fallback(cli, FORTY_JOBS, now, "--time-limit", "15")
    assert (status, err, fallback, len(running)) == (1, "", 1, 25)
    assert noted == (f"solve cluster: note: to place every job: solve cluster {FORTY_JOBS} --buy --time-limit 15 names "
                     "the fewest GPUs, then nodes, to add to the pools (and the jobs no number of nodes runs)\n")
    assert lines[0] == ("status: feasible; placed priority (of 133): 90, no bound proven (time ran out before the "
                        "search's first placement: the greedy one stands; raise --time-limit)")
    assert running_now(lines) == "running now: 25 stay, 0 move, 0 stop; 0 start"
    assert _where(answer) == [(*placed[:-1], "stays") for placed in running]
