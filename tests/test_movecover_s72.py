"""`solve cluster --current` (session 72, coverage of the move reasons): a running job whose file now asks another
``at_least`` length says which bound it breaks (its least, its least with its most, or its most), one within them
stays, and a job with no way as it runs, where a solve behind its own ways ran out of time, says only that the
placement is not proven best."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_clusterkeep2_s71 import A100_NODES, DUO, SOLO, _fleet, _running_now

import solver.cluster.options

Cli = Callable[..., tuple[int, str, str]]


def _moves(out: str) -> list[tuple[str, str | None, str | None, str | None, int]]:
    """Each placement's job, `current`, `move_reason_code`, `move_reason` and its plan's length, from --json."""
    return [(p["job"], p.get("current"), p.get("move_reason_code"), p.get("move_reason"), p["plan"]["max_model_len"])
            for p in json.loads(out)["placements"]]


@pytest.mark.parametrize(("asked", "solo"), [
    ({"at_least": 110000}, ("moves", "length-changed", "the file asks at_least 110000 now; it runs at 102400", 131072)),
    ({"at_least": 110000, "at_most": 120000}, (
        "moves", "length-changed", "the file asks at_least 110000 (at_most 120000) now; it runs at 102400", 120000)),
    ({"at_least": "32k", "at_most": "64k"}, (
        "moves", "length-changed", "the file asks at_most 65536 now; it runs at 102400", 65536)),
    ({"at_least": "32k", "at_most": 120000}, ("stays", None, None, 102400)),
])
def test_an_at_least_job_asked_another_length_says_which_bound(cli: Cli, tmp_path: Path, asked: dict[str, Any],
                                                               solo: tuple[object, ...]):
    # s71's fleet runs solo (at_least 32k) at 102400 on node 0 and duo on node 1, 8 GPUs each.
    now = _running_now(cli, tmp_path)
    assert [(placed[0], placed[4]) for placed in _moves(now.read_text(encoding="utf-8"))] == [
        ("solo", 102400), ("duo", 65536)]
    fleet = tmp_path / "asks.yaml"
    fleet.write_text(yaml.safe_dump({"pools": [A100_NODES], "jobs": [{**SOLO, "max_model_len": asked}, DUO]}),
                     encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet), "--current", str(now), "--json")
    assert status == 0 and _moves(out) == [("solo", *solo), ("duo", "stays", None, None, 65536)]


def test_no_way_as_it_runs_where_ways_ran_out_of_time_is_unproven(cli: Cli, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch):
    # duo started by hand on 2 GPUs, where no plan trains it (its ways take 4): "no-way-at-count" where every solve
    # behind its ways was decided. Where its own on 2 GPUs ran out of time, its ways may lack the one that keeps it,
    # so its reason claims no more than that the placement is not proven (another job's, s73: its real reason).
    now = _running_now(cli, tmp_path, (1, {"trainer_gpus": 2, "gpu_indexes": [0, 1]}))
    real = solver.cluster.options.answer_for

    def out_of_time_for_duo_on_2(catalog: Any, query: Any, gpu: str, explained: bool = True, data: Any = None) -> Any:
        answer = real(catalog, query, gpu, explained, data)
        undecided = query.model == DUO["model"] and query.budget_gpus == 2
        return answer.model_copy(update={"status": "unknown", "plans": ()}) if undecided else answer

    monkeypatch.setattr(solver.cluster.options, "answer_for", out_of_time_for_duo_on_2)
    status, out, _ = cli("cluster", str(_fleet(tmp_path)), "--current", str(now), "--json")
    result = json.loads(out)
    assert status == 0 and result["status"] == "feasible" and result["undecided_ways"] > 0
    assert _moves(out)[1][:4] == ("duo", "moves", "move-unproven",
                                  "the placement is not proven best (raise --time-limit)")


def _moved_from(cli: Cli, tmp_path: Path, pools: list[dict[str, Any]], job: dict[str, Any],
                plan: dict[str, object] | None = None, **running: object) -> list[str]:
    """The `moves:` lines of `solve cluster --current` for `job` alone, where it runs as its placement does, changed
    by `running` (fields of the placement) and `plan` (fields of its plan); each unwrapped (a line past the pipe's 160
    columns wraps), up to the next line of the notes."""
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(yaml.safe_dump({"pools": pools, "jobs": [job]}), encoding="utf-8")
    placement = json.loads(cli("cluster", str(fleet), "--json")[1])
    placement["placements"][0].update(running)
    placement["placements"][0]["plan"].update(plan or {})
    now = tmp_path / "now.json"
    now.write_text(json.dumps(placement), encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet), "--current", str(now))
    assert status == 0
    return re.findall(r"moves: .*?(?= (?:moves|stays|caution|note): |$)", " ".join(out.split()))


def test_a_job_running_in_a_pool_with_no_way_there_says_so(cli: Cli, tmp_path: Path):
    # Qwen3-14B at 64k has no plan on L4s (24 GB): a placement that has it run there (written by hand) moves it to
    # the A100s, and its reason names no count of ways in the L4 pool.
    l4 = {"name": "l4", "gpu": "L4", "nodes": 1, "gpus_per_node": 8, "host_ram_gb": 64}
    pools = [{**A100_NODES, "nodes": 1}, l4]
    job = {"name": "big", "model": "Qwen3-14B", "max_model_len": "64k", "rollout_gpus": 0}
    assert _moved_from(cli, tmp_path, pools, job, pool="l4") == [
        ("moves: big: it runs on node 0 of pool l4 (all its GPUs) now, "
         "and restarts as placed: no way to run it on 8 trainer GPUs "
         "in pool l4 (no way there)")]


def test_a_job_running_across_nodes_its_ways_do_not_take_says_how_many(cli: Cli, tmp_path: Path):
    # solo's 8 trainer GPUs written as 4 GPUs of each of 2 nodes: its ways at 8 take one node whole.
    assert _moved_from(cli, tmp_path, [A100_NODES], SOLO, nodes=[0, 1], gpu_indexes=[0, 1, 2, 3]) == [(
        "moves: solo: it runs on nodes 0 and 1 of pool a100 (GPUs 0-3) now, "
        "and restarts as placed: its ways on 8 trainer GPUs in pool "
        "a100 take 8 GPUs of one node, not the 4 GPUs of each of 2 "
        "nodes it runs on")]


def test_a_job_running_past_its_stretch_ceiling_names_its_least(cli: Cli, tmp_path: Path):
    # solo (at_least 32k, no at_most) written as running at 262144, past the 131072 YaRN is validated for: the file
    # gives no most to name, so the reason names its least.
    assert _moved_from(cli, tmp_path, [A100_NODES], SOLO, plan={"max_model_len": 262144}) == [
        ("moves: solo: it runs on node 0 of pool a100 (all its GPUs) now, "
         "and restarts as placed: the file asks at_least 32768 now; "
         "it runs at 262144")]
