"""Tests that kill mutants of session 71's merges (cliwords2, padbound, slidingkv, clusterkeep2) which their own tests
let live (mutants20; the table: /work/keep/review-s71-mutants20-table.md): a running job kept at its count only in its
own pool and only where it may still run there, and at a count only the estimates have a plan at; the least priority
that places a job said as "moving other jobs" where it equals the holders' own, and its solves sharing one work
budget, each assuming its own job alone; Qwen2-MoE's and Gemma-2's local layers; a missing file not named config.json
beside an adapter; a micro-batch of two sequences, and a role's dynamic batching left to the trainer's; a list with
one empty name, a capitalised flag without its hyphen, an option of an exclusive group given twice."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from ortools.sat.python import cp_model
from test_padbound_s71 import _dotted, _internlm2_plan

import solver.cluster.reasons
from solver.cluster.model import placement_solver
from solver.cluster.reasons import LEAST_PRIORITY_SHARE
from solver.tables import DETERMINISTIC_PER_SECOND, TableError, load_model_config
from solver.tables.model_config import ADAPTER_CONFIG
from solver.trinity import trinity_config_problems
from solver.trinity.settings import plan_settings

Cli = Callable[..., tuple[int, str, str]]
HF_CONFIGS = Path(__file__).parent / "data" / "hf-configs"
A100 = {"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}
SOLO = {"name": "solo", "model": "Qwen3-8B", "max_model_len": {"at_least": "32k"}, "rollout_gpus": 0}
"""The tables offer Qwen3-8B at 32k or more on 2, 4 and 6 A100s; placed alone on a node, it grows to 8 (inferred)."""


def _fleet(tmp_path: Path, pools: list[dict[str, Any]], jobs: list[dict[str, Any]]) -> str:
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump({"pools": pools, "jobs": jobs}), encoding="utf-8")
    return str(path)


def _running_now(cli: Cli, fleet: str, *options: str, **change: Any) -> str:
    """`fleet`'s placement as ``solve cluster --json`` (with `options`) gives it, its first placement changed as
    `change` says (``plan_sp``: its plan's ``sp``), written where ``--current`` reads it."""
    _, out, _ = cli("cluster", fleet, "--json", *options)
    placement = json.loads(out)
    first = placement["placements"][0]
    for key, value in change.items():
        (first["plan"] if key.startswith("plan_") else first)[key.removeprefix("plan_")] = value
    path = Path(fleet).with_name("now.json")
    path.write_text(json.dumps(placement), encoding="utf-8")
    return str(path)


def _placed(cli: Cli, fleet: str, now: str) -> list[tuple[object, ...]]:
    status, out, err = cli("cluster", fleet, "--json", "--current", now, "--no-widen")
    assert status == 0, err
    return [(p["job"], p["pool"], p["gpu_indexes"], p["trainer_gpus"], p["plan"]["evidence"], p["current"])
            for p in json.loads(out)["placements"]]


def test_a_job_running_in_a_pool_it_may_no_longer_use_moves(cli: Cli, tmp_path: Path):
    # solo runs on 8 GPUs of a100 (grown there); its job now names pool b: no way at 8 in a100 is added for it.
    now = _running_now(cli, _fleet(tmp_path, [A100], [SOLO]))
    fleet = _fleet(tmp_path, [A100, {**A100, "name": "b"}], [{**SOLO, "pool": "b"}])
    assert _placed(cli, fleet, now) == [("solo", "b", [0, 1, 2, 3], 4, "documented", "moves")]


def test_a_way_at_the_count_in_another_pool_does_not_keep_the_job_from_staying(cli: Cli, tmp_path: Path):
    # solo runs on 8 A100s; the H100 pool's estimates offer 8 GPUs, the A100 pool's tables do not: it stays at 8.
    now = _running_now(cli, _fleet(tmp_path, [A100], [SOLO]))
    fleet = _fleet(tmp_path, [A100, {**A100, "name": "h100", "gpu": "H100-80GB"}], [SOLO])
    assert _placed(cli, fleet, now) == [("solo", "a100", list(range(8)), 8, "inferred", "stays")]


def test_a_count_only_the_estimates_have_a_plan_at_keeps_the_job(cli: Cli, tmp_path: Path):
    # Qwen3-4B at 24k: the tables offer 1, 2, 4 and 6 A100s, and have no plan on 3 alone; the estimates do
    # (Env + Offload, SP=1): the job started on 3 GPUs by hand stays there.
    fleet = _fleet(tmp_path, [A100], [{"name": "q", "model": "Qwen3-4B", "max_model_len": "24k", "rollout_gpus": 0}])
    now = _running_now(cli, fleet, "--no-widen", trainer_gpus=3, gpu_indexes=[0, 1, 2], plan_sp=1,
                       plan_offload=True)
    assert _placed(cli, fleet, now) == [("q", "a100", [0, 1, 2], 3, "estimated", "stays")]


DUO = {"model": "Qwen3-4B", "max_model_len": "64k", "rollout_gpus": 0, "train_batch_size": 64}
"""A 4-GPU job on A100s (the tables' only count for it)."""
WHOLE_NODE = {**DUO, "rollout_gpus": 4, "priority": 1}
"""A job that needs an A100 node whole (4 trainer and 4 rollout GPUs)."""


def _four_and(priorities: tuple[int, int, int, int], *others: dict[str, Any]) -> list[dict[str, Any]]:
    """Four 4-GPU jobs a, b, c and d of these `priorities` (filling two A100 nodes, a and b on node 0), and `others`."""
    return [*({"name": name, **DUO, "priority": priority} for name, priority in zip("abcd", priorities)), *others]


def test_a_least_priority_equal_to_the_holders_is_said_to_move_other_jobs(cli: Cli, tmp_path: Path):
    # a, b on node 0 (4), c, d on node 1 (4); x needs a node whole. With x, a and c together hold 5 of the 8:
    # priority 3 places it (as much priority as the placement's 8, and the cost breaks the tie: x's one plan costs less
    # than b's and d's together; persona42), made possible by moving c beside a.
    fleet = _fleet(tmp_path, [{**A100, "nodes": 2}], _four_and((3, 1, 2, 2), {"name": "x", **WHOLE_NODE}))
    _, out, _ = cli("cluster", fleet, "--json")
    result = json.loads(out)
    assert [placed["job"] for placed in result["placements"]] == ["a", "b", "c", "d"]
    assert result["unplaced"][0]["reason"].endswith(
        "a, b (priority 4 together) hold the room it needs: priority 4 is the least that places it (moving other "
        "jobs)")  # at 3, a tie that goes to the jobs earlier in the file (s82; the cost broke it before)


@pytest.mark.parametrize(("max_window_layers", "window"), [(0, (65536, 28)), (28, None)])
def test_qwen2_moe_windows_only_the_even_layers_below_max_window_layers(tmp_path: Path, max_window_layers: int,
                                                                        window: object):
    # max_window_layers 0: every layer full attention, one type, so vLLM windows the whole model (as Qwen3's,
    # test_slidingkv_s71); 28: the even layers local, the types mixed, which vLLM's Qwen2-MoE does not honour.
    config = json.loads((HF_CONFIGS / "Qwen2-57B-A14B.json").read_text(encoding="utf-8"))
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**config, "use_sliding_window": True, "max_window_layers": max_window_layers}),
                    encoding="utf-8")
    assert load_model_config(path).vllm_sliding_window == window


