"""LoRA's host memory, and LoRA and the reference model for ``solve memory``, ``solve map`` and ``solve cluster``
(session 73). By verl 0.9.1's FSDP engine (``CPUOffloadPolicy(pin_memory=True)`` over the whole module) and Trinity 0.6
(``model_dtype: fp32`` for the actor), Offload keeps a LoRA actor's frozen base as fp32 parameter shards alone, pinned
(no gradients, no Adam moments: PEFT freezes them), and the adapter's parameters and gradients pinned and its Adam
moments pageable (counted in fp32, as on the GPU). PEFT adds the adapter before FSDP shards the model, so the load at
start-up holds it too. Figures: Qwen3-8B at rank 16 on a node of 8, on `test_hostref_s71`'s hand counts."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from test_hostref_s71 import ADAM_GIB, FP32_PINNED_GIB, GIB, LOAD_GIB
from test_refmodel_s72 import _shown

from solver.api import estimate_memory, map_plans, plan
from solver.memory import host_memory_gib, lora_parameters, offloaded_actor_bytes, pinned_rounding
from solver.tables import ModelLoading, QueryError, load_catalog

QWEN3_8B = load_catalog().model("Qwen3-8B")

# Qwen3-8B's adapted matrices per layer (outputs x inputs): q and o 4096 x 4096, k and v 1024 x 4096, gate and up
# 12288 x 4096, down 4096 x 12288: rank x (inputs + outputs) each, 75776 x rank a layer, 36 layers.
RANK = 16
ADAPTER = 36 * RANK * (2 * 8192 + 2 * 5120 + 3 * 16384)
# Each GPU of 8 pins rows / 8 of each lora_A (rank x inputs: 2 rows) and lora_B (outputs x rank) in fp32, rounded up
# to a power of two: lora_A 2 x 4096 x 4 = 2**15 (six a layer), 2 x 12288 x 4 = 98304 -> 2**17 (down's); lora_B
# 512 x 16 x 4 = 2**15 (q, o, down), 128 x 16 x 4 = 2**13 (k, v), 1536 x 16 x 4 = 98304 -> 2**17 (gate, up).
ADAPTER_PINNED_PER_GPU = 36 * (6 * 2**15 + 2**17 + 3 * 2**15 + 2 * 2**13 + 2 * 2**17)
ADAPTER_PINNED_GIB = 8 * ADAPTER_PINNED_PER_GPU / GIB  # a node of 8 GPUs
ADAPTER_LOAD_GIB = 4 * ADAPTER / GIB  # the adapter in fp32 on the loading rank, beside the model
# While training with Offload: the base's fp32 shards, and the adapter's parameters and gradients pinned, its two
# Adam moments pageable; the load (model and adapter, beside the actor's pinned parameters) is more.
LORA_TRAINING_GIB = FP32_PINNED_GIB + 2 * ADAPTER_PINNED_GIB + 8 * ADAPTER / GIB
LORA_LOAD_GIB = LOAD_GIB + ADAPTER_LOAD_GIB


def test_the_hand_counts_hold_together() -> None:
    assert ADAPTER == lora_parameters(QWEN3_8B, RANK) == 43_646_976
    assert ADAPTER_PINNED_PER_GPU == 25_362_432
    assert 4 * ADAPTER / 8 * pinned_rounding(QWEN3_8B, 8, 4, RANK) == pytest.approx(ADAPTER_PINNED_PER_GPU, rel=1e-12)
    assert LORA_TRAINING_GIB == pytest.approx(41.33059, abs=1e-5)
    base, states = offloaded_actor_bytes(QWEN3_8B, 8, RANK)
    shards = QWEN3_8B.parameters_b * 1e9 / GIB
    expected = (FP32_PINNED_GIB + ADAPTER_PINNED_GIB, LORA_TRAINING_GIB)
    assert (base * shards, states * shards) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(("offload", "reference", "loading", "need", "shown"), [
    # rank 0 alone loading (0.6 with FSDP2 on an H100)
    (False, False, "rank-0", LORA_LOAD_GIB, 30.7),  # full fine-tuning's 30.6 and the adapter's 0.16
    (False, True, "rank-0", LORA_LOAD_GIB + FP32_PINNED_GIB, 71.4),
    (True, False, "rank-0", LORA_LOAD_GIB + FP32_PINNED_GIB + ADAPTER_PINNED_GIB, 71.5),  # full fine-tuning: 142.3
    (True, True, "rank-0", LORA_LOAD_GIB + 2 * FP32_PINNED_GIB + ADAPTER_PINNED_GIB, 112.2),  # full: 183.0
    # every rank loading (the default: no release named), 8 loads of model and adapter
    (False, False, "every-rank", 8 * LORA_LOAD_GIB, 245.5),
    (False, True, "every-rank", 8 * LORA_LOAD_GIB + FP32_PINNED_GIB, 286.1),
    (True, False, "every-rank", 8 * LORA_LOAD_GIB + FP32_PINNED_GIB + ADAPTER_PINNED_GIB, 286.3),
    (True, True, "every-rank", 8 * LORA_LOAD_GIB + 2 * FP32_PINNED_GIB + ADAPTER_PINNED_GIB, 326.9),
])
def test_lora_s_host_need_on_a_node_of_8(offload: bool, reference: bool, loading: ModelLoading, need: float,
                                         shown: float) -> None:
    assert host_memory_gib(QWEN3_8B, 8, 8, offload, None, reference, RANK, loading=loading) == pytest.approx(
        need, rel=1e-12)
    assert _shown(need) == shown


def test_full_fine_tuning_s_host_need_is_unchanged() -> None:
    # Where rank 0 alone loads, training's need is the larger (every rank's load would outweigh it).
    assert host_memory_gib(QWEN3_8B, 8, 8, True, None, False, loading="rank-0") == pytest.approx(
        2 * FP32_PINNED_GIB + ADAM_GIB, rel=1e-12)


def test_the_planner_holds_a_lora_plan_to_lora_s_host_need() -> None:
    def best(lora_rank: int) -> tuple[bool, float | None] | None:
        # Trinity 0.6: rank 0 alone loads on H100s with Offload's FSDP2 (every rank's load would not fit 80 GiB)
        (answer,) = plan("Qwen3-8B", gpu="h100", budget_gpus=8, exact=True, max_model_len=8192, offload=True,
                         host_ram_gb=80.0, lora_rank=lora_rank, trinity_version="0.6")
        return None if answer.best is None else (answer.best.reference_model, answer.best.host_memory_gb)

    assert best(RANK) == (False, 71.5)
    assert best(0) is None  # full fine-tuning with Offload needs 183.0


def test_solve_memory_counts_lora_s_host_memory_and_takes_reference(cli: Callable[..., tuple[int, str, str]]) -> None:
    asked = ("memory", "--model", "8B", "--gpu", "h100", "--gpus", "8", "--len", "8192", "--offload",
             "--lora-rank", "16", "--host-ram", "100", "--trinity-version", "0.6")  # rank 0 alone loads on H100s
    code, out, err = cli(*asked)
    assert (code, err) == (0, "")
    assert ("host memory: 71.5 GiB per node for Offload (the actor's states, or the model while it loads beside the "
            "actor's pinned shards, whichever is more; no reference model; here at start-up, rank 0 loading the model; "
            "41.4 while training), within --host-ram 100 GiB"
            ) in " ".join(out.split())
    code, out, err = cli(*asked, "--reference")  # no release builds one for LoRA (counted as told before s74)
    assert (code, out) == (2, "")
    assert err.splitlines()[-1].startswith("solve memory: error: --reference with --lora-rank 16: no Trinity release")
    code, out, _ = cli(*asked[:-4], *asked[-2:], "--no-reference", "--json")
    answer = json.loads(out)
    assert (code, answer["host_memory_gib"], answer["reference_model"]) == (0, 71.5, False)
    code, out, _ = cli(*asked[:-6], *asked[-2:], "--json")  # full fine-tuning counts the reference model by default
    assert (code, json.loads(out)["host_memory_gib"], json.loads(out)["reference_model"]) == (0, 183.0, True)


def test_solve_memory_refuses_both_reference_flags(cli: Callable[..., tuple[int, str, str]]) -> None:
    code, out, err = cli("memory", "--model", "8B", "--gpu", "h100", "--gpus", "8", "--len", "8192", "--reference",
                         "--no-reference")
    assert (code, out) == (2, "")
    assert err.splitlines()[-1] == ("solve memory: error: --reference and --no-reference contradict each other: give "
                                    "one of them")


def test_estimate_memory_checks_reference_model_s_type() -> None:
    with pytest.raises(QueryError, match="^reference_model must be"):
        estimate_memory("Qwen3-8B", "h100", 8, 8192, reference_model="no")  # type: ignore[arg-type]


def test_solve_map_plans_lora_runs(cli: Callable[..., tuple[int, str, str]]) -> None:
    asked = ("map", "--model", "8B", "--gpu", "h100", "--budgets", "8", "--host-ram", "40")
    code, out, _ = cli(*asked, "--lora-rank", "16", "--no-reference", "--json")
    (gpu_map,) = json.loads(out)
    (cell,) = gpu_map["rows"][0]["plans"]
    assert (code, gpu_map["lora_rank"], gpu_map["reference_model"]) == (0, 16, False)
    held = (cell["lora_rank"], cell["reference_model"], cell["offload"], cell["host_memory_gb"])
    assert held == (16, False, False, 30.7)
    code, out, _ = cli(*asked, "--json")  # full fine-tuning loads beside the reference model: 71.2 GiB, not 40
    (gpu_map,) = json.loads(out)
    assert "lora_rank" not in gpu_map and "reference_model" not in gpu_map
    assert gpu_map["rows"][0]["plans"] == [None]
    code, out, _ = cli(*asked, "--lora-rank", "16")
    assert out.splitlines()[0] == ("H100-80GB: longest context per model and GPU budget, LoRA rank 16, host memory "
                                   "40 GiB per node")
    code, out, err = cli(*asked, "--lora-rank", "16", "--reference")  # no release builds one for LoRA (s74)
    assert (code, out) == (2, "") and err.startswith("solve map: error: --reference with --lora-rank 16: no Trinity")


def test_map_plans_checks_the_lora_rank() -> None:
    with pytest.raises(QueryError, match=r"^lora_rank must be a whole number from 0 \(full fine-tuning\) to 65536, "
                                         "got 70000$"):
        map_plans("Qwen3-8B", gpu="h100", budgets=[8], lora_rank=70000)


FLEET = """pools:
  - {name: a, gpu: H100, nodes: 1, gpus_per_node: 8, host_ram_gb: 60}
