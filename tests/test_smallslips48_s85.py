"""Four slips users found in session 85 (smallslips48).

1. A ``qwen3`` config.json without ``head_dim`` was read as ``hidden_size / num_attention_heads`` (80 for Qwen3-4B's
   shape), but transformers' ``Qwen3Config`` defaults it to 128 (``configuration_qwen3.py:160`` in 4.51.3, ``:133``
   in 5.0.0, ``:67`` in 5.25.0); ``Qwen3MoeConfig`` declares none, so a ``qwen3_moe`` one keeps the quotient
   (``modeling_qwen3_moe.py:144`` in 4.51.3).
2. A no-plan answer on host memory, every rank loading the model (no release named), did not say that 0.5.1, whose
   rank 0 alone loads an untied model, trains it within that host memory.
3. ``solve cluster --host-memory`` and Slurm's ``--mem`` got no hint to a pool's host_ram_gb, as ``--host-ram`` did.
4. ``--from-config``'s ``but:`` lines said "(--write does)" where the summary offers no --write."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

import solver
from solver.tables import load_model_config

Cli = Callable[..., tuple[int, str, str]]
QWEN3_4B = {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 2560,
            "intermediate_size": 9728, "num_hidden_layers": 36, "num_attention_heads": 32, "num_key_value_heads": 8,
            "vocab_size": 151936, "max_position_embeddings": 40960, "tie_word_embeddings": True,
            "rope_theta": 1000000, "torch_dtype": "bfloat16"}
"""Qwen3-4B's config.json without its head_dim (128)."""


def _folder(tmp_path: Path, config: dict) -> Path:
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


def _words(text: str) -> str:
    return " ".join(text.split())


def test_qwen3_config_without_head_dim_takes_its_class_default(cli: Cli, tmp_path: Path):
    folder = _folder(tmp_path, QWEN3_4B)
    assert load_model_config(folder / "config.json").head_dim == 128  # was 2560 // 32 = 80
    status, _, err = cli("--model-config", str(folder), "--gpu", "l40s", "--gpus", "4", "--len", "16k")
    assert status == 0
    assert "head_dim 80" not in err and "shape but for" not in err  # was: "head_dim 80 (Qwen3-4B's: 128)"


@pytest.mark.parametrize(("model_type", "given", "read"), [
    ("qwen3", None, 128), ("qwen3", 64, 64), ("gemma2", None, 256), ("llama", None, 80), ("qwen3_moe", None, 80)])
