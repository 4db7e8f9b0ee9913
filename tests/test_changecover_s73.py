"""Lines session 73 changed in solver/ that no test ran (coverage12): a PPO critic named in the planner's memory line,
in `solve memory`'s headline and planner call, in --explain's evidence; an offloaded critic's host need on a plan
without Offload; `solve memory`'s planner command and `solve map`'s title with or without the reference model; a
Phi-3 RoPE scaling's partial_rotary_factor; a rollout RoPE scaling whose type cannot be read."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal

import pytest
from test_slidingkv_s71 import _refusal, _written
from test_vllmrest_s73 import _phi3

import solver
from solver.render.memory import planner_call
from solver.tables import load_catalog, load_model_config
from solver.trinity import trinity_config_problems


def test_the_planners_memory_line_names_the_critics_states() -> None:
    answers = solver.plan("Qwen3-8B", gpu="A100-80GB", budget_gpus=4, max_model_len=32768, critic="resident")
    best = answers[0].best
    assert best is not None and best.evidence == "estimated"
    # s75: the row names both peaks (`Plan.peaks_words`), and wraps
    said = " ".join(solver.answers_text(answers).split())
    assert (f"memory {best.memory_gb:.1f} GiB per GPU predicted{best.peaks_words}, {best.room_words} (memory model; a "
            "PPO critic's states, resident)") in said
    assert best.peaks_words == " for the actor's pass and 52.5 for the critic's own update"


def test_solve_memorys_planner_call_carries_the_critic() -> None:
    resident = solver.memory_answer("Qwen3-8B", "A100-80GB", 4, 32768, critic="resident", sp=2, env=True)
    call = 'solver.plan("Qwen3-8B", gpu="A100-80GB", budget_gpus=4, max_model_len=32768, critic="resident")'
    assert not resident.fits and planner_call(resident) == call
    assert solver.memory_text(resident).splitlines()[-1] == f"  {call}"
    # After the LoRA rank; none without a critic.
    offloaded = solver.memory_answer("Qwen3-8B", "A100-80GB", 4, 32768, critic="offloaded", lora_rank=16)
    assert planner_call(offloaded) == ('solver.plan("Qwen3-8B", gpu="A100-80GB", budget_gpus=4, max_model_len=32768, '
                                       'lora_rank=16, critic="offloaded")')
    alone = solver.memory_answer("Qwen3-8B", "A100-80GB", 4, 32768, sp=2, env=True)
    assert planner_call(alone) == call.removesuffix(', critic="resident")') + ")"


HOST_LINE = ("host memory    172.1 GiB per node for the critic's offloaded states (the critic's states (131.5 GiB) and "
             "the reference model's shards, or the model while it")
"""The host memory line of Qwen3-8B's plan at 32768 tokens within 4 A100s with an offloaded critic: its 172.1 GiB per
node are the bound test_critic_s73's host_ram_gb holds the planner to."""


@pytest.mark.parametrize(("critic", "named"), [("resident", "critic resident, "), (None, "")])
def test_solve_memorys_headline_names_the_critic(critic: Literal["resident"] | None, named: str) -> None:
    answer = solver.memory_answer("Qwen3-8B", "A100-80GB", 4, 32768, critic=critic, sp=2, env=True)
    assert solver.memory_text(answer).splitlines()[0] == (
        f"Qwen3-8B (8.2B parameters) on 4 x A100-80GB (80.0 GiB), Env + SP=2, {named}32768 tokens (32768 per GPU), "
        "margin 0.01")


@pytest.mark.parametrize(("critic", "label", "need", "lines"), [
    ("offloaded", "Env + SP=4", 172.1, [HOST_LINE]),
    (None, "SP=4", None, []),  # no critic, no Offload, no host memory given: no host need named
])
def test_an_offloaded_critics_host_need_is_given_on_a_plan_without_offload(
        critic: Literal["offloaded"] | None, label: str, need: float | None, lines: list[str]) -> None:
    answers = solver.plan("Qwen3-8B", gpu="A100-80GB", budget_gpus=4, max_model_len=32768, critic=critic)
    best = answers[0].best
    assert best is not None and (best.setting.label, best.host_memory_gb) == (label, need)
    assert [line for line in solver.answers_text(answers).splitlines() if line.startswith("host ")] == lines


