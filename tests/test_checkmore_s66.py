"""`solve --check`'s gaps left open (review s66, helper checkmore): transformers' "no limit" ``model_max_length``
(``int(1e30)``), which vLLM takes as the length it derives; a reference into a section the config lacks, which
Trinity's typed config fills with its defaults (OmegaConf 2.3.0 then raises on a key those lack); the rollout
model's own RoPE scaling and length; a value of a wrong type where Trinity's typed config refuses it as it loads."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from solver.tables import TableError, load_catalog, load_model_config
from solver.tables.model_config import NO_LIMIT_LENGTH
from solver.trinity import trinity_config_problems

LLAMA_SHAPE = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
               "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
               "intermediate_size": 14336, "vocab_size": 128256, "tie_word_embeddings": False,
               "max_position_embeddings": 32768}


@pytest.fixture(autouse=True)
def _no_long_length_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VLLM_ALLOW_LONG_MAX_MODEL_LEN", raising=False)


def _folder(tmp_path: Path, name: str = "keyed", text: str | None = None, **config: object) -> Path:
    folder = tmp_path / name
    folder.mkdir(parents=True)
    written = text if text is not None else json.dumps({**LLAMA_SHAPE, "_name_or_path": name, **config})
    (folder / "config.json").write_text(written, encoding="utf-8")
    return folder


def _codes(model_folder: Path, mapping: dict, **options: object) -> list[str]:
    problems = trinity_config_problems(mapping, load_model_config(model_folder), 8, **options)  # type: ignore[arg-type]
    return [problem.code.value for problem in problems]


def test_transformers_no_limit_model_max_length_is_the_length_vllm_derives(tmp_path: Path):
    # vLLM 0.19.1 takes any model_max_length in place of the other keys: 1e30 leaves it no limit to refuse past.
    model = load_model_config(_folder(tmp_path, seq_length=8192, model_max_length=NO_LIMIT_LENGTH))
    assert NO_LIMIT_LENGTH == 10**30 + 19884624838656
    assert (model.vllm_length_key, model.vllm_context) == (("model_max_length", NO_LIMIT_LENGTH), 1e30)
    assert model.vllm_longest_as_written(1 << 20) == NO_LIMIT_LENGTH


def test_a_no_limit_model_max_length_lifts_the_refusal_a_smaller_key_gives(tmp_path: Path):
    past_seq_length = {"model": {"max_model_len": 16384}}
    assert _codes(_folder(tmp_path, "plain", seq_length=8192), past_seq_length) == ["past-derived-length-refused"]
    assert _codes(_folder(tmp_path, seq_length=8192, model_max_length=NO_LIMIT_LENGTH), past_seq_length) == []
    # written as JSON's 1e30 (a float), the same
    text = json.dumps({**LLAMA_SHAPE, "seq_length": 8192}).removesuffix("}") + ', "model_max_length": 1e30}'
    assert _codes(_folder(tmp_path, "float", text=text), past_seq_length) == []


def test_a_model_max_length_past_the_limits_that_is_not_no_limit_stays_bad_input(tmp_path: Path):
    with pytest.raises(TableError, match=r"model_max_length: expected a whole number from 1 to 1073741824, got "
                                         r"1000000000000000019884624838657"):
        load_model_config(_folder(tmp_path, model_max_length=NO_LIMIT_LENGTH + 1))


def test_the_plan_for_a_no_limit_model_exports_no_long_length_variable(cli, tmp_path: Path):
    folder = _folder(tmp_path, seq_length=8192, model_max_length=NO_LIMIT_LENGTH)
    status, out, err = cli("--model-config", str(folder), "--gpu", "h800", "--len", "16k", "--gpus", "8")
    assert (status, err) == (0, "")
    assert "VLLM_ALLOW_LONG_MAX_MODEL_LEN" not in out


QWEN3_8B = {"model_path": "Qwen/Qwen3-8B", "max_model_len": 4096}


def _problems(mapping: dict, version: str | None = None) -> list[tuple[str, str]]:
    model = load_catalog().model("qwen3-8b")
    return [(problem.code.value, problem.words)
            for problem in trinity_config_problems(mapping, model, 8, version=version)]  # type: ignore[arg-type]


def _referring(reference: str) -> dict:
    return {"model": {**QWEN3_8B, "critic_model_path": reference}}


# Checked with OmegaConf 2.3.0 and each release's load_config (0.5.0, 0.6.0): the merge fills a section the config
# lacks with its defaults, then to_object raises InterpolationKeyError ("Interpolation key 'trainer.megatron' not
# found") on a key below it that those lack, and resolves one they have.
def test_a_reference_into_a_missing_section_is_refused_where_its_defaults_lack_the_key():
    assert _problems(_referring("${trainer.megatron}"), "0.5") == [("unresolved-value-refused", (
        "model.critic_model_path: cannot resolve '${trainer.megatron}': the config has no trainer, which the typed "
        "config of Trinity 0.5 fills in with its defaults, with no megatron; Trinity 0.5 refuses the config as it "
        "loads it (OmegaConf resolves each value then)"))]
    assert _problems(_referring("${trainer.no_such_key}")) == [("unresolved-value-refused", (
        "model.critic_model_path: cannot resolve '${trainer.no_such_key}': the config has no trainer, which the typed "
        "config of every Trinity release fills in with its defaults, with no no_such_key; every Trinity release "
        "refuses the config as it loads it (OmegaConf resolves each value then)"))]
    assert [code for code, _ in _problems(_referring("${trainer.trainer_config.critic}"))] == [
        "unresolved-value-refused"]


def test_a_reference_into_a_missing_section_whose_defaults_have_the_key_is_not_judged():
    # megatron is a field of 0.6.0's trainer alone; save_hf_checkpoint is every release's
    assert _problems(_referring("${trainer.megatron}")) == [("unresolved-value", (
        "cannot check model.critic_model_path: cannot resolve '${trainer.megatron}': the config has no trainer"))]
    assert [code for code, _ in _problems(_referring("${trainer.save_hf_checkpoint}"), "0.5")] == ["unresolved-value"]
