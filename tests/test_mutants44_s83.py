"""Tests that kill the survivors of the mutation pass over this session's merges (s83, helper mutants44): each
pins a behaviour the merges' own tests left free."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

import pytest
from config_cases import ARR, with_key
from test_release06_s82 import PASSED_08
from test_dpowrite_s83 import PLAN, _dpo
from test_padbound_s71 import INTERNLM2
from test_stagesdrop_s83 import KL_TOP, REFUSED_05, _problems
from test_tokbudget_s72 import Cli


def test_a_flat_critic_key_is_taken_over_actor_rollout_refs_critic():
    # verl 0.8's critic is trainer_config's own critic where written, actor_rollout_ref's only where not: the flat
    # critic's key is passed to verl (its line), the nested critic dropped (its own line)
    config = with_key("trainer.trainer_config.critic.use_torch_compile", True, with_key(f"{ARR}.critic",
                                                                                        {"ppo_epochs": 2}))
    lines = [words for code, words in _problems(config, "0.6") if code == "key-dropped"]
    assert f"trainer.trainer_config.critic.use_torch_compile: {PASSED_08.format('critic')}" in lines
    assert len(lines) == 2 and lines[0].startswith(f"{ARR}.critic: ") and "the section's own critic" in lines[0]


def test_the_configs_own_section_is_built_at_the_first_of_several_stages_keeping_its_trainer():
    stages: list[dict[str, Any]] = [{"stage_name": "a", "trainer": {}}, {"stage_name": "b"}, {"stage_name": "c"}]
    config = with_key("stages", stages, with_key(KL_TOP, 0.01))
    assert [words for code, words in _problems(config, "0.5") if code == "verl-key-refused"] == [
        f"{KL_TOP}: {REFUSED_05.format('it starts stages[1], after the stages before it have run')}: remove it"]


def test_a_dpo_config_whose_actor_may_run_in_rows_is_planned_at_the_default_budget(tmp_path: Path, cli: Cli):
    # no release named: Trinity 0.5 runs the actor's update in rows (its own key off), 0.6 at the trainer's 8000 (on):
    # the plans stay at the default, 16384, a pair's tokens, not the 8000 cap a GRPO config gets
    path = tmp_path / "c.yaml"
    for algorithm, budget in (("dpo", 16384), ("grpo", 8000)):
        config = _dpo(1, algorithm, use_dynamic_bsz=True, max_token_len_per_gpu=8000)
        config["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]["use_dynamic_bsz"] = False
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        status, out, _ = cli("--from-config", str(path), *PLAN, "--json")
        assert (status, json.loads(out)[0]["plans"][0]["max_token_len_per_gpu"]) == (0, budget)


@pytest.mark.parametrize(("budget", "status", "err"), [
    ("auto", 0, ""),
    ("8192", 2, "solve: error: --token-budget 8192: internlm2-7b trains one padded sequence per micro-batch, which "
                "reads no token budget: leave --token-budget out\n")])
def test_a_dpo_config_of_a_model_trained_one_sequence_per_micro_batch_gets_the_models_budget_words(
        tmp_path: Path, cli: Cli, budget: str, status: int, err: str):
    # its plans count the pair whatever the budget: not the DPO config's refusal (its actor in rows), the model's
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(_dpo(2)), encoding="utf-8")
    got = cli("--from-config", str(path), "--model-config", str(INTERNLM2), *PLAN, "--token-budget", budget)
    assert (got[0], got[2]) == (status, err)
