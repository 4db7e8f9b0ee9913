"""The critic's plan keys in their sections' order after session 83's merges (fixmerge1, s83).

criticsp grouped the critic's keys by section (`solver.trinity.plan_keys._grouped`, to put the engine's SP beside its
offload flags) but sorted a section's own key before its subsections' keys: ``critic.strategy`` and the critic's own
SP came before ``critic.model.fsdp_config`` and ``critic.fsdp`` in ``--emit trinity`` and in ``--json``'s
``config_keys_changed``. Each section stays where its first key was, each key where it was in it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from test_criticbudget_s82 import BASE

Cli = Callable[..., tuple[int, str, str]]
CRITIC = "trainer.trainer_config.critic"
OWN_SPS = "    critic:\n      ulysses_sequence_parallel_size: 1\n      fsdp: {ulysses_sequence_parallel_size: 1}\n"
"""`BASE`'s critic at its own SP 1 and its engine's 1, which ``--write`` sets to the plan's 2."""


@pytest.fixture(autouse=True)
def _env_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")


def test_the_fragments_critic_strategy_follows_its_offload_sections(cli: Cli) -> None:
    status, out, _ = cli("--model", "Qwen3-8B", "--gpu", "h20", "--gpus", "6", "--len", "32768", "--critic",
                         "offloaded", "--emit", "trinity")
    critic = yaml.safe_load(out)["trainer"]["trainer_config"]["critic"]
    assert status == 0 and list(critic) == ["model", "fsdp", "strategy"]  # before: strategy, model, fsdp
    assert critic["strategy"] == "fsdp2" and critic["fsdp"] == {
        "param_offload": True, "optimizer_offload": True, "offload_policy": True}


def test_config_keys_changed_keeps_the_engine_sp_with_its_section_and_the_critics_own_sp_last(
        cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(BASE + OWN_SPS, encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--critic", "offloaded", "--json")
    (answer,) = json.loads(out)
    assert status == 0
    # before: strategy and the critic's own SP first
    assert [(change["key"], change["config_value"], change["plan_value"]) for change in answer["config_keys_changed"]
            if change["key"].startswith(CRITIC)] == [
        *((f"{CRITIC}.{section}.{flag}", None, True) for section in ("model.fsdp_config", "fsdp")
          for flag in ("param_offload", "optimizer_offload", "offload_policy")),
        (f"{CRITIC}.fsdp.ulysses_sequence_parallel_size", 1, 2),
        (f"{CRITIC}.strategy", None, "fsdp2"),
        (f"{CRITIC}.ulysses_sequence_parallel_size", 1, 2)]
