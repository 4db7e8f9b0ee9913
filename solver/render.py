"""Turn results into output: rich renderables for people, JSON for programs. Nothing here prints."""

from __future__ import annotations

import json
from bisect import bisect_left
from collections.abc import Iterable
from typing import Any, Optional

from rich.console import Group
from rich.table import Table
from rich.text import Text

from solver.tables import ESCALATION_ORDER, NO_SETTING, Catalog, Cell, Setting

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


def setting_style(setting: Optional[Setting]) -> str:
    """The shade for a cell: the further along the source's escalation order, the darker."""
    if setting is None:
        return NO_SETTING_STYLE
    step = bisect_left(_ESCALATION_KEYS, setting.escalation_key)
    return SHADES[min(step, len(SHADES) - 1)]


def cell_record(cell: Cell) -> dict[str, Any]:
    """A documented cell as a JSON object; ``env``, ``offload`` and ``sp`` are null for ``-``."""
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
    }


def cells_json(cells: Iterable[Cell]) -> str:
    """The cells as a JSON array, in table order."""
    return json.dumps([cell_record(cell) for cell in cells], indent=2)


def tables_view(catalog: Catalog) -> Group:
    """Each GPU type's documented tables, cells in the source's words, shaded by cost, and a legend."""
    renderables: list[Any] = []
    for gpu_type in catalog.gpu_types:
        for table in gpu_type.tables:
            view = Table(
                title=f"{gpu_type.name} ({gpu_type.memory_gb} GB), {table.gpus} trainer GPU{'s' if table.gpus > 1 else ''}",
                caption=f"source: {gpu_type.source.document}, {gpu_type.source.section}, {table.section}",
                title_justify="left",
                caption_justify="left",
            )
            view.add_column("max_model_len", justify="right", no_wrap=True)
            for model in table.models:
                view.add_column(model, no_wrap=True)
            for row in table.rows:
                cells = [
                    Text(setting.label if setting else NO_SETTING, style=setting_style(setting))
                    for _, setting in row.cells
                ]
                view.add_row(str(row.max_model_len), *cells)
            renderables += [view, Text()]
    legend = Text("cost, lightest to darkest: ")
    for setting in ESCALATION_ORDER:
        legend.append(f" {setting.label} ", style=setting_style(setting)).append(" ")
    legend.append(f" {NO_SETTING} ", style=NO_SETTING_STYLE).append(" nothing trains")
    renderables.append(legend)
    return Group(*renderables)
