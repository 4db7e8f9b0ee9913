"""A team's Trinity 0.5.2 PPO config moved to 0.6.0 (persona70, s83): Qwen3-30B-A3B at 65536 tokens on 4 of 8 H200s,
its critic offloaded by ``critic.model.fsdp_config`` alone, as 0.5.2 reads it. On 0.6.0 verl 0.8 or later reads the
critic's engine (``critic.fsdp``, else the flags under ``trainer``), which the config leaves resident: the check counts
the more held, finds no plan and writes no file. The critic's note now names the way on: ``--critic offloaded`` counts
it as verl before 0.8 reads it, and ``--write`` then sets both readings' flags, so the written file checks as it was
planned (the critic's 524.36 GiB of host memory; 1129.8 GiB a node under 0.5.2, 1205.4 under 0.6.0)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from solver.rules import COMMAND_OPTIONS
from solver.trinity import read_trinity_config

Cli = Callable[..., tuple[int, str, str]]

PPO_052 = """\
algorithm: {algorithm_type: ppo}
model: {model_path: Qwen/Qwen3-30B-A3B, max_model_len: &len 65536,
        rope_scaling: {rope_type: yarn, factor: 1.6, original_max_position_embeddings: 40960, rope_theta: 1000000}}
cluster: {node_num: 1, gpu_per_node: 8}
explorer: {rollout_model: {engine_num: 2, tensor_parallel_size: 2, max_model_len: *len}}
trainer:
  trainer_strategy: fsdp2
  ulysses_sequence_parallel_size: &sp 4
  max_token_len_per_gpu: &tok 32768
  trainer_config:
    actor_rollout_ref:
      actor:
        ppo_max_token_len_per_gpu: *tok
        fsdp_config: &offload {param_offload: true, optimizer_offload: true, offload_policy: true}
      ref: {log_prob_max_token_len_per_gpu: *tok, fsdp_config: *offload}
    critic:
      ppo_max_token_len_per_gpu: *tok
      ulysses_sequence_parallel_size: *sp
      model: {fsdp_config: *offload}
"""
"""The team's 0.5.2 config, shortened: its critic offloaded by its own fsdp_config, the budgets shared by anchors."""

DIFFER = ("the verdict and the plans count its states by the more held on the GPUs of two readings, verl before 0.8's "
          "of its own critic.model.fsdp_config (offloaded) and verl 0.8 or later's of critic.fsdp, else the trainer's "
          "(resident): resident (on the GPUs throughout), and its own update as a second peak; --critic none counts "
          "the actor alone; --critic offloaded counts it as verl before 0.8 reads it, and --write then sets both "
          "readings' flags to that")


def run_json(cli: Cli, path: Path, *flags: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    status, out, _ = cli("--from-config", str(path), "--gpu", "h200", "--host-ram", "2TB", *flags, "--json")
    return status, json.loads(out)[0]


def test_on_060_the_critics_note_names_the_critic_value_and_write_that_make_the_readings_agree() -> None:
    config = read_trinity_config(PPO_052, "ppo.yaml", {}, "0.6", COMMAND_OPTIONS)
    (note,) = [words for words, code in zip(config.notes, config.note_codes, strict=True)
               if code.value == "critic-trained"]
    assert note == ("algorithm.algorithm_type ppo trains a critic model beside the actor on the same trainer GPUs; "
                    + DIFFER)
    # The API's words name its keyword and its function.
    assert read_trinity_config(PPO_052, "ppo.yaml", {}, "0.6").notes[-1].endswith(
        'critic="none" counts the actor alone; critic="offloaded" counts it as verl before 0.8 reads it, and '
        "solver.trinity.patch_trinity_config then sets both readings' flags to that")
    # Under 0.5.2 there is one reading, and nothing to make agree.
    assert read_trinity_config(PPO_052, "ppo.yaml", {}, "0.5", COMMAND_OPTIONS).notes[-1].endswith(
        "as its own critic.model.fsdp_config holds them: offloaded (offload_policy under fsdp2: in host memory "
        "throughout), and its own update as a second peak; --critic none counts the actor alone")


def test_the_052_config_plans_on_052_but_not_on_060_where_it_reads_resident(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "ppo.yaml"
    path.write_text(PPO_052, encoding="utf-8")
    status, answer = run_json(cli, path, "--trinity-version", "0.5.2")
    plan = answer["plans"][0]
    assert (status, answer["critic"], plan["sp"], plan["host_memory_gb"], plan["host_critic_gb"]) == (
        0, "offloaded", 2, 1129.8, 524.36)
    status, answer = run_json(cli, path, "--trinity-version", "0.6.0")
    assert (status, answer["critic"], answer["status"], answer["plans"]) == (1, "resident", "infeasible", [])
    assert any(DIFFER in words for words in answer["current"]["config_problems"])
    status, _, err = cli("--from-config", str(path), "--gpu", "h200", "--trinity-version", "0.6.0",
                         "--write", str(tmp_path / "out.yaml"))
    assert (status, (tmp_path / "out.yaml").exists()) == (1, False)
    assert err == f"solve: note: no plan, so {tmp_path / 'out.yaml'} is not written\n"


def test_following_the_note_writes_a_060_file_that_checks_offloaded_without_the_flag(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, written = tmp_path / "ppo.yaml", tmp_path / "ppo-060.yaml"
    path.write_text(PPO_052, encoding="utf-8")
    status, _, err = cli("--from-config", str(path), "--gpu", "h200", "--host-ram", "2TB", "--trinity-version",
                         "0.6.0", "--critic", "offloaded", "--write", str(written))
    assert status == 0, err
    text = written.read_text(encoding="utf-8")
    assert ("      fsdp:\n        param_offload: true\n        optimizer_offload: true\n"
            "        offload_policy: true\n") in text
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    status, answer = run_json(cli, written, "--trinity-version", "0.6.0", "--check")
    assert (status, answer["critic"], answer["current"]["trains"]) == (0, "offloaded", True)
    assert answer["plans"][0]["host_memory_gb"] == 1205.4
    assert any("as both readings hold them" in words for words in answer["current"]["config_problems"])
