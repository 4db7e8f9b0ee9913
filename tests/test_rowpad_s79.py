"""FSDP2's row padding of a mixture of experts' routed experts under each layout (session 79): Trinity 0.5.1's
transformers 4 holds each expert as three ``nn.Linear`` (``separate``), which its workers shard with verl 0.7.0's
placement (each weight by its first dimension the GPUs divide, else by its rows padded to a multiple of them); the
``fused`` tensors of transformers 5 pad the expert dimension as before; a dense model's figures are unchanged; and
vLLM 0.15.1's LoRA slots for the experts, allocated as 0.19.1's."""

from __future__ import annotations

from pathlib import Path

import pytest

from solver.memory import (
    STATE_BYTES,
    expert_padding,
    lora_states_bytes,
    shard_padding,
    shard_rows,
    vllm_lora_bytes,
    vllm_lora_widths,
)
from solver.tables import load_catalog, load_model_config

MIXTRAL = load_model_config(Path(__file__).parent / "data" / "hf-configs" / "Mixtral-8x7B-v0.1.json")
QWEN3_30B_A3B = load_catalog().model("Qwen3-30B-A3B")
QWEN3_8B = load_catalog().model("Qwen3-8B")


def test_the_fullest_gpu_holds_the_rows_rounded_up() -> None:
    # torch.chunk's first chunk: 4096 rows on 6 GPUs are 683 a GPU (4098 in all), 14336 are 2390 (14340).
    assert [shard_rows(4096, 6), shard_rows(14336, 6), shard_rows(4096, 8), shard_rows(8, 32)] == [683, 2390, 512, 1]


def test_the_placement_pads_only_where_the_gpus_divide_neither_dimension() -> None:
    # Mixtral's w2, 4096 x 14336, on 7 GPUs: by its rows 4096 pad to 4102, 6 x 14336 / 7 = 12,288 more; verl 0.7.0's
    # placement shards it by its columns, which 7 divides: none.
    assert shard_padding(((4096, 14336, 1),), 7) == 12_288
    assert shard_padding(((4096, 14336, 1),), 7, first_even_dim=True) == 0
    assert shard_padding(((4096, 14336, 3),), 6, first_even_dim=True) == 3 * 2 * 14336 / 6


@pytest.mark.parametrize(("gpus", "padding"), [
    # Per expert: w1 and w3 (14336 x 4096) and w2 (4096 x 14336), 256 experts (8 x 32 layers).
    # 6 GPUs divide neither: 14336 to 14340, 4096 to 4098: (2 x 4 x 4096 + 2 x 14336) x 256 / 6 = 2,621,440.
    (6, 2_621_440),
    # 5: 14336 to 14340, 4096 to 4100: (2 x 4 x 4096 + 4 x 14336) x 256 / 5 = 4,613,734.4.
    (5, 4_613_734.4),
    # 3: 14336 to 14337, 4096 to 4098: (2 x 1 x 4096 + 2 x 14336) x 256 / 3 = 3,145,728.
    (3, 3_145_728),
    # 7 divides 14336: w1 and w3 by their rows, w2 by its columns; 8 and 32 divide both.
    (7, 0), (8, 0), (32, 0),
])
def test_mixtrals_separate_experts_pad_each_experts_rows(gpus: int, padding: float) -> None:
    assert expert_padding(MIXTRAL, gpus, "separate") == padding


def test_the_states_count_the_padding_on_the_fullest_gpu() -> None:
    # 16 bytes a parameter: 16 x (46,702,792,704 / 6 + 2,621,440) = 124,540,780,544 + 41,943,040 bytes.
    assert MIXTRAL.parameters_b * 1e9 == 46_702_792_704
    assert lora_states_bytes(MIXTRAL, 6, 0, STATE_BYTES, "separate") == 124_540_780_544 + 41_943_040
    # With LoRA the frozen base's 4 bytes a parameter are padded so (0 bytes a parameter of the adapter: the base).
    assert lora_states_bytes(MIXTRAL, 6, 8, 0, "separate") == 31_135_195_136 + 10_485_760


def test_qwen3_moes_separate_experts_pad_where_the_gpus_divide_neither_768_nor_2048() -> None:
    # 6144 experts (128 x 48 layers): on 6 GPUs 768 divides (gate and up by their rows, down by its columns): none;
    # on 5, 768 rows to 770, 2048 to 2050: (2 x 2 x 2048 + 2 x 768) x 6144 / 5 = 11,953,766.4.
    assert expert_padding(QWEN3_30B_A3B, 6, "separate") == 0
    assert expert_padding(QWEN3_30B_A3B, 5, "separate") == 11_953_766.4


def test_fused_experts_pad_the_expert_dimension_as_before() -> None:
    # R = 45,097,156,608; 2 of 8 experts a GPU on 6: R x (12 - 8) / (8 x 6) = R / 12; 22 of Qwen3-30B-A3B's 128.
    assert expert_padding(MIXTRAL, 6, "fused") == expert_padding(MIXTRAL, 6, "either") == 45_097_156_608 / 12
    assert expert_padding(QWEN3_30B_A3B, 6, "fused") == 48 * 3 * 2048 * 768 * 4 / 6


@pytest.mark.parametrize("experts", ["fused", "separate", "either"])
@pytest.mark.parametrize("gpus", [3, 6, 7])
def test_a_dense_models_states_stay_an_even_share(experts: str, gpus: int) -> None:
    # Qwen3-8B's 4096 rows on 6 GPUs pad to 4098 in FSDP2 too, but a dense layer's padding is not counted.
    assert expert_padding(QWEN3_8B, gpus, experts) == 0.0  # type: ignore[arg-type]
    held = lora_states_bytes(QWEN3_8B, gpus, 0, STATE_BYTES, experts)  # type: ignore[arg-type]
    assert held == STATE_BYTES * QWEN3_8B.parameters_b * 1e9 / gpus + STATE_BYTES * 0.0


def test_vllm_0_15_1_allocates_the_experts_lora_slots_as_counted() -> None:
    # vLLM 0.15.1's FusedMoEWithLoRA (lora/layers/fused_moe.py:320-380), as 0.19.1's: per layer, rank x experts x
    # (2 x hidden + 2 x width / TP) for w1 and w3's A and B, rank x experts x (width / TP + hidden) for w2's. Mixtral
    # at TP 2: widths (4096 + 7168) x 2 x 256 + (7168 + 4096) x 256 = 8,650,752; rank 8, bf16: 138,412,032 bytes.
    widths = vllm_lora_widths(MIXTRAL, 2)
    assert widths[-2:] == ((4096, 7168.0, 512), (7168.0, 4096, 256))
    # With the vocabulary's (2 x 36,096), the attention's (6144 x 32 + 4608 x 64 + 6144 x 32 = 688,128) and the
    # router's (4104 x 32 = 131,328): 9,542,400 widths x 8 x 2 bytes + 56 x 2048 of the punica wrapper.
    assert vllm_lora_bytes(MIXTRAL, 2, 8) == 9_542_400 * 8 * 2 + 56 * 2048 == 152_793_088
