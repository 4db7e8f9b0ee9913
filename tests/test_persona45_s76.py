"""A user beyond the tables, s76 (persona45): MI300X nodes and 24 GB cards, models by their config.json, LoRA and a
PPO critic. `solve memory` with both LoRA and a critic says how the tables speak of the run as `tables_verdict` holds
it: neither way (no cell vouches for a run with a critic, none refutes a LoRA run), not each paragraph's half alone.
FSDP's gathered layers count the largest layer, an expert layer where a mixture of experts' first layers are dense
(DeepSeek-V2-Lite's), not the mean per layer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import solver
from solver.memory import GIB, largest_layer_parameters
from solver.tables import load_memory_model

DEEPSEEK_V2_LITE = {
    "model_type": "deepseek_v2", "hidden_size": 2048, "intermediate_size": 10944, "moe_intermediate_size": 1408,
    "num_hidden_layers": 27, "num_attention_heads": 16, "num_key_value_heads": 16, "n_routed_experts": 64,
    "n_shared_experts": 2, "num_experts_per_tok": 6, "first_k_dense_replace": 1, "kv_lora_rank": 512,
    "q_lora_rank": None, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "vocab_size": 102400,
    "max_position_embeddings": 163840, "tie_word_embeddings": False, "moe_layer_freq": 1,
    "rope_scaling": {"type": "yarn", "factor": 40, "original_max_position_embeddings": 4096, "beta_fast": 32,
                     "beta_slow": 1, "mscale": 0.707, "mscale_all_dim": 0.707},
}
"""DeepSeek-V2-Lite's config.json, as published (the keys its count reads)."""


def _flat(text: str) -> str:
    """`text` with its line breaks read as spaces."""
    return " ".join(text.split())


def _memory_text(**options: object) -> str:
    """`solve memory`'s text for Qwen3-8B with Env + SP=4 at 61440 tokens on 4 A100s (the A100's 4-GPU table says
    'Env + Offload + SP=4' there, so Env + SP=4 ran out of memory with full fine-tuning of the actor alone)."""
    answer = solver.memory_answer("Qwen3-8B", "A100-80GB", 4, 61440, sp=4, env=True, **options)
    return _flat(solver.memory_text(answer))


def test_lora_and_critic_say_the_tables_speak_neither_way() -> None:
    answer = solver.memory_answer("Qwen3-8B", "A100-80GB", 4, 61440, sp=4, env=True, lora_rank=16,
                                  critic="offloaded")
    assert answer.tables is None and answer.trains
    text = _memory_text(lora_rank=16, critic="offloaded")
    assert ("sharded over the 4 GPUs; the tables measured full fine-tuning: a cell that ran out of memory says nothing "
            "of it critic: 7.6B parameters") in text
    assert ("none on the GPUs; the tables measured the actor alone: no cell vouches for the run either, so with LoRA "
            "they say nothing of it critic's own update:") in text
    assert "they speak where" not in text


def test_lora_alone_and_critic_alone_keep_their_words() -> None:
    lora = _memory_text(lora_rank=16)
    assert ("the tables measured full fine-tuning: they speak where they say the setting trains, not where it ran out "
            "of memory") in lora
    critic = _memory_text(critic="offloaded")
    assert ("the tables measured the actor alone: they speak where they say the setting ran out of memory, not where "
            "it trained") in critic
    assert "tables: it runs out of memory" in critic


def test_gathered_layers_count_deepseeks_expert_layer(tmp_path: Path, cli) -> None:
    (tmp_path / "config.json").write_text(json.dumps(DEEPSEEK_V2_LITE))
    model = solver.load_model_config(tmp_path)
    attention = 2048 * 16 * 192 + 2048 * 576 + 512 + 512 * 16 * 256 + 16 * 128 * 2048 + 2 * 2048
    expert_layer = attention + 64 * (3 * 2048 * 1408 + 2048) + 3 * 2048 * 2 * 1408
    dense_layer = attention + 3 * 2048 * 10944
    assert expert_layer == 584_847_872 and dense_layer == 81_007_104
    assert model.parameters_b * 1e9 == 2 * 102400 * 2048 + 26 * expert_layer + dense_layer + 2048  # the final norm
    assert largest_layer_parameters(model) == pytest.approx(expert_layer + 2048 / 27)  # the norm spread over the 27
    status, out, _ = cli("memory", "--model-config", str(tmp_path), "--gpu", "mi300x", "--gpus", "8", "--len", "64k",
                         "--sp", "4", "--env", "--json")
    gathered = (4 * 102400 * 2048 + 10 * (expert_layer + 2048 / 27)) / GIB
    assert status == 0 and json.loads(out)["terms"]["gathered"] == pytest.approx(
        gathered * load_memory_model().coefficients.multiplier("gathered"), abs=1e-4)
    assert json.loads(out)["terms"]["gathered"] == 4.8938  # 4.7573 with the mean per layer


def test_gathered_layers_count_a_dense_layer_wider_than_an_expert_layer(tmp_path: Path) -> None:
    # DeepSeek-V2-Lite with its first, dense, layer 200000 wide: that layer is FSDP's largest (the mean had stood)
    (tmp_path / "config.json").write_text(json.dumps({**DEEPSEEK_V2_LITE, "intermediate_size": 200_000}))
    model = solver.load_model_config(tmp_path)
    attention = 2048 * 16 * 192 + 2048 * 576 + 512 + 512 * 16 * 256 + 16 * 128 * 2048 + 2 * 2048
    dense_layer = attention + 3 * 2048 * 200_000
    assert dense_layer == 1_242_567_168 > attention + 64 * (3 * 2048 * 1408 + 2048) + 3 * 2048 * 2 * 1408
    assert largest_layer_parameters(model) == pytest.approx(dense_layer + 2048 / 27)  # the final norm spread


@pytest.mark.parametrize("name", ["Llama-3.1-8B", "Qwen3-30B-A3B"])
def test_gathered_layers_of_uniform_layers_are_the_mean(name: str) -> None:
    model = solver.load_catalog().model(name)
    embeddings = 2 * model.vocab_size * model.hidden_size
    assert largest_layer_parameters(model) == (model.parameters_b * 1e9 - embeddings) / model.num_layers
