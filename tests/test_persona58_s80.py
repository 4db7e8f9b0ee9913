"""Session 80, persona58 (a team lead planning Qwen3-30B-A3B GRPO with LoRA, Qwen3-14B DPO and Qwen3-4B PPO on H20
and A100 nodes): ``solve map`` with LoRA on a mixture of experts drew cells that train with no word of the
``lora-moe-config-unsaved`` caution its cells' plans carry (with transformers 5, Trinity saves the adapter's config
cut short and the rollout fails to reload it at the first weight sync), which ``solve`` says for the same plan. A
``caution`` line under the legend now gives it, once per model, in ``solve``'s words, worded for the release; none
under 0.5.1, whose transformers 4 saves the config whole, and none without LoRA."""

from __future__ import annotations

import json
from collections.abc import Callable

import solver
from solver.results import CautionCode

Cli = Callable[..., tuple[int, str, str]]

MOE_MAP = ("map", "--gpu", "h20", "--model", "Qwen3-30B-A3B", "--budgets", "1,2,4,8")
LORA = ("--lora-rank", "16", "--lora-targets", "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj")
CAUTION_06 = (
    "caution: LoRA on Qwen3-30B-A3B, a mixture of experts: with transformers 5 (Trinity 0.6 requires 5.12.1 or later) "
    "PEFT makes the adapter's target_parameters a set, which Trinity's _save_lora cannot write as JSON, so the "
    "explorer's vLLM fails to reload the adapter at the first weight sync: train Qwen3-30B-A3B without LoRA, or patch "
    "_save_lora to write target_parameters as a list")
OTHER = "other cautions, unmarked (their words: --json): thin-headroom (4 cells)"
HOST_NEED = "host memory: 2 cells need 272.8 GiB per node, more than a node is assumed to have (--host-ram checks it)"
"""The legend's line of the Offload cells' host memory past what a node is assumed to have (mapcaution91)."""
SAVED_SPLIT = "caution: target_modules '.*\\.(q_proj|k_proj|v_proj|o_proj|gate_proj|up_proj|down_proj)' is a regular"
CAUTION_052_START = ("caution: LoRA on Qwen3-30B-A3B, a mixture of experts: with transformers 5 (Trinity 0.5.0 allows "
                     "it, 0.5.2 up to 5.3.0; 0.5.1 pins transformers below 5, where PEFT converts nothing")


def _lines(out: str) -> list[str]:
    """The map's lines, rejoined where the terminal's width wrapped the legend: one line per legend entry."""
    joined: list[str] = []
    for line in out.splitlines():
        if joined and not line.startswith(("cells:", "settings:", "caution:", "host memory:", "other cautions", "†",
                                           "H20", "┏", "┃", "┡", "│", "└")):
            joined[-1] += " " + line
        else:
            joined.append(line)
    return joined


def test_a_lora_map_of_a_mixture_of_experts_gives_the_save_caution_under_its_legend(cli: Cli):
    status, out, err = cli(*MOE_MAP, *LORA, "--trinity-version", "0.6")
    assert (status, err) == (0, "")
    lines = _lines(out)
    assert lines[4] == "│ Qwen3-30B-A3B │ 32k E+O@1~! │ 63k E+O+SP2@2~! │ 126k E+O+SP4@4~! │ 252k E+O+SP8@8~!^ │"
    assert lines[-3:] == [CAUTION_06, HOST_NEED, OTHER]  # then the codes no line says (loraexclude2, s82)
    assert [line for line in lines if line.startswith("caution:")] == [CAUTION_06]  # once, not once per cell


def test_the_caution_follows_the_release_and_is_the_plans_own(cli: Cli):
    status, out, _ = cli(*MOE_MAP, *LORA, "--trinity-version", "0.5.2")
    assert status == 0
    # and the regex's, which transformers 4 saves split, as the plans' lora-targets-saved-split says (loraexclude2)
    caution, saved_split = [line for line in _lines(out) if line.startswith("caution:")]
    assert caution.startswith(CAUTION_052_START) and saved_split.startswith(SAVED_SPLIT)
    status, out, _ = cli(*MOE_MAP, *LORA, "--trinity-version", "0.5.2", "--json")
    cells = [plan for row in json.loads(out)[0]["rows"] for plan in row["plans"] if plan]
    assert len(cells) == 4
    assert all(CautionCode.LORA_MOE_CONFIG_UNSAVED in plan["caution_codes"] for plan in cells)
    assert {plan["cautions"][plan["caution_codes"].index(CautionCode.LORA_MOE_CONFIG_UNSAVED)]
            for plan in cells} == {caution.removeprefix("caution: ")}


