"""Turn results into output: rich renderables for people, JSON for programs. Nothing here prints."""

from __future__ import annotations

import json
from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import yaml
from pydantic import TypeAdapter
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.table import Column, Table
from rich.text import Text

from solver.memory import CEILING, GRID, MemoryAnswer, MemoryEstimate, shown_host_gib
from solver.query import Query, TrinityVersion
from solver.results import (
    ENV_EXPORT,
    Answer,
    ClusterResult,
    CurrentSettings,
    GpuMap,
    LengthMapRow,
    ModelMapRow,
    Placement,
    Plan,
    PoolUse,
    Reason,
    env_when,
    host_need_words,
    index_range,
    length_cautions,
    own_scaling_words,
    spans_nodes,
    yarn_caution,
)
from solver.rules import (
    NODE_GPUS,
    SourceCell,
    TablesVerdict,
    batch_words,
    host_ram_bound_words,
    host_ram_check_words,
    host_ram_unchecked_words,
    least_token_budget,
    sp_degrees,
    token_budget,
    trainer_node_count,
)
from solver.tables import (
    ESCALATION_ORDER,
    MAX_ESTIMATED_GPUS,
    NO_SETTING,
    Catalog,
    Cell,
    Fleet,
    MemoryModel,
    Model,
    Pool,
    Setting,
    cell_text,
    counted,
    named_jobs,
    shown_number,
)

SHADES = (
    "black on #e8f5e9",
    "black on #c8e6c9",
    "black on #fff59d",
    "black on #ffe082",
    "black on #ffcc80",
    "black on #ffab91",
    "white on #e53935",
    "white on #c62828",
    "white on #8e0000",
)
"""Cell shades, lightest to darkest, one per step of the source's escalation order."""
NO_SETTING_STYLE = "bold white on grey23"

_ESCALATION_KEYS = [setting.escalation_key for setting in ESCALATION_ORDER]


def setting_style(setting: Setting | None) -> str:
    """The shade for a cell: the further along the source's escalation order, the darker."""
    if setting is None:
        return NO_SETTING_STYLE
    step = bisect_left(_ESCALATION_KEYS, setting.escalation_key)
    return SHADES[min(step, len(SHADES) - 1)]


def cell_record(cell: Cell) -> dict[str, Any]:
    """A documented cell as a JSON object; ``env``, ``offload`` and ``sp`` are null for ``-``; ``source`` and
    ``section``: where its table's numbers come from and the table's heading."""
    setting = cell.setting
    return {
        "gpu": cell.gpu,
        "gpus": cell.gpus,
        "model": cell.model,
        "max_model_len": cell.max_model_len,
        "feasible": setting is not None,
        "env": setting.env if setting else None,
        "offload": setting.offload if setting else None,
        "sp": setting.sp if setting else None,
        "source": cell.source,
        "section": cell.section,
    }


def cells_json(cells: Iterable[Cell]) -> str:
    """The cells as a JSON array, in table order."""
    return json.dumps([cell_record(cell) for cell in cells], indent=2)


def tables_view(catalog: Catalog) -> Group:
    """Each GPU type's documented tables, cells in the source's words, shaded by cost, and a legend."""
    renderables: list[Any] = []
    for gpu_type in catalog.gpu_types:
        for table in gpu_type.tables:
            view = Table()  # title and source on lines of their own: a narrow table does not wrap them
            view.add_column("max_model_len", justify="right", no_wrap=True)
            for model in table.models:
                view.add_column(model, no_wrap=True)
            for row in table.rows:
                cells = [
                    Text(cell_text(setting), style=setting_style(setting))
                    for _, setting in row.cells
                ]
                view.add_row(str(row.max_model_len), *cells)
            renderables += [Text(f"{gpu_type.name} ({gpu_type.memory_gb} GB), {counted(table.gpus, 'trainer GPU')}",
                                 style="table.title"), view,
                            Text(f"source: {gpu_type.table_source(table)}, {table.section}", style="table.caption"),
                            Text()]
    shown = {setting for gpu_type in catalog.gpu_types for table in gpu_type.tables for row in table.rows
             for _, setting in row.cells if setting is not None}
    legend = Text("cost, lightest to darkest: ")
    for setting in sorted(shown | set(ESCALATION_ORDER), key=lambda setting: setting.escalation_key):
        legend.append(f" {setting.label} ", style=setting_style(setting)).append(" ")
    legend.append(f" {NO_SETTING} ", style=NO_SETTING_STYLE).append(" nothing trains")
    renderables.append(legend)
    return Group(*renderables)


JSON_SCHEMA_TYPES: dict[str, Any] = {"solve": list[Answer], "cluster": ClusterResult, "memory": MemoryAnswer,
                                     "map": list[GpuMap]}
"""The result type of each command whose --json a JSON Schema describes (`json_schema`): ``solve``'s array of answers,
``solve cluster``'s placement, ``solve memory``'s breakdown and ``solve map``'s array of maps."""


def json_schema(command: str) -> str:
    """The JSON Schema (draft 2020-12) of what ``solve`` (`command` ``"solve"``), ``solve cluster`` (``"cluster"``),
    ``solve memory`` (``"memory"``) or ``solve map`` (``"map"``) prints with --json, as text: pydantic's schema of its
    result type (`JSON_SCHEMA_TYPES`) for serialization, with the fields' descriptions (docs/schema/ holds them, as
    tests/shown_output.py writes them)."""
    schema = TypeAdapter(JSON_SCHEMA_TYPES[command]).json_schema(mode="serialization")
    heading = {"$schema": "https://json-schema.org/draft/2020-12/schema",
               "title": f"solve{'' if command == 'solve' else ' ' + command} --json"}
    return json.dumps({**heading, **schema, "title": heading["title"]}, indent=2) + "\n"  # the command, not the type


def answers_json(answers: Iterable[Answer]) -> str:
    """The answers as a JSON array, one object per GPU type, plans best first; ``explanation`` (a list
    of ``{rule, detail}``) only when the answers were explained, ``current`` only for --from-config."""
    return json.dumps([answer.as_json() for answer in answers], indent=2)


def _goal(query: Query) -> str:
    """What the query asks for, in words (a heading)."""
    if query.objective == "max_len":
        return f"longest context {query.within_budget}"
    if query.objective == "min_gpus":
        scope = f"any count up to {query.budget_gpus}" if query.open_budget else f"budget {query.budget_gpus}"
        return f"fewest GPUs for {counted(query.max_model_len or 0, 'token')} ({scope})"
    return f"cheapest plan for {counted(query.max_model_len or 0, 'token')} {query.within_budget}"


def apply_lines(plan: Plan, model: Model, version: TrinityVersion | None = None,
                node_gpus: int = NODE_GPUS) -> list[str]:
    """How to apply a plan: the export line (on every node where the job takes several of `node_gpus` GPUs) and the
    Trinity config keys it sets (for the Trinity release `version` where given: 0.5 refuses the trainer's own offload
    flags)."""
    lines = []
    if plan.env:  # comments on lines of their own: each line pastes alone
        lines += [f"# {env_when(spans_nodes(plan, node_gpus))}:", ENV_EXPORT]
    lines.append(f"model.max_model_len: {plan.max_model_len}")
    if plan.rope_scaling_factor is not None:
        lines.append(
            f"model.rope_scaling: {{rope_type: yarn, factor: {plan.rope_scaling_factor!r}, "
            f"original_max_position_embeddings: {model.native_context}}}"
        )
    lines.append(f"trainer.ulysses_sequence_parallel_size: {plan.sp}")
    lines.append(f"trainer.max_token_len_per_gpu: {plan.max_token_len_per_gpu}")
    if plan.offload:
        lines.append("trainer.trainer_strategy: fsdp2")
        lines += ["# as in the A100 offload measurements of Trinity-RFT's guide:", "trainer.save_hf_checkpoint: never"]
        lines.append(
            "trainer.trainer_config.actor_rollout_ref.{actor,ref}.fsdp_config: "
            "{param_offload: true, optimizer_offload: true, offload_policy: true}"
        )
        if version != "0.5":
            lines += [f"# Trinity 0.6 also takes these{'' if version else ' (leave them out before 0.6, which refuses them)'}:",
                      "trainer.{param_offload, optimizer_offload, offload_policy}: true"]
    return lines


def _yarn_caution(plan: Plan, model: Model) -> str:
    """A caution for YaRN beyond what Qwen's model cards validate (`yarn_beyond_validated`; "" otherwise):
    memory fits, quality is untested."""
    return f"; {yarn_caution(model)}" if plan.yarn_beyond_validated else ""


