"""Phrases several views say: the memory model's longest length asked about, the note on a lowered token budget,
the mark of a length past what the model is known to handle, a time taken, the plan that keeps the room a thin
headroom asks for.
(What the tables say of a setting, which a plan's caution says too, is `solver.rules.tables_said`.)"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from solver.memory import CEILING
from solver.results import Answer, CautionCode, Plan
from solver.rules import OptionNames
from solver.tables import counted

CEILING_WORDS = f"{CEILING} tokens is the longest length the memory model is asked about; more may fit"


def lowered_note(names: OptionNames, capped: str | None = None) -> str:
    """The caption of a table with a lowered token budget (marked ``*``), naming the option that lowers it as `names`
    do; where a cap binds on a plan, that its budget is that cap (`capped`, its words:
    `solver.query.token_cap_words`)."""
    if capped is not None:
        return (f"* trainer.max_token_len_per_gpu below Trinity's default ceil(2 x L / SP): {capped}, or less "
                f"where that does not fit")
    return (f"* trainer.max_token_len_per_gpu below Trinity's default ceil(2 x L / SP), which does not fit "
            f"({names.token_budget_auto})")

YARN_MARK = "^"
"""Added to a length past what the model is known to handle (`Plan.past_validated_length`), as `solve` cautions: a
map's cell (by length: the row's length), a ranked plan's length."""


def seconds_words(seconds: float) -> str:
    """A time taken in words, to a tenth of a second: ``8.6 s``, and ``<0.1 s`` for one that rounds to none."""
    return "<0.1 s" if seconds < 0.05 else f"{seconds:.1f} s"


def cost_ratio_words(other: Plan, plan: Plan) -> str:
    """`other`'s cost against `plan`'s, as the cost model ranks them (a relative step time, not a measured one:
    docs/planner.md's cost model): ``1.33x the relative step time``."""
    return f"{other.cost / plan.cost:.2f}x the relative step time"


def objective_ratio_words(other: Plan, plan: Plan) -> str:
    """`other` against `plan` in the terms the question ranks by: where both carry GPU-hours (a `--minimize gpu-hours`
    answer's plans), their ratio first, then the relative step time's (``2.00x the GPU-hours, 8.00x the relative step
    time``: a plan on fewer GPUs takes longer steps for fewer GPU-hours); else `cost_ratio_words`."""
    if other.gpu_hours is None or not plan.gpu_hours:
        return cost_ratio_words(other, plan)
    return f"{other.gpu_hours / plan.gpu_hours:.2f}x the GPU-hours, {cost_ratio_words(other, plan)}"


def room_kept_words(answer: Answer, plan: Plan, names: OptionNames, above: Sequence[Plan] | None = None) -> str | None:
    """What the margin that the best `plan`'s thin-headroom caution names (``--margin 0.04``, as `names` name it)
    gives: its best plan (its GPUs, setting, length, cost against `plan`'s in the question's terms,
    `objective_ratio_words`, evidence and, estimated, its memory at that margin, then the cautions it carries that
    `plan` does not: `Plan.cautions_beside`), or that none trains it then; None where the answer did not
    ask (`Answer.room_kept`). The summary's ``more room`` row and the ranking's note on plan #1 say it; `above`: the
    plans the summary's rows above show beside `plan` (None for the note: its cautions whole)."""
    if (kept := answer.room_kept) is None:
        return None
    margin = names.valued(names.named("margin"), f"{kept.margin:.2f}")
    if (other := kept.plan) is None:
        trains = "at any length" if answer.objective == "max_len" else f"for {counted(plan.max_model_len, 'token')}"
        return (f"{margin}, which keeps the room its caution asks for, leaves no plan {trains} within "
                f"{counted(answer.budget_gpus, 'GPU')}: measure a step first")
    memory = f"; {other.prediction_words}, held to that margin" if other.source is None else ""
    length = (f"{counted(other.max_model_len, 'token')} instead of {plan.max_model_len}"
              if other.max_model_len != plan.max_model_len else counted(other.max_model_len, "token"))
    return (f"{margin} keeps the room its caution asks for: {other.setting.label} on {counted(other.gpus, 'GPU')}"
            f"{other.lowered_words}, {length}, {objective_ratio_words(other, plan)} "
            f"({other.evidence_and_single_gpu}{memory}){other.cautions_beside(plan, above)}")


def hint_said_once(cautions: Sequence[str], codes: Sequence[CautionCode], hint: str,
                   said: Collection[str] = ()) -> list[str]:
    """`cautions` (with their `codes`, in order; none for a plan's JSON made before codes) as a text answer shows them
    beside a host memory line or row that ends with `hint` (what naming a Trinity release counts:
    `lower_host_count_hint`; "" where none is shown), those another line says already (`said`) left out: the caution
    on a host memory need nothing checks without `hint`, which the host memory line says once."""
    unchecked = {caution for caution, code in zip(cautions, codes, strict=False)
                 if code == CautionCode.HOST_MEMORY_UNCHECKED} if hint else set()
    return [caution.removesuffix(hint) if caution in unchecked else caution for caution in cautions
            if caution not in said]
