"""LoRA and engine-args leftovers (session 76): every keyword Trinity 0.6 gives vLLM itself refused in
``extra_engine_args`` by one rule; a ``target_modules`` regex that Trinity saves as single characters cautioned;
``exclude_modules`` read as PEFT reads it; a mixture of experts' routed experts counted in LoRA's adapter."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from solver.memory import lora_parameters, lora_states_bytes
from solver.tables import load_catalog
from solver.tables.peft_match import QWEN3_MOE, TargetMatch, peft_target_match
from solver.trinity import read_trinity_config

Cli = Callable[..., tuple[int, str, str]]
HEAD = ("algorithm: {algorithm_type: grpo}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
        "buffer: {batch_size: 15, train_batch_size: 60}\n")
DENSE_NAMES = ("model.layers.N.self_attn.{q,k,v,o}_proj, model.layers.N.mlp.{gate,up,down}_proj, model.embed_tokens "
               "and lm_head")
MOE_NAMES = ("model.layers.N.self_attn.{q,k,v,o}_proj, model.layers.N.mlp.gate, "
             "model.layers.N.mlp.experts.{gate,up,down}_proj, model.embed_tokens and lm_head")
"""The module names a refusal on a dense Qwen3 and on a Qwen3-MoE names (since peftnames_s77: each its own)."""
FIX = "give all-linear, or a regular expression that matches whole names, such as .*\\.(q_proj|v_proj)"
FIX_OF = {".*gate_proj": ("it names modules of transformers 4's names that no regular expression adapts here: run it "
                          "with transformers 4 (Trinity 0.5.1 pins it)")}
"""What a refusal says to do (smallslips30, s78: a regex transformers 4's names take, not q_proj|v_proj, which adapts
other modules): each expert's gate_proj alone, which transformers 5 fuses with up_proj."""
REPEATED = ("and passes extra_engine_args beside, so vLLM's engine arguments get a keyword twice and the rollout "
            "fails as it starts (TypeError): remove")


COUNTED_FULL = ("with model.lora_configs refused (lora-configs-refused says why), the verdict and the plans count "
                "full fine-tuning, which holds more than a LoRA run: fix model.lora_configs and plan again to count "
                "the LoRA run, or remove it to train every parameter")
"""The line that says what a config's verdict and plans count where Trinity refuses its LoRA configs (s80)."""


def _config(lora: str = "", rollout: str = "", model: str = "") -> str:
    return (HEAD + "model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 8192\n" + model + lora
            + "explorer:\n  rollout_model:\n    engine_num: 2\n    tensor_parallel_size: 1\n" + rollout)


def _lines(text: str, version: str | None = None) -> list[tuple[str, str]]:
    config = read_trinity_config(text, "trinity.yaml", {}, version)
    return [(code.value, words) for words, code in zip(config.notes, config.note_codes, strict=True)]


