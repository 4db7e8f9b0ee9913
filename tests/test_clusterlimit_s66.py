"""`solve cluster`'s time limit holds the whole command (s66): the reasons of the jobs left out, asked after the search
(why the other pools a job with ways may use have none), end by it too, and where the wall clock cuts them the
answer says so (their words, ``reasons`` in `wall_clock_stopped`, the line under the status)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import pytest
from test_clusterbuy_s60 import fleet_file
from test_clusterdedup_s65 import taking_longer

import solver.cluster.reasons
from solver.cluster.options import WaysLimit
from solver.tables import REASONS_QUESTIONS_PER_SECOND

A100 = {"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}
PAIR = {"name": "pair", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 2}
LENGTHS = (65536, 32768, 16384, 8192, 4096, 2048)
SHAPES = {"pools": [A100, PAIR], "jobs": [
    {"name": f"j{length}", "model": "Qwen3-14B", "max_model_len": length, "rollout_gpus": 2} for length in LENGTHS]}
"""Six jobs of six shapes, none with a way in pair (their 2 rollout GPUs take all its GPUs): two are placed on a100,
and each of the four left out has a reason asked after the search, why pair has no way for it."""

CUT = "no way to run in pair (why was not worked out within the time limit; raise --time-limit)"
STOPPED_LINE = ("the wall clock stopped working out why the other pools of the jobs left out have no way for them "
                "before the work it is given")


def recorded_reasons(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The jobs whose reasons (of a job shape) were asked of the planner (`reasons._reasons`), in order."""
    asked: list[str] = []
    reasons = solver.cluster.reasons._reasons

    def recorded(planner: object, fleet: object, index: int, *args: object) -> object:
        asked.append(fleet.jobs[index].name)  # type: ignore[attr-defined]
        return reasons(planner, fleet, index, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(solver.cluster.reasons, "_reasons", recorded)
    return asked


def test_a_tiny_time_limit_holds_the_reasons_after_the_search_and_the_answer_says_what_was_cut(
        cli: Callable[..., tuple[int, str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # Four reasons of 0.5 s each on the cluster's clock (`taking_longer`: as on a slow machine or a large fleet; it
    # stands still otherwise, so the same on every run), 2 s of them, past a limit of 1 s. Before s66 they were all
    # asked; now the reasons end by the limit (less `READ_BACK_S`): those begun at 0 and 0.5 s are asked, the next,
    # at 1 s, is not, and the command's work ends within the limit and the one reason being asked as it passes.
    asked = recorded_reasons(monkeypatch)
    taking_longer(monkeypatch, solver.cluster.reasons, "_reasons", 0.5)
    status, out, err = cli("cluster", str(fleet_file(SHAPES, tmp_path)), "--time-limit", "1", "--json")
    result = json.loads(out)
    # Solve's best on the placed jobs' trainer GPUs, asked last (s82), finds the limit passed too: none asked; so
    # does the question whether a job was left out in a tie of priority (s82: the least priority's solves).
    assert (status, err, result["wall_clock_stopped"]) == (1, "", ["reasons", "least priority", "solve best"])
    assert result["solve_best_unasked"] == len(result["placements"])
    unplaced = {job["job"]: job for job in result["unplaced"]}
    assert len(unplaced) == 4 and len(asked) == 2 and set(asked) < set(unplaced)  # the rest cut
    for name, job in unplaced.items():
        assert job["reason_code"] == "no-room"
        assert (f"; {CUT}" in job["reason"]) == (name not in asked)
        assert [pool["pool"] for pool in job["pools"]] == (["a100", "pair"] if name in asked else ["a100"])


@pytest.mark.wall_clock  # a deadline the real clock has passed
def test_reasons_past_their_deadline_are_not_asked_and_the_text_says_so(
        cli: Callable[..., tuple[int, str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # On a deadline already past as the search ends (a clock of no load: the same on every run).
    asked = recorded_reasons(monkeypatch)
    hints_limit = WaysLimit.after_search  # the smaller asks keep theirs
    monkeypatch.setattr(WaysLimit, "after_search", classmethod(
        lambda cls, planner, per_second, deadline: cls(math.inf, -math.inf)
        if per_second == REASONS_QUESTIONS_PER_SECOND else hints_limit(planner, per_second, deadline)))
    path = str(fleet_file(SHAPES, tmp_path))
    status, out, err = cli("cluster", path)
    assert (status, asked) == (1, []) and err.startswith("solve cluster: note: to place every job: ")
    assert out.splitlines()[1].startswith(STOPPED_LINE)
    result = json.loads(cli("cluster", path, "--json")[1])
    assert (result["status"], result["wall_clock_stopped"]) == ("optimal", ["reasons"])  # a reason places nothing
    assert [(f"; {CUT}" in job["reason"], [pool["pool"] for pool in job["pools"]])
            for job in result["unplaced"]] == [(True, ["a100"])] * 4


def test_reasons_within_their_deadline_are_asked_as_before(
        cli: Callable[..., tuple[int, str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    asked = recorded_reasons(monkeypatch)
    status, out, _ = cli("cluster", str(fleet_file(SHAPES, tmp_path)), "--json")
    result = json.loads(out)
    assert (status, result["status"], result["wall_clock_stopped"], len(asked)) == (1, "optimal", [], 4)
    assert all("pair: the job's 2 rollout GPUs take all the pool's 2 GPUs" in job["reason"]
               for job in result["unplaced"])
