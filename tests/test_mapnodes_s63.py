"""`solve map` past one node (session 63): `--gpus-up-to 16` printed 16 budget columns, about 330 characters wide,
the budgets 9 to 15 repeating 8's plans. A map past one node now shows a run of consecutive budgets with the same
plans as one column (on nodes of 8: 1, 2-3, 4-7, 8-15, 16), and `--budgets 1,2,4,8,16` maps only the budgets asked;
`--json` keeps a plan (or null) for every budget either way."""

from __future__ import annotations

import io
import json
from collections.abc import Callable

import pytest
from rich.console import Console

import solver
import solver.cli.maps
from solver.render import PLAIN_TEXT
from solver.tables import QueryError

Cli = Callable[..., tuple[int, str, str]]

TWO_NODES_32B = ("map", "--gpu", "h100", "--model", "32B", "--host-ram", "512", "--trinity-version", "0.6")
"""Qwen3-32B on H100s with 512 GiB of host memory per node: nothing trains on one node (Offload's states need 594.2
GiB there), and two nodes share them. (Trinity 0.6 with FSDP2 on an H100 loads the model on rank 0 alone: no release
named, each of a node's 8 ranks would, 8 x 122.0 GiB, more than 512 on any number of nodes.)"""


def _table(out: str) -> list[str]:
    """The lines of `out` from the map's title to its bottom border."""
    lines = out.splitlines()
    return lines[:next(at for at, line in enumerate(lines) if line.startswith("└")) + 1]


def test_a_map_past_one_node_folds_the_budgets_that_repeat_a_plan(cli: Cli) -> None:
    status, out, err = cli(*TWO_NODES_32B, "--gpus-up-to", "16")
    assert (status, err) == (0, "")
    assert _table(out) == [
        "H100-80GB: longest context per model and GPU budget, Trinity 0.6, host memory 512 GiB per node",
        "┏━━━━━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━┓",
        "┃ model     ┃ ≤1-15 GPUs ┃      ≤16 GPUs      ┃",
        "┡━━━━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━┩",
        "│ Qwen3-32B │     -      │ 155k E+O+SP8@16~!^ │",
        "└───────────┴────────────┴────────────────────┘"]
    assert "≤a-b: budgets a to b, the same plans" in out


def test_sixteen_budgets_of_the_catalogues_models_read_as_one_column_per_doubling(cli: Cli) -> None:
    # The review's map: 16 columns, 9 to 15 repeating 8; now 1, 2-3, 4-7, 8-15 and 16, a width a pipe can take.
    status, out, _ = cli("map", "--gpu", "h100", "--gpus-up-to", "16")
    header = next(line for line in out.splitlines() if line.startswith("┃ model"))
    assert status == 0 and [cell.strip() for cell in header.strip("┃").split("┃")][1:] == [
        "≤1 GPU", "≤2-3 GPUs", "≤4-7 GPUs", "≤8-15 GPUs", "≤16 GPUs"]
    assert max(len(line) for line in _table(out)) < 120


def test_a_map_within_one_node_keeps_a_column_per_budget(cli: Cli) -> None:
    # Up to a node, each budget is a column, as before: 2 and 3 GPUs are both shown though their plans are the same.
    status, out, _ = cli("map", "--gpu", "h100", "--model", "8B", "--gpus-up-to", "8")
    header = next(line for line in out.splitlines() if line.startswith("┃ model"))
    assert status == 0 and "≤3 GPUs" in header and "≤2-3" not in header and "≤a-b" not in out
    # Nodes of 4: 8 GPUs are past one node, and 5 to 7 allow what 4 do.
    status, out, _ = cli("map", "--gpu", "h100", "--model", "8B", "--gpus-up-to", "8", "--node-gpus", "4")
    header = next(line for line in out.splitlines() if line.startswith("┃ model"))
    assert status == 0 and "≤4-7 GPUs" in header and "≤8 GPUs" in header


