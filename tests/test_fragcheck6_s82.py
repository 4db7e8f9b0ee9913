"""``config_keys_changed``'s ``written_at`` for an alias of an anchored scalar (session 82, fragcheck6).

Loading this session's ``--write`` copies with Trinity's own config code (0.5.1, 0.5.2, 0.6.0) and diffing each
against its config as read found every entry right but two kinds: a role's budget that is an alias of a scalar
anchor (``ppo_max_token_len_per_gpu: *budget`` beside ``max_token_len_per_gpu: &budget 24576``, or the critic's
``forward_max_token_len_per_gpu: *c``) changes where ``--write`` changes the anchor, yet its entry had no
``written_at``: a script editing the config's text would have written the alias out. It now names the anchor's
key (`solver.trinity.patch._place`); a key removed whose value is such an alias (Trinity 0.6's
``trainer.param_offload: *f`` under 0.5) is removed at its own place, with no ``written_at``."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

Cli = Callable[..., tuple[int, str, str]]
HEAD = """\
algorithm: {algorithm_type: ALGORITHM, repeat_times: 8}
buffer: {batch_size: 96}
model: {model_path: Qwen/Qwen3-8B, max_prompt_tokens: 2048, max_response_tokens: 30720, max_model_len: 32768}
cluster: {node_num: 1, gpu_per_node: 8}
explorer: {rollout_model: {engine_num: 2, tensor_parallel_size: 1}}
trainer:
  ulysses_sequence_parallel_size: 2
"""
TRAINER_ALIAS = HEAD.replace("ALGORITHM", "grpo") + """\
  max_token_len_per_gpu: &budget 24576
  trainer_config:
    actor_rollout_ref:
      actor: {ppo_max_token_len_per_gpu: *budget}
      ref: {log_prob_max_token_len_per_gpu: 20000}
      rollout: {log_prob_max_token_len_per_gpu: 8192}
    algorithm: {rollout_correction: {bypass_mode: false}}
"""
"""The actor's budget an alias of the trainer's, below the plan's 32768 (``--token-budget default``); the rollout's
read by the old log-prob recompute, which runs with ``bypass_mode`` false."""
CRITIC_ALIAS = HEAD.replace("ALGORITHM", "ppo") + """\
  max_token_len_per_gpu: 32768
  trainer_config:
    actor_rollout_ref:
      actor: {ppo_max_token_len_per_gpu: 16384}
    critic: {ppo_max_token_len_per_gpu: &c 65536, forward_max_token_len_per_gpu: *c}
"""
"""A PPO critic's value-forward budget an alias of its update's, both above the plan's 32768."""
BUDGET = "trainer.max_token_len_per_gpu"
ROLES = "trainer.trainer_config.actor_rollout_ref"
CRITIC = "trainer.trainer_config.critic"
CASES = {
    "trainer's budget": (TRAINER_ALIAS, ("--token-budget", "default", "--trinity-version", "0.6"), [
        {"key": BUDGET, "config_value": 24576, "plan_value": 32768},
        {"key": f"{ROLES}.actor.ppo_max_token_len_per_gpu", "config_value": 24576, "plan_value": 32768,
         "written_at": BUDGET},
        {"key": f"{ROLES}.ref.log_prob_max_token_len_per_gpu", "config_value": 20000, "plan_value": 32768},
        {"key": f"{ROLES}.rollout.log_prob_max_token_len_per_gpu", "config_value": 8192, "plan_value": 32768}]),
    "critic's budget": (CRITIC_ALIAS, ("--trinity-version", "0.5.2"), [
        *({"key": f"{CRITIC}.model.fsdp_config.{flag}", "config_value": None, "plan_value": False}
          for flag in ("param_offload", "optimizer_offload", "offload_policy")),
        {"key": f"{CRITIC}.ppo_max_token_len_per_gpu", "config_value": 65536, "plan_value": 32768},
        {"key": f"{CRITIC}.forward_max_token_len_per_gpu", "config_value": 65536, "plan_value": 32768,
         "written_at": f"{CRITIC}.ppo_max_token_len_per_gpu"}]),
}
"""Each config, the options it is solved with (8 H20s), and its exact ``config_keys_changed``."""
CRITIC_LINE = ("    critic: {ppo_max_token_len_per_gpu: &c 32768, forward_max_token_len_per_gpu: *c, model: "
               "{fsdp_config: {param_offload: false, optimizer_offload: false, offload_policy: false}}}\n")
WRITTEN_LINES = {"trainer's budget": ("  max_token_len_per_gpu: &budget 32768\n",
                                      "      actor: {ppo_max_token_len_per_gpu: *budget}\n"),
                 "critic's budget": (CRITIC_LINE,)}
"""The lines of each ``--write`` copy that keep the alias, its anchor changed."""


def _flat(mapping: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Each dotted path to a value that is not a mapping in `mapping` (aliases expanded as read)."""
    found: dict[str, Any] = {}
    for key, value in mapping.items():
        if isinstance(value, Mapping):
            found.update(_flat(value, f"{prefix}{key}."))
        else:
            found[f"{prefix}{key}"] = value
    return found


@pytest.mark.parametrize("name", CASES)
def test_an_alias_of_an_anchored_scalar_is_written_at_the_anchor(cli: Cli, tmp_path: Path, name: str) -> None:
    text, options, expected = CASES[name]
    config, written = tmp_path / "c.yaml", tmp_path / "w.yaml"
    config.write_text(text, encoding="utf-8")
    solve = ("--from-config", str(config), "--gpu", "h20", *options)
    status, out, _ = cli(*solve, "--json")
    (answer,) = json.loads(out)
    assert (status, answer["config_keys_changed"]) == (0, expected)
    assert cli(*solve, "--write", str(written))[0] == 0
    copy = written.read_text(encoding="utf-8")
    assert all(line in copy for line in WRITTEN_LINES[name])
    before, after = (_flat(yaml.safe_load(source)) for source in (text, copy))
    assert {entry["key"]: (entry["config_value"], entry["plan_value"]) for entry in expected} == {
        key: (before.get(key), after.get(key)) for key in before.keys() | after.keys()
        if before.get(key) != after.get(key)}


def test_a_removed_key_whose_value_is_an_alias_is_removed_at_its_own_place(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("algorithm: {algorithm_type: grpo, repeat_times: 8}\nbuffer: {batch_size: 96}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\n"
                      "model: {model_path: Qwen/Qwen3-8B, max_model_len: 16384}\n"
                      "explorer: {rollout_model: {engine_num: 4, tensor_parallel_size: 1, enforce_eager: &f false}}\n"
                      "trainer: {ulysses_sequence_parallel_size: 1, param_offload: *f, balance_batch: *f}\n",
                      encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--trinity-version", "0.5", "--json")
    (answer,) = json.loads(out)
    assert (status, answer["config_keys_changed"]) == (0, [
        {"key": "trainer.ulysses_sequence_parallel_size", "config_value": 1, "plan_value": 2},
        {"key": BUDGET, "config_value": None, "plan_value": 16384},
        {"key": "trainer.param_offload", "config_value": False, "plan_value": None, "removed": True},
        {"key": "trainer.balance_batch", "config_value": False, "plan_value": None, "removed": True}])
