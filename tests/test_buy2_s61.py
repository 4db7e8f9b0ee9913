"""`solve cluster --buy` (s61): only some jobs required (`--required`, `buy_nodes(required=...)`), the others placed
where the nodes bought leave room; the placement on the bought fleet printed and in JSON, checked by the plan checker
and against a brute force (tests/cluster_reference.py) over the nodes added; refusals; the --buy note for jobs more
nodes may give a way to run; `place`'s argument checks in their order again."""

from __future__ import annotations

import itertools
import json
import random
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from cluster_api import buy, place
from cluster_reference import _cost_int, _gain, best_value, check_placements, random_instance
from conftest import planner_answers_shared
from test_clusterbuy_s60 import CATALOG, FOUR_JOBS, TOO_LONG, brute_force_least, fleet_file, raised
from test_minnodes_s64 import _questions_per_second

import solver
from solver.cli import main
from solver.tables import WAYS_QUESTIONS_PER_SECOND, QueryError, load_fleet


@pytest.fixture(autouse=True)
def _planner_answers_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test here shares the planners' answers with the others of its process (`planner_answers_shared`)."""
    planner_answers_shared(monkeypatch)


def best_with_required(instance: dict, required: set[str]) -> tuple[int, int, int] | None:
    """The reference's best (priority of the jobs not required, length gained, cost) of a placement that places every
    `required` job, None where none does: each required job weighs more than all the others together."""
    heavy = 1 + sum(job.get("priority", 1) for job in instance["jobs"] if job["name"] not in required)
    weighed = {**instance, "jobs": [{**job, "priority": heavy} if job["name"] in required else job
                                    for job in instance["jobs"]]}
    value = best_value(CATALOG, weighed, estimates=True)
    if value is None or value[0] < heavy * len(required):
        return None
    return (value[0] - heavy * len(required), value[1], value[2])


def brute_force_required(instance: dict, required: set[str], most: tuple[int, ...]) -> tuple[int, int, tuple]:
    """The fewest GPUs, then nodes, added to the pools (at most `most` nodes each) with which the reference places
    every `required` job, and the best placement's (priority of the others, length, cost) over those purchases."""
    def gpus(added: tuple[int, ...]) -> int:
        return sum(n * pool["gpus_per_node"] for n, pool in zip(added, instance["pools"]))

    tries = sorted(itertools.product(*(range(m + 1) for m in most)), key=lambda added: (gpus(added), sum(added)))
    least, best = None, None
    for added in tries:
        if least is not None and (gpus(added), sum(added)) != least:
            break
        value = best_with_required(raised(instance, added), required)
        if value is not None:
            least = (gpus(added), sum(added))
            best = value if best is None or (-value[0], -value[1], value[2]) < (-best[0], -best[1], best[2]) else best
    assert least is not None and best is not None, "no purchase within the bounds tried"
    return (*least, best)


def placement_value(instance: dict, result: dict) -> tuple[int, int, int]:
    """(priority of the jobs not required, length gained, cost) of the purchase's placement, as the reference counts."""
    jobs = {job["name"]: job for job in instance["jobs"]}
    placed = [(jobs[entry["job"]], entry["plan"]) for entry in result["placements"]]
    return (sum(job.get("priority", 1) for job, _ in placed if job["name"] not in result["required"]),
            sum(_gain(job, plan["max_model_len"]) for job, plan in placed),
            sum(_cost_int(plan) for _, plan in placed))


