"""Review of s81's later merges (helper review81c): with no release named, a ``model.rope_scaling`` without its own
``rope_theta`` beside a ``model.rope_theta`` said Trinity 0.5.0's and 0.5.2's trainers "fail alike on transformers 5",
while under ``--trinity-version 0.5`` the same config is told nothing, as ``model.rope_theta`` mends theirs (0.5.2's
``trainer/verl/fsdp_workers.py:364-365`` sets the attribute that transformers 5.3.0's ``standardize_rope_params``
fills the mapping's base from): the no-release line now says what the 0.5 line says, either way. And ``solve
cluster``'s note naming ``--buy --required JOBS`` said "JOBS (every job but ): ..." where it names every job, one of
them named ``all`` (so ``--required all`` would name that job alone): now "JOBS (every job): ...". And a
``--required`` name of no job named the jobs but not ``all``, which it takes too (``ALL``: "did you mean all?")."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from solver.tables import load_catalog
from solver.trinity import trinity_config_problems

Cli = Callable[..., tuple[int, str, str]]
SIX = ("model.rope_scaling has no rope_theta: Trinity 0.6's trainer on verl before 0.8 sets it as Qwen3-1.7B's RoPE "
       "parameters, in which transformers 5 finds no base, and fails as it builds the model (a TypeError, "
       "modeling_rope_utils.py:446 in 5.12.1, :488 in 5.25.0) unless model.rope_theta is set and transformers is "
       "5.12.1")
TAIL = (", and 0.5's transformers 4 builds it; add rope_theta: 1000000 to it (as solver.trinity.patch_trinity_config "
        "does; harmless on transformers 4)")


def _theta_words(theta: bool, version: str | None) -> list[tuple[str, str]]:
    """The ``rope-theta-missing*`` lines on a Qwen3-1.7B YaRN mapping without its base (``model.rope_theta`` set where
    `theta`), under `version`."""
    config: dict[str, Any] = {"mode": "train", "model": {
        "model_path": "Qwen/Qwen3-1.7B", "max_model_len": 65536,
        "rope_scaling": {"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 32768},
        **({"rope_theta": 1000000} if theta else {})}}
    problems = trinity_config_problems(config, load_catalog().model("1.7B"), 8,
                                       version=version)  # type: ignore[arg-type]
    return [(problem.code.value, problem.words) for problem in problems
            if problem.code.value.startswith("rope-theta-missing")]


def test_with_no_release_the_05_part_says_what_the_05_line_says() -> None:
    assert _theta_words(False, None) == [("rope-theta-missing", (
        f"{SIX}; Trinity 0.5.0's and 0.5.2's fail alike on transformers 5 unless model.rope_theta is set{TAIL}"))]
    assert _theta_words(True, None) == [("rope-theta-missing", (
        f"{SIX} (the model.rope_theta given mends it there); Trinity 0.5.0's and 0.5.2's build it on transformers 5 "
        f"with the model.rope_theta given{TAIL}"))]


@pytest.mark.parametrize("theta", [False, True])
def test_the_05_line_and_06_refusal_stand_beside_it(theta: bool) -> None:
    # under 0.5 model.rope_theta mends it: nothing said, as the no-release line now says; 0.6 refuses either way
    assert [code for code, _ in _theta_words(theta, "0.5")] == ([] if theta else ["rope-theta-missing"])
    assert [code for code, _ in _theta_words(theta, "0.6")] == ["rope-theta-missing-refused"]


FIVE_JOBS = "pools:\n  - {name: a100, gpu: A100-80GB, nodes: 1, gpus_per_node: 8}\njobs:\n" + "".join(
    f"  - {{name: {name}, model: Qwen3-8B, max_model_len: 32768, rollout_gpus: 2}}\n" for name in ("{}", *"bcde"))
"""Five jobs that one node of 8 A100s cannot place together, the first named as `FIVE_JOBS.format` names it."""


NOTE_TAIL = "names the fewest GPUs, then nodes, to add to the pools (and the jobs no number of nodes runs)"


@pytest.mark.parametrize(("first", "required"), [("all", f" {NOTE_TAIL}"), ("a", f" {NOTE_TAIL}")])
def test_the_buy_note_on_every_job_required_by_name(cli: Cli, tmp_path: Path, first: str, required: str) -> None:
    # Every job required by name, on a file that marks none: --buy alone buys for them all, the same purchase
    # (smallslips46, s84; "--required all", or JOBS naming them with a job named all, before).
    fleet = tmp_path / "five.yaml"
    fleet.write_text(FIVE_JOBS.replace("{}", first), encoding="utf-8")
    status, _, err = cli("cluster", str(fleet), "--required", f"{first},b,c,d,e", "--time-limit", "5")
    assert status == 1
    assert err.splitlines()[-1] == (f"solve cluster: note: to place the required jobs: solve cluster {fleet} --buy"
                                    f" --time-limit 5{required}")


NO_JOB = "--required 'ALL': no job of the fleet is named so; did you mean all? its jobs:"


@pytest.mark.parametrize(("first", "error"), [
    ("a", f"{NO_JOB} a, b, c, d and 1 more job; or all, for every job"),
    ("all", f"{NO_JOB} all, b, c, d and 1 more job")])  # the job named all: the word names it alone
def test_a_required_name_of_no_job_names_all_too(cli: Cli, tmp_path: Path, first: str, error: str) -> None:
    fleet = tmp_path / "five.yaml"
    fleet.write_text(FIVE_JOBS.replace("{}", first), encoding="utf-8")
    assert cli("cluster", str(fleet), "--required", "ALL") == (2, "", f"solve cluster: error: {error}\n")
