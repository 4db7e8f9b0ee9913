"""Session 78, fragcheck2: the keys rft-solver writes, per release, as Trinity's own config code took them. 49 configs
made at this session's head (``--emit trinity`` fragments merged into Trinity's gsm8k example, ``--write`` outputs,
``solve cluster --emit-dir`` configs, the API's `trinity_config` of answers read back from their JSON) loaded with
trinity-rft 0.6.0's ``load_config`` and validators (verl 0.7's and verl 0.8's paths), 0.5.1's and 0.5.2's (scratch
venvs, not shipped): each loads where it was made for, and 0.5.1 and 0.5.2 refuse only what was made for 0.6
(``Key 'param_offload' not in 'TrainerConfig'``, ``Key 'fsdp' not in 'Critic'``). These tests hold what those loads
showed, without Trinity: the written keys against the shipped field table (`load_trinity_fields`, read from the
wheels), the keys only 0.6 takes (`TrinitySettings.trinity_06_keys`), and each value's type as Trinity's dataclasses
type it (an int where Trinity's field is an int: OmegaConf refuses ``1.0`` there, and a flag a bool)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from test_planjson_s78 import ASKED, MIXTRAL_LIKE

import solver
from solver.tables import load_trinity_fields

Cli = Callable[..., tuple[int, str, str]]

FLAGS = {"param_offload": True, "optimizer_offload": True, "offload_policy": True}
ROLES_OFFLOADED = {"actor_rollout_ref": {"actor": {"fsdp_config": FLAGS}, "ref": {"fsdp_config": FLAGS}}}
TRAINER_06 = (("trainer", "param_offload"), ("trainer", "optimizer_offload"), ("trainer", "offload_policy"))
"""Trinity 0.6's offload flags under ``trainer``, which 0.5.1's and 0.5.2's ``load_config`` refused
(``Key 'param_offload' not in 'TrainerConfig'``)."""
CRITIC_06 = tuple(("trainer", "trainer_config", "critic", "fsdp", flag) for flag in FLAGS)
"""verl 0.8's critic engine flags, which 0.5.1's and 0.5.2's veRLConfig refused (``Key 'fsdp' not in 'Critic'``) and
0.6.0's on verl 0.7 dropped (its veRLConfig's Critic has no ``fsdp``), reading the critic's ``model.fsdp_config``."""

LEAF_TYPES: dict[str, type] = {
    "max_model_len": int, "ulysses_sequence_parallel_size": int, "max_token_len_per_gpu": int, "node_num": int,
    "gpu_per_node": int, "engine_num": int, "tensor_parallel_size": int, "train_batch_size": int, "lora_rank": int,
    "original_max_position_embeddings": int, "factor": float, "rope_type": str, "mode": str, "strategy": str,
    "trainer_strategy": str, "save_hf_checkpoint": str, "param_offload": bool, "optimizer_offload": bool,
    "offload_policy": bool, "rope_theta": int, "use_dynamic_bsz": bool, "ppo_micro_batch_size_per_gpu": int,
    "log_prob_micro_batch_size_per_gpu": int}
"""Each key name the cases below write, and the type Trinity 0.5.1's and 0.6.0's dataclasses (and verl's, under
``trainer_config``) give it."""


