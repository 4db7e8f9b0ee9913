"""Command output shown in README.md and docs/ is what the code prints now (`python tests/shown_output.py`
regenerates it)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from shown_output import BLOCK, pages, printed

from solver.cli.calibrate import build_calibrate_parser
from solver.cli.cluster import build_cluster_parser
from solver.cli.examples import build_examples_parser
from solver.cli.maps import build_map_parser
from solver.cli.memory import build_memory_parser
from solver.cli.planner import build_parser
from solver.cli.tables import build_tables_parser
from solver.tables import load_catalog
from solver.tables.model_config import (
    CHECKED_MODEL_TYPES,
    HYBRID_MODEL_TYPES,
    UNGATED_MODEL_TYPES,
    UNREAD_MODEL_TYPES,
)

ROOT = Path(__file__).resolve().parent.parent


def shown_commands() -> list[tuple[str, str, str]]:
    """(page, command, output shown) for every code block that starts with ``$ solve``."""
    return [(page.name, command, shown) for page in pages(ROOT)
            for command, shown in BLOCK.findall(page.read_text(encoding="utf-8"))]


def test_the_docs_show_commands():
    assert {page for page, *_ in shown_commands()} >= {"README.md", "planner.md", "tables.md", "trinity.md",
                                                       "cluster.md"}


def test_a_json_answer_the_docs_show_comes_with_what_people_read():
    # A question shown only as --json leaves a reader without the answer as the command prints it.
    shown = {(page, command) for page, command, _ in shown_commands()}
    assert [(page, command) for page, command in sorted(shown) if " --json" in command
            and (page, command.replace(" --json", "")) not in shown] == []


@pytest.mark.parametrize(("page", "command", "shown"), shown_commands())
def test_shown_output_is_what_the_command_prints(monkeypatch, page: str, command: str, shown: str):
    if command.endswith("--help") and sys.version_info >= (3, 13):
        pytest.skip("argparse 3.13 lays out help differently; the docs show 3.10 to 3.12's")
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)  # Env is read from the environment
    assert printed(command, ROOT) == shown, f"{page}: `{command}` prints something else now: run python tests/shown_output.py"


def test_the_memory_page_names_every_gpu_type_of_the_catalogue():
    # docs/memory.md lists the catalogue's GPU types in prose, which no command regenerates.
    page = " ".join((ROOT / "docs" / "memory.md").read_text(encoding="utf-8").split())
    assert [gpu.name for gpu in load_catalog().gpu_types if gpu.name not in page] == []


def test_the_memory_page_says_the_model_counts_the_actor_alone():
    # A critic (Trinity's default algorithm, ppo, trains one) shares the trainer GPUs; the memory model counts none.
    page = " ".join((ROOT / "docs" / "memory.md").read_text(encoding="utf-8").split())
    assert "one model trains on the trainer GPUs, the actor" in page
    assert "It counts no critic: an algorithm that trains one (Trinity's `ppo`, its default `algorithm_type`)" in page


def test_the_trinity_page_says_the_critic_advice_reads_the_critics_own_offload_flags():
    # _critic_offloads reads trainer_config.critic.model.fsdp_config alone, not Trinity 0.6's trainer-level flags.
    page = " ".join((ROOT / "docs" / "trinity.md").read_text(encoding="utf-8").split())
    assert ("The advice reads the critic's own flags only: Trinity 0.6's flags under `trainer` do not count for it"
            in page)


def test_the_memory_page_names_the_model_types_a_config_is_read_checked_or_refused_by():
    # docs/memory.md lists them in prose too: the kinds whose counts were checked, and those refused.
    page = (ROOT / "docs" / "memory.md").read_text(encoding="utf-8")
    named = (*CHECKED_MODEL_TYPES, *UNGATED_MODEL_TYPES, *HYBRID_MODEL_TYPES, *UNREAD_MODEL_TYPES)
    assert [model_type for model_type in named if f"`{model_type}`" not in page] == []


def test_the_planners_synopsis_lists_every_command_and_option():
    # planner.md's "Command line" block is written by hand: each command's line names each option its parser takes.
    block = (ROOT / "docs" / "planner.md").read_text(encoding="utf-8").split("## Command line\n\n```\n")[1]
    synopsis: dict[str, set[str]] = {}
    for line in block.split("```")[0].splitlines():
        if line.startswith("solve"):
            command = " ".join(line.split()[:2]) if line.split()[1][0].isalpha() else "solve"
        synopsis.setdefault(command, set()).update(re.findall(r"--[a-z][a-z-]*", line))
    parsers = [build() for build in (build_parser, build_tables_parser, build_map_parser, build_memory_parser,
                                     build_calibrate_parser, build_cluster_parser, build_examples_parser)]
    assert {parser.prog: {option for action in parser._actions for option in action.option_strings
                          if option.startswith("--") and option != "--help"} for parser in parsers} == synopsis
