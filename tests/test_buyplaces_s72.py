"""`solve cluster --buy` places the jobs where `solve cluster` places them on the pools it buys (with nothing to buy,
and after a buy), where placements tie too: its placement is `place`'s own on the pools as bought, so the configs
`--emit-dir` writes are for it; and `--current` refuses a `--buy --json` file (what to buy, not what runs)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import planner_answers_shared
from ortools.sat.python import cp_model

import solver
from solver.cluster.buy import _placed_as_bought
from solver.cluster.options import Planner, WaysLimit
from solver.cluster.search import Search, StopOnInterrupt
from solver.results import ClusterResult, PurchaseResult
from solver.tables import load_catalog, load_fleet
from solver.tables.fleets import PURCHASE_KEY


@pytest.fixture(autouse=True)
def _planner_answers_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test here shares the planners' answers with the others of its process (`planner_answers_shared`)."""
    planner_answers_shared(monkeypatch)


Cli = Callable[..., tuple[int, str, str]]

# Six jobs on three pools, where placements tie: big-32b and agent-14b each take two whole nodes of A100s or of H100s
# at the same priority, lengths and cost, so that the tie-break alone puts each where it goes. The pools hold every
# job as they are (nothing to buy); with two A100 nodes (and big-32b not required) two more H20 nodes place every job,
# and big-32b and long-32b tie there on A100s and H100s. The A100 nodes have 2048 GiB of host memory, as the H100s: the
# jobs name no release, so each rank of a node loads its model at start-up (Qwen3-32B's 122.0 GiB on each of 8, more
# than 1024 GiB with Offload's pinned shards).
TEAM = """\
pools:
  - {name: a100, gpu: A100-80GB, nodes: 4, gpus_per_node: 8, host_ram_gb: 2048}
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

SHORT_OF_A100S = TEAM.replace(", required: true", "").replace("A100-80GB, nodes: 4", "A100-80GB, nodes: 2")

WHOLE = [0, 1, 2, 3, 4, 5, 6, 7]
SMALL_JOBS = [("tiny-0.6b", [0, 1, 2], 2, 1, 8192), ("math-4b", [3, 4, 5, 6], 2, 2, 32768),
              ("code-8b", WHOLE, 4, 4, 122880)]
"""The three small jobs, each on an H20 node (the first two share one) as both commands place them: job, GPUs,
trainer GPUs, SP degree, length."""


def on_h20(first_node: int) -> list[tuple[Any, ...]]:
    """The small jobs as `where` gives them, on the H20 nodes from `first_node` on."""
    return [(job, "h20", [first_node + (job == "code-8b")], *rest) for job, *rest in SMALL_JOBS]


def where(result: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Each placement's job, pool, nodes, GPUs, trainer GPUs, SP degree and length, in the answer's order."""
    return [(p["job"], p["pool"], p["nodes"], p["gpu_indexes"], p["trainer_gpus"], p["plan"]["sp"],
             p["plan"]["max_model_len"]) for p in result["placements"]]


def as_bought(fleet: str, purchase: dict[str, Any]) -> str:
    """The cluster file with each pool's `nodes:` set to its 'nodes then' (the purchase's `nodes_after`)."""
    for pool in purchase["pools"]:
        fleet = re.sub(rf"(name: {pool['pool']}, gpu: [^,]+, nodes: )\d+", rf"\g<1>{pool['nodes_after']}", fleet)
    return fleet


def test_nothing_to_buy_places_the_jobs_as_solve_cluster_does(cli: Cli, tmp_path: Path) -> None:
    fleet = tmp_path / "team.yaml"
    fleet.write_text(TEAM)
    status, out, _ = cli("cluster", str(fleet), "--json")
    placed = json.loads(out)
    assert (status, placed["status"]) == (0, "optimal")
    status, out, _ = cli("cluster", str(fleet), "--buy", "--json")
    bought = json.loads(out)
    assert (status, bought["status"], bought["nodes"], bought["placement_proven"]) == (0, "optimal", 0, True)
    assert where(bought) == where(placed) == [
        *on_h20(0), ("agent-14b", "h100", [0, 1], WHOLE, 8, 8, 131072), ("big-32b", "a100", [0, 1], WHOLE, 8, 2, 32768),
        ("long-32b", "a100", [2, 3], WHOLE, 8, 8, 131072)]
    # The text: the line above the placement promises solve cluster's configs, and the pools' tables are its own.
    _, placed_text, _ = cli("cluster", str(fleet))
    _, bought_text, _ = cli("cluster", str(fleet), "--buy")
    assert bought_text.splitlines()[:2] == [
        "status: optimal; nothing to buy: the pools as they are place the required job (big-32b)",
        "the placement (solve cluster --emit-dir writes the configs)"]
    assert bought_text.splitlines()[2:] == placed_text.splitlines()[1:]


