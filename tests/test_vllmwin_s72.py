"""vLLM's own rules for windows, read as vLLM 0.19.1 reads them: a Qwen2 or Qwen3 config whose layers mix sliding
and full attention refused as vLLM's Qwen2 model refuses it, Qwen's default window of 4096; and one rule for a RoPE
scaling transformers refuses, in a config.json and in a Trinity config's ``model.rope_scaling``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_slidingkv_s71 import ACCEPTED, _published, _refusal, _written

from solver.query import ConfigProblemCode
from solver.tables import load_catalog, load_model_config
from solver.tables.schema import Model
from solver.trinity import trinity_config_problems

NTK_REFUSED = f"rope_type 'ntk': transformers builds no such RoPE scaling; it builds {ACCEPTED}"
LONGROPE_REFUSED = "missing long_factor: transformers refuses rope_type longrope without it"
VLLM_REFUSES = ("which vLLM 0.19.1 refuses to build unless max_window_layers ({mwl}) is num_hidden_layers "
                "(qwen2.py:373-382), so Trinity's rollout cannot start; accepted: ")


def _without_window(name: str) -> dict[str, Any]:
    """A published config.json without its ``sliding_window`` key."""
    return {key: value for key, value in _published(name).items() if key != "sliding_window"}


@pytest.mark.parametrize(("source", "changes", "refusal"), [
    (_published("Qwen3-8B"), {"use_sliding_window": True, "sliding_window": 4096, "max_window_layers": 18},
     "use_sliding_window with max_window_layers 18 gives a qwen3 model layers of mixed attention (18 full_attention, "
     "18 sliding_attention of 36), " + VLLM_REFUSES.format(mwl=18)
     + "max_window_layers 0 or 36 (vLLM then windows every layer), or use_sliding_window false"),
    # no sliding_window key: transformers' Qwen2 class keeps its default of 4096, and the layers mix as above
    (_without_window("Qwen2.5-7B"), {"use_sliding_window": True, "max_window_layers": 21},
     "use_sliding_window with max_window_layers 21 gives a qwen2 model layers of mixed attention (21 full_attention, "
     "7 sliding_attention of 28), " + VLLM_REFUSES.format(mwl=21)
     + "max_window_layers 0 or 28 (vLLM then windows every layer), or use_sliding_window false"),
    # a window of 0 is vLLM's "none", but transformers' class has made the layer types from it all the same
    (_published("Qwen3-8B"), {"use_sliding_window": True, "sliding_window": 0, "max_window_layers": 35},
     "use_sliding_window with max_window_layers 35 gives a qwen3 model layers of mixed attention (35 full_attention, "
     "1 sliding_attention of 36), " + VLLM_REFUSES.format(mwl=35)
     + "max_window_layers 0 or 36 (vLLM then windows every layer), or use_sliding_window false"),
    # layer types given: vLLM looks at them alone, whatever use_sliding_window says
    (_published("Qwen3-8B"), {"layer_types": ["sliding_attention"] * 30 + ["full_attention"] * 6,
                              "max_window_layers": 30},
     "layer_types give a qwen3 model layers of mixed attention (6 full_attention, 30 sliding_attention of 36), "
     + VLLM_REFUSES.format(mwl=30) + "layer_types of one type, or max_window_layers 36"),
])
def test_qwen_layers_of_mixed_attention_are_refused_as_vllm_refuses_them(tmp_path: Path, source: dict[str, Any],
                                                                         changes: dict[str, Any], refusal: str):
    assert _refusal(tmp_path, {**source, **changes}) == refusal


@pytest.mark.parametrize(("source", "changes", "window"), [
    # vLLM's assert holds where max_window_layers is num_hidden_layers: it builds, and caches every layer whole
    ("Qwen3-8B", {"layer_types": ["sliding_attention"] * 30 + ["full_attention"] * 6}, None),
    # max_window_layers at or past the layers: all full attention, one type, so vLLM windows every layer
    ("Qwen3-8B", {"use_sliding_window": True, "sliding_window": 4096, "max_window_layers": 40}, (4096, 36)),
    # Qwen2-MoE's and Qwen3-MoE's classes have no such check: mixed layers cache whole
    ("Qwen1.5-MoE-A2.7B", {"use_sliding_window": True}, None),
    ("Qwen3-30B-A3B", {"use_sliding_window": True, "sliding_window": 4096, "max_window_layers": 24}, (4096, 48)),
])
def test_qwen_layers_vllm_builds_are_counted_as_it_caches_them(tmp_path: Path, source: str, changes: dict[str, Any],
                                                               window: object):
    assert load_model_config(_written(tmp_path, {**_published(source), **changes})).vllm_sliding_window == window


def test_a_qwen_config_without_a_window_key_takes_transformers_default_of_4096(tmp_path: Path):
    config = {**_without_window("Qwen2.5-7B"), "use_sliding_window": True}
    assert load_model_config(_written(tmp_path, config)).vllm_sliding_window == (4096, 28)


def test_the_cli_refuses_such_a_qwen_config_in_one_line(cli, tmp_path: Path):
    config = _written(tmp_path, {**_published("Qwen3-8B"), "use_sliding_window": True, "sliding_window": 4096,
                                 "max_window_layers": 18})
    status, out, err = cli("--model-config", str(config), "--gpu", "h100", "--gpus", "8", "--len", "8k")
    assert (status, out) == (2, "")
    assert err.startswith(f"solve: error: --model-config {config}: use_sliding_window with max_window_layers 18 ")
    assert err.count("\n") == 1 and "Traceback" not in err


def _rope_problems(rope: dict[str, Any], model: Model, length: int = 32768) -> list[tuple[str, str]]:
    # mode train: transformers' rule is the one where no vLLM rollout takes it (one that does reads it by vLLM's,
    # tests/test_ropesix_s73.py)
    # (the line on a mapping without rope_theta, which no release named gives since ropecheck, s79, is not theirs)
    mapping = {"mode": "train", "model": {"model_path": "Qwen/Qwen3-8B", "max_model_len": length, "rope_scaling": rope}}
    return [(problem.code.value, problem.words) for problem in trinity_config_problems(mapping, model, 8)
            if problem.code is not ConfigProblemCode.ROPE_THETA_MISSING]


@pytest.mark.parametrize(("rope", "words"), [
    ({"rope_type": "ntk", "factor": 2.0}, NTK_REFUSED),
    ({"type": "ntk", "factor": 2.0}, NTK_REFUSED),
    ({"rope_type": "dynamic"}, "missing factor: transformers refuses rope_type dynamic without it"),
    ({"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0},
     "missing high_freq_factor: transformers refuses rope_type llama3 without it"),
    ({"rope_type": "longrope", "short_factor": [1.0]}, LONGROPE_REFUSED),
])
def test_a_trinity_rope_scaling_is_judged_by_the_rule_a_config_json_is_read_by(tmp_path: Path, rope: dict[str, Any],
                                                                               words: str):
    config = {**_published("Qwen3-8B"), "rope_scaling": rope}
    assert _refusal(tmp_path, config) == f"rope_scaling: {words}"
    assert _rope_problems(rope, load_catalog().model("8B")) == [("rope-scaling-wrong", f"model.rope_scaling: {words}")]


@pytest.mark.parametrize("rope", [
    {"type": "dynamic", "factor": 2.0},  # (a linear one within the native context is unneeded: test_ropeleft_s78)
    {"rope_type": "dynamic", "factor": 2.0},
    {"factor": 2.0},  # no type: default
])
def test_a_trinity_rope_scaling_transformers_builds_gets_no_such_line(rope: dict[str, Any]):
    assert _rope_problems(rope, load_catalog().model("8B")) == []


def test_past_the_native_context_the_yarn_lines_alone_speak():
    # 65536 is past Qwen3-8B's 40960: what YaRN needs is said, not transformers' rule beside it
    assert _rope_problems({"rope_type": "ntk", "factor": 1.6, "original_max_position_embeddings": 40960},
                          load_catalog().model("8B"), 65536) == [
        ("rope-scaling-wrong", "model.rope_scaling.rope_type must be yarn, got 'ntk'")]


def test_yarn_within_the_native_context_is_said_to_be_unneeded_not_incomplete():
    assert [code for code, _ in _rope_problems({"rope_type": "yarn"}, load_catalog().model("8B"))] == [
        "rope-scaling-unneeded"]


def test_phi3s_own_su_is_read_as_its_config_class_renames_it(tmp_path: Path):
    phi3 = load_model_config(_written(tmp_path, {**_published("Phi-3-mini-128k-instruct"), "rope_scaling": {
        **_published("Phi-3-mini-128k-instruct")["rope_scaling"], "type": "su"}}))
    factors = {"short_factor": [1.0], "long_factor": [1.0]}
    assert phi3.rope_scaling == "su"
    assert not [words for _, words in _rope_problems({"type": "su", **factors}, phi3) if "transformers" in words]
    assert ("rope-scaling-wrong", f"model.rope_scaling: {LONGROPE_REFUSED}") in _rope_problems(
        {"type": "su", "short_factor": [1.0]}, phi3)
    # another model's su is no type transformers builds
    assert ("rope-scaling-wrong", f"model.rope_scaling: {NTK_REFUSED.replace('ntk', 'su')}") in _rope_problems(
        {"type": "su", **factors}, load_catalog().model("8B"))
