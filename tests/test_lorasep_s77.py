"""A LoRA adapter on a mixture of experts counted as the Trinity release's transformers lays the experts out (session
77, lorasep). Trinity 0.5.1 pins ``transformers<5.0.0`` (``separate``: ``counted_expert_layout``), where every expert's
gate, up and down projections and most routers are ``nn.Linear``s, which PEFT 0.21.2's ``all-linear`` adapts as they
are (``_maybe_include_all_linear_layers``; ``is_transformers_ge_v5`` false, so no conversion, ``tuners_utils.py:833``):
``r x (inputs + outputs)`` per matrix, three per expert, for any mixture of experts whose transformers 4.57.1 class
holds them so, Qwen2-MoE's and PhiMoE's too. Under transformers 5 (``fused``: 0.6, and where no release or one that
allows both is named) PEFT converts the config of Qwen3-MoE's, Mixtral's and DeepSeek's kind only: the router's
``gate.weight`` and each expert's fused ``gate_up_proj`` at twice the rank (``rank_pattern``,
``utils/transformers_weight_conversion.py:471`` to ``:478``), ``2r x (hidden + 2 width)``, and ``down_proj`` at the
rank: ``r x (3 hidden + 5 width)`` an expert, ``2 r width`` more than the separate ``3 r x (hidden + width)``;
Qwen2-MoE's experts and router not at all."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import solver
from solver.memory import (
    GIB,
    LOAD_BYTES,
    adapted_shapes,
    adapter_shapes,
    breakdown,
    host_memory_gib,
    lora_parameters,
    lora_states_bytes,
)
from solver.tables import ExpertLayout, ModelLoading, Setting, counted_expert_layout, load_catalog, load_memory_model
from solver.tables.peft_names import PEFT_NAMES_BY_MODEL_TYPE, separate_module_names

Cli = Callable[..., tuple[int, str, str]]
CONFIGS = Path(__file__).parent / "data" / "hf-configs"
QWEN3_30B_A3B = load_catalog().model("Qwen3-30B-A3B")
MIXTRAL = solver.load_model_config(CONFIGS / "Mixtral-8x7B-v0.1.json")
QWEN15_MOE = solver.load_model_config(CONFIGS / "Qwen1.5-MoE-A2.7B.json")
DEEPSEEK_V2_LITE = solver.load_model_config(CONFIGS / "DeepSeek-V2-Lite.json")

# Qwen3-30B-A3B (hidden 2048, 32 heads and 4 KV heads of 128, 48 layers, 128 experts of width 768) at rank 32, each
# layer: q 32 x (2048 + 4096), k and v 32 x (2048 + 512) each, o 32 x (4096 + 2048), the router (an nn.Linear in 4.57.1,
# gate.weight converted in 5) 32 x (2048 + 128): 626,688 a layer, 30,081,024 in 48. Per expert:
# - separate: gate, up and down 32 x (2048 + 768) each, 270,336; x 128 x 48 = 1,660,944,384: 1,691,025,408 in all;
# - fused: gate_up_proj 2 x 32 x (2048 + 2 x 768) = 229,376, down 32 x (768 + 2048) = 90,112, 319,488;
#   x 128 x 48 = 1,962,934,272: 1,993,015,296 in all (as before: test_lorarest4_s76), 49,152 = 2 x 32 x 768 an expert
#   more, 301,989,888 in all.
QWEN3_30B_A3B_SEPARATE = 1_691_025_408
QWEN3_30B_A3B_FUSED = 1_993_015_296


@pytest.mark.parametrize(("model", "layout", "parameters"), [
    (QWEN3_30B_A3B, "separate", QWEN3_30B_A3B_SEPARATE),
    (QWEN3_30B_A3B, "fused", QWEN3_30B_A3B_FUSED),
    # Mixtral-8x7B (hidden 4096, 32 heads, 8 KV heads of 128, 32 layers, 8 experts of 14336) at rank 32, each layer:
    # q and o 32 x 8192 each, k and v 32 x (4096 + 1024) each, router 32 x (4096 + 8): 983,296. Per expert:
    # separate w1, w3, w2 3 x 32 x (4096 + 14336) = 1,769,472, x 8 = 14,155,776: 15,139,072 a layer, 484,450,304 in 32;
    # fused 2 x 32 x (4096 + 28672) + 32 x (14336 + 4096) = 2,686,976, x 8 = 21,495,808: 22,479,104 a layer,
    # 719,331,328 in 32.
    (MIXTRAL, "separate", 484_450_304),
    (MIXTRAL, "fused", 719_331_328),
    # Qwen1.5-MoE-A2.7B (qwen2_moe: hidden 2048, 16 heads and KV heads of 128, 24 layers, 60 experts of 1408, a shared
    # expert of 5632 with its gate) at rank 32, each layer: attention 4 x 32 x 4096 = 524,288, shared expert
    # 3 x 32 x (2048 + 5632) = 737,280, its gate 32 x (2048 + 1) = 65,568: 1,327,136 (31,851,264 in 24, fused: PEFT
    # converts nothing of qwen2_moe, and transformers 5's Qwen2MoeTopKRouter is no nn.Linear). Separate adds the router
    # 32 x (2048 + 60) = 67,456 and per expert 3 x 32 x (2048 + 1408) = 331,776, x 60 = 19,906,560: 21,301,152 a layer,
    # 511,227,648 in 24, 16 times the fused count: transformers 5's count was not the safe side here.
    (QWEN15_MOE, "separate", 511_227_648),
    (QWEN15_MOE, "fused", 31_851_264),
])
def test_the_adapter_is_counted_as_the_layout_holds_the_experts(model: solver.Model, layout: ExpertLayout,
                                                                parameters: int) -> None:
    assert lora_parameters(model, 32, layout) == parameters


def test_deepseeks_router_is_adapted_under_transformers_5_alone() -> None:
    # DeepSeek-V2-Lite (hidden 2048, 27 layers of which the first dense, 64 experts of 1408) at rank 32: its router is
    # DeepseekV2MoEGate's weight parameter in 4.57.1 (no nn.Linear: not adapted), gate.weight PEFT converts in 5. The
    # fused count exceeds the separate one by 26 routers, 26 x 32 x (2048 + 64) = 1,757,184, and 26 x 64 experts of
    # 2 x 32 x 1408 = 149,946,368: 151,703,552; less what transformers 5's PEFT does not adapt (test_loraleft_s78): the
    # dense layer's MLP, 32 x 3 x (2048 + 10944) = 1,247,232, and 26 layers' two shared experts, 26 x 32 x 3 x (2048 +
    # 2816) = 12,140,544: 138,315,776.
    fused, separate = lora_parameters(DEEPSEEK_V2_LITE, 32, "fused"), lora_parameters(DEEPSEEK_V2_LITE, 32, "separate")
    assert (fused, separate, fused - separate) == (717_989_888, 579_674_112,
                                                   1_757_184 + 149_946_368 - 1_247_232 - 12_140_544)
    assert (64, 2048, 26) in adapted_shapes(DEEPSEEK_V2_LITE, "fused")
    assert (64, 2048, 26) not in adapted_shapes(DEEPSEEK_V2_LITE, "separate")


SMALL = {"hidden_size": 1024, "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 2,
         "vocab_size": 32000, "max_position_embeddings": 4096, "tie_word_embeddings": False, "num_experts": 8,
         "num_local_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 512, "intermediate_size": 512}
"""A made-up mixture of experts: 4 layers of hidden width 1024, 8 heads and 2 KV heads of 128, 8 experts of 512."""


@pytest.mark.parametrize(("config", "separate", "fused"), [
    # At rank 16, attention q and o 16 x 2048 each, k and v 16 x (1024 + 256) each: 106,496 a layer. Router
    # 16 x (1024 + 8) = 16,512. Separate experts 8 x 3 x 16 x (1024 + 512) = 589,824; fused 8 x (2 x 16 x (1024 + 1024)
    # + 16 x (512 + 1024)) = 720,896. In 4 layers:
    ({"model_type": "qwen3_moe"}, 4 * (106_496 + 16_512 + 589_824), 4 * (106_496 + 16_512 + 720_896)),
    ({"model_type": "olmoe", "num_key_value_heads": 8}, 4 * (131_072 + 16_512 + 589_824),
     4 * (131_072 + 16_512 + 720_896)),  # 8 KV heads: k and v 16 x 2048 each, 131,072 a layer
    ({"model_type": "phimoe"}, 4 * (106_496 + 16_512 + 589_824), 4 * (106_496 + 16_512)),  # PEFT converts no PhiMoE
    # GraniteMoE's experts are 3-D parameters under either transformers (GraniteMoeParallelExperts): its router alone
    # ({"model_type": "granitemoe"}, its router.layer an nn.Linear in both).
    ({"model_type": "granitemoe"}, 4 * (106_496 + 16_512), 4 * (106_496 + 16_512)),
])
def test_each_types_transformers_4_linears_are_adapted(tmp_path: Path, config: dict[str, Any], separate: int,
                                                       fused: int) -> None:
    (tmp_path / "config.json").write_text(json.dumps({**SMALL, **config}), encoding="utf-8")
    model = solver.load_model_config(tmp_path)
    assert (lora_parameters(model, 16, "separate"), lora_parameters(model, 16, "fused")) == (separate, fused)


def test_the_table_says_which_routers_and_experts_transformers_4_makes_linear() -> None:
    # transformers 4.57.1: nn.Linear routers (gate, Hunyuan's gate.wg, GraniteMoE's router.layer, Llama4Router) but
    # DeepSeek's and GLM-4-MoE's weight parameters; experts an nn.ModuleList of gated MLPs but Llama 4's and
    # GraniteMoE's 3-D parameters.
    routers = {names.model_type for names in PEFT_NAMES_BY_MODEL_TYPE.values()
               if (v4 := separate_module_names(names, 8)).router is not None and v4.router in v4.adapted}
    experts = {names.model_type for names in PEFT_NAMES_BY_MODEL_TYPE.values() if names.separate_experts}
    assert routers == {"qwen3_moe", "mixtral", "qwen2_moe", "olmoe", "ernie4_5_moe", "hunyuan_v1_moe", "llama4_text",
                       "granitemoe", "phimoe", "minimax_m2"}  # MiniMax-M2: no transformers 4 class, its 5 names kept
    assert experts == {"qwen3_moe", "mixtral", "qwen2_moe", "olmoe", "deepseek_v2", "deepseek_v3", "glm4_moe",
                       "ernie4_5_moe", "hunyuan_v1_moe", "phimoe"}


def test_each_experts_adapter_tensors_are_its_own_under_0_5_1() -> None:
    # Qwen3-30B-A3B at rank 32, separate: per expert and layer (6144 of them) gate and up lora_A 32 x 2048 and lora_B
    # 768 x 32, down lora_A 32 x 768 and lora_B 2048 x 32, each a tensor of its own (the pinned shards' rounding); one
    # entry per module name (gate and up each 6144).
    shapes = adapter_shapes(QWEN3_30B_A3B, 32, "separate")
    tensors = ((32, 2048, 6144), (768, 32, 6144), (32, 768, 6144), (2048, 32, 6144))
    assert [shapes.count(shape) for shape in tensors] == [2, 2, 1, 1]
    # fused: gate_up_proj's lora_B 2 x 768 rows (counted as two of rank 32, one under each v4 name), none of 768.
    fused = adapter_shapes(QWEN3_30B_A3B, 32, "fused")
    assert fused.count((1536, 32, 6144)) == 2 and (1536, 32, 6144) not in shapes and (768, 32, 6144) not in fused
    assert adapter_shapes(QWEN3_30B_A3B, 32) == adapter_shapes(QWEN3_30B_A3B, 32, "fused")


@pytest.mark.parametrize(("release", "parameters"), [
    (None, QWEN3_30B_A3B_FUSED), ("0.6", QWEN3_30B_A3B_FUSED), ("0.6.0", QWEN3_30B_A3B_FUSED),
    ("0.5", QWEN3_30B_A3B_FUSED), ("0.5.2", QWEN3_30B_A3B_FUSED), ("0.5.1", QWEN3_30B_A3B_SEPARATE),
])
def test_the_states_and_host_memory_count_the_releases_adapter(release: str | None, parameters: int) -> None:
    layout = counted_expert_layout(release)
    # 8 GPUs divide the 128 experts: no padding either way. The frozen base's fp32 shard, 4 bytes a parameter, and
    # the adapter's 16.
    base = 4 * QWEN3_30B_A3B.parameters_b * 1e9 / 8
    assert lora_states_bytes(QWEN3_30B_A3B, 8, 32, 16, layout) == pytest.approx(base + 16 * parameters / 8, rel=1e-15)
    # Without Offload or a reference model the host holds the load alone: the model and its adapter in fp32, once
    # where rank 0 alone loads it (0.6 with FSDP2 on an H100), on each of the 8 ranks where every rank does.
    load = LOAD_BYTES * (QWEN3_30B_A3B.parameters_b * 1e9 + parameters) / GIB
    loadings: tuple[tuple[ModelLoading, int], ...] = (("rank-0", 1), ("every-rank", 8))
    for loading, loaders in loadings:
        held = host_memory_gib(QWEN3_30B_A3B, 8, 8, offload=False, reference=False, lora_rank=32, experts=layout,
                               loading=loading)
        assert held == pytest.approx(loaders * load, rel=1e-15)


def test_the_estimate_under_0_5_1_holds_the_smaller_adapter(cli: Cli) -> None:
    # Rank 64 on 8 H100s at 32768 tokens, Env + SP=2: the separate adapter is 64 x 9,437,184 = 603,979,776 parameters
    # fewer, 16 bytes each over 8 GPUs: 1.125 GiB less states before calibration, 1.158 after (the states'
    # multiplier 1.029); the optimizer step holds 20 bytes each of them, 1.406 GiB less.
    coefficients = load_memory_model().coefficients
    setting = Setting(env=True, sp=2)
    fused, separate = (breakdown(QWEN3_30B_A3B, 79.1, 8, setting, 32768, coefficients, lora_rank=64, experts=layout)
                       for layout in ("fused", "separate"))
    fewer = 64 * (QWEN3_30B_A3B_FUSED - QWEN3_30B_A3B_SEPARATE) // 32
    assert fewer == 603_979_776
    states = 16 * fewer / 8 / GIB * coefficients.multiplier("states")
    assert fused.total_gib - separate.total_gib == pytest.approx(states, rel=1e-9)
    assert round(states, 3) == 1.158
    assert fused.step_gib - separate.step_gib == pytest.approx(20 * fewer / 8 / GIB, rel=1e-9) == 1.40625
    plan = ("--model", "30B-A3B", "--gpu", "h100", "--gpus", "8", "--len", "32k", "--lora-rank", "64")
    for release, memory in ((None, "70.0 GiB per GPU predicted, 3.2 GiB to spare"),
                            ("0.5.2", "70.0 GiB per GPU predicted, 3.2 GiB to spare"),
                            ("0.5.1", "68.9 GiB per GPU predicted, 4.3 GiB to spare")):
        status, out, err = cli(*plan, *(("--trinity-version", release) if release else ()))
        assert (status, err) == (0, "")
        assert f"memory         {memory} (memory model; LoRA rank 64's states)" in out
