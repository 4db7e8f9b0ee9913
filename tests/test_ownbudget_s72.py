"""What verl reads of the batch keys, for a model of its own attention code (session 72; test_padbound_s71 set the
keys). With dynamic batch sizes off verl splits a batch by sequence count and reads no token budget, so no
``token-budget-below-length`` line judges one, for any model. A micro-batch size written null, where Trinity types it
``int``, is refused by every release, and so is the critic's forward left unset where each verl fails on one size or
the other (``micro-batch-unset-refused``, which makes ``--check`` exit 1). A deprecated size for the whole batch
replaces or clashes with the per-GPU one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import in_train_mode, mode_line
from test_padbound_s71 import ARR, EXAMPLE, INTERNLM2, Cli
from test_remotepad_s70 import packed

from solver.tables import load_catalog
from solver.tables.model_config import load_model_config
from solver.trinity import trinity_config_problems

WRITE = "set it to 1 (solver.trinity.patch_trinity_config does)"
NULL_05 = "Trinity 0.5's typed config refuses it as it loads the config (OmegaConf's int field)"
NULL_06 = ("Trinity 0.6 fails on it as the trainer starts: with verl before 0.8 its typed config refuses it, and verl "
           "0.8 or later, left with none, refuses dynamic batch sizes off")
ON_08 = ("Trinity 0.6 on verl 0.8 or later hands verl none, which then refuses dynamic batch sizes off as the trainer "
         "starts")
ONE = {"actor": {"ppo_micro_batch_size_per_gpu": 1}, "ref": {"log_prob_micro_batch_size_per_gpu": 1},
       "rollout": {"log_prob_micro_batch_size_per_gpu": 1}}
"""Each role's micro-batch size at 1, as the plan sets them."""
ENGINE = {"fsdp": {"micro_batch_size_per_gpu": 1, "infer_micro_batch_size_per_gpu": 1}}
"""The critic's engine's sizes at 1, as the plan sets them but for Trinity 0.5, which refuses the section (critic87)."""


def _config(algorithm: str, version: str | None, roles: dict[str, Any] | None = None,
            critic: dict[str, Any] | None = None, **trainer: Any) -> dict[str, Any]:
    """A config with remove padding and dynamic batch sizes off (the former at the keys `version` takes, the critic's
    own too), the roles' and the critic's keys `roles` and `critic`, and more `trainer` keys; in mode train where
    Trinity trains `algorithm` in that mode alone (DPO, SFT)."""
    arr = {"model": {"use_remove_padding": False}, **json.loads(json.dumps(roles or {}))}
    section = {"actor_rollout_ref": arr, "critic": {"model": {"use_remove_padding": False}, **(critic or {})}}
    top = {} if version == "0.5" else {"use_remove_padding": False}
    config = {"trainer": {**top, "use_dynamic_bsz": False, "trainer_config": section, **trainer},
              "algorithm": {"algorithm_type": algorithm}, "model": {"max_model_len": 4096}}
    return in_train_mode(config) if mode_line(algorithm) else config


def _problems(config: dict[str, Any], version: str | None, model: Any = None) -> list[tuple[str, str]]:
    """The problems of `config` for `model` (InternLM2-7B's) on 4 GPUs, but the critic's (the memory model's)."""
    found = trinity_config_problems(config, model or load_model_config(INTERNLM2), 4,
                                    version=version)  # type: ignore[arg-type]
    return [(problem.code.value, problem.words) for problem in found if problem.code.value != "critic-trained"]


@pytest.mark.parametrize(("version", "words"), [
    (None, f"{NULL_05}; {NULL_06}"), ("0.5", NULL_05), ("0.6", NULL_06)])
def test_a_null_size_trinity_types_int_is_refused_by_every_release(version: str | None, words: str):
    roles = {**ONE, "ref": {"log_prob_micro_batch_size_per_gpu": None}}
    assert _problems(_config("grpo", version, roles), version) == [
        ("micro-batch-unset-refused", f"{ARR}.ref.log_prob_micro_batch_size_per_gpu is null: {words}: {WRITE}")]


