"""`solve examples`: the docs' example files, shipped in the package (`solver.examples`) and written out."""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path, PurePosixPath

import pytest

import solver
import solver.tables.loaders
from solver.tables import shipped_examples

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "docs" / "examples"
NAMES = ("few-cells.yaml", "fleet.yaml", "linear-model/README.md", "linear-model/config.json", "my-cells.yaml",
         "my-model/config.json", "required.yaml", "smaller-asks.yaml", "stretch.yaml", "trinity.yaml")
"""The files under docs/examples, in the order `solve examples` writes them."""


def _tree(folder: Path) -> dict[str, bytes]:
    """Every file under `folder`: its path within it, and its bytes."""
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in folder.rglob("*") if path.is_file()}


def test_the_shipped_examples_are_the_docs_examples():
    assert {str(name): text.encode("utf-8") for name, text in shipped_examples().items()} == _tree(EXAMPLES)
    assert sorted(_tree(EXAMPLES)) == list(NAMES)


def test_the_packaging_installs_every_example():
    # A wheel carries solver.examples, docs/examples mapped as tables/ is for solver.data, with the files its
    # package-data names: every file there, by name (a new example in a new folder needs a pattern).
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^package-dir = \{.*"solver\.examples" = "docs/examples"', pyproject, re.MULTILINE)
    patterns = re.search(r'^"solver\.examples" = \[(.*)\]$', pyproject, re.MULTILINE)
    assert patterns is not None
    globs = re.findall(r'"([^"]+)"', patterns[1])
    assert [name for name in _tree(EXAMPLES) if not any(fnmatch.fnmatch(name, glob) for glob in globs)] == []


def test_examples_writes_the_docs_examples_byte_for_byte_then_leaves_them(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    assert cli("examples") == (0, "".join(f"wrote docs/examples/{name}\n" for name in NAMES), "")
    assert _tree(tmp_path / "docs" / "examples") == _tree(EXAMPLES)
    assert cli("examples") == (0, "".join(f"unchanged docs/examples/{name}\n" for name in NAMES), "")
    assert cli("examples", "mine") == (0, "".join(f"wrote mine/{name}\n" for name in NAMES), "")
    assert _tree(tmp_path / "mine") == _tree(EXAMPLES)


def test_a_differing_file_is_refused_without_force_and_nothing_is_written(cli, tmp_path: Path):
    cli("examples", str(tmp_path))
    fleet, trinity = tmp_path / "fleet.yaml", tmp_path / "trinity.yaml"
    fleet.write_text("mine\n", encoding="utf-8")
    (tmp_path / "my-model" / "config.json").write_text("{}\n", encoding="utf-8")
    trinity.unlink()
    assert cli("examples", str(tmp_path)) == (2, "", (
        f"solve examples: error: {fleet}, {tmp_path}/my-model/config.json: there already, and not the example; "
        "--force overwrites them (nothing written)\n"))
    assert fleet.read_text(encoding="utf-8") == "mine\n" and not trinity.exists()
    assert cli("examples", str(tmp_path), "--force") == (0, (
        f"unchanged {tmp_path}/few-cells.yaml\nwrote {fleet}\nunchanged {tmp_path}/linear-model/README.md\n"
        f"unchanged {tmp_path}/linear-model/config.json\n"
        f"unchanged {tmp_path}/my-cells.yaml\n"
        f"wrote {tmp_path}/my-model/config.json\nunchanged {tmp_path}/required.yaml\n"
        f"unchanged {tmp_path}/smaller-asks.yaml\nunchanged {tmp_path}/stretch.yaml\nwrote {trinity}\n"), "")
    assert _tree(tmp_path) == _tree(EXAMPLES)


@pytest.mark.parametrize(("where", "message"), [
    ("file", "file: not a folder; name a folder (made if missing) to write the examples into"),
    ("file/docs", "file/docs: cannot make the folder: file is not a folder"),
    ("blocked", "blocked/my-model: not a folder; name a folder (made if missing) to write the examples into"),
    ("taken", ("taken/fleet.yaml: not a regular file (or a link to a place one can be written); move it, or write "
               "the examples to another folder")),
])
def test_a_dir_that_cannot_take_the_examples_exits_2_and_writes_nothing(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str, message: str):
    monkeypatch.chdir(tmp_path)
    Path("file").write_text("x\n", encoding="utf-8")
    Path("blocked").mkdir()
    Path("blocked", "my-model").write_text("x\n", encoding="utf-8")  # where the model's folder goes
    Path("taken", "fleet.yaml").mkdir(parents=True)
    before = _tree(tmp_path)
    assert cli("examples", where) == (2, "", f"solve examples: error: {message}\n")
    assert _tree(tmp_path) == before and not Path("file", "docs").exists()


@pytest.mark.skipif(os.name == "nt", reason="POSIX's limit and words")
def test_a_folder_name_too_long_is_one_line_and_the_folders_made_on_the_way_are_removed(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    long = "a" * 300  # past the 255 bytes a file's name may take
    assert cli("examples", f"new/{long}") == (
        2, "", f"solve examples: error: new/{long}: cannot make the folder: File name too long\n")
    assert list(tmp_path.iterdir()) == []  # new/, made first, is gone again
    assert cli("examples", f"{long}/x") == (
        2, "", f"solve examples: error: {long}/x: cannot write: File name too long\n")


def test_the_shipped_tables_folder_is_refused_as_dir(cli, shipped_tables_kept: Path):
    # Every YAML file in it loads as a GPU type's tables: an example there would break every command.
    feasibility = shipped_tables_kept / "feasibility"
    before = sorted(feasibility.rglob("*"))
    assert cli("examples", str(feasibility)) == (2, "", (
        f"solve examples: error: {feasibility}: the shipped tables are read from there (every YAML file in it): "
        "write the examples to another folder\n"))
    assert sorted(feasibility.rglob("*")) == before
    # --help names that folder: the tables' folder above it is read by file name alone, so examples there do no harm
    # (and are not refused).
    status, out, _ = cli("examples", "--help")
    assert status == 0 and ("is the shipped GPU tables' folder, feasibility/), 74 a full disk, 130 Ctrl-C,"
                            in " ".join(out.split()))


def test_written_names_are_escaped_one_line_each(cli, tmp_path: Path):
    folder = tmp_path / "a\x1b[31mb"
    status, out, _ = cli("examples", str(folder))
    assert status == 0 and out.splitlines()[0] == f"wrote {tmp_path}/a\\x1b[31mb/few-cells.yaml"


def test_a_file_that_holds_the_example_and_more_differs_and_one_is_named_alone(cli, tmp_path: Path):
    # A file longer than the example, with the example's text first, is not the example; one file refused is 'it'.
    cli("examples", str(tmp_path))
    fleet = tmp_path / "fleet.yaml"
    fleet.write_bytes(fleet.read_bytes() + b"# mine\n")
    assert cli("examples", str(tmp_path)) == (2, "", (
        f"solve examples: error: {fleet}: there already, and not the example; --force overwrites it (nothing "
        "written)\n"))


def test_a_file_that_holds_the_example_is_left_as_it_is(cli, tmp_path: Path):
    # Unchanged means not written again: the same file (inode), not a copy renamed over it.
    cli("examples", str(tmp_path))
    before = {name: (tmp_path / name).stat().st_ino for name in NAMES}
    assert cli("examples", str(tmp_path))[0] == 0
    assert {name: (tmp_path / name).stat().st_ino for name in NAMES} == before


def test_a_dangling_link_where_an_example_goes_is_refused(cli, tmp_path: Path):
    # A link to a file in a folder that does not exist cannot be written through: refused, nothing written.
    (tmp_path / "fleet.yaml").symlink_to(tmp_path / "gone" / "fleet.yaml")
    assert cli("examples", str(tmp_path)) == (2, "", (
        f"solve examples: error: {tmp_path}/fleet.yaml: not a regular file (or a link to a place one can be written); "
        "move it, or write the examples to another folder\n"))
    assert sorted(path.name for path in tmp_path.iterdir()) == ["fleet.yaml"]


def test_a_folder_made_meanwhile_by_another_run_is_written_in(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # Two runs write the examples into one missing folder: the other makes each folder between this one's look and
    # its mkdir, which said 'cannot make the folder: File exists' and exited 2.
    monkeypatch.chdir(tmp_path)
    make_folder = Path.mkdir

    def made_first_by_another_run(folder: Path, *args: object, **kwargs: object) -> None:
        if not folder.exists():
            make_folder(folder)
        make_folder(folder, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", made_first_by_another_run)
    assert cli("examples", "mine") == (0, "".join(f"wrote mine/{name}\n" for name in NAMES), "")
    assert _tree(tmp_path / "mine") == _tree(EXAMPLES)


def test_an_installation_without_its_examples_exits_2_with_one_line(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # A broken installation (its solver.examples folder emptied, or a file there that is not UTF-8): one line naming
    # the folder, exit status 2, nothing written.
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    monkeypatch.setattr(solver.tables.loaders, "_installed_folder", lambda package, checkout: shipped)
    assert cli("examples", str(tmp_path / "out")) == (
        2, "", f"solve examples: error: {shipped}: no shipped examples there; reinstall rft-solver\n")
    (shipped / "fleet.yaml").write_bytes(b"\xff\n")
    assert cli("examples", str(tmp_path / "out")) == (2, "", (
        f"solve examples: error: {shipped}: the shipped examples cannot be read: 'utf-8' codec can't decode byte 0xff "
        "in position 0: invalid start byte\n"))
    assert not (tmp_path / "out").exists()


def test_an_installed_package_reads_its_examples_from_the_installed_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # A wheel installs docs/examples as the folder solver/examples: found as a package, it is read, not the checkout's.
    (tmp_path / "examples" / "my-model").mkdir(parents=True)
    (tmp_path / "examples" / "fleet.yaml").write_text("jobs: []\n", encoding="utf-8")
    (tmp_path / "examples" / "my-model" / "config.json").write_text("{}\n", encoding="utf-8")
    monkeypatch.setattr(solver, "__path__", [str(tmp_path), *solver.__path__])  # first: a wheel has its own
    assert shipped_examples() == {PurePosixPath("fleet.yaml"): "jobs: []\n",
                                  PurePosixPath("my-model/config.json"): "{}\n"}
