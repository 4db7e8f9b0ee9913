"""Session 63, helper apiwords2: the Python API's one-line errors (`QueryError`) and a Trinity config's problems
(`read_trinity_config`, `with_config_verdicts`, `patched_config_problems`) name its own keywords, not the command's
flags (`solver.rules.OptionNames`), each word written once; the command's stay byte-identical."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from config_cases import ARR, BASE, with_key
from test_apiwords_s63 import flags_in
from test_patchcheck_s57 import BASE_REFUSED, MERGED, MERGED_WORDS

import solver
from solver.api import answer_query, config_query, with_config_verdicts
from solver.query import QueryError
from solver.rules import API_OPTIONS, COMMAND_OPTIONS
from solver.tables import load_catalog
from solver.trinity import patched_config_problems, patched_trinity_config, read_trinity_config

ROOT = Path(__file__).resolve().parent.parent
FLEET = ROOT / "docs" / "examples" / "fleet.yaml"
JOBS = "math-4b, code-8b, chat-14b, probe-0.6b"


def refusal(call: Any, *args: Any, **kwargs: Any) -> str:
    """The one line `call` refuses its arguments with."""
    with pytest.raises(QueryError) as raised:
        call(*args, **kwargs)
    return str(raised.value)


API_BUDGET = "budget_gpus=N, or total_gpus=T with rollout_gpus=R"
"""The GPU budgets the API takes, as its refusals name them: the trainer's, or with the rollout's (s79)."""
COMMAND_BUDGET = "--gpus N, or --total-gpus T with --rollout-gpus R"
"""The same, in the command's words."""

PLAN_ERRORS = [
    ({"max_model_len": -5}, "max_model_len must be a whole number from 1 to 16777216, got -5"),
    ({"budget_gpus": 0}, "budget_gpus must be a whole number from 1 to 65536, got 0"),
    ({"margin": 1.5}, "margin is a fraction from 0 to below 1, got 1.5 (as a percentage, 1.5% is 0.015)"),
    ({"host_ram_gb": -1.0}, "host_ram_gb must be above 0 and at most 49152 GB, got -1"),
    ({"host_ram_gb": 515870.0}, ("host_ram_gb must be above 0 and at most 49152 GB, got 515870 (no node has 515870 GB; "
                                 "if it is free -m's total in MiB, 503.7 GiB, give host_ram_gb=503.7)")),
    ({"sp": 0}, "sp must be a whole number from 1 to 65536, got 0"),
    ({"top": 0}, "top must be a whole number from 1 to 100, got 0"),
    ({"workers": 0}, "workers must be a whole number from 1 to 1024, got 0"),
    ({"node_gpus": 0}, "node_gpus must be a whole number from 1 to 16, got 0"),
    ({"node_gpus": 64}, ("node_gpus must be a whole number from 1 to 16, got 64 (a node is one host, Trinity's "
                         "cluster.gpu_per_node, and the largest hosts have 16 GPUs: give more GPUs as more nodes)")),
    ({"rollout_gpus": -1}, "rollout_gpus must be a whole number from 0 to 65536, got -1"),
    ({"train_batch_size": 0}, "train_batch_size must be a whole number from 1 to 16777216, got 0"),
    ({"token_budget": "auto", "estimate": "never"},
     ('token_budget="auto" lowers the token budget of estimated plans, which estimate="never" turns off: drop one of '
     'them')),
    ({"sp": 3}, ("sp=3 is not allowed for Qwen3-14B: SP=3 does not divide its 40 attention heads (the degrees that "
                 "Qwen3-14B's heads allow and that keep an SP group in a node of 8 GPUs: 1, 2, 4, 8)")),
    ({"node_gpus": 4, "sp": 8}, ("sp=8 is not allowed: SP=8 is more GPUs than nodes of 4 (node_gpus) hold, and an SP "
                                 "group must fit in one: rft-solver's rule, not Trinity's or verl's, which run it "
                                 "with its all-to-all crossing nodes; the tables measured SP within one node (the "
                                 "degrees that Qwen3-14B's heads allow and that keep an SP "
                                 "group in a node of 4 GPUs: 1, 2, 4)")),
    ({"max_model_len": None, "objective": "max_len"}, f'objective="max_len" needs a GPU budget: {API_BUDGET}'),
    ({"objective": "max_len"}, ('objective="max_len" chooses the length: drop max_model_len, and give the GPU budget '
                                f'to find it within: {API_BUDGET}')),
    ({"max_model_len": None, "objective": "min_gpus"},
     'objective="min_gpus" needs a length: max_model_len=L (tokens, e.g. 32768)'),
    ({"max_model_len": None}, ('a cheapest plan needs a length: max_model_len=L (tokens, e.g. 32768); or, for the '
                               'longest context, objective="max_len", budget_gpus=N')),
    ({"exact": True}, f"exact=True needs {API_BUDGET}"),
    ({"exact": True, "budget_gpus": 8, "objective": "min_gpus"},
     'objective="min_gpus" chooses the GPU count: drop exact=True'),
]
"""`plan`'s refusals of Qwen3-14B on H100 at 32768 tokens (unless the case says otherwise), as the API words them."""

