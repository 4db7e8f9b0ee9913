"""`--check` on the number types Trinity's typed config gives the keys rft-solver reads, and on the rollout model's own
length (session 67). Each value's verdict was checked with Trinity 0.5.0's and 0.6.0's own ``load_config`` on
OmegaConf 2.3.0 (``buffer.batch_size`` and ``model.max_model_len``), 0.5.0's merge of ``trainer.trainer_config`` into
its typed ``veRLConfig``, and 0.6.0's ``build_dataclass_from_mapping`` then ``OmegaConf.structured`` of it (as its
trainer starts): an int field takes a whole number, or text ``int()`` reads; it refuses a float (``8.0``, ``1e3``,
``.inf``), a boolean, and other text (``'8.0'``, ``'0x10'``, ``'true'``)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from solver.query import REFUSED_CONFIG_CODES, ConfigProblemCode
from solver.tables import load_catalog
from solver.trinity import trinity_config_problems
from solver.trinity.reader import load_config_mapping, omegaconf_integer

C = ConfigProblemCode
QWEN = {"model_path": "Qwen/Qwen3-8B"}
TAKEN = [(8, 8), ("8", 8), (" 8", 8), ("+8", 8), ("1_000", 1000), (0, 0)]
"""Values OmegaConf 2.3.0's int field takes, and what it reads."""
REFUSED = [8.0, 8.5, 1e3, math.inf, -math.inf, True, False, "8.0", "1e3", "0x10", "true", "inf", "eight", [8], {"a": 8}]
"""Values it refuses ("Value '8.0' of type 'float' could not be converted to Integer")."""
LONG = "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set before Ray starts; set it (and check that the model handles this length)"


def _problems(mapping: dict[str, Any], version: str | None = None, environ: dict[str, str] | None = None,
              model: str = "8B") -> list[tuple[str, str]]:
    problems = trinity_config_problems(mapping, load_catalog().model(model), 8,
                                       version=version, environ=environ)  # type: ignore[arg-type]
    return [(problem.code.value, problem.words) for problem in problems]


@pytest.mark.parametrize(("value", "read"), TAKEN)
def test_omegaconf_integer_takes_a_whole_number_or_text_int_reads(value: Any, read: int):
    assert omegaconf_integer(value) == read


@pytest.mark.parametrize("value", REFUSED, ids=repr)
def test_omegaconf_integer_refuses_a_float_a_boolean_and_other_text(value: Any):
    assert omegaconf_integer(value) is None


@pytest.mark.parametrize("value", [8, "8", " 8"])
def test_a_whole_number_or_its_text_in_an_int_key_says_nothing(value: Any):
    assert _problems({"model": QWEN, "buffer": {"batch_size": value}}) == []


@pytest.mark.parametrize(("value", "shown"), [  # s88: a whole one's number told, in the command line's words
    (8.0, "8.0 (write 8.0 as 8)"), (8.5, "8.5"), (1e3, "1000.0 (write 1000.0 as 1000)"), (math.inf, ".inf"),
    (True, "true"), ("8.0", "'8.0' (write 8.0 as 8)"), ("0x10", "'0x10'"), ("1e3", "'1e3'")])
@pytest.mark.parametrize("version", [None, "0.5", "0.6"])
def test_every_release_refuses_what_an_int_field_does_not_take(value: Any, shown: str, version: str | None):
    assert _problems({"model": QWEN, "buffer": {"batch_size": value}}, version) == [(
        "wrong-type-refused", (f"buffer.batch_size must be a whole number, got {shown}: every Trinity release "
                               "refuses the config as it loads it (its typed config's int field)"))]


@pytest.mark.parametrize(("written", "refused"), [
    ("8", False), ('"8"', False), ("' 8'", False), ("0x10", False), ("010", False), ("1_000", False),
    ("8.0", True), ("8.5", True), ("1e3", True), (".inf", True), ("true", True), ("'8.0'", True), ("'0x10'", True),
    ("'1e3'", True), ("'true'", True),
])
def test_each_value_as_written_in_yaml_is_judged_as_trinity_0_5_0_and_0_6_0_loaded_it(written: str, refused: bool):
    # as OmegaConf's loader reads the file: 0x10 and 010 are whole numbers (16, 8), 1e3 a float (1000.0)
    mapping = load_config_mapping(f"model: {{model_path: Qwen/Qwen3-8B}}\nbuffer: {{batch_size: {written}}}\n",
                                  "trinity.yaml")
    assert [code for code, _ in _problems(mapping)] == (["wrong-type-refused"] if refused else [])

