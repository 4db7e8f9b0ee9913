"""The cost model's PPO critic term, s76 (criticcost): with a critic (``--critic``, a config's own) a plan's cost is
``(1/n) (1 + w_off r o + c) (1 + w_sp p (s - 1)) (1 + w_env e)``, ``c = w_critic (1 + w_off r h)`` (h: its states in
host memory), in the ranks CP-SAT minimises; without one, every cost as before, exactly. Plans that agree on Offload
keep their order; Offload against a high SP degree can turn (Qwen3-14B at 32768 tokens on 8 H100s with a resident
critic: Env + Offload + SP=2 before Env + SP=8). tests/reference.py's checker counts the critic too, and the solver's
ranked plans with a critic are its brute force's."""

from __future__ import annotations

import itertools
import json
import random
from fractions import Fraction
from pathlib import Path

import pytest
import reference
from command_words import make_query
from reference import check_plan, enumerate_plans, ranked_alternatives

import solver
from solver.model import cost_ranks, critic_work, exact_cost
from solver.solve import plan as solve_plan
from solver.tables import CRITIC_STATES, CriticStates, Weights, load_catalog, load_weights

CATALOG = load_catalog()
ROOT = Path(__file__).resolve().parent.parent
WEIGHTS = load_weights()
DENSE = Fraction(1)
MOE = CATALOG.model("Qwen3-30B-A3B").held_per_active
CRITICS: tuple[CriticStates | None, ...] = (None, *CRITIC_STATES)


def _best_cost(critic: CriticStates | None, **pins: object) -> float:
    """The cost of Qwen3-8B's plan at 4096 tokens on exactly 4 A100s with Env and SP=1 (and `pins`)."""
    (answer,) = solver.plan("Qwen3-8B", gpu="A100-80GB", budget_gpus=4, exact=True, max_model_len=4096, sp=1,
                            env=True, critic=critic, **pins)
    assert answer.best is not None
    return answer.best.cost


def test_a_plan_s_cost_counts_its_critic_exactly():
    # (1/4) x 1.01 x (1 + o + c): c = 1 resident, 1 x (1 + 1) offloaded or reloaded.
    assert {critic: _best_cost(critic, offload=False) for critic in CRITICS} == {
        None: 0.2525, "resident": 0.505, "offloaded": 0.7575, "reloaded": 0.7575}
    assert {critic: _best_cost(critic, offload=True) for critic in CRITICS} == {
        None: 0.505, "resident": 0.7575, "offloaded": 1.01, "reloaded": 1.01}


def test_the_critic_s_work_scales_its_offload_by_r_for_a_mixture_of_experts():
    assert critic_work(WEIGHTS, MOE, None) == 0
    assert critic_work(WEIGHTS, MOE, "resident") == 1
    assert critic_work(WEIGHTS, MOE, "offloaded") == critic_work(WEIGHTS, MOE, "reloaded") == 1 + MOE  # 10.18
    assert critic_work(Weights(offload_moe_scaling=False), MOE, "offloaded") == 2
    assert critic_work(Weights(critic=0.5, offload=2), DENSE, "reloaded") == Fraction(3, 2)
    # Qwen3-30B-A3B, Env + Offload + SP=4 on 4 GPUs with an offloaded critic: (1/4)(1 + r + 1 + r)(1.3)(1.01).
    assert exact_cost(WEIGHTS, MOE, "nvlink", (4, 1, 1, 4), "offloaded") == (
        Fraction(1, 4) * (2 + 2 * MOE) * Fraction(13, 10) * Fraction(101, 100))


@pytest.mark.parametrize("weights", [WEIGHTS, Weights(critic=0.25, offload=2, sp=0.3, sp_pcie_factor=2),
                                     Weights(offload_moe_scaling=False, critic=3)])
