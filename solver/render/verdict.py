"""The verdict on a config's own settings (`solve --from-config`): whether they train, and why not (its words are
`solver.results.config_verdict`'s, which `CurrentSettings.verdict` holds too), and the config's problems."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from solver.query import Query
from solver.results import Answer, CurrentSettings, config_verdict, refusing_problems


def current_view(answer: Answer, current: CurrentSettings, query: Query) -> Group:
    """The verdict on a config's own settings, then a line for each of its problems (wrapped lines indented under
    the first): ``refused:`` where it refuses the config (its code in `REFUSED_CONFIG_CODES`), else ``but:``."""
    problems = Table.grid(padding=(0, 1))
    for problem, refuses in zip(current.config_problems, refusing_problems(current), strict=True):
        problems.add_row("  refused:" if refuses else "  but:", problem, style="yellow")
    trains_cleanly = current.plan is not None and not current.refused and not current.config_problems
    verdict = Text(config_verdict(answer, current, query), style="green" if trains_cleanly else "yellow")
    return Group(verdict, problems) if current.config_problems else Group(verdict)
