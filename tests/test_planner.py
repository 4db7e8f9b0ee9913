"""The CP-SAT planner against the documented cells and against the brute-force reference."""

from __future__ import annotations

import re
import threading
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from command_words import make_query
from conftest import made_up_table
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from ortools.sat.python import cp_model
from reference import check_plan, enumerate_plans, ranked_alternatives

import solver
import solver.cluster
import solver.model
import solver.solve
from solver.explain import _Prober
from solver.memory import CEILING, GRID, estimated_cells, estimated_counts
from solver.model import (
    LeanCpModel,
    PlanningInputs,
    add_table,
    build_model,
    capped_estimates,
    cost_ranks,
    exact_cost,
    least_limits,
    prepare,
    prepare_inputs,
    ranking_key,
    ranks_table,
    table_values,
    within_refuting_tables,
)
from solver.query import check_sp
from solver.results import Answer, ReasonCode, RolloutKept
from solver.rules import (
    SourceCell,
    host_ram_bound_words,
    host_ram_check_words,
    host_ram_unchecked_words,
    host_ram_words,
    larger_tables,
    refuting_cell,
    refuting_row,
    rollout_layout,
    sp_degrees,
    sp_degrees_within,
    sp_gpus_violation,
    table_cells,
    tried_settings,
    vouching_cell,
)
from solver.solve import alternative_plan, answer_for, best_plan, least_host_plan, nearest_plan, optional_best, plan
from solver.tables import (
    MAX_GPUS,
    MAX_HOST_RAM_GB,
    Catalog,
    Interconnect,
    QueryError,
    Setting,
    Undecided,
    Weights,
    load_catalog,
    sp_rule_violation,
)

CATALOG = load_catalog()
ONE_GPU = "one trainer GPU: Trinity-RFT's guide strongly advises more GPUs"
"""The guide's one-GPU caution in short, as a reason says it beside a plan on one A100."""
DOCUMENTED = [(gpu.name, table, row) for gpu in CATALOG.gpu_types for table in gpu.tables for row in table.rows]
DENSE = Fraction(1)
"""A dense model's parameters held per parameter active (`Model.held_per_active`): Offload's weight unscaled."""


def solve_one(gpu: str, **request: Any):
    """The planner's answer for one GPU type."""
    (answer,) = plan(make_query(CATALOG, gpu=gpu, **request), CATALOG)
    return answer


def plan_dicts(answer) -> list[dict[str, Any]]:
    return [p.model_dump(mode="json") for p in answer.plans]


def test_every_documented_cell_is_the_cheapest_plan_at_its_row_and_every_dash_is_infeasible():
    mismatches = []
    for gpu, table, row in DOCUMENTED:
        for model, setting in row.cells:
            answer = solve_one(gpu, model=model, budget_gpus=table.gpus, exact=True, max_model_len=row.max_model_len)
            if setting is None:
                if answer.plans or answer.status != "infeasible":
                    mismatches.append((gpu, table.gpus, model, row.max_model_len, "-", answer.plans[0].setting.label))
                continue
            best = answer.plans[0]
            if (best.setting, best.evidence, best.gpus) != (setting, "documented", table.gpus):
                mismatches.append((gpu, table.gpus, model, row.max_model_len, setting.label, best.setting.label))
    assert mismatches == []


@pytest.mark.parametrize(("gpu", "count"), [(gpu.name, table.gpus) for gpu in CATALOG.gpu_types for table in gpu.tables])
def test_longest_context_on_exactly_a_tables_gpus_is_its_longest_non_dash_row(gpu: str, count: int):
    table = next(t for t in CATALOG.gpu(gpu).tables if t.gpus == count)
    for model in table.models:
        longest = max(row.max_model_len for row in table.rows if row.setting(model) is not None)
        answer = solve_one(gpu, model=model, objective="max_len", budget_gpus=count, exact=True)
        best = answer.plans[0]
        assert (best.max_model_len, best.gpus, best.evidence) == (longest, count, "documented")
        row = next(r for r in table.rows if r.max_model_len == longest)
        assert best.setting == row.setting(model)


def test_six_gpus_reach_a_shorter_context_than_four():
    answer = solve_one("A100-80GB", model="4B", objective="max_len", budget_gpus=6)
    best = answer.plans[0]
    assert answer.status == "optimal"
    assert (best.max_model_len, best.gpus, best.unused_gpus, best.setting.label) == (102400, 4, 2, "Env + Offload + SP=4")
    assert best.rope_scaling_factor == 2.5 and best.max_token_len_per_gpu == 51200
    assert best.source.model_dump() == {"model": "Qwen3-4B", "gpus": 4, "max_model_len": 102400,
                                        "setting": "Env + Offload + SP=4"}


def test_a_length_between_rows_is_documented_by_the_next_row_up_and_says_so():
    # The H20 table for 1 GPU says 'vanilla' at 8192 and 'Env + Offload' at 12288 for Qwen3-4B: 9216 falls to 12288.
    [at_row, between] = (solve_one("H20-96GB", model="4B", max_model_len=length, budget_gpus=1).plans[0]
                         for length in (12288, 9216))
    assert (between.setting.label, between.evidence, between.source) == ("Env + Offload", "documented", at_row.source)
    assert at_row.evidence_text("H20-96GB") == "documented: the H20-96GB table for 1 GPU says 'Env + Offload' at 12288"
    assert between.evidence_text("H20-96GB") == (
        "documented: the H20-96GB table for 1 GPU says 'Env + Offload' at 12288, the row that 9216 falls to")


def test_a_base_model_is_planned_from_its_releases_cells_with_its_own_native_context():
    # Qwen3-4B-Base has Qwen3-4B's shape, so the same cells; its native context is 32768, not 40960, so
    # 102400 tokens take a YaRN factor of 3.125, not 2.5.
    answer = solve_one("A100-80GB", model="4B-Base", objective="max_len", budget_gpus=6)
    best = answer.plans[0]
    assert (answer.model, best.max_model_len, best.gpus, best.setting.label) == (
        "Qwen3-4B-Base", 102400, 4, "Env + Offload + SP=4")
    assert (best.evidence, best.source.model, best.rope_scaling_factor) == ("documented", "Qwen3-4B", 3.125)
    assert best.evidence_text("A100-80GB", answer.model) == (
        "documented: the A100-80GB table for 4 GPUs says 'Env + Offload + SP=4' at 102400 for Qwen3-4B, of the same "
        "shape")
    release = solve_one("A100-80GB", model="4B", objective="max_len", budget_gpus=6).plans[0]
    assert best.evidence_text("A100-80GB", "Qwen3-4B") == release.evidence_text("A100-80GB", "Qwen3-4B")
    # The July 2025 update (native context 262144) takes the same cells, and needs no YaRN at 102400.
    update = solve_one("A100-80GB", model="Qwen/Qwen3-4B-Instruct-2507", objective="max_len", budget_gpus=6).plans[0]
    assert update.model_copy(update={"rope_scaling_factor": 2.5}) == release
    # Within its native context nothing differs from the release's plan but the model's name.
    for length in (8192, 32768):
        base, own = (solve_one("H20-96GB", model=name, max_model_len=length, budget_gpus=4) for name in ("8B-Base", "8B"))
        assert base.plans == own.plans and base.plans[0].rope_scaling_factor is None


def test_plans_of_equal_cost_rank_by_sp_then_env_then_offload():
    # Env and Offload weighing the same: Offload without Env (0.505) ties with Env (0.505); the tie-break puts
    # the setting without Env first, as the reference does.
    weights = Weights(offload=0.01, sp=0.1, env=0.01)
    ranks = {entry[:4]: entry[5] for entry in cost_ranks((2,), "min_gpus", weights, DENSE, "nvlink")}
    assert sorted([(2, 0, 0, 1), (2, 1, 0, 1), (2, 0, 1, 1), (2, 0, 0, 2)], key=ranks.__getitem__) == [
        (2, 0, 0, 1), (2, 0, 1, 1), (2, 1, 0, 1), (2, 0, 0, 2)]
    request = {"model": "Qwen3-4B", "gpu": "A100-80GB", "max_model_len": 4096, "budget_gpus": 2, "exact": True}
    expected = enumerate_plans(CATALOG, objective="cheapest", weights=weights, **request)
    assert [(p["env"], p["offload"], p["sp"], p["cost"]) for p in expected[:3]] == [
        (False, False, 1, 0.5), (False, True, 1, 0.505), (True, False, 1, 0.505)]
    # --top lists no plan that an earlier one dominates: the others cost more on the same GPUs.
    (answer,) = plan(make_query(CATALOG, top=3, weights=weights, **request), CATALOG)
    alternatives = ranked_alternatives(expected, CATALOG.model("Qwen3-4B"), CATALOG.gpu("A100-80GB"), weights)
    assert [p.model_dump(mode="json") for p in answer.plans] == alternatives == expected[:1]


def test_fewest_gpus_for_a_long_context():
    answer = solve_one("A100-80GB", model="8B", objective="min_gpus", max_model_len=65536)
    best = answer.plans[0]
    assert (best.gpus, best.setting.label, best.unused_gpus) == (4, "Env + Offload + SP=4", 0)  # an open budget claims none
    assert best.source.max_model_len == 71680  # 65536 falls between rows: the next row up vouches


def test_fewest_gpu_hours_by_hand_from_the_cost_model():
    # cost = (1/n)(1 + w_off*o)(1 + w_sp*(s-1))(1 + w_env*e), weights 1, 0.1, 0.01: GPU-hours (n x cost) are the
    # setting's, on any n. Qwen3-8B at 65536 on 40 GB A100s: the fewest GPUs, 8, need Env + Offload + SP=8, 2 x 1.7 x
    # 1.01 = 3.434 GPU-hours; Env + SP=8, 1.7 x 1.01 = 1.717, fits from 16 GPUs (the settings of fewer GPU-hours fit
    # no count up to 64), so the fewest GPU-hours are there, on the fewest GPUs that take them.
    query = {"model": "8B", "max_model_len": 65536}
    fewest = solve_one("A100-40GB", objective="min_gpus", **query).plans[0]
    assert (fewest.gpus, fewest.setting.label, fewest.gpu_hours) == (8, "Env + Offload + SP=8", None)
    (answer,) = plan(make_query(CATALOG, gpu="A100-40GB", objective="min_gpu_hours", top=3, **query), CATALOG)
    assert (answer.objective, answer.open_budget, answer.budget_gpus) == ("min_gpu_hours", True, 64)
    hours = float(Fraction(17, 10) * Fraction(101, 100))
    assert [(p.gpus, p.setting.label, p.gpu_hours) for p in answer.plans] == [
        (16, "Env + SP=8", hours), (24, "Env + SP=8", hours), (32, "Env + SP=8", hours)]  # then the shorter steps
    assert answer.plans[0].gpu_hours == pytest.approx(fewest.gpu_hours or 8 * fewest.cost / 2)
    assert solver.plan("8B", gpu="a100-40gb", max_model_len=65536, objective="min_gpu_hours")[0].plans == answer.plans[:1]


@pytest.mark.parametrize(("gpu", "model", "length"), [("A100-80GB", "Qwen3-8B", 32768), ("L40S-48GB", "Qwen3-8B", 16384)])
def test_fewest_gpu_hours_ranked_are_the_reference_ones(gpu: str, model: str, length: int):
    # Brute force: every feasible plan, ranked by GPU-hours, then fewer GPUs (reference.rank_key), less those an
    # earlier one dominates. On 8 A100s the cheapest plan takes all 8 (Env + SP=2), the fewest GPU-hours 6 of them.
    request = {"gpu": gpu, "model": model, "budget_gpus": 8, "max_model_len": length}
    every = enumerate_plans(CATALOG, objective="min_gpu_hours", estimates=True, **request)
    (answer,) = plan(make_query(CATALOG, objective="min_gpu_hours", top=6, **request), CATALOG)
    expected = ranked_alternatives(every, CATALOG.model(model), CATALOG.gpu(gpu))[:6]
    assert len(expected) >= 3
    assert [p.model_dump(mode="json") for p in answer.plans] == expected
    assert all(not check_plan(CATALOG, p, estimates=True, **request) for p in expected)
    if gpu == "A100-80GB":
        assert [(p["gpus"], p["sp"], p["gpu_hours"]) for p in expected[:2]] == [(6, 2, 1.111), (8, 2, 1.111)]
        assert solve_one(gpu, model=model, budget_gpus=8, max_model_len=length).plans[0].gpus == 8


def test_fewest_gpu_hours_without_a_plan():
    # Past any count's reach: no plan within every count up to 64; the longest plan named is the fewest GPU-hours'
    # at its length (Env + Offload + SP=8 on 8 GPUs, as many GPU-hours as on 64), as --minimize gpus names it.
    answer = solve_one("A100-80GB", model="4B", objective="min_gpu_hours", max_model_len=1 << 20)
    assert (answer.status, answer.plans, answer.open_budget) == ("infeasible", (), True)
    assert answer.reason.startswith(
        "1048576 tokens is beyond what the tables and the memory model's estimates allow for Qwen3-4B on A100-80GB "
        "within 64 GPUs: the longest is 222208 on the 1024-token grid (Env + Offload + SP=8 on 8 GPUs, estimated, "
        "extrapolated)")


def test_an_impossible_length_says_how_far_the_tables_go():
    answer = solve_one("H20-96GB", model="14B", max_model_len=131072, budget_gpus=4)
    assert (answer.status, answer.plans) == ("infeasible", ())
    assert answer.reason == (
        "131072 tokens is beyond what the tables and the memory model's estimates allow for Qwen3-14B on H20-96GB "
        "within 4 GPUs: the longest is 112640 (Env + Offload + SP=4 on 4 GPUs, documented); --token-budget auto "
        "trains 131072 tokens: Env + Offload + SP=4 on 4 GPUs with max_token_len_per_gpu = 56320 (estimated)"
    )  # 56320 tokens per GPU: what the documented cell at 112640 holds
    longest = solve_one("H20-96GB", model="14B", objective="max_len", budget_gpus=4).plans[0]
    assert answer.nearest == longest and longest.max_model_len == 112640


def test_only_an_out_of_reach_length_gets_a_nearest_plan():
    assert solve_one("H20-96GB", model="14B", max_model_len=32768, budget_gpus=4).nearest is None  # it has plans
    pinned = solve_one("A100-80GB", model="14B", max_model_len=8192, budget_gpus=1, offload=False)
    assert (pinned.plans, pinned.nearest) == ((), None)  # nothing at all trains with these pins


