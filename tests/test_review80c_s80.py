"""Review of session 80's token budget cap (helper review80c): a cap (``--token-budget N``, ``token_budget=N``, or a
``--from-config`` config's own lowered budget) is a guarded rule of the CP-SAT model, ``token_cap``, which
``--explain`` names where it rules plans out (before, its unguarded constraint made every other rule seem to: ``SP must
divide the trainer GPUs: on 8 GPUs that rules out SP=1-7``, and a refusal's ``limit`` listed no rule at all); a no-plan
reason names it among the query's limits; and the answer echoes it, ``token_budget_cap``, beside its ``token_budget``
mode (``auto``)."""

from __future__ import annotations

import json
from typing import Any

from test_keepbudget_s80 import CONFIG, ROLES_CAP, Cli

import solver
from solver.api import answer_query, config_query
from solver.model import RULES
from solver.tables import load_catalog
from solver.trinity import read_trinity_config

CATALOG = load_catalog()
ASKED = ("--model", "qwen3-8b", "--gpu", "h100", "--len", "32768", "--token-budget", "4096")
SP2_CONFIG = CONFIG.format(model="Qwen/Qwen3-8B", lora="", gpus=8, engines=4).replace(
    "32768\n      ref", "24576\n      ref").replace("log_prob_max_token_len_per_gpu: 32768",
                                                    "log_prob_max_token_len_per_gpu: 24576").replace(
    "trainer:\n", "trainer:\n  ulysses_sequence_parallel_size: 2\n")
"""4 rollout and 4 trainer GPUs, Qwen3-8B at 32768 tokens with SP 2 and every role at 24576 tokens per GPU: below
Trinity's default, 32768, and above the least, 16384, so it caps the plans."""


def _answer(cli: Cli, *flags: str) -> dict[str, Any]:
    status, out, err = cli(*flags, "--explain", "--json")
    assert status in (0, 1), err
    [answer] = json.loads(out)
    return dict(answer)


def test_the_cap_is_a_guarded_rule_of_the_model() -> None:
    assert RULES.index("token_cap") == RULES.index("batch_divides") + 1


def test_explain_names_the_cap_for_the_sp_degrees_it_rules_out(cli: Cli) -> None:
    answer = _answer(cli, *ASKED)
    reasons = [(reason["rule"], reason["detail"]) for reason in answer["explanation"]]
    assert reasons[1:5] == [
        ("sp_divides_gpus", "SP must divide the trainer GPUs: on 7 GPUs that rules out SP=2-6"),
        ("sp_divides_gpus", "SP must divide the trainer GPUs: on 8 GPUs that rules out SP=3, 5-7"),
        ("sp_divides_heads", "SP must divide the 32 attention heads of Qwen3-8B: that rules out SP=3 (on 6 GPUs)"),
        ("token_cap", ("a micro-batch of 4096 tokens per GPU (--token-budget 4096) must hold a sequence over its SP "
                       "group, ceil(length / SP) <= 4096: at 32768 tokens that rules out SP=1, 2, 4 (on 5-8 GPUs)"))]
    assert not any(rule == "pin" for rule, _ in reasons)  # no pins: before, unknown rules fell to the pins' words
    assert (answer["token_budget"], answer["token_budget_cap"]) == ("auto", 4096)
    assert [(plan["sp"], plan["max_token_len_per_gpu"], plan["token_budget_cap"]) for plan in answer["plans"]] == [
        (8, 4096, 4096)]


def test_a_refusal_names_the_cap_and_explain_gives_it_as_the_limit(cli: Cli) -> None:
    answer = _answer(cli, *ASKED, "--gpus", "4")
    assert answer["reason_code"] == "length-beyond-reach"
    assert answer["reason"].startswith(
        "32768 tokens is beyond what the tables and the memory model's estimates allow for Qwen3-8B on H100-80GB "
        "within 4 GPUs with --token-budget 4096: the longest is 16384 on the 1024-token grid (Env + SP=4 on 4 GPUs "
        "with a lowered max_token_len_per_gpu of 4096, estimated); more trainer GPUs train 32768 tokens: Env + SP=8 "
        "on 8 GPUs")
    assert answer["explanation"][0] == {"rule": "limit", "detail": (
        "no plan passes this rule: a sequence must fit in 4096 tokens per GPU (--token-budget 4096): ceil(length / "
        "SP) <= 4096, SP at most 4 here (SP=1, 2, 4: those that divide the 32 attention heads and some count of up to "
        "4 GPUs, SP and the 8 KV heads dividing one another)")}
    status, _, err = cli(*ASKED, "--gpus", "4")
    assert (status, err) == (1, "")


