"""Session 55's late review: lines on `--from-config` verdicts that the late changes left untrue."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import train_mode_text

REF = "trainer.trainer_config.actor_rollout_ref.ref"
CONFIG = ("model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 16384\n{lora}"
          "algorithm:\n  algorithm_type: {algorithm}\n"
          "cluster: {{node_num: 1, gpu_per_node: 8}}\nbuffer: {{train_batch_size: 64}}\n"
          "explorer: {{rollout_model: {{engine_num: 4}}}}\ntrainer:\n  ulysses_sequence_parallel_size: 2\n"
          "  trainer_config:\n    actor_rollout_ref:\n"
          "      ref: {{ulysses_sequence_parallel_size: {ref_sp}, log_prob_max_token_len_per_gpu: 40000}}\n")


def _problems(cli, tmp_path: Path, version: str, algorithm: str, ref_sp: int, lora: str = "") -> list[
        tuple[str, str]]:
    """(code, words) of each problem `--from-config` finds with Trinity `version` ("": none given) in the config, on
    A100 80GB."""
    path = tmp_path / "trinity.yaml"
    path.write_text(train_mode_text(algorithm, CONFIG.format(algorithm=algorithm, lora=lora, ref_sp=ref_sp)),
                    encoding="utf-8")
    release = ("--trinity-version", version) if version else ()
    status, out, _ = cli("--from-config", str(path), "--gpu", "a100-80g", *release, "--json")
    assert status == 0
    current = json.loads(out)[0]["current"]
    return list(zip(current["config_problem_codes"], current["config_problems"], strict=True))


@pytest.mark.parametrize(("version", "algorithm", "ref_sp", "lora"), [
    ("0.5", "sft", 4, ""), ("0.5", "sft", 2, ""), ("0.6", "sft", 2, ""), ("0.6", "dapo", 2, "")])
def test_a_ref_that_runs_no_forward_gets_no_line_on_its_own_budget(
        cli, tmp_path: Path, version: str, algorithm: str, ref_sp: int, lora: str):
    # The ref's log_prob_max_token_len_per_gpu (40000, above the verdict's 16384) is read where ref log-probs are
    # computed alone (fsdp_workers.py:971); with LoRA the actor's log-prob pass takes it (below).
    assert not [words for _, words in _problems(cli, tmp_path, version, algorithm, ref_sp, lora)
                if "log_prob_max_token_len_per_gpu" in words]


@pytest.mark.parametrize(("version", "ref_sp", "lora"), [
    ("0.5", 2, ""), ("0.6", 2, ""), ("0.5", 4, "  lora_configs: [{lora_rank: 32}]\n")])
def test_a_ref_that_runs_its_forward_keeps_the_line_on_its_own_budget(
        cli, tmp_path: Path, version: str, ref_sp: int, lora: str):
    # With LoRA the actor without its adapter gives the ref's log-probs at the ref's budget, at the actor's SP
    # (compute_log_prob's config_source, fsdp_workers.py:924 in 0.5.2), whatever the ref's own SP.
    roles = (" (on verl before 0.8 only: Trinity 0.6 on verl 0.8 or later ignores the roles' own token budgets and "
             "dynamic-batch keys, taking the trainer's)")
    assert (("token-budget-above-verdict", (
        f"{REF}.log_prob_max_token_len_per_gpu 40000 is above Trinity's default ceil(2 x 16384 / 2) = 16384, which the "
        f"tables measured: more tokens per GPU than the verdict assumes{roles if version == '0.6' else ''}"))
        in _problems(cli, tmp_path, version, "grpo", ref_sp, lora))


@pytest.mark.parametrize(("version", "algorithm", "lora", "reason"), [
    ("0.6", "sft", "", "algorithm_type sft uses no ref model"),
    ("", "dapo", "", "algorithm_type dapo uses no ref model"),
    ("0.6", "grpo", "  lora_configs: [{lora_rank: 32}]\n",
     "with LoRA (model.lora_configs) the actor, at its own SP, gives the ref's log-probs")])
def test_without_trinity_05_a_ref_that_runs_no_forward_is_not_said_to_run_at_its_sp(
        cli, tmp_path: Path, version: str, algorithm: str, lora: str, reason: str):
    # As Trinity 0.5's line says (test_refskip_s55), not "Trinity with verl before 0.8 runs that role at SP 4". (dapo
    # without a release: after the line that 0.5 has no dapo, unknown-algorithm, since session 82)
    problems = _problems(cli, tmp_path, version, algorithm, 4, lora)
    assert problems[1 if algorithm == "dapo" else 0] == ("role-sp-differs", (
        f"{REF}.ulysses_sequence_parallel_size 4 is not trainer.ulysses_sequence_parallel_size 2, but {reason}, so "
        "its forward never runs; the verdict is at SP 2: set them alike (--write does)"))
