"""A startup's Trinity 0.6.0 configs for Qwen3-14B at 65536 tokens on two nodes of 8 H100s, 8 for the rollout
(persona71, s84).

(1) A PPO config whose actor, ref and critic ``fsdp_config`` are one anchor (``&offload``, offloaded): the plan keeps
the actor's Offload and the critic resident. ``--write`` set the critic's flags off through the alias, which turned the
actor's off at the anchor (the plan's values there were the config's already, so the alias was not written out): the
copy's own check found the actor without Offload (101.0 GiB a GPU, of 73.2). The apply block said one edit at the
actor's flags changes the critic's. The alias is now written out as a mapping of its own whenever the plan leaves other
values in it than at its anchor, the anchor's kept ones included (`solver.trinity.patch._set_and_kept`).

(2) A GRPO config whose rollout model repeats the length (``max_model_len: *len``) and sets no RoPE scaling: the
`rollout-length-refused` line offered ``VLLM_ALLOW_LONG_MAX_MODEL_LEN=1`` or a shorter rollout, not
``model.rope_scaling``'s YaRN, which the rollout takes too and ``--write`` sets; it now names it first.

(3) ``--ppo``, the flag a PPO user guesses, was answered "did you mean --dpo?": now ``--critic``.

(4) The actor's own ``ulysses_sequence_parallel_size`` beside the trainer's: its own token budget was judged at the
trainer's SP, so a budget that holds the length at the actor's SP got a line saying Trinity 0.6 on verl before 0.8
raises it; that verl raises it at the actor's own SP (``verl_legacy/verl_config.py:563`` in 0.6.0)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from test_criticbudget_s82 import BASE

from solver.query import ConfigProblemCode
from solver.tables import load_catalog
from solver.trinity import trinity_config_problems

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
    assert comments == [(f"# in c.yaml {CRITIC_FSDP} is an alias of {ACTOR}, but the plan leaves other values in it "
                         f"than there: write it out as a mapping of its own, as --write does (an edit at {ACTOR} "
                         "reaches it)")]
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


ROLLOUT_LENGTH = ("explorer.rollout_model.max_model_len 65536 is beyond Qwen3-14B's native context of 40960, which the "
                  "rollout's vLLM takes as its longest length: the rollout's vLLM refuses it unless {unless} is set "
                  "before Ray starts; {fix} (and check that the model handles this length), or lower "
                  "explorer.rollout_model.max_model_len to 40960")


def test_the_rollouts_own_length_past_native_names_models_yarn_which_it_takes() -> None:
    # (2) the rollout's max_model_len *len, no rope_scaling anywhere: the refusal offered the variable alone (vLLM past
    # its native length without YaRN) or a shorter rollout, though model.rope_scaling's YaRN, which the rollout takes
    # and --write sets, lifts it (the copy checks clean)
    mapping = {"model": {"model_path": "Qwen/Qwen3-14B", "max_model_len": 65536},
               "explorer": {"rollout_model": {"max_model_len": 65536}}}
    problems = trinity_config_problems(mapping, load_catalog().model("14B"), 8, version="0.6")
    yarn = "{rope_type: yarn, factor: 1.6, original_max_position_embeddings: 40960, rope_theta: 1000000}"
    assert [problem.words for problem in problems if problem.code is ConfigProblemCode.ROLLOUT_LENGTH_REFUSED] == [
        ROLLOUT_LENGTH.format(unless="a rope_scaling covers it or VLLM_ALLOW_LONG_MAX_MODEL_LEN=1",
                              fix=f"in model.rope_scaling, which the rollout takes too, set {yarn} (as "
                                  "solver.trinity.patch_trinity_config does), "
                                  "or set the variable")]
    mapping["model"]["rope_scaling"] = yaml.safe_load(yarn)
    assert not trinity_config_problems(mapping, load_catalog().model("14B"), 8, version="0.6")
    # a rollout longer than the model's length gets no such fix: a YaRN for the model's length does not cover it
    shorter = {**mapping, "model": {"model_path": "Qwen/Qwen3-14B", "max_model_len": 32768}}
    (words,) = (problem.words for problem in trinity_config_problems(shorter, load_catalog().model("14B"), 8,
                                                                     version="0.6"))
    assert words == ROLLOUT_LENGTH.format(unless="VLLM_ALLOW_LONG_MAX_MODEL_LEN=1", fix="set it")


@pytest.mark.parametrize("option", ["--ppo", "--use-critic", "--with-critic"])
def test_a_ppo_flag_is_pointed_to_critic_not_dpo(cli: Cli, option: str) -> None:
    # (3) --ppo was told "did you mean --dpo?", a typo away: DPO trains no critic; PPO's is --critic WHERE
    status, out, err = cli("--model", "14B", "--len", "64k", "--gpu", "h100", option)
    assert (status, out) == (2, "")
    assert err.splitlines()[-1] == f"solve: error: unrecognized arguments: {option} (did you mean --critic?)"


ACTOR_BUDGET = "trainer.trainer_config.actor_rollout_ref.actor.ppo_max_token_len_per_gpu"


@pytest.mark.parametrize("version", ["0.6", None])
def test_the_actors_own_budget_is_judged_at_the_actors_own_sp(version: str | None) -> None:
    # (4) the actor's own SP 8 and budget 16384 at 65536 tokens, the trainer's SP unset (1): the line said Trinity 0.6
    # on verl before 0.8 raises the budget to 65536 (16384 x SP 1), but that verl runs the actor at its own SP 8 and
    # raises the budget at it (verl_legacy/verl_config.py:563 in 0.6.0): 16384 x 8 holds the length; verl 0.8 or later
    # ignores the key
    def budget_lines(actor_sp: int) -> list[str]:
        actor = {"ulysses_sequence_parallel_size": actor_sp, "ppo_max_token_len_per_gpu": 16384}
        mapping = {"model": {"model_path": "Qwen/Qwen3-14B", "max_model_len": 65536},
                   "trainer": {"trainer_config": {"actor_rollout_ref": {"actor": actor}}}}
        model = load_catalog().model("14B")
        problems = trinity_config_problems(mapping, model, 8, version=version)  # type: ignore[arg-type]
        return [problem.words for problem in problems if problem.code is ConfigProblemCode.TOKEN_BUDGET_BELOW_LENGTH]

    assert budget_lines(8) == []
    # at the actor's SP 2 it holds 32768 tokens, not the length: said at that SP
    (line, *_) = budget_lines(2)
    assert line.startswith(f"{ACTOR_BUDGET} 16384 x SP 2 (the actor's) is below model.max_model_len 65536: ")
