"""The library API: `import solver` gives what the command gives, as pydantic results."""

from __future__ import annotations

import array
import ast
import collections
import enum
import functools
import importlib.util
import inspect
import io
import json
import multiprocessing
import os
import pickle
import pkgutil
import re
import subprocess
import sys
import threading
import typing
from concurrent.futures import ThreadPoolExecutor
from inspect import Parameter, signature
from pathlib import Path
from types import MappingProxyType
from typing import Any, get_args, get_origin

import numpy
import pydantic
import pytest
import yaml
from pydantic import ValidationError
from rich.console import Console
from test_deadlines_s80 import FakeClock

import solver
import solver.solve as solve_module
from solver.api import answer_query, config_query, fragment_engines, fragment_layout, with_config_verdicts
from solver.explain import _Prober
from solver.query import MAX_SEED
from solver.render import answers_view, json_schema, memory_model_yaml
from solver.rules import API_OPTIONS, COMMAND_OPTIONS
from solver.tables import (
    MAX_NODE_GPUS,
    QueryError,
    TableError,
    brief,
    load_catalog,
    load_fleet,
    load_memory_model,
    shipped_tables_directory,
)
from solver.trinity import (
    TrinityConfig,
    check_trinity_config,
    load_config_mapping,
    patch_trinity_config,
    read_trinity_config,
    trinity_fragment,
)
from solver.trinity.fragment import wrapped_comments

EXAMPLES = Path(__file__).resolve().parent.parent / "docs" / "examples"
FLEET = EXAMPLES / "fleet.yaml"
CATALOG = solver.load_catalog()
TRINITY_TAKES = "takes 0.5, 0.5.0, 0.5.1, 0.5.2, 0.6 or 0.6.0 (or a tag of one, v0.5.2)"
CONFIG_TEXT = (EXAMPLES / "trinity.yaml").read_text(encoding="utf-8")
CONFIG = read_trinity_config(CONFIG_TEXT, "trinity.yaml", {})
QUERY = solver.make_query(CATALOG, model=CONFIG.model, gpu="h20", max_model_len=CONFIG.max_model_len,
                          budget_gpus=CONFIG.trainer_gpus)


@functools.cache
def placed_fleet() -> solver.ClusterResult:
    """`solver.place(FLEET)`, placed once for the tests that only read the result (frozen)."""
    return solver.place(FLEET)


def in_api_words(unwrapped: str) -> str:
    """A fragment the command made, before its comments were wrapped (`unwrapped_fragments`), its notes naming the
    API's keywords where they name the command's flags, then wrapped as each fragment is (`wrapped_comments`): the
    words change a paragraph's length, so they are swapped before it is wrapped."""
    text = re.sub(r", within --host-ram (\d+)GB\b", r", within host_ram_gb of \1 GiB", unwrapped)
    text = re.sub(r"or plan --len (\d+)\)", r"or plan max_model_len=\1)", text)
    return wrapped_comments(text.replace("not checked: --host-ram not given", "not checked: host_ram_gb not given")
                            .replace("--trinity-version 0.5 leaves them out", 'version="0.5" leaves them out')
                            .replace("(then plan with --no-env)", "(then plan with env=False)")
                            .replace("; --node-gpus counts all of", "; node_gpus counts all of")
                            .replace("; --trinity-version counts a release's own", "; trinity_version counts a "
                                     "release's own")
                            .replace("give --host-ram what a node can spare", "give host_ram_gb what a node can spare"))


def test_import_solver_is_cheap_and_exports_the_api():
    code = "import sys, solver; print(solver.__version__, any(m.startswith('ortools') for m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.split() == [solver.__version__, "False"]
    assert {"plan", "place", "estimate_memory", "load_catalog", "Answer", "QueryError"} <= set(solver.__all__)
    assert solver.__all__ == ["__version__", *solver._EXPORTS]  # `from solver import *` gives the version too
    with pytest.raises(AttributeError, match="no attribute .no_such_thing."):
        solver.no_such_thing  # noqa: B018


def test_import_solver_alone_gives_its_modules_as_docs_api_writes_them():
    # `solver.api.config_query`, `solver.trinity.trinity_fragment`, `solver.query.Progress` after `import solver` only
    # (an AttributeError unless something had imported them before), still without OR-Tools, and the fragment's module
    # without the config checks, which only a fragment made loads (lastread91: it took two constants from them)
    code = ("import sys, solver; print('api' in dir(solver), solver.api.config_query.__name__, "  # dir() before use
            "solver.trinity.trinity_fragment.__name__, solver.query.Progress is not None, "
            "any(m.startswith('ortools') for m in sys.modules), 'solver.trinity.checks' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert result.stdout.split() == ["True", "config_query", "trinity_fragment", "True", "False", "False"], (
        result.stderr)
    package = Path(solver.__file__).parent
    assert solver._MODULES == {module.name for module in pkgutil.iter_modules([str(package)])} - {"__main__"}


ANNOTATIONS_AT_RUN_TIME = """\
import inspect, sys, typing, pydantic, solver, solver.api
functions = [name for name, module in solver._EXPORTS.items()  # ConfigError, solver.trinity's, loads ruamel
             if module != "solver.trinity" and inspect.isfunction(getattr(solver, name))]
api = [name for name, function in vars(solver.api).items()
       if inspect.isfunction(function) and function.__module__ == "solver.api" and not name.startswith("_")]
for function in [*(getattr(solver, name) for name in functions), *(getattr(solver.api, name) for name in api)]:
    typing.get_type_hints(function)
    pydantic.validate_call(function)
print(" ".join(functions))
print(" ".join(api))
print(typing.get_type_hints(solver.place)["progress"] == solver.query.Progress | None,
      typing.get_type_hints(solver.placement_settings)["return"] == dict[str, solver.TrinitySettings],
      typing.get_type_hints(solver.api.config_query)["config"] is solver.query.TrinityConfig,
      typing.get_type_hints(solver.api.with_config_verdicts)["config"] is solver.query.TrinityConfig)
print(sorted(loaded for loaded in ("ortools", "ruamel", "solver.cluster", "solver.trinity") if loaded in sys.modules))
"""


def test_the_exported_functions_annotations_resolve_at_run_time_without_ortools_or_ruamel():
    # As pydantic's validate_call, FastAPI or sphinx-autodoc-typehints read them: solver.api named Progress,
    # TrinitySettings and TrinityConfig for type checkers only, and the hints raised NameError.
    result = subprocess.run([sys.executable, "-c", ANNOTATIONS_AT_RUN_TIME], capture_output=True, text=True,
                            timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    functions, api, hints, loaded = result.stdout.splitlines()
    assert functions.split() == [name for name in solver.__all__ if inspect.isfunction(getattr(solver, name))]
    assert {"plan", "place", "trinity_settings", "placement_settings", "make_query"} <= set(functions.split())
    assert {"config_query", "with_config_verdicts", "answer_query"} <= set(api.split())
    assert hints == "True True True True"
    assert loaded == "[]"
    assert TrinityConfig is solver.query.TrinityConfig  # solver.trinity (read_trinity_config) gives it too


def test_the_choices_types_are_exported_for_annotations():
    # A launcher that reads its objective from its own config annotates it so for mypy --strict, which refuses a str.
    assert get_args(solver.Objective) == ("cheapest", "max_len", "min_gpus", "min_gpu_hours")
    assert get_args(solver.EstimateMode) == ("auto", "only", "never")
    assert get_args(solver.TokenBudgetMode) == ("default", "auto")
    assert get_args(solver.TrinityVersion) == ("0.5", "0.6")


def printed_answers(out: str) -> list[dict[str, Any]]:
    """``solve --json``'s answers less ``apply`` and ``config_keys_changed``, which the command adds and the API's
    answers leave out (`solver.trinity_settings` gives the one: tests/test_jsonapply_s63.py;
    `solver.trinity.config_key_changes` the other: tests/test_jsonkeys_s81.py)."""
    return [{key: value for key, value in answer.items() if key not in ("apply", "config_keys_changed")}
            for answer in json.loads(out)]


def test_plan_gives_the_json_the_command_prints(cli):
    # Its words in the command's flags (option_names), the answers are the command's, byte for byte.
    answers = solver.plan("4B", objective="max_len", budget_gpus=6, top=3, explain=True, option_names=COMMAND_OPTIONS)
    _, out, _ = cli("--maximize", "len", "--gpus", "6", "--model", "4B", "--top", "3", "--explain", "--json")
    assert [answer.as_json() for answer in answers] == printed_answers(out)
    assert json.loads(out)[0]["apply"] == solver.trinity_settings(answers[0]).model_dump(mode="json")
    # By default they name this API's keywords: the explanation's settings the estimates leave out but with Env.
    named = [answer.as_json() for answer in solver.plan("4B", objective="max_len", budget_gpus=6, top=3, explain=True)]
    assert "not estimated (estimates turn Env on unless env=False)" in json.dumps(named)
    assert json.loads(json.dumps(named).replace("unless env=False", "unless --no-env")) == printed_answers(out)
    assert isinstance(answers[0], solver.Answer) and answers[0].plans[0].max_model_len == 102400
    assert len(answers[0].plans) == 3 and answers[0].best == answers[0].plans[0] != answers[0].plans[-1]


def test_place_gives_the_json_the_command_prints(cli):
    result = solver.place(EXAMPLES / "fleet.yaml")
    _, out, _ = cli("cluster", str(EXAMPLES / "fleet.yaml"), "--json")
    assert result.model_dump(mode="json") == json.loads(out)


def test_placement_configs_are_what_emit_dir_writes(cli, tmp_path: Path, unwrapped_fragments: list[str]):
    # Each placement's fragment, from the fleet it was placed from (a path, or the Fleet itself, here built in code
    # with short names), is the file --emit-dir writes for its job: a shared node's GPUs, the rollout's engines and
    # nodes as the command gives them.
    fleet_file = EXAMPLES / "fleet.yaml"
    result = solver.place(fleet_file)
    assert cli("cluster", str(fleet_file), "--emit-dir", str(tmp_path / "configs"))[0] == 0
    written = {path.stem: path.read_text(encoding="utf-8") for path in (tmp_path / "configs").iterdir()}
    fleet = load_fleet(fleet_file, load_catalog())
    short = fleet.model_copy(update={
        "pools": tuple(pool.model_copy(update={"gpu": pool.gpu.split("-")[0].lower()}) for pool in fleet.pools),
        "jobs": tuple(job.model_copy(update={"model": job.model.removeprefix("Qwen3-")}) for job in fleet.jobs)})
    assert ([pool.gpu for pool in short.pools], short.jobs[0].model) == (["a100", "h20"], "4B")
    del unwrapped_fragments[:]  # the command's, made as the API's below are
    commands = solver.placement_configs(result, fleet_file, option_names=COMMAND_OPTIONS)
    unwrapped = dict(zip(commands, unwrapped_fragments, strict=True))
    assert commands == solver.placement_configs(result, short, option_names=COMMAND_OPTIONS) == written
    # The API's own (the default) name its keyword where the command's name its flag, and differ in nothing else.
    assert solver.placement_configs(result, fleet_file) == {job: in_api_words(text) for job, text in unwrapped.items()}
    assert any('(0.5 refuses them: version="0.5" leaves them out)' in text
               for text in solver.placement_configs(result, short).values())
    assert sorted(written) == ["chat-14b", "code-8b", "math-4b", "probe-0.6b"]
    assert "export CUDA_VISIBLE_DEVICES=4,5,6\n" in written["probe-0.6b"]
    renamed = {"pools": tuple(pool.model_copy(update={"name": f"{pool.name}-2"}) for pool in fleet.pools),
               "jobs": tuple(job.model_copy(update={"pool": job.pool and f"{job.pool}-2"}) for job in fleet.jobs)}
    for without in ({"jobs": fleet.jobs[1:]}, renamed):
        with pytest.raises(QueryError, match=r"^the fleet has no job 'math-4b' in a pool 'a100': pass the fleet it "
                                             r"was placed from$"):
            solver.placement_configs(result, fleet.model_copy(update=without))
    with pytest.raises(QueryError, match=r"^fleet: job math-4b, pool: no pool named 'a100' \(pools: a100-2, h20-2\)$"):
        solver.placement_configs(result, fleet.model_copy(update={"pools": renamed["pools"]}))  # checked again (s74)


def test_placement_configs_know_the_fleets_own_gpu_types_and_rocm(tmp_path: Path):
    # A GPU type the fleet defines (gpu_memory_gb) is found without a catalogue that has it; an AMD pool's Env
    # plan says what ROCm reads.
    path = tmp_path / "fleet.yaml"
    path.write_text("pools:\n  - {name: amd, gpu: mi300x, nodes: 1, gpus_per_node: 8}\n"
                    "  - {name: mine, gpu: Mine, gpu_memory_gb: 80, nodes: 1, gpus_per_node: 8}\n"
                    "jobs:\n  - {name: long, model: 8B, max_model_len: 131072, pool: amd}\n"
                    "  - {name: own, model: 4B, max_model_len: 8192, pool: mine}\n", encoding="utf-8")
    result = solver.place(path)
    amd, own = result.placements
    assert (amd.job, amd.plan.env, own.job, own.gpu) == ("long", True, "own", "Mine")
    configs = solver.placement_configs(result, path)
    assert "# On ROCm, PyTorch reads PYTORCH_HIP_ALLOC_CONF too" in configs["long"]
    assert "# plan: Env on 8 Mine trainer GPUs, max_model_len 8192\n" in configs["own"]


def test_estimate_memory_gives_the_json_the_command_prints(cli):
    result = solver.estimate_memory("8B", "h100", 8, 131072, sp=8, env=True)
    _, out, _ = cli("memory", "--model", "8B", "--gpu", "h100", "--gpus", "8", "--len", "131072", "--sp", "8", "--env",
                    "--json")
    printed = json.loads(out)
    figures = result.model_dump(mode="json")
    assert figures["terms"] == pytest.approx(printed["terms"], abs=1e-4)  # printed to 4 decimals
    words = ("terms", "beyond_calibration", "beyond_calibration_codes", "cautions", "caution_codes")
    assert {k: v for k, v in figures.items() if k not in words} == pytest.approx(
        {k: printed[k] for k in figures if k not in words}, abs=1e-4)
    assert printed["beyond_calibration"] == figures["beyond_calibration"] == [
        "8 GPUs (calibrated up to 6)", "SP=8 (calibrated up to SP=4)"]
    assert printed["beyond_calibration_codes"] == figures["beyond_calibration_codes"] == ["more-gpus", "larger-sp"]
    assert printed["cautions"] == figures["cautions"] == printed["caution_codes"] == figures["caution_codes"] == []
    # The headroom printed is its rounded GiB's (persona63, s81): 8.7768, where the exact one rounds to 8.7769.
    assert (result.fits, round(result.headroom_gib, 4), printed["fits"], printed["headroom_gib"]) == (
        True, 8.7769, True, 8.7768)
    assert (printed["model"], printed["gpu"], printed["sp"], printed["env"]) == ("Qwen3-8B", "H100-80GB", 8, True)


def test_bad_requests_raise_query_error():
    with pytest.raises(solver.QueryError, match="unknown model '5B'"):
        solver.plan("5B", max_model_len=8192)


def test_an_unknown_gpu_or_model_in_code_is_told_how_code_gives_its_own():
    # A notebook user with an RTX 3090, which the catalogue lacks: the message says how to give its memory in code
    # (the command's says --gpu-memory), and that way plans it.
    own_gpu = ("; or, for a GPU type of your own, give its memory: solver.described_gpu_type(NAME, memory_gb=M), with "
               "catalog=solver.load_catalog().with_gpu_types([that])")
    for call in (lambda: solver.plan("1.7B", gpu="rtx3090", budget_gpus=2, max_model_len=8192),
                 lambda: solver.estimate_memory("1.7B", "rtx3090", 2, 8192)):
        with pytest.raises(solver.QueryError) as raised:
            call()
        assert str(raised.value).startswith("unknown GPU 'rtx3090'; accepted: ")
        assert str(raised.value).endswith(own_gpu)
    catalog = solver.load_catalog().with_gpu_types([solver.described_gpu_type("rtx3090", memory_mib=24576)])
    (answer,) = solver.plan("1.7B", gpu="rtx3090", budget_gpus=2, max_model_len=8192, catalog=catalog)
    assert (answer.gpu, answer.best.setting.label, answer.best.evidence) == ("rtx3090", "Env + Offload + SP=2",
                                                                             "estimated")  # a 24 GiB card's margin
    # A model: its config.json.
    with pytest.raises(solver.QueryError, match=re.escape(
            "; or, for a model of your own, its Hugging Face config.json: solver.load_model_config(PATH), with "
            "catalog=solver.load_catalog().with_model(that)") + "$"):
        solver.plan("Mistral-7B", gpu="a100", max_model_len=8192)
    # A GPU type without bf16 is refused, with no hint: no GPU type of one's own may take its name.
    with pytest.raises(solver.QueryError, match=r"^'V100' is a V100, which has no bf16 .* a GPU type that has it$"):
        solver.plan("1.7B", gpu="V100", budget_gpus=2, max_model_len=8192)
    # A value of the wrong type is still told its type, with no hint.
    with pytest.raises(solver.QueryError, match=r"^a GPU is named by a string, got 5$"):
        solver.plan("1.7B", gpu=5, max_model_len=8192)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (dict(gpus=8, max_model_len=32768, sp=3),
         ("--sp 3 is not allowed for Qwen3-4B: SP=3 does not divide its 32 attention heads (the degrees that divide "
          "the 8 trainer GPUs, that Qwen3-4B's heads allow and that keep an SP group in a node of 8 GPUs: "
          "1, 2, 4, 8)")),
        (dict(gpus=6, max_model_len=32768, sp=4),
         ("--sp 4 is not allowed: SP=4 does not divide 6 GPUs (the degrees that divide the 6 trainer GPUs, that "
          "Qwen3-4B's heads allow and that keep an SP group in a node of 8 GPUs: 1, 2)")),
        (dict(gpus=16, max_model_len=32768, sp=16),
         ("--sp 16 is not allowed: 16 GPUs span nodes of 8 (--node-gpus), and SP=16 does not divide a node: "
          "rft-solver's rule, not Trinity's or verl's, which run it with its all-to-all crossing nodes; the tables "
          "measured SP within one node (the degrees that divide the 16 trainer GPUs, that Qwen3-4B's heads allow and "
          "that keep an SP group in a "
          "node of 8 GPUs: 1, 2, 4, 8)")),
        (dict(gpus=0, max_model_len=32768), "--gpus must be a whole number from 1 to 65536, got 0"),
        (dict(gpus=8, max_model_len=1 << 30), "--len must be a whole number from 1 to 16777216, got 1073741824"),
        (dict(gpus=8, max_model_len=32768, margin=1.0),
         "--margin is a fraction from 0 to below 1, got 1.0 (as a percentage, 1% is 0.01)"),
        ({"gpus": 12, "max_model_len": 32768},
         ("--gpus 12 is not allowed: 12 GPUs span nodes of 8 (--node-gpus) but are not whole nodes (the counts "
          "allowed: 1 to 8, then whole nodes: 8 and 16 are the nearest)")),
        ({"gpus": 6, "max_model_len": 32768, "node_gpus": 4},
         ("--gpus 6 is not allowed: 6 GPUs span nodes of 4 (--node-gpus) but are not whole nodes (the counts "
          "allowed: 1 to 4, then whole nodes: 4 and 8 are the nearest)")),
        ({"gpus": 20, "max_model_len": 32768},
         ("--gpus 20 is not allowed: 20 GPUs span nodes of 8 (--node-gpus) but are not whole nodes (the counts "
          "allowed: 1 to 8, then whole nodes: 16 and 24 are the nearest)")),
    ],
)
def test_estimate_memory_checks_its_request_like_the_command(arguments: dict, message: str):
    with pytest.raises(solver.QueryError) as raised:
        solver.estimate_memory("4B", "h100", **arguments, option_names=COMMAND_OPTIONS)
    assert str(raised.value) == message


