"""LoRA is judged as full fine-tuning, which the tables measured (s67, the Trinity user's review): a `but:` line says
the verdict and the plans count full fine-tuning's gradients and optimizer states, so a LoRA run needs less memory
than shown (`lora-counted-as-full`); not a refusal."""

from __future__ import annotations

from pathlib import Path

import pytest

from solver.query import ConfigProblemCode
from solver.trinity import read_trinity_config

HEAD = ("algorithm: {algorithm_type: grpo}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
        "explorer: {rollout_model: {engine_num: 2, tensor_parallel_size: 2}}\n")
"""Qwen3-8B's GRPO on 8 GPUs, 4 of them the rollout's: what the `model` section below follows."""
COUNTED = ("the trainer holds gradients and optimizer states for the adapter alone, while the tables and the memory "
           "model measured full fine-tuning: the verdict and the plans count full fine-tuning's gradients and "
           "optimizer states, so a LoRA run needs less memory than shown (conservative: without Offload, LoRA leaves "
           "each GPU's shard about 4 of the 16 bytes per parameter counted; the plans hold for it as they are)")
ROLE_MODEL = "trainer.trainer_config.actor_rollout_ref.model"


def _lora_lines(text: str, version: str | None = None) -> list[str]:
    config = read_trinity_config(HEAD + text, "trinity.yaml", {}, version)
    return [words for words, code in zip(config.notes, config.note_codes, strict=True)
            if code is ConfigProblemCode.LORA_COUNTED_AS_FULL]


MODEL = "model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768%s}\n"


@pytest.mark.parametrize(("text", "version", "lines"), [
    (MODEL % ", lora_configs: [{lora_rank: 64}]", None, [f"with LoRA (model.lora_configs) {COUNTED}"]),
    (MODEL % ", lora_configs: [{lora_rank: 64}]", "0.6", [f"with LoRA (model.lora_configs) {COUNTED}"]),
    # The roles' keys: only verl before 0.8 reads them (Trinity 0.6 on verl 0.8 or later ignores them, FROZEN_KEYS).
    (MODEL % "" + "trainer: {trainer_config: {actor_rollout_ref: {model: {lora_rank: 8}}}}\n", None,
     [(f"with verl before 0.8 LoRA ({ROLE_MODEL}.lora_rank) {COUNTED}; Trinity 0.6 on verl 0.8 or later ignores "
       "lora_rank and trains every parameter")]),
    (MODEL % "" + "trainer: {trainer_config: {actor_rollout_ref: {model: {lora_adapter_path: a}}}}\n", "0.5",
     [f"with LoRA ({ROLE_MODEL}.lora_adapter_path) {COUNTED}"]),
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
    assert f"  but: with LoRA (model.lora_configs) {COUNTED}\n" in out
    assert "refused" not in out
