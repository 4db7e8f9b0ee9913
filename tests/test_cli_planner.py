"""`solve` (the planner) through the CLI entry point: objectives, ranking, pins, JSON and exit codes."""

from __future__ import annotations

import argparse
import ast
import gc
import io
import json
import os
import re
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tokenize
from pathlib import Path
from typing import Any

import pytest
from conftest import ONE_TABLE, fragment_comment, qwen3_8b_checkpoint
from option_reference import option_reference
from ortools.sat.python import cp_model
from reference import PLAN_ORDER, check_plan
from rich.console import Console
from terminal import read_until_closed

import solver
import solver.__main__
import solver.api
import solver.cli.atomic
import solver.cli.output
import solver.cli.planner
import solver.cli.trinity_options
import solver.render
import solver.solve
import solver.tables
import solver.tables.model_config
import solver.tables.reading
from solver.cli.calibrate import build_calibrate_parser
from solver.cli.cluster import build_cluster_parser
from solver.cli.examples import build_examples_parser
from solver.cli.maps import build_map_parser
from solver.cli.memory import build_memory_parser
from solver.cli.parser import KeptLinesFormatter
from solver.cli.planner import build_parser
from solver.cli.tables import build_tables_parser
from solver.query import make_query
from solver.render import APPLY_HEADING, answers_view
from solver.results import BeyondCode, CautionCode, MarginRoom, single_gpu_caution, thin_headroom
from solver.solve import at_token_budget, plan
from solver.tables import shipped_tables_directory

EXAMPLES = Path(__file__).parent.parent / "docs" / "examples"
ONE_GPU = "one trainer GPU: Trinity-RFT's guide strongly advises more GPUs"
"""The guide's one-GPU caution in short, as a reason says it beside a plan on one A100."""


def run_json(cli, *argv: str) -> tuple[int, list[dict]]:
    status, out, err = cli(*argv, "--json")
    assert err == ""
    return status, json.loads(out)


def ranking_rows(out: str) -> list[list[str]]:
    """The cells of each row of the ranking table in `out` (--top), stripped."""
    return [[cell.strip() for cell in line.split("│")[1:-1]] for line in out.splitlines() if line.startswith("│")]


def test_the_main_job_answers_for_each_gpu_type(cli):
    status, out, err = cli("--maximize", "len", "--gpus", "6", "--model", "4B")
    assert (status, err) == (0, "")
    assert "A100-80GB · Qwen3-4B · longest context within 6 GPUs: optimal" in out
    assert "Env + Offload + SP=4 on 4 of 6 GPUs (2 left for rollout)" in out
    assert "102400 (YaRN rope scaling, factor 2.5)" in out
    assert "documented: the A100-80GB table for 4 GPUs says 'Env + Offload + SP=4' at 102400" in out
    assert "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" in out
    assert "trainer.ulysses_sequence_parallel_size: 4" in out and "trainer.trainer_strategy: fsdp2" in out
    # The H20-96GB table for 4 GPUs reaches 133120 with Env + Offload + SP=4: YaRN factor 133120 / 40960 = 3.25.
    assert ("H20-96GB · Qwen3-4B · longest context within 6 GPUs: optimal\n"
            "plan           Env + Offload + SP=4 on 4 of 6 GPUs (2 left for rollout)\n"
            "max_model_len  133120, past the validated 131072 (YaRN rope scaling, factor 3.25; ") in out


def test_json_has_one_answer_per_gpu_type_in_the_documented_shape(cli):
    status, answers = run_json(cli, "--model", "8B", "--gpus", "4", "--len", "32768")
    assert status == 0
    assert [a["gpu"] for a in answers] == ["A100-80GB", "H20-96GB"]
    for answer in answers:
        assert list(answer) == ["gpu", "model", "objective", "budget_gpus", "open_budget", "max_model_len", "exact",
                                "pins", "train_batch_size", "rollout_gpus", "total_gpus", "node_gpus", "host_ram_gb",
                                "reference_model", "lora_rank", "critic", "margin",
                                "token_budget", "memory_model_source", "status", "reason", "reason_code", "plans",
                                "apply", "rollout_kept", "schema_version", "rft_solver_version"]
        assert (answer["model"], answer["objective"], answer["budget_gpus"], answer["max_model_len"], answer["exact"],
                answer["pins"], answer["rollout_gpus"], answer["node_gpus"], answer["status"], answer["reason"],
                answer["reason_code"]) == (
            "Qwen3-8B", "cheapest", 4, 32768, False, {"sp": None, "env": None, "offload": None}, None, 8, "optimal",
            None, None)
        assert all(tuple(p) == PLAN_ORDER for p in answer["plans"])
    assert answers[0]["plans"] == [{
        "gpus": 4, "unused_gpus": 0, "env": False, "offload": False, "sp": 4, "max_model_len": 32768,
        "max_token_len_per_gpu": 16384, "lowered_budget": False, "token_budget_cap": None, "rope_scaling_factor": None,
        "yarn_beyond_validated": False, "past_validated_length": None, "cost": 0.325,
        "evidence": "documented",
        "source": {"model": "Qwen3-8B", "gpus": 4, "max_model_len": 32768, "setting": "SP=4"}, "memory_gb": 61.07, "headroom_gb": 10.21,
        "margin_gb": 0.72,
        "headroom_at_step": False, "headroom_at_critic_pass": False, "critic_pass_gb": None,
        "host_memory_gb": None, "host_critic_gb": None, "host_training_gb": None, "reference_model": True,
        "lora_rank": 0,
        "lora_target_modules": None, "lora_exclude_modules": None, "config_lora": False, "config_adapter": None,
        "dpo": False, "mode_train": False, "critic": None,
        "trinity_version": None, "expert_layout": "fused", "model_loading": "every-rank", "compute_capability": "8.0",
        "experts_counted": None,
        "beyond_calibration": [],
        "beyond_calibration_codes": [],
        "trainer_nodes": 1, "nodes": None, "rollout_gpus": None, "cautions": [], "caution_codes": [],
    }]
    assert (answers[1]["plans"][0]["env"], answers[1]["plans"][0]["sp"]) == (True, 2)
    # Each best plan takes all 4 GPUs: the question again with 1 of them kept for the rollout (--gpus 3 --rollout-gpus
    # 1), whose best plan leaves 1 of the 3 unused, so with 2 kept (--gpus 2 --rollout-gpus 2), and its best plan,
    # with the fields of a plan.
    for answer in answers:
        kept = answer["rollout_kept"]
        assert list(kept) == ["rollout_gpus", "plan", "without_host_ram", "without_pins"]
        assert tuple(kept["plan"]) == PLAN_ORDER
        assert (kept["rollout_gpus"], kept["plan"]["gpus"], kept["plan"]["unused_gpus"], kept["plan"]["env"],
                kept["plan"]["offload"], kept["plan"]["sp"], kept["plan"]["max_model_len"], kept["plan"]["nodes"],
                kept["plan"]["rollout_gpus"], kept["plan"]["evidence"]) == (
            2, 2, 0, True, True, 2, 32768, 1, 2, "documented")


def test_json_answers_echo_the_length_exact_and_pins_they_were_asked_for(cli):
    # Two answers that differ only by --exact, or by a pin, can be told apart by the JSON alone.
    asked = ("--model", "8B", "--gpus", "4", "--len", "32k", "--gpu", "a100-80g")
    (_, [within]), (_, [exactly]) = run_json(cli, *asked), run_json(cli, *asked, "--exact")
    assert (within["exact"], exactly["exact"], within["max_model_len"], exactly["max_model_len"]) == (
        False, True, 32768, 32768)
    assert {key: value for key, value in within.items() if key not in ("exact", "rollout_kept")} == {
        key: value for key, value in exactly.items() if key not in ("exact", "rollout_kept", "unpinned")}
    # --exact pins the count: the answer says what that costs (nothing here: the best plan within 4 is on 4).
    assert "unpinned" not in within and exactly["unpinned"] == within["plans"][0]
    # Keeping 1 of the 4 for the rollout: 2 trainer GPUs of 3 plan (so 2 are kept), with --exact too (the rollout's
    # question is asked within 3 either way).
    assert within["rollout_kept"] == exactly["rollout_kept"] and within["rollout_kept"]["plan"]["gpus"] == 2
    status, [pinned] = run_json(cli, *asked, "--sp", "4", "--env", "--no-offload")
    assert (status, pinned["pins"]) == (0, {"sp": 4, "env": True, "offload": False})
    assert [(p["env"], p["offload"], p["sp"]) for p in pinned["plans"]] == [(True, False, 4)]
    status, [free] = run_json(cli, *asked, "--sp", "2", "--env")  # Offload left free: null
    assert (status, free["pins"], free["plans"][0]["offload"]) == (0, {"sp": 2, "env": True, "offload": None}, True)
    # Maximising the length asks none: null; no plan still echoes the length asked.
    status, [longest] = run_json(cli, "--model", "8B", "--gpus", "4", "--gpu", "a100-80g", "--maximize", "len")
    assert (status, longest["objective"], longest["max_model_len"], longest["exact"]) == (0, "max_len", None, False)
    status, [none] = run_json(cli, "--model", "8B", "--len", "131072", "--gpus", "4", "--gpu", "h20")
    assert (status, none["plans"], none["max_model_len"], none["nearest"]["max_model_len"]) == (1, [], 131072, 122880)


def test_json_plans_say_whether_the_token_budget_was_lowered(cli):
    asked = ("--model", "8B", "--len", "131072", "--gpus", "4", "--gpu", "h20")
    status, [lowered] = run_json(cli, *asked, "--token-budget", "auto")
    best = lowered["plans"][0]
    assert (status, best["max_token_len_per_gpu"], best["lowered_budget"], best["sp"]) == (0, 35840, True, 4)
    assert tuple(best) == PLAN_ORDER and best["max_token_len_per_gpu"] < 2 * 131072 // best["sp"]
    status, [default] = run_json(cli, *asked)
    assert (status, default["nearest"]["lowered_budget"]) == (1, False)


def test_fewest_gpus(cli):
    status, answers = run_json(cli, "--model", "8B", "--len", "65536", "--minimize", "gpus", "--gpu", "h20")
    assert status == 0 and len(answers) == 1
    best = answers[0]["plans"][0]
    assert (answers[0]["objective"], answers[0]["budget_gpus"], best["gpus"], best["sp"], best["env"]) == (
        "min_gpus", 64, 4, 4, True)


def test_top_ranks_the_alternatives_by_cost(cli):
    # Each plan after the first costs more and uses fewer GPUs: SP=4 or Env + SP=2 on 4 GPUs would cost more
    # than SP=2 there, and the 1-GPU table has no Qwen3-4B plan at 32768.
    status, answers = run_json(cli, "--model", "4B", "--len", "32k", "--gpus", "4", "--gpu", "a100-80g", "--top", "5")
    plans = answers[0]["plans"]
    assert status == 0 and [(p["gpus"], p["env"], p["offload"], p["sp"], p["evidence"]) for p in plans] == [
        (4, False, False, 2, "documented"), (2, True, False, 2, "documented")]
    assert plans[0]["cost"] < plans[1]["cost"]


def test_no_command_writes_over_the_shipped_tables_or_to_a_file_named_dash(cli, shipped_tables_kept: Path):
    tables = shipped_tables_kept
    assert cli("--model", "8B", "--gpus", "4", "--len", "32k", "--gpu", "a100", "--out", str(tables / "gpus.yaml")) == (
        2, "", (f"solve: error: --out {tables / 'gpus.yaml'} would overwrite the shipped tables' file: write to "
                "another file\n"))
    feasibility = tables / "feasibility"
    status, _, err = cli("calibrate", "--out", str(feasibility / "a100-80gb.yaml"))
    assert status == 2 and "would overwrite the shipped tables' file" in err
    # calibrate --out regenerates the shipped memory model from the shipped tables alone, not from your cells.
    cells = Path(__file__).parent / "data" / "cells" / "h800.yaml"
    for with_tables in ((), ("--with-tables",)):
        assert cli("calibrate", "--cells", str(cells), *with_tables, "--out", str(tables / "memory-model.yaml")) == (
            2, "", (f"solve calibrate: error: --out {tables / 'memory-model.yaml'} would overwrite the shipped memory "
                    "model (a fit on your cells goes to a file of its own, for --memory-model FILE): write to another "
                    "file\n"))
    fleet = Path(__file__).parent.parent / "docs" / "examples" / "fleet.yaml"
    assert cli("cluster", str(fleet), "--emit-dir", str(feasibility)) == (
        2, "", (f"solve cluster: error: --emit-dir {feasibility}: the shipped tables are read from there (every "
                "YAML file in it): write the configs to another folder\n"))
    # Nor a new file there: it would load as a GPU type's tables, and every command after it would fail.
    before = sorted(feasibility.iterdir())
    for argv in (("--model", "8B", "--gpus", "4", "--len", "32k", "--gpu", "a100", "--out"), ("calibrate", "--out")):
        command = "solve calibrate" if argv[0] == "calibrate" else "solve"
        assert cli(*argv, str(feasibility / "new.yaml")) == (2, "", (
            f"{command}: error: --out {feasibility / 'new.yaml'}: the shipped tables are read from there (every YAML "
            "file in it): write the file to another folder\n"))
    assert sorted(feasibility.iterdir()) == before
    status, out, err = cli("calibrate", "--out", "-")
    assert (status, out) == (2, "") and err.endswith(
        "error: argument --out: expected a file name, got '-' (rft-solver writes named files; what it would write "
        "goes to standard output without the option)\n")


def test_a_base_models_ranking_explanation_and_tables_name_whose_cells_they_are(cli):
    status, out, _ = cli("--model", "8B-Base", "--gpu", "a100", "--gpus", "4", "--len", "32k", "--top", "3")
    assert status == 0 and "4 GPUs @ 32768: SP=4 (Qwen3-8B)" in out
    status, out, _ = cli("--model", "8B-Base", "--gpu", "a100", "--gpus", "4", "--len", "65536", "--explain")
    assert status == 0 and ("the A100-80GB table for 2 GPUs says '-' for Qwen3-8B (the same shape as Qwen3-8B-Base) "
                            "from 61440 tokens on") in " ".join(out.split())
    status, out, _ = cli("tables", "--model", "8B-Base", "--gpu", "a100", "--gpus", "1")
    assert status == 0 and out.endswith("Qwen3-8B's cells stand for Qwen3-8B-Base, of the same shape\n")
    status, out, err = cli("tables", "--model", "8B-Base", "--gpu", "a100-80g", "--gpus", "1", "--json")
    assert status == 0 and {cell["model"] for cell in json.loads(out)} == {"Qwen3-8B"}
    assert err == "solve tables: note: Qwen3-8B's cells stand for Qwen3-8B-Base, of the same shape\n"


def test_top_in_human_output_shows_the_ranking(cli):
    status, out, _ = cli("--model", "8B", "--len", "32768", "--gpus", "8", "--no-estimate", "--gpu", "a100", "--top", "3")
    rows = [line for line in out.splitlines() if line.startswith("│")]
    assert status == 0 and "ranked plans" in out and len(rows) == 3
    assert "0.1389 (best)" in rows[0] and "inferred" in rows[0] and "0.1852 (1.33x #1)" in rows[1]


def test_pins_fix_part_of_the_plan(cli):
    status, answers = run_json(cli, "--model", "14B", "--len", "32768", "--gpus", "4", "--gpu", "h20", "--sp", "2")
    best = answers[0]["plans"][0]
    # The 32768 row says SP=4; with SP pinned to 2 the next row that SP=2 can include is 40960's.
    assert status == 0 and (best["gpus"], best["sp"], best["env"], best["offload"]) == (4, 2, True, True)
    assert best["evidence"] == "inferred"
    assert best["source"] == {"model": "Qwen3-14B", "gpus": 4, "max_model_len": 40960, "setting": "Env + Offload + SP=2"}
    status, answers = run_json(cli, "--model", "14B", "--len", "8192", "--gpus", "1", "--no-offload", "--gpu",
                               "a100-80g")
    assert status == 1 and answers[0]["plans"] == []
    assert answers[0]["reason"].endswith("within 1 GPU trains with --no-offload (without --no-offload: Env + Offload "
                                         f"on 1 GPU trains it, documented; {ONE_GPU})")


def test_weights_file_changes_the_cost(cli, tmp_path: Path):
    weights = tmp_path / "w.yaml"
    weights.write_text("offload: 0.5\nsp: 0.25\nenv: 0.0\n", encoding="utf-8")
    status, answers = run_json(cli, "--model", "4B", "--maximize", "len", "--gpus", "4", "--gpu", "a100-80g",
                               "--weights", str(weights))
    assert status == 0 and answers[0]["plans"][0]["cost"] == 0.25 * 1.5 * 1.75


def test_workers_do_not_change_the_answer(cli, solver_parameters: list[Any]):
    outputs = {cli("--model", "8B", "--maximize", "len", "--gpus", "6", "--top", "8", "--json", "--workers", w)[1]
               for w in ("1", "2", "8")}
    # each question's CP-SAT solver had the workers asked for
    assert len(outputs) == 1 and {parameters.num_workers for parameters in solver_parameters} == {1, 2, 8}


def test_exit_1_when_some_answer_has_no_plan(cli):
    status, answers = run_json(cli, "--model", "0.6B", "--len", "130000", "--gpus", "4")
    assert status == 1
    assert [a["status"] for a in answers] == ["infeasible", "optimal"]
    assert "the longest is 122880" in answers[0]["reason"] and answers[0]["plans"] == []
    assert answers[0]["nearest"]["max_model_len"] == 122880 and "nearest" not in answers[1]
    status, out, _ = cli("--model", "0.6B", "--len", "130000", "--gpus", "4")
    assert status == 1 and "no plan: 130000 tokens is beyond what the tables and the memory model's estimates" in out
    # Under each reason, where it is not explained, a line says what --explain adds; explained, none.
    hint = "--explain says why, rule by rule, and names plans beyond these limits where there are any\n"
    assert out.count(hint) == 1 and out.index(hint) > out.index("no plan: ")
    status, out, _ = cli("--model", "0.6B", "--len", "130000", "--gpus", "4", "--explain")
    # --explain names the nearest plan past the budget of 4: on 8 GPUs, by the memory model.
    assert status == 1 and hint not in out and (
        "more_gpus 130000 tokens need 8 GPUs, 4 more than the budget: Env + SP=8 on 8 GPUs at 130000 tokens (estimated"
        ) in " ".join(out.split())


def test_an_answer_the_time_limit_left_open_says_to_raise_the_limit(cli, monkeypatch: pytest.MonkeyPatch):
    # Undecided is not "no plan": the line under its reason names the remedy, a longer --time-limit, not --explain.
    monkeypatch.setattr(cp_model.CpSolver, "solve", lambda self, model, callback=None: cp_model.UNKNOWN)
    status, out, _ = cli("--model", "4B", "--gpu", "a100-80g", "--len", "8192", "--time-limit", "2")
    assert status == 1 and out.splitlines()[1:3] == [
        "no plan found within the time limit of 2 s",
        "a longer --time-limit lets the search find a plan or prove that none exists"]
    assert "--explain says why" not in out
    # With --emit (no view), the note on stderr says so too.
    status, out, err = cli("--model", "4B", "--gpu", "a100-80g", "--len", "8192", "--time-limit", "2", "--emit",
                           "trinity")
    assert (status, out, err) == (1, "", (
        "solve: A100-80GB: no plan found within the time limit of 2 s: a longer --time-limit lets the search find a "
        "plan or prove that none exists\n"))


def test_the_help_examples_run_as_their_words_say(cli, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("COLUMNS", "100")
    status, shown, _ = cli("--help")
    assert status == 0
    found = re.findall(r"^  (solve .*?)(?: {2,}(.*))?$\n(?: {6,}(.*)\n)?", shown, re.MULTILINE)
    examples = [(command, said or more) for command, said, more in found]
    assert examples == [
        ("solve --model 8B --gpu h100 --gpus 8 --len 64k", "the cheapest plan for 64k tokens on 8 H100s"),
        ("solve --model 8B --gpu h100 --gpus 8 --maximize len", "the longest context within 8 H100s"),
        ("solve --model 32B --gpu h100 --len 32k --minimize gpus", "will Qwen3-32B fit: the fewest H100s for it"),
        ("solve --from-config docs/examples/trinity.yaml --gpu h100 --check",
         "does this Trinity config train on H100s? (exit 1: no; solve examples writes it)"),
    ]
    titles, statuses = [], []
    monkeypatch.chdir(Path(__file__).resolve().parent.parent)  # the docs' example file, as solve examples writes it
    for command, _ in examples:
        status, out, err = cli(*shlex.split(command)[1:])
        statuses.append(status)
        assert err == ""
        titles.append(out.splitlines()[0])
    assert statuses == [0, 0, 0, 1]  # the config's own settings do not train: --check exits 1, as its words say
    assert titles == ["H100-80GB · Qwen3-8B · cheapest plan for 65536 tokens within 8 GPUs: optimal",
                      "H100-80GB · Qwen3-8B · longest context within 8 GPUs: optimal",
                      "H100-80GB · Qwen3-32B · fewest GPUs for 32768 tokens (any count up to 64): optimal",
                      "H100-80GB · Qwen3-8B · cheapest plan for 32768 tokens on exactly 6 GPUs: optimal"]
    monkeypatch.setenv("COLUMNS", "60")  # the paragraphs wrap to a narrow terminal; each example stays on its line
    narrow = cli("--help")[1]
    assert all(f"\n  {command}" in narrow for command, _ in examples)
    assert "Other commands: solve tables, solve map, solve cluster, solve memory" in " ".join(narrow.split())


@pytest.mark.parametrize("command", [[], ["memory"], ["map"]])
def test_each_gpu_option_says_which_a100_its_short_form_names(cli, monkeypatch: pytest.MonkeyPatch, command: list[str]):
    # a100 is the 80 GB card the tables measured, as a cluster pool's "gpu: A100" note says: 40 GB A100s are a100-40g.
    monkeypatch.setenv("COLUMNS", "300")
    status, out, _ = cli(*command, "--help")
    assert status == 0 and "(a100, a100-40g, h20, h100, ...; an unknown name lists all)" in " ".join(out.split())
    assert ("--gpu G: the GPU type (a100: the 80 GB A100 the tables measured; a100-40g: the 40 GB one; h20, h100, ...; "
            "an unknown name lists all)") in option_reference()
    catalog = solver.load_catalog()
    assert (catalog.gpu("a100").name, catalog.gpu("a100-40g").name) == ("A100-80GB", "A100-40GB")


@pytest.mark.parametrize("command", ["map", "memory", "cluster"])
def test_help_before_a_command_is_the_commands_help(cli, command: str):
    # solve -h map reads as "help on map": the command's help, as solve map -h gives it, not solve's own.
    for flag in ("-h", "--help"):
        assert cli(flag, command) == cli(command, flag)
        assert cli(flag, command)[1].startswith(f"usage: solve {command} ")
    assert cli("-h")[1].startswith("usage: solve [-h]")


def test_kept_lines_formatter_fills_paragraphs_and_keeps_indented_lines(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("COLUMNS", "22")  # argparse fills to 20 columns
    parser = argparse.ArgumentParser(prog="p", usage="p", formatter_class=KeptLinesFormatter, epilog=(
        "one two\nthree four five six\n\nseven eight\n  kept   as   written, however long\nnine"))
    assert parser.format_help().split("\n\n", 2)[2] == (
        "one two three four\nfive six\n\nseven eight\n  kept   as   written, however long\nnine\n")


def test_a_flag_pairs_help_is_as_written(cli, monkeypatch: pytest.MonkeyPatch):
    # Python 3.10 and 3.11's BooleanOptionalAction add "(default: False)", which the help already says.
    monkeypatch.setenv("COLUMNS", "200")
    status, out, _ = cli("memory", "--help")
    assert status == 0
    assert ("  --env, --no-env       with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, or without (the "
            "default)\n") in out
    assert "default: False" not in out


@pytest.mark.parametrize("build", [build_parser, build_tables_parser, build_map_parser, build_cluster_parser,
                                   build_memory_parser, build_calibrate_parser, build_examples_parser])
def test_every_option_with_a_default_says_it_in_its_help(build):
    # An option left out takes its default: --help says what that is (--top's 1; of --estimate and --no-estimate,
    # one says what neither does).
    said: dict[str, bool] = {}
    for action in build()._actions:
        if action.default not in (None, False, argparse.SUPPRESS):
            said[action.dest] = said.get(action.dest, False) or "default" in (action.help or "")
    assert [dest for dest, says in said.items() if not says] == []


@pytest.mark.parametrize("argv", [
    ["--model", "deepseek-7b", "--len", "8k"],
    ["--model", "qwen3-8b-instruct", "--len", "8k", "--gpu", "a100"],
    ["memory", "--model", "deepseek-7b", "--gpu", "a100", "--gpus", "1", "--len", "8k"],
    ["map", "--model", "8B,deepseek-7b"],
])
def test_an_unknown_model_says_how_to_give_your_own(cli, argv: list[str]):
    status, out, err = cli(*argv)
    assert (status, out) == (2, "")
    assert "error: unknown model" in err
    assert err.endswith("short forms such as 4B for Qwen3-4B too; or, for a model of your own, its Hugging Face "
                        "config.json: --model-config PATH\n")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "solve: error: which model? give --model M (e.g. 4B), --model-config PATH or --from-config FILE"),
        (["--model", "5B", "--len", "8192"], ("solve: error: unknown model '5B'; accepted: "
                                              "Qwen3-0.6B/1.7B/8B/14B(-Base), ")),
        (["--model", "4B", "--len", "8192", "--gpu", "a30"],
         ("solve: error: unknown GPU 'a30'; accepted: A100-40GB/80GB, A800-80GB, H20-96GB, H100-80GB, H100-NVL-94GB, "
          "H800-80GB, H200-141GB, GH200-96GB/144GB, L40S-48GB, L40-48GB, L20-48GB, A40-48GB, RTX-A6000-48GB, "
          "RTX-6000-Ada-48GB, A10-24GB, L4-24GB, RTX-4090-24GB, RTX-5090-32GB, B200, B300, MI300X, MI325X; short forms "
          "such as l4 for L4-24GB too")),
        (["--model", "4B"], ("solve: error: a cheapest plan needs a length: --len L (tokens, e.g. 32768); or, for the "
                             "longest context, --maximize len --gpus N")),
        (["--model", "4B", "--maximize", "len"], ("solve: error: --maximize len needs a GPU budget: --gpus N, or "
                                                  "--total-gpus T with --rollout-gpus R")),
        (["--model", "4B", "--maximize", "len", "--len", "64k"],  # both fixes at once, not one a run
         ("solve: error: --maximize len chooses the length: drop --len, and give the GPU budget to find it within: "
          "--gpus N, or --total-gpus T with --rollout-gpus R")),
        (["--model", "4B", "--maximize", "len", "--len", "64k", "--gpus", "4"],
         "solve: error: --maximize len chooses the length: drop --len"),
        (["--model", "4B", "--gpus", "0", "--len", "8192"],
         "solve: error: argument --gpus: must be a whole number from 1 to 65536, got 0"),
        (["--model", "4B", "--len", "-5"],
         "solve: error: argument --len: must be a whole number of tokens from 1 to 16777216, got -5"),
        (["--model", "4B", "--len", "lots"], ("solve: error: argument --len: expected a whole number, got 'lots' "
                                              "(tokens, or thousands of 1024: 32768 or 32k)")),
        (["--model", "4B", "--maximize", "len", "--minimize", "gpus", "--gpus", "4"],
         "solve: error: --maximize and --minimize exclude each other: give one of them"),
        (["--model", "4B", "--maximize", "width", "--gpus", "4"],
         ("solve: error: argument --maximize: invalid choice: 'width'")),
        (["--model", "4B", "--len", "8192", "--sp", "3"], ("solve: error: --sp 3 is not allowed for Qwen3-4B: SP=3 "
                                                           "does not divide its 32 attention heads (the degrees that "
                                                           "Qwen3-4B's heads allow and that keep an SP group in a node "
                                                           "of 8 GPUs: 1, 2, 4, 8)")),
        (["--model", "4B", "--len", "8192", "--gpus", "6", "--exact", "--sp", "4"],
         ("solve: error: --sp 4 is not allowed: SP=4 does not divide 6 GPUs (the degrees that divide the 6 trainer "
          "GPUs, that Qwen3-4B's heads allow and that keep an SP group in a node of 8 GPUs: 1, 2)")),
        (["--model", "8B", "--gpu", "h100", "--len", "64k", "--gpus", "12", "--exact", "--node-gpus", "6", "--sp", "4"],
         ("solve: error: --sp 4 is not allowed: 12 GPUs span nodes of 6 (--node-gpus), and SP=4 does not divide a "
          "node: rft-solver's rule, not Trinity's or verl's, which run it with its all-to-all crossing nodes; the "
          "tables measured SP within one node (the degrees that divide the 12 trainer GPUs, that Qwen3-8B's heads "
          "allow and that keep an SP group in a node of 6 GPUs: 1, 2)")),
        (["--model", "32B", "--gpu", "a100", "--len", "32k", "--gpus", "48", "--exact", "--sp", "32"],
         ("solve: error: --sp 32 is not allowed: SP=32 does not divide 48 GPUs (the degrees that divide the 48 "
          "trainer GPUs, that Qwen3-32B's heads allow and that keep an SP group in a node of 8 GPUs: 1, 2, 4, 8)")),
        (["--model", "8B", "--gpu", "a100", "--len", "32k", "--host-ram", "\u0661\u0662\u0668"],
         ("solve: error: argument --host-ram: expected 512, 512GB, 512GiB, 2TB, 503Gi (free -h), 515870MiB (free -m) "
          "or 528280000kB (/proc/meminfo), got '\u0661\u0662\u0668'")),
        (["--model", "8B", "--gpu", "a100", "--len", "32k", "--time-limit", "\u0665"],
         ("solve: error: argument --time-limit: expected a number of seconds (10 or 10s), got '\u0665'")),
        # float() reads 1_0 as 10: a number has no _.
        (["--model", "8B", "--gpu", "a100", "--len", "32k", "--time-limit", "1_0"],
         "solve: error: argument --time-limit: expected a number of seconds (10 or 10s), got '1_0'"),
        (["--model", "8B", "--gpu", "a100", "--len", "32k", "--margin", "0_1"],
         ("solve: error: argument --margin: expected a fraction from 0 to below 1 (0.03) or a percentage (3%), got "
          "'0_1'")),
        (["--model", "4B", "--len", "8192", "--exact"],
         "solve: error: --exact needs --gpus N, or --total-gpus T with --rollout-gpus R"),
        (["--model", "8B", "--len", "8192", "--gpus", "8", "--sp", "8", "--node-gpus", "4"],
         ("solve: error: --sp 8 is not allowed: SP=8 is more GPUs than nodes of 4 (--node-gpus) hold, and an SP "
          "group must fit in one: rft-solver's rule, not Trinity's or verl's, which run it with its all-to-all "
          "crossing nodes; the tables measured SP within one node (the degrees that Qwen3-8B's heads allow and that "
          "keep an SP group in a node of 4 "
          "GPUs: 1, 2, 4)")),
        # One SP group would take more GPUs than the budget has: refused, not answered "nothing trains with --sp 8".
        (["--model", "4B", "--len", "32k", "--sp", "8", "--gpus", "4"],
         ("solve: error: --sp 8 is not allowed: SP=8 needs at least 8 trainer GPUs, more than the budget of 4 (the "
          "degrees that fit the budget of 4 GPUs, that Qwen3-4B's heads allow and that keep an SP group in a node of "
          "8 GPUs: 1, 2, 4)")),
        (["--model", "4B", "--len", "32k", "--sp", "4", "--gpus", "3"],
         ("solve: error: --sp 4 is not allowed: SP=4 needs at least 4 trainer GPUs, more than the budget of 3 (the "
          "degrees that fit the budget of 3 GPUs, that Qwen3-4B's heads allow and that keep an SP group in a node of "
          "8 GPUs: 1, 2)")),
        (["--model", "4B", "--len", "8192", "--time-limit", "0"],
         ("solve: error: argument --time-limit: must be a number above 0 and at most 1000000000, got 0")),
        (["--model", "4B", "--len", "8192", "--time-limit", "inf"],
         ("solve: error: argument --time-limit: must be a number above 0 and at most 1000000000, got inf")),
        (["--model", "4B", "--len", "8192", "--time-limit", "1e10"],
         ("solve: error: argument --time-limit: must be a number above 0 and at most 1000000000, got 1e10")),
        (["--model", "4B", "--len", "8192", "--top", "500"],
         "solve: error: argument --top: must be a whole number from 1 to 100, got 500"),
        (["--model", "4B", "--len", "8192", "--workers", "1025"],
         "solve: error: argument --workers: must be a whole number from 1 to 1024, got 1025"),
        (["--model", "4B", "--len", "8192", "--node-gpus", "65536"],
         ("solve: error: argument --node-gpus: must be a whole number from 1 to 16, got 65536 (a node is one host, "
          "Trinity's cluster.gpu_per_node, and the largest hosts have 16 GPUs: give more GPUs as more nodes)")),
        # Negative numbers in exponent form or with a unit are values to refuse, not unknown options; named as typed.
        (["--model", "4B", "--len", "8192", "--margin", "-1e-9"],
         ("solve: error: argument --margin: must be a fraction from 0 to below 1, got -1e-9")),
        (["--model", "4B", "--len", "8192", "--margin", "-.5"],
         "solve: error: argument --margin: must be a fraction from 0 to below 1, got -.5"),
        (["--model", "4B", "--len", "8192", "--margin", "nan"],
         "solve: error: argument --margin: must be a fraction from 0 to below 1, got nan"),
        (["--model", "4B", "--len", "8192", "--host-ram", "-5GB"],
         "solve: error: argument --host-ram: must be above 0 and at most 49152 GB, got -5GB"),
        (["--model", "4B", "--len", "8192", "--host-ram", "-1TB"],  # as typed, not in GB (-1024)
         "solve: error: argument --host-ram: must be above 0 and at most 49152 GB, got -1TB"),
        (["--model", "4B", "--len", "8192", "--host-ram", "49TB"],
         "solve: error: argument --host-ram: must be above 0 and at most 49152 GB, got 49TB"),
        (["--model", "4B", "--len", "8192", "--weights", "/nonexistent/w.yaml"],
         ("solve: error: --weights /nonexistent/w.yaml: cannot read: No such file or directory")),
        # A file with no size (a device, a pipe) is read only up to the limit, not until memory runs out.
        (["--model", "4B", "--len", "8192", "--weights", "/dev/zero"],
         ("solve: error: --weights /dev/zero: too large (the limit is 16 MB)")),
        (["--from-config", "/dev/zero"], "solve: error: --from-config /dev/zero: too large (the limit is 256 KB)"),
        # a length written with a thousands separator: the forms it takes, by example
        (["--model", "4B", "--len", "32,768"], ("solve: error: argument --len: expected a whole number, got '32,768' "
                                                "(tokens, or thousands of 1024: 32768 or 32k; write 32,768 as 32768)")),
        (["--model", "4B", "--len", "1.5k"], ("solve: error: argument --len: expected a whole number, got '1.5k' "
                                              "(tokens, or thousands of 1024: 32768 or 32k)")),
        (["--model", "4B", "--len", "8192", "--gpu", "a100", "--out", ""],
         ("solve: error: argument --out: expected a file name, got ''")),
        (["--model", "4B", "--len", "8192", "--memory-model", ""],
         "solve: error: argument --memory-model: expected a file name, got ''"),
        (["--model", "4B", "--len", "8192", "--gpu", "a100", "--out", "/dev/stdout"],
         ("solve: error: argument --out: expected a file name, got /dev/stdout (what it would write goes to standard "
          "output without the option)")),
        (["--model", "4B", "--len", "8192", "--gpu", "a100", "--out", "/proc/self/fd/2"],
         ("solve: error: argument --out: expected a file name, got /proc/self/fd/2 (what it would write goes to "
          "standard output without the option)")),
        # A blank name is no path; a stream's name is one however it is written (normalised: /dev//stdout).
        (["--model", "4B", "--len", "8192", "--gpu", "a100", "--out", " "],
         "solve: error: argument --out: expected a file name, got ' '"),
        (["--model", "4B", "--len", "8192", "--gpu", "a100", "--out", "/dev/stderr"],
         ("solve: error: argument --out: expected a file name, got /dev/stderr (what it would write goes to standard "
          "output without the option)")),
        (["--model", "4B", "--len", "8192", "--gpu", "a100", "--out", "/dev//stdout"],
         ("solve: error: argument --out: expected a file name, got /dev//stdout (what it would write goes to standard "
          "output without the option)")),
        # --gpu-memory takes ASCII digits (int() reads every script's), and each form's bounds are in its own unit.
        (["--model", "4B", "--gpu", "x", "--gpu-memory", "\u0668\u0660", "--len", "8k"],
         ("solve: error: argument --gpu-memory: expected 64, 64G or 64GB (as sold, whole), 64GiB or 79.19GiB (torch's "
          "total capacity), or 65536MiB (nvidia-smi's total), got '\u0668\u0660'")),
        (["--model", "4B", "--gpu", "x", "--gpu-memory", "4194305MiB", "--len", "8k"],
         "solve: error: argument --gpu-memory: must be from 8192MiB to 4194304MiB, got '4194305MiB'"),
        (["--model", "4B", "--gpu", "x", "--gpu-memory", "7GiB", "--len", "8k"],
         "solve: error: argument --gpu-memory: must be from 8GiB to 4096GiB, got '7GiB'"),
        (["--model", "4B", "--model-config", "config.json", "--len", "8192"],
         ("solve: error: --model and --model-config both name the model: give one")),
        (["--model", "4B", "--len", "8192", "--gpus", "4", "--exact", "--minimize", "gpus"],
         ("solve: error: --minimize gpus chooses the GPU count: drop --exact")),
        (["--model", "4B", "--len", "8192", "--gpus", "4", "--exact", "--minimize", "gpu-hours"],
         ("solve: error: --minimize gpu-hours chooses the GPU count: drop --exact")),
        (["--model", "4B", "--minimize", "gpu-hours"], "solve: error: --minimize gpu-hours needs a length: --len L"),
        (["--model", "4B", "--len", "8k", "--minimize", "gpu-time"],
         ("solve: error: argument --minimize: invalid choice: 'gpu-time' (choose from 'gpus', 'gpu-hours'); did you "
          "mean 'gpu-hours'?")),
        (["--model", "4B", "--len", "8k", "--minimize", "gpu_hours"],
         ("solve: error: argument --minimize: invalid choice: 'gpu_hours' (choose from 'gpus', 'gpu-hours'); did you "
          "mean 'gpu-hours'?")),
        (["--model", "4B", "--len", "8192", "--emit", "trinity", "--top", "2"],
         "solve: error: --emit trinity prints the best plan's YAML alone: drop --top and --explain"),
        (["--model", "4B", "--len", "8192", "--emit", "trinity", "--explain"],
         "solve: error: --emit trinity prints the best plan's YAML alone: drop --top and --explain"),
        (["--model", "Meta/Qwen3-5B", "--len", "8192"], "solve: error: unknown model 'Meta/Qwen3-5B'; accepted:"),
        (["--gpu", "a1000", "--model", "4B", "--len", "8k"],
         "solve: error: unknown GPU 'a1000' (did you mean A100-80GB?); accepted: A100-40GB/80GB, "),
        (["--model", "4B", "--len", "\u0668k"], ("solve: error: argument --len: expected a whole number, got '\u0668k' "
                                                 "(tokens, or thousands of 1024: 32768 or 32k)")),
        (["--model", "4B", "--len", "-1k"],
         "solve: error: argument --len: must be a whole number of tokens from 1 to 16777216, got -1k"),
        (["--model", "4B", "--len", "0"],
         "solve: error: argument --len: must be a whole number of tokens from 1 to 16777216, got 0"),
        (["--model", "4B", "--len", "8k", "--host-ram", "inf"],
         ("solve: error: argument --host-ram: must be above 0 and at most 49152 GB, got inf")),
        (["--model", "4B", "--len", "8k", "--host-ram", "nan"],
         ("solve: error: argument --host-ram: must be above 0 and at most 49152 GB, got nan")),
        # An option given twice is refused, not silently the last (it would answer for the H20 alone).
        (["--model", "8B", "--len", "32k", "--gpu", "a100", "--gpu", "h20"],
         ("solve: error: argument --gpu: given twice: give it once, both lists in one: --gpu a100,h20")),
        # review93a: the one option quoted for a shell where a name has a space, so that it may be pasted
        (["--model", "8B", "--len", "32k", "--gpu", "A100 SXM", "--gpu", "h20"],
         ("solve: error: argument --gpu: given twice: give it once, both lists in one: --gpu 'A100 SXM,h20'")),
        (["--model", "8B", "--len", "32k", "--node-gpus", "8", "--node-gpus", "4"],
         ("solve: error: argument --node-gpus: given twice: give it once")),
        (["--model", "4B", "--len", "8k", "--env", "--env"],
         ("solve: error: argument --env/--no-env: given twice: give it once")),
        (["--model", "4B", "--len", "8k", "--offload", "--offload"],
         ("solve: error: argument --offload/--no-offload: given twice: give it once")),
        # Both halves of a pair contradict each other: that, not a repeat.
        (["--model", "4B", "--len", "8k", "--no-env", "--env"],
         ("solve: error: --no-env and --env contradict each other: give one of them")),
        (["--model", "4B", "--len", "8k", "--offload", "--no-offload"],
         ("solve: error: --offload and --no-offload contradict each other: give one of them")),
    ],
)
def test_bad_input_exits_2_with_one_line(cli, argv: list[str], message: str):
    status, out, err = cli(*argv)
    assert status == 2 and out == ""
    *usage, error = err.splitlines()
    assert all(line.startswith(("usage:", " ")) for line in usage)
    assert error.startswith(message)
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        # A degree the heads refuse names the degrees a trainer can take: no larger than a node of 8 (not 16, 32, 64,
        # which --sp 16 would then be refused for), nor than the budget, and for an exact count those that divide it.
        (["--model", "32B", "--gpu", "h100", "--len", "64k", "--gpus", "32", "--sp", "6"],
         ("--sp 6 is not allowed for Qwen3-32B: SP=6 does not divide its 64 attention heads (the degrees that "
          "Qwen3-32B's heads allow and that keep an SP group in a node of 8 GPUs: 1, 2, 4, 8)")),
        # A budget of exactly a node's GPUs: the node is named, as where the budget is larger.
        (["--model", "32B", "--gpu", "h100", "--len", "64k", "--gpus", "8", "--sp", "6"],
         ("--sp 6 is not allowed for Qwen3-32B: SP=6 does not divide its 64 attention heads (the degrees that "
          "Qwen3-32B's heads allow and that keep an SP group in a node of 8 GPUs: 1, 2, 4, 8)")),
        (["--model", "4B", "--len", "8192", "--gpus", "2", "--sp", "3"],
         ("--sp 3 is not allowed for Qwen3-4B: SP=3 does not divide its 32 attention heads (the degrees that fit the "
          "budget of 2 GPUs, that Qwen3-4B's heads allow and that keep an SP group in a node of 8 GPUs: 1, 2)")),
        (["--model", "4B", "--len", "8192", "--gpus", "6", "--exact", "--sp", "3"],
         ("--sp 3 is not allowed for Qwen3-4B: SP=3 does not divide its 32 attention heads (the degrees that divide "
          "the 6 trainer GPUs, that Qwen3-4B's heads allow and that keep an SP group in a node of 8 GPUs: 1, 2)")),
        (["--model", "4B", "--len", "8192", "--node-gpus", "16", "--sp", "3"],
         ("--sp 3 is not allowed for Qwen3-4B: SP=3 does not divide its 32 attention heads (the degrees that "
          "Qwen3-4B's heads allow and that keep an SP group in a node of 16 GPUs: 1, 2, 4, 8, 16)")),
        # One that spans nodes names those that do not, as solve memory does.
        (["--model", "32B", "--gpu", "h100", "--len", "64k", "--gpus", "32", "--sp", "16"],
         ("--sp 16 is not allowed: SP=16 is more GPUs than nodes of 8 (--node-gpus) hold, and an SP group must fit "
          "in one: rft-solver's rule, not Trinity's or verl's, which run it with its all-to-all crossing nodes; the "
          "tables measured SP within one node (the degrees that Qwen3-32B's heads allow and that keep an SP group in "
          "a node of 8 GPUs: "
          "1, 2, 4, 8)")),
    ],
)
def test_a_refused_sp_names_the_degrees_that_fit(cli, argv: list[str], message: str):
    assert cli(*argv) == (2, "", f"solve: error: {message}\n")


