"""The last uncovered spots of review s65's deadcode3, judged (helper deadcode3b): each reached by the input that takes
it, with what it then says or gives; a bug one of them showed fixed (a cells file's ``source`` mapping, a union whose
members pydantic tagged in the location: the messages named a field 'Source' and a place 'source, constrained-str')."""
from __future__ import annotations

from pathlib import Path

import pytest

CELLS = Path(__file__).parent / "data" / "cells" / "h800.yaml"
QUERY = ("--model", "8B", "--gpu", "H800", "--len", "32768")


def _cells_with_source(tmp_path: Path, source: str) -> Path:
    text = CELLS.read_text(encoding="utf-8")
    first, rest = text.split("\nsource: ", 1)
    path = tmp_path / "cells.yaml"
    path.write_text(f"{first}\nsource: {source}\n{rest.split(chr(10), 1)[1]}", encoding="utf-8")
    return path


@pytest.mark.parametrize(("source", "problem"), [
    ("{document: my bench}", "source: missing field 'section' (fields: document, section)"),
    ("{document: my bench, section: t1, page: 3}", "source: unknown field 'page' (fields: document, section)"),
    ("{document: 5, section: t1}",
     "source, document: must be text, got 5 (YAML reads it, unquoted, as a number: put it in quotes)"),
    ("5", "source: must be text, got 5 (YAML reads it, unquoted, as a number: put it in quotes)"),
    ("[1, 2]", "source: must be text, got [1, 2]"),
], ids=["missing", "unknown", "mapping-field-type", "number", "list"])
def test_a_cells_files_source_problem_names_its_field_not_pydantics_union_tags(cli, tmp_path: Path, source: str,
                                                                             problem: str):
    path = _cells_with_source(tmp_path, source)
    assert cli("--cells", str(path), *QUERY) == (2, "", f"solve: error: --cells {path}: {problem}\n")


def test_a_cells_files_source_of_either_form_still_loads(cli, tmp_path: Path):
    for source in ("{document: my bench, section: table 1}", '"my bench, table 1"'):
        status, out, err = cli("--cells", str(_cells_with_source(tmp_path, source)), *QUERY)
        assert (status, err) == (0, "")
        assert "H800-80GB" in out
