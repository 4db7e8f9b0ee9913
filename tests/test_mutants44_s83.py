"""Tests that kill the survivors of the mutation pass over this session's merges (s83, helper mutants44): each
pins a behaviour the merges' own tests left free."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from config_cases import ARR, with_key
from test_applyalias_s83 import BASE as ALIAS_BASE
from test_applyalias_s83 import _run as _run_alias
from test_criticsp_s83 import SP as CRITIC_SP
from test_criticsp_s83 import _config as _critic_config
from test_dpowrite_s83 import PLAN, _dpo
from test_padbound_s71 import INTERNLM2
from test_release06_s82 import PASSED_08
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
    # the plans stay at the default, 16384, a pair's tokens, not the cap a GRPO config gets: its 8000, raised to hold
    # a sequence of 8192 as every release runs it (release89b)
    path = tmp_path / "c.yaml"
    for algorithm, budget in (("dpo", 16384), ("grpo", 8192)):
        config = _dpo(1, algorithm, use_dynamic_bsz=True, max_token_len_per_gpu=8000)
        config["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]["use_dynamic_bsz"] = False
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        status, out, _ = cli("--from-config", str(path), *PLAN, "--json")
        assert (status, json.loads(out)[0]["plans"][0]["max_token_len_per_gpu"]) == (0, budget)


@pytest.mark.parametrize(("budget", "status", "err"), [
    ("auto", 0, ""),
    ("8192", 2, ("solve: error: --token-budget 8192: internlm2-7b trains one padded sequence per micro-batch, which "
                 "reads no token budget: leave --token-budget out\n"))])
def test_a_dpo_config_of_a_model_trained_one_sequence_per_micro_batch_gets_the_models_budget_words(
        tmp_path: Path, cli: Cli, budget: str, status: int, err: str):
    # its plans count the pair whatever the budget: not the DPO config's refusal (its actor in rows), the model's
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(_dpo(2)), encoding="utf-8")
    got = cli("--from-config", str(path), "--model-config", str(INTERNLM2), *PLAN, "--token-budget", budget)
    assert (got[0], got[2]) == (status, err)


@pytest.fixture
def _env_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")


def _critic_sp_lines(cli: Cli, tmp_path: Path, text: str, version: str) -> tuple[int, list[tuple[str, str]]]:
    """--check's exit status on `text` (criticsp's config) with `version`, and (code, words) of its lines that name
    the critic's own SP."""
    config = tmp_path / "c.yaml"
    config.write_text(text)
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--check", "--json", "--trinity-version",
                         version)
    current = json.loads(out)[0]["current"]
    return status, [(code, words) for code, words in zip(current["config_problem_codes"], current["config_problems"],
                                                         strict=True) if CRITIC_SP in words]


@pytest.mark.parametrize(("another", "runs"), [
    ("", ("Trinity 0.6 on verl before 0.8 checks the critic's SP as the actor's and refuses the config (SP=3 does not "
          "divide")),
    (", critic_model_path: /other/critic", ("Trinity 0.6 on verl before 0.8 runs the critic at SP 3, raising its token "
                                            "budget to hold a sequence there; Trinity 0.6 on verl 0.8 or later"))])
@pytest.mark.usefixtures("_env_on")
def test_a_critic_sp_the_heads_refuse_is_refused_but_for_a_critic_of_another_model(cli: Cli, tmp_path: Path,
                                                                                   another: str, runs: str):
    # SP 3 divides the 6 trainer GPUs but not Qwen3-8B's heads; a critic of another model's heads are unknown
    text = _critic_config("ppo", "    critic: {ulysses_sequence_parallel_size: 3}\n").replace(
        "max_model_len: 32768}", f"max_model_len: 32768{another}}}")
    status, ((code, words),) = _critic_sp_lines(cli, tmp_path, text, "0.6")
    assert (status, code) == (0, "role-sp-differs")
    assert words.startswith(f"{CRITIC_SP} 3 is not trainer.ulysses_sequence_parallel_size 2: {runs}")


@pytest.mark.usefixtures("_env_on")
def test_under_05_a_critic_sp_the_gpus_refuse_gets_no_role_sp_line(cli: Cli, tmp_path: Path):
    # SP 4 does not divide the 6 trainer GPUs: 0.5 refuses the config (its line), and runs no critic at SP 4
    text = _critic_config("ppo", "    critic: {ulysses_sequence_parallel_size: 4}\n")
    status, lines = _critic_sp_lines(cli, tmp_path, text, "0.5")
    assert (status, [code for code, _ in lines]) == (1, ["sp-divides-gpus"])


@pytest.mark.usefixtures("_env_on")
def test_under_05_the_trainers_sp_given_to_the_critic_beside_the_actors_own_gets_no_critic_sp_line(
        cli: Cli, tmp_path: Path):
    # the actor's own SP 1 is the one 0.5 runs at; the critic takes the trainer's 2, which the actor's line says
    text = _critic_config("ppo", "    actor_rollout_ref:\n      actor: {ulysses_sequence_parallel_size: 1}\n")
    assert _critic_sp_lines(cli, tmp_path, text, "0.5")[1] == []


