"""A user beyond the tables, s76 (persona45): MI300X nodes and 24 GB cards, models by their config.json, LoRA and a
PPO critic. `solve memory` with both LoRA and a critic says how the tables speak of the run as `tables_verdict` holds
it: neither way (no cell vouches for a run with a critic, none refutes a LoRA run), not each paragraph's half alone."""

from __future__ import annotations

import solver


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
            "of it critic: 7.57B parameters") in text
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
