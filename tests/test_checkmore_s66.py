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


def _nested(path: tuple[str, ...], value: object) -> dict:
    mapping: dict = {"model": dict(QWEN3_8B)}
    node = mapping
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value
    return mapping


EVERY_RELEASE_REFUSES = "every Trinity release refuses the config as it loads it"


# Each refused below was checked with OmegaConf 2.3.0 and the load_config of Trinity 0.5.0 and 0.6.0 (the keys under
# trainer_config with 0.5.0's veRLConfig merged as its validator merges it): "Value 'maybe' is not a valid bool",
# "Cannot convert 'ListConfig' to string".
@pytest.mark.parametrize(("path", "value", "code", "words"), [
    # read by a check (the rollout's engine, the strategy for Offload): its type was said nowhere
    (("explorer", "rollout_model", "engine_type"), ["vllm"], "wrong-type-refused",
     (f"explorer.rollout_model.engine_type must be text, got ['vllm']: {EVERY_RELEASE_REFUSES} (its typed config's "
      "str field)")),
    (("trainer", "trainer_strategy"), {"a": "b"}, "wrong-type-refused",
     (f"trainer.trainer_strategy must be text, got {{'a': 'b'}}: {EVERY_RELEASE_REFUSES} (its typed config's str "
      "field)")),
    (("trainer", "offload_policy"), "maybe", "flag-not-boolean-refused",
     (f"trainer.offload_policy must be true or false, got 'maybe': {EVERY_RELEASE_REFUSES} (its typed config's "
      "bool field)")),
    # read for the notes alone
    (("model", "tinker", "enable"), 1.5, "flag-not-boolean-refused",
     f"model.tinker.enable must be true or false, got 1.5: {EVERY_RELEASE_REFUSES} (its typed config's bool field)"),
    (("mode",), ["both"], "wrong-type-refused",
     f"mode must be text, got ['both']: {EVERY_RELEASE_REFUSES} (its typed config's str field)"),
])
def test_a_wrong_type_trinity_types_outside_trainer_config_is_refused(path, value, code: str, words: str):
    assert _problems(_nested(path, value)) == [(code, words)]


def test_a_wrong_type_under_trainer_config_is_refused_with_trinity_05_alone():
    entropy = ("trainer", "trainer_config", "actor_rollout_ref", "actor", "entropy_checkpointing")
    adapter = ("trainer", "trainer_config", "actor_rollout_ref", "model", "lora_adapter_path")
    assert _problems(_nested(entropy, "maybe"), "0.5") == [("flag-not-boolean-refused", (
        "trainer.trainer_config.actor_rollout_ref.actor.entropy_checkpointing must be true or false, got 'maybe': "
        "Trinity 0.5 refuses the config as it loads it (its typed config's bool field)"))]
    assert _problems(_nested(adapter, ["a"]), "0.5") == [("wrong-type-refused", (
        "trainer.trainer_config.actor_rollout_ref.model.lora_adapter_path must be text, got ['a']: Trinity 0.5 refuses "
        "the config as it loads it (its typed config's str field)"))]
    # 0.6 on verl before 0.8 builds trainer_config with build_dataclass_from_mapping, which checks no type
    for version in (None, "0.6"):
        assert _problems(_nested(adapter, ["a"]), version) == [("wrong-type", (
            "trainer.trainer_config.actor_rollout_ref.model.lora_adapter_path must be text, got ['a']: the notes that "
            "read it are not judged"))]


@pytest.mark.parametrize(("path", "value"), [
    (("model", "tinker", "enable"), 2), (("model", "critic_model_path"), 5), (("trainer", "offload_policy"), "off"),
    (("explorer", "rollout_model", "engine_type"), True)])
def test_what_omegaconf_converts_is_no_wrong_type(path: tuple[str, ...], value: object):
    # OmegaConf's bool field takes a whole number (2: true) and its words; its str field a number or a boolean as text
    assert _problems(_nested(path, value)) == []


def test_a_wrong_type_fails_the_check_command(cli, tmp_path: Path):
    # (a key the config's reader needs, trainer_strategy say, of a wrong type is bad input already: exit 2)
    config = tmp_path / "wrong.yaml"
    config.write_text("model: {model_path: Qwen/Qwen3-8B, max_model_len: 4096}\nmode: both\n"
                      "trainer: {save_hf_checkpoint: [a]}\n", encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--check", "--gpu", "h100", "--gpus", "8")
    assert (status, err) == (1, "")
    assert ("  refused: trainer.save_hf_checkpoint must be text, got ['a']: every Trinity release refuses the config "
            "as it loads it (its typed config's str field)\n") in out


# Trinity keeps a rollout model's own rope_scaling and max_model_len (set_if_none, config_validator.py:680 to :685
# in 0.6.0) and its vLLM takes them (vllm_model.py:132 to :152); the trainer takes model's.
ROLLOUT_YARN = {"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 40960,
                "rope_theta": 1000000}  # a base: no line that Trinity 0.6's trainer needs one (ropecheck, s79)


def _with_rollout(rollout: dict, **model: object) -> dict:
    return {"model": {**QWEN3_8B, **model}, "explorer": {"rollout_model": rollout}}


def test_a_rollout_rope_scaling_other_than_the_trainers_is_said():
    assert _problems(_with_rollout({"rope_scaling": ROLLOUT_YARN})) == [("rollout-rope-scaling-differs", (
        "explorer.rollout_model.rope_scaling ({'factor': 2.0, 'original_max_position_embeddings': 40960...) is not "
        "what the trainer takes (no model.rope_scaling): the rollout's vLLM samples at other positions than the "
        "trainer trains at; remove it (Trinity gives the rollout model.rope_scaling)"))]
    # the same as model's, or no rollout (mode train): nothing
    same = _with_rollout({"rope_scaling": ROLLOUT_YARN}, max_model_len=81920, rope_scaling=ROLLOUT_YARN)
    assert [code for code, _ in _problems(same)] == []
    assert _problems({**_with_rollout({"rope_scaling": ROLLOUT_YARN}), "mode": "train"}) == []


def test_a_rollout_length_below_what_it_asks_for_is_said():
    assert _problems(_with_rollout({"max_model_len": 2048})) == [("rollout-length-short", (
        "explorer.rollout_model.max_model_len 2048 is below model.max_model_len 4096: the rollout's vLLM stops each "
        "sequence at 2048 tokens (a longer prompt fails its request); remove it (Trinity gives the rollout "
        "model.max_model_len)"))]
    tokens = {"max_prompt_tokens": 1024, "max_response_tokens": 1024}
    assert [words.split(":")[0] for _, words in _problems(_with_rollout({"max_model_len": 1500}, **tokens))] == [
        "explorer.rollout_model.max_model_len 1500 is below the 2048 prompt and response tokens it asks for"]
    # within the prompt and response it asks for (the rollout's own response tokens, else model's): nothing
    assert _problems(_with_rollout({"max_model_len": 3000}, **tokens)) == []
    assert _problems(_with_rollout({"max_model_len": 1500, "max_response_tokens": 256}, **tokens)) == []
