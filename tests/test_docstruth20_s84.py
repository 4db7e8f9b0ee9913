"""Session 84's doc claims checked against the code (helper docstruth20a): planner.md's synopsis writes
``--token-budget`` and ``--trinity-version`` as each command's parser takes them (solve's and map's take N too); its
list of ``solve --json``'s keys present only where they apply names every key a plain answer leaves out (the token
budget's cap and its source were missing); guide.md's keys before a map's ``budget_gpus`` come in the JSON's order
(``reference_model`` after the LoRA keys); and ``--dpo`` refuses a token budget of N as it refuses ``auto``."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest
from test_tokbudget_s72 import Cli

from solver.cli.cluster import build_cluster_parser
from solver.cli.maps import build_map_parser
from solver.cli.memory import build_memory_parser
from solver.cli.planner import build_parser
from solver.render import json_schema
from solver.results import GpuMap

DOCS = Path(__file__).resolve().parent.parent / "docs"
PLANNER = (DOCS / "planner.md").read_text(encoding="utf-8")
GUIDE = (DOCS / "guide.md").read_text(encoding="utf-8")


def _synopsis() -> dict[str, str]:
    """planner.md's synopsis, each command's lines joined, by the command's name (``solve``, ``solve map``, ...)."""
    lines: dict[str, str] = {}
    command = ""
    for line in PLANNER.split("## Command line\n\n```\n")[1].split("```")[0].splitlines():
        if line.startswith("solve"):
            command = " ".join(line.split()[:2]) if line.split()[1][0].isalpha() else "solve"
        lines[command] = lines.get(command, "") + " " + line
    return lines


def _metavar(parser: argparse.ArgumentParser, option: str) -> str:
    return next(str(action.metavar) for action in parser._actions if option in action.option_strings)


@pytest.mark.parametrize("build", [build_parser, build_map_parser, build_memory_parser, build_cluster_parser])
def test_the_synopsis_writes_the_token_budget_and_release_as_the_parser_takes_them(build):
    parser = build()
    line = _synopsis()[parser.prog]
    budget = {"MODE|N": "default|auto|N", "MODE": "default|auto"}.get(_metavar(parser, "--token-budget"),
                                                                      _metavar(parser, "--token-budget"))
    assert re.findall(r"--token-budget (\S+?)\]", line) == [budget]
    if "--trinity-version" in line:
        assert re.findall(r"--trinity-version (\S+?)\]", line) == [_metavar(parser, "--trinity-version")]


def _listed_as_present_only_where_they_apply() -> set[str]:
    """The keys planner.md's ``--json`` paragraph says are present only where they apply, its ``from X to Y``
    ranges taken in the schema's order."""
    said = " ".join(PLANNER.split("(in this order; ", 1)[1].split("are present only where they apply")[0].split())
    order = list(json.loads(json_schema("solve"))["$defs"]["Answer"]["properties"])
    keys = set(re.findall(r"`(\w+)`", said.split("and the keys from")[0]))
    start, end = re.findall(r"`(\w+)`", said.split("and the keys from")[1])
    return keys | set(order[order.index(start):order.index(end) + 1])


def test_every_key_a_plain_answer_leaves_out_is_said_to_be_present_only_where_it_applies(cli: Cli):
    status, out, _ = cli("--model", "4B", "--len", "32k", "--gpu", "a100", "--json")
    order = list(json.loads(json_schema("solve"))["$defs"]["Answer"]["properties"])
    left_out = set(order) - set(json.loads(out)[0])
    assert status == 0 and {"token_budget_cap", "token_budget_cap_source"} <= left_out
    assert left_out - _listed_as_present_only_where_they_apply() == set()


def test_the_guides_keys_before_a_maps_budgets_come_in_the_jsons_order():
    section = GUIDE.split('- Before `"budget_gpus"` come:\n', 1)[1].split('\n- Each row is', 1)[0]
    fields = list(GpuMap.model_fields)
    between = fields[fields.index("model") + 1:fields.index("budget_gpus")]
    said = [name for name in re.findall(r'`"(\w+)"`', section) if name in fields]
    assert said == between


@pytest.mark.parametrize("command", [(), ("map", "--budgets", "8")])
@pytest.mark.parametrize("budget", ["auto", "8192"])
def test_dpo_refuses_a_token_budget_of_n_as_of_auto(cli: Cli, command: tuple[str, ...], budget: str):
    # planner.md: "`--dpo --token-budget auto` (or `N`) is refused"; cli.md: solve map refuses --dpo beside it too.
    plan = ("--len", "32k", "--gpus", "8") if not command else ()
    status, out, err = cli(*command, "--model", "8B", "--gpu", "h100", *plan, "--dpo", "--token-budget", budget)
    assert (status, out) == (2, "")
    assert f"--token-budget {budget}: --dpo runs with dynamic batch sizes off" in err
    assert err.rstrip().endswith("leave --token-budget out")
    assert "`--dpo --token-budget auto` (or `N`) is refused" in " ".join(PLANNER.split())
    assert "`--dpo` beside `--critic resident`, `--no-reference` or `--token-budget`," in " ".join(
        (DOCS / "cli.md").read_text(encoding="utf-8").split())


def test_index_names_every_variable_the_shown_outputs_are_made_without():
    # tests/shown_output.py unsets each before it reruns the docs' commands; index.md said PYTORCH_CUDA_ALLOC_CONF
    # alone.
    script = (Path(__file__).resolve().parent / "shown_output.py").read_text(encoding="utf-8")
    unset = re.findall(r'os\.environ\.pop\("(\w+)", None\)', script.split('if __name__ == "__main__":')[1])
    shown = (DOCS / "index.md").read_text(encoding="utf-8").split("## Shown outputs")[1]
    assert len(unset) == 2 and [name for name in unset if f"`{name}`" not in shown] == []


def test_the_readme_gives_the_fleet_goals_with_the_tie_in_file_order_and_at_least_lengths():
    # As cluster.md gives them (test_clustertie_s82 holds the tie; test_persona73_s84 holds guide.md's list): the
    # longest contexts weigh only for the jobs that ask at_least a length, and where priorities tie the jobs earlier
    # in the file are placed.
    readme = " ".join((DOCS.parent / "README.md").read_text(encoding="utf-8").split())
    assert ("(most priority, then, where priorities tie, the jobs earlier in the file, then longer contexts for jobs "
            "that ask `at_least` a length, then least cost)") in readme
