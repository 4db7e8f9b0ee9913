"""A first-time user's walk-through (session 80, persona57: GRPO of Qwen3-8B with LoRA on attention, 4 H20s): a
config whose LoRA Trinity refuses (a ``target_modules`` list, or a comma-separated string that PEFT matches whole and
so matches no module) is planned as full fine-tuning, and ``--write`` (`PatchedConfig.lora_note`) says to fix
``model.lora_configs`` to count the LoRA run, not only to remove it; a config whose LoRA is taken keeps the note
naming removal alone. An explanation lists the settings the memory model did not estimate with "and" ("vanilla and
SP=2 not estimated"), not commas that read as one setting."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import solver
from solver.api import answer_query, config_query
from solver.tables import load_catalog
from solver.trinity import read_trinity_config

Cli = Callable[..., tuple[int, str, str]]
CATALOG = load_catalog()
CONFIG = """\
algorithm:
  algorithm_type: grpo
model:
  model_path: Qwen/Qwen3-8B
  max_model_len: 32768
  lora_configs:
    - lora_rank: 32
      lora_alpha: 64
      target_modules: {targets}
cluster:
  node_num: 1
  gpu_per_node: 4
explorer:
  rollout_model:
    engine_num: 2
    tensor_parallel_size: 1
"""
REFUSED_NOTE = ("sets LoRA (model.lora_configs), which --write keeps as written, though Trinity refuses it so (its "
                "refused line, lora-configs-refused, says why): the plan counted full fine-tuning, which holds more "
                "than a LoRA run; fix model.lora_configs and plan again to count the LoRA run, or remove it to train "
                "every parameter")
TAKEN_NOTE = ("sets LoRA (model.lora_configs), which --write keeps: the plan counted full fine-tuning, which holds "
              "more than a LoRA run; remove model.lora_configs to train every parameter")


def _write(cli: Cli, tmp_path: Path, targets: str, *flags: str) -> tuple[str, Path]:
    config, written = tmp_path / "grpo.yaml", tmp_path / "patched.yaml"
    config.write_text(CONFIG.format(targets=targets))
    status, _, err = cli("--from-config", str(config), "--gpu", "h20", *flags, "--write", str(written))
    assert status == 0, err
    assert written.exists()
    return err, config


@pytest.mark.parametrize("targets", ["[q_proj, k_proj, v_proj, o_proj]", "'q_proj,k_proj,v_proj,o_proj'"])
def test_write_over_a_refused_lora_config_says_to_fix_it(cli: Cli, tmp_path: Path, targets: str) -> None:
    err, config = _write(cli, tmp_path, targets)
    assert f"solve: note: {config} {REFUSED_NOTE}\n" in err
    assert TAKEN_NOTE not in err


def test_write_over_a_taken_lora_config_planned_as_full_fine_tuning_says_remove(cli: Cli, tmp_path: Path) -> None:
    err, config = _write(cli, tmp_path, "'.*\\.(q_proj|k_proj|v_proj|o_proj)'", "--lora-rank", "0")
    assert f"solve: note: {config} {TAKEN_NOTE}\n" in err
    assert "though Trinity refuses it" not in err
    err, _ = _write(cli, tmp_path, "'.*\\.(q_proj|k_proj|v_proj|o_proj)'")  # planned as LoRA: no note
    assert "sets LoRA" not in err


def test_the_api_note_on_a_refused_lora_config() -> None:
    text = CONFIG.format(targets="[q_proj, v_proj]")
    config = read_trinity_config(text, "grpo.yaml", {}, None)
    (answer,) = answer_query(config_query(CATALOG, config, gpu="h20"), CATALOG)
    assert answer.best is not None and answer.best.lora_rank == 0 and answer.best.gpus == 2
    patched = solver.trinity.patched_trinity_config(text, answer.best, CATALOG.model("Qwen3-8B"))
    assert patched.lora_note == ("config " + REFUSED_NOTE.replace("--write", "solver.trinity.patch_trinity_config"))


def test_the_settings_not_estimated_are_listed_with_and() -> None:
    (answer,) = solver.plan("8B", gpu="h20", max_model_len=32768, total_gpus=4, rollout_gpus=2, lora_rank=32,
                            lora_targets="q_proj,k_proj,v_proj,o_proj", explain=True)
    assert answer.best is not None and answer.best.cost == 0.5555 and round(answer.best.memory_gb, 1) == 64.7
    details = [reason.detail for reason in answer.explanation or () if reason.rule == "memory_model"]
    assert details == [(
        "the H20-96GB table for 2 GPUs measured full fine-tuning, which holds more than this LoRA run: no cell of it "
        "vouches for these settings at 32768 tokens, and none that ran out of memory speaks for LoRA; the memory model "
        "predicts at 32768 tokens: Env 105.9 GiB of 87.9 usable; vanilla and SP=2 not estimated (estimates turn Env on "
        "unless env=False)")]