COMMAND_ERRORS = {
    "max_model_len must be a whole number from 1 to 16777216, got -5":
        "--len must be a whole number from 1 to 16777216, got -5",
    "budget_gpus must be a whole number from 1 to 65536, got 0": "--gpus must be a whole number from 1 to 65536, got 0",
    "margin is a fraction from 0 to below 1, got 1.5 (as a percentage, 1.5% is 0.015)":
        "--margin is a fraction from 0 to below 1, got 1.5 (as a percentage, 1.5% is 0.015)",
    "host_ram_gb must be above 0 and at most 49152 GB, got -1": (
        "--host-ram must be above 0 and at most 49152 GB, got -1"),
    f"exact=True needs {API_BUDGET}": f"--exact needs {COMMAND_BUDGET}",
    'objective="min_gpus" chooses the GPU count: drop exact=True': (
        "--minimize gpus chooses the GPU count: drop --exact"),
}
"""The same refusals in the command's words (`COMMAND_OPTIONS`, which the command passes `make_query`)."""


@pytest.mark.parametrize(("given", "words"), PLAN_ERRORS)
def test_plan_refuses_in_its_keywords(given, words):
    arguments = {"max_model_len": 32768, **given}
    assert refusal(solver.plan, "Qwen3-14b", gpu="h100", **arguments) == words
    assert not flags_in(words)
    # make_query names the keywords too, unless given the command's words, as the command gives them
    assert refusal(solver.make_query, load_catalog(), model="Qwen3-14b", gpu="h100", **arguments) == words
    if words in COMMAND_ERRORS:
        assert refusal(solver.make_query, load_catalog(), model="Qwen3-14b", gpu="h100", **arguments,
                       option_names=COMMAND_OPTIONS) == COMMAND_ERRORS[words]


MEMORY_ERRORS = [
    ({"gpus": 0}, "gpus must be a whole number from 1 to 65536, got 0"),
    ({"gpus": 12}, ("gpus=12 is not allowed: 12 GPUs span nodes of 8 (node_gpus) but are not whole nodes (the counts "
                    "allowed: 1 to 8, then whole nodes: 8 and 16 are the nearest)")),
    ({"sp": 3}, ("sp=3 is not allowed for Qwen3-14B: SP=3 does not divide its 40 attention heads (the degrees that "
                 "divide the 8 trainer GPUs, that Qwen3-14B's heads allow and that keep an SP group in a node of 8 "
                 "GPUs: 1, 2, 4, 8)")),
    ({"margin": 1.5}, "margin is a fraction from 0 to below 1, got 1.5 (as a percentage, 1.5% is 0.015)"),
    ({"host_ram_gb": -1.0}, "host_ram_gb must be above 0 and at most 49152 GB, got -1"),
    ({"node_gpus": 0}, "node_gpus must be a whole number from 1 to 16, got 0"),
    ({"max_token_len_per_gpu": 10}, ("max_token_len_per_gpu=10 holds no sequence of 32768 tokens with SP=1: it must be "
                                     "at least ceil(32768 / 1) = 32768")),
    ({"max_model_len": 10000000}, ("max_model_len=10000000 with sp=1 makes Trinity's default token budget, ceil(2 x "
                                   "10000000 / 1) = 20000000, more than 16777216 tokens per GPU: raise sp, or give "
                                   "max_token_len_per_gpu")),
]


@pytest.mark.parametrize(("given", "words"), MEMORY_ERRORS)
def test_estimate_memory_refuses_in_its_keywords(given, words):
    arguments = {"gpus": 8, "max_model_len": 32768, **given}
    assert refusal(solver.estimate_memory, "Qwen3-14b", "h100", **arguments) == words
    assert not flags_in(words)


