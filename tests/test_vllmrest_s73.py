"""vLLM's own rules, judged only where a vLLM rollout takes the model: a Qwen2 or Qwen3 config whose layers mix
sliding and full attention (which vLLM refuses to build) planned for a trainer alone, with a note."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_slidingkv_s71 import _published, _refusal, _written
from test_vllmwin_s72 import VLLM_REFUSES

import solver
from solver.tables import TableError, load_catalog, load_model_config
from solver.trinity import trinity_config_problems

MIXED = {"use_sliding_window": True, "sliding_window": 4096, "max_window_layers": 18}
MIXED_REFUSAL = ("use_sliding_window with max_window_layers 18 gives a qwen3 model layers of mixed attention "
                 "(18 full_attention, 18 sliding_attention of 36), " + VLLM_REFUSES.format(mwl=18)
                 + "max_window_layers 0 or 36 (vLLM then windows every layer), or use_sliding_window false")
PLANNED_ANYWAY = ("; planned all the same, as no vLLM rollout starts here (no rollout GPUs), and the trainer's memory "
                  "does not depend on it\n")


def _mixed_qwen3(folder: Path) -> Path:
    """A Qwen3-8B config.json whose layers vLLM refuses to build, in `folder`."""
    return _written(folder, {**_published("Qwen3-8B"), **MIXED})


def test_read_for_a_trainer_alone_the_refusal_is_kept_not_raised(tmp_path: Path):
    path = _mixed_qwen3(tmp_path)
    with pytest.raises(TableError, match="^" + f"{path}: {MIXED_REFUSAL}".replace("(", r"\(").replace(")", r"\)")):
        load_model_config(path)
    model = load_model_config(path, vllm_rollout=False)
    assert (model.vllm_refusal, model.vllm_sliding_window) == (MIXED_REFUSAL, None)
    # a config of Qwen3-8B's shape is the catalogue's model, which keeps the refusal too
    assert load_catalog().with_model(model).model(model.name).vllm_refusal == MIXED_REFUSAL
    assert load_model_config(_written(tmp_path / "plain", _published("Qwen3-8B")), vllm_rollout=False).vllm_refusal \
        is None


def test_rollout_gpus_0_plans_the_trainer_with_a_note(cli, tmp_path: Path):
    path = _mixed_qwen3(tmp_path / "Qwen3-8B")
    asked = ("--model-config", str(path), "--gpu", "h100", "--gpus", "8", "--len", "8k")
    status, out, err = cli(*asked, "--rollout-gpus", "0")
    assert status == 0 and "max_model_len  8192" in out
    assert err == f"solve: note: Qwen3-8B: {MIXED_REFUSAL}{PLANNED_ANYWAY}"
    for rollout in (("--rollout-gpus", "2"), ()):  # a rollout beside the trainer, or one left unsaid: refused
        status, out, err = cli(*asked, *rollout)
        assert (status, out, err) == (2, "", f"solve: error: --model-config {path}: {MIXED_REFUSAL}\n")


@pytest.mark.parametrize(("mode", "status"), [("train", 0), ("both", 2)])
def test_a_trinity_config_plans_it_where_it_starts_no_vllm_rollout(cli, tmp_path: Path, mode: str, status: int):
    path = _mixed_qwen3(tmp_path / "Qwen3-8B")
    config = tmp_path / "trinity.yaml"
    config.write_text(json.dumps({"mode": mode, "model": {"model_path": str(path.parent), "max_model_len": 8192},
                                  "cluster": {"node_num": 1, "gpu_per_node": 8}}), encoding="utf-8")
    done, out, err = cli("--from-config", str(config), "--gpu", "h100")
    assert done == status
    if mode == "train":
        assert "max_model_len  8192" in out and err.endswith(f"solve: note: Qwen3-8B: {MIXED_REFUSAL}{PLANNED_ANYWAY}")
    else:
        assert (out, err) == ("", f"solve: error: {path}: {MIXED_REFUSAL}\n")
    # mutants59: the API's check_config reads the local config.json so too
    if mode == "train":
        assert [answer.model for answer in solver.check_config(config, gpu="h100").answers] == ["Qwen3-8B"]
    else:
        with pytest.raises(TableError, match=re.escape(f"{path}: {MIXED_REFUSAL}")):
            solver.check_config(config, gpu="h100")


def _as(model_type: str, **changes: object) -> dict[str, object]:
    """Qwen3-8B's config.json under another model type, with `changes`."""
    return {**_published("Qwen3-8B"), "model_type": model_type, **changes}


