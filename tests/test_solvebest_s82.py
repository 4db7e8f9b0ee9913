"""`Placement.solve_best` within the answer's time limit (s82, solvebest): its questions are asked last, within what is
left of the time limit the placement's other questions share (before s82 each took a time limit of its own, before the
hints and the reasons, so a run's wall time grew with its jobs); one the time cut short (not asked by then, or its
solve undecided) is skipped, the job left without one, and the answer counts them (`solve_best_unasked`, a note) and
names the step (``solve best`` in wall_clock_stopped); ``--buy``'s purchase and its counts stay as they are. The
clock here stands still (conftest's) until `Planner.solve_best` has asked so many new questions, then is past every
deadline (`QuestionClock`)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import solver
import solver.clock
import solver.cluster.options
from solver.cluster.options import Planner

Cli = Callable[..., tuple[int, str, str]]

FLEET = """\
pools:
  - {name: a100, gpu: A100-80GB, nodes: 4, gpus_per_node: 4, host_ram_gb: 1024}
jobs:
  - {name: lora-a, model: Qwen3-8B, max_model_len: 32k, rollout_gpus: 2, lora_rank: 64}
  - {name: lora-b, model: Qwen3-8B, max_model_len: 32k, rollout_gpus: 2, lora_rank: 64}
  - {name: lora-c, model: Qwen3-8B, max_model_len: 32k, rollout_gpus: 2, lora_rank: 16}
  - {name: full-8b, model: Qwen3-8B, max_model_len: 32k, rollout_gpus: 0}
"""
"""Three LoRA jobs on the tables' inferred Env + Offload + SP=2, a node each, where solve's best on their 2 trainer GPUs
is the estimate Env + SP=2 (lora-b's question lora-a's: asked once), and a full fine-tuning job on the tables'
documented SP=4, solve's pick too: four jobs on the tables' plans, three questions, in the placements' order."""

BEST_WORDS = ("{job}: solve's best on its 2 trainer GPUs at 32768 is Env + SP=2 (estimated; 0.50x the relative step "
              "time; {gib} GiB per GPU predicted, {spare} GiB to spare); placed on the tables' Env + Offload + SP=2 "
              "(inferred), as the cluster takes the tables' plans first")
LORA_A, LORA_B = (BEST_WORDS.format(job=job, gib="65.8", spare="7.8") for job in ("lora-a", "lora-b"))
LORA_C = BEST_WORDS.format(job="lora-c", gib="64.8", spare="8.8")
UNASKED_NOTE = ("note: the time limit ran out before solve's best on their trainer GPUs was asked for 2 jobs placed on "
                "the tables' plans (where it is a cheaper estimate, a line under the pool's table names it; raise "
                "--time-limit)")
WALL_CLOCK_LINE = ("the wall clock stopped asking solve's best on the trainer GPUs of the jobs placed on the tables' "
                   "plans before the work it is given (a busy machine, or the jobs' ways took much of the time limit): "
                   "another run may give another answer (raise --time-limit)")


class QuestionClock:
    """A clock that stands still (no deadline passes) until `Planner.solve_best` has asked `questions` new questions
    of the planner (`asked`: how many it has), then is past every deadline, until `again` (for another run)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, questions: int) -> None:
        self.asked = 0
        monkeypatch.setattr(solver.clock, "seconds_left",
                            lambda deadline: -math.inf if self.asked >= questions else math.inf)
        solve_best = Planner.solve_best

        def counting(planner: Planner, *args: Any) -> Any:
            before = planner.asked
            try:
                return solve_best(planner, *args)
            finally:
                self.asked += planner.asked - before

        monkeypatch.setattr(Planner, "solve_best", counting)

    def again(self) -> None:
        """Stand still again, no question asked: for the next run."""
        self.asked = 0


def _fleet(tmp_path: Path) -> Path:
    path = tmp_path / "fleet.yaml"
    path.write_text(FLEET, encoding="utf-8")
    return path


def _text(out: str) -> str:
    """The text, its lines joined by one space each (a note the width wraps read whole)."""
    return " ".join(out.split())


def _best(answer: dict[str, Any]) -> dict[str, Any]:
    """Each placed job's solve_best (its plan's setting, cost and evidence), None where it has none."""
    return {placed["job"]: None if "solve_best" not in placed else {
        key: placed["solve_best"][key] for key in ("env", "offload", "sp", "cost", "evidence")}
        for placed in answer["placements"]}


def _without_best(answer: dict[str, Any]) -> dict[str, Any]:
    """The answer less what solve_best adds: each placement's, the count left unasked and the step it names."""
    return {**{key: value for key, value in answer.items() if key not in ("solve_best_unasked", "wall_clock_stopped")},
            "placements": [{key: value for key, value in placed.items() if key != "solve_best"}
                           for placed in answer["placements"]],
            "wall_clock_stopped": [step for step in answer["wall_clock_stopped"] if step != "solve best"]}


ESTIMATE = {"env": True, "offload": False, "sp": 2, "cost": 0.5555, "evidence": "estimated"}


