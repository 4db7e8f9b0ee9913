"""The longest length vLLM 0.19.1 derives from a model's config.json (review s63, helper vllmlen2): a ``linear`` or
``dynamic`` scaling of the model's own, or a YaRN, times its factor; Gemma 3's ``max_position_embeddings`` with no
factor. ``--check`` refuses past it where a vLLM rollout takes the length (and not below it), and the fragment's note
and check command say the variable only where it is needed."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from command_words import trinity_config_problems
from test_llamalen_s62 import CHECK
from test_llamalen_s62 import CONFIG as LLAMA_CONFIG

from solver.tables import load_catalog, load_model_config

HF_CONFIGS = Path(__file__).parent / "data" / "hf-configs"
LLAMA_SHAPE = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
               "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
               "intermediate_size": 14336, "vocab_size": 128256, "tie_word_embeddings": False,
               "max_position_embeddings": 32768}
CONFIG = LLAMA_CONFIG.replace("/mnt/models/Llama-3.1-8B-Instruct", "MODEL_PATH")
LINEAR_REFUSED = (
    "refused: model.max_model_len 163840 is beyond the 131072 that the rollout's vLLM derives from my-linear's "
    "config.json as its longest length (its own linear RoPE scaling's factor applied to its native context of 32768): "
    "vLLM refuses it unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set before Ray starts; set it (and check that the model "
    "handles this length), or lower max_model_len to 131072")


@pytest.fixture(autouse=True)
def _no_long_length_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VLLM_ALLOW_LONG_MAX_MODEL_LEN", raising=False)


def _model_folder(tmp_path: Path, name: str, **config: object) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({**LLAMA_SHAPE, **config}), encoding="utf-8")
    return folder


def _gemma3(tmp_path: Path, **config: object) -> Path:
    gemma = json.loads((HF_CONFIGS / "gemma-2-9b.json").read_text(encoding="utf-8"))
    gemma.pop("rope_scaling", None)
    folder = tmp_path / "my-gemma3"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({**gemma, "model_type": "gemma3_text", **config}),
                                        encoding="utf-8")
    return folder


@pytest.mark.parametrize(("config", "fields"), [
    ({"rope_scaling": {"type": "linear", "factor": 4.0}}, ("linear", 131072.0, False, 131072.0)),
    ({"rope_scaling": {"rope_type": "dynamic", "factor": 2.0}}, ("dynamic", 65536.0, False, 65536.0)),
    ({"rope_parameters": {"rope_type": "linear", "factor": 1.5, "rope_theta": 1e6}},
     ("linear", 49152.0, False, 49152.0)),  # transformers 5's key
    ({"rope_scaling": {"rope_type": "linear", "factor": None}}, ("linear", None, False, 32768)),  # null is 1.0
    ({"rope_scaling": {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192,
                       "low_freq_factor": 1.0, "high_freq_factor": 4.0}},
     ("llama3", None, False, 32768)),  # vLLM applies no llama3 factor
    ({"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8192}},
     (None, 32768.0, False, 32768.0)),  # a YaRN not its own: native 8192 (its original), x 4
    ({"rope_scaling": {"rope_type": "yarn", "factor": 2.0}}, (None, 65536.0, False, 65536.0)),  # no original
    ({"model_type": "gemma3_text", "rope_scaling": {"rope_type": "linear", "factor": 8.0}},
     ("linear", None, True, 32768)),  # vLLM skips Gemma 3's factor
    ({"rope_scaling": None}, (None, None, False, 32768)),
], ids=["linear", "dynamic", "rope-parameters", "null-factor", "llama3", "yarn-original", "yarn", "gemma3", "none"])
def test_the_longest_length_vllm_derives_is_kept_from_the_config_json(tmp_path: Path, config: dict, fields: tuple):
    model = load_model_config(_model_folder(tmp_path, "m", **config))
    assert (model.rope_scaling, model.vllm_context, model.vllm_skips_rope_factor,
            model.vllm_longest_length) == fields


def test_a_yarn_not_its_own_derives_its_original_times_its_factor(tmp_path: Path):
    model = load_model_config(_model_folder(tmp_path, "m", rope_scaling={
        "rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8192}))
    assert (model.native_context, model.vllm_context, model.vllm_longest_length) == (8192, 32768.0, 32768.0)
    model = load_model_config(_model_folder(tmp_path, "n", max_position_embeddings=131072, rope_scaling={
        "rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}))
    assert (model.native_context, model.vllm_context) == (32768, 131072.0)


def test_a_catalogue_model_of_the_configs_shape_keeps_what_vllm_derives(tmp_path: Path):
    qwen = json.loads((HF_CONFIGS / "Qwen3-8B.json").read_text(encoding="utf-8"))
    folder = tmp_path / "Qwen3-8B"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({**qwen, "max_position_embeddings": 131072, "rope_scaling": {
        "rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}), encoding="utf-8")
    model = load_catalog().with_model(load_model_config(folder)).model("Qwen3-8B")
    assert (model.native_context, model.vllm_context, model.vllm_longest_length) == (32768, 131072.0, 131072.0)


def _config(tmp_path: Path, model_path: Path, text: str = CONFIG) -> Path:
    path = tmp_path / "grpo.yaml"
    path.write_text(text.replace("MODEL_PATH", str(model_path)), encoding="utf-8")
    return path


def test_a_linear_scaling_of_its_own_past_native_times_factor_is_refused_and_check_exits_1(cli, tmp_path: Path):
    folder = _model_folder(tmp_path, "my-linear", rope_scaling={"rope_type": "linear", "factor": 4.0})
    status, out, err = cli("--from-config", str(_config(tmp_path, folder)), *CHECK)
    assert (status, err) == (1, "")
    assert LINEAR_REFUSED in " ".join(out.split())
    status, out, _ = cli("--from-config", str(_config(tmp_path, folder)), *CHECK, "--json")
    current = json.loads(out)[0]["current"]
    assert (status, current["refused"], current["config_problem_codes"]) == (
        1, True, ["past-native-on-own-scaling-refused"])


@pytest.mark.parametrize("rope_scaling", [{"rope_type": "linear", "factor": 4.0},
                                          {"rope_type": "dynamic", "factor": 5}])
def test_within_native_times_factor_vllm_takes_the_length_no_line(cli, tmp_path: Path, rope_scaling: dict):
    # 163840 is past the native 32768 but within 32768 x 5; 131072 within 32768 x 4
    folder = _model_folder(tmp_path, "my-model", rope_scaling=rope_scaling)
    text = CONFIG if rope_scaling["factor"] == 5 else CONFIG.replace("163840", "131072").replace("159744", "126976")
    status, out, _ = cli("--from-config", str(_config(tmp_path, folder, text)), *CHECK, "--json")
    current = json.loads(out)[0]["current"]
    assert (status, current["refused"], current["config_problem_codes"]) == (0, False, [])
    assert "past-native-on-own-scaling" in current["plan"]["caution_codes"]  # the plan's caution stays


def _codes(model_folder: Path, mapping: dict, environ: dict[str, str] | None = None) -> list[str]:
    problems = trinity_config_problems(mapping, load_model_config(model_folder), 8, environ=environ)
    return [problem.code.value for problem in problems]


def test_a_config_jsons_own_yarn_is_refused_past_what_it_covers_only(tmp_path: Path):
    # No model.rope_scaling: vLLM takes the config.json's YaRN, 8192 x 4 = 32768 tokens.
    folder = _model_folder(tmp_path, "m", rope_scaling={"rope_type": "yarn", "factor": 4.0,
                                                        "original_max_position_embeddings": 8192})
    assert _codes(folder, {"model": {"max_model_len": 32768}}) == ["rope-scaling-missing"]
    assert _codes(folder, {"model": {"max_model_len": 32769}}) == ["rope-scaling-missing-refused"]


GEMMA_LONG = {"model": {"max_model_len": 65536, "rope_scaling": {
    "rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 32768,
    "rope_theta": 10000}}}  # a base: no line that Trinity 0.6's trainer needs one (ropecheck, s79)
GEMMA_SKIPPED = (
    "model.rope_scaling: max_model_len 65536 is beyond my-gemma3's max_position_embeddings of 32768, and the rollout's "
    "vLLM applies no RoPE scaling's factor to a Gemma 3's length: it refuses it unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 "
    "is set before Ray starts; set it (the YaRN still stretches the positions), or lower max_model_len to 32768")


def test_a_gemma_3_past_its_positions_is_refused_with_the_yarn_given(tmp_path: Path):
    folder = _gemma3(tmp_path, max_position_embeddings=32768, _name_or_path="my-gemma3")
    problems = trinity_config_problems(GEMMA_LONG, load_model_config(folder), 8)
    assert [(problem.code.value, problem.words) for problem in problems] == [
        ("rope-factor-skipped-refused", GEMMA_SKIPPED)]
    assert _codes(folder, GEMMA_LONG, {"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"}) == []
    assert _codes(folder, {**GEMMA_LONG, "mode": "train"}) == []


def test_a_gemma_3_past_its_positions_without_yarn_needs_the_variable_too(tmp_path: Path):
    folder = _gemma3(tmp_path, max_position_embeddings=32768, _name_or_path="my-gemma3")
    problems = trinity_config_problems({"model": {"max_model_len": 65536}}, load_model_config(folder), 8)
    assert [(problem.code.value, problem.words) for problem in problems] == [("rope-scaling-missing-refused", (
        "model.rope_scaling: max_model_len 65536 is beyond my-gemma3's native context of 32768, which the rollout's "
        "vLLM refuses unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set before Ray starts (it applies no RoPE scaling's "
        "factor to a Gemma 3's length): set {rope_type: yarn, factor: 2.0, original_max_position_embeddings: 32768, "
        "rope_theta: 10000} (as --write does), and set the variable"))]


def test_a_gemma_3_linear_scaling_of_its_own_is_refused_past_its_positions(tmp_path: Path):
    folder = _gemma3(tmp_path, max_position_embeddings=131072, _name_or_path="my-gemma3",
                     rope_scaling={"rope_type": "linear", "factor": 8.0})
    problems = trinity_config_problems({"model": {"max_model_len": 163840}}, load_model_config(folder), 8)
    assert [(problem.code.value, problem.words) for problem in problems] == [("past-native-on-own-scaling-refused", (
        "model.max_model_len 163840 is beyond my-gemma3's native context of 131072, which its own linear RoPE scaling "
        "provides and the rollout's vLLM takes as its longest length: vLLM refuses it unless "
        "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set before Ray starts; set it (and check that the model handles this "
        "length), or lower max_model_len to 131072"))]


def _header(out: str) -> str:
    return " ".join(line.removeprefix("#").strip() for line in out.splitlines() if line.startswith("#"))


def test_the_note_says_vllm_takes_a_length_within_native_times_factor_and_the_command_sets_nothing(cli, tmp_path):
    folder = _model_folder(tmp_path, "my-linear", rope_scaling={"rope_type": "linear", "factor": 4.0})
    status, out, _ = cli("--model-config", str(folder), "--gpu", "h800", "--len", "128k", "--gpus", "16",
                         "--emit", "trinity")
    assert status == 0
    assert ("max_model_len is beyond my-linear's native context of 32768, which its own linear RoPE scaling provides: "
            "no rope_scaling is written (YaRN would replace it). vLLM (the explorer's rollout) derives a longest "
            "max_model_len of 131072 from the model's config.json (its linear scaling's factor applied): it takes "
            "this one. Check that the model handles this length before you train at it.") in _header(out)
    assert "VLLM_ALLOW_LONG_MAX_MODEL_LEN" not in out


def test_the_note_says_vllm_refuses_past_native_times_factor_and_the_command_sets_the_variable(cli, tmp_path):
    folder = _model_folder(tmp_path, "my-linear", rope_scaling={"rope_type": "linear", "factor": 4.0})
    status, out, _ = cli("--model-config", str(folder), "--gpu", "h800", "--len", "160k", "--gpus", "16",
                         "--emit", "trinity")
    assert status == 0
    assert ("vLLM (the explorer's rollout) derives a longest max_model_len of 131072 from the model's config.json "
            "and refuses a longer one unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set (before Ray starts).") in _header(
        out)
    assert "#   VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True solve" in out


def test_a_gemma_3s_fragment_with_yarn_sets_the_variable_and_says_why(cli, tmp_path: Path):
    folder = _gemma3(tmp_path, max_position_embeddings=32768, _name_or_path="my-gemma3")
    status, out, _ = cli("--model-config", str(folder), "--gpu", "h800", "--len", "64k", "--gpus", "8",
                         "--emit", "trinity")
    assert status == 0
    assert ("vLLM (the explorer's rollout) derives a longest max_model_len of 32768 from the model's config.json and "
            "the YaRN written (it applies no RoPE scaling's factor to a Gemma 3's length) and refuses a longer one "
            "unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set (before Ray starts).") in _header(out)
    assert "#   VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 " in out and "rope_type: yarn" in out


def test_a_factor_whose_length_is_past_any_number_is_bad_input(cli, tmp_path: Path):
    folder = _model_folder(tmp_path, "huge", rope_scaling={"rope_type": "linear", "factor": 1e308})
    status, out, err = cli("--model-config", str(folder), "--gpu", "h800", "--len", "32k")
    assert (status, out) == (2, "")
    assert err == (f"solve: error: --model-config {folder / 'config.json'}: rope_scaling: factor: expected a number of "
                   "at least 1 whose product with 32768 positions is finite, got 1e+308\n")


def test_the_yarn_written_covers_the_length_as_vllm_multiplies_it(cli, tmp_path: Path):
    # 24000 x (27648 / 24000) is 27647.999999999996 in floating point, which vLLM refuses 27648 past: the factor
    # written is the float above the quotient (the fragment's own check failed on it, a traceback).
    folder = _model_folder(tmp_path, "odd", max_position_embeddings=24000)
    model = load_model_config(folder)
    assert (model.yarn_factor(27648), 24000 * model.yarn_factor(27648) >= 27648) == (1.1520000000000001, True)
    assert model.yarn_factor(30000) == 1.25  # exact where the quotient's product is the length
    status, out, _ = cli("--model-config", str(folder), "--gpu", "h800", "--len", "27648", "--gpus", "8",
                         "--emit", "trinity")
    assert status == 0
    assert ("    # max_model_len / 24000; YaRN on a model that is not Qwen's, for which rft-solver knows of no\n"
            "    # validation\n"
            "    factor: 1.1520000000000001\n") in out  # its comment past the width: above it
    assert "VLLM_ALLOW_LONG_MAX_MODEL_LEN" not in out
