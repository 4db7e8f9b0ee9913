"""RoPE scaling advice per model type (ropetype, session 77: solver/tables/rope_types.py, read from transformers
5.12.1's configuration classes and vLLM 0.19.1's ``get_rope``): YaRN where the type takes it (Qwen3 unchanged,
Mistral), the model's own scaling kept (Llama-3.1's llama3, Phi-3-mini-128k's longrope), none for a Phi-3 without its
own LongRoPE factors (persona47: YaRN was advised, not Phi-3's LongRoPE; phi3rope, s78: a given one builds as given,
a caution), and an unknown type's YaRN said to be assumed."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from solver.results import length_cautions
from solver.tables import load_catalog
from solver.tables.model_config import load_model_config
from solver.tables.rope_types import (
    LONGROPE_ACCEPTED,
    PHI3_NO_YARN,
    PHIMOE_NO_YARN,
    PHIMOE_TRAINER_READS,
    ROPE_BY_MODEL_TYPE,
    RopeAdvice,
    RopeExtension,
    rope_advice,
)

Cli = Callable[..., tuple[int, str, str]]
CONFIGS = Path(__file__).parent / "data" / "hf-configs"
QWEN3 = RopeExtension("qwen3")
PHI3 = RopeExtension("phi3", yarn_advised=False, why_no_yarn=PHI3_NO_YARN, accepted=LONGROPE_ACCEPTED)
PHI3_NO_YARN_WORDS = (
    "no YaRN written for model_type phi3: Phi-3's checkpoints reach past their native context by LongRoPE, a "
    "short_factor and a long_factor per pair of rotary dimensions trained with the model, which no factor gives; a "
    "yarn, linear or dynamic rope_scaling is built as given by the trainer's transformers and the rollout's vLLM, a "
    "RoPE the checkpoint was not trained with (Trinity sets it on the loaded config, past the config class that reads "
    "yarn as longrope); use a checkpoint whose config.json gives its own longrope rope_scaling, as "
    "Phi-3-mini-128k-instruct's does, or plan within the native context")
"""What a Phi-3-mini-4k past its native context is told, after the length."""
NOT_QWEN = "YaRN on a model that is not Qwen's, for which rft-solver knows of no validation"


def _phi3_4k(tmp_path: Path) -> Path:
    """A Phi-3-mini-4k-instruct-like config.json: Phi-3-mini-128k's shape, 4096 positions, no RoPE scaling."""
    config = json.loads((CONFIGS / "Phi-3-mini-128k-instruct.json").read_text(encoding="utf-8"))
    config |= {"_name_or_path": "Phi-3-mini-4k-instruct", "max_position_embeddings": 4096, "rope_scaling": None,
               "sliding_window": 2047}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def _unknown(tmp_path: Path) -> Path:
    """Mistral-7B-v0.3's config.json under a model type rft-solver has not read, named Exa-7B."""
    config = json.loads((CONFIGS / "Mistral-7B-v0.3.json").read_text(encoding="utf-8"))
    config |= {"_name_or_path": "Exa-7B", "model_type": "exaone_like"}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


@pytest.mark.parametrize(("model_type", "own", "advice"), [
    ("qwen3", None, RopeAdvice("yarn", QWEN3)),
    ("mistral", None, RopeAdvice("yarn", RopeExtension("mistral"))),
    ("llama", "llama3", RopeAdvice("own", RopeExtension("llama"))),
    ("phi3", None, RopeAdvice("none", PHI3)),
    ("phi3", "longrope", RopeAdvice("own", PHI3)),
    ("phimoe", None, RopeAdvice("none", RopeExtension("phimoe", False, PHIMOE_NO_YARN, LONGROPE_ACCEPTED,
                                                      PHIMOE_TRAINER_READS))),
    ("exaone_like", None, RopeAdvice("yarn", QWEN3, assumed=True)),
    (None, None, RopeAdvice("yarn", QWEN3, assumed=True)),
])
def test_one_function_decides_by_the_types_table(model_type: str | None, own: str | None, advice: RopeAdvice):
    assert rope_advice(model_type, own) == advice


def test_only_phi3_and_phimoe_are_advised_no_yarn():
    assert [t for t, extension in ROPE_BY_MODEL_TYPE.items() if not extension.yarn_advised] == ["phi3", "phimoe"]


