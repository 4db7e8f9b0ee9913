"""Tests for session 57's clean-up: the words on a lowered token budget's reach are a function of their arguments
(no state a reason's earlier clause leaves on `_Nearby`); the opening of the line on Trinity 0.6's keys that 0.5
refuses is one helper's; the explanation's best plan says whether it was decided (no tally read before and after);
a query without its pins is made in one place, and so are the words naming the jobs that add a model."""

from __future__ import annotations

import pytest
from command_words import make_query, trinity_config_problems

import solver.explain as explain_module
from solver import load_catalog, plan
from solver.cli.notes import _of_jobs
from solver.explain import _best, _Prober, _reach
from solver.model import prepare
from solver.query import Query
from solver.results import Answer
from solver.rules import COMMAND_OPTIONS
from solver.solve import _lifted_limits_words, _lower_budget_reach_words, _Nearby, _unpinned
from solver.tables import Catalog
from solver.trinity import keys_05_refuses_words
from solver.trinity.reader import load_config_mapping

CATALOG = load_catalog()


def test_the_lowered_budgets_reach_is_worded_alike_before_and_after_a_reason_names_its_plan():
    # On exactly 6 H20s Qwen2.5-7B at 131072: a lowered budget trains it on 4 GPUs (the reason's fewer-GPUs line,
    # `_lifted_limits_words` says it named it), and reaches 126976 on all 6. The reach's words do not depend on
    # whether that line was worded first on the same `_Nearby`; its caller leaves them out.
    query = make_query(CATALOG, gpu="H20-96GB", model="Qwen2.5-7B", max_model_len=131072, budget_gpus=6, exact=True)
    data = prepare(CATALOG, "H20-96GB", query)
    reach = _lower_budget_reach_words(query, _Nearby(CATALOG, query, "H20-96GB"), 63488)
    assert reach.text.startswith("; --token-budget auto reaches 126976 tokens on the 1024-token grid: Env + Offload "
                                 "+ SP=2 on 6 GPUs with max_token_len_per_gpu = 63488 (estimated)")
    nearby = _Nearby(CATALOG, query, "H20-96GB")
    lifted = _lifted_limits_words(CATALOG, data, query, nearby)
    assert lifted.lowered_named and lifted.words.text.endswith(
        "; with --token-budget auto fewer trainer GPUs train 131072 tokens: Env + SP=4 on 4 GPUs with "
        "max_token_len_per_gpu = 40960 (estimated), the other 2 free for rollout")
    assert _lower_budget_reach_words(query, nearby, 63488) == reach
    # The answer's reason names the plan on fewer GPUs, and not the reach too.
    (answer,) = plan("Qwen2.5-7B", gpu="H20-96GB", max_model_len=131072, budget_gpus=6, exact=True,
                     option_names=COMMAND_OPTIONS)  # the query's words
    assert answer.reason == (
        "131072 tokens is beyond what the tables and the memory model's estimates allow for Qwen2.5-7B on H20-96GB on "
        "exactly 6 GPUs: the longest is 63488 on the 1024-token grid (Env + Offload + SP=2 on 6 GPUs, estimated)"
        + lifted.words.text)


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


@pytest.mark.parametrize(("status", "reach", "undecided"), [
    ("infeasible", "1 GPU: none, 2 GPUs: none", 0),
    ("unknown", "1 GPU: unknown (out of time), 2 GPUs: unknown (out of time)", 3),
])
def test_the_explanations_best_plan_says_whether_it_was_decided_and_the_reach_reads_that(
        monkeypatch: pytest.MonkeyPatch, status: str, reach: str, undecided: int):
    # `_best` returns whether its question was decided (its callers read the prober's tally before and after); a
    # count whose longest has no plan reaches none where that was decided, and is unknown where the time limit left it.
    query = make_query(CATALOG, gpu="a100", model="8B", max_model_len=32768, budget_gpus=2, estimate="never")
    data = prepare(CATALOG, "A100-80GB", query)
    prober = _Prober(data, query)
    found, decided = _best(CATALOG, query, prober, objective="max_len", max_model_len=None, budget_gpus=2)
    assert found is not None and found.max_model_len == 51200 and decided and prober.undecided == 0
    assert _reach(CATALOG, prober, data, query) == "1 GPU: 24576, 2 GPUs: 51200"
    answered = explain_module.answer_for

    def no_plan(catalog: Catalog, changed: Query, gpu: str, explained: bool = True) -> Answer:
        return answered(catalog, changed, gpu, explained=explained).model_copy(update={"status": status, "plans": ()})

    monkeypatch.setattr(explain_module, "answer_for", no_plan)
    assert _best(CATALOG, query, prober, budget_gpus=2) == (None, status == "infeasible")
    assert _reach(CATALOG, prober, data, query) == reach and prober.undecided == undecided


def test_a_query_unpinned_frees_every_pinned_setting_and_keeps_the_rest():
    query = make_query(CATALOG, gpu="a100", model="8B", max_model_len=32768, budget_gpus=4, sp=2, env=True,
                       offload=False, host_ram_gb=64.0)
    assert (query.pin_flags, query.pins.model_dump()) == (
        "--sp 2 --env --no-offload", {"sp": 2, "env": True, "offload": False})
    unpinned = _unpinned(query, top=3, objective="max_len")
    assert (unpinned.pin_flags, unpinned.pins.model_dump()) == ("", {"sp": None, "env": None, "offload": None})
    assert unpinned == query.model_copy(update={"sp": None, "env": None, "offload": None, "top": 3,
                                                "objective": "max_len"})
    assert _unpinned(query).host_ram_gb == 64.0 and _unpinned(query).top == query.top


def test_the_jobs_that_give_an_added_model_are_worded_in_one_place():
    # Both notes on a model a config.json added (its shape, its uncounted MTP layers) name the cluster jobs so.
    assert (_of_jobs(()), _of_jobs(["small"]), _of_jobs(["sft-a", "sft-b"])) == (
        "", " (job small)", " (jobs sft-a, sft-b)")
    assert _of_jobs([f"j{index}" for index in range(7)]) == " (jobs j0, j1, j2, j3 and 3 more jobs)"