def test_estimate_memory_keeps_the_commands_flags_for_the_command():
    assert refusal(solver.estimate_memory, "Qwen3-14b", "h100", 12, 32768, option_names=COMMAND_OPTIONS) == (
        "--gpus 12 is not allowed: 12 GPUs span nodes of 8 (--node-gpus) but are not whole nodes (the counts allowed: "
        "1 to 8, then whole nodes: 8 and 16 are the nearest)")
    assert refusal(solver.estimate_memory, "Qwen3-14b", "h100", 8, 32768, max_token_len_per_gpu=10,
                   option_names=COMMAND_OPTIONS).startswith("--token-budget 10 holds no sequence")


def test_map_plans_place_and_buy_refuse_in_their_keywords():
    assert refusal(solver.map_plans, "Qwen3-14b", gpu="h100", gpus_up_to=0) == (
        "gpus_up_to must be a whole number from 1 to 64, got 0")
    assert refusal(solver.map_plans, None, gpu="h100", by="len") == 'by="len" maps one model: give model=M'
    assert refusal(solver.map_plans, ["Qwen3-14b", "Qwen3-8b"], gpu="h100", by="len") == (
        'by="len" maps one model: give model one name, not 2')
    assert refusal(solver.map_plans, None, gpu="h100", by="len", option_names=COMMAND_OPTIONS) == (
        "--by len maps one model: give --model M (or --model-config PATH)")
    assert refusal(solver.place, FLEET, workers=0) == "workers must be a whole number from 1 to 1024, got 0"
    assert refusal(solver.place, FLEET, required=[]) == (
        f"required names no job: name one or more of the fleet's jobs ({JOBS})")
    assert refusal(solver.buy_nodes, FLEET, required=["nope"]) == (
        f"required names 'nope': no job of the fleet is named so; its jobs: {JOBS}; or all, for every job")
    assert refusal(solver.place, FLEET, required=["nope"], option_names=COMMAND_OPTIONS) == (
        f"--required 'nope': no job of the fleet is named so; its jobs: {JOBS}; or all, for every job")
    assert refusal(solver.place, FLEET, token_budget="auto", estimate="never") == (
        'token_budget="auto" lowers the token budget of estimated plans, which estimate="never" turns off: drop one '
        'of them')


CONFIGS = {
    "overlong": (with_key("model.max_prompt_tokens", 8000), None),
    "trainer06": (with_key("trainer.use_remove_padding", True, with_key("trainer.param_offload", True, with_key(
        "trainer.offload_policy", True, with_key("trainer.trainer_strategy", "fsdp2")))), "0.5"),
    "dp": (with_key("explorer.rollout_model.data_parallel_size", 1), "0.5"),
    "external": (with_key("model.external_model", {"api_url": "x"}), "0.5"),
    "disagree": (with_key(f"{ARR}.actor.fsdp_config.offload_policy", False, with_key(
        "trainer.offload_policy", True, with_key("trainer.trainer_strategy", "fsdp2"))), None),
    "engine": (with_key(f"{ARR}.actor.engine.param_offload", True), None),
    "actorsp": (with_key(f"{ARR}.actor.ulysses_sequence_parallel_size", 2), "0.5"),
    "refsp": (with_key(f"{ARR}.ref.ulysses_sequence_parallel_size", 2), None),
    "ungrouped": (with_key(f"{ARR}.ref.ulysses_sequence_parallel_size", 2), "0.5"),
    "slash": (with_key("model.model_path", "Qwen/Qwen3-8B/"), None),
}
"""Configs whose problems name the patch (or the length to plan at), with the Trinity release they are read for."""
PATCH = "solver.trinity.patch_trinity_config"


def config_problems(text: str, version: str | None, option_names: Any) -> tuple[str, ...]:
    """`with_config_verdicts`' config problems of `text` on H100, read and asked in `option_names`' words."""
    catalog = load_catalog()
    config = read_trinity_config(text, "trinity.yaml", {}, version, option_names=option_names)
    query = config_query(catalog, config, gpu="h100", option_names=option_names)
    (answer,) = with_config_verdicts(answer_query(query, catalog), query, catalog, config, text, "trinity.yaml", {},
                                     version)
    assert answer.current is not None
    return answer.current.config_problems


