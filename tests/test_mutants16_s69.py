"""Tests that kill hand-made mutants of s69's later merges (fleetops, smallslips10, plannerclock, deadcode7) which
the merges' own tests let live (s69 mutants16; the table: /work/keep/review-s69-mutants16-table.md)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from command_words import make_query

import solver
from solver.explain import explain
from solver.results import PurchaseResult
from solver.solve import plan
from solver.tables import load_catalog

Cli = Callable[..., tuple[int, str, str]]

CATALOG = load_catalog()

OUT_OF_SERVICE = "h20: the pool has no nodes now (nodes: 0)"


def _fleet(tmp_path: Path, *pinned: str) -> Path:
    """One A100 node with a job that fits it, and an H20 pool out of service (nodes: 0) that the `pinned` jobs (Qwen3-8B
    at 32768 tokens with 2 rollout GPUs each) may alone use."""
    fleet = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8},
                       {"name": "h20", "gpu": "H20-96GB", "nodes": 0, "gpus_per_node": 8}],
             "jobs": [{"name": "small", "model": "Qwen3-4B", "max_model_len": 32768, "rollout_gpus": 2},
                      *({"name": name, "model": "Qwen3-8B", "max_model_len": 32768, "rollout_gpus": 2, "pool": "h20"}
                        for name in pinned)]}
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(fleet), encoding="utf-8")
    return path


def test_jobs_pinned_to_a_pool_of_no_nodes_share_one_row_whose_reason_reads_true_of_each(cli: Cli, tmp_path: Path):
    # The out-of-service clause reads the same for one job and for several: no words of its own for several.
    path = _fleet(tmp_path, "pinned", "pinned2")
    status, out, _ = cli("cluster", str(path))
    assert status == 1 and f"│ pinned, pinned2 │ {OUT_OF_SERVICE} │" in out.splitlines()
    unplaced = json.loads(cli("cluster", str(path), "--json")[1])["unplaced"]
    assert [(job["job"], job["reason"], job["reason_for_several"]) for job in unplaced] == [
        ("pinned", OUT_OF_SERVICE, None), ("pinned2", OUT_OF_SERVICE, None)]


def test_a_purchase_read_from_json_made_before_searched_keeps_the_words_of_a_search_that_ran(cli: Cli, tmp_path: Path):
    # At 0.01 s the planner's questions end before the pinned jobs' ways (as in test_fleetops_s69), so no search ran.
    # JSON made before the key (`searched` null) cannot say so: its status line is the one it had then.
    path = _fleet(tmp_path, "pinned", "pinned2")
    bought = json.loads(cli("cluster", str(path), "--buy", "--time-limit", "0.01", "--json")[1])
    searched = bought.pop("searched")
    assert (bought["status"], searched, bought["ways_cut_short"]) == ("unknown", False, ["pinned", "pinned2"])
    older = PurchaseResult.model_validate(bought)
    assert older.searched is None
    assert solver.cluster_text(older, path).splitlines()[0] == (
        "status: unknown: time ran out before the search found a purchase that places every job (raise time_limit_s)")


def test_two_combinations_that_would_rank_before_the_plan_are_each_said_to_fail_a_rule():
    query = make_query(CATALOG, estimate="never", gpu="a100", model="0.6B", max_model_len=32768, budget_gpus=6)
    (answer,) = plan(query, CATALOG)
    assert explain(CATALOG, query, answer)[0].detail == (
        "SP=2 on 6 GPUs is the cheapest plan at 32768 tokens within 6 GPUs; each of the 2 combinations of GPU count, "
        "Env, Offload and SP that would rank before it (on 6 GPUs) fails a rule:")


@pytest.mark.parametrize(("argv", "error"), [
    (("--gpu", "4XA100", "--model", "8B", "--len", "8192"),  # the count before the name, in capitals
     ("solve: error: --gpu '4XA100' gives 4 A100-80GB GPUs in one name: give the GPU type and the count apart: --gpu "
      "A100 --gpus 4\n")),
    (("memory", "--gpu", " a100x4", "--model", "8B", "--gpus", "4", "--len", "8192"),  # one name, as given
     ("solve memory: error: --gpu ' a100x4' gives 4 A100-80GB GPUs in one name: give the GPU type and the count "
      "apart: --gpu a100 --gpus 4\n")),
])
def test_a_gpu_name_with_a_count_in_capitals_or_after_a_space_is_told_to_give_the_count_apart(
        cli: Cli, argv: tuple[str, ...], error: str):
    assert cli(*argv) == (2, "", error)


MI300X_CELLS = {"gpu": "MI300X", "memory_gb": 192, "source": "made-up cells",
                "tables": [{"gpus": gpus, "section": f"{gpus} x MI300X", "models": ["Qwen3-4B"],
                            "rows": [{"max_model_len": 8192, "cells": {"Qwen3-4B": cell}}]}
                           for gpus, cell in ((1, "Env + Offload"), (2, "vanilla"))]}
"""Qwen3-4B at 8192 tokens on MI300X: Env + Offload on one GPU, vanilla on two (made up)."""


def test_a_map_names_the_rocm_caution_only_where_a_column_shown_has_an_env_cell(cli: Cli, tmp_path: Path):
    cells = tmp_path / "cells.yaml"
    cells.write_text(yaml.safe_dump(MI300X_CELLS), encoding="utf-8")
    asked = ("map", "--model", "4B", "--gpu", "mi300x", "--cells", str(cells), "--by", "len", "--no-estimate")
    status, out, _ = cli(*asked, "--gpus-up-to", "32")  # past a node: budget 1's column, E+O@1, is left out
    assert status == 0 and "budgets 1, 3, 5 to 7 and 24 to 31: columns left out" in out
    assert "E+O@1" not in out and "caution:" not in out
    status, out, _ = cli(*asked, "--budgets", "1,2")
    assert status == 0 and "E+O@1" in out
    assert " ".join(out.split()).endswith(
        "caution: ROCm: PyTorch's ROCm builds also read PYTORCH_HIP_ALLOC_CONF (set it the same, or not at all), and a "
        "build without expandable segments ignores them with a warning, so Env may not take effect: check yours "
        "(solve --no-env plans without it)")
