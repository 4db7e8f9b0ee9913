"""One time limit for a whole answer (s80): ``solve``'s questions asked first (without the pins, with the most host
memory) and its ranking end by the answer's deadline, as its further questions do (smallslips35); a field whose
question was asked first is filled from that answer past the deadline too."""

from __future__ import annotations

import json
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

import solver.clock
import solver.solve
from solver.tables import MAX_HOST_RAM_GB

Cli = Callable[..., tuple[int, str, str]]
PINNED = ("--model", "8B", "--gpu", "A100-80GB", "--gpus", "6", "--len", "32k", "--json")


class _FakeClock:
    """A clock that stands still but where a test moves it (`advance`), as `solver.solve` and `solver.clock` read it;
    the seconds each CP-SAT solve of the planner was given once it has moved (`given`), and the questions asked then
    (`asked`)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.now = 1000.0
        self.moved = False
        self.given: list[float] = []
        self.asked: list[Any] = []
        monkeypatch.setattr(solver.solve, "time", SimpleNamespace(monotonic=lambda: self.now))
        monkeypatch.setattr(solver.clock, "seconds_left", lambda deadline: deadline - self.now)
        solved, answer_for = solver.solve._solved, solver.solve.answer_for

        def spied_solved(cp_solver: Any, model: Any) -> Any:
            status = solved(cp_solver, model)
            if self.moved:
                self.given.append(cp_solver.parameters.max_time_in_seconds)
            return status

        def spied_answer_for(catalog: Any, query: Any, gpu: str, **kwargs: Any) -> Any:
            if self.moved:
                self.asked.append(query)
            return answer_for(catalog, query, gpu, **kwargs)

        monkeypatch.setattr(solver.solve, "_solved", spied_solved)
        monkeypatch.setattr(solver.solve, "answer_for", spied_answer_for)

    def advance_after(self, monkeypatch: pytest.MonkeyPatch, name: str, seconds: float) -> None:
        """Move the clock on by `seconds` once `solver.solve`'s function `name` returns."""
        function = getattr(solver.solve, name)

        def moved(*args: Any, **kwargs: Any) -> Any:
            result = function(*args, **kwargs)
            self.now += seconds
            self.moved = True
            return result

        monkeypatch.setattr(solver.solve, name, moved)


# (1) Before: the questions asked first (without the pins, with the most host memory) had a whole --time-limit each,
# and the ranking a whole one of its own after them: a pinned plain solve could run three times --time-limit.

def test_the_ranking_ends_by_the_deadline_the_question_without_the_pins_started(
        cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    # --sp 4: the question without the pins (Env + SP=2 on 6) does not answer the pinned one, whose ranking solves;
    # 9.5 s of the 10 pass in the first: the ranking's solves get the 0.5 s left (10 s before; the clock stands still)
    clock = _FakeClock(monkeypatch)
    clock.advance_after(monkeypatch, "_unpinned_first", 9.5)
    status, out, _ = cli(*PINNED, "--sp", "4")
    assert status == 0 and clock.given and set(clock.given) == {0.5}
    assert [query.sp for query in clock.asked] == [4]  # the ranking's (its plan, documented, leaves 2 GPUs free)


def test_the_host_limit_is_not_asked_first_once_the_deadline_has_passed(
        cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    # the whole 10 s pass in the question without the pins: the question with the most host memory is not asked
    # (before, with a whole time limit of its own), nor any further question; the ranking's solves get CP-SAT's
    # least, a millisecond
    clock = _FakeClock(monkeypatch)
    clock.advance_after(monkeypatch, "_unpinned_first", 10.0)
    cli(*PINNED, "--sp", "4", "--host-ram", "96")
    assert [query.host_ram_gb for query in clock.asked] == [96]  # the ranking alone
    assert clock.given and set(clock.given) == {0.001}
    assert MAX_HOST_RAM_GB not in [query.host_ram_gb for query in clock.asked]


# (2) Before: unpinned (and more_host_ram) was skipped past the deadline, though the question asked first had
# answered it already.

def test_the_fields_asked_first_are_kept_past_the_deadline(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    # --sp 2 --host-ram 96: both questions asked first have the pinned answer's best plan, so no solve follows them;
    # the whole 10 s pass in them: the further questions (rollout kept's) are not asked, unpinned and more_host_ram
    # are the answers in hand
    clock = _FakeClock(monkeypatch)
    clock.advance_after(monkeypatch, "_asked_first", 10.0)
    status, out, _ = cli(*PINNED, "--sp", "2", "--host-ram", "96")
    (answer,) = json.loads(out)
    assert (status, answer["status"], clock.given, [query.sp for query in clock.asked]) == (0, "optimal", [], [2])
    fields = (answer["plans"][0], answer["unpinned"], answer["more_host_ram"])  # Env + SP=2 on 6 GPUs: no cost
    assert [(plan["gpus"], plan["env"], plan["sp"]) for plan in fields] == [(6, True, 2)] * 3
    assert "rollout_kept" not in answer
