"""Working out the jobs' ways shares the time limit (session 64): a count of the planner's new questions ends it, the
same on every run (`WaysLimit`), with the wall clock as the safety net; the jobs it leaves unasked are left out for
want of time, and the answer says so (`ways_cut_short`). Before, `--minimize nodes --time-limit 2` on 500 jobs took
2.6 to 3.8 s of planning (about 20 s on a busy machine) whatever the limit."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import yaml
from cluster_api import buy, place

import solver
import solver.cluster.options
from solver.cli import main
from solver.render import cluster_json
from solver.tables import load_catalog, load_fleet

CATALOG = load_catalog()
MODELS = ["Qwen3-0.6B", "Qwen3-1.7B", "Qwen3-4B", "Qwen3-8B", "Qwen3-14B"]
CUT_WORDS = ("no ways to run worked out within the time limit (the jobs of more priority are asked first; raise "
             "--time-limit)")


def _fleet_file(tmp_path: Path, jobs: int = 12, seed: int = 5) -> Path:
    """Two pools of four 8-GPU nodes (room for every job), and `jobs` seeded jobs of many shapes, each with its own
    priority (job-i has priority jobs - i: the later, the less)."""
    rng = random.Random(seed)
    instance = {
        "pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 4, "gpus_per_node": 8},
                  {"name": "h20", "gpu": "H20-96GB", "nodes": 4, "gpus_per_node": 8}],
        "jobs": [{"name": f"job-{i}", "model": rng.choice(MODELS), "max_model_len": rng.choice([8192, 16384, 32768]),
                  "rollout_gpus": rng.choice([0, 1, 2]), "priority": jobs - i} for i in range(jobs)]}
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(instance), encoding="utf-8")
    return path


def _questions_per_second(monkeypatch: pytest.MonkeyPatch, count: float, wall_share: float = 100.0) -> None:
    """Let the jobs' ways ask `count` new questions per second of the time limit, with the wall clock's net at
    `wall_share` of it (by default far past it: the count alone cuts them, however busy the machine)."""
    monkeypatch.setattr(solver.cluster.options, "WAYS_QUESTIONS_PER_SECOND", count)
    monkeypatch.setattr(solver.cluster.options, "WAYS_WALL_SHARE", wall_share)


def test_the_full_fleet_has_every_jobs_ways_within_the_default_limit(tmp_path: Path):
    result = place(load_fleet(_fleet_file(tmp_path), CATALOG), catalog=CATALOG, minimize="nodes")
    assert (result.status, result.ways_cut_short, len(result.placements), result.unplaced) == ("optimal", (), 12, ())


def test_minimize_nodes_cut_short_is_unknown_and_flagged_and_the_same_twice(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # 12 questions for 12 jobs of many shapes: some jobs get no ways, so no placement places every one. The answer
    # says unknown (not infeasible: the jobs may well fit), names the jobs cut short, and is the same on every run.
    _questions_per_second(monkeypatch, 3)
    fleet = load_fleet(_fleet_file(tmp_path), CATALOG)
    first, second = (place(fleet, catalog=CATALOG, minimize="nodes", time_limit_s=4) for _ in range(2))
    assert cluster_json(first) == cluster_json(second)
    assert (first.status, first.placements, first.wall_clock_stopped) == ("unknown", (), ())
    assert first.ways_cut_short and set(first.ways_cut_short) < {job.name for job in fleet.jobs}
    assert {(entry.reason_code, entry.reason) for entry in first.unplaced} == {
        ("time-limit", "no placement found within the time limit (raise --time-limit)")}


def test_a_placement_cut_short_places_the_jobs_of_more_priority_and_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    _questions_per_second(monkeypatch, 3)
    fleet = load_fleet(_fleet_file(tmp_path), CATALOG)
    first, second = (place(fleet, catalog=CATALOG, time_limit_s=4) for _ in range(2))
    assert cluster_json(first) == cluster_json(second)
    cut = first.ways_cut_short
    asked = [job.name for job in fleet.jobs if job.name not in cut]
    # The jobs of more priority are asked first: those cut short are the last ones (priority falls job by job).
    assert asked == [f"job-{i}" for i in range(len(asked))] and cut == tuple(f"job-{i}" for i in range(len(asked), 12))
    assert 0 < len(asked) < 12
    # A valid placement: the jobs asked, each on its pool's nodes; those cut short left out for want of time.
    assert sorted(placement.job for placement in first.placements) == sorted(asked)
    assert all(use.gpus_used <= use.gpus for use in first.pools)
    assert {entry.job: (entry.reason_code, entry.reason) for entry in first.unplaced} == {
        name: ("time-limit", CUT_WORDS) for name in cut}
    assert (first.status, first.wall_clock_stopped) == ("feasible", ())


def test_required_jobs_are_asked_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    _questions_per_second(monkeypatch, 3)
    fleet = load_fleet(_fleet_file(tmp_path), CATALOG)
    result = place(fleet, catalog=CATALOG, time_limit_s=4, required=["job-11"])
    assert "job-11" not in result.ways_cut_short and "job-11" in {placement.job for placement in result.placements}
    assert result.ways_cut_short


@pytest.mark.wall_clock  # about the wall clock: keeps the real one
def test_the_wall_clock_cuts_them_short_where_the_count_does_not_and_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    _questions_per_second(monkeypatch, 1000, wall_share=0.0)
    result = place(load_fleet(_fleet_file(tmp_path), CATALOG), catalog=CATALOG, minimize="nodes", time_limit_s=4)
    assert (result.status, result.wall_clock_stopped, len(result.ways_cut_short)) == ("unknown", ("ways",), 12)


def test_the_command_says_the_limit_cut_the_ways_short(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    _questions_per_second(monkeypatch, 3)
    path = _fleet_file(tmp_path)
    assert main(["cluster", str(path), "--minimize", "nodes", "--time-limit", "4"]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert out.startswith("status: unknown: time ran out working out the jobs' ways to run, so the search for a "
                          "placement never ran (raise --time-limit) the time limit cut working out the jobs' ways "
                          "short: job-")
    # The status line says to raise the limit; the line on the jobs cut short does not say it again.
    cut_short = "got none (the jobs of more priority are asked first), so no placement was found"
    assert cut_short in out and f"{cut_short} (raise" not in out


BUY_FLEET = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}],
             "jobs": [{"name": "chat-14b", "model": "Qwen3-14B", "max_model_len": 65536, "rollout_gpus": 4},
                      {"name": "probe", "model": "Qwen3-0.6B", "max_model_len": 8192, "rollout_gpus": 0}]}
"""One node of 8 A100s, which the 14B job takes whole: the probe needs a node bought, where the tables' 6 GPUs leave 2
idle."""


def _placed(placements: tuple[solver.Placement, ...]) -> list[tuple[str, int, int, int | None, str]]:
    """Each placement's job, node, trainer GPUs, trainer GPUs it was placed with where it grew, and evidence."""
    return [(p.job, p.nodes[0], p.trainer_gpus, p.widened_from, p.plan.evidence) for p in placements]


