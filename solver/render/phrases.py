"""Phrases several views say: what the tables say of a setting, the memory model's longest length asked about, the
note on a lowered token budget, the mark of a length past what the model is known to handle."""

from __future__ import annotations

from solver.memory import CEILING
from solver.rules import OptionNames, SourceCell, TablesVerdict
from solver.tables import counted

CEILING_WORDS = f"{CEILING} tokens is the longest length the memory model is asked about; more may fit"


def lowered_note(names: OptionNames) -> str:
    """The caption of a table with a lowered token budget (marked ``*``), naming the option that lowers it as `names`
    do."""
    return (f"* trainer.max_token_len_per_gpu below Trinity's default ceil(2 x L / SP), which does not fit "
            f"({names.token_budget_auto})")

YARN_MARK = "^"
"""Added to a length past what the model is known to handle (`Plan.past_validated_length`), as `solve` cautions: a
map's cell (by length: the row's length), a ranked plan's length."""


def tables_said(tables: TablesVerdict, gpu: str, model: str, gpus: int, offload: bool) -> str:
    """What a GPU type's tables say of a setting (with `offload` or not) on `gpus` GPUs, in words: it trains (and which
    cell vouches), or it runs out of memory (and which cell says so)."""
    cell = tables.source.words(gpu, model)
    cells = "your cells" if tables.source.table_source else "the source's cells"
    return (f"it trains ({tables.evidence}: {cell})" if tables.trains else
            f"it runs out of memory ({cell}: {cells} read as the first setting that trained in their order, '-' "
            f"where none did, so this setting, or one that includes it, ran out of memory there"
            f"{fewer(tables.source, gpus, offload)})")


def fewer(cell: SourceCell, gpus: int, offload: bool) -> str:
    """For a cell of another count's table that says a setting ran out of memory: why that holds on `gpus` too,
    as clauses to follow the cell's words (``, and ...``; "" for the count's own table): `fewer_reasons`."""
    return "".join(f", and {reason}" for reason in fewer_reasons(cell, gpus, offload))


def fewer_reasons(cell: SourceCell, gpus: int, offload: bool) -> tuple[str, ...]:
    """For a cell of another count's table that says a setting ran out of memory: why that holds on `gpus` too, one
    clause each (none for the count's own table): on fewer GPUs each holds more; with Offload (a table for fewer GPUs,
    whose cell says the setting with Offload ran out of memory) each holds as much, and without `offload` more."""
    if cell.gpus == gpus:
        return ()
    if cell.gpus > gpus:
        return (f"on {counted(gpus, 'GPU')} each holds more",)
    as_much = f"as much per GPU on {gpus} GPUs as on {cell.gpus} (the states are on the CPU)"
    return ((f"with Offload it holds {as_much}",) if offload else
            (f"it ran out with Offload too, which holds {as_much}", "without Offload each GPU holds more"))
