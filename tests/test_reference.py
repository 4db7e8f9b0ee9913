"""The brute-force planner reference (tests/reference.py), checked against answers worked out by hand from
the source tables (tables/feasibility/*.yaml) and the default weights (offload 1.0, sp 0.1, env 0.01)."""

from __future__ import annotations

import copy
import math
import random
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from cluster_reference import _vllm_lora_gib
from command_words import make_query
from reference import (
    PLAN_KEYS,
    Adapter,
    Release,
    _adapter_parameters,
    _host_moments,
    _host_need,
    _lowered_budget,
    check_plan,
    enumerate_plans,
    exact_cost,
    lora_counted,
    rank_key,
    ranked_alternatives,
)

import solver
from solver.memory import breakdown, host_memory_gib
from solver.model import prepare
from solver.rules import lowered_token_budget, most_estimated_tokens, token_budget
from solver.solve import LIFT_WEIGHTS, USER_LIMIT_WEIGHT, least_host_plan, nearest_plan
from solver.solve import plan as solve_plan
from solver.tables import (
    MAX_HOST_RAM_GB,
    QueryError,
    Setting,
    Weights,
    load_catalog,
    load_gpu_type,
    load_memory_model,
    load_model_config,
    load_weights,
)

CATALOG = load_catalog()
WEIGHTS = load_weights()
INTERNLM2 = Path(__file__).parent / "data" / "hf-configs" / "internlm2-7b.json"


def plans(**query):
    return enumerate_plans(CATALOG, **query)


def label(plan: dict) -> str:
    return Setting(env=plan["env"], offload=plan["offload"], sp=plan["sp"]).label


def query_of(query: dict) -> dict:
    """The check_plan arguments of an enumerate_plans query (check_plan takes no objective)."""
    return {key: value for key, value in query.items() if key != "objective"}


# --- cost ------------------------------------------------------------------------------------------------


def test_exact_cost_uses_the_decimal_weights_exactly():
    dense = CATALOG.model("Qwen3-8B")
    a100 = CATALOG.gpu("A100-80GB")
    assert exact_cost(WEIGHTS, dense, a100, 4, False, False, 4) == Fraction(13, 40)  # (1/4) * 1.3
    assert exact_cost(WEIGHTS, dense, a100, 1, True, True, 2) == Fraction(2) * Fraction(11, 10) * Fraction(101, 100)
    assert exact_cost(WEIGHTS, dense, a100, 6, False, False, 1) == Fraction(1, 6)
    other = Weights(offload=0.5, sp=0.25, env=0.0)
    assert exact_cost(other, dense, a100, 2, True, True, 4) == Fraction(1, 2) * Fraction(3, 2) * Fraction(7, 4)
    # Over PCIe, SP's weight counts sp_pcie_factor (3) times: (1/4) * (1 + 0.3 * 3) on four RTX 4090s at SP=4.
    assert exact_cost(WEIGHTS, dense, CATALOG.gpu("RTX-4090-24GB"), 4, False, False, 4) == Fraction(19, 40)
    # With p = 1.5 over PCIe: (1/2) * (1 + 0.5) * (1 + 0.25 * 1.5 * 3) * (1 + 0) on two L40S cards at SP=4.
    pcie = Weights(offload=0.5, sp=0.25, env=0.0, sp_pcie_factor=1.5)
    assert exact_cost(pcie, dense, CATALOG.gpu("L40S-48GB"), 2, True, True, 4) == (
        Fraction(1, 2) * Fraction(3, 2) * Fraction(17, 8))


# --- max_len ---------------------------------------------------------------------------------------------


def test_max_len_a100_4b_budget_6_uses_4_gpus():
    # 4-GPU table, Qwen3-4B: 102400 is Env + Offload + SP=4, 112640 and beyond are "-".
    # 6-GPU table: 51200 is the last non-"-" row; SP can only be 1 or 2 on 6 GPUs (32 heads).
    found = plans(gpu="A100-80GB", model="Qwen3-4B", objective="max_len", budget_gpus=6)
    best = found[0]
    assert best == {
        "gpus": 4,
        "unused_gpus": 2,
        "env": True,
        "offload": True,
        "sp": 4,
        "max_model_len": 102400,
        "max_token_len_per_gpu": 51200,
        "lowered_budget": False,
        "token_budget_cap": None,
        "rope_scaling_factor": 2.5,
        "yarn_beyond_validated": False,
        "past_validated_length": None,
        "cost": float(Fraction(1, 4) * 2 * Fraction(13, 10) * Fraction(101, 100)),
        "evidence": "documented",
        "source": {"model": "Qwen3-4B", "gpus": 4, "max_model_len": 102400, "setting": "Env + Offload + SP=4"},
        # The memory model's prediction for this plan: 4 GPUs, Env + Offload + SP=4, 51200 tokens per GPU.
        **_predicted("Qwen3-4B", 80.0, 4, Setting(env=True, offload=True, sp=4), 102400),
        # Offload: the host memory of all 4 GPUs (one node), the larger of training (pinned fp32 weights, gradients
        # and reference weights, each block rounded up to a power of two, 21.12 GiB each, and Adam's moments, 29.97:
        # 93.3) and loading (4 whole fp32 copies, tied embeddings, 59.93, beside the fp32 weight and reference
        # shards, 42.24: 102.2; tests/reference.py)
        "host_memory_gb": 102.2,
        "host_critic_gb": None,  # no critic held in host memory
        "host_training_gb": 93.4,  # the 102.2 is the load's, at start-up
        "reference_model": True,  # no config says the run builds none
    "lora_rank": 0,  # full fine-tuning
    "lora_target_modules": None, "lora_exclude_modules": None, "config_lora": False,  # no adapter
    "config_adapter": None,  # no config's
    "dpo": False, "mode_train": False,  # not DPO, no config
    "critic": None,  # no critic
    "trinity_version": None, "expert_layout": "fused", "experts_counted": None,  # no release named, a dense model
    "model_loading": "every-rank", "compute_capability": "8.0",  # no release named: every rank loads it; an A100
        "beyond_calibration": [],  # documented: the memory model's range does not matter
        "beyond_calibration_codes": [],
        "trainer_nodes": 1,  # 4 GPUs, within a node of 8
        "nodes": None,  # no rollout GPUs asked for
        "rollout_gpus": None,
        "cautions": [],  # within YaRN's validated length, on an NVIDIA GPU
        "caution_codes": [],
    }
    # The other plans are the trade-offs: each shorter one is cheaper or on fewer GPUs than every longer one.
    alternatives = ranked_alternatives(found, CATALOG.model("Qwen3-4B"), CATALOG.gpu("A100-80GB"))
    assert [(plan["gpus"], plan["max_model_len"]) for plan in alternatives[1:4]] == [
        (4, 81920), (4, 71680), (2, 51200)]
    on_six = plans(gpu="A100-80GB", model="Qwen3-4B", objective="max_len", budget_gpus=6, exact=True)
    assert {plan["sp"] for plan in on_six} == {1, 2}
    assert max(plan["max_model_len"] for plan in on_six) == 51200
    # 3 and 5 GPUs have no table, but the cells of the tables for fewer GPUs (2 or more) vouch for plans there.
    for gpus, vouching in ((3, {2}), (5, {4})):
        on_count = plans(gpu="A100-80GB", model="Qwen3-4B", objective="max_len", budget_gpus=gpus, exact=True)
        assert {plan["source"]["gpus"] for plan in on_count} == vouching


def test_max_len_a100_4b_exactly_6():
    found = plans(gpu="A100-80GB", model="Qwen3-4B", objective="max_len", budget_gpus=6, exact=True)
    assert {plan["gpus"] for plan in found} == {6}
    best = found[0]
    assert (best["max_model_len"], label(best), best["evidence"], best["unused_gpus"]) == (
        51200, "Env + Offload + SP=2", "documented", 0,
    )
    assert best["max_token_len_per_gpu"] == 51200 and best["rope_scaling_factor"] == 1.25
    # Every length a max_len plan takes is one of the table's rows.
    rows_of_six = {4096 * k for k in range(1, 11)} | {51200, 61440, 71680}
    assert {plan["max_model_len"] for plan in found} <= rows_of_six


# --- cheapest and min_gpus -------------------------------------------------------------------------------


