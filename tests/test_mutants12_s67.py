"""Session 67, mutants12: tests that kill mutants of session 67's later merges which their tests let live (the table
is in /work/keep/review-s67-mutants12-table.md): the ``host limit`` row right after the ``unpinned`` one, the GPUs a
limit costs under --minimize gpus, the question without the pins keeping the host limit where it is asked on its own
(``--top 2``), no host row for a query that gives no limit; the count of the reasons' questions after the search
(rounded up, not one more), the smaller asks cut short at a job's first ask of fewer rollout GPUs (the API's words,
and both asks left named), a job with no way asking none of the hints' count; a job's train batch then rollout in a
reason's words, and the flags' in that order too; the --buy hint for a pool's nodes of 0 alone; a stage's empty
trainer; 1 token in explain's ``more_gpus``, a config's verdict and ``solve memory``'s heading; nodes of 1 GPU in the
--sp refusal and the written whole-nodes note."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from test_clusterbuy_s60 import fleet_file
from test_clusterdet_s67 import FLEET, HINT_NOT_ASKED, LENGTHS, NOT_ASKED, PAIR_WORDS, _unplaced
from test_hostlift_s67 import ASKED, LONGEST, _row
from test_oddlen2_s66 import _catalog
from test_oddlen3_s67 import TINY_CELLS
from test_persona19_s67 import CONFIG

import solver
import solver.cluster.reasons
from solver.query import make_query
from solver.render import answers_text
from solver.tables import load_catalog

Cli = Callable[..., tuple[int, str, str]]
# Trinity 0.5.1 keeps verl's loading (rank 0 alone for these untied models), so that --host-ram 96 leaves plans; with
# no release named every rank loads the model, and none fits on A100s (where 0.6 loads on every rank too).
VERL_LOADING = ("--trinity-version", "0.5.1")
PINNED = (*ASKED, *LONGEST, "--sp", "2", "--host-ram", "96")  # ASKED already names 0.5.1 (VERL_LOADING)
UNPINNED_ROW = ("without --sp 2, the best plan is Env + SP=4 on 4 GPUs at 51200 tokens, cost 0.3282 (documented): the "
                "pin costs 18432 tokens")


def _labels(out: str) -> list[str]:
    """The labels of the summary's rows in `out`, in order (a label, then two spaces or more, then its value)."""
    return [line.split("  ")[0] for line in out.splitlines() if line[:1].isalpha() and "  " in line]


def test_the_host_limit_row_comes_right_after_the_unpinned_row(cli: Cli) -> None:
    status, out, _ = cli(*PINNED)
    labels = _labels(out)
    assert status == 0 and labels[labels.index("unpinned") + 1] == "host limit"


def test_a_host_limit_under_fewest_gpus_costs_the_gpus_between_the_plans(cli: Cli) -> None:
    # 8 GPUs under --host-ram 160 (above what rank 0's loading needs on up to 8; below Offload's), 2 without it:
    # the limit costs 6, not the 2 the better plan takes. 0.5.1's reference model pins bf16 shards: 311.3 GiB.
    status, out, _ = cli("--model", "14B", "--gpu", "a100", "--minimize", "gpus", "--len", "32k", "--gpus", "8",
                         "--host-ram", "160", *VERL_LOADING)
    assert status == 0 and _row(out, "host limit") == [(
        "with 311.3 GiB of host memory per node, the best plan is Env + Offload + SP=2 on 2 GPUs, cost 1.111 "
        "(documented): --host-ram 160 GiB costs 6 GPUs")]


def test_the_question_without_the_pins_keeps_the_host_limit_when_asked_on_its_own(cli: Cli) -> None:
    # With --top 2 the question without the pins is asked after the query's own (not first): it still keeps
    # --host-ram 96, so its best plan is the one without Offload, as with one plan asked.
    status, out, _ = cli(*PINNED, "--top", "2")
    assert status == 0 and _row(out, "unpinned") == [UNPINNED_ROW]
    assert _row(out, "host limit")[0].startswith("with 147.8 GiB of host memory per node, the best plan is Env + "
                                                 "Offload + SP=2 on 6 GPUs at 51200 tokens")


def test_answers_shown_for_a_query_that_gives_no_host_limit_have_no_host_limit_row() -> None:
    (answer,) = solver.plan("8B", gpu="a100", objective="max_len", budget_gpus=6, host_ram_gb=96,
                            trinity_version="0.5.1")  # verl's loading: rank 0 alone, as in VERL_LOADING
    assert answer.more_host_ram is not None
    unlimited = make_query(load_catalog(), model="8B", gpu="a100", objective="max_len", budget_gpus=6)
    text = answers_text([answer], unlimited)
    assert "max_model_len  51200" in text and _row(text, "host limit") == []


@pytest.mark.parametrize(("per_second", "asked"), [(0.35, ("j2", "j3")), (0.6, ("j2", "j3")),
                                                   (0.65, ("j2", "j3", "j4"))])