def test_a_missing_file_not_named_config_json_beside_an_adapter_is_only_missing(tmp_path: Path):
    adapter = {"peft_type": "LORA", "base_model_name_or_path": "Qwen/Qwen3-8B"}
    (tmp_path / ADAPTER_CONFIG).write_text(json.dumps(adapter), encoding="utf-8")
    with pytest.raises(TableError) as refused:
        load_model_config(tmp_path / "model.json")
    assert str(refused.value) == f"{tmp_path / 'model.json'}: cannot read: No such file or directory"


def test_check_flags_a_micro_batch_of_two_sequences():
    trainer = {"use_remove_padding": False, "use_dynamic_bsz": False, "trainer_config": {"actor_rollout_ref": {
        "model": {"use_remove_padding": False}, **{role: {key: 1} for role, key in (
            ("actor", "ppo_micro_batch_size_per_gpu"), ("rollout", "log_prob_micro_batch_size_per_gpu"))},
        "ref": {"log_prob_micro_batch_size_per_gpu": 2}}}}
    found = trinity_config_problems({"trainer": trainer, "algorithm": {"algorithm_type": "grpo"}},
                                    load_model_config(HF_CONFIGS / "internlm2-7b.json"), 4, version="0.5")
    assert [(problem.code.value, problem.words) for problem in found if problem.code.value.startswith("micro")] == [
        ("micro-batch-unbounded", ("trainer.trainer_config.actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu is "
                                   "2: with dynamic batch sizes off a micro-batch takes that many sequences, padded to "
                                   "the longest, which the token budget does not bound: set it to 1"))]


