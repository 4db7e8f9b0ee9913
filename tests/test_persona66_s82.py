"""Persona66 (session s82): a lab of 4-GPU A100-40GB PCIe nodes training GRPO and DPO, full and LoRA."""

from __future__ import annotations

from pathlib import Path

import pytest


def test_a_dpo_job_without_rollout_gpus_is_not_told_to_give_them(tmp_path: Path, cli):
    # Trinity trains DPO on a dataset in mode train alone (it refuses mode both), which a job without rollout_gpus
    # gets: the note that asks for rollout_gpus names the GRPO job beside it, never the DPO one.
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: a, gpu: A100-80GB, nodes: 2, gpus_per_node: 8}\njobs:\n"
                     "  - {name: grpo, model: Qwen3-4B, max_model_len: 8192}\n"
                     "  - {name: pref, model: Qwen3-4B, max_model_len: 8192, dpo: true}\n", encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet))
    assert status == 0 and out.startswith("status: optimal; placed priority (of 2): 2")
    assert ("note: grpo: no rollout_gpus given, so no GPUs for the explorer here (--emit-dir writes mode: train); "
            "give rollout_gpus, or 0 where the explorer runs elsewhere or none does (SFT)") in " ".join(out.split())


def test_a_fleet_of_dpo_jobs_alone_without_rollout_gpus_gets_no_note(tmp_path: Path, cli):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: a, gpu: A100-80GB, nodes: 1, gpus_per_node: 8}\njobs:\n"
                     "  - {name: pref, model: Qwen3-4B, max_model_len: 8192, dpo: true}\n", encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet))
    assert status == 0 and out.startswith("status: optimal; placed priority (of 1): 1")
    assert "full, ref, DPO" in out
    assert "no rollout_gpus given" not in out


@pytest.mark.parametrize("given", ["40960MiB", "40960 MiB", "40960M", "40960mb", "40960Mi"])
def test_a_pools_gpu_memory_gb_given_in_mib_is_told_gpu_memory_mib_with_its_number(tmp_path: Path, cli, given):
    # nvidia-smi's total of an A100-PCIE-40GB, with its unit, where a pool asks GB: the field and number to give
    fleet = tmp_path / "lab.yaml"
    fleet.write_text(f"pools:\n  - {{name: lab, gpu: lab-a100, gpu_memory_gb: '{given}', nodes: 1, gpus_per_node: 4}}"
                     "\njobs:\n  - {name: j, model: Qwen3-4B, max_model_len: 8192}\n", encoding="utf-8")
    status, out, err = cli("cluster", str(fleet))
    assert (status, out) == (2, "")
    assert err == (f"solve cluster: error: {fleet}: line 2: pool lab, gpu_memory_gb: must be a whole number, got "
                   f"'{given}' (MiB, nvidia-smi's total, go in gpu_memory_mib: gpu_memory_mib: 40960)\n")


def test_a_pools_gpu_memory_gb_given_in_gb_keeps_its_words(tmp_path: Path, cli):
    fleet = tmp_path / "lab.yaml"
    fleet.write_text("pools:\n  - {name: lab, gpu: lab-a100, gpu_memory_gb: 40GB, nodes: 1, gpus_per_node: 4}"
                     "\njobs:\n  - {name: j, model: Qwen3-4B, max_model_len: 8192}\n", encoding="utf-8")
    status, _, err = cli("cluster", str(fleet))
    assert status == 2 and err.endswith("got '40GB' (GB as sold, as a number: 40 for 40 GB; nvidia-smi's total in "
                                        "MiB goes in gpu_memory_mib)\n")
