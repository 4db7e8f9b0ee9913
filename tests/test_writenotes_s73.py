"""`--write`'s notes on a role's token budget that the config gives as an interpolation of another's (Trinity's own
examples give the ref's `log_prob_max_token_len_per_gpu` as `${...actor.ppo_max_token_len_per_gpu}`): the patch keeps
the interpolation, so the notes say that it stays, not that the patch set it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

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