def test_text_the_int_field_takes_is_read_as_it_reads_it_not_as_yaml_does():
    # ' 8' is 8 to int(), so the whole-nodes rule judges 8 GPUs a node: 12 trainer GPUs are not whole nodes of 8
    assert [code for code, _ in _problems({"model": QWEN, "cluster": {"gpu_per_node": " 8"}})] == []
    problems = trinity_config_problems({"model": QWEN, "cluster": {"gpu_per_node": " 8"}},
                                       load_catalog().model("8B"), 12)
    assert [problem.code for problem in problems] == [C.WHOLE_NODES]


def test_a_node_size_that_is_no_whole_number_is_refused_once_not_also_out_of_range():
    assert _problems({"model": QWEN, "cluster": {"gpu_per_node": 2.5}}) == [(
        "wrong-type-refused", ("cluster.gpu_per_node must be a whole number, got 2.5: every Trinity release refuses "
                               "the config as it loads it (its typed config's int field)"))]


def test_a_key_two_checks_read_is_said_once():
    # model.max_prompt_tokens is read by the prompt-and-response check and by the rollout's own length check
    mapping = {"model": {**QWEN, "max_prompt_tokens": 1024.0, "max_response_tokens": 1024},
               "explorer": {"rollout_model": {"max_model_len": 1024}}}
    assert [code for code, _ in _problems(mapping)] == ["wrong-type-refused"]


@pytest.mark.parametrize(("value", "environ", "codes"), [
    ("${cluster.gpu_per_node}.0", {}, ["wrong-type-refused"]),  # text '8.0' (checked: refused as it loads)
    ("${cluster.gpu_per_node}", {}, []),
    ("${oc.env:BATCH}", {"BATCH": "8"}, []),
    ("${oc.env:BATCH}", {"BATCH": "8.0"}, ["wrong-type-refused"]),
])
def test_an_interpolation_is_judged_by_what_it_resolves_to(value: str, environ: dict[str, str], codes: list[str]):
    mapping = {"model": QWEN, "cluster": {"gpu_per_node": 8}, "buffer": {"batch_size": value}}
    assert [code for code, _ in _problems(mapping, environ=environ)] == codes


TRAINER_CONFIG_SP = ("trainer.trainer_config.critic.ulysses_sequence_parallel_size must be a whole number, got 8.0 "
                     "(write 8.0 as 8): ")
NOT_JUDGED = ("keeps it as written, which its trainer's typed config (OmegaConf's int field) refuses as the trainer "
              "starts; the notes that read it are not judged")


@pytest.mark.parametrize(("version", "line"), [
    ("0.5", ("wrong-type-refused", TRAINER_CONFIG_SP + "Trinity 0.5 refuses the config as it loads it (its typed "
                                                       "config's int field)")),
    ("0.6", ("not-a-number", TRAINER_CONFIG_SP + "Trinity 0.6 on verl before 0.8 " + NOT_JUDGED)),
    (None, ("not-a-number", TRAINER_CONFIG_SP + "Trinity 0.5 refuses the config, and 0.6 on verl before 0.8 "
                                                + NOT_JUDGED)),
])
def test_under_trainer_config_trinity_05_refuses_and_06_fails_as_the_trainer_starts(version: str | None,
                                                                                    line: tuple[str, str]):
    mapping = {"model": QWEN, "trainer": {"trainer_config": {"critic": {"ulysses_sequence_parallel_size": 8.0}}}}
    assert _problems(mapping, version) == [line]


THETA = {"rope_theta": 1000000}
"""Qwen3-8B's base in each YaRN below: without it, no release named, a line says Trinity 0.6's trainer needs it
(ropecheck, s79), which is not these tests' subject."""


def test_a_float_in_an_untyped_rope_scaling_is_a_number():
    # model.rope_scaling is a dict to Trinity: its factor is no int field
    yarn = {"rope_type": "yarn", "factor": 1.6, "original_max_position_embeddings": 40960, **THETA}
    mapping = {"model": {**QWEN, "max_model_len": 65536, "rope_scaling": yarn}}
    assert _problems(mapping) == []


ROLLOUT_PAST_NATIVE = (
    "rollout-length-refused", ("explorer.rollout_model.max_model_len 65536 is beyond Qwen3-8B's native context of "
                               f"40960, which the rollout's vLLM takes as its longest length: the rollout's vLLM "
                               f"refuses it unless {LONG}, or lower explorer.rollout_model.max_model_len to 40960"))


def test_the_rollouts_own_length_past_the_native_context_is_refused():
    mapping = {"model": {**QWEN, "max_model_len": 32768}, "explorer": {"rollout_model": {"max_model_len": 65536}}}
    assert _problems(mapping) == [ROLLOUT_PAST_NATIVE]
    assert C.ROLLOUT_LENGTH_REFUSED in REFUSED_CONFIG_CODES


