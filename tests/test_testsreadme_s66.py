"""tests/README.md, the suite's map (session 66, testsreadme): every file of tests/ (test files and shared modules)
has its row there, once, and every row names a file that exists, so that a developer finds where a behaviour is
tested; the page's command for one topic runs that topic's files."""
from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable
from pathlib import Path

TESTS = Path(__file__).resolve().parent
README = TESTS / "README.md"
ROW = re.compile(r"^\| `([A-Za-z0-9_]+\.py)` \|", re.MULTILINE)
TOPIC = re.compile(r"^## (.+)$", re.MULTILINE)


def listed_topics(readme: str) -> list[tuple[str, str]]:
    """Each file a row of the map names, with the heading of the table it is in, in the page's order."""
    headings = [(match.start(), match.group(1)) for match in TOPIC.finditer(readme)]
    return [(row.group(1), next((title for start, title in reversed(headings) if start < row.start()), "(no heading)"))
            for row in ROW.finditer(readme)]


def map_problems(readme: str, files: Iterable[str]) -> list[str]:
    """One line for each file of tests/ the map lacks (saying where to add it), each row naming no such file, and
    each file listed twice."""
    listed = listed_topics(readme)
    topic_of = dict(listed)
    names = [name for name, _ in listed]
    present = set(files)
    problems = []
    for name in sorted(present - set(names)):
        problems.append(f"tests/{name} is not in tests/README.md: add a row '| `{name}` | {_where(name, topic_of)}")
    problems += [f"tests/README.md lists `{name}` (under \"## {topic}\"), which is no file of tests/: remove its row"
                 for name, topic in listed if name not in present]
    problems += [f"tests/README.md lists `{name}` {names.count(name)} times: keep one row"
                 for name in sorted(set(names)) if names.count(name) > 1]
    return problems


def _where(name: str, topic_of: dict[str, str]) -> str:
    """The rest of the line on a file the map lacks: what its row says, and which table it goes in (a shared
    module's, or that of the listed test file whose name starts as its does, where one shares 4 letters or more)."""
    if not name.startswith("test_"):
        return "what it gives the tests |' to the table under \"## Shared modules\""
    nearest = max((other for other in topic_of if other.startswith("test_")),
                  key=lambda other: (_shared_start(name, other), other), default=None)
    if nearest is None or _shared_start(name, nearest) < 4:
        return "what it tests |' to the table of its topic"
    return (f"what it tests |' to the table of its topic, next to `{nearest}` under \"## {topic_of[nearest]}\" "
            "if that is its topic")


def _shared_start(name: str, other: str) -> int:
    """How many letters two test files' topics share at their start (``test_`` and a session's ``_sNN`` apart)."""
    return len(os.path.commonprefix([re.sub(r"_s\d+$", "", Path(file).stem.removeprefix("test_"))
                                     for file in (name, other)]))


def test_the_map_lists_every_file_of_tests_once_and_no_other():
    files = [path.name for path in TESTS.glob("*.py")]
    problems = map_problems(README.read_text(encoding="utf-8"), files)
    assert not problems, "\n".join(problems)


def test_a_file_missing_from_the_map_a_row_of_no_file_and_a_row_listed_twice_are_each_said():
    readme = ("# Tests\n\n## Shared modules\n\n| file | gives |\n|---|---|\n| `conftest.py` | fixtures |\n\n"
              "## Cluster\n\n| file | tests |\n|---|---|\n| `test_cluster.py` | placements |\n"
              "| `test_clusterbuy_s60.py` | --buy |\n| `test_gone_s60.py` | nothing now |\n\n"
              "## Maps\n\n| file | tests |\n|---|---|\n| `test_map.py` | maps |\n| `test_map.py` | again |\n")
    listed = ["conftest.py", "test_cluster.py", "test_clusterbuy_s60.py", "test_gone_s60.py", "test_map.py"]
    twice = "tests/README.md lists `test_map.py` 2 times: keep one row"
    assert map_problems(readme, listed) == [twice]
    assert map_problems(readme, [*listed, "test_clusterlimit_s67.py"]) == [
        ("tests/test_clusterlimit_s67.py is not in tests/README.md: add a row '| `test_clusterlimit_s67.py` | what"
         " it tests |' to the table of its topic, next to `test_clusterbuy_s60.py` under \"## Cluster\" if that is"
         " its topic"),
        twice]
    assert map_problems(readme, [name for name in listed if name != "test_gone_s60.py"]) == [
        "tests/README.md lists `test_gone_s60.py` (under \"## Cluster\"), which is no file of tests/: remove its row",
        twice]
    assert map_problems(readme, [*listed, "terminal.py", "test_mapx_s67.py", "test_ops_s67.py"]) == [
        ("tests/terminal.py is not in tests/README.md: add a row '| `terminal.py` | what it gives the tests |' to the"
         " table under \"## Shared modules\""),
        ("tests/test_mapx_s67.py is not in tests/README.md: add a row '| `test_mapx_s67.py` | what it tests |' to the"
         " table of its topic"),
        ("tests/test_ops_s67.py is not in tests/README.md: add a row '| `test_ops_s67.py` | what it tests |' to the"
         " table of its topic"),
        twice]


def test_the_command_for_one_topic_gives_the_files_of_its_table():
    readme = README.read_text(encoding="utf-8")
    command = re.search(r"\.venv/bin/pytest -q \$\((sed -n '/\^## Cluster/.*?)\)``", readme)
    assert command, "tests/README.md shows no command running one topic's files"
    printed = subprocess.run(["bash", "-c", f"printf '%s\\n' $({command.group(1)})"], cwd=TESTS.parent,
                             capture_output=True, text=True, check=True).stdout.split()
    cluster = [f"tests/{name}" for name, topic in listed_topics(readme) if topic.startswith("Cluster")]
    assert printed == cluster and len(cluster) > 10
