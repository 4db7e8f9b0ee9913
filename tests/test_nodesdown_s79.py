"""Nodes of a pool that are down, s79 (nodesdown): a pool's ``down: [3]`` names nodes that exist but take no job
(`Pool.down`), numbered as ``--current``'s placement and the placement number them: a job running there moves
(``node-down``) or stops, the placement never uses them, the other nodes keep their numbers, and the output and JSON
say which nodes are down; a bad ``down`` is one line, exit 2; ``--buy`` keeps them down and numbers the nodes it buys
after the pool's own; the checkers of a placement (`check_placed_on`, the tests' `check_placements`) know them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from cluster_reference import check_placements

import solver
from solver.tables import QueryError, TableError
from solver.tables.loaders import load_catalog

CATALOG = load_catalog()

POOL = {"name": "a100", "gpu": "A100-80GB", "nodes": 5, "gpus_per_node": 8}
JOBS = [{"name": "long", "model": "Qwen3-14B", "max_model_len": 131072, "rollout_gpus": 8},
        {"name": "small", "model": "Qwen3-0.6B", "max_model_len": 8192, "rollout_gpus": 1},
        {"name": "mid", "model": "Qwen3-4B", "max_model_len": 32768, "rollout_gpus": 2},
        {"name": "sft", "model": "Qwen3-8B", "max_model_len": 8192, "rollout_gpus": 0, "train_batch_size": 64}]
"""Five nodes: long on nodes 0 and 1, sft on node 2, small on node 3, mid on node 4 (each grown onto its node)."""

RUNS_NOW = {"long": ([0, 1], list(range(8))), "small": ([3], list(range(7))), "mid": ([4], list(range(8))),
            "sft": ([2], list(range(8)))}


def _fleet(tmp_path: Path, name: str = "fleet.yaml", **pool: object) -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump({"pools": [{**POOL, **pool}], "jobs": JOBS}), encoding="utf-8")
    return path


def _placed(out: str) -> dict[str, tuple[list[int], list[int], str | None, str | None]]:
    return {p["job"]: (p["nodes"], p["gpu_indexes"], p.get("current"), p.get("move_reason_code"))
            for p in json.loads(out)["placements"]}


def _now(cli, tmp_path: Path) -> Path:
    status, out, _ = cli("cluster", str(_fleet(tmp_path)), "--json")
    assert status == 0
    assert {job: placed[:2] for job, placed in _placed(out).items()} == RUNS_NOW
    now = tmp_path / "now.json"
    now.write_text(out, encoding="utf-8")
    return now


def test_the_job_on_a_node_down_moves_and_the_others_keep_their_nodes_numbered_as_before(cli, tmp_path: Path):
    now = _now(cli, tmp_path)
    path = _fleet(tmp_path, "down.yaml", down=[2])
    status, out, err = cli("cluster", str(path), "--current", str(now), "--json")
    assert (status, err) == (0, "")
    assert _placed(out) == {"long": ([0, 1], list(range(8)), "stays", None),
                            "small": ([3], list(range(7)), "stays", None),
                            "mid": ([4], list(range(8)), "stays", None),
                            "sft": ([3], [7], "moves", "node-down")}
    result = json.loads(out)
    assert [p["move_reason"] for p in result["placements"] if p["job"] == "sft"] == [
        "node 2 of pool a100, where it runs, is down (down: [2])"]
    assert result["pools"] == [{"pool": "a100", "nodes": 5, "gpus": 40, "down": [2], "nodes_used": 4,
                                "gpus_used": 32, "host_ram_gb": None, "fullest_node_host_gb": None}]
    instance = {"pools": [{**POOL, "down": [2]}], "jobs": JOBS}
    assert check_placements(CATALOG, instance, result, ignore_unused_gpus=True, estimates=True) == []
    status, text, _ = cli("cluster", str(path), "--current", str(now))
    assert status == 0
    assert "pool a100: 5 x 8 A100-80GB, node 2 down; 4 nodes and 32 of 40 GPUs used" in text
    assert ("moves: sft: it runs on node 2 of pool a100 (all its GPUs) now, "
            "and restarts as placed: node 2 of pool a100, where it "
            "runs, is down (down: [2])") in text


def test_without_a_placement_running_no_job_goes_on_a_node_down(cli, tmp_path: Path):
    status, out, _ = cli("cluster", str(_fleet(tmp_path, down=[0, 3])), "--json")
    assert status == 0
    assert {job: placed[0] for job, placed in _placed(out).items()} == {
        "long": [1, 2], "small": [4], "mid": [4], "sft": [4]}
    status, text, _ = cli("cluster", str(_fleet(tmp_path, down=[0, 3])))
    assert "pool a100: 5 x 8 A100-80GB, nodes 0 and 3 down; 3 nodes and" in text


def test_the_api_places_a_pool_built_in_code_with_nodes_down():
    fleet = solver.Fleet(pools=(solver.Pool(**{**POOL, "nodes": 2}, down=(0,)),),
                         jobs=(solver.Job(name="small", model="Qwen3-0.6B", max_model_len=8192, rollout_gpus=1),))
    result = solver.place(fleet)
    assert [(p.job, p.nodes) for p in result.placements] == [("small", (1,))]
    assert result.pools[0].down == (0,)
    with pytest.raises(ValueError, match="down names node 2, which the pool lacks: its nodes are numbered 0 to 1"):
        solver.Pool(**{**POOL, "nodes": 2}, down=(2,))


@pytest.mark.parametrize(("down", "message"), [
    ("[5]", "line 20: pool a100: down names node 5, which the pool lacks: its nodes are numbered 0 to 4"),
    ("[1, 3, 1]", "line 20: pool a100: down names node 1 twice: name each node that is down once"),
    ("[-1]", "line 24: pool a100, down item 1: must be at least 0, got -1"),
    ("[0, 1, 2, 3, 4]", ("line 20: pool a100: down names every node of the pool: give it nodes: 0 for a pool out of "
                         "service")),
    ("2", "line 24: pool a100, down: must be a list, got 2"),
    ("[true]", "line 24: pool a100, down item 1: must be a whole number, got true"),
])
def test_a_bad_down_is_one_line_naming_the_pool_exit_2(cli, tmp_path: Path, down: str, message: str):
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump({"pools": [POOL], "jobs": JOBS}).replace("nodes: 5", f"nodes: 5\n  down: {down}"),
                    encoding="utf-8")
    status, out, err = cli("cluster", str(path))
    assert (status, out, err) == (2, "", f"solve cluster: error: {path}: {message}\n")


def test_nodes_down_in_a_pool_of_none_are_refused(tmp_path: Path):
    with pytest.raises(TableError, match="down names nodes of a pool of none"):
        solver.load_fleet(_fleet(tmp_path, nodes=0, down=[0]))


def test_a_placement_checked_against_a_fleet_with_other_nodes_down_is_refused(tmp_path: Path):
    result = solver.place(_fleet(tmp_path))
    with pytest.raises(QueryError, match=r"^result has nodes \[\] of pool a100 down, fleet has \[2\]: pass the fleet "
                                         "it placed$"):
        solver.placement_configs(result, _fleet(tmp_path, "down.yaml", down=[2]))
    down = {**result.pools[0].model_dump(), "down": (2,)}
    on_down = result.model_copy(update={"pools": (solver.PoolUse(**down),)})
    with pytest.raises(QueryError, match="^result places sft on nodes 2 of pool a100, where a node is down: pass"):
        solver.placement_configs(on_down, _fleet(tmp_path, "down.yaml", down=[2]))


def test_the_reference_checker_finds_a_job_on_a_node_down(cli, tmp_path: Path):
    status, out, _ = cli("cluster", str(_fleet(tmp_path)), "--json")
    assert status == 0
    result = json.loads(out)
    result["pools"][0]["down"] = [2]
    instance = {"pools": [{**POOL, "down": [2]}], "jobs": JOBS}
    assert check_placements(CATALOG, instance, result, ignore_unused_gpus=True, estimates=True) == [
        "job 'sft': node 2 of pool 'a100' is down"]


def test_buy_keeps_the_nodes_down_and_numbers_the_nodes_it_buys_after_the_pools_own(cli, tmp_path: Path):
    path = tmp_path / "buy.yaml"
    path.write_text(yaml.safe_dump({"pools": [{**POOL, "nodes": 2, "down": [0]}], "jobs": JOBS[:1]}),
                    encoding="utf-8")
    status, out, _ = cli("cluster", str(path), "--buy", "--json")
    assert status == 0
    bought = json.loads(out)
    assert (bought["gpus"], bought["nodes"]) == (8, 1)
    assert bought["pools"] == [{"pool": "a100", "gpu": "A100-80GB", "nodes_bought": 1, "gpus_bought": 8,
                                "nodes_after": 3, "down": [0], "nodes_used": 2, "gpus_used": 16,
                                "host_ram_gb": None, "fullest_node_host_gb": None}]
    assert [(p["job"], p["nodes"]) for p in bought["placements"]] == [("long", [1, 2])]


def test_a_reason_counts_the_gpus_up_alone(cli, tmp_path: Path):
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump({"pools": [{**POOL, "nodes": 2, "down": [0]}], "jobs": JOBS[:1]}), encoding="utf-8")
    status, out, _ = cli("cluster", str(path), "--json")
    assert status == 1
    assert [job["reason"] for job in json.loads(out)["unplaced"]] == [
        "a100: the job's 8 rollout GPUs take all the pool's 8 GPUs up, leaving none for a trainer"]
