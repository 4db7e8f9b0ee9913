"""Doc and hint slips, s79: docs/planner.md's braced list of `solve --json`'s answer keys names each key in the
order the JSON prints them (it lacked larger_gpu_cell, rollout_kept, schema_version and the other keys printed where
present); the `budget` explain step names --total-gpus and the rollout's GPUs where they made the budget, and
docs/json.md's row says so. (--minimize len's hint naming both budgets: test_slips12_s65.)"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from solver.render import json_schema

ROOT = Path(__file__).resolve().parent.parent
PLANNER_PAGE = (ROOT / "docs" / "planner.md").read_text(encoding="utf-8")
JSON_PAGE = (ROOT / "docs" / "json.md").read_text(encoding="utf-8")


def _listed_keys(listed: str, inside: str | None = None) -> list[str]:
    """The keys a braced list (``{"gpu", "pins": {"sp"}, "plans": [{"gpus"}]}``) names at its top level, or, with
    `inside`, within the value of that key: a quoted name right after ``{``, ``[`` or ``,`` (a value comes after ``:``
    or ``|``, and a name in the list's prose after a backtick)."""
    keys: list[str] = []
    depth, inner_depth = 0, None
    for match in re.finditer(r'[{}\[\]]|(?<=[{\[,])\s*"([a-z_0-9]+)"', listed):
        token = match.group(0)
        if token in "{[":
            depth += 1
        elif token in "}]":
            depth -= 1
            if inner_depth is not None and depth < inner_depth:
                inner_depth = None
        elif inside is None and depth == 1 or inner_depth is not None and depth == inner_depth:
            keys.append(match.group(1))
        if inside is not None and match.group(1) == inside and depth == 1:
            inner_depth = depth + 2  # the key's value: a list of objects
    return keys


def _answer_list() -> str:
    start = PLANNER_PAGE.index('`{"gpu", "model", "objective"')
    return PLANNER_PAGE[start:PLANNER_PAGE.index('"rft_solver_version"}`', start) + len('"rft_solver_version"}')]


def _schema_keys(name: str) -> list[str]:
    return list(json.loads(json_schema("solve"))["$defs"][name]["properties"])


def test_the_planner_page_lists_every_key_of_an_answer_in_the_order_its_json_prints_them():
    assert _listed_keys(_answer_list()) == _schema_keys("Answer")
    assert {"larger_gpu_cell", "rollout_kept", "schema_version"} <= set(_listed_keys(_answer_list()))


def test_the_planner_page_lists_every_key_of_a_plan_in_the_order_its_json_prints_them(
        cli: Callable[..., tuple[int, str, str]]):
    status, out, _ = cli("--model", "4B", "--gpu", "a100", "--len", "32768", "--json")
    assert status == 0
    assert _listed_keys(_answer_list(), inside="plans") == list(json.loads(out)[0]["plans"][0])


def test_listed_keys_reads_the_top_level_and_a_list_of_objects_inside_a_key():
    listed = '`{"a", "b": "x" | "y", "c": {"d"}, "e": [{"f", "g": {"h"}, "i"}], "j"} (`"k"`, not a key)'
    assert _listed_keys(listed) == ["a", "b", "c", "e", "j"]
    assert _listed_keys(listed, inside="e") == ["f", "g", "i"]


def test_the_budget_step_names_the_total_and_the_rollout_that_made_the_budget(
        cli: Callable[..., tuple[int, str, str]]):
    asked = ("--model", "8B", "--gpu", "a100", "--len", "65536", "--explain", "--json")
    steps = {}
    for budget in (("--gpus", "4"), ("--total-gpus", "6", "--rollout-gpus", "2"),
                   ("--total-gpus", "5", "--rollout-gpus", "1")):
        status, out, _ = cli(*asked, *budget)
        assert status == 0
        explanation = json.loads(out)[0]["explanation"]
        steps[" ".join(budget)] = [step["detail"] for step in explanation if step["rule"] == "budget"]
    assert steps == {
        "--gpus 4": ["more GPUs than the budget of 4 (such as 6 GPUs)"],
        "--total-gpus 6 --rollout-gpus 2": [("more GPUs than the budget of 4, what the 2 rollout GPUs (--rollout-gpus) "
                                             "leave of --total-gpus 6 (such as 6 GPUs)")],
        "--total-gpus 5 --rollout-gpus 1": [("more GPUs than the budget of 4, what the 1 rollout GPU (--rollout-gpus) "
                                             "leaves of --total-gpus 5 (such as 6 GPUs)")]}


def test_the_json_page_budget_row_names_both_budgets():
    row = next(line for line in JSON_PAGE.splitlines() if line.startswith("| `budget` |"))
    assert "`--total-gpus`" in row and "`--rollout-gpus`" in row and "raise `--gpus`" in row
