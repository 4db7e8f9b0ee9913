"""A researcher checking and patching their own Trinity configs (persona78, s85): Qwen3-14B DPO with LoRA on one
node of 8 H100s. The summary's `apply` row offers `--write FILE` only where --write takes the options asked with
(not with `--gpus`, `--node-gpus` or `--train-batch-size` at odds with the config, nor `--minimize gpus`, which
--write refuses); under `--minimize gpus` the verdict on a config's Env-off settings does not say the plan on fewer
GPUs ranks first for Env or counts fewer micro-batches (it ranks first for its GPUs; per-GPU budgets over 2 and 8
GPUs do not compare); --write's warning on an anchored length that a role's budget repeats, in a mapping `<<:`
merges into others, says the merged places take the patched value (it said they stayed at the old one); the YaRN
note of a run without a rollout says the key reaches no model there on Trinity 0.6 with verl 0.8 or later; a
release given to `--trinity` (or by `--release`) is told --trinity-version, not --emit trinity; Trinity's and verl's
key names (`--max-token-len-per-gpu`, `--param-offload`) are told the option that gives them."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

DPO_14B = """\
# DPO on Qwen3-14B with LoRA; one node of 8 x H100
mode: train
algorithm: {algorithm_type: dpo}
model:
  model_path: Qwen/Qwen3-14B
  max_prompt_tokens: 4096
  max_response_tokens: 28672
  max_model_len: ${oc.env:MAX_LEN,32768}
  lora_configs: [{name: dpo, lora_rank: 32, lora_alpha: 64}]
cluster: {node_num: 1, gpu_per_node: 8}
buffer: {train_batch_size: 64, trainer_input: {experience_buffer: {path: /data/dpo.jsonl}}}
trainer:
  trainer_strategy: fsdp2
  ulysses_sequence_parallel_size: 4
  trainer_config:
    actor_rollout_ref:
      actor:
        ppo_micro_batch_size_per_gpu: 1
        fsdp_config: &off {param_offload: true, optimizer_offload: true, offload_policy: true}
      ref: {fsdp_config: *off}
"""
"""persona78's DPO config: Offload + SP=4 on its 8 trainer GPUs, which trains by estimate without Env."""

WRITE_OFFERED = "--write FILE writes a copy of dpo14b.yaml with the plan applied"


@pytest.fixture
def dpo_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
    monkeypatch.delenv("MAX_LEN", raising=False)
    config = tmp_path / "dpo14b.yaml"
    config.write_text(DPO_14B, encoding="utf-8")
    return config


def _apply_row(out: str) -> str:
    return next(line for line in out.splitlines() if line.startswith("apply "))


@pytest.mark.parametrize(("options", "gpus"), [(("--gpus", "16"), 16), (("--minimize", "gpus"), 2),
                                               (("--node-gpus", "4"), 8), (("--train-batch-size", "32"), 8),
                                               (("--total-gpus", "16", "--rollout-gpus", "0"), 16)])
def test_apply_offers_no_write_that_would_be_refused(cli, dpo_config: Path, options: tuple[str, ...], gpus: int):
    # On other GPUs than the config's 8 (s87), the row says to set its cluster instead.
    status, out, _ = cli("--from-config", str(dpo_config), "--gpu", "h100", *options)
    other = "" if gpus == 8 else (f"; dpo14b.yaml's cluster gives the trainer 8 GPUs, where these lines would run: "
                                  f"set it to give {gpus}, this plan's (cluster.node_num x cluster.gpu_per_node, less "
                                  "the rollout's GPUs)")
    row = " ".join(out[out.index("\napply ") + 1:].split("\n#")[0].split())
    assert status == 0 and row == f"apply the lines below (dotted keys; --emit trinity writes YAML){other}"
    refused, _, err = cli("--from-config", str(dpo_config), "--gpu", "h100", *options,
                          "--write", str(dpo_config.with_name("patched.yaml")))
    assert refused == 2 and err.startswith("solve: error: ") and "--write keeps" in err
    assert not dpo_config.with_name("patched.yaml").exists()


@pytest.mark.parametrize("options", [(), ("--gpus", "8"), ("--node-gpus", "8"), ("--train-batch-size", "64")])
def test_apply_offers_write_where_it_takes_the_options(cli, dpo_config: Path, options: tuple[str, ...]):
    status, out, _ = cli("--from-config", str(dpo_config), "--gpu", "h100", *options)
    assert status == 0 and _apply_row(out).endswith(f"; {WRITE_OFFERED}")
    written = dpo_config.with_name("patched.yaml")
    assert cli("--from-config", str(dpo_config), "--gpu", "h100", *options, "--write", str(written))[0] == 0
    assert written.exists()


def test_minimize_gpus_verdict_does_not_blame_env_or_micro_batches(cli, dpo_config: Path):
    status, out, _ = cli("--from-config", str(dpo_config), "--gpu", "h100", "--minimize", "gpus")
    verdict = " ".join(out.split("\n  but: ")[0].split())
    assert status == 0 and "on 2 of 8 GPUs (6 unused)" in out
    assert verdict.endswith("8 GPUs (calibrated up to 6)).")
    assert "did not rank" not in out and "micro-batches, which the cost" not in verdict