def test_the_solver_s_cost_is_the_reference_checker_s(weights: Weights):
    for model, gpu, critic in itertools.product(("Qwen3-8B", "Qwen3-30B-A3B"), ("A100-80GB", "L40S-48GB"), CRITICS):
        shape, gpu_type = CATALOG.model(model), CATALOG.gpu(gpu)
        for n, env, offload, sp in itertools.product((1, 3, 8), (0, 1), (0, 1), (1, 2, 8)):
            assert exact_cost(weights, shape.held_per_active, gpu_type.interconnect, (n, env, offload, sp), critic) == (
                reference.exact_cost(weights, shape, gpu_type, n, bool(env), bool(offload), sp, critic)), (
                model, gpu, critic, n, env, offload, sp)


def test_without_a_critic_every_cost_and_rank_is_as_before():
    # The pre-s76 formula, and a critic of weight 0 ranks as none does.
    for n, env, offload, sp in itertools.product((1, 2, 6, 8), (0, 1), (0, 1), (1, 2, 4, 8)):
        before = Fraction(1, n) * (1 + MOE * offload) * (1 + Fraction(1, 10) * (sp - 1)) * (1 + Fraction(1, 100) * env)
        assert exact_cost(WEIGHTS, MOE, "nvlink", (n, env, offload, sp)) == before
        assert exact_cost(WEIGHTS, MOE, "nvlink", (n, env, offload, sp), None) == before
    counts = (1, 2, 4, 8)
    for critic in CRITIC_STATES:
        assert cost_ranks(counts, "cheapest", Weights(critic=0), DENSE, "nvlink", critic) == cost_ranks(
            counts, "cheapest", WEIGHTS, DENSE, "nvlink")


@pytest.mark.parametrize(("objective", "interconnect", "critic"),
                         [("cheapest", "nvlink", "resident"), ("min_gpus", "pcie", "offloaded"),
                          ("cheapest", "pcie", "reloaded")])
def test_plans_that_agree_on_offload_keep_their_order_and_offload_ranks_earlier(objective, interconnect, critic):
    counts = (1, 2, 4, 8)
    without = cost_ranks(counts, objective, WEIGHTS, DENSE, interconnect)
    with_critic = cost_ranks(counts, objective, WEIGHTS, DENSE, interconnect, critic)
    for offload in (0, 1):
        assert [entry.combination for entry in without if entry.offload == offload] == [
            entry.combination for entry in with_critic if entry.offload == offload]
    # Offload's plans move up: on 8 GPUs, Env + Offload + SP=2 now before Env + SP=8 (NVLink), as it was after it.
    def place(ranks, combination):
        return next(entry.rank for entry in ranks if entry.combination == combination)
    if interconnect == "nvlink":
        assert place(without, (8, 1, 0, 8)) < place(without, (8, 1, 1, 2))
        assert place(with_critic, (8, 1, 1, 2)) < place(with_critic, (8, 1, 0, 8))


def test_a_resident_critic_turns_qwen3_14b_s_cheapest_plan_on_8_h100s_to_offload():
    def best(critic: CriticStates, weights: Weights | None = None) -> list[tuple[str, int, float]]:
        (answer,) = solver.plan("Qwen3-14B", gpu="H100-80GB", budget_gpus=8, max_model_len=32768, critic=critic,
                                weights=weights, top=3)
        return [(plan.setting.label, plan.gpus, plan.cost) for plan in answer.plans]

    assert best("resident") == [("Env + Offload + SP=2", 8, 0.416625), ("Env + Offload + SP=4", 4, 0.98475)]
    # Without the term (a critic of weight 0) the same memory figures rank Env + SP=8 first, as before s76.
    assert best("resident", Weights(critic=0)) == [("Env + SP=8", 8, 0.214625),
                                                   ("Env + Offload + SP=4", 4, 0.6565)]
    # Env + SP=8 with the critic: (1/8) x 2 x 1.7 x 1.01, above Env + Offload + SP=2's (1/8) x 3 x 1.1 x 1.01.
    assert exact_cost(WEIGHTS, DENSE, "nvlink", (8, 1, 0, 8), "resident") == Fraction(1717, 4000)
    assert exact_cost(WEIGHTS, DENSE, "nvlink", (8, 1, 1, 2), "resident") == Fraction(3333, 8000)