def test_budgets_maps_only_the_budgets_asked_in_increasing_order(cli: Cli) -> None:
    status, out, err = cli(*TWO_NODES_32B, "--budgets", "16,8,1,2,3")
    assert (status, err) == (0, "")
    # 1 to 3: a run of consecutive budgets, one column; 8 stands alone, the 4 to 7 between not asked.
    assert _table(out)[2] == "┃ model     ┃ ≤1-3 GPUs ┃ ≤8 GPUs ┃      ≤16 GPUs      ┃"
    status, out, _ = cli(*TWO_NODES_32B, "--budgets", "16,8,1,2,3", "--json")
    [h100] = json.loads(out)
    assert status == 0 and h100["budget_gpus"] == [1, 2, 3, 8, 16]
    [row] = h100["rows"]
    assert row["plans"][:4] == [None] * 4 and (row["plans"][4]["gpus"], row["plans"][4]["max_model_len"]) == (
        16, 158720)
    # The same plans as the map of budgets 1 to 16 gives at those budgets.
    [whole] = json.loads(cli(*TWO_NODES_32B, "--gpus-up-to", "16", "--json")[1])
    assert [whole["rows"][0]["plans"][budget - 1] for budget in (1, 2, 3, 8, 16)] == row["plans"]


def test_every_budget_keeps_its_json_entry_where_the_printed_map_folds_them(cli: Cli) -> None:
    [h100] = json.loads(cli(*TWO_NODES_32B, "--gpus-up-to", "16", "--json")[1])
    assert h100["budget_gpus"] == list(range(1, 17)) and len(h100["rows"][0]["plans"]) == 16


@pytest.mark.parametrize(("flags", "error"), [
    (("--budgets", "8,,16"), ("argument --budgets: an empty number in '8,,16': give whole numbers from 1 to 64, "
                              "separated by commas (8,16,32)")),
    (("--budgets", "8,65"), "argument --budgets: must be a whole number from 1 to 64, got 65"),
    (("--budgets", "8,x"), "argument --budgets: expected a whole number from 1 to 64, got 'x'"),
    (("--budgets", "8", "--gpus-up-to", "16"), "--budgets and --gpus-up-to exclude each other: give one of them"),
])
def test_bad_budgets_are_refused_with_exit_2_and_nothing_printed(cli: Cli, flags: tuple[str, ...], error: str) -> None:
    assert cli("map", "--gpu", "h100", "--model", "8B", *flags) == (
        2, "", f"usage: solve map [options] (--help lists them)\nsolve map: error: {error}\n")


def test_map_plans_takes_budgets_and_refuses_them_with_gpus_up_to() -> None:
    [h100] = solver.map_plans("8B", gpu="h100", budgets=(16, 8))
    assert h100.budget_gpus == (8, 16) and [plan.gpus for plan in h100.rows[0].plans if plan] == [8, 16]
    assert solver.map_plans("8B", gpu="h100")[0].budget_gpus == tuple(range(1, 9))
    words = ("budgets: give one or more GPU counts (8, 16, 32), and not with gpus_up_to, which maps the budgets "
             "1 to N")
    for bad in ({"budgets": [8], "gpus_up_to": 16}, {"budgets": []}):
        with pytest.raises(QueryError) as refused:
            solver.map_plans("8B", gpu="h100", **bad)
        assert str(refused.value) == words
    with pytest.raises(QueryError, match=r"^budgets must be a whole number from 1 to 64, got 0$"):
        solver.map_plans("8B", gpu="h100", budgets=[0])
    with pytest.raises(QueryError, match=r"^budgets\[1\] must be a whole number, got '16'"):
        solver.map_plans("8B", gpu="h100", budgets=[8, "16"])


def test_a_terminal_too_narrow_for_a_map_is_told_of_budgets_that_double(cli: Cli,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # The budgets the note suggests double up to the largest mapped, which ends them, the smallest left out until
    # their columns fit; with --budgets, none.
    screen = io.StringIO()
    monkeypatch.setattr(solver.cli.maps, "new_console", lambda width=160: Console(
        width=40, force_terminal=True, file=screen, **PLAIN_TEXT))
    status, _, err = cli("map", "--gpu", "h100", "--model", "8B", "--gpus-up-to", "8")
    assert status == 0 and err.endswith(
        ": widen it, pipe the output (| less -S), map fewer budgets (--budgets 8), or save it with --svg FILE; --json "
        "has every cell\n")
    # Past one node the map shows its last doubling budgets already, down to two columns (16 and 24 here), still too
    # wide: 24 alone fits (before hints87, none was named).
    status, _, err = cli("map", "--gpu", "h100", "--model", "8B", "--gpus-up-to", "24")
    assert status == 0 and err.endswith(": widen it, pipe the output (| less -S), map fewer budgets (--budgets 24), or "
                                        "save it with --svg FILE; --json has every cell\n")
    status, _, err = cli("map", "--gpu", "h100", "--model", "8B", "--budgets", "8,16,32")
    assert status == 0 and err.endswith(": widen it, pipe the output (| less -S), or save it with --svg FILE; --json "
                                        "has every cell\n")
