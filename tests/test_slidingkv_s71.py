"""Model configs read less quietly: vLLM's sliding-window KV cache in the rollout hint (Mistral-7B-v0.1's window on
every layer, Gemma-2's and Gemma-3's local layers, Qwen's unused windows), RoPE scalings transformers refuses to
build, and a LoRA/PEFT adapter's folder given for a model's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from solver.memory import VLLM_BATCHED_TOKENS, rollout_engines, vllm_cached_tokens
from solver.tables import TableError, load_catalog, load_model_config
from solver.tables.schema import Model

HF_CONFIGS = Path(__file__).parent / "data" / "hf-configs"
GIB = 2**30


def _published(name: str) -> dict[str, Any]:
    return json.loads((HF_CONFIGS / f"{name}.json").read_text(encoding="utf-8"))


def _written(tmp_path: Path, config: dict[str, Any]) -> Path:
    path = tmp_path / "config.json"
    tmp_path.mkdir(exist_ok=True)
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def _refusal(tmp_path: Path, config: dict[str, Any]) -> str:
    path = _written(tmp_path, config)
    with pytest.raises(TableError) as refused:
        load_model_config(path)
    return str(refused.value).removeprefix(f"{path}: ")


@pytest.mark.parametrize(("name", "window"), [
    ("Mistral-7B-v0.1", (4096, 32)),  # every layer local
    ("gemma-2-9b", (4096, 21)),  # every other layer of 42
    ("gemma-3-1b-pt", (512, 22)),  # five local to one global (sliding_window_pattern 6) of 26
    ("Phi-3-mini-128k-instruct", (262144, 32)),  # a window past any length it runs at
    ("Qwen2.5-7B", None),  # sliding_window 131072, but use_sliding_window false
    ("Qwen3-8B", None),
    ("Mistral-7B-v0.3", None),  # sliding_window null
    ("Llama-3.2-1B", None),
])
def test_published_configs_give_the_window_vllm_caches_their_local_layers_over(name: str, window: object):
    assert load_model_config(HF_CONFIGS / f"{name}.json").vllm_sliding_window == window


@pytest.mark.parametrize(("changes", "window"), [
    ({"layer_types": ["full_attention"] + ["sliding_attention"] * 25}, (512, 25)),  # newer configs' list wins
    ({"layer_types": ["full_attention"] * 26}, (512, 26)),  # one type only: vLLM sets the window for every layer
    ({"sliding_window_pattern": 2}, (512, 13)),
    ({"sliding_window": 0}, None),  # vLLM's "none"
    ({"sliding_window": None}, None),
])
def test_gemma3_local_layers_follow_layer_types_else_the_pattern(tmp_path: Path, changes: dict, window: object):
    assert load_model_config(_written(tmp_path, {**_published("gemma-3-1b-pt"), **changes})).vllm_sliding_window \
        == window


@pytest.mark.parametrize(("changes", "window"), [
    ({"use_sliding_window": True, "sliding_window": 4096}, (4096, 36)),  # max_window_layers 36: one type, all local
    ({"use_sliding_window": True, "sliding_window": 4096, "max_window_layers": 0}, (4096, 36)),
    ({"use_sliding_window": False, "sliding_window": 4096, "max_window_layers": 0}, None),
    ({"use_sliding_window": None, "sliding_window": 4096}, None),
])
def test_qwen_windows_count_only_with_use_sliding_window(tmp_path: Path, changes: dict, window: object):
    assert load_model_config(_written(tmp_path, {**_published("Qwen3-8B"), **changes})).vllm_sliding_window == window


def test_a_mistral_config_without_a_window_key_takes_transformers_default(tmp_path: Path):
    config = _published("Mistral-7B-v0.1")
    del config["sliding_window"]
    assert load_model_config(_written(tmp_path, config)).vllm_sliding_window == (4096, 32)


@pytest.mark.parametrize(("source", "changes", "refusal"), [
    ("Mistral-7B-v0.1", {"sliding_window": "4k"},
     "sliding_window: expected a whole number from 1 to 1073741824, got '4k'"),
    ("Qwen3-8B", {"use_sliding_window": "yes"}, "use_sliding_window: expected true, false or null, got 'yes'"),
    ("gemma-3-1b-pt", {"layer_types": []},
     ("layer_types: expected a list of num_hidden_layers (26) attention types such as \"sliding_attention\" or "
      "\"full_attention\", got []")),
    ("gemma-3-1b-pt", {"sliding_window_pattern": 0},
     "sliding_window_pattern: expected a whole number from 1 to 16384, got 0"),
    ("Qwen3-8B", {"use_sliding_window": True, "sliding_window": 4096, "max_window_layers": -1},
     "max_window_layers: expected a whole number from 0 to 16384, got -1"),
])
def test_a_malformed_window_is_refused_in_one_line(tmp_path: Path, source: str, changes: dict, refusal: str):
    assert _refusal(tmp_path, {**_published(source), **changes}) == refusal


def test_local_layers_cache_the_window_and_one_step_at_most_the_sequence():
    mistral = load_model_config(HF_CONFIGS / "Mistral-7B-v0.1.json")
    gemma = load_model_config(HF_CONFIGS / "gemma-2-9b.json")
    step = 4096 - 1 + 2048
    assert VLLM_BATCHED_TOKENS == 2048
    assert [vllm_cached_tokens(mistral, length) for length in (2048, 6143, 32768)] == [
        32 * 2048, 32 * step, 32 * step]
    assert vllm_cached_tokens(gemma, 32768) == 21 * 32768 + 21 * step
    # the rollout hint's KV cache: 8 KV heads of 128 (Mistral) or 256 (Gemma-2), keys and values in bf16
    assert rollout_engines(mistral, 80.0, 8, 32768).kv_cache_gib == pytest.approx(32 * step * 8 * 128 * 4 / GIB)
    assert rollout_engines(gemma, 80.0, 8, 32768).kv_cache_gib == pytest.approx(
        (21 * 32768 + 21 * step) * 8 * 256 * 4 / GIB)


def test_gemma2_on_l40s_fits_engines_of_one_gpu_that_its_whole_kv_cache_would_not(cli):
    # 17.2 GiB of weights; at 8192 tokens 2.30 GiB of KV cache with the window, 2.63 without: half of the 39.5 GiB
    # vLLM takes of an L40S holds the first (19.51 GiB) and not the second (19.84 GiB).
    gemma = load_model_config(HF_CONFIGS / "gemma-2-9b.json")
    memory = load_catalog().gpu("l40s").memory_gib
    engines = rollout_engines(gemma, memory, 2, 8192)
    whole = rollout_engines(gemma.model_copy(update={"vllm_sliding_window": None}), memory, 2, 8192)
    assert (engines.size, whole.size) == (1, 2)
    status, out, err = cli("--model-config", str(HF_CONFIGS / "gemma-2-9b.json"), "--gpu", "l40s", "--gpus", "4",
                           "--rollout-gpus", "2", "--len", "8k", "--emit", "trinity")
    assert status == 0, err
    assert "    engine_num: 2  # one GPU each\n    tensor_parallel_size: 1\n" in out
    assert "rollout engines of tensor-parallel size" not in err


def test_a_catalogue_models_config_keeps_its_window(tmp_path: Path):
    config = {**_published("Qwen3-8B"), "use_sliding_window": True, "sliding_window": 8192}
    model = load_catalog().with_model(load_model_config(_written(tmp_path / "Qwen3-8B", config))).model("8B")
    assert (model.name, model.vllm_sliding_window) == ("Qwen3-8B", (8192, 36))


def test_a_model_with_more_local_layers_than_layers_is_refused():
    fields = {**load_model_config(HF_CONFIGS / "Mistral-7B-v0.1.json").model_dump(), "vllm_sliding_window": (4096, 33)}
    with pytest.raises(ValueError, match="vllm_sliding_window: 33 sliding-window layers of 32: expected at most "
                                         "num_layers"):
        Model.model_validate(fields)


ACCEPTED = "default, linear, dynamic, yarn, longrope, llama3 or proportional"


@pytest.mark.parametrize(("scaling", "refusal"), [
    ({"rope_scaling": {"rope_type": "ntk", "factor": 2.0}},
     f"rope_scaling: rope_type 'ntk': transformers builds no such RoPE scaling; it builds {ACCEPTED}"),
    ({"rope_scaling": {"type": "su", "short_factor": [1.0], "long_factor": [1.0]}},  # Phi-3's name alone
     f"rope_scaling: rope_type 'su': transformers builds no such RoPE scaling; it builds {ACCEPTED}"),
    ({"rope_scaling": {"rope_type": "linear"}},
     "rope_scaling: missing factor: transformers refuses rope_type linear without it"),
    ({"rope_scaling": {"type": "dynamic"}},
     "rope_scaling: missing factor: transformers refuses rope_type dynamic without it"),
    ({"rope_scaling": {"rope_type": "yarn", "original_max_position_embeddings": 32768}},
     "rope_scaling: missing factor: transformers refuses rope_type yarn without it"),
    ({"rope_scaling": {"rope_type": "llama3", "factor": 8.0, "high_freq_factor": 4.0}},
     "rope_scaling: missing low_freq_factor: transformers refuses rope_type llama3 without it"),
    ({"rope_scaling": {"rope_type": "longrope", "long_factor": [1.0]}},
     "rope_scaling: missing short_factor: transformers refuses rope_type longrope without it"),
    ({"rope_parameters": {"full_attention": {"rope_type": "linear", "factor": 2.0},
                          "sliding_attention": {"rope_type": "ntk"}}},  # each layer type's is checked
     f"rope_parameters: rope_type 'ntk': transformers builds no such RoPE scaling; it builds {ACCEPTED}"),
])
def test_a_rope_scaling_transformers_refuses_is_refused(tmp_path: Path, scaling: dict, refusal: str):
    assert _refusal(tmp_path, {**_published("Qwen3-8B"), **scaling}) == refusal


@pytest.mark.parametrize(("model_type", "scaling", "own"), [
    # Phi-3's class renames it; its factors one per pair of Qwen3-8B's 128 rotary dimensions, as it checks them
    ("phi3", {"type": "su", "short_factor": [1.0] * 64, "long_factor": [1.0] * 64}, "su"),
    ("qwen3", {"rope_type": "dynamic", "factor": None}, "dynamic"),  # given, if null: transformers warns only
    ("qwen3", {"rope_type": "proportional"}, "proportional"),
    ("qwen3", {"factor": 2.0}, None),  # no type: transformers' default
])
def test_rope_scalings_transformers_builds_are_read(tmp_path: Path, model_type: str, scaling: dict, own: object):
    config = {**_published("Qwen3-8B"), "model_type": model_type, "rope_scaling": scaling}
    assert load_model_config(_written(tmp_path, config)).rope_scaling == own


ADAPTER_ADVICE = "give its base model's config.json (Qwen/Qwen3-8B), whose shape the adapter trains"


def test_an_adapter_folder_names_its_base_model(cli):
    folder = HF_CONFIGS / "Qwen3-8B-lora"
    with pytest.raises(TableError) as refused:
        load_model_config(folder)
    assert str(refused.value) == (f"{folder / 'config.json'}: missing, and adapter_config.json beside it is a "
                                  f"LoRA/PEFT adapter's, not a model's: {ADAPTER_ADVICE}")
    status, out, err = cli("--model-config", str(folder), "--gpu", "h100", "--gpus", "8", "--len", "32k")
    assert (status, out) == (2, "")
    assert err == f"solve: error: --model-config {refused.value}\n"


def test_an_adapter_config_given_as_the_file_is_refused():
    path = HF_CONFIGS / "Qwen3-8B-lora" / "adapter_config.json"
    with pytest.raises(TableError) as refused:
        load_model_config(path)
    assert str(refused.value) == (f"{path}: a LoRA/PEFT adapter's config (peft_type 'LORA'), not a model's: "
                                  f"{ADAPTER_ADVICE}")


def test_an_unreadable_adapter_names_no_base_model(tmp_path: Path):
    (tmp_path / "adapter_config.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(TableError) as refused:
        load_model_config(tmp_path)
    assert str(refused.value) == (f"{tmp_path / 'config.json'}: missing, and adapter_config.json beside it is a "
                                  "LoRA/PEFT adapter's, not a model's: give its base model's config.json, whose "
                                  "shape the adapter trains")


def test_a_folder_with_neither_file_is_still_unreadable(tmp_path: Path):
    with pytest.raises(TableError, match=r"config\.json: cannot read: No such file or directory$"):
        load_model_config(tmp_path)