def test_a_null_rollout_size_is_as_unset():
    # Optional before verl 0.8, where Trinity gives it the actor's: only verl 0.8 or later is left without it
    roles = {**ONE, "rollout": {"log_prob_micro_batch_size_per_gpu": None}}
    assert _problems(_config("grpo", "0.6", roles), "0.6") == [
        ("micro-batch-unset", f"{ARR}.rollout.log_prob_micro_batch_size_per_gpu is null: {ON_08}: {WRITE}")]
    assert _problems(_config("grpo", "0.5", roles), "0.5") == []


def test_the_critics_forward_unset_is_refused_only_where_every_verl_fails():
    forward = "trainer.trainer_config.critic.forward_micro_batch_size_per_gpu is not set"
    sized = {"ppo_micro_batch_size_per_gpu": 1}
    # the other sizes set (the critic's engine's too): verl 0.8 or later gives the forward 1, so only verl before 0.8
    # fails
    line = ("micro-batch-unset", (
        f"{forward}: Trinity 0.6 on verl before 0.8 gives the critic's value forward none, by which verl cannot split "
        f"a batch, so it fails: {WRITE}"))
    assert _problems(_config("ppo", "0.6", ONE, {**sized, **ENGINE}), "0.6") == [line]
    # the critic's engine unsized: verl 0.8 or later fails the critic too (critic87)
    assert _problems(_config("ppo", "0.6", ONE, sized), "0.6")[0] == ("micro-batch-unset-refused", line[1].replace(
        ": set", "; on verl 0.8 or later the critic's engine has no micro-batch size to cut its passes by (below), so "
        "the config runs on no verl: set"))
    # Trinity 0.5 runs verl before 0.8 alone
    assert _problems(_config("ppo", "0.5", ONE, sized), "0.5") == [("micro-batch-unset-refused", (
        f"{forward}: Trinity 0.5 gives the critic's value forward none, by which verl cannot split a batch, so it "
        f"fails: {WRITE}"))]
    # the critic's own size unset too: verl 0.8 or later refuses that one
    assert _problems(_config("ppo", "0.6", ONE), "0.6")[-2] == ("micro-batch-unset-refused", (
        f"{forward}: Trinity 0.6 on verl before 0.8 gives the critic's value forward none, by which verl cannot split "
        "a batch, so it fails; verl 0.8 or later refuses the sizes above left without one, so the config runs on no "
        f"verl: {WRITE}"))


@pytest.mark.parametrize(("version", "verl"), [("0.5", "Trinity 0.5's verl"), (None, "verl before 0.8")])
def test_a_deprecated_size_for_the_whole_batch_is_flagged(version: str | None, verl: str):
    roles = {**ONE, "actor": {"ppo_micro_batch_size_per_gpu": 1, "ppo_micro_batch_size": 8}}
    critic = {"ppo_micro_batch_size_per_gpu": 1, "forward_micro_batch_size_per_gpu": 1, "ppo_micro_batch_size": 12,
              "forward_micro_batch_size": 12,  # without it the critic fails as it starts: test_batchcritic_s75
              **(ENGINE if version != "0.5" else {})}
    beside = "" if version == "0.5" else (", and verl 0.8 or later refuses it beside the per-GPU size as the trainer "
                                          "starts (a ValueError: both set)")

    def words(size: int) -> str:  # over the 4 data-parallel ranks (checks88: one sequence each is no such line)
        return (f"{size}: a deprecated size for the whole batch, which {verl} takes over the per-GPU size, {size} over "
                f"the 4 data-parallel ranks (trainer GPUs 4 / SP 1) = {size // 4} sequences per micro-batch, padded "
                f"to the longest, which the token budget does not bound{beside}: remove it, or set it to null, read as "
                "unset (solver.trinity.patch_trinity_config does)")

    assert _problems(_config("ppo", version, roles, critic), version) == [
        ("micro-batch-unbounded", f"{ARR}.actor.ppo_micro_batch_size is {words(8)}"),
        ("micro-batch-unbounded", f"trainer.trainer_config.critic.ppo_micro_batch_size is {words(12)}")]
    # a critic the algorithm does not train: its keys are not judged
    assert _problems(_config("grpo", version, roles, critic), version) == [
        ("micro-batch-unbounded", f"{ARR}.actor.ppo_micro_batch_size is {words(8)}")]


