"""Words where an answer extrapolates far, and host memory's peak (s82, helper smallslips43, from persona67's
Qwen3-235B-A22B on four nodes of 8 H200s with 2 TiB of host memory each):

- the host memory row says which moment its figure is where loading the model at start-up needs more than training
  (``host_training_gb``, ``host_training_gib``);
- ``solve cluster``'s reason for a trainer with no layout beside its rollout names the least host memory a count
  beside the rollout needs (`least_host_words`), not the fewest GPUs' alone;
- the ``for rollout`` row names ``--host-ram`` where it rules out every plan beside the kept rollout GPUs;
- an estimate of a model more than 4 times the largest calibrated, at the default margin, gets the
  ``far-beyond-calibration`` caution naming the margins docs/memory.md advises;
- ``solve --dpo --rollout-gpus N`` (N > 0) is refused, as a cluster DPO job's rollout_gpus is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_smallslips24_s77 import Cli

import solver
from solver.memory import host_moments_gib, shown_training_host_need
from solver.results import Answer, CautionCode, MarginRoom, far_beyond_calibration
from solver.tables import QueryError, load_catalog

CONFIG = {
    "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 4096, "head_dim": 128,
    "intermediate_size": 12288, "moe_intermediate_size": 1536, "num_attention_heads": 64, "num_key_value_heads": 4,
    "num_hidden_layers": 94, "num_experts": 128, "num_experts_per_tok": 8, "norm_topk_prob": True,
    "decoder_sparse_step": 1, "mlp_only_layers": [], "max_position_embeddings": 40960, "max_window_layers": 94,
    "vocab_size": 151936, "tie_word_embeddings": False, "torch_dtype": "bfloat16", "rope_theta": 1000000.0,
    "rope_scaling": None, "sliding_window": None, "use_sliding_window": False, "hidden_act": "silu",
    "rms_norm_eps": 1e-06, "attention_bias": False,
}
"""Qwen3-235B-A22B's config.json as persona67 wrote it (94 layers, 128 experts, 8 active: 235.1B parameters)."""

H200_32 = ("--gpu", "h200", "--node-gpus", "8", "--len", "16384", "--trinity-version", "0.6")
"""Persona67's question: H200s, nodes of 8, 16384 tokens; under Trinity 0.6, which loads the model on rank 0 alone there
(FSDP2 on compute capability 9.0: hostload, s84), as the figures below were counted (with no release named every rank
loads it, 7 x 875.8 GiB more a node)."""


@pytest.fixture
def config(tmp_path: Path) -> Path:
    """Qwen3-235B-A22B's config.json, written to a folder of its own."""
    path = tmp_path / "q235" / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps(CONFIG), encoding="utf-8")
    return path


def _row(out: str, name: str) -> str:
    """The summary row `name`, its wrapped lines joined."""
    lines = out.splitlines()
    start = next(index for index, line in enumerate(lines) if line.startswith(f"{name} "))
    row = [lines[start][len(name):].strip()]
    for line in lines[start + 1:]:
        if not line.startswith(" " * 15):
            break
        row.append(line.strip())
    return " ".join(row)


def _solve_json(cli: Cli, *argv: str) -> Any:
    status, out, err = cli(*argv, "--json")
    assert status == 0, err
    return json.loads(out)[0]


# (1) the host memory's moment


def test_the_start_up_peak_is_said_with_the_training_need(cli: Cli, config: Path) -> None:
    status, out, _ = cli("--model-config", str(config), *H200_32, "--gpus", "32", "--host-ram", "2TB")
    assert status == 0
    assert _row(out, "host memory") == (
        "1456.4 GiB per node for Offload (at start-up, rank 0 loading the model; 1308.8 while training), within "
        "--host-ram 2048 GiB; Trinity 0.5 needs 7441.8 (the reference model in bf16 where 0.6's is fp32; the model "
        "loaded on every rank as 0.5.2 loads it where 0.6's loads it on rank 0)")  # 32 GPUs: blocks, layouts alike
    plan = _solve_json(cli, "--model-config", str(config), *H200_32, "--gpus", "32", "--host-ram", "2TB")["plans"][0]
    assert (plan["host_memory_gb"], plan["host_training_gb"]) == (1456.4, 1308.8)


def test_solve_memory_says_the_moment_too(cli: Cli, config: Path) -> None:
    argv = ("memory", "--model-config", str(config), *H200_32, "--gpus", "32", "--env", "--offload")
    status, out, _ = cli(*argv)
    assert status == 0
    line = " ".join(out.split()[out.split().index("memory:", out.split().index("host")):])
    assert line.startswith("memory: 1456.4 GiB per node for Offload (the actor's states and the reference model's "
                           "shards, or the model while it loads beside both models' pinned shards, whichever is "
                           "more; here at start-up, rank 0 loading the model; 1308.8 while training); not checked")
    status, out, _ = cli(*argv, "--json")
    estimate = json.loads(out)
    assert (estimate["host_memory_gib"], estimate["host_training_gib"]) == (1456.4, 1308.8)