def test_the_cap_s_limit_names_the_sp_degrees_the_model_allows_not_the_budget(cli: Cli) -> None:
    # Within 6 A100s Qwen3-8B's 32 heads allow SP up to 4, not 6 ("SP at most 6 here"); on exactly 6 GPUs, up to 2;
    # nodes of 4 keep the SP groups of a trainer of 8 in a node of 4.
    def limit(*flags: str) -> str:
        return str(_answer(cli, "--model", "8B", "--gpu", "a100-80gb", "--len", "65536", "--token-budget", "8192",
                           *flags)["explanation"][0]["detail"])
    assert limit("--no-estimate").endswith("ceil(length / SP) <= 8192, SP at most 4 here (SP=1, 2, 4: those that divide the 32 "
                                           "attention heads and some count of up to 6 GPUs, SP and the 8 KV heads dividing one "
                                           "another)")
    assert limit("--no-estimate", "--gpus", "6", "--exact").endswith(
        "SP at most 2 here (SP=1, 2: those that divide the 32 attention heads and 6 GPUs, SP and the 8 KV heads "
        "dividing one another)")
    assert limit("--sp", "2").endswith("ceil(length / SP) <= 8192, SP=2 here (pinned)")


def test_the_why_rows_on_a_narrow_terminal_put_each_rule_over_its_words_whole() -> None:
    # 30 columns left the words 10 beside "shorter_length" and its padding: "(--token-budget" was cut to "(--token-…".
    answers = solver.plan(model="qwen3-8b", gpu="h100", budget_gpus=4, max_model_len=32768, token_budget=4096,
                          explain=True)
    narrow = solver.answers_text(answers, width=30)
    why = narrow[narrow.index("\nwhy\n") + 1:].splitlines()
    assert why[1:6] == ["limit", "  no plan passes this rule: a", "  sequence must fit in 4096", "  tokens per GPU",
                        "  (token_budget=4096):"] and "…" not in narrow
    assert "shorter_length" in why and all(len(line) <= 30 for line in why)
    wide = solver.answers_text(answers, width=120)
    assert "\nlimit               no plan passes this rule: a sequence must fit in 4096 tokens per GPU" in wide


def test_the_api_names_the_cap_as_its_keyword() -> None:
    [answer] = solver.plan(model="qwen3-8b", gpu="h100", budget_gpus=4, max_model_len=32768, token_budget=4096)
    assert answer.reason is not None and " within 4 GPUs with token_budget=4096: the longest is 16384" in answer.reason
    assert (answer.token_budget, answer.token_budget_cap) == ("auto", 4096)


def test_no_cap_no_echo(cli: Cli) -> None:
    status, out, _ = cli("--model", "qwen3-8b", "--gpu", "h100", "--len", "32768", "--json")
    [answer] = json.loads(out)
    assert status == 0 and answer["token_budget"] == "default" and "token_budget_cap" not in answer
    status, out, _ = cli(*ASKED, "--no-estimate", "--json")  # estimates off: the default mode, still capped
    [answer] = json.loads(out)
    assert (answer["token_budget"], answer["token_budget_cap"]) == ("default", 4096)


def test_a_configs_own_budget_is_named_as_the_configs() -> None:
    config = read_trinity_config(SP2_CONFIG, "grpo.yaml", {}, None)
    query = config_query(CATALOG, config, gpu="h100")
    assert (config.sp, query.token_budget, query.token_budget_cap) == (2, "auto", 24576)
    assert query.limit_flags == f"max_token_len_per_gpu at most 24576 ({ROLES_CAP})"
    [answer] = answer_query(query, CATALOG, explain=True)
    assert answer.token_budget_cap == 24576
    assert [(plan.gpus, plan.setting.label, plan.max_token_len_per_gpu) for plan in answer.plans] == [
        (4, "Env + SP=2", 24576)]
    assert [(reason.rule, reason.detail) for reason in answer.explanation or ()][1] == (
        "token_cap", (f"a micro-batch of 24576 tokens per GPU ({ROLES_CAP}) must hold a "
                      "sequence over its SP group, ceil(length / SP) <= 24576: at 32768 tokens that rules out SP=1 "
                      "(on 4 GPUs)"))
    asked = config_query(CATALOG, config, gpu="h100", token_budget=20480)  # the option's cap, named as the option
    assert (asked.token_budget_cap, asked.token_budget_cap_source) == (20480, None)
    assert asked.token_cap_limit == ("token_budget=20480", True)  # the API's keyword


