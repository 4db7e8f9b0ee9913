"""Trinity's LoRA keys as the released wheels read them (session 57): ``_validate_lora`` is skipped where
``model.tinker.enable`` is on (``common/config_validator.py:699`` in 0.5.2, ``:668`` in 0.5.0, ``:667`` in 0.5.1,
``:780`` in 0.6.0), so such a config is refused as one the Tinker service trains, never for its LoRA configs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import config_lines

TINKER = ("the Tinker service trains this config (model.tinker.enable or trainer.trainer_type tinker), so there is no "
          "trainer GPU to plan (rft-solver plans verl's FSDP trainer)\n")


@pytest.mark.parametrize("version", [(), ("--trinity-version", "0.5"), ("--trinity-version", "0.6")])
@pytest.mark.parametrize("lora", ["[{lora_rank: 8}, {lora_rank: 16}]", "[]", "{lora_rank: 8}"])
def test_lora_configs_under_tinker_are_refused_for_tinker_alone(cli, tmp_path: Path, version: tuple[str, ...],
                                                                lora: str):
    config = tmp_path / "trinity.yaml"
    config.write_text(f"model:\n  model_path: Qwen/Qwen3-8B\n  tinker: {{enable: true}}\n  lora_configs: {lora}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\n", encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h100", "--len", "8192", *version)
    assert (status, out, err) == (2, "", f"solve: error: --from-config {config}: {TINKER}")


CONFIG = ("model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 16384\n{lora}algorithm: {{algorithm_type: grpo}}\n"
          "cluster: {{node_num: 1, gpu_per_node: 8}}\nbuffer: {{train_batch_size: 64}}\n"
          "explorer: {{rollout_model: {{engine_num: 4}}}}\n{trainer}")
"""Qwen3-8B at 16384 tokens on 4 trainer GPUs of 8; `lora` adds keys under ``model``, `trainer` a ``trainer``."""
RANK = "trainer.trainer_config.actor_rollout_ref.model.lora_rank"
TYPED = "not a whole number: Trinity's typed config (OmegaConf's int field) refuses it"
FIX = "write the rank as a whole number"


def _rank_lines(cli, tmp_path: Path, *flags: str, lora: str = "", trainer: str = "") -> list[tuple[str, str]]:
    """The (code, words) of `--from-config`'s lines on a LoRA rank, on H100 80GB."""
    return config_lines(cli, tmp_path, CONFIG.format(lora=lora, trainer=trainer), flags, "lora-rank")[0]


def _trainer_rank(rank: str) -> str:
    return f"trainer:\n  trainer_config:\n    actor_rollout_ref:\n      model: {{lora_rank: {rank}}}\n"


@pytest.mark.parametrize(("rank", "shown"), [("true", "true"), ("false", "false"), ("8.5", "8.5"), ('"r8"', "'r8'")])
@pytest.mark.parametrize(("flags", "line"), [
    # Trinity 0.5 merges trainer_config into its typed veRLConfig as it loads the config (lora_rank: int).
    (("--trinity-version", "0.5"), ("lora-rank-not-a-number-refused", f", with Trinity 0.5: {FIX}")),
    # 0.6.0 takes it as written, then OmegaConf.structured refuses it as the trainer starts (verl before 0.8); on verl
    # 0.8 or later FROZEN_KEYS ignores it.
    ((), ("lora-rank-not-a-number", (
        f", with verl before 0.8; Trinity 0.6 on verl 0.8 or later ignores the key; {FIX}")))])
def test_a_trainer_lora_rank_that_is_no_whole_number_fails_where_typed(
        cli, tmp_path: Path, rank: str, shown: str, flags: tuple[str, ...], line: tuple[str, str]):
    code, words = line
    assert _rank_lines(cli, tmp_path, *flags, trainer=_trainer_rank(rank)) == [
        (code, f"{RANK} is {shown}, {TYPED}{words}")]


@pytest.mark.parametrize("rank", ["8", '"8"', "0"])
def test_a_whole_number_rank_is_no_problem(cli, tmp_path: Path, rank: str):
    lora = f"  lora_configs: [{{lora_rank: {rank}}}]\n"
    assert _rank_lines(cli, tmp_path, "--trinity-version", "0.5", lora=lora, trainer=_trainer_rank(rank)) == []


@pytest.mark.parametrize("flags", [(), ("--trinity-version", "0.5"), ("--trinity-version", "0.6")])
def test_a_lora_config_rank_of_true_is_refused_with_every_release(cli, tmp_path: Path, flags: tuple[str, ...]):
    # LoRAConfig.lora_rank is an int in Trinity's own Config, which every release's load_config merges the file into:
    # the config is refused, and --check fails on it.
    text = CONFIG.format(lora="  lora_configs: [{lora_rank: true}]\n", trainer="")
    assert config_lines(cli, tmp_path, text, flags, "lora-rank") == ([(
        "lora-rank-not-a-number-refused",
        f"model.lora_configs[0].lora_rank is true, {TYPED}, with every Trinity release and verl version: {FIX}")],
        True, 1)


@pytest.mark.parametrize(("flags", "codes"), [(("--trinity-version", "0.5"), ["lora-rank-not-a-number-refused"]),
                                              (("--trinity-version", "0.6"), [])])
def test_a_lora_config_replaces_the_trainer_rank_before_trinity_06_types_it(
        cli, tmp_path: Path, flags: tuple[str, ...], codes: list[str]):
    # 0.6.0's synchronize_config copies the LoRA config's rank over it (verl_legacy/verl_config.py:627 to :630)
    # before the trainer builds its typed config; Trinity 0.5 refuses it as it loads the config, before that.
    lines = _rank_lines(cli, tmp_path, *flags, lora="  lora_configs: [{lora_rank: 8}]\n", trainer=_trainer_rank("true"))
    assert [code for code, _ in lines] == codes


def test_two_lora_configs_are_refused_as_two_not_read_for_the_first_ones_rank_or_path(cli, tmp_path: Path):
    # _validate_lora refuses more than one LoRA config: that line alone, none on the first one's rank or path.
    config = tmp_path / "trinity.yaml"
    config.write_text(CONFIG.format(lora='  lora_configs: [{lora_rank: true, path: "adapter/"}, {lora_rank: 16}]\n',
                                    trainer=""), encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--json")
    current = json.loads(out)[0]["current"]
    assert (status, [code for code in current["config_problem_codes"] if "lora" in code or "slash" in code]) == (
        0, ["lora-configs-refused", "lora-counted-as-full"])
