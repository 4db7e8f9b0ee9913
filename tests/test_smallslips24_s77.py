"""Small slips in cluster planning and the API (s77, helper smallslips24): a job running on nodes its pool no longer
has (``nodes`` lowered, not to 0) moves (``node-gone``, naming the node) or stops, never "starts"; ``--buy`` buys
into a pool of ``nodes: 0`` as docs/cluster.md says; an unplaced job's pools of one need are named together; the
greedy baseline weighs no running jobs; a plan's cost is unrounded in JSON; ``unused_gpus`` counts the rollout's
GPUs past those asked."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import yaml

from solver import load_weights
from solver.cluster import Planner, greedy
from solver.cluster.greedy import greedy_choice
from solver.cluster.options import fleet_options
from solver.cluster.placements import _asks_otherwise
from solver.results import MoveCode
from solver.tables import RunningJob, load_catalog, load_fleet

Cli = Callable[..., tuple[int, str, str]]

CATALOG = load_catalog()

TWO_NODES = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 2, "gpus_per_node": 8}],
             "jobs": [{"name": "big", "model": "Qwen3-14B", "max_model_len": 65536, "rollout_gpus": 4},
                      {"name": "small", "model": "Qwen3-4B", "max_model_len": 32768, "rollout_gpus": 2}]}
"""Two A100 nodes: big on node 0, small on node 1 (each takes its node whole)."""


def _write(path: Path, fleet: dict) -> Path:
    path.write_text(yaml.safe_dump(fleet), encoding="utf-8")
    return path


def _lowered(cli: Cli, tmp_path: Path, small_priority: int) -> tuple[Path, Path]:
    """The placement of `TWO_NODES` as it runs now (``--json``), and the fleet with its pool lowered to one node and
    small of `small_priority`."""
    placed = cli("cluster", str(_write(tmp_path / "up.yaml", TWO_NODES)), "--json")[1]
    assert [(p["job"], p["nodes"]) for p in json.loads(placed)["placements"]] == [("big", [0]), ("small", [1])]
    current = tmp_path / "now.json"
    current.write_text(placed, encoding="utf-8")
    jobs = [{**job, "priority": small_priority} if job["name"] == "small" else job for job in TWO_NODES["jobs"]]
    down = {"pools": [{**TWO_NODES["pools"][0], "nodes": 1}], "jobs": jobs}
    return current, _write(tmp_path / "down.yaml", down)


def test_a_job_on_a_node_its_pool_no_longer_has_moves_naming_the_node(cli: Cli, tmp_path: Path):
    # Before, read_current skipped small's entry (node 1 "no longer there"): small was not running, and "starts".
    current, down = _lowered(cli, tmp_path, small_priority=2)
    status, out, _ = cli("cluster", str(down), "--current", str(current), "--json")
    answer = json.loads(out)
    assert status == 1
    assert [(p["job"], p["nodes"], p["current"], p.get("move_reason_code"), p.get("move_reason"))
            for p in answer["placements"]] == [
        ("small", [0], "moves", "node-gone", "node 1 of pool a100, where it runs, is no longer in the pool (nodes: 1)")]
    assert [(u["job"], u["current"]) for u in answer["unplaced"]] == [("big", "stops")]
    lines = cli("cluster", str(down), "--current", str(current))[1].splitlines()
    assert lines[1] == "running now: 0 stay, 1 moves, 1 stops; 0 start"
    assert ("moves: small: it runs on node 1 of pool a100 (all its GPUs) now, "
            "and restarts as placed: node 1 of pool a100, where it "
            "runs, is no longer in the pool (nodes: 1)") in lines


def test_a_job_on_a_node_its_pool_no_longer_has_stops_where_left_out(cli: Cli, tmp_path: Path):
    current, down = _lowered(cli, tmp_path, small_priority=1)
    lines = cli("cluster", str(down), "--current", str(current))[1].splitlines()
    assert lines[1] == "running now: 1 stays, 0 move, 1 stops; 0 start"  # before: "0 stop" (small not running)
    assert any(line.startswith("│ small (stops) │ no room left in a100 (it needs at least 4 GPUs (2 trainer + 2 "
                               "rollout) of one node)")
               for line in lines)


def test_the_nodes_a_pool_no_longer_has_are_named_each(tmp_path: Path):
    fleet = load_fleet(_write(tmp_path / "one.yaml", {**TWO_NODES, "pools": [{**TWO_NODES["pools"][0], "nodes": 1}]}),
                       CATALOG)
    planner = Planner(CATALOG.for_fleet(fleet), load_weights(), "auto")
    on_three = RunningJob(job=0, pool=0, nodes=(0, 1, 2), gpu_indexes=tuple(range(8)), trainer_gpus=16,
                          rollout_gpus=8, max_model_len=65536, sp=4, offload=True)
    assert on_three.gone_nodes(fleet.pools[0]) == (1, 2)
    assert _asks_otherwise(planner, fleet, on_three) == (
        MoveCode.NODE_GONE, "nodes 1 and 2 of pool a100, where it runs, are no longer in the pool (nodes: 1)")
    assert _asks_otherwise(planner, fleet, on_three._replace(nodes=(0,), trainer_gpus=4, rollout_gpus=4)) is None


def test_buy_buys_into_a_pool_of_no_nodes_as_the_docs_say(cli: Cli, tmp_path: Path):
    # docs/cluster.md (Pools, `nodes`; What to buy): a pool of nodes: 0 is weighed as any other, its `nodes then`
    # what to set it back to; a job pinned there gets its node bought.
    fleet = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8},
                       {"name": "h20", "gpu": "H20-96GB", "nodes": 0, "gpus_per_node": 8}],
             "jobs": [{"name": "small", "model": "Qwen3-4B", "max_model_len": 32768, "rollout_gpus": 2,
                       "pool": "a100"},
                      {"name": "pinned", "model": "Qwen3-8B", "max_model_len": 32768, "rollout_gpus": 2,
                       "pool": "h20"}]}
    status, out, _ = cli("cluster", str(_write(tmp_path / "zero.yaml", fleet)), "--buy", "--json")
    answer = json.loads(out)
    assert (status, answer["status"], answer["gpus"], answer["nodes"]) == (0, "optimal", 8, 1)
    assert [(p["pool"], p["nodes_bought"], p["nodes_after"]) for p in answer["pools"]] == [
        ("a100", 0, 1), ("h20", 1, 1)]
    assert [(p["job"], p["pool"]) for p in answer["placements"]] == [("small", "a100"), ("pinned", "h20")]


def test_an_unplaced_jobs_pools_of_one_need_are_named_together(cli: Cli, tmp_path: Path):
    # Before: "no room left in b (it needs at least 6 GPUs of one node), four (...), a (it needs at least 6 GPUs of
    # one node)": the need repeated per pool.
    eight = {"gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}
    fleet = {"pools": [{**eight, "name": "b"}, {"name": "four", "gpu": "A100-80GB", "nodes": 2, "gpus_per_node": 4},
                       {**eight, "name": "a"}],
             "jobs": [*({"name": f"m{n}", "model": "Qwen3-4B", "max_model_len": 32768, "rollout_gpus": 2,
                         "priority": 3, "pool": pool} for n, pool in enumerate(("b", "a", "four", "four"))),
                      {"name": "c", "model": "Qwen3-8B", "max_model_len": 32768, "rollout_gpus": 4}]}
    out = cli("cluster", str(_write(tmp_path / "group.yaml", fleet)), "--no-widen", "--json")[1]
    (unplaced,) = json.loads(out)["unplaced"]
    assert unplaced["reason"].startswith(
        "no room left in b and a (it needs at least 6 GPUs (2 trainer + 4 rollout) of one node), four (it needs at "
        "least 2 whole nodes) after "
        "the jobs placed")
    assert unplaced["reason_for_several"].startswith(
        "no room left in b and a (each needs at least 6 GPUs (2 trainer + 4 rollout) of one node), four (each needs at "
        "least 2 whole nodes) ")


def test_the_greedy_baseline_weighs_no_running_jobs_where_the_search_start_does(tmp_path: Path):
    # small alone, running on node 1 of two: the search's greedy start (greedy_choice with `running`) keeps it there;
    # the baseline (`greedy`, no running jobs) puts it on the first node with room, as its docstring says.
    fleet = load_fleet(_write(tmp_path / "small.yaml", {**TWO_NODES, "jobs": TWO_NODES["jobs"][1:]}), CATALOG)
    planner = Planner(CATALOG.for_fleet(fleet), load_weights(), "auto")
    options = fleet_options(planner, fleet).options
    way = next(option for option in options if option.plan.gpus == 6)
    running = RunningJob(job=0, pool=0, nodes=(1,), gpu_indexes=tuple(range(8)), trainer_gpus=6, rollout_gpus=2,
                         max_model_len=32768, sp=way.plan.sp, offload=way.plan.offload)
    assert greedy_choice(fleet, options, smallest_first=True, running=[running])[0][1] == [1]
    assert [placed.nodes for placed in greedy(fleet, CATALOG).placements] == [(0,)]


def test_a_plans_cost_is_unrounded_in_json_and_rounded_in_the_text(cli: Cli):
    flags = ("--model", "4B", "--gpu", "A100-80GB", "--gpus", "6", "--exact", "--len", "32k")
    (answer,) = json.loads(cli(*flags, "--json")[1])
    assert answer["plans"][0]["cost"] == 0.18333333333333332  # docs/planner.md, docs/api.md
    assert "cost           0.1833 relative step time (best with --exact)" in cli(*flags)[1].splitlines()


def test_unused_gpus_counts_those_a_rollout_on_whole_nodes_takes(cli: Cli):
    # docs/planner.md's example: unused_gpus is budget_gpus less gpus, whoever takes them.
    (answer,) = json.loads(cli("--model", "4B", "--gpu", "A100-80GB", "--total-gpus", "16", "--rollout-gpus", "2",
                               "--len", "98304", "--json")[1])
    plan = answer["plans"][0]
    assert (answer["budget_gpus"], plan["gpus"], plan["unused_gpus"], plan["rollout_gpus"]) == (14, 8, 6, 8)
