"""A mixture of experts' routed experts sharded as the Trinity release's transformers holds them (session 77,
persona47's Mixtral-8x7B on 32 A100s): Trinity 0.5.1 pins ``transformers<5.0.0``, whose classes make each expert a
gated MLP of ``nn.Linear`` (``separate``), which FSDP2 shards over every GPU as a dense layer's (padding the rows
where the GPUs divide neither dimension); 0.6.0 needs ``>=5.12.1``, whose fused expert tensors it shards whole
(``fused``); 0.5.0 and 0.5.2 take ``either``, and so does 0.5 without its patch: the larger states, fused, count
there, as where no release is named."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from command_words import make_query

from solver.memory import GIB, STATE_BYTES, critic_states_gib, host_memory_gib, lora_states_bytes, weight_shapes
from solver.tables import counted_expert_layout, load_catalog, load_model_config

Cli = Callable[..., tuple[int, str, str]]

MIXTRAL_CONFIG = Path(__file__).parent / "data" / "hf-configs" / "Mixtral-8x7B-v0.1.json"
MIXTRAL = load_model_config(MIXTRAL_CONFIG)
QWEN3_30B_A3B = load_catalog().model("Qwen3-30B-A3B")
RELEASES = (None, "0.5", "0.5.0", "0.5.1", "0.5.2", "0.6", "0.6.0")


@pytest.mark.parametrize(("release", "layout"), [
    (None, "fused"), ("0.5", "either"), ("0.5.0", "either"), ("0.5.1", "separate"), ("v0.5.1", "separate"),
    (" 0.5.1 ", "separate"), ("0.5.1.post1", "separate"), ("0.5.2", "either"), ("0.6", "fused"), ("0.6.0", "fused"),
    ("0.6.1", "fused"), ("0.5.3", "fused"), ("0.4.1", "fused"),
])
def test_only_a_release_pinning_transformers_4_counts_the_experts_separate(release: str | None, layout: str) -> None:
    # trinity_rft-0.5.1's METADATA: transformers<5.0.0,>=4.51.0; 0.5.0's >=4.51.0; 0.5.2's <=5.3.0,>=4.51.0;
    # 0.6.0's >=5.12.1. 0.5.0, 0.5.2 and 0.5 (any of the three) allow both layouts: either (the states fused).
    assert counted_expert_layout(release) == layout


# Mixtral-8x7B: P = 46,702,792,704 parameters (43.4953 Gi); its routed experts R = 32 layers x 8 experts x
# 3 x 4096 x 14336 = 45,097,156,608 = 42 Gi exactly. States, 16 bytes a parameter:
# - separate, an even share and each expert's rows padded where the GPUs divide neither dimension (6 does not divide
#   4096 or 14336: w1 and w3 pad 14336 rows to 14340, w2 4096 to 4098, (2 x 4 x 4096 + 2 x 14336) x 256 / 6 =
#   2,621,440 parameters more, 0.0390625 GiB of states): 16 x 43.4953 / 6 + 0.0391 = 116.0267 GiB on 6 GPUs;
#   16 x 43.4953 / 32 = 21.7477 on 32, which divides both (persona47's ~21.7);
# - fused, the fullest GPU 2 of 8 experts on 6 GPUs: 16 x (P/6 + R x (2 x 6 - 8) / (8 x 6)) = 115.9876 + 16 x 42 / 12
#   = 115.9876 + 56 = 171.9876; 1 of 8 on 32: 21.7477 + 16 x 42 x (32 - 8) / 256 = 21.7477 + 63 = 84.7477.
# Qwen3-30B-A3B: P = 30.5e9 (28.4053 Gi), R = 48 x 128 x 3 x 2048 x 768 = 27 Gi exactly:
# - separate: 16 x 28.4053 / 6 = 75.7476 on 6 (6 divides 768, the columns of down_proj, which verl 0.7's placement
#   shards by them: no padding); 16 x 28.4053 / 32 = 14.2027 on 32;
# - fused, 22 of 128 on 6 GPUs: 75.7476 + 16 x 27 x (132 - 128) / 768 = 75.7476 + 2.25 = 77.9976; 32 divide 128:
#   14.2027 as separate.
# - fused under 0.5, 0.5.0 and 0.5.2, each 3-D tensor as verl 0.7 places it (fusedpad, s80): Mixtral's 8 x 28672 x
#   4096 and 8 x 4096 x 14336 by the first dimension the GPUs divide, on 32 GPUs 28672 and 4096: an even share, 21.7477;
#   6 divides none of their dimensions: by rows, 171.9876; Qwen3-30B-A3B's 128 x 1536 x 2048 and 128 x 2048 x 768 on
#   6 GPUs by their 1536 and 768: 75.7476.
FUSED = {("Mixtral", 6): 171.9876, ("Mixtral", 32): 84.7477, ("Qwen3", 6): 77.9976, ("Qwen3", 32): 14.2027}
SEPARATE = {("Mixtral", 6): 116.0267, ("Mixtral", 32): 21.7477, ("Qwen3", 6): 75.7476, ("Qwen3", 32): 14.2027}
PLACED = {("Mixtral", 6): 171.9876, ("Mixtral", 32): 21.7477, ("Qwen3", 6): 75.7476, ("Qwen3", 32): 14.2027}


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("gpus", [6, 32])
@pytest.mark.parametrize("name", ["Mixtral", "Qwen3"])
def test_the_states_per_gpu_follow_the_releases_layout(release: str | None, gpus: int, name: str) -> None:
    model = MIXTRAL if name == "Mixtral" else QWEN3_30B_A3B
    states = lora_states_bytes(model, gpus, 0, STATE_BYTES, counted_expert_layout(release)) / GIB
    expected = SEPARATE if release == "0.5.1" else PLACED if release in ("0.5", "0.5.0", "0.5.2") else FUSED
    assert states == pytest.approx(expected[name, gpus], abs=5e-5)


def test_a_resident_critics_states_follow_the_layout_too() -> None:
    # A critic of Mixtral: P less its output projection (32000 x 4096) plus a value head of 4096 + 1; separate on 32
    # GPUs: 16 x (46,702,792,704 - 131,072,000 + 4097) / 32 / 2^30 = 21.68665 GiB; fused adds the same 63 GiB.
    assert critic_states_gib(MIXTRAL, 32, "separate") == pytest.approx(21.68665, abs=5e-6)
    assert critic_states_gib(MIXTRAL, 32, "fused") == pytest.approx(21.68665 + 63, abs=5e-6)


@pytest.mark.parametrize(("release", "layout", "minor"), [
    (None, "fused", None), ("0.5", "either", "0.5"), ("0.5.1", "separate", "0.5"), ("0.5.2", "either", "0.5"),
    ("0.6.0", "fused", "0.6"),
])
def test_the_query_keeps_the_patchs_layout_beside_the_minor_version(release: str | None, layout: str,
                                                                    minor: str | None) -> None:
    query = make_query(load_catalog(), model="30B-A3B", gpu="a100", budget_gpus=8, max_model_len=8192,
                       trinity_version=release)
    assert (query.expert_layout, query.trinity_version) == (layout, minor)


PERSONA47 = ("--model-config", str(MIXTRAL_CONFIG), "--gpu", "a100-80gb", "--gpus", "32", "--exact", "--len", "16k",
             "--no-offload")


def test_mixtral_on_32_a100s_trains_under_every_0_5_release_not_0_6(cli: Cli) -> None:
    # 0.5 and 0.5.2 hold the experts fused but place them as verl 0.7 does (fusedpad, s80): an even share, as 0.5.1's.
    for placed in ("0.5.1", "0.5", "0.5.2"):
        status, out, err = cli(*PERSONA47, "--trinity-version", placed)
        assert status == 0, err
        assert "cheapest plan for 16384 tokens on exactly 32 GPUs: optimal" in out
        assert "memory         58.8 GiB per GPU predicted, 14.7 GiB to spare (memory model)" in out
    status, out, err = cli(*PERSONA47, "--trinity-version", "0.6")
    assert status == 1, err  # no plan
    assert "on exactly 32 GPUs: infeasible" in out
    assert "no plan: nothing in the tables and the memory model's estimates for Mixtral-8x7B-v0.1" in out


def test_the_release_is_still_refused_twice_or_unknown(cli: Cli) -> None:
    status, _, err = cli("--model", "8B", "--gpu", "a100", "--len", "8k", "--trinity-version", "0.5.1",
                         "--trinity-version", "0.6")
    assert (status, err.splitlines()[-1]) == (2, "solve: error: argument --trinity-version: given twice: give it once")
    status, _, err = cli("--model", "8B", "--gpu", "a100", "--len", "8k", "--trinity-version", "0.4.2")
    assert (status, err.splitlines()[-1]) == (
        2, ("solve: error: argument --trinity-version: takes 0.5, 0.5.0, 0.5.1, 0.5.2, 0.6 or 0.6.0 (or a tag of "
            "one, v0.5.2), got '0.4.2' (rft-solver knows the rules of these releases alone)"))


def test_the_pinned_reference_shards_follow_the_layout_too() -> None:
    # Mixtral on 32 GPUs, 8 to a node, 0.6's fp32 reference pinned by rows, each shard rounded up to a power of two:
    # fused, a GPU's 1 of 8 rows of gate_up_proj (2 x 14336 x 4096 x 4 bytes, 448 MiB: 512) and of down_proj (224 MiB:
    # 256), 768 MiB a layer, 24 GiB over 32 layers, 192 GiB a node; separate, 448 of w1's and w3's 14336 rows and 128
    # of w2's 4096 (7 MiB each: 8), 8 experts x 3 x 8 MiB = 192 MiB a layer, 6 GiB, 48 GiB a node: 144 GiB less.
    fused = host_memory_gib(MIXTRAL, 32, 8, False, "0.6", True, 0, None, "fused")
    separate = host_memory_gib(MIXTRAL, 32, 8, False, "0.6", True, 0, None, "separate")
    assert fused - separate == pytest.approx(144, abs=1e-4)
    # 0.5's bf16 reference as verl 0.7 places it (pinnedplace, s79): fused, gate_up_proj by its 28672 (8 x 896 x 4096
    # x 2 bytes, 56 MiB: 64) and down_proj by its 4096 (28 MiB: 32), 96 MiB a layer, as separate's: the same.
    assert host_memory_gib(MIXTRAL, 32, 8, False, "0.5", True, 0, None, "fused") == host_memory_gib(
        MIXTRAL, 32, 8, False, "0.5", True, 0, None, "separate")
    # The same values either way: 46,702,800,896, its 46,702,792,704 parameters and the query and key norms
    # (2 x 128 x 32) that `weight_shapes` counts as Qwen3's for every model.
    values = {sum(rows * columns * count for rows, columns, count in weight_shapes(MIXTRAL, layout))
              for layout in ("fused", "separate")}
    assert values == {46_702_800_896}


def test_a_cluster_places_mixtral_on_32_a100s_under_0_5_not_0_6(cli: Cli, tmp_path: Path) -> None:
    # Host memory without Offload under 0.5.1 (a bf16 reference pinned): 198.8 GiB a node, shown rounded up; 250
    # holds it. Under 0.5.0 the fused experts placed as verl 0.7 places them (fusedpad, s80) are an even share on the
    # GPUs too, the same plan; under 0.6 whole experts need Offload, its fp32 blocks by rows, which 250 does not hold.
    # (0.5.0 and 0.5.1 load the untied Mixtral on rank 0 alone, verl's rule; 0.5 without its patch, 0.5.2 and 0.6 on
    # A100s load it on every rank, 8 x 174.0 GiB, which 250 does not hold either: s84.)
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: a100s, gpu: a100-80gb, nodes: 4, gpus_per_node: 8, host_ram_gb: 250}\n"
                     f"jobs:\n  - {{name: mix, model_config: {MIXTRAL_CONFIG}, max_model_len: 16384}}\n",
                     encoding="utf-8")
    status, out, err = cli("cluster", str(fleet), "--trinity-version", "0.5.1")
    assert status == 0, err
    assert "│ 0, 1, 2, 3 │ all  │ mix │      32 │       0 │ Env  │         16384 │ 0.03156 │" in out
    assert "│         198.8 │" in out
    assert "mix: 58.8 GiB per GPU predicted, 14.7 GiB to spare (memory model)" in out
    status, out, err = cli("cluster", str(fleet), "--trinity-version", "0.5.0")
    assert status == 0, err
    assert "│ 0, 1, 2, 3 │ all  │ mix │      32 │       0 │ Env  │         16384 │ 0.03156 │" in out
    assert ("│         198.8 │" in out, "mix: 58.8 GiB per GPU predicted, 14.7 GiB to spare (memory model)" in out) == (
        True, True)
    status, out, err = cli("cluster", str(fleet), "--trinity-version", "0.6")
    assert (status, "unplaced jobs: 1 of 1" in out) == (1, True), err
