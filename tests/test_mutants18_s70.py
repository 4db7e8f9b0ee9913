"""Tests that kill hand-made mutants of session 70's `solve cluster --current` (keepplaced), widening onto idle
nodes (clusteridle) and their neighbours: a running job is kept only by the way it runs now, every field of it."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_cluster import CATALOG, fleet_of
from test_clusteridle_s70 import A100_NODES, DUO

import solver
from solver.cluster import widen
from solver.cluster.options import Planner, job_options
from solver.cluster.widen import widen_jobs
from solver.results import unchecked_host_need
from solver.tables import load_weights
from solver.tables.model_config import load_model_config
from solver.trinity import trinity_config_problems
from solver.trinity.keys import CRITIC_SP_KEY

INTERNLM2 = Path(__file__).parent / "data" / "hf-configs" / "internlm2-7b.json"

Cli = Callable[..., tuple[int, str, str]]

ONE_JOB = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 2, "gpus_per_node": 8}],
           "jobs": [{"name": "p06-a", "model": "Qwen3-0.6B", "max_model_len": 8192, "rollout_gpus": 1}]}
"""A job whose placement, alone on a pool of two nodes, is node 0, GPUs 0-6 (6 trainer GPUs, widened or not)."""

RUNS_ON_NODE_1 = {"job": "p06-a", "pool": "a100", "nodes": [1], "gpu_indexes": [0, 1, 2, 3, 4, 5, 6],
                  "trainer_gpus": 6, "rollout_gpus": 1, "plan": {"max_model_len": 8192, "sp": 1, "offload": False}}
"""The job as it would run on node 1: its own way, on the node the fresh placement leaves idle."""


def _placed(cli: Cli, tmp_path: Path, running: dict[str, Any]) -> list[tuple[list[int], list[int], str]]:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(yaml.safe_dump(ONE_JOB), encoding="utf-8")
    current = tmp_path / "now.json"
    current.write_text(json.dumps({"schema_version": 1, "placements": [running]}), encoding="utf-8")
    status, out, err = cli("cluster", str(fleet), "--json", "--current", str(current))
    assert (status, err) == (0, "")
    return [(p["nodes"], p["gpu_indexes"], p["current"]) for p in json.loads(out)["placements"]]


def test_a_job_running_as_its_own_way_stays_on_the_node_it_runs_on(cli: Cli, tmp_path: Path):
    assert _placed(cli, tmp_path, RUNS_ON_NODE_1) == [([1], [0, 1, 2, 3, 4, 5, 6], "stays")]


def test_a_job_stays_in_the_pool_it_runs_in_beside_a_pool_of_the_same_nodes(cli: Cli, tmp_path: Path):
    fleet = tmp_path / "fleet.yaml"
    pools = [{**ONE_JOB["pools"][0], "nodes": 1}, {**ONE_JOB["pools"][0], "name": "a100b", "nodes": 1}]
    fleet.write_text(yaml.safe_dump({**ONE_JOB, "pools": pools}), encoding="utf-8")
    current = tmp_path / "now.json"
    running = {**RUNS_ON_NODE_1, "pool": "a100b", "nodes": [0]}
    current.write_text(json.dumps({"schema_version": 1, "placements": [running]}), encoding="utf-8")
    status, out, err = cli("cluster", str(fleet), "--json", "--current", str(current))
    assert (status, err) == (0, "")
    assert [(p["pool"], p["nodes"], p["gpu_indexes"], p["current"]) for p in json.loads(out)["placements"]] == [
        ("a100b", [0], [0, 1, 2, 3, 4, 5, 6], "stays")]


@pytest.mark.parametrize(("field", "value"), [
    ("nodes", [1, 0]), ("gpu_indexes", [0, 1, 2, 3, 4, 5, 6, 7]), ("trainer_gpus", 4), ("rollout_gpus", 0),
    ("max_model_len", 8192 // 2), ("sp", 4)])
def test_a_job_running_otherwise_than_any_of_its_ways_is_placed_afresh_and_moves(cli: Cli, tmp_path: Path,
                                                                                 field: str, value: object):
    # No way of the job runs it as it runs now (one field differs), so nothing keeps it on node 1: it is placed as
    # without --current, on node 0. (SP=4, which does not divide its 6 trainer GPUs: since s72 a running job gets a
    # way with its own SP and Offload where the planner trains it so, and SP=2 or Offload stays:
    # test_movereason_s72.py.) A rollout of 0, not 2: 6 + 2 GPUs on the 7 it names is refused since s84
    # (test_smallslips45_s84.py).
    running = ({**RUNS_ON_NODE_1, "plan": {**RUNS_ON_NODE_1["plan"], field: value}} if field in RUNS_ON_NODE_1["plan"]
               else {**RUNS_ON_NODE_1, field: value})
    assert _placed(cli, tmp_path, running) == [([0], [0, 1, 2, 3, 4, 5, 6], "moves")]


SPLIT = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 2, "gpus_per_node": 8}],
         "jobs": [{"name": "a", "model": "Qwen3-0.6B", "max_model_len": 8192, "rollout_gpus": 2},
                  {"name": "b", "model": "Qwen3-0.6B", "max_model_len": 8192, "rollout_gpus": 1},
                  {"name": "c", "model": "Qwen3-0.6B", "max_model_len": 8192, "rollout_gpus": 4, "priority": 5},
                  {"name": "d", "model": "Qwen3-0.6B", "max_model_len": 8192, "rollout_gpus": 3, "priority": 5}]}
"""a (4 GPUs) and b (3) run on node 0; c (5 at the fewest) and d (4 at the fewest) start and cannot share a node
(9 GPUs): each takes one beside a or b, so a and b cannot both stay on node 0."""


def _running(job: str, gpus: list[int], rollout: int) -> dict[str, Any]:
    return {"job": job, "pool": "a100", "nodes": [0], "gpu_indexes": gpus, "trainer_gpus": 2, "rollout_gpus": rollout,
            "plan": {"max_model_len": 8192, "sp": 1, "offload": False}}


def test_two_running_jobs_that_a_node_no_longer_holds_together_keep_one_of_them(cli: Cli, tmp_path: Path):
    # The node they share is filled by one pattern at most: keeping a beside d and b beside c on the same node
    # would count both as staying while the node held three jobs.
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(yaml.safe_dump(SPLIT), encoding="utf-8")
    current = tmp_path / "now.json"
    current.write_text(json.dumps({"schema_version": 1, "placements": [
        _running("a", [0, 1, 2, 3], 2), _running("b", [4, 5, 6], 1)]}), encoding="utf-8")
    status, out, err = cli("cluster", str(fleet), "--json", "--no-widen", "--current", str(current))
    assert (status, err) == (0, "")
    assert [(p["job"], p["nodes"], p["gpu_indexes"], p["current"]) for p in json.loads(out)["placements"]] == [
        ("a", [1], [0, 1, 2], "moves"), ("b", [0], [4, 5, 6], "stays"), ("c", [0], [0, 1, 2, 3, 7], "starts"),
        ("d", [1], [3, 4, 5, 6, 7], "starts")]
    text = cli("cluster", str(fleet), "--no-widen", "--current", str(current))[1].splitlines()
    assert text[1] == "running now: 1 stays, 1 moves, 0 stop; 2 start"


def test_a_critic_of_another_model_is_not_held_to_this_models_attention():
    # Trinity 0.5 checks the critic's own SP as the actor's; where the critic is another model, rft-solver knows
    # neither its heads nor its attention, so SP=2 there is no problem; the same SP for this model's critic is.
    # (remove padding and dynamic batch sizes off, one sequence per micro-batch, as such a model needs them:
    # test_remotepad_s70, test_padbound_s71; the problems left are the SP ones)
    # (and the critic's own remove padding off, as Trinity 0.5 reads it: test_ownbudget_s72)
    critic = {"ulysses_sequence_parallel_size": 2, "forward_micro_batch_size_per_gpu": 1,
              "model": {"use_remove_padding": False}}
    critic_sp = {"trainer": {"use_dynamic_bsz": False, "trainer_config": {"critic": critic, "actor_rollout_ref": {
        "model": {"use_remove_padding": False}}}}}
    assert CRITIC_SP_KEY == ("trainer", "trainer_config", "critic", "ulysses_sequence_parallel_size")
    model = load_model_config(INTERNLM2)
    other = {**critic_sp, "model": {"model_path": "internlm2-7b", "critic_model_path": "another-critic"}}
    # only said to differ from the actor's SP (1), which the verdict counts (s83's criticsp): not a refusal
    assert [problem.code for problem in trinity_config_problems(other, model, 4, version="0.5")] == [
        "role-sp-differs"]
    same = {**critic_sp, "model": {"model_path": "internlm2-7b"}}
    assert [problem.code for problem in trinity_config_problems(same, model, 4, version="0.5")] == [
        "sp-model-attention", "role-sp-differs"]


THREE_NODES = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 3, "gpus_per_node": 8}],
               "jobs": [{"name": name, "model": "Qwen3-0.6B", "max_model_len": 8192, "rollout_gpus": rollout}
                        for name, rollout in (("x1", 2), ("y1", 1), ("x2", 1), ("z", 2), ("w", 2), ("v", 2))]}
"""x1 (4 GPUs) and y1 (3) run on node 0, x2 (3) on node 1; z, w and v (4 GPUs each) start."""


def test_new_jobs_fill_the_slot_beside_a_running_job_and_the_nodes_no_running_job_keeps(cli: Cli, tmp_path: Path):
    # Nodes 0 and 1 keep their running jobs and hold the same pattern (4 + 3 GPUs): node 1's slot of 4 takes z; w
    # and v share node 2, the one node left. Each kept node's slots are its pattern less the jobs staying on it alone.
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(yaml.safe_dump(THREE_NODES), encoding="utf-8")
    current = tmp_path / "now.json"
    on_node_1 = {**_running("x2", [0, 1, 2], 1), "nodes": [1]}
    running = [_running("x1", [0, 1, 2, 3], 2), _running("y1", [4, 5, 6], 1), on_node_1]
    current.write_text(json.dumps({"schema_version": 1, "placements": running}), encoding="utf-8")
    status, out, err = cli("cluster", str(fleet), "--json", "--no-widen", "--current", str(current))
    assert (status, err) == (0, "")
    assert [(p["job"], p["nodes"], p["gpu_indexes"], p["current"]) for p in json.loads(out)["placements"]] == [
        ("x1", [0], [0, 1, 2, 3], "stays"), ("y1", [0], [4, 5, 6], "stays"), ("x2", [1], [0, 1, 2], "stays"),
        ("z", [1], [3, 4, 5, 6], "starts"), ("w", [2], [0, 1, 2, 3], "starts"), ("v", [2], [4, 5, 6, 7], "starts")]


@pytest.mark.parametrize(("gpus", "current"), [([1, 2, 3], "stays"), ([4, 5, 6], "moves")], ids=["there", "gone"])
def test_a_job_on_gpus_the_nodes_no_longer_have_moves(cli: Cli, tmp_path: Path, gpus: list[int], current: str):
    # The pool's nodes now have 4 GPUs: a job on GPUs 4-6 runs there until it stops, so it moves (gpu-gone, since
    # s77's smallslips27: it was read as not running); on GPUs 1-3 it stays.
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(yaml.safe_dump({"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 2, "gpus_per_node": 4}],
                                     "jobs": [SPLIT["jobs"][1]]}), encoding="utf-8")
    now = tmp_path / "now.json"
    now.write_text(json.dumps({"schema_version": 1, "placements": [{**_running("b", gpus, 1), "nodes": [1]}]}),
                   encoding="utf-8")
    status, out, err = cli("cluster", str(fleet), "--json", "--no-widen", "--current", str(now))
    assert (status, err) == (0, "")
    assert [placed.get("current") for placed in json.loads(out)["placements"]] == [current]
    assert [placed.get("move_reason_code") for placed in json.loads(out)["placements"]] == [
        "gpu-gone" if current == "moves" else None]


@pytest.mark.parametrize(("argv", "error"), [
    (("tables", "--no-help"),
     "solve tables: error: unrecognized arguments: --no-help (the default is without --help: leave --no-help out)"),
    (("--no-version",),
     "solve: error: unrecognized arguments: --no-version (the default is without --version: leave --no-version out)")])
def test_the_opposite_of_help_or_version_is_no_flag_to_leave_out(cli: Cli, argv: tuple[str, ...], error: str):
    # --help and --version take no value, as a flag: their opposite is told to leave itself out (session 72; told
    # "did you mean --help?" before, as if it asked for the help).
    status, out, err = cli(*argv)
    assert (status, out, err.splitlines()[-1]) == (2, "", error)


def test_a_job_placed_twice_on_other_gpus_is_refused_in_one_line(cli: Cli, tmp_path: Path):
    # No GPU is taken twice, yet job b runs in two places: no placement solve cluster --json prints.
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(yaml.safe_dump({"pools": SPLIT["pools"], "jobs": [SPLIT["jobs"][1]]}), encoding="utf-8")
    now = tmp_path / "now.json"
    now.write_text(json.dumps({"schema_version": 1, "placements": [
        _running("b", [0, 1, 2], 1), {**_running("b", [0, 1, 2], 1), "nodes": [1]}]}), encoding="utf-8")
    status, out, err = cli("cluster", str(fleet), "--current", str(now))
    assert (status, out, err) == (2, "", f"solve cluster: error: --current {now}: job b is placed twice\n")


def test_an_offload_need_on_one_trainer_gpu_names_no_share_per_trainer_gpu():
    # On one trainer GPU the share per trainer GPU is the need itself: the caution says it once.
    assert unchecked_host_need(128.1, solver.load_catalog().gpu("a100"), 1, None, True, "--host-ram") == (
        "Offload needs 128.1 GiB of host memory per node, more than the 128 GiB assumed for its one trainer GPU there "
        "(128 GiB per GPU, as servers commonly have: a DGX A100's 1 TB for 8; --node-gpus counts all of a node's "
        "GPUs), and nothing checks it: give --host-ram what a node can spare for the trainer (free -g's total less "
        "what the OS, Ray and the rollout take) to check it")


def test_a_running_job_left_out_is_marked_as_stopping_in_the_unplaced_jobs(cli: Cli, tmp_path: Path):
    # c (priority 5) needs the whole node: b, which runs there now, stops.
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(yaml.safe_dump({"pools": [{**SPLIT["pools"][0], "nodes": 1}], "jobs": [
        SPLIT["jobs"][1], {**SPLIT["jobs"][2], "rollout_gpus": 6}]}), encoding="utf-8")
    now = tmp_path / "now.json"
    now.write_text(json.dumps({"schema_version": 1, "placements": [_running("b", [0, 1, 2], 1)]}), encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet), "--no-widen", "--current", str(now))
    lines = out.splitlines()
    assert (status, lines[1]) == (1, "running now: 0 stay, 0 move, 1 stops; 1 starts")
    assert [line.split("│")[1].strip() for line in lines if line.startswith("│ b")] == ["b (stops)"]


def test_the_api_reports_keeping_running_jobs_as_a_stage_and_names_a_bad_file_without_a_flag(tmp_path: Path):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(yaml.safe_dump(SPLIT), encoding="utf-8")
    now = tmp_path / "now.json"
    now.write_text(json.dumps({"schema_version": 1, "placements": [
        _running("a", [0, 1, 2, 3], 2), _running("b", [4, 5, 6], 1)]}), encoding="utf-8")
    stages: list[str] = []
    solver.place(fleet, current=now, widen=False, progress=lambda stage, *_: stages.append(stage))
    assert list(dict.fromkeys(stages)) == [  # every job with a way placed: no jobs tied in priority (s83)
        "placed priority", "running jobs kept", "longer contexts", "step-time cost", "tie-break"]
    now.write_text(json.dumps({"schema_version": 1, "placements": [
        _running("b", [0, 1, 2], 1), {**_running("b", [0, 1, 2], 1), "nodes": [1]}]}), encoding="utf-8")
    with pytest.raises(solver.TableError) as refused:
        solver.place(fleet, current=now)
    assert str(refused.value) == f"{now}: job b is placed twice"  # the API's keyword is no flag to name


def _two_on_node_0(tmp_path: Path, kept: frozenset[int], nodes: int = 2) -> tuple[dict[int, int], dict[int, int]]:
    """a and b, Qwen3-4B on 4 GPUs each, share node 0 of `nodes`, the others idle: the GPUs each job widening grows
    to (job -> count) and the node each moves to (job -> node)."""
    pool = {**A100_NODES, "nodes": nodes}
    fleet = fleet_of({"pools": [pool], "jobs": [{**DUO, "name": name} for name in "ab"]}, tmp_path)
    planner = Planner(CATALOG.for_fleet(fleet), load_weights(), "auto")
    chosen = {job: next(o for o in job_options(planner, fleet, job) if o.plan.gpus == 4) for job in range(2)}
    widened = widen_jobs(planner, fleet, chosen, {0: [0], 1: [0]}, 0, kept, True, time.monotonic() + 60)
    return {job: option.plan.gpus for job, option in widened.grown.items()}, widened.moved


@pytest.mark.parametrize(("kept", "grown", "moved"), [
    (frozenset(), {0: 8, 1: 8}, {1: 1}), (frozenset({1}), {0: 8}, {0: 1}), (frozenset({0}), {1: 8}, {1: 1})])
def test_a_job_kept_where_it_runs_is_never_the_one_that_moves_to_the_idle_node(
        tmp_path: Path, kept: frozenset[int], grown: dict[int, int], moved: dict[int, int]):
    # One of a and b moves to node 1 and both grow to 8, the last in file order (b) moving first; b kept where it
    # runs neither grows nor moves: a moves to node 1 and grows there.
    assert _two_on_node_0(tmp_path, kept) == (grown, moved)


def test_a_job_that_moves_takes_the_first_idle_node(tmp_path: Path):
    assert _two_on_node_0(tmp_path, frozenset(), nodes=3) == ({0: 8, 1: 8}, {1: 1})


def test_widening_stopped_before_its_first_answer_leaves_every_job_where_it_was_placed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(widen, "WIDEN_DETERMINISTIC_TIME", 0.0)  # each solve stops at once, with no answer
    assert _two_on_node_0(tmp_path, frozenset()) == ({}, {})


def test_a_comma_list_with_a_name_no_gpu_type_has_is_told_the_accepted_names_not_to_pass_a_list():
    # A list of known names is told to be passed as a list; one with an unknown name gets the unknown name's error.
    catalog = solver.load_catalog()
    with pytest.raises(solver.QueryError) as refused:
        solver.make_query(catalog, model="8B", gpu="a100,zz9", max_model_len=8192)
    assert str(refused.value).startswith("unknown GPU 'a100,zz9'; accepted: A100-40GB/80GB, A800-80GB, H20-96GB,")
    with pytest.raises(solver.QueryError) as refused:
        solver.make_query(catalog, model="8B", gpu="a100,h20", max_model_len=8192)
    assert str(refused.value) == ("gpu 'a100,h20' lists 2 GPU types in one string: pass them as a list, "
                                  "gpu=['a100', 'h20']")


def test_no_job_moves_to_a_node_that_a_job_on_whole_nodes_takes_beyond_its_first(tmp_path: Path):
    # c (4 trainer and 8 rollout GPUs) takes nodes 0 and 1 whole; a and b share node 2: no node is idle, none moves.
    jobs = [{**DUO, "name": "a"}, {**DUO, "name": "b"}, {**DUO, "name": "c", "rollout_gpus": 8}]
    fleet = fleet_of({"pools": [{**A100_NODES, "nodes": 3}], "jobs": jobs}, tmp_path)
    planner = Planner(CATALOG.for_fleet(fleet), load_weights(), "auto")
    chosen = {job: next(o for o in job_options(planner, fleet, job) if o.plan.gpus == 4) for job in range(2)}
    chosen[2] = next(o for o in job_options(planner, fleet, 2) if o.whole_nodes == 2)
    widened = widen_jobs(planner, fleet, chosen, {0: [2], 1: [2], 2: [0, 1]}, 0, frozenset(), True,
                         time.monotonic() + 60)
    assert (widened.grown, widened.moved) == ({}, {})
