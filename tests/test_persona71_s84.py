"""A startup's Trinity 0.6.0 configs for Qwen3-14B at 65536 tokens on two nodes of 8 H100s, 8 for the rollout
(persona71, s84).

(1) A PPO config whose actor, ref and critic ``fsdp_config`` are one anchor (``&offload``, offloaded): the plan keeps
the actor's Offload and the critic resident. ``--write`` set the critic's flags off through the alias, which turned the
actor's off at the anchor (the plan's values there were the config's already, so the alias was not written out): the
copy's own check found the actor without Offload (101.0 GiB a GPU, of 73.2). The apply block said one edit at the
actor's flags changes the critic's. The alias is now written out as a mapping of its own whenever the plan leaves other
values in it than at its anchor, the anchor's kept ones included (`solver.trinity.patch._set_and_kept`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from test_criticbudget_s82 import BASE

Cli = Callable[..., tuple[int, str, str]]
ACTOR = "trainer.trainer_config.actor_rollout_ref.actor.fsdp_config"
CRITIC_FSDP = "trainer.trainer_config.critic.model.fsdp_config"
OFF = {"param_offload": False, "optimizer_offload": False, "offload_policy": False}
ON = {"param_offload": True, "optimizer_offload": True, "offload_policy": True}
PPO_14B = """\
algorithm: {algorithm_type: ppo, repeat_times: 1}
buffer: {batch_size: 256}
model:
  model_path: Qwen/Qwen3-14B
  max_prompt_tokens: 4096
  max_response_tokens: 61440
  max_model_len: 65536
  rope_scaling: {rope_type: yarn, factor: 1.6, original_max_position_embeddings: 40960, rope_theta: 1000000}
cluster: {node_num: 2, gpu_per_node: 8}
explorer: {rollout_model: {engine_num: 4, tensor_parallel_size: 2}}
trainer:
  ulysses_sequence_parallel_size: 8
  max_token_len_per_gpu: 16384
  trainer_config:
    actor_rollout_ref:
      actor:
        fsdp_config: &offload {param_offload: true, optimizer_offload: true, offload_policy: true}
      ref:
        fsdp_config: *offload
    critic:
      model:
        fsdp_config: *offload
"""
"""The user's PPO config, shortened: its roles' offload flags one anchor, on; the plan (Env + Offload + SP=4 on the 8
trainer H100s) keeps the actor's on and counts the critic resident, as verl 0.8's reading of the config holds it."""
RESIDENT_SHARED = BASE + ("    actor_rollout_ref:\n      actor:\n        fsdp_config: &f {param_offload: false, "
                          "optimizer_offload: false}\n    critic:\n      model:\n        fsdp_config: *f\n")
"""PPO on Qwen3-8B (`BASE`), the actor's flags off already and the critic's the same mapping: ``--critic offloaded``
turns the critic's on alone."""
WRITTEN_OUT = ("{critic} repeats {actor} (*{anchor}), but the plan leaves other values in it than there: the patch "
               "writes it out as a mapping of its own")


@pytest.fixture(autouse=True)
def _env_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")


def _write(cli: Cli, tmp_path: Path, text: str, *options: str) -> tuple[dict, str, list[str]]:
    """The --write copy of the config `text` as PyYAML reads it, --write's warnings, and the text output's apply
    block's comments on the critic's ``model.fsdp_config``; each command must succeed."""
    config, written = tmp_path / "c.yaml", tmp_path / "w.yaml"
    config.write_text(text, encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), *options)
    assert status == 0
    lines = out.splitlines()
    critic = lines.index(next(line for line in lines if line.startswith(f"{CRITIC_FSDP}: ")))
    comments = [line for line in lines[critic + 1:] if line.startswith("# in c.yaml")]
    status, _, err = cli("--from-config", str(config), *options, "--write", str(written))
    assert status == 0
    warned = f"solve: warning: {written}: "
    warnings = [line.removeprefix(warned) for line in err.splitlines() if line.startswith("solve: warning: ")]
    return yaml.safe_load(written.read_text(encoding="utf-8")), "\n".join(warnings), comments


def test_the_critic_resident_beside_the_actors_kept_offload_is_written_out(cli: Cli, tmp_path: Path) -> None:
    options = ("--gpu", "h100", "--host-ram", "1024", "--trinity-version", "0.6.0")
    written, warnings, comments = _write(cli, tmp_path, PPO_14B, *options)
    roles = written["trainer"]["trainer_config"]
    # before: all three False through &offload, the actor's Offload gone
    assert roles["actor_rollout_ref"]["actor"]["fsdp_config"] == ON
    assert roles["actor_rollout_ref"]["ref"]["fsdp_config"] == ON
    assert roles["critic"]["model"]["fsdp_config"] == OFF
    assert warnings == WRITTEN_OUT.format(critic=CRITIC_FSDP, actor=ACTOR, anchor="offload")
    # before: "one edit at ...actor.fsdp_config.offload_policy, ... changes them all"
    assert comments == [f"# in c.yaml {CRITIC_FSDP} is an alias of {ACTOR}, but the plan leaves other values in it "
                        f"than there: write it out as a mapping of its own, as --write does (an edit at {ACTOR} "
                        "reaches it)"]
    # the copy trains as planned: Offload on the actor (before: 101.0 GiB predicted, Env + SP=4 without it)
    status, out, _ = cli("--from-config", str(tmp_path / "w.yaml"), *options, "--check", "--json")
    (answer,) = json.loads(out)
    assert status == 0 and answer["current"]["offload"] is True and answer["current"]["trains"] is True


def test_the_critic_offloaded_beside_the_actors_kept_resident_is_written_out(cli: Cli, tmp_path: Path) -> None:
    written, warnings, comments = _write(cli, tmp_path, RESIDENT_SHARED, "--gpu", "h20", "--critic", "offloaded")
    roles = written["trainer"]["trainer_config"]
    # before: the actor's flags set on at &f with the critic's, and offload_policy added to them
    assert roles["actor_rollout_ref"]["actor"]["fsdp_config"] == {"param_offload": False, "optimizer_offload": False}
    assert roles["critic"]["model"]["fsdp_config"] == ON
    assert warnings == WRITTEN_OUT.format(critic=CRITIC_FSDP, actor=ACTOR, anchor="f")
    assert len(comments) == 1 and comments[0].startswith(f"# in c.yaml {CRITIC_FSDP} is an alias of {ACTOR}, but")
