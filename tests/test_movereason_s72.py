"""`solve cluster --current` (session 72): each job that moves says why (`move_reason`, `move_reason_code`, and a
`moves:` line under the tables), from the file and the search's own answer; a job started with settings the planner
would not pick (SP, Offload) stays where the planner has a plan with them on its GPUs."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from cluster_reference import ONE, job_candidates
from test_clusterkeep2_s71 import _fleet, _running_now
from test_keepplaced_s70 import JOBS, POOLS
from test_mutants18_s70 import RUNS_ON_NODE_1, _placed

from solver.tables import load_catalog

Cli = Callable[..., tuple[int, str, str]]


def _written(path: Path, pools: list[dict[str, Any]], jobs: list[dict[str, Any]]) -> Path:
    path.write_text(yaml.safe_dump({"pools": pools, "jobs": jobs}), encoding="utf-8")
    return path


def _now(cli: Cli, fleet: Path, change: Callable[[dict[str, Any]], None] = lambda placement: None) -> Path:
    """`fleet`'s placement as `solve cluster --json` gives it, changed by `change`, written where --current reads
    it."""
    placement = json.loads(cli("cluster", str(fleet), "--json")[1])
    change(placement)
    path = fleet.with_suffix(".json")
    path.write_text(json.dumps(placement), encoding="utf-8")
    return path


def _moves(out: str) -> list[tuple[str, str | None, str | None, str | None]]:
    """Each placement's job, `current`, `move_reason_code` and `move_reason`, from --json."""
    return [(p["job"], p.get("current"), p.get("move_reason_code"), p.get("move_reason"))
            for p in json.loads(out)["placements"]]


def _changed(name: str, **change: object) -> list[dict[str, object]]:
    return [{**job, **change} if job["name"] == name else job for job in JOBS]


def test_a_job_moved_for_more_priority_says_so_and_a_plain_count_agrees(cli: Cli, tmp_path: Path):
    # c8-b raised to 3 needs a node whole: q14-a leaves h20 for it (s70's fleet). Its reason is the stage of running
    # jobs kept: it kept 3; kept as well, q14-a would make 4, so no placement of priority 9 keeps all 4.
    now = _now(cli, _written(tmp_path / "now.yaml", POOLS, JOBS))
    fleet = _written(tmp_path / "raised.yaml", POOLS, _changed("c8-b", priority=3))
    status, out, _ = cli("cluster", str(fleet), "--current", str(now), "--json")
    why = ("keeping it where it runs (as well as the 3 running jobs kept) places less priority than this placement "
           "(9); its GPUs now run c8-b (priority 3)")
    assert status == 1 and [move for move in _moves(out) if move[1] == "moves"] == [
        ("q14-a", "moves", "more-priority", why)]
    assert f"moves: q14-a: it runs on node 0 of pool h20 (all its GPUs) now, and restarts as placed: {why}" in " ".join(
        cli("cluster", str(fleet), "--current", str(now))[1].split())  # the line wraps
    # Plain count: with q14-a on h20 and the three kept on a100 (GPUs 0-6 of node 0, 0-1 of node 1), the jobs left
    # (c8-a, c8-b, q14-b) have a100's GPU 7 of node 0 and 2-7 of node 1, each at its fewest GPUs of one node.
    catalog, a100 = load_catalog(), POOLS[0]
    left = [job for job in _changed("c8-b", priority=3) if job["name"] in ("c8-a", "c8-b", "q14-b")]
    fewest = [min((c["n"] + job["rollout_gpus"] for c in job_candidates(catalog, job, a100, estimates=True)
                   if c["layout"][0] == ONE), default=None) for job in left]
    most = max(sum(job.get("priority", 1) for job, node in zip(left, nodes) if node is not None)
               for nodes in itertools.product((None, 0, 1), repeat=len(left))
               if all(sum(gpus for gpus, at in zip(fewest, nodes) if at == node) <= free
                      and all(gpus is not None for gpus, at in zip(fewest, nodes) if at == node)
                      for node, free in ((0, 1), (1, 6))))
    kept = sum(job.get("priority", 1) for job in JOBS if job["name"] in ("q14-a", "p06-a", "m4-a", "m4-b"))
    assert fewest == [4, 8, 8] and kept + most == 7 < json.loads(out)["objective"]


