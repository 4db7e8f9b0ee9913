"""Small slips of earlier sessions (s75, smallslips20): no step of ``solve cluster`` is given time past its time limit
(a job's ways stop between two questions once the ways' wall clock has passed, the later steps get what is left, none
once it has passed); the time limit named to work out the jobs' ways cut short is safe where a short limit asked few
shapes; an answer's or a placement's fragment shows the host memory figure of the Trinity release it was held to"""

from __future__ import annotations

import importlib
import math
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from cluster_api import buy, place
from conftest import planner_answers_shared
from test_cluster import reference_checked

import solver
import solver.clock
import solver.cluster.options
import solver.cluster.reasons
import solver.cluster.search
import solver.cluster.widen
from solver.cluster.options import Planner, WaysLimit, fleet_options
from solver.tables import Fleet, load_catalog, load_fleet, load_weights

CATALOG = load_catalog()
buy_module = importlib.import_module("solver.cluster.buy")  # `solver.cluster.buy` the name is the function


def _fleet(tmp_path: Path, jobs: list[dict], nodes: int = 1):
    """A pool of `nodes` 8-GPU A100 nodes and `jobs`."""
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump({"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": nodes,
                                               "gpus_per_node": 8}], "jobs": jobs}), encoding="utf-8")
    return load_fleet(path, CATALOG)


PROBE = {"name": "probe", "model": "0.6B", "max_model_len": 8192}
"""A job that its ways place on 6 GPUs of a node of 8, and widening grows onto the other 2."""


@pytest.fixture
def cluster_solve_limits(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, float]]:
    """The wall-clock limit (`max_time_in_seconds`) of each CP-SAT solve of the cluster's own steps from here on (the
    search's stages and its proof without host memory, widening's, the least priorities'), with its model's name;
    not the planner's."""
    limits: list[tuple[str, float]] = []
    for module in (solver.cluster.search, solver.cluster.widen, solver.cluster.reasons):
        def recording(cp_solver, model, status, checked=module.checked):
            limits.append((model.name, cp_solver.parameters.max_time_in_seconds))
            return checked(cp_solver, model, status)

        monkeypatch.setattr(module, "checked", recording)
    return limits


def _late_after_the_ways(monkeypatch: pytest.MonkeyPatch, late_s: float) -> None:
    """The wall clock reads no deadline while the jobs' ways are worked out (as conftest's), then `late_s` seconds
    past the placement's time limit (its start plus the limit): as if the ways had taken all of it and more."""
    now = [-math.inf]
    plan_jobs = solver.cluster.search._plan_jobs

    def ways_then_late(planner, fleet, every_job, started, running):
        planned = plan_jobs(planner, fleet, every_job, started, running)
        now[0] = started + planner.time_limit_s + late_s
        return planned

    monkeypatch.setattr(solver.cluster.search, "_plan_jobs", ways_then_late)
    monkeypatch.setattr(solver.clock, "seconds_left", lambda deadline: deadline - now[0])


def test_past_the_time_limit_the_search_and_widening_get_no_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 cluster_solve_limits: list[tuple[str, float]]):
    # In time, the search solves its stages and widening grows the job onto its node's idle GPUs.
    fleet = _fleet(tmp_path, [PROBE])
    in_time = place(fleet, catalog=CATALOG, time_limit_s=5.0)
    assert (in_time.placements[0].widened_from, in_time.wall_clock_stopped) == (6, ())
    assert {name for name, _ in cluster_solve_limits} == {"place jobs", "widen jobs onto idle GPUs"}
    # Past the limit once the ways are worked out: the first stage gets no time (it stops at once, and the greedy
    # placement stands: the job on its smallest way), no later stage is solved, and widening asks and solves nothing
    # (before: 0.01 s a stage, 0.05 s a widening solve); nor is solve's best on its trainer GPUs asked (s82).
    _late_after_the_ways(monkeypatch, 1.0)
    cluster_solve_limits.clear()
    late = place(fleet, catalog=CATALOG, time_limit_s=5.0)
    assert cluster_solve_limits == [("place jobs", 0.0)]
    assert (late.status, late.bound, late.wall_clock_stopped, late.solve_best_unasked) == (
        "feasible", None, ("priority", "widening", "solve best"), 1)
    assert [(p.job, p.trainer_gpus, p.widened_from) for p in late.placements] == [("probe", 1, None)]  # greedy's


