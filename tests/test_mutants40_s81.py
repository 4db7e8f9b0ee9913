"""Mutation pass over session 80's later merges (helper mutants40): each test here kills a mutant that the merges' own
tests left alive (named in its comment), asserting what the code does: a config's own token budget caps the plans only
where it lowers Trinity's default with estimates on, and an unset variable in ``exclude_modules`` is refused as the
other LoRA keys' are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError
from test_keepbudget_s80 import CONFIG, H20_CONFIG, Cli
from test_loraslips_s80 import PLAIN, UNSET
from test_persona48_s77 import REQUIRED
from test_review80c_s80 import SP2_CONFIG

import solver
from solver.api import config_query
from solver.results import PoolPurchase, PurchaseResult
from solver.rules import lora_configs_words, lora_saved_split_words
from solver.tables import QueryError, load_catalog
from solver.tables.peft_match import ALL_LINEAR, QWEN3, adapts_the_same, lora_targets_pattern
from solver.tables.peft_names import LoraTargets
from solver.trinity import ConfigError, read_trinity_config
from solver.trinity.checks import config_counted_on

CATALOG = load_catalog()
DEFAULT_BUDGET_CONFIG = CONFIG.format(model="Qwen/Qwen3-8B", lora="", gpus=8, engines=4).replace(
    "_max_token_len_per_gpu: 32768", "_max_token_len_per_gpu: 65536")
"""4 rollout and 4 trainer GPUs, Qwen3-8B at 32768 tokens, SP 1, every role at Trinity's default budget there, 65536."""


def test_a_config_at_trinitys_default_budget_caps_nothing() -> None:
    # K-17: a budget equal to Trinity's default (ceil(2 x 32768 / 1)) lowers nothing: the plans' budget mode is the
    # default's, not a cap at 65536 (own <= default)
    config = read_trinity_config(DEFAULT_BUDGET_CONFIG, "grpo.yaml", {}, None)
    query = config_query(CATALOG, config, gpu="h100")
    assert (config.sp, config.max_model_len, query.token_budget, query.token_budget_cap) == (1, 32768, "default", None)
    assert query.limit_flags == ""


def test_a_configs_lowered_budget_caps_nothing_with_estimates_off() -> None:
    # K-18: with estimates off the config's own 24576 is no cap (the plans are the tables' cells, at Trinity's
    # default budget); with them on it is
    config = read_trinity_config(SP2_CONFIG, "grpo.yaml", {}, None)
    off = config_query(CATALOG, config, gpu="h100", estimate="never")
    assert (off.token_budget, off.token_budget_cap, off.token_budget_cap_source) == ("default", None, None)
    on = config_query(CATALOG, config, gpu="h100")
    assert (on.token_budget, on.token_budget_cap) == ("auto", 24576)