def _check(tmp_path: Path, cli: Cli, text: str) -> tuple[int, dict[str, object]]:
    config = tmp_path / "trinity.yaml"
    config.write_text(text, encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h100", "--check", "--json")
    assert err == ""
    return status, json.loads(out)[0]["current"]


def test_a_keyword_trinity_gives_vllm_itself_is_refused_naming_the_key_that_sets_it(tmp_path: Path, cli: Cli) -> None:
    text = _config(rollout="    extra_engine_args: {dtype: float16, max_model_len: 4096, max_num_seqs: 8}\n")
    status, current = _check(tmp_path, cli, text)
    assert (status, current["refused"], current["config_problem_codes"]) == (1, True, ["engine-args-repeated-refused"])
    assert current["config_problems"] == [(
        "explorer.rollout_model.extra_engine_args.max_model_len and explorer.rollout_model.extra_engine_args.dtype: "
        "Trinity gives vLLM these keywords itself (max_model_len from model.max_model_len; dtype from "
        f"explorer.rollout_model.dtype) {REPEATED} them from extra_engine_args (and set the keys named instead)")]
    # max_num_seqs is vLLM's alone: passed once, not judged.
    status, current = _check(tmp_path, cli, _config(rollout="    extra_engine_args: {max_num_seqs: 8}\n"))
    assert (status, current["config_problem_codes"]) == (0, [])


def test_keys_trinity_fixes_and_those_it_gives_only_sometimes() -> None:
    fixed = _config(rollout="    extra_engine_args: {worker_cls: w, nnodes: 2, hf_overrides: {}}\n")
    assert _lines(fixed) == [("engine-args-repeated-refused", (
        "explorer.rollout_model.extra_engine_args.worker_cls and explorer.rollout_model.extra_engine_args.nnodes: "
        f"Trinity gives vLLM these keywords itself (worker_cls and nnodes fixed by Trinity) {REPEATED} them from "
        "extra_engine_args"))]  # hf_overrides unset by Trinity without a RoPE key: passed once
    rope = _config(rollout="    extra_engine_args: {hf_overrides: {}}\n", model="  rope_theta: 2000000\n")
    assert [words for code, words in _lines(rope) if code == "engine-args-repeated-refused"] == [(
        "explorer.rollout_model.extra_engine_args.hf_overrides: Trinity gives vLLM this keyword itself (hf_overrides "
        f"from model.rope_scaling and model.rope_theta) {REPEATED} it from extra_engine_args (and set the key named "
        "instead)")]
    # Trinity 0.5 passes no extra_engine_args (its own line refuses the key); no rollout, no engine.
    text = _config(rollout="    extra_engine_args: {seed: 1}\n")
    assert "engine-args-repeated-refused" not in [code for code, _ in _lines(text, "0.5")]
    assert _lines("mode: train\n" + text) == []
    assert _lines(text) == [("engine-args-repeated-refused", (
        "explorer.rollout_model.extra_engine_args.seed: Trinity gives vLLM this keyword itself (seed from "
        f"explorer.rollout_model.seed) {REPEATED} it from extra_engine_args (and set the key named instead)"))]


SAVED = ("is a regular expression, which Trinity writes into each checkpoint's lora_adapter/adapter_config.json as its "
         "single characters ({chars}, ...]) on a dense model (on a mixture of experts whose config PEFT converts, it "
         "turns it into module names before the save, and lora-moe-config-unsaved says what fails): this run is "
         "unaffected (vLLM loads the adapter by its tensors' names), "
         "but PEFT reads those characters as module-name endings, so loading that adapter with PEFT (a later run's "
         "model.lora_configs[0].path, or PeftModel.from_pretrained) fails: give all-linear, which Trinity saves as "
         "module names, or write the regular expression back into the saved adapter_config.json before you load it")


def test_a_target_modules_regex_is_cautioned_as_trinity_saves_it(tmp_path: Path, cli: Cli) -> None:
    text = _config("  lora_configs: [{lora_rank: 16, target_modules: '.*\\.(q_proj|v_proj)'}]\n")
    status, current = _check(tmp_path, cli, text)
    assert (status, current["refused"], current["config_problem_codes"]) == (
        0, False, ["lora-counted-as-full", "lora-targets-saved-split"])
    assert current["config_problems"][1] == (
        "model.lora_configs[0].target_modules '.*\\.(q_proj|v_proj)' " + SAVED.format(chars="['.', '*', '\\\\', '('"))
    # all-linear (Trinity's default, saved as module names), an adapter of its own, and a regex refused: no caution.
    for lora in ("  lora_configs: [{lora_rank: 16}]\n",
                 "  lora_configs: [{lora_rank: 16, target_modules: ALL-LINEAR}]\n",
                 "  lora_configs: [{lora_rank: 16, path: /ckpt/a, target_modules: '.*_proj'}]\n"):
        assert "lora-targets-saved-split" not in [code for code, _ in _lines(_config(lora))]
    # a regex the checks refuse on the model's names: the reading's caution is moot, and dropped (peftgap_s77)
    status, current = _check(tmp_path, cli, _config("  lora_configs: [{lora_rank: 16, target_modules: q_proj}]\n"))
    assert (status, current["config_problem_codes"]) == (1, ["lora-configs-refused", "lora-counted-as-full"])


@pytest.mark.parametrize(("lora", "refusal"), [
    ("exclude_modules: [lm_head]", (
        "model.lora_configs[0].exclude_modules ['lm_head'] is a list: Trinity's LoRA config takes a string, so its "
        "typed config refuses it when it loads the config: give one regular expression that peft matches whole "
        "module names with (.*\\.(q_proj|v_proj)), or remove it")),
    ("exclude_modules: '('", (
        "model.lora_configs[0].exclude_modules '(' is no regular expression (missing ), unterminated subpattern at "
        "position 0): peft matches it whole (re.fullmatch) against each module's full name, and Trinity fails as it "
        "makes the adapter: give a regular expression that matches whole names, such as .*\\.v_proj, or remove it")),
    # PEFT's words where no module is left (docstruth12; it said "No modules ..."), on the model's names (peftgap_s77)
    ("exclude_modules: '.*'", (
        "model.lora_configs[0].exclude_modules '.*', on Qwen3-8B (a dense model), leaves out every module "
        "target_modules 'all-linear' matches (\"All modules were excluded\"): peft matches it whole (re.fullmatch) "
        f"against each module's full name ({DENSE_NAMES}), and Trinity fails as it makes the adapter: exclude fewer, "
        "or remove it")),
    ("target_modules: '.*\\.v_proj', exclude_modules: 'model\\.layers\\.\\d+\\.self_attn\\.v_proj'", (
        "model.lora_configs[0].exclude_modules 'model\\.layers\\.\\d+\\.self_attn\\.v_proj', on Qwen3-8B (a dense "
        "model), leaves out every module target_modules '.*\\.v_proj' matches (\"No modules were targeted for "
        "adaptation\"): peft matches it whole (re.fullmatch) against each module's full name "
        f"({DENSE_NAMES}), and Trinity fails as it makes the adapter: exclude fewer, or remove it")),
])
def test_an_exclude_modules_peft_cannot_take_is_refused(tmp_path: Path, cli: Cli, lora: str, refusal: str) -> None:
    status, current = _check(tmp_path, cli, _config(f"  lora_configs: [{{lora_rank: 16, {lora}}}]\n"))
    # each counts full fine-tuning, and says so (refusedlora, s80: an exclude_modules list or no regex, and .*, which
    # the reading alone takes on Qwen3-MoE's names, were counted as LoRA rank 16 with no such line)
    assert (status, current["refused"], current["config_problem_codes"], current["config_problems"]) == (
        1, True, ["lora-configs-refused", "lora-counted-as-full"], [refusal, COUNTED_FULL])


def test_an_exclusion_makes_a_smaller_adapter_counted_as_all_linear_s() -> None:
    assert peft_target_match("all-linear", ".*mlp.*") == TargetMatch(("q_proj", "k_proj", "v_proj", "o_proj"), (), None)
    assert peft_target_match(".*(_proj|lm_head)", "lm_head").outer == ()  # left out: counted as LoRA
    text = _config("  lora_configs: [{lora_rank: 16, exclude_modules: '.*mlp.*'}]\n")
    assert read_trinity_config(text, "trinity.yaml", {}).lora_rank == 16
    assert _lines(text)[0][1] == (
        "with LoRA (model.lora_configs) the trainer holds gradients and optimizer states for the adapter alone: the "
        "verdict and the plans count LoRA rank 16's states (the frozen base's fp32 weights and the adapter's, unless "
        "--lora-rank gives another; its target_modules 'all-linear' "
        "less exclude_modules '.*mlp.*' matches q_proj, k_proj, v_proj and o_proj alone among qwen3's module names, "
        "which the config read alone assumes, knowing no model, its adapter counted on what it matches of the model's "
        "own names alone), and the tables, which measured full fine-tuning, vouch for it by inference and refute "
        "nothing")
    head = _config("  lora_configs: [{lora_rank: 16, target_modules: '.*(_proj|lm_head)', exclude_modules: lm_head}]\n")
    assert read_trinity_config(head, "trinity.yaml", {}).lora_rank == 16  # lm_head left out: no longer full


def test_a_mixture_of_experts_routed_experts_are_counted_as_peft_adapts_them() -> None:
    # Qwen3-30B-A3B (48 layers, 128 experts of width 768, hidden 2048) at rank 32: per layer, the attention and the
    # router, then each expert's fused gate and up projection at twice the rank and its down projection at the rank.
    moe = load_catalog().model("30B-A3B")
    attention_and_router = (2048 + 4096) * 2 + (2048 + 512) * 2 + (2048 + 128)
    experts = 128 * (2 * (2 * 768 + 2048) + (2048 + 768))
    assert lora_parameters(moe, 32) == 32 * 48 * (attention_and_router + experts) == 1_993_015_296
    assert lora_parameters(moe, 32) - 30_081_024 == 1_962_934_272  # what the count left out before
    # 16 bytes per adapter parameter over 8 GPUs: 3.66 GiB more per GPU than before.
    more = lora_states_bytes(moe, 8, 32, 16) - (4 * moe.parameters_b * 1e9 / 8 + 16 * 30_081_024 / 8)
    assert more == pytest.approx(16 * 1_962_934_272 / 8) == pytest.approx(3.656 * 2**30, rel=1e-3)


def test_a_regex_is_matched_against_a_mixture_of_experts_names_as_peft_resolves_them() -> None:
    # Qwen3-MoE in transformers 5: the router mlp.gate (its gate.weight adapted) and the experts by their v4 names.
    assert peft_target_match(".*mlp\\.gate", None, QWEN3_MOE) == TargetMatch(("gate",), (), None)
    assert peft_target_match(".*mlp\\.gate") == TargetMatch((), (), None)  # a dense model has no router
    assert peft_target_match(".*experts.*", None, QWEN3_MOE) == TargetMatch(
        ("experts.gate_proj", "experts.up_proj", "experts.down_proj"), (), "model.layers.N.mlp.experts")
    assert peft_target_match("all-linear", None, QWEN3_MOE).linears == (
        "q_proj", "k_proj", "v_proj", "o_proj", "gate", "experts.gate_proj", "experts.up_proj", "experts.down_proj")


@pytest.mark.parametrize(("model", "pattern", "refusal"), [
    ("Qwen3-8B", ".*mlp\\.gate", "on Qwen3-8B (a dense model), matches no module"),
    ("Qwen3-30B-A3B", ".*mlp\\.gate_proj", "on Qwen3-30B-A3B (a mixture of experts), matches no module"),
    ("Qwen3-30B-A3B", ".*gate_proj", (
        "on Qwen3-30B-A3B (a mixture of experts), matches the routed experts' gate_proj without their up_proj, which "
        "PEFT fuses into gate_up_proj (\"Cannot convert PEFT target(s) ... because they are fused\")")),
    ("Qwen3-30B-A3B", ".*mlp\\.gate", None),
])
def test_a_regex_one_architecture_takes_is_refused_on_the_other(tmp_path: Path, cli: Cli, model: str, pattern: str,
                                                                refusal: str | None) -> None:
    text = _config(f"  lora_configs: [{{lora_rank: 16, target_modules: '{pattern}'}}]\n").replace("Qwen3-8B", model)
    config = tmp_path / "trinity.yaml"
    config.write_text(text, encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h100", "--json")
    [answer] = json.loads(out)
    refused = [words for words, code in zip(answer["current"]["config_problems"],
                                            answer["current"]["config_problem_codes"], strict=True)
               if code == "lora-configs-refused"]
    # refused: full fine-tuning counted (refusedlora, s80: LoRA rank 16 before, the reading's on Qwen3-MoE's names)
    assert (status, err, answer["current"]["refused"], answer["lora_rank"]) == (
        0, "", refusal is not None, 16 if refusal is None else 0)
    assert refused == ([] if refusal is None else [(
        f"model.lora_configs[0].target_modules '{pattern}', {refusal}: peft matches it whole (re.fullmatch) against "
        f"each module's full name ({MOE_NAMES if model == 'Qwen3-30B-A3B' else DENSE_NAMES}), and Trinity fails as it "
        f"makes the adapter: {FIX_OF.get(pattern, FIX)}")])
    if refusal is None:  # the router alone, on which alone the adapter is counted
        [counted] = [words for words, code in zip(answer["current"]["config_problems"],
                                                  answer["current"]["config_problem_codes"], strict=True)
                     if code == "lora-counted-as-full"]  # beside the mixture of experts' caution: test_lorarest5_s76
        assert f"its target_modules '{pattern}' matches gate alone, on which alone its adapter is counted" in counted
