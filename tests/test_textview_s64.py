"""Session 64, textview: a notebook user had pydantic reprs or JSON from `solver.plan` and shelled out to ``!solve``
for the table. `solver.answers_text(answers, query, catalog, width=...)` returns the text ``solve`` prints for the same
answers (rendered by the same view, laid out as on a pipe that wide, no colour codes unless asked), and prints
nothing; bad arguments are one-line `QueryError`s."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import rich.console

import solver
from solver.api import answer_query
from solver.query import Query
from solver.rules import COMMAND_OPTIONS
from solver.tables import QueryError

Cli = Callable[..., tuple[int, str, str]]
CATALOG = solver.load_catalog()
ROOT = Path(__file__).resolve().parent.parent


def _query(**asked: object) -> Query:
    """The query ``solve`` asks for these keywords (the command's words: `COMMAND_OPTIONS`)."""
    return solver.make_query(CATALOG, option_names=COMMAND_OPTIONS, **asked)  # type: ignore[arg-type]


@pytest.mark.parametrize(("argv", "asked", "explain"), [
    (["--model", "8B", "--gpu", "h100", "--len", "32768", "--gpus", "4", "--top", "3"],
     {"model": "8B", "gpu": "h100", "max_model_len": 32768, "budget_gpus": 4, "top": 3}, False),
    (["--model", "4B", "--gpu", "a100,h20", "--maximize", "len", "--gpus", "6"],
     {"model": "4B", "gpu": ["a100", "h20"], "objective": "max_len", "budget_gpus": 6}, False),
    (["--model", "32B", "--gpu", "h20", "--len", "131072", "--gpus", "2", "--explain"],
     {"model": "32B", "gpu": "h20", "max_model_len": 131072, "budget_gpus": 2}, True),
])
@pytest.mark.parametrize("width", [160, 200])
def test_the_text_is_what_solve_prints(cli: Cli, monkeypatch: pytest.MonkeyPatch, argv: list[str],
                                       asked: dict[str, object], explain: bool, width: int) -> None:
    monkeypatch.setenv("COLUMNS", str(width))  # a pipe gets the terminal's width where it is more than 160
    status, out, _ = cli(*argv)
    query = _query(**asked)
    text = solver.answers_text(answer_query(query, CATALOG, explain=explain), query, CATALOG, width=width)
    assert text == out and status == (0 if "--explain" not in argv else 1)
    assert "\x1b" not in text and "·" in text and max(map(len, text.splitlines())) <= width


def test_the_installed_command_prints_the_same_bytes_and_its_out_file_whole(solve_script: object, cli: Cli,
                                                                            tmp_path: Path) -> None:
    # The process ends with os._exit once it has answered (solver.__main__): what it printed to the pipe and the file
    # of --out are whole, as the command in-process gives them, and no temporary file is left beside it.
    argv = ["--model", "4B", "--gpu", "a100", "--len", "8192", "--gpus", "2"]
    printed = subprocess.run([str(solve_script), *argv, "--out", "plan.yaml"], cwd=tmp_path, capture_output=True,
                             text=True, encoding="utf-8", check=True,
                             env={"PATH": "/usr/bin:/bin", "COLUMNS": "160"}).stdout
    query = _query(model="4B", gpu="a100", max_model_len=8192, budget_gpus=2)
    text = solver.answers_text(answer_query(query, CATALOG), query)  # the shipped catalogue by default
    assert printed == f"{text}wrote plan.yaml\n"
    assert [path.name for path in tmp_path.iterdir()] == ["plan.yaml"]
    in_process = tmp_path / "in-process" / "plan.yaml"
    in_process.parent.mkdir()
    assert cli(*argv, "--out", str(in_process))[0] == 0
    assert (tmp_path / "plan.yaml").read_text(encoding="utf-8") == in_process.read_text(encoding="utf-8")


def test_a_narrow_width_lays_the_ranking_out_in_blocks() -> None:
    query = _query(model="8B", gpu="h100", max_model_len=32768, budget_gpus=4, top=3)
    answers = answer_query(query, CATALOG)
    wide, narrow = (solver.answers_text(answers, query, width=width) for width in (160, 60))
    assert "┃ #" in wide and "┃" not in narrow and "#2  GPUs" in narrow
    assert max(map(len, narrow.splitlines())) <= 80  # a line rich was told not to wrap stays whole, as on a terminal


def test_colour_only_when_asked(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    query = _query(model="32B", gpu="h20", max_model_len=131072, budget_gpus=2)
    answers = answer_query(query, CATALOG)
    monkeypatch.setenv("FORCE_COLOR", "1")
    plain = solver.answers_text(answers, query)
    monkeypatch.delenv("FORCE_COLOR")
    monkeypatch.setenv("NO_COLOR", "1")
    coloured = solver.answers_text(answers, query, color=True)
    assert "\x1b" not in plain
    assert "\x1b[1mH20-96GB" in coloured and "\x1b[31mno plan" in coloured  # bold heading, red reason
    assert capsys.readouterr() == ("", "")


def test_nothing_is_shown_in_a_notebook(monkeypatch: pytest.MonkeyPatch) -> None:
    shown: list[object] = []
    monkeypatch.setattr(rich.console, "_is_jupyter", lambda: True)  # as rich finds IPython's kernel
    monkeypatch.setattr("rich.jupyter.display", lambda *shown_now: shown.append(shown_now))
    query = _query(model="4B", gpu="a100", max_model_len=8192, budget_gpus=2)
    text = solver.answers_text(answer_query(query, CATALOG), query)
    assert text.startswith("A100-80GB · Qwen3-4B · cheapest plan for 8192 tokens within 2 GPUs: optimal\n")
    assert shown == []


ANSWERS_QUERY = _query(model="4B", gpu="a100", max_model_len=8192, budget_gpus=2)
ANSWERS = answer_query(ANSWERS_QUERY, CATALOG)


@pytest.mark.parametrize(("arguments", "keywords", "message"), [
    ((ANSWERS, ANSWERS_QUERY), {"width": 5}, "width must be a whole number of columns from 20 to 65536, got 5"),
    ((ANSWERS, ANSWERS_QUERY), {"width": "100"}, "width must be a whole number, got '100' (a str: pass 100)"),
    ((ANSWERS, ANSWERS_QUERY), {"color": "yes"}, "color must be True or False, got 'yes'"),
    ((ANSWERS[0], ANSWERS_QUERY), {},  # s86: with how to pass it, as map_text says for a GpuMap
     "answers must be a list or a tuple, got an Answer: pass (answer,), or plan's tuple"),
    ((ANSWERS, "4B"), {}, "query must be a Query or None, got '4B'"),
    ((ANSWERS, ANSWERS_QUERY, "catalog"), {}, "catalog must be a Catalog or None, got 'catalog'"),
    (([ANSWERS[0], None], ANSWERS_QUERY), {}, "answers[1] must be an Answer, got None"),
    ((ANSWERS, _query(model="8B", gpu="a100", max_model_len=8192, budget_gpus=2)), {},
     ("answers[0] is for Qwen3-4B on A100-80GB, not one of the query's (Qwen3-8B on A100-80GB): pass the answers of "
      "that query")),
    ((ANSWERS, _query(model="4B", gpu=["h100", "h20"], max_model_len=8192, budget_gpus=2)), {},
     ("answers[0] is for Qwen3-4B on A100-80GB, not one of the query's (Qwen3-4B on H100-80GB or H20-96GB): pass the "
      "answers of that query")),
])
def test_bad_arguments_are_one_line(arguments: tuple[object, ...], keywords: dict[str, object], message: str) -> None:
    with pytest.raises(QueryError) as raised:
        solver.answers_text(*arguments, **keywords)  # type: ignore[arg-type]
    assert str(raised.value) == message


FLEET = str(ROOT / "docs" / "examples" / "fleet.yaml")
SMALLER_ASKS = str(ROOT / "docs" / "examples" / "smaller-asks.yaml")


@pytest.mark.parametrize(("argv", "made"), [
    ([FLEET], lambda: solver.place(FLEET, option_names=COMMAND_OPTIONS)),
    ([FLEET, "--minimize", "nodes"], lambda: solver.place(FLEET, minimize="nodes", option_names=COMMAND_OPTIONS)),
    ([SMALLER_ASKS, "--buy"],
     lambda: solver.buy_nodes(SMALLER_ASKS, option_names=COMMAND_OPTIONS)),
])
def test_a_cluster_result_is_what_solve_cluster_prints(cli: Cli, monkeypatch: pytest.MonkeyPatch, argv: list[str],
                                                       made: Callable[[], solver.ClusterResult]) -> None:
    monkeypatch.setenv("COLUMNS", "160")
    status, out, _ = cli("cluster", *argv)
    fleet = argv[0]
    # The command's words (the API's: tests/test_apitext2_s65.py), for the Fleet or its file's path.
    assert status in (0, 1) and solver.cluster_text(made(), fleet, option_names=COMMAND_OPTIONS) == out
    assert solver.cluster_text(made(), solver.load_fleet(fleet), option_names=COMMAND_OPTIONS) == out
    if "--minimize" in argv:
        assert "nodes used" in out


@pytest.mark.parametrize(("arguments", "keywords", "message"), [
    (("result", FLEET), {}, "result must be a ClusterResult or a PurchaseResult, got 'result'"),
    ((None, 5), {}, "result must be a ClusterResult or a PurchaseResult, got None"),
    ((), {"width": 10**6}, "width must be a whole number of columns from 20 to 65536, got 1000000"),
    ((), {"fleet": SMALLER_ASKS},
     "result is on the pools a100 and h20, fleet has a100: pass the fleet it placed"),
])
def test_bad_cluster_arguments_are_one_line(arguments: tuple[object, ...], keywords: dict[str, object],
                                            message: str) -> None:
    if not arguments:
        keywords = {"fleet": FLEET, **keywords}
        arguments = (solver.place(FLEET),)
    with pytest.raises(QueryError) as raised:
        solver.cluster_text(*arguments, **keywords)  # type: ignore[arg-type]
    assert str(raised.value) == message

