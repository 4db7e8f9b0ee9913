"""Session 93's doc claims checked against the code (helper docstruth93): the docs' prose keeps within 120 columns,
every code the prose of README.md and docs/ names in backticks is one the code gives (a renamed code leaves none
behind), and cli.md's words for a misspelt name in a ``--lora-targets`` list are the refusal's."""

from __future__ import annotations

import re
from pathlib import Path

from test_json import CODES
from test_tokbudget_s72 import Cli

ROOT = Path(__file__).resolve().parent.parent
PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))

NOT_CODES = frozenset({
    "all-linear", "gpu-hours", "infinity-fabric", "linear-model", "every-rank", "rank-0", "tie-break", "seq-len",
    "job-1", "job-2", "a-100", "a100-80g", "b200-192gib", "desk-4090", "h100-pcie", "h20-141", "h20-3e", "l40s-48gb",
    "l40s-pcie", "my-h100-pcie", "rtx-6000", "rtx-6000-ada", "llama3-8b", "qwen3-41b", "qwen3-4b", "qwen3-8b",
    "a100-40", "a100-40g", "a100-nvl", "h100-nvl", "h200-nvl", "my-mi250x", "my-mi300x", "gemma-2-9b"})
"""The hyphenated words the pages put in backticks that are no code: option values, GPU and model names as one types
them, a job's or an example file's name, a term of the memory model's host need."""


def prose(page: Path) -> str:
    """`page` without its fenced blocks (shown outputs, commands, YAML), which tests/shown_output.py or the files
    they show keep true."""
    return re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL | re.MULTILINE)


def test_the_pages_prose_keeps_within_120_columns():
    # A table row is one line whatever its width; a shown output is what the command prints.
    assert [f"{page.name}: {line[:60]}" for page in PAGES for line in prose(page).splitlines()
            if len(line) > 120 and not line.startswith("|")] == []


def test_every_code_the_pages_name_is_one_the_code_gives():
    codes = {code.value for enum in CODES.values() for code in enum}
    named = {(page.name, word) for page in PAGES
             for word in re.findall(r"`([a-z][a-z0-9]*(?:-[a-z0-9]+)+)`", prose(page))}
    assert sorted(f"{page}: {word}" for page, word in named if word not in codes | NOT_CODES) == []
    assert sorted(NOT_CODES - {word for _, word in named}) == []  # a name no page uses any more leaves the list


def test_cli_md_words_a_misspelt_name_in_a_lora_targets_list_as_the_refusal_does(cli: Cli):
    status, _, err = cli("--model", "8B", "--len", "4k", "--lora-rank", "64", "--lora-targets", "q_proj,v_prj")
    refusal = err.splitlines()[-1]
    assert status == 2 and refusal.startswith(
        "solve: error: --lora-targets 'q_proj,v_prj': v_prj matches no module of Qwen3-8B (")
    assert refusal.endswith("): correct it or leave it out (PEFT would skip it unsaid)")
    page = " ".join((ROOT / "docs" / "cli.md").read_text(encoding="utf-8").split())
    assert ("`--lora-targets 'q_proj,v_prj': v_prj matches no module of Qwen3-8B (...): correct it or leave it out "
            "(PEFT would skip it unsaid)`") in page