GRPO_ANCHORED = """\
algorithm: {algorithm_type: grpo, repeat_times: 8}
model:
  model_path: Qwen/Qwen3-14B
  max_prompt_tokens: 2048
  max_response_tokens: 63488
  max_model_len: &len 65536
  rope_scaling: {rope_type: yarn, factor: 1.6, original_max_position_embeddings: 40960, rope_theta: 1000000}
cluster: {node_num: 2, gpu_per_node: 8}
buffer: {batch_size: 32}
explorer: {rollout_model: {engine_num: 4, tensor_parallel_size: 2}}
trainer:
  trainer_strategy: fsdp2
  ulysses_sequence_parallel_size: 4
  max_token_len_per_gpu: *len
  trainer_config:
    actor_rollout_ref:
      actor: &role
        ppo_max_token_len_per_gpu: *len
      ref:
        <<: *role
    critic:
      <<: *role
"""
"""persona78's GRPO config: the length's anchor repeated as the token budgets, the actor's mapping merged into the
ref's and the (left over) critic's."""


def test_write_says_a_merged_alias_of_the_length_follows_the_mapping_it_merges(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "1")
    config, written = tmp_path / "grpo.yaml", tmp_path / "patched.yaml"
    config.write_text(GRPO_ANCHORED, encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "h100", "--trinity-version", "0.6.0",
                         "--write", str(written))
    roles = "trainer.trainer_config.actor_rollout_ref"
    assert status == 0 and (
        f"solve: warning: {written}: model.max_model_len is the anchor &len, which other keys repeat (*len): the "
        f"patch sets trainer.max_token_len_per_gpu to 16384 and {roles}.actor.ppo_max_token_len_per_gpu to 16384 and "
        f"{roles}.ref.ppo_max_token_len_per_gpu to 16384 and trainer.trainer_config.critic.ppo_max_token_len_per_gpu "
        "to 16384, written out (no longer *len), and leaves it at 65536\n") in err
    patched = yaml.safe_load(written.read_text(encoding="utf-8"))
    sections = patched["trainer"]["trainer_config"]
    assert patched["model"]["max_model_len"] == 65536 and [
        sections["actor_rollout_ref"]["ref"]["ppo_max_token_len_per_gpu"],
        sections["critic"]["ppo_max_token_len_per_gpu"]] == [16384, 16384]


def test_yarn_note_of_a_run_without_a_rollout_says_it_reaches_no_model(cli, dpo_config: Path):
    # DPO at 98304 tokens: no rollout (vLLM) takes model.rope_scaling, and on Trinity 0.6 with verl 0.8 or later
    # neither does the trainer; the note said it reached the rollout.
    longer = dpo_config.read_text(encoding="utf-8").replace("28672", "94208").replace("${oc.env:MAX_LEN,32768}",
                                                                                      "98304")
    dpo_config.write_text(longer, encoding="utf-8")
    written = dpo_config.with_name("patched.yaml")
    status, _, err = cli("--from-config", str(dpo_config), "--gpu", "h100", "--write", str(written))
    assert status == 0 and (
        f"solve: note: {written}: model.rope_scaling reaches no model of this run (it has no rollout) on Trinity 0.6 "
        "with verl 0.8 or later: the trainer's model reads the checkpoint's config.json alone: to train with YaRN, add "
        "the same rope_scaling there, the way Qwen's model cards add theirs (memory is the same either way)\n") in err
    assert "reaches the rollout" not in err
    status, out, _ = cli("--model", "14B", "--len", "96k", "--gpu", "h100", "--dpo", "--emit", "trinity")
    comment = " ".join(line.removeprefix("# ") for line in out.splitlines() if line.startswith("# "))
    assert status == 0 and "# model.rope_scaling reaches no model of this run (it has no rollout) on Trinity 0.6" in out
    assert "reaches the rollout" not in comment
    status, out, _ = cli("--model", "14B", "--len", "96k", "--gpu", "h100", "--rollout-gpus", "2", "--emit", "trinity")
    assert status == 0 and "# model.rope_scaling reaches the rollout (vLLM), but on Trinity 0.6 with verl 0.8" in out


@pytest.mark.parametrize("argv", [("--trinity", "0.6"), ("--trinity=v0.5.1",), ("--release", "0.6"),
                                  ("--trinity-release", "0.5.1")])
def test_a_release_given_by_another_name_is_told_trinity_version(cli, argv: tuple[str, ...]):
    status, out, err = cli("--model", "14B", "--len", "32k", "--gpu", "h100", *argv)
    assert (status, out) == (2, "") and err.endswith(
        f"solve: error: unrecognized arguments: {' '.join(argv)} (did you mean --trinity-version?)\n")
    status, _, err = cli("memory", "--model", "14B", "--len", "32k", "--gpu", "h100", "--gpus", "8", *argv)
    assert status == 2 and err.endswith("(did you mean --trinity-version?)\n")


def test_trinity_alone_is_still_told_emit_trinity(cli):
    status, _, err = cli("--model", "14B", "--len", "32k", "--gpu", "h100", "--trinity", "--json")
    assert status == 2 and err.endswith(
        "solve: error: unrecognized arguments: --trinity (did you mean --emit trinity?)\n")


@pytest.mark.parametrize(("argv", "meant"), [
    (("--max-token-len-per-gpu", "16384"), "--token-budget"), (("--max_token_len_per_gpu=8192",), "--token-budget"),
    (("--param-offload",), "--offload"), (("--offload_policy",), "--offload"),
    (("--expandable-segments",), "--env")])
def test_trinity_and_verl_key_names_are_told_the_option(cli, argv: tuple[str, ...], meant: str):
    status, _, err = cli("--model", "14B", "--len", "32k", "--gpu", "h100", *argv)
    assert status == 2 and err.endswith(
        f"solve: error: unrecognized arguments: {' '.join(argv)} (did you mean {meant}?)\n")
