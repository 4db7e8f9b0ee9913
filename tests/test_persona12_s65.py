"""Persona12 (s65): what three users' first hour with the docs found (tests that failed before each fix)."""
import json
from pathlib import Path

import pytest
import yaml

from solver.cli import _COMMANDS, _command, main

A100_NODE = {"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}


def test_the_buy_note_beside_placed_jobs_not_required_names_them_too(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]):
    # r (required) and p are placed, c is left out (5 GPUs at the fewest each, 8 on the node). Naming c alone with
    # --required made --buy place r and c on the node as it is and leave p out: "nothing to buy", c still not beside p.
    jobs = [{"name": "r", "model": "Qwen3-4B", "max_model_len": 8192, "rollout_gpus": 4, "required": True},
            {"name": "p", "model": "Qwen3-0.6B", "max_model_len": 4096, "rollout_gpus": 1, "priority": 3},
            {"name": "c", "model": "Qwen3-4B", "max_model_len": 8192, "rollout_gpus": 4}]
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump({"pools": [A100_NODE], "jobs": jobs}), encoding="utf-8")
    assert main(["cluster", str(path)]) == 1
    assert capsys.readouterr().err == (
        f"solve cluster: note: to place the jobs left out too: solve cluster {path} --buy --required p,c names the "
        "fewest GPUs, then nodes, to add to the pools (and the jobs no number of nodes runs)\n")
    assert main(["cluster", str(path), "--buy", "--required", "p,c"]) == 0
    assert capsys.readouterr().out.startswith(  # s81: with the figure behind the bound
        "status: optimal; to place every job, buy 8 GPUs (1 node), proven the fewest (at their fewest they take 12 "
        "GPUs, 4 more than the fleet's 8; the other 4 bought\n")


def test_json_md_names_every_command_that_prints_json():
    # docs/json.md, "for programs", named five commands' --json; solve tables --json was left out.
    intro = (Path(__file__).parent.parent / "docs" / "json.md").read_text(encoding="utf-8").split("\n## ")[0]
    with_json = [name for name, names in _COMMANDS.items()
                 if any("--json" in action.option_strings for action in _command(names)[0]()._actions)]
    assert with_json == ["tables", "cluster", "calibrate", "memory", "map"]
    assert [name for name in with_json if f"`solve {name} --json`" not in intro] == []
    assert "`solve --json`" in intro


FLEET12 = """\
pools:
  - name: a100
    gpu: A100-80GB
    nodes: 2
    gpus_per_node: 8
    host_ram_gb: 1024
  - name: h20
    gpu: H20-96GB
    nodes: 1
    gpus_per_node: 8
  - name: h100
    gpu: H100-80GB
    nodes: 2
    gpus_per_node: 8
    host_ram_gb: 2048
jobs:
  - {name: math-4b, model: Qwen3-4B, max_model_len: 32768, rollout_gpus: 2, priority: 3, pool: a100}
  - {name: code-8b, model: Qwen3-8B, max_model_len: {at_least: 32768}, rollout_gpus: 2, train_batch_size: 256}
  - {name: chat-14b, model: Qwen3-14B, max_model_len: 65536, rollout_gpus: 4, priority: 2}
  - {name: probe-0.6b, model: Qwen3-0.6B, max_model_len: 8192, rollout_gpus: 1}
  - {name: agent-8b, model: Qwen3-8B, max_model_len: 64k, rollout_gpus: 4, required: true}
  - {name: long-4b, model: Qwen3-4B, max_model_len: {at_least: 65536, at_most: 131072}, rollout_gpus: 2}
  - {name: tool-1.7b, model: Qwen3-1.7B, max_model_len: 16k, rollout_gpus: 1, priority: 2}
  - {name: big-32b, model: Qwen3-32B, max_model_len: 32k, rollout_gpus: 8, pool: h100}
  - {name: moe-30b, model: Qwen3-30B-A3B, max_model_len: 32768, rollout_gpus: 4}
  - {name: rm-4b, model: Qwen3-4B, max_model_len: 16384, rollout_gpus: 0, priority: 1}
  - {name: summ-8b, model: Qwen3-8B, max_model_len: 40960, rollout_gpus: 2, train_batch_size: 96}
  - {name: llama-8b, model: Llama-3.1-8B, max_model_len: 65536, rollout_gpus: 2}
"""
"""Twelve jobs on three pools, one of them required (agent-8b): the capacity planner's file."""


def test_the_buy_note_names_the_jobs_whose_ways_the_time_limit_cut_short(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]):
    # 12 jobs on 3 pools, agent-8b required: --time-limit 2 leaves the last jobs' ways unasked. The note's --buy
    # must require them too, or it may leave them out of the purchase.
    path = tmp_path / "fleet12.yaml"
    path.write_text(FLEET12, encoding="utf-8")
    assert main(["cluster", str(path), "--time-limit", "2", "--json"]) == 1
    cut = json.loads(capsys.readouterr().out)["ways_cut_short"]
    assert cut  # at most 200 questions in 2 s: the 12 jobs' ways need more
    assert main(["cluster", str(path), "--time-limit", "2"]) == 1
    note = capsys.readouterr().err.splitlines()[-1]
    # 11 names, every job but the file's own required agent-8b: --required all (s81; before, JOBS named 4 of them);
    # the run's --time-limit carried (4c203a2b)
    assert " --buy --required all --time-limit 2 names " in note
    assert note.endswith("(and the jobs no number of nodes runs)")
    assert "agent-8b" not in cut


def test_the_synopsis_shows_required_beside_a_placement_not_only_under_buy(tmp_path: Path,
                                                                           capsys: pytest.CaptureFixture[str]):
    # planner.md's synopsis nested it, "--buy [--required JOB[,JOB...]]"; a plain placement takes it as well.
    block = (Path(__file__).parent.parent / "docs" / "planner.md").read_text(encoding="utf-8").split(
        "## Command line\n\n```\n")[1].split("```")[0]
    cluster = block.split("solve cluster ")[1].split("\nsolve ")[0]
    assert "[--minimize nodes | --buy] [--required JOB[,JOB...]]" in cluster
    path = tmp_path / "fleet.yaml"
    path.write_text(FLEET12, encoding="utf-8")
    assert main(["cluster", str(path), "--minimize", "nodes", "--required", "rm-4b", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["required"] == ["agent-8b", "rm-4b"]
