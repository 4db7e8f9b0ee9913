"""LoRA and the reference model where the run builds none (session 73): the explanation's host memory words
(``--explain``), a cluster job's written Trinity config (``solve cluster --emit-dir``: ``model.lora_configs``) and the
cluster's text tables, which mark a LoRA job and one without a reference model."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest
from test_jsonapply_s63 import _apply_keys, _flat, _json_answer

from solver.api import place, placement_configs, placement_settings
from solver.trinity import read_trinity_config

PLANNER = ("--no-estimate", "--explain", "--json")


def _explanation(cli: Callable[..., tuple[int, str, str]], status: int, *argv: str) -> list[tuple[str, str]]:
    """The planner's explanation (rule, detail) for `argv`, which exits with `status` (1: no plan) and says nothing on
    stderr."""
    code, out, err = cli(*argv, *PLANNER)
    assert (code, err) == (status, "")
    [answer] = json.loads(out)
    return [(reason["rule"], reason["detail"]) for reason in answer["explanation"]]


def test_a_lora_run_s_host_memory_limit_names_no_reference_model(cli: Callable[..., tuple[int, str, str]]) -> None:
    # LoRA builds no reference model (Trinity takes the actor without its adapter): the load alone is too much for
    # 16 GiB, and the words leave out the reference model's pinned shards it said were there.
    reasons = _explanation(cli, 1, "--gpu", "h20", "--model", "8B", "--len", "4096", "--gpus", "8", "--exact", "--sp",
                           "8", "--no-env", "--no-offload", "--host-ram", "16", "--lora-rank", "16")
    assert [detail for rule, detail in reasons if rule in ("limit", "host_ram")] == [
        ("no plan passes this rule: host memory (--host-ram 16 GiB is too little for Offload, or for the model while "
         "it loads; no reference model)"),
        ("loading the model needs more host memory (verl reads it in fp32 before FSDP shards it; no reference model) "
         "than --host-ram 16 GiB (on 8 GPUs: 245.5 GiB per node)")]


def test_offload_s_host_memory_reason_without_a_reference_model_names_the_actor_alone(
        cli: Callable[..., tuple[int, str, str]]) -> None:
    # Without a reference model Offload still needs more than 40 GiB on 1 and 2 GPUs (30.0 GiB loads without it).
    reasons = _explanation(cli, 0, "--gpu", "A100-80GB", "--model", "4B", "--maximize", "len", "--gpus", "2",
                           "--host-ram", "40", "--no-reference")
    offload = ("Offload needs more host memory (the actor's states, or the model while it loads beside the actor's "
               "pinned shards, whichever is more; no reference model) than --host-ram 40 GiB (on {}: 72.3 GiB per "
               "node)")
    assert [detail for rule, detail in reasons if rule == "host_ram"] == [offload.format(on) for on in ("1 GPU",
                                                                                                        "2 GPUs")]


FLEET = """pools:
  - {name: a, gpu: H100, nodes: 1, gpus_per_node: 8, host_ram_gb: 160}
jobs:
  - {name: lora, model: Qwen3-8B, max_model_len: 8192, lora_rank: 16, rollout_gpus: 2}
  - {name: full, model: Qwen3-4B, max_model_len: 8192, reference_model: false}
"""
LORA_KEYS = """model:
  max_model_len: 8192
  # a new adapter on all-linear (Trinity's default target_modules), as planned; with LoRA Trinity
  # builds no reference model
  lora_configs: [{lora_rank: 16}]
