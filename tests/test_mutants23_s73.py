"""Tests that kill mutants of session 72's code which its own tests let live (mutants23; the table:
/work/keep/review-s73-mutants23.md): a least-priority solve the wall clock stops is named in the answer, and a tie
in the job's favour counts only the placements with it that hold as much priority as the most (s72's R7, R14); LoRA's
states (frozen routed experts, its own optimizer step) and the tables with LoRA (no larger GPU type caps it, no table
refutes a cell for it); a config's LoRA rank counted or not; host memory without a reference model; dynamic batch
sizes off on some passes; the time limit the jobs' ways name; JSON's -Infinity; Qwen3's mixed windows refused."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from ortools.sat.python import cp_model
from test_clusterbuy_s60 import fleet_file
from test_clusterkeep2_s71 import A100_NODES, DUO
from test_lora_s72 import MODEL, ROLE_MODEL, _counted
from test_minnodes_s64 import _questions_per_second
from test_mutants20_s71 import HF_CONFIGS
from test_planner import refuted_two_gpu_cells
from test_slidingkv_s71 import _published, _refusal
from test_smallslips11_s69 import TWO_REQUIRED, _write
from test_tokbudget_s72 import ONE_SEQUENCE, _config, _verdict
from test_vllmwin_s72 import VLLM_REFUSES
from test_waysbudget_s72 import THREE_SHAPES

import solver
import solver.cluster.reasons
from solver.api import memory_answer, plan
from solver.cluster.model import placement_solver
from solver.cluster.options import Planner, WaysLimit, fleet_options
from solver.memory import expert_padding, lora_states_bytes
from solver.tables import Fleet, Job, Pool, QueryError, load_catalog, load_weights

Cli = Callable[..., tuple[int, str, str]]

X_Y_AND_J = [{**DUO, "name": name, "priority": priority} for name, priority in (("x", 5), ("y", 5), ("j", 1))]
"""Three 4-GPU jobs for one node of 8 A100s: x and y (priority 5 each) take it, j (1) is left out; with j placed, the
other jobs hold 5 at most, so priority 6 is the least that places it."""


def _cluster(cli: Cli, tmp_path: Path, jobs: list[dict], *options: str) -> tuple[int, dict]:
    """`solve cluster --json` on one A100 node (host memory unchecked) running `jobs`: its status and answer."""
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(yaml.safe_dump({"pools": [{**A100_NODES, "nodes": 1, "host_ram_gb": None}], "jobs": jobs}),
                     encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet), "--json", *options)
    return status, json.loads(out)


def test_a_least_priority_solve_the_wall_clock_stops_is_named_in_the_answer(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # The least-priority solves end on their wall-clock limit at once, as on a machine too busy to give them any
    # time: j's least priority is unproven (the holders' priority plus one), and the answer names the step.
    def stopped_by_the_wall_clock(workers: int, seed: int) -> cp_model.CpSolver:
        stopping = placement_solver(workers, seed)
        solve = stopping.solve

        def at_once(model: cp_model.CpModel, callback: cp_model.CpSolverSolutionCallback | None = None
                    ) -> cp_model.CpSolverStatus:
            stopping.parameters.max_time_in_seconds = 0.0
            return solve(model, callback)

        stopping.solve = at_once  # type: ignore[method-assign]
        return stopping

    monkeypatch.setattr(solver.cluster.reasons, "placement_solver", stopped_by_the_wall_clock)
    _, answer = _cluster(cli, tmp_path, X_Y_AND_J)
    assert answer["wall_clock_stopped"] == ["least priority"]
    assert [(left["job"], left["reason"].split("; ", 1)[1]) for left in answer["unplaced"]] == [
        ("j", "x (priority 5) holds the room it needs: priority 6 would place it")]


def test_a_tie_in_the_jobs_favour_counts_no_placement_of_less_priority(cli: Cli, tmp_path: Path):
    # r (priority 4) runs on GPUs 4-7 and stops: x and y place 10. With j placed, x beside it holds 6, keeping no
    # running job; r beside it holds one less, 5, and keeps r. That placement breaks no tie at 6: 6 is the least that
    # places j (at 5 it only ties with x and y, neither keeping a running job), while r's 5 ties and keeps r.
    current = tmp_path / "now.json"
    current.write_text(json.dumps({"schema_version": 1, "placements": [{
        "job": "r", "pool": "a100", "nodes": [0], "gpu_indexes": [4, 5, 6, 7], "trainer_gpus": 4, "rollout_gpus": 0,
        "plan": {"max_model_len": 65536, "sp": 4, "offload": False}}]}), encoding="utf-8")
    jobs = [*X_Y_AND_J[:2], {**DUO, "name": "r", "priority": 4}, X_Y_AND_J[2]]
    status, answer = _cluster(cli, tmp_path, jobs, "--current", str(current))
    assert (status, answer["status"], [(placed["job"], placed["current"]) for placed in answer["placements"]]) == (
        1, "optimal", [("x", "starts"), ("y", "starts")])
    assert [(left["job"], left.get("current"), left["reason"].split("; ", 1)[1]) for left in answer["unplaced"]] == [
        ("r", "stops", ("x (priority 5) holds the room it needs: priority 5 is the least that places it (with as "
                        "much priority placed, more running jobs stay with it)")),
        ("j", None, "x (priority 5) holds the room it needs: priority 6 is the least that places it")]


def test_a_lora_runs_whole_routed_experts_are_frozen_weights():
    # Qwen3-30B-A3B on 6 GPUs: FSDP2 holds 22 of each layer's 128 routed experts on the fullest GPU, 2/3 of an
    # expert (3 x 2048 x 768 parameters) x 48 layers more than an even share; with LoRA they are frozen, 4 bytes each.
    moe = load_catalog().model("30B-A3B")
    assert expert_padding(moe, 6) == pytest.approx(2 / 3 * 3 * 2048 * 768 * 48) == pytest.approx(150_994_944)
    assert lora_states_bytes(moe, 6, 32, 16) == pytest.approx(
        4 * moe.parameters_b * 1e9 / 6 + 4 * 150_994_944 + 16 * 1_993_015_296 / 6)  # the adapter: test_lora_s72


def test_a_lora_runs_longest_length_where_full_fine_tunings_optimizer_step_does_not_fit():
    # Qwen3-14B on 2 H20s: full fine-tuning's optimizer step (20 bytes per parameter of the shard) does not fit, at
    # any length; LoRA's (the frozen base's 4 bytes and the adapter's 20) does, and 18432 tokens train with Env.
    lora = memory_answer("14B", "h20", 2, 8192, env=True, lora_rank=32)
    full = memory_answer("14B", "h20", 2, 8192, env=True)
    assert (round(lora.step_gib, 2), lora.fits, lora.longest_len) == (29.7, True, 18432)
    assert (round(full.step_gib, 2), full.fits, full.longest_len) == (138.54, False, None)


def test_the_host_need_a_plan_without_host_ram_needs_counts_no_reference_model_where_told(
        cli: Cli, monkeypatch: pytest.MonkeyPatch):
    # Qwen3-8B loads 4 bytes per parameter on rank 0 alone under Trinity 0.6 on H100s (FSDP2 at compute capability
    # 9; with no release named, on each of the 8, s84): 30.6 GiB per node without a reference model, more than
    # --host-ram 30; with one (0.6's in fp32) the plan would need 71.2. (0.5.1, this test's release before s91,
    # builds a reference model whatever the algorithm, so refuses --no-reference.)
    monkeypatch.setenv("COLUMNS", "400")
    status, out, err = cli("--model", "8B", "--gpu", "H100", "--len", "32k", "--host-ram", "30",
                           "--no-reference", "--trinity-version", "0.6")
    assert (status, err) == (1, "")
    assert ("within 8 GPUs trains with --host-ram 30 GiB; without --host-ram, Env + SP=2 on 8 GPUs trains it "
            "(32768 tokens), and it needs 30.6 GiB of host memory per node while the model loads\n") in out


def test_the_least_host_need_is_the_least_without_a_reference_model_where_told(
        cli: Cli, monkeypatch: pytest.MonkeyPatch):
    # Qwen3-4B (tied embeddings: every rank loads it) at SP=1 and 20480 tokens: without its reference model's shards
    # 4 GPUs without Offload need the least per node (60.0 GiB); with them, 3 GPUs with Offload would (77.5 against
    # 81.1).
    monkeypatch.setenv("COLUMNS", "400")
    status, out, err = cli("--model", "4B", "--gpu", "A100-80GB", "--len", "20k", "--host-ram", "30", "--sp", "1",
                           "--no-reference")
    assert (status, err) == (1, "")
    assert ("without --host-ram, vanilla on 6 GPUs trains it (20480 tokens), and it needs 89.9 GiB of host memory per "
            "node while the model loads; at the least, vanilla on 4 GPUs trains it (20480 tokens),\nand it needs 60.0 "
            "GiB of host memory per node while the model loads;") in out


def test_the_largest_lora_rank_is_taken_and_one_more_refused():
    assert memory_answer("0.6B", "h100", 1, 4096, lora_rank=65536).lora_rank == 65536
    with pytest.raises(QueryError, match=r"^lora_rank must be a whole number from 0 \(full fine-tuning\) to 65536, "
                                         r"got 65537$"):
        memory_answer("0.6B", "h100", 1, 4096, lora_rank=65537)


def test_a_cell_another_table_refutes_still_vouches_for_lora(tmp_path: Path):
    # A user's 2-GPU table trained Env + SP=2 at 16384; its 4-GPU table ran out of memory there (kept though it
    # contradicts): that refutes the cell for 4 GPUs of full fine-tuning, and says nothing of a LoRA run.
    catalog = refuted_two_gpu_cells(tmp_path)
    full, lora = (memory_answer("8B", "Mine-80GB", 4, 16384, sp=2, env=True, lora_rank=rank, catalog=catalog)
                  for rank in (0, 32))
    assert full.tables is not None and (full.tables.trains, full.tables.source.gpus) == (False, 4)
    assert lora.tables is not None and (lora.tables.trains, lora.tables.evidence) == (True, "inferred")
    assert (lora.tables.source.gpus, lora.tables.source.max_model_len, lora.tables.source.setting) == (
        2, 16384, "Env + SP=2")


def test_a_larger_gpu_types_out_of_memory_cell_caps_no_lora_estimate():
    # H20's 4-GPU table (96 GB, at least H100's 80) says Env + SP=4 of Qwen3-14B runs out of memory at 40960 with
    # full fine-tuning, which caps H100's estimates of it; a LoRA run's are not capped: Env + SP=4 on 4 H100s.
    lora, = plan("14B", gpu="h100", budget_gpus=4, max_model_len=65536, exact=True, lora_rank=32)
    assert lora.best is not None
    assert (lora.best.gpus, lora.best.setting.label, lora.best.evidence) == (4, "Env + SP=4", "estimated")


@pytest.mark.parametrize(("text", "rank", "lines"), [
    # A rank of 0 or below turns no LoRA on: full fine-tuning, counted so, no line.
    (MODEL % "" + ROLE_MODEL % "lora_rank: -1", 0, []),
    # lora_rank turns LoRA on first (verl before 0.8), but the adapter it loads has its own rank: not counted.
    (MODEL % "" + ROLE_MODEL % "lora_rank: 8, lora_adapter_path: /ckpt/adapter", 0,
     [("with LoRA (trainer.trainer_config.actor_rollout_ref.model.lora_rank) the trainer holds gradients and "
       "optimizer states for the adapter alone, but the verdict and the plans count full fine-tuning's, as the tables "
       "measured (it loads an adapter, whose rank is the adapter's own): a LoRA run needs less memory than shown "
       "(conservative: without Offload, LoRA leaves each GPU's shard about 4 of the 16 bytes per parameter counted; "
       "solve --lora-rank RANK counts a new adapter's)")]),
])
def test_a_trinity_05_configs_counted_lora_rank(text: str, rank: int, lines: list[str]):
    assert _counted(text, "0.5") == (rank, lines)


def test_a_lora_config_whose_rank_is_no_whole_number_counts_full_fine_tuning():
    rank, (line,) = _counted(MODEL % ", lora_configs: [{lora_rank: 16.5}]", "0.5")
    assert rank == 0
    assert "as the tables measured (its lora_rank 16.5 is not a whole number): a LoRA run needs less memory" in line


def test_lora_on_every_module_but_all_linear_counts_full_fine_tuning():
    # PEFT's "all" is no target_modules of Trinity's default: a regex PEFT matches whole against each module's full
    # name, so it matches none, and Trinity's dummy adapter fails (lora-configs-refused by the checks, which know the
    # model's names, test_lorarest3_s75; the config's reading counts it as full fine-tuning since peftgap_s77); one
    # that takes the output projection too counts full fine-tuning.
    rank, (line,) = _counted(MODEL % ", lora_configs: [{lora_rank: 16, target_modules: all}]")
    assert rank == 0
    assert "as the tables measured (its target_modules 'all' matches no module): a LoRA run needs less" in line
    rank, (line,) = _counted(MODEL % ", lora_configs: [{lora_rank: 16, target_modules: '.*_proj|lm_head'}]")
    assert rank == 0
    assert "as the tables measured (its target_modules '.*_proj|lm_head' matches lm_head, which all-linear leaves " \
           "out and rft-solver does not count): a LoRA run needs less memory than shown" in line


def test_dynamic_batch_sizes_off_on_every_pass_that_runs_reads_no_budget_where_the_ref_runs_none():
    # RAFT computes no ref log-probs: the actor's two passes, both one sequence per micro-batch, are every pass the
    # verdict counts, so no line names the trainer's budget of 12000, which none of them reads.
    config = _config()
    config["algorithm"] = {"algorithm_type": "raft"}
    assert _verdict(config) == (8192, [
        ("lowered-token-budget", f"{ONE_SEQUENCE}: the verdict is at 8192 tokens per GPU")])


@pytest.mark.parametrize("actor", [{}, {"ppo_max_token_len_per_gpu": 20000}])
def test_one_pass_off_below_the_budget_the_others_read_says_nothing(actor: dict):
    # Trinity 0.5: the actor's training alone has dynamic batch sizes off (one sequence, 8192 tokens per GPU, fewer
    # than the 16384 the ref and the log-prob recompute read): no line, nor one on the actor's own budget, unread.
    config = _config({"actor": {"use_dynamic_bsz": False, **actor}}, use_dynamic_bsz=True, max_token_len_per_gpu=None)
    assert _verdict(config, "0.5") == (None, [])


def test_a_lowered_budget_beside_a_pass_off_is_the_budget_in_effect():
    # The actor's training off (8192 tokens per GPU), the other passes at the trainer's 12000: the most any role
    # takes, the budget the verdict is at with no release named; Trinity 0.5 counts 0.5.0's raise of the ref's and the
    # actor's (which the log-prob recompute takes) to the default (raise05).
    config = _config({"actor": {"use_dynamic_bsz": False}}, use_dynamic_bsz=True)
    below = "trainer.max_token_len_per_gpu 12000 is below Trinity's default ceil(2 x 8192 / 1) = 16384, which the "
    assert _verdict(config) == (12000, [("lowered-token-budget", (
        f"{below}tables measured: the verdict is at 12000 tokens per GPU (each step takes more micro-batches); "
        "Trinity 0.5.0 raises it back to the default: use 0.5.1 or later"))])
    assert _verdict(config, "0.5") == (None, [("token-budget-below-verdict", (
        f"{below}tables measured: Trinity 0.5.0 raises it to 16384, the verdict's budget (any budget below twice the "
        "length over its role's SP), as the verdict counts; 0.5.1 and 0.5.2 keep it, fewer tokens per GPU than the "
        "verdict assumes (so it is cautious; each step takes more micro-batches)"))])


def test_a_count_spent_before_the_first_jobs_turn_names_no_limit():
    # Nothing to go by (no job's ways asked): every job cut short, no time limit estimated.
    ways = fleet_options(Planner(load_catalog(), load_weights(), "auto"), THREE_SHAPES,
                         WaysLimit(questions=0, deadline=math.inf))
    assert (ways.cut_short, ways.wall_clock_cut, ways.covering_time_limit_s) == ((0, 1, 2, 3), False, None)


def test_the_refs_micro_batch_is_not_counted_where_it_runs_no_forward():
    # RAFT computes no ref log-probs: the ref's micro-batch of 4 sequences is never filled, so the verdict counts the
    # actor's passes' one sequence alone.
    config = _config({"ref": {"log_prob_micro_batch_size_per_gpu": 4}})
    config["algorithm"] = {"algorithm_type": "raft"}
    assert _verdict(config) == (8192, [
        ("lowered-token-budget", f"{ONE_SEQUENCE}: the verdict is at 8192 tokens per GPU")])


def test_a_search_that_never_ran_says_raise_the_limit_once_where_no_limit_is_estimated(tmp_path: Path):
    # At 0.01 s the required b and c get no ways: no search runs, and the status line says to raise the limit. Where no
    # limit is estimated (the wall clock cut them), the cut-short line does not say it again.
    path = _write(tmp_path, TWO_REQUIRED)
    fleet = solver.load_fleet(path, load_catalog())
    cut = solver.place(fleet, time_limit_s=0.01).model_copy(update={"ways_time_limit_s": None})
    assert cut.search_never_ran
    assert " ".join(solver.cluster_text(cut, fleet).split()).startswith(
        "status: unknown: time ran out working out the jobs' ways to run, so the search for a placement never ran "
        "(raise time_limit_s) the time limit cut working out the jobs' ways short: b, c got none (the jobs of more "
        "priority are asked first), so no placement was found pool a100")


def test_a_purchase_for_the_jobs_with_ways_names_the_limit_that_would_work_out_the_others(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # 3 questions a second, 1 s: the count ends after the first job's 4 questions; the others, not required (the
    # first is), are left out of the purchase, searched for the first alone: 7 s would likely work them all out (the
    # one shape asked about counted doubled for each new one: test_waysbudget_s72). (--buy counts BUY_WAYS_FACTOR
    # times a placement's: 1.5 a second is its 3, s93.)
    _questions_per_second(monkeypatch, 1.5)
    fleet = THREE_SHAPES.model_dump(exclude_defaults=True)
    fleet["jobs"] = [{**fleet["jobs"][0], "required": True}, *fleet["jobs"][1:]]
    bought = json.loads(cli("cluster", str(fleet_file(fleet, tmp_path)), "--buy", "--time-limit", "1", "--json")[1])
    assert (bought["searched"], bought["ways_cut_short"], bought["ways_time_limit_s"]) == (
        True, ["second", "third", "again"], 7)


def test_a_config_jsons_negative_infinity_is_shown_as_json_writes_it(cli: Cli, tmp_path: Path):
    text = (HF_CONFIGS / "gemma-2-9b.json").read_text(encoding="utf-8")
    path = tmp_path / "config.json"
    path.write_text(text.replace('"final_logit_softcapping": 30.0', '"final_logit_softcapping": -Infinity'),
                    encoding="utf-8")
    assert cli("memory", "--model-config", str(path), "--gpu", "h100", "--gpus", "8", "--len", "32k") == (2, "", (
        f"solve memory: error: --model-config {path}: final_logit_softcapping: expected a finite number above 0 or "
        "null, got -Infinity\n"))


@pytest.mark.parametrize(("changes", "refusal"), [
    # no max_window_layers: transformers' Qwen3 class keeps its default of 28
    ({"use_sliding_window": True, "sliding_window": 4096},
     "use_sliding_window with max_window_layers 28 gives a qwen3 model layers of mixed attention (28 full_attention, "
     "8 sliding_attention of 36), " + VLLM_REFUSES.format(mwl=28)
     + "max_window_layers 0 or 36 (vLLM then windows every layer), or use_sliding_window false"),
    # layer_types null is none given: use_sliding_window decides
    ({"use_sliding_window": True, "sliding_window": 4096, "max_window_layers": 18, "layer_types": None},
     "use_sliding_window with max_window_layers 18 gives a qwen3 model layers of mixed attention (18 full_attention, "
     "18 sliding_attention of 36), " + VLLM_REFUSES.format(mwl=18)
     + "max_window_layers 0 or 36 (vLLM then windows every layer), or use_sliding_window false"),
])
def test_qwen3_mixed_windows_without_max_window_layers_or_with_null_layer_types(tmp_path: Path,
                                                                                changes: dict, refusal: str):
    source = {key: value for key, value in _published("Qwen3-8B").items() if key != "max_window_layers"}
    assert _refusal(tmp_path, {**source, **changes}) == refusal


def test_the_questions_estimated_for_the_shapes_left_are_rounded_up(monkeypatch: pytest.MonkeyPatch):
    # a (pool x, one GPU a node) asks 1 question, b (pool y) 4: 5 for two shapes, and c's shape is new: 5 / 2 more,
    # raised by a half (one part in the two shapes asked: test_waysbudget_s72), 3.75, rounded up: 9 in all (rounded
    # down, 8); at 1 a second, a count above them: 9 // 1 + 1 = 10 s (c asks 4: 9 questions in all).
    _questions_per_second(monkeypatch, 1)
    fleet = Fleet(pools=(Pool(name="x", gpu="A100-80GB", nodes=1, gpus_per_node=1),
                         Pool(name="y", gpu="A100-80GB", nodes=1, gpus_per_node=8)),
                  jobs=(Job(name="a", model="Qwen3-0.6B", max_model_len=4096, pool="x"),
                        Job(name="b", model="Qwen3-4B", max_model_len=8192, pool="y"),
                        Job(name="c", model="Qwen3-8B", max_model_len=8192, pool="y")))
    planner = Planner(load_catalog().for_fleet(fleet), load_weights(), "auto")
    ways = fleet_options(planner, fleet, WaysLimit(questions=2, deadline=math.inf))
    assert (ways.cut_short, planner.asked, ways.covering_time_limit_s) == ((2,), 5, 10)