def test_a_gpu_count_without_a_table_is_inferred_estimated_or_named():
    # 3 GPUs have no table; the 2-GPU table's vanilla at 8192 vouches for vanilla on 3 (more GPUs hold no
    # more per GPU), with or without estimates.
    for estimate in ("never", "auto"):
        answer = solve_one("A100-80GB", model="4B", max_model_len=8192, budget_gpus=3, exact=True, estimate=estimate)
        best = answer.plans[0]
        assert (answer.status, best.gpus, best.setting.label, best.evidence) == ("optimal", 3, "vanilla", "inferred")
        assert best.source == SourceCell(model="Qwen3-4B", gpus=2, max_model_len=8192, setting="vanilla")
    # Past what the tables for fewer GPUs vouch for (SP=4 at 102400 on 4 GPUs, no SP=8 anywhere), 8 GPUs
    # take the memory model's estimate, or, without estimates, the longest the tables vouch for is named.
    answer = solve_one("A100-80GB", model="4B", max_model_len=131072, budget_gpus=8, exact=True)
    best = answer.plans[0]
    assert (answer.status, best.gpus, best.sp, best.evidence, best.source) == ("optimal", 8, 8, "estimated", None)
    assert best.headroom_gb >= 0 and best.memory_gb > 0
    answer = solve_one("A100-80GB", model="4B", max_model_len=131072, budget_gpus=8, exact=True, estimate="never")
    assert answer.status == "infeasible" and answer.reason.startswith(
        "131072 tokens is beyond what the tables allow for Qwen3-4B on A100-80GB on exactly 8 GPUs: the longest is "
        "102400 (Env + Offload + SP=4 on 8 GPUs, inferred)")


def test_a_model_without_tables_is_estimated_or_named():
    answer = solve_one("A100-80GB", model="32B", max_model_len=8192, estimate="never")
    assert (answer.status, answer.reason) == ("infeasible", (
        "the tables have no Qwen3-32B on A100-80GB; the memory model estimates a plan, Env + Offload on 6 GPUs at 8192 "
        "tokens: drop --no-estimate"))
    answer = solve_one("A100-80GB", model="32B", max_model_len=8192)
    assert answer.status == "optimal" and answer.plans[0].evidence == "estimated"
    # Maximising the length: the estimates' plan at its own longest; a plan from the tables alone has no reason.
    answer = solve_one("A100-80GB", model="32B", objective="max_len", budget_gpus=8, estimate="never")
    assert answer.reason.endswith("the memory model estimates a plan, Env + Offload + SP=8 on 8 GPUs at 158720 tokens: "
                                  "drop --no-estimate")
    answer = solve_one("A100-80GB", model="4B", max_model_len=8192, budget_gpus=2, estimate="never")
    assert (answer.status, answer.reason) == ("optimal", None)


def test_estimates_alone_that_find_no_plan_say_nothing_of_the_tables_or_of_no_estimate():
    # --estimate (estimates alone): the tables' documented Env + Offload on 1 A100 at 28672 tokens is not the
    # memory model's plan, and the query never had --no-estimate: its reason names neither.
    answer = solve_one("A100-80GB", model="4B", max_model_len=28672, budget_gpus=1, estimate="only")
    assert (answer.status, answer.reason) == ("infeasible", (
        "28672 tokens is beyond what the memory model's estimates allow for Qwen3-4B on A100-80GB within 1 GPU: the "
        f"longest is 27648 on the 1024-token grid (Env + Offload on 1 GPU, estimated; {ONE_GPU}); --token-budget auto "
        f"trains 28672 tokens: Env + Offload on 1 GPU with max_token_len_per_gpu = 56320 (estimated; {ONE_GPU})"))


def test_on_an_exact_count_a_lowered_budget_reaches_as_far_as_that_count_does():
    # Three 4090s exactly: the default budget's longest there is 7168, --token-budget auto's 15360 on those 3 (on 2
    # it reaches 29696, which an exact count of 3 does not take); neither trains 32768. At margin 0.01, the margin
    # these figures were written for (the card's default, 0.06, is test_smallmargin_s61's subject).
    answer = solve_one("RTX-4090-24GB", model="4B", max_model_len=32768, budget_gpus=3, exact=True, margin=0.01)
    assert answer.reason.endswith(
        "the longest is 7168 on the 1024-token grid (Env + Offload on 3 GPUs, estimated, extrapolated); more trainer "
        "GPUs train 32768 tokens: Env + SP=8 on 8 GPUs (estimated, extrapolated); --token-budget auto reaches 15360 "
        "tokens on the 1024-token grid: Env + Offload on 3 GPUs with max_token_len_per_gpu = 15360 (estimated, "
        "extrapolated)")
    reach = answer.alternatives.token_budget_auto_longest
    assert (reach.gpus, reach.max_model_len, reach.lowered_budget) == (3, 15360, True)
    assert answer.alternatives.solved == {"token_budget_auto", "token_budget_auto_longest"}


def test_the_least_host_plan_is_none_where_there_is_no_plan_or_the_time_limit_left_the_least_unproven(
        monkeypatch: pytest.MonkeyPatch):
    # Qwen2.5-32B at 8192 tokens within 8 H100s: Offload on 3 GPUs needs the least host memory per node, training's
    # 775.1 GiB. No release named, each rank loads the model at start-up (122.0 GiB each): on 5 GPUs, whose training
    # holds 709.1, loading takes 920.2 (it was the least where rank 0 alone loaded it).
    query = make_query(CATALOG, model="Qwen2.5-32B", gpu="h100", budget_gpus=8, max_model_len=8192, time_limit_s=7)
    found = least_host_plan(CATALOG, query, "H100-80GB")
    assert found is not None and (found.gpus, found.offload, found.host_memory_gb) == (3, True, 775.1)
    # One H100 has no plan for it on the tables alone: none, without a model to solve.
    alone = make_query(CATALOG, model="Qwen2.5-32B", gpu="h100", budget_gpus=1, max_model_len=8192, estimate="never")
    assert least_host_plan(CATALOG, alone, "H100-80GB") is None
    # A search the time limit (the query's) stops leaves the least unproven: none either.
    limits, solved = [], solver.solve._solved

    def stopped(cp_solver: cp_model.CpSolver, model: cp_model.CpModel) -> cp_model.CpSolverStatus:
        limits.append(cp_solver.parameters.max_time_in_seconds)
        assert solved(cp_solver, model) == cp_model.OPTIMAL
        return cp_model.FEASIBLE

    monkeypatch.setattr(solver.solve, "_solved", stopped)
    assert least_host_plan(CATALOG, query, "H100-80GB") is None and limits == [7]


def test_pins_that_leave_nothing_are_explained():
    answer = solve_one("A100-80GB", model="14B", max_model_len=8192, budget_gpus=1, offload=False)
    assert answer.status == "infeasible"
    assert answer.reason == ("nothing in the tables and the memory model's estimates for Qwen3-14B on A100-80GB "
                             "within 1 GPU trains with --no-offload (without --no-offload: Env + Offload on 1 GPU "
                             f"trains it, documented; {ONE_GPU})")
    # Past the longest length without the pins too, the pins' note gives that length (no way forward: the fewest
    # GPUs that train it as pinned follow).
    answer = solve_one("A100-80GB", model="4B", max_model_len=32768, budget_gpus=1, offload=False)
    assert answer.reason.endswith("trains with --no-offload (without --no-offload the longest is 28672: Env + Offload "
                                  f"on 1 GPU, documented; {ONE_GPU}); more trainer GPUs train 32768 tokens: Env + SP=2 "
                                  "on 2 GPUs (documented)")
    answer = solve_one("A100-80GB", model="4B", objective="max_len", max_model_len=None, budget_gpus=1, offload=False)
    assert answer.reason.endswith("trains with --no-offload (without --no-offload the longest is 28672: Env + Offload "
                                  f"on 1 GPU, documented; {ONE_GPU})")
    # Without pins there is no such note.
    answer = solve_one("A100-80GB", model="4B", max_model_len=32768, budget_gpus=1)
    assert "without" not in answer.reason


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (dict(model="4B", objective="max_len"), "--maximize len needs a GPU budget: --gpus N"),
        (dict(model="4B", objective="max_len", budget_gpus=4, max_model_len=8192), "--maximize len chooses the length"),
        (dict(model="4B"), "a cheapest plan needs a length: --len L"),
        (dict(model="4B", objective="min_gpus"), "--minimize gpus needs a length"),
        ({"model": "4B", "objective": "min_gpu_hours"}, "--minimize gpu-hours needs a length: --len L"),
        ({"model": "4B", "objective": "min_gpu_hours", "max_model_len": 8192, "budget_gpus": 4, "exact": True},
         "--minimize gpu-hours chooses the GPU count: drop --exact"),
        (dict(model="4B", max_model_len=8192, exact=True), "--exact needs --gpus N"),
        (dict(model="4B", max_model_len=8192, sp=3), "--sp 3 is not allowed for Qwen3-4B: SP=3 does not divide its 32 attention heads"),
        (dict(model="14B", max_model_len=8192, sp=16), "--sp 16 is not allowed for Qwen3-14B: SP=16 does not divide its 40 attention heads"),
        (dict(model="30B-A3B", max_model_len=8192, sp=16, node_gpus=16), None),  # 4 KV heads divide 16
        (dict(model="30B-A3B", max_model_len=8192, sp=32),
         "--sp 32 is not allowed: SP=32 is more GPUs than nodes of 8 (--node-gpus) hold"),
        (dict(model="4B", max_model_len=8192, sp=4, budget_gpus=6, exact=True),
         "--sp 4 is not allowed: SP=4 does not divide 6 GPUs (the degrees that divide the 6 trainer GPUs"),
        (dict(model="4B", max_model_len=0), "--len must be a whole number from 1 to 16777216, got 0"),
        (dict(model="4B", max_model_len=8192, top=101), "--top must be a whole number from 1 to 100, got 101"),
        (dict(model="9B", max_model_len=8192), "unknown model '9B'"),
        # the limits are inclusive; no host memory at all is refused in one line, as a negative amount is
        ({"model": "4B", "max_model_len": 8192, "host_ram_gb": float(MAX_HOST_RAM_GB), "rollout_gpus": MAX_GPUS}, None),
        ({"model": "4B", "max_model_len": 8192, "host_ram_gb": 0.0},
         "--host-ram must be above 0 and at most 49152 GB, got 0"),
        ({"model": "4B", "max_model_len": 8192, "host_ram_gb": 1e300},  # not its 301 digits
         "--host-ram must be above 0 and at most 49152 GB, got 1e300"),
        ({"model": "4B", "max_model_len": 8192, "rollout_gpus": MAX_GPUS + 1},
         "--rollout-gpus must be a whole number from 0 to 65536, got 65537"),
        ({"model": "4B", "max_model_len": 8192, "sp": 4, "node_gpus": 3},
         ("--sp 4 is not allowed: SP=4 is more GPUs than nodes of 3 (--node-gpus) hold, and an SP group must fit "
          "in one")),
    ],
)
def test_requests_that_make_no_sense_are_refused(request_: dict[str, Any], message: str | None):
    if message is None:
        make_query(CATALOG, **request_)
        return
    with pytest.raises(QueryError) as caught:
        make_query(CATALOG, **request_)
    assert str(caught.value).startswith(message)


def test_the_same_query_gives_the_same_answer_with_more_workers():
    request = dict(model="8B", objective="max_len", budget_gpus=6, top=10)
    one = plan(make_query(CATALOG, **request), CATALOG)
    many = plan(make_query(CATALOG, workers=8, seed=7, **request), CATALOG)
    assert [a.model_dump() for a in one] == [a.model_dump() for a in many]


weights = st.builds(
    Weights,
    offload=st.decimals(min_value="0", max_value="3", places=2).map(float),
    sp=st.decimals(min_value="0", max_value="1", places=2).map(float),
    env=st.decimals(min_value="0", max_value="0.2", places=3).map(float),
)
row_lengths = sorted({row.max_model_len for _, _, row in DOCUMENTED})


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any]:
    objective = draw(st.sampled_from(["cheapest", "max_len", "min_gpus"]))
    request: dict[str, Any] = {
        "gpu": draw(st.sampled_from([gpu.name for gpu in CATALOG.documented_gpu_types])),
        # Qwen3-30B-A3B (4 KV heads: SP 8 is a multiple) and Qwen2.5-7B-Instruct (28 heads, 4 KV heads) too.
        "model": draw(st.sampled_from(["Qwen3-0.6B", "Qwen3-1.7B", "Qwen3-4B", "Qwen3-8B", "Qwen3-14B", "Qwen3-8B-Base",
                                       "Qwen3-0.6B-Base", "Qwen3-30B-A3B", "Qwen2.5-7B-Instruct"])),
        "objective": objective,
        "budget_gpus": draw(st.integers(min_value=1, max_value=8)),
        "exact": draw(st.booleans()),
        "sp": draw(st.none() | st.sampled_from([1, 2, 4, 8])),
        "env": draw(st.none() | st.booleans()),
        "offload": draw(st.none() | st.booleans()),
        "weights": draw(weights),
        "node_gpus": draw(st.sampled_from([4, 8])),
        "rollout_gpus": draw(st.sampled_from([0, 0, 1, 2, 4, 6])),
        "train_batch_size": draw(st.none() | st.sampled_from([1, 2, 3, 6, 10, 96, 256, 768])),
        # --margin holds back estimates, and a documented plan's memory figures are held to it too.
        "margin": draw(st.none() | st.sampled_from([0.0, 0.1, 0.3])),
    }
    if objective != "max_len":
        request["max_model_len"] = draw(st.sampled_from(row_lengths) | st.integers(min_value=1, max_value=160_000))
    return request


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(request=requests(), top=st.integers(min_value=1, max_value=6), estimates=st.booleans())
def test_the_solver_ranks_plans_exactly_as_the_reference_enumerator(request: dict[str, Any], top: int,
                                                                    estimates: bool):
    # With estimates, a plan the tables vouch for is also an alternative to an estimate it would otherwise trail.
    try:
        query = make_query(CATALOG, top=top, estimate="auto" if estimates else "never", **request)
    except QueryError:
        assume(False)
    (answer,) = plan(query, CATALOG)
    event("has a plan" if answer.plans else "no plan")
    expected = ranked_alternatives(enumerate_plans(CATALOG, estimates=estimates, **request),
                                   CATALOG.model(request["model"]), CATALOG.gpu(request["gpu"]), request["weights"])
    assert plan_dicts(answer) == expected[:top]
    assert answer.status == ("optimal" if expected else "infeasible")
    assert (answer.reason is None) == bool(expected)
    for planned in plan_dicts(answer):
        checked = {k: v for k, v in request.items() if k != "objective"}
        assert check_plan(CATALOG, planned, estimates=estimates, **checked) == []


