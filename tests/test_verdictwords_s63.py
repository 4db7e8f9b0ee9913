"""Words a user read three times (s63, persona9's review): the `--from-config` verdict in sentences, not clauses
joined by "and"; a best plan that costs more than a config's own Env-off settings explained (why it ranks first,
what its cost adds); `--required` giving the job a name differing only in case meant; a mapping given for a list in
a cluster file in words, not Python's repr; `solve memory`'s parameters as the plan's caution gives them; a length in
millions refused, naming its k form."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_clusterbuy_s60 import FOUR_JOBS, fleet_file

PERSONA9 = """\
algorithm: {algorithm_type: grpo}
model:
  model_path: Qwen/Qwen3-14B
  max_prompt_tokens: 4096
  max_response_tokens: 61440
  max_model_len: 65536
cluster: {node_num: 2, gpu_per_node: 8}
explorer: {rollout_model: {engine_num: 4, tensor_parallel_size: 2}}
trainer:
  trainer_strategy: fsdp
  ulysses_sequence_parallel_size: 2
  trainer_config: {actor_rollout_ref: {actor: {fsdp_config: {param_offload: false}}}}
"""
"""persona9's config: GRPO, Qwen3-14B at 65536 tokens, SP=2 on 8 trainer GPUs of 2 nodes of 8, no rope_scaling."""


