"""A small Trinity config that trains on H100 80GB with nothing said of it, changed one key at a time, and what
``solve --from-config`` says of it: shared by the tests of the reader's lines on nulls and on keys a release lacks; and
the ``cluster`` and ``explorer`` of one 8-GPU node that the tests' configs written as YAML text share
(`one_node_rollout`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

BASE = {"model": {"model_path": "Qwen/Qwen3-8B", "max_model_len": 8192, "max_prompt_tokens": 2048,
                  "max_response_tokens": 6144},
        "algorithm": {"algorithm_type": "grpo", "repeat_times": 8}, "cluster": {"node_num": 1, "gpu_per_node": 8},
        "buffer": {"batch_size": 7, "train_batch_size": 56}, "explorer": {"rollout_model": {"engine_num": 4}},
        "trainer": {"trainer_strategy": "fsdp"}}
"""Qwen3-8B at 8192 tokens on 4 trainer GPUs of 8 (it trains there, and on 7 where ``engine_num`` is unset: they
divide the train batch of 56); every key a test makes null is given or derived from others."""
ARR = "trainer.trainer_config.actor_rollout_ref"


def one_node_rollout(engines: int, tensor_parallel_size: int | None = 1) -> str:
    """A Trinity config's ``cluster`` (one node of 8 GPUs) and ``explorer`` (`engines` rollout engines of
    `tensor_parallel_size` GPUs each; None: that key left out), as the YAML text of a test's config holds them."""
    engine = "" if tensor_parallel_size is None else f"    tensor_parallel_size: {tensor_parallel_size}\n"
    return ("cluster:\n  node_num: 1\n  gpu_per_node: 8\nexplorer:\n  rollout_model:\n"
            f"    engine_num: {engines}\n{engine}")

def with_key(key: str, value: Any, base: dict[str, Any] | None = None) -> dict[str, Any]:
    """`base` (`BASE`) with `key` (dotted) set to `value`."""
    config: dict[str, Any] = json.loads(json.dumps(base or BASE))
    *sections, name = key.split(".")
    node = config
    for section in sections:
        node = node.setdefault(section, {})
    node[name] = value
    return config


def written(tmp_path: Path, config: dict[str, Any]) -> Path:
    """`config` written out as YAML in `tmp_path`."""
    path = tmp_path / "trinity.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def config_lines(cli: Any, config: Path, starting: str, *flags: str) -> tuple[list[tuple[str, str]], bool, int]:
    """`--from-config`'s lines (code, words) on H100 80GB that start with `starting`, whether the config is refused,
    and the exit status of the same with ``--check``."""
    status, out, err = cli("--from-config", str(config), "--gpu", "h100", "--json", *flags)
    assert status == 0, err
    current = json.loads(out)[0]["current"]
    lines = [(code, words) for code, words in zip(current["config_problem_codes"], current["config_problems"],
                                                  strict=True) if words.startswith(starting)]
    return lines, current["refused"], cli("--from-config", str(config), "--gpu", "h100", "--check", *flags)[0]
