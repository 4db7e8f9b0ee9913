"""persona54's GRPO on Qwen3-14B with Trinity 0.6.0 on a node of 8 H20s, 4 of them the trainer's (s79): a LoRA config
whose ``target_modules`` regex adapts q_proj, k_proj, v_proj and o_proj has its note say the adapter is counted on
those alone, not also "on every linear layer but the output projection" (``lm_head``), which read beside o_proj
seemed to leave the attention's output projection out; an ``all-linear`` adapter's note keeps those words. On
Qwen3-30B-A3B such a regex leaves PEFT's ``target_parameters`` an empty set (no router, no routed expert), which the
``lora-moe-config-unsaved`` line now says, in place of "a set for the routed experts"."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

Cli = Callable[..., tuple[int, str, str]]

CONFIG = """\
project: qwen3-14b-grpo
name: math-64k-lora
mode: both
algorithm:
  algorithm_type: grpo
  repeat_times: 8
model:
  model_path: Qwen/Qwen3-14B
  max_prompt_tokens: 2048
  max_response_tokens: 63488
  max_model_len: 65536
  rope_scaling: {rope_type: yarn, factor: 1.6, original_max_position_embeddings: 40960, rope_theta: 1000000}
  lora_configs:
    - lora_rank: 64
      lora_alpha: 128
%s
cluster:
  node_num: 1
  gpu_per_node: 8
buffer:
  batch_size: 64
explorer:
  rollout_model:
    engine_num: 2
    tensor_parallel_size: 2
trainer:
  ulysses_sequence_parallel_size: 4
"""
HEAD = ("with LoRA (model.lora_configs) the trainer holds gradients and optimizer states for the adapter alone: the "
        "verdict and the plans count LoRA rank 64's states (the frozen base's fp32 weights and the adapter's")
TAIL = "), and the tables, which measured full fine-tuning, vouch for it by inference and refute nothing"


def _check(cli: Cli, tmp_path: Path, targets: str) -> tuple[int, dict[str, Any], str]:
    config = tmp_path / "grpo-14b-lora64k.yaml"
    config.write_text(CONFIG % targets)
    status, out, _ = cli("--from-config", str(config), "--check", "--gpu", "h20", "--json")
    (answer,) = json.loads(out)
    (line,) = [words for code, words in zip(answer["current"]["config_problem_codes"],
                                            answer["current"]["config_problems"], strict=True)
               if code == "lora-counted-as-full"]
    return status, answer, line


def test_a_regex_on_the_attention_alone_is_said_on_those_modules_alone(cli: Cli, tmp_path: Path) -> None:
    # Before: "... the adapter's on every linear layer but the output projection, unless --lora-rank gives another;
    # its target_modules ... matches q_proj, k_proj, v_proj and o_proj alone, on which alone its adapter is counted".
    status, answer, line = _check(cli, tmp_path, "      target_modules: '.*\\.(q_proj|k_proj|v_proj|o_proj)'")
    assert line == (
        f"{HEAD}, unless --lora-rank gives another; its target_modules '.*\\.(q_proj|k_proj|v_proj|o_proj)' matches "
        f"q_proj, k_proj, v_proj and o_proj alone, on which alone its adapter is counted{TAIL}")
    # Env unset in the test's environment: the config's SP=4 trains (estimated, 74.0 GiB: --check passes); the
    # plan shown keeps Env on, as the planner's estimates do, not Offload (the tables' best, at twice the cost).
    (plan,) = answer["plans"]
    assert (status, answer["lora_rank"]) == (0, 64)
    assert (plan["env"], plan["offload"], plan["sp"], plan["evidence"], plan["memory_gb"]) == (
        True, False, 4, "estimated", 67.64)


def test_an_all_linear_adapter_keeps_every_linear_layer_but_the_output_projection(cli: Cli, tmp_path: Path) -> None:
    _, _, line = _check(cli, tmp_path, "      target_modules: all-linear")
    assert line == (f"{HEAD} on every linear layer but the output projection, unless --lora-rank gives another{TAIL}")


def _moe_unsaved(cli: Cli, tmp_path: Path, targets: str) -> str:
    config = tmp_path / "grpo-30b-a3b-lora.yaml"
    config.write_text((CONFIG % targets).replace("Qwen/Qwen3-14B", "Qwen/Qwen3-30B-A3B"))
    _, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--json")
    (answer,) = json.loads(out)
    (line,) = [words for code, words in zip(answer["current"]["config_problem_codes"],
                                            answer["current"]["config_problems"], strict=True)
               if code == "lora-moe-config-unsaved"]
    return str(line)


def test_an_attention_regex_on_a_mixture_of_experts_leaves_an_empty_set_unsaved(cli: Cli, tmp_path: Path) -> None:
    # Before: "makes the adapter's target_parameters a set for the routed experts", which this adapter leaves alone
    # (peft 0.21.2's _convert_peft_config_moe maps no attention name: target_parameters = set(), which json.dump
    # refuses all the same).
    assert _moe_unsaved(cli, tmp_path, "      target_modules: '.*\\.(q_proj|k_proj|v_proj|o_proj)'") == (
        "model.lora_configs trains LoRA on Qwen3-30B-A3B, a mixture of experts: with transformers 5 (Trinity 0.6 "
        "requires 5.12.1 or later) peft 0.21.2 makes the adapter's target_parameters a set (an empty one here: its "
        "target_modules name neither the router nor a routed expert), which Trinity's _save_lora cannot write as JSON; "
        "it logs the error and leaves each checkpoint's lora_adapter/adapter_config.json cut short at "
        "\"target_parameters\": (its target_modules, a set of module names by then, are not saved split; peft made "
        "that set of '.*\\.(q_proj|k_proj|v_proj|o_proj)': q_proj, k_proj, v_proj, o_proj, which it adapts in every "
        "layer, whatever layers the regular expression names), so the explorer's vLLM fails to reload the adapter at "
        "the first weight sync (json.load), and so does any later load of it: train Qwen3-30B-A3B without LoRA (drop "
        "model.lora_configs), or patch Trinity's _save_lora to write target_parameters as a list before the run")


@pytest.mark.parametrize("targets", ["'.*\\.(q_proj|gate)'", "'.*experts\\.(gate_proj|up_proj)'", "all-linear"])
def test_a_regex_naming_the_router_or_an_expert_keeps_the_routed_experts(cli: Cli, tmp_path: Path,
                                                                         targets: str) -> None:
    line = _moe_unsaved(cli, tmp_path, f"      target_modules: {targets}")
    assert "makes the adapter's target_parameters a set for the routed experts, which Trinity's" in line