def test_estimate_memory_takes_counts_at_their_bounds():
    # "from 1 to 16777216" (and 16) includes the bounds: the longest length and the largest node are estimated.
    longest = solver.estimate_memory("8B", "h100", 8, 1 << 24, sp=8)
    assert (longest.fits, longest.tokens_per_gpu) == (False, 1 << 22)
    assert solver.estimate_memory("4B", "h100", 8, 4096, node_gpus=MAX_NODE_GPUS).fits
    # Trinity's default budget at half the cap is the cap itself, which is taken (one token more is refused).
    assert solver.estimate_memory("4B", "h100", 8, 1 << 23).tokens_per_gpu == 1 << 24
    # A budget of one's own that fits holds budget x SP tokens, but no length is longer than the cap.
    big = CATALOG.with_gpu_types([solver.described_gpu_type("Big", 4096)])
    own = solver.estimate_memory("0.6B", "Big", 8, 65536, sp=8, catalog=big, max_token_len_per_gpu=5 << 19)
    assert (own.fits, own.tokens_per_gpu, own.longest_len) == (True, 5 << 19, 1 << 24)
    # One token more than the cap, as one's own budget, is refused as the budget it is (not as a length's default).
    with pytest.raises(solver.QueryError, match=r"^max_token_len_per_gpu must be a whole number from 1 to 16777216, "
                       r"got 16777217$"):
        solver.estimate_memory("8B", "h100", 8, 32768, max_token_len_per_gpu=(1 << 24) + 1)


def test_estimate_memory_with_a_budget_of_ones_own_is_not_refuted_by_cells_measured_at_the_default():
    # Qwen3-4B on 2 A100s at 16384: at Trinity's default budget (32768 tokens per GPU) the tables say vanilla runs out
    # of memory (the cell says Env). Half that budget, the default at 8192 where they say it trains, fits: neither
    # the verdict nor the longest length is refuted by a cell measured at another budget.
    default = solver.estimate_memory("4B", "a100", 2, 16384)
    assert (default.fits, default.tables.trains, default.tables.source.setting) == (False, False, "Env")
    own = solver.estimate_memory("4B", "a100", 2, 16384, max_token_len_per_gpu=16384)
    assert (own.fits, own.longest_len, own.tables, own.longest_refuted, own.tables_longest) == (
        True, 16384, None, None, None)


def test_estimate_memory_says_how_long_the_tables_let_exactly_its_gpus_train():
    # Qwen3-1.7B with Env + Offload on 2 A100s: the memory model's longest, 29696, is refuted (1 GPU ran out of
    # memory at 32768); on exactly 2 GPUs the tables reach 24576 (1 GPU's own table documents 28672).
    estimate = solver.estimate_memory("1.7B", "a100", 2, 8192, env=True, offload=True)
    assert (estimate.longest_len, estimate.longest_refuted.source.gpus, estimate.tables_longest) == (29696, 1, 24576)
    assert estimate.tables_longer is None  # refuted: the tables reach less far
    longer = solver.estimate_memory("0.6B", "a100", 2, 8192)  # 23552 by the memory model, 24576 documented
    assert (longer.longest_len, longer.longest_refuted, longer.tables_longest, longer.tables_longer.evidence,
            longer.tables_longer.source.max_model_len) == (23552, None, None, "documented", 24576)


def test_estimate_memory_cautions_rocm_only_with_env():
    assert solver.estimate_memory("8B", "mi300x", 8, 32768).cautions == ()
    assert solver.estimate_memory("8B", "mi300x", 8, 32768, env=True).cautions == (
        solver.results.rocm_env_caution(API_OPTIONS),)
    assert solver.results.rocm_env_caution(API_OPTIONS).endswith(
        "check yours (solver.plan(env=False) plans without it)")


def test_plan_passes_the_token_budget_through(cli):
    (lowered,) = solver.plan("8B", gpu="h20", max_model_len=131072, budget_gpus=4, token_budget="auto")
    assert lowered.plans[0].lowered_budget and not solver.plan("8B", gpu="h20", max_model_len=131072,
                                                               budget_gpus=4)[0].plans
    _, out, _ = cli("--model", "8B", "--gpu", "h20", "--len", "131072", "--gpus", "4", "--token-budget", "auto", "--json")
    assert [lowered.as_json()] == printed_answers(out)


def test_an_answer_rebuilt_from_its_json_gives_the_same_json(cli):
    (answer,) = solver.plan("8B", gpu="h20", max_model_len=131072, budget_gpus=4, token_budget="auto", sp=4, env=True)
    data = answer.as_json()
    assert (data["max_model_len"], data["exact"], data["pins"], data["plans"][0]["lowered_budget"]) == (
        131072, False, {"sp": 4, "env": True, "offload": None}, True)
    rebuilt = solver.Answer.model_validate(data)
    assert rebuilt.as_json() == data and rebuilt.pins == solver.Pins(sp=4, env=True)
    # The JSON rounds the memory figures to two decimals; the plan keeps them whole (the text rounds them once).
    best, again = answer.best.model_dump(mode="json"), rebuilt.best.model_dump(mode="json")
    assert again == best and rebuilt.best.headroom_gb == best["headroom_gb"] != answer.best.headroom_gb
    # lowered_budget is derived from the token budget: a JSON plan that contradicts it is refused.
    with pytest.raises(ValueError, match="lowered_budget is False, but max_token_len_per_gpu 35840 says True"):
        solver.Plan.model_validate({**data["plans"][0], "lowered_budget": False})


def test_an_answers_json_echoes_the_limits_of_its_query_and_rebuilds_with_them(cli):
    # --host-ram, --margin and --token-budget change the answer, so its JSON carries them (host_ram_gb as solve map's
    # JSON names it, margin as solve memory's); without them, the defaults: no host memory, the memory model's margin.
    _, out, _ = cli("--model", "8B", "--gpu", "h20", "--len", "128k", "--gpus", "4", "--host-ram", "2TB", "--margin",
                    "0.05", "--token-budget", "auto", "--json")
    (data,) = printed_answers(out)
    assert (data["host_ram_gb"], data["margin"], data["token_budget"], data["memory_model_source"]) == (
        2048.0, 0.05, "auto", None)
    (answer,) = solver.plan("8B", gpu="h20", max_model_len=131072, budget_gpus=4, host_ram_gb=2048.0, margin=0.05,
                            token_budget="auto")
    assert answer.as_json() == data
    rebuilt = solver.Answer.model_validate_json(json.dumps(data))
    assert rebuilt.as_json() == data and (rebuilt.host_ram_gb, rebuilt.margin, rebuilt.token_budget) == (
        2048.0, 0.05, "auto")
    (plain,) = json.loads(cli("--model", "8B", "--gpu", "h20", "--len", "8k", "--json")[1])
    assert (plain["host_ram_gb"], plain["margin"], plain["token_budget"], plain["memory_model_source"]) == (
        None, load_memory_model().margin, "default", None)


def test_a_rebuilt_answer_gives_the_fragment_of_the_answer_it_came_from():
    # The JSON keeps the query's rollout GPUs and node size, which the fragment's cluster section and its whole-node
    # and Env lines need: a service that stores answers as JSON makes the same config later.
    for layout, said in (({"rollout_gpus": 4}, "cluster:"), ({"node_gpus": 4}, "spans 2 whole nodes of 4 GPUs"),
                         ({}, "before Ray starts")):
        (answer,) = solver.plan("8B", gpu="a100", max_model_len=32768, budget_gpus=8, **layout)
        rebuilt = solver.Answer.model_validate_json(json.dumps(answer.as_json()))
        assert (rebuilt.rollout_gpus, rebuilt.node_gpus) == (layout.get("rollout_gpus"), layout.get("node_gpus", 8))
        assert said in solver.trinity_config(rebuilt) and solver.trinity_config(rebuilt) == solver.trinity_config(
            answer)
    # Counts no query takes are refused as the answer is rebuilt, not met later as an IndexError in the fragment.
    for field, value in (("node_gpus", 0), ("rollout_gpus", -1), ("budget_gpus", 0)):
        with pytest.raises(ValidationError, match=f"{field}\n  Input should be greater than or equal to"):
            solver.Answer.model_validate({**answer.as_json(), field: value})
    # So are lengths, memory and costs no plan has: SP=0 made the fragment divide by zero, and NaN GiB was taken.
    data = answer.as_json()
    for field, value, refusal in (
            ("max_model_len", 0, "greater than 0"), ("train_batch_size", 0, "greater than 0"),
            ("plans.0.sp", 0, "greater than 0"), ("plans.0.gpus", 0, "greater than 0"),
            ("plans.0.max_model_len", 0, "greater than 0"), ("plans.0.unused_gpus", -1, "greater than or equal to 0"),
            ("plans.0.nodes", 0, "greater than 0"), ("plans.0.rope_scaling_factor", -2.0, "greater than 0"),
            ("plans.0.cost", -1.0, "greater than or equal to 0"),
            ("plans.0.memory_gb", float("nan"), "a finite number"),
            ("plans.0.headroom_gb", float("inf"), "a finite number"),
            ("plans.0.host_memory_gb", -3.0, "greater than or equal to 0"),
            ("plans.0.source.gpus", 0, "greater than 0"), ("pins.sp", 0, "greater than 0")):
        *within, name = field.split(".")
        changed = json.loads(json.dumps(data))
        place = changed
        for key in within:
            place = place[int(key) if key.isdigit() else key]
        place[name] = value
        with pytest.raises(ValidationError, match=f"{field}\n  Input should be {refusal}"):
            solver.Answer.model_validate_json(json.dumps(changed))


def test_a_rebuilt_answers_fragment_differs_only_in_the_memory_figures_the_json_rounds():
    # The JSON's memory figures have two decimals, the plan's are whole: where they round apart (11.548 GiB to spare
    # is 11.5, the JSON's 11.55 is 11.6), the rebuilt fragment's evidence comment says the JSON's, and docs/api.md
    # says so; its keys are the same.
    (answer,) = solver.plan("Qwen2.5-32B", gpu="h800", max_model_len=32768, budget_gpus=8, exact=True, sp=2,
                            env=True, offload=True)
    rebuilt = solver.Answer.model_validate_json(json.dumps(answer.as_json()))
    ours, again = solver.trinity_config(answer).splitlines(), solver.trinity_config(rebuilt).splitlines()
    assert [(line, other) for line, other in zip(ours, again, strict=True) if line != other] == [
        ("# evidence: estimated: the memory model predicts 61.7 GiB per GPU, 11.5 GiB to spare; beyond its",
         "# evidence: estimated: the memory model predicts 61.7 GiB per GPU, 11.6 GiB to spare; beyond its")]
    assert solver.trinity_settings(rebuilt) == solver.trinity_settings(answer)
    # Only the JSON rounds them: a Python dump keeps them whole, so the answer rebuilt from it is the answer.
    best = answer.plans[0]
    assert (answer.as_json()["plans"][0]["headroom_gb"], round(best.headroom_gb, 3)) == (11.55, 11.548)
    assert best.model_dump()["headroom_gb"] == best.headroom_gb and best.model_dump()["memory_gb"] == best.memory_gb
    assert solver.Plan.model_validate(best.model_dump()) == best
    page = " ".join((EXAMPLES.parent / "api.md").read_text(encoding="utf-8").split())
    assert ("so `solver.trinity_config` makes the same fragment from a rebuilt answer as from the answer itself, but "
            "for the memory figures of its evidence comment, which it rounds from the JSON's two decimals") in page