def test_a_file_that_asks_otherwise_says_what_changed(cli: Cli, tmp_path: Path):
    now = _now(cli, _written(tmp_path / "now.yaml", POOLS, JOBS))
    jobs = [{**job, **change} for job, change in zip(JOBS, (
        {"model": "Qwen3-8B"}, {}, {"rollout_gpus": 2}, {"max_model_len": 16384}, {}, {"pool": "a100"}, {}))]
    status, out, _ = cli("cluster", str(_written(tmp_path / "asks.yaml", POOLS, jobs)), "--current", str(now),
                         "--json")
    assert status == 1 and _moves(out) == [
        ("p06-a", "moves", "model-changed", "the file asks model Qwen3-8B now; it runs Qwen3-0.6B"),
        ("m4-a", "stays", None, None),
        ("m4-b", "moves", "rollout-changed", "the file asks 2 rollout GPUs now; it runs with 1"),
        ("c8-a", "moves", "length-changed", "the file asks max_model_len 16384 now; it runs at 32768"),
        ("q14-a", "moves", "pool-not-allowed", "the file pins it to pool a100 now; it runs in pool h20")]


def test_a_placement_without_a_model_reads_the_file_as_it_asks(cli: Cli, tmp_path: Path):
    # A hand-written placement may leave `model` out: the job is taken to run the model the file asks.
    def without_model(placement: dict[str, Any]) -> None:
        for placed in placement["placements"]:
            del placed["model"]

    fleet = _written(tmp_path / "now.yaml", POOLS, JOBS)
    status, out, _ = cli("cluster", str(fleet), "--current", str(_now(cli, fleet, without_model)), "--json")
    assert status == 1 and {move[1] for move in _moves(out)} == {"stays"}


SOLO_A100 = [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8, "host_ram_gb": 1024}]


def _hand_started(cli: Cli, tmp_path: Path, length: str, sp: int) -> str:
    """--json of a Qwen3-8B job at `length` on 8 A100s with --current, where it runs on all 8 at `sp`."""
    fleet = _written(tmp_path / "hand.yaml", SOLO_A100,
                     [{"name": "hand", "model": "Qwen3-8B", "max_model_len": length, "rollout_gpus": 0}])

    def started(placement: dict[str, Any]) -> None:
        placed = placement["placements"][0]
        placed.update(trainer_gpus=8, gpu_indexes=list(range(8)))
        placed["plan"]["sp"] = sp

    status, out, _ = cli("cluster", str(fleet), "--current", str(_now(cli, fleet, started)), "--json")
    assert status == 0
    return out


def test_a_job_started_with_an_sp_the_planner_would_not_pick_stays(cli: Cli, tmp_path: Path):
    # At 16k on 8 A100s the planner picks Env (SP=1); started with SP=4, which the planner trains there too, the job
    # stays as it runs. Before, no way of its had SP=4, and it moved (a restart to Env).
    out = _hand_started(cli, tmp_path, "16k", 4)
    placed = json.loads(out)["placements"][0]
    assert (placed["current"], placed["plan"]["sp"], placed["trainer_gpus"]) == ("stays", 4, 8)
    assert _moves(out) == [("hand", "stays", None, None)]


def test_settings_the_planner_has_no_plan_with_move_and_say_so(cli: Cli, tmp_path: Path):
    # SP=1 at 32k on 8 A100s runs out of memory by the tables and estimates (solve --sp 1 says the longest is 24576).
    why = ("the planner has no plan for it with SP=1 without Offload at 32768 tokens on its 8 trainer GPUs in pool "
           "a100 (its cheapest way there: Env + SP=2)")
    assert _moves(_hand_started(cli, tmp_path, "32k", 1)) == [("hand", "moves", "no-way-as-it-runs", why)]


