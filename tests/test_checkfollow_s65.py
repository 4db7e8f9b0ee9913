"""Follow-ups of the field-list work (session 65): a ``model.rope_scaling`` naming two types that differ, a `but:`
line since the rollout's vLLM takes ``rope_type`` alone as Trinity hands it the mapping (s73), and set whole by
``--write``; a typed ``???`` said once for its place; references judged by the names
of the Trinity version given."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from solver.tables import load_catalog, yaml_brief
from solver.trinity import load_config_mapping, trinity_config_problems

EXAMPLE = Path(__file__).parents[1] / "docs" / "examples" / "trinity.yaml"
YARN = {"factor": 1.6, "original_max_position_embeddings": 40960,
        "rope_theta": 1000000}  # Qwen3-8B's base, which Trinity 0.6's trainer needs in the mapping (ropecheck, s79)
DIFFER_WORDS = ("model.rope_scaling names its type twice, rope_type {modern} and type {legacy}: a vLLM rollout takes "
                "rope_type alone{older}; remove type, or give it rope_type's value")
OLDER = " (on Trinity 0.5 with a vLLM before 0.12, as 0.5.0 also takes, vLLM refuses the two as it starts)"


def _problems(mapping: dict[str, object], version: str | None = None) -> list[tuple[str, str]]:
    return [(problem.code.value, problem.words)
            for problem in trinity_config_problems(mapping, load_catalog().model("8B"), 8, version=version)]


def _rope(rope_scaling: dict[str, object], **sections: object) -> dict[str, object]:
    return {"model": {"model_path": "Qwen/Qwen3-8B", "max_model_len": 65536, "rope_scaling": rope_scaling},
            **sections}


@pytest.mark.parametrize(("modern", "legacy"), [("yarn", "linear"), (None, "yarn"), ("yarn", "YaRN")])
@pytest.mark.parametrize("version", [None, "0.6", "0.5"])
def test_two_rope_types_that_differ_are_a_but_line(modern: object, legacy: object, version: str | None):
    problems = _problems(_rope({"rope_type": modern, "type": legacy, **YARN}), version)
    words = DIFFER_WORDS.format(modern=yaml_brief(modern), legacy=yaml_brief(legacy),
                                older=OLDER if version == "0.5" else "")
    assert problems[0] == ("rope-scaling-wrong", words)
    assert not any("twice" in other for _, other in problems[1:])


@pytest.mark.parametrize(("modern", "legacy"), [("yarn", "yarn"), ("longrope", "su"), ("default", "mrope")])
def test_two_rope_types_vllm_takes_are_not_refused(modern: str, legacy: str):
    problems = _problems(_rope({"rope_type": modern, "type": legacy, **YARN}))
    assert not any("twice" in words for _, words in problems)


@pytest.mark.parametrize(("sections", "rollout"), [
    ({"mode": "train"}, []),
    # sglang refuses the length past the native context itself (s75: test_ropeeight_s75)
    ({"explorer": {"rollout_model": {"engine_type": "sglang"}}}, ["sglang-length-refused"]),
    # the rollout's own differs from the trainer's: a line of its own (s66)
    ({"explorer": {"rollout_model": {"rope_scaling": {"rope_type": "yarn", **YARN}}}},
     ["rollout-rope-scaling-differs"]),
])
def test_two_rope_types_no_vllm_rollout_takes_are_a_but_line(sections: dict[str, object], rollout: list[str]):
    problems = _problems(_rope({"rope_type": "yarn", "type": "linear", **YARN}, **sections))
    assert problems[:1] == [("rope-scaling-wrong", DIFFER_WORDS.format(modern="'yarn'", legacy="'linear'", older=""))]
    assert [code for code, _ in problems[1:]] == rollout


def _example_with_rope(tmp_path: Path, rope_scaling: str) -> Path:
    config = tmp_path / "c.yaml"
    config.write_text(EXAMPLE.read_text(encoding="utf-8").replace(
        "  max_model_len: 32768  # prompt + response", f"  max_model_len: 49152\n  rope_scaling: {rope_scaling}", 1),
        encoding="utf-8")
    return config


def _current(cli, config: Path) -> tuple[int, dict[str, object]]:
    status, out, err = cli("--from-config", str(config), "--gpu", "a100", "--check", "--json")
    assert "Traceback" not in err
    return status, json.loads(out)[0]["current"]


def test_check_says_two_rope_types_and_write_sets_both(cli, tmp_path: Path):
    config = _example_with_rope(
        tmp_path, "{rope_type: yarn, type: linear, factor: 1.2, original_max_position_embeddings: 40960}")
    status, current = _current(cli, config)
    assert (status, current["refused"], current["config_problem_codes"]) == (
        1, False, ["rope-scaling-wrong", "rope-theta-missing"])  # no release named: 0.6's trainer needs it (s79)
    written = tmp_path / "w.yaml"
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100", "--write", str(written))
    assert status == 0 and "model.rope_scaling.type: yarn  # now linear" in out
    rope = load_config_mapping(written.read_text(encoding="utf-8"), "w.yaml")["model"]["rope_scaling"]
    assert rope == {"rope_type": "yarn", "type": "yarn", "factor": 1.2, "original_max_position_embeddings": 40960,
                    "rope_theta": 1000000}
    status, current = _current(cli, written)
    assert (current["refused"], current["config_problem_codes"]) == (False, [])


def test_write_sets_a_legacy_type_beside_rope_type_that_it_turns_to_yarn(cli, tmp_path: Path):
    # the two agree as written; setting rope_type alone to yarn would make them differ
    config = _example_with_rope(tmp_path, "{rope_type: linear, type: linear, factor: 2.0}")
    written = tmp_path / "w.yaml"
    status, _, _ = cli("--from-config", str(config), "--gpu", "a100", "--write", str(written))
    rope = load_config_mapping(written.read_text(encoding="utf-8"), "w.yaml")["model"]["rope_scaling"]
    assert status == 0 and (rope["rope_type"], rope["type"]) == ("yarn", "yarn")
    assert "rope-scaling-wrong" not in _current(cli, written)[1]["config_problem_codes"]


TYPED_MISSING = ("cannot check trainer.trainer_config is ???, a value missing (OmegaConf refuses to read it): give "
                 "it")


def test_a_typed_section_given_as_missing_is_said_once():
    assert _problems({"model": {"model_path": "Qwen/Qwen3-8B"}, "trainer": {"trainer_config": "???"}}) == [
        ("unresolved-value", TYPED_MISSING)]


def test_a_typed_missing_value_read_directly_and_through_a_reference_is_said_once():
    problems = _problems({"model": {"model_path": "Qwen/Qwen3-8B", "max_prompt_tokens": "???",
                                    "critic_model_path": "${model.max_prompt_tokens}"}})
    # said once, where it is first read: through the critic's model path since s83's criticsp reads that first
    assert problems == [("unresolved-value", (
        "cannot check model.critic_model_path: cannot resolve '${model.max_prompt_tokens}': model.max_prompt_tokens "
        "is ???, a value missing (OmegaConf refuses to read it): give it"))]


def _reference(field: str) -> dict[str, object]:
    # the trainer and buffer sections given: where one is absent, the reference lacks it, which every release types
    return {"model": {"model_path": "Qwen/Qwen3-8B", "critic_model_path": f"${{{field}}}"},
            "trainer": {"save_interval": 100}, "buffer": {"total_epochs": 1}}


@pytest.mark.parametrize(("field", "version", "releases"), [
    ("trainer.megatron", "0.5", "Trinity 0.5"),  # 0.6.0's field alone
    ("buffer.pad_token_id", "0.6", "Trinity 0.6"),  # 0.5.0's alone (session 66: its BufferConfig's, not ModelConfig's)
    ("model.pad_token_idz", None, "every Trinity release"),
])
def test_a_reference_to_a_field_the_named_version_lacks_is_refused(field: str, version: str | None, releases: str):
    assert _problems(_reference(field), version) == [("unresolved-value-refused", (
        f"model.critic_model_path: cannot resolve '${{{field}}}': the config has no {field}; {releases} refuses the "
        "config as it loads it (OmegaConf resolves each value then)"))]


@pytest.mark.parametrize(("field", "version"), [
    ("trainer.megatron", None), ("trainer.megatron", "0.6"), ("buffer.pad_token_id", None),
    ("buffer.pad_token_id", "0.5"),  # 0.5.0 has it, 0.5.1 and 0.5.2 not: not every 0.5 release refuses
])
def test_a_reference_to_a_field_of_some_release_of_the_version_is_not_judged(field: str, version: str | None):
    assert _problems(_reference(field), version) == [("unresolved-value", (
        f"cannot check model.critic_model_path: cannot resolve '${{{field}}}': the config has no {field}"))]


def test_check_with_trinity_05_refuses_a_reference_to_a_field_of_06(cli, tmp_path: Path):
    config = tmp_path / "c.yaml"
    reference = "  max_model_len: 32768\n  critic_model_path: ${trainer.megatron}"
    config.write_text(EXAMPLE.read_text(encoding="utf-8").replace(
        "  max_model_len: 32768  # prompt + response", reference, 1), encoding="utf-8")
    flags = ("--from-config", str(config), "--gpu", "a100", "--check", "--json")
    status, out, _ = cli(*flags, "--trinity-version", "0.5")
    assert (status, json.loads(out)[0]["current"]["config_problem_codes"]) == (1, ["unresolved-value-refused"])
    status, out, _ = cli(*flags)
    assert json.loads(out)[0]["current"]["config_problem_codes"] == ["unresolved-value"]