SEED_OSS_REFUSAL = ("sliding_window 4096 with max_window_layers 18 gives a seed_oss model a sliding window in all 36 "
                    "layers, which vLLM 0.19.1 refuses to build unless max_window_layers is num_hidden_layers "
                    "(seed_oss.py:281-293), so Trinity's rollout cannot start; accepted: max_window_layers 36, or no "
                    "max_window_layers, or sliding_window 0 or null")


@pytest.mark.parametrize(("config", "refusal"), [
    # MiMo's vLLM class builds on Qwen2's model, its config class on Qwen2's: the same rule
    (_as("mimo", **MIXED), MIXED_REFUSAL.replace("qwen3 model", "mimo model")),
    (_as("mimo", layer_types=["full_attention"] * 35 + ["sliding_attention"], max_window_layers=30),
     "layer_types give a mimo model layers of mixed attention (35 full_attention, 1 sliding_attention of 36), "
     + VLLM_REFUSES.format(mwl=30) + "layer_types of one type, or max_window_layers 36"),
    # Seed-OSS's vLLM class refuses its model-wide window beside another max_window_layers
    (_as("seed_oss", sliding_window=4096, max_window_layers=18), SEED_OSS_REFUSAL),
])
def test_other_classes_with_qwen2s_limitation_are_refused_alike(tmp_path: Path, config: dict[str, object],
                                                                refusal: str):
    assert _refusal(tmp_path, config) == refusal
    assert load_model_config(tmp_path / "config.json", vllm_rollout=False).vllm_refusal == refusal


@pytest.mark.parametrize(("config", "window"), [
    (_as("mimo", sliding_window=4096, max_window_layers=18), None),  # no use_sliding_window: no window kept
    # no sliding_window key: Qwen2's default window, on every layer
    ({key: value for key, value in _as("mimo", use_sliding_window=True, max_window_layers=0).items()
      if key != "sliding_window"}, (4096, 36)),
    (_as("seed_oss", sliding_window=4096, max_window_layers=36), (4096, 36)),
    (_as("seed_oss", sliding_window=4096), (4096, 36)),  # no max_window_layers: vLLM asserts nothing
    (_as("seed_oss", sliding_window=0, max_window_layers=18), None),  # 0 is vLLM's "none"
    # layers of mixed types: vLLM sets no model-wide window, and Seed-OSS's class none per layer
    (_as("seed_oss", sliding_window=4096, max_window_layers=18,
         layer_types=["full_attention"] * 18 + ["sliding_attention"] * 18), None),
])
def test_what_those_classes_build_is_counted_as_vllm_caches_it(tmp_path: Path, config: dict[str, object],
                                                               window: object):
    model = load_model_config(_written(tmp_path, config))
    assert (model.vllm_refusal, model.vllm_sliding_window) == (None, window)


def _rollout_rope_lines(rope: dict[str, object], top: dict[str, object] | None = None,
                        rollout: dict[str, object] | None = None) -> list[str]:
    """The rope-scaling-unbuilt-refused lines of a Qwen3-8B config whose rollout model gives `rope` of its own (and
    the keys `rollout`; the config the top-level keys `top`)."""
    mapping = {**(top or {}), "model": {"model_path": "Qwen/Qwen3-8B", "max_model_len": 32768},
               "explorer": {"rollout_model": {"rope_scaling": rope, **(rollout or {})}}}
    return [problem.words for problem in trinity_config_problems(mapping, load_catalog().model("8B"), 8)
            if problem.code.value == "rope-scaling-unbuilt-refused"]


ROLLOUT_ROPE = "explorer.rollout_model.rope_scaling"
HANDED = ("fails as it starts, as Trinity hands vLLM the mapping as the model's rope_parameters, past transformers' "
          "filling-in")