def test_cheapest_a100_8b_32768_exactly_4_is_the_documented_sp4():
    found = plans(
        gpu="A100-80GB", model="Qwen3-8B", objective="cheapest", budget_gpus=4, exact=True, max_model_len=32768
    )
    best = found[0]
    assert (label(best), best["evidence"]) == ("SP=4", "documented")
    assert best["cost"] == float(Fraction(13, 10) / 4) == pytest.approx(1.3 / 4, rel=1e-12)
    assert best["source"] == {"model": "Qwen3-8B", "gpus": 4, "max_model_len": 32768, "setting": "SP=4"}
    assert best["max_token_len_per_gpu"] == 16384 and best["rope_scaling_factor"] is None
    # Rows 32768..102400 of the 4-GPU table for 8B all include SP=4, so every plan it vouches for has SP=4;
    # the 2-GPU table's 'Env + Offload + SP=2' at 32768 vouches for that setting on 4 GPUs too (the 4-GPU
    # table's SP=4 comes before it in the source's order, so it says nothing against it).
    assert [label(plan) for plan in found] == [
        "SP=4", "Env + SP=4", "Env + Offload + SP=2", "Offload + SP=4", "Env + Offload + SP=4"]
    assert [plan["evidence"] for plan in found] == ["documented", "inferred", "inferred", "inferred", "inferred"]
    assert found[2]["source"] == {"model": "Qwen3-8B", "gpus": 2, "max_model_len": 32768, "setting": "Env + Offload + SP=2"}


def test_length_between_rows_uses_the_next_row_up():
    # 30000 lies between the 28672 and 32768 rows: row(30000) = 32768, whose cell is SP=4, so SP=4 at 30000
    # is documented (the cell at row(L) is exactly the plan's setting), with the 32768 row as its source.
    found = plans(
        gpu="a100", model="8B", objective="cheapest", budget_gpus=4, exact=True, max_model_len=30000
    )
    best = found[0]
    assert (label(best), best["evidence"], best["max_model_len"]) == ("SP=4", "documented", 30000)
    assert best["source"] == {"model": "Qwen3-8B", "gpus": 4, "max_model_len": 32768, "setting": "SP=4"}
    assert best["max_token_len_per_gpu"] == 15000
    # Env + SP=2 (the 28672 cell) does not carry L=30000: every source is a row of 30000 or more.
    assert all(plan["source"]["max_model_len"] >= 30000 for plan in found)
    assert [plan["source"]["gpus"] for plan in found] == [4, 4, 2, 4, 4]


def test_offload_pinned_at_a_short_length_is_inferred_from_vanilla():
    # A100 4 GPUs, 4B, 4096: the cell is vanilla; Offload alone includes it and is the cheapest with offload on.
    found = plans(
        gpu="A100-80GB", model="Qwen3-4B", objective="cheapest", budget_gpus=4, exact=True,
        max_model_len=4096, offload=True,
    )
    best = found[0]
    assert (label(best), best["evidence"], best["cost"]) == ("Offload", "inferred", 0.5)
    assert best["source"] == {"model": "Qwen3-4B", "gpus": 4, "max_model_len": 4096, "setting": "vanilla"}
    assert all(plan["offload"] for plan in found)
    assert all(plan["evidence"] == "inferred" for plan in found)


def test_inferred_source_is_the_first_longer_row_the_plan_includes():
    # A100 2 GPUs, 4B: 16384 is Env, 20480 is SP=2. With env pinned off, SP=2 at 16384 does not include Env
    # (row(L)), but includes the 20480 cell SP=2: inferred, sourced from the 20480 row.
    found = plans(
        gpu="A100-80GB", model="Qwen3-4B", objective="cheapest", budget_gpus=2, exact=True,
        max_model_len=16384, env=False,
    )
    best = found[0]
    assert (label(best), best["evidence"], best["cost"]) == ("SP=2", "inferred", float(Fraction(11, 20)))
    assert best["source"] == {"model": "Qwen3-4B", "gpus": 2, "max_model_len": 20480, "setting": "SP=2"}
    # Offload alone includes neither Env nor SP=2 nor any longer cell (SP=2, Env + SP=2, Env + Offload + SP=2).
    assert "Offload" not in [label(plan) for plan in found]
    assert [label(plan) for plan in found] == ["SP=2", "Offload + SP=2"]
    # SP=2 pinned at 8192: row(8192) is vanilla, which SP=2 includes, so the source is the 8192 row itself.
    short = plans(
        gpu="A100-80GB", model="Qwen3-4B", objective="cheapest", budget_gpus=2, exact=True,
        max_model_len=8192, sp=2,
    )[0]
    assert short["source"] == {"model": "Qwen3-4B", "gpus": 2, "max_model_len": 8192, "setting": "vanilla"}


def test_min_gpus_skips_a_dash_cell():
    # A100 14B at 32768: the 1-GPU cell is "-" (and so are all longer 1-GPU rows): no 1-GPU plan.
    # On 2 GPUs every row >= 32768 that trains says Env + Offload + SP=2, so that is the one 2-GPU plan.
    found = plans(gpu="A100-80GB", model="Qwen3-14B", objective="min_gpus", budget_gpus=8, max_model_len=32768)
    assert found[0]["gpus"] == 2
    assert (label(found[0]), found[0]["evidence"], found[0]["unused_gpus"]) == ("Env + Offload + SP=2", "documented", 6)
    assert [plan for plan in found if plan["gpus"] == 2] == [found[0]]
    assert not [plan for plan in found if plan["gpus"] == 1]
    # min_gpus orders by n first, then cost.
    assert [plan["gpus"] for plan in found] == sorted(plan["gpus"] for plan in found)


def test_dash_cell_gives_no_plan_at_that_count():
    # A100 1 GPU, 8B: 28672 and 32768 are "-".
    assert plans(gpu="A100-80GB", model="Qwen3-8B", objective="cheapest", budget_gpus=1, max_model_len=28672) == []
    assert plans(gpu="A100-80GB", model="Qwen3-8B", objective="cheapest", budget_gpus=1, max_model_len=24577) == []
    # Just below, 24576 is Env + Offload: that trains.
    found = plans(gpu="A100-80GB", model="Qwen3-8B", objective="cheapest", budget_gpus=1, max_model_len=24576)
    assert [label(plan) for plan in found] == ["Env + Offload"]


def test_length_beyond_the_last_row_gives_no_plans():
    assert plans(gpu="A100-80GB", model="Qwen3-4B", objective="cheapest", budget_gpus=8, max_model_len=133121) == []
    # 102400 trains 4B on 4 GPUs; 102401 falls to the 112640 row, "-" there and beyond.
    assert plans(gpu="A100-80GB", model="Qwen3-4B", objective="min_gpus", budget_gpus=8, max_model_len=102401) == []
    assert plans(gpu="H20-96GB", model="Qwen3-0.6B", objective="cheapest", budget_gpus=6, max_model_len=10**6) == []


def test_cheapest_versus_min_gpus_on_a_short_length():
    query = dict(gpu="A100-80GB", model="Qwen3-0.6B", budget_gpus=6, max_model_len=4096)
    cheapest = plans(objective="cheapest", **query)[0]
    assert (cheapest["gpus"], label(cheapest), cheapest["cost"]) == (6, "vanilla", float(Fraction(1, 6)))
    fewest = plans(objective="min_gpus", **query)[0]
    assert (fewest["gpus"], label(fewest), fewest["cost"], fewest["unused_gpus"]) == (1, "vanilla", 1.0, 5)


def test_pins_and_sp_rules():
    # SP=3 divides 6 GPUs but not 4B's 32 attention heads; SP=4 does not divide 6.
    assert plans(gpu="A100-80GB", model="Qwen3-4B", objective="cheapest", budget_gpus=6, exact=True,
                 max_model_len=4096, sp=3) == []
    assert plans(gpu="A100-80GB", model="Qwen3-4B", objective="cheapest", budget_gpus=6, exact=True,
                 max_model_len=4096, sp=4) == []
    found = plans(gpu="A100-80GB", model="Qwen3-4B", objective="cheapest", budget_gpus=6, max_model_len=4096, sp=4)
    assert {plan["gpus"] for plan in found} == {4}
    # A budget that is not a documented count, exactly: plans that the tables for fewer GPUs vouch for.
    found = plans(gpu="A100-80GB", model="Qwen3-4B", objective="cheapest", budget_gpus=3, exact=True,
                  max_model_len=4096)
    assert (label(found[0]), found[0]["evidence"], found[0]["source"]) == (
        "vanilla", "inferred", {"model": "Qwen3-4B", "gpus": 2, "max_model_len": 4096, "setting": "vanilla"})
    assert {plan["source"]["gpus"] for plan in found} == {2} and {plan["sp"] for plan in found} == {1}


