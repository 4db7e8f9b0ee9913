"""Session 80, layerexclude: a LoRA ``target_modules`` or ``exclude_modules`` regex that names layers is counted in
the layers it adapts, as PEFT 0.21.2's ``check_target_module_exists`` matches each full module name
(``model.layers.N.self_attn.o_proj``), not in every layer (fragcheck4 found the over-count: ``.*\\.o_proj`` less
``.*layers\\.0\\..*`` on Qwen3-1.7B at rank 16, PEFT 1,769,472 parameters, rft-solver 1,835,008); a mixture of experts'
layers by their types (its dense layers' MLP in those alone, ``mlp_only_layers``; the router and experts in the expert
layers), under each release's layout; the LoRA note names the layers where not every one is adapted. The figures of
full fine-tuning and ``all-linear`` are those counted before, bit for bit."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

import solver
from solver.memory import lora_parameters, weight_shapes
from solver.query import ConfigProblemCode
from solver.tables import ExpertLayout, Model
from solver.tables.model_config import load_model_config
from solver.tables.peft_names import LoraTargets
from solver.trinity.checks import lora_targets_problem

Cli = Callable[..., tuple[int, str, str]]
CATALOG = solver.load_catalog()
CONFIGS = Path(__file__).parent / "data" / "hf-configs"


def _counted(model: str, pattern: str, excluded: str | None) -> Model:
    return CATALOG.with_lora_targets(model, LoraTargets(pattern, excluded)).model(model)


def _dense_layer_figures(name: str) -> tuple[int, int, int, int]:
    """A dense Qwen3's layers and the sum of (rows + columns) of its attention's and its MLP's adapted matrices in one
    layer, from its shape: q_proj and o_proj heads x head size by hidden, k_proj and v_proj the key-value heads', and
    gate_proj, up_proj and down_proj intermediate size by hidden."""
    model = CATALOG.model(name)
    hidden, queries = model.hidden_size, model.num_attention_heads * model.head_size
    keys = model.num_key_value_heads * model.head_size
    attention = (queries + hidden) + 2 * (keys + hidden) + (hidden + queries)
    return model.num_layers, attention, 3 * (model.intermediate_size + hidden), hidden


@pytest.mark.parametrize(("model", "pattern", "excluded", "left_out", "peft"), [
    # (model, target_modules, exclude_modules, layers left out, peft 0.21.2's adapter at rank 16 on the meta device)
    ("Qwen3-1.7B", ".*\\.o_proj", ".*layers\\.0\\..*", 1, 1_769_472),
    ("Qwen3-8B", "all-linear", ".*layers\\.[0-3]\\..*", 4, 38_797_312),
    ("Qwen3-4B", "all-linear", ".*layers\\.0\\..*", 1, 32_112_640),
])
def test_a_regex_naming_layers_counts_the_layers_it_adapts(model: str, pattern: str, excluded: str, left_out: int,
                                                           peft: int) -> None:
    layers, attention, mlp, hidden = _dense_layer_figures(model)
    per_layer = 2 * hidden if pattern == ".*\\.o_proj" else attention + mlp  # o_proj: hidden by hidden (16 x 128)
    assert 16 * per_layer * (layers - left_out) == peft  # the shapes give PEFT's figure
    for layout in ("fused", "separate", "either"):
        assert lora_parameters(_counted(model, pattern, excluded), 16, layout) == peft


def _qwen3_moe(tmp_path: Path, **keys: object) -> Model:
    """Qwen3-30B-A3B's config.json (48 layers, hidden 2048, 32 query heads and 4 key-value heads of 128, 128 experts
    768 wide, a dense MLP 6144 wide) with `keys` besides."""
    config = json.loads((CONFIGS / "Qwen3-30B-A3B.json").read_text(encoding="utf-8"))
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**config, **keys}), encoding="utf-8")
    return load_model_config(path)


ATTENTION = (4096 + 2048) + 2 * (512 + 2048) + (2048 + 4096)
"""Qwen3-30B-A3B's attention's adapted matrices in one layer, (rows + columns) summed: q_proj, k_proj, v_proj and
o_proj."""
DENSE_MLP = 3 * (6144 + 2048)
"""Its dense layers' MLP (``mlp_only_layers``): gate_proj, up_proj and down_proj, 6144 by 2048."""
ROUTER = 128 + 2048
"""Its router, ``mlp.gate``: 128 experts by 2048."""
EXPERT = 3 * (768 + 2048)
"""One routed expert's three projections under transformers 4, 768 by 2048."""
FUSED_EXPERTS = 128 * (2 * (2 * 768 + 2048) + (2048 + 768))
"""An expert layer's routed experts under transformers 5, as PEFT converts them: the fused gate and up projection at
twice the rank and the down projection, each of rank x 128 experts."""


