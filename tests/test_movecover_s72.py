"""`solve cluster --current` (session 72, coverage of the move reasons): a running job whose file now asks another
``at_least`` length says which bound it breaks (its least, its least with its most, or its most), one within them
stays, and a job with no way as it runs, where a solve behind the ways ran out of time, says only that the placement
is not proven best."""

from __future__ import annotations

import json
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
    # behind the ways was decided. Where one ran out of time (solo's on 2 GPUs here), the ways may lack one that
    # keeps duo, so its reason claims no more than that the placement is not proven.
    now = _running_now(cli, tmp_path, (1, {"trainer_gpus": 2, "gpu_indexes": [0, 1]}))
    real = solver.cluster.options.answer_for

    def out_of_time_for_solo_on_2(catalog: Any, query: Any, gpu: str, explained: bool = True, data: Any = None) -> Any:
        answer = real(catalog, query, gpu, explained, data)
        undecided = query.model == SOLO["model"] and query.budget_gpus == 2
        return answer.model_copy(update={"status": "unknown", "plans": ()}) if undecided else answer

    monkeypatch.setattr(solver.cluster.options, "answer_for", out_of_time_for_solo_on_2)
    status, out, _ = cli("cluster", str(_fleet(tmp_path)), "--current", str(now), "--json")
    result = json.loads(out)
    assert status == 0 and result["status"] == "feasible" and result["undecided_ways"] > 0
    assert _moves(out)[1][:4] == ("duo", "moves", "move-unproven",
                                  "the placement is not proven best (raise --time-limit)")
