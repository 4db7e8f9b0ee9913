"""`solve tables` through the CLI entry point: output, filters and exit codes."""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
import yaml
from conftest import ONE_TABLE
from rich.console import Console

import solver.cli.output
import solver.render
from solver.render import NO_SETTING_STYLE, SHADES, setting_style, tables_view
from solver.tables import Setting, load_catalog


def test_human_output_shows_each_table_with_the_source_cells(cli):
    status, out, err = cli("tables", "--gpu", "a100", "--gpus", "6")
    # The A100's tables are the 80 GB one's: a note, as solve's, for 40 GB nodes (a100-40g: none of their own, which
    # the note says, with what answers for them, s91: it told them to give their name, which solve tables refuses).
    assert (status, err) == (0, ("solve tables: note: --gpu 'a100' is taken as A100-80GB, whose tables these are; "
                                 "nodes of A100-40GB have none: solve map --gpu A100-40GB maps what the planner "
                                 "answers for them\n"))
    assert cli("tables", "--gpu", "a100-80g", "--gpus", "6") == (0, out, "")
    status, _, err = cli("tables", "--gpu", "a100-40g")
    assert (status, err) == (2, ("solve tables: error: no tables for A100-40GB; tables exist for A100-80GB, H20-96GB; "
                                 "solve map --gpu a100-40g maps what the planner answers for it\n"))
    assert "A100-80GB (80 GB), 6 trainer GPUs" in out
    assert "H20" not in out and "4 trainer GPUs" not in out
    row = next(line for line in out.splitlines() if "51200" in line)
    assert [cell.strip() for cell in row.strip("│ ").split("│")] == [
        "51200", "Env + SP=2", "Env + SP=2", "Env + Offload + SP=2", "Env + Offload + SP=2", "-"
    ]
    assert "source: Trinity-RFT GPU configuration guide (gpu-config-guide.zh.md), A100 80GB 显卡配置建议, 6 张 GPU" in out


def test_human_output_without_filters_has_all_eight_tables(cli):
    status, out, _ = cli("tables")
    assert status == 0
    titles = [line.strip() for line in out.splitlines() if "trainer GPU" in line and "GB)" in line]
    assert titles == [f"{gpu}, {n} trainer GPU{'s' if n > 1 else ''}"
                      for gpu in ("A100-80GB (80 GB)", "H20-96GB (96 GB)") for n in (1, 2, 4, 6)]


def test_shading_follows_the_escalation_order_in_a_terminal(cli):
    assert setting_style(Setting()) == SHADES[0]
    assert setting_style(Setting(env=True, offload=True, sp=4)) == SHADES[-1]
    assert setting_style(Setting(offload=True)) == SHADES[-1]  # never tried by the source: after all it tries
    assert setting_style(None) == NO_SETTING_STYLE
    console = Console(force_terminal=True, color_system="truecolor", width=200, record=True)
    console.print(tables_view(load_catalog().narrowed(gpu="h20", gpus=1, model="4B")))
    text = console.export_text(styles=True)
    assert "\x1b[" in text and "Env + Offload" in text


def test_json_filters_narrow_the_cells(cli):
    status, out, err = cli("tables", "--gpu", "H20", "--gpus", "2", "--model", "qwen3-14b", "--json")
    assert (status, err) == (0, "")
    cells = json.loads(out)
    assert len(cells) == 14
    source = "Trinity-RFT GPU configuration guide (gpu-config-guide.zh.md), H20 96GB 显卡配置建议"
    assert cells[0] == {"gpu": "H20-96GB", "gpus": 2, "model": "Qwen3-14B", "max_model_len": 4096,
                        "feasible": True, "env": True, "offload": True, "sp": 1, "source": source,
                        "section": "2 张 GPU"}
    assert cells[-2] == {"gpu": "H20-96GB", "gpus": 2, "model": "Qwen3-14B", "max_model_len": 71680,
                         "feasible": False, "env": None, "offload": None, "sp": None, "source": source,
                         "section": "2 张 GPU"}


