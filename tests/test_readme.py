"""The README's two commands stay true: CI runs exactly the README's test command."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def readme_commands() -> list[str]:
    return re.findall(r"```bash\n(.+?)\n```", (ROOT / "README.md").read_text(encoding="utf-8"))


def test_readme_starts_with_the_install_and_test_commands():
    install_and_run, install_and_test = readme_commands()[:2]
    assert "pip install ." in install_and_run
    assert install_and_run.endswith("solve --maximize len --gpus 6 --model 4B")
    assert "pip install '.[test]'" in install_and_test and install_and_test.endswith(".venv/bin/pytest -n auto")


def test_ci_runs_exactly_the_readme_test_command():
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert script.startswith("#!/usr/bin/env bash\n") and "set -euo pipefail" in script
    assert script.rstrip().splitlines()[-1] == readme_commands()[1]
