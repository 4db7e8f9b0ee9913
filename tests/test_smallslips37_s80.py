"""Session 80, smallslips37: what a team lead (tests/test_persona58_s80.py) missed. A cluster job's LoRA targets or
exclusions refused name the cluster file, as its other refusals do; the rope_theta comment of a YaRN names the
release the config is written for (none under 0.5.1, whose transformers 4 builds the RoPE without it)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import solver

Cli = Callable[..., tuple[int, str, str]]

MOE_JOB = ("pools:\n  - {name: p, gpu: h100, nodes: 1, gpus_per_node: 8}\njobs:\n"
           "  - {name: a, model: Qwen3-30B-A3B, max_model_len: 4096, lora_rank: 16, %s}\n")


def test_a_jobs_lora_targets_refused_name_the_file(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "b.yaml"
    path.write_text(MOE_JOB % "lora_targets: 'q_proj,experts'")
    status, out, err = cli("cluster", str(path), "--time-limit", "5")
    assert (status, out) == (2, "")
    assert err.startswith(f"solve cluster: error: {path}: job a: lora_targets 'q_proj,experts' matches "
                          "model.layers.N.mlp.experts of Qwen3-30B-A3B, which all-linear leaves out")
    status, out, err = cli("cluster", str(path), "--buy", "--time-limit", "5")
    assert (status, out) == (2, "") and err.startswith(f"solve cluster: error: {path}: job a: lora_targets ")


def test_a_jobs_lora_exclusions_refused_name_the_file_in_the_command_and_the_api(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "b.yaml"
    path.write_text(MOE_JOB % "lora_exclude_modules: '.*'")
    refusal = ("job a: lora_exclude_modules '.*', on Qwen3-30B-A3B, leaves out every module all-linear matches "
               "(\"All modules were excluded\"): exclude fewer, or remove it")
    assert cli("cluster", str(path), "--time-limit", "5") == (2, "", f"solve cluster: error: {path}: {refusal}\n")
    with pytest.raises(solver.QueryError) as refused:
        solver.place(path, time_limit_s=5)
    assert str(refused.value) == f"{path}: {refusal}"
    with pytest.raises(solver.QueryError) as refused:  # a fleet built in code has no file to name
        solver.place(solver.load_fleet(path), time_limit_s=5)
    assert str(refused.value) == refusal


THETA = "    rope_theta: 1000000\n"


@pytest.mark.parametrize(("release", "comment"), [
    ("0.5.2", ("    # Qwen3-8B's own; Trinity 0.5.2's trainer on transformers 5 fails to build the model on a\n"
              "    # rope_scaling without it (it finds no base there)\n")),
    ("0.5.0", ("    # Qwen3-8B's own; Trinity 0.5.0's trainer on transformers 5 fails to build the model on a\n"
              "    # rope_scaling without it (it finds no base there)\n")),
    ("0.5.1", ""),  # inline, below
    ("0.6", ("    # Qwen3-8B's own; Trinity 0.6's trainer on verl before 0.8 fails to build the model on a\n"
            "    # rope_scaling without it (transformers 5 finds no base)\n")),
])
def test_the_rope_theta_comment_names_the_release_written_for(cli: Cli, release: str, comment: str) -> None:
    status, fragment, _ = cli("--model", "Qwen3-8B", "--gpu", "h100", "--len", "64k", "--gpus", "8",
                              "--trinity-version", release, "--emit", "trinity")
    assert status == 0
    theta = THETA if comment else THETA.replace("\n", "  # Qwen3-8B's own\n")
    assert "    original_max_position_embeddings: 40960\n" + comment + theta in fragment
    assert "0.6's trainer" not in fragment or release == "0.6"
