"""docs/api.md's table of functions names every parameter of each function it lists (session 70: `solver.place`
gained `current` and its row did not), or says whose parameters it takes; a --current file that cannot be read is
named after its option, as docs/cli.md says of every file an option names."""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Callable
from pathlib import Path

import pytest

Cli = Callable[..., tuple[int, str, str]]

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


@pytest.mark.parametrize(("name", "problem"), [("gone.json", "cannot read: No such file or directory"),
                                               (".", "cannot read: Is a directory")])
def test_a_current_file_that_cannot_be_read_is_named_after_its_option(cli: Cli, tmp_path: Path, name: str,
                                                                      problem: str):
    # docs/cli.md: a file an option names that cannot be read is named after that option (it was "not JSON (...)",
    # without --current).
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools: [{name: a, gpu: A100-80GB, nodes: 1, gpus_per_node: 8}]\n"
                     "jobs: [{name: j, model: Qwen3-0.6B, max_model_len: 8192, rollout_gpus: 0}]\n", encoding="utf-8")
    path = tmp_path / name
    assert cli("cluster", str(fleet), "--current", str(path)) == (
        2, "", f"solve cluster: error: --current {path}: {problem}\n")
