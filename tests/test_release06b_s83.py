"""Trinity 0.6's two readings judged alike, and next steps (s83, release06b, from persona70's findings).

(1) Under ``--trinity-version 0.6`` a config whose roles' offload flags alone turn Offload on is judged as verl before
0.8 runs it (it copies ``trainer.*``'s flags, false where unset, over the actor's and the ref's): the reading that holds
more on the GPUs, as a PPO critic's two readings are; Qwen3-30B-A3B at 32768 tokens on 4 H200s then needs 147.2 GiB of
125.1 and ``--check`` fails. (2) LoRA on a mixture of experts whose adapter config Trinity 0.6 saves cut short refuses
the config under 0.6 (``lora-moe-config-unsaved-refused``), but in mode train and under 0.5.2. (3) A resident critic's
"nothing fits" names ``--critic offloaded`` and more GPUs. (4) ``--write`` mends a budget comment that is Trinity's
default formula. (5) The critic's forward budget note names the trainer's budget that all four repeat."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from solver.rules import COMMAND_OPTIONS
from solver.trinity import TRINITY_06_OFFLOAD, read_trinity_config

Cli = Callable[..., tuple[int, str, str]]

GRPO = """\
algorithm: {algorithm_type: grpo, repeat_times: 8}
model: {model_path: Qwen/Qwen3-30B-A3B, max_prompt_tokens: 2048, max_response_tokens: 30720, max_model_len: &len 32768}
cluster: {node_num: 1, gpu_per_node: 8}
buffer: {batch_size: 32}
explorer: {rollout_model: {engine_num: 2, tensor_parallel_size: 2, max_model_len: *len}}
trainer:
  trainer_strategy: fsdp2
  ulysses_sequence_parallel_size: &sp 4
  max_token_len_per_gpu: &tok 16384   # ceil(2 x 32768 / SP 4)
  trainer_config:
    actor_rollout_ref:
      actor:
        ppo_max_token_len_per_gpu: *tok
        ulysses_sequence_parallel_size: *sp
        fsdp_config: &offload {param_offload: true, optimizer_offload: true, offload_policy: true}
      ref: {log_prob_max_token_len_per_gpu: *tok, ulysses_sequence_parallel_size: *sp, fsdp_config: *offload}
