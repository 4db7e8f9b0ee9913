"""Session 64, mapwidth: `solve map --gpus-up-to 64` was about 240 characters wide (a column per run of budgets with
the same plans: 1, 2-3, 4-7, 8-15, 16-23, ..., 56-63, 64). Past one node a map of budgets 1 to N now shows at most five
columns, those that hold N and the four largest powers of two below it, and a line names the budgets left out;
`--budgets` still maps each budget asked and `--json` every budget. A plan line of "8 of 12 GPUs" says why the rest
stays idle (whole nodes), and `--total-gpus T` without `--rollout-gpus` names the split the planner keeps."""

from __future__ import annotations

import io
import json
from collections.abc import Callable

import pytest
from rich.console import Console

import solver.cli.maps
from solver.render import PLAIN_TEXT, doubling_budgets

Cli = Callable[..., tuple[int, str, str]]


def _tables(out: str) -> list[list[str]]:
    """Each map's table lines of `out`, top border to bottom border."""
    tables: list[list[str]] = []
    for line in out.splitlines():
        if line.startswith("┏"):
            tables.append([])
        if tables and (not tables[-1] or not tables[-1][-1].startswith("└")):
            tables[-1].append(line)
    return tables


def _header(table: list[str]) -> list[str]:
    return [cell.strip() for cell in table[1].strip("┃").split("┃")][1:]


def test_doubling_budgets_end_with_the_largest() -> None:
    assert doubling_budgets(64) == [1, 2, 4, 8, 16, 32, 64]
    assert doubling_budgets(24) == [1, 2, 4, 8, 16, 24]
    assert doubling_budgets(1) == [1]


def test_the_default_maps_up_to_64_gpus_fit_120_columns_and_name_the_budgets_left_out(cli: Cli) -> None:
    status, out, err = cli("map", "--gpus-up-to", "64")
    a100, h20 = _tables(out)
    assert (status, err) == (0, "")
    assert max(len(line) for line in a100 + h20) == 115  # was 238
    assert _header(a100) == _header(h20) == ["≤4-7 GPUs", "≤8-15 GPUs", "≤16-23 GPUs", "≤32-39 GPUs", "≤64 GPUs"]
    assert out.count("budgets 1 to 3, 24 to 31 and 40 to 63: columns left out (--budgets maps them; --json has every "
                     "budget)\n") == 2
    status, out, _ = cli("map", "--gpus-up-to", "32")
    assert status == 0 and max(len(line) for table in _tables(out) for line in table) == 110  # was 143
    assert "budgets 1 and 24 to 31: columns left out" in out


def test_json_keeps_every_budget_of_a_map_whose_columns_leave_some_out(cli: Cli) -> None:
    status, out, _ = cli("map", "--gpu", "h100", "--model", "8B", "--gpus-up-to", "64", "--json")
    [h100] = json.loads(out)
    assert status == 0 and h100["budget_gpus"] == list(range(1, 65)) and len(h100["rows"][0]["plans"]) == 64
    assert [plan["gpus"] for plan in h100["rows"][0]["plans"][23:31]] == [24] * 8  # 24 to 31: left out of the print


def test_budgets_asked_are_each_a_column_past_five(cli: Cli) -> None:
    status, out, _ = cli("map", "--gpu", "h100", "--model", "8B", "--budgets", "1,2,4,8,16,24,32,64")
    [table] = _tables(out)
    assert status == 0 and _header(table) == ["≤1 GPU", "≤2 GPUs", "≤4 GPUs", "≤8 GPUs", "≤16 GPUs", "≤24 GPUs",
                                              "≤32 GPUs", "≤64 GPUs"]
    assert "columns left out" not in out


