"""The docs' claims on session 77's changes, checked against real runs (session 77's docstruth13): docs/memory.md's LoRA
adapter counts per expert layout as ``solve memory`` gives them, with ``--trinity-version``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

Cli = Callable[..., tuple[int, str, str]]

CONFIGS = Path(__file__).parent / "data" / "hf-configs"


@pytest.mark.parametrize(("model", "version", "adapter"), [
    # docs/memory.md's LoRA: at rank 32, 0.5.1's transformers 4 (separate experts) against transformers 5's
    ("Mixtral-8x7B-v0.1", "0.5.1", 484_450_304), ("Mixtral-8x7B-v0.1", None, 719_331_328),
    ("Qwen3-30B-A3B", "0.5.1", 1_691_025_408), ("Qwen3-30B-A3B", "0.6", 1_993_015_296),
    ("Qwen1.5-MoE-A2.7B", "v0.5.1", 511_227_648), ("Qwen1.5-MoE-A2.7B", "0.5", 31_851_264),
])
def test_solve_memory_gives_the_adapter_of_the_release_it_counts(cli: Cli, model: str, version: str | None,
                                                                 adapter: int) -> None:
    """``lora_parameters`` and the text's LoRA row are the adapter whose states the breakdown counts, its experts laid
    out as the release holds them (they gave transformers 5's whatever ``--trinity-version`` said)."""
    common = ("memory", "--model-config", str(CONFIGS / f"{model}.json"), "--gpu", "a100", "--gpus", "32", "--len",
              "8192", "--lora-rank", "32", *(("--trinity-version", version) if version else ()))
    status, out, _ = cli(*common, "--json")
    assert (status, json.loads(out)["lora_parameters"]) == (0, adapter)
    status, out, _ = cli(*common)
    assert f"{adapter:,} adapter parameters on every linear layer" in " ".join(out.split())
