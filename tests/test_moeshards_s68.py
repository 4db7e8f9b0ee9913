"""A mixture of experts' routed experts sharded whole: transformers 5 (which Trinity 0.6 needs) holds each expert
layer's routed experts as two tensors of a row per expert, which FSDP2 shards by experts, so on a GPU count that does
not divide the experts the fullest GPU holds the rounded-up count of them (its states, and the optimizer step's), and
with Offload every GPU pins that many, each block rounded up to a power of two besides."""

from __future__ import annotations

import json

import pytest

from solver.memory import ADAM_STEP_BYTES, GIB, Setting, features, host_memory_gib, optimizer_step_states_gib
from solver.tables import load_catalog

CATALOG = load_catalog()


def test_qwen3_30b_a3b_offload_on_6_gpus_pins_22_experts_a_gpu_by_hand():
    # Qwen3-30B-A3B: hidden 2048, 48 layers, 32 heads and 4 KV heads of 128, 128 experts of 768, vocab 151936,
    # untied. On 6 GPUs each shard takes ceil(rows / 6) rows; each block is then rounded up to a power of two.
    # fp32 (4 bytes): the two embeddings 25323 x 2048 x 4 -> 2**28, the final norm 342 x 4 -> 2**11; per layer q
    # 683 x 2048 x 4 -> 2**23, k and v 86 x 2048 x 4 -> 2**20, o 342 x 4096 x 4 -> 2**23, two norms -> 2**11,
    # q_norm and k_norm 22 x 4 -> 2**7, the router 22 x 2048 x 4 -> 2**18, and the experts: gate_up_proj 22 x 1536 x
    # 2048 x 4 = 276824064 -> 2**29 and down_proj 22 x 2048 x 768 x 4 -> 2**28 (as 6144 per-expert matrices of 128 rows,
    # 2**20 each, they would take 2**22.58 a layer: a third of it). The reference model's weights: fp32 blocks too on
    # Trinity 0.6; on 0.5, bf16: each block half. And 0.5's verl 0.7 places gate_up_proj by its 1536 and down_proj by
    # its 768, which 6 divides: 128 x 256 x 2048 x 4 -> 2**28 and 128 x 2048 x 128 x 4 -> 2**27 (pinnedplace, s79).
    layer = 2**23 + 2 * 2**20 + 2**23 + 2 * 2**11 + 2 * 2**7 + 2**18 + 2**29 + 2**28
    fp32 = 2 * 2**28 + 2**11 + 48 * layer
    layer_weights = 4096 * 2048 * 2 + 2 * 512 * 2048 + 2 * 2048 + 2 * 128 + 128 * 2048 + 128 * 3 * 768 * 2048
    shapes = 2 * 151936 * 2048 + 2048 + 48 * layer_weights
    scale = 30.5e9 / shapes  # the catalogue's 30.5B, as the shapes' 30.53B
    per_gpu = 3 * fp32 * scale + 8 * 30.5e9 / 6  # + Adam's two fp32 moments, not pinned
    placed = fp32 - 48 * (2**28 + 2**27)
    per_gpu_on_05 = (2 * placed + placed / 2) * scale + 8 * 30.5e9 / 6
    model = CATALOG.model("30B-A3B")
    # Training's moment, the subject here, is the need where rank 0 alone loads the model (verl's rule for this
    # untied model under 0.5.0/0.5.1, 0.6 on a Hopper GPU): its 4 x 30.5e9 bytes at start-up are less.
    assert host_memory_gib(model, 6, 8, loading="rank-0") == pytest.approx(6 * per_gpu / GIB)  # 899.0 GiB
    assert host_memory_gib(model, 6, 8, version="0.5", loading="rank-0") == pytest.approx(
        6 * per_gpu_on_05 / GIB)  # 517.3 GiB
    # On 8 GPUs 16 experts a GPU split evenly (gate_up_proj 16 x 1536 x 2048 x 4 -> 2**28): less than on 6.
    assert (round(host_memory_gib(model, 8, 8, loading="rank-0"), 1) == 681.0
            < round(host_memory_gib(model, 6, 8, loading="rank-0"), 1) == 898.9)
    # With no release named every rank loads it: the 6 ranks' fp32 copies beside both models' pinned fp32 shards
    # (the actor's parameters and the reference model's) at start-up, more than training's moment.
    assert host_memory_gib(model, 6, 8) == pytest.approx((6 * 4 * 30.5e9 + 6 * 2 * fp32 * scale) / GIB)  # 1129.5


