"""Tests that kill the mutants of session 73's code that its tests let live (helper mutants24, s74): a critic's own
update against the usable memory and the other peaks (Breakdown's verdicts, and the JSON's limits read back), ..."""

from __future__ import annotations

import json
from typing import Any

import pytest

from solver.api import memory_answer
from solver.memory import Breakdown, MemoryAnswer, Terms

TERMS = Terms(states=40.0, gathered=2.0, checkpoints=3.0, logits=2.0, recompute=1.0, sp_buffers=1.0,
              fragmentation=0.0, overhead=1.0)
"""Terms of 50 GiB, for breakdowns whose peaks the tests set."""


def _breakdown(**figures: float) -> Breakdown:
    """A breakdown of an 80 GiB GPU with the peaks `figures` give: 73 GiB usable, 77 for the optimizer step."""
    return Breakdown(terms=TERMS, **{"total_gib": 50.0, "usable_gib": 73.0, "memory_gib": 80.0, "tokens_per_gpu": 8192,
                                     "step_usable_gib": 77.0, **figures})


def test_a_critics_update_of_exactly_the_usable_memory_fits():
    # M1: the update's peak may take all of the usable memory, as the actor's may.
    full = _breakdown(critic_pass_gib=73.0)
    assert (full.critic_pass_fits, full.fits, full.headroom_gib) == (True, True, 0.0)
    assert (_breakdown(critic_pass_gib=73.5).critic_pass_fits, _breakdown(critic_pass_gib=73.5).fits) == (False, False)


def test_a_critics_update_as_tight_as_the_activations_does_not_bind():
    # M6: a room no smaller than the activations' leaves headroom_gib theirs, not the critic's.
    assert _breakdown(critic_pass_gib=50.0).critic_pass_binds is False
    assert _breakdown(critic_pass_gib=50.5).critic_pass_binds is True


def test_where_the_optimizer_step_binds_the_critics_update_does_not():
    # M5: the step's room (7 GiB) is the least; the critic's update (13) is less than the activations' (23), but
    # headroom_at_critic_pass says the tightest peak, one at most.
    both = _breakdown(step_gib=70.0, critic_pass_gib=60.0)
    assert (both.step_binds, both.critic_pass_binds, both.headroom_gib) == (True, False, 7.0)
    alone = _breakdown(step_gib=60.0, critic_pass_gib=60.0)
    assert (alone.step_binds, alone.critic_pass_binds, alone.headroom_gib) == (False, True, 13.0)


def _raw(critic: str | None) -> dict[str, Any]:
    """Qwen3-8B's solve memory --json on 4 A100-80GB at 32768 tokens, SP=4 with Env, without Offload."""
    answer = memory_answer("Qwen3-8B", "A100-80GB", 4, 32768, sp=4, env=True,
                           critic=critic)  # type: ignore[arg-type]
    return dict(json.loads(answer.model_dump_json()))


def test_a_step_whose_room_is_the_usable_memory_without_a_critic_is_no_limit():
    # M3: without a critic the only other room is the activations' (23 GiB); a step whose room is the usable memory
    # itself is nowhere near it, so a step_binds that says otherwise is refused.
    raw = {key: value for key, value in _raw(None).items() if key not in ("fits", "headroom_gib", "step_fits", "trains")}
    raw["step_gib"] = raw["step_usable_gib"] - raw["usable_gib"]
    assert MemoryAnswer.model_validate({**raw, "step_binds": False}).step_binds is False
    with pytest.raises(ValueError, match="step_binds is True, but the other fields say False"):
        MemoryAnswer.model_validate({**raw, "step_binds": True})


def test_a_step_as_tight_as_the_critics_update_reads_back_either_way():
    # M9: the step's room equal to the reloaded critic's update's (which the JSON rounds alike) is at a limit: its
    # step_binds may print either way.
    raw = {key: value for key, value in _raw("reloaded").items()
           if key not in ("fits", "headroom_gib", "step_fits", "trains")}
    raw["step_gib"] = raw["step_usable_gib"] - (raw["usable_gib"] - raw["critic_pass_gib"])
    assert [MemoryAnswer.model_validate({**raw, "step_binds": given}).step_binds for given in (True, False)] == [
        False, False]
    raw["step_gib"] -= 0.01  # a room 0.01 GiB more: not at the limit, and not the tighter
    with pytest.raises(ValueError, match="step_binds is True, but the other fields say False"):
        MemoryAnswer.model_validate({**raw, "step_binds": True})
