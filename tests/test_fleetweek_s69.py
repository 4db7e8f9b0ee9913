"""A platform team's week on a shared fleet (session 69, persona26): the `--buy` command the note on stderr gives
where `--required` names jobs on the command line, run as the note gives it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

Cli = Callable[..., tuple[int, str, str]]

FIVE_GPU_JOBS = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}], "jobs": [
    {"name": name, "model": "Qwen3-4B", "max_model_len": 8192, "rollout_gpus": 4} for name in ("a", "b", "c")]}
"""Three jobs of 5 GPUs at the fewest on one node of 8 (one fits), none marked required in the file."""

TAIL = " names the fewest GPUs, then nodes, to add to the pools (and the jobs no number of nodes runs)\n"


def _fleet(tmp_path: Path) -> Path:
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(FIVE_GPU_JOBS), encoding="utf-8")
    return path


def _purchase(cli: Cli, path: Path, *flags: str) -> tuple[int, list[tuple[str, int]]]:
    """The exit status of `solve cluster PATH --buy FLAGS --json` and its GPUs bought per pool."""
    status, out, _ = cli("cluster", str(path), "--buy", *flags, "--json")
    return status, [(pool["pool"], pool["gpus_bought"]) for pool in json.loads(out)["pools"]]


def test_required_jobs_that_do_not_fit_get_a_buy_command_for_them_alone(cli: Cli, tmp_path: Path):
    # a and b, required on the command line, take 10 GPUs at their fewest, more than the node's 8. The note's command
    # dropped --required (`--buy` alone), which buys for c too: 16 GPUs where 8 place the required jobs.
    path = _fleet(tmp_path)
    status, out, err = cli("cluster", str(path), "--required", "a,b")
    assert (status, out.splitlines()[0]) == (1, "status: infeasible")
    assert err == f"solve cluster: note: to place the required jobs: solve cluster {path} --buy --required a,b{TAIL}"
    assert _purchase(cli, path, "--required", "a,b") == (0, [("a100", 8)])
    assert _purchase(cli, path) == (0, [("a100", 16)])


@pytest.mark.parametrize("flags", [(), ("--minimize", "nodes")], ids=["placement", "minimize-nodes"])
def test_a_buy_note_that_would_name_every_job_gives_buy_alone(cli: Cli, tmp_path: Path, flags: tuple[str, ...]):
    # The file marks no job required, and nodes place each: --required naming every one (a,b,c: thirty names in a
    # team's fleet) asks for the purchase --buy alone gives.
    path = _fleet(tmp_path)
    status, _, err = cli("cluster", str(path), "--required", "a", *flags)
    goal = "to place every job" if flags else "to place the jobs left out too"
    assert (status, err) == (1, f"solve cluster: note: {goal}: solve cluster {path} --buy{TAIL}")
    assert _purchase(cli, path) == _purchase(cli, path, "--required", "a,b,c") == (0, [("a100", 16)])


def test_a_job_whose_reason_was_left_unasked_is_not_told_no_number_of_nodes_runs_it(cli: Cli, tmp_path: Path):
    # Qwen3-14B at 262144 tokens with 4 rollout GPUs has no way on a node of 8 H20s; more nodes, with --token-budget
    # auto, give it one. At 0.05 s its reason is not asked, so its pools are unknown: the note said "no number of
    # nodes trains its max_model_len in any pool it may use" (all() of no pools), which 0.1 s refutes.
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump({"pools": [{"name": "h20", "gpu": "H20-96GB", "nodes": 1, "gpus_per_node": 8}],
                                    "jobs": [{"name": "huge", "model": "Qwen3-14B", "max_model_len": 262144,
                                              "rollout_gpus": 4}]}), encoding="utf-8")
    status, out, err = cli("cluster", str(path), "--time-limit", "0.05")
    assert (status, err) == (1, "")
    assert "│ huge │ no way to run in any pool it may use (why was not worked out within the time limit" in out
    status, _, err = cli("cluster", str(path), "--time-limit", "0.1")
    assert status == 1 and err == (
        "solve cluster: note: huge: no way to run on the pools' nodes as they are, but more nodes may give it a way to "
        f"run (with --token-budget auto): solve cluster {path} --buy --token-budget auto --time-limit 0.1{TAIL}")