def test_plans_have_the_documented_shape_and_are_distinct():
    found = plans(gpu="H20-96GB", model="Qwen3-14B", objective="max_len", budget_gpus=8)
    assert found and all(set(plan) - {"host_ram_assumed"} == PLAN_KEYS for plan in found)
    # the bound a host-memory caution names, beside it alone (hostfield90b): 3 plans of the 48 carry one
    assumed = [plan["host_ram_assumed"] for plan in found if "host_ram_assumed" in plan]
    assert len(found) == 48 and assumed == [{"gb": 128.0 * plan["gpus"], "source": "--host-ram"} for plan in found
                                            if "host-memory-unchecked" in plan["caution_codes"]] and len(assumed) == 3
    identities = [(p["gpus"], p["env"], p["offload"], p["sp"], p["max_model_len"]) for p in found]
    assert len(set(identities)) == len(identities)
    assert found[0]["max_model_len"] == 112640 and label(found[0]) == "Env + Offload + SP=4"
    # check_plan holds it to the caution: there, of the GiB assumed and the flag the caution names; nowhere else
    (cautioned, *_), plain = [plan for plan in found if "host_ram_assumed" in plan], found[0]
    asked = query_of({"gpu": "H20-96GB", "model": "Qwen3-14B", "budget_gpus": 8})
    assert check_plan(CATALOG, cautioned, **asked) == [] == check_plan(CATALOG, plain, **asked)
    bound = cautioned["host_ram_assumed"]
    for wrong in (None, {**bound, "gb": bound["gb"] * 2}, {**bound, "source": "host_ram_gb"}):
        assert any(problem.startswith(f"host_ram_assumed={wrong!r} with a host-memory caution")
                   for problem in check_plan(CATALOG, {**cautioned, "host_ram_assumed": wrong}, **asked))
    assert any(problem.startswith(f"host_ram_assumed={bound!r} without a host-memory caution")
               for problem in check_plan(CATALOG, {**plain, "host_ram_assumed": bound}, **asked))


def test_bad_queries_are_refused():
    with pytest.raises(ValueError, match="unknown objective 'fastest'"):
        plans(gpu="A100-80GB", model="Qwen3-4B", objective="fastest", budget_gpus=4, max_model_len=4096)
    with pytest.raises(ValueError, match="cheapest needs a max_model_len"):
        plans(gpu="A100-80GB", model="Qwen3-4B", objective="cheapest", budget_gpus=4)
    with pytest.raises(ValueError, match="max_len chooses the length itself"):
        plans(gpu="A100-80GB", model="Qwen3-4B", objective="max_len", budget_gpus=4, max_model_len=4096)


# --- check_plan ------------------------------------------------------------------------------------------

QUERIES = [
    dict(gpu="A100-80GB", model="Qwen3-4B", objective="max_len", budget_gpus=6),
    dict(gpu="A100-80GB", model="Qwen3-4B", objective="max_len", budget_gpus=6, exact=True),
    dict(gpu="A100-80GB", model="Qwen3-8B", objective="cheapest", budget_gpus=4, exact=True, max_model_len=30000),
    dict(gpu="A100-80GB", model="Qwen3-14B", objective="min_gpus", budget_gpus=8, max_model_len=50000),
    dict(gpu="H20-96GB", model="Qwen3-0.6B", objective="cheapest", budget_gpus=8, max_model_len=45000, env=True),
    dict(gpu="H20-96GB", model="Qwen3-1.7B", objective="max_len", budget_gpus=4, offload=False, sp=2),
]


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: "-".join(str(v) for v in q.values()))
def test_check_plan_accepts_every_enumerated_plan(query):
    found = plans(**query)
    assert found
    for plan in found:
        assert check_plan(CATALOG, plan, **query_of(query)) == [], plan


def _predicted(model: str, memory_gib: float, gpus: int, setting: Setting, length: int) -> dict[str, float]:
    """The shipped memory model's figures for a plan, as a plan reports them (GiB, to 0.01)."""
    memory = load_memory_model()
    found = breakdown(CATALOG.model(model), memory_gib, gpus, setting, length, memory.coefficients, memory.margin)
    return {"memory_gb": round(found.total_gib, 2), "headroom_gb": round(found.headroom_gib, 2),
            "margin_gb": round(found.margin_kept_gib(memory.margin), 2), "headroom_at_step": found.step_binds,
            "headroom_at_critic_pass": found.critic_pass_binds,
            "critic_pass_gb": None}  # no critic


GOOD_QUERY = dict(gpu="A100-80GB", model="Qwen3-8B", budget_gpus=4, exact=True, max_model_len=32768)
GOOD_MODEL = CATALOG.model(GOOD_QUERY["model"])


def good_cost(n: int, env: bool, offload: bool, sp: int) -> float:
    """The cost of a plan of `GOOD_QUERY`'s model."""
    return float(exact_cost(WEIGHTS, GOOD_MODEL, CATALOG.gpu(GOOD_QUERY["gpu"]), n, env, offload, sp))


GOOD_PLAN = {
    "gpus": 4,
    "unused_gpus": 0,
    "env": False,
    "offload": False,
    "sp": 4,
    "max_model_len": 32768,
    "max_token_len_per_gpu": 16384,
    "lowered_budget": False,
    "token_budget_cap": None,
    "rope_scaling_factor": None,
    "yarn_beyond_validated": False,
    "past_validated_length": None,
    "cost": 0.325,
    "evidence": "documented",
    "source": {"model": "Qwen3-8B", "gpus": 4, "max_model_len": 32768, "setting": "SP=4"},
    **_predicted("Qwen3-8B", 80.0, 4, Setting(sp=4), 32768),
    "host_memory_gb": None,  # no Offload
    "host_critic_gb": None,  # no critic held in host memory
    "host_training_gb": None,  # no Offload
    "reference_model": True,  # no config says the run builds none
    "lora_rank": 0,  # full fine-tuning
    "lora_target_modules": None, "lora_exclude_modules": None, "config_lora": False,  # no adapter
    "config_adapter": None,  # no config's
    "dpo": False, "mode_train": False,  # not DPO, no config
    "critic": None,  # no critic
    "trinity_version": None, "expert_layout": "fused", "experts_counted": None,  # no release named, a dense model
    "model_loading": "every-rank", "compute_capability": "8.0",  # no release named: every rank loads it; an A100
    "beyond_calibration": [],  # documented
    "beyond_calibration_codes": [],
    "trainer_nodes": 1,  # 4 GPUs, within a node of 8
    "nodes": None,  # no rollout GPUs asked for
    "rollout_gpus": None,
    "cautions": [],
    "caution_codes": [],
}


def mutated(**changes):
    plan = copy.deepcopy(GOOD_PLAN)
    plan.update(changes)
    return plan


def test_check_plan_accepts_the_hand_written_plan():
    assert check_plan(CATALOG, GOOD_PLAN, **GOOD_QUERY) == []