def test_json_for_one_model_across_all_tables(cli):
    status, out, _ = cli("tables", "--model", "4B", "--json")
    cells = json.loads(out)
    assert status == 0 and {cell["model"] for cell in cells} == {"Qwen3-4B"}
    assert len(cells) == 112  # one cell per row of the eight tables
    four_gpu_32k = [c for c in cells if (c["gpu"], c["gpus"], c["max_model_len"]) == ("A100-80GB", 4, 32768)]
    assert four_gpu_32k == [{"gpu": "A100-80GB", "gpus": 4, "model": "Qwen3-4B", "max_model_len": 32768,
                             "feasible": True, "env": False, "offload": False, "sp": 2,
                             "source": ("Trinity-RFT GPU configuration guide (gpu-config-guide.zh.md), "
                                        "A100 80GB 显卡配置建议"),
                             "section": "4 张 GPU"}]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["tables", "--gpu", "a30"], ("solve tables: error: unknown GPU 'a30'; accepted: A100-40GB/80GB, "
                                      "A800-80GB, H20-96GB, H100-80GB, H100-NVL-94GB, H800-80GB, H200-141GB, "
                                      "GH200-96GB/144GB, L40S-48GB, L40-48GB, L20-48GB, A40-48GB, RTX-A6000-48GB, "
                                      "RTX-6000-Ada-48GB, A10-24GB, L4-24GB, RTX-4090-24GB, RTX-5090-32GB, "
                                      "B200, B300, MI300X, MI325X; short forms such as l4 for L4-24GB too\n")),
        (["tables", "--model", "70B"], ("solve tables: error: unknown model '70B' (did you mean Llama-3.1-70B?); "
                                        "accepted: Qwen3-0.6B/1.7B/8B/14B(-Base), ")),
        (["tables", "--model", "72B"], ("solve tables: error: unknown model '72B'; accepted: "
                                        "Qwen3-0.6B/1.7B/8B/14B(-Base), ")),
        (["tables", "--model", "32B"], ("solve tables: error: no documented table has Qwen3-32B; documented models: "
                                        "Qwen3-0.6B, Qwen3-1.7B, Qwen3-4B, Qwen3-8B, Qwen3-14B; solve map --model 32B "
                                        "maps what the planner answers for it\n")),
        (["tables", "--gpus", "8"], ("solve tables: error: no table for 8 trainer GPUs; documented counts: 1, 2, 4, 6; "
                                     "solve map --gpus-up-to 8 maps what the planner answers for it\n")),
        (["tables", "--gpus", "0"],
         "solve tables: error: argument --gpus: must be a whole number from 1 to 65536, got 0\n"),
        (["tables", "--gpus", "-2"],
         "solve tables: error: argument --gpus: must be a whole number from 1 to 65536, got -2\n"),
        (["tables", "--gpus", " 0 "],  # shown as the number it reads, without the spaces around it
         "solve tables: error: argument --gpus: must be a whole number from 1 to 65536, got 0\n"),
        (["tables", "--gpus", "four"],
         "solve tables: error: argument --gpus: expected a whole number from 1 to 65536, got 'four'\n"),
        (["tables", "--flavour"], "solve tables: error: unrecognized arguments: --flavour\n"),
        # an option one typo from a known one gets a guess (the first such), the command's own
        (["--maximise", "len", "--model", "4B"],
         "solve: error: unrecognized arguments: --maximise len (did you mean --maximize?)\n"),
        (["--model", "4B", "--len=8k", "--jsn", "--exat"],
         "solve: error: unrecognized arguments: --jsn --exat (did you mean --json?)\n"),
        (["memory", "--model", "8B", "--gpu", "a100", "--gpus", "2", "--len", "8k", "--offlaod"],
         "solve memory: error: unrecognized arguments: --offlaod (did you mean --offload?)\n"),
        (["--model", "4B", "--len", "8k", "--gpu-colour"], "solve: error: unrecognized arguments: --gpu-colour\n"),
        # a typo of another tool's name for an option (--lenght for --length, --gpu-typo for --gpu-type): the option
        # that name means; none where this command lacks it (solve tables has no --len)
        (["--model", "4B", "--lenght", "32k"],
         "solve: error: unrecognized arguments: --lenght 32k (did you mean --len?)\n"),
        (["--model", "4B", "--len", "8k", "--gpu-typo"],
         "solve: error: unrecognized arguments: --gpu-typo (did you mean --gpu?)\n"),
        (["tables", "--lenght", "8k"], "solve tables: error: unrecognized arguments: --lenght 8k\n"),
        # another tool's name for an option (Trinity's max_model_len, torchrun's nproc_per_node): the option meant
        (["--model", "4B", "--max-model-len", "32k"],
         "solve: error: unrecognized arguments: --max-model-len 32k (did you mean --len?)\n"),
        (["--model", "4B", "--len", "8k", "--num_gpus", "8"],
         "solve: error: unrecognized arguments: --num_gpus 8 (did you mean --gpus?)\n"),
        (["map", "--num-gpus", "8"],
         "solve map: error: unrecognized arguments: --num-gpus 8 (did you mean --gpus-up-to?)\n"),
        (["memory", "--model", "8B", "--gpu", "a100", "--gpus", "2", "--len", "8k", "--nproc-per-node", "4"],
         "solve memory: error: unrecognized arguments: --nproc-per-node 4 (did you mean --node-gpus?)\n"),
        # nodes counted (torchrun's --nnodes): the trainer's GPUs that many nodes hold, on nodes of --node-gpus
        (["--model", "32B", "--gpu", "h100", "--len", "64k", "--nodes", "2"],
         ("solve: error: unrecognized arguments: --nodes 2 (solve counts the trainer's GPUs, not nodes: --gpus 16 for "
          "2 nodes of 8 GPUs; --node-gpus N for nodes of another size)\n")),
        (["--model", "32B", "--gpu", "h100", "--len", "64k", "--node-gpus", "4", "--nnodes=3"],
         ("solve: error: unrecognized arguments: --nnodes=3 (solve counts the trainer's GPUs, not nodes: --gpus 12 for "
          "3 nodes of 4 GPUs; --node-gpus N for nodes of another size)\n")),
        (["memory", "--model", "8B", "--gpu", "a100", "--gpus", "2", "--len", "8k", "--num_nodes", "many"],
         ("solve memory: error: unrecognized arguments: --num_nodes many (solve memory counts the trainer's GPUs, not "
          "nodes: --gpus 16 for 2 nodes of 8 GPUs; --node-gpus N for nodes of another size)\n")),
        (["--model", "32B", "--gpu", "h100", "--len", "64k", "--node-gpus", "4", "--nodes", "5"],
         ("solve: error: unrecognized arguments: --nodes 5 (solve counts the trainer's GPUs, not nodes: --gpus 20 for "
          "5 nodes of 4 GPUs; --node-gpus N for nodes of another size)\n")),
        # --node alone (options are taken by whole names only: it is no --node-gpus); more nodes than --gpus takes
        (["--model", "32B", "--gpu", "h100", "--len", "64k", "--node", "2"],
         ("solve: error: unrecognized arguments: --node 2 (solve counts the trainer's GPUs, not nodes: --gpus 16 for "
          "2 nodes of 8 GPUs; --node-gpus N for nodes of another size)\n")),
        (["--model", "32B", "--gpu", "h100", "--len", "64k", "--nodes", "8193"],
         ("solve: error: unrecognized arguments: --nodes 8193 (solve counts the trainer's GPUs, not nodes: 8193 nodes "
          "of 8 GPUs are more than --gpus takes (at most 65536); --node-gpus N for nodes of another size)\n")),
        (["--model", "4B", "--len", "8k", "--num_machines", "2"],  # accelerate's (persona91a)
         ("solve: error: unrecognized arguments: --num_machines 2 (solve counts the trainer's GPUs, not nodes: --gpus 16 "
          "for 2 nodes of 8 GPUs; --node-gpus N for nodes of another size)\n")),
        # accelerate's gradient accumulation: micro-batches, which Trinity packs by tokens; vLLM's share of a GPU:
        # the rollout's, not the --gpu-memory a typo away (persona91a)
        (["--model", "4B", "--len", "8k", "--gradient_accumulation_steps", "4"],
         ("solve: error: unrecognized arguments: --gradient_accumulation_steps 4 (Trinity packs micro-batches by tokens "
          "(trainer.use_dynamic_bsz, its default): --token-budget N caps max_token_len_per_gpu)\n")),
        (["--model", "4B", "--len", "8k", "--gpu-memory-utilization", "0.5"],
         ("solve: error: unrecognized arguments: --gpu-memory-utilization 0.5 (vLLM's share of a rollout GPU is the "
          "rollout's own setting, explorer.rollout_model.gpu_memory_utilization: rft-solver plans the trainer's "
          "GPUs)\n")),
        (["map", "--nodes", "2"], "solve map: error: unrecognized arguments: --nodes 2\n"),
        # solve tables filters by --gpus but has no --node-gpus: no nodes to count them in
        (["tables", "--gpus", "2", "--nodes", "3"], "solve tables: error: unrecognized arguments: --nodes 3\n"),
        (["--model", "4B", "--len", "8k", "--trinity"],
         "solve: error: unrecognized arguments: --trinity (did you mean --emit trinity?)\n"),
        (["--model", "4B", "--len", "8k", "--train_batch_size", "64"],
         "solve: error: unrecognized arguments: --train_batch_size 64 (did you mean --train-batch-size?)\n"),
        (["tables", "--max-model-len", "8k"], ("solve tables: error: unrecognized arguments: --max-model-len 8k (that "
                                               "is --len, an option of solve and solve memory, not of solve tables)\n")),
        # the guess comes before the options still missing: --max-model-len gave the length, by Trinity's name
        (["memory", "--max-model-len", "8k", "--model", "4B"],
         "solve memory: error: unrecognized arguments: --max-model-len 8k (did you mean --len?)\n"),
        (["memory", "--model", "4B", "--gpu", "a100", "--gpus", "4", "--offlaod"],
         "solve memory: error: unrecognized arguments: --offlaod (did you mean --offload?)\n"),
        (["memory", "--model", "4B"],
         "solve memory: error: the following arguments are required: --gpu, --gpus, --len\n"),
        # another command's option: whose it is, and this command's option for it where it has one
        (["map", "--gpu", "h100", "--gpus", "8"],
         ("solve map: error: --gpus is an option of solve, solve tables and solve memory, not of solve map (did you "
          "mean --gpus-up-to?)\n")),
        (["map", "--len", "8k"], ("solve map: error: --len is an option of solve and solve memory, not of solve map: a "
                                  "map finds the longest context of each model per GPU budget, or with --by len the "
                                  "cheapest setting of one model per length and budget\n")),
        # a stray word after an option's value: the option took one word (a name or a unit with a space)
        (["--model", "qwen3", "8b", "--len", "8k"],
         ("solve: error: unrecognized arguments: 8b (--model took 'qwen3': an option's value is one word; quote one "
          "with spaces)\n")),
        (["--model=qwen3", "8b"], ("solve: error: unrecognized arguments: 8b (--model took 'qwen3': an option's "
                                   "value is one word; quote one with spaces)\n")),
        (["--model", "8B", "--len", "32K", "tokens"], ("solve: error: unrecognized arguments: tokens (--len took "
                                                       "'32K': an option's value is one word; quote one with "
                                                       "spaces)\n")),
        (["tables", "--gpu", "a100", "--gpus", "4", "x", "y"],
         ("solve tables: error: unrecognized arguments: x y (--gpus took '4': an option's value is one word; quote "
          "one with spaces)\n")),
        (["--model", "8B", "--len", "8k", "--explain", "foo"],
         "solve: error: unrecognized arguments: foo (--explain takes no value: --explain, or leave it out)\n"),
        # a value after a flag pair, which takes none: the pair's two spellings
        (["--model", "8B", "--len", "8k", "--env", "true"],
         "solve: error: unrecognized arguments: true (--env takes no value: --env or --no-env)\n"),
        (["memory", "--model", "8B", "--gpu", "a100", "--gpus", "2", "--len", "8k", "--no-offload", "yes"],
         ("solve memory: error: unrecognized arguments: yes (--no-offload takes no value: --offload or "
          "--no-offload)\n")),
        (["--env", "--model", "qwen3", "8b", "--len", "8k"],  # a flag pair earlier, before another option: no value
         ("solve: error: unrecognized arguments: 8b (--model took 'qwen3': an option's value is one word; quote one "
          "with spaces)\n")),
        # an option with choices given without a value: the choices
        (["--model", "8B", "--len", "8k", "--emit"],
         "solve: error: argument --emit: expected one argument (choose from 'trinity')\n"),
        (["--model", "8B", "--len", "8k", "--minimize", "--gpus", "4"],
         "solve: error: argument --minimize: expected one argument (choose from 'gpus', 'gpu-hours')\n"),
        (["map", "--by"], "solve map: error: argument --by: expected one argument (choose from 'model', 'len')\n"),
        (["--model", "8B", "--len", "8k", "--top"], "solve: error: argument --top: expected one argument\n"),
        (["cluster", "a.yaml", "b.yaml"], ("solve cluster: error: unrecognized arguments: b.yaml (solve cluster reads "
                                           "one FILE.yaml: join the files in one, or run it once for each)\n")),
        # a goal of the other command: where it is asked
        (["--minimize", "nodes", "--model", "8B", "--len", "32k"],
         ("solve: error: argument --minimize: invalid choice: 'nodes' (choose from 'gpus', 'gpu-hours'); the fewest "
          "nodes for many jobs: solve cluster FLEET.yaml --minimize nodes\n")),
        (["cluster", "--minimize", "gpus", "fleet.yaml"],
         ("solve cluster: error: argument --minimize: invalid choice: 'gpus' (choose from 'nodes'); the fewest GPUs "
          "for one job: solve --minimize gpus --model M --len L; the fewest to add to the pools so that every job is "
          "placed: --buy\n")),  # s91: a fleet's owner asking the fewest GPUs for its jobs is buying
        # s91 (leftovers91): the cost a placement takes already; a job's pool, which the file gives
        (["cluster", "fleet.yaml", "--minimize", "cost"],
         ("solve cluster: error: argument --minimize: invalid choice: 'cost' (choose from 'nodes'); a placement takes "
          "the least cost already, after the most priority and length; the cheapest plan for one job: solve --model M "
          "--len L\n")),
        (["cluster", "fleet.yaml", "--buy", "--pool", "h20"],
         ("solve cluster: error: unrecognized arguments: --pool h20 (the file gives it: a job's pool, the one pool it "
          "may use and so the one --buy adds nodes to for it)\n")),
        # shown as given, but escaped: a line break or a terminal escape in an argument keeps the error one line
        (["--model", "4B", "--len", "8k", "--gp\nu\x1b[31m"],
         "solve: error: unrecognized arguments: --gp\\nu\\x1b[31m\n"),
        (["tabels"], ("solve: error: unknown command 'tabels' (did you mean tables?); commands: tables, cluster, "
                      "calibrate, memory, map, examples, or none to plan\n")),
        (["4B", "--len", "8k"], ("solve: error: unknown command '4B' (did you mean --model 4B?); commands: tables, "
                                 "cluster, calibrate, memory, map, examples, or none to plan\n")),
        (["example"], ("solve: error: unknown command 'example' (did you mean examples?); commands: tables, "
                       "cluster, calibrate, memory, map, examples, or none to plan\n")),
        # the start of one command alone: that command; of two (m: memory, map), none
        (["mem", "--model", "4B"], ("solve: error: unknown command 'mem' (did you mean memory?); commands: tables, "
                                    "cluster, calibrate, memory, map, examples, or none to plan\n")),
        (["m"], ("solve: error: unknown command 'm'; commands: tables, cluster, calibrate, memory, map, examples, or "
                 "none to plan\n")),
        # the program's name again (solve solve ..., python -m solver solve ...): drop it (s89)
        (["solve", "--model", "4B"], ("solve: error: unknown command 'solve' (the program's own name, given again: "
                                      "drop it, and solve reads the words after it); commands: tables, cluster, "
                                      "calibrate, memory, map, examples, or none to plan\n")),
        (["solver", "cluster"], ("solve: error: unknown command 'solver' (the program's own name, given again: drop "
                                 "it, and solve reads the words after it); commands: tables, cluster, calibrate, "
                                 "memory, map, examples, or none to plan\n")),
        (["explain", "--model", "4B"], ("solve: error: unknown command 'explain' (did you mean the option "
                                        "--explain?); commands: tables, cluster, calibrate, memory, map, examples, "
                                        "or none to plan\n")),
        # a command written as an option: the command, not --gpu-memory, which --memory is a typo away from
        (["--model", "4B", "--len", "8k", "--memory"], ("solve: error: unrecognized arguments: --memory (did you mean "
                                                        "the command solve memory, which comes first: solve memory "
                                                        "[options]?)\n")),
        # a command after an option: the command, which comes first, not the option before it taking one word
        (["--gpu", "h100", "memory", "--model", "8B", "--gpus", "8", "--len", "32k"],
         ("solve: error: unrecognized arguments: memory (did you mean the command solve memory, which comes first: "
          "solve memory [options]?)\n")),
        (["--gpu", "h100", "memory", "--model", "8B", "--explian"],  # the command before a misspelt option's guess
         ("solve: error: unrecognized arguments: memory --explian (did you mean the command solve memory, which comes "
          "first: solve memory [options]?)\n")),
        (["map", "--gpu", "h100", "cluster"], ("solve map: error: unrecognized arguments: cluster (did you mean the "
                                               "command solve cluster, not an option of solve map: solve cluster "
                                               "[options]?)\n")),
        # a long option written with one hyphen: the option, with two (argparse took -help as -h given 'elp')
        (["-model", "8B", "--len", "32k"], "solve: error: unrecognized arguments: -model (did you mean --model?)\n"),
        (["-help"], "solve: error: unrecognized arguments: -help (did you mean --help?)\n"),
        (["memory", "-help"], "solve memory: error: unrecognized arguments: -help (did you mean --help?)\n"),
        (["map", "-gpus", "4"], "solve map: error: unrecognized arguments: -gpus (did you mean --gpus-up-to?)\n"),
        (["--model", "8B", "--len", "32k", "-json"],
         "solve: error: unrecognized arguments: -json (did you mean --json?)\n"),
        (["--model", "8B", "--len", "32k", "-sp", "2"],  # the shortest such option: two letters after the hyphen
         "solve: error: unrecognized arguments: -sp (did you mean --sp?)\n"),
        (["--model", "8B", "--len", "32k", "--", "-json"],  # after "--" no word is an option: told so, no guess
         ("solve: error: unrecognized arguments: -- -json (after --, no word is an option, and solve takes none "
          "there)\n")),
        # inside another command, the command is one of its own, not an option there
        (["map", "--cluster"], ("solve map: error: unrecognized arguments: --cluster (did you mean the command solve "
                                "cluster, not an option of solve map: solve cluster [options]?)\n")),
    ],
)
def test_bad_filters_exit_2_with_one_line_naming_accepted_values(cli, argv, message):
    status, out, err = cli(*argv)
    assert status == 2 and out == ""
    *usage, error = err.splitlines()
    assert all(line.startswith(("usage:", " ")) for line in usage) and len(usage) <= 2
    assert (error + "\n").startswith(message)
    assert "Traceback" not in err


