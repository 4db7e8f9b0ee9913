"""Session 65, apitext2: the API's text view (`solver.answers_text`, `solver.cluster_text`) named the command's flags
in its own lines (``--explain says why``, ``--total-gpus 2 --rollout-gpus 1 keeps ...``) where a notebook user needs
the API's keywords, and ``solve memory``'s breakdown had no text view. The view's lines now name options as the
query's `option_names` do (`API_OPTIONS` by default; the command passes `COMMAND_OPTIONS`, its bytes unchanged), and
`solver.memory_text(answer)` gives ``solve memory``'s text for a `MemoryAnswer`, rendered by the same view."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

import solver
from solver.api import answer_query, config_query, with_config_verdicts
from solver.rules import COMMAND_OPTIONS
from solver.tables import QueryError
from solver.trinity import read_trinity_config

Cli = Callable[..., tuple[int, str, str]]
CATALOG = solver.load_catalog()
ROOT = Path(__file__).resolve().parent.parent
WIDE = 1200
"""Columns wide enough that no line wraps: a keyword longer or shorter than its flag then moves no line break."""
APPLY = {"--emit trinity": "solver.trinity_config"}
"""What the apply row, in every answer with a plan, names in place of ``--emit trinity``."""


def _flags(text: str) -> list[str]:
    """The words of `text` that are flags (``--len``)."""
    return [word for word in text.split() if word.startswith("--")]


@pytest.mark.parametrize(("argv", "asked", "words"), [
    (["--model", "4B", "--gpu", "a100", "--len", "8192", "--gpus", "2"],
     {"model": "4B", "gpu": "a100", "max_model_len": 8192, "budget_gpus": 2},
     {"--total-gpus 2 --rollout-gpus 1 keeps": "total_gpus=2, rollout_gpus=1 keeps", **APPLY}),
    (["--model", "32B", "--gpu", "h20", "--len", "131072", "--gpus", "2"],
     {"model": "32B", "gpu": "h20", "max_model_len": 131072, "budget_gpus": 2},
     {"--token-budget auto reaches": 'token_budget="auto" reaches', "--explain says why": "explain=True says why"}),
    (["--model", "8B", "--gpu", "h100", "--len", "131072", "--gpus", "8", "--top", "3", "--token-budget", "auto"],
     {"model": "8B", "gpu": "h100", "max_model_len": 131072, "budget_gpus": 8, "top": 3, "token_budget": "auto"},
     {"--total-gpus 8 --rollout-gpus 4": "total_gpus=8, rollout_gpus=4", "--margin 0.03": "margin=0.03",
      "does not fit (--token-budget auto)": 'does not fit (token_budget="auto")',
      "(--no-env estimates without it)": "(env=False estimates without it)", **APPLY}),
    (["--model", "8B", "--gpu", "h20", "--maximize", "len", "--gpus", "16"],
     {"model": "8B", "gpu": "h20", "objective": "max_len", "budget_gpus": 16},
     {"--total-gpus 16 --rollout-gpus 8": "total_gpus=16, rollout_gpus=8", "(--node-gpus)": "(node_gpus)",
      "--len 131072": "max_model_len=131072", "--margin 0.03": "margin=0.03",
      "not checked: --host-ram not given": "not checked: host_ram_gb not given",
      # No release named: every rank loads Qwen3-8B, and the host row names the release's own count.
      "--trinity-version counts a release's own, less": "trinity_version counts a release's own, less", **APPLY}),
    (["--model", "8B", "--gpu", "a100", "--len", "32768", "--gpus", "8", "--rollout-gpus", "4"],
     {"model": "8B", "gpu": "a100", "max_model_len": 32768, "budget_gpus": 8, "rollout_gpus": 4},
     {"(documented): --gpus 4": "(documented): budget_gpus=4", "(--rollout-gpus 4 asked": "(rollout_gpus=4 asked",
      **APPLY}),
])
def test_the_text_names_the_api_keywords_where_solve_names_its_flags(
        cli: Cli, monkeypatch: pytest.MonkeyPatch, argv: list[str], asked: dict[str, object],
        words: dict[str, str]) -> None:
    monkeypatch.setenv("COLUMNS", str(WIDE))
    _, printed, _ = cli(*argv)
    query = solver.make_query(CATALOG, **asked)  # type: ignore[arg-type]
    text = solver.answers_text(answer_query(query, CATALOG), query, CATALOG, width=WIDE)
    for flags, keywords in words.items():
        assert flags in printed
        printed = printed.replace(flags, keywords)
    assert text == printed and _flags(text) == []


@pytest.mark.parametrize("gpus", ["h20", "h20,h100"])
def test_a_config_s_apply_row_names_patch_trinity_config(cli: Cli, monkeypatch: pytest.MonkeyPatch,
                                                         gpus: str) -> None:
    """For a config's answers (`with_config_verdicts`), the apply row names the function that applies the plan
    (of one answer: no ``--gpu`` to pick it), where ``solve --from-config`` names ``--write FILE``."""
    monkeypatch.setenv("COLUMNS", str(WIDE))
    monkeypatch.chdir(ROOT / "docs" / "examples")
    _, printed, _ = cli("--from-config", "trinity.yaml", "--gpu", gpus)
    text = Path("trinity.yaml").read_text(encoding="utf-8")
    config = read_trinity_config(text, "trinity.yaml", os.environ)
    query = config_query(CATALOG, config, gpu=gpus.split(","))
    answers = with_config_verdicts(answer_query(query, CATALOG), query, CATALOG, config, text, "trinity.yaml",
                                   os.environ)
    for gpu in ("H20-96GB", "H100-80GB") if "," in gpus else ():
        printed = printed.replace(f"--gpu {gpu} --write FILE", "--write FILE")
    printed = printed.replace("--write FILE writes", "solver.trinity.patch_trinity_config gives")
    printed = printed.replace("--emit trinity", APPLY["--emit trinity"])
    assert solver.answers_text(answers, query, CATALOG, width=WIDE) == printed
    assert printed.count("solver.trinity.patch_trinity_config gives a copy of trinity.yaml") == len(answers)


FLEET = str(ROOT / "docs" / "examples" / "fleet.yaml")
SMALLER_ASKS = str(ROOT / "docs" / "examples" / "smaller-asks.yaml")


def test_a_purchase_s_text_names_the_api_functions(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "160")
    _, printed, _ = cli("cluster", SMALLER_ASKS, "--buy")
    result = solver.buy_nodes(SMALLER_ASKS)
    command = "run solve cluster (--emit-dir writes the configs)"
    assert command in printed
    assert solver.cluster_text(result, SMALLER_ASKS) == printed.replace(
        command, "run solver.place (solver.placement_configs writes the configs)")
    assert solver.cluster_text(result, SMALLER_ASKS, option_names=COMMAND_OPTIONS) == printed


def test_a_cluster_s_notes_name_the_api_keywords() -> None:
    fleet = solver.load_fleet(FLEET)
    required = fleet.jobs[0].name
    result = solver.place(fleet, required=[required], time_limit_s=10)
    api, command = (solver.cluster_text(result, fleet, option_names=names)
                    for names in (solver.rules.API_OPTIONS, COMMAND_OPTIONS))
    assert "(required: true, or --required)" in command
    assert api == command.replace("(required: true, or --required)",
                                  "(the fleet marks it required: true, or the call's required names it)")


def test_cluster_text_s_option_names_must_be_option_names() -> None:
    with pytest.raises(QueryError) as raised:
        solver.cluster_text(solver.place(FLEET), FLEET, option_names="api")  # type: ignore[arg-type]
    assert str(raised.value) == "option_names must be an OptionNames, got 'api'"


MEMORY_CASES = [
    # Fits: the text is what solve memory prints, byte for byte.
    (["--model", "8B", "--gpu", "h100", "--gpus", "8", "--len", "131072", "--sp", "8", "--env"],
     {"model": "8B", "gpu": "h100", "gpus": 8, "max_model_len": 131072, "sp": 8, "env": True},
     {"--trinity-version counts": "trinity_version counts"}),  # s87: the host memory line's hint, as solve's row
    # Does not fit, the host memory given: the planner's call, and the host memory's keyword.
    (["--model", "32B", "--gpu", "h20", "--gpus", "2", "--len", "131072", "--offload", "--host-ram", "64"],
     {"model": "32B", "gpu": "h20", "gpus": 2, "max_model_len": 131072, "offload": True, "host_ram_gb": 64},
     {"--host-ram 64 GiB": "host_ram_gb of 64 GiB",
      "solve --model 32B --gpu h20 --gpus 2 --len 131072 --host-ram 64":
      'solver.plan("Qwen3-32B", gpu="H20-96GB", budget_gpus=2, max_model_len=131072, host_ram_gb=64)',
      "--token-budget auto": 'token_budget="auto"', "--trinity-version counts": "trinity_version counts"}),
    # A mixture of experts (its active parameters in the heading), a token budget and margin of one's own, nodes of 4.
    (["--model", "30B-A3B", "--gpu", "h20", "--gpus", "4", "--len", "32768", "--token-budget", "32768", "--margin",
      "0.1", "--node-gpus", "4"],
     {"model": "30B-A3B", "gpu": "h20", "gpus": 4, "max_model_len": 32768, "max_token_len_per_gpu": 32768,
      "margin": 0.1, "node_gpus": 4},
     {"solve --model 30B-A3B --gpu h20 --gpus 4 --len 32768 --node-gpus 4 --margin 0.1":
      'solver.plan("Qwen3-30B-A3B", gpu="H20-96GB", budget_gpus=4, max_model_len=32768, node_gpus=4, margin=0.1)',
      "--token-budget auto": 'token_budget="auto"', "--trinity-version counts": "trinity_version counts",
      "--host-ram": "host_ram_gb"}),  # s88: its start-up load, past a node of 4's 512 GiB, cautioned
]


@pytest.mark.parametrize(("argv", "asked", "words"), MEMORY_CASES)
def test_memory_text_is_what_solve_memory_prints(cli: Cli, monkeypatch: pytest.MonkeyPatch, argv: list[str],
                                                 asked: dict[str, object], words: dict[str, str]) -> None:
    monkeypatch.setenv("COLUMNS", "160")
    status, printed, _ = cli("memory", *argv)
    answer = solver.memory_answer(**asked)  # type: ignore[arg-type]
    for flags, keywords in words.items():
        assert flags in printed
        printed = printed.replace(flags, keywords)
    text = solver.memory_text(answer)
    # s87: the keywords' lengths may move a line's wrap (the host memory line's hint): word for word
    assert text.split() == printed.split() and status == (0 if answer.trains else 1)
    assert ("B active)" in text) == (asked["model"] == "30B-A3B") and "\x1b" not in text
    assert _flags(text) == []


def test_memory_text_in_colour_only_when_asked(capsys: pytest.CaptureFixture[str]) -> None:
    answer = solver.memory_answer("32B", "h20", 2, 131072)
    assert "\x1b" not in solver.memory_text(answer)
    assert "\x1b[31mdoes not fit" in solver.memory_text(answer, color=True)
    assert capsys.readouterr() == ("", "")


ANSWER = solver.memory_answer("8B", "h100", 8, 32768)


@pytest.mark.parametrize(("arguments", "keywords", "message"), [
    (("8B",), {}, "answer must be a MemoryAnswer, got '8B'"),
    ((solver.estimate_memory("8B", "h100", 8, 32768),), {},
     ("answer must be a MemoryAnswer, got a MemoryEstimate (estimate_memory's, which holds no question to show): "
      "call memory_answer with the same arguments for text")),  # s88: the call that gives one named
    (((ANSWER,),), {}, ("answer must be a MemoryAnswer, got a tuple of 1 MemoryAnswer (memory_answer gives one alone): "
                        "pass one, such as answers[0]")),
    (([ANSWER, ANSWER],), {}, ("answer must be a MemoryAnswer, got a list of 2 MemoryAnswers (memory_answer gives one "
                               "alone): pass one, such as answers[0]")),
    ((ANSWER, "catalog"), {}, "catalog must be a Catalog or None, got 'catalog'"),
    ((ANSWER,), {"width": 5}, "width must be a whole number of columns from 20 to 65536, got 5"),
    ((ANSWER,), {"color": 1}, "color must be True or False, got 1"),
])
def test_memory_text_s_bad_arguments_are_one_line(arguments: tuple[object, ...], keywords: dict[str, object],
                                                  message: str) -> None:
    with pytest.raises(QueryError) as raised:
        solver.memory_text(*arguments, **keywords)  # type: ignore[arg-type]
    assert str(raised.value) == message


def test_the_api_page_shows_the_api_s_text_and_the_words_it_changes() -> None:
    """docs/api.md's "Text" section shows the text its example's `answers_text` returns, in this API's words, and the
    ``$ solve`` block (regenerated by tests/shown_output.py) prints the same but for the words the page lists."""
    page = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    section = page[page.index("## Text, as the command prints it"):page.index("## Words: keywords, not flags")]
    shown_api = section[section.index(">>> print(text)\n"):].split("\n", 1)[1].split("```", 1)[0]
    shown_command = section[section.index("$ solve --model 4B"):].split("\n", 1)[1]
    query = solver.make_query(CATALOG, model="4B", gpu="a100", max_model_len=8192, budget_gpus=2)
    text = solver.answers_text(answer_query(query, CATALOG), query, CATALOG)
    assert shown_api == text
    command = shown_command[:shown_command.index("solve: note: ")]
    for flags, keywords in (("--total-gpus 2 --rollout-gpus 1", "total_gpus=2, rollout_gpus=1"),
                            ("--emit trinity", "solver.trinity_config")):
        assert f"`{flags}`" in section and f"`{keywords}`" in section
        command = command.replace(flags, keywords)
    assert command.split() == text.split()  # the words the same; a shorter keyword may wrap a row's line elsewhere


def test_the_api_page_shows_memory_text_s_text() -> None:
    page = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    shown = page[page.index(">>> print(solver.memory_text(memory, width=120))\n"):].split("\n", 1)[1].split("```")[0]
    memory = solver.memory_answer("32B", "h20", 2, 131072, offload=True, host_ram_gb=64)
    assert shown == solver.memory_text(memory, width=120)
    assert shown.endswith('  solver.plan("Qwen3-32B", gpu="H20-96GB", budget_gpus=2, max_model_len=131072, '
                          'host_ram_gb=64)\n')


def test_memory_answer_holds_the_short_length_note_solve_memory_prints() -> None:
    # `solve memory --len 64` notes that 64 tokens were likely meant as 64k; memory_answer said nothing (apiwords87).
    assert solver.memory_answer("8B", "h100", 8, 64).notes == (
        "max_model_len 64 is 64 tokens; for 65536 tokens write max_model_len=65536",)
    assert solver.memory_answer("8B", "h100", 8, 256, option_names=COMMAND_OPTIONS).notes == (
        "--len 256 is 256 tokens; for 262144 tokens write --len 256k",)
    assert solver.memory_answer("8B", "h100", 8, 65).notes == (  # 65k cuts 65536's thousands: 64k (clusterlines90)
        "max_model_len 65 is 65 tokens; for 65536 tokens write max_model_len=65536",)
    assert ANSWER.notes == () and solver.memory_answer("8B", "h100", 8, 257).notes == ()
    assert "notes" not in ANSWER.model_dump(mode="json")  # the JSON solve memory prints is unchanged