def test_plan_passes_the_node_size_and_memory_model_through(cli):
    (wide,) = solver.plan("8B", gpu="h100", objective="max_len", budget_gpus=16)
    (narrow,) = solver.plan("8B", gpu="h100", objective="max_len", budget_gpus=16, node_gpus=4,
                            memory=load_memory_model())
    assert (wide.plans[0].sp, narrow.plans[0].sp) == (8, 4)  # SP stays within a node
    _, out, _ = cli("--model", "8B", "--gpu", "h100", "--maximize", "len", "--gpus", "16", "--node-gpus", "4", "--json")
    # The same JSON, but that the API's words name its keyword for a train batch, where the command's name its flag.
    assert narrow.rollout_kept is not None and narrow.rollout_kept.plan is not None
    assert narrow.rollout_kept.plan.cautions[-1].endswith(
        "must be a multiple of 3; give train_batch_size to plan for yours")
    (as_printed,) = solver.plan("8B", gpu="h100", objective="max_len", budget_gpus=16, node_gpus=4,
                                option_names=COMMAND_OPTIONS)
    assert [as_printed.as_json()] == printed_answers(out) != [narrow.as_json()]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: solver.plan("8B", objective="bogus", max_model_len=4096),
         "objective must be one of cheapest, max_len, min_gpus, min_gpu_hours, got 'bogus'"),
        # apiwords90: the guess the command's choices get (solver.tables.choice_meant); before, none
        (lambda: solver.plan("8B", objective="gpu_hours", max_model_len=4096),
         ("objective must be one of cheapest, max_len, min_gpus, min_gpu_hours, got 'gpu_hours'; did you mean "
          "'min_gpu_hours'?")),
        (lambda: solver.plan("8B", gpu="a100", max_model_len=8192, objective="min-gpus"),
         ("objective must be one of cheapest, max_len, min_gpus, min_gpu_hours, got 'min-gpus'; did you mean "
          "'min_gpus'?")),
        (lambda: solver.plan("8B", objective="min_gpu_hours", max_model_len=4096, budget_gpus=8, exact=True),
         'objective="min_gpu_hours" chooses the GPU count: drop exact=True'),
        (lambda: solver.plan("8B", objective="min_gpu_hours"),
         'objective="min_gpu_hours" needs a length: max_model_len=L (tokens, e.g. 32768)'),
        (lambda: solver.plan("8B", estimate="maybe", max_model_len=4096),
         "estimate must be one of auto, only, never, got 'maybe'"),
        (lambda: solver.plan("8B", token_budget="half", max_model_len=4096),
         "token_budget takes default, auto or the most tokens per GPU (a whole number from 1 to 16777216), got 'half'"),
        (lambda: solver.plan("8B", token_budget="auto", estimate="never", max_model_len=4096),
         ('token_budget="auto" lowers the token budget of estimated plans, which estimate="never" turns off: drop '
          "one of them")),
        (lambda: solver.plan("8B", budget_gpus=4.5, max_model_len=4096),
         "budget_gpus must be a whole number or None, got 4.5"),
        (lambda: solver.plan("8B", budget_gpus=True, max_model_len=4096),
         "budget_gpus must be a whole number or None, got True"),
        (lambda: solver.plan("8B", max_model_len="32kb"),
         "max_model_len must be a whole number or None, got '32kb' (tokens, or thousands of 1024: 32768 or 32k)"),
        # thousands out of range are quoted as written, not as the -2048 they read as
        (lambda: solver.plan("8B", max_model_len="-2k"),
         "max_model_len must be a whole number from 1 to 16777216, got '-2k'"),
        (lambda: solver.estimate_memory("8B", "h100", 8, "0k"),
         "max_model_len must be a whole number from 1 to 16777216, got '0k'"),
        (lambda: solver.plan("8B", max_model_len=4096, token_budget="-2k"),  # as the length's (hints88)
         "token_budget must be a whole number from 1 to 16777216, got '-2k'"),
        (lambda: solver.estimate_memory("8B", "h100", 8, 4096, max_token_len_per_gpu="-2k"),
         "max_token_len_per_gpu must be a whole number from 1 to 16777216, got '-2k'"),
        (lambda: solver.plan(None, max_model_len=4096), "a model is named by a string, got None"),
        (lambda: solver.plan(solver.load_model_config(EXAMPLES.parent.parent / "tests/data/hf-configs/phi-4.json"),
                             max_model_len=4096),  # a notebook's first try with a config.json's model
         "a model is named by a string, got a Model: pass its name, 'phi-4', with catalog=catalog.with_model(model)"),
        (lambda: solver.estimate_memory("4B", solver.described_gpu_type("mine", 64), 8, 4096),
         ("a GPU is named by a string, got a GpuType: pass its name, 'mine', with "
          "catalog=catalog.with_gpu_types([gpu_type])")),
        (lambda: solver.place(FLEET, minimize="gpus"), "minimize must be one of None, nodes, got 'gpus'"),
        (lambda: solver.place(FLEET, minimize="node"),  # as solve cluster --minimize node (apiwords90)
         "minimize must be one of None, nodes, got 'node'; did you mean 'nodes'?"),
        (lambda: solver.place(FLEET, estimate="bogus"), "estimate must be one of auto, only, never, got 'bogus'"),
        (lambda: solver.place(FLEET, time_limit_s=0), "time_limit_s must be above 0 seconds and at most 1000000000, got 0"),
        (lambda: solver.place(FLEET, progress=5), "progress must be a function or None, got 5"),
        (lambda: solver.place(FLEET, widen="no"), "widen must be True or False, got 'no'"),
        # numpy's scalars (a notebook's arange or DataFrame) are named, with how to pass them
        (lambda: solver.plan("4B", max_model_len=8192, budget_gpus=numpy.int64(4)),
         "budget_gpus must be a whole number or None, got a numpy int64 (pass int(...))"),
        (lambda: solver.plan("4B", max_model_len=8192, env=numpy.True_),
         "env must be True, False or None, got a numpy bool (pass bool(...))"),
        (lambda: solver.plan("4B", max_model_len=8192, budget_gpus=numpy.float64(4)),  # a float would not do either
         "budget_gpus must be a whole number or None, got a numpy float64"),
        # a numpy number of the kind taken but out of range is quoted as it is typed, not as np.float64(2.0)
        (lambda: solver.plan("4B", max_model_len=8192, margin=numpy.float64(2.0)),
         "margin is a fraction from 0 to below 1, got 2.0 (as a percentage, 2% is 0.02)"),
        (lambda: solver.place(FLEET, time_limit_s=numpy.float64(-0.5)),
         "time_limit_s must be above 0 seconds and at most 1000000000, got -0.5"),
        # another mapping is cut as a dict is, a set-like view as a set is, and a class named with a vowel takes 'an'
        (lambda: solver.plan("4B", max_model_len=MappingProxyType({f"k{n}": n for n in range(9)})),
         ("max_model_len must be a whole number or None, got {'k0': 0, 'k1': 1, 'k2': 2, 'k3': 3, 'k4': 4, "
          "'k5': 5, ...}")),
        (lambda: solver.plan("4B", max_model_len={f"k{n}": n for n in range(9)}.keys()),
         "max_model_len must be a whole number or None, got {'k0', 'k1', 'k2', 'k3', 'k4', 'k5', ...}"),
        (lambda: solver.plan("4B", max_model_len=array.array("i", [8192])),
         "max_model_len must be a whole number or None, got an array"),
        # a choice: an array is none of them (not numpy's "truth value of an array is ambiguous"); a value that
        # reads as a str choice but is not a str says so; and a long one is cut, as other values are
        (lambda: solver.plan("4B", max_model_len=8192, objective=numpy.array([1, 2])),
         "objective must be one of cheapest, max_len, min_gpus, min_gpu_hours, got array([1, 2])"),
        (lambda: solver.trinity_config(solver.plan("4B", gpu="h20", max_model_len=8192)[0], version=0.5),
         f"version {TRINITY_TAKES}, as a string, or None, got 0.5 (a float: pass the string '0.5')"),
        (lambda: solver.trinity_config(solver.plan("4B", gpu="h20", max_model_len=8192)[0], version=10 ** 5000),
         f"version {TRINITY_TAKES}, as a string, or None, got {brief(10 ** 5000)}"),  # not str()'s ValueError
        (lambda: solver.plan("4B", gpu="a100", max_model_len=8192)[0].best.evidence_text(5),  # not "the 5 table"
         "gpu must be a str, got 5"),
        (lambda: solver.plan("4B", gpu="a100", max_model_len=8192)[0].best.evidence_text("a100", CATALOG.model("4B")),
         "model must be a str or None, got a Model"),
        (lambda: solver.place(FLEET, minimize="n" * 1000),
         f"minimize must be one of None, nodes, got {brief('n' * 1000)}"),  # 60 characters
        # reading a Trinity config
        (lambda: read_trinity_config("model: {model_path: q/Qwen3-4B}", "t.yaml", None),
         "environ must be a Mapping, got None"),
        (lambda: read_trinity_config("model: {model_path: q/Qwen3-4B}", "t.yaml", {}, "0.7"),
         ("version takes 0.5, 0.5.0, 0.5.1, 0.5.2, 0.6 or 0.6.0 (or a tag of one, v0.5.2), got '0.7' (rft-solver "
          "knows the rules of these releases alone)")),
        (lambda: solver.load_catalog().with_model("x"), "model must be a Model, got 'x'"),
        (lambda: solver.load_catalog().with_gpu_types(["h100"]), "gpu_types must be a GpuType, got 'h100'"),
        (lambda: solver.load_catalog().with_gpu_types("h100"), "gpu_types must be a list of GpuType, got 'h100'"),
        (lambda: solver.load_catalog().with_gpu_types([solver.described_gpu_type("h100", 24)]),
         "h100 names H100-80GB (79.6 GiB), another GPU type: give yours a name of its own"),
        (lambda: solver.load_catalog().with_gpu_types([solver.GpuType(gpu="Mine-40GB", memory_gb=40, aliases=("a100",),
                                                                      source="mine")]),
         "a100 names A100-80GB (80.0 GiB), another GPU type: give yours a name of its own"),
        (lambda: solver.load_catalog().with_gpu_types(solver.described_gpu_type("X", 64)),
         "gpu_types must be a list of GpuType, got a GpuType"),
        (lambda: solver.described_gpu_type("MyAccel", "64"),
         "memory_gb must be a whole number or None, got '64' (a str: pass 64)"),
        (lambda: solver.described_gpu_type("MyAccel", 0), "MyAccel: its memory must be from 8 to 4096 GB, got 0 GB"),
        (lambda: solver.described_gpu_type("MyAccel", memory_mib=1025),
         "MyAccel: its memory must be from 8192 MiB (8 GiB) to 4194304 MiB, got 1025 MiB"),
        (lambda: solver.described_gpu_type("MyAccel"), "'MyAccel': give its memory in GB or MiB"),
        # estimate_memory: the node size and the flags' types
        (lambda: solver.estimate_memory("4B", "h100", 16, 4096, node_gpus=0),
         "node_gpus must be a whole number from 1 to 16, got 0"),
        (lambda: solver.estimate_memory("4B", "h100", 16, 4096, node_gpus=-8),
         "node_gpus must be a whole number from 1 to 16, got -8"),
        (lambda: solver.estimate_memory("4B", "h100", 8, 4096, node_gpus=MAX_NODE_GPUS + 1),
         ("node_gpus must be a whole number from 1 to 16, got 17 (a node is one host, Trinity's cluster.gpu_per_node, "
          "and the largest hosts have 16 GPUs: give more GPUs as more nodes)")),
        (lambda: solver.estimate_memory("4B", "h100", 8, 4096, offload=1), "offload must be True or False, got 1"),
        (lambda: solver.estimate_memory("4B", "h100", 8, 4096, env=None), "env must be True or False, got None"),
        (lambda: solver.estimate_memory("4B", "h100", None, 4096), "gpus must be a whole number, got None"),
        (lambda: solver.estimate_memory("4B", "h100", 8, 4096, margin="0.1"),
         "margin must be a number or None, got '0.1' (a str: pass 0.1)"),
        (lambda: solver.estimate_memory("4B", "h100", 8, 4096, catalog="tables"),
         "catalog must be a Catalog or None, got 'tables'"),
        # plan and make_query: every argument's type
        (lambda: solver.plan("4B", max_model_len=4096, margin="0.1"),
         "margin must be a number or None, got '0.1' (a str: pass 0.1)"),
        (lambda: solver.plan("4B", max_model_len=4096, host_ram_gb="1"),
         "host_ram_gb must be a number or None, got '1' (GB per node as a number: 2048 for 2 TB)"),
        (lambda: solver.plan("4B", gpu="a100", node_gpus="8", rollout_gpus=3, budget_gpus=6, exact=True,
                             max_model_len=8192), "node_gpus must be a whole number or None, got '8' (a str: pass 8)"),
        (lambda: solver.plan("4B", max_model_len=4096, catalog="tables"), "catalog must be a Catalog or None, got 'tables'"),
        (lambda: solver.plan("4B", max_model_len=4096, memory="x.yaml"),
         "memory must be a MemoryModel or None, got 'x.yaml' (a path: pass solver.load_memory_model('x.yaml'))"),
        (lambda: solver.plan("4B", max_model_len=4096, env=2), "env must be True, False or None, got 2"),
        (lambda: solver.plan("4B", max_model_len=4096, env="yes"), "env must be True, False or None, got 'yes'"),
        (lambda: solver.plan("4B", max_model_len=4096, explain=1), "explain must be True or False, got 1"),
        (lambda: solver.plan("4B", objective="max_len", exact="no", budget_gpus=6),
         "exact must be True or False, got 'no'"),
        # apiwords90: how to build it, as a fleet's dict is told; before, no hint
        (lambda: solver.plan("4B", max_model_len=4096, weights={"offload": 1}),
         "weights must be a Weights or None, got {'offload': 1} (a mapping: pass solver.Weights.model_validate(it))"),
        (lambda: solver.plan("4B", max_model_len=4096, weights=solver.load_catalog()),
         "weights must be a Weights or None, got a Catalog"),
        (lambda: solver.make_query(solver.load_catalog(), model="4B", max_model_len=4096, seed=-1),
         "seed must be from 0 to 2147483647 (CP-SAT's seed is 32-bit), got -1"),
        (lambda: solver.make_query(solver.load_catalog(), model="4B", max_model_len=4096, seed=MAX_SEED + 1),
         "seed must be from 0 to 2147483647 (CP-SAT's seed is 32-bit), got 2147483648"),
        (lambda: solver.make_query(solver.load_catalog(), model="4B", max_model_len=4096, seed=1.5),
         "seed must be a whole number, got 1.5"),
        (lambda: solver.make_query("tables", model="4B", max_model_len=4096), "catalog must be a Catalog, got 'tables'"),
        # place
        (lambda: solver.place(5), "fleet must be a Fleet, a Path or a str, got 5"),
        (lambda: solver.place(FLEET, weights="costs.yaml"),
         "weights must be a Weights or None, got 'costs.yaml' (a path: pass solver.load_weights('costs.yaml'))"),
        # the search: one cap on workers, and a finite time limit, for plan and place alike
        (lambda: solver.plan("4B", max_model_len=4096, workers=10001),
         "workers must be a whole number from 1 to 1024, got 10001"),
        (lambda: solver.place(FLEET, workers=10001), "workers must be a whole number from 1 to 1024, got 10001"),
        (lambda: solver.place(FLEET, seed=-1), "seed must be from 0 to 2147483647 (CP-SAT's seed is 32-bit), got -1"),
        (lambda: solver.plan("4B", max_model_len=4096, seed=-1),
         "seed must be from 0 to 2147483647 (CP-SAT's seed is 32-bit), got -1"),
        (lambda: solver.plan("4B", max_model_len=4096, time_limit_s=10**400),
         "time_limit_s must be above 0 seconds and at most 1000000000, got 1" + "0" * 56 + "..."),
        (lambda: solver.plan("4B", max_model_len=4096, budget_gpus=10**5000),
         "budget_gpus must be a whole number from 1 to 65536, got a whole number of about 5000 digits"),
        (lambda: solver.plan("4B", max_model_len=4096, train_batch_size=0),
         "train_batch_size must be a whole number from 1 to 16777216, got 0"),
        (lambda: solver.plan("4B", max_model_len=4096, train_batch_size=16777217),
         "train_batch_size must be a whole number from 1 to 16777216, got 16777217"),
        (lambda: solver.load_catalog(5), "directory must be a Path, a str or None, got 5"),
        (lambda: solver.load_weights(5), "path must be a Path, a str or None, got 5"),
        (lambda: solver.load_memory_model(5), "path must be a Path, a str or None, got 5"),
        (lambda: solver.load_fleet(FLEET, "tables"), "catalog must be a Catalog or None, got 'tables'"),
        (lambda: solver.make_query(solver.load_catalog(), model="8B", max_model_len=8192, node_source=5),
         "node_source must be a str, got 5"),
        (lambda: solver.plan("4B", max_model_len=4096, time_limit_s=float("inf")),
         "time_limit_s must be above 0 seconds and at most 1000000000, got inf"),
        (lambda: solver.place(FLEET, time_limit_s=float("inf")), "time_limit_s must be above 0 seconds and at most 1000000000, got inf"),
        (lambda: solver.place(FLEET, time_limit_s=float("nan")), "time_limit_s must be above 0 seconds and at most 1000000000, got nan"),
        (lambda: solver.plan("4B", max_model_len=4096, time_limit_s=True), "time_limit_s must be a number, got True"),
        (lambda: solver.place(FLEET, time_limit_s=True), "time_limit_s must be a number, got True"),
        (lambda: solver.plan("4B", max_model_len=4096, time_limit_s=numpy.int64(5)),
         "time_limit_s must be a number, got a numpy int64 (pass int(...))"),
        # calibrate_memory_model
        (lambda: solver.calibrate_memory_model("my-cells.yaml"), "cells must be a list of paths, got 'my-cells.yaml'"),
        (lambda: solver.calibrate_memory_model([5]), "cells must be a Path or a str, got 5"),
        (lambda: solver.calibrate_memory_model({"my-cells.yaml"}),
         "cells must be a list of paths, got {'my-cells.yaml'}"),
        (lambda: solver.calibrate_memory_model({"my-cells.yaml": 1}),
         "cells must be a list of paths, got {'my-cells.yaml': 1}"),
        (lambda: solver.calibrate_memory_model(b"my-cells.yaml"),
         "cells must be a list of paths, got b'my-cells.yaml'"),
        (lambda: solver.calibrate_memory_model([EXAMPLES / "my-cells.yaml", str(EXAMPLES / "." / "my-cells.yaml")]),
         f"cells: {EXAMPLES / '.' / 'my-cells.yaml'}: the same file is given twice; give each file once"),
        (lambda: solver.calibrate_memory_model(with_tables=True),
         "with_tables adds the documented tables to the cells you give: give cells"),
        (lambda: solver.calibrate_memory_model([EXAMPLES / "my-cells.yaml"], with_tables=1),
         "with_tables must be True or False, got 1"),
        (lambda: solver.calibrate_memory_model(catalog="tables"), "catalog must be a Catalog or None, got 'tables'"),
        (lambda: solver.calibrate_memory_model(catalog=solver.Catalog(  # GPU types of one's own, none with tables
            models=CATALOG.models, gpu_types=(solver.described_gpu_type("Mine", 80),))), "no cells to calibrate on"),
        # the steps behind plan and --from-config, documented in docs/api.md
        (lambda: answer_query(None, CATALOG), "query must be a Query, got None"),
        (lambda: answer_query(QUERY, CATALOG, explain=1), "explain must be True or False, got 1"),
        (lambda: with_config_verdicts(None, QUERY, CATALOG, CONFIG, CONFIG_TEXT, "t", {}),
         "answers must be a tuple, got None"),
        (lambda: with_config_verdicts((None,), QUERY, CATALOG, CONFIG, CONFIG_TEXT, "t", {}),
         "answers[0] must be an Answer, got None"),
        (lambda: with_config_verdicts((), QUERY, None, CONFIG, CONFIG_TEXT, "t", {}), "catalog must be a Catalog, got None"),
        (lambda: with_config_verdicts((), QUERY, CATALOG, {"a": 1}, CONFIG_TEXT, "t", {}),
         "config must be a TrinityConfig, got {'a': 1}"),
        (lambda: with_config_verdicts((), QUERY, CATALOG, CONFIG, CONFIG_TEXT, "t", {"PYTORCH_CUDA_ALLOC_CONF": 1}),
         "environ's values must be a str, got 1"),
        (lambda: patch_trinity_config(CONFIG_TEXT, None, CATALOG.model("8B")), "plan must be a Plan, got None"),
        (lambda: trinity_fragment(None, CATALOG.model("8B")), "plan must be a Plan, got None"),
        (lambda: patch_trinity_config(CONFIG_TEXT, solver.plan("8B", gpu="h20", max_model_len=8192)[0].best, "8B"),
         "model must be a Model, got '8B'"),
        # not pydantic's ValidationError, a bare TypeError or ValueError, or YAML broken by a line break
        (lambda: solver.described_gpu_type("MyAccel", 64, source=""), "source must be printable text, got ''"),
        (lambda: solver.described_gpu_type("MyAccel", 64, source="lab\nB"),
         "source must be printable text, got 'lab\\nB'"),
        (lambda: config_query(CATALOG, CONFIG, max_model_len="32768"),
         "max_model_len must be a whole number or None, got '32768' (a str: pass 32768)"),
        (lambda: config_query(CATALOG, CONFIG, max_model_len=float("nan")),
         "max_model_len must be a whole number or None, got nan"),
        (lambda: trinity_fragment(solver.plan("8B", gpu="h20", max_model_len=8192)[0].best, CATALOG.model("8B"),
                                  gpu="H20\nmodel: {}"), "gpu must be printable text, got 'H20\\nmodel: {}'"),
        (lambda: load_config_mapping(None, "t.yaml"), "text must be a str, got None"),
        (lambda: load_config_mapping("model: {}", None), "name must be a str, got None"),
        (lambda: fragment_layout(None), "answer must be an Answer, got None"),
        (lambda: fragment_engines(solver.plan("8B", gpu="h20", max_model_len=8192, rollout_gpus=2)[0], None),
         "catalog must be a Catalog, got None"),
        (lambda: CATALOG.for_fleet(str(FLEET)), f"fleet must be a Fleet, got {brief(str(FLEET))}"),
    ],
)
def test_bad_arguments_raise_one_line_query_errors(call, message: str):
    with pytest.raises(QueryError) as caught:
        call()
    assert str(caught.value) == message


FLEET_TEXT = FLEET.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda path: solver.place(path), "fleet"),
        (lambda path: solver.placement_configs(placed_fleet(), path), "fleet"),
        (lambda path: solver.load_fleet(path), "path"),
        (lambda path: solver.load_catalog(path), "directory"),
        (lambda path: solver.load_weights(path), "path"),
        (lambda path: solver.load_memory_model(path), "path"),
        (lambda path: solver.load_model_config(path), "path"),
        (lambda path: solver.calibrate_memory_model([path]), "cells"),
        (lambda path: CATALOG.with_cells(path), "path"),
        (lambda path: solver.memory_answer("8B", "h100", 8, 4096, memory=path), "memory"),
    ],
)
def test_an_empty_path_or_a_files_text_for_its_path_is_refused_in_one_short_line(call, name: str):
    # Path("") is the current folder ("'.: cannot read: Is a directory'"), and the command refuses an empty path;
    # a cluster file's text passed as its path was quoted whole in "cannot read" (1211 characters for fleet.yaml).
    for empty in ("", "  "):
        with pytest.raises(QueryError) as caught:
            call(empty)
        assert str(caught.value) == f"{name} must be a non-empty path, got {empty!r}"
    for text in (FLEET_TEXT, FLEET_TEXT.replace("\n", "\r")):  # old Mac line ends too
        with pytest.raises(QueryError) as caught:
            call(text)
        assert str(caught.value) == f"{name} must be a path, not a file's text: got several lines ({brief(text)})"
        assert len(str(caught.value)) < 140
    # A lone surrogate that is no byte's escape names no file: os.fsencode raised UnicodeEncodeError, not the API's
    # error (a byte's escape, as os.fsdecode gives a name that is not UTF-8, is a name the file system may have).
    for unnamable in ("\ud800", Path("cells-\udfff.yaml")):
        with pytest.raises(QueryError) as caught:
            call(unnamable)
        assert str(caught.value) == (f"{name} must be a path the file system can name, got {brief(str(unnamable))}: "
                                     "a lone surrogate that stands for no byte")
    with pytest.raises(TableError, match="cannot read"):
        call("missing-\udce9")
    # A NUL names no file either: os.stat raised ValueError ("embedded null byte"), not the API's error.
    for unnamable in ("cells\0.yaml", Path("cells\0.yaml")):
        with pytest.raises(QueryError) as caught:
            call(unnamable)
        assert str(caught.value) == (f"{name} must be a path the file system can name, got 'cells\\x00.yaml': "
                                     "a NUL character, which no file name holds")


def test_a_name_of_another_type_is_shown_as_check_types_shows_it():
    # A GPU type or model named by another object quoted its repr: pydantic's dump of a whole catalogue, cut.
    for value, shown in ((CATALOG, "a Catalog"), (solver.load_weights(), "a Weights"),
                         (numpy.int64(4), "a numpy int64"), (["a100"], "['a100']: pass 'a100'")):
        if not isinstance(value, list):  # plan takes a list of GPU types' names (test_gpulist_s58)
            with pytest.raises(QueryError) as caught:
                solver.plan("8B", gpu=value, max_model_len=4096)
            assert str(caught.value) == f"a GPU is named by a string, got {shown}"
        with pytest.raises(QueryError) as caught:
            solver.estimate_memory(value, "a100", 4, 4096)
        assert str(caught.value) == f"a model is named by a string, got {shown}"


def test_trinity_fragment_refuses_a_layout_that_is_not_a_mapping():
    # A layout of another type was taken as none at all: the fragment silently lost the per-role budget line.
    best = solver.plan("8B", gpu="h20", max_model_len=8192)[0].best
    for layout in (5, "model: {}", [("model", {})]):
        with pytest.raises(QueryError) as caught:
            trinity_fragment(best, CATALOG.model("8B"), layout=layout)
        assert str(caught.value) == f"layout must be a Mapping or None, got {brief(layout)}"
    assert "hand-set" in trinity_fragment(best, CATALOG.model("8B"), layout=None)
    assert "hand-set" not in trinity_fragment(best, CATALOG.model("8B"), layout=load_config_mapping(CONFIG_TEXT, "t"))