@pytest.mark.parametrize(("argv", "message"), [
    # Before argparse's check of the required options, which would say "the following arguments are required".
    (["memory", "--explain"], "--explain is an option of solve, not of solve memory"),
    (["memory", "--model", "4B", "--gpu", "a100", "--gpus", "1", "--len", "8k", "--version"],
     "--version is an option of solve, not of solve memory"),
    (["tables", "--version"], "--version is an option of solve, not of solve tables"),
    *(([command, "--version"], f"--version is an option of solve, not of solve {command}")
      for command in ("cluster", "map", "calibrate", "examples")),  # every command says where --version is
    (["--model", "4B", "--emit-dir=out"], "--emit-dir is an option of solve cluster, not of solve"),
    (["memory", "--gpu", "a100", "--time-limit", "30"],
     "--time-limit is an option of solve, solve cluster and solve map, not of solve memory"),
    # no guess a typo away: cluster's --minimize is no --maximize; the job field that asks longer (persona73, s84)
    (["cluster", "fleet.yaml", "--maximize", "len"],
     ("--maximize is an option of solve, not of solve cluster (the file gives it: a job's max_model_len as "
      "{at_least: N}, longer where a plan allows)")),
    # what the cluster file gives instead: the field
    (["cluster", "fleet.yaml", "--host-ram", "1024"],
     ("--host-ram is an option of solve, solve memory and solve map, not of solve cluster (the file gives it: a pool's "
      "host_ram_gb)")),
    (["cluster", "fleet.yaml", "--len", "32k"], ("--len is an option of solve and solve memory, not of solve cluster "
                                                 "(the file gives it: a job's max_model_len)")),
    # s87: with no file, its value read as FILE.yaml, as solve cluster --mem 1TB says it (_positional_given_back)
    (["cluster", "--host-ram", "1TB"],
     ("--host-ram is an option of solve, solve memory and solve map, not of solve cluster (the file gives it: a pool's "
      "host_ram_gb); FILE.yaml is missing ('1TB', after --host-ram, was read as FILE.yaml)")),
    (["cluster", "--len=32k"], ("--len is an option of solve and solve memory, not of solve cluster (the file gives "
                                "it: a job's max_model_len); FILE.yaml is missing")),
])
def test_an_option_of_another_command_is_named_as_theirs(cli, argv, message):
    command = message.split(", not of ")[1].split(" (")[0]
    assert cli(*argv) == (2, "", f"usage: {command} [options] (--help lists them)\n{command}: error: {message}\n")


@pytest.mark.parametrize(("given", "meant"), [
    ("--ulysses 2", "--sp"), ("--gpu-type a100", "--gpu"), ("--model-name 8B", "--model"), ("--output p.yaml", "--out"),
    ("--config c.yaml", "--from-config"), ("--host-memory 512", "--host-ram"), ("--rollout 2", "--rollout-gpus"),
    ("--batch-size 64", "--train-batch-size"), ("--Max-Model-Len 32k", "--len"), ("--SEQ_LEN 32k", "--len"),
    ("--Train_Batch_Size 64", "--train-batch-size"),  # this command's own option, in another case
    ("--cpu-memory 512", "--host-ram"),  # what it means before the option a typo away (--gpu-memory)
    # A hobbyist's words for a node's RAM and a card's memory, and for JSON output.
    ("--cpu-ram 64", "--host-ram"), ("--vram 24", "--gpu-memory"), ("--format json", "--json"),
    # The Python API's keywords, which a notebook user tries as options (persona90c): no guess before.
    ("--budget-gpus 4", "--gpus"), ("--budget_gpus 4", "--gpus"), ("--reference-model", "--reference"),
    ("--lora-exclude-modules x", "--lora-exclude"),
    # accelerate's and DeepSpeed's names, which a workstation user guesses (persona91a): no guess before.
    ("--num_processes 2", "--gpus"), ("--nproc 2", "--gpus"), ("--offload-optimizer-device cpu", "--offload"),
    ("--offload_param_device cpu", "--offload"),
])
def test_each_kind_of_other_tools_option_is_told_the_one_meant(cli, given: str, meant: str):
    # One name of each kind in MEANT, in any case and with underscores for hyphens as well.
    assert cli("--model", "4B", "--len", "8k", *given.split()) == (2, "", (
        "usage: solve [options] (--help lists them)\n"
        f"solve: error: unrecognized arguments: {given} (did you mean {meant}?)\n"))


def test_help_beside_an_unknown_option_shows_the_required_options_as_required(cli):
    status, out, err = cli("memory", "--max-model-len", "8k", "--help")
    assert (status, err) == (0, "")
    assert " --gpu G --gpus N --len L " in " ".join(out.split("\n\n")[0].split())


def test_an_option_no_command_takes_nor_one_after_a_double_dash_is_named_so(cli):
    assert cli("memory", "--gpu", "a100", "--gpus", "1", "--len", "8k", "--model", "4B", "--", "--explain")[2].endswith(
        "solve memory: error: unrecognized arguments: -- --explain (after --, no word is an option, and solve memory "
        "takes none there)\n")
    assert cli("tables", "--flavour")[2].endswith("solve tables: error: unrecognized arguments: --flavour\n")


@pytest.mark.parametrize(("argv", "error"), [
    # A file to read: '-' is a name, and /dev/stdin names standard input (session 74).
    (["--model", "4B", "--cells", "-"], ("argument --cells: expected a file name, got '-' (rft-solver reads named "
                                         "files: give /dev/stdin for standard input)")),
    (["--model", "4B", "--weights", "-"], ("argument --weights: expected a file name, got '-' (rft-solver reads named "
                                           "files: give /dev/stdin for standard input)")),
    (["--model", "4B", "--memory-model", "-"], ("argument --memory-model: expected a file name, got '-' (rft-solver "
                                                "reads named files: give /dev/stdin for standard input)")),
    (["--model-config", "-"], ("argument --model-config: expected a file or folder name, got '-' (rft-solver reads "
                               "named files: give /dev/stdin for standard input)")),
    (["cluster", "-"], ("argument FILE.yaml: expected a file name, got '-' (rft-solver reads named files: give "
                        "/dev/stdin for standard input)")),
    # A file to write: what it would write goes to standard output without the option.
    (["map", "--svg", "-"], ("argument --svg: expected a file name, got '-' (rft-solver writes named files; what it "
                             "would write goes to standard output without the option)")),
    # A folder: its files go into one.
    (["cluster", "fleet.yaml", "--emit-dir", "-"], ("argument --emit-dir: expected a folder name, got '-' (rft-solver "
                                                    "writes its files into a named folder, not to standard output)")),
    (["examples", "-"], ("argument DIR: expected a folder name, got '-' (rft-solver writes its files into a named "
                         "folder, not to standard output)")),
    (["examples", ""], "argument DIR: expected a folder name, got ''"),
])
def test_a_dash_for_a_path_is_refused_in_the_words_of_its_kind(cli, argv, error):
    status, out, err = cli(*argv)
    command = " ".join(["solve", *argv[:1]]) if argv[0] in ("map", "cluster", "examples") else "solve"
    assert (status, out, err.splitlines()[-1]) == (2, "", f"{command}: error: {error}")


def test_help_and_version_exit_0(cli):
    assert cli("--help")[0] == 0
    status, out, _ = cli("--version")
    assert status == 0 and out.startswith("solve ")


@pytest.mark.parametrize("command", [[], ["tables"], ["map"], ["memory"], ["calibrate"], ["cluster"]])
def test_help_names_a_doc_as_the_source_has_it(cli, command: list[str]):
    # A pip install has no docs/: a help that names one says it is the source's (and says enough to start without it).
    # solve's example of a Trinity config names docs/examples/, where solve examples writes it in any folder.
    status, out, _ = cli(*command, "--help")
    words = " ".join(out.split())
    named = [match for match in re.finditer(r"docs/[\w./-]+", words) if not match[0].startswith("docs/examples/")]
    assert status == 0 and all(words.startswith(" in rft-solver's source", match.end()) for match in named)
    assert ("docs/examples/" in words) == (command == [])
    assert command != [] or "(exit 1: no; solve examples writes it)" in words
    assert command != ["cluster"] or "jobs: [{name, model, max_model_len}] (every field: docs/cluster.md in " \
        "rft-solver's source)" in words


