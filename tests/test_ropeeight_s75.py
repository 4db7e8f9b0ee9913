"""RoPE and rollout-engine gaps (session 75, helper ropeeight): --write keeps the comment after an anchored mapping
where it was (an alias of it is not where it ends); the ``apply`` line of a config's ``model.rope_scaling`` is the
mapping --write leaves (one function, `rope_scaling_written`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from solver.tables import load_catalog
from solver.tables.model_config import load_model_config
from solver.trinity import trinity_config_problems

COMMENT = "# a comment after the anchored mapping\n"
"""The user's comment right after the anchored ``model.rope_scaling`` block."""


def _anchored(length: int) -> str:
    """Qwen3-4B at `length` tokens, its ``model.rope_scaling`` anchored and followed by `COMMENT`, the rollout
    model's an alias of it (GRPO: no critic)."""
    return ("mode: both\nalgorithm: {algorithm_type: grpo}\nmodel:\n  model_path: Qwen/Qwen3-4B\n"
            f"  max_model_len: {length}\n  rope_scaling: &rope\n    type: yarn\n    factor: 2.0\n{COMMENT}"
            "cluster:\n  node_num: 1\n  gpu_per_node: 8\nexplorer:\n  rollout_model:\n    engine_num: 4\n"
            "    rope_scaling: *rope\n")


@pytest.fixture(autouse=True)
def _env_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)


def _written(cli, tmp_path: Path, text: str) -> str:
    config, written = tmp_path / "trinity.yaml", tmp_path / "written.yaml"
    config.write_text(text, encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "h200", "--write", str(written))
    assert status == 0, err
    return written.read_text(encoding="utf-8")


def test_a_comment_after_an_anchored_mapping_stays_when_keys_are_added_to_it(cli, tmp_path: Path):
    # Before, the trainer section appended at the end took the comment from the anchor's block through the alias
    # that ended the file (explorer.rollout_model.rope_scaling: *rope), so it moved to the file's end.
    written = _written(cli, tmp_path, _anchored(131072))
    assert ("  rope_scaling: &rope\n    type: yarn\n    rope_type: yarn\n    factor: 3.2\n"
            f"    original_max_position_embeddings: 40960\n    rope_theta: 1000000\n{COMMENT}cluster:\n") in written
    assert written.endswith("    rope_scaling: *rope\ntrainer:\n  ulysses_sequence_parallel_size: 4\n"
                            "  max_token_len_per_gpu: 65536\n")


def test_a_comment_after_an_anchored_mapping_stays_when_the_mapping_is_removed(cli, tmp_path: Path):
    # Within the native context the YaRN goes, the alias with it: the comment stays before cluster.
    written = _written(cli, tmp_path, _anchored(16384))
    assert "rope_scaling" not in written
    assert f"  max_model_len: 16384\n{COMMENT}cluster:\n" in written
    assert written.count(COMMENT) == 1 and written.endswith("  max_token_len_per_gpu: 32768\n")


def test_a_comment_after_a_merging_section_is_not_taken_from_the_anchor(cli, tmp_path: Path):
    # A key appended to a section that merges an anchored one (<<: *base) goes after its own last key; the comment
    # after the anchored block stays there.
    text = ("mode: both\nalgorithm: {algorithm_type: grpo}\ndefaults: &base\n  save_interval: 10\n"
            f"{COMMENT}model:\n  model_path: Qwen/Qwen3-4B\n  max_model_len: 16384\ncluster:\n  node_num: 1\n"
            "  gpu_per_node: 8\nexplorer:\n  rollout_model:\n    engine_num: 4\ntrainer:\n  <<: *base\n"
            "  trainer_type: verl\n")
    written = _written(cli, tmp_path, text)
    assert f"defaults: &base\n  save_interval: 10\n{COMMENT}model:\n" in written
    assert written.endswith("  <<: *base\n  trainer_type: verl\n  ulysses_sequence_parallel_size: 1\n"
                            "  max_token_len_per_gpu: 32768\n")


