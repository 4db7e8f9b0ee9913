"""One solve for a pinned answer and what its pins cost (s67, latency): where the pins leave the prepared data as they
are and one plan is asked for, the planner asks the question without the pins first; where its proven best plan has
every pin, that is the pinned answer too (no second solve), where it has no plan neither has the pinned question (no
solve of its own), and a reason that asks it again takes its answer. Every answer is the one the two solves give, and
both plans are the brute-force reference's best."""

from __future__ import annotations

from typing import Any

import pytest
from command_words import make_query
from reference import enumerate_plans

import solver.solve
from solver.solve import _unpinned_first, _unpinned_question, answer_for, plan
from solver.tables import load_catalog

CATALOG = load_catalog()

PINNED = [  # (gpu, model, budget, length (None: the longest), pins)
    ("A100-80GB", "Qwen3-8B", 6, 32768, {"sp": 2}),  # Env + SP=2 on 6: the best plan has it
    ("A100-80GB", "Qwen3-8B", 6, 32768, {"sp": 4}),  # costs 1.76x: SP=4 on 4
    ("A100-80GB", "Qwen3-8B", 6, 32768, {"sp": 2, "env": True}),
    ("A100-80GB", "Qwen3-8B", 6, 32768, {"exact": True}),
    ("A100-80GB", "Qwen3-8B", 4, 32768, {"exact": True, "offload": False}),
    ("A100-80GB", "Qwen3-8B", 6, None, {"sp": 2}),  # the longest: costs tokens
    ("A100-80GB", "Qwen3-8B", 6, None, {"offload": True}),
    ("A100-80GB", "Qwen3-4B", 6, None, {"exact": True}),
    ("A100-80GB", "Qwen3-0.6B", 2, 20000, {"exact": True, "sp": 2}),
    ("A100-80GB", "Qwen3-1.7B", 4, 16384, {"offload": False}),
    ("A100-80GB", "Qwen3-14B", 6, 40960, {"offload": False}),
    ("H20-96GB", "Qwen3-14B", 4, 32768, {"sp": 4, "offload": True}),
    ("H20-96GB", "Qwen3-14B", 4, 65536, {"exact": True}),
    ("H20-96GB", "Qwen3-8B", 2, 16384, {"env": True, "exact": True}),
    ("A100-80GB", "Qwen3-14B", 1, 8192, {"offload": False}),  # no plan; without the pin one
    ("H20-96GB", "Qwen3-14B", 4, 131072, {"sp": 4}),  # no plan, nor without the pin
    ("H20-96GB", "Qwen3-14B", 4, 131072, {"sp": 4, "exact": True}),
    ("H20-96GB", "Qwen3-14B", 4, 131072, {"exact": True}),
    ("A100-80GB", "Qwen3-14B", 6, 65536, {"exact": True}),  # '-' on 6 GPUs; fewer train it
]


def _query(gpu: str, model: str, budget: int, length: int | None, pins: dict[str, Any]) -> Any:
    objective = "max_len" if length is None else "cheapest"
    return make_query(CATALOG, gpu=gpu, model=model, objective=objective, budget_gpus=budget, max_model_len=length,
                      **pins)


def _reference_best(query: Any, **changes: Any) -> dict[str, Any] | None:
    """The brute-force reference's best plan of `query` changed as `changes` say, None where it has none."""
    asked = {"gpu": query.gpus[0], "model": query.model, "budget_gpus": query.budget_gpus, "estimates": True,
             "max_model_len": query.max_model_len, "exact": query.exact, "sp": query.sp, "env": query.env,
             "offload": query.offload, **changes}
    plans = enumerate_plans(CATALOG, objective=query.objective, **asked)
    return plans[0] if plans else None


def _fields(answer: Any) -> dict[str, Any]:
    """All of an answer but the seconds it took."""
    return answer.model_dump(exclude={"wall_time_s"})


@pytest.mark.parametrize(("gpu", "model", "budget", "length", "pins"), PINNED)
def test_one_solve_gives_the_answer_of_two_and_the_references_plans(gpu: str, model: str, budget: int,
                                                                    length: int | None, pins: dict[str, Any]) -> None:
    query = _query(gpu, model, budget, length, pins)
    asked = _unpinned_first(CATALOG, query, gpu)
    assert asked is not None and asked.query == _unpinned_question(query)
    assert _fields(answer_for(CATALOG, query, gpu, asked=(asked,))) == _fields(answer_for(CATALOG, query, gpu))
    (answer,) = plan(query, CATALOG)
    pinned_best = _reference_best(query)
    assert [p.model_dump(mode="json") for p in answer.plans] == ([pinned_best] if pinned_best else [])
    free = _reference_best(query, sp=None, env=None, offload=None, exact=False)
    if pinned_best is None:
        assert answer.unpinned is None
    else:
        assert answer.unpinned is not None and answer.unpinned.model_dump(mode="json") == free


def test_where_the_best_plan_has_the_pins_one_solve_answers_both(monkeypatch: pytest.MonkeyPatch) -> None:
    solved: list[Any] = []  # the questions solved
    ranked_plans = solver.solve._ranked_plans

    def counted(catalog: Any, data: Any, query: Any, deadline: float, *args: Any) -> Any:
        solved.append(query)
        return ranked_plans(catalog, data, query, deadline, *args)

    monkeypatch.setattr(solver.solve, "_ranked_plans", counted)
    for sp, pinned_solves in ((2, 0), (4, 1)):  # SP=2 is the best plan's (Env + SP=2 on 6); SP=4 is not
        solved.clear()
        query = _query("A100-80GB", "Qwen3-8B", 6, 32768, {"sp": sp})
        (answer,) = plan(query, CATALOG)
        assert (solved.count(_unpinned_question(query)), solved.count(query)) == (1, pinned_solves)
        assert answer.best is not None and answer.best.sp == sp and answer.unpinned is not None
        assert answer.unpinned.sp == 2
    # Nothing trains 131072 tokens within 4 H20s, with SP=4 or without: the pinned question is not solved. On exactly
    # 6 A100s Qwen3-14B runs out of memory at 65536, on fewer it trains: the reason's fewer GPUs are the first answer.
    for case, pinned_solves in ((("H20-96GB", "Qwen3-14B", 4, 131072, {"sp": 4}), 0),
                                (("A100-80GB", "Qwen3-14B", 6, 65536, {"exact": True}), 1)):
        solved.clear()
        query = _query(*case)
        (answer,) = plan(query, CATALOG)
        assert answer.status == "infeasible"
        assert (solved.count(_unpinned_question(query)), solved.count(query)) == (1, pinned_solves)


@pytest.mark.parametrize(("pins", "first"), [({"env": False}, False), ({"sp": 2}, True)])
def test_only_pins_that_keep_the_prepared_data_ask_the_unpinned_question_first(
        pins: dict[str, Any], first: bool) -> None:
    # --no-env prepares estimates without Env: the pinned question is solved first; --top 3 asks it first too (s68)
    query = _query("A100-80GB", "Qwen3-8B", 6, 32768, pins)
    for top in (1, 3):
        assert (_unpinned_first(CATALOG, query.model_copy(update={"top": top}), "A100-80GB") is not None) is first