def test_a_verdict_that_does_not_train_reads_in_sentences(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
    config = tmp_path / "qwen3-14b-64k.yaml"
    config.write_text(PERSONA9, encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100")
    verdict = " ".join(out.split("\n", 1)[1].split("  refused: ")[0].split())
    assert status == 0 and verdict == (
        "qwen3-14b-64k.yaml runs SP=2 on 8 trainer GPUs at 65536 tokens (Env off, "
        "PYTORCH_CUDA_ALLOC_CONF unset in this shell): the A100-80GB table for 6 GPUs (its GPU has at least the "
        "memory of H100-80GB) says '-' at 51200, so SP=2 ran out of memory there. It ran out with Offload too, which "
        "holds "
        "as much per GPU on 8 GPUs as on 6 (the states are on the CPU); without Offload each GPU holds more. At 65536 "
        "tokens each GPU holds more than at 51200. The config as written is refused too (the problem that refuses it "
        "says why). The best plan follows.")
    assert " and " not in verdict.split("ran out of memory there.")[1]


def test_check_of_the_written_config_says_why_a_costlier_plan_ranks_first(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # --write applies Env + SP=8; Env is not set in this shell, so the written config's SP=8 trains by estimate
    # without Env (cost 0.2125), and the plan below, with Env (0.2146), costs more by Env's ranking weight alone.
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
    config, written = tmp_path / "qwen3-14b-64k.yaml", tmp_path / "fixed.yaml"
    config.write_text(PERSONA9, encoding="utf-8")
    assert cli("--from-config", str(config), "--gpu", "h100", "--write", str(written))[0] == 0
    status, out, _ = cli("--from-config", str(written), "--gpu", "h100", "--check")
    said = " ".join(out.split())
    assert status == 0 and ("to spare; beyond its calibration: 8 GPUs (calibrated up to 6), SP=8 (calibrated up to "
                            "SP=4)). The planner did not rank these settings: its estimates keep Env on (--no-env "
                            "estimates without it). The plan below adds Env: its cost is higher (0.2146 against "
                            "0.2125) by Env's ranking weight alone, not step time. plan Env + SP=8 on 8 of 8 "
                            "GPUs") in said
    assert "best plan below costs" not in said


@pytest.mark.parametrize(("flags", "error"), [
    ("A", ("--required 'A': no job of the fleet is named so; did you mean a? its jobs: a, b, c, d; or all, for "
           "every job")),
    ("a,Zz", "--required 'Zz': no job of the fleet is named so; its jobs: a, b, c, d; or all, for every job"),
])
def test_required_names_the_job_a_case_slip_meant(flags: str, error: str, cli, tmp_path: Path):
    status, out, err = cli("cluster", str(fleet_file(FOUR_JOBS, tmp_path)), "--buy", "--required", flags)
    assert (status, out, err.splitlines()[-1]) == (2, "", f"solve cluster: error: {error}")


@pytest.mark.parametrize(("text", "error"), [
    ("pools:\n  h100: {gpu: H100, nodes: 2, gpus_per_node: 8}\njobs: [{name: a, model: 4B, max_model_len: 8192}]\n",
     ("line 2: pools: must be a list, got a mapping (keys: h100): list each as an item with its name, '- name: h100', "
      "its fields under it")),
    (("pools: [{name: h, gpu: H100, nodes: 1, gpus_per_node: 8}]\njobs:\n  a: {model: 4B, max_model_len: 8192}\n"
      "  b: {model: 4B, max_model_len: 8192}\n"),
     ("line 3: jobs: must be a list, got a mapping (keys: a, b): list each as an item with its name, '- name: a', its "
      "fields under it")),
    ("pools: {}\njobs: [{name: a, model: 4B, max_model_len: 8192}]\n", "line 1: pools: must be a list, got a mapping"),
])
def test_a_mapping_given_for_a_list_is_named_by_its_keys(text: str, error: str, cli, tmp_path: Path):
    path = tmp_path / "fleet.yaml"
    path.write_text(text, encoding="utf-8")
    assert cli("cluster", str(path)) == (2, "", f"solve cluster: error: {path}: {error}\n")


def test_solve_memory_gives_the_parameters_as_the_plan_does(cli):
    status, out, _ = cli("memory", "--model", "Qwen2.5-32B", "--gpu", "h100", "--gpus", "8", "--len", "32k")
    assert status == 1 and out.startswith(  # vanilla does not fit: 1
        "Qwen2.5-32B (32.8B parameters) on 8 x H100-80GB (79.6 GiB), vanilla, ")
    _, plan, _ = cli("--model", "Qwen2.5-32B", "--gpu", "h100", "--gpus", "8", "--len", "32k", "--estimate")
    assert "32.8B parameters (calibrated up to 14.8B)" in " ".join(plan.split())
    status, out, _ = cli("memory", "--model", "Qwen3-30B-A3B", "--gpu", "h100", "--gpus", "8", "--len", "32k")
    assert out.startswith("Qwen3-30B-A3B (30.5B parameters, 3.3B active) on 8 x H100-80GB ")


MILLIONS = "M is not taken, 1M being 1000000 tokens to some tools and 1048576 to others"


@pytest.mark.parametrize(("length", "note"), [
    ("1m", f"{MILLIONS}: 1024k is 1048576 tokens"),
    ("0.5M", f"{MILLIONS}: 512k is 524288 tokens"),
    ("0.3M", f"{MILLIONS}: give the tokens"),
])
def test_a_length_in_millions_is_refused_naming_its_k_form(length: str, note: str, cli, tmp_path: Path):
    status, out, err = cli("--model", "14B", "--gpu", "h100", "--len", length)
    assert (status, out, err.splitlines()[-1]) == (
        2, "", (f"solve: error: argument --len: expected a whole number, got '{length}' (tokens, or thousands of "
                f"1024: 32768 or 32k; {note})"))
    path = tmp_path / "fleet.yaml"
    path.write_text(f"pools: [{{name: h, gpu: H100, nodes: 1, gpus_per_node: 8}}]\n"
                    f"jobs: [{{name: a, model: 14B, max_model_len: {length}}}]\n", encoding="utf-8")
    assert cli("cluster", str(path)) == (2, "", (
        f"solve cluster: error: {path}: line 2: job a, max_model_len: must be a whole number, got '{length}' (tokens, "
        f"or thousands of 1024: 32768 or 32k; {note})\n"))

