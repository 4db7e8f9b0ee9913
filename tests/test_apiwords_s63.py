"""Session 63, helper apiwords: the Python API's reasons, cautions and notes name its own keywords, not the command's
flags (`solver.rules.OptionNames`: `API_OPTIONS`, `COMMAND_OPTIONS`), each word written once; the command's stay
byte-identical (`option_names=COMMAND_OPTIONS` gives them through the API too)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

import solver
from solver.api import answer_query, config_query
from solver.query import make_query
from solver.rules import API_OPTIONS, COMMAND_OPTIONS
from solver.trinity import patch_trinity_config, read_trinity_config

ROOT = Path(__file__).resolve().parent.parent
TRINITY_YAML = (ROOT / "docs" / "examples" / "trinity.yaml").read_text(encoding="utf-8")
TRINITY_ON_8 = (TRINITY_YAML.replace("  node_num: 1\n", "  node_num: 2\n")
                .replace("  engine_num: 2\n", "  engine_num: 8\n"))
"""The example config on 2 nodes of 8 GPUs, 8 engines of one GPU: 8 for the trainer, the plans' it is patched with
(the patch keeps the cluster)."""

FLAG = re.compile(r"(?<![\w-])--[a-z][\w-]*")
"""A command-line flag in running text."""
COMMANDS = (
    re.compile(r"(?:\S+=\S+ )*solve --from-config CONFIG --check[^\n]*"),  # a fragment's check command: to be run
    re.compile(r"ray start --head"),  # a shell command, not rft-solver's
    # The fragment's note names both ways to write its cluster section (it is the command's and the API's).
    re.compile(r"\(--rollout-gpus R, or solver\.plan's rollout_gpus, writes that section\)"),
)
"""Flags the API's words may keep: full command lines meant to be run as written (api.md, "Words")."""


def flags_in(text: str) -> list[str]:
    """The flags `text` names outside the command lines it may keep (`COMMANDS`)."""
    for command in COMMANDS:
        text = command.sub("", text)
    return FLAG.findall(text)


