"""The PPO critic's words in explanations and verdicts (s74, criticwords): `--explain` says where a reloaded critic's
own update is what rules a setting out, and with which critic the memory model fits it; a config's verdict gives that
update's figure (`predicted_critic_pass`); a host-held critic's host memory is worded in the host need's detail
(`solver.tables.host_need_detail`); the critic's own update finds the actor's states without their gradients, which
the actor frees after each of its updates (read from verl 0.9.1 and Trinity 0.6.0: `actor_held_at_critic_pass`); and
Trinity 0.5 refuses the critic's engine section, ``trainer.trainer_config.critic.fsdp``. The figures are Qwen3-8B's on
4 A100-80GBs with SP=4, Env off, at 40960 tokens (20480 per GPU): the actor's peak 67.42 GiB, a reloaded critic's own
update 72.49, of 71.28 usable."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

import solver
from solver.memory import (
    GIB,
    Breakdown,
    actor_held_at_critic_pass,
    breakdown,
    lora_states_bytes,
    optimizer_step_gib,
)
from solver.tables import CriticStates, Setting, host_need_detail, load_catalog, load_memory_model

Cli = Callable[..., tuple[int, str, str]]

RELOADED_CONFIG = ("cluster: {node_num: 1, gpu_per_node: 8}\n"
                   "explorer: {rollout_model: {engine_num: 4, tensor_parallel_size: 1}}\n"
                   "model: {model_path: Qwen/Qwen3-8B, max_model_len: 40960}\n"
                   "trainer:\n  ulysses_sequence_parallel_size: 4\n  trainer_config:\n    critic:\n      model:\n"
                   "        fsdp_config: {param_offload: true, optimizer_offload: true}\n")
"""PPO (Trinity's default) on 4 trainer GPUs beside 4 rollout GPUs, SP=4 at 40960 tokens, its critic reloaded (its own
param_offload and optimizer_offload)."""
SP4 = Setting(sp=4)


def _breakdown(critic: CriticStates | None, length: int = 40960, setting: Setting = SP4) -> Breakdown:
    return breakdown(load_catalog().model("Qwen3-8B"), 80.0, 4, setting, length, load_memory_model().coefficients,
                     0.01, None, 0, critic)


def test_the_case_fits_but_for_the_reloaded_critics_own_update():
    reloaded, alone, offloaded = _breakdown("reloaded"), _breakdown(None), _breakdown("offloaded")
    assert [round(x, 2) for x in (reloaded.total_gib, reloaded.critic_pass_gib, reloaded.usable_gib)] == [
        67.42, 72.49, 71.28]
    assert (reloaded.step_fits, reloaded.critic_pass_fits, reloaded.fits) == (True, False, False)
    assert (alone.fits, offloaded.fits) == (True, True)


# 1. --explain


EXPLAINED = ("the A100-80GB table for 4 GPUs measured the actor alone, without the PPO critic this run trains beside "
             "it: no cell of it vouches for these settings at 40960 tokens; the memory model predicts at 40960 tokens: "
             "SP=4 67.4 GiB of 71.3 usable, but the PPO critic's own update takes 72.49 GiB of the 71.28 usable; with "
             "{none} or {offloaded} the memory model fits it")


def test_explain_names_the_critics_own_update_and_the_critics_that_fit(cli: Cli):
    status, out, err = cli("--model", "8B", "--gpu", "A100-80GB", "--gpus", "4", "--exact", "--len", "40960",
                           "--critic", "reloaded", "--sp", "4", "--no-env", "--explain", "--json")
    assert status == 0, err
    (answer,) = json.loads(out)
    details = [step["detail"] for step in answer["explanation"] if step["rule"] == "memory_model"]
    assert details == [EXPLAINED.format(none="--critic none", offloaded="--critic offloaded")]


def test_the_api_names_them_as_keywords():
    (answer,) = solver.plan("8B", gpu="A100-80GB", budget_gpus=4, exact=True, max_model_len=40960, critic="reloaded",
                            sp=4, env=False, explain=True)
    assert [step.detail for step in answer.explanation or () if step.rule == "memory_model"] == [
        EXPLAINED.format(none='critic="none"', offloaded='critic="offloaded"')]


def test_a_peak_over_the_usable_memory_is_worded_as_before(cli: Cli):
    # At 49152 tokens the actor's own peak is over: its figures alone, as for any setting.
    status, out, err = cli("--model", "8B", "--gpu", "A100-80GB", "--gpus", "4", "--exact", "--len", "49152",
                           "--critic", "reloaded", "--sp", "4", "--no-env", "--explain", "--json")
    assert status == 0, err
    (answer,) = json.loads(out)
    (detail,) = [step["detail"] for step in answer["explanation"] if step["rule"] == "memory_model"]
    over = _breakdown("reloaded", 49152)
    assert detail.endswith(f"the memory model predicts at 49152 tokens: SP=4 {over.total_gib:.1f} GiB of "
                           f"{over.usable_gib:.1f} usable")
    assert over.total_gib > over.usable_gib and "critic's own update" not in detail


def test_explain_names_the_critics_own_update_beside_an_optimizer_step_over(cli: Cli):
    # s93: Qwen3-8B on 2 A100s with Env + SP=2 at 4096 tokens: the peak fits, but a reloaded critic's own update
    # (110.23 GiB of 73.53) is over as well as the optimizer step (117.26 of 77.62): both are named, not the step alone.
    setting = Setting(env=True, sp=2)
    over = breakdown(load_catalog().model("Qwen3-8B"), 80.0, 2, setting, 4096, load_memory_model().coefficients,
                     0.01, None, 0, "reloaded")
    assert over.total_gib <= over.usable_gib and not over.step_fits and not over.critic_pass_fits
    status, out, err = cli("--model", "8B", "--gpu", "A100-80GB", "--gpus", "2", "--exact", "--len", "4096",
                           "--critic", "reloaded", "--sp", "2", "--env", "--explain", "--json")
    assert status == 0, err
    (answer,) = json.loads(out)
    (detail,) = [step["detail"] for step in answer["explanation"] if step["rule"] == "memory_model"]
    assert detail.endswith("the memory model predicts at 4096 tokens: Env + SP=2 117.26 GiB at the optimizer step, "
                           "more than the 77.62 it may take, and the PPO critic's own update takes 110.23 GiB of the "
                           "73.53 usable; with --critic none or --critic offloaded the memory model fits it")


# 2. the verdict's predicted_critic_pass


VERDICT = ("run.yaml runs SP=4 on 4 trainer GPUs at 40960 tokens (Env off, PYTORCH_CUDA_ALLOC_CONF unset in this "
           "shell): nothing in the tables and the memory model's estimates says it trains (the memory model predicts "
           "67.4 GiB per GPU, of 71.3 usable, but 72.49 GiB at the PPO critic's own update, more than the 71.28 "
           "usable). The best plan follows.")


def test_the_verdict_gives_the_critics_own_update(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
    path = tmp_path / "run.yaml"
    path.write_text(RELOADED_CONFIG, encoding="utf-8")
    status, out, err = cli("--from-config", str(path), "--gpu", "A100-80GB", "--json")
    assert status == 0, err
    current = json.loads(out)[0]["current"]
    assert (current["trains"], current["predicted"], current["predicted_step"], current["predicted_critic_pass"]) == (
        False, [67.4, 71.3], None, [72.49, 71.28])
    assert current["verdict"] == VERDICT
    status, out, _ = cli("--from-config", str(path), "--gpu", "A100-80GB", "--check")
    assert status == 1 and VERDICT in " ".join(out.split())
    # --critic none: the actor alone fits, so nothing is predicted against it
    status, out, _ = cli("--from-config", str(path), "--gpu", "A100-80GB", "--critic", "none", "--json")
    current = json.loads(out)[0]["current"]
    assert (current["trains"], current["predicted"], current["predicted_critic_pass"]) == (True, None, None)


ONE_GPU_CONFIG = ("cluster: {node_num: 1, gpu_per_node: 8}\n"
                  "explorer: {rollout_model: {engine_num: 7, tensor_parallel_size: 1}}\n"
                  "model: {model_path: Qwen/Qwen3-8B, max_model_len: 8192}\n"
                  "trainer:\n  trainer_strategy: fsdp2\n  trainer_config:\n    actor_rollout_ref:\n"
                  "      actor: {fsdp_config: {param_offload: true, optimizer_offload: true, offload_policy: true}}\n"
                  "      ref: {fsdp_config: {param_offload: true, optimizer_offload: true, offload_policy: true}}\n"
                  "    critic:\n      model:\n        fsdp_config: {param_offload: true, optimizer_offload: true}\n")
"""PPO with Offload on 1 trainer GPU at 8192 tokens, its critic reloaded: the actor's peak fits (28.9 GiB of 71.3), but
the critic's own optimizer step (141.98 of 77.62) and its own update (129.42 of 71.28) do not."""


