"""Required jobs (s62): a job's `required: true` in the cluster file (and `--required`, which adds to it) holds for a
placement as for --buy: CP-SAT places every required job or finds no placement (checked against the brute force of
tests/cluster_reference.py, which keeps such a job from being left out), with the reasons naming them; bad values;
and the --buy note for a job whose length more nodes of a pool reach (or that none do)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from cluster_api import buy
from cluster_reference import best_value, check_placements, random_instance, value_of
from test_cluster import reaches_the_optimum_then_widens
from test_clusterbuy_s60 import CATALOG, fleet_file

import solver
from solver.cli import main
from solver.cluster import greedy
from solver.tables import QueryError, load_fleet

ONE_NODE = {"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}
CROWDED = {"pools": [ONE_NODE], "jobs": [
    {"name": "a", "model": "Qwen3-4B", "max_model_len": 8192, "rollout_gpus": 4, "required": True},
    {"name": "b", "model": "Qwen3-4B", "max_model_len": 8192, "rollout_gpus": 4, "priority": 5},
    {"name": "c", "model": "Qwen3-4B", "max_model_len": 8192, "rollout_gpus": 4, "priority": 5}]}
"""Three jobs of 5 GPUs at the fewest (4 trainer, 4 rollout on a node of its own, or 1 + 4 on one): one node holds
one. a is required; b and c, of priority 5, are not."""


def placement_json(instance: dict, tmp_path: Path, **options: object) -> dict:
    """`solver.place`'s JSON for the instance."""
    result = solver.place(fleet_file(instance, tmp_path), **options)  # type: ignore[arg-type]
    return json.loads(result.model_dump_json())


def test_a_required_job_keeps_its_room_from_jobs_of_more_priority(tmp_path: Path):
    result = placement_json(CROWDED, tmp_path)
    assert result["status"] == "optimal" and [entry["job"] for entry in result["placements"]] == ["a"]
    assert value_of(CATALOG, CROWDED, result) == best_value(CATALOG, CROWDED, estimates=True) == (1, 0, 2500)
    # The room words say a is required, and name no priority that would place b or c.
    assert [entry["reason"].split("; ", 1)[1] for entry in result["unplaced"]] == [
        ("a (required) leaves too little room for it, even with every other job taken out: no priority places it, "
         "more nodes would (solver.buy_nodes)")] * 2
    # Not required, a gives way to a job of priority 5 (which one, the tie-break picks).
    optional = {**CROWDED, "jobs": [{**job, "required": False} for job in CROWDED["jobs"]]}
    result = placement_json(optional, tmp_path)
    assert [entry["job"] for entry in result["placements"]] in (["b"], ["c"])
    assert best_value(CATALOG, optional, estimates=True)[0] == 5