def test_a_weights_file_s_critic_is_read_and_checked(cli, tmp_path: Path):
    asked = ("--model", "14B", "--gpu", "h100", "--gpus", "8", "--len", "32768", "--critic", "resident", "--json")
    zero = tmp_path / "zero.yaml"
    zero.write_text("critic: 0\n", encoding="utf-8")
    status, out, _ = cli(*asked, "--weights", str(zero))
    [answer] = json.loads(out)
    best = answer["plans"][0]
    assert status == 0 and (best["gpus"], best["env"], best["offload"], best["sp"], best["cost"]) == (
        8, True, False, 8, 0.214625)
    bad = tmp_path / "bad.yaml"
    bad.write_text("critic: -1\n", encoding="utf-8")
    status, out, err = cli(*asked, "--weights", str(bad))
    assert (status, out) == (2, "")
    assert err == f"solve: error: --weights {bad}: critic: must be at least 0, got -1\n"


def _critic_queries(count: int) -> list[dict]:
    """Seeded random queries with a PPO critic, within one node (the brute force's estimates take long past it)."""
    rng = random.Random(2026120676)
    queries = []
    while len(queries) < count:
        objective = rng.choice(["cheapest", "min_gpus", "max_len"])
        query = {"gpu": rng.choice(["A100-80GB", "H100-80GB", "L40S-48GB"]),
                 "model": rng.choice(["Qwen3-4B", "Qwen3-8B", "Qwen3-14B", "Qwen3-30B-A3B"]),
                 "objective": objective, "budget_gpus": rng.choice([4, 8]),
                 "critic": rng.choice(CRITIC_STATES)}
        if objective != "max_len":
            query["max_model_len"] = rng.choice([8192, 16384, 32768])
        queries.append(query)
    return queries


@pytest.mark.parametrize("query", _critic_queries(8))
def test_ranked_plans_with_a_critic_match_the_brute_force(query: dict):
    (answer,) = solve_plan(make_query(CATALOG, top=5, **query), CATALOG)
    got = [plan.model_dump(mode="json") for plan in answer.plans]
    every = enumerate_plans(CATALOG, estimates=True, **query)
    assert got == ranked_alternatives(every, CATALOG.model(query["model"]), CATALOG.gpu(query["gpu"]))[:5]
    checked = {key: value for key, value in query.items() if key != "objective"}
    for planned in got:
        assert check_plan(CATALOG, planned, estimates=True, **checked) == [], planned


def test_the_checker_refuses_a_plan_costed_without_its_critic():
    query = {"gpu": "H100-80GB", "model": "Qwen3-14B", "budget_gpus": 8, "max_model_len": 32768}
    (answer,) = solve_plan(make_query(CATALOG, critic="resident", **query), CATALOG)
    planned = answer.plans[0].model_dump(mode="json")
    assert check_plan(CATALOG, planned, estimates=True, critic="resident", **query) == []
    assert check_plan(CATALOG, {**planned, "cost": 0.2777}, estimates=True, critic="resident", **query) == [
        "cost=0.2777, expected 0.416625"]


def test_the_docs_give_the_term_and_its_turn():
    planner = " ".join((ROOT / "docs" / "planner.md").read_text(encoding="utf-8").split())
    assert "cost = (1/n) * (1 + w_off*r*o + c) * (1 + w_sp*p*(s-1)) * (1 + w_env*e)" in planner
    assert "c = w_critic * (1 + w_off*r*h)" in planner
    assert "A known limit: the cost ignores a PPO critic" not in planner
    assert ("$ solve --model 14B --gpu h100 --gpus 8 --len 32768 --critic resident --top 3 H100-80GB · Qwen3-14B · "
            "cheapest plan for 32768 tokens within 8 GPUs: optimal plan Env + Offload + SP=2 on 8 of 8 GPUs") in planner
    assert "critic: 1.0" in (ROOT / "tables" / "costs.yaml").read_text(encoding="utf-8")
