"""The cluster planner's work done once, and within the time limit (session 65): one job -> pools-with-ways map
(`pools_with_ways`); the reasons reuse the whole-pool question `reasons_may_ask_reach` asked first (`Planner.answer`,
a cache of decided answers keyed on the question); and the reasons of the jobs with no way, and `--buy`'s ways and
reasons, share the limit working out a placement's ways has (`WaysLimit`: a count of the planner's new questions,
the same on every run, the wall clock the safety net), and say so where it cut them."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml
from cluster_api import buy, place
from test_cluster import CATALOG
from test_clusterbuy_s60 import fleet_file
from test_minnodes_s64 import _fleet_file, _questions_per_second

import solver.clock
import solver.cluster.options
import solver.cluster.reasons
import solver.cluster.search
from solver.cli import main
from solver.cluster.options import Option, Planner, fleet_options, pools_with_ways
from solver.render import cluster_json, purchase_json
from solver.tables import BUY_WAYS_FACTOR, WAYS_QUESTIONS_PER_SECOND, JobTraining, load_fleet, load_weights

A100 = {"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}
QUAD = {"name": "quad", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 4}
TWO_14B = [{"name": name, "model": "Qwen3-14B", "max_model_len": 65536, "rollout_gpus": 2} for name in ("x", "y")]
"""Two jobs that each take 6 of the a100 node's GPUs (4 trainer, 2 rollout): one is left out; quad's 4 GPUs train
Qwen3-14B at 65536 tokens, but leave no layout beside 2 rollout GPUs."""

TOO_LONG = {"name": "too-long", "model": "Qwen3-14B", "max_model_len": 4_000_000, "rollout_gpus": 0}
"""A job no pool runs: its reason asks the planner why, pool by pool."""

UNASKED = "no way to run in any pool it may use (why was not worked out within the time limit; raise --time-limit)"


def _option(job: int, pool: int) -> Option:
    """A way of `job` in `pool` (its plan does not matter to the map)."""
    return Option(job=job, pool=pool, plan=None, size=1, whole_nodes=0, rollout_gpus=0,  # type: ignore[arg-type]
                  gain=0, cost=0)


def test_pools_with_ways_maps_each_job_with_a_way_to_its_pools():
    options = [_option(0, 1), _option(0, 1), _option(2, 0), _option(0, 0)]
    assert pools_with_ways(options) == {0: frozenset({0, 1}), 2: frozenset({0})}
    assert pools_with_ways([]) == {}


def _recorded_questions(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, object, bool]]:
    """Every question the cluster modules put to the planner's `answer_for`, as (GPU, query, explained)."""
    asked: list[tuple[str, object, bool]] = []
    for module in (solver.cluster.options, solver.cluster.reasons):
        original = getattr(module, "answer_for", None)
        if original is None:
            continue

        def recorded(catalog: object, query: object, gpu: str, explained: bool = True, *args: object,
                     original: object = original, **kwargs: object) -> object:
            asked.append((gpu, query, explained))
            return original(catalog, query, gpu, explained, *args, **kwargs)  # type: ignore[operator]

        monkeypatch.setattr(module, "answer_for", recorded)
    return asked


def test_the_reason_reuses_the_whole_pool_answer_the_search_asked_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    asked = _recorded_questions(monkeypatch)
    result = place(load_fleet(fleet_file({"pools": [A100, QUAD], "jobs": TWO_14B}, tmp_path), CATALOG),
                   catalog=CATALOG, time_limit_s=10)
    [unplaced] = result.unplaced
    assert [pool.reason_code for pool in unplaced.pools] == ["no-room", "no-layout-beside-rollout"]
    assert "quad: with 2 rollout GPUs, no trainer GPU count that trains it (4 at the fewest) has a layout" in (
        unplaced.reason)
    whole_pool = [query for gpu, query, _ in asked
                  if query.objective == "min_gpus" and query.budget_gpus == 4]  # type: ignore[attr-defined]
    assert len(whole_pool) == 1  # asked by reasons_may_ask_reach before the search; the reason reuses its answer