def test_a_map_of_five_runs_or_fewer_keeps_them_all(cli: Cli) -> None:
    # Budgets 1 to 16: five runs (1, 2-3, 4-7, 8-15, 16), none left out, as before.
    status, out, _ = cli("map", "--gpu", "h100", "--model", "8B", "--gpus-up-to", "16")
    [table] = _tables(out)
    assert status == 0 and _header(table) == ["≤1 GPU", "≤2-3 GPUs", "≤4-7 GPUs", "≤8-15 GPUs", "≤16 GPUs"]
    assert "columns left out" not in out


def test_a_narrow_terminal_past_one_node_is_told_only_budgets_whose_columns_fit(cli: Cli,
                                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # The map shows doubling budgets already, cut to their fewest columns for 40 (s67), still too wide: not
    # --budgets 1,2,4,8,16,32,64, more columns, but 64 alone, which fits (hints87; before, no budgets were named).
    screen = io.StringIO()
    monkeypatch.setattr(solver.cli.maps, "new_console", lambda width=160: Console(
        width=40, force_terminal=True, color_system=None, file=screen, **PLAIN_TEXT))
    status, _, err = cli("map", "--gpu", "h100", "--model", "8B", "--gpus-up-to", "64")
    assert status == 0 and err.endswith(": widen it, pipe the output (| less -S), map fewer budgets (--budgets 64), or "
                                        "save it with --svg FILE; --json has every cell\n")
    screen.truncate(0)
    screen.seek(0)
    status, _, err = cli("map", "--gpu", "h100", "--model", "8B", "--budgets", "64")
    assert status == 0 and "the maps need" not in err and max(map(len, screen.getvalue().splitlines())) <= 40


@pytest.mark.parametrize(("flags", "line"), [
    (("--gpus", "12", "--len", "32k"), "Env + SP=2 on 8 of 12 GPUs: whole nodes of 8 (4 left for rollout)"),
    (("--gpus", "12", "--rollout-gpus", "0", "--maximize", "len"),
     "Env + Offload + SP=8 on 8 of 12 GPUs: whole nodes of 8 (4 unused)"),
    (("--gpus", "20", "--maximize", "len"), ("Env + Offload + SP=8 on 16 of 20 GPUs, 2 whole nodes of 8 (4 left for "
                                             "rollout)")),
    (("--gpus", "6", "--len", "32k"), "Env + SP=2 on 6 of 6 GPUs (none left for rollout)"),
])
def test_a_plan_line_says_why_a_budget_past_one_node_leaves_gpus_idle(cli: Cli, flags: tuple[str, ...],
                                                                      line: str) -> None:
    status, out, _ = cli("--model", "8B", "--gpu", "h100", *flags)
    plan = next(row for row in out.splitlines() if row.startswith("plan "))
    assert status == 0 and plan.removeprefix("plan").strip() == line


@pytest.mark.parametrize(("total", "split"), [
    ("8", "; --rollout-gpus 2 is what the planner keeps for it of 8 where a trainer would take them all"),
    ("16", "; --rollout-gpus 8 is what the planner keeps for it of 16 where a trainer would take them all"),
    ("12", ""),  # no whole number of nodes: no split of it would be taken
    ("1", ""),  # one GPU: any rollout of it leaves the trainer none
])
def test_total_gpus_without_a_rollout_names_the_split_the_planner_keeps(cli: Cli, total: str, split: str) -> None:
    status, out, err = cli("--model", "14B", "--gpu", "h100", "--len", "128k", "--total-gpus", total)
    refusal = (f"solve: error: --total-gpus {total} counts the trainer's and the rollout's GPUs together: say how "
               f"many of them the rollout takes, --rollout-gpus R (0: it runs elsewhere{split}), or give the "
               "trainer's budget alone, --gpus N\n")
    assert (status, out, err) == (2, "", refusal)


def test_the_split_named_for_sixteen_gpus_trains_the_persona(cli: Cli) -> None:
    status, out, _ = cli("--model", "14B", "--gpu", "h100", "--len", "128k", "--total-gpus", "16", "--rollout-gpus",
                         "8")
    assert status == 0 and out.splitlines()[0].endswith(": optimal")
