"""The pinned host blocks as the release's FSDP2 placement shards them (session 79): every Trinity 0.5 patch pins verl
0.7, whose workers shard each tensor by its first dimension the GPUs divide (``get_shard_placement_fn``), so its
offloaded and reference blocks are counted as placed; 0.6 (verl 0.8 and later's engine, which passes no placement)
and no release named count them by rows, the larger, bit-identical to before."""

from __future__ import annotations

from pathlib import Path

import pytest

import solver
from solver.memory import (
    FIRST_EVEN_DIM_RELEASES,
    GIB,
    critic_parameters,
    host_critic_gib,
    host_memory_gib,
    pinned_rounding,
    shard_padding,
    shard_values,
)
from solver.tables import load_catalog, load_model_config

CATALOG = load_catalog()
QWEN3_8B = CATALOG.model("Qwen3-8B")
QWEN3_30B_A3B = CATALOG.model("Qwen3-30B-A3B")
QWEN2_57B = load_model_config(Path(__file__).parent / "data" / "hf-configs" / "Qwen2-57B-A14B.json")
QWEN3_8B_VALUES = 8_190_735_360  # the values of Qwen3-8B's weight tensors (`weight_shapes`)
QWEN3_30B_A3B_VALUES = 30_532_122_624  # Qwen3-30B-A3B's, its experts separate
DOWN_PROJ_SAVED = 36 * (2**24 + 2 * 2**25)  # Qwen3-8B on 6 GPUs: each down_proj's bf16 and two fp32 blocks halved


def test_a_shard_holds_its_rows_rounded_up_or_as_verl_07_places_it() -> None:
    # Qwen3-8B's down_proj, 4096 x 12288, on 6 GPUs: 683 rows by rows, 4096 x 2048 placed by its columns; its
    # gate_proj, 12288 rows, divides alike either way; the embeddings (151936 x 4096) divide neither: rows both ways.
    assert shard_values((4096, 12288), 6) == 683 * 12288 == 8_392_704
    assert shard_values((4096, 12288), 6, first_even_dim=True) == 4096 * 2048 == 8_388_608
    assert shard_values((12288, 4096), 6) == shard_values((12288, 4096), 6, first_even_dim=True) == 2048 * 4096
    assert shard_values((151936, 4096), 6) == shard_values((151936, 4096), 6, first_even_dim=True) == 25323 * 4096
    assert shard_values((4096, 1), 6, first_even_dim=True) == 683  # a norm, one column: by its rows
    # shard_padding reads the same shards: 2 rows of 12288 padded by rows (683 x 6 = 4098), none placed.
    assert shard_padding(((4096, 12288, 1),), 6) == 2 * 12288 / 6 == 4096
    assert shard_padding(((4096, 12288, 1),), 6, first_even_dim=True) == 0


def test_a_fused_expert_tensor_is_placed_by_its_three_dimensions() -> None:
    # Qwen2-57B-A14B's gate_up_proj, 64 x 5120 x 3584, on 35 GPUs: 35 divides none of them (5120 has no 7, 3584 no
    # 5), so verl 0.7 shards it by its experts, 2 a GPU; read as 64 x (5120 x 3584) it would seem to divide evenly.
    assert shard_values((64, 5120, 3584), 35, first_even_dim=True) == 2 * 5120 * 3584
    assert shard_values((64, 5120 * 3584), 35, first_even_dim=True) == 64 * 5120 * 3584 // 35
    # Qwen3-30B-A3B's, 128 x 1536 x 2048, on 6: placed by its 1536, 128 x 256 x 2048 (22 experts by rows).
    assert shard_values((128, 1536, 2048), 6, first_even_dim=True) == 128 * 256 * 2048
    assert shard_values((128, 1536, 2048), 6) == 22 * 1536 * 2048


def test_fused_experts_blocks_placed_whole_where_the_gpus_divide_no_dimension() -> None:
    # Qwen2-57B-A14B on 35 GPUs, bf16: no tensor has a dimension 35 divides, so the placed blocks are those by rows,
    # the experts' 28 gate_up blocks of 128 MiB and 28 down blocks of 64 MiB among them (not 64 and 32 MiB).
    held = 2 * 57_408_537_088 / 35  # the model's tensors' values (`weight_shapes`), bf16, a GPU's even share
    assert pinned_rounding(QWEN2_57B, 35, 2, 0, "fused", True) == pinned_rounding(QWEN2_57B, 35, 2, 0, "fused")
    assert pinned_rounding(QWEN2_57B, 35, 2, 0, "fused", True) * held == pytest.approx(6_475_659_968, rel=1e-12)
    # Qwen3-30B-A3B's on 6 GPUs, fused (0.5.0's and 0.5.2's count): each layer's gate_up 128 MiB placed, 256 MiB
    # by rows, and down 64 MiB, 128 by rows; the rest as with the experts separate.
    by_rows = 20_055_170_048
    assert by_rows - 48 * (2**27 + 2**26) == 10_391_493_632
    held = 2 * QWEN3_30B_A3B_VALUES / 6
    assert pinned_rounding(QWEN3_30B_A3B, 6, 2) * held == pytest.approx(by_rows, rel=1e-12)
    assert pinned_rounding(QWEN3_30B_A3B, 6, 2, 0, "fused", True) * held == pytest.approx(10_391_493_632, rel=1e-12)


