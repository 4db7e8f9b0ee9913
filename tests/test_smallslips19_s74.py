"""Small slips a session's reviews left, mended: the API refuses an empty GPU or model name in the command's words,
naming its keyword; a job's name says it takes ASCII letters only (a pool's takes any); ..."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import solver
from solver.tables import QueryError

Cli = Callable[..., tuple[int, str, str]]


@pytest.mark.parametrize(("call", "message"), [
    (lambda: solver.plan("4B", gpu="", max_model_len=4096),
     "an empty name in gpu='': give a GPU type, or several in a list (gpu=['a100', 'h100'])"),
    (lambda: solver.plan("4B", gpu="a100,", max_model_len=4096),
     "an empty name in gpu='a100,': give a GPU type, or several in a list (gpu=['a100', 'h100'])"),
    (lambda: solver.plan("4B", gpu=["a100", " "], max_model_len=4096),
     "an empty name in gpu=['a100', ' ']: give a GPU type, or several in a list (gpu=['a100', 'h100'])"),
    (lambda: solver.plan("", gpu="a100", max_model_len=4096), "an empty name in model='': give a model (model='4B')"),
    (lambda: solver.estimate_memory("4B", "", 8, 4096), "an empty name in gpu='': give a GPU type (gpu='a100')"),
    (lambda: solver.memory_answer(" ", "a100", 8, 4096), "an empty name in model=' ': give a model (model='4B')"),
    (lambda: solver.map_plans(["4B", ""], gpus_up_to=8),
     "an empty name in model=['4B', '']: give a model, or several in a list (model=['4B', '8B'])"),
    (lambda: solver.map_plans("4B", gpu="", gpus_up_to=8),
     "an empty name in gpu='': give a GPU type, or several in a list (gpu=['a100', 'h100'])"),
])
def test_the_api_refuses_an_empty_name_in_the_commands_words(call: Callable[[], object], message: str):
    with pytest.raises(QueryError) as refused:
        call()
    assert str(refused.value) == message


def test_the_command_says_the_same_words_without_a_keyword(cli: Cli):
    status, out, err = cli("memory", "--gpu", "", "--model", "4B", "--gpus", "8", "--max-model-len", "4096")
    assert (status, out, err.splitlines()[-1]) == (
        2, "", "solve memory: error: argument --gpu: an empty name in '': give a GPU type (a100)")


CLUSTER = """pools:
  - {{name: {pool}, gpu: a100, nodes: 1, gpus_per_node: 8}}
jobs:
  - {{name: {job}, model: 4B, max_model_len: 4096}}
"""


def test_a_job_name_takes_ascii_letters_and_says_so(cli: Cli, tmp_path: Path):
    path = tmp_path / "c.yaml"
    path.write_text(CLUSTER.format(pool="a100", job="数学-工作"), encoding="utf-8")
    status, out, err = cli("cluster", str(path))
    assert (status, out, err) == (2, "", (
        f"solve cluster: error: {path}: job 数学-工作, name: must be ASCII letters and digits (A-Z, a-z, 0-9), '.', "
        "'_' and '-', starting with a letter or digit, got '数学-工作'\n"))


def test_a_pool_name_takes_any_letters(cli: Cli, tmp_path: Path):
    path = tmp_path / "c.yaml"
    path.write_text(CLUSTER.format(pool="ä100", job="math"), encoding="utf-8")
    status, out, err = cli("cluster", str(path), "--json")
    assert (status, json.loads(out)["placements"][0]["pool"]) == (0, "ä100")


@pytest.mark.parametrize(("host_ram", "echoed"), [("256", 256), ("256.5", 256.5)])
def test_solve_and_map_echo_the_host_memory_alike(cli: Cli, host_ram: str, echoed: float):
    asked = ("--model", "4B", "--gpu", "a100", "--host-ram", host_ram, "--json")
    status, out, _ = cli(*asked, "--len", "4096")
    answer_text = out
    map_status, map_out, _ = cli("map", *asked, "--gpus-up-to", "2")
    assert (status, map_status) == (0, 0)
    assert f'"host_ram_gb": {echoed},' in answer_text and f'"host_ram_gb": {echoed},' in map_out
    assert json.loads(answer_text)[0]["host_ram_gb"] == json.loads(map_out)[0]["host_ram_gb"] == echoed


def test_the_note_on_the_input_comes_before_the_one_on_the_file_not_written(cli: Cli, tmp_path: Path):
    target = tmp_path / "p2.yaml"
    status, out, err = cli("--model", "4B", "--gpu", "a100", "--len", "2000k", "--out", str(target))
    assert (status, err.splitlines()[0], err.splitlines()[-1]) == (
        1, ("solve: note: --gpu 'a100' is taken as A100-80GB; nodes of A100-40GB need that name (the memory decides "
            "the plans)"), f"solve: note: no plan, so {target} is not written")
    assert not target.exists()


def test_dash_is_refused_naming_dev_stdin(cli: Cli):
    status, _, err = cli("cluster", "-")
    assert (status, err.splitlines()[-1]) == (2, (
        "solve cluster: error: argument FILE.yaml: expected a file name, got '-' (rft-solver reads named files: give "
        "/dev/stdin for standard input)"))


@pytest.mark.skipif(not Path("/dev/stdin").exists(), reason="no /dev/stdin on this system")
@pytest.mark.parametrize("command", [["cluster", "/dev/stdin"], ["--from-config", "/dev/stdin", "--gpu", "h100"]])
def test_dev_stdin_reads_standard_input(tmp_path: Path, command: list[str]):
    given = (CLUSTER.format(pool="a100", job="math") if command[0] == "cluster"
             else "model: {model_path: Qwen/Qwen3-4B, max_model_len: 4096}\ncluster: {node_num: 1, gpu_per_node: 8}\n")
    ran = subprocess.run([sys.executable, "-m", "solver", *command, "--json"], input=given, cwd=tmp_path,
                         capture_output=True, text=True, timeout=120, check=False)
    assert ran.returncode == 0, ran.stderr
    read = json.loads(ran.stdout)
    assert (read["placements"][0]["job"] if command[0] == "cluster" else read[0]["model"]) == (
        "math" if command[0] == "cluster" else "Qwen3-4B")
