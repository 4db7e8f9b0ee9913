"""Mutation tests of session 62's new code (helper mutants5): each test here kills a mutant that the tests before it
let live (checked to fail with the mutant applied): the PCIe factor in the fewest-GPUs ranking's cost column and in the
cost tiers the ranked plans' dominance reads; required jobs' fleet-GPU sum (a proof as the model loads), the room
order that spares a required job, the none-placed answer naming the required job alone, and a greedy placement that
leaves one out; a refusal's node-size words; host memory's edges (0, 1 GiB of kB, 49152, GB decimals, the argument
written back); a key an inline merge brings in; condensed SP lists at exactly `LONG_RUNS` groups and where the list is
not every degree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from cluster_api import place
from command_words import make_query
from reference import enumerate_plans, ranked_alternatives
from test_nodesproof_s61 import _fleet, _no_search_work

from solver.explain import LONG_RUNS, condensed_runs
from solver.solve import plan as solve_plan
from solver.tables import QueryError, TableError, host_ram_argument, load_catalog, load_fleet, read_host_ram

CATALOG = load_catalog()


@pytest.mark.parametrize(("model", "length"), [("Qwen3-14B", 16384), ("Qwen3-8B", 32768)])
def test_the_fewest_gpus_ranked_on_pcie_cards_are_the_reference_ones(model: str, length: int):
    # On L40S cards (PCIe) the cost weighs SP three times: the fewest-GPUs ranking (cost rank a column of its own)
    # and the plans each ranked one dominates (the cost tiers of `PlanningData.ranks`) are the PCIe costs' too.
    request = {"gpu": "L40S-48GB", "model": model, "budget_gpus": 8, "max_model_len": length}
    every = enumerate_plans(CATALOG, objective="min_gpus", estimates=True, **request)
    (answer,) = solve_plan(make_query(CATALOG, objective="min_gpus", top=8, **request), CATALOG)
    expected = ranked_alternatives(every, CATALOG.model(model), CATALOG.gpu("L40S-48GB"))[:8]
    assert len(expected) >= 2
    assert [plan.model_dump(mode="json") for plan in answer.plans] == expected


def _fleet_file(instance: dict, tmp_path: Path) -> Path:
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(instance), encoding="utf-8")
    return path


def test_required_jobs_too_many_for_the_fleet_are_proven_so_with_no_search_work(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # As --minimize nodes' every job (test_nodesproof_s61): the required jobs' fewest GPUs, summed, are held to the
    # fleet's in the model, so CP-SAT proves them too many as it loads it, with no search work.
    fleet = _fleet(tmp_path)
    required = fleet.model_copy(update={"jobs": tuple(job.model_copy(update={"required": True}) for job in fleet.jobs)})
    given = _no_search_work(monkeypatch)
    result = place(required, catalog=CATALOG)
    assert given == [0.0]
    assert (result.status, result.placements, result.wall_clock_stopped) == ("infeasible", (), ())
    assert {entry.reason_code for entry in result.unplaced} == {"jobs-do-not-fit-together"}


def _small_job(name: str, rollout_gpus: int, **fields: object) -> dict:
    """Qwen3-0.6B at 4096 tokens: a trainer of 1 GPU and `rollout_gpus` beside it fill `rollout_gpus + 1` of a node."""
    return {"name": name, "model": "Qwen3-0.6B", "max_model_len": 4096, "rollout_gpus": rollout_gpus, **fields}


def test_a_room_that_takes_no_required_job_out_is_named_before_one_of_less_priority(tmp_path: Path):
    # Two nodes of 8: r (required) fills one, b and c (priority 2 together) the other; x (8 GPUs) is left out. Taking
    # r out costs less priority, but r is required: the room named is b's and c's (`_Room.rank`, required first).
    instance = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 2, "gpus_per_node": 8}],
                "jobs": [_small_job("r", 7, required=True), _small_job("b", 3), _small_job("c", 3),
                         _small_job("x", 7)]}
    result = place(load_fleet(_fleet_file(instance, tmp_path), CATALOG), catalog=CATALOG, widen=False)
    assert (result.status, sorted(placed.job for placed in result.placements)) == ("optimal", ["b", "c", "r"])
    assert [(entry.job, entry.reason.split("; ", 1)[1]) for entry in result.unplaced] == [
        ("x", "b, c (priority 2 together) hold the room it needs: priority 3 is the least that places it")]


def test_a_required_job_that_fits_nowhere_is_named_alone_beside_one_not_required(tmp_path: Path):
    # Two jobs fit nowhere (a length no GPU count reaches); only one is required: the others' reason names it alone.
    too_long = {"model": "Qwen3-0.6B", "max_model_len": 9000000}
    instance = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}],
                "jobs": [{"name": "must", **too_long, "required": True}, {"name": "may", **too_long},
                         _small_job("fine", 3)]}
    result = place(load_fleet(_fleet_file(instance, tmp_path), CATALOG), catalog=CATALOG)
    assert (result.status, result.placements) == ("infeasible", ())
    assert [(entry.job, entry.reason_code) for entry in result.unplaced] == [
        ("must", "no-way-to-run"), ("may", "no-way-to-run"), ("fine", "another-job-fits-nowhere")]
    assert result.unplaced[2].reason == ("the required job must fits nowhere, and a placement places every required "
                                         "job or none")


def test_a_greedy_placement_that_leaves_a_required_job_out_does_not_stand_in(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # Jobs of 6, 6 and 4 GPUs on two nodes of 8, all required: greedy places the two 6s and leaves the 4 out, and
    # with no search work CP-SAT neither finds a placement nor proves none (the GPUs' sum, 16, fits). Without a
    # first solution the greedy placement stands in only where it places every required job: here no placement.
    instance = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 2, "gpus_per_node": 8}],
                "jobs": [_small_job("six", 5, required=True), _small_job("six-too", 5, required=True),
                         _small_job("four", 3, required=True)]}
    _no_search_work(monkeypatch)
    result = place(load_fleet(_fleet_file(instance, tmp_path), CATALOG), catalog=CATALOG, widen=False)
    assert (result.status, result.placements) == ("unknown", ())


def test_nodes_not_given_with_no_nearest_plan_on_any_add_no_words_of_the_nodes(cli):
    # The default nodes of 8: the nearest plan's search goes on to nodes of 16, and where neither has one the reason
    # says nothing of node sizes (`_no_nearest_words` speaks only of nodes given).
    status, out, _ = cli("--model", "4B", "--gpu", "4090", "--len", "300k", "--gpus", "2", "--no-estimate", "--json")
    (answer,) = json.loads(out)
    assert (status, answer["reason_code"]) == (1, "no-table-for-model")
    assert answer["reason"] == "the tables have no Qwen3-4B on RTX-4090-24GB"


def test_nodes_given_with_no_plan_even_with_the_estimates_name_no_estimate_among_the_limits_lifted(cli):
    # --no-estimate, no table: the estimates' nearest plan is sought on the nodes given (`_with_estimated_plan`), and
    # where it finds none, the words say so, with --no-estimate among what was lifted.
    status, out, _ = cli("--model", "4B", "--gpu", "4090", "--len", "32k", "--gpus", "2", "--host-ram", "48",
                         "--node-gpus", "2", "--no-estimate", "--json")
    (answer,) = json.loads(out)
    assert (status, answer["reason_code"]) == (1, "no-table-for-model")
    assert answer["reason"] == (
        "the tables have no Qwen3-4B on RTX-4090-24GB; no count of nodes of 2 GPUs (--node-gpus) trains it, even "
        "without --no-estimate --host-ram 48 GiB and with --token-budget auto: an SP group stays within one node, so "
        "SP=2 at most")


@pytest.mark.parametrize(("written", "gib"), [("503.75", 503.75), ("4096", 4096.0), ("515870MiB", 503.7)])
def test_host_memory_in_gb_keeps_its_decimals_and_mib_rounds_down_to_a_tenth(written: str, gib: float):
    assert read_host_ram(written) == gib


@pytest.mark.parametrize(("written", "problem"), [
    ("0", "must be above 0 and at most 49152 GB, got 0"),
    ("1048576", ("a number without a unit is GB up to 4096, got 1048576: give its unit, 1048576MiB if it is free -m's "
                 "total (1024.0 GiB) or 1048576kB if it is /proc/meminfo's MemTotal (1.0 GiB)")),
    ("49152", ("a number without a unit is GB up to 4096, got 49152: give its unit, 49152MiB if it is free -m's total "
               "(48.0 GiB) or 49152GB if it is GB")),
    ("49153", ("a number without a unit is GB up to 4096, got 49153: give its unit, 49153MiB if it is free -m's total "
               "(48.0 GiB)")),
])
def test_host_memory_edges_are_refused_naming_each_reading_that_is_one(written: str, problem: str):
    # 1048576 kB is 1 GiB exactly (a reading), 49152 GB the most a node has (a reading), 49153 GB past it (none).
    with pytest.raises(QueryError) as refused:
        read_host_ram(written)
    assert str(refused.value) == problem


def test_host_ram_argument_writes_gb_only_past_a_bare_numbers_reach():
    assert [host_ram_argument(gib) for gib in (4096.0, 4096.5, 6144.0)] == ["4096", "4096.5GB", "6144GB"]
    assert [read_host_ram(host_ram_argument(gib)) for gib in (4096.0, 4096.5, 6144.0)] == [4096.0, 4096.5, 6144.0]


def test_a_key_an_inline_merge_brings_in_is_named_as_written(tmp_path: Path):
    # The merged mapping is constructed nowhere else (no anchor defined before it): its keys are made text as the
    # merge flattens them (`WrittenKeys.flatten_mapping`), not 'pool a, 1: Keys should be strings'.
    path = tmp_path / "fleet.yaml"
    path.write_text("pools:\n  - <<: {gpu: a100, nodes: 1, gpus_per_node: 8, on: 1}\n    name: a\n"
                    "jobs: [{name: j, model: 4B, max_model_len: 4096}]\n", encoding="utf-8")
    with pytest.raises(TableError) as refused:
        load_fleet(path, CATALOG)
    assert str(refused.value).startswith(f"{path}: line 2: pool a: unknown field 'on' (fields: name, gpu, nodes, ")


def test_condensed_runs_keeps_a_list_of_exactly_long_runs_groups_whole():
    assert LONG_RUNS == 5
    assert condensed_runs([1, 3, 5, 7, 9]) == "1, 3, 5, 7, 9"
    assert condensed_runs([1, 3, 5, 7, 9, 11]) == "1, 3, 5, ..., 11"


def _sp_divides_gpus(cli, *args: str) -> str:
    _, out, _ = cli(*args, "--explain", "--json")
    (answer,) = json.loads(out)
    return next(item["detail"] for item in answer["explanation"] if item["rule"] == "sp_divides_gpus")


def test_the_gpus_rule_says_every_degree_only_where_it_lists_all_of_them_and_the_list_is_long(cli):
    # All of 24's (5, 7, 9-11, 13-23) are four groups: the list stays whole, as before. On 40 GPUs at 131072 tokens
    # the degrees cheaper than the plan are some of 40's, in six groups: listed whole, not said to be every one.
    assert _sp_divides_gpus(cli, "--model", "4B", "--gpu", "h100", "--gpus", "24", "--exact", "--len", "1000000") == (
        "SP must divide the trainer GPUs: on 24 GPUs that rules out SP=5, 7, 9-11, 13-23")
    assert _sp_divides_gpus(cli, "--model", "32B", "--gpu", "h100", "--gpus", "40", "--exact", "--len", "131072") == (
        "SP must divide the trainer GPUs: on 40 GPUs that rules out SP=3, 6, 7, 9, 11-19, 21-25")
