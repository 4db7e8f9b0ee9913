"""Session 65, slips11: slips review s65 persona11 found. A plan line's nodes are the whole job's, not the rollout's;
an option taking a file given none says so; ``solve examples`` refuses a folder not made yet named like a file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import solver
from solver.api import answer_query

Cli = Callable[..., tuple[int, str, str]]
CATALOG = solver.load_catalog()
EIGHT_B = ("--model", "8B", "--len", "32k", "--gpu", "h100", "--exact")


def test_the_plan_line_says_the_nodes_hold_trainer_and_rollout_together(cli: Cli) -> None:
    status, out, _ = cli("--len", "128k", "--total-gpus", "16", "--rollout-gpus", "8", "--model", "14B",
                         "--gpu", "h100")
    assert status == 0 and out.splitlines()[1] == (
        "plan           Env + Offload + SP=8 on 8 of 8 GPUs, with 8 rollout GPUs, trainer and rollout on 2 nodes of 8")
    assert "rollout GPUs on 2 nodes" not in out


def test_the_rollout_asked_is_named_by_its_option_in_the_commands_and_the_apis_words(cli: Cli) -> None:
    status, out, _ = cli(*EIGHT_B, "--gpus", "16", "--rollout-gpus", "4")
    assert status == 0 and (
        "on 16 of 16 GPUs, with 8 rollout GPUs, trainer and rollout on 3 nodes of 8 (--rollout-gpus 4 asked: a "
        "trainer on whole nodes leaves the rollout whole nodes)") in " ".join(out.split())
    query = solver.make_query(CATALOG, model="8B", gpu="h100", max_model_len=32768, exact=True, budget_gpus=16,
                              rollout_gpus=4)
    text = solver.answers_text(answer_query(query, CATALOG), query, CATALOG, width=200)
    assert ", trainer and rollout on 3 nodes of 8 (rollout_gpus=4 asked: a trainer on whole nodes" in text


@pytest.mark.parametrize(("argv", "said"), [
    (["--from-config", "moe.yaml", "--write"], "solve: error: argument --write: expected a file name (--write FILE)"),
    (["--write", "--check"], "solve: error: argument --write: expected a file name (--write FILE)"),
    (["--model", "8B", "--out"], "solve: error: argument --out: expected a file name (--out FILE)"),
    (["--cells"], "solve: error: argument --cells: expected a file name (--cells FILE)"),
    (["--model-config"], "solve: error: argument --model-config: expected a file or folder name (--model-config PATH)"),
    (["cluster", "fleet.yaml", "--emit-dir"],
     "solve cluster: error: argument --emit-dir: expected a folder name (--emit-dir DIR)"),
    (["map", "--svg"], "solve map: error: argument --svg: expected a file name (--svg FILE)"),
    (["calibrate", "--cells", "c.yaml", "--out"],
     "solve calibrate: error: argument --out: expected a file name (--out FILE)"),
    (["memory", "--memory-model"],
     "solve memory: error: argument --memory-model: expected a file name (--memory-model FILE)"),
    (["--emit"], "solve: error: argument --emit: expected one argument (choose from 'trinity')"),  # as before
    (["--gpus"], "solve: error: argument --gpus: expected one argument"),  # a count: as before
])
def test_an_option_taking_a_file_given_none_says_it_expects_a_file(cli: Cli, argv: list[str], said: str) -> None:
    status, out, err = cli(*argv)
    assert (status, out, err.splitlines()[1:]) == (2, "", [said])


@pytest.mark.parametrize("named", ["x.yaml", "x.JSON", "sub/cells.yml"])
def test_examples_refuses_a_folder_not_made_yet_named_like_a_file(cli: Cli, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch, named: str) -> None:
    monkeypatch.chdir(tmp_path)
    status, out, err = cli("examples", named)
    assert (status, out) == (2, "") and err == (
        f"solve examples: error: {named}: named like a file, and DIR is the folder to write all the examples into: "
        "name a folder (made if missing; default docs/examples), or make this one first\n")
    assert list(tmp_path.iterdir()) == []  # nothing made


def test_examples_writes_in_a_folder_named_like_a_file_made_first(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "x.yaml").mkdir()
    status, out, err = cli("examples", str(tmp_path / "x.yaml"))
    assert (status, err) == (0, "") and (tmp_path / "x.yaml" / "fleet.yaml").is_file() and "wrote " in out
