"""A team's Trinity 0.5.2 configs moved to 0.6 (persona62, session 81): a config's own YaRN that reaches the length,
which --write keeps, lacks the model's ``rope_theta`` that --write adds to it (Trinity 0.6's trainer on verl before 0.8
fails to build the model without it): the ``apply`` block said the mapping "stays" and "needs no change", so pasting
its lines left the config refused; it now says what --write adds and gives the mapping whole, as --write leaves it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from solver.results import YARN_KEPT

Cli = Callable[..., tuple[int, str, str]]
LORA_YARN = """mode: both
algorithm: {algorithm_type: grpo, repeat_times: 8}
buffer: {batch_size: 32}
model:
  model_path: Qwen/Qwen3-1.7B
  max_prompt_tokens: 4096
  max_response_tokens: 61440
  max_model_len: 65536
  rope_scaling:
    rope_type: yarn
    factor: 2.0
    original_max_position_embeddings: 32768
  lora_configs:
    - lora_rank: 64
      lora_alpha: 128
cluster: {node_num: 1, gpu_per_node: 8}
explorer: {rollout_model: {engine_num: 4, tensor_parallel_size: 1}}
trainer: {ulysses_sequence_parallel_size: 2}
"""
"""A LoRA GRPO config of Qwen3-1.7B at 65536 tokens, its YaRN of Qwen's model cards' form (factor 2 over 32768)."""


def _rope_lines(out: str) -> list[str]:
    """The ``apply`` block's lines on ``model.rope_scaling``."""
    return [line for line in out.splitlines() if line.startswith(("# model.rope_scaling", "model.rope_scaling"))]


@pytest.mark.parametrize("version", ["0.6", "0.5.2", "0.5.1"])
def test_a_kept_yarn_without_its_base_is_given_whole_as_write_leaves_it(cli: Cli, tmp_path: Path, version: str,
                                                                        monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
    config, written = tmp_path / "lora.yaml", tmp_path / "written.yaml"
    config.write_text(LORA_YARN, encoding="utf-8")
    mapping = "{rope_type: yarn, factor: 2.0, original_max_position_embeddings: 32768, rope_theta: 1000000}"
    said = [(f"# model.rope_scaling: lora.yaml's, as --write keeps it ({YARN_KEPT}), with the rope_theta it lacks "
             "added:"), f"model.rope_scaling: {mapping}"]
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--trinity-version", version)
    assert (status, _rope_lines(out)) == (0, said)
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--trinity-version", version,
                         "--write", str(written))
    assert (status, _rope_lines(out)) == (0, said)
    # The line pastes what --write wrote.
    assert yaml.safe_load(written.read_text(encoding="utf-8"))["model"]["rope_scaling"] == yaml.safe_load(mapping)
    # Before s81: the comment alone, "lora.yaml's stays, as --write keeps it: one that covers the length needs no
    # change", while --check --trinity-version 0.6 refused the config for the rope_theta it lacks.
    assert f"# model.rope_scaling: lora.yaml's stays, as --write keeps it: {YARN_KEPT}" not in out.splitlines()


def test_a_kept_yarn_with_its_base_still_stays_in_a_comment(cli: Cli, tmp_path: Path):
    config = tmp_path / "lora.yaml"
    config.write_text(LORA_YARN.replace("original_max_position_embeddings: 32768\n",
                                        "original_max_position_embeddings: 32768\n    rope_theta: 1000000\n"),
                      encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--trinity-version", "0.6")
    stays = f"# model.rope_scaling: lora.yaml's stays, as --write keeps it: {YARN_KEPT}"
    assert (status, _rope_lines(out)) == (0, [stays])
    assert "rope-theta-missing" not in out and "has no rope_theta" not in out
