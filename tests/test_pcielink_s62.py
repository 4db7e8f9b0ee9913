"""The interconnect in SP's cost and cautions (session 62): SP on GPUs that reach one another over PCIe alone (two RTX
4090s, no NVLink) cost the same as on NVLink-joined H100s, and nothing said so. Each GPU type of the catalogue now
says its interconnect (`GpuType.interconnect`); over PCIe SP's weight counts `Weights.sp_pcie_factor` times in the
cost the solver minimises, and an SP plan is cautioned (`sp-over-pcie`)."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from command_words import make_query
from pydantic import ValidationError
from reference import check_plan, enumerate_plans, ranked_alternatives

import solver
from solver.results import CautionCode
from solver.solve import plan as solve_plan
from solver.tables import GpuType, TableError, Weights, load_catalog
from solver.tables.reading import load_validated
from solver.tables.schema import GpusFile

CATALOG = solver.load_catalog()
TODAYS_WEIGHTS = Weights(offload=1.0, sp=0.1, env=0.01, sp_pcie_factor=1.0)
"""The weights before the interconnect counted (sp_pcie_factor 1: SP weighed as on NVLink)."""

PCIE = {"L40S-48GB", "L40-48GB", "L20-48GB", "A40-48GB", "RTX-A6000-48GB", "RTX-6000-Ada-48GB", "A10-24GB", "L4-24GB",
        "RTX-4090-24GB", "RTX-5090-32GB"}
INFINITY_FABRIC = {"MI300X", "MI325X"}


def test_every_gpu_type_of_the_catalogue_says_its_interconnect_and_where_it_is_stated():
    for gpu in CATALOG.gpu_types:
        expected = "pcie" if gpu.name in PCIE else "infinity-fabric" if gpu.name in INFINITY_FABRIC else "nvlink"
        assert gpu.interconnect == expected, gpu.name
        assert gpu.interconnect_source and ("NVLink" in gpu.interconnect_source
                                            or "Infinity Fabric" in gpu.interconnect_source), gpu.name
    # The tabled GPU types keep theirs (a feasibility file takes it from gpus.yaml).
    assert CATALOG.gpu("a100").interconnect == CATALOG.gpu("h20").interconnect == "nvlink"
    assert CATALOG.gpu("a100").tables and CATALOG.gpu("h20").tables


def test_a_catalogue_row_without_its_interconnect_is_refused(tmp_path: Path):
    gpus = tmp_path / "gpus.yaml"
    gpus.write_text("gpus:\n  - {name: RTX-3090-24GB, memory_gb: 24, source: mine}\n", encoding="utf-8")
    with pytest.raises(TableError) as refused:
        load_validated(GpusFile, gpus)
    assert str(refused.value) == (f"{gpus}: RTX-3090-24GB: give its interconnect (nvlink, infinity-fabric or pcie) "
                                  "and interconnect_source")
    shipped = Path(solver.tables.shipped_tables_directory())
    tables = tmp_path / "tables"
    (tables / "feasibility").mkdir(parents=True)
    for name in ("models.yaml", "feasibility/a100-80gb.yaml"):
        (tables / name).write_text((shipped / name).read_text(encoding="utf-8"), encoding="utf-8")
    text = (shipped / "gpus.yaml").read_text(encoding="utf-8")
    without = 'interconnect: pcie, interconnect_source: "NVIDIA L4 datasheet: PCIe Gen4 x16, no NVLink",'
    assert without in text
    (tables / "gpus.yaml").write_text(text.replace(without, ""), encoding="utf-8")
    with pytest.raises(TableError, match="L4-24GB: give its interconnect"):
        load_catalog(tables)


@pytest.mark.parametrize(("fields", "problem"), [
    ({"interconnect": "pcie"}, "give interconnect and interconnect_source together"),
    ({"interconnect_source": "a datasheet"}, "give interconnect and interconnect_source together"),
    ({"interconnect": "nvswitch", "interconnect_source": "a datasheet"}, "'nvlink', 'infinity-fabric' or 'pcie'"),
])
def test_an_interconnect_is_one_of_three_and_comes_with_its_source(fields: dict[str, str], problem: str):
    with pytest.raises(ValidationError, match=problem):
        GpuType(gpu="Mine-24GB", memory_gb=24, source="mine", **fields)
    assert GpuType(gpu="Mine-24GB", memory_gb=24, source="mine").interconnect is None  # your own: weighed as NVLink


def test_the_shipped_weights_weigh_sp_three_times_over_pcie_and_a_file_with_the_factor_one_as_on_nvlink(
        tmp_path: Path):
    assert solver.load_weights() == Weights(offload=1.0, sp=0.1, env=0.01, sp_pcie_factor=3.0)
    older = tmp_path / "weights.yaml"
    older.write_text("offload: 1.0\nsp: 0.1\nenv: 0.01\nsp_pcie_factor: 1\n", encoding="utf-8")
    assert solver.load_weights(older) == TODAYS_WEIGHTS and TODAYS_WEIGHTS.sp_pcie_factor == 1.0


@pytest.mark.parametrize(("value", "problem"), [
    ("0.5", "sp_pcie_factor: must be at least 1, got 0.5"),
    ("yes", "sp_pcie_factor: must be a number, got true"),
])
def test_a_bad_sp_pcie_factor_is_refused_in_one_line(cli, tmp_path: Path, value: str, problem: str):
    weights = tmp_path / "weights.yaml"
    weights.write_text(f"offload: 1.0\nsp: 0.1\nenv: 0.01\nsp_pcie_factor: {value}\n", encoding="utf-8")
    status, out, err = cli("--weights", str(weights), "--gpu", "4090", "--gpus", "2", "--model", "1.7B",
                           "--len", "4096")
    assert (status, out) == (2, "") and err.count("\n") == 1
    assert err.startswith(f"solve: error: --weights {weights}: ") and problem in err, err


def test_the_reviews_two_4090s_keep_their_plan_at_the_pcie_cost_with_a_caution(cli):
    # Before: Env + Offload + SP=2 at 15360 tokens for (1/2) * 2 * 1.1 * 1.01 = 1.111, as on two H100s, and no word
    # on the interconnect. SP=2 is the only way to 15360 here, so nothing trades places; it costs (1/2) 2 1.3 1.01.
    status, out, _ = cli("--gpu", "4090", "--gpus", "2", "--model", "1.7B", "--maximize", "len", "--json")
    [best] = json.loads(out)[0]["plans"]
    assert status == 0
    assert (best["gpus"], best["env"], best["offload"], best["sp"], best["max_model_len"]) == (2, True, True, 2, 15360)
    assert best["cost"] == float(Fraction(1, 2) * 2 * Fraction(13, 10) * Fraction(101, 100)) == 1.313
    assert best["caution_codes"] == ["thin-headroom", "sp-over-pcie"]
    assert best["cautions"][-1] == (
        "SP=2 on RTX-4090-24GB cards, which reach one another over PCIe: Ulysses' all-to-all crosses it, or host "
        "memory where the cards cannot reach one another directly, in every layer; the cost weighs that above "
        "NVLink's by a ranking weight, not a measured time, and no plan without SP fits 15360 tokens here at Trinity's "
        "default token budget, but one with a lowered budget does (--sp 1 with --token-budget auto): it may train "
        "faster, so time a step of each")  # s93: it said SP over PCIe is what trains the length
    _, text, _ = cli("--gpu", "4090", "--gpus", "2", "--model", "1.7B", "--maximize", "len")
    assert "cost           1.313 relative step time (best)" in text
    assert "caution        SP=2 on RTX-4090-24GB cards, which reach one another over PCIe: " in text
    # The longest plan without SP: shorter, so the caution names none (session 73: it sent the user to --sp 1).
    _, out, _ = cli("--gpu", "4090", "--gpus", "2", "--model", "1.7B", "--maximize", "len", "--sp", "1", "--json")
    [without_sp] = json.loads(out)[0]["plans"]
    assert (without_sp["env"], without_sp["offload"], without_sp["max_model_len"], without_sp["cost"]) == (
        True, True, 7168, 1.01)
    assert CautionCode.SP_OVER_PCIE.value not in without_sp["caution_codes"]


def test_the_same_plan_on_two_h100s_costs_what_it_did_and_is_not_cautioned():
    (answer,) = solver.plan("1.7B", gpu="h100", budget_gpus=2, max_model_len=4096, sp=2, env=True, offload=True,
                            exact=True)
    assert answer.plans[0].cost == 1.111 and CautionCode.SP_OVER_PCIE not in answer.plans[0].caution_codes


def l40s_14b(weights: Weights) -> list[tuple[int, str, int, float]]:
    """The top two plans for Qwen3-14B at 16384 tokens within 8 L40S cards under `weights`."""
    (answer,) = solver.plan("14B", gpu="l40s", budget_gpus=8, max_model_len=16384, weights=weights, top=2)
    return [(p.gpus, p.setting.label, p.max_model_len, p.cost) for p in answer.plans]


def test_on_eight_l40s_sp8_and_offload_trade_places_as_the_reference_ranks_them():
    # Env + SP=8 weighs 1 + 0.1 * 7 = 1.7 on NVLink, below Env + Offload + SP=2's 2 * 1.1 = 2.2; over PCIe 1 + 0.3 * 7
    # = 3.1, above 2 * 1.3 = 2.6: the cheapest plan is the other one. SP=4 (1.9) stays below Env + Offload (2.02).
    assert l40s_14b(TODAYS_WEIGHTS)[0] == (8, "Env + SP=8", 16384, 0.214625)
    on_six = float(Fraction(1, 6) * 2 * Fraction(13, 10) * Fraction(101, 100))
    assert l40s_14b(solver.load_weights()) == [(8, "Env + Offload + SP=2", 16384, 0.32825),
                                               (6, "Env + Offload + SP=2", 16384, on_six)]
    request = {"gpu": "L40S-48GB", "model": "Qwen3-14B", "budget_gpus": 8, "max_model_len": 16384}
    every = enumerate_plans(CATALOG, objective="cheapest", estimates=True, **request)
    (answer,) = solve_plan(make_query(CATALOG, objective="cheapest", top=5, **request), CATALOG)
    got = [plan.model_dump(mode="json") for plan in answer.plans]
    assert got == ranked_alternatives(every, CATALOG.model("Qwen3-14B"), CATALOG.gpu("L40S-48GB"))[:5]
    assert all(check_plan(CATALOG, plan, estimates=True, **request) == [] for plan in got)
    sp8 = next(plan for plan in every if (plan["sp"], plan["offload"], plan["env"]) == (8, False, True))
    assert sp8["cost"] == float(Fraction(1, 8) * Fraction(31, 10) * Fraction(101, 100))
    assert sp8["caution_codes"][-1] == "sp-over-pcie"


@pytest.mark.parametrize(("gpu", "model", "objective", "budget", "length"), [
    ("a100", "4B", "max_len", 6, None),
    ("a100", "8B", "cheapest", 6, 32768),
    ("a100", "14B", "min_gpus", 6, 20480),
    ("h20", "8B", "max_len", 6, None),
    ("h20", "32B", "cheapest", 6, 16384),
    ("h20", "14B", "cheapest", 6, 65536),
])
def test_plans_on_the_a100_and_h20_keep_todays_answers_and_costs(
        gpu: str, model: str, objective: str, budget: int, length: int | None):
    asked = {"gpu": gpu, "objective": objective, "budget_gpus": budget, "top": 5,
             **({"max_model_len": length} if length else {})}
    (now,) = solver.plan(model, **asked)
    (today,) = solver.plan(model, weights=TODAYS_WEIGHTS, **asked)
    assert now.plans and now == today  # equal results compare equal however long each took
    assert all(CautionCode.SP_OVER_PCIE not in plan.caution_codes for plan in now.plans)


def test_the_a100s_longest_4b_plan_costs_exactly_what_it_did():
    (answer,) = solver.plan("4B", gpu="a100", budget_gpus=6, objective="max_len")
    best = answer.plans[0]
    assert (best.gpus, best.setting.label, best.max_model_len, best.cost) == (4, "Env + Offload + SP=4", 102400, 0.6565)
    assert best.cost == float(Fraction(1, 4) * 2 * Fraction(13, 10) * Fraction(101, 100))  # (1/4) 2 1.3 1.01