def test_an_explanation_whose_questions_run_out_of_time_names_only_rules_in_force(monkeypatch: pytest.MonkeyPatch):
    # A time limit too short for the explanation's questions raised TypeError (it named "--host-ram None GB", a rule
    # not in force that CP-SAT's core held and no decided solve dropped); every question undecided, deterministically:
    monkeypatch.setattr(_Prober, "_infeasible", lambda self, assumptions: False)
    # Qwen3-14B: 40 attention heads, 8 KV heads.
    rules = ("no plan passes these rules together: the budget (within 2 GPUs); a trainer that spans nodes uses whole "
             "nodes of 8 GPUs; SP must divide the trainer GPUs; SP must divide the 40 attention heads; SP and the 8 KV "
             "heads must divide one another; SP must divide the 8 GPUs of a node; {}nothing in the tables and the "
             "memory model's estimates vouches for Qwen3-14B on H20-96GB at 65536 tokens within the limits above")
    host_memory = ("host memory (host_ram_gb of 64 GiB is too little for Offload, or for the model while it loads, "
                   "beside the reference model's pinned shards); ")
    for options, named in (({}, ""), ({"host_ram_gb": 64.0}, host_memory), ({"rollout_gpus": 0}, "")):
        # 0 rollout GPUs: no rollout_layout, as without
        (answer,) = solver.plan("14B", gpu="h20", max_model_len=65536, budget_gpus=2, explain=True, **options)
        assert (answer.explanation[0].rule, answer.explanation[0].detail) == ("limit", rules.format(named))
    monkeypatch.undo()
    assert all(a.explanation for a in solver.plan("14B", max_model_len=65536, budget_gpus=2, time_limit_s=0.001,
                                                  explain=True))


@pytest.mark.parametrize(("options", "message"), [
    ({"margin": 1.5}, "margin is a fraction from 0 to below 1, got 1.5 (as a percentage, 1.5% is 0.015)"),
    ({"token_budget": "half"}, ("token_budget must be one of default, auto, got 'half' (a cap in tokens per GPU is "
                                "one job's: solver.plan(token_budget=N) plans a job with it; "
                                "solver.estimate_memory(max_token_len_per_gpu=T) estimates one setting at it)")),
    ({"token_budget": "auto", "estimate": "never"},
     ('token_budget="auto" lowers the token budget of estimated plans, which estimate="never" turns off: drop one of '
      "them")),
    ({"seed": -1}, "seed must be from 0 to 2147483647 (CP-SAT's seed is 32-bit), got -1"),
])
def test_place_refuses_a_bad_option_before_it_reads_the_cluster_file(tmp_path: Path, options: dict, message: str):
    # As the command refuses a bad flag: a QueryError for the option, not a TableError for the missing file.
    with pytest.raises(QueryError) as caught:
        solver.place(tmp_path / "missing.yaml", **options)
    assert str(caught.value) == message


def test_the_largest_seed_and_more_workers_than_cpus_are_taken():
    query = solver.make_query(solver.load_catalog(), model="4B", max_model_len=4096, seed=MAX_SEED)
    assert solver.api.answer_query(query, solver.load_catalog())[0].status == "optimal"
    assert solver.place(FLEET, workers=(os.cpu_count() or 1) + 1).status == "optimal"


def test_a_placements_gap_is_relative_to_its_bound():
    found = solver.ClusterResult(status="feasible", objective=8, bound=10, placements=(), unplaced=(), pools=())
    assert found.gap == pytest.approx(0.2)  # placed priority 8 of at most 10
    nodes = found.model_copy(update={"objective": 5, "bound": 4, "objective_counts": "nodes"})
    assert nodes.gap == pytest.approx(0.25)  # 5 nodes used, at least 4
    assert found.model_copy(update={"objective": 10}).gap == 0
    assert found.model_copy(update={"bound": 0}).gap is None and found.model_copy(update={"bound": None}).gap is None


def test_loaders_take_a_path_as_a_string():
    tables = shipped_tables_directory()
    catalog = solver.load_catalog(str(tables))
    assert catalog == solver.load_catalog()
    assert solver.load_weights(str(tables / "costs.yaml")) == solver.load_weights()
    assert solver.load_memory_model(str(tables / "memory-model.yaml")) == solver.load_memory_model()
    assert solver.load_fleet(str(FLEET), catalog) == solver.load_fleet(FLEET, catalog) == solver.load_fleet(FLEET)


def test_equal_results_compare_equal_however_long_they_took():
    first, again = (solver.plan("4B", objective="max_len", budget_gpus=6) for _ in range(2))
    assert first == again and hash(first) == hash(again)
    slower = first[0].model_copy(update={"wall_time_s": first[0].wall_time_s + 60})
    assert slower == first[0] and hash(slower) == hash(first[0])
    assert first[0].model_copy(update={"bound": -1.0}) != first[0]
    assert solver.place(FLEET) == solver.place(FLEET)
    # The seed is CP-SAT's: another search, the same proven answer.
    assert solver.plan("4B", objective="max_len", budget_gpus=6, seed=7) == first


def test_the_seed_is_cp_sats(solver_parameters: list[Any]):
    seeded = solver.plan("4B", objective="max_len", budget_gpus=6, seed=7)
    assert solver_parameters and {parameters.random_seed for parameters in solver_parameters} == {7}
    solver_parameters.clear()
    assert solver.plan("4B", objective="max_len", budget_gpus=6) == seeded  # another search, the same proven answer
    assert solver_parameters and {parameters.random_seed for parameters in solver_parameters} == {0}  # the default


@pytest.mark.parametrize("field", ["rope_scaling", "unchecked_layout"])
def test_a_model_built_in_python_refuses_an_unprintable_kind(field: str):
    # Cautions show these as they are: control characters would reach the terminal (a config.json's are refused).
    fields = {**CATALOG.model("8B").model_dump(), field: "x\x1b[2J"}
    with pytest.raises(pydantic.ValidationError, match=rf"{field}\n  Value error, must be printable text"):
        solver.Model(**fields)
    assert getattr(solver.Model(**{**fields, field: "llama3"}), field) == "llama3"


def test_a_memory_estimate_is_frozen_to_its_terms():
    estimate = solver.estimate_memory("8B", "h100", 8, 32768, sp=8, env=True)
    with pytest.raises(pydantic.ValidationError, match="frozen"):
        estimate.terms.states = 0.0  # type: ignore[misc]
    assert hash(estimate) == hash(solver.estimate_memory("8B", "h100", 8, 32768, sp=8, env=True))
    assert [term for term, _ in estimate.terms.items()] == ["states", "gathered", "checkpoints", "logits",
                                                            "recompute", "sp_buffers", "fragmentation", "overhead"]
    assert estimate.total_gib == pytest.approx(sum(gib for _, gib in estimate.terms.items()))
    with pytest.raises(KeyError, match="model_dump"):
        estimate.terms["model_dump"]  # a term, not any attribute
    assert "logits" in estimate.terms and "model_dump" not in estimate.terms