WEIGHT_FIELDS = "offload, sp, env, offload_moe_scaling, sp_pcie_factor, critic"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("offload: -1\nsp: 0.1\nenv: 0.01\n", "offload: must be at least 0, got -1"),
        ("offload: 1.0\nsp: 0.1\nenv: 0.01\nspeed: 2\n",
         f"unknown field 'speed' (fields: {WEIGHT_FIELDS})"),
        ("offload: 1.0\nsp: 0.1\nenvironment: 0.01\n",  # env left out takes the shipped value: one problem
         f"unknown field 'environment' (fields: {WEIGHT_FIELDS})\n"),
        ("offload: 1.0\nsp: .nan\nenv: 0.01\n", "sp: must be a finite number"),
        ("offload: 1.0e+300\nsp: 0.1\nenv: 0.01\n", "offload: must be at most 1000, got 1e+300"),
        ("offload: [1.0\n", "malformed YAML"),
        ("", "expected a mapping at the top level"),
    ],
)
def test_a_bad_weights_file_exits_2_naming_the_file(cli, tmp_path: Path, text: str, message: str):
    weights = tmp_path / "weights.yaml"
    weights.write_text(text, encoding="utf-8")
    status, out, err = cli("--model", "4B", "--len", "8192", "--weights", str(weights))
    assert status == 2 and out == ""
    assert err.splitlines()[-1].startswith(f"solve: error: --weights {weights}: ") and message in err


