"""Command output shown in README.md and docs/ is what the code prints now (`python tests/shown_output.py`
regenerates it)."""

from __future__ import annotations

import re
import runpy
import sys
from pathlib import Path

import pytest
from shown_output import BLOCK, pages, printed

from solver import estimate_memory
from solver.cli.calibrate import build_calibrate_parser
from solver.cli.cluster import build_cluster_parser
from solver.cli.examples import build_examples_parser
from solver.cli.maps import build_map_parser
from solver.cli.memory import build_memory_parser
from solver.cli.planner import build_parser
from solver.cli.tables import build_tables_parser
from solver.query import REFUSED_CONFIG_CODES
from solver.results import CurrentSettings
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
    # A critic (Trinity's default algorithm, ppo, trains one) shares the trainer GPUs; the memory model counts its
    # states where asked (--critic), never its activations.
    page = " ".join((ROOT / "docs" / "memory.md").read_text(encoding="utf-8").split())
    assert "one model trains on the trainer GPUs, the actor" in page
    assert ("A critic, which an algorithm that trains one (Trinity's `ppo`, its default `algorithm_type`) holds beside "
            "the actor on the same GPUs, is counted where asked (`--critic`;") in page


def test_the_trinity_page_says_how_each_release_reads_the_critics_offload_flags():
    # _critic_readings (s74): its own model.fsdp_config before verl 0.8; on verl 0.8 its engine's, else the trainer's.
    page = " ".join((ROOT / "docs" / "trinity.md").read_text(encoding="utf-8").split())
    assert "Trinity 0.5, and 0.6 on verl before 0.8: its own `trainer_config.critic.model.fsdp_config`" in page
    assert "Trinity 0.6 on verl 0.8 or later: its engine, `trainer_config.critic.fsdp`" in page
    assert "where they differ the one that holds more on the GPUs counts" in page


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


LINK = re.compile(r"\]\(([^)\s]+)\)")
"""A Markdown link's target: ``[words](target)``."""


def heading_anchors(page: Path) -> set[str]:
    """The anchors of `page`'s headings, as GitHub makes them: lower case, punctuation but hyphens dropped, spaces
    to hyphens, a repeated heading's anchor numbered (``-1``); headings inside code blocks are none."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
    anchors: set[str] = set()
    for heading in re.findall(r"^#{1,6} (.+)$", text, flags=re.MULTILINE):
        anchor = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        repeats = sum(1 for seen in anchors if seen == anchor or re.fullmatch(re.escape(anchor) + r"-\d+", seen))
        anchors.add(f"{anchor}-{repeats}" if repeats else anchor)
    return anchors


def dangling_links(page: Path) -> list[str]:
    """The relative links of `page` (outside code blocks) whose file is missing, or whose ``#anchor`` no heading of
    the Markdown page it names has."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
    dangling = []
    for target in LINK.findall(text):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path) if path else page
        if not linked.exists() or (anchor and linked.suffix == ".md" and anchor not in heading_anchors(linked)):
            dangling.append(target)
    return dangling


@pytest.mark.parametrize("page", [ROOT / "README.md", ROOT / "benchmarks" / "README.md", ROOT / "tests" / "README.md",
                                  *sorted((ROOT / "docs").glob("*.md"))], ids=lambda page: str(page.relative_to(ROOT)))
def test_every_link_of_the_docs_leads_to_a_file_and_heading_that_exist(page: Path):
    assert dangling_links(page) == []


def test_a_dangling_link_or_anchor_is_found(tmp_path: Path):
    (tmp_path / "other.md").write_text("# A heading, with `code`\n\n## Twice\n\n## Twice\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text("[a](other.md#a-heading-with-code) [b](other.md#twice-1) [c](other.md#twice-2) [d](gone.md) "
                    "[e](#nowhere) [f](https://example.com/x#y)\n```\n[g](gone.md)\n```\n", encoding="utf-8")
    assert dangling_links(page) == ["other.md#twice-2", "gone.md", "#nowhere"]


def test_the_docs_list_exactly_the_codes_that_refuse_a_config():
    # trinity.md's "Which lines start `refused:`" and json.md's config problems name REFUSED_CONFIG_CODES.
    trinity = (ROOT / "docs" / "trinity.md").read_text(encoding="utf-8")
    section = trinity.split("#### Which lines start `refused:`\n", 1)[1].split("\nNot refusals:", 1)[0]
    listed = re.findall(r"^- ((?:`[a-z-]+`(?:, )?)+)", section, flags=re.MULTILINE)
    assert sorted(code for codes in listed for code in re.findall(r"`([a-z-]+)`", codes)) == sorted(
        REFUSED_CONFIG_CODES)
    json_page = " ".join((ROOT / "docs" / "json.md").read_text(encoding="utf-8").split())
    sentence = json_page.split("a code that refuses the config whatever its memory (", 1)[1].split(":", 1)[0]
    assert sorted(re.findall(r"`([a-z-]+)`", sentence)) == sorted(REFUSED_CONFIG_CODES)


def test_the_trinity_page_lists_every_key_of_json_current_in_order():
    # "JSON: `current`" lists the keys --from-config's JSON gives each answer's current, as CurrentSettings dumps them.
    trinity = " ".join((ROOT / "docs" / "trinity.md").read_text(encoding="utf-8").split())
    listed = trinity.split("In JSON, each answer gains `current`: `{", 1)[1].split("}`", 1)[0]
    assert re.findall(r'"([a-z_]+)"', listed) == list(CurrentSettings.model_json_schema(mode="serialization")[
        "properties"])


@pytest.mark.parametrize("script", sorted((ROOT / "benchmarks").glob("*.py")), ids=lambda script: script.name)
def test_each_benchmark_describes_itself_in_its_help_whole(script: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]):
    # Run as `python benchmarks/<script> --help` runs it (as __main__), in-process; what it adds to sys.path is undone.
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(sys, "argv", [str(script), "--help"])
    monkeypatch.setattr(sys, "path", list(sys.path))
    with pytest.raises(SystemExit) as exited:
        runpy.run_path(str(script), run_name="__main__")
    assert exited.value.code == 0
    shown = capsys.readouterr().out
    described = " ".join(shown.split("\n\n")[1].split())
    assert described.endswith(".") and len(described) > 40


def test_solve_memorys_terms_are_told_where_a_newcomer_reads_its_table():
    # A newcomer's first `solve memory` prints terms (gathered, recompute, sp buffers, ...) that the guide's section
    # on it and the command's help left unexplained: the guide says what each term holds, and both point to the
    # memory model's formulas.
    guide = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    section = guide.split("### One GPU's memory, term by term", 1)[1].split("\n### ", 1)[0]
    told = section.split("```", 2)[2]  # the words after the shown output
    assert "(memory.md#the-model)" in told
    for term in dict(estimate_memory("8B", "a100", 4, 32768, sp=4).terms.items()):
        assert f"`{term.replace('_', ' ')}`" in told, term
    assert "docs/memory.md" in (build_memory_parser().description or "")
