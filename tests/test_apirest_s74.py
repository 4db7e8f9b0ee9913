"""The Python API's loose ends (session 74): `place(current=...)` takes an earlier `place`'s `ClusterResult` as it
takes its JSON's path; an `Answer`'s own `model_dump` gives the JSON its schema takes (no null for a key left out);
`placement_configs`, `placement_settings` and `cluster_text` check a `Fleet` changed by `model_copy` again, as `place`
does; a patch refuses a plan laid on other nodes than the config's cluster; and a refused config's verdict, read alone,
names no line below it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_fleetcopy_s73 import FLEET, _changed
from test_json import jsonschema_errors
from test_keepplaced_s70 import JOBS, _raised, _write

import solver
from solver.api import answer_query, config_query, with_config_verdicts
from solver.results import ANSWER_LEFT_OUT_WHEN_NONE
from solver.trinity import patch_trinity_config, patched_trinity_config, read_trinity_config

EXAMPLE = FLEET.parent / "trinity.yaml"
TEXT = EXAMPLE.read_text(encoding="utf-8")  # 1 node of 8 GPUs, 2 engines of one GPU: 6 for the trainer
ON_TWO_NODES_OF_4 = (TEXT.replace("node_num: 1", "node_num: 2").replace("gpu_per_node: 8", "gpu_per_node: 4")
                     .replace("engine_num: 2", "engine_num: 0"))  # 8 for the trainer, on 2 nodes of 4
ON_ONE_NODE_OF_8 = TEXT.replace("engine_num: 2", "engine_num: 0")  # 8 for the trainer, on one node
MODEL = solver.load_catalog().model("8B")


def test_current_takes_an_earlier_result_as_it_takes_its_json(tmp_path: Path) -> None:
    now = solver.place(_write(tmp_path / "now.yaml", JOBS))
    saved = tmp_path / "now.json"
    saved.write_text(now.model_dump_json(), encoding="utf-8")
    raised = _write(tmp_path / "raised.yaml", _raised("c8-b", 3))
    kept = solver.place(raised, current=now)
    assert kept == solver.place(raised, current=saved) == solver.place(solver.load_fleet(raised), current=now)
    assert [(p.job, p.current) for p in kept.placements] == [
        ("p06-a", "stays"), ("m4-a", "stays"), ("m4-b", "stays"), ("c8-b", "starts"), ("q14-a", "moves")]


def test_current_refuses_a_purchase_and_a_result_changed_into_no_placement(tmp_path: Path) -> None:
    fleet = _write(tmp_path / "now.yaml", JOBS)
    now = solver.place(fleet)
    with pytest.raises(solver.QueryError) as refused:
        solver.place(fleet, current=solver.buy_nodes(fleet))
    assert str(refused.value) == "current must be a ClusterResult, a Path, a str or None, got a PurchaseResult"
    twice = now.model_copy(update={"placements": (*now.placements, now.placements[0])})
    with pytest.raises(solver.QueryError) as refused:
        solver.place(fleet, current=twice)
    assert str(refused.value) == "current: job p06-a is placed twice"


def _answers() -> dict[str, solver.Answer]:
    """Answers with a plan, with none (and its nearest), with explain's steps, and with a config's verdict."""
    (planned,) = solver.plan("4B", gpu="a100", max_model_len=8192, budget_gpus=2)
    (refused,) = solver.plan("32B", gpu="a100", max_model_len=131072, budget_gpus=1)
    (explained,) = solver.plan("8B", gpu="h100", max_model_len=32768, budget_gpus=4, explain=True)
    catalog = solver.load_catalog()
    config = read_trinity_config(TEXT, "trinity.yaml", {})
    query = config_query(catalog, config, gpu="a100")
    (judged,) = with_config_verdicts(answer_query(query, catalog), query, catalog, config, TEXT, "trinity.yaml", {})
    return {"plan": planned, "none": refused, "explain": explained, "config": judged}


def test_an_answers_model_dump_is_its_json_and_the_schema_takes_it() -> None:
    answers = _answers()
    assert answers["none"].nearest is not None and answers["plan"].nearest is None  # left out of one, not the other
    assert answers["explain"].explanation and answers["config"].current is not None
    for answer in answers.values():
        dumped = answer.model_dump(mode="json")
        assert dumped == answer.as_json() == json.loads(answer.model_dump_json())
        assert not [name for name in ANSWER_LEFT_OUT_WHEN_NONE if name in dumped and dumped[name] is None]
        assert solver.Answer.model_validate(answer.model_dump()).as_json() == dumped  # Python's dump reads back
    assert jsonschema_errors("solve", [answer.model_dump(mode="json") for answer in answers.values()]) == []
    assert "nearest" in answers["none"].model_dump() and "nearest" not in answers["plan"].model_dump()


def test_a_placements_and_a_purchases_model_dump_are_what_their_schemas_take() -> None:
    placed = solver.place(FLEET, time_limit_s=5)
    assert jsonschema_errors("cluster", placed.model_dump(mode="json")) == []
    assert jsonschema_errors("cluster-buy", solver.buy_nodes(FLEET, time_limit_s=5).model_dump(mode="json")) == []


@pytest.mark.parametrize("call", [solver.placement_configs, solver.placement_settings, solver.cluster_text],
                         ids=["placement_configs", "placement_settings", "cluster_text"])
def test_a_fleet_changed_in_code_is_checked_again_where_a_result_is_written(call: Any) -> None:
    result = solver.place(FLEET, time_limit_s=5)
    fleet = solver.load_fleet(FLEET)
    with pytest.raises(solver.QueryError) as refused:
        call(result, _changed(jobs=(*fleet.jobs, fleet.jobs[0])))
    assert str(refused.value) == "fleet: two jobs are named 'math-4b', jobs items 1 and 5: rename one"
    with pytest.raises(solver.QueryError) as refused:
        call(result, _changed(first={"pool": "a10O"}))
    assert str(refused.value) == "fleet: job math-4b, pool: no pool named 'a10O' (did you mean a100? pools: a100, h20)"
    assert call(result, _changed(first={"priority": 2}))  # a change that holds: written as from a fleet built anew


def _plan(node_gpus: int | None = None, **query: int) -> solver.Plan:
    """The best plan for the example's model and length on exactly 8 H20 trainer GPUs, on nodes of `node_gpus`."""
    (answer,) = solver.plan("8B", gpu="h20", max_model_len=32768, budget_gpus=8, exact=True, node_gpus=node_gpus,
                            **query)
    assert answer.best is not None and answer.best.gpus == 8
    return answer.best


