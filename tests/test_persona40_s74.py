"""A PPO user with an existing Trinity 0.6 config (persona 40: Qwen3-8B at 32k and 14B at 16k on 8 H100s, 4 of them
for rollout, the critic's own offload flags set): what they copied or read that was wrong, each fixed here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from config_cases import one_node_rollout
from test_jsonapply_s63 import _apply_keys, _flat, _json_answer
from test_persona38_s74 import _apply_block

import solver

PPO_CONFIG = """\
algorithm:
  algorithm_type: ppo
buffer:
  batch_size: 64
model:
  model_path: Qwen/Qwen3-8B
  max_prompt_tokens: 2048
  max_response_tokens: 30720
  max_model_len: 32768
""" + one_node_rollout(4) + """\
trainer:
  param_offload: true
  optimizer_offload: true
  trainer_config:
    critic:
      model:
        fsdp_config:
          param_offload: true
          optimizer_offload: true
"""
"""The user's config: PPO, its critic reloaded (its own flags, and Trinity 0.6's under ``trainer``, which verl 0.8 or
later builds the critic's engine from), on 4 trainer and 4 rollout H100s."""

EIGHT_B = ["--model", "8B", "--len", "32k", "--gpu", "h100", "--gpus", "4", "--exact"]


@pytest.mark.parametrize("critic", ["resident", "offloaded", "reloaded"])
@pytest.mark.parametrize("version", [[], ["--trinity-version", "0.5"], ["--trinity-version", "0.6"]],
                         ids=["no-version", "0.5", "0.6"])
def test_the_apply_lines_set_the_critics_flags_as_the_json_does(cli, critic: str, version: list[str]):
    """The apply lines, which people copy, left the critic's offload flags out (the JSON's apply, --emit trinity and
    --write set them): pasted, they left the critic as the config had it (unset: on the GPUs), not as planned."""
    query = [*EIGHT_B, "--critic", critic, *version]
    status, text, _ = cli(*query)
    assert status == 0
    assert _apply_keys(text) == _flat(_json_answer(cli, *query)["apply"]["config"])


def test_an_offloaded_critics_apply_lines(cli):
    status, text, _ = cli(*EIGHT_B, "--critic", "offloaded")
    assert status == 0
    block = _apply_block(text)
    at = block.index("trainer.max_token_len_per_gpu: 16384") + 1
    assert block[at:] == [
        ("# the PPO critic's states offloaded, as the plan counts them (Trinity 0.5, and 0.6 on verl before 0.8, "
         "read these):"),
        ("trainer.trainer_config.critic.model.fsdp_config: {param_offload: true, optimizer_offload: true, "
         "offload_policy: true}"),
        "# Trinity 0.6 on verl 0.8 or later reads these instead (leave them out before 0.6, which refuses them):",
        "trainer.trainer_config.critic.fsdp: {param_offload: true, optimizer_offload: true, offload_policy: true}",
        "# offload_policy needs FSDP2 (verl 0.8 or later runs the critic at trainer.trainer_strategy):",
        "trainer.trainer_config.critic.strategy: fsdp2"]
    status, text, _ = cli(*EIGHT_B, "--critic", "offloaded", "--trinity-version", "0.5")
    assert not any("critic.fsdp" in line for line in _apply_block(text))  # Trinity 0.5's typed Critic refuses it


def test_no_critic_no_critic_lines(cli):
    status, text, _ = cli(*EIGHT_B)
    assert status == 0
    assert not any("critic" in line for line in _apply_block(text))


def _pasted(config: str, keys: dict[tuple[str, ...], Any]) -> str:
    """`config` with `keys` (by path) set in it, as a user pastes the apply lines into it."""
    data = yaml.safe_load(config)
    for path, value in keys.items():
        node = data
        for name in path[:-1]:
            node = node.setdefault(name, {})
        node[path[-1]] = value
    return yaml.safe_dump(data)


@pytest.mark.parametrize("critic", ["resident", "offloaded", "reloaded"])
def test_the_apply_lines_pasted_into_the_config_give_the_critic_planned(cli, tmp_path: Path, critic: str):
    """With --critic C, the verdict counts C; the apply lines (the config's keys the plan changes too among them)
    pasted into the config make its flags hold the critic so, and its check then counts C with no --critic."""
    config = tmp_path / "ppo.yaml"
    config.write_text(PPO_CONFIG)
    status, text, _ = cli("--from-config", str(config), "--gpu", "h100", "--critic", critic)
    assert status == 0
    planned = next(line for line in text.splitlines() if line.startswith("plan "))
    config.write_text(_pasted(PPO_CONFIG, _apply_keys(text)))
    status, text, _ = cli("--from-config", str(config), "--gpu", "h100")
    assert status == 0
    assert ("the verdict and the plans count its states as both readings hold them, verl before 0.8's of its own "
            "critic.model.fsdp_config and verl 0.8 or later's of critic.fsdp, else the trainer's: "
            f"{critic} (") in " ".join(text.split())
    assert next(line for line in text.splitlines() if line.startswith("plan ")) == planned


