"""`--critic none --write` keeps a config's critic where its flags held it: a plan that counts no critic and turns
Trinity 0.6's offload flags under ``trainer`` off writes them under the critic's engine (``critic.fsdp``), which verl
0.8 or later copies from the trainer's, so that the run's critic stays reloaded (persona40's open bug (a))."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from test_trinity import vanilla_plan

from solver.results import Plan
from solver.tables import load_catalog
from solver.trinity.keys import CRITIC_ENGINE, OFFLOAD_FLAGS
from solver.trinity.plan_keys import keys_for_plan

PPO = """\
algorithm: {algorithm_type: ALGORITHM}
model: {model_path: Qwen/Qwen3-4B, max_model_len: 8192}
cluster: {node_num: 1, gpu_per_node: 8}
explorer:
  rollout_model: {engine_num: 4, tensor_parallel_size: 1}
trainer:
  trainer_strategy: fsdp2
  param_offload: true
  optimizer_offload: true
"""
"""Qwen3-4B at 8192 tokens on 4 H100s (4 rollout GPUs), Trinity 0.6's offload flags on under ``trainer``: on verl 0.8
or later the critic's engine takes them (reloaded); without a critic the plan needs no Offload."""

ENGINE_HOLDS = "verl 0.8 or later's of critic.fsdp, else the trainer's (reloaded)"


@pytest.fixture(autouse=True)
def _env_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)


def _written(cli, tmp_path: Path, algorithm: str) -> dict:
    config, written = tmp_path / "ppo.yaml", tmp_path / "written.yaml"
    config.write_text(PPO.replace("ALGORITHM", algorithm), encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "h100", "--critic", "none", "--write", str(written))
    assert status == 0, err
    return yaml.safe_load(written.read_text(encoding="utf-8"))


def _critic_note(cli, path: Path) -> str:
    status, out, err = cli("--from-config", str(path), "--gpu", "h100", "--trinity-version", "0.6", "--json")
    assert status == 0, err
    (note,) = [problem for problem in json.loads(out)[0]["current"]["config_problems"] if "trains a critic" in problem]
    return note


def test_the_trainers_flags_turned_off_are_kept_for_the_critic_under_its_engine(cli, tmp_path: Path):
    written = _written(cli, tmp_path, "ppo")
    assert {flag: written["trainer"][flag] for flag in ("param_offload", "optimizer_offload", "offload_policy")} == {
        "param_offload": False, "optimizer_offload": False, "offload_policy": False}
    engine = {"fsdp": {"param_offload": True, "optimizer_offload": True}}
    assert written["trainer"]["trainer_config"]["critic"] == engine
    # verl 0.8's reading of the critic is the same before and after: reloaded, as the trainer's flags held it
    assert ENGINE_HOLDS in _critic_note(cli, tmp_path / "ppo.yaml")
    assert ENGINE_HOLDS in _critic_note(cli, tmp_path / "written.yaml")


def test_an_algorithm_without_a_critic_gets_no_critic_keys(cli, tmp_path: Path):
    written = _written(cli, tmp_path, "grpo")
    assert written["trainer"]["param_offload"] is False
    assert "trainer_config" not in written["trainer"]


def test_only_the_flags_trainer_holds_on_go_under_the_critics_engine_and_none_with_offload():
    # mutants52: a flag trainer set false went under the critic's engine too, and so did those an Offload plan keeps
    # on under trainer (verl 0.8 copies them there itself)
    plan, model = vanilla_plan().model_copy(update={"critic": None}), load_catalog().model("4B")
    config = {"algorithm": {"algorithm_type": "ppo"}, "trainer": {"param_offload": True, "optimizer_offload": False}}

    def engine_flags(plan: Plan) -> dict[str, object]:
        return {key.path[-1]: key.value for key in keys_for_plan(plan, model, config, version="0.6")
                if key.path[:-1] == CRITIC_ENGINE and key.path[-1] in OFFLOAD_FLAGS}

    assert engine_flags(plan) == {"param_offload": True}
    assert engine_flags(plan.model_copy(update={"offload": True})) == {}
