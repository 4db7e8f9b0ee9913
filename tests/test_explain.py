"""--explain: the rules that rule out cheaper plans, and what stops a query with no plan."""

from __future__ import annotations

import json
import re

import pytest
from command_words import make_query
from conftest import made_up_table
from reference import check_plan

import solver
import solver.explain as explain_module
import solver.solve as solve_module
from solver.explain import _Prober, explain, runs
from solver.model import RULES, prepare
from solver.rules import COMMAND_OPTIONS
from solver.solve import answer_for, plan
from solver.tables import counted, load_catalog

CATALOG = load_catalog()


def explained(**request):
    query = make_query(CATALOG, **{"estimate": "never", **request})
    (answer,) = plan(query, CATALOG)
    return answer, explain(CATALOG, query, answer)


def details(reasons, rule: str) -> list[str]:
    return [reason.detail for reason in reasons if reason.rule == rule]


def test_six_gpus_exact_names_the_divisibility_rules():
    answer, reasons = explained(gpu="a100", model="4B", objective="max_len", budget_gpus=6, exact=True)
    assert answer.plans[0].setting.label == "Env + Offload + SP=2"
    assert "SP must divide the trainer GPUs: on 6 GPUs that rules out SP=4, 5" in details(reasons, "sp_divides_gpus")
    assert ("SP must divide the 32 attention heads of Qwen3-4B: that rules out SP=3, 6 (on 6 GPUs)"
            in details(reasons, "sp_divides_heads"))
    assert "no plan reaches the next length, 61440 tokens:" in details(reasons, "longer")
    assert ("the A100-80GB table for 6 GPUs says '-' for Qwen3-4B from 61440 tokens on: nothing trained there"
            in details(reasons, "no_setting"))
    # 3 and 5 GPUs have no table, but the cells of the tables for fewer GPUs vouch for plans there.
    assert details(reasons, "budget") == ["3-5 GPUs: --exact asks for 6", "1-5 GPUs: --exact asks for 6"]
    # The choice counts the combinations on 6 GPUs apart from those on the counts --exact rules out.
    assert details(reasons, "choice") == [(
        "51200 tokens is the longest length with a plan on exactly 6 GPUs, and Env + Offload + SP=2 on 6 GPUs is the "
        "cheapest plan there; each of the 15 combinations of GPU count, Env, Offload and SP within the budget that "
        "would rank before it (on 6 GPUs) fails a rule, as do the 26 on 3-5 GPUs (of the counts the planner weighs "
        "here: 1-6), which the budget rules out:")]


def test_a_count_that_both_an_exact_budget_and_whole_nodes_rule_out_is_blamed_on_the_budget():
    # On exactly 8 GPUs in nodes of 4, the budget and whole nodes both rule out the A100 table's 6 GPUs: the budget,
    # the first of the GPU count's rules (GPU_RULES), is named, and whole nodes not at all.
    _, reasons = explained(gpu="a100", model="8B", max_model_len=100000, budget_gpus=8, exact=True, node_gpus=4,
                           estimate="auto")
    assert details(reasons, "budget") == ["4, 6 GPUs: --exact asks for 8"] and details(reasons, "whole_nodes") == []


@pytest.mark.parametrize(("request_", "rule", "detail"), [
    # 6 GPUs have a table, so the planner weighs them; 5 it never weighs: both are ruled out by whole nodes.
    ({"budget_gpus": 6, "node_gpus": 4}, "whole_nodes",
     "5, 6 GPUs span nodes of 4 (--node-gpus) but are not whole nodes, which a trainer that spans nodes must use"),
    ({"budget_gpus": 7, "rollout_gpus": 3}, "rollout_layout",
     ("6, 7 trainer GPUs: with the 3 rollout GPUs (--rollout-gpus) they fit neither one node of 8, nor whole nodes "
      "with the trainer in one of them, nor with the trainer on whole nodes")),
])
def test_a_gpu_count_that_the_node_layout_rules_out_has_that_one_reason(request_, rule: str, detail: str):
    # The layout rules out a GPU count whatever its SP degree: not a divisibility rule per degree on it.
    _, reasons = explained(gpu="a100", model="4B", max_model_len=4096, **request_)
    assert [(reason.rule, reason.detail) for reason in reasons if reason.rule not in ("choice",)] == [(rule, detail)]


def test_more_gpus_that_the_rollout_layout_asks_for_are_not_blamed_on_the_length():
    _, reasons = explained(gpu="a100", model="4B", max_model_len=32768, budget_gpus=6, rollout_gpus=8)
    [more] = details(reasons, "more_gpus")
    assert more.startswith("32768 tokens need 2 GPUs, but beside the 8 rollout GPUs (--rollout-gpus) a trainer takes "
                           "8 GPUs, 2 more than the budget (with the 8 rollout GPUs, 16 in all): SP=2 on 8 GPUs")
    # Where the rollout does not change the count, the reason still counts it in the GPUs the job needs.
    _, reasons = explained(gpu="h20", model="14B", max_model_len=65536, budget_gpus=3, rollout_gpus=1)
    assert details(reasons, "more_gpus")[0].startswith(
        "65536 tokens need 4 GPUs, 1 more than the budget (with the 1 rollout GPU, 5 in all): Env + Offload + SP=4 on "
        "4 GPUs at 65536 tokens")
    # A trainer on whole nodes leaves the rollout whole nodes: the GPUs in all are the layout's, not 4 + 1.
    _, reasons = explained(gpu="a100", model="14B", max_model_len=65536, budget_gpus=2, rollout_gpus=1, node_gpus=4)
    assert details(reasons, "more_gpus")[0].startswith(
        "65536 tokens need 4 GPUs, 2 more than the budget (with 4 rollout GPUs, 8 in all: 1 asked, but a trainer on "
        "whole nodes leaves the rollout whole nodes): Env + Offload + SP=4 on 4 GPUs at 65536 tokens")


def test_cheaper_settings_ran_out_of_memory_where_the_source_names_a_costlier_cell():
    answer, reasons = explained(gpu="a100", model="8B", max_model_len=32768, budget_gpus=4, exact=True)
    assert answer.plans[0].setting.label == "SP=4"
    (oom,) = details(reasons, "out_of_memory")
    assert oom.startswith("at 32768 tokens the A100-80GB table for 4 GPUs says 'SP=4'; its cells read as the first "
                          "setting that trained in the order vanilla, Env, SP=2, Env + SP=2, SP=4")
    assert oom.endswith("so vanilla, Env, SP=2, Env + SP=2 ran out of memory there")
    assert details(reasons, "sp_divides_gpus") == ["SP must divide the trainer GPUs: on 4 GPUs that rules out SP=3"]
    assert details(reasons, "budget") == ["6 GPUs: --exact asks for 4"]


def test_an_out_of_memory_reason_between_rows_names_the_row_the_length_falls_to():
    # 18000 tokens falls to the 20480 row, whose cell is SP=2: the 16384 row's Env is no answer (the tables measured
    # no length between), and the reason says which row it reads, as the evidence line does.
    answer, reasons = explained(gpu="a100", model="4B", max_model_len=18000, budget_gpus=2)
    assert answer.plans[0].setting.label == "SP=2"
    (oom,) = details(reasons, "out_of_memory")
    assert oom.startswith("at 20480 tokens, the row that 18000 falls to, the A100-80GB table for 2 GPUs says 'SP=2'; ")
    assert oom.endswith("so vanilla, Env ran out of memory there")


def test_out_of_memory_follows_the_order_the_source_tries_on_that_count(edited_a100_tables):
    # A made-up 8-GPU table whose cell is SP=8: on 8 GPUs the source's order goes on past Env + SP=4 with
    # SP=8, so everything before SP=8 in that order ran out of memory, Env + SP=4 included.
    catalog = edited_a100_tables(lambda text: text + made_up_table(8, "Qwen3-4B", 262144, "SP=8"))
    query = make_query(catalog, gpu="a100", model="4B", max_model_len=262144, budget_gpus=8, exact=True,
                       estimate="never")
    (answer,) = plan(query, catalog)
    assert answer.plans[0].setting.label == "SP=8"
    (oom,) = details(explain(catalog, query, answer), "out_of_memory")
    assert oom == ("at 262144 tokens the A100-80GB table for 8 GPUs says 'SP=8'; its cells read as the first setting "
                   "that trained in the order vanilla, Env, SP=2, Env + SP=2, SP=4, Env + SP=4, SP=8, Env + SP=8, "
                   "Env + Offload, Env + Offload + SP=2, Env + Offload + SP=4, Env + Offload + SP=8 (Trinity-RFT's "
                   "guide advises: start from vanilla, then on OOM add Env, SP, Offload), so vanilla, Env, SP=2, "
                   "Env + SP=2, SP=4, Env + SP=4 ran out of memory there")


