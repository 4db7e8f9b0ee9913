"""What s73's reviews left, settled by helper smallslips17: the SP-over-PCIe caution names SP 1 only where a plan
without SP fits the plan's length (else it says SP is what trains it); every card answers to its name and aliases
with its memory size written either way (``RTX4090-24G``)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest

import solver
from solver.results import CautionCode, sp_over_pcie_caution
from solver.tables import GpuType, load_catalog

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


def _sized_forms(gpu: GpuType) -> list[str]:
    """What people write for `gpu`: its name and each alias, each with its memory size as ``-24GB``, ``-24G``,
    `` 24gb`` or `` 24g`` after it (where it names none)."""
    stems = [re.sub(rf"-{gpu.memory_gb}gb?$", "", known, flags=re.IGNORECASE) for known in (gpu.name, *gpu.aliases)]
    return [f"{stem}{size}" for stem in stems
            for size in (f"-{gpu.memory_gb}GB", f"-{gpu.memory_gb}G", f" {gpu.memory_gb}gb", f" {gpu.memory_gb}g")]


@pytest.mark.parametrize("gpu", load_catalog().gpu_types, ids=lambda gpu: gpu.name)
def test_every_card_answers_to_its_names_with_its_size_written_either_way(gpu: GpuType):
    # RTX4090-24G was unknown while A100 40G and l40s-48g resolved: one alias apart. The rule is now the same for each.
    catalog = load_catalog()
    assert {form: catalog.gpu(form).name for form in _sized_forms(gpu)} == dict.fromkeys(_sized_forms(gpu), gpu.name)


def test_the_persona_s_4090_spelling_resolves_and_a_size_alone_is_still_a_guess(cli: Cli):
    assert load_catalog().gpu("RTX4090-24G").name == "RTX-4090-24GB"
    status, _, err = cli("--model", "0.6B", "--gpu", "24g", "--gpus", "1", "--len", "4096")
    assert status == 2 and err.startswith("solve: error: unknown GPU '24g' (did you mean A10-24GB, L4-24GB or "
                                          "RTX-4090-24GB?)")
