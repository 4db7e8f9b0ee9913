"""`solve --top`'s ranked plans, a row each."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from solver.query import token_cap_words
from solver.render.layout import TableOrBlocks
from solver.render.phrases import YARN_MARK, lowered_note, room_kept_words
from solver.render.styles import setting_style
from solver.results import (
    SINGLE_GPU_CAUTION_SHORT,
    Answer,
    Plan,
    check_or_plan_words,
    past_validated_words,
)
from solver.rules import COMMAND_OPTIONS, OptionNames, trainer_node_count
from solver.tables import Model, counted


def _relative(rank: int, cost: float, first: float) -> str:
    """A ranked plan's cost relative to plan #1's (which the objective ranks first, not always the cheapest):
    plan #1 is the best, and a later plan of the same cost is ``1.00x #1``."""
    return "best" if rank == 1 else f"{cost / first:.2f}x #1"


RANKED_TRAINER_NODES_NOTE = ("host GiB/node (N of M): needed on the N nodes its trainer runs on; the others hold its "
                             "rollout alone")
"""The ranking's note on the plans with nodes of their rollout alone, whose host need is their trainer's nodes'."""


def past_validated_note(model: Model, validated: int, names: OptionNames) -> str:
    """The ranking's note on the lengths of `model` it marks `YARN_MARK` (as maps mark them): past the validated
    `validated` tokens, in the words of the plan's ``max_model_len`` row (`past_validated_words`) and apply lines (the
    length named as `names` do)."""
    return f"{YARN_MARK} {past_validated_words(model, validated)}: {check_or_plan_words(validated, names)}"


def _length_cell(plan: Plan) -> Text:
    """A ranked plan's length, marked (bold yellow, as the plan's ``max_model_len`` row) where it is past what the
    model is validated for (`Plan.past_validated_length`)."""
    if plan.past_validated_length is None:
        return Text(str(plan.max_model_len))
    return Text(f"{plan.max_model_len}{YARN_MARK}", style="bold yellow")