def test_a_plan_for_nodes_of_another_size_is_refused() -> None:
    assert _plan().trainer_nodes == 1 and _plan(4).trainer_nodes == 2
    for patch in (patch_trinity_config, patched_trinity_config):
        with pytest.raises(solver.QueryError) as refused:
            patch(ON_TWO_NODES_OF_4, _plan(), MODEL, name="trinity.yaml")
        assert str(refused.value) == (
            "trinity.yaml: the plan is for 8 trainer GPUs on one node, but the config's cluster gives the trainer 8 on "
            "2 nodes of 4 (cluster.node_num x cluster.gpu_per_node), and solver.trinity.patch_trinity_config keeps "
            "that cluster: give it a plan on nodes of 4 GPUs (node_gpus=4), or set the cluster for this plan "
            "(solver.trinity_config or solver.placement_configs writes a fragment with it)")
    with pytest.raises(solver.QueryError) as refused:
        patch_trinity_config(ON_ONE_NODE_OF_8, _plan(4), MODEL)
    assert str(refused.value).startswith(
        "config: the plan is for 8 trainer GPUs on 2 nodes of 4, but the config's cluster gives the trainer 8 on one "
        "node of 8 (cluster.node_num x cluster.gpu_per_node), and solver.trinity.patch_trinity_config keeps that "
        "cluster: give it a plan on nodes of 8 GPUs (node_gpus=8), or set the cluster")
    assert "ulysses_sequence_parallel_size" in patch_trinity_config(ON_TWO_NODES_OF_4, _plan(4), MODEL)
    assert "ulysses_sequence_parallel_size" in patch_trinity_config(ON_ONE_NODE_OF_8, _plan(), MODEL)


def test_a_plan_of_the_same_gpus_on_one_node_of_either_size_is_patched() -> None:
    # one node of 16 or of 8: the trainer's 8 GPUs are one node's either way; a plan of JSON made before
    # trainer_nodes gives no nodes to compare
    (answer,) = solver.plan("8B", gpu="h20", max_model_len=32768, budget_gpus=8, exact=True, node_gpus=16)
    assert answer.best is not None and answer.best.trainer_nodes == 1
    assert "max_token_len_per_gpu" in patch_trinity_config(ON_ONE_NODE_OF_8, answer.best, MODEL)
    unknown = _plan(4).model_copy(update={"trainer_nodes": None})
    assert "max_token_len_per_gpu" in patch_trinity_config(ON_ONE_NODE_OF_8, unknown, MODEL)


def test_a_refused_configs_verdict_read_alone_names_the_problem_not_a_line_below() -> None:
    catalog = solver.load_catalog()
    config = read_trinity_config(TEXT, "trinity.yaml", {})
    query = config_query(catalog, config, gpu="a100", max_model_len=16384)
    (judged,) = with_config_verdicts(answer_query(query, catalog), query, catalog, config, TEXT, "trinity.yaml", {})
    current = judged.as_json()["current"]
    assert current["refused"] and current["config_problem_codes"] == ["prompt-response-over-length"]
    assert current["verdict"].endswith(
        "The config judged at this length is refused too (the problem that refuses it says why). The best plan "
        "follows.")
    assert "below" not in current["verdict"]