def test_a_count_without_a_way_names_the_counts_with_one(cli: Cli, tmp_path: Path):
    # s71's fleet: duo started by hand on 2 GPUs, where no plan trains it.
    now = _running_now(cli, tmp_path, (1, {"trainer_gpus": 2, "gpu_indexes": [0, 1]}))
    status, out, _ = cli("cluster", str(_fleet(tmp_path)), "--current", str(now), "--json")
    assert status == 0 and _moves(out)[1] == (
        "duo", "moves", "no-way-at-count", "no way to run it on 2 trainer GPUs in pool a100 (its ways there take 4)")


TWO_SMALL = [{"name": name, "model": "Qwen3-0.6B", "max_model_len": 8192, "rollout_gpus": 1} for name in "ab"]
"""Two jobs placed on a node each (7 GPUs, --no-widen); at their fewest (3 GPUs) they share one."""


def test_minimize_nodes_moves_jobs_for_fewer_nodes_and_says_so(cli: Cli, tmp_path: Path):
    pools = [{"name": "a100", "gpu": "A100-80GB", "nodes": 2, "gpus_per_node": 8}]
    fleet = _written(tmp_path / "two.yaml", pools, TWO_SMALL)
    now = _now(cli, fleet, lambda placement: placement["placements"][1].update(nodes=[1]))
    status, out, _ = cli("cluster", str(fleet), "--current", str(now), "--minimize", "nodes", "--json")
    why = "keeping it where it runs uses more nodes than this placement (1)"
    assert status == 0 and _moves(out) == [("a", "moves", "fewer-nodes", f"{why}; its GPUs now run b"),
                                           ("b", "moves", "fewer-nodes", why)]


def test_a_moving_job_names_where_it_runs_now_in_its_json_and_its_config(cli: Cli, tmp_path: Path):
    # Was: "moves" and why, but not from where (moved_from left out), and the --emit-dir config said where it was
    # placed alone: a user reading the folder could not tell a restart from a job that runs there already.
    pools = [{"name": "a100", "gpu": "A100-80GB", "nodes": 2, "gpus_per_node": 8}]
    fleet = _written(tmp_path / "two.yaml", pools, TWO_SMALL)
    now = _now(cli, fleet, lambda placement: placement["placements"][1].update(nodes=[1]))
    out_dir = tmp_path / "out"
    status, out, _ = cli("cluster", str(fleet), "--current", str(now), "--minimize", "nodes", "--json",
                         "--emit-dir", str(out_dir))
    seven = list(range(7))
    assert status == 0 and [(placed["job"], placed["current"], placed["moved_from"])
                            for placed in json.loads(out)["placements"]] == [
        ("a", "moves", {"pool": "a100", "nodes": [0], "gpu_indexes": seven, "trainer_nodes": [0]}),
        ("b", "moves", {"pool": "a100", "nodes": [1], "gpu_indexes": seven, "trainer_nodes": [1]})]
    header = " ".join(line.removeprefix("# ") for line in (out_dir / "b.yaml").read_text().splitlines()[2:5])
    assert header == ("placed on node 0 of pool a100 (GPUs 3-7) now: moves: it runs on node 1 of pool a100 (GPUs 0-6) "
                      "now, and restarts as placed: keeping it where it runs uses more nodes than this placement (1)")


def test_a_job_moving_from_a_whole_node_names_all_its_gpus() -> None:
    # mutants47: a job that ran on every GPU of its node ran on all of them, not on GPUs 0-7 of a larger node
    # words89: it takes the fleet, which both its callers looked the pool's node size up in
    from solver.results import RunsAt
    from solver.tables import Fleet
    from solver.trinity import moved_from_words

    def fleet(pool: str, node_gpus: int) -> Fleet:
        return Fleet(pools=[{"name": pool, "gpu": "a100", "nodes": 2, "gpus_per_node": node_gpus}],
                     jobs=[{"name": "j", "model": "4B", "max_model_len": 8192}])

    whole = RunsAt(pool="a100", nodes=(1,), gpu_indexes=tuple(range(8)))
    assert moved_from_words(whole, fleet("a100", 8)) == "node 1 of pool a100 (all its GPUs)"
    assert moved_from_words(whole, fleet("a100", 16)) == "node 1 of pool a100 (GPUs 0-7)"
    assert moved_from_words(whole, fleet("h100", 8)) == "node 1 of pool a100 (GPUs 0-7)"  # its pool's size unknown
    assert moved_from_words(None, fleet("a100", 8)) is None  # it does not move, or JSON made before moved_from


