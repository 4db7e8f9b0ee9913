"""A Trinity config's RoPE scaling judged and written as vLLM takes it from Trinity (session 73): Trinity hands vLLM
the mapping as the model's ``rope_parameters`` (``hf_overrides``), which vLLM sets past transformers' filling-in, so
vLLM reads ``rope_type`` alone, needs YaRN's ``original_max_position_embeddings``, and loses the model's RoPE base
unless ``model.rope_theta`` is given; per Trinity release (0.5.0 also takes a vLLM before 0.12, which fills them in)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from solver.tables import TableError, load_catalog
from solver.tables.model_config import load_model_config
from solver.trinity import load_config_mapping, trinity_config_problems

EXAMPLE = Path(__file__).parents[1] / "docs" / "examples" / "trinity.yaml"
HF_CONFIGS = Path(__file__).parent / "data" / "hf-configs"
HANDED = "Trinity hands vLLM the mapping as the model's rope_parameters, past transformers' filling-in"
OLDER = ("(with vLLM 0.12 or later, every one 0.5.2 takes; a vLLM before 0.12, as 0.5.0 also takes, fills it in)")
OFF_GUIDE = ("rope-scaling-off-guide", (
    "model.rope_scaling (factor 4.0 over 32768) covers the length, but not as Trinity-RFT's guide sets it, factor "
    "max_model_len / 40960 = 3.2 over 40960"))
TYPE_ALONE = (f"model.rope_scaling names its type in type alone ('yarn'): the rollout's vLLM reads rope_type and "
              f"fails as it starts (KeyError 'rope_type'), as {HANDED}; add rope_type: yarn")
NO_ORIGINAL = ("model.rope_scaling: missing original_max_position_embeddings: vLLM 0.19.1 refuses rope_type yarn "
               f"without it, and fails as it starts, as {HANDED}; add original_max_position_embeddings: 40960")
THETA = ("model.rope_scaling is given and model.rope_theta is not: the rollout's vLLM takes the scaling in place of "
         "Llama-3.1-8B's RoPE parameters, its rope_theta with them, and rotates at base 10000, not the model's 500000, "
         f"silently ({HANDED}); set model.rope_theta: 500000")
LLAMA3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
          "original_max_position_embeddings": 8192}


def _problems(model: str, model_keys: dict[str, object], version: str | None = None,
              **sections: object) -> list[tuple[str, str]]:
    mapping = {"model": {"model_path": "x", **model_keys}, **sections}
    return [(problem.code.value, problem.words) for problem in
            trinity_config_problems(mapping, load_catalog().model(model), 8, version=version)]


def _qwen3_8b(rope_scaling: dict[str, object], version: str | None = None) -> list[tuple[str, str]]:
    return _problems("8B", {"max_model_len": 131072, "rope_scaling": rope_scaling}, version)


CARD = {"factor": 4.0, "original_max_position_embeddings": 32768,  # Qwen's model cards' YaRN, 131072 tokens
        "rope_theta": 1000000}  # with the base Trinity 0.6's trainer needs in it (ropetheta, s78)


@pytest.mark.parametrize("version", [None, "0.6"])
def test_a_type_alone_is_refused_where_vllm_takes_it(version: str | None):
    assert _qwen3_8b({"type": "yarn", **CARD}, version) == [("rope-type-missing-refused", TYPE_ALONE), OFF_GUIDE]


def test_a_type_alone_is_a_but_line_on_trinity_05():
    assert _qwen3_8b({"type": "yarn", **CARD}, "0.5") == [("rope-scaling-wrong", f"{TYPE_ALONE} {OLDER}"), OFF_GUIDE]


@pytest.mark.parametrize("version", [None, "0.6", "0.5"])
def test_rope_type_is_what_vllm_reads(version: str | None):
    assert _qwen3_8b({"rope_type": "yarn", **CARD}, version) == [OFF_GUIDE]
    assert _qwen3_8b({"rope_type": "yarn", "type": "yarn", **CARD}, version) == [OFF_GUIDE]


@pytest.mark.parametrize(("version", "code", "words"), [
    (None, "rope-scaling-unbuilt-refused", NO_ORIGINAL), ("0.6", "rope-scaling-unbuilt-refused", NO_ORIGINAL),
    ("0.5", "rope-scaling-wrong", f"{NO_ORIGINAL} {OLDER}")])
def test_yarn_without_its_original_length_fails_as_vllm_starts(version: str | None, code: str, words: str):
    assert _qwen3_8b({"rope_type": "yarn", "factor": 3.2, "rope_theta": 1000000}, version) == [(code, words)]


def test_no_vllm_rollout_takes_it_no_such_line():
    # mode train: the transformers rule, which fills the original length in, and says the guide's
    assert _problems("8B", {"max_model_len": 131072, "rope_scaling": {"type": "yarn", **CARD}}, mode="train") == [
        OFF_GUIDE]
    # the original length transformers fills in, the config.json's 40960, is the guide's: nothing to say (s75)
    assert _problems("8B", {"max_model_len": 131072, "rope_scaling": {"rope_type": "yarn", "factor": 3.2,
                                                                      "rope_theta": 1000000}}, mode="train") == []


def test_the_rollouts_own_type_alone_is_refused_too():
    rollout = {"rollout_model": {"rope_scaling": {"type": "yarn", **CARD}}}
    problems = _problems("8B", {"max_model_len": 131072, "rope_scaling": {"type": "yarn", **CARD}}, explorer=rollout)
    assert problems[-1] == ("rope-type-missing-refused", TYPE_ALONE.replace(
        "model.rope_scaling", "explorer.rollout_model.rope_scaling"))


@pytest.mark.parametrize("version", [None, "0.6", "0.5"])
def test_llama_31_loses_its_rope_base_without_rope_theta(version: str | None):
    older = ("; set model.rope_theta", (  # s75
        " (on Trinity 0.5 with vLLM 0.12 or later, every one 0.5.2 takes; a vLLM before 0.12, as 0.5.0 also takes, "
        "keeps the model's rope_theta: 0.5.0 hands it the mapping as rope_scaling, which replaces the config.json's "
        "rope_scaling alone); set model.rope_theta"))
    fails = ("model.rope_scaling has no rope_theta: Trinity 0.6's trainer on verl before 0.8 sets it as Llama-3.1-8B's "
             "RoPE parameters, in which transformers 5 finds no base, and fails as it builds the model (a TypeError, "
             "modeling_rope_utils.py:446 in 5.12.1, :488 in 5.25.0) unless model.rope_theta is set and "
             "transformers is 5.12.1; ")
    missing = {  # 0.6's trainer needs it in the mapping (ropetheta, s78); no release named, a but: line (s79)
        "0.6": [("rope-theta-missing-refused", (f"{fails}add rope_theta: 500000 to it (as "
                                                "solver.trinity.patch_trinity_config does)"))],
        None: [("rope-theta-missing", (f"{fails}Trinity 0.5.0's and 0.5.2's fail alike on transformers 5 unless "
                                       "model.rope_theta is set, and 0.5's transformers 4 builds it; add "
                                       "rope_theta: 500000 to it (as solver.trinity.patch_trinity_config does; "
                                       "harmless on transformers 4)"))],
        "0.5": [("rope-theta-missing", (  # 0.5.0 and 0.5.2 on transformers 5 alike (s81)
            "model.rope_scaling has no rope_theta: on transformers 5 (Trinity 0.5.0 allows it, 0.5.2 up to 5.3.0) "
            "Trinity 0.5's trainer sets it as Llama-3.1-8B's RoPE parameters, in which transformers finds no base, and "
            "fails as it builds the model unless model.rope_theta is set; on transformers 4, which Trinity 0.5.2's "
            "vllm extra installs (vLLM 0.17.0 to 0.19.0 require transformers below 5), it builds; add rope_theta: "
            "500000 to it (as solver.trinity.patch_trinity_config does; harmless on transformers 4)"))],
    }.get(version, [])
    assert _problems("llama-3.1-8b", {"max_model_len": 32768, "rope_scaling": LLAMA3}, version) == [
        *missing, ("rope-theta-dropped", THETA.replace(*older) if version == "0.5" else THETA)]


@pytest.mark.parametrize(("model_keys", "sections"), [
    ({"rope_theta": 500000}, {}),
    ({}, {"explorer": {"rollout_model": {"rope_theta": 500000}}}),
    ({"rope_scaling": {**LLAMA3, "rope_theta": 500000}}, {}),  # in the mapping itself
    ({}, {"mode": "train"}),
    ({"rope_scaling": None}, {}),
])
def test_the_rope_base_given_or_nothing_handed_keeps_it(model_keys: dict[str, object], sections: dict[str, object]):
    # on Trinity 0.5, whose trainer builds a mapping without rope_theta on transformers 4 (no release named: a line,
    # test_ropecheck_s79; under 0.5 one of its own for transformers 5 since s81, test_persona62_s81)
    problems = _problems("llama-3.1-8b", {"max_model_len": 32768, "rope_scaling": LLAMA3, **model_keys}, "0.5",
                         **sections)
    assert [problem for problem in problems if problem[0] != "rope-theta-missing"] == []


def test_the_rollouts_own_scaling_loses_it_too():
    problems = _problems("llama-3.1-8b", {"max_model_len": 32768}, explorer={"rollout_model": {"rope_scaling": LLAMA3}})
    assert problems[-1] == ("rope-theta-dropped", THETA.replace(
        "model.rope_scaling is given", "explorer.rollout_model.rope_scaling is given"))


def test_qwen3_dense_keeps_its_base_and_qwen3_moe_does_not():
    catalog = load_catalog()
    assert catalog.model("8B").vllm_rope_theta_lost is None  # vLLM's Qwen3 class defaults to its 1000000
    assert catalog.model("30B-A3B").vllm_rope_theta_lost == (1e6, 1e4)
    assert catalog.model("llama-3.1-8b").vllm_rope_theta_lost == (5e5, 1e4)


@pytest.mark.parametrize(("name", "lost"), [
    ("Qwen3-8B", None), ("Qwen3-30B-A3B", (1e6, 1e4)), ("Llama-3.2-3B", (5e5, 1e4)), ("Llama-2-7b-hf", None),
    # Gemma 3's full-attention layers take the flat mapping alike (gemma3.py:168-174 in vLLM 0.19.1)
    ("Mistral-Nemo-Base-2407", (1e6, 1e4)), ("gemma-3-1b-pt", (1e6, 1e4))])
def test_a_config_jsons_base_is_read(name: str, lost: tuple[float, float] | None):
    assert load_model_config(HF_CONFIGS / f"{name}.json").vllm_rope_theta_lost == lost


def test_a_base_that_is_no_number_is_refused(tmp_path: Path):
    config = json.loads((HF_CONFIGS / "Qwen3-8B.json").read_text(encoding="utf-8")) | {"rope_theta": "big"}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(TableError) as raised:
        load_model_config(path)
    assert str(raised.value) == f"{path}: rope_theta: expected a positive number such as 1000000, got 'big'"


def _long_example(tmp_path: Path, rope_scaling: str) -> Path:
    config = tmp_path / "c.yaml"
    config.write_text(EXAMPLE.read_text(encoding="utf-8").replace(
        "  max_response_tokens: 30720\n  max_model_len: 32768  # prompt + response",
        f"  max_response_tokens: 129024\n  max_model_len: 131072\n  rope_scaling: {rope_scaling}", 1).replace(
        "  node_num: 1", "  node_num: 4", 1).replace("engine_num: 2", "engine_num: 8", 1), encoding="utf-8")
    return config


@pytest.mark.parametrize(("given", "written"), [
    # the model cards' form, kept (it reaches the length): rope_type joins type
    ("{type: yarn, factor: 4.0, original_max_position_embeddings: 32768}",
     {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768, "rope_type": "yarn",
      "rope_theta": 1000000}),
    # short of the length: the guide's, over the native context, under both keys
    ("{type: yarn, factor: 2.0}",
     {"type": "yarn", "factor": 3.2, "rope_type": "yarn", "original_max_position_embeddings": 40960,
      "rope_theta": 1000000}),
])
def test_write_gives_vllm_rope_type_and_the_original_length(cli, tmp_path: Path, given: str,
                                                            written: dict[str, object]):
    out = tmp_path / "w.yaml"
    status, _, err = cli("--from-config", str(_long_example(tmp_path, given)), "--gpu", "H20-96GB", "--write",
                         str(out))
    assert status == 0 and "Traceback" not in err
    assert load_config_mapping(out.read_text(encoding="utf-8"), "w.yaml")["model"]["rope_scaling"] == written
    status, text, _ = cli("--from-config", str(out), "--gpu", "H20-96GB", "--check", "--json")
    assert not json.loads(text)[0]["current"]["refused"]


def test_fragments_give_qwen3_moe_its_rope_base(cli):
    status, out, _ = cli("--model", "30B-A3B", "--len", "131072", "--gpus", "32", "--gpu", "H20-96GB", "--emit",
                         "trinity")
    assert status == 0
    assert ("    original_max_position_embeddings: 40960\n"
            "    # Qwen3-30B-A3B's own; Trinity 0.6's trainer on verl before 0.8 fails to build the model on a\n"
            "    # rope_scaling without it (transformers 5 finds no base)\n    rope_theta: 1000000\n"
            "  # Qwen3-30B-A3B's own; the rollout's vLLM takes 10000 where the rope_scaling comes without it\n"
            "  rope_theta: 1000000\n") in out
    status, out, _ = cli("--model", "8B", "--len", "131072", "--gpus", "32", "--gpu", "H20-96GB", "--emit", "trinity")
    assert status == 0 and "rope_type: yarn" in out and "\n  rope_theta" not in out  # the mapping's alone