def _budget_origin(plan: Plan) -> str:
    """Where a plan's token budget comes from, in words: Trinity's default, or lowered from it."""
    default = f"ceil(2 x {plan.max_model_len} / SP {plan.sp})"
    if not plan.lowered_budget:
        return default
    return (f"lowered from Trinity's default, {default} = {token_budget(plan.max_model_len, plan.sp)}, which does "
            f"not fit; at least ceil({plan.max_model_len} / {plan.sp}) = "
            f"{least_token_budget(plan.max_model_len, plan.sp)}; more micro-batches, which the cost does not count")


def _relative(rank: int, cost: float, first: float) -> str:
    """A ranked plan's cost relative to plan #1's (which the objective ranks first, not always the cheapest):
    plan #1 is the best, and a later plan of the same cost is ``1.00x #1``."""
    return "best" if rank == 1 else f"{cost / first:.2f}x #1"


_CEILING_WORDS = f"{CEILING} tokens is the longest length the memory model is asked about; more may fit"


APPLY_HEADING = "the lines below (dotted keys; --emit trinity writes YAML)"
"""The summary's ``apply`` row: its lines follow the summary, unindented and never wrapped, so a long one copies
whole; the keys are shorthand (dotted paths, ``{actor,ref}``), which ``--emit trinity`` writes out as YAML."""


def _apply_heading(answer: Answer, several_gpu_types: bool, writing: bool) -> str:
    """The summary's ``apply`` row: `APPLY_HEADING`, and for a config read with --from-config, unless `writing` it
    already, the --write that applies the plan to a copy of it (with the answer's --gpu where the answers are for
    `several_gpu_types`: --write takes one)."""
    if answer.current is None or writing:
        return APPLY_HEADING
    gpu = f"--gpu {answer.gpu} " if several_gpu_types else ""
    return f"{APPLY_HEADING}; {gpu}--write FILE writes a copy of {answer.current.config} with the plan applied"


def _plan_summary(answer: Answer, plan: Plan, model: Model, node_gpus: int, version: TrinityVersion | None,
                  memory_source: str | None, several_gpu_types: bool, writing: bool) -> Group:
    """A plan's summary, a row per fact (those that do not apply left out), then the lines that apply it."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")  # a word wider than the terminal (a config key to copy) breaks, not "…"
    best = "best" if answer.status == "optimal" else "best found"  # feasible: the time limit stopped the search
    beside_length = length_cautions(model, plan.max_model_len)  # said beside the length
    rows: list[tuple[str, RenderableType | None]] = [
        ("plan", Text(f"{plan.setting.label} on {_gpus_of_budget(answer, plan, node_gpus)}", style="bold")),
        ("max_model_len", _length_words(answer, plan, model)),
        ("longer", _across_nodes(answer, plan, model, node_gpus)),
        ("validated", _validated_words(answer, plan, model)),
        ("token budget", f"max_token_len_per_gpu = {plan.max_token_len_per_gpu} ({_budget_origin(plan)})"),
        ("cost", f"{plan.cost:.4g} relative step time ({best})"),
        ("evidence", plan.evidence_text(answer.gpu, answer.model)),
        ("larger GPU", _larger_gpu_words(answer)),
        ("memory", _memory_line(plan, memory_source)),
        *(("caution", Text(caution, style="yellow")) for caution in plan.cautions if caution not in beside_length),
        ("host memory", _host_memory_words(answer, plan)),
        ("tables' best", _tables_best_words(answer, plan)),
        ("tables", _tables_verdict(answer, plan)),
        ("fewer nodes", _fewer_nodes_words(answer, plan, node_gpus)),
        ("other batch", _other_batch_words(answer, plan)),
        ("apply", _apply_heading(answer, several_gpu_types, writing)),
    ]
    for label, value in rows:
        if value is not None:
            grid.add_row(label, value)
    # Each line whole, past the terminal's edge if need be (no crop: `print_view`): a pasted line stays one.
    return Group(grid, *(Text(line, no_wrap=True, overflow="ignore")
                         for line in apply_lines(plan, model, version, node_gpus)))


def _length_words(answer: Answer, plan: Plan, model: Model) -> str:
    """The summary's ``max_model_len`` row: the plan's length, with the rope scaling that reaches it (and its
    caution), and ``at least`` where the longest length the memory model is asked about fits."""
    yarn = (f" (YaRN rope scaling, factor {plan.rope_scaling_factor!r}{_yarn_caution(plan, model)})"
            if plan.rope_scaling_factor else "")
    if model.beyond_native_on_own_scaling(plan.max_model_len):
        yarn = f" ({own_scaling_words(model)})"
    if answer.objective == "max_len" and plan.evidence == "estimated" and plan.max_model_len == CEILING:
        yarn += f" (at least: {_CEILING_WORDS})"
    return f"{plan.max_model_len}{yarn}"


def _validated_words(answer: Answer, plan: Plan, model: Model) -> str | None:
    """The summary's ``validated`` row, where the plan's length is past what the model is known to handle: the
    cheapest plan at the length it is known to (its native context, or the longest YaRN is validated for), where the
    answer has one (None otherwise); briefly where that is this plan's setting on as many GPUs."""
    if (within := answer.validated) is None:
        return None
    known = "its native context" if within.max_model_len == model.native_context else (
        "the longest YaRN is validated for")
    if (within.gpus, within.setting) == (plan.gpus, plan.setting):
        return (f"at {within.max_model_len} ({known}), the cheapest plan is this one ({within.evidence_label}): "
                f"--len {within.max_model_len}")
    return (f"at {within.max_model_len} ({known}), the cheapest plan is {within.setting.label} on "
            f"{counted(within.gpus, 'GPU')} ({within.evidence_label}; {within.cost / plan.cost:.2f}x "
            f"the cost): --len {within.max_model_len}")


def _larger_gpu_words(answer: Answer) -> str | None:
    """The summary's ``larger GPU`` row: a measurement on a GPU with a little more memory, beside an estimate
    (None where the answer has none)."""
    if answer.larger_gpu_cell is None:
        return None
    return (f"{answer.larger_gpu_cell.words('', answer.model)}: it trained there, with a "
            f"little more memory per GPU than the {answer.gpu}'s")


def _host_memory_words(answer: Answer, plan: Plan) -> str | None:
    """The summary's ``host memory`` row: what the plan needs of a node's host memory, and whether the host memory
    given holds it or none was given (`host_ram_check_words`; None where it says nothing)."""
    host = plan.host_memory_words()
    return None if host is None else f"{host}{host_ram_check_words(answer.host_ram_gb)}"


def _tables_best_words(answer: Answer, plan: Plan) -> str | None:
    """The summary's ``tables' best`` row, where the plan is estimated: the tables' best plan for the same question,
    where they have one (None otherwise)."""
    if (measured := answer.measured) is None:
        return None
    return (f"{measured.setting.label} on {counted(measured.gpus, 'GPU')} at {measured.max_model_len} "
            f"({measured.evidence}; {measured.cost / plan.cost:.2f}x the cost), if you "
            "prefer the tables' evidence to the memory model's")


def _tables_verdict(answer: Answer, plan: Plan) -> Text | None:
    """The summary's ``tables`` row, with --estimate (the memory model alone): what the tables say of the plan,
    green where they train it, red where they do not (the table, a measurement, decides); None where they do not
    speak or without --estimate."""
    if answer.tables is None:
        return None
    decide = "" if answer.tables.trains else "; the table, a measurement, decides: drop --estimate to plan with it"
    return Text(f"{_tables_said(answer.tables, answer.gpu, answer.model, plan.gpus, plan.offload)}{decide}",
                style="green" if answer.tables.trains else "red")


def _fewer_nodes_words(answer: Answer, plan: Plan, node_gpus: int) -> str | None:
    """The summary's ``fewer nodes`` row: the plan on fewer nodes of `node_gpus` GPUs, and what it trades
    (None where the answer has none)."""
    if (fewer := answer.fewer_nodes) is None:
        return None
    trade = (f"{fewer.max_model_len} tokens instead of {plan.max_model_len}"
             if fewer.max_model_len != plan.max_model_len
             else f"{fewer.max_model_len} tokens, {fewer.cost / plan.cost:.2f}x the step time")
    return (f"{counted(fewer.nodes or 1, 'node')} of {node_gpus} GPUs instead of "
            f"{counted(plan.nodes or 1, 'node')}: {fewer.setting.label} on {fewer.gpus} trainer + "
            f"{fewer.rollout_gpus} rollout GPUs, {trade} ({fewer.evidence_label}): --gpus {fewer.gpus}")