def test_the_reasons_count_is_its_rate_times_the_limit_rounded_up(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, per_second: float, asked: tuple[str, ...]) -> None:
    # Each shape asks 3 questions, the count looked at before each: 3.5 rounds up to 4 (j3 starts at 3), 6 stops
    # j4 at 6, and 6.5 rounds up to 7 (j4 starts at 6).
    monkeypatch.setattr(solver.cluster.reasons, "REASONS_QUESTIONS_PER_SECOND", per_second)
    unplaced = _unplaced(cli("cluster", str(fleet_file(FLEET, tmp_path)), "--json")[1])
    assert [name for name, job in unplaced.items() if NOT_ASKED not in job["reason"]] == list(asked)
    assert all(PAIR_WORDS.format(LENGTHS[name]) in unplaced[name]["reason"] for name in asked)


ROLLOUT_FLEET = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8},
                           {"name": "pair", "gpu": "H20-96GB", "nodes": 1, "gpus_per_node": 2}],
                 "jobs": [{"name": "j1", "model": "Qwen3-14B", "max_model_len": 98304, "priority": 3},
                          {"name": "j2", "model": "Qwen3-14B", "max_model_len": 32768, "rollout_gpus": 2}]}
"""j1 takes the A100 node; j2's 2 rollout GPUs take all of pair's 2: with none, it would fit pair (its smaller ask)."""


def test_smaller_asks_cut_at_a_jobs_first_ask_of_fewer_rollout_gpus_say_both_asks_left(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = fleet_file(ROLLOUT_FLEET, tmp_path)
    found = solver.place(path).unplaced[0]
    assert found.reason.endswith("; with rollout_gpus 0 (not 2; its explorer on GPUs outside the fleet) it would fit "
                                 "in node 0's 2 idle GPUs in pair (a trainer of 2 GPUs)")
    monkeypatch.setattr(solver.cluster.reasons, "HINTS_QUESTIONS_PER_SECOND", 0)  # none: the first ask is past it
    (cut,) = solver.place(path).unplaced
    assert (cut.job, cut.fits_with) == ("j2", ())
    assert cut.reason == found.reason.split("; with rollout_gpus")[0] + (
        "; whether fewer rollout GPUs or a shorter length would fit it in the idle room was not worked out within the "
        "time limit (raise time_limit_s)")


def test_a_jobs_own_batch_and_rollout_are_named_in_the_order_of_its_limits(tmp_path: Path) -> None:
    # Both are the job's words, not options: the train batch first, then the rollout, as for the flags.
    job = {"name": "j", "model": "8B", "max_model_len": 1000000, "rollout_gpus": 2, "train_batch_size": 96}
    path = fleet_file({"pools": [{"name": "big", "gpu": "a100", "nodes": 30, "gpus_per_node": 3}], "jobs": [job]},
                      tmp_path)
    (left_out,) = solver.place(path).unplaced
    assert ("no count of nodes of 3 GPUs (the pool's gpus_per_node) trains it, even without a train batch of 96 (the "
            "job's train_batch_size) and its 2 rollout GPUs (the job's rollout_gpus) and with token_budget=\"auto\": "
            "an SP group stays within one node, so SP=2 at most;") in left_out.reason


def test_the_flags_batch_and_rollout_are_named_in_the_order_of_the_limits(cli: Cli) -> None:
    status, out, _ = cli("--model", "8B", "--gpu", "a100", "--len", "1000000", "--gpus", "4", "--node-gpus", "3",
                         "--rollout-gpus", "2", "--train-batch-size", "96")
    assert status == 1 and "even without --train-batch-size 96 --rollout-gpus 2 and with --token-budget auto" in (
        " ".join(out.split()))


@pytest.mark.parametrize(("field", "problem"), [
    ("gpus_per_node: 8, nodes: false", "nodes: must be a whole number, got false"),
    ("nodes: 1, gpus_per_node: 0", "gpus_per_node: must be above 0, got 0"),
    ("gpus_per_node: 8, nodes: 1, host_ram_gb: 0", "host_ram_gb: must be above 0, got 0")])
def test_only_a_pools_nodes_of_0_is_told_how_buy_weighs_a_gpu_type(
        cli: Cli, tmp_path: Path, field: str, problem: str) -> None:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: h20, gpu: H20-96GB, " + field + "}\n"
                     "jobs:\n  - {name: ok, model: Qwen3-4B, max_model_len: 32768}\n", encoding="utf-8")
    assert cli("cluster", str(fleet), "--buy") == (2, "", (f"solve cluster: error: {fleet}: line 2: pool h20, "
                                                           f"{problem}\n"))