@pytest.mark.parametrize("case", sorted(CONFIGS))
def test_a_configs_problems_name_the_api_where_the_command_names_write(case):
    mapping, version = CONFIGS[case]
    text = yaml.safe_dump(mapping)
    api, command = config_problems(text, version, API_OPTIONS), config_problems(text, version, COMMAND_OPTIONS)
    assert [flags_in(words) for words in api if flags_in(words)] == []
    said = " ".join(command)
    assert "--write" in said or "(--len 14144)" in said  # the case names the command's options
    assert len(api) == len(command)
    assert " ".join(api) == said.replace("--write", PATCH).replace("(--len 14144)", "(max_model_len=14144)")


def test_a_configs_problems_in_exact_api_words():
    mapping, version = CONFIGS["dp"]
    assert f"({PATCH} leaves it to you; Trinity 0.5 takes an engine's GPUs as its tensor_parallel_size)" in " ".join(
        config_problems(yaml.safe_dump(mapping), version, API_OPTIONS))
    mapping, version = CONFIGS["overlong"]
    assert config_problems(yaml.safe_dump(mapping), version, API_OPTIONS)[0].endswith(
        "which Trinity refuses to load: lower them, or plan for 14144 tokens or more (max_model_len=14144)")


def test_a_config_without_a_model_path_names_what_writes_a_fragment():
    text = yaml.safe_dump({key: value for key, value in BASE.items() if key != "model"} | {"model": {
        "max_model_len": 8192}})
    with pytest.raises(solver.ConfigError, match=r"\(a fragment that solver\.trinity_config or "
                                                 r"solver\.placement_configs wrote leaves it to your config"):
        read_trinity_config(text, "trinity.yaml", {})
    with pytest.raises(solver.ConfigError, match="a fragment that --out or solve cluster --emit-dir wrote"):
        read_trinity_config(text, "trinity.yaml", {}, option_names=COMMAND_OPTIONS)


def test_patched_config_problems_name_the_api_by_default_and_write_for_the_command():
    (answer,) = solver.plan("8B", gpu="a100-80g", max_model_len=16384)
    assert answer.best is not None
    plan, model = answer.best, load_catalog().model("8B")
    patched = patched_trinity_config(MERGED, plan, model, version="0.5")
    api = patched_config_problems(MERGED, patched, plan, model, version="0.5")
    command = patched_config_problems(MERGED, patched, plan, model, version="0.5", option_names=COMMAND_OPTIONS)
    base = BASE_REFUSED.words  # the anchor's own key, which Trinity refuses: words that name no option
    assert [problem.words for problem in command] == [MERGED_WORDS, base]
    assert [problem.words for problem in api] == [MERGED_WORDS.replace("--write", PATCH), base]
    assert not flags_in(api[0].words)


@pytest.mark.parametrize(("argv", "words"), [
    (("--model", "Qwen3-14b", "--gpu", "h100", "--maximize", "len"),
     f"--maximize len needs a GPU budget: {COMMAND_BUDGET}"),
    (("--model", "Qwen3-14b", "--gpu", "h100", "--len", "32768", "--exact"), f"--exact needs {COMMAND_BUDGET}"),
    (("--model", "Qwen3-14b", "--gpu", "h100", "--len", "32768", "--token-budget", "auto", "--no-estimate"),
     "--token-budget auto lowers the token budget of estimated plans, which --no-estimate turns off: drop one of them"),
    (("memory", "--model", "Qwen3-14b", "--gpu", "h100", "--len", "32768", "--gpus", "12", "--sp", "1"),
     "--gpus 12 is not allowed: 12 GPUs span nodes of 8 (--node-gpus) but are not whole nodes"),
    (("map", "--gpu", "h100", "--by", "len"), "--by len maps one model: give --model M (or --model-config PATH)"),
])
def test_the_command_keeps_its_flags(cli, argv, words):
    status, out, err = cli(*argv)
    assert (status, out) == (2, "")
    assert words in err


def test_the_commands_config_problems_keep_write(cli, tmp_path):
    path = tmp_path / "trinity.yaml"
    path.write_text(yaml.safe_dump(CONFIGS["dp"][0]), encoding="utf-8")
    status, out, _ = cli("--from-config", str(path), "--gpu", "h100", "--trinity-version", "0.5")
    assert "(--write leaves it to you; Trinity 0.5 takes an engine's GPUs as its tensor_parallel_size)" in out
    assert status == 0 and PATCH not in out
