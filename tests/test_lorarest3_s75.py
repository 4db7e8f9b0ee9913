"""LoRA's remaining gaps (session 75): a ``target_modules`` regex matched as PEFT matches it; the rollout's
``extra_engine_args`` LoRA keywords read or refused; ``lora_rank`` 0 beside a path refused as vLLM's max_lora_rank 0;
SGLang with LoRA refused; a cluster job's LoRA rank checked against vLLM's where it has a rollout."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from solver.memory import VLLM_BATCHED_TOKENS, VLLM_LORA_TOKEN_BYTES, vllm_lora_bytes
from solver.query import ConfigProblemCode, VllmRollout
from solver.tables import load_catalog
from solver.tables.peft_match import TargetMatch, all_linear, peft_target_match
from solver.trinity import read_trinity_config

Cli = Callable[..., tuple[int, str, str]]
QWEN3_8B = load_catalog().model("Qwen3-8B")
HEAD = ("algorithm: {algorithm_type: grpo}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
        "buffer: {batch_size: 15, train_batch_size: 60}\n")
LINEARS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
MODULE_NAMES = ("model.layers.N.self_attn.{q,k,v,o}_proj, model.layers.N.mlp.{gate,up,down}_proj, "
                "model.embed_tokens and lm_head")


COUNTED_FULL = ("with model.lora_configs refused (lora-configs-refused says why), the verdict and the plans count "
                "full fine-tuning, which holds more than a LoRA run: fix model.lora_configs and plan again to count "
                "the LoRA run, or remove it to train every parameter")
"""The line that says what a config's verdict and plans count where Trinity refuses its LoRA configs (s80)."""


def _config(lora: str = "", rollout: str = "") -> str:
    return (HEAD + "model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 8192\n" + lora
            + "explorer:\n  rollout_model:\n    engine_num: 2\n    tensor_parallel_size: 1\n" + rollout)


def _lines(text: str, version: str | None = None) -> list[tuple[str, str]]:
    config = read_trinity_config(text, "trinity.yaml", {}, version)
    return [(code.value, words) for words, code in zip(config.notes, config.note_codes, strict=True)]


@pytest.mark.parametrize(("pattern", "match"), [
    (r".*\.(q_proj|v_proj)", TargetMatch(("q_proj", "v_proj"), (), None)),
    (".*_proj", TargetMatch(LINEARS, (), None)),
    (r"model\.layers\.3\.mlp\.down_proj", TargetMatch(("down_proj",), (), None)),  # one layer's: counted in all
    ("q_proj", TargetMatch((), (), None)),  # whole names only: a short name matches none
    (".*(_proj|lm_head)", TargetMatch(LINEARS, ("lm_head",), None)),
    (".*embed_tokens", TargetMatch((), ("model.embed_tokens",), None)),
    (".*norm", TargetMatch((), (), "model.norm")),
    (r".*\.mlp", TargetMatch((), (), "model.layers.N.mlp")),
    (".*", TargetMatch(LINEARS, ("model.embed_tokens", "lm_head"), "model")),  # PEFT skips the root ("")
])
def test_a_regex_matches_whole_module_names_as_peft_does(pattern: str, match: TargetMatch) -> None:
    assert peft_target_match(pattern) == match


def test_no_regex_raises_and_all_linear_is_any_case() -> None:
    with pytest.raises(re.error):
        peft_target_match("(")
    assert [all_linear(value) for value in (None, "all-linear", "ALL-Linear", "all_linear", ".*", ["q_proj"])] == [
        True, True, True, False, False, False]


def test_a_regex_of_decoder_linears_alone_is_counted_as_all_linear_s_adapter() -> None:
    subset = _config("  lora_configs: [{lora_rank: 16, target_modules: '.*\\.(q_proj|v_proj)'}]\n")
    config = read_trinity_config(subset, "trinity.yaml", {})
    assert config.lora_rank == 16
    assert _lines(subset)[0] == ("lora-counted-as-full", (
        "with LoRA (model.lora_configs) the trainer holds gradients and optimizer states for the adapter alone: the "
        "verdict and the plans count LoRA rank 16's states (the frozen base's fp32 weights and the adapter's, unless "
        "--lora-rank gives another; its target_modules "
        "'.*\\.(q_proj|v_proj)' matches q_proj and v_proj alone among qwen3's module names, which the config read "
        "alone assumes, knowing no model, its adapter counted on what it matches of the model's own names alone), "
        "and the "
        "tables, which measured full fine-tuning, vouch for it by inference and refute nothing"))
    every = _config("  lora_configs: [{lora_rank: 16, target_modules: '.*_proj'}]\n")
    assert read_trinity_config(every, "trinity.yaml", {}).lora_rank == 16
    assert "target_modules" not in _lines(every)[0][1]  # all seven: all-linear's count exactly
    upper = _config("  lora_configs: [{lora_rank: 16, target_modules: ALL-LINEAR}]\n")
    assert read_trinity_config(upper, "trinity.yaml", {}).lora_rank == 16


