"""Session 66, mapwidth: the default one-node map (`solve map --gpu a100`, budgets 1 to 8) was 150 characters wide
whatever the terminal, so on 80 to 120 columns it wrapped into a mess. A map wider than the terminal (or, on a pipe,
than ``COLUMNS`` where set) now joins adjacent budgets whose cells are all the same into one column, with the fold and
the ``≤a-b GPUs`` titles of a map past one node; where it is wider still, a pipe keeps its table whole and wraps the
lines around it at the width, and a terminal gets the note it got. A pipe without ``COLUMNS`` gets today's bytes,
`--json` and `--svg` are unchanged, and `solver.map_text(maps, width=W)` is what ``COLUMNS=W solve map`` prints."""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console
from test_mapwidth_s64 import _header, _tables

import solver
import solver.cli.maps
from solver.render import PLAIN_TEXT
from solver.rules import COMMAND_OPTIONS

Cli = Callable[..., tuple[int, str, str]]

ONE_NODE = ["≤1 GPU", "≤2 GPUs", "≤3 GPUs", "≤4 GPUs", "≤5 GPUs", "≤6 GPUs", "≤7 GPUs", "≤8 GPUs"]
JOINED = "≤a-b: budgets a to b, the same plans"


def _cells(table: list[str]) -> list[list[str]]:
    """Each row's budget cells (the model or length column left out)."""
    return [[cell.strip() for cell in line.strip("│").split("│")][1:] for line in table[3:-1]]


def _outside_tables(out: str) -> list[str]:
    """The lines of `out` outside its tables: titles, lines under the tables, legends."""
    outside, inside = [], False
    for line in out.splitlines():
        inside = line.startswith("┏") or (inside and not line.startswith("└"))
        if not inside and not line.startswith("└"):
            outside.append(line)
    return outside


