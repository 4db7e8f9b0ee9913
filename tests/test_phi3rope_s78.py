"""What a RoPE scaling by a factor that Trinity sets on a Phi-3 or PhiMoE builds, per release (phi3rope, session 78):
run on tiny checkpoints loaded as Trinity's worker does (transformers 4.57.6 for Trinity 0.5, 5.12.1 and 5.25.0 for
0.6) and read in vLLM 0.11.0, 0.15.1 and 0.19.1. Trinity sets it on the loaded config, past the config class that reads
yarn as longrope, so a Phi-3's yarn, linear or dynamic builds as given in the trainer and the rollout: a caution
(``rope-scaling-untrained``), not the refusal ropeleft gave; a PhiMoE's is refused where the release's trainer reads
a key it lacks at every step (``original_max_position_embeddings`` under transformers 4, ``short_mscale`` and
``long_mscale`` under 5), else cautioned too; the rollout model's own is vLLM's alone, built as given."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_ropetype_s77 import CONFIGS, _phi3_4k, phi3_untrained

from solver.tables import load_model_config
from solver.tables.rope_types import (
    LONGROPE_ACCEPTED,
    PHIMOE_TRAINER_READS,
    ROPE_BY_MODEL_TYPE,
    TrainerFailure,
)
from solver.tables.schema import Model
from solver.trinity import trinity_config_problems

Cli = Callable[..., tuple[int, str, str]]
YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}
READS_05, READS_06 = PHIMOE_TRAINER_READS
KEYERROR_TAIL = f": a KeyError at its first step; remove it, and {LONGROPE_ACCEPTED}"
LACKS_05 = ("lacks original_max_position_embeddings, which the trainer reads from it at every step on transformers 4 "
            "(PhimoeRotaryEmbedding, modeling_phimoe.py:163-167 in 4.57.6; Trinity 0.5.1 pins transformers 4, 0.5.0 "
            "and 0.5.2 take it)" + KEYERROR_TAIL)
LACKS_06 = ("lacks short_mscale and long_mscale, which the trainer reads from it at every step on transformers 5 "
            "(PhimoeRotaryEmbedding on verl before 0.8, modeling_phimoe.py:104-108 in 5.12.1 and 5.3.0; Trinity 0.6 "
            "requires transformers 5, 0.5.0 and 0.5.2 take it; on verl 0.8 or later the trainer takes no "
            "model.rope_scaling)" + KEYERROR_TAIL)


def _phimoe(tmp_path: Path) -> Model:
    """A PhiMoE of Phi-3-mini's shape with 16 experts, 4096 native positions and no RoPE scaling of its own."""
    config = json.loads((CONFIGS / "Phi-3-mini-128k-instruct.json").read_text(encoding="utf-8"))
    config |= {"_name_or_path": "PhiMoE-4k", "model_type": "phimoe", "architectures": ["PhiMoEForCausalLM"],
               "max_position_embeddings": 4096, "original_max_position_embeddings": 4096, "rope_scaling": None,
               "num_local_experts": 16, "num_experts_per_tok": 2, "sliding_window": None}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return load_model_config(path)


def _problems(model: Model, rope: dict[str, Any], length: int, mode: str = "train",
              version: str | None = "0.6") -> list[tuple[str, str]]:
    """The RoPE problems of a config of `mode` giving `model` the `rope` scaling at `length`."""
    mapping = {"mode": mode, "model": {"model_path": "/nowhere/model", "max_model_len": length, "rope_scaling": rope},
               **({"explorer": {"rollout_model": {"engine_num": 4}}} if mode == "both" else {})}
    return [(problem.code.value, problem.words) for problem in trinity_config_problems(mapping, model, 8,
                                                                                       version=version)
            if "rope" in problem.code.value]


# review78b (s78): keyed by the transformers major version the trainer runs on (0.5.0 and 0.5.2 take 4 or 5), and
# transformers 5 reads original_max_position_embeddings too (modeling_phimoe.py:107 in 5.12.1).
@pytest.mark.parametrize(("rope", "transformers", "failure"), [
    (YARN, (4,), None),  # transformers 4.57.6 runs PhiMoE's yarn (its mscales read as None, YaRN's own scaling)
    (YARN, (5,), TrainerFailure(READS_06, ("short_mscale", "long_mscale"))),
    (YARN, (4, 5), TrainerFailure(READS_06, ("short_mscale", "long_mscale"))),
    ({"rope_type": "linear", "factor": 4.0}, (4,), TrainerFailure(READS_05, ("original_max_position_embeddings",))),
    ({"rope_type": "linear", "factor": 4.0}, (4, 5), TrainerFailure(READS_05, ("original_max_position_embeddings",))),
    ({"rope_type": "dynamic", "factor": 4.0, "long_mscale": 1.2}, (5,),
     TrainerFailure(READS_06, ("original_max_position_embeddings", "short_mscale"))),
    ({**YARN, "short_mscale": 1.0, "long_mscale": 1.2}, (4, 5), None),
])
def test_which_release_a_phimoes_trainer_fails_on(rope: dict[str, Any], transformers: tuple[int, ...],
                                                  failure: TrainerFailure | None):
    assert ROPE_BY_MODEL_TYPE["phimoe"].trainer_failure(rope, transformers) == failure


@pytest.mark.parametrize("transformers", [(4,), (5,), (4, 5)])
def test_a_phi3s_trainer_fails_on_no_factor_scaling(transformers: tuple[int, ...]):
    for rope_type in ("yarn", "linear", "dynamic"):
        assert ROPE_BY_MODEL_TYPE["phi3"].trainer_failure({"rope_type": rope_type}, transformers) is None


