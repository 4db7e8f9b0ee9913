"""Claims of the docs and help that a new user's review (session 63) found stale: each test runs what the words
describe and checks the words against what the code does."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import yaml

from solver.tables import shipped_examples

ROOT = Path(__file__).resolve().parent.parent
NUMBER_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}


def flat(text: str) -> str:
    """Text with its line breaks read as spaces, as a reader reads a paragraph."""
    return " ".join(text.split())


def test_the_examples_help_and_readme_count_the_cluster_files_solve_examples_writes(
        cli: Callable[..., tuple[int, str, str]]):
    # fleet.yaml, required.yaml, smaller-asks.yaml and stretch.yaml: a third came after the help said "two".
    cluster_files = sorted(str(name) for name, text in shipped_examples().items()
                           if name.suffix == ".yaml" and "pools" in (yaml.safe_load(text) or {}))
    assert cluster_files == ["fleet.yaml", "required.yaml", "smaller-asks.yaml", "stretch.yaml"]
    words = f"({NUMBER_WORDS[len(cluster_files)]} cluster files,"
    status, out, _ = cli("examples", "--help")
    assert status == 0 and words in flat(out)
    readme = flat((ROOT / "README.md").read_text(encoding="utf-8"))
    assert f"`solve examples [DIR]`: writes the docs' example files {words}" in readme
    assert "under the current directory, or into DIR, for an install" in readme


def test_the_pages_say_where_solve_takes_trinity_version(cli: Callable[..., tuple[int, str, str]]):
    # docs/planner.md's train-batch rule and docs/json.md's batch-divides-trainer-gpus row: the planner takes
    # --trinity-version with any output (the view's too, since s64); with --emit the caution is there.
    ask = ("--model", "8B", "--len", "32k", "--gpus", "6", "--gpu", "A100-80GB", "--train-batch-size", "75",
           "--trinity-version", "0.5")
    status, out, _ = cli(*ask)
    assert status == 0 and "--train-batch-size 75 does not divide by the 6 trainer GPUs" in flat(out)
    status, out, _ = cli(*ask, "--emit", "trinity")
    assert status == 0 and "# caution: --train-batch-size 75 does not divide by the 6 trainer GPUs" in out
    planner = flat((ROOT / "docs" / "planner.md").read_text(encoding="utf-8"))
    assert ("The release named decides (`solve` takes `--trinity-version` with any output, its apply lines following "
            "it too, and `solve cluster` alone)") in planner
    codes = flat((ROOT / "docs" / "json.md").read_text(encoding="utf-8"))
    assert "| `--trinity-version 0.5` (`solve` takes it with any output; with 0.5.0 or 0.5.1" in codes
