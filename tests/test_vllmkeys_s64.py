"""vLLM 0.19.1's length keys (review s64, helper vllmkeys): vLLM derives a model's length from the smallest of a
config.json's length keys (null ones skipped), a ``model_max_length`` in its place, then its RoPE scaling's factor
(``_get_and_verify_max_len``, vllm/config/model.py, from ``derive_max_model_len_and_key``,
transformers_utils/model_arch_config_convertor.py); past it ``--check`` refuses (``past-derived-length-refused``) and
the plan exports vLLM's variable. A ``model.rope_scaling`` given for a model with a scaling of its own is judged as
vLLM takes it, in place of the config.json's."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from solver.tables import load_model_config
from solver.trinity import trinity_config_problems

LLAMA_SHAPE = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
               "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
               "intermediate_size": 14336, "vocab_size": 128256, "tie_word_embeddings": False,
               "max_position_embeddings": 32768}
SMALLER_KEYS = ("n_positions", "max_seq_len", "seq_length", "max_target_positions", "max_sequence_length",
                "max_seq_length", "seq_len")
LINEAR_4 = {"rope_scaling": {"rope_type": "linear", "factor": 4.0}}


@pytest.fixture(autouse=True)
def _no_long_length_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VLLM_ALLOW_LONG_MAX_MODEL_LEN", raising=False)


def _folder(tmp_path: Path, name: str = "keyed", **config: object) -> Path:
    folder = tmp_path / name
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({**LLAMA_SHAPE, "_name_or_path": name, **config}),
                                        encoding="utf-8")
    return folder


def _lengths(tmp_path: Path, **config: object) -> tuple[object, ...]:
    model = load_model_config(_folder(tmp_path, **config))
    return model.native_context, model.vllm_length_key, model.vllm_context, model.vllm_longest_length


@pytest.mark.parametrize("key", SMALLER_KEYS)
def test_each_key_alone_below_max_position_embeddings_is_the_length_vllm_derives(tmp_path: Path, key: str):
    assert _lengths(tmp_path, **{key: 8192}) == (32768, (key, 8192), 8192, 8192)


@pytest.mark.parametrize("key", SMALLER_KEYS)
def test_each_key_alone_above_max_position_embeddings_changes_nothing(tmp_path: Path, key: str):
    assert _lengths(tmp_path, **{key: 65536}) == (32768, None, None, 32768)


def test_of_two_keys_vllm_takes_the_smaller_and_the_first_on_a_tie(tmp_path: Path):
    assert _lengths(tmp_path, seq_length=16384, n_positions=8192)[1:] == (("n_positions", 8192), 8192, 8192)
    assert _lengths(tmp_path / "tie", seq_len=8192, max_seq_len=8192)[1] == ("max_seq_len", 8192)


@pytest.mark.parametrize("key", SMALLER_KEYS)
def test_a_key_set_to_null_is_skipped(tmp_path: Path, key: str):
    assert _lengths(tmp_path, **{key: None}) == (32768, None, None, 32768)


def test_a_model_max_length_stands_in_place_of_the_smallest_above_or_below(tmp_path: Path):
    # Command-R's: vLLM takes it as the length whatever the other keys say.
    assert _lengths(tmp_path, model_max_length=131072, seq_length=8192) == (
        32768, ("model_max_length", 131072), 131072, 131072)
    assert _lengths(tmp_path / "below", model_max_length=16384) == (32768, ("model_max_length", 16384), 16384, 16384)


def test_the_scaling_factor_applies_to_the_smallest_key(tmp_path: Path):
    assert _lengths(tmp_path, seq_length=4096, **LINEAR_4)[2:] == (16384, 16384)
    assert _lengths(tmp_path / "mml", model_max_length=65536, **LINEAR_4)[2:] == (262144, 262144)
    llama3 = {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192,
              "low_freq_factor": 1.0, "high_freq_factor": 4.0}
    assert _lengths(tmp_path / "llama3", seq_length=16384, rope_scaling=llama3)[2:] == (16384, 16384)  # no factor


def test_a_yarn_in_the_config_json_takes_its_original_length_in_place_of_the_keys(tmp_path: Path):
    yarn = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8192}
    assert _lengths(tmp_path, seq_length=4096, rope_scaling=yarn) == (8192, ("seq_length", 4096), 32768, 32768)
    # A model_max_length longer than the YaRN's reach: vLLM takes a length up to it besides.
    assert _lengths(tmp_path / "mml", model_max_length=65536, rope_scaling=yarn)[2:] == (65536, 65536)


def test_the_yarn_written_reaches_past_a_smaller_key_and_a_model_max_length_besides(tmp_path: Path):
    model = load_model_config(_folder(tmp_path, seq_length=8192))
    assert (model.vllm_longest_as_written(16384), model.vllm_longest_as_written(65536)) == (8192, 65536)
    model = load_model_config(_folder(tmp_path / "mml", model_max_length=131072))
    assert (model.vllm_allowed_length, model.vllm_longest_as_written(65536)) == (131072, 131072)


@pytest.mark.parametrize(("value", "shown"), [("8k", "'8k'"), (0, "0"), (4096.0, "4096.0"), (True, "true")])
def test_a_length_key_that_is_no_whole_number_is_bad_input(cli, tmp_path: Path, value: object, shown: str):
    folder = _folder(tmp_path, seq_length=value)
    status, out, err = cli("--model-config", str(folder), "--gpu", "h800", "--len", "8k")
    assert (status, out) == (2, "")
    assert err == (f"solve: error: --model-config {folder / 'config.json'}: seq_length: expected a whole number from "
                   f"1 to 1073741824, got {shown}\n")


def _codes(model_folder: Path, mapping: dict, environ: dict[str, str] | None = None) -> list[tuple[str, str]]:
    problems = trinity_config_problems(mapping, load_model_config(model_folder), 8, environ=environ)
    return [(problem.code.value, problem.words) for problem in problems]


PAST_SEQ_LENGTH = (
    "model.max_model_len 16384 is beyond the 8192 that the rollout's vLLM derives from keyed's config.json as its "
    "longest length (its seq_length of 8192, the smallest of its length keys): vLLM refuses it unless "
    "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set before Ray starts; set it (and check that the model handles this length), "
    "or lower max_model_len to 8192")


def test_a_length_within_native_past_a_smaller_key_is_refused_where_vllm_takes_it(tmp_path: Path):
    folder = _folder(tmp_path, seq_length=8192)
    assert _codes(folder, {"model": {"max_model_len": 16384}}) == [("past-derived-length-refused", PAST_SEQ_LENGTH)]
    assert _codes(folder, {"model": {"max_model_len": 8192}}) == []
    assert _codes(folder, {"model": {"max_model_len": 16384}}, {"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"}) == []
    assert _codes(folder, {"mode": "train", "model": {"max_model_len": 16384}}) == []


def test_a_smaller_key_under_an_own_scaling_is_named_in_the_refusal(tmp_path: Path):
    folder = _folder(tmp_path, seq_length=4096, **LINEAR_4)
    assert _codes(folder, {"model": {"max_model_len": 20480}}) == [("past-native-on-own-scaling-refused", (
        "model.max_model_len 20480 is beyond the 16384 that the rollout's vLLM derives from keyed's config.json as its "
        "longest length (its own linear RoPE scaling's factor applied to its seq_length of 4096, the smallest of its "
        "length keys): vLLM refuses it unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set before Ray starts; set it (and "
        "check that the model handles this length), or lower max_model_len to 16384"))]


def test_a_yarn_short_of_the_length_within_a_model_max_length_is_not_refused(tmp_path: Path):
    # vLLM takes a length up to the config.json's model_max_length past the YaRN's reach (no refusal, the guide's
    # words stay).
    folder = _folder(tmp_path, max_position_embeddings=32768, model_max_length=131072)
    short = {"model": {"max_model_len": 65536, "rope_scaling": {
        "rope_type": "yarn", "factor": 1.5, "original_max_position_embeddings": 32768, "rope_theta": 10000}}}
    assert [code for code, _ in _codes(folder, short)] == ["rope-scaling-wrong"]
    assert [code for code, _ in _codes(_folder(tmp_path, "plain"), short)] == ["rope-scaling-short-refused"]


def test_the_plan_past_a_smaller_key_exports_the_variable_and_the_note_names_no_yarn(cli, tmp_path: Path):
    folder = _folder(tmp_path, seq_length=8192)
    status, out, _ = cli("--model-config", str(folder), "--gpu", "h800", "--len", "16k", "--gpus", "8")
    assert status == 0
    assert ("# vLLM's rollout takes a max_model_len past the 8192 it derives from the model's config only with this, "
            "before Ray starts:\nexport VLLM_ALLOW_LONG_MAX_MODEL_LEN=1\n") in out
    status, out, _ = cli("--model-config", str(folder), "--gpu", "h800", "--len", "16k", "--gpus", "8",
                         "--emit", "trinity")
    header = " ".join(line.removeprefix("#").strip() for line in out.splitlines() if line.startswith("#"))
    assert status == 0
    assert ("vLLM (the explorer's rollout) derives a longest max_model_len of 8192 from the model's config.json and "
            "refuses a longer one unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set (before Ray starts).") in header
    status, out, _ = cli("--model-config", str(folder), "--gpu", "h800", "--len", "8k", "--gpus", "8")
    assert status == 0 and "VLLM_ALLOW_LONG_MAX_MODEL_LEN" not in out


def _given(factor: float, rope_type: str = "yarn") -> dict:
    return {"model": {"max_model_len": 100000, "rope_scaling": {
        "rope_type": rope_type, "factor": factor, "original_max_position_embeddings": 32768,
        "rope_theta": 10000}}}  # a base: no line that Trinity 0.6's trainer needs one (ropecheck, s79)


REPLACES = ("model.rope_scaling ('yarn') would replace keyed's own linear RoPE scaling: the rollout's vLLM takes the "
            "given one, not the config.json's, and derives {given} from it as its longest length (from the "
            "config.json's: 131072); remove it")


def test_a_scaling_given_over_the_models_own_is_judged_by_the_given_one(tmp_path: Path):
    # The config.json's own linear x4 gives 131072; vLLM takes the given YaRN in its place: 32768 x 2 = 65536.
    folder = _folder(tmp_path, **LINEAR_4)
    assert _codes(folder, _given(2.0)) == [
        ("rope-scaling-replaces-own", REPLACES.format(given=65536)),
        ("rope-scaling-short-refused", (
            "model.rope_scaling: max_model_len 100000 is beyond the 65536 that the rollout's vLLM derives from the "
            "model.rope_scaling given, which it takes in place of keyed's own linear RoPE scaling in its config.json: "
            "it refuses it unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set before Ray starts; remove "
            "model.rope_scaling"))]
    assert _codes(folder, _given(4.0)) == [("rope-scaling-replaces-own", REPLACES.format(given=131072))]
    assert _codes(folder, _given(2.0), {"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"}) == [
        ("rope-scaling-replaces-own", REPLACES.format(given=65536))]


def test_a_scaling_given_of_the_models_own_type_is_judged_by_the_given_one_too(tmp_path: Path):
    # No line says it replaces the own one (the same type), but vLLM takes its factor: 32768 x 2 = 65536.
    folder = _folder(tmp_path, **LINEAR_4)
    assert [code for code, _ in _codes(folder, _given(2.0, "linear"))] == ["rope-scaling-short-refused"]
    assert _codes(folder, _given(4.0, "linear")) == []


def test_a_given_scaling_short_of_the_own_one_says_to_lower_the_length_past_that_too(tmp_path: Path):
    folder = _folder(tmp_path, **LINEAR_4)
    mapping = _given(2.0)
    mapping["model"]["max_model_len"] = 140000
    assert _codes(folder, mapping)[1][1].endswith(
        "remove model.rope_scaling, and set the variable or lower max_model_len to 131072")


def test_a_gemma_3s_own_scaling_with_a_yarn_given_takes_no_factor_from_either(tmp_path: Path):
    gemma = json.loads((Path(__file__).parent / "data" / "hf-configs" / "gemma-2-9b.json").read_text(encoding="utf-8"))
    folder = tmp_path / "my-gemma3"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({
        **gemma, "model_type": "gemma3_text", "_name_or_path": "my-gemma3", "max_position_embeddings": 131072,
        "rope_scaling": {"rope_type": "linear", "factor": 8.0}}), encoding="utf-8")
    mapping = {"model": {"max_model_len": 163840, "rope_scaling": {
        "rope_type": "yarn", "factor": 1.25, "original_max_position_embeddings": 131072}}}
    assert _codes(folder, mapping)[1] == ("rope-scaling-short-refused", (
        "model.rope_scaling: max_model_len 163840 is beyond the 131072 that the rollout's vLLM derives from the "
        "model.rope_scaling given, which it takes in place of my-gemma3's own linear RoPE scaling in its config.json "
        "(it applies no RoPE scaling's factor to a Gemma 3's length): it refuses it unless "
        "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set before Ray starts; remove model.rope_scaling, and set the variable or "
        "lower max_model_len to 131072"))
