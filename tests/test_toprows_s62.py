"""Ranked plans past the validated length (session 62): a `--top` row whose length is past what the model is known to
handle is marked as the plan's headline marks it, in the text and in each plan's JSON (`past_validated_length`)."""

from __future__ import annotations

import json

import pytest
from rich.console import Console

from solver.explain import _Prober, condensed_runs
from solver.model import prepare
from solver.query import make_query
from solver.render.ranking import ranking_view
from solver.rules import rollout_layout_violation
from solver.solve import plan
from solver.tables import load_catalog

CATALOG = load_catalog()
THIRTY_B_TOP = ("--model", "30B-A3B", "--gpu", "h100", "--gpus", "8", "--maximize", "len", "--top", "3")


def test_a_ranked_row_past_the_validated_length_is_marked_and_its_note_says_what_to_do(cli):
    status, out, err = cli(*THIRTY_B_TOP)
    rows = [line for line in out.splitlines() if line.startswith("│ ")]
    assert (status, err) == (0, "")
    assert [row.split("│")[4].strip() for row in rows] == ["210944^", "105472", "105472"]
    assert ("^ past the validated 131072: check the model's quality at this length, or plan --len 131072"
            in out.splitlines())
    assert "max_model_len  210944, past the validated 131072 (YaRN" in out  # the headline's words, the same number


def test_each_ranked_plan_in_json_holds_the_validated_length_it_is_past(cli):
    status, out, _ = cli(*THIRTY_B_TOP, "--json")
    (answer,) = json.loads(out)
    assert status == 0
    assert [(p["max_model_len"], p["past_validated_length"]) for p in answer["plans"]] == [
        (210944, 131072), (105472, None), (105472, None)]
    assert answer["validated"]["past_validated_length"] is None


def test_a_length_past_the_native_context_on_the_models_own_scaling_is_marked_past_its_native_context(cli):
    status, out, _ = cli("--model", "Llama-3.1-8B", "--gpu", "h100", "--gpus", "8", "--maximize", "len", "--top", "2",
                         "--json")
    (answer,) = json.loads(out)
    best = answer["plans"][0]
    assert status == 0 and best["max_model_len"] > 131072
    assert (best["past_validated_length"], best["yarn_beyond_validated"]) == (131072, False)


def test_within_the_validated_length_no_row_is_marked_and_no_note_is_given(cli):
    status, out, _ = cli(*THIRTY_B_TOP[:-4], "--len", "131072", "--top", "3")
    assert status == 0 and "past the validated" not in out and "^" not in out


def test_the_mark_is_bold_yellow_as_the_headline():
    query = make_query(CATALOG, gpu="h100", model="30B-A3B", budget_gpus=8, objective="max_len", top=2)
    (answer,) = plan(query, CATALOG)
    console = Console(record=True, width=250, color_system="truecolor")
    console.print(ranking_view(answer, CATALOG.model("30B-A3B")).table)
    styled = console.export_text(styles=True)
    assert "\x1b[1;33m      210944^\x1b[0m" in styled


def test_a_long_list_of_sp_degrees_the_gpus_rule_out_is_said_by_the_rule_with_its_count_and_ends(cli):
    status, out, err = cli("--model", "14B", "--gpu", "h100", "--gpus", "48", "--exact", "--len", "1000000",
                           "--explain", "--json")
    (answer,) = json.loads(out)
    reasons = {item["rule"]: item["detail"] for item in answer["explanation"]}
    assert (status, err) == (1, "")
    assert reasons["sp_divides_gpus"] == ("SP must divide the trainer GPUs: on 48 GPUs that rules out every SP up to "
                                          "48 that does not divide 48 (38 degrees: SP=5, 7, 9-11, ..., 25-47)")
    assert len([sp for sp in range(2, 49) if 48 % sp]) == 38
    # The heads' list, which no rule's words give whole, stays whole.
    assert reasons["sp_divides_heads"] == ("SP must divide the 40 attention heads of Qwen3-14B: that rules out SP=3, "
                                           "6, 12, 16, 24, 48 (on 48 GPUs)")


def test_condensed_runs_keeps_a_short_list_whole_and_a_long_one_to_its_first_groups_and_its_last():
    assert condensed_runs([3, 5, 6, 7, 9, 10, 11, 12, 13, 64]) == "3, 5-7, 9-13, 64"
    assert condensed_runs([5, 7, 9, 11, 13, 15]) == "5, 7, 9, ..., 15"
    assert condensed_runs([sp for sp in range(2, 49) if 48 % sp]) == "5, 7, 9-11, ..., 25-47"


@pytest.mark.parametrize(("gpu", "model", "estimate"), [("h100", "32B", "auto"), ("a100", "4B", "auto"),
                                                        ("a100", "14B", "only"), ("h20", "8B", "never"),
                                                        ("4090", "8B", "auto")])
def test_the_table_rows_rule_alone_never_stops_a_gpu_count(gpu: str, model: str, estimate: str):
    # Every count in the model has a row or an estimate of a grid step or more, so the rule of lengths alone leaves
    # each a length: a whole query's minimal core never holds it, and `_why_no_plan` asks for the evidence alone.
    query = make_query(CATALOG, gpu=gpu, model=model, budget_gpus=64, objective="max_len", estimate=estimate)
    data = prepare(CATALOG, CATALOG.gpu(gpu).name, query)
    prober = _Prober(data, query)
    assert data.counts and "table_rows" in prober.active
    assert [n for n in data.counts if prober.first_rule(("table_rows",), gpus=n)] == []


@pytest.mark.parametrize("node_gpus", [1, 2, 4, 6, 8, 16])
def test_a_pools_trainer_room_beside_its_rollout_or_a_node_of_it_always_has_a_layout(node_gpus: int):
    # Why a pool never gets the planner's rollout-leaves-no-layout (`_note_buy` leaves it out): the room the
    # rollout leaves on the pool's nodes, or one whole node of it, is a trainer count with a layout beside it.
    for nodes in range(1, 9):
        for rollout in range(1, nodes * node_gpus):
            room = nodes * node_gpus - rollout
            assert rollout_layout_violation(min(room, node_gpus), rollout, node_gpus) is None


@pytest.mark.parametrize(("gpu", "model", "node_gpus", "estimate"), [
    ("a100", "14B", 8, "auto"), ("a100", "4B", 6, "never"), ("h100", "32B", 8, "auto"), ("4090", "8B", 2, "auto"),
    ("h20", "30B-A3B", 4, "auto")])
def test_the_planners_counts_run_unbroken_from_the_smallest_within_a_node(gpu: str, model: str, node_gpus: int,
                                                                          estimate: str):
    # The other half: a count the planner weighs at or below a pool's room means that room's count (or a node's) is
    # weighed too, so the rollout's layout is never what leaves a pool without a plan.
    query = make_query(CATALOG, gpu=gpu, model=model, budget_gpus=64, node_gpus=node_gpus, objective="max_len",
                       estimate=estimate)
    counts = prepare(CATALOG, CATALOG.gpu(gpu).name, query).counts
    assert list(counts) == [n for n in range(counts[0], 65) if n <= node_gpus or n % node_gpus == 0]
