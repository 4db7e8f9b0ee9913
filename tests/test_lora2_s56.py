"""Trinity 0.5's train batch caution on every path, and LoRA as the released code reads it (session 56, second
pass): a plan of `solver.plan(trinity_version=...)`, a fragment of `solver.trinity_config` and `solve cluster
--emit-dir --trinity-version 0.5` (`placement_configs`) say that Trinity 0.5.0 and 0.5.1 refuse a train batch the
trainer GPUs do not divide."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import fragment_comment

import solver
from solver.results import CautionCode

FLEET = ("pools:\n  - {name: h100, gpu: H100-80GB, nodes: 1, gpus_per_node: 6}\n"
         "jobs:\n  - {name: big, model: 8B, max_model_len: 32768, rollout_gpus: 0, train_batch_size: BATCH}\n")
"""One job of Qwen3-8B at 32768 that takes a whole 6-GPU node at Env + SP=2 (3 data-parallel ranks)."""


def _batch_words(source: str) -> str:
    """The caution on a train batch of 75 over Env + SP=2 on 6 GPUs, its batch named as `source` says."""
    return (f"{source} does not divide by the 6 trainer GPUs, which Trinity 0.5.0 and 0.5.1 refuse "
            "(trinity/common/config_validator.py:860 in 0.5.0, :859 in 0.5.1); 0.5.2 takes it, as it needs only the 3 "
            "data-parallel ranks (6 GPUs / SP=2) to divide it (trinity/trainer/verl/verl_config.py:424): for 0.5.0 or "
            "0.5.1, make it a multiple of 6")


JOB_75 = _batch_words("a train batch of 75 (the job's train_batch_size)")
FLAG_75 = _batch_words("--train-batch-size 75")
KEYWORD_75 = _batch_words("a train batch of 75 (train_batch_size)")
ANSWER_75 = _batch_words("a train batch of 75 (the answer's train_batch_size)")


@pytest.mark.parametrize(("version", "batch", "cautioned"), [("0.5", 75, True), ("0.6", 75, False),
                                                             ("0.5", 72, False)])
def test_cluster_fragments_for_05_say_that_050_and_051_refuse_a_batch_the_gpus_do_not_divide(
        cli, tmp_path: Path, version: str, batch: int, cautioned: bool):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET.replace("BATCH", str(batch)), encoding="utf-8")
    out = tmp_path / "out"
    status, _, _ = cli("cluster", str(fleet), "--emit-dir", str(out), "--trinity-version", version)
    text = (out / "big.yaml").read_text(encoding="utf-8")
    assert status == 0
    assert "# plan: Env + SP=2 on 6 H100-80GB trainer GPUs, max_model_len 32768\n" in text
    assert text.count("# caution: ") == cautioned
    assert (fragment_comment(f"caution: {JOB_75}") in text) is cautioned


def test_placement_configs_says_it_for_05_only():
    fleet = solver.Fleet.model_validate({"pools": [{"name": "h100", "gpu": "H100-80GB", "nodes": 1,
                                                    "gpus_per_node": 6}],
                                         "jobs": [{"name": "big", "model": "Qwen3-8B", "max_model_len": 32768,
                                                   "rollout_gpus": 0, "train_batch_size": 75}]})
    result = solver.place(fleet)
    assert fragment_comment(f"caution: {JOB_75}") in solver.placement_configs(result, fleet, version="0.5")["big"]
    assert "# caution: " not in solver.placement_configs(result, fleet)["big"]


def test_plan_takes_the_trinity_version_and_its_fragment_says_the_caution_once():
    asked = {"gpu": "h100", "max_model_len": 32768, "budget_gpus": 6, "exact": True, "train_batch_size": 75}
    (answer,) = solver.plan("8B", trinity_version="0.5", **asked)
    assert (answer.best.gpus, answer.best.sp) == (6, 2)
    # The words name the batch as the caller gave it: plan's keyword, not the command's --train-batch-size.
    assert (answer.best.caution_codes, answer.best.cautions) == ((CautionCode.BATCH_DIVIDES_TRAINER_GPUS,),
                                                                 (KEYWORD_75,))
    (unnamed,) = solver.plan("8B", **asked)
    assert unnamed.best.cautions == ()
    # A fragment for 0.5 says it whether or not the answer was planned for 0.5 (then as the answer's field, whatever
    # gave it: a keyword, a flag or a config's key); for no release, never.
    for planned, words in ((answer, KEYWORD_75), (unnamed, ANSWER_75)):
        fragment = solver.trinity_config(planned, version="0.5")
        assert (fragment.count("# caution: "), fragment.count(fragment_comment(f"caution: {words}"))) == (1, 1)
    assert "# caution: " not in solver.trinity_config(unnamed)


def test_a_plan_from_json_made_before_codes_gets_the_caution_in_words():
    (answer,) = solver.plan("8B", gpu="h100", max_model_len=32768, budget_gpus=6, exact=True, train_batch_size=75)
    old = answer.best.model_copy(update={"cautions": ("an old caution",), "caution_codes": ()})
    assert old.with_batch_caution(75, "--train-batch-size", "0.5").cautions == ("an old caution", FLAG_75)
    assert old.with_batch_caution(72, "--train-batch-size", "0.5") is old
    # A plan without cautions is no JSON made before codes: the caution comes with its code.
    bare = answer.best.model_copy(update={"cautions": (), "caution_codes": ()})
    assert bare.with_batch_caution(75, "--train-batch-size", "0.5").caution_codes == (
        CautionCode.BATCH_DIVIDES_TRAINER_GPUS,)


CONFIG = ("model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 16384\n{lora}algorithm: {{algorithm_type: grpo}}\n"
          "cluster: {{node_num: 1, gpu_per_node: 8}}\nbuffer: {{train_batch_size: 64}}\n"
          "explorer: {{rollout_model: {{engine_num: 4}}}}\ntrainer:\n  trainer_config:\n    actor_rollout_ref:\n"
          "{roles}")
ADAPTER = "trainer.trainer_config.actor_rollout_ref.model.lora_adapter_path"
FAILS = ("worker turns LoRA on (the path is not null) and loads the adapter from it, but verl's copy_to_local fails on "
         "an empty path (IndexError) before the trainer starts")


def _current(cli, tmp_path: Path, *flags: str, lora: str = "", roles: str = "      model: {}\n") -> dict[str, Any]:
    """`--from-config`'s JSON verdict on `CONFIG` on H100 80GB, with `flags`."""
    path = tmp_path / "trinity.yaml"
    path.write_text(CONFIG.format(lora=lora, roles=roles), encoding="utf-8")
    status, out, _ = cli("--from-config", str(path), "--gpu", "h100", "--json", *flags)
    assert status == 0
    return json.loads(out)[0]["current"]


