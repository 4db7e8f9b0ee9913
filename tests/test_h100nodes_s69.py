"""Explanations on nodes of 8 GPUs past one node (s69, an infra engineer's 8 x H100 nodes): the GPU counts that are
not whole nodes are named as ranges, and, maximising the length, among what stops a longer one."""

from __future__ import annotations

from command_words import make_query

from solver.explain import explain
from solver.solve import plan
from solver.tables import load_catalog

CATALOG = load_catalog()

WHOLE_NODES_WORDS = ("GPUs span nodes of 8 (--node-gpus) but are not whole nodes, which a trainer that spans nodes "
                     "must use")


def _reasons(**request: object) -> list[tuple[str, str]]:
    query = make_query(CATALOG, **{"estimate": "never", **request})
    (answer,) = plan(query, CATALOG)
    return [(reason.rule, reason.detail) for reason in explain(CATALOG, query, answer)]


def test_counts_that_are_not_whole_nodes_are_named_as_ranges():
    # 9 to 15 GPUs would cost less than 8, but are not whole nodes (before s69: "9, 10, 11, 12, 13, 14, 15 GPUs").
    reasons = _reasons(gpu="a100", model="0.6B", max_model_len=8192, budget_gpus=15)
    assert reasons[1:] == [("whole_nodes", f"9-15 {WHOLE_NODES_WORDS}")]


def test_the_longest_length_past_a_node_says_why_counts_between_nodes_reach_no_further():
    # The longest context within 16 A100s is on 16 GPUs: 9 to 15 GPUs are never weighed, and what stops the next
    # length names them with the rule (before s69, the explanation never mentioned them).
    reasons = _reasons(gpu="a100", model="0.6B", objective="max_len", budget_gpus=16)
    rules = [rule for rule, _ in reasons]
    assert rules.index("longer") < reasons.index(("whole_nodes", f"9-15 {WHOLE_NODES_WORDS}"))
    assert reasons.count(("whole_nodes", f"9-15 {WHOLE_NODES_WORDS}")) == 1
