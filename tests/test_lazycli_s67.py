"""The ``solve`` command imports what each path needs: --version, --help (each command's too) and a usage error load
no pydantic models, no rich tables and no OR-Tools (`solver.cli._COMMANDS`, the parse-time names in
`solver.tables.bounds` and `solver.tables.text`); and `solver.tables`' names, looked up as first used, are the ones
its imports for type checkers name."""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

import solver.tables
from solver.cli import main

START_UP = """\
import contextlib, io, json, sys
from solver.cli import main
HEAVY = ("pydantic", "ortools", "yaml", "ruamel", "solver.tables.schema", "solver.query", "solver.results",
         "solver.render", "solver.api")
seen = {}
for argv in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    loaded = sorted({name for name in sys.modules for heavy in HEAVY if name == heavy or name.startswith(heavy + ".")})
    seen[" ".join(argv)] = [status, out.getvalue(), err.getvalue(), loaded]
print(json.dumps(seen))
"""

ASKED = [["--version"], ["--help"], ["-h", "map"], ["tables", "--help"], ["cluster", "--help"], ["calibrate", "-h"],
         ["memory", "--help"], ["examples", "--help"], ["--len", "-1"], ["--lenght", "8k"],
         ["map", "--gpus-up-to", "0"]]


def test_version_help_and_usage_errors_load_no_models_nor_ortools(capsys: pytest.CaptureFixture[str]):
    result = subprocess.run([sys.executable, "-c", START_UP, json.dumps(ASKED)], capture_output=True, text=True,
                            timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    assert {asked: loaded for asked, (_, _, _, loaded) in seen.items()} == {" ".join(argv): [] for argv in ASKED}
    for argv in ASKED:  # the same output as where everything is imported (this process: the tests import it all)
        assert main(argv) == seen[" ".join(argv)][0]
        assert list(capsys.readouterr()) == seen[" ".join(argv)][1:3], argv
    assert seen["--version"][:2] == [0, f"solve {solver.__version__}\n"]
    assert seen["-h map"][1].startswith("usage: solve map [-h]")
    assert seen["--len -1"][0] == 2
    assert seen["--len -1"][2].endswith("solve: error: argument --len: must be a whole number of tokens from 1 to "
                                        "16777216, got -1\n")
    assert seen["--lenght 8k"][2].endswith("solve: error: unrecognized arguments: --lenght 8k (did you mean --len?)\n")
    assert seen["map --gpus-up-to 0"][0] == 2


def test_the_main_job_loads_what_it_plans_with():
    code = ("import sys, contextlib, io\nfrom solver.cli import main\nwith contextlib.redirect_stdout(io.StringIO()):\n"
            "    status = main(['--model', '4B', '--len', '8k', '--gpu', 'a100', '--json'])\n"
            "print(status, 'ortools' in sys.modules, 'solver.render' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert result.stdout.split() == ["0", "True", "True"], result.stderr


def _checked_names() -> dict[str, str]:
    """The names solver/tables/__init__.py imports for type checkers, with the module of each."""
    tree = ast.parse(Path(solver.tables.__file__).read_text(encoding="utf-8"))
    checked = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    return {alias.name: node.module for node in checked.body if isinstance(node, ast.ImportFrom) and node.module
            for alias in node.names}


def test_the_tables_names_are_those_type_checkers_read():
    named = _checked_names()
    assert sorted(named) == sorted(solver.tables.__all__)
    for name, module in named.items():
        assert getattr(solver.tables, name) is getattr(importlib.import_module(module), name), name
    assert set(solver.tables.__all__) <= set(dir(solver.tables))
    with pytest.raises(AttributeError, match="no attribute .no_such_thing."):
        solver.tables.no_such_thing  # noqa: B018
