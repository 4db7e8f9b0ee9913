"""A wider question first (s68, pins2): with pins and any --top, and with a host limit (--host-ram), the planner asks
the questions behind the answer's `unpinned` and `more_host_ram` (the same question without the pins; on nodes with
the most host memory) before the query's own. Their plans are the query's and more, of the same data and ranked the
same way, so where the wider question's proven best plan is within the query (its pins, exact count and host limit)
it is the query's best too, and the query's own ranking goes on from it, one solve fewer; where the wider question
has no plan, neither has the query. Every answer is the one the query's own solves give, its plans the brute-force
reference's; no answer with a plan takes more solves than before, and where a limit costs nothing, one fewer."""

from __future__ import annotations

from typing import Any

import pytest
from command_words import make_query
from reference import enumerate_plans, ranked_alternatives

import solver.solve
from solver.solve import _asked_first, answer_for, plan
from solver.tables import MAX_HOST_RAM_GB, load_catalog

CATALOG = load_catalog()

CASES = [  # (gpu, model, budget, length (None: the longest), the rest of the query)
    ("A100-80GB", "Qwen3-8B", 6, 32768, {"sp": 2, "top": 3}),  # the free best has SP=2
    ("A100-80GB", "Qwen3-8B", 6, 32768, {"sp": 4, "top": 3}),  # the free best has not SP=4
    ("A100-80GB", "Qwen3-8B", 6, None, {"env": True, "top": 3}),  # the longest has Env
    ("A100-80GB", "Qwen3-8B", 6, None, {"offload": True, "top": 3}),  # the longest has Offload
    ("A100-80GB", "Qwen3-8B", 8, 32768, {"env": True, "top": 4, "objective": "min_gpus"}),
    ("A100-80GB", "Qwen3-8B", 8, 32768, {"exact": True, "top": 3}),
    ("H20-96GB", "Qwen3-14B", 4, 65536, {"exact": True, "top": 3}),
    ("A100-80GB", "Qwen3-14B", 1, 8192, {"offload": False, "top": 2}),  # no plan; without the pin one
    # (host figures with no release named: every rank loads the model, 284.8 GiB on 8 GPUs, 224.6 on 6, 266.0 on 6
    # with Offload)
    ("A100-80GB", "Qwen3-8B", 8, 32768, {"host_ram_gb": 300}),  # the best plan fits: the limit costs nothing
    ("A100-80GB", "Qwen3-8B", 6, None, {"host_ram_gb": 96}),  # Offload's 183.0 GiB does not fit: it costs
    ("A100-80GB", "Qwen3-8B", 6, None, {"host_ram_gb": 512, "top": 3}),  # all three fit
    ("A100-80GB", "Qwen3-8B", 6, None, {"host_ram_gb": 200, "top": 3}),  # the best does not fit
    ("A100-80GB", "Qwen3-8B", 6, None, {"host_ram_gb": 266.0, "top": 3}),  # Offload needs 266.0 GiB: it just fits
    ("A100-80GB", "Qwen3-8B", 8, 32768, {"host_ram_gb": MAX_HOST_RAM_GB}),  # the wider question is the query's
    ("A100-80GB", "Qwen3-8B", 6, 32768, {"sp": 2, "host_ram_gb": 230}),  # both cost nothing
    ("A100-80GB", "Qwen3-8B", 6, None, {"sp": 2, "host_ram_gb": 96}),  # both cost tokens
    ("A100-80GB", "Qwen3-8B", 6, 32768, {"env": False, "host_ram_gb": 96}),  # no unpinned question first
    ("H100-80GB", "Qwen3-30B-A3B", 8, None, {"host_ram_gb": 512}),  # persona17's: 25600 tokens, 210944 without
    ("A100-80GB", "Qwen3-14B", 8, 65536, {"host_ram_gb": 16}),  # no plan; without the limit one
    ("A100-80GB", "Qwen3-14B", 1, 65536, {"host_ram_gb": 160}),  # no plan, nor without the limit
    ("A100-80GB", "Qwen3-14B", 6, 65536, {"exact": True, "sp": 2, "host_ram_gb": 160}),  # no plan
    # no plan on exactly 6; the host question (exactly 6 too) has none either, and fewer GPUs train it: not settled by
    # the host question, which is no wider than the reason's question on fewer GPUs
    ("A100-80GB", "Qwen3-14B", 6, 65536, {"exact": True, "env": False, "host_ram_gb": 1024}),
]


def _query(gpu: str, model: str, budget: int, length: int | None, rest: dict[str, Any]) -> Any:
    objective = rest.pop("objective", "max_len" if length is None else "cheapest")
    return make_query(CATALOG, gpu=gpu, model=model, objective=objective, budget_gpus=budget, max_model_len=length,
                      **rest)