def test_installed_solve_exits_2_without_traceback(tmp_path: Path, solve_script: Path):
    result = subprocess.run(
        [str(solve_script), "tables", "--gpu", "a30"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == ("solve tables: error: unknown GPU 'a30'; accepted: A100-40GB/80GB, A800-80GB, "
                             "H20-96GB, H100-80GB, H100-NVL-94GB, H800-80GB, H200-141GB, GH200-96GB/144GB, L40S-48GB, "
                             "L40-48GB, L20-48GB, A40-48GB, RTX-A6000-48GB, RTX-6000-Ada-48GB, A10-24GB, L4-24GB, "
                             "RTX-4090-24GB, RTX-5090-32GB, B200, B300, MI300X, MI325X; short forms such as l4 for "
                             "L4-24GB too\n")


def test_python_m_solver_is_the_solve_command(tmp_path: Path, solve_script: Path):
    # `python -m solver` runs the command as the console script does: its output, its exit status.
    command = ["tables", "--gpu", "a100", "--gpus", "1", "--model", "4B", "--json"]
    module, script = (subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)
                      for argv in ([sys.executable, "-m", "solver", *command], [str(solve_script), *command]))
    assert (module.returncode, module.stdout, module.stderr) == (script.returncode, script.stdout, script.stderr)
    assert module.returncode == 0 and json.loads(module.stdout)[0]["gpu"] == "A100-80GB"
    refused = subprocess.run([sys.executable, "-m", "solver", "tables", "--gpu", "a30"], cwd=tmp_path,
                             capture_output=True, text=True, timeout=60, check=False)
    assert (refused.returncode, refused.stdout) == (2, "") and refused.stderr.startswith(
        "solve tables: error: unknown GPU 'a30'; accepted: ")


@pytest.mark.parametrize("flag", ["--model", "--gpu"])
@pytest.mark.parametrize(("length", "refused"), [(4096, "unknown "), (100_000, "")])  # 4096: as long as a name may be
def test_a_long_name_is_cut_short_in_the_error_line(cli, flag: str, length: int, refused: str):
    kind = flag[2:].replace("gpu", "GPU")
    status, out, err = cli("tables", flag, "x" * length)
    assert (status, out) == (2, "") and err.startswith(f"solve tables: error: {refused}{kind} '{'x' * 47}...")
    assert len(err) < 700 and err.count("\n") == 1
    assert err.endswith(f" is {length} characters long; a {kind} name is at most 4096\n") is not bool(refused)


def test_a_narrow_tables_title_and_source_keep_to_one_line_each(cli):
    status, out, _ = cli("tables", "--gpus", "6", "--model", "1.7B", "--gpu", "a100")
    lines = out.splitlines()
    assert status == 0 and lines[0] == "A100-80GB (80 GB), 6 trainer GPUs"
    assert "source: Trinity-RFT GPU configuration guide (gpu-config-guide.zh.md), A100 80GB 显卡配置建议, 6 张 GPU" in lines


def test_tables_show_and_check_your_cells_beside_the_shipped_ones(cli):
    cells = Path(__file__).parent / "data" / "cells" / "h800.yaml"
    status, out, _ = cli("tables", "--cells", str(cells), "--gpu", "h800")
    assert status == 0 and out.startswith("H800-80GB (80 GB), 8 trainer GPUs\n")
    # Each row shows the file's own cells: its length, then its 8B and 14B cells.
    [table] = yaml.safe_load(cells.read_text(encoding="utf-8"))["tables"]
    shown = [[cell.strip() for cell in line.split("│")[1:-1]] for line in out.splitlines() if line.startswith("│")]
    assert shown == [[str(row["max_model_len"]), row["cells"]["8B"], row["cells"]["14B"]] for row in table["rows"]]
    assert cli("tables", "--cells", str(cells), "--check") == (
        0, f"0 contradictions in 568 cells: 8 of {cells}'s, 560 of the shipped tables\n", "")


def test_two_cells_files_with_tables_for_one_gpu_count_are_refused_saying_how_to_combine_them(cli, tmp_path: Path):
    # h800.yaml's table split by model, at the same lengths: a table names one source and each row needs a cell for
    # every model, so the two are not merged as read (disjoint lengths could not be): the line says how to join them.
    # Before: "(one table per GPU count, all its models in it)", silent on the rows and the source.
    text = (Path(__file__).parent / "data" / "cells" / "h800.yaml").read_text(encoding="utf-8")
    first, second = tmp_path / "h800-8b.yaml", tmp_path / "h800-14b.yaml"
    first.write_text(re.sub(r", 14B: [^}]*}", "}", text).replace("[8B, 14B]", "[8B]"), encoding="utf-8")
    second.write_text(re.sub(r"8B: [^,]*, ", "", text).replace("[8B, 14B]", "[14B]"), encoding="utf-8")
    assert cli("tables", "--cells", str(first), "--gpu", "h800")[0] == 0
    assert cli("tables", "--cells", str(first), "--cells", str(second)) == (2, "", (
        f"solve tables: error: --cells {second}: a table of H800-80GB for 8 trainer GPUs, which --cells {first} has "
        f"already: {ONE_TABLE}\n"))


def test_tables_check_lists_every_contradiction_of_your_cells(cli, tmp_path: Path):
    # Two typos: on 8 H800s, Qwen3-8B trains SP=2 at 32768 but needs nothing more at 65536 ('vanilla'), and
    # Qwen3-14B the same. Planning refuses such cells (first contradiction and a count); --check lists them all.
    cells = tmp_path / "cells.yaml"
    cells.write_text((Path(__file__).parent / "data" / "cells" / "h800.yaml").read_text(encoding="utf-8").replace(
        "{max_model_len: 65536, cells: {8B: SP=4, 14B: Env + SP=4}}", "{max_model_len: 65536, cells: {8B: vanilla, "
        "14B: vanilla}}"), encoding="utf-8")
    status, out, err = cli("--model", "8B", "--gpu", "h800", "--gpus", "8", "--len", "32k", "--cells", str(cells))
    assert (status, out) == (2, "") and "lists them); check the cells" in err
    status, out, _ = cli("tables", "--cells", str(cells), "--check")
    warnings = [line for line in out.splitlines() if line.startswith("solve tables: warning: ")]
    assert status == 1 and len(warnings) >= 2 and out.endswith(
        f"{len(warnings)} contradictions in 568 cells: 8 of {cells}'s, 560 of the shipped tables\n")
    assert any("Qwen3-8B" in line for line in warnings) and any("Qwen3-14B" in line for line in warnings)


def test_cells_that_contradict_the_tables_of_a_gpu_type_with_the_same_memory_are_refused(cli, tmp_path: Path):
    # The A800 borrows the A100's tables (the same memory): made-up A800 cells of 'vanilla' on 4 GPUs and '-' on 8
    # at 32768 contradict the A100's 'SP=2' on 4 (the same count), and its 'SP=2' on 6 (more GPUs only shard).
    cells = tmp_path / "a800.yaml"
    cells.write_text("gpu: A800-80GB\nmemory_gb: 80\nsource: made up\ntables:\n"
                     "  - {gpus: 4, section: 4 x A800, models: [Qwen3-4B], rows: [{max_model_len: 32768, "
                     "cells: {Qwen3-4B: vanilla}}]}\n"
                     "  - {gpus: 8, section: 8 x A800, models: [Qwen3-4B], rows: [{max_model_len: 32768, "
                     "cells: {Qwen3-4B: '-'}}]}\n", encoding="utf-8")
    status, out, err = cli("--model", "4B", "--gpu", "a800", "--gpus", "8", "--len", "32k", "--cells", str(cells))
    assert (status, out, err) == (2, "", (
        f"solve: error: --cells {cells}: A800-80GB, Qwen3-4B at 32768: vanilla trains on 4 GPUs but 6 GPUs (the "
        "A100-80GB's table) need SP=2 (more GPUs only shard the states further); and 7 more (solve tables --check, "
        "with the same --cells and --model-config, lists them); check the cells\n"))
    # Each said once, by the GPU type of the table for fewer GPUs (between two of one count, the first by name).
    status, out, _ = cli("tables", "--cells", str(cells), "--check")
    prefix = "solve tables: warning: "
    warnings = [line.removeprefix(prefix) for line in out.splitlines() if line.startswith(prefix)]
    assert (status, out.splitlines()[-1]) == (
        1, f"8 contradictions in 562 cells: 2 of {cells}'s, 560 of the shipped tables")
    assert warnings[:2] == [
        "A100-80GB and A800-80GB (the same memory), 4 GPUs, Qwen3-4B at 32768: SP=2 and vanilla",
        ("A100-80GB, Qwen3-4B at 32768: Env + SP=2 trains on 2 GPUs but 8 GPUs (the A800-80GB's table) need - (more "
         "GPUs only shard the states further)")]
    assert ("A800-80GB, Qwen3-4B at 32768: vanilla trains on 4 GPUs but 8 GPUs need - (more GPUs only shard the "
            "states further)") in warnings
    # Narrowed to one GPU type, it is checked against those with its memory all the same, and the count says so:
    # the cells checked, the A100's among them (smalls91b: it counted the A800's 2 alone), from either side.
    for gpu in ("a800", "a100"):
        status, out, _ = cli("tables", "--gpu", gpu, "--cells", str(cells), "--check")
        assert (status, out.splitlines()[-1]) == (
            1, f"8 contradictions in 267 cells: 2 of {cells}'s, 265 of the shipped tables")


def test_tables_check_narrows_to_the_gpu_count_and_model_asked(cli, tmp_path: Path):
    # Made-up A800 cells of Qwen3-4B and Qwen3-8B on 4 GPUs contradict the A100's (the same memory): --gpus and
    # --model narrow what is checked, and --json gives the warnings as an indented array.
    cells = tmp_path / "a800.yaml"
    cells.write_text("gpu: A800-80GB\nmemory_gb: 80\nsource: made up\ntables:\n"
                     "  - {gpus: 4, section: 4 x A800, models: [Qwen3-4B, Qwen3-8B], rows: [{max_model_len: 32768, "
                     "cells: {Qwen3-4B: vanilla, Qwen3-8B: vanilla}}]}\n"
                     "  - {gpus: 8, section: 8 x A800, models: [Qwen3-4B], rows: [{max_model_len: 32768, "
                     "cells: {Qwen3-4B: '-'}}]}\n", encoding="utf-8")
    same_count = "A100-80GB and A800-80GB (the same memory), 4 GPUs, Qwen3-{}B at 32768: SP={} and vanilla"
    check = ("tables", "--gpu", "a800", "--cells", str(cells), "--check")
    assert cli(*check, "--gpus", "4") == (1, (
        f"solve tables: warning: {same_count.format(4, 2)}\nsolve tables: warning: {same_count.format(8, 4)}\n"
        f"2 contradictions in 97 cells: 2 of {cells}'s, 95 of the shipped tables\n"), "")
    assert cli(*check, "--gpus", "4", "--model", "8b") == (1, (
        f"solve tables: warning: {same_count.format(8, 4)}\n1 contradiction in 20 cells: 1 of {cells}'s, 19 of the "
        "shipped tables\n"), "")
    status, out, _ = cli(*check, "--model", "4b")
    assert (status, out.splitlines()[-1]) == (
        1, f"8 contradictions in 55 cells: 2 of {cells}'s, 53 of the shipped tables")
    assert "Qwen3-8B" not in out
    assert cli(*check, "--gpus", "4", "--model", "4b", "--json") == (1, f'[\n  "{same_count.format(4, 2)}"\n]\n', "")


def test_tables_without_check_refuse_cells_that_contradict_the_tables(cli, tmp_path: Path):
    # As planning does: the first contradiction and how many more; --check lists them instead.
    cells = tmp_path / "a800.yaml"
    cells.write_text("gpu: A800-80GB\nmemory_gb: 80\nsource: made up\ntables:\n"
                     "  - {gpus: 4, section: 4 x A800, models: [Qwen3-4B], rows: [{max_model_len: 32768, "
                     "cells: {Qwen3-4B: vanilla}}]}\n", encoding="utf-8")
    for flags in ((), ("--json",)):
        assert cli("tables", "--cells", str(cells), *flags) == (2, "", (
            f"solve tables: error: --cells {cells}: A800-80GB, Qwen3-4B at 32768: vanilla trains on 4 GPUs but 6 GPUs "
            "(the A100-80GB's table) need SP=2 (more GPUs only shard the states further); and 3 more (solve tables "
            "--check, with the same --cells and --model-config, lists them); check the cells\n"))
    assert cli("tables", "--cells", str(cells), "--check")[0] == 1


def test_tables_read_cells_of_a_model_config_model_and_check_them(cli, tmp_path: Path):
    # Cells may name a --model-config model; the refusal points to `solve tables --check` with the same --cells and
    # --model-config, so solve tables takes it: the cells show and are checked (it needs cells that name it).
    model = tmp_path / "my-sft"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({
        "model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 8192,
        "tie_word_embeddings": False}), encoding="utf-8")
    cells = tmp_path / "mine.yaml"
    cells.write_text("gpu: My-GPU\nmemory_gb: 48\nmemory_mib: 49140\nsource: made up\ntables:\n"
                     "  - {gpus: 8, section: 8 x mine, models: [my-sft], rows: [{max_model_len: 16384, "
                     "cells: {my-sft: Env + Offload + SP=2}}, {max_model_len: 32768, cells: {my-sft: Env + SP=2}}]}\n",
                     encoding="utf-8")
    contradiction = ("My-GPU, 8 GPUs, my-sft: Env + Offload + SP=2 at 16384 but Env + SP=2 trains at the longer 32768 "
                     "(memory only grows with the length)")
    status, _, err = cli("--model-config", str(model), "--gpu", "my-gpu", "--len", "16k", "--cells", str(cells))
    assert (status, err.splitlines()[-1]) == (2, f"solve: error: --cells {cells}: {contradiction}; check the cells")
    check = ("tables", "--cells", str(cells), "--model-config", str(model), "--check")
    assert cli(*check) == (1, (f"solve tables: warning: {contradiction}\n1 contradiction in 562 cells: 2 of {cells}'s, "
                               "560 of the shipped tables\n"), "")
    assert cli(*check, "--gpu", "my-gpu", "--json") == (1, json.dumps([contradiction], indent=2) + "\n", "")
    cells.write_text(cells.read_text(encoding="utf-8").replace("Env + Offload + SP=2", "SP=2"), encoding="utf-8")
    status, out, err = cli("tables", "--cells", str(cells), "--model-config", str(model), "--gpu", "my-gpu")
    assert (status, err) == (0, "") and "┃ my-sft " in out and "│         32768 │ Env + SP=2 " in out
    assert cli("tables", "--model-config", str(model)) == (
        2, "", ("solve tables: error: --model-config describes a model that the cells of --cells FILE name: give them "
                f"too (the documented tables name no model of yours; solve map --model-config {model} maps what the "
                "planner answers for it)\n"))
    # Where no table is kept, the map it names reads the cells with the config (without it they name an unknown
    # model, and it refused them), in --model's place where --model names that model.
    for named in ([], ["--model", "my-sft"]):
        status, _, err = cli("tables", "--cells", str(cells), "--model-config", str(model), "--gpus", "3", *named)
        assert (status, err.removeprefix("solve tables: error: no table for 3 trainer GPUs; documented counts: ")) == (
            2, (f"1, 2, 4, 6, 8; solve map --model-config {model} --gpus-up-to 3 --cells {cells} maps what the planner "
                "answers for it\n"))

