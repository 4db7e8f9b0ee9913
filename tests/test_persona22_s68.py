"""Session 68, persona22 (two nodes of 8 H100s, Qwen3-14B and 32B and a Llama-3.1-8B of their own, at 32k-128k): a
memory-model file that `solve calibrate` warned of (a multiplier below its physical range, all of the memory taken as
usable) says so again wherever it plans, since the plans name only the file; and a cells row without a cell for one of
its table's models says what a row needs."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from solver.calibrate import implausible
from solver.tables import load_memory_model

SHIPPED = Path(__file__).parent.parent / "tables" / "memory-model.yaml"

WARNED = ("warning: --memory-model {path}: states 0.9 below its physical range; usable_env 1 at the edge of its "
          "plausible range, as solve calibrate warned when it fitted it: estimates from it may not hold (fit it on "
          "more cells, or with --with-tables)")

Cli = Callable[..., tuple[int, str, str]]


def _odd_model(tmp_path: Path) -> Path:
    """The shipped memory model with the states at 0.9 (below 16 bytes per parameter) and all of the memory usable
    with Env, as a fit on two cells of one's own left it."""
    text = yaml.safe_load(SHIPPED.read_text(encoding="utf-8"))
    text["coefficients"].update(states=0.9, usable_env=1.0)
    path = tmp_path / "odd.yaml"
    path.write_text(yaml.safe_dump(text), encoding="utf-8")
    return path


def test_the_short_words_name_each_multiplier_outside_its_range_then_each_at_an_edge(tmp_path: Path):
    assert implausible(load_memory_model(_odd_model(tmp_path)).coefficients) == [
        "states 0.9 below its physical range", "usable_env 1 at the edge of its plausible range"]
    assert implausible(load_memory_model(SHIPPED).coefficients) == []


def test_solve_memory_with_a_warned_fit_warns_again_in_one_line(cli: Cli, tmp_path: Path):
    odd = _odd_model(tmp_path)
    status, out, err = cli("memory", "--model", "14B", "--gpu", "h100", "--gpus", "16", "--len", "64k", "--sp", "4",
                           "--env", "--memory-model", str(odd))
    assert (status, err) == (0, f"solve memory: {WARNED.format(path=odd)}\n")
    assert "99.0% of the memory, the margin taken off" in out  # what the warning is about: all of it usable


def test_solve_with_a_warned_fit_warns_and_still_answers(cli: Cli, tmp_path: Path):
    odd = _odd_model(tmp_path)
    status, out, err = cli("--model", "32B", "--gpu", "h100", "--gpus", "16", "--len", "64k", "--memory-model",
                           str(odd), "--json")
    assert status == 0 and '"evidence": "estimated"' in out
    assert err == f"solve: {WARNED.format(path=odd)}\n"


def test_the_shipped_fit_given_as_a_file_warns_of_nothing(cli: Cli):
    status, _, err = cli("memory", "--model", "14B", "--gpu", "h100", "--gpus", "16", "--len", "64k", "--sp", "4",
                         "--env", "--memory-model", str(SHIPPED))
    assert (status, err) == (0, "")


@pytest.mark.parametrize("command", ["map", "cluster"])
def test_map_and_cluster_warn_in_their_own_names(cli: Cli, tmp_path: Path, command: str):
    odd = _odd_model(tmp_path)
    if command == "map":
        argv: tuple[str, ...] = ("map", "--gpu", "h100", "--model", "0.6B", "--budgets", "1", "--json")
    else:
        fleet = tmp_path / "fleet.yaml"
        fleet.write_text("pools: [{name: p, gpu: H100-80GB, nodes: 1, gpus_per_node: 8}]\n"
                         "jobs: [{name: j, model: Qwen3-32B, max_model_len: 32768}]\n", encoding="utf-8")
        argv = ("cluster", str(fleet), "--json")
    status, _, err = cli(*argv, "--memory-model", str(odd))
    assert (status, err) == (0, f"solve {command}: {WARNED.format(path=odd)}\n")


def test_a_cells_row_without_a_model_of_its_table_says_what_a_row_needs(cli: Cli, tmp_path: Path):
    cells = tmp_path / "h100-cells.yaml"
    cells.write_text("gpu: H100-80GB\nmemory_gb: 80\nsource: ours\ntables:\n"
                     "  - {gpus: 8, section: s, models: [Qwen3-14B, Qwen3-32B], rows: [\n"
                     "      {max_model_len: 32768, cells: {Qwen3-32B: Env + Offload + SP=2}},\n"
                     "      {max_model_len: 65536, cells: {Qwen3-14B: Env + SP=4, Qwen3-32B: '-'}}]}\n",
                     encoding="utf-8")
    status, out, err = cli("--model", "14B", "--gpu", "h100", "--len", "64k", "--cells", str(cells))
    assert (status, out) == (2, "")
    # persona91c: the line of the row the table's check refuses (words89: it was the table's)
    assert err == (f"solve: error: --cells {cells}: line 6: table gpus=8: row max_model_len=32768: no cell for "
                   "Qwen3-14B (a row gives every model of its table a cell: the first setting that trained, or '-' where none did; "
                   "no cell says 'not measured', so give rows only at lengths where you measured every model of the "
                   "table)\n")


def test_checking_a_memory_model_file_loads_no_linear_solver():
    # `implausible` checks a fit without fitting one: OR-Tools' linear solver, which only `calibrate` uses, stays
    # unloaded (a fresh interpreter, since other tests calibrate in this one).
    code = ("import sys; from pathlib import Path; from solver.cli.options import memory_model_option; "
            f"memory_model_option(Path({str(SHIPPED)!r}), 'solve memory'); "
            "print('ortools.linear_solver' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert (done.stdout, done.stderr) == ("False\n", "")
