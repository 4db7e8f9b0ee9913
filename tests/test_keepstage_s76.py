"""`solve cluster --current` where the wall clock stops the search's stage of running jobs kept (``stays``) before its
work (session 76): the placed-priority stage's placement, which pays no heed to what runs now, stood, and moved
running jobs that the greedy start (`greedy_start`: the running jobs kept first) keeps at the same priority. The
search took the greedy start where it reached the first stage's objective and kept more running jobs, and hints the
running jobs it keeps to the stages after it; since test_stagekept_s76, the first stage weighs the running jobs kept
itself (`first_stage_objective`), and, starting from the greedy start, keeps as many."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from test_greedyrunning_s76 import _text_and_json, _where, _written
from test_runningfirst_s75 import JOBS, _fleet

import solver.cluster.search
from solver.cluster.options import Planner, fleet_options
from solver.cluster.search import placement_search
from solver.results import SCHEMA_VERSION
from solver.tables import load_catalog, load_fleet, load_weights, read_current

Cli = Callable[..., tuple[int, str, str]]

BOTH_ON_NODE_1 = [("runs", 1, [0, 1, 2, 3], 2, 2, 16384, False), ("also", 1, [4, 5, 6], 2, 1, 8192, False)]
"""runs and also, on node 1 of the two (node 0 idle), each as its smallest way runs it."""


def _stopped_after_priority(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each run's search: its first stage (placed priority) finds the wall clock far from its deadline, every stage
    after it past it (no load makes it so: the same on every run)."""
    asked: set[float] = set()

    def seconds_left(deadline: float) -> float:  # the stages of one run share its deadline
        first = deadline not in asked
        asked.add(deadline)
        return math.inf if first else 0.0

    monkeypatch.setattr(solver.cluster.search, "clock", SimpleNamespace(seconds_left=seconds_left))


def _answer(cli: Cli, fleet: Path, now: Path) -> tuple[int, str, list[str], dict[str, Any]]:
    """`solve cluster FLEET --current NOW --no-widen`: its exit status, its stderr, the text's lines, and its JSON."""
    status, text, err, answer = _text_and_json(cli, "cluster", str(fleet), "--current", str(now), "--no-widen")
    return status, err, text.splitlines(), answer


def test_the_greedy_start_stands_where_it_keeps_more_at_the_same_priority(cli: Cli, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch):
    # The priority stage places both jobs (priority 2, proven) with their ways as they run; it kept neither where its
    # stays literals were free: on node 0, both moved ("0 stay, 2 move" before). The greedy start keeps both at
    # priority 2, and the priority stage, weighing the running jobs kept, keeps them as it does.
    _stopped_after_priority(monkeypatch)
    status, err, lines, answer = _answer(cli, _fleet(tmp_path, JOBS[1:]), _written(tmp_path, BOTH_ON_NODE_1))
    assert (status, err, lines[:2]) == (0, "", ["status: feasible; placed priority (of 2): 2, proven bound 2",
                                                "running now: 2 stay, 0 move, 0 stop; 0 start"])
    assert _where(answer) == [("runs", [1], [0, 1, 2, 3], 2, 2, "stays"), ("also", [1], [4, 5, 6], 2, 1, "stays")]
    assert (answer["status"], answer["objective"], answer["bound"], answer["wall_clock_stopped"]) == (
        "feasible", 2, 2, ["stays"])
    assert not any(line.startswith("moves:") for line in lines)


def test_the_stage_of_running_jobs_kept_gives_the_same_placement(cli: Cli, tmp_path: Path):
    # Unstopped, the stage of running jobs kept proves it (and the later stages theirs): the same jobs stay.
    status, err, lines, answer = _answer(cli, _fleet(tmp_path, JOBS[1:]), _written(tmp_path, BOTH_ON_NODE_1))
    assert (status, err, lines[:2]) == (0, "", ["status: optimal; placed priority (of 2): 2, proven bound 2",
                                                "running now: 2 stay, 0 move, 0 stop; 0 start"])
    assert _where(answer) == [("runs", [1], [0, 1, 2, 3], 2, 2, "stays"), ("also", [1], [4, 5, 6], 2, 1, "stays")]
    assert answer["wall_clock_stopped"] == []


