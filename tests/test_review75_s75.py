"""Review of session 75's diff (session 75, review75): a running job kept by ``--current`` says another pool's idle
room would run it for less (`forgone_words`, ``pool-kept``) only where that way costs less than it runs at, as
docs/json.md says, not merely less than the wider way the idle GPUs beside it would grow it to, and says the longer
length it runs."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import solver
from solver.cluster import placements
from solver.cluster.options import Option, Planner
from solver.cluster.placements import IdleRoom, forgone_words
from solver.tables import RunningJob, load_catalog, load_fleet, load_weights

CATALOG = load_catalog()


def _fleet(tmp_path: Path) -> tuple[Planner, solver.Fleet]:
    """A job of Qwen3-8B on a node of 8 A100s, and a pool of one idle node of 8 A100s (spare)."""
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump({"pools": [
        {"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8},
        {"name": "spare", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}],
        "jobs": [{"name": "j", "model": "Qwen3-8B", "max_model_len": {"at_least": 16384}}]}), encoding="utf-8")
    return Planner(CATALOG, load_weights(), "auto"), load_fleet(path, CATALOG)


def _option(pool: int, gpus: int, length: int, cost: float, gain: int) -> Option:
    """A way of job 0 in `pool` on `gpus` trainer GPUs of one node at `length`, of step-time `cost`."""
    (answer,) = solver.plan("Qwen3-8B", gpu="A100-80GB", max_model_len=16384, budget_gpus=4)
    assert answer.best is not None
    plan = answer.best.model_copy(update={"gpus": gpus, "max_model_len": length, "cost": cost})
    return Option(job=0, pool=pool, plan=plan, size=gpus, whole_nodes=0, rollout_gpus=0, gain=gain,
                  cost=round(cost * 10000))


def test_another_pool_runs_it_for_less_only_below_its_own_cost_and_says_the_longer_length(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # The job runs on 4 of a100's 8 GPUs at 16384 (cost 0.25); widening would grow it to 8 GPUs at 20480 (cost 0.4).
    # spare's idle node runs it at 20480 on 4 GPUs for 0.3: less than the wider way's 0.4, more than its own 0.25.
    # Before, the line said so: "would run it for less (4 trainer GPUs, ..., cost 0.3, not 0.25)", more, not less.
    planner, fleet = _fleet(tmp_path)
    own, wider, dearer = _option(0, 4, 16384, 0.25, 0), _option(0, 8, 20480, 0.4, 4), _option(1, 4, 20480, 0.3, 4)
    monkeypatch.setattr(placements, "ways_to_grow", lambda *_: [own, wider])
    idle = IdleRoom(planner, fleet, {0: (own, [0])})
    running = RunningJob(job=0, pool=0, nodes=(0,), gpu_indexes=(0, 1, 2, 3), trainer_gpus=4, rollout_gpus=0,
                         max_model_len=16384, sp=1, offload=False)
    label = own.plan.setting.label
    grown = (f"the 4 idle GPUs beside it on its node would grow it to 8 trainer GPUs ({label}, cost 0.4, not 0.25, "
             "20480 tokens, not 16384), which would restart it")
    assert forgone_words(planner, fleet, running, (own, [own, dearer]), idle, widens=True) == (grown, "")
    # At 0.2 it runs as long as the wider way for less than both: said, with its length.
    cheaper = _option(1, 4, 20480, 0.2, 4)
    assert forgone_words(planner, fleet, running, (own, [own, dearer, cheaper]), idle, widens=True) == (grown, (
        f"kept in pool a100, where it runs, though pool spare's idle room would run it for less (4 trainer GPUs, "
        f"{label}, cost 0.2, not 0.25, 20480 tokens, not 16384)"))
    # Not as long as the wider way (16384): not said beside it; without widening, said against its own way alone.
    shorter = _option(1, 4, 16384, 0.1, 0)
    assert forgone_words(planner, fleet, running, (own, [own, shorter]), idle, widens=True) == (grown, "")
    assert forgone_words(planner, fleet, running, (own, [own, shorter]), idle, widens=False) == ("", (
        f"kept in pool a100, where it runs, though pool spare's idle room would run it for less (4 trainer GPUs, "
        f"{label}, cost 0.1, not 0.25)"))
