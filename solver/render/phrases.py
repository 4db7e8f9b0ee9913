"""Phrases several views say: the memory model's longest length asked about, the note on a lowered token budget,
the mark of a length past what the model is known to handle. (What the tables say of a setting, which a plan's
caution says too, is `solver.rules.tables_said`.)"""

from __future__ import annotations

from solver.memory import CEILING
from solver.rules import OptionNames

CEILING_WORDS = f"{CEILING} tokens is the longest length the memory model is asked about; more may fit"


def lowered_note(names: OptionNames) -> str:
    """The caption of a table with a lowered token budget (marked ``*``), naming the option that lowers it as `names`
    do."""
    return (f"* trainer.max_token_len_per_gpu below Trinity's default ceil(2 x L / SP), which does not fit "
            f"({names.token_budget_auto})")

YARN_MARK = "^"
"""Added to a length past what the model is known to handle (`Plan.past_validated_length`), as `solve` cautions: a
map's cell (by length: the row's length), a ranked plan's length."""