def test_a_little_past_the_time_limit_still_gives_no_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          cluster_solve_limits: list[tuple[str, float]]):
    # A millisecond past it is past it: every limit given is 0, none the least time it once was.
    _late_after_the_ways(monkeypatch, 0.001)
    place(_fleet(tmp_path, [PROBE]), catalog=CATALOG, time_limit_s=5.0)
    assert cluster_solve_limits == [("place jobs", 0.0)]


def test_each_widening_solve_gets_what_is_left_and_none_past_the_end(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     cluster_solve_limits: list[tuple[str, float]]):
    # Widening alone on a clock 0.25 s later at each look, 0.6 s before its end: it starts (0.35 s left), its first
    # solve gets 0.1 s, its second none (the first's answer stands, and the answer names widening).
    widen = solver.cluster.search.widen_jobs

    def on_a_fake_clock(*args):
        ticks = iter(range(1, 100))
        fake = SimpleNamespace(seconds_left=lambda deadline: deadline - 100 - 0.25 * next(ticks))
        with monkeypatch.context() as patched:
            patched.setattr(solver.cluster.widen, "clock", fake)
            return widen(*args[:-1], 100.6)

    monkeypatch.setattr(solver.cluster.search, "widen_jobs", on_a_fake_clock)
    result = place(_fleet(tmp_path, [PROBE]), catalog=CATALOG)
    widening = [limit for name, limit in cluster_solve_limits if name == "widen jobs onto idle GPUs"]
    assert widening == pytest.approx([0.1, 0.0])
    assert (result.placements[0].widened_from, result.wall_clock_stopped) == (6, ("widening",))


def test_a_jobs_ways_stop_between_two_of_its_questions_once_the_wall_clock_passes(tmp_path: Path,
                                                                                  monkeypatch: pytest.MonkeyPatch):
    # The 14B job at 64k asks the planner about several GPU counts. With no wall clock, all of them; where the ways'
    # deadline passes after its second question, it asks no third, and gets no ways at all (a job's ways are whole or
    # none): cut short by the wall clock, with no time limit estimated.
    fleet = _fleet(tmp_path, [{"name": "long", "model": "14B", "max_model_len": 65536}], nodes=2)
    whole = Planner(CATALOG.for_fleet(fleet), load_weights(), "auto")
    asked_all = fleet_options(whole, fleet, WaysLimit.of(whole, time.monotonic()))
    assert whole.asked > 2 and asked_all.options and (asked_all.cut_short, asked_all.wall_clock_cut) == ((), False)
    planner = Planner(CATALOG.for_fleet(fleet), load_weights(), "auto")
    monkeypatch.setattr(solver.clock, "seconds_left", lambda deadline: math.inf if planner.asked < 2 else -1.0)
    cut = fleet_options(planner, fleet, WaysLimit.of(planner, time.monotonic()))
    assert (cut.options, cut.cut_short, cut.wall_clock_cut, cut.covering_time_limit_s) == ([], (0,), True, None)
    assert planner.asked == 2 and planner.asks_until is None  # the deadline set for the job's questions is lifted


def test_a_purchase_widens_by_the_time_limit_less_the_read_back_time(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch):
    # As a placement's widening ends (test_cluster's test_widening_ends_by_the_time_limit_from_the_placements_start):
    # by the limit from the purchase's start, less the time kept to read the answer back (before: the whole limit).
    readings: list[float] = []

    def monotonic() -> float:
        readings.append(time.monotonic())
        return readings[-1]

    untils: list[float | None] = []
    grown = buy_module.grown_placements
    monkeypatch.setattr(buy_module, "time", SimpleNamespace(monotonic=monotonic))
    monkeypatch.setattr(buy_module, "grown_placements",
                        lambda *args: untils.append(args[-1]) or grown(*args))
    bought = buy(_fleet(tmp_path, [PROBE], nodes=0), catalog=CATALOG, time_limit_s=7.0)
    assert (bought.nodes, bought.placements[0].widened_from) == (1, 6)
    assert untils == [readings[0] + 7.0 - solver.cluster.search.READ_BACK_S]


FORTY_JOBS = Path(__file__).resolve().parent / "data" / "cluster-40-jobs.yaml"


