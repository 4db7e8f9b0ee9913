"""The cluster's `jobs` stage runs only where it can change the answer (s83, clusterjobs). Where the priority stage
places every job with a way (`most_priority`), no set of jobs can differ: the stage is skipped, and its share of the
deterministic time is left to length and cost, the placement as it was. A job left out for want of room names the
placement's goals as the search solved them, in order: the jobs earlier in the file where priorities tie where that
stage ran, and no stage that did not run."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from test_cluster import reference_checked, unplaced_rows

import solver
import solver.cluster.search

Cli = Callable[..., tuple[int, str, str]]

A100 = "pools:\n  - {name: a100, gpu: A100-80GB, nodes: 1, gpus_per_node: 8}\njobs:\n"
FITS = ("  - {name: small, model: Qwen3-0.6B, max_model_len: 8192, rollout_gpus: 2}\n"
        "  - {name: also, model: Qwen3-1.7B, max_model_len: 8192, rollout_gpus: 2}\n")
NEVER = "  - {name: never, model: Qwen3-32B, max_model_len: 262144, rollout_gpus: 2}\n"
"""Past what one A100 node trains: no way to run in any pool (`test_cluster`'s `never`)."""
H800 = "pools:\n  - {name: h800, gpu: H800-80GB, nodes: 1, gpus_per_node: 8, host_ram_gb: 900}\njobs:\n"
QWEN32B = "  - {name: qwen32b, model: Qwen3-32B, max_model_len: 65536}\n"
QWEN14B = "  - {name: qwen14b, model: Qwen3-14B, max_model_len: 65536, priority: 2}\n"
"""`test_clustertie_s82`'s node of 8 H800s, where the two jobs do not both fit: the 14B (priority 2) is placed. Asked
under Trinity 0.6 (as there), which loads the model on rank 0 alone on H800s: with no release named every rank would
load it, and the host figures would be others."""

SKIPPED = ["placed priority", "longer contexts", "step-time cost", "tie-break"]
RUN = ["placed priority", "jobs tied in priority", "longer contexts", "step-time cost", "tie-break"]


def _fleet(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "fleet.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _staged(path: Path, trinity_version: str | None = None) -> tuple[solver.ClusterResult, list[str]]:
    """`place`'s answer under `trinity_version` (checked by the reference) and the stages it reported progress of, in
    order (each once)."""
    reports: list[str] = []
    result = solver.place(path, progress=lambda stage, *_: reports.append(stage), trinity_version=trinity_version)
    reference_checked(path, result.model_dump_json(), trinity_version=trinity_version)
    return result, list(dict.fromkeys(reports))


@pytest.mark.parametrize("jobs", [FITS, FITS + NEVER])
def test_where_every_job_with_a_way_is_placed_the_jobs_stage_is_skipped_and_the_placement_is_as_it_was(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: str):
    path = _fleet(tmp_path, A100 + jobs)
    skipped, stages = _staged(path)
    assert stages == SKIPPED
    assert ([p.job for p in skipped.placements], [u.job for u in skipped.unplaced]) == (
        ["small", "also"], ["never"] if NEVER in jobs else [])
    # The stage forced to run (no most priority given, as before s83) changes nothing.
    solve_stages = solver.cluster.search.solve_stages
    monkeypatch.setattr(solver.cluster.search, "solve_stages", lambda *args: solve_stages(*args[:-1]))
    run, stages = _staged(path)
    assert stages == RUN
    assert run.model_dump(exclude={"wall_time_s", "planning_s", "building_s", "least_time_limit_s"}) == (
        skipped.model_dump(exclude={"wall_time_s", "planning_s", "building_s", "least_time_limit_s"}))


def _unplaced(cli: Cli, path: Path) -> tuple[int, list[tuple[str, str, str]], list[list[str]]]:
    """`solve cluster`'s exit status, its --json unplaced jobs (job, code, reason), and its text's unplaced rows, under
    Trinity 0.6 (`H800`); its placements checked by the reference."""
    status, out, _ = cli("cluster", str(path), "--json", "--trinity-version", "0.6")
    reference_checked(path, out, trinity_version="0.6")
    text_status, text, _ = cli("cluster", str(path), "--trinity-version", "0.6")
    assert text_status == status
    return status, [(u["job"], u["reason_code"], u["reason"]) for u in json.loads(out)["unplaced"]], unplaced_rows(text)


def test_where_the_jobs_placed_may_differ_the_jobs_stage_runs_and_the_reasons_name_it(cli: Cli, tmp_path: Path):
    # Of equal priority, the 14B is left out in a tie (its words name no goals); of priority 2, the 14B is placed and
    # the 32B's goals name the stage of jobs tied in priority, which ran, between priority and length.
    tie = _fleet(tmp_path, H800 + QWEN32B + QWEN14B.replace(", priority: 2", ""))
    assert _staged(tie, "0.6")[1] == RUN
    tied = ("left out in a tie with qwen32b: equal priority 1, and only one of them fits in h800 (it needs at least 4 "
            "GPUs and 351.6 GiB of host memory, or 8 GPUs and 135.6 GiB, on one node); a tie goes to the jobs earlier "
            "in the file: give priorities to choose, priority 2 places it")
    assert _unplaced(cli, tie) == (1, [("qwen14b", "priority-tie", tied)], [["qwen14b", tied]])
    path = _fleet(tmp_path, H800 + QWEN32B + QWEN14B)
    result, stages = _staged(path, "0.6")
    assert (stages, [p.job for p in result.placements]) == (RUN, ["qwen14b"])
    reason = ("no room (GPUs or host memory) left in h800 (it needs at least 4 GPUs and 664.2 GiB of host memory on "
              "one node) after the jobs placed (the most priority in all, then the jobs earlier in the file where "
              "priorities tie, then length, then cost); qwen14b (priority 2) holds the room it needs: priority 2 is "
              "the least that places it (with as much priority placed, a tie goes to the jobs earlier in the file)")
    assert _unplaced(cli, path) == (1, [("qwen32b", "no-room", reason)], [["qwen32b", reason]])


def test_the_reasons_name_no_stage_that_did_not_run(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # Ctrl-C as the jobs stage ends (its solve, the search's second, done): length and cost do not run, and the 32B's
    # goals end with the jobs stage; the placement is not proven (so 3 is the priority that surely places it).
    solve = solver.cluster.search.StopOnInterrupt.solve
    solves: list[solver.cluster.search.StopOnInterrupt] = []  # each solve's search (kept: none shares another's id)

    def ctrl_c_as_the_jobs_stage_ends(self, model, callback):
        status = solve(self, model, callback)
        solves.append(self)
        self.caught |= sum(search is self for search in solves) == 2
        return status

    monkeypatch.setattr(solver.cluster.search.StopOnInterrupt, "solve", ctrl_c_as_the_jobs_stage_ends)
    reason = ("no room (GPUs or host memory) left in h800 (it needs at least 4 GPUs and 664.2 GiB of host memory on "
              "one node) after the jobs placed (the most priority in all, then the jobs earlier in the file where "
              "priorities tie); qwen14b (priority 2) holds the room it needs: priority 3 is the least that places it")
    path = _fleet(tmp_path, H800 + QWEN32B + QWEN14B)
    assert _unplaced(cli, path) == (130, [("qwen32b", "no-room", reason)], [["qwen32b", reason]])
    assert len(solves) == len(set(map(id, solves))) * 2 == 4  # two solves in each of the two runs: priority, jobs


def test_a_jobs_stage_the_wall_clock_stopped_is_named_where_it_runs(cli: Cli, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch):
    # Every stage stopped by the wall clock, as on a machine too busy for any of them: where a job is left out, the
    # jobs stage runs and is named (in JSON and in words); where every job is placed, it is not (`test_docstruth5_s71`).
    monkeypatch.setattr(solver.cluster.search, "stopped_by_wall_clock", lambda cp_solver, status: True)
    path = _fleet(tmp_path, H800 + QWEN32B + QWEN14B)
    status, out, _ = cli("cluster", str(path), "--json")
    assert (status, json.loads(out)["wall_clock_stopped"]) == (1, ["priority", "jobs", "length", "cost", "tie-break"])
    assert ("the wall clock stopped the placed-priority stage, the stage choosing among jobs tied in priority, the "
            "longer-contexts stage, the step-time-cost stage and the tie-break before the work they are given") in (
        " ".join(cli("cluster", str(path))[1].split()))
    status, out, _ = cli("cluster", str(_fleet(tmp_path, A100 + FITS)), "--json")
    assert (status, json.loads(out)["wall_clock_stopped"]) == (0, ["priority", "length", "cost", "tie-break"])
