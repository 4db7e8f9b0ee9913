"""A capacity planner's quarter on the Python API (session 77, persona48): `cluster_text`, `placement_configs` and
`placement_settings` refuse a result with a fleet it was not placed on where the pools share their names but not
their sizes, or the fleet lacks one of its jobs (`cluster_text` drew such a result on the other fleet, `1 x 8
A100-80GB; 2 nodes and 15 of 16 GPUs used`, and the configs called a job on a whole node of 8 a job on part of a node
of 16, with a `CUDA_VISIBLE_DEVICES` to export)."""

from __future__ import annotations

from pathlib import Path

import pytest

import solver

EXAMPLES = Path(__file__).resolve().parent.parent / "docs" / "examples"
FLEET = EXAMPLES / "fleet.yaml"
"""Pools a100 (2 x 8) and h20 (1 x 8), jobs math-4b, code-8b, chat-14b and probe-0.6b."""
REQUIRED = EXAMPLES / "required.yaml"
"""Pools a100 (1 x 8) and h20 (1 x 8), jobs code-8b, math-8b, chat-14b and probe-4b: the same pools' names."""
FOR_PLACEMENTS = (solver.cluster_text, solver.placement_configs, solver.placement_settings)


@pytest.fixture(scope="module")
def placed() -> solver.ClusterResult:
    return solver.place(FLEET)


def test_a_fleet_of_the_same_pools_names_but_other_nodes_is_refused(placed: solver.ClusterResult):
    with pytest.raises(solver.QueryError) as raised:
        solver.cluster_text(placed, REQUIRED)
    assert str(raised.value) == ("result is on 2 nodes of 8 GPUs in pool a100, fleet has 1 node of 8: pass the fleet "
                                 "it placed")


@pytest.mark.parametrize("function", FOR_PLACEMENTS)
def test_other_gpus_per_node_are_refused_by_each(placed: solver.ClusterResult, function):
    fleet = solver.load_fleet(FLEET)
    one_node_of_16 = fleet.pools[0].model_copy(update={"nodes": 1, "gpus_per_node": 16})
    with pytest.raises(solver.QueryError) as raised:
        function(placed, fleet.model_copy(update={"pools": (one_node_of_16, *fleet.pools[1:])}))
    assert str(raised.value) == ("result is on 2 nodes of 8 GPUs in pool a100, fleet has 1 node of 16: pass the fleet "
                                 "it placed")
    assert len(function(placed, fleet)) > 0  # its own fleet, as a Fleet: as before


def test_a_job_the_fleet_lacks_is_refused(placed: solver.ClusterResult):
    fleet = solver.load_fleet(FLEET)
    renamed = tuple(job.model_copy(update={"name": f"{job.name}-2"}) if job.name in ("math-4b", "code-8b") else job
                    for job in fleet.jobs)
    with pytest.raises(solver.QueryError) as raised:
        solver.cluster_text(placed, fleet.model_copy(update={"jobs": renamed}))
    assert str(raised.value) == "result names math-4b, code-8b, which fleet has no job of: pass the fleet it placed"


def test_a_purchase_is_checked_on_the_pools_before_it_buys():
    bought = solver.buy_nodes(REQUIRED)
    assert [(pool.pool, pool.nodes_bought, pool.nodes_after) for pool in bought.pools] == [
        ("a100", 1, 2), ("h20", 0, 1)]
    assert solver.cluster_text(bought, REQUIRED).startswith(
        "status: optimal; to place the required jobs (code-8b, chat-14b, probe-4b), buy 8 GPUs (1 node)")
    with pytest.raises(solver.QueryError) as raised:
        solver.cluster_text(bought, FLEET)  # a100 has 2 nodes there: the purchase's 2 after it buys one
    assert str(raised.value) == ("result is on 1 node of 8 GPUs in pool a100, fleet has 2 nodes of 8: pass the fleet "
                                 "it placed")


def test_a_pool_of_no_nodes_still_renders_with_its_own_fleet():
    fleet = solver.load_fleet(FLEET)
    down = fleet.model_copy(update={"pools": (fleet.pools[0], fleet.pools[1].model_copy(update={"nodes": 0}))})
    result = solver.place(down)
    assert [(use.pool, use.nodes, use.gpus) for use in result.pools] == [("a100", 2, 16), ("h20", 0, 0)]
    assert "pool h20: 0 x 8 H20-96GB; no nodes now (nodes: 0): nothing runs there" in solver.cluster_text(result, down)
    with pytest.raises(solver.QueryError, match=r"^result is on 0 nodes of 8 GPUs in pool h20, fleet has 1 node of 8"):
        solver.cluster_text(result, fleet)


def test_an_answers_apply_changed_on_a_deep_copy_leaves_the_answer_as_it_was():
    (answer,) = solver.plan("8B", gpu="h100", max_model_len=8192)
    held = answer.model_copy(update={"apply": solver.ApplySettings.of(solver.trinity_settings(answer))})
    assert held.apply is not None
    before, found = held.as_json(), {held}
    copy = held.apply.model_copy(deep=True)
    copy.config["trainer"]["ulysses_sequence_parallel_size"] = 8
    copy.environment["EXTRA"] = "1"
    assert held.as_json() == before and held in found  # docs/api.md: change a copy
    assert held.apply.config["trainer"]["ulysses_sequence_parallel_size"] == 1 and "EXTRA" not in held.apply.environment
    held.apply.config["trainer"]["ulysses_sequence_parallel_size"] = 8  # the answer's own dicts: it changes
    assert held.as_json()["apply"]["config"]["trainer"]["ulysses_sequence_parallel_size"] == 8 and held not in found