def test_type_checkers_see_every_exported_name():
    """The names under ``if TYPE_CHECKING:`` in solver/__init__.py are those imported lazily, from the same modules."""
    source = ast.parse((Path(solver.__file__)).read_text())
    (block,) = [node for node in source.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"]
    typed = {alias.name: node.module for node in block.body if isinstance(node, ast.ImportFrom) for alias in node.names}
    assert typed == solver._EXPORTS
    assert set(solver.__all__) <= set(dir(solver))
    for name in solver.__all__:
        assert getattr(solver, name) is not None


def _result_types(result_type: type[pydantic.BaseModel]) -> set[type]:
    """The models and enums `result_type`'s fields hold, at any depth (itself among them), and the models with fields
    of their own that they derive from (`MemoryAnswer`'s `MemoryQuestion`)."""
    found: set[type] = set()
    waiting: list[Any] = [result_type]
    while waiting:
        annotation = waiting.pop()
        is_class = isinstance(annotation, type) and get_origin(annotation) is None  # Python 3.10: list[int] is a type
        if is_class and issubclass(annotation, enum.Enum):
            found.add(annotation)
        elif is_class and issubclass(annotation, pydantic.BaseModel):
            if annotation not in found:
                found.add(annotation)
                waiting += [field.annotation for field in annotation.model_fields.values()]
                waiting += [base for base in annotation.__mro__[1:]
                            if issubclass(base, pydantic.BaseModel) and base.model_fields]
        else:
            waiting += get_args(annotation)
    return found


@pytest.mark.parametrize(("result_type", "among_them"), [
    (solver.ClusterResult, {"Placement", "Plan", "Unplaced", "UnplacedPool", "FitsWith", "PoolCode"}),
    (solver.Answer, {"Plan", "ReasonCode", "Alternatives"}), (solver.GpuMap, {"ModelMapRow", "Plan"}),
    (solver.MemoryAnswer, {"Terms", "MemoryQuestion", "MemoryEstimate", "Breakdown"}),
    (solver.Calibration, {"MemoryModel", "UnphysicalCode"})])
def test_every_type_a_result_holds_is_exported_for_annotations(result_type: type[pydantic.BaseModel],
                                                               among_them: set[str]):
    # A user annotating code that reads a result finds each type in it under solver (an unplaced job's fits_with
    # holds FitsWith).
    held = _result_types(result_type)
    assert among_them <= {t.__name__ for t in held}
    assert sorted(t.__name__ for t in held if getattr(solver, t.__name__, None) is not t) == []


MYPY_USER_FILE = (f"from solver import {', '.join(solver.__all__)}\n"
                  f"from solver.api import {', '.join(solver.api.__all__)}\n"
                  f"from solver.trinity import {', '.join(solver.trinity.__all__)}\n"
                  "catalog = load_catalog()\n"
                  "answers: tuple[Answer, ...] = answer_query(make_query(catalog, model='4B', max_model_len=32768), "
                  "catalog)\n"
                  # Lengths and token budgets in thousands, as docs/api.md has them (persona90c: typed int alone, so
                  # mypy --strict refused the documented "64k").
                  "plan('8B', max_model_len='64k', token_budget='16k')\n"
                  "estimate_memory('8B', 'h100', 8, '128k', sp=8, max_token_len_per_gpu='16k')\n"
                  "memory_answer('8B', 'h100', 8, '128k', sp=8, max_token_len_per_gpu='16k')\n"
                  "map_plans('8B', token_budget='16k')\n"
                  "check_config('trinity.yaml', max_model_len='32k')\n"
                  "make_query(catalog, model='4B', max_model_len='32k', token_budget='16k')\n")
"""A user's file importing every public name and calling the functions that take lengths in thousands (conftest's
`mypy_strict` checks it)."""


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed")
def test_a_user_file_importing_the_public_names_passes_mypy_strict(mypy_strict: dict[str, list[str]]):
    # As a user's type checker sees the package (the package's own findings are its test's): each public name of
    # solver, solver.api and solver.trinity is exported, not an implicit re-export that --strict refuses.
    assert mypy_strict["test_api_user.py"] == []


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed")
def test_the_package_itself_passes_mypy_strict(mypy_strict: dict[str, list[str]]):
    # What a user who follows imports into the source sees (--follow-imports=normal), under the project's own
    # configuration (pyproject.toml: strict, and OR-Tools' unannotated methods callable).
    assert mypy_strict["solver"] == []


def test_solver_api_exports_its_functions_and_make_query():
    defined = [name for name, value in vars(solver.api).items()
               if inspect.isfunction(value) and value.__module__ == "solver.api" and not name.startswith("_")]
    assert sorted(solver.api.__all__) == sorted([*defined, "make_query"])


def test_calibrate_memory_model_fits_as_the_command_does(cli, tmp_path: Path):
    # Without cells: the shipped memory model, and its file byte for byte.
    shipped = solver.calibrate_memory_model()
    assert shipped.memory_model == load_memory_model()
    assert memory_model_yaml(shipped.memory_model) == (
        shipped_tables_directory() / "memory-model.yaml").read_text(encoding="utf-8")
    assert (shipped.table_contradictions, shipped.mispredicted, shipped.at_token_floor, shipped.from_shipped) == (
        (), (), (), ())
    # A model of other margin and source is written as it is, and reads back equal.
    changed = shipped.memory_model.model_copy(update={"margin": 0.05, "source": "by hand"})
    (tmp_path / "changed.yaml").write_text(memory_model_yaml(changed), encoding="utf-8")
    assert load_memory_model(tmp_path / "changed.yaml") == changed
    # Cells of your own that contradict the tables, and that the fit predicts the other way: the file --out writes,
    # and the phrases its warnings and notes give.
    mine = tmp_path / "mine.yaml"
    mine.write_text('gpu: A100-80GB\nmemory_gb: 80\nsource: mine\ntables:\n  - gpus: 4\n    section: "4 x A100"\n'
                    '    models: [Qwen3-8B, Qwen3-14B]\n    rows:\n'
                    '      - {max_model_len: 4096, cells: {Qwen3-8B: "-", Qwen3-14B: vanilla}}\n'
                    '      - {max_model_len: 12288, cells: {Qwen3-8B: "-", Qwen3-14B: "-"}}\n', encoding="utf-8")
    fitted = solver.calibrate_memory_model([str(mine)], with_tables=True)
    assert fitted.table_contradictions == ("A100-80GB, 4 GPUs, Qwen3-8B at 4096: yours '-', the table's 'vanilla'",
                                           "A100-80GB, 4 GPUs, Qwen3-14B at 4096: yours 'vanilla', the table's 'Env'",
                                           "A100-80GB, 4 GPUs, Qwen3-8B at 12288: yours '-', the table's 'Env'",
                                           "A100-80GB, 4 GPUs, Qwen3-14B at 12288: yours '-', the table's 'Env + SP=4'")
    written = tmp_path / "model.yaml"
    status, _, err = cli("calibrate", "--cells", str(mine), "--with-tables", "--out", str(written))
    assert status == 0 and load_memory_model(written) == fitted.memory_model
    assert fitted.memory_model.source == "calibrated on mine.yaml and the documented tables"
    assert fitted.at_bounds == ("recompute 0.1", "usable_env 1") and len(fitted.mispredicted) == 4
    assert fitted.mispredicted[2].startswith("Qwen3-14B on 4 x A100-80GB at 4096, cell 'vanilla': vanilla trained ")
    said = (fitted.table_contradictions[0], *fitted.mispredicted[:3], *fitted.at_bounds)
    assert all(phrase in err for phrase in said)  # the command names three mispredicted cells
    # Cells that contradict themselves ('-' at 4096 under Env at 12288) are refused, as the command refuses them.
    text = mine.read_text(encoding="utf-8")
    mine.write_text(text.replace('12288, cells: {Qwen3-8B: "-"', "12288, cells: {Qwen3-8B: Env"), encoding="utf-8")
    with pytest.raises(TableError) as refusal:
        solver.calibrate_memory_model([mine], with_tables=True)
    assert str(refusal.value) == (f"{mine}: A100-80GB, 4 GPUs, Qwen3-8B: - at 4096 but Env trains at the longer 12288 "
                                  "(memory only grows with the length); check the cells")


def test_the_python_examples_in_the_api_page_run_where_solve_examples_wrote_their_files_and_give_the_values_shown(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli):
    """Every ```python block of docs/api.md runs as shown (as the page says) without the repository, from a folder
    where `solve examples` wrote the files it reads (byte for byte the repository's docs/examples:
    tests/test_cli_examples.py), and gives the values shown beside it (`run_python_blocks`): run once here, not
    again from the repository root, where its files are the same."""
    monkeypatch.chdir(tmp_path)
    status, _, err = cli("examples")
    assert status == 0 and (tmp_path / "docs" / "examples" / "fleet.yaml").is_file(), err
    assert run_python_blocks("api.md") == 16


def test_a_gpu_type_of_your_own_by_its_memory():
    # As `solve --gpu MyAccel --gpu-memory 65536MiB`: no tables, so its plans are estimates.
    catalog = solver.load_catalog().with_gpu_types([solver.described_gpu_type("MyAccel", memory_mib=65536)])
    (answer,) = solver.plan("8B", gpu="myaccel", budget_gpus=8, objective="max_len", catalog=catalog)
    assert answer.gpu == "MyAccel" and answer.plans[0].evidence == "estimated"
    assert catalog.gpu("MyAccel").memory_gib == 64


def test_the_api_text_of_another_models_plan_for_a_config_says_whose_lines_they_are():
    # config_query(model=...) of another catalogue model than the config's: the apply row's heading says so, as
    # --from-config --model prints it (CurrentSettings.config_model, one source for both).
    text = (Path(__file__).parents[1] / "docs" / "examples" / "trinity.yaml").read_text(encoding="utf-8")
    config, catalog = read_trinity_config(text, "trinity.yaml", {}), solver.load_catalog()
    query = config_query(catalog, config, gpu="h20", model="4B")
    (h20,) = with_config_verdicts(answer_query(query, catalog), query, catalog, config, text, "trinity.yaml", {})
    assert h20.current is not None and h20.current.config_model == "Qwen3-8B"
    shown = " ".join(solver.answers_text((h20,)).split())
    assert ("apply the lines below are for Qwen3-4B, not for trinity.yaml's Qwen3-8B: they apply with "
            "model.model_path set to a Qwen3-4B checkpoint (dotted keys)") in shown
    own = config_query(catalog, config, gpu="h20")
    (h20,) = with_config_verdicts(answer_query(own, catalog), own, catalog, config, text, "trinity.yaml", {})
    assert h20.current is not None and h20.current.config_model is None


@pytest.mark.parametrize(("mib", "sold"), [(8192, 8), (10000, 10), (46068, 45), (81559, 80), (183359, 179)])
def test_a_gpu_type_given_in_mib_is_sold_as_the_nearest_gb_that_may_be_its(mib: int, sold: int):
    assert solver.described_gpu_type("MyAccel", memory_mib=mib).memory_gb == sold


def test_a_trinity_configs_own_settings_are_judged_through_the_api():
    # As docs/api.md shows it, and as --from-config prints it.
    text = (Path(__file__).parents[1] / "docs" / "examples" / "trinity.yaml").read_text(encoding="utf-8")
    config = read_trinity_config(text, "trinity.yaml", {})
    catalog = solver.load_catalog()
    query = config_query(catalog, config, gpu="h20")
    (h20,) = with_config_verdicts(answer_query(query, catalog), query, catalog, config, text, "trinity.yaml", {})
    assert h20.current is not None and (h20.current.gpus, h20.current.env, h20.current.sp) == (6, False, 1)
    # Qwen3-8B at 32768 on 6 H20s without Env or SP: the H20 table for 6 GPUs says it needs more.
    assert not h20.current.trains and h20.current.out_of_memory is not None
    assert h20.current.config == "trinity.yaml"
    # Env set where it is read: the verdict reads PYTORCH_CUDA_ALLOC_CONF from the environ given.
    env_on = {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}
    (with_env,) = with_config_verdicts(answer_query(query, catalog), query, catalog, config, text, "trinity.yaml",
                                       env_on)
    assert with_env.current is not None and with_env.current.env
    # Bad arguments are one-line QueryErrors, and a config that cannot be read a ConfigError: all OneLineErrors.
    with pytest.raises(solver.QueryError, match="^environ must be a Mapping, got None$"):
        with_config_verdicts(answer_query(query, catalog), query, catalog, config, text, "trinity.yaml", None)
    with pytest.raises(solver.QueryError, match=r"^version takes 0\.5, .* \(or a tag of one, v0\.5\.2\), got '9'$"):
        with_config_verdicts(answer_query(query, catalog), query, catalog, config, text, "trinity.yaml", {}, "9")
    no_model = r"^t.yaml: missing model.model_path: set it to the model, .*\)$"
    with pytest.raises(solver.ConfigError, match=no_model) as raised:
        read_trinity_config("cluster: {}\n", "t.yaml", {})
    assert isinstance(raised.value, solver.OneLineError) and not isinstance(raised.value, solver.QueryError)


def _best_gpus(budget: int) -> list[int]:
    return [answer.best.gpus for answer in solver.plan("8B", max_model_len=32768, budget_gpus=budget)]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX's")
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded, use of fork:DeprecationWarning")  # on purpose
def test_plan_works_in_a_forked_child_of_a_process_that_planned_already():
    # The threads that solve the other GPU types are the process's own: a forked child (a multiprocessing pool
    # on Linux, prefork servers) starts its own instead of waiting for its parent's, which it does not have.
    solver.plan("4B", max_model_len=8192)  # the parent's threads exist now
    with multiprocessing.get_context("fork").Pool(2) as pool:
        assert pool.map_async(_best_gpus, [4, 8]).get(timeout=60) == [[4, 4], [8, 8]]


def test_a_fleet_built_in_code_describes_its_gpu_types_as_a_cluster_file_does():
    # A pool's memory names a GPU type of one's own, and may not restate a catalogue GPU type's.
    jobs = [{"name": "j", "model": "8B", "max_model_len": 32768}]
    own = solver.Fleet(pools=[{"name": "p", "gpu": "RTX", "nodes": 1, "gpus_per_node": 8, "gpu_memory_gb": 48}],
                       jobs=jobs)
    [placement] = solver.place(own).placements
    assert (placement.gpu, placement.plan.evidence) == ("RTX", "estimated")
    known = solver.Fleet(pools=[{"name": "p", "gpu": "a100", "nodes": 1, "gpus_per_node": 8, "gpu_memory_gb": 24}],
                         jobs=jobs)
    with pytest.raises(solver.QueryError, match=r"^pool p: gpu a100 names A100-80GB \(80.0 GiB\), a GPU type "
                                                r"whose memory is known"):
        solver.place(known)


def test_a_fleet_built_in_code_is_placed_under_the_catalogues_names_as_its_file_would_be(tmp_path):
    file = tmp_path / "fleet.yaml"
    file.write_text("pools:\n  - {name: p, gpu: a100, nodes: 1, gpus_per_node: 8}\njobs:\n"
                    "  - {name: j, model: 4B, max_model_len: 8192}\n  - {name: k, model: qwen3-4b, max_model_len: 8192}\n",
                    encoding="utf-8")
    built = solver.Fleet(pools=[{"name": "p", "gpu": "a100", "nodes": 1, "gpus_per_node": 8}],
                         jobs=[{"name": "j", "model": "4B", "max_model_len": 8192},
                               {"name": "k", "model": "qwen3-4b", "max_model_len": 8192}])
    from_code = solver.place(built)
    assert {(p.model, p.gpu) for p in from_code.placements} == {("Qwen3-4B", "A100-80GB")}
    assert from_code == solver.place(file)
    unknown = built.model_copy(update={"jobs": (built.jobs[0].model_copy(update={"model": "5B"}),)})
    with pytest.raises(solver.QueryError, match=r"^job j: unknown model '5B'; accepted: "):
        solver.place(unknown)


def test_plans_answers_hold_the_notes_solve_prints_on_stderr():
    # `solve --len 64` and `solve --from-config c.yaml --gpus 16` note what their answers leave unsaid; plan's and
    # with_config_verdicts' answers said nothing of it (apiwords87): the same words, in the query's.
    (short,) = solver.plan("0.6B", gpu="h100", max_model_len=64, budget_gpus=1)
    assert short.notes == ("max_model_len 64 is 64 tokens; for 65536 tokens write max_model_len=65536",)
    assert "notes" not in short.as_json()
    text = (Path(__file__).parents[1] / "docs" / "examples" / "trinity.yaml").read_text(encoding="utf-8")
    text = text.replace("node_num: 1", "node_num: 2").replace("engine_num: 2", "engine_num: 8")
    config, catalog = read_trinity_config(text, "c.yaml", {}), solver.load_catalog()
    noted = []
    for budget in (16, None):  # past the config's 8 trainer GPUs, and its own
        query = config_query(catalog, config, gpu="h100", budget_gpus=budget)
        judged = with_config_verdicts(answer_query(query, catalog), query, catalog, config, text, "c.yaml", {})
        assert with_config_verdicts(judged, query, catalog, config, text, "c.yaml", {}) == judged  # noted once
        noted.append(judged[0].notes)
    outgrown = ("c.yaml's cluster holds 16 GPUs in all (2 nodes of 8); the plan takes 16 trainer + 8 rollout GPUs on "
                "3 nodes: give the config cluster.node_num 3, or plan within its 16 with total_gpus=16 in place of "
                "budget_gpus")
    assert noted == [(outgrown,), ()]


def test_api_answers_hold_the_cut_thousands_and_small_host_ram_notes_solve_prints():
    # `solve --len 131k --host-ram 2` notes that 131k is 134144 tokens and 2 GiB no node's host memory; plan's,
    # memory_answer's and check_config's answers said nothing of either (persona88c), in a notebook where no
    # stderr shows them: the same notes, in the keywords' words.
    cut = "max_model_len 131k is 134144 tokens (k is 1024); for 131072 tokens write max_model_len=131072"
    small = ("host_ram_gb reads as 2 GiB per node, less than any GPU node has (GB as sold); for 2 TB write "
             "host_ram_gb=2048")
    (planned,) = solver.plan("0.6B", gpu="h100", max_model_len="131k", budget_gpus=1, host_ram_gb=2)
    assert planned.max_model_len == 134144 and planned.notes == (cut, small)
    assert solver.memory_answer("8B", "h100", 8, "131K", host_ram_gb=2).notes == (cut, small)
    assert solver.memory_answer("8B", "h100", 8, 134144, host_ram_gb=8).notes == ()  # digits, and 8 GiB: no note
    as_command = solver.memory_answer("8B", "h100", 8, "128k", host_ram_gb=1.5, option_names=COMMAND_OPTIONS)
    assert as_command.notes == (("--host-ram reads as 1.5 GiB per node, less than any GPU node has (GB as sold; MB "
                                 "are free -m's MiB); for 1.5 TB write --host-ram 1.5TB"),)
    config = Path(__file__).parents[1] / "docs" / "examples" / "trinity.yaml"
    (judged,) = solver.check_config(config, gpu="h20", max_model_len="65k", host_ram_gb=2).answers
    assert judged.notes == (cut.replace("131k is 134144", "65k is 66560").replace("131072", "65536"), small)


def test_check_config_without_gpu_notes_the_gpu_types_it_judged_as_check_does():
    # `solve --from-config c.yaml --check` without --gpu notes that it judged the config on the tables' GPU types;
    # check_config without gpu said nothing (persona88c): a notebook's H200 config judged on A100s and H20s unsaid.
    text = (Path(__file__).parents[1] / "docs" / "examples" / "trinity.yaml").read_text(encoding="utf-8")
    unnamed = solver.check_config("trinity.yaml", text=text)
    assert [answer.gpu for answer in unnamed.answers] == ["A100-80GB", "H20-96GB"]
    assert {answer.notes for answer in unnamed.answers} == {(
        ('check_config without gpu judged trinity.yaml on A100-80GB and H20-96GB, as a Trinity config names no GPU '
         'type; give gpu="TYPE" to judge it on the GPUs it runs on'),)}


def test_a_margin_given_as_a_percentage_is_told_its_fraction_as_margin_is():
    # `--margin 3%` is 0.03 and `--margin 3` is told so; the API's margin="3%" and margin=3 were refused without the
    # fraction to pass (persona88c), though the same user types them.
    def refusal(margin: object) -> str:
        with pytest.raises(solver.QueryError) as caught:
            solver.estimate_memory("8B", "h100", 8, 4096, margin=margin)
        return str(caught.value)

    assert refusal("3%") == "margin must be a number or None, got '3%' (a fraction as a number: pass 0.03 for 3%)"
    assert refusal("0.05") == "margin must be a number or None, got '0.05' (a str: pass 0.05)"
    assert refusal("big") == "margin must be a number or None, got 'big' (a fraction as a number: 0.03 for 3%)"
    assert refusal(3) == "margin is a fraction from 0 to below 1, got 3 (as a percentage, 3% is 0.03)"
    assert refusal(100) == "margin is a fraction from 0 to below 1, got 100"


@pytest.mark.parametrize("nodes", ["node_num: 1\n  gpu_per_node: 8", "node_num: 2\n  gpu_per_node: 4"])
def test_the_query_of_a_config_is_the_one_from_config_asks(cli, tmp_path: Path, nodes: str):
    # Its exact GPU count, its nodes and its rollout: on 2 nodes of 4, 6 trainer GPUs break the whole-nodes rule.
    text = (EXAMPLES / "trinity.yaml").read_text(encoding="utf-8").replace("node_num: 1\n  gpu_per_node: 8", nodes)
    assert nodes in text
    path = tmp_path / "trinity.yaml"
    path.write_text(text, encoding="utf-8")
    config = read_trinity_config(text, path.name, {}, option_names=COMMAND_OPTIONS)  # the file by its name
    query = config_query(CATALOG, config, gpu="h20", option_names=COMMAND_OPTIONS)  # and in its words
    (answer,) = with_config_verdicts(answer_query(query, CATALOG), query, CATALOG, config, text, path.name, {})
    status, out, _ = cli("--from-config", str(path), "--gpu", "h20", "--json")
    assert [answer.as_json()] == printed_answers(out)
    assert (status, bool(answer.plans), query.node_gpus) == ((0, True, 8) if "gpu_per_node: 8" in nodes else (1, False, 4))
    # A keyword overrides the config as the flag does: the fewest GPUs frees the count.
    assert config_query(CATALOG, config, objective="min_gpus", gpu="h20").exact is False


LOWERED = "model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\ntrainer: {max_token_len_per_gpu: 40000}\n"


@pytest.mark.parametrize(("text", "changes", "expected"), [
    # The example: 6 trainer GPUs beside 2 rollout GPUs on one node of 8, at 32768 tokens.
    (None, {}, ("cheapest", 6, True, 32768, 8, "cluster.gpu_per_node", 2, "default")),
    (None, {"objective": "min_gpus"}, ("min_gpus", 6, False, 32768, 8, "cluster.gpu_per_node", 2, "default")),
    (None, {"objective": "max_len"}, ("max_len", 6, True, None, 8, "cluster.gpu_per_node", 2, "default")),
    (None, {"budget_gpus": 8}, ("cheapest", 8, False, 32768, 8, "cluster.gpu_per_node", 2, "default")),
    (None, {"budget_gpus": 8, "exact": True}, ("cheapest", 8, True, 32768, 8, "cluster.gpu_per_node", 2, "default")),
    (None, {"node_gpus": 4, "budget_gpus": 4}, ("cheapest", 4, False, 32768, 4, "node_gpus", 2, "default")),
    (None, {"max_model_len": 16384}, ("cheapest", 6, True, 16384, 8, "cluster.gpu_per_node", 2, "default")),
    # No cluster section: the default budget (the H20 tables' largest count), nodes of 8; a budget lowered below
    # Trinity's default: auto.
    (LOWERED, {}, ("cheapest", 6, False, 32768, 8, "node_gpus", None, "auto")),
    (LOWERED, {"token_budget": "default"}, ("cheapest", 6, False, 32768, 8, "node_gpus", None, "default")),
    # Without estimates the config's lowered budget is not one the planner may lower to: default.
    (LOWERED, {"estimate": "never"}, ("cheapest", 6, False, 32768, 8, "node_gpus", None, "default")),
])
def test_config_query_asks_what_from_config_asks(text: str | None, changes: dict, expected: tuple):
    text = text or CONFIG_TEXT
    query = config_query(CATALOG, read_trinity_config(text, "t.yaml", {}), gpu="h20", **changes)
    assert (query.objective, query.budget_gpus, query.exact, query.max_model_len, query.node_gpus, query.node_source,
            query.rollout_gpus, query.token_budget) == expected


def test_a_configs_own_gpus_are_judged_whatever_budget_the_query_frees():
    # --gpus 8 frees the plans' count; the verdict is still on the config's own 6 trainer GPUs.
    query = config_query(CATALOG, CONFIG, gpu="h20", budget_gpus=8)
    (answer,) = with_config_verdicts(answer_query(query, CATALOG), query, CATALOG, CONFIG, CONFIG_TEXT, "trinity.yaml",
                                     {})
    assert (query.budget_gpus, query.exact) == (8, False)
    assert (answer.current.gpus, answer.current.gpus_given, answer.current.out_of_memory.gpus) == (6, True, 6)


def test_a_config_verdict_no_table_speaks_for_gives_the_memory_models_prediction_only_with_estimates():
    # Qwen3-8B at 8192 on 4 A100-40GBs, no rollout GPUs (asked for as none): no table says why it does not train.
    # The memory model's activations do not fit, so the optimizer step's peak is not said too; without estimates
    # nothing is predicted.
    text = ("algorithm: {algorithm_type: grpo}\nmodel: {model_path: Qwen/Qwen3-8B, max_model_len: 8192}\n"
            "cluster: {node_num: 1, gpu_per_node: 4}\nexplorer: {rollout_model: {engine_num: 0}}\n")
    config = read_trinity_config(text, "t.yaml", {})
    verdicts = {}
    for estimate in ("auto", "never"):
        query = config_query(CATALOG, config, gpu="a100-40gb", estimate=estimate)
        (answer,) = with_config_verdicts(answer_query(query, CATALOG), query, CATALOG, config, text, "t.yaml", {})
        current = answer.current
        verdicts[estimate] = (query.rollout_gpus, current.gpus, current.trains, current.out_of_memory,
                              current.predicted, current.predicted_step)
    # usable 34.6: 36 GiB less the A100 40GB's default margin, 0.04 (a card of at most 48 GiB: session 61)
    assert verdicts == {"auto": (None, 4, False, None, (60.3, 34.6), None), "never": (None, 4, False, None, None, None)}


def test_config_query_takes_a_falsy_keyword_as_given():
    config = read_trinity_config(CONFIG_TEXT, "t.yaml", {})
    with pytest.raises(QueryError, match="^max_model_len must be a whole number from 1 to 16777216, got 0$"):
        config_query(CATALOG, config, gpu="h20", max_model_len=0)
    with pytest.raises(QueryError, match="^node_gpus must be a whole number from 1 to 16, got 0$"):
        config_query(CATALOG, config, gpu="h20", node_gpus=0)
    assert config_query(CATALOG, config, gpu="h20", node_source="my nodes").node_source == "my nodes"
    freed = config_query(CATALOG, config, gpu="h20", exact=False)
    assert (freed.exact, freed.budget_gpus) == (False, 6)


def test_config_query_passes_each_keyword_given_to_make_query_as_it_is():
    # Every keyword given (not None) overrides the config's value: the query is make_query's with the same keywords.
    given = {"model": "Qwen3-4B", "gpu": "h20", "objective": "cheapest", "budget_gpus": 8, "exact": True,
             "exact_source": "my count", "max_model_len": 16384, "sp": 2, "env": True, "offload": False, "top": 3,
             "weights": solver.load_weights().model_copy(update={"env": 0.5}), "time_limit_s": 5.0, "workers": 2,
             "seed": 7, "estimate": "only", "memory": solver.load_memory_model().model_copy(update={"margin": 0.05}),
             "margin": 0.1, "token_budget": "auto", "host_ram_gb": 512.0, "node_gpus": 4, "rollout_gpus": 0,
             "total_gpus": None, "node_source": "my nodes", "host_ram_source": "my host", "train_batch_size": 64,
             "train_batch_source": "my batch", "trinity_version": "0.5", "reference_model": False, "lora_rank": 8,
             "critic": "resident", "dpo": False, "lora_targets": "q_proj,v_proj", "lora_exclude_modules": ".*\\.v_proj",
             "lora_targets_source": "my targets", "option_names": API_OPTIONS}
    assert set(given) == set(signature(solver.make_query).parameters) - {"catalog"}
    assert config_query(CATALOG, CONFIG, **given) == solver.make_query(CATALOG, **given)
    in_all = {**given, "budget_gpus": None, "total_gpus": 8, "rollout_gpus": 4}  # in place of the trainer's budget
    assert config_query(CATALOG, CONFIG, **in_all) == solver.make_query(CATALOG, **in_all)
    assert solver.make_query(CATALOG, **in_all).budget_gpus == 4


def test_config_query_sources_name_the_config_where_its_values_come_from_else_the_keyword():
    def sources(query: solver.Query) -> tuple:
        return (query.exact, query.exact_source, query.node_source, query.train_batch_size, query.train_batch_source)

    assert sources(config_query(CATALOG, CONFIG, gpu="h20")) == (
        True, "the config's cluster", "cluster.gpu_per_node", 768, "buffer.batch_size x algorithm.repeat_times")
    assert sources(config_query(CATALOG, CONFIG, gpu="h20", exact=True, node_gpus=8, train_batch_size=64)) == (
        True, "exact=True", "node_gpus", 64, "train_batch_size")
    assert sources(config_query(CATALOG, CONFIG, gpu="h20", budget_gpus=8)) == (
        False, "exact=True", "cluster.gpu_per_node", 768, "buffer.batch_size x algorithm.repeat_times")
    lowered = read_trinity_config(LOWERED, "t.yaml", {})  # no cluster, no batch
    assert sources(config_query(CATALOG, lowered, gpu="h20")) == (False, "exact=True", "node_gpus", None,
                                                                  "train_batch_size")
    assert sources(config_query(CATALOG, lowered, gpu="h20", option_names=COMMAND_OPTIONS)) == (
        False, "--exact", "--node-gpus", None, "--train-batch-size")  # the command's flags

def test_plans_carry_their_cautions_as_the_command_gives_them(cli):
    # Qwen3-8B on 8 MI300X at its longest: YaRN past what Qwen validates, thin headroom beyond the calibration, and
    # Env on ROCm; as_json is what solve --json prints, cautions too.
    (answer,) = solver.plan("8B", gpu="mi300x", objective="max_len", budget_gpus=8)
    cautions = answer.best.cautions
    assert len(cautions) == 3 and cautions[0].startswith("YaRN factor 12.375 at 506880 tokens: longer than YaRN")
    assert cautions[1].startswith("0.1 GiB to spare where the estimate extrapolates")
    assert cautions[2] == solver.results.rocm_env_caution(API_OPTIONS)
    _, out, _ = cli("--model", "8B", "--gpu", "mi300x", "--gpus", "8", "--maximize", "len", "--json")
    (as_printed,) = solver.plan("8B", gpu="mi300x", objective="max_len", budget_gpus=8, option_names=COMMAND_OPTIONS)
    assert [as_printed.as_json()] == printed_answers(out)
    (answer,) = solver.plan("8B", gpu="mi300x", objective="max_len", budget_gpus=8, env=False)
    assert not any(caution.startswith("ROCm") for caution in answer.best.cautions)
    # Thin headroom before data-parallel ranks that are not a power of two: 6 B200s with SP=2.
    (answer,) = solver.plan("8B", gpu="b200", objective="max_len", budget_gpus=6, exact=True)
    assert [caution.split(":")[0] for caution in answer.best.cautions] == [
        ("0.4 GiB to spare where the estimate extrapolates, and its error there is unmeasured (no error of known "
         "direction is expected here, and none is measured"), "3 data-parallel ranks (6 GPUs / SP=2)"]


def test_the_result_types_keep_their_json_schema():
    # A wrap serializer annotated with a bare dict made pydantic's serialization schema an empty object.
    plan_schema = solver.Plan.model_json_schema(mode="serialization")
    assert {"gpus", "max_token_len_per_gpu", "lowered_budget", "host_memory_gb", "cautions"} <= set(
        plan_schema["properties"])
    assert plan_schema["properties"]["host_memory_gb"]["description"].startswith("host memory per node the plan needs")
    source = solver.SourceCell.model_json_schema(mode="serialization")
    assert {"model", "gpus", "max_model_len", "setting", "gpu"} <= set(source["properties"])
    answer = solver.Answer.model_json_schema(mode="serialization")
    assert answer["$defs"]["Plan"]["properties"].keys() == plan_schema["properties"].keys()


def test_only_the_serialization_schema_leaves_out_the_fields_its_json_leaves_out_when_none():
    # The JSON a model writes leaves a cell's own gpu out; data validated into it may give null: a schema for
    # validation (pydantic's default mode) keeps the field nullable, with its default.
    validation = solver.SourceCell.model_json_schema()["properties"]["gpu"]
    serialization = solver.SourceCell.model_json_schema(mode="serialization")["properties"]["gpu"]
    assert (validation["anyOf"], validation["default"]) == ([{"type": "string"}, {"type": "null"}], None)
    assert serialization["type"] == "string" and not {"anyOf", "default"} & serialization.keys()


def test_a_plan_with_exactly_no_room_has_that_to_spare():
    # The room is to spare down to 0.0 GiB (what a prediction at the usable memory leaves: beyond what the safety
    # margin keeps, which it names then), and over it below.
    (answer,) = solver.plan("8B", gpu="h100", max_model_len=131072, budget_gpus=8)
    best = answer.best
    assert best.evidence == "estimated" and f"{best.margin_gb:.2f}" == "0.74"
    assert best.model_copy(update={"headroom_gb": 0.0}).room_words == (
        "0.0 GiB to spare beyond the 0.7 GiB the safety margin keeps")
    assert best.model_copy(update={"headroom_gb": 0.0, "margin_gb": 0.0}).room_words == "0.0 GiB to spare"
    assert best.model_copy(update={"headroom_gb": -0.3}).room_words == "0.3 GiB over what it may take"
    assert best.model_copy(update={"headroom_gb": -0.04}).room_words == "less than 0.1 GiB over what it may take"
    assert best.model_copy(update={"headroom_gb": -0.05}).room_words == "0.1 GiB over what it may take"  # as it rounds
    assert best.model_copy(update={"headroom_gb": 0.0, "headroom_at_step": True}).room_words == (
        "0.0 GiB to spare beyond the 0.7 GiB the safety margin keeps at the optimizer step's peak, the tighter one")


def test_a_documented_plan_names_the_row_its_length_falls_to_only_below_that_row():
    cell = "documented: the A100-80GB table for 6 GPUs says 'Env + SP=2' at 32768"
    for length, words in ((32768, cell), (30000, f"{cell}, the row that 30000 falls to")):
        (answer,) = solver.plan("8B", gpu="a100", max_model_len=length, budget_gpus=6, exact=True)
        assert answer.best is not None and answer.best.evidence_text(answer.gpu) == words


def test_a_plan_dumped_without_its_token_budget_keeps_lowered_budget():
    (answer,) = solver.plan("8B", gpu="h20", max_model_len=131072, budget_gpus=4, token_budget="auto")
    best = answer.plans[0]
    assert best.lowered_budget is True
    assert best.model_dump(exclude={"max_token_len_per_gpu"})["lowered_budget"] is True
    assert best.model_dump(mode="json", include={"gpus", "lowered_budget"}) == {"gpus": best.gpus,
                                                                                "lowered_budget": True}
    # With it, the flag stands right after it.
    keys = list(best.model_dump(mode="json"))
    assert keys[keys.index("max_token_len_per_gpu") + 1] == "lowered_budget"


@pytest.mark.parametrize("flags", [
    ["--model", "8B", "--gpu", "a100", "--gpus", "4", "--len", "32k"],  # no rollout GPUs: no cluster section
    ["--model", "32B", "--gpu", "h100", "--gpus", "8", "--len", "32k", "--rollout-gpus", "8"],  # engines of 2 GPUs
    ["--model", "8B", "--gpu", "h100", "--gpus", "12", "--len", "64k", "--rollout-gpus", "2"],  # whole nodes: 4 more
    ["--model", "8B", "--gpu", "mi300x", "--gpus", "8", "--len", "128k", "--rollout-gpus", "4", "--node-gpus", "4"],
    ["--model", "8B", "--gpu", "a100", "--gpus", "8", "--len", "32k", "--train-batch-size", "96"],  # said in a header
    ["--model", "32B", "--gpu", "h100", "--gpus", "16", "--len", "64k"],  # its nodes said in a header
])
def test_trinity_config_is_what_emit_trinity_prints(cli, flags: list[str], unwrapped_fragments: list[str]):
    status, out, _ = cli(*flags, "--emit", "trinity")
    [unwrapped] = unwrapped_fragments
    value = {flag: flags[i + 1] for i, flag in enumerate(flags) if flag.startswith("--")}
    (answer,) = solver.plan(value["--model"], gpu=value["--gpu"], budget_gpus=int(value["--gpus"]),
                            max_model_len=int(value["--len"].replace("k", "")) * 1024,
                            rollout_gpus=int(value["--rollout-gpus"]) if "--rollout-gpus" in value else None,
                            node_gpus=int(value["--node-gpus"]) if "--node-gpus" in value else None,
                            train_batch_size=int(value["--train-batch-size"]) if "--train-batch-size" in value
                            else None)
    assert status == 0 and out == wrapped_comments(unwrapped) and solver.trinity_config(answer) == in_api_words(
        unwrapped)
    assert ("# Planned for a train batch of 96 " in out) == ("--train-batch-size" in value)
    assert ("# The trainer spans 2 whole nodes of 8 GPUs" in out) == (value["--gpus"] == "16")


def test_trinity_config_of_an_answer_planned_with_a_catalogue_of_your_own_asks_for_it():
    catalog = CATALOG.with_gpu_types([solver.described_gpu_type("mine", 64)])
    (answer,) = solver.plan("8B", gpu="mine", budget_gpus=8, max_model_len=16384, catalog=catalog)
    with pytest.raises(QueryError, match=r"^pass trinity_config the catalog the answer was planned with: unknown GPU"):
        solver.trinity_config(answer)
    assert solver.trinity_config(answer, catalog).startswith("# Trinity-RFT settings generated by rft-solver")
    model = solver.load_model_config(EXAMPLES.parent.parent / "tests/data/hf-configs/phi-4.json")  # a model of yours
    (answer,) = solver.plan("phi-4", gpu="h100", budget_gpus=8, max_model_len=16384, catalog=CATALOG.with_model(model))
    with pytest.raises(QueryError, match=r"^pass trinity_config the catalog the answer was planned with: unknown "
                                         r"model 'phi-4'"):
        solver.trinity_config(answer)


def test_trinity_config_of_an_answer_without_a_plan_says_why():
    (answer,) = solver.plan("8B", gpu="a100", budget_gpus=1, max_model_len=1 << 20, estimate="never")
    with pytest.raises(QueryError, match=r"^A100-80GB: no plan"):
        solver.trinity_config(answer)


def test_an_answer_keeps_its_node_size_and_its_fragment_sizes_engines_within_a_node():
    # Llama-3.1-70B's rollout engines want 4 GPUs each (its bf16 weights), which nodes of 2 cannot hold: there
    # they take 2, the most a node allows (the command says they hold too little).
    fragments = {}
    for node_gpus in (2, 8):
        (answer,) = solver.plan("llama-3.1-70b", gpu="h100", budget_gpus=16, max_model_len=16384, rollout_gpus=8,
                                node_gpus=node_gpus)
        assert answer.node_gpus == node_gpus
        fragments[node_gpus] = solver.trinity_config(answer)
    assert "tensor_parallel_size: 2\n" in fragments[2] and "gpu_per_node: 2  # 16 trainer + 8 rollout" in fragments[2]
    assert "tensor_parallel_size: 4\n" in fragments[8] and "gpu_per_node: 8  # 16 trainer + 8 rollout" in fragments[8]


@pytest.mark.parametrize(("args", "environment"), [
    # YaRN, Offload and rollout GPUs: a cluster, engines and the offload flags under trainer and each role
    ({"model": "8B", "gpu": "a100", "max_model_len": 131072, "budget_gpus": 8, "rollout_gpus": 4},
     {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}),
    ({"model": "8B", "gpu": "a100", "max_model_len": 8192, "budget_gpus": 2, "env": False}, {}),
    # past Llama 3.1's native context on its own RoPE scaling: vLLM needs to be told
    ({"model": "llama-3.1-8b", "gpu": "h100", "max_model_len": 200000, "budget_gpus": 8},
     {"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1", "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}),
])
def test_trinity_settings_are_the_keys_and_the_environment_the_fragment_writes(args: dict, environment: dict):
    (answer,) = solver.plan(args.pop("model"), **args)
    settings = solver.trinity_settings(answer)
    assert isinstance(settings, solver.TrinitySettings)
    assert settings.config == yaml.safe_load(solver.trinity_config(answer))
    assert list(settings.config) == list(yaml.safe_load(solver.trinity_config(answer)))  # in the fragment's order
    assert settings.environment == environment
    for name, value in environment.items():
        assert f"{name}={value}" in solver.trinity_config(answer)


def test_trinity_settings_are_frozen_plain_dicts_of_the_callers_own_and_so_not_hashable():
    # docs/api.md: the other results hash by value; these hold dicts to merge into a config or dump, which a read-only
    # mapping would not be (yaml.safe_dump and json.dumps refuse one), so a hash of them would not stay the same.
    (answer,) = solver.plan("8B", gpu="a100", max_model_len=32768, budget_gpus=8)
    settings = solver.trinity_settings(answer)
    assert hash(answer) == hash(solver.plan("8B", gpu="a100", max_model_len=32768, budget_gpus=8)[0])
    assert type(settings.config) is dict and type(settings.environment) is dict
    assert yaml.safe_load(yaml.safe_dump(settings.config)) == json.loads(json.dumps(settings.config))
    with pytest.raises(TypeError, match="unhashable type: 'dict'"):
        hash(settings)
    with pytest.raises(ValidationError, match="frozen"):
        settings.config = {}
    settings.config["trainer"]["max_token_len_per_gpu"] = 1  # yours: the next call makes them anew
    assert solver.trinity_settings(answer).config["trainer"]["max_token_len_per_gpu"] == 32768


def test_trinity_settings_give_the_keys_as_nested_mappings():
    (answer,) = solver.plan("8B", gpu="a100", max_model_len=32768, budget_gpus=8, rollout_gpus=4)
    assert solver.trinity_settings(answer).model_dump() == {
        "config": {"model": {"max_model_len": 32768}, "cluster": {"node_num": 2, "gpu_per_node": 8},
                   "explorer": {"rollout_model": {"engine_num": 8, "tensor_parallel_size": 1}},
                   "trainer": {"ulysses_sequence_parallel_size": 2, "max_token_len_per_gpu": 32768}},
        "environment": {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}, "trinity_06_keys": ()}
    (without,) = solver.plan("8B", gpu="a100", budget_gpus=1, max_model_len=1 << 20, estimate="never")
    with pytest.raises(QueryError, match=r"^A100-80GB: no plan"):
        solver.trinity_settings(without)
    catalog = CATALOG.with_gpu_types([solver.described_gpu_type("mine", 64)])
    (mine,) = solver.plan("8B", gpu="mine", budget_gpus=8, max_model_len=16384, catalog=catalog)
    with pytest.raises(QueryError, match=r"^pass trinity_settings the catalog the answer was planned with: unknown "
                                         r"GPU"):
        solver.trinity_settings(mine)


def test_placement_settings_are_the_keys_and_the_environment_of_the_placements_fragments():
    result = placed_fleet()
    configs, settings = solver.placement_configs(result, FLEET), solver.placement_settings(result, FLEET)
    assert list(settings) == list(configs) == ["math-4b", "code-8b", "chat-14b", "probe-0.6b"]
    assert all(settings[job].config == yaml.safe_load(configs[job]) for job in configs)
    assert settings["probe-0.6b"].environment == {"CUDA_VISIBLE_DEVICES": "4,5,6"}
    assert settings["chat-14b"].environment == {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}


def test_settings_are_for_the_trinity_version_asked_and_frozen():
    # 0.5 refuses the trainer's own offload flags: the settings leave them out as the fragment does.
    (answer,) = solver.plan("8B", gpu="a100", max_model_len=32768, budget_gpus=8, offload=True)
    result = placed_fleet()  # code-8b: Offload
    for version in ("0.5", "0.6"):
        settings = solver.trinity_settings(answer, version=version)
        assert settings.config == yaml.safe_load(solver.trinity_config(answer, version=version))
        assert ("param_offload" in settings.config["trainer"]) == (version == "0.6")
        placed = solver.placement_settings(result, FLEET, version=version)["code-8b"]
        assert placed.config == yaml.safe_load(solver.placement_configs(result, FLEET, version=version)["code-8b"])
        assert ("param_offload" in placed.config["trainer"]) == (version == "0.6")
    with pytest.raises(ValidationError, match="frozen"):
        settings.environment = {}

@pytest.mark.parametrize(("call", "message"), [
    (lambda: solver.plan("8B", gpus=4),  # type: ignore[call-arg]
     ("plan() got an unexpected keyword argument 'gpus' (--gpus is budget_gpus here: pass budget_gpus=4, and "
      "exact=True for exactly 4)")),
    (lambda: solver.estimate_memory("8B", "h100", 8, 4096, host_ram=64),  # type: ignore[call-arg]
     ("estimate_memory() got an unexpected keyword argument 'host_ram' (--host-ram is host_ram_gb here: pass "
      "host_ram_gb=64)")),
    (lambda: solver.map_plans("8B", gpus_upto=4),  # type: ignore[call-arg]
     "map_plans() got an unexpected keyword argument 'gpus_upto' (did you mean gpus_up_to?)"),
    # apiwords90b: a count of GPUs by another function's keyword is told this one's (as solve map --gpus is told
    # --gpus-up-to); before, map_plans' gpus was told gpu, the GPU type, and estimate_memory's budget_gpus node_gpus
    (lambda: solver.map_plans("8B", gpus=4),  # type: ignore[call-arg]
     "map_plans() got an unexpected keyword argument 'gpus' (did you mean gpus_up_to=4?)"),
    (lambda: solver.estimate_memory("8B", "h100", max_model_len=4096, budget_gpus=8),  # type: ignore[call-arg]
     "estimate_memory() got an unexpected keyword argument 'budget_gpus' (did you mean gpus=8?)"),
    (lambda: solver.plan("8B", gpus_up_to=8),  # type: ignore[call-arg]
     "plan() got an unexpected keyword argument 'gpus_up_to' (did you mean budget_gpus=8?)"),
    (lambda: solver.place(FLEET, nodes=1), "place() got an unexpected keyword argument 'nodes'"),  # type: ignore
])
def test_an_unknown_keyword_is_pythons_type_error_with_the_keyword_meant(call, message: str):
    # apiwords90: the command's flag by its name points to the keyword (COMMAND_OPTIONS beside API_OPTIONS), a slip
    # to the keyword it is close to; before, Python's TypeError alone. The signatures stay the functions' own.
    with pytest.raises(TypeError) as caught:
        call()
    assert str(caught.value) == message
    assert "budget_gpus" in signature(solver.plan).parameters and solver.plan.__name__ == "plan"


def test_config_query_takes_make_querys_keywords_by_name_and_a_typo_names_it():
    own = signature(config_query).parameters
    assert all(parameter.kind != Parameter.VAR_KEYWORD for parameter in own.values())
    assert set(own) - {"config"} == set(signature(solver.make_query).parameters)
    for name, parameter in signature(solver.make_query).parameters.items():  # None: as the config says
        assert own[name].default in (parameter.default, None), name
    with pytest.raises(TypeError, match=r"config_query\(\) got an unexpected keyword argument 'gpus'"):
        config_query(CATALOG, CONFIG, gpus=4)  # type: ignore[call-arg]
    query = config_query(CATALOG, CONFIG, gpu="h20", sp=2, top=3, seed=7, host_ram_gb=512.0, time_limit_s=5.0)
    assert (query.sp, query.top, query.seed, query.host_ram_gb, query.time_limit_s) == (2, 3, 7, 512.0, 5.0)


def test_the_api_page_leaves_out_of_an_answers_json_only_what_as_json_leaves_out():
    # docs/api.md names the Answer's attributes that are "not in the JSON"; the rest of those it names are.
    page = " ".join((EXAMPLES.parent / "api.md").read_text(encoding="utf-8").split())
    [said] = re.findall(r"`decided`: whether the solve proved its answer \(`status` `optimal` or `infeasible`\); (.*?) "
                        r"\(when there is no plan", page)
    within, left_out = said.split("and, not in the JSON:")
    # A margin of its own, so that memory_model_margin, left out of the JSON where None, is in it.
    (answer,) = solver.plan("8B", gpu="a100", max_model_len=32768, budget_gpus=16, rollout_gpus=4, node_gpus=4,
                            margin=0.05)
    # dpo_pairs is in the JSON of a DPO config's answers alone (test_dpomicro_s76 shows it there), token_budget_cap in
    # a capped answer's alone (test_review80c_s80), token_budget_cap_source in one a config's budget caps
    # (test_smallslips38_s80), token_budget_cap_raised in a refusal that a larger cap lifts (test_jsonkeys_s81).
    # (`plan`'s, a possessive, names the function whose keywords the query's attributes are, not an attribute)
    assert set(re.findall(r"`(\w+)`(?!'s)", within)) - {"dpo_pairs", "token_budget_cap", "token_budget_cap_source",
                                                        "token_budget_cap_raised"} <= answer.as_json().keys()
    assert re.findall(r"`(\w+)`", left_out) == ["alternatives"] and "alternatives" not in answer.as_json()


def test_a_plan_call_solves_at_most_as_often_as_the_api_page_says(monkeypatch: pytest.MonkeyPatch):
    # docs/api.md: per GPU type, at most so many solves for an answer with a plan, and for one without (each within
    # time_limit_s). These queries ask every further question that applies: they take the most.
    page = " ".join((EXAMPLES.parent / "api.md").read_text(encoding="utf-8").split())
    [(with_plan, without)] = re.findall(r"at most (\d+) solves for an answer with a plan; or, for one without, those "
                                        r"behind its `reason` and `nearest`: at most (\d+)\.", page)
    # each answer's solves share one limit but a reason's (s80: the page named 14 and 9 limits before)
    assert ("takes about `time_limit_s` where every answer has a plan, and past it by up to one limit for each solve "
            "behind a reason (those get their own)") in page

    solves: list[str] = []
    answer_for = solve_module.answer_for

    def counted_answer_for(catalog, query, gpu, *args, **kwargs):
        solves.append(gpu)
        return answer_for(catalog, query, gpu, *args, **kwargs)

    least_host_plan = solve_module.least_host_plan

    def counted_least_host_plan(catalog, query, gpu):
        solves.append(gpu)
        return least_host_plan(catalog, query, gpu)

    nearest_plan = solve_module.nearest_plan

    def counted_nearest_plan(catalog, data, query):
        solves.append(data.gpu)
        return nearest_plan(catalog, data, query)

    fewest_limits_dropped = solve_module.fewest_limits_dropped

    def counted_fewest_limits_dropped(catalog, query, gpu):
        solves.append(gpu)
        return fewest_limits_dropped(catalog, query, gpu)

    monkeypatch.setattr(solve_module, "answer_for", counted_answer_for)
    monkeypatch.setattr(solve_module, "least_host_plan", counted_least_host_plan)
    monkeypatch.setattr(solve_module, "nearest_plan", counted_nearest_plan)
    monkeypatch.setattr(solve_module, "fewest_limits_dropped", counted_fewest_limits_dropped)
    # Estimated (measured), longer than validated, 2 rollout GPUs beside whole nodes (fewer_nodes: one solve), a batch
    # (other_batch), a pin (unpinned; Env, which the estimates keep on anyway), host memory that costs the best plan
    # Offload (more_host_ram, then named_release: Trinity 0.6.0's rank 0 alone loads the model), and 0.1 GiB to spare
    # at 8 GPUs, more than calibrated (room_kept, s79).
    (answer,) = solver.plan("8B", gpu="h100", objective="max_len", budget_gpus=12, rollout_gpus=2, train_batch_size=96,
                            env=True, host_ram_gb=320.0)
    assert answer.plans and len(solves) == int(with_plan) - 1 and answer.named_release is not None
    solves.clear()
    # Without rollout GPUs the plan takes all 32: the last node of 8 kept for the rollout leaves 8 of 24 unused (no SP
    # that divides the heads leaves 24 GPUs ranks that divide a batch of 40), so rollout_kept is asked twice (8 kept,
    # then 16; within one node the second question's answer is the first's plan, without a solve).
    (answer,) = solver.plan("8B", gpu="h100", objective="max_len", budget_gpus=32, train_batch_size=40, env=True,
                            host_ram_gb=1024.0)
    assert answer.plans and len(solves) == int(with_plan) - 1 and answer.rollout_kept is not None
    assert answer.rollout_kept.rollout_gpus == 16
    solves.clear()
    # With 256 GiB of host memory per node, the last node of 8 kept for the rollout leaves the trainer no plan
    # within the host memory (no SP that divides the heads leaves 24 GPUs ranks that divide a batch of 40, and 16 need
    # Offload's 284.8 GiB per node), so one solve more finds it without that (rollout_kept.without_host_ram); and the
    # host memory costs the best plan Offload: more_host_ram, then named_release (liftrelease92).
    (answer,) = solver.plan("8B", gpu="h100", objective="max_len", budget_gpus=32, train_batch_size=40, env=True,
                            host_ram_gb=256.0)
    assert answer.plans and len(solves) == int(with_plan) and answer.rollout_kept is not None
    assert (answer.rollout_kept.rollout_gpus, answer.rollout_kept.plan) == (8, None)
    assert answer.rollout_kept.without_host_ram is not None and answer.named_release is not None
    solves.clear()
    # For a length, where the host memory given rules nothing out, a lowered budget is asked too (persona93e): 4
    # A100s at 65536 tokens (the question and more_host_ram's, asked first), 1 kept leaves 3, which train nothing at
    # the default, so the soft limits' solve, then token_budget="auto"'s, which trains it on 2 (the third kept too,
    # within the node, without a solve): 5 in all.
    (answer,) = solver.plan("8B", gpu="a100", max_model_len=65536, budget_gpus=4, host_ram_gb=1024.0)
    assert answer.plans and len(solves) == 5 and answer.rollout_kept is not None
    assert answer.rollout_kept.plan is not None and answer.rollout_kept.plan.lowered_budget
    assert (answer.rollout_kept.rollout_gpus, answer.rollout_kept.plan.gpus) == (2, 2)
    solves.clear()
    # Pinned, on an exact count, with host memory and a batch, nothing at any length, and no limit lifted alone or
    # with the pins names a plan: the longest, the plan without the pins (and its longest), the host memory's three
    # (without it, and the pins too, or at a lowered budget), the batch's, fewer GPUs', --token-budget auto's three
    # (within the budget, then on fewer GPUs, then the longest it reaches: nothing trains at the default) and the
    # nearest plan's one (more GPUs, the fewest limits lifted, on the nodes of 4 given: none trains it there, and
    # larger nodes are not asked): 13 solves, one fewer than the most.
    (answer,) = solver.plan("4B", gpu="a100-40g", max_model_len=131072, budget_gpus=4, exact=True, env=False,
                            offload=False, host_ram_gb=32.0, train_batch_size=3, rollout_gpus=2, node_gpus=4,
                            estimate="only")
    assert not answer.plans and len(solves) == int(without) - 1 and "no count of nodes of 4 GPUs" in answer.reason
    solves.clear()
    # Under --no-estimate the tables' nearest plan (on nodes of 8, then of 16) and, beside it, the estimates' (the
    # same two nodes) each take their two: the host memory's three, the pins' two, the batch's, fewer GPUs', the
    # estimates' plan and the four nearest.
    (answer,) = solver.plan("4B", gpu="a100", max_model_len=524288, budget_gpus=1, exact=True, env=False, offload=False,
                            host_ram_gb=64.0, train_batch_size=3, estimate="never")
    assert not answer.plans and len(solves) == int(without) and "; on nodes of 16 GPUs (node_gpus), " in answer.reason
    solves.clear()
    # On nodes of 1 given, the two nearest plans are sought there alone, and the reason says none trains it there.
    (answer,) = solver.plan("4B", gpu="a100", max_model_len=65536, budget_gpus=1, exact=True, env=False, offload=False,
                            host_ram_gb=64.0, train_batch_size=3, node_gpus=1, estimate="never")
    assert not answer.plans and len(solves) == int(without) - 2
    assert answer.reason.endswith("; no count of nodes of 1 GPU (node_gpus) trains it, even without "
                                  'estimate="never", env=False, offload=False, host_ram_gb=64 and a train batch of 3 '
                                  '(train_batch_size) and with token_budget="auto": an SP group stays within one node, '
                                  "so no SP")


def test_calls_from_several_threads_at_once_give_the_answers_of_one_after_the_other():
    # docs/api.md: a launcher may ask from several threads; the calls share only read-only caches and a pool.
    requests = [{"model": model, "max_model_len": length, "budget_gpus": gpus}
                for model in ("0.6B", "8B", "32B") for length in (32768, 131072) for gpus in (4, 16)]

    def answers(request: dict[str, Any]) -> list[dict[str, Any]]:
        return [answer.as_json() for answer in solver.plan(**request, explain=True)]

    def placement(seed: int) -> dict[str, Any]:
        return solver.place(FLEET, seed=seed).model_dump(mode="json")

    one_after_the_other = [answers(request) for request in requests], [placement(seed) for seed in range(4)]
    with ThreadPoolExecutor(max_workers=8) as threads:
        at_once = list(threads.map(answers, requests)), list(threads.map(placement, range(4)))
    assert at_once == one_after_the_other


def test_a_deadline_ends_a_long_call_soon_after_it_on_every_gpu_type(monkeypatch: pytest.MonkeyPatch):
    # 100 ranked plans on up to 4096 GPUs take 7.6 to 9.5 s (both GPU types; the H20's solves run in the pool's
    # thread). On a clock that stands still but for 0.05 s a solve (whatever the machine's load), deadline_s 0.3
    # passes after six: each solve is given what is left of it, and every one after it, on either GPU type, CP-SAT's
    # least, a millisecond (without it, 200 solves of up to 10 s each).
    clock = FakeClock(monkeypatch)
    solved, given = solve_module._solved, []

    def taking_a_while(cp_solver, model):
        status = solved(cp_solver, model)
        in_pool = threading.current_thread().name.startswith("rft-solver-plan")
        given.append((in_pool, cp_solver.parameters.max_time_in_seconds))
        clock.now += 0.05
        return status

    monkeypatch.setattr(solve_module, "_solved", taking_a_while)
    answers = solver.plan("14B", objective="max_len", budget_gpus=4096, top=100, deadline_s=0.3)
    assert [answer.gpu for answer in answers] == ["A100-80GB", "H20-96GB"]
    assert all(not answer.decided and len(answer.plans) < 100 for answer in answers)
    assert all(seconds <= 0.3 for _, seconds in given)
    assert {(in_pool, seconds) for in_pool, seconds in given if seconds == 0.001} == {(False, 0.001), (True, 0.001)}
    assert len([seconds for _, seconds in given if seconds > 0.001]) <= 7  # six before it, one of the other thread's


def test_a_deadline_not_reached_changes_no_answer():
    asked = {"model": "14B", "max_model_len": 1 << 20, "budget_gpus": 16, "explain": True}
    assert solver.plan(**asked, deadline_s=600) == solver.plan(**asked)


@pytest.mark.wall_clock  # about the wall clock: keeps the real one
def test_an_answer_the_deadline_cut_short_says_so():
    # Past the deadline every solve gets a millisecond and the explanation's questions none: it says why.
    # How many questions ran out depends on the clock; the words around the count do not.
    answers = solver.plan("32B", max_model_len=1 << 24, budget_gpus=65536, explain=True, deadline_s=1e-6)
    for answer in answers:
        (detail,) = [reason.detail for reason in answer.explanation if reason.rule == "incomplete"]
        assert re.fullmatch(r"[1-9]\d* of the questions behind this explanation ran out of time \(time_limit_s=10 "
                            r"for the whole explanation, or the call's deadline_s, which came first\): what they "
                            r"would have shown is missing above; a longer deadline_s \(and time_limit_s, where that "
                            r"came first\) shows it", detail), detail


@pytest.mark.wall_clock  # about the wall clock: keeps the real one
def test_a_deadline_ends_with_its_call():
    # A call whose deadline passed leaves none behind in its thread: a solve after it that calls no answer_query
    # (solve cluster's, say) has its whole time limit, and is answered in full.
    query = solver.make_query(CATALOG, model="14B", max_model_len=1 << 20, budget_gpus=16)
    full = solve_module.plan(query, CATALOG)
    cut = solver.plan("14B", max_model_len=1 << 20, budget_gpus=16, explain=True, deadline_s=1e-6)
    assert all(answer.explanation[-1].rule == "incomplete" for answer in cut)
    assert solve_module.within_deadline(10.0) == pytest.approx(10.0, abs=0.1)  # the whole limit, not a millisecond
    assert solve_module.plan(query, CATALOG) == full


@pytest.mark.parametrize(("deadline", "message"), [
    (0, "deadline_s must be above 0 seconds and at most 1000000000, got 0"),
    (-1.5, "deadline_s must be above 0 seconds and at most 1000000000, got -1.5"),
    ("1", "deadline_s must be a number, got '1'"),
    (True, "deadline_s must be a number, got True"),
])
def test_a_bad_deadline_is_a_one_line_query_error(deadline: object, message: str):
    with pytest.raises(QueryError) as raised:
        solver.plan("4B", max_model_len=8192, deadline_s=deadline)  # type: ignore[arg-type]
    assert str(raised.value) == message
    with pytest.raises(QueryError, match="^deadline_s must"):
        answer_query(QUERY, CATALOG, deadline_s=deadline)  # type: ignore[arg-type]


def test_results_pickle_and_come_back_equal():
    # For a launcher that hands them to another process (multiprocessing, a job queue).
    (answer,) = solver.plan("8B", gpu="a100", max_model_len=32768, budget_gpus=8, rollout_gpus=4, explain=True)
    results = (answer, placed_fleet(), solver.estimate_memory("8B", "h100", 8, 131072, sp=8, env=True),
               solver.trinity_settings(answer), solver.load_fleet(FLEET), QUERY)
    assert all(pickle.loads(pickle.dumps(result)) == result for result in results)  # our own bytes


def test_a_placement_rebuilt_from_its_json_compares_by_its_json():
    # docs/api.md: its plans' memory figures come back rounded and its timings 0, so compare the JSON.
    result = placed_fleet()
    rebuilt = solver.ClusterResult.model_validate_json(result.model_dump_json())
    assert rebuilt != result and rebuilt.wall_time_s == rebuilt.planning_s == 0 and rebuilt.least_time_limit_s is None
    assert rebuilt.model_dump(mode="json") == result.model_dump(mode="json")


def run_python_blocks(page: str) -> int:
    """Run every ```python block of docs/`page` from the current folder, each in a namespace of its own, checking that
    an expression followed by a comment that is a Python value (`# 2`), or starts with one before a colon
    (`# 0.06: why`), gives it: the number of values so checked."""
    shown = 0
    for block in re.findall(r"```python\n(.*?)```", (EXAMPLES.parent / page).read_text(encoding="utf-8"),
                            flags=re.DOTALL):
        lines, names = block.splitlines(), {}
        for statement in ast.parse(block).body:
            if isinstance(statement, ast.Expr) and statement.end_lineno == statement.lineno:
                comment = lines[statement.lineno - 1][statement.end_col_offset:].strip().removeprefix("#").strip()
                value = None
                for shown_part in (comment, comment.split(": ")[0]):  # `# 4, 2: why` shows the value 4, 2
                    try:
                        value = ast.literal_eval(shown_part)
                        break
                    except (ValueError, SyntaxError):
                        continue
                if value is not None:
                    shown += 1
                    expression = compile(ast.Expression(statement.value), f"docs/{page}", "eval")
                    assert eval(expression, names) == value, f"docs/{page}: {lines[statement.lineno - 1]}"
                    continue
            exec(compile(ast.Module([statement], []), f"docs/{page}", "exec"), names)  # noqa: S102 - the page's own
    return shown


@pytest.mark.parametrize(("page", "values"), [("json.md", 4), ("planner.md", 0)])
def test_the_values_the_docs_show_beside_their_python_examples_are_what_they_give(
        monkeypatch: pytest.MonkeyPatch, page: str, values: int):
    """Every ```python block of the docs' pages runs from the repository root, and gives the values shown beside it
    (`run_python_blocks`; api.md's run where `solve examples` wrote their files, in
    `test_the_python_examples_in_the_api_page_run_where_solve_examples_wrote_their_files_and_give_the_values_shown`)."""
    monkeypatch.chdir(EXAMPLES.parent.parent)
    assert run_python_blocks(page) == values


def test_place_reports_progress_from_its_search_thread_and_raises_what_progress_raises():
    callers: list[bool] = []

    def progress(stage: str, objective: float, bound: float, seconds: float) -> None:
        callers.append(threading.current_thread() is threading.main_thread())
        raise RuntimeError(f"a launcher's bug at {stage}")

    with pytest.raises(RuntimeError, match="a launcher's bug at placed priority"):
        solver.place(FLEET, progress=progress)
    assert callers == [False]


def test_a_nearest_plan_past_a_callers_own_host_memory_names_more_of_it_not_a_flag_to_drop():
    # A caller's own words for host memory are no flag: the nearest plan on more GPUs says it needs more host memory,
    # where it said "if you also drop the node's RAM 64" (not its figure again: the reason named it among its limits).
    query = solver.make_query(CATALOG, model="4B", gpu="h100", max_model_len=131072, budget_gpus=2, host_ram_gb=64,
                              host_ram_source="the node's RAM")
    (answer,) = answer_query(query, CATALOG)
    assert answer.reason == (
        "131072 tokens is beyond what the tables and the memory model's estimates allow for Qwen3-4B on H100-80GB "
        "within 2 GPUs with 64 GiB of host memory per node (the node's RAM): the longest is 30720 on the 1024-token "
        "grid (Env + SP=2 on 2 GPUs, estimated); on nodes with more host memory, more trainer GPUs train 131072 "
        "tokens: Env + SP=8 on 8 GPUs (estimated, extrapolated), and it needs 141.0 GiB of host memory per node while "
        'the model loads; token_budget="auto" reaches 61440 tokens on the 1024-token grid: Env + SP=2 on 2 GPUs with '
        "max_token_len_per_gpu = 30720 (estimated)")


def test_no_estimate_s_nearest_plan_names_a_callers_own_host_memory_once():
    # Under estimate="never", the estimates' nearest plan on nodes with more host memory leaves the figure out where
    # the reason named it among its limits (as the tables' nearest plan does, above), and names it where it did not.
    def reason(gpu: str) -> str | None:
        query = solver.make_query(CATALOG, model="4B", gpu=gpu, max_model_len=131072, budget_gpus=2, host_ram_gb=64,
                                  host_ram_source="the node's RAM", estimate="never")
        (answer,) = answer_query(query, CATALOG)
        return answer.reason

    estimated = ('the memory model estimates a plan, Env + SP=8 on 8 GPUs at 131072 tokens: drop estimate="never" '
                 "and take budget_gpus=8, and it needs 141.0 GiB of host memory per node while the model loads")
    assert reason("a100-80g") == (
        "131072 tokens is beyond what the tables allow for Qwen3-4B on A100-80GB within 2 GPUs with 64 GiB of host "
        "memory per node (the node's RAM): the longest is 32768 (Env + SP=2 on 2 GPUs, documented); on nodes with "
        f"more host memory, {estimated}")
    assert reason("h100") == (
        f"the tables have no Qwen3-4B on H100-80GB; on nodes with more host memory than the node's RAM of 64 GiB, "
        f"{estimated}")


def test_host_memory_from_a_callers_own_source_is_named_in_words_in_reasons_and_views():
    # make_query's host_ram_source, where it is no flag (a caller's node memory), is named in plain words that keep it,
    # as a cluster pool's is: in a refusal's estimated plan, and in why fewer plans than asked for were found.
    refused = solver.make_query(CATALOG, model="32B", gpu="a100", max_model_len=32768, budget_gpus=8, rollout_gpus=8,
                                estimate="never", host_ram_gb=400, host_ram_source="the node's RAM")
    (answer,) = answer_query(refused, CATALOG)
    # (s84: every rank loads it on A100s, 8 x 122.0 GiB beside two sets of pinned shards of 140.0: 1256.4)
    assert answer.reason.endswith("Env + Offload + SP=2 on 8 GPUs at 32768 tokens, but with Offload it needs 1256.4 "
                                  "GiB of host memory per node, more than the node's RAM of 400 GiB")
    asked = solver.make_query(CATALOG, model="8B", gpu="a100", max_model_len=32768, budget_gpus=4, host_ram_gb=256,
                              host_ram_source="the node's RAM", top=50)
    shown = io.StringIO()
    Console(file=shown, width=300).print(answers_view(answer_query(asked, CATALOG), asked, CATALOG))
    assert ("2 plans of the 50 asked for: each other plan that trains within 256 GiB of host memory per node (the "
            "node's RAM) is no cheaper") in shown.getvalue()
    # A Trinity config's verdict: the model takes more host memory to load than the node has.
    from_config = config_query(CATALOG, CONFIG, gpu="h20", host_ram_gb=70, host_ram_source="the node's RAM")
    judged = with_config_verdicts(answer_query(from_config, CATALOG), from_config, CATALOG, CONFIG, CONFIG_TEXT,
                                  "trinity.yaml", {})
    shown = io.StringIO()
    Console(file=shown, width=300).print(answers_view(judged, from_config, CATALOG))
    # (s84: 6 ranks' loads of 30.5 GiB, no release named, beside the reference model's pinned shards)
    assert ("It needs 224.6 GiB of host memory per node while the model loads, more than the node's RAM of 70 GiB."
            ) in " ".join(shown.getvalue().split())
    # The way forward names more of it, not "without the node's RAM", after the reason named it among its limits.
    assert ("trains with 70 GiB of host memory per node (the node's RAM) and a train batch of 768"
            ) in " ".join(shown.getvalue().split())
    assert "; with more host memory, SP=2 on 6 GPUs trains it (32768 tokens)" in " ".join(shown.getvalue().split())


def test_a_verdict_names_a_best_plans_setting_where_it_differs_beyond_env():
    # Qwen3-8B at 65536 tokens on 4 A100s, SP=4 without Env at 16384 tokens per GPU by hand: it trains by estimate.
    # With token_budget="auto" (the config's own 16384 caps the plans' otherwise, s80), the best plan is Env + SP=4 at
    # 25600; given as Env + Offload + SP=4 at that cost instead, the verdict names the setting (not Env alone) and the
    # token budget, and says it costs more; given on 2 GPUs, it names the counts.
    text = ("algorithm: {algorithm_type: grpo}\n"
            "model: {model_path: Qwen/Qwen3-8B, max_model_len: 65536, rope_scaling: {rope_type: yarn, factor: 1.6, "
            "original_max_position_embeddings: 40960}}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
            "explorer: {rollout_model: {engine_num: 4}}\ntrainer: {ulysses_sequence_parallel_size: 4, "
            "max_token_len_per_gpu: 16384}\n")
    config = read_trinity_config(text, "trinity.yaml", {})
    query = config_query(CATALOG, config, gpu="a100", token_budget="auto")
    (answer,) = with_config_verdicts(answer_query(query, CATALOG), query, CATALOG, config, text, "trinity.yaml", {})
    best = answer.plans[0]
    assert (best.setting.label, best.max_token_len_per_gpu, answer.current.plan.cost) == ("Env + SP=4", 25600, 0.325)
    offloaded = answer.model_copy(update={"plans": (best.model_copy(update={"offload": True}),)})
    shown = io.StringIO()
    Console(file=shown, width=300).print(answers_view((offloaded,), query, CATALOG))
    # In the query's words (the API's: env=False; the command's --no-env).
    assert ("). The planner did not rank these settings: its estimates keep Env on (env=False estimates without it). "
            "The plan below runs Env + Offload + SP=4, not SP=4, and costs more (0.3282 against 0.325). Its "
            "max_token_len_per_gpu is 25600, not 16384 (fewer micro-batches, which the cost does not count). "
            ) in " ".join(shown.getvalue().split())
    on_fewer = answer.model_copy(update={"plans": (best.model_copy(update={"gpus": 2}),)})
    shown = io.StringIO()
    Console(file=shown, width=300).print(answers_view((on_fewer,), query, CATALOG))
    assert "The plan below runs Env + SP=4 on 2 GPUs, not SP=4 on 4, and costs more (" in " ".join(
        shown.getvalue().split())


def test_a_verdict_marks_the_lines_that_refuse_by_their_codes_and_json_without_codes_none():
    # A prompt and response over the length refuses the config; PPO's uncounted critic does not. JSON made before codes
    # read back cannot tell them apart: both stay but:, and the verdict says it trains, as that JSON said.
    text = ("model: {model_path: Qwen/Qwen3-8B, max_model_len: 8192, max_prompt_tokens: 4096, max_response_tokens: "
            "8192}\ncluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 2}}\n")
    config = read_trinity_config(text, "trinity.yaml", {})
    query = config_query(CATALOG, config, gpu="a100")
    (answer,) = with_config_verdicts(answer_query(query, CATALOG), query, CATALOG, config, text, "trinity.yaml", {})
    raw = json.loads(answer.model_dump_json())
    del raw["current"]["config_problem_codes"], raw["current"]["refused"]
    marks = []
    for shown_answer in (answer, solver.Answer.model_validate(raw)):
        shown = io.StringIO()
        Console(file=shown, width=300).print(answers_view((shown_answer,), query, CATALOG))
        marks.append([line.split(":")[0].strip() for line in shown.getvalue().splitlines()
                      if line.startswith("  ") and not line.startswith("   ")])  # not a wrapped line's rest
        refused = ", but the config as written is refused (the problem that refuses it says why)"
        marks.append(refused in shown.getvalue())
    assert marks == [["refused", "but"], True, ["but", "but"], False]


MY_CELLS = str(EXAMPLES / "my-cells.yaml")
LLAMA_CONFIG = Path(__file__).resolve().parent / "data" / "hf-configs" / "Llama-3.2-1B.json"
H800_CELLS = Path(__file__).resolve().parent / "data" / "cells" / "h800.yaml"
WITH_LLAMA = CATALOG.with_model(solver.load_model_config(LLAMA_CONFIG))
SHIPPED_MEMORY_MODEL = shipped_tables_directory() / "memory-model.yaml"


@pytest.mark.parametrize(
    ("flags", "arguments"),
    [
        (("--gpu", "h100", "--model", "8B,32B,30B-A3B", "--gpus-up-to", "3", "--host-ram", "512"),
         {"model": ["8B", "32B", "30B-A3B"], "gpu": "h100", "gpus_up_to": 3, "host_ram_gb": 512}),
        (("--gpu", "a10", "--model", "32B,4B", "--gpus-up-to", "2", "--host-ram", "100.5", "--node-gpus", "4"),
         {"model": ("32B", "4B"), "gpu": "a10", "gpus_up_to": 2, "host_ram_gb": 100.5, "node_gpus": 4}),
        (("--gpu", "h20", "--model", "8B", "--by", "len", "--gpus-up-to", "4", "--train-batch-size", "96",
          "--token-budget", "auto"),
         {"model": "8B", "gpu": "h20", "by": "len", "gpus_up_to": 4, "train_batch_size": 96, "token_budget": "auto"}),
        (("--gpu", "h800", "--cells", str(H800_CELLS), "--model", "8B", "--by", "len", "--gpus-up-to", "2",
          "--estimate"),
         {"model": "8B", "gpu": "h800", "by": "len", "gpus_up_to": 2, "estimate": "only",
          "catalog": CATALOG.with_cells(H800_CELLS)}),
        (("--model-config", str(LLAMA_CONFIG), "--gpus-up-to", "1", "--no-estimate"),
         {"model": WITH_LLAMA.models[-1].name, "gpus_up_to": 1, "estimate": "never", "catalog": WITH_LLAMA}),
        (("--gpu", "a100", "--gpus-up-to", "2", "--margin", "0.2", "--memory-model", str(SHIPPED_MEMORY_MODEL)),
         {"gpu": "a100", "gpus_up_to": 2, "margin": 0.2, "memory": load_memory_model(SHIPPED_MEMORY_MODEL)}),
    ],
)
def test_map_plans_gives_the_maps_solve_map_json_prints(cli, flags: tuple[str, ...], arguments: dict):
    status, out, _ = cli("map", *flags, "--json")
    printed = pydantic.TypeAdapter(list[solver.GpuMap]).validate_json(out)
    maps = solver.map_plans(**arguments, option_names=COMMAND_OPTIONS)  # its cautions in the command's words
    assert status == 0 and [m.model_dump(mode="json") for m in maps] == [m.model_dump(mode="json") for m in printed]


def test_map_plans_maps_every_documented_gpu_type_without_one():
    maps = solver.map_plans("4B", gpus_up_to=1, time_limit_s=5)
    assert [m.gpu for m in maps] == [gpu.name for gpu in CATALOG.documented_gpu_types]
    assert all(isinstance(row, solver.ModelMapRow) and row.model == "Qwen3-4B" for m in maps for row in m.rows)


@pytest.mark.parametrize(
    ("flags", "arguments", "status"),
    [
        # Trinity 0.6: rank 0 alone loads the model on H100s, 71.2 GiB within 96 (every rank's 284.8 is not)
        (("--model", "8B", "--gpu", "h100", "--gpus", "8", "--len", "128k", "--sp", "8", "--env", "--host-ram", "96",
          "--trinity-version", "0.6"),
         {"model": "8B", "gpu": "h100", "gpus": 8, "max_model_len": 131072, "sp": 8, "env": True,
          "host_ram_gb": 96, "trinity_version": "0.6"}, 0),
        # does not fit (s88: the host memory given, for its 384.1 GiB at start-up would be cautioned, naming
        # host_ram_gb or --host-ram)
        (("--model", "32B", "--gpu", "a10", "--gpus", "2", "--len", "32k", "--host-ram", "512"),
         {"model": "32B", "gpu": "a10", "gpus": 2, "max_model_len": 32768, "host_ram_gb": 512}, 1),
        (("--model", "4B", "--gpu", "a100", "--gpus", "4", "--len", "8192", "--margin", "0.123456", "--offload",
          "--token-budget", "12000", "--node-gpus", "4"),
         {"model": "4B", "gpu": "a100", "gpus": 4, "max_model_len": 8192, "margin": 0.123456, "offload": True,
          "max_token_len_per_gpu": 12000, "node_gpus": 4}, 0),
        (("--model-config", str(LLAMA_CONFIG), "--gpu", "h20", "--gpus", "1", "--len", "8k", "--memory-model",
          str(SHIPPED_MEMORY_MODEL)),
         {"model": WITH_LLAMA.models[-1].name, "gpu": "h20", "gpus": 1, "max_model_len": 8192, "catalog": WITH_LLAMA,
          "memory": str(SHIPPED_MEMORY_MODEL)}, 0),
    ],
)
def test_memory_answer_is_what_solve_memory_json_prints(cli, flags: tuple[str, ...], arguments: dict, status: int):
    printed_status, out, _ = cli("memory", *flags, "--json")
    answer, printed = solver.memory_answer(**arguments), solver.MemoryAnswer.model_validate_json(out)
    ours, theirs = answer.model_dump(mode="json"), printed.model_dump(mode="json")
    assert printed_status == status and answer.trains == (status == 0) and ours == json.loads(out)
    assert list(ours) == list(theirs) and ours == theirs  # derived from the rounded GiB, as printed: docs/api.md


def test_memory_answer_echoes_a_memory_model_object_as_its_source():
    fitted = solver.calibrate_memory_model([MY_CELLS], with_tables=True).memory_model
    passed = solver.memory_answer("8B", "h100", 8, 65536, memory=fitted)
    assert (passed.memory_model, passed.memory_model_source) == (None, fitted.own_source)  # no file to name
    assert fitted.own_source is not None
    shipped = solver.memory_answer("8B", "h100", 8, 65536, memory=load_memory_model())
    assert (shipped.memory_model, shipped.memory_model_source) == (None, None)


@pytest.mark.parametrize(
    ("call", "same_as"),
    [
        (lambda: solver.map_plans("5B"), lambda: solver.plan("5B", max_model_len=8192)),
        (lambda: solver.map_plans(["4B", "rtx3090"]), lambda: solver.plan("rtx3090", max_model_len=8192)),
        (lambda: solver.map_plans("4B", gpu="rtx3090"), lambda: solver.plan("4B", gpu="rtx3090", max_model_len=8192)),
        (lambda: solver.map_plans("4B", gpu=5), lambda: solver.plan("4B", gpu=5, max_model_len=8192)),
        (lambda: solver.map_plans("4B", gpu="h100", margin=1.0),
         lambda: solver.plan("4B", gpu="h100", max_model_len=8192, margin=1.0)),
        (lambda: solver.map_plans("4B", gpu="h100", estimate="maybe"),
         lambda: solver.plan("4B", gpu="h100", max_model_len=8192, estimate="maybe")),
        (lambda: solver.map_plans("4B", gpu="h100", workers=0),
         lambda: solver.plan("4B", gpu="h100", max_model_len=8192, workers=0)),
        (lambda: solver.map_plans("4B", gpu="h100", time_limit_s=True),
         lambda: solver.plan("4B", gpu="h100", max_model_len=8192, time_limit_s=True)),
        (lambda: solver.map_plans("4B", gpu="h100", train_batch_size=0),
         lambda: solver.plan("4B", gpu="h100", max_model_len=8192, train_batch_size=0)),
        (lambda: solver.map_plans("4B", gpu="h100", host_ram_gb=-1.0),
         lambda: solver.plan("4B", gpu="h100", max_model_len=8192, host_ram_gb=-1.0)),
        (lambda: solver.map_plans("4B", catalog="tables"), lambda: solver.plan("4B", catalog="tables")),
        (lambda: solver.memory_answer("4B", "h100", 8, 32768, sp=3),
         lambda: solver.estimate_memory("4B", "h100", 8, 32768, sp=3)),
        (lambda: solver.memory_answer("4B", "h100", 12, 32768),
         lambda: solver.estimate_memory("4B", "h100", 12, 32768)),
        (lambda: solver.memory_answer("4B", "h100", 8, 1 << 30),
         lambda: solver.estimate_memory("4B", "h100", 8, 1 << 30)),
        (lambda: solver.memory_answer("5B", "h100", 8, 4096), lambda: solver.estimate_memory("5B", "h100", 8, 4096)),
        (lambda: solver.memory_answer("4B", "rtx3090", 8, 4096),
         lambda: solver.estimate_memory("4B", "rtx3090", 8, 4096)),
        (lambda: solver.memory_answer("4B", "h100", 8, 4096, margin=1.0),
         lambda: solver.estimate_memory("4B", "h100", 8, 4096, margin=1.0)),
        (lambda: solver.memory_answer("4B", "h100", 8, 4096, memory="  "), lambda: solver.load_memory_model("  ")),
    ],
)
def test_the_map_and_memory_answer_functions_refuse_bad_arguments_as_the_others_do(call, same_as):
    with pytest.raises(QueryError) as theirs:
        same_as()
    with pytest.raises(QueryError) as ours:
        call()
    assert str(ours.value) == str(theirs.value).replace("path must", "memory must")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: solver.map_plans(["8B", "4B"], by="len"), 'by="len" maps one model: give model one name, not 2'),
        (lambda: solver.map_plans(by="len"), 'by="len" maps one model: give model=M'),
        (lambda: solver.map_plans("8B", by="length"),  # as solve map --by length (apiwords90; before, no guess)
         "by must be one of model, len, got 'length'; did you mean 'len'?"),
        (lambda: solver.map_plans("8B", by="models"),
         "by must be one of model, len, got 'models'; did you mean 'model'?"),
        (lambda: solver.map_plans("8B", gpus_up_to=65), "gpus_up_to must be a whole number from 1 to 64, got 65"),
        (lambda: solver.map_plans("8B", gpus_up_to=2.0),
         "gpus_up_to must be a whole number or None, got 2.0 (a float: pass 2)"),
        (lambda: solver.map_plans({"8B"}), "model must be a str, a list, a tuple or None, got {'8B'}"),
        (lambda: solver.map_plans(["8B", 4]), "model[1] must be a str, got 4"),
        (lambda: solver.memory_answer("8B", "h100", 8, 4096, memory=5),
         "memory must be a MemoryModel, a Path, a str or None, got 5"),
    ],
)
def test_map_plans_and_memory_answer_name_what_is_wrong(call, message: str):
    with pytest.raises(QueryError) as caught:
        call()
    assert str(caught.value) == message


