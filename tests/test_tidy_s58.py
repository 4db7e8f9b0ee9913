"""Tidy of known findings (session 58): the pronoun for a count of things said in one helper (`it_or_them`); the
config --write patches is not read again where the patch keeps the round trip's text whole."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_patchcheck_s57 import MERGED, MERGED_WORDS

import solver
import solver.trinity
import solver.trinity.patch
import solver.trinity.reader
from solver.tables import it_or_them


@pytest.mark.parametrize(("count", "pronoun"), [(1, "it"), (2, "them"), (5, "them")])
def test_one_thing_is_it_and_more_are_them(count: int, pronoun: str):
    assert it_or_them(count) == pronoun


@pytest.mark.parametrize(("version", "reads"), [((), 2), (("--trinity-version", "0.5"), 3)])
def test_write_reads_the_patched_config_it_kept_whole_no_more_than_its_checks_need(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, version: tuple[str, ...], reads: int):
    # Where the patch keeps the round trip's text whole, it is not read again to compare it with itself (it was, twice):
    # read once for --write's own checks (prompt and response within the length, a length no sequence uses), once for
    # the rules it still breaks (patched_config_problems), and, for 0.5, once for the 0.6 keys an anchor merges in.
    read, load = [], solver.trinity.reader.load_config_mapping

    def counted_load(text, name, yaml=None):
        read.append(text)
        return load(text, name, yaml)

    for module in (solver.trinity, solver.trinity.patch, solver.trinity.reader):
        monkeypatch.setattr(module, "load_config_mapping", counted_load)
    config, written = tmp_path / "trinity.yaml", tmp_path / "patched.yaml"
    config.write_text(MERGED, encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "a100-80g", *version, "--write", str(written))
    patched = written.read_text(encoding="utf-8")
    assert (status, patched != MERGED, read.count(patched)) == (0, True, reads)
    assert (f"solve: warning: {written}: {MERGED_WORDS}" in err.splitlines()) == bool(version)
