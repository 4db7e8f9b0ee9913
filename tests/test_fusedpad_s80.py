"""A mixture of experts' fused routed experts as the release's FSDP2 placement shards them (session 80): every Trinity
0.5 patch pins verl 0.7 (0.5.0 and 0.5.1 ``verl==0.7.0``, 0.5.2 ``verl==0.7.1``), whose workers give ``fully_shard``
``get_shard_placement_fn`` (``utils/fsdp_utils.py:540-550``, the same in both): each parameter is sharded by its first
dimension the GPUs divide, else by its first, which FSDP2 pads to a multiple of the GPUs (``torch.chunk``'s first
chunk, ``_fsdp_param.py:353-368`` in PyTorch 2.9.1). transformers 5's ``gate_up_proj`` (experts x 2 width x hidden)
and ``down_proj`` (experts x hidden x width) are placed so under 0.5, 0.5.0 and 0.5.2 (``either``), and Llama 4's
3-D experts under 0.5.1; 0.6 (verl 0.8 and later's engine, no placement) and no release named keep the count by
rows, bit-identical, and a dense model's figures stay 0."""

from __future__ import annotations

import json
from collections.abc import Callable
from math import ceil
from pathlib import Path

import pytest

from solver.memory import (
    FIRST_EVEN_DIM_RELEASES,
    PLACED_EXPERT_LAYOUTS,
    STATE_BYTES,
    expert_padding,
    first_even_dim_release,
    lora_states_bytes,
    pinned_rounding,
    shard_padding,
)
from solver.tables import (
    ExpertLayout,
    Model,
    counted_expert_layout,
    load_catalog,
    load_model_config,
    trinity_release,
)
from solver.tables.bounds import KNOWN_RELEASE_NAMES

Cli = Callable[..., tuple[int, str, str]]
CATALOG = load_catalog()
CONFIGS = Path(__file__).parent / "data" / "hf-configs"
QWEN3_30B_A3B = CATALOG.model("Qwen3-30B-A3B")
MIXTRAL = load_model_config(CONFIGS / "Mixtral-8x7B-v0.1.json")
QWEN15_MOE = load_model_config(CONFIGS / "Qwen1.5-MoE-A2.7B.json")
TESTED_MOES = (QWEN3_30B_A3B, MIXTRAL, QWEN15_MOE, load_model_config(CONFIGS / "Qwen2-57B-A14B.json"),
               load_model_config(CONFIGS / "DeepSeek-V2-Lite.json"))


def by_rows(experts: int, width: int, hidden: int, layers: int, gpus: int) -> float:
    """The padding by rows, derived here from the shapes: the fullest GPU's rounded-up count of experts less an even
    share, each expert 2 x width x hidden (gate_up_proj) and hidden x width (down_proj) in every expert layer."""
    return (ceil(experts / gpus) * gpus - experts) * 3 * width * hidden * layers / gpus


# Qwen3-30B-A3B: 128 experts of width 768 on a hidden 2048, 48 expert layers: gate_up 128 x 1536 x 2048, down
# 128 x 2048 x 768. 1, 2, 4 and 8 divide 128; 6 does not (22 a GPU, 132), but divides 1536 and 768: placed, none.
@pytest.mark.parametrize(("gpus", "rows", "placed"), [
    (1, 0, 0), (2, 0, 0), (4, 0, 0), (6, 4 * 4_718_592 * 48 / 6, 0), (8, 0, 0),
    # 3 divides 1536 and 768 too; 5 and 7 divide none of 128, 1536, 2048, 768: by rows both ways (130 and 133).
    (3, 1 * 4_718_592 * 48 / 3, 0), (5, 2 * 4_718_592 * 48 / 5, 2 * 4_718_592 * 48 / 5),
    (7, 5 * 4_718_592 * 48 / 7, 5 * 4_718_592 * 48 / 7),
])
def test_qwen3_30b_a3bs_fused_experts_pad_where_the_gpus_divide_no_dimension(gpus: int, rows: float,
                                                                             placed: float) -> None:
    assert 3 * 768 * 2048 == 4_718_592
    assert rows == by_rows(128, 768, 2048, 48, gpus)
    assert expert_padding(QWEN3_30B_A3B, gpus, "fused") == rows  # 0.6, none named: by rows, as before
    assert expert_padding(QWEN3_30B_A3B, gpus, "either") == placed  # 0.5, 0.5.0, 0.5.2: as verl 0.7 places them