def test_qwen3_8b_bf16_blocks_on_6_gpus_as_placed() -> None:
    # docs/memory.md: down_proj's 36 blocks of 16 MiB placed, 32 MiB by rows; every other block alike.
    by_rows, placed = 3_707_918_848, 3_707_918_848 - 36 * 2**24
    assert placed == 3_103_939_072
    assert pinned_rounding(QWEN3_8B, 6, 2) * (2 * QWEN3_8B_VALUES / 6) == pytest.approx(by_rows, rel=1e-12)
    assert pinned_rounding(QWEN3_8B, 6, 2, first_even_dim=True) * (2 * QWEN3_8B_VALUES / 6) == pytest.approx(
        placed, rel=1e-12)


def test_qwen3_30b_a3b_separate_bf16_blocks_on_6_gpus_as_placed() -> None:
    # Each expert's down_proj (2048 x 768), 6144 of them: 342 x 768 x 2 bytes by rows, a 1 MiB block; 2048 x 128 x 2
    # placed, 512 KiB: 3 GiB less a GPU (12.68 GiB against 9.68); on 8 GPUs, which divide 2048, nothing changes.
    by_rows, placed = 13_612_719_104, 13_612_719_104 - 6144 * 2**19
    assert placed == 10_391_493_632
    held = 2 * QWEN3_30B_A3B_VALUES / 6
    assert pinned_rounding(QWEN3_30B_A3B, 6, 2, 0, "separate") * held == pytest.approx(by_rows, rel=1e-12)
    assert pinned_rounding(QWEN3_30B_A3B, 6, 2, 0, "separate", True) * held == pytest.approx(placed, rel=1e-12)
    assert pinned_rounding(QWEN3_30B_A3B, 8, 2, 0, "separate", True) == pinned_rounding(
        QWEN3_30B_A3B, 8, 2, 0, "separate")


def test_trinity_05_alone_counts_the_placed_blocks() -> None:
    assert FIRST_EVEN_DIM_RELEASES == ("0.5",)
    # Qwen3-8B with Offload and its bf16 reference on 6 GPUs of a node: down_proj's blocks, the reference's and the
    # actor's fp32 parameters' and gradients', halved on each of the 6 GPUs, scaled to the model's 8.191e9.
    saved = 6 * DOWN_PROJ_SAVED * 8.191e9 / QWEN3_8B_VALUES / GIB
    assert saved == pytest.approx(16.875 * 8.191e9 / QWEN3_8B_VALUES, rel=1e-12)
    # (Rank 0 alone loading the model, so that training's need is the larger: s84.)
    by_rows = 164.6291087284882  # 0.5's need before this session: the blocks by rows
    assert host_memory_gib(QWEN3_8B, 6, 8, True, "0.5", loading="rank-0") == pytest.approx(by_rows - saved, rel=1e-12)
    assert host_memory_gib(QWEN3_8B, 6, 8, True, "0.5", loading="rank-0") == pytest.approx(147.7535635027, abs=1e-9)
    # 0.6 and none named: by rows, unchanged to the bit.
    assert host_memory_gib(QWEN3_8B, 6, 8, True, "0.6", loading="rank-0") == host_memory_gib(
        QWEN3_8B, 6, 8, loading="rank-0") == 185.34938934030524
    # A critic offloaded beside it: its fp32 parameters' and gradients' down_proj blocks halved under 0.5, per
    # parameter of the critic (`critic_parameters`) on each of the 6 GPUs.
    critic_saved = 2 * 36 * 2**25 * 6 / QWEN3_8B_VALUES * critic_parameters(QWEN3_8B) / GIB
    assert host_critic_gib(QWEN3_8B, 6, 8, "offloaded") == 132.9750995506221
    assert host_critic_gib(QWEN3_8B, 6, 8, "offloaded", "fused", "0.6") == 132.9750995506221
    assert host_critic_gib(QWEN3_8B, 6, 8, "offloaded", "fused", "0.5") == pytest.approx(
        132.9750995506221 - critic_saved, rel=1e-12)


def test_estimate_memory_names_the_placed_need_for_a_05_release() -> None:
    # solver.estimate_memory on 6 H100s with Offload: 0.5.1 (bf16 reference, placed blocks) against 0.6.0 (fp32, by
    # rows), each loading the model on rank 0 alone (verl's rule for the untied Qwen3-8B; 0.6 with FSDP2 on an H100).
    def need(version: str | None) -> float | None:
        return solver.estimate_memory("Qwen3-8B", "H100", 6, 8192, offload=True, node_gpus=8,
                                      trinity_version=version).host_memory_gib

    assert need("0.5.1") == 147.8
    assert need("0.6.0") == 185.4
    # Every rank loading (0.5 without its patch, 0.5.2, none named): the 6 loads of 30.51 GiB beside the pinned shards
    # outweigh training, 0.5's pinned shards (placed blocks, bf16 reference) 30.85 GiB fewer than none named's.
    assert need("0.5") == need("v0.5.2") == 235.2
    assert need(None) == 266.0