def test_explain_says_the_table_measured_the_actor_alone() -> None:
    def evidence(critic: Literal["resident"] | None) -> list[str]:
        [answer] = solver.plan("Qwen3-4B", gpu="A100-80GB", budget_gpus=2, max_model_len=32768, critic=critic,
                               explain=True)
        return [reason.detail for reason in answer.explanation or () if reason.rule == "memory_model"]

    # The tables' cells trained the actor alone: with a critic beside it none vouches, and the memory model speaks
    # instead (its critic states less their gradients, s74). Env + Offload + SP=2 on 2 GPUs trains it; with the
    # critic's work in the cost (s76) every 1-GPU combination ranks after it, so the 2-GPU table's are explained.
    assert evidence("resident") == [(
        "the A100-80GB table for 2 GPUs measured the actor alone, without the PPO critic this run trains beside it: no "
        "cell of it vouches for these settings at 32768 tokens; the memory model predicts at 32768 tokens: Env 137.2 "
        "GiB of 73.5 usable; Env + Offload 106.4 GiB of 73.5 usable; Env + SP=2 97.7 GiB of 73.5 usable; vanilla, "
        "Offload, SP=2 and Offload + SP=2 not estimated (estimates turn Env on unless env=False)")]
    assert evidence(None) == []


@pytest.mark.parametrize(("given", "carried"), [
    ("--no-reference", " --no-reference"), ("--reference", " --reference"), (None, "")])
def test_solve_memorys_planner_command_carries_the_reference_option(cli: Callable[..., tuple[int, str, str]],
                                                                    given: str | None, carried: str) -> None:
    status, out, err = cli("memory", "--model", "8B", "--gpu", "A100-80GB", "--gpus", "4", "--len", "32k", "--sp", "2",
                           "--env", *([given] if given else []))
    assert (status, err) == (1, "")  # 80.1 GiB of 73.5: the planner's command closes the view
    assert out.splitlines()[-1] == f"  solve --model 8B --gpu A100-80GB --gpus 4 --len 32768{carried}"


@pytest.mark.parametrize(("lora_rank", "reference_model", "said"), [
    (0, True, ", reference model counted"), (16, False, ", LoRA rank 16, no reference model"),
    (16, None, ", LoRA rank 16")])  # True with LoRA is refused since session 74: no Trinity release builds one
def test_a_maps_title_says_whether_the_reference_model_is_counted(lora_rank: int, reference_model: bool | None,
                                                                  said: str) -> None:
    gpu_maps = solver.map_plans("Qwen3-8B", gpu="H100-80GB", budgets=[8], lora_rank=lora_rank,
                                reference_model=reference_model)
    assert solver.map_text(gpu_maps).splitlines()[0] == (
        f"H100-80GB: longest context per model and GPU budget{said}")


@pytest.mark.parametrize(("rope", "refusal"), [
    ({"partial_rotary_factor": "half"}, "partial_rotary_factor: expected a number, got 'half'"),
    ({"partial_rotary_factor": True}, "partial_rotary_factor: expected a number, got true"),
    # Half the rotary dimensions: 24 pairs, not the 48 its published factors give.
    ({"partial_rotary_factor": 0.5}, ("short_factor: transformers' Phi-3 config class takes a list of 24 numbers (one "
                                      "per pair of rotary dimensions), got [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, ...]")),
])
def test_a_phi3_partial_rotary_factor_is_read_as_its_config_class_reads_it(tmp_path: Path,
                                                                           rope: dict[str, object],
                                                                           refusal: str) -> None:
    assert _refusal(tmp_path, _phi3(**rope)) == f"rope_scaling: {refusal}"


def test_a_phi3_partial_rotary_factor_halves_the_factors_it_takes(tmp_path: Path) -> None:
    config = _phi3(partial_rotary_factor=0.5, short_factor=[1.0] * 24, long_factor=[1.0] * 24)
    assert load_model_config(_written(tmp_path, config)).rope_scaling == "longrope"


def test_a_rollout_rope_scaling_whose_type_cannot_be_read_is_not_judged_by_vllms_rule() -> None:
    # rope_type yarn alone would be refused (no original_max_position_embeddings); its legacy type cannot be
    # resolved: Trinity refuses the config as it loads it, and that is the line.
    rope = {"rope_type": "yarn", "type": "${model.nothing}", "factor": 2.0}
    mapping = {"model": {"model_path": "Qwen/Qwen3-8B", "max_model_len": 32768},
               "explorer": {"rollout_model": {"rope_scaling": rope}}}
    problems = trinity_config_problems(mapping, load_catalog().model("8B"), 8)
    assert [(problem.code.value, problem.words) for problem in problems
            if problem.code.value != "rollout-rope-scaling-differs"] == [(
                "unresolved-value-refused", ("explorer.rollout_model.rope_scaling.type: cannot resolve "
                                             "'${model.nothing}': the config has no model.nothing; every Trinity "
                                             "release refuses the config as it loads it (OmegaConf resolves each "
                                             "value then)"))]
    readable = {**mapping, "explorer": {"rollout_model": {"rope_scaling": {"rope_type": "yarn", "factor": 2.0}}}}
    assert "rope-scaling-unbuilt-refused" in [
        problem.code.value for problem in trinity_config_problems(readable, load_catalog().model("8B"), 8)]