def _leaves(mapping: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    if isinstance(mapping, list):
        for item in mapping:
            yield from _leaves(item, path)
    elif isinstance(mapping, dict):
        for key, value in mapping.items():
            yield from _leaves(value, (*path, key))
    else:
        yield path, mapping


def _checked(config: dict[str, Any]) -> dict[str, Any]:
    """`config`, each of its values asserted of the type Trinity gives its key (`LEAF_TYPES`: ``type is``, so that a
    True is no int and a 32768.0 no int)."""
    wrong = [(".".join(path), value) for path, value in _leaves(config) if type(value) is not LEAF_TYPES[path[-1]]]
    assert wrong == []
    return config


def test_a_0_6_plan_on_offload_writes_three_keys_0_5_lacks_and_says_which() -> None:
    (answer,) = solver.plan("32B", gpu="h100", max_model_len=32768, budget_gpus=8, rollout_gpus=8)
    settings = solver.trinity_settings(answer)
    assert _checked(settings.config) == {
        "model": {"max_model_len": 32768}, "cluster": {"node_num": 2, "gpu_per_node": 8},
        "explorer": {"rollout_model": {"engine_num": 4, "tensor_parallel_size": 2}},
        "trainer": {"trainer_strategy": "fsdp2", "ulysses_sequence_parallel_size": 2, "max_token_len_per_gpu": 32768,
                    "save_hf_checkpoint": "never", **FLAGS, "trainer_config": ROLES_OFFLOADED}}
    assert settings.trinity_06_keys == TRAINER_06
    assert load_trinity_fields().lacking(settings.config) == dict.fromkeys(TRAINER_06, ("0.5.0", "0.5.1", "0.5.2"))
    # Written for 0.5.1: the roles' flags alone, which every release's typed config holds.
    for version in ("0.5.1", "0.5.2"):
        (planned,) = solver.plan("32B", gpu="h100", max_model_len=32768, budget_gpus=8, rollout_gpus=8,
                                 trinity_version=version)
        written = solver.trinity_settings(planned)
        assert written.config["trainer"] == {
            "trainer_strategy": "fsdp2", "ulysses_sequence_parallel_size": 2, "max_token_len_per_gpu": 32768,
            "save_hf_checkpoint": "never", "trainer_config": ROLES_OFFLOADED}
        assert (written.trinity_06_keys, load_trinity_fields().lacking(written.config)) == ((), {})


def test_a_ppo_critics_verl_0_8_flags_are_0_6s_alone() -> None:
    (answer,) = solver.plan("8B", gpu="h100", max_model_len=32768, budget_gpus=8, critic="offloaded")
    critic_06 = solver.trinity_settings(answer)
    assert _checked(critic_06.config)["trainer"]["trainer_config"] == {
        "critic": {"model": {"fsdp_config": FLAGS}, "fsdp": FLAGS, "strategy": "fsdp2"}}
    assert critic_06.trinity_06_keys == CRITIC_06
    critic_05 = solver.trinity_settings(answer, version="0.5.1")
    assert _checked(critic_05.config)["trainer"]["trainer_config"] == {
        "critic": {"model": {"fsdp_config": FLAGS}, "strategy": "fsdp2"}}
    assert critic_05.trinity_06_keys == ()


@pytest.mark.parametrize(("model", "asked", "config"), [
    ("8B", {"max_model_len": 65536, "budget_gpus": 8},
     {"model": {"max_model_len": 65536, "rope_scaling": {"rope_type": "yarn", "factor": 1.6,
                                                         "original_max_position_embeddings": 40960,
                                                         "rope_theta": 1000000}},  # Qwen3-8B's own, since ropetheta
      "trainer": {"ulysses_sequence_parallel_size": 4, "max_token_len_per_gpu": 32768}}),
    ("30B-A3B", {"max_model_len": 16384, "budget_gpus": 4, "lora_rank": 32, "trinity_version": "0.5.1"},
     {"model": {"max_model_len": 16384, "lora_configs": [{"lora_rank": 32}]},
      "trainer": {"ulysses_sequence_parallel_size": 2, "max_token_len_per_gpu": 16384}}),
    ("4B", {"max_model_len": 8192, "budget_gpus": 2, "dpo": True, "train_batch_size": 64, "rollout_gpus": 0,
            "trinity_version": "0.5.2"},
     {"model": {"max_model_len": 8192}, "mode": "train", "buffer": {"train_batch_size": 64},
      "cluster": {"node_num": 1, "gpu_per_node": 2},
      # dynamic batch sizes off, the actor's one pair (0.5's 1, which Trinity doubles): on, they split DPO's pairs
      # (s83: written neither)
      "trainer": {"ulysses_sequence_parallel_size": 1, "max_token_len_per_gpu": 16384, "use_dynamic_bsz": False,
                  "trainer_config": {"actor_rollout_ref": {"actor": {"ppo_micro_batch_size_per_gpu": 1},
                                                           # the ref's and the rollout's too (s83's review83a)
                                                           "ref": {"log_prob_micro_batch_size_per_gpu": 1},
                                                           "rollout": {"log_prob_micro_batch_size_per_gpu": 1}}}}}),
], ids=["yarn-0.6", "lora-moe-0.5.1", "dpo-0.5.2"])
def test_an_answer_read_back_from_its_json_writes_keys_its_release_holds(model: str, asked: dict[str, Any],
                                                                         config: dict[str, Any]) -> None:
    (answer,) = solver.plan(model, gpu="h100", **asked)
    read_back = solver.Answer.model_validate(json.loads(json.dumps(answer.as_json())))
    settings = solver.trinity_settings(read_back)
    assert _checked(settings.config) == config == solver.trinity_settings(answer).config
    assert (settings.trinity_06_keys, load_trinity_fields().lacking(settings.config)) == ((), {})


def test_a_0_5_1_mixtral_read_back_from_the_commands_json_writes_keys_0_5_1_holds(cli: Cli, tmp_path: Path) -> None:
    folder = tmp_path / "mixtral-like"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(MIXTRAL_LIKE), encoding="utf-8")
    status, out, err = cli("--model-config", str(folder), *ASKED, "--trinity-version", "0.5.1", "--json")
    assert status == 0, err
    answer = solver.Answer.model_validate(json.loads(out)[0])
    catalog = solver.load_catalog().with_model(solver.load_model_config(folder))
    settings = solver.trinity_settings(answer, catalog)
    assert _checked(settings.config) == {
        "model": {"max_model_len": 8192},
        "trainer": {"trainer_strategy": "fsdp2", "ulysses_sequence_parallel_size": 1, "max_token_len_per_gpu": 16384,
                    "save_hf_checkpoint": "never", "trainer_config": ROLES_OFFLOADED}}
    assert (settings.trinity_06_keys, load_trinity_fields().lacking(settings.config)) == ((), {})
