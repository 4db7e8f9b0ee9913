"""s71 docstruth5: what the docs say of `solve cluster`, held to the code where the code slipped: a stage of the
running jobs kept (`--current`) that the wall clock stops is named in words, as docs/cluster.md's determinism
paragraph lists it among the stages, not a traceback."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

import solver.cluster.search
from solver.cluster.search import STAGES
from solver.render.cluster import WALL_CLOCK_STEPS

Cli = Callable[..., tuple[int, str, str]]

FLEET = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 2, "gpus_per_node": 8}],
         "jobs": [{"name": "solo", "model": "Qwen3-8B", "max_model_len": 32768, "rollout_gpus": 0},
                  {"name": "duo", "model": "Qwen3-4B", "max_model_len": 32768, "rollout_gpus": 0}]}


def test_every_stage_the_wall_clock_may_stop_has_its_words():
    assert set(STAGES) <= set(WALL_CLOCK_STEPS)


def test_the_running_jobs_kept_stage_the_wall_clock_stopped_is_named(cli: Cli, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(yaml.safe_dump(FLEET), encoding="utf-8")
    _, out, _ = cli("cluster", str(fleet), "--json")
    now = tmp_path / "now.json"
    now.write_text(out, encoding="utf-8")
    # Every stage stopped by the wall clock, as on a machine too busy for any of them (every job placed: no stage of
    # jobs tied in priority runs, s83; test_clusterjobs_s83 names it where it runs).
    monkeypatch.setattr(solver.cluster.search, "stopped_by_wall_clock", lambda cp_solver, status: True)
    status, out, _ = cli("cluster", str(fleet), "--current", str(now), "--json")
    assert status == 0 and json.loads(out)["wall_clock_stopped"] == ["priority", "stays", "length", "cost",
                                                                     "tie-break"]
    status, out, err = cli("cluster", str(fleet), "--current", str(now))
    assert status == 0 and err == ""
    assert ("the wall clock stopped the placed-priority stage, the running-jobs-kept stage, the longer-contexts stage, "
            "the step-time-cost stage and the tie-break before the work they are given") in " ".join(out.split())
