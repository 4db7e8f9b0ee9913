"""docs/api.md's table of functions names every parameter of each function it lists (session 70: `solver.place`
gained `current` and its row did not), or says whose parameters it takes."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

API_PAGE = Path(__file__).parents[1] / "docs" / "api.md"

TAKEN_FROM = {"solver.memory_answer": "as `estimate_memory`", "solver.make_query": "as `plan` (all keywords",
              "solver.api.config_query": "`make_query`'s keywords"}
"""The rows that name their parameters by another function's, and the words that say whose."""


def _rows() -> dict[str, str]:
    """Each row of the page's function tables, by the function it starts with (``solver.place``): its name and
    arguments cells."""
    rows = {}
    for line in API_PAGE.read_text(encoding="utf-8").splitlines():
        found = re.match(r"\| `(solver(?:\.\w+)+)\(", line)
        if found:
            rows[found.group(1)] = " | ".join(line.split(" | ")[:2])
    return rows


def _parameters(dotted: str) -> list[str]:
    module, _, name = dotted.rpartition(".")
    return list(inspect.signature(getattr(importlib.import_module(module), name)).parameters)


def _named(parameter: str, row: str) -> bool:
    """Whether `row` names `parameter`: in its signature cell, or in backticks among its arguments."""
    return f"`{parameter}`" in row or re.search(rf"\b{parameter}\b", row.split(" | ")[0]) is not None


def test_each_function_row_names_every_parameter_or_whose_it_takes():
    rows = _rows()
    assert {"solver.place", "solver.buy_nodes", "solver.plan", *TAKEN_FROM} <= rows.keys()
    unnamed = {dotted: [name for name in _parameters(dotted) if not _named(name, row)]
               for dotted, row in rows.items() if dotted not in TAKEN_FROM}
    assert {dotted: names for dotted, names in unnamed.items() if names} == {}
    assert [dotted for dotted, words in TAKEN_FROM.items() if words not in rows[dotted]] == []