def _other_batch_words(answer: Answer, plan: Plan) -> str | None:
    """The summary's ``other batch`` row: the better plan a train batch that its data-parallel ranks divide would
    run, and what it trades (None where the answer has none)."""
    if (other := answer.other_batch) is None:
        return None
    ranks = other.gpus // other.sp
    step = f"{other.cost / plan.cost:.2f}x the step time"
    longer = other.max_model_len != plan.max_model_len
    trade = (f"{other.max_model_len} tokens instead of {plan.max_model_len}" if longer
             else f"{counted(plan.gpus - other.gpus, 'GPU')} fewer, {step}" if other.gpus < plan.gpus else step)
    return (f"with a train batch that {ranks} data-parallel ranks divide: "
            f"{other.setting.label} on {counted(other.gpus, 'GPU')}, {trade} "
            f"({other.evidence_label})")


def _memory_line(plan: Plan, memory_source: str | None) -> str:
    """The memory model's prediction for a plan (naming a model of your own by `memory_source`); where it says a
    documented or inferred plan does not fit, that the table (a measurement) decides."""
    predicted = f"{plan.memory_gb:.1f} GiB per GPU predicted, {plan.room_words}"
    named = f"memory model: {memory_source}" if memory_source else "memory model"
    if plan.headroom_gb >= 0:
        return f"{predicted} ({named})"
    return f"{predicted} ({named}; it is cautious here, and the table, a measurement, decides)"


def _no_alternative(query: Query, answer: Answer) -> str:
    """Why `--top` lists fewer plans than asked: every other plan that trains (within the host memory given, if
    any) is no better, in the ways the query leaves open, than a plan above; and, where one of the `answer`'s plans
    is an estimate and Env is not pinned, that estimates keep Env on."""
    ways = [*(["no longer"] if query.objective == "max_len" else []), "no cheaper",
            *([] if query.exact else ["on no fewer GPUs"]), "no better vouched for"]
    limits = [query.host_ram_limit_words] if query.host_ram_gb is not None else []
    limits += [batch_words(query.train_batch_size, query.train_batch_source)] if query.train_batch_size else []
    within = f" within {' and '.join(limits)}" if limits else ""
    # An estimate keeps Env on unless --no-env (`estimates_setting`): one without it may cost a hair less.
    estimated = any(plan.evidence == "estimated" for plan in answer.plans)
    env = "; estimates keep Env on (--no-env estimates without it)" if query.env is None and estimated else ""
    return f"each other plan that trains{within} is {', '.join(ways[:-1])} and {ways[-1]} than a plan above{env}"


def _across_nodes(answer: Answer, plan: Plan, model: Model, node_gpus: int) -> str | None:
    """The summary's ``longer`` row, for the longest context within a budget past one node whose plan takes the
    largest SP a node allows the model: that a larger SP, across nodes, which rft-solver does not plan, is what may
    reach further, in words (None otherwise)."""
    if answer.objective != "max_len" or answer.budget_gpus <= node_gpus:
        return None
    allowed = sp_degrees(model, answer.budget_gpus)
    within = max(sp for sp in allowed if node_gpus % sp == 0)
    across = [sp for sp in allowed if sp > node_gpus]
    if plan.sp != within or not across:
        return None
    return (f"SP={across[0]} or more may reach further, but its groups would span nodes of {node_gpus} GPUs: "
            "rft-solver keeps each SP group inside a node (--node-gpus), as the tables measured")


def _gpus_of_budget(answer: Answer, plan: Plan, node_gpus: int) -> str:
    """``4 of 6 GPUs (2 left for rollout)``, ``6 of 6 GPUs (none left for rollout: ...)``; ``4 of 6 GPUs, with 2 rollout
    GPUs (2 unused: ...)`` with --rollout-gpus
    (and the nodes, with the rollout GPUs they leave, when the layout takes more than one node of
    `node_gpus`); ``4 GPUs`` when the budget is not the user's; ``16 of 20 GPUs, 2 whole nodes of 8 (4 left for
    rollout)`` for a trainer past one node."""
    if answer.rollout_gpus and plan.nodes is not None and plan.rollout_gpus is not None:
        trainer = counted(plan.gpus, "GPU") if answer.open_budget else f"{plan.gpus} of {counted(answer.budget_gpus, 'GPU')}"
        nodes, rollout = plan.nodes, plan.rollout_gpus
        if nodes == 1:
            # The budget's GPUs the trainer leaves, for the rollout where a node holds them (not for a config's
            # rollout, which its engines give: --from-config refuses --rollout-gpus).
            widened = rollout + plan.unused_gpus
            them = "it" if plan.unused_gpus == 1 else "them"
            unused = f" ({plan.unused_gpus} unused: --rollout-gpus {widened} gives {them} to the rollout)" if (
                plan.unused_gpus and not answer.open_budget and answer.current is None
                and plan.gpus + widened <= node_gpus) else ""
            return f"{trainer}, with {counted(rollout, 'rollout GPU')}{unused}"
        more = "" if rollout == answer.rollout_gpus else \
            f" ({answer.rollout_gpus} asked: a trainer on whole nodes leaves the rollout whole nodes)"
        return f"{trainer}, with {counted(rollout, 'rollout GPU')} on {nodes} nodes of {node_gpus}{more}"
    spanned = f", {plan.gpus // node_gpus} whole nodes of {node_gpus}" if plan.gpus > node_gpus else ""
    if answer.open_budget:
        return counted(plan.gpus, "GPU") + spanned
    # --rollout-gpus 0: no rollout here; a config's rollout, with no cluster section to count it in, goes beside
    spare = "unused" if answer.rollout_gpus == 0 or answer.current is not None else "left for rollout"
    capped = f"; plans take at most {MAX_ESTIMATED_GPUS} trainer GPUs" if answer.budget_gpus > MAX_ESTIMATED_GPUS else ""
    # The whole budget taken, where no --rollout-gpus says the rollout has GPUs of its own: a budget that is all the
    # GPUs a user has leaves the explorer none. (A config's rollout, with no cluster section to count it in, goes
    # beside the trainer: its note says so.)
    none_left = (f" (none left for rollout{_rollout_hint(answer.budget_gpus, node_gpus)})"
                 if answer.rollout_gpus is None and answer.current is None else "")
    left = none_left if plan.unused_gpus == 0 else f" ({plan.unused_gpus} {spare}{capped})"
    return f"{plan.gpus} of {counted(answer.budget_gpus, 'GPU')}{spanned}{left}"


