"""`solve cluster --current` on hard fleets (session 77, helper currenttime): the first stage, which weighs the running
jobs kept below its own count, reported the same priority and bound again for each placement that only kept more of
them (progress now reports a stage's count or bound only where one changes); a required job with no way at all decides
the answer (infeasible) before the running jobs' ways as they run are asked past the ways' limit (none is: the answer
hung on them, unknown where one had none) and before the jobs cut short (`_none_placed` now names them, and the steps
the wall clock stopped, as the other answers do)."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest
import yaml
from benchmark_modules import load_benchmark
from cluster_api import place
from test_minnodes_s64 import _questions_per_second
from test_runpast_s76 import CATALOG, JOBS, _fleet, _running

import solver
import solver.cluster.options
from solver.cluster.search import ProgressCallback
from solver.tables import load_fleet

CLUSTER_BENCHMARK = load_benchmark("cluster")
"""benchmarks/cluster.py: its fleets, and how its --current case changes them."""

STUCK = {"name": "stuck", "model": "Qwen3-1.7B", "max_model_len": 8192, "rollout_gpus": 8, "required": True}
"""A required job with no way at all: 8 rollout GPUs leave none of its node's 8 for training."""


def _asked_as_it_runs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The running jobs whose ways as they run are asked, by name, as they come."""
    asked: list[str] = []
    real = solver.cluster.options.as_it_runs_ways

    def recording(planner, fleet, job):
        asked.append(fleet.jobs[job.job].name)
        return real(planner, fleet, job)

    monkeypatch.setattr(solver.cluster.options, "as_it_runs_ways", recording)
    return asked


def test_progress_reports_a_stage_only_where_its_count_or_bound_changes(tmp_path: Path):
    # benchmarks/cluster.py's fleet of 32 GPUs and 25 jobs, changed as its --current case changes it: the first stage
    # found a placement that kept more running jobs at priority 41, bound 42, and reported (41, 42) twice.
    first = CLUSTER_BENCHMARK.generate(32, 25, 1)
    (tmp_path / "first.yaml").write_text(yaml.safe_dump(first), encoding="utf-8")
    (tmp_path / "now.json").write_text(solver.place(tmp_path / "first.yaml").model_dump_json(), encoding="utf-8")
    (tmp_path / "fleet.yaml").write_text(yaml.safe_dump(CLUSTER_BENCHMARK.changed_fleet(first, 1)), encoding="utf-8")
    reported: list[tuple[str, float, float]] = []
    answer = solver.place(tmp_path / "fleet.yaml", current=tmp_path / "now.json",
                          progress=lambda stage, value, bound, _: reported.append((stage, value, bound)))
    assert (answer.status, answer.objective, answer.bound) == ("optimal", 41, 41)
    # The sequence is CP-SAT's (OR-Tools 9.15 reports (40, 70) then (41, 42); 9.12 (40, 70) then (41, 41)): what
    # holds on each is that no report repeats the one before, the count rises and the bound falls to the answer's.
    priority = [(value, bound) for stage, value, bound in reported if stage == "placed priority"]
    # The first count is the first solution CP-SAT finds (40 before s82, 39 or 40 since, as the placement it runs now
    # moves with the tie rule): only its bound, 70, and the last report are fixed.
    assert priority[0][1] == 70 and priority[0][0] < 41 and priority[-1][0] == 41 and priority[-1][1] in (41, 42)
    assert all(before[0] <= after[0] and before[1] >= after[1] for before, after in pairwise(priority))
    assert all(before != after for before, after in pairwise(reported))


class _Given(ProgressCallback):
    """A progress callback whose solutions' weighted value and bound are given (`solved`), not CP-SAT's."""

    solved = (0, 0)

    @property
    def objective_value(self) -> float:
        return self.solved[0]

    @property
    def best_objective_bound(self) -> float:
        return self.solved[1]


def test_a_progress_callback_reports_again_only_what_changed():
    reported: list[tuple[str, float, float]] = []
    callback = _Given("placed priority", lambda stage, value, bound, _: reported.append((stage, value, bound)), 0.0,
                      bounded=int, counted=lambda value: value // 4)
    for callback.solved in [(160, 280), (164, 168), (165, 168), (166, 168), (166, 164)]:
        callback.on_solution_callback()
    # 165 and 166 weigh priority 41 with one and two running jobs kept: read back, (41, 42) again, not reported
    assert reported == [("placed priority", 40, 70), ("placed priority", 41, 42), ("placed priority", 41, 41)]


@pytest.mark.parametrize("minimize", ["nodes", None])
def test_a_required_job_with_no_way_is_infeasible_without_the_ways_as_they_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, minimize: str | None):
    # a and b run; b now asks twice its length, so it has no way as it runs. stuck (required) is asked first and has no
    # way; a gets its ways (one question allowed: the count then cuts b short). b's way as it runs used to be asked
    # (and with --minimize nodes, where b must be placed, its having none made the answer unknown): now none is, and
    # the answer is infeasible, b named cut short.
    running = _running(tmp_path, JOBS)
    fleet = load_fleet(_fleet(tmp_path, [STUCK, JOBS[0], {**JOBS[1], "max_model_len": 16384}], "now"), CATALOG)
    _questions_per_second(monkeypatch, 0.1)
    asked = _asked_as_it_runs(monkeypatch)
    result = place(fleet, catalog=CATALOG, time_limit_s=10.0, current=running, minimize=minimize)
    assert (result.status, asked, result.ways_cut_short, result.no_way_to_run, result.wall_clock_stopped,
            result.ways_time_limit_s, result.placements) == ("infeasible", [], ("b",), ("stuck",), (), 70, ())
    assert [(left.job, left.reason_code) for left in result.unplaced] == [
        ("stuck", "no-way-to-run"), ("a", "another-job-fits-nowhere"), ("b", "another-job-fits-nowhere")]


def test_an_infeasible_answer_with_a_required_job_cut_short_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # With --minimize nodes b must be placed and was cut short: the status line does not say the search never ran
    # (stuck decides it), and the line of the jobs cut short says why their ways do not matter.
    running = _running(tmp_path, JOBS)
    fleet_path = _fleet(tmp_path, [STUCK, *JOBS], "now")
    _questions_per_second(monkeypatch, 0.1)
    result = place(load_fleet(fleet_path, CATALOG), catalog=CATALOG, time_limit_s=10.0, current=running,
                   minimize="nodes")
    assert (result.status, result.required_cut_short, result.search_never_ran) == ("infeasible", True, False)
    lines = solver.cluster_text(result, fleet_path, width=400).splitlines()
    assert lines[0] == "status: infeasible"
    assert ("the time limit cut working out the jobs' ways short: b got none (the jobs of more priority are asked "
            "first), but a job that must be placed has no way to run at all, whatever their ways") in lines
