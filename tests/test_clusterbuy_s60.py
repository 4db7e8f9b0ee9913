"""`solve cluster --buy`: the fewest GPUs (then nodes) to add to the pools so that every job is placed, checked against
a brute force over the nodes added (tests/cluster_reference.py's placement search on each raised fleet, and its plan
checker on the placement the raised fleet gets); the jobs no number of nodes runs, named apart; its text, JSON and
refusals."""

from __future__ import annotations

import copy
import itertools
import json
import random
from pathlib import Path

import pytest
import yaml
from cluster_api import buy, place
from cluster_reference import best_value, check_placements, job_candidates, random_instance
from conftest import planner_answers_shared
from ortools.sat.python import cp_model

import solver
from solver import PurchaseResult
from solver.cli import main
from solver.cluster.search import StopOnInterrupt
from solver.render.cluster import _bought_for_estimates_words, _fewest_gpus_words
from solver.rules import COMMAND_OPTIONS
from solver.tables import load_catalog, load_fleet


@pytest.fixture(autouse=True)
def _planner_answers_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test here shares the planners' answers with the others of its process (`planner_answers_shared`)."""
    planner_answers_shared(monkeypatch)


CATALOG = load_catalog()

FOUR_JOBS = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8},
                       {"name": "h20", "gpu": "H20-96GB", "nodes": 1, "gpus_per_node": 8}],
             "jobs": [{"name": "a", "model": "Qwen3-8B", "max_model_len": 32768, "rollout_gpus": 4},
                      {"name": "b", "model": "Qwen3-8B", "max_model_len": 32768, "rollout_gpus": 4},
                      {"name": "c", "model": "Qwen3-14B", "max_model_len": 65536, "rollout_gpus": 4},
                      {"name": "d", "model": "Qwen3-4B", "max_model_len": 32768, "rollout_gpus": 2}]}
"""Two nodes of 8 that hold two of four jobs (6, 6, 8 and 4 GPUs at the fewest, 3 on an H20: no two on one node)."""

TOO_LONG = {"name": "too-long", "model": "Qwen3-0.6B", "max_model_len": 9000000, "rollout_gpus": 2}
"""A job no GPU type runs, on any number of nodes: 9000000 tokens are past every estimate."""


def fleet_file(instance: dict, tmp_path: Path) -> Path:
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(instance), encoding="utf-8")
    return path


def raised(instance: dict, added: tuple[int, ...]) -> dict:
    """The instance with `added` nodes in each pool."""
    more = copy.deepcopy(instance)
    for pool, extra in zip(more["pools"], added):
        pool["nodes"] += extra
    return more


def brute_force_least(instance: dict, most: tuple[int, ...]) -> tuple[int, int]:
    """The fewest GPUs, then nodes, added to the pools (at most `most` nodes each) with which the reference places
    every job (minimize nodes: every job or none), tried in that order."""
    tries = sorted(itertools.product(*(range(m + 1) for m in most)),
                   key=lambda added: (sum(n * p["gpus_per_node"] for n, p in zip(added, instance["pools"])),
                                      sum(added)))
    for added in tries:
        if best_value(CATALOG, raised(instance, added), minimize_nodes=True, estimates=True) is not None:
            return (sum(n * p["gpus_per_node"] for n, p in zip(added, instance["pools"])), sum(added))
    raise AssertionError("no purchase within the bounds tried")


