"""Persona64 (s82): Qwen3-32B and Qwen3-14B at 65536 and 131072 tokens on two nodes of 8 H800s with 1 TiB of host
memory each. The figures checked by hand from first principles (the pinned host blocks of Offload, the activations'
physical floor per token), the cost said to be relative to the model's own vanilla step, and the rule that keeps an
SP group inside a node said to be rft-solver's, not Trinity's or verl's (which run SP across nodes)."""

import json
from collections.abc import Callable
from math import ceil
from pathlib import Path

import solver
from solver.render import COST_NOTE

Cli = Callable[..., tuple[int, str, str]]

GIB = 1 << 30
OWNER = ("rft-solver's rule, not Trinity's or verl's, which run it with its all-to-all crossing nodes; the tables "
         "measured SP within one node")


def pinned_block(size: int) -> int:
    """PyTorch's pinned-memory allocator's block for `size` bytes: the next power of two."""
    return 1 << (size - 1).bit_length()


def offload_host_gib(hidden: int, layers: int, intermediate: int, heads: int, gpus: int) -> float:
    """A node's Offload need for a Qwen3 dense model (untied, vocab 151936, 8 KV heads of 128) on `gpus` GPUs of it,
    by hand: each fp32 tensor sharded by rows over the GPUs and pinned in a power-of-two block, three times (the
    actor's parameters and gradients, Trinity 0.6's fp32 reference model), and Adam's two moments, 8 bytes a
    parameter, not pinned."""
    vocab, head_dim, kv_heads = 151936, 128, 8
    layer = [(heads * head_dim, hidden), (kv_heads * head_dim, hidden), (kv_heads * head_dim, hidden),
             (hidden, heads * head_dim), (intermediate, hidden), (intermediate, hidden), (hidden, intermediate),
             (hidden, 1), (hidden, 1), (head_dim, 1), (head_dim, 1)]
    tensors = layer * layers + [(vocab, hidden), (vocab, hidden), (hidden, 1)]
    parameters = sum(rows * cols for rows, cols in tensors)
    pinned = gpus * sum(pinned_block(ceil(rows / gpus) * cols * 4) for rows, cols in tensors)
    return (3 * pinned + 8 * parameters) / GIB


def test_offload_host_memory_per_node_is_the_pinned_blocks_counted_by_hand():
    # Under Trinity 0.6, which loads the model on rank 0 alone on H800s: training's need is the node's then (s84: with
    # no release named each rank loads the untied model, 122.0 GiB for the 32B, which start-up's need is then).
    by_hand = {("32B", 8): offload_host_gib(5120, 64, 25600, 64, 8),  # 664.11
               ("14B", 4): offload_host_gib(5120, 40, 17408, 40, 4),  # 351.54
               ("14B", 6): offload_host_gib(5120, 40, 17408, 40, 6)}  # 313.66
    for (model, gpus), need in by_hand.items():
        estimate = solver.estimate_memory(model, "h800", gpus, 65536, sp=gpus if gpus != 6 else 2, env=True,
                                          offload=True, trinity_version="0.6")
        assert estimate.host_memory_gib == ceil(need * 10) / 10, (model, gpus, need)
    assert [round(need, 2) for need in by_hand.values()] == [664.11, 351.54, 313.66]
    # All within a node of 1 TiB, which checks them: the 32B's need leaves 359.8 GiB of it for Ray and the rollout.
    [answer] = solver.plan("32B", gpu="h800", budget_gpus=16, max_model_len=131072, objective="min_gpus",
                           host_ram_gb=1024, trinity_version="0.6")
    best = answer.best
    assert best is not None and (best.gpus, best.sp, best.host_memory_gb) == (8, 8, 664.2)


def test_qwen3_32b_activations_sit_on_the_physical_floor_per_token():
    # 32768 tokens per GPU (131072 at SP=8): a bf16 hidden state per layer and the final norm's, 2 x 5120 x 65 bytes,
    # and the logits' 7 bytes each of 151936: 1729152 bytes a token, 52.77 GiB, which binds over the fit's terms.
    estimate = solver.estimate_memory("32B", "h800", 8, 131072, sp=8, env=True, offload=True)
    terms = estimate.terms
    floor = 32768 * (2 * 5120 * 65 + 7 * 151936) / GIB
    assert round(floor, 2) == 52.77
    assert abs(terms["checkpoints"] + terms["logits"] + terms["recompute"] - floor) < 1e-9
    # Trinity 0.6's own check (verl before 0.8) counts 58.3 GiB of activations there, within its 90% with Env.
    trinity = (2 * 32768 * 5120 * (64 + 4) + 8 * 32768 * 151936) / GIB
    assert round(trinity, 1) == 58.3 and trinity < 0.9 * estimate.memory_gib
    assert (round(estimate.total_gib, 2), estimate.terms["states"]) == (61.63, 0.0)


