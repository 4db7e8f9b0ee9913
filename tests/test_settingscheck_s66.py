"""s66 settingscheck: every way rft-solver gives a plan's Trinity settings (--emit's and --out's fragment, --json's
``apply``, `trinity_config`, `trinity_settings`, `placement_configs`, `placement_settings`, `plan_settings`) makes
them in one function that checks them against Trinity's rules (`solver.trinity.settings.fragment_keys`): settings
that would break them are an internal error on every path, checked once per fragment; and the arguments that decide
them are one `SettingsArguments`, of `plan_settings`' names, which `settings_for` and `fragment_for` take."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

import solver
import solver.trinity.checks
from solver.query import make_query
from solver.results import Answer, ClusterResult, SettingsArguments
from solver.solve import plan as solve
from solver.tables import load_catalog
from solver.trinity import fragment_for, plan_fragment, plan_settings, settings_for
from solver.trinity.plan_keys import PlanKey

FLEET = Path(__file__).resolve().parent.parent / "docs" / "examples" / "fleet.yaml"
BROKEN = r"^the Trinity config made for .* breaks Trinity's rules: \[.*max_token_len_per_gpu.*\]$"
"""The internal error of settings that break Trinity's rules: here, a token budget too small for the length."""


@cache
def _answer() -> Answer:
    """Qwen3-4B on exactly 2 A100s at 24576 with 2 rollout GPUs: SP=2, a cluster section."""
    catalog = load_catalog()
    (answer,) = solve(make_query(catalog, model="4B", gpu="a100", objective="cheapest", budget_gpus=2, exact=True,
                                 max_model_len=24576, rollout_gpus=2), catalog)
    assert answer.best is not None and answer.best.sp == 2
    return answer


@cache
def _placed() -> ClusterResult:
    """The example fleet placed."""
    return solver.place(FLEET)


def _budget_of_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every plan's keys from here on with a token budget of 1 per GPU, which holds no sequence: a plan Trinity
    refuses, forced through where the keys are made."""
    from solver.trinity import settings

    made = settings.keys_for_plan

    def broken(*arguments: Any, **options: Any) -> list[PlanKey]:
        return [key.model_copy(update={"value": 1}) if key.path == ("trainer", "max_token_len_per_gpu") else key
                for key in made(*arguments, **options)]

    monkeypatch.setattr(settings, "keys_for_plan", broken)


def _make_plan_settings() -> object:
    answer = _answer()
    assert answer.best is not None
    return plan_settings(answer.best, load_catalog().model(answer.model), 2)


PATHS: dict[str, Callable[[], object]] = {
    "trinity_settings": lambda: solver.trinity_settings(_answer()),
    "trinity_config": lambda: solver.trinity_config(_answer()),
    "placement_settings": lambda: solver.placement_settings(_placed(), FLEET),
    "placement_configs": lambda: solver.placement_configs(_placed(), FLEET),
    "plan_settings": _make_plan_settings,
}


@pytest.mark.parametrize("path", PATHS)
def test_every_api_path_refuses_settings_that_break_trinitys_rules(path: str, monkeypatch: pytest.MonkeyPatch):
    PATHS[path]()  # made and checked as they are
    _budget_of_one(monkeypatch)
    with pytest.raises(RuntimeError, match=BROKEN):
        PATHS[path]()


@pytest.mark.parametrize("output", [["--json"], ["--emit", "trinity"]])
def test_solve_json_and_emit_refuse_settings_that_break_trinitys_rules(
        output: list[str], cli: Callable[..., tuple[int, str, str]], monkeypatch: pytest.MonkeyPatch):
    query = ["--model", "4B", "--gpu", "a100", "--gpus", "2", "--exact", "--len", "24576", "--rollout-gpus", "2"]
    status, out, _ = cli(*query, *output)
    assert status == 0 and out
    _budget_of_one(monkeypatch)
    with pytest.raises(RuntimeError, match=BROKEN):
        cli(*query, *output)


def test_a_fragment_is_checked_once_and_its_settings_are_what_was_checked(monkeypatch: pytest.MonkeyPatch):
    # One check, on the settings: the text plan_fragment writes says the same keys (it refuses one that does not).
    checked: list[object] = []
    check = solver.trinity.checks.trinity_config_problems  # s77: the codes, for DPO's pair size (test_dpofrag_s77)

    def counted(mapping: Any, *arguments: Any, **options: Any) -> list[Any]:
        checked.append(mapping)
        return check(mapping, *arguments, **options)

    monkeypatch.setattr(solver.trinity.checks, "trinity_config_problems", counted)
    answer = _answer()
    assert answer.best is not None
    text, settings = plan_fragment(answer.best, load_catalog().model(answer.model), 2)
    assert checked == [settings.config] and "max_token_len_per_gpu: 24576" in text


def test_settings_arguments_are_plan_settings_parameters_with_their_defaults():
    # docs/api.md: one SettingsArguments, of plan_settings' names and defaults, is what settings_for and fragment_for
    # take (the API's and the command's answers and placements build it by name, which mypy checks).
    parameters = inspect.signature(plan_settings).parameters
    assert SettingsArguments._fields == tuple(parameters)
    assert SettingsArguments._field_defaults == {name: parameter.default for name, parameter in parameters.items()
                                                 if parameter.default is not inspect.Parameter.empty}
    answer = _answer()
    assert answer.best is not None
    arguments = SettingsArguments(answer.best, load_catalog().model(answer.model), 2)
    assert settings_for(arguments) == plan_settings(*arguments[:3]) == fragment_for(arguments)[1]