@pytest.mark.parametrize(("flags", "line"), [
    (("--trinity-version", "0.5"), ("empty-adapter-path-refused", True, (
        f"{ADAPTER} is empty: Trinity's {FAILS}, with Trinity 0.5: give the adapter's path, or remove the key"))),
    (("--trinity-version", "0.6"), ("empty-adapter-path", False, (
        f"{ADAPTER} is empty: Trinity's {FAILS}, with verl before 0.8; Trinity 0.6 on verl 0.8 or later ignores the "
        "key; give the adapter's path, or remove the key"))),
    ((), ("empty-adapter-path", False, f"{ADAPTER} is empty: Trinity's {FAILS}, with verl before 0.8;"))])
def test_an_empty_adapter_path_fails_to_load_before_the_trainer_starts(
        cli, tmp_path: Path, flags: tuple[str, ...], line: tuple[str, bool, str]):
    # verl's copy_local_path_from_hdfs asserts src[-1] != "/": an empty path raises IndexError (utils/fs.py:238).
    current = _current(cli, tmp_path, *flags, roles='      model: {lora_adapter_path: ""}\n')
    code, refused, words = line
    # An adapter path turns LoRA on (with verl before 0.8 alone without 0.5), which the verdict counts as full
    # fine-tuning (test_lorafull_s67).
    assert (current["config_problem_codes"], current["refused"]) == (["lora-counted-as-full", code], refused)
    assert current["config_problems"][1].startswith(words)


@pytest.mark.parametrize(("lora", "path", "said"), [
    ("", "adapters/x", False), ("", "null", False),
    # One LoRA config without a path is a dummy, which leaves the key; one with a path replaces it.
    ("  lora_configs: [{lora_rank: 32}]\n", '""', True), ("  lora_configs: [{path: adapters/x}]\n", '""', False)])
def test_only_an_empty_adapter_path_that_lora_configs_leaves_is_said(
        cli, tmp_path: Path, lora: str, path: str, said: bool):
    current = _current(cli, tmp_path, "--trinity-version", "0.5", lora=lora,
                       roles=f"      model: {{lora_adapter_path: {path}}}\n")
    lora_on = lora or path != "null"  # LoRA's line: test_lorafull_s67
    assert current["config_problem_codes"] == [*(["lora-counted-as-full"] if lora_on else []),
                                               *(["empty-adapter-path-refused"] if said else [])]


LORA_CONFIG_FAILS = (
    "model.lora_configs[0].path is empty: Trinity takes it as the adapter's path (it is not null, so no dummy adapter "
    "is made) and the worker loads it through verl's copy_to_local, which fails on an empty path (IndexError) before "
    "the trainer starts, with ")