def test_a_tabled_plan_stands_at_any_margin_and_its_memory_figures_are_held_to_it():
    # docs/memory.md, "Choosing a margin": --margin holds back estimates only; a documented plan stands at any margin,
    # its memory figures at --margin (else the memory model's 0.01). Qwen3-8B at 32768 on 4 A100s: SP=4 and
    # Env + Offload + SP=2 (offload True), both documented, the same peak at every margin, the room the margin keeps
    # taken off it (at 0.3 SP=4 is 10.67 GiB short, and still the plan). The reference holds them to the same margin.
    request = {"gpu": "A100-80GB", "model": "Qwen3-8B", "max_model_len": 32768, "budget_gpus": 4}
    figures = {}
    for margin in (None, 0.1, 0.3):
        planned = plan_dicts(solve_one(top=2, margin=margin, **request))
        assert planned == ranked_alternatives(enumerate_plans(CATALOG, objective="cheapest", margin=margin, **request),
                                              CATALOG.model("Qwen3-8B"), CATALOG.gpu("A100-80GB"))[:2]
        assert all(check_plan(CATALOG, p, margin=margin, **request) == [] for p in planned)
        figures[margin] = [(p["sp"], p["offload"], p["evidence"], p["memory_gb"], p["headroom_gb"], p["margin_gb"])
                           for p in planned]
    assert figures == {
        None: [(4, False, "documented", 61.07, 10.21, 0.72), (2, True, "documented", 48.73, 24.8, 0.74)],
        0.1: [(4, False, "documented", 61.07, 3.73, 7.2), (2, True, "documented", 48.73, 18.12, 7.43)],
        0.3: [(4, False, "documented", 61.07, -10.67, 21.6), (2, True, "documented", 48.73, 3.26, 22.28)]}


def test_a_measured_length_is_listed_after_an_estimate_of_the_same_combination():
    # Qwen3-14B on exactly 8 A100s: Env + Offload + SP=4 reaches 93184 by estimate and 92160 by the tables (a
    # 4-GPU cell on more GPUs): the second is listed too, the cheaper estimates at shorter lengths are not.
    answer = solve_one("A100-80GB", model="14B", objective="max_len", budget_gpus=8, exact=True, top=3, estimate="auto")
    assert [(p.setting.label, p.max_model_len, p.evidence) for p in answer.plans] == [
        ("Env + Offload + SP=8", 186368, "estimated"), ("Env + SP=8", 108544, "estimated"),
        ("Env + Offload + SP=4", 92160, "inferred")]


def test_an_equal_cost_is_no_gain_in_the_ranking():
    # Offload weighing nothing: Env + SP=8 costs what Env + Offload + SP=8 does on the same 8 GPUs, and is shorter.
    weights = Weights(offload=0.0, sp=0.1, env=0.01)
    answer = solve_one("A100-80GB", model="14B", objective="max_len", budget_gpus=8, exact=True, top=3,
                       estimate="auto", weights=weights)
    costs = [p.cost for p in answer.plans]
    assert answer.plans[0].setting.label == "Env + Offload + SP=8" and costs[0] not in costs[1:]


def test_a_length_too_long_for_the_fewest_gpus_names_the_fewest_gpus_that_reach_the_longest():
    # Asked for the fewest GPUs, the nearest plan is the longest length on the fewest GPUs that reach it
    # (the longest length alone ranks more GPUs first, since they cost less per step).
    answer = solve_one("H20-96GB", model="14B", max_model_len=307200, objective="min_gpus")
    assert answer.status == "infeasible" and answer.nearest is not None
    longest = solve_one("H20-96GB", model="14B", objective="max_len", budget_gpus=64).plans[0]
    assert (answer.nearest.max_model_len, answer.nearest.gpus) == (longest.max_model_len, 8) and longest.gpus > 8
    fewer = solve_one("H20-96GB", model="14B", max_model_len=longest.max_model_len, budget_gpus=7)
    assert fewer.plans == ()  # no fewer GPUs reach that length
    assert f"the longest is {longest.max_model_len} on the 1024-token grid (Env + Offload + SP=8 on 8 GPUs, estimated, extrapolated)" in answer.reason


def test_a_counts_own_table_decides_against_a_smaller_tables_cell(edited_a100_tables):
    # A made-up 4-GPU cell, Env + Offload + SP=2 for Qwen3-0.6B at 81920, would vouch for that setting on 6
    # GPUs; but the 6-GPU table says '-' at 71680 (nothing it tried, Env + Offload + SP=2 included, trained),
    # so the 6-GPU table decides: no plan. On 8 GPUs, which have no table, the cell vouches.
    row = "{max_model_len: 81920, cells: {Qwen3-0.6B: SP=4,"

    def edit(text: str) -> str:
        assert text.count(row) == 1
        return text.replace(row, "{max_model_len: 81920, cells: {Qwen3-0.6B: Env + Offload + SP=2,")

    catalog = edited_a100_tables(edit)
    request = dict(model="0.6B", gpu="a100", max_model_len=81920, exact=True, estimate="never")
    (on_six,) = plan(make_query(catalog, budget_gpus=6, **request), catalog)
    assert on_six.plans == ()
    (on_eight,) = plan(make_query(catalog, budget_gpus=8, sp=2, **request), catalog)
    assert (on_eight.plans[0].evidence, on_eight.plans[0].source) == (
        "inferred", SourceCell(model="Qwen3-0.6B", gpus=4, max_model_len=81920, setting="Env + Offload + SP=2"))
    # The reference enumerator applies the same rule (its own code for it runs only on tables edited so).
    for budget, sp, answer in ((6, None, on_six), (8, 2, on_eight)):
        expected = enumerate_plans(catalog, gpu="A100-80GB", model="Qwen3-0.6B", objective="cheapest", budget_gpus=budget,
                                   max_model_len=81920, exact=True, sp=sp)
        assert [p.model_dump(mode="json") for p in answer.plans] == ranked_alternatives(
            expected, catalog.model("Qwen3-0.6B"), catalog.gpu("A100-80GB"))[:1]


def test_no_smaller_table_vouches_past_64_gpus_even_for_a_count_with_a_table(edited_a100_tables):
    # A made-up table for 128 GPUs: its own cell decides there (Env at 131072), and a smaller table's
    # vanilla at 8192 does not vouch past 64 GPUs, as explain and the labels of plans say.
    catalog = edited_a100_tables(lambda text: text + made_up_table(128, "Qwen3-4B", 131072, "Env"))
    request = dict(model="4B", gpu="a100", budget_gpus=128, exact=True, max_model_len=8192, estimate="never")
    (pinned,) = plan(make_query(catalog, env=False, **request), catalog)
    assert pinned.plans == ()
    (free,) = plan(make_query(catalog, **request), catalog)
    assert (free.plans[0].setting.label, free.plans[0].evidence, free.plans[0].source) == (
        "Env", "documented", SourceCell(model="Qwen3-4B", gpus=128, max_model_len=131072, setting="Env"))


def test_no_smaller_tables_cell_meets_a_counts_own_out_of_memory_in_the_shipped_tables():
    for gpu in CATALOG.documented_gpu_types:
        for model in {name for table in gpu.tables for name in table.models}:
            shape = CATALOG.model(model)
            tables = [table for table in gpu.tables if model in table.models]
            rows, settings, columns = table_cells(gpu.model_copy(update={"tables": tuple(tables)}), shape)
            for table in tables:
                for length in (row.max_model_len for row in table.rows):
                    for setting in tried_settings(shape, table.gpus):
                        if refuting_row(shape, rows, settings, table.gpus, setting, length) is None:
                            continue
                        smaller = [(n, row) for n, row in rows if 2 <= n < table.gpus]
                        assert vouching_cell(shape, smaller, settings, table.gpus, setting, length,
                                             columns=columns) is None, (
                            gpu.name, model, table.gpus, length, setting.label)


def test_a_count_past_64_gpus_is_named_as_out_of_reach_with_or_without_estimates():
    for estimate in ("never", "auto"):
        answer = solve_one("A100-80GB", model="8B", max_model_len=8192, budget_gpus=128, exact=True, estimate=estimate)
        assert answer.plans == () and "; estimated plans go up to 64 trainer GPUs; fewer trainer GPUs" in answer.reason


def test_ranked_longest_lengths_are_distinct_combinations_each_at_its_longest():
    answer = solve_one("A100-80GB", model="14B", objective="max_len", budget_gpus=7, exact=True, top=3)
    combinations = [(p.gpus, p.env, p.offload, p.sp) for p in answer.plans]
    assert len(set(combinations)) == 3
    assert [(p.setting.label, p.max_model_len) for p in answer.plans] == [
        ("Env + Offload", 24576), ("Env", 12288), ("vanilla", 8192)]


def test_ranked_longest_lengths_leave_out_plans_an_earlier_one_dominates():
    # Offload + SP=4 on 4 GPUs reaches 71680 like SP=4 alone at twice the cost; Env + Offload + SP=2 on 6 GPUs
    # reaches 51200, shorter than SP=4 on 4 GPUs, which is cheaper: neither is an alternative.
    answer = solve_one("A100-80GB", model="4B", objective="max_len", budget_gpus=6, top=6)
    assert [(p.gpus, p.setting.label, p.max_model_len) for p in answer.plans] == [
        (4, "Env + Offload + SP=4", 102400), (4, "Env + SP=4", 81920), (4, "SP=4", 71680),
        (2, "Env + Offload + SP=2", 51200), (6, "SP=2", 40960), (4, "Env + SP=2", 40960)]
    for later, plan_ in enumerate(answer.plans):
        for earlier in answer.plans[:later]:
            assert earlier.max_model_len >= plan_.max_model_len
            assert earlier.gpus > plan_.gpus or earlier.cost > plan_.cost


def test_a_no_env_pin_lets_the_memory_model_estimate_without_env():
    answer = solve_one("A100-80GB", model="0.6B", max_model_len=30720, budget_gpus=3, exact=True, env=False)
    assert answer.plans == () and answer.reason.startswith(
        "30720 tokens is beyond what the tables and the memory model's estimates allow for Qwen3-0.6B on A100-80GB on "
        "exactly 3 GPUs with --no-env: the longest is 25600 on the 1024-token grid (Offload on 3 GPUs, estimated)")
    with_env = solve_one("A100-80GB", model="0.6B", max_model_len=26624, budget_gpus=3, exact=True, offload=True)
    assert with_env.plans[0].setting.label == "Env + Offload" and with_env.plans[0].evidence == "inferred"


def test_an_offload_failure_on_fewer_gpus_caps_the_estimates_on_more():
    # With Offload a GPU holds none of the states, so the same tokens take the same memory on any count: the
    # A100 table for 1 GPU says nothing trains Qwen3-0.6B at 32768 (Env + Offload ran out of memory), so no
    # count estimates Env + Offload at 30720 (whose next row up that is), though the memory model alone would.
    pinned = {"model": "0.6B", "max_model_len": 30720, "exact": True, "sp": 1, "offload": True}
    for gpus in (3, 8, 16):
        assert solve_one("A100-80GB", budget_gpus=gpus, **pinned).plans == ()
    assert solve_one("A100-80GB", budget_gpus=3, estimate="only", **pinned).plans[0].max_model_len == 30720
    # SP=2 halves the tokens per GPU: the 1-GPU table says nothing of it.
    assert solve_one("A100-80GB", budget_gpus=8, **{**pinned, "sp": 2}).plans[0].max_model_len == 30720
    # solve memory and --explain name the table, and why it holds on more GPUs.
    tables = solver.estimate_memory("0.6B", "a100", 3, 30720, env=True, offload=True).tables
    assert (tables.trains, tables.source.gpus, tables.source.max_model_len) == (False, 1, 32768)
    (explained,) = solver.plan("0.6B", gpu="a100", budget_gpus=8, exact=True, max_model_len=30720, offload=True,
                               explain=True)
    assert any("Env + Offload 72.0 GiB of 73.5 usable, but the A100-80GB table for 1 GPU says it ran out of memory at "
               "32768, and with Offload each GPU holds as much on any count" in reason.detail
               for reason in explained.explanation)


def test_an_offload_failure_on_fewer_gpus_caps_the_same_setting_without_offload_on_more():
    # Without Offload a GPU holds the states besides all that the setting with Offload holds, on any count: where the
    # A100 table for 1 GPU says Env + Offload ran out of memory for Qwen3-0.6B at 32768 ('-'), Env alone runs out at
    # 30720 (whose next row up that is) on 8 or 16 GPUs too, though the memory model alone fits it there. Offload
    # never makes a plan stop fitting: both are estimated up to 28672 at most.
    pinned = {"model": "0.6B", "exact": True, "sp": 1, "env": True}
    for gpus in (8, 16):
        for offload in (False, True):
            assert solve_one("A100-80GB", budget_gpus=gpus, max_model_len=30720, offload=offload, **pinned).plans == ()
            longest = solve_one("A100-80GB", objective="max_len", budget_gpus=gpus, offload=offload, **pinned)
            assert longest.plans[0].max_model_len == 28672
    alone = solve_one("A100-80GB", budget_gpus=8, max_model_len=30720, offload=False, estimate="only", **pinned)
    assert alone.plans[0].max_model_len == 30720
    # SP=2 halves the tokens per GPU: the 1-GPU table says nothing of it.
    assert solve_one("A100-80GB", budget_gpus=8, max_model_len=30720, offload=False, **{**pinned, "sp": 2}).plans
    # solve memory and --explain name the table, and why it holds without Offload on more GPUs.
    tables = solver.estimate_memory("0.6B", "a100", 8, 30720, env=True).tables
    assert (tables.trains, tables.source.gpus, tables.source.max_model_len) == (False, 1, 32768)
    (explained,) = solver.plan("0.6B", gpu="a100", budget_gpus=8, exact=True, max_model_len=30720, sp=1, env=True,
                               offload=False, explain=True)
    assert any("Env 73.2 GiB of 73.5 usable, but the A100-80GB table for 1 GPU says it ran out of memory at 32768, "
               "and with Offload each GPU holds as much on any count, without it more" in reason.detail
               for reason in explained.explanation)


