"""Tests for session 57's clean-up: the words on a lowered token budget's reach are a function of their arguments
(no state a reason's earlier clause leaves on `_Nearby`); the opening of the line on Trinity 0.6's keys that 0.5
refuses is one helper's."""

from __future__ import annotations

from solver import load_catalog
from solver.model import prepare
from solver.query import make_query
from solver.solve import _lifted_limits_words, _lower_budget_reach_words, _Nearby
from solver.trinity import keys_05_refuses_words, trinity_config_problems
from solver.trinity.reader import load_config_mapping

CATALOG = load_catalog()


def test_the_lowered_budgets_reach_is_worded_alike_before_and_after_a_reason_names_its_plan():
    # On exactly 6 H20s Qwen2.5-7B at 131072: a lowered budget trains it on 4 GPUs (the reason's fewer-GPUs line,
    # `_lifted_limits_words` says it named it), and reaches 126976 on all 6. The reach's words do not depend on
    # whether that line was worded first on the same `_Nearby`; its caller leaves them out.
    query = make_query(CATALOG, gpu="H20-96GB", model="Qwen2.5-7B", max_model_len=131072, budget_gpus=6, exact=True)
    data = prepare(CATALOG, "H20-96GB", query)
    reach = _lower_budget_reach_words(query, _Nearby(CATALOG, query, "H20-96GB"), 63488)
    assert reach.startswith("; --token-budget auto reaches 126976 tokens on the 1024-token grid: Env + Offload + SP=2 "
                            "on 6 GPUs with max_token_len_per_gpu = 63488 (estimated)")
    nearby = _Nearby(CATALOG, query, "H20-96GB")
    lifted = _lifted_limits_words(CATALOG, data, query, nearby)
    assert lifted.lowered_named and lifted.words.endswith(
        "; with --token-budget auto fewer trainer GPUs train 131072 tokens: Env + SP=4 on 4 GPUs with "
        "max_token_len_per_gpu = 40960 (estimated), the other 2 free for rollout")
    assert _lower_budget_reach_words(query, nearby, 63488) == reach


def test_the_keys_05_refuses_are_worded_by_one_helper_which_the_checks_line_opens_with():
    # One key and two: the count picks "a key" or "keys"; the check's line on them goes on to say "remove it/them".
    assert keys_05_refuses_words(["trainer.megatron"]) == (
        "trainer.megatron: a key of Trinity 0.6's trainer, which Trinity 0.5 refuses (its TrainerConfig has no such "
        "key), so the config does not load")
    two = ["trainer.critic_warmup", "trainer.megatron"]
    assert keys_05_refuses_words(two) == (
        "trainer.critic_warmup, trainer.megatron: keys of Trinity 0.6's trainer, which Trinity 0.5 refuses (its "
        "TrainerConfig has no such key), so the config does not load")
    mapping = load_config_mapping("model: {model_path: Qwen/Qwen3-8B, max_model_len: 8192}\n"
                                  "trainer: {megatron: {}, critic_warmup: 0}\n", "t.yaml")
    lines = [problem.words for problem in trinity_config_problems(mapping, CATALOG.model("Qwen3-8B"), 8,
                                                                  environ={}, version="0.5")]
    assert lines == [f"{keys_05_refuses_words(two)}: remove them (--write does)"]
