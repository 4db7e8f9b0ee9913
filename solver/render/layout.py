"""Layout for narrow terminals: the width a table needs, and a table that turns into blocks where it does not fit;
and a view as the text a pipe of a given width gets."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.style import Style
from rich.table import Column, Table
from rich.text import Text

from solver.tables import QueryError, brief, check_types

UNBOUNDED_WIDTH = 1 << 16
"""Room enough to measure any table whole."""
PIPED_WIDTH = 160
"""The columns a view is laid out for on a pipe (room for the widest table), unless a terminal's are more."""
MIN_TERMINAL_WIDTH = 20
"""The fewest columns a view is laid out for: a terminal that says it has fewer (``COLUMNS=0``, as some containers
set it) is taken as 80 columns."""
PLAIN_TEXT: dict[str, Any] = {"markup": False, "emoji": False}
"""Consoles print strings as they are: a name with brackets or colons (a pool ``p[/]``) is not markup."""


def without_trailing_spaces(text: str) -> str:
    """`text` with each line's trailing spaces removed (rich pads a line to its table's width)."""
    return "\n".join(line.rstrip() for line in text.split("\n"))


def check_text_options(width: int, color: bool) -> None:
    """`QueryError` unless `width` is a whole number of columns from `MIN_TERMINAL_WIDTH` to `UNBOUNDED_WIDTH` and
    `color` True or False (a text view's options)."""
    check_types(("width", width, int), ("color", color, bool))
    if not MIN_TERMINAL_WIDTH <= width <= UNBOUNDED_WIDTH:
        raise QueryError(f"width must be a whole number of columns from {MIN_TERMINAL_WIDTH} to {UNBOUNDED_WIDTH}, "
                         f"got {brief(width)}")


def view_text(view: RenderableType, width: int, color: bool = False) -> str:
    """`view` as the commands print it to a pipe `width` columns wide: each line less its trailing spaces, a line
    rich was told not to wrap whole; with ANSI colour codes only where `color` (whatever ``NO_COLOR`` or
    ``FORCE_COLOR`` say), in true colour whatever consoles printed before (`forget_coded_styles`). Written to a
    string alone, in a notebook too (rich would show it there itself)."""
    written = io.StringIO()
    if color:
        forget_coded_styles()
    console = Console(file=written, width=width, color_system="truecolor" if color else None, force_terminal=color,
                      no_color=not color, force_jupyter=False, **PLAIN_TEXT)
    console.print(view, crop=False)
    return without_trailing_spaces(written.getvalue())


def forget_coded_styles() -> None:
    """Empty rich's caches of parsed and combined styles, so that a view's styles are coded afresh. Rich keeps a
    style's ANSI codes from its first rendering, in whatever colour system that console had, and shares parsed
    styles with the whole process (rich 13.7 to 15): a view coloured after a 256- or 16-colour console printed the
    same shade came out in that console's colours, not in true colour."""
    Style.parse.cache_clear()
    Style._add.cache_clear()


class WholeWidth:
    """`renderable` laid out at its own full width where the console's is less, however narrow the lines around it
    wrap (a pipe's map table, whole, over a legend that wraps at the width); printed with ``crop=False``, so that
    its lines are not cut."""

    def __init__(self, renderable: RenderableType) -> None:
        self.renderable = renderable

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        whole = console.measure(self.renderable, options=options.update_width(UNBOUNDED_WIDTH)).maximum
        yield from console.render(self.renderable, options.update_width(max(whole, options.max_width)))


def needed_width(table: Table, console: Console, options: ConsoleOptions) -> int:
    """The columns `table` needs not to break words or cut cells: its whole width where no column wraps (a table of
    the source's cells); else its width with the wrapping columns narrowed to the longest word among them. (Rich
    narrows the widest wrapping columns first, whatever their words, so the table's minimum width breaks some.)"""
    unbounded = options.update_width(UNBOUNDED_WIDTH)
    return _needed_width(table, console, unbounded, console.measure(table, options=unbounded).maximum)


def _fits_width(table: Table, console: Console, options: ConsoleOptions) -> bool:
    """Whether `table` needs at most `options`' width (`needed_width`): at once where its whole width fits, which is
    at least what it needs (the columns are measured again only where it does not)."""
    unbounded = options.update_width(UNBOUNDED_WIDTH)
    whole = console.measure(table, options=unbounded).maximum
    return whole <= options.max_width or _needed_width(table, console, unbounded, whole) <= options.max_width


def _needed_width(table: Table, console: Console, unbounded: ConsoleOptions, whole: int) -> int:
    """`needed_width`, of `table` whose `whole` width the `unbounded` options measured."""
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
        if _fits_width(self.table, console, options):
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
