"""A Trinity user's multi-stage config (persona19, s67): Trinity runs each stage with the sections the stage sets in
place of the config's own, whole (``Config.__iter__``), so a stage that sets its trainer, mode, explorer, algorithm
or buffer runs another trainer than the one the verdict, the plan and ``--write`` are for: refused, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

CONFIG = ("mode: both\nalgorithm: {algorithm_type: grpo, repeat_times: 8}\nbuffer: {batch_size: 32}\n"
          "model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
          "explorer: {rollout_model: {engine_num: 2, tensor_parallel_size: 2}}\n"
          "trainer: {ulysses_sequence_parallel_size: 1}\n")
PLAN_LINE = "plan           SP=4 on 4 of 4 GPUs, with 4 rollout GPUs\n"


@pytest.mark.parametrize(("stages", "where", "sets", "pronoun"), [
    # An SFT warm-up on every GPU with a trainer of its own (Trinity's defaults for the rest of it), then GRPO.
    (("  - {stage_name: sft, mode: train, algorithm: {algorithm_type: sft},\n"
      "     trainer: {ulysses_sequence_parallel_size: 2}}\n  - {stage_name: grpo}\n"),
     "stages[0]", "mode, algorithm and trainer", "them"),
    ("  - {stage_name: a}\n  - {stage_name: b, buffer: {batch_size: 64}}\n", "stages[1]", "buffer", "it"),
    ("  - {stage_name: a, explorer: {rollout_model: {engine_num: 4}}}\n", "stages[0]", "explorer", "it"),
])
def test_a_stage_that_replaces_what_the_plan_is_for_is_refused_and_nothing_is_written(
        cli, tmp_path: Path, stages: str, where: str, sets: str, pronoun: str):
    config = tmp_path / "trinity.yaml"
    config.write_text(CONFIG + "stages:\n" + stages, encoding="utf-8")
    patched = tmp_path / "patched.yaml"
    message = (f"solve: error: --from-config {config}: {where} sets {sets}: Trinity runs that stage with {pronoun} in "
               "place of the config's own, whole, so not the trainer rft-solver plans from the config (or not on its "
               "GPUs, or at its batch); plan each stage from a config of its own, with that stage's sections in place "
               "of the config's\n")
    assert cli("--from-config", str(config), "--gpu", "a100-80g", "--write", str(patched)) == (2, "", message)
    assert not patched.exists()
    assert cli("--from-config", str(config), "--gpu", "a100-80g", "--check") == (2, "", message)


def test_stages_that_keep_the_configs_sections_are_planned_and_written_as_the_config(cli, tmp_path: Path):
    # A stage's null trainer, like one it leaves out, keeps the config's; data_processor is not the trainer's.
    config = tmp_path / "trinity.yaml"
    config.write_text(CONFIG + "stages:\n  - {stage_name: a, trainer: null}\n  - {stage_name: b, data_processor: {}}\n",
                      encoding="utf-8")
    patched = tmp_path / "patched.yaml"
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100-80g", "--write", str(patched))
    assert (status, PLAN_LINE in out) == (0, True)
    written = yaml.safe_load(patched.read_text(encoding="utf-8"))
    assert written["trainer"] == {"ulysses_sequence_parallel_size": 4, "max_token_len_per_gpu": 16384}
    assert written["stages"] == [{"stage_name": "a", "trainer": None}, {"stage_name": "b", "data_processor": {}}]


@pytest.mark.parametrize(("stages", "problem"), [
    ("{sft: {mode: train}}", "stages must be a list of stages, got {'sft': {'mode': 'train'}}"),
    ("[sft]", "stages[0] must be a mapping"),
])
def test_stages_trinity_cannot_load_are_refused(cli, tmp_path: Path, stages: str, problem: str):
    config = tmp_path / "trinity.yaml"
    config.write_text(CONFIG + f"stages: {stages}\n", encoding="utf-8")
    assert cli("--from-config", str(config), "--gpu", "a100-80g") == (
        2, "", f"solve: error: --from-config {config}: {problem}\n")
