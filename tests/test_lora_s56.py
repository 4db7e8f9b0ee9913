"""LoRA and the ref as the released code reads them (session 56): any ``lora_adapter_path``, an empty one too, turns
LoRA on (verl's ``is not None``); a ``model.lora_configs`` Trinity does not load refuses the config; and the ref's
token budget counts in the budget in effect only where the algorithm uses a ref model (with LoRA, the actor's
log-prob pass takes it). And a plan for Trinity 0.5 whose GPUs do not divide the train batch says that 0.5.0 and 0.5.1
refuse it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import fragment_comment, train_mode_text
from test_splitnote_s80 import REFUSED_LINE

import solver
from solver.trinity import ROLE_KEYS_IGNORED

REF_BUDGET = "trainer.trainer_config.actor_rollout_ref.ref.log_prob_max_token_len_per_gpu"
CONFIG = ("model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: {length}\n{lora}"
          "algorithm:\n  algorithm_type: {algorithm}\n"
          "cluster: {{node_num: 1, gpu_per_node: 8}}\nbuffer: {{train_batch_size: 64}}\n"
          "explorer: {{rollout_model: {{engine_num: 4}}}}\ntrainer:\n{trainer}"
          "  trainer_config:\n    actor_rollout_ref:\n{roles}")
REF_SP_2 = "      ref: {ulysses_sequence_parallel_size: 2}\n"
"""The ref at SP 2 above the trainer's (the actor's) 1: refused under Trinity 0.5 unless no ref forward runs."""


def _current(cli, tmp_path: Path, *, algorithm: str = "grpo", lora: str = "", trainer: str = "",
             roles: str = REF_SP_2, length: int = 16384, release: tuple[str, ...] = ("--trinity-version", "0.5")
             ) -> dict[str, Any]:
    """`--from-config`'s JSON verdict on the config with Trinity 0.5 (or as `release` names it), on H100 80GB."""
    path = tmp_path / "trinity.yaml"
    path.write_text(train_mode_text(algorithm, CONFIG.format(algorithm=algorithm, lora=lora, trainer=trainer,
                                                             roles=roles, length=length)),
                    encoding="utf-8")
    status, out, _ = cli("--from-config", str(path), "--gpu", "h100", *release, "--json")
    assert status == 0
    return json.loads(out)[0]["current"]


@pytest.mark.parametrize(("path", "lora"), [("''", True), ('""', True), ("adapters/x", True), ("null", False)])
def test_any_adapter_path_turns_lora_on_an_empty_one_too(cli, tmp_path: Path, path: str, lora: bool):
    # Trinity 0.5's worker (verl's alike): _is_lora = lora_adapter_path is not None or lora_rank > 0. An empty one then
    # fails to load (test_lora2_s56), which refuses the config on its own.
    current = _current(cli, tmp_path, roles=REF_SP_2 + f"      model: {{lora_adapter_path: {path}}}\n")
    empty = ["empty-adapter-path-refused"] if path in ("''", '""') else []
    assert (current["refused"], current["config_problem_codes"]) == (
        (bool(empty), ["role-sp-differs", "lora-counted-as-full", *empty]) if lora
        else (True, ["ref-sp-ungrouped-refused"]))
    if lora:
        assert ("with LoRA (trainer.trainer_config.actor_rollout_ref.model.lora_adapter_path) the actor, at its own "
                "SP, gives the ref's log-probs, so it never runs") in current["config_problems"][0]


@pytest.mark.parametrize(("configs", "why"), [
    ("[]", "is an empty list: Trinity takes its first LoRA config (lora_configs[0]) and so fails to load the config"),
    ("{lora_rank: 32}", "is not a list: Trinity's typed config refuses it when it loads the config"),
    ("[{lora_rank: 8}, {lora_rank: 16}]",
     'holds 2 LoRA configs: Trinity refuses more than one ("Only one lora adapter is supported")')])
def test_lora_configs_trinity_does_not_load_refuse_the_config(cli, tmp_path: Path, configs: str, why: str):
    current = _current(cli, tmp_path, lora=f"  lora_configs: {configs}\n", roles="      model: {}\n")
    assert current["refused"] is True
    # two LoRA configs turn LoRA on, which the plans count as full fine-tuning, and say so (refusedlora, s80)
    assert list(zip(current["config_problem_codes"], current["config_problems"], strict=True)) == [(
        "lora-configs-refused", f"model.lora_configs {why}: give it one LoRA config, or drop it for no LoRA"),
        *([("lora-counted-as-full", REFUSED_LINE)] if configs.startswith("[{") else [])]


def test_one_lora_config_is_no_refusal_and_the_refusal_is_a_refused_line(cli, tmp_path: Path):
    # One LoRA config is said only as the tables' full fine-tuning, which the verdict counts (test_lorafull_s67).
    current = _current(cli, tmp_path, lora="  lora_configs: [{lora_rank: 32}]\n", roles="      model: {}\n")
    assert (current["refused"], current["config_problem_codes"]) == (False, ["lora-counted-as-full"])
    path = tmp_path / "trinity.yaml"
    path.write_text(CONFIG.format(algorithm="grpo", lora="  lora_configs: []\n", trainer="", roles="      model: {}\n",
                                  length=16384), encoding="utf-8")
    status, out, _ = cli("--from-config", str(path), "--gpu", "h100", "--check")
    assert status == 1
    assert "refused: model.lora_configs is an empty list" in out


