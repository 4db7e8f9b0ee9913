"""An allocator variable in ``explorer.env_vars`` reaches the rollout's workflow runners alone, not the trainer
(s67, the Trinity user's review): the verdict reads Env from this shell, as ever, and a `but:` line names the key
and says where the trainer's Env is set, in --write's words (`alloc-conf-in-explorer`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from solver.query import ConfigProblemCode
from solver.trinity import read_trinity_config

CONFIG = ("algorithm: {{algorithm_type: grpo}}\nmodel: {{model_path: Qwen/Qwen3-8B, max_model_len: 32768}}\n"
          "cluster: {{node_num: {nodes}, gpu_per_node: 8}}\n"
          "explorer:\n  rollout_model: {{engine_num: 2, tensor_parallel_size: 2}}\n  env_vars: {env_vars}\n")
"""Qwen3-8B's GRPO on `nodes` nodes of 8 GPUs, 4 GPUs the rollout's, its workflow runners' `env_vars`."""
LINE = ("explorer.env_vars sets {name} with expandable_segments, which reaches the rollout's workflow runners alone, "
        "not the trainer, whose Env the verdict reads from this shell: the trainer needs Env, which a config cannot "
        "set: export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True {when}")
ONE_NODE = "before Ray starts"
NODES = "on every node of the job before `ray start` there"


def _lines(env_vars: str, nodes: int = 1) -> list[str]:
    config = read_trinity_config(CONFIG.format(nodes=nodes, env_vars=env_vars), "trinity.yaml", {})
    return [words for words, code in zip(config.notes, config.note_codes, strict=True)
            if code is ConfigProblemCode.ALLOC_CONF_IN_EXPLORER]


@pytest.mark.parametrize(("env_vars", "nodes", "lines"), [
    ('{PYTORCH_CUDA_ALLOC_CONF: "expandable_segments:True", HF_HOME: /cache}', 1,
     [LINE.format(name="PYTORCH_CUDA_ALLOC_CONF", when=ONE_NODE)]),
    ('{PYTORCH_CUDA_ALLOC_CONF: "max_split_size_mb:128,expandable_segments:False"}', 2,
     [LINE.format(name="PYTORCH_CUDA_ALLOC_CONF", when=NODES)]),
    ('{PYTORCH_ALLOC_CONF: "expandable_segments:True", PYTORCH_HIP_ALLOC_CONF: "expandable_segments:True"}', 1,
     [LINE.format(name=name, when=ONE_NODE) for name in ("PYTORCH_HIP_ALLOC_CONF", "PYTORCH_ALLOC_CONF")]),
    # No expandable_segments, another variable, none: no line.
    ('{PYTORCH_CUDA_ALLOC_CONF: "max_split_size_mb:128"}', 1, []),
    ('{HF_HOME: /cache}', 1, []),
    ("null", 1, []),
])
def test_an_allocator_variable_in_the_explorers_env_vars_is_said_to_miss_the_trainer(
        env_vars: str, nodes: int, lines: list[str]):
    assert _lines(env_vars, nodes) == lines


def test_the_verdict_still_reads_env_from_the_shell_and_says_why_in_a_but_line(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    config = tmp_path / "trinity.yaml"
    config.write_text(CONFIG.format(nodes=1, env_vars='{PYTORCH_CUDA_ALLOC_CONF: "expandable_segments:True"}'),
                      encoding="utf-8")
    monkeypatch.setenv("COLUMNS", "400")  # each line unwrapped
    status, out, err = cli("--from-config", str(config), "--gpu", "a100-80g")
    assert (status, err) == (0, "")
    verdict, but = out.splitlines()[1:3]
    assert verdict.startswith("trinity.yaml runs vanilla on 4 trainer GPUs at 32768 tokens (Env off, "
                              "PYTORCH_CUDA_ALLOC_CONF unset in this shell)")
    assert but == "  but: " + LINE.format(name="PYTORCH_CUDA_ALLOC_CONF", when=ONE_NODE)
