"""An idle node does not stay idle while jobs share another (session 70, persona26's item 1 of s69): widening may
move a job sharing a node to a node of its pool that no job uses, alone, with its own way or a wider one, where that
runs the jobs faster or longer (a CP-SAT choice: gain, cost, GPUs, then the fewest jobs moved, the last in file order
first); never with ``--minimize nodes``, never a running job that stays (``--current``)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from test_cluster import CATALOG, fleet_of

from solver.cluster.options import Planner, job_options
from solver.cluster.widen import widen_jobs
from solver.tables import load_weights

Cli = Callable[..., tuple[int, str, str]]

A100_NODES = {"name": "a100", "gpu": "A100-80GB", "nodes": 2, "gpus_per_node": 8, "host_ram_gb": 1024}
SOLO = {"name": "solo", "model": "Qwen3-8B", "max_model_len": {"at_least": "32k"}, "rollout_gpus": 0}
DUO = {"name": "duo", "model": "Qwen3-4B", "max_model_len": "64k", "rollout_gpus": 0, "train_batch_size": 64}
"""persona26's fleet (s69): the placement puts both jobs on node 0 with 4 GPUs each (the tables' counts); on 8,
Qwen3-8B runs at cost 0.32825 (inferred) and Qwen3-4B at 0.1625 (inferred), half their cost on 4."""


def _write(path: Path, *jobs: dict[str, object]) -> Path:
    path.write_text(yaml.safe_dump({"pools": [A100_NODES], "jobs": list(jobs)}), encoding="utf-8")
    return path


def _placed(out: str) -> list[tuple[object, ...]]:
    """Each placement's job, nodes, GPUs, trainer GPUs, the count it grew from, cost and `current`."""
    return [(p["job"], p["nodes"], p["gpu_indexes"], p["trainer_gpus"], p["widened_from"], p["plan"]["cost"],
             p.get("current")) for p in json.loads(out)["placements"]]


@pytest.mark.parametrize("workers", ["1", "4"])
def test_two_jobs_sharing_a_node_beside_an_idle_one_take_a_node_each(cli: Cli, tmp_path: Path, workers: str):
    # duo moves to the idle node 1 and grows to 8 GPUs; solo grows onto the 4 GPUs duo left: each at half its cost.
    # Before, both stayed on node 0 with 4 GPUs each (0.6565 and 0.325), node 1 idle.
    path = _write(tmp_path / "fleet.yaml", SOLO, DUO)
    status, out, err = cli("cluster", str(path), "--json", "--workers", workers)
    assert (status, err) == (0, "")
    assert _placed(out) == [("solo", [0], list(range(8)), 8, 4, 0.32825, None),
                            ("duo", [1], list(range(8)), 8, 4, 0.1625, None)]
    status, out, _ = cli("cluster", str(path))
    assert status == 0 and out.splitlines()[1] == (
        "pool a100: 2 x 8 A100-80GB (1024 GiB host memory each, 325.4 needed on the fullest node); 2 nodes and 16 of "
        "16 GPUs used")


def test_the_fewest_nodes_keep_their_jobs_together(cli: Cli, tmp_path: Path):
    # --minimize nodes: a move to an idle node would use one more than the proven fewest.
    status, out, _ = cli("cluster", str(_write(tmp_path / "fleet.yaml", SOLO, DUO)), "--json", "--minimize", "nodes")
    assert status == 0 and _placed(out) == [("solo", [0], [0, 1, 2, 3], 4, None, 0.6565, None),
                                            ("duo", [0], [4, 5, 6, 7], 4, None, 0.325, None)]