@pytest.mark.parametrize(
    ("plan", "query_changes", "fragment"),
    [
        (mutated(evidence="inferred"), {}, "evidence"),
        (mutated(env=True, cost=good_cost(4, True, False, 4)), {}, "evidence"),  # inferred really
        (mutated(sp=3, max_token_len_per_gpu=21846, cost=good_cost(4, False, False, 3)), {},
         "does not divide the 4 trainer GPUs"),
        (mutated(), {"budget_gpus": 2, "exact": False}, "over the budget"),
        (mutated(), {"budget_gpus": 6}, "exactly 6"),
        (mutated(cost=0.3250001), {}, "cost"),
        (mutated(unused_gpus=1), {}, "unused_gpus"),
        (mutated(source={"gpus": 4, "max_model_len": 36864, "setting": "SP=4"}), {}, "source"),
        (mutated(max_token_len_per_gpu=16385), {}, "max_token_len_per_gpu"),
        (mutated(lowered_budget=True), {}, "lowered_budget=True, but the token budget expected is 16384"),
        (mutated(rope_scaling_factor=0.8), {}, "rope_scaling_factor"),
        (mutated(yarn_beyond_validated=True), {}, "yarn_beyond_validated"),
        (mutated(cautions=["ROCm: PyTorch's ROCm builds also read PYTORCH_HIP_ALLOC_CONF"]), {}, "a ROCm caution given"),
        (mutated(cautions=["YaRN factor 2.0 at 32768 tokens: check"]), {}, "a YaRN caution given"),
        (mutated(cautions="none"), {}, "cautions is not a list of words"),
        (mutated(cautions=["0.5 GiB to spare where the estimate extrapolates"]), {}, "a thin-headroom caution given"),
        (mutated(caution_codes=["thin-headroom"]), {}, "caution codes ['thin-headroom'], where the words say []"),
        (mutated(cautions=["ROCm: PyTorch's ROCm builds also read PYTORCH_HIP_ALLOC_CONF"],
                 caution_codes=["thin-headroom"]), {}, "where the words say ['rocm-env-may-not-apply']"),
        (mutated(), {"env": True}, "pinned"),
        (mutated(), {"max_model_len": 30000}, "asked for"),
        (mutated(sp=2, max_token_len_per_gpu=32768, cost=good_cost(4, False, False, 2)), {},
         "not feasible"),
        (mutated(gpus=3, unused_gpus=1, cost=good_cost(3, False, False, 4)),
         {"exact": False}, "no row >= 32768 of a table for 3 GPUs or fewer has a cell that SP=4 includes"),
        (mutated(gpus=9, unused_gpus=1, cost=good_cost(9, False, False, 4)),
         {"exact": False, "budget_gpus": 10}, "9 GPUs: no A100-80GB table for them names Qwen3-8B"),
        ({key: value for key, value in GOOD_PLAN.items() if key != "source"}, {}, "missing ['source']"),
        (mutated(env=1), {}, "wrong type"),
        (mutated(memory_gb=60.0), {}, "differ from the memory model"),
        (mutated(host_memory_gb=61.9), {}, "differ from the memory model"),  # a host memory without Offload
        (mutated(beyond_calibration=["4 GPUs (calibrated up to 2)"]), {}, "beyond_calibration"),
        (mutated(beyond_calibration_codes=["more-gpus"]), {}, "beyond_calibration_codes=['more-gpus'], expected []"),
        (mutated(nodes=1, rollout_gpus=2), {}, "nodes/rollout_gpus 1/2, expected None/None"),
        (mutated(trainer_nodes=2), {}, "trainer_nodes=2, expected 1"),
        (mutated(nodes=1, rollout_gpus=2), {"rollout_gpus": 4}, "nodes/rollout_gpus 1/2, expected 1/4"),
    ],
)
def test_check_plan_catches_a_wrong_plan(plan, query_changes, fragment):
    problems = check_plan(CATALOG, plan, **{**GOOD_QUERY, **query_changes})
    assert problems, plan
    assert any(fragment in problem for problem in problems), problems