cluster:
"""


@pytest.mark.parametrize("version", ["0.5", "0.6"])
def test_a_lora_job_s_config_turns_lora_on_at_its_rank(tmp_path: Path, cli: Callable[..., tuple[int, str, str]],
                                                       version: str) -> None:
    # Both releases read model.lora_configs (0.5 and 0.6 on verl before 0.8 fill verl's lora_rank from it; 0.6 on
    # verl 0.8 or later reads no other LoRA key), and with it build no reference model: the written config, once
    # merged, is read as the job was planned, and its check command (--lora-rank 16 --no-reference) passes.
    fleet = tmp_path / "fleet.yaml"  # 0.5 may be 0.5.0 or 0.5.1, which build the full job's reference model (s91)
    fleet.write_text(FLEET.replace(", reference_model: false", "") if version == "0.5" else FLEET, encoding="utf-8")
    code, _, _ = cli("cluster", str(fleet), "--emit-dir", str(tmp_path / "out"), "--trinity-version", version)
    lora, full = ((tmp_path / "out" / f"{job}.yaml").read_text(encoding="utf-8") for job in ("lora", "full"))
    assert code == 0 and LORA_KEYS in lora
    assert "model:\n  max_model_len: 8192\nmode: train" in full and "lora" not in full  # full fine-tuning
    merged = tmp_path / "merged.yaml"
    merged.write_text("algorithm: {algorithm_type: grpo}\n" + lora.replace(
        "\nmodel:\n", "\nmodel:\n  model_path: Qwen/Qwen3-8B\n", 1), encoding="utf-8")
    read = read_trinity_config(merged.read_text(encoding="utf-8"), "merged.yaml", {}, version)
    assert (read.lora_rank, read.reference_model) == (16, False)
    [check] = [line.removeprefix("#   ") for line in lora.splitlines() if "--check" in line]
    assert check.endswith(f"--host-ram 160 --no-reference --lora-rank 16 --critic none --trinity-version {version}")
    argv = shlex.split(check.replace("CONFIG", str(merged)))[2:]  # after the allocator variable and "solve"
    assert cli(*argv)[0] == 0


def test_an_offloaded_lora_job_s_config_writes_no_reference_model_s_flags(tmp_path: Path) -> None:
    # Qwen3-14B at 16384 tokens on one A100 trains with Offload alone: the actor's flags are written, the reference
    # model's not (the job builds none); the settings hold the LoRA config as data.
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: a, gpu: A100-80GB, nodes: 1, gpus_per_node: 1, host_ram_gb: 512}\n"
                     "jobs:\n  - {name: lora, model: Qwen3-14B, max_model_len: 16384, lora_rank: 16}\n",
                     encoding="utf-8")
    result = place(fleet, token_budget="auto", trinity_version="0.5")
    assert result.placements[0].plan.setting.label == "Env + Offload"
    [config] = placement_configs(result, fleet, version="0.5").values()
    assert config.endswith("  trainer_config:\n    actor_rollout_ref:\n      actor:\n        fsdp_config:\n"
                           "          param_offload: true\n          optimizer_offload: true\n"
                           "          offload_policy: true\n")
    [settings] = placement_settings(result, fleet, version="0.5").values()
    assert settings.config["model"]["lora_configs"] == [{"lora_rank": 16}]
    assert "ref" not in settings.config["trainer"]["trainer_config"]["actor_rollout_ref"]


def test_the_cluster_table_marks_what_each_job_trains_where_one_is_lora_or_without_a_reference_model(
        tmp_path: Path, cli: Callable[..., tuple[int, str, str]]) -> None:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET, encoding="utf-8")
    code, out, err = cli("cluster", str(fleet))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    # The header, the rows and the note, their cells' padding shortened to one space. The LoRA job's host need is its 3
    # ranks each loading the untied Qwen3-8B and its adapter in fp32 (no release named, s84): 3 x 30.7 GiB.
    assert [" ".join(lines[at].split()) for at in (3, 5, 6, 8, 9)] == [
        ("┃ nodes ┃ GPUs ┃ job ┃ trainer ┃ rollout ┃ plan ┃ training ┃ max_model_len ┃ cost ┃ evidence ┃ host "
         "GiB/node ┃"),
        "│ 0 │ 0-4 │ lora │ 3 │ 2 │ Env │ LoRA 16, no ref │ 8192 │ 0.3367 │ estimated │ 92.1 │",
        "│ 0 │ 5-7 │ full │ 3 │ 0 │ Env │ full, no ref │ 8192 │ 0.3367 │ estimated │ 45.0 │",
        ("training: full fine-tuning, or LoRA of the job's lora_rank; ref or no ref: whether its run builds a "
         "reference model (the"),
        "job's reference_model; absent, none with LoRA), whose pinned shards the host memory need counts"]
    assert len(lines[3]) == 121  # within the 160 columns of a pipe
    # A job that builds its reference model beside one that does not says so; full fine-tuning with one alone adds
    # no column. (A LoRA job with one, shown "LoRA 16, ref" before session 74, is refused: no release builds one.) On
    # a node of 200 GiB: the full 8B's 3 ranks each loading it with its reference model's shards need 133.0 (s84),
    # beside the 4B's 45.0 (60.8 with its reference model).
    roomier = FLEET.replace("host_ram_gb: 160", "host_ram_gb: 200")
    fleet.write_text(roomier.replace("lora_rank: 16, ", ""), encoding="utf-8")
    rows = [line for line in cli("cluster", str(fleet))[1].splitlines() if line.startswith("│")]
    assert [row.split("│")[7].strip() for row in rows] == ["full, ref", "full, no ref"]
    fleet.write_text(roomier.replace("lora_rank: 16, ", "").replace(", reference_model: false", ""), encoding="utf-8")
    code, out, _ = cli("cluster", str(fleet))
    assert code == 0 and "┃ training" not in out and "│ Env  │          8192 │" in out


LORA_PLAN = ("--model", "14B", "--gpu", "a100", "--len", "16384", "--gpus", "1", "--lora-rank", "16", "--token-budget",
             "auto")
"""A LoRA plan with Offload (Env + Offload on one A100), planned without a config."""


def test_a_lora_plan_s_apply_lines_and_fragment_turn_lora_on_and_offload_no_reference_model(
        cli: Callable[..., tuple[int, str, str]]) -> None:
    code, text, _ = cli(*LORA_PLAN)
    config = _json_answer(cli, *LORA_PLAN)["apply"]["config"]
    assert code == 0 and config["model"]["lora_configs"] == [{"lora_rank": 16}]
    assert list(config["trainer"]["trainer_config"]["actor_rollout_ref"]) == ["actor"]
    assert _apply_keys(text) == _flat(config)
    assert ("model.lora_configs: [{lora_rank: 16}]\n" in text
            and "trainer.trainer_config.actor_rollout_ref.actor.fsdp_config: {param_offload: true, optimizer_offload: "
                "true, offload_policy: true}\n" in text)


def test_a_config_s_own_lora_config_is_not_written_over(tmp_path: Path,
                                                        cli: Callable[..., tuple[int, str, str]]) -> None:
    # Planned from a config with LoRA of its own (its lora_alpha and rank): neither the fragment nor the apply lines
    # write model.lora_configs, which would replace the config's list.
    config = tmp_path / "lora.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\ncluster: {node_num: 1, gpu_per_node: 2}\n"
                      "explorer: {rollout_model: {engine_num: 1, tensor_parallel_size: 1}}\n"
                      "model: {model_path: Qwen/Qwen3-8B, max_model_len: 8192, "
                      "lora_configs: [{lora_rank: 32, lora_alpha: 64}]}\n", encoding="utf-8")
    code, text, _ = cli("--from-config", str(config), "--gpu", "h100")
    fragment = cli("--from-config", str(config), "--gpu", "h100", "--emit", "trinity")[1]
    assert code == 0 and "LoRA rank 32" in text
    assert "lora_configs" not in fragment and "lora_configs" not in text.split("\napply ")[1]
