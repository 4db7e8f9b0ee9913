"""Tests of helper mutants8b (s65): a placement whose required jobs are proven not to fit is infeasible though jobs not
required were cut short or left with undecided ways (mutant w10 of /work/keep/s65/mutants8/), and the mutants the
first helper left alive (k13, k19, m02, m08, x10, t10), each killed here or argued equivalent in its review."""

from __future__ import annotations

import inspect
import io
from collections.abc import Callable
from typing import Any

import pytest
from rich.console import Console
from rich.text import Text
from test_interp_s64 import _nested, _problems

import solver
import solver.cluster.options
from solver.cluster.options import Planner, ways_in_pool
from solver.render.cluster import cluster_text
from solver.render.layout import view_text
from solver.render.maps import _left_out_budgets
from solver.rules import COMMAND_OPTIONS
from solver.tables import AtLeast, Fleet, Job, Pool, QueryError, Setting, load_catalog, load_weights
from solver.trinity import plan_settings, trinity_fragment
from solver.trinity.interpolation import ConfigError, ConfigValues, ResolvesToNothing

CATALOG = load_catalog()
CHAT_A = Job(name="chat-a", model="Qwen3-14B", max_model_len=65536, rollout_gpus=4, required=True)
CHAT_B = Job(name="chat-b", model="Qwen3-14B", max_model_len=32768, rollout_gpus=4, required=True)
PROBE = Job(name="probe", model="Qwen3-0.6B", max_model_len=8192)
TOO_SMALL = Fleet(pools=(Pool(name="a", gpu="A100-80GB", nodes=1, gpus_per_node=8),), jobs=(CHAT_A, CHAT_B, PROBE))
"""One node of 8 A100s: the two required 14B jobs take 14 GPUs at their fewest, so no placement places both; chat-a
asks 3 questions, chat-b 1 more (the required jobs are asked first), the probe the rest."""
NOT_TOGETHER = ("the required jobs (chat-a, chat-b) do not all fit the fleet together: at their fewest they take 14 "
                "GPUs, more than the fleet's 8; solver.buy_nodes names the nodes to add for them")


def _questions(monkeypatch: pytest.MonkeyPatch, count: int) -> None:
    """Let the jobs' ways of a one-second time limit ask `count` new questions (the wall clock's net far past it)."""
    monkeypatch.setattr(solver.cluster.options, "WAYS_QUESTIONS_PER_SECOND", count)
    monkeypatch.setattr(solver.cluster.options, "WAYS_WALL_SHARE", 100.0)


def _undecided(monkeypatch: pytest.MonkeyPatch, model: str) -> None:
    """Make every planner solve behind the ways of jobs of `model` run out of time: a plan found is not proven best
    (``feasible``), none found is not proven none (``unknown``)."""
    answer_for = solver.cluster.options.answer_for

    def timed_out(*args: Any, **kwargs: Any) -> solver.Answer:
        answer = answer_for(*args, **kwargs)
        if args[1].model != model:
            return answer
        return answer.model_copy(update={"status": "feasible" if answer.plans else "unknown"})

    monkeypatch.setattr(solver.cluster.options, "answer_for", timed_out)


def test_required_jobs_proven_not_to_fit_are_infeasible_though_a_job_not_required_was_cut_short(
        monkeypatch: pytest.MonkeyPatch):
    # w10: the probe is cut short, but it is not required, and a placement may leave it out: no way of its would make
    # room for chat-a and chat-b, which CP-SAT proves do not fit. Before, the status was unknown.
    _questions(monkeypatch, 4)
    result = solver.place(TOO_SMALL, catalog=CATALOG, time_limit_s=1)
    assert (result.status, result.ways_cut_short, result.placements) == ("infeasible", ("probe",), ())
    assert {(entry.job, entry.reason) for entry in result.unplaced} == {
        (job.name, NOT_TOGETHER) for job in TOO_SMALL.jobs}
    assert cluster_text(result, TOO_SMALL, width=200).splitlines()[:2] == [
        "status: infeasible",
        ("the time limit cut working out the jobs' ways short: probe got none (the jobs of more priority are asked "
         "first), and as none of them is required, their ways would not make room for the required jobs")]