def test_each_config_says_whether_its_job_stays_or_starts(cli: Cli, tmp_path: Path):
    # a and b run on a node each; c, new, fits the GPU each leaves: they stay, it starts, and their configs say so
    # under where they are placed, as the table's now column does (none said it: one header for all three).
    pools = [{"name": "a100", "gpu": "A100-80GB", "nodes": 2, "gpus_per_node": 8}]
    now = _now(cli, _written(tmp_path / "two.yaml", pools, TWO_SMALL))
    added = [*TWO_SMALL, {"name": "c", "model": "Qwen3-0.6B", "max_model_len": 8192}]
    out_dir = tmp_path / "out"
    status, out, _ = cli("cluster", str(_written(tmp_path / "three.yaml", pools, added)), "--current", str(now),
                         "--emit-dir", str(out_dir))
    assert status == 0 and [row.split("│")[-2].strip() for row in out.splitlines() if row.startswith("│")] == [
        "stays", "starts", "stays"]
    assert {name: (out_dir / f"{name}.yaml").read_text().splitlines()[3] for name in "abc"} == {
        "a": "# now: stays: it runs there now, as placed (no restart)",
        "b": "# now: stays: it runs there now, as placed (no restart)", "c": "# now: starts: it does not run now"}
    assert [(out_dir / f"{name}.yaml").read_text().count("# now:") for name in "abc"] == [1, 1, 1]


def test_a_job_on_other_gpus_than_its_ways_take_says_so(cli: Cli, tmp_path: Path):
    # duo written as running 4 trainer GPUs on 6 GPUs of node 1 (a hand-made placement): its ways at 4 take 4.
    now = _running_now(cli, tmp_path, (1, {"trainer_gpus": 4, "gpu_indexes": list(range(6))}))
    status, out, _ = cli("cluster", str(_fleet(tmp_path)), "--current", str(now), "--json")
    assert status == 0 and _moves(out)[1] == (
        "duo", "moves", "no-way-as-it-runs",
        "its ways on 4 trainer GPUs in pool a100 take 4 GPUs of one node, not the 6 GPUs of one node it runs on")


@pytest.mark.parametrize(("field", "value"), [("sp", 2), ("offload", True)])
def test_a_job_running_with_its_own_sp_or_offload_stays_with_it(cli: Cli, tmp_path: Path, field: str, value: object):
    # s70's job on node 1 with SP=2, or with Offload: not the planner's pick (vanilla), but trained so there. Before,
    # it moved to node 0 (test_mutants18_s70 had them among the fields that move a job); now it stays as it runs.
    running = {**RUNS_ON_NODE_1, "plan": {**RUNS_ON_NODE_1["plan"], field: value}}
    assert _placed(cli, tmp_path, running) == [([1], [0, 1, 2, 3, 4, 5, 6], "stays")]


def test_a_move_without_where_it_runs_now_says_no_none():
    # a placement read from JSON made before moved_from (s87) gave its config "# now: moves: it runs on None now, and
    # restarts as placed: None" (s87 lastread87)
    from solver.trinity import running_now_words
    assert running_now_words("moves") == "moves: it restarts as placed"
    assert running_now_words("moves", None, "why") == "moves: it restarts as placed: why"
    assert running_now_words("moves", "node 1 of pool a100 (all its GPUs)", "why") == (
        "moves: it runs on node 1 of pool a100 (all its GPUs) now, and restarts as placed: why")


