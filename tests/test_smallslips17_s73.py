"""What s73's reviews left, settled by helper smallslips17: the SP-over-PCIe caution names SP 1 only where a plan
without SP fits the plan's length (else it says SP is what trains it); every card answers to its name and aliases
with its memory size written either way (``RTX4090-24G``); the trainer's dynamic-batch-off line names the roles
that still read its budget, per release; the length row gives a kept YaRN's interpolated factor as it resolves; a
placed trainer across nodes that no fast fabric is said to join is cautioned (a pool's ``node_interconnect``)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_smallslips16_s73 import cards_view

import solver
from solver.results import CautionCode, sp_over_pcie_caution
from solver.tables import GpuType, load_catalog
from solver.trinity import trinity_config_problems

Cli = Callable[..., tuple[int, str, str]]

PCIE_WORDS = ("SP=2 on RTX-4090-24GB cards, which reach one another over PCIe: Ulysses' all-to-all crosses it, or host "
              "memory where the cards cannot reach one another directly, in every layer; the cost weighs that above "
              "NVLink's by a ranking weight, not a measured time")
"""The SP-over-PCIe caution's words for SP=2 on RTX 4090s up to its advice."""


def test_the_pcie_caution_names_no_sp_1_where_no_plan_without_sp_fits(cli: Cli):
    # Qwen3-0.6B on four RTX 4090s at 32768 tokens: --sp 1 has no plan, even with --token-budget auto (its longest is
    # 16384), so the caution that sent the user there says what holds instead.
    asked = ("--model", "Qwen3-0.6B", "--gpu", "4090", "--gpus", "4", "--len", "32768", "--json")
    status, out, _ = cli(*asked)
    [best] = json.loads(out)[0]["plans"]
    assert status == 0 and best["sp"] == 4
    assert best["caution_codes"][-1] == CautionCode.SP_OVER_PCIE.value
    assert best["cautions"][-1] == (
        f"{PCIE_WORDS.replace('SP=2', 'SP=4')}, and no plan without SP fits 32768 tokens here: SP over PCIe is what "
        "trains this length, so time a step before a long run")
    for lowered in ((), ("--token-budget", "auto")):
        status, out, _ = cli(*asked, "--sp", "1", *lowered)
        assert status == 1 and json.loads(out)[0]["plans"] == []


