"""Lines that the suite did not run after session 69's merges (deadcode7): each test runs one and checks its output."""

from __future__ import annotations

import json

import pytest
from command_words import make_query

from solver.api import memory_answer
from solver.explain import explain, runs
from solver.memory import MemoryAnswer
from solver.render import memory_text
from solver.solve import plan
from solver.tables import counted, load_catalog

CATALOG = load_catalog()


@pytest.mark.parametrize(("rollout", "counts"), [(4, "5-7 trainer GPUs"), (5, "4-7 trainer GPUs")])
def test_trainer_counts_the_rollout_layout_rules_out_are_worded_as_a_range(rollout: int, counts: str):
    # Three or more trainer GPU counts in a row are one range (as the GPU counts of the other rules are), not a list.
    query = make_query(CATALOG, gpu="a100", model="4B", max_model_len=4096, budget_gpus=7, rollout_gpus=rollout,
                       estimate="never")
    (answer,) = plan(query, CATALOG)
    assert [(reason.rule, reason.detail) for reason in explain(CATALOG, query, answer) if reason.rule != "choice"] == [
        ("rollout_layout", (f"{counts}: with the {rollout} rollout GPUs (--rollout-gpus) they fit neither one node "
                            "of 8, nor whole nodes with the trainer in one of them, nor with the trainer on whole "
                            "nodes"))]


def test_counted_words_its_numbers_as_the_function_given_and_the_noun_as_their_count_asks():
    assert [counted(numbers, "GPU", runs) for numbers in ([1], [2], [9, 10, 11, 12, 17], [6, 7])] == [
        "1 GPU", "2 GPUs", "9-12, 17 GPUs", "6, 7 GPUs"]
    assert counted([9, 10, 11], "GPU") == "9, 10, 11 GPUs"


def test_routed_expert_parameters_count_the_gated_mlps_of_every_routed_expert_and_none_for_a_dense_model():
    # Qwen3-30B-A3B: 48 layers of 128 experts, each a gated MLP of 3 x 2048 x 768; 8 of them active per token.
    moe = CATALOG.model("30B-A3B")
    assert (moe.routed_expert_parameters, moe.idle_expert_parameters) == (48 * 128 * 3 * 2048 * 768,
                                                                          48 * 120 * 3 * 2048 * 768)
    assert (CATALOG.model("8B").routed_expert_parameters, CATALOG.model("8B").idle_expert_parameters) == (0, 0)


def test_memory_text_of_json_made_before_the_host_memory_need_has_no_host_memory_line():
    answer = memory_answer("4B", "h100", 2, max_model_len=8192)
    # Its three lines (s84: they name the ranks loading the model, every rank for the tied Qwen3-4B, as before; s87:
    # and the releases that count less, 0.6 loading it on rank 0 of an H100, 0.5 its reference model in bf16).
    host_lines = [("host memory: 51.1 GiB per node while the model loads (verl reads it in fp32 before FSDP shards it, "
                   "beside the reference model's pinned shards; here every rank"),
                  ("loading the model); trinity_version counts a release's own, less where rank 0 alone loads the "
                   "model (0.6) or verl 0.7 builds the reference model in bf16 and"), "places the pinned blocks (0.5)"]
    lines = memory_text(answer).splitlines()
    older = json.loads(answer.model_dump_json())
    del older["host_memory_gib"]
    start = lines.index(host_lines[0])
    assert lines[start:start + 3] == host_lines
    assert memory_text(MemoryAnswer.model_validate_json(json.dumps(older))).splitlines() == (
        lines[:start] + lines[start + 3:])