jobs:
  - {name: lora, model: Qwen3-8B, max_model_len: 8192, lora_rank: 16, trinity_version: "0.6"}
  - {name: full, model: Qwen3-8B, max_model_len: 8192, reference_model: false, trinity_version: "0.6"}
"""


def test_a_cluster_job_gives_its_lora_rank_and_reference_model(tmp_path: Path,
                                                               cli: Callable[..., tuple[int, str, str]]) -> None:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET)
    code, out, _ = cli("cluster", str(fleet), "--json")
    answer = json.loads(out)
    (placed,) = answer["placements"]
    assert (code, placed["job"], placed["host_memory_gb"]) == (1, "lora", 30.7)
    assert (placed["plan"]["lora_rank"], placed["plan"]["reference_model"]) == (16, False)
    reasons = {job["job"]: job["reason"] for job in answer["unplaced"]}
    # Full fine-tuning without a reference model: its load alone, 30.6 GiB (the room is the LoRA job's). Both jobs
    # name Trinity 0.6, whose rank 0 alone loads the model on H100s (every rank's would not fit the pool's 60 GiB).
    assert "it needs at least 3 GPUs and 30.6 GiB of host memory on one node" in reasons["full"]


@pytest.mark.parametrize(("field", "message"), [
    ("lora_rank: -1", "lora_rank: must be at least 0, got -1"),
    ("lora_rank: 70000", "lora_rank: must be at most 65536, got 70000"),
    ("lora_rank: true", "lora_rank: must be a whole number, got true"),
    ("reference_model: 1", "reference_model: must be true or false, got 1"),
])
def test_bad_job_fields_are_refused(tmp_path: Path, cli: Callable[..., tuple[int, str, str]], field: str,
                                    message: str) -> None:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(f"pools:\n  - {{name: a, gpu: H100, nodes: 1, gpus_per_node: 8}}\n"
                     f"jobs:\n  - {{name: j, model: 8B, max_model_len: 8192, {field}}}\n")
    code, out, err = cli("cluster", str(fleet))
    assert (code, out, err) == (2, "", f"solve cluster: error: {fleet}: line 4: job j, {message}\n")


def test_solve_cluster_points_the_flags_to_the_job_fields(tmp_path: Path,
                                                          cli: Callable[..., tuple[int, str, str]]) -> None:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET)
    code, _, err = cli("cluster", str(fleet), "--no-reference")
    assert code == 2
    assert err.splitlines()[-1] == ("solve cluster: error: --no-reference is an option of solve, solve memory and "
                                    "solve map, not of solve cluster (the file gives it: a job's reference_model)")


def test_explain_past_a_table_s_rows_speaks_of_lora(cli: Callable[..., tuple[int, str, str]]) -> None:
    code, out, _ = cli("--model", "4B", "--gpu", "a100", "--gpus", "2", "--maximize", "len", "--lora-rank", "16",
                       "--explain")
    assert code == 0
    assert ("memory_model the A100-80GB table for 1 GPU measured full fine-tuning, which holds more than this LoRA "
            "run: its cells that trained vouch up to 28672 tokens, and a '-' or its rows' end says nothing of LoRA; "
            "the memory model's longest fitting length there is 27648 tokens") in " ".join(out.split())
    assert "says '-'" not in out