def _reference(query: Any, top: int, **changes: Any) -> list[dict[str, Any]]:
    """The brute-force reference's `top` plans of `query` changed as `changes` say (`--top`'s ranking)."""
    asked = {"gpu": query.gpus[0], "model": query.model, "budget_gpus": query.budget_gpus, "estimates": True,
             "max_model_len": query.max_model_len, "exact": query.exact, "sp": query.sp, "env": query.env,
             "offload": query.offload, "host_ram_gb": query.host_ram_gb, **changes}
    every = enumerate_plans(CATALOG, objective=query.objective, **asked)
    return ranked_alternatives(every, CATALOG.model(query.model), CATALOG.gpu(query.gpus[0]))[:top]


def _fields(answer: Any) -> dict[str, Any]:
    """All of an answer but the seconds it took."""
    return answer.model_dump(exclude={"wall_time_s"})


def _solves(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A one-item counter of the CP-SAT solves from now on."""
    count = [0]
    solved = solver.solve._solved

    def counted(*args: Any) -> Any:
        count[0] += 1
        return solved(*args)

    monkeypatch.setattr(solver.solve, "_solved", counted)
    return count


@pytest.mark.parametrize("case", CASES, ids=lambda case: f"{case[1]}-{case[2]}-{case[3]}-{case[4]}")
def test_the_wider_questions_answers_are_the_querys_own_and_the_references(case: tuple[Any, ...]) -> None:
    query = _query(*case[:4], dict(case[4]))
    gpu = query.gpus[0]
    asked = _asked_first(CATALOG, query, gpu)
    assert _fields(answer_for(CATALOG, query, gpu, asked=asked.questions)) == _fields(answer_for(CATALOG, query, gpu))
    (answer,) = plan(query, CATALOG)
    expected = _reference(query, query.top)
    assert [p.model_dump(mode="json") for p in answer.plans] == expected
    unpinned = _reference(query, 1, sp=None, env=None, offload=None, exact=False) if query.given_pins else []
    lifted = _reference(query, 1, host_ram_gb=MAX_HOST_RAM_GB) if query.host_ram_gb is not None else []
    for field, best in ((answer.unpinned, unpinned), (answer.more_host_ram, lifted)):  # named only beside a plan
        assert ([] if field is None else [field.model_dump(mode="json")]) == (best if expected else [])


SOLVES = [  # (case, solves of the wider questions, the query's own solves after them, and without them)
    (CASES[0], 1, 2, 3),  # SP=2's best is the free best: the pinned ranking goes on from it
    (CASES[1], 1, 2, 2),  # SP=4's best is not the free one: solved as before (a plan, then no other)
    (CASES[2], 1, 2, 3),  # Env's: the free best
    (CASES[3], 1, 2, 3),  # Offload's: the free best
    (CASES[4], 1, 3, 4),  # the fewest GPUs (cost ranks apart), Env's: the free best
    (CASES[5], 1, 1, 2),  # exactly 8 GPUs: the free best, and no other (one solve finds none)
    (CASES[8], 1, 0, 1),  # the host limit costs nothing: one solve answers both
    (CASES[9], 1, 1, 1),  # it costs: both solved
    (CASES[10], 1, 2, 3),  # the best fits: the limited ranking goes on from it
    (CASES[11], 1, 3, 3),  # the best does not fit: solved as before
    (CASES[12], 1, 2, 3),  # the best just fits
    (CASES[13], 1, 0, 1),  # the host question is the query's
    (CASES[14], 2, 0, 1),  # both cost nothing: two solves, not three
]


@pytest.mark.parametrize(("case", "wider", "own", "alone"), SOLVES)
def test_a_wider_question_first_saves_the_solves_its_plans_settle(monkeypatch: pytest.MonkeyPatch, case: Any,
                                                                  wider: int, own: int, alone: int) -> None:
    query = _query(*case[:4], dict(case[4]))
    gpu = query.gpus[0]
    count = _solves(monkeypatch)
    asked = _asked_first(CATALOG, query, gpu)
    assert count[0] == wider
    answer_for(CATALOG, query, gpu, explained=False, asked=asked.questions)
    assert count[0] - wider == own
    count[0] = 0
    answer_for(CATALOG, query, gpu, explained=False)
    assert count[0] == alone  # before: the query's own solves, and the wider questions' after them


@pytest.mark.parametrize(("case", "own", "alone"), [
    (CASES[18], 5, 6),  # the reason's plan without the limit is the host question's
    (CASES[19], 5, 7),  # the host question has no plan: nor the query, nor the question without the limit
    # the question without the pins has none: nor the query, nor the reason's without its pins (8 and 11 since every
    # rank's load is counted with no release named: the reason is then the host limit's, 465.9 GiB on 6 with Offload)
    (CASES[20], 8, 11),
    # the host question on exactly 6 has none: nor the query, nor the one without the limit (one solve more since
    # s89: whether the pins alone rule the plans out, so the reason names --host-ram only where it matters)
    (CASES[21], 5, 7),
])
def test_a_reason_asks_no_question_that_one_asked_first_settles(
        monkeypatch: pytest.MonkeyPatch, case: Any, own: int, alone: int) -> None:
    query = _query(*case[:4], dict(case[4]))
    gpu = query.gpus[0]
    asked = _asked_first(CATALOG, query, gpu)
    count = _solves(monkeypatch)
    assert answer_for(CATALOG, query, gpu, asked=asked.questions).status == "infeasible"
    assert (len(asked.questions), count[0]) == (1, own)
    count[0] = 0
    answer_for(CATALOG, query, gpu)
    assert count[0] == alone  # before: these, and no question asked after an answer without a plan


def test_no_env_asks_only_the_host_question_first() -> None:
    # --no-env's estimates are of settings without Env, which the question without the pin has not: its plans are not
    # the pinned question's and more, so it is not asked first; the host question keeps the pin and is
    query = _query("A100-80GB", "Qwen3-8B", 6, 32768, {"env": False, "host_ram_gb": 96})
    asked = _asked_first(CATALOG, query, "A100-80GB")
    assert asked.unpinned is None and asked.more_host_ram is not None
    assert asked.more_host_ram.query.host_ram_gb == MAX_HOST_RAM_GB and asked.more_host_ram.query.env is False


def test_no_host_question_where_the_question_without_the_pins_has_no_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    # Nothing trains 131072 tokens within 4 H20s, with SP=4 or without: the pinned question has no plan either, and
    # an answer without a plan names no plan with more host memory, so that question is not asked first
    query = _query("H20-96GB", "Qwen3-14B", 4, 131072, {"sp": 4, "host_ram_gb": 160})
    asked = _asked_first(CATALOG, query, "H20-96GB")
    assert asked.unpinned is not None and asked.unpinned.answer.status == "infeasible"
    assert asked.more_host_ram is None
    count = _solves(monkeypatch)
    assert answer_for(CATALOG, query, "H20-96GB", explained=False, asked=asked.questions).status == "infeasible"
    assert count[0] == 0


def test_a_reason_takes_the_host_questions_answer_for_the_plan_without_the_limit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # 65536 tokens of Qwen3-14B within 8 A100s needs more than 16 GiB of host memory per node: the reason names the
    # plan without the limit, the host question's best, not solved again
    query = _query("A100-80GB", "Qwen3-14B", 8, 65536, {"host_ram_gb": 16})
    asked = _asked_first(CATALOG, query, "A100-80GB")
    unlimited: list[Any] = []
    answer_for_ = solver.solve.answer_for

    def recorded(catalog: Any, question: Any, gpu: str, *args: Any, **kwargs: Any) -> Any:
        if question.host_ram_gb is None:
            unlimited.append(question)
        return answer_for_(catalog, question, gpu, *args, **kwargs)

    monkeypatch.setattr(solver.solve, "answer_for", recorded)
    answer = answer_for_(CATALOG, query, "A100-80GB", asked=asked.questions)
    assert answer.status == "infeasible" and "without --host-ram" in (answer.reason or "") and unlimited == []
    assert _fields(answer) == _fields(answer_for_(CATALOG, query, "A100-80GB")) and len(unlimited) == 1


def test_a_reason_solves_the_plan_without_the_limit_where_the_host_question_may_leave_one_out(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # with the most host memory a node may have made 30 GiB, the host question leaves out the plan the question
    # without a limit has (Env + Offload + SP=4 on 4 A100s, which needs 381.1 GiB with every rank loading the model,
    # no release named): the reason does not take its answer
    query = _query("A100-80GB", "Qwen3-14B", 8, 65536, {"host_ram_gb": 16})
    expected = answer_for(CATALOG, query, "A100-80GB")
    assert ("Env + Offload + SP=4 on 4 GPUs trains it (65536 tokens), and with Offload it needs 381.1 GiB"
            in (expected.reason or ""))
    monkeypatch.setattr(solver.solve, "MAX_HOST_RAM_GB", 30)
    asked = _asked_first(CATALOG, query, "A100-80GB")
    assert asked.more_host_ram is not None and asked.more_host_ram.query.host_ram_gb == 30
    assert _fields(answer_for(CATALOG, query, "A100-80GB", asked=asked.questions)) == _fields(expected)
