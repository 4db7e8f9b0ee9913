"""RoPE scaling checks across model types (ropeleft, session 78; read against transformers 5.12.1 and 4.57.6, vLLM
0.19.1, Trinity 0.5.1 and 0.6.0): a scaling by a factor (yarn, linear, dynamic) on a type advised no YaRN (Phi-3,
PhiMoE) is judged in mode train too, where no rollout takes it (only the rollout's path judged it; phi3rope, s78: a
Phi-3's is a caution, as it builds as given);
a linear one within the native context is unneeded as a YaRN is, a dynamic one where a vLLM rollout takes it (its
static NTK raises the base at every length; transformers' only past the native context); a Phi-3 past its native
context stays a caution that says what each side builds there; a --model-config's advice follows its type."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_ropetype_s77 import CONFIGS, PHI3, _phi3_4k, phi3_untrained

from solver.results import length_cautions
from solver.tables import load_catalog, load_model_config
from solver.tables.rope_types import (
    RopeAdvice,
    RopeExtension,
    rope_advice,
)
from solver.tables.schema import Model
from solver.trinity import trinity_config_problems

Cli = Callable[..., tuple[int, str, str]]
ROLLOUT = {"explorer": {"rollout_model": {"engine_num": 4}}}
THETA_MISSING = ("rope-theta-missing-refused", (
    "model.rope_scaling has no rope_theta: Trinity 0.6's trainer on verl before 0.8 sets it as Qwen3-8B's RoPE "
    "parameters, in which transformers 5 finds no base, and fails as it builds the model (a TypeError, "
    "modeling_rope_utils.py:446 in 5.12.1, :488 in 5.25.0) unless model.rope_theta is set and "
    "transformers is 5.12.1; add rope_theta: "
    "1000000 to it (as solver.trinity.patch_trinity_config does)"))
"""What 0.6 says of a Qwen3-8B's mapping the trainer builds without its base (ropetheta, s78)."""


def _problems(model: Model, rope: dict[str, Any], length: int, mode: str, version: str = "0.6",
              model_path: str = "/nowhere/model") -> list[tuple[str, str]]:
    """The RoPE problems `trinity_config_problems` finds in a config of `mode` giving `rope` at `length`."""
    mapping = {"mode": mode, "model": {"model_path": model_path, "max_model_len": length, "rope_scaling": rope},
               **(ROLLOUT if mode == "both" else {})}
    return [(problem.code.value, problem.words) for problem in trinity_config_problems(mapping, model, 8,
                                                                                       version=version)
            if "rope" in problem.code.value]


@pytest.mark.parametrize(("model_type", "rope_type", "unadvised"), [
    ("phi3", "yarn", True), ("phi3", "linear", True), ("phi3", "dynamic", True),
    ("phi3", "longrope", False), ("phi3", "default", False), ("phi3", None, False),
    ("phimoe", "yarn", True), ("phimoe", "linear", True), ("phimoe", "dynamic", True),
    ("qwen3", "linear", False), ("gemma2", "dynamic", False), ("llama", "yarn", False),
])
def test_which_types_are_advised_no_scaling_by_a_factor(model_type: str, rope_type: str | None, unadvised: bool):
    # Before phi3rope (s78) `refusal_of` said why each was refused; they build as given (tests/test_phi3rope_s78.py).
    assert rope_advice(model_type, None).unadvised(rope_type) is unadvised


@pytest.mark.parametrize("version", ["0.5", "0.6"])
@pytest.mark.parametrize("mode", ["both", "train"])
@pytest.mark.parametrize("rope_type", ["yarn", "linear", "dynamic"])
def test_a_factor_scaling_on_phi3_is_a_caution_in_every_mode_and_release(tmp_path: Path, version: str, mode: str,
                                                                         rope_type: str):
    # Before ropeleft mode train (no rollout: the trainer builds the model with it) gave no line at all, and a
    # linear or dynamic one none in any mode; ropeleft refused them, phi3rope (s78) cautions: they build as given.
    rope = {"rope_type": rope_type, "factor": 4.0, "original_max_position_embeddings": 4096}
    model = load_model_config(_phi3_4k(tmp_path))
    must_be_yarn = [("rope-scaling-wrong", f"model.rope_scaling.rope_type must be yarn, got '{rope_type}'")]
    assert _problems(model, rope, 16384, mode, version) == [
        ("rope-scaling-untrained", phi3_untrained(f"rope_type {rope_type}", "solver.trinity.patch_trinity_config")),
        *(must_be_yarn if rope_type != "yarn" else [])]


def test_a_phi3s_linear_is_cautioned_by_the_cli_and_removed_by_write(cli: Cli, tmp_path: Path):
    config, written = tmp_path / "trinity.yaml", tmp_path / "written.yaml"
    config.write_text("mode: train\nmodel:\n  model_path: /nowhere/Phi-3-mini-4k-instruct\n  max_model_len: 16384\n"
                      "  rope_scaling: {type: linear, factor: 4.0}\nalgorithm: {algorithm_type: grpo}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\nbuffer: {train_batch_size: 64, batch_size: 8}\n",
                      encoding="utf-8")
    argv = ("--from-config", str(config), "--model-config", str(_phi3_4k(tmp_path)), "--gpu", "h100")
    status, out, _ = cli(*argv, "--check", "--json", "--trinity-version", "0.5")
    current = json.loads(out)[0]["current"]
    assert (status, current["config_problem_codes"]) == (0, ["rope-scaling-untrained", "rope-scaling-wrong"])
    assert current["config_problems"] == [phi3_untrained("type linear"),
                                          "model.rope_scaling.rope_type must be yarn, got 'linear'"]
    status, _, err = cli(*argv, "--write", str(written))
    assert status == 0, err
    assert "rope_scaling" not in written.read_text(encoding="utf-8")


