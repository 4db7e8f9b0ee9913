"""A mixture of experts' layout across Trinity 0.5.x (release05a, session 77): where a release takes transformers 4
or 5 (0.5, 0.5.0, 0.5.2: ``either``) a LoRA adapter counts at the larger of the two layouts per model, the states
fused; Llama 4's and GraniteMoE's experts are 3-D parameters in transformers 4.57.1 too, so 0.5.1 shards them whole;
``lora-moe-config-unsaved`` is not said under 0.5.1, where PEFT converts nothing; and solve says how the experts were
counted."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

import solver
from solver.memory import (
    GIB,
    STATE_BYTES,
    adapter_experts,
    adapter_shapes,
    expert_layout_words,
    expert_padding,
    held_experts,
    lora_parameters,
    lora_states_bytes,
    weight_shapes,
)
from solver.rules import lora_moe_unsaved_words
from solver.tables import load_catalog
from solver.trinity import check_trinity_config

Cli = Callable[..., tuple[int, str, str]]

CONFIGS = Path(__file__).parent / "data" / "hf-configs"
QWEN15_MOE = solver.load_model_config(CONFIGS / "Qwen1.5-MoE-A2.7B.json")
MIXTRAL = solver.load_model_config(CONFIGS / "Mixtral-8x7B-v0.1.json")
DEEPSEEK_V2_LITE = solver.load_model_config(CONFIGS / "DeepSeek-V2-Lite.json")
QWEN3_30B_A3B = load_catalog().model("Qwen3-30B-A3B")
SCOUT = {
    "model_type": "llama4_text", "vocab_size": 202048, "hidden_size": 5120, "intermediate_size": 8192,
    "intermediate_size_mlp": 16384, "num_hidden_layers": 48, "num_attention_heads": 40, "num_key_value_heads": 8,
    "head_dim": 128, "max_position_embeddings": 131072, "tie_word_embeddings": False, "num_experts_per_tok": 1,
    "num_local_experts": 16, "interleave_moe_layer_step": 1}
"""Llama-4-Scout's text model (test_llama4_experts_s61): 16 experts of 8192 in each of 48 layers, hidden 5120."""
SMALL = {"hidden_size": 1024, "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 2,
         "vocab_size": 32000, "max_position_embeddings": 4096, "tie_word_embeddings": False, "num_experts": 8,
         "num_local_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 512, "intermediate_size": 512}
"""test_lorasep_s77's made-up mixture of experts: 4 layers of hidden width 1024, 8 experts of 512."""


def _read(folder: Path, config: dict[str, object]) -> solver.Model:
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return solver.load_model_config(folder)


# (1) The adapter at the larger layout where the release takes either. Rank 32 (test_lorasep_s77 works them out):
# Qwen1.5-MoE 31,851,264 fused (PEFT converts no qwen2_moe) and 511,227,648 separate; Qwen3-30B-A3B 1,993,015,296
# fused and 1,691,025,408 separate; Mixtral 719,331,328 and 484,450,304; DeepSeek-V2-Lite 717,989,888 and 579,674,112.
@pytest.mark.parametrize(("model", "parameters", "layout"), [
    (QWEN15_MOE, 511_227_648, "separate"),
    (QWEN3_30B_A3B, 1_993_015_296, "fused"),
    (MIXTRAL, 719_331_328, "fused"),
    (DEEPSEEK_V2_LITE, 717_989_888, "fused"),
])
def test_either_release_counts_the_larger_adapter_per_model(model: solver.Model, parameters: int, layout: str) -> None:
    assert lora_parameters(model, 32, "either") == parameters
    assert adapter_experts(model, "either") == layout
    assert adapter_shapes(model, 32, "either") == adapter_shapes(model, 32, layout)  # the pinned host shards' too


def test_phimoe_under_either_counts_its_experts_adapter(tmp_path: Path) -> None:
    # At rank 16 (test_lorasep_s77): attention 106,496 a layer, router 16,512, separate experts 8 x 3 x 16 x
    # (1024 + 512) = 589,824; PEFT converts no PhiMoE, so fused adapts attention and router alone. In 4 layers the
    # larger, separate: 4 x (106,496 + 16,512 + 589,824) = 2,851,328.
    model = _read(tmp_path, {**SMALL, "model_type": "phimoe"})
    assert lora_parameters(model, 16, "either") == 4 * (106_496 + 16_512 + 589_824) == 2_851_328


def test_either_keeps_the_states_fused_and_counts_the_adapter_separate_for_qwen2_moe() -> None:
    # Qwen1.5-MoE: P = 14,315,636,736; its routed experts R = 24 x 60 x 3 x 2048 x 1408 = 12,457,082,880. On 8 GPUs,
    # fused by rows (0.6), the fullest holds 8 of 60 (64 where 60 would do): R x 4 / (60 x 8) = R / 120 = 103,809,024
    # more; under 0.5 verl 0.7 places the fused 60 x 2816 x 2048 and 60 x 2048 x 1408 by their 2816 and 2048, which 8
    # divides (fusedpad, s80): none, as separate's.
    assert expert_padding(QWEN15_MOE, 8, "fused") == 103_809_024
    assert expert_padding(QWEN15_MOE, 8, "either") == expert_padding(QWEN15_MOE, 8, "separate") == 0
    assert weight_shapes(QWEN15_MOE, "either") == weight_shapes(QWEN15_MOE, "fused")
    # LoRA rank 32, 16 bytes per adapter parameter, 4 per frozen one: 4 x P / 8 = 7,157,818,368, and 16 x 511,227,648
    # / 8 = 1,022,455,296 (fused's adapter: 63,702,528): 8,180,273,664 bytes, 7.61847 GiB, separate's alike; fused
    # 7,636,756,992 (7.11228) with its padding's 4 x 103,809,024 = 415,236,096.
    states = {layout: lora_states_bytes(QWEN15_MOE, 8, 32, STATE_BYTES, layout)
              for layout in ("fused", "separate", "either")}
    assert states == {"fused": 7_636_756_992, "separate": 8_180_273_664, "either": 8_180_273_664}
    assert states["either"] / GIB == pytest.approx(7.61847, abs=5e-6)


def test_solve_plans_qwen2_moe_with_the_larger_adapter_under_0_5_and_0_5_2(cli: Cli) -> None:
    # The states differ by 8,180,273,664 - 7,636,756,992 = 543,516,672 bytes (0.51 GiB before calibration): 32.9 GiB
    # with transformers 5's adapter and the whole experts' padding (none named, 0.6), 33.4 with transformers 4's and
    # the experts as verl 0.7 places them, no padding (0.5.1; 0.5 and 0.5.2 alike, fusedpad s80).
    shown = {}
    for release in (None, "0.5", "0.5.1", "0.5.2", "0.6"):
        named = () if release is None else ("--trinity-version", release)
        status, out, err = cli("--model-config", str(CONFIGS / "Qwen1.5-MoE-A2.7B.json"), "--gpu", "h100", "--gpus",
                               "8", "--len", "8k", "--lora-rank", "32", *named)
        assert status == 0, err
        shown[release] = next(line for line in out.splitlines() if line.startswith("memory "))
    line = "memory         {} GiB per GPU predicted, {} GiB to spare (memory model; LoRA rank 32's states)"
    assert shown == {None: line.format(32.9, 40.3), "0.5": line.format(33.4, 39.8), "0.5.1": line.format(33.4, 39.8),
                     "0.5.2": line.format(33.4, 39.8), "0.6": line.format(32.9, 40.3)}


def test_solve_memory_names_the_adapter_it_counted(cli: Cli) -> None:
    # Was transformers 5's 31,851,264 whatever the release.
    for release, parameters in (("0.6", "31,851,264"), ("0.5.2", "511,227,648"), ("0.5.1", "511,227,648")):
        status, out, err = cli("memory", "--model-config", str(CONFIGS / "Qwen1.5-MoE-A2.7B.json"), "--gpu", "h100",
                               "--gpus", "8", "--len", "8k", "--lora-rank", "32", "--env", "--trinity-version", release,
                               "--json")
        assert status == 0, err
        assert json.loads(out)["lora_parameters"] == int(parameters.replace(",", ""))


# (2) Llama 4's and GraniteMoE's experts are 3-D parameters in transformers 4.57.1 too (Llama4TextExperts'
# gate_up_proj of experts x hidden x 2 width, modeling_llama4.py:53-54; GraniteMoeParallelExperts' weight of experts x
# outputs x inputs, modeling_granitemoe.py:245): FSDP2 shards them by experts under 0.5.1 as under transformers 5.
def test_llama4_shards_whole_experts_under_0_5_1_too(tmp_path: Path) -> None:
    scout = _read(tmp_path, SCOUT)
    # R = 48 x 16 x 3 x 5120 x 8192 = 96,636,764,160; on 6 GPUs 3 of 16 experts a GPU (18 where 16 would do):
    # R x 2 / (16 x 6) = R / 48 = 2,013,265,920 parameters more (30 GiB of states at 16 bytes); it was 0 under 0.5.1.
    assert scout.routed_expert_parameters == 96_636_764_160
    assert held_experts(scout, "separate") == "fused"
    assert expert_padding(scout, 6, "separate") == expert_padding(scout, 6, "fused") == 2_013_265_920
    assert weight_shapes(scout, "separate") == weight_shapes(scout, "fused")


def test_granitemoe_shards_whole_experts_under_0_5_1_and_qwen3_moe_does_not(tmp_path: Path) -> None:
    # 8 experts of 512 in 4 layers of 1024: R = 4 x 8 x 3 x 1024 x 512 = 50,331,648; on 3 GPUs 3 of 8 a GPU (9 where 8
    # would do): R x 1 / (8 x 3) = 2,097,152 more. Qwen3-MoE's separate experts pad their rows (3 divides neither 512
    # nor 1024): gate and up 512 to 513, down 1024 to 1026, (2 x 1024 + 2 x 512) x 32 / 3 = 32,768 more.
    (tmp_path / "granite").mkdir()
    (tmp_path / "qwen").mkdir()
    granite = _read(tmp_path / "granite", {**SMALL, "model_type": "granitemoe"})
    qwen = _read(tmp_path / "qwen", {**SMALL, "model_type": "qwen3_moe"})
    assert expert_padding(granite, 3, "separate") == expert_padding(granite, 3, "fused") == 2_097_152
    assert (expert_padding(qwen, 3, "separate"), expert_padding(qwen, 3, "fused")) == (32_768, 2_097_152)
    assert (held_experts(granite, "separate"), held_experts(qwen, "separate")) == ("fused", "separate")


# (3) lora-moe-config-unsaved: PEFT converts a mixture of experts' LoRA config on transformers 5 alone.
def test_the_unsaved_adapter_config_is_not_said_under_0_5_1() -> None:
    assert lora_moe_unsaved_words(QWEN3_30B_A3B, "0.5", "separate") is None
    for layout in ("fused", "either"):
        words = lora_moe_unsaved_words(QWEN3_30B_A3B, "0.5", layout)
        assert words is not None and words.startswith("with transformers 5 (Trinity 0.5.0 allows it")


def test_the_check_leaves_the_unsaved_config_out_under_0_5_1() -> None:
    config = {"model": {"lora_configs": [{"lora_rank": 32}]}}
    said = {layout: [words for words in check_trinity_config(config, QWEN3_30B_A3B, 8, version="0.5", experts=layout)
                     if "target_parameters a set" in words] for layout in ("fused", "either", "separate")}
    assert (len(said["fused"]), len(said["either"]), said["separate"]) == (1, 1, [])


@pytest.mark.parametrize(("release", "said"), [("0.5.1", False), ("0.5.2", True), ("0.6", True)])
def test_solve_cautions_on_the_unsaved_config_where_transformers_5_may_run(cli: Cli, release: str, said: bool) -> None:
    qwen_moe = ("--model", "30B-A3B", "--gpu", "h100", "--gpus", "8", "--len", "32k", "--lora-rank", "64")
    status, out, err = cli(*qwen_moe, "--trinity-version", release, "--json")
    assert status == 0, err
    assert ("lora-moe-config-unsaved" in json.loads(out)[0]["plans"][0]["caution_codes"]) is said
    status, out, err = cli(*qwen_moe, "--trinity-version", release, "--emit", "trinity")
    assert status == 0, err
    assert ("PEFT makes the adapter's target_parameters a set" in out.replace("\n  # ", " ")) is said


# (4) What solve says of the layout it counted.
WHOLE_OF_TWO = ("routed experts counted at the larger of Trinity 0.5's two layouts, 3-D as transformers 5 holds them "
                "or separate as transformers 4 does, each as verl 0.7 places it")


@pytest.mark.parametrize(("experts", "rank", "words"), [
    ("fused", 0, "routed experts counted whole, as transformers 5 holds them"),
    ("separate", 0, "routed experts counted separate, as Trinity 0.5.1's transformers 4 holds them"),
    ("either", 0, WHOLE_OF_TWO),
    ("either", 32, f"{WHOLE_OF_TWO}; its LoRA adapter as transformers 4 makes them, the larger"),
])
def test_the_layout_counted_in_words(experts: str, rank: int, words: str) -> None:
    assert expert_layout_words(QWEN15_MOE, experts, rank) == words  # type: ignore[arg-type]
    assert expert_layout_words(QWEN3_30B_A3B, "either", 32) == WHOLE_OF_TWO  # its adapter is fused's too


def test_llama4s_layout_in_words_under_0_5_1(tmp_path: Path) -> None:
    assert expert_layout_words(_read(tmp_path, SCOUT), "separate") == (
        "routed experts counted 3-D, as Trinity 0.5.1's transformers 4 holds them too and its verl 0.7 places them")


def test_solve_says_which_layout_it_counted(cli: Cli) -> None:
    mixtral = ("--model-config", str(CONFIGS / "Mixtral-8x7B-v0.1.json"), "--gpu", "a100-80gb", "--gpus", "32",
               "--exact", "--len", "16k", "--no-offload")
    status, out, err = cli(*mixtral, "--trinity-version", "0.5.1")
    assert status == 0, err
    assert ("a mixture of experts (calibrated on dense models; routed experts counted separate, as Trinity 0.5.1's "
            "transformers 4 holds them)") in " ".join(out.split())
    status, out, err = cli(*mixtral, "--trinity-version", "0.5.1", "--json")
    assert status == 0, err
    assert ("a mixture of experts (calibrated on dense models; routed experts counted separate, as Trinity 0.5.1's "
            "transformers 4 holds them)") in json.loads(out)[0]["plans"][0]["beyond_calibration"]
