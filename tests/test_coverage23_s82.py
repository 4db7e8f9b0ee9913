"""Coverage of session 82's later changed lines (s82, coverage23): every changed line and branch in solver/ since
a393152a ran under the session's own tests already; this file asserts what they left unasserted: review82c's
`_TIE_BROKEN` words for the length and cost stages, where a job left out, weighed at the least priority that places
it, ties the placed jobs in priority and in the order of jobs too (`tied_job_weight`), and gains length or costs
less."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

Cli = Callable[..., tuple[int, str, str]]

ONE_A100 = "pools:\n  - {name: a100, gpu: A100-80GB, nodes: 1, gpus_per_node: 8}\njobs:\n"
SMALL = "  - {{name: {name}, model: Qwen3-0.6B, max_model_len: {length}, rollout_gpus: {rollout}, priority: {p}}}\n"
AFTER = ("after the jobs placed (the most priority in all, then the jobs earlier in the file where priorities tie, "
         "then length, then cost)")


def _fleet(cli: Cli, tmp_path: Path, j_priority: int) -> tuple[int, list[tuple[str, int]], list[tuple[str, str]]]:
    """One node of 8 A100s; j (at_least 8192, 4 GPUs), y (priority 4, the whole node) and x (priority 2, 4 GPUs), in
    that order: j and x fit together, neither beside y."""
    path = tmp_path / "fleet.yaml"
    path.write_text(ONE_A100 + SMALL.format(name="j", length="{at_least: 8192}", rollout=3, p=j_priority)
                    + SMALL.format(name="y", length=8192, rollout=7, p=4)
                    + SMALL.format(name="x", length=8192, rollout=3, p=2), encoding="utf-8")
    status, out, _ = cli("cluster", str(path), "--json")
    result = json.loads(out)
    return (status, [(p["job"], p["plan"]["max_model_len"]) for p in result["placements"]],
            [(u["job"], u["reason"]) for u in result["unplaced"]])


def test_a_job_left_out_that_length_would_place_at_the_least_priority_is_told_so(cli: Cli, tmp_path: Path):
    # At its own priority 1, j and x (1 + 2) lose to y (4). At 2, they tie it (2 + 2), and the order of jobs too:
    # j 2 x 3 (first of three) + x 2 x 1 = y 4 x 2; j gains past its at_least, so the length stage places it.
    status, placed, unplaced = _fleet(cli, tmp_path, 1)
    assert (status, placed) == (1, [("y", 8192)])
    assert unplaced == [
        ("j", (f"no room left in a100 (it needs at least 4 GPUs (1 trainer + 3 rollout) of one node) {AFTER}; y "
               f"(priority 4) holds the room "
               "it needs: priority 2 is the least that places it (moving other jobs; with as much priority placed, "
               "the at_least jobs run longer with it)")),
        ("x", (f"no room left in a100 (it needs at least 4 GPUs (1 trainer + 3 rollout) of one node) {AFTER}; y "
               f"(priority 4) holds the room "
               "it needs: priority 4 is the least that places it (moving other jobs)"))]


def test_at_that_priority_the_job_is_placed_and_the_one_it_displaces_is_told_the_length_stage_went_against_it(
        cli: Cli, tmp_path: Path):
    status, placed, unplaced = _fleet(cli, tmp_path, 2)
    assert (status, placed) == (1, [("j", 28672), ("x", 8192)])
    assert unplaced == [("y", (
        f"no room left in a100 (it needs at least 8 GPUs (1 trainer + 7 rollout) of one node) {AFTER}; j, x (priority "
        f"4 together, as much as "
        "its own) hold the room it needs: priority 5 is the least that places it"))]


def _costlier(cli: Cli, tmp_path: Path, y2_priority: int) -> tuple[list[tuple[str, int]], list[tuple[str, str]]]:
    """One node of 8 A100s; j (priority 1, 5 GPUs at 8192), y1 and y2 (priority 2 and `y2_priority`, 7 GPUs each at
    65536) and x (priority 2, 3 GPUs at 8192), in that order: j and x fit together, no other two jobs."""
    path = tmp_path / "fleet.yaml"
    path.write_text(ONE_A100 + SMALL.format(name="j", length=8192, rollout=4, p=1)
                    + SMALL.format(name="y1", length=65536, rollout=3, p=2)
                    + SMALL.format(name="y2", length=65536, rollout=3, p=y2_priority)
                    + SMALL.format(name="x", length=8192, rollout=2, p=2), encoding="utf-8")
    status, out, _ = cli("cluster", str(path), "--json")
    result = json.loads(out)
    assert status == 1
    return ([(p["job"], p["plan"]["max_model_len"]) for p in result["placements"]],
            [(u["job"], u["reason"]) for u in result["unplaced"]])


def test_a_job_left_out_that_cost_would_place_at_the_least_priority_is_told_so(cli: Cli, tmp_path: Path):
    # j and x hold priority 3. At 3, y1 outweighs them in the order of jobs (3 x 3 against 1 x 4 + 2 x 1), so a tie
    # goes to the jobs earlier in the file; y2 ties them there too (3 x 2 = 6), and costs less alone (0.325 of its
    # vanilla step against 1 + 1), so the cost stage places it.
    placed, unplaced = _costlier(cli, tmp_path, 2)
    assert placed == [("j", 8192), ("x", 8192)]
    held = (f"no room left in a100 (it needs at least 7 GPUs (4 trainer + 3 rollout) of one node) {AFTER}; j, x "
            f"(priority 3 together) hold "
            "the room it needs: priority 3 is the least that places it (with as much priority placed, ")
    assert unplaced == [("y1", f"{held}a tie goes to the jobs earlier in the file)"),
                        ("y2", f"{held}the placed jobs cost less with it)")]
    placed, _ = _costlier(cli, tmp_path, 3)
    assert placed == [("y2", 65536)]
