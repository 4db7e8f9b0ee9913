"""Session 75's changed lines and alternatives that no related test ran (helper coverage15): a running job kept where
widening's wider ways on the idle GPUs beside it are none better than its own (`forgone_words` says no wider way, and
weighs another pool's way against its own alone), and an SGLang rollout whose ``enable_lora`` cannot be read as a
boolean (`_sglang_lora_notes` says nothing of LoRA it cannot read, and still refuses LoRA that ``model.lora_configs``
turns on)."""

from __future__ import annotations

import pytest
from test_lorarest3_s75 import _config, _lines
from test_review75_s75 import _fleet, _option

from solver.cluster import placements
from solver.cluster.placements import IdleRoom, forgone_words
from solver.tables import RunningJob

SGLANG_LORA_REFUSED = ("sglang-lora-refused", (
    "explorer.rollout_model.engine_type sglang with LoRA: Trinity 0.6 starts SGLang without "
    "LoRA and its SGLang engine cannot give the adapter's request, which each generation with LoRA on asks for, so "
    "the rollout fails at its first: leave engine_type unset (vllm) for LoRA, or drop LoRA"))


def test_no_wider_way_is_said_where_none_beats_its_own_and_another_pool_is_weighed_against_its_own(
        tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The job runs on 4 of a100's 8 GPUs at 16384 (cost 0.25); the 8-GPU way widening has costs more (0.3) and runs
    # it no longer: its own way stays the best, so no wider way is said and the count is not said kept for it.
    planner, fleet = _fleet(tmp_path)
    own, dearer_wider = _option(0, 4, 16384, 0.25, 0), _option(0, 8, 16384, 0.3, 0)
    monkeypatch.setattr(placements, "ways_to_grow", lambda *_: [own, dearer_wider])
    idle = IdleRoom(planner, fleet, {0: (own, [0])})
    running = RunningJob(job=0, pool=0, nodes=(0,), gpu_indexes=(0, 1, 2, 3), trainer_gpus=4, rollout_gpus=0,
                         max_model_len=16384, sp=1, offload=False)
    assert forgone_words(planner, fleet, running, (own, [own]), idle, widens=True) == ("", "")
    # spare's idle node runs it for 0.2 at its own length: cheaper than its own way, which is all it is weighed against.
    cheaper = _option(1, 4, 16384, 0.2, 0)
    label = own.plan.setting.label
    assert forgone_words(planner, fleet, running, (own, [own, cheaper]), idle, widens=True) == ("", (
        f"kept in pool a100, where it runs, though pool spare's idle room would run it for less (4 trainer GPUs, "
        f"{label}, cost 0.2, not 0.25)"))


def test_an_sglang_enable_lora_not_a_boolean_says_nothing_of_lora_unless_lora_configs_turns_it_on() -> None:
    sglang = "    engine_type: sglang\n    enable_lora: maybe\n"
    assert SGLANG_LORA_REFUSED not in _lines(_config(rollout=sglang))
    assert _lines(_config("  lora_configs: [{lora_rank: 16}]\n", sglang))[-1] == SGLANG_LORA_REFUSED
