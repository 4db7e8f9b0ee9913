"""Session 53's review as a team with two nodes of 8 H100s (1 TB of host memory each): what it found and fixed."""

from __future__ import annotations

from pathlib import Path

import yaml

MEMORY_32B_16 = ("memory", "--model", "32B", "--gpu", "h100", "--gpus", "16", "--len", "65536", "--sp", "8", "--env",
                 "--trinity-version", "0.6")
"""Under Trinity 0.6, which loads the untied model on rank 0 alone on H100s: with no release named each of a node's 8
ranks loads it (s84), 1046 GiB and more."""


def test_solve_memory_verdict_names_the_gpus_where_the_host_memory_rules_the_setting_out(cli):
    # Qwen3-32B with Env + SP=8 on two nodes of 8 H100s fits the GPUs (7.57 GiB to spare), but loading it takes
    # 192.1 GiB of a node's host memory (122.1 for the fp32 model, beside the node's half of the reference model's fp32
    # shards): with --host-ram 180GB it does not train, and the verdict must not read "fits" bare above the host line
    # that says so.
    status, out, _ = cli(*MEMORY_32B_16, "--host-ram", "180")
    flat = " ".join(out.split())
    assert status == 1
    assert ("fits the GPUs' memory (estimated; the host memory below rules it out): 7.57 GiB to spare of the usable "
            "memory") in flat
    assert ("192.1 GiB per node while the model loads (verl reads it in fp32 before FSDP shards it, beside the "
            "reference model's pinned shards; here rank 0 loading the model); more than --host-ram 180 GiB: it does not "
            "train there") in flat
    # Where the host memory holds it, or is not given, the verdict is the plain one.
    for host in (("--host-ram", "1024"), ()):
        status, out, _ = cli(*MEMORY_32B_16, *host)
        flat = " ".join(out.split())
        assert status == 0 and "fits (estimated): 7.57 GiB to spare of the usable memory" in flat
        assert "rules it out" not in flat


TWO_H100_NODES = {"name": "h100", "gpu": "H100-80GB", "nodes": 2, "gpus_per_node": 8, "host_ram_gb": 1024}


def test_cluster_emit_dir_notes_rollout_engines_as_solve_emit_does(cli, tmp_path: Path):
    # Qwen3-32B at 65536 with 2 rollout GPUs: engines of 2 GPUs, whose weights and one sequence's KV cache take
    # more than half of what vLLM takes of an H100. `solve --emit trinity` says so; the fleet's --emit-dir writes the
    # same engines and must say so too, naming the job. Qwen3-8B at 32768 on one rollout GPU needs no note.
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(yaml.safe_dump({"pools": [TWO_H100_NODES], "jobs": [
        {"name": "qwen32b", "model": "Qwen3-32B", "max_model_len": 65536, "rollout_gpus": 2},
        {"name": "qwen8b", "model": "Qwen3-8B", "max_model_len": 32768, "rollout_gpus": 1}]}))
    status, _, err = cli("cluster", str(fleet), "--emit-dir", str(tmp_path / "configs"))
    written = yaml.safe_load((tmp_path / "configs" / "qwen32b.yaml").read_text())
    assert status == 0 and written["explorer"]["rollout_model"]["tensor_parallel_size"] == 2
    _, _, solve_err = cli("--model", "32B", "--gpu", "h100", "--gpus", "4", "--exact", "--len", "65536",
                          "--rollout-gpus", "2", "--host-ram", "1024", "--emit", "trinity")
    said = next(line for line in solve_err.splitlines() if "tensor-parallel size 2" in line)
    assert said.startswith("solve: note: Qwen3-32B's bf16 weights (30.5 GiB) and one sequence's KV cache (8.0 GiB)")
    notes = [line for line in err.splitlines() if "tensor-parallel" in line]
    assert notes == [said.replace("solve: note: ", "solve cluster: note: qwen32b: ")]
    # Without --emit-dir no config sizes engines, and nothing is said of them.
    assert "tensor-parallel" not in cli("cluster", str(fleet))[2]