def test_a_model_whose_cells_another_stands_for_is_named_under_its_tables(cli):
    # On stdout after the tables; beside --json on stderr, as a note, so that the array stays the cells.
    status, out, err = cli("tables", "--model", "8b-base", "--gpu", "a100-80g", "--gpus", "4")
    assert (status, err) == (0, "") and "┃ Qwen3-8B " in out
    assert out.endswith("\nQwen3-8B's cells stand for Qwen3-8B-Base, of the same shape\n")
    status, out, err = cli("tables", "--model", "8b-base", "--gpu", "a100-80g", "--gpus", "4", "--json")
    assert (status, err) == (0, "solve tables: note: Qwen3-8B's cells stand for Qwen3-8B-Base, of the same shape\n")
    assert {cell["model"] for cell in json.loads(out)} == {"Qwen3-8B"}


@pytest.mark.parametrize(("row", "first"), [
    # A model of Qwen3-8B's shape: the A100's cell for Qwen3-8B speaks for it.
    ("{max_model_len: 81920, cells: {Qwen3-8B-Base: SP=4}}",
     ("A100-80GB and A800-80GB (the same memory), 4 GPUs, Qwen3-8B at 81920: Env + Offload + SP=4 and SP=4 "
      "(Qwen3-8B-Base, of its shape, in the A800-80GB's)")),
    # SP=4 at 98304 on 4 A800s, where the A100's table for 4 GPUs needs Env + SP=4 at 51200 already.
    ("{max_model_len: 98304, cells: {Qwen3-8B: SP=4}}",
     ("A100-80GB and A800-80GB (the same memory), 4 GPUs, Qwen3-8B: Env + SP=4 at 51200 but SP=4 trains at the "
      "longer 98304 (memory only grows with the length)")),
])
def test_cells_are_checked_against_a_same_memory_gpu_types_shape_twins_and_lengths(cli, tmp_path: Path, row: str,
                                                                                   first: str):
    cells = tmp_path / "a800.yaml"
    model = "Qwen3-8B-Base" if "Base" in row else "Qwen3-8B"
    cells.write_text(f"gpu: A800-80GB\nmemory_gb: 80\nsource: made up\ntables:\n  - {{gpus: 4, section: 4 x A800, "
                     f"models: [{model}], rows: [{row}]}}\n", encoding="utf-8")
    status, out, _ = cli("tables", "--cells", str(cells), "--check")
    assert status == 1 and out.splitlines()[0] == f"solve tables: warning: {first}"


def test_a_cells_file_without_tables_is_refused(cli, tmp_path: Path):
    cells = tmp_path / "cells.yaml"
    cells.write_text("gpu: MyCard-64GB\nmemory_gb: 64\nsource: mine\ntables: []\n", encoding="utf-8")
    for command in (("tables",), ("--model", "8B", "--gpu", "MyCard-64GB", "--gpus", "4", "--len", "8k")):
        prog = "solve tables" if command == ("tables",) else "solve"
        message = f"{prog}: error: --cells {cells}: no tables: a cells file gives at least one (gpus, models, rows)\n"
        assert cli(*command, "--cells", str(cells)) == (2, "", message)


@pytest.mark.parametrize(("table", "field"), [
    ("{gpus: 8, section: s, rows: [{max_model_len: 32768, cells: {8B: SP=2}}]}", "models"),
    ("{gpus: 8, section: s, models: [8B]}", "rows"),
])
def test_a_cells_files_table_without_models_or_rows_names_the_field(cli, tmp_path: Path, table: str, field: str):
    # The models go by their catalogue names (8B: Qwen3-8B) before the table is checked: the missing one is named.
    cells = tmp_path / "cells.yaml"
    cells.write_text(f"gpu: H100-80GB\nmemory_gb: 80\nsource: mine\ntables:\n  - {table}\n", encoding="utf-8")
    assert cli("calibrate", "--cells", str(cells)) == (2, "", (
        f"solve calibrate: error: --cells {cells}: line 5: table gpus=8: missing field '{field}' (fields: gpus, "
        "section, source, models, rows)\n"))


@pytest.mark.parametrize(("mistake", "said"), [
    (("Qwen3-14B: SP=4", "Qwen3-14B: env"), (
        "line 9: table gpus=8, row max_model_len=32768, cells: Qwen3-14B: setting 'env' is not in the source's form; "
        "write 'Env'")),
    (("- max_model_len: 65536", "- max_model_lenx: 65536"), (
        "line 11: table gpus=8, rows item 2: unknown field 'max_model_lenx' (did you mean max_model_len? fields: "
        "max_model_len, cells)")),
    (("gpus: 8", "gpus: -8.0"), "line 5: table gpus=-8.0, gpus: must be above 0, got -8.0"),
    # persona91c: a table's check of its rows named the table's line, not the row's
    (("Qwen3-14B: SP=8", "Qwen3-14B: SP=3"), (
        "line 11: table gpus=8: row max_model_len=65536, Qwen3-14B: SP=3 does not divide the table's 8 GPUs (it takes "
        "SP=2, SP=4 or SP=8)")),
    (("- max_model_len: 65536", "- max_model_len: 32768"), "line 11: table gpus=8: duplicate row max_model_len=32768"),
    ((", Qwen3-14B: SP=4}", ", 14B: SP=4, Qwen3-14B: SP=4}"), (
        "line 9: table gpus=8: row max_model_len=32768: two cells for Qwen3-14B (by two of its names)")),
    (("memory_gb: 80", "memory_gb: 80GB"), (
        "line 2: memory_gb: must be a whole number, got '80GB' (GB as sold, as a number: 80 for 80 GB; nvidia-smi's "
        "total in MiB goes in memory_mib)")),
])
def test_a_cells_files_data_mistake_names_its_line(cli, tmp_path: Path, mistake: tuple[str, str], said: str):
    # words89: a refusal named the file, the table and the row, not the line (the YAML loader dropped its marks)
    cells = tmp_path / "cells.yaml"
    cells.write_text("gpu: H100-80GB\nmemory_gb: 80\nsource: mine\ntables:\n  - gpus: 8\n    section: s\n"
                     "    models: [Qwen3-8B, Qwen3-14B]\n    rows:\n"
                     "      - {max_model_len: 32768, cells: {Qwen3-8B: SP=2, Qwen3-14B: SP=4}}\n"
                     "      # a comment\n      - max_model_len: 65536\n"
                     "        cells:\n          Qwen3-8B: SP=4\n          Qwen3-14B: SP=8\n".replace(*mistake),
                     encoding="utf-8")
    for command in (("--model", "8B", "--gpu", "h100", "--gpus", "8"), ("calibrate",)):
        prog = "solve calibrate" if command == ("calibrate",) else "solve"
        assert cli(*command, "--cells", str(cells)) == (2, "", f"{prog}: error: --cells {cells}: {said}\n")


def test_a_cells_files_other_problem_is_named_by_its_line_and_cell(cli, tmp_path: Path):
    # checks89b: the count of other problems named the cells mapping alone, without the cell or a line to find it by
    cells = tmp_path / "cells.yaml"
    cells.write_text("gpu: H100-80GB\nmemory_gb: 80\nsource: mine\ntables:\n  - gpus: 8\n"
                     "    models: [Qwen3-8B, Qwen3-14B]\n    rows:\n      - max_model_len: 32768\n        cells:\n"
                     "          Qwen3-8B: SP=2\n          Qwen3-14B: Env+Offload+SP=2\n", encoding="utf-8")
    assert cli("tables", "--cells", str(cells), "--check") == (2, "", (
        f"solve tables: error: --cells {cells}: line 5: table gpus=8: missing field 'section' (fields: gpus, section, "
        "source, models, rows) (and 1 more problem, at 'table gpus=8, row max_model_len=32768, cells, Qwen3-14B' "
        "(line 11))\n"))