def test_no_save_caution_under_0_5_1_nor_without_lora_nor_on_a_dense_model(cli: Cli):
    for argv in ((*MOE_MAP, *LORA, "--trinity-version", "0.5.1"), (*MOE_MAP, "--trinity-version", "0.6"),
                 ("map", "--gpu", "h20", "--model", "14B", "--lora-rank", "16", "--budgets", "1,2,4,8")):
        status, out, err = cli(*argv)
        assert (status, err) == (0, "")
        assert not [line for line in _lines(out) if line.startswith("caution: LoRA on")], argv


def test_a_map_by_length_says_it_once_too(cli: Cli):
    status, out, _ = cli(*MOE_MAP, *LORA, "--trinity-version", "0.6", "--by", "len")
    assert status == 0
    assert [line for line in _lines(out) if line.startswith("caution:")] == [CAUTION_06]


def test_the_apis_map_text_gives_it_too():
    maps = solver.map_plans(gpu="h20", model="Qwen3-30B-A3B", budgets=[1, 2], lora_rank=16, trinity_version="0.6")
    assert " ".join(solver.map_text(maps).split()).endswith(
        f"{CAUTION_06} {HOST_NEED.replace('--host-ram', 'host_ram_gb')} other cautions, unmarked (their words: the "
        "GpuMap): thin-headroom (2 cells: ≤1, ≤2)")


FORMS = ("give all-linear (Trinity's default: every linear layer but the output projection), module names "
         "separated by commas (q_proj,v_proj) or a regular expression that PEFT matches whole module names "
         "with (.*\\.(q_proj|v_proj))")


def test_targets_on_a_layers_module_all_linear_leaves_out_name_the_modules_it_counts(cli: Cli):
    """`--lora-targets experts` read as if the experts could not be adapted: the refusal now names the layers' modules
    counted, the routed experts' projections among them (each expert's under 0.5.1's transformers 4)."""
    asked = ("--model", "Qwen3-30B-A3B", "--gpu", "h20", "--len", "64k", "--minimize", "gpus", "--lora-rank", "16")
    fused = "model.layers.N.mlp.experts.{gate,up,down}_proj"
    for version, experts in (("0.6", fused), ("0.5.1", "model.layers.N.mlp.experts.E.{gate,up,down}_proj")):
        status, out, err = cli(*asked, "--lora-targets", "experts", "--trinity-version", version)
        assert (status, out) == (2, "")
        assert err == (
            "solve: error: --lora-targets 'experts' matches model.layers.N.mlp.experts of Qwen3-30B-A3B, which "
            "all-linear leaves out and rft-solver does not count (it counts model.layers.N.self_attn.{q,k,v,o}_proj, "
            f"model.layers.N.mlp.gate, {experts}): {FORMS}\n")
    status, _, err = cli("memory", "--model", "8B", "--gpu", "h20", "--gpus", "2", "--len", "16k", "--lora-rank", "16",
                         "--lora-targets", ".*q_norm")
    assert (status, err) == (2, (
        "solve memory: error: --lora-targets '.*q_norm' matches model.layers.N.self_attn.q_norm of Qwen3-8B, which "
        "all-linear leaves out and rft-solver does not count (it counts model.layers.N.self_attn.{q,k,v,o}_proj, "
        f"model.layers.N.mlp.{{gate,up,down}}_proj): {FORMS}\n"))
    # outside the layers (the embeddings, lm_head, the final norm) the line is as it was: nothing of a layer to name
    status, _, err = cli(*asked, "--lora-targets", ".*norm")
    assert (status, err) == (2, ("solve: error: --lora-targets '.*norm' matches model.norm of Qwen3-30B-A3B, which "
                                 f"all-linear leaves out and rft-solver does not count: {FORMS}\n"))
