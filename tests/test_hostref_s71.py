"""The host memory counts the reference model as Trinity builds it (session 71): its shards pinned from start-up on,
with Offload or without (verl builds it before the actor and offloads it whatever the config), fp32 on Trinity 0.6
(``model_dtype: fp32`` in its engine config), bf16 on 0.5. Qwen3-8B on a node of 8 GPUs, worked out by hand from its
config.json shapes, not by calling `weight_shapes` or `pinned_rounding`."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from solver.api import plan
from solver.memory import host_memory_gib, shown_host_need
from solver.tables import load_catalog

QWEN3_8B = load_catalog().model("Qwen3-8B")
GIB = 2**30
PARAMETERS = 8.191e9  # the table's count

# Qwen3-8B's tensors (rows, columns, count): hidden 4096, 36 layers, 32 query heads and 8 key/value heads of 128,
# MLP 12288, vocabulary 151936, untied. Each GPU of 8 pins its rows / 8 of each, in fp32, rounded up to a power of two:
# embeddings and lm_head 18992 x 4096 x 4 = 311164928 -> 2**29; final norm 512 x 4 = 2048; q and o 512 x 4096 x 4 =
# 2**23; k and v 128 x 4096 x 4 = 2**21; the layers' norms 2048; q/k norms 16 x 4 = 64; gate and up 1536 x 4096 x 4
# = 25165824 -> 2**25; down 512 x 12288 x 4 = 25165824 -> 2**25.
PINNED_FP32_PER_GPU = (2 * 2**29 + 2048 + 36 * 2**23 + 72 * 2**21 + 36 * 2**23 + 72 * 2048 + 72 * 64
                       + 72 * 2**25 + 36 * 2**25)
# Their values, unrounded: 2 x 151936 x 4096 + 4096 + 36 x 4096**2 x 2 + 72 x 1024 x 4096 + 72 x 4096 + 72 x 128
# + 108 x 12288 x 4096.
VALUES = (2 * 151936 * 4096 + 4096 + 72 * 4096**2 + 72 * 1024 * 4096 + 72 * 4096 + 72 * 128 + 108 * 12288 * 4096)
# fp32 shards of the whole model on a node of 8 GPUs (each bf16 shard is exactly half its fp32 one: every shard above
# 2 bytes a value rounds to half the power of two), scaled to the table's parameter count.
FP32_PINNED_GIB = PARAMETERS / VALUES * 8 * PINNED_FP32_PER_GPU / GIB
BF16_PINNED_GIB = FP32_PINNED_GIB / 2
LOAD_GIB = 4 * PARAMETERS / GIB  # the whole model in fp32 on one rank (untied)
ADAM_GIB = 8 * PARAMETERS / GIB  # two fp32 moments, pageable


def test_the_hand_counts_hold_together() -> None:
    assert PINNED_FP32_PER_GPU == 5452749312
    assert VALUES == 8190735360
    assert FP32_PINNED_GIB == pytest.approx(40.62746, abs=1e-5)
    assert LOAD_GIB == pytest.approx(30.51385, abs=1e-5)


@pytest.mark.parametrize(("version", "offload", "loading", "need"), [
    # Without Offload: the load beside the reference model's pinned shards, 30.51 + 40.63 (0.6) or + 20.31 (0.5), on
    # rank 0 alone (0.6 with FSDP2 on an H100; verl's rule for this untied model under 0.5.0 and 0.5.1)...
    ("0.6", False, "rank-0", LOAD_GIB + FP32_PINNED_GIB),
    ("0.5", False, "verl", LOAD_GIB + BF16_PINNED_GIB),
    # ... or on each of the node's 8 ranks, with no release named: 8 x 30.51 + 40.63.
    (None, False, "every-rank", 8 * LOAD_GIB + FP32_PINNED_GIB),
    # With Offload: training's fp32 parameters and gradients, the reference model and Adam's moments, more than the
    # load on rank 0 beside two sets of pinned shards (30.51 + 81.25 on 0.6)...
    ("0.6", True, "rank-0", 3 * FP32_PINNED_GIB + ADAM_GIB),
    ("0.5", True, "verl", 2 * FP32_PINNED_GIB + BF16_PINNED_GIB + ADAM_GIB),
    # ... but less than the load on every rank beside them: 8 x 30.51 + 81.25 (0.6), + 40.63 + 20.31 (0.5).
    (None, True, "every-rank", 8 * LOAD_GIB + 2 * FP32_PINNED_GIB),
    ("0.5", True, "every-rank", 8 * LOAD_GIB + FP32_PINNED_GIB + BF16_PINNED_GIB),
])
def test_qwen3_8b_on_a_node_of_8(version: str | None, offload: bool, loading: str, need: float) -> None:
    assert host_memory_gib(QWEN3_8B, 8, 8, offload, version,  # type: ignore[arg-type]
                           loading=loading) == pytest.approx(need, rel=1e-12)  # type: ignore[arg-type]


def test_shown_figures_round_up_to_a_tenth() -> None:
    """Loading on rank 0 alone (verl's rule under 0.5.1, 0.6 on an H100) and on every rank (no release named)."""
    assert [shown_host_need(QWEN3_8B, 8, 8, offload, version, loading=loading)
            for version, loading in (("0.5", "verl"), ("0.6", "rank-0"), ("0.6", "every-rank"))
            for offload in (False, True)] == [50.9, 162.6, 71.2, 183.0, 284.8, 325.4]


@pytest.mark.parametrize(("release", "need", "loaders"), [
    (("--trinity-version", "0.6"), 71.2, "rank 0"),  # 0.6 with FSDP2 on an H100 loads on rank 0 alone
    ((), 284.8, "every rank"),  # no release named: every rank, 8 x 30.51 + 40.63
])
def test_the_memory_estimate_says_it_while_the_model_loads(cli: Callable[..., tuple[int, str, str]],
                                                           release: tuple[str, ...], need: float, loaders: str) -> None:
    status, out, err = cli("memory", "--model", "8B", "--gpu", "h100", "--gpus", "8", "--len", "32k", "--env",
                           "--sp", "2", *release)
    assert (status, err) == (0, "")
    assert (f"host memory: {need} GiB per node while the model loads (verl reads it in fp32 before FSDP shards it, "
            f"beside the reference model's pinned shards; here {loaders} loading the model)") in " ".join(out.split())


def test_the_release_decides_a_plan_under_a_host_limit() -> None:
    """60 GiB holds the no-Offload need on Trinity 0.5.1 (50.9 GiB: bf16 reference shards, the load on rank 0) but not
    on 0.6 (71.2: fp32 shards), nor given no release (284.8: the load on every rank)."""
    older, = plan("Qwen3-8B", gpu="h100", budget_gpus=8, max_model_len=32768, host_ram_gb=60.0,
                  trinity_version="0.5.1")
    assert older.best is not None
    assert (older.best.gpus, older.best.setting.label, older.best.host_memory_gb) == (8, "Env + SP=2", 50.9)
    for version, need in (("0.6", 71.2), (None, 284.8)):
        newer, = plan("Qwen3-8B", gpu="h100", budget_gpus=8, max_model_len=32768, host_ram_gb=60.0,
                      trinity_version=version)
        assert (newer.status, newer.best) == ("infeasible", None)
        assert f"it needs {need} GiB of host memory per node while the model loads" in newer.reason