def test_a_cells_files_aliases_are_checked_as_the_catalogues_are(cli, tmp_path: Path):
    # A new GPU type's alias that names a catalogue GPU type would be ambiguous; a catalogue GPU type keeps its own.
    body = (Path(__file__).parent / "data" / "cells" / "h800.yaml").read_text(encoding="utf-8").split("\n", 2)[2]
    new, known = tmp_path / "new.yaml", tmp_path / "known.yaml"
    new.write_text(f"gpu: MyGPU\nmemory_gb: 64\naliases: [a100]\n{body}", encoding="utf-8")
    known.write_text(f"gpu: H800-80GB\nmemory_gb: 80\naliases: [myh800]\n{body}", encoding="utf-8")
    asked = ("--model", "8B", "--len", "32k", "--gpus", "8", "--gpu")
    assert cli(*asked, "a100", "--cells", str(new)) == (2, "", (
        f"solve: error: --cells {new}: a100 names A100-80GB (80.0 GiB), another GPU type: give yours a name of its own\n"))
    assert cli(*asked, "h800", "--cells", str(known)) == (2, "", (
        f"solve: error: --cells {known}: aliases myh800: H800-80GB is known already (the catalogue's, or an earlier "
        "cells file's), whose aliases for it stand (h800, h800-80g); give it none here\n"))
    # A memory the catalogue's GPU type does not have is refused with the same --cells FILE prefix.
    known.write_text(f"gpu: H800-80GB\nmemory_gb: 40\n{body}", encoding="utf-8")
    assert cli(*asked, "h800", "--cells", str(known)) == (2, "", (
        f"solve: error: --cells {known}: GPU H800-80GB: memory_gb 40 is not the catalogue's 80 for H800-80GB: "
        "write that, or give another card a name of its own\n"))
    status, out, _ = cli("tables", "--cells", str(new))
    assert (status, out) == (2, "")


def test_measured_tables_name_their_own_source_and_the_legend_their_settings(cli):
    status, out, _ = cli("tables", "--cells", "docs/examples/my-cells.yaml", "--gpu", "h100")
    text = " ".join(out.split())
    # The cells' source and heading, as in the JSON, not the datasheet the GPU type's memory comes from.
    assert status == 0 and [line for line in out.splitlines() if line.startswith("source: ")] == [
        "source: my measurements, 2026-11, 8 x H100"]
    assert " SP=8 " in text.split("cost, lightest to darkest:")[1] and "Env + Offload + SP=8" in text.split(
        "cost, lightest to darkest:")[1]
    # In JSON too: your cells name your source and heading, the shipped ones theirs.
    status, out, _ = cli("tables", "--cells", "docs/examples/my-cells.yaml", "--json")
    sources = {(cell["gpu"], cell["source"], cell["section"]) for cell in json.loads(out)}
    assert status == 0 and ("H100-80GB", "my measurements, 2026-11", "8 x H100") in sources
    assert {source for gpu, source, _ in sources if gpu == "H100-80GB"} == {"my measurements, 2026-11"}
    assert ("A100-80GB", "Trinity-RFT GPU configuration guide (gpu-config-guide.zh.md), A100 80GB 显卡配置建议",
            "1 张 GPU") in sources


def test_the_legend_names_every_setting_of_the_escalation_order_even_where_a_table_shows_few(cli):
    status, out, _ = cli("tables", "--gpu", "a100", "--gpus", "1", "--model", "4B")
    assert status == 0 and " ".join(out.split()).endswith(
        "cost, lightest to darkest: vanilla Env SP=2 Env + SP=2 SP=4 Env + SP=4 Env + Offload Env + Offload + SP=2 "
        "Env + Offload + SP=4 - nothing trains")


def test_a_table_may_name_a_source_of_its_own(cli, tmp_path: Path):
    # A table's own source (a heading measured elsewhere) stands for its cells, printed before its heading as in
    # the JSON, in place of its GPU type's.
    cells = Path(__file__).parent / "data" / "cells" / "h800.yaml"
    text = cells.read_text(encoding="utf-8").replace('    section: "8 x H800"\n',
                                                     '    section: "8 x H800"\n    source: "a colleague\'s runs"\n')
    path = tmp_path / "h800.yaml"
    path.write_text(text, encoding="utf-8")
    status, out, _ = cli("tables", "--cells", str(path), "--gpu", "h800", "--json")
    assert status == 0 and {(cell["source"], cell["section"]) for cell in json.loads(out)} == {
        ("a colleague's runs", "8 x H800")}
    status, out, _ = cli("tables", "--cells", str(path), "--gpu", "h800")
    assert status == 0 and "source: a colleague's runs, 8 x H800" in out.splitlines()


@pytest.mark.parametrize(("columns", "note"), [(80, True), (111, True), (112, False)])
def test_a_terminal_too_narrow_for_the_tables_cells_gets_a_note(cli, monkeypatch: pytest.MonkeyPatch, columns: int,
                                                                note: bool):
    # The cells do not wrap ('Env + Offload + SP=2' cut to 'Env + Offload …' would read as SP=4 too): the A100's
    # 6-GPU table needs all of its 112 columns.
    screen = io.StringIO()
    monkeypatch.setattr(solver.cli.output, "new_console", lambda width=160: Console(
        width=columns, force_terminal=True, file=screen, **solver.render.PLAIN_TEXT))
    status, _, err = cli("tables", "--gpu", "a100-80g", "--gpus", "6")
    assert status == 0 and err == (f"solve tables: note: the table needs 112 columns and the terminal has {columns}: "
                                   "widen it, pipe the output (| less -S), or use --json\n" if note else "")
    assert ("…" in screen.getvalue()) == note


@pytest.mark.parametrize("columns", ["0", "5"])
def test_a_terminal_that_says_it_has_no_columns_is_taken_as_80(monkeypatch: pytest.MonkeyPatch, columns: str):
    # COLUMNS=0, as some containers set it: rich would print nothing at all. Stdout is a terminal (a pty's).
    monkeypatch.setenv("COLUMNS", columns)
    primary, secondary = os.openpty()
    with open(secondary, "w", encoding="utf-8") as terminal, open(primary, "rb"):
        monkeypatch.setattr(sys, "stdout", terminal)
        console = solver.cli.output.new_console()
        assert console.is_terminal and solver.cli.output.on_terminal(console) and console.width == 80


def test_tables_of_a_gpu_type_without_any_say_where_they_are(cli):
    assert cli("tables", "--gpu", "h100") == (2, "", (
        "solve tables: error: no tables for H100-80GB; tables exist for A100-80GB, H20-96GB; solve map --gpu h100 "
        "maps what the planner answers for it\n"))
    # The A800 reports the A100's memory: the planner takes the A100's tables as its own, and says so here.
    assert cli("tables", "--gpu", "a800") == (2, "", (
        "solve tables: error: no tables for A800-80GB, which plans with the A100-80GB's (the same memory); tables "
        "exist for A100-80GB, H20-96GB; solve map --gpu a800 maps what the planner answers for it\n"))
    assert cli("map", "--gpu", "h100", "--model", "4B", "--gpus-up-to", "2")[0] == 0  # as it says


def test_tables_without_the_model_or_count_asked_for_name_the_map_that_covers_it(cli):
    # The map's command keeps every filter given; its budgets stop at the most it maps (64 GPUs).
    assert cli("tables", "--gpu", "a100", "--gpus", "2", "--model", "30B-A3B") == (2, "", (
        "solve tables: error: no documented table of A100-80GB for 2 trainer GPUs has Qwen3-30B-A3B; documented "
        "models: Qwen3-0.6B, Qwen3-1.7B, Qwen3-4B, Qwen3-8B, Qwen3-14B; solve map --gpu a100 --model 30B-A3B "
        "--gpus-up-to 2 maps what the planner answers for it\n"))
    assert cli("tables", "--gpu", "h100", "--gpus", "100") == (2, "", (
        "solve tables: error: no tables for H100-80GB; tables exist for A100-80GB, H20-96GB; solve map --gpu h100 "
        "--gpus-up-to 64 maps what the planner answers up to 64 GPUs, the most it maps\n"))
    assert cli("map", "--gpu", "a100", "--model", "30B-A3B", "--gpus-up-to", "2")[0] == 0  # as it says


def test_tables_without_the_model_or_count_asked_name_the_tables_the_filters_leave(cli, tmp_path: Path):
    # Cells for 8 H100s with Qwen3-32B: the A100's tables have no table for 8 GPUs, nor one with Qwen3-32B, but
    # tables for 8 GPUs and Qwen3-32B are documented; and Qwen3-14B is, but not on the H100 or for 8 GPUs.
    cells = tmp_path / "h100.yaml"
    cells.write_text("gpu: H100-80GB\nmemory_gb: 80\nsource: mine\ntables:\n  - {gpus: 8, section: '8 x H100', "
                     "models: [Qwen3-32B], rows: [{max_model_len: 16384, cells: {Qwen3-32B: Env + SP=8}}]}\n",
                     encoding="utf-8")
    refusals = {
        ("--gpu", "a100", "--gpus", "8"): "no table of A100-80GB for 8 trainer GPUs; documented counts: 1, 2, 4, 6",
        ("--gpu", "a100", "--model", "32B"): ("no documented table of A100-80GB has Qwen3-32B; documented models: "
                                              "Qwen3-0.6B, Qwen3-1.7B, Qwen3-4B, Qwen3-8B, Qwen3-14B"),
        ("--gpus", "8", "--model", "14B"): "no documented table for 8 trainer GPUs has Qwen3-14B; documented models: "
                                           "Qwen3-32B"}
    for filters, refusal in refusals.items():
        status, out, err = cli("tables", "--cells", str(cells), *filters)
        assert (status, out) == (2, "") and err.startswith(f"solve tables: error: {refusal}; solve map "), filters


def test_the_map_a_tables_error_names_takes_the_cells_files_and_runs_as_written(cli, tmp_path: Path):
    # A GPU type of your own is known only with its --cells file: the map's command names it (quoted, as a shell
    # needs a folder with a space), and runs as it stands.
    cells = tmp_path / "my cells" / "zeta.yaml"
    cells.parent.mkdir()
    cells.write_text("gpu: Zeta-77GB\nmemory_gb: 77\nmemory_mib: 78000\nsource: made up\ntables:\n"
                     "  - {gpus: 8, section: '8 x Zeta', models: [Qwen3-8B], rows: [{max_model_len: 32768, "
                     "cells: {Qwen3-8B: SP=2}}]}\n", encoding="utf-8")
    status, out, err = cli("tables", "--cells", str(cells), "--gpu", "zeta-77gb", "--gpus", "3")
    assert (status, out) == (2, "") and err == (
        "solve tables: error: no table of Zeta-77GB for 3 trainer GPUs; documented counts: 8; solve map --gpu "
        f"zeta-77gb --gpus-up-to 3 --cells '{cells}' maps what the planner answers for it\n")
    command = shlex.split(err[err.index("solve map"):err.index(" maps what")])
    assert command[:2] == ["solve", "map"] and cli(*command[1:])[0] == 0  # as it says
    # A name given with a space is quoted too.
    assert cli("tables", "--gpu", "H100 80GB")[2].endswith(
        "; solve map --gpu 'H100 80GB' maps what the planner answers for it\n")


