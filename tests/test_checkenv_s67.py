"""The command that checks a config as its plan was made sets the environment variables the config's keys read
(``${oc.env:NGPUS,8}`` with NGPUS=12 in the planning shell): without them, the check reads another trainer count
and judges another plan (s67, the Trinity user's review)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_writecheck_s60 import run_as_shell, written_check

from solver.api import plan
from solver.tables import QueryError, load_catalog
from solver.trinity.fragment import check_command

CONFIG = ("mode: both\nalgorithm: {algorithm_type: grpo, repeat_times: 8}\nbuffer: {batch_size: 32}\n"
          "model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 32768\n"
          "cluster:\n  node_num: 1\n  gpu_per_node: ${oc.decode:${oc.env:NGPUS,8}}\n"
          "explorer:\n  rollout_model: {engine_num: 2, tensor_parallel_size: 2}\n"
          "trainer:\n  ulysses_sequence_parallel_size: 1\n")
"""Qwen3-8B at 32768 tokens, its GPUs per node from NGPUS (8 by default), 4 of them the rollout's."""


def test_the_written_check_command_sets_the_shells_gpu_count_and_judges_the_plan(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    config, patched = tmp_path / "trinity.yaml", tmp_path / "patched.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    monkeypatch.setenv("NGPUS", "12")  # 12 - 4 rollout GPUs: 8 trainer GPUs
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100-80g", "--write", str(patched))
    assert (status, "plan           Env + SP=2 on 8 of 8 GPUs, with 4 rollout GPUs\n" in out) == (0, True)
    command = written_check(patched.read_text(encoding="utf-8"))
    assert command == (f"NGPUS=12 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True solve --from-config {patched} "
                       "--check --gpu A100-80GB")
    monkeypatch.delenv("NGPUS")  # the check's shell: its command sets it
    status, out, err = run_as_shell(cli, monkeypatch, command)
    assert (status, err) == (0, "")
    assert out.splitlines()[1].startswith(f"{patched.name} runs Env + SP=2 on 8 trainer GPUs at 32768 tokens (Env on, "
                                          "read from this shell's PYTORCH_CUDA_ALLOC_CONF): it trains")
    # Without NGPUS, as before: the check reads 8 GPUs per node, 4 trainer GPUs, and judges another plan.
    monkeypatch.delenv("NGPUS")
    status, out, _ = run_as_shell(cli, monkeypatch, command.removeprefix("NGPUS=12 "))
    assert (status, "on 4 trainer GPUs" in out.splitlines()[1]) == (1, True)


def test_a_variable_left_unset_is_not_carried_and_the_emitted_header_carries_a_set_one(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    config = tmp_path / "trinity.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    monkeypatch.delenv("NGPUS", raising=False)  # the default, 8: the check's shell takes it too
    header = "# To check your config once these keys are in it (CONFIG: its file), as this plan was made:\n#   "
    _, out, _ = cli("--from-config", str(config), "--gpu", "a100-80g", "--emit", "trinity")
    # A fragment has no algorithm_type: its check leaves out the critic of Trinity's default, PPO, as the plan did.
    assert f"{header}solve --from-config CONFIG --check --gpu A100-80GB --critic none\n" in out
    monkeypatch.setenv("NGPUS", "12")
    _, out, _ = cli("--from-config", str(config), "--gpu", "a100-80g", "--emit", "trinity")
    assert (f"{header}NGPUS=12 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True solve --from-config CONFIG --check "
            "--gpu A100-80GB --critic none\n") in out


_PLAN = plan("4B", max_model_len=8192, gpu="a100")[0].plans[0]
"""A plan that needs no environment variable of its own (no Env, within vLLM's length)."""


@pytest.mark.parametrize(("environment", "words"), [
    ((("NGPUS", "12"),), "NGPUS=12 solve"),
    ((("LEN", "32_768"), ("B", " 8")), "LEN=32_768 B=' 8' solve"),  # quoted as the shell reads them
    ((("MY-VAR", "1"), ("NGPUS", "12")), "env MY-VAR=1 NGPUS=12 solve"),  # no name a shell's assignment takes
])
def test_the_check_command_sets_the_variables_as_a_shell_reads_them(
        environment: tuple[tuple[str, str], ...], words: str):
    assert check_command(_PLAN, load_catalog().model("4B"), ("--gpu", "A100-80GB"), None, None,
                         environment=environment, critic_trained=False) == (  # GRPO's config: no --critic none
        f"{words} --from-config CONFIG --check --gpu A100-80GB")


def test_a_variable_no_comment_line_can_hold_is_refused_in_one_line():
    with pytest.raises(QueryError, match=r"^the config reads the environment variable 'N\\nGPUS', whose name the "
                                         "command that checks it as it was planned cannot hold on a comment's line$"):
        check_command(_PLAN, load_catalog().model("4B"), ("--gpu", "A100-80GB"), None, None,
                      environment=(("N\nGPUS", "12"),))
