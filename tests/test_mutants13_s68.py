"""Mutation testing of s68's merges (mutants13): the behaviours of the wider questions asked first (pins2) that no test
held. The host question settles a pinned query's first solve where the pins cost and the limit does not; an unproven
wider answer settles nothing; a ranked answer's objective value and bound are its best plan's; and a reason takes the
host question's plan for the one without a limit only where every plan's need fits the most host memory."""

from __future__ import annotations

from typing import Any

import pytest
from command_words import make_query

import solver.solve
from solver.solve import _asked_first, answer_for
from solver.tables import load_catalog

pytestmark = pytest.mark.usefixtures("no_wall_clock")  # exact answers: only deterministic limits end the steps

CATALOG = load_catalog()


def _query(model: str, budget: int, length: int, **rest: Any) -> Any:
    return make_query(CATALOG, gpu="A100-80GB", model=model, objective="cheapest", budget_gpus=budget,
                      max_model_len=length, **rest)


def _fields(answer: Any) -> dict[str, Any]:
    return answer.model_dump(exclude={"wall_time_s"})


def _solves(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    count = [0]
    solved = solver.solve._solved

    def counted(*args: Any) -> Any:
        count[0] += 1
        return solved(*args)

    monkeypatch.setattr(solver.solve, "_solved", counted)
    return count


def test_the_host_question_settles_a_pinned_query_whose_pins_cost(monkeypatch: pytest.MonkeyPatch) -> None:
    # SP=4 costs on 6 A100s (the free best is Env + SP=2): the question without the pin settles nothing, the host
    # question (SP=4 kept, the most host memory) does: the query's ranking goes on from its best, one solve (none left)
    query = _query("Qwen3-8B", 6, 32768, sp=4, top=3, host_ram_gb=64)
    asked = _asked_first(CATALOG, query, "A100-80GB")
    assert asked.unpinned is not None and asked.unpinned.answer.plans[0].sp == 2
    count = _solves(monkeypatch)
    answer = answer_for(CATALOG, query, "A100-80GB", explained=False, asked=asked.questions)
    assert (count[0], [(p.gpus, p.setting.label) for p in answer.plans]) == (1, [(4, "SP=4")])
    count[0] = 0
    assert _fields(answer_for(CATALOG, query, "A100-80GB", explained=False)) == _fields(answer) and count[0] == 2


def test_an_unproven_wider_answer_settles_nothing() -> None:
    # a wider question the time limit stopped ("feasible") may hold a plan that is not the best: the query is solved
    # as if it had not been asked (here its plan is the query's second best, Env + Offload + SP=2 on 4 GPUs)
    query = _query("Qwen3-8B", 6, 32768, sp=2, top=3)
    own = answer_for(CATALOG, query, "A100-80GB")
    asked = _asked_first(CATALOG, query, "A100-80GB")
    assert asked.unpinned is not None
    stopped = asked.unpinned._replace(answer=asked.unpinned.answer.model_copy(
        update={"status": "feasible", "plans": (own.plans[1],)}))
    answer = answer_for(CATALOG, query, "A100-80GB", asked=(stopped,))
    assert [(p.gpus, p.setting.label) for p in answer.plans] == [
        (6, "Env + SP=2"), (4, "Env + Offload + SP=2"), (2, "Env + Offload + SP=2")]
    assert _fields(answer) == _fields(own)


def test_a_ranked_answers_objective_value_and_bound_are_its_best_plans() -> None:
    query = _query("Qwen3-8B", 6, 32768, top=3)
    ranked, best = answer_for(CATALOG, query, "A100-80GB"), answer_for(CATALOG, query.model_copy(update={"top": 1}),
                                                                         "A100-80GB")
    assert (ranked.status, len(ranked.plans), ranked.objective_value, ranked.bound) == ("optimal", 3, 3, 3.0)
    assert (best.objective_value, best.bound) == (3, 3.0)


def test_a_reason_solves_the_plan_without_the_limit_where_a_larger_count_needs_more_than_the_most(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Qwen3-4B ties its embeddings: each rank loads it, so 8 GPUs on a node need 119.9 GiB, 4 need 60.0 and one 15.0
    # (82.8 with Offload). With the most host memory made 100 GiB, the host question leaves out the 8-GPU plan that the
    # question without a limit has: the reason does not take its answer
    query = _query("Qwen3-4B", 8, 65536, host_ram_gb=10)
    expected = answer_for(CATALOG, query, "A100-80GB")
    assert ("; without --host-ram, SP=4 on 8 GPUs trains it (65536 tokens), and it needs 119.9 GiB of host memory per "
            "node while the model loads") in (expected.reason or "")
    monkeypatch.setattr(solver.solve, "MAX_HOST_RAM_GB", 100)
    asked = _asked_first(CATALOG, query, "A100-80GB")
    assert asked.more_host_ram is not None and asked.more_host_ram.answer.plans[0].gpus == 4
    assert _fields(answer_for(CATALOG, query, "A100-80GB", asked=asked.questions)) == _fields(expected)
