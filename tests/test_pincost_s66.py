"""A pinned answer says what the pins cost (s66, pincost): where --sp, --env/--no-env, --offload/--no-offload or
--exact are given, the planner asks the same question without them and the answer names that best plan on an
``unpinned`` line (``Answer.unpinned`` in the JSON and the API), with the step time, tokens or GPUs the pins cost, or
that they cost nothing; without pins, no line and no extra question."""

from __future__ import annotations

import json
from collections.abc import Callable
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest
from command_words import make_query
from test_pinsolve_s67 import CATALOG, _reference_best

import solver
import solver.solve
from solver.solve import _keeping, fewest_limits_dropped

Cli = Callable[..., tuple[int, str, str]]

ASKED = ("--model", "8B", "--gpu", "a100")
EXAMPLES = Path(__file__).resolve().parent.parent / "docs" / "examples"


def _row(out: str, label: str) -> list[str]:
    """The summary rows of `out` that start with `label`, their values only (a value wrapped onto the lines below,
    which start with spaces, joined)."""
    rows: list[str] = []
    within = False
    for line in out.splitlines():
        if line.startswith(f"{label} "):
            rows.append(line[len(label):].strip())
        elif within and line.startswith(" "):
            rows[-1] += f" {line.strip()}"
        within = line.startswith(f"{label} ") or (within and line.startswith(" "))
    return rows


def _best(cli: Cli, *argv: str) -> dict[str, Any]:
    """The best plan ``solve --json`` gives for `argv`."""
    status, out, _ = cli(*ASKED, *argv, "--json")
    assert status == 0
    return json.loads(out)[0]["plans"][0]  # type: ignore[no-any-return]


@pytest.mark.parametrize(("argv", "line"), [
    (("--len", "32k", "--sp", "4"),
     ("without --sp 4, the best plan is Env + SP=2 on 6 GPUs, cost 0.1852 (documented): the pin costs 1.76x the "
      "relative step time")),
    (("--len", "32k", "--no-env", "--no-offload"),
     ("without --no-env --no-offload, the best plan is Env + SP=2 on 6 GPUs, cost 0.1852 (documented): the pins "
      "cost 1.76x the relative step time")),
    (("--maximize", "len", "--gpus", "6", "--sp", "2"),
     ("without --sp 2, the best plan is Env + Offload + SP=4 on 4 GPUs at 102400 tokens, cost 0.6565 (documented): "
      "the pin costs 51200 tokens")),
    (("--len", "32k", "--minimize", "gpus", "--sp", "4"),
     "without --sp 4, the best plan is Env + Offload + SP=2 on 2 GPUs, cost 1.111 (documented): the pin costs 2 GPUs"),
    # --no-env's estimate ranks below the documented best (Env's ranking weight), a plan the question without the pin
    # does not ask: no step time is lost, the evidence is
    (("--len", "32k", "--minimize", "gpus", "--no-env"),
     ("without --no-env, the best plan is Env + Offload + SP=2 on 2 GPUs, cost 1.111 (documented): the pin costs no "
      "relative step time (0.99x), but this plan is estimated")),
    (("--len", "32k", "--sp", "2"), "the pin costs nothing: the best plan has it"),
    (("--len", "32k", "--sp", "2", "--env"), "the pins cost nothing: the best plan has them"),
    (("--len", "32k", "--gpus", "6", "--exact"), "the pin costs nothing: the best plan has it"),
])
def test_a_pinned_answer_says_what_the_pins_cost(cli: Cli, argv: tuple[str, ...], line: str) -> None:
    status, out, err = cli(*ASKED, *argv)
    assert status == 0 and _row(out, "unpinned") == [line]
    assert err.count("\n") == 1  # the a100 note alone


def test_the_unpinned_plan_is_the_planners_best_without_the_pins(cli: Cli) -> None:
    """The JSON's unpinned is what the same question without the pins answers, not the pinned plan's; where the pins
    cost nothing, the pinned answer's own best plan."""
    status, out, _ = cli(*ASKED, "--len", "32k", "--sp", "4", "--json")
    answer = json.loads(out)[0]
    assert status == 0 and answer["pins"] == {"sp": 4, "env": None, "offload": None}
    assert answer["unpinned"] == _best(cli, "--len", "32k") != answer["plans"][0]
    assert (answer["plans"][0]["sp"], answer["unpinned"]["sp"]) == (4, 2)
    kept = json.loads(cli(*ASKED, "--len", "32k", "--sp", "2", "--json")[1])[0]
    assert kept["unpinned"] == kept["plans"][0]