def test_a_running_job_that_stays_neither_grows_nor_moves(cli: Cli, tmp_path: Path):
    # solo runs on node 0's GPUs 0-3: it stays there with 4 GPUs, and duo, which starts, takes the idle node whole.
    # Where both run on node 0, both stay: a move for a lower cost would restart them.
    now = tmp_path / "now.json"
    _, out, _ = cli("cluster", str(_write(tmp_path / "solo.yaml", SOLO)), "--json", "--no-widen")
    now.write_text(out, encoding="utf-8")
    path = _write(tmp_path / "fleet.yaml", SOLO, DUO)
    status, out, _ = cli("cluster", str(path), "--json", "--current", str(now))
    assert status == 0 and _placed(out) == [("solo", [0], [0, 1, 2, 3], 4, None, 0.6565, "stays"),
                                            ("duo", [1], list(range(8)), 8, 4, 0.1625, "starts")]
    _, out, _ = cli("cluster", str(path), "--json", "--no-widen")
    now.write_text(out, encoding="utf-8")
    status, out, _ = cli("cluster", str(path), "--json", "--current", str(now))
    assert status == 0 and _placed(out) == [("solo", [0], [0, 1, 2, 3], 4, None, 0.6565, "stays"),
                                            ("duo", [0], [4, 5, 6, 7], 4, None, 0.325, "stays")]


def _four_on_two_nodes(tmp_path: Path, kept: frozenset[int], onto_idle_nodes: bool = True) -> tuple[
        dict[int, int], dict[int, int]]:
    """Four Qwen3-4B jobs of 4 GPUs on nodes 0, 0, 1, 1 of three: the GPUs each job grows to (job -> count) and the
    node each moves to (job -> node)."""
    pool = {**A100_NODES, "nodes": 3}
    fleet = fleet_of({"pools": [pool], "jobs": [{**DUO, "name": name} for name in "abcd"]}, tmp_path)
    planner = Planner(CATALOG.for_fleet(fleet), load_weights(), "auto")
    chosen = {job: next(o for o in job_options(planner, fleet, job) if o.plan.gpus == 4) for job in range(4)}
    nodes = {0: [0], 1: [0], 2: [1], 3: [1]}
    widened = widen_jobs(planner, fleet, chosen, nodes, 0, kept, onto_idle_nodes, time.monotonic() + 60)
    return {job: option.plan.gpus for job, option in widened.grown.items()}, widened.moved


def test_one_idle_node_takes_one_job_the_last_in_file_order(tmp_path: Path):
    # One idle node: one job moves there (two gain as much either way: it, and the neighbour it leaves room to);
    # the fewest moves, the last job first: d moves, c grows on node 1.
    assert _four_on_two_nodes(tmp_path, frozenset()) == ({2: 8, 3: 8}, {3: 2})
    # d running where it stays: neither grows nor moves; b moves and a grows (c moving would leave d's room idle).
    assert _four_on_two_nodes(tmp_path, frozenset({3})) == ({0: 8, 1: 8}, {1: 2})
    # No moves allowed (--minimize nodes): the nodes are full, nothing grows.
    assert _four_on_two_nodes(tmp_path, frozenset(), onto_idle_nodes=False) == ({}, {})


def test_a_pinned_job_left_out_is_not_told_of_a_node_a_job_moved_to(cli: Cli, tmp_path: Path):
    # h2, pinned to h20, is left out. With widening, duo moves to a100's idle node: the pin's words no longer count
    # it idle (they said "(1 idle node)" beside a table with both a100 nodes used); with --no-widen the node is idle.
    path = tmp_path / "fleet.yaml"
    big = {"model": "Qwen3-14B", "max_model_len": 32768, "rollout_gpus": 4, "pool": "h20"}
    path.write_text(yaml.safe_dump({"pools": [A100_NODES, {"name": "h20", "gpu": "H20-96GB", "nodes": 1,
                                                           "gpus_per_node": 8}],
                                    "jobs": [{**SOLO, "pool": "a100"}, {**DUO, "pool": "a100"}, {**big, "name": "h1"},
                                             {**big, "name": "h2"}]}), encoding="utf-8")
    pin = "; its pool: h20 keeps it out of a100 (1 idle node)"
    for flags, nodes_used, told in (((), 2, ""), (("--no-widen",), 1, pin)):
        status, out, _ = cli("cluster", str(path), "--json", *flags)
        result = json.loads(out)
        [left_out] = result["unplaced"]
        assert status == 1 and result["pools"][0]["nodes_used"] == nodes_used
        assert left_out["reason"].startswith("left out in a tie with h1: ") and left_out["reason"].endswith(
            f"give priorities to choose, priority 2 places it{told}")