@pytest.mark.parametrize("request_", [
    dict(gpu="h20", model="14B", max_model_len=32768, budget_gpus=4),
    dict(gpu="a100", model="4B", objective="max_len", budget_gpus=6),
    dict(gpu="a100", model="1.7B", objective="min_gpus", max_model_len=51200, sp=2),
    dict(gpu="h20", model="0.6B", max_model_len=20000, budget_gpus=6, exact=True, env=True),
    dict(gpu="a100", model="8B", max_model_len=32768, budget_gpus=6, train_batch_size=256),
])
def test_each_cheaper_combination_gets_a_rule_that_really_excludes_it(request_):
    query = make_query(CATALOG, estimate="never", **request_)
    (answer,) = plan(query, CATALOG)
    best = answer.plans[0]
    data = prepare(CATALOG, answer.gpu, query)
    best_rank = next(r for n, e, o, s, r, *_ in data.ranks if (n, e, o, s) == (best.gpus, best.env, best.offload, best.sp))
    cheaper = [(n, e, o, s) for n, e, o, s, r, *_ in data.ranks if r < best_rank]
    length = best.max_model_len if query.objective == "max_len" else None
    classified = dict(_Prober(data, query).classify(cheaper, length))
    assert sorted(classified) == sorted(cheaper)
    model = CATALOG.model(query.model)
    for (n, e, o, s), rule in classified.items():
        holds = {
            "budget": n == query.budget_gpus if query.exact else n <= query.budget_gpus,
            "sp_divides_gpus": n % s == 0,
            "sp_divides_heads": model.num_attention_heads % s == 0,
            "sp_kv_heads": model.num_key_value_heads % s == 0 or s % model.num_key_value_heads == 0,
            "pin_sp": query.sp in (None, s),
            "pin_env": query.env in (None, bool(e)),
            "pin_offload": query.offload in (None, bool(o)),
            "batch_divides": query.train_batch_size is None or n % s != 0 or query.train_batch_size % (n // s) == 0,
        }
        if rule in holds:
            assert not holds[rule], f"{rule} does not exclude {(n, e, o, s)}"
        else:  # documented_cell: the reference finds no cell that vouches for it
            plan_ = {**best.model_dump(mode="json"), "gpus": n, "env": bool(e), "offload": bool(o), "sp": s}
            problems = check_plan(CATALOG, plan_, gpu=answer.gpu, model=query.model, budget_gpus=10 ** 6,
                                  max_model_len=best.max_model_len)
            assert any(problem.startswith("not feasible") for problem in problems), (n, e, o, s, problems)


def test_a_train_batch_rules_out_the_data_parallel_ranks_that_do_not_divide_it():
    # 256 experiences split over 1, 2, 4 or 8 ranks, not 3, 5 or 6: on 6 A100s neither SP=1 (6 ranks) nor SP=2 (3)
    # trains Qwen3-8B, so the cheapest plan is SP=4 on 4 GPUs, where without the batch it is Env + SP=2 on 6.
    answer, reasons = explained(gpu="a100", model="8B", max_model_len=32768, budget_gpus=6, train_batch_size=256)
    best = answer.plans[0]
    assert (best.gpus, best.setting.label, best.cautions) == (4, "SP=4", ())
    rule = "the train batch of 256 (--train-batch-size) must split evenly over the data-parallel ranks (GPUs / SP)"
    assert details(reasons, "batch_divides") == [f"{rule}: on 5 GPUs that rules out SP=1",
                                                 f"{rule}: on 6 GPUs that rules out SP=1, 2"]
    unbatched, _ = explained(gpu="a100", model="8B", max_model_len=32768, budget_gpus=6)
    assert (unbatched.plans[0].gpus, unbatched.plans[0].setting.label) == (6, "Env + SP=2")
    assert unbatched.plans[0].cautions == (
        ("3 data-parallel ranks (6 GPUs / SP=2): Trinity splits each training batch evenly over them, so "
         "buffer.train_batch_size (batch_size x repeat_times) must be a multiple of 3; give --train-batch-size to plan "
         "for yours"),)
    # A batch that 3 ranks divide keeps the plan on 6 GPUs, and then no caution is needed.
    divided, _ = explained(gpu="a100", model="8B", max_model_len=32768, budget_gpus=6, train_batch_size=96)
    assert (divided.plans[0].gpus, divided.plans[0].setting.label, divided.plans[0].cautions) == (6, "Env + SP=2", ())


def test_a_dpo_train_batch_rules_out_the_ranks_whose_pairs_do_not_divide_it():
    # coverage92: 6 experiences split over 6 ranks, not in DPO's pairs (12 rows per step over them): on 6 A100s SP=1
    # is ruled out for DPO alone, and the reason says the pairs.
    _, reasons = explained(gpu="a100", model="8B", max_model_len=32768, budget_gpus=6, train_batch_size=6)
    assert details(reasons, "batch_divides") == []
    answer, reasons = explained(gpu="a100", model="8B", max_model_len=32768, budget_gpus=6, train_batch_size=6,
                                dpo=True)
    assert (answer.plans[0].gpus, answer.plans[0].setting.label) == (6, "Env + SP=2")
    assert details(reasons, "batch_divides") == [(
        "the train batch of 6 (--train-batch-size) must split evenly over the data-parallel ranks (GPUs / SP) in DPO's "
        "pairs, 2 x the ranks: on 6 GPUs that rules out SP=1")]


def test_a_train_batch_that_no_layout_divides_is_named_as_the_limit():
    answer, reasons = explained(gpu="a100", model="8B", max_model_len=32768, budget_gpus=6, exact=True, sp=2,
                                train_batch_size=256)
    assert answer.plans == ()
    (limit,) = details(reasons, "limit")
    assert limit == ("no plan passes these rules together: the budget (on exactly 6 GPUs); the data-parallel ranks "
                     "(trainer GPUs / SP) must divide the train batch of 256 (--train-batch-size); the pins (--sp 2)")
    assert "trains with --sp 2 --train-batch-size 256" in answer.reason


def test_a_train_batch_no_rank_count_divides_is_named_where_memory_stops_the_count_asked_for():
    # Nothing trains 131072 tokens on 3 A100s (the evidence alone, a minimal core): the SP lines name what rules out
    # each degree there, SP=1 too (3 ranks do not divide 256), not only SP=2 and SP=3 (hints88).
    _, reasons = explained(gpu="a100", model="8B", max_model_len=131072, budget_gpus=3, exact=True,
                           train_batch_size=256)
    assert details(reasons, "limit")[0].endswith("(longest per GPU count: 3 GPUs: none)")
    assert details(reasons, "batch_divides") == [(
        "the train batch of 256 (--train-batch-size) must split evenly over the data-parallel ranks (GPUs / SP): on 3 "
        "GPUs that rules out SP=1")]


def test_a_train_batch_from_a_config_is_named_by_its_keys_in_the_limit_and_the_reasons():
    source = "buffer.batch_size x algorithm.repeat_times"
    answer, reasons = explained(gpu="a100", model="8B", max_model_len=32768, budget_gpus=6, exact=True, sp=2,
                                train_batch_size=256, train_batch_source=source)
    (limit,) = details(reasons, "limit")
    assert limit == ("no plan passes these rules together: the budget (on exactly 6 GPUs); the data-parallel ranks "
                     f"(trainer GPUs / SP) must divide the train batch of 256 ({source}); the pins (--sp 2)")
    assert f"trains with --sp 2 and a train batch of 256 ({source})" in answer.reason
    _, reasons = explained(gpu="a100", model="8B", max_model_len=32768, budget_gpus=6, train_batch_size=256,
                           train_batch_source=source)
    assert details(reasons, "batch_divides")[-1] == (
        f"the train batch of 256 ({source}) must split evenly over the data-parallel ranks (GPUs / SP): on 6 GPUs "
        "that rules out SP=1, 2")


def test_a_train_batch_allows_sp_as_large_as_the_largest_gpu_count():
    # One data-parallel rank (SP=8 on 8 GPUs) takes any batch: the batch leaves the plan as it is.
    answer, _ = explained(gpu="a100", model="8B", max_model_len=131072, budget_gpus=8, exact=True, estimate="auto",
                          train_batch_size=256)
    assert [(p.gpus, p.setting.label) for p in answer.plans] == [(8, "Env + SP=8")]


def test_a_length_only_a_batch_the_ranks_divide_reaches_says_which_batch_would():
    # 4 experiences split over 1, 2 or 4 ranks: at SP=1 that is at most 4 GPUs, which reach 4096 tokens where 8
    # reach 13312.
    (answer,) = plan(make_query(CATALOG, gpu="a100", model="14B", budget_gpus=8, sp=1, offload=False,
                                max_model_len=13312, train_batch_size=4), CATALOG)
    assert answer.plans == () and answer.reason == (
        "13312 tokens is beyond what the tables and the memory model's estimates allow for Qwen3-14B on A100-80GB "
        "within 8 GPUs with --sp 1 --no-offload --train-batch-size 4: the longest is 4096 (Env on 4 GPUs, "
        "documented); a train batch that 8 data-parallel ranks divide (the nearest to 4: 8) lets Env on 8 GPUs "
        "train it (13312 tokens, "
        "estimated, extrapolated); --token-budget auto reaches 7168 tokens on the 1024-token grid: Env on 4 GPUs with "
        "max_token_len_per_gpu = 7168 (estimated)")  # at the batch's 4 ranks, as the longest


def test_no_plan_names_the_binding_limit_and_the_nearest_plans():
    answer, reasons = explained(gpu="a100", model="14B", max_model_len=8192, budget_gpus=1, offload=False)
    assert answer.plans == ()
    (limit,) = details(reasons, "limit")
    assert limit.startswith("no plan passes these rules together: the budget (within 1 GPU); the pins (--no-offload)")
    assert details(reasons, "more_gpus") == [
        "8192 tokens need 4 GPUs, 3 more than the budget: Env + SP=2 on 4 GPUs at 8192 tokens "
        "(documented: the A100-80GB table for 4 GPUs says 'Env + SP=2' at 8192)"]
    # The plan without the pin ends with the caution it carries (cautions90: before, none, where no plan is the best):
    # its Offload needs more host memory than one GPU's share of a node, which nothing checks.
    assert details(reasons, "without_pins") == [
        "without --no-offload: Env + Offload on 1 GPU at 8192 tokens (documented: the A100-80GB table for 1 GPU "
        "says 'Env + Offload' at 8192; one trainer GPU: Trinity-RFT's guide strongly advises more GPUs); caution: "
        "Offload needs 351.6 GiB of host memory per node, more than the 128 GiB assumed for its one trainer GPU there "
        "(128 GiB per GPU, as servers commonly have: a DGX A100's 1 TB for 8; --node-gpus counts all of a node's GPUs), "
        "and nothing checks it: give --host-ram what a node can spare for the trainer (free -g's total less what the OS, "
        "Ray and the rollout take) to check it; --trinity-version counts a release's own, less where verl 0.7 builds the "
        "reference model in bf16 and places the pinned blocks (0.5)"]


@pytest.mark.parametrize(("request_", "rule"), [
    ({"gpu": "h20", "model": "8B", "max_model_len": 131072, "budget_gpus": 4}, "lower_token_budget"),
    ({"gpu": "a100", "model": "14B", "max_model_len": 8192, "budget_gpus": 1, "offload": False}, "without_pins"),
])
def test_the_plans_a_reason_names_are_the_answers_own_and_not_solved_again(
        request_, rule: str, monkeypatch: pytest.MonkeyPatch):
    query = make_query(CATALOG, estimate="auto", **request_)
    (answer,) = plan(query, CATALOG)
    alternative = answer.alternatives.token_budget_auto if rule == "lower_token_budget" else \
        answer.alternatives.without_pins
    assert alternative is not None and "alternatives" not in answer.as_json()
    asked = []  # the queries the explanation solves itself

    def solved(catalog, changed, *args, **kwargs):
        asked.append(changed)
        return answer_for(catalog, changed, *args, **kwargs)

    monkeypatch.setattr("solver.explain.answer_for", solved)
    (detail,) = details(explain(CATALOG, query, answer), rule)
    evidence = alternative.with_single_gpu_caution(alternative.evidence_text(answer.gpu, answer.model))
    named = detail.split("; caution: ")[0]  # its cautions follow it (cautions90)
    assert named.endswith(f"{alternative.setting.label} on {counted(alternative.gpus, 'GPU')} at "
                          f"{alternative.max_model_len} tokens{alternative.lowered_words} ({evidence})")
    assert asked and all(changed.token_budget == "default" and changed.offload == query.offload for changed in asked)


def test_a_length_beyond_the_tables_offers_a_shorter_one():
    _, reasons = explained(gpu="h20", model="8B", max_model_len=131072, budget_gpus=4)
    assert details(reasons, "limit") == [
        "no plan passes this rule: nothing in the tables vouches for Qwen3-8B on H20-96GB at 131072 tokens within 4 "
        "GPUs (longest per GPU count: 1 GPU: 28672, 2 GPUs: 61440, 3 GPUs: 28672, 4 GPUs: 122880)"]  # the budget's
    assert details(reasons, "shorter_length")[0].startswith(
        "within 4 GPUs the longest length with a plan is 122880 tokens (8192 fewer): Env + Offload + SP=4 on 4 GPUs")
    assert details(reasons, "more_gpus") == [
        "no count of H20-96GB GPUs up to 64 trains Qwen3-8B at 131072 tokens, at Trinity's default token budget, by "
        "the tables; the default token budget is the max_token_len_per_gpu the tables measure; --no-estimate turns "
        "off the estimates"]
    _, reasons = explained(gpu="h20", model="8B", max_model_len=131072, budget_gpus=4, estimate="auto")
    assert details(reasons, "more_gpus")[0].startswith("131072 tokens need 8 GPUs, 4 more than the budget: ")
    assert details(reasons, "fewer_tokens") == [(
        "prompt and response together (max_prompt_tokens + max_response_tokens) must then fit in 122880 tokens, which "
        "is max_token_len_per_gpu = 61440 on each of 4 GPUs with SP=4")]


def test_a_shorter_length_on_one_gpu_gives_its_token_budget_in_words_for_one():
    _, reasons = explained(gpu="a100", model="4B", max_model_len=65536, budget_gpus=1, estimate="never")
    assert details(reasons, "fewer_tokens") == [(
        "prompt and response together (max_prompt_tokens + max_response_tokens) must then fit in 28672 tokens, which "
        "is max_token_len_per_gpu = 57344 on its 1 GPU with SP=1")]


def test_a_length_beyond_the_estimates_gives_the_longest_per_gpu_count_and_where_it_comes_from():
    _, reasons = explained(gpu="a100", model="14B", max_model_len=400000, budget_gpus=8, estimate="auto")
    (limit,) = details(reasons, "limit")
    assert limit.startswith("no plan passes this rule: nothing in the tables and the memory model's estimates "
                            "vouches for Qwen3-14B on A100-80GB at 400000 tokens within 8 GPUs (longest per GPU count: "
                            "1 GPU: 24576, 2 GPUs: 40960, 3 GPUs: ")
    longest = dict(re.findall(r"(\d+ GPUs?): (\d+(?: \([^)]*\))?)", limit))
    assert longest["4 GPUs"] == "92160" and longest["7 GPUs"] == "24576"  # inferred from the tables
    (answer,) = plan(make_query(CATALOG, gpu="a100", model="14B", objective="max_len", budget_gpus=8, exact=True),
                     CATALOG)
    assert longest["8 GPUs"] == f"{answer.plans[0].max_model_len} (estimated, extrapolated)"  # SP=8: past SP=4


def test_a_model_without_tables_says_so():
    # With estimates off nothing speaks for it: the step says so in its own words, not by pointing to the reason.
    answer, reasons = explained(gpu="a100", model="32B", max_model_len=8192)
    assert answer.reason == ("the tables have no Qwen3-32B on A100-80GB; the memory model estimates a plan, Env + "
                             "Offload on 6 GPUs at 8192 tokens: drop --no-estimate")
    assert [(r.rule, r.detail) for r in reasons] == [("no_table", (
        "no A100-80GB table names Qwen3-32B, for any GPU count; estimates are off (--no-estimate)"))]


_RELOADED_ON_6_H20S = ("Env 167.7 GiB of 87.9 usable; Env + SP=2 128.0 GiB of 87.9 usable; Env + Offload 97.53 GiB at "
                       "the optimizer step, more than the 92.73 it may take, and the PPO critic's own update takes "
                       "110.88 GiB of the 87.85 usable; with --critic none or --critic offloaded the memory model fits "
                       "it; Env + Offload + SP=2 97.53 GiB at the optimizer step, more than the 92.73 it may take, and "
                       "the PPO critic's own update takes 98.09 GiB of the 87.85 usable; with --critic none or --critic "
                       "offloaded the memory model fits it")


@pytest.mark.parametrize(("flags", "rule", "detail"), [
    ((), "memory_model", ("on 6 GPUs: no H20-96GB table names Qwen3-30B-A3B; the memory model predicts at 32768 "
                          f"tokens: {_RELOADED_ON_6_H20S}")),
    (("--estimate",), "memory_model", ("on 6 GPUs: the tables set aside (--estimate); the memory model predicts at "
                                       f"32768 tokens: {_RELOADED_ON_6_H20S}")),
    (("--no-estimate",), "no_table", ("no H20-96GB table names Qwen3-30B-A3B, for any GPU count; estimates are off "
                                      "(--no-estimate)")),
])
def test_where_no_gpu_count_holds_a_plan_the_explanation_names_the_cause_in_text_and_json(cli, flags, rule, detail):
    # explain93: with a reloaded critic the memory model fits no count of H20s, so no planning model is built; --explain
    # printed "no_table  the reason above". Now each setting SP, Env and Offload allow on the 6 GPUs gets its figures
    # (SP=4 and 6 do not divide them, or the 32 heads), and the text and JSON say the same.
    asked = ("--model", "30B-A3B", "--gpu", "h20", "--gpus", "6", "--exact", "--len", "32k", "--critic", "reloaded",
             "--explain", *flags)
    status, out, _ = cli(*asked)
    assert status == 1 and " ".join(out.split()).endswith(f" why {rule} {detail}")
    status, out, _ = cli(*asked, "--json")
    [answer] = json.loads(out)
    assert status == 1 and answer["explanation"] == [{"rule": rule, "detail": detail}]


_NOTHING_FITS_ON_A10 = ("the tables have no Llama-3.1-70B on A10-24GB, and with a reloaded PPO critic the memory model "
                        "estimates that nothing fits (not even 1024 tokens)")


@pytest.mark.parametrize(("gpus", "reason", "why"), [
    (12, ("whole_nodes", ("12 GPUs span nodes of 8 (--node-gpus) but are not whole nodes, which a trainer that spans "
                          "nodes must use")), "12 GPUs span nodes of 8 (--node-gpus) but are not whole nodes"),
    (72, ("memory_model", ("on 72 GPUs: no table speaks for A10-24GB (none has its memory); the memory model estimates "
                           "no count past 64 GPUs")), "the memory model estimates no count past 64 GPUs"),
])
def test_where_no_gpu_count_holds_a_plan_an_exact_count_never_estimated_says_why(gpus, reason, why):
    # No A10 count holds Llama-3.1-70B with a reloaded critic: an exact count the memory model never weighs gets no
    # figures (it gave them for 12 GPUs, which a trainer may not take on nodes of 8), but the reason it is not weighed.
    # smalls93b: the answer's own reason blamed memory alone (no-table-for-model); it names the same cause first.
    answer, reasons = explained(gpu="a10", model="Llama-3.1-70B", max_model_len=8192, budget_gpus=gpus, exact=True,
                                critic="reloaded", estimate="auto")
    assert [(r.rule, r.detail) for r in reasons] == [reason]
    assert answer.reason_code == "exact-count-has-no-plan" and answer.reason == (
        f"no plan for exactly {gpus} trainer GPUs with Llama-3.1-70B on A10-24GB: {why}; on fewer GPUs, "
        f"{_NOTHING_FITS_ON_A10}")


@pytest.mark.parametrize(("request_", "reason"), [
    ({"budget_gpus": 8, "exact": True}, _NOTHING_FITS_ON_A10),  # a count the estimates weigh: memory is the cause
    ({"budget_gpus": 12}, _NOTHING_FITS_ON_A10),  # a budget, not an exact count: 12 is never what is asked
    ({"budget_gpus": 12, "exact": True, "estimate": "never"},  # no table at any count, whatever the nodes
     "the tables have no Llama-3.1-70B on A10-24GB"),
])
def test_where_no_gpu_count_holds_a_plan_memory_or_tables_stay_the_cause_elsewhere(request_, reason):
    answer = answer_for(CATALOG, make_query(CATALOG, **{"gpu": "a10", "model": "Llama-3.1-70B", "max_model_len": 8192,
                                                        "critic": "reloaded", "estimate": "auto", **request_}),
                        "A10-24GB", explained=False)
    assert answer.reason_code == "no-table-for-model" and answer.reason == reason


def test_with_estimate_alone_a_count_is_not_said_to_lack_a_table_that_names_the_model(cli):
    # The A100's table for 2 GPUs has Qwen3-8B: with --estimate it was set aside, not missing ("no A100-80GB table
    # names Qwen3-8B" was false).
    status, out, _ = cli("--model", "8B", "--gpu", "a100", "--gpus", "2", "--exact", "--len", "32768", "--estimate",
                         "--explain", "--json")
    [answer] = json.loads(out)
    assert status == 0 and details([solver.Reason(**step) for step in answer["explanation"]], "memory_model") == [(
        "on 2 GPUs: the tables set aside (--estimate); the memory model predicts at 32768 tokens: Env 152.8 GiB of 73.5 "
        "usable; Env + Offload 90.0 GiB of 73.5 usable; Env + SP=2 111.5 GiB of 73.5 usable; vanilla, Offload, SP=2 and "
        "Offload + SP=2 not estimated (estimates turn Env on unless --no-env)")]


def test_where_no_gpu_count_holds_a_plan_each_sp_degree_is_shown_on_its_largest_count():
    # Within 6 GPUs SP=4 runs on 4 alone, SP=1 and 2 on up to 6: each on the most GPUs that run it, where the memory
    # model fits the most; maximising the length, at its grid's first step.
    _, reasons = explained(gpu="h20", model="30B-A3B", objective="max_len", budget_gpus=6, critic="reloaded",
                           estimate="auto")
    assert [(r.rule, r.detail.split(" tokens: ")[0]) for r in reasons] == [
        ("memory_model", ("on 4 GPUs, the most within the budget for SP=4: no H20-96GB table names Qwen3-30B-A3B; "
                          "the memory model predicts at 1024")),
        ("memory_model", ("on 6 GPUs, the most within the budget for SP=1, 2: no H20-96GB table names Qwen3-30B-A3B; "
                          "the memory model predicts at 1024"))]
    assert [re.findall(r"(?:^|; )(Env[^;]*?) \d", r.detail.split(" tokens: ")[1]) for r in reasons] == [
        ["Env + SP=4", "Env + Offload + SP=4"], ["Env", "Env + SP=2", "Env + Offload", "Env + Offload + SP=2"]]


def test_explanations_are_deterministic():
    first = explained(gpu="a100", model="4B", objective="max_len", budget_gpus=6)[1]
    assert first == explained(gpu="a100", model="4B", objective="max_len", budget_gpus=6)[1]


def test_rules_are_named_in_a_fixed_order():
    assert RULES.index("budget") < RULES.index("sp_divides_gpus") < RULES.index("evidence")


def test_cli_explain_adds_the_explanation(cli):
    status, out, err = cli("--maximize", "len", "--gpus", "6", "--model", "4B", "--exact", "--gpu", "a100-80g",
                           "--explain")
    assert (status, err) == (0, "")
    words = " ".join(out.split())
    # On exactly 6 GPUs: SP=4 does not divide 6, SP=3 and 6 do not divide 4B's 32 heads, so SP=2 (51200) is the longest.
    choice = ("why choice 51200 tokens is the longest length with a plan on exactly 6 GPUs, and Env + Offload + SP=2 "
              "on 6 GPUs is the cheapest plan there")
    rules = ("budget 3-5 GPUs: --exact asks for 6 sp_divides_gpus SP must divide the trainer GPUs: on 6 GPUs that "
             "rules out SP=4, 5 sp_divides_heads SP must divide the 32 attention heads of Qwen3-4B: that rules out "
             "SP=3, 6")
    assert "\nwhy\n" in out and choice in words and rules in words
    status, out, _ = cli("--maximize", "len", "--gpus", "6", "--model", "4B", "--gpu", "a100-80g", "--explain",
                         "--json")
    (answer,) = json.loads(out)
    assert all(set(item) == {"rule", "detail"} for item in answer["explanation"])
    status, out, _ = cli("--maximize", "len", "--gpus", "6", "--model", "4B", "--gpu", "a100-80g", "--json")
    assert "explanation" not in json.loads(out)[0]


H100_CAPPED = ("(none has its memory; the A100-80GB and H20-96GB tables, whose GPUs have at least its memory, cap its "
               "estimates where they say a setting ran out of memory)")
"""What an explanation says of the tables for a GPU type of no table's memory, less than the A100's (the H100's)."""


def test_estimated_answers_are_explained_by_the_memory_model():
    answer, reasons = explained(gpu="h100", model="Qwen2.5-7B", objective="max_len", budget_gpus=6, exact=True,
                                estimate="auto")
    best = answer.plans[0]
    assert best.evidence == "estimated" and best.sp in (1, 2)
    assert f"no plan reaches the next length, {best.max_model_len + 1024} tokens:" in details(reasons, "longer")
    # No A100 or H20 table has Qwen2.5-7B: none caps its estimates either.
    assert any(d.startswith("on 6 GPUs: no table speaks for H100-80GB (none has its memory); the memory model")
               for d in details(reasons, "memory_model"))
    assert any("SP must divide the 28 attention heads of Qwen2.5-7B" in d for d in details(reasons, "sp_divides_heads"))


def test_a_gpu_count_is_limited_by_its_table_or_its_longest_estimate(edited_a100_tables):
    # The length rule keeps documented plans on their count's rows and estimated ones below their count's
    # longest estimate even when the explanation relaxes the other rules one by one. Every source table ends
    # in '-' rows: that measurement, not the table's end, stops a count.
    _, reasons = explained(gpu="a100", model="0.6B", objective="max_len", budget_gpus=2)
    assert ("the A100-80GB table for 1 GPU says '-' for Qwen3-0.6B at 32768 tokens, where its rows end: "
            "nothing trained there" in details(reasons, "no_setting"))
    assert not details(reasons, "beyond_table")
    # A table whose last row still trains ends there.
    catalog = edited_a100_tables(lambda text: text + made_up_table(8, "Qwen3-4B", 131072, "SP=8"))
    query = make_query(catalog, gpu="a100", model="4B", objective="max_len", budget_gpus=8, exact=True,
                       estimate="never")
    (answer,) = plan(query, catalog)
    assert answer.plans[0].max_model_len == 131072
    assert ("the A100-80GB table for 8 GPUs ends at 131072 tokens, where Qwen3-4B still trains; nor does a cell of a "
            "table for fewer GPUs vouch" in details(explain(catalog, query, answer), "beyond_table"))
    _, reasons = explained(gpu="h100", model="14B", objective="max_len", budget_gpus=8, estimate="auto")
    # The A100's table for 4 GPUs, whose GPU has at least the H100's memory, says '-' at 102400.
    found = details(reasons, "memory_model")
    assert (f"on 4 GPUs: no table vouches for H100-80GB {H100_CAPPED}; the memory model's longest fitting "
            "length there is 92160 tokens, no further: the A100-80GB table for 4 GPUs, whose GPU has at least this "
            "one's memory, says Env + Offload + SP=4 ran out of memory at 102400") in found
    # Where the memory model stops by itself, no table is named.
    assert (f"on 3 GPUs: no table vouches for H100-80GB {H100_CAPPED}; the memory model's longest fitting "
            "length there is 23552 tokens") in found
    # One setting asked for: where the memory model fits it, the larger GPU's table that caps it is named.
    _, reasons = explained(gpu="h100", model="14B", max_model_len=45056, budget_gpus=2, exact=True, estimate="auto",
                           env=True, offload=True, sp=2)
    assert details(reasons, "memory_model") == [(
        f"on 2 GPUs: no table vouches for H100-80GB {H100_CAPPED}; the memory model predicts at 45056 tokens: "
        "Env + Offload + SP=2 71.0 GiB of 73.2 usable, but the A100-80GB table for 2 GPUs, whose GPU has at least "
        "this one's memory, says it ran out of memory at 51200")]
    _, reasons = explained(gpu="h100", model="14B", max_model_len=51200, budget_gpus=2, exact=True, estimate="auto",
                           env=True, offload=True, sp=2)
    assert details(reasons, "memory_model") == [(  # where it does not fit, the model's own figures say why
        f"on 2 GPUs: no table vouches for H100-80GB {H100_CAPPED}; the memory model predicts at 51200 tokens: "
        "Env + Offload + SP=2 79.9 GiB of 73.2 usable")]
    _, reasons = explained(gpu="h200", model="14B", objective="max_len", budget_gpus=8, estimate="auto")
    assert any(detail.startswith("on 4 GPUs: no table speaks for H200-141GB (none has its memory); the memory model's "
                                 "longest fitting length there is ") for detail in details(reasons, "memory_model"))


@pytest.mark.wall_clock  # about the wall clock: keeps the real one
def test_an_explanation_shares_one_deadline_and_says_when_it_ran_out(monkeypatch: pytest.MonkeyPatch):
    query = make_query(CATALOG, gpu="a100", model="4B", objective="max_len", budget_gpus=6, exact=True,
                       estimate="never", time_limit_s=5)
    (answer,) = plan(query, CATALOG)
    clock = iter([0.0])  # the deadline is set at 0 s; every later look at the clock is long past it
    monkeypatch.setattr("solver.explain.monotonic", lambda: next(clock, 1e9))
    reasons = explain(CATALOG, query, answer)
    assert [r.rule for r in reasons if r.rule in RULES] == []  # no question was put to CP-SAT, no rule named
    (incomplete,) = details(reasons, "incomplete")
    assert incomplete.endswith("of the questions behind this explanation ran out of time (--time-limit 5 s for the "
                               "whole explanation): what they would have shown is missing above; a longer "
                               "--time-limit shows it")
    monkeypatch.undo()
    assert details(explain(CATALOG, query, answer), "incomplete") == []  # with the time it needs: complete


@pytest.mark.wall_clock  # about the wall clock: keeps the real one
def test_a_no_plan_explanation_out_of_time_states_nothing_it_did_not_decide(monkeypatch: pytest.MonkeyPatch):
    # Qwen3-14B at 131072 tokens on 4 A100s has no plan; with every question out of time, the explanation
    # must not say which rules stop it, nor that no GPU count trains it.
    query = make_query(CATALOG, gpu="a100", model="14B", max_model_len=131072, budget_gpus=4, estimate="never",
                       time_limit_s=5)
    (answer,) = plan(query, CATALOG)
    assert answer.status == "infeasible"
    clock = iter([0.0])
    monkeypatch.setattr("solver.explain.monotonic", lambda: next(clock, 1e9))
    monkeypatch.setattr("solver.explain.answer_for", lambda catalog, changed, gpu, explained=True: answer.model_copy(
        update={"status": "unknown", "plans": ()}))
    reasons = explain(CATALOG, query, answer)
    # The nearest plan was solved with the answer: that much is known.
    assert [r.rule for r in reasons] == ["undecided", "shorter_length", "fewer_tokens", "incomplete"]
    assert reasons[0].detail == "which rules stop the query together was not decided in time"
    monkeypatch.undo()
    decided = explain(CATALOG, query, answer)
    assert [r.rule for r in decided][:1] == ["limit"] and details(decided, "more_gpus")


@pytest.mark.wall_clock  # about the wall clock: keeps the real one
def test_an_answer_whose_search_ran_out_of_time_is_explained_as_undecided():
    query = make_query(CATALOG, gpu="a100", model="14B", max_model_len=32768, budget_gpus=4, time_limit_s=0.5)
    (answer,) = plan(query, CATALOG)
    timed_out = answer.model_copy(update={"status": "unknown", "plans": ()})
    assert [(r.rule, r.detail) for r in explain(CATALOG, query, timed_out)] == [("undecided", (
        "the search ran out of time (--time-limit 0.5 s) before it found a plan or proved that none exists: nothing "
        "is known to rule one out; a longer --time-limit decides it"))]
    # A whole number of seconds is written as one (the default limit: 10 s, not 10.0 s).
    default_limit = query.model_copy(update={"time_limit_s": 10.0})
    assert explain(CATALOG, default_limit, timed_out)[0].detail.startswith(
        "the search ran out of time (--time-limit 10 s) before")
    # Given past the call's deadline (solver.plan's deadline_s), that may be what stopped it: the detail says so, as
    # the answer's deadline_passed says, not as the deadline is when it is explained (review82b).
    passed = timed_out.model_copy(update={"deadline_passed": True})
    assert explain(CATALOG, default_limit, passed)[0].detail.startswith(
        "the search ran out of time (--time-limit 10 s, or the call's deadline_s, which came first) before")
    with solve_module.call_deadline(1e-9):
        assert explain(CATALOG, default_limit, timed_out)[0].detail.startswith(
            "the search ran out of time (--time-limit 10 s) before")


def test_the_fewest_gpus_without_a_budget_is_explained_within_the_plans_count():
    answer, reasons = explained(model="8B", gpu="a100", objective="min_gpus", max_model_len=65536, estimate="auto")
    assert answer.open_budget and answer.plans[0].gpus == 4
    rules = [reason.rule for reason in reasons]
    assert rules[0] == "choice" and "incomplete" not in rules  # every question answered in the time limit
    assert reasons[0].detail == (
        "Env + Offload + SP=4 on 4 GPUs is the plan with the fewest GPUs (any count up to 64), then the cheapest, at "
        "65536 tokens; each of the 91 combinations of GPU count, Env, Offload and SP that would rank before it (on 1-4 "
        "GPUs) fails a rule:")


def test_without_estimates_a_count_past_the_tables_is_not_blamed_on_the_memory_model():
    _, reasons = explained(gpu="a100", model="8B", max_model_len=32768, budget_gpus=8, exact=True, estimate="never")
    assert details(reasons, "memory_model") == []
    assert "no table for 8 GPUs, nor a cell of a table for fewer GPUs that vouches; estimates are off (--no-estimate)" \
        in details(reasons, "no_estimates")


def test_long_runs_of_sp_degrees_are_ranges():
    assert runs([3, 5, 6, 7, 9, 10, 11, 12, 13, 64]) == "3, 5-7, 9-13, 64"
    assert (runs([2]), runs([5, 6])) == ("2", "5, 6")
    # 32 GPUs (a third of 64's time) take the explanation a second: a limit of a minute keeps a busy machine from
    # cutting it short.
    _, reasons = explained(gpu="a100", model="8B", objective="max_len", budget_gpus=32, estimate="auto",
                           time_limit_s=60)
    assert any(detail.startswith("SP must divide the trainer GPUs: on 32 GPUs that rules out SP=3, 5-7, 9-15, 17-")
               for detail in details(reasons, "sp_divides_gpus"))


def test_one_gpu_is_one_gpu_in_explanations():
    _, reasons = explained(gpu="a100", model="0.6B", max_model_len=4096, budget_gpus=1, offload=True)
    assert details(reasons, "pin") == ["--offload rules out vanilla on 1 GPU, Env on 1 GPU"]
    # The combinations within the budget of 1 GPU are counted apart from those on more, which it rules out.
    assert details(reasons, "choice") == [(
        "Offload on 1 GPU is the cheapest plan at 4096 tokens within 1 GPU; each of the 12 combinations of GPU count, "
        "Env, Offload and SP within the budget that would rank before it (on 1 GPU) fails a rule, as do the 72 on 2, "
        "4, 6 GPUs (of the counts the planner weighs here: 1, 2, 4, 6), which the budget rules out:")]


def test_an_unmeasured_setting_is_said_to_have_no_cell_of_a_table_for_fewer_gpus_either():
    # Offload alone on 4 A100s at 16384 tokens: the 4-GPU table never tried it, and the 2-GPU table's 'Env + Offload'
    # there, on which the answer rests, is not a setting it includes. On 2 GPUs no table is for fewer.
    answer, reasons = explained(gpu="a100", model="8B", max_model_len=16384, budget_gpus=4, offload=True,
                                estimate="auto")
    best = answer.plans[0]
    assert (best.gpus, best.setting.label, best.evidence, best.source.gpus) == (4, "Env + Offload", "inferred", 2)
    assert details(reasons, "undocumented") == [(
        "Offload on 4 GPUs: never measured, and no cell of the A100-80GB table for 4 GPUs from 16384 tokens on is a "
        "setting they include (at 16384: 'SP=2'), nor a cell of a table for fewer GPUs; the memory model predicts at "
        "16384 tokens: Offload not estimated (estimates turn Env on unless --no-env)")]
    _, reasons = explained(gpu="a100", model="14B", max_model_len=4096, budget_gpus=2, exact=True)
    assert details(reasons, "undocumented") == [(
        "Offload on 2 GPUs: never measured, and no cell of the A100-80GB table for 2 GPUs from 4096 tokens on is a "
        "setting they include (at 4096: 'Env + Offload'); estimates are off (--no-estimate)")]


def test_one_asked_setting_without_a_plan_gets_what_the_tables_and_the_model_say_of_it():
    # Env + Offload + SP=2 on exactly four H20s at 65536, never measured on four: the memory model says it
    # fits, but the table for six GPUs says it ran out of memory there.
    _, reasons = explained(gpu="h20", model="4B", budget_gpus=4, exact=True, max_model_len=65536, sp=2, env=True,
                           offload=True, estimate="auto")
    (detail,) = details(reasons, "undocumented")
    assert detail.startswith("Env + Offload + SP=2 on 4 GPUs: never measured, and no cell of the H20-96GB table "
                             "for 4 GPUs from 71680 tokens on is a setting they include (at 71680: 'SP=4')")
    assert detail.endswith("Env + Offload + SP=2 85.9 GiB of 87.9 usable, but the H20-96GB table for 6 GPUs says it "
                           "ran out of memory at 71680, and with Offload each GPU holds as much on any count")
    # Within the budget, not --exact, the pins are on no one count: the tables are asked only where the row says '-'
    # (two GPUs; four say 'SP=4' at 71680).
    _, reasons = explained(gpu="h20", model="4B", budget_gpus=4, max_model_len=65536, sp=2, env=True, offload=True,
                           estimate="auto")
    assert [reason.rule for reason in reasons] == [
        "limit", "no_setting", "shorter_length", "fewer_tokens", "more_gpus", "lower_token_budget", "without_pins"]
    assert details(reasons, "no_setting") == [
        "the H20-96GB table for 2 GPUs says '-' for Qwen3-4B from 71680 tokens on: nothing trained there"]


def test_an_estimated_longest_length_is_said_to_be_on_the_grid():
    # Maximising keeps estimated lengths to the 1024-token grid; a length asked with --len may lie past it
    # (Qwen3-0.6B on one H200: 55296 maximised, while 55567 tokens fit by the memory model).
    answer, reasons = explained(gpu="h200", model="0.6B", objective="max_len", budget_gpus=1, estimate="auto")
    assert answer.plans[0].max_model_len == 55296
    assert details(reasons, "longest_documented") == [(
        "nothing for Qwen3-0.6B on H200-141GB within 1 GPU, in the tables and the memory model's estimates, goes "
        "beyond 55296 tokens on the 1024-token grid")]
    off_grid, _ = explained(gpu="h200", model="0.6B", max_model_len=55567, budget_gpus=1, estimate="auto")
    beyond, _ = explained(gpu="h200", model="0.6B", max_model_len=55568, budget_gpus=1, estimate="auto")
    assert off_grid.plans and not beyond.plans
    assert "the longest is 55296 on the 1024-token grid (Env + Offload on 1 GPU, estimated, extrapolated)" in beyond.reason


def test_the_explanation_solves_a_nearby_plan_its_reason_did_not_need():
    # Qwen3-14B at 40960 within 6 A100s without Offload: the reason names the longest length and a lowered
    # budget, not the plan without the pin, which the explanation then solves itself.
    query = make_query(CATALOG, gpu="a100", model="14B", max_model_len=40960, budget_gpus=6, offload=False)
    (answer,) = plan(query, CATALOG)
    assert answer.alternatives is not None and answer.alternatives.solved == {"token_budget_auto"}
    (detail,) = details(explain(CATALOG, query, answer), "without_pins")
    assert detail.startswith("without --no-offload: Env + Offload")


def test_a_nearby_plan_undecided_in_time_is_solved_again_by_the_explanation(monkeypatch: pytest.MonkeyPatch):
    # Qwen3-14B at 40960 within 6 A100s without Offload: its reason solves the lowered budget. Where that solve
    # runs out of time (made so here, as does the nearest plan's solve, which may lower budgets too), the answer does
    # not count it as solved and the explanation solves it again.
    real = solve_module.answer_for

    def timing_out_with_auto_budgets(catalog, query, gpu, explained=True, **given):
        found = real(catalog, query, gpu, explained, **given)
        return found.model_copy(update={"status": "unknown", "plans": ()}) if query.token_budget == "auto" else found

    query = make_query(CATALOG, gpu="a100", model="14B", max_model_len=40960, budget_gpus=6, offload=False)
    monkeypatch.setattr(solve_module, "answer_for", timing_out_with_auto_budgets)
    monkeypatch.setattr(solve_module, "nearest_plan", lambda catalog, data, query: None)
    (answer,) = plan(query, CATALOG)
    assert answer.alternatives is not None and answer.alternatives.solved == frozenset()
    assert "--token-budget auto" not in (answer.reason or "")
    monkeypatch.setattr(solve_module, "answer_for", real)
    assert details(explain(CATALOG, query, answer), "lower_token_budget")


def test_a_dash_run_is_cited_from_its_first_row_whatever_row_the_length_falls_in():
    # The A100-80GB table for 6 GPUs has '-' for Qwen3-14B from 51200 on; 65536 falls in the row of 71680.
    _, reasons = explained(gpu="a100", model="14B", max_model_len=65536, budget_gpus=8)
    assert ("the A100-80GB table for 6 GPUs says '-' for Qwen3-14B from 51200 tokens on: nothing trained there"
            in details(reasons, "no_setting"))


def test_an_infeasible_length_names_the_table_that_caps_the_estimate():
    # Qwen3-8B on one H100: the memory model fits Env + Offload at 25600, but the A100's table for 1 GPU says it ran
    # out of memory at 28672 (the row 25600 falls in), so the estimate stops at 24576.
    answer, reasons = explained(gpu="h100", model="8B", max_model_len=25600, budget_gpus=1, estimate="auto")
    assert not answer.plans
    (limit,) = details(reasons, "limit")
    assert limit.endswith("(longest per GPU count: 1 GPU: 24576 (estimated, no further: the A100-80GB table for 1 GPU, "
                          "whose GPU has at least this one's memory, says Env + Offload ran out of memory at 28672))")


def test_counts_a_budget_past_a_node_allows_but_the_planner_never_weighs_are_explained():
    # 9 to 12 GPUs would cost less than 8, but a trainer on more than a node uses whole nodes.
    answer, reasons = explained(gpu="a100", model="0.6B", max_model_len=8192, budget_gpus=12)
    assert answer.plans[0].gpus == 8 and [(r.rule, r.detail) for r in reasons] == [
        ("choice", ("vanilla on 8 GPUs is the cheapest plan at 8192 tokens within 12 GPUs; no combination of GPU "
                    "count, Env, Offload and SP that the planner weighs ranks before it; those on 9-12 GPUs would, "
                    "and fail a rule:")),
        ("whole_nodes", ("9-12 GPUs span nodes of 8 (--node-gpus) but are not whole nodes, which a trainer "
                         "that spans nodes must use"))]
    # Exactly 12: the count asked for breaks the rule, which the limit names (not the budget).
    _, reasons = explained(gpu="a100", model="0.6B", max_model_len=8192, budget_gpus=12, exact=True)
    assert details(reasons, "limit") == [("no plan passes this rule: 12 GPUs span nodes of 8 (--node-gpus) but are "
                                          "not whole nodes, which a trainer that spans nodes must use")]
    # Exactly 72, whole nodes but past the 64 GPUs estimated plans go up to: the budget alone.
    _, reasons = explained(gpu="a100", model="0.6B", max_model_len=8192, budget_gpus=72, exact=True)
    assert details(reasons, "limit") == ["no plan passes this rule: the budget (on exactly 72 GPUs)"]


def test_nothing_the_memory_model_fits_with_estimate_alone_is_not_blamed_on_the_tables(cli):
    # An 8 GiB card holds no plan of Llama-3.1-70B at any length: with --estimate the tables were set aside, so the
    # reason does not say they lack the model.
    flags = ("--gpu", "tiny", "--gpu-memory", "8", "--model", "llama-3.1-70b", "--gpus", "1", "--len", "4096", "--json")
    [answer] = json.loads(cli(*flags, "--estimate", "--explain")[1])
    assert answer["reason"] == ("with --estimate (the tables set aside), the memory model estimates that nothing fits "
                                "(not even 1024 tokens)")
    assert [reason["rule"] for reason in answer["explanation"]] == ["memory_model"]
    [answer] = json.loads(cli(*flags, "--explain")[1])
    assert answer["reason"] == ("the tables have no Llama-3.1-70B on tiny, and the memory model estimates that "
                                "nothing fits (not even 1024 tokens)")
    assert answer["explanation"] == [{"rule": "memory_model", "detail": (
        "on 1 GPU, the most within the budget: no table speaks for tiny (none has its memory); the memory model "
        "predicts at 4096 tokens: Env 1109.1 GiB of 6.3 usable; Env + Offload 27.3 GiB of 6.3 usable")}]


def test_with_a_lowered_token_budget_the_memory_model_is_asked_at_each_settings_least_budget():
    # With --token-budget auto a cheaper setting is out of reach only where even its least budget, ceil(L / SP) tokens
    # per GPU, does not fit: the predictions are at that budget, and say so (at Trinity's default, twice as many).
    answer, reasons = explained(gpu="a100", model="8B", max_model_len=262144, budget_gpus=8, exact=True,
                                estimate="auto", token_budget="auto")
    assert (answer.plans[0].setting.label, answer.plans[0].gpus) == ("Env + SP=8", 8)
    [predicted] = details(reasons, "memory_model")
    assert ("the memory model predicts at 262144 tokens: Env 363.0 GiB of 73.5 usable (at 262144 tokens per GPU, its "
            "least budget); Env + SP=2 197.9 GiB of 73.5 usable (at 131072 tokens per GPU, its least budget); "
            "Env + SP=4 108.9 GiB of 73.5 usable (at 65536 tokens per GPU, its least budget)") in predicted


def test_a_single_cheaper_combination_is_said_to_be_the_one():
    _, reasons = explained(gpu="a100", model="0.6B", max_model_len=4096, budget_gpus=6, exact=True, env=True)
    assert [(reason.rule, reason.detail) for reason in reasons] == [
        ("choice", ("Env on 6 GPUs is the cheapest plan at 4096 tokens on exactly 6 GPUs; the one combination of GPU "
                    "count, Env, Offload and SP that would rank before it (on 6 GPUs) fails a rule:")),
        ("pin", "--env rules out vanilla on 6 GPUs")]


def test_whole_nodes_named_among_the_rules_that_stop_a_query():
    _, reasons = explained(gpu="a100", model="4B", max_model_len=4096, budget_gpus=6, exact=True, node_gpus=4)
    assert details(reasons, "limit") == [("no plan passes these rules together: the budget (on exactly 6 GPUs); a "
                                          "trainer that spans nodes uses whole nodes of 4 GPUs")]


def test_a_count_the_pins_leave_without_a_plan_at_any_length_reaches_none():
    # --sp 2 leaves 1 GPU nothing, and 3 GPUs too (SP must divide them).
    _, reasons = explained(gpu="a100", model="14B", max_model_len=200000, budget_gpus=4, sp=2)
    assert details(reasons, "limit") == [
        ("no plan passes this rule: nothing in the tables vouches for Qwen3-14B on A100-80GB at 200000 tokens within 4 "
         "GPUs (longest per GPU count: 1 GPU: none, 2 GPUs: 40960, 3 GPUs: none, 4 GPUs: 40960)")]


def test_the_longest_context_the_pins_leave_without_a_plan_names_the_limit_and_the_plan_without_them():
    # Maximising the length: no shorter length to offer (that is the question), but the pins' limit and the plan
    # without them are named.
    answer, reasons = explained(gpu="a100", model="14B", objective="max_len", budget_gpus=2, env=False, offload=False)
    assert (answer.status, answer.plans) == ("infeasible", ())
    assert [(reason.rule, reason.detail) for reason in reasons] == [
        ("limit", ("no plan passes these rules together: the budget (within 2 GPUs); the pins (--no-env "
                   "--no-offload); nothing in the tables vouches for Qwen3-14B on A100-80GB at any length within the "
                   "limits above")),
        ("without_pins", ("without --no-env --no-offload: Env + Offload + SP=2 on 2 GPUs at 40960 tokens (documented: "
                          "the A100-80GB table for 2 GPUs says 'Env + Offload + SP=2' at 40960); caution: Offload needs "
                          "351.6 GiB of host memory per node (175.8 GiB per trainer GPU), more than the 256 GiB assumed "
                          "for its 2 trainer GPUs there (128 GiB per GPU, as servers commonly have: a DGX A100's 1 TB for "
                          "8; --node-gpus counts all of a node's GPUs), and nothing checks it: give --host-ram what a "
                          "node can spare for the trainer (free -g's total less what the OS, Ray and the rollout take) to "
                          "check it; --trinity-version counts a release's own, less where verl 0.7 builds the reference "
                          "model in bf16 and places the pinned blocks (0.5)"))]


def test_a_longest_estimate_at_the_memory_models_ceiling_names_no_table_that_caps_it(cli):
    # On 2 GPUs of 4096 GB Qwen3-0.6B fits the longest length the memory model is asked about (2097152) and more:
    # no table stops it there, so the reach says no "no further".
    status, out, _ = cli("--model", "0.6B", "--gpu", "mine", "--gpu-memory", "4096", "--gpus", "2", "--len",
                         "3000000", "--explain")
    assert status == 1 and ("limit no plan passes this rule: nothing in the tables and the memory model's estimates "
                            "vouches for Qwen3-0.6B on mine at 3000000 tokens within 2 GPUs (longest per GPU count: "
                            "1 GPU: 1639424 (estimated, extrapolated), 2 GPUs: 2097152 (estimated, "
                            "extrapolated)) ") in " ".join(out.split())


def test_the_fewest_gpus_for_a_length_nothing_trains_is_explained_up_to_the_most_gpus():
    answer, reasons = explained(gpu="a100", model="14B", objective="min_gpus", max_model_len=200000)
    assert answer.open_budget and answer.plans == ()
    assert [reason.rule for reason in reasons] == ["limit", "shorter_length", "fewer_tokens", "more_gpus"]
    assert details(reasons, "shorter_length")[0].startswith(
        "within 64 GPUs the longest length with a plan is 92160 tokens (107840 fewer): Env + Offload + SP=4 on 4 GPUs")


def test_one_question_out_of_time_is_said_to_be_one(monkeypatch: pytest.MonkeyPatch):
    real = explain_module.alternative_plan

    def lowered_budget_out_of_time(catalog, query, answer, name, remaining_s):
        return (None, False) if name == "token_budget_auto" else real(catalog, query, answer, name, remaining_s)

    monkeypatch.setattr(explain_module, "alternative_plan", lowered_budget_out_of_time)
    _, reasons = explained(gpu="a100", model="14B", max_model_len=8192, budget_gpus=1, offload=False)
    assert [reason.rule for reason in reasons] == ["limit", "more_gpus", "without_pins", "incomplete"]
    assert details(reasons, "incomplete") == [
        ("1 of the questions behind this explanation ran out of time (--time-limit 10 s for the whole explanation): "
         "what they would have shown is missing above; a longer --time-limit shows it")]


def test_host_memory_for_settings_with_and_without_offload_is_the_load_in_rules_order():
    # On 7 and 8 H100s host memory rules out settings with Offload and without it: what both need is the load (123.4
    # and 141.0 GiB, past 115; on 6, 105.8 fits).
    answer, reasons = explained(gpu="h100", model="4B", max_model_len=65536, budget_gpus=8, host_ram_gb=115,
                                estimate="auto")
    assert (answer.plans[0].gpus, answer.plans[0].setting.label) == (4, "Env + SP=4")
    assert [reason.rule for reason in reasons] == [
        "choice", *["sp_divides_gpus"] * 5, "sp_divides_heads", "host_ram", "host_ram", *["memory_model"] * 3]
    assert details(reasons, "host_ram") == [
        ("loading the model needs more host memory (verl reads it in fp32 before FSDP shards it, beside the reference "
         f"model's pinned shards) than --host-ram 115 GiB (on {n} GPUs: {need} GiB per node)")
        for n, need in ((7, 123.4), (8, 141.0))]
    # Host memory from elsewhere than the flag is named as the bound it is ("than 115 GiB of host memory per node (the
    # node's RAM)" would say "per node" twice and nest the parentheses).
    _, reasons = explained(gpu="h100", model="4B", max_model_len=65536, budget_gpus=8, host_ram_gb=115,
                           estimate="auto", host_ram_source="the node's RAM")
    assert details(reasons, "host_ram") == [
        ("loading the model needs more host memory (verl reads it in fp32 before FSDP shards it, beside the reference "
         f"model's pinned shards) than the node's RAM of 115 GiB (on {n} GPUs: {need} GiB per node)")
        for n, need in ((7, 123.4), (8, 141.0))]


def test_each_gpu_count_host_memory_rules_out_names_what_a_node_needs_there():
    """persona93g: Llama-3.1-70B at 32k on A100s with 1 TB a node under Trinity 0.5.1 takes 16 GPUs; --explain said
    that Offload needs more host memory than 1024 GiB on each of 1 to 8 GPUs, eight lines alike, and not how much: each
    now names what a node needs there, as `solve memory --env --offload --trinity-version 0.5.1 --gpus N` gives it
    (not monotone in the GPUs: the pinned blocks of a count that does not divide the rows round up further)."""
    answer, reasons = explained(gpu="a100", model="Llama-3.1-70B", max_model_len=32768, objective="min_gpus",
                                budget_gpus=64, host_ram_gb=1024, trinity_version="0.5.1", estimate="auto")
    assert answer.plans[0].gpus == 16
    assert [detail.rsplit("(on ", 1)[1] for detail in details(reasons, "host_ram")] == [
        f"{n} GPU{'s' if n > 1 else ''}: {need} GiB per node)" for n, need in (
            (1, 1258.2), (2, 1258.2), (3, 1624.4), (4, 1258.2), (5, 1441.3), (6, 1624.4), (7, 1282.5), (8, 1258.2))]


def test_a_table_of_one_gpu_is_not_said_to_vouch_for_more(edited_a100_tables):
    # With the 2-GPU table made an 8-GPU one, only the table of 1 GPU is for fewer than 2, and it vouches for no other
    # count (one GPU has no collective-communication buffers).
    catalog = edited_a100_tables(lambda text: text.replace("  - gpus: 2\n", "  - gpus: 8\n"))
    query = make_query(catalog, gpu="a100", model="14B", max_model_len=4096, budget_gpus=2, exact=True, sp=1,
                       env=True, offload=True, estimate="never")
    (answer,) = plan(query, catalog)
    assert [(reason.rule, reason.detail) for reason in explain(catalog, query, answer)] == [
        ("limit", ("no plan passes these rules together: the budget (on exactly 2 GPUs); nothing in the tables vouches "
                   "for Qwen3-14B on A100-80GB at 4096 tokens within the limits above")),
        ("no_estimates", "no table for 2 GPUs; estimates are off (--no-estimate)")]


def test_the_fewest_gpus_past_an_exact_count_are_named_from_tables_past_the_estimates_counts(cli, tmp_path):
    # Your cells vouch for 262144 tokens on 128 GPUs only, past the 64 the estimates consider: the reason names them
    # for an exact count of 96, as the explanation does (and then the estimates' nearer plan, on 64 GPUs).
    cells = tmp_path / "mine.yaml"
    cells.write_text("gpu: Mine-80GB\nmemory_gb: 80\nsource: mine\ntables:\n"
                     + made_up_table(64, "Qwen3-8B", 65536, "Env + Offload + SP=4")
                     + made_up_table(128, "Qwen3-8B", 262144, "Env + Offload + SP=4"), encoding="utf-8")
    [answer] = json.loads(cli("--cells", str(cells), "--gpu", "Mine-80GB", "--model", "8B", "--gpus", "96", "--exact",
                              "--len", "262144", "--no-estimate", "--json")[1])
    assert answer["reason"].endswith(
        "; more trainer GPUs train 262144 tokens: Env + Offload + SP=4 on 128 GPUs (documented); the memory model "
        "estimates a plan, Env + Offload + SP=8 on 64 GPUs at 262144 tokens with a lowered max_token_len_per_gpu of "
        "50176: drop --no-estimate and add --token-budget auto and take --gpus 64")


@pytest.mark.parametrize(("rollout", "gpus", "need"), [(1, "1 rollout GPU", "needs"), (2, "2 rollout GPUs", "need")])
def test_a_rollout_without_room_beside_a_table_of_uneven_nodes_is_counted(cli, tmp_path, rollout: int, gpus: str,
                                                                          need: str):
    # Your cells' only table is for 12 GPUs, which span nodes of 8 unevenly: no count leaves the rollout room, but
    # the rollout is not what stops a plan (without it, 12 GPUs are still not whole nodes), so the reason does not
    # blame it; the explanation's limit names one rule that excludes the count. The reason names the way forward: 16
    # GPUs, whole nodes that the table vouches for, beside the rollout on a node of its own; and the estimates'
    # nearer one, which --no-estimate turns off.
    cells = tmp_path / "mine.yaml"
    cells.write_text("gpu: Mine-80GB\nmemory_gb: 80\nsource: mine\ntables:\n"
                     + made_up_table(12, "Qwen3-8B", 262144, "Env + Offload + SP=4"), encoding="utf-8")
    [answer] = json.loads(cli("--cells", str(cells), "--gpu", "Mine-80GB", "--model", "8B", "--gpus", "12", "--len",
                              "262144", "--no-estimate", "--rollout-gpus", str(rollout), "--explain", "--json")[1])
    assert answer["reason"] == ("nothing in the tables for Qwen3-8B on Mine-80GB within 12 GPUs trains; more trainer "
                                "GPUs train 262144 tokens: Env + Offload + SP=4 on 16 GPUs (inferred); the memory "
                                "model estimates a plan, Env + SP=8 on 8 GPUs at 262144 tokens with a lowered "
                                "max_token_len_per_gpu of 38912: drop --no-estimate and add --token-budget auto")
    assert answer["explanation"][0] == {"rule": "limit", "detail": (
        f"no plan passes this rule: the {gpus} {need} room beside the trainer (in its node, filling its node and whole "
        "nodes more, or on nodes of their own when the trainer takes whole nodes)")}


@pytest.mark.parametrize(("gpus", "limit"), [
    (12, ("no plan passes this rule: 12 GPUs span nodes of 8 (--node-gpus) but are not whole nodes, which a trainer "
          "that spans nodes must use")),
    (72, "no plan passes this rule: the budget (on exactly 72 GPUs)")])
def test_one_asked_setting_on_a_count_the_planner_never_weighs_is_explained_by_the_limit(gpus: int, limit: str):
    # Every setting pinned on exactly a count with no plan at any length (not whole nodes; past the 64 GPUs estimates
    # go up to): the limit says why, as without the pins (the setting's own reasons, which need the count, raised
    # KeyError).
    answer, reasons = explained(gpu="a100", model="0.6B", max_model_len=8192, budget_gpus=gpus, exact=True, sp=2,
                                env=False, offload=False, estimate="auto")
    assert not answer.plans and details(reasons, "limit") == [limit]


def _undecided(prober: _Prober, assumptions: list) -> bool:
    """`_Prober._infeasible` where the deadline leaves every question it puts undecided (as `_status` counts one)."""
    prober.undecided += 1
    return False


def test_rules_that_stop_a_query_together_say_so_where_time_ran_out_before_each_was_shown_needed(
        monkeypatch: pytest.MonkeyPatch):
    # The all-rules solve proves there is no plan and its core holds every rule in force; shrinking it asks, rule by
    # rule, whether the others suffice. Out of time, every rule stays: the rules still stop the query together, but
    # the limit said so as if each were needed (the rollout, the SP rules) where host memory alone stops it.
    query = make_query(CATALOG, gpu="h20", model="8B", max_model_len=4096, budget_gpus=8, exact=True, sp=8, env=False,
                       offload=False, host_ram_gb=16.0, rollout_gpus=2)
    (answer,) = plan(query, CATALOG)
    assert details(explain(CATALOG, query, answer), "limit") == [
        ("no plan passes this rule: host memory (--host-ram 16 GiB is too little for Offload, or for the model "
         "while it loads, beside the reference model's pinned shards)")]
    # Host memory from elsewhere than the flag is named in words, as a bound (it said "the node's RAM 16 GB per node").
    own = query.model_copy(update={"host_ram_source": "the node's RAM"})
    assert details(explain(CATALOG, own, plan(own, CATALOG)[0]), "limit") == [
        ("no plan passes this rule: host memory (the node's RAM of 16 GiB is too little for Offload, or for the model "
         "while it loads, beside the reference model's pinned shards)")]
    monkeypatch.setattr(_Prober, "_infeasible", _undecided)
    reasons = explain(CATALOG, query, answer)
    (limit,) = details(reasons, "limit")
    assert limit.startswith("no plan passes these rules together (the time limit ran out before it showed that each "
                            "is needed): the budget (on exactly 8 GPUs); a trainer that spans nodes uses whole nodes ")
    assert "; host memory (--host-ram 16 GiB is too little for Offload" in limit
    assert details(reasons, "incomplete")


def test_a_combination_is_not_put_down_to_a_rule_that_time_left_unshown_to_be_needed(monkeypatch: pytest.MonkeyPatch):
    # Each cheaper combination's rule is the first of a shrunk core; one the deadline left unshrunk may begin with a
    # rule that does not exclude it (it was put down to the budget, say): it is left out, as the incomplete line says.
    query = make_query(CATALOG, gpu="a100", model="8B", max_model_len=32768, budget_gpus=6, estimate="never")
    (answer,) = plan(query, CATALOG)
    data = prepare(CATALOG, answer.gpu, query)
    best = answer.plans[0]
    best_rank = next(entry.rank for entry in data.ranks
                     if entry.combination == (best.gpus, int(best.env), int(best.offload), best.sp))
    cheaper = [entry.combination for entry in data.ranks if entry.rank < best_rank]
    assert len(dict(_Prober(data, query).classify(cheaper, None))) == len(cheaper) > 0
    monkeypatch.setattr(_Prober, "_infeasible", _undecided)
    prober = _Prober(data, query)
    assert prober.classify(cheaper, None) == [] and prober.undecided >= len(cheaper)


def test_a_limit_under_pins_says_how_far_over_the_usable_memory_the_nearest_estimate_is():
    # Qwen3-32B at 65536 tokens on 8 H100s with --no-offload: no table has the model on the H100, so what the pins
    # leave is the memory model's to rule out; the limit names the nearest it comes, with the figures `solve memory`
    # gives for it.
    (answer,) = solver.plan("32B", gpu="h100", max_model_len=65536, budget_gpus=8, offload=False, explain=True,
                            option_names=COMMAND_OPTIONS)
    nearest = solver.estimate_memory("32B", "h100", 8, 65536, sp=8, env=True)
    figures = (f"{nearest.total_gib:.1f} GiB of {nearest.usable_gib:.1f} usable, "
               f"{nearest.total_gib - nearest.usable_gib:.1f} GiB over")
    assert figures == "97.0 GiB of 73.2 usable, 23.8 GiB over"
    assert (answer.explanation[0].rule, answer.explanation[0].detail) == ("limit", (
        "no plan passes these rules together: the pins (--no-offload); nothing in the tables and the memory model's "
        "estimates vouches for Qwen3-32B on H100-80GB at 65536 tokens within the limits above (the nearest, Env + "
        f"SP=8 on 8 GPUs: the memory model predicts {figures})"))
    # Every other setting the pin leaves on 8 GPUs is further over (the memory_model lines of --explain).
    assert all(solver.estimate_memory("32B", "h100", 8, 65536, sp=sp, env=True).total_gib > nearest.total_gib
               for sp in (1, 2, 4))
    # With --token-budget auto the nearest is at its least budget, ceil(65536 / 8) = 8192: `solve memory
    # --token-budget 8192`'s figures.
    (answer,) = solver.plan("32B", gpu="h100", max_model_len=65536, budget_gpus=8, offload=False, explain=True,
                            token_budget="auto")
    least = solver.estimate_memory("32B", "h100", 8, 65536, sp=8, env=True, max_token_len_per_gpu=8192)
    assert (f"{least.total_gib:.1f}", f"{least.usable_gib:.1f}") == ("83.3", "73.2")
    assert answer.explanation[0].detail == (
        "no plan passes these rules together: the pins (offload=False); nothing in the tables and the memory model's "
        "estimates vouches for Qwen3-32B on H100-80GB at 65536 tokens within the limits above (the nearest, Env + "
        "SP=8 on 8 GPUs: the memory model predicts 83.3 GiB of 73.2 usable, "
        f"{least.total_gib - least.usable_gib:.1f} GiB over at 8192 tokens per GPU, its least budget)")
    # Where a table speaks for the count (14B on 1 A100), the table is what rules it out: no figure is given.
    (answer,) = solver.plan("14B", gpu="a100", max_model_len=8192, budget_gpus=1, offload=False, explain=True)
    assert answer.explanation[0].detail == (
        "no plan passes these rules together: the budget (within 1 GPU); the pins (offload=False); nothing in the "
        "tables and the memory model's estimates vouches for Qwen3-14B on A100-80GB at 8192 tokens within the limits "
        "above")


def test_a_gpu_type_no_table_speaks_for_is_not_said_to_have_tables():
    # No table has an RTX 4090's memory: "no RTX-4090-24GB table names Qwen3-1.7B" would imply some do.
    _, reasons = explained(gpu="4090", model="1.7B", max_model_len=8192, budget_gpus=2, estimate="auto")
    found = details(reasons, "memory_model")
    assert found and all(detail.startswith(f"on {count}: no table vouches for RTX-4090-24GB {H100_CAPPED}; ")
                         for detail, count in zip(found, ("1 GPU", "2 GPUs")))
    # The A100's own tables that leave a model out still say so by its name.
    _, reasons = explained(gpu="a100", model="Qwen2.5-7B", objective="max_len", budget_gpus=2, estimate="auto")
    assert any(detail.startswith("on 1 GPU: no A100-80GB table names Qwen2.5-7B")
               for detail in details(reasons, "memory_model"))


def test_a_length_the_node_size_given_rules_out_is_blamed_on_the_node_in_the_reason_and_more_gpus(cli):
    # nodes89: on nodes of 4 (--node-gpus 4) SP stops at 4, and no count of GPUs trains Qwen3-14B at 65536 tokens on
    # A100-40GB at the default budget (on nodes of 8 SP=8 does within the same 16, but a node size given is hardware:
    # no plan on larger nodes is named). The reason and the more_gpus row did not say that the node caps SP (only the
    # limit row named "SP must divide the 4 GPUs of a node").
    status, out, _ = cli("--model", "14B", "--len", "64k", "--gpu", "a100-40gb", "--gpus", "16", "--node-gpus", "4",
                         "--explain", "--json")
    [answer] = json.loads(out)
    assert status == 1 and answer["reason"].endswith(
        "--token-budget auto trains 65536 tokens: Env + Offload + SP=4 on 16 GPUs with max_token_len_per_gpu = 20480 "
        "(estimated, extrapolated); on nodes of 4 GPUs (--node-gpus) an SP group stays within one node, so SP=4 at "
        "most")
    [more] = [reason["detail"] for reason in answer["explanation"] if reason["rule"] == "more_gpus"]
    assert more == ("no count of A100-40GB GPUs up to 64 trains Qwen3-14B at 65536 tokens on nodes of 4 GPUs, at "
                    "Trinity's default token budget; an SP group stays within one node, so SP=4 at most, and "
                    "--node-gpus sets another node size; the default token budget is the max_token_len_per_gpu the "
                    "tables measure")
