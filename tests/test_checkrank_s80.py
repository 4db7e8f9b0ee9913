"""The check command of a fragment planned from a config with LoRA of its own at ``--lora-rank 0`` (full fine-tuning
in place of the config's adapter) names ``--lora-rank 0``, so that it checks the config as the plan was made; before
(session 80, found by mutants39) it left the rank out, and the check counted the config's LoRA rank 64."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from test_review79b_s79 import CONFIG, QV

Cli = Callable[..., tuple[int, str, str]]
CHECK = "#   PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True solve --from-config CONFIG --check --gpu A100-80GB"


def test_full_fine_tuning_from_a_lora_config_is_checked_at_rank_0(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "trinity.yaml"
    config.write_text(CONFIG % QV)
    status, out, _ = cli("--from-config", str(config), "--gpu", "A100-80GB", "--lora-rank", "0", "--emit", "trinity")
    assert status == 0
    assert f"{CHECK} --lora-rank 0 --critic none\n" in out


def test_the_configs_own_rank_is_left_to_the_config(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "trinity.yaml"
    config.write_text(CONFIG % QV)
    for rank in ((), ("--lora-rank", "64")):
        status, out, _ = cli("--from-config", str(config), "--gpu", "A100-80GB", *rank, "--emit", "trinity")
        assert (status, f"{CHECK} --critic none\n" in out) == (0, True)
