"""Three new users' first hour (review s65, helper persona11): a GPU name with a bare memory size after a known one
(``h20-141``, the 141 GB H20) gets no guess of the catalogue's card of another memory, as ``h20-141gb`` gets none;
the commands the guide's shell blocks give read files that a fresh clone has, run from its root; a cells file for an
AMD GPU type of one's own, given by its memory as sold, is told to add amd-smi's total, not nvidia-smi's; a file named
without its option is told the options that read one; and a count written as a product (``--gpus 2x8``) is told the
product."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path

import pytest

from solver import QueryError, load_catalog

ROOT = Path(__file__).resolve().parent.parent

FILE_OPTIONS = ("--cells", "--from-config", "--model-config", "--memory-model", "--weights")
"""The options of `solve` that read a file the user gives."""


@pytest.mark.parametrize(("name", "guess"), [
    ("h20-141", ""),  # the H20 of 141 GB: another card than the H20-96GB (was guessed so)
    ("h100-94", ""),  # the H100 NVL's memory, not the H100-80GB (was guessed so)
    ("a100-48", ""),  # no A100 has 48 GB: no guess (was the A100-80GB)
    ("l40s-96", ""),
    ("a100-40", " (did you mean A100-40GB?)"),  # the start of a name that has that memory: still guessed
])
def test_a_bare_memory_size_after_a_gpu_name_is_another_card(name: str, guess: str):
    with pytest.raises(QueryError) as raised:
        load_catalog().gpu(name)
    assert str(raised.value).startswith(f"unknown GPU {name!r}{guess}; accepted: A100-40GB/80GB, ")


def _shell_commands(page: Path) -> list[list[str]]:
    """The ``solve ...`` lines of `page`'s ```bash blocks, each split as a shell would, comments left out."""
    blocks = re.findall(r"```bash\n(.*?)```", page.read_text(encoding="utf-8"), re.DOTALL)
    return [shlex.split(line, comments=True) for block in blocks for line in block.splitlines()
            if line.strip().startswith("solve ")]


@pytest.mark.parametrize("page", ["README.md", "docs/guide.md"])
def test_the_files_the_shell_blocks_read_are_in_a_fresh_clone(page: str):
    commands = _shell_commands(ROOT / page)
    written: set[str] = set()
    missing = []
    for words in commands:
        for option, value in pairwise(words):
            if option in FILE_OPTIONS and value not in written and not (ROOT / value).exists():
                missing.append(f"{option} {value}")
            if option == "--out":
                written.add(value)
    assert missing == []
    if page == "docs/guide.md":  # the calibration's two commands, the second reading what the first writes
        assert any("--memory-model" in words for words in commands)


AMD_CELLS = ("gpu: MI355X\nmemory_gb: 288\nrocm: true\nsource: mine\ntables:\n"
             "  - gpus: 8\n    section: 8 x MI355X\n    models: [Qwen3-8B]\n    rows:\n"
             "      - {max_model_len: 32768, cells: {Qwen3-8B: vanilla}}\n")
"""Cells of an AMD GPU type the catalogue lacks, by its memory as sold alone."""


@pytest.mark.parametrize(("rocm", "smi"), [("true", "amd-smi"), ("false", "nvidia-smi")])
def test_the_note_on_a_memory_as_sold_names_the_vendors_tool(cli: Callable[..., tuple[int, str, str]], tmp_path: Path,
                                                             rocm: str, smi: str):
    cells = tmp_path / "mine.yaml"
    cells.write_text(AMD_CELLS.replace("rocm: true", f"rocm: {rocm}"), encoding="utf-8")
    status, _, err = cli("--cells", str(cells), "--model", "8B", "--len", "32k", "--gpus", "8", "--gpu", "mi355x")
    assert status == 0
    assert err == (f"solve: note: {cells}: MI355X's memory_gb 288 is taken as 288 GiB; a card reports less (an H100 "
                   f"80GB: 81559 MiB, 79.6 GiB), so add its memory_mib ({smi}'s total) where you have it\n")


@pytest.mark.parametrize(("argv", "error"), [
    (["calibrate", "cells.yaml"], ("solve calibrate: error: unrecognized arguments: cells.yaml (a file is named after "
                                   "its option: --cells FILE or --model-config PATH)")),
    # not that --gpu took one word (was told so); the options in --help's order (its groups, session 93)
    (["--gpu", "h20", "Trinity.YML"], ("solve: error: unrecognized arguments: Trinity.YML (a file is named after its "
                                       "option: --memory-model FILE, --cells FILE, --model-config PATH, --weights FILE "
                                       "or --from-config FILE)")),
    (["config.json"], ("solve: error: unknown command 'config.json' (a file is named after its option: --memory-model "
                       "FILE, --cells FILE, --model-config PATH, --weights FILE or --from-config FILE); commands: "
                       "tables, cluster, calibrate, memory, map, examples, or none to plan")),
    (["--model", "8B", "--len", "32k", "tokens"], ("solve: error: unrecognized arguments: tokens (--len took '32k': "
                                                   "an option's value is one word; quote one with spaces)")),
    (["cluster", "a.yaml", "b.yaml"], ("solve cluster: error: unrecognized arguments: b.yaml (solve cluster reads one "
                                       "FILE.yaml: join the files in one, or run it once for each)")),  # FILE: its own
])
def test_a_file_named_without_its_option_is_told_the_options_that_read_one(cli: Callable[..., tuple[int, str, str]],
                                                                           argv: list[str], error: str):
    status, out, err = cli(*argv)
    prog = error.split(":")[0]
    assert (status, out, err) == (2, "", f"usage: {prog} [options] (--help lists them)\n{error}\n")


@pytest.mark.parametrize(("argv", "error"), [
    (["--model", "8B", "--len", "8k", "--gpus", "2x8"], (
        "argument --gpus: expected a whole number from 1 to 65536, got '2x8' (write the product: 16)")),
    (["--model", "8B", "--len", "8k", "--total-gpus", "2 * 8", "--rollout-gpus", "8"], (
        "argument --total-gpus: expected a whole number from 1 to 65536, got '2 * 8' (write the product: 16)")),
    (["--model", "8B", "--len", "8k", "--gpus", "8x"],
     "argument --gpus: expected a whole number from 1 to 65536, got '8x' (write 8)"),
])
def test_a_count_written_as_a_product_is_told_the_product(cli: Callable[..., tuple[int, str, str]], argv: list[str],
                                                          error: str):
    assert cli(*argv) == (2, "", f"usage: solve [options] (--help lists them)\nsolve: error: {error}\n")
