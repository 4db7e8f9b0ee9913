"""Review of session 77's merges (session 77): ``solve --dpo`` refuses what Trinity's DPO never runs (a PPO critic, and
no reference model without LoRA: ``DPOAlgorithm``'s ``use_critic`` false, ``use_reference`` true,
``algorithm/algorithm.py:263-267`` in 0.6.0), with one line and exit 2, writing no file; the fragment's comment on
``trainer.use_dynamic_bsz`` names the actor's DPO pair of 2 where it writes one; the padded caution says that
``--dpo`` counts the pair too; a converted mixture of experts' routed experts, its down projection's v4 name too, are
no module for "All modules were excluded" (as before s77's per-type names)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_padbound_s71 import INTERNLM2, Cli

from solver.rules import ONE_SEQUENCE_WIDER_WORDS
from solver.tables.peft_match import excludes_every_module
from solver.tables.peft_names import PEFT_NAMES_BY_MODEL_TYPE

COMMON = ("--model-config", str(INTERNLM2), "--gpu", "h100", "--len", "8k", "--dpo")


NO_CRITIC = "--dpo trains no PPO critic (Trinity's dpo algorithm uses none): drop --critic {}"
NO_REFERENCE = ("--dpo without LoRA builds a reference model (Trinity's dpo algorithm uses one): drop --no-reference, "
                "or give --lora-rank")
PADDED = "off, with one sequence per micro-batch (the micro-batch sizes of 1 below), as the caution says"
PAIRED = ("off, with one sequence per micro-batch (the micro-batch sizes of 1 below; the actor's 2 holds one DPO pair, "
          "as its comment says), as the caution says")


@pytest.mark.parametrize(("flags", "error"), [
    (("--critic", "resident"), NO_CRITIC.format("resident")),
    (("--critic", "reloaded", "--emit", "trinity"), NO_CRITIC.format("reloaded")),
    (("--no-reference",), NO_REFERENCE),
])
def test_dpo_refuses_what_trinitys_dpo_never_runs(cli: Cli, tmp_path: Path, flags: tuple[str, ...],
                                                  error: str) -> None:
    """One line on stderr naming the flag to drop, exit 2, no output and no --out file."""
    out = tmp_path / "fragment.yaml"
    assert cli(*COMMON, *flags, "--out", str(out)) == (2, "", f"solve: error: {error}\n")
    assert not out.exists()


@pytest.mark.parametrize("flags", [("--critic", "none"), ("--no-reference", "--lora-rank", "8"), ("--reference",)])
def test_dpo_takes_what_trinitys_dpo_runs(cli: Cli, flags: tuple[str, ...]) -> None:
    """No critic counted, a LoRA run's reference model left out (the actor without its adapter stands in), or the
    reference model counted: all planned."""
    status, out, err = cli(*COMMON, *flags, "--emit", "trinity")
    assert (status, err) == (0, "")
    assert "ppo_micro_batch_size_per_gpu: 2" in out


def _dynamic_batch_comment(out: str) -> str:
    lines = out.splitlines()
    at = lines.index("  use_dynamic_bsz: false")
    start = max(index for index in range(at) if not lines[index].startswith("  #")) + 1
    return " ".join(line.removeprefix("  # ") for line in lines[start:at])


@pytest.mark.parametrize(("flags", "comment"), [
    ((), PAIRED), (("--trinity-version", "0.6"), PAIRED), (("--trinity-version", "0.5"), PADDED)])
def test_the_trainers_dynamic_batch_comment_names_the_actors_pair(cli: Cli, flags: tuple[str, ...],
                                                                  comment: str) -> None:
    """Where the fragment writes the actor's micro-batch size 2 for DPO's pair, the comment on the trainer's
    use_dynamic_bsz no longer says every size below is 1; for 0.5, which writes 1 (Trinity doubles it), it does."""
    status, out, err = cli(*COMMON, *flags, "--emit", "trinity")
    assert (status, err) == (0, "")
    assert _dynamic_batch_comment(out) == comment
    assert ("ppo_micro_batch_size_per_gpu: 2" in out) == ("the actor's 2" in comment)


def test_without_dpo_the_comment_is_as_before(cli: Cli) -> None:
    status, out, err = cli(*COMMON[:-1], "--emit", "trinity")
    assert (status, err) == (0, "")
    assert _dynamic_batch_comment(out) == PADDED


def test_the_padded_caution_says_dpo_counts_the_pair() -> None:
    assert ONE_SEQUENCE_WIDER_WORDS.endswith(
        "which the estimate counts where it is made for DPO (a config of algorithm_type dpo, --dpo, or a cluster "
        "job's dpo: true)")

EXCLUDED_EVERY = (  # the checks' words since peftgap (s77): the model, and PEFT's words for it, named
    "model.lora_configs[0].exclude_modules '(?!.*down_proj).*', on Qwen3-30B-A3B (a mixture of experts), leaves out "
    "every module target_modules '.*\\.q_proj' matches (\"All modules were excluded\"): peft matches it whole "
    "(re.fullmatch) against each module's full name (model.layers.N.self_attn.{q,k,v,o}_proj, model.layers.N.mlp.gate, "
    "model.layers.N.mlp.experts.{gate,up,down}_proj, model.embed_tokens and lm_head), and Trinity fails as it makes "
    "the adapter: exclude fewer, or remove it")


@pytest.mark.parametrize(("excluded", "model_type", "every"), [
    ("(?!.*down_proj).*", "qwen3_moe", True), ("(?!.*w2).*", "mixtral", True), ("(?!.*down_proj).*", "qwen3", False),
    ("(?!.*shared_experts\\.down_proj).*", "deepseek_v2", False), ("(?!.*experts\\.down_proj).*", "deepseek_v2", False),
])
def test_a_converted_mixture_of_experts_routed_experts_are_no_modules(excluded: str, model_type: str,
                                                                      every: bool) -> None:
    """PEFT's "All modules were excluded" looks at modules alone (``named_modules``): a converted mixture of experts'
    routed experts are one module, ``mlp.experts``, whose down projection (``mlp.experts.down_proj``, Mixtral's
    ``w2``) is a parameter now, as its fused gate and up are; a dense model's ``mlp.down_proj`` and DeepSeek's shared
    experts' ``mlp.shared_experts.down_proj`` are modules (and DeepSeek's dense layers' ``mlp.down_proj``)."""
    assert excludes_every_module(excluded, PEFT_NAMES_BY_MODEL_TYPE[model_type]) is every


def test_the_refusal_words_what_peft_raises_on_each_architecture(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "trinity.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
                      "model:\n  model_path: Qwen/Qwen3-30B-A3B\n  max_model_len: 8192\n"
                      "  lora_configs: [{lora_rank: 16, target_modules: '.*\\.q_proj', "
                      "exclude_modules: '(?!.*down_proj).*'}]\n"
                      "explorer: {rollout_model: {engine_num: 2, tensor_parallel_size: 1}}\n", encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h100", "--check", "--json")
    assert (status, err) == (1, "")
    problems = json.loads(out)[0]["current"]["config_problems"]
    assert [problem for problem in problems if "exclude_modules" in problem] == [EXCLUDED_EVERY]
