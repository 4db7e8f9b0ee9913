"""A newcomer's review with small cards (review-s73-persona36): `--write`'s notes on a role's token budget that the
config gives as an interpolation of another's (Trinity's own examples give the ref's `log_prob_max_token_len_per_gpu`
as `${...actor.ppo_max_token_len_per_gpu}`), which the patch keeps, say that it stays, not that the patch set it;
`solve memory --help` says what `--gpu-interconnect` does there; a model size typed without its decimal point after a
zero (`06B`) gets a guess."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from option_reference import option_reference

from solver.trinity import ROLE_KEYS_IGNORED

ACTOR = "trainer.trainer_config.actor_rollout_ref.actor.ppo_max_token_len_per_gpu"
REF = "trainer.trainer_config.actor_rollout_ref.ref.log_prob_max_token_len_per_gpu"
CONFIG = ("model:\n  model_path: Qwen/Qwen3-0.6B\n  max_model_len: 8192\ncluster:\n  node_num: 1\n  gpu_per_node: 2\n"
          "explorer:\n  rollout_model:\n    engine_num: 1\ntrainer:\n  trainer_config:\n    actor_rollout_ref:\n"
          "      actor:\n        ppo_max_token_len_per_gpu: 32768\n      ref:\n"
          f"        log_prob_max_token_len_per_gpu: ${{{ACTOR}}}\n")


def test_write_names_an_interpolated_role_budget_once_as_kept_not_as_lowered(
        cli: Callable[..., tuple[int, str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config, patched = tmp_path / "trinity.yaml", tmp_path / "patched.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    status, _, err = cli("--from-config", str(config), "--gpu", "a100", "--write", str(patched))
    assert status == 0
    assert (f"solve: note: {patched}: {ACTOR} 32768 lowered to the plan's 16384: set by hand, it overrides "
            f"trainer.max_token_len_per_gpu for its role ({ROLE_KEYS_IGNORED})\n") in err
    kept = (f"solve: note: {patched}: {REF} stays ${{{ACTOR}}}, which gives 16384 in this environment: the plan "
            "holds for that value")
    assert [line for line in err.splitlines() if f": {REF} " in line] == [kept]
    assert f"        log_prob_max_token_len_per_gpu: ${{{ACTOR}}}\n" in patched.read_text(encoding="utf-8")


def test_memory_help_says_what_its_interconnect_does_there(cli: Callable[..., tuple[int, str, str]]) -> None:
    # solve memory shows no cost and cautions no unstated interconnect (its estimate is the same over any link):
    # --gpu-interconnect there gives the cautions alone, and its help says so; the planner's cautions an SP plan.
    # docs/cli.md's option reference says each in full, the planner's cost too (session 93).
    status, out, _ = cli("memory", "--help")
    memory_help = " ".join(out.split())
    assert status == 0 and ("--gpu-interconnect LINK with --gpu-memory: the link between a node's GPUs, nvlink, "
                            "infinity-fabric or pcie (default: not stated, no caution)") in memory_help
    status, out, _ = cli("--help")
    assert status == 0 and ("--gpu-interconnect LINK with --gpu-memory: the link between a node's GPUs, nvlink, "
                            "infinity-fabric or pcie (default: not stated, an SP plan cautioned)") in " ".join(
                                out.split())
    assert ("the cost weighs SP sp_pcie_factor times, and an SP plan is cautioned); default: not stated, SP weighed as "
            "on NVLink, and an SP plan cautioned to state it. solve memory, whose estimate is the same over any link, "
            "cautions an SP setting over pcie, and one not stated not at all.") in option_reference()
    status, out, _ = cli("memory", "--model", "0.6B", "--gpu", "my3090", "--gpu-memory", "24576MiB", "--gpus", "2",
                         "--len", "8k", "--sp", "2", "--env", "--json")
    assert status == 0 and '"caution_codes": []' in out


@pytest.mark.parametrize(("model", "guess"), [
    ("06B", " (did you mean Qwen3-0.6B?)"), ("Qwen3-06B", " (did you mean Qwen3-0.6B?)"),
    ("qwen3-06b-base", " (did you mean Qwen3-0.6B-Base?)"), ("17B", ""), ("Qwen3-017B", ""),
])
def test_a_size_written_without_its_decimal_point_after_a_zero_is_guessed(
        cli: Callable[..., tuple[int, str, str]], model: str, guess: str) -> None:
    # 06B can only be 0.6B (no size starts with a zero); 17B may be another model's size: no guess, as 5B is not 8B.
    status, out, err = cli("--model", model, "--gpu", "4090", "--gpus", "2", "--len", "8k")
    assert (status, out, err.count("\n")) == (2, "", 1)
    assert err.startswith(f"solve: error: unknown model {model!r}{guess}; accepted: Qwen3-0.6B/1.7B/8B/14B(-Base), ")