def test_minimize_nodes_with_jobs_that_stay_counts_the_nodes_not_the_jobs_kept(cli: Cli, tmp_path: Path):
    # The two jobs run where --minimize nodes puts them (one node): both stay, and the objective is that one node.
    # The first stage minimises the nodes times 3 less the 2 jobs kept (3 - 2 = 1), read back as nodes rounded up
    # (`count_of`); mutants54 read it back rounded down: 0 nodes.
    pools = [{"name": "a100", "gpu": "A100-80GB", "nodes": 2, "gpus_per_node": 8}]
    fleet = _written(tmp_path / "two.yaml", pools, TWO_SMALL)
    now = fleet.with_suffix(".json")
    now.write_text(cli("cluster", str(fleet), "--json", "--minimize", "nodes")[1], encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet), "--current", str(now), "--minimize", "nodes", "--json")
    placed = json.loads(out)
    assert (status, placed["objective"], placed["objective_counts"]) == (0, 1, "nodes")
    assert [move[:2] for move in _moves(out)] == [("a", "stays"), ("b", "stays")]


def test_a_job_on_more_nodes_than_its_way_takes_moves_onto_one(cli: Cli, tmp_path: Path):
    # A job of 7 GPUs on one node, listed by --current as on nodes 0 and 1 (the same GPUs of each): no way of its
    # keeps it as it runs, so it moves onto node 0 alone (mutants54 let it stay on both nodes: the node count
    # unchecked).
    pools = [{"name": "a100", "gpu": "A100-80GB", "nodes": 2, "gpus_per_node": 8}]
    fleet = _written(tmp_path / "one.yaml", pools, TWO_SMALL[:1])
    now = _now(cli, fleet, lambda placement: placement["placements"][0].update(nodes=[0, 1]))
    status, out, _ = cli("cluster", str(fleet), "--current", str(now), "--json")
    [placed] = json.loads(out)["placements"]
    assert (status, placed["nodes"], placed["gpu_indexes"]) == (0, [0], list(range(7)))
    why = ("its ways on 6 trainer GPUs in pool a100 take 7 GPUs of one node, not the 7 GPUs of each of 2 nodes it runs "
           "on")
    assert _moves(out) == [("a", "moves", "no-way-as-it-runs", why)]


def test_running_jobs_whose_host_memory_a_node_no_longer_holds_do_not_all_stay(cli: Cli, tmp_path: Path):
    # Two Qwen3-32B jobs (4 GPUs and 664.2 GiB each, with Offload, under Trinity 0.6) run on one H800 node of 2000 GiB;
    # on nodes of 900 GiB only one stays there and the other moves to node 1 (a small job starts beside the one that
    # stays). mutants54 let one node take two of its pool's patterns, and both jobs stayed.
    def fleet(host_ram_gb: int, nodes: int) -> Path:
        pools = [{"name": "h800", "gpu": "H800-80GB", "nodes": nodes, "gpus_per_node": 8, "host_ram_gb": host_ram_gb}]
        jobs = [*({"name": name, "model": "Qwen3-32B", "max_model_len": 65536} for name in ("p", "q")),
                {"name": "s", "model": "Qwen3-0.6B", "max_model_len": 4096}]
        return _written(tmp_path / f"host{host_ram_gb}.yaml", pools, jobs)

    now = tmp_path / "now.json"
    now.write_text(cli("cluster", str(fleet(2000, 1)), "--json", "--trinity-version", "0.6")[1], encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet(900, 2)), "--current", str(now), "--json", "--trinity-version", "0.6")
    assert status == 0 and [(p["job"], p["nodes"], p["current"]) for p in json.loads(out)["placements"]] == [
        ("p", [0], "stays"), ("q", [1], "moves"), ("s", [0], "starts")]
    # Its reason names the node's host memory, which holds p or q, not both (leftovers91: priority alone before).
    assert _moves(out)[1][2:] == ("more-priority", (
        "keeping it where it runs (as well as the 1 running job kept) places less priority than this placement (3): "
        "node 0's 900 GiB of host memory holds p (664.2 GiB), kept there, not it too (664.2 GiB more); its GPUs now "
        "run s (priority 1)"))