def test_the_placement_with_the_nodes_bought_grows_onto_idle_gpus_as_a_placement_does(tmp_path: Path):
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(BUY_FLEET), encoding="utf-8")
    purchase = buy(path, catalog=CATALOG)
    assert (purchase.status, purchase.nodes, purchase.wall_clock_stopped) == ("optimal", 1, ())
    # The probe, on the node bought, grows from the tables' 6 GPUs onto the 2 idle ones (the 6-GPU cell vouches for
    # 8), as solve cluster places it on the pool with that node.
    assert _placed(purchase.placements) == [("chat-14b", 1, 4, None, "documented"), ("probe", 0, 8, 6, "inferred")]
    raised = tmp_path / "raised.yaml"
    raised.write_text(yaml.safe_dump({**BUY_FLEET, "pools": [{**BUY_FLEET["pools"][0], "nodes": 2}]}),
                      encoding="utf-8")
    assert purchase.placements == place(raised, catalog=CATALOG).placements
    # --no-widen leaves them idle, as it does a placement's.
    assert _placed(buy(path, catalog=CATALOG, widen=False).placements) == [
        ("chat-14b", 1, 4, None, "documented"), ("probe", 0, 6, None, "documented")]


def test_the_purchase_table_shows_the_growth(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(BUY_FLEET), encoding="utf-8")
    assert main(["cluster", str(path), "--buy"]) == 0
    out = capsys.readouterr().out
    assert "the placement with them: set each pool's nodes: to its 'nodes then' and run solve cluster" in out
    assert any("│ probe " in line and "8 (+2)" in line for line in out.splitlines())
    assert main(["cluster", str(path), "--buy", "--no-widen"]) == 0
    assert "(+2)" not in capsys.readouterr().out


def test_a_placement_cut_short_names_its_bound_as_the_asked_jobs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    # The search's bound counts the jobs whose ways were asked: not proven of the fleet, and the status line says so.
    _questions_per_second(monkeypatch, 3)
    assert main(["cluster", str(_fleet_file(tmp_path)), "--time-limit", "4"]) == 1
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("status: feasible; placed priority (of 78): ")
    assert first.endswith(" on the jobs whose ways were worked out") and "proven" not in first
