"""Trinity 0.5 with a ref at a higher SP than the actor's (2 or more) where the ref runs no forward (an algorithm that
uses no ref model, LoRA): the ref's SP line says its forward never runs, and no token-budget line speaks of what the
ref's forward would take per GPU (session 55)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import train_mode_text

REF_SP = "trainer.trainer_config.actor_rollout_ref.ref.ulysses_sequence_parallel_size"
CONFIG = ("model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 16384\n{lora}"
          "algorithm:\n  algorithm_type: {algorithm}\n"
          "cluster: {{node_num: 1, gpu_per_node: 8}}\nbuffer: {{train_batch_size: 64}}\n"
          "explorer: {{rollout_model: {{engine_num: 4}}}}\ntrainer:\n  ulysses_sequence_parallel_size: 2\n"
          "  trainer_config:\n    actor_rollout_ref:\n      ref: {{ulysses_sequence_parallel_size: 4}}\n")


def _problems(cli, tmp_path: Path, algorithm: str, lora: str = "", roles: str = "") -> list[tuple[str, str]]:
    """(code, words) of each problem `--from-config` finds in the config with Trinity 0.5, on A100 80GB; `lora` adds
    lines to ``model``, `roles` to ``actor_rollout_ref``."""
    path = tmp_path / "trinity.yaml"
    path.write_text(train_mode_text(algorithm, CONFIG.format(algorithm=algorithm, lora=lora) + roles), encoding="utf-8")
    status, out, _ = cli("--from-config", str(path), "--gpu", "a100-80g", "--trinity-version", "0.5", "--json")
    assert status == 0
    current = json.loads(out)[0]["current"]
    return list(zip(current["config_problem_codes"], current["config_problems"], strict=True))


@pytest.mark.parametrize(("algorithm", "lora", "reason"), [
    ("sft", "", "algorithm_type sft uses no ref model"),
    ("grpo", "  lora_configs: [{lora_rank: 32}]\n",
     "with LoRA (model.lora_configs) the actor, at its own SP, gives the ref's log-probs")])
def test_a_ref_that_runs_no_forward_gets_no_line_on_its_tokens_per_gpu(
        cli, tmp_path: Path, algorithm: str, lora: str, reason: str):
    problems = _problems(cli, tmp_path, algorithm, lora)
    assert problems[0] == ("role-sp-differs", (
        f"{REF_SP} 4 is not the actor's 2, but {reason}, so its forward never runs; the verdict is at SP 2: set them "
        "alike (--write does)"))
    assert [code for code, _ in problems[1:]] == (["lora-counted-as-full"] if lora else [])  # test_lorafull_s67


@pytest.mark.parametrize(("lora", "roles"), [
    ("", ""), ("", "      model: {lora_rank: -1}\n"), ("", "      model: {lora_rank: 0, lora_adapter_path: null}\n"),
    ("", "      model: {lora_rank: true}\n")])
def test_a_ref_whose_forward_runs_keeps_both_lines(cli, tmp_path: Path, lora: str, roles: str):
    # No LoRA config, a rank not above 0, a null adapter path and a rank that is no number (true, which Python's int()
    # would read as 1): verl runs no LoRA (an empty path is LoRA, and an empty list of LoRA configs is refused:
    # test_lora_s56). Trinity 0.5's typed config refuses the rank true itself (test_reflora_s57): a third line says so.
    refused = [("lora-rank-not-a-number-refused", (
        "trainer.trainer_config.actor_rollout_ref.model.lora_rank is true, not a whole number: Trinity's typed config "
        "(OmegaConf's int field) refuses it, with Trinity 0.5: write the rank as a whole number"))]
    assert _problems(cli, tmp_path, "grpo", lora, roles) == [
        ("role-sp-differs", (f"{REF_SP} 4 is not the actor's 2: Trinity 0.5 runs that role's forward at SP 4 within "
                             "the actor's SP groups; the verdict is at SP 2: set them alike (--write does)")),
        *(refused if "true" in roles else []),
        ("token-budget-above-verdict", (
            "the unset trainer.max_token_len_per_gpu, which Trinity fills with 16384 and the ref takes, at the ref's "
            "SP "
            "4: each of the ref's micro-batches holds 16384 x 4 tokens, but Trinity 0.5 runs its forward in the "
            "actor's SP groups of 2 GPUs, so each GPU takes 16384 x 4 / 2 = 32768 tokens there, more than the "
            "verdict's 16384: set the ref's SP to the actor's (--write does)"))]


@pytest.mark.parametrize("roles", ["      model: {lora_rank: -1}\n", "      model: {lora_rank: 8}\n"])
def test_at_an_actor_sp_of_1_only_a_rank_above_0_keeps_the_ref_from_failing(cli, tmp_path: Path, roles: str):
    path = tmp_path / "trinity.yaml"
    path.write_text(CONFIG.format(algorithm="grpo", lora="").replace("ulysses_sequence_parallel_size: 2", (
        "ulysses_sequence_parallel_size: 1")) + roles, encoding="utf-8")
    _, out, _ = cli("--from-config", str(path), "--gpu", "a100-80g", "--trinity-version", "0.5", "--json")
    current = json.loads(out)[0]["current"]
    ranked = "8" in roles  # vanilla does not train at 16384 tokens on 4 A100s either way: --check exits 1 for both
    assert (current["refused"], current["config_problem_codes"][0]) == (  # LoRA's line after it: test_lorafull_s67
        (False, "role-sp-differs") if ranked else (True, "ref-sp-ungrouped-refused"))


@pytest.mark.parametrize(("rank", "lora"), [('"0"', False), ('" 8"', True), ('"-1"', False), ('"eight"', False)])
def test_a_quoted_rank_is_read_as_the_number_the_typed_config_reads(cli, tmp_path: Path, rank: str, lora: bool):
    path = tmp_path / "trinity.yaml"
    path.write_text(CONFIG.format(algorithm="grpo", lora="").replace("ulysses_sequence_parallel_size: 2", (
        "ulysses_sequence_parallel_size: 1")) + f"      model: {{lora_rank: {rank}}}\n", encoding="utf-8")
    _, out, _ = cli("--from-config", str(path), "--gpu", "a100-80g", "--trinity-version", "0.5", "--json")
    current = json.loads(out)[0]["current"]
    assert (current["refused"], "ref-sp-ungrouped-refused" in current["config_problem_codes"]) == (not lora, not lora)


def test_a_ref_that_runs_no_forward_leaves_the_actors_own_sp_line_as_it_is(cli, tmp_path: Path):
    # Trinity 0.6 with an algorithm that uses no ref: the actor's own SP, not the trainer's, is said as any role's; the
    # words on a forward that never runs are the ref's alone.
    path = tmp_path / "trinity.yaml"
    path.write_text(train_mode_text("sft", CONFIG.format(algorithm="sft", lora="").replace(
        "ref: {ulysses_sequence_parallel_size: 4}", "actor: {ulysses_sequence_parallel_size: 4}")), encoding="utf-8")
    status, out, _ = cli("--from-config", str(path), "--gpu", "a100-80g", "--trinity-version", "0.6", "--json")
    current = json.loads(out)[0]["current"]
    assert status == 0 and list(zip(current["config_problem_codes"], current["config_problems"], strict=True)) == [
        ("role-sp-differs", (
            "trainer.trainer_config.actor_rollout_ref.actor.ulysses_sequence_parallel_size 4 is not "
            "trainer.ulysses_sequence_parallel_size 2: Trinity 0.6 on verl before 0.8 runs that role at SP 4 (with the "
            "trainer's token budget), Trinity 0.6 on verl 0.8 or later at SP 2; the verdict is at SP 2: set them alike "
            "(--write does)"))]
