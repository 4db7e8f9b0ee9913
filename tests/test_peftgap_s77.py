"""LoRA's ``target_modules`` judged where the model is known (peftgap, session 77): the config reading refuses only a
regex that does not compile, and the checks (`lora_targets_problem`, one function) refuse on a model type whose names
rft-solver has read and caution on assumed ones, on every path (``--from-config``, ``--check``, ``--write``, the API);
PEFT's short names of a regex on a mixture of experts it converts, matched in every layer as it matches them; and a
DeepSeek latent attention's query projections as its ``q_lora_rank`` makes them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_persona45_s76 import DEEPSEEK_V2_LITE

import solver
from solver.tables import load_catalog
from solver.tables.peft_match import QWEN3, QWEN3_MOE, converted_target_names, peft_target_match, peft_target_refusal
from solver.tables.peft_names import PEFT_NAMES_BY_MODEL_TYPE
from solver.trinity import load_config_mapping, read_trinity_config, trinity_config_problems
from solver.trinity.checks import lora_targets_problem

Cli = Callable[..., tuple[int, str, str]]
HF_CONFIGS = Path(__file__).parent / "data" / "hf-configs"
INTERNLM2 = HF_CONFIGS / "internlm2-7b.json"
DENSE_NAMES = ("model.layers.N.self_attn.{q,k,v,o}_proj, model.layers.N.mlp.{gate,up,down}_proj, model.embed_tokens "
               "and lm_head")
ASSUMED = (
    "model.lora_configs[0].target_modules '.*wqkv', on internlm2-7b (a dense model, model_type internlm2, whose module "
    f"names rft-solver has not read), matches no module among qwen3's names, which it assumes ({DENSE_NAMES}): peft "
    "fails as Trinity makes the adapter where they are the model's; check the regular expression against the model's "
    "own module names (model.named_modules())")
"""The caution on InternLM2's own ``wqkv`` (its remote code's fused attention projection), which rft-solver cannot
know PEFT fails on."""
REFUSED = (
    "model.lora_configs[0].target_modules '.*wqkv', on Qwen3-8B (a dense model), matches no module: peft matches it "
    f"whole (re.fullmatch) against each module's full name ({DENSE_NAMES}), and Trinity fails as it makes the adapter: "
    "give all-linear, or a regular expression that matches whole names, such as .*\\.(q_proj|v_proj)")
"""The refusal of the same regex on a catalogue Qwen3, whose names rft-solver has read."""


COUNTED_FULL = ("with model.lora_configs refused (lora-configs-refused says why), the verdict and the plans count "
                "full fine-tuning, which holds more than a LoRA run: fix model.lora_configs and plan again to count "
                "the LoRA run, or remove it to train every parameter")
"""The line that says what a config's verdict and plans count where Trinity refuses its LoRA configs (s80)."""


def _trinity(tmp_path: Path, model_path: str, lora: str = "{lora_rank: 16, target_modules: '.*wqkv'}") -> Path:
    config = tmp_path / "trinity.yaml"
    config.write_text(
        "algorithm: {algorithm_type: grpo}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
        "buffer: {batch_size: 16, train_batch_size: 64}\n"
        f"model:\n  model_path: {model_path}\n  max_model_len: 4096\n  lora_configs: [{lora}]\n"
        "explorer:\n  rollout_model: {engine_num: 4, tensor_parallel_size: 1}\n", encoding="utf-8")
    return config


def _answer(cli: Cli, *argv: str) -> tuple[int, dict[str, Any]]:
    status, out, err = cli(*argv, "--gpu", "h100", "--json")
    assert err == ""
    return status, json.loads(out)[0]["current"]


@pytest.mark.parametrize("check", [(), ("--check",)])
def test_an_unknown_types_own_regex_is_cautioned_not_refused(cli: Cli, tmp_path: Path, check: tuple[str, ...]) -> None:
    # Was refused by the config's reading (on every known type's names) before the model was known: --check exited 1.
    config = _trinity(tmp_path, "/models/internlm2-7b")
    status, current = _answer(cli, "--from-config", str(config), "--model-config", str(INTERNLM2), *check)
    # not refused; --check exits 1 for InternLM2's padded micro-batches, which Trinity's default dynamic batching
    # leaves unbounded (micro-batch-unbounded, padded88), not for the regex
    assert (status, current["refused"], current["trains"]) == (1 if check else 0, False, False)
    # the LoRA lines (InternLM2's remote code has lines of its own besides: test_padbound_s71)
    lora = [(code, words) for code, words in zip(current["config_problem_codes"], current["config_problems"],
                                                 strict=True) if code.startswith("lora")]
    assert [code for code, _ in lora] == ["lora-targets-assumed", "lora-counted-as-full", "lora-targets-saved-split"]
    assert lora[0][1] == ASSUMED