def _rollout_hint(budget_gpus: int, node_gpus: int) -> str:
    """How to keep some of a budget of `budget_gpus` for the rollout, which a plan taking it whole leaves none
    (``--gpus`` counts the trainer's alone), with numbers to copy: a quarter of one node's budget (at least 1 GPU),
    or the last node of several (a trainer past one node takes whole nodes); "" for one GPU, which has none to
    spare."""
    if budget_gpus == 1:
        return ""
    keep = node_gpus if budget_gpus > node_gpus else max(budget_gpus // 4, 1)
    return f": to keep {keep} of these {budget_gpus} for it, ask --gpus {budget_gpus - keep} --rollout-gpus {keep}"


LOWERED_NOTE = ("* trainer.max_token_len_per_gpu below Trinity's default ceil(2 x L / SP), which does not fit "
                "(--token-budget auto)")
"""The caption of a table with a lowered token budget (marked ``*``)."""
RANKED_TRAINER_NODES_NOTE = ("host GiB/node (N of M): needed on the N nodes its trainer runs on; the others hold its "
                             "rollout alone")
"""The ranking's note on the plans with nodes of their rollout alone, whose host need is their trainer's nodes'."""


UNBOUNDED_WIDTH = 1 << 16
"""Room enough to measure any table whole."""


def needed_width(table: Table, console: Console, options: ConsoleOptions) -> int:
    """The columns `table` needs not to break words or cut cells: its whole width where no column wraps (a table of
    the source's cells); else its width with the wrapping columns narrowed to the longest word among them. (Rich
    narrows the widest wrapping columns first, whatever their words, so the table's minimum width breaks some.)"""
    unbounded = options.update_width(UNBOUNDED_WIDTH)
    whole = console.measure(table, options=unbounded).maximum
    if all(column.no_wrap for column in table.columns):
        return whole
    ranges = [_column_range(table, column, console, unbounded) for column in table.columns]
    level = max(measured.minimum for measured, column in zip(ranges, table.columns, strict=True) if not column.no_wrap)
    borders = whole - sum(measured.maximum for measured in ranges)
    return borders + sum(measured.maximum if column.no_wrap else min(measured.maximum, level)
                         for measured, column in zip(ranges, table.columns, strict=True))


def _column_range(table: Table, column: Column, console: Console, options: ConsoleOptions) -> Measurement:
    """The least and most columns `column` of `table` takes, its padding included (as rich measures it)."""
    cells = [*([column.header] if table.show_header else []), *column.cells]
    measured = [Measurement.get(console, options, cell) for cell in cells]
    least, most = Measurement(max(m.minimum for m in measured), max(m.maximum for m in measured)).clamp(
        column.min_width, column.max_width)
    padding = table.padding[1] + table.padding[3]
    return Measurement(least + padding, most + padding)


class TableOrBlocks:
    """A table with a header where it fits the width (`needed_width`), else its rows as blocks: the `heading`
    column's cell (in `heading_form`), beside the other columns' headers and non-empty cells, a row each, under the
    table's title and over its caption. Both forms show the one table's cells: a narrow terminal gets every cell
    whole instead of words broken into 3-column slivers."""

    def __init__(self, table: Table, heading: int, heading_form: str = "{}") -> None:
        self.table = table
        self.heading = heading
        self.heading_form = heading_form

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if needed_width(self.table, console, options) <= options.max_width:
            yield self.table
            return
        blocks = Table.grid(padding=(0, 2))
        blocks.add_column(style="bold", overflow="fold")
        blocks.add_column(no_wrap=True)
        blocks.add_column(overflow="fold", justify="default")  # the grid pads values, unstyled: a shade is the text's
        columns = [list(column.cells) for column in self.table.columns]
        for row in range(self.table.row_count):
            heading = self.heading_form.format(columns[self.heading][row])
            for index, column in enumerate(self.table.columns):
                cell = columns[index][row]
                if index != self.heading and str(cell):
                    blocks.add_row(heading, column.header, cell)
                    heading = ""
        if self.table.title:
            yield Text(str(self.table.title), style="table.title")
        yield blocks
        if self.table.caption:
            yield Text(str(self.table.caption), style="table.caption")


def _ranking(answer: Answer) -> TableOrBlocks:
    """The ranked plans, a row each; with a `YaRN` column where a plan needs YaRN, and a `host GiB/node` column where
    a plan offloads (its states) or where --host-ram is given (then every plan's need, a plan without Offload its
    start-up load, as `solve cluster` gives a pool's)."""
    lowered = any(plan.lowered_budget for plan in answer.plans)
    spans = answer.rollout_gpus is not None and any((plan.nodes or 1) > 1 for plan in answer.plans)
    needs = [plan.host_memory_gb for plan in answer.plans]
    host_needs = any(need is not None for need in needs)
    on = [_on_trainer_nodes(plan) if need is not None else "" for plan, need in zip(answer.plans, needs, strict=True)]
    notes = ([LOWERED_NOTE] if lowered else []) + ([RANKED_TRAINER_NODES_NOTE] if any(on) else [])
    view = Table(title="ranked plans", title_justify="left", caption="\n".join(notes) or None, caption_justify="left")
    yarn = any(plan.rope_scaling_factor for plan in answer.plans)  # an empty column only takes a narrow screen's room
    numbers = ("#", "GPUs", "rollout", "nodes", "max_model_len", "tokens/GPU", "YaRN")
    host = "host GiB/node"  # for Offload, as `solve cluster` names it: a number whose header may wrap
    for header in ("#", "GPUs", *(("rollout", "nodes") if spans else ()), "setting", "max_model_len", "tokens/GPU",
                   *(("YaRN",) if yarn else ()), *((host,) if host_needs else ()), "cost", "evidence", "source cell"):
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
            str(plan.max_model_len),
            f"{plan.max_token_len_per_gpu}{'*' if plan.lowered_budget else ''}",
            *((f"{plan.rope_scaling_factor!r}" if plan.rope_scaling_factor else "",) if yarn else ()),
            *((f"{need:.1f}{nodes}" if need is not None else "",) if host_needs else ()),
            f"{plan.cost:.4g} ({_relative(rank, plan.cost, best)})",
            plan.evidence_label,
            (f"{counted(plan.source.gpus, 'GPU')} @ {plan.source.max_model_len}: {plan.source.setting}"
             f"{'' if plan.source.model == answer.model else f' ({plan.source.model})'}" if plan.source
             else f"memory model: {plan.memory_gb:.1f} GiB"),
        )
    return TableOrBlocks(view, heading=0, heading_form="#{}")


def _on_trainer_nodes(plan: Plan) -> str:
    """`` (N of M)`` for a plan on M nodes whose trainer runs on N of them, the others holding its rollout alone,
    where its host memory need is per node (`Plan.host_memory_words`); "" for a plan without such nodes."""
    if plan.nodes is None or plan.rollout_gpus is None:
        return ""
    trainer_nodes = trainer_node_count(plan.gpus, plan.rollout_gpus, plan.nodes)
    return "" if trainer_nodes == plan.nodes else f" ({trainer_nodes} of {plan.nodes})"


def _current_view(answer: Answer, current: CurrentSettings, query: Query) -> Group:
    """The verdict on a config's own settings, then a ``but:`` line for each of its problems (wrapped lines
    indented under the first)."""
    problems = Table.grid(padding=(0, 1))
    for problem in current.config_problems:
        problems.add_row("  but:", problem, style="yellow")
    verdict = _verdict(answer, current, query, bool(current.config_problems))
    return Group(verdict, problems) if current.config_problems else Group(verdict)


def _verdict(answer: Answer, current: CurrentSettings, query: Query, problems: bool) -> Text:
    """Whether a config's own settings train, and why not (a broken rule, a cell that ran out of memory, the host
    memory, or nothing that vouches), in words; yellow where they do not, or do with `problems`."""
    setting = Setting(env=current.env, offload=current.offload, sp=current.sp)
    count = counted(current.gpus, "trainer GPU") + ("" if current.gpus_given else
                                                    " (the budget's: the config does not give its GPUs)")
    runs = f"{current.config} runs" if current.length_given else f"{current.config}'s settings would run"
    env = f"Env {'on' if current.env else 'off'}, read from this shell's PYTORCH_CUDA_ALLOC_CONF"
    said = f"{runs} {setting.label} on {count} at {current.max_model_len} tokens ({'' if current.length_given else '--len; '}{env}): "
    if current.plan is not None:
        evidence = current.plan.evidence_text(answer.gpu, answer.model)
        return Text(f"{said}it trains ({evidence}){_dearer(answer, current)}", style="yellow" if problems else "green")
    cell = current.out_of_memory
    host = "" if current.host_memory_needed is None else (
        f"{host_need_words(f'{current.host_memory_needed:.1f}', current.offload)}, more than "
        f"{query.host_ram_bound_words}")
    if current.broken_rule:
        verdict = f"it breaks a rule: {current.broken_rule}"
    elif cell is not None:  # the GPU memory first: more host memory would not make it train
        longer = (f", and at {current.max_model_len} tokens each GPU holds more" if
                  cell.max_model_len < current.max_model_len and current.max_token_len_per_gpu is None else "")
        verdict = (f"{cell.words(answer.gpu, answer.model)}, so {setting.label} ran out of memory there"
                   f"{_fewer(cell, current.gpus, current.offload)}{longer}{'; and ' + host if host else ''}")
    elif host and not _short_of_gpu_memory(current):
        verdict = host
    else:
        verdict = (f"nothing in {query.evidence_sources} says it trains{_predicted(current)}"
                   f"{'; and ' + host if host else ''}")
    follows = ("the best plan follows" if answer.plans else "and no plan was found within the time limit"
               if answer.status == "unknown" else "nor does any plan (the reason follows)")
    return Text(f"{said}{verdict}; {follows}", style="yellow")


def _dearer(answer: Answer, current: CurrentSettings) -> str:
    """Where a config's own settings train by estimate without Env and the best plan, at the same length, costs more:
    why it is the best, in words ("" otherwise: a longer plan's cost is its length's). Estimates keep Env on unless
    --no-env (`estimates_setting`), so the config's were no candidate; Env's cost is a tie-break."""
    own, best = current.plan, answer.plans[0] if answer.plans else None
    if (own is None or best is None or best.cost <= own.cost or own.evidence != "estimated" or own.env
            or best.max_model_len != own.max_model_len):
        return ""
    return (f"; the best plan below costs a little more ({best.cost:.4g} against {own.cost:.4g}): estimates keep Env "
            "on (--no-env estimates without it)")