UNNEEDED = "model.rope_scaling: max_model_len 32768 is within Qwen3-8B's native context of 40960: "


@pytest.mark.parametrize(("rope", "mode", "expected"), [
    ({"rope_type": "linear", "factor": 2.0}, "train", [("rope-scaling-unneeded", (
        f"{UNNEEDED}a linear RoPE scaling is not needed there (it stretches the positions the model was trained on); "
        "remove it"))]),
    ({"rope_type": "linear", "factor": 2.0}, "both", [("rope-scaling-unneeded", (
        f"{UNNEEDED}a linear RoPE scaling is not needed there (it stretches the positions the model was trained on); "
        "remove it"))]),
    ({"rope_type": "dynamic", "factor": 2.0}, "both", [("rope-scaling-unneeded", (
        f"{UNNEEDED}a dynamic RoPE scaling is not needed there (the rollout's vLLM raises the RoPE base at every "
        "length, as for its factor times the native context, which turns the positions the model was trained on "
        "otherwise; the trainer's transformers, only past the native context); remove it"))]),
    # transformers leaves positions within it alone; 0.6's trainer still builds it, which needs its base (s78)
    ({"rope_type": "dynamic", "factor": 2.0}, "train", [THETA_MISSING]),
    ({"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 40960}, "train", [(
        "rope-scaling-unneeded", (f"{UNNEEDED}YaRN is not needed there (it stretches the positions the model was "
                                  "trained on); remove it"))]),
])
def test_a_linear_or_dynamic_within_the_native_context(rope: dict[str, Any], mode: str,
                                                       expected: list[tuple[str, str]]):
    assert _problems(load_catalog().model("Qwen3-8B"), rope, 32768, mode, model_path="Qwen/Qwen3-8B") == expected


@pytest.mark.parametrize("rope_type", ["linear", "dynamic"])
def test_a_linear_or_dynamic_past_the_native_context_is_told_to_be_yarn(rope_type: str):
    problems = _problems(load_catalog().model("Qwen3-8B"), {"rope_type": rope_type, "factor": 1.5}, 65536, "train",
                         model_path="Qwen/Qwen3-8B")
    assert problems == [
        THETA_MISSING,
        ("rope-scaling-wrong", f"model.rope_scaling.rope_type must be yarn, got '{rope_type}'"),
        ("rope-scaling-wrong", ("model.rope_scaling (factor 1.5 over 40960) covers 61440 tokens, fewer than "
                                "max_model_len 65536: set it as Trinity-RFT's guide does, factor max_model_len / 40960 "
                                "= 1.6 over 40960"))]


def test_a_phi3_past_its_native_context_is_a_caution_that_says_what_each_side_builds(cli: Cli, tmp_path: Path):
    model = load_model_config(_phi3_4k(tmp_path))
    [caution] = length_cautions(model, 16384)
    assert caution.endswith(
        "vLLM's rollout refuses it, past the 4096 it derives from the model's config, unless "
        "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set; past 4096, transformers' trainer rotates by plain RoPE at positions "
        "the model was not trained on, and vLLM's rollout reads past the end of its rotary cache of 4096 positions "
        "(positions past it lead to nan, vLLM warns): it samples those tokens with no rotation the trainer computes")
    status, out, _ = cli("--model-config", str(_phi3_4k(tmp_path)), "--gpu", "h100", "--gpus", "4", "--len", "16k",
                         "--json")
    [plan] = json.loads(out)[0]["plans"]
    assert (status, plan["caution_codes"][:1], plan["cautions"][0]) == (0, ["past-native-no-yarn"], caution)


def test_phi3_128k_past_its_longrope_is_its_own_scalings_caution():
    model = load_model_config(CONFIGS / "Phi-3-mini-128k-instruct.json")
    assert (model.rope_advice, length_cautions(model, 262144)) == (RopeAdvice("own", PHI3), (
        ("beyond the native 131072, which Phi-3-mini-128k-instruct's own longrope RoPE scaling provides: no YaRN "
         "written; vLLM's rollout refuses it, past the 131072 it derives from the model's config, unless "
         "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set; check the model handles it"),))


@pytest.mark.parametrize(("config", "advice", "factor"), [
    ("Llama-3.2-1B", RopeAdvice("own", RopeExtension("llama")), None),  # llama3, as Llama-3.1's
    ("gemma-2-9b", RopeAdvice("yarn", RopeExtension("gemma2")), 2.0),
    ("Mistral-7B-v0.3", RopeAdvice("yarn", RopeExtension("mistral")), 2.0),
    ("Mixtral-8x7B-v0.1", RopeAdvice("yarn", RopeExtension("mixtral")), 2.0),
])
def test_a_model_configs_advice_is_its_types_not_qwen3s(config: str, advice: RopeAdvice, factor: float | None):
    model = load_model_config(CONFIGS / f"{config}.json")
    assert (model.rope_advice, model.yarn_factor(2 * model.native_context)) == (advice, factor)


def test_gemma2s_plan_writes_yarn_over_its_own_native_context(cli: Cli):
    status, out, _ = cli("--model-config", str(CONFIGS / "gemma-2-9b.json"), "--gpu", "h100", "--gpus", "8", "--len",
                         "16k")
    assert status == 0
    assert ("model.rope_scaling: {rope_type: yarn, factor: 2.0, original_max_position_embeddings: 8192, "
            "rope_theta: 10000}\n") in out  # its own base (ropetheta, s78)
    assert "(YaRN rope scaling, factor 2.0; rft-solver knows of no validation of YaRN on a model that is not" in out
