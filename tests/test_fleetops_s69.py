"""A platform team's gaps in `solve cluster` (session 69, helper fleetops): a pool taken out of service with
``nodes: 0`` (its jobs left out, pool code ``no-nodes``; ``--buy`` weighs buying its nodes; the API reads it too);
``--buy``'s status line where the time limit ran out working out the jobs' ways, before any search (``searched``);
``--emit-dir --json`` naming each placement's config (``config_file``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import yaml

import solver
from solver.tables import load_catalog, load_fleet

Cli = Callable[..., tuple[int, str, str]]

CATALOG = load_catalog()

DOWN = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8},
                  {"name": "h20", "gpu": "H20-96GB", "nodes": 0, "gpus_per_node": 8}],
        "jobs": [{"name": "small", "model": "Qwen3-4B", "max_model_len": 32768, "rollout_gpus": 2},
                 {"name": "pinned", "model": "Qwen3-8B", "max_model_len": 32768, "rollout_gpus": 2, "pool": "h20"}]}
"""One A100 node, and an H20 pool down for maintenance (nodes: 0) that `pinned` may alone use."""

OUT_OF_SERVICE = "h20: the pool has no nodes now (nodes: 0)"

TAIL = " names the fewest GPUs, then nodes, to add to the pools (and the jobs no number of nodes runs)\n"


def _write(tmp_path: Path, fleet: dict) -> Path:
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(fleet), encoding="utf-8")
    return path


def test_a_pool_of_no_nodes_leaves_its_pinned_job_out_for_that_reason_and_the_buy_note_names_it(
        cli: Cli, tmp_path: Path):
    # Before, nodes: 0 was refused (exit 2), and deleting the pool made every job pinned to it a bad file.
    path = _write(tmp_path, DOWN)
    status, out, err = cli("cluster", str(path))
    lines = out.splitlines()
    assert status == 1
    assert lines[0] == ("status: optimal; placed priority (of 2, or 1 without the job that has no way to run): 1, "
                        "proven bound 1")
    assert "pool h20: 0 x 8 H20-96GB; no nodes now (nodes: 0): nothing runs there" in lines
    assert f"│ pinned │ {OUT_OF_SERVICE} │" in lines
    assert err == ("solve cluster: note: pinned: no way to run on the pools' nodes as they are, but more nodes may "
                   f"give it a way to run: solve cluster {path} --buy{TAIL}")
    placed = json.loads(cli("cluster", str(path), "--json")[1])
    assert [placement["job"] for placement in placed["placements"]] == ["small"]
    assert [(job["job"], job["reason"], job["reason_code"], [(pool["pool"], pool["reason_code"])
                                                             for pool in job["pools"]])
            for job in placed["unplaced"]] == [("pinned", OUT_OF_SERVICE, "no-way-to-run", [("h20", "no-nodes")])]
    assert [(pool["pool"], pool["nodes"], pool["gpus"], pool["nodes_used"]) for pool in placed["pools"]] == [
        ("a100", 1, 8, 1), ("h20", 0, 0, 0)]


def test_a_job_that_may_use_a_pool_of_no_nodes_is_told_so_beside_the_room_it_lacks(cli: Cli, tmp_path: Path):
    # Two jobs of 5 GPUs at the fewest, either pool: one fits the A100 node; the other's reason names the H20 pool's
    # having no nodes after the room it lacks, with the pool's code.
    jobs = [{"name": name, "model": "Qwen3-4B", "max_model_len": 8192, "rollout_gpus": 4} for name in ("a", "b")]
    path = _write(tmp_path, {**DOWN, "jobs": jobs})
    placed = json.loads(cli("cluster", str(path), "--json")[1])
    (left_out,) = placed["unplaced"]
    assert left_out["reason_code"] == "priority-tie"  # b, of a's priority and after it in the file (s82)
    assert left_out["reason"].endswith(f"; {OUT_OF_SERVICE}")
    assert [(pool["pool"], pool["reason_code"]) for pool in left_out["pools"]] == [
        ("a100", "no-room"), ("h20", "no-nodes")]


def test_buy_weighs_buying_nodes_for_a_pool_of_no_nodes(cli: Cli, tmp_path: Path):
    path = _write(tmp_path, DOWN)
    status, out, _ = cli("cluster", str(path), "--buy", "--json")
    bought = json.loads(out)
    assert (status, bought["status"], bought["gpus"], bought["searched"]) == (0, "optimal", 8, True)
    assert [(pool["pool"], pool["nodes_bought"], pool["nodes_after"]) for pool in bought["pools"]] == [
        ("a100", 0, 1), ("h20", 1, 1)]
    assert {placement["job"]: placement["pool"] for placement in bought["placements"]} == {
        "small": "a100", "pinned": "h20"}


def test_a_required_job_pinned_to_a_pool_of_no_nodes_leaves_no_placement(cli: Cli, tmp_path: Path):
    jobs = [DOWN["jobs"][0], {**DOWN["jobs"][1], "required": True}]
    status, out, _ = cli("cluster", str(_write(tmp_path, {**DOWN, "jobs": jobs})), "--json")
    placed = json.loads(out)
    assert (status, placed["status"], placed["placements"]) == (1, "infeasible", [])
    assert [(job["job"], job["reason"]) for job in placed["unplaced"]] == [
        ("pinned", OUT_OF_SERVICE),
        ("small", "the required job pinned fits nowhere, and a placement places every required job or none")]


def test_the_api_reads_and_places_a_pool_of_no_nodes(tmp_path: Path):
    fleet = load_fleet(_write(tmp_path, DOWN), CATALOG)
    assert [pool.nodes for pool in fleet.pools] == [1, 0]
    result = solver.place(fleet, catalog=CATALOG)
    assert [placement.job for placement in result.placements] == ["small"]
    assert [(job.job, job.reason, [pool.reason_code.value for pool in job.pools]) for job in result.unplaced] == [
        ("pinned", OUT_OF_SERVICE, ["no-nodes"])]
    built = solver.Pool(name="h20", gpu="H20-96GB", nodes=0, gpus_per_node=8)  # in Python too
    assert built.nodes == 0


def test_buy_out_of_time_working_out_the_jobs_ways_says_the_search_never_ran(cli: Cli, tmp_path: Path):
    # At 0.01 s the count of the planner's questions (100 a second) ends before b's ways, which --buy must place: buy
    # returns before any search. The status line said "time ran out before the search found a purchase".
    fleet = {"pools": [DOWN["pools"][0]], "jobs": [{**DOWN["jobs"][0], "name": name} for name in ("a", "b")]}
    path = _write(tmp_path, fleet)
    status, out, _ = cli("cluster", str(path), "--buy", "--time-limit", "0.01")
    assert (status, out.splitlines()[0]) == (1, ("status: unknown: time ran out working out the jobs' ways to run, "
                                                 "so the search for a purchase never ran (raise --time-limit)"))
    bought = json.loads(cli("cluster", str(path), "--buy", "--time-limit", "0.01", "--json")[1])
    assert (bought["status"], bought["searched"], bought["ways_cut_short"]) == ("unknown", False, ["b"])
    assert json.loads(cli("cluster", str(path), "--buy", "--json")[1])["searched"] is True


def test_emit_dir_with_json_names_each_placements_config(cli: Cli, tmp_path: Path):
    path = _write(tmp_path, DOWN)
    folder = tmp_path / "configs"
    status, out, _ = cli("cluster", str(path), "--emit-dir", str(folder), "--json")
    named = {placement["job"]: placement["config_file"] for placement in json.loads(out)["placements"]}
    assert (status, named) == (1, {"small": str(folder / "small.yaml")})
    assert sorted(child.name for child in folder.iterdir()) == ["small.yaml"]
    assert Path(named["small"]).read_text(encoding="utf-8").startswith("#")
    without = json.loads(cli("cluster", str(path), "--json")[1])
    assert [placement["config_file"] for placement in without["placements"]] == [None]
