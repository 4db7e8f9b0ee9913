"""A resident PPO critic's gradients are freed as its own update ends (s74): verl 0.7's ``DataParallelPPOCritic``
(Trinity 0.5.x, and 0.6.0's legacy trainer) ends ``update_critic`` with ``critic_optimizer.zero_grad()``
(``workers/critic/dp_critic.py:262``), verl 0.8 and later's engine (Trinity 0.6.0's ``TrinityCriticWorker``) zeroes
them as its train mode exits, and its forward (``compute_values``) runs under ``torch.no_grad``; PyTorch sets them to
None. So beside the actor's update and optimizer step the critic holds 12 of its 16 bytes per parameter; its own
update and step hold all 16. Figures: Qwen3-8B at 32768 tokens on 4 A100-80GB, Env + SP=4, as ``solve memory
--model 8B --gpu a100 --gpus 4 --len 32k --sp 4 --env --critic resident`` prints them."""

from __future__ import annotations

import json

import pytest

from solver.api import memory_answer
from solver.memory import (
    GIB,
    GRADIENT_BYTES,
    HELD_STATE_BYTES,
    STATE_BYTES,
    breakdown,
    critic_states_gib,
    resident_critic_gib,
)
from solver.tables import Setting, load_catalog
from solver.tables.loaders import load_memory_model

QWEN3_8B_CRITIC = 8_191_000_000 - 151936 * 4096 + 4096 + 1
"""Qwen3-8B less its untied output projection, with a value head of 4096 weights and a bias: 7,568,674,241."""


def answer(critic: str | None, **setting: object):  # type: ignore[no-untyped-def]
    return memory_answer("Qwen3-8B", "A100-80GB", 4, 32768, critic=critic, sp=4, env=True,  # type: ignore[arg-type]
                         **setting)


def test_a_resident_critic_holds_its_states_less_their_gradients_beside_the_actor():
    model = load_catalog().model("Qwen3-8B")
    assert (STATE_BYTES, GRADIENT_BYTES, HELD_STATE_BYTES) == (16, 4, 12)
    # Before: all 16 bytes, 28.1955 GiB a GPU; after: 12 of them, 21.1466 GiB.
    assert critic_states_gib(model, 4) == pytest.approx(16 * QWEN3_8B_CRITIC / 4 / GIB, abs=1e-9)
    assert round(critic_states_gib(model, 4), 4) == 28.1955
    assert resident_critic_gib(model, 4, "resident") == pytest.approx(12 * QWEN3_8B_CRITIC / 4 / GIB, abs=1e-9)
    assert round(resident_critic_gib(model, 4, "resident"), 4) == 21.1466
    assert [resident_critic_gib(model, 4, held) for held in (None, "offloaded", "reloaded")] == [0.0, 0.0, 0.0]


def test_the_actors_peak_and_step_count_the_held_states_and_the_critics_own_update_all_of_them():
    alone, resident = answer(None), answer("resident")
    assert resident.terms == alone.terms
    assert resident.critic_gib == pytest.approx(12 * QWEN3_8B_CRITIC / 4 / GIB, abs=1e-9)
    # The actor's pass: 57.88 alone and 21.15 (86.08 with the gradients counted); its step: the actor's 38.14 and
    # the overhead beside the critic's 21.15 (67.34 with them); the critic's own update keeps all 16 bytes: 66.00.
    assert resident.total_gib == pytest.approx(alone.total_gib + resident.critic_gib, abs=1e-9)
    assert [round(value, 2) for value in (alone.total_gib, resident.total_gib, resident.step_gib,
                                          resident.critic_pass_gib, resident.usable_gib)] == [
        57.88, 79.03, 60.29, 66.0, 73.53]
    assert (resident.fits, alone.longest_len, resident.longest_len) == (False, 55296, 24576)  # 13312 with them


def test_the_critics_states_shard_over_a_group_of_their_own_the_actors_over_the_gpus():
    # fsdp90: a critic's hybrid fsdp_size shards its states alone over its group (critic_gpus); the actor's and the
    # activations stay as on the GPUs given
    model, coefficients = load_catalog().model("Qwen3-8B"), load_memory_model().coefficients
    for critic in ("resident", "reloaded"):
        grouped, every, both, same = (
            breakdown(model, 80, gpus, Setting(sp=4), 32768, coefficients, critic=critic, critic_gpus=critic_gpus)
            for gpus, critic_gpus in ((4, 2), (4, None), (2, None), (4, 4)))
        assert same == every and grouped.terms == every.terms and grouped.terms != both.terms
        assert (grouped.critic_gib, grouped.critic_pass_gib - every.critic_pass_gib) == pytest.approx(
            (both.critic_gib, critic_states_gib(model, 2) - critic_states_gib(model, 4)), abs=1e-9)
        assert every.step_gib < grouped.step_gib < both.step_gib


def test_with_offload_at_a_short_length_the_resident_critics_own_update_is_the_tighter_peak():
    # Its update adds its gradients (7.05 GiB) to what the actor's pass holds of it, beside an actor whose
    # logits at 1024 tokens per GPU are less: 33.06 GiB against 26.77.
    resident = memory_answer("Qwen3-8B", "A100-80GB", 4, 2048, critic="resident", sp=4, env=True, offload=True)
    assert (round(resident.total_gib, 2), round(resident.critic_pass_gib, 2)) == (26.77, 33.06)
    assert resident.critic_pass_binds and not resident.step_binds


def test_the_command_prints_the_held_states(cli):  # type: ignore[no-untyped-def]
    status, out, _ = cli("memory", "--model", "8B", "--gpu", "a100", "--gpus", "4", "--len", "32k", "--sp", "4",
                         "--env", "--critic", "resident", "--json")
    shown = json.loads(out)
    assert (status, round(shown["critic_gib"], 2), round(shown["total_gib"], 2), shown["fits"]) == (
        1, 21.15, 79.03, False)
    status, out, _ = cli("memory", "--model", "8B", "--gpu", "a100", "--gpus", "4", "--len", "32k", "--sp", "4",
                         "--env", "--critic", "resident")
    assert status == 1 and "│ critic        │ 21.15 │" in out and "│ total         │ 79.03 │" in out
    assert ("21.15 GiB on each GPU beside the actor's pass and optimizer step: 12 of the 16 bytes, less the "
            "gradients, which the critic's own update frees as it ends;") in " ".join(out.split())
