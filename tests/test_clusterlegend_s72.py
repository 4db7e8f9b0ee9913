"""What `solve cluster` says of its tables and placements is true of them: the notes under a pool table explain only
marks its rows show, and --buy's placement is not promised to be the one solve cluster writes the configs of."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


# Six jobs that the pools hold as they are: --buy buys nothing, and its placement puts big-32b and agent-14b each on
# the other's pool (A100s, H100s) of solve cluster's placement (a tie: the same priority, lengths and cost).
TEAM = """\
pools:
  - {name: a100, gpu: A100-80GB, nodes: 4, gpus_per_node: 8, host_ram_gb: 1024}
  - {name: h100, gpu: H100, nodes: 2, gpus_per_node: 8, host_ram_gb: 2048}
  - {name: h20, gpu: H20, nodes: 2, gpus_per_node: 8}
jobs:
  - {name: tiny-0.6b, model: 0.6B, max_model_len: 8k, rollout_gpus: 1}
  - {name: math-4b, model: 4B, max_model_len: 32k, rollout_gpus: 2, priority: 3}
  - {name: code-8b, model: 8B, max_model_len: {at_least: 64k}, rollout_gpus: 4, train_batch_size: 256}
  - {name: agent-14b, model: 14B, max_model_len: 128k, rollout_gpus: 4, priority: 2}
  - {name: big-32b, model: 32B, max_model_len: 32k, rollout_gpus: 8, required: true}
  - {name: long-32b, model: 32B, max_model_len: 128k, rollout_gpus: 8}
"""


def test_buy_placement_may_differ_from_solve_clusters_where_placements_tie(
        cli: Callable[..., tuple[int, str, str]], tmp_path: Path) -> None:
    """--buy's placement and solve cluster's on the same pools are as good (priority, lengths, cost) but pick
    differently among ties, so the line above --buy's placement does not say solve cluster writes its configs."""
    fleet = tmp_path / "team.yaml"
    fleet.write_text(TEAM)
    status, out, _ = cli("cluster", str(fleet), "--json")
    assert status == 0
    placed = json.loads(out)
    status, out, _ = cli("cluster", str(fleet), "--buy", "--json")
    assert status == 0
    bought = json.loads(out)
    assert bought["nodes"] == 0

    def pools(result: dict[str, Any]) -> dict[str, str]:
        return {placement["job"]: placement["pool"] for placement in result["placements"]}

    assert {job: pool for job, pool in pools(placed).items() if pools(bought)[job] != pool} == {
        "big-32b": "a100", "agent-14b": "h100"}
    assert sum(p["plan"]["cost"] for p in placed["placements"]) == sum(p["plan"]["cost"] for p in bought["placements"])
    status, out, _ = cli("cluster", str(fleet), "--buy")
    assert status == 0
    assert out.splitlines()[1] == ("the placement (solve cluster --emit-dir writes the configs; it may pick another "
                                   "placement as good)")