def test_a_failure_without_offload_on_fewer_gpus_does_not_cap_the_same_setting_on_more():
    # Without Offload more GPUs hold less of the states each: the A100 table for 2 GPUs says Env alone ran out of
    # memory for Qwen3-4B at 20480 (SP=2 there), which says nothing of 16 GPUs, where Env alone is estimated to 26624.
    longest = solve_one("A100-80GB", model="4B", objective="max_len", budget_gpus=16, exact=True, sp=1, env=True,
                        offload=False)
    assert (longest.plans[0].max_model_len, longest.plans[0].evidence) == (26624, "estimated")
    # The count's own table caps its setting as it is, not as with Offload: the A100 table for 4 GPUs documents
    # Qwen3-0.6B with Env + SP=2 at 51200 and says it ran out of memory at 61440 (SP=4 there); no estimate goes between.
    own = solve_one("A100-80GB", model="0.6B", objective="max_len", budget_gpus=4, exact=True, sp=2, env=True,
                    offload=False)
    assert (own.plans[0].max_model_len, own.plans[0].evidence) == (51200, "documented")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(model=st.sampled_from(["0.6B", "1.7B", "4B", "8B", "14B", "32B", "30B-A3B", "Qwen2.5-7B", "Llama-3.1-70B"]),
       gpu=st.sampled_from(["a100", "h20", "h100", "a800", "h200", "l40s"]), gpus=st.sampled_from([2, 3, 4, 8, 16]),
       env=st.booleans(), sp=st.sampled_from([1, 2, 4]))
def test_offload_and_more_gpus_never_make_the_planner_shorten_a_setting(
        model: str, gpu: str, gpus: int, env: bool, sp: int):
    # The planner's longest length for a pinned setting, tables and estimates together: Offload never shortens it,
    # nor do twice the GPUs (from two on: a table for one GPU vouches for no other count; whole nodes past 8).
    assume(gpus % sp == 0 and CATALOG.model(model).num_attention_heads % sp == 0)

    def longest(count: int, offload: bool) -> int:
        answer = solve_one(gpu, model=model, objective="max_len", budget_gpus=count, exact=True, sp=sp, env=env,
                           offload=offload)
        return max((p.max_model_len for p in answer.plans), default=0)

    without, with_offload = longest(gpus, False), longest(gpus, True)
    assert without <= with_offload
    assert without <= longest(2 * gpus, False) and with_offload <= longest(2 * gpus, True)


def test_a_model_cp_sat_rejects_is_a_defect_not_a_time_out(monkeypatch: pytest.MonkeyPatch):
    class Rejecting(cp_model.CpSolver):
        def solve(self, model: cp_model.CpModel, *args: Any) -> cp_model.CpSolverStatus:
            return cp_model.MODEL_INVALID

        def status_name(self, status: Any = None) -> str:
            return "MODEL_INVALID"

    monkeypatch.setattr(solver.solve.cp_model, "CpSolver", Rejecting)
    with pytest.raises(RuntimeError, match="CP-SAT answered MODEL_INVALID"):
        plan(make_query(CATALOG, model="4B", gpu="a100", max_model_len=8192), CATALOG)

    class RejectingPlacements(cp_model.CpSolver):  # the cluster searches in a thread of its own
        def solve(self, model: cp_model.CpModel, *args: Any) -> cp_model.CpSolverStatus:
            if threading.current_thread() is threading.main_thread():
                return super().solve(model, *args)
            return cp_model.MODEL_INVALID

    monkeypatch.setattr(solver.solve.cp_model, "CpSolver", RejectingPlacements)
    fleet = solver.tables.Fleet.model_validate({
        "pools": [{"name": "a", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}],
        "jobs": [{"name": "j", "model": "Qwen3-4B", "max_model_len": 8192}]})
    with pytest.raises(RuntimeError, match="CP-SAT answered MODEL_INVALID"):
        solver.place(fleet, catalog=CATALOG)


@pytest.mark.parametrize(("gpu", "evidence"), [
    ("H100-80GB", "estimated"), ("H800-80GB", "estimated"),
    ("A800-80GB", "documented")])  # the A100's memory, whose tables are its own
def test_a_gpu_type_with_at_least_as_much_memory_caps_the_estimates(gpu: str, evidence: str):
    # The A100-80GB table for 4 GPUs says 'Env + Offload + SP=4' for Qwen3-4B at 102400 and '-' at 112640: on 4
    # GPUs reporting as much memory or less, no estimate goes past 102400 (the memory model alone reaches 110592).
    answer = solve_one(gpu, model="4B", objective="max_len", budget_gpus=4, exact=True)
    alone = solve_one(gpu, model="4B", objective="max_len", budget_gpus=4, exact=True, estimate="only")
    assert (answer.plans[0].max_model_len, answer.plans[0].evidence) == (102400, evidence)
    assert alone.plans[0].max_model_len == 110592
    # A GPU type with more memory than every tabled one is not capped by them.
    roomy = solve_one("H200-141GB", model="4B", objective="max_len", budget_gpus=4, exact=True)
    assert roomy.plans[0].max_model_len > 112640


def _ctrl_c_in_the_first_gpu_types_solve(monkeypatch: pytest.MonkeyPatch,
                                         stops_needed: int) -> tuple[threading.Event, list[cp_model.CpSolver]]:
    """Fake CP-SAT solves: in the main thread (the first GPU type's), KeyboardInterrupt once a worker's solve runs, as
    Ctrl-C there; in a worker, a solve that runs until `stop_search` has been called `stops_needed` times (CP-SAT
    loses a stop that comes as its search is set up). The event set then, and the solvers each stop was for."""
    solving, released, stops = threading.Event(), threading.Event(), []
    main = threading.main_thread()

    def solve(self, model, callback=None):
        if threading.current_thread() is main:
            assert solving.wait(timeout=30)
            raise KeyboardInterrupt
        solving.set()
        assert released.wait(timeout=30)
        return cp_model.UNKNOWN

    def stop_search(self):
        stops.append(self)
        if len(stops) >= stops_needed:
            released.set()

    monkeypatch.setattr(cp_model.CpSolver, "solve", solve)
    monkeypatch.setattr(cp_model.CpSolver, "stop_search", stop_search)
    return released, stops


def test_ctrl_c_stops_the_other_gpu_types_solves_too(monkeypatch: pytest.MonkeyPatch):
    # Ctrl-C reaches the thread that solves the first GPU type; the other GPU types' solves, in worker threads,
    # must stop too (the process waits for them before it exits), not run on to their time limit.
    released, _ = _ctrl_c_in_the_first_gpu_types_solve(monkeypatch, stops_needed=1)
    query = make_query(CATALOG, model="8B", max_model_len=8192, budget_gpus=4, time_limit_s=60)
    assert len(query.gpus) == 2  # A100 and H20: the H20 is solved in a worker thread
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        plan(query, CATALOG)  # returns once the worker's solve is stopped (it waits for it)
    assert released.is_set() and time.monotonic() - started < 10


def test_ctrl_c_stops_a_worker_again_where_its_first_stop_was_lost(monkeypatch: pytest.MonkeyPatch):
    # CP-SAT takes a stop only once its search is set up: one that comes as the solve starts is lost, and Ctrl-C's
    # handler stops the running solves again until they end (here the second stop ends the worker's solve).
    released, stops = _ctrl_c_in_the_first_gpu_types_solve(monkeypatch, stops_needed=2)
    with pytest.raises(KeyboardInterrupt):
        plan(make_query(CATALOG, model="8B", max_model_len=8192, budget_gpus=4, time_limit_s=60), CATALOG)
    assert released.is_set() and len(stops) >= 2 and all(stop is stops[0] for stop in stops)  # the worker's solver


def test_a_solve_that_starts_after_ctrl_c_stopped_its_group_does_not_run(monkeypatch: pytest.MonkeyPatch):
    solved = []
    monkeypatch.setattr(cp_model.CpSolver, "solve", lambda self, model, callback=None: solved.append(model))
    group = solver.solve._SolveGroup()
    group.stop()
    with pytest.raises(KeyboardInterrupt):
        group.solve(cp_model.CpSolver(), cp_model.CpModel())
    assert solved == []


def refuted_two_gpu_cells(tmp_path: Path) -> Catalog:
    """The shipped catalogue with a user's Mine-80GB cells of Qwen3-8B (written under `tmp_path`), kept though they
    contradict: a 2-GPU table that trained Env + SP=2 at 16384, and a 4-GPU table that ran out of memory there."""
    cells_file = tmp_path / "mine.yaml"
    cells_file.write_text(
        "gpu: Mine-80GB\nmemory_gb: 80\nsource: mine\ntables:\n"
        "  - {gpus: 2, section: '2 x mine', models: [Qwen3-8B], rows: [{max_model_len: 8192, cells: {Qwen3-8B: Env}},\n"
        "      {max_model_len: 16384, cells: {Qwen3-8B: Env + SP=2}}]}\n"
        "  - {gpus: 4, section: '4 x mine', models: [Qwen3-8B], rows: [\n"
        "      {max_model_len: 8192, cells: {Qwen3-8B: vanilla}}, {max_model_len: 16384, cells: {Qwen3-8B: '-'}}]}\n",
        encoding="utf-8")
    return load_catalog().with_cells(cells_file, keep_contradictions=True)


def test_the_models_witnesses_vouch_exactly_where_vouching_cell_finds_a_cell(tmp_path):
    # The CP-SAT model's evidence (`PlanningData.witnesses`) and the plan's label (`vouching_cell`) are one rule
    # written twice: over the shipped tables, and cells of a user's where a 4-GPU table refutes a 2-GPU cell
    # (which then vouches for 4 GPUs no more), every count up to 8, every setting and every row, they agree.
    catalog = refuted_two_gpu_cells(tmp_path)
    checked = 0
    for gpu_type in (g for g in catalog.gpu_types if g.tables):
        for model in (m for m in catalog.models if m.tables_of is None and table_cells(gpu_type, m).rows):
            query = make_query(catalog, model=model.name, gpu=gpu_type.name, budget_gpus=8, max_model_len=4096,
                               estimate="never")
            data = prepare(catalog, gpu_type.name, query)
            cells = table_cells(gpu_type, model)
            larger = larger_tables(catalog, gpu_type.name, model)
            lengths = sorted({row for _, row in cells.rows} | {row - 1024 for _, row in cells.rows})
            for n in range(1, 9):
                for sp in (s for s in range(1, n + 1) if n % s == 0 and not sp_rule_violation(
                        model.num_attention_heads, model.num_key_value_heads, s)):
                    for env, offload in ((False, False), (True, False), (True, True)):
                        for length in lengths:
                            allowed = any(w[0] == n and w[2] >= length and not w[6] and env >= w[3] and offload >= w[4]
                                          and sp >= w[5] for w in data.witnesses)
                            setting = Setting(env=env, offload=offload, sp=sp)
                            found = vouching_cell(model, cells.rows, cells.settings, n, setting, length,
                                                  columns=cells.columns, larger=larger)
                            assert allowed == (found is not None), (gpu_type.name, model.name, n, env, offload, sp,
                                                                    length)
                            checked += 1
    assert checked > 10_000
    refuted = make_query(catalog, model="8B", gpu="Mine-80GB", budget_gpus=4, exact=True, max_model_len=16384,
                         sp=2, env=True, offload=False, estimate="never")
    assert plan(refuted, catalog)[0].plans == ()  # the 4-GPU '-' refutes the 2-GPU cell on 4 GPUs


def test_a_tables_cells_of_one_setting_give_one_witness_per_count_the_longest():
    # A witness's length only bounds the plan's from above: of the cells of one table with one setting, only the
    # longest vouches for a plan the others do not (Qwen3-8B on four A100s: vanilla at 4096 and 8192, SP=4 at 32768
    # to 40960, Env + Offload + SP=4 at 61440 to 102400), so the model keeps that one for each count it vouches for.
    query = make_query(CATALOG, model="8B", gpu="a100", budget_gpus=6, max_model_len=8192, estimate="never")
    data = prepare(CATALOG, "A100-80GB", query)
    keys = [(n, m, env, offload, sp, estimated) for n, m, _, env, offload, sp, estimated in data.witnesses]
    assert len(keys) == len(set(keys))
    on_four = {(env, offload, sp): length for n, m, length, env, offload, sp, _ in data.witnesses if n == m == 4}
    assert on_four == {(0, 0, 1): 8192, (1, 0, 1): 12288, (0, 0, 2): 20480, (1, 0, 2): 28672, (0, 0, 4): 40960,
                       (1, 0, 4): 51200, (1, 1, 4): 102400}


def test_an_estimate_alone_takes_no_cell_as_a_witness():
    # --estimate (the memory model alone): Qwen3-8B at 8192 tokens within 6 A100s, which the tables train vanilla,
    # gets the memory model's Env plans, every one estimated; its data has no cells, and none may be added to it.
    query = make_query(CATALOG, model="8B", gpu="a100", budget_gpus=6, max_model_len=8192, top=3, estimate="only")
    [answer] = plan(query, CATALOG)
    assert [(p.gpus, p.env, p.offload, p.sp, p.evidence) for p in answer.plans] == [
        (6, True, False, 1, "estimated"), (5, True, False, 1, "estimated"), (4, True, False, 1, "estimated")]
    data = prepare(CATALOG, "A100-80GB", query)
    assert (data.rows, dict(data.settings), dict(data.columns)) == ((), {}, {})
    assert all(witness[6] == 1 for witness in data.witnesses)
    with pytest.raises(TypeError):
        data.settings[6, 8192] = None  # type: ignore[index]
    with pytest.raises(TypeError):
        data.columns[6] = "Qwen3-8B"  # type: ignore[index]


def test_a_models_table_cells_are_read_only():
    # `table_cells` is cached per GPU type and model: every caller gets the same cells, which none may change.
    cells = table_cells(CATALOG.gpu("A100-80GB"), CATALOG.model("Qwen3-8B"))
    assert cells is table_cells(CATALOG.gpu("A100-80GB"), CATALOG.model("Qwen3-8B"))
    assert cells.settings[4, 4096].label == "vanilla" and cells.columns[4] == "Qwen3-8B"
    with pytest.raises(TypeError):
        cells.settings[4, 4096] = None  # type: ignore[index]
    with pytest.raises(TypeError):
        cells.columns[4] = "Qwen3-14B"  # type: ignore[index]