BUDGETS = "  max_token_len_per_gpu: 40000\n"
"""The trainer's budget lowered below the default ceil(2 x 32768 / 1) = 65536, holding a sequence at SP 1."""


@pytest.mark.parametrize(("algorithm", "lora", "judged"), [
    ("sft", "", 40000), ("grpo", "", 50000), ("grpo", "  lora_configs: [{lora_rank: 32}]\n", 50000)])
def test_the_budget_in_effect_counts_the_refs_only_where_the_algorithm_uses_a_ref(
        cli, tmp_path: Path, algorithm: str, lora: str, judged: int):
    # The ref's own 50000 is the most any role takes, but sft computes no ref log-probs, so nothing reads it; with
    # LoRA the actor without its adapter takes it (compute_log_prob's config_source, fsdp_workers.py:924 in 0.5.2).
    # No release named: 0.5 counts every budget below the default as 0.5.0 raises it, to the default (raise05).
    current = _current(cli, tmp_path, algorithm=algorithm, lora=lora, trainer=BUDGETS, length=32768,
                       roles="      ref: {log_prob_max_token_len_per_gpu: 50000}\n", release=())
    assert current["max_token_len_per_gpu"] == judged
    assert current["config_problems"][1 if lora else 0] == (  # after LoRA's line (test_lorafull_s67)
        f"the token budget in effect, {judged} (the most any role takes), is below Trinity's default ceil(2 x 32768 "
        f"/ 1) = 65536, which the tables measured: the verdict is at {judged} tokens per GPU (each step takes more "
        "micro-batches); Trinity 0.5.0 raises it back to the default: use 0.5.1 or later")


def test_with_lora_the_refs_own_budget_is_compared_with_the_verdicts(cli, tmp_path: Path):
    # The actor's log-prob pass gives the ref's log-probs at the ref's 35000 tokens per GPU (at the actor's SP); no
    # release named, as above.
    current = _current(cli, tmp_path, lora="  lora_configs: [{lora_rank: 32}]\n", trainer=BUDGETS, length=32768,
                       roles="      ref: {log_prob_max_token_len_per_gpu: 35000}\n", release=())
    assert list(zip(current["config_problem_codes"], current["config_problems"], strict=True))[2:] == [(
        "token-budget-below-verdict", (f"{REF_BUDGET} 35000 is below the verdict's budget: fewer tokens per GPU than "
                                       "the verdict assumes (so it is cautious; each step takes more micro-batches) "
                                       f"({ROLE_KEYS_IGNORED})"))]


BATCH_75 = ("--train-batch-size 75 does not divide by the 6 trainer GPUs, which Trinity 0.5.0 and 0.5.1 refuse "
            "(trinity/common/config_validator.py:860 in 0.5.0, :859 in 0.5.1); 0.5.2 takes it, as it needs only the 3 "
            "data-parallel ranks (6 GPUs / SP=2) to divide it (trinity/trainer/verl/verl_config.py:424): for 0.5.0 or "
            "0.5.1, make it a multiple of 6")
"""The caution on Env + SP=2 on 6 GPUs for a train batch of 75 with Trinity 0.5."""


@pytest.mark.parametrize(("version", "batch", "cautioned"), [("0.5", "75", True), ("0.6", "75", False),
                                                             ("0.5", "72", False)])
def test_a_05_plan_whose_gpus_do_not_divide_the_batch_says_that_050_and_051_refuse_it(
        cli, tmp_path: Path, version: str, batch: str, cautioned: bool):
    # The planner keeps to 0.5.2's rule (3 ranks divide 75), so the plan stands; 0.5.0 and 0.5.1 refuse 75 on 6 GPUs.
    out_file = tmp_path / "plan.yaml"
    flags = ("--model", "8B", "--len", "32768", "--gpus", "6", "--exact", "--gpu", "h100", "--train-batch-size", batch,
             "--out", str(out_file), "--trinity-version", version)
    status, out, _ = cli(*flags, "--json")
    [plan] = json.loads(out)[0]["plans"]
    assert (status, plan["gpus"], plan["sp"]) == (0, 6, 2)
    assert (plan["caution_codes"], plan["cautions"]) == ((["batch-divides-trainer-gpus"], [BATCH_75]) if cautioned
                                                         else ([], []))
    status, out, _ = cli(*flags)
    assert ("caution        --train-batch-size 75 does not divide by the 6 trainer GPUs" in out) is cautioned
    assert (fragment_comment(f"caution: {BATCH_75}") in out_file.read_text(encoding="utf-8")) is cautioned


def test_make_query_refuses_a_trinity_version_it_does_not_know():
    with pytest.raises(solver.QueryError, match=(r"^trinity_version takes 0\.5, 0\.5\.0, 0\.5\.1, 0\.5\.2, 0\.6 or "
                                                 r"0\.6\.0 \(or a tag of one, v0\.5\.2\), got '0\.7' \(rft-solver "
                                                 r"knows the rules of these releases alone\)$")):
        solver.make_query(solver.load_catalog(), model="8B", max_model_len=4096, trinity_version="0.7")
