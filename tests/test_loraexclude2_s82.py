"""Session 82, loraexclude2: the LoRA exclusions' cautions left from s81's reviews.

(1) ``--lora-exclude`` beside ``--from-config``'s own LoRA counts the adapter less those modules, in place of the
config's own exclusions, but its plans carried no ``lora-excluded-adapted`` (every plan caution on LoRA targets was
left to the config's check): now the same caution a plan without the config gets, naming the option; none where
the exclusion is the config's own (its ``but:`` line says it). (2) ``solve map``'s legend said two of the four LoRA
cautions its cells carry, and nothing of the cautions no mark says: now a line per LoRA caution, each model's once,
and a line naming every other code its cells carry, with their counts (derived from `CautionCode`: a new code is
named without a change). (3) The caution's fix regex is quoted for a shell where it follows ``--lora-targets``.
(4) verl before 0.8's ``actor_rollout_ref.model.target_modules`` given as a number is the text Trinity 0.5's typed
``veRLConfig`` makes of it, which PEFT matches whole and finds no module for: refused, as ``model.lora_configs``'."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import solver
from solver.api import answer_query, config_query
from solver.render.maps import LEGEND_CODES, LORA_LEGEND_CODES
from solver.results import CautionCode, GpuMap
from solver.tables import load_catalog
from solver.trinity import read_trinity_config
from solver.trinity.checks import trinity_config_problems

Cli = Callable[..., tuple[int, str, str]]
CATALOG = load_catalog()
MOE_MLP = ".*\\.mlp\\..*"
OWN_LORA = ("model:\n  model_path: Qwen/Qwen3-30B-A3B\n  max_model_len: 16384\n  lora_configs:\n"
            "  - {{lora_rank: 16{own}}}\nalgorithm: {{algorithm_type: grpo}}\n"
            "cluster: {{node_num: 2, gpu_per_node: 8}}\n"
            "explorer: {{rollout_model: {{engine_num: 8, tensor_parallel_size: 1}}}}\n")
CAUTION = (
    "exclude_modules '{excluded}' ({option}) matches Qwen3-30B-A3B's router (mlp.gate) and routed experts "
    "(mlp.experts.gate_proj, mlp.experts.up_proj, mlp.experts.down_proj), but target_modules 'all-linear' adapts them "
    "all the same, in every layer, on transformers 5 (Trinity 0.6's, and 0.5.0's and 0.5.2's where they run on it): "
    "peft 0.21.2 converts a mixture of experts' LoRA config and adapts the router and the routed experts as "
    "target_parameters (all-linear adds them by name, whatever exclude_modules says), which exclude_modules does not "
    "leave out (_inject_parameters); rft-solver counts the adapter on them: give {targets} {regex}, which adapts the "
    "other modules alone")
OTHERS = ".*\\.(q_proj|k_proj|v_proj|o_proj)"


def first_plan(out: str) -> dict[str, Any]:
    plan: dict[str, Any] = json.loads(out)[0]["plans"][0]
    return plan


def own_config(tmp_path: Path, own: str = "") -> str:
    """A Qwen3-30B-A3B GRPO config with its own LoRA at rank 16 (on all-linear, with `own` keys beside), its path."""
    config = tmp_path / "own.yaml"
    config.write_text(OWN_LORA.format(own=own), encoding="utf-8")
    return str(config)


# (1) --lora-exclude beside a config's own LoRA.

def test_a_config_s_own_lora_beside_lora_exclude_gets_the_plan_s_caution(cli: Cli, tmp_path: Path) -> None:
    status, out, err = cli("--from-config", own_config(tmp_path), "--gpu", "h100", "--lora-exclude", MOE_MLP, "--json")
    plan = first_plan(out)
    assert (status, err) == (0, "")
    assert plan["config_lora"] is True
    assert plan["caution_codes"] == ["lora-excluded-adapted", "lora-moe-config-unsaved"]
    said = CAUTION.format(excluded=MOE_MLP, option="--lora-exclude", targets="model.lora_configs[0].target_modules",
                          regex=OTHERS)  # the config's key, which it keeps (smallslips42, s82)
    assert plan["cautions"][0] == said
    # the same words as the plan without the config (before: none beside the config), but for the fix's key
    status, out, _ = cli("--model", "Qwen3-30B-A3B", "--gpu", "h100", "--len", "16384", "--lora-rank", "16",
                         "--lora-exclude", MOE_MLP, "--json")
    alone = CAUTION.format(excluded=MOE_MLP, option="--lora-exclude", targets="--lora-targets", regex=f"'{OTHERS}'")
    assert (status, first_plan(out)["cautions"][0]) == (0, alone)


def test_the_text_says_it_beside_the_config(cli: Cli, tmp_path: Path) -> None:
    status, out, _ = cli("--from-config", own_config(tmp_path), "--gpu", "h100", "--lora-exclude", MOE_MLP)
    flat = " ".join(out.split())
    assert status == 0
    said = CAUTION.format(excluded=MOE_MLP, option="--lora-exclude", targets="model.lora_configs[0].target_modules",
                          regex=OTHERS)
    assert f"caution {said}" in flat


def test_the_config_s_own_exclusion_is_its_check_s_alone(cli: Cli, tmp_path: Path) -> None:
    config = own_config(tmp_path, ", exclude_modules: '.*\\.mlp\\..*'")
    # the same exclusion given again: its but: line says it, and no plan caution repeats it
    status, out, _ = cli("--from-config", config, "--gpu", "h100", "--lora-exclude", MOE_MLP, "--json")
    assert (status, first_plan(out)["caution_codes"]) == (0, ["lora-moe-config-unsaved"])
    status, out, _ = cli("--from-config", config, "--gpu", "h100", "--json")
    assert (status, first_plan(out)["caution_codes"]) == (0, ["lora-moe-config-unsaved"])
    # another exclusion in its place is the option's
    status, out, _ = cli("--from-config", config, "--gpu", "h100", "--lora-exclude", ".*\\.mlp\\.experts\\..*",
                         "--json")
    plan = first_plan(out)
    assert (status, plan["caution_codes"]) == (0, ["lora-excluded-adapted", "lora-moe-config-unsaved"])
    assert plan["cautions"][0].startswith("exclude_modules '.*\\.mlp\\.experts\\..*' (--lora-exclude) matches "
                                          "Qwen3-30B-A3B's routed experts (mlp.experts.gate_proj,")


def test_the_api_s_config_query_names_its_keyword() -> None:
    config = read_trinity_config(OWN_LORA.format(own=""), "own.yaml", {})
    (answer,) = answer_query(config_query(CATALOG, config, gpu="h100", lora_exclude_modules=MOE_MLP), CATALOG)
    assert answer.best is not None
    assert [code.value for code in answer.best.caution_codes] == ["lora-excluded-adapted", "lora-moe-config-unsaved"]
    assert answer.best.cautions[0] == CAUTION.format(excluded=MOE_MLP, option="lora_exclude_modules",
                                                     targets="model.lora_configs[0].target_modules", regex=OTHERS)


# (2) solve map's legend.

@pytest.fixture(scope="module")
def one_cell_map() -> GpuMap:
    (gpu_map,) = solver.map_plans("8B", gpu="h100", budgets=[8])
    return gpu_map


MARK_WORDS = {
    CautionCode.SINGLE_GPU_ADVISED_AGAINST: "† one trainer GPU: Trinity-RFT's guide strongly advises more GPUs",
    CautionCode.PAST_VALIDATED_LENGTH: "^ YaRN past what is validated (quality untested)",
    CautionCode.YARN_UNVALIDATED_MODEL: "^ YaRN past what is validated (quality untested)",
    CautionCode.PAST_NATIVE_ON_OWN_SCALING: "or past the native context on the model's own RoPE scaling (quality",
    CautionCode.PAST_NATIVE_NO_YARN: "or past the native context with no RoPE scaling to reach it (the model's type",
    CautionCode.ROCM_ENV_MAY_NOT_APPLY: "\ncaution: ROCm: PyTorch's ROCm builds also read PYTORCH_HIP_ALLOC_CONF",
    CautionCode.HOST_MEMORY_UNCHECKED: "O Offload (host memory per node not checked: host_ram_gb not given)",
}
"""What the legend says of a code it marks, or says in its own words, where a cell carries it."""
FACTS: dict[CautionCode, dict[str, Any]] = {
    CautionCode.PAST_VALIDATED_LENGTH: {"yarn_beyond_validated": True, "past_validated_length": 1024},
    CautionCode.YARN_UNVALIDATED_MODEL: {"yarn_beyond_validated": True, "past_validated_length": 1024},
    CautionCode.PAST_NATIVE_ON_OWN_SCALING: {"past_validated_length": 1024},
    CautionCode.PAST_NATIVE_NO_YARN: {"past_validated_length": 1024},
    CautionCode.HOST_MEMORY_UNCHECKED: {"offload": True},
}
"""The plan's fields that go with a code where the legend marks them (a real plan's with that caution)."""


def legend_of(gpu_map: GpuMap, code: CautionCode) -> str:
    """The legend of `gpu_map` with its one cell carrying `code`, in the words ``words of CODE``."""
    plan = gpu_map.rows[0].plans[0]
    assert plan is not None
    cell = plan.model_copy(update={"caution_codes": (code,), "cautions": (f"words of {code.value}",),
                                   **FACTS.get(code, {})})
    row = gpu_map.rows[0].model_copy(update={"plans": (cell,)})
    text = solver.map_text([gpu_map.model_copy(update={"rows": (row,)})], width=400)
    return text[text.index("cells:"):]


@pytest.mark.parametrize("code", list(CautionCode), ids=lambda code: code.value)
def test_the_legend_says_every_caution_code_a_cell_carries(one_cell_map: GpuMap, code: CautionCode) -> None:
    legend = legend_of(one_cell_map, code)
    if code in MARK_WORDS:
        assert MARK_WORDS[code] in legend
    elif code in LORA_LEGEND_CODES:
        assert f"\ncaution: words of {code.value}" in legend
    else:  # any other, a new one too: by its code
        assert legend.endswith(f"\nother cautions, unmarked (their words: the GpuMap): {code.value} (1 cell: ≤8)\n")
    assert (code in LEGEND_CODES or code == CautionCode.HOST_MEMORY_UNCHECKED) == ("other cautions" not in legend)


def test_the_legend_s_codes_are_the_enum_s() -> None:
    assert set(MARK_WORDS) | set(LORA_LEGEND_CODES) == LEGEND_CODES | {CautionCode.HOST_MEMORY_UNCHECKED}
    assert LEGEND_CODES <= set(CautionCode)


def test_a_map_says_one_transformers_and_saved_split_and_counts_the_rest(cli: Cli) -> None:
    experts_only = ".*mlp\\.experts\\.\\d+\\.(gate_proj|up_proj|down_proj)"
    status, out, err = cli("map", "--gpu", "h100", "--model", "Qwen3-30B-A3B", "--lora-rank", "16", "--lora-targets",
                           experts_only, "--trinity-version", "0.5", "--budgets", "8")
    legend = " ".join(out[out.index("cells:"):].split())
    assert (status, err) == (0, "")
    assert legend.count("caution: ") == 3
    assert (f"caution: target_modules '{experts_only}' (--lora-targets), on Qwen3-30B-A3B (a mixture of experts), is "
            "taken on transformers 4's module names") in legend
    assert "caution: LoRA on Qwen3-30B-A3B, a mixture of experts: with transformers 5" in legend
    assert (f"caution: target_modules '{experts_only}' is a regular expression, which Trinity writes into each "
            "checkpoint's") in legend
    assert legend.endswith("other cautions, unmarked (their words: --json): thin-headroom (1 cell: ≤8)")


def test_a_pcie_map_counts_its_sp_cells(cli: Cli) -> None:
    status, out, _ = cli("map", "--gpu", "l40s", "--model", "8B")
    assert status == 0
    assert out.endswith("\nother cautions, unmarked (their words: --json): thin-headroom (5 cells), sp-over-pcie "
                        "(7 cells)\n")


# (3) The fix quoted for a shell.

def test_the_fix_is_quoted_for_a_shell_and_not_in_yaml(cli: Cli, tmp_path: Path) -> None:
    status, out, _ = cli("--model", "Qwen3-30B-A3B", "--gpu", "h100", "--len", "16384", "--lora-rank", "16",
                         "--lora-exclude", MOE_MLP, "--json")
    assert first_plan(out)["cautions"][0].endswith(
        "give --lora-targets '.*\\.(q_proj|k_proj|v_proj|o_proj)', which adapts the other modules alone")
    # a config's own: give target_modules as YAML takes it
    config = own_config(tmp_path, ", exclude_modules: '.*\\.mlp\\..*'")
    status, out, _ = cli("--from-config", config, "--gpu", "h100", "--check", "--trinity-version", "0.6")
    assert status == 1  # LoRA on Qwen3-30B-A3B under 0.6: lora-moe-config-unsaved-refused (test_release06b_s83)
    assert ("give target_modules .*\\.(q_proj|k_proj|v_proj|o_proj), which adapts the other modules alone"
            in " ".join(out.split()))


# (4) verl's own target_modules a number.

VERL_NUMBER = ("model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 16384\nalgorithm: {algorithm_type: grpo}\n"
               "trainer:\n  trainer_config:\n    actor_rollout_ref:\n"
               "      model: {lora_rank: 16, target_modules: 12}\n")
REFUSED_12 = (
    "refused: trainer.trainer_config.actor_rollout_ref.model.target_modules '12', on Qwen3-8B (a dense model), matches "
    "no module: peft matches it whole (re.fullmatch) against each module's full name "
    "(model.layers.N.self_attn.{q,k,v,o}_proj, model.layers.N.mlp.{gate,up,down}_proj, model.embed_tokens and "
    "lm_head), and Trinity fails as it makes the adapter: give all-linear, or a regular expression that matches "
    "whole names, such as .*\\.(q_proj|v_proj)")


def test_verls_own_target_modules_a_number_is_refused_as_its_text(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "verl.yaml"
    config.write_text(VERL_NUMBER, encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h100", "--check", "--trinity-version", "0.5")
    flat = " ".join(out.split())
    assert (status, err) == (1, "")
    assert REFUSED_12 in flat
    assert ("but: with trainer.trainer_config.actor_rollout_ref.model.lora_rank refused (lora-configs-refused says "
            "why), the verdict and the plans count full fine-tuning") in flat


@pytest.mark.parametrize("value", [12, 1.5, True])
def test_a_number_or_a_boolean_there_is_judged_as_model_lora_configs_is(value: object) -> None:
    model = CATALOG.model("Qwen3-8B")
    base = {"model": {"model_path": "x", "max_model_len": 8192}}
    verl = {**base, "trainer": {"trainer_config": {"actor_rollout_ref": {"model": {
        "lora_rank": 8, "target_modules": value}}}}}
    lora = {"model": {**base["model"], "lora_configs": [{"lora_rank": 8, "target_modules": value}]}}

    def refused(mapping: dict[str, Any]) -> list[str]:
        return [problem.words.split(", on Qwen3-8B")[1] for problem in trinity_config_problems(
            mapping, model, 8, version="0.5", experts="either") if problem.code.value == "lora-configs-refused"]

    assert refused(verl) == refused(lora) != []
    assert refused(verl)[0].startswith(" (a dense model), matches no module: peft matches it whole")