@pytest.mark.parametrize(("layout", "pattern", "excluded", "per_rank"), [
    # layers 0 and 47 dense: less layer 47, the attention in 47 layers, the dense MLP in layer 0, the experts in 46
    ("separate", "all-linear", ".*layers\\.47\\..*", 47 * ATTENTION + DENSE_MLP + 46 * (ROUTER + 128 * EXPERT)),
    # transformers 5: the dense MLP's names are the routed experts' parameters' (no module), the router and experts
    # all-linear's parameters whatever is excluded
    ("fused", "all-linear", ".*layers\\.47\\..*", 47 * ATTENTION + 46 * (ROUTER + FUSED_EXPERTS)),
    # layer 0's dense MLP and layer 1's routed experts (each layer its own type): not both in both
    ("separate", ".*layers\\.(0|1)\\.mlp\\..*proj", None, DENSE_MLP + 128 * EXPERT),
    ("separate", ".*experts\\.[0-3]\\..*_proj", ".*layers\\.(1|2)\\..*", 44 * 4 * EXPERT),
])
def test_a_mixture_of_experts_counts_each_layer_by_its_type(tmp_path: Path, layout: ExpertLayout, pattern: str,
                                                            excluded: str | None, per_rank: int) -> None:
    model = _qwen3_moe(tmp_path, mlp_only_layers=[0, 47])
    assert model.moe is not None and model.moe.layer_indices(48, dense=True) == (0, 47)
    counted = model.model_copy(update={"lora_targets": LoraTargets(pattern, excluded)})
    assert lora_parameters(counted, 16, layout) == 16 * per_rank


def test_first_layers_dense_by_default_and_adapted_layers_by_type() -> None:
    # DeepSeek-V2-Lite: first_k_dense_replace 1, no indices kept (the first); less layer 0, its dense MLP in no layer
    model = load_model_config(CONFIGS / "DeepSeek-V2-Lite.json")
    assert model.moe is not None and model.moe.dense_layer_indices is None
    assert model.moe.layer_indices(model.num_layers, dense=True) == (0,)
    names = model.peft_names_of("separate")
    assert model.adapted_layers(names, LoraTargets(".*layers\\.(0|5)\\.mlp\\.gate_proj")) == (0,)
    assert model.adapted_layers(names, LoraTargets(".*\\.mlp\\.gate_proj")) == (0,)
    assert model.adapted_layers(names, LoraTargets(".*\\.kv_a_proj_with_mqa", ".*layers\\.[1-9]\\d\\..*")) == (
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9)


ALL_LINEAR_BEFORE = {
    # all-linear's adapter at rank 1 (fused, separate, either) as counted before this change (main at 8bf75b49)
    "Qwen3-1.7B": (1_089_536,) * 3, "Qwen3-8B": (2_727_936,) * 3, "Qwen3-30B-A3B": (62_281_728, 52_844_544, 62_281_728),
    "Llama-3.1-70B": (12_943_360,) * 3,
    "DeepSeek-V2-Lite.json": (22_437_184, 18_114_816, 22_437_184), "Mixtral-8x7B-v0.1.json": (22_479_104, 15_139_072,
                                                                                              22_479_104),
    "Qwen1.5-MoE-A2.7B.json": (995_352, 15_975_864, 15_975_864), "Qwen2-57B-A14B.json": (2_752_540, 35_884_828,
                                                                                         35_884_828),
    "mlp_only_layers": (59_721_472, 50_726_656, 59_721_472),
}