"""
"""persona70's GRPO config for Trinity 0.5.2, shortened: Offload in the roles' flags alone, budgets shared by
anchors."""

LORA = GRPO.replace("max_model_len: &len 32768}",
                    "max_model_len: &len 32768,\n        lora_configs: [{lora_rank: 32}]}")
"""The same with LoRA on all-linear."""

OFF_LINE = ("Trinity 0.6 on verl before 0.8 replaces the roles' offload flags with trainer.param_offload, "
            "optimizer_offload and offload_policy (false where unset), so there the actor trains without Offload, "
            "which the verdict counts, the reading that holds more on the GPUs (verl 0.8 or later reads the roles' own "
            "flags, with Offload): set trainer.param_offload, optimizer_offload and offload_policy to true too "
            "(--write does)")


def written(tmp_path: Path, text: str, name: str = "c.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def current(cli: Cli, path: Path, *flags: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    status, out, _ = cli("--from-config", str(path), "--gpu", "h200", "--check", "--json", *flags)
    return status, json.loads(out)[0]["current"]


# (1) The actor's two readings under 0.6, as the critic's.

def test_on_060_the_roles_flags_alone_count_offload_off_as_verl_before_08_runs_it(cli: Cli, tmp_path: Path) -> None:
    path = written(tmp_path, GRPO)
    status, out, _ = cli("--from-config", str(path), "--gpu", "h200", "--check", "--trinity-version", "0.6.0")
    assert status == 1
    assert ("c.yaml runs SP=4 on 4 trainer GPUs at 32768 tokens (Env off, PYTORCH_CUDA_ALLOC_CONF unset in this "
            "shell): nothing in the tables and the memory model's estimates says it trains (the memory model "
            "predicts 147.2 GiB per GPU, of 125.1 usable).") in " ".join(out.split())
    status, settings = current(cli, path, "--trinity-version", "0.6.0")
    assert (status, settings["offload"], settings["trains"], settings["refused"]) == (1, False, False, False)
    assert (settings["config_problem_codes"], settings["config_problems"]) == (
        ["trainer-offload-flags-unset"], [OFF_LINE])


def test_without_a_release_or_under_05_the_roles_flags_count_offload_on(cli: Cli, tmp_path: Path) -> None:
    path = written(tmp_path, GRPO)
    status, settings = current(cli, path)
    assert (status, settings["offload"], settings["trains"], settings["config_problems"]) == (
        0, True, True, [TRINITY_06_OFFLOAD])
    status, settings = current(cli, path, "--trinity-version", "0.5.2")
    assert (status, settings["offload"], settings["trains"], settings["config_problems"]) == (0, True, True, [])


def test_on_060_the_trainers_flags_beside_the_roles_make_both_readings_offload(cli: Cli, tmp_path: Path) -> None:
    path = written(tmp_path, GRPO.replace("  trainer_strategy: fsdp2\n", "  trainer_strategy: fsdp2\n  param_offload: "
                                          "true\n  optimizer_offload: true\n  offload_policy: true\n"))
    status, settings = current(cli, path, "--trinity-version", "0.6.0")
    assert (status, settings["offload"], settings["trains"], settings["config_problems"]) == (0, True, True, [])


def test_the_api_names_its_own_write(tmp_path: Path) -> None:
    config = read_trinity_config(GRPO, "c.yaml", {}, "0.6")
    assert not config.offload
    assert config.notes == (OFF_LINE.replace("(--write does)", "(solver.trinity.patch_trinity_config does)"),)
    assert read_trinity_config(GRPO, "c.yaml", {}, "0.6", COMMAND_OPTIONS).notes == (OFF_LINE,)


# (2) LoRA on a mixture of experts whose adapter config 0.6 saves cut short.

def test_on_060_lora_on_qwen3_moe_refuses_the_config_naming_the_fix(cli: Cli, tmp_path: Path) -> None:
    path = written(tmp_path, LORA)
    status, out, _ = cli("--from-config", str(path), "--gpu", "h200", "--check", "--trinity-version", "0.6.0")
    flat = " ".join(out.split())
    assert status == 1
    assert ("refused: model.lora_configs trains LoRA on Qwen3-30B-A3B, a mixture of experts: with transformers 5 "
            "(Trinity 0.6 requires 5.12.1 or later) peft 0.21.2 makes the adapter's target_parameters a set") in flat
    assert ("so the explorer's vLLM fails to reload the adapter at the first weight sync (json.load), and so does any "
            "later load of it: train Qwen3-30B-A3B without LoRA (drop model.lora_configs), or patch Trinity's "
            "_save_lora to write target_parameters as a list before the run") in flat
    status, settings = current(cli, path, "--trinity-version", "0.6.0")
    assert (status, settings["refused"]) == (1, True)
    assert "lora-moe-config-unsaved-refused" in settings["config_problem_codes"]


def test_under_052_or_in_mode_train_it_stays_a_caution(cli: Cli, tmp_path: Path) -> None:
    path = written(tmp_path, LORA)
    status, settings = current(cli, path, "--trinity-version", "0.5.2")
    assert (status, settings["refused"], settings["trains"]) == (0, False, True)
    assert settings["config_problem_codes"] == ["lora-moe-config-unsaved", "lora-counted-as-full"]
    assert "run it on transformers 4" in settings["config_problems"][0]
    train = written(tmp_path, LORA.replace("buffer: {batch_size: 32}", "mode: train\nbuffer: {train_batch_size: 256}"),
                    "train.yaml")
    _, settings = current(cli, train, "--trinity-version", "0.6.0")
    assert "lora-moe-config-unsaved" in settings["config_problem_codes"]
    assert "lora-moe-config-unsaved-refused" not in settings["config_problem_codes"]
    # Without a release, it may be 0.5 on transformers 4: a caution.
    _, settings = current(cli, path)
    assert settings["config_problem_codes"][0] == "lora-moe-config-unsaved"


# (3) No plan with a resident critic: the next steps.

RESIDENT = ("no plan: the tables have no Qwen3-30B-A3B on H200-141GB, and with a resident PPO critic the memory model "
            "estimates that nothing fits (not even 1024 tokens); with --critic offloaded (its states in host memory "
            "throughout), Env + Offload + SP=2 on 4 GPUs trains 65536 tokens (estimated, extrapolated); more trainer "
            "GPUs train 65536 tokens: Env + SP=8 on 8 GPUs (estimated, extrapolated)")


def test_a_resident_critic_that_fits_nothing_names_critic_offloaded_and_more_gpus(cli: Cli) -> None:
    flags = ("--model", "Qwen/Qwen3-30B-A3B", "--gpu", "h200", "--len", "64k", "--gpus", "4", "--critic", "resident")
    status, out, _ = cli(*flags)
    assert status == 1 and RESIDENT in " ".join(out.split())
    status, out, _ = cli(*flags, "--json")
    [answer] = json.loads(out)
    assert (answer["reason_code"], "no plan: " + answer["reason"]) == ("no-table-for-model", RESIDENT)
    # The step it names holds: an offloaded critic plans there.
    status, out, _ = cli(*flags[:-1], "offloaded", "--json")
    plan = json.loads(out)[0]["plans"][0]
    assert (status, plan["env"], plan["offload"], plan["sp"], plan["gpus"]) == (0, True, True, 2, 4)


def test_where_an_offloaded_critic_has_no_plan_either_only_more_gpus_are_named(cli: Cli) -> None:
    flags = ("--model", "Llama-3.1-70B", "--gpu", "h200", "--len", "64k", "--gpus", "1", "--json")
    status, out, _ = cli(*flags, "--critic", "resident")
    [answer] = json.loads(out)
    assert (status, answer["reason_code"], answer["reason"]) == (1, "no-table-for-model", (
        "the tables have no Llama-3.1-70B on H200-141GB, and with a resident PPO critic the memory model estimates "
        "that nothing fits (not even 1024 tokens); more trainer GPUs train 65536 tokens: Env + Offload + SP=8 on 16 "
        "GPUs (estimated, extrapolated)"))
    status, out, _ = cli(*flags, "--critic", "offloaded")
    assert (status, json.loads(out)[0]["plans"]) == (1, [])


# (4) --write mends the budget comment that is Trinity's default formula.

def test_write_mends_the_budget_formula_comment_to_the_plans(cli: Cli, tmp_path: Path) -> None:
    path, out = written(tmp_path, GRPO), tmp_path / "out.yaml"
    status, _, err = cli("--from-config", str(path), "--gpu", "h200", "--trinity-version", "0.6.0", "--write", str(out))
    assert status == 0, err
    assert "  max_token_len_per_gpu: &tok 65536   # ceil(2 x 32768 / SP 1)\n" in out.read_text(encoding="utf-8")


def test_write_drops_it_below_the_formula_and_keeps_a_comment_that_says_more(cli: Cli, tmp_path: Path) -> None:
    path, out = written(tmp_path, GRPO), tmp_path / "out.yaml"
    status, _, err = cli("--from-config", str(path), "--gpu", "h200", "--trinity-version", "0.6.0",
                         "--token-budget", "20000", "--write", str(out))
    assert status == 0, err
    assert "  max_token_len_per_gpu: &tok 20000\n" in out.read_text(encoding="utf-8")
    own = written(tmp_path, GRPO.replace("SP 4)", "SP 4), as 0.5.2 ran it"), "own.yaml")
    status, _, err = cli("--from-config", str(own), "--gpu", "h200", "--trinity-version", "0.6.0", "--write", str(out))
    assert status == 0, err
    assert "&tok 65536   # ceil(2 x 32768 / SP 4), as 0.5.2 ran it\n" in out.read_text(encoding="utf-8")


# (5) The critic's forward budget repeats the trainer's, through the critic's own.

PPO = GRPO.replace("algorithm_type: grpo, repeat_times: 8", "algorithm_type: ppo") + """\
    critic:
      ppo_max_token_len_per_gpu: *tok
      forward_max_token_len_per_gpu: *tok
      model: {fsdp_config: *offload}
"""


def test_the_critics_forward_budget_note_names_the_trainers_budget(cli: Cli, tmp_path: Path) -> None:
    path, out = written(tmp_path, PPO), tmp_path / "out.yaml"
    status, _, err = cli("--from-config", str(path), "--gpu", "h200", "--host-ram", "2TB", "--trinity-version",
                         "0.5.2", "--write", str(out))
    assert status == 0, err
    notes = [line for line in err.splitlines() if "critic." in line]
    assert notes == [
        f"solve: note: {out}: trainer.trainer_config.critic.{key} 16384 raised to the plan's 65536 with "
        "trainer.max_token_len_per_gpu, whose value it repeats: set by hand, it overrides "
        "trainer.max_token_len_per_gpu for its role"
        for key in ("ppo_max_token_len_per_gpu", "forward_max_token_len_per_gpu")]