@pytest.mark.parametrize("gpu", ["A100-80GB", "H20-96GB"])
def test_questions_of_the_same_planning_inputs_have_the_same_data_and_answers_on_it(gpu: str):
    # What `prepare` reads of a query is its `PlanningInputs`: questions that differ elsewhere (the length,
    # exactness, host memory, the SP and Offload pins, the rollout, the plans asked for, the time limit) have equal
    # data, and answered on data prepared once (as the cluster's planner asks them), they get the plain answers.
    catalog = load_catalog()
    base = make_query(catalog, model="Qwen3-8B", gpu=gpu, budget_gpus=8, exact=True, max_model_len=8192)
    variants = [base, *(base.model_copy(update=change) for change in (
        {"max_model_len": 40960}, {"max_model_len": 131072}, {"exact": False}, {"host_ram_gb": 256.0},
        {"offload": False}, {"offload": True}, {"sp": 2}, {"rollout_gpus": 4}, {"top": 3}, {"time_limit_s": 5.0}))]
    inputs = PlanningInputs.of(gpu, base)
    assert {PlanningInputs.of(gpu, query) for query in variants} == {inputs}
    data = prepare_inputs(catalog, inputs)
    assert all(prepare(catalog, gpu, query) == data for query in variants)
    for query in variants:
        assert answer_for(catalog, query, gpu, explained=False, data=data) == answer_for(
            catalog, query, gpu, explained=False)
    # Env pinned off changes the estimates, and so the inputs: data prepared without the pin is refused.
    without_env = base.model_copy(update={"env": False})
    assert PlanningInputs.of(gpu, without_env) != inputs and prepare(catalog, gpu, without_env) != data
    with pytest.raises(ValueError, match="data prepared for other inputs than those of the query on"):
        answer_for(catalog, without_env, gpu, data=data)
    # So is data prepared for a query that differs in anything else `prepare` reads, or for another GPU type.
    for change in ({"model": "Qwen3-4B"}, {"objective": "max_len"}, {"budget_gpus": 4}, {"node_gpus": 4},
                   {"estimate": "never"}, {"token_budget": "auto"}, {"weights": base.weights.model_copy(update={
                       "sp": base.weights.sp + 1})}, {"memory": base.memory.model_copy(update={"source": "mine"})},
                   {"margin": 0.05}):
        with pytest.raises(ValueError, match=f"data prepared for other inputs than those of the query on {gpu}$"):
            answer_for(catalog, base.model_copy(update=change), gpu, data=data)
    with pytest.raises(ValueError, match="data prepared for other inputs than those of the query on H100-80GB$"):
        answer_for(catalog, base, "H100-80GB", data=data)


def test_planning_solves_run_without_sat_inprocessing_and_explanations_keep_it(solver_parameters):
    # SAT inprocessing costs a planning query's small models more than it saves; an explanation's questions (solved
    # with presolve, stopping at the first plan) keep it, and so their infeasibility cores.
    query = make_query(CATALOG, model="8B", gpu="a100", max_model_len=200000, budget_gpus=4)
    assert plan(query, CATALOG)[0].plans == ()  # its reason asks two more questions
    assert len(solver_parameters) == 3 and not any(found.use_sat_inprocessing for found in solver_parameters)
    questions = _Prober(prepare(CATALOG, "A100-80GB", query), query).solver.parameters
    assert questions.stop_after_first_solution and questions.use_sat_inprocessing


def test_an_sp_degree_that_divides_the_heads_but_not_the_kv_heads_is_never_planned():
    # Qwen3-14B has 40 attention heads and 8 KV heads: SP=5 divides the heads and 5 GPUs, but neither it nor 8
    # divides the other. The 4-GPU table's Env + Offload + SP=4 cell at 92160 would vouch for Env + Offload + SP=5
    # on 5 GPUs (a setting that includes it); the KV-heads rule leaves SP=1 alone there.
    answer = solve_one("a100", model="14B", objective="max_len", budget_gpus=5, exact=True, top=3)
    assert [(p.setting.label, p.max_model_len, p.evidence) for p in answer.plans] == [
        ("Env + Offload", 24576, "inferred"), ("Env", 7168, "estimated"), ("Env", 4096, "inferred")]


def test_the_plan_on_fewer_nodes_counts_its_unused_gpus_against_the_budget_asked():
    # Within 12 GPUs (nodes of 8) the cheapest trainer at 16384 tokens is 8 GPUs, on whole nodes: the 2 rollout GPUs
    # take a node of their own, which gives them 8. On one node, 6 trainer GPUs and the 2 rollout GPUs fit; of the
    # budget of 12 that leaves 6 unused (as the best plan's 4 are), not the 2 fewer than the best plan's count.
    answer = solve_one("a100", model="4B", max_model_len=16384, budget_gpus=12, rollout_gpus=2)
    best, fewer = answer.best, answer.fewer_nodes
    assert (best.setting.label, best.gpus, best.unused_gpus, best.nodes, best.rollout_gpus) == ("vanilla", 8, 4, 2, 8)
    assert (fewer.setting.label, fewer.gpus, fewer.unused_gpus, fewer.nodes, fewer.rollout_gpus, fewer.evidence) == (
        "vanilla", 6, 6, 1, 2, "documented")


def test_more_trainer_gpus_never_lay_out_on_fewer_nodes():
    # The plan on fewer nodes is the best within the largest count whose layout takes fewer nodes than the best
    # plan's: right only because, of the counts with a layout, more trainer GPUs never take fewer nodes.
    for node_gpus in range(2, 17):
        for rollout_gpus in range(1, 33):
            nodes = [layout[0] for n in range(1, 65) if (layout := rollout_layout(n, rollout_gpus, node_gpus))]
            assert nodes == sorted(nodes), (node_gpus, rollout_gpus)
    assert [rollout_layout(n, 2, 8) for n in (6, 7, 8, 16)] == [(1, 2), None, (2, 8), (3, 8)]


@pytest.mark.wall_clock  # about the wall clock: keeps the real one
def test_ranked_plans_share_one_time_limit(monkeypatch: pytest.MonkeyPatch):
    # Each next plan is solved within what the earlier ones left of --time-limit, not within a whole one again.
    limits: list[float] = []
    checked = solver.solve.checked

    def recorded(cp_solver, model, status):
        limits.append(cp_solver.parameters.max_time_in_seconds)
        return checked(cp_solver, model, status)

    monkeypatch.setattr(solver.solve, "checked", recorded)
    query = make_query(CATALOG, model="8B", gpu="a100", objective="max_len", budget_gpus=6, top=3, time_limit_s=5)
    answer = answer_for(CATALOG, query, "A100-80GB")
    assert answer.status == "optimal" and len(answer.plans) == len(limits) == 3
    assert 5 >= limits[0] > limits[1] > limits[2] > 0


def test_an_alternative_the_reason_did_not_solve_is_solved_within_the_time_given(monkeypatch: pytest.MonkeyPatch):
    query = make_query(CATALOG, gpu="a100", model="14B", max_model_len=8192, budget_gpus=1, offload=False)
    (answer,) = plan(query, CATALOG)
    assert answer.plans == () and "without_pins" in answer.alternatives.solved
    unexplained = answer_for(CATALOG, query, "A100-80GB", explained=False)  # no more solves to say why
    assert (unexplained.status, unexplained.reason, unexplained.alternatives) == ("infeasible", "no plan", None)
    limits: list[float] = []
    real = solver.solve.answer_for

    def recorded(catalog, question, gpu, *args, **kwargs):
        limits.append(question.time_limit_s)
        return real(catalog, question, gpu, *args, **kwargs)

    monkeypatch.setattr(solver.solve, "answer_for", recorded)
    assert alternative_plan(CATALOG, query, answer, "without_pins", 2.5) == (answer.alternatives.without_pins, True)
    assert limits == []  # the reason solved it already
    bare = answer.model_copy(update={"alternatives": None})
    assert alternative_plan(CATALOG, query, bare, "without_pins", 2.5) == (answer.alternatives.without_pins, True)
    assert limits == [2.5]
    # Without pins there is nothing to drop: no plan, and nothing left undecided.
    unpinned = query.model_copy(update={"offload": None})
    assert alternative_plan(CATALOG, unpinned, bare, "without_pins", 2.5) == (None, True) and limits == [2.5]


def test_no_plan_on_fewer_nodes_where_the_rollout_gets_the_gpus_it_asked_for():
    # 16 trainer GPUs take two whole nodes of 8 and the 8 rollout GPUs a third: the rollout gets what it asked for,
    # no more, so no plan on fewer nodes is named (8 trainer GPUs would take 2 nodes, but train at a higher cost).
    answer = solve_one("a100", model="4B", max_model_len=16384, budget_gpus=16, rollout_gpus=8)
    best = answer.best
    assert (best.setting.label, best.gpus, best.nodes, best.rollout_gpus, best.evidence) == (
        "vanilla", 16, 3, 8, "inferred")
    assert answer.fewer_nodes is None


def test_a_plan_that_takes_the_whole_budget_is_asked_again_with_gpus_kept_for_the_rollout():
    # The answer's rollout_kept is the solver's best plan of --gpus N-K --rollout-gpus K, K as the hint takes it (a
    # quarter of one node's budget, at least 1; past one node, its last node), where the plan takes the whole budget;
    # where that plan leaves GPUs of N-K unused (2 of 3 at 4: no SP divides 3 and the heads), K grows by them.
    for budget, quarter, kept in ((4, 1, 2), (8, 2, 2), (16, 8, 8)):
        answer = solve_one("a100", model="8B", max_model_len=32768, budget_gpus=budget)
        first = best_plan(CATALOG, make_query(CATALOG, model="8B", gpu="a100", max_model_len=32768,
                                              budget_gpus=budget - quarter, rollout_gpus=quarter), "A100-80GB")
        asked = make_query(CATALOG, model="8B", gpu="a100", max_model_len=32768, budget_gpus=budget - kept,
                           rollout_gpus=kept)
        assert answer.best.gpus == budget and answer.rollout_kept is not None and first is not None
        assert (first.unused_gpus, first.gpus) == ((1, 2) if budget == 4 else (0, budget - quarter))
        assert answer.rollout_kept == RolloutKept(rollout_gpus=kept, plan=best_plan(CATALOG, asked, "A100-80GB"))
        assert answer.rollout_kept.plan is not None and answer.rollout_kept.plan.unused_gpus == 0
    # Where the plan leaves GPUs, the rollout has its own (or none: 0) or the budget is the planner's: not asked.
    for request in ({"budget_gpus": 5}, {"budget_gpus": 4, "rollout_gpus": 0}, {"budget_gpus": 4, "rollout_gpus": 1},
                    {"objective": "min_gpus"}):
        assert solve_one("a100", model="8B", max_model_len=32768, **request).rollout_kept is None
    # One GPU keeps that one, with no plan (no trainer GPU is left) and no solve asked.
    assert solve_one("a100", model="0.6B", max_model_len=8192, budget_gpus=1).rollout_kept == RolloutKept(
        rollout_gpus=1, plan=None)


def test_a_rollout_question_left_open_by_the_time_limit_is_not_named(monkeypatch: pytest.MonkeyPatch):
    # Undecided, it says nothing rather than "no plan": the best plan's own solve decides, the next is left open.
    solve, calls = cp_model.CpSolver.solve, []

    def first_solved_then_open(self, model, callback=None):
        calls.append(model)
        return solve(self, model) if len(calls) == 1 else cp_model.UNKNOWN

    monkeypatch.setattr(cp_model.CpSolver, "solve", first_solved_then_open)
    answer = solve_one("a100", model="8B", max_model_len=32768, budget_gpus=4)
    assert (answer.best.gpus, answer.rollout_kept, len(calls)) == (4, None, 2)


def test_a_widened_rollout_question_left_open_keeps_the_first_rollout_plan(monkeypatch: pytest.MonkeyPatch):
    # Past one node (12 GPUs on nodes of 2, a batch of 96): 2 kept leave 2 of 10 unused, and the third solve (4 kept)
    # undecided: the answer names K = 2 and its plan (the fourth solve: the plan without the batch, other_batch).
    solve, calls = cp_model.CpSolver.solve, []

    def third_open(self, model, callback=None):
        calls.append(model)
        return cp_model.UNKNOWN if len(calls) == 3 else solve(self, model)

    monkeypatch.setattr(cp_model.CpSolver, "solve", third_open)
    answer = solve_one("a100", model="8B", objective="max_len", budget_gpus=12, node_gpus=2, train_batch_size=96)
    assert answer.rollout_kept is not None and answer.rollout_kept.plan is not None and len(calls) == 4
    assert (answer.rollout_kept.rollout_gpus, answer.rollout_kept.plan.gpus, answer.rollout_kept.plan.unused_gpus) == (
        2, 8, 2)


def test_within_one_node_the_widened_rollout_question_is_answered_without_a_solve(monkeypatch: pytest.MonkeyPatch):
    # 8B at 32768 within 4 A100s takes all 4; 1 kept leaves 1 of 3 unused. Within one node the plans of --gpus 2
    # --rollout-gpus 2 are those of --gpus 3 --rollout-gpus 1 on at most 2 GPUs, so its best is the first's, laid out
    # beside 2 rollout GPUs: two solves, not three, and the same plan the third solve finds.
    solve, calls = cp_model.CpSolver.solve, []

    def counted(self, model, callback=None):
        calls.append(model)
        return solve(self, model)

    monkeypatch.setattr(cp_model.CpSolver, "solve", counted)
    answer = solve_one("a100", model="8B", max_model_len=32768, budget_gpus=4)
    assert len(calls) == 2
    asked = make_query(CATALOG, model="8B", gpu="a100", max_model_len=32768, budget_gpus=2, rollout_gpus=2)
    assert answer.rollout_kept == RolloutKept(rollout_gpus=2, plan=best_plan(CATALOG, asked, "A100-80GB"))
    assert (answer.rollout_kept.plan.nodes, answer.rollout_kept.plan.rollout_gpus) == (1, 2)


