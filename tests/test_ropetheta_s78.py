"""A YaRN without ``rope_theta`` on Trinity 0.6's legacy trainer (ropetheta, session 78). Run on a tiny Qwen3
(``rope_theta`` 1000000) built as 0.6.0's ``verl_legacy/fsdp_workers.py:376-393`` builds it: transformers 5.12.1 and
5.25.0 fail on a ``model.rope_scaling`` without its own ``rope_theta`` (a TypeError, ``base ** ...`` of None), 5.12.1
builds it with ``model.rope_theta`` set, 5.25.0 only with the key in the mapping; transformers 4.57.6 (Trinity 0.5)
builds the same RoPE with the key or without it; vLLM 0.19.1 takes it as the base. So every YaRN rft-solver writes
carries the model's own base (harmless on 0.5), and ``--check --trinity-version 0.6`` refuses a mapping without it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from solver.query import REFUSED_CONFIG_CODES, ConfigProblemCode
from solver.rules import mapped_rope_theta
from solver.tables import load_catalog, load_model_config
from solver.tables.schema import CATALOGUE_ROPE_THETA
from solver.trinity import trinity_config_problems

Cli = Callable[..., tuple[int, str, str]]
YARN = {"rope_type": "yarn", "factor": 1.6, "original_max_position_embeddings": 40960}
REFUSAL = ("model.rope_scaling has no rope_theta: Trinity 0.6's trainer on verl before 0.8 sets it as Qwen3-8B's RoPE "
           "parameters, in which transformers 5 finds no base, and fails as it builds the model (a TypeError, "
           "modeling_rope_utils.py:446 in 5.12.1, :488 in 5.25.0) unless model.rope_theta is set and "
           "transformers is 5.12.1{given}; "
           "add rope_theta: 1000000 to it (as solver.trinity.patch_trinity_config does)")
LLAMA_CONFIG = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 4096,
                "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
                "intermediate_size": 14336, "vocab_size": 128256, "max_position_embeddings": 8192,
                "rope_theta": 500000.0, "tie_word_embeddings": False}


def _rope_problems(rope: dict[str, Any] | None, version: str | None, **model: Any) -> list[tuple[str, str]]:
    """The RoPE problems of a Qwen3-8B config at 65536 tokens giving `rope` (and `model`'s other keys)."""
    mapping = {"model": {"model_path": "Qwen/Qwen3-8B", "max_model_len": 65536, "rope_scaling": rope, **model},
               "explorer": {"rollout_model": {"engine_num": 2}}}
    problems = trinity_config_problems(mapping, load_catalog().model("8B"), 6,
                                       version=version)  # type: ignore[arg-type]
    return [(problem.code.value, problem.words) for problem in problems if "rope" in problem.code.value]


def test_the_refusal_is_a_refusal():
    assert ConfigProblemCode.ROPE_THETA_MISSING_REFUSED in REFUSED_CONFIG_CODES


@pytest.mark.parametrize(("name", "base"), [("8B", 1000000), ("Qwen2.5-7B-Instruct", 1000000),
                                            ("30B-A3B", 1000000), ("Qwen3-30B-A3B-Instruct-2507", 10000000),
                                            ("Qwen3-4B-Instruct-2507", 5000000)])
def test_a_catalogue_models_own_base_goes_in_the_mapping(name: str, base: int):
    model = load_catalog().model(name)
    assert model.rope_theta is None and model.own_rope_theta == base and mapped_rope_theta(model) == base
    assert CATALOGUE_ROPE_THETA == 1000000


def test_a_config_jsons_own_base_goes_in_the_mapping(tmp_path: Path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(LLAMA_CONFIG))
    model = load_model_config(path)
    assert (model.rope_theta, model.own_rope_theta, mapped_rope_theta(model)) == (500000, 500000, 500000)
    assert model.vllm_rope_theta_lost == (500000, 10000)
    path.write_text(json.dumps({**LLAMA_CONFIG, "rope_theta": 12345.5}))
    assert mapped_rope_theta(load_model_config(path)) == 12345.5
    # transformers 5's per-layer-type RoPE parameters (Gemma 3's): no one base, none written
    path.write_text(json.dumps({**LLAMA_CONFIG, "rope_theta": None, "rope_parameters": {
        "full_attention": {"rope_type": "default", "rope_theta": 1000000.0},
        "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}}}))
    model = load_model_config(path)
    assert (model.rope_theta, model.own_rope_theta, mapped_rope_theta(model)) == (None, None, None)


@pytest.mark.parametrize("version", [["--trinity-version", "0.6"], [], ["--trinity-version", "0.5"]])
def test_the_fragment_and_the_apply_lines_put_the_base_in_the_yarn(cli: Cli, version: list[str]):
    # harmless on 0.5: transformers 4.57.6 builds the same RoPE, vLLM takes it as the base
    flags = ["--model", "8B", "--gpu", "h100", "--len", "64k", "--gpus", "8", *version]
    status, fragment, _ = cli(*flags, "--emit", "trinity")
    assert status == 0
    yarn = ("  rope_scaling:  # YaRN: max_model_len is beyond the native context of 40960\n    rope_type: yarn\n"
            "    factor: 1.6  # max_model_len / 40960\n    original_max_position_embeddings: 40960\n")
    comment = ("    # Qwen3-8B's own; Trinity 0.6's trainer on verl before 0.8 fails to build the model on a\n"
               "    # rope_scaling without it (transformers 5 finds no base)\n    rope_theta: 1000000\n"
               if "0.5" not in version else  # the release the config is written for (smallslips37)
               "    # Qwen3-8B's own; Trinity 0.5's trainer on transformers 5 fails to build the model on a\n"
               "    # rope_scaling without it (it finds no base there)\n    rope_theta: 1000000\n")
    assert yarn + comment in fragment
    status, text, _ = cli(*flags)
    assert status == 0
    line = "model.rope_scaling: {rope_type: yarn, factor: 1.6, original_max_position_embeddings: 40960"
    assert line + ", rope_theta: 1000000}" in text.splitlines()


def test_a_moes_yarn_carries_its_base_beside_model_rope_theta_for_the_rollout(cli: Cli):
    status, text, _ = cli("--model", "30B-A3B", "--gpu", "h100", "--len", "64k", "--gpus", "16")
    assert status == 0
    lines = text.splitlines()
    at = lines.index("model.rope_scaling: {rope_type: yarn, factor: 1.6, original_max_position_embeddings: 40960, "
                     "rope_theta: 1000000}")
    assert lines[at + 2] == "model.rope_theta: 1000000"


@pytest.mark.parametrize("version", ["0.6"])
def test_a_mapping_without_its_base_is_refused_on_06(version: str):
    assert _rope_problems(YARN, version) == [("rope-theta-missing-refused", REFUSAL.format(given=""))]
    given = " (the model.rope_theta given mends it there)"
    assert _rope_problems(YARN, version, rope_theta=1000000) == [
        ("rope-theta-missing-refused", REFUSAL.format(given=given))]
    assert _rope_problems({**YARN, "rope_theta": 1000000}, version) == []
    # of any type the trainer builds: a linear past the native context is told to be YaRN besides
    linear = _rope_problems({"rope_type": "linear", "factor": 1.6}, version)
    assert ("rope-theta-missing-refused", REFUSAL.format(given="")) in linear


def test_a_mapping_without_its_base_is_a_but_line_on_05_unless_model_rope_theta_is_set():
    # (no release named: a but: line since ropecheck, s79, tests/test_ropecheck_s79.py); under 0.5 no line before s81,
    # whose 0.5.0 and 0.5.2 fail alike on transformers 5: tests/test_persona62_s81.py
    assert [code for code, _ in _rope_problems(YARN, "0.5")] == ["rope-theta-missing"]
    assert _rope_problems(YARN, "0.5", rope_theta=1000000) == []


def test_a_mapping_another_line_says_to_remove_is_not_asked_for_its_base():
    # within the native context the YaRN is unneeded: removing it, not completing it
    mapping = {"model": {"model_path": "Qwen/Qwen3-8B", "max_model_len": 32768, "rope_scaling": YARN}}
    codes = [problem.code for problem in trinity_config_problems(mapping, load_catalog().model("8B"), 6,
                                                                 version="0.6")]
    assert ConfigProblemCode.ROPE_SCALING_UNNEEDED in codes
    assert ConfigProblemCode.ROPE_THETA_MISSING_REFUSED not in codes


CONFIG = """\
model:
  model_path: Qwen/Qwen3-8B
  max_model_len: 65536
  rope_scaling: {rope_type: yarn, factor: 1.6, original_max_position_embeddings: 40960}
cluster: {node_num: 1, gpu_per_node: 8}
algorithm: {algorithm_type: grpo}
buffer: {batch_size: 48, train_batch_size: 48}
explorer:
  rollout_model: {engine_num: 4, tensor_parallel_size: 1}
trainer: {ulysses_sequence_parallel_size: 2}
"""


def test_check_refuses_and_write_adds_the_base_that_then_passes(cli: Cli, tmp_path: Path):
    config, written = tmp_path / "trinity.yaml", tmp_path / "written.yaml"
    config.write_text(CONFIG)
    flags = ["--from-config", str(config), "--gpu", "h100", "--trinity-version", "0.6"]
    status, out, _ = cli(*flags, "--check", "--json")
    assert status == 1
    assert json.loads(out)[0]["current"]["config_problem_codes"] == ["rope-theta-missing-refused"]
    assert cli(*flags, "--write", str(written))[0] == 0
    assert ("  rope_scaling: {rope_type: yarn, factor: 1.6, original_max_position_embeddings: 40960, "
            "rope_theta: 1000000}\n") in written.read_text()
    status, out, _ = cli("--from-config", str(written), "--gpu", "h100", "--trinity-version", "0.6", "--check",
                         "--json")
    assert status == 0 and json.loads(out)[0]["current"]["config_problem_codes"] == []
