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
    # a dense model's: on a mixture of experts under transformers 5 PEFT adapts all-linear's routed experts whatever
    # exclude_modules says, so '.*' is taken there (fragcheck4)
    path.write_text((MOE_JOB % "lora_exclude_modules: '.*'").replace("Qwen3-30B-A3B", "Qwen3-8B"))
    refusal = ("job a: lora_exclude_modules '.*', on Qwen3-8B, leaves out every module all-linear matches "
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


DPO_14B = ("--model", "14B", "--len", "16k", "--minimize", "gpus", "--dpo", "--gpu", "h20")


def _row(out: str, label: str) -> str:
    """A summary row, its wrapped lines joined."""
    lines = out.splitlines()
    start = next(index for index, line in enumerate(lines) if line.startswith(f"{label:<15}"))
    rest = [line.strip() for line in lines[start + 1:]]
    more = rest[:next(index for index, line in enumerate(lines[start + 1:]) if not line.startswith(" " * 15))]
    return " ".join([lines[start][15:], *more])


def test_the_host_memory_row_says_what_the_other_release_needs_and_why(cli: Cli) -> None:
    status, out, _ = cli(*DPO_14B, "--trinity-version", "0.5.2")
    assert status == 0
    assert _row(out, "host memory") == (
        "311.3 GiB per node for Offload; not checked: --host-ram not given; Trinity 0.6 needs 351.6 (the reference "
        "model in fp32 where 0.5's is bf16)")  # one GPU: its one rank loads the model, its blocks are whole (s85)
    status, out, _ = cli(*DPO_14B, "--trinity-version", "0.6")
    assert status == 0
    assert _row(out, "host memory") == (
        "351.6 GiB per node for Offload; not checked: --host-ram not given; Trinity 0.5 needs 311.3 (the reference "
        "model in bf16 where 0.6's is fp32)")
    status, out, _ = cli(*DPO_14B)  # no release named: none, but the hint that 0.5 counts less (s87)
    unnamed = ("351.6 GiB per node for Offload; not checked: --host-ram not given; --trinity-version counts a "
               "release's own, less where verl 0.7 builds the reference model in bf16 and places the pinned "
               "blocks (0.5)")
    assert (status, _row(out, "host memory")) == (0, unnamed)
    status, out, _ = cli(*DPO_14B, "--trinity-version", "0.5.2", "--emit", "trinity")  # a config for one release
    assert status == 0 and "Trinity 0.6 needs" not in out and "# host memory: 311.3 GiB per node for Offload" in out


def test_the_other_release_names_the_experts_and_drops_the_reference_where_none(cli: Cli) -> None:
    status, out, _ = cli("--model", "30B-A3B", "--gpu", "h100", "--gpus", "6", "--exact", "--offload", "--len", "8192",
                         "--host-ram", "700", "--trinity-version", "0.5.1")
    assert status == 0
    assert _row(out, "host memory") == (
        "517.3 GiB per node for Offload, within --host-ram 700 GiB; Trinity 0.6 needs 899.0 (the reference model in "
        "fp32 where 0.5's is bf16; each pinned block by rows where 0.5's verl 0.7 places it; the routed experts as "
        "transformers 5 holds them)")
    # On 0.5.1, which loads Qwen3-8B on rank 0 alone as 0.6 does on an H100, the pinned blocks alone set 0.5 apart
    # where neither builds a reference model: with LoRA (0.5.1 builds one whatever the algorithm without it, so
    # refuses --no-reference, s91).
    flags = ("--model", "8B", "--gpu", "h100", "--exact", "--offload", "--len", "16k", "--lora-rank", "16",
             "--trinity-version", "0.5.1")
    status, out, _ = cli(*flags, "--gpus", "6")
    assert status == 0
    assert _row(out, "host memory") == (
        "65.6 GiB per node for Offload (no reference model; at start-up, rank 0 loading the model; 35.5 while "
        "training); not checked: --host-ram not given; Trinity 0.6 needs 72.4 (each pinned block by rows where 0.5's "
        "verl 0.7 places it)")
    status, out, _ = cli(*flags, "--gpus", "8")  # 8 GPUs place every block alike: the same figure, no clause
    assert status == 0
    assert _row(out, "host memory") == (
        "71.5 GiB per node for Offload (no reference model; at start-up, rank 0 loading the model; 41.4 while "
        "training); not checked: --host-ram not given")


MOE_LORA = ("--model", "Qwen3-30B-A3B", "--gpu", "h100", "--len", "16k", "--lora-rank", "16")
ON_4 = ("run it on transformers 4 (Trinity 0.5.2's vllm extra installs it: vLLM 0.17.0 to 0.19.0 require transformers "
        "below 5), train Qwen3-30B-A3B without LoRA")


@pytest.mark.parametrize("release", ["0.5.2", "0.6"])
def test_solve_gives_the_lora_moe_caution_as_a_row_once_and_the_comment_points_to_it(cli: Cli, release: str) -> None:
    status, out, _ = cli(*MOE_LORA, "--trinity-version", release)
    assert status == 0
    caution = _row(out, "caution")
    assert caution.startswith("LoRA on Qwen3-30B-A3B, a mixture of experts: with transformers 5 (Trinity ")
    assert caution.endswith("or patch _save_lora to write target_parameters as a list")
    assert (ON_4 in caution) == (release == "0.5.2")  # transformers 4 named as the way out under 0.5 alone
    assert " ".join(out.split()).count("PEFT makes the adapter's target_parameters a set") == 1
    assert ("# a new adapter on all-linear (Trinity's default target_modules), as planned; with LoRA Trinity builds no "
            "reference model; but see the caution above on how Trinity saves its config:\n"
            "model.lora_configs: [{lora_rank: 16}]\n") in out
    status, out, _ = cli(*MOE_LORA, "--trinity-version", release, "--emit", "trinity")  # the config says it whole
    assert status == 0 and "see the caution above" not in out and (ON_4 in " ".join(out.replace("#", "").split())) == (
        release == "0.5.2")