def test_cost_is_said_to_be_relative_to_the_models_own_vanilla_step(cli: Cli, tmp_path: Path):
    assert COST_NOTE == ("cost: the job's relative step time, as solve gives its plan (compare within one model and "
                         "GPU type: 1 is its own model's vanilla step on one GPU)")
    # Same settings on 8 H800s, same cost whatever the model's size; a mixture of experts' Offload weighs 9.18 times.
    plans = {model: solver.plan(model, gpu="h800", budget_gpus=8, max_model_len=131072, exact=True)[0].best
             for model in ("14B", "32B", "30B-A3B")}
    assert {model: (plan.env, plan.offload, plan.sp, round(plan.cost, 4))
            for model, plan in plans.items() if plan} == {
        "14B": (True, True, 8, 0.4293), "32B": (True, True, 8, 0.4293), "30B-A3B": (True, True, 8, 2.1858)}
    schema = json.loads((Path(__file__).parents[1] / "docs" / "schema" / "solve.json").read_text(encoding="utf-8"))
    assert schema["$defs"]["Plan"]["properties"]["cost"]["description"] == (
        "the relative step time (lower is faster): it counts the trainer GPUs and the settings, not the model's size "
        "or the GPU type's speed (1 is the model's vanilla step on one GPU), so compare within one model and GPU type")
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: h800, gpu: H800-80GB, nodes: 1, gpus_per_node: 8, host_ram_gb: 1TiB}\n"
                     "jobs:\n  - {name: a32, model: Qwen3-32B, max_model_len: 65536, rollout_gpus: 0}\n"
                     "  - {name: b14, model: Qwen3-14B, max_model_len: 65536, rollout_gpus: 0}\n", encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet), "--trinity-version", "0.6")  # both placed: rank 0 loading on H800s
    assert status == 0 and COST_NOTE in out.splitlines()


def test_sp_across_nodes_is_refused_as_rft_solvers_own_rule(cli: Cli, tmp_path: Path):
    flags = ("--model", "32B", "--gpu", "h800", "--len", "131072", "--gpus", "16", "--sp", "16")
    assert cli(*flags) == (2, "", (
        f"solve: error: --sp 16 is not allowed: SP=16 is more GPUs than nodes of 8 (--node-gpus) hold, and an SP "
        f"group must fit in one: {OWNER} (the degrees that Qwen3-32B's heads allow and that keep an SP group in a "
        f"node of 8 GPUs: 1, 2, 4, 8)\n"))
    assert cli(*flags, "--exact")[2] == (
        f"solve: error: --sp 16 is not allowed: 16 GPUs span nodes of 8 (--node-gpus), and SP=16 does not divide a "
        f"node: {OWNER} (the degrees that divide the 16 trainer GPUs, that Qwen3-32B's heads allow and that keep an "
        f"SP group in a node of 8 GPUs: 1, 2, 4, 8)\n")
    [answer] = solver.plan("32B", gpu="h800", budget_gpus=16, objective="max_len", explain=True)
    assert [reason.detail for reason in answer.explanation or () if reason.rule == "sp_within_node"] == [
        (f"a trainer on 16 GPUs spans nodes of 8 GPUs and each SP group must fit in one ({OWNER}): that rules out "
         f"SP=16")] * 2  # why this plan, and why none longer
    # A config Trinity 0.6 would start (SP=16 divides the 16 GPUs, the 64 heads, and the 8 KV heads divide it):
    # the check still says it does not train here, and now whose rule it breaks.
    config = tmp_path / "sp16.yaml"
    config.write_text("mode: train\nmodel: {model_path: Qwen/Qwen3-32B, max_model_len: 131072, rope_scaling: "
                      "{rope_type: yarn, factor: 3.2, original_max_position_embeddings: 40960}}\n"
                      "cluster: {node_num: 2, gpu_per_node: 8}\nalgorithm: {algorithm_type: grpo}\n"
                      "buffer: {batch_size: 32, train_batch_size: 256}\n"
                      "trainer: {trainer_strategy: fsdp2, ulysses_sequence_parallel_size: 16, param_offload: true, "
                      "optimizer_offload: true, offload_policy: true}\n", encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--check", "--gpu", "h800", "--json")
    [answer] = json.loads(out)
    verdict = answer["current"]
    assert status == 1 and verdict["broken_rule"] == (
        f"16 GPUs span nodes of 8 (cluster.gpu_per_node), and SP=16 does not divide a node: {OWNER}")
    assert verdict["broken_rule_code"] == "sp-within-node"
