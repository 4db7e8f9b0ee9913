"""Which of two jobs of equal priority a full cluster leaves out (s82, clustertie). A plan's cost is relative to its
own model's vanilla step, so the costs of different models do not compare: which jobs run where priority ties is
no cost question. The tie goes to the jobs earlier in the file (a stage of its own, before length and cost), and a
job so left out says so, in words and with its own reason code (`priority-tie`); where priorities decide, nothing
changes and no tie is said."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from test_cluster import reference_checked, unplaced_rows

import solver
from solver.results import UnplacedCode

Cli = Callable[..., tuple[int, str, str]]

POOL = "pools:\n  - {name: h800, gpu: H800-80GB, nodes: 1, gpus_per_node: 8, host_ram_gb: 900}\njobs:\n"
QWEN32B = "  - {name: qwen32b, model: Qwen3-32B, max_model_len: 65536}\n"
QWEN14B = "  - {name: qwen14b, model: Qwen3-14B, max_model_len: 65536}\n"
PRIORITY_2 = "  - {name: qwen14b, model: Qwen3-14B, max_model_len: 65536, priority: 2}\n"
"""Persona64's node of 8 H800s (900 GiB of host memory), where a Qwen3-32B and a Qwen3-14B job at 65536 tokens do not
both fit: the 32B's fewest are 4 GPUs with Offload's 664.2 GiB of host memory, the 14B's 4 GPUs and 351.6 GiB or 8
GPUs and 135.6 GiB. Each is asked under Trinity 0.6 (`RELEASE`), which loads the model on rank 0 alone on H800s
(FSDP2, compute capability 9): with no release named every rank would load it, and the host figures would be others."""
RELEASE = ("--trinity-version", "0.6")


def _checked_run(cli: Cli, path: Path) -> tuple[int, str]:
    """``solve cluster PATH --json`` under `RELEASE`: its exit status and output, its placements checked by the
    reference."""
    status, out, _ = cli("cluster", str(path), "--json", *RELEASE)
    reference_checked(path, out, trinity_version=RELEASE[1])
    return status, out

NO_ROOM_POOL = [{"pool": "h800", "reason_code": "no-room", "plan_reason_code": None, "more_nodes_reach": None,
                 "more_nodes_token_budget": None, "token_budget_auto_reach": None}]


def _fleet(tmp_path: Path, *jobs: str) -> Path:
    path = tmp_path / "fleet.yaml"
    path.write_text(POOL + "".join(jobs), encoding="utf-8")
    return path


def _placed(out: str) -> list[tuple[str, int, str]]:
    """Each placement's job, trainer GPUs and plan, from --json."""
    return [(p["job"], p["trainer_gpus"], f"sp={p['plan']['sp']} offload={p['plan']['offload']}")
            for p in json.loads(out)["placements"]]


def test_of_equal_priority_the_job_earlier_in_the_file_is_placed_and_the_other_is_told_of_the_tie(
        cli: Cli, tmp_path: Path):
    # Before: the 14B was placed, its plan's cost (0.2146 of its own model's step) being lower than the 32B's (0.3282
    # of its own), and the 32B's reason read as if priority had been weighed ("priority 2 is the least that places
    # it"). Now the 32B, first in the file, is placed, and the 14B says it was left out in a tie.
    path = _fleet(tmp_path, QWEN32B, QWEN14B)
    status, out = _checked_run(cli, path)
    assert (status, _placed(out)) == (1, [("qwen32b", 8, "sp=4 offload=True")])
    reason = ("left out in a tie with qwen32b: equal priority 1, and only one of them fits in h800 (it needs at least "
              "4 GPUs and 351.6 GiB of host memory, or 8 GPUs and 135.6 GiB, on one node); a tie goes to the jobs "
              "earlier in the file: give priorities to choose, priority 2 places it")
    assert json.loads(out)["unplaced"] == [{
        "job": "qwen14b", "reason": reason, "reason_code": "priority-tie", "pools": NO_ROOM_POOL,
        "reason_for_several": (
            "left out in a tie with qwen32b: equal priority 1, and only one of them fits in h800 (each needs at least "
            "4 GPUs and 351.6 GiB of host memory, or 8 GPUs and 135.6 GiB, on one node); a tie goes to the jobs "
            "earlier in the file: give priorities to choose, priority 2 places one of them"),
        "fits_with": []}]
    status, text, err = cli("cluster", str(path), *RELEASE)
    assert (status, unplaced_rows(text)) == (1, [["qwen14b", reason]])
    assert "unplaced jobs: 1 of 2\n" in text
    assert err == (f"solve cluster: note: to place every job: solve cluster {path} --buy {' '.join(RELEASE)} names the "
                   "fewest GPUs, then nodes, to add to the pools (and the jobs no number of nodes runs)\n")
    # The API gives the same code.
    [left_out] = solver.place(solver.load_fleet(path), trinity_version="0.6").unplaced
    assert (left_out.job, left_out.reason_code, left_out.reason) == ("qwen14b", UnplacedCode.PRIORITY_TIE, reason)


