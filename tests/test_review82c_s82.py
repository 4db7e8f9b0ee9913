"""Review of session 82's later merges (s82, review82c). Clustertie's `jobs` stage weighed each placed job by its
place in the file alone, so a set of more jobs outweighed one job earlier in the file though priority already
counts jobs: a Qwen3-32B of priority 2, first in the file, lost its room to two Qwen3-14Bs of priority 1 after it
(places 3 + 2 against 4), and was told `a tie goes to the jobs earlier in the file`. Each job now weighs its priority
times its place, so the earlier side wins whatever the count of its jobs."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from test_cluster import reference_checked

Cli = Callable[..., tuple[int, str, str]]

POOLS = ("pools:\n  - {name: h800, gpu: H800-80GB, nodes: 1, gpus_per_node: 8, host_ram_gb: 900}\n"
         "  - {name: spare, gpu: H800-80GB, nodes: 1, gpus_per_node: 8, host_ram_gb: 900}\njobs:\n")
A32B = "  - {name: a32b, model: Qwen3-32B, max_model_len: 65536, priority: 2, pool: h800, trinity_version: '0.6'}\n"
B14B = "  - {name: b14b, model: Qwen3-14B, max_model_len: 65536, pool: h800, trinity_version: '0.6'}\n"
C14B = "  - {name: c14b, model: Qwen3-14B, max_model_len: 65536, pool: h800, trinity_version: '0.6'}\n"
D14B = "  - {name: d14b, model: Qwen3-14B, max_model_len: 65536, pool: spare, trinity_version: '0.6'}\n"
"""Persona64's node of 8 H800s (900 GiB of host memory): the 32B at 65536 needs 4 GPUs and 664.2 GiB (Offload), so
it fits with no 14B, while two 14Bs (4 GPUs and 351.6 GiB each) fit together; the fourth job, pinned to a node of
its own, makes the file four jobs long (places 4, 3, 2, 1). The jobs name Trinity 0.6, whose rank 0 alone loads the
model on H800s (s84: with no release named every rank loads it, and the host figures grow: 768.2 GiB for the 32B)."""


def _run(cli: Cli, tmp_path: Path, *jobs: str) -> tuple[int, list[str], list[tuple[str, str, str]]]:
    path = tmp_path / "fleet.yaml"
    path.write_text(POOLS + "".join(jobs), encoding="utf-8")
    status, out, _ = cli("cluster", str(path), "--json")
    result = reference_checked(path, out)  # each job's host memory counted for its own 0.6
    return (status, sorted(p["job"] for p in result["placements"]),
            [(u["job"], u["reason_code"], u["reason"]) for u in result["unplaced"]])


def test_a_job_of_priority_2_first_in_the_file_wins_the_tie_against_two_of_priority_1_after_it(
        cli: Cli, tmp_path: Path):
    # Before: b14b and c14b placed (places 3 + 2 = 5 against a32b's 4), a32b "left out in a tie with b14b, c14b
    # ...; a tie goes to the jobs earlier in the file", though it is the first in the file. Now 2 x 4 = 8 > 3 + 2.
    status, placed, unplaced = _run(cli, tmp_path, A32B, B14B, C14B, D14B)
    assert (status, placed) == (1, ["a32b", "d14b"])
    words = ("left out in a tie: a placement with it, moving other jobs, places as much priority as this one (3), and "
             "needs room in h800 (it needs at least 4 GPUs and 351.6 GiB of host memory, or 8 GPUs and 135.6 GiB, on "
             "one node); a tie goes to the jobs earlier in the file: give priorities to choose, priority 2 places it")
    assert unplaced == [("b14b", "priority-tie", words), ("c14b", "priority-tie", words)]


def test_two_jobs_of_priority_1_first_in_the_file_win_the_tie_against_one_of_priority_2_after_them(
        cli: Cli, tmp_path: Path):
    # The file's order reversed for the h800 jobs: b14b and c14b (places 4 + 3 = 7) against a32b (2 x 2 = 4).
    status, placed, unplaced = _run(cli, tmp_path, B14B, C14B, A32B, D14B)
    assert (status, placed) == (1, ["b14b", "c14b", "d14b"])
    assert unplaced == [("a32b", "priority-tie", (
        "left out in a tie with b14b, c14b (priority 2 together, as much as its own): not all of them fit in h800 (it "
        "needs at least 4 GPUs and 664.2 GiB of host memory on one node); a tie goes to the jobs earlier in the file: "
        "give priorities to choose, priority 3 places it"))]


def test_the_least_priority_that_places_a_job_weighs_its_place_at_that_priority(cli: Cli, tmp_path: Path):
    # a32b at priority 1: b14b and c14b (2 together) placed. At priority 2, a32b ties them (2 + d14b's 1 = 3) and
    # weighs 2 x 4 + 1 = 9 against 3 + 2 + 1 = 6: 2 places it. Weighed at its own priority (4 + 1 = 5 < 6), the
    # reason would have said 3.
    status, placed, unplaced = _run(cli, tmp_path, A32B.replace(", priority: 2", ""), B14B, C14B, D14B)
    assert (status, placed) == (1, ["b14b", "c14b", "d14b"])
    assert unplaced == [("a32b", "no-room", (
        "no room (GPUs or host memory) left in h800 (it needs at least 4 GPUs and 664.2 GiB of host memory on one "
        "node) after the jobs placed (the most priority in all, then the jobs earlier in the file where priorities "
        "tie, then length, then cost); b14b, c14b (priority 2 "
        "together) hold the room it needs: priority 2 is the least that places it (with as much priority placed, a "
        "tie goes to the jobs earlier in the file)"))]


ONE_A100 = "pools:\n  - {name: a100, gpu: A100-80GB, nodes: 1, gpus_per_node: 8}\njobs:\n"
SMALL = "  - {{name: {name}, model: Qwen3-0.6B, max_model_len: {length}, rollout_gpus: {rollout}}}\n"


def test_where_the_jobs_places_weighed_by_priority_sum_alike_length_decides_and_no_tie_is_said(
        cli: Cli, tmp_path: Path):
    # One node of 8 A100s, four Qwen3-0.6B jobs of priority 1 on 1 trainer GPU and 4, 3, 3 and 2 rollout GPUs: j1
    # and j4 fit together (5 + 3), as do j2 and j3 (4 + 4), and no three. Their places sum alike, 4 + 1 = 3 + 2, with
    # no names' weights since review82c: the length stage places j2 and j3, which ask at_least 8192 and gain. j1,
    # first in the file, is not said to be left out in a tie that goes to the jobs earlier in the file; at priority
    # 2 it outweighs them (2 + 1 against 2).
    path = tmp_path / "fleet.yaml"
    path.write_text(ONE_A100 + SMALL.format(name="j1", length=8192, rollout=4)
                    + SMALL.format(name="j2", length="{at_least: 8192}", rollout=3)
                    + SMALL.format(name="j3", length="{at_least: 8192}", rollout=3)
                    + SMALL.format(name="j4", length=8192, rollout=2), encoding="utf-8")
    status, out, _ = cli("cluster", str(path), "--json")
    result = json.loads(out)
    assert (status, [(p["job"], p["plan"]["max_model_len"]) for p in result["placements"]]) == (
        1, [("j2", 28672), ("j3", 28672)])
    after = ("after the jobs placed (the most priority in all, then the jobs earlier in the file where priorities "
             "tie, then length, then cost)")
    j1 = (f"no room left in a100 (it needs at least 5 GPUs (1 trainer + 4 rollout) of one node) {after}; j2, j3 "
          f"(priority 2 together) hold "
          "the room it needs: priority 2 is the least that places it (moving other jobs)")
    j4 = (f"no room left in a100 (it needs at least 3 GPUs (1 trainer + 2 rollout) of one node) {after}; j2 (priority "
          f"1, as much as its own) "
          "holds the room it needs: priority 2 is the least that places it")
    assert [(u["job"], u["reason_code"], u["reason"]) for u in result["unplaced"]] == [
        ("j1", "no-room", j1), ("j4", "no-room", j4)]
