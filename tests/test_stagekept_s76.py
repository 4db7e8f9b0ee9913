"""`solve cluster --current` where the wall clock stops the search after its first stage (session 76): that stage's
placement stood, and in it which running jobs stay was free, so it moved running jobs that could have stayed at its
priority (an operator's run moved 12 at priority 91). The first stage now weighs the running jobs kept below its own
count (`first_stage_objective`: priority x (1 + running jobs) + running jobs kept), its objective and bound read back
as that count (`count_of`), which the stages after it keep."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from conftest import planner_answers_shared
from test_greedyrunning_s76 import _forty_jobs_placed, _text_and_json, _where, _written
from test_keepstage_s76 import _answer, _stopped_after_priority
from test_runningfirst_s75 import JOBS, _fleet
from test_smallslips20_s75 import FORTY_JOBS

import solver
from solver.cluster.model import count_of, first_stage_objective
from solver.cluster.options import Planner, fleet_options
from solver.cluster.search import placement_search
from solver.results import SCHEMA_VERSION
from solver.tables import load_catalog, load_fleet, load_weights, read_current

Cli = Callable[..., tuple[int, str, str]]

MUST = {"name": "must", "model": "Qwen3-14B", "max_model_len": "32k", "rollout_gpus": 6, "priority": 3}
THIRD = {"name": "third", "model": "Qwen3-1.7B", "max_model_len": "8k", "rollout_gpus": 1, "priority": 1}
"""must needs a whole node of 8 GPUs (6 rollout, 2 trainer); third is also's twin."""

RUNNING = [("runs", 0, [0, 1, 2, 3], 2, 2, 16384, False), ("third", 0, [4, 5], 1, 1, 8192, False),
           ("also", 1, [0, 1], 1, 1, 8192, False)]
"""runs and third share node 0, also runs alone on node 1: no node is free for must."""

KEPT_PLACEMENT = [("must", [1], list(range(8)), 2, 6, "starts"), ("runs", [0], [0, 1, 2, 3], 2, 2, "stays"),
                  ("also", [0], [6, 7], 1, 1, "moves"), ("third", [0], [4, 5], 1, 1, "stays")]
"""must on node 1, also moved beside runs and third, which stay as they run."""


def _jobs(tmp_path: Path) -> tuple[Path, Path]:
    return _fleet(tmp_path, [MUST, *JOBS[1:], THIRD]), _written(tmp_path, RUNNING)


def test_the_greedy_start_places_less_priority_than_the_first_stage(tmp_path: Path):
    # The greedy start keeps the three running jobs first and leaves must no node (priority 3 of 6); the first stage
    # places must too (6): its placement, not the start's, is the one that stands where the search stops after it.
    fleet_path, now = _jobs(tmp_path)
    fleet = load_fleet(fleet_path)
    running = read_current(now, fleet, SCHEMA_VERSION)
    options = fleet_options(Planner(load_catalog().for_fleet(fleet), load_weights(), "auto"), fleet, running=running
                            ).options
    built, stages, start = placement_search(fleet, options, False, running)
    assert start.objective == 3 and start.kept is not None and sorted(start.kept.staying) == [1, 2, 3]
    assert built.kept is not None and len(built.kept.stays) == 3
    (name, priority, maximise), (kept_name, _, _) = stages[:2]
    assert (name, maximise, kept_name) == ("priority", True, "stays")
    objective, weight = first_stage_objective(built, priority, maximise)
    assert weight == 4 and objective is not priority


def test_stopped_after_the_first_stage_it_moves_no_running_job_needlessly(cli: Cli, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch):
    # Before: "running now: 1 stays, 2 move, 0 stop; 1 starts", also and third both moved (third to GPUs 6 and 7 of
    # its own node). At priority 6 only also must move (must takes node 1): the first stage now keeps runs and third.
    _stopped_after_priority(monkeypatch)
    status, err, lines, answer = _answer(cli, *_jobs(tmp_path))
    assert (status, err, lines[:2]) == (0, "", ["status: feasible; placed priority (of 6): 6, proven bound 6",
                                                "running now: 2 stay, 1 moves, 0 stop; 1 starts"])
    assert _where(answer) == KEPT_PLACEMENT
    assert (answer["status"], answer["objective"], answer["bound"], answer["wall_clock_stopped"]) == (
        "feasible", 6, 6, ["stays"])