def test_the_six_gpu_figure_in_bytes() -> None:
    # 150,994,944 parameters by rows on 6 GPUs, 16 bytes each: 2,415,919,104 bytes (2.25 GiB) more states on the
    # fullest GPU under 0.6; none under 0.5, whose states are an even share: 16 x 30.5e9 / 6 bytes.
    assert expert_padding(QWEN3_30B_A3B, 6, "fused") == 150_994_944
    even = 16 * 30_500_000_000 / 6
    assert lora_states_bytes(QWEN3_30B_A3B, 6, 0, STATE_BYTES, "fused") == even + 16 * 150_994_944
    assert lora_states_bytes(QWEN3_30B_A3B, 6, 0, STATE_BYTES, "either") == even
    assert 16 * 150_994_944 == 2_415_919_104 == 2.25 * 2**30


# Mixtral-8x7B: 8 experts of width 14336 on a hidden 4096, 32 layers: gate_up 8 x 28672 x 4096, down 8 x 4096 x 14336,
# 176,160,768 values an expert. 32 divides 28672 and 4096, 7 divides 28672 and 14336 (7 x 2048): placed, none; 6
# divides none of 8, 28672 (2^12 x 7), 4096, 14336: 2 experts a GPU both ways (12 of 8).
@pytest.mark.parametrize(("gpus", "rows", "placed"), [
    (1, 0, 0), (2, 0, 0), (4, 0, 0), (8, 0, 0),
    (6, 4 * 176_160_768 * 32 / 6, 4 * 176_160_768 * 32 / 6),
    (7, 6 * 176_160_768 * 32 / 7, 0),
    (32, 24 * 176_160_768 * 32 / 32, 0),
])
def test_mixtrals_fused_experts_placed_by_28672_and_14336(gpus: int, rows: float, placed: float) -> None:
    assert 3 * 14336 * 4096 == 176_160_768
    assert rows == by_rows(8, 14336, 4096, 32, gpus)
    assert expert_padding(MIXTRAL, gpus, "fused") == rows
    assert expert_padding(MIXTRAL, gpus, "either") == placed
    # 3,758,096,384 on 6 (56 GiB of states), 4,831,838,208 by rows on 7, 4,227,858,432 on 32.
    assert {6: 3_758_096_384, 7: 4_831_838_208, 32: 4_227_858_432}.get(gpus, 0) == rows


def test_qwen15_moes_60_experts_on_8_gpus_placed_by_2816_and_2048() -> None:
    # 60 experts of width 1408 on 2048, 24 layers: by rows 8 a GPU (64), 4 x 3 x 1408 x 2048 x 24 / 8 = 103,809,024;
    # 8 divides 2816 (gate_up) and 2048 (down): none under 0.5.
    assert expert_padding(QWEN15_MOE, 8, "fused") == 4 * 3 * 1408 * 2048 * 24 / 8 == 103_809_024
    assert expert_padding(QWEN15_MOE, 8, "either") == 0


def test_llama_4_like_3d_experts_are_placed_under_0_5_1_too() -> None:
    # A model whose transformers 4 holds the experts as 3-D parameters too (Llama 4's, GraniteMoE's: `held_experts`
    # fused under 0.5.1), here Mixtral's shapes: 0.5.1's verl 0.7 places them, by 28672 and 14336 on 7 GPUs.
    fused_under_4 = MIXTRAL.model_copy(update={"model_type": "granitemoe"})
    assert (MIXTRAL.peft_names.separate_experts, fused_under_4.peft_names.separate_experts) == (True, False)
    assert expert_padding(fused_under_4, 7, "separate") == 0
    assert expert_padding(fused_under_4, 7, "fused") == 4_831_838_208
    assert expert_padding(fused_under_4, 6, "separate") == 3_758_096_384  # 6 divides none: by rows


