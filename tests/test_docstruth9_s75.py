"""Docs true to the code, s75: docs/json.md's key list of `solve memory --json` whole and in order, and `solve map
--json`'s optional keys all named (docs/cluster.md's --seed, which no command takes: test_docstruth_s67)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import solver
from solver.results import MAP_LEFT_OUT_WHEN_NONE

ROOT = Path(__file__).resolve().parent.parent
JSON_PAGE = (ROOT / "docs" / "json.md").read_text(encoding="utf-8")


def _between(text: str, start: str, end: str) -> str:
    """The part of `text` from `start` up to `end`."""
    first = text.index(start)
    return text[first:text.index(end, first)]


def test_the_json_page_names_every_key_of_solve_memory_json_in_its_order():
    keys = list(json.loads(solver.memory_answer("8B", "h100", 8, 131072, sp=8, env=True).model_dump_json()))
    listed = _between(JSON_PAGE, "`solve memory --json` (`MemoryAnswer`) is one object", "[memory.md](memory.md) says")
    named = list(dict.fromkeys(name for name in re.findall(r"`([a-z_]+)`", listed) if name in keys))
    assert named == keys
    # It once left out the LoRA, critic and reference model keys: a list missing one fails.
    assert [key for key in keys if key not in named] == []
    assert {"lora_rank", "lora_parameters", "critic", "critic_parameters_b", "reference_model"} <= set(named)


def test_the_json_page_names_every_key_solve_map_json_leaves_out_where_it_does_not_apply():
    listed = _between(JSON_PAGE, "`solve map --json` is an array of `GpuMap`s", "MAP_LEFT_OUT_WHEN_NONE")
    named = set(re.findall(r"`([a-z_]+)`", listed))
    assert set(MAP_LEFT_OUT_WHEN_NONE) <= named
    assert "critic" in named