def test_a_regex_that_takes_the_embeddings_is_counted_as_full_fine_tuning() -> None:
    # A norm is refused as PEFT refuses it (not counted): test_lorarest5_s76.
    for pattern, beyond in ((".*embed_tokens|.*_proj", "model.embed_tokens"), (".*lm_head|.*_proj", "lm_head")):
        text = _config(f"  lora_configs: [{{lora_rank: 16, target_modules: '{pattern}'}}]\n")
        assert read_trinity_config(text, "trinity.yaml", {}).lora_rank == 0
        assert (f"(its target_modules '{pattern}' matches {beyond}, which all-linear leaves out and rft-solver does "
                "not count)") in _lines(text)[0][1]


@pytest.mark.parametrize(("pattern", "why"), [
    # judged on the model's names, which the line names with the model (peftgap_s77)
    ("q_proj|v_proj", (f", on Qwen3-8B (a dense model), matches no module: peft matches it whole (re.fullmatch) "
                       f"against each module's full name ({MODULE_NAMES})")),
    # no regular expression: the config's reading refuses it, whatever the model (its names unsaid since peftgap_s77)
    ("(", (" is no regular expression (missing ), unterminated subpattern at position 0): peft matches it whole "
           "(re.fullmatch) against each module's full name")),
])
def test_a_regex_that_matches_no_module_or_is_none_is_refused(tmp_path: Path, cli: Cli, pattern: str,
                                                              why: str) -> None:
    config = tmp_path / "trinity.yaml"
    config.write_text(_config(f"  lora_configs: [{{lora_rank: 16, target_modules: '{pattern}'}}]\n"),
                      encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h100", "--check", "--json")
    current = json.loads(out)[0]["current"]
    assert (status, err, current["refused"], current["config_problem_codes"]) == (
        1, "", True, ["lora-configs-refused", "lora-counted-as-full"])
    assert current["config_problems"] == [
        (f"model.lora_configs[0].target_modules '{pattern}'{why}, and Trinity fails as it makes the adapter: give "
         "all-linear, or a regular expression that matches whole names, such as .*\\.(q_proj|v_proj)"), COUNTED_FULL]
    # An adapter of its own (a path) takes its own target modules: nothing refused.
    config.write_text(_config(f"  lora_configs: [{{lora_rank: 16, path: /ckpt/a, target_modules: '{pattern}'}}]\n"),
                      encoding="utf-8")
    assert "lora-configs-refused" not in cli("--from-config", str(config), "--gpu", "h100", "--json")[1]


def test_enable_lora_takes_extra_engine_args_rank_and_slots() -> None:
    text = _config(rollout="    enable_lora: true\n    extra_engine_args: {max_lora_rank: 64, max_loras: 4}\n")
    config = read_trinity_config(text, "trinity.yaml", {})
    assert config.vllm_rollout == VllmRollout(tensor_parallel_size=1, gpu_memory_utilization=None, value_bytes=2,
                                              max_model_len=None, lora_rank=64, max_loras=4)
    assert _lines(text) == []
    widths = 312064 + 2727936  # Qwen3-8B's LoRA layers at tensor-parallel size 1 (test_lorarest2_s74)
    assert vllm_lora_bytes(QWEN3_8B, 1, 64, 2, 4) == 4 * 64 * widths * 2 + VLLM_LORA_TOKEN_BYTES * VLLM_BATCHED_TOKENS
    assert vllm_lora_bytes(QWEN3_8B, 1, 64, 2, 4) == 1_556_594_688
    default = read_trinity_config(_config(rollout="    enable_lora: true\n"), "trinity.yaml", {}).vllm_rollout
    assert default is not None and (default.lora_rank, default.max_loras) == (16, 1)
    refused = _config(rollout="    enable_lora: true\n    extra_engine_args: {max_lora_rank: 24}\n")
    assert _lines(refused) == [("lora-rank-vllm-refused", (
        "explorer.rollout_model.extra_engine_args.max_lora_rank 24, which Trinity gives the rollout's vLLM as its "
        "max_lora_rank: vLLM 0.19.1 takes 1, 8, 16, 32, 64, 128, 256, 320 or 512 alone, and fails as the rollout "
        "starts: give one of those, or mode: train where no vLLM rollout starts"))]


def test_extra_engine_args_lora_keywords_trinity_gives_too_are_refused() -> None:
    both = _config("  lora_configs: [{lora_rank: 16}]\n",
                   "    extra_engine_args: {max_lora_rank: 64, max_loras: 2, enable_lora: true}\n")
    config = read_trinity_config(both, "trinity.yaml", {})
    assert config.vllm_rollout is not None and (config.vllm_rollout.lora_rank, config.vllm_rollout.max_loras) == (16, 1)
    # One rule for every keyword Trinity gives vLLM itself (test_lorarest4_s76): LoRA's are some of them.
    assert _lines(both)[1:] == [("engine-args-repeated-refused", (
        "explorer.rollout_model.extra_engine_args.enable_lora, explorer.rollout_model.extra_engine_args.max_loras and "
        "explorer.rollout_model.extra_engine_args.max_lora_rank: Trinity gives vLLM these keywords itself (enable_lora "
        "from explorer.rollout_model.enable_lora, which model.lora_configs turns on; max_loras and max_lora_rank from "
        "model.lora_configs) and passes extra_engine_args beside, so vLLM's engine arguments get a keyword twice and "
        "the rollout fails as it starts (TypeError): remove them from extra_engine_args (and set the keys named "
        "instead)"))]
    alone = _config(rollout="    extra_engine_args: {enable_lora: true}\n")
    assert _lines(alone) == [("engine-args-repeated-refused", (
        "explorer.rollout_model.extra_engine_args.enable_lora: Trinity gives vLLM this keyword itself (enable_lora "
        "from explorer.rollout_model.enable_lora, which model.lora_configs turns on) and passes extra_engine_args "
        "beside, so vLLM's engine arguments get a keyword twice and the rollout fails as it starts (TypeError): "
        "remove it from extra_engine_args (and set the key named instead)"))]
    assert _lines("mode: train\n" + alone) == []  # no rollout starts
    assert _lines(_config(rollout="    extra_engine_args: {max_lora_rank: 64}\n")) == []  # LoRA off: vLLM unused


def test_lora_rank_0_beside_a_path_gives_vllm_max_lora_rank_0_and_is_refused() -> None:
    text = _config("  lora_configs: [{lora_rank: 0, path: /ckpt/adapter}]\n")
    assert ("lora-rank-vllm-refused", (
        "model.lora_configs[0].lora_rank 0 beside a path: Trinity turns the rollout's LoRA on and gives vLLM the "
        "largest lora_rank above 0 as its max_lora_rank, here 0, which vLLM 0.19.1 refuses as the rollout starts: "
        "give the adapter's rank (1, 8, 16, 32, 64, 128, 256, 320 or 512), or mode: train where no vLLM rollout "
        "starts")) in _lines(text)
    config = read_trinity_config(text, "trinity.yaml", {})
    assert config.vllm_rollout is not None and config.vllm_rollout.lora_rank == 0  # no slots: vLLM never starts
    assert ConfigProblemCode.LORA_RANK_VLLM_REFUSED not in read_trinity_config(
        "mode: train\n" + text, "trinity.yaml", {}).note_codes
    negative = _config("  lora_configs: [{lora_rank: -4, path: /ckpt/adapter}]\n")
    assert any(words.startswith("model.lora_configs[0].lora_rank -4 beside a path") for _, words in _lines(negative))


def test_an_sglang_rollout_with_lora_is_refused_and_counts_no_slots(tmp_path: Path, cli: Cli) -> None:
    sglang = "    engine_type: sglang\n"
    sglang_own = sglang + "    enable_lora: true\n    extra_engine_args: {max_lora_rank: text}\n"  # SGLang's own args
    for lora, rollout in (("  lora_configs: [{lora_rank: 16}]\n", sglang), ("", sglang_own)):
        text = _config(lora, rollout)
        assert read_trinity_config(text, "trinity.yaml", {}).vllm_rollout is None
        assert _lines(text)[-1] == ("sglang-lora-refused", (
            "explorer.rollout_model.engine_type sglang with LoRA: Trinity 0.6 starts SGLang without LoRA and its "
            "SGLang engine cannot give the adapter's request, which each generation with LoRA on asks for, so the "
            "rollout fails at its first: leave engine_type unset (vllm) for LoRA, or drop LoRA"))
    assert _lines(_config(rollout=sglang)) == []
    assert _lines("mode: train\n" + _config("  lora_configs: [{lora_rank: 16}]\n", sglang))[1:] == []
    config = tmp_path / "trinity.yaml"
    config.write_text(_config("  lora_configs: [{lora_rank: 16}]\n", sglang), encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--check", "--json")
    assert (status, json.loads(out)[0]["current"]["refused"]) == (1, True)


FLEET = """pools:
  - {name: a, gpu: H100, nodes: 1, gpus_per_node: 8, host_ram_gb: 600}
jobs:
  - {name: lora, model: Qwen3-8B, max_model_len: 8192, lora_rank: 24, rollout_gpus: 2}
"""


def test_a_cluster_job_s_lora_rank_vllm_refuses_is_refused_where_it_has_a_rollout(tmp_path: Path, cli: Cli) -> None:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET, encoding="utf-8")
    assert cli("cluster", str(fleet)) == (2, "", (
        f"solve cluster: error: {fleet}: line 4: job lora: lora_rank 24, which Trinity gives the rollout's vLLM as its "
        "max_lora_rank: vLLM 0.19.1 takes 1, 8, 16, 32, 64, 128, 256, 320 or 512 alone, and fails as the rollout "
        "starts: give one of those, or rollout_gpus 0 for a trainer alone\n"))
    fleet.write_text(FLEET.replace(", rollout_gpus: 2", ""), encoding="utf-8")  # a trainer alone: any rank
    assert cli("cluster", str(fleet))[0] == 0
    fleet.write_text(FLEET.replace("lora_rank: 24", "lora_rank: 32"), encoding="utf-8")
    assert cli("cluster", str(fleet))[0] == 0


def test_extra_engine_args_max_lora_rank_0_with_enable_lora_is_refused() -> None:
    text = _config(rollout="    enable_lora: true\n    extra_engine_args: {max_lora_rank: 0}\n")
    assert _lines(text) == [("lora-rank-vllm-refused", (
        "explorer.rollout_model.extra_engine_args.max_lora_rank 0, which Trinity gives the rollout's vLLM as its "
        "max_lora_rank: vLLM 0.19.1 takes 1, 8, 16, 32, 64, 128, 256, 320 or 512 alone, and fails as the rollout "
        "starts: give one of those, or mode: train where no vLLM rollout starts"))]
    # A rank that is no whole number beside model.lora_configs is lora-rank-not-a-number-refused's alone.
    codes = [code for code, _ in _lines(_config("  lora_configs: [{lora_rank: true, path: /ckpt/adapter}]\n"))]
    assert "lora-rank-vllm-refused" not in codes and "lora-rank-not-a-number-refused" in codes


def test_extra_engine_args_is_read_whole_and_its_other_keys_are_vllm_s() -> None:
    # Trinity types it Dict[str, Any] and passes it on as it is: vLLM's Literal takes no text for a rank (refused, as
    # vLLM refuses it: test_smallslips21_s75); other keys are not judged.
    text = _config(rollout="    enable_lora: true\n    extra_engine_args: {max_lora_ranks: 64, max_num_seqs: 8}\n")
    config = read_trinity_config(text, "trinity.yaml", {})
    assert config.vllm_rollout is not None and config.vllm_rollout.lora_rank == 16  # vLLM's default: the key unset
    assert _lines(text) == []
    quoted = _config(rollout="    enable_lora: true\n    extra_engine_args: {max_lora_rank: '64'}\n")
    assert read_trinity_config(quoted, "trinity.yaml", {}).vllm_rollout is None  # text: the engine never starts
    assert [code for code, _ in _lines(quoted)] == ["lora-rank-vllm-refused"]