def test_required_on_the_command_line_adds_to_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    path = fleet_file(CROWDED, tmp_path)
    assert main(["cluster", str(path), "--required", "b", "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    assert result["status"] == "infeasible" and result["placements"] == []
    assert {(entry["reason_code"], entry["reason"]) for entry in result["unplaced"]} == {(
        "jobs-do-not-fit-together", ("the required jobs (a, b) do not all fit the fleet together: at their fewest they "
                                     "take 10 GPUs, more than the fleet's 8; --buy names the nodes to add for them"))}
    assert solver.place(path, required=["b"]).status == "infeasible"  # the API's required= adds as the flag does
    assert solver.place(path, required=["a"]).placements[0].job == "a"


def test_an_infeasible_placement_names_the_required_jobs_and_notes_buy(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]):
    instance = {**CROWDED, "jobs": [{**job, "required": True} for job in CROWDED["jobs"]]}
    path = fleet_file(instance, tmp_path)
    assert main(["cluster", str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0] == "status: infeasible"
    assert captured.err == (f"solve cluster: note: to place the required jobs: solve cluster {path} --buy names the "
                            "fewest GPUs, then nodes, to add to the pools (and the jobs no number of nodes runs)\n")
    assert best_value(CATALOG, instance, estimates=True) is None


def test_a_required_job_that_fits_nowhere_leaves_no_placement(tmp_path: Path):
    too_long = {"name": "too-long", "model": "Qwen3-0.6B", "max_model_len": 9000000, "required": True}
    instance = {**CROWDED, "jobs": [{**CROWDED["jobs"][1], "required": False}, too_long]}
    result = placement_json(instance, tmp_path)
    assert (result["status"], result["placements"]) == ("infeasible", [])
    assert [(entry["job"], entry["reason_code"]) for entry in result["unplaced"]] == [
        ("too-long", "no-way-to-run"), ("b", "another-job-fits-nowhere")]
    assert result["unplaced"][1]["reason"] == ("the required job too-long fits nowhere, and a placement places every "
                                               "required job or none")
    # Not required, it is left out alone.
    result = placement_json({**instance, "jobs": [instance["jobs"][0], {**too_long, "required": False}]}, tmp_path)
    assert [entry["job"] for entry in result["placements"]] == ["b"]


@pytest.mark.parametrize("seed", range(8))
def test_random_fleets_with_required_jobs_reach_the_brute_force_optimum(seed: int, tmp_path: Path):
    rng = random.Random(6200 + seed)
    instance = random_instance(rng)
    for job in rng.sample(instance["jobs"], rng.randint(1, len(instance["jobs"]))):
        job["required"] = True
    reaches_the_optimum_then_widens(instance, tmp_path, minimize_nodes=False, estimates=True)


def test_greedy_places_the_required_jobs_first(tmp_path: Path):
    result = json.loads(greedy(load_fleet(fleet_file(CROWDED, tmp_path), CATALOG), CATALOG).model_dump_json())
    assert [entry["job"] for entry in result["placements"]] == ["a"]
    assert check_placements(CATALOG, CROWDED, result, estimates=True) == []


def test_buy_buys_for_the_jobs_the_file_marks_required(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    path = fleet_file(CROWDED, tmp_path)
    marked = buy(load_fleet(path, CATALOG), catalog=CATALOG)
    assert (marked.required, marked.gpus, [p.job for p in marked.placements]) == (("a",), 0, ["a"])
    both = solver.buy_nodes(path, required=["b"])  # the flag adds to the file's
    assert (both.required, both.gpus, sorted(p.job for p in both.placements)) == (("a", "b"), 8, ["a", "b"])
    assert main(["cluster", str(path), "--buy", "--required", "b"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        "status: optimal; to place the required jobs (a, b), buy 8 GPUs (1 node), proven the fewest (at their fewest "
        "they take 10 GPUs, 2 more than the fleet's 8; the")  # s81: with the figure behind the bound


@pytest.mark.parametrize(("value", "error"), [
    ("1", "line 2: job a, required: must be true or false, got 1"),
    ("maybe", "line 2: job a, required: must be true or false, got 'maybe'"),
])
def test_a_bad_required_value_is_refused_in_one_line(value: str, error: str, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]):
    path = tmp_path / "fleet.yaml"
    path.write_text("pools: [{name: a100, gpu: A100-80GB, nodes: 1, gpus_per_node: 8}]\n"
                    f"jobs: [{{name: a, model: 4B, max_model_len: 8192, required: {value}}}]\n", encoding="utf-8")
    assert main(["cluster", str(path)]) == 2
    assert capsys.readouterr() == ("", f"solve cluster: error: {path}: {error}\n")


def test_an_unknown_required_name_is_refused_with_the_jobs(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["cluster", str(fleet_file(CROWDED, tmp_path)), "--required", "zz"]) == 2
    assert capsys.readouterr() == ("", ("solve cluster: error: --required 'zz': no job of the fleet is named so; its "
                                        "jobs: a, b, c; or all, for every job\n"))
    with pytest.raises(QueryError, match="^required names 'zz': no job"):
        solver.place(fleet_file(CROWDED, tmp_path), required=["zz"])


def test_required_given_twice_is_told_both_in_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    # Session 93: "given twice: give it once" alone; a list's option given twice meant both lists
    assert main(["cluster", str(fleet_file(CROWDED, tmp_path)), "--buy", "--required", "b", "--required=c,b"]) == 2
    assert capsys.readouterr() == ("", ("usage: solve cluster [options] (--help lists them)\nsolve cluster: error: "
                                        "argument --required: given twice: give it once, both lists in one: "
                                        "--required b,c\n"))


def test_a_placement_with_required_jobs_names_them_to_buy_for_those_left_out(tmp_path: Path,
                                                                             capsys: pytest.CaptureFixture[str]):
    path = fleet_file(CROWDED, tmp_path)
    assert main(["cluster", str(path)]) == 1
    assert capsys.readouterr().err == (
        f"solve cluster: note: to place the jobs left out too: solve cluster {path} --buy --required b,c names the "
        "fewest GPUs, then nodes, to add to the pools (and the jobs no number of nodes runs)\n")


BOX = {"name": "box", "gpu": "RTX-4090", "nodes": 1, "gpus_per_node": 8, "host_ram_gb": 80}
"""A node of 8 RTX 4090s with 80 GiB of host memory: too little for Offload (Qwen3-8B's 183.0 GiB on 8 GPUs, 91.5 on
16), enough to load it without (71.2 GiB), so a model's states need many GPUs: on rank 0 alone, as Trinity 0.5.1 loads
an untied model (verl's rule). No release named, every rank loads it, 284.8 GiB without Offload on 8 GPUs."""


def test_more_nodes_reaching_a_length_is_told_of_buy_and_none_plainly(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]):
    # Qwen3-8B at 8192 tokens on Trinity 0.5.1: beyond 8 of the box's GPUs, trained on 16 (2 nodes); Qwen3-4B at
    # 9000000: on none.
    instance = {"pools": [BOX], "jobs": [{"name": "mid", "model": "Qwen3-8B", "max_model_len": 8192,
                                          "trinity_version": "0.5.1"},
                                         {"name": "huge", "model": "Qwen3-4B", "max_model_len": 9000000}]}
    path = fleet_file(instance, tmp_path)
    assert main(["cluster", str(path), "--json"]) == 1
    captured = capsys.readouterr()
    assert [(entry["job"], entry["pools"]) for entry in json.loads(captured.out)["unplaced"]] == [
        (name, [{"pool": "box", "reason_code": "no-plan", "plan_reason_code": "length-beyond-reach",
                 "more_nodes_reach": reach, "more_nodes_token_budget": budget,
                 "token_budget_auto_reach": False}])
        for name, reach, budget in (("mid", True, "default"), ("huge", False, None))]
    assert captured.err == ""  # --json: the notes are its more_nodes_reach
    assert main(["cluster", str(path)]) == 1
    assert capsys.readouterr().err == (
        "solve cluster: note: huge: no number of nodes trains its max_model_len in any pool it may use, so --buy "
        "would not place it either: a shorter max_model_len, or another GPU type, may\n"
        f"solve cluster: note: mid: no way to run on the pools' nodes as they are, but more nodes may give it a way to "
        f"run: solve cluster {path} --buy names the "
        "fewest GPUs, then nodes, to add to the pools (and the jobs no number of nodes "
        "runs)\n")
    purchase = buy(load_fleet(path, CATALOG), catalog=CATALOG)
    assert ([job.job for job in purchase.fits_nowhere], [p.job for p in purchase.placements], purchase.nodes) == (
        ["huge"], ["mid"], 1)


def test_a_required_job_keeps_its_room_where_host_memory_is_what_runs_short(tmp_path: Path):
    # Two Qwen3-8B jobs of 4 GPUs fit the node's 8 GPUs, but not its 200 GiB of host memory together (162.7 GiB or
    # more each at start-up: no release named, each of the 4 ranks loads the model, 4 x 30.51 GiB beside the reference
    # model's pinned shards): the GPUs alone would let b, of priority 5, take a's place; a is required.
    instance = {"pools": [{**ONE_NODE, "host_ram_gb": 200}], "jobs": [
        {"name": "a", "model": "Qwen3-8B", "max_model_len": 8192, "required": True},
        {"name": "b", "model": "Qwen3-8B", "max_model_len": 8192, "priority": 5}]}
    result = placement_json(instance, tmp_path, widen=False)
    assert (result["status"], [entry["job"] for entry in result["placements"]]) == ("optimal", ["a"])
    assert value_of(CATALOG, instance, result) == best_value(CATALOG, instance, estimates=True)
    assert result["unplaced"][0]["reason"].endswith("; a (required) leaves too little room for it, even with every "
                                                    "other job taken out: no priority places it, more nodes would "
                                                    "(solver.buy_nodes)")
