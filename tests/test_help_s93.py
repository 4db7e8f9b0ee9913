"""``solve --help`` kept short and grouped (session 93, help): a first-time user finds the few options they need in
titled groups, each in a line or three; the detail lives in docs/cli.md's option reference."""

from __future__ import annotations

import argparse

import pytest
from option_reference import option_reference

from solver.cli.planner import build_parser

HELP_LINES = 160
"""The most lines ``solve --help`` may take at 80 columns (275 before session 93)."""


def test_solve_help_stays_within_its_line_budget(cli, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("COLUMNS", "80")
    status, out, _ = cli("--help")
    assert status == 0 and len(out.splitlines()) <= HELP_LINES


def test_every_option_of_solve_is_in_a_titled_group_of_its_own_kind():
    parser = build_parser()
    grouped = {group.title: [action.option_strings[0] for action in group._group_actions]
               for group in parser._action_groups}
    assert grouped["options"] == ["-h", "--version"]  # argparse's own, and nothing else left ungrouped
    assert list(grouped)[2:] == ["the question", "pins (default: the planner's choice)",
                                 "training setup (default: GRPO, full fine-tuning, or --from-config's)",
                                 "hardware and memory model", "a Trinity config", "output", "solver"]
    assert grouped["the question"][:3] == ["--model", "--gpu", "--gpus"]
    options = [action for action in parser._actions if action.option_strings]
    assert sorted(option for group in grouped.values() for option in group) == sorted(
        action.option_strings[0] for action in options)


def test_the_goals_still_exclude_each_other_inside_their_group(cli):
    status, _, err = cli("--model", "4B", "--maximize", "len", "--minimize", "gpus")
    assert status == 2 and "--maximize and --minimize exclude each other: give one of them" in err


@pytest.mark.parametrize("action", [action for action in build_parser()._actions
                                    if action.option_strings and action.help != argparse.SUPPRESS
                                    and action.option_strings[0] not in ("-h", "--version")],
                         ids=lambda action: action.option_strings[0])
def test_each_option_of_solve_has_its_entry_in_the_option_reference(action: argparse.Action):
    reference = option_reference()
    assert any(f"- {'/'.join(action.option_strings[:2])}{after}" in reference for after in (" ", ":"))
