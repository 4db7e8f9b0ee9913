"""Docs true to the code, s76: every name of the package the pages cite (``solver.api.fragment_layout``,
``solver.trinity.checks._check_critic_forward_unset``) and every file of the repository they name resolves; and
benchmarks/README.md's ranges over the quiet runs since 2026-12-02 are the same in its target table and in the
planner's paragraph (which said a start-up ratio of 1.47 to 1.89 and explanations of 0.20 to 3.31 s where the
table, and s73's end at 1.93, said 1.93 and 0.16); and README.md's list of solver/ names each of its modules and
packages (it left out clock.py); and every `solve` command the pages' bash blocks give to run parses, reading
files that are shipped, written before or named as placeholders (s89)."""

from __future__ import annotations

import contextlib
import importlib
import io
import re
import shlex
from pathlib import Path
from types import ModuleType

from solver.cli.calibrate import build_calibrate_parser
from solver.cli.cluster import build_cluster_parser
from solver.cli.examples import build_examples_parser
from solver.cli.maps import build_map_parser
from solver.cli.memory import build_memory_parser
from solver.cli.planner import build_parser
from solver.cli.tables import build_tables_parser

ROOT = Path(__file__).resolve().parent.parent
PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "benchmarks" / "README.md",
         ROOT / "tests" / "README.md")
INSTALLED_ONLY = {"solver.data", "solver.examples"}
"""Packages an install makes of the repository's tables/ and docs/examples/ (pyproject.toml's `package-dir`), which
the pages name as installed."""


def _resolves(name: str) -> bool:
    """Whether the dotted `name` (``solver.results.Answer.as_json``) is a module of the package, or an attribute or
    pydantic field of one."""
    parts = name.split(".")
    found: object = None
    for cut in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        break
    assert isinstance(found, ModuleType), name
    for part in parts[cut:]:
        if part in getattr(found, "model_fields", {}):
            return True
        if not hasattr(found, part):
            return False
        found = getattr(found, part)
    return True


def _unresolved(text: str) -> list[str]:
    """The names of the package (``solver.x.y``) and the repository's files (``solver/model.py``) `text` cites
    that do not exist."""
    names = {name for name in re.findall(r"(?<![\w./-])solver(?:\.[A-Za-z_]\w*)+", text)
             if name not in INSTALLED_ONLY}
    files = set(re.findall(r"(?<![\w./-])((?:solver|tests|benchmarks|tables|docs)/[\w/.-]+\.(?:py|yaml|md|json))",
                           text))
    return sorted([name for name in names if not _resolves(name)]
                  + [file for file in files if not (ROOT / file).exists()])


def test_every_name_and_file_the_pages_cite_exists():
    assert [f"{page.name}: {name}" for page in PAGES for name in _unresolved(page.read_text(encoding="utf-8"))] == []


def test_a_name_or_file_that_does_not_exist_is_found():
    text = ("`solver.api.fragment_layout`, `solver.results.Answer.as_json`, `solver.results.Plan.cost`, "
            "`solver.api.fragment_layouts`, `solver.trinity.checks.no_such_check`, solver/model.py, solver/models.py")
    assert _unresolved(text) == ["solver.api.fragment_layouts", "solver.trinity.checks.no_such_check",
                                 "solver/models.py"]


