"""The pages that spell out a command's `--json` object name every top-level key its JSON Schema gives it (s69:
`solve --json`'s answer, the two cluster objects and `solve map`'s had not gained `schema_version` and
`rft_solver_version`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from solver.render import json_schema

ROOT = Path(__file__).resolve().parent.parent

SPELLED_OUT = [
    ("solve", "docs/planner.md", "- `--json`: an array, one object per GPU type:", "- Exit status: 0 when every"),
    ("cluster", "docs/cluster.md", '- `--json`: `{"status": "optimal"', "- `--emit-dir DIR` writes"),
    ("cluster-buy", "docs/cluster.md", '- `--json`: `{"status", "gpus"', "[schema/cluster-buy.json]"),
    ("map", "docs/guide.md", "`solve map --json` prints, for programs,", "Its JSON Schema is"),
]
"""Each command whose object a page spells out key by key: the page, and the text that starts and ends the
description."""


def _top_level_keys(command: str) -> list[str]:
    """The keys of the object `command`'s `--json` prints (of each item, for an array), as its schema lists them."""
    schema = json.loads(json_schema(command))
    top = schema["$defs"][schema["items"]["$ref"].rsplit("/", 1)[1]] if schema["type"] == "array" else schema
    return list(top["properties"])


@pytest.mark.parametrize(("command", "page", "start", "end"), SPELLED_OUT)
def test_a_page_that_spells_out_a_json_object_names_each_of_its_keys(command: str, page: str, start: str, end: str):
    text = (ROOT / page).read_text(encoding="utf-8")
    described = text[text.index(start):text.index(end, text.index(start))]
    assert [key for key in _top_level_keys(command) if f'"{key}"' not in described] == []