def test_qwen3_is_unchanged():
    model = load_catalog().model("Qwen3-8B")
    assert (model.rope_advice, model.yarn_factor(65536), length_cautions(model, 65536)) == (
        RopeAdvice("yarn", QWEN3), 1.6, ())


def test_qwen3s_fragment_writes_yarn_as_before(cli: Cli):
    status, out, _ = cli("--model", "Qwen3-8B", "--gpu", "h100", "--gpus", "8", "--len", "65536", "--emit", "trinity")
    assert status == 0
    assert ("  rope_scaling:  # YaRN: max_model_len is beyond the native context of 40960\n    rope_type: yarn\n"
            "    factor: 1.6  # max_model_len / 40960\n    original_max_position_embeddings: 40960\n") in out
    assert "# model.rope_scaling reaches the rollout (vLLM), but on Trinity 0.6" in out


def test_llama_31_keeps_its_own_llama3():
    model = load_catalog().model("Llama-3.1-8B")
    assert (model.rope_advice.kind, model.yarn_factor(163840)) == ("own", None)
    assert length_cautions(model, 163840) == (
        ("beyond the native 131072, which Llama-3.1-8B's own llama3 RoPE scaling provides: no YaRN written; vLLM's "
         "rollout refuses it, past the 131072 it derives from the model's config, unless "
         "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set; check the model handles it"),)


def test_phi3_128k_keeps_its_own_longrope():
    model = load_model_config(CONFIGS / "Phi-3-mini-128k-instruct.json")
    assert (model.rope_advice, model.yarn_factor(262144)) == (RopeAdvice("own", PHI3), None)


def test_mistral_takes_yarn_unvalidated():
    model = load_model_config(CONFIGS / "Mistral-7B-v0.3.json")
    assert (model.rope_advice.kind, model.rope_advice.assumed, model.yarn_factor(65536)) == ("yarn", False, 2.0)
    assert length_cautions(model, 65536) == (
        f"YaRN factor 2.0 at 65536 tokens: {NOT_QWEN}: check the model's quality at this length",)


def test_phi3_4k_gets_no_yarn_and_says_why(tmp_path: Path):
    model = load_model_config(_phi3_4k(tmp_path))
    assert (model.rope_advice, model.yarn_factor(16384)) == (RopeAdvice("none", PHI3), None)
    assert length_cautions(model, 16384) == (
        (f"beyond the native 4096 with no RoPE scaling to reach it: {PHI3_NO_YARN_WORDS}; vLLM's rollout refuses it, "
         "past the 4096 it derives from the model's config, unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set; past 4096, "
         "transformers' trainer rotates by plain RoPE at positions the model was not trained on, and vLLM's rollout "
         "reads past the end of its rotary cache of 4096 positions (positions past it lead to nan, vLLM warns): it "
         "samples those tokens with no rotation the trainer computes"),)
    assert length_cautions(model, 4096) == ()  # within it, nothing to say


def test_persona47s_phi3_plan_writes_no_rope_scaling(cli: Cli, tmp_path: Path):
    config = _phi3_4k(tmp_path)
    argv = ("--model-config", str(config), "--gpu", "h100", "--gpus", "4", "--len", "16k")
    status, out, err = cli(*argv, "--emit", "trinity")
    assert (status, err) == (0, "")
    assert out.endswith("model:\n  max_model_len: 16384\ntrainer:\n  ulysses_sequence_parallel_size: 1\n"
                        "  max_token_len_per_gpu: 32768  # ceil(2 * 16384 / 1), Trinity's default, written out\n")
    assert "rope_scaling:" not in out.replace("no rope_scaling is written", "")
    assert "#   VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True solve" in out
    assert "# max_model_len is beyond Phi-3-mini-4k-instruct's native context of 4096, with no RoPE scaling to\n" in out
    status, out, _ = cli(*argv, "--json")
    [plan] = json.loads(out)[0]["plans"]
    assert (status, plan["rope_scaling_factor"], plan["caution_codes"][:1]) == (0, None, ["past-native-no-yarn"])
    assert plan["cautions"][0].startswith(
        f"beyond the native 4096 with no RoPE scaling to reach it: {PHI3_NO_YARN_WORDS};")


