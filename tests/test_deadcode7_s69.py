"""Lines that the suite did not run after session 69's merges (deadcode7): each test runs one and checks its output."""

from __future__ import annotations

import pytest
from command_words import make_query

from solver.explain import explain, runs
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
        ("rollout_layout", f"{counts}: with the {rollout} rollout GPUs (--rollout-gpus) they fit neither one node of "
                           "8, nor whole nodes with the trainer in one of them, nor with the trainer on whole nodes")]


def test_counted_words_its_numbers_as_the_function_given_and_the_noun_as_their_count_asks():
    assert [counted(numbers, "GPU", runs) for numbers in ([1], [2], [9, 10, 11, 12, 17], [6, 7])] == [
        "1 GPU", "2 GPUs", "9-12, 17 GPUs", "6, 7 GPUs"]
    assert counted([9, 10, 11], "GPU") == "9, 10, 11 GPUs"