def test_a_stage_that_sets_an_empty_trainer_is_refused(cli: Cli, tmp_path: Path) -> None:
    # An empty mapping is set, not null: Trinity runs that stage with a trainer of its defaults.
    config = tmp_path / "trinity.yaml"
    config.write_text(CONFIG + "stages:\n  - {stage_name: a, trainer: {}}\n", encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "a100-80g")
    assert (status, out) == (2, "") and err.startswith(
        f"solve: error: --from-config {config}: stages[0] sets trainer: Trinity runs that stage with it in place of "
        "the config's own, whole,")


def test_one_token_that_needs_more_gpus_than_the_budget_needs_them(tmp_path: Path) -> None:
    catalog, _ = _catalog(tmp_path, TINY_CELLS)
    (answer,) = solver.plan("8B", gpu="H800", max_model_len=1, budget_gpus=4, estimate="never", catalog=catalog,
                            explain=True)
    reasons = {reason.rule: reason.detail for reason in answer.explanation}
    assert reasons["more_gpus"].startswith("1 token needs 8 GPUs, 4 more than the budget: SP=8 on 8 GPUs at 1 token "
                                           "(documented")


def test_a_config_of_one_token_runs_at_1_token(cli: Cli, tmp_path: Path) -> None:
    _, cells = _catalog(tmp_path, TINY_CELLS)
    config = tmp_path / "one.yaml"
    config.write_text("mode: train\nalgorithm: {algorithm_type: sft}\nbuffer: {batch_size: 8}\n"
                      "model: {model_path: Qwen/Qwen3-8B, max_model_len: 1}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
                      "trainer: {ulysses_sequence_parallel_size: 8}\n", encoding="utf-8")
    status, out, _ = cli("--cells", str(cells), "--from-config", str(config), "--gpu", "H800", "--no-env")
    assert status == 0 and out.splitlines()[1].startswith("one.yaml runs SP=8 on 8 trainer GPUs at 1 token (Env off")


def test_a_job_with_no_way_asks_no_smaller_asks_of_the_count(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # 3 questions, as in test_clusterdet_s67: j2's asks find its hint within them; j0, which has no way anywhere (no
    # room to hint at), asks none of them, though it comes first.
    monkeypatch.setattr(solver.cluster.reasons, "HINTS_QUESTIONS_PER_SECOND", 0.3)
    nowhere = {"name": "j0", "model": "Qwen3-14B", "max_model_len": 1000000}
    fleet = {**FLEET, "jobs": [FLEET["jobs"][0], nowhere, *FLEET["jobs"][1:]]}
    result = json.loads(cli("cluster", str(fleet_file(fleet, tmp_path)), "--json")[1])
    assert [job["job"] for job in result["unplaced"] if job["fits_with"]] == ["j2"]
    assert [job["job"] for job in result["unplaced"] if HINT_NOT_ASKED in job["reason"]] == ["j3", "j4", "j5"]


def test_a_jobs_smaller_asks_cut_short_name_the_first_ask_left(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # No question: j2 (1 rollout GPU) is cut at its ask of fewer rollout GPUs, and its shorter length, asked after,
    # is left too: it names both; j3 (no rollout) has the shorter length alone to ask.
    monkeypatch.setattr(solver.cluster.reasons, "HINTS_QUESTIONS_PER_SECOND", 0)
    fleet = {**FLEET, "jobs": [FLEET["jobs"][0], {**FLEET["jobs"][1], "rollout_gpus": 1}, *FLEET["jobs"][2:]]}
    unplaced = _unplaced(cli("cluster", str(fleet_file(fleet, tmp_path)), "--json")[1])
    assert unplaced["j2"]["reason"].endswith(
        "; whether fewer rollout GPUs or a shorter length would fit it in the idle room was not worked out within the "
        "time limit (raise --time-limit)")
    assert unplaced["j3"]["reason"].endswith(f"; {HINT_NOT_ASKED}")


def test_one_token_and_nodes_of_one_gpu_are_counted_as_one_in_memory_sp_and_the_written_note(cli: Cli) -> None:
    # Exit 1: the setting does not train (vanilla 8B on one GPU); its heading counts the token.
    status, out, _ = cli("memory", "--model", "8B", "--gpu", "h100", "--gpus", "1", "--len", "1")
    assert status == 1 and out.splitlines()[0] == ("Qwen3-8B (8.2B parameters) on 1 x H100-80GB (79.6 GiB), vanilla, "
                                                   "1 token (2 per GPU), margin 0.01")
    status, out, err = cli("--model", "8B", "--gpu", "h100", "--gpus", "4", "--len", "8k", "--sp", "2",
                           "--node-gpus", "1")
    assert (status, out) == (2, "") and err.endswith(
        "(the degrees that Qwen3-8B's heads allow and that keep an SP group in a node of 1 GPU: 1)\n")
    status, out, _ = cli("--model", "8B", "--gpu", "h100", "--gpus", "2", "--exact", "--len", "8k", "--node-gpus",
                         "1", "--emit", "trinity")
    assert status == 0 and "# The trainer spans 2 whole nodes of 1 GPU: your cluster.node_num" in out