@pytest.fixture
def a100_whole(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> str:
    """`solve map --gpu a100` on a pipe without COLUMNS."""
    monkeypatch.delenv("COLUMNS", raising=False)
    status, out, _ = cli("map", "--gpu", "a100")
    assert status == 0
    return out


def test_a_pipe_without_columns_gets_every_budget_of_a_node_at_full_width(a100_whole: str) -> None:
    [table] = _tables(a100_whole)
    assert _header(table) == ONE_NODE and {len(line) for line in table} == {147}
    # Laid out for 160 columns, as before: the legend's first line wraps there.
    legend = a100_whole.splitlines()[len(table) + 1]
    assert legend.endswith("^ YaRN past what is validated") and len(legend) == 159 and JOINED not in a100_whole


@pytest.mark.parametrize("columns", [80, 100, 120])
def test_columns_on_a_pipe_join_budgets_whose_cells_are_the_same(cli: Cli, monkeypatch: pytest.MonkeyPatch,
                                                                 a100_whole: str, columns: int) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    status, out, _ = cli("map", "--gpu", "a100")
    [table], [whole] = _tables(out), _tables(a100_whole)
    assert status == 0 and _header(table) == ["≤1 GPU", "≤2-3 GPUs", "≤4-7 GPUs", "≤8 GPUs"]
    assert max(map(len, out.splitlines())) <= columns and {len(line) for line in table} == {80}
    # The joined budgets' cells are the same in every row, and each column shows them.
    for folded, cells in zip(_cells(table), _cells(whole), strict=True):
        assert cells[1] == cells[2] and cells[3] == cells[4] == cells[5] == cells[6]
        assert folded == [cells[0], cells[1], cells[3], cells[7]]
    assert JOINED in " ".join(_outside_tables(out))


def test_a_pipe_narrower_than_a_map_that_cannot_join_keeps_its_table_whole(cli: Cli,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # By length on H20s no two adjacent budgets have the same cells: the table stays whole, 79 wide, and the
    # title, the line under it and the legend wrap at 60.
    argv = ("map", "--gpu", "h20", "--model", "14B", "--by", "len", "--gpus-up-to", "6")
    monkeypatch.delenv("COLUMNS", raising=False)
    whole = _tables(cli(*argv)[1])
    monkeypatch.setenv("COLUMNS", "60")
    status, out, _ = cli(*argv)
    assert status == 0 and _tables(out) == whole and {len(line) for line in whole[0]} == {79}
    around = _outside_tables(out)
    assert max(map(len, around)) <= 60 and around[:2] == ["H20-96GB · Qwen3-14B: cheapest setting per length and GPU",
                                                          "budget"]
    assert "122880 to 153600 tokens: nothing trains on up to 6 GPUs\n(rows left out)\n" in out


def test_each_gpu_type_s_map_joins_only_where_it_is_too_wide(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    # Up to 6 GPUs the A100 map is 110 wide (its 1-GPU cells carry †), the H20's 112 (its cells carry ^): at 110 only
    # the H20's joins.
    monkeypatch.setenv("COLUMNS", "110")
    status, out, _ = cli("map", "--gpu", "a100,h20", "--gpus-up-to", "6")
    a100, h20 = _tables(out)
    assert status == 0 and _header(a100) == ONE_NODE[:6] and _header(h20) == ["≤1 GPU", "≤2-3 GPUs", "≤4-6 GPUs"]
    assert [len(a100[0]), len(h20[0])] == [110, 60] and out.count(JOINED) == 1


def test_budgets_asked_join_only_where_consecutive_and_none_is_left_out(cli: Cli,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    argv = ("map", "--gpu", "h100", "--model", "8B", "--budgets", "1,2,3,4,8")
    monkeypatch.delenv("COLUMNS", raising=False)
    [whole] = _tables(cli(*argv)[1])
    monkeypatch.setenv("COLUMNS", "60")
    status, out, _ = cli(*argv)
    [table] = _tables(out)
    assert _header(whole) == ["≤1 GPU", "≤2 GPUs", "≤3 GPUs", "≤4 GPUs", "≤8 GPUs"]
    # 2 and 3 (asked, consecutive, the same plan) share a column titled by both; 4 and 8 keep theirs.
    assert status == 0 and _header(table) == ["≤1 GPU", "≤2-3 GPUs", "≤4 GPUs", "≤8 GPUs"]
    assert _cells(table) == [[cells[0], cells[1], cells[3], cells[4]] for cells in _cells(whole)]
    assert "columns left out" not in out


def _terminal(monkeypatch: pytest.MonkeyPatch, width: int) -> io.StringIO:
    """Stdout as a terminal `width` columns wide shows it."""
    screen = io.StringIO()
    monkeypatch.setattr(solver.cli.maps, "new_console", lambda width_=160: Console(
        width=width, force_terminal=True, color_system=None, file=screen, **PLAIN_TEXT))
    return screen


def test_a_terminal_of_100_columns_gets_the_joined_map_and_no_note(cli: Cli,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    screen = _terminal(monkeypatch, 100)
    status, _, err = cli("map", "--gpu", "a100")
    [table] = _tables(screen.getvalue())
    assert (status, err.count("note:")) == (0, 1) and "the maps need" not in err  # the note on --gpu 'a100' alone
    assert _header(table) == ["≤1 GPU", "≤2-3 GPUs", "≤4-7 GPUs", "≤8 GPUs"]


def test_a_terminal_too_narrow_for_the_joined_map_is_told_its_width(cli: Cli,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    screen = _terminal(monkeypatch, 60)
    status, _, err = cli("map", "--gpu", "a100")
    assert status == 0 and err.startswith(
        "solve map: note: the maps need 80 columns and the terminal has 60: widen it, pipe the output (| less -S), map "
        "fewer budgets (--budgets 4,8), or save it with --svg FILE; --json has every cell\n")
    assert max(map(len, screen.getvalue().splitlines())) <= 60 and "≤4-7" in screen.getvalue()
    # (hints87: it named --budgets 1,2,4,8, the four columns the joined map has already.) Those it names fit.
    screen.truncate(0)
    screen.seek(0)
    status, _, err = cli("map", "--gpu", "a100", "--budgets", "4,8")
    assert status == 0 and "the maps need" not in err
    assert max(map(len, screen.getvalue().splitlines())) <= 60 and "≤4 GPUs" in screen.getvalue()


def test_json_and_svg_are_the_same_whatever_columns(cli: Cli, monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path) -> None:
    argv = ("map", "--gpu", "a100", "--model", "8B,14B")
    saved = []
    for columns in (None, "80"):
        if columns is None:
            monkeypatch.delenv("COLUMNS", raising=False)
        else:
            monkeypatch.setenv("COLUMNS", columns)
        svg = tmp_path / f"map-{columns}.svg"
        saved.append((cli(*argv, "--json")[1], cli(*argv, "--svg", str(svg))[0], svg.read_bytes()))
    assert saved[0] == saved[1] and saved[0][1] == 0 and "≤2 GPUs" in saved[0][2].decode().replace("&#160;", " ")


@pytest.mark.parametrize("width", [80, 110])
def test_map_text_is_solve_map_on_a_pipe_of_columns_width(cli: Cli, monkeypatch: pytest.MonkeyPatch,
                                                          width: int) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    _, printed, _ = cli("map", "--gpu", "a100,h20", "--gpus-up-to", "6")
    maps = solver.map_plans(gpu=["a100", "h20"], gpus_up_to=6, option_names=COMMAND_OPTIONS)
    assert solver.map_text(maps, width=width, option_names=COMMAND_OPTIONS) == printed


def test_the_docs_show_maps_as_a_pipe_without_columns_whatever_the_developer_s(monkeypatch: pytest.MonkeyPatch) -> None:
    # tests/shown_output.py lays --help out for 100 columns (argparse fills 98), and a map as a pipe without COLUMNS
    # gets it, whole, whatever COLUMNS the developer's shell exports (and leaves it as it was).
    from shown_output import BLOCK, printed
    root = Path(__file__).resolve().parents[1]
    monkeypatch.setenv("COLUMNS", "80")
    for page, command in (("index.md", "$ solve map --gpu a100 --gpus-up-to 6"), ("cli.md", "$ solve map --help")):
        text = (root / "docs" / page).read_text(encoding="utf-8")
        [shown] = [match.group(2) for match in BLOCK.finditer(text) if match.group(1) == command]
        assert printed(command, root) == shown and os.environ["COLUMNS"] == "80"
        assert max(map(len, shown.splitlines())) == {"index.md": 117, "cli.md": 98}[page]