@pytest.mark.parametrize(("lora", "flags", "line"), [
    # At a rank above 0 (32 unset) verl 0.8 loads it too (engine/fsdp/transformer_impl.py:318): every release fails.
    ('  lora_configs: [{path: ""}]\n', (), ("empty-adapter-path-refused", True, (
        f"{LORA_CONFIG_FAILS}every Trinity release and verl version: give the adapter's path, or remove the key for a "
        "new adapter"))),
    ('  lora_configs: [{path: "", lora_rank: 0}]\n', ("--trinity-version", "0.5"), (
        "empty-adapter-path-refused", True, (
            f"{LORA_CONFIG_FAILS}Trinity 0.5: give the adapter's path, or remove the key for a new adapter"))),
    ('  lora_configs: [{path: "", lora_rank: 0}]\n', (), ("empty-adapter-path", False, (
        f"{LORA_CONFIG_FAILS}verl before 0.8; Trinity 0.6 on verl 0.8 or later loads no adapter at a lora_rank not "
        "above 0; give the adapter's path, or remove the key for a new adapter")))])
def test_an_empty_lora_config_path_is_loaded_as_the_adapter_and_fails(
        cli, tmp_path: Path, lora: str, flags: tuple[str, ...], line: tuple[str, bool, str]):
    # Trinity makes a dummy adapter only where the path is None (config_validator.py:704 in 0.5.2); "" replaces
    # lora_adapter_path (verl_config.py:624) and fails in copy_to_local as the key itself does.
    current = _current(cli, tmp_path, *flags, lora=lora)
    code, refused, words = line
    # At lora_rank 0 the rollout's vLLM is given max_lora_rank 0 too, which it refuses (test_lorarest3_s75).
    vllm = ["lora-rank-vllm-refused"] if "lora_rank: 0" in lora else []
    assert (current["config_problem_codes"], current["refused"], current["config_problems"][1:2]) == (
        ["lora-counted-as-full", code, *vllm], refused or bool(vllm), [words])  # LoRA's line first: test_lorafull_s67


LORA = "  lora_configs: [{lora_rank: 32}]\n"
ROLES_3 = ("  ulysses_sequence_parallel_size: 4\n  trainer_config:\n    actor_rollout_ref:\n"
           "      actor: {{ulysses_sequence_parallel_size: {actor}}}\n      ref: {{{ref}}}\n")
"""The trainer's SP 4, which the ref takes, above the actor's own `actor`; `ref`: the ref's own keys."""
REF_BUDGET = "trainer.trainer_config.actor_rollout_ref.ref.log_prob_max_token_len_per_gpu"
PASS = ("and with LoRA the actor's log-prob pass gives the ref's log-probs at the actor's SP with the ref's budget, so "
        "verl stops at the first step whose batch holds a sequence longer than that (Trinity 0.5.2) or is padded wider "
        "than that, to its longest prompt plus its longest response (0.5.0 and 0.5.1); set the ref's SP to the "
        "actor's (--write does), or its budget to at least ")


def _lora_verdict(cli, tmp_path: Path, *flags: str, lora: str = LORA, actor: int = 2, ref: str = "") -> dict[str, Any]:
    """`--from-config`'s JSON verdict on Qwen3-8B at 32768 tokens on 4 of 8 H100 GPUs, the trainer at SP 4."""
    path = tmp_path / "trinity.yaml"
    path.write_text(CONFIG.replace("16384", "32768").format(lora=lora, roles="").replace(
        "  trainer_config:\n    actor_rollout_ref:\n", ROLES_3.format(actor=actor, ref=ref)), encoding="utf-8")
    status, out, _ = cli("--from-config", str(path), "--gpu", "h100", "--json", *flags)
    assert status == 0
    return json.loads(out)[0]["current"]


def _lines(current: dict[str, Any], code: str) -> list[str]:
    return [words for said, words in zip(current["config_problem_codes"], current["config_problems"], strict=True)
            if said == code]


RAISED = ("{budget}, which Trinity 0.5 raises at the ref's SP 4 to ceil(32768 / 4) = 8192 (0.5.0 to "
          "ceil(2 x 32768 / 4) = 16384, which holds {holds} at the actor's SP)")
"""The ref's own 4096 x its SP 4 holds no sequence of 32768: Trinity 0.5.1 and 0.5.2 raise it to 8192, 0.5.0 to
16384."""


