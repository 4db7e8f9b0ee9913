"""Review of session 75's diff (session 75, review75): what a running job kept by ``--current`` forgoes names the cost
it is weighed against (`forgone_words`: the wider way's where widening would grow it, and a longer length where the
other pool's way runs one)."""

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
    """A job of Qwen3-8B on a node of 8 A100s, and a pool of one idle node of 8 H20s."""
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump({"pools": [
        {"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8},
        {"name": "h20", "gpu": "H20-96GB", "nodes": 1, "gpus_per_node": 8}],
        "jobs": [{"name": "j", "model": "Qwen3-8B", "max_model_len": {"at_least": 16384}}]}), encoding="utf-8")
    return Planner(CATALOG, load_weights(), "auto"), load_fleet(path, CATALOG)


def _option(pool: int, gpus: int, length: int, cost: float, gain: int) -> Option:
    """A way of job 0 in `pool` on `gpus` trainer GPUs of one node at `length`, of step-time `cost`."""
    (answer,) = solver.plan("Qwen3-8B", gpu="A100-80GB", max_model_len=16384, budget_gpus=4)
    assert answer.best is not None
    plan = answer.best.model_copy(update={"gpus": gpus, "max_model_len": length, "cost": cost})
    return Option(job=0, pool=pool, plan=plan, size=gpus, whole_nodes=0, rollout_gpus=0, gain=gain,
                  cost=round(cost * 10000))


def test_a_cheaper_pool_is_weighed_against_the_wider_way_and_says_its_longer_length(tmp_path: Path,
                                                                                    monkeypatch: pytest.MonkeyPatch):
    # The job runs on 4 of a100's 8 GPUs at 16384 (cost 0.25); widening would grow it to 8 GPUs at 20480 (cost 0.4);
    # h20's idle node runs it at 20480 on 4 GPUs for 0.3: less than the wider way's 0.4, more than its own 0.25.
    # Before, the line said "run it for less (..., cost 0.3, not 0.25)": more, not less, and not the length.
    planner, fleet = _fleet(tmp_path)
    own, wider, other = _option(0, 4, 16384, 0.25, 0), _option(0, 8, 20480, 0.4, 4), _option(1, 4, 20480, 0.3, 4)
    monkeypatch.setattr(placements, "ways_to_grow", lambda *_: [own, wider])
    idle = IdleRoom(planner, fleet, {0: (own, [0])})
    running = RunningJob(job=0, pool=0, nodes=(0,), gpu_indexes=(0, 1, 2, 3), trainer_gpus=4, rollout_gpus=0,
                         max_model_len=16384, sp=1, offload=False)
    label = own.plan.setting.label
    wider_words, cheaper_words = forgone_words(planner, fleet, running, (own, [own, other]), idle, widens=True)
    assert wider_words == (f"the 4 idle GPUs beside it on its node would grow it to 8 trainer GPUs ({label}, cost 0.4, "
                           "not 0.25, 20480 tokens, not 16384), which would restart it")
    assert cheaper_words == (f"kept in pool a100, where it runs, though pool h20's idle room would run it for less (4 "
                             f"trainer GPUs, {label}, cost 0.3, not the wider way's 0.4, 20480 tokens, not 16384)")
    # Without widening it is weighed against its own way: h20's 0.3 is more than 0.25, so nothing is said; a way
    # there of 0.2 at the same length is said against its own 0.25.
    assert forgone_words(planner, fleet, running, (own, [own, other]), idle, widens=False) == ("", "")
    cheaper = _option(1, 4, 16384, 0.2, 0)
    assert forgone_words(planner, fleet, running, (own, [own, cheaper]), idle, widens=False) == ("", (
        f"kept in pool a100, where it runs, though pool h20's idle room would run it for less (4 trainer GPUs, {label}, "
        "cost 0.2, not 0.25)"))
