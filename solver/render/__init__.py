"""Turn results into output: rich renderables for people, JSON for programs, and text for the API
(`answers_text`, `cluster_text`, `memory_text`, `map_text`). Nothing here prints.

The package has a module per output: `tables` (``solve tables``), `schema` (the JSON Schemas of --json),
`answers` (``solve``'s answers) with `summary` (the best plan's summary and the lines that apply it), `ranking`
(--top's ranked plans) and `verdict` (the verdict on a --from-config config's own settings), `cluster`
(``solve cluster``), `memory` (``solve memory``'s breakdown and ``solve calibrate``'s memory-model file) and `maps`
(``solve map``); and what they share: `styles` (a setting's shade and short label), `layout` (tables that turn
into blocks on a narrow terminal; a view as the text a pipe gets) and `phrases` (words several views say). Each
uses only those before it in this order: styles, layout, phrases, tables, schema, summary, ranking, verdict,
answers, cluster, memory, maps. The names the other layers use are imported here (``from solver.render import
answers_view``); the numbers a layout is tuned by (`layout`'s ``UNBOUNDED_WIDTH``, `cluster`'s
``UNPLACED_JOBS_WIDTH``) from their modules, where a patch takes effect.
"""

from __future__ import annotations

from solver.render.answers import (
    UNDECIDED_HINT,
    UNPROVEN_HINT,
    answers_json,
    answers_text,
    answers_view,
)
from solver.render.cluster import (
    AT_LEAST_NOTE,
    AT_MOST_NOTE,
    COST_NOTE,
    MORE_ROLLOUT_NOTE,
    NO_ROLLOUT_GPUS_NOTE,
    TRAINER_NODES_NOTE,
    WIDENED_NOTE,
    cluster_json,
    cluster_text,
    cluster_view,
    purchase_json,
    purchase_view,
    tie_break_unproven,
)
from solver.render.layout import (
    MIN_TERMINAL_WIDTH,
    PIPED_WIDTH,
    PLAIN_TEXT,
    UNBOUNDED_WIDTH,
    TableOrBlocks,
    needed_width,
    view_text,
    without_trailing_spaces,
)
from solver.render.maps import (
    EVIDENCE_MARKS,
    EXTRAPOLATED_MARK,
    LENGTH_SHADES,
    doubling_budgets,
    fitting_budgets,
    map_json,
    map_text,
    map_view,
    map_views,
    maps_width,
    piped_maps,
)
from solver.render.memory import (
    calibration_json,
    memory_json,
    memory_label,
    memory_model_yaml,
    memory_text,
    memory_view,
)
from solver.render.phrases import YARN_MARK
from solver.render.ranking import RANKED_TRAINER_NODES_NOTE
from solver.render.schema import JSON_SCHEMA_TYPES, json_schema
from solver.render.styles import NO_SETTING_STYLE, SHADES, setting_style, short_label
from solver.render.summary import APPLY_HEADING, apply_lines
from solver.render.tables import cell_record, cells_json, tables_view

__all__ = [
    "APPLY_HEADING",
    "AT_LEAST_NOTE",
    "AT_MOST_NOTE",
    "COST_NOTE",
    "EVIDENCE_MARKS",
    "EXTRAPOLATED_MARK",
    "JSON_SCHEMA_TYPES",
    "LENGTH_SHADES",
    "MIN_TERMINAL_WIDTH",
    "MORE_ROLLOUT_NOTE",
    "NO_ROLLOUT_GPUS_NOTE",
    "NO_SETTING_STYLE",
    "PIPED_WIDTH",
    "PLAIN_TEXT",
    "RANKED_TRAINER_NODES_NOTE",
    "SHADES",
    "TRAINER_NODES_NOTE",
    "UNBOUNDED_WIDTH",
    "UNDECIDED_HINT",
    "UNPROVEN_HINT",
    "WIDENED_NOTE",
    "YARN_MARK",
    "TableOrBlocks",
    "answers_json",
    "answers_text",
    "answers_view",
    "apply_lines",
    "calibration_json",
    "cell_record",
    "cells_json",
    "cluster_json",
    "cluster_text",
    "cluster_view",
    "doubling_budgets",
    "fitting_budgets",
    "json_schema",
    "map_json",
    "map_text",
    "map_view",
    "map_views",
    "maps_width",
    "memory_json",
    "memory_label",
    "memory_model_yaml",
    "memory_text",
    "memory_view",
    "needed_width",
    "piped_maps",
    "purchase_json",
    "purchase_view",
    "setting_style",
    "short_label",
    "tables_view",
    "tie_break_unproven",
    "view_text",
    "without_trailing_spaces",
]