@pytest.mark.parametrize(("version", "lines"), [(None, 1), ("0.5", 1), ("0.6", 0)])
def test_the_critics_own_remove_padding_is_judged_where_trinity_0_5_reads_it(version: str | None, lines: int):
    critic = {"ppo_micro_batch_size_per_gpu": 1, "forward_micro_batch_size_per_gpu": 1,
              **(ENGINE if version != "0.5" else {})}
    config = _config("ppo", version, ONE, critic)
    del config["trainer"]["trainer_config"]["critic"]["model"]
    assert _problems(config, version) == [("remove-padding-on", (
        "trainer.trainer_config.critic.model.use_remove_padding is not set, so true (Trinity's default): "
        f"{packed(version)}: set it to false (on Trinity before 0.6 only: Trinity 0.6 sets it to "
        "trainer.use_remove_padding whatever the verl)"))] * lines  # the verl line 0.5 runs (smallslips30, s78)
    # a critic of another model, or none trained: not this model's attention
    assert _problems({**config, "model": {"model_path": "internlm2-7b", "critic_model_path": "other"}}, version) == []
    assert _problems(_config("grpo", version, ONE), version) == []


@pytest.mark.parametrize("model", ["8B", "internlm2-7b"])
def test_no_token_budget_is_judged_where_dynamic_batch_sizes_are_off(model: str):
    judged = load_catalog().model(model) if model == "8B" else load_model_config(INTERNLM2)
    low = _config("grpo", "0.6", ONE, max_token_len_per_gpu=1000)
    assert "token-budget-below-length" not in [code for code, _ in _problems(low, "0.6", judged)]
    # a role's own key on, where Trinity 0.5 reads it: the budgets are judged again
    low = _config("grpo", "0.5", {**ONE, "actor": {"use_dynamic_bsz": True, "ppo_micro_batch_size_per_gpu": 1}},
                  max_token_len_per_gpu=1000)
    assert next(words for code, words in _problems(low, "0.5", judged) if code == "token-budget-below-length") == (
        "trainer.max_token_len_per_gpu 1000 x SP 1 is below model.max_model_len 4096: Trinity 0.5 raises it to "
        "ceil(4096 / 1) = 4096 (Trinity 0.5.0 to its default, ceil(2 x 4096 / 1) = 8192)")


def test_check_exits_1_on_a_refused_size_and_0_on_one_only_some_verl_refuses(cli: Cli, tmp_path: Path):
    config = yaml.safe_load(EXAMPLE.read_text())
    config["trainer"].update(use_dynamic_bsz=False, use_remove_padding=False)
    config["trainer"]["trainer_config"]["actor_rollout_ref"].update(
        {"model": {"use_remove_padding": False}, **json.loads(json.dumps(ONE))})
    flags = ("--model-config", str(INTERNLM2), "--gpu", "h100", "--check")
    path = tmp_path / "trinity.yaml"
    path.write_text(yaml.safe_dump(config))
    status, out, err = cli("--from-config", str(path), *flags)
    assert (status, err, "refused:" in out, "but:" in out) == (0, "", False, False)
    config["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]["ppo_micro_batch_size_per_gpu"] = None
    path.write_text(yaml.safe_dump(config))
    status, out, err = cli("--from-config", str(path), *flags)
    assert (status, err) == (1, "")
    assert [line.split(":")[0].strip() for line in out.splitlines() if line.strip().startswith("refused:")] == [
        "refused"]
    # only some verl refuses the rollout's unset: a but: line, exit 0
    del config["trainer"]["trainer_config"]["actor_rollout_ref"]["rollout"]
    config["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]["ppo_micro_batch_size_per_gpu"] = 1
    path.write_text(yaml.safe_dump(config))
    status, out, err = cli("--from-config", str(path), *flags)
    assert (status, err, "refused:" in out, "but: trainer.trainer_config.actor_rollout_ref.rollout" in out) == (
        0, "", False, True)