def test_shard_padding_takes_a_3d_tensors_dimensions() -> None:
    # (dimensions..., count): Qwen3-30B-A3B's gate_up_proj, 48 of them, on 6 GPUs: by rows 4 experts of 1536 x 2048
    # over 6; placed by its 1536, none. A matrix's (rows, columns, count) reads as before: 4096 x 14336 on 7.
    assert shard_padding(((128, 1536, 2048, 48),), 6) == 4 * 1536 * 2048 * 48 / 6 == 100_663_296
    assert shard_padding(((128, 1536, 2048, 48),), 6, first_even_dim=True) == 0
    assert shard_padding(((4096, 14336, 1),), 7) == 6 * 14336 / 7 == 12_288


@pytest.mark.parametrize("model", TESTED_MOES, ids=lambda model: model.name)
def test_none_named_and_0_6_count_by_rows_bit_identical(model: Model) -> None:
    # The figure before this session, derived from the shapes, for every GPU count to 64.
    assert model.moe is not None
    moe = model.moe
    for gpus in range(1, 65):
        expected = by_rows(moe.experts, moe.moe_intermediate_size, model.hidden_size,
                           model.num_layers - moe.dense_layers, gpus)
        assert expert_padding(model, gpus, "fused") == expected
        assert expert_padding(model, gpus, counted_expert_layout("0.6")) == expected
        assert expert_padding(model, gpus, counted_expert_layout(None)) == expected


@pytest.mark.parametrize("layout", ["fused", "separate", "either"])
def test_a_dense_models_states_stay_bit_identical(layout: ExpertLayout) -> None:
    for model in CATALOG.models:
        if model.moe is None:
            for gpus in (1, 2, 3, 4, 6, 8):
                assert expert_padding(model, gpus, layout) == 0.0
                assert lora_states_bytes(model, gpus, 0, STATE_BYTES, layout) == (
                    16 * model.parameters_b * 1e9 / gpus + 16 * 0.0)


def test_the_placed_layouts_are_the_first_even_dim_releases() -> None:
    # The GPU figures know the release by its layout: those of 0.5's patches place, 0.6's and none's do not.
    assert PLACED_EXPERT_LAYOUTS == ("separate", "either") and FIRST_EVEN_DIM_RELEASES == ("0.5",)
    for name in (None, *KNOWN_RELEASE_NAMES):
        version = None if name is None else trinity_release("--trinity-version", name)
        assert (counted_expert_layout(name) in PLACED_EXPERT_LAYOUTS) == first_even_dim_release(version), name
    assert [first_even_dim_release(version) for version in (None, "0.5", "0.6")] == [False, True, False]


@pytest.mark.parametrize("model", [model for model in CATALOG.models if model.moe is not None],
                         ids=lambda model: model.name)
def test_either_counts_the_larger_layout_for_the_catalogued_experts(model: Model) -> None:
    # 0.5.0's and 0.5.2's `either` counts the experts fused; for the catalogued mixtures of experts (Qwen3-30B-A3B's
    # four) transformers 4's separate experts never pin more (bf16 reference, fp32 shards) nor pad more on the GPU,
    # as verl 0.7 places either, on any count to 128.
    for gpus in range(1, 129):
        assert expert_padding(model, gpus, "either") >= expert_padding(model, gpus, "separate")
        for size in (2, 4):
            assert pinned_rounding(model, gpus, size, 0, "either", True) >= pinned_rounding(
                model, gpus, size, 0, "separate", True)


def test_solve_memory_under_each_release(cli: Cli) -> None:
    # Qwen3-30B-A3B on 6 H100s at 8k: 0.5, 0.5.1 and 0.5.2 pad nothing; 0.6 adds the 2.25 GiB by rows, calibrated
    # (x 1.029). It does not fit either way (status 1: 107.8 GiB and 110.2 of 71.0 usable).
    states = {}
    for release in ("0.5", "0.5.1", "0.5.2", "0.6"):
        status, out, err = cli("memory", "--model", "30B-A3B", "--gpu", "h100", "--gpus", "6", "--len", "8k",
                               "--trinity-version", release, "--json")
        assert status == 1, err
        states[release] = json.loads(out)["terms"]["states"]
    assert states == {"0.5": 77.9449, "0.5.1": 77.9449, "0.5.2": 77.9449, "0.6": 80.2601}
