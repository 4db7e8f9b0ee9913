"""The CLI's small inconsistencies a careful user trips on, mended: an option several commands take has one metavar
(--sp S, --time-limit SECONDS); --time-limit takes seconds with their unit (10s), and a count that is no whole
number names its range; an empty --gpu or --model is refused in the same words everywhere; mutually exclusive
options are refused as contradicting ones are; --explain's '-' reaches where a table's rows end, not a limit; an
option that says the opposite of a one-way flag, or a flag, written without hyphens or with underscores, gets the
same hint as written with them."""

from __future__ import annotations

import argparse
from collections import defaultdict
from collections.abc import Callable
from importlib import import_module

import pytest

from solver.cli import _COMMANDS, _PLANNER

Cli = Callable[..., tuple[int, str, str]]
USAGE = "usage: {} [options] (--help lists them)\n"


def _parsers() -> dict[str, argparse.ArgumentParser]:
    """Every command's parser, by its prog."""
    commands = (_PLANNER, *_COMMANDS.values())
    built = [getattr(import_module(f"solver.cli.{module}"), build)() for module, build, _ in commands]
    return {parser.prog: parser for parser in built}


def test_an_option_several_commands_take_has_one_metavar_in_each():
    metavars: dict[str, set[str | None]] = defaultdict(set)
    for parser in _parsers().values():
        for action in parser._actions:
            for option in action.option_strings:
                metavars[option].add(action.metavar if action.nargs != 0 else "(flag)")
    differing = {option: found for option, found in metavars.items() if len(found) > 1}
    # solve's and solve map's --token-budget take a mode (default, auto) or a cap (N, s80's keepbudget and review80c);
    # solve cluster's a mode alone; solve memory's, tokens per GPU: three kinds of value
    assert differing == {"--token-budget": {"MODE|N", "MODE", "T"}}
    assert metavars["--sp"] == {"S"} and metavars["--time-limit"] == {"SECONDS"}


def test_the_sp_help_reads_alike_in_each_command_that_takes_it():
    helps = {prog: next(action.help for action in parser._actions if "--sp" in action.option_strings)
             for prog, parser in _parsers().items() if "--sp" in parser._option_string_actions}
    rules = "it divides the trainer GPUs and the attention heads, and SP and the KV heads divide one another"
    assert {prog: tuple(str(words).split(": ", 1)) for prog, words in helps.items()} == {
        "solve": ("pin the Ulysses SP degree", rules), "solve memory": ("Ulysses SP degree (default 1)", rules)}


@pytest.mark.parametrize(("written", "seconds"), [("10", 10.0), ("10s", 10.0), ("0.5s", 0.5), (" 2 s ", 2.0),
                                                  ("1e2s", 100.0)])
def test_the_time_limit_takes_seconds_with_or_without_their_unit(written: str, seconds: float):
    for prog in ("solve", "solve map"):
        assert _parsers()[prog].parse_args(["--time-limit", written]).time_limit == seconds
    cluster = _parsers()["solve cluster"]
    assert cluster.parse_args(["fleet.yaml", f"--time-limit={written}"]).time_limit == seconds


@pytest.mark.parametrize(("argv", "error"), [
    (["--model", "8B", "--time-limit", "10m"],
     ("solve: error: argument --time-limit: expected a number of seconds (10 or 10s), got '10m': 10m is 600 seconds, "
      "give 600")),
    (["--model", "8B", "--time-limit", "s"],
     "solve: error: argument --time-limit: expected a number of seconds (10 or 10s), got 's'"),
    (["--model", "8B", "--time-limit", "10ss"],
     "solve: error: argument --time-limit: expected a number of seconds (10 or 10s), got '10ss'"),
    (["--model", "8B", "--time-limit", "0s"],
     "solve: error: argument --time-limit: must be a number above 0 and at most 1000000000, got 0s"),
    (["map", "--time-limit", "-1s"],
     "solve map: error: argument --time-limit: must be a number above 0 and at most 1000000000, got -1s"),
    # a count that is no whole number names the range it takes, as a config.json's field does
    (["--model", "8B", "--gpus", "four"],
     "solve: error: argument --gpus: expected a whole number from 1 to 65536, got 'four'"),
    (["--model", "8B", "--top", "all"],
     "solve: error: argument --top: expected a whole number from 1 to 100, got 'all'"),
    (["--model", "8B", "--workers", "2.0"],
     "solve: error: argument --workers: expected a whole number from 1 to 1024, got '2.0' (write 2.0 as 2)"),
    (["--model", "8B", "--rollout-gpus", "none"],
     "solve: error: argument --rollout-gpus: expected a whole number from 0 to 65536, got 'none'"),
    (["map", "--budgets", "4,eight"],
     "solve map: error: argument --budgets: expected a whole number from 1 to 64, got 'eight'"),
])
def test_a_bad_number_is_told_what_the_option_takes(cli: Cli, argv: list[str], error: str):
    assert cli(*argv) == (2, "", USAGE.format(error.split(":")[0]) + error + "\n")


