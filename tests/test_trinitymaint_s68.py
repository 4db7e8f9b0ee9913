"""A Trinity-RFT maintainer's review of what rft-solver writes into Trinity configs, against the released wheels
(review-s68-trinitymaint.md): each test pins a line that told a release's user less than Trinity does."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

LOWERED = ("trainer.max_token_len_per_gpu 40000 is below Trinity's default ceil(2 x 32768 / 1) = 65536, which the "
           "tables measured: the verdict is at 40000 tokens per GPU (each step takes more micro-batches)")
"""The `lowered-token-budget` line on a trainer budget of 40000 at SP 1 and 32768 tokens, before the release's words."""

CONFIG = ("algorithm: {algorithm_type: grpo}\nmodel: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\n"
          "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 4}}\n"
          "trainer: {max_token_len_per_gpu: 40000}\n")
"""GRPO for Qwen3-8B at 32768 tokens on 4 of 8 GPUs, SP 1, its trainer's token budget lowered to 40000 (which holds a
sequence: Trinity 0.5.1 and later keep it; 0.5.0's `_adjust_token_len_if_needed` asks for twice the length)."""


@pytest.mark.parametrize(("release", "words"), [
    ((), "; Trinity 0.5.0 raises it back to the default: use 0.5.1 or later"),
    (("--trinity-version", "0.6"), ""),
])
def test_a_lowered_budgets_verdict_line_says_that_trinity_050_raises_it(
        cli: Callable[..., tuple[int, str, str]], tmp_path: Path, release: tuple[str, ...], words: str):
    # Trinity 0.5.0 raises any budget below ceil(2L/SP) back to it (verl_config.py:466 in 0.5.0, run on the wheel):
    # the verdict at 40000 holds for 0.5.1 and later alone, as the plan's token budget line already said.
    path = tmp_path / "trinity.yaml"
    path.write_text(CONFIG, encoding="utf-8")
    status, out, err = cli("--from-config", str(path), "--gpu", "a100-80gb", "--json", *release)
    current = json.loads(out)[0]["current"]
    assert (status, err, current["max_token_len_per_gpu"]) == (0, "", 40000)
    assert list(zip(current["config_problem_codes"], current["config_problems"], strict=True)) == [
        ("lowered-token-budget", LOWERED + words)]


@pytest.mark.parametrize("release", ["0.5", "0.5.0", "0.5.1"])
def test_with_trinity_05_the_verdict_counts_a_lowered_budget_as_050_raises_it(
        cli: Callable[..., tuple[int, str, str]], tmp_path: Path, release: str):
    # raise05: 0.5.0's _adjust_token_len_if_needed raises any budget below ceil(2L/SP) (required_min = 2L,
    # common/verl_config.py:466-469), 40000 too, though it holds a sequence: a 0.5 verdict (any patch) bounds memory
    # from above, so it is at the default, not at the 40000 that 0.5.1 and 0.5.2 keep (so vanilla no longer fits)
    path = tmp_path / "trinity.yaml"
    path.write_text(CONFIG, encoding="utf-8")
    status, out, err = cli("--from-config", str(path), "--gpu", "a100-80gb", "--json", "--trinity-version", release)
    current = json.loads(out)[0]["current"]
    assert (status, err, current["max_token_len_per_gpu"], current["trains"]) == (0, "", None, False)
    assert list(zip(current["config_problem_codes"], current["config_problems"], strict=True)) == [(
        "token-budget-below-verdict", LOWERED.replace(
            "the verdict is at 40000 tokens per GPU (each step takes more micro-batches)",
            "Trinity 0.5.0 raises it to 65536, the verdict's budget (any budget below twice the length over its "
            "role's SP), as the verdict counts; 0.5.1 and 0.5.2 keep it, fewer tokens per GPU than the verdict "
            "assumes (so it is cautious; each step takes more micro-batches)"))]


OFFLOAD_PLAN = ("--model", "4B", "--gpu", "a100-80gb", "--gpus", "6", "--maximize", "len", "--rollout-gpus", "2",
                "--emit", "trinity")
"""Qwen3-4B's longest length on 4 A100s beside 2 rollout GPUs: Env + Offload + SP=4 (documented)."""

FOR_05 = ["  # written for Trinity 0.5 (--trinity-version 0.5), which refuses these flags under trainer itself;",
          "  # Trinity 0.6 on verl before 0.8 replaces the roles' offload flags with trainer.param_offload,",
          "  # optimizer_offload and offload_policy (false where unset): there, set those to true too",
          "  trainer_config:"]
"""The comment above a 0.5 fragment's ``trainer.trainer_config``, which holds Offload's flags alone."""


@pytest.mark.parametrize("release", [("--trinity-version", "0.5"), ("--trinity-version", "0.6"), ()])
def test_a_05_fragments_offload_flags_say_what_trinity_06_takes_instead(
        cli: Callable[..., tuple[int, str, str]], release: tuple[str, ...]):
    # Loaded by Trinity 0.6.0 on verl 0.7.1, the 0.5 fragment keeps trainer.param_offload and the rest false, and
    # synchronize_config copies them over the roles' (verl_legacy/verl_config.py:646 to :648, run on the wheel):
    # Offload is off. A fragment with the flags under trainer too needs no such comment.
    status, out, _ = cli(*OFFLOAD_PLAN, *release)
    lines = out.splitlines()
    start = lines.index("  trainer_config:")
    assert status == 0
    assert (lines[start - 3:start + 1] == FOR_05) == (release == ("--trinity-version", "0.5"))
    assert ("  param_offload: true" in lines) == ("0.5" not in release)  # the flags under trainer itself
