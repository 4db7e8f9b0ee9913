"""Behaviour pinned before the functions that give it were split (session 60, complexity2), where no test reached a
branch: a file's validation error in pydantic's own words with the value refused (`_own_words`: a mapping's key
that is not text)."""

from __future__ import annotations

from pathlib import Path

import pytest

from solver.tables import TableError, load_catalog, load_fleet

CATALOG = load_catalog()


@pytest.mark.parametrize(("key", "shown"), [("1", "1"), ("2.5", "2.5")])
def test_a_key_yaml_reads_as_no_text_is_refused_in_pydantics_words_with_the_key(tmp_path: Path, key: str, shown: str):
    # An error type the one-line messages do not word themselves (invalid_key): pydantic's words, and the key.
    path = tmp_path / "fleet.yaml"
    path.write_text(f"pools: [{{name: a, gpu: a100, nodes: 1, gpus_per_node: 8, {key}: 2}}]\n"
                    "jobs: [{name: j, model: 4B, max_model_len: 4096}]\n", encoding="utf-8")
    with pytest.raises(TableError) as caught:
        load_fleet(path, CATALOG)
    assert str(caught.value) == f"{path}: pool a, {shown}: Keys should be strings, got {shown}"
