"""Slips in what users read (s66): the API page's signatures as the code has them, and `solve cluster --help`'s
time limit as the search keeps it."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from collections.abc import Callable
from pathlib import Path

from option_reference import option_reference

import solver.rules
from solver.results import MAP_LEFT_OUT_WHEN_NONE

API_PAGE = Path(__file__).resolve().parent.parent / "docs" / "api.md"
SIGNATURE_ROW = re.compile(r"^\| `(solver(?:\.[a-z_]+)*)\.([a-z_]+)\(([^`]*)\)`", re.MULTILINE)
"""A row of docs/api.md's tables that starts with a function's call: its module, name and parameters."""


def _parameters(written: str) -> list[tuple[str, str | None]]:
    """The parameters a signature on the page writes, as (name, default as written, None for none), the bare `*`
    left out; commas inside brackets (``engines=(0, 1)``) do not split."""
    given = []
    for piece in re.split(r",(?![^()]*\))", written):
        name, equals, default = piece.strip().partition("=")
        if name not in ("", "*"):
            given.append((name, default if equals else None))
    return given


def _default_value(written: str) -> object:
    """A default as the page writes it: a literal (``None``, ``()``, ``"config"``), or a name of `solver.rules`
    (``API_OPTIONS``)."""
    try:
        return ast.literal_eval(written)
    except ValueError:
        return getattr(solver.rules, written)


def test_the_api_page_gives_each_full_signature_with_the_codes_parameters_and_defaults():
    rows = SIGNATURE_ROW.findall(API_PAGE.read_text(encoding="utf-8"))
    full = [(module, name, written) for module, name, written in rows if "..." not in written]
    assert len(full) >= 20  # the page's tables give most of the API's signatures whole
    for module, name, written in full:
        function: Callable[..., object] = getattr(importlib.import_module(module), name)
        parameters = inspect.signature(function).parameters
        given = _parameters(written)
        assert [parameter for parameter, _ in given] == list(parameters), f"{module}.{name}"
        for parameter, default in given:
            expected = inspect.Parameter.empty if default is None else _default_value(default)
            assert parameters[parameter].default == expected, f"{module}.{name}: {parameter}={default}"


def test_cluster_help_says_the_smaller_asks_end_within_the_time_limit(cli: Callable[..., tuple[int, str, str]]):
    # --help says what the limit bounds (session 93); docs/cli.md's option reference, what comes after the search
    status, out, _ = cli("cluster", "--help")
    assert status == 0
    words = " ".join(out.split())
    assert "seconds from the start for the planner's queries and the placement search after them" in words
    assert ("After the search: widening, at most a second per stage, then the smaller asks that would place a job left "
            "out for room and the reasons of the jobs left out, at most 20 and 5 new questions per second, ending by "
            "the limit on the wall clock.") in option_reference()
    assert "past it)" not in words and "past it)" not in option_reference()


def test_host_ram_help_says_what_the_option_does_apart_from_what_it_refuses(cli: Callable[..., tuple[int, str, str]]):
    said = {"": "it rules out plans that do not fit there", "map": "it rules out plans that do not fit there",
            "memory": "it says whether what the setting holds there fits"}
    for command, does in said.items():
        status, out, _ = cli(*([command] if command else []), "--help")
        assert status == 0
        words = " ".join(out.split())
        assert f"free -m's 64214MiB; {does} (default: not checked)" in words
    # docs/cli.md's option reference, in full (session 93)
    assert ("free -m's 64214MiB is 62.7 GiB (a bare number past 4096 is refused). It rules out plans that do not fit "
            "there (solve memory: it says whether what the setting holds there fits): the model while"
            ) in option_reference()


def test_the_guides_map_json_names_every_field_given_only_where_it_applies():
    guide = (API_PAGE.parent / "guide.md").read_text(encoding="utf-8")
    section = guide[guide.index("`solve map --json` prints, for programs"):guide.index("Its JSON Schema is")]
    before_budgets = section[section.index('Before `"budget_gpus"` come:'):section.index("- Each row is")]
    named = set(re.findall(r'`"([a-z_]+)"`', before_budgets))
    assert set(MAP_LEFT_OUT_WHEN_NONE) - {"model"} <= named  # `"model"` (with --by len) has a line of its own
    assert '`"model"` (the model mapped' in section


def test_map_budgets_help_says_where_listed_budgets_share_a_column(cli: Callable[..., tuple[int, str, str]]):
    status, out, _ = cli("map", "--help")
    assert status == 0
    assert ("--budgets N,N... only these GPU budgets, comma-separated (1,2,4,8,16), in place of 1 to --gpus-up-to N"
            ) in " ".join(out.split())
    assert ("--budgets N,N...: only these GPU budgets, comma-separated (1,2,4,8,16: a column each, in increasing "
            "order; in a map past a node, consecutive ones with the same plans share one)") in option_reference()
    status, out, _ = cli("map", "--gpu", "a100", "--model", "4B", "--budgets", "8,9,10,16")
    assert status == 0
    assert "≤8-10 GPUs" in out and "≤16 GPUs" in out and "≤9" not in out
