"""Gaps users met (session 59): nvidia-smi's MiB given as GB below the old 16384 GB bound (a T4's 15360) is refused
with both readings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

import solver
from solver.tables import TableError, load_catalog, load_fleet

CATALOG = load_catalog()


@pytest.mark.parametrize(("smi", "gib"), [("15360", "15.0"), ("8192", "8.0"), ("16384", "16.0"), ("11264", "11.0")])
def test_a_bare_mib_figure_no_gpu_has_in_gb_is_refused_with_both_readings(cli, smi: str, gib: str):
    # A T4's 15360 MiB (and 8 to 16 GiB cards'): read as 15360 GB before, below the old bound of 16384.
    status, out, err = cli("--model", "0.6B", "--gpu", "t4-mine", "--gpu-memory", smi, "--len", "4096")
    assert (status, out) == (2, "")
    assert err.splitlines() == [*err.splitlines()[:-1], (
        f"solve: error: argument --gpu-memory: must be from 8 to 4096 (GB), got '{smi}' (no GPU has {smi} GB; if it "
        f"is nvidia-smi's total in MiB, {gib} GiB, give --gpu-memory {smi}MiB)")]
    with pytest.raises(solver.QueryError) as caught:
        solver.described_gpu_type("T4-mine", memory_gb=int(smi))
    assert str(caught.value) == (f"T4-mine: its memory must be from 8 to 4096 GB, got {smi} GB (no GPU has {smi} GB; "
                                 f"if it is nvidia-smi's total in MiB, {gib} GiB, give memory_mib={smi})")
    status, out, _ = cli("--model", "0.6B", "--gpu", "t4-mine", "--gpu-memory", f"{smi}MiB", "--len", "4096")
    assert status == 0 and out.startswith("t4-mine · Qwen3-0.6B")


def test_a_pools_mib_figure_as_gb_is_refused_with_both_readings(tmp_path: Path):
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump({"pools": [{"name": "lab", "gpu": "T4-mine", "gpu_memory_gb": 15360, "nodes": 1,
                                               "gpus_per_node": 4}],
                                    "jobs": [{"name": "a", "model": "Qwen3-0.6B", "max_model_len": 4096}]}),
                    encoding="utf-8")
    with pytest.raises(TableError) as caught:
        load_fleet(path, CATALOG)
    assert str(caught.value) == (f"{path}: pool lab, gpu_memory_gb: must be at most 4096, got 15360 (no GPU has 15360 "
                                 "GB; if it is nvidia-smi's total in MiB, 15.0 GiB, give gpu_memory_mib: 15360)")


@pytest.mark.parametrize("sold", [24, 48, 80, 96, 141, 192, 288, 1024, 4096])
def test_gb_figures_below_any_mib_figure_are_still_taken(cli, sold: int):
    gpu_type = solver.described_gpu_type("Mine", memory_gb=sold)
    assert (gpu_type.memory_gb, gpu_type.memory_mib) == (sold, None)
    status, out, _ = cli("--model", "0.6B", "--gpu", "mine", "--gpu-memory", str(sold), "--len", "4096", "--json")
    (answer,) = json.loads(out)
    assert (status, answer["gpu"], answer["status"]) == (0, "mine", "optimal")


@pytest.mark.parametrize("number", ["4097", "8191"])
def test_a_bare_number_past_the_bound_but_no_mib_figure_gets_no_mib_hint(cli, number: str):
    status, _, err = cli("--model", "0.6B", "--gpu", "mine", "--gpu-memory", number, "--len", "4096")
    assert (status, err.splitlines()[-1]) == (2, f"solve: error: argument --gpu-memory: must be from 8 to 4096 (GB), "
                                                 f"got '{number}'")