def test_the_file_s_order_not_the_cost_decides_the_tie(cli: Cli, tmp_path: Path):
    # The same two jobs, the 14B first: it is placed (on its 8 GPUs, its cheapest), and the 32B is told of the tie.
    status, out = _checked_run(cli, _fleet(tmp_path, QWEN14B, QWEN32B))
    assert (status, _placed(out)) == (1, [("qwen14b", 8, "sp=8 offload=False")])
    assert [(u["job"], u["reason_code"], u["reason"]) for u in json.loads(out)["unplaced"]] == [(
        "qwen32b", "priority-tie",
        ("left out in a tie with qwen14b: equal priority 1, and only one of them fits in h800 (it needs at least 4 "
         "GPUs and 664.2 GiB of host memory on one node); a tie goes to the jobs earlier in the file: give priorities "
         "to choose, priority 2 places it"))]


def test_where_priorities_decide_no_tie_is_said(cli: Cli, tmp_path: Path):
    # The 14B of priority 2: it is placed, as before s82, and the 32B's reason names no tie of its own; at priority 2
    # the 32B would tie, and the file's order (it comes first) would place it.
    path = _fleet(tmp_path, QWEN32B, PRIORITY_2)
    status, out = _checked_run(cli, path)
    assert (status, _placed(out)) == (1, [("qwen14b", 8, "sp=8 offload=False")])
    reason = ("no room (GPUs or host memory) left in h800 (it needs at least 4 GPUs and 664.2 GiB of host memory on "
              "one node) after the jobs placed (the most priority in all, then the jobs earlier in the file where "
              "priorities tie, then length, then cost); qwen14b (priority "
              "2) holds the room it needs: priority 2 is the least that places it (with as much priority placed, a tie "
              "goes to the jobs earlier in the file)")
    assert json.loads(out)["unplaced"] == [{
        "job": "qwen32b", "reason": reason, "reason_code": "no-room", "pools": NO_ROOM_POOL,
        "reason_for_several": (
            "no room (GPUs or host memory) left in h800 (each needs at least 4 GPUs and 664.2 GiB of host memory on "
            "one node) after the jobs placed (the most priority in all, then the jobs earlier in the file where "
            "priorities tie, then length, then cost); qwen14b (priority 2) "
            "holds the room each needs: priority 2 is the least that places one of them (with as much priority "
            "placed, a tie goes to the jobs earlier in the file)"),
        "fits_with": []}]
    status, text, _ = cli("cluster", str(path), *RELEASE)
    assert (status, unplaced_rows(text)) == (1, [["qwen32b", reason]]) and "left out in a tie" not in text


def test_a_required_job_beside_them_leaves_the_tie_to_the_file_s_order(cli: Cli, tmp_path: Path):
    # A small job the file marks required shares the node: the two jobs not required still tie in priority, and the
    # 32B, first in the file, is placed, not the 14B whose cost is the lower (the stage of jobs tied in priority is
    # skipped only where every job must be placed; mutants54 skipped it wherever any job was required).
    required = "  - {name: small, model: Qwen3-0.6B, max_model_len: 4096, required: true}\n"
    status, out = _checked_run(cli, _fleet(tmp_path, QWEN32B, QWEN14B, required))
    placed = json.loads(out)
    assert (status, sorted(p["job"] for p in placed["placements"])) == (1, ["qwen32b", "small"])
    assert [(u["job"], u["reason_code"]) for u in placed["unplaced"]] == [("qwen14b", "priority-tie")]
