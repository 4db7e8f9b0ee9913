"""The start-up load as rft-solver counts it on a node (session 83, helper hostrank0; s84's hostload counts the ranks
by release): verl's own workers' rule (the whole model in fp32 on one rank of an untied model, on every rank of a tied
one), which Trinity 0.5.0 and 0.5.1 keep; 0.5.2 loads it on every rank, and 0.6 on rank 0 alone with FSDP2 on a GPU of
compute capability 9 or more, else on every rank; with no release named every rank (docs/memory.md gives the source
lines). A trainer across nodes is given rank 0's node's figure for every node, by `solve`, `solve memory` and `solve
cluster`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from solver.api import plan
from solver.memory import host_memory_gib, host_moments_gib, shown_host_gib
from solver.tables import load_catalog

Cli = Callable[..., tuple[int, str, str]]
CATALOG = load_catalog()
QWEN3_8B, QWEN3_4B = CATALOG.model("Qwen3-8B"), CATALOG.model("Qwen3-4B")  # untied; tied
GIB = 2**30
LOAD_8B = 4 * 8.191e9 / GIB  # the whole untied Qwen3-8B in fp32, the table's 8.191e9 parameters: 30.514 GiB
LOAD_4B = 4 * 4.022e9 / GIB  # the whole tied Qwen3-4B in fp32: 14.983 GiB

# Qwen3-8B's reference model in fp32 (Trinity 0.6) on 16 GPUs, each pinning its rows / 16 of each tensor rounded up to
# a power of two: embeddings and lm_head 9496 x 4096 x 4 = 155582464 -> 2**28; final norm 256 x 4 = 1024; q and o
# 256 x 4096 x 4 = 2**22; k and v 64 x 4096 x 4 = 2**20; the layers' two norms 1024; q/k norms 8 x 4 = 32; gate and up
# 768 x 4096 x 4 = 12582912 -> 2**24; down 256 x 12288 x 4 = 12582912 -> 2**24 (36 layers).
PINNED_PER_GPU_OF_16 = (2 * 2**28 + 1024 + 72 * 2**22 + 72 * 2**20 + 72 * 1024 + 72 * 32 + 72 * 2**24 + 36 * 2**24)
# Their values unrounded, as tests/test_hostref_s71.py counts them, scaled to the table's parameter count.
VALUES_8B = 2 * 151936 * 4096 + 4096 + 72 * 4096**2 + 72 * 1024 * 4096 + 72 * 4096 + 72 * 128 + 108 * 12288 * 4096
REFERENCE_SHARDS_NODE_OF_8_OF_16 = 8.191e9 / VALUES_8B * 8 * PINNED_PER_GPU_OF_16 / GIB


def test_the_hand_counts_hold_together() -> None:
    assert PINNED_PER_GPU_OF_16 == 5452749312 // 2  # half of 8 GPUs' (test_hostref_s71.py): every block halves
    assert (LOAD_8B, LOAD_4B, REFERENCE_SHARDS_NODE_OF_8_OF_16) == (
        pytest.approx(30.51385, abs=1e-5), pytest.approx(14.98312, abs=1e-5), pytest.approx(20.31373, abs=1e-5))


@pytest.mark.parametrize("loading", ["verl", "rank-0", "every-rank"])
@pytest.mark.parametrize(("gpus", "node_gpus"), [(1, 8), (8, 8), (16, 8), (32, 8), (16, 4)])
def test_an_untied_model_is_counted_loaded_once_on_every_node_where_rank_0_alone_loads(gpus: int, node_gpus: int,
                                                                                       loading: str) -> None:
    """One loader under verl's rule (0.5.0, 0.5.1) and 0.6's rank 0, whatever the trainer's GPUs and nodes: 30.51 GiB
    on each node, the node of rank 0's load, also on the nodes without it; every rank's (0.5.2, 0.6 below compute
    capability 9, no release named) one per trainer GPU of the node."""
    loaders = min(gpus, node_gpus) if loading == "every-rank" else 1
    assert host_memory_gib(QWEN3_8B, gpus, node_gpus, offload=False, reference=False,
                           loading=loading) == pytest.approx(loaders * LOAD_8B, rel=1e-12)  # type: ignore[arg-type]


@pytest.mark.parametrize(("gpus", "node_gpus", "loaders"), [(4, 8, 4), (8, 8, 8), (16, 8, 8), (16, 4, 4)])
def test_a_tied_model_is_counted_loaded_on_each_trainer_gpu_of_a_node(gpus: int, node_gpus: int, loaders: int) -> None:
    """One load per trainer GPU of the node: 8 x 14.98 = 119.87 GiB on nodes of 8, 4 x 14.98 = 59.93 on 4."""
    assert host_memory_gib(QWEN3_4B, gpus, node_gpus, offload=False, reference=False) == (
        pytest.approx(loaders * LOAD_4B, rel=1e-12))


def test_a_trainer_across_nodes_is_given_rank_0s_node_figure_with_its_reference_model() -> None:
    """Qwen3-8B on two nodes of 8 without Offload (0.6): the load beside the node's fp32 reference shards, 30.51 +
    20.31 = 50.83 GiB, shown 50.9 for each node; the node without rank 0 holds 20.31 (shown 20.4) where only rank 0
    loads the model (docs/memory.md's figures)."""
    loading, training = host_moments_gib(QWEN3_8B, 16, 8, offload=False, version="0.6", loading="rank-0")
    assert (loading, training) == (pytest.approx(LOAD_8B + REFERENCE_SHARDS_NODE_OF_8_OF_16, rel=1e-12), None)
    assert (shown_host_gib(loading), shown_host_gib(loading - LOAD_8B)) == (50.9, 20.4)


def test_the_documented_figures_of_the_releases_that_load_otherwise() -> None:
    """docs/memory.md's figures on a node of 8 without Offload: Qwen3-8B 71.2 GiB on 0.6 on rank 0 alone (50.9 on 0.5's
    verl rule), and with the other 7 ranks' loads, 7 x 30.51 GiB more, as 0.6 on a GPU below compute capability 9
    (0.5.2 anywhere) loads it: 284.8 (264.5); tied Qwen3-4B 141.0 on every rank, and 7 x 14.98 less, as 0.6 loads it
    on rank 0 alone on an H100: 36.2."""
    one = {version: host_memory_gib(QWEN3_8B, 8, 8, offload=False, version=version, loading="rank-0")
           for version in ("0.6", "0.5")}
    every = {version: host_memory_gib(QWEN3_8B, 8, 8, offload=False, version=version, loading="every-rank")
             for version in ("0.6", "0.5")}
    assert [shown_host_gib(one[version]) for version in ("0.6", "0.5")] == [71.2, 50.9]
    assert [shown_host_gib(every[version]) for version in ("0.6", "0.5")] == [284.8, 264.5]
    assert every["0.6"] - one["0.6"] == pytest.approx(7 * LOAD_8B, rel=1e-12)
    counted_4b = {loading: host_memory_gib(QWEN3_4B, 8, 8, offload=False, version="0.6", loading=loading)
                  for loading in ("every-rank", "rank-0")}
    assert (shown_host_gib(counted_4b["every-rank"]), shown_host_gib(counted_4b["rank-0"])) == (141.0, 36.2)
    assert counted_4b["every-rank"] - counted_4b["rank-0"] == pytest.approx(7 * LOAD_4B, rel=1e-12)


@pytest.mark.parametrize(("model", "release", "need", "ranks"), [
    ("8B", "0.6", "30.6", "rank 0"), ("8B", None, "244.2", "every rank"), ("4B", None, "119.9", "every rank")])
def test_solve_memory_on_two_nodes_gives_one_figure_per_node(cli: Cli, model: str, release: str | None, need: str,
                                                             ranks: str) -> None:
    """On H100s 0.6 loads on rank 0 alone (30.51 GiB); with no release named every rank's (8 x 30.51 = 244.11, 8 x
    14.98 = 119.87) is counted."""
    status, out, err = cli("memory", "--model", model, "--gpu", "h100", "--gpus", "16", "--node-gpus", "8", "--len",
                           "8k", "--no-reference", *(("--trinity-version", release) if release else ()))
    assert (status, err) == (0, "")
    assert (f"host memory: {need} GiB per node while the model loads (verl reads it in fp32 before FSDP shards it; "
            f"no reference model; here {ranks} loading the model)") in " ".join(out.split())


def test_a_plan_on_two_nodes_checks_each_against_the_load() -> None:
    """16 trainer GPUs on nodes of 8, no reference model, under 0.6 on H100s (rank 0 alone loads): 30.6 GiB of host
    memory per node holds the plan, 30.5 does not, though a node without rank 0 loads nothing."""
    kept, = plan("Qwen3-8B", gpu="h100", budget_gpus=16, exact=True, node_gpus=8, host_ram_gb=30.6,
                 reference_model=False, max_model_len=8192, offload=False, trinity_version="0.6")
    assert kept.best is not None
    assert (kept.best.gpus, kept.best.setting.label, kept.best.host_memory_gb) == (16, "Env", 30.6)
    refused, = plan("Qwen3-8B", gpu="h100", budget_gpus=16, exact=True, node_gpus=8, host_ram_gb=30.5,
                    reference_model=False, max_model_len=8192, offload=False, trinity_version="0.6")
    assert (refused.status, refused.best) == ("infeasible", None)
    assert "it needs 30.6 GiB of host memory per node while the model loads" in refused.reason


def test_a_cluster_job_on_four_nodes_needs_rank_0s_start_up_figure_on_each(cli: Cli, tmp_path: Path) -> None:
    """Qwen3-32B (untied, 32.762e9 parameters) with Offload on 8 H100s under 0.6 (rank 0 alone loads it), 4 nodes of
    2, no reference model: each node is
    checked at the start-up need, the load 4 x 32.762e9 / 2**30 = 122.05 GiB beside the node's pinned fp32 parameter
    shards (2 of 8 GPUs' share, 35.00 with the blocks rounded up), 157.1, though training holds 131.1 there: a pool of
    157.1 GiB a node places it, one of 157 does not."""
    fleet = tmp_path / "fleet.yaml"
    pool = "pools:\n  - {name: h100, gpu: H100-80GB, gpus_per_node: 2, nodes: 4, host_ram_gb: %s}\n"
    job = ("jobs:\n  - {name: big, model: Qwen3-32B, max_model_len: 4096, reference_model: false, required: true, "
           "trinity_version: '0.6'}\n")
    fleet.write_text(pool % "157.1" + job)
    status, out, _ = cli("cluster", str(fleet), "--time-limit", "10", "--json")
    placed, = json.loads(out)["placements"]
    assert (status, placed["nodes"], placed["trainer_gpus"], placed["host_memory_gb"],
            placed["plan"]["host_training_gb"]) == (0, [0, 1, 2, 3], 8, 157.1, 131.1)
    fleet.write_text(pool % "157" + job)
    status, out, _ = cli("cluster", str(fleet), "--time-limit", "10", "--json")
    assert (json.loads(out)["status"], json.loads(out)["placements"]) == ("infeasible", [])