@pytest.mark.parametrize("check", [(), ("--check",)])
def test_a_known_types_regex_that_matches_nothing_is_refused_alone_naming_the_model(
        cli: Cli, tmp_path: Path, check: tuple[str, ...]) -> None:
    status, current = _answer(cli, "--from-config", str(_trinity(tmp_path, "Qwen/Qwen3-8B")), *check)
    # exit 1 with --check alone (the config as written does not train); the adapter's count and save unsaid, and in
    # their place the line that full fine-tuning is counted (s80)
    assert (status, current["refused"], current["config_problem_codes"]) == (
        1 if check else 0, True, ["lora-configs-refused", "lora-counted-as-full"])
    assert current["config_problems"] == [REFUSED, COUNTED_FULL]


def test_write_warns_of_the_refusal_and_the_caution_alike(cli: Cli, tmp_path: Path) -> None:
    # --write judged the config's LoRA targets only with the checks, which left a regex no known type takes to the
    # reading: a Qwen3's '.*wqkv' was written without a word.
    for model_path, model_config, said in (("Qwen/Qwen3-8B", (), REFUSED),
                                           ("/models/internlm2-7b", ("--model-config", str(INTERNLM2)), ASSUMED)):
        written = tmp_path / "written.yaml"
        status, _, err = cli("--from-config", str(_trinity(tmp_path, model_path)), *model_config, "--gpu", "h100",
                             "--write", str(written))
        assert (status, written.exists()) == (0, True)
        assert f"solve: warning: {written}: {said}\n" in err
        written.unlink()


def test_the_config_reading_only_parses_and_the_api_checks_judge() -> None:
    text = "model:\n  model_path: /models/internlm2-7b\n  lora_configs: [{lora_rank: 16, target_modules: '.*wqkv'}]\n"
    config = read_trinity_config(text, "trinity.yaml", {})
    assert "lora-configs-refused" not in [code.value for code in config.note_codes]
    mapping = load_config_mapping(text, "trinity.yaml")
    internlm2 = solver.load_model_config(INTERNLM2)
    assert [(problem.code.value, problem.words) for problem in trinity_config_problems(mapping, internlm2, 4)
            if problem.code.value.startswith("lora")] == [("lora-targets-assumed", ASSUMED)]
    qwen3 = load_catalog().model("Qwen3-8B")
    assert [(problem.code.value, problem.words) for problem in trinity_config_problems(mapping, qwen3, 4)
            if problem.code.value.startswith("lora")] == [("lora-configs-refused", REFUSED)]
    # A regex that does not compile is the reading's refusal, whatever the model.
    broken = read_trinity_config(text.replace(".*wqkv", "(["), "trinity.yaml", {})
    assert [words for words, code in zip(broken.notes, broken.note_codes, strict=True)
            if code.value == "lora-configs-refused"] == [
        ("model.lora_configs[0].target_modules '([' is no regular expression (unterminated character set at position "
         "1): peft matches it whole (re.fullmatch) against each module's full name, and Trinity fails as it makes the "
         "adapter: give all-linear, or a regular expression that matches whole names, such as .*\\.(q_proj|v_proj)")]


def test_an_exclusion_that_leaves_nothing_on_assumed_names_is_cautioned() -> None:
    problem = lora_targets_problem(None, ".*(proj|lm_head)", solver.load_model_config(INTERNLM2))
    assert problem is not None and (problem.code.value, problem.words) == ("lora-targets-assumed", (
        "model.lora_configs[0].exclude_modules '.*(proj|lm_head)', on internlm2-7b (a dense model, model_type "
        "internlm2, whose module names rft-solver has not read), leaves out every module target_modules 'all-linear' "
        "matches (\"No modules were targeted for adaptation\") among qwen3's names, which it assumes "
        f"({DENSE_NAMES}): peft fails as Trinity makes the adapter where they are the model's; check the regular "
        "expression against the model's own module names (model.named_modules())"))


def test_peft_matches_its_short_names_of_a_regex_in_every_layer_of_a_mixture_of_experts_it_converts() -> None:
    # peft 0.21.2's _resolve_string_target_modules: the last part of each name the regex matches, then matched as a
    # list of name endings, so layer 0's q_proj becomes every layer's; a dense model keeps the regex.
    layer_0 = "model\\.layers\\.0\\..*q_proj"
    assert converted_target_names(layer_0, None, QWEN3_MOE) == ("q_proj",)
    assert converted_target_names(layer_0, None, QWEN3) == ()
    assert converted_target_names(".*\\.0\\..*(q|k)_proj|.*norm", None, QWEN3_MOE) == (
        "norm", "q_proj", "k_proj", "q_norm", "k_norm", "input_layernorm", "post_attention_layernorm")
    # excluded first: layer 0's q_proj left out leaves no name; layer 1's still gives q_proj to every layer but 0
    assert converted_target_names(layer_0, ".*\\.0\\..*", QWEN3_MOE) == ()
    assert peft_target_match(".*\\.1\\.self_attn\\.q_proj", "model\\.layers\\.0\\..*", QWEN3_MOE).linears == (
        "q_proj",)


