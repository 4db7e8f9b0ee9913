"""Trinity 0.5's train batch caution on every path, and LoRA as the released code reads it (session 56, second
pass): a plan of `solver.plan(trinity_version=...)`, a fragment of `solver.trinity_config` and `solve cluster
--emit-dir --trinity-version 0.5` (`placement_configs`) say that Trinity 0.5.0 and 0.5.1 refuse a train batch the
trainer GPUs do not divide."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

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
    assert (f"# caution: {JOB_75}\n" in text) is cautioned


def test_placement_configs_says_it_for_05_only():
    fleet = solver.Fleet.model_validate({"pools": [{"name": "h100", "gpu": "H100-80GB", "nodes": 1,
                                                    "gpus_per_node": 6}],
                                         "jobs": [{"name": "big", "model": "Qwen3-8B", "max_model_len": 32768,
                                                   "rollout_gpus": 0, "train_batch_size": 75}]})
    result = solver.place(fleet)
    assert f"# caution: {JOB_75}\n" in solver.placement_configs(result, fleet, version="0.5")["big"]
    assert "# caution: " not in solver.placement_configs(result, fleet)["big"]


def test_plan_takes_the_trinity_version_and_its_fragment_says_the_caution_once():
    asked = {"gpu": "h100", "max_model_len": 32768, "budget_gpus": 6, "exact": True, "train_batch_size": 75}
    (answer,) = solver.plan("8B", trinity_version="0.5", **asked)
    assert (answer.best.gpus, answer.best.sp) == (6, 2)
    assert (answer.best.caution_codes, answer.best.cautions) == ((CautionCode.BATCH_DIVIDES_TRAINER_GPUS,), (FLAG_75,))
    (unnamed,) = solver.plan("8B", **asked)
    assert unnamed.best.cautions == ()
    # A fragment for 0.5 says it whether or not the answer was planned for 0.5; for no release, never.
    for planned in (answer, unnamed):
        assert solver.trinity_config(planned, version="0.5").count(f"# caution: {FLAG_75}\n") == 1
    assert "# caution: " not in solver.trinity_config(unnamed)


def test_a_plan_from_json_made_before_codes_gets_the_caution_in_words():
    (answer,) = solver.plan("8B", gpu="h100", max_model_len=32768, budget_gpus=6, exact=True, train_batch_size=75)
    old = answer.best.model_copy(update={"cautions": ("an old caution",), "caution_codes": ()})
    assert old.with_batch_caution(75, "--train-batch-size", "0.5").cautions == ("an old caution", FLAG_75)
    assert old.with_batch_caution(72, "--train-batch-size", "0.5") is old


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
        f"{ADAPTER} is empty: Trinity 0.5's {FAILS}: give the adapter's path, or remove the key"))),
    (("--trinity-version", "0.6"), ("empty-adapter-path", False, (
        f"{ADAPTER} is empty: with verl before 0.8 Trinity's {FAILS}; Trinity 0.6 on verl 0.8 or later ignores the "
        "key; give the adapter's path, or remove the key"))),
    ((), ("empty-adapter-path", False, f"{ADAPTER} is empty: with verl before 0.8 Trinity's {FAILS}"))])
def test_an_empty_adapter_path_fails_to_load_before_the_trainer_starts(cli, tmp_path: Path, flags: tuple[str, ...],
                                                                        line: tuple[str, bool, str]):
    # verl's copy_local_path_from_hdfs asserts src[-1] != "/": an empty path raises IndexError (utils/fs.py:238).
    current = _current(cli, tmp_path, *flags, roles='      model: {lora_adapter_path: ""}\n')
    code, refused, words = line
    assert (current["config_problem_codes"], current["refused"]) == ([code], refused)
    assert current["config_problems"][0].startswith(words)


@pytest.mark.parametrize(("lora", "path", "said"), [
    ("", "adapters/x", False), ("", "null", False),
    # One LoRA config without a path is a dummy, which leaves the key; one with a path replaces it.
    ("  lora_configs: [{lora_rank: 32}]\n", '""', True), ("  lora_configs: [{path: adapters/x}]\n", '""', False)])
def test_only_an_empty_adapter_path_that_lora_configs_leaves_is_said(cli, tmp_path: Path, lora: str, path: str,
                                                                    said: bool):
    current = _current(cli, tmp_path, "--trinity-version", "0.5", lora=lora,
                       roles=f"      model: {{lora_adapter_path: {path}}}\n")
    assert current["config_problem_codes"] == (["empty-adapter-path-refused"] if said else [])
