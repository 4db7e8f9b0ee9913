"""Small slips left by s69's reviews: `solve cluster --json`'s unplaced jobs say the one-GPU caution of their reason
in ``reason_caution_codes``, as `solve --json`'s answers do; a map's legend notes only the marks of the cells it
shows."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pydantic
import pytest
import yaml

import solver
from solver.maps import cheapest_by_length
from solver.render.maps import map_text
from solver.results import GpuMap, LengthMapRow
from solver.tables import load_catalog

Cli = Callable[..., tuple[int, str, str]]

SHORT = "one trainer GPU: Trinity-RFT's guide strongly advises more GPUs"
CODES = ["single-gpu-advised-against"]
CATALOG = load_catalog()


def _fleet(tmp_path: Path) -> Path:
    """A node of 8 A100s with 16 GiB of host memory, and three jobs none fit: Qwen3-32B, whose reason names the
    estimates' plan on one GPU, Qwen3-14B, whose names the plan on nodes with more host memory on one GPU, and
    Qwen3-4B at 131072 tokens, whose names a plan on 8 GPUs."""
    fleet = {"pools": [{"name": "p", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8, "host_ram_gb": 16}],
             "jobs": [{"name": "k", "model": "32B", "max_model_len": 16384, "rollout_gpus": 0},
                      {"name": "m", "model": "14B", "max_model_len": 8192, "rollout_gpus": 0},
                      {"name": "j", "model": "4B", "max_model_len": 131072, "rollout_gpus": 0}]}
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(fleet), encoding="utf-8")
    return path


def test_cluster_json_gives_an_unplaced_job_the_caution_codes_its_reason_says(cli: Cli, tmp_path: Path):
    status, out, err = cli("cluster", str(_fleet(tmp_path)), "--no-estimate", "--json")
    unplaced = {job["job"]: job for job in json.loads(out)["unplaced"]}
    assert (status, err) == (1, "")
    assert (unplaced["k"]["reason"], unplaced["k"]["reason_caution_codes"]) == (
        "p: the tables have no Qwen3-32B on A100-80GB (the memory model estimates a plan, Env + Offload on 1 GPU at "
        f"16384 tokens ({SHORT}), but with Offload it needs 594.2 GiB of host memory per node, more than the pool's "
        "host_ram_gb of 16 GiB)", CODES)
    assert (unplaced["m"]["reason"], unplaced["m"]["reason_caution_codes"]) == (
        "p: nothing in the tables for Qwen3-14B on A100-80GB within 8 GPUs trains with 16 GiB of host memory per node "
        "(the pool's host_ram_gb); on nodes with more host memory, Env + Offload on 1 GPU trains it (8192 tokens; "
        f"{SHORT}), and with Offload it needs 311.3 GiB of host memory per node; at the least, Env + SP=2 on 4 GPUs "
        "trains it (8192 tokens), and it needs 55.1 GiB of host memory per node while the model loads", CODES)
    assert list(unplaced["j"]) == ["job", "reason", "reason_code", "pools", "reason_for_several", "fits_with"]


def test_cluster_json_reads_back_and_refuses_codes_its_reason_does_not_say(cli: Cli, tmp_path: Path):
    _, out, _ = cli("cluster", str(_fleet(tmp_path)), "--no-estimate", "--json")
    printed = json.loads(out)
    assert solver.ClusterResult.model_validate(printed).model_dump(mode="json") == printed
    printed["unplaced"][2]["reason_caution_codes"] = CODES
    with pytest.raises(pydantic.ValidationError, match="reason_caution_codes is .*, but the reason says None"):
        solver.ClusterResult.model_validate(printed)


def test_a_map_s_legend_notes_no_mark_of_a_column_it_leaves_out():
    # Qwen3-4B at 8192 tokens on A100s: one GPU needs Env + Offload (and has the one-GPU caution), two and more train
    # it vanilla. Past one node the map leaves budget 1's column out: its legend said "O Offload (host memory per node
    # not checked ...)" for that column's cell all the same. With the column listed, the legend notes both.
    budgets = (1, 2, 4, 8, 16, 32)
    grid = cheapest_by_length(CATALOG, "A100-80GB", "Qwen3-4B", [8192], budgets)
    four_b = GpuMap(gpu="A100-80GB", by="len", model="Qwen3-4B", budget_gpus=budgets,
                    rows=(LengthMapRow(max_model_len=8192, plans=tuple(grid[8192, budget] for budget in budgets)),))
    assert map_text((four_b,)).split("\n")[-4:] == [
        "budget 1: columns left out (budgets=[...] maps them; the GpuMap has every budget)",
        "cells: setting@GPUs; evidence: documented, * inferred, ~ estimated, ~! estimated beyond the memory model's "
        "calibration; - nothing trains",
        "settings: E Env, O Offload, SPn Ulysses SP, van vanilla", ""]
    assert map_text((four_b.model_copy(update={"budgets_listed": True}),)).split("\n")[-4:] == [
        "cells: setting@GPUs; evidence: documented, * inferred, ~ estimated, ~! estimated beyond the memory model's "
        "calibration; - nothing trains",
        "settings: E Env, O Offload (host memory per node not checked: host_ram_gb not given), SPn Ulysses SP, van "
        "vanilla", f"† {SHORT}", ""]