def _tables_said(tables: TablesVerdict, gpu: str, model: str, gpus: int, offload: bool) -> str:
    """What a GPU type's tables say of a setting (with `offload` or not) on `gpus` GPUs, in words: it trains (and which
    cell vouches), or it runs out of memory (and which cell says so)."""
    cell = tables.source.words(gpu, model)
    cells = "your cells" if tables.source.table_source else "the source's cells"
    return (f"it trains ({tables.evidence}: {cell})" if tables.trains else
            f"it runs out of memory ({cell}: {cells} read as the first setting that trained in their order, '-' "
            f"where none did, so this setting, or one that includes it, ran out of memory there"
            f"{_fewer(tables.source, gpus, offload)})")


def _fewer(cell: SourceCell, gpus: int, offload: bool) -> str:
    """For a cell of another count's table that says a setting ran out of memory: why that holds on `gpus` too,
    in words ("" for the count's own table): on fewer GPUs each holds more; with Offload (a table for fewer GPUs,
    whose cell says the setting with Offload ran out of memory) each holds as much, and without `offload` more."""
    if cell.gpus == gpus:
        return ""
    if cell.gpus > gpus:
        return f", and on {counted(gpus, 'GPU')} each holds more"
    as_much = f"as much per GPU on {gpus} GPUs as on {cell.gpus} (the states are on the CPU)"
    return (f", and with Offload it holds {as_much}" if offload else
            f", and it ran out with Offload too, which holds {as_much}, and without Offload more")


def _short_of_gpu_memory(current: CurrentSettings) -> bool:
    """Whether the memory model predicts the settings do not fit the GPUs (their peak, or the optimizer step's)."""
    return current.predicted is not None and (current.predicted[0] > current.predicted[1]
                                              or current.predicted_step is not None)


def _predicted(current: CurrentSettings) -> str:
    """The memory model's figures for settings no table speaks of, in words ("" without them)."""
    if current.predicted is None:
        return ""
    total, usable = current.predicted
    step = "" if current.predicted_step is None else (
        f", but {current.predicted_step[0]:.2f} GiB at the optimizer step, more than the {current.predicted_step[1]:.2f} "
        "it may take")
    return f" (the memory model predicts {total:.1f} GiB per GPU, of {usable:.1f} usable{step})"


def _explanation(reasons: Iterable[Reason], said: str | None) -> Group:
    """The ``why`` rows: each rule and what it means here; one that only repeats the reason `said` above (the
    tables hold no plan at all) points to it."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="dim", no_wrap=True)
    grid.add_column()
    for reason in reasons:
        grid.add_row(reason.rule, "the reason above" if reason.detail == said else reason.detail)
    return Group(Text("why", style="bold"), grid)


def answers_view(answers: Iterable[Answer], query: Query, catalog: Catalog, version: TrinityVersion | None = None,
                 *, writing: bool = False) -> Group:
    """Per answer: what was asked, the best plan in full (or why there is none; its config keys for the Trinity
    release `version` where given; for a config read with --from-config, how --write applies it, unless `writing`
    already), then the ranking."""
    model = catalog.model(query.model)
    renderables: list[Any] = []
    for answer in answers:
        renderables.append(Text(f"{answer.gpu} · {answer.model} · {_goal(query)}: {answer.status}", style="bold"))
        if answer.current:
            renderables.append(_current_view(answer, answer.current, query))
        after_apply = None  # where what follows the summary's apply lines starts
        if answer.plans:
            renderables.append(_plan_summary(answer, answer.plans[0], model, query.node_gpus, version,
                                             query.memory.own_source, len(query.gpus) > 1, writing))
            after_apply = len(renderables)
            if query.top > 1:  # the ranking asked for, even of one plan: the note below counts its rows
                renderables.append(_ranking(answer))
            if len(answer.plans) < query.top:
                why = (_no_alternative(query, answer) if answer.status == "optimal" else
                       "the time limit stopped the search; a longer --time-limit may find more, and better ones")
                renderables.append(Text(f"{counted(len(answer.plans), 'plan')} of the {query.top} asked for: {why}"))
            elif answer.status == "feasible":
                proven = "these plans" if len(answer.plans) > 1 else "this plan"
                renderables.append(Text(UNPROVEN_HINT.format(proven), style="yellow"))
        else:
            renderables.append(Text(answer.no_plan_line, style="red"))
            if answer.explanation is None:
                renderables.append(Text(UNDECIDED_HINT if answer.status == "unknown" else NO_PLAN_HINT, style="dim"))
        if answer.explanation:
            renderables.append(_explanation(answer.explanation, None if answer.plans else answer.reason))
        if after_apply is not None and after_apply < len(renderables):  # a blank line ends the lines to paste
            renderables.insert(after_apply, Text())
        renderables.append(Text())
    return Group(*renderables)


UNPROVEN_HINT = ("the time limit stopped the search before it proved {} the best: a longer --time-limit may find "
                 "better ones")
"""The line under a ``feasible`` answer's plans ({}: which)."""
NO_PLAN_HINT = "--explain says why, rule by rule, and names plans beyond these limits where there are any"
"""The line under a reason without an explanation."""
UNDECIDED_HINT = "a longer --time-limit lets the search find a plan or prove that none exists"
"""The line under a reason where the time limit stopped the search before it decided."""
WIDENED_NOTE = "(+N): grown onto N idle GPUs of its node, where more GPUs run it faster (or longer, for at_least)"
"""A cluster table's note on the jobs that `place` widened."""
MORE_ROLLOUT_NOTE = "(N asked): a trainer on whole nodes leaves its rollout whole nodes, more GPUs than the job asked"
"""A cluster table's note on the jobs whose rollout takes more GPUs than they asked."""

AT_LEAST_NOTE = "(≥N): the job asked for at_least N tokens, longer where a plan allows"
"""A cluster table's note on the jobs that asked for at_least a length."""
TRAINER_NODES_NOTE = ("host GiB/node (node N, ...): needed only on the nodes named, those its trainer runs on; its "
                      "other nodes hold its rollout alone")
"""A cluster table's note on the jobs with nodes of their rollout alone, whose host need is their trainer's nodes'."""
COST_NOTE = "cost: the job's relative step time, as solve gives its plan (compare within one GPU type)"
"""The line under a cluster's tables that says what their cost column counts."""

NO_ROLLOUT_GPUS_NOTE = ("no rollout_gpus given, so no GPUs for the explorer here (--emit-dir writes mode: train); give "
                        "rollout_gpus, or 0 where the explorer runs elsewhere")
"""What a cluster's output says of the placed jobs that give no rollout_gpus (they get none, unlike a job that asks
for 0, which says so)."""


def tie_break_unproven(interrupted: bool) -> str:
    """The line under an ``optimal`` cluster status whose tie-break did not prove its pick: the time limit, or
    Ctrl-C where `interrupted`, stopped it."""
    return (f"placement optimal; tie-break not proven: {'Ctrl-C' if interrupted else 'the time limit'} stopped the "
            "pick among the equally good placements, so another run or --workers may give another of them"
            + ("" if interrupted else " (raise --time-limit)"))


def cluster_json(result: ClusterResult) -> str:
    """A cluster placement as JSON: status, objective (and what it counts), bound, placements, unplaced jobs, and
    whether Ctrl-C cut the search short."""
    return json.dumps(result.model_dump(mode="json"), indent=2)


def _pool_view(pool: Pool, use: PoolUse, here: list[Placement]) -> RenderableType:
    """A pool's table, under what the placement `use`s of it: a row per job placed `here` (its nodes, GPUs, trainer
    and rollout GPUs against those it asked, plan, length, cost, evidence and host memory), or its title alone
    where nothing is placed."""
    host_ram = f" ({shown_number(pool.host_ram_gb)} GiB host memory each)" if pool.host_ram_gb is not None else ""
    title = (f"pool {pool.name}: {pool.nodes} x {pool.gpus_per_node} {pool.gpu}{host_ram}; "
             f"{counted(use.nodes_used, 'node')} and {use.gpus_used} of {use.gpus} GPUs used")
    if not here:  # a title, without an empty table
        return Text(title, style="italic")
    columns = _PoolColumns.of(pool, here)
    widened = any(placement.widened_from is not None for placement in here)
    more_rollout = any(placement.rollout_gpus != placement.asked_rollout_gpus for placement in here)
    rollout_nodes = columns.offloads and any(placement.trainer_nodes != placement.nodes for placement in here)
    notes = ([f"{LOWERED_NOTE}: set it in the job's config"] if columns.lowered else []) + (
        [WIDENED_NOTE] if widened else []) + ([MORE_ROLLOUT_NOTE] if more_rollout else []) + (
        [AT_LEAST_NOTE] if columns.lengthened else []) + ([TRAINER_NODES_NOTE] if rollout_nodes else [])
    view = Table(title=title, title_justify="left", caption_justify="left", caption="\n".join(notes) or None)
    for header in columns.headers:
        view.add_column(header, no_wrap=True, justify="right" if header in (
            "trainer", "rollout", "max_model_len", "YaRN", "tokens/GPU", "host GiB/node") else "left")
    for placement in sorted(here, key=lambda p: (p.nodes, p.gpu_indexes, p.job)):  # as the GPUs lie
        view.add_row(*_pool_row(pool, placement, columns))
    return TableOrBlocks(view, heading=columns.headers.index("job"))


