"""Tests that kill mutants of sessions 70-71's code which its own tests let live (mutants22; the table:
/work/keep/review-s72-mutants22-table.md): widening moves the fewest jobs before it weighs their places in the file,
the jobs that move take the idle nodes in file order, and a job alone on its node gets no ways on an idle node; a
least-priority solve stopped before its proof, or not asked once the work is spent, gives no least priority, and as
many running jobs kept is no tie; a pool's host memory words count the Trinity release's reference shards; --write
leaves a rollout length or YaRN that reads as nothing, and sets anew a YaRN of its own with two types or no finite
number for a factor; a RoPE scaling names the first key its type lacks; a micro-batch size of 0 is flagged."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from ortools.sat.python import cp_model
from test_cluster import CATALOG, fleet_of, reference_checked
from test_clusterkeep2_s71 import A100_NODES, DUO, FOUR_AND_ONE
from test_mutants20_s71 import HF_CONFIGS, x_and_y_left_out
from test_slidingkv_s71 import _published, _refusal
from test_writeyarn_s71 import CARDS, _config, _write

import solver.cluster.reasons
from solver.cluster.model import placement_solver
from solver.cluster.options import Planner, job_options
from solver.cluster.widen import build_widening_model, widen_jobs
from solver.tables import load_model_config, load_weights
from solver.trinity import trinity_config_problems

Cli = Callable[..., tuple[int, str, str]]


def test_widening_moves_the_fewest_jobs_before_it_weighs_their_places_in_the_file(tmp_path: Path):
    # a (1 GPU), b (4) and c (1) share node 0 of three A100 nodes; two pads, never placed, stand between a and b in
    # the file. a moving to node 1 and growing to 8 there leaves c room to grow to 4 on node 0; b and c moving (c
    # growing to 4 on node 2) leave a room to grow to 8 on node 0: the same lengths, cost and GPUs. One move goes
    # before two, though b and c come later in the file than a, so far later that by their places alone (without the
    # weight of a move's count, mutants50's w2) moving both weighs less than moving a.
    shared = {"rollout_gpus": 0, "max_model_len": {"at_least": "16k"}}
    jobs = [{**shared, "name": "a", "model": "Qwen3-4B", "train_batch_size": 1},
            {**shared, "name": "pad", "model": "Qwen3-4B", "max_model_len": "8k"},
            {**shared, "name": "pad2", "model": "Qwen3-4B", "max_model_len": "8k"},
            {**shared, "name": "b", "model": "Qwen2.5-7B", "max_model_len": {"at_least": "8k"}, "train_batch_size": 16},
            {**shared, "name": "c", "model": "Qwen2.5-7B", "train_batch_size": 8}]
    fleet = fleet_of({"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 3, "gpus_per_node": 8}], "jobs": jobs},
                     tmp_path)
    planner = Planner(CATALOG.for_fleet(fleet), load_weights(), "auto")
    chosen = {job: next(o for o in job_options(planner, fleet, job) if o.plan.gpus == gpus)
              for job, gpus in ((0, 1), (3, 4), (4, 1))}
    widened = widen_jobs(planner, fleet, chosen, {job: [0] for job in chosen}, 0, frozenset(), True,
                         time.monotonic() + 60)
    assert {job: (option.plan.gpus, option.plan.max_model_len) for job, option in widened.grown.items()} == {
        0: (8, 102400), 4: (4, 105472)}
    assert widened.moved == {0: 1}


def test_two_jobs_that_move_take_the_idle_nodes_in_file_order(tmp_path: Path):
    # j0 (1 GPU), j1 (4), j2 (8) and j3 (1) fill 14 of node 0's 16 A100s: j0 and j1 move, j0 to node 1 and j1 to
    # node 2 (W11 gave them the other way round), each growing to 16 there; j3 grows to 4 on node 0.
    jobs = [{"name": f"j{index}", "model": model, "max_model_len": length, "rollout_gpus": 0, "train_batch_size": batch}
            for index, (model, length, batch) in enumerate([
                ("Qwen2.5-7B", "8k", 8), ("Qwen3-4B", {"at_least": "16k"}, 16),
                ("Qwen2.5-7B", {"at_least": "16k"}, 2), ("Qwen2.5-7B", {"at_least": "8k"}, 4)])]
    fleet = fleet_of({"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 3, "gpus_per_node": 16}], "jobs": jobs},
                     tmp_path)
    planner = Planner(CATALOG.for_fleet(fleet), load_weights(), "auto")
    chosen = {job: next(o for o in job_options(planner, fleet, job) if o.plan.gpus == gpus)
              for job, gpus in enumerate((1, 4, 8, 1))}
    widened = widen_jobs(planner, fleet, chosen, {job: [0] for job in chosen}, 0, frozenset(), True,
                         time.monotonic() + 60)
    assert {job: (option.plan.gpus, option.plan.max_model_len) for job, option in widened.grown.items()} == {
        0: (16, 8192), 1: (16, 102400), 3: (4, 105472)}
    assert widened.moved == {0: 1, 1: 2}

def test_jobs_growing_on_a_node_keep_within_its_gpus(tmp_path: Path):
    # Two 1-GPU jobs on a node of 5 A100s may each grow to 2 or 4: one grows to 4, the other keeps its 1 GPU (4 and 2
    # would take 6 of the 5).
    shared = {"rollout_gpus": 0, "max_model_len": {"at_least": "8k"}, "model": "Qwen3-4B", "train_batch_size": 4}
    fleet = fleet_of({"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 5}],
                      "jobs": [{**shared, "name": "a"}, {**shared, "name": "b"}]}, tmp_path)
    planner = Planner(CATALOG.for_fleet(fleet), load_weights(), "auto")
    chosen = {job: next(o for o in job_options(planner, fleet, job) if o.plan.gpus == 1) for job in (0, 1)}
    widened = widen_jobs(planner, fleet, chosen, {0: [0], 1: [0]}, 0, frozenset(), False, time.monotonic() + 60)
    assert {job: (option.plan.gpus, option.plan.max_model_len) for job, option in widened.grown.items()} == {
        0: (4, 102400)}


def test_a_job_alone_on_its_node_gets_no_ways_on_an_idle_node(tmp_path: Path):
    # An idle node of its pool is the same to it as its own (W1): its ways there alone, the model as small as before.
    fleet = fleet_of({"pools": [A100_NODES], "jobs": [DUO]}, tmp_path)
    planner = Planner(CATALOG.for_fleet(fleet), load_weights(), "auto")
    chosen = {0: next(o for o in job_options(planner, fleet, 0) if o.plan.gpus == 4)}
    built = build_widening_model(planner, fleet, chosen, {0: [0]}, onto_idle_nodes=True)
    assert built.idle_nodes == {0: [1]} and [(way.option.plan.gpus, way.moves) for way in built.ways] == [
        (4, False), (8, False)]


@pytest.mark.parametrize("branching", ["AUTOMATIC_SEARCH", "PORTFOLIO_SEARCH"])
def test_a_least_priority_solve_stopped_before_its_proof_gives_a_priority_that_places_it(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, branching: str):
    # Each least-priority solve stops at its first solution, unproven (no presolve, no LP bound): 5 with automatic
    # search, 7 with the portfolio (the optimum, which priority 3 would follow from, not proven). Neither is the most
    # the other jobs hold with x placed, proven: the words give the holders' priority plus one, which surely places it.
    def first_solution_only(workers: int, seed: int) -> cp_model.CpSolver:
        stopping = placement_solver(workers, seed)
        stopping.parameters.stop_after_first_solution = True
        stopping.parameters.cp_model_presolve = False
        stopping.parameters.linearization_level = 0
        stopping.parameters.search_branching = getattr(cp_model, branching)
        return stopping

    monkeypatch.setattr(solver.cluster.reasons, "placement_solver", first_solution_only)
    path = tmp_path / "least.yaml"
    path.write_text(yaml.safe_dump({"pools": [{**A100_NODES, "host_ram_gb": None}], "jobs": FOUR_AND_ONE}),
                    encoding="utf-8")
    _, out, _ = cli("cluster", str(path), "--json")
    (left,) = json.loads(out)["unplaced"]
    assert left["reason"].endswith("a, b (priority 4 together) hold the room it needs: priority 5 would place it")


def test_a_rollout_length_of_its_own_that_reads_as_no_number_is_left_where_the_model_gives_none(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # No model.max_model_len to compare with, and the rollout's from an environment variable this shell lacks: it is
    # not the model's length, so --write leaves it and writes the plan's length at the model alone.
    monkeypatch.delenv("ROLLOUT_LEN", raising=False)
    rollout = "    max_model_len: ${oc.env:ROLLOUT_LEN}\n"
    text = ("model:\n  model_path: Qwen/Qwen3-8B\ncluster:\n  node_num: 1\n  gpu_per_node: 8\nexplorer:\n"
            f"  rollout_model:\n    engine_num: 2\n{rollout}")
    written, _ = _write(cli, tmp_path, text, "--gpu", "h20", "--len", "16k")
    assert "\n  max_model_len: 16384\ncluster:\n" in written
    assert f"\n    engine_num: 2\n{rollout}trainer:\n" in written


@pytest.mark.parametrize("rope", [CARDS + "    type: linear\n", CARDS.replace("4.0", ".inf"),
                                  CARDS.replace("4.0", "true").replace("32768", "131072")])
def test_a_yarn_of_its_own_with_another_type_beside_or_no_finite_factor_is_set_anew(cli: Cli, tmp_path: Path,
                                                                                    rope: str):
    # The model cards' form over 32768 is kept only where each type key says yarn (vLLM refuses two that differ) and
    # its factor is a finite number (not a boolean, though true x 131072 reaches it): here --write sets the guide's for
    # 131072, as it does for a YaRN of no form.
    text = _config(131072, "", rope).replace("Qwen3-8B", "Qwen3-4B").replace("engine_num: 2", "engine_num: 4")
    written, err = _write(cli, tmp_path, text, "--gpu", "h200")
    assert "  rope_scaling:\n    rope_type: yarn\n    factor: 3.2\n    original_max_position_embeddings: 40960\n" in (
        written) and "kept it" not in err


def test_a_rollout_yarn_that_resolves_to_nothing_is_left_where_the_models_stale_one_is_removed(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # Both read an environment variable this shell lacks: the model's, past its length (32768 needs none), is removed;
    # the rollout's gives nothing to compare with the model's, so it is not taken for the model's, and stays.
    monkeypatch.delenv("ROPE", raising=False)
    text = _config(65536, "    rope_scaling: ${oc.env:ROPE}\n", "  rope_scaling: ${oc.env:ROPE}\n")
    written, _ = _write(cli, tmp_path, text, "--gpu", "h20", "--len", "32k")
    assert written.endswith("\n  max_model_len: 32768\ncluster:\n  node_num: 1\n  gpu_per_node: 8\nexplorer:\n"
                            "  rollout_model:\n    engine_num: 2\n    rope_scaling: ${oc.env:ROPE}\ntrainer:\n"
                            "  ulysses_sequence_parallel_size: 2\n  max_token_len_per_gpu: 32768\n")


def test_no_least_priority_solve_is_asked_once_one_has_overrun_the_work_left(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # x's solve stops a little past its tiny work budget, unproven: y's is not asked (CP-SAT refuses a limit below 0
    # as an invalid model), and each is given the holders' priority plus one, which surely places it.
    monkeypatch.setattr(solver.cluster.reasons, "LEAST_PRIORITY_SHARE", 1e-7)
    reasons, solvers = x_and_y_left_out(cli, tmp_path, monkeypatch)
    assert reasons == [("x", "priority 5 would place it"), ("y", "priority 5 would place it")]
    (only,) = solvers
    assert only.response_proto.deterministic_time > only.parameters.max_deterministic_time


def test_a_least_priority_keeping_as_many_running_jobs_as_the_placement_is_no_tie_in_its_favour(
        cli: Cli, tmp_path: Path):
    # r runs now and stays; a (priority 2) takes the rest of the node, b (1) is left out. With b placed at priority
    # 2, r stays as it does beside a (one running job kept either way): no tie breaks for b, so 3 is the least.
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(yaml.safe_dump({"pools": [{**A100_NODES, "nodes": 1, "host_ram_gb": None}], "jobs": [
        {**DUO, "name": name, "priority": priority} for name, priority in (("r", 3), ("a", 2), ("b", 1))]}),
        encoding="utf-8")
    current = tmp_path / "now.json"
    current.write_text(json.dumps({"schema_version": 1, "placements": [{
        "job": "r", "pool": "a100", "nodes": [0], "gpu_indexes": [0, 1, 2, 3], "trainer_gpus": 4, "rollout_gpus": 0,
        "plan": {"max_model_len": 65536, "sp": 4, "offload": False}}]}), encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet), "--current", str(current), "--json")
    answer = json.loads(out)
    assert (status, [(placed["job"], placed["current"]) for placed in answer["placements"]]) == (
        1, [("r", "stays"), ("a", "starts")])
    assert [(left["job"], left["reason"].split("; ", 1)[1]) for left in answer["unplaced"]] == [
        ("b", "a (priority 2) holds the room it needs: priority 3 is the least that places it")]


def test_a_pools_host_memory_reason_counts_the_reference_shards_of_the_trinity_release_asked(
        cli: Cli, tmp_path: Path):
    # Qwen3-32B's 8-GPU Offload plan beside 8 rollout GPUs: under Trinity 0.5 the reference model's shards are bf16,
    # 70 GiB less per node than 0.6's fp32 (664.2 GiB); either is more than the pool's 512. Asked under 0.5.1, which
    # loads this untied model on rank 0 alone (verl's rule), as 0.6 does on H100s: 0.5 named alone may be 0.5.2,
    # which loads it on every rank, and its figure is that load's.
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(yaml.safe_dump({
        "pools": [{"name": "h100", "gpu": "H100-80GB", "nodes": 2, "gpus_per_node": 8, "host_ram_gb": 512}],
        "jobs": [{"name": "a", "model": "32B", "max_model_len": 32768, "rollout_gpus": 8}]}), encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet), "--json", "--trinity-version", "0.5.1")
    (left,) = reference_checked(fleet, out, trinity_version="0.5.1")["unplaced"]
    assert status == 1 and ("(8 would, with Env + Offload + SP=2, but with Offload it needs 594.2 GiB of host memory "
                            "per node, more than the pool's host_ram_gb of 512 GiB)") in left["reason"]


@pytest.mark.parametrize(("scaling", "missing"), [
    ({"rope_type": "llama3", "factor": 8.0}, "low_freq_factor"),
    ({"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0}, "high_freq_factor"),
    ({"rope_type": "longrope", "short_factor": [1.0]}, "long_factor")])
def test_a_rope_scaling_without_keys_its_type_needs_names_the_first_missing(
        tmp_path: Path, scaling: dict[str, Any], missing: str):
    assert _refusal(tmp_path, {**_published("Qwen3-8B"), "rope_scaling": scaling}) == (
        f"rope_scaling: missing {missing}: transformers refuses rope_type {scaling['rope_type']} without it")


def test_check_flags_a_micro_batch_of_no_sequence():
    # Every size but 1 is flagged, 0 as well as those above 1 (H6 flagged only these).
    trainer = {"use_remove_padding": False, "use_dynamic_bsz": False, "trainer_config": {"actor_rollout_ref": {
        "model": {"use_remove_padding": False}, **{role: {key: 1} for role, key in (
            ("actor", "ppo_micro_batch_size_per_gpu"), ("rollout", "log_prob_micro_batch_size_per_gpu"))},
        "ref": {"log_prob_micro_batch_size_per_gpu": 0}}}}
    found = trinity_config_problems({"trainer": trainer, "algorithm": {"algorithm_type": "grpo"}},
                                    load_model_config(HF_CONFIGS / "internlm2-7b.json"), 4, version="0.5")
    assert [(problem.code.value, problem.words) for problem in found if problem.code.value.startswith("micro")] == [
        ("micro-batch-unbounded", ("trainer.trainer_config.actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu is "
                                   "0: with dynamic batch sizes off a micro-batch takes that many sequences, padded to "
                                   "the longest, which the token budget does not bound: set it to 1"))]


READS_CRITIC_OWN = "reads it (verl 0.8 or later reads trainer.trainer_config.critic.fsdp's sizes instead): "


@pytest.mark.parametrize(("version", "scope"), [
    ("0.5", ""),
    ("0.6", f"Trinity 0.6 on verl before 0.8 {READS_CRITIC_OWN}"),
    (None, f"Trinity with verl before 0.8 {READS_CRITIC_OWN}")])
def test_the_critics_own_micro_batch_size_line_names_the_releases_that_read_it(version: str | None, scope: str):
    """refsp88: Trinity 0.6 on verl 0.8 builds the critic's engine from critic.fsdp and reads none of the critic's own
    sizes; the line on one of them said nothing of that."""
    trainer = {"use_remove_padding": False, "use_dynamic_bsz": False, "trainer_config": {
        "actor_rollout_ref": {"model": {"use_remove_padding": False}, **{role: {key: 1} for role, key in (
            ("actor", "ppo_micro_batch_size_per_gpu"), ("ref", "log_prob_micro_batch_size_per_gpu"),
            ("rollout", "log_prob_micro_batch_size_per_gpu"))}},
        "critic": {"ppo_micro_batch_size_per_gpu": 2, "forward_micro_batch_size_per_gpu": 1,
                   "fsdp": {"micro_batch_size_per_gpu": 1, "infer_micro_batch_size_per_gpu": 1}}}}
    found = trinity_config_problems({"trainer": trainer, "algorithm": {"algorithm_type": "ppo"}},
                                    load_model_config(HF_CONFIGS / "internlm2-7b.json"), 4, version=version)
    assert [problem.words for problem in found if problem.code.value == "micro-batch-unbounded"] == [
        (f"trainer.trainer_config.critic.ppo_micro_batch_size_per_gpu is 2: {scope}with dynamic batch sizes off a "
         "micro-batch takes that many sequences, padded to the longest, which the token budget does not bound: set it "
         "to 1")]


def test_the_actors_micro_batch_size_line_names_no_release_scope():
    # mutants49: the scope words are the critic's own sizes' alone; the actor's size runs on every release
    trainer = {"use_remove_padding": False, "use_dynamic_bsz": False, "trainer_config": {"actor_rollout_ref": {
        "model": {"use_remove_padding": False}, **{role: {key: size} for role, key, size in (
            ("actor", "ppo_micro_batch_size_per_gpu", 2), ("ref", "log_prob_micro_batch_size_per_gpu", 1),
            ("rollout", "log_prob_micro_batch_size_per_gpu", 1))}}}}
    found = trinity_config_problems({"trainer": trainer, "algorithm": {"algorithm_type": "grpo"}},
                                    load_model_config(HF_CONFIGS / "internlm2-7b.json"), 4, version="0.6")
    assert [problem.words for problem in found if problem.code.value == "micro-batch-unbounded"] == [(
        "trainer.trainer_config.actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu is 2: with dynamic batch sizes off "
        "a micro-batch takes that many sequences, padded to the longest, which the token budget does not bound: set it "
        "to 1")]
