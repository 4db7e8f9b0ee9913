"""`solve tables`: the documented tables, shaded by cost, and their cells as JSON."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from solver.render.styles import NO_SETTING_STYLE, setting_style
from solver.tables import ESCALATION_ORDER, NO_SETTING, Catalog, Cell, cell_text, counted


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