def test_where_time_suffices_every_job_on_the_tables_plans_names_solves_best(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = _fleet(tmp_path)
    clock = QuestionClock(monkeypatch, questions=4)  # never reached: three questions
    status, out, _ = cli("cluster", str(path), "--json")
    answer = json.loads(out)
    assert status == 0 and clock.asked == 3
    assert _best(answer) == {"lora-a": ESTIMATE, "lora-b": ESTIMATE, "lora-c": ESTIMATE, "full-8b": None}
    assert (answer["status"], answer["solve_best_unasked"], answer["wall_clock_stopped"]) == ("optimal", 0, [])
    clock.again()
    status, out, _ = cli("cluster", str(path))
    assert status == 0 and f"{LORA_A} {LORA_B} {LORA_C} cost:" in _text(out)
    assert "note: the time limit ran out" not in out and "wall clock" not in out
    clock.again()
    first = solver.place(path)
    clock.again()
    assert solver.place(path) == first  # the same on every run


def test_past_the_deadline_after_one_question_the_rest_are_skipped_and_counted(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = _fleet(tmp_path)
    status, out, _ = cli("cluster", str(path), "--json")
    whole = json.loads(out)
    clock = QuestionClock(monkeypatch, questions=1)
    status, out, _ = cli("cluster", str(path), "--json")
    cut = json.loads(out)
    # lora-a's question asked, then the clock past the deadline: lora-b's, lora-a's, answered still; lora-c's and
    # full-8b's (whose answer would name none) skipped, counted, and the step named. The placement is as it was.
    assert status == 0 and clock.asked == 1
    assert _best(cut) == {"lora-a": ESTIMATE, "lora-b": ESTIMATE, "lora-c": None, "full-8b": None}
    assert (cut["status"], cut["solve_best_unasked"], cut["wall_clock_stopped"]) == ("optimal", 2, ["solve best"])
    assert _without_best(cut) == _without_best(whole)
    clock.again()
    status, out, _ = cli("cluster", str(path))
    text = _text(out)
    assert status == 0 and f"{WALL_CLOCK_LINE} pool a100:" in text and text.endswith(UNASKED_NOTE)
    assert f"{LORA_A} {LORA_B} cost:" in text and "lora-c: solve's best" not in text


def test_buy_with_solve_best_cut_short_keeps_its_purchase_and_counts(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = _fleet(tmp_path)
    status, out, _ = cli("cluster", str(path), "--buy", "--json")
    whole = json.loads(out)
    assert status == 0 and (whole["status"], whole["solve_best_unasked"]) == ("optimal", 0)
    assert _best(whole) == {"lora-a": ESTIMATE, "lora-b": ESTIMATE, "lora-c": ESTIMATE, "full-8b": None}
    clock = QuestionClock(monkeypatch, questions=1)
    status, out, _ = cli("cluster", str(path), "--buy", "--json")
    cut = json.loads(out)
    assert status == 0 and _best(cut) == {"lora-a": ESTIMATE, "lora-b": ESTIMATE, "lora-c": None, "full-8b": None}
    assert (cut["status"], cut["undecided_ways"], cut["solve_best_unasked"], cut["wall_clock_stopped"]) == (
        "optimal", 0, 2, ["solve best"])
    assert _without_best(cut) == _without_best(whole)  # the purchase, its status and counts as they were
    clock.again()
    status, out, _ = cli("cluster", str(path), "--buy")
    text = _text(out)
    assert status == 0 and WALL_CLOCK_LINE in text and text.endswith(UNASKED_NOTE)


def test_a_solve_best_question_out_of_time_is_skipped_and_no_way_counts_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # Each solve_best question's solve stops undecided (as one given what is left of the time limit, at its end, may):
    # not solve's answer, so skipped and counted, lora-b's (the same question) too; the purchase neither counts it
    # among the undecided ways nor is unproven by it.
    path = _fleet(tmp_path)
    answer_for, asking = solver.cluster.options.answer_for, [False]

    def undecided(*args: Any, **kwargs: Any) -> Any:
        answer = answer_for(*args, **kwargs)
        return answer.model_copy(update={"status": "feasible"}) if asking[0] else answer

    solve_best = Planner.solve_best

    def flagged(planner: Planner, *args: Any) -> Any:
        asking[0] = True
        try:
            return solve_best(planner, *args)
        finally:
            asking[0] = False

    monkeypatch.setattr(solver.cluster.options, "answer_for", undecided)
    monkeypatch.setattr(Planner, "solve_best", flagged)
    for result in (solver.place(path), solver.buy_nodes(path)):
        assert all(placed.solve_best is None for placed in result.placements)
        assert (result.status, result.undecided_ways, result.solve_best_unasked, result.wall_clock_stopped) == (
            "optimal", 0, 4, ("solve best",))


def test_ctrl_c_while_solve_best_is_asked_skips_the_rest_and_keeps_the_placement(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = _fleet(tmp_path)
    solve_best, calls = Planner.solve_best, []

    def interrupted(planner: Planner, *args: Any) -> Any:
        calls.append(args[1].name)
        if len(calls) == 3:  # lora-c's question: Ctrl-C
            raise KeyboardInterrupt
        return solve_best(planner, *args)

    monkeypatch.setattr(Planner, "solve_best", interrupted)
    status, out, _ = cli("cluster", str(path), "--json")
    answer = json.loads(out)
    assert status == 130 and calls == ["lora-a", "lora-b", "lora-c"]  # full-8b's never asked
    assert _best(answer) == {"lora-a": ESTIMATE, "lora-b": ESTIMATE, "lora-c": None, "full-8b": None}
    # the placement worked out, whole: not "interrupted" (s83: it was), though Ctrl-C gives 130
    assert (answer["interrupted"], answer["solve_best_unasked"], answer["wall_clock_stopped"]) == (False, 2, [])
    calls.clear()
    status, out, _ = cli("cluster", str(path))
    assert status == 130 and _text(out).endswith(
        "note: Ctrl-C came before solve's best on their trainer GPUs was asked for 2 jobs placed on the tables' plans "
        "(where it is a cheaper estimate, a line under the pool's table names it)")
