"""Small slips earlier reviews left (session 71, helper smallslips13): ``--buy`` buys nodes for a pool at ``nodes: 0``
(out of service, or a GPU type one has none of yet: the file cannot tell them apart), and its table says so;
``--emit-dir DIR --json``'s ``config_file`` is relative where DIR is (docs/json.md); the tables' longest length past
``solve memory``'s "at least to" is the planner's (docs/memory.md: ``solve memory`` runs no solver); ``--out`` with no
plan leaves a file already there as it was, says so on stderr, and exits 1."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

Cli = Callable[..., tuple[int, str, str]]

DOWN = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8},
                  {"name": "h20", "gpu": "H20-96GB", "nodes": 0, "gpus_per_node": 8}],
        "jobs": [{"name": "small", "model": "Qwen3-4B", "max_model_len": 32768, "rollout_gpus": 2},
                 {"name": "pinned", "model": "Qwen3-8B", "max_model_len": 32768, "rollout_gpus": 2, "pool": "h20"}]}
"""One A100 node, and an H20 pool down for maintenance (nodes: 0) that `pinned` may alone use."""


def _fleet(tmp_path: Path) -> Path:
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(DOWN), encoding="utf-8")
    return path


def test_buy_buys_for_a_pool_out_of_service_and_its_table_shows_the_pool_had_none(cli: Cli, tmp_path: Path):
    # docs/cluster.md: a pool at nodes: 0 is weighed as any other, and its 'nodes then' is all it would have.
    status, out, err = cli("cluster", str(_fleet(tmp_path)), "--buy")
    lines = out.splitlines()
    assert (status, err) == (0, "")
    assert lines[0] == ("status: optimal; to place every job, buy 8 GPUs (1 node), proven the fewest (at their fewest "
                        "they take 7 of the fleet's 8 GPUs; the 8 bought are for the pools")  # s81: its figure
    table = lines[lines.index("what to buy") + 4:lines.index("what to buy") + 6]
    assert table == ["│ a100 │ A100-80GB │     1 │   0 │           0 │          1 │",
                     "│ h20  │ H20-96GB  │     0 │  +1 │           8 │          1 │"]


def test_config_file_is_relative_to_the_working_directory_where_emit_dir_is(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # docs/json.md (Paths, as given): relative where DIR is, to the directory the command ran in; absolute where DIR is.
    path = _fleet(tmp_path)
    monkeypatch.chdir(tmp_path)
    placed = json.loads(cli("cluster", str(path), "--emit-dir", "configs", "--json")[1])
    (relative,) = [placement["config_file"] for placement in placed["placements"]]
    assert relative == os.path.join("configs", "small.yaml")
    assert (tmp_path / relative).is_file()
    placed = json.loads(cli("cluster", str(path), "--emit-dir", str(tmp_path / "absolute"), "--json")[1])
    absolute = [placement["config_file"] for placement in placed["placements"]]
    assert absolute == [str(tmp_path / "absolute" / "small.yaml")]


def test_the_planner_gives_the_tables_longest_that_solve_memory_bounds_below(cli: Cli):
    # docs/memory.md: solve memory (which runs no solver: test_cli_planner's OR-Tools check) says "at least to" the
    # next length's cell; the planner, from the tables alone on exactly those GPUs, gives how far they reach.
    flags = ["memory", "--model", "8B", "--gpu", "h20", "--gpus", "2", "--len", "8192", "--sp", "2", "--no-env"]
    estimate = json.loads(cli(*flags, "--json")[1])
    assert (estimate["longest_len"], estimate["tables_longest"],
            estimate["tables_longer"]["source"]["max_model_len"]) == (11264, None, 12288)
    status, out, _ = cli("--model", "8B", "--gpu", "h20", "--gpus", "2", "--exact", "--sp", "2", "--no-env",
                         "--no-offload", "--maximize", "len", "--no-estimate", "--json")
    (answer,) = json.loads(out)
    assert (status, answer["plans"][0]["max_model_len"]) == (0, 16384)


def test_out_with_no_plan_leaves_the_file_there_says_so_and_exits_1(cli: Cli, tmp_path: Path):
    # docs/trinity.md (No plan): the A100-80GB tables stop Qwen3-8B at 102400; a fragment of an earlier run stays.
    target = tmp_path / "plan.yaml"
    target.write_text("an earlier run's\n", encoding="utf-8")
    status, out, err = cli("--model", "8B", "--len", "200000", "--gpu", "a100-80g", "--out", str(target))
    assert (status, err) == (
        1, f"solve: note: no plan, so {target} is not written (the file there is left as it was)\n")
    assert out.startswith("A100-80GB · Qwen3-8B · cheapest plan for 200000 tokens within 6 GPUs: infeasible\n")
    assert target.read_text(encoding="utf-8") == "an earlier run's\n"
