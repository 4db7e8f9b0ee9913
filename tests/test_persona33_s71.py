"""A cluster operator's week with `--current` (persona33, session 71): the least priority that places a running job
left out (it `stops`) counts the running jobs a tie keeps, as the placement's stage after priority does."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import yaml

Cli = Callable[..., tuple[int, str, str]]

POOLS = [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}]
OLD = {"name": "old", "model": "Qwen3-14B", "max_model_len": 65536, "rollout_gpus": 4}
"""A job that runs now on the pool's one node, whole (4 trainer GPUs beside 4 rollout GPUs)."""
NEW = {**OLD, "name": "new", "priority": 2}
"""A job that arrives, of more priority, and needs that node whole too."""


def _write(path: Path, jobs: list[dict[str, object]]) -> str:
    path.write_text(yaml.safe_dump({"pools": POOLS, "jobs": jobs}), encoding="utf-8")
    return str(path)


def _running_now(cli: Cli, tmp_path: Path) -> Path:
    """The placement the fleet runs now: `OLD` alone, on the node."""
    status, now, _ = cli("cluster", _write(tmp_path / "now.yaml", [OLD]), "--json")
    assert status == 0
    current = tmp_path / "now.json"
    current.write_text(now, encoding="utf-8")
    return current


def _reason(out: str) -> tuple[str, str | None, str]:
    (unplaced,) = json.loads(out)["unplaced"]
    return unplaced["job"], unplaced.get("current"), unplaced["reason"].split("; ", 1)[1]


def test_a_running_job_that_stops_is_told_the_tie_that_keeps_it(cli: Cli, tmp_path: Path):
    current = _running_now(cli, tmp_path)
    today = _write(tmp_path / "today.yaml", [OLD, NEW])
    # Without --current a tie at priority 2 is length's and cost's to break: 3 is the least that surely places it.
    status, out, _ = cli("cluster", today, "--json")
    # Since s82, at priority 2 the tie of which jobs run goes to old, earlier in the file.
    surely = ("new (priority 2) holds the room it needs: priority 2 is the least that places it (with as much priority "
              "placed, a tie goes to the jobs earlier in the file)")
    assert (status, _reason(out)) == (1, ("old", None, surely))
    # With it, at priority 2 the placement with old keeps one running job, the one with new none: 2 places it
    # (was: priority 3 is the least, one more than the least).
    status, out, _ = cli("cluster", today, "--current", str(current), "--json")
    tied = ("new (priority 2) holds the room it needs: priority 2 is the least that places it (with as much priority "
            "placed, more running jobs stay with it)")
    assert (status, _reason(out)) == (1, ("old", "stops", tied))
    # True: at priority 2 old stays, new is left out; at 1 (its own) it stops.
    raised = _write(tmp_path / "raised.yaml", [{**OLD, "priority": 2}, NEW])
    status, out, _ = cli("cluster", raised, "--current", str(current), "--json")
    placed = json.loads(out)
    assert (status, [(p["job"], p["current"]) for p in placed["placements"]], _reason(out)[:2]) == (
        1, [("old", "stays")], ("new", None))


def test_no_placement_tells_no_running_job_to_stop(cli: Cli, tmp_path: Path):
    # Both jobs must be placed (--minimize nodes) and need the one node whole: there is no placement, so the answer
    # has nothing to say of the job that runs now (it said `stops`, and `running now: 0 stay, 0 move, 1 stops`).
    current = _running_now(cli, tmp_path)
    today = _write(tmp_path / "today.yaml", [OLD, NEW])
    status, out, _ = cli("cluster", today, "--current", str(current), "--minimize", "nodes", "--json")
    answer = json.loads(out)
    assert (status, answer["status"], [(u["job"], u.get("current")) for u in answer["unplaced"]]) == (
        1, "infeasible", [("old", None), ("new", None)])
    status, out, _ = cli("cluster", today, "--current", str(current), "--minimize", "nodes")
    title = "pool a100: 1 x 8 A100-80GB; 0 nodes and 0 of 8 GPUs used"
    assert (status, out.splitlines()[:2]) == (1, ["status: infeasible", title])
