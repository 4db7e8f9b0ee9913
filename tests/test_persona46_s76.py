"""A platform operator's week with ``solve cluster`` (session 76, persona46): a running job that ``--current``'s time
limit reaches no more gets its way as it runs from questions asked past the limit, each with a second at least
(`AS_IT_RUNS_FLOOR_S`; `run_deadline` gave them a millisecond: on a busy machine a mixture of experts' question ran out,
the job got no way and was told to stop for want of time, which the rule is there to prevent)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml
from cluster_api import place

import solver.clock
import solver.cluster.search
import solver.solve
from solver.tables import load_catalog, load_fleet

CATALOG = load_catalog()
FLEET = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}],
         "jobs": [{"name": "a", "model": "Qwen3-4B", "max_model_len": 16384, "rollout_gpus": 0}]}
NOW = [1000.0]
"""The fake clock's reading: `time.monotonic` and `clock.seconds_left` read it alone."""


def test_a_running_job_cut_short_past_the_time_limit_gets_its_way_as_it_runs_with_a_second(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(FLEET), encoding="utf-8")
    fleet = load_fleet(path, CATALOG)
    running = tmp_path / "running.json"
    running.write_text(place(fleet, catalog=CATALOG).model_dump_json(), encoding="utf-8")
    limits: list[float] = []

    def recording(cp_solver, model, status, checked=solver.solve.checked):
        limits.append(cp_solver.parameters.max_time_in_seconds)
        return checked(cp_solver, model, status)

    run = solver.cluster.search._place

    def late(*args):  # the placement begins a second past its 10 s: the ways' wall clock is past, so is the run's
        NOW[0] += 11.0
        return run(*args)

    monkeypatch.setattr(solver.solve, "checked", recording)
    monkeypatch.setattr(time, "monotonic", lambda: NOW[0])
    monkeypatch.setattr(solver.clock, "seconds_left", lambda deadline: deadline - NOW[0])
    monkeypatch.setattr(solver.cluster.search, "_place", late)
    result = json.loads(place(fleet, catalog=CATALOG, time_limit_s=10.0, current=running).model_dump_json())
    # Its one question (the tables' tier has its plan) had 1 s (AS_IT_RUNS_FLOOR_S), not the 0.001 s past the run's
    # end that session 76's run_deadline gave it first (nor the whole 10 s of the time limit it had then: runpast).
    assert limits == [1.0]
    (placed,) = result["placements"]
    assert (result["ways_cut_short"], placed["current"], placed["stay_reason_code"], placed["stay_reason"]) == (
        [], "stays", "ways-cut-short", ("kept as it runs: the time limit cut working out its ways short, so no "
                                        "other way of its was weighed (raise --time-limit)"))
