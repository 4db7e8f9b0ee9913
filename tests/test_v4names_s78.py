"""LoRA's ``target_modules`` matched against the module names of the release's transformers (v4names, session 78):
Trinity 0.5.1 pins ``transformers<5.0.0,>=4.51.0`` (its wheel's METADATA), under which a mixture of experts' routed
experts are an ``nn.ModuleList`` of ``nn.Linear`` per expert (``block_sparse_moe.experts.N.w1`` of Mixtral,
``mlp.experts.N.gate_proj`` of Qwen3-MoE) that PEFT 0.21.2 matches as they are, with no conversion
(`SEPARATE_NAMES_BY_MODEL_TYPE`, `Model.peft_names_of`); 0.6's transformers 5 (``fused``) keeps its own names, and
0.5.0, 0.5.2 and 0.5 (``either``) take a regex that either takes. Each refusal and acceptance below was checked
against PEFT 0.21.2's ``get_peft_model`` on a tiny random model under transformers 4.57.6 and 5.12.1 (CPU), and so
were the tiny models' adapter counts."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import solver
from solver.memory import lora_parameters
from solver.tables import ExpertLayout
from solver.tables.peft_match import peft_target_match, peft_target_refusal, shown_module_names
from solver.tables.peft_names import (
    PEFT_EXPERTS,
    PEFT_NAMES_BY_MODEL_TYPE,
    SEPARATE_NAMES_BY_MODEL_TYPE,
    separate_module_names,
)
from solver.trinity.checks import lora_targets_problem

Cli = Callable[..., tuple[int, str, str]]
CONFIGS = Path(__file__).parent / "data" / "hf-configs"
MIXTRAL_CONFIG = CONFIGS / "Mixtral-8x7B-v0.1.json"
MIXTRAL = solver.load_model_config(MIXTRAL_CONFIG)
QWEN3_30B_A3B = solver.load_catalog().model("Qwen3-30B-A3B")
UNSUPPORTED = ("which PEFT cannot adapt (\"Target module ... is not supported\": it adapts linear layers and "
               "embeddings alone)")
FIX = ("and Trinity fails as it makes the adapter: give all-linear, or a regular expression that matches whole names, "
       "such as .*\\.(q_proj|v_proj)")
MIXTRAL_5 = ("model.layers.N.self_attn.{q,k,v,o}_proj, model.layers.N.mlp.gate, model.layers.N.mlp.experts.{w1,w3,w2}, "
             "model.embed_tokens and lm_head")
MIXTRAL_4 = ("model.layers.N.self_attn.{q,k,v,o}_proj, model.layers.N.block_sparse_moe.gate, "
             "model.layers.N.block_sparse_moe.experts.E.{w1,w3,w2}, model.embed_tokens and lm_head")


def test_transformers_4s_names_differ_for_the_mixtures_of_experts_whose_experts_are_linear_layers() -> None:
    # The dense types' linear layers are the same under both (checked: each of the 25 types' tiny model's
    # named_modules() under 4.57.6 and 5.12.1); StableLM's attention holds two more modules under 4, no linear one.
    assert set(SEPARATE_NAMES_BY_MODEL_TYPE) == {
        "qwen3_moe", "olmoe", "mixtral", "phimoe", "qwen2_moe", "deepseek_v2", "deepseek_v3", "glm4_moe",
        "ernie4_5_moe", "hunyuan_v1_moe", "stablelm"}
    assert SEPARATE_NAMES_BY_MODEL_TYPE["stablelm"].adapted == PEFT_NAMES_BY_MODEL_TYPE["stablelm"].adapted
    for names in SEPARATE_NAMES_BY_MODEL_TYPE.values():  # the counts' flags agree with the names
        assert names.fused == ()
        assert names.router is None or names.router in names.adapted, names.model_type
        assert any(".E." in name for name in names.adapted) is names.separate_experts, names.model_type
        assert names.expert_count == (PEFT_EXPERTS if names.separate_experts else 0)
    assert SEPARATE_NAMES_BY_MODEL_TYPE["mixtral"].adapted == (
        "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj", "block_sparse_moe.gate",
        "block_sparse_moe.experts.E.w1", "block_sparse_moe.experts.E.w3", "block_sparse_moe.experts.E.w2")
    assert SEPARATE_NAMES_BY_MODEL_TYPE["qwen3_moe"].adapted[4:] == (
        "mlp.gate", "mlp.experts.E.gate_proj", "mlp.experts.E.up_proj", "mlp.experts.E.down_proj")
    # A model's names hold its own count of experts; a dense model's and transformers 5's none
    assert [MIXTRAL.peft_names_of("separate").expert_count, QWEN3_30B_A3B.peft_names_of("separate").expert_count,
            MIXTRAL.peft_names_of("fused").expert_count] == [8, 128, 0]
    assert MIXTRAL.peft_names_of("fused") == MIXTRAL.peft_names == PEFT_NAMES_BY_MODEL_TYPE["mixtral"]
    assumed = PEFT_NAMES_BY_MODEL_TYPE["qwen3_moe"]._replace(assumed=True)
    assert separate_module_names(assumed, 64) == SEPARATE_NAMES_BY_MODEL_TYPE["qwen3_moe"]._replace(
        assumed=True, expert_count=64)
    assert shown_module_names(MIXTRAL.peft_names_of("separate")) == MIXTRAL_4


@pytest.mark.parametrize(("model", "pattern", "fused", "separate", "linears"), [
    # Mixtral: transformers 5 fuses w1 and w3 (PEFT: "Cannot convert PEFT target(s) w1 without also targeting w3");
    # transformers 4 adapts each expert's w1
    (MIXTRAL, ".*\\.w1", "fused", None, ("experts.E.w1",)),
    (MIXTRAL, ".*experts\\.(w1|w3)", None, "none", ()),  # transformers 5's names alone
    (MIXTRAL, ".*mlp\\.gate", None, "none", ()),
    (MIXTRAL, ".*block_sparse_moe\\.gate", "none", None, ("gate",)),
    (MIXTRAL, ".*experts\\.7\\.w1", "none", None, ("experts.E.w1",)),  # its last expert
    (MIXTRAL, ".*experts\\.8\\.w1", "none", "none", ()),  # Mixtral has 8 experts: no ninth
    (MIXTRAL, ".*experts\\.0", "none", "model.layers.N.block_sparse_moe.experts.E", ()),  # an expert's MLP
    (QWEN3_30B_A3B, ".*experts\\.gate_proj", "fused", "none", ()),
    (QWEN3_30B_A3B, ".*experts\\.[0-9]+\\.(gate|up)_proj", "none", None,
     ("experts.E.gate_proj", "experts.E.up_proj")),
    (QWEN3_30B_A3B, ".*experts\\.127\\.down_proj", "none", None, ("experts.E.down_proj",)),
    (QWEN3_30B_A3B, ".*mlp\\.gate", None, None, ("gate",)),  # an nn.Linear under 4, converted under 5
])
def test_a_regex_is_judged_on_the_names_of_each_layout(model: solver.Model, pattern: str, fused: str | None,
                                                       separate: str | None, linears: tuple[str, ...]) -> None:
    words = {"none": "matches no module", "fused": "fused", None: None}

    def judged(layout: str) -> str | None:
        refusal = peft_target_refusal(pattern, None, model.peft_names_of("fused" if layout == "fused" else "separate"))
        return "fused" if refusal is not None and "fuses into gate_up_proj" in refusal else refusal

    expected = {"fused": words.get(fused, fused), "separate": words.get(separate, f"matches {separate}, {UNSUPPORTED}")}
    assert {layout: judged(layout) for layout in expected} == expected
    assert peft_target_match(pattern, None, model.peft_names_of("separate")).linears == linears


@pytest.mark.parametrize(("experts", "refused"), [("fused", True), ("separate", False), ("either", False)])
def test_w1_alone_is_taken_where_transformers_4_may_run(experts: ExpertLayout, refused: bool) -> None:
    problem = lora_targets_problem(".*\\.w1", None, MIXTRAL, experts)
    assert (problem is not None and problem.code.value == "lora-configs-refused") is refused
    # a name of transformers 5 alone is refused under 0.5.1, as a name no type has is; where transformers 5 may run,
    # taken, and cautioned where 4 may run too (lora-targets-one-transformers: test_smallslips28_s78)
    problem = lora_targets_problem(".*mlp\\.gate", None, MIXTRAL, experts)
    assert (problem is not None and problem.code.value == "lora-configs-refused") is (experts == "separate")
    assert (problem is not None and problem.code.value == "lora-targets-one-transformers") is (experts == "either")


def _refusal(pattern: str, names: str) -> str:
    """The refusal of `pattern` on Mixtral-8x7B, which matches no module of `names`."""
    return (f"model.lora_configs[0].target_modules '{pattern}', on Mixtral-8x7B-v0.1 (a mixture of experts, model_type "
            "mixtral), matches no module: peft matches it whole (re.fullmatch) against each module's full name "
            f"({names}), {FIX}")


def test_the_refusal_names_the_names_of_the_transformers_the_release_runs() -> None:
    separate = lora_targets_problem(".*mlp\\.gate", None, MIXTRAL, "separate")
    assert separate is not None and separate.code.value == "lora-configs-refused"
    # transformers 5's router name: the regex that adapts it under 4 too (smallslips30, s78: q_proj|v_proj before)
    assert separate.words == _refusal(".*mlp\\.gate", f"transformers 4's: {MIXTRAL_4}").replace(
        FIX.split(": ", 1)[1], "give .*\\.(mlp|block_sparse_moe)\\.gate, which adapts here the modules it names on "
        "transformers 5's names")
    either = lora_targets_problem(".*\\.q_norm", None, MIXTRAL, "either")  # Mixtral has no query norm
    assert either is not None
    assert either.words == _refusal(".*\\.q_norm", f"transformers 5's: {MIXTRAL_5}; transformers 4's: {MIXTRAL_4}")
    fused = lora_targets_problem(".*\\.q_norm", None, MIXTRAL, "fused")  # as before
    assert fused is not None and fused.words == _refusal(".*\\.q_norm", MIXTRAL_5)
    # A dense model's names are the same under both: no layout named
    dense = lora_targets_problem(".*\\.w1", None, solver.load_catalog().model("Qwen3-8B"), "either")
    assert dense is not None and "transformers 4's" not in dense.words and "(model.layers.N.self_attn" in dense.words


def test_exclude_modules_is_judged_on_the_same_names() -> None:
    # .*\.w1 less every expert's w1: nothing left under transformers 4 (PEFT: "All modules were excluded" is for
    # every module; here some remain unmatched: "No modules were targeted for adaptation")
    problem = lora_targets_problem(".*\\.w1", ".*experts\\.[0-9]+\\.w1", MIXTRAL, "separate")
    assert problem is not None and problem.words.startswith(
        "model.lora_configs[0].exclude_modules '.*experts\\.[0-9]+\\.w1', on Mixtral-8x7B-v0.1 (a mixture of experts, "
        "model_type mixtral), leaves out every module target_modules '.*\\.w1' matches (\"No modules were targeted "
        "for adaptation\")")
    assert lora_targets_problem(".*\\.w1", ".*experts\\.0\\.w1", MIXTRAL, "separate") is None  # experts 1 to 7 left


@pytest.mark.parametrize(("config", "separate", "fused"), [
    # PEFT 0.21.2's trainable parameters at rank 2 on tiny random models (2 layers, hidden 64, 4 heads and 2 KV
    # heads of 16, 4 experts): measured under transformers 4.57.6 and 5.12.1
    ({"model_type": "mixtral", "intermediate_size": 96, "num_local_experts": 4}, 9_744, 12_816),
    ({"model_type": "qwen3_moe", "intermediate_size": 96, "moe_intermediate_size": 32, "num_experts": 4,
      "head_dim": 16}, 6_672, 7_696),
])
def test_the_tiny_models_adapters_are_peft_s_own_counts(tmp_path: Path, config: dict[str, Any], separate: int,
                                                        fused: int) -> None:
    folder = tmp_path / "tiny"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({
        **config, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
        "vocab_size": 128, "num_experts_per_tok": 2, "max_position_embeddings": 4096, "tie_word_embeddings": False}),
        encoding="utf-8")
    model = solver.load_model_config(folder)
    assert [lora_parameters(model, 2, layout) for layout in ("separate", "fused", "either")] == [separate, fused, fused]


@pytest.mark.parametrize(("model", "release", "parameters"), [
    # Mixtral-8x7B at rank 16: half test_lorasep_s77's rank-32 counts; each expert's w1 alone under 0.5.1 would be
    # 16 x (4096 + 14336) x 8 x 32 = 75,497,472 (PEFT counts so on the tiny model: 2,560), which --from-config counts
    # (test_apilora_s78); solve memory knows no regex: all-linear's
    ("--model-config", "0.5.1", 242_225_152),
    ("--model-config", "0.6", 359_665_664),
    ("--model-config", "0.5.2", 359_665_664),  # either: the larger, transformers 5's
    ("--model", "0.5.1", 845_512_704),  # Qwen3-30B-A3B
    ("--model", "0.6", 996_507_648),
])
def test_the_adapter_at_rank_16_is_counted_as_the_release_lays_the_experts_out(cli: Cli, model: str, release: str,
                                                                               parameters: int) -> None:
    name = str(MIXTRAL_CONFIG) if model == "--model-config" else "Qwen3-30B-A3B"
    status, out, err = cli("memory", model, name, "--gpu", "h100", "--gpus", "8", "--len", "4096", "--lora-rank",
                           "16", "--trinity-version", release, "--json")
    assert (status, err, json.loads(out)["lora_parameters"]) == (0, "", parameters)


def _checked(cli: Cli, tmp_path: Path, pattern: str, release: str) -> tuple[int, dict[str, Any]]:
    trinity = tmp_path / "trinity.yaml"
    trinity.write_text(
        "algorithm: {algorithm_type: grpo}\ncluster: {node_num: 4, gpu_per_node: 8}\n"
        "buffer: {batch_size: 16, train_batch_size: 64}\n"
        f"model:\n  model_path: /m\n  max_model_len: 4096\n"
        f"  lora_configs: [{{lora_rank: 16, target_modules: '{pattern}'}}]\n"
        "explorer:\n  rollout_model: {engine_num: 4, tensor_parallel_size: 4}\n", encoding="utf-8")
    status, out, err = cli("--from-config", str(trinity), "--model-config", str(MIXTRAL_CONFIG), "--gpu", "h100",
                           "--check", "--trinity-version", release, "--json")
    assert err == ""
    current: dict[str, Any] = json.loads(out)[0]["current"]
    return status, current


@pytest.mark.parametrize(("pattern", "release", "status", "codes"), [
    (".*\\.w1", "0.5.1", 0, ["lora-counted-as-full", "lora-targets-saved-split"]),
    (".*\\.w1", "0.5.2", 0, ["lora-targets-one-transformers", "lora-counted-as-full", "lora-targets-saved-split"]),
    (".*\\.w1", "0.6", 1, ["lora-configs-refused", "lora-counted-as-full"]),  # full fine-tuning counted (s80)
    (".*\\.(w1|w3)", "0.5.1", 0, ["lora-counted-as-full", "lora-targets-saved-split"]),  # each expert's, under 4
    (".*experts\\.(w1|w3)", "0.5.1", 1, ["lora-configs-refused", "lora-counted-as-full"]),  # 5's names alone
    # none saved split (s79); the adapter config cut short refuses it under 0.6 (release06b, s83)
    (".*experts\\.(w1|w3)", "0.6", 1, ["lora-moe-config-unsaved-refused", "lora-counted-as-full"]),
])
def test_the_cli_judges_the_regex_on_the_releases_names(cli: Cli, tmp_path: Path, pattern: str, release: str,
                                                        status: int, codes: list[str]) -> None:
    got, current = _checked(cli, tmp_path, pattern, release)
    assert (got, current["refused"], current["config_problem_codes"]) == (status, bool(status), codes)
    if pattern == ".*\\.w1" and release == "0.5.1":  # counted as LoRA, on each expert's w1 alone
        assert ("its target_modules '.*\\.w1' matches experts.E.w1 alone, on which alone its adapter is counted"
                ) in current["config_problems"][0]
