"""Behaviour pinned before the functions that give it were split (session 60, complexity2), where no test reached a
branch: a file's mapping key that is not text (refused in pydantic's own words until session 62, named as written
since)."""

from __future__ import annotations

from pathlib import Path

import pytest

from solver.tables import TableError, load_catalog, load_fleet

CATALOG = load_catalog()


@pytest.mark.parametrize("key", ["1", "2.5"])
def test_a_key_yaml_reads_as_no_text_is_refused_as_the_unknown_field_written(tmp_path: Path, key: str):
    # Session 62 (smallfix2): such a key is its text as written (`WrittenKeys`), an unknown field naming the fields,
    # not pydantic's invalid_key at the place Python writes it ('pool a, 1: Keys should be strings, got 1').
    path = tmp_path / "fleet.yaml"
    path.write_text(f"pools: [{{name: a, gpu: a100, nodes: 1, gpus_per_node: 8, {key}: 2}}]\n"
                    "jobs: [{name: j, model: 4B, max_model_len: 4096}]\n", encoding="utf-8")
    with pytest.raises(TableError) as caught:
        load_fleet(path, CATALOG)
    assert str(caught.value) == (f"{path}: line 1: pool a: unknown field '{key}' (fields: name, gpu, nodes, "
                                 "gpus_per_node, host_ram_gb, gpu_memory_gb, gpu_memory_mib, gpu_interconnect, "
                                 "node_interconnect, down)")
