"""A PPO critic's own update, a second activation peak (s73): Trinity colocates the critic with the actor on every
trainer GPU, and verl 0.9.1's engine (``engine/base.py:314-335``; Trinity 0.5's ``CriticWorker.update_critic``)
loads an offloaded critic's states back for its update unless FSDP2's ``offload_policy`` keeps them in host memory
(``transformer_impl.py:459-463``). So `--critic` is ``resident``, ``offloaded`` (offload_policy) or ``reloaded``
(param_offload and optimizer_offload without it), and the update holds the actor's states where they stay (less
their gradients, s74), the critic's where they are there for it, and its activations: every term but the logits, the
checkpoints and recompute at least their floor without them. The figures are Qwen3-8B's at 32768 tokens on 4 A100s,
worked by hand from the shipped coefficients (tables/memory-model.yaml)."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from solver.api import memory_answer, plan
from solver.memory import GIB, MemoryAnswer, breakdown
from solver.tables import Setting, load_catalog, load_memory_model

P, VOCAB, HIDDEN, LAYERS, FFN = 8.191e9, 151936, 4096, 36, 12288
"""Qwen3-8B (tables/models.yaml): parameters, vocabulary, hidden width, layers, feed-forward width; 32 query heads and 8
key-value heads of 128."""
TOKENS = 16384
"""Tokens per GPU at 32768 with SP=4: ceil(2 x 32768 / 4)."""
ACTOR_STATES = 1.029008 * 16 * P / 4 / GIB
"""The actor's calibrated states on each of 4 GPUs: 31.3990 GiB."""
ACTOR_HELD = ACTOR_STATES * 12 / 16
"""Those the critic's own update finds on the GPU, the actor's gradients (4 of the 16 bytes) freed after its own
update, which follows the critic's (s74, `solver.memory.actor_held_at_critic_pass`): 23.5492 GiB."""
CRITIC_STATES = 16 * (P - VOCAB * HIDDEN + HIDDEN + 1) / 4 / GIB
"""The critic's (the model less its output projection, with a value head): 28.1955 GiB."""
GATHERED = 0.785771 * (4 * VOCAB * HIDDEN + 10 * (P - 2 * VOCAB * HIDDEN) / LAYERS) / GIB
"""FSDP's gathered layers as the actor's: 3.2337 GiB."""
SP_BUFFERS = 6.461131 * 2 * TOKENS * HIDDEN / GIB
"""0.8076 GiB."""
FLOOR = TOKENS * (2 * HIDDEN * (LAYERS + 1) + 20 * HIDDEN + 14 * 32 * 128 + 14 * 8 * 128 + 12 * FFN) / GIB
"""The checkpoints and one layer's recompute without the logits: 9.2188 GiB, more than their calibrated 3.3223
(0.627179 x the checkpoints, fitted beside the logits, and the recompute)."""
ACTIVATIONS = GATHERED + SP_BUFFERS + 1.0 + FLOOR
"""The critic's activations with Env (no fragmentation) and the overhead: 14.2601 GiB."""
USABLE = 80 * 0.928472 * 0.99
"""Env's usable share of an A100-80GB, less the default margin: 73.5350 GiB."""


def answer(critic: str, **setting: object) -> MemoryAnswer:
    return memory_answer("Qwen3-8B", "A100-80GB", 4, 32768, sp=4, env=True, critic=critic,  # type: ignore[arg-type]
                         **setting)  # type: ignore[arg-type]


def test_the_hand_figures():
    assert [round(x, 4) for x in (ACTOR_STATES, ACTOR_HELD, CRITIC_STATES, GATHERED, SP_BUFFERS, FLOOR, ACTIVATIONS,
                                  USABLE)] == [31.399, 23.5492, 28.1955, 3.2337, 0.8076, 9.2188, 14.2601, 73.535]


@pytest.mark.parametrize(("critic", "offload", "peak", "fits", "longest"), [
    # A reloaded critic's states come back beside the actor's (without their gradients): 66.00 GiB, 7.53 to spare, the
    # tighter peak; its longest is the actor's alone, 55296 tokens (s73, with the gradients: 73.85, 0.32 over, 30720).
    ("reloaded", False, ACTOR_HELD + CRITIC_STATES + ACTIVATIONS, True, 55296),
    # FSDP2's offload_policy keeps them in host memory: 37.81 GiB, below the actor's 57.88, which decides.
    ("offloaded", False, ACTOR_HELD + ACTIVATIONS, True, 55296),
    # With the actor's Offload its states are off the GPU: 42.46 and 14.26 GiB.
    ("reloaded", True, CRITIC_STATES + ACTIVATIONS, True, 101376),
    ("offloaded", True, ACTIVATIONS, True, 101376),
    # A resident critic's update holds the actor's pass beside it less the logits and the actor's gradients, and the
    # critic's gradients, which that pass is without (s74): 66.00 GiB against 79.03, not the tighter here (it can be
    # with Offload at a short length: test_criticgrads_s74); the pass decides, 24576 tokens (13312 with them).
    ("resident", False, ACTOR_HELD + CRITIC_STATES + ACTIVATIONS, False, 24576),
])
def test_the_critics_own_update_is_a_second_peak(critic: str, offload: bool, peak: float, fits: bool, longest: int):
    found = answer(critic, offload=offload)
    assert found.critic_pass_gib == pytest.approx(peak, abs=1e-9)
    assert found.usable_gib == pytest.approx(USABLE, abs=1e-9)
    assert (found.fits, found.longest_len, found.critic_pass_fits) == (fits, longest, peak <= USABLE)
    assert found.critic_pass_binds == (critic == "reloaded")  # elsewhere the actor's pass has the less room
    if found.critic_pass_binds:
        assert found.headroom_gib == pytest.approx(USABLE - peak, abs=1e-9)


