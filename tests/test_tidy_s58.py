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


def test_write_reads_the_patched_config_twice_not_four_times(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # Once where the patch checks that its text reads as the round trip's (here they are the same text), once for
    # --write's checks (prompt and response within the length, the rules it still breaks, a length no sequence uses).
    read, load = [], solver.trinity.reader.load_config_mapping

    def counted_load(text, name, yaml=None):
        read.append(text)
        return load(text, name, yaml)

    for module in (solver.trinity, solver.trinity.patch, solver.trinity.reader):
        monkeypatch.setattr(module, "load_config_mapping", counted_load)
    config, written = tmp_path / "trinity.yaml", tmp_path / "patched.yaml"
    config.write_text(MERGED, encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "a100-80g", "--trinity-version", "0.5",
                         "--write", str(written))
    patched = written.read_text(encoding="utf-8")
    assert (status, patched != MERGED, read.count(patched)) == (0, True, 2)
    assert f"solve: warning: {written}: {MERGED_WORDS}" in err.splitlines()

