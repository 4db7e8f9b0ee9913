"""What s73's reviews left, settled by helper smallslips17: the SP-over-PCIe caution names SP 1 only where a plan
without SP fits the plan's length (else it says SP is what trains it)."""

from __future__ import annotations

import json
from collections.abc import Callable

import solver
from solver.results import CautionCode, sp_over_pcie_caution
from solver.tables import load_catalog

Cli = Callable[..., tuple[int, str, str]]

PCIE_WORDS = ("SP=2 on RTX-4090-24GB cards, which reach one another over PCIe: Ulysses' all-to-all crosses it, or host "
              "memory where the cards cannot reach one another directly, in every layer; the cost weighs that above "
              "NVLink's by a ranking weight, not a measured time")
"""The SP-over-PCIe caution's words for SP=2 on RTX 4090s up to its advice."""


def test_the_pcie_caution_names_no_sp_1_where_no_plan_without_sp_fits(cli: Cli):
    # Qwen3-0.6B on two RTX 4090s at 16384 tokens: --sp 1 has no plan (its longest is 8192), so the caution that sent
    # the user there says what holds instead.
    status, out, _ = cli("--model", "Qwen3-0.6B", "--gpu", "4090", "--gpus", "2", "--len", "16384", "--json")
    [best] = json.loads(out)[0]["plans"]
    assert status == 0 and best["sp"] == 2
    assert best["caution_codes"][-1] == CautionCode.SP_OVER_PCIE.value
    assert best["cautions"][-1] == (
        f"{PCIE_WORDS}, and no plan without SP fits 16384 tokens here: SP over PCIe is what trains this length, so "
        "time a step before a long run")
    status, out, _ = cli("--model", "Qwen3-0.6B", "--gpu", "4090", "--gpus", "2", "--len", "16384", "--sp", "1",
                         "--json")
    assert status == 1 and json.loads(out)[0]["plans"] == []


def test_the_pcie_caution_names_sp_1_where_a_plan_without_sp_fits(cli: Cli):
    status, out, _ = cli("--model", "Qwen3-0.6B", "--gpu", "4090", "--gpus", "2", "--len", "8192", "--json")
    [best] = json.loads(out)[0]["plans"]
    assert status == 0 and best["sp"] == 2
    assert best["cautions"][-1] == (
        f"{PCIE_WORDS}, so a plan without SP that fits (--sp 1) may train faster: time a step of each")
    status, out, _ = cli("--model", "Qwen3-0.6B", "--gpu", "4090", "--gpus", "2", "--len", "8192", "--sp", "1",
                         "--json")
    [without_sp] = json.loads(out)[0]["plans"]
    assert status == 0 and without_sp["sp"] == 1


def test_the_pcie_caution_hedges_where_a_fit_without_sp_is_not_known():
    # A plan whose question without SP was left open (its solve out of time) names SP 1 only where one fits.
    gpu = load_catalog().gpu("4090")
    assert sp_over_pcie_caution(gpu, 2) == (
        f"{PCIE_WORDS}, so a plan without SP (--sp 1), where one fits, may train faster: time a step of each")


def test_the_longest_plan_s_pcie_caution_speaks_of_its_own_length():
    # Maximising, the question without SP is asked at the longest plan's length, which --sp 1 does not reach.
    (answer,) = solver.plan("0.6B", gpu="4090", budget_gpus=2, objective="max_len")
    assert answer.best is not None and (answer.best.sp, answer.best.max_model_len) == (2, 16384)
    assert answer.best.cautions[-1].endswith(", and no plan without SP fits 16384 tokens here: SP over PCIe is what "
                                             "trains this length, so time a step before a long run")
