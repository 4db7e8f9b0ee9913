"""Session 65, apitext3: `solver.map_plans` had no text view (a notebook printed a `GpuMap`'s repr), the API's words
for a cluster's required jobs read ``(required: true, or required)``, and ``solve --help`` said answers do not depend
on ``--workers``, which is untrue where the time limit, on the wall clock, stops a solve. `solver.map_text(maps)`
gives ``solve map``'s text through the same view in the API's words (``budgets=[...] maps them; the GpuMap has every
budget``, ``host_ram_gb``), the required note reads in both words, and the help says when the answer may differ."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from option_reference import option_reference

import solver
from solver.render.cluster import required_note
from solver.rules import API_OPTIONS, COMMAND_OPTIONS
from solver.tables import QueryError

Cli = Callable[..., tuple[int, str, str]]
ROOT = Path(__file__).resolve().parent.parent
LEFT_OUT = {"(--budgets maps them; --json has every budget)": "(budgets=[...] maps them; the GpuMap has every budget)"}
"""What the line naming the budgets a map's columns leave out says in the API's words."""
HOST_RAM = {"not checked: --host-ram not given": "not checked: host_ram_gb not given"}
"""What the legend says of the Offload cells' unchecked host memory in the API's words."""
HOST_NEED = {"(--host-ram checks it)": "(host_ram_gb checks it)"}
"""What the legend's line of the host memory needs past what a node is assumed to have says in the API's words."""
OTHER = {"(their words: --json)": "(their words: the GpuMap)"}
"""Where the legend's line of the codes no mark says points for their words, in the API's words (loraexclude2)."""


@pytest.mark.parametrize(("argv", "asked", "words"), [
    # By length, Offload cells: the legend's host memory keyword.
    (["--gpu", "h100", "--model", "8B", "--by", "len", "--gpus-up-to", "4"],
     {"model": "8B", "gpu": "h100", "by": "len", "gpus_up_to": 4}, {**HOST_RAM, **HOST_NEED, **OTHER}),
    # Past one node: columns left out, named with the keyword.
    (["--gpu", "a100", "--model", "8B,14B", "--gpus-up-to", "32"],
     {"model": ["8B", "14B"], "gpu": "a100", "gpus_up_to": 32}, {**LEFT_OUT, **HOST_RAM, **HOST_NEED, **OTHER}),
    # Budgets listed, two GPU types, limits in the titles: no flag, the same bytes.
    (["--gpu", "h20,a100", "--model", "8B,4B", "--budgets", "8,16,32", "--host-ram", "512", "--train-batch-size",
      "256"], {"model": ["8B", "4B"], "gpu": ["h20", "a100"], "budgets": [8, 16, 32], "host_ram_gb": 512,
               "train_batch_size": 256}, OTHER),
    # The title's choices: estimates alone, nodes of 4, token budget auto.
    (["--gpu", "h100", "--model", "8B", "--gpus-up-to", "8", "--estimate", "--node-gpus", "4", "--token-budget",
      "auto"], {"model": "8B", "gpu": "h100", "gpus_up_to": 8, "estimate": "only", "node_gpus": 4,
                "token_budget": "auto"}, {**HOST_RAM, **OTHER}),
    # An Env cell on an AMD GPU: the legend's caution names the planner's keyword.
    (["--gpu", "mi300x", "--model", "8B", "--gpus-up-to", "2", "--host-ram", "2048"],
     {"model": "8B", "gpu": "mi300x", "gpus_up_to": 2, "host_ram_gb": 2048},
     {"(solve --no-env plans without it)": "(solver.plan(env=False) plans without it)", **OTHER}),
])
def test_map_text_is_what_solve_map_prints_in_the_api_s_words(
        cli: Cli, monkeypatch: pytest.MonkeyPatch, argv: list[str], asked: dict[str, object],
        words: dict[str, str]) -> None:
    monkeypatch.setenv("COLUMNS", "160")
    status, printed, _ = cli("map", *argv)
    assert status == 0
    in_command_words = solver.map_plans(**asked, option_names=COMMAND_OPTIONS)  # type: ignore[arg-type]
    assert solver.map_text(in_command_words, option_names=COMMAND_OPTIONS) == printed
    text = solver.map_text(solver.map_plans(**asked))  # type: ignore[arg-type]
    for flags, keywords in words.items():
        assert flags in printed
        printed = printed.replace(flags, keywords)
    assert text == printed and [word for word in text.split() if word.startswith("--")] == []


def test_map_text_is_laid_out_as_a_pipe_gets_it_its_tables_whole_in_colour_only_when_asked(
        capsys: pytest.CaptureFixture[str]) -> None:
    maps = solver.map_plans(["8B", "14B"], gpu="a100", gpus_up_to=32)
    wide, narrow = solver.map_text(maps), solver.map_text(maps, width=40)
    table = [line for line in wide.splitlines() if line.startswith(("┏", "│"))]
    # The tables whole, wider than 40: past a node, the two largest budgets' columns (the fewest, s67), as wide's.
    assert table and [line[:13] + line[-42:] for line in table] == [
        line for line in narrow.splitlines() if line.startswith(("┏", "│"))]
    assert max(map(len, wide.splitlines())) > 100 and "\x1b" not in wide
    assert "\x1b[" in solver.map_text(maps, color=True)
    assert capsys.readouterr() == ("", "")


MAPS = solver.map_plans("4B", gpu="a100", gpus_up_to=1)


@pytest.mark.parametrize(("arguments", "keywords", "message"), [
    ((MAPS[0],), {}, "maps must be a list or tuple of GpuMap, got a GpuMap: pass (gpu_map,), or map_plans' tuple"),
    (((),), {}, "maps: an empty list holds no map: pass map_plans' maps"),
    (("a100",), {}, "maps must be a list or a tuple, got 'a100'"),
    (([MAPS[0], "a100"],), {}, "maps[1] must be a GpuMap, got 'a100'"),
    ((MAPS,), {"width": 10}, "width must be a whole number of columns from 20 to 65536, got 10"),
    ((MAPS,), {"color": "yes"}, "color must be True or False, got 'yes'"),
    ((MAPS,), {"option_names": "api"}, "option_names must be an OptionNames, got 'api'"),
])
def test_map_text_s_bad_arguments_are_one_line(arguments: tuple[object, ...], keywords: dict[str, object],
                                               message: str) -> None:
    with pytest.raises(QueryError) as raised:
        solver.map_text(*arguments, **keywords)  # type: ignore[arg-type]
    assert str(raised.value) == message


def test_the_api_page_shows_map_text_s_text() -> None:
    page = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    assert 'maps = solver.map_plans(["8B", "14B"], gpu="a100", gpus_up_to=32)\n' in page
    shown = page[page.index(">>> print(solver.map_text(maps, width=120))\n"):].split("\n", 1)[1].split("```")[0]
    assert shown == solver.map_text(solver.map_plans(["8B", "14B"], gpu="a100", gpus_up_to=32), width=120)
    assert "(budgets=[...] maps them; the GpuMap has every budget)" in shown


def test_the_required_note_reads_in_both_words() -> None:
    assert required_note(COMMAND_OPTIONS) == "(required): the job must be placed (required: true, or --required)"
    assert required_note(API_OPTIONS) == ("(required): the job must be placed (the fleet marks it required: true, or "
                                          "the call's required names it)")


def test_solve_s_workers_help_says_a_stopped_answer_may_differ(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """The planner's time limit is on the wall clock: a solve it stops ends wherever the search got, which depends on
    the workers and the machine's load (a proven answer does not)."""
    monkeypatch.setenv("COLUMNS", "400")
    _, printed, _ = cli("--help")
    assert ("--workers W CP-SAT search workers (default 1, at most 1024): a proven answer does not depend on it"
            in " ".join(printed.split()))
    assert ("--workers W: CP-SAT search workers (default 1, at most 1024): an answer the search proved does not depend "
            "on it; one that the time limit stopped on the wall clock, as the answer says, may differ with it and from "
            "run to run") in option_reference()
