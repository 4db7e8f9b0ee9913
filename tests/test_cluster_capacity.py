"""A platform team's review of `solve cluster` (session 51): a time limit the planner's queries run past, the hint
for a job whose rollout leaves its trainer no layout, and the least limit that leaves the search time."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import pytest
import yaml
from cluster_api import place
from rich.console import Console

import solver
import solver.cluster.search
from solver.cluster import greedy, least_time_limit_to_search_s, pool_use
from solver.render import cluster_json, cluster_view
from solver.results import ClusterResult
from solver.tables import load_catalog, load_fleet

CATALOG = load_catalog()
MODELS = ("0.6B", "1.7B", "4B", "8B", "14B", "32B")


def fleet_file(instance: dict, tmp_path: Path) -> Path:
    """`instance` written as a cluster file under `tmp_path`."""
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(instance), encoding="utf-8")
    return path


def test_the_planner_queries_are_cut_short_by_the_time_limit_and_the_answer_says_so(tmp_path: Path):
    # Many job shapes on a GPU type without tables: each tries every count, so working out their ways takes longer
    # than a limit of 0.01 s allows (one new question: the first job's ways, asked whole); the answer still comes,
    # with every job placed or told why, and names the jobs whose ways were left unasked (session 64).
    jobs = [{"name": f"j{index}", "model": model, "max_model_len": length, "rollout_gpus": rollout}
            for index, (model, length, rollout) in enumerate(
                (model, length, rollout) for model in MODELS for length in (9216, 34816) for rollout in (1, 2))]
    pools = [{"name": "h100", "gpu": "H100-80GB", "nodes": 2, "gpus_per_node": 8}]
    result = solver.place(fleet_file({"pools": pools, "jobs": jobs}, tmp_path), time_limit_s=0.01)
    assert result.planning_s > 0.01 and result.status in ("optimal", "feasible") and not result.interrupted
    assert len(result.placements) + len(result.unplaced) == len(jobs)
    assert set(result.ways_cut_short) >= {job["name"] for job in jobs[1:]}  # (the first too, where the wall clock came)


def test_a_greedy_placement_has_a_null_bound_in_json(tmp_path: Path):
    # A dashboard reads the greedy placement from the JSON as docs/cluster.md says: status feasible, bound null.
    fleet = load_fleet(fleet_file({"pools": [{"name": "a", "gpu": "a100", "nodes": 1, "gpus_per_node": 8}],
                                   "jobs": [{"name": "a", "model": "4B", "max_model_len": 4096}]}, tmp_path), CATALOG)
    result = ClusterResult(status="feasible", objective=0, bound=None, placements=(), unplaced=(),
                           pools=pool_use(fleet, ()), planning_s=9.2)
    assert {key: json.loads(cluster_json(result))[key] for key in ("status", "bound")} == {
        "status": "feasible", "bound": None}


def test_the_time_limit_help_says_how_the_queries_are_cut_short(cli):
    status, out, _ = cli("cluster", "--help")
    assert status == 0
    assert ("The queries that work out the jobs' ways come first: at most 100 new ones per second (--buy, which asks "
            "every evidence tier: 200), ending by 0.6 of the limit on the wall clock, the jobs of more priority first; "
            "the jobs past them are left out, and the answer says so, and what limit would likely work them all out "
            "(with --minimize nodes, no placement).") in (
                " ".join(out.split()))


@pytest.mark.parametrize(("rollout", "hint"), [
    (6, "; with rollout_gpus: 4 or fewer, a trainer of 4 GPUs has one"),
    (2, "; with rollout_gpus: 0 (its explorer on GPUs outside the fleet), a trainer of 8 GPUs has one")])
def test_a_rollout_that_leaves_no_layout_names_the_rollout_gpus_that_would(tmp_path: Path, rollout: int, hint: str):
    # One node of 8: Qwen3-8B at 65536 on A100s trains on 4 GPUs at the fewest, which 6 rollout GPUs leave no room; the
    # Llama's 131072 on H100s needs all 8, so only an explorer outside the fleet leaves them room.
    model, length = ("Qwen3-8B", 65536) if rollout == 6 else ("Llama-3.1-8B", 131072)
    pool = {"name": "a", "gpu": "A100-80GB" if rollout == 6 else "H100-80GB", "nodes": 1, "gpus_per_node": 8}
    job = {"name": "j", "model": model, "max_model_len": length, "rollout_gpus": rollout}
    result = solver.place(fleet_file({"pools": [pool], "jobs": [job]}, tmp_path))
    (unplaced,) = result.unplaced
    assert unplaced.reason.endswith(hint)


@pytest.mark.parametrize(("planning_s", "building_s", "took", "above"), [
    (9.2, 0.0, "9.2 s", 16), (9.0873, 0.0, "9.1 s", 16), (9.075, 0.0, "9.1 s", 15),
    (2.21, 0.61, "2.2 s, and building the placement model 0.6 s,", 5), (2.21, 0.04, "2.2 s", 4)])
def test_a_placement_without_a_bound_names_a_time_limit_that_leaves_the_search_time(
        tmp_path: Path, planning_s: float, building_s: float, took: str, above: int):
    # The search ends by 0.97 of the limit, less 0.02 s and the reasons' time (0.6 of the planning's, at most): after
    # 9.2 s of planning it gets time from a limit of (9.2 x 1.6 + 0.02) / 0.97 = 15.196 s, named rounded up (above
    # 15 s, a limit of 15.1 s would leave it none). After 9.0873 s the least is 15.010 s: 16; after 9.075 s, 14.990 s.
    # Building the placement model comes before the search too: 5000 jobs took 2.21 s of planning and 0.61 s of
    # building, (2.21 x 1.6 + 0.61 + 0.02) / 0.97 = 4.295 s (4.2 s left the search none); without it, 3.666 s.
    fleet = load_fleet(fleet_file({"pools": [{"name": "a", "gpu": "a100", "nodes": 1, "gpus_per_node": 8}],
                                   "jobs": [{"name": "a", "model": "4B", "max_model_len": 4096}]}, tmp_path), CATALOG)
    result = ClusterResult(status="feasible", objective=0, bound=None, placements=(), unplaced=(),
                           pools=pool_use(fleet, ()), planning_s=planning_s, building_s=building_s,
                           least_time_limit_s=least_time_limit_to_search_s(planning_s, building_s))
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(cluster_view(result, fleet))
    assert console.export_text().splitlines()[1] == (
        f"working out the jobs' ways to run took {took} before the search could start: a --time-limit above "
        f"{above} s leaves the search time after them")


def test_the_least_time_limit_named_is_where_the_searchs_deadline_meets_its_start(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # Qwen3-14B at 102400 tokens has no way on the 2-GPU A100 node, so the search keeps time for its reason there. With
    # a limit of 30 s, the search's deadline falls after its start (the planning's end, then the placement model's
    # building, here made to take 0.3 s more) by what the limit has above the least one (least_time_limit_to_search_s),
    # less the 3% kept to read the answer back: at the least, it falls at the search's start.
    searching = solver.cluster.search
    starts, deadlines = [], []
    plan_jobs, solve_stages, build = searching._plan_jobs, searching.solve_stages, searching.build_placement_model

    def start_recorded(planner, fleet, every_job, started, *rest):  # the start the search itself counts from
        starts.append(started)
        return plan_jobs(planner, fleet, every_job, started, *rest)

    def recorded(search, built, stages, interrupt, deadline, *rest):
        deadlines.append(deadline)
        return solve_stages(search, built, stages, interrupt, deadline, *rest)

    def slow_build(*arguments):
        time.sleep(0.3)
        return build(*arguments)

    monkeypatch.setattr(solver.cluster.search, "_plan_jobs", start_recorded)
    monkeypatch.setattr(solver.cluster.search, "solve_stages", recorded)
    monkeypatch.setattr(solver.cluster.search, "build_placement_model", slow_build)
    pools = [{"name": "small", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 2},
             {"name": "h20", "gpu": "H20-96GB", "nodes": 1, "gpus_per_node": 8}]
    jobs = [{"name": "j", "model": "Qwen3-14B", "max_model_len": 102400}]
    fleet = load_fleet(fleet_file({"pools": pools, "jobs": jobs}, tmp_path), CATALOG)
    result = place(fleet, catalog=CATALOG, time_limit_s=30)
    assert [placement.pool for placement in result.placements] == ["h20"]
    least = least_time_limit_to_search_s(result.planning_s, result.building_s)
    assert result.building_s >= 0.3 and result.least_time_limit_s == least  # the result carries it, for the view
    # The same arithmetic on the same readings: only the floats' rounding tells them apart, whatever the machine's load.
    (started,) = starts
    assert deadlines == [pytest.approx(started + result.planning_s + result.building_s + (30 - least) * 0.97, abs=1e-6)]


def test_the_least_time_limit_is_a_timing_left_out_of_json_and_comparison(tmp_path: Path):
    # It comes from the run's timings, so like them it is not in the JSON (byte-identical across runs and --workers)
    # and two placements that differ only in it are equal. The greedy baseline runs no search: it has none, and its
    # view names no limit.
    path = fleet_file({"pools": [{"name": "a", "gpu": "a100", "nodes": 1, "gpus_per_node": 8}],
                       "jobs": [{"name": "a", "model": "4B", "max_model_len": 4096}]}, tmp_path)
    fleet = load_fleet(path, CATALOG)
    result = place(fleet, catalog=CATALOG)
    assert result.least_time_limit_s == least_time_limit_to_search_s(result.planning_s, result.building_s) > 0
    later = result.model_copy(update={"least_time_limit_s": result.least_time_limit_s + 60})
    assert later == result and hash(later) == hash(result)
    assert "least_time_limit_s" not in json.loads(cluster_json(result))
    baseline = greedy(fleet, CATALOG)
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(cluster_view(baseline, fleet))
    assert baseline.least_time_limit_s is None and baseline.bound is None
    assert not any(line.startswith("working out") for line in console.export_text().splitlines())
