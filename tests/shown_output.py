"""Regenerate the command output shown in README.md and docs/*.md: ``python tests/shown_output.py``, run
from the repository root (a developer's tool, not part of the package).

Every fenced block that starts with a ``$ solve ...`` line is rerun from the repository root (with Env
and VLLM_ALLOW_LONG_MAX_MODEL_LEN unset in the environment, as the docs assume) and its output replaced, and
docs/schema/'s JSON Schemas are written anew. `tests/test_docs.py` fails when a
committed page differs from what the code prints now.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import sys
from pathlib import Path
from unittest import mock

from solver.cli import main
from solver.cli.atomic import write_atomically
from solver.render import JSON_SCHEMA_TYPES, json_schema

BLOCK = re.compile(r"```\n(\$ solve[^\n]*)\n(.*?)```", re.DOTALL)


def pages(root: Path) -> list[Path]:
    """The pages of the repository at `root` whose examples are generated."""
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def printed(command: str, root: Path) -> str:
    """What ``solve`` prints, stdout then stderr, for one ``$ solve ...`` line run in `root`, trailing
    spaces removed, and then ``(exit status N)`` where the status is not 0."""
    out, err = io.StringIO(), io.StringIO()
    status: object = 0
    here, columns = Path.cwd(), os.environ.pop("COLUMNS", None)  # a pipe without COLUMNS: solve map's maps whole
    os.chdir(root)  # the docs' paths are relative to the repository
    # argparse wraps --help to the terminal (shutil's size, COLUMNS first): make it the same everywhere
    help_width = mock.patch("shutil.get_terminal_size", return_value=os.terminal_size((100, 24)))
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), help_width:
            status = main(shlex.split(command)[2:])
    except SystemExit as exit_:
        status = exit_.code
    finally:
        os.chdir(here)
        if columns is not None:
            os.environ["COLUMNS"] = columns
    shown = [line.rstrip() for line in (out.getvalue() + err.getvalue()).splitlines()]
    return "\n".join([*shown, *([f"(exit status {status})"] if status else [])]) + "\n"


def regenerate(page: Path, root: Path) -> bool:
    """Rewrite `page`'s examples with current output; whether anything changed."""
    text = page.read_text(encoding="utf-8")
    updated = BLOCK.sub(lambda match: f"```\n{match.group(1)}\n{printed(match.group(1), root)}```", text)
    if updated != text:
        write_atomically(page, updated)
    return updated != text


def schema_files(root: Path) -> list[Path]:
    """The JSON Schema files of the repository at `root`, one per command (`JSON_SCHEMA_TYPES`): docs/schema/."""
    return [root / "docs" / "schema" / f"{command}.json" for command in JSON_SCHEMA_TYPES]


def regenerate_schema(path: Path) -> bool:
    """Rewrite the JSON Schema file `path` (docs/schema/COMMAND.json) with `json_schema`'s; whether it changed."""
    text = json_schema(path.stem)
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    path.parent.mkdir(exist_ok=True)
    write_atomically(path, text)
    return True


if __name__ == "__main__":
    os.environ.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    os.environ.pop("VLLM_ALLOW_LONG_MAX_MODEL_LEN", None)  # a config's vLLM rollout reads it (the docs assume it unset)
    root = Path.cwd()
    if not (root / "README.md").exists() or not (root / "docs").is_dir():
        sys.exit("tests/shown_output.py: run it from the repository root (README.md and docs/ are not here)")
    changed = [page.relative_to(root) for page in pages(root) if regenerate(page, root)]
    changed += [path.relative_to(root) for path in schema_files(root) if regenerate_schema(path)]
    print("updated: " + (", ".join(map(str, changed)) or "nothing"), file=sys.stderr)
