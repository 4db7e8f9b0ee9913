"""Small slips (smallslips28, session 78): GLM-4's and Llama 4's MLP activation is ``activation_fn`` (read in
transformers 5.12.1's and 4.57.6's ``modeling_glm4.py`` and ``modeling_llama4.py``), Hunyuan-MoE has no ``mlp.act_fn``
and under transformers 4 ``all-linear`` adapts its shared expert, StableLM's per-head norms are a ``norms`` list;
under a release of either layout a ``target_modules`` regex one transformers' names alone take is cautioned
(``lora-targets-one-transformers``); ``lora-targets-saved-split`` says a mixture of experts' regex is saved split under
0.5's transformers 4 too; ``solve cluster`` names the config.json keys two configs of one name differ in; a plan past
Phi-3-mini-128k's sliding window of 262144 is cautioned (``past-sliding-window``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import qwen3_8b_checkpoint

import solver
from solver.results import past_window_words
from solver.tables.model_config import config_keys_differing
from solver.tables.peft_match import MATCHES_NO_MODULE, TargetMatch, peft_target_match, peft_target_refusal
from solver.tables.peft_names import PEFT_NAMES_BY_MODEL_TYPE, SEPARATE_NAMES_BY_MODEL_TYPE
from solver.trinity.checks import lora_targets_problem
from solver.trinity.config import read_trinity_config

Cli = Callable[..., tuple[int, str, str]]
CONFIGS = Path(__file__).parent / "data" / "hf-configs"
MIXTRAL = solver.load_model_config(CONFIGS / "Mixtral-8x7B-v0.1.json")
QWEN3_30B_A3B = solver.load_catalog().model("Qwen3-30B-A3B")
PHI3 = CONFIGS / "Phi-3-mini-128k-instruct.json"
UNSUPPORTED = ("which PEFT cannot adapt (\"Target module ... is not supported\": it adapts linear layers and "
               "embeddings alone)")
MIXTRAL_5 = ("model.layers.N.self_attn.{q,k,v,o}_proj, model.layers.N.mlp.gate, model.layers.N.mlp.experts.{w1,w3,w2}, "
             "model.embed_tokens and lm_head")
MIXTRAL_4 = ("model.layers.N.self_attn.{q,k,v,o}_proj, model.layers.N.block_sparse_moe.gate, "
             "model.layers.N.block_sparse_moe.experts.E.{w1,w3,w2}, model.embed_tokens and lm_head")


# (1) The layers' other modules, as transformers 5.12.1 and 4.57.6 name them (Glm4MLP.activation_fn,
# Llama4TextMLP.activation_fn for a dense layer's feed_forward and the shared expert; HunYuanMoEV1Moe in every layer).

@pytest.mark.parametrize(("model_type", "pattern", "other"), [
    ("glm4", ".*mlp\\.activation_fn", "model.layers.N.mlp.activation_fn"),
    ("llama4_text", ".*feed_forward\\.activation_fn", "model.layers.N.feed_forward.activation_fn"),
    ("llama4_text", ".*shared_expert\\.activation_fn", "model.layers.N.feed_forward.shared_expert.activation_fn"),
    ("stablelm", ".*q_layernorm\\.norms", "model.layers.N.self_attn.q_layernorm.norms"),  # a ModuleList of norms
])
def test_an_activation_or_norm_list_is_a_module_peft_cannot_adapt(model_type: str, pattern: str, other: str) -> None:
    for names in (PEFT_NAMES_BY_MODEL_TYPE[model_type], SEPARATE_NAMES_BY_MODEL_TYPE.get(model_type)):
        if names is not None:
            assert peft_target_refusal(pattern, None, names) == f"matches {other}, {UNSUPPORTED}"


@pytest.mark.parametrize(("model_type", "pattern"), [
    ("glm4", ".*mlp\\.act_fn"),
    ("llama4_text", ".*feed_forward\\.act_fn"),
    ("llama4_text", ".*shared_expert\\.act_fn"),
    # every layer's mlp is the mixture of experts, which has no activation (.*mlp\\.act_fn matches shared_mlp.act_fn)
    ("hunyuan_v1_moe", ".*layers\\.[0-9]+\\.mlp\\.act_fn"),
])
def test_no_such_activation_name(model_type: str, pattern: str) -> None:
    for names in (PEFT_NAMES_BY_MODEL_TYPE[model_type], SEPARATE_NAMES_BY_MODEL_TYPE.get(model_type)):
        if names is not None:
            assert peft_target_refusal(pattern, None, names) == MATCHES_NO_MODULE


def test_transformers_4_adapts_hunyuans_shared_expert() -> None:
    # HunYuanMoEV1Moe.shared_mlp is a HunYuanMoEV1MLP of three nn.Linear in 4.57.6, which PEFT adapts as they are;
    # under 5 PEFT turns their names into the routed experts' (test_loraleft_s78), so all-linear adapts them not.
    shared = ("shared_mlp.gate_proj", "shared_mlp.up_proj", "shared_mlp.down_proj")
    separate = SEPARATE_NAMES_BY_MODEL_TYPE["hunyuan_v1_moe"]
    assert peft_target_match(".*shared_mlp\\.(gate|up|down)_proj", None, separate) == TargetMatch(shared, (), None)
    assert peft_target_match("all-linear", None, separate).linears[-3:] == shared
    assert "mlp.shared_mlp.gate_proj" not in PEFT_NAMES_BY_MODEL_TYPE["hunyuan_v1_moe"].adapted


# (2) Under 0.5, 0.5.0 or 0.5.2 (either layout) a regex one transformers' names alone take is cautioned.

def test_w1_alone_is_cautioned_where_transformers_5_may_run() -> None:
    problem = lora_targets_problem(".*\\.w1", None, MIXTRAL, "either")
    assert problem is not None and (problem.code.value, problem.words) == ("lora-targets-one-transformers", (
        "model.lora_configs[0].target_modules '.*\\.w1', on Mixtral-8x7B-v0.1 (a mixture of experts, model_type "
        f"mixtral), is taken on transformers 4's module names ({MIXTRAL_4}) but matches the routed experts' w1 without "
        "their w3, which PEFT fuses into gate_up_proj (\"Cannot convert PEFT target(s) ... because they are fused\") "
        f"among transformers 5's ({MIXTRAL_5}): Trinity 0.5.0 and 0.5.2 run on transformers 4 or 5, and the run fails "
        "as Trinity makes the adapter where it has transformers 5: run it with transformers 4 (Trinity 0.5.1 pins it): "
        "no regular expression adapts the same modules on transformers 5's names"))  # not q_proj|v_proj: smallslips30


def test_a_regex_only_transformers_5s_names_take_is_cautioned_too() -> None:
    pattern = ".*mlp\\.experts\\.(gate_proj|up_proj|down_proj)"  # transformers 4's are mlp.experts.E.gate_proj
    problem = lora_targets_problem(pattern, None, QWEN3_30B_A3B, "either")
    assert problem is not None and (problem.code.value, problem.words) == ("lora-targets-one-transformers", (
        f"model.lora_configs[0].target_modules '{pattern}', on Qwen3-30B-A3B (a mixture of experts), is taken on "
        "transformers 5's module names (model.layers.N.self_attn.{q,k,v,o}_proj, model.layers.N.mlp.gate, "
        "model.layers.N.mlp.experts.{gate,up,down}_proj, model.embed_tokens and lm_head) but matches no module among "
        "transformers 4's (model.layers.N.self_attn.{q,k,v,o}_proj, model.layers.N.mlp.gate, "
        "model.layers.N.mlp.experts.E.{gate,up,down}_proj, model.embed_tokens and lm_head): Trinity 0.5.0 and 0.5.2 "
        "run on transformers 4 or 5, and the run fails as Trinity makes the adapter where it has transformers 4: run "
        "it with transformers 5 (Trinity 0.5.2 takes up to 5.3.0, 0.6 requires 5.12.1 or later), or give "
        ".*\\.(mlp\\.experts|mlp\\.experts\\.\\d+)\\.(gate_proj|up_proj|down_proj), which adapts the same modules on "
        "both transformers' names"))  # the same experts, where q_proj|v_proj (before smallslips30) adapts the attention
    # each release of one layout: taken on its own, refused on the other's
    assert lora_targets_problem(pattern, None, QWEN3_30B_A3B, "fused") is None
    separate = lora_targets_problem(pattern, None, QWEN3_30B_A3B, "separate")
    assert separate is not None and separate.code.value == "lora-configs-refused"
    # a regex both take, or a dense model's, is said nothing of
    assert lora_targets_problem(".*\\.(q_proj|v_proj)", None, QWEN3_30B_A3B, "either") is None


def test_the_cli_cautions_without_refusing(cli: Cli, tmp_path: Path) -> None:
    trinity = tmp_path / "trinity.yaml"
    trinity.write_text(
        "algorithm: {algorithm_type: grpo}\ncluster: {node_num: 4, gpu_per_node: 8}\n"
        "buffer: {batch_size: 16, train_batch_size: 64}\n"
        "model:\n  model_path: /m\n  max_model_len: 4096\n"
        "  lora_configs: [{lora_rank: 16, target_modules: '.*\\.w1'}]\n"
        "explorer:\n  rollout_model: {engine_num: 4, tensor_parallel_size: 4}\n", encoding="utf-8")
    status, out, err = cli("--from-config", str(trinity), "--model-config", str(CONFIGS / "Mixtral-8x7B-v0.1.json"),
                           "--gpu", "h100", "--check", "--trinity-version", "0.5.2", "--json")
    current = json.loads(out)[0]["current"]
    assert (status, err, current["refused"], current["config_problem_codes"]) == (
        0, "", False, ["lora-targets-one-transformers", "lora-counted-as-full", "lora-targets-saved-split"])


# (3) lora-targets-saved-split worded by release.

def _saved_split(version: str) -> str:
    text = ("model:\n  model_path: /m\n  max_model_len: 4096\n"
            "  lora_configs: [{lora_rank: 16, target_modules: '.*\\.(q_proj|v_proj)'}]\n"
            "cluster: {node_num: 1, gpu_per_node: 8}\n")
    config = read_trinity_config(text, "trinity.yaml", {}, version)  # type: ignore[arg-type]
    [words] = [words for words, code in zip(config.notes, config.note_codes, strict=True)
               if code.value == "lora-targets-saved-split"]
    return words


def test_under_05_a_mixture_of_experts_regex_is_saved_split_too() -> None:
    converted = ("on a mixture of experts whose config PEFT converts, it turns it into module names before the save, "
                 "and lora-moe-config-unsaved says what fails")
    assert f"(['.', '*', '\\\\', '(', ...]) on a dense model ({converted}): this run is unaffected" in _saved_split(
        "0.6")
    assert ("(['.', '*', '\\\\', '(', ...]) on a dense model, and with transformers 4 (Trinity 0.5.1's; 0.5.0 and "
            "0.5.2 take 4 or 5) on a mixture of experts too, where PEFT converts nothing (with transformers 5, "
            f"{converted}): this run is unaffected") in _saved_split("0.5")


# (4) solve cluster names the config.json keys two configs of one name differ in.

def test_config_keys_differing_names_nested_keys_and_missing_ones(tmp_path: Path) -> None:
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    first.write_text(json.dumps({"model_type": "qwen3", "rope_scaling": {"rope_type": "yarn", "factor": 2.0},
                                 "rope_theta": 1000000, "use_cache": True}), encoding="utf-8")
    second.write_text(json.dumps({"model_type": "qwen3", "rope_scaling": {"rope_type": "yarn", "factor": 4.0},
                                  "rope_theta": 1000000.0, "use_cache": 1, "torch_dtype": "bfloat16"}),
                      encoding="utf-8")
    # 1000000 and 1000000.0 differ in type as JSON reads them, as do true and 1
    assert config_keys_differing(first, second) == ["rope_scaling.factor", "rope_theta", "use_cache", "torch_dtype"]
    assert config_keys_differing(first, first) == []


def test_the_cluster_refusal_names_the_keys(cli: Cli, tmp_path: Path) -> None:
    qwen3_8b_checkpoint(tmp_path / "a", _name_or_path="org/mine")
    qwen3_8b_checkpoint(tmp_path / "b", _name_or_path="org/mine", max_position_embeddings=32768,
                        rope_scaling={"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 32768})
    path = tmp_path / "fleet.yaml"
    path.write_text("pools:\n  - {name: a, gpu: A100-80GB, nodes: 2, gpus_per_node: 8}\njobs:\n"
                    "  - {name: one, model_config: a, max_model_len: 8192}\n"
                    "  - {name: two, model_config: b, max_model_len: 8192}\n", encoding="utf-8")
    assert cli("cluster", str(path)) == (2, "", (
        f"solve cluster: error: {path}: job two, model_config: b names its model 'mine', as job one's does, but the "
        "two differ in their config.json's max_position_embeddings, rope_scaling: give the folders or _name_or_path "
        "different names\n"))


# (5) Past a sliding window the model trained without.

PAST_WINDOW = (
    "past Phi-3-mini-128k-instruct's sliding window of 262144 tokens (its config.json's sliding_window, beyond the "
    "native 131072): the trainer's transformers and the rollout's vLLM alike attend each token to the 262144 up to it "
    "alone, so a token past it no longer sees the sequence's start (the prompt); plan --len 262144 to keep full "
    "attention, or check the model's quality past it")


def test_a_plan_past_phi3s_window_is_cautioned(cli: Cli) -> None:
    status, out, err = cli("--model-config", str(PHI3), "--gpu", "h100", "--maximize", "len", "--gpus", "8", "--json")
    [plan] = json.loads(out)[0]["plans"]
    assert (status, err, plan["max_model_len"]) == (0, "", 624640)
    assert plan["caution_codes"][:2] == ["past-native-on-own-scaling", "past-sliding-window"]
    assert plan["cautions"][1] == PAST_WINDOW
    status, out, _ = cli("--model-config", str(PHI3), "--gpu", "h100", "--len", "262144", "--gpus", "8", "--json")
    [within] = json.loads(out)[0]["plans"]
    assert status == 0 and "past-sliding-window" not in within["caution_codes"]


def test_a_window_within_the_native_context_is_the_models_own() -> None:
    phi3 = solver.load_model_config(PHI3)
    assert phi3.vllm_sliding_window == (262144, 32)
    assert past_window_words(phi3, 262145) == PAST_WINDOW
    assert past_window_words(phi3, 262144) is None
    own = phi3.model_copy(update={"vllm_sliding_window": (4096, 32)})  # Mistral-7B-v0.1's, say: trained so
    assert past_window_words(own, 524288) is None
