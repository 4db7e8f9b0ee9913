"""Tests that kill the survivors of the mutation pass over this session's merges (s83, helper mutants44): each
pins a behaviour the merges' own tests left free."""

from __future__ import annotations

from typing import Any

from config_cases import ARR, with_key
from test_release06_s82 import PASSED_08
from test_stagesdrop_s83 import KL_TOP, REFUSED_05, _problems


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