def test_cells_for_another_gpu_type_than_asked_or_a_near_name_get_a_note(cli, tmp_path: Path):
    # 'H10O' (a letter O for a zero) is no catalogue GPU type: its cells make one of their own, which --gpu h100
    # does not plan with but for their out-of-memory cells (80.0 GiB as sold, more than the H100's 79.6).
    cells = tmp_path / "g.yaml"
    cells.write_text("gpu: H10O\nmemory_gb: 80\nsource: x\ntables:\n  - gpus: 8\n    section: s\n    models: [8B]\n"
                     "    rows:\n      - {max_model_len: 65536, cells: {8B: SP=4}}\n", encoding="utf-8")
    status, out, err = cli("--cells", str(cells), "--gpu", "h100", "--model", "8B", "--len", "64k", "--gpus", "8")
    assert status == 0 and "\nevidence       estimated: the memory model's prediction (below; " in out and err == (
        f"solve: note: {cells}: H10O is not a GPU type of the catalogue, so its cells make one of their own (did you "
        "mean H100-80GB?)\n"
        f"solve: note: {cells}: its cells are for H10O (80.0 GiB), not for H100-80GB (79.6 GiB) or a GPU type of its "
        "driver-reported memory: only those that say a setting ran out of memory count here (it does with less memory "
        "too)\n")
    # Cells of a GPU type with less memory than asked are not used; with the same driver memory, they are.
    mine = Path(__file__).parent.parent / "docs" / "examples" / "my-cells.yaml"  # an H100's
    flags = ("--cells", str(mine), "--model", "8B", "--len", "64k", "--gpus", "8")
    assert cli(*flags, "--gpu", "a100-80g")[2].endswith(
        "or a GPU type of its driver-reported memory: they are not used here\n")
    assert cli(*flags, "--gpu", "h800")[2] == cli(*flags, "--gpu", "h100")[2] == ""
    # As much memory as asked, one as sold and one in GiB (80.0 both): as with more, their out-of-memory cells count.
    assert cli("--cells", str(cells), "--gpu", "mine", "--gpu-memory", "80GiB", "--model", "8B", "--len", "64k",
               "--gpus", "8")[2].endswith("not for mine (80.0 GiB) or a GPU type of its driver-reported memory: only "
                                          "those that say a setting ran out of memory count here (it does with less "
                                          "memory too)\n")
    assert "did you mean" not in cli("tables", "--cells", str(mine), "--check")[2]
    # Another card one character away is no typo (an RTX 3090 is not an RTX 4090), and --gpu naming the cells' own
    # GPU type says what was meant.
    other = tmp_path / "r.yaml"
    other.write_text(cells.read_text(encoding="utf-8").replace("H10O", "RTX-3090-24GB"), encoding="utf-8")
    assert "did you mean" not in cli("tables", "--cells", str(other), "--check")[2]
    assert "did you mean" not in cli("--cells", str(cells), "--gpu", "h10o", "--model", "8B", "--len", "64k",
                                     "--gpus", "8")[2]


@pytest.mark.parametrize(("name", "memory_gb", "meant"), [
    ("H880", 80, "H800-80GB"), ("H800-80GiB", 80, "H800-80GB"),  # a key struck twice, a memory size in GiB
    ("H880", 96, None),  # another card's memory: a GPU type of one's own
    ("RTX-3090-24GB", 24, None),  # another card, one digit away, with the RTX 4090's memory
])
def test_a_slip_in_a_cells_gpu_name_of_a_catalogue_gpus_memory_gets_a_guess(cli, tmp_path: Path, name: str,
                                                                            memory_gb: int, meant: str | None):
    # Not refused (a GPU type of one's own may be meant), but named: the cells make a GPU type of their own.
    cells = tmp_path / "g.yaml"
    cells.write_text(f"gpu: {name}\nmemory_gb: {memory_gb}\nsource: x\ntables:\n  - gpus: 8\n    section: s\n"
                     "    models: [8B]\n    rows:\n      - {max_model_len: 65536, cells: {8B: SP=4}}\n", encoding="utf-8")
    note = (f"solve tables: note: {cells}: {name} is not a GPU type of the catalogue, so its cells make one of their "
            f"own (did you mean {meant}?)\n")
    err = cli("tables", "--cells", str(cells), "--check")[2]
    assert err.startswith(note) if meant else "did you mean" not in err
    # The same GPU type given by --gpu NAME --gpu-memory SIZE gets the same guess, on stderr after the plan.
    status, out, err = cli("--gpu", name, "--gpu-memory", str(memory_gb), "--model", "0.6B", "--len", "8k", "--gpus", "1")
    note = (f"solve: note: --gpu {name} is not a GPU type of the catalogue, so --gpu-memory makes one of its own (did "
            f"you mean {meant}?)\n")
    assert (status, out.startswith(f"{name} · Qwen3-0.6B")) == (0, True)
    assert err.startswith(note) if meant else "did you mean" not in err


def test_a_slip_of_an_amd_cards_name_says_its_gpu_type_of_its_own_gets_no_rocm_caution(cli):
    # smalls92c: --gpu mi300 --gpu-memory 192 was told "did you mean MI300X?" and planned with no ROCm caution, with
    # no word that only --gpu-interconnect infinity-fabric states an AMD card, as it does for a GPU type of one's own.
    # smalls93: mi300 says AMD's, so it is an AMD card (below); m1300x, a slip that does not, gets the note
    given = ("--gpu", "m1300x", "--gpu-memory", "192", "--model", "0.6B", "--len", "8k", "--gpus", "1")
    status, out, err = cli(*given)
    assert (status, "ROCm" in out) == (0, False)
    assert err.startswith("solve: note: --gpu m1300x is not a GPU type of the catalogue, so --gpu-memory makes one of "
                          "its own (did you mean MI300X?), planned as a GPU of no stated vendor, with no ROCm caution: "
                          "for an AMD card give --gpu-interconnect infinity-fabric\n")
    status, out, err = cli(*given, "--gpu-interconnect", "infinity-fabric")
    assert (status, "ROCm" in out, "(did you mean MI300X?)\n" in err) == (0, True, True)
    status, out, err = cli("--gpu", "mi300", *given[2:])
    assert (status, "ROCm" in out, "(did you mean MI300X?)\n" in err) == (0, True, True)


@pytest.mark.parametrize("name", ["desk-4090", "a100-mine", "my4090", "a1oo"])
def test_a_gpu_name_of_ones_own_more_than_one_slip_from_a_catalogue_name_gets_no_guess(cli, tmp_path: Path,
                                                                                       name: str):
    # --gpu-memory describes a card of one's own: a name that holds a catalogue name (as the guide's desk-4090 does),
    # or two slips from one, is taken as meant; only one slip from a catalogue name (H880, above) is guessed at.
    status, _, err = cli("memory", "--gpu", name, "--gpu-memory", "80", "--model", "0.6B", "--gpus", "1", "--len", "4k")
    assert (status, err.count("\n")) == (0, 1) and err.startswith("solve memory: note: --gpu-memory 80GB is taken as ")
    # A cells file's GPU type of the same name gets no guess either (it was told RTX-4090-24GB for desk-4090), but the
    # note on its memory as sold.
    cells = tmp_path / "g.yaml"
    cells.write_text(f"gpu: {name}\nmemory_gb: 80\nsource: x\ntables:\n  - gpus: 8\n    section: s\n    models: [8B]\n"
                     "    rows:\n      - {max_model_len: 65536, cells: {8B: SP=4}}\n", encoding="utf-8")
    assert cli("tables", "--cells", str(cells), "--check")[2] == (
        f"solve tables: note: {cells}: {name}'s memory_gb 80 is taken as 80 GiB; a card reports less (an H100 80GB: "
        "81559 MiB, 79.6 GiB), so add its memory_mib (nvidia-smi's total) where you have it\n")


@pytest.mark.parametrize("name", ["Hl00", "HI00"])
def test_a_letter_l_or_i_for_a_one_in_a_cells_gpu_name_gets_a_guess(cli, tmp_path: Path, name: str):
    # 'Hl00' (a letter l for a one), or 'HI00' (a capital I), is no catalogue GPU type: its cells make one of their own.
    cells = tmp_path / "g.yaml"
    cells.write_text(f"gpu: {name}\nmemory_gb: 80\nsource: x\ntables:\n  - gpus: 8\n    section: s\n    models: [8B]\n"
                     "    rows:\n      - {max_model_len: 65536, cells: {8B: SP=4}}\n", encoding="utf-8")
    assert (f"solve: note: {cells}: {name} is not a GPU type of the catalogue, so its cells make one of their own (did "
            "you mean H100-80GB?)\n") in cli("--cells", str(cells), "--gpu", "h100", "--model", "8B", "--len", "64k",
                                             "--gpus", "8")[2]


def test_one_gpu_that_trains_where_two_need_more_is_no_contradiction(cli, tmp_path: Path):
    # A one-GPU table vouches for no other count (one GPU has no collective-communication buffers), so cells
    # where one L40S trains Qwen3-0.6B at 8192 as it is while two need Env agree with the semantics.
    cells = tmp_path / "l40s.yaml"
    cells.write_text("gpu: L40S-48GB\nmemory_gb: 48\nsource: made up\ntables:\n"
                     "  - {gpus: 1, section: 1 x L40S, models: [Qwen3-0.6B], rows: [{max_model_len: 8192, "
                     "cells: {Qwen3-0.6B: vanilla}}]}\n"
                     "  - {gpus: 2, section: 2 x L40S, models: [Qwen3-0.6B], rows: [{max_model_len: 8192, "
                     "cells: {Qwen3-0.6B: Env}}]}\n", encoding="utf-8")
    assert cli("tables", "--cells", str(cells), "--check") == (
        0, f"0 contradictions in 562 cells: 2 of {cells}'s, 560 of the shipped tables\n", "")
    status, out, err = cli("--model", "0.6B", "--gpu", "l40s", "--gpus", "2", "--exact", "--len", "8192",
                           "--cells", str(cells))
    assert (status, err) == (0, "")
    assert "evidence       documented: the L40S-48GB table for 2 GPUs of your cells (made up) says 'Env' at 8192" in out


def test_tables_for_more_gpus_than_plans_take_are_checked_too(cli, tmp_path: Path):
    # Plans take at most 64 GPUs, but more GPUs only shard the states further whatever the count: 'vanilla' on
    # 8 L40S and 'Env' on 128 at the same length contradict each other.
    cells = tmp_path / "l40s.yaml"
    cells.write_text("gpu: L40S-48GB\nmemory_gb: 48\nsource: made up\ntables:\n"
                     "  - {gpus: 8, section: 8 x L40S, models: [Qwen3-0.6B], rows: [{max_model_len: 8192, "
                     "cells: {Qwen3-0.6B: vanilla}}]}\n"
                     "  - {gpus: 128, section: 128 x L40S, models: [Qwen3-0.6B], rows: [{max_model_len: 8192, "
                     "cells: {Qwen3-0.6B: Env}}]}\n", encoding="utf-8")
    assert cli("tables", "--cells", str(cells), "--check") == (1, (
        "solve tables: warning: L40S-48GB, Qwen3-0.6B at 8192: vanilla trains on 8 GPUs but 128 GPUs need Env (more "
        f"GPUs only shard the states further)\n1 contradiction in 562 cells: 2 of {cells}'s, 560 of the shipped "
        "tables\n"), "")