def test_a_decided_answer_is_kept_and_an_unexplained_one_asked_again_where_words_are_wanted():
    planner = Planner(CATALOG, load_weights(), "auto")
    query = planner.question("A100-80GB", "Qwen3-14B", 8, "auto", None, JobTraining(), objective="min_gpus",
                             budget_gpus=8, max_model_len=4_000_000)
    unexplained = planner.answer(query, "A100-80GB", explained=False)
    assert (unexplained.status, unexplained.reason_code, planner.asked) == ("infeasible", "not-explained", 1)
    assert planner.answer(query, "A100-80GB", explained=False) is unexplained and planner.asked == 1
    explained = planner.answer(query, "A100-80GB")
    assert explained.reason_code != "not-explained" and planner.asked == 2
    assert planner.answer(query, "A100-80GB") is explained and planner.answer(query, "A100-80GB", False) is explained


def _ways_questions(fleet: solver.tables.Fleet) -> int:
    """How many new questions working out every job's ways asks the planner."""
    planner = Planner(CATALOG, load_weights(), "auto")
    fleet_options(planner, fleet)
    return planner.asked


def test_the_reasons_of_the_jobs_with_no_way_share_the_limit_and_say_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    probe = {"name": "probe", "model": "Qwen3-0.6B", "max_model_len": 8192, "rollout_gpus": 1, "priority": 2}
    fleet = load_fleet(fleet_file({"pools": [A100], "jobs": [probe, TOO_LONG]}, tmp_path), CATALOG)
    _questions_per_second(monkeypatch, WAYS_QUESTIONS_PER_SECOND)  # the count as shipped, the wall clock out of reach
    full = place(fleet, catalog=CATALOG, time_limit_s=1)
    assert full.unplaced[0].reason.startswith("a100: ") and full.unplaced[0].pools
    # As many questions as the jobs' ways ask, at 1 s: the ways are all worked out, the reason is left unasked.
    _questions_per_second(monkeypatch, _ways_questions(fleet))
    first, second = (place(fleet, catalog=CATALOG, time_limit_s=1) for _ in range(2))
    assert cluster_json(first) == cluster_json(second)
    [unplaced] = first.unplaced
    assert (unplaced.job, unplaced.reason_code, unplaced.reason, unplaced.pools) == (
        "too-long", "no-way-to-run", UNASKED, ())
    # Still the placement it was: the probe placed as before, the job with no way named so, the status as proven.
    assert (first.status, first.placements, first.no_way_to_run, first.ways_cut_short, first.wall_clock_stopped) == (
        full.status, full.placements, ("too-long",), (), ())


def taking_longer(monkeypatch: pytest.MonkeyPatch, module: object, name: str, seconds: float) -> None:
    """`module.name` takes `seconds` as one cluster command reads the wall clock (`seconds_left` reads that much later
    each time it has returned), as on a busy machine, without waiting them out; else the clock stands still from its
    first reading (as the jobs' ways begin), so that those seconds alone move it, whatever the machine's load."""
    late = [0.0]
    first_reading: list[float] = []
    step = getattr(module, name)

    def slow(*args: object) -> object:
        found = step(*args)
        late[0] += seconds
        return found

    def seconds_left(deadline: float) -> float:
        if not first_reading:
            first_reading.append(time.monotonic())
        return deadline - first_reading[0] - late[0]

    monkeypatch.setattr(module, name, slow)
    monkeypatch.setattr(solver.clock, "seconds_left", seconds_left)


@pytest.mark.wall_clock  # about the wall clock: keeps the real one
def test_the_wall_clock_cuts_the_reasons_where_the_count_does_not_and_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # The net at half of a 2 s limit, and the jobs' ways (asked whole: the one job's, checked at its start) ending
    # past it: the reason, checked as it begins, is left unasked, and the answer names the step the wall clock cut.
    _questions_per_second(monkeypatch, 1000, wall_share=0.5)
    taking_longer(monkeypatch, solver.cluster.search, "fleet_options", 1.1)
    result = place(load_fleet(fleet_file({"pools": [A100], "jobs": [TOO_LONG]}, tmp_path), CATALOG),
                   catalog=CATALOG, time_limit_s=2)
    assert (result.ways_cut_short, result.wall_clock_stopped) == ((), ("ways",))
    assert [(entry.reason, entry.reason_code) for entry in result.unplaced] == [(UNASKED, "no-way-to-run")]