def test_a_training_peak_names_no_moment(cli: Cli) -> None:
    # Qwen3-8B with Offload on 2 of 4 A100s (docs/guide.md's JSON): training, 183.0 GiB, is the peak.
    plan = _solve_json(cli, "--model", "8B", "--gpus", "4", "--len", "32768", "--gpu", "a100")["rollout_kept"]["plan"]
    assert (plan["host_memory_gb"], plan["host_training_gb"]) == (183.0, None)
    status, out, _ = cli("--model", "8B", "--gpus", "2", "--len", "32768", "--gpu", "a100", "--offload")
    assert status == 0 and _row(out, "host memory").startswith("183.0 GiB per node for Offload; not checked")


def test_the_moments_of_the_need() -> None:
    model = load_catalog().model("Qwen3-4B")  # tied embeddings: every rank loads the model
    loading, training = host_moments_gib(model, 4, 8)
    assert (round(loading, 4), round(training or 0, 4)) == (102.1798, 93.3373)
    assert shown_training_host_need(model, 4, 8) == 93.4
    assert host_moments_gib(model, 4, 8, offload=False)[1] is None  # without Offload the load is the need
    assert shown_training_host_need(model, 4, 8, offload=False) is None


def test_json_made_before_the_keys_reads_back(cli: Cli, config: Path) -> None:
    answer = _solve_json(cli, "--model-config", str(config), *H200_32, "--gpus", "32", "--host-ram", "2TB")
    del answer["plans"][0]["host_training_gb"]
    del answer["rollout_kept"]["without_host_ram"]
    read = Answer.model_validate(answer)
    assert read.plans[0].host_training_gb is None and read.rollout_kept is not None
    assert read.rollout_kept.without_host_ram is None


# (2) solve cluster's reason names the least host memory beside the rollout


def test_the_cluster_reason_names_the_least_host_memory_beside_the_rollout(cli: Cli, config: Path,
                                                                           tmp_path: Path) -> None:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: h200, gpu: H200-141GB, nodes: 4, gpus_per_node: 8, host_ram_gb: 2TB, "
                     "node_interconnect: infiniband}\n"
                     f"jobs:\n  - {{name: grpo-235b, model_config: {config}, max_model_len: 16384, "
                     "trinity_version: '0.6', rollout_gpus: 8}\n", encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet), "--json")
    assert status == 1  # a job left out
    assert json.loads(out)["unplaced"][0]["reason"] == (
        "h200: with 8 rollout GPUs, no trainer GPU count that trains it (32 at the fewest) has a layout on its 4 "
        "nodes of 8 GPUs (8 would, with Env + Offload, but with Offload it needs 5235.1 GiB of host memory per node, "
        "more than the pool's host_ram_gb of 2048 GiB; at the least, Env + Offload on 24 GPUs trains it (16384 "
        "tokens), and with Offload it needs 2319.6 GiB of host memory per node); with rollout_gpus: 0 (its "
        "explorer on GPUs outside the fleet), a trainer of 32 GPUs has one")


# (3) the for rollout row names --host-ram where it rules the plans out


def test_the_for_rollout_row_names_the_host_ram_that_rules_plans_out(cli: Cli, config: Path) -> None:
    argv = ("--model-config", str(config), *H200_32, "--gpus", "32", "--host-ram", "2TB")
    status, out, _ = cli(*argv)
    assert status == 0
    assert _row(out, "for rollout") == (
        "keeping 8 of the 32 for it leaves no plan for 16384 tokens (within 24): --host-ram 2048 GiB rules them out "
        "(Env + Offload on 24 GPUs needs 2319.6 GiB of host memory per node); give the rollout GPUs beside these "
        "instead: --gpus 32 --rollout-gpus R")
    kept = _solve_json(cli, *argv)["rollout_kept"]
    assert (kept["rollout_gpus"], kept["plan"]) == (8, None)
    assert (kept["without_host_ram"]["gpus"], kept["without_host_ram"]["host_memory_gb"]) == (24, 2319.6)


def test_the_for_rollout_row_names_no_host_ram_that_is_not_the_cause(cli: Cli) -> None:
    # docs/guide.md's two RTX 3090s: one GPU holds no plan at the default token budget whatever the host memory; a
    # lowered one, within it, is what the row names (persona93e)
    argv = ("--gpu", "rtx-3090", "--gpu-memory", "24576MiB", "--gpu-interconnect", "pcie", "--model", "1.7B",
            "--gpus", "2", "--len", "8k", "--node-gpus", "2", "--host-ram", "48")
    status, out, _ = cli(*argv)
    assert status == 0
    row = _row(out, "for rollout")
    assert row.startswith("--total-gpus 2 --rollout-gpus 1 --token-budget auto keeps 1 of the 2 for it: Env + Offload "
                          "on 1 trainer GPU with a lowered max_token_len_per_gpu of 15360, 8192 tokens")
    assert "--host-ram" not in row
    assert _solve_json(cli, *argv)["rollout_kept"]["without_host_ram"] is None