@dataclass(frozen=True)
class _PoolColumns:
    """What a pool's table (`_pool_view`) shows besides its fixed columns, as the jobs placed in it need: each job's
    host memory per node (`offloads`: where the pool checks it, with its Offload or its load; else where a job
    offloads), YaRN's factor as --top shows it (`scaled`), the token budget where --token-budget auto lowered one
    (`lowered`); and the jobs that asked for at_least a length and run longer (`lengthened`, their names: at the
    length asked, "(≥N)" would add nothing)."""

    offloads: bool
    scaled: bool
    lowered: bool
    lengthened: frozenset[str]

    @classmethod
    def of(cls, pool: Pool, here: list[Placement]) -> _PoolColumns:
        """The columns of `pool`'s table with the jobs placed `here`."""
        return cls(offloads=pool.host_ram_gb is not None or any(placement.plan.offload for placement in here),
                   scaled=any(placement.plan.rope_scaling_factor for placement in here),
                   lowered=any(placement.plan.lowered_budget for placement in here),
                   lengthened=frozenset(placement.job for placement in here if placement.at_least
                                        and placement.plan.max_model_len > placement.asked_max_model_len))

    @property
    def headers(self) -> tuple[str, ...]:
        """The table's headers, in order."""
        return ("nodes", "GPUs", "job", "trainer", "rollout", "plan", "max_model_len",
                *(("YaRN",) if self.scaled else ()), *(("tokens/GPU",) if self.lowered else ()), "cost", "evidence",
                *(("host GiB/node",) if self.offloads else ()))


def _pool_row(pool: Pool, placement: Placement, columns: _PoolColumns) -> tuple[RenderableType, ...]:
    """A placed job's row in `pool`'s table, under `columns.headers`: its nodes, GPUs, trainer GPUs (with those
    widening added) and rollout GPUs (against those it asked), plan, length, cost, evidence and host memory."""
    plan = placement.plan
    nodes = ", ".join(map(str, placement.nodes))
    indexes = placement.gpu_indexes
    gpus = "all" if len(indexes) == pool.gpus_per_node else index_range(indexes)
    need = placement.host_memory_gb if placement.host_memory_gb is not None else plan.host_memory_gb
    trainer_nodes = placement.trainer_nodes
    named = f"{'node' if len(trainer_nodes) == 1 else 'nodes'} {', '.join(map(str, trainer_nodes))}"
    on = "" if trainer_nodes == placement.nodes else f" ({named})"
    host = () if not columns.offloads else (f"{need:.1f}{on}" if need is not None else "",)
    asked = f" (≥{placement.asked_max_model_len})" if placement.job in columns.lengthened else ""
    length = f"{plan.max_model_len}{asked}"
    added = "" if placement.widened_from is None else f" (+{placement.trainer_gpus - placement.widened_from})"
    rollout = (f"{placement.rollout_gpus}" if placement.rollout_gpus == placement.asked_rollout_gpus
               else f"{placement.rollout_gpus} ({placement.asked_rollout_gpus} asked)")
    return (nodes, gpus, placement.job, f"{placement.trainer_gpus}{added}", rollout,
            Text(plan.setting.label, style=setting_style(plan.setting)), length,
            *((f"{plan.rope_scaling_factor!r}" if plan.rope_scaling_factor else "",) if columns.scaled else ()),
            *((f"{plan.max_token_len_per_gpu}{'*' if plan.lowered_budget else ''}",) if columns.lowered else ()),
            f"{plan.cost:.4g}", plan.evidence_label, *host)


UNPLACED_JOBS_WIDTH = 40
"""The most columns the unplaced jobs' names take beside their reason (a longer name takes its own)."""


def cluster_view(result: ClusterResult, fleet: Fleet, minimize_nodes: bool = False) -> Group:
    """A table per pool, a row per placed job with its nodes and plan; the cautions `solve` would give the
    placed plans (each once, with its jobs); then the unplaced jobs."""
    renderables: list[Any] = [*_status_lines(result, fleet, minimize_nodes), *_search_warnings(result)]
    for pool, use in zip(fleet.pools, result.pools, strict=True):
        renderables.append(_pool_view(pool, use, [p for p in result.placements if p.pool == pool.name]))
    if result.placements:
        renderables.append(Text(COST_NOTE, style="dim"))
    renderables += _placed_cautions(result)
    ungiven = {job.name for job in fleet.jobs if not job.rollout_gpus_given}
    if unasked := [placement.job for placement in result.placements if placement.job in ungiven]:
        renderables.append(Text(f"note: {named_jobs(unasked)}: {NO_ROLLOUT_GPUS_NOTE}", style="yellow"))
    if result.unplaced:
        renderables.append(_unplaced_view(result, len(fleet.jobs)))
    return Group(*renderables)


def _status_lines(result: ClusterResult, fleet: Fleet, minimize_nodes: bool) -> list[Text]:
    """A placement's status, with what it counts (the nodes used where `minimize_nodes`, else the placed priority),
    its bound and gap; and, without a bound, how long working out the jobs' ways took."""
    if result.objective is None:
        return [Text(f"status: {result.status}", style="bold red")]
    gap = f", gap {result.gap:.1%}" if result.gap else ""
    measure = "nodes used" if minimize_nodes else f"placed priority ({_priority_within_reach(result, fleet)})"
    stopped = ("interrupted" if result.interrupted else "time ran out") + " before the search's first placement"
    bound = f"proven bound {result.bound}" if result.bound is not None else (
        f"no bound proven ({stopped}: the greedy one stands{'' if result.interrupted else '; raise --time-limit'})")
    if result.host_rounded and result.bound is not None:
        bound = f"bound {result.bound} with the host memory rounded"
    lines = [Text(f"status: {result.status}; {measure}: {result.objective}, {bound}{gap}", style="bold")]
    if result.bound is None and not result.interrupted:
        lines.append(Text(f"working out the jobs' ways to run took {result.planning_s:.1f} s before the search could "
                          "start"))
    return lines


def _search_warnings(result: ClusterResult) -> list[Text]:
    """What leaves a placement less than proven best: a tie-break not proven, host memory rounded up, the jobs' ways
    that ran out of time."""
    warnings = []
    if result.status == "optimal" and not result.tie_broken:
        warnings.append(Text(tie_break_unproven(result.interrupted), style="yellow"))
    if result.host_rounded:
        warnings.append(Text(
            f"host memory of the jobs rounded up into classes in {', '.join(result.host_rounded)} (the ways to "
            "fill a node were too many otherwise)"
            + (": no node's host memory is exceeded, but the placement is not proven optimal" if result.placements
               else ""), style="yellow"))
    if result.undecided_ways:
        warnings.append(Text(
            f"{counted(result.undecided_ways, 'question')} about the jobs' ways to run (a pool and a GPU count each) "
            "ran out of time (--time-limit): those ways were left out or may not have their best plans, so the placement "
            "is not proven best",
            style="yellow"))
    return warnings


def _placed_cautions(result: ClusterResult) -> list[Text]:
    """The cautions `solve` would give the placed plans, each once, with the jobs it is about."""
    cautioned: dict[str, list[str]] = {}
    for placement in result.placements:
        for caution in placement.plan.cautions:
            cautioned.setdefault(caution, []).append(placement.job)
    cautions = []
    for caution, jobs in cautioned.items():
        cautions.append(Text(f"caution: {named_jobs(jobs)}: {caution}", style="yellow"))
    return cautions


def _priority_within_reach(result: ClusterResult, fleet: Fleet) -> str:
    """The fleet's total priority, in words (``of 17``), and where some jobs have no way to run in any pool
    (`ClusterResult.no_way_to_run`), the most a placement can reach without them (``of 17, or 7 without the job
    that has no way to run``)."""
    total = sum(job.priority for job in fleet.jobs)
    wayless = set(result.no_way_to_run)
    if not wayless:
        return f"of {total}"
    reachable = sum(job.priority for job in fleet.jobs if job.name not in wayless)
    jobs = "the job that has" if len(wayless) == 1 else f"the {len(wayless)} jobs that have"
    return f"of {total}, or {reachable} without {jobs} no way to run"