def test_the_limit_named_at_one_second_works_the_forty_jobs_ways_out(monkeypatch: pytest.MonkeyPatch):
    # At 1 s the count (100) cuts the ways after 3 jobs of 3 shapes (112 questions), 25 shapes new among the 37 left:
    # their mean alone named 11 s, which still cuts 6 jobs short; raised by a third (one part in 3), 14 s.
    planner_answers_shared(monkeypatch)
    fleet = load_fleet(FORTY_JOBS, CATALOG)

    def ways_within(limit_s: float) -> tuple[int, int, int | None]:
        planner = Planner(CATALOG.for_fleet(fleet), load_weights(), "auto", time_limit_s=limit_s)
        ways = fleet_options(planner, fleet, WaysLimit.of(planner, 0.0))
        return len(ways.cut_short), planner.asked, ways.covering_time_limit_s

    assert ways_within(1) == (37, 112, 14)
    assert ways_within(11)[0] == 6  # the mean's estimate falls short
    # The one named works them all out (1199 questions: 1206 before every rank's loading was counted with no release
    # named, which changes which plans the ways ask about).
    assert ways_within(14) == (0, 1199, None)


def _host_lines(fragment: str) -> list[str]:
    """The host memory lines of a fragment's header."""
    return [line for line in fragment.splitlines() if line.startswith("# host memory:")]


def test_an_answer_held_to_05s_host_figure_shows_05s_in_its_fragment():
    # Trinity 0.5's reference model is bf16 (0.6's fp32): the 14B on 8 A100s with Offload needs 311.3 GiB a node for
    # 0.5, 351.6 for 0.6. Planned for 0.5 within 320 GiB, its fragment (no release named) showed 0.6's 351.6 GiB
    # "within host_ram_gb of 320 GiB"; it is now the answer's own release's, and its rules (no 0.6 keys). Asked for
    # 0.5.1, which loads this untied model on rank 0 alone (verl's rule): 0.5 named alone may be 0.5.2, which loads
    # it on every rank, past 320 GiB.
    [answer] = solver.plan("Qwen3-14B", gpu="a100", budget_gpus=8, exact=True, max_model_len=32768,
                           host_ram_gb=320.0, trinity_version="0.5.1", offload=True)
    assert answer.best is not None and answer.best.host_memory_gb == 311.3
    assert _host_lines(solver.trinity_config(answer)) == [
        "# host memory: 311.3 GiB per node for Offload, within host_ram_gb of 320 GiB"]
    assert solver.trinity_settings(answer).trinity_06_keys == ()
    # Read back from JSON (which keeps no query), its plan keeps its release since planjson (s78): 0.5's figure, as
    # named (s76 refused it there, judging 0.6's 351.6 GiB against the 320 GiB it was planned within).
    read_back = solver.Answer.model_validate_json(answer.model_dump_json())
    assert read_back.best is not None and read_back.best.trinity_version == "0.5.1"
    assert solver.trinity_config(read_back) == solver.trinity_config(answer)
    assert _host_lines(solver.trinity_config(read_back, version="0.5.1")) == [
        "# host memory: 311.3 GiB per node for Offload, within host_ram_gb of 320 GiB"]


def test_a_placement_held_to_05s_host_figure_shows_05s_in_its_fragment():
    # The same 14B job at 64k on a node of 320 GiB: placed for 0.5 on 8 GPUs with Offload (311.3 GiB), for 0.6 without
    # (135.6); the 0.5 placement's fragment showed 0.6's 351.6 GiB "within the pool's host_ram_gb of 320 GiB".
    instance = {"pools": [{"name": "a", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8, "host_ram_gb": 320.0}],
                "jobs": [{"name": "long", "model": "Qwen3-14B", "max_model_len": 65536}]}
    fleet = Fleet.model_validate(instance)
    placed = place(fleet, catalog=CATALOG, time_limit_s=5, trinity_version="0.5.1")
    reference_checked(instance, placed.model_dump_json(), trinity_version="0.5.1")  # 0.5.1's host figure, as counted
    assert (placed.placements[0].plan.trinity_version, placed.placements[0].plan.host_memory_gb) == ("0.5.1", 311.3)
    assert _host_lines(solver.placement_configs(placed, fleet)["long"]) == [
        "# host memory: 311.3 GiB per node for Offload, within the pool's host_ram_gb of 320 GiB"]
    assert '"trinity_version":"0.5.1"' in placed.model_dump_json()  # its plan keeps it since planjson (s78)
