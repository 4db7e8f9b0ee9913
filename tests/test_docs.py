"""Command output shown in README.md and docs/ is what the code prints now."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def shown_commands() -> list[tuple[str, str, str]]:
    """(page, command, output shown) for every code block that starts with ``$ solve``."""
    examples = []
    for page in PAGES:
        for block in re.findall(r"```\n(\$ solve[^\n]*)\n(.*?)```", page.read_text(encoding="utf-8"), re.S):
            examples.append((page.name, block[0], block[1]))
    return examples


def test_the_docs_show_commands():
    assert {page for page, *_ in shown_commands()} >= {"README.md", "planner.md", "tables.md"}


@pytest.mark.parametrize(("page", "command", "shown"), shown_commands())
def test_shown_output_is_what_the_command_prints(cli, monkeypatch, page: str, command: str, shown: str):
    monkeypatch.chdir(ROOT)  # paths in the docs are relative to the repository
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)  # Env is read from the environment
    _, out, err = cli(*shlex.split(command)[2:])
    printed = "\n".join(line.rstrip() for line in (out + err).splitlines())
    assert printed.strip() == shown.strip(), f"{page}: `{command}` prints something else now"