def checked_purchase(instance: dict, tmp_path: Path) -> dict:
    """`buy`'s JSON for the instance, checked: optimal, its GPUs and nodes the brute force's least (over every
    purchase of as many GPUs or fewer), the pools it raises placing every job (the reference's plan checker on
    `place`'s placement there), and each job it names apart without a candidate in a pool of many nodes."""
    # A limit well past what a proof takes, so that a loaded machine's wall clock never stops it short of one.
    result = json.loads(buy(load_fleet(fleet_file(instance, tmp_path), CATALOG), catalog=CATALOG,
                            time_limit_s=60).model_dump_json())
    nowhere = {job["job"] for job in result["fits_nowhere"]}
    for job in (job for job in instance["jobs"] if job["name"] in nowhere):
        pools = [pool for pool in instance["pools"] if job.get("pool", pool["name"]) == pool["name"]]
        assert all(job_candidates(CATALOG, job, {**pool, "nodes": 64}, estimates=True) == [] for pool in pools)
    placeable = {**instance, "jobs": [job for job in instance["jobs"] if job["name"] not in nowhere]}
    if not placeable["jobs"]:
        assert (result["status"], result["gpus"]) == ("infeasible", None)
        return result
    assert result["status"] == "optimal"
    # Every purchase of as many GPUs or fewer: no more nodes in a pool than its nodes of that many GPUs.
    most = tuple(result["gpus"] // pool["gpus_per_node"] for pool in instance["pools"])
    assert brute_force_least(placeable, most) == (result["gpus"], result["nodes"])
    added = tuple(pool["nodes_bought"] for pool in result["pools"])
    assert [pool["nodes_after"] for pool in result["pools"]] == [
        pool["nodes"] + extra for pool, extra in zip(instance["pools"], added)]
    bought = raised(placeable, added)
    placed = place(load_fleet(fleet_file(bought, tmp_path), CATALOG), catalog=CATALOG, minimize="nodes",
                   time_limit_s=60)
    assert check_placements(CATALOG, bought, json.loads(placed.model_dump_json()), minimize_nodes=True,
                            estimates=True) == []
    return result


def test_four_jobs_on_two_nodes_buy_two_nodes(tmp_path: Path):
    result = checked_purchase(FOUR_JOBS, tmp_path)
    assert (result["gpus"], result["nodes"], result["bound"]) == (16, 2, 16)
    assert sum(pool["gpus_bought"] for pool in result["pools"]) == 16


def test_a_fleet_that_holds_every_job_buys_nothing(tmp_path: Path):
    instance = {**FOUR_JOBS, "jobs": FOUR_JOBS["jobs"][:2]}
    result = checked_purchase(instance, tmp_path)
    assert (result["gpus"], result["nodes"], [pool["nodes_bought"] for pool in result["pools"]]) == (0, 0, [0, 0])


def test_the_gpus_weigh_a_node_not_its_count(tmp_path: Path):
    # Two jobs of 6 GPUs at the fewest beside one node of 8 that holds one: a node of 8 GPUs is bought, not two of
    # 4, and not one of 16 (more GPUs): nodes of 4 hold no job of 6 GPUs on one node ...
    instance = {"pools": [{"name": "big", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 16},
                          {"name": "eight", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}],
                "jobs": FOUR_JOBS["jobs"][:1] + FOUR_JOBS["jobs"][:1]}
    instance["jobs"] = [{**job, "name": name} for job, name in zip(instance["jobs"], ("a", "b"))]
    instance["jobs"].append({**FOUR_JOBS["jobs"][0], "name": "c"})
    instance["jobs"].append({**FOUR_JOBS["jobs"][0], "name": "d"})
    result = checked_purchase(instance, tmp_path)
    assert [(pool["pool"], pool["nodes_bought"]) for pool in result["pools"]] == [("big", 0), ("eight", 1)]


@pytest.mark.parametrize("seed", range(12))
def test_random_fleets_buy_the_brute_force_least(seed: int, tmp_path: Path):
    checked_purchase(random_instance(random.Random(6000 + seed)), tmp_path)


def test_a_job_no_node_runs_is_named_apart_not_bought_for(tmp_path: Path):
    instance = {**FOUR_JOBS, "jobs": [*FOUR_JOBS["jobs"], TOO_LONG]}
    result = checked_purchase(instance, tmp_path)
    assert (result["gpus"], result["nodes"]) == (16, 2)  # as without it
    [nowhere] = result["fits_nowhere"]
    assert (nowhere["job"], nowhere["reason_code"]) == ("too-long", "no-way-to-run")
    assert "9000000 tokens is beyond what the tables and the memory model's estimates allow" in nowhere["reason"]


def test_only_jobs_no_node_runs_is_infeasible(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    instance = {"pools": FOUR_JOBS["pools"], "jobs": [TOO_LONG]}
    checked_purchase(instance, tmp_path)
    assert main(["cluster", str(fleet_file(instance, tmp_path)), "--buy"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("status: infeasible: no job has a way to run on any pool's nodes, so nothing to buy places")
    assert "jobs no purchase places: 1 of 1" in out


NODES_OF_3 = {"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 3}
"""Nodes of 3 GPUs, on which Qwen3-0.6B at 16384 tokens beside 3 rollout GPUs takes 3 nodes with the tables' own GPU
counts (6 trainer GPUs on two, its rollout on the third), or 2 with a count they do not measure (3 on one, the rollout
on the next), which `job_options` weighs only where the pool's nodes hold no way of the tables' counts."""

SMALL_BESIDE_3 = {"name": "x", "model": "Qwen3-0.6B", "max_model_len": 16384, "rollout_gpus": 3}


def test_a_later_evidence_tier_on_fewer_nodes_is_bought_where_the_tables_counts_need_more(tmp_path: Path):
    # One node: the tables' counts need 2 more, the other counts 1 more.
    result = checked_purchase({"pools": [NODES_OF_3], "jobs": [SMALL_BESIDE_3]}, tmp_path)
    assert (result["gpus"], result["nodes"]) == (3, 1)


def test_a_later_evidence_tier_is_not_bought_for_where_the_tables_counts_fit(tmp_path: Path):
    # Three nodes hold x on the tables' counts, so a placement takes all three for it (not 2 with a count they do not
    # measure): y, 3 GPUs on one node, needs a fourth.
    instance = {"pools": [{**NODES_OF_3, "nodes": 3}], "jobs": [
        SMALL_BESIDE_3, {"name": "y", "model": "Qwen3-0.6B", "max_model_len": 16384, "rollout_gpus": 2}]}
    result = checked_purchase(instance, tmp_path)
    assert (result["gpus"], result["nodes"]) == (3, 1)


def test_text_output_and_exit_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    path = fleet_file(FOUR_JOBS, tmp_path)
    assert main(["cluster", str(path), "--buy"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[:2] == [  # s81: with the figure behind the bound
        ("status: optimal; to place every job, buy 16 GPUs (2 nodes), proven the fewest (at their fewest they take 23 "
         "GPUs, 7 more than the fleet's 16; the other 9 bought"),
        "are for the pools they may use and their layouts (GPUs and host memory) to pack into the nodes)"]
    assert "what to buy" in out and "nodes then" in out
    assert main(["cluster", str(path)]) == 1
    assert capsys.readouterr().err == (f"solve cluster: note: to place every job: solve cluster {path} --buy names the "
                                       "fewest GPUs, then nodes, to add to the pools (and the jobs no number of "
                                       "nodes runs)\n")


def test_a_placement_of_every_job_notes_no_buy(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["cluster", str(fleet_file({**FOUR_JOBS, "jobs": FOUR_JOBS["jobs"][:2]}, tmp_path))]) == 0
    assert "--buy" not in capsys.readouterr().err


def test_json_fields(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["cluster", str(fleet_file(FOUR_JOBS, tmp_path)), "--buy", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result) == {"status", "gpus", "nodes", "bound", "fewest_gpus", "fleet_gpus", "pools", "fits_nowhere",
                           "required", "placements",
                           "left_out", "placement_proven", "host_rounded", "undecided_ways", "ways_cut_short",
                           "ways_time_limit_s", "solve_best_unasked", "searched", "wall_clock_stopped",
                           "memory_model_source", "interrupted", "schema_version", "rft_solver_version",
                           "gpus_bought_for_estimates"}
    assert (result["status"], result["gpus"], result["nodes"], result["bound"]) == ("optimal", 16, 2, 16)
    assert result["gpus_bought_for_estimates"] == 0  # s91: the tables' plans alone
    assert (result["fewest_gpus"], result["fleet_gpus"]) == (23, 16)  # s81
    assert [set(pool) for pool in result["pools"]] == [
        {"pool", "gpu", "nodes_bought", "gpus_bought", "nodes_after", "down", "nodes_used", "gpus_used", "host_ram_gb",
         "fullest_node_host_gb"}] * 2
    assert (result["wall_clock_stopped"], result["interrupted"], result["fits_nowhere"]) == ([], False, [])


@pytest.mark.parametrize(("flags", "words"), [
    (["--minimize", "nodes"], ("--buy with --minimize nodes: --buy places every job on the pools with the nodes it "
                               "adds; give one of them")),
    (["--emit-dir", "out"], ("--buy with --emit-dir: --buy writes no configs; add the nodes it names to the file and "
                             "run solve cluster --emit-dir on it")),
])
def test_options_of_a_placement_beside_buy_are_refused(flags: list[str], words: str, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]):
    path = fleet_file(FOUR_JOBS, tmp_path)
    assert main(["cluster", str(path), "--buy", *flags]) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", f"solve cluster: error: {words}\n")
    assert not (Path.cwd() / "out").exists()


ORIGINAL_SOLVE = StopOnInterrupt.solve
"""The search's own solve, before a test patches it."""


def test_out_of_time_before_a_purchase_is_unknown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]):
    def out_of_work(self: StopOnInterrupt, model: cp_model.CpModel, callback: object) -> cp_model.CpSolverStatus:
        self.solver.parameters.max_deterministic_time = 0.0
        return ORIGINAL_SOLVE(self, model, callback)

    monkeypatch.setattr(StopOnInterrupt, "solve", out_of_work)
    assert main(["cluster", str(fleet_file(FOUR_JOBS, tmp_path)), "--buy"]) == 1
    assert capsys.readouterr().out == ("status: unknown: time ran out before the search found a purchase that places "
                                       "every job (raise --time-limit)\n")
    assert main(["cluster", str(fleet_file(FOUR_JOBS, tmp_path)), "--buy", "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    assert (result["status"], result["gpus"], result["nodes"], result["bound"], result["pools"]) == (
        "unknown", None, None, None, [])


def test_the_nodes_stage_cut_short_leaves_the_purchase_feasible(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]):
    solves: list[int] = []

    def cut_second_stage(self: StopOnInterrupt, model: cp_model.CpModel,
                         callback: object) -> cp_model.CpSolverStatus:
        solves.append(1)
        if len(solves) == 2:  # the fewest nodes, after the fewest GPUs
            self.solver.parameters.max_deterministic_time = 0.0
        return ORIGINAL_SOLVE(self, model, callback)

    monkeypatch.setattr(StopOnInterrupt, "solve", cut_second_stage)
    assert main(["cluster", str(fleet_file(FOUR_JOBS, tmp_path)), "--buy"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == ("status: feasible; to place every job, buy 16 GPUs (2 nodes), proven bound 16 GPUs (at their "
                        "fewest they take 23 GPUs, 7 more than the fleet's 16; the other 9")  # s81: its figure
    assert ("placement not proven the best the purchase allows (the other jobs' priority, length, cost): the time "
            "limit stopped it (raise --time-limit)") in lines
    # The placement's length and cost on the purchase, but no tie-break after a stage unproven; then solve cluster's
    # own length, cost and tie-break on the pools as bought (every job required there: no priority stage).
    assert len(solves) == 7


def test_the_status_says_how_many_gpus_bought_run_estimated_plans(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]):
    # s91: Qwen3-14B at 122880 tokens runs on 8 A100s only on the memory model's extrapolated estimate, which the
    # node bought is for (the 4B job takes the pool's own node): the status line, not the evidence column alone, says
    # so, and --json counts those GPUs (derived, so JSON that says otherwise is refused when read back).
    path = fleet_file({"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}],
                       "jobs": [{"name": "big", "model": "Qwen3-14B", "max_model_len": 122880},
                                {"name": "small", "model": "Qwen3-4B", "max_model_len": 8192}]}, tmp_path)
    assert main(["cluster", str(path), "--buy", "--json"]) == 0
    printed = capsys.readouterr().out
    result = json.loads(printed)
    assert (result["gpus"], result["gpus_bought_for_estimates"]) == (8, 8)
    with pytest.raises(ValueError, match="gpus_bought_for_estimates is 3, but its pools and placements say 8"):
        PurchaseResult.model_validate({**result, "gpus_bought_for_estimates": 3})
    text = solver.cluster_text(PurchaseResult.model_validate_json(printed), path, option_names=COMMAND_OPTIONS)
    assert " ".join(text.split("\nwhat to buy")[0].splitlines()).endswith(
        "; the 8 GPUs bought run the memory model's estimated plans, not the tables': big (extrapolated); --no-estimate "
        "buys for the tables' plans alone")
    # smalls91b: the same placement bought onto a pool of no nodes, the small job's node bought too, for the tables'
    # plan: 8 of the 16 GPUs bought run the estimate (the part of a purchase, which no test said).
    bought = {**result["pools"][0], "nodes_bought": 2, "gpus_bought": 16}
    part = PurchaseResult.model_validate({**result, "gpus": 16, "nodes": 2, "fleet_gpus": 0, "pools": [bought]})
    none_yet = {**yaml.safe_load(path.read_text(encoding="utf-8")),
                "pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 0, "gpus_per_node": 8}]}
    text = solver.cluster_text(part, fleet_file(none_yet, tmp_path), option_names=COMMAND_OPTIONS)
    assert part.gpus_bought_for_estimates == 8
    assert " ".join(text.split("\nwhat to buy")[0].splitlines()).endswith(
        "; 8 of the 16 GPUs bought run the memory model's estimated plans, not the tables': big (extrapolated); "
        "--no-estimate buys for the tables' plans alone")
    # smalls92: one GPU bought for the estimate (the big job's placement there cut to one GPU, unvalidated), alone or
    # of several: "runs", singular
    one = [placement.model_copy(update={"gpu_indexes": (0,)}) if placement.job == "big" else placement
           for placement in part.placements]
    words = [_bought_for_estimates_words(part.model_copy(update={"placements": one, "gpus": gpus}), COMMAND_OPTIONS)
             for gpus in (16, 1)]
    estimated = "the memory model's estimated plans, not the tables': big (extrapolated); --no-estimate buys"
    assert words == [f"; 1 of the 16 GPUs bought runs {estimated} for the tables' plans alone",
                     f"; the 1 GPU bought runs {estimated} for the tables' plans alone"]


@pytest.mark.parametrize(("fewest", "fleet", "gpus", "words"), [
    (1, 0, 2, " (at their fewest they take 1 GPU, 1 more than the fleet's 0; the other 1 bought is for the pools"),
    (1, 1, 1, " (at their fewest they take 1 of the fleet's 1 GPU; the 1 bought is for the pools"),
    (3, 2, 4, " (at their fewest they take 3 GPUs, 1 more than the fleet's 2; the other 3 bought are for the pools")])
def test_a_count_of_one_gpu_is_worded_singular(fewest: int, fleet: int, gpus: int, words: str):
    # fewest91: a Qwen3-0.6B job at 8192 (1 GPU at its fewest) bought onto a pool of no nodes of 2 H100s said "they
    # take 1 GPUs" and "the other 1 bought are" (the figures as that purchase gives them, the others beside them).
    result = PurchaseResult.model_construct(fewest_gpus=fewest, fleet_gpus=fleet, gpus=gpus, pools=[])
    assert _fewest_gpus_words(result).startswith(words)