def test_map_plans_model_annotation_takes_what_its_check_takes():
    # It said Sequence[str], which a type checker let a UserList (or a range of names) pass, and the call refused.
    assert typing.get_type_hints(solver.map_plans)["model"] == str | list[str] | tuple[str, ...] | None
    with pytest.raises(QueryError) as caught:
        solver.map_plans(collections.UserList(["8B"]))  # type: ignore[arg-type]
    assert str(caught.value) == "model must be a str, a list, a tuple or None, got an UserList"


def test_trinity_05_carries_the_trainers_own_sp_and_fills_the_unset_budget_at_it():
    # Actor SP 4, trainer SP unset (1): Trinity 0.5 runs at SP 4 but fills trainer.max_token_len_per_gpu at SP 1.
    text = ("algorithm: {algorithm_type: grpo}\nmodel: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\n"
            "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 4}}\ntrainer:\n"
            "  trainer_config:\n    actor_rollout_ref:\n      actor: {ulysses_sequence_parallel_size: 4}\n")
    older, newer = (read_trinity_config(text, "t.yaml", {}, version) for version in ("0.5", "0.6"))
    assert [(config.sp, config.trainer_sp, config.default_budget(32768), config.budget_in_effect(32768))
            for config in (older, newer)] == [(4, 1, 65536, 65536), (1, None, 65536, 65536)]
    # Written out by hand at the value Trinity fills it with, the key follows the default, as unset.
    written = read_trinity_config(text.replace("trainer:\n", "trainer:\n  max_token_len_per_gpu: 65536\n"), "t.yaml",
                                  {}, "0.5")
    assert (written.followed_budgets(), written.budget_in_effect(16384)) == (("trainer.max_token_len_per_gpu",), 32768)
    query = config_query(CATALOG, older, gpu="a100")
    (answer,) = with_config_verdicts(answer_query(query, CATALOG), query, CATALOG, older, text, "t.yaml", {}, "0.5")
    assert (answer.current.sp, answer.current.trains, answer.current.config_problem_codes) == (
        4, False, ("role-sp-differs", "token-budget-above-verdict"))  # the fill above the verdict's: unvouched


