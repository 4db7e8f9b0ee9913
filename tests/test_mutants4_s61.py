"""Mutation testing of session 61's new code (helper mutants4): the tests that kill the mutants the session's own
tests let live, each checked to fail on its mutant."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from cluster_api import buy
from ortools.sat.python import cp_model
from test_calstep_s57 import QWEN25_YARN
from test_clusterbuy_s60 import FOUR_JOBS

import solver
import solver.cluster.search
from solver.cluster.search import StopOnInterrupt
from solver.memory import feed_forward_peak_bytes, router_logits_bytes
from solver.tables import DETERMINISTIC_PER_SECOND, Fleet, TableError, load_model_config, shipped_tables_directory

CATALOG = solver.load_catalog()
CONFIGS = Path(__file__).parent / "data" / "hf-configs"
GLM_SMALL = {"model_type": "glm4_moe", "vocab_size": 1000, "hidden_size": 64, "intermediate_size": 200,
             "moe_intermediate_size": 16, "num_hidden_layers": 3, "num_attention_heads": 2, "num_key_value_heads": 2,
             "n_routed_experts": 8, "num_experts_per_tok": 2, "n_shared_experts": 1, "first_k_dense_replace": 1,
             "max_position_embeddings": 4096, "head_dim": 32}
"""A small DeepSeek-like mixture of experts: 3 layers, the first dense, 8 routed experts of which 2 are taken."""


def _config(folder: Path, config: dict[str, object]) -> Path:
    """`config` written to `folder`/config.json; the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


def test_router_logits_count_the_expert_layers_only(tmp_path: Path):
    # 8 experts in 2 of the 3 layers (the first is dense): 8 bytes each a token, and the one-hot's 12 per active one.
    model = load_model_config(_config(tmp_path, {**GLM_SMALL, "output_router_logits": True}))
    assert (model.moe is not None, model.moe.dense_layers, model.router_logits_output) == (True, 1, True)
    assert router_logits_bytes(model) == (8 * 8 * 2, 12 * 2 * 8 * 2) == (128, 384)


def test_a_dense_width_without_dense_layers_counts_for_nothing():
    # A table may give dense_intermediate_size beside no dense layers: no layer has that width, so no peak takes it.
    model = CATALOG.model("30B-A3B")
    assert model.moe is not None and model.moe.dense_layers == 0
    wide = model.model_copy(update={"moe": model.moe.model_copy(update={"dense_intermediate_size": 10**6})})
    assert (wide.moe.dense_width, wide.moe.ffn_width) == (0, 8 * 768)
    assert feed_forward_peak_bytes(wide) == feed_forward_peak_bytes(model) == 12 * 8 * 768 + 4 * 8 * 2048


def test_parameters_exactly_its_idle_experts_are_refused(tmp_path: Path):
    # 48 layers x 120 idle experts x 3 x 2048 x 768 = 27179089920 parameters: a model of exactly that many would have
    # no active parameter (Offload's scale a division by zero), so the catalogue refuses it as it loads.
    shutil.copytree(shipped_tables_directory(), tmp_path, dirs_exist_ok=True)
    models = (tmp_path / "models.yaml").read_text(encoding="utf-8")
    (tmp_path / "models.yaml").write_text(models.replace("    parameters_b: 30.5\n", "    parameters_b: 27.17908992\n"),
                                          encoding="utf-8")
    with pytest.raises(TableError, match="parameters_b 27.17908992 is not more than its idle experts' 27.18B"):
        solver.load_catalog(tmp_path)


def test_solve_cluster_notes_output_router_logits_with_its_job(tmp_path: Path,
                                                               cli: Callable[..., tuple[int, str, str]]):
    qwen3_30b_a3b = json.loads((CONFIGS / "Qwen3-30B-A3B.json").read_text(encoding="utf-8"))
    config = {**qwen3_30b_a3b, "output_router_logits": True}
    folder = _config(tmp_path / "a3b", config)
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: a, gpu: H200, nodes: 1, gpus_per_node: 8}\njobs:\n"
                     f"  - {{name: moe, model_config: {folder}, max_model_len: 8192}}\n", encoding="utf-8")
    status, out, err = cli("cluster", str(fleet))
    assert status == 0 and "moe" in out
    assert "solve cluster: note: a3b (job moe) sets output_router_logits, not counted: " in err


def test_ranked_fewest_gpus_plans_of_a_mixture_of_experts_price_offload_for_its_experts(cli):
    # --minimize gpus with --top ranks by cost apart (a column of its own): with Offload at 9.18 x its dense weight,
    # 16 GPUs without Offload (0.107) dominate every 16-GPU plan with it and 8 GPUs at SP 8 (1.09 and more).
    status, out, err = cli("--model", "30B-A3B", "--gpu", "h100", "--gpus", "16", "--minimize", "gpus", "--len", "64k",
                           "--top", "6", "--json")
    [answer] = json.loads(out)
    assert (status, err) == (0, "")
    assert [(p["gpus"], p["env"], p["offload"], p["sp"]) for p in answer["plans"]] == [
        (4, True, True, 4), (8, True, True, 4), (16, True, False, 8)]