@pytest.mark.parametrize("mode", ["train", "both"])
@pytest.mark.parametrize(("rope", "version", "expected"), [
    ({"rope_type": "linear", "factor": 4.0}, "0.5", ("rope-scaling-unbuilt-refused",
                                                     f"rope_type linear on PhiMoE-4k {LACKS_05}")),
    ({"type": "dynamic", "factor": 4.0}, None, ("rope-scaling-unbuilt-refused",
                                                f"type dynamic on PhiMoE-4k {LACKS_05}")),
    (YARN, "0.6", ("rope-scaling-unbuilt-refused", f"rope_type yarn on PhiMoE-4k {LACKS_06}")),
    (YARN, None, ("rope-scaling-unbuilt-refused", f"rope_type yarn on PhiMoE-4k {LACKS_06}")),
    (YARN, "0.5", ("rope-scaling-unbuilt-refused", f"rope_type yarn on PhiMoE-4k {LACKS_06}")),  # 0.5.2: 4 or 5
])
def test_a_phimoes_factor_scaling_is_refused_where_its_trainer_fails(tmp_path: Path, mode: str, rope: dict[str, Any],
                                                                     version: str | None, expected: tuple[str, str]):
    # Before phi3rope (s78) every one was refused, for a config class that reads it as longrope: Trinity sets it on
    # the loaded config, which takes it as given; the rotary embedding's own reads fail.
    code, words = expected
    assert _problems(_phimoe(tmp_path), rope, 16384, mode, version) == [(code, f"model.rope_scaling: {words}")]


def test_a_phimoes_refusal_stands_within_the_native_context(tmp_path: Path):
    # transformers 5's PhimoeRotaryEmbedding reads short_mscale at a length within it too: the KeyError comes first.
    # Its refusal alone: no rope-scaling-unneeded line saying it stretches the positions, as it is never built.
    assert _problems(_phimoe(tmp_path), YARN, 4096) == [
        ("rope-scaling-unbuilt-refused", f"model.rope_scaling: rope_type yarn on PhiMoE-4k {LACKS_06}")]


def test_a_phi3s_yarn_within_the_native_context_is_unneeded_alone(tmp_path: Path):
    assert _problems(load_model_config(_phi3_4k(tmp_path)), YARN, 4096, "both") == [
        ("rope-scaling-unneeded", ("model.rope_scaling: max_model_len 4096 is within Phi-3-mini-4k-instruct's native "
                                   "context of 4096: YaRN is not needed there (it stretches the positions the model "
                                   "was trained on); remove it"))]


@pytest.mark.parametrize(("mode", "short"), [
    ("both", ("rope-scaling-short-refused", (
        "model.rope_scaling (factor 2.0 over 4096) covers 8192 tokens, fewer than max_model_len 16384, which the "
        "rollout's vLLM refuses unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set before Ray starts: set it as "
        "Trinity-RFT's guide does, factor max_model_len / 4096 = 4.0 over 4096"))),
    ("train", ("rope-scaling-wrong", (
        "model.rope_scaling (factor 2.0 over 4096) covers 8192 tokens, fewer than max_model_len 16384: set it as "
        "Trinity-RFT's guide does, factor max_model_len / 4096 = 4.0 over 4096"))),
])
def test_a_phi3s_yarn_short_of_the_length_is_judged_as_any_yarn(tmp_path: Path, mode: str, short: tuple[str, str]):
    # Once it runs, vLLM derives 4096 x 2.0 from it and refuses the 16384 past that, as for a Qwen3's.
    model = load_model_config(_phi3_4k(tmp_path))
    assert (model.yarn_factor(16384), model.length_factor(16384), model.length_factor(4096)) == (None, 4.0, None)
    rope = {**YARN, "factor": 2.0}
    assert _problems(model, rope, 16384, mode) == [
        ("rope-scaling-untrained", phi3_untrained("rope_type yarn", "solver.trinity.patch_trinity_config")), short]


def test_the_rollout_models_own_yarn_on_phi3_is_vllms_alone(tmp_path: Path):
    # ropeleft refused it as the trainer's; the trainer never builds it, and vLLM builds it as given.
    mapping = {"mode": "both", "model": {"model_path": "/nowhere/model", "max_model_len": 4096},
               "explorer": {"rollout_model": {"engine_num": 4, "rope_scaling": YARN}}}
    problems = trinity_config_problems(mapping, load_model_config(_phi3_4k(tmp_path)), 8, version="0.6")
    assert [problem.code.value for problem in problems if "rope" in problem.code.value] == [
        "rollout-rope-scaling-differs"]


def test_write_removes_a_phimoes_refused_linear(cli: Cli, tmp_path: Path):
    _phimoe(tmp_path)
    config, written = tmp_path / "trinity.yaml", tmp_path / "written.yaml"
    config.write_text("mode: train\nmodel:\n  model_path: /nowhere/PhiMoE-4k\n  max_model_len: 16384\n"
                      "  rope_scaling: {rope_type: linear, factor: 4.0}\nalgorithm: {algorithm_type: grpo}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\nbuffer: {train_batch_size: 64, batch_size: 8}\n",
                      encoding="utf-8")
    argv = ("--from-config", str(config), "--model-config", str(tmp_path / "config.json"), "--gpu", "h100",
            "--trinity-version", "0.5")
    status, out, _ = cli(*argv, "--check", "--json")
    current = json.loads(out)[0]["current"]
    assert (status, current["config_problem_codes"]) == (1, ["rope-scaling-unbuilt-refused"])
    assert current["config_problems"] == [f"model.rope_scaling: rope_type linear on PhiMoE-4k {LACKS_05}"]
    status, _, err = cli(*argv, "--write", str(written))
    assert status == 0, err
    assert "rope_scaling" not in written.read_text(encoding="utf-8")