def test_solve_map_caps_every_cell(cli: Cli) -> None:
    status, out, err = cli("map", "--model", "qwen3-8b", "--by", "len", "--gpu", "h100", "--gpus-up-to", "2",
                           "--token-budget", "8k", "--json")
    assert status == 0, err
    [gpu_map] = json.loads(out)
    assert (gpu_map["token_budget"], gpu_map["token_budget_cap"]) == ("auto", 8192)
    assert [(row["max_model_len"], [plan and (plan["sp"], plan["max_token_len_per_gpu"]) for plan in row["plans"]])
            for row in gpu_map["rows"]][:5] == [(4096, [(1, 8192), (1, 8192)]), (8192, [(1, 8192), (1, 8192)]),
                                                (12288, [None, (2, 8192)]), (16384, [None, (2, 8192)]),
                                                (20480, [None, None])]  # past 8192 x SP 2 on 2 GPUs
    status, out, _ = cli("map", "--model", "qwen3-8b", "--by", "len", "--gpu", "h100", "--gpus-up-to", "2",
                         "--token-budget", "8192")
    assert status == 0
    assert out.splitlines()[0] == ("H100-80GB · Qwen3-8B: cheapest setting per length and GPU budget, at most 8192 "
                                   "tokens per GPU")
    [uncapped] = solver.map_plans("8B", gpu="h100", by="len", gpus_up_to=2)
    assert "token_budget_cap" not in json.loads(uncapped.model_dump_json())


def test_solve_map_refuses_a_bad_cap_in_one_line(cli: Cli) -> None:
    status, out, err = cli("map", "--model", "qwen3-8b", "--gpu", "h100", "--token-budget", "0")
    assert (status, out) == (2, "")
    assert err.splitlines()[-1] == ("solve map: error: argument --token-budget: must be a whole number of tokens from "
                                    "1 to 16777216, got 0")
    status, _, err = cli("cluster", "--token-budget", "8192", "fleet.yaml")  # one for every job: modes alone
    assert (status, err.splitlines()[-1]) == (2, (
        "solve cluster: error: argument --token-budget: takes default or auto, got '8192' (a cap in tokens per GPU is "
        "one job's: solve --token-budget N plans a job with it; solve memory --token-budget T estimates one setting at "
        "it)"))


def test_a_configs_budget_caps_the_plans_at_a_longer_length_too() -> None:
    # Before: the config's 24576 capped the plans up to --len 49152 (where it held a sequence at the config's SP 2),
    # then at 65536 no longer did, and the plan raised it to Trinity's default at SP=4, 32768.
    config = read_trinity_config(SP2_CONFIG, "grpo.yaml", {}, None)
    plans = {}
    for length in (32768, 49152, 65536):
        query = config_query(CATALOG, config, gpu="h100", max_model_len=length, budget_gpus=8, exact=False)
        [answer] = answer_query(query, CATALOG)
        plans[length] = (query.token_budget_cap, [(plan.gpus, plan.setting.label, plan.max_token_len_per_gpu)
                                                  for plan in answer.plans])
    # release89b: at 65536 every release raises it to ceil(65536 / 2) at the config's SP 2 (0.5.0 further): the cap
    assert plans == {32768: (24576, [(8, "Env + SP=2", 24576)]), 49152: (24576, [(8, "Env + SP=2", 24576)]),
                     65536: (32768, [(8, "Env + SP=2", 32768)])}
    # at a shorter length the config's budget is above Trinity's default there, and caps nothing
    assert config_query(CATALOG, config, gpu="h100", max_model_len=16384).token_budget_cap is None
