"""Session 67, mutants10: tests that kill mutants of session 66's changes which its tests let live (the table is in
/work/keep/review-s67-mutants10-table.md): the length a stray word names from 1024 tokens on, an option's start of
three characters, ``COLUMNS`` at the narrowest width it is read at, a map exactly as wide as its width, listed budgets
past a node that are not consecutive."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import solver
from solver.results import Answer, Caution, CautionCode
from solver.cli.output import piped_columns
from solver.render.layout import MIN_TERMINAL_WIDTH

Cli = Callable[..., tuple[int, str, str]]


@pytest.mark.parametrize(("word", "hint"), [
    ("1k", " (did you mean --len 1k?)"), ("1024", " (did you mean --len 1024?)"),
    ("1023", ""),  # below 1024 tokens: no length
])
def test_a_stray_length_is_told_its_option_from_1024_tokens(cli: Cli, word: str, hint: str) -> None:
    status, out, err = cli("memory", word)
    assert (status, out) == (2, "")
    assert err.splitlines()[1:] == [f"solve memory: error: unrecognized arguments: {word}{hint}"]


def test_three_characters_are_too_short_to_guess_the_option_they_start(cli: Cli) -> None:
    """``--j`` starts one option alone (--json), but three characters are no guess (four are: --max)."""
    status, out, err = cli("--model", "8B", "--gpus", "4", "--j")
    assert (status, out) == (2, "")
    assert err.splitlines()[1:] == ["solve: error: unrecognized arguments: --j"]


@pytest.mark.parametrize(("columns", "read"), [
    (str(MIN_TERMINAL_WIDTH), MIN_TERMINAL_WIDTH), (str(MIN_TERMINAL_WIDTH - 1), None), ("0", None), ("", None),
    ("wide", None), ("120", 120),
])
def test_columns_are_read_from_the_narrowest_terminal_width_up(monkeypatch: pytest.MonkeyPatch, columns: str,
                                                                read: int | None) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    assert piped_columns() == read


def test_a_map_as_wide_as_its_width_keeps_a_column_per_budget() -> None:
    """Qwen3-8B on A100s, budgets 1 to 8: at the table's own width each budget keeps its column; a column less joins
    the budgets with the same plans."""
    maps = solver.map_plans(model="8B", gpu="a100")
    wide = solver.map_text(maps, width=300).splitlines()
    table_width = len(wide[1])
    assert table_width == 144

    def header(width: int) -> list[str]:
        return [cell.strip() for cell in solver.map_text(maps, width=width).splitlines()[2].split("┃")[1:-1]]

    assert header(table_width) == ["model", "≤1 GPU", "≤2 GPUs", "≤3 GPUs", "≤4 GPUs", "≤5 GPUs", "≤6 GPUs",
                                   "≤7 GPUs", "≤8 GPUs"]
    assert header(table_width - 1) == ["model", "≤1 GPU", "≤2-3 GPUs", "≤4-7 GPUs", "≤8 GPUs"]


def test_listed_budgets_past_a_node_join_only_consecutive_ones() -> None:
    """--budgets 8,10,16 on nodes of 8: 8 and 10 have the same plan, but 9 was not asked, so each keeps its column."""
    maps = solver.map_plans(model="8B", gpu="a100", budgets=(8, 10, 16))
    lines = solver.map_text(maps, width=200).splitlines()
    assert lines[2] == "┃ model    ┃      ≤8 GPUs      ┃     ≤10 GPUs      ┃      ≤16 GPUs      ┃"
    assert lines[4] == "│ Qwen3-8B │ 199k E+O+SP8@8~!^ │ 199k E+O+SP8@8~!^ │ 199k E+O+SP8@16~!^ │"


def _planned() -> Answer:
    """Qwen3-8B on 4 A100s at 65536 tokens: an answer whose plan has no caution."""
    answer = solver.plan("8B", gpu="a100", max_model_len=65536, budget_gpus=4)[0]
    assert answer.plans[0].cautions == ()
    return answer


TABLES_SAY = CautionCode.TABLES_SAY_OUT_OF_MEMORY


def test_a_caution_is_added_once_by_its_code_or_its_words() -> None:
    plan = _planned().plans[0]
    coded = plan.with_caution(Caution(TABLES_SAY, "the tables say no"))
    assert (coded.cautions, coded.caution_codes) == (("the tables say no",), (TABLES_SAY,))
    assert coded.with_caution(Caution(TABLES_SAY, "other words")) == coded  # its code is there
    both = coded.with_caution(Caution(CautionCode.PAST_VALIDATED_LENGTH, "past"))
    assert (both.cautions, both.caution_codes) == (("past", "the tables say no"),
                                                   (CautionCode.PAST_VALIDATED_LENGTH, TABLES_SAY))


def test_a_caution_joins_words_of_json_made_before_codes_after_them() -> None:
    """A plan read from JSON made before caution codes has words alone: a new caution's words go after them, once."""
    old = _planned().plans[0].model_copy(update={"cautions": ("an old caution",), "caution_codes": ()})
    assert old.with_caution(Caution(TABLES_SAY, "an old caution")) == old  # its words are there
    added = old.with_caution(Caution(TABLES_SAY, "new words"))
    assert (added.cautions, added.caution_codes) == (("an old caution", "new words"), ())


def test_an_answer_compares_equal_whatever_query_it_holds() -> None:
    answer = _planned()
    assert answer.query is not None
    without = answer.model_copy(update={"query": None})
    assert without == answer and hash(without) == hash(answer)