def test_an_unset_variable_in_exclude_modules_is_refused(cli: Cli, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # L-20: exclude_modules decides the adapter counted, as target_modules does (read as none, every module counted)
    monkeypatch.delenv("S81_EXCLUDED", raising=False)
    lora = "  lora_configs: [{lora_rank: 8, exclude_modules: '${oc.env:S81_EXCLUDED}'}]"
    config = tmp_path / "trinity.yaml"
    config.write_text(PLAIN % lora, encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h100", "--check")
    key = "model.lora_configs[0].exclude_modules"
    assert (status, out, err) == (2, "", f"solve: error: --from-config {config}: {key}{UNSET.format('S81_EXCLUDED')}\n")
    with pytest.raises(ConfigError, match=r"^trinity\.yaml: model\.lora_configs\[0\]\.exclude_modules: environment"):
        read_trinity_config(PLAIN % lora, "trinity.yaml", {})


def test_a_list_of_no_module_name_is_refused_as_matching_none(cli: Cli) -> None:
    # L-6: targets that are commas alone are no list of names (lora_targets_pattern keeps them as the regex, which
    # matches no module), refused in one line, not an IndexError on the list's first name
    assert (lora_targets_pattern(","), lora_targets_pattern(" , ")) == (",", " , ")
    status, out, err = cli("--model", "qwen3-8b", "--gpu", "h100", "--len", "4096", "--lora-rank", "8",
                           "--lora-targets", ",")
    assert (status, out) == (2, "")
    assert err == (
        "solve: error: --lora-targets ',' matches no module of Qwen3-8B (model.layers.N.self_attn.{q,k,v,o}_proj, "
        "model.layers.N.mlp.{gate,up,down}_proj, model.embed_tokens and lm_head): give all-linear (Trinity's default: "
        "every linear layer but the output projection), module names separated by commas (q_proj,v_proj) or a regular "
        "expression that PEFT matches whole module names with (.*\\.(q_proj|v_proj))\n")


def test_targets_that_adapt_other_modules_too_are_not_the_same() -> None:
    # L-3: the same layers' linears, as many of each, but one regex matches lm_head as well: not the same adapter
    assert adapts_the_same((".*\\.q_proj", None), ("(.*\\.)?q_proj", None), QWEN3)
    assert not adapts_the_same((".*\\.q_proj", None), ("(.*\\.)?(q_proj|lm_head)", None), QWEN3)


def test_a_regex_one_transformers_takes_is_cautioned_as_saved_under_that_one() -> None:
    # R-9: under 0.5.2 (either transformers), Qwen3-30B-A3B's .*\.gate_proj is taken by transformers 4's names alone
    # (PEFT refuses the fused gate_up_proj's half on 5's), so the adapter is made and saved so under 4 alone: the
    # caution is unconditional, not "with transformers 4 (...)"
    model = CATALOG.model("Qwen3-30B-A3B")
    words = lora_saved_split_words(model, "0.5", "either", LoraTargets(".*\\.gate_proj", None))
    assert words is not None
    assert words.startswith("target_modules '.*\\.gate_proj' is a regular expression, which Trinity writes into each "
                            "checkpoint's lora_adapter/adapter_config.json as its single characters (['.', '*', "
                            "'\\\\', 'g', ...]): this run is unaffected")


def test_a_lora_config_one_transformers_takes_keeps_its_rank() -> None:
    # .*\.gate_proj on Qwen3-30B-A3B is cautioned where either transformers may run (lora-targets-one-transformers:
    # 4's names alone take it), not refused: its adapter is counted; transformers 5 alone refuses it (full fine-tuning)
    text = (PLAIN % "  lora_configs: [{lora_rank: 16, target_modules: '.*\\.gate_proj'}]").replace(
        "Qwen/Qwen3-8B", "Qwen/Qwen3-30B-A3B")
    config = read_trinity_config(text, "trinity.yaml", {}, "0.5")
    model = CATALOG.model("Qwen3-30B-A3B")
    counted = {layout: config_counted_on(config, model, layout) for layout in ("either", "separate", "fused")}
    assert {layout: (each.lora_rank, each.lora_targets) for layout, each in counted.items()} == {
        "either": (16, LoraTargets(".*\\.gate_proj", None)), "separate": (16, LoraTargets(".*\\.gate_proj", None)),
        "fused": (0, None)}


def test_the_lora_configs_comment_names_its_exclusions_and_points_to_no_caution_unsaid() -> None:
    model = CATALOG.model("Qwen3-8B")
    # all-linear on a dense model has no caution above to point to, beside solve's caution rows or not
    assert lora_configs_words(model, "0.6", "fused", None, said_above=True) == (
        "a new adapter on all-linear (Trinity's default target_modules), as planned; with LoRA Trinity builds no "
        "reference model")
    # the exclusions the plan's keys write beside the targets
    assert lora_configs_words(model, "0.6", "fused", LoraTargets(ALL_LINEAR, ".*layers\\.0\\..*")) == (
        "a new adapter on target_modules 'all-linear' less exclude_modules '.*layers\\.0\\..*', as planned; with LoRA "
        "Trinity builds no reference model")


def test_a_version_2_pool_purchase_with_a_nodes_key_too_is_refused() -> None:
    # C-1: nodes beside nodes_bought is no version 1 pool to rename: refused as any extra key, not taken as the nodes
    # bought in place of nodes_bought
    raw = {"pool": "a100", "gpu": "A100-80GB", "nodes_bought": 1, "gpus_bought": 8, "nodes_after": 2, "down": [],
           "nodes_used": 2, "gpus_used": 11}
    assert PoolPurchase.model_validate(raw).nodes_bought == 1
    with pytest.raises(ValidationError, match="nodes\n  Extra inputs are not permitted"):
        PoolPurchase.model_validate({**raw, "nodes": 5})


def test_a_maps_exclusions_alone_are_checked_on_every_row_before_any_solve() -> None:
    # L-32: exclusions given without targets, refused on the dense rows alone (the MoE keeps its routed experts): the
    # refusal names the model they are counted on, as for targets (before any solve, not the first row's own query's)
    excluded = ".*\\.layers\\.\\d+\\.(self_attn|mlp)\\.\\w+_proj"
    with pytest.raises(QueryError) as raised:
        solver.map_plans(["4B", "8B", "30B-A3B"], gpu="h100", by="model", budgets=[8], lora_rank=8,
                         lora_exclude_modules=excluded, trinity_version="0.6")
    assert str(raised.value) == (
        f"lora_exclude_modules '{excluded}', on Qwen3-4B, leaves out every module all-linear matches (\"No modules "
        "were targeted for adaptation\"): exclude fewer, or remove it; of the map's 3 models, they are counted on "
        "Qwen3-30B-A3B alone: map those (model=['Qwen3-30B-A3B'])")


def test_exclusions_without_lora_over_a_lora_config_name_the_exclusions() -> None:
    # L-37: lora_rank=0 over a config's LoRA: its target_modules are not taken as the targets the exclusions leave
    # modules of; the exclusions themselves are refused, as without a config
    config = read_trinity_config(H20_CONFIG, "grpo.yaml", {}, None)
    with pytest.raises(QueryError) as raised:
        config_query(CATALOG, config, gpu="h20", lora_rank=0, lora_exclude_modules=".*layers\\.0\\..*")
    assert str(raised.value) == ("lora_exclude_modules '.*layers\\.0\\..*' without LoRA: the exclusions are a LoRA "
                                 "adapter's; give a lora_rank above 0")


def test_a_pool_buying_no_node_says_0_and_json_without_a_schema_version_reads_back() -> None:
    bought = solver.buy_nodes(REQUIRED)
    # C-4: the pool that buys nothing shows 0 in the buy column, the one that buys a node +1
    rows = [line for line in solver.cluster_text(bought, REQUIRED).splitlines() if line.startswith(("│ a100", "│ h20"))]
    assert [line.split("│")[1:7] for line in rows[:2]] == [
        [" a100 ", " A100-80GB ", "     1 ", "  +1 ", "           8 ", "          2 "],
        [" h20  ", " H20-96GB  ", "     1 ", "   0 ", "           0 ", "          1 "]]
    # C-6: JSON with rft_solver_version but no schema_version (made before it had one) reads back as this version's
    raw = json.loads(bought.model_dump_json())
    del raw["schema_version"]
    assert PurchaseResult.model_validate(raw).model_dump_json() == bought.model_dump_json()


def test_the_lora_configs_comment_on_a_mixture_of_experts_under_0_5() -> None:
    model = CATALOG.model("Qwen3-30B-A3B")
    # beside solve's rows, the two cautions (the MoE config unsaved, the regex saved split) pointed to as two
    attention = LoraTargets(".*\\.(q_proj|v_proj)", None)
    assert lora_configs_words(model, "0.5", "either", attention, said_above=True) == (
        "a new adapter on target_modules '.*\\.(q_proj|v_proj)', as planned; with LoRA Trinity builds no reference "
        "model; but see the cautions above on how Trinity saves its config")
    # a regex transformers 4 alone takes: made and saved there, where PEFT converts nothing, so the MoE config's
    # caution (transformers 5's conversion) is not given; the one transformers' and the saved split's are
    words = lora_configs_words(model, "0.5", "either", LoraTargets(".*\\.gate_proj", None))
    assert words.startswith(
        "a new adapter on target_modules '.*\\.gate_proj', as planned; with LoRA Trinity builds no reference model; "
        "but with transformers 5 PEFT fails on it as Trinity makes the adapter: run it with transformers 4 (Trinity "
        "0.5.1 pins it); target_modules '.*\\.gate_proj' is a regular expression, which Trinity writes")


def test_targets_refused_on_their_own_are_blamed_beside_exclusions() -> None:
    # .*\.gate_proj is refused under 0.6 without its exclusions too: the refusal names target_modules, not the
    # exclude_modules beside it
    model = CATALOG.model("Qwen3-30B-A3B")
    config = {"model": {"model_path": "Qwen/Qwen3-30B-A3B", "max_model_len": 4096, "lora_configs": [{
        "lora_rank": 8, "target_modules": ".*\\.gate_proj", "exclude_modules": ".*layers\\.0\\..*"}]},
        "cluster": {"node_num": 1, "gpu_per_node": 8}}
    [refusal] = solver.trinity.check_trinity_config(config, model, 4, environ={}, version="0.6")
    assert refusal.startswith(
        "model.lora_configs[0].target_modules '.*\\.gate_proj', on Qwen3-30B-A3B (a mixture of experts), matches the "
        "routed experts' gate_proj without their up_proj, which PEFT fuses into gate_up_proj")
    assert refusal.endswith("run it with transformers 4 (Trinity 0.5.1 pins it)")


def test_a_jobs_targets_are_judged_on_the_release_the_fleet_is_placed_for(tmp_path: Path) -> None:
    # L-40: .*\.gate_proj on Qwen3-30B-A3B is taken under 0.5.2 (transformers 4's names alone), refused under 0.6
    path = tmp_path / "moe.yaml"
    path.write_text("pools:\n  - {name: h100, gpu: H100-80GB, gpus_per_node: 8, nodes: 1}\njobs:\n  - {name: moe, "
                    "model: Qwen3-30B-A3B, max_model_len: 8192, lora_rank: 8, lora_targets: '.*\\.gate_proj'}\n")
    placed = solver.place(path, trinity_version="0.5.2", time_limit_s=5)
    assert [(placement.job, placement.plan.lora_targets) for placement in placed.placements] == [
        ("moe", LoraTargets(".*\\.gate_proj", None))]
    with pytest.raises(QueryError) as raised:
        solver.place(path, trinity_version="0.6", time_limit_s=5)
    assert str(raised.value).startswith(
        f"{path}: job moe: lora_targets '.*\\.gate_proj', on Qwen3-30B-A3B, matches the routed experts' gate_proj "
        "without their up_proj, which PEFT fuses into gate_up_proj")