def test_every_choice_of_the_api_is_taken_in_any_case_as_the_command_takes_its_choices():
    # The command folds every option's choices (--by Len, --minimize Nodes, --gpu-interconnect PCIe); the API folded
    # critic= alone, and refused objective="Max_Len", estimate="Never", token_budget="Auto", by="Len", ... (apifold87).
    query = solver.make_query(CATALOG, model="8B", gpu="h100", objective="Max_Len", estimate="Only",  # type: ignore
                              token_budget="Auto", critic="Resident", budget_gpus=4)
    assert (query.objective, query.estimate, query.token_budget, query.critic) == ("max_len", "only", "auto",
                                                                                   "resident")
    configured = config_query(CATALOG, CONFIG, gpu="h20", objective="Min_Gpus", estimate="Never")  # type: ignore
    assert (configured.objective, configured.estimate, configured.exact) == ("min_gpus", "never", False)
    conflict = 'token_budget="auto" lowers the token budget of estimated plans, which estimate="never" turns off'
    with pytest.raises(QueryError, match=f"^{re.escape(conflict)}"):  # both read, not "estimate must be one of"
        solver.place(FLEET, minimize="Nodes", estimate="Never", token_budget="Auto")  # type: ignore[arg-type]
    with pytest.raises(QueryError, match=f"^{re.escape(conflict)}"):
        solver.map_plans("8B", gpu="h100", estimate="NEVER", token_budget="Auto")  # type: ignore[arg-type]
    with pytest.raises(QueryError, match=r"^by=\"len\" maps one model"):  # read as "len", before any solve
        solver.map_plans(["8B", "4B"], gpu="h100", by="Len")  # type: ignore[arg-type]
    assert solver.described_gpu_type("mine", 48, interconnect="PCIe").interconnect == "pcie"  # type: ignore
    assert json.loads(json_schema("Memory"))["title"] == "solve memory --json"
    mapping, model = load_config_mapping(CONFIG_TEXT, "trinity.yaml"), CATALOG.model(CONFIG.model)
    folded = check_trinity_config(mapping, model, 8, experts="Separate", batch_divisor="GPUs")  # type: ignore
    assert folded == check_trinity_config(mapping, model, 8, experts="separate", batch_divisor="gpus")
    with pytest.raises(QueryError, match=r"^experts must be one of fused, separate, either, got 'split'$"):
        check_trinity_config(mapping, model, 8, experts="split")  # type: ignore[arg-type]  # was taken, as fused