def test_a_configs_changed_critic_keys_are_said_once(cli, tmp_path: Path):
    """A resident critic's flags turned off were said twice: in the apply lines and again among the config's keys the
    plan changes too."""
    config = tmp_path / "ppo.yaml"
    config.write_text(PPO_CONFIG)
    status, text, _ = cli("--from-config", str(config), "--gpu", "h100", "--critic", "resident")
    assert status == 0
    block = _apply_block(text)
    keys = [line.split(":")[0] for line in block if not line.startswith(("#", "export "))]
    assert len(keys) == len(set(keys))
    assert not any(line.startswith("# and these keys of") for line in block)  # all are the apply lines' own


HELD_CRITIC = ("608.3 GiB per node for Offload and the critic's offloaded states (the actor's states, the critic's "
               "states (256.8 GiB) and")
"""The row's start for Qwen3-14B's critic held in host memory: with the critic's share, as solve memory gives it."""


@pytest.mark.parametrize(("critic", "words"), [
    # Without a critic, loading leads: no release named, each of the 4 ranks loads the model (4 x 55.0 GiB) beside
    # the reference model's and the actor's pinned shards (2 x 80.5).
    ("none", "381.1 GiB per node for Offload (at start-up, every rank loading the model; 351.6 while training);"),
    ("offloaded", HELD_CRITIC),
    # s90: a reloaded critic's gradients are freed before it offloads, 12 pinned bytes a parameter, not Offload's 19.7
    ("reloaded", ("580.4 GiB per node for Offload and the critic's offloaded states (the actor's states, the "
                  "critic's states (228.8 GiB) and"))])
def test_the_host_memory_row_names_the_critics_states_it_counts(cli, critic: str, words: str):
    """Qwen3-14B at 16k with Offload: a critic held in host memory adds 256.7 GiB a node, which the row said was "for
    Offload" alone (the actor's)."""
    status, text, _ = cli("--model", "14B", "--len", "16k", "--gpu", "h100", "--gpus", "4", "--exact", "--env",
                          "--offload", "--sp", "2", "--critic", critic)
    assert status == 0
    assert next(line for line in text.splitlines() if line.startswith("host memory")).split(None, 2)[2].startswith(
        words)


def test_readings_that_agree_are_both_named(cli, tmp_path: Path):
    """The user's config holds its critic reloaded by both readings: its own critic.model.fsdp_config (verl before
    0.8) and the flags under trainer (verl 0.8 or later, which reads no critic.model.fsdp_config); the note named the
    former alone, as if it decided on every release."""
    config = tmp_path / "ppo.yaml"
    config.write_text(PPO_CONFIG)
    status, text, _ = cli("--from-config", str(config), "--gpu", "h100")
    assert status == 0
    assert ("the verdict and the plans count its states as both readings hold them, verl before 0.8's of its own "
            "critic.model.fsdp_config and verl 0.8 or later's of critic.fsdp, else the trainer's: reloaded "
            "(param_offload and optimizer_offload: in host memory, back on the GPUs for its own update), and its own "
            "update as a second peak; --critic none counts the actor alone") in " ".join(text.split())
    config.write_text(PPO_CONFIG.replace("  param_offload: true\n  optimizer_offload: true\n", "", 1))
    status, text, _ = cli("--from-config", str(config), "--gpu", "h100", "--trinity-version", "0.5")
    assert ("the verdict and the plans count its states as its own critic.model.fsdp_config holds them: reloaded"
            in " ".join(text.split()))  # one reading: Trinity 0.5's


def test_the_api_takes_critic_none_as_config_query_and_the_command_do():
    """``critic="none"`` (``--critic none``, `config_query`'s) was refused by `plan`, `estimate_memory`,
    `memory_answer` and `map_plans`, whose None alone said none."""
    (answer,) = solver.plan("8B", gpu="h100", budget_gpus=4, max_model_len=32768, critic="none")
    assert answer.critic is None and answer.best is not None and answer.best.setting.label == "Env + SP=4"
    none = solver.estimate_memory("8B", "h100", 4, 32768, sp=4, env=True, critic="none")
    assert none == solver.estimate_memory("8B", "h100", 4, 32768, sp=4, env=True)
    assert round(none.total_gib, 2) == 57.88
    assert solver.memory_answer("8B", "h100", 4, 32768, sp=4, env=True, critic="none").critic is None
    assert solver.map_plans(model="8B", gpu="h100", gpus_up_to=2, critic="none")[0].critic is None