def test_installed_solve_runs_the_main_job_from_another_directory(tmp_path: Path, solve_script: Path):
    result = subprocess.run([str(solve_script), "--maximize", "len", "--gpus", "6", "--model", "4B", "--json"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert (result.returncode, result.stderr) == (0, "")
    assert [a["plans"][0]["max_model_len"] for a in json.loads(result.stdout)] == [102400, 133120]


COMMANDS_THAT_DO_NOT_SOLVE = [["tables", "--json"], ["tables", "--gpu", "nope"], ["--help"], ["tables", "--help"],
                              ["tables", "--check"],
                              ["memory", "--model", "4B", "--gpu", "a100", "--gpus", "4", "--len", "8192"]]

# Each command runs by `main` in a child forked from an interpreter that has done no more than import solver.cli and
# the command modules (`COMMAND_MODULES`, and json, importlib, os, traceback): modules a new interpreter per command
# would run it with, none of which loads ortools, without starting one each time. Where there is no fork, each
# command gets an interpreter of its own.
ORTOOLS_AFTER = """\
import importlib, json, os, sys, traceback
from solver.cli import main

for module in sys.argv[2:]:
    importlib.import_module(module)


def ortools_after(argv):
    try:
        main(argv)
    except SystemExit:
        pass
    return "ORTOOLS" if any(m.startswith("ortools") for m in sys.modules) else "CLEAN"


found = {}
for argv in json.loads(sys.argv[1]):
    if not hasattr(os, "fork"):
        found[" ".join(argv)] = ortools_after(argv)
        continue
    reader, writer = os.pipe()
    if os.fork() == 0:
        try:
            verdict = ortools_after(argv)
        except BaseException:
            traceback.print_exc()
            verdict = "ERROR"
        os.write(writer, verdict.encode())
        os._exit(0)
    os.close(writer)
    found[" ".join(argv)] = os.read(reader, 16).decode()
    os.close(reader)
    os.wait()
sys.stderr.write("\\n" + json.dumps(found))
"""


@pytest.fixture(scope="module")
def ortools_after_commands_that_do_not_solve() -> dict[str, str]:
    """'ORTOOLS' or 'CLEAN' for each command of COMMANDS_THAT_DO_NOT_SOLVE (by its words): whether ortools was
    imported once `main` had run it in a new interpreter (`ORTOOLS_AFTER`)."""
    groups = [COMMANDS_THAT_DO_NOT_SOLVE] if hasattr(os, "fork") else [[argv] for argv in COMMANDS_THAT_DO_NOT_SOLVE]
    found: dict[str, str] = {}
    for group in groups:
        result = subprocess.run([sys.executable, "-c", ORTOOLS_AFTER, json.dumps(group), *COMMAND_MODULES],
                                capture_output=True,
                                text=True, timeout=60, check=False)
        assert result.returncode == 0, result.stderr
        found.update(json.loads(result.stderr.splitlines()[-1]))
    return found


@pytest.mark.parametrize("argv", COMMANDS_THAT_DO_NOT_SOLVE)
def test_commands_that_do_not_solve_do_not_import_ortools(argv: list[str],
                                                          ortools_after_commands_that_do_not_solve: dict[str, str]):
    assert ortools_after_commands_that_do_not_solve[" ".join(argv)] == "CLEAN"


def test_a_tabled_plan_the_memory_model_doubts_says_the_table_decides(cli):
    flags = ["--model", "8B", "--gpu", "a100-80g", "--gpus", "4", "--maximize", "len"]
    _, answers = run_json(cli, *flags)
    best = answers[0]["plans"][0]
    assert best["evidence"] == "documented" and best["headroom_gb"] < 0  # the model is cautious for this cell
    status, out, _ = cli(*flags)
    assert status == 0 and (f"{best['memory_gb']:.1f} GiB per GPU predicted, {-best['headroom_gb']:.1f} GiB over what "
                            "it may take (memory model, which errs on the safe side; the table, a measurement, says it "
                            "trains)") in " ".join(out.split())  # an Offload plan: its optimizer step runs on the CPU


def test_a_hugging_face_id_names_its_model(cli):
    _, by_id = run_json(cli, "--model", "Qwen/Qwen3-8B", "--len", "32k", "--gpu", "a100-80g")
    _, by_name = run_json(cli, "--model", "8B", "--len", "32k", "--gpu", "a100-80g")
    assert by_id == by_name and by_id[0]["model"] == "Qwen3-8B"


def test_an_estimated_best_plan_comes_with_the_tables_best(cli):
    # Within 8 A100s, Qwen3-8B at 65536: Env + SP=4 on 8 GPUs (estimated) needs no Offload, where the tables'
    # best, Env + Offload + SP=4 on 8 GPUs (inferred from the 4-GPU table's cell), does: the answer offers
    # that plan beside it.
    status, out, _ = cli("--model", "8B", "--gpu", "a100", "--len", "65536", "--gpus", "8", "--json")
    [answer] = json.loads(out)
    best = answer["plans"][0]
    assert (status, best["gpus"], best["env"], best["offload"], best["sp"], best["evidence"]) == (
        0, 8, True, False, 4, "estimated")
    measured = answer["measured"]
    assert (measured["gpus"], measured["offload"], measured["sp"], measured["evidence"]) == (8, True, 4, "inferred")
    assert measured["source"] == {"model": "Qwen3-8B", "gpus": 4, "max_model_len": 71680, "setting": "Env + Offload + SP=4"}
    _, out, _ = cli("--model", "8B", "--gpu", "a100", "--len", "65536", "--gpus", "8")
    assert ("tables' best   Env + Offload + SP=4 on 8 GPUs at 65536 (inferred; 2.00x the relative step time), if you "
            "prefer") in out
    for flags in (["--gpus", "6"], ["--gpus", "8", "--no-estimate"], ["--gpus", "8", "--estimate"]):
        [answer] = json.loads(cli("--model", "8B", "--gpu", "a100", "--len", "65536", *flags, "--json")[1])
        assert "measured" not in answer  # the best is documented, or only one kind of evidence was asked for
    [answer] = json.loads(cli("--model", "8B", "--gpu", "h100", "--len", "32768", "--gpus", "8", "--json")[1])
    assert "measured" not in answer  # no tables for the H100


def test_the_ranking_counts_one_gpu_in_the_singular(cli):
    status, out, _ = cli("--model", "0.6B", "--gpu", "a100", "--len", "4096", "--gpus", "2", "--top", "2")
    assert status == 0 and "1 GPU @ 4096: vanilla" in out and "1 GPUs @" not in out


def test_piped_output_has_no_trailing_spaces(cli):
    for argv in (["--maximize", "len", "--gpus", "6", "--model", "4B", "--top", "3"], ["tables", "--gpu", "h20"],
                 ["map", "--gpu", "a100"], ["memory", "--model", "8B", "--gpu", "h100", "--gpus", "8", "--len", "64k", "--sp", "8", "--env"]):
        status, out, _ = cli(*argv)
        assert status == 0 and out.count("\n") > 5
        assert [line for line in out.split("\n") if line != line.rstrip()] == []


def test_piped_output_takes_a_wider_terminals_columns(cli, monkeypatch: pytest.MonkeyPatch):
    # Piped, a line wraps at 160 columns, or at COLUMNS where that is more.
    asked = ("--model", "Qwen2.5-7B", "--gpus", "8", "--len", "131072", "--gpu", "h20", "--token-budget", "auto",
             "--top", "3")
    line = ("2 plans of the 3 asked for: each other plan that trains is no cheaper, on no fewer GPUs and no better "
            "vouched for than a plan above; estimates keep Env on (--no-env estimates without it)")
    monkeypatch.delenv("COLUMNS", raising=False)
    status, out, _ = cli(*asked)
    assert status == 0 and line not in out.splitlines() and line in " ".join(out.split())
    monkeypatch.setenv("COLUMNS", "250")
    status, out, _ = cli(*asked)
    assert status == 0 and line in out.splitlines()


def test_whole_writes_send_what_a_pipe_did_not_take_at_once(monkeypatch: pytest.MonkeyPatch):
    # A pipe may take part of a write: the rest follows, not the whole again.
    read_end, write_end = os.pipe()
    write = os.write
    monkeypatch.setattr(solver.cli.output.os, "write", lambda descriptor, data: write(descriptor, bytes(data[:5])))
    try:
        assert solver.cli.output._WholeWrites(write_end).write(b"a line of 24 characters\n") == 24
    finally:
        os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        assert pipe.read() == b"a line of 24 characters\n"


@pytest.mark.skipif(os.name == "nt", reason="a pseudo-terminal")
def test_a_terminal_gets_the_shaded_tables(solve_script: Path):
    # Stdout on a terminal is left as it is (whole writes are for pipes and files): rich sees a terminal, and shades.
    leader, follower = os.openpty()
    process = subprocess.Popen([str(solve_script), "tables", "--gpu", "a100-80g", "--gpus", "1", "--model", "4B"],
                               stdout=follower, stderr=subprocess.PIPE,
                               env={**os.environ, "TERM": "xterm-256color", "COLUMNS": "120"})
    os.close(follower)
    shown = read_until_closed(leader)
    _, err = process.communicate(timeout=60)
    assert (process.returncode, err) == (0, b"") and b"\x1b[" in shown and b"Qwen3-4B" in shown


def test_a_reader_that_has_gone_ends_the_command_quietly(solve_script: Path):
    # `solve map | head -1` where head has gone before the maps are written (their 8 KB would otherwise fit in
    # the pipe whole, and the command end with 0): no traceback, SIGPIPE's status.
    read_end, write_end = os.pipe()
    os.close(read_end)
    process = subprocess.Popen([str(solve_script), "map"], stdout=write_end,
                               stderr=subprocess.PIPE)
    os.close(write_end)
    _, err = process.communicate(timeout=120)
    assert (process.returncode, err) == (141, b"")


def test_fewer_plans_than_asked_for_are_said_to_be_all_there_are(cli):
    status, out, _ = cli("--model", "14B", "--gpu", "a100", "--len", "24576", "--gpus", "1", "--top", "3")
    assert status == 0 and out.endswith(
        "1 plan of the 3 asked for: each other plan that trains is no cheaper, on no fewer GPUs and no better vouched "
        "for than a plan above\n\n")  # a documented plan: that estimates keep Env on has nothing to do with it
    # Where a plan is an estimate, that estimates keep Env on; not with Env pinned.
    asked = ("--model", "Qwen2.5-7B", "--gpus", "8", "--len", "131072", "--gpu", "h20", "--token-budget", "auto",
             "--top", "3")
    status, out, _ = cli(*asked)
    assert status == 0 and " ".join(out.split()).endswith(
        "2 plans of the 3 asked for: each other plan that trains is no cheaper, on no fewer GPUs and no better vouched "
        "for than a plan above; estimates keep Env on (--no-env estimates without it)")
    status, out, _ = cli(*asked, "--env")
    assert status == 0 and out.endswith("no better vouched for than a plan above\n\n")
    # One estimate among documented plans is enough for it to be said.
    status, out, _ = cli("--model", "14B", "--gpu", "a100", "--len", "32768", "--gpus", "8", "--top", "50")
    assert status == 0 and " ".join(out.split()).endswith(
        "5 plans of the 50 asked for: each other plan that trains is no cheaper, on no fewer GPUs and no better "
        "vouched for than a plan above; estimates keep Env on (--no-env estimates without it)")
    # An estimate ranked below the first plan counts too (Qwen3-8B within 4 A100s: a documented plan, then one).
    status, out, _ = cli("--model", "8B", "--gpu", "a100", "--len", "8192", "--gpus", "4", "--top", "6")
    assert status == 0 and " ".join(out.split()).endswith(
        "5 plans of the 6 asked for: each other plan that trains is no cheaper, on no fewer GPUs and no better "
        "vouched for than a plan above; estimates keep Env on (--no-env estimates without it)")
    # Said in the ways the query leaves open: the length too when it is maximised, not the GPUs on an exact count.
    status, out, _ = cli("--model", "14B", "--gpu", "a100", "--maximize", "len", "--gpus", "1", "--top", "9")
    assert status == 0 and "each other plan that trains is no longer, no cheaper, on no fewer GPUs and no better" in out
    status, out, _ = cli("--model", "14B", "--gpu", "a100", "--len", "24576", "--gpus", "1", "--exact", "--top", "3")
    assert status == 0 and "each other plan that trains is no cheaper and no better vouched for than a plan above\n" \
        in out
    status, out, _ = cli("--model", "14B", "--gpu", "a100", "--len", "24576", "--gpus", "1")
    assert status == 0 and "asked for" not in out


def test_top_with_one_plan_ranks_it_in_a_table_of_one_row(cli):
    # The ranking asked for is shown as for more plans: the note under it counts its rows.
    status, out, _ = cli("--model", "14B", "--gpu", "a100", "--len", "24576", "--gpus", "1", "--top", "3")
    ranking = out[out.index("\nranked plans\n"):].splitlines()
    assert status == 0 and [line for line in ranking if line.startswith("│")] == [
        ("│ 1 │  1/1 │ Env + Offload │         24576 │      49152 │         351.6 │ 2.02 (best) │ documented │ 1 GPU @ "
         "24576: Env + Offload │")]
    status, out, _ = cli("--model", "14B", "--gpu", "a100", "--len", "24576", "--gpus", "1")
    assert status == 0 and "ranked plans" not in out


def test_fewer_plans_than_asked_for_say_where_the_time_limit_stopped_the_search(cli, monkeypatch: pytest.MonkeyPatch):
    answer_query = solver.api.answer_query
    monkeypatch.setattr(solver.api, "answer_query", lambda *args, **kwargs: tuple(
        answer.model_copy(update={"status": "feasible"}) for answer in answer_query(*args, **kwargs)))
    status, out, _ = cli("--model", "14B", "--gpu", "a100", "--len", "24576", "--gpus", "1", "--top", "3")
    assert status == 0 and out.endswith("\n1 plan of the 3 asked for: the time limit stopped the search; a longer "
                                        "--time-limit may find more, and better ones\n\n")


@pytest.mark.parametrize(("top", "which"), [("1", "this plan"), ("2", "these plans")])
def test_a_plan_the_time_limit_left_unproven_is_not_called_the_best(cli, monkeypatch: pytest.MonkeyPatch, top: str,
                                                                    which: str):
    answer_query = solver.api.answer_query
    monkeypatch.setattr(solver.api, "answer_query", lambda *args, **kwargs: tuple(
        answer.model_copy(update={"status": "feasible"}) for answer in answer_query(*args, **kwargs)))
    status, out, _ = cli("--model", "4B", "--gpu", "a100-80g", "--len", "32k", "--top", top)
    assert status == 0 and "\ncost           0.1833 relative step time (best found)\n" in out
    assert out.endswith(f"\nthe time limit stopped the search before it proved {which} the best: a longer "
                        "--time-limit may find better ones\n\n")
    status, out, err = cli("--model", "4B", "--gpu", "a100-80g", "--len", "32k", "--emit", "trinity")
    assert status == 0 and out.startswith("# Trinity-RFT settings") and err == (
        "solve: A100-80GB: the time limit stopped the search before it proved this plan the best: a longer "
        "--time-limit may find better ones\n")


def test_a_proven_plan_is_called_the_best_and_nothing_more_is_said(cli):
    status, out, err = cli("--model", "4B", "--gpu", "a100-80g", "--len", "32k")
    assert status == 0 and "\ncost           0.1833 relative step time (best)\n" in out and "time limit" not in out
    status, out, err = cli("--model", "4B", "--gpu", "a100-80g", "--len", "32k", "--emit", "trinity")
    assert status == 0 and err == ""


def test_a_ranking_with_a_lowered_token_budget_marks_it_and_says_why(cli):
    status, out, _ = cli("--model", "Qwen2.5-7B", "--gpus", "8", "--len", "131072", "--gpu", "h20", "--token-budget",
                         "auto", "--top", "2")
    assert status == 0 and " 52224* " in out and " 40960* " in out
    assert ("* trainer.max_token_len_per_gpu below Trinity's default ceil(2 x L / SP), which does not fit "
            "(--token-budget auto)") in out.splitlines()


def test_the_apply_lines_give_the_exact_yarn_factor_the_config_check_wants(cli, tmp_path: Path):
    status, out, _ = cli("--model", "0.6B", "--len", "99999", "--gpus", "4", "--gpu", "h20")
    (line,) = [line.strip() for line in out.splitlines() if "model.rope_scaling:" in line]
    assert status == 0 and line == ("model.rope_scaling: {rope_type: yarn, factor: 2.4413818359375, "
                                    "original_max_position_embeddings: 40960, rope_theta: 1000000}")
    config = tmp_path / "trinity.yaml"
    config.write_text("model:\n  model_path: Qwen/Qwen3-0.6B\n  max_model_len: 99999\n  "
                      + line.removeprefix("model.") + "\n", encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpus", "4", "--gpu", "h20")
    assert status == 0 and "rope_scaling" not in out.split("\nplan")[0]  # the verdict raises nothing about it


def test_only_plan_1_is_called_best_even_when_a_later_plan_costs_the_same(cli):
    # Env + SP=8 on 8 GPUs, shorter and on fewer GPUs than Env + Offload + SP=8 on 16, costs as much.
    status, out, _ = cli("--model", "0.6B", "--maximize", "len", "--gpus", "16", "--gpu", "a100", "--top", "4")
    rows = [line for line in out.splitlines() if line.startswith("│")]
    assert status == 0 and len(rows) == 4 and "(best)" in rows[0]
    assert all("(best)" not in row for row in rows[1:]) and "0.2146 (1.00x #1)" in rows[3]


@pytest.mark.parametrize("width", [160, 100])
def test_the_ranked_table_keeps_its_numbers_when_narrow_and_marks_extrapolated_estimates(width: int):
    catalog = solver.load_catalog()
    query = make_query(catalog, model="14B", max_model_len=100000, budget_gpus=16, gpu="h20", top=3)
    answers = solver.plan("14B", max_model_len=100000, budget_gpus=16, gpu="h20", top=3)
    screen = Console(width=width, file=io.StringIO(), markup=False)
    screen.print(answers_view(answers, query, catalog))
    out = screen.file.getvalue()  # type: ignore[attr-defined]
    if width == 160:  # the table: words wrap, "extrapolated" may go on the next lines
        rows = [line for line in out.splitlines() if line.startswith("│ ") and "/16" in line]
        assert [row.split("│")[1:3] for row in rows] == [[" 1 ", " 16/16 "], [" 2 ", " 16/16 "], [" 3 ", "  8/16 "]]
        assert "estimated" in rows[0] and "inferred" in rows[1] and "extrap" in out
    else:  # too narrow for the table: a block per plan, every cell whole
        ranking = out.split("ranked plans\n")[1].splitlines()
        rows = [line.rstrip() for line in ranking if line.startswith("#") or " evidence " in line]
        assert rows == ["#1  GPUs           16/16", "    evidence       estimated, extrapolated",
                        "#2  GPUs           16/16", "    evidence       inferred",
                        "#3  GPUs           8/16", "    evidence       estimated, extrapolated"]


def test_the_yarn_factor_is_shown_exactly_as_the_config_gets_it(cli):
    # 142720 / 40960 = 3.484375: the header, the ranked table and the config line agree to the last digit.
    flags = ["--model", "0.6B", "--gpu", "h200", "--gpus", "8", "--len", "142720"]
    status, out, _ = cli(*flags)
    assert (status == 0 and "(YaRN rope scaling, factor 3.484375; Qwen's model cards validate" in out
            and "factor: 3.484375," in out)
    status, out, _ = cli(*flags, "--top", "2")
    assert status == 0 and " 3.484375 " in out


def test_a_reader_that_stops_early_in_one_large_write_gets_sigpipes_status(solve_script: Path):
    # `solve tables --json | head -1`: about 98 KB in one write, more than a pipe holds. CPython's own
    # stdout dropped the rest of a write the closing pipe cut short and exited 0; the command must not.
    process = subprocess.Popen([str(solve_script), "tables", "--json"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stdout.readline() == b"[\n"
    process.stdout.close()
    _, err = process.communicate(timeout=60)
    assert (process.returncode, err) == (141, b"")


def _without_dac_override() -> list[str]:
    """A prefix under which a command meets file permissions as any user does: as root, `setpriv` dropping
    the capabilities that bypass them (a skip where it cannot); nothing for another user."""
    if os.geteuid() != 0:
        return []
    prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner", "--"]
    if shutil.which("setpriv") is None or subprocess.run([*prefix, "true"], capture_output=True, check=False).returncode != 0:
        pytest.skip("running as root without a working setpriv to drop the capabilities that bypass permissions")
    return prefix


FORKED_COMMANDS = """\
import importlib, json, os, sys, traceback
from solver.cli import main

for module in sys.argv[2:]:
    importlib.import_module(module)


def run(case):
    os.chdir(case["cwd"])
    for number, path in ((1, case["stdout"]), (2, case["stderr"])):
        if path == "&1":
            os.dup2(1, number)
            continue
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(descriptor, number)
        os.close(descriptor)
    try:
        status = main(case["argv"])
    except SystemExit as exit_:
        status = exit_.code if isinstance(exit_.code, int) else int(exit_.code is not None)
    sys.stdout.flush()
    sys.stderr.flush()
    return status


found = []
for case in json.loads(sys.argv[1]):
    reader, writer = os.pipe()
    if os.fork() == 0:
        try:
            verdict = [run(case), any(m.startswith("ortools") for m in sys.modules)]
        except BaseException:
            traceback.print_exc()
            verdict = [None, None]
        os.write(writer, json.dumps(verdict).encode())
        os._exit(0)
    os.close(writer)
    found.append(json.loads(os.read(reader, 64)))
    os.close(reader)
    os.wait()
print(json.dumps(found))
"""
"""Each command of the cases (JSON: its argv, its working directory, and the files its stdout and stderr go to, stderr's
"&1" being stdout's, as ``2>&1``) run by `main` in a child forked from an interpreter that has done no more than import
solver.cli and the modules named after the cases (`COMMAND_MODULES`; and for commands that solve, those that load
OR-Tools, the most of their time): as a new process would run it, its descriptors 1 and 2 on those files, without
starting an interpreter for each. Prints, for each, [exit status, whether ortools was imported]."""


def forked_commands(cases: list[tuple[Path, list[str], Path | str | None, Path | str | None]], prefix: list[str],
                    captured: Path, preload: tuple[str, ...] = ()) -> list[tuple[int, str, str, bool]]:
    """(exit status, stdout, stderr, whether ortools was imported) of each command of `cases` (a working directory,
    argv, and the files its stdout and stderr are redirected to, as the shell's ``> file`` and ``2> file``, or
    stderr's "&1", or None) run by `FORKED_COMMANDS` under `prefix`, once the modules of `preload` are imported; a
    stream not redirected is captured in a file in `captured` (an empty folder), one redirected reads as ""."""
    streams = [(out or captured / f"{number}.out", err or captured / f"{number}.err")
               for number, (_, _, out, err) in enumerate(cases)]
    result = subprocess.run([*prefix, sys.executable, "-c", FORKED_COMMANDS, json.dumps([
        {"cwd": str(cwd), "argv": argv, "stdout": str(out), "stderr": str(err)}
        for (cwd, argv, _, _), (out, err) in zip(cases, streams, strict=True)]), *preload],
        capture_output=True, text=True, timeout=180, check=False)
    assert (result.returncode, result.stderr) == (0, ""), result.stderr
    return [(status, "" if case[2] else Path(out).read_text(encoding="utf-8"),
             "" if case[3] else Path(err).read_text(encoding="utf-8"), imported)
            for (status, imported), case, (out, err) in zip(json.loads(result.stdout), cases, streams, strict=True)]


COMMAND_MODULES = ("solver.cli.planner", "solver.cli.cluster", "solver.cli.examples", "solver.cli.maps",
                   "solver.tables.loaders")
"""The modules that the commands load to read their arguments and tables, before any work: none loads OR-Tools (the
refusals run after them say so), so that a child forked once they are loaded still tells whether a command did."""

FLEET = str(Path(__file__).parent.parent / "docs" / "examples" / "fleet.yaml")

UNWRITABLE_FOLDERS = {
    "out": (["--model", "4B", "--len", "8k", "--gpu", "a100", "--out", "ro/o.yaml"],
            ("solve: error: --out ro/o.yaml: cannot write: a temporary file cannot be created in ro (the folder is not "
             "writable); the file is written there first, then renamed into place")),
    "emit-dir": (["cluster", FLEET, "--emit-dir", "ro"],
                 ("solve cluster: error: --emit-dir ro/math-4b.yaml: cannot write: a temporary file cannot be created "
                  "in ro (the folder is not writable); the file is written there first, then renamed into place")),
    "emit-dir-to-make": (["cluster", FLEET, "--emit-dir", "ro/new"],
                         "solve cluster: error: --emit-dir ro/new: cannot make the folder: ro is not writable"),
    "examples": (["examples", "ro"],
                 "solve examples: error: ro/linear-model: cannot make the folder: ro is not writable"),
    "examples-to-make": (["examples", "ro/new"],
                         "solve examples: error: ro/new: cannot make the folder: ro is not writable"),
}
"""For each case of test_a_folder_without_write_permission_is_refused_before_any_work: the command, run in a folder
whose folder ro may not be written, and its line."""

UNSEARCHABLE_FOLDERS = {
    "out": (["--model", "4B", "--len", "8k", "--gpu", "a100", "--out", "nox/o.yaml"],
            "solve: error: --out nox/o.yaml: cannot write: Permission denied\n"),
    "svg": (["map", "--svg", "nox/f.svg"], "solve map: error: --svg nox/f.svg: cannot write: Permission denied\n"),
    "emit-dir": (["cluster", FLEET, "--emit-dir", "nox/sub"],
                 "solve cluster: error: --emit-dir nox/sub: cannot write: Permission denied\n"),
    "model-config-file": (["--model-config", "nox/config.json", "--len", "8k"],
                          "solve: error: --model-config nox/config.json: cannot read: Permission denied\n"),
    "model-config-folder": (["--model-config", "nox", "--len", "8k"],
                            "solve: error: --model-config nox/config.json: cannot read: Permission denied\n"),
}
"""For each case of test_a_path_in_a_folder_without_search_permission_is_one_line: the command, run in a folder whose
folder nox may not be searched, and its line."""


PLANNER_OUT = ["--model", "4B", "--len", "8k", "--gpu", "a100", "--out", "o.yaml"]
"""A planner command that writes its fragment to o.yaml."""

OWN_FOLDERS = {"unreadable-example": ["examples", "d"], "read-only-target": PLANNER_OUT,
               "target-in-read-only-folder": PLANNER_OUT,
               "emit-dir-there": ["cluster", "fleet.yaml", "--emit-dir", "ro/configs", "--time-limit", "60"]}
"""The commands of the tests of permissions in a folder laid out for each (`refused_for_permissions`), by case: d/
holding a fleet.yaml that may not be read; a read-only o.yaml; a writable o.yaml in a folder that may not be written;
and a fleet.yaml of one job beside ro/configs, whose ro may not be written (a limit of 60 s keeps the cluster's
wall-clock nets, on the real clock in a process of its own, out of a busy machine's reach)."""


@pytest.fixture(scope="module")
def refused_for_permissions(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], tuple[Any, ...]]:
    """For each case of `UNWRITABLE_FOLDERS` (``("ro", id)``), `UNSEARCHABLE_FOLDERS` (``("nox", id)``) and
    `OWN_FOLDERS` (``("own", id)``): (exit status, stdout, stderr, whether ortools was imported, the folder ro or nox
    after it, or the case's own folder), the command run in a folder of its own (`forked_commands`) as a user whom file
    permissions bind (`_without_dac_override`)."""
    prefix = _without_dac_override()
    base = tmp_path_factory.mktemp("permissions")
    (base / "captured").mkdir()
    named = [("ro", case, argv) for case, (argv, _) in UNWRITABLE_FOLDERS.items()]
    named += [("nox", case, argv) for case, (argv, _) in UNSEARCHABLE_FOLDERS.items()]
    named += [("own", case, argv) for case, argv in OWN_FOLDERS.items()]
    cases, locked = [], []
    for number, (folder, case, argv) in enumerate(named):
        cwd = base / str(number)
        cwd.mkdir()
        if folder != "own":
            (cwd / folder).mkdir(mode=0o555 if folder == "ro" else 0)
            locked.append(cwd / folder)
        elif case == "unreadable-example":
            (cwd / "d").mkdir()
            (cwd / "d" / "fleet.yaml").write_text("x\n", encoding="utf-8")
            (cwd / "d" / "fleet.yaml").chmod(0o200)
        elif case == "emit-dir-there":
            (cwd / "fleet.yaml").write_text("pools: [{name: a, gpu: A100-80GB, nodes: 1, gpus_per_node: 8}]\n"
                                            "jobs: [{name: j, model: 4B, max_model_len: 8192}]\n", encoding="utf-8")
            (cwd / "ro" / "configs").mkdir(parents=True)
            (cwd / "ro").chmod(0o555)
            locked.append(cwd / "ro")
        else:
            (cwd / "o.yaml").write_text("mine\n", encoding="utf-8")
            (cwd / "o.yaml").chmod(0o444 if case == "read-only-target" else 0o666)
            if case == "target-in-read-only-folder":
                cwd.chmod(0o555)
                locked.append(cwd)
        cases.append((cwd, argv, None, None))
    try:
        found = forked_commands(cases, prefix, base / "captured", preload=COMMAND_MODULES)
    finally:
        for folder in locked:
            folder.chmod(0o755)
    return {(folder, case): (*answer, base / str(number) / ("" if folder == "own" else folder))
            for number, ((folder, case, _), answer) in enumerate(zip(named, found, strict=True))}


@pytest.mark.skipif(os.name == "nt", reason="POSIX permissions")
def test_an_example_file_there_that_cannot_be_read_is_one_line_and_left(
        refused_for_permissions: dict[tuple[str, str], tuple[Any, ...]]):
    # `solve examples` reads a file where an example goes, to leave it if it holds the example: one it may not read.
    status, out, err, _, folder = refused_for_permissions["own", "unreadable-example"]
    assert (status, out, err) == (2, "", "solve examples: error: d/fleet.yaml: cannot read: Permission denied\n")
    assert [path.name for path in (folder / "d").iterdir()] == ["fleet.yaml"]


@pytest.mark.skipif(os.name == "nt", reason="POSIX permissions")
def test_a_read_only_target_is_refused_and_a_read_only_folder_is_named(
        refused_for_permissions: dict[tuple[str, str], tuple[Any, ...]]):
    # Written by rename, a file would be replaced whatever its own permissions: a read-only one is refused, as
    # `>` refuses it; a writable file in a folder without write permission names the folder.
    status, out, err, _, folder = refused_for_permissions["own", "read-only-target"]
    assert (status, out, err) == (
        2, "", "solve: error: --out o.yaml: cannot write: Permission denied (the file is not writable)\n")
    assert (folder / "o.yaml").read_text(encoding="utf-8") == "mine\n"
    status, _, err, _, folder = refused_for_permissions["own", "target-in-read-only-folder"]
    assert (status, err) == (2, ("solve: error: --out o.yaml: cannot write: a temporary file cannot be created in . "
                                 "(the folder is not writable); the file is written there first, then renamed into "
                                 "place\n"))
    assert (folder / "o.yaml").read_text(encoding="utf-8") == "mine\n"


@pytest.mark.skipif(os.name == "nt", reason="POSIX permissions")
def test_an_emit_dir_that_exists_in_a_read_only_folder_is_written(
        refused_for_permissions: dict[tuple[str, str], tuple[Any, ...]]):
    # Only a folder still to make needs its folder writable: one that is there takes the configs.
    status, _, err, _, folder = refused_for_permissions["own", "emit-dir-there"]
    assert (status, err) == (0, "")
    assert [path.name for path in (folder / "ro" / "configs").iterdir()] == ["j.yaml"]


@pytest.mark.skipif(os.name == "nt", reason="POSIX permissions")
@pytest.mark.parametrize("case", UNWRITABLE_FOLDERS)
def test_a_folder_without_write_permission_is_refused_before_any_work(
        refused_for_permissions: dict[tuple[str, str], tuple[Any, ...]], case: str):
    # Its files could not be renamed into place: said before the solve (or the placement, which may take its whole
    # time limit), which imports OR-Tools, not after it.
    status, out, err, imported, folder = refused_for_permissions["ro", case]
    assert (status, out, err, imported) == (2, "", f"{UNWRITABLE_FOLDERS[case][1]}\n", False)
    assert list(folder.iterdir()) == []


OWN_OUTPUT = ": the command's own output goes there; name another file, or drop the option to print it\n"
"""The end of the line refusing to write a file over the command's own stdout or stderr."""

STDOUT_SPELLINGS = ["plan.yaml", "//dev/stdout", "/proc/thread-self/fd/1"]
"""The spellings of the file that stdout is redirected to, in
test_a_file_that_stdout_is_redirected_to_is_not_written_over."""


@pytest.fixture(scope="module")
def refused_for_redirects(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Any, ...]]:
    """For each command that names as a file to write the one its stdout or stderr is redirected to (by its test's
    name, and for the first, each of `STDOUT_SPELLINGS`): (exit status, stdout, stderr, whether ortools was imported,
    its folder after it), each run in a folder of its own (`forked_commands`)."""
    base = tmp_path_factory.mktemp("redirects")
    (base / "captured").mkdir()
    planner = ["--model", "4B", "--len", "8k", "--gpu", "a100", "--out"]
    named: list[tuple[str, list[str], str | None, str | None]] = [
        *((f"not-written-over-{name}", [*planner, name], "plan.yaml", None) for name in STDOUT_SPELLINGS),
        ("stderr-not-written-over", [*planner, "plan.yaml"], None, "plan.yaml"),
        ("refused-before-any-work", ["--model", "4B", "--len", "8k", "--out", "plan.yaml"], "plan.yaml", None),
        ("config-of-emit-dir", ["cluster", FLEET, "--emit-dir", "configs"], "configs/math-4b.yaml", None)]
    cases = []
    for number, (name, argv, stdout, stderr) in enumerate(named):
        (base / str(number)).mkdir()
        if name == "config-of-emit-dir":
            (base / str(number) / "configs").mkdir()
        cases.append((base / str(number), argv, stdout and base / str(number) / stdout,
                      stderr and base / str(number) / stderr))
    found = forked_commands(cases, [], base / "captured", preload=COMMAND_MODULES)
    return {name: (*answer, base / str(number)) for number, ((name, *_), answer) in enumerate(zip(named, found,
                                                                                                  strict=True))}


@pytest.mark.skipif(os.name == "nt", reason="POSIX file names")
@pytest.mark.parametrize("name", STDOUT_SPELLINGS)
def test_a_file_that_stdout_is_redirected_to_is_not_written_over(refused_for_redirects: dict[str, tuple[Any, ...]],
                                                                 name: str):
    # `--out plan.yaml > plan.yaml`, in any spelling: the fragment would replace what the command prints there.
    status, _, err, _, folder = refused_for_redirects[f"not-written-over-{name}"]
    assert status == 2 and err.endswith(OWN_OUTPUT)
    assert sorted(path.name for path in folder.iterdir()) == ["plan.yaml"]


@pytest.mark.skipif(os.name == "nt", reason="POSIX file names")
def test_a_file_that_stderr_is_redirected_to_is_not_written_over(refused_for_redirects: dict[str, tuple[Any, ...]]):
    # `--out plan.yaml 2> plan.yaml`: the fragment would replace the warnings and errors; the refusal is what it holds.
    status, out, _, _, folder = refused_for_redirects["stderr-not-written-over"]
    assert (status, out) == (2, "")
    assert (folder / "plan.yaml").read_text(encoding="utf-8") == f"solve: error: --out plan.yaml{OWN_OUTPUT}"


@pytest.mark.skipif(os.name == "nt", reason="POSIX file names")
def test_a_file_that_stdout_is_redirected_to_is_refused_before_any_work(
        refused_for_redirects: dict[str, tuple[Any, ...]]):
    # Before solving, which imports OR-Tools: a refusal is as quick as the checks of the arguments.
    status, _, err, imported, _ = refused_for_redirects["refused-before-any-work"]
    assert (status, err, imported) == (2, f"solve: error: --out plan.yaml{OWN_OUTPUT}", False)


@pytest.mark.skipif(os.name == "nt", reason="POSIX file names")
def test_a_config_of_emit_dir_that_stdout_goes_to_is_refused_before_the_placement(
        refused_for_redirects: dict[str, tuple[Any, ...]]):
    status, _, err, imported, _ = refused_for_redirects["config-of-emit-dir"]
    assert (status, err, imported) == (2, f"solve cluster: error: --emit-dir configs/math-4b.yaml{OWN_OUTPUT}", False)


@pytest.mark.skipif(os.name == "nt" or os.geteuid() != 0, reason="only root may give a file to another user")
def test_root_writing_a_users_file_leaves_it_theirs(tmp_path: Path):
    target = tmp_path / "alice.yaml"
    target.write_text("old\n", encoding="utf-8")
    os.chown(target, 65534, 65534)
    target.chmod(0o640)
    solver.cli.atomic.write_atomically(target, "new\n")
    status = target.stat()
    assert (status.st_uid, status.st_gid, stat.S_IMODE(status.st_mode)) == (65534, 65534, 0o640)
    assert target.read_text(encoding="utf-8") == "new\n"


@pytest.mark.skipif(os.name == "nt", reason="POSIX permissions")
@pytest.mark.parametrize("case", UNSEARCHABLE_FOLDERS)
def test_a_path_in_a_folder_without_search_permission_is_one_line(
        refused_for_permissions: dict[tuple[str, str], tuple[Any, ...]], case: str):
    # Path.exists() and is_dir() raise PermissionError there (before Python 3.14): no traceback.
    status, out, err, _, folder = refused_for_permissions["nox", case]
    assert (status, out, err) == (2, "", UNSEARCHABLE_FOLDERS[case][1])
    assert list(folder.iterdir()) == []


NOTED = ["--model", "4B", "--gpu", "mine", "--gpu-memory", "40", "--len", "32k"]
"""A planner command with a note on stderr before its output."""

UNWRITABLE_OUTPUT = {"tables": ["tables", "--json"], "planner": ["--model", "4B", "--len", "32k", "--gpu", "a100-80g"],
                     "help": ["--help"]}
"""The commands of test_output_that_cannot_be_written_is_one_line_not_a_traceback, by case."""

UNWRITABLE_STDERR = {"note": ([*NOTED, "--json"], "pipe", 0),  # with a note
                     "bad-input": (["cluster", "missing.yaml"], "pipe", 2),
                     "full-stdout": (["--model", "4B", "--len", "32k", "--gpu", "a100"], "full", 74),  # output the
                     # full disk could not take
                     "closed-stdout": (["--model", "4B", "--len", "32k", "--gpu", "a100"], "closed", 2)}
"""The commands of test_an_unwritable_stderr_loses_its_lines_not_the_exit_status, their stdout (a pipe, the full disk,
or closed) and their exit status, by case."""


@pytest.fixture(scope="module")
def written_to_streams(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, str, str, bool]]:
    """(exit status, stdout, stderr, whether ortools was imported) of the commands whose stdout or stderr are on a full
    disk (/dev/full): ``full-`` and each case of `UNWRITABLE_OUTPUT`, ``stderr-full-`` and each of
    `UNWRITABLE_STDERR` but ``closed-stdout`` (a stdout closed as the interpreter starts needs one of its own), and
    ``one-log``: `NOTED` with stderr on its stdout (``2>&1``); each in a child forked from one interpreter
    (`forked_commands`) that has loaded OR-Tools, in a folder of its own."""
    base = tmp_path_factory.mktemp("streams")
    (base / "captured").mkdir()
    named: list[tuple[str, list[str], str | None, str | None]] = [
        *((f"full-{case}", argv, "/dev/full", None) for case, argv in UNWRITABLE_OUTPUT.items()),
        *((f"stderr-full-{case}", argv, "/dev/full" if stdout == "full" else None, "/dev/full")
          for case, (argv, stdout, _) in UNWRITABLE_STDERR.items() if stdout != "closed"),
        ("one-log", NOTED, None, "&1")]
    for number in range(len(named)):
        (base / str(number)).mkdir()
    found = forked_commands([(base / str(number), argv, stdout, stderr)
                             for number, (_, argv, stdout, stderr) in enumerate(named)], [], base / "captured",
                            preload=(*COMMAND_MODULES, "solver.api", "solver.solve", "solver.explain",
                                     "solver.render"))
    return {name: answer for (name, *_), answer in zip(named, found, strict=True)}


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
@pytest.mark.parametrize("case", UNWRITABLE_OUTPUT)
def test_output_that_cannot_be_written_is_one_line_not_a_traceback(
        written_to_streams: dict[str, tuple[int, str, str, bool]], case: str):
    status, _, err, _ = written_to_streams[f"full-{case}"]
    prog = "solve tables" if case == "tables" else "solve"
    assert (status, err) == (  # a full disk: 74 (EX_IOERR), which a pipeline may retry
        74, f"{prog}: error: cannot write the output: No space left on device\n")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
@pytest.mark.parametrize("case", UNWRITABLE_STDERR)
def test_an_unwritable_stderr_loses_its_lines_not_the_exit_status(
        written_to_streams: dict[str, tuple[int, str, str, bool]], solve_script: Path, tmp_path: Path, case: str):
    # `2>>log` on a full disk: a note, or the one line of an error, is lost; the exit status stays the command's own
    # (the traceback of the failed write, which could not be written either, made each of them 1: "no plan").
    argv, stdout, status = UNWRITABLE_STDERR[case]
    if stdout == "closed":
        with open("/dev/full", "w") as full:
            result = subprocess.run([str(solve_script), *argv], cwd=tmp_path, timeout=60, check=False, text=True,
                                    stderr=full, preexec_fn=lambda: os.close(1))
        found, out = result.returncode, result.stdout
    else:
        found, out, _, _ = written_to_streams[f"stderr-full-{case}"]
    assert found == status
    assert json.loads(out)[0]["model"] == "Qwen3-4B" if status == 0 else out in ("", None)


@pytest.mark.parametrize(("argv", "path"), [
    (["--model", "4B", "--len", "32k", "--gpu", "a100", "--out", "plan.yaml"], "--out plan.yaml"),
    (["map", "--gpu", "h20", "--gpus-up-to", "2", "--svg", "map.svg"], "--svg map.svg"),
    (["calibrate", "--out", "memory.yaml"], "--out memory.yaml"),
    (["cluster", str(EXAMPLES / "fleet.yaml"), "--emit-dir", "configs"], "--emit-dir configs"),
    (["examples"], "docs/examples"),
], ids=["out", "svg", "calibrate-out", "emit-dir", "examples"])
def test_a_relative_path_from_a_removed_working_directory_is_one_line(cli, monkeypatch: pytest.MonkeyPatch,
                                                                      tmp_path: Path, argv: list[str], path: str):
    # The shell's folder was removed under it (a rebuilt checkout): a relative path names nothing; no traceback. The
    # line names the option that gives the file, as every error about it does (--out, --svg and calibrate's --out
    # named the file alone; --emit-dir said 'cannot write: No such file or directory'). In-process: the next test
    # starts the installed command there.
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    prog = "solve" if argv[0].startswith("-") else f"solve {argv[0]}"
    assert cli(*argv) == (2, "", (
        f"{prog}: error: {path}: the working directory, where a relative path starts, no longer exists; cd to one "
        "that does, or give an absolute path\n"))


def test_the_installed_command_started_in_a_removed_working_directory_says_so_in_one_line(solve_script: Path,
                                                                                          tmp_path: Path):
    # The case above as a shell starts it: the console script's interpreter starts in the removed folder.
    gone = tmp_path / "gone"
    gone.mkdir()
    result = subprocess.run([str(solve_script), "--model", "4B", "--len", "32k", "--gpu", "a100", "--out", "plan.yaml"],
                            cwd=gone, capture_output=True, text=True, timeout=60, check=False,
                            preexec_fn=lambda: os.rmdir(gone))  # run after the child's chdir
    assert (result.returncode, result.stdout, result.stderr) == (2, "", (
        "solve: error: --out plan.yaml: the working directory, where a relative path starts, no longer exists; cd to "
        "one that does, or give an absolute path\n"))


@pytest.mark.parametrize("argv", [["tables", "--json"], ["--model", "4B", "--len", "32k", "--gpu", "a100"], ["--help"]])
def test_a_closed_stdout_is_one_line_and_nothing_done(solve_script: Path, tmp_path: Path, argv: list[str]):
    # `solve ... >&-`: Python has no sys.stdout; the command says so at once, writes no file, exits 2.
    result = subprocess.run([str(solve_script), *argv, *(["--out", "fragment.yaml"] if "--model" in argv else [])],
                            cwd=tmp_path, stderr=subprocess.PIPE, text=True, timeout=60, check=False,
                            preexec_fn=lambda: os.close(1))
    assert (result.returncode, result.stderr) == (2, "solve: error: cannot write the output: standard output is closed\n")
    assert list(tmp_path.iterdir()) == []


def test_a_closed_stderr_drops_the_notes_and_leaves_json_whole(solve_script: Path):
    # --gpu-memory 40 gets a note on stderr; with stderr closed it goes nowhere, not into the JSON on stdout.
    result = subprocess.run([str(solve_script), "--model", "4B", "--gpu", "mine", "--gpu-memory", "40", "--len", "32k",
                             "--json"], stdout=subprocess.PIPE, text=True, timeout=60, check=False,
                            preexec_fn=lambda: os.close(2))
    assert result.returncode == 0 and json.loads(result.stdout)[0]["model"] == "Qwen3-4B"


def test_a_closed_stdout_above_a_closed_stdin_is_held_on_devnull(tmp_path: Path):
    # `<&- >&-`: the lowest free descriptor is 0, not stdout's 1: os.devnull is moved onto 1 from there, so that no
    # file opened after it takes descriptor 1 (the file takes 0). (With stderr closed instead, the devnull that
    # becomes sys.stderr takes 2 either way: no test of its own.)
    script = ("import os, sys\nfrom solver.cli.output import standard_streams_open\nopened = standard_streams_open()\n"
              "print(opened, os.path.samestat(os.fstat(1), os.stat(os.devnull)), os.open('file', os.O_WRONLY | "
              "os.O_CREAT), file=sys.stderr)")
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, stderr=subprocess.PIPE, text=True,
                            timeout=60, check=False, preexec_fn=lambda: [os.close(number) for number in (0, 1)])
    assert (result.returncode, result.stderr) == (0, "False True 0\n")


def test_standard_streams_without_a_descriptor_are_written_as_they_are(monkeypatch: pytest.MonkeyPatch):
    # An embedding interpreter whose own streams are in memory: no descriptor to wrap; the output and the note land.
    out, err = io.StringIO(), io.StringIO()
    for name, stream in (("stdout", out), ("__stdout__", out), ("stderr", err), ("__stderr__", err)):
        monkeypatch.setattr(sys, name, stream)
    assert solver.cli.main(["--model", "4B", "--gpu", "mine", "--gpu-memory", "40", "--len", "32k", "--json"]) == 0
    assert json.loads(out.getvalue())[0]["model"] == "Qwen3-4B"
    assert err.getvalue().startswith("solve: note: --gpu-memory 40GB is taken as 40 GiB")
    assert (sys.stdout, sys.stderr) == (out, err)


@pytest.mark.parametrize("environment", [
    {"PYTHONIOENCODING": "ascii"},
    {"PYTHONIOENCODING": "ascii:surrogateescape"},
    {"LC_ALL": "C", "PYTHONUTF8": "0"},  # the C locale without UTF-8 mode: ascii, with errors=surrogateescape
], ids=["ascii", "ascii-surrogateescape", "c-locale-without-utf8-mode"])
def test_stdout_that_cannot_encode_a_character_writes_the_tools_own_in_ascii(solve_script: Path,
                                                                             environment: dict[str, str]):
    # The tool's own characters (the title's middle dots) in ASCII; a name from the input (the GPU's) as "?".
    result = subprocess.run([str(solve_script), "--model", "4B", "--len", "32k", "--gpu", "a100-80g"],
                            capture_output=True,
                            text=True, timeout=60, check=False, env={**os.environ, "PYTHONIOENCODING": "",
                                                                     **environment})
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.startswith("A100-80GB - Qwen3-4B - cheapest plan for 32768 tokens within 6 GPUs: optimal\n")


@pytest.mark.skipif(os.name == "nt", reason="POSIX file names are bytes")
@pytest.mark.parametrize(("environment", "name", "shown"), [
    (None, b"caf\xe9", "caf\\xe9"),  # Latin-1's e-acute: not UTF-8 (in-process: the locale the tests run in)
    ({"LC_ALL": "C", "PYTHONUTF8": "0"}, b"caf\xc3\xa9", "caf\\xc3\\xa9"),  # UTF-8's, in the C locale: not ASCII
], ids=["not-utf8", "c-locale-without-utf8-mode"])
def test_a_file_names_bytes_that_the_locale_cannot_decode_are_written_as_bytes(
        cli, monkeypatch: pytest.MonkeyPatch, solve_script: Path, tmp_path: Path, environment: dict[str, str] | None,
        name: bytes, shown: str):
    # Python holds such a byte as a lone surrogate: the wrote line and the error line said 'caf\udce9', which names
    # no file (bash's $'caf\xe9' does). Another locale is a new interpreter's, read as it starts; the tests' own is
    # run in-process, the arguments as Python decodes a command line's bytes (os.fsdecode) and stdout as UTF-8 that
    # refuses a lone surrogate, as a real one does.
    command = [b"--model", b"4B", b"--gpu", b"h20", b"--gpus", b"4", b"--len", b"32k"]

    def run(argv: list[bytes]) -> tuple[int, bytes, bytes]:
        if environment is None:
            status, out, err = cli(*map(os.fsdecode, argv))
            return status, out.encode("utf-8", "strict"), err.encode("utf-8", "strict")
        result = subprocess.run([os.fsencode(solve_script), *argv], cwd=tmp_path, capture_output=True, timeout=60,
                                check=False, env={**os.environ, "PYTHONIOENCODING": "", **environment})
        return result.returncode, result.stdout, result.stderr

    monkeypatch.chdir(tmp_path)
    status, out, err = run([*command, b"--out", name + b" plan.yaml"])
    assert (status, err) == (0, b"")
    assert out.endswith(f"\nwrote {shown} plan.yaml\n".encode())
    assert (tmp_path / os.fsdecode(name + b" plan.yaml")).read_text(encoding="utf-8").startswith("# Trinity-RFT")
    assert run([*command, b"--from-config", name + b" missing.yaml"]) == (2, b"", (
        f"solve: error: --from-config {shown} missing.yaml: cannot read: No such file or directory\n").encode())


@pytest.mark.skipif(os.name == "nt", reason="POSIX file names are bytes")
def test_a_memory_model_files_undecodable_byte_is_echoed_in_json_as_its_escape(cli, tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch):
    # solve memory --json echoed --memory-model as Python holds it: "mm\udce9.yaml", a lone surrogate that no
    # UTF-8 reader takes (jq shows U+FFFD); now as the wrote lines write it. In-process, the name as Python decodes a
    # command line's bytes (os.fsdecode), and stdout as UTF-8 that refuses a lone surrogate, as a real one does.
    name = b"mm\xe9.yaml"
    shipped = solver.tables.shipped_tables_directory() / solver.tables.MEMORY_MODEL_FILE
    (tmp_path / os.fsdecode(name)).write_bytes(shipped.read_bytes())
    monkeypatch.chdir(tmp_path)
    status, out, err = cli("memory", "--model", "4B", "--gpu", "h100", "--gpus", "4", "--len", "32k", "--env", "--sp",
                           "2", "--json", "--memory-model", os.fsdecode(name))
    assert (status, err) == (0, "")
    printed = json.loads(out.encode("utf-8", "strict").decode("utf-8", "strict"))
    assert printed["memory_model"] == "mm\\xe9.yaml"
    assert solver.MemoryAnswer.model_validate(printed).memory_model == "mm\\xe9.yaml"
    in_api = solver.memory_answer("4B", "h100", 4, 32768, sp=2, env=True, memory=tmp_path / os.fsdecode(name))
    assert in_api.memory_model == f"{tmp_path}/mm\\xe9.yaml"


@pytest.fixture
def ascii_cli(cli, monkeypatch: pytest.MonkeyPatch) -> Any:
    """`cli` with stdout a stream that encodes ASCII alone, errors strict, as ``PYTHONIOENCODING=ascii`` makes the
    interpreter's (which test_stdout_that_cannot_encode_a_character_writes_the_tools_own_in_ascii starts): (exit
    status, stdout, stderr) as `cli` gives them."""

    def run(*argv: str) -> tuple[int, str, str]:
        stdout = io.TextIOWrapper(io.BytesIO(), encoding="ascii", errors="strict")
        monkeypatch.setattr(sys, "stdout", stdout)
        status, _, err = cli(*argv)
        stdout.flush()
        return status, stdout.buffer.getvalue().decode("ascii"), err  # type: ignore[attr-defined]

    return run


def test_an_ascii_stdout_spells_a_maps_budgets_and_writes_a_name_of_the_input_as_a_question_mark(ascii_cli):
    status, out, err = ascii_cli("map", "--gpu", "a100-80g", "--model", "4B", "--gpus-up-to", "2")
    assert (status, err) == (0, "")
    assert out.splitlines()[2].split("|")[1:3] == [" model    ", "  <=1 GPU   "]
    assert "| 28k E+O@1# |" in out and f"\n# {ONE_GPU}\n" in out  # the one-GPU mark spelled
    assert len({len(line) for line in out.splitlines() if line[:1] in "+|"}) == 1  # the borders in line
    _, out, _ = ascii_cli("--model", "4B", "--len", "32k", "--gpu", "m\u00e9", "--gpu-memory", "80GiB")
    assert out.startswith("m? - Qwen3-4B - cheapest plan for 32768 tokens within 6 GPUs: optimal\n")


def test_an_ascii_stdout_spells_a_placements_asked_length_before_its_table_is_laid_out(ascii_cli, tmp_path: Path):
    # Spelled as the stream writes it, "(>=32768)" was one character wider than rich had measured "(≥32768)": the
    # row's borders stood out of line with the header's.
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools: [{name: a100, gpu: A100-80GB, nodes: 1, gpus_per_node: 8}]\njobs: [{name: long-4b, model: "
                     "Qwen3-4B, max_model_len: {at_least: 32768}, rollout_gpus: 2}]\n", encoding="utf-8")
    status, out, err = ascii_cli("cluster", str(fleet))
    table = [line for line in out.splitlines() if line[:1] in "+|"]
    assert (status, err) == (0, "") and "| 102400 (>=32768) |" in table[3]
    assert len({len(line) for line in table}) == 1


def test_stderr_that_cannot_encode_a_character_writes_the_tools_own_in_ascii():
    # The note and error lines take the same spellings; a character of the input's stays escaped, as Python writes it.
    code = ("import sys\nfrom solver.cli.output import standard_streams_open\nstandard_streams_open()\n"
            "print('\u2264 \u2265 \u00b7 \u2026 \u00e9 \u2264', file=sys.stderr)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False,
                            env={**os.environ, "PYTHONIOENCODING": "ascii"})
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "<= >= - ... \\xe9 <=\n")


def test_every_character_beyond_ascii_in_the_tools_strings_has_an_ascii_spelling():
    # A character beyond ASCII written as such in a string of the code (not a docstring, nor a constant's docstring
    # below it, nor a comment: the text the commands print) needs its spelling.
    strings = {tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}  # f-strings' text: Python 3.12
    found = set()
    for path in Path(solver.__file__).parent.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if text.isascii():  # nothing to find in it: spared the parsing and tokenizing
            continue
        docstrings = {line for node in ast.walk(ast.parse(text))
                      if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                      and isinstance(node.value.value, str)
                      for line in range(node.lineno, (node.end_lineno or node.lineno) + 1)}
        found |= {character for token in tokenize.generate_tokens(io.StringIO(text).readline)
                  if token.type in strings and token.start[0] not in docstrings
                  for character in token.string if not character.isascii()}
    assert found == {"\u2264", "\u2265", "\u00b7", "\u2020"}  # the rest of ASCII_SPELLINGS: rich's "\u2026"
    assert found <= solver.cli.output.ASCII_SPELLINGS.keys()


@pytest.mark.skipif(os.name == "nt", reason="POSIX signals")
@pytest.mark.parametrize(("ctrl_c", "when", "written"), [
    ("default", "solving", []),  # the request to end as the solve starts: nothing written
    ("ignored", "solving", []),  # ends the command also where Ctrl-C is ignored (a script's background job)
    ("default", "writing", ["plan.yaml"]),  # while --out writes: once the file is in place, whole
])
def test_a_request_to_end_says_terminated_and_exits_143(cli, tmp_path: Path, ctrl_c: str, when: str,
                                                        written: list[str]):
    # SIGTERM (kill, timeout, a batch scheduler) ends the command as Ctrl-C does, with a line and 143 of its own.
    code = ("import os, signal, sys\nimport solver.api, solver.cli.atomic\nfrom solver.cli import main\n"
            "signal.signal(signal.SIGINT, signal.SIG_IGN if sys.argv[1] == 'ignored' else signal.default_int_handler)\n"
            "def ended(real):\n"
            "    return lambda *args, **kwargs: (os.kill(os.getpid(), signal.SIGTERM), real(*args, **kwargs))[1]\n"
            "if sys.argv[2] == 'solving':\n"
            "    solver.api.answer_query = ended(solver.api.answer_query)\n"
            "else:\n"
            "    solver.cli.atomic.os.fsync = ended(os.fsync)\n"
            "sys.exit(main(['--model', '4B', '--len', '32k', '--gpu', 'a100', '--out', 'plan.yaml']))\n")
    result = subprocess.run([sys.executable, "-c", code, ctrl_c, when], cwd=tmp_path, capture_output=True, text=True,
                            timeout=60, check=False)
    assert (result.returncode, result.stdout, result.stderr) == (143, "", "solve: terminated\n")
    assert sorted(path.name for path in tmp_path.iterdir()) == written
    if written:
        assert (tmp_path / "plan.yaml").read_text(encoding="utf-8") == cli("--model", "4B", "--len", "32k", "--gpu",
                                                                           "a100", "--emit", "trinity")[1]


def test_a_request_to_end_is_left_to_a_host_programs_own_handler(cli, monkeypatch: pytest.MonkeyPatch):
    # A program that runs main() with its own SIGTERM handler keeps it: main's is put in place only over the default,
    # and taken away when main returns.
    received: list[int] = []
    real = solver.api.answer_query

    def answer_query(*args: Any, **kwargs: Any) -> Any:
        os.kill(os.getpid(), signal.SIGTERM)
        return real(*args, **kwargs)

    monkeypatch.setattr(solver.api, "answer_query", answer_query)
    previous = signal.signal(signal.SIGTERM, lambda number, frame: received.append(number))
    try:
        status, out, err = cli("--model", "4B", "--len", "32k", "--gpu", "a100-80g")
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert (status, received, err) == (0, [signal.SIGTERM], "") and out.startswith("A100-80GB")
    monkeypatch.setattr(solver.api, "answer_query", real)
    assert cli("--model", "4B", "--len", "32k", "--gpu", "a100-80g")[0] == 0
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL


def test_the_tools_ascii_spellings_are_for_encoding_only():
    # The error handlers spell characters a stream cannot encode; bytes a decoder cannot read are its own error.
    for errors in set(solver.cli.output.SPELLED_ERRORS.values()):
        assert "\u2264 caf\u00e9".encode("ascii", errors) in (b"<= caf?", b"<= caf\\xe9")
        with pytest.raises(UnicodeDecodeError):
            b"caf\xc3\xa9".decode("ascii", errors)


def test_a_plan_explained_on_a_gpu_without_tables_cites_a_larger_gpus_offload_failure_without_offload(cli):
    # Qwen3-0.6B with Env alone at 30720 on 8 GPUs of 80 GB: the A100-80GB table for 1 GPU says Env + Offload ran
    # out of memory at 32768, which holds on a GPU with no more memory, and without Offload on more GPUs.
    out = " ".join(cli("--model", "0.6B", "--gpu", "mine", "--gpu-memory", "80", "--gpus", "8", "--len", "30720",
                       "--env", "--sp", "1", "--no-offload", "--exact", "--explain")[1].split())
    assert ("Env 73.2 GiB of 73.5 usable, but the A100-80GB table for 1 GPU, whose GPU has at least this one's memory, "
            "says it ran out of memory at 32768, and with Offload each GPU holds as much on any count, without it "
            "more") in out


def test_a_note_comes_before_the_output_in_one_log(written_to_streams: dict[str, tuple[int, str, str, bool]]):
    # `solve ... >log 2>&1`: stderr's lines are written as they come, not held until the command ends.
    status, out, _, _ = written_to_streams["one-log"]
    lines = out.splitlines()
    assert (status, lines[0][:37]) == (0, "solve: note: --gpu-memory 40GB is tak")
    assert lines[1] == "mine · Qwen3-4B · cheapest plan for 32768 tokens within 8 GPUs: optimal"


def test_stderr_that_cannot_encode_a_character_of_the_input_writes_it_escaped(solve_script: Path):
    # Stderr keeps its encoding and its errors (backslashreplace) where the command takes it over.
    result = subprocess.run([str(solve_script), "--model", "Qw\u00e9n3-4B", "--len", "32k"], capture_output=True,
                            text=True, timeout=60, check=False, env={**os.environ, "PYTHONIOENCODING": "ascii"})
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith("solve: error: unknown model 'Qw\\xe9n3-4B'; accepted: Qwen3-0.6B")


@pytest.mark.parametrize("columns", ["40", "200"])
@pytest.mark.parametrize("argv", [["--help"], ["cluster", "--help"], ["--version"], ["tables", "--gpu", "h20"]])
def test_a_reader_gone_before_the_first_line_gets_sigpipes_status(solve_script: Path, argv: list[str], columns: str):
    # `solve --help | true`: argparse prints and exits; the closed pipe shows as the output is flushed, or (a help
    # longer than the pipe's buffer: a narrow terminal's) as argparse writes it.
    reader, writer = os.pipe()
    os.close(reader)
    try:
        result = subprocess.run([str(solve_script), *argv], stdout=writer, stderr=subprocess.PIPE, timeout=60,
                                check=False, env={**os.environ, "COLUMNS": columns})
    finally:
        os.close(writer)
    assert (result.returncode, result.stderr) == (141, b"")


LONG = "x" * 100_000


@pytest.mark.parametrize("argv", [
    ["--model", LONG, "--len", "8k"], ["--model", "4B", "--len", "8k", "--gpu", LONG], ["--model", "4B", "--len", LONG],
    ["--model", "4B", "--len", "-" + "9" * 4000], ["--model", "4B", "--len", "8k", "--maximize", LONG],
    ["--model", "4B", "--len", "8k", "--time-limit", LONG], ["--model", "4B", "--len", "8k", "--host-ram", LONG],
    ["--model", "4B", "--len", "8k", LONG],
    ["--model", "4B", "--len", "8k", *["y"] * 50_000], [LONG], ["memory", "--model", LONG, "--gpu", "a100", "--gpus", "1",
                                                                "--len", "8k"],
])
def test_an_error_line_shows_a_long_name_or_value_cut_short(cli, argv: list[str]):
    status, out, err = cli(*argv)
    *usage, error = err.splitlines()
    assert (status, out) == (2, "") and all(line.startswith("usage:") for line in usage)
    assert "x" * 61 not in error and "9" * 61 not in error and "y y" * 31 not in error
    assert len(error) < 700  # what is accepted, named in full, and the value cut to 60 characters


def test_no_plan_for_want_of_a_rollout_layout_says_so(cli):
    # 1 trainer GPU and 8 rollout GPUs fit no layout on nodes of 8: the reason names it without --explain, and the
    # nearest plan, on a whole node beside the rollout's.
    status, answers = run_json(cli, "--model", "4B", "--len", "32k", "--gpus", "1", "--rollout-gpus", "8", "--gpu",
                               "a100-80g")
    assert status == 1 and answers[0]["reason"] == (
        "no plan for 1 or fewer trainer GPUs with Qwen3-4B on A100-80GB: none of them leaves the 8 rollout GPUs "
        "(--rollout-gpus) room on nodes of 8, in the trainer's node, filling it and whole nodes more, or on nodes of "
        "their own beside a trainer on whole nodes; more trainer GPUs train 32768 tokens: SP=2 on 8 GPUs (inferred)")
    status, answers = run_json(cli, "--model", "4B", "--len", "32k", "--gpus", "8", "--rollout-gpus", "8", "--gpu",
                               "a100-80g")
    assert status == 0 and answers[0]["plans"][0]["gpus"] == 8


def test_the_rollout_layout_is_not_the_limit_where_no_count_within_the_budget_takes_whole_nodes(cli, tmp_path: Path):
    # Your tables have 3 GPUs alone, which span nodes of 2 unevenly: no count within the budget is left for the
    # rollout's layout to rule out, so the reason does not blame the rollout GPU.
    cells = tmp_path / "cells.yaml"
    cells.write_text("gpu: MyAccel-64GB\nmemory_gb: 64\nsource: mine\ntables:\n  - gpus: 3\n    section: '3 x mine'\n"
                     "    models: [4B]\n    rows:\n      - {max_model_len: 8192, cells: {4B: Env}}\n", encoding="utf-8")
    status, out, _ = cli("--cells", str(cells), "--model", "4B", "--gpu", "MyAccel-64GB", "--gpus", "3", "--len",
                         "16384", "--no-estimate", "--node-gpus", "2", "--rollout-gpus", "1")
    assert status == 1 and ("no plan: nothing in the tables for Qwen3-4B on MyAccel-64GB within 3 GPUs trains; the "
                            "memory model estimates a plan, Env + SP=2 on 2 GPUs at 16384 tokens: drop --no-estimate "
                            "--explain") in " ".join(out.split())


def test_the_fewest_gpus_beside_a_rollout_name_what_the_trainer_alone_needs(cli, monkeypatch):
    # Qwen3-8B at 65536 tokens trains on 4 A100s, but 4 beside 8 rollout GPUs fill neither a node of 8 nor whole
    # nodes: the answer was 8 trainer GPUs with no word of why. A rollout of 4 leaves 4 a node: nothing to say.
    monkeypatch.setenv("COLUMNS", "400")
    asked = ("--model", "8B", "--gpu", "a100-80gb", "--len", "65536", "--minimize", "gpus", "--total-gpus", "16")
    status, out, _ = cli(*asked, "--rollout-gpus", "8")
    assert status == 0 and out.splitlines()[1] == (
        "plan           Env + SP=4 on 8 of 8 GPUs, with 8 rollout GPUs, trainer and rollout on 2 nodes of 8 (the "
        "trainer alone needs 4, Env + Offload + SP=4, but 4 + 8 rollout GPUs fill neither one node of 8 nor whole "
        "nodes: --rollout-gpus 12 fills 2 nodes with them)")
    status, answers = run_json(cli, *asked, "--rollout-gpus", "12")
    assert status == 0 and answers[0]["plans"][0]["gpus"] == 4 and "trainer_alone" not in answers[0]


def test_a_gpu_type_the_catalogue_lacks_is_planned_from_its_memory(cli, tmp_path: Path):
    # Your own GPU: calibrate on your cells, then plan for it by its memory (estimates only).
    cells = tmp_path / "cells.yaml"
    cells.write_text("gpu: MyAccel-64GB\nmemory_gb: 64\nsource: mine\ntables:\n  - gpus: 2\n    section: '2 x mine'\n"
                     "    models: [4B]\n    rows:\n      - {max_model_len: 8192, cells: {4B: Env}}\n", encoding="utf-8")
    coefficients = tmp_path / "mine.yaml"
    assert cli("calibrate", "--cells", str(cells), "--with-tables", "--out", str(coefficients))[0] == 0
    status, out, err = cli("--model", "4B", "--gpu", "MyAccel-64GB", "--gpu-memory", "64G", "--gpus", "2", "--len",
                           "8k", "--memory-model", str(coefficients), "--json")
    [answer] = json.loads(out)
    assert (status, answer["gpu"], answer["memory_model_source"]) == (
        0, "MyAccel-64GB", "calibrated on cells.yaml and the documented tables")  # the memory line's words
    assert err == ("solve: note: --gpu-memory 64GB is taken as 64 GiB, and as sold it borrows no other GPU type's "
                   "tables (64GiB or nvidia-smi's total would, where a GPU type's driver reports as much); a card may "
                   "report less than it is sold with, of HBM (an H100 80GB: 79.6 GiB) or of GDDR with ECC (an L40S "
                   "48GB: 45.0 GiB), so give nvidia-smi's total where you have it (--gpu-memory 81559MiB for an H100 "
                   "80GB, 46068MiB for an L40S)\n")
    assert answer["plans"] and all(plan["evidence"] == "estimated" for plan in answer["plans"])
    # The driver's MiB are what the memory model uses; nominal GB are taken as GiB.
    _, out, _ = cli("memory", "--model", "4B", "--gpu", "MyAccel", "--gpu-memory", "65536MiB", "--gpus", "2",
                    "--len", "8k", "--env", "--json")
    _, nominal, _ = cli("memory", "--model", "4B", "--gpu", "MyAccel", "--gpu-memory", "64GB", "--gpus", "2",
                        "--len", "8k", "--env", "--json")
    assert json.loads(out)["memory_gib"] == json.loads(nominal)["memory_gib"] == 64
    assert cli("--model", "4B", "--gpu", "h100", "--gpu-memory", "64", "--len", "8k") == (
        2, "", ("solve: error: --gpu h100 names H100-80GB (79.6 GiB), a GPU type whose memory is known: drop "
                "--gpu-memory, or give your GPU type a name of its own\n"))
    assert cli("--model", "4B", "--gpu-memory", "64", "--len", "8k") == (
        2, "", "solve: error: --gpu-memory gives the memory of the GPU type --gpu NAME names: give --gpu too\n")
    status, _, err = cli("--model", "4B", "--gpu", "x", "--gpu-memory", "64TB", "--len", "8k")
    assert status == 2 and err.endswith("argument --gpu-memory: expected 64, 64G or 64GB (as sold, whole), 64GiB or "
                                        "79.19GiB (torch's total capacity), or 65536MiB (nvidia-smi's total), got "
                                        "'64TB'\n")
    _, in_gib, err = cli("memory", "--model", "4B", "--gpu", "x", "--gpu-memory", "64GiB", "--gpus", "1", "--len",
                         "8k", "--json")
    assert err == ""
    assert json.loads(in_gib)["memory_gib"] == 64
    status, _, err = cli("--model", "4B", "--gpu", "x", "--gpu-memory", "1" * 5000, "--len", "8k")
    assert status == 2 and len(err) < 300 and "argument --gpu-memory: must be from 8 to 4096 (GB)" in err
    status, _, err = cli("--model", "4B", "--len", "1" * 5000)
    assert status == 2 and len(err) < 300 and "argument --len: must be a whole number of tokens from 1 to 1677" in err
    status, _, err = cli("--model", "4B", "--len", "-" + "1" * 5000)
    assert status == 2 and len(err) < 300 and "argument --len: must be a whole number of tokens from 1 to" in err
    status, _, err = cli("--model", "4B", "--len", "+-" + "9" * 5000)
    assert status == 2 and len(err) < 300 and "argument --len: expected a whole number, got '+-999" in err
    status, _, err = cli("--model", "4B", "--len", "8k", "--gpus", "9" * 5000)
    assert status == 2 and len(err) < 300 and "argument --gpus: must be a whole number from 1 to 65536, got 999" in err
    status, _, err = cli("--model", "4B", "--len", "8k", "--gpus", "-" + "9" * 5000)
    assert status == 2 and len(err) < 300 and "argument --gpus: must be a whole number from 1 to 65536, got -999" in err
    # Whole numbers are ASCII digits, with a sign and spaces around them at most: no _ (which int() reads as
    # nothing, 4_0 as 40).
    for flag, value in (("--gpus", "4_0"), ("--top", "1_0"), ("--len", "32_768"), ("--len", "1x")):
        status, _, err = cli("--model", "4B", "--gpu", "a100", "--len", "8k", flag, value)
        assert status == 2 and f"argument {flag}: expected a whole number" in err and repr(value) in err
    for given in (("--gpus", " +4 ", "--len", "8k"), ("--len", " 32k "), ("--len", "+32768"), ("--len", "32 k")):
        assert cli("--model", "4B", "--gpu", "a100", *given, "--json")[0] == 0
    for zeros in (4001, 5000):  # leading zeros count for nothing, however many
        assert cli("--model", "4B", "--gpu", "a100", "--len", "0" * zeros + "8192", "--json")[0] == 0
        _, out, _ = cli("memory", "--model", "4B", "--gpu", "x", "--gpu-memory", "0" * zeros + "80GB", "--gpus", "2",
                        "--len", "8k", "--json")
        assert json.loads(out)["memory_gib"] == 80
    _, out, _ = cli("memory", "--model", "4B", "--gpu", "x", "--gpu-memory", "000080", "--gpus", "2", "--len", "8k",
                    "--json")
    assert json.loads(out)["memory_gib"] == 80
    status, _, err = cli("--model", "4B", "--gpu", "a30", "--len", "8k")
    assert status == 2 and err.endswith("; or, for a GPU type of your own, give its memory: --gpu-memory SIZE\n")
    # The name is written into configs' comments: a blank one, or one with a line break, is refused.
    for name in ("", " ", "foo\nbar: 1"):  # a blank one as an empty name of --gpu's list (test_gpulist_s58)
        status, out, err = cli("--model", "4B", "--gpu", name, "--gpu-memory", "64", "--len", "8k", "--emit", "trinity")
        refused = ("a GPU type's name is printable text, got " if name.strip() else
                   f"argument --gpu: an empty name in {name!r}: give a GPU type, or several separated by commas")
        assert (status, out) == (2, "") and f"solve: error: {refused}" in err


def test_numbers_take_the_bounds_their_errors_name_and_a_k_in_either_case(cli):
    # A whole number's bounds are included: --top 1 to 100.
    assert cli("--model", "4B", "--gpu", "a100", "--len", "8k", "--top", "100", "--json")[0] == 0
    # --time-limit: above 0 and at most 1000000000, that included.
    assert cli("--model", "4B", "--gpu", "a100", "--len", "8k", "--time-limit", "1e9", "--json")[0] == 0
    # --host-ram: above 0 and at most 49152 GB (48 TB), that included.
    assert cli("--model", "4B", "--gpu", "a100", "--len", "8k", "--host-ram", "48TB", "--json")[0] == 0
    # A length's k is 1024 tokens, in either case.
    flags = ("--model", "4B", "--gpu", "a100", "--json")
    assert cli(*flags, "--len", "32K") == cli(*flags, "--len", "32768")


def test_a_lowered_token_budget_answers_trinity_rft_issue_398(cli, tmp_path):
    # Qwen2.5-7B at 131072 tokens within the six trainer GPUs of an 8 x H20 node: at Trinity's default budget
    # nothing fits (its 28 heads allow SP=4 on four GPUs, not on six); the no-plan reason names the lowered
    # budget that trains it, and --token-budget auto plans with it.
    query = ("--model", "Qwen2.5-7B", "--gpus", "6", "--len", "131072", "--gpu", "h20")
    status, [answer] = run_json(cli, *query)
    assert status == 1 and answer["plans"] == []
    status, [lowered] = run_json(cli, *query, "--token-budget", "auto")
    assert status == 0
    best = lowered["plans"][0]
    assert (best["gpus"], best["env"], best["offload"], best["sp"], best["evidence"]) == (4, True, False, 4, "estimated")
    tokens = best["max_token_len_per_gpu"]
    assert 131072 // 4 <= tokens < 2 * 131072 // 4 and tokens % 1024 == 0  # lowered: at least ceil(L / SP)
    assert best["headroom_gb"] >= 0  # the memory model's figures are at the lowered budget
    assert answer["reason"].endswith(f"; --token-budget auto trains 131072 tokens: Env + SP=4 on 4 GPUs with "
                                     f"max_token_len_per_gpu = {tokens} (estimated)")
    # Trinity 0.5.0 raises a role's budget below the default back to it (0.5.1 and later only to ceil(L / SP)): the
    # comment says so unless the fragment is for Trinity 0.6.
    lowered = "below Trinity's default ceil(2 * 131072 / 4), which does not fit; at least ceil(131072 / 4)"
    raised = "; Trinity 0.5.0 raises it back to the default: use 0.5.1 or later"
    for version, tail in (((), raised), (("--trinity-version", "0.5"), raised), (("--trinity-version", "0.6"), "")):
        status, out, err = cli(*query, "--token-budget", "auto", "--emit", "trinity", *version)
        # the key's line with its comment is past the width: the comment goes above it
        assert (status, err) == (0, "") and (
            fragment_comment(lowered + tail, "  ") + f"  max_token_len_per_gpu: {tokens}\n") in out
        # The plan's token budget line says it too, in the same words (--trinity-version needs a file to write for).
        status, out, err = cli(*query, "--token-budget", "auto", *version, "--out", str(tmp_path / "fragment.yaml"))
        assert status == 0 and f"more micro-batches, which the cost does not count{tail})" in " ".join(out.split())


REACH_4090 = ("; --token-budget auto reaches 29696 tokens on the 1024-token grid: Env + Offload + SP=2 on 2 GPUs with "
              "max_token_len_per_gpu = 14848 (estimated, extrapolated)")
"""How far --token-budget auto reaches for Qwen3-4B on two RTX 4090s: `solve --maximize len --token-budget auto`'s."""


def test_a_no_plan_line_says_how_far_a_lowered_budget_reaches_where_it_does_not_train_the_length(cli):
    # 32768 tokens on two 4090s: --token-budget auto does not train it either, but reaches 29696, past the default
    # budget's 14336; the line says so after the plan on more GPUs, as --maximize len --token-budget auto answers.
    # (At --margin 0.01, the figures these were written for: the card's default 0.06 is test_smallmargin_s61's.)
    status, out, err = cli("--model", "4B", "--len", "32k", "--gpus", "2", "--gpu", "4090", "--margin", "0.01")
    assert (status, err) == (1, "")
    assert (" Qwen3-4B on RTX-4090-24GB within 2 GPUs: the longest is 14336 on the 1024-token grid (Env + Offload + "
            "SP=2 on 2 GPUs, estimated, extrapolated); more trainer GPUs train 32768 tokens: Env + SP=8 on 8 GPUs "
            f"(estimated, extrapolated){REACH_4090} --explain says why") in " ".join(out.split())
    _, [longest] = run_json(cli, "--model", "4B", "--maximize", "len", "--gpus", "2", "--gpu", "4090",
                            "--token-budget", "auto", "--margin", "0.01")
    best = longest["plans"][0]
    assert (best["max_model_len"], best["gpus"], best["max_token_len_per_gpu"]) == (29696, 2, 14848)
    # --explain says it too, in its own words.
    status, out, _ = cli("--model", "4B", "--len", "32k", "--gpus", "2", "--gpu", "4090", "--margin", "0.01",
                         "--explain")
    assert status == 1 and ("lower_token_budget --token-budget auto reaches 29696 tokens on the 1024-token grid within "
                            "2 GPUs: Env + Offload + SP=2 on 2 GPUs at 29696 tokens with a lowered "
                            "max_token_len_per_gpu of 14848 (estimated:") in " ".join(out.split())


def test_a_no_plan_line_says_no_reach_where_a_lowered_budget_reaches_no_further(cli):
    # 8B on two A100s at SP=1 without Offload: the default budget's 4096 (documented) is the longest either way; a
    # query that lowers budgets already, or has no estimates, is told no reach either.
    queries = (("--model", "8B", "--len", "16k", "--gpus", "2", "--gpu", "a100-80g", "--no-offload", "--sp", "1"),
               ("--model", "4B", "--len", "32k", "--gpus", "2", "--gpu", "4090", "--token-budget", "auto"),
               ("--model", "8B", "--len", "64k", "--gpus", "1", "--gpu", "a100-80g", "--no-estimate"))
    for query in queries:
        for extra in ((), ("--explain",)):
            status, out, _ = cli(*query, *extra)
            text = " ".join(out.split())
            assert (status, "the longest is" in text, "reaches" in text) == (1, True, False), query
    # The same 8B query with estimates, at the default budget: it reaches 49152, past the table's 24576.
    status, out, _ = cli("--model", "8B", "--len", "64k", "--gpus", "1", "--gpu", "a100-80g")
    assert status == 1 and ("--token-budget auto reaches 49152 tokens on the 1024-token grid: Env + Offload on 1 GPU "
                            f"with max_token_len_per_gpu = 49152 (estimated; {ONE_GPU})") in " ".join(out.split())


def test_a_lowered_token_budget_never_shortens_the_longest_context(cli):
    for gpu in ("a100-80g", "h20"):
        _, [default] = run_json(cli, "--maximize", "len", "--gpus", "6", "--model", "4B", "--gpu", gpu)
        _, [lowered] = run_json(cli, "--maximize", "len", "--gpus", "6", "--model", "4B", "--gpu", gpu,
                                "--token-budget", "auto")
        assert lowered["plans"][0]["max_model_len"] > default["plans"][0]["max_model_len"]
        # What the tables vouch for keeps Trinity's default: the lowered plan's tables' best is the default answer.
        assert lowered["measured"]["max_model_len"] == default["plans"][0]["max_model_len"]
        assert default["plans"][0]["max_token_len_per_gpu"] == -(-2 * default["plans"][0]["max_model_len"]
                                                                 // default["plans"][0]["sp"])


@pytest.mark.parametrize(("flags", "message"), [
    (("--token-budget", "auto", "--no-estimate"),
     ("solve: error: --token-budget auto lowers the token budget of estimated plans, which --no-estimate turns off: "
      "drop one of them")),
    (("--token-budget", "4096.5"), ("solve: error: argument --token-budget: takes default, auto or the most tokens per "
                                    "GPU (a whole number: 32768 or 32k), got '4096.5'")),
])
def test_bad_token_budgets_are_refused_with_one_line(cli, flags: tuple[str, ...], message: str):
    status, out, err = cli("--model", "8B", "--gpus", "4", "--len", "65536", *flags)
    assert (status, out) == (2, "") and err.endswith(message + "\n")
    assert "Traceback" not in err


def test_explain_names_the_lowered_token_budget(cli):
    status, out, _ = cli("--model", "8B", "--len", "131072", "--gpus", "4", "--gpu", "h20", "--explain")
    assert status == 1
    assert ("lower_token_budget --token-budget auto trains 131072 tokens within 4 GPUs: Env + SP=4 on 4 GPUs at 131072 "
            "tokens with a lowered max_token_len_per_gpu of ") in " ".join(out.split())
    # and under auto, a table's out-of-memory row says why a lowered budget does not save a setting either
    status, out, _ = cli("--model", "8B", "--len", "100000", "--gpus", "4", "--gpu", "h20", "--token-budget", "auto",
                         "--explain")
    assert status == 0 and "(at Trinity's default budget; lowered, vanilla not estimated without Env; Env holds at " \
                           "most" in " ".join(out.split())


def test_on_an_exact_count_the_lowered_budget_hint_may_name_fewer_gpus(cli):
    # On exactly 6 H20s Qwen2.5-7B's heads allow SP=2 at most, which no budget saves at 131072; 4 of them, SP=4, do.
    status, [answer] = run_json(cli, "--model", "Qwen2.5-7B", "--gpus", "6", "--exact", "--len", "131072", "--gpu", "h20")
    assert status == 1
    assert answer["reason"].endswith("; with --token-budget auto fewer trainer GPUs train 131072 tokens: Env + SP=4 on "
                                     "4 GPUs with max_token_len_per_gpu = 40960 (estimated), the other 2 free for "
                                     "rollout")
    status, [answer] = run_json(cli, "--model", "Qwen2.5-7B", "--gpus", "6", "--exact", "--len", "131072", "--gpu", "h20",
                                "--token-budget", "auto")
    assert status == 1 and not answer["plans"]  # not on exactly 6: the hint says fewer


def test_on_an_exact_count_the_lowered_budget_hint_names_that_count_beside_fewer_gpus(cli):
    # Llama-3.1-8B at 65536 on exactly 6 A100s: 4 GPUs train it at the default budget, and a lower budget on
    # all 6 trains it too (more GPUs, cheaper); the reason names both, and the hint holds.
    status, [answer] = run_json(cli, "--model", "Llama-3.1-8B", "--gpus", "6", "--exact", "--len", "64k", "--gpu",
                                "a100-80g")
    assert status == 1 and answer["reason"].endswith(
        "; fewer trainer GPUs train 65536 tokens: Env + SP=4 on 4 GPUs (estimated, extrapolated), the other 2 free "
        "for rollout; --token-budget auto trains 65536 tokens: Env + SP=2 on 6 GPUs with max_token_len_per_gpu = "
        "40960 (estimated, extrapolated)")
    status, [answer] = run_json(cli, "--model", "Llama-3.1-8B", "--gpus", "6", "--exact", "--len", "64k", "--gpu",
                                "a100-80g",
                                "--token-budget", "auto")
    assert (status, answer["plans"][0]["gpus"], answer["plans"][0]["sp"], answer["plans"][0]["max_token_len_per_gpu"]
            ) == (0, 6, 2, 40960)


@pytest.mark.parametrize(("printed", "name"), [
    ("NVIDIA A100-SXM4-80GB", "A100-80GB"), ("NVIDIA A100 80GB PCIe", "A100-80GB"), ("NVIDIA H100 80GB HBM3", "H100-80GB"),
    ("NVIDIA H20", "H20-96GB"), ("NVIDIA GeForce RTX 4090", "RTX-4090-24GB"), ("AMD Instinct MI300X", "MI300X"),
    ("NVIDIA A800-SXM4-80GB", "A800-80GB"), ("NVIDIA A100-PCIE-40GB", "A100-40GB")])
def test_gpus_are_found_by_the_names_nvidia_smi_prints(cli, printed: str, name: str):
    status, out, err = cli("--model", "8B", "--gpu", printed, "--gpus", "4", "--len", "8k", "--json")
    assert (status, json.loads(out)[0]["gpu"]) == (0, name)
    pcie = "pcie" in printed.lower()  # PCIe cards of an SXM board's GPU type get a note (test_persona17_s67)
    assert (err.count("\n"), "PCIe cards" in err) == (int(pcie), pcie)


def test_a_yarn_factor_above_what_qwen_validates_is_cautioned(cli):
    _, out, _ = cli("--maximize", "len", "--gpus", "6", "--model", "4B", "--gpu", "a100")  # 102400: factor 2.5
    assert "(YaRN rope scaling, factor 2.5)" in out
    cards = "Qwen's model cards validate a factor of 4 over 32768 positions: 131072 tokens"
    # The row says "past the validated 131072" first, then why, once; what to do, the apply lines' comment below.
    row = f"; {cards})"
    _, out, _ = cli("--model", "8B", "--gpu", "h100", "--gpus", "8", "--len", "200000")  # factor 4.88
    assert f"200000, past the validated 131072 (YaRN rope scaling, factor 4.8828125{row}" in " ".join(out.split())
    # Qwen3's native 40960: 163840 tokens is a factor of 4, but beyond 131072; the written config says so too
    _, out, _ = cli("--model", "8B", "--gpu", "h200", "--gpus", "8", "--len", "160k")
    assert f"factor 4.0{row}" in " ".join(out.split())
    _, out, _ = cli("--model", "8B", "--gpu", "h200", "--gpus", "8", "--len", "160k", "--emit", "trinity")
    # the factor says why beside it; what to do, once, in the header
    beyond = f"max_model_len / 40960; longer than YaRN is validated for ({cards})"
    assert fragment_comment(beyond, "    ") + "    factor: 4.0\n" in out
    assert " ".join(out.split()).count("check the model's quality at this length") == 1
    _, out, _ = cli("--model", "8B", "--gpu", "h200", "--gpus", "8", "--len", "128k")  # factor 3.2, 131072 tokens
    assert "(YaRN rope scaling, factor 3.2)" in out
    _, out, _ = cli("--model", "8B", "--gpu", "h200", "--gpus", "8", "--len", "131073")  # one token past: 3.2000244...
    assert f"(YaRN rope scaling, factor 3.2000244140625{row}" in " ".join(out.split())
    assert "model.rope_scaling: {rope_type: yarn, factor: 3.2000244140625," in out  # the config takes it exactly


def test_the_yarn_caution_says_what_the_cards_factor_of_4_is_over_beside_a_smaller_factor(cli, tmp_path: Path):
    # Qwen2.5-7B's native context is 131072: any YaRN is past what the cards validate, at a factor of 1.45 too, so the
    # caution says that its native context already covers the cards' 131072 tokens (their factor of 4 being over
    # 32768 positions). A Qwen checkpoint of a native 4096 is held to 4 times it, and says so.
    cards = "Qwen's model cards validate a factor of 4 over 32768 positions: 131072"
    _, out, _ = cli("--model", "Qwen2.5-7B", "--gpu", "h200", "--gpus", "8", "--len", "190000")
    assert (f"190000, past the native 131072 (YaRN rope scaling, factor 1.4495849609375; {cards} tokens, which its "
            "native 131072 already covers)") in " ".join(out.split())
    short = qwen3_8b_checkpoint(tmp_path / "short-ctx", max_position_embeddings=4096)
    status, [answer] = run_json(cli, "--model-config", str(short), "--gpu", "h200", "--gpus", "8", "--len", "20000")
    assert status == 0 and answer["plans"][0]["yarn_beyond_validated"]
    assert answer["plans"][0]["cautions"][0] == (
        f"YaRN factor 4.8828125 at 20000 tokens: longer than YaRN is validated for ({cards} tokens; 4 times its native "
        "4096 is 16384): check the model's quality at this length")


def test_a_gpu_type_with_the_memory_of_one_with_tables_plans_with_its_tables(cli):
    # The A800-80GB has the A100-80GB's 81920 MiB: the A100's tables are its own. Its table for 2 GPUs says Env +
    # SP=2 for Qwen3-4B at 32768, where the memory model alone would take Env + Offload at twice the cost.
    status, [answer] = run_json(cli, "--model", "4B", "--gpu", "a800", "--gpus", "2", "--exact", "--len", "32k")
    assert (status, answer["gpu"], answer["plans"][0]["evidence"], answer["plans"][0]["source"]) == (
        0, "A800-80GB", "documented",
        {"model": "Qwen3-4B", "gpus": 2, "max_model_len": 32768, "setting": "Env + SP=2", "gpu": "A100-80GB"})
    _, out, _ = cli("--model", "8B", "--gpu", "a800", "--gpus", "4", "--len", "32k")
    words = " ".join(out.split())
    assert ("plan SP=4 on 4 of 4 GPUs" in words and "0.325 relative step time (best)" in words
            and "documented: the A100-80GB table for 4 GPUs (its GPU has the same memory as A800-80GB) "
                "says 'SP=4' at 32768" in words and "at least the memory" not in words)
    _, out, _ = cli("--model", "4B", "--gpu", "a800", "--gpus", "6", "--maximize", "len", "--explain")
    assert ("the A100-80GB table for 6 GPUs says '-' for Qwen3-4B from 61440 tokens to 71680, where its rows end"
            in " ".join(out.split()))
    # Without --gpus, the budget is its tables' largest count, as for the A100: 6.
    [a800], [a100] = (run_json(cli, "--model", "4B", "--len", "65536", "--gpu", gpu)[1] for gpu in ("a800", "a100-80g"))
    assert a800["budget_gpus"] == a100["budget_gpus"] == 6 and a800["plans"][0]["gpus"] == 4
    # The H800-80GB reports less memory (81559 MiB) than the A100: no table is its own.
    _, [h800] = run_json(cli, "--model", "4B", "--gpu", "h800", "--gpus", "2", "--exact", "--len", "32k")
    assert h800["plans"][0]["evidence"] == "estimated"


def test_one_gpu_is_one_gpu_in_words(cli):
    status, out, _ = cli("--model", "8B", "--gpu", "a800", "--gpus", "1", "--maximize", "len")
    words = " ".join(out.split())
    assert status == 0 and "Env + Offload on 1 of 1 GPU (none left for rollout)\n" in out
    assert "the A100-80GB table for 1 GPU (its GPU has the same memory as A800-80GB) says" in words
    assert "1 GPUs" not in words


def test_an_sp_group_as_large_as_the_budget_is_allowed(cli):
    status, out, _ = cli("--model", "4B", "--len", "32k", "--sp", "4", "--gpus", "4", "--gpu", "a100", "--json")
    assert status == 0 and json.loads(out)[0]["plans"][0]["sp"] == 4


@pytest.mark.parametrize("written", ["700", "700GB", "700GiB", "700 gb", "700GB "])
def test_host_memory_takes_gb_as_ram_is_sold(cli, written: str):
    # Read as 700 GiB: Qwen3-32B's Offload plan needs 664.2 of them (with 660, or 700 GB of 10^9 bytes, none trains).
    status, out, _ = cli("--model", "32B", "--gpu", "h100", "--gpus", "8", "--len", "32k", "--host-ram", written, "--json")
    [answer] = json.loads(out)
    assert (status, answer["host_ram_gb"], answer["plans"][0]["host_memory_gb"]) == (0, 700, 664.2)


def test_host_memory_in_another_unit_is_refused(cli):
    status, _, err = cli("--model", "32B", "--gpu", "h100", "--gpus", "8", "--len", "32k", "--host-ram", "1PB")
    assert status == 2 and err.endswith("error: argument --host-ram: expected 512, 512GB, 512GiB, 2TB, 503Gi (free -h), "
                                        "515870MiB (free -m) or 528280000kB (/proc/meminfo), got '1PB'\n")


@pytest.mark.parametrize("given", ["1TB", "1 tib", "1024", "1024GiB"])
def test_host_memory_in_tb_as_sold_is_1024_gib_each(cli, given: str):
    # 1 TB of RAM as sold is 1024 GiB: Qwen3-32B's Offload on one node of 8 H100s needs 664.2 GiB, which fits (on
    # Trinity 0.6, which loads it on rank 0 alone there; no release named, every rank's load leads).
    status, out, _ = cli("--model", "32B", "--gpu", "h100", "--gpus", "8", "--len", "32k", "--host-ram", given,
                         "--trinity-version", "0.6")
    assert status == 0 and "host memory    664.2 GiB per node" in out


@pytest.mark.parametrize(("given", "status", "says"), [
    ("0.64TB", 1, "trains with --host-ram 655.36 GiB;"), ("0.65 TB", 0, "host memory 664.2 GiB per node"),
    ("0.65tib", 0, "host memory 664.2 GiB per node")])
def test_a_fraction_of_a_tb_is_that_fraction_of_1024_gib(cli, given: str, status: int, says: str):
    # 664.2 GiB lies between 0.64 and 0.65 TB of 1024 GiB (a TB of 1000 would refuse both).
    got, out, _ = cli("--model", "32B", "--gpu", "h100", "--gpus", "8", "--len", "32k", "--host-ram", given)
    assert got == status and says in " ".join(out.split())


def test_the_most_host_memory_is_shown_in_digits(cli):
    # :g wrote 1024TB (1048576 GiB, the bound before 48 TB) as 1.04858e+06: neither the amount given nor one to paste
    # back. 48TB (49152 GiB) is the most now.
    status, out, _ = cli("--model", "4B", "--gpu", "h100", "--len", "8k", "--host-ram", "48TB", "--top", "100")
    words = " ".join(out.split())
    assert status == 0 and "each other plan that trains within --host-ram 49152 GiB is no cheaper" in words
    status, out, _ = cli("memory", "--model", "4B", "--gpu", "h100", "--gpus", "8", "--len", "8k", "--offload",
                         "--host-ram", "48TB")
    assert status == 0 and ", within --host-ram 49152 GiB" in " ".join(out.split())
    status, out, _ = cli("map", "--gpu", "h100", "--model", "4B", "--gpus-up-to", "1", "--host-ram", "48TB")
    assert status == 0 and out.startswith("H100-80GB: longest context per model and GPU budget, host memory 49152 GiB "
                                          "per node")


_NOTHING_FITS = ("the tables have no Qwen3-32B on x, and the memory model estimates that nothing fits (not "
                 "even 1024 tokens)")


@pytest.mark.parametrize(("flags", "says"), [
    (("--model", "0.6B", "--len", "4k", "--gpus", "1"),
     ("no plan: 4096 tokens is beyond what the tables and the memory model's estimates allow for Qwen3-0.6B on x "
      "within 1 GPU: the longest is 2048 on the 1024-token grid")),
    (("--model", "32B", "--gpus", "1", "--maximize", "len"), f"no plan: {_NOTHING_FITS}"),
    (("--model", "32B", "--gpus", "1", "--maximize", "len", "--explain"),
     (f"no plan: {_NOTHING_FITS} why memory_model on 1 GPU, the most within the budget: no table speaks for x (none "
      "has its memory); the memory model predicts at 1024 tokens: Env 512.5 GiB of 6.3 usable; Env + Offload 10.1 GiB "
      "of 6.3 usable")),
])
def test_a_gpu_too_small_for_a_grid_step_has_no_plan_and_says_so(cli, flags: tuple[str, ...], says: str):
    # 8 GiB hold no 1024 tokens of Qwen3-32B on one GPU, nor 4096 of Qwen3-0.6B: no plan, exit 1, no traceback.
    status, out, err = cli("--gpu", "x", "--gpu-memory", "8GiB", *flags)
    assert (status, err) == (1, "") and says in " ".join(out.split())


def interrupted(*args: Any, **kwargs: Any) -> None:
    raise KeyboardInterrupt  # as Ctrl-C does while a command works out its answer


@pytest.mark.parametrize(("name", "argv", "prog"), [
    ("answer_query", ("--model", "4B", "--len", "8k"), "solve"),
    ("memory_answer", ("memory", "--model", "4B", "--gpu", "a100", "--gpus", "4", "--len", "8k"), "solve memory"),
])
def test_ctrl_c_while_a_command_works_is_one_line_and_status_130(cli, monkeypatch: pytest.MonkeyPatch, name: str,
                                                                 argv: tuple[str, ...], prog: str):
    monkeypatch.setattr(solver.api, name, interrupted)  # the library call the command makes
    assert cli(*argv) == (130, "", f"{prog}: interrupted\n")


def test_ctrl_c_while_the_command_loads_is_one_line_and_status_130():
    # A Ctrl-C in the first tenths of a second lands while solver.cli and its libraries load: made so here.
    script = ("import builtins, sys\nreal = builtins.__import__\n"
              "def interrupted(name, *args, **kwargs):\n"
              "    if name == 'solver.cli':\n        raise KeyboardInterrupt\n"
              "    return real(name, *args, **kwargs)\n"
              "builtins.__import__ = interrupted\nfrom solver.__main__ import main\nsys.exit(main())\n")
    process = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert (process.returncode, process.stdout, process.stderr) == (130, "", "solve: interrupted\n")


def test_a_library_that_fails_to_load_of_itself_is_no_interrupt():
    # An import that fails for a reason of its own (a missing library), not from Ctrl-C, is a bug to see: its
    # traceback and status 70 (not 1, which says an answer has no plan), not "solve: interrupted".
    script = ("import builtins, sys\nreal = builtins.__import__\n"
              "def missing(name, *args, **kwargs):\n"
              "    if name == 'solver.cli':\n        raise ModuleNotFoundError(\"No module named 'ortools'\")\n"
              "    return real(name, *args, **kwargs)\n"
              "builtins.__import__ = missing\nfrom solver.__main__ import main\nsys.exit(main())\n")
    process = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert (process.returncode, process.stdout) == (70, "")
    assert process.stderr.endswith("ModuleNotFoundError: No module named 'ortools'\nsolve: internal error (the "
                                   "traceback above): no answer, and no bad input; exit status 70\n")


@pytest.mark.skipif(os.name == "nt", reason="POSIX signals")
@pytest.mark.parametrize("ctrl_c", ["default", "ignored"])
def test_a_request_to_end_while_the_command_loads_says_terminated_and_exits_143(ctrl_c: str):
    # SIGTERM in the first tenths of a second lands while solver.cli and its libraries load: held there until it comes.
    script = ("import builtins, signal, sys, time\nreal = builtins.__import__\n"
              "signal.signal(signal.SIGINT,\n"
              "              signal.SIG_IGN if sys.argv[1] == 'ignored' else signal.default_int_handler)\n"
              "def loading(name, *args, **kwargs):\n"
              "    if name == 'solver.cli':\n        print('loading', flush=True)\n        time.sleep(60)\n"
              "    return real(name, *args, **kwargs)\n"
              "builtins.__import__ = loading\nfrom solver.__main__ import main\nsys.exit(main())\n")
    assert signalled_after(script, ("loading\n",), signal.SIGTERM, argv=(ctrl_c,)) == (143, "", "solve: terminated\n")


@pytest.mark.skipif(os.name == "nt", reason="POSIX signals")
def test_a_request_to_end_that_the_parent_ignores_stays_ignored_while_the_command_loads():
    # A parent that ignores SIGTERM (nohup-like launchers) hands that on: the command loads and answers as if none came.
    script = ("import builtins, signal, sys, time\nreal = builtins.__import__\n"
              "signal.signal(signal.SIGTERM, signal.SIG_IGN)\nsys.argv = ['solve', '--version']\n"
              "def loading(name, *args, **kwargs):\n"
              "    if name == 'solver.cli':\n        print('loading', flush=True)\n        time.sleep(1)\n"
              "    return real(name, *args, **kwargs)\n"
              "builtins.__import__ = loading\nfrom solver.__main__ import main\nsys.exit(main())\n")
    status, out, err = signalled_after(script, ("loading\n",), signal.SIGTERM)
    assert (status, err) == (0, "") and out.startswith("solve ")


@pytest.mark.skipif(os.name == "nt", reason="POSIX signals")
def test_ctrl_c_or_a_request_to_end_while_the_interpreter_exits_leaves_the_answers_status():
    # Once the command returns, the process runs its exit handlers and flushes its streams, then ends (Python's own
    # exit, which it leaves to where a flush fails, tears the modules down for 0.6 to 0.9 s after solve cluster's last
    # line, s92): a Ctrl-C or SIGTERM then killed it by the signal (status -2 or -15, 130 or 143 to a shell), silently,
    # where the answer and its files were whole and its status 1. Made so here by an exit handler that waits.
    script = ("import atexit, builtins, sys, time, types\nreal = builtins.__import__\n"
              "def answered():\n    print('answered', flush=True)\n    return 1\n"
              "def exiting():\n    print('exiting', flush=True)\n    time.sleep(0.5)\n"
              "atexit.register(exiting)\n"
              "def loading(name, *args, **kwargs):\n"
              "    if name == 'solver.cli':\n        return types.SimpleNamespace(main=answered)\n"
              "    return real(name, *args, **kwargs)\n"
              "builtins.__import__ = loading\nfrom solver.__main__ import main\nsys.exit(main())\n")
    assert signalled_after(script, ("answered\n", "exiting\n"), signal.SIGINT, signal.SIGTERM) == (1, "", "")


START_UP = """\
import gc, io, sys
from contextlib import redirect_stdout
import solver.__main__
before = gc.get_threshold()
solver.__main__._collect_after_start_up()
runs = []
gc.callbacks.append(lambda phase, info: runs.append(phase))
sys.argv = ["solve", "--maximize", "len", "--gpus", "6", "--model", "4B", "--gpu", "a100"]
with redirect_stdout(io.StringIO()):
    status = solver.__main__.run()
ran, held = list(runs), gc.get_threshold()[0]
gc.collect()
print(status, ran, held == solver.__main__.START_UP_OBJECTS, gc.get_threshold() == before)
"""
"""A script that runs the planner with the garbage collector as ``solve`` sets it, then says its status, the
collections that ran (none, whose phases would be listed), whether the first is still held, and whether one collection
brings the interpreter's thresholds back."""


def test_the_garbage_collector_waits_out_the_start_up_then_collects_as_before():
    # s93: loading the modules and the tables makes about 170,000 objects that all live on; the collector's default
    # thresholds traversed them again and again (4.8% of the main job's instructions). Held until START_UP_OBJECTS
    # are made, it runs not once in the main job, and after its first run its thresholds are the interpreter's own.
    result = subprocess.run([sys.executable, "-c", START_UP], capture_output=True, text=True, timeout=300, check=False)
    assert result.stdout == "0 [] True True\n", result.stderr


def test_solve_holds_the_collector_from_its_start_and_leaves_thresholds_set_later_alone(
        monkeypatch: pytest.MonkeyPatch):
    # mutants59: `solve` (main) holds the first run before the command runs; once the first run brought the
    # interpreter's thresholds back, the callback that did so, which stays, leaves thresholds set later as they are
    before, callbacks = gc.get_threshold(), list(gc.callbacks)
    monkeypatch.setattr(solver.__main__, "run", lambda: gc.get_threshold()[0])
    monkeypatch.setattr(solver.__main__, "_exit_at_once", sys.exit)
    try:
        with pytest.raises(SystemExit) as done:
            solver.__main__.main()
        assert done.value.code == solver.__main__.START_UP_OBJECTS
        gc.collect()
        assert gc.get_threshold() == before
        gc.set_threshold(before[0] + 1, *before[1:])
        gc.collect()
        assert gc.get_threshold() == (before[0] + 1, *before[1:])
    finally:
        gc.set_threshold(*before)
        gc.callbacks[:] = callbacks


def test_a_collector_run_another_way_keeps_its_way():
    # A host that turned the collector off, or set its first threshold to 0, keeps it as it was.
    before, callbacks = gc.get_threshold(), list(gc.callbacks)
    gc.disable()
    try:
        solver.__main__._collect_after_start_up()
        assert gc.get_threshold() == before and not gc.isenabled()
        gc.enable()
        gc.set_threshold(0, *before[1:])  # mutants59: enabled, its first threshold 0 (automatic runs off)
        solver.__main__._collect_after_start_up()
        assert (gc.get_threshold(), gc.callbacks) == ((0, *before[1:]), callbacks)
    finally:
        gc.enable()
        gc.set_threshold(*before)
        gc.callbacks[:] = callbacks


def signalled_after(script: str, lines: tuple[str, ...], *signals: signal.Signals,
                    argv: tuple[str, ...] = ()) -> tuple[int, str, str]:
    """The exit status, output and errors of Python running `script` with `argv`, sent `signals` once it has printed
    `lines`."""
    with subprocess.Popen([sys.executable, "-c", script, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as process:
        assert process.stdout is not None
        for line in lines:
            assert process.stdout.readline() == line
        for number in signals:
            process.send_signal(number)
        out, err = process.communicate(timeout=60)
    return process.returncode, out, err


def stopped_loading(*args: Any, **kwargs: Any) -> None:
    # A C extension (OR-Tools' pybind11 modules) that Ctrl-C stops while it initializes raises an ImportError from it
    raise ImportError("initialization failed") from KeyboardInterrupt()


def missing_library(*args: Any, **kwargs: Any) -> None:
    raise ModuleNotFoundError("No module named 'ortools'")


def test_ctrl_c_while_a_library_loads_is_one_line_and_status_130(cli, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(solver.api, "answer_query", stopped_loading)
    assert cli("--model", "4B", "--len", "8k") == (130, "", "solve: interrupted\n")
    monkeypatch.setattr(solver.api, "answer_query", missing_library)
    with pytest.raises(ModuleNotFoundError, match="ortools"):  # an import that fails of itself is a bug to see
        cli("--model", "4B", "--len", "8k")


def test_an_extrapolated_estimate_with_little_room_gets_a_caution(cli):
    # Qwen3-8B on 8 RTX 4090s: 24 GiB cards, beyond the calibration's 80 to 96 GiB, at 0.0 GiB to spare (the longest
    # length ends at the edge of the room).
    status, out, _ = cli("--model", "8B", "--gpu", "rtx-4090", "--gpus", "8", "--maximize", "len")
    assert status == 0 and "caution        0.0 GiB to spare where the estimate extrapolates" in out
    # A documented plan, or an estimate within its calibration, gets none.
    assert "caution" not in cli("--maximize", "len", "--gpus", "6", "--model", "4B", "--gpu", "a100")[1]
    # On cards of 48 GiB or less, where estimates run about a GiB optimistic, the default margin holds that GiB back
    # (0.06 on a 24 GiB card), and the room beyond it is thin below 1 GiB as on any card: Qwen3-0.6B on 2 RTX 4090s
    # at 16384 has 1.48 - 0.05 x 22.27 usable with Env = 0.4 GiB.
    status, out, _ = cli("--model", "0.6B", "--gpu", "rtx-4090", "--gpus", "2", "--len", "16k")
    assert status == 0 and "caution        0.4 GiB to spare where the estimate extrapolates" in out

    # The room beyond a card's default margin (`MarginRoom.default`) is thin below 1 GiB, whatever the card's size.
    beyond, codes = ("8 GPUs (calibrated up to 6)",), (BeyondCode.MORE_GPUS,)
    at_default = MarginRoom(0.01, 0.01, 70.0)
    assert [bool(thin_headroom(room, beyond, memory, at_default, codes)) for room, memory in (
        (1.5, 79.6), (0.9, 79.6), (1.5, 48.0), (0.9, 44.99), (1.0, 24.0), (0.5, 24.0))] == [
        False, True, False, True, False, True]
    assert thin_headroom(0.5, (), 24.0, at_default, ()) == ""  # within the calibration


def test_a_thin_caution_names_the_margin_that_keeps_its_room_and_counts_a_raised_one(cli):
    # Qwen3-0.6B on 2 RTX 4090s at 16384 tokens: 0.4 GiB to spare at the card's default margin 0.06, which holds back
    # the GiB a 24 GiB card's estimates run optimistic by. The caution says so of this card, and names the margin that
    # keeps 1 GiB more than the default's: 0.06 + 1 / 22.27 GiB usable with Env (0.9285 of 23.99), 0.1049, rounded up:
    # 0.11, which keeps 0.05 x 22.27 = 1.1 GiB more, as it says.
    status, out, _ = cli("--model", "0.6B", "--gpu", "rtx-4090", "--gpus", "2", "--len", "16k")
    said = " ".join(out.split())
    assert status == 0 and ("caution 0.4 GiB to spare where the estimate extrapolates, and its error there is "
                            "unmeasured (on cards of at most 48 GiB, as this one, it runs optimistic by about a GiB, "
                            "which the default margin here keeps: docs/memory.md in rft-solver's source); --margin 0.11 "
                            "keeps 1.1 GiB more to spare than the default 0.06 here, or measure a step first") in said
    # Maximising always ends at the edge of the room, so at the default Qwen3-1.7B's longest length on 2 RTX 4090s is
    # cautioned, naming the same margin; at that margin what it holds back beyond the default (0.05 x 22.27 = 1.1
    # GiB) counts as room to spare, so the 0.2 GiB left at its own edge gets no caution.
    _, out, _ = cli("--model", "1.7B", "--gpu", "rtx-4090", "--gpus", "2", "--maximize", "len")
    assert "0.0 GiB to spare where" in out and "--margin 0.11 keeps 1.1 GiB" in " ".join(out.split())
    status, out, _ = cli("--model", "1.7B", "--gpu", "rtx-4090", "--gpus", "2", "--maximize", "len", "--margin", "0.11")
    assert status == 0 and "0.2 GiB to spare (memory model; margin 0.11" in out and "GiB to spare where" not in out
    assert out.count("caution") == 1 and "caution        SP=2 on RTX-4090-24GB cards" in out  # only SP over PCIe's
    # On a larger card, 1 GiB: 0.01 + 1 / 73.9 GiB usable with Env on an H100, rounded up: 0.03, which keeps 0.02 x
    # 73.9 = 1.5 GiB more.
    assert "--margin 0.03 keeps 1.5 GiB more to spare than the default 0.01 here" in " ".join(cli(
        "--model", "qwen2.5-7b-instruct", "--gpu", "h100", "--gpus", "8", "--maximize", "len")[1].split())
    # A margin below the default holds back less: thinner room than the headroom alone says (0.05 on a 24 GiB card,
    # whose default is 0.06, holds back 0.01 x 22 = 0.22 GiB less: 1.1 to spare is under 1.22).
    beyond, codes = ("24 GiB GPUs (calibrated on 80 to 96 GiB)",), (BeyondCode.OTHER_GPU_MEMORY,)
    assert thin_headroom(1.1, beyond, 24.0, MarginRoom(0.05, 0.06, 22.0), codes).startswith("1.1 GiB to spare")
    assert thin_headroom(1.1, beyond, 24.0, MarginRoom(0.06, 0.06, 22.0), codes) == ""
    assert MarginRoom(0.01, 0.01, 50.0).keeping(2.0) == 0.05  # exactly 0.05: not rounded up past it
    assert MarginRoom(0.02, 0.02, 10.0).keeping(1.0) == 0.12  # 12.000000000000002 hundredths in floats: still 0.12


RANKED_4B_H20_BLOCKS = [
    "ranked plans",
    "#1  GPUs           4/4",
    "    setting        SP=2",
    "    max_model_len  32768",
    "    tokens/GPU     32768",
    "    cost           0.275 (best)",
    "    evidence       documented",
    "    source cell    4 GPUs @ 32768: SP=2",
    "#2  GPUs           2/4",
    "    setting        SP=2",
    "    max_model_len  32768",
    "    tokens/GPU     32768",
    "    cost           0.55 (2.00x #1)",
    "    evidence       documented",
    "    source cell    2 GPUs @ 32768: SP=2",
    "#3  GPUs           1/4",
    "    setting        Env + Offload",
    "    max_model_len  32768",
    "    tokens/GPU     65536",
    "    host GiB/node  93.4",  # a plan without Offload has no host need: no row for the empty cell
    "    cost           2.02 (7.35x #1)",
    "    evidence       documented",
    "    source cell    1 GPU @ 32768: Env + Offload",
]
"""The guide's `--top 4` ranking on 4 H20s (its table needs 106 columns) as a narrower terminal shows it: a block per
plan."""


@pytest.mark.parametrize(("columns", "blocks"), [(60, True), (80, True), (94, True), (101, True), (105, True),
                                                 (106, False), (120, False)])
def test_a_terminal_too_narrow_for_the_ranking_shows_a_block_per_plan(cli, monkeypatch: pytest.MonkeyPatch,
                                                                      columns: int, blocks: bool):
    # The table needs 106 columns; on fewer, rich would break its words: into 3-column slivers ('SP=' over '2'), or
    # from its minimum width (94) to 101 'document' over 'ed', as it narrows the widest wrapping columns first.
    # Each plan's cells, whole, beside their headers instead; where the table fits, the table, every word whole.
    screen = io.StringIO()
    monkeypatch.setattr(solver.cli.output, "new_console", lambda width=160: Console(
        width=columns, force_terminal=True, color_system=None, file=screen, **solver.render.PLAIN_TEXT))
    status, _, err = cli("--model", "4B", "--len", "32k", "--gpus", "4", "--gpu", "h20", "--top", "4")
    lines = [line.rstrip() for line in screen.getvalue().split("\n")]
    start = lines.index("ranked plans")
    assert (status, err) == (0, "")  # no note: nothing is cut or broken
    assert (lines[start:start + len(RANKED_4B_H20_BLOCKS)] == RANKED_4B_H20_BLOCKS) == blocks
    assert (lines[start + 1].startswith("┏━━━┳━━━━━━┳")) != blocks
    assert max(len(line) for line in lines[start:]) <= columns
    assert " ".join(lines[start:]).count(" documented ") == 3


def test_a_block_shades_the_setting_itself_not_its_column(cli, monkeypatch: pytest.MonkeyPatch):
    # On 80 columns, in colour: each plan's setting is shaded (as in the table) over its text, and the spaces up to
    # the widest value ('1 GPU @ 32768: Env + Offload', 28 columns) are not.
    screen = io.StringIO()
    monkeypatch.setattr(solver.cli.output, "new_console", lambda width=160: Console(
        width=80, force_terminal=True, color_system="truecolor", file=screen, **solver.render.PLAIN_TEXT))
    status, _, _ = cli("--model", "4B", "--len", "32k", "--gpus", "4", "--gpu", "h20", "--top", "4")
    settings = [line.split("setting", 1)[1] for line in screen.getvalue().split("\n") if "setting  " in line]
    # In truecolor, as a terminal of today shows it.
    assert status == 0 and settings == ["        \x1b[30;48;2;255;245;157mSP=2\x1b[0m" + " " * 24] * 2 + [
        "        \x1b[37;48;2;229;57;53mEnv + Offload\x1b[0m" + " " * 15]


def test_the_apply_block_folds_on_a_narrow_terminal_rather_than_cut(cli, monkeypatch: pytest.MonkeyPatch):
    # On 40 columns a config key wider than its column breaks onto the next line: every character is there.
    screen = io.StringIO()
    monkeypatch.setattr(solver.cli.output, "new_console", lambda width=160: Console(
        width=40, force_terminal=True, color_system=None, file=screen, **solver.render.PLAIN_TEXT))
    status, _, err = cli("--model", "14B", "--gpu", "a100-80g", "--len", "64k")
    assert (status, err) == (0, "")  # no note: the summary's words fold; only a ranking needs its columns
    shown = screen.getvalue()
    assert "…" not in shown and "trainer.max_token_len_per_gpu" in "".join(line.strip() for line in shown.splitlines())


def test_a_cell_of_fewer_gpus_vouches_for_no_setting_a_gpu_type_with_more_memory_refutes(cli, tmp_path: Path):
    # Measured: SP=2 trains Qwen3-4B at 40960 on 2 H100s. On 4 H100s the cell would vouch for SP=2 (what trains on
    # fewer GPUs trains on more), but the A100's table for 4 GPUs, whose GPU has at least the H100's memory, says
    # 'Env + SP=2' at 40960: SP=2 ran out of memory there first.
    cells = tmp_path / "two.yaml"
    cells.write_text("gpu: H100-80GB\nmemory_gb: 80\nsource: made up\ntables:\n  - gpus: 2\n    section: 2 x H100\n"
                     "    models: [Qwen3-4B]\n    rows:\n      - {max_model_len: 40960, cells: {Qwen3-4B: SP=2}}\n",
                     encoding="utf-8")
    flags = ["--model", "4B", "--gpu", "h100", "--cells", str(cells), "--len", "40960", "--no-estimate"]
    status, out, _ = cli(*flags, "--gpus", "4", "--exact")
    assert status == 1 and ("no plan: nothing in the tables for Qwen3-4B on H100-80GB on exactly 4 GPUs trains; fewer "
                            "trainer GPUs train 40960 tokens: SP=2 on 2 GPUs (documented), the other 2 free for "
                            "rollout; the memory model estimates a plan, Env + SP=2 on 4 GPUs at 40960 tokens: drop "
                            "--no-estimate --explain says why") in " ".join(out.split())
    status, out, _ = cli(*flags, "--gpus", "2", "--exact")  # on its own count the cell stands
    assert status == 0 and ("documented: the H100-80GB table for 2 GPUs of your cells (made up) says 'SP=2' at 40960"
                            in " ".join(out.split()))
    # No table for 1 GPU, and none for fewer GPUs to vouch for it: that count needs the estimates.
    status, out, _ = cli(*flags, "--gpus", "1", "--exact")
    assert status == 1 and ("no plan for exactly 1 trainer GPU with Qwen3-4B on H100-80GB (counts with a plan at some "
                            "length: 2); other counts need estimates, which --no-estimate turns off") in " ".join(
        out.split())


def test_no_estimate_says_where_the_estimates_give_a_plan(cli):
    # The tables have no Qwen3-32B; the memory model's estimates, which --no-estimate turns off, train it: the reason
    # says so, as the solver found it. Where they give no plan either, it says nothing of them.
    status, out, _ = cli("--model", "32B", "--len", "32k", "--gpu", "a100", "--no-estimate")
    assert (status, out.splitlines()[1]) == (1, (
        "no plan: the tables have no Qwen3-32B on A100-80GB; the memory model estimates a plan, Env + Offload + SP=2 "
        "on 6 GPUs at 32768 tokens: drop --no-estimate"))
    [answer] = json.loads(cli("--model", "8B", "--len", "160k", "--gpus", "8", "--gpu", "h20", "--no-estimate",
                              "--json")[1])
    assert answer["reason"] == (
        "163840 tokens is beyond what the tables allow for Qwen3-8B on H20-96GB within 8 GPUs: the longest is 122880 "
        "(Env + Offload + SP=4 on 8 GPUs, inferred); the memory model estimates a plan, Env + SP=8 on 8 GPUs at 163840 "
        "tokens: drop --no-estimate")
    for flags in (["--no-estimate"], []):  # 400000 tokens trains neither way, whatever limits are lifted
        status, out, _ = cli("--model", "14B", "--len", "400000", "--gpu", "a100", *flags)
        assert status == 1 and "beyond what the tables" in out and "drop --no-estimate" not in out


def test_no_estimate_says_where_host_memory_rules_out_the_estimates_plan_too(cli):
    # With --host-ram 400 the estimates' plan for Qwen3-32B (Offload on 8 A100s beside an 8-GPU rollout) needs more
    # host memory than that: the reason names the plan and its need, and does not say to drop --no-estimate.
    # Trinity 0.5.1 keeps verl's rule (rank 0 alone loads the untied model), so 700 GB hold it.
    flags = ("--model", "32B", "--gpu", "a100", "--len", "32k", "--gpus", "8", "--rollout-gpus", "8", "--no-estimate",
             "--trinity-version", "0.5.1")
    status, out, _ = cli(*flags, "--host-ram", "400")
    assert status == 1 and ("no plan: the tables have no Qwen3-32B on A100-80GB; the memory model estimates a plan, "
                            "Env + Offload + SP=2 on 8 GPUs at 32768 tokens, but with Offload it needs 594.2 GiB of "
                            "host memory per node, more than --host-ram 400") in " ".join(out.split())
    status, out, _ = cli(*flags, "--host-ram", "700")
    assert status == 1 and "at 32768 tokens: drop --no-estimate" in " ".join(out.split())


def test_no_estimate_names_the_least_host_memory_of_the_estimates_plans_too(cli):
    # The estimates' fewest H100s for Qwen3-8B offload 183.0 GiB per node; Env + SP=4 on 4 needs only the 71.2 GiB
    # the model takes while it loads on rank 0 alone (Trinity 0.6 on H100s). Both are more than 16: the reason names
    # the least as well, as without --no-estimate.
    flags = ("--model", "8B", "--len", "32k", "--gpus", "4", "--gpu", "h100", "--host-ram", "16", "--no-estimate",
             "--trinity-version", "0.6")
    status, out, _ = cli(*flags, "--minimize", "gpus")
    assert status == 1 and ("no plan: the tables have no Qwen3-8B on H100-80GB; the memory model estimates a plan, "
                            "Env + Offload + SP=2 on 2 GPUs at 32768 tokens, but with Offload it needs 183.0 GiB of "
                            "host memory per node, more than --host-ram 16 GiB; at the least, Env + SP=4 on 4 GPUs "
                            "trains it (32768 tokens), and it needs 71.2 GiB of host memory per node while the model "
                            "loads --explain says why") in " ".join(out.split())
    status, out, _ = cli(*flags)  # the cheapest plan needs the least already: no second one is named
    assert status == 1 and ("Env + SP=4 on 4 GPUs at 32768 tokens, but it needs 71.2 GiB of host memory per node "
                            "while the model loads, more than --host-ram 16 GiB --explain says why") in " ".join(
        out.split())


def test_no_estimate_names_an_estimate_on_one_gpu_in_the_singular(cli):
    status, out, _ = cli("--model", "4B", "--gpu", "h100", "--len", "8192", "--minimize", "gpus", "--no-estimate")
    assert status == 1 and ("no plan: the tables have no Qwen3-4B on H100-80GB; the memory model estimates a plan, "
                            f"Env + Offload on 1 GPU at 8192 tokens ({ONE_GPU}): drop --no-estimate"
                            ) in " ".join(out.split())


def test_the_host_memory_a_refusal_names_is_per_node_of_the_node_gpus_given(cli):
    # Qwen3-32B's Offload on 8 A100s needs 594.2 GiB on one node of 8 under Trinity 0.5.1 (rank 0 alone loads it, and
    # training, which holds the states, is the peak); on two nodes of 4 they share its states: 297.1 GiB each, with
    # estimates off (their plan beside an 8-GPU rollout) and on (the plan without --host-ram).
    flags = ("--model", "32B", "--gpu", "a100", "--len", "32k", "--gpus", "8", "--host-ram", "200", "--node-gpus", "4",
             "--trinity-version", "0.5.1")
    status, out, _ = cli(*flags, "--rollout-gpus", "8", "--no-estimate")
    assert status == 1 and ("the memory model estimates a plan, Env + Offload + SP=2 on 8 GPUs at 32768 tokens, but "
                            "with Offload it needs 297.1 GiB of host memory per node, more than --host-ram 200 GiB "
                            "--explain") in " ".join(out.split())
    status, out, _ = cli(*flags)
    assert status == 1 and ("without --host-ram, Env + Offload + SP=2 on 8 GPUs trains it (32768 tokens), and with "
                            "Offload it needs 297.1 GiB of host memory per node; on nodes of 4 GPUs (--node-gpus) an "
                            "SP group stays within one node, so SP=4 at most; --token-budget auto reaches 9216 "
                            "tokens on the 1024-token grid: Env + SP=4 on 8 GPUs with max_token_len_per_gpu = 2304 "
                            "(estimated, extrapolated) --explain") in " ".join(out.split())

def test_a_budget_past_the_largest_trainer_says_why_gpus_are_left(cli):
    # Plans take at most 64 trainer GPUs: the rest of a budget of 100 is left, and the plan line says why.
    status, out, _ = cli("--model", "4B", "--len", "32k", "--gpus", "100", "--gpu", "a100")
    assert status == 0 and ("plan           SP=2 on 64 of 100 GPUs, 8 whole nodes of 8 (36 left for rollout; plans "
                            "take at most 64 trainer GPUs)") in out
    status, out, _ = cli("--model", "4B", "--len", "32k", "--gpus", "64", "--gpu", "a100")
    assert status == 0 and "plans take at most" not in out


def test_a_trainer_past_one_node_says_so_in_its_plan_line_and_fragment(cli):
    # Without --rollout-gpus no cluster section names the nodes: the plan line and the fragment's header do.
    flags = ("--model", "32B", "--gpu", "h100", "--len", "64k")
    status, out, _ = cli(*flags, "--gpus", "20")
    assert status == 0 and "plan           Env + SP=8 on 16 of 20 GPUs, 2 whole nodes of 8 (4 left for rollout)\n" \
        in out
    fewest = cli(*flags, "--minimize", "gpus", "--node-gpus", "4", "--no-offload")[1]
    assert "plan           Env + SP=4 on 44 GPUs, 11 whole nodes of 4\n" in fewest
    # One whole node is no span: the plan line names no nodes.
    whole = cli(*flags, "--gpus", "8")[1]
    assert ("plan           Env + Offload + SP=4 on 8 of 8 GPUs (none left for rollout)\nfor rollout    --total-gpus 8 "
            "--rollout-gpus 4 ") in whole
    fragment = cli(*flags, "--gpus", "16", "--emit", "trinity")[1]
    assert ("#\n# The trainer spans 2 whole nodes of 8 GPUs: your cluster.node_num x gpu_per_node must hold them and\n"
            "# the rollout's GPUs (--rollout-gpus R, or solver.plan's rollout_gpus, writes that section).\n#\n"
            ) in fragment
    assert "cluster:" not in fragment
    for given in (("--gpus", "8"), ("--gpus", "16", "--rollout-gpus", "8")):  # one node, or a cluster section
        assert "The trainer spans" not in cli(*flags, *given, "--emit", "trinity")[1]


def test_an_estimate_alone_says_what_the_tables_say_of_it(cli):
    # --estimate plans from the memory model alone: Qwen3-4B reaches 110592 on 4 A100s with Env + Offload + SP=4,
    # where the 4-GPU table says '-' at 112640 (the row that length falls to); the planner stops at 102400.
    flags = ["--maximize", "len", "--gpus", "6", "--model", "4B", "--gpu", "a100"]
    status, out, _ = cli(*flags, "--estimate")
    assert status == 0 and "max_model_len  110592" in out
    assert ("tables         it runs out of memory (the A100-80GB table for 4 GPUs says '-' at 112640: the source's "
            "cells read as the first setting that trained in their order, '-' where none did, so this setting, or one "
            "that includes it, ran out of memory there); the table, a measurement, decides: drop --estimate to plan "
            "with it") in " ".join(out.split("\n               "))
    [answer] = json.loads(cli(*flags, "--estimate", "--json")[1])
    assert answer["tables"] == {"trains": False, "evidence": "documented", "source": {
        "model": "Qwen3-4B", "gpus": 4, "max_model_len": 112640, "setting": "-"}}
    # Where a table vouches for the estimate, it says so; without --estimate, or where no table speaks, nothing.
    [answer] = json.loads(cli("--model", "8B", "--gpus", "4", "--gpu", "a100", "--len", "32k", "--estimate", "--json")[1])
    assert answer["tables"]["trains"] and answer["tables"]["evidence"] == "inferred"
    for other in (flags, ["--model", "8B", "--gpus", "4", "--gpu", "h200", "--len", "32k", "--estimate"]):
        [answer] = json.loads(cli(*other, "--json")[1])
        assert answer["plans"] and "tables" not in answer


def test_an_estimate_alone_with_a_lowered_token_budget_gets_no_tables_verdict(cli):
    # The tables measured Trinity's default budget: of Env + SP=4 on 4 A100s at 65536 tokens with 27648 tokens per GPU
    # (lowered from 32768) they say nothing, though at that default the 4-GPU table says Env + SP=4 runs out of memory
    # (its cell 'Env + Offload + SP=4' at 61440).
    [answer] = json.loads(cli("--model", "8B", "--gpus", "4", "--gpu", "a100", "--len", "64k", "--estimate",
                              "--token-budget", "auto", "--json")[1])
    [best] = answer["plans"]
    assert (best["sp"], best["env"], best["offload"], best["max_token_len_per_gpu"], best["lowered_budget"]) == (
        4, True, False, 27648, True)
    assert "tables" not in answer


def test_control_characters_in_an_error_are_escaped(cli):
    # A file name with an escape sequence would restyle the terminal, and a newline split the one line.
    assert cli("--model", "4B", "--len", "8k", "--weights", "no\x1b[31m\nfile.yaml") == (
        2, "", "solve: error: --weights no\\x1b[31m\\nfile.yaml: cannot read: No such file or directory\n")


def test_a_length_of_a_few_hundred_tokens_gets_a_note_suggesting_thousands(cli):
    # `--len 32` plans for 32 tokens, as asked; the note says how to write 32768.
    status, out, err = cli("--model", "4B", "--gpu", "a100-80g", "--gpus", "2", "--len", "32", "--json")
    [answer] = json.loads(out)
    assert (status, answer["plans"][0]["max_model_len"]) == (0, 32)
    assert err == "solve: note: --len 32 is 32 tokens; for 32768 tokens write --len 32k\n"
    status, _, err = cli("memory", "--model", "4B", "--gpu", "a100-80g", "--gpus", "2", "--len", "256")
    assert (status, err) == (0, "solve memory: note: --len 256 is 256 tokens; for 262144 tokens write --len 256k\n")
    status, _, err = cli("memory", "--model", "4B", "--gpu", "a100-80g", "--gpus", "2", "--len", "1")
    assert (status, err) == (0, "solve memory: note: --len 1 is 1 token; for 1024 tokens write --len 1k\n")
    # clusterlines90: 131 was told to write 131k, which --len 131k's note then tells to write 128k
    status, _, err = cli("memory", "--model", "4B", "--gpu", "a100-80g", "--gpus", "2", "--len", "131")
    assert (status, err) == (0, "solve memory: note: --len 131 is 131 tokens; for 131072 tokens write --len 128k\n")
    for length in ("257", "32k", "4096"):
        assert cli("--model", "4B", "--gpu", "a100-80g", "--gpus", "2", "--len", length)[2] == ""


def test_a_token_budget_of_a_few_hundred_tokens_gets_the_note_too(cli):
    # s93: `--token-budget 32`, likely meant as 32k, left no plan and named the smallest cap (8192) with no word on
    # the slip that --len 32 gets. (solve memory refuses a budget that holds no sequence, in its one error line.)
    status, out, err = cli("--model", "14B", "--gpu", "h20", "--gpus", "8", "--len", "64k", "--token-budget", "32")
    assert status == 1 and "trains with --token-budget 32;" in " ".join(out.split())
    assert err == "solve: note: --token-budget 32 is 32 tokens; for 32768 tokens write --token-budget 32k\n"
    for budget in ("auto", "32k"):
        assert cli("--model", "14B", "--gpu", "h20", "--gpus", "4", "--len", "16k", "--token-budget", budget)[2] == ""

def test_the_least_host_need_named_is_the_least_of_any_plan(cli):
    # Host memory is not monotone in the GPUs: pinned blocks round up to powers of two, so Offload on 5 GPUs needs
    # less per node than on 8 (a plan on the fewest GPUs without Offload, or the cheapest, would not say it). Trinity
    # 0.6 loads the model on rank 0 alone on H100s, so training's pinned blocks are the peak.
    status, out, _ = cli("--model", "Qwen2.5-32B", "--gpu", "h100", "--gpus", "8", "--len", "8192", "--host-ram", "100",
                         "--trinity-version", "0.6")
    assert status == 1 and ("without --host-ram, Env + Offload on 8 GPUs trains it (8192 tokens), and with Offload it "
                            "needs 904.1 GiB of host memory per node; at the least, Env + Offload on 5 GPUs trains it "
                            "(8192 tokens), and with Offload it needs 709.1 GiB of host memory per node --explain"
                            ) in " ".join(out.split())


def test_the_least_host_need_named_for_the_longest_context_is_at_that_length(cli):
    # Qwen3-0.6B with SP=4 within a node of 16 H200s: 12 GPUs reach the longest length, 218112 tokens, as 16 do, and
    # need less host memory per node (its tied embeddings load on every rank); the least is named at that length.
    status, out, _ = cli("--model", "0.6B", "--gpu", "h200", "--gpus", "16", "--node-gpus", "16", "--maximize", "len",
                         "--sp", "4", "--no-offload", "--host-ram", "1")
    assert status == 1 and ("without --host-ram, Env + SP=4 on 16 GPUs trains it (218112 tokens), and it needs "
                            "38.5 GiB of host memory per node while the model loads; at the least, Env + SP=4 on 12 "
                            "GPUs trains it (218112 tokens), and it needs 29.7 GiB of host memory per node while the "
                            "model loads --explain") in " ".join(out.split())


def test_a_length_beyond_the_budget_names_the_fewest_gpus_past_it_that_train_it(cli):
    # 131072 tokens of Qwen3-14B on 2 H100s: the longest within them is 40960; 8 GPUs train the length asked, and
    # --gpus 8 gives that plan.
    status, out, _ = cli("--model", "14B", "--len", "131072", "--gpu", "h100", "--gpus", "2")
    assert status == 1 and ("the longest is 40960 on the 1024-token grid (Env + Offload + SP=2 on 2 GPUs, estimated); "
                            "more trainer GPUs train 131072 tokens: Env + Offload + SP=8 on 8 GPUs (estimated, "
                            "extrapolated); --token-budget auto reaches 81920 tokens on the 1024-token grid: Env + "
                            "Offload + SP=2 on 2 GPUs with max_token_len_per_gpu = 40960 (estimated) --explain"
                            ) in " ".join(out.split())
    status, answers = run_json(cli, "--model", "14B", "--len", "131072", "--gpu", "h100", "--gpus", "8")
    assert status == 0 and [(p["gpus"], p["env"], p["offload"], p["sp"]) for p in answers[0]["plans"]] == [
        (8, True, True, 8)]


def test_pins_and_host_memory_that_rule_out_the_plans_together_name_the_plan_without_both(cli):
    # Without --no-offload, --host-ram 100GB still rules out Offload (686.7 GiB per node under Trinity 0.5.1, rank 0
    # alone loading); without --host-ram, nothing fits without Offload: only lifting both trains it, and the reason
    # says so.
    status, out, _ = cli("--model", "32B", "--len", "32768", "--gpu", "a100", "--host-ram", "100", "--no-offload",
                         "--trinity-version", "0.5.1")
    assert status == 1 and ("trains with --no-offload --host-ram 100 GiB; without --no-offload and --host-ram, Env + "
                            "Offload + SP=2 on 6 GPUs trains it (32768 tokens), and with Offload it needs 686.7 GiB of "
                            "host memory per node --explain") in " ".join(out.split())


def test_pins_that_rule_out_the_plans_alone_blame_no_host_memory_that_fits(cli):
    # --host-ram 1024 GiB holds SP=4 on 4 GPUs (81.1 GiB per node): --sp 1 alone rules it out, so the reason names
    # dropping the pin, as it does without --host-ram, not "without --sp 1 and --host-ram".
    status, out, _ = cli("--model", "4B", "--len", "64k", "--gpu", "a100-80gb", "--gpus", "4", "--sp", "1",
                         "--host-ram", "1024")
    words = " ".join(out.split())
    assert status == 1 and "65536 tokens trains if you drop --sp 1: SP=4 on 4 GPUs (documented)" in words
    assert "and --host-ram" not in words


def test_host_memory_and_the_default_token_budget_that_rule_out_the_plans_together_name_the_plan_without_both(cli):
    # Without --host-ram, 131072 tokens still needs a lowered token budget; with it, no plan fits 100 GB: only lifting
    # the one and lowering the other trains it, and the reason says so (under Trinity 0.5.1: rank 0 alone loads it).
    status, out, _ = cli("--model", "32B", "--len", "131072", "--gpu", "a100", "--host-ram", "100",
                         "--trinity-version", "0.5.1")
    assert status == 1 and ("trains with --host-ram 100 GiB; without --host-ram and with --token-budget auto, Env + "
                            "Offload + SP=4 on 4 GPUs with a lowered max_token_len_per_gpu of 38912 trains it (131072 "
                            "tokens), and with Offload it needs 594.2 GiB of host memory per node "
                            "--explain") in " ".join(out.split())


def test_a_length_that_no_count_within_the_budget_trains_names_the_fewest_gpus_that_do(cli):
    # Nothing within 6 GPUs trains with a batch of 3 (one or three data-parallel ranks), nor does lifting one limit;
    # 8 GPUs with SP=8 (one rank) do, beside the 7 rollout GPUs on a node of their own (in 300 GB: Trinity 0.6 loads
    # the model on rank 0 alone on H100s).
    status, out, _ = cli("--model", "14B", "--len", "65536", "--gpu", "h100", "--gpus", "6", "--host-ram", "300",
                         "--train-batch-size", "3", "--rollout-gpus", "7", "--estimate", "--trinity-version", "0.6")
    assert status == 1 and ("trains with --host-ram 300 GiB --train-batch-size 3; more trainer GPUs train 65536 "
                            "tokens: Env + SP=8 on 8 GPUs (estimated, extrapolated)") in " ".join(out.split())
    # An exact count the rollout GPUs leave no layout, where fewer GPUs train nothing at the length: more do.
    status, out, _ = cli("--model", "4B", "--len", "65536", "--gpu", "a100-40g", "--gpus", "3", "--exact",
                         "--rollout-gpus", "7")
    assert status == 1 and ("nor with the trainer on whole nodes; more trainer GPUs train 65536 tokens: Env + SP=8 "
                            "on 8 GPUs (estimated, extrapolated) --explain") in " ".join(out.split())


def test_more_gpus_are_named_with_the_fewest_other_limits_lifted_where_they_alone_train_nothing(cli):
    # Within 4 H100s nothing trains 131072 tokens without Offload in 32 GB of host memory, nor does lifting one limit
    # or more GPUs alone: 16 GPUs do without --host-ram (the nearest plan, one solve), and the reason says its need
    # (Trinity 0.6 on H100s: rank 0 alone loads the model).
    status, out, _ = cli("--model", "14B", "--len", "131072", "--gpu", "h100", "--gpus", "4", "--no-offload",
                         "--host-ram", "32", "--trinity-version", "0.6")
    assert status == 1 and ("trains with --no-offload --host-ram 32 GiB; more trainer GPUs train 131072 tokens if you "
                            "also drop --host-ram 32 GiB: Env + SP=8 on 16 GPUs (estimated, extrapolated), and it "
                            "needs 95.3 GiB of host memory per node while the model loads --explain"
                            ) in " ".join(out.split())
    # Nothing within 2 A100-40GBs trains 32768 tokens with SP=1 in 100 GB, nor without either, nor as pinned on more
    # GPUs: 8 GPUs unpinned do (Trinity 0.5.1 keeps verl's rule on A100s: rank 0 alone loads the untied model).
    status, out, _ = cli("--model", "8B", "--len", "32768", "--gpu", "a100-40g", "--gpus", "2", "--sp", "1",
                         "--host-ram", "100", "--trinity-version", "0.5.1")
    assert status == 1 and ("trains with --sp 1 --host-ram 100 GiB; more trainer GPUs train 32768 tokens if you also "
                            "drop --sp 1: Env + SP=8 on 8 GPUs (estimated, extrapolated) --explain") in " ".join(
        out.split())


def test_an_exact_count_on_no_whole_nodes_names_fewer_gpus_at_a_lowered_token_budget(cli):
    # 6 GPUs are not whole nodes of 4, and 4 GPUs train 131072 tokens only with --token-budget auto: that is nearer
    # than more GPUs (a lowered budget is the planner's own knob).
    status, out, _ = cli("--model", "4B", "--len", "131072", "--gpu", "h100", "--gpus", "6", "--exact",
                         "--node-gpus", "4")
    assert status == 1 and ("but are not whole nodes; fewer trainer GPUs train 131072 tokens if you also add "
                            "--token-budget auto: Env + SP=4 on 4 GPUs with a lowered max_token_len_per_gpu of 40960 "
                            "(estimated), the other 2 free for rollout --explain") in " ".join(out.split())


def test_the_nearest_plan_keeps_the_query_s_own_lowered_token_budget(cli):
    # With --token-budget auto, 4 A100s train 131072 tokens only at a lowered budget (40960; Trinity's default, 65536,
    # does not fit): the nearest plan past an exact 3 says so, as --gpus 4 --token-budget auto gives it.
    status, out, _ = cli("--model", "4B", "--len", "131072", "--gpu", "a100", "--gpus", "3", "--exact",
                         "--token-budget", "auto")
    assert status == 1 and ("; more trainer GPUs train 131072 tokens: Env + SP=4 on 4 GPUs with a lowered "
                            "max_token_len_per_gpu of 40960 (estimated) --explain") in " ".join(out.split())


def test_the_nearest_plan_at_exactly_an_estimate_s_longest_length_keeps_the_default_token_budget(cli):
    # 187296 tokens is the longest Env + Offload + SP=8 on 8 A100s holds at Trinity's default budget: the nearest plan
    # past 7 GPUs is that one, at the default (as --gpus 8 gives it), not one that needs --token-budget auto.
    status, out, _ = cli("--model", "14B", "--len", "187296", "--gpu", "a100-80g", "--gpus", "7")
    assert status == 1 and ("; more trainer GPUs train 187296 tokens: Env + Offload + SP=8 on 8 GPUs (estimated, "
                            "extrapolated); --token-budget auto reaches 184320 tokens on the 1024-token grid: Env + "
                            "Offload + SP=4 on 4 GPUs with max_token_len_per_gpu = 46080 (estimated) --explain"
                            ) in " ".join(out.split())
    status, answers = run_json(cli, "--model", "14B", "--len", "187296", "--gpu", "a100-80g", "--gpus", "8")
    plan = answers[0]["plans"][0]
    assert status == 0 and (plan["gpus"], plan["env"], plan["offload"], plan["sp"], plan["max_token_len_per_gpu"]) == (
        8, True, True, 8, 46824)


def test_the_nearest_plan_may_lift_the_train_batch_or_the_rollout_gpus(cli):
    # No tables for Qwen3-4B on the A100-40GB; beside 7 rollout GPUs on nodes of 8 a trainer takes 1 GPU or whole
    # nodes, and on 8 GPUs SP=4 leaves 2 data-parallel ranks, which a batch of 5 does not split over: a batch they
    # divide is as near as dropping --sp 4, and SP=4 costs less than SP=8.
    status, out, _ = cli("--model", "4B", "--gpu", "a100-40g", "--len", "16384", "--gpus", "8", "--sp", "4",
                         "--train-batch-size", "5", "--rollout-gpus", "7", "--node-gpus", "8", "--no-estimate")
    assert status == 1 and ("the memory model estimates a plan, Env + SP=4 on 8 GPUs at 16384 tokens: drop "
                            "--no-estimate and take a train batch that 2 data-parallel ranks divide (the nearest to 5: 4 or 6) "
                            "--explain"
                            ) in " ".join(out.split())
    # Beside 15 rollout GPUs on nodes of 16 (the largest) a trainer takes 1 GPU in that node or a whole node of its
    # own: the nearest plan takes the second, on 2 nodes.
    status, out, _ = cli("--model", "8B", "--gpu", "a100", "--len", "65536", "--gpus", "4", "--rollout-gpus", "15",
                         "--node-gpus", "16")
    assert status == 1 and ("; on 2 nodes of 16 GPUs, more trainer GPUs train 65536 tokens: Env + SP=4 on 16 GPUs "
                            "(estimated, extrapolated); --token-budget auto reaches 49152 tokens on the 1024-token "
                            f"grid: Env + Offload on 1 GPU with max_token_len_per_gpu = 49152 (estimated; {ONE_GPU}) "
                            "--explain") in " ".join(out.split())


def test_the_nearest_plan_says_fewer_gpus_only_below_an_exact_count(cli):
    # Without --sp 1, Env + Offload + SP=8 on 8 A100s trains 131072 tokens: within 12 GPUs, or on exactly 8, that is
    # no change of the count (no "fewer trainer GPUs ... free for rollout").
    for flags in (("--gpus", "12"), ("--gpus", "8", "--exact")):
        status, out, _ = cli("--model", "14B", "--gpu", "a100", "--len", "131072", "--sp", "1", *flags)
        assert status == 1 and ("; 131072 tokens trains if you drop --sp 1: Env + Offload + SP=8 on 8 GPUs (estimated, "
                                "extrapolated); --token-budget auto reaches 48128 tokens on the 1024-token grid: Env + "
                                "Offload on 8 GPUs with max_token_len_per_gpu = 48128 (estimated, extrapolated) "
                                "--explain") in " ".join(out.split())
    # The fewest GPUs, no --gpus: the planner chose the budget, so the nearest plan's count is no change of it.
    status, out, _ = cli("--model", "14B", "--gpu", "a100", "--len", "131072", "--minimize", "gpus", "--sp", "1")
    assert status == 1 and (f"with --sp 1: the longest is 24576 (Env + Offload on 1 GPU, documented; {ONE_GPU}); "
                            "131072 tokens trains if you drop --sp 1: Env + Offload + SP=8 on 8 GPUs (estimated, "
                            "extrapolated); --token-budget auto reaches 48128 tokens on the 1024-token grid: Env + "
                            f"Offload on 1 GPU with max_token_len_per_gpu = 48128 (estimated; {ONE_GPU}) --explain "
                            "says why"
                            ) in " ".join(out.split())  # the fewest GPUs at that length, as the longest


def test_an_exact_count_past_the_estimates_names_the_nearest_plan_where_fewer_gpus_as_pinned_train_nothing(cli):
    # No plan considers exactly 72 GPUs (whole nodes of 8, past the estimates' 64), and no fewer train 131072 tokens
    # with --sp 1: the nearest plan drops the pin, on fewer GPUs.
    status, out, _ = cli("--model", "14B", "--gpu", "a100", "--len", "131072", "--gpus", "72", "--exact", "--sp", "1")
    assert status == 1 and ("(counts with a plan at some length: 1, 2, 3, 4, 5, 6, 7, 8, 16, 24, 32, 40, 48, 56, 64); "
                            "estimated plans go up to 64 trainer GPUs; fewer trainer GPUs train 131072 tokens if you "
                            "also drop --sp 1: Env + SP=8 on 64 GPUs (estimated, extrapolated), the other 8 free for "
                            "rollout --explain") in " ".join(out.split())


def test_fewer_gpus_at_the_default_token_budget_are_named_once_for_an_exact_count(cli):
    # Exactly 7 A100s train 65536 tokens of Qwen3-14B in no way; 4 do at Trinity's default token budget. That is the
    # way named: no second sentence on fewer GPUs at a lowered budget (6 GPUs, 40960 tokens per GPU).
    status, out, _ = cli("--model", "14B", "--gpu", "a100", "--len", "65536", "--gpus", "7", "--exact")
    assert status == 1 and ("on exactly 7 GPUs: the longest is 24576 (Env + Offload on 7 GPUs, inferred); fewer "
                            "trainer GPUs train 65536 tokens: Env + Offload + SP=4 on 4 GPUs (documented), the other "
                            "3 free for rollout; --token-budget auto reaches 48128 tokens on the 1024-token grid: Env "
                            "+ Offload on 7 GPUs with max_token_len_per_gpu = 48128 (estimated, extrapolated) "
                            "--explain says why") in " ".join(out.split())  # on exactly 7: not fewer GPUs again


def test_host_memory_is_not_named_where_a_lowered_token_budget_alone_trains_the_length(cli):
    # Within 4 A100s and 256 GB of host memory, 131072 tokens of Qwen3-4B train only at a lowered token budget, which
    # that host memory holds: the reason names that, and not what dropping --host-ram as well would give.
    status, out, _ = cli("--model", "4B", "--len", "131072", "--gpu", "a100", "--gpus", "4", "--host-ram", "256")
    assert status == 1 and ("with --host-ram 256 GiB: the longest is 102400 (Env + Offload + SP=4 on 4 GPUs, "
                            "documented); --token-budget auto trains 131072 tokens: Env + SP=4 on 4 GPUs with "
                            "max_token_len_per_gpu = 40960 (estimated) --explain") in " ".join(out.split())


def test_maximising_the_length_names_more_gpus_where_the_budget_has_no_plan(cli):
    # 1 trainer GPU leaves 2 rollout GPUs no room on nodes of 2: 2 trainer GPUs (a node of their own) have a plan,
    # the longest at that count, which --gpus 2 gives (not the cheapest setting's longest, Env + Offload at 24576),
    # on 2 nodes of 2: the trainer's and its rollout's.
    flags = ("--model", "14B", "--gpu", "a100", "--maximize", "len", "--env", "--rollout-gpus", "2", "--node-gpus", "2")
    status, out, _ = cli(*flags, "--gpus", "1")
    assert status == 1 and ("beside a trainer on whole nodes; on 2 nodes of 2 GPUs, more trainer GPUs have a plan: "
                            "Env + Offload + SP=2 on 2 GPUs at 40960 tokens (documented) --explain") in " ".join(
        out.split())
    status, out, _ = cli(*flags, "--gpus", "2", "--json")
    plan = json.loads(out)[0]["plans"][0]
    assert status == 0 and (plan["gpus"], plan["env"], plan["offload"], plan["sp"], plan["max_model_len"]) == (
        2, True, True, 2, 40960)


def test_no_estimate_without_tables_names_each_change_the_estimates_plan_needs(cli):
    # No tables for Qwen3-32B on these GPU types, and the estimates need two changes more: the pin and the count, or
    # the host memory and the count (the need said, under Trinity 0.6: rank 0 alone loads the model on H20s).
    for flags, said in (
        (["--model", "32B", "--len", "65536", "--gpu", "a100-40g", "--gpus", "3", "--sp", "2"],
         ("the memory model estimates a plan, Env + Offload + SP=8 on 8 GPUs at 65536 tokens: drop --no-estimate and "
          "--sp 2 and take --gpus 8")),
        (["--model", "32B", "--len", "131072", "--gpu", "h20", "--gpus", "2", "--exact", "--offload",
          "--host-ram", "32", "--trinity-version", "0.6"],
         ("the memory model estimates a plan, Env + Offload + SP=8 on 8 GPUs at 131072 tokens: drop --no-estimate and "
          "--host-ram 32 GiB and take --gpus 8, and with Offload it needs 664.2 GiB of host memory per node")),
    ):
        status, out, _ = cli(*flags, "--no-estimate")
        assert status == 1 and f"; {said} --explain" in " ".join(out.split())


def test_the_longest_without_the_pins_is_no_way_forward_and_leaves_the_fewest_gpus_named(cli):
    # Within 4 GPUs nothing trains without Offload, and without --no-offload only 78848 tokens do: a shorter length is
    # no way forward, so the fewest GPUs that train 131072 tokens as pinned are named too.
    status, out, _ = cli("--model", "32B", "--len", "131072", "--gpu", "a100", "--gpus", "4", "--no-offload")
    assert status == 1 and ("trains with --no-offload (without --no-offload the longest is 78848 on the 1024-token "
                            "grid: Env + Offload + SP=4 on 4 GPUs, estimated, extrapolated); more trainer GPUs train "
                            "131072 tokens: Env + SP=8 on 48 GPUs (estimated, extrapolated) --explain"
                            ) in " ".join(out.split())
    status, out, _ = cli("--model", "32B", "--len", "131072", "--gpu", "a100", "--gpus", "48", "--no-offload")
    assert status == 0 and "Env + SP=8" in out


def test_no_estimate_without_tables_names_what_else_the_estimates_plan_needs(cli):
    # The tables have no Qwen3 on the A100-40GB (nor Qwen3-32B on the A100-80GB), and the estimates alone give no
    # plan: with a lowered token budget, without the pins, or on more GPUs they do, and the reason names that change.
    for flags, said in (
        (["--model", "4B", "--len", "131072", "--gpu", "a100-40g"],
         ("the memory model estimates a plan, Env + SP=8 on 8 GPUs at 131072 tokens with a lowered "
          "max_token_len_per_gpu of 20480: drop --no-estimate and add --token-budget auto")),
        (["--model", "32B", "--len", "16384", "--gpu", "a100", "--no-offload"],
         ("the memory model estimates a plan, Env + Offload on 6 GPUs at 16384 tokens: drop --no-estimate and "
          "--no-offload")),
        (["--model", "14B", "--len", "65536", "--gpu", "a100-40g", "--gpus", "3"],
         ("the memory model estimates a plan, Env + Offload + SP=8 on 8 GPUs at 65536 tokens: drop --no-estimate and "
          "take --gpus 8")),
    ):
        status, out, _ = cli(*flags, "--no-estimate", "--margin", "0.01")  # the figures' margin: not the subject
        assert status == 1 and f"; {said} --explain" in " ".join(out.split())


def test_no_estimate_with_tables_names_the_estimates_nearest_plan_once(cli):
    # The tables have Qwen3-14B but nothing within 1 GPU with --host-ram 160GB, nor on more GPUs; the estimates alone
    # give nothing within 1 GPU either: their nearest plan takes 8, named once (the estimates' words once too); 160 GB
    # hold it where rank 0 alone loads the model (Trinity 0.6 on H20s).
    status, out, _ = cli("--model", "14B", "--len", "131072", "--gpu", "h20", "--gpus", "1", "--host-ram", "160",
                         "--no-estimate", "--trinity-version", "0.6")
    said = " ".join(out.split())
    assert status == 1 and ("no plan: nothing in the tables for Qwen3-14B on H20-96GB within 1 GPU trains with "
                            "--host-ram 160 GiB; the memory model estimates a plan, Env + SP=8 on 8 GPUs at 131072 "
                            "tokens: drop --no-estimate and take --gpus 8 --explain") in said
    assert said.count("memory model") == 1 and said.count("--no-estimate") == 1
    # Beyond the tables' longest, the estimates' nearest plan takes a lowered token budget and more GPUs.
    status, out, _ = cli("--model", "14B", "--len", "200000", "--gpu", "a100", "--no-estimate")
    assert status == 1 and ("(Env + Offload + SP=4 on 4 GPUs, documented); the memory model estimates a plan, Env + "
                            "SP=8 on 8 GPUs at 200000 tokens with a lowered max_token_len_per_gpu of 26624: drop "
                            "--no-estimate and add --token-budget auto and take --gpus 8 --explain"
                            ) in " ".join(out.split())
    # Where the tables vouch for a plan as near (without --no-offload, documented), the estimates' is not named.
    status, out, _ = cli("--model", "14B", "--len", "8192", "--gpus", "1", "--no-offload", "--gpu", "a100",
                         "--no-estimate")
    assert status == 1 and ("trains with --no-offload (without --no-offload: Env + Offload on 1 GPU trains it, "
                            f"documented; {ONE_GPU}) --explain") in " ".join(out.split())


def test_a_refusal_on_the_nodes_given_says_plainly_that_no_count_of_them_trains_it(cli):
    # On nodes of 2 GPUs nothing trains these, whatever flags are dropped (whole nodes, SP within a node, the rollout's
    # layout, host memory per node). The node size given is hardware, not a flag to drop: the reason says so, with
    # the limits the search lifted and the SP a node holds, and names no plan on larger nodes (before: "on nodes of 8
    # GPUs, ..." or "of 4", which a user with nodes of 2 cannot have). The estimates' search under --no-estimate too.
    nodes_of_2 = "no count of nodes of 2 GPUs (--node-gpus) trains it"
    sp_2 = "an SP group stays within one node, so SP=2 at most"
    for flags, said in (
        (["--model", "32B", "--len", "65536", "--gpu", "a100-40g", "--host-ram", "100", "--train-batch-size", "6"],
         (f"within 8 GPUs trains with --host-ram 100 GiB --train-batch-size 6; {nodes_of_2}, even without --host-ram "
          f"100 GiB --train-batch-size 6 and with --token-budget auto: {sp_2}")),
        (["--model", "32B", "--len", "131072", "--gpu", "a100", "--gpus", "1", "--rollout-gpus", "2",
          "--token-budget", "auto"],
         f"beside a trainer on whole nodes; {nodes_of_2}, even without --rollout-gpus 2: {sp_2}"),
        (["--model", "14B", "--len", "131072", "--gpu", "a100", "--gpus", "4", "--token-budget", "auto"],
         ("Env + Offload + SP=2 on 4 GPUs with a lowered max_token_len_per_gpu of 40960, estimated, extrapolated); "
          f"{nodes_of_2}: {sp_2}")),
        (["--model", "8B", "--len", "65536", "--gpu", "a100-40g", "--sp", "2", "--no-estimate"],
         (f"no plan: the tables have no Qwen3-8B on A100-40GB; {nodes_of_2}, even without --no-estimate --sp 2 and "
          f"with --token-budget auto: {sp_2}")),
        (["--model", "32B", "--len", "65536", "--gpu", "l40s", "--host-ram", "100", "--no-estimate"],
         (f"no plan: the tables have no Qwen3-32B on L40S-48GB; {nodes_of_2}, even without --no-estimate --host-ram "
          f"100 GiB and with --token-budget auto: {sp_2}")),
    ):
        status, out, _ = cli(*flags, "--node-gpus", "2")
        assert status == 1 and f"{said} --explain" in " ".join(out.split())
        assert "nodes of 4" not in out and "nodes of 8" not in out


def test_the_fewest_gpus_without_a_budget_name_the_nearest_plan(cli):
    # --minimize gpus without --gpus searches every count up to 64: the nearest plan lifts a pin, or on nodes of 4
    # none does, which it says (an open budget is no reason to name nothing).
    for flags, said in (
        (["--model", "14B", "--gpu", "a100", "--len", "65536", "--sp", "1"],
         (f"the longest is 24576 (Env + Offload on 1 GPU, documented; {ONE_GPU}); 65536 tokens trains if you drop "
          "--sp 1: Env + Offload + SP=4 on 4 GPUs (documented); --token-budget auto reaches 48128 tokens on the "
          f"1024-token grid: Env + Offload on 1 GPU with max_token_len_per_gpu = 48128 (estimated; {ONE_GPU})")),
        (["--model", "32B", "--gpu", "a100-40g", "--len", "131072", "--host-ram", "32", "--node-gpus", "4"],
         ("within 64 GPUs trains with --host-ram 32 GiB; no count of nodes of 4 GPUs (--node-gpus) trains it, even "
          "without --host-ram 32 GiB and with --token-budget auto: an SP group stays within one node, so SP=4 at "
          "most")),
    ):
        status, out, _ = cli(*flags, "--minimize", "gpus", "--margin", "0.01")  # the figures' margin: not the subject
        assert status == 1 and f"{said} --explain" in " ".join(out.split())


def test_no_estimate_names_a_lowered_token_budget_before_dropping_a_pin(cli):
    # No tables for Qwen3-4B on the A100-40GB: on 8 GPUs the estimates train 65536 tokens with --sp 4 at a lowered
    # token budget, or at Trinity's default without the pin (SP=8). The lowered budget, the planner's own knob, is
    # the nearer change (`LIFT_WEIGHTS`).
    status, out, _ = cli("--model", "4B", "--len", "65536", "--gpu", "a100-40g", "--gpus", "8", "--sp", "4",
                         "--no-estimate", "--margin", "0.01")  # the margin the figures were written for
    assert status == 1 and ("no plan: the tables have no Qwen3-4B on A100-40GB; the memory model estimates a plan, "
                            "Env + SP=4 on 8 GPUs at 65536 tokens with a lowered max_token_len_per_gpu of 20480: drop "
                            "--no-estimate and add --token-budget auto --explain") in " ".join(out.split())


@pytest.mark.parametrize("asked", [("--len", "8192"), ("--maximize", "len")])
def test_no_estimate_for_a_model_that_fits_on_no_count_says_the_tables_have_none(cli, tmp_path: Path, asked):
    # A model of 400 layers of 16384 fits on no count of A10s up to 64, even by the estimates: with --no-estimate the
    # reason says the tables have none, and names no plan (the nearest plan has no GPU count to weigh).
    folder = qwen3_8b_checkpoint(tmp_path / "huge", hidden_size=16384, intermediate_size=65536, num_hidden_layers=400,
                                 num_attention_heads=128)
    status, out, err = cli("--model-config", str(folder), "--gpu", "a10", "--gpus", "1", *asked, "--no-estimate")
    assert (status, err) == (1, "")
    assert out.splitlines()[1:] == ["no plan: the tables have no huge on A10-24GB",
                                    ("--explain says why, rule by rule, and names plans beyond these limits where "
                                     "there are any"), ""]


def test_no_estimate_with_a_plan_gives_no_reason(cli):
    # The tables vouch for Qwen3-4B at 8192 tokens on 2 A100s: the answer has its plan and no reason (what the
    # estimates would give is said only where the tables give none).
    status, answers = run_json(cli, "--model", "4B", "--len", "8192", "--gpu", "a100-80g", "--gpus", "2",
                               "--no-estimate")
    assert status == 0 and (answers[0]["status"], answers[0]["reason"], answers[0]["plans"][0]["evidence"]) == (
        "optimal", None, "documented")


def test_no_estimate_says_to_take_another_count_only_for_an_exact_one(cli):
    # No tables for Qwen3-32B on the A100-80GB: the estimates train 16384 tokens without Offload on 8 GPUs at a lowered
    # token budget. Within 12 GPUs that count needs no change; exactly 12 does.
    for flags, take in ((("--gpus", "12"), ""), (("--gpus", "12", "--exact"), " and take --gpus 8")):
        status, out, _ = cli("--model", "32B", "--len", "16384", "--gpu", "a100", "--no-offload", *flags,
                             "--no-estimate")
        assert status == 1 and ("the memory model estimates a plan, Env + SP=8 on 8 GPUs at 16384 tokens with a "
                                "lowered max_token_len_per_gpu of 2048: drop --no-estimate and add --token-budget auto"
                                f"{take} --explain") in " ".join(out.split())


def test_host_memory_rules_out_a_plan_without_offload_that_cannot_load(cli):
    # Trinity 0.6 reads Llama-3.1-70B into one rank's host memory in fp32 on H200s before FSDP shards it: 262.8 GiB on
    # that node, with Offload or without, beside the node's half of the reference model's fp32 shards (146.5 GiB on 16
    # GPUs). 128 GB nodes cannot start it; 410 GB ones can, without Offload.
    flags = ("--model", "llama-3.1-70b", "--gpu", "h200", "--gpus", "16", "--len", "32k", "--trinity-version", "0.6")
    status, out, _ = cli(*flags, "--host-ram", "128")
    assert status == 1 and ("no plan: nothing in the tables and the memory model's estimates for Llama-3.1-70B on "
                            "H200-141GB within 16 GPUs trains with --host-ram 128 GiB; without --host-ram, Env + SP=4 "
                            "on 16 GPUs trains it (32768 tokens), and it needs 409.4 GiB of host memory per node while "
                            "the model loads") in " ".join(out.split())
    status, out, _ = cli(*flags, "--host-ram", "410", "--json")
    [answer] = json.loads(out)
    # The JSON gives the need --host-ram was checked against: the start-up load, without Offload.
    assert status == 0 and (answer["plans"][0]["offload"], answer["plans"][0]["host_memory_gb"]) == (False, 409.4)
    [answer] = json.loads(cli(*flags, "--json")[1])
    assert (answer["plans"][0]["offload"], answer["plans"][0]["host_memory_gb"]) == (False, None)  # no --host-ram
    status, out, _ = cli(*flags, "--host-ram", "128", "--explain")
    assert status == 1 and ("no plan passes this rule: host memory (--host-ram 128 GiB is too little for "
                            "Offload, or for the model while it loads, beside the reference model's pinned shards)"
                            ) in " ".join(out.split())
    # The refusal names the least a plan needs too: without Offload only the start-up load, the fp32 model on one rank
    # (30.5 GiB for Qwen3-8B: Trinity 0.5.1 keeps verl's rule on A100s) beside the node's share of the reference
    # model's bf16 shards (2 bytes x 8.191e9 / 8 x 1.33 rounding, 2.54 GiB), which the most nodes thin most: 64 GPUs,
    # 8 a node, need 33.1 GiB. With Offload, training holds more (162.6 GiB on 1 GPU).
    status, out, _ = cli("--model", "8B", "--gpu", "a100", "--len", "8k", "--host-ram", "20", "--minimize", "gpus",
                         "--trinity-version", "0.5.1")
    assert status == 1 and (f"without --host-ram, Env + Offload on 1 GPU trains it (8192 tokens; {ONE_GPU}), and with "
                            "Offload it needs 162.6 GiB of host memory per node; at the least, vanilla on 64 GPUs "
                            "trains it (8192 tokens), and it needs "
                            "33.1 GiB of host memory per node while the model loads") in " ".join(out.split())
    # A model with tied embeddings loads on every rank: the fewest GPUs need the least (Qwen3-4B: 51.1 GiB on 2).
    status, out, _ = cli("--model", "4B", "--gpu", "a100", "--len", "8k", "--gpus", "8", "--host-ram", "20")
    assert status == 1 and ("needs 141.0 GiB of host memory per node while the model loads; at the least, vanilla on 2 "
                            "GPUs trains it (8192 tokens), and it needs 51.1 GiB") in " ".join(out.split())
    # On an exact count that host memory rules out, fewer GPUs are named as fewer GPUs, not as a lowered budget:
    # Qwen3-4B ties its embeddings, every rank loads it (15 GiB each, beside its share of the reference model's fp32
    # shards: 36.2 on one GPU, 60.8 on 3, 81.1 on 4), so 64 GB take 3 ranks; Trinity 0.6.0 loads it on rank 0 alone on
    # an H20 (compute capability 9.0), so naming it trains 6 (30.9 GiB).
    status, out, _ = cli("--model", "4B", "--gpu", "h20", "--gpus", "6", "--exact", "--len", "8k", "--host-ram", "64")
    assert status == 1 and ("needs 105.8 GiB of host memory per node while the model loads; at the least, vanilla on 1 "
                            "GPU trains it (8192 tokens), and it needs 36.2 GiB of host memory per node while the "
                            "model loads; with --trinity-version 0.6.0, whose rank 0 alone loads the model, vanilla on "
                            "6 GPUs trains it (8192 tokens), and it needs 30.9 GiB of host memory per node while the "
                            "model loads; fewer trainer GPUs train 8192 tokens: vanilla on 3 GPUs (inferred), the "
                            "other 3 free for rollout") in " ".join(out.split())
    assert "--token-budget auto" not in out
    # With Offload the least is on the most nodes, which share its states: the fewest GPUs (4, one node) hold all of
    # Llama-3.1-70B's 1404.7 GiB, 16 GPUs on two nodes half of it each (Trinity 0.6: rank 0 alone loads it on H100s,
    # so training is the peak).
    status, out, _ = cli("--model", "llama3.1-70b", "--gpu", "h100", "--gpus", "16", "--len", "32k", "--minimize",
                         "gpus", "--host-ram", "512", "--trinity-version", "0.6")
    assert status == 1 and ("without --host-ram, Env + Offload + SP=4 on 4 GPUs trains it (32768 tokens), and with "
                            "Offload it needs 1404.7 GiB of host memory per node; at the least, Env + Offload + "
                            "SP=4 on 16 GPUs trains it (32768 tokens), and with Offload it needs 702.4 GiB of host "
                            "memory per node --explain says why") in " ".join(out.split())
    # --explain names the host memory among what narrows the plans.
    _, out, _ = cli("--model", "8B", "--gpu", "h100", "--gpus", "8", "--len", "32k", "--host-ram", "24", "--explain")
    words = " ".join(out.split())
    assert ("no count of H100-80GB GPUs up to 64 trains Qwen3-8B at 32768 tokens with --host-ram 24 GiB on nodes of 8 "
            "GPUs, at Trinity's default token budget; the host memory is each node's, and --node-gpus sets another "
            "node size; the default token budget is the max_token_len_per_gpu the tables measure") in words
    # That count is the node size's: a hobbyist's 64 GB box of 2 RTX 4090s holds none of Qwen3-4B's plans (each rank
    # loads its tied weights, and Offload needs 93.4 GiB), nor do nodes of 8 of them; nodes of 2 do, on 4 GPUs.
    _, out, _ = cli("--model", "4B", "--gpu", "rtx-4090", "--gpus", "2", "--len", "8k", "--host-ram", "64", "--explain")
    assert ("no count of RTX-4090-24GB GPUs up to 64 trains Qwen3-4B at 8192 tokens with --host-ram 64 GiB on nodes "
            "of 8 GPUs, at Trinity's default token budget; the host memory is each node's, and --node-gpus sets "
            "another node size") in " ".join(out.split())
    # Where GPU memory decides it, and no count trains it without --host-ram either, the node size is not named (on
    # 2 nodes: within 64 GPUs --explain's search for the nearest estimate asks CP-SAT 2200 questions, a second or more).
    _, out, _ = cli("--model", "8B", "--gpu", "a10", "--gpus", "16", "--len", "128k", "--host-ram", "4096", "--explain")
    assert ("more_gpus no count of A10-24GB GPUs up to 64 trains Qwen3-8B at 131072 tokens with --host-ram 4096 GiB, "
            "at Trinity's default token budget; the default token budget is the max_token_len_per_gpu the tables "
            "measure") in " ".join(out.split())
    assert "node size" not in out
    _, out, _ = cli("--model", "4B", "--gpu", "rtx-4090", "--gpus", "2", "--len", "8k", "--host-ram", "64", "--explain",
                    "--node-gpus", "2")
    assert "more_gpus 8192 tokens need 4 GPUs, 2 more than the budget: Env + Offload + SP=2 on 4 GPUs" in (
        " ".join(out.split()))
    # Without --host-ram the node size does not decide it, and is not named.
    _, out, _ = cli("--model", "8B", "--gpu", "a10", "--gpus", "2", "--len", "128k", "--explain")
    assert "no count of A10-24GB GPUs up to 64 trains Qwen3-8B at 131072 tokens, at Trinity's default" in (
        " ".join(out.split()))
    # With --token-budget auto the lowered budget is what held, in one clause, and the default's note is not said.
    _, out, _ = cli("--model", "8B", "--gpu", "a10", "--gpus", "2", "--len", "128k", "--explain", "--token-budget",
                    "auto")
    words = " ".join(out.split())
    assert ("more_gpus no count of A10-24GB GPUs up to 64 trains Qwen3-8B at 131072 tokens, even at a token budget "
            "lowered by --token-budget auto") in words and "max_token_len_per_gpu the tables measure" not in words
    # Qwen3-4B ties its embeddings: every rank loads it (15 GiB each, beside its share of the reference model's fp32
    # shards: 105.8 GiB on 6, 123.4 on 7), so 115 GB nodes take 6 trainer GPUs at most.
    status, out, _ = cli("--model", "4B", "--gpu", "h100", "--gpus", "8", "--len", "16k", "--host-ram", "115",
                         "--explain")
    assert status == 0 and "plan Env on 6 of 8 GPUs" in " ".join(out.split())
    assert ("host_ram loading the model needs more host memory (verl reads it in fp32 before FSDP shards it, beside "
            "the reference model's pinned shards) than --host-ram 115 GiB (on 8 GPUs: 141.0 GiB per node)"
            ) in " ".join(out.split())


def test_an_env_plan_on_an_amd_gpu_is_cautioned_that_rocm_may_ignore_it(cli, tmp_path: Path):
    status, out, _ = cli("--model", "32B", "--gpu", "mi300x", "--gpus", "8", "--len", "64k")
    assert status == 0 and "plan Env + SP=4 on 8 of 8 GPUs" in " ".join(out.split())
    assert ("caution ROCm: PyTorch's ROCm builds also read PYTORCH_HIP_ALLOC_CONF (set it the same, or not at all), "
            "and a build without expandable segments ignores them with a warning, so Env may not take effect: check "
            "yours (solve --no-env plans without it)") in " ".join(out.split())
    # solve cluster, which pins no setting, cautions its MI300X jobs with Env too.
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools: [{name: m, gpu: MI300X, nodes: 1, gpus_per_node: 8}]\n"
                     "jobs: [{name: j, model: 8B, max_model_len: 65536}]\n", encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet))
    assert status == 0 and "caution: j: ROCm: PyTorch's ROCm builds also read PYTORCH_HIP_ALLOC_CONF" in (
        " ".join(out.split()))
    # solve memory with --env, and the Trinity fragment beside its Env export.
    flags = ("--model", "8B", "--gpu", "mi300x", "--gpus", "4", "--len", "64k")
    assert "caution: ROCm:" in cli("memory", *flags, "--sp", "2", "--env")[1]
    assert "ROCm" not in cli("memory", *flags, "--sp", "2")[1]
    assert "# On ROCm, PyTorch reads PYTORCH_HIP_ALLOC_CONF too: set it the same" in cli(*flags, "--emit", "trinity")[1]
    assert "ROCm" not in cli("--model", "32B", "--gpu", "h200", "--gpus", "8", "--len", "64k")[1]
    assert "ROCm" not in cli("--model", "32B", "--gpu", "mi300x", "--gpus", "8", "--len", "64k", "--no-env")[1]


def test_the_longest_context_past_one_node_says_that_a_larger_sp_would_span_nodes(cli):
    # Llama-3.1-70B on up to 32 H100s stops with SP=8, the most a node of 8 holds; SP=16 (its 64 heads allow it)
    # would span nodes, which the planner does not plan.
    _, out, _ = cli("--model", "Llama-3.1-70B", "--gpu", "h100", "--gpus", "32", "--maximize", "len")
    assert ("longer SP=16 or more may reach further, but its groups would span nodes of 8 GPUs: rft-solver keeps "
            "each SP group inside a node (--node-gpus), as the tables measured") in " ".join(out.split())
    # The guide's reading of an answer says so, and shows the plan past one node as the answer words it.
    guide = " ".join((Path(__file__).resolve().parent.parent / "docs" / "guide.md").read_text(encoding="utf-8").split())
    assert ("each SP group stays inside a node: rft-solver's rule, not Trinity's or verl's, since the tables measured "
            "SP within one node") in guide
    assert "a `longer` line says so (Llama-3.1-70B on 32 H100s: `SP=16 or more may reach further" in guide
    assert "plan Env + Offload + SP=8 on 32 of 32 GPUs, 4 whole nodes of 8 (" in " ".join(out.split())
    assert "`Env + Offload + SP=8 on 32 of 32 GPUs, 4 whole nodes of 8`" in guide
    # Not where the heads allow no larger SP (Qwen3-14B's 40 heads: SP=16 does not divide them), nor within a node.
    # Nor where the plan's SP is below the most a node holds (pinned here): a larger one is no way further.
    for asked in (("--model", "14B", "--gpu", "h200", "--gpus", "16"),
                  ("--model", "4B", "--gpu", "a100", "--gpus", "6"),
                  ("--model", "Llama-3.1-70B", "--gpu", "h100", "--gpus", "32", "--sp", "4")):
        _, out, _ = cli(*asked, "--maximize", "len")
        assert "\nlonger " not in out


def test_json_gives_each_plan_the_cautions_the_view_gives(cli, tmp_path: Path):
    # Qwen3-8B on 8 MI300X at its longest: YaRN far past what Qwen validates, 0.1 GiB to spare where the estimate
    # extrapolates, and Env on ROCm; the view gives the last two on caution lines, and the first beside the length.
    flags = ("--model", "8B", "--gpu", "mi300x", "--gpus", "8", "--maximize", "len")
    status, [answer] = run_json(cli, *flags)
    best = answer["plans"][0]
    assert status == 0 and (best["max_model_len"], best["env"], best["yarn_beyond_validated"]) == (506880, True, True)
    yarn, thin, rocm = best["cautions"]
    assert yarn.startswith("YaRN factor 12.375 at 506880 tokens: longer than YaRN is validated for (Qwen's model "
                           "cards validate a factor of 4 over 32768 positions: 131072 tokens)")
    assert thin.startswith(f"{best['headroom_gb']:.1f} GiB to spare where the estimate extrapolates")
    assert rocm == solver.results.rocm_env_caution() and rocm.endswith("(solve --no-env plans without it)")
    view = " ".join(cli(*flags)[1].split())
    assert f"caution {thin}" in view and f"caution {rocm}" in view
    assert check_plan(solver.tables.load_catalog(), best, gpu="MI300X", model="Qwen3-8B", budget_gpus=8,
                      estimates=True) == []
    # Without Env, no ROCm caution; a documented plan within what is validated has none at all.
    status, [answer] = run_json(cli, *flags, "--no-env", "--top", "3")
    assert status == 0 and all(not any(c.startswith("ROCm") for c in p["cautions"]) for p in answer["plans"])
    status, answers = run_json(cli, "--model", "4B", "--gpus", "4", "--len", "32k")
    assert status == 0 and [p["cautions"] for a in answers for p in a["plans"]] == [[], []]
    # solve cluster's placements and solve memory's breakdown carry them too.
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools: [{name: m, gpu: MI300X, nodes: 1, gpus_per_node: 8}]\n"
                     "jobs: [{name: j, model: 8B, max_model_len: 65536}]\n", encoding="utf-8")
    [placement] = json.loads(cli("cluster", str(fleet), "--json")[1])["placements"]
    assert placement["plan"]["env"] and placement["plan"]["cautions"] == [solver.results.rocm_env_caution()]
    memory = ("memory", "--model", "8B", "--gpu", "mi300x", "--gpus", "4", "--len", "64k", "--sp", "2", "--json")
    assert json.loads(cli(*memory, "--env")[1])["cautions"] == [solver.results.rocm_env_caution()]
    assert json.loads(cli(*memory)[1])["cautions"] == []


def test_the_ranked_table_gives_offloads_host_memory_where_a_plan_offloads(cli):
    # Qwen3-4B within 6 A100s at its longest: #1 offloads (102.2 GiB of host memory per node), #2 and #3 do not.
    status, out, _ = cli("--model", "4B", "--gpu", "a100", "--gpus", "6", "--maximize", "len", "--top", "3")
    rows = ranking_rows(out)
    header = next(line for line in out.splitlines() if line.startswith("┃"))
    assert status == 0 and "host GiB/node" in header
    column = [cell.strip() for cell in header.split("┃")[1:-1]].index("host GiB/node")
    assert [row[column] for row in rows] == ["102.2", "", ""]
    # With --host-ram, every plan's need, one without Offload its start-up load (Qwen3-4B ties its embeddings: 15
    # GiB on each of its 4 ranks, beside the reference model's fp32 shards, 21.1), as solve cluster gives a pool's.
    status, out, _ = cli("--model", "4B", "--gpu", "a100", "--gpus", "6", "--maximize", "len", "--top", "3",
                         "--host-ram", "1024")
    rows = ranking_rows(out)
    assert status == 0 and [row[column] for row in rows] == ["102.2", "81.1", "81.1"]
    # No column where no plan offloads and no --host-ram is given.
    status, out, _ = cli("--model", "4B", "--gpu", "a100", "--gpus", "4", "--len", "16k", "--top", "3")
    assert status == 0 and "ranked plans" in out and "host GiB" not in out


def test_the_ranked_tables_host_need_names_the_trainers_nodes_where_others_hold_the_rollout_alone(cli):
    # Qwen3-8B within 16 A100s beside 4 rollout GPUs, nodes of 8: #1 on 3 nodes (its trainer on 2, the rollout a
    # whole node), #2 on 2 (on 1), #3 on one node; the need is per node the trainer runs on, as the plan line says.
    status, out, _ = cli("--model", "8B", "--len", "32k", "--gpu", "a100", "--gpus", "16", "--node-gpus", "8",
                         "--rollout-gpus", "4", "--top", "3", "--host-ram", "1TB")
    rows = ranking_rows(out)
    header = next(line for line in out.splitlines() if line.startswith("┃"))
    column = [cell.strip() for cell in header.split("┃")[1:-1]].index("host GiB/node")
    # (No release named: each rank loads the model, 30.5 GiB. On 2 nodes, each of rank 0's node's 8 holds it beside
    # half the reference model's shards: 8 x 30.5 + 20.3 GiB; on one node of 8, 8 x 30.5 + 40.6; on 4 GPUs, 4 x
    # 30.5 + 40.6.)
    assert status == 0 and [row[column] for row in rows] == ["264.5 (2 of 3)", "284.8 (1 of 2)", "162.7"]
    assert "per node the trainer runs on (2 of 3: the other holds only its rollout)" in " ".join(out.split())
    assert ("\nhost GiB/node (N of M): needed on the N nodes its trainer runs on; the others hold its rollout alone\n"
            in out)
    # Without --host-ram no plan here offloads: no host column, and no note on one.
    status, out, _ = cli("--model", "8B", "--len", "32k", "--gpu", "a100", "--gpus", "16", "--node-gpus", "8",
                         "--rollout-gpus", "4", "--top", "3")
    assert status == 0 and "ranked plans" in out and "host GiB/node" not in out
    # With a lowered token budget as well, each note is a line of its own, the budget's first.
    status, out, _ = cli("--model", "8B", "--len", "128k", "--gpu", "a100", "--gpus", "16", "--node-gpus", "8",
                         "--rollout-gpus", "4", "--top", "3", "--host-ram", "1TB", "--token-budget", "auto")
    assert status == 0 and (
        "\n* trainer.max_token_len_per_gpu below Trinity's default ceil(2 x L / SP), which does not fit "
        "(--token-budget auto)\nhost GiB/node (N of M): needed on the N nodes its trainer runs on; the others hold "
        "its rollout alone\n") in out
    # Within one node beside its rollout no plan spans nodes: no rollout or nodes columns.
    status, out, _ = cli("--model", "8B", "--len", "32k", "--gpu", "a100-80g", "--gpus", "4", "--rollout-gpus", "4",
                         "--top", "2")
    header = next(line for line in out.splitlines() if line.startswith("┃"))
    assert status == 0 and [cell.strip() for cell in header.split("┃")[1:4]] == ["#", "GPUs", "setting"]


def test_the_ranked_table_has_a_yarn_column_only_where_a_plan_needs_yarn(cli):
    # Qwen3-4B at 32768 tokens needs no YaRN (native 40960): no empty column takes a narrow terminal's room.
    status, out, _ = cli("--model", "4B", "--len", "32k", "--gpus", "4", "--gpu", "h20", "--top", "4")
    header = next(line for line in out.splitlines() if line.startswith("┃"))
    assert status == 0 and [cell.strip() for cell in header.split("┃")[1:-1]] == [
        "#", "GPUs", "setting", "max_model_len", "tokens/GPU", "host GiB/node", "cost", "evidence", "source cell"]
    # At its longest within 4 H20s every plan is past 40960 tokens: each row gives its factor.
    status, out, _ = cli("--model", "4B", "--maximize", "len", "--gpus", "4", "--gpu", "h20", "--top", "3")
    rows = ranking_rows(out)
    header = next(line for line in out.splitlines() if line.startswith("┃"))
    column = [cell.strip() for cell in header.split("┃")[1:-1]].index("YaRN")
    assert status == 0 and [row[column] for row in rows] == ["3.25", "2.5", "2.25"]
    # Within 2 A100s only the longest plan is past it: the column is there for that one, empty for the others.
    status, out, _ = cli("--model", "4B", "--maximize", "len", "--gpus", "2", "--gpu", "a100", "--top", "4")
    rows = ranking_rows(out)
    header = next(line for line in out.splitlines() if line.startswith("┃"))
    column = [cell.strip() for cell in header.split("┃")[1:-1]].index("YaRN")
    assert status == 0 and [row[column] for row in rows] == ["1.25", "", "", ""]


def test_a_longest_context_past_what_is_validated_names_the_cheapest_plan_within_it(cli):
    # Qwen3-8B on 8 MI300X reaches 506880 tokens by estimate, a YaRN factor of 12.4; at 131072, the longest Qwen's
    # model cards validate, Env + SP=4 on the same 8 GPUs trains it for 0.38x the relative step time.
    flags = ("--model", "8B", "--gpu", "mi300x", "--gpus", "8", "--maximize", "len")
    status, [answer] = run_json(cli, *flags)
    within = answer["validated"]
    assert status == 0 and answer["plans"][0]["max_model_len"] == 506880
    assert (within["gpus"], within["env"], within["offload"], within["sp"], within["max_model_len"]) == (
        8, True, False, 4, 131072)
    assert check_plan(solver.tables.load_catalog(), within, gpu="MI300X", model="Qwen3-8B", budget_gpus=8,
                      max_model_len=131072, estimates=True) == []
    assert ("validated at 131072 (the longest YaRN is validated for), the cheapest plan is Env + SP=4 on 8 GPUs "
            "(estimated, extrapolated; 0.38x the relative step time): --len 131072") in " ".join(cli(*flags)[1].split())
    # A model on its own RoPE scaling: its native context.
    _, out, _ = cli("--model", "llama-3.1-8b", "--gpu", "h200", "--gpus", "8", "--maximize", "len")
    assert "native at 131072, the cheapest plan is" in " ".join(out.split())
    # Where the plan there is the same, briefly (the H20's documented 133120 for Qwen3-4B: Env + Offload + SP=4 on
    # 4 GPUs at 131072 too); not where the longest context is within what is validated (the A100's 102400).
    status, answers = run_json(cli, "--maximize", "len", "--gpus", "6", "--model", "4B")
    assert status == 0 and [a["plans"][0]["max_model_len"] for a in answers] == [102400, 133120]
    within = answers[1]["validated"]
    assert "validated" not in answers[0] and (within["gpus"], within["env"], within["offload"], within["sp"]) == (
        4, True, True, 4) and (within["max_model_len"], within["evidence"]) == (131072, "documented")
    _, out, _ = cli("--maximize", "len", "--gpus", "6", "--model", "4B", "--gpu", "h20")
    assert ("\nvalidated      at 131072 (the longest YaRN is validated for), the cheapest plan is this one "
            "(documented): --len 131072\n") in out
    # Nor for other objectives.
    status, [answer] = run_json(cli, *flags[:6], "--len", "200k")
    assert status == 0 and "validated" not in answer


def test_an_h100_estimate_names_the_a100_cell_that_measured_the_same_plan(cli):
    # The H100-80GB reports 361 MiB less than the A100-80GB, so the A100's tables do not vouch for it, but the A100
    # table for 4 GPUs measured Qwen3-14B with Env + Offload + SP=2 at 32768: the estimate names that cell beside it.
    flags = ("--model", "14B", "--gpu", "h100", "--gpus", "4", "--len", "32k")
    status, [answer] = run_json(cli, *flags)
    best = answer["plans"][0]
    assert status == 0 and (best["evidence"], best["env"], best["offload"], best["sp"]) == ("estimated", True, True, 2)
    assert answer["larger_gpu_cell"] == {"model": "Qwen3-14B", "gpus": 4, "max_model_len": 32768,
                                         "setting": "Env + Offload + SP=2", "gpu": "A100-80GB"}
    assert ("larger GPU the A100-80GB table for 4 GPUs says 'Env + Offload + SP=2' at 32768: it trained there, with a "
            "little more memory per GPU than the H100-80GB's") in " ".join(cli(*flags)[1].split())
    # Not a cell that only infers the plan (the A100's 'vanilla' at 16384 on 4 GPUs, for Env on 4 H100s), nor one of
    # a GPU type of the same memory (80 GiB as sold, taken as the A100's 80.0 GiB).
    status, [answer] = run_json(cli, "--model", "4B", "--gpu", "h100", "--gpus", "4", "--len", "16k")
    assert status == 0 and answer["plans"][0]["evidence"] == "estimated" and "larger_gpu_cell" not in answer
    status, out, _ = cli("--model", "14B", "--gpu", "foo", "--gpu-memory", "80", "--gpus", "4", "--len", "32k", "--json")
    [answer] = json.loads(out)  # (a note on stderr says 80 is taken as GiB, and borrows no other GPU type's tables)
    assert status == 0 and answer["plans"][0]["evidence"] == "estimated" and "larger_gpu_cell" not in answer
    # As the note says, 80GiB (the A100-80GB driver's 81920 MiB) plans with the A100's tables.
    status, [answer] = run_json(cli, "--model", "14B", "--gpu", "foo", "--gpu-memory", "80GiB", "--gpus", "4", "--len",
                                "32k")
    assert status == 0 and answer["plans"][0]["evidence"] == "documented"
    assert answer["plans"][0]["source"]["gpu"] == "A100-80GB"
    # Not where no GPU type near its memory measured it (the L40S), nor for a documented plan, nor with --estimate.
    for asked in (("--model", "14B", "--gpu", "l40s", "--gpus", "8", "--len", "8k"),
                  ("--model", "14B", "--gpu", "a100-80g", "--gpus", "4", "--len", "32k"), (*flags, "--estimate")):
        status, [answer] = run_json(cli, *asked)
        assert status == 0 and "larger_gpu_cell" not in answer


def test_fewer_ranked_plans_than_asked_say_they_are_within_the_host_memory_given(cli):
    # Within 8 A100s at 65536, Qwen3-8B's documented and inferred Offload plans need 162.6 GiB of host memory per
    # node: --host-ram 100GB leaves one plan, and the line under it says what the others were weighed within. (On
    # Trinity 0.5.1, which loads the model on rank 0 alone: on every rank, no release named, no plan fits 100 GiB.)
    status, out, _ = cli("--model", "8B", "--gpu", "a100", "--gpus", "8", "--len", "64k", "--top", "3",
                         "--host-ram", "100", "--trinity-version", "0.5.1")
    assert status == 0 and ("1 plan of the 3 asked for: each other plan that trains within --host-ram 100 GiB is no "
                            "cheaper") in " ".join(out.split())
    assert "within --host-ram" not in cli("--model", "8B", "--gpu", "a100", "--gpus", "8", "--len", "64k", "--top",
                                          "5")[1]


def test_thin_headroom_counts_a_plan_at_exactly_no_room(cli):
    # A prediction that fits with 0.0 GiB to spare (the total at the usable memory) is the thinnest room of all.
    beyond, codes = ("8 GPUs (calibrated up to 6)",), (BeyondCode.MORE_GPUS,)
    at_default = MarginRoom(0.01, 0.01, 73.9)
    assert thin_headroom(0.0, beyond, 79.6, at_default, codes).startswith(
        "0.0 GiB to spare where the estimate extrapolates")
    assert thin_headroom(-0.1, beyond, 79.6, at_default, codes) == ""  # does not fit: no caution of room


def test_an_exact_sp_refusal_lists_the_exact_count_itself_where_it_is_allowed(cli):
    # SP=4 does not divide 2 GPUs; the degrees that do are 1 and 2: the count itself is one of them.
    assert cli("--model", "4B", "--len", "8192", "--gpus", "2", "--exact", "--sp", "4") == (2, "", (
        "solve: error: --sp 4 is not allowed: SP=4 does not divide 2 GPUs (the degrees that divide the 2 trainer "
        "GPUs, that Qwen3-4B's heads allow and that keep an SP group in a node of 8 GPUs: 1, 2)\n"))


def test_a_larger_gpu_cell_is_only_of_a_gpu_type_with_at_most_3_percent_more_memory(cli):
    # The H20-96GB (97871 MiB) documents Env + Offload for Qwen3-1.7B on 1 GPU at 28672. A GPU of 96000 MiB (1.9%
    # less) names that cell beside its estimate; one of 92331 MiB (6% less) does not.
    flags = ("--model", "1.7B", "--gpu", "foo", "--gpus", "1", "--len", "28672", "--json")
    status, out, _ = cli(*flags, "--gpu-memory", "96000MiB")
    [answer] = json.loads(out)
    assert status == 0 and answer["plans"][0]["evidence"] == "estimated"
    assert answer["larger_gpu_cell"] == {"model": "Qwen3-1.7B", "gpus": 1, "max_model_len": 28672,
                                         "setting": "Env + Offload", "gpu": "H20-96GB"}
    status, out, _ = cli(*flags, "--gpu-memory", "92331MiB")
    [answer] = json.loads(out)
    assert status == 0 and answer["plans"][0]["evidence"] == "estimated" and "larger_gpu_cell" not in answer


def test_a_longest_context_of_exactly_the_validated_length_names_no_plan_within_it(cli):
    # Qwen2.5-7B-Instruct on 2 MI300X reaches 131072 tokens by estimate, exactly what its model card validates
    # (4 x 32768): that plan is within it already, so no other is named.
    status, [answer] = run_json(cli, "--model", "Qwen2.5-7B-Instruct", "--gpu", "mi300x", "--gpus", "2",
                                "--maximize", "len")
    assert status == 0 and answer["plans"][0]["max_model_len"] == 131072 and "validated" not in answer


def test_no_estimate_names_the_estimates_plan_at_a_lowered_budget_beside_the_tables_plan_without_a_pin(cli):
    # Qwen3-4B at 40960 tokens on 2 A100 with --sp 1: the tables train it without the pin, and the estimates with
    # it at a lowered token budget. Lifting --no-estimate and the default budget (1 + 2) is nearer than lifting a pin
    # of the caller's (4): the estimates' plan is named too.
    status, [answer] = run_json(cli, "--model", "4B", "--gpu", "a100-80g", "--gpus", "2", "--len", "40960",
                                "--no-estimate", "--sp", "1")
    assert status == 1 and answer["reason"].endswith(
        "40960 tokens trains if you drop --sp 1: Env + Offload + SP=2 on 2 GPUs (documented); the memory model "
        "estimates a plan, Env + Offload on 2 GPUs at 40960 tokens with a lowered max_token_len_per_gpu of 56320: "
        "drop --no-estimate and add --token-budget auto")


def test_a_lowered_token_budget_names_no_larger_gpu_cell(cli):
    # Qwen3-4B on 1 H100 at 28672 with --token-budget auto: Env + Offload at a lowered budget. The A100 table for 1 GPU
    # documents Env + Offload at 28672, but at Trinity's default budget, not the lowered one: no cell is named.
    status, [answer] = run_json(cli, "--model", "4B", "--gpu", "h100", "--gpus", "1", "--len", "28672",
                                "--token-budget", "auto")
    best = answer["plans"][0]
    assert status == 0 and best["evidence"] == "estimated" and best["max_token_len_per_gpu"] == 56320  # not 57344
    assert (best["env"], best["offload"], best["sp"]) == (True, True, 1)
    assert "larger_gpu_cell" not in answer


def test_validated_names_the_same_setting_on_other_gpus(monkeypatch):
    # The plan within the validated length is named where its GPU count differs, even with the best plan's setting;
    # and where it is the best plan's setting on as many GPUs, too (the row says so briefly).
    catalog = solver.tables.load_catalog()
    query = make_query(catalog, model="Qwen3-8B", gpu="mi300x", budget_gpus=8, objective="max_len")
    [answer] = solver.solve.plan(query, catalog)
    best, bare = answer.plans[0], answer.model_copy(update={"validated": None})
    fewer = best.model_copy(update={"gpus": best.gpus // 2, "max_model_len": 131072})
    monkeypatch.setattr(solver.solve, "optional_best", lambda *args, **kwargs: fewer)
    assert solver.solve._with_validated(catalog, query, bare).validated == fewer
    same = best.model_copy(update={"max_model_len": 131072})
    monkeypatch.setattr(solver.solve, "optional_best", lambda *args, **kwargs: same)
    assert solver.solve._with_validated(catalog, query, bare).validated == same
    monkeypatch.setattr(solver.solve, "optional_best", lambda *args, **kwargs: None)
    assert solver.solve._with_validated(catalog, query, bare).validated is None


def test_a_plan_at_another_token_budget_has_the_cautions_of_its_own_room():
    # Qwen3-0.6B on 2 RTX 4090s at 16384 (Env + Offload + SP=2): 0.4 GiB to spare at Trinity's default budget and the
    # card's default margin, thin (under 1); at the least budget that holds a sequence (half the tokens per GPU) the
    # room grows, and the caution goes with it.
    catalog = solver.tables.load_catalog()
    query = make_query(catalog, model="0.6B", gpu="rtx-4090", budget_gpus=2, max_model_len=16384)
    [answer] = plan(query, catalog)
    best = answer.plans[0]
    assert best.headroom_gb < 1 and any("GiB to spare where the estimate extrapolates" in c for c in best.cautions)
    roomier = at_token_budget(catalog, query, answer.gpu, best, 16384 // best.sp)
    assert roomier.headroom_gb >= 1 and roomier.caution_codes == (CautionCode.SP_OVER_PCIE,)  # SP=2 on 4090s


def test_the_host_memory_line_of_a_plan_without_offload_says_it_is_the_load(cli):
    # The load, 262.8 GiB on rank 0's node, beside that node's half of the reference model's fp32 shards, 146.5: on
    # Trinity 0.6, which loads it on rank 0 alone on an H200 (no release named, each of the node's 8 ranks would).
    flags = ("--model", "llama-3.1-70b", "--gpu", "h200", "--gpus", "16", "--len", "32k", "--trinity-version", "0.6",
             "--host-ram", "410")
    status, out, _ = cli(*flags)
    assert status == 0 and ("host memory    409.4 GiB per node while the model loads (rank 0 loading the model), "
                            "within --host-ram 410 GiB; Trinity 0.5 needs") in out
    assert "for Offload" not in out
    status, out, _ = cli(*flags[:-1], "1000", "--offload")  # with Offload: its states, or the load where that is more
    assert status == 0 and "GiB per node for Offload, within --host-ram 1000 GiB; Trinity 0.5 needs" in out


@pytest.mark.parametrize(("budget", "node_gpus", "kept"), [
    (2, 8, 1), (3, 8, 1), (8, 8, 2), (16, 8, 8), (8, 4, 4),  # a quarter of one node's budget; past one, its last node
])
def test_a_plan_that_takes_the_whole_budget_says_how_to_keep_gpus_for_the_rollout(
        cli, budget: int, node_gpus: int, kept: int):
    """`--gpus` counts the trainer's GPUs alone: a plan taking all of them leaves the rollout none, and its ``for
    rollout`` line names the flags, with numbers, that keep some for it, and the plan they get; asking so gets that
    plan and leaves the rollout those GPUs (a trainer past one node on whole nodes: 12 of 16 would not be)."""
    flags = ("--model", "0.6B", "--gpu", "a100", "--len", "8k", "--exact", "--node-gpus", str(node_gpus))
    status, out, _ = cli(*flags, "--gpus", str(budget))
    trainer = f"{budget - kept} trainer GPU{'s' if budget - kept > 1 else ''}"
    assert status == 0 and out.splitlines()[1].endswith("(none left for rollout)")
    assert out.splitlines()[2].startswith(
        f"for rollout    --total-gpus {budget} --rollout-gpus {kept} keeps {kept} of the {budget} for it: vanilla on "
        f"{trainer}, 8192 tokens, {budget / (budget - kept):.2f}x the relative step time (")
    status, out, _ = cli(*flags, "--total-gpus", str(budget), "--rollout-gpus", str(kept))
    trainer = f"{budget - kept} of {budget - kept} GPU{'s' if budget - kept > 1 else ''}"
    assert status == 0 and f"vanilla on {trainer}, with {kept} rollout GPU" in out.splitlines()[1]
    assert "for rollout" not in out


@pytest.mark.parametrize(("model", "length"), [("32B", "131072"), ("llama-3.1-70b", "65536")])
def test_a_plan_that_takes_the_whole_budget_names_no_request_for_the_rollout_that_gets_no_plan(
        cli, model: str, length: str):
    """A user review: the plan line said "ask --gpus 6 --rollout-gpus 2", which has no plan (SP=8 needs all 8 GPUs
    at that length). The planner asks that question itself, and where it has no plan says so, asking for the
    rollout's GPUs beside the 8 instead; or, where a lowered token budget plans it (persona93e), naming that request:
    these estimates lower it."""
    # Host memory ample for either (Llama-3.1-70B's Offload on 8 GPUs needs 2688.6 GiB with every rank loading it).
    flags = ("--model", model, "--gpu", "h100", "--len", length, "--host-ram", "3TB")
    status, out, _ = cli(*flags, "--gpus", "8")
    assert status == 0 and out.splitlines()[1:3] == [
        "plan           Env + Offload + SP=8 on 8 of 8 GPUs (none left for rollout)",
        ("for rollout    --total-gpus 8 --rollout-gpus 4 --token-budget auto keeps 4 of the 8 for it: Env + Offload + "
         "SP=4 on 4 trainer GPUs with a lowered")]
    assert "--gpus 6" not in out
    kept = run_json(cli, *flags, "--gpus", "8")[1][0]["rollout_kept"]
    assert (kept["rollout_gpus"], kept["plan"]["gpus"], kept["plan"]["lowered_budget"]) == (4, 4, True)
    assert cli(*flags, "--gpus", "6", "--rollout-gpus", "2")[0] == 1  # indeed no plan at the default budget
    assert cli(*flags, "--total-gpus", "8", "--rollout-gpus", "4", "--token-budget", "auto")[0] == 0
    status, out, _ = cli(*flags, "--gpus", "8", "--rollout-gpus", "2")  # the way it names
    assert status == 0
    assert ("plan           Env + Offload + SP=8 on 8 of 8 GPUs, with 8 rollout GPUs, trainer and rollout on 2 nodes "
            "of 8") in out


def test_a_plan_that_takes_the_whole_budget_names_the_plan_of_the_request_that_keeps_gpus_for_the_rollout(cli):
    # SP=4 on all 4 A100s; with 1 kept for the rollout, Env + Offload + SP=2 on 2 (3 GPUs take no SP that trains it),
    # so the GPU it leaves goes to the rollout too: the line names --total-gpus 4 --rollout-gpus 2 (the 4 asked for, now
    # in all: as --gpus 2 --rollout-gpus 2), its plan, its step time
    # against the best's; asking them gets that plan, with no GPU unused (--gpus 3 --rollout-gpus 1 leaves one).
    flags = ("--model", "8B", "--gpu", "a100-80g", "--len", "32768")
    status, out, _ = cli(*flags, "--gpus", "4")
    lines = out.splitlines()
    assert status == 0 and [lines[1], " ".join(" ".join(lines[2:4]).split())] == [  # the row wraps past the width
        "plan           SP=4 on 4 of 4 GPUs (none left for rollout)",
        ("for rollout --total-gpus 4 --rollout-gpus 2 keeps 2 of the 4 for it: Env + Offload + SP=2 on 2 trainer "
         "GPUs, 32768 tokens, 3.42x the relative step time (documented)")]
    status, out, _ = cli(*flags, "--gpus", "2", "--rollout-gpus", "2")
    assert status == 0 and out.splitlines()[1] == (
        "plan           Env + Offload + SP=2 on 2 of 2 GPUs, with 2 rollout GPUs: 4 in all")
    assert f"cost           {1.111:.4g} relative step time" in out and 1.111 / 0.325 == pytest.approx(3.42, abs=0.005)
    # Maximising the length, it trades length: 51200 tokens instead of 102400.
    status, out, _ = cli("--model", "8B", "--gpu", "a100-80g", "--gpus", "4", "--maximize", "len")
    assert status == 0 and out.splitlines()[2] == (
        "for rollout    --total-gpus 4 --rollout-gpus 2 keeps 2 of the 4 for it: Env + Offload + SP=2 on 2 trainer "
        "GPUs, 51200 tokens instead of 102400 (documented)")
    # Its JSON: how many kept, and the plan (null where there is none: the 32B case above).
    status, [answer] = run_json(cli, *flags, "--gpus", "4")
    assert status == 0 and answer["rollout_kept"]["rollout_gpus"] == 2
    assert {key: answer["rollout_kept"]["plan"][key] for key in ("gpus", "env", "offload", "sp", "cost")} == {
        "gpus": 2, "env": True, "offload": True, "sp": 2, "cost": 1.111}
    # With --exact the rollout's question is asked within N-K too: exactly 3 train nothing, 2 of 3 do.
    status, out, _ = cli(*flags, "--gpus", "4", "--exact")
    assert status == 0 and " ".join(" ".join(out.splitlines()[2:4]).split()) == (
        "for rollout --total-gpus 4 --rollout-gpus 2 keeps 2 of the 4 for it: Env + Offload + SP=2 on 2 trainer "
        "GPUs, 32768 tokens, 3.42x the relative step time (documented)")
    assert run_json(cli, *flags, "--gpus", "4", "--exact")[1][0]["rollout_kept"]["rollout_gpus"] == 2
    # Where the rollout has GPUs (or a place elsewhere: 0), or the budget is the planner's, nothing is asked.
    for given in (("--gpus", "4", "--rollout-gpus", "0"), ("--gpus", "4", "--rollout-gpus", "1"),
                  ("--minimize", "gpus")):
        status, out, _ = cli(*flags, *given)
        assert status == 0 and "for rollout" not in out
        assert "rollout_kept" not in run_json(cli, *flags, *given)[1][0]


def test_the_rollout_line_names_the_lowered_token_budget_that_keeps_gpus_for_the_rollout(cli):
    """A user review (persona93e): GRPO on one node of 4 A100s at 65536 tokens. Env + Offload + SP=4 takes all 4, and
    the line said that keeping one for the rollout leaves no plan (3 GPUs take no SP, 2 stop at 51200 in the table),
    so buy GPUs; yet --token-budget auto trains it on 2, the other 2 for the rollout, as the no-plan answer of that
    very request says. The line now names that request, flag and all, and its lowered budget."""
    flags = ("--model", "8B", "--gpu", "a100-80g", "--len", "65536")
    status, out, _ = cli(*flags, "--gpus", "4")
    lines = out.splitlines()
    assert status == 0 and " ".join(" ".join(lines[2:4]).split()) == (
        "for rollout --total-gpus 4 --rollout-gpus 2 --token-budget auto keeps 2 of the 4 for it: Env + Offload + SP=2 "
        "on 2 trainer GPUs with a lowered max_token_len_per_gpu of 50176, 65536 tokens, 1.69x the relative step time "
        "(estimated)")
    assert 1.111 / 0.6565 == pytest.approx(1.69, abs=0.005)
    status, [answer] = run_json(cli, *flags, "--gpus", "4")
    kept = answer["rollout_kept"]
    assert status == 0 and kept["rollout_gpus"] == 2
    assert {key: kept["plan"][key] for key in ("gpus", "sp", "max_token_len_per_gpu", "lowered_budget")} == {
        "gpus": 2, "sp": 2, "max_token_len_per_gpu": 50176, "lowered_budget": True}
    # The request it names gets that plan; without the flag, none.
    status, out, _ = cli(*flags, "--total-gpus", "4", "--rollout-gpus", "2", "--token-budget", "auto")
    assert status == 0 and out.splitlines()[1] == (
        "plan           Env + Offload + SP=2 on 2 of 2 GPUs, with 2 rollout GPUs")
    assert "max_token_len_per_gpu = 50176" in out
    assert cli(*flags, "--total-gpus", "4", "--rollout-gpus", "2")[0] == 1
    # Where no estimate may lower a budget (--no-estimate), the line says as before that no plan keeps GPUs for it.
    status, out, _ = cli(*flags, "--gpus", "4", "--no-estimate")
    assert status == 0 and out.splitlines()[2] == (
        "for rollout    keeping 1 of the 4 for it leaves no plan for 65536 tokens (within 3); give the rollout GPUs "
        "beside these instead: --gpus 4 --rollout-gpus R")


def test_the_plan_line_counts_the_gpus_in_all_that_gpus_and_rollout_gpus_ask_for(cli):
    """A user review (persona93e): on one node of 4 A100s, `--gpus 4 --rollout-gpus 1` read as 4 in all; the plan
    line said `SP=4 on 4 of 4 GPUs, with 1 rollout GPU`, and --emit trinity wrote gpu_per_node: 5. --gpus counts the
    trainer's alone: the line now says how many the request takes in all. --total-gpus says so in its header."""
    flags = ("--model", "8B", "--gpu", "a100-80g", "--len", "32768")
    status, out, _ = cli(*flags, "--gpus", "4", "--rollout-gpus", "1")
    assert status == 0 and out.splitlines()[1] == "plan           SP=4 on 4 of 4 GPUs, with 1 rollout GPU: 5 in all"
    status, out, _ = cli(*flags, "--gpus", "2", "--rollout-gpus", "2")
    assert status == 0 and out.splitlines()[1] == (
        "plan           Env + Offload + SP=2 on 2 of 2 GPUs, with 2 rollout GPUs: 4 in all")
    # Where the trainer leaves GPUs of the budget unused, the words say what becomes of them, and count none in all.
    status, out, _ = cli("--model", "8B", "--gpu", "a100-80g", "--maximize", "len", "--gpus", "6", "--rollout-gpus",
                         "2")
    assert status == 0 and out.splitlines()[1] == (
        "plan           Env + Offload + SP=4 on 4 of 6 GPUs, with 2 rollout GPUs (2 unused: --rollout-gpus 4 gives "
        "them to the rollout)")
    status, out, _ = cli(*flags, "--total-gpus", "5", "--rollout-gpus", "1")
    assert status == 0 and "in all (1 for the rollout): optimal" in out.splitlines()[0]
    assert out.splitlines()[1] == "plan           SP=4 on 4 of 4 GPUs, with 1 rollout GPU"


def test_a_config_whose_plan_takes_the_whole_budget_asks_nothing_for_its_rollout(cli, tmp_path: Path):
    # A config's rollout (its explorer's engines) has GPUs of its own: no "for rollout" line, no rollout_kept.
    text = (EXAMPLES / "trinity.yaml").read_text(encoding="utf-8")
    config = tmp_path / "no-cluster.yaml"
    config.write_text(text.replace("cluster:\n  node_num: 1\n  gpu_per_node: 8\n", ""), encoding="utf-8")
    flags = ("--from-config", str(config), "--gpus", "4", "--gpu", "a100-80g")
    status, out, _ = cli(*flags)
    assert status == 0 and "plan           SP=4 on 4 of 4 GPUs\n" in out and "for rollout" not in out
    status, [answer] = run_json(cli, *flags)
    assert status == 0 and answer["current"] is not None and "rollout_kept" not in answer


def test_a_plan_on_one_gpu_names_no_way_to_keep_one_for_the_rollout(cli):
    status, out, _ = cli("--model", "32B", "--gpu", "h100", "--gpus", "1", "--len", "8k")
    assert status == 0 and "plan           Env + Offload on 1 of 1 GPU (none left for rollout)\n" in out


def test_every_command_says_in_the_same_words_whether_host_memory_was_checked(cli):
    # Env + Offload + SP=4 on 4 A100s at 102400 for Qwen3-4B: the plan summary, its fragment, solve memory and the
    # map say alike that nothing checked its 102.2 GiB per node, or that it is within --host-ram 256GB (solve memory
    # said "it fits in the 256 GiB of --host-ram", the summary "not checked: give a node's RAM as --host-ram GB ...").
    plan = ("--maximize", "len", "--gpus", "6", "--model", "4B", "--gpu", "a100")
    memory = ("memory", "--model", "4B", "--gpu", "a100", "--gpus", "4", "--len", "102400", "--env", "--offload",
              "--sp", "4")
    chart = ("map", "--gpu", "a100", "--model", "4B", "--gpus-up-to", "4")
    checks = (((), "; not checked: --host-ram not given"), (("--host-ram", "256"), ", within --host-ram 256 GiB"))
    moment = "at start-up, every rank loading the model; 93.4 while training)"  # the 102.2 is the load's (tied)
    for host, words in checks:
        outputs = [" ".join(cli(*flags, *host)[1].replace("\n# ", " ").split())
                   for flags in (plan, (*plan, "--emit", "trinity"), memory)]
        assert [words in out for out in outputs] == [True] * 3
        assert f"102.2 GiB per node for Offload ({moment}{words}" in outputs[0]
        assert f"whichever is more; here {moment}{words}" in outputs[2]
        assert (f"\n{fragment_comment(f'host memory: 102.2 GiB per node for Offload ({moment}{words}')}"
                in cli(*plan, *host, "--emit", "trinity")[1])
    legend = "O Offload (host memory per node not checked: --host-ram not given)"
    assert legend in cli(*chart)[1] and "not checked" not in cli(*chart, "--host-ram", "256")[1]
    status, out, _ = cli(*memory, "--host-ram", "64")
    assert status == 1 and "93.4 while training); more than --host-ram 64 GiB: it does not train there" in " ".join(
        out.split())


def test_no_estimate_names_a_plan_of_the_tables_without_host_ram_once(cli):
    # The tables train Qwen3-4B at 16384 on 8 A100s without --host-ram 16GB: the reason names that plan and the least
    # host memory one needs; it named the estimates' plan after them too, the same plan and the same least, and
    # --host-ram 16GB a second time ("... but it needs 141.0 GiB ..., more than --host-ram 16GB; at the least, ...").
    status, out, _ = cli("--model", "4B", "--gpu", "a100", "--len", "16384", "--host-ram", "16", "--no-estimate",
                         "--gpus", "8")
    assert status == 1 and ("no plan: nothing in the tables for Qwen3-4B on A100-80GB within 8 GPUs trains with "
                            "--host-ram 16 GiB; without --host-ram, vanilla on 8 GPUs trains it (16384 tokens), and it "
                            "needs 141.0 GiB of host memory per node while the model loads; at the least, Env on 2 "
                            "GPUs trains it (16384 tokens), and it needs 51.1 GiB of host memory per node while the "
                            "model loads --explain says why") in " ".join(out.split())
    assert "memory model estimates" not in out


def test_a_bad_memory_model_file_is_named_after_its_option_in_every_command(cli, tmp_path: Path):
    # As --cells's errors are ("--cells FILE: ..."); they began with the bare file name.
    bad = tmp_path / "mine.yaml"
    bad.write_text("foo: 1\n", encoding="utf-8")
    for command, flags in (("solve", ("--model", "4B", "--len", "8192")),
                           ("solve memory", ("memory", "--model", "4B", "--gpu", "a100", "--gpus", "2", "--len", "8k")),
                           ("solve map", ("map", "--gpu", "a100")),
                           ("solve cluster", ("cluster", str(EXAMPLES / "fleet.yaml")))):
        status, out, err = cli(*flags, "--memory-model", str(bad))
        assert (status, out) == (2, "") and err.startswith(f"{command}: error: --memory-model {bad}: unknown field "
                                                           "'foo' (fields: source, coefficients, margin, fit)")
        assert err.count("\n") == 1
        missing = tmp_path / "missing.yaml"
        assert cli(*flags, "--memory-model", str(missing)) == (
            2, "", f"{command}: error: --memory-model {missing}: cannot read: No such file or directory\n")


def test_the_host_memory_line_says_that_without_host_ram_nothing_checked_it(cli):
    """A plan whose Offload needs more host memory than a home machine's 128 GiB: without --host-ram the line says
    nothing held it to a node's RAM and names the flag; with it, the plan changes and the line says it is within."""
    flags = ("--model", "8B", "--gpu", "rtx4090", "--gpus", "4", "--len", "16k")
    status, out, _ = cli(*flags)
    assert status == 0 and "plan           Env + Offload + SP=4 on 4 of 4 GPUs" in out
    # No release named: each of the 4 ranks loads the model at start-up, 4 x 30.5 GiB beside the reference model's
    # and the actor's pinned shards, 203.4, more than training's 183.0.
    loading = "203.4 GiB per node for Offload (at start-up, every rank loading the model; 183.0 while training)"
    release = ("; --trinity-version counts a release's own, less where rank 0 alone loads the model (0.5.1 and 0.5.0) "
               "or verl 0.7 builds the reference model in bf16 and places the pinned blocks (0.5)")  # the row wraps
    assert f"host memory {loading}; not checked: --host-ram not given{release}" in " ".join(out.split())
    status, out, _ = cli(*flags, "--host-ram", "256")
    assert status == 0 and f"host memory {loading}, within --host-ram 256 GiB{release}" in " ".join(out.split())
    assert "not checked" not in out
    status, out, _ = cli(*flags, "--host-ram", "128")
    assert status == 1 and "with Offload it needs 203.4 GiB of host memory per node" in out


# No release named: each rank of the trainer's node loads the untied model at start-up, 55.0 GiB each.
@pytest.mark.parametrize(("rollout", "gpus", "words"), [
    # one node: trainer and rollout share it (4 x 55.0 beside the reference model's and the actor's pinned shards)
    ("4", "4", "381.1 GiB per node for Offload (at start-up, every rank loading the model; 351.6 while training)"),
    # 8 x 55.0 beside the reference model's fp32 shards, 80.6
    ("8", "8", ("520.7 GiB while the model loads (every rank loading the model), per node the trainer runs on (1 of 2: "
                "the other holds only its rollout)")),
    ("16", "8", ("520.7 GiB while the model loads (every rank loading the model), per node the trainer runs on (1 of "
                 "3: the others hold only its rollout)")),
    # A trainer on 2 whole nodes, no rollout: both need it (the load, 8 x 55.0 GiB, on each, and each its half of the
    # reference model's fp32 shards, 40.3).
    (None, "16", "480.4 GiB per node while the model loads (every rank loading the model)"),
])
def test_the_host_memory_line_names_the_trainer_s_nodes_where_others_hold_only_its_rollout(
        cli, rollout: str | None, gpus: str, words: str):
    flags = ("--model", "14B", "--gpu", "a100", "--len", "32k", "--host-ram", "1024", "--exact", "--gpus", gpus,
             *(("--rollout-gpus", rollout) if rollout else ()))
    status, out, _ = cli(*flags)
    assert status == 0 and (f"host memory {words}, within --host-ram 1024 GiB; --trinity-version counts a release's "
                            "own, less where rank 0 alone loads the model (0.5.1 and 0.5.0) or verl 0.7 builds the "
                            "reference model in bf16 and places the pinned blocks (0.5)") in " ".join(out.split())
    status, out, _ = cli(*flags, "--emit", "trinity")
    said = fragment_comment(f"host memory: {words}, within --host-ram 1024 GiB")  # as the summary says it, wrapped
    assert status == 0 and f"\n{said}" in out


@pytest.mark.parametrize("command", [[], ["tables"], ["map"], ["cluster"], ["memory"], ["calibrate"], ["examples"]])
def test_every_commands_help_ends_with_its_exit_statuses(cli, command: list[str]):
    status, out, _ = cli(*command, "--help")
    assert status == 0
    statuses = " ".join(out.split()).rsplit("Exit status: ", 1)[1]
    assert statuses.startswith("0 ") and ", 2 bad input" in statuses, statuses
    # as docs/cli.md's exit table has a 74 for each, and its words every command's 130, 143, 141 and 70 (s83)
    assert statuses.endswith(", 74 a full disk, 130 Ctrl-C, 143 a request to end (SIGTERM), 141 a reader gone "
                             "(| head), 70 an internal error."), statuses


def test_fewest_gpu_hours_say_so_in_words_and_json(cli, monkeypatch):
    # A renter's question: the heading names it, the GPU-hours (GPUs x cost) are shown beside the cost and ranked by;
    # the JSON's objective is min_gpu_hours and each plan has gpu_hours after its cost (the other objectives' plans
    # leave it out: PLAN_ORDER above; test_json checks it against the schema). 6 GPUs, not the cheapest plan's 8.
    monkeypatch.setenv("COLUMNS", "200")
    asked = ("--model", "8B", "--gpu", "a100", "--gpus", "8", "--len", "32k", "--minimize", "gpu-hours")
    status, out, _ = cli(*asked, "--top", "2")
    assert status == 0
    assert out.startswith("A100-80GB · Qwen3-8B · fewest GPU-hours for 32768 tokens (budget 8): optimal\n"
                          "plan           Env + SP=2 on 6 of 8 GPUs")
    assert "\nGPU-hours      1.111 (6 GPUs x the cost: the GPU time a step takes, in the cost's units)\n" in out
    assert re.search(r"│ 1 │\s+6/8 │ Env \+ SP=2 .*│ 0\.1852 \(best\)\s+│\s+1\.111 │", out)
    assert re.search(r"│ 2 │\s+8/8 │ Env \+ SP=2 .*│ 0\.1389 \(0\.75x #1\)\s+│\s+1\.111 │", out)
    status, out, _ = cli(*asked, "--json")
    (answer,) = json.loads(out)
    best = answer["plans"][0]
    assert (status, answer["objective"], best["gpus"], best["gpu_hours"]) == (0, "min_gpu_hours", 6, 1.111)
    assert list(best)[list(best).index("cost") + 1] == "gpu_hours"
    # what a pin costs is said in GPU-hours; a --no-env estimate of fewer, which the question without it does not ask,
    # costs none (it said "the pin costs 0.99x the GPU-hours")
    unpinned = "the best plan is Env + SP=2 on 6 GPUs, cost 0.1852 (documented): the pin costs"
    assert f"without --offload, {unpinned} 2.00x the GPU-hours\n" in cli(*asked, "--offload")[1]
    assert (f"without --no-env, {unpinned} no GPU-hours (0.99x), but this plan is estimated, extrapolated\n"
            in cli(*asked, "--no-env")[1])


def test_a_limit_that_costs_gpus_at_equal_gpu_hours_says_so(cli):
    # lastread89: --host-ram short of Qwen3-14B's Offload on 1 H100 (351.6 GiB per node) keeps its setting on 3 nodes
    # of 1, the same GPU-hours, which --minimize gpu-hours ranks below the fewest GPUs: the limit costs 2 GPUs (it said
    # "costs no relative step time (0.33x)", the step time being no term of this objective)
    out = cli("--model", "14B", "--gpu", "h100", "--minimize", "gpu-hours", "--len", "8k", "--offload",
              "--node-gpus", "1", "--host-ram", "150")[1]
    words = " ".join(out.split())
    assert "plan Env + Offload on 3 GPUs, 3 whole nodes of 1" in words
    assert ("host limit with 351.6 GiB of host memory per node, the best plan is Env + Offload on 1 GPU, cost 2.02 "
            "(estimated; one trainer GPU: Trinity-RFT's guide strongly advises more GPUs): --host-ram 150 GiB costs "
            "2 GPUs") in words


def test_gpus_help_says_rollout_gpus_are_extra_and_the_default_budget_it_plans_with(cli, monkeypatch):
    # Someone with 8 GPUs in all reads --gpus as their total: the help says it is the trainer's, and its default.
    monkeypatch.setenv("COLUMNS", "300")  # one line per option: argparse wraps at hyphens too
    said = ("  --gpus N              trainer GPUs to use at most, rollout GPUs not counted (default: the most the "
            "tables measured, else 8; with --minimize, up to 64)\n")
    assert said in cli("--help")[1]
    assert ("--gpus N: the trainer GPU budget: use at most N, rollout GPUs not counted (--rollout-gpus; --total-gpus "
            "counts them); default: the largest count of the GPU types' tables (6 for the A100 and H20), else 8, one "
            "budget for every GPU type answered; with --minimize, any count up to 64.") in option_reference()
    assert "within 6 GPUs: optimal" in cli("--model", "4B", "--len", "32k", "--gpu", "a100")[1]
    assert "within 8 GPUs: optimal" in cli("--model", "4B", "--len", "32k", "--gpu", "h100")[1]
    assert "(any count up to 64): optimal" in cli("--minimize", "gpus", "--model", "4B", "--len", "32k", "--gpu",
                                                  "a100")[1]


def test_the_apply_lines_export_env_on_every_node_only_for_a_trainer_past_one_node_of_node_gpus(cli):
    flags = ("--model", "8B", "--gpu", "h100", "--gpus", "16", "--len", "128k")
    assert f"apply          {APPLY_HEADING}\n# on every node of the job before `ray start` there:\n" in cli(*flags)[1]
    assert f"apply          {APPLY_HEADING}\n# before Ray starts:\n" in cli(*flags, "--node-gpus", "16")[1]


APPLIED_4B = [
    f"apply          {APPLY_HEADING}",
    "# before Ray starts:",
    "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
    "model.max_model_len: 102400",
    ("model.rope_scaling: {rope_type: yarn, factor: 2.5, original_max_position_embeddings: 40960, "
     "rope_theta: 1000000}"),
    "trainer.ulysses_sequence_parallel_size: 4",
    "trainer.max_token_len_per_gpu: 51200",
    "trainer.trainer_strategy: fsdp2",
    "# as in the A100 offload measurements of Trinity-RFT's guide:",
    "trainer.save_hf_checkpoint: never",
    ("trainer.trainer_config.actor_rollout_ref.{actor,ref}.fsdp_config: {param_offload: true, optimizer_offload: true, "
     "offload_policy: true}"),
    "# Trinity 0.6 also takes these (leave them out before 0.6, which refuses them):",
    "trainer.{param_offload, optimizer_offload, offload_policy}: true",
    "",
]
"""How the README's plan ends: the apply lines, each whole and unindented, then the blank line after the answer."""


@pytest.mark.parametrize("columns", [60, 80, 200])
def test_the_apply_lines_paste_whole_at_any_terminal_width(cli, monkeypatch: pytest.MonkeyPatch, columns: int):
    # Each apply line is one line, past the terminal's edge where it is longer (the terminal shows it on more rows and
    # copies it as one): a pasted comment keeps its '#', a key its value. The rows above still fit the width.
    screen = io.StringIO()
    monkeypatch.setattr(solver.cli.output, "new_console", lambda width=160: Console(
        width=columns, force_terminal=True, color_system=None, file=screen, **solver.render.PLAIN_TEXT))
    status, _, err = cli("--maximize", "len", "--gpus", "6", "--model", "4B", "--gpu", "a100-80g")
    lines = [line.rstrip() for line in screen.getvalue().split("\n")]
    applied = [*APPLIED_4B[1:], ""]  # the heading beside `apply` wraps like the rows above
    assert (status, err, lines[-len(applied):]) == (0, "", applied)
    assert max(len(line) for line in lines[:-len(applied)]) <= columns


def test_the_apply_lines_paste_whole_when_piped(cli, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("COLUMNS", "60")
    status, out, _ = cli("--maximize", "len", "--gpus", "6", "--model", "4B", "--gpu", "a100")
    assert status == 0 and out.split("\n")[-len(APPLIED_4B) - 1:] == [*APPLIED_4B, ""]


def test_a_blank_line_ends_the_apply_lines_before_a_ranking_or_an_explanation(cli):
    # Unindented, the apply lines would otherwise run into the next heading, and a pasted block take it along.
    for flags, heading in ((["--top", "2"], "ranked plans"), (["--explain"], "why")):
        status, out, _ = cli("--model", "4B", "--len", "32k", "--gpus", "4", "--gpu", "h20", *flags)
        assert status == 0 and f"trainer.max_token_len_per_gpu: 32768\n\n{heading}\n" in out


def test_a_plan_whose_table_refutes_it_without_offload_says_why_on_more_gpus(cli):
    # Qwen3-0.6B with Env alone at 30720 on 8 A100s, estimated: the 1-GPU table says Env + Offload ran out of memory at
    # 32768, and without Offload each of the 8 holds the states besides.
    out = cli("--model", "0.6B", "--gpu", "a100", "--gpus", "8", "--len", "30720", "--env", "--sp", "1", "--no-offload",
              "--exact", "--estimate")[1]
    assert ("and it ran out with Offload too, which holds as much per GPU on 8 GPUs as on 1 (the states are on the "
            "CPU), and without Offload each GPU holds more); the table, a measurement, decides: drop --estimate to "
            "plan with it"
            ) in " ".join(out.split())
    offloaded = cli("--model", "0.6B", "--gpu", "a100", "--gpus", "8", "--len", "30720", "--env", "--sp", "1",
                    "--offload", "--exact", "--estimate")[1]
    assert ("and with Offload it holds as much per GPU on 8 GPUs as on 1 (the states are on the CPU)); the table, a "
            "measurement, decides: drop --estimate to plan with it") in " ".join(offloaded.split())


def test_a_plan_that_takes_the_whole_budget_says_it_leaves_the_rollout_no_gpu(cli):
    # --gpus is the trainer's budget: someone who gives all their GPUs learns that the explorer has none left, unless
    # --rollout-gpus gives it some (or 0 says the rollout runs elsewhere).
    flags = ("--model", "8B", "--gpu", "a100", "--gpus", "6", "--len", "16k")
    assert "plan           Env on 6 of 6 GPUs (none left for rollout)\nfor rollout    --total-gpus 6 " in cli(*flags)[1]
    two = cli("--model", "0.6B", "--gpu", "a100", "--gpus", "2", "--len", "8k")[1]  # two GPUs have one to spare
    assert ("plan           vanilla on 2 of 2 GPUs (none left for rollout)\nfor rollout    --total-gpus 2 "
            "--rollout-gpus 1 keeps 1 of the 2 for it: vanilla on 1 trainer GPU, 8192 tokens, 2.00x the relative step "
            "time (documented)\n") in two
    assert "plan           Env on 6 of 6 GPUs\n" in cli(*flags, "--rollout-gpus", "0")[1]
    assert "plan           Env on 6 of 6 GPUs, with 2 rollout GPUs: 8 in all\n" in cli(*flags, "--rollout-gpus", "2")[1]


def test_gpus_the_trainer_leaves_beside_its_rollout_are_offered_to_the_rollout_where_a_node_holds_them(cli):
    # Qwen3-4B at 65536 on H20s trains best on 4 of the 6: with 2 rollout GPUs the 2 left fit the node of 8 too.
    flags = ("--model", "4B", "--gpus", "6", "--len", "65536", "--gpu", "h20")
    assert ("plan           SP=4 on 4 of 6 GPUs, with 2 rollout GPUs (2 unused: --rollout-gpus 4 gives them to the "
            "rollout)\n") in cli(*flags, "--rollout-gpus", "2")[1]
    # Beside 4 rollout GPUs a node of 8 holds no more: nothing is offered.
    assert "plan           SP=4 on 4 of 6 GPUs, with 4 rollout GPUs\n" in cli(*flags, "--rollout-gpus", "4")[1]
    assert "plan           SP=4 on 4 of 6 GPUs (2 left for rollout)\n" in cli(*flags)[1]
    # One GPU left: 'it'. Qwen3-8B on 3 A100s reaches furthest on 2 of them (SP=2), beside 1 rollout GPU.
    out = cli("--model", "8B", "--gpus", "3", "--maximize", "len", "--gpu", "a100", "--rollout-gpus", "1")[1]
    assert ("plan           Env + Offload + SP=2 on 2 of 3 GPUs, with 1 rollout GPU (1 unused: --rollout-gpus 2 gives "
            "it to the rollout)\n") in out


def test_a_config_whose_engines_give_the_rollout_is_not_offered_rollout_gpus_flag_it_refuses(cli):
    # The example config's 2 engines are its rollout: --from-config refuses --rollout-gpus, so the GPUs the fewest
    # trainer GPUs leave are not offered through it.
    flags = ("--from-config", "docs/examples/trinity.yaml", "--gpu", "a100", "--gpus", "6", "--minimize", "gpus")
    status, out, _ = cli(*flags)
    assert status == 0 and "plan           Env + Offload + SP=2 on 2 of 6 GPUs, with 2 rollout GPUs\n" in out
    assert cli(*flags, "--rollout-gpus", "6")[0] == 2


def test_a_config_without_a_cluster_is_not_told_its_rollout_has_no_gpu_left(cli, tmp_path: Path):
    # Its rollout engine goes beside the trainer's GPUs, which a note on stderr says how to count in the cluster
    # (with what --emit makes from it).
    config = tmp_path / "bare.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\nmodel:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 32768\n"
                      "explorer:\n  rollout_model:\n    engine_num: 1\n", encoding="utf-8")
    flags = ("--from-config", str(config), "--gpu", "a100", "--gpus", "8")
    status, out, _ = cli(*flags)
    assert status == 0 and "plan           Env + SP=2 on 8 of 8 GPUs\n" in out
    # Nor are GPUs of the budget it leaves taken for the rollout's: they are unused.
    assert "on 1 of 8 GPUs (7 unused)\n" in cli(*flags, "--minimize", "gpus", "--len", "8k")[1]
    assert "set cluster.node_num x cluster.gpu_per_node to 9" in cli(*flags, "--emit", "trinity")[2]


def test_a_train_batch_that_moves_the_best_plan_says_what_another_batch_would_run(cli):
    # 256 experiences rule out 3 and 6 data-parallel ranks: the best plan within 6 A100s is SP=4 on 4 GPUs, and the
    # answer says what a batch that 3 ranks divide would run: the plan without the batch, less the caution on its ranks
    # (which would ask for the batch already given).
    status, out, _ = cli("--model", "8B", "--gpu", "a100", "--gpus", "6", "--len", "32768", "--train-batch-size", "256")
    assert status == 0 and ("other batch    with a train batch that 3 data-parallel ranks divide: Env + SP=2 on 6 "
                            "GPUs, 0.57x the relative step time (documented)") in out
    [answer] = json.loads(cli("--model", "8B", "--gpu", "a100", "--gpus", "6", "--len", "32768", "--train-batch-size",
                              "256", "--json")[1])
    [unbatched] = json.loads(cli("--model", "8B", "--gpu", "a100", "--gpus", "6", "--len", "32768", "--json")[1])
    unchecked = {**unbatched["plans"][0], "cautions": [], "caution_codes": []}
    assert answer["train_batch_size"] == 256 and answer["other_batch"] == unchecked
    assert unbatched["plans"][0]["cautions"][0].startswith("3 data-parallel ranks (6 GPUs / SP=2): ")
    assert unbatched["plans"][0]["caution_codes"] == ["uneven-data-parallel"]
    assert (answer["plans"][0]["gpus"], answer["plans"][0]["sp"]) == (4, 4) and "other_batch" not in unbatched
    # A batch the best plan's ranks divide changes nothing: no other_batch.
    [divided] = json.loads(cli("--model", "8B", "--gpu", "a100", "--gpus", "6", "--len", "32768", "--train-batch-size",
                               "96", "--json")[1])
    assert "other_batch" not in divided and divided["plans"][0] == {**unbatched["plans"][0], "cautions": [],
                                                                    "caution_codes": []}
    # The fewest GPUs: the other batch's plan is on fewer, and the line says so.
    out = cli("--model", "8B", "--gpu", "a100", "--minimize", "gpus", "--no-offload", "--len", "8192",
              "--train-batch-size", "4")[1]
    assert ("other batch    with a train batch that 3 data-parallel ranks divide: Env on 3 GPUs, 1 GPU fewer, 1.35x "
            "the relative step time (estimated)") in out
    # --top's note on the plans it leaves out names the batch they were ranked within.
    out = cli("--model", "8B", "--gpu", "a100", "--gpus", "6", "--len", "32768", "--train-batch-size", "256",
              "--top", "3")[1]
    assert "each other plan that trains within --train-batch-size 256 is no cheaper" in " ".join(out.split())
    out = cli("--model", "8B", "--gpu", "a100", "--gpus", "6", "--len", "32768", "--train-batch-size", "256",
              "--top", "3", "--host-ram", "2000")[1]
    assert ("each other plan that trains within --host-ram 2000 GiB and --train-batch-size 256 is no cheaper"
            in " ".join(out.split()))


def test_the_other_batch_line_says_only_what_the_other_plan_changes(cli):
    # On exactly 8 GPUs, 4 experiences rule out SP=1 (8 ranks): the other batch's plan is on as many GPUs, so the
    # line names no GPUs fewer, only the step time.
    out = cli("--model", "8B", "--gpu", "a100", "--gpus", "8", "--exact", "--len", "8192", "--train-batch-size", "4")[1]
    assert ("other batch    with a train batch that 8 data-parallel ranks divide: vanilla on 8 GPUs, 0.91x the "
            "relative step time (inferred)") in out
    # The longest context: the line says how much longer.
    out = cli("--model", "14B", "--gpu", "a100", "--gpus", "8", "--sp", "1", "--no-offload", "--maximize", "len",
              "--train-batch-size", "4")[1]
    assert ("other batch    with a train batch that 8 data-parallel ranks divide: Env on 8 GPUs, 13312 tokens "
            "instead of 4096 (estimated, extrapolated)") in out


SINGLE_GPU_CAUTION = ("one trainer GPU: for a model of 4B parameters or more, or more than 20K tokens, on one A100 "
                      "80GB or a GPU of no more memory, Trinity-RFT's guide strongly advises more GPUs, which train "
                      "faster and steadier even where one GPU's memory suffices")


@pytest.mark.parametrize(("gpu", "model", "length", "cautioned"), [
    ("a100", "4B", "8192", True),      # 4B parameters or more (the guide: "≥4B 模型")
    ("a100", "0.6B", "24576", True),   # more than 20K tokens ("或 >20K 上下文")
    ("a100", "0.6B", "20480", False),  # neither
    ("h20", "4B", "8192", False),      # the advice is for the A100 80GB; the H20 has more memory
    ("4090", "4B", "4096", True),      # and for a GPU of less memory, whose user must not read it as an A100's alone
])
def test_one_a100_for_a_large_model_or_a_long_context_carries_the_guides_advice(cli, gpu, model, length, cautioned):
    # The guide, above the A100 tables:
    # "在 1 张 A100 上训练 ≥4B 模型或 >20K 上下文时，显存压力极大，强烈建议使用多卡方案"; and its best practice 5, why
    # even a plan with memory to spare gets it: "即使显存足够，多卡也能通过并行提升训练效率与稳定性".
    status, out, _ = cli("--gpu", gpu, "--model", model, "--len", length, "--gpus", "1", "--json")
    [answer] = json.loads(out)
    assert status == 0 and answer["plans"][0]["gpus"] == 1
    assert (SINGLE_GPU_CAUTION in answer["plans"][0]["cautions"]) is cautioned
    # solve memory's estimate of vanilla on that one GPU (which may not fit) says it alike, and nothing else.
    estimate = json.loads(cli("memory", "--gpu", gpu, "--model", model, "--len", length, "--gpus", "1", "--json")[1])
    assert estimate["cautions"] == ([SINGLE_GPU_CAUTION] if cautioned else [])


def test_the_guides_single_gpu_advice_at_its_edges():
    # 4B parameters or more, or more than 20480 tokens, on one GPU of at most the A100 80GB's 80 GiB.
    small = solver.tables.load_catalog().model("0.6B")

    def said(parameters_b: float, tokens: int, memory_gib: float = 80.0, gpus: int = 1) -> bool:
        model = small.model_copy(update={"parameters_b": parameters_b})
        return single_gpu_caution(model, gpus, tokens, memory_gib) == SINGLE_GPU_CAUTION

    assert said(4.0, 4096) and not said(3.95, 4096)
    assert said(3.95, 20481) and not said(3.95, 20480)
    assert said(4.0, 4096, memory_gib=40.0) and not said(4.0, 4096, memory_gib=80.01)
    assert not said(32.0, 131072, gpus=2)


MY_CELLS = EXAMPLES / "my-cells.yaml"
MY_MODEL_CELLS = ("gpu: H100-80GB\nmemory_gb: 80\nsource: mine\ntables:\n  - gpus: 8\n    section: '8 x H100'\n"
                  "    models: [my-sft-8b]\n    rows:\n      - {max_model_len: 32768, cells: {my-sft-8b: SP=2}}\n")
"""Cells of the model of `qwen3_8b_checkpoint` in a folder my-sft-8b, which the catalogue lacks."""
MY_MODEL_FLEET = ("pools: [{name: h, gpu: h100, nodes: 1, gpus_per_node: 8}]\n"
                  "jobs: [{name: j, model_config: my-sft-8b, max_model_len: 32768}]\n")
"""A cluster file beside a folder my-sft-8b (`qwen3_8b_checkpoint`): one job of that model, on 8 H100s."""


@pytest.fixture
def piped() -> Any:
    """``piped(text)``: a /dev/fd path to a pipe holding `text`, as ``<(cat FILE)`` gives: it reads once, then
    it is empty."""
    opened: list[int] = []

    def pipe(text: str) -> str:
        read_end, write_end = os.pipe()
        opened.append(read_end)
        os.write(write_end, text.encode("utf-8"))
        os.close(write_end)
        return f"/dev/fd/{read_end}"

    yield pipe
    for descriptor in opened:
        os.close(descriptor)


@pytest.mark.skipif(not Path("/dev/fd").is_dir(), reason="pipes by /dev/fd paths")
@pytest.mark.parametrize("argv", [
    ("--model", "8B", "--gpu", "h100", "--len", "32k"),
    ("--model", "4B", "--gpu", "a100", "--len", "32k"),  # with a note on the cells, which are for another GPU type
    ("--model", "8B", "--gpu", "h100", "--len", "32k", "--json"),
    ("tables", "--gpu", "h100"),
    ("tables", "--check"),
    ("memory", "--model", "8B", "--gpu", "h100", "--gpus", "8", "--len", "32k", "--sp", "2"),
    ("map", "--gpu", "h100", "--model", "8B", "--gpus-up-to", "8", "--json"),
    ("calibrate",),
    ("calibrate", "--with-tables"),
    ("cluster", str(EXAMPLES / "fleet.yaml")),
], ids=lambda argv: " ".join(Path(word).name for word in argv))
def test_every_command_answers_with_cells_from_a_pipe_as_from_a_file(cli, piped, argv: tuple[str, ...]):
    # Each --cells file is read once: a pipe (solve --cells <(cat cells.yaml)) is empty on a second read.
    pipe = piped(MY_CELLS.read_text(encoding="utf-8"))
    status, out, err = cli(*argv, "--cells", str(MY_CELLS))
    assert status == 0
    as_piped = (status, out.replace(str(MY_CELLS), pipe).replace(MY_CELLS.name, Path(pipe).name),
                err.replace(str(MY_CELLS), pipe))
    assert cli(*argv, "--cells", pipe) == as_piped


@pytest.mark.skipif(not Path("/dev/fd").is_dir(), reason="pipes by /dev/fd paths")
def test_calibrate_reads_cells_of_a_model_config_model_from_a_pipe(cli, piped, tmp_path: Path):
    cells = tmp_path / "cells.yaml"
    cells.write_text(MY_MODEL_CELLS, encoding="utf-8")
    model = qwen3_8b_checkpoint(tmp_path / "my-sft-8b")
    status, out, err = cli("calibrate", "--cells", str(cells), "--model-config", str(model))
    assert (status, err) == (0, "") and "\nsource: \"calibrated on cells.yaml\"\n" in out
    pipe = piped(MY_MODEL_CELLS)
    assert cli("calibrate", "--cells", pipe, "--model-config", str(model)) == (
        0, out.replace("cells.yaml", Path(pipe).name), "")


@pytest.mark.skipif(not Path("/dev/fd").is_dir(), reason="pipes by /dev/fd paths")
def test_cluster_reads_cells_of_a_jobs_model_config_model_from_a_pipe(cli, piped, tmp_path: Path):
    # The cells name the model only a job's model_config defines: read once, after the fleet's models.
    qwen3_8b_checkpoint(tmp_path / "my-sft-8b")
    fleet, cells = tmp_path / "fleet.yaml", tmp_path / "cells.yaml"
    fleet.write_text(MY_MODEL_FLEET, encoding="utf-8")
    cells.write_text(MY_MODEL_CELLS, encoding="utf-8")
    status, out, err = cli("cluster", str(fleet), "--cells", str(cells), "--json")
    [placed] = json.loads(out)["placements"]
    assert (status, err, placed["plan"]["evidence"], placed["plan"]["sp"]) == (0, "", "documented", 2)
    assert cli("cluster", str(fleet), "--cells", piped(MY_MODEL_CELLS), "--json") == (status, out, err)


@pytest.mark.skipif(not Path("/dev/fd").is_dir(), reason="pipes by /dev/fd paths")
def test_a_table_in_two_piped_cells_files_is_blamed_on_the_earlier_pipe(cli, piped):
    first, again = (piped(MY_CELLS.read_text(encoding="utf-8")) for _ in range(2))
    assert cli("--model", "8B", "--gpu", "h100", "--len", "32k", "--cells", first, "--cells", again) == (
        2, "", (f"solve: error: --cells {again}: a table of H100-80GB for 8 trainer GPUs, which --cells {first} has "
                f"already: {ONE_TABLE}\n"))


@pytest.mark.parametrize(("argv", "inputs"), [
    (("--model", "8B", "--gpu", "h100", "--len", "32k", "--cells", "{cells}", "--weights", "{weights}",
      "--memory-model", "{memory}"), ("cells", "weights", "memory")),
    (("--model-config", "{model}", "--gpu", "h100", "--len", "32k", "--cells", "{mine}"), ("model", "mine")),
    (("--from-config", "{trinity}", "--gpu", "a100", "--cells", "{cells}", "--write", "{written}"),
     ("trinity", "cells")),
    (("tables", "--check", "--cells", "{cells}"), ("cells",)),
    (("memory", "--model", "8B", "--gpu", "h100", "--gpus", "8", "--len", "32k", "--sp", "2", "--cells", "{cells}",
      "--memory-model", "{memory}"), ("cells", "memory")),
    (("map", "--gpu", "h100", "--model", "8B", "--gpus-up-to", "2", "--cells", "{cells}", "--json"), ("cells",)),
    (("calibrate", "--cells", "{mine}", "--model-config", "{model}"), ("mine", "model")),
    (("cluster", "{fleet}", "--cells", "{cells}", "--weights", "{weights}", "--memory-model", "{memory}"),
     ("fleet", "cells", "weights", "memory")),
    (("cluster", "{sft_fleet}", "--cells", "{mine}"), ("sft_fleet", "model", "mine")),
], ids=["planner", "planner --model-config", "planner --from-config", "tables", "memory", "map", "calibrate",
        "cluster", "cluster model_config"])
def test_every_file_a_command_is_given_is_read_once(cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                    argv: tuple[str, ...], inputs: tuple[str, ...]):
    files = {"cells": MY_CELLS, "mine": tmp_path / "mine.yaml", "model": qwen3_8b_checkpoint(tmp_path / "my-sft-8b"),
             "trinity": tmp_path / "trinity.yaml", "fleet": EXAMPLES / "fleet.yaml",
             "weights": shipped_tables_directory() / "costs.yaml", "memory": tmp_path / "memory-model.yaml",
             "written": tmp_path / "written.yaml", "sft_fleet": tmp_path / "sft-fleet.yaml"}
    files["mine"].write_text(MY_MODEL_CELLS, encoding="utf-8")
    files["sft_fleet"].write_text(MY_MODEL_FLEET, encoding="utf-8")
    files["trinity"].write_text((EXAMPLES / "trinity.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    files["memory"].write_text((shipped_tables_directory() / "memory-model.yaml").read_text(encoding="utf-8"),
                               encoding="utf-8")
    read: list[Path] = []
    unread = solver.tables.reading.read_user_file

    def reading(path: Path, *limit: int) -> str:
        read.append(path)
        return unread(path, *limit)

    for module in (solver.tables.reading, solver.tables.model_config):  # solver.tables gives reading's
        monkeypatch.setattr(module, "read_user_file", reading)
    status, _, err = cli(*(word.format(**files) for word in argv))
    assert (status, err.count("error")) == (0, 0)
    given = {files[name] / "config.json" if name == "model" else files[name] for name in inputs}
    assert sorted(map(str, (path for path in read if path in given))) == sorted(map(str, given))


def test_names_of_files_written_keep_notes_and_wrote_lines_one_line_each(cli, monkeypatch: pytest.MonkeyPatch,
                                                                         tmp_path: Path):
    # Escaped as in errors (\n, \x1b): a file's name cannot split a line, or restyle the terminal.
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
    out_file, written = tmp_path / "o\nut.yaml", tmp_path / "w\nx\x1b[31m.yaml"
    status, out, err = cli("--from-config", str(EXAMPLES / "trinity.yaml"), "--gpu", "a100-80g", "--write",
                           str(written),
                           "--out", str(out_file))
    assert status == 0 and out_file.is_file() and written.is_file()
    assert out.endswith(f"\nwrote {tmp_path}/o\\nut.yaml\nwrote {tmp_path}/w\\nx\\x1b[31m.yaml\n")
    assert err == (f"solve: note: {tmp_path}/w\\nx\\x1b[31m.yaml needs Env, which a config cannot set: export "
                   "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True before Ray starts\n")
    # Nor can it split the comment that holds the command checking the file: that names it by a placeholder.
    assert ("  # To check this file (CONFIG: its path) as its plan was made:\n"
            "  #   PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True solve --from-config CONFIG --check "
            "--gpu A100-80GB\n"
            "  max_model_len: 32768") in written.read_text(encoding="utf-8")


def test_names_of_cells_files_keep_notes_one_line_each(cli, tmp_path: Path):
    cells = tmp_path / "my\ncells\x1b.yaml"
    shutil.copy(MY_CELLS, cells)
    status, _, err = cli("--model", "4B", "--gpu", "a100-80g", "--len", "32k", "--cells", str(cells))
    assert status == 0
    assert err == (f"solve: note: {tmp_path}/my\\ncells\\x1b.yaml: its cells are for H100-80GB (79.6 GiB), not for "
                   "A100-80GB (80.0 GiB) or a GPU type of its driver-reported memory: they are not used here\n")
    fitted = tmp_path / "fit\x1b.yaml"
    status, out, _ = cli("calibrate", "--cells", str(MY_CELLS), "--out", str(fitted))
    assert status == 0 and out.startswith(f"wrote {tmp_path}/fit\\x1b.yaml: ") and out.count("\n") == 4
    assert f"--memory-model '{tmp_path}/fit\\x1b.yaml' --cells " in out.splitlines()[-1]  # and the plan's command


def test_the_note_on_a_file_left_unwritten_for_want_of_a_plan_names_it_escaped(cli, tmp_path: Path):
    # As the other notes do: a file's name cannot split the line, or restyle the terminal.
    status, _, err = cli("--model", "0.6B", "--gpu", "a100-80g", "--len", "130000", "--gpus", "4",
                         "--out", str(tmp_path / "o\nut\x1b.yaml"))
    assert (status, err) == (1, f"solve: note: no plan, so {tmp_path}/o\\nut\\x1b.yaml is not written\n")


def test_a_length_of_one_token_is_counted_in_the_singular(cli):
    # The heading counts the length asked as it counts GPUs: "1 token", not "1 tokens".
    status, out, err = cli("--model", "4B", "--gpu", "a100-80g", "--len", "1")
    assert status == 0 and out.startswith("A100-80GB · Qwen3-4B · cheapest plan for 1 token within 6 GPUs: optimal\n")
    assert err == "solve: note: --len 1 is 1 token; for 1024 tokens write --len 1k\n"
    _, out, _ = cli("--model", "4B", "--gpu", "a100-80g", "--len", "1", "--minimize", "gpus")
    assert out.startswith("A100-80GB · Qwen3-4B · fewest GPUs for 1 token (any count up to 64): optimal\n")


def test_the_ranking_of_an_open_budget_gives_each_plans_gpus_alone(cli):
    # --minimize gpus has no budget of the user's to count against: each row's GPUs are its own count (a budget
    # given is "4/4"), and the plans come in the objective's order, the fewest GPUs first.
    status, out, _ = cli("--model", "4B", "--gpu", "a100", "--len", "32k", "--minimize", "gpus", "--top", "3")
    rows = ranking_rows(out)
    assert status == 0 and rows == [
        ["1", "2", "Env + SP=2", "32768", "32768", "0.5555 (best)", "documented", "2 GPUs @ 32768: Env + SP=2"],
        ["2", "4", "SP=2", "32768", "32768", "0.275 (0.50x #1)", "documented", "4 GPUs @ 32768: SP=2"],
        ["3", "6", "SP=2", "32768", "32768", "0.1833 (0.33x #1)", "documented", "6 GPUs @ 32768: SP=2"]]


def test_an_estimated_plan_in_the_ranking_cites_the_memory_models_prediction(cli):
    # No H100 table vouches for these plans: their source cell is the memory model's predicted GiB per GPU, and an
    # Offload plan's host memory per node stands beside it (blank for the plan without Offload).
    status, out, _ = cli("--model", "8B", "--gpu", "h100", "--len", "32k", "--gpus", "4", "--top", "3")
    rows = ranking_rows(out)
    assert status == 0 and rows == [
        ["1", "4/4", "Env + SP=4", "32768", "16384", "", "0.3282 (best)", "estimated", "memory model: 57.9 GiB"],
        ["2", "2/4", "Env + Offload + SP=2", "32768", "32768", "183.0", "1.111 (3.38x #1)", "estimated",
         "memory model: 48.7 GiB"]]


def test_the_tables_row_of_an_estimate_alone_is_green_where_they_train_it_and_red_where_not(cli, coloured_screen):
    # --estimate: the 4-GPU A100 table says '-' where the memory model plans Qwen3-4B (red: the table decides), and
    # vouches for Qwen3-8B with SP=4 at 32768 (green).
    cli("--maximize", "len", "--gpus", "6", "--model", "4B", "--gpu", "a100", "--estimate")
    cli("--model", "8B", "--gpus", "4", "--gpu", "a100", "--len", "32k", "--estimate")
    rows = [line.split("\x1b[0m", 2)[2].split(" (")[0] for line in coloured_screen.getvalue().splitlines()
            if line.startswith("\x1b[1mtables ")]
    assert rows == ["\x1b[31mit runs out of memory", "\x1b[32mit trains"]


def test_a_length_past_the_native_context_on_the_models_own_scaling_says_so_beside_it(cli):
    # Llama 3.1's own llama3 RoPE scaling reaches past its native 131072: no YaRN, and the length's row says why
    # (once: not again as a caution row).
    status, out, _ = cli("--model", "llama-3.1-8b", "--gpu", "h200", "--gpus", "8", "--len", "200k")
    shown = " ".join(out.split("\n               "))
    assert status == 0 and ("\nmax_model_len  204800, past the native 131072, which Llama-3.1-8B's own llama3 "
                            "RoPE scaling provides (no YaRN written; vLLM's rollout "
                            "refuses it, past the 131072 it derives from the model's config, unless "
                            "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set; check the model handles it)\n") in shown
    assert "\ncaution " not in out and "rope_scaling" not in out


NEAR_SHAPE_NOTE = ("note: my-sft has Qwen3-8B's shape but for vocab_size 151669 (Qwen3-8B's: 151936), so no table's "
                   "cells stand for it and its plans are estimates (the memory a trainer needs depends on the shape); "
                   "a checkpoint of that model's very shape would take its cells\n")


def test_a_checkpoint_of_a_tabled_shape_but_for_its_vocabulary_says_why_it_is_estimated(cli, tmp_path: Path):
    """A fine-tuned Qwen3-8B whose embeddings were resized to its tokenizer (151669 entries) is a shape of its own, so
    its plans are estimates: solve, solve memory and solve map say which term keeps Qwen3-8B's cells from it."""
    resized = str(qwen3_8b_checkpoint(tmp_path / "my-sft", vocab_size=151669))
    status, out, err = cli("--model-config", resized, "--gpu", "h20", "--len", "32k")
    assert status == 0 and "evidence       estimated: " in out and err == f"solve: {NEAR_SHAPE_NOTE}"
    status, _, err = cli("memory", "--model-config", resized, "--gpu", "h20", "--gpus", "4", "--len", "32k",
                         "--sp", "4")
    assert status == 0 and err == f"solve memory: {NEAR_SHAPE_NOTE}"
    status, _, err = cli("map", "--model-config", resized, "--gpu", "h20", "--gpus-up-to", "2")
    assert status == 0 and err == f"solve map: {NEAR_SHAPE_NOTE}"
    same = str(qwen3_8b_checkpoint(tmp_path / "same" / "my-sft"))  # Qwen3-8B's very shape: its cells, no note
    status, out, err = cli("--model-config", same, "--gpu", "h20", "--len", "32k")
    assert (status, err) == (0, "") and "for Qwen3-8B, of the same shape" in out


@pytest.mark.parametrize(("config", "words"), [
    ({"tie_word_embeddings": True}, "Qwen3-8B's shape but for tie_word_embeddings true (Qwen3-8B's: false)"),
    ({"num_hidden_layers": 40}, "Qwen3-8B's shape but for num_hidden_layers 40 (Qwen3-8B's: 36)"),
    ({"num_key_value_heads": 4}, "Qwen3-8B's shape but for num_key_value_heads 4 (Qwen3-8B's: 8)"),
    # null, read as absent: the 32 attention heads, which the file does not give
    ({"num_key_value_heads": None}, ("Qwen3-8B's shape but for num_key_value_heads 32 (defaulted: config.json "
                                     "gives none; Qwen3-8B's: 8)")),
    ({"num_hidden_layers": 40, "vocab_size": 151669}, None),  # two terms apart: a model of its own
    # Qwen3-4B's shape, head_dim null, in a class that defaults it to hidden_size / heads (Llama's: Qwen3's is 128):
    # 80, defaulted (smalls91b: mutants55's d1 had it so with latent attention alone)
    ({"model_type": "llama", "hidden_size": 2560, "intermediate_size": 9728, "tie_word_embeddings": True,
      "head_dim": None},
     "Qwen3-4B's shape but for head_dim 80 (defaulted: config.json gives none; Qwen3-4B's: 128)"),
])
def test_near_tabled_shape_names_the_one_term_a_checkpoint_differs_in(tmp_path: Path, config: dict, words: str | None):
    folder = qwen3_8b_checkpoint(tmp_path / "ckpt", **config)
    catalog = solver.tables.load_catalog().with_model(solver.tables.load_model_config(folder))
    assert catalog.near_tabled_shape(catalog.models[-1]) == words


def test_a_dense_checkpoint_of_a_tabled_mixture_of_experts_shape_is_told_its_experts_term(cli, tmp_path: Path):
    # Your cells table Qwen3-30B-A3B; a dense config.json of its other terms differs in the experts alone, written as
    # a config.json has them (null for none, the three numbers of the tabled model).
    cells = tmp_path / "moe.yaml"
    cells.write_text("gpu: H800-80GB\nmemory_gb: 80\nsource: made-up\ntables:\n  - gpus: 8\n    section: 8 x H800\n"
                     "    models: [30B-A3B]\n    rows:\n      - {max_model_len: 32768, cells: {30B-A3B: SP=2}}\n",
                     encoding="utf-8")
    dense = qwen3_8b_checkpoint(tmp_path / "dense", hidden_size=2048, num_hidden_layers=48, num_key_value_heads=4,
                                intermediate_size=6144)
    status, _, err = cli("--model-config", str(dense), "--cells", str(cells), "--gpu", "h800", "--len", "8k")
    assert status == 0 and err.startswith(
        "solve: note: dense has Qwen3-30B-A3B's shape but for num_experts, num_experts_per_tok and "
        "moe_intermediate_size null (Qwen3-30B-A3B's: 128, 8, 768), so no table's cells stand for it")


def test_near_tabled_shape_compares_with_tabled_models_only(tmp_path: Path):
    # A checkpoint one term off another checkpoint (itself one term off Qwen3-8B) is two terms off every tabled model:
    # no note, since the other checkpoint's plans are estimates too.
    resized = solver.tables.load_model_config(qwen3_8b_checkpoint(tmp_path / "resized", vocab_size=151669))
    deeper = solver.tables.load_model_config(qwen3_8b_checkpoint(tmp_path / "deeper", vocab_size=151669,
                                                                 num_hidden_layers=40))
    catalog = solver.tables.load_catalog().with_model(resized).with_model(deeper)
    assert catalog.near_tabled_shape(catalog.model("deeper")) is None
    assert catalog.near_tabled_shape(catalog.model("resized")) == (
        "Qwen3-8B's shape but for vocab_size 151669 (Qwen3-8B's: 151936)")


@pytest.mark.parametrize(("flag", "rest"), [
    ("--cells", ["--model", "4B", "--len", "8192"]), ("--weights", ["--model", "4B", "--len", "8192"]),
    ("--memory-model", ["--model", "4B", "--len", "8192"]), ("--model-config", ["--len", "8192"]),
    ("--from-config", []),
])
def test_a_file_an_option_gives_is_named_after_the_option_in_its_errors(cli, tmp_path: Path, flag: str, rest: list):
    # --model-config's and --from-config's errors started with the bare path, where the others' named the option.
    missing = tmp_path / "gone.yaml"
    assert cli(*rest, flag, str(missing)) == (
        2, "", f"solve: error: {flag} {missing}: cannot read: No such file or directory\n")


@pytest.mark.parametrize("argv", [
    ["--model", "4B", "--len", "8192"], ["memory", "--model", "4B", "--gpus", "2", "--len", "8192"],
    ["map", "--model", "0.6B", "--gpus-up-to", "1"],
])
def test_a_gpu_named_without_its_memory_gets_the_note_a_cluster_pool_gets(cli, argv: list[str]):
    # --gpu a100 is the A100-80GB, as a pool's gpu: A100 is; a user with 40 GB A100s reading the answer would plan for
    # the wrong card: the note says so in the pool's words. A name with the memory gets none.
    prog = "solve " + argv[0] if argv[0] in ("memory", "map") else "solve"
    status, _, err = cli(*argv, "--gpu", "a100")
    assert status == 0 and err == (f"{prog}: note: --gpu 'a100' is taken as A100-80GB; nodes of A100-40GB need that "
                                   "name (the memory decides the plans)\n")
    assert cli(*argv, "--gpu", "a100-80g")[2] == cli(*argv, "--gpu", "A100-40GB")[2] == ""


@pytest.mark.parametrize(("model", "guess"), [
    ("qwen8b", " (did you mean Qwen3-8B?)"), ("llama3-8b", " (did you mean Llama-3.1-8B?)"),
    ("600m", " (did you mean Qwen3-0.6B?)"), ("Llama-3.3-70B", ""), ("Qwen3-8B-FP8", " (did you mean Qwen3-8B?)"),
    ("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", ""),
])
def test_a_model_name_users_paste_gets_the_gpus_guess_and_the_way_to_its_config_in_one_line(
        cli, model: str, guess: str):
    status, out, err = cli("--model", model, "--gpus", "4", "--len", "32768")
    assert (status, out, err.count("\n")) == (2, "", 1)
    assert err.startswith(f"solve: error: unknown model {model!r}{guess}; accepted: Qwen3-0.6B/1.7B/8B/14B(-Base), ")
    assert err.endswith("; or, for a model of your own, its Hugging Face config.json: --model-config PATH\n")


@pytest.mark.parametrize(("model", "named"), [
    ("meta-llama/Llama-3.1-8B-Instruct", "Llama-3.1-8B"), ("Meta-Llama-3.1-70B-Instruct", "Llama-3.1-70B"),
    ("Qwen/Qwen2.5-7B-Instruct", "Qwen2.5-7B-Instruct"), ("qwen2.5-7b", "Qwen2.5-7B"),
])
def test_a_hugging_face_id_or_alias_of_a_known_model_plans_it(cli, model: str, named: str):
    status, out, _ = cli("--model", model, "--gpus", "4", "--len", "32768", "--gpu", "gh200-144gb")
    assert status == 0 and out.startswith(f"GH200-144GB · {named} · cheapest plan for 32768 tokens within 4 GPUs: ")


@pytest.mark.parametrize("argv", [
    ("--model", "8B", "--len", "8k", "--gpu", "v100"),
    ("--model", "8B", "--len", "8k", "--gpu", "t4", "--gpu-memory", "16"),  # not as one's own either
    ("memory", "--model", "8B", "--gpu", "Tesla V100-SXM2-32GB", "--gpus", "2", "--len", "8k"),
    ("map", "--model", "8B", "--gpu", "p100"),
])
def test_a_gpu_without_bf16_is_refused_in_one_line_without_the_way_to_give_ones_own(cli, argv: tuple[str, ...]):
    status, out, err = cli(*argv)
    command = "solve" if argv[0].startswith("--") else f"solve {argv[0]}"
    assert (status, out, err.count("\n")) == (2, "", 1)
    assert err.startswith(f"{command}: error: '") and "which has no bf16 (compute capability " in err
    assert err.endswith("and the verl/FSDP training rft-solver plans runs in bf16: plan for a GPU type that has it\n")


def test_the_help_says_a_cost_compares_within_one_gpu_type_and_how_to_compare_gpu_types(cli, monkeypatch):
    # A buyer comparing GPU types reads the same cost for 4 A100s and 4 H20s (the cost counts GPUs, not speed):
    # the help says so, and how to ask for several GPU types at once (--gpu h100,h200).
    monkeypatch.setenv("COLUMNS", "300")
    help_text = cli("--help")[1]
    assert "A cost is a relative step time: compare it within one GPU type;" in help_text
    assert ("An answer's cost is a relative step time: it counts the trainer GPUs and the settings, not a GPU type's "
            "speed, so compare it within one GPU type (4 A100s and 4 H20s cost the same).") in option_reference()
    assert ("To compare GPU types, name them together (--gpu h100,h200,a100: an answer for each, within one --gpus "
            "budget), with --minimize gpus for the fewest of each.") in option_reference()
    a100, h20 = (cli("--model", "14B", "--len", "64k", "--gpus", "4", "--exact", "--gpu", gpu)[1] for gpu in
                 ("a100", "h20"))
    assert "cost           0.6565 relative step time (best with --exact)" in a100
    assert h20.count("0.6565 relative step time") == 1


@pytest.mark.parametrize(("gpu", "plan", "auto_plan"), [
    ("h100", "Env + Offload + SP=4 on 4 GPUs", "Env + Offload + SP=2 on 2 GPUs"),
    ("a100", "Env + Offload + SP=4 on 4 GPUs", "Env + Offload + SP=2 on 2 GPUs"),
    ("h200", "Env + Offload + SP=2 on 2 GPUs", "Env + Offload on 1 GPU"),
    ("b200", "Env + Offload + SP=2 on 2 GPUs", "Env + Offload on 1 GPU"),
])
def test_the_guides_gpu_type_comparison_is_what_solve_answers(cli, gpu, plan, auto_plan):
    # docs/guide.md compares GPU types for Qwen3-14B at 64k by these answers, in words (a loop: not regenerated).
    status, out, _ = cli("--model", "14B", "--len", "64k", "--minimize", "gpus", "--gpu", gpu)
    assert status == 0 and f"\nplan           {plan}\n" in out
    guide = " ".join((Path(__file__).parents[1] / "docs" / "guide.md").read_text(encoding="utf-8").split())
    assert ("Qwen3-14B reaches 65536 tokens on 4 H100s or 4 A100s (Env + Offload + SP=4) and on 2 H200s or 2 B200s "
            "(Env + Offload + SP=2). With `--token-budget auto`") in guide
    assert "each needs half as many: 2 H100s or A100s, 1 H200 or B200." in guide
    auto = cli("--model", "14B", "--len", "64k", "--minimize", "gpus", "--gpu", gpu, "--token-budget", "auto")[1]
    assert f"\nplan           {auto_plan}\n" in auto


def test_a_hugging_face_id_given_for_a_model_config_says_to_download_its_config_json(cli, tmp_path: Path,
                                                                                     monkeypatch: pytest.MonkeyPatch):
    # --model-config Qwen/Qwen3-235B-A22B (and a cluster job's model_config) said "cannot read: No such file or
    # directory", not that a local file is read and nothing fetched.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fleet.yaml").write_text("pools:\n  - {name: p, gpu: H20, nodes: 1, gpus_per_node: 8}\njobs:\n"
                                         "  - {name: j, model_config: Qwen/Qwen3-235B-A22B, max_model_len: 8k}\n",
                                         encoding="utf-8")
    said = ("Qwen/Qwen3-235B-A22B: no such file or folder; a local config.json (or its folder) is read, not a Hugging "
            "Face id, and nothing is fetched: download it first (huggingface-cli download Qwen/Qwen3-235B-A22B "
            "config.json --local-dir DIR) and give DIR\n")
    assert cli("--model-config", "Qwen/Qwen3-235B-A22B", "--len", "8k") == (
        2, "", f"solve: error: --model-config {said}")
    assert cli("cluster", "fleet.yaml") == (2, "", f"solve cluster: error: fleet.yaml: job j, model_config: {said}")
    for gone in ("gone", "acme/gone.json", f"{tmp_path}/acme/gone", "ckpts/acme/gone"):  # one name, a .json, an
        # absolute path, a deeper one: no id
        assert cli("--model-config", gone, "--len", "8k") == (
            2, "", f"solve: error: --model-config {gone}: cannot read: No such file or directory\n")