def ranking_view(answer: Answer, model: Model, names: OptionNames = COMMAND_OPTIONS) -> TableOrBlocks:
    """The ranked plans, a row each; with a `YaRN` column where a plan needs YaRN, and a `host GiB/node` column where
    a plan offloads (its states), where --host-ram is given (then every plan's need, a plan without Offload its
    start-up load, as `solve cluster` gives a pool's), or where a plan's need is past what a node is assumed to have
    (`host-memory-unchecked`: without Offload too); its notes name options as `names` do."""
    lowered = any(plan.lowered_budget for plan in answer.plans)
    spans = answer.rollout_gpus is not None and any((plan.nodes or 1) > 1 for plan in answer.plans)
    needs = [plan.host_memory_gb for plan in answer.plans]
    host_needs = any(need is not None for need in needs)
    on = [_on_trainer_nodes(plan) if need is not None else "" for plan, need in zip(answer.plans, needs, strict=True)]
    past = {plan.past_validated_length for plan in answer.plans if plan.past_validated_length is not None}
    single = [f"#{rank}" for rank, plan in enumerate(answer.plans, start=1) if plan.single_gpu_advised_against]
    critic_peaks = any(plan.critic_pass_shown and plan.source is None for plan in answer.plans)
    caps = [plan.token_budget_cap for plan in answer.plans if plan.token_budget_cap is not None]
    capped = token_cap_words(caps[0], answer.token_budget_cap_source, names) if caps else None
    notes = ([lowered_note(names, capped)] if lowered else []) + [past_validated_note(model, validated, names)
                                                                  for validated in sorted(past)] + (
        [RANKED_TRAINER_NODES_NOTE] if any(on) else []) + (
        [f"{', '.join(single)}: {SINGLE_GPU_CAUTION_SHORT}"] if single else []) + (
        [RANKED_CRITIC_PASS_NOTE] if critic_peaks else []) + (
        [f"#1 has thin headroom: {roomy}"] if (roomy := room_kept_words(answer, answer.plans[0], names)) else [])
    view = Table(title="ranked plans", title_justify="left", caption="\n".join(notes) or None, caption_justify="left")
    yarn = any(plan.rope_scaling_factor for plan in answer.plans)  # an empty column only takes a narrow screen's room
    hours = any(plan.gpu_hours is not None for plan in answer.plans)  # --minimize gpu-hours: what it ranks by
    numbers = ("#", "GPUs", "rollout", "nodes", "max_model_len", "tokens/GPU", "YaRN", "GPU-hours")
    host = "host GiB/node"  # for Offload, as `solve cluster` names it: a number whose header may wrap
    for header in ("#", "GPUs", *(("rollout", "nodes") if spans else ()), "setting", "max_model_len", "tokens/GPU",
                   *(("YaRN",) if yarn else ()), *((host,) if host_needs else ()), "cost",
                   *(("GPU-hours",) if hours else ()), "evidence", "source cell"):
        # Numbers keep their width; words wrap when the table is wider than the screen.
        view.add_column(header, no_wrap=header in numbers, overflow="ellipsis" if header in numbers else "fold",
                        justify="right" if header in (*numbers, host) else "left")
    best = answer.plans[0].cost
    for rank, (plan, need, nodes) in enumerate(zip(answer.plans, needs, on, strict=True), start=1):
        view.add_row(
            str(rank),
            str(plan.gpus) if answer.open_budget else f"{plan.gpus}/{answer.budget_gpus}",
            *((str(plan.rollout_gpus), str(plan.nodes)) if spans else ()),
            Text(plan.setting.label, style=setting_style(plan.setting)),
            _length_cell(plan),
            f"{plan.max_token_len_per_gpu}{'*' if plan.lowered_budget else ''}",
            *((f"{plan.rope_scaling_factor!r}" if plan.rope_scaling_factor else "",) if yarn else ()),
            *((f"{need:.1f}{nodes}" if need is not None else "",) if host_needs else ()),
            f"{plan.cost:.4g} ({_relative(rank, plan.cost, best)})",
            *((f"{plan.gpu_hours:.4g}" if plan.gpu_hours is not None else "",) if hours else ()),
            plan.evidence_label,
            (f"{counted(plan.source.gpus, 'GPU')} @ {plan.source.max_model_len}: {plan.source.setting}"
             f"{'' if plan.source.model == answer.model else f' ({plan.source.model})'}" if plan.source
             else f"memory model: {_peaks_cell(plan)} GiB"),
        )
    return TableOrBlocks(view, heading=0, heading_form="#{}")


RANKED_CRITIC_PASS_NOTE = ("memory model: A / C GiB: the predicted peak per GPU of the actor's pass (A) and of the "
                           "PPO critic's own update (C)")
"""The ranking's note on the source cells that give a critic's own update's peak beside the actor's (`_peaks_cell`)."""


def _peaks_cell(plan: Plan) -> str:
    """An estimated plan's predicted peak per GPU in its source cell: ``57.9 / 66.0`` where a PPO critic's own update
    peaks otherwise (`Plan.critic_pass_shown`: both, as the `memory` row gives them), else the actor's alone."""
    critic = f" / {plan.critic_pass_gb:.1f}" if plan.critic_pass_shown else ""
    return f"{plan.memory_gb:.1f}{critic}"


def _on_trainer_nodes(plan: Plan) -> str:
    """`` (N of M)`` for a plan on M nodes whose trainer runs on N of them, the others holding its rollout alone,
    where its host memory need is per node (`Plan.host_memory_words`); "" for a plan without such nodes."""
    if plan.nodes is None or plan.rollout_gpus is None:
        return ""
    trainer_nodes = trainer_node_count(plan.gpus, plan.rollout_gpus, plan.nodes)
    return "" if trainer_nodes == plan.nodes else f" ({trainer_nodes} of {plan.nodes})"