def test_a_token_budget_is_taken_in_thousands_as_the_command_s_token_budget_and_a_length_are():
    # max_model_len="16k" was read where token_budget="16k" and max_token_len_per_gpu="16k" were refused, and
    # --token-budget 16k (solve, solve map, solve memory) takes them (apifold87): one reading of thousands for all.
    assert solver.make_query(CATALOG, model="8B", gpu="h100", max_model_len="16k",  # type: ignore[arg-type]
                             token_budget="16k", budget_gpus=4).token_budget_cap == 16384  # type: ignore[arg-type]
    memory = solver.memory_answer("8B", "h100", 4, "16k", sp=2, max_token_len_per_gpu="16k")  # type: ignore
    assert memory.max_token_len_per_gpu == 16384
    assert memory == solver.memory_answer("8B", "h100", 4, 16384, sp=2, max_token_len_per_gpu=16384)
    with pytest.raises(QueryError, match=r"^token_budget=16384: dpo=True runs with dynamic batch sizes off"):
        solver.plan("8B", gpu="h100", max_model_len=8192, dpo=True, token_budget="16k")  # type: ignore[arg-type]
    with pytest.raises(QueryError, match=r"^max_token_len_per_gpu must be a whole number or None, got '16384' "
                                         r"\(a str: pass 16384\)$"):  # a number in quotes, as max_model_len's
        solver.estimate_memory("8B", "h100", 4, 16384, sp=2, max_token_len_per_gpu="16384")  # type: ignore