@pytest.mark.parametrize(("source", "section", "message"), [
    ('"made \\e[31mup"', "1 x L40S",
     "line 3: source: must be printable text (no control characters), got 'made \\x1b[31mup'"),
    ("made up", '"1 x \\e[2J L40S"',
     "line 5: table gpus=1, section: must be printable text (no control characters), got '1 x \\x1b[2J L40S'"),
    ('"made\\tup"', "1 x L40S", "line 3: source: must be printable text (no control characters), got 'made\\tup'"),
], ids=["source", "section", "tab"])
def test_a_cells_file_with_control_characters_where_output_shows_its_words_is_refused(
        cli, tmp_path: Path, source: str, section: str, message: str):
    # A source or a table's heading is printed as it is (the line under each table): an escape sequence in it
    # would reach the terminal.
    cells = tmp_path / "l40s.yaml"
    cells.write_text(f"gpu: L40S-48GB\nmemory_gb: 48\nsource: {source}\ntables:\n  - {{gpus: 1, section: {section}, "
                     "models: [Qwen3-0.6B], rows: [{max_model_len: 8192, cells: {Qwen3-0.6B: vanilla}}]}\n",
                     encoding="utf-8")
    status, out, err = cli("tables", "--cells", str(cells), "--gpu", "l40s")
    assert (status, out, err) == (2, "", f"solve tables: error: --cells {cells}: {message}\n")


def test_cells_of_a_gpu_type_of_their_own_by_memory_as_sold_get_a_note(cli, tmp_path: Path):
    # memory_gb alone is taken as GiB, as --gpu-memory 80 is; with nvidia-smi's total (memory_mib), no note.
    cells = tmp_path / "own.yaml"
    text = ("gpu: Own-80GB\nmemory_gb: 80\nsource: made up\ntables:\n  - {gpus: 2, section: 2 x Own, "
            "models: [Qwen3-4B], rows: [{max_model_len: 8192, cells: {Qwen3-4B: vanilla}}]}\n")
    cells.write_text(text, encoding="utf-8")
    flags = ["--model", "4B", "--gpu", "own-80gb", "--gpus", "2", "--len", "8k", "--cells", str(cells)]
    note = (f"solve: note: {cells}: Own-80GB's memory_gb 80 is taken as 80 GiB; a card reports less (an H100 80GB: "
            "81559 MiB, 79.6 GiB), so add its memory_mib (nvidia-smi's total) where you have it\n")
    assert cli(*flags)[::2] == (0, note)
    cells.write_text(text.replace("memory_gb: 80\n", "memory_gb: 80\nmemory_mib: 81000\n"), encoding="utf-8")
    assert cli(*flags)[::2] == (0, "")


ANSI_CODE = re.compile(r"\x1b\[[0-9;]*m")
FORCED_COLOUR_VARIABLES = frozenset({"FORCE_COLOR", "TTY_COMPATIBLE", "COLUMNS", "NO_COLOR", "TERM"})
RICH_READS_TTY_COMPATIBLE = int(version("rich").split(".")[0]) >= 14
"""Whether rich colours a pipe for TTY_COMPATIBLE=1 (rich 14 and later; the lowest rich allowed, 13.7, does not)."""


def _piped(cli, monkeypatch: pytest.MonkeyPatch, command: list[str], forced: dict[str, str]) -> tuple[int, str, str]:
    """`cli` run with `command` in an empty working directory and an environment without the variables that force
    or stop colour but for `forced`: its stdout is no terminal, as a pipe is not."""
    with monkeypatch.context() as patch:
        for name in FORCED_COLOUR_VARIABLES:
            patch.delenv(name, raising=False)
        for name, value in forced.items():
            patch.setenv(name, value)
        return cli(*command)


@pytest.mark.parametrize("forced", [{"FORCE_COLOR": "1"}, {"TTY_COMPATIBLE": "1"},
                                    {"FORCE_COLOR": "1", "TERM": "dumb"}])
@pytest.mark.parametrize("command", [["tables", "--gpu", "a100-80g", "--gpus", "6"],
                                     ["--model", "4B", "--gpu", "h20", "--gpus", "4", "--len", "32k", "--top", "3"],
                                     ["map", "--gpu", "h20", "--gpus-up-to", "8"]])
def test_piped_output_keeps_its_width_where_the_environment_forces_colour(
        cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, forced: dict[str, str], command: list[str]):
    # CI sets FORCE_COLOR (or TTY_COMPATIBLE) for colour in its logs: rich then took a pipe for an 80-column
    # terminal, which cut the tables' cells ('vani…'), wrapped the plans' lines and said on stderr to pipe the
    # output. Colour as asked, but the layout is the pipe's: the same text as without the variable.
    monkeypatch.chdir(tmp_path)
    plain, coloured = (_piped(cli, monkeypatch, command, extra) for extra in ({}, forced))
    assert coloured[:1] + coloured[2:] == plain[:1] + plain[2:] == (0, "")
    assert (ANSI_CODE.search(coloured[1]) or forced.get("TERM") == "dumb"
            or "TTY_COMPATIBLE" in forced and not RICH_READS_TTY_COMPATIBLE)
    assert "\n".join(line.rstrip() for line in ANSI_CODE.sub("", coloured[1]).split("\n")) == plain[1]
    assert "…" not in plain[1]


def test_the_installed_command_lays_out_a_real_pipe_as_a_pipe_where_force_color_is_set(solve_script: Path,
                                                                                       tmp_path: Path):
    # The cases above in-process, through the console script with its stdout a pipe: the same text, in colour.
    plain_environment = {name: value for name, value in os.environ.items() if name not in FORCED_COLOUR_VARIABLES}
    plain, coloured = (subprocess.run([str(solve_script), "tables", "--gpu", "a100-80g", "--gpus", "6"],
                                      cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
                                      env={**plain_environment, **extra}) for extra in ({}, {"FORCE_COLOR": "1"}))
    assert (coloured.returncode, coloured.stderr) == (plain.returncode, plain.stderr) == (0, "")
    assert ANSI_CODE.search(coloured.stdout)
    assert "\n".join(line.rstrip() for line in ANSI_CODE.sub("", coloured.stdout).split("\n")) == plain.stdout
    assert "…" not in plain.stdout


def test_a_list_of_gpu_types_or_models_is_told_that_leaving_the_filter_out_shows_them_all(cli):
    # s91 (persona91b): --gpus 4,6 was told "without --gpus, the tables for every count", but --gpu h20,a100 (to
    # compare the two GPU types' tables) and --model 8B,14B only to ask for each in turn.
    assert cli("tables", "--gpu", "h20,a100", "--gpus", "4") == (2, "", (
        "solve tables: error: GPU 'h20,a100' lists 2 (H20-96GB, A100-80GB) where one is asked for: give one, and ask "
        "for each in turn; without --gpu, the tables for every GPU type\n"))
    assert cli("tables", "--model", "8B,14B") == (2, "", (
        "solve tables: error: model '8B,14B' lists 2 (Qwen3-8B, Qwen3-14B) where one is asked for: give one, and ask "
        "for each in turn; without --model, the tables for every model\n"))


def test_the_map_a_tables_error_names_for_a_catalogue_model_beside_a_model_config_runs(cli, tmp_path: Path):
    # --model of the catalogue's beside --model-config, whose model the cells name: map takes one model flag (it
    # refused the command that named both), and cells naming the model of your own it cannot read without it: the
    # command names --model alone and says which file it leaves out; it runs as it stands.
    cells = tmp_path / "mine.yaml"
    cells.write_text("gpu: H100\nmemory_gb: 80\nsource: mine\ntables:\n  - {gpus: 8, section: '8 x H100', "
                     "models: [Mistral-7B-v0.1, Qwen2.5-14B], rows: [{max_model_len: 32768, "
                     "cells: {Mistral-7B-v0.1: Env + SP=2, Qwen2.5-14B: SP=2}}]}\n", encoding="utf-8")
    mistral = Path(__file__).parent / "data" / "hf-configs" / "Mistral-7B-v0.1.json"
    status, out, err = cli("tables", "--model", "qwen2.5-14b", "--model-config", str(mistral), "--cells", str(cells),
                           "--gpu", "h100", "--gpus", "3")
    assert (status, out) == (2, "") and err == (
        "solve tables: error: no table of H100-80GB for 3 trainer GPUs; documented counts: 8; solve map --gpu h100 "
        f"--model qwen2.5-14b --gpus-up-to 3 (without {shlex.quote(str(cells))}, which names the model of "
        "--model-config: map plans one model) maps what the planner answers for it\n")
    assert cli(*shlex.split(err[err.index("solve map"):err.index(" (without")])[1:])[0] == 0


def test_the_map_a_tables_error_names_keeps_the_cells_that_read_without_the_model_config(cli, tmp_path: Path):
    # coverage92: beside the cells naming the model of --model-config, a file naming catalogue models alone reads
    # without it: the map command keeps that file, and leaves out the other.
    mine, ours = tmp_path / "mine.yaml", tmp_path / "ours.yaml"
    mine.write_text("gpu: H100\nmemory_gb: 80\nsource: mine\ntables:\n  - {gpus: 8, section: '8 x H100', "
                    "models: [Mistral-7B-v0.1, Qwen2.5-14B], rows: [{max_model_len: 32768, "
                    "cells: {Mistral-7B-v0.1: Env + SP=2, Qwen2.5-14B: SP=2}}]}\n", encoding="utf-8")
    ours.write_text("gpu: H100\nmemory_gb: 80\nsource: ours\ntables:\n  - {gpus: 4, section: '4 x H100', "
                    "models: [Qwen2.5-14B], rows: [{max_model_len: 16384, cells: {Qwen2.5-14B: SP=2}}]}\n",
                    encoding="utf-8")
    config = Path(__file__).parent / "data" / "hf-configs" / "Mistral-7B-v0.1.json"
    assert cli("tables", "--model", "qwen2.5-14b", "--model-config", str(config), "--cells", str(mine), "--cells",
               str(ours), "--gpu", "h100", "--gpus", "3") == (2, "", (
        "solve tables: error: no table of H100-80GB for 3 trainer GPUs; documented counts: 4, 8; solve map --gpu h100 "
        f"--model qwen2.5-14b --gpus-up-to 3 --cells {shlex.quote(str(ours))} (without {shlex.quote(str(mine))}, "
        "which names the model of --model-config: map plans one model) maps what the planner answers for it\n"))