def test_a_required_job_cut_short_still_leaves_the_status_unknown(monkeypatch: pytest.MonkeyPatch):
    # chat-b, required, gets no ways: a way of its might fit beside chat-a, so nothing is proven.
    _questions(monkeypatch, 3)
    result = solver.place(TOO_SMALL, catalog=CATALOG, time_limit_s=1)
    assert (result.status, result.ways_cut_short) == ("unknown", ("chat-b", "probe"))
    assert {entry.reason for entry in result.unplaced} == {
        "no placement found within the time limit (raise time_limit_s)"}


def test_undecided_ways_of_a_job_not_required_leave_the_proof_standing(monkeypatch: pytest.MonkeyPatch):
    # The same argument for the ways a solve left undecided: the probe's change nothing for the required jobs.
    _undecided(monkeypatch, "Qwen3-0.6B")
    result = solver.place(TOO_SMALL, catalog=CATALOG)
    assert (result.status, result.ways_cut_short, result.undecided_ways > 0) == ("infeasible", (), True)
    assert {entry.reason for entry in result.unplaced} == {NOT_TOGETHER}
    assert cluster_text(result, TOO_SMALL, width=200).splitlines()[1] == (
        f"{result.undecided_ways} questions about the jobs' ways to run ran out of time (time_limit_s), none behind "
        "the required jobs' ways: the required jobs do not fit whatever they would answer")


def test_undecided_ways_of_a_required_job_leave_the_status_unknown(monkeypatch: pytest.MonkeyPatch):
    # The 14B jobs' solves ran out of time: a way of theirs may be left out, so no placement is proven not to exist.
    _undecided(monkeypatch, "Qwen3-14B")
    result = solver.place(TOO_SMALL, catalog=CATALOG)
    assert (result.status, result.undecided_ways > 0) == ("unknown", True)


def test_a_required_job_that_fits_nowhere_is_infeasible_though_a_job_not_required_has_undecided_ways(
        monkeypatch: pytest.MonkeyPatch):
    # With 6 rollout GPUs, no trainer GPU count of chat-a has a layout on an 8-GPU node: it fits nowhere, as its
    # decided solves prove, whatever the probe's undecided ones would say (before: unknown); its own undecided leave
    # that open.
    fleet = TOO_SMALL.model_copy(update={"jobs": (CHAT_A.model_copy(update={"rollout_gpus": 6}), PROBE)})
    for model, status in (("Qwen3-0.6B", "infeasible"), ("Qwen3-14B", "unknown")):
        with monkeypatch.context() as patched:
            _undecided(patched, model)
            result = solver.place(fleet, catalog=CATALOG)
        assert (result.status, result.no_way_to_run, result.undecided_ways > 0) == (status, ("chat-a",), True)


def test_a_value_read_before_still_marks_the_values_reading_it_as_reading_the_environment():
    # k13 (a value resolved before, which read an environment variable, not re-marked where another reads it): w's
    # key name comes from the environment, so r's missing key may be there in the run's; read w first, r is still
    # not judged (ConfigError, not ResolvesToNothing).
    values = ConfigValues({"w": "${oc.env:WHICH,nope}", "b": {"c": 1}, "r": "${b.${w}}"}, {})
    assert values.get(("w",)) == "nope"
    with pytest.raises(ConfigError, match="the config has no b.nope") as raised:
        values.get(("r",))
    assert not isinstance(raised.value, ResolvesToNothing)


def test_a_flag_given_as_text_is_shown_as_the_text_it_is():
    # k19 (the value shown decoded): OmegaConf's bool field reads the text '1.5', not the number 1.5.
    path = ("trainer", "trainer_config", "critic", "model", "fsdp_config", "offload_policy")
    assert _problems(_nested(path, "1.5")) == [("wrong-type", (
        "trainer.trainer_config.critic.model.fsdp_config.offload_policy must be true or false, got '1.5': Trinity 0.5 "
        "refuses the config, and 0.6 on verl before 0.8 keeps it as written, which its trainer's typed config "
        "(OmegaConf's bool field) refuses as the trainer starts, and on verl 0.8 or later ignores it; the notes that "
        "read it are not judged"))]


