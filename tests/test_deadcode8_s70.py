"""Lines of `solve cluster --current` (session 70) that no other test ran: a running job that none of its ways keeps
as it runs (its ask changed), a running job on whole nodes that stays on them, one whose neighbour left the fleet that
stays with the room beside it empty, and a placement file that places a job twice."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from test_keepplaced_s70 import JOBS, POOLS

Cli = Callable[..., tuple[int, str, str]]


def _placed(cli: Cli, tmp_path: Path, jobs: list[dict[str, object]], pools: list[dict[str, object]],
            current: Path | None = None, note: str = "") -> tuple[int, dict[str, Any]]:
    """`solve cluster --json` of a fleet of `pools` and `jobs` (with `current` given as --current): its exit status
    and its JSON; stderr is `note` (empty by default)."""
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(yaml.safe_dump({"pools": pools, "jobs": jobs}), encoding="utf-8")
    status, out, err = cli("cluster", str(fleet), "--json", *(("--current", str(current)) if current else ()))
    assert err == note.format(current=current, fleet=fleet)
    return status, json.loads(out)


def _where(placed: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(p["job"], p["pool"], p["nodes"], p["gpu_indexes"], p.get("current")) for p in placed["placements"]]


def test_a_job_whose_length_changed_is_kept_by_none_of_its_ways(cli: Cli, tmp_path: Path):
    # c8-a runs at 32768 tokens now; asked for 16384, none of its ways runs it as it runs, so it cannot stay: it
    # moves, and the placement is free to place more priority (c8-b starts on a whole a100 node).
    now = tmp_path / "now.json"
    now.write_text(json.dumps(_placed(cli, tmp_path, JOBS, POOLS)[1]), encoding="utf-8")
    shorter = [{**job, "max_model_len": 16384} if job["name"] == "c8-a" else job for job in JOBS]
    status, placed = _placed(cli, tmp_path, shorter, POOLS, now)
    assert status == 1
    assert _where(placed) == [
        ("p06-a", "a100", [1], [0, 1], "stays"), ("m4-a", "h20", [0], [0, 1, 2], "moves"),
        ("m4-b", "h20", [0], [3, 4], "moves"), ("c8-a", "h20", [0], [5, 6, 7], "moves"),
        ("c8-b", "a100", [0], [0, 1, 2, 3, 4, 5, 6, 7], "starts"), ("q14-a", "a100", [1], [2, 3, 4, 5, 6, 7], "moves")]
    assert [(u["job"], u.get("current")) for u in placed["unplaced"]] == [("q14-b", None)]


def test_a_job_on_whole_nodes_stays_on_them(cli: Cli, tmp_path: Path):
    pools = [{"name": "a100", "gpu": "A100-80GB", "nodes": 3, "gpus_per_node": 8}]
    jobs = [{"name": "big", "model": "Qwen3-14B", "max_model_len": 65536, "rollout_gpus": 8},
            {"name": "small", "model": "Qwen3-0.6B", "max_model_len": 8192, "rollout_gpus": 1}]
    now = tmp_path / "now.json"
    status, first = _placed(cli, tmp_path, jobs, pools)
    now.write_text(json.dumps(first), encoding="utf-8")
    assert (status, _where(first)) == (0, [("big", "a100", [0, 1], list(range(8)), None),
                                           ("small", "a100", [2], list(range(7)), None)])
    status, again = _placed(cli, tmp_path, jobs, pools, now)
    assert (status, _where(again)) == (0, [("big", "a100", [0, 1], list(range(8)), "stays"),
                                           ("small", "a100", [2], list(range(7)), "stays")])


def test_a_job_placed_twice_is_refused_in_one_line(cli: Cli, tmp_path: Path):
    entry = {"job": "a", "pool": "p", "nodes": [0], "gpu_indexes": [0], "trainer_gpus": 1, "rollout_gpus": 0,
             "plan": {"max_model_len": 8192, "sp": 1, "offload": False}}
    path = tmp_path / "twice.json"
    path.write_text(json.dumps({"schema_version": 1, "placements": [entry, {**entry, "gpu_indexes": [1]}]}),
                    encoding="utf-8")
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(yaml.safe_dump({"pools": POOLS, "jobs": JOBS}), encoding="utf-8")
    status, out, err = cli("cluster", str(fleet), "--current", str(path))
    assert (status, out, err) == (2, "", f"solve cluster: error: --current {path}: job a is placed twice\n")


def test_a_job_whose_neighbour_left_the_fleet_stays_on_its_gpus(cli: Cli, tmp_path: Path):
    # p06-a and m4-b share the one node; m4-b leaves the fleet. p06-a keeps the node with the room m4-b took left
    # empty (its pattern's other places wait for no job), on its 3 GPUs.
    pools = [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}]
    jobs = [JOBS[0], JOBS[2]]
    status, first = _placed(cli, tmp_path, jobs, pools)
    assert (status, _where(first)) == (0, [("p06-a", "a100", [0], [0, 1, 2], None),
                                           ("m4-b", "a100", [0], [3, 4, 5, 6, 7], None)])
    now = tmp_path / "now.json"
    now.write_text(json.dumps(first), encoding="utf-8")
    # m4-b runs on GPUs the fleet has, though the file lacks it: a note says the placement takes them as free (s79)
    status, alone = _placed(cli, tmp_path, jobs[:1], pools, now, note=(
        "solve cluster: note: --current {current} runs m4-b in pool a100, a job {fleet} lacks: the placement takes "
        "its GPUs as free, though it runs on them until stopped; stop it before a job starts there, or, if the job "
        "was renamed, name it m4-b again to keep it where it runs\n"))
    assert (status, _where(alone), alone["unplaced"]) == (0, [("p06-a", "a100", [0], [0, 1, 2], "stays")], [])