def test_the_pcie_caution_names_a_lowered_budget_where_only_it_fits_without_sp(cli: Cli):
    # Qwen3-0.6B on two RTX 4090s at 16384 tokens: --sp 1 has no plan at Trinity's default budget, but one with
    # --token-budget auto, which the caution names (s93: it said SP over PCIe is what trains the length).
    asked = ("--model", "Qwen3-0.6B", "--gpu", "4090", "--gpus", "2", "--len", "16384", "--json")
    status, out, _ = cli(*asked)
    [best] = json.loads(out)[0]["plans"]
    assert status == 0 and best["sp"] == 2
    assert best["cautions"][-1] == (
        f"{PCIE_WORDS}, and no plan without SP fits 16384 tokens here at Trinity's default token budget, but one with "
        "a lowered budget does (--sp 1 with --token-budget auto): it may train faster, so time a step of each")
    status, out, _ = cli(*asked, "--sp", "1")
    assert status == 1 and json.loads(out)[0]["plans"] == []
    status, out, _ = cli(*asked, "--sp", "1", "--token-budget", "auto")
    [lowered] = json.loads(out)[0]["plans"]
    assert status == 0 and lowered["sp"] == 1 and lowered["max_token_len_per_gpu"] < 2 * 16384
    # A budget the user caps is no default: its SP=1 question lowers within it already, and the words are as before.
    status, out, _ = cli(*asked, "--token-budget", "16384")
    [capped] = json.loads(out)[0]["plans"]
    assert status == 0 and capped["sp"] == 2 and "at Trinity's default token budget" not in capped["cautions"][-1]


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
    (answer,) = solver.plan("0.6B", gpu="4090", budget_gpus=4, objective="max_len")
    assert answer.best is not None and (answer.best.sp, answer.best.max_model_len) == (4, 32768)
    assert answer.best.cautions[-1].endswith(", and no plan without SP fits 32768 tokens here: SP over PCIe is what "
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


def _dynamic_off_line(version: str | None, **ref: object) -> str:
    """The ``dynamic-batch-off`` line on ``trainer.use_dynamic_bsz`` of a Qwen3-8B config on 4 GPUs whose trainer's
    dynamic batch sizes are off and its ref's own key (`ref`, beside ``log_prob_use_dynamic_bsz: true``) on."""
    config = {"model": {"max_model_len": 4096}, "algorithm": {"algorithm_type": "grpo"}, "trainer": {
        "use_dynamic_bsz": False, "max_token_len_per_gpu": 8192, "trainer_config": {
            "actor_rollout_ref": {"ref": {"log_prob_use_dynamic_bsz": True, **ref}}}}}
    found = trinity_config_problems(config, load_catalog().model("Qwen3-8B"), 4,
                                    version=version)  # type: ignore[arg-type]
    [line] = [problem.words for problem in found if problem.code.value == "dynamic-batch-off"]
    return line


DYNAMIC_OFF = ("trainer.use_dynamic_bsz is false: verl then ignores the token budget (max_token_len_per_gpu), which "
               "the tables measured and the plan sets, and fills micro-batches by sequence count: set it to true")


def test_the_trainer_s_dynamic_batch_line_names_the_ref_that_still_reads_its_budget_per_release():
    # The ref's own key turns dynamic batching back on where Trinity reads it (0.5; 0.6 on verl before 0.8), and the
    # ref, setting no budget of its own, takes the trainer's: verl does not ignore that budget there.
    said = ("trainer.use_dynamic_bsz is false: verl then fills micro-batches by sequence count, ignoring the token "
            "budget (max_token_len_per_gpu), which the tables measured and the plan sets, in every pass but the ref's "
            "({}), whose own key turns dynamic batch sizes back on and which takes this budget, setting none of its "
            "own{}: set it to true")
    on_08 = "; on Trinity 0.6 with verl 0.8 or later every pass follows this key"
    assert _dynamic_off_line("0.5") == said.format("Trinity 0.5", "")
    assert _dynamic_off_line("0.6") == said.format("Trinity 0.6 on verl before 0.8", on_08)
    assert _dynamic_off_line(None) == said.format("Trinity 0.5 and Trinity 0.6 on verl before 0.8", on_08)
    # A ref with a budget of its own reads none of the trainer's: the line stays as it was.
    assert _dynamic_off_line(None, log_prob_max_token_len_per_gpu=8192) == DYNAMIC_OFF


def test_the_length_row_gives_a_kept_yarn_s_interpolated_factor_as_it_resolves(cli: Cli, tmp_path: Path):
    # Its factor and positions refer to keys of their own: the row showed ``factor ${yarn.factor} over
    # ${yarn.original}``, text that says nothing of the length; the plan reads 4 over 32768, which reaches 131072.
    row, out = cards_view(cli, tmp_path, "${yarn.factor}", "${yarn.original}", yarn={"factor": 4, "original": 32768})
    assert row == "max_model_len  131072 (YaRN rope scaling, cards.yaml's factor 4 over 32768, which stays)"
    assert "# model.rope_scaling: cards.yaml's, as --write keeps it (" in out  # with the rope_theta it lacks (s81)


SMALL_JOB_FLEET = """pools:
  - {{name: lab, gpu: A100-40GB, nodes: 3, gpus_per_node: 4{link}}}
jobs:
  - {{name: tiny, model: Qwen3-0.6B, max_model_len: 8192, rollout_gpus: 1}}
"""
"""A small job the placement widens to 8 trainer GPUs on 2 nodes of 4 (its pool's node interconnect: `link`)."""


def _placed(cli: Cli, tmp_path: Path, link: str) -> tuple[dict[str, Any], str]:
    """The placement of `SMALL_JOB_FLEET` with `link`, as JSON, and the text, its words unwrapped."""
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(SMALL_JOB_FLEET.format(link=link), encoding="utf-8")
    status, out, err = cli("cluster", str(fleet), "--json")
    assert status == 0, err
    [placement] = json.loads(out)["placements"]
    status, text, _ = cli("cluster", str(fleet))
    assert status == 0
    return placement, " ".join(text.split())  # the words wrap at the terminal's width


SPANS_WORDS = ("FSDP gathers and reduces every layer's parameters and gradients between them in every step, which "
               "the cost does not count, and over Ethernet a step may take far longer; ")


def test_a_trainer_across_nodes_no_fast_fabric_joins_is_cautioned(cli: Cli, tmp_path: Path):
    placement, text = _placed(cli, tmp_path, "")
    assert (placement["trainer_gpus"], placement["plan"]["trainer_nodes"]) == (8, 2)
    words = ("its trainer spans nodes the fleet does not say a fast fabric joins (the pool states no "
             f"node_interconnect): {SPANS_WORDS}state node_interconnect: infiniband or roce where one joins them, or "
             "time a step")
    assert (placement["plan"]["caution_codes"][-1], placement["plan"]["cautions"][-1]) == (
        "trainer-spans-nodes", words)
    assert f"caution: tiny: {words}" in text
    placement, _ = _placed(cli, tmp_path, ", node_interconnect: ethernet")
    assert placement["plan"]["cautions"][-1] == (
        f"its trainer spans nodes joined by Ethernet (the pool's node_interconnect): {SPANS_WORDS}time a step against "
        "a trainer within one node")


def test_a_fast_node_interconnect_or_a_trainer_within_a_node_is_not_cautioned(cli: Cli, tmp_path: Path):
    for fast in ("infiniband", "roce"):
        placement, text = _placed(cli, tmp_path, f", node_interconnect: {fast}")
        assert placement["trainer_gpus"] == 8
        assert "trainer-spans-nodes" not in placement["plan"]["caution_codes"] and "its trainer spans" not in text
    (result,) = solver.plan("0.6B", gpu="a100-40gb", budget_gpus=8, max_model_len=8192, node_gpus=4)
    assert result.best is not None and result.best.trainer_nodes == 2
    assert CautionCode.TRAINER_SPANS_NODES not in result.best.caution_codes  # the planner's: no fleet to say it


def test_a_node_interconnect_of_another_name_is_refused_in_one_line(cli: Cli, tmp_path: Path):
    # An admin's short name is told the one it is; a word of none is refused naming the three.
    fleet = tmp_path / "fleet.yaml"
    for written, meant in (("IB", "; did you mean 'infiniband'? (IB is InfiniBand)"),
                           ("RoCE v2", "; did you mean 'roce'? (RoCE v2 is RoCE)"), ("myrinet", "")):
        fleet.write_text(SMALL_JOB_FLEET.format(link=f", node_interconnect: {written}"), encoding="utf-8")
        refusal = (f"solve cluster: error: {fleet}: line 2: pool lab, node_interconnect: must be 'infiniband', 'roce' "
                   f"or 'ethernet', got {written!r}{meant}\n")
        assert cli("cluster", str(fleet)) == (2, "", refusal)