def phi3_untrained(named: str, write: str = "--write") -> str:
    """The caution on a Phi-3-mini-4k's scaling by a factor, `named` (``rope_type yarn``), that builds as given."""
    return (f"model.rope_scaling: {named} on Phi-3-mini-4k-instruct, for whose model_type phi3 rft-solver writes no "
            f"YaRN: {PHI3_NO_YARN}; remove it (as {write} does), and {LONGROPE_ACCEPTED}")


def test_a_yarn_given_to_phi3_is_a_caution_and_write_removes_it(cli: Cli, tmp_path: Path):
    # Before phi3rope (s78) refused (rope-scaling-unbuilt-refused): Phi-3's config class was said to read it as
    # longrope, but Trinity sets it on the loaded config, which transformers and vLLM build as given.
    model = _phi3_4k(tmp_path)
    config, written = tmp_path / "trinity.yaml", tmp_path / "written.yaml"
    config.write_text("model:\n  model_path: /nowhere/Phi-3-mini-4k-instruct\n  max_model_len: 16384\n"
                      "  rope_scaling: {rope_type: yarn, factor: 4.0, original_max_position_embeddings: 4096}\n"
                      "algorithm: {algorithm_type: grpo}\ncluster:\n  node_num: 1\n  gpu_per_node: 8\n"
                      "explorer:\n  rollout_model:\n    engine_num: 4\n", encoding="utf-8")
    argv = ("--model-config", str(model), "--gpu", "h100")
    status, out, _ = cli("--from-config", str(config), *argv, "--check", "--json")
    current = json.loads(out)[0]["current"]
    assert (status, current["config_problem_codes"]) == (0, ["rope-scaling-untrained"])
    assert current["config_problems"] == [phi3_untrained("rope_type yarn")]
    status, _, err = cli("--from-config", str(config), *argv, "--write", str(written))
    assert status == 0, err
    assert "rope_scaling" not in written.read_text(encoding="utf-8")


def test_an_unknown_type_says_the_yarn_it_assumes(cli: Cli, tmp_path: Path):
    assumed = (" (its model_type exaone_like is not one whose RoPE rft-solver has read: it assumes YaRN extends it, "
               "as it does Qwen3 and Llama)")
    model = load_model_config(_unknown(tmp_path))
    assert (model.rope_advice, model.yarn_factor(65536)) == (RopeAdvice("yarn", QWEN3, assumed=True), 2.0)
    assert length_cautions(model, 65536) == (
        f"YaRN factor 2.0 at 65536 tokens: {NOT_QWEN}{assumed}: check the model's quality at this length",)
    status, out, _ = cli("--model-config", str(tmp_path / "config.json"), "--gpu", "h100", "--gpus", "4", "--len",
                         "64k")
    assert status == 0
    assert ("max_model_len  65536, past the native 32768 (YaRN rope scaling, factor 2.0; rft-solver knows of no "
            "validation of YaRN on a model that is not Qwen's (its\n") in out
    assert ("model.rope_scaling: {rope_type: yarn, factor: 2.0, original_max_position_embeddings: 32768, "
            "rope_theta: 1000000}\n") in out


def test_the_maps_legend_says_what_its_mark_means_for_phi3(cli: Cli, tmp_path: Path):
    status, out, _ = cli("map", "--model-config", str(_phi3_4k(tmp_path)), "--gpu", "h100", "--gpus-up-to", "4")
    assert status == 0 and "E+O+SP4@4~!^" in out
    assert ("; ^ past the native context with no RoPE scaling to reach it (the model's type is advised no YaRN) "
            "(quality untested)") in " ".join(out.split())


def test_a_config_without_a_model_type_says_the_yarn_it_assumes(tmp_path: Path):
    config = json.loads((CONFIGS / "Mistral-7B-v0.3.json").read_text(encoding="utf-8"))
    del config["model_type"]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config | {"architectures": ["AnonForCausalLM"]}), encoding="utf-8")
    model = load_model_config(path)
    assert length_cautions(model, 65536)[-1] == (
        f"YaRN factor 2.0 at 65536 tokens: {NOT_QWEN} (its config.json gives no model_type: it assumes YaRN extends "
        "it, as it does Qwen3 and Llama): check the model's quality at this length")