def test_unstopped_the_search_proves_the_same_placement(cli: Cli, tmp_path: Path):
    status, err, lines, answer = _answer(cli, *_jobs(tmp_path))
    assert (status, err, lines[:2]) == (0, "", ["status: optimal; placed priority (of 6): 6, proven bound 6",
                                                "running now: 2 stay, 1 moves, 0 stop; 1 starts"])
    assert _where(answer) == KEPT_PLACEMENT
    assert answer["wall_clock_stopped"] == []


def test_progress_reports_the_first_stage_in_priority(tmp_path: Path):
    # The first stage's objective weighs priority by 4 (three running jobs may stay): progress reports the greedy
    # start's priority 3, then 6, each with the bound 6 (not 15, 26 and 27: x 4, plus the running jobs kept).
    fleet, now = _jobs(tmp_path)
    reported: list[tuple[str, float, float]] = []
    solver.place(fleet, current=now, widen=False,
                 progress=lambda stage, objective, bound, _: reported.append((stage, objective, bound)))
    first = [(objective, bound) for stage, objective, bound in reported if stage == "placed priority"]
    assert first == [(3, 6), (6, 6)]


@pytest.mark.parametrize(("value", "weight", "maximise", "count"), [
    (24, 4, True, 6), (27, 4, True, 6), (28, 4, True, 7),  # priority 6 with 0 or 3 of 3 running jobs kept; 7 with 0
    (8, 4, False, 2), (5, 4, False, 2), (4, 4, False, 1),  # 2 nodes with 0 or 3 kept; 1 node with 0
    (26, 1, True, 26), (26, 1, False, 26)])  # no running jobs: the count itself
def test_count_of_takes_the_running_jobs_kept_off(value: int, weight: int, maximise: bool, count: int):
    assert count_of(value, weight, maximise) == count


RAISED = ("j1-8b", "j4-32b", "j6-0.6b", "j7-8b", "j14-4b", "j20-14b")
"""Six of the forty-job fleet's jobs that its 15 s placement leaves out, raised to priority 20."""


def test_the_forty_jobs_fleet_with_six_jobs_raised_moves_as_many_stopped_as_not(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # The fleet as its 15 s placement places it (25 jobs) runs now; six jobs it left out are raised to priority 20.
    # Stopped after the first stage, the answer said "3 stay, 15 move, 7 stop; 6 start" before this rule: now 16
    # stay and 2 move, as the unstopped search says (its stage of running jobs kept run).
    planner_answers_shared(monkeypatch)
    status, out, err = _forty_jobs_placed(cli)
    assert (status, err) == (1, "")
    now = tmp_path / "now.json"
    now.write_text(out, encoding="utf-8")
    fleet = yaml.safe_load(FORTY_JOBS.read_text(encoding="utf-8"))
    assert {job["name"] for job in fleet["jobs"]} >= set(RAISED)
    assert not {placed["job"] for placed in json.loads(out)["placements"]} & set(RAISED)
    raised = tmp_path / "raised.yaml"
    raised.write_text(yaml.safe_dump({**fleet, "jobs": [{**job, "priority": 20} if job["name"] in RAISED else job
                                                        for job in fleet["jobs"]]}), encoding="utf-8")
    answers = []
    for stopped in (False, True):
        if stopped:
            _stopped_after_priority(monkeypatch)
        status, text, _, answer = _text_and_json(cli, "cluster", str(raised), "--current", str(now), "--no-widen",
                                                 "--time-limit", "15")
        answers.append((status, next(line for line in text.splitlines() if line.startswith("running now:")),
                        answer["objective"], answer["bound"], answer["wall_clock_stopped"],
                        sorted(placed["job"] for placed in answer["placements"] if placed.get("current") == "moves")))
    # Since s82 the fleet's placement places the jobs earlier in the file where priority ties, so six others are
    # left out and raised (j3-14b and j13-14b are placed now): 16 stay and 2 move before, 10 and 6 then. Since s84 the
    # fleet, naming no Trinity release, counts every rank of a node loading the model at start-up (more host memory for
    # the untied 8B, 14B and 32B): 12 stay and 4 move, stopped or not, and the same four.
    moved = ["j19-1.7b", "j27-14b", "j5-32b", "j8-0.6b"]
    assert answers == [(1, "running now: 12 stay, 4 move, 9 stop; 6 start", 177, 177, [], moved),
                       (1, "running now: 12 stay, 4 move, 9 stop; 6 start", 177, 177, ["stays"], moved)]