def test_a_deepseek_shared_experts_gate_proj_becomes_the_routed_experts_fused_half() -> None:
    # The regex's short name gate_proj is the routed experts' v4 name, which PEFT maps to gate_up_proj without
    # up_proj: "Cannot convert PEFT target(s) gate_proj without also targeting up_proj" (_convert_peft_config_moe).
    names = PEFT_NAMES_BY_MODEL_TYPE["deepseek_v2"]
    assert converted_target_names(".*shared_experts\\.gate_proj", None, names) == ("gate_proj",)
    assert peft_target_refusal(".*shared_experts\\.gate_proj", None, names) == (
        "matches the routed experts' gate_proj without their up_proj, which PEFT fuses into gate_up_proj (\"Cannot "
        "convert PEFT target(s) ... because they are fused\")")
    assert peft_target_refusal(".*shared_experts\\.(gate|up)_proj", None, names) is None


def test_the_moe_caution_names_the_short_names_peft_adapts_in_every_layer(cli: Cli, tmp_path: Path) -> None:
    lora = "{lora_rank: 16, target_modules: 'model\\.layers\\.0\\..*q_proj'}"
    config = _trinity(tmp_path, "Qwen/Qwen3-30B-A3B", lora)
    status, current = _answer(cli, "--from-config", str(config), "--check")
    assert (status, current["refused"], current["config_problem_codes"][0]) == (0, False, "lora-moe-config-unsaved")
    assert ("(its target_modules, a set of module names by then, are not saved split; peft made that set of "
            "'model\\.layers\\.0\\..*q_proj': q_proj, which it adapts in every layer, whatever layers the regular "
            "expression names)") in current["config_problems"][0]


def _deepseek(tmp_path: Path, q_lora_rank: int | None) -> solver.Model:
    folder = tmp_path / f"deepseek-{q_lora_rank}"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({**DEEPSEEK_V2_LITE, "q_lora_rank": q_lora_rank}),
                                        encoding="utf-8")
    return solver.load_model_config(folder)


def test_a_latent_attentions_query_names_follow_q_lora_rank(tmp_path: Path) -> None:
    # DeepseekV2Attention: q_proj where q_lora_rank is null; q_a_proj, q_a_layernorm and q_b_proj where it is set.
    full, low_rank = _deepseek(tmp_path, None), _deepseek(tmp_path, 1536)
    attention = [name for name in full.peft_names.adapted if name.startswith("self_attn.")]
    assert attention == ["self_attn.q_proj", "self_attn.kv_a_proj_with_mqa", "self_attn.kv_b_proj", "self_attn.o_proj"]
    assert [name for name in low_rank.peft_names.adapted if name.startswith("self_attn.")] == [
        "self_attn.q_a_proj", "self_attn.q_b_proj", "self_attn.kv_a_proj_with_mqa", "self_attn.kv_b_proj",
        "self_attn.o_proj"]
    assert "self_attn.q_a_layernorm" in low_rank.peft_names.others
    assert "self_attn.q_a_layernorm" not in full.peft_names.others
    assert lora_targets_problem(".*\\.q_proj", None, full) is None
    refusal = lora_targets_problem(".*\\.q_proj", None, low_rank)
    assert refusal is not None and (refusal.code.value, refusal.words.split(": peft matches")[0]) == (
        "lora-configs-refused", ("model.lora_configs[0].target_modules '.*\\.q_proj', on deepseek-1536 (a mixture of "
                                 "experts, model_type deepseek_v2), matches no module"))
    assert "(model.layers.N.self_attn.{q_a_proj,q_b_proj,kv_a_proj_with_mqa,kv_b_proj,o_proj}, " in refusal.words


def test_a_cluster_jobs_lora_config_takes_all_linear_which_no_type_refuses(cli: Cli, tmp_path: Path) -> None:
    # solve cluster writes a job's LoRA as model.lora_configs: [{lora_rank: 16}] (all-linear), which PEFT takes on
    # any model's names: no refusal nor caution on InternLM2's assumed ones, in the config or the checks on it.
    (tmp_path / "internlm2.json").write_text(INTERNLM2.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "fleet.yaml").write_text(
        "pools:\n- {name: p, gpu: h100, nodes: 1, gpus_per_node: 8}\n"
        "jobs:\n- {name: j, model_config: internlm2.json, max_model_len: 4096, lora_rank: 16}\n", encoding="utf-8")
    status, _, _ = cli("cluster", str(tmp_path / "fleet.yaml"), "--emit-dir", str(tmp_path / "out"))
    written = (tmp_path / "out" / "j.yaml").read_text(encoding="utf-8")
    assert (status, "  lora_configs: [{lora_rank: 16}]\n" in written, "lora-targets" in written) == (0, True, False)
    checked = trinity_config_problems(load_config_mapping(written, "j.yaml"), solver.load_model_config(INTERNLM2), 4)
    assert [problem.code.value for problem in checked if problem.code.value.startswith("lora-")] == []