def test_the_priority_stage_stands_where_it_places_more_than_the_greedy_start(cli: Cli, tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch):
    # runs on node 0 and also on node 1 leave must (priority 3) no node of 8 GPUs: the greedy start keeps both and
    # places priority 2; the priority stage places must too (priority 5) and stands, the kept stage stopped: runs
    # stays, also moves beside it (the kept stage, had it run, keeps also instead and moves runs: one either way).
    now = _written(tmp_path, [("runs", 0, [0, 1, 2], 1, 2, 16384, True), ("also", 1, [0, 1], 1, 1, 8192, False)])
    must = {"name": "must", "model": "Qwen3-14B", "max_model_len": "32k", "rollout_gpus": 6, "priority": 3}
    _stopped_after_priority(monkeypatch)
    status, err, lines, answer = _answer(cli, _fleet(tmp_path, [must, *JOBS[1:]]), now)
    assert (status, err, lines[:2]) == (0, "", ["status: feasible; placed priority (of 5): 5, proven bound 5",
                                                "running now: 1 stays, 1 moves, 0 stop; 1 starts"])
    assert _where(answer) == [("must", [1], list(range(8)), 2, 6, "starts"), ("runs", [0], [0, 1, 2], 1, 2, "stays"),
                              ("also", [0], [3, 4], 1, 1, "moves")]
    assert (answer["objective"], answer["wall_clock_stopped"], answer["unplaced"]) == (5, ["stays"], [])


def test_the_greedy_start_hints_the_running_jobs_it_keeps(tmp_path: Path):
    # The search starts from the greedy placement with its running jobs kept (each stays literal hinted 1) and the
    # pattern that fills node 1 (its fill literal hinted 1, the pool's others 0); the start's objective is the
    # priority it places.
    fleet = load_fleet(_fleet(tmp_path, JOBS[1:]))
    running = read_current(_written(tmp_path, BOTH_ON_NODE_1), fleet, SCHEMA_VERSION)
    options = fleet_options(Planner(load_catalog().for_fleet(fleet), load_weights(), "auto"), fleet, running=running
                            ).options
    built, stages, start = placement_search(fleet, options, False, running)
    hint = built.model.proto.solution_hint
    hinted = dict(zip(hint.vars, hint.values))
    assert built.kept is not None and start.kept is not None
    assert {job: hinted[literal.index] for job, literal in built.kept.stays.items()} == {0: 1, 1: 1}
    fills = built.kept.fills[0, 1]
    assert {pattern for pattern, literal in fills.items() if hinted[literal.index]} == {start.kept.fills[0, 1]}
    assert len(fills) > 1
    assert (start.objective, [name for name, _, _ in stages]) == (
        2, ["priority", "stays", "jobs", "length", "cost", "tie-break"])  # jobs: those tied in priority (s82)


def test_with_minimize_nodes_the_greedy_start_stands_where_it_uses_as_few_nodes(cli: Cli, tmp_path: Path,
                                                                                monkeypatch: pytest.MonkeyPatch):
    # The first stage counts nodes: the greedy start uses node 1 alone, as the nodes stage's placement does (1 node);
    # it keeps both jobs, and stands.
    fleet, now = _fleet(tmp_path, JOBS[1:]), _written(tmp_path, BOTH_ON_NODE_1)
    _stopped_after_priority(monkeypatch)
    status, out, err = cli("cluster", str(fleet), "--current", str(now), "--no-widen", "--minimize", "nodes", "--json")
    answer = json.loads(out)
    assert (status, err, answer["objective"], answer["objective_counts"], answer["wall_clock_stopped"]) == (
        0, "", 1, "nodes", ["stays"])
    assert _where(answer) == [("runs", [1], [0, 1, 2, 3], 2, 2, "stays"), ("also", [1], [4, 5, 6], 2, 1, "stays")]