def test_full_fine_tuning_and_all_linear_count_as_before(tmp_path: Path) -> None:
    models = {name: load_model_config(CONFIGS / name) if name.endswith(".json") else
              _qwen3_moe(tmp_path, mlp_only_layers=[0, 47]) if name == "mlp_only_layers" else CATALOG.model(name)
              for name in ALL_LINEAR_BEFORE}
    layouts: tuple[ExpertLayout, ...] = ("fused", "separate", "either")
    assert {name: tuple(lora_parameters(model, 1, layout) for layout in layouts)
            for name, model in models.items()} == ALL_LINEAR_BEFORE
    # which layers are dense reaches neither the weights (full fine-tuning's states) nor all-linear's adapter
    dense = models["mlp_only_layers"]
    assert dense.moe is not None and dense.moe.dense_layer_indices == (0, 47)
    first = dense.model_copy(update={"moe": dense.moe.model_copy(update={"dense_layer_indices": None})})
    for layout in layouts:
        assert weight_shapes(first, layout) == weight_shapes(dense, layout)
        assert lora_parameters(first, 1, layout) == lora_parameters(dense, 1, layout)
    for name in ("Qwen3-8B", "Qwen3-30B-A3B"):  # all-linear as a regex, matched name by name, counts the same
        for layout in layouts:
            assert lora_parameters(_counted(name, "all-linear", None), 1, layout) == lora_parameters(
                CATALOG.model(name), 1, layout)


def test_the_lora_note_names_the_layers_adapted(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "lora.yaml"
    config.write_text("model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 16384\n  lora_configs:\n"
                      "    - {lora_rank: 16, target_modules: all-linear, exclude_modules: '.*layers\\.[0-3]\\..*'}\n")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--gpus", "4")
    assert status == 0
    assert ("its target_modules 'all-linear' less exclude_modules '.*layers\\.[0-3]\\..*' matches q_proj, k_proj, "
            "v_proj, o_proj, gate_proj, up_proj and down_proj alone in layers 4-35, on which alone its adapter is "
            "counted") in " ".join(out.split())
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--gpus", "4", "--lora-targets",
                         ".*layers\\.(0|2|3|4|9)\\.self_attn\\.q_proj")
    assert status == 0
    assert "on q_proj alone in layers 0, 2-4 and 9)" in " ".join(out.split())


def test_a_regex_on_layers_the_model_lacks_alone_is_refused(cli: Cli) -> None:
    # counted layer by layer, it would adapt nothing (no adapter: a division by zero before); PEFT finds no module
    status, out, err = cli("memory", "--model", "8B", "--gpu", "h100", "--gpus", "1", "--len", "16384", "--env",
                           "--lora-rank", "64", "--lora-targets", ".*layers\\.40\\..*_proj", "--json")
    assert (status, out) == (2, "")
    assert err == ("solve memory: error: --lora-targets '.*layers\\.40\\..*_proj' matches no module of Qwen3-8B "
                   "(model.layers.N.self_attn.{q,k,v,o}_proj, model.layers.N.mlp.{gate,up,down}_proj, "
                   "model.embed_tokens and lm_head, N from 0 to 35): give all-linear (Trinity's default: every linear "
                   "layer but the output projection), module names separated by commas (q_proj,v_proj) or a regular "
                   "expression that PEFT matches whole module names with (.*\\.(q_proj|v_proj))\n")
    model = CATALOG.model("Qwen3-8B")
    problem = lora_targets_problem(".*layers\\.40\\..*_proj", None, model)
    assert problem is not None and problem.code is ConfigProblemCode.LORA_CONFIGS_REFUSED
    assert "target_modules '.*layers\\.40\\..*_proj', on Qwen3-8B (a dense model), matches no module" in problem.words
    assert lora_targets_problem(".*layers\\.35\\..*_proj", None, model) is None  # its last layer