@pytest.mark.parametrize(("argv", "error"), [
    (["tables", "--gpu", ""], "solve tables: error: argument --gpu: an empty name in '': give a GPU type (a100)"),
    (["memory", "--model", "4B", "--gpu", "", "--gpus", "1", "--len", "8k"],
     "solve memory: error: argument --gpu: an empty name in '': give a GPU type (a100)"),
    (["memory", "--model", "4B", "--gpu", " ", "--gpus", "1", "--len", "8k"],
     "solve memory: error: argument --gpu: an empty name in ' ': give a GPU type (a100)"),
    (["--gpu", ""],
     "solve: error: argument --gpu: an empty name in '': give a GPU type, or several separated by commas (a100,h100)"),
    (["map", "--gpu", ""], ("solve map: error: argument --gpu: an empty name in '': give a GPU type, or several "
                            "separated by commas (a100,h100)")),
    (["--model", "", "--gpu", "a100"], "solve: error: argument --model: an empty name in '': give a model (4B)"),
    (["tables", "--model", ""], "solve tables: error: argument --model: an empty name in '': give a model (4B)"),
    (["memory", "--model", "", "--gpu", "a100", "--gpus", "1", "--len", "8k"],
     "solve memory: error: argument --model: an empty name in '': give a model (4B)"),
    (["map", "--model", ""], ("solve map: error: argument --model: an empty name in '': give a model, or several "
                              "separated by commas (32B,8B)")),
])
def test_an_empty_name_is_refused_in_the_same_words_by_every_command(cli: Cli, argv: list[str], error: str):
    assert cli(*argv) == (2, "", USAGE.format(error.split(":")[0]) + error + "\n")


def test_a_list_where_one_gpu_type_is_asked_is_still_named_as_a_list(cli: Cli):
    status, out, err = cli("memory", "--model", "4B", "--gpu", "a100,h100", "--gpus", "1", "--len", "8k")
    assert (status, out) == (2, "") and err == (
        "solve memory: error: GPU 'a100,h100' lists 2 (A100-80GB, H100-80GB) where one is asked for: give one, and "
        "ask for each in turn\n")


@pytest.mark.parametrize(("argv", "error"), [
    (["--model", "4B", "--maximize", "len", "--minimize", "gpus"],
     "solve: error: --maximize and --minimize exclude each other: give one of them"),
    (["--model", "4B", "--minimize=gpus", "--len", "8k", "--maximize=len"],
     "solve: error: --minimize and --maximize exclude each other: give one of them"),
    (["map", "--gpus-up-to", "8", "--budgets", "16"],
     "solve map: error: --gpus-up-to and --budgets exclude each other: give one of them"),
    (["map", "--budgets=16", "--gpus-up-to=8"],
     "solve map: error: --budgets and --gpus-up-to exclude each other: give one of them"),
    # an on/off pair, also a mutually exclusive group, is still named as contradicting
    (["cluster", "fleet.yaml", "--no-estimate", "--estimate"],
     "solve cluster: error: --no-estimate and --estimate contradict each other: give one of them"),
    (["--model", "4B", "--env", "--no-env"],
     "solve: error: --env and --no-env contradict each other: give one of them"),
])
def test_options_that_do_not_go_together_are_refused_in_one_way(cli: Cli, argv: list[str], error: str):
    assert cli(*argv) == (2, "", USAGE.format(error.split(":")[0]) + error + "\n")


@pytest.mark.parametrize(("argv", "error"), [
    (["--model", "8B", "--no_json"],
     "solve: error: unrecognized arguments: --no_json (the default is without --json: leave --no_json out)"),
    (["--model", "8B", "--No-Json"],
     "solve: error: unrecognized arguments: --No-Json (the default is without --json: leave --No-Json out)"),
    (["calibrate", "--withouttables"],
     ("solve calibrate: error: unrecognized arguments: --withouttables (the default is without --with-tables: leave "
      "--withouttables out)")),
    (["calibrate", "--without_tables"],
     ("solve calibrate: error: unrecognized arguments: --without_tables (the default is without --with-tables: "
      "leave --without_tables out)")),
    (["cluster", "fleet.yaml", "--No_Widen"],
     "solve cluster: error: unrecognized arguments: --No_Widen (did you mean --no-widen?)"),
    (["--model", "8B", "--noenv"], "solve: error: unrecognized arguments: --noenv (did you mean --no-env?)"),
    (["memory", "--nooffload"],
     "solve memory: error: unrecognized arguments: --nooffload (did you mean --no-offload?)"),
])
def test_a_flag_or_its_opposite_written_without_hyphens_gets_the_hint_it_gets_with_them(cli: Cli, argv: list[str],
                                                                                        error: str):
    assert cli(*argv) == (2, "", USAGE.format(error.split(":")[0]) + error + "\n")


def test_explain_says_where_a_tables_rows_end_not_a_last_row_that_reads_as_a_limit(cli: Cli):
    status, out, err = cli("--model", "14B", "--gpu", "a100-80gb", "--len", "100k", "--explain")
    lines = [" ".join(line.split()) for line in out.splitlines() if line.startswith("no_setting")]
    assert (status, err) == (1, "") and lines[:2] == [
        ("no_setting the A100-80GB table for 1 GPU says '-' for Qwen3-14B from 28672 tokens to 32768, where its rows "
         "end: nothing trained there"),
        ("no_setting the A100-80GB table for 2 GPUs says '-' for Qwen3-14B from 51200 tokens to 71680, where its rows "
         "end: nothing trained there")]
    assert "last row" not in out


def test_the_train_batch_help_says_which_releases_need_the_trainer_gpus_to_divide_it():
    # A user on Trinity 0.5.1 reads solve's --train-batch-size help, picks a batch the data-parallel ranks divide,
    # and gets no plan: the rule the planner keeps for 0.5.0 and 0.5.1 (docs/planner.md, solve map's
    # --trinity-version help) is the trainer GPUs themselves, which the help of every command that takes the
    # option must say.
    for prog in ("solve", "solve map"):
        (batch,) = [action for action in _parsers()[prog]._actions if "--train-batch-size" in action.option_strings]
        assert batch.help is not None and "0.5.0 and 0.5.1" in batch.help and "trainer GPUs" in batch.help, prog