def test_a_purchase_cut_short_buys_for_the_jobs_asked_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = _fleet_file(tmp_path)
    fleet = load_fleet(path, CATALOG)
    _questions_per_second(monkeypatch, WAYS_QUESTIONS_PER_SECOND)  # the count as shipped, the wall clock out of reach
    assert buy(fleet, catalog=CATALOG, time_limit_s=4).ways_cut_short == ()
    _questions_per_second(monkeypatch, 3)
    # Every job must be placed (none is marked required): one left without ways leaves no purchase to find.
    first, second = (buy(fleet, catalog=CATALOG, time_limit_s=4) for _ in range(2))
    assert purchase_json(first) == purchase_json(second)
    assert (first.status, first.gpus, first.placements, first.wall_clock_stopped) == ("unknown", None, (), ())
    cut = first.ways_cut_short
    asked = [job.name for job in fleet.jobs if job.name not in cut]
    assert 0 < len(asked) < 12 and cut == tuple(f"job-{i}" for i in range(len(asked), 12))
    # With the jobs asked first required, the purchase places them; the others are named, and none is placed.
    required = fleet.model_copy(update={"jobs": tuple(job.model_copy(update={"required": job.name in asked})
                                                      for job in fleet.jobs)})
    first, second = (buy(required, catalog=CATALOG, time_limit_s=4) for _ in range(2))
    assert purchase_json(first) == purchase_json(second)
    assert (first.status, first.ways_cut_short, first.left_out) == ("feasible", cut, ())
    assert sorted(placement.job for placement in first.placements) == sorted(asked)


def test_the_command_says_the_limit_cut_the_purchase_short(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    _questions_per_second(monkeypatch, 3)
    assert main(["cluster", str(_fleet_file(tmp_path)), "--buy", "--time-limit", "4"]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert out.startswith("status: unknown: time ran out working out the jobs' ways to run, so the search for a "
                          "purchase never ran (raise --time-limit) the time limit cut working out the jobs' ways "
                          "short: job-")
    # The status line says to raise the limit; the line on the jobs cut short does not say it again.
    cut_short = "got none (the jobs of more priority are asked first), so no purchase places them"
    assert cut_short in out and f"{cut_short} (raise" not in out


def test_a_purchase_reason_left_unasked_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    probe = {"name": "probe", "model": "Qwen3-0.6B", "max_model_len": 8192, "rollout_gpus": 1, "priority": 2}
    path = fleet_file({"pools": [A100], "jobs": [probe, TOO_LONG]}, tmp_path)
    fleet = load_fleet(path, CATALOG)
    _questions_per_second(monkeypatch, WAYS_QUESTIONS_PER_SECOND)  # the count as shipped, the wall clock out of reach
    full = buy(fleet, catalog=CATALOG, time_limit_s=1)
    assert full.fits_nowhere[0].reason.startswith("a100: ")
    asked_before: list[int] = []  # the planner's questions as the reason is asked: the ways' alone
    reasons = solver.cluster.reasons._reasons

    def recorded(planner: Planner, *args: object) -> object:
        asked_before.append(planner.asked)
        return reasons(planner, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(solver.cluster.reasons, "_reasons", recorded)
    buy(fleet, catalog=CATALOG, time_limit_s=1)
    # at 1 s: the ways' questions (a purchase asks BUY_WAYS_FACTOR times as many a second), none left for the reason
    _questions_per_second(monkeypatch, asked_before[0] / BUY_WAYS_FACTOR)
    cut = buy(fleet, catalog=CATALOG, time_limit_s=1)
    assert [(entry.job, entry.reason, entry.reason_code) for entry in cut.fits_nowhere] == [
        ("too-long", UNASKED, "no-way-to-run")]
    assert (cut.status, cut.gpus, cut.ways_cut_short) == (full.status, full.gpus, ())
    assert yaml.safe_load(purchase_json(cut))["fits_nowhere"][0]["pools"] == []