@pytest.mark.parametrize(("given", "line"), [
    # the legacy type stays beside rope_type, as --write writes it (before, the line dropped it)
    ("{type: yarn, factor: 4.0}",
     ("model.rope_scaling: {type: yarn, rope_type: yarn, factor: 3.2, original_max_position_embeddings: 40960, "
      "rope_theta: 1000000}")),
    # a key of the config's own stays too
    ("{rope_type: yarn, factor: 2.0, beta_fast: 32}",
     ("model.rope_scaling: {rope_type: yarn, factor: 3.2, beta_fast: 32, original_max_position_embeddings: 40960, "
      "rope_theta: 1000000}")),
])
def test_the_apply_line_of_a_configs_rope_scaling_is_what_write_writes(cli, tmp_path: Path, given: str, line: str):
    text = ("mode: both\nalgorithm: {algorithm_type: grpo}\nmodel:\n  model_path: Qwen/Qwen3-4B\n"
            f"  max_model_len: 131072\n  rope_scaling: {given}\ncluster:\n  node_num: 1\n  gpu_per_node: 8\n"
            "explorer:\n  rollout_model:\n    engine_num: 4\n")
    config = tmp_path / "trinity.yaml"
    config.write_text(text, encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h200")
    assert status == 0, err
    assert f"\n{line}\n" in out
    assert f"  rope_scaling: {line.removeprefix('model.rope_scaling: ')}\n" in _written(cli, tmp_path, text)


def test_without_a_config_mapping_the_apply_line_is_the_plans_own(cli, tmp_path: Path):
    text = ("mode: both\nalgorithm: {algorithm_type: grpo}\nmodel:\n  model_path: Qwen/Qwen3-4B\n"
            "  max_model_len: 131072\ncluster:\n  node_num: 1\n  gpu_per_node: 8\n"
            "explorer:\n  rollout_model:\n    engine_num: 4\n")
    config = tmp_path / "trinity.yaml"
    config.write_text(text, encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h200")
    assert status == 0, err
    line = ("model.rope_scaling: {rope_type: yarn, factor: 3.2, original_max_position_embeddings: 40960, "
            "rope_theta: 1000000}")
    assert f"\n{line}\n" in out and "  rope_scaling:\n    rope_type: yarn\n    factor: 3.2\n" in _written(
        cli, tmp_path, text)


# rope-partial-dropped and rope-theta-dropped on Trinity 0.5: 0.5.0 also takes a vLLM before 0.12, to which it hands
# the mapping as the rope_scaling engine argument, which replaces the config.json's rope_scaling alone (vLLM 0.11.0's
# hf_overrides_kw {"rope_scaling": ...}); the note names the release and what such a vLLM keeps.

OLDER_VLLM = (" (on Trinity 0.5 with vLLM 0.12 or later, every one 0.5.2 takes; a vLLM before 0.12, as 0.5.0 also "
              "takes, keeps the model's {kept}: 0.5.0 hands it the mapping as rope_scaling, which replaces the "
              "config.json's rope_scaling alone)")
HANDED = "Trinity hands vLLM the mapping as the model's rope_parameters, past transformers' filling-in"
YARN = {"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 4096, "rope_theta": 10000}


def _phi_partial(tmp_path: Path) -> Path:
    """A Phi-3 config.json of 4096 native positions rotating 0.75 of each head (as Phi-4-mini does), under StableLM's
    type (which rotates part of each head too): a Phi-3 is advised no YaRN (tests/test_ropetype_s77.py)."""
    config = json.loads((Path(__file__).parent / "data" / "hf-configs" / "Phi-3-mini-128k-instruct.json").read_text(
        encoding="utf-8"))
    for key in ("rope_scaling", "original_max_position_embeddings", "sliding_window"):
        config.pop(key)
    config |= {"_name_or_path": "Phi-partial", "max_position_embeddings": 4096, "partial_rotary_factor": 0.75,
               "model_type": "stablelm"}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


@pytest.mark.parametrize("version", [None, "0.6", "0.5"])
def test_the_partial_rotary_note_names_what_an_older_vllm_keeps_on_05(tmp_path: Path, version: str | None):
    model = load_model_config(_phi_partial(tmp_path))
    mapping = {"model": {"model_path": "x", "max_model_len": 8192, "rope_scaling": YARN}}
    problems = [(problem.code.value, problem.words)
                for problem in trinity_config_problems(mapping, model, 8, version=version)]
    older = OLDER_VLLM.format(kept="partial_rotary_factor") if version == "0.5" else ""
    assert problems == [("rope-partial-dropped", (
        "model.rope_scaling is given without partial_rotary_factor: the rollout's vLLM takes the scaling in place "
        "of Phi-partial's RoPE parameters, its partial_rotary_factor with them, and rotates at "
        "partial_rotary_factor 1.0 (the share of each head's dimensions RoPE rotates), not the model's 0.75, "
        f"silently ({HANDED}){older}; add partial_rotary_factor: 0.75 to it"))]


@pytest.mark.parametrize("version", [None, "0.5"])
def test_the_rope_base_note_names_what_an_older_vllm_keeps_on_05(version: str | None):
    llama3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
              "original_max_position_embeddings": 8192}
    mapping = {"model": {"model_path": "x", "max_model_len": 8192, "rope_scaling": llama3}}
    problems = trinity_config_problems(mapping, load_catalog().model("Llama-3.1-8B"), 8, version=version)
    older = OLDER_VLLM.format(kept="rope_theta") if version == "0.5" else ""
    assert [(problem.code.value, problem.words) for problem in problems
            if problem.code.value == "rope-theta-dropped"] == [("rope-theta-dropped", (
                "model.rope_scaling is given and model.rope_theta is not: the rollout's vLLM takes the scaling in "
                "place of Llama-3.1-8B's RoPE parameters, its rope_theta with them, and rotates at base 10000, not "
                f"the model's 500000, silently ({HANDED}){older}; set model.rope_theta: 500000"))]


# sglang: Trinity 0.6.0 hands it the length as context_length and no RoPE scaling; sglang 0.5.13 refuses a length past
# the one it derives from the config.json unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN is set.

SGLANG_REFUSED = (
    "max_model_len 131072 is beyond Qwen3-4B's native context of 40960, the longest the rollout's sglang derives from "
    "its config.json: sglang refuses it as it starts unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 is set before "
    "Ray starts, and Trinity hands sglang no RoPE scaling (model.rope_scaling reaches the trainer alone), so it then "
    "samples past the positions the model was trained on unless explorer.rollout_model.extra_engine_args gives "
    "json_model_override_args a rope_scaling; set the variable and that, or lower max_model_len to 40960")
GUIDE_YARN = {"rope_type": "yarn", "factor": 3.2, "original_max_position_embeddings": 40960, "rope_theta": 1000000}
"""The guide's YaRN at 131072 tokens, with the base Trinity 0.6's trainer needs in it (ropecheck, s79)."""


def _qwen_problems(model_keys: dict[str, object], rollout: dict[str, object], environ: dict[str, str] | None = None,
                   version: str | None = None, mode: str = "both") -> list[tuple[str, str]]:
    mapping = {"mode": mode, "model": {"model_path": "x", "max_model_len": 131072, **model_keys},
               "explorer": {"rollout_model": rollout}}
    return [(problem.code.value, problem.words) for problem in trinity_config_problems(
        mapping, load_catalog().model("Qwen3-4B"), 8, environ=environ, version=version)]


def test_an_sglang_rollout_past_the_native_context_is_refused_whatever_the_rope_scaling():
    # the YaRN vLLM would take does not reach sglang: refused all the same, and no vLLM line
    assert _qwen_problems({"rope_scaling": GUIDE_YARN}, {"engine_type": "sglang"}) == [
        ("sglang-length-refused", SGLANG_REFUSED)]
    # without one: the trainer's line (no vLLM refusal), and sglang's
    assert [code for code, _ in _qwen_problems({}, {"engine_type": "sglang"})] == [
        "rope-scaling-missing", "sglang-length-refused"]
    # vLLM's refusal stays vLLM's
    assert [code for code, _ in _qwen_problems({}, {})] == ["rope-scaling-missing-refused"]


@pytest.mark.parametrize(("rollout", "environ", "version", "mode"), [
    ({"engine_type": "sglang"}, {"SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN": "Yes"}, None, "both"),  # sglang's EnvBool
    ({"engine_type": "sglang", "max_model_len": 40960}, None, None, "both"),  # the rollout's own length, within it
    ({"engine_type": "sglang"}, None, "0.5", "both"),  # 0.5.0 has no sglang engine
    ({"engine_type": "sglang"}, None, None, "train"),  # no rollout
    ({"engine_type": "vllm"}, None, None, "both"),
])
def test_no_sglang_line_where_sglang_takes_it_or_starts_none(rollout: dict[str, object],
                                                             environ: dict[str, str] | None, version: str | None,
                                                             mode: str):
    codes = [code for code, _ in _qwen_problems({"rope_scaling": GUIDE_YARN}, rollout, environ, version, mode)]
    assert "sglang-length-refused" not in codes


def test_the_rollouts_own_length_is_the_one_sglang_judges():
    problems = _qwen_problems({"max_model_len": 32768}, {"engine_type": "sglang", "max_model_len": 65536})
    assert ("sglang-length-refused", SGLANG_REFUSED.replace(
        "max_model_len 131072", "explorer.rollout_model.max_model_len 65536")) in problems


THETA = {"rope_theta": 1000000}
"""Qwen3-4B's own base, in each mapping below: no line on it where no release is named (ropecheck, s79)."""


# The trainer's RoPE scaling in its legacy form (type alone, no original length): Trinity's legacy verl path sets it on
# the model's config, whose transformers setter fills rope_type and the original length in; judged as the standard form.

@pytest.mark.parametrize("version", [None, "0.5"])
@pytest.mark.parametrize("legacy", [{"type": "yarn", "factor": 3.2, **THETA},
                                    {"rope_type": "yarn", "factor": 3.2, **THETA},
                                    {"type": "yarn", "factor": 3.2, "original_max_position_embeddings": 40960,
                                     **THETA}])
def test_the_trainers_legacy_guide_yarn_is_the_guides(legacy: dict[str, object], version: str | None):
    assert _qwen_problems({"rope_scaling": legacy}, {}, version=version, mode="train") == []


def test_the_trainers_legacy_yarn_is_judged_over_the_filled_in_original_length():
    assert _qwen_problems({"rope_scaling": {"type": "yarn", "factor": 2.0, **THETA}}, {}, mode="train") == [(
        "rope-scaling-wrong", ("model.rope_scaling (factor 2.0 over 40960) covers 81920 tokens, fewer than "
                               "max_model_len 131072: set it as Trinity-RFT's guide does, factor max_model_len / 40960 "
                               "= 3.2 over 40960"))]
    assert _qwen_problems({"rope_scaling": {"type": "linear", "factor": 3.2, **THETA}}, {}, mode="train") == [
        ("rope-scaling-wrong", "model.rope_scaling.rope_type must be yarn, got 'linear'")]
    # a factor is needed all the same: transformers' YaRN refuses one without it
    assert _qwen_problems({"rope_scaling": {"type": "yarn", **THETA}}, {}, mode="train") == [
        ("rope-scaling-wrong", "model.rope_scaling.factor must be max_model_len / 40960 = 3.2, not given")]
    # where a vLLM rollout takes it as given, it is still refused (vLLM reads rope_type and the original length)
    assert [code for code, _ in _qwen_problems({"rope_scaling": {"rope_type": "yarn", "factor": 3.2, **THETA}},
                                               {})] == [
        "rope-scaling-unbuilt-refused"]


# Rollout engines: the auxiliary models' engines count in the explorer's GPUs, each of tensor x data x pipeline
# parallel GPUs (Trinity 0.6.0's cluster.auxiliary_model_gpu_num, config_validator.py:242-246); what is not judged of
# them is in docs/trinity.md ("What is not checked of the rollout engines").

def test_auxiliary_and_pipeline_parallel_engines_count_in_the_explorers_gpus():
    from solver.trinity import read_trinity_config

    text = ("model:\n  model_path: Qwen/Qwen3-4B\n  max_model_len: 8192\ncluster:\n  node_num: 2\n  gpu_per_node: 8\n"
            "explorer:\n  rollout_model:\n    engine_num: 2\n    tensor_parallel_size: 2\n"
            "    pipeline_parallel_size: 2\n  auxiliary_models:\n    - model_path: Qwen/Qwen3-0.6B\n"
            "      engine_num: 2\n      tensor_parallel_size: 1\n      data_parallel_size: 2\n"
            "    - model_path: judge\n      engine_type: external\n      engine_num: 4\n")
    config = read_trinity_config(text, "trinity.yaml", {})
    # rollout 2 x (2 x 2) = 8, auxiliary 2 x (1 x 2) = 4 (the external one takes none): 16 - 12 = 4 trainer GPUs
    assert (config.rollout_gpus, config.rollout_engine_gpus, config.auxiliary_gpus, config.trainer_gpus) == (
        12, 4, 4, 4)


def test_an_sglang_rollouts_refusal_is_its_own_in_the_check(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # (the sglang cases of test_ropecheck_s62 and test_llamalen_s62, which said no refusal before)
    monkeypatch.delenv("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN", raising=False)
    config = tmp_path / "trinity.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\nmodel:\n  model_path: Qwen/Qwen3-4B\n"
                      "  max_model_len: 131072\ncluster:\n  node_num: 1\n  gpu_per_node: 8\nexplorer:\n"
                      "  rollout_model:\n    engine_num: 4\n"
                      "    engine_type: sglang\n", encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h200", "--check", "--json")
    current = json.loads(out)[0]["current"]
    assert (status, current["refused"], current["config_problem_codes"]) == (
        1, True, ["rope-scaling-missing", "sglang-length-refused"])
    monkeypatch.setenv("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN", "1")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h200", "--check", "--json")
    current = json.loads(out)[0]["current"]
    assert (current["refused"], current["config_problem_codes"]) == (False, ["rope-scaling-missing"])


def test_llama_31_past_its_native_context_on_sglang_is_refused_by_sglang_alone():
    mapping = {"model": {"model_path": "x", "max_model_len": 163840},
               "explorer": {"rollout_model": {"engine_type": "sglang"}}}
    problems = trinity_config_problems(mapping, load_catalog().model("llama-3.1-8b"), 8)
    assert [problem.code.value for problem in problems] == ["sglang-length-refused"]
    assert problems[0].words.startswith("max_model_len 163840 is beyond Llama-3.1-8B's native context of 131072")


@pytest.mark.parametrize(("scaling", "read"), [
    ({"factor": 4.0}, 'rope_scaling {"factor": 4.0}'),
    ({"factor": 4.0, "rope_theta": 1000000}, 'rope_scaling {"factor": 4.0, "rope_theta": 1000000}'),
    ({"rope_theta": 1000000}, None),  # what transformers 5's default RoPE takes: nothing left unused
    # mutants53: one per layer type (transformers 5's Gemma-3 form), its full attention's untyped
    ({"full_attention": {"factor": 4.0}, "sliding_attention": {"rope_theta": 10000.0}},
     'rope_scaling.full_attention {"factor": 4.0}'),
    ({"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}, None),  # typed: read as given
])
def test_a_rope_scaling_of_no_type_is_read_as_none_with_a_note(cli, tmp_path: Path, scaling: dict[str, object],
                                                               read: str | None):
    # s90 (persona): transformers 5.9.0 makes an untyped scaling "default" and builds plain RoPE, warning of the
    # factor it leaves unused (4.57.1 refuses it, a KeyError for rope_type): the plans read no scaling, as before,
    # and a note now says the factor was dropped, where it was silent.
    shape = json.loads((Path(__file__).parent / "data" / "hf-configs" / "Qwen3-8B.json").read_text(encoding="utf-8"))
    (tmp_path / "config.json").write_text(json.dumps({**shape, "rope_scaling": scaling}), encoding="utf-8")
    model = load_model_config(tmp_path)
    assert model.untyped_rope_scaling == read
    if read is None:
        return
    assert (model.rope_scaling, model.config_yarn_factor, model.native_context) == (None, None, 40960)
    status, _, err = cli("memory", "--model-config", str(tmp_path), "--gpu", "h100", "--gpus", "8", "--len", "8k")
    assert status == 0 and (
        f"solve memory: note: {model.name}: {read} names no rope_type (nor type): transformers 5 builds it as no "
        "scaling (plain RoPE, warning of the keys it leaves unused), so rft-solver reads no scaling and a native "
        "context of 40960 tokens (transformers 4.57, Trinity 0.5.1's, refuses it: rope_type missing); if the "
        "checkpoint was trained with a scaling, add its rope_type\n") in err