# (4) far beyond the calibration, at the default margin


FAR_WORDS = ("the model has 15.9 times the parameters of the largest the memory model was calibrated on, far past "
             "what its held-out splits checked (3.5 times at most), and its error there is unmeasured: "
             "docs/memory.md in rft-solver's source advises --margin 0.02 to 0.05 here (the default is 0.01), or "
             "measure a step first")


def test_a_model_far_beyond_the_calibration_names_the_advised_margins(cli: Cli, config: Path) -> None:
    plan = _solve_json(cli, "--model-config", str(config), *H200_32, "--gpus", "32", "--host-ram", "2TB")["plans"][0]
    assert plan["caution_codes"] == ["far-beyond-calibration"] and plan["cautions"] == [FAR_WORDS]
    assert plan["headroom_gb"] > 50  # ample room: the thin-headroom caution names no margin
    raised = _solve_json(cli, "--model-config", str(config), *H200_32, "--gpus", "32", "--host-ram", "2TB",
                         "--margin", "0.02")["plans"][0]
    assert "far-beyond-calibration" not in raised["caution_codes"]
    status, out, _ = cli("memory", "--model-config", str(config), *H200_32, "--gpus", "32", "--env", "--offload",
                         "--host-ram", "2TB", "--json")
    assert status == 0 and json.loads(out)["caution_codes"] == ["far-beyond-calibration"]


def test_a_model_within_four_times_the_calibration_gets_no_such_caution(cli: Cli) -> None:
    # Qwen3-30B-A3B: 30.5B, about twice the largest calibrated (14.8B)
    answer = _solve_json(cli, "--model", "Qwen3-30B-A3B", "--gpu", "h200", "--gpus", "8", "--len", "16384",
                         "--estimate")
    assert answer["plans"] and "far-beyond-calibration" not in answer["plans"][0]["caution_codes"]


@pytest.mark.parametrize(("room", "thin", "words"), [
    (MarginRoom(0.01, 0.01, 74.0, 0.0, 4.0), "", ""),  # 4 times: not more than FAR_BEYOND_SCALE
    (MarginRoom(0.01, 0.01, 74.0, 0.0, 4.01), "", "the model has 4.0 times"),
    (MarginRoom(0.02, 0.01, 74.0, 0.0, 16.0), "", ""),  # a margin above the default
    (MarginRoom(0.01, 0.01, 74.0, 0.0, 16.0), "thin", ""),  # the thin-headroom caution names one
    (MarginRoom(0.04, 0.04, 40.5, 0.0, 16.0), "", "advises --margin 0.05 to 0.08 here (the default is 0.04)"),
])
def test_far_beyond_calibration(room: MarginRoom, thin: str, words: str) -> None:
    caution = far_beyond_calibration(room, thin)
    assert (words in caution) if words else caution == ""
    assert CautionCode("far-beyond-calibration") is CautionCode.FAR_BEYOND_CALIBRATION


# (5) DPO keeps no rollout GPUs


DPO_REFUSAL = ("--dpo with --rollout-gpus 2: Trinity trains DPO on a dataset in mode train alone, with no explorer to "
               "use them (it refuses mode both): drop --rollout-gpus, or give 0")


@pytest.mark.parametrize("budget", [("--gpus", "8"), ("--total-gpus", "8")])
def test_dpo_with_rollout_gpus_is_refused(cli: Cli, budget: tuple[str, str]) -> None:
    status, out, err = cli("--dpo", "--model", "4B", "--gpu", "h100", *budget, "--len", "32k", "--rollout-gpus", "2")
    assert (status, out, err) == (2, "", f"solve: error: {DPO_REFUSAL}\n")


def test_the_api_refuses_it_too() -> None:
    with pytest.raises(QueryError) as refused:
        solver.plan("4B", gpu="h100", budget_gpus=8, max_model_len=32768, dpo=True, rollout_gpus=2)
    assert str(refused.value) == ("dpo=True with rollout_gpus=2: Trinity trains DPO on a dataset in mode train alone, "
                                  "with no explorer to use them (it refuses mode both): drop rollout_gpus, or give 0")


def test_dpo_keeps_no_gpus_for_a_rollout(cli: Cli) -> None:
    status, out, _ = cli("--dpo", "--model", "4B", "--gpu", "h100", "--gpus", "8", "--len", "32k")
    assert status == 0 and _row(out, "plan") == "Env + SP=2 on 8 of 8 GPUs"
    assert "for rollout" not in out
    assert "rollout_kept" not in _solve_json(cli, "--dpo", "--model", "4B", "--gpu", "h100", "--gpus", "8", "--len",
                                             "32k")
    status, _, _ = cli("--dpo", "--model", "4B", "--gpu", "h100", "--gpus", "8", "--len", "32k", "--rollout-gpus", "0")
    assert status == 0