VLLM_TYPES = ("default, proportional, mllama4, linear, ntk, dynamic, xdrope, llama3, yarn, deepseek_yarn, "
              "deepseek_llama_scaling, longrope or openpangu")


@pytest.mark.parametrize(("rope", "lines"), [
    # handed to vLLM as it is: no one fills original_max_position_embeddings in, which vLLM reads
    ({"rope_type": "yarn", "factor": 2.0}, [
        (f"{ROLLOUT_ROPE}: missing original_max_position_embeddings: vLLM 0.19.1 refuses rope_type yarn "
         f"without it, and {HANDED}; add original_max_position_embeddings: 40960")]),
    ({"rope_type": "su", "short_factor": [1.0], "long_factor": [1.0]}, [
        (f"{ROLLOUT_ROPE}: rope_type 'su': vLLM 0.19.1 builds no such RoPE scaling; it builds {VLLM_TYPES}, and "
         f"{HANDED}; give it one of those")]),
    ({"rope_type": "dynamic", "beta": 2.0}, [
        (f"{ROLLOUT_ROPE}: missing alpha or factor: vLLM 0.19.1 refuses rope_type dynamic without it, and "
         f"{HANDED}; add it")]),
    # types vLLM builds, transformers not: no line (the rule is vLLM's, not the config.json's)
    ({"rope_type": "ntk", "factor": 2.0}, []),
    ({"rope_type": "dynamic", "alpha": 2.0}, []),
    ({"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 40960}, []),
])
def test_the_rollouts_own_rope_scaling_is_judged_as_vllm_builds_it(rope: dict[str, object], lines: list[str]):
    assert _rollout_rope_lines(rope) == lines


@pytest.mark.parametrize(("top", "rollout"), [({"mode": "train"}, None), (None, {"engine_type": "sglang"})])
def test_no_vllm_rollout_no_such_line(top: dict[str, object] | None, rollout: dict[str, object] | None):
    assert _rollout_rope_lines({"rope_type": "yarn", "factor": 2.0}, top, rollout) == []


def _phi3(**rope: object) -> dict[str, object]:
    """Phi-3-mini-128k-instruct's config.json with its RoPE scaling's keys changed as `rope` gives them."""
    config = _published("Phi-3-mini-128k-instruct")
    return {**config, "rope_scaling": {**config["rope_scaling"], **rope}}


PHI3_FACTORS = "transformers' Phi-3 config class takes a list of 48 numbers (one per pair of rotary dimensions), got "


@pytest.mark.parametrize(("config", "refusal"), [
    (_phi3(type="linear", factor=2.0), ("rope_type 'linear': transformers' Phi-3 config class takes none but "
                                        "default, longrope, su or yarn (su and yarn read as longrope)")),
    (_phi3(short_factor=[1.0] * 47), f"short_factor: {PHI3_FACTORS}[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, ...]"),
    (_phi3(long_factor=["a"] * 48), f"long_factor: {PHI3_FACTORS}['a', 'a', 'a', 'a', 'a', 'a', ...]"),
])
def test_phi3s_own_rope_rules_refuse_what_its_config_class_refuses(tmp_path: Path, config: dict[str, object],
                                                                   refusal: str):
    assert _refusal(tmp_path, config) == f"rope_scaling: {refusal}"


def test_phi3s_yarn_is_read_as_the_longrope_its_config_class_makes_it(tmp_path: Path):
    # no factor needed, and vLLM derives the length from max_position_embeddings, as for longrope
    model = load_model_config(_written(tmp_path, _phi3(type="yarn")))
    assert (model.rope_scaling, model.native_context, model.vllm_context, model.config_yarn_factor) == (
        "longrope", 131072, None, None)


@pytest.mark.parametrize(("bidirectional", "window"), [(True, (257, 22)), (False, (512, 22))])
def test_gemma3s_bidirectional_attention_halves_the_window_vllm_caches(tmp_path: Path, bidirectional: bool,
                                                                       window: tuple[int, int]):
    config = {**_published("gemma-3-1b-pt"), "use_bidirectional_attention": bidirectional}
    assert load_model_config(_written(tmp_path, config)).vllm_sliding_window == window