def test_a_question_left_open_by_the_time_limit_has_no_plan_and_says_so(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(cp_model.CpSolver, "solve", lambda self, model, callback=None: cp_model.UNKNOWN)
    query = make_query(CATALOG, model="4B", gpu="a100", max_model_len=8192, time_limit_s=1e-9)
    answer = answer_for(CATALOG, query, "A100-80GB")
    assert (answer.status, answer.plans) == ("unknown", ())
    assert answer.reason == "no plan found within the time limit of 1e-9 s"  # as it is written, not :g's 1e-09
    assert answer.reason_code == ReasonCode.TIME_LIMIT
    with pytest.raises(Undecided, match="^no plan found for Qwen3-4B on A100-80GB within the time limit of 1e-9 s$"):
        best_plan(CATALOG, query, "A100-80GB")
    assert optional_best(CATALOG, query, "A100-80GB") is None


def test_a_length_without_a_plan_whose_longest_is_open_says_what_was_decided(monkeypatch: pytest.MonkeyPatch):
    # 130000 tokens of Qwen3-0.6B within 4 A100s has no plan (proven); the longest length there is left open.
    solve, calls = cp_model.CpSolver.solve, []

    def first_proven_then_open(self, model, callback=None):
        calls.append(model)
        return solve(self, model) if len(calls) == 1 else cp_model.UNKNOWN

    monkeypatch.setattr(cp_model.CpSolver, "solve", first_proven_then_open)
    query = make_query(CATALOG, model="0.6B", gpu="a100", max_model_len=130000, budget_gpus=4)
    answer = answer_for(CATALOG, query, "A100-80GB")
    assert (answer.status, answer.nearest) == ("infeasible", None)
    assert answer.reason == ("130000 tokens has no plan in the tables and the memory model's estimates for Qwen3-0.6B "
                             "on A100-80GB within 4 GPUs; whether a shorter length has one was not decided within the "
                             "time limit of 10 s")
    assert answer.reason_code == ReasonCode.SHORTER_LENGTH_UNDECIDED


PASSED_DEADLINE = "10 s, or the call's deadline_s, which came first"


@pytest.mark.wall_clock  # about the wall clock: keeps the real one
def test_what_a_passed_call_deadline_left_open_names_it(monkeypatch: pytest.MonkeyPatch):
    # Within a call_deadline that has passed (solver.plan's deadline_s), each solve left open says the deadline may
    # be what stopped it: the answer's reason, best_plan's and nearest_plan's Undecided, a length's open longest.
    query = make_query(CATALOG, model="0.6B", gpu="a100", max_model_len=130000, budget_gpus=4)
    with monkeypatch.context() as patched, solver.solve.call_deadline(1e-9):
        patched.setattr(cp_model.CpSolver, "solve", lambda self, model, callback=None: cp_model.UNKNOWN)
        answer = answer_for(CATALOG, query, "A100-80GB")
        assert (answer.status, answer.reason, answer.reason_code) == (
            "unknown", f"no plan found within the time limit of {PASSED_DEADLINE}", ReasonCode.TIME_LIMIT)
        with pytest.raises(Undecided, match=re.escape(f"on A100-80GB within the time limit of {PASSED_DEADLINE}")):
            best_plan(CATALOG, query, "A100-80GB")
        with pytest.raises(Undecided, match=re.escape(f"no nearest plan proven within the time limit of "
                                                      f"{PASSED_DEADLINE}")):
            nearest_plan(CATALOG, prepare(CATALOG, "A100-80GB", query), query)
    solve, calls = cp_model.CpSolver.solve, []

    def first_proven_then_open(self, model, callback=None):
        calls.append(model)
        if len(calls) > 1:
            return cp_model.UNKNOWN
        self.parameters.max_time_in_seconds = 10.0  # the proof that 130000 tokens has no plan, whatever the deadline
        return solve(self, model)

    monkeypatch.setattr(cp_model.CpSolver, "solve", first_proven_then_open)
    with solver.solve.call_deadline(1e-9):
        answer = answer_for(CATALOG, query, "A100-80GB")
    assert (answer.reason_code, answer.reason.split("; ")[1]) == (
        ReasonCode.SHORTER_LENGTH_UNDECIDED,
        f"whether a shorter length has one was not decided within the time limit of {PASSED_DEADLINE}")


def test_plans_not_proven_best_in_time_are_kept_with_cp_sats_bound(monkeypatch: pytest.MonkeyPatch):
    # Where the time limit ends a search that found a plan but did not prove it the best (FEASIBLE), the answer keeps
    # the plans found, says they are not proven, and gives the objective of the first one and CP-SAT's bound.
    query = make_query(CATALOG, model="8B", gpu="a100", max_model_len=8192, budget_gpus=6, top=3)
    proven = answer_for(CATALOG, query, "A100-80GB")
    assert proven.status == "optimal" and len(proven.plans) == 3 and proven.bound == proven.objective_value is not None
    first = answer_for(CATALOG, query.model_copy(update={"top": 1}), "A100-80GB")  # the objective is the best plan's
    assert (first.plans, first.objective_value) == (proven.plans[:1], proven.objective_value)
    solve = cp_model.CpSolver.solve

    def unproven(self, model, callback=None):
        status = solve(self, model)
        return cp_model.FEASIBLE if status == cp_model.OPTIMAL else status

    monkeypatch.setattr(cp_model.CpSolver, "solve", unproven)
    monkeypatch.setattr(cp_model.CpSolver, "best_objective_bound", property(lambda self: 0.5))
    answer = answer_for(CATALOG, query, "A100-80GB")
    assert (answer.status, answer.plans, answer.objective_value, answer.bound) == (
        "feasible", proven.plans, proven.objective_value, 0.5)


def test_the_longest_length_on_an_exact_count_that_spans_nodes_unevenly_names_no_fewer_gpus():
    # Fewer GPUs are named for a length asked with --len; maximising the length, there is no such length to name.
    answer = solve_one("a100", model="4B", objective="max_len", budget_gpus=12, exact=True)
    assert (answer.status, answer.reason) == ("infeasible", (
        "no plan for exactly 12 trainer GPUs with Qwen3-4B on A100-80GB: 12 GPUs span nodes of 8 (--node-gpus) but "
        "are not whole nodes"))


def test_exactly_one_trainer_gpu_that_leaves_the_rollout_no_room_is_counted_as_one():
    # 1 trainer GPU and 8 rollout GPUs: the rollout fills the trainer's node and 1 GPU of the next, which is no layout.
    # A trainer on a whole node of 8 leaves the rollout a node of its own: the reason names it.
    answer = solve_one("a100", model="4B", max_model_len=8192, budget_gpus=1, exact=True, rollout_gpus=8)
    assert (answer.status, answer.reason) == ("infeasible", (
        "no plan for exactly 1 trainer GPU with Qwen3-4B on A100-80GB: 1 trainer + 8 rollout GPUs (--rollout-gpus) "
        "fit neither one node of 8, nor whole nodes with the trainer in one of them, nor with the trainer on whole "
        "nodes; more trainer GPUs train 8192 tokens: vanilla on 8 GPUs (inferred)"))


def test_a_rollout_that_leaves_some_counts_room_is_not_said_to_leave_none():
    # 7 trainer GPUs leave the 2 rollout GPUs no room on nodes of 8, but 8 (on a node of their own beside) do: the
    # reason is the length, not the rollout.
    answer = solve_one("a100", model="14B", max_model_len=1000000, budget_gpus=8, rollout_gpus=2)
    assert (answer.status, answer.reason) == ("infeasible", (
        "1000000 tokens is beyond what the tables and the memory model's estimates allow for Qwen3-14B on A100-80GB "
        "within 8 GPUs: the longest is 186368 on the 1024-token grid (Env + Offload + SP=8 on 8 GPUs, estimated, "
        "extrapolated); --token-budget auto reaches 373760 tokens on the 1024-token grid: Env + Offload + SP=8 on 8 "
        "GPUs with max_token_len_per_gpu = 46720 (estimated, extrapolated)"))


def test_equal_costs_rank_fewer_settings_on_before_a_lower_sp():
    # SP=2 (1.21) costs what Env + Offload (1.1 x 1.1) does: one setting on comes before two, though SP=2 is the
    # higher SP degree (fewer settings on, then lower SP, in that order).
    weights = Weights(offload=0.1, sp=0.21, env=0.1)
    ranks = {entry[:4]: entry[5] for entry in cost_ranks((2,), "cheapest", weights, DENSE, "nvlink")}
    assert ranks[2, 0, 0, 2] < ranks[2, 1, 1, 1]
    assert ranking_key("cheapest", (2, 0, 0, 2), exact_cost(weights, DENSE, "nvlink", (2, 0, 0, 2))) < ranking_key(
        "cheapest", (2, 1, 1, 1), exact_cost(weights, DENSE, "nvlink", (2, 1, 1, 1)))


def test_an_sp_degree_is_a_setting_on_so_env_comes_before_sp_at_an_equal_cost():
    # Env (1.1) costs what SP=2 (1.1) does on 2 GPUs: each is one setting on, so the lower SP degree comes first,
    # the documented Env cell, as the reference ranks them (SP counted as no setting would put SP=2 first).
    weights = Weights(offload=0.5, sp=0.1, env=0.1)
    request = {"model": "Qwen3-4B", "max_model_len": 16384, "budget_gpus": 2, "exact": True, "weights": weights}
    expected = enumerate_plans(CATALOG, objective="cheapest", gpu="A100-80GB", **request)
    assert [(p["env"], p["offload"], p["sp"], p["cost"], p["evidence"]) for p in expected[:2]] == [
        (True, False, 1, 0.55, "documented"), (False, False, 2, 0.55, "inferred")]
    assert plan_dicts(solve_one("A100-80GB", **request)) == expected[:1]


def test_inferred_evidence_says_fewer_tokens_and_more_gpus_only_where_its_cell_has_them():
    # The cell an inferred plan cites may lie at a longer row than the plan's length, or in a table for fewer GPUs:
    # the words say so, so that a reader checking the guide does not take it for the plan's own row and count.
    cheap_sp = Weights(offload=0.5, sp=0.01, env=0.1)
    same = solve_one("A100-80GB", model="0.6B", max_model_len=8192, budget_gpus=2, exact=True, env=True)
    longer = solve_one("A100-80GB", model="Qwen3-4B", max_model_len=16384, budget_gpus=2, exact=True, weights=cheap_sp)
    fewer = solve_one("A100-80GB", model="14B", max_model_len=8192, budget_gpus=7, exact=True)
    both = solve_one("A100-80GB", model="8B", max_model_len=30000, budget_gpus=4, exact=True, sp=2)
    assert same.best.evidence_text(same.gpu, same.model) == (
        "inferred: the A100-80GB table for 2 GPUs says 'vanilla' at 8192, and this plan includes that setting")
    assert longer.best.evidence_text(longer.gpu, longer.model) == (
        "inferred: the A100-80GB table for 2 GPUs says 'SP=2' at 20480, and this plan runs that same setting at "
        "fewer tokens")  # the cell's own setting (s80)
    assert fewer.best.evidence_text(fewer.gpu, fewer.model) == (
        "inferred: the A100-80GB table for 6 GPUs says 'vanilla' at 8192, and this plan runs that same setting on "
        "more GPUs (which hold no more per GPU)")
    assert both.best.evidence_text(both.gpu, both.model) == (
        "inferred: the A100-80GB table for 2 GPUs says 'Env + Offload + SP=2' at 32768, and this plan runs that same "
        "setting at fewer tokens on more GPUs (which hold no more per GPU)")


def test_with_every_weight_zero_the_cheapest_plan_takes_the_most_gpus():
    # The relative step time is 1/n for every setting: 8 GPUs cost least, then 7 (the order costs are exact in,
    # whatever the GPU count divides).
    weights = Weights(offload=0.0, sp=0.0, env=0.0)
    answer = solve_one("a100", model="4B", max_model_len=8192, budget_gpus=8, weights=weights, top=2)
    assert [(p.gpus, p.setting.label, p.cost) for p in answer.plans] == [(8, "vanilla", 1 / 8), (7, "vanilla", 1 / 7)]
    request = {"model": "Qwen3-4B", "gpu": "A100-80GB", "max_model_len": 8192, "budget_gpus": 8}
    expected = ranked_alternatives(enumerate_plans(CATALOG, objective="cheapest", weights=weights, **request),
                                   CATALOG.model("Qwen3-4B"), CATALOG.gpu("A100-80GB"), weights)
    assert plan_dicts(answer) == expected[:2]


def test_the_longest_estimate_of_a_count_is_its_longest_settings_not_its_last(monkeypatch: pytest.MonkeyPatch):
    # Qwen3-0.6B on exactly 7 H200s (SP must divide 7, so SP=1; no GPU type with tables has their memory, so none caps
    # the estimates): the memory model fits Env + Offload longer than Env alone, which holds the states besides. Given
    # the estimates in the other order, Env's last, the count's longest estimate and the longest plan are still
    # Env + Offload's. (On the shipped tables a setting's estimate is never longer than one of a setting that includes
    # it, so the order the memory model gives them in, Offload after, would hide a count taking its last.)
    given = solver.model.capped_estimates  # a count's estimates, as the memory model gives them and the tables cap them
    monkeypatch.setattr(solver.model, "capped_estimates", lambda *args: tuple(reversed(given(*args))))
    query = make_query(CATALOG, model="0.6B", gpu="h200", objective="max_len", budget_gpus=7, exact=True)
    on_seven = [(e, o, s, longest) for n, e, o, s, longest in prepare(CATALOG, "H200-141GB", query).estimates if n == 7]
    assert [setting for *setting, _ in on_seven] == [[1, 1, 1], [1, 0, 1]] and on_seven[1][3] < on_seven[0][3]
    assert prepare(CATALOG, "H200-141GB", query).longest_estimate[7] == on_seven[0][3]
    answer = solve_one("h200", model="0.6B", objective="max_len", budget_gpus=7, exact=True)
    assert [(p.max_model_len, p.setting.label) for p in answer.plans] == [(on_seven[0][3] // GRID * GRID,
                                                                           "Env + Offload")]


def test_a_lowered_token_budget_reaches_no_longer_than_the_memory_models_ceiling():
    # On a GPU type of 4 TiB the memory model fits Qwen3-0.6B up to its ceiling at Trinity's default budget; a lowered
    # budget (--token-budget auto) would reach twice that, but no estimate goes past the ceiling it was asked up to.
    big = CATALOG.with_gpu_types([solver.described_gpu_type("Big", 4096)])
    for token_budget in ("default", "auto"):
        query = make_query(big, model="0.6B", gpu="Big", objective="max_len", budget_gpus=8, token_budget=token_budget)
        (answer,) = plan(query, big)
        assert answer.plans[0].max_model_len == CEILING
        assert max(prepare(big, "Big", query).longest_estimate.values()) == CEILING


def test_a_counts_own_dash_caps_the_estimates_of_every_sp_degree_up_to_the_count(tmp_path):
    # A user's only table, for 4 GPUs, says vanilla at 8192 and '-' at 16384: every setting tried on 4 GPUs, SP=4
    # (the table's own count) included, ran out of memory there, so no estimate on 4 GPUs goes past 8192.
    cells_file = tmp_path / "mine.yaml"
    cells_file.write_text(
        "gpu: Mine-80GB\nmemory_gb: 80\nsource: mine\ntables:\n"
        "  - {gpus: 4, section: '4 x mine', models: [Qwen3-8B], rows: [\n"
        "      {max_model_len: 8192, cells: {Qwen3-8B: vanilla}},\n"
        "      {max_model_len: 16384, cells: {Qwen3-8B: '-'}}]}\n", encoding="utf-8")
    catalog = load_catalog().with_cells(cells_file)
    query = make_query(catalog, model="8B", gpu="Mine-80GB", objective="max_len", budget_gpus=4, exact=True, top=3)
    (answer,) = plan(query, catalog)
    assert [(p.max_model_len, p.setting.label, p.evidence) for p in answer.plans] == [(8192, "vanilla", "documented")]
    assert max(prepare(catalog, "Mine-80GB", query).longest_estimate.values()) <= 8192


def test_every_larger_gpu_types_table_caps_the_estimates_not_only_the_first(tmp_path):
    # A user's GPU type of 200 GB, after the shipped ones larger than the L40S, says nothing trained Qwen3-8B on 4 GPUs
    # at 8192 tokens: no estimate on 4 L40S goes past 4096, though the shipped larger tables allow more.
    cells_file = tmp_path / "mine.yaml"
    cells_file.write_text(
        "gpu: Mine-200GB\nmemory_gb: 200\nsource: mine\ntables:\n"
        "  - {gpus: 4, section: '4 x mine', models: [Qwen3-8B], rows: [\n"
        "      {max_model_len: 4096, cells: {Qwen3-8B: vanilla}},\n"
        "      {max_model_len: 8192, cells: {Qwen3-8B: '-'}}]}\n", encoding="utf-8")
    catalog = load_catalog().with_cells(cells_file)
    assert [name for name, _ in larger_tables(catalog, "L40S", catalog.model("8B"))][-1] == "Mine-200GB"
    query = make_query(catalog, model="8B", gpu="L40S", objective="max_len", budget_gpus=4, exact=True)
    assert prepare(CATALOG, "L40S", query).longest_estimate[4] > 8192  # the shipped tables alone
    assert prepare(catalog, "L40S", query).longest_estimate[4] == 4096


def test_a_count_whose_estimates_a_larger_tables_first_dash_caps_to_nothing_has_no_plan(tmp_path):
    # A user's 2-GPU table says '-' at its first row: nothing tried on 2 GPUs trains there, so no estimate on 1 or 2
    # GPUs holds (each is capped to nothing), and 1 GPU is no count with a plan.
    cells_file = tmp_path / "mine.yaml"
    cells_file.write_text(
        "gpu: Mine-80GB\nmemory_gb: 80\nsource: mine\ntables:\n"
        "  - {gpus: 2, section: '2 x mine', models: [Qwen3-8B], rows: [\n"
        "      {max_model_len: 4096, cells: {Qwen3-8B: '-'}}]}\n",
        encoding="utf-8")
    catalog = load_catalog().with_cells(cells_file)
    (answer,) = plan(make_query(catalog, model="8B", gpu="Mine-80GB", max_model_len=4096, budget_gpus=1), catalog)
    assert answer.status == "infeasible"
    assert answer.reason == ("no plan for 1 or fewer trainer GPUs with Qwen3-8B on Mine-80GB (counts with a plan at "
                             "some length: 2)")


def test_estimates_that_a_larger_gpu_types_table_stops_below_one_grid_step_are_maximised_to_where_it_stops(tmp_path):
    # A user's GPU type with more memory than the A100 says Qwen3-32B trains at 512 tokens on 1 GPU and nothing at 1024:
    # on 1 A100 (no table of Qwen3-32B) every estimate is capped at 512, short of the 1024-token grid. Where a table
    # stops an estimate is a length maximising may take (`PlanningData.table_stops`): --len 512 has that plan too.
    cells_file = tmp_path / "mine.yaml"
    cells_file.write_text(
        "gpu: Mine-200GB\nmemory_gb: 200\nsource: mine\ntables:\n"
        "  - {gpus: 1, section: '1 x mine', models: [Qwen3-32B], rows: [\n"
        "      {max_model_len: 512, cells: {Qwen3-32B: vanilla}},\n"
        "      {max_model_len: 1024, cells: {Qwen3-32B: '-'}}]}\n", encoding="utf-8")
    catalog = load_catalog().with_cells(cells_file)
    query = make_query(catalog, model="32B", gpu="a100", objective="max_len", budget_gpus=1)
    data = prepare(catalog, "A100-80GB", query)
    assert (data.counts, data.lengths, data.table_stops) == ((1,), (512,), ((1, 1, 1, 1, 512),))
    (answer,) = plan(query, catalog)
    assert [(p.setting.label, p.max_model_len, p.evidence) for p in answer.plans] == [
        ("Env + Offload", 512, "estimated")]
    asked = [plan(make_query(catalog, model="32B", gpu="a100", max_model_len=length, budget_gpus=1), catalog)[0]
             for length in (512, 513)]
    assert [(a.status, [p.max_model_len for p in a.plans]) for a in asked] == [("optimal", [512]), ("infeasible", [])]


def test_a_cell_vouches_for_a_plan_of_any_higher_sp_degree():
    # Pinned to SP=8 on exactly 8 A100s, Qwen3-4B at 8192 rests on the 6-GPU table's vanilla cell there: a setting that
    # includes the cell's (SP=8 adds to vanilla's SP=1) trains where it does.
    answer = solve_one("a100", model="4B", max_model_len=8192, budget_gpus=8, exact=True, sp=8, estimate="never")
    assert [(p.setting.label, p.evidence, p.source) for p in answer.plans] == [
        ("SP=8", "inferred", SourceCell(model="Qwen3-4B", gpus=6, max_model_len=8192, setting="vanilla"))]


def test_an_estimated_length_stays_on_the_grid_past_a_row_of_another_count(edited_a100_tables):
    # A made-up 8-GPU table of Qwen3-4B with a row at 27650: on exactly 7 GPUs the Env + Offload estimate (which fits
    # past 27650) still gives a length on the 1024-token grid; the row is a length for plans its own table vouches for.
    catalog = edited_a100_tables(lambda text: text + made_up_table(8, "Qwen3-4B", 27650, "Env"))
    query = make_query(catalog, model="4B", gpu="a100", objective="max_len", budget_gpus=7, exact=True)
    data = prepare(catalog, "A100-80GB", query)
    assert 27650 in data.lengths and data.longest_estimate[7] > 27650
    (answer,) = plan(query, catalog)
    assert [(p.max_model_len, p.setting.label, p.evidence) for p in answer.plans] == [
        (data.longest_estimate[7] // GRID * GRID, "Env + Offload", "estimated")]


def test_the_longest_length_comes_first_however_much_its_setting_costs():
    # Offload weighing 100: every combination without it ranks before every one with it, more ranks apart than the
    # longest plan (Env + Offload + SP=8 on 64 A100s) is tokens longer than the longest without Offload.
    weights = Weights(offload=100.0, sp=0.1, env=0.01)
    longest = solve_one("a100", model="0.6B", objective="max_len", budget_gpus=64, weights=weights).plans[0]
    without = solve_one("a100", model="0.6B", objective="max_len", budget_gpus=64, weights=weights,
                        offload=False).plans[0]
    assert (longest.gpus, longest.setting.label) == (64, "Env + Offload + SP=8")
    assert without.max_model_len < longest.max_model_len == solve_one(
        "a100", model="0.6B", objective="max_len", budget_gpus=64).plans[0].max_model_len


def test_ranked_longest_lengths_not_proven_best_in_time_are_still_distinct(monkeypatch: pytest.MonkeyPatch):
    # Where the time limit leaves the longest plan unproven (FEASIBLE), a longer plan stays an alternative to it, but
    # the same plan, at the same length, does not: the ranked plans are those of the proven search.
    query = make_query(CATALOG, model="8B", gpu="a100", objective="max_len", budget_gpus=6, top=3)
    proven = answer_for(CATALOG, query, "A100-80GB")
    assert proven.status == "optimal" and len({(p.gpus, p.setting) for p in proven.plans}) == 3
    solve = cp_model.CpSolver.solve

    def unproven(self, model, callback=None):
        status = solve(self, model)
        return cp_model.FEASIBLE if status == cp_model.OPTIMAL else status

    monkeypatch.setattr(cp_model.CpSolver, "solve", unproven)
    answer = answer_for(CATALOG, query, "A100-80GB")
    assert (answer.status, answer.plans) == ("feasible", proven.plans)


def test_a_shorter_plan_a_time_out_left_first_is_followed_by_the_longer_ones(monkeypatch: pytest.MonkeyPatch):
    # The time limit stops the first search at vanilla, 8192 tokens (not the longest): the longer plans on the same
    # 7 GPUs, though they cost more, stay alternatives to it, in the order the search finds them.
    query = make_query(CATALOG, model="14B", gpu="a100", objective="max_len", budget_gpus=7, exact=True, top=3)
    solve = cp_model.CpSolver.solve
    searches = []

    def first_stopped_at_8192(self, model, callback=None):
        searches.append(model)
        if len(searches) == 1:
            model = model.clone()
            (length,) = [index for index, variable in enumerate(model.proto.variables)
                         if variable.name == "max_model_len"]
            model.add(model.get_int_var_from_proto_index(length) <= 8192)
        status = solve(self, model)
        return cp_model.FEASIBLE if status == cp_model.OPTIMAL else status

    monkeypatch.setattr(cp_model.CpSolver, "solve", first_stopped_at_8192)
    answer = answer_for(CATALOG, query, "A100-80GB")
    assert (answer.status, [(p.setting.label, p.max_model_len) for p in answer.plans]) == (
        "feasible", [("vanilla", 8192), ("Env + Offload", 24576), ("Env", 12288)])


def test_the_objective_of_the_fewest_gpus_is_the_best_plans_rank_alone():
    # The length is asked, not maximised: CP-SAT's objective (answer.objective_value) is the rank of the plan's
    # combination in the objective's order, with no length term.
    query = make_query(CATALOG, model="8B", gpu="a100", objective="min_gpus", max_model_len=65536)
    answer = answer_for(CATALOG, query, "A100-80GB")
    best, data = answer.plans[0], prepare(CATALOG, "A100-80GB", query)
    ranks = {entry[:4]: entry[4] for entry in data.ranks}
    assert answer.objective_value == answer.bound == ranks[best.gpus, int(best.env), int(best.offload), best.sp]
    assert max(data.lengths) > query.max_model_len  # a length term would show


def test_of_the_tables_for_more_gpus_the_nearest_refutes_first():
    # Env on 2 and on 4 GPUs at 8192 (vanilla ran out of memory there): vanilla on 1 GPU is refuted by the table for 2.
    rows = ((2, 8192), (4, 8192))
    settings = {(2, 8192): Setting(env=True), (4, 8192): Setting(env=True)}
    assert refuting_cell(CATALOG.model("8B"), rows, settings, 1, Setting(), 8192) == (2, 8192)


def test_host_memory_from_elsewhere_than_a_flag_is_named_in_words_that_keep_its_key():
    # A cluster pool's host_ram_gb is no flag: running text says what it is (GB as RAM is sold, GiB) and keeps the
    # key findable, as a job's train batch does; flags are joined as flags, words with "and".
    assert [host_ram_words(64, "--host-ram"), host_ram_words(64.5, "the pool's host_ram_gb")] == [
        "--host-ram 64 GiB", "64.5 GiB of host memory per node (the pool's host_ram_gb)"]
    pool = make_query(CATALOG, model="8B", gpu="h100", max_model_len=32768, host_ram_gb=64, sp=2,
                      host_ram_source="the pool's host_ram_gb", train_batch_size=96,
                      train_batch_source="the job's train_batch_size")
    flags = make_query(CATALOG, model="8B", gpu="h100", max_model_len=32768, host_ram_gb=64, train_batch_size=96,
                       sp=2)
    assert [pool.limit_flags, flags.limit_flags, pool.model_copy(update={"train_batch_size": None}).limit_flags] == [
        ("--sp 2 and 64 GiB of host memory per node (the pool's host_ram_gb) and a train batch of 96 (the job's "
         "train_batch_size)"), "--sp 2 --host-ram 64 GiB --train-batch-size 96",
        "--sp 2 and 64 GiB of host memory per node (the pool's host_ram_gb)"]
    # As the bound a need per node exceeds, words without parentheses, which would close a reason's own twice, and
    # without "of host memory per node" again: "..., more than the pool's host_ram_gb of 64 GiB)".
    assert [host_ram_bound_words(400, "--host-ram"), pool.host_ram_bound_words, flags.host_ram_bound_words] == [
        "--host-ram 400 GiB", "the pool's host_ram_gb of 64 GiB", "--host-ram 64 GiB"]
    # Hardware is named briefly, and not at all after the limits named it in full ("on nodes with more host memory
    # than the pool's 64 GiB" after "64 GiB of host memory per node (the pool's host_ram_gb)" said it twice); a flag
    # has no such short form.
    hardware = pool.model_copy(update={"host_ram_hardware": "the pool's"})
    assert [hardware.host_ram_hardware_words, pool.host_ram_hardware_words, flags.host_ram_hardware_words] == [
        "the pool's 64 GiB", "", ""]
    assert hardware.more_host_ram_words() == "with more host memory than the pool's 64 GiB"
    assert hardware.more_host_ram_words(named=True) == "with more host memory"
    assert hardware.without_host_ram_words(named=True) == "on nodes with more host memory"


def test_every_host_memory_line_ends_with_the_same_check_words():
    # One source for the end of the plan summary's row, solve memory's line, a map's legend and a fragment's comment:
    # held to the host memory given (a pool's in words that keep its key, not as if it were a flag), or not checked.
    assert [host_ram_check_words(None), host_ram_check_words(None, "the pool's host_ram_gb"),
            host_ram_check_words(512), host_ram_check_words(1024.5, "the pool's host_ram_gb")] == [
        "; not checked: --host-ram not given", "; not checked: the pool's host_ram_gb not given",
        ", within --host-ram 512 GiB", ", within the pool's host_ram_gb of 1024.5 GiB"]
    assert host_ram_unchecked_words() == "not checked: --host-ram not given"


def test_an_sp_that_does_not_divide_the_gpus_is_worded_with_their_count():
    assert [sp_gpus_violation(1, 2), sp_gpus_violation(6, 4), sp_gpus_violation(8, 4)] == [
        "SP=2 does not divide 1 GPU", "SP=4 does not divide 6 GPUs", None]


def test_a_nearest_plan_search_out_of_time_is_undecided_and_asks_no_larger_nodes(monkeypatch):
    # A search the time limit left open proves nothing: nearest_plan says Undecided (not None, "nothing trains"),
    # and a refusal then says nothing of nearer plans: not that the nodes given have none, nor, on the default nodes
    # of 8 left open, a plan on nodes of 16 (as if nodes of 8 could not train it).
    asked = make_query(CATALOG, gpu="l40s", model="32B", max_model_len=65536, host_ram_gb=100, node_gpus=2)
    data = prepare(CATALOG, asked.gpus[0], asked)
    with monkeypatch.context() as patched:
        patched.setattr(solver.solve, "_solved", lambda solver_, model: cp_model.UNKNOWN)
        with pytest.raises(solver.Undecided, match="no nearest plan proven within the time limit of 10 s"):
            solver.solve.nearest_plan(CATALOG, data, asked)
    real, nodes = solver.solve.nearest_plan, []

    def out_of_time_on_nodes_of(size: int) -> Any:
        def nearest(catalog, data, query):
            nodes.append(query.node_gpus)
            if query.node_gpus == size:
                raise solver.Undecided("out of time")
            return real(catalog, data, query)
        return nearest

    monkeypatch.setattr(solver.solve, "nearest_plan", out_of_time_on_nodes_of(2))
    (answer,) = plan(asked, CATALOG)
    assert answer.status == "infeasible" and nodes == [2] and "nodes of" not in answer.reason
    longer = make_query(CATALOG, gpu="l40s", model="Llama-3.1-70B", max_model_len=131072, budget_gpus=16,
                        token_budget="auto")
    for size, tried in ((8, [8]), (16, [8, 16])):
        nodes.clear()
        monkeypatch.setattr(solver.solve, "nearest_plan", out_of_time_on_nodes_of(size))
        (answer,) = plan(longer, CATALOG)
        assert answer.status == "infeasible" and nodes == tried and "nodes of 16 GPUs" not in answer.reason
    monkeypatch.setattr(solver.solve, "nearest_plan", real)
    (answer,) = plan(asked, CATALOG)
    assert answer.reason.endswith("; no count of nodes of 2 GPUs (--node-gpus) trains it, even without --host-ram "
                                  "100 GiB and with --token-budget auto: an SP group stays within one node, so SP=2 at "
                                  "most")


def test_a_refusal_on_nodes_given_keeps_to_them_and_on_the_default_nodes_of_8_tries_nodes_of_16(monkeypatch):
    # Llama-3.1-70B at 131072 tokens on L40Ss: on nodes of 8 (SP=8 at most) nothing trains it, whatever is lifted;
    # on nodes of 16 SP=16 does. A node size given is hardware: the nearest plan is sought on it alone, and the
    # reason says plainly that none of its counts trains it; on the default nodes of 8, nodes of 16 are tried next
    # (at 262144 tokens nothing trains on them either, and then the reason says nothing more).
    real, nodes = solver.solve.nearest_plan, []

    def nearest(catalog, data, query):
        nodes.append(query.node_gpus)
        return real(catalog, data, query)

    monkeypatch.setattr(solver.solve, "nearest_plan", nearest)
    for node_gpus, length, tried in ((2, 131072, [2]), (4, 131072, [4]), (8, 131072, [8]), (12, 131072, [12]),
                                     (None, 131072, [8, 16]), (None, 262144, [8, 16])):
        nodes.clear()
        asked = make_query(CATALOG, gpu="l40s", model="Llama-3.1-70B", max_model_len=length, budget_gpus=16,
                           token_budget="auto", node_gpus=node_gpus)
        (answer,) = plan(asked, CATALOG)
        assert answer.status == "infeasible" and nodes == tried
        assert ("nodes of 16" in answer.reason) == (node_gpus is None and length == 131072)
        largest = 8 if node_gpus == 12 else node_gpus  # 64 heads, 8 KV heads: SP=12 is none
        assert node_gpus is None or answer.reason.endswith(
            f"; no count of nodes of {node_gpus} GPUs (--node-gpus) trains it: an SP group stays within one node, so "
            f"SP={largest} at most")
        assert node_gpus is not None or length != 131072 or answer.reason.endswith(
            "; on nodes of 16 GPUs (--node-gpus), 131072 tokens trains: Env + Offload + SP=16 on 16 GPUs with a lowered "
            "max_token_len_per_gpu of 13312 (estimated, extrapolated)")


def test_a_nearest_plan_on_more_gpus_than_a_node_says_how_many_nodes_it_takes_where_the_question_counts_them():
    # Qwen3-8B without Offload on A100-40GBs at 32768 tokens, within 2 GPUs of nodes of 4: the nearest plan takes 16
    # GPUs, 4 nodes of 4. A cluster's question (count_nodes: a pool has so many nodes) says so, and so does the
    # planner's on the nodes of 4 given; beside 2 rollout GPUs it takes 5 (the trainer's 4 whole nodes, and one for
    # the rollout); on the default nodes (not given: their count is open) it names no nodes of its own size.
    asked = make_query(CATALOG, gpu="a100-40g", model="8B", max_model_len=32768, budget_gpus=2, node_gpus=4,
                       offload=False, objective="min_gpus")
    nearest = solver.solve._nearest_on_nodes(CATALOG, prepare(CATALOG, asked.gpus[0], asked), asked)
    assert nearest is not None and (nearest.plan.gpus, nearest.node_gpus, nearest.lifted) == (16, 4, {"budget"})
    counting = asked.model_copy(update={"count_nodes": True})
    assert [nearest.nodes_words(counting), nearest.nodes_words(counting.model_copy(update={"rollout_gpus": 2})),
            nearest.nodes_words(asked), nearest.nodes_words(asked.model_copy(update={"node_gpus_given": False}))] == [
        "on 4 nodes of 4 GPUs, ", "on 5 nodes of 4 GPUs, ", "on 4 nodes of 4 GPUs, ", ""]
    # Nodes are counted as whole ones (6 GPUs take 2 nodes of 4); a plan that lifts the rollout's layout is counted
    # alone; one within a node is on no nodes of its own.
    assert [nearest._replace(plan=nearest.plan.model_copy(update={"gpus": 6})).nodes_words(counting),
            nearest._replace(lifted=frozenset({"budget", "rollout_layout"})).nodes_words(
                counting.model_copy(update={"rollout_gpus": 2})),
            nearest._replace(plan=nearest.plan.model_copy(update={"gpus": 4})).nodes_words(counting)] == [
        "on 2 nodes of 4 GPUs, ", "on 4 nodes of 4 GPUs, ", ""]


def _unproven(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each solve that proves its answer optimal reports it FEASIBLE instead, as one the time limit cut short does."""
    solved = solver.solve._solved
    monkeypatch.setattr(solver.solve, "_solved", lambda cp_solver, model: cp_model.FEASIBLE
                        if solved(cp_solver, model) == cp_model.OPTIMAL else solved(cp_solver, model))


def test_a_nearest_plan_or_least_host_plan_not_proven_is_undecided_or_none(monkeypatch):
    # Qwen3-8B at 65536 tokens has no plan on 1 A100: its nearest plan takes more GPUs. Found but not proven nearest
    # (the time limit cut the search short), it is undecided, not named; nor is a least host memory plan unproven.
    query = make_query(CATALOG, model="8B", gpu="a100", budget_gpus=1, max_model_len=65536)
    data = prepare(CATALOG, "A100-80GB", query)
    at_length = query.model_copy(update={"budget_gpus": 8})
    assert nearest_plan(CATALOG, data, query) is not None and least_host_plan(CATALOG, at_length, "A100-80GB")
    _unproven(monkeypatch)
    with pytest.raises(Undecided):
        nearest_plan(CATALOG, data, query)
    assert least_host_plan(CATALOG, at_length, "A100-80GB") is None


def test_a_copied_table_is_the_constraint_add_allowed_assignments_makes():
    rows = [(1, 4, 0), (2, 4, 1), (6, 2, 1)]
    plain, copied = LeanCpModel(), LeanCpModel()
    for model in (plain, copied):
        variables = [model.new_int_var(0, 8, name) for name in ("n", "s", "o")]
        guard = model.new_bool_var("guard")
        if model is plain:
            model.add_allowed_assignments(variables, rows).only_enforce_if(guard)
        else:
            add_table(model, variables, table_values(rows)).only_enforce_if(guard)
    assert str(copied.proto) == str(plain.proto)
    assert "values: 6" in str(copied.proto) and "enforcement_literal: 3" in str(copied.proto)


def test_the_ranks_table_holds_the_cost_ranks_columns_row_by_row():
    weights, counts = Weights(offload=0.01, sp=0.1, env=0.01), (1, 2, 4, 8, 16)
    for columns in (5, 6):
        values = list(ranks_table(counts, "min_gpus", weights, DENSE, "nvlink", columns))
        assert values == [value for entry in cost_ranks(counts, "min_gpus", weights, DENSE, "nvlink")
                          for value in entry[:columns]]
        assert len(values) == len(counts) * 4 * 16 * columns


def test_a_64_gpu_model_with_its_cached_tables_allows_what_each_rule_allows():
    query = make_query(CATALOG, model="8B", objective="min_gpus", max_model_len=65536, gpu="A100-80GB", node_gpus=4)
    data = prepare(CATALOG, "A100-80GB", query)
    model, _, _ = build_model(data, query)
    rows = {tuple(constraint.table.values) for constraint in model.proto.constraints}
    assert max(data.counts) == 64
    assert tuple(n for n in data.counts if n <= 4 or n % 4 == 0) in rows  # whole nodes
    assert tuple(v for n in data.counts for s in data.sp_degrees if n % s == 0 for v in (n, s)) in rows
    assert tuple(v for n in data.counts for s in data.sp_degrees if n <= 4 or 4 % s == 0 for v in (n, s)) in rows
    assert tuple(s for s in data.sp_degrees if data.shape.num_attention_heads % s == 0) in rows


@pytest.mark.parametrize("gpu, model, capped", [
    ("A100-80GB", "Qwen3-8B", True), ("H100-80GB", "Qwen3-14B", True), ("L40S", "Qwen3-4B", False)])
def test_estimates_capped_count_by_count_are_those_capped_all_at_once(gpu: str, model: str, capped: bool):
    shape, gpu_type = CATALOG.model(model), CATALOG.gpu(gpu)
    refuting = (CATALOG.tables_for(gpu, shape), *(CATALOG.gpu(name) for name, _ in larger_tables(CATALOG, gpu, shape)))
    coefficients = make_query(CATALOG, model=model, max_model_len=8192).memory.coefficients
    counts = estimated_counts(8)
    for without_env in (False, True):
        estimates = estimated_cells(shape, gpu_type.memory_gib, counts, coefficients, 0.0, without_env)
        whole = within_refuting_tables(estimates, least_limits(refuting, shape))
        assert (whole != estimates) == capped  # the tables cap some (A100, H100) or none (L40S)
        by_count = tuple(cell for gpus in counts for cell in capped_estimates(
            shape, gpu_type.memory_gib, gpus, coefficients, 0.0, without_env, refuting))
        assert by_count == whole and len({cell[0] for cell in whole}) > 8


def test_the_lengths_a_maximised_length_may_take_are_the_rows_and_the_estimates_grid():
    data = prepare(CATALOG, "A100-80GB", make_query(CATALOG, model="4B", objective="max_len", budget_gpus=6))
    longest = max(data.longest_estimate.values())
    assert data.lengths == tuple(sorted({row for _, row in data.rows} | set(range(GRID, longest + 1, GRID))))
    assert data.lengths[0] == GRID and 102400 in data.lengths and data.lengths[-1] >= longest - GRID


@pytest.mark.parametrize("objective", ["cheapest", "min_gpus"])
@pytest.mark.parametrize("model", ["Qwen3-8B", "Qwen3-30B-A3B"])
@pytest.mark.parametrize("interconnect", ["nvlink", "pcie"])
def test_cost_ranks_order_combinations_by_their_exact_costs(objective: str, model: str, interconnect: Interconnect):
    # For a mixture of experts too: its held/active ratio, a fraction of large terms, scales the whole-number costs;
    # over PCIe, SP's weight times its factor.
    weights, counts = Weights(offload=0.07, sp=0.2, env=0.13, sp_pcie_factor=2.5), (1, 2, 3, 6, 8, 16)
    held_per_active = CATALOG.model(model).held_per_active

    combinations = [(n, e, o, s) for n in counts for e in (0, 1) for o in (0, 1) for s in range(1, 17)]
    cost = {c: exact_cost(weights, held_per_active, interconnect, c) for c in combinations}
    by_cost = sorted(combinations, key=lambda c: ranking_key("cheapest", c, cost[c]))
    ordered = sorted(combinations, key=lambda c: ranking_key(objective, c, cost[c]))
    ranks = cost_ranks(counts, objective, weights, held_per_active, interconnect)
    assert [entry.combination for entry in ranks] == ordered and [entry.rank for entry in ranks] == list(range(384))
    assert [by_cost[entry.cost_rank] for entry in ranks] == ordered
    first_of_cost: dict[Fraction, int] = {}
    for rank, combination in enumerate(by_cost):
        first_of_cost.setdefault(cost[combination], rank)
    for entry in ranks:  # the tier: the cost rank of the first combination of exactly its cost
        assert entry.cost_tier == first_of_cost[cost[entry.combination]]


@pytest.mark.parametrize("node_gpus", [4, 8])
@pytest.mark.parametrize("budget_gpus", [1, 3, 6, 8, 16])
def test_a_refused_sp_lists_the_degrees_some_count_within_the_budget_runs(budget_gpus: int, node_gpus: int) -> None:
    # One source for the SP degrees usable within a budget: those of some count within it, as sp_degrees gives a
    # count's (check_sp listed the heads' degrees up to a node itself). A count past a node adds none.
    for model in CATALOG.models:
        usable = sorted({sp for gpus in range(1, budget_gpus + 1) for sp in sp_degrees(model, gpus, node_gpus)})
        assert list(sp_degrees_within(model, budget_gpus, node_gpus)) == usable
        with pytest.raises(QueryError) as refused:
            check_sp(model, 64, None, budget_gpus, node_gpus)
        assert str(refused.value).endswith(f": {', '.join(map(str, usable))})")


def test_an_answer_says_whether_its_reason_named_the_query_s_limits():
    # What follows a reason (solve cluster's --no-estimate clause) names the host memory again only where the reason
    # did not: the answer says so, where a substring test of the reason's text did. Qwen3-4B at 131072 tokens within
    # 16 GiB: "nothing in the tables ... trains with 16 GiB of host memory per node (...)"; Qwen3-32B has no tables.
    def answered(model: str, length: int) -> Answer:
        query = make_query(CATALOG, model=model, gpu="a100", max_model_len=length, budget_gpus=8, host_ram_gb=16,
                           host_ram_source="the pool's host_ram_gb", estimate="never", objective="min_gpus")
        return answer_for(CATALOG, query, "A100-80GB")

    named, unnamed = answered("4B", 131072), answered("32B", 16384)
    assert named.reason is not None and named.reason.startswith(
        "nothing in the tables for Qwen3-4B on A100-80GB within 8 GPUs trains with 16 GiB of host memory per node")
    assert unnamed.reason == "the tables have no Qwen3-32B on A100-80GB"
    assert (named.limits_named, unnamed.limits_named) == (True, False)
    assert "limits_named" not in named.as_json()


def test_a_plans_exact_cost_is_worked_out_once_per_weights_and_combination():
    # Every plan's cost asks exact_cost again (fractions, slow to multiply): cached, the same exact value each time.
    weights = Weights(offload=0.3, sp=0.05, env=0.01)
    first = exact_cost(weights, DENSE, "nvlink", (4, 1, 1, 2))
    hits = exact_cost.cache_info().hits
    assert exact_cost(weights, DENSE, "nvlink", (4, 1, 1, 2)) == first == (
        Fraction(1, 4) * Fraction(13, 10) * Fraction(21, 20) * Fraction(101, 100))
    assert exact_cost.cache_info().hits == hits + 1