def test_without_pins_there_is_no_line_no_field_and_no_question(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[object] = []
    unpinned = solver.solve._unpinned
    monkeypatch.setattr(solver.solve, "_unpinned", lambda query, **changes: asked.append(changes) or
                        unpinned(query, **changes))
    status, out, _ = cli(*ASKED, "--len", "32k")
    assert status == 0 and "unpinned" not in out and asked == []
    assert "unpinned" not in json.loads(cli(*ASKED, "--len", "32k", "--json")[1])[0]
    assert asked == []
    cli(*ASKED, "--len", "32k", "--sp", "4")
    assert asked == [{"top": 1, "exact": False}]  # one question, once


def test_top_with_pins_ranks_the_pinned_plans_and_says_the_cost_once(cli: Cli) -> None:
    status, out, _ = cli(*ASKED, "--len", "32k", "--no-env", "--top", "3")
    assert status == 0
    assert _row(out, "unpinned") == [("without --no-env, the best plan is Env + SP=2 on 6 GPUs, cost 0.1852 "
                                      "(documented): the pin costs 1.76x the relative step time")]
    answer = json.loads(cli(*ASKED, "--len", "32k", "--no-env", "--top", "3", "--json")[1])[0]
    assert len(answer["plans"]) > 1 and not any(plan["env"] for plan in answer["plans"])
    assert answer["unpinned"] == _best(cli, "--len", "32k")  # the best alone, not a ranking


def test_a_configs_gpu_count_is_no_pin(cli: Cli) -> None:
    """--from-config's exact count is the config's, not the caller's pin: no line without flags that pin; with
    --no-env, the question without it keeps the config's count."""
    config = str(EXAMPLES / "trinity.yaml")
    status, out, _ = cli("--from-config", config, "--gpu", "a100")
    assert status == 0 and "unpinned" not in out
    status, out, _ = cli("--from-config", config, "--gpu", "a100", "--no-env")
    assert status == 0 and _row(out, "unpinned") == [
        ("without --no-env, the best plan is Env + SP=2 on 6 GPUs, cost 0.1852 (documented): the pin costs 1.98x the "
         "relative step time")]


@pytest.mark.parametrize("left_open", ["feasible", "unknown"])  # found but not proven the best; nothing found
def test_an_unpinned_question_the_time_limit_leaves_open_is_left_out(
        cli: Cli, answers_left_open: Callable[[Callable[[Any], bool], str], None], left_open: str) -> None:
    answers_left_open(lambda query: query.sp is None, left_open)
    status, out, _ = cli(*ASKED, "--len", "32k", "--sp", "4")
    assert status == 0 and _row(out, "plan") == ["SP=4 on 4 of 6 GPUs (2 left for rollout)"] and "unpinned" not in out


def test_the_api_answer_holds_it_in_its_own_words() -> None:
    pinned = solver.plan("8B", gpu="a100", max_model_len=32768, sp=4, exact=False)[0]
    free = solver.plan("8B", gpu="a100", max_model_len=32768)[0]
    assert pinned.unpinned == free.best and free.unpinned is None
    text = solver.answers_text([pinned])
    assert ("unpinned       without sp=4, the best plan is Env + SP=2 on 6 GPUs, cost 0.1852 (documented): the pin "
            "costs 1.76x the relative step time") in text.splitlines()
    exact = solver.plan("8B", gpu="a100", max_model_len=32768, budget_gpus=4, exact=True, offload=False)[0]
    assert "unpinned       the pins cost nothing: the best plan has them" in solver.answers_text([exact]).splitlines()


@pytest.mark.parametrize(("pins", "words"), [
    (("--sp", "8"), ": --sp 8 rules them out (without it: Env on 6 trainer GPUs with --total-gpus 8 --rollout-gpus 2)"),
    # The fewest pins that rule the plans out are named (s88): not --no-env too, which the best plan without any pin
    # lacks (Env), though vanilla on 6 GPUs keeps it; one the plan has (--no-offload) is not named either
    (("--sp", "8", "--no-env", "--no-offload"),
     ": --sp 8 rules them out (without it: vanilla on 6 trainer GPUs with --total-gpus 8 --rollout-gpus 2)"),
    # s88: with --host-ram given, where it is not what rules them out, the pins are named too (none were)
    (("--sp", "8", "--no-env", "--host-ram", "2048"),
     ": --sp 8 rules them out (without it: vanilla on 6 trainer GPUs with --total-gpus 8 --rollout-gpus 2)"),
])
def test_keeping_gpus_for_the_rollout_names_the_pin_that_leaves_no_plan(cli: Cli, pins: tuple[str, ...],
                                                                        words: str) -> None:
    """A review: --sp 8 on 8 GPUs was told "keeping 2 of the 8 for it leaves no plan (within 6)", not that SP=8
    needs the 8 (the 6 left have plans without it)."""
    status, out, _ = cli("--model", "8B", "--len", "32k", "--gpu", "mi300x", "--gpus", "8", *pins)
    assert status == 0 and _row(out, "for rollout") == [
        (f"keeping 2 of the 8 for it leaves no plan for 32768 tokens (within 6){words}; give the rollout GPUs beside "
         "these instead: --gpus 8 --rollout-gpus R")]


def test_a_pin_that_rules_nothing_out_beside_the_rollout_is_not_named() -> None:
    """Qwen3-32B at 131072 tokens has no plan on 6 H100s with SP free either: the pin is not named, and the API's
    answer keeps no plan without it."""
    answer = solver.plan("32B", gpu="h100", max_model_len=131072, budget_gpus=8, sp=8)[0]
    assert answer.rollout_kept is not None and answer.rollout_kept.without_pins is None
    assert ("for rollout    keeping 2 of the 8 for it leaves no plan for 131072 tokens (within 6); give the rollout "
            "GPUs beside these instead: budget_gpus=8, rollout_gpus=R") in solver.answers_text([answer]).splitlines()
    pinned = solver.plan("8B", gpu="mi300x", max_model_len=32768, budget_gpus=8, sp=8)[0]
    assert pinned.rollout_kept is not None and pinned.rollout_kept.without_pins is not None
    assert (pinned.rollout_kept.without_pins.gpus, pinned.rollout_kept.without_pins.sp) == (6, 1)
    assert ": sp=8 rules them out (without it: Env on 6 trainer GPUs with total_gpus=8, rollout_gpus=2)" in " ".join(
        solver.answers_text([pinned]).split())


@pytest.mark.parametrize(("gpu", "model", "length", "budget", "host", "pins", "named"), [
    ("MI300X", "Qwen3-8B", 32768, 8, None, {"sp": 8, "env": False, "offload": False}, ("--sp 8",)),
    ("MI300X", "Qwen3-8B", 32768, 8, 2048.0, {"sp": 8, "env": False}, ("--sp 8",)),  # not the host memory
    ("A100-80GB", "Qwen3-14B", 32768, 8, None, {"sp": 8, "offload": False}, ("--sp 8", "--no-offload")),
    # Two sets of two: the one whose best plan is best
    ("H20-96GB", "Qwen3-8B", 65536, 8, None, {"sp": 8, "env": False, "offload": False}, ("--sp 8", "--no-env")),
    ("MI300X", "Qwen3-14B", 32768, 16, 512.0, {"sp": 8, "offload": False}, None),  # the host memory alone
    ("MI300X", "Qwen3-14B", 32768, 16, 512.0, {"sp": 8}, None),  # mutants49: one pin, the host memory alone
])
def test_the_pins_named_beside_the_rollout_are_the_fewest_the_reference_finds(
        gpu: str, model: str, length: int, budget: int, host: float | None, pins: dict[str, Any],
        named: tuple[str, ...] | None) -> None:
    """s88: the question beside the rollout (2 of 8 GPUs kept for it, 8 of 16), which has no plan, without the fewest
    pins that rule its plans out, in one solve, is the brute-force reference's best plan without some set of that
    many (none of fewer has one), or, where the host memory alone rules them out, its best plan without it."""
    rollout = 2 if budget == 8 else 8
    query = _keeping(make_query(CATALOG, gpu=gpu, model=model, max_model_len=length, budget_gpus=budget,
                                host_ram_gb=host, **pins), rollout)
    assert _reference_best(query, rollout_gpus=rollout, host_ram_gb=host) is None
    lifted, unpinned = fewest_limits_dropped(CATALOG, query, gpu)
    if named is None:
        without_host = _reference_best(query, rollout_gpus=rollout)
        assert lifted is not None and lifted.model_dump(mode="json") == without_host and unpinned is None
        return
    assert lifted is None and unpinned is not None
    assert query.pins_unlike(unpinned.sp, unpinned.env, unpinned.offload) == named
    for size in range(1, len(named)):  # none of fewer pins (of none: asserted above)
        assert all(_reference_best(query, rollout_gpus=rollout, host_ram_gb=host, **dict.fromkeys(dropped)) is None
                   for dropped in combinations(pins, size))
    bests = [_reference_best(query, rollout_gpus=rollout, host_ram_gb=host, **dict.fromkeys(dropped))
             for dropped in combinations(pins, len(named))]
    assert unpinned.model_dump(mode="json") in bests


def test_the_fewest_pins_come_before_the_length_and_the_host_memory_is_never_dropped_with_a_pin() -> None:
    """mutants48: maximising the length beside the rollout, a pin dropped weighs more than any longer length (Qwen3-8B
    on 6 MI300Xs reaches 174080 tokens with --no-env and --no-offload kept, longer with them dropped too); a host
    memory no plan fits is never dropped together with a pin: no plan without some of them, both None."""
    query = _keeping(make_query(CATALOG, gpu="MI300X", model="Qwen3-8B", objective="max_len", budget_gpus=8, sp=8,
                                env=False, offload=False), 2)
    lifted, unpinned = fewest_limits_dropped(CATALOG, query, "MI300X")
    assert lifted is None and unpinned is not None
    assert (query.pins_unlike(unpinned.sp, unpinned.env, unpinned.offload), unpinned.max_model_len) == (
        ("--sp 8",), 174080)
    starved = _keeping(make_query(CATALOG, gpu="MI300X", model="Qwen3-8B", max_model_len=32768, budget_gpus=8,
                                  host_ram_gb=1.0, sp=8), 2)
    assert _reference_best(starved, rollout_gpus=2, host_ram_gb=1.0, sp=None) is None  # nothing fits 1 GB
    assert fewest_limits_dropped(CATALOG, starved, "MI300X") == (None, None)