def _four_jobs(required: tuple[str, ...] = ()) -> Fleet:
    """tests/test_clusterbuy_s60.py's four jobs on two nodes of 8, as a `Fleet`, those named `required` marked so."""
    jobs = [{**job, "required": job["name"] in required} for job in FOUR_JOBS["jobs"]]
    return Fleet.model_validate({**FOUR_JOBS, "jobs": jobs})


def test_the_placement_on_a_purchase_gets_what_the_purchase_left_of_the_budget(monkeypatch: pytest.MonkeyPatch):
    # One budget of deterministic time for all the stages: the placement's first stage on the purchase gets 60% of
    # half what the purchase's two stages left, not of the whole; the first on the pools as bought, 60% of the rest.
    works: list[float] = []
    set_limits = solver.cluster.search._set_limits
    monkeypatch.setattr(solver.cluster.search, "_set_limits",
                        lambda cp_solver, work, deadline: works.append(work) or set_limits(cp_solver, work, deadline))
    result = buy(_four_jobs(("a", "b")), catalog=CATALOG, time_limit_s=10)
    # bought GPUs and nodes; priority, the jobs tied in it (s82), length, cost, tie-break on the purchase, then on the
    # pools as bought
    assert result.status == "optimal" and len(works) == 12
    budget = DETERMINISTIC_PER_SECOND * 10
    assert works[0] == 0.6 * budget and 0 < works[2] < 0.3 * budget < works[7] < 0.6 * budget