def test_solve_memory_says_the_need_on_6_gpus_and_that_no_node_is_assumed_to_hold_it(cli):
    code, out, err = cli("memory", "--model", "30B-A3B", "--gpu", "A100-80GB", "--gpus", "6", "--len", "32768",
                         "--sp", "2", "--env", "--offload", "--json")
    answer = json.loads(out)
    assert (code, err, answer["host_memory_gib"], answer["host_ram_gib"], answer["host_fits"]) == (
        0, "", 1129.6, None, True)  # no --host-ram: nothing rules it out
    # 1129.6: no release named, so every rank of the 6 loads the model at start-up (the test above), beside the
    # pinned shards; training's 899.0 is less.
    assert "host-memory-unchecked" in answer["caution_codes"]
    assert ("Offload needs 1129.6 GiB of host memory per node (188.3 GiB per trainer GPU; at start-up, every rank "
            "loading the model; 899.0 while training), more than the 768 GiB "
            "assumed for its 6 trainer GPUs there (128 GiB per GPU, as servers commonly have") in " ".join(
        answer["cautions"])
    # --host-ram 768 (a node of 6 trainer GPUs at 128 GiB each) is too little: the setting does not train.
    code, out, err = cli("memory", "--model", "30B-A3B", "--gpu", "A100-80GB", "--gpus", "6", "--len", "32768",
                         "--sp", "2", "--env", "--offload", "--host-ram", "768", "--json")
    answer = json.loads(out)
    assert (code, err, answer["host_fits"], answer["trains"]) == (1, "", False, False)


def test_the_fullest_gpu_holds_22_of_qwen3_30b_a3b_s_128_experts_a_layer_on_6_gpus():
    # 48 layers of 128 experts, each a gated MLP of 3 x 2048 x 768 weights. On 6 GPUs, the fullest holds 22 experts
    # a layer: 48 x 22 x 4718592 = 4982833152 expert weights where an even share is 28991029248 / 6 = 4831838208.
    model = CATALOG.model("30B-A3B")
    fullest = 30.5e9 / 6 + 48 * 22 * 3 * 2048 * 768 - 48 * 128 * 3 * 2048 * 768 / 6
    assert features(model, 6, Setting(env=True), 32768)["states"] == pytest.approx(16 * fullest / GIB)  # 77.99
    assert optimizer_step_states_gib(model, 6) == pytest.approx((16 + ADAM_STEP_BYTES) * fullest / GIB)
    # 8 GPUs take 16 experts each, an even share; Offload holds no states on the GPUs.
    assert features(model, 8, Setting(env=True), 32768)["states"] == 16 * 30.5e9 / 8 / GIB
    assert features(model, 6, Setting(env=True, offload=True), 32768)["states"] == 0.0


def test_the_longest_context_on_7_h20s_without_offload_counts_19_experts_a_gpu(cli):
    # 19 of 128 experts a layer on the fullest of 7 GPUs (18.3 an even share): 2.4 GiB more states, and the
    # longest length Env alone trains falls from 5120 to 4096 tokens.
    code, out, err = cli("--model", "30B-A3B", "--gpu", "h20", "--gpus", "7", "--exact", "--maximize", "len",
                         "--no-offload", "--json")
    [answer] = json.loads(out)
    plan = answer["plans"][0]
    assert (code, err, plan["env"], plan["offload"], plan["sp"], plan["gpus"], plan["max_model_len"],
            plan["memory_gb"], plan["headroom_gb"]) == (0, "", True, False, 1, 7, 4096, 85.88, 1.97)