@pytest.mark.parametrize(("mapping", "environ"), [
    ({"explorer": {"rollout_model": {"max_model_len": 65536}}}, {"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"}),
    ({"mode": "train", "explorer": {"rollout_model": {"max_model_len": 65536}}}, {}),
    # sglang's rules, not vLLM's: its own variable lets it take the length (s75: test_ropeeight_s75)
    ({"explorer": {"rollout_model": {"max_model_len": 65536, "engine_type": "sglang"}}},
     {"SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN": "1"}),
    ({"explorer": {"rollout_model": {"max_model_len": 40960}}}, {}),
])
def test_no_refusal_where_vllm_takes_the_rollouts_length(mapping: dict[str, Any], environ: dict[str, str]):
    assert _problems({"model": {**QWEN, "max_model_len": 32768}, **mapping}, environ=environ) == []


def test_the_rollouts_own_length_is_judged_by_model_rope_scaling_where_it_has_none():
    yarn = {"rope_type": "yarn", "factor": 1.5, "original_max_position_embeddings": 40960, **THETA}
    mapping = {"model": {**QWEN, "max_model_len": 61440, "rope_scaling": yarn},
               "explorer": {"rollout_model": {"max_model_len": 65536}}}
    assert _problems(mapping) == [(
        "rollout-length-refused", ("explorer.rollout_model.max_model_len 65536 is beyond the 61440 that the "
                                   "rollout's vLLM derives from the model.rope_scaling given as its longest length: "
                                   f"the rollout's vLLM refuses it unless {LONG}, or lower "
                                   "explorer.rollout_model.max_model_len to 61440"))]
    covering = {**mapping, "model": {**mapping["model"], "rope_scaling": {**yarn, "factor": 1.6}}}
    assert [code for code, _ in _problems(covering)] == ["rope-scaling-off-guide"]  # 1.6 is more than 61440 needs


def test_models_length_is_judged_by_the_rollouts_own_rope_scaling():
    yarn = {"rope_type": "yarn", "factor": 1.6, "original_max_position_embeddings": 40960, **THETA}
    mapping = {"model": {**QWEN, "max_model_len": 65536, "rope_scaling": yarn},
               "explorer": {"rollout_model": {"rope_scaling": {**yarn, "factor": 1.2}}}}
    codes = [code for code, _ in _problems(mapping)]
    assert codes == ["rollout-rope-scaling-differs", "rollout-length-refused"]
    assert _problems(mapping)[1][1] == (
        "max_model_len 65536, which the rollout takes, is beyond the 49152 that the rollout's vLLM derives from the "
        "explorer.rollout_model.rope_scaling given as its longest length: the rollout's vLLM refuses it unless "
        f"{LONG}, or lower max_model_len to 49152")


def test_a_rollout_rope_scaling_vllm_does_not_stretch_by_is_judged_at_the_native_context():
    # vLLM multiplies no llama3 factor into the length (VLLM_UNSCALED_ROPE_TYPES); the keys it builds one from given
    llama3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
              "original_max_position_embeddings": 40960}
    mapping = {"model": {**QWEN, "max_model_len": 32768},
               "explorer": {"rollout_model": {"max_model_len": 50000, "rope_scaling": llama3}}}
    assert [code for code, _ in _problems(mapping)] == ["rollout-rope-scaling-differs", "rollout-length-refused"]


def test_a_model_with_its_own_rope_scaling_is_judged_past_its_own_longest_length():
    mapping = {"model": {"model_path": "meta-llama/Llama-3.1-8B", "max_model_len": 8192},
               "explorer": {"rollout_model": {"max_model_len": 200000}}}
    assert _problems(mapping, model="llama3.1-8b") == [(
        "rollout-length-refused", ("explorer.rollout_model.max_model_len 200000 is beyond Llama-3.1-8B's native "
                                   "context of 131072, which its own llama3 RoPE scaling provides and the rollout's "
                                   f"vLLM takes as its longest length: the rollout's vLLM refuses it unless {LONG}, or "
                                   "lower explorer.rollout_model.max_model_len to 131072"))]


@pytest.mark.parametrize("rope", ["yarn", {"rope_type": "yarn", "factor": "lots"},
                                  {"rope_type": "yarn", "factor": "???"}])
def test_a_rollout_rope_scaling_that_cannot_be_read_is_left_to_the_lines_that_say_so(rope: Any):
    mapping = {"model": {**QWEN, "max_model_len": 65536}, "explorer": {"rollout_model": {"rope_scaling": rope}}}
    assert "rollout-length-refused" not in [code for code, _ in _problems(mapping)]

