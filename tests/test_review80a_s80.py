"""Review of s80's first merges (review80a): (a) the questions `solve` asks before a pinned question's own ranking
(without the pins, with the most host memory) take at most half of the answer's time limit (`ASKED_FIRST_SHARE`), so
that the ranking of the question asked always has the other half, where before they could take it all and leave the
user's own question ``unknown``; (b) ``config_query(lora_exclude_modules=)`` without ``lora_targets=`` excludes from
the config's own ``target_modules``, where before it counted all-linear less the exclusions."""

from __future__ import annotations

import json
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

import solver
import solver.clock
import solver.solve

Cli = Callable[..., tuple[int, str, str]]
PINNED = ("--model", "8B", "--gpu", "A100-80GB", "--gpus", "6", "--len", "32k", "--json")
"""Qwen3-8B at 32768 tokens within 6 A100s, pinned below with --sp 4: the question without the pin (Env + SP=2 on 6)
does not answer it, so its own ranking solves."""


class _StandingClock:
    """A clock that stands still but where a test moves it (`now`), as `solver.solve` and `solver.clock` read it; the
    seconds each CP-SAT solve of the planner was given, in order (`given`)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.now = 1000.0
        self.given: list[float] = []
        monkeypatch.setattr(solver.solve, "time", SimpleNamespace(monotonic=lambda: self.now))
        monkeypatch.setattr(solver.clock, "seconds_left", lambda deadline: deadline - self.now)
        solved = solver.solve._solved

        def spied_solved(cp_solver: Any, model: Any) -> Any:
            status = solved(cp_solver, model)
            self.given.append(cp_solver.parameters.max_time_in_seconds)
            return status

        monkeypatch.setattr(solver.solve, "_solved", spied_solved)


def test_the_question_without_the_pins_has_half_the_time_limit(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    # its solve gets 5 s of --time-limit 10; the pinned ranking's and the further questions' the whole 10 (the clock
    # stands still)
    clock = _StandingClock(monkeypatch)
    status, out, _ = cli(*PINNED, "--sp", "4")
    (answer,) = json.loads(out)
    assert (status, answer["status"], clock.given[0]) == (0, "optimal", 5.0)
    assert set(clock.given[1:]) == {10.0}
    assert (answer["plans"][0]["gpus"], answer["plans"][0]["sp"], answer["unpinned"]["sp"]) == (4, 4, 2)


def test_the_questions_asked_first_leave_the_ranking_half(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    # the question without the pins takes its whole half: the host-limit question is not asked first (its half has
    # passed), and the pinned ranking's solves get the 5 s left, where before the first could take all 10 and leave
    # them a millisecond
    clock = _StandingClock(monkeypatch)
    unpinned_first = solver.solve._unpinned_first
    asked: list[Any] = []

    def slow_unpinned_first(*args: Any, **kwargs: Any) -> Any:
        found = unpinned_first(*args, **kwargs)
        clock.now += 5.0
        return found

    answer_for = solver.solve.answer_for

    def spied_answer_for(catalog: Any, query: Any, gpu: str, **kwargs: Any) -> Any:
        asked.append(query.host_ram_gb)
        return answer_for(catalog, query, gpu, **kwargs)

    monkeypatch.setattr(solver.solve, "_unpinned_first", slow_unpinned_first)
    monkeypatch.setattr(solver.solve, "answer_for", spied_answer_for)
    status, out, _ = cli(*PINNED, "--sp", "4", "--host-ram", "96")
    (answer,) = json.loads(out)
    assert (status, answer["status"], clock.given[0], clock.given[1]) == (0, "optimal", 5.0, 5.0)
    assert asked[:2] == [96, 96]  # without the pins, then the ranking's: not the most host memory's in between
    assert (answer["plans"][0]["gpus"], answer["plans"][0]["sp"]) == (4, 4)