BENCHMARKS = " ".join((ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8").split())


def _between(text: str, start: str, end: str) -> str:
    """The part of `text` from `start` up to `end`."""
    first = text.index(start)
    return text[first:text.index(end, first)]


def _range(pattern: str) -> tuple[float, float]:
    """The range `pattern` (two groups) finds once in benchmarks/README.md."""
    [found] = re.findall(pattern, BENCHMARKS)
    return float(found[0]), float(found[1])


def test_the_benchmark_page_gives_one_range_of_the_quiet_runs_in_its_table_and_its_paragraph():
    # The target table's rows, then the planner's paragraph after the latest runs.
    ratio = _range(r"the floor \d\.\d+\); (\d\.\d+) to (\d\.\d+) in every run since 2026-12-02")
    explanations = _range(r"complete \((\d\.\d+) to (\d\.\d+) s, complete, in every run since 2026-12-02\)")
    assert _range(r"start-up ratio (\d\.\d+) to (\d\.\d+) \(the floor") == ratio == (1.47, 2.03)
    assert _range(r"explanations (\d\.\d+) to (\d\.\d+) s, always complete") == explanations == (0.16, 3.31)
    # Every quiet session's start and end quoted lies within them (s73's end: ratio 1.93, the 4B explanation 0.16 s).
    history = " ".join((ROOT / "benchmarks" / "HISTORY.md").read_text(encoding="utf-8").split())
    ratios = [float(value) for value in re.findall(r"start-up \d+ ms \(ratio (\d\.\d+)", BENCHMARKS + history)]
    assert ratios and ratio[0] <= min(ratios) and max(ratios) <= ratio[1]
    quoted = [float(value) for value in re.findall(r"explanations \d\.\d+, \d\.\d+ and (\d\.\d+) s", BENCHMARKS)]
    assert quoted and explanations[0] <= min(quoted) and max(quoted) <= explanations[1]  # within the range


def test_the_readme_names_every_module_and_package_of_solver():
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    listed = _between(readme, "- `solver/`: ", " - `tests/`: ")
    parts = {path.name + ("/" if path.is_dir() else "") for path in (ROOT / "solver").iterdir()
             if path.name not in {"__init__.py", "__main__.py", "py.typed", "__pycache__"}}
    assert sorted(part for part in parts if f"`{part}`" not in listed) == []  # clock.py was left out


PARSERS = {"tables": build_tables_parser, "map": build_map_parser, "memory": build_memory_parser,
           "calibrate": build_calibrate_parser, "cluster": build_cluster_parser, "examples": build_examples_parser}
"""The commands' parsers by the word that names them; `build_parser` (the planner's) for none."""


def _refusal(command: str) -> str | None:
    """What the command line `command` (``solve ...``, without a redirection) is refused with as it is parsed, the
    last line on stderr; None where it parses."""
    words = shlex.split(command)[1:]
    parser = PARSERS[words.pop(0)]() if words and words[0] in PARSERS else build_parser()
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            parser.parse_args(words)
    except SystemExit as stop:
        return err.getvalue().strip().splitlines()[-1] if stop.code else None
    return None


def test_every_command_the_pages_give_to_run_parses():
    commands = [(page.name, re.sub(r"^(?:[A-Z_]+=\S+ )+|^\.venv/bin/", "", line.strip()).split(" #")[0].split(" > ")[0])
                for page in PAGES for block in re.findall(r"```bash\n(.*?)```", page.read_text(encoding="utf-8"),
                                                          flags=re.DOTALL)
                for line in block.replace("\\\n", " ").splitlines()]
    commands = [(page, command) for page, command in commands if re.match(r"solve\b", command)]
    assert len(commands) >= 10
    assert [(page, command, _refusal(command)) for page, command in commands if _refusal(command)] == []
    assert _refusal("solve --model 8B --max-model-len 8k") == (
        "solve: error: unrecognized arguments: --max-model-len 8k (did you mean --len?)")


INPUT_FILE_OPTIONS = re.compile(r"(?:--cells|--model-config|--memory-model|--weights|--current)[ =](\S+)")
"""The options of the pages' commands that read a file the user has (or the repository ships)."""


def test_every_file_the_pages_commands_read_is_shipped_written_before_or_a_placeholder():
    # s89: memory.md's calibrate block read my-h100.yaml and my-sft/, which exist nowhere, so a copied command failed
    # with "cannot read": a file a command reads is the repository's, one an earlier line of its block writes (--out),
    # or a name in capitals that says it stands for the user's own (MY-CELLS.yaml).
    missing = []
    for page in PAGES:
        for block in re.findall(r"```bash\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.DOTALL):
            written: set[str] = set()
            for line in block.replace("\\\n", " ").splitlines():
                missing += [(page.name, name) for name in INPUT_FILE_OPTIONS.findall(line.split(" #")[0])
                            if not ((ROOT / name).exists() or name in written or re.fullmatch(r"[A-Z][A-Z-]*\S*", name))]
                written.update(re.findall(r"--out[ =](\S+)", line))
    assert missing == []