def test_the_verdict_gives_the_critics_own_update_beside_an_optimizer_step_over(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # s93: the verdict named the optimizer step alone, as if the critic's own update fitted.
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
    path = tmp_path / "run.yaml"
    path.write_text(ONE_GPU_CONFIG, encoding="utf-8")
    status, out, err = cli("--from-config", str(path), "--gpu", "A100-80GB", "--trinity-version", "0.5", "--json")
    assert status == 1, err
    current = json.loads(out)[0]["current"]
    assert (current["trains"], current["predicted"], current["predicted_step"], current["predicted_critic_pass"]) == (
        False, [28.9, 71.3], [141.98, 77.62], [129.42, 71.28])
    assert ("(the memory model predicts 28.9 GiB per GPU, of 71.3 usable, but 141.98 GiB at the optimizer step, more "
            "than the 77.62 it may take, and 129.42 GiB at the PPO critic's own update, more than the 71.28 usable)"
            ) in current["verdict"]


# 3. the host need's detail


@pytest.mark.parametrize(("offload", "reference", "words"), [
    (False, True, ("the critic's states and the reference model's shards, or the model while it loads beside the "
                   "reference model's pinned shards, whichever is more")),
    (False, False, "the critic's states, or the model while it loads, whichever is more; no reference model"),
    (True, True, ("the actor's states, the critic's states and the reference model's shards, or the model while it "
                  "loads beside both models' pinned shards, whichever is more")),
    (True, False, ("the actor's states and the critic's states, or the model while it loads beside the actor's "
                   "pinned shards, whichever is more; no reference model")),
])
def test_a_host_held_critic_is_in_the_host_needs_detail(offload: bool, reference: bool, words: str):
    assert host_need_detail(offload, reference, "offloaded") == words
    assert host_need_detail(offload, reference, "reloaded") == words
    # a resident critic holds nothing there: the words without it
    assert host_need_detail(offload, reference, "resident") == host_need_detail(offload, reference)


@pytest.mark.parametrize(("flags", "line"), [
    # s75: the purpose as the plan's row says it (`host_need_purpose`), the critic's share in the detail
    ((), ("172.1 GiB per node for the critic's offloaded states (the critic's states (131.5 GiB) and the reference "
          "model's shards, or the model while it loads beside the reference model's pinned shards, whichever is "
          "more)")),
    (("--no-reference",), ("131.5 GiB per node for the critic's offloaded states (the critic's states (131.5 GiB), "
                           "or the model while it loads, whichever is more; no reference model)")),
    (("--offload",), ("314.4 GiB per node for Offload and the critic's offloaded states (the actor's states, the "
                      "critic's states (131.5 GiB) and the reference model's shards, or the model while it loads "
                      "beside both models' pinned shards, whichever is more); not checked: --host-ram not given")),
])
def test_solve_memory_words_the_critics_host_memory_in_the_detail(cli: Cli, flags: tuple[str, ...], line: str):
    status, out, err = cli("memory", "--model", "8B", "--gpu", "A100-80GB", "--gpus", "4", "--len", "32k", "--sp",
                           "4", "--env", "--critic", "offloaded", *flags)
    assert status == 0, err
    said = " ".join(out.split())
    assert f"host memory: {line}" in said


# 4. the actor's gradients, freed before the critic's own update


def test_the_critics_update_finds_the_actors_states_without_their_gradients():
    model = load_catalog().model("Qwen3-8B")
    # 12 of 16 bytes: the fp32 weights and Adam's two moments
    assert actor_held_at_critic_pass(model, 4) == pytest.approx(0.75, abs=1e-12)
    # LoRA: the frozen base's 4 bytes a parameter stay whole, the adapter's 16 lose their 4 of gradients
    held = lora_states_bytes(model, 4, 16, 12) / lora_states_bytes(model, 4, 16, 16)
    assert actor_held_at_critic_pass(model, 4, 16) == held and 0.99 < held < 1.0
    alone, reloaded = _breakdown(None, 32768, Setting(env=True, sp=4)), _breakdown("reloaded", 32768,
                                                                                   Setting(env=True, sp=4))
    # Qwen3-8B at 32768 (SP=4, Env): the actor's 31.40 GiB of states are 23.55 at the critic's update: 66.00 GiB in
    # all, where s73 counted 73.85 (their gradients too) and found it 0.32 over.
    assert round(alone.terms["states"], 4) == 31.399
    assert round(reloaded.critic_pass_gib, 4) == 66.0049 and reloaded.fits
    # with the actor's Offload its states are not on the GPU at all: nothing to lose
    offloaded = _breakdown("reloaded", 32768, Setting(env=True, offload=True, sp=4))
    assert round(offloaded.critic_pass_gib, 4) == 42.4556


def test_the_critics_own_step_finds_them_so_too():
    model, coefficients = load_catalog().model("Qwen3-8B"), load_memory_model().coefficients
    step = optimizer_step_gib(model, 4, Setting(env=True, sp=4), coefficients, critic="reloaded")
    critic = 16 * (8.191e9 - 151936 * 4096 + 4096 + 1) / 4 / GIB
    assert step == pytest.approx(12 * 8.191e9 / 4 / GIB + critic * 20 / 16 + 1.0, abs=1e-9)
    assert round(step, 4) == 59.1298


# 5. Trinity 0.5 refuses the critic's engine


@pytest.mark.parametrize(("version", "lines"), [
    ("0.5", [("trainer.trainer_config.critic.fsdp: a key of verl 0.8's critic, which Trinity 0.5 refuses (its Critic "
              "has no such key), so the config does not load: remove it (--write leaves it to you; Trinity 0.5 "
              "reads the critic's offload flags from its model.fsdp_config)")]),
    ("0.6", []),
])
def test_trinity_0_5_refuses_the_critics_engine(cli: Cli, tmp_path: Path, version: str, lines: list[str]):
    path = tmp_path / "run.yaml"
    path.write_text(RELOADED_CONFIG + "      fsdp: {param_offload: true, optimizer_offload: true}\n", encoding="utf-8")
    status, out, err = cli("--from-config", str(path), "--gpu", "A100-80GB", "--trinity-version", version, "--json")
    assert status == 0, err
    current = json.loads(out)[0]["current"]
    refused = [problem for problem, code in zip(current["config_problems"], current["config_problem_codes"],
                                                strict=True) if code == "unknown-key-refused"]
    assert (refused, current["refused"]) == (lines, bool(lines))


def test_the_answer_and_explain_say_the_host_memory_is_the_critics(cli: Cli):
    status, out, err = cli("--model", "8B", "--gpu", "A100-80GB", "--gpus", "4", "--exact", "--len", "32768",
                           "--critic", "offloaded", "--host-ram", "150", "--explain", "--json")
    assert status == 1, err  # no plan
    (answer,) = json.loads(out)
    assert answer["reason"].endswith("without --host-ram, Env + SP=4 on 4 GPUs trains it (32768 tokens), and it needs "
                                     "172.1 GiB of host memory per node for the critic's offloaded states")
    (limit,) = [step["detail"] for step in answer["explanation"] if step["rule"] == "limit"]
    assert limit == ("no plan passes this rule: host memory (--host-ram 150 GiB is too little for Offload, or for the "
                     "critic's states and the reference model's shards, or the model while it loads beside the "
                     "reference model's pinned shards, whichever is more)")