def _unplaced_view(result: ClusterResult, jobs: int) -> Table:
    """The unplaced jobs, a row per reason with the jobs it is given for (in the order of their first job)."""
    by_reason: dict[str, list[str]] = {}
    for job in result.unplaced:
        by_reason.setdefault(job.reason, []).append(job.job)
    view = Table(title=f"unplaced jobs: {len(result.unplaced)} of {jobs}", title_justify="left")
    longest = max(len(job.job) for job in result.unplaced)  # a name is never cut: folded where the room is short
    view.add_column("jobs" if len(by_reason) < len(result.unplaced) else "job",
                    max_width=max(UNPLACED_JOBS_WIDTH, longest + 1), overflow="fold")
    view.add_column("reason")
    for reason, named in by_reason.items():
        view.add_row(", ".join(named), reason)
    return view


def memory_model_yaml(memory_model: MemoryModel) -> str:
    """A memory-model file (``tables/memory-model.yaml``'s format), with comments saying what it is."""
    fit = memory_model.fit
    lines = [
        "# Memory-model coefficients, written by `solve calibrate` (solver/calibrate.py): a linear program",
        "# fitted on the positive and negative evidence of the cells below. Regenerate, never edit by hand.",
        "# The terms and their units are described in solver/memory.py.",
        "source: " + _yaml_string(memory_model.source),
        "coefficients:",
        *(f"  {name}: {value}" for name, value in memory_model.coefficients.model_dump().items()),
        f"margin: {memory_model.margin}  # default safety margin of estimated plans: fit in this much less than usable",
        "fit:  # on the observations it was fitted on",
        *(f"  {name}: {value}" for name, value in fit.model_dump(exclude={"range"}).items()),
        *(["  range:  # what the observations span: past it, estimates extrapolate, and say so"] if fit.range else []),
        *(f"    {name}: {str(value).lower() if isinstance(value, bool) else value}"
          for name, value in (fit.range.model_dump() if fit.range else {}).items()),
    ]
    return "\n".join(lines) + "\n"


def _yaml_string(text: str) -> str:
    """`text` as a double-quoted YAML scalar that PyYAML reads back: YAML's escapes (JSON's write a character
    beyond U+FFFF as a surrogate pair, which YAML refuses)."""
    dumped: str = yaml.safe_dump(text, default_style='"', allow_unicode=True, width=float("inf"))
    return dumped.rstrip("\n")


def memory_view(result: MemoryEstimate, label: str, gpu: str, model: str, gpus: int, offload: bool,
                planner_command: str, own_budget: bool = False) -> Group:
    """A breakdown table of one GPU's predicted peak memory, the verdict, the longest length that fits
    (at the user's token budget with `own_budget`), the host memory a node needs (`offload`: for the states
    too), its cautions, what `gpu`'s tables say of the same setting for `model` on `gpus` GPUs (they decide
    where they speak), and where the setting does not train, the planner's command that finds one that does
    (`planner_command`, a line of its own to copy)."""
    lines: list[RenderableType] = [Text(label, style="bold"), _terms_table(result),
                                   Text(_fit_words(result), style="green" if result.fits else "red"),
                                   Text(_longest_words(result, gpu, model, gpus, offload, own_budget))]
    if result.host_memory_gib is not None:
        lines.append(_host_memory_line(result, result.host_memory_gib, offload))
    lines += [Text(f"caution: {caution}", style="yellow") for caution in result.cautions]
    if result.beyond_calibration:
        lines.append(Text(f"beyond the memory model's calibration: {', '.join(result.beyond_calibration)}; the "
                          "prediction extrapolates there", style="yellow"))
    if result.tables is not None:
        lines.append(_tables_line(result, result.tables, gpu, model, gpus, offload, own_budget))
    if not result.trains:  # solve memory judges one setting: the planner tries them all
        lines += [Text("to find a setting that trains, run the planner, which tries every SP, Env, Offload and token "
                       "budget:"), Text(f"  {planner_command}", no_wrap=True, overflow="ignore")]
    return Group(*lines)


def _terms_table(result: MemoryEstimate) -> Table:
    """The breakdown's table: GiB per term, the total and what is usable."""
    view = Table()
    view.add_column("term")
    view.add_column("GiB", justify="right")
    for term, gib in result.terms.items():
        view.add_row(term.replace("_", " "), f"{gib:.2f}")
    view.add_row(Text("total", style="bold"), Text(f"{result.total_gib:.2f}", style="bold"))
    view.add_row("usable", f"{result.usable_gib:.2f}")
    return view


def _fit_words(result: MemoryEstimate) -> str:
    """Whether the breakdown fits, by how much, and what share of the memory is usable (where the activations
    decide), and (without Offload) what the optimizer step takes of its share."""
    fits = result.fits
    usable = f"the usable memory ({result.usable_gib / result.memory_gib:.1%} of the memory, the margin taken off)"
    spare = "to spare at the optimizer step" if result.step_binds else f"to spare of {usable}"
    verdict = (f"fits: {result.headroom_gib:.2f} GiB {spare}" if fits
               else f"does not fit: the optimizer step is {-result.headroom_gib:.2f} GiB over" if result.step_binds
               else f"does not fit: {-result.headroom_gib:.2f} GiB over {usable}")
    if result.step_gib:  # without Offload: the optimizer step's own peak, the states and Adam's temporary
        share = result.step_usable_gib / result.memory_gib
        step = "it" if result.step_binds and not fits else "the optimizer step"  # named already where it is over
        verdict += (f"; {step} takes {result.step_gib:.2f} GiB of the {result.step_usable_gib:.2f} it "
                    f"may ({share:.1%} of the memory){'' if result.step_fits else ': too much'}")
    return verdict


def _host_memory_line(result: MemoryEstimate, need_gib: float, offload: bool) -> Text:
    """The host memory a node needs (`need_gib`; `offload`: for the states too), and whether --host-ram holds it, as
    the plan summary says it (`host_ram_check_words`: where neither Offload nor --host-ram makes it matter, nothing)."""
    if result.host_ram_gib is not None and not result.host_fits:
        room = f"; more than {host_ram_bound_words(result.host_ram_gib, '--host-ram')}: it does not train there"
    else:
        room = host_ram_check_words(result.host_ram_gib) if offload or result.host_ram_gib is not None else ""
    what = ("for Offload (the actor's states and the reference model's weights, or the model while it loads, "
            "whichever is more)" if offload else "while the model loads (verl reads it in fp32 before "
            "FSDP shards it)")
    return Text(f"host memory: {shown_host_gib(need_gib):.1f} GiB per node {what}{room}",
                style="" if result.host_fits else "red")


def _tables_line(result: MemoryEstimate, tables: TablesVerdict, gpu: str, model: str, gpus: int, offload: bool,
                 own_budget: bool) -> Text:
    """What `gpu`'s tables say of the breakdown's setting (`tables`), and where that overrules the memory model or
    the host memory rules it out."""
    said = _tables_said(tables, gpu, model, gpus, offload)
    disagree = "; where the memory model disagrees, the table, a measurement, decides" if (
        tables.trains != result.fits) else ""
    by_tokens = (f" (a row is taken for its tokens per GPU, {result.tokens_per_gpu} by your budget, not for "
                 "the length)") if own_budget else ""
    host_short = tables.trains and not result.host_fits  # the tables speak of GPU memory only
    host = "; that is the GPUs' memory, and the host memory above rules it out" if host_short else ""
    return Text(f"tables: {said}{by_tokens}{disagree}{host}",
                style="yellow" if host_short else "green" if tables.trains else "red")


