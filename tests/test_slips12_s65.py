"""Slips12 (s65): four slips a user review found (persona12), each a test that failed before its fix."""
from pathlib import Path

import pytest
import yaml

from solver.tables import meant_fleet_name

A100_NODE = {"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}


MINIMIZE_GPUS = "did you mean --minimize gpus (the fewest trainer GPUs for --len)?"
MAXIMIZE_LEN = "did you mean --maximize len (the longest context within --gpus or --total-gpus)?"


@pytest.mark.parametrize(("argv", "message"), [
    (["--maximize", "gpus", "--len", "32k"],
     f"solve: error: argument --maximize: invalid choice: 'gpus' (choose from 'len'); {MINIMIZE_GPUS}"),
    (["--maximize", "gpu", "--len", "32k"],
     f"solve: error: argument --maximize: invalid choice: 'gpu' (choose from 'len'); {MINIMIZE_GPUS}"),
    (["--minimize", "len", "--gpus", "4"],
     f"solve: error: argument --minimize: invalid choice: 'len' (choose from 'gpus', 'gpu-hours'); {MAXIMIZE_LEN}"),
    (["--minimize", "length", "--gpus", "4"],
     f"solve: error: argument --minimize: invalid choice: 'length' (choose from 'gpus', 'gpu-hours'); {MAXIMIZE_LEN}"),
    # A slip within the option's own choices still gets that choice.
    (["--maximize", "length", "--gpus", "4"],
     "solve: error: argument --maximize: invalid choice: 'length' (choose from 'len'); did you mean 'len'?"),
])
def test_the_other_goal_is_named(cli, argv: list[str], message: str):
    # --maximize gpus and --minimize len were refused with the choices alone, not the goal the user likely meant.
    status, out, err = cli("--model", "4B", *argv)
    assert (status, out) == (2, "")
    assert err.splitlines() == ["usage: solve [options] (--help lists them)", message]


@pytest.mark.parametrize(("argv", "message"), [
    (["--model", "4B", "--env", "--no-env"],
     "solve: error: --env and --no-env contradict each other: give one of them"),
    (["--model", "4B", "--no-offload", "--len", "8k", "--offload"],
     "solve: error: --no-offload and --offload contradict each other: give one of them"),
    (["--model", "4B", "--estimate", "--no-estimate"],
     "solve: error: --estimate and --no-estimate contradict each other: give one of them"),
    (["memory", "--model", "4B", "--no-env", "--env"],
     "solve memory: error: --no-env and --env contradict each other: give one of them"),
    (["map", "--model", "4B", "--no-estimate", "--estimate"],
     "solve map: error: --no-estimate and --estimate contradict each other: give one of them"),
    (["cluster", "fleet.yaml", "--estimate", "--no-estimate"],
     "solve cluster: error: --estimate and --no-estimate contradict each other: give one of them"),
    # The same half twice is a repeat, as an option with a value given twice is.
    (["--model", "4B", "--env", "--env"], "solve: error: argument --env/--no-env: given twice: give it once"),
])
def test_both_halves_of_an_on_off_pair_contradict(cli, argv: list[str], message: str):
    # --env --no-env was "given twice: give it once" (and --estimate --no-estimate argparse's "not allowed with"):
    # the user asked for two opposite things, not one thing twice.
    status, out, err = cli(*argv)
    assert (status, out) == (2, "")
    assert err.splitlines()[1:] == [message]


def test_a_required_name_a_slip_from_a_job_gets_a_guess(cli, tmp_path: Path):
    # --required agent8b got no "did you mean agent-8b": only names that differ in case or zeros got a guess.
    jobs = [{"name": name, "model": "Qwen3-4B", "max_model_len": 8192} for name in ("math-4b", "agent-8b", "job-1")]
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump({"pools": [A100_NODE], "jobs": jobs}), encoding="utf-8")
    assert cli("cluster", str(path), "--required", "agent8b") == (2, "", (
        "solve cluster: error: --required 'agent8b': no job of the fleet is named so; did you mean agent-8b? its "
        "jobs: math-4b, agent-8b, job-1; or all, for every job\n"))
    assert cli("cluster", str(path), "--required", "math-4b,matj-4b")[2].endswith(
        "did you mean math-4b? its jobs: math-4b, agent-8b, job-1; or all, for every job\n")
    # Another number is another job, not a slip: no guess.
    assert cli("cluster", str(path), "--required", "job-2")[2] == (
        "solve cluster: error: --required 'job-2': no job of the fleet is named so; its jobs: math-4b, agent-8b, "
        "job-1; or all, for every job\n")


@pytest.mark.parametrize(("wanted", "names", "meant"), [
    ("agent8b", ["math-4b", "agent-8b"], "agent-8b"),
    ("a-100", ["a100", "h20"], "a100"),
    ("h100", ["a100"], None),  # another GPU's pool
    ("math-6b", ["math-4b", "math-8b"], None),
    ("codes-8b", ["code-8b", "codex-8b"], None),  # as near the one as the other
])
def test_meant_fleet_name_by_closeness(wanted: str, names: list[str], meant: str | None):
    assert meant_fleet_name(wanted, names) == meant
