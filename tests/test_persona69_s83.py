"""A PhD student's two RTX 4090s and one A10 (session 83, helper persona69): Qwen3-0.6B and 1.7B with GRPO, full
and LoRA rank 16. On one GPU in all Trinity runs mode colocate (every release 0.5.0 to 0.6.0: its vLLM engine held
to a quarter of the GPU beside the trainer), which rft-solver does not plan; its one-GPU answer and the configs it
refuses for it now say so and how to plan the trainer's share. The rest checks figures the student relied on."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

import solver
from solver.tables import MEMORY_MODEL_FILE, shipped_tables_directory

COLOCATE = ("Trinity's mode colocate runs the trainer and its vLLM engine on one GPU, the engine taking up to 25% of "
            "it (gpu_memory_utilization), which rft-solver does not plan: plan the trainer on the 75% left, a GPU "
            "type of your own ({}: 75% of nvidia-smi's total, in MiB)")
ONE_A10 = ("--model", "0.6B", "--gpu", "a10", "--gpus", "1", "--maximize", "len")
CONFIG = """\
mode: both
algorithm: {algorithm_type: grpo, repeat_times: 8}
buffer: {batch_size: 16}
model: {model_path: Qwen/Qwen3-1.7B, max_prompt_tokens: 1024, max_response_tokens: 7168, max_model_len: 8192}
cluster: {node_num: 1, gpu_per_node: 2}
explorer: {rollout_model: {engine_num: 1, tensor_parallel_size: 1}}
"""


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_one_gpu_names_trinitys_colocate_mode_in_the_callers_words(cli):
    # Before: "... give the rollout GPUs beside it instead: --gpus 1 --rollout-gpus R" and no more, though Trinity
    # switches a one-GPU Ray cluster to mode colocate by itself (config_validator.py, 0.5.0 to 0.6.0).
    status, out, err = cli(*ONE_A10)
    assert (status, err) == (0, "")
    assert (f"beside it instead: --gpus 1 --rollout-gpus R; or, with one GPU in all, "
            f"{COLOCATE.format('--gpu NAME --gpu-memory SIZE')} max_model_len 7168") in _flat(out)
    status, out, _ = cli(*ONE_A10, "--json")  # the JSON's rollout_kept is as it was
    assert status == 0 and json.loads(out)[0]["rollout_kept"] == {"rollout_gpus": 1, "plan": None,
                                                                  "without_host_ram": None, "without_pins": None}
    text = solver.answers_text(solver.plan("0.6B", gpu="a10", budget_gpus=1, objective="max_len"))
    api_words = COLOCATE.format('solver.described_gpu_type("NAME", memory_mib=SIZE)')
    assert f"budget_gpus=1, rollout_gpus=R; or, with one GPU in all, {api_words}" in _flat(text)
    status, out, _ = cli("--model", "0.6B", "--gpu", "a10", "--gpus", "2", "--maximize", "len")
    assert status == 0 and "colocate" not in out  # two GPUs: one is kept for the rollout, colocate needs one in all


def test_the_colocated_trainers_share_plans_as_the_words_say(cli):
    # 75% of an RTX 4090's 24564 MiB: Qwen3-0.6B's longest context on what its vLLM engine leaves it.
    status, out, _ = cli("--model", "0.6B", "--gpu", "my-4090", "--gpu-memory", "18423MiB", "--gpus", "1",
                         "--maximize", "len", "--json")
    plan = json.loads(out)[0]["plans"][0]
    assert status == 0
    assert (plan["max_model_len"], plan["env"], plan["offload"], plan["evidence"]) == (5120, True, True, "estimated")


def test_configs_refused_for_one_gpu_name_colocate(cli, tmp_path: Path):
    colocated = tmp_path / "colocate.yaml"
    colocated.write_text(CONFIG.replace("mode: both", "mode: colocate"), encoding="utf-8")
    patched = tmp_path / "patched.yaml"
    # s91: where --gpu names one GPU type, the size to give is said (docs/trinity.md's 61440 MiB of an A100-80GB)
    sized = COLOCATE.replace(": 75% of nvidia-smi's total, in MiB", "").format(
        "--gpu NAME --gpu-memory {}MiB: 75% of the {}'s {} MiB")
    on_4090 = sized.format(18423, "RTX-4090-24GB", 24564)
    for gpu, words in (("4090", on_4090), ("A100-80GB", sized.format(61440, "A100-80GB", 81920)),
                       ("h100,h200", COLOCATE.format("--gpu NAME --gpu-memory SIZE"))):
        assert cli("--from-config", str(colocated), "--gpu", gpu, "--write", str(patched)) == (
            2, "", f"solve: error: --from-config {colocated}: {words}; it plans the trainer of mode both or train\n")
    assert not patched.exists()
    one = tmp_path / "one.yaml"
    one.write_text(CONFIG.replace("gpu_per_node: 2", "gpu_per_node: 1"), encoding="utf-8")
    assert cli("--from-config", str(one), "--gpu", "4090") == (
        2, "", (f"solve: error: --from-config {one}: cluster.node_num x cluster.gpu_per_node = 1 GPU: no trainer GPU "
                "is left after 1 rollout GPU (explorer.rollout_model.engine_num x each engine's GPUs): the trainer "
                "takes GPUs of its own beside the rollout's, so the cluster needs 2 GPUs at least, one for each; or, "
                f"with one, {on_4090}\n"))


def test_the_4090_breakdown_is_the_documented_arithmetic(cli):
    # docs/memory.md's terms from the model's shape (facts.md: Qwen3-0.6B, hidden 1024, 28 layers, intermediate
    # 3072, 16 heads of 128, 8 KV heads, vocabulary 151936) and the shipped coefficients, checked by hand:
    # Env + Offload on one RTX 4090 (24564 MiB) at 8192 tokens, 16384 per GPU.
    status, out, _ = cli("memory", "--model", "0.6B", "--gpu", "4090", "--gpus", "1", "--len", "8192", "--env",
                         "--offload", "--json")
    got = json.loads(out)
    shipped = yaml.safe_load((shipped_tables_directory() / MEMORY_MODEL_FILE).read_text(encoding="utf-8"))
    coefficient, gib = shipped["coefficients"], 2 ** 30
    tokens, vocab, hidden, layers, inter = 16384, 151936, 1024, 28, 3072
    layer = hidden * 16 * 128 * 2 + hidden * 8 * 128 * 2 + 3 * hidden * inter + 2 * 128 + 2 * hidden
    expected = {
        "states": 0.0,  # Offload
        "gathered": (4 * vocab * hidden + 10 * layer) * coefficient["gathered"] / gib,
        "checkpoints": 2 * tokens * hidden * layers * coefficient["checkpoints"] / gib,
        "logits": 4 * tokens * vocab * coefficient["logits"] / gib,
        "recompute": 2 * tokens * (hidden + inter) * coefficient["recompute"] / gib,
        "sp_buffers": 0.0, "fragmentation": 0.0, "overhead": 1.0,  # SP 1, Env
    }
    assert status == 0 and got["tokens_per_gpu"] == tokens and got["margin"] == 0.06
    assert got["terms"] == {term: round(value, 4) for term, value in expected.items()}
    usable = 24564 / 1024 * coefficient["usable_env"] * (1 - 0.06)
    assert (got["usable_gib"], got["headroom_gib"]) == (round(usable, 4), round(usable - sum(expected.values()), 4))


def test_what_the_student_typed_wrong(cli, tmp_path: Path):
    status, _, err = cli("--gpu", "rtx4009", "--model", "1.7B", "--len", "8k")
    assert status == 2 and err.startswith("solve: error: unknown GPU 'rtx4009' (did you mean RTX-4090-24GB?); ")
    assert cli("--gpu", "4090", "--model", "1.7B", "--len", "8k", "--gpus", "0") == (
        2, "", ("usage: solve [options] (--help lists them)\n"
                "solve: error: argument --gpus: must be a whole number from 1 to 65536, got 0\n"))
    status, out, _ = cli("--gpu", "4090", "--model", "1.7B", "--len", "32k", "--gpus", "2", "--json")
    assert status == 1 and json.loads(out)[0]["max_model_len"] == 32768  # 32k is 32768, which two 4090s cannot train
    missing = tmp_path / "nope.yaml"
    assert cli("--from-config", str(missing), "--gpu", "4090") == (
        2, "", f"solve: error: --from-config {missing}: cannot read: No such file or directory\n")