@pytest.mark.usefixtures("_env_on")
def test_under_05_a_critic_of_another_model_at_an_sp_the_actors_heads_refuse_gets_the_role_sp_line(
        cli: Cli, tmp_path: Path):
    text = _critic_config("ppo", "    critic: {ulysses_sequence_parallel_size: 3}\n").replace(
        "max_model_len: 32768}", "max_model_len: 32768, critic_model_path: /other/critic}")
    status, ((code, words),) = _critic_sp_lines(cli, tmp_path, text, "0.5")
    assert (status, code) == (0, "role-sp-differs") and words.startswith(
        f"{CRITIC_SP} 3 is not the actor's SP 2: Trinity 0.5 runs the critic at SP 3")


@pytest.mark.usefixtures("_env_on")
def test_a_critic_sp_above_a_single_trainer_gpu_is_said_refused(cli: Cli, tmp_path: Path):
    text = _critic_config("ppo", "    critic: {ulysses_sequence_parallel_size: 2}\n").replace(
        "gpu_per_node: 8", "gpu_per_node: 3").replace("  ulysses_sequence_parallel_size: 2\n", "")
    _, ((code, words),) = _critic_sp_lines(cli, tmp_path, text, "0.6")
    assert code == "role-sp-differs" and words.startswith(
        f"{CRITIC_SP} 2 is not trainer.ulysses_sequence_parallel_size 1: Trinity 0.6 on verl before 0.8 checks the "
        "critic's SP as the actor's and refuses the config (SP=2 does not divide 1 GPU")


@pytest.mark.usefixtures("_env_on")
@pytest.mark.parametrize(("algorithm", "ref_read"), [("grpo", True), ("asymre", False)])
def test_the_trainers_budget_is_said_read_by_the_ref_only_where_its_forward_runs(cli: Cli, tmp_path: Path,
                                                                                 algorithm: str, ref_read: bool):
    text = _critic_config(algorithm, "    actor_rollout_ref:\n      ref: {log_prob_use_dynamic_bsz: true}\n").replace(
        "trainer:\n", "trainer:\n  use_dynamic_bsz: false\n")
    config = tmp_path / "c.yaml"
    config.write_text(text)
    _, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--check", "--json", "--trinity-version", "0.5")
    (words,) = [words for words in json.loads(out)[0]["current"]["config_problems"]
                if words.startswith("trainer.use_dynamic_bsz")]
    said = "in every pass but the ref's (Trinity 0.5), whose own key turns dynamic batch sizes back on"
    assert (said in words) is ref_read


def test_a_dpo_config_of_a_padded_model_in_rows_gets_the_padded_models_note(tmp_path: Path, cli: Cli):
    path, written = tmp_path / "c.yaml", tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump(_dpo(2)), encoding="utf-8")
    status, _, err = cli("--from-config", str(path), "--model-config", str(INTERNLM2), *PLAN, "--write", str(written))
    assert status == 0 and (f"solve: note: {path} trains DPO with one padded sequence per micro-batch for "
                            "internlm2-7b, so what is made from it writes ") in err


@pytest.mark.usefixtures("_env_on")
def test_the_critics_budget_is_judged_at_the_sp_write_sets_not_its_own(cli: Cli, tmp_path: Path):
    # --write sets the critic's own SP 1 to the plan's 2, where its budget of 20000 holds a sequence (ceil(32768 / 2)
    # = 16384): kept; at SP 1 it would be raised to hold one
    text = _critic_config("ppo", "    critic: {ulysses_sequence_parallel_size: 1, ppo_max_token_len_per_gpu: 20000}\n")
    config, written = tmp_path / "c.yaml", tmp_path / "w.yaml"
    config.write_text(text)
    status, _, err = cli("--from-config", str(config), "--gpu", "h20", "--write", str(written))
    assert status == 0, err
    critic = yaml.safe_load(written.read_text())["trainer"]["trainer_config"]["critic"]
    assert (critic["ulysses_sequence_parallel_size"], critic["ppo_max_token_len_per_gpu"]) == (2, 20000)


def test_an_alias_before_its_anchor_in_path_order_is_the_one_written_out(cli: Cli, tmp_path: Path):
    # the critic's model.fsdp_config holds &f, first in the file; the actor's *f (a path sorting before it) is the
    # alias written out, the anchor staying where it is
    swapped = ("    critic:\n      model:\n        fsdp_config: &f {param_offload: true, optimizer_offload: true}\n"
               "    actor_rollout_ref:\n      actor:\n        fsdp_config: *f\n")
    _, _, written, notes = _run_alias(cli, tmp_path, ALIAS_BASE + swapped, "h20", "--critic", "offloaded")
    roles = written["trainer"]["trainer_config"]
    assert roles["actor_rollout_ref"]["actor"]["fsdp_config"] == {"param_offload": False, "optimizer_offload": False}
    assert roles["critic"]["model"]["fsdp_config"] == {"param_offload": True, "optimizer_offload": True,
                                                       "offload_policy": True}
    actor, critic = f"{ARR}.actor.fsdp_config", "trainer.trainer_config.critic.model.fsdp_config"
    assert notes == (f"solve: warning: {tmp_path / 'w.yaml'}: {actor} repeats {critic} (*f), but the plan leaves "
                     "other values in it than there: the patch writes it out as a mapping of its own\n")