def x_and_y_left_out(cli: Cli, tmp_path: Path,
                     monkeypatch: pytest.MonkeyPatch) -> tuple[list[tuple[str, str]], list[cp_model.CpSolver]]:
    """x and y, each needing an A100 node whole, left out beside a, b, c and d (`_four_and`, priorities 3, 1, 3, 1) on
    two nodes: each one's reason's last words (job, words), and the least-priority solvers made, in order."""
    solvers: list[cp_model.CpSolver] = []

    def recorded(workers: int, seed: int) -> cp_model.CpSolver:
        solvers.append(placement_solver(workers, seed))
        return solvers[-1]

    monkeypatch.setattr(solver.cluster.reasons, "placement_solver", recorded)
    jobs = _four_and((3, 1, 3, 1), {"name": "x", **WHOLE_NODE}, {"name": "y", **WHOLE_NODE, "max_model_len": "32k"})
    _, out, _ = cli("cluster", _fleet(tmp_path, [{**A100, "nodes": 2}], jobs), "--json")
    return [(left["job"], left["reason"].split(": ")[-1]) for left in json.loads(out)["unplaced"]], solvers


def test_the_least_priority_solves_share_one_work_budget_each_on_its_own_job(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # x and y each need a node whole: each is placed, alone, by priority 3 (a and c kept beside it, 6 of the 8: at 2,
    # as much priority as the placement's 8, a tie that goes to the jobs earlier in the file: s82; the cost broke it
    # from persona42), and the second solve gets the work the first left.
    reasons, solvers = x_and_y_left_out(cli, tmp_path, monkeypatch)
    assert reasons == [("x", "priority 3 is the least that places it (moving other jobs)"),
                       ("y", "priority 3 is the least that places it (moving other jobs)")]
    # Three solves a job (since s82): the most the others hold with it, then the stage of jobs tied in priority, with
    # it and without it; each solve gets the work the ones before it left.
    work = [each.parameters.max_deterministic_time for each in solvers]
    assert len(work) == 6 and work[0] == LEAST_PRIORITY_SHARE * DETERMINISTIC_PER_SECOND * 10
    assert work[1:] == [before - spent.response_proto.deterministic_time for before, spent in zip(work, solvers)][:-1]
    assert work[-1] < work[0]


@pytest.mark.parametrize("version", [None, "0.5", "0.6"])
def test_the_settings_turn_dynamic_batching_off_at_the_trainer_alone(version: str | None):
    # a role's use_dynamic_bsz is set only where a config has it (unset, it takes the trainer's): a fragment has none
    found, model = _internlm2_plan(version=version)
    written = _dotted(plan_settings(found, model, version=version).config)
    assert {key: value for key, value in written.items() if key.endswith("use_dynamic_bsz")} == {
        "trainer.use_dynamic_bsz": False}


def test_a_list_with_one_empty_name_is_refused(cli: Cli, tmp_path: Path):
    fleet = _fleet(tmp_path, [A100], [SOLO])
    assert cli("cluster", fleet, "--required", "solo,") == (2, "", (
        "usage: solve cluster [options] (--help lists them)\nsolve cluster: error: argument --required: an "
        "empty name in 'solo,': give a job's name, or several separated by commas (math-4b,code-8b)\n"))


def test_a_flag_in_capitals_without_its_hyphen_is_named(cli: Cli, tmp_path: Path):
    status, _, err = cli("cluster", _fleet(tmp_path, [A100], [SOLO]), "--NOWIDEN")
    assert (status, err.splitlines()[-1]) == (
        2, "solve cluster: error: unrecognized arguments: --NOWIDEN (did you mean --no-widen?)")


def test_an_option_of_an_exclusive_group_given_twice_excludes_nothing(cli: Cli):
    status, out, err = cli("--model", "0.6B", "--gpu", "A100-80GB", "--len", "4k", "--no-estimate", "--no-estimate",
                           "--json")
    assert (status, err, json.loads(out)[0]["max_model_len"]) == (0, "", 4096)


def test_gemma2_local_layers_are_the_even_ones_from_the_first(tmp_path: Path):
    # transformers' Gemma-2 config: layer 0 local, then every other one; of 41 layers, 21 local (of 42, either way 21)
    config = json.loads((HF_CONFIGS / "gemma-2-9b.json").read_text(encoding="utf-8"))
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**config, "num_hidden_layers": 41}), encoding="utf-8")
    assert load_model_config(path).vllm_sliding_window == (4096, 21)
