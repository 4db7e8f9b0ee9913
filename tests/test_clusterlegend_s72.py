"""What `solve cluster` says of its tables is true of them: the notes under a pool table explain only marks its rows
show."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from solver.render.cluster import TRAINER_NODES_NOTE

# A job across two nodes without Offload (no host figure: the pool checks no host memory) beside one that offloads.
SPREAD_WITHOUT_HOST_NEED = """\
pools:
  - {name: h20, gpu: H20, nodes: 3, gpus_per_node: 8}
jobs:
  - {name: long, model: 14B, max_model_len: 128k, rollout_gpus: 4}
  - {name: offloaded, model: 8B, max_model_len: 16k, rollout_gpus: 7}
"""


def test_no_trainer_nodes_note_where_no_host_cell_names_nodes(
        cli: Callable[..., tuple[int, str, str]], tmp_path: Path) -> None:
    """The job on nodes 0 and 1 has an empty host cell, so no row says `(node N)`: the note on it is left out."""
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(SPREAD_WITHOUT_HOST_NEED)
    status, out, err = cli("cluster", str(fleet))
    assert (status, err) == (0, "")
    assert "│ 0, 1  │ all  │ long      │       8 │ 8 (4 asked) │ Env + SP=8    │" in out
    assert "host GiB/node" in out and "(node " not in out.replace(TRAINER_NODES_NOTE, "")
    assert TRAINER_NODES_NOTE not in out


def test_trainer_nodes_note_where_a_host_cell_names_nodes(
        cli: Callable[..., tuple[int, str, str]], tmp_path: Path) -> None:
    """With the pool's host memory given, the same job's cell says `(node 0)`, and the note explains it."""
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(SPREAD_WITHOUT_HOST_NEED.replace("gpus_per_node: 8}", "gpus_per_node: 8, host_ram_gb: 1024}"))
    status, out, err = cli("cluster", str(fleet))
    assert (status, err) == (0, "")
    assert " (node 0) │" in out
    assert TRAINER_NODES_NOTE in out