def test_a_map_of_exactly_five_runs_keeps_one_that_holds_no_power_of_two(cli: Callable[..., tuple[int, str, str]]):
    # m02 (`<=` -> `<`): budgets 1 to 20 make five runs (1, 2-3, 4-7, 8-15, 16-20); the four powers of two below 20
    # and 20 itself leave 1 out, but five runs are all shown.
    status, out, _ = cli("map", "--gpu", "h100", "--model", "8B", "--gpus-up-to", "20")
    header = next(line for line in out.splitlines() if line.startswith("┃"))
    assert status == 0 and [cell.strip() for cell in header.strip("┃").split("┃")][1:] == [
        "≤1 GPU", "≤2-3 GPUs", "≤4-7 GPUs", "≤8-15 GPUs", "≤16-20 GPUs"]
    assert "columns left out" not in out


def test_two_budgets_left_out_are_named_in_the_plural():
    # m08 (`> 1` -> `> 2`): no map of 17 to 64 GPUs scanned (8B on H100 and A100, 4B on H20, 32B on A100, 0.6B on
    # H100) leaves exactly two budgets out, so the line's words are asked of the columns directly.
    assert _left_out_budgets([1, 2, 3, 4], [(1, 1), (3, 3)], COMMAND_OPTIONS) == (
        "budgets 2 and 4: columns left out (--budgets maps them; --json has every budget)")
    assert _left_out_budgets([1, 2, 3], [(1, 2)], COMMAND_OPTIONS).startswith("budget 3: columns left out")


def test_a_coloured_text_view_gives_the_shades_in_true_colour():
    # x10 (the standard 16 colours): the lightest shade, #e8f5e9, is written as its RGB, not the nearest of 16.
    fleet = TOO_SMALL.model_copy(update={"jobs": (PROBE,)})
    text = cluster_text(solver.place(fleet, catalog=CATALOG), fleet, width=120, color=True)
    assert "\x1b[30;48;2;232;245;233mvanilla\x1b[0m" in text


def test_a_coloured_text_view_is_in_true_colour_after_a_console_of_fewer_colours_printed_its_shade():
    # CI, session 85: rich keeps a style's codes from its first rendering, so the test above failed where an earlier
    # test in its process had printed the shade in 256 or 16 colours.
    # A shade of its own for each colour system, which no other test prints first.
    for fewer, shade, codes in (("256", "black on #123456", "18;52;86"), ("standard", "black on #123457", "18;52;87")):
        Console(file=io.StringIO(), color_system=fewer, force_terminal=True).print(Text("x", style=shade))
        assert view_text(Text("vanilla", style=shade), width=40, color=True) == f"\x1b[30;48;2;{codes}mvanilla\x1b[0m\n"


def test_plan_settings_takes_no_option_names_and_the_fragment_still_checks_its_own():
    # plan_settings' option_names worded only the keys' comments, which its settings drop: gone, with its callers'.
    # trinity_fragment checks its own first (before, the header's host memory source read it: an AttributeError).
    assert "option_names" not in inspect.signature(plan_settings).parameters
    plan = solver.plan("Qwen3-4B", max_model_len=8192, budget_gpus=4)[0].plans[0]
    with pytest.raises(QueryError) as raised:
        trinity_fragment(plan, CATALOG.model("Qwen3-4B"), option_names="api")  # type: ignore[arg-type]
    assert str(raised.value) == "option_names must be an OptionNames, got 'api'"


def test_a_stretch_held_to_its_at_most_keeps_env_at_the_roomy_margin():
    # t10 (the roomy question's re-ask at the ceiling unpinned from Env): on 8 A100s Qwen3-4B's longest passes 49152,
    # the at_most, where the plan is thin; the roomy margin is Env's, so the re-ask there keeps Env (unpinned, SP=4
    # without Env is cheaper, and that margin does not measure its room). A placement asks 8 GPUs on the evidence
    # `auto` only where the tables' counts give the job no way in the pool (here 1, 2, 4 and 6 do): asked directly.
    fleet = TOO_SMALL.model_copy(update={"jobs": (Job(name="j", model="Qwen3-4B",
                                                      max_model_len=AtLeast(at_least=32768, at_most=49152)),)})
    ways = ways_in_pool(Planner(CATALOG, load_weights(), "auto"), fleet, 0, 0, (8,), "auto")
    assert [(way.plan.gpus, way.plan.max_model_len, way.plan.setting) for way in ways] == [
        (8, 49152, Setting(env=True, sp=4))]
