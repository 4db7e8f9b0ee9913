"""Session 66, textviews: the API's text views lacked what the command's have. `solver.memory_text`'s planner call
wrote ``memory=MEMORY`` for a memory model of one's own (a `MemoryAnswer` kept the file or the source, not both), and
its heading named the file where ``solve memory`` names the source: the answer now keeps both (``memory_model``, the
file given; ``memory_model_source``), the call names the file (``memory=solver.load_memory_model(...)``) and, for a
`MemoryModel` passed, the line above it asks for it by its source. `solver.map_text` could not name a --weights file,
and took budgets listed as 1 to N for ``gpus_up_to``'s (fewer columns than ``solve map --budgets`` shows): a
`GpuMap` keeps both (``weights``, ``budgets_listed``; `map_plans` takes a weights file's path). And
`solver.answers_text` needed the query, which `solver.plan`'s caller never sees: an answer holds it (``query``, not in
its JSON), so ``answers_text(solver.plan(...))`` is the command's text. (Supersedes test_apitext2_s65's and
test_apitext3_s65's tests of ``memory=MEMORY`` and of a map's title without weights.)"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

import solver
from solver.api import answer_query
from solver.render import memory_model_yaml
from solver.rules import COMMAND_OPTIONS
from solver.tables import QueryError

Cli = Callable[..., tuple[int, str, str]]
ROOT = Path(__file__).resolve().parent.parent
CATALOG = solver.load_catalog()
ASKED = {"model": "32B", "gpu": "h20", "gpus": 2, "max_model_len": 131072}
"""A breakdown that does not train (so its text ends in the planner's call)."""
ARGV = ["--model", "32B", "--gpu", "h20", "--gpus", "2", "--len", "131072"]
"""`ASKED` as ``solve memory``'s flags."""
CALL = 'solver.plan("Qwen3-32B", gpu="H20-96GB", budget_gpus=2, max_model_len=131072, margin=0.01'
"""The planner's call for `ASKED` with `fitted` (whose default margin is 0.01), up to its memory keyword."""


def _host_in_api_words(printed: str) -> str:
    """`solve memory`'s text of `ASKED` with the options its host memory line and caution name (s88: its 384.1 GiB at
    start-up, past the 256 assumed for 2 GPUs) as the API's keywords name them; s87: the line's hint."""
    return printed.replace("--trinity-version counts", "trinity_version counts").replace(
        "--host-ram", "host_ram_gb").replace("--node-gpus", "node_gpus")


@pytest.fixture(scope="module")
def fitted() -> solver.MemoryModel:
    """A memory model of one's own (its source: ``calibrated on my-cells.yaml and the documented tables``), fitted
    once for the tests that use it, not as the module is collected."""
    return solver.calibrate_memory_model([ROOT / "docs" / "examples" / "my-cells.yaml"], with_tables=True).memory_model


@pytest.fixture
def memory_file(tmp_path: Path, fitted: solver.MemoryModel) -> Path:
    """`fitted` written as a memory-model file."""
    path = tmp_path / "mine.yaml"
    path.write_text(memory_model_yaml(fitted), encoding="utf-8")
    return path


def test_memory_text_with_a_memory_model_file_is_solve_memory_s_but_for_the_call_which_names_the_file(
        cli: Cli, monkeypatch: pytest.MonkeyPatch, memory_file: Path, fitted: solver.MemoryModel) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    status, printed, _ = cli("memory", *ARGV, "--memory-model", str(memory_file))
    answer = solver.memory_answer(**ASKED, memory=str(memory_file))  # type: ignore[arg-type]
    text = solver.memory_text(answer, width=400)
    command = f"  solve {' '.join(ARGV)} --memory-model {memory_file}\n"
    call = f'  {CALL}, memory=solver.load_memory_model("{memory_file}"))\n'
    in_api_words = _host_in_api_words(printed.replace(command, call).replace("--token-budget auto",
                                                                             'token_budget="auto"'))
    # word for word: the keywords' lengths move the host memory caution's wrap (s88)
    assert status == 1 and printed.endswith(command) and text.split() == in_api_words.split()
    assert f"margin 0.01, memory model: {fitted.own_source}\n" in text and "MEMORY" not in text
    assert (answer.memory_model, answer.memory_model_source) == (str(memory_file), fitted.own_source)
    # The JSON is solve memory --json's, the file and the source in it.
    _, out, _ = cli("memory", *ARGV, "--memory-model", str(memory_file), "--json")
    in_command_words = solver.memory_answer(**ASKED, memory=str(memory_file),  # type: ignore[arg-type]
                                            option_names=COMMAND_OPTIONS)
    assert json.loads(solver.render.memory_json(in_command_words)) == json.loads(out)
    assert (json.loads(out)["memory_model"], json.loads(out)["memory_model_source"]) == (
        str(memory_file), fitted.own_source)
    # The call runs as printed, with the same memory model.
    (planned,) = eval(call.strip(), {"solver": solver})  # the text's own call
    assert planned.memory_model_source == fitted.own_source and planned.margin == answer.margin


def test_memory_text_with_a_memory_model_passed_asks_for_it_by_its_source(
        cli: Cli, monkeypatch: pytest.MonkeyPatch, memory_file: Path, fitted: solver.MemoryModel) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    _, printed, _ = cli("memory", *ARGV, "--memory-model", str(memory_file))
    answer = solver.memory_answer(**ASKED, memory=fitted)  # type: ignore[arg-type]
    assert (answer.memory_model, answer.memory_model_source) == (None, fitted.own_source)
    text = solver.memory_text(answer, width=400)
    asks = ("to find a setting that trains, run the planner, which tries every SP, Env and Offload (lower token "
            'budgets too with token_budget="auto"), with memory= the MemoryModel you passed '
            f"({fitted.own_source}):\n  {CALL})\n")
    assert text.endswith(asks) and "MEMORY" not in text
    # Above the planner's lines, solve memory's with the file, word for word (the heading names the source).
    assert text[:-len(asks)].split() == _host_in_api_words(printed[:printed.index("to find a setting")]).split()


def test_memory_text_of_the_shipped_memory_model_names_none() -> None:
    answer = solver.memory_answer(**ASKED)  # type: ignore[arg-type]
    text = solver.memory_text(answer, width=400)
    assert (answer.memory_model, answer.memory_model_source) == (None, None)
    assert "memory model:" not in text and text.endswith(
        '(lower token budgets too with token_budget="auto"):\n'
        '  solver.plan("Qwen3-32B", gpu="H20-96GB", budget_gpus=2, max_model_len=131072)\n')


def test_a_memory_answer_s_json_from_before_the_source_reads_back() -> None:
    printed = solver.memory_answer(**ASKED).model_dump(mode="json")  # type: ignore[arg-type]
    del printed["memory_model_source"]
    assert solver.MemoryAnswer.model_validate(printed).memory_model_source is None


WEIGHTS = "offload: 0.5\nsp: 0.1\nenv: 0.05\n"


def test_map_text_names_a_weights_file_as_solve_map_does(cli: Cli, monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Path) -> None:
    monkeypatch.setenv("COLUMNS", "160")
    weights = tmp_path / "costs.yaml"
    weights.write_text(WEIGHTS, encoding="utf-8")
    argv = ["map", "--gpu", "h100", "--model", "8B", "--gpus-up-to", "2", "--weights", str(weights)]
    _, printed, _ = cli(*argv)
    maps = solver.map_plans("8B", gpu="h100", gpus_up_to=2, weights=weights, option_names=COMMAND_OPTIONS)
    assert f", weights {weights}\n" in printed and maps[0].weights == str(weights)
    assert solver.map_text(maps, option_names=COMMAND_OPTIONS) == printed
    _, out, _ = cli(*argv, "--json")
    assert json.loads(solver.render.map_json(maps)) == json.loads(out) and json.loads(out)[0]["weights"] == str(weights)
    # Weights passed as such have no file to name: the title names none, and the JSON leaves the key out.
    passed = solver.map_plans("8B", gpu="h100", gpus_up_to=2, weights=solver.load_weights(weights),
                              option_names=COMMAND_OPTIONS)
    assert passed[0].weights is None and "weights" not in json.loads(solver.render.map_json(passed))[0]
    assert solver.map_text(passed, option_names=COMMAND_OPTIONS) == printed.replace(f", weights {weights}", "")


def test_map_plans_weights_file_errors_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(QueryError, match="^weights must be a non-empty path, got ''$"):
        solver.map_plans("8B", gpu="h100", gpus_up_to=2, weights="")
    with pytest.raises(QueryError, match="^weights must be a Weights, a Path, a str or None, got 3$"):
        solver.map_plans("8B", gpu="h100", gpus_up_to=2, weights=3)  # type: ignore[arg-type]
    with pytest.raises(solver.OneLineError) as raised:
        solver.map_plans("8B", gpu="h100", gpus_up_to=2, weights=tmp_path / "absent.yaml")
    assert "absent.yaml" in str(raised.value) and "\n" not in str(raised.value)


BUDGETS = list(range(1, 11))
"""Budgets past nodes of 2 whose runs are more than `PAST_NODE_COLUMNS`: ``gpus_up_to`` leaves some out."""


def test_map_text_of_budgets_listed_is_solve_map_budgets_s(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "160")
    asked = {"gpu": "a100", "node_gpus": 2, "option_names": COMMAND_OPTIONS}
    _, listed_printed, _ = cli("map", "--gpu", "a100", "--model", "8B", "--node-gpus", "2", "--budgets",
                               ",".join(map(str, BUDGETS)))
    _, up_to_printed, _ = cli("map", "--gpu", "a100", "--model", "8B", "--node-gpus", "2", "--gpus-up-to", "10")
    listed = solver.map_plans("8B", budgets=BUDGETS, **asked)  # type: ignore[arg-type]
    up_to = solver.map_plans("8B", gpus_up_to=10, **asked)  # type: ignore[arg-type]
    assert listed[0].budget_gpus == up_to[0].budget_gpus and (listed[0].budgets_listed, up_to[0].budgets_listed) == (
        True, None)
    assert solver.map_text(listed, option_names=COMMAND_OPTIONS) == listed_printed
    assert solver.map_text(up_to, option_names=COMMAND_OPTIONS) == up_to_printed != listed_printed
    assert "≤6-7 GPUs" in listed_printed and "budgets 6 to 7: columns left out" in up_to_printed
    # The JSON says so only where the budgets were listed; a map's JSON from before reads back as 1 to N.
    (listed_json,) = json.loads(cli("map", "--gpu", "a100", "--model", "8B", "--node-gpus", "2", "--budgets",
                                    ",".join(map(str, BUDGETS)), "--json")[1])
    assert listed_json["budgets_listed"] is True
    assert "budgets_listed" not in json.loads(solver.render.map_json(up_to))[0]
    del listed_json["budgets_listed"]
    assert solver.map_text([solver.GpuMap.model_validate(listed_json)], option_names=COMMAND_OPTIONS) == up_to_printed


def test_a_map_of_nodes_of_one_gpu_says_gpu() -> None:
    (one,) = solver.map_plans("4B", gpu="a100", gpus_up_to=1, node_gpus=1)
    assert solver.map_text((one,)).startswith("A100-80GB: longest context per model and GPU budget, nodes of 1 GPU\n")


def test_answers_text_of_plan_s_answers_alone_is_solve_s_text(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """The answers hold their query: their text is the command's, byte for byte, across what the view takes from
    the query alone (two GPU types, --top, host memory, a train batch, a Trinity release, --explain)."""
    monkeypatch.setenv("COLUMNS", "160")
    status, printed, _ = cli("--model", "8B", "--gpu", "h100,h20", "--len", "65536", "--gpus", "8", "--top", "3",
                             "--host-ram", "512", "--train-batch-size", "96", "--trinity-version", "0.5", "--explain")
    asked = {"gpu": ["h100", "h20"], "max_model_len": 65536, "budget_gpus": 8, "top": 3, "host_ram_gb": 512,
             "train_batch_size": 96, "trinity_version": "0.5", "explain": True}
    answers = solver.plan("8B", **asked, option_names=COMMAND_OPTIONS)  # type: ignore[arg-type]
    assert status == 0 and solver.answers_text(answers) == printed
    assert solver.answers_text(answers, answers[0].query) == printed
    in_api_words = solver.plan("8B", **asked)  # type: ignore[arg-type]
    question = {name: value for name, value in asked.items() if name != "explain"}
    query = solver.make_query(CATALOG, model="8B", **question)  # type: ignore[arg-type]
    assert solver.answers_text(in_api_words) == solver.answers_text(answer_query(query, CATALOG, explain=True), query)


def test_an_answer_s_query_is_kept_out_of_its_json_repr_and_equality() -> None:
    (answer,) = solver.plan("4B", gpu="a100", max_model_len=8192, budget_gpus=2)
    assert answer.query is not None and answer.query.max_model_len == 8192
    assert "query" not in answer.as_json() and "query=" not in repr(answer)
    rebuilt = solver.Answer.model_validate_json(json.dumps(answer.as_json()))
    assert rebuilt.query is None and rebuilt.as_json() == answer.as_json()


def test_answers_text_without_a_query_where_the_answers_hold_none_or_two_is_one_line() -> None:
    (answer,) = solver.plan("4B", gpu="a100", max_model_len=8192, budget_gpus=2)
    (longer,) = solver.plan("4B", gpu="a100", max_model_len=16384, budget_gpus=2)
    rebuilt = solver.Answer.model_validate_json(json.dumps(answer.as_json()))
    for answers, message in (
            ([], "answers: an empty list holds no query: pass the answers of solver.plan, or the query too"),
            ([rebuilt], ("answers[0] holds no query (an answer rebuilt from its JSON keeps none): pass the query "
                         "it answers, answers_text(answers, query)")),
            ([answer, longer], "answers[1] answers another query than answers[0]: pass the answers of one call"),
            ([answer, "x"], "answers[1] must be an Answer, got 'x'")):
        with pytest.raises(QueryError) as raised:
            solver.answers_text(answers)  # type: ignore[arg-type]
        assert str(raised.value) == message
    # A rebuilt answer renders with its query given (its memory figures as the JSON rounds them).
    assert answer.query is not None
    heading = solver.answers_text([answer]).splitlines()[:3]
    assert solver.answers_text([rebuilt], answer.query).splitlines()[:3] == heading


def test_the_api_page_prints_plan_s_answers_alone() -> None:
    page = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    call = 'text = solver.answers_text(solver.plan("4B", gpu="a100", max_model_len=8192, budget_gpus=2))\n'
    assert call in page and "memory=MEMORY" not in page
    shown = page[page.index(">>> print(text)\n"):].split("\n", 1)[1].split("```", 1)[0]
    assert shown == solver.answers_text(solver.plan("4B", gpu="a100", max_model_len=8192, budget_gpus=2))
