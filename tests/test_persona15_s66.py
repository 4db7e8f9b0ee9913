"""Persona testing, session 66 (helper persona15): what a capacity planner, a pre-commit hook's author and a user
on hardware beyond the tables tripped on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

# Qwen3-4B with Env + Offload + SP=4 on 4 of 6 A100s at 110592 tokens: the memory model fits it (0.6 GiB to spare),
# but the A100-80GB table for 4 GPUs says '-' at 112640, the row 110592 falls to (what `solve cluster --estimate`
# places and its --emit-dir config's check command then judges).
OFFLOADED_4B = """\
mode: both
algorithm: {algorithm_type: grpo, repeat_times: 8}
buffer: {batch_size: 32}
model:
  model_path: Qwen/Qwen3-4B
  max_model_len: LENGTH
  rope_scaling: {rope_type: yarn, factor: FACTOR, original_max_position_embeddings: 40960}
cluster: {node_num: 1, gpu_per_node: 6}
explorer:
  rollout_model: {engine_num: 2, tensor_parallel_size: 1}
trainer:
  trainer_strategy: fsdp2
  ulysses_sequence_parallel_size: 4
  trainer_config:
    actor_rollout_ref:
      actor: {fsdp_config: {param_offload: true, optimizer_offload: true, offload_policy: true}}
      ref: {fsdp_config: {param_offload: true, optimizer_offload: true, offload_policy: true}}
"""


def _config(tmp_path: Path, length: int, factor: str) -> Path:
    path = tmp_path / "trinity.yaml"
    path.write_text(OFFLOADED_4B.replace("LENGTH", str(length)).replace("FACTOR", factor), encoding="utf-8")
    return path


def test_check_with_estimate_fails_a_setting_the_tables_say_ran_out_of_memory(cli, tmp_path, monkeypatch):
    # Before, the verdict said "it trains (estimated ...)" and --check exited 0, while the tables line under the
    # same plan said it runs out of memory and that the table decides.
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    config = _config(tmp_path, 110592, "2.7")
    status, out, err = cli("--from-config", str(config), "--check", "--gpu", "A100-80GB", "--estimate", "--json")
    assert status == 1, err
    current = json.loads(out)[0]["current"]
    assert current["trains"] is False and current["plan"] is None
    assert current["out_of_memory"] == {"model": "Qwen3-4B", "gpus": 4, "max_model_len": 112640, "setting": "-"}
    status, out, _ = cli("--from-config", str(config), "--check", "--gpu", "A100-80GB", "--estimate")
    assert status == 1
    assert ("trinity.yaml runs Env + Offload + SP=4 on 4 trainer GPUs at 110592 tokens (Env on, read from this "
            "shell's PYTORCH_CUDA_ALLOC_CONF): the A100-80GB table for 4 GPUs says '-' at 112640, so Env + Offload + "
            "SP=4 ran out of memory there.") in " ".join(out.split())


def test_check_with_estimate_still_passes_a_setting_the_tables_do_not_refute(cli, tmp_path, monkeypatch):
    # At the table's own 102400 the same setting is documented: --estimate judges it by the estimates, and it trains.
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    config = _config(tmp_path, 102400, "2.5")
    status, out, err = cli("--from-config", str(config), "--check", "--gpu", "A100-80GB", "--estimate", "--json")
    assert status == 0, err
    current = json.loads(out)[0]["current"]
    assert current["trains"] is True and current["plan"]["evidence"] == "estimated"
    assert current["out_of_memory"] is None


@pytest.mark.parametrize("flags", [(), ("--no-estimate",)])
def test_check_without_estimate_is_unchanged_where_the_tables_refute(cli, tmp_path, monkeypatch, flags):
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    status, out, _ = cli("--from-config", str(_config(tmp_path, 110592, "2.7")), "--check", "--gpu", "A100-80GB",
                         "--json", *flags)
    assert status == 1
    current = json.loads(out)[0]["current"]
    assert current["trains"] is False and current["out_of_memory"]["max_model_len"] == 112640


def test_cluster_estimate_places_past_a_refuting_cell_and_its_configs_check_says_so(cli, tmp_path, monkeypatch):
    # docs/cluster.md: --estimate places by the estimates alone, with no tables line; the --emit-dir config's check
    # command passes --estimate, and the check then follows the table that says the setting ran out of memory.
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: a100, gpu: A100-80GB, nodes: 1, gpus_per_node: 6}\n"
                     "jobs:\n  - {name: q4, model: 4B, max_model_len: {at_least: 65536}, rollout_gpus: 2}\n",
                     encoding="utf-8")
    status, _, err = cli("cluster", str(fleet), "--estimate", "--no-widen", "--emit-dir", str(tmp_path / "configs"))
    assert status == 0, err
    fragment = (tmp_path / "configs" / "q4.yaml").read_text(encoding="utf-8")
    plan = "# plan: Env + Offload + SP=4 on 4 A100-80GB trainer GPUs (2 for rollout), max_model_len 110592\n"
    assert plan in fragment
    assert ("#   PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True solve --from-config CONFIG --check --gpu A100-80GB "
            "--estimate --critic none\n") in fragment  # the plan counted no critic (s74)
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    status, _, _ = cli("--from-config", str(_config(tmp_path, 110592, "2.7")), "--check", "--gpu", "A100-80GB",
                       "--estimate")
    assert status == 1


def test_check_with_estimate_follows_a_larger_gpu_types_refuting_cell_as_the_tables_line_does(cli, tmp_path,
                                                                                              monkeypatch):
    # An H100 (79.6 GiB) borrows the A100-80GB's refutations: the plan's tables line cites that cell, and so does
    # the verdict now, which said "it trains (estimated ...)" before.
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    config = _config(tmp_path, 109568, "2.675")
    status, out, err = cli("--from-config", str(config), "--check", "--gpu", "H100-80GB", "--estimate", "--json")
    assert status == 1, err
    answer = json.loads(out)[0]
    assert answer["current"]["trains"] is False
    assert answer["current"]["out_of_memory"] == answer["tables"]["source"] == {
        "model": "Qwen3-4B", "gpus": 4, "max_model_len": 112640, "setting": "-", "gpu": "A100-80GB"}
