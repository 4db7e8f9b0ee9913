"""Persona66 (session s82): a lab of 4-GPU A100-40GB PCIe nodes training GRPO and DPO, full and LoRA."""

from __future__ import annotations

from pathlib import Path


def test_a_dpo_job_without_rollout_gpus_is_not_told_to_give_them(tmp_path: Path, cli):
    # Trinity trains DPO in mode train alone (it refuses mode both), which a job without rollout_gpus gets: the note
    # that asks for rollout_gpus names the GRPO job beside it, never the DPO one.
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: a, gpu: A100-80GB, nodes: 2, gpus_per_node: 8}\njobs:\n"
                     "  - {name: grpo, model: Qwen3-4B, max_model_len: 8192}\n"
                     "  - {name: pref, model: Qwen3-4B, max_model_len: 8192, dpo: true}\n", encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet))
    assert status == 0 and out.startswith("status: optimal; placed priority (of 2): 2")
    assert ("\nnote: grpo: no rollout_gpus given, so no GPUs for the explorer here (--emit-dir writes mode: train); "
            "give rollout_gpus, or 0 where the explorer runs elsewhere\n") in out


def test_a_fleet_of_dpo_jobs_alone_without_rollout_gpus_gets_no_note(tmp_path: Path, cli):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: a, gpu: A100-80GB, nodes: 1, gpus_per_node: 8}\njobs:\n"
                     "  - {name: pref, model: Qwen3-4B, max_model_len: 8192, dpo: true}\n", encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet))
    assert status == 0 and out.startswith("status: optimal; placed priority (of 1): 1")
    assert "full, ref, DPO" in out
    assert "no rollout_gpus given" not in out
