"""LoRA's `but:` line (`lora-counted-as-full`; s67, the Trinity user's review), not a refusal: it says what the verdict
and the plans count, LoRA's states at the config's rank (s72), or where they cannot (an adapter loaded, a release
that trains every parameter) full fine-tuning's, which the tables measured, so a LoRA run needs less memory than
shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from solver.query import ConfigProblemCode
from solver.trinity import read_trinity_config

HEAD = ("algorithm: {algorithm_type: grpo}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
        "explorer: {rollout_model: {engine_num: 2, tensor_parallel_size: 2}}\n")
"""Qwen3-8B's GRPO on 8 GPUs, 4 of them the rollout's: what the `model` section below follows."""
COUNTED = ("the trainer holds gradients and optimizer states for the adapter alone: the verdict and the plans count "
           "LoRA rank %d's states (the frozen base's fp32 weights and the adapter's on every linear layer but the "
           "output projection, unless --lora-rank gives another), and the tables, which measured full fine-tuning, "
           "vouch for it by inference and refute nothing")
"""The line where LoRA's states are counted (s72: `counted_lora_rank`)."""
AS_FULL = ("the trainer holds gradients and optimizer states for the adapter alone, but the verdict and the plans "
           "count full fine-tuning's, as the tables measured (%s): a LoRA run needs less memory than shown "
           "(conservative: without Offload, LoRA leaves each GPU's shard about 4 of the 16 bytes per parameter "
           "counted; solve --lora-rank RANK counts a new adapter's)")
"""The line where they cannot be (an adapter loaded, or a release that trains every parameter)."""
ADAPTER = "it loads an adapter, whose rank is the adapter's own"
ROLE_MODEL = "trainer.trainer_config.actor_rollout_ref.model"


def _lora_lines(text: str, version: str | None = None) -> list[str]:
    config = read_trinity_config(HEAD + text, "trinity.yaml", {}, version)
    return [words for words, code in zip(config.notes, config.note_codes, strict=True)
            if code is ConfigProblemCode.LORA_COUNTED_AS_FULL]


MODEL = "model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768%s}\n"


@pytest.mark.parametrize(("text", "version", "lines"), [
    (MODEL % ", lora_configs: [{lora_rank: 64}]", None, [f"with LoRA (model.lora_configs) {COUNTED % 64}"]),
    (MODEL % ", lora_configs: [{lora_rank: 64}]", "0.6", [f"with LoRA (model.lora_configs) {COUNTED % 64}"]),
    # The roles' keys: only verl before 0.8 reads them (Trinity 0.6 on verl 0.8 or later ignores them, FROZEN_KEYS).
    (MODEL % "" + "trainer: {trainer_config: {actor_rollout_ref: {model: {lora_rank: 8}}}}\n", None,
     [(f"with verl before 0.8 LoRA ({ROLE_MODEL}.lora_rank) "
       f"{AS_FULL % 'Trinity 0.6 on verl 0.8 or later ignores lora_rank and trains every parameter'}")]),
    (MODEL % "" + "trainer: {trainer_config: {actor_rollout_ref: {model: {lora_adapter_path: a}}}}\n", "0.5",
     [f"with LoRA ({ROLE_MODEL}.lora_adapter_path) {AS_FULL % ADAPTER}"]),
    # No LoRA: none; a rank of 0 is none; two LoRA configs, which Trinity refuses to load, are said so alone.
    (MODEL % "", None, []),
    (MODEL % "" + "trainer: {trainer_config: {actor_rollout_ref: {model: {lora_rank: 0}}}}\n", "0.5", []),
    (MODEL % ", lora_configs: [{lora_rank: 8}, {lora_rank: 16}]", None, []),
])
def test_lora_gets_a_line_that_the_verdict_counts_full_fine_tuning(
        text: str, version: str | None, lines: list[str]):
    assert _lora_lines(text, version) == lines


def test_the_line_is_a_but_line_and_no_refusal(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    config = tmp_path / "trinity.yaml"
    config.write_text(HEAD + MODEL % ", lora_configs: [{lora_rank: 64}]", encoding="utf-8")
    monkeypatch.setenv("COLUMNS", "600")  # the line unwrapped
    status, out, err = cli("--from-config", str(config), "--gpu", "a100-80g")
    assert (status, err) == (0, "")
    assert f"  but: with LoRA (model.lora_configs) {COUNTED % 64}\n" in out
    assert "refused" not in out