def test_head_dim_default_by_model_type(tmp_path: Path, model_type: str, given: int | None, read: int):
    config = {**QWEN3_4B, "model_type": model_type, "head_dim": given}
    if model_type == "qwen3_moe":  # Qwen3MoeConfig declares no head_dim: hidden_size // num_attention_heads
        config |= {"num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 768}
    assert load_model_config(_folder(tmp_path, config) / "config.json").head_dim == read


HOST_LIMITED = ("--model", "llama-3.1-8b", "--maximize", "len", "--gpu", "4090", "--gpus", "12", "--node-gpus", "4",
                "--host-ram", "128")


def test_no_plan_on_host_memory_names_a_release_whose_rank_0_alone_loads(cli: Cli):
    status, out, _ = cli(*HOST_LIMITED)
    assert status == 1
    # s87: 0.5.2 (bf16 reference model) lifts it too, but 0.5.1 lifts more (a patch of the same minor): it is named
    assert ("with Offload it needs 152.7 GiB of host memory per node; with --trinity-version 0.5.1, whose rank 0 alone "
            "loads the model and whose verl 0.7 builds the reference model in bf16 and places the pinned blocks, "
            "Env + Offload + SP=4 on 12 GPUs trains it (28672 tokens), and with Offload it needs 61.2 "
            "GiB of host memory per node; 0.5.0 counts less host memory too, enough for that plan; 0.5.2 counts less "
            "too, but not enough for that plan") in _words(out)  # persona93g: 0.5.2, every rank loading it, 144.5
    # that release's answer is the one the clause names
    status, out, _ = cli(*HOST_LIMITED, "--trinity-version", "0.5.1")
    assert status == 0 and "Env + Offload + SP=4 on 12 of 12 GPUs" in out


def test_on_hopper_the_release_named_is_0_6_0(cli: Cli):
    # 0.6.0 builds the model on rank 0 alone with FSDP2 on compute capability 9 or more; newest first
    status, out, _ = cli("--model", "llama-3.1-8b", "--len", "64k", "--gpu", "h100", "--gpus", "8", "--exact",
                         "--host-ram", "150")
    assert status == 1
    assert ("needs 185.7 GiB of host memory per node; with --trinity-version 0.6.0, whose rank 0 alone loads the "
            "model, Env + SP=4 on 8 GPUs trains it (65536 tokens), and it needs 63.0 GiB of host memory per node while "
            "the model loads") in _words(out)


def test_the_api_names_plans_keyword_for_the_release():
    # the API's reason said `with version="0.6.0"` (trinity_config's keyword), which solver.plan does not take
    asked = {"gpu": "h100", "max_model_len": 65536, "budget_gpus": 8, "exact": True, "host_ram_gb": 150}
    (answer,) = solver.plan("llama-3.1-8b", **asked)
    assert answer.best is None and answer.reason is not None
    assert '; with trinity_version="0.6.0", whose rank 0 alone loads the model, Env + SP=4 on 8 GPUs' in answer.reason
    (named,) = solver.plan("llama-3.1-8b", **asked, trinity_version="0.6.0")  # the keyword it names plans it
    assert named.best is not None and named.best.setting.label == "Env + SP=4"


def test_a_cluster_reason_names_the_job_s_own_release_key(cli: Cli, tmp_path: Path):
    # clusterrelease91: a cluster job's reason said "with --trinity-version 0.6.0", a run-wide flag, where the job's
    # own trinity_version key gives the release to it alone (docs/cluster.md); cluster93c: where the job names none
    # and the run names none either, either may give it: the key first, then the run's option
    job = {"name": "big", "model": "llama-3.1-8b", "max_model_len": 65536, "rollout_gpus": 0}
    pool = {"name": "h100", "gpu": "H100", "nodes": 1, "gpus_per_node": 8, "host_ram_gb": 150}
    path = tmp_path / "fleet.yaml"
    path.write_text(json.dumps({"pools": [pool], "jobs": [job]}), encoding="utf-8")
    status, out, _ = cli("cluster", str(path), "--json")
    [left] = json.loads(out)["unplaced"]
    assert status == 1 and left["reason"].count("--trinity-version") == 1
    assert ("; with the job's trinity_version 0.6.0 (or the run's --trinity-version 0.6.0), whose rank 0 alone loads "
            "the model, Env + SP=4 on 8 GPUs trains it (65536 tokens), and it needs 63.0 GiB of host memory per node "
            "while the model loads") in left["reason"]
    [api_left] = solver.place(path).unplaced  # the API's keyword after the key
    assert '; with the job\'s trinity_version 0.6.0 (or the run\'s trinity_version="0.6.0"), whose' in api_left.reason
    # Under the run's --trinity-version 0.5.2 the job's release is named: no other is offered, nor the key it lacks.
    status, out, _ = cli("cluster", str(path), "--json", "--trinity-version", "0.5.2")
    assert status == 1 and "trinity_version" not in json.loads(out)["unplaced"][0]["reason"]
    # the key it names places the job, on that plan
    path.write_text(json.dumps({"pools": [pool], "jobs": [{**job, "trinity_version": "0.6.0"}]}), encoding="utf-8")
    [placed] = solver.place(path).placements
    assert (placed.plan.setting.label, placed.plan.gpus) == ("Env + SP=4", 8)


def test_a_release_that_loads_on_every_rank_may_lift_a_host_limit_too(cli: Cli):
    # s87: the tied 4B loads on every rank under every release here, so no rank 0 alone; but 0.5's bf16 reference
    # model and placed blocks need 67.9 GiB where no release named counts 70.5: 0.5.2, the newest, is named, with the
    # others that lift the limit; the clause said nothing of it
    status, out, _ = cli("--model", "4B", "--len", "27648", "--gpu", "4090", "--gpus", "12", "--node-gpus", "4",
                         "--host-ram", "68")
    assert status == 1
    assert ("70.5 GiB of host memory per node; with --trinity-version 0.5.2, whose verl 0.7 builds the reference model "
            "in bf16 and places the pinned blocks, Env + Offload + SP=4 on 12 GPUs trains it (27648 tokens), and with "
            "Offload it needs 67.9 GiB of host memory per node; 0.5.1 and 0.5.0 count less host memory too, enough for "
            "that plan; "
            "--token-budget auto") in _words(out)


def test_one_other_release_that_lifts_the_host_limit_counts_less_in_the_singular(cli: Cli):
    # persona89d: where one other release lifts the limit too, it said "0.5.0 count less host memory too"
    status, out, _ = cli("--model", "14B", "--len", "64k", "--gpu", "a100-40g", "--gpus", "16", "--exact",
                         "--host-ram", "256")
    assert status == 1
    assert ("needs 155.7 GiB of host memory per node; 0.5.0 counts less host memory too, enough for that plan "
            "--explain says why"
            in _words(out))


@pytest.mark.parametrize("options", [
    ("--trinity-version", "0.6.0"),  # named, its own loading is counted: every rank below compute capability 9
    ("--model", "4B", "--host-ram", "60")])  # tied: every rank loads it; 0.5's 67.9 GiB is more than 60 too
def test_no_release_clause_where_none_lifts_the_host_limit(cli: Cli, options: tuple[str, ...]):
    argv = [*HOST_LIMITED]
    for option, value in zip(options[::2], options[1::2], strict=True):
        if option in argv:
            argv[argv.index(option) + 1] = value
        else:
            argv += [option, value]
    status, out, _ = cli(*argv)
    assert status == 1 and "no plan" in out and "rank 0 alone" not in out


@pytest.mark.parametrize("option", ["--host-ram", "--host-memory", "--mem"])
def test_cluster_names_the_pool_field_for_host_memory_by_any_name(cli: Cli, option: str):
    status, _, err = cli("cluster", option, "1TB")
    assert status == 2
    # where argparse read 1TB as the cluster file, the line ends saying that the file is missing (cliwords87)
    missing = f"; FILE.yaml is missing ('1TB', after {option}, was read as FILE.yaml)"  # each, clusterwords87
    assert err.splitlines()[-1].endswith(f"(the file gives it: a pool's host_ram_gb){missing}")


CONFIG = ("algorithm: {algorithm_type: grpo}\nmodel: {model_path: Qwen/Qwen3-8B, max_model_len: 8192}\n"
          "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 4}}\ntrainer:\n"
          "  ulysses_sequence_parallel_size: 2\n  trainer_config:\n    actor_rollout_ref:\n"
          "      ref: {ulysses_sequence_parallel_size: 4}\n")
"""Qwen3-8B on 4 trainer GPUs, the ref at SP 4 beside the trainer's 2: two ``but:`` lines whose fix --write makes."""


@pytest.mark.parametrize(("options", "offered"), [
    ((), True), (("--minimize", "gpus"), False), (("--gpus", "2"), False)])
def test_but_lines_name_write_only_where_it_is_offered(cli: Cli, tmp_path: Path, options: tuple[str, ...],
                                                       offered: bool):
    path = tmp_path / "trinity.yaml"
    path.write_text(CONFIG, encoding="utf-8")
    status, out, _ = cli("--from-config", str(path), "--gpu", "a100-80g", *options)
    assert status == 0
    text = _words(out)
    assert ("--write FILE writes a copy" in text) is offered
    assert "set them alike" in text and "set the ref's SP to the actor's" in text
    assert text.count("(--write does)") == (2 if offered else 0)
