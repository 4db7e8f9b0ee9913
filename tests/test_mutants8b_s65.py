"""Tests of helper mutants8b (s65): a placement whose required jobs are proven not to fit is infeasible though jobs not
required were cut short or left with undecided ways (mutant w10 of /work/keep/s65/mutants8/), and the mutants the
first helper left alive (k13, k19, m02, m08, x10, t10), each killed here or argued equivalent in its review."""

from __future__ import annotations

from typing import Any

import pytest

import solver
import solver.cluster.options
from solver.render.cluster import cluster_text
from solver.tables import Fleet, Job, Pool, load_catalog

CATALOG = load_catalog()
CHAT_A = Job(name="chat-a", model="Qwen3-14B", max_model_len=65536, rollout_gpus=4, required=True)
CHAT_B = Job(name="chat-b", model="Qwen3-14B", max_model_len=32768, rollout_gpus=4, required=True)
PROBE = Job(name="probe", model="Qwen3-0.6B", max_model_len=8192)
TOO_SMALL = Fleet(pools=(Pool(name="a", gpu="A100-80GB", nodes=1, gpus_per_node=8),), jobs=(CHAT_A, CHAT_B, PROBE))
"""One node of 8 A100s: the two required 14B jobs take 14 GPUs at their fewest, so no placement places both; chat-a
asks 3 questions, chat-b 1 more (the required jobs are asked first), the probe the rest."""
NOT_TOGETHER = ("the required jobs (chat-a, chat-b) do not all fit the fleet together: at their fewest they take 14 "
                "GPUs, more than the fleet's 8; solver.buy_nodes names the nodes to add for them")


def _questions(monkeypatch: pytest.MonkeyPatch, count: int) -> None:
    """Let the jobs' ways of a one-second time limit ask `count` new questions (the wall clock's net far past it)."""
    monkeypatch.setattr(solver.cluster.options, "WAYS_QUESTIONS_PER_SECOND", count)
    monkeypatch.setattr(solver.cluster.options, "WAYS_WALL_SHARE", 100.0)


def _undecided(monkeypatch: pytest.MonkeyPatch, model: str) -> None:
    """Make every planner solve behind the ways of jobs of `model` run out of time: a plan found is not proven best
    (``feasible``), none found is not proven none (``unknown``)."""
    answer_for = solver.cluster.options.answer_for

    def timed_out(*args: Any, **kwargs: Any) -> solver.Answer:
        answer = answer_for(*args, **kwargs)
        if args[1].model != model:
            return answer
        return answer.model_copy(update={"status": "feasible" if answer.plans else "unknown"})

    monkeypatch.setattr(solver.cluster.options, "answer_for", timed_out)


def test_required_jobs_proven_not_to_fit_are_infeasible_though_a_job_not_required_was_cut_short(
        monkeypatch: pytest.MonkeyPatch):
    # w10: the probe is cut short, but it is not required, and a placement may leave it out: no way of its would make
    # room for chat-a and chat-b, which CP-SAT proves do not fit. Before, the status was unknown.
    _questions(monkeypatch, 4)
    result = solver.place(TOO_SMALL, catalog=CATALOG, time_limit_s=1)
    assert (result.status, result.ways_cut_short, result.placements) == ("infeasible", ("probe",), ())
    assert {(entry.job, entry.reason) for entry in result.unplaced} == {
        (job.name, NOT_TOGETHER) for job in TOO_SMALL.jobs}
    assert cluster_text(result, TOO_SMALL, width=200).splitlines()[:2] == [
        "status: infeasible",
        "the time limit cut working out the jobs' ways short: probe got none (the jobs of more priority are asked "
        "first), and as none of them is required, their ways would not make room for the required jobs"]


def test_a_required_job_cut_short_still_leaves_the_status_unknown(monkeypatch: pytest.MonkeyPatch):
    # chat-b, required, gets no ways: a way of its might fit beside chat-a, so nothing is proven.
    _questions(monkeypatch, 3)
    result = solver.place(TOO_SMALL, catalog=CATALOG, time_limit_s=1)
    assert (result.status, result.ways_cut_short) == ("unknown", ("chat-b", "probe"))
    assert {entry.reason for entry in result.unplaced} == {
        "no placement found within the time limit (raise time_limit_s)"}


def test_undecided_ways_of_a_job_not_required_leave_the_proof_standing(monkeypatch: pytest.MonkeyPatch):
    # The same argument for the ways a solve left undecided: the probe's change nothing for the required jobs.
    _undecided(monkeypatch, "Qwen3-0.6B")
    result = solver.place(TOO_SMALL, catalog=CATALOG)
    assert (result.status, result.ways_cut_short, result.undecided_ways > 0) == ("infeasible", (), True)
    assert {entry.reason for entry in result.unplaced} == {NOT_TOGETHER}
    assert cluster_text(result, TOO_SMALL, width=200).splitlines()[1] == (
        f"{result.undecided_ways} questions about the jobs' ways to run ran out of time (time_limit_s), none behind "
        "the required jobs' ways: the required jobs do not fit whatever they would answer")


def test_undecided_ways_of_a_required_job_leave_the_status_unknown(monkeypatch: pytest.MonkeyPatch):
    # The 14B jobs' solves ran out of time: a way of theirs may be left out, so no placement is proven not to exist.
    _undecided(monkeypatch, "Qwen3-14B")
    result = solver.place(TOO_SMALL, catalog=CATALOG)
    assert (result.status, result.undecided_ways > 0) == ("unknown", True)


def test_a_required_job_that_fits_nowhere_is_infeasible_though_a_job_not_required_has_undecided_ways(
        monkeypatch: pytest.MonkeyPatch):
    # With 6 rollout GPUs, no trainer GPU count of chat-a has a layout on an 8-GPU node: it fits nowhere, as its
    # decided solves prove, whatever the probe's undecided ones would say (before: unknown); its own undecided leave
    # that open.
    fleet = TOO_SMALL.model_copy(update={"jobs": (CHAT_A.model_copy(update={"rollout_gpus": 6}), PROBE)})
    for model, status in (("Qwen3-0.6B", "infeasible"), ("Qwen3-14B", "unknown")):
        with monkeypatch.context() as patched:
            _undecided(patched, model)
            result = solver.place(fleet, catalog=CATALOG)
        assert (result.status, result.no_way_to_run, result.undecided_ways > 0) == (status, ("chat-a",), True)