def test_after_a_buy_solve_cluster_on_the_pools_bought_places_the_same(cli: Cli, tmp_path: Path) -> None:
    fleet = tmp_path / "short.yaml"
    fleet.write_text(SHORT_OF_A100S)
    status, out, _ = cli("cluster", str(fleet), "--buy", "--json")
    bought = json.loads(out)
    assert (status, bought["status"], bought["placement_proven"]) == (0, "optimal", True)
    assert [(pool["pool"], pool["nodes_bought"], pool["nodes_after"]) for pool in bought["pools"]] == [
        ("a100", 0, 2), ("h100", 0, 2), ("h20", 2, 4)]
    after = tmp_path / "after.yaml"
    after.write_text(as_bought(SHORT_OF_A100S, bought))
    status, out, _ = cli("cluster", str(after), "--json")
    placed = json.loads(out)
    assert (status, placed["status"]) == (0, "optimal")
    assert where(bought) == where(placed) == [
        *on_h20(2), ("agent-14b", "h20", [0, 1], WHOLE, 8, 8, 131072), ("big-32b", "a100", [0, 1], WHOLE, 8, 2, 32768),
        ("long-32b", "h100", [0, 1], WHOLE, 8, 8, 131072)]
    _, placed_text, _ = cli("cluster", str(after))
    _, bought_text, _ = cli("cluster", str(fleet), "--buy")
    placement = bought_text.splitlines().index(
        "the placement with them: set each pool's nodes: to its 'nodes then' and run solve cluster (--emit-dir writes "
        "the configs)")
    assert bought_text.splitlines()[placement + 1:] == placed_text.splitlines()[1:]


@pytest.mark.parametrize(("questions", "interrupted"), [(0, False), (math.inf, True)], ids=["no-ways", "ctrl-c"])
def test_the_purchase_s_own_placement_stands_unproven_where_solve_cluster_s_finds_none(
        tmp_path: Path, questions: float, interrupted: bool) -> None:
    # No ways asked on the pools as bought (the count of questions reached): the required job has none, so the
    # placement's first stage finds no placement; or Ctrl-C came before it. The purchase's own stands, unproven.
    fleet = tmp_path / "team.yaml"
    fleet.write_text(TEAM)
    after = load_fleet(fleet, load_catalog())
    planner = Planner(load_catalog().for_fleet(after), solver.load_weights(), "auto")
    purchase = Search(values=[1], counts={}, objective=0, bound=0)
    with StopOnInterrupt(cp_model.CpSolver()) as interrupt:
        interrupt.caught = interrupted
        options, search = _placed_as_bought(planner, after, WaysLimit(questions=questions, deadline=math.inf),
                                            interrupt, (math.inf, 10.0), None, ([], purchase))
    assert (options, search) == ([], Search(values=[1], counts={}, objective=0, bound=0, proven=False))
    assert planner.asked == 0  # neither asked the ways on the pools as bought


def test_current_refuses_a_purchase(cli: Cli, tmp_path: Path) -> None:
    fleet = tmp_path / "team.yaml"
    fleet.write_text(TEAM)
    purchase = tmp_path / "buy.json"
    purchase.write_text(cli("cluster", str(fleet), "--buy", "--json")[1])
    status, out, err = cli("cluster", str(fleet), "--current", str(purchase))
    said = (f"{purchase}: solve cluster --buy --json's output, what to buy, not what the fleet runs now: a placement "
            "is what solve cluster --json printed")
    assert (status, out, err) == (2, "", f"solve cluster: error: --current {said}\n")
    with pytest.raises(solver.TableError) as refused:  # the API's words name no flag
        solver.place(fleet, current=purchase)
    assert str(refused.value) == said


def test_the_key_current_refuses_is_a_purchase_s_alone() -> None:
    assert PURCHASE_KEY in PurchaseResult.model_fields and PURCHASE_KEY not in ClusterResult.model_fields