@pytest.mark.parametrize(("actor", "ref", "line"), [
    # The ref's own 9000 holds a sequence at its SP 4 (0.5.1 and 0.5.2 raise nothing; 0.5.0, raise05, raises it below
    # twice the length), but not at the actor's 2.
    (2, "log_prob_max_token_len_per_gpu: 9000", (
        f"{REF_BUDGET} 9000 (which Trinity 0.5.0 raises at the ref's SP 4 to ceil(2 x 32768 / 4) = 16384, which holds "
        f"one at the actor's SP): 9000 x the actor's SP 2 = 18000 tokens hold no sequence of 32768, {PASS}"
        "ceil(32768 / 2) = 16384")),
    # Raised to 8192, still too few at the actor's 2; 0.5.0's 16384 holds one there.
    (2, "log_prob_max_token_len_per_gpu: 4096", (
        f"{RAISED.format(budget=f'{REF_BUDGET} 4096', holds='one')}: 8192 x the actor's SP 2 = 16384 tokens hold no "
        f"sequence of 32768, {PASS}ceil(32768 / 2) = 16384")),
    (1, "log_prob_max_token_len_per_gpu: 4096", (
        f"{RAISED.format(budget=f'{REF_BUDGET} 4096', holds='none either')}: 8192 x the actor's SP 1 = 8192 tokens "
        f"hold no sequence of 32768, {PASS}ceil(32768 / 1) = 32768")),
    # The trainer's budget, filled at its SP 4 with 16384, which the ref takes: enough at the actor's 2, not at 1.
    (2, "", None),
    (1, "", (
        "the unset trainer.max_token_len_per_gpu, which Trinity fills with 16384 and the ref takes: 16384 x the "
        f"actor's SP 1 = 16384 tokens hold no sequence of 32768, {PASS}ceil(32768 / 1) = 32768"))])
def test_lora_under_05_runs_the_refs_budget_at_the_actors_sp(cli, tmp_path: Path, actor: int, ref: str,
                                                             line: str | None):
    current = _lora_verdict(cli, tmp_path, "--trinity-version", "0.5", actor=actor, ref=ref)
    passes = [words for words in _lines(current, "token-budget-below-length") if "log-prob pass" in words]
    assert passes == ([line] if line else [])
    # A but: line: verl stops only at a batch that long (0.5.0 and 0.5.1: its longest prompt plus its longest response).
    assert current["refused"] is False


@pytest.mark.parametrize(("flags", "lora"), [((), LORA), (("--trinity-version", "0.5"), "")])
def test_the_lora_pass_line_is_trinity_05s_with_lora_only(cli, tmp_path: Path, flags: tuple[str, ...], lora: str):
    current = _lora_verdict(cli, tmp_path, *flags, lora=lora, ref="log_prob_max_token_len_per_gpu: 9000")
    assert not any("log-prob pass" in words for words in current["config_problems"])


REF_SP = "trainer.trainer_config.actor_rollout_ref.ref.ulysses_sequence_parallel_size 2 is not "
MODEL_KEYS = "trainer.trainer_config.actor_rollout_ref.model."


LEGACY_LORA = (f"{REF_SP}trainer.ulysses_sequence_parallel_size 1, but with verl before 0.8 LoRA "
               f"({MODEL_KEYS}{{key}}) has the actor, at its own SP, give the ref's log-probs, so its forward never "
               "runs there; Trinity 0.6 on verl 0.8 or later ignores {key} (no LoRA) and runs the ref at SP 1; the "
               "verdict is at SP 1: set them alike (--write does)")
"""The line on the ref's SP 2 where a role's LoRA key (`key`) alone turns LoRA on, without Trinity 0.5."""


@pytest.mark.parametrize(("lora", "model", "line"), [
    # Trinity 0.6 on verl 0.8 or later ignores lora_rank and lora_adapter_path (FROZEN_KEYS): only verl before 0.8
    # turns LoRA on from them.
    ("", "lora_rank: 8", LEGACY_LORA.format(key="lora_rank")),
    ("", "lora_adapter_path: adapters/x", LEGACY_LORA.format(key="lora_adapter_path")),
    # model.lora_configs turns LoRA on with either verl.
    (LORA, "", (f"{REF_SP}trainer.ulysses_sequence_parallel_size 1, but with LoRA (model.lora_configs) the actor, at "
                "its own SP, gives the ref's log-probs, so its forward never runs; the verdict is at SP 1: set them "
                "alike (--write does)"))])
@pytest.mark.parametrize("flags", [(), ("--trinity-version", "0.6")])
def test_without_05_lora_from_the_roles_keys_is_verl_before_08s_alone(cli, tmp_path: Path, flags: tuple[str, ...],
                                                                      lora: str, model: str, line: str):
    current = _current(cli, tmp_path, *flags, lora=lora,
                       roles=f"      model: {{{model}}}\n      ref: {{ulysses_sequence_parallel_size: 2}}\n")
    assert (current["config_problem_codes"], current["config_problems"][0]) == (
        ["role-sp-differs", "lora-counted-as-full"], line)  # LoRA's line: test_lorafull_s67