def test_a_reloaded_critic_steps_on_the_gpu_and_is_held_in_host_memory_as_an_offloaded_one():
    reloaded, offloaded = answer("reloaded"), answer("offloaded")
    # Its own step beside the actor's 12 bytes per parameter (its gradients freed): 22.88 + 35.24 (Adam's temporary, 4
    # bytes more) + 1.
    assert reloaded.step_gib == pytest.approx(12 * P / 4 / GIB + CRITIC_STATES * 20 / 16 + 1.0, abs=1e-9)
    assert offloaded.step_gib == pytest.approx(20 * P / 4 / GIB + 1.0, abs=1e-9)  # the actor's alone: 39.14
    assert (round(reloaded.step_gib, 4), reloaded.critic_gib, reloaded.host_memory_gib) == (59.1298, 0.0, 172.1)
    assert offloaded.host_memory_gib == 172.1


def test_the_planner_follows_the_second_peak():
    offloaded = plan("Qwen3-8B", gpu="A100-80GB", budget_gpus=4, max_model_len=32768, critic="offloaded")[0].plans[0]
    reloaded = plan("Qwen3-8B", gpu="A100-80GB", budget_gpus=4, max_model_len=32768, critic="reloaded")[0].plans[0]
    # Env + SP=4 (57.88 GiB) holds both: a reloaded critic's update there, 66.00 GiB, is the tighter peak (s73, with the
    # actor's gradients counted, it was 0.32 GiB over, and the actor offloaded).
    assert (offloaded.env, offloaded.offload, offloaded.sp, offloaded.headroom_at_critic_pass) == (
        True, False, 4, False)
    assert (reloaded.env, reloaded.offload, reloaded.sp, reloaded.headroom_at_critic_pass) == (True, False, 4, True)
    assert reloaded.headroom_gb == pytest.approx(USABLE - (ACTOR_HELD + CRITIC_STATES + ACTIVATIONS), abs=1e-9)
    assert reloaded.room_words == "7.5 GiB to spare at the critic's own update, the tighter peak"


def test_the_update_never_outweighs_a_resident_critics_pass_beside_the_actor():
    catalog, memory = load_catalog(), load_memory_model()
    for name in ("Qwen3-0.6B", "Qwen3-4B", "Qwen3-32B", "Qwen3-30B-A3B"):
        for setting in (Setting(), Setting(env=True, sp=2), Setting(env=True, offload=True, sp=4)):
            found = breakdown(catalog.model(name), 80.0, 8, setting, 65536, memory.coefficients, 0.01,
                              critic="resident")
            assert found.critic_pass_gib < found.total_gib and not found.critic_pass_binds, (name, setting)


def test_no_critic_no_update():
    found = breakdown(load_catalog().model("Qwen3-8B"), 80.0, 4, Setting(env=True, sp=4), 32768,
                      load_memory_model().coefficients, 0.01)
    assert (found.critic_pass_gib, found.critic_pass_fits, found.critic_pass_binds) == (0.0, True, False)


def test_the_json_gives_the_update_and_reads_back():
    found = answer("reloaded")
    shown = json.loads(found.model_dump_json())
    assert (shown["critic_pass_gib"], shown["fits"], shown["headroom_gib"], shown["step_binds"]) == (
        66.0049, True, 7.5301, False)
    assert MemoryAnswer.model_validate_json(found.model_dump_json()).critic_pass_gib == pytest.approx(66.0049)


def test_solve_memory_says_the_update_and_its_verdict(cli: Callable[..., tuple[int, str, str]]):
    status, out, err = cli("memory", "--model", "8B", "--gpu", "A100-80GB", "--gpus", "4", "--len", "32k", "--sp", "4",
                           "--env", "--critic", "reloaded")
    said = " ".join(out.split())
    assert status == 0, err
    assert ("critic's own update: 66.00 GiB of the 73.53 usable, holding the actor's states less their gradients (the "
            "actor frees them after each of its updates, which follow the critic's), the critic's states (back on the "
            "GPU for it) and its activations (every term but the logits; the checkpoints and recompute at least their "
            "floor without them)") in said
    assert ("fits (estimated): 7.53 GiB to spare at the critic's own update, of the usable memory (91.9% of the "
            "memory, the margin taken off); the optimizer step takes 59.13 GiB of the 77.62 it may (97.0% of the "
            "memory)") in said
    status, out, err = cli("memory", "--model", "8B", "--gpu", "A100-80GB", "--gpus", "4", "--len", "32k", "--sp", "4",
                           "--env", "--offload", "--critic", "offloaded")
    said = " ".join(out.split())
    assert status == 0, err
    assert ("critic's own update: 14.26 GiB of the 73.53 usable, holding its activations (every term but the logits; "
            "the checkpoints and recompute at least their floor without them)") in said
    assert "in host memory throughout (FSDP2's offload_policy: its own update gathers each layer from there" in said
