"""An on-call engineer after a CUDA out-of-memory (persona82, s85): `solve memory`'s pointer to the planner says that
lower token budgets take `--token-budget auto` (the command it prints keeps Trinity's default budget, so it found no
Env + SP=4 at a lowered budget, which `--token-budget auto` does), and none for DPO, which refuses it; a
`--rollout-gpus` at odds with `--from-config`'s rollout says how to plan another rollout (a copy whose engines give
it), not only to drop the flag; a trainer on whole nodes beside a config's rollout names the config's explorer as what
asks for that rollout, not a ``--rollout-gpus`` the user never gave; ``--sp``, ``--env`` and ``--offload`` beside
``--from-config`` pin the plan, not the verdict, which reads Env from this shell, as docs/trinity.md says."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
Cli = Callable[..., tuple[int, str, str]]

ASKED = ("--model", "8B", "--gpu", "h100", "--gpus", "4", "--len", "64k")


def test_solve_memory_names_token_budget_auto_which_its_planner_command_needs_for_a_lower_budget(cli: Cli) -> None:
    status, out, _ = cli("memory", *ASKED, "--sp", "4", "--env")
    *_, words, command = out.splitlines()
    assert status == 1 and words == ("to find a setting that trains, run the planner, which tries every SP, Env and "
                                     "Offload (lower token budgets too with --token-budget auto):")
    argv = shlex.split(command)[1:]
    assert argv == ["--model", "8B", "--gpu", "h100", "--gpus", "4", "--len", "65536"]
    status, out, _ = cli(*argv)  # the command as printed keeps the default budget: Offload
    assert status == 0 and out.splitlines()[1] == (
        "plan           Env + Offload + SP=4 on 4 of 4 GPUs (none left for rollout)")
    status, out, _ = cli(*argv, "--token-budget", "auto")  # with the option the words name: a lowered budget
    assert status == 0 and out.splitlines()[1] == "plan           Env + SP=4 on 4 of 4 GPUs (none left for rollout)"
    assert "max_token_len_per_gpu = 25600 (lowered from Trinity's default" in out


def test_solve_memory_offers_no_token_budget_for_dpo_which_refuses_it(cli: Cli) -> None:
    status, out, _ = cli("memory", "--model", "14B", "--gpu", "h100", "--gpus", "1", "--len", "64k", "--dpo")
    assert status == 1 and out.splitlines()[-2:] == [
        "to find a setting that trains, run the planner, which tries every SP, Env and Offload:",
        "  solve --model 14B --gpu h100 --gpus 1 --len 65536 --dpo"]
    status, out, _ = cli("--model", "14B", "--gpu", "h100", "--gpus", "1", "--len", "64k", "--dpo",
                         "--token-budget", "auto")
    assert (status, out) == (2, "")


CONFIG = """\
model: {model_path: Qwen/Qwen3-4B, max_model_len: 40960, max_prompt_tokens: 4096, max_response_tokens: 36864}
algorithm: {algorithm_type: grpo, repeat_times: 8}
buffer: {batch_size: 32}
cluster: {node_num: 1, gpu_per_node: 8}
explorer: {rollout_model: {engine_num: ENGINES, tensor_parallel_size: 1}}
"""


def test_a_rollout_at_odds_with_the_config_says_how_to_plan_that_rollout(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "run.yaml"
    config.write_text(CONFIG.replace("ENGINES", "6"))
    status, out, err = cli("--from-config", str(config), "--gpu", "a100", "--rollout-gpus", "4")
    assert (status, out) == (2, "") and err == (
        f"solve: error: --rollout-gpus 4: {config} gives the rollout 6 GPUs (its engines times their GPUs each): drop "
        "--rollout-gpus, or plan a rollout of 4 GPUs from a copy whose explorer takes that many "
        "(explorer.rollout_model.engine_num x each engine's GPUs, with any auxiliary models')\n")
    copy = tmp_path / "copy.yaml"  # as the refusal says: the copy plans 4 trainer GPUs beside 4 rollout GPUs
    copy.write_text(CONFIG.replace("ENGINES", "4"))
    status, out, _ = cli("--from-config", str(copy), "--gpu", "a100")
    assert status == 0 and "plan           Env + SP=2 on 4 of 4 GPUs, with 4 rollout GPUs" in out.splitlines()


def test_a_trainer_on_whole_nodes_names_the_configs_rollout_as_the_configs_not_as_an_option(
        cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "run.yaml"  # 4 rollout GPUs from the explorer; --gpus 8 takes a whole node for the trainer
    config.write_text(CONFIG.replace("ENGINES", "4").replace("max_model_len: 40960", "max_model_len: 65536")
                      .replace("max_response_tokens: 36864", "max_response_tokens: 61440"))
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--gpus", "8")
    assert status == 0 and ("with 8 rollout GPUs, trainer and rollout on 2 nodes of 8 (the config's explorer asks for "
                            "4 rollout GPUs: a trainer on whole nodes leaves the rollout whole nodes)"
                            ) in " ".join(out.split())
    assert "--rollout-gpus 4 asked" not in " ".join(out.split())


def test_pins_beside_from_config_pin_the_plan_not_the_verdict_as_trinity_md_says(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    said = " ".join((ROOT / "docs" / "trinity.md").read_text(encoding="utf-8").split())
    assert ("**`--sp`**, **`--env`/`--no-env`**, **`--offload`/`--no-offload`** pin the plan, not the verdict, which "
            "judges the config's own SP and Offload, and Env from this shell's `PYTORCH_CUDA_ALLOC_CONF`") in said
    config = tmp_path / "run.yaml"
    config.write_text(CONFIG.replace("ENGINES", "4"))
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100", "--env", "--sp", "4")
    lines = out.splitlines()
    assert status == 0 and lines[1].startswith(
        "run.yaml runs vanilla on 4 trainer GPUs at 40960 tokens (Env off, PYTORCH_CUDA_ALLOC_CONF unset in this "
        "shell)")
    assert [line for line in lines if line.startswith("plan ")] == [
        "plan           Env + SP=4 on 4 of 4 GPUs, with 4 rollout GPUs"]
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")  # as the doc says: the verdict's Env
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100")
    assert status == 0 and out.splitlines()[1].startswith(
        "run.yaml runs Env on 4 trainer GPUs at 40960 tokens (Env on, read from this shell's PYTORCH_CUDA_ALLOC_CONF)")