def checked_required_purchase(instance: dict, required: list[str] | None, tmp_path: Path) -> dict:
    """`buy`'s JSON for the instance with `required` (None: every job), checked: optimal, the brute force's fewest GPUs
    and nodes and its best placement on them, and the placement valid on the pools with the nodes bought (the plan
    checker), every job placed, left out, or fitting nowhere, once."""
    marked = {**instance, "jobs": [{**job, "required": True} if required and job["name"] in required else job
                                   for job in instance["jobs"]]}  # the fleet file's field
    with pytest.MonkeyPatch.context() as patch:  # the ways cut by their count alone, however busy the machine
        _questions_per_second(patch, WAYS_QUESTIONS_PER_SECOND)
        result = json.loads(buy(load_fleet(fleet_file(marked, tmp_path), CATALOG), catalog=CATALOG).model_dump_json())
        # solve cluster on the file with the nodes bought (less the jobs that fit nowhere) places the jobs as the
        # purchase's placement does
        nowhere = {job["job"] for job in result["fits_nowhere"]}
        as_bought = raised({**marked, "jobs": [job for job in marked["jobs"] if job["name"] not in nowhere]},
                           tuple(pool["nodes_bought"] for pool in result["pools"]))
        placed = (place(load_fleet(fleet_file(as_bought, tmp_path), CATALOG), catalog=CATALOG) if result["pools"]
                  else None)
    assert placed is None or result["placements"] == json.loads(placed.model_dump_json())["placements"]
    names = [job["name"] for job in instance["jobs"]]
    assert result["required"] == (names if required is None else [name for name in names if name in required])
    placeable = {**instance, "jobs": [job for job in instance["jobs"] if job["name"] not in nowhere]}
    if not placeable["jobs"]:
        assert (result["status"], result["placements"]) == ("infeasible", [])
        return result
    assert result["status"] == "optimal" and result["placement_proven"]
    must = set(result["required"]) - nowhere
    most = tuple(result["gpus"] // pool["gpus_per_node"] for pool in instance["pools"])
    gpus, nodes, best = brute_force_required(placeable, must, most)
    assert (result["gpus"], result["nodes"]) == (gpus, nodes)
    assert placement_value(placeable, result) == best
    bought = raised(placeable, tuple(pool["nodes_bought"] for pool in result["pools"]))
    placed = {entry["job"] for entry in result["placements"]}
    assert must <= placed and set(result["left_out"]) == {job["name"] for job in placeable["jobs"]} - placed
    shown = {"placements": result["placements"], "unplaced": [{"job": name} for name in result["left_out"]],
             "pools": [{"pool": pool["pool"], "nodes": pool["nodes_after"],
                        "gpus": pool["nodes_after"] * spec["gpus_per_node"], "down": pool["down"],
                        "nodes_used": pool["nodes_used"], "gpus_used": pool["gpus_used"],
                        "host_ram_gb": pool["host_ram_gb"], "fullest_node_host_gb": pool["fullest_node_host_gb"]}
                       for pool, spec in zip(result["pools"], instance["pools"])]}
    assert check_placements(CATALOG, bought, shown, estimates=True, ignore_unused_gpus=True) == []
    return result


def test_every_job_required_is_the_purchase_of_before_with_its_placement(tmp_path: Path):
    result = checked_required_purchase(FOUR_JOBS, None, tmp_path)
    assert (result["gpus"], result["nodes"], result["left_out"]) == (16, 2, [])
    assert sorted(entry["job"] for entry in result["placements"]) == ["a", "b", "c", "d"]
    assert brute_force_least(FOUR_JOBS, (2, 2)) == (16, 2)


def test_two_required_jobs_buy_nothing_and_leave_the_others_out(tmp_path: Path):
    # a and b fit the two nodes as they are (6 GPUs each, no two on a node): c and d, not required, are left out.
    result = checked_required_purchase(FOUR_JOBS, ["a", "b"], tmp_path)
    assert (result["gpus"], result["nodes"], sorted(result["left_out"])) == (0, 0, ["c", "d"])


def test_three_required_jobs_buy_one_node_and_place_the_fourth_where_room_is_left(tmp_path: Path):
    result = checked_required_purchase(FOUR_JOBS, ["a", "c", "d"], tmp_path)
    assert (result["gpus"], result["nodes"], result["left_out"]) == (8, 1, ["b"])


def test_a_required_job_no_node_runs_is_named_apart(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    instance = {**FOUR_JOBS, "jobs": [*FOUR_JOBS["jobs"], TOO_LONG]}
    result = checked_required_purchase(instance, ["a", "too-long"], tmp_path)
    assert [job["job"] for job in result["fits_nowhere"]] == ["too-long"]
    path = fleet_file(instance, tmp_path)
    assert main(["cluster", str(path), "--buy", "--required", "a,too-long"]) == 1  # a required job is not placed
    assert capsys.readouterr().out.startswith("status: optimal; nothing to buy: the pools as they are place the "
                                              "required job (a); no number of nodes places the required job "
                                              "too-long (below)\n")
    assert main(["cluster", str(path), "--buy", "--required", "a"]) == 0  # too-long is not required
    capsys.readouterr()
    # The only required job no number of nodes runs: the status does not say the pools place it.
    assert main(["cluster", str(path), "--buy", "--required", "too-long"]) == 1
    assert capsys.readouterr().out.startswith("status: optimal; nothing to buy: no number of nodes places the "
                                              "required job too-long (below)\n")


@pytest.mark.parametrize("seed", range(10))
def test_random_fleets_with_some_jobs_required_buy_the_brute_force_least(seed: int, tmp_path: Path):
    rng = random.Random(6100 + seed)
    instance = random_instance(rng)
    names = [job["name"] for job in instance["jobs"]]
    checked_required_purchase(instance, rng.sample(names, rng.randint(1, len(names))), tmp_path)


def test_text_shows_the_placement_with_the_nodes_bought(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["cluster", str(fleet_file(FOUR_JOBS, tmp_path)), "--buy", "--required", "a,c, d"]) == 0
    lines = capsys.readouterr().out.splitlines()
    # s81: the status says the figure behind its bound, and the left-out line that --required all buys for every job.
    assert lines[:2] == [
        ("status: optimal; to place the required jobs (a, c, d), buy 8 GPUs (1 node), proven the fewest (at their "
         "fewest they take 17 GPUs, 1 more than the fleet's 16;"),
        ("the other 7 bought are for the pools they may use and their layouts (GPUs and host memory) to pack into the "
         "nodes)")]
    assert lines[9] == ("the placement with them: set each pool's nodes: to its 'nodes then' and run solve cluster "
                        "(--emit-dir writes the configs)")
    titles = [line for line in lines if line.startswith("pool ")]
    assert len(titles) == 2 and titles[1].startswith("pool h20: 2 x 8 H20-96GB; 2 nodes")
    assert sum(f"│ {job} " in line for line in lines for job in "acd") == 3
    assert lines[-1] == ("left out (not required): b: no room for it beside the required jobs on the pools with the "
                         "nodes bought; --required all buys for every job")


def test_nothing_to_buy_still_shows_the_placement(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["cluster", str(fleet_file(FOUR_JOBS, tmp_path)), "--buy", "--required", "a"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == ["status: optimal; nothing to buy: the pools as they are place the required job (a)",
                         "the placement (solve cluster --emit-dir writes the configs)"]
    assert "what to buy" not in lines


def test_json_fields(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["cluster", str(fleet_file(FOUR_JOBS, tmp_path)), "--buy", "--required", "a,c,d", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result) == {"status", "gpus", "nodes", "bound", "fewest_gpus", "fleet_gpus", "pools", "fits_nowhere",
                           "required", "placements",
                           "left_out", "placement_proven", "host_rounded", "undecided_ways", "ways_cut_short",
                           "ways_time_limit_s", "solve_best_unasked", "searched", "wall_clock_stopped",
                           "memory_model_source", "interrupted", "schema_version", "rft_solver_version",
                           "gpus_bought_for_estimates"}
    assert (result["required"], result["left_out"], result["placement_proven"]) == (["a", "c", "d"], ["b"], True)
    assert [set(pool) for pool in result["pools"]] == [
        {"pool", "gpu", "nodes_bought", "gpus_bought", "nodes_after", "down", "nodes_used", "gpus_used", "host_ram_gb",
         "fullest_node_host_gb"}] * 2
    assert sorted(entry["job"] for entry in result["placements"]) == ["a", "c", "d"]


@pytest.mark.parametrize(("flags", "error"), [
    (["--required", "a,zz"], ("--required 'zz': no job of the fleet is named so; its jobs: a, b, c, d; or all, for "
                              "every job")),
    (["--required", "a,"], ("argument --required: an empty name in 'a,': give a job's name, or several separated by "
                            "commas (math-4b,code-8b)")),
])
def test_bad_required_names_are_refused(flags: list[str], error: str, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]):
    assert main(["cluster", str(fleet_file(FOUR_JOBS, tmp_path)), "--buy", *flags]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.splitlines()[-1] == f"solve cluster: error: {error}"
    assert "Traceback" not in captured.err


@pytest.mark.parametrize(("required", "error"), [
    ([], "required names no job: name one or more of the fleet's jobs (a, b, c, d)"),
    ("a", "required must be a list, a tuple or None, got 'a' (a str: pass ['a'], the names in a list)"),
    ("a, b", "required must be a list, a tuple or None, got 'a, b' (a str: pass ['a', 'b'], the names in a list)"),
    (["A"], ("required names 'A': no job of the fleet is named so; did you mean a? its jobs: a, b, c, d; or all, for "
             "every job")),
])
def test_the_api_refuses_bad_required(required: object, error: str, tmp_path: Path):
    with pytest.raises(QueryError) as raised_error:
        solver.buy_nodes(fleet_file(FOUR_JOBS, tmp_path), required=required)  # type: ignore[arg-type]
    assert str(raised_error.value) == error


@pytest.mark.parametrize(("options", "named"), [
    ({"workers": "2", "widen": "no"}, "workers must be a whole number"),  # the types first, in their order
    ({"minimize": "gpus", "margin": -1.0}, "margin is a fraction"),  # the margin before minimize
])
def test_place_checks_its_arguments_in_their_order(options: dict, named: str, tmp_path: Path):
    with pytest.raises(QueryError) as raised_error:
        solver.place(fleet_file(FOUR_JOBS, tmp_path), **options)
    assert str(raised_error.value).startswith(named)


ROLLOUT_TAKES_THE_POOL = {"name": "roll", "model": "Qwen3-0.6B", "max_model_len": 8192, "rollout_gpus": 8}
"""On one node of 8, a rollout of 8 GPUs leaves no trainer GPU: a second node gives it one."""
NO_LAYOUT_BESIDE_ROLLOUT = {"name": "huge", "model": "Qwen3-32B", "max_model_len": 131072, "rollout_gpus": 6}
"""On one node of 8, a trainer of 8 GPUs at the fewest has no layout beside 6 rollout GPUs, nor does --token-budget
auto on the 2 they leave (beside 4, it trains on 4: s84): more nodes give one."""


def test_a_job_more_nodes_may_give_a_way_to_run_is_told_of_buy(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    instance = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}],
                "jobs": [ROLLOUT_TAKES_THE_POOL, NO_LAYOUT_BESIDE_ROLLOUT, TOO_LONG]}
    path = fleet_file(instance, tmp_path)
    assert main(["cluster", str(path)]) == 1
    assert capsys.readouterr().err == (
        "solve cluster: note: too-long: no number of nodes trains its max_model_len in any pool it may use, so --buy "
        "would not place it either: a shorter max_model_len, or another GPU type, may\n"
        "solve cluster: note: roll, huge: no way to run on the pools' nodes as they are, but more nodes may give them "
        f"a way to run: solve cluster {path} --buy names the "
        "fewest GPUs, then nodes, to add to the pools (and the jobs no number "
        "of nodes runs)\n")
    result = checked_required_purchase(instance, None, tmp_path)  # --buy places both; too-long, no number of nodes
    assert ([job["job"] for job in result["fits_nowhere"]], sorted(entry["job"] for entry in result["placements"])) == (
        ["too-long"], ["huge", "roll"])
    alone = fleet_file({**instance, "jobs": [TOO_LONG]}, tmp_path)
    assert main(["cluster", str(alone)]) == 1
    assert "--buy names" not in capsys.readouterr().err  # no number of nodes runs it: no --buy note


def test_room_and_a_way_to_run_are_named_in_one_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    instance = {**FOUR_JOBS, "jobs": [*FOUR_JOBS["jobs"], {**ROLLOUT_TAKES_THE_POOL, "pool": "a100"}]}
    path = fleet_file(instance, tmp_path)
    assert main(["cluster", str(path)]) == 1
    assert capsys.readouterr().err == (
        "solve cluster: note: to place every job (more nodes may give roll a way to run too): solve cluster "
        f"{path} --buy names the fewest GPUs, then nodes, to add to the pools (and the jobs no number of nodes runs)\n")


def test_a_reason_under_buy_names_no_node_count_the_pool_lacks(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    # Qwen3-0.6B with 8 rollout GPUs on one node of 8 H100s with 16 GiB of host memory: beside its rollout a trainer
    # takes whole nodes, whose ranks load more than 16 GiB however many there are. --buy asks on the pool raised to
    # 10 nodes, a count the file never gave: the reason said "its 10 nodes" (persona88b).
    instance = {"pools": [{"name": "a", "gpu": "H100-80GB", "nodes": 1, "gpus_per_node": 8, "host_ram_gb": 16}],
                "jobs": [{"name": "j", "model": "Qwen3-0.6B", "max_model_len": 8192, "rollout_gpus": 8}]}
    assert main(["cluster", str(fleet_file(instance, tmp_path)), "--buy", "--json"]) == 1
    (nowhere,) = json.loads(capsys.readouterr().out)["fits_nowhere"]
    assert nowhere["reason"].startswith("a: with 8 rollout GPUs, no trainer GPU count that trains it (1 at the fewest) "
                                        "has a layout on nodes of 8 GPUs, however many (8 would, with Env, but it "
                                        "needs 20.8 GiB of host memory per node while the model loads")


def test_ways_cut_short_on_the_pools_as_bought_keep_the_purchase_placement(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # The jobs' ways on the pools as bought are asked within the ways' limit, which a busy machine's wall clock may
    # pass by then: the placement there had no ways, placed nothing and said so proven (persona88b, on 2 busy cores).
    buying = sys.modules["solver.cluster.buy"]
    asked = buying.fleet_options

    def cut_short(planner, fleet, limit=None, *args, **kwargs):  # type: ignore[no-untyped-def]
        ways = asked(planner, fleet, limit, *args, **kwargs)
        return replace(ways, options=[], cut_short=tuple(range(len(fleet.jobs))), wall_clock_cut=True)

    monkeypatch.setattr(buying, "fleet_options", cut_short)
    # Only a job no number of nodes runs is required, so a placement of nothing was a proven best of the others.
    instance = {**FOUR_JOBS, "jobs": [*FOUR_JOBS["jobs"], {**TOO_LONG, "required": True}]}
    result = buy(load_fleet(fleet_file(instance, tmp_path), CATALOG), catalog=CATALOG)
    assert (result.gpus, sorted(placement.job for placement in result.placements)) == (0, ["a", "b"])
    assert (result.placement_proven, result.wall_clock_stopped) == (False, ("ways",))


@pytest.mark.parametrize("nodes", [0, 1, 2])
def test_no_buy_note_where_the_pools_host_memory_stops_the_job_on_any_nodes(nodes: int, tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    # Qwen3-0.6B with 8 rollout GPUs on H100 nodes of 8 with 16 GiB of host memory (above): a trainer beside the rollout
    # takes whole nodes, whose ranks load more than 16 GiB. The pool with no nodes, the rollout taking its one, and no
    # layout beside it on two each said more nodes may give the job a way, and --buy then placed nothing (leftovers91).
    instance = {"pools": [{"name": "a", "gpu": "H100-80GB", "nodes": nodes, "gpus_per_node": 8, "host_ram_gb": 16}],
                "jobs": [{"name": "j", "model": "Qwen3-0.6B", "max_model_len": 8192, "rollout_gpus": 8}]}
    assert main(["cluster", str(fleet_file(instance, tmp_path))]) == 1
    assert capsys.readouterr().err == (
        "solve cluster: note: j: no number of nodes trains its max_model_len in any pool it may use, so --buy would "
        "not place it either: a shorter max_model_len, or another GPU type, may\n")
