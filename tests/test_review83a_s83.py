"""Review of session 83's merges (review83a): DPO configs trained with remove padding and dynamic batch sizes off.

``--write`` keeps the trainer's dynamic batch sizes off for DPO (off keeps the actor's pairs whole) and wrote the
actor's pair alone (dpowrite): the ref's forward and the rollout's recompute kept the config's sizes, or none. Trinity
0.6 on verl 0.8 or later hands verl none for one left unset (``trainer/verl/config.py:358``, ``:400`` in 0.6.0), which
verl 0.8.0 refuses with dynamic batch sizes off as the trainer starts (``workers/config/actor.py:207``, the ref's after
``workers/engine_workers.py:509``), and on verl before 0.8 Trinity doubles the ref's for DPO
(``verl_legacy/verl_config.py:687``): a ref's 4 is 8 sequences there, beyond the pair's tokens the plans count.
``--write`` now writes the ref's and the rollout's 1 beside the actor's pair (as for a padded model), and ``--check``
says a size left unset for such a config (``micro-batch-unset``), as it does for a padded model. And the critic's keys
in ``--write``'s order (``config_keys_changed``): criticsp's grouping had put its own keys before its sections'."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_dpowrite_s83 import PLAN, Cli, _dpo

ARR = "trainer.trainer_config.actor_rollout_ref"
UNSET = ("{path} is not set: Trinity 0.6 on verl 0.8 or later hands verl none, which then refuses dynamic batch sizes "
         "off as the trainer starts: {fix}")
PAIR_FIX = ("set it to 2 (--write does), one pair, a chosen and a rejected sequence, on verl 0.8 or later, and to 1 "
            "before 0.8, which Trinity doubles to one pair")


def _roles(written: dict[str, Any]) -> dict[str, Any]:
    """The written copy's ``actor_rollout_ref`` section."""
    return written["trainer"]["trainer_config"]["actor_rollout_ref"]


def _problems(cli: Cli, path: Path, *options: str) -> dict[str, list[str]]:
    """``--check --json``'s problem lines for the config at `path`, by code; the check must succeed but where a line
    says the config lets a GPU take more tokens than the verdict's budget (s87: then it exits 1)."""
    status, out, err = cli("--from-config", str(path), "--check", *PLAN, "--json", *options)
    current = json.loads(out)[0]["current"]
    assert (status, err) == (1 if "token-budget-above-verdict" in current["config_problem_codes"] else 0, "")
    said: dict[str, list[str]] = {}
    for code, words in zip(current["config_problem_codes"], current["config_problems"], strict=True):
        said.setdefault(code, []).append(words)
    return said


@pytest.mark.parametrize(("version", "pair"), [(None, 2), ("0.6", 2), ("0.5", 1)])
def test_write_sets_the_refs_and_the_rollouts_size_beside_the_actors_pair(tmp_path: Path, cli: Cli,
                                                                          version: str | None, pair: int) -> None:
    config = _dpo(3)
    _roles(config)["ref"] = {"log_prob_micro_batch_size_per_gpu": 4}  # 8 sequences on verl before 0.8
    path, first, second = tmp_path / "c.yaml", tmp_path / "w1.yaml", tmp_path / "w2.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    options = ("--trinity-version", version) if version else ()
    assert cli("--from-config", str(path), *PLAN, "--write", str(first), *options)[0] == 0
    written = yaml.safe_load(first.read_text(encoding="utf-8"))
    assert _roles(written) == {"actor": {"ppo_micro_batch_size_per_gpu": pair},
                               "ref": {"log_prob_micro_batch_size_per_gpu": 1},
                               "rollout": {"log_prob_micro_batch_size_per_gpu": 1}}
    assert written["trainer"]["use_dynamic_bsz"] is False
    # the written copy: no size unset, and the ref's pass no longer above the verdict's tokens where the actor's pair
    # fits the release (0.5: its 1, doubled, is one pair; 0.6's 2 is two pairs before verl 0.8 alone, as its note
    # says: dpo-doubled-above-verdict, which --check passes, s87)
    said = _problems(cli, first, *options)
    assert "micro-batch-unset" not in said and "token-budget-above-verdict" not in said
    assert ("dpo-doubled-above-verdict" in said) == (version != "0.5")
    assert all("fills each micro-batch with 8 sequences" not in words for words in said.get(
        "dpo-doubled-above-verdict", []))
    # --write of the written copy writes it again, its own name in the check comment aside
    assert cli("--from-config", str(first), *PLAN, "--write", str(second), *options)[0] == 0
    assert (second.read_text(encoding="utf-8").replace("w2.yaml", "w.yaml")
            == first.read_text(encoding="utf-8").replace("w1.yaml", "w.yaml"))


@pytest.mark.parametrize("version", [None, "0.6", "0.5"])
def test_check_says_each_size_a_dpo_config_with_dynamic_batch_sizes_off_leaves_unset(tmp_path: Path, cli: Cli,
                                                                                     version: str | None) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(_dpo(None)), encoding="utf-8")
    said = _problems(cli, path, *(("--trinity-version", version) if version else ()))
    # Trinity 0.5 (and 0.6 on verl before 0.8) gives each 1: no line there
    assert said.get("micro-batch-unset") == (None if version == "0.5" else [
        UNSET.format(path=f"{ARR}.actor.ppo_micro_batch_size_per_gpu", fix=PAIR_FIX),
        UNSET.format(path=f"{ARR}.ref.log_prob_micro_batch_size_per_gpu", fix="set it to 1 (--write does)"),
        UNSET.format(path=f"{ARR}.rollout.log_prob_micro_batch_size_per_gpu", fix="set it to 1 (--write does)")])


def test_a_dpo_config_with_dynamic_batch_sizes_on_says_no_size_unset(tmp_path: Path, cli: Cli) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(_dpo(None, use_dynamic_bsz=True)), encoding="utf-8")
    assert "micro-batch-unset" not in _problems(cli, path, "--trinity-version", "0.6")


def test_the_critics_keys_keep_their_order_beside_its_sections(tmp_path: Path, cli: Cli,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # criticsp's grouping put the critic's own keys (strategy, its SP) before its model's and its engine's sections,
    # whatever their order, so config_keys_changed no longer followed the written copy (test_applyalias_s83's last
    # assertion): each section stays where its first key was, and a key beside them where it was
    from test_criticsp_s83 import ENGINE_AT_4, _config
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    path = tmp_path / "c.yaml"
    path.write_text(_config("ppo", ENGINE_AT_4), encoding="utf-8")
    status, out, _ = cli("--from-config", str(path), "--gpu", "h20", "--critic", "offloaded", "--json")
    assert status == 0
    critic = "trainer.trainer_config.critic"
    assert [(change["key"], change["plan_value"]) for change in json.loads(out)[0]["config_keys_changed"]] == [
        *((f"{critic}.{section}.{flag}", True) for section in ("model.fsdp_config", "fsdp")
          for flag in ("param_offload", "optimizer_offload", "offload_policy")),
        (f"{critic}.fsdp.ulysses_sequence_parallel_size", 2), (f"{critic}.strategy", "fsdp2"),
        (f"{critic}.ulysses_sequence_parallel_size", 2)]
