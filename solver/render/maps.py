"""`solve map`: a grid of the best plan per model (or length) and GPU budget, the maps as JSON, and as the API's
text (the maps themselves, `GpuMap`s, are `solver.maps.gpu_map`'s)."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from typing import Any

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from solver.render.layout import (
    PIPED_WIDTH,
    PLAIN_TEXT,
    UNBOUNDED_WIDTH,
    WholeWidth,
    check_text_options,
    view_text,
)
from solver.render.phrases import YARN_MARK
from solver.render.styles import NO_SETTING_STYLE, setting_style, short_label
from solver.results import (
    NO_ROPE_SCALING,
    SINGLE_GPU_CAUTION_SHORT,
    CautionCode,
    GpuMap,
    LengthMapRow,
    ModelMapRow,
    Plan,
    rocm_env_caution,
)
from solver.rules import API_OPTIONS, COMMAND_OPTIONS, OptionNames, host_ram_unchecked_words
from solver.tables import (
    NO_SETTING,
    NODE_GPUS,
    PAST_NODE_COLUMNS,
    PAST_NODE_WIDTH,
    QueryError,
    and_joined,
    check_types,
    consecutive_runs,
    counted,
    release_name,
    shown_number,
)
from solver.tables.peft_match import adapted_brief

EVIDENCE_MARKS = {"documented": "", "inferred": "*", "estimated": "~"}
EXTRAPOLATED_MARK = "!"
"""Added to an estimate's mark beyond the memory model's calibration (`Plan.beyond_calibration`)."""
SINGLE_GPU_MARK = "†"
"""Added to a cell whose plan is on one GPU against Trinity-RFT's guide's advice (`Plan.single_gpu_advised_against`),
which the legend says in short (`SINGLE_GPU_CAUTION_SHORT`)."""
LORA_LEGEND_CODES = (CautionCode.LORA_TARGETS_ONE_TRANSFORMERS, CautionCode.LORA_EXCLUDED_ADAPTED,
                     CautionCode.LORA_MOE_CONFIG_UNSAVED, CautionCode.LORA_TARGETS_SAVED_SPLIT)
"""The cautions on a map's LoRA adapter (its title's) that the legend says in full, each model's once: the same on
every cell of a model, and each one a run that fails or an adapter that does not load or adapts more."""
LEGEND_CODES = frozenset({CautionCode.SINGLE_GPU_ADVISED_AGAINST, CautionCode.PAST_VALIDATED_LENGTH,
                          CautionCode.YARN_UNVALIDATED_MODEL, CautionCode.PAST_NATIVE_ON_OWN_SCALING,
                          CautionCode.PAST_NATIVE_NO_YARN, CautionCode.ROCM_ENV_MAY_NOT_APPLY, *LORA_LEGEND_CODES})
"""The cautions a map's legend says whenever a cell shown has them: by a mark it explains (`SINGLE_GPU_MARK`,
`YARN_MARK`) or in a caution line; a host memory need past what a node is assumed to have, where no --host-ram was
given, in a line of its own (`_unchecked_host_line`); any other code a cell has, by its code in a line of their own
(`_other_cautions`)."""
LENGTH_SHADES = ("black on #e3f2fd", "black on #bbdefb", "black on #90caf9", "black on #64b5f6",
                 "white on #1e88e5", "white on #1565c0", "white on #0d47a1")
"""Shades of the longest-context map, shortest to longest."""


MODEL_NAME_WIDTH = 27
"""The widest a map's model column gets: the catalogue's longest name (Qwen3-30B-A3B-Instruct-2507) whole; a longer
one (a --model-config's) folds onto more lines, so that it widens the map no more than the catalogue's names do."""
PAST_NODE_FEWEST_COLUMNS = 2
"""The fewest budget columns a map past one node is cut to for its width (N and the largest power of two below it)."""


def doubling_budgets(top: int) -> list[int]:
    """The powers of two below `top`, then `top`: ``[1, 2, 4, 8, 16, 24]`` for 24."""
    return [1 << power for power in range(top.bit_length()) if 1 << power < top] + [top]


def _budget_spans(grid: dict[tuple[Any, int], Plan | None], rows: list[Any], budgets: list[int],
                  node_gpus: int, listed: bool, folded: bool, most_columns: int) -> list[tuple[int, int]]:
    """The map's columns as (first, last) budgets: one per budget, or in a map past one node of `node_gpus` (or
    `folded`, one too wide for its width), one per run of consecutive budgets whose plans are the same in every row,
    bar the GPUs they leave (past a node, a trainer takes whole nodes: 9 to 15 GPUs on nodes of 8 allow what 8 do);
    and past a node, unless the budgets are `listed` (each asked), of more than `most_columns` runs those that hold
    one of the last `most_columns` `doubling_budgets`."""
    def plans(budget: int) -> list[Plan | None]:
        return [None if (plan := grid[row, budget]) is None else plan.model_copy(update={"unused_gpus": 0})
                for row in rows]

    spans: list[tuple[int, int]] = []
    runs = folded or budgets[-1] > node_gpus
    for budget in budgets:
        if spans and runs and budget == spans[-1][1] + 1 and plans(budget) == plans(spans[-1][0]):
            spans[-1] = (spans[-1][0], budget)
        else:
            spans.append((budget, budget))
    if listed or budgets[-1] <= node_gpus or len(spans) <= most_columns:
        return spans
    kept = doubling_budgets(budgets[-1])[-most_columns:]
    return [(first, last) for first, last in spans if any(first <= budget <= last for budget in kept)]


def _left_out_budgets(budgets: list[int], spans: list[tuple[int, int]], names: OptionNames) -> str:
    """The line under a map that names the budgets its columns (`spans`) leave out ("" for none): ``budgets 1 to 3,
    24 to 31 and 40 to 63: columns left out (--budgets maps them; --json has every budget)``, the options named as
    `names` do (``budgets=[...] maps them; the GpuMap has every budget``)."""
    left_out = [budget for budget in budgets if not any(first <= budget <= last for first, last in spans)]
    runs = consecutive_runs(left_out)
    if not runs:
        return ""
    words = [f"{run[0]}" if len(run) == 1 else f"{run[0]} to {run[-1]}" for run in runs]
    listed = and_joined(words)
    listing = names.valued(names.budgets, "[...]") if names.keywords else names.budgets  # a keyword with its list
    return (f"budget{'s' if len(left_out) > 1 else ''} {listed}: columns left out ({listing} maps them; "
            f"{names.map_data} has every budget)")


def past_known_length(plan: Plan) -> bool:
    """Whether `plan`'s length is past what its model is known to handle (`Plan.past_validated_length`): YaRN past
    what is validated, or a length past the native context on the model's own RoPE scaling (Llama 3.1's llama3) or
    with none (a Phi-3's, whose type is advised no YaRN)."""
    return plan.past_validated_length is not None


def _past_known_legend(plans: Sequence[Plan]) -> str:
    """The legend's words for `YARN_MARK`, naming the kinds of length past what is known among `plans` (the cells
    shown; "" for none)."""
    kinds = [words for kind, words in (
        (any(plan.yarn_beyond_validated for plan in plans), "YaRN past what is validated"),
        (any(CautionCode.PAST_NATIVE_ON_OWN_SCALING in plan.caution_codes for plan in plans),
         "past the native context on the model's own RoPE scaling"),
        (any(CautionCode.PAST_NATIVE_NO_YARN in plan.caution_codes for plan in plans),
         f"past the native context {NO_ROPE_SCALING} (the model's type is advised no YaRN)")) if kind]
    return f"; {YARN_MARK} {', or '.join(kinds)} (quality untested)" if kinds else ""


def _single_gpu_legend(plans: Sequence[Plan]) -> str:
    """The legend's line for `SINGLE_GPU_MARK` where a cell shown (`plans`) has it: ``† one trainer GPU:
    Trinity-RFT's guide strongly advises more GPUs`` (`SINGLE_GPU_CAUTION_SHORT`; "" for none)."""
    marked = any(plan.single_gpu_advised_against for plan in plans)
    return f"\n{SINGLE_GPU_MARK} {SINGLE_GPU_CAUTION_SHORT}" if marked else ""


def _rocm_caution(plans: Sequence[Plan], names: OptionNames) -> str:
    """The legend's caution line where an Env cell shown (`plans`) is on an AMD GPU
    (`CautionCode.ROCM_ENV_MAY_NOT_APPLY`), in the words `solve`'s and `solve cluster`'s caution lines use, named as
    `names` do ("" for none)."""
    rocm = any(CautionCode.ROCM_ENV_MAY_NOT_APPLY in plan.caution_codes for plan in plans)
    return f"\ncaution: {rocm_env_caution(names)}" if rocm else ""


def _lora_cautions(plans: Sequence[Plan]) -> str:
    """The legend's caution lines where a cell shown (`plans`) trains a LoRA adapter that a caution of
    `LORA_LEGEND_CODES` is said of (targets one transformers' PEFT alone takes, exclusions a mixture of experts' PEFT
    adapts all the same, an adapter config Trinity saves cut short, a regex it saves as its characters): each
    model's once, in the words `solve`'s caution lines give ("" for none)."""
    said = dict.fromkeys(caution for plan in plans for caution in plan.cautions_coded(*LORA_LEGEND_CODES))
    return "".join(f"\ncaution: {caution}" for caution in said)


def _unchecked_host_line(plans: Sequence[Plan], names: OptionNames) -> str:
    """The legend's line where cells shown (`plans`) need more host memory per node than a node is assumed to have and
    nothing checks it (`CautionCode.HOST_MEMORY_UNCHECKED`): how many, their needs, what they exceed where the same
    for all (`Plan.host_ram_assumed`), and the option that checks it, named as `names` do: ``host memory: 6 cells need
    93.4 to 351.6 GiB per node, more than the 64 GiB assumed (--host-ram checks it)``; "" for none."""
    unchecked = [plan for plan in plans if plan.host_memory_gb is not None
                 and CautionCode.HOST_MEMORY_UNCHECKED in plan.caution_codes]
    if not unchecked:
        return ""
    needs = sorted(plan.host_memory_gb for plan in unchecked if plan.host_memory_gb is not None)
    span = f"{needs[0]:.1f}" if needs[0] == needs[-1] else f"{needs[0]:.1f} to {needs[-1]:.1f}"
    bounds = {None if plan.host_ram_assumed is None else plan.host_ram_assumed.gb for plan in unchecked}
    bound = next(iter(bounds)) if len(bounds) == 1 else None
    assumed = "a node is assumed to have" if bound is None else f"the {bound:g} GiB assumed"
    return (f"\nhost memory: {counted(len(needs), 'cell')} need{'s' if len(needs) == 1 else ''} {span} GiB per node, "
            f"more than {assumed} ({names.host_ram} checks it)")


CELLS_NAMED = 3
"""The most cells of one code the legend's line of unmarked cautions names (`_other_cautions`); more are counted."""


def _other_cautions(cells: Sequence[tuple[str, str, Plan]], said: frozenset[CautionCode], names: OptionNames) -> str:
    """The legend's line naming the caution codes of the cells shown (`cells`: each its row's and its column's labels,
    and its plan) that no mark or line of it says (not in `said`), in `CautionCode`'s order, each with its count of
    cells and, for `CELLS_NAMED` or fewer, the cells, by the map's own labels (``≤4``, the column alone where the map
    shows one row; else the row's, then its columns: ``Qwen3-8B ≤2, ≤4; Qwen3-14B ≤8``), and where their words are
    (`names`' ``--json``); "" for none."""
    one_row = len({row for row, _, _ in cells}) == 1
    marked: dict[CautionCode, dict[str, list[str]]] = {}  # per code, its cells' columns by row
    for row, column, plan in cells:
        for code in plan.caution_codes:
            if code not in said:
                marked.setdefault(code, {}).setdefault(row, []).append(column)
    listed = []
    for code in (code for code in CautionCode if code in marked):
        count = sum(map(len, marked[code].values()))
        named = "; ".join(", ".join(columns) if one_row else f"{row} {', '.join(columns)}"
                          for row, columns in marked[code].items())
        listed.append(f"{code.value} ({counted(count, 'cell')}{f': {named}' if count <= CELLS_NAMED else ''})")
    return f"\nother cautions, unmarked (their words: {names.map_data}): {', '.join(listed)}" if listed else ""


def map_json(gpu_maps: Sequence[GpuMap]) -> str:
    """Maps as JSON, as ``solve map --json`` prints them: a `GpuMap` each (`solver.maps.gpu_map`)."""
    return json.dumps([gpu_map.model_dump(mode="json") for gpu_map in gpu_maps], indent=2)


def _untrained_lengths(map_rows: Sequence[ModelMapRow | LengthMapRow], gpus: int, limited: bool) -> tuple[int, str]:
    """How many of a map by length's rows to show: up to the longest length a budget trains (at least one row); and
    the line that says, in their place, that nothing trains the longer ones ("" where none is left out)."""
    shown = 1 + max((at for at, row in enumerate(map_rows) if any(row.plans)), default=0)
    left_out = [row.max_model_len for row in map_rows[shown:] if isinstance(row, LengthMapRow)]
    if not left_out:
        return shown, ""
    lengths = f"{left_out[0]}" + (f" to {left_out[-1]}" if len(left_out) > 1 else "")
    within = " within the limits in the title" if limited else ""
    return shown, f"{lengths} tokens: nothing trains on up to {counted(gpus, 'GPU')}{within} (rows left out)"


def map_view(gpu_map: GpuMap, title: str, limited: bool = False, host_checked: bool = False,
             narrow: bool = False, names: OptionNames = COMMAND_OPTIONS, folded: bool = False,
             past_node_columns: int = PAST_NODE_COLUMNS) -> Group:
    """A map (`GpuMap`): its title, then a row per model (or length), a column per GPU budget, each cell the best plan
    in short form, marked by its evidence, shaded by its length (or, by length, by its cost; the lengths past the
    longest any budget trains in one line below it; past one node, at most `past_node_columns` columns unless its
    budgets were listed, and a line naming those left out); then a legend (`limited`: the title names limits, a
    train batch or host memory, that the plans keep to; without `host_checked`, a host memory given, it says that
    nothing checked the Offload cells' host memory, and in a line, the needs of cells past what a node is assumed to
    have; `narrow`: for a terminal narrower than the map, where cells fold,
    a space before each GPU count, so that none is split; the options it names, as `names` do; `folded`: for a
    width narrower than the map, within one node too, adjacent budgets whose cells are all the same share a column,
    as past one node)."""
    by_length, budgets = gpu_map.by == "len", list(gpu_map.budget_gpus)
    map_rows: Sequence[ModelMapRow | LengthMapRow] = gpu_map.rows
    shown, untrained = _untrained_lengths(map_rows, budgets[-1], limited) if by_length else (len(map_rows), "")
    map_rows = map_rows[:shown]
    rows: list[Any] = [row.max_model_len if isinstance(row, LengthMapRow) else row.model for row in map_rows]
    grid = {(name, budget): plan for name, row in zip(rows, map_rows, strict=True)
            for budget, plan in zip(budgets, row.plans, strict=True)}
    view = Table()
    name_width = min(max(len(str(row)) for row in rows), MODEL_NAME_WIDTH)  # a longer name folds, as cells do
    view.add_column("length" if by_length else "model", justify="right" if by_length else "left", overflow="fold",
                    min_width=name_width, max_width=max(name_width, MODEL_NAME_WIDTH))
    spans = _budget_spans(grid, rows, budgets, gpu_map.node_gpus or NODE_GPUS, bool(gpu_map.budgets_listed),
                          folded, past_node_columns)
    left_out = _left_out_budgets(budgets, spans, names)
    budgets = [first for first, _ in spans]
    columns = {first: f"≤{first}{'' if last == first else f'-{last}'}" for first, last in spans}
    for first, last in spans:  # a cell may wrap (length above setting) when many budgets share the width
        span = columns[first]  # kept whole: a narrow column wraps before GPUs
        view.add_column(f"{span} GPU{'s' if last > 1 else ''}", justify="center", overflow="fold",
                        min_width=len(span))
    longest = max((plan.max_model_len for plan in grid.values() if plan), default=1)
    at = " @" if narrow or len(budgets) > 8 else "@"  # a narrow cell wraps before the GPU count, not inside it
    for row in rows:
        cells = []
        for budget in budgets:
            plan = grid[(row, budget)]
            if plan is None:
                cells.append(Text(NO_SETTING, style=NO_SETTING_STYLE))
                continue
            mark = EVIDENCE_MARKS[plan.evidence] + (EXTRAPOLATED_MARK if plan.beyond_calibration else "")
            mark += SINGLE_GPU_MARK if plan.single_gpu_advised_against else ""
            if by_length:
                cells.append(Text(f"{short_label(plan.setting)}{at}{plan.gpus}{mark}",
                                  style=setting_style(plan.setting)))
            else:
                shade = LENGTH_SHADES[min(len(LENGTH_SHADES) - 1,
                                          plan.max_model_len * len(LENGTH_SHADES) // (longest + 1))]
                mark += YARN_MARK if past_known_length(plan) else ""
                cells.append(Text(f"{plan.max_model_len // 1024}k {short_label(plan.setting)}{at}{plan.gpus}{mark}",
                                  style=shade))
        row_yarn = by_length and any(past_known_length(plan) for budget in budgets if (plan := grid[(row, budget)]))
        view.add_row(f"{row}{YARN_MARK if row_yarn else ''}", *cells)
    merged = "; ≤a-b: budgets a to b, the same plans" if any(first != last for first, last in spans) else ""
    shown_cells = [(str(row), columns[budget], plan) for row in rows for budget in budgets
                   if (plan := grid[row, budget])]  # not columns left out
    shown_plans = [plan for _, _, plan in shown_cells]
    yarn = _past_known_legend(shown_plans)
    unchecked = not host_checked and any(plan.offload for plan in shown_plans)
    offload = f" (host memory per node {host_ram_unchecked_words(names.host_ram)})" if unchecked else ""
    host_need = _unchecked_host_line(shown_plans, names)
    said = LEGEND_CODES | ({CautionCode.HOST_MEMORY_UNCHECKED} if host_need else set())
    legend = Text("cells: " + ("setting@GPUs" if by_length else "longest context (k = 1024 tokens), setting@GPUs")
                  + merged + _evidence_legend(shown_plans, len(shown_plans) < len(rows) * len(budgets), limited)
                  + f"{yarn}\n"
                  f"settings: E Env, O Offload{offload}, SPn Ulysses SP, van vanilla"
                  f"{_single_gpu_legend(shown_plans)}{_rocm_caution(shown_plans, names)}"
                  f"{_lora_cautions(shown_plans)}{host_need}"
                  f"{_other_cautions(shown_cells, said, names)}")
    lines_under = [Text(line, style=NO_SETTING_STYLE) for line in (untrained, left_out) if line]
    # a title of its own: a narrow map's does not wrap
    return Group(Text(title, style="table.title"), view, *lines_under, legend)


def _evidence_legend(plans: Sequence[Plan], dash_shown: bool, limited: bool) -> str:
    """The legend's marks of evidence, each only where a cell of `plans` (those shown) carries it, and the ``-`` of a
    cell where nothing trains where one shows (`dash_shown`): ``; evidence: documented, * inferred; - nothing
    trains`` (within the limits in the title, where `limited`)."""
    kinds = {plan.evidence for plan in plans}
    marks = [words for shown, words in (
        ("documented" in kinds, "documented"), ("inferred" in kinds, "* inferred"),
        (any(plan.evidence == "estimated" and not plan.beyond_calibration for plan in plans), "~ estimated"),
        (any(plan.beyond_calibration for plan in plans), "~! estimated beyond the memory model's calibration"))
        if shown]
    evidence = f"; evidence: {', '.join(marks)}" if marks else ""
    nothing = f"; - nothing trains{' within the limits in the title' if limited else ''}" if dash_shown else ""
    return evidence + nothing


def map_limits(gpu_map: GpuMap) -> str:
    """The limits `gpu_map`'s plans keep to, as its title names them (a train batch, host memory, nodes of another
    size, estimates alone or none): ``, train batch 256, nodes of 4 GPUs``; "" for none."""
    return "".join((
        f", train batch {gpu_map.train_batch_size}" if gpu_map.train_batch_size else "",
        f", host memory {shown_number(gpu_map.host_ram_gb)} GiB per node" if gpu_map.host_ram_gb is not None else "",
        f", nodes of {counted(gpu_map.node_gpus, 'GPU')}" if gpu_map.node_gpus is not None else "",
        {"only": ", estimates alone", "never": ", no estimates"}.get(gpu_map.estimate or "", "")))


def map_title(gpu_map: GpuMap) -> str:
    """`gpu_map`'s title: its GPU type (and model, by length), what its cells are, a LoRA rank (and the modules its
    adapter is counted on, where not all-linear's, less those it excludes: `adapted_brief`), a reference model, a
    critic, DPO and a Trinity release given, the limits its plans keep to (`map_limits`), and the choices its question
    names: a token budget cap or auto, the cost weights' file, and a memory model of one's own."""
    mapped = (f"{gpu_map.gpu} · {gpu_map.model}: cheapest setting per length and GPU budget" if gpu_map.model
              else f"{gpu_map.gpu}: longest context per model and GPU budget")
    return "".join((
        mapped, f", LoRA rank {gpu_map.lora_rank}" if gpu_map.lora_rank else "",
        adapted_brief(gpu_map.lora_target_modules, gpu_map.lora_exclude_modules),
        "" if gpu_map.reference_model is None else
        ", reference model counted" if gpu_map.reference_model else ", no reference model",
        f", critic {gpu_map.critic}" if gpu_map.critic else "", ", DPO" if gpu_map.dpo else "",
        f", Trinity {release_name(gpu_map.trinity_version) or gpu_map.trinity_version.strip()}"
        if gpu_map.trinity_version else "",  # as solve names it back: 0.5.1 for v0.5.1
        map_limits(gpu_map),
        f", at most {gpu_map.token_budget_cap} tokens per GPU" if gpu_map.token_budget_cap else
        ", token budget auto" if gpu_map.token_budget == "auto" else "",
        f", weights {gpu_map.weights}" if gpu_map.weights else "",
        f", memory model: {gpu_map.memory_model_source}" if gpu_map.memory_model_source else ""))


def map_views(gpu_maps: Sequence[GpuMap], narrow: bool = False, names: OptionNames = COMMAND_OPTIONS,
              width: int | None = None) -> list[Group]:
    """`gpu_maps` as `map_view`s, each under its `map_title`, with the legend its limits and host memory call for
    (`narrow`, `names`: as `map_view`'s); a map whose table is wider than `width` (where given) `folded`; a map past
    one node with the most budget columns, from `PAST_NODE_COLUMNS` down to `PAST_NODE_FEWEST_COLUMNS`, that keep it
    within `width`, else `PAST_NODE_WIDTH`."""
    def titled(gpu_map: GpuMap, narrow_cells: bool, folded: bool, columns: int = PAST_NODE_COLUMNS) -> Group:
        return map_view(gpu_map, map_title(gpu_map), limited=bool(map_limits(gpu_map)),
                        host_checked=gpu_map.host_ram_gb is not None, narrow=narrow_cells, names=names, folded=folded,
                        past_node_columns=columns)

    def too_wide(gpu_map: GpuMap) -> bool:  # as its cells are whole, not narrow: they widen it
        return width is not None and maps_width([titled(gpu_map, False, False)]) > width

    def fitted(gpu_map: GpuMap) -> Group:
        folded, columns = too_wide(gpu_map), PAST_NODE_COLUMNS
        view = titled(gpu_map, narrow, folded, columns)
        doubling = not gpu_map.budgets_listed and gpu_map.budget_gpus[-1] > (gpu_map.node_gpus or NODE_GPUS)
        while doubling and columns > PAST_NODE_FEWEST_COLUMNS and maps_width([view]) > (width or PAST_NODE_WIDTH):
            columns -= 1
            view = titled(gpu_map, narrow, folded, columns)
        return view

    return [fitted(gpu_map) for gpu_map in gpu_maps]


def fitting_budgets(gpu_maps: Sequence[GpuMap], width: int) -> tuple[int, ...] | None:
    """The most of the budgets that double up to the maps' largest (`doubling_budgets`, the smallest left out first)
    whose maps, as ``--budgets`` maps them (`map_views` within `width`), fit `width` columns: what a terminal too narrow
    for the maps is told to map; None where even the largest alone is too wide, or a map lacks one of them."""
    doubling = doubling_budgets(max(gpu_map.budget_gpus[-1] for gpu_map in gpu_maps))
    if any(not set(doubling) <= set(gpu_map.budget_gpus) for gpu_map in gpu_maps):
        return None
    for first in range(len(doubling)):
        kept = tuple(doubling[first:])
        listed = [_with_budgets(gpu_map, kept) for gpu_map in gpu_maps]
        if maps_width(map_views(listed, width=width)) <= width:
            return kept
    return None


def _with_budgets(gpu_map: GpuMap, budgets: tuple[int, ...]) -> GpuMap:
    """`gpu_map` with its columns of `budgets` alone, as though listed (``--budgets``)."""
    at = [gpu_map.budget_gpus.index(budget) for budget in budgets]
    rows = tuple(row.model_copy(update={"plans": tuple(row.plans[index] for index in at)}) for row in gpu_map.rows)
    return gpu_map.model_copy(update={"budget_gpus": budgets, "budgets_listed": True, "rows": rows})


def maps_width(views: Sequence[Group]) -> int:
    """The columns `map_views`' `views` need for their tables whole (not their titles or legends, which wrap)."""
    unbounded = Console(width=UNBOUNDED_WIDTH, file=io.StringIO(), **PLAIN_TEXT)
    return max(unbounded.measure(view.renderables[1]).maximum for view in views)


def piped_maps(views: Sequence[Group]) -> Group:
    """`map_views`' `views` as a pipe gets them: each table whole (`WholeWidth`), wider than the width where it needs
    more, and its title and the lines under it wrapped at the width (print it with ``crop=False``)."""
    return Group(*(Group(view.renderables[0], WholeWidth(view.renderables[1]), *view.renderables[2:])
                   for view in views))


def map_text(maps: Sequence[GpuMap], *, width: int = PIPED_WIDTH, color: bool = False,
             option_names: OptionNames = API_OPTIONS) -> str:
    """The text ``solve map`` prints for `maps` (of `solver.map_plans`), laid out as on a pipe `width` columns wide
    (``COLUMNS=width``): a map wider than `width` with adjacent budgets whose cells are all the same in one column,
    the maps' tables whole, wider than `width` where they need more still (as a pipe gets them), their titles and
    legends wrapped at `width`, with ANSI colour codes where `color`; the lines name options as `option_names` do
    (the API's keywords). `QueryError` (one line) for a bad argument."""
    if isinstance(maps, GpuMap):
        raise QueryError("maps must be a list or tuple of GpuMap, got a GpuMap: pass (gpu_map,), or map_plans' tuple")
    check_types(("maps", maps, list | tuple), ("option_names", option_names, OptionNames))
    check_text_options(width, color)
    if not maps:
        raise QueryError("maps: an empty list holds no map: pass map_plans' maps")
    for index, gpu_map in enumerate(maps):
        check_types((f"maps[{index}]", gpu_map, GpuMap))
    return view_text(piped_maps(map_views(maps, names=option_names, width=width)), width, color)