def test_check_plan_catches_a_wrong_yarn_factor_an_estimate_off_its_grid_and_an_estimate_called_documented():
    # The solver's own answers, each made wrong in one field the checker must catch.
    readme: dict[str, Any] = {"gpu": "A100-80GB", "model": "Qwen3-4B", "budget_gpus": 6}
    (best,) = [p.model_dump(mode="json") for p in solve_plan(make_query(CATALOG, objective="max_len", **readme),
                                                             CATALOG)[0].plans]
    assert best["rope_scaling_factor"] == 2.5 and check_plan(CATALOG, best, **readme, estimates=True) == []
    assert "rope_scaling_factor=2.0, expected 2.5" in check_plan(CATALOG, dict(best, rope_scaling_factor=2.0),
                                                                 **readme, estimates=True)
    h100: dict[str, Any] = {"gpu": "H100-80GB", "model": "Qwen3-8B", "budget_gpus": 8}
    (estimate,) = [p.model_dump(mode="json") for p in solve_plan(make_query(CATALOG, objective="max_len", **h100),
                                                                 CATALOG)[0].plans]
    assert estimate["evidence"] == "estimated" and check_plan(CATALOG, estimate, **h100, estimates=True) == []
    length = estimate["max_model_len"] - 512
    off_grid = dict(estimate, max_model_len=length, max_token_len_per_gpu=-(-2 * length // estimate["sp"]),
                    rope_scaling_factor=length / 40960 if length > 40960 else None)
    assert any("is not a multiple of 1024" in problem for problem in check_plan(CATALOG, off_grid, **h100,
                                                                                estimates=True))
    assert any("expected 'estimated', None" in problem for problem in check_plan(
        CATALOG, dict(estimate, evidence="documented"), **h100, estimates=True))


def test_check_plan_for_max_len_requires_a_row_length():
    query = dict(gpu="A100-80GB", model="Qwen3-4B", budget_gpus=6, exact=True)
    best = plans(objective="max_len", **query)[0]
    off_row = dict(best, max_model_len=50000, max_token_len_per_gpu=50000, rope_scaling_factor=50000 / 40960)
    assert any("not a row" in problem for problem in check_plan(CATALOG, off_row, **query))


# --- every documented cell -------------------------------------------------------------------------------


def test_every_documented_cell_is_the_cheapest_plan_at_its_count_and_row():
    """With exactly the table's GPUs and L on the row, the cheapest plan is the cell, documented."""
    mismatches = []
    checked = 0
    for cell in CATALOG.cells():
        if cell.setting is None:
            continue
        checked += 1
        found = plans(
            gpu=cell.gpu, model=cell.model, objective="cheapest", budget_gpus=cell.gpus, exact=True,
            max_model_len=cell.max_model_len,
        )
        best = found[0] if found else None
        want = (cell.setting.env, cell.setting.offload, cell.setting.sp)
        if best is None or (best["env"], best["offload"], best["sp"]) != want or best["evidence"] != "documented":
            got = "no plan" if best is None else f"{label(best)} ({best['evidence']}, source {best['source']})"
            mismatches.append(
                f"{cell.gpu} {cell.gpus} GPUs {cell.model} {cell.max_model_len}: cell {cell.setting.label}, got {got}"
            )
    assert checked > 400
    assert not mismatches, "\n".join(mismatches)


def _estimate_queries(count: int, dpo: bool = True) -> list[dict]:
    """Seeded random queries where estimates matter: GPU types with and without tables, models whose
    heads allow different SP degrees, budgets past one node, nodes of 4 or 8, pins and --exact; some (their own
    draws, which leave the others' as they were) with a train batch, for DPO too (where `dpo`: DPO reads no token
    budget), whose pairs split it over twice the data-parallel ranks."""
    rng, batch_rng = random.Random(20261130), random.Random(20261207)
    queries = []
    for _ in range(count):
        objective = rng.choice(["cheapest", "min_gpus", "max_len"])
        query = {"gpu": rng.choice(["A100-80GB", "H20-96GB", "H100-80GB", "L40S-48GB"]),
                 "model": rng.choice(["Qwen3-0.6B", "Qwen3-8B", "Qwen3-14B", "Qwen2.5-7B", "Qwen3-32B"]),
                 "objective": objective, "budget_gpus": rng.choice([1, 3, 6, 8, 12, 16]),
                 "node_gpus": rng.choice([4, 8])}
        if objective != "max_len":
            query["max_model_len"] = rng.choice([8192, 30001, 65536, 99999, 131072])  # odd: ceil(L / SP) matters
        if objective != "min_gpus" and rng.random() < 0.3:
            query["exact"] = True
        if rng.random() < 0.3:
            query[rng.choice(["env", "offload"])] = rng.random() < 0.5
        if rng.random() < 0.25:
            query["sp"] = rng.choice([1, 2, 4])
        if rng.random() < 0.3:
            query["rollout_gpus"] = rng.choice([1, 2, 4])
        if rng.random() < 0.3:
            query["host_ram_gb"] = rng.choice([64.0, 256.0, 512.0])
        if batch_rng.random() < 0.3:
            query["train_batch_size"] = batch_rng.choice([3, 9]) * query["budget_gpus"]  # ranks dividing it oddly
            query["dpo"] = batch_rng.random() < 0.7 and dpo and "rollout_gpus" not in query  # DPO has no rollout
        try:
            make_query(CATALOG, **query)
        except QueryError:  # a pin the heads, the count or the nodes rule out is bad input, not a question
            continue
        queries.append(query)
    return queries


@pytest.mark.parametrize("query", _estimate_queries(60))
def test_estimated_plans_match_the_reference(query: dict):
    (answer,) = solve_plan(make_query(CATALOG, top=5, **query), CATALOG)
    got = [p.model_dump(mode="json") for p in answer.plans]
    every = enumerate_plans(CATALOG, estimates=True, **query)
    assert got == ranked_alternatives(every, CATALOG.model(query["model"]), CATALOG.gpu(query["gpu"]))[:5]
    checked = {key: value for key, value in query.items() if key != "objective"}
    for planned in got:
        assert check_plan(CATALOG, planned, estimates=True, **checked) == [], planned
    # Where the best plan's trainer on whole nodes gives the rollout more GPUs than asked: the best on fewer nodes.
    fewer = None
    if every and not query.get("exact") and every[0]["rollout_gpus"] not in (None, query.get("rollout_gpus")):
        fewer = next((p for p in every if p["nodes"] < every[0]["nodes"]), None)
    assert (answer.fewer_nodes and answer.fewer_nodes.model_dump(mode="json")) == fewer


@pytest.mark.parametrize("query", _estimate_queries(40, dpo=False)[::2])
def test_plans_with_lowered_token_budgets_match_the_reference(query: dict):
    (answer,) = solve_plan(make_query(CATALOG, top=5, token_budget="auto", **query), CATALOG)
    got = [p.model_dump(mode="json") for p in answer.plans]
    every = enumerate_plans(CATALOG, estimates=True, token_budget="auto", **query)
    assert got == ranked_alternatives(every, CATALOG.model(query["model"]), CATALOG.gpu(query["gpu"]))[:5]
    checked = {key: value for key, value in query.items() if key != "objective"}
    for planned in got:
        assert check_plan(CATALOG, planned, estimates=True, token_budget="auto", **checked) == [], planned


def test_check_plan_catches_a_token_budget_that_is_not_the_lowered_one():
    query = {"gpu": "H20-96GB", "model": "Qwen2.5-7B", "budget_gpus": 6, "max_model_len": 131072}
    [lowered] = enumerate_plans(CATALOG, objective="cheapest", estimates=True, token_budget="auto", **query)[:1]
    assert lowered["max_token_len_per_gpu"] < 2 * 131072 // lowered["sp"] and lowered["lowered_budget"] is True
    assert check_plan(CATALOG, lowered, estimates=True, token_budget="auto", **query) == []
    unflagged = {**lowered, "lowered_budget": False}
    assert [problem for problem in check_plan(CATALOG, unflagged, estimates=True, token_budget="auto", **query)
            if problem.startswith("lowered_budget=False")] != []
    assert check_plan(CATALOG, lowered, estimates=True, **query) != []  # no lowered budget by default
    more = {**lowered, "max_token_len_per_gpu": lowered["max_token_len_per_gpu"] + 1024}
    assert any("max_token_len_per_gpu" in problem
               for problem in check_plan(CATALOG, more, estimates=True, token_budget="auto", **query))


@pytest.mark.parametrize("node_gpus", [2, 4])
def test_small_nodes_rule_out_documented_counts_that_are_not_whole_nodes(node_gpus: int):
    query = dict(gpu="A100-80GB", model="Qwen3-4B", objective="max_len", budget_gpus=6, node_gpus=node_gpus)
    (answer,) = solve_plan(make_query(CATALOG, top=5, **query), CATALOG)
    expected = enumerate_plans(CATALOG, estimates=True, **query)
    assert [p.model_dump(mode="json") for p in answer.plans] == ranked_alternatives(
        expected, CATALOG.model("4B"), CATALOG.gpu(query["gpu"]))[:5]
    assert all(plan["gpus"] <= node_gpus or plan["gpus"] % node_gpus == 0 for plan in expected)


def test_check_plan_catches_offload_past_the_host_ram():
    query = dict(gpu="A100-80GB", model="Qwen3-14B", budget_gpus=1, max_model_len=8192)
    (offloaded,) = plans(objective="cheapest", host_ram_gb=512, **query)[:1]
    assert offloaded["offload"] and check_plan(CATALOG, offloaded, host_ram_gb=512, **query) == []
    assert any("more than --host-ram 200" in problem for problem in check_plan(CATALOG, offloaded, host_ram_gb=200,
                                                                               **query))
    assert enumerate_plans(CATALOG, objective="cheapest", host_ram_gb=200, **query) == []


def _whole_node_rollout_queries() -> list[dict]:
    """Queries whose best trainer often takes whole nodes beside a few rollout GPUs: budgets of whole nodes."""
    rng = random.Random(20261201)
    queries = []
    for gpu in ("A100-80GB", "H20-96GB", "H100-80GB"):
        for model in ("Qwen3-0.6B", "Qwen3-8B", "Qwen3-14B"):
            objective = rng.choice(["cheapest", "max_len"])
            query = {"gpu": gpu, "model": model, "objective": objective, "budget_gpus": rng.choice([8, 16]),
                     "rollout_gpus": rng.choice([1, 2, 4]), "node_gpus": 8}
            if objective == "cheapest":
                query["max_model_len"] = rng.choice([16384, 32768, 65536])
            queries.append(query)
    return queries


@pytest.mark.parametrize("query", _whole_node_rollout_queries())
def test_the_plan_on_fewer_nodes_is_the_references_best_there(query: dict):
    (answer,) = solve_plan(make_query(CATALOG, **query), CATALOG)
    every = enumerate_plans(CATALOG, estimates=True, **query)
    fewer = None
    if every and every[0]["rollout_gpus"] != query["rollout_gpus"]:  # the trainer's whole nodes leave rollout a node
        fewer = next((p for p in every if p["nodes"] < every[0]["nodes"]), None)
    assert (answer.fewer_nodes and answer.fewer_nodes.model_dump(mode="json")) == fewer


def test_sp_may_be_a_multiple_of_the_kv_heads_as_the_reference_ranks_it():
    # Qwen3-30B-A3B has 4 KV heads: SP=8 on 8 GPUs is allowed (verl repeats the KV heads), and the ranking of the
    # first five plans is the reference enumerator's.
    request = {"gpu": "H200-141GB", "model": "Qwen3-30B-A3B", "objective": "cheapest", "budget_gpus": 8, "exact": True,
               "max_model_len": 131072}
    (answer,) = solve_plan(make_query(CATALOG, top=5, estimate="auto", **request), CATALOG)
    expected = ranked_alternatives(enumerate_plans(CATALOG, estimates=True, **request), CATALOG.model("30B-A3B"),
                                   CATALOG.gpu(request["gpu"]))[:5]
    assert [p.model_dump(mode="json") for p in answer.plans] == expected
    assert answer.plans[0].sp == 8


def test_the_host_memory_of_every_catalogued_model_is_the_references():
    # The reference writes out every tensor by name (each expert's, for Qwen3-30B-A3B); the solver counts kinds.
    for model in CATALOG.models:
        for gpus, node_gpus in ((1, 8), (3, 8), (8, 8), (16, 8), (24, 8), (6, 4)):
            if gpus > node_gpus and gpus % node_gpus:
                continue
            assert host_memory_gib(model, gpus, node_gpus) == pytest.approx(_host_need(model, gpus, node_gpus)), (
                model.name, gpus)


@pytest.mark.parametrize("query", [
    # Pinned blocks round up to powers of two: Offload on 5 GPUs needs less per node than on 8.
    {"gpu": "H100-80GB", "model": "Qwen2.5-32B", "objective": "cheapest", "budget_gpus": 8, "max_model_len": 8192},
    # Tied embeddings load on every rank: Offload on 4 GPUs needs less than no Offload on 8.
    {"gpu": "RTX-4090-24GB", "model": "Qwen3-0.6B", "objective": "cheapest", "budget_gpus": 8, "max_model_len": 32768},
    # The same need (one rank loads) on any count: the fewest GPUs break the tie, as asked.
    {"gpu": "A100-80GB", "model": "Qwen3-8B", "objective": "min_gpus", "budget_gpus": 16, "max_model_len": 8192},
    {"gpu": "H200-141GB", "model": "Llama-3.1-70B", "objective": "cheapest", "budget_gpus": 16, "max_model_len": 32768},
    {"gpu": "H100-80GB", "model": "Qwen3-30B-A3B", "objective": "cheapest", "budget_gpus": 16, "max_model_len": 65536,
     "node_gpus": 4},
])
def test_the_least_host_need_is_the_references_least(query: dict):
    # With a host memory that holds every plan, each plan says its need; the least of them is the solver's, and of
    # the plans that need it, the best by the objective.
    every = enumerate_plans(CATALOG, estimates=True, host_ram_gb=float(MAX_HOST_RAM_GB), **query)
    least = min(plan["host_memory_gb"] for plan in every)
    found = least_host_plan(CATALOG, make_query(CATALOG, host_ram_gb=float(MAX_HOST_RAM_GB), **query), query["gpu"])
    assert found is not None and found.model_dump(mode="json") == next(
        plan for plan in every if plan["host_memory_gb"] == least)


LARGE_TABLES = """gpu: H100-80GB
memory_gb: 80
source: measured
tables:
  - gpus: 8
    section: 8 x H100
    models: [Qwen3-8B, Qwen2.5-7B]
    rows:
      - {max_model_len: 32768, cells: {Qwen3-8B: vanilla, Qwen2.5-7B: SP=2}}
      - {max_model_len: 98304, cells: {Qwen3-8B: SP=8, Qwen2.5-7B: Env + SP=4}}
      - {max_model_len: 196608, cells: {Qwen3-8B: Env + Offload, Qwen2.5-7B: Env + Offload + SP=2}}
      - {max_model_len: 262144, cells: {Qwen3-8B: '-', Qwen2.5-7B: '-'}}
  - gpus: 16
    section: 16 x H100
    models: [Qwen3-8B]
    rows:
      - {max_model_len: 131072, cells: {Qwen3-8B: Env + SP=8}}
      - {max_model_len: 262144, cells: {Qwen3-8B: Env + Offload + SP=4}}
"""


def test_tables_of_8_and_16_gpus_refute_as_the_references_order_says(tmp_path):
    # Cells of a user's on 8 and 16 H100s: the source's order goes on past its counts (SP=8 and Env + SP=8 after
    # Env + SP=4), so an 8-GPU cell 'Env + Offload' says Env + SP=8 ran out of memory. Every pin, on and between
    # the rows, is answered as the reference answers it.
    cells = tmp_path / "h100.yaml"
    cells.write_text(LARGE_TABLES, encoding="utf-8")
    catalog = CATALOG.with_new_tables(load_gpu_type(cells, CATALOG.models, CATALOG.gpu_types))
    pins = [{}] + [{"exact": True, "sp": sp, "env": env, "offload": False} for sp in (2, 4, 8) for env in (False, True)]
    compared = 0
    for model, budget in (("Qwen3-8B", 8), ("Qwen3-8B", 16), ("Qwen2.5-7B", 8)):
        for length in (32768, 65536, 98304, 131072, 196608, 262144):
            for pin in pins:
                query = {"gpu": "H100-80GB", "model": model, "budget_gpus": budget, "max_model_len": length, **pin}
                try:
                    made = make_query(catalog, top=3, **query)
                except QueryError:  # SP=8 and Qwen2.5-7B's 28 heads
                    continue
                (answer,) = solve_plan(made, catalog)
                every = enumerate_plans(catalog, objective="cheapest", estimates=True, **query)
                assert [p.model_dump(mode="json") for p in answer.plans] == ranked_alternatives(
                    every, catalog.model(model), catalog.gpu(query["gpu"]))[:3], query
                compared += 1
    assert compared == 3 * 6 * 7 - 6 * 2  # all but Qwen2.5-7B's SP=8 pins
    # The case that tells the two orders apart: Env + SP=8 on 8 GPUs at 131072, refuted by the 196608 row.
    (refuted,) = solve_plan(make_query(catalog, gpu="H100-80GB", model="Qwen3-8B", budget_gpus=8, exact=True,
                                       max_model_len=131072, sp=8, env=True, offload=False), catalog)
    assert refuted.status == "infeasible" and not refuted.plans


def test_a_model_that_caps_its_logits_is_planned_as_the_reference_plans_it(tmp_path):
    # Gemma-2-9B's shape (its class caps the logits): estimates with one more bf16 copy of them, said to lie
    # beyond the calibration, as the reference works them out.
    config = tmp_path / "config.json"
    config.write_text('{"model_type": "gemma2", "hidden_size": 3584, "intermediate_size": 14336, "num_hidden_layers": 42,'
                      ' "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 256, "vocab_size": 256000,'
                      ' "max_position_embeddings": 8192, "_name_or_path": "google/gemma-2-9b"}', encoding="utf-8")
    catalog = CATALOG.with_model(load_model_config(config))
    for length in (8192, 32768, 65536):
        query = {"gpu": "H100-80GB", "model": "gemma-2-9b", "budget_gpus": 8, "max_model_len": length,
                 "objective": "cheapest"}
        (answer,) = solve_plan(make_query(catalog, top=3, **query), catalog)
        got = [p.model_dump(mode="json") for p in answer.plans]
        every = enumerate_plans(catalog, estimates=True, **query)
        assert got == ranked_alternatives(every, catalog.model("gemma-2-9b"), catalog.gpu("H100-80GB"))[:3], length
        assert got and all(any("capped logits" in phrase for phrase in p["beyond_calibration"]) for p in got)


def test_a_model_of_its_own_attention_code_is_planned_for_dpo_as_the_reference_plans_it():
    # InternLM2-7B runs its checkpoint's own attention code: SP 1 alone, one padded sequence per micro-batch, and for
    # DPO the pair (65536 tokens per GPU at 32768), which the reference counts as the planner does.
    catalog = CATALOG.with_model(load_model_config(INTERNLM2))
    query = {"gpu": "H100-80GB", "model": "internlm2-7b", "budget_gpus": 8, "max_model_len": 32768, "exact": True,
             "objective": "cheapest"}
    (answer,) = solve_plan(make_query(catalog, top=3, dpo=True, **query), catalog)
    got = [p.model_dump(mode="json") for p in answer.plans]
    every = enumerate_plans(catalog, estimates=True, dpo=True, **query)
    assert got == ranked_alternatives(every, catalog.model("internlm2-7b"), catalog.gpu("H100-80GB"))[:3]
    assert [(p["sp"], p["env"], p["offload"], p["memory_gb"]) for p in every] == [(1, True, True, 60.14)]
    asked = {key: value for key, value in query.items() if key != "objective"}
    assert check_plan(catalog, got[0], estimates=True, dpo=True, **asked) == []
    assert any("the memory figures" in problem for problem in check_plan(catalog, got[0], estimates=True, **asked))
    assert "SP=2, but internlm2-7b's own attention code takes SP 1 alone" in check_plan(
        catalog, {**got[0], "sp": 2}, estimates=True, dpo=True, **asked)
    unpadded = {**got[0], **{key: [item for item in got[0][key] if "padded" not in item]
                             for key in ("cautions", "caution_codes")}}
    assert "a padded-micro-batches caution missing (the model trains one padded sequence per micro-batch)" in (
        check_plan(catalog, unpadded, estimates=True, dpo=True, **asked))


@pytest.mark.parametrize("query", [
    {"model": "Qwen3-4B", "objective": "cheapest", "max_model_len": 32768, "budget_gpus": 2, "exact": True},
    {"model": "Qwen3-8B", "objective": "cheapest", "max_model_len": 32768, "budget_gpus": 4},
    {"model": "Qwen3-4B", "objective": "max_len", "budget_gpus": 6},
    {"model": "Qwen3-8B", "objective": "min_gpus", "max_model_len": 65536, "budget_gpus": 16},
    {"model": "Qwen3-14B", "objective": "max_len", "budget_gpus": 8, "env": False},
])
@pytest.mark.parametrize("estimates", [False, True])
def test_a_gpu_type_with_a_tabled_types_memory_plans_with_its_tables_as_the_reference(query: dict, estimates: bool):
    # The A800-80GB reports the A100-80GB's 81920 MiB: the A100's tables are its own, their cells naming the A100.
    estimate = "auto" if estimates else "never"
    (answer,) = solve_plan(make_query(CATALOG, gpu="A800-80GB", top=5, estimate=estimate, **query), CATALOG)
    got = [p.model_dump(mode="json") for p in answer.plans]
    every = enumerate_plans(CATALOG, gpu="A800-80GB", estimates=estimates, **query)
    assert got and got == ranked_alternatives(every, CATALOG.model(query["model"]), CATALOG.gpu("A800-80GB"))[:5]
    checked = {key: value for key, value in query.items() if key != "objective"}
    for planned in got:
        assert check_plan(CATALOG, planned, gpu="A800-80GB", estimates=estimates, **checked) == [], planned
    # The same plans as the A100's, each cell naming the A100-80GB's table.
    (a100,) = solve_plan(make_query(CATALOG, gpu="A100-80GB", top=5, estimate=estimate, **query), CATALOG)
    assert got == [{**p.model_dump(mode="json"), **({"source": {**p.source.model_dump(mode="json"),
                                                                "gpu": "A100-80GB"}} if p.source else {})}
                   for p in a100.plans]


def _a800_plans_as_the_reference(tmp_path, gpus: int, setting: str, query: dict) -> list[dict]:
    """The top 5 plans on A800s with made-up cells of one table for `gpus` GPUs (Qwen3-4B's `setting` at 32768),
    checked against the reference's."""
    cells = tmp_path / "a800.yaml"
    cells.write_text(f"gpu: A800-80GB\nmemory_gb: 80\nsource: made up\ntables:\n  - gpus: {gpus}\n"
                     f"    section: {gpus} x A800\n    models: [Qwen3-4B]\n    rows:\n"
                     f"      - {{max_model_len: 32768, cells: {{Qwen3-4B: {setting}}}}}\n", encoding="utf-8")
    catalog = CATALOG.with_cells(cells)
    (answer,) = solve_plan(make_query(catalog, gpu="A800-80GB", top=5, estimate="auto", **query), catalog)
    got = [p.model_dump(mode="json") for p in answer.plans]
    every = enumerate_plans(catalog, gpu="A800-80GB", estimates=True, **query)
    assert got == ranked_alternatives(every, catalog.model("Qwen3-4B"), catalog.gpu("A800-80GB"))[:5]
    return got


@pytest.mark.parametrize("query", [
    {"model": "Qwen3-4B", "objective": "cheapest", "max_model_len": 65536, "budget_gpus": 4, "exact": True},
    {"model": "Qwen3-4B", "objective": "cheapest", "max_model_len": 32768, "budget_gpus": 2, "exact": True},
    {"model": "Qwen3-4B", "objective": "max_len", "budget_gpus": 8},
    {"model": "Qwen3-4B", "objective": "min_gpus", "max_model_len": 32768, "budget_gpus": 8},
    {"model": "Qwen3-4B", "objective": "cheapest", "max_model_len": 32768, "budget_gpus": 8, "exact": True},
])
def test_cells_of_a_gpu_type_with_a_tabled_types_memory_join_the_tables_it_borrows(tmp_path, query: dict):
    # Made-up A800 cells for 8 GPUs: the A800's own table for 8, the A100's for the other counts (its 4-GPU cell
    # SP=4 at 71680 for 65536, its 2-GPU Env + SP=2 at 32768), each cell naming whose table it is.
    got = _a800_plans_as_the_reference(tmp_path, 8, "vanilla", query)
    if query.get("exact") and query["max_model_len"] == 65536:
        assert (got[0]["evidence"], got[0]["source"]) == ("documented", {
            "model": "Qwen3-4B", "gpus": 4, "max_model_len": 71680, "setting": "SP=4", "gpu": "A100-80GB"})
    if query.get("exact") and query["budget_gpus"] == 8:  # the A800's own 8-GPU cell is not cited as another's,
        assert (got[0]["evidence"], got[0]["source"]) == ("documented", {  # but as the made-up cells' own
            "model": "Qwen3-4B", "gpus": 8, "max_model_len": 32768, "setting": "vanilla", "table_source": "made up"})


@pytest.mark.parametrize("model", ["Qwen3-4B", "Qwen3-14B"])
def test_a_borrowed_table_speaks_for_each_model_the_own_table_of_its_count_lacks(tmp_path, model: str):
    # Made-up A800 cells for 4 GPUs name Qwen3-4B alone: for Qwen3-4B the A800's own table speaks, for Qwen3-14B
    # the A100's table for 4 GPUs still does.
    query = {"model": model, "objective": "cheapest", "max_model_len": 32768, "budget_gpus": 4, "exact": True}
    got = _a800_plans_as_the_reference(tmp_path, 4, "SP=2", query)
    assert (got[0]["evidence"], got[0]["source"].get("gpu")) == (
        ("documented", None) if model == "Qwen3-4B" else ("documented", "A100-80GB"))


def test_a_lowered_token_budget_keeps_trinitys_default_where_it_is_exactly_the_most_tokens():
    """At the longest length an estimate fits at Trinity's default budget, that default is the most tokens the
    estimate holds: the budget stays the default, not rounded down to a multiple of 1024 (SP=4 at 5120 tokens:
    ceil(2 * 5120 / 4) = 2560, not 2048); a token more than the most is lowered, and below the least is None."""
    assert lowered_token_budget(5120, 4, 2560) == 2560
    assert lowered_token_budget(5120, 4, 2559) == 2048
    assert lowered_token_budget(5120, 4, 1280) == 1280  # the least, ceil(5120 / 4), is not a multiple of 1024
    assert lowered_token_budget(5120, 4, 1279) is None
    for length in (1024, 3072, 5120, 7000, 30002, 40960):
        for sp in (1, 2, 3, 4, 8):
            default, least = token_budget(length, sp), -(-length // sp)
            for most in (default - 1, least + 1, least, least - 1):  # the reference's lowers past the default alone
                assert lowered_token_budget(length, sp, most) == _lowered_budget(length, sp, most), (length, sp, most)


@pytest.mark.parametrize(("length", "sp", "longest", "budget"), [
    (30002, 4, 30002, 15001),  # the longest at the default: its default
    (30002, 4, 30001, 14336),  # past it, though the default is the same 15001: below it (cells that contradict)
    (30003, 4, 30002, 14336),  # past it, a token more per GPU: at most the longest's 15001, rounded down
    (5120, 4, 5120, 2560), (5121, 4, 5120, 2048), (5120, 4, 2560, 1280), (5120, 4, 2558, None),
    (40960, 8, 30002, 7168), (30004, 8, 30001, 7168), (30004, 8, 30004, 7501),
])
def test_past_the_longest_length_at_the_default_a_lowered_budget_stays_below_the_default(
        length: int, sp: int, longest: int, budget: int | None):
    """Past an estimate's longest length at Trinity's default (`most_estimated_tokens`), the budget is below the
    default at the length, though that default may be the longest's own (30001 and 30002 take 15001 at SP=4: a row
    at 30002 that says SP=4 ran out of memory contradicts one at 30001 that says it trained); the reference agrees."""
    got = lowered_token_budget(length, sp, most_estimated_tokens(length, sp, longest))
    assert got == budget
    if length > longest:  # the reference lowers only where the default is not estimated
        assert _lowered_budget(length, sp, token_budget(longest, sp)) == budget


NEAREST_LIMITS = {"sp": "pin_sp", "env": "pin_env", "offload": "pin_offload", "host_ram_gb": "host_ram",
                  "train_batch_size": "batch_divides", "rollout_gpus": "rollout_layout"}
"""A query's limits the nearest plan may lift (each to None), by the rule `LIFT_WEIGHTS` weighs."""


def _nearest_by_reference(objective: str, query: dict, without_estimates: bool = False) -> tuple[int, tuple]:
    """The weight of the limits the nearest plan of a refused `query` lifts, and the plan, by brute force: every
    subset of its limits (and of Trinity's default token budget) lifted, each plan within the budget (any count up to
    it, for an exact one) or, at the budget's weight, past it up to 64 GPUs; the least weight first, then past the
    budget the fewest GPUs, then the objective's order. `without_estimates`: the query has --no-estimate, which an
    estimated plan lifts."""
    limits = [(NEAREST_LIMITS[key], {key: None}) for key in NEAREST_LIMITS if query.get(key) is not None]
    limits.append(("token_budget", {"token_budget": "auto"}))
    subsets = [[limits[i] for i in range(len(limits)) if mask >> i & 1] for mask in range(2 ** len(limits))]
    searches = sorted(((sum(LIFT_WEIGHTS.get(name, USER_LIMIT_WEIGHT) for name, _ in lifted)
                        + past * LIFT_WEIGHTS["budget"], past, lifted) for lifted in subsets for past in (False, True)),
                      key=lambda search: search[:2])
    best = None
    # The searches by the least weight each lifts: one that cannot lift less than the best found so far is not run.
    for least_lifts, past, lifted in searches:
        if best is not None and least_lifts > best[0][0]:
            break
        changed = {**query, "exact": False, "estimates": True}
        for _, update in lifted:
            changed.update(update)
        budget = 64 if past else query["budget_gpus"]
        for found in enumerate_plans(CATALOG, objective=objective, **{**changed, "budget_gpus": budget}):
            if past and found["gpus"] <= query["budget_gpus"]:
                continue
            combination = (found["gpus"], found["env"], found["offload"], found["sp"])
            estimate = without_estimates and found["evidence"] == "estimated"
            key = (least_lifts + estimate * LIFT_WEIGHTS["estimate"], found["gpus"] * past,
                   rank_key(objective, *combination, found["max_model_len"],
                            exact_cost(WEIGHTS, CATALOG.model(query["model"]), CATALOG.gpu(query["gpu"]),
                                       *combination)))
            plan = (*combination, found["max_model_len"], found["max_token_len_per_gpu"], found["evidence"])
            best = min(best or (key, plan), (key, plan))
    assert best is not None
    return best[0][0], best[1]


@pytest.mark.parametrize(("objective", "query"), [
    ("cheapest", {"model": "14B", "gpu": "h100", "max_model_len": 131072, "budget_gpus": 4, "offload": False,
                  "host_ram_gb": 32.0}),
    ("cheapest", {"model": "8B", "gpu": "a100-40g", "max_model_len": 32768, "budget_gpus": 2, "sp": 1,
                  "host_ram_gb": 100.0}),
    ("cheapest", {"model": "4B", "gpu": "h100", "max_model_len": 131072, "budget_gpus": 6, "exact": True,
                  "node_gpus": 4}),
    ("min_gpus", {"model": "14B", "gpu": "a100", "max_model_len": 65536, "budget_gpus": 1, "host_ram_gb": 32.0,
                  "rollout_gpus": 2, "node_gpus": 2}),
    ("cheapest", {"model": "14B", "gpu": "h100", "max_model_len": 65536, "budget_gpus": 6, "host_ram_gb": 300.0,
                  "train_batch_size": 3, "rollout_gpus": 7}),
    ("cheapest", {"model": "32B", "gpu": "a100", "max_model_len": 131072, "budget_gpus": 4, "offload": False}),
    ("max_len", {"model": "14B", "gpu": "a100", "budget_gpus": 1, "env": True, "rollout_gpus": 2, "node_gpus": 2}),
])
def test_the_nearest_plan_matches_the_reference(objective: str, query: dict):
    asked = make_query(CATALOG, objective=objective, **query)
    found = nearest_plan(CATALOG, prepare(CATALOG, asked.gpus[0], asked), asked)
    assert found is not None
    plan, lifted = found
    weight = sum(LIFT_WEIGHTS.get(name, USER_LIMIT_WEIGHT) for name in lifted)
    assert (weight, (plan.gpus, plan.env, plan.offload, plan.sp, plan.max_model_len, plan.max_token_len_per_gpu,
                     plan.evidence)) == _nearest_by_reference(objective, query)


@pytest.mark.parametrize("query", [
    {"model": "14B", "gpu": "h20", "max_model_len": 131072, "budget_gpus": 1, "host_ram_gb": 100.0},
    {"model": "8B", "gpu": "a100", "max_model_len": 65536, "budget_gpus": 2, "sp": 1},
    {"model": "14B", "gpu": "a100", "max_model_len": 8192, "budget_gpus": 1, "offload": False},
])
def test_the_nearest_plan_with_the_estimates_no_estimate_turns_off_matches_the_reference(query: dict):
    # --no-estimate's refusal asks the nearest plan with the estimates: an estimated one lifts --no-estimate too.
    asked = make_query(CATALOG, objective="cheapest", estimate="never", **query)
    found = nearest_plan(CATALOG, prepare(CATALOG, asked.gpus[0], asked), asked.model_copy(update={"estimate": "auto"}))
    assert found is not None
    plan, lifted = found
    weight = sum(LIFT_WEIGHTS.get(name, USER_LIMIT_WEIGHT) for name in lifted)
    assert (weight, (plan.gpus, plan.env, plan.offload, plan.sp, plan.max_model_len, plan.max_token_len_per_gpu,
                     plan.evidence)) == _nearest_by_reference("cheapest", query, without_estimates=True)


def test_more_nodes_on_an_amd_gpu_name_rccl_as_the_reference_names_it():
    query = {"gpu": "MI300X", "model": "Qwen3-8B", "max_model_len": 8192, "budget_gpus": 8, "node_gpus": 4,
             "exact": True}
    (answer,) = solve_plan(make_query(CATALOG, objective="cheapest", **query), CATALOG)
    (planned,) = [p.model_dump(mode="json") for p in answer.plans]
    assert "2 nodes (RCCL's memory calibrated on one node)" in planned["beyond_calibration"]  # docs/memory.md's words
    assert check_plan(CATALOG, planned, estimates=True, **query) == []


def test_the_reference_counts_a_lora_adapter_with_docs_memory_figures():
    # docs/memory.md, "LoRA": the adapter's parameters, the host memory Offload needs, vLLM's slots, each re-derived.
    dense, larger = CATALOG.model("Qwen3-8B"), CATALOG.model("Qwen3-14B")
    assert _adapter_parameters(dense, Adapter(64)) == 174_587_904
    assert _adapter_parameters(dense, Adapter(64, ("q_proj", "v_proj"))) == 30_670_848
    assert _adapter_parameters(larger, Adapter(32)) == 128_450_560
    loading, training = _host_moments(dense, 8, 8, release=Release.named("0.5.1"), reference_model=False,
                                      adapter=Adapter(16))
    assert (math.ceil(loading * 10) / 10, math.ceil(training * 10) / 10) == (71.5, 41.4)
    assert _vllm_lora_gib(dense, 1, 16) * 2**30 == 16 * 3_040_000 * 2 + 114_688
    assert round(_vllm_lora_gib(dense, 4, 64), 2) == 0.21


def test_check_plan_holds_the_planners_lora_plans_to_their_adapter():
    query = {"gpu": "A100-80GB", "model": "Qwen3-8B", "max_model_len": 16384, "budget_gpus": 8, "host_ram_gb": 512}
    (answer,) = solve_plan(make_query(CATALOG, objective="cheapest", lora_rank=16, top=2, **query), CATALOG)
    planned = [p.model_dump(mode="json") for p in answer.plans]
    assert [(p["evidence"], p["lora_rank"], p["reference_model"]) for p in planned] == [("inferred", 16, False)] * 2
    lora = {**query, "estimates": True, "lora_rank": 16, "reference_model": False}
    assert [check_plan(CATALOG, p, **lora) for p in planned] == [[], []]
    assert "memory figures" in check_plan(CATALOG, planned[0], **{**lora, "lora_rank": 8})[0]
    assert "memory figures" in check_plan(CATALOG, planned[0], **{**query, "estimates": True})[0]  # full fine-tuning
    assert "evidence='documented', expected 'inferred'" in check_plan(
        CATALOG, {**planned[0], "evidence": "documented"}, **lora)


def test_the_reference_counts_regex_targets_and_a_mixture_of_experts_adapter():
    # docs/memory.md, "LoRA": a regex (and an exclusion) counted layer by layer, Qwen3-MoE's adapter per layout.
    moe, small = CATALOG.model("Qwen3-30B-A3B"), CATALOG.model("Qwen3-1.7B")
    assert _adapter_parameters(small, Adapter(16, pattern=r".*\.o_proj", exclude=r".*layers\.0\..*")) == 1_769_472
    assert _adapter_parameters(CATALOG.model("Qwen3-8B"), Adapter(16, exclude=r".*layers\.[0-3]\..*")) == 38_797_312
    assert [_adapter_parameters(moe, Adapter(32), layout) for layout in ("fused", "separate", "either")] == [
        1_993_015_296, 1_691_025_408, 1_993_015_296]
    assert [lora_counted(moe, Adapter(16, pattern=pattern)) for pattern in (r".*\.(q_proj|v_proj)", r".*experts.*")] \
        == [True, False]
    assert not lora_counted(small, Adapter(16, pattern=r".*\.mlp\..*"))  # act_fn too: the solver refuses it
    query = {"gpu": "H100-80GB", "max_model_len": 16384, "budget_gpus": 8, "host_ram_gb": 1024, "top": 2}
    for model, release, targets in (("Qwen3-30B-A3B", "0.5.2", None), ("Qwen3-30B-A3B", None, r".*\.(q_proj|v_proj)"),
                                    ("Qwen3-1.7B", None, r".*\.o_proj")):
        (answer,) = solver.plan(model, objective="cheapest", lora_rank=16, trinity_version=release,
                                lora_targets=targets, **query)
        asked = {**query, "model": model, "estimates": True, "lora_rank": 16, "reference_model": False,
                 "trinity_version": release, "lora_pattern": targets}
        asked.pop("top")
        planned = [p.model_dump(mode="json") for p in answer.plans]
        assert len(planned) == 2 and [check_plan(CATALOG, p, **asked) for p in planned] == [[], []], model
        other = r".*\.q_proj" if targets is None else None  # another adapter's figures
        assert any("memory figures" in problem for problem in check_plan(CATALOG, planned[0], **{
            **asked, "lora_pattern": other}))
