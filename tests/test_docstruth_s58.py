"""Claims of the docs' prose (outside the shown outputs, which `test_docs.py` checks) that were stale: each test
runs what the page says and checks its words against what the code gives."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from solver import model, solve

DOCS = Path(__file__).resolve().parent.parent / "docs"


def page_text(name: str) -> str:
    """A docs page with its line breaks read as spaces, as a reader reads a paragraph."""
    return " ".join((DOCS / name).read_text(encoding="utf-8").split())


def test_the_guides_rollout_example_names_the_flags_the_for_rollout_line_gives(
        cli: Callable[..., tuple[int, str, str]]):
    # docs/guide.md, "Leaving GPUs for the rollout": `--gpus 4` alone on four A100s for Qwen3-8B.
    status, out, _ = cli("--maximize", "len", "--gpus", "4", "--model", "8B", "--gpu", "a100")
    line = next(line for line in out.splitlines() if line.startswith("for rollout"))
    flags = re.search(r"(--gpus \d+ --rollout-gpus \d+) keeps", line)
    assert status == 0 and flags is not None and "51200 tokens instead of 102400" in line
    paragraph = page_text("guide.md").split("`--gpus 4` alone would take all four")[1].split("- `--gpus 4 --rollout")[0]
    assert f"`{flags.group(1)}`, 51200 tokens instead of 102400" in paragraph


def test_every_code_name_of_the_planners_model_section_is_in_the_planning_code():
    # docs/planner.md, "How the model is built", names the functions and constants of solver/model.py and solve.py.
    section = (DOCS / "planner.md").read_text(encoding="utf-8").split("## How the model is built")[1]
    names = set(re.findall(r"`([A-Za-z_]\w*(?:\.\w+)*)`", section.split("## Command line")[0]))
    code_names = {name for name in names if "_" in name or "." in name}
    assert "add_cell_evidence" in code_names

    def found(name: str) -> bool:
        head, *rest = name.split(".")
        owner = getattr(model, head, None) or getattr(solve, head, None)
        return owner is not None and all(
            hasattr(owner, part) or part in getattr(owner, "__dataclass_fields__", {}) for part in rest)

    assert sorted(name for name in code_names if not found(name)) == []
