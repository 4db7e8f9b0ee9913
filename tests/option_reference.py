"""docs/cli.md's option reference, where each option's help in full lives (``--help`` gives each in a line or three,
session 93): for tests of what an option's words say beyond its short help."""

from __future__ import annotations

from pathlib import Path

CLI_PAGE = Path(__file__).resolve().parent.parent / "docs" / "cli.md"


def option_reference() -> str:
    """The text of docs/cli.md's "Option reference" section, its whitespace made single spaces and its Markdown's
    backquotes dropped, as a help's words read."""
    section = CLI_PAGE.read_text(encoding="utf-8").split("## Option reference\n", 1)[1].split("\n## ", 1)[0]
    return " ".join(section.replace("`", "").split())