def _longest_words(result: MemoryEstimate, gpu: str, model: str, gpus: int, offload: bool, own_budget: bool) -> str:
    """The longest length the memory model fits with the breakdown's setting (with `own_budget`: that its token
    budget holds), in words, with what `gpu`'s tables say where a measurement there refutes it, or lets the setting
    train longer."""
    if own_budget:  # the memory is the budget's whatever the length
        return (f"longest length its token budget holds (budget x SP), which the memory model fits: "
                f"{result.longest_len} tokens" if result.longest_len else
                "no length fits with this setting and token budget, by the memory model")
    at_least = "at least " if result.longest_len == CEILING else ""  # the longest length it is asked about
    longest = (f"longest length the memory model fits with this setting: {at_least}{result.longest_len} tokens (on "
               f"a {GRID}-token grid{'; ' + _CEILING_WORDS if at_least else ''})" if result.longest_len else
               "no length fits with this setting, by the memory model")
    if result.longest_refuted is not None and result.longest_len:  # a measurement there says otherwise
        allowed = (f": they let it train up to {result.tables_longest}" if result.tables_longest is not None
                   else ": they let it train at no length")
        source = result.longest_refuted.source
        where = ("there" if source.max_model_len == result.longest_len else
                 f"at {source.max_model_len}, the row that {result.longest_len} falls to"
                 if source.max_model_len > result.longest_len else f"already at {source.max_model_len}")
        longest += (f", but the tables say it runs out of memory {where} ({source.words(gpu, model)}"
                    f"{_fewer(source, gpus, offload)}), and they decide{allowed}")
    elif result.tables_longer is not None:  # a measurement says it trains longer
        longer = result.tables_longer
        cited = ("the cell on the tables line" if result.tables is not None and result.tables.source == longer.source
                 else _tables_said(longer, gpu, model, gpus, offload).removeprefix('it trains (').removesuffix(')'))
        longest += f"; the tables let it train at {longer.source.max_model_len} ({cited}), and they decide"
    return longest


def memory_json(result: MemoryEstimate, asked: dict[str, Any]) -> str:
    """A breakdown as JSON, as `MemoryAnswer` gives it: what was `asked` (a `MemoryQuestion`'s fields: model, GPU,
    count, length, setting, margin, ...), then the estimate's fields, then its verdicts (``step_fits``, ``fits``,
    ``headroom_gib``, ``step_binds``, ``host_fits``, ``trains``: the tables' where they speak, and only where the host
    memory holds the states); GiB rounded to 4 decimals (0.1 MiB)."""
    return json.dumps(MemoryAnswer(**asked, **dict(result)).model_dump(mode="json"), indent=2)


EVIDENCE_MARKS = {"documented": "", "inferred": "*", "estimated": "~"}
EXTRAPOLATED_MARK = "!"
"""Added to an estimate's mark beyond the memory model's calibration (`Plan.beyond_calibration`)."""
YARN_MARK = "^"
"""Added to a map's cell (by length: to the row's length) whose YaRN goes past what is validated
(`Plan.yarn_beyond_validated`)."""
LENGTH_SHADES = ("black on #e3f2fd", "black on #bbdefb", "black on #90caf9", "black on #64b5f6",
                 "white on #1e88e5", "white on #1565c0", "white on #0d47a1")
"""Shades of the longest-context map, shortest to longest."""


def short_label(setting: Setting) -> str:
    """A setting in a few characters: ``E+O+SP4`` for Env + Offload + SP=4, ``van`` for vanilla."""
    parts = [name for name, on in (("E", setting.env), ("O", setting.offload)) if on]
    parts += [f"SP{setting.sp}"] if setting.sp > 1 else []
    return "+".join(parts) or "van"


WIDE_MAP_BUDGETS = 16
"""A map of more budgets than this shows a run of budgets that give every row the same plan as one column."""


def _budget_spans(grid: dict[tuple[Any, int], Plan | None], rows: list[Any], budgets: list[int]) -> list[tuple[int, int]]:
    """The map's columns as (first, last) budgets: one per budget, or in a wide map (`WIDE_MAP_BUDGETS`), one per
    run of budgets whose plans are the same in every row, bar the GPUs they leave (9 to 15 GPUs on nodes of 8
    allow what 8 do)."""
    def plans(budget: int) -> list[Plan | None]:
        return [None if (plan := grid[row, budget]) is None else plan.model_copy(update={"unused_gpus": 0})
                for row in rows]

    spans: list[tuple[int, int]] = []
    for budget in budgets:
        if spans and len(budgets) > WIDE_MAP_BUDGETS and plans(budget) == plans(spans[-1][0]):
            spans[-1] = (spans[-1][0], budget)
        else:
            spans.append((budget, budget))
    return spans


def map_json(maps: list[tuple[str, dict[tuple[Any, int], Plan | None], list[Any]]], budgets: list[int],
             model: str | None = None, given: dict[str, Any] | None = None) -> str:
    """Maps as JSON, a `GpuMap` each: per GPU type (name, grid, rows), the options `given` that change its cells
    (their values not None: the train batch the plans keep to, the host memory per node they fit in, ...), its
    budgets and, per row (a model, or with `model`, the model mapped by length, a length), the best plan at each
    budget (null where none), as `solve --json` gives a plan."""
    def map_rows(grid: dict[tuple[Any, int], Plan | None], rows: list[Any]
                 ) -> tuple[ModelMapRow, ...] | tuple[LengthMapRow, ...]:
        plans = [(row, tuple(grid[row, budget] for budget in budgets)) for row in rows]
        if model is None:
            return tuple(ModelMapRow(model=row, plans=row_plans) for row, row_plans in plans)
        return tuple(LengthMapRow(max_model_len=row, plans=row_plans) for row, row_plans in plans)

    gpu_maps = [GpuMap(gpu=gpu, by="len" if model is not None else "model", model=model, **(given or {}),
                       budget_gpus=tuple(budgets), rows=map_rows(grid, rows))
                for gpu, grid, rows in maps]
    return json.dumps([gpu_map.model_dump(mode="json") for gpu_map in gpu_maps], indent=2)


def map_view(grid: dict[tuple[Any, int], Plan | None], rows: list[Any], budgets: list[int], title: str,
             by_length: bool, limited: bool = False, host_checked: bool = False) -> Group:
    """A map: its title, then a row per model (or length), a column per GPU budget, each cell the best plan
    in short form, marked by its evidence, shaded by its length (or, by length, by its cost); then a legend
    (`limited`: the title names limits, a train batch or host memory, that the plans keep to; without
    `host_checked`, a host memory given, it says that nothing checked the Offload cells' host memory)."""
    view = Table()
    view.add_column("length" if by_length else "model", no_wrap=True, justify="right" if by_length else "left",
                    min_width=max(len(str(row)) for row in rows))
    spans = _budget_spans(grid, rows, budgets)
    budgets = [first for first, _ in spans]
    for first, last in spans:  # a cell may wrap (length above setting) when many budgets share the width
        span = f"≤{first}{'' if last == first else f'-{last}'}"  # kept whole: a narrow column wraps before GPUs
        view.add_column(f"{span} GPU{'s' if last > 1 else ''}", justify="center", overflow="fold",
                        min_width=len(span))
    longest = max((plan.max_model_len for plan in grid.values() if plan), default=1)
    at = " @" if len(budgets) > 8 else "@"  # many budgets: a narrow cell may wrap before the GPU count
    for row in rows:
        cells = []
        for budget in budgets:
            plan = grid[(row, budget)]
            if plan is None:
                cells.append(Text(NO_SETTING, style=NO_SETTING_STYLE))
                continue
            mark = EVIDENCE_MARKS[plan.evidence] + (EXTRAPOLATED_MARK if plan.beyond_calibration else "")
            if by_length:
                cells.append(Text(f"{short_label(plan.setting)}{at}{plan.gpus}{mark}", style=setting_style(plan.setting)))
            else:
                shade = LENGTH_SHADES[min(len(LENGTH_SHADES) - 1, plan.max_model_len * len(LENGTH_SHADES) // (longest + 1))]
                mark += YARN_MARK if plan.yarn_beyond_validated else ""
                cells.append(Text(f"{plan.max_model_len // 1024}k {short_label(plan.setting)}{at}{plan.gpus}{mark}",
                                  style=shade))
        row_yarn = by_length and any(plan.yarn_beyond_validated for budget in budgets if (plan := grid[(row, budget)]))
        view.add_row(f"{row}{YARN_MARK if row_yarn else ''}", *cells)
    merged = "; ≤a-b: budgets a to b, the same plans" if any(first != last for first, last in spans) else ""
    yarn = ("; ^ YaRN past what is validated (quality untested)"
            if any(plan.yarn_beyond_validated for plan in grid.values() if plan) else "")
    unchecked = not host_checked and any(plan.offload for plan in grid.values() if plan)
    offload = f" (host memory per node {host_ram_unchecked_words()})" if unchecked else ""
    legend = Text("cells: " + ("setting@GPUs" if by_length else "longest context (k = 1024 tokens), setting@GPUs")
                  + merged
                  + "; evidence: documented, * inferred, ~ estimated, ~! estimated beyond the memory model's "
                  f"calibration; - nothing trains{' within the limits in the title' if limited else ''}{yarn}\n"
                  f"settings: E Env, O Offload{offload}, SPn Ulysses SP, van vanilla")
    return Group(Text(title, style="table.title"), view, legend)  # a title of its own: a narrow map's does not wrap
