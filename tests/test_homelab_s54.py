"""A home lab of consumer cards (two RTX 4090s in a 64 GB box, one RTX 5090 in a 32 GB box): `--host-ram` says it
counts only the trainer's share of a node's RAM, the guide's advice for a card that drives a display changes the plan
as it says, and `solve memory`'s breakdown on a 32 GB card is docs/memory.md's formulas term by term."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import pytest
from option_reference import option_reference

from solver.tables import load_catalog, load_memory_model

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "guide.md"
NOT_COUNTED = "The OS, Ray, the data loader and the rollout are not counted: leave room for them"
GIB = 2**30


def flat(text: str) -> str:
    """`text` with its line wrapping undone."""
    return " ".join(text.split())


@pytest.mark.parametrize("command", [[], ["map"], ["memory"]])
def test_host_ram_help_says_what_it_does_not_count(cli: Callable[..., tuple[int, str, str]],
                                                   command: list[str]) -> None:
    """Every command with --host-ram says it is the trainer's share, not the node's whole RAM; docs/cli.md's option
    reference says what it does not count (session 93)."""
    status, out, _ = cli(*command, "--help")
    assert status == 0
    assert "--host-ram GiB host memory per node for the trainer, in GiB" in flat(out)
    assert "--host-ram GiB: host memory per node the trainer can have" in option_reference()
    assert f"{NOT_COUNTED} (default: not checked)" in option_reference()


def test_display_card_advice_changes_the_plan_as_the_guide_says(cli: Callable[..., tuple[int, str, str]]) -> None:
    """The guide's `--gpu desk-4090 --gpu-memory 23500MiB` (a 4090 whose desktop holds about 1 GiB) plans with less
    memory than the catalogue's 4090: Qwen3-1.7B at 8192 tokens on two then needs SP=2."""
    assert "`--gpu desk-4090 --gpu-memory\n  23500MiB`" in GUIDE.read_text(encoding="utf-8")
    # At the memory model's own margin (a 24 GiB card's default, 0.06, plans SP=2 on both: session 61).
    query = ["--model", "1.7B", "--gpus", "2", "--len", "8192", "--node-gpus", "2", "--host-ram", "48", "--json",
             "--margin", "0.01"]
    status, out, _ = cli("--gpu", "4090", *query)
    assert status == 0
    catalogue = json.loads(out)[0]["plans"][0]
    status, out, _ = cli("--gpu", "desk-4090", "--gpu-memory", "23500MiB", *query)
    assert status == 0
    desk = json.loads(out)[0]["plans"][0]
    assert (catalogue["env"], catalogue["offload"], catalogue["sp"], catalogue["headroom_gb"]) == (True, True, 1, 0.3)
    assert (desk["env"], desk["offload"], desk["sp"], desk["host_memory_gb"]) == (True, True, 2, 38.6)


def test_memory_breakdown_on_a_5090_is_the_documented_formulas(cli: Callable[..., tuple[int, str, str]]) -> None:
    """Qwen3-1.7B with Env + Offload on one RTX 5090 at 11264 tokens (its longest): each term as docs/memory.md
    writes it, with the shipped coefficients, to 0.01 GiB."""
    model = load_catalog().model("Qwen3-1.7B")
    coefficients = load_memory_model().coefficients
    status, out, _ = cli("memory", "--model", "1.7B", "--gpu", "5090", "--gpus", "1", "--len", "11264", "--env",
                         "--offload", "--json", "--margin", "0.01")  # its longest at the memory model's own margin
    assert status == 0
    shown = json.loads(out)
    tokens = math.ceil(2 * 11264 / 1)
    hidden, layers, vocab = model.hidden_size, model.num_layers, model.vocab_size
    per_layer = (model.parameters_b * 1e9 - vocab * hidden) / layers  # tied: one embedding matrix
    expected = {
        "states": 0.0,
        "gathered": coefficients.gathered * (4 * vocab * hidden + 10 * per_layer) / GIB,
        "checkpoints": coefficients.checkpoints * 2 * tokens * hidden * layers / GIB,
        "logits": coefficients.logits * 4 * tokens * vocab / GIB,
        "recompute": coefficients.recompute * 2 * tokens * (hidden + model.intermediate_size) / GIB,
        "sp_buffers": 0.0,
        "fragmentation": 0.0,
        "overhead": coefficients.overhead,
    }
    assert shown["terms"] == pytest.approx(expected, abs=0.01)
    assert shown["total_gib"] == pytest.approx(sum(expected.values()), abs=0.01)
    memory = 32607 / 1024
    assert shown["usable_gib"] == pytest.approx(memory * coefficients.usable_env * (1 - 0.01), abs=0.01)
    assert (round(shown["total_gib"], 2), round(shown["usable_gib"], 2), shown["longest_len"]) == (29.05, 29.27, 11264)