def words_of(value: Any) -> list[str]:
    """Every string in a result's data (reasons, cautions, explanations, the plans nested in it), recursively."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in words_of(item)]
    if isinstance(value, list | tuple):
        return [text for item in value for text in words_of(item)]
    return []


def test_a_refusal_names_the_keywords_where_the_command_names_its_flags():
    (host,) = solver.plan("14B", gpu="a100", max_model_len=65536, budget_gpus=4, host_ram_gb=48)
    assert host.reason == (
        "nothing in the tables and the memory model's estimates for Qwen3-14B on A100-80GB within 4 GPUs trains with "
        "host_ram_gb=48; without host_ram_gb, Env + Offload + SP=4 on 4 GPUs trains it (65536 tokens), and with "
        "Offload it needs 381.1 GiB of host memory per node")  # s84: 4 ranks' loads, 4 x 55.0, beside 2 x 80.5 pinned
    (flags,) = solver.plan("14B", gpu="a100", max_model_len=65536, budget_gpus=4, host_ram_gb=48,
                           option_names=COMMAND_OPTIONS)
    assert flags.reason == host.reason.replace("host_ram_gb=48", "--host-ram 48 GiB").replace(
        "without host_ram_gb", "without --host-ram")
    (nodes,) = solver.plan("8B", gpu="a100", max_model_len=131072, budget_gpus=8, node_gpus=2)
    assert ('; no count of nodes of 2 GPUs (node_gpus) trains it, even with token_budget="auto": an SP group stays '
            'within one node, so SP=2 at most; token_budget="auto" reaches 101376 tokens') in nodes.reason
    (tables,) = solver.plan("8B", gpu="a100", max_model_len=262144, budget_gpus=8, estimate="never")
    assert tables.reason.endswith(
        'with a lowered max_token_len_per_gpu of 38912: drop estimate="never" and add token_budget="auto"')
    (pinned,) = solver.plan("8B", gpu="h20", max_model_len=65536, budget_gpus=2, offload=False, env=True, sp=2)
    assert ("within 2 GPUs with sp=2, env=True, offload=False: the longest is 16384 (Env + SP=2 on 2 GPUs, inferred); "
            '65536 tokens trains if you drop offload=False and add token_budget="auto": ') in pinned.reason
    (rollout,) = solver.plan("8B", gpu="a100", max_model_len=32768, budget_gpus=6, exact=True, rollout_gpus=3)
    assert rollout.reason is not None and rollout.reason.startswith(
        "no plan for exactly 6 trainer GPUs with Qwen3-8B on A100-80GB: 6 trainer + 3 rollout GPUs (rollout_gpus) fit "
        "neither one node of 8, ")


def test_the_cautions_name_the_keywords():
    (pcie,) = solver.plan("8B", gpu="l40s", max_model_len=8192, budget_gpus=8)  # at 32768 on 4 none fits without SP
    assert pcie.best is not None and pcie.best.cautions[0].endswith(
        "so a plan without SP that fits (sp=1) may train faster: time a step of each")
    (one,) = solver.plan("8B", gpu="h100", max_model_len=8192, budget_gpus=1)
    assert one.best is not None
    assert "and nothing checks it: give host_ram_gb what a node can spare" in one.best.cautions[0]
    (far,) = solver.plan("32B", gpu="l40s", max_model_len=524288, budget_gpus=1, estimate="only")
    assert far.nearest is not None and far.nearest.cautions[0].endswith(
        "margin=0.11 keeps 2.9 GiB more to spare than the default 0.04 here, or measure a step first")
    (as_printed,) = solver.plan("32B", gpu="l40s", max_model_len=524288, budget_gpus=1, estimate="only",
                                option_names=COMMAND_OPTIONS)
    assert as_printed.nearest is not None and as_printed.nearest.cautions[0].endswith(
        "--margin 0.11 keeps 2.9 GiB more to spare than the default 0.04 here, or measure a step first")
    assert solver.estimate_memory("8B", "mi300x", 8, 32768, env=True).cautions[0].endswith(
        "check yours (solver.plan(env=False) plans without it)")
    assert solver.memory_answer("8B", "mi300x", 8, 32768, env=True, option_names=COMMAND_OPTIONS).cautions[0].endswith(
        "check yours (solve --no-env plans without it)")
    (mapped,) = solver.map_plans("8B", gpu="h100", by="len", gpus_up_to=3)
    three = mapped.rows[0].plans[2]
    assert three is not None and three.cautions[-1].endswith("; give train_batch_size to plan for yours")


@pytest.mark.wall_clock  # about the wall clock: keeps the real one
def test_an_explanation_names_the_keywords():
    (answer,) = solver.plan("32B", gpu="a100", max_model_len=600000, budget_gpus=64, time_limit_s=0.001, explain=True)
    assert answer.explanation is not None and answer.explanation[0].detail == (
        "the search ran out of time (time_limit_s=0.001) before it found a plan or proved that none exists: nothing "
        "is known to rule one out; a longer time_limit_s decides it")
    (answer,) = solver.plan("8B", gpu="a100", max_model_len=65536, budget_gpus=8, estimate="only", explain=True)
    assert any(reason.detail.endswith("not estimated (estimates turn Env on unless env=False)")
               for reason in answer.explanation or ())


def test_a_placed_job_s_config_names_its_length_key_past_the_validated_length(tmp_path: Path):
    # clusterrelease91: solve cluster --emit-dir's header said "or plan --len 131072", which neither solve cluster
    # nor a job takes, and placement_configs' "plan max_model_len=131072": a job gives its length by its key
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools: [{name: h, gpu: H100, nodes: 1, gpus_per_node: 8}]\n"
                     "jobs: [{name: long, model: Qwen3-0.6B, max_model_len: 139264, rollout_gpus: 0}]\n",
                     encoding="utf-8")
    placement = solver.place(fleet)
    header = ("max_model_len 139264, past the validated 131072\n# (check the model's quality at this length, or plan "
              "with the job's max_model_len 131072)\n")
    for names in (API_OPTIONS, COMMAND_OPTIONS):  # the API's, and solve cluster --emit-dir's
        assert header in solver.placement_configs(placement, fleet, option_names=names)["long"]


def test_the_fragment_names_the_length_keyword_past_the_validated_length():
    (answer,) = solver.plan("8B", gpu="h200", objective="max_len", budget_gpus=64)
    header = "trainer GPUs, max_model_len 367616, past the validated\n# 131072 ("
    assert f"{header}check the model's quality at this length, or plan max_model_len=131072)\n" in (
        solver.trinity_config(answer))
    config = read_trinity_config(TRINITY_YAML, "trinity.yaml", {})
    catalog = solver.load_catalog()
    query = config_query(catalog, config, gpu="h200", objective="max_len", budget_gpus=64)
    (own,) = answer_query(query, catalog)
    fragment = solver.trinity.trinity_fragment(own.plans[0], catalog.model(own.model), gpu=own.gpu)
    assert f"{header}check the model's quality at this length, or plan max_model_len=131072)\n" in fragment
    assert f"{header}check the model's quality at this length, or plan --len 131072)\n" in (
        solver.trinity.trinity_fragment(own.plans[0], catalog.model(own.model), gpu=own.gpu,
                                        option_names=COMMAND_OPTIONS))


def test_patch_trinity_config_notes_name_the_keywords_and_replace_the_commands_notes():
    catalog = solver.load_catalog()
    (answer,) = solver.plan("8B", gpu="h100", max_model_len=131072, budget_gpus=8, offload=True)
    model = catalog.model(answer.model)
    assert answer.best is not None and answer.best.gpus == 8
    patched = patch_trinity_config(TRINITY_ON_8, answer.best, model)
    # s84: with no release named, every rank loads the model: 8 x 30.5 GiB beside two models' pinned shards
    assert ("  # host memory: 325.4 GiB per node for Offload (at start-up, every rank loading the model; 183.0\n"
            "  #   while training); not checked: host_ram_gb not given\n") in patched
    assert ("  # these three are Trinity 0.6's (0.5 refuses them: version=\"0.5\" leaves them out); on verl before\n"
            in patched)
    written = patch_trinity_config(TRINITY_ON_8, answer.best, model, option_names=COMMAND_OPTIONS)  # as --write
    assert "not checked: --host-ram not given" in written and "--trinity-version 0.5 leaves them out" in written
    # A config --write wrote, patched again through the API: its notes are replaced, not kept beside the API's.
    again = patch_trinity_config(written, answer.best, model)
    assert again == patched and flags_in(again) == []
    assert patch_trinity_config(patched, answer.best, model, option_names=COMMAND_OPTIONS) == written


def test_a_placement_names_the_keywords():
    fleet = ROOT / "docs" / "examples" / "required.yaml"
    (required,) = {job.reason for job in solver.place(fleet, time_limit_s=5).unplaced}
    assert required == ("the required jobs (code-8b, chat-14b, probe-4b) do not all fit the fleet together: at "
                        "their fewest they take 17 GPUs, more than the fleet's 16; solver.buy_nodes names the nodes "
                        "to add for them")
    (every,) = {job.reason for job in solver.place(fleet, time_limit_s=5, minimize="nodes").unplaced}
    assert every.endswith('; without minimize="nodes", as many as fit are placed')
    printed = solver.place(fleet, time_limit_s=5, minimize="nodes", option_names=COMMAND_OPTIONS)
    (as_printed,) = {job.reason for job in printed.unplaced}
    assert as_printed == every.replace('minimize="nodes"', "--minimize nodes")


API_QUESTIONS: list[dict[str, Any]] = [
    {"model": "4B", "objective": "max_len", "budget_gpus": 6, "top": 3, "explain": True},
    {"model": "32B", "max_model_len": 262144, "budget_gpus": 8, "explain": True},
    {"model": "32B", "max_model_len": 131072, "budget_gpus": 2, "sp": 2, "env": False, "explain": True},
    {"model": "14B", "gpu": "h100", "max_model_len": 131072, "budget_gpus": 8, "offload": True, "host_ram_gb": 32,
     "explain": True},
    {"model": "8B", "gpu": "h100", "max_model_len": 262144, "budget_gpus": 4, "node_gpus": 2, "host_ram_gb": 48,
     "explain": True},
    {"model": "8B", "gpu": "a100", "max_model_len": 131072, "budget_gpus": 6, "rollout_gpus": 3, "explain": True},
    {"model": "8B", "gpu": "a100", "max_model_len": 32768, "budget_gpus": 8, "rollout_gpus": 4},
    {"model": "8B", "gpu": "a100", "max_model_len": 32768, "budget_gpus": 6, "exact": True, "rollout_gpus": 3,
     "explain": True},
    {"model": "8B", "gpu": "a100", "max_model_len": 8192, "budget_gpus": 1},
    {"model": "8B", "gpu": "h20", "max_model_len": 65536, "objective": "min_gpus", "explain": True},
    {"model": "32B", "gpu": "h100", "max_model_len": 200000, "objective": "min_gpus", "explain": True},
    {"model": "8B", "gpu": "h100", "max_model_len": 131072, "budget_gpus": 8, "estimate": "never", "explain": True},
    {"model": "8B", "gpu": "a100", "max_model_len": 262144, "budget_gpus": 8, "estimate": "never", "explain": True},
    {"model": "32B", "gpu": "a100", "max_model_len": 524288, "budget_gpus": 8, "estimate": "only", "explain": True},
    {"model": "32B", "gpu": "l40s", "max_model_len": 524288, "budget_gpus": 1, "estimate": "only"},
    {"model": "32B", "gpu": "h100", "max_model_len": 131072, "budget_gpus": 4, "token_budget": "auto",
     "explain": True},
    {"model": "8B", "gpu": "a100", "max_model_len": 262144, "budget_gpus": 6, "train_batch_size": 7, "explain": True},
    {"model": "8B", "gpu": "a100", "max_model_len": 32768, "budget_gpus": 6, "train_batch_size": 96,
     "trinity_version": "0.5"},
    {"model": "8B", "gpu": "a100", "max_model_len": 262144, "budget_gpus": 3, "exact": True, "explain": True},
    {"model": "8B", "gpu": "h200", "objective": "max_len", "budget_gpus": 64},
    {"model": "8B", "gpu": "l40s", "max_model_len": 8192, "budget_gpus": 8},  # SP=2 over PCIe: sp=1 fits too
    {"model": "32B", "gpu": "a100", "max_model_len": 600000, "budget_gpus": 64, "time_limit_s": 0.001,
     "explain": True},
    {"model": "8B", "gpu": "h20", "max_model_len": 65536, "budget_gpus": 2, "offload": False, "env": True, "sp": 2,
     "explain": True},
    {"model": "14B", "gpu": "a100", "max_model_len": 131072, "budget_gpus": 4, "sp": 1, "explain": True},
    {"model": "8B", "gpu": "l40s", "max_model_len": 131072, "budget_gpus": 8, "host_ram_gb": 96, "explain": True},
    {"model": "8B", "gpu": "mi300x", "objective": "max_len", "budget_gpus": 8},
    {"model": "32B", "gpu": "a100", "max_model_len": 65536, "budget_gpus": 16, "rollout_gpus": 6, "explain": True},
]
"""A broad set of `solver.plan` questions: refusals of each limit, pins, host memory, node sizes, rollout GPUs, token
budgets, estimates on and off, a train batch, an exact count, past the validated length, a time limit, PCIe, ROCm."""


@pytest.mark.wall_clock  # about the wall clock: keeps the real one
def test_no_api_answer_names_a_flag_but_in_a_command_to_run():
    # Every string of the answers (and of the alternatives behind a reason), their fragments, maps, estimates, and the
    # queries make_query and config_query build (the API's words by default).
    catalog = solver.load_catalog()
    texts: list[str] = []
    for question in API_QUESTIONS:
        for answer in solver.plan(**question):
            texts += words_of(answer.model_dump(mode="python"))
            texts += words_of(answer.alternatives.model_dump(mode="python")) if answer.alternatives else []
            if answer.plans:
                texts += [solver.trinity_config(answer), solver.trinity_config(answer, version="0.5")]
                texts += words_of(solver.trinity_settings(answer).model_dump(mode="python"))
    for memory in ({"sp": 8, "env": True}, {}, {"sp": 4, "offload": True, "host_ram_gb": 32}, {"sp": 2, "env": True}):
        texts += words_of(solver.memory_answer("8B", "a100", 8, 131072, **memory).model_dump(mode="python"))
    texts += words_of(solver.estimate_memory("8B", "mi300x", 8, 32768, env=True).model_dump(mode="python"))
    for mapped in (*solver.map_plans("8B", gpu="h100", by="len", gpus_up_to=4), *solver.map_plans(gpu="a100",
                                                                                                  gpus_up_to=4)):
        texts += words_of(mapped.model_dump(mode="python"))
    for fleet in ("fleet.yaml", "required.yaml", "smaller-asks.yaml"):
        path = ROOT / "docs" / "examples" / fleet
        for options in ({}, {"minimize": "nodes"}, {"estimate": "never"}):
            result = solver.place(path, time_limit_s=5, **options)
            texts += words_of(result.model_dump(mode="python"))
            texts += list(solver.placement_configs(result, path).values())
        texts += words_of(solver.buy_nodes(path, time_limit_s=5).model_dump(mode="python"))
    config = read_trinity_config(TRINITY_YAML, "trinity.yaml", os.environ)
    for query in (make_query(catalog, model="8B", gpu="a100", max_model_len=262144, budget_gpus=3, exact=True),
                  config_query(catalog, config, gpu="h20", max_model_len=262144)):
        for answer in answer_query(query, catalog, explain=True):
            texts += words_of(answer.model_dump(mode="python"))
    for gpu in ("h100", "a100"):
        (answer,) = solver.plan("8B", gpu=gpu, max_model_len=131072, budget_gpus=8, offload=True)
        assert answer.best is not None and answer.best.gpus == 8
        texts.append(patch_trinity_config(TRINITY_ON_8, answer.best, catalog.model(answer.model)))
    named = {flag: text for text in texts for flag in flags_in(text)}
    assert named == {}
    # The sweep reads what it should: the words it checks hold the keywords, and the command lines it allows are there.
    joined = json.dumps(texts)
    for keyword in ('token_budget=\\"auto\\"', 'estimate=\\"never\\"', "host_ram_gb=32", "sp=2, env=False",
                    "(node_gpus)", "(rollout_gpus)", "(sp=1)", "time_limit_s", "plan max_model_len=131072",
                    "solver.plan(env=False)", "give train_batch_size", "margin=0.",
                    "(then plan with env=False)", "solver.buy_nodes names", 'without minimize=\\"nodes\\"'):
        assert keyword in joined, keyword
    assert "solve --from-config CONFIG --check --gpu" in joined and "ray start --head" in joined


@pytest.mark.parametrize("text", [
    "drop --no-estimate", "(--node-gpus)", "a longer --time-limit decides it",
    "solve --from-config CONFIG --check --gpu H100-80GB --host-ram 64",
    "start this one's (ray start --head on ports no other job's Ray uses)",
])
def test_the_sweep_finds_flags_in_running_text_and_keeps_commands(text: str):
    assert flags_in(text) == ([] if "solve --from-config" in text or "ray start" in text else FLAG.findall(text))
    assert flags_in(text) or "solve --" in text or "ray start" in text
