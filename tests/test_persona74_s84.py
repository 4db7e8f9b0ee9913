"""What a user of two nodes of 8 H200s training Qwen3-32B and Llama-3.1-70B past the tables trips on (persona74,
s84)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

H200_CELLS = ("gpu: H200\nmemory_gb: 141\nsource: our runs\ntables:\n"
              "  - gpus: {gpus}\n    section: mine\n    models: [Qwen3-32B, Llama-3.1-70B]\n    rows:\n"
              "      - {{max_model_len: 131072, cells: {{Qwen3-32B: {cell}, Llama-3.1-70B: {other}}}}}\n")
"""Cells of yours on H200s: one row, a cell per model."""


@pytest.mark.parametrize("command", [("calibrate",), ("tables", "--gpu", "h200"),
                                     ("--model", "32B", "--gpu", "h200", "--gpus", "16", "--len", "128k")])
def test_a_cell_of_sp_across_nodes_gets_a_note_saying_it_counts_only_as_trained(cli, tmp_path: Path,
                                                                                command: tuple[str, ...]):
    # SP=16 on 16 GPUs (two nodes of 8) is outside the order cells are read in: the Env + SP=8 the user tried first
    # is not counted as out of memory, and on nodes of 8 no plan takes SP=16. It used to pass without a word.
    cells = tmp_path / "h200.yaml"
    cells.write_text(H200_CELLS.format(gpus=16, cell="Env + SP=16", other="Env + Offload + SP=8"), encoding="utf-8")
    prog = "solve" if command[0].startswith("--") else f"solve {command[0]}"
    status, _, err = cli(*command, "--cells", str(cells))
    assert status == 0 and (
        f"{prog}: note: {cells}: table gpus=16, row max_model_len=131072, Qwen3-32B: 'Env + SP=16' is outside the "
        "order cells are read in (SP=16 puts each SP group across nodes of 8 GPUs, and rft-solver plans it only where "
        "--node-gpus gives nodes of 16 or more): it counts as a setting that trained, not as saying that the settings "
        "before it ran out of memory\n") in err
    cells.write_text(H200_CELLS.format(gpus=16, cell="Env + SP=8", other="Env + Offload + SP=8"), encoding="utf-8")
    status, _, err = cli(*command, "--cells", str(cells))
    assert status == 0 and "outside the order" not in err


def test_solve_cluster_names_a_pools_gpus_per_node_for_a_cell_of_sp_across_nodes(cli, tmp_path: Path):
    cells, fleet = tmp_path / "h200.yaml", tmp_path / "fleet.yaml"
    cells.write_text(H200_CELLS.format(gpus=16, cell="Env + SP=16", other="Env + Offload + SP=8"), encoding="utf-8")
    fleet.write_text("pools:\n  - {name: h200, gpu: H200, nodes: 2, gpus_per_node: 8}\njobs:\n"
                     "  - {name: long, model: Qwen3-32B, max_model_len: 65536}\n", encoding="utf-8")
    status, _, err = cli("cluster", str(fleet), "--cells", str(cells))
    assert status == 0 and (
        f"solve cluster: note: {cells}: table gpus=16, row max_model_len=131072, Qwen3-32B: 'Env + SP=16' is outside "
        "the order cells are read in (SP=16 puts each SP group across nodes of 8 GPUs, and rft-solver plans it only "
        "where a pool's gpus_per_node is 16 or more): it counts as a setting that trained, not as saying that the "
        "settings before it ran out of memory\n") in err


def test_offload_without_env_gets_the_note_with_the_cells_after_the_first_counted(cli, tmp_path: Path):
    cells = tmp_path / "h200.yaml"
    cells.write_text(H200_CELLS.format(gpus=8, cell="Offload + SP=8", other="Offload + SP=4"), encoding="utf-8")
    status, _, err = cli("calibrate", "--cells", str(cells))
    assert status == 0 and (
        f"solve calibrate: note: {cells}: table gpus=8, row max_model_len=131072, Qwen3-32B: 'Offload + SP=8' (and 1 "
        "more cell) is outside the order cells are read in (the order tries Offload with Env only): it counts as a "
        "setting that trained, not as saying that the settings before it ran out of memory\n") in err


def test_solve_memory_counts_the_reference_model_by_the_release_it_is_given_as_the_docs_say(cli):
    # docs/memory.md said solve memory takes no --trinity-version and counts 0.6's reference model; it takes one:
    # Qwen3-32B on two nodes of 8 H200s loads beside a bf16 reference model under 0.5.x (35.0 GiB of pinned shards a
    # node), an fp32 one under 0.6 (70.0). The untied model (122.05 GiB in fp32) loads on rank 0 alone under 0.5.1
    # (verl's rule) and 0.6 (FSDP2 on a 9.0 GPU): 157.1 and 192.1; on every rank of the node under 0.5.2: 8 x 122.05
    # + 35.0 = 1011.4.
    asked = ("memory", "--model", "32B", "--gpu", "h200", "--gpus", "16", "--len", "128k", "--sp", "8", "--env")
    figures = {}
    for release in ("0.5.1", "0.5.2", "0.6"):
        status, out, _ = cli(*asked, "--trinity-version", release)
        assert status == 0
        figures[release] = next(line for line in out.splitlines() if line.startswith("host memory:")).split()[2]
    assert figures == {"0.5.1": "157.1", "0.5.2": "1011.4", "0.6": "192.1"}
    text = (Path(__file__).parent.parent / "docs" / "memory.md").read_text(encoding="utf-8")
    assert "in `solve memory`, which takes none" not in text
    assert "(`--trinity-version`, `solve`'s and\n`solve memory`'s, the API's `trinity_version=`" in text


def test_a_fit_on_cells_of_two_nodes_is_not_said_to_be_calibrated_on_one(cli, tmp_path: Path):
    # A fit on cells of 16 H200s (two nodes of 8, as cells are read) said "2 nodes (NCCL's memory calibrated on one
    # node)" of an estimate on those very 16 GPUs; it is beyond its calibration only on more nodes than that.
    cells, fit = tmp_path / "h200.yaml", tmp_path / "fit.yaml"
    cells.write_text(H200_CELLS.format(gpus=16, cell="Env + SP=8", other="Env + Offload + SP=8"), encoding="utf-8")
    assert cli("calibrate", "--cells", str(cells), "--out", str(fit))[0] == 0
    asked = ("memory", "--model", "Llama-3.1-70B", "--gpu", "h200", "--len", "128k", "--sp", "8", "--env", "--offload",
             "--memory-model", str(fit), "--json")
    status, out, _ = cli(*asked, "--gpus", "16")
    assert status == 0 and json.loads(out)["beyond_calibration"] == []
    status, out, _ = cli(*asked, "--gpus", "32")
    assert status == 0 and json.loads(out)["beyond_calibration"] == [
        "32 GPUs (calibrated up to 16)", "4 nodes (NCCL's memory calibrated on up to 2 nodes)"]
    status, out, _ = cli(*asked[:-3], "--gpus", "16", "--json")  # the shipped fit's tables ran on one node
    assert status == 0 and "2 nodes (NCCL's memory calibrated on one node)" in json.loads(out)["beyond_calibration"]


@pytest.mark.parametrize("written", ["--tp", "--tensor-parallel-size", "--tensor_model_parallel_size"])
@pytest.mark.parametrize("command", [(), ("memory", "--sp", "8")])
def test_a_tensor_parallel_option_is_told_the_trainer_has_none_not_did_you_mean_top(cli, written: str,
                                                                                    command: tuple[str, ...]):
    # --tp, from Megatron or vLLM, was answered "did you mean --top?" (a typo away): the FSDP trainer has no tensor
    # parallelism; SP is what splits its sequences, and the rollout's TP is its own key.
    prog = " ".join(("solve", *command[:1]))
    status, out, err = cli(*command, "--model", "32B", "--gpu", "h200", "--gpus", "16", "--len", "64k", written, "2")
    assert (status, out) == (2, "") and err.endswith(
        f"{prog}: error: unrecognized arguments: {written} 2 (the trainer rft-solver plans, verl's FSDP, has no tensor "
        "parallelism: Ulysses SP splits each sequence over --sp S GPUs instead; the rollout's tensor parallelism is "
        "its own, explorer.rollout_model.tensor_parallel_size)\n") and err.count("\n") == 2
    if not command:  # a typo of --top is still told it
        status, _, err = cli("--model", "32B", "--gpu", "h200", "--gpus", "16", "--len", "64k", "--to", "2")
        assert status == 2 and err.endswith("--to 2 (did you mean --top?)\n")


@pytest.mark.parametrize(("field", "option"), [("margin: 0.05", "--margin F"),
                                               ("memory_model: fit.yaml", "--memory-model FILE"),
                                               ("token_budget: auto", "--token-budget MODE|N")])
def test_a_jobs_field_that_is_a_cluster_option_is_told_the_option(cli, tmp_path: Path, field: str, option: str):
    # A wider margin for the one job far past the calibration (Llama-3.1-70B) was refused as an unknown field alone.
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: h200, gpu: H200, nodes: 2, gpus_per_node: 8}\njobs:\n  - name: big\n"
                     f"    model: Llama-3.1-70B\n    max_model_len: 65536\n    {field}\n", encoding="utf-8")
    key = field.split(":")[0]
    assert cli("cluster", str(fleet)) == (2, "", (
        f"solve cluster: error: {fleet}: line 7: job big: unknown field '{key}' (solve cluster's {option} gives it, "
        "for every job of the file; fields: name, max_model_len, rollout_gpus, priority, pool, required, "
        "train_batch_size, lora_rank, lora_targets, lora_exclude_modules, reference_model, critic, dpo, "
        "trinity_version, model, model_config)\n"))