@pytest.mark.wall_clock  # about the wall clock: keeps the real one
def test_the_placement_on_a_purchase_names_its_own_stages_the_wall_clock_stopped(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(solver.cluster.search, "stopped_by_wall_clock", lambda cp_solver, status: True)
    result = buy(_four_jobs(("a", "b")), catalog=CATALOG)
    assert result.wall_clock_stopped == ("bought GPUs", "bought nodes", "priority", "jobs", "length", "cost",
                                         "tie-break")


@pytest.mark.wall_clock  # about the wall clock: keeps the real one
def test_ctrl_c_as_the_placements_tie_break_ends_leaves_it_unproven(monkeypatch: pytest.MonkeyPatch):
    # solve_stages keeps a tie-break that ends as Ctrl-C comes proven; the purchase's placement says it is not.
    calls: list[int] = []
    solve = StopOnInterrupt.solve

    def interrupted_last(self: StopOnInterrupt, model: object, callback: object) -> object:
        status = solve(self, model, callback)  # type: ignore[arg-type]
        calls.append(status)
        self.caught = self.caught or len(calls) == 6  # the tie-break: the sixth stage (see the test above)
        return status

    monkeypatch.setattr(StopOnInterrupt, "solve", interrupted_last)
    result = buy(_four_jobs(("a", "b")), catalog=CATALOG)
    assert (len(calls), result.interrupted, result.placement_proven) == (6, True, False)
    assert (result.gpus, sorted(placement.job for placement in result.placements)) == (0, ["a", "b"])


def _cut_the_length_stage_short(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fourth stage's CP-SAT status (the length, with jobs not required: bought GPUs, nodes, priority, length)
    read as FEASIBLE where it is OPTIMAL, as where the time limit stops it before its proof."""
    statuses: list[int] = []
    checked = solver.cluster.search.checked

    def length_cut_short(cp_solver: object, model: object, status: int) -> int:
        statuses.append(checked(cp_solver, model, status))  # type: ignore[arg-type]
        return cp_model.FEASIBLE if len(statuses) == 4 else statuses[-1]

    monkeypatch.setattr(solver.cluster.search, "checked", length_cut_short)


def test_a_placement_cut_short_leaves_the_purchase_proven_the_fewest(monkeypatch: pytest.MonkeyPatch):
    # The placement's length stage stopped before it was proven (as by the time limit): the nodes bought are still
    # proven the fewest; only the placement on them is not proven the best.
    _cut_the_length_stage_short(monkeypatch)
    result = buy(_four_jobs(("a", "b")), catalog=CATALOG)
    assert (result.status, result.gpus, result.placement_proven) == ("optimal", 0, False)


COMMANDS = "commands: tables, cluster, calibrate, memory, map, examples, or none to plan\n"


@pytest.mark.parametrize(("argv", "message"), [
    # a command's start, in any case: that command; one letter (t) is no start of one
    (["MEM"], f"solve: error: unknown command 'MEM' (did you mean memory?); {COMMANDS}"),
    (["t"], f"solve: error: unknown command 't'; {COMMANDS}"),
    # another tool's name for an option, one typo off: a character left out, one added, one changed, two swapped
    (["--model", "4B", "--legth", "32k"], "solve: error: unrecognized arguments: --legth 32k (did you mean --len?)\n"),
    (["--model", "4B", "--lengtth", "32k"],
     "solve: error: unrecognized arguments: --lengtth 32k (did you mean --len?)\n"),
    (["--model", "4B", "--lenxth", "32k"],
     "solve: error: unrecognized arguments: --lenxth 32k (did you mean --len?)\n"),
    (["--model", "4B", "--elngth", "32k"],
     "solve: error: unrecognized arguments: --elngth 32k (did you mean --len?)\n"),
    # two typos: no guess; nor for an option written with one hyphen, which is told only an option it names exactly
    (["--model", "4B", "--lxnxth", "32k"], "solve: error: unrecognized arguments: --lxnxth 32k\n"),
    (["--model", "4B", "-lenght", "32k"], "solve: error: unrecognized arguments: -lenght 32k\n"),
])
def test_typo_guesses(cli, argv: list[str], message: str):
    status, out, err = cli(*argv)
    assert (status, out) == (2, "")
    assert err.splitlines()[-1] + "\n" == message


def test_buy_notes_a_yarn_factor_its_placement_replaces(tmp_path: Path, cli):
    # The placement that comes with the purchase is read as a placement's: its plan's YaRN factor (2.0, from 65536
    # tokens) replaces the config's own 4.0, and a note says so, as solve cluster's does.
    folder = _config(tmp_path / "qwen25", QWEN25_YARN)
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: a, gpu: A100-80GB, nodes: 1, gpus_per_node: 8}\njobs:\n"
                     f"  - {{name: long, model_config: {folder}, max_model_len: 65536}}\n", encoding="utf-8")
    status, out, err = cli("cluster", str(fleet), "--buy")
    assert status == 0 and out.startswith("status: optimal; nothing to buy")
    assert ("solve cluster: note: Qwen2.5-14B-Instruct's config.json gives YaRN factor 4.0 (rope_scaling); the plan "
            "uses factor 2.0 in its place") in err


def test_a_placement_cut_short_says_no_room_was_found_for_the_jobs_left_out(
        tmp_path: Path, cli, monkeypatch: pytest.MonkeyPatch):
    _cut_the_length_stage_short(monkeypatch)
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(json.dumps(FOUR_JOBS), encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet), "--buy", "--required", "a,b")
    assert status == 0 and out.startswith("status: optimal; nothing to buy")
    assert "placement not proven the best the purchase allows" in out
    assert ("left out (not required): c, d: no room found for them beside the required jobs on the pools as they "
            "are") in " ".join(out.split())  # nothing bought


def test_the_placement_with_a_purchase_counts_each_pools_gpus_with_the_nodes_bought(tmp_path: Path, cli):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(json.dumps(FOUR_JOBS), encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet), "--buy")
    assert status == 0 and out.startswith("status: optimal; to place every job, buy 16 GPUs (2 nodes), proven the "
                                          "fewest")
    assert "\npool h20: 3 x 8 H20-96GB; 3 nodes and 24 of 24 GPUs used\n" in out


def test_the_placement_with_a_purchase_notes_a_job_that_gives_no_rollout_gpus(tmp_path: Path, cli):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: a, gpu: A100-80GB, nodes: 1, gpus_per_node: 8}\njobs:\n"
                     "  - {name: j, model: Qwen3-4B, max_model_len: 8192}\n", encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet), "--buy")
    assert status == 0 and out.startswith("status: optimal; nothing to buy")
    assert "\nnote: j: no rollout_gpus given, so no GPUs for the explorer here (--emit-dir writes mode: train)" in out


def test_minimize_nodes_counts_a_pools_gpus_against_the_ways_in_that_pool_only(tmp_path: Path, cli):
    # Each job is held to a pool of its own (one node of 8; 6 GPUs at its fewest): the cut on one pool's GPUs counts
    # only the ways in that pool, not the other job's in the other, so both are placed.
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: p1, gpu: A100-80GB, nodes: 1, gpus_per_node: 8}\n"
                     "  - {name: p2, gpu: A100-80GB, nodes: 1, gpus_per_node: 8}\njobs:\n"
                     "  - {name: a, model: Qwen3-8B, max_model_len: 32768, rollout_gpus: 4, pool: p1}\n"
                     "  - {name: b, model: Qwen3-8B, max_model_len: 32768, rollout_gpus: 4, pool: p2}\n",
                     encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet), "--minimize", "nodes", "--json")
    result = json.loads(out)
    assert (status, result["status"]) == (0, "optimal")
    assert sorted((placement["job"], placement["pool"]) for placement in result["placements"]) == [
        ("a", "p1"), ("b", "p2")]
