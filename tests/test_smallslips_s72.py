"""Small slips of earlier reviews (s72): the thin-headroom caution says the GiB its margin keeps, the fragmentation
range's words name bf16 logits, each metavar of a command means one thing, --no-help is told to leave itself out, a
name longer than any is refused before its guesses, and benchmarks/README.md says what verl does with the
temperature."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from test_cliwords2_s71 import _parsers

import solver
from solver.calibrate import PHYSICAL
from solver.results import BeyondCode, MarginRoom, thin_headroom
from solver.tables import QueryError, load_catalog
from solver.tables.bounds import MAX_NAME_CHARACTERS

Cli = Callable[..., tuple[int, str, str]]
ROOT = Path(__file__).parents[1]
BEYOND = (["8 GPUs (calibrated up to 6)"], [BeyondCode.MORE_GPUS])


@pytest.mark.parametrize(("room", "margin", "kept"), [
    # 30B-A3B on H100s: 1 GiB and its 1.5 GiB shortfall is 0.01 + 2.5 / 73.95, 0.0438, rounded up to 0.05, which
    # keeps 0.04 x 73.95 = 3.0 GiB (it said 2.5, the GiB asked for)
    (MarginRoom(0.01, 0.01, 73.95, 1.5), "0.05", "3.0"),
    # 1 GiB on an H200: 0.01 + 1 / 130.36 rounded up, 0.02, keeps 1.3 GiB (it said 1)
    (MarginRoom(0.01, 0.01, 130.36), "0.02", "1.3"),
    # a margin above the default given already: the one named still counts from the default
    (MarginRoom(0.015, 0.01, 130.36), "0.02", "1.3")])
def test_the_thin_caution_says_the_gib_its_margin_keeps_beyond_the_default(room: MarginRoom, margin: str, kept: str):
    caution = thin_headroom(0.1, *BEYOND[:1], 80.0, room, BEYOND[1])
    assert caution.endswith(f"--margin {margin} keeps {kept} GiB more to spare than the default 0.01 here, or "
                            "measure a step first")
    assert float(kept) == round((float(margin) - room.default) * room.usable_gib, 1)


def test_the_fragmentation_range_names_two_bf16_copies_of_the_logits():
    words = PHYSICAL["fragmentation"].words()
    assert words.startswith("at most 1: 4 bytes per logit, two bf16 copies of the logits (verl's are bf16)")
    assert "fp32" not in words


def test_no_metavar_of_a_command_stands_for_two_kinds_of_value():
    # --gpu G beside --node-gpus G, --model M beside --gpu-memory M: now --node-gpus N and --gpu-memory SIZE
    for prog, parser in _parsers().items():
        metavars = {action.option_strings[0]: action.metavar for action in parser._actions
                    if action.option_strings and action.metavar}
        assert metavars.get("--node-gpus") in (None, "N") and metavars.get("--gpu-memory") in (None, "SIZE")
        letters = [metavar for metavar in metavars.values() if len(metavar) == 1 and metavar != "N"]
        assert len(letters) == len(set(letters)), (prog, metavars)  # one letter, one meaning (N: any count)


@pytest.mark.parametrize("argv", [["--no-help"], ["memory", "--nohelp"], ["--no-version"]])
def test_no_help_is_told_to_leave_itself_out(cli: Cli, argv: list[str]):
    status, out, err = cli(*argv)
    wanted = re.sub(r"^--no-?", "--", argv[-1])
    assert (status, out) == (2, "")
    assert err.splitlines()[-1].endswith(f"{argv[-1]} (the default is without {wanted}: leave {argv[-1]} out)")


@pytest.mark.parametrize(("keyword", "kind"), [("model", "model"), ("gpu", "GPU")])
def test_a_name_longer_than_any_is_refused_at_once_naming_the_limit(keyword: str, kind: str):
    name = "a-" * 500_000  # a megabyte: its guesses took 4 to 7 s of CPU
    asked = {"model": "8B", "gpu": "h100", keyword: name}
    started = time.process_time()
    with pytest.raises(QueryError) as refused:
        solver.plan(asked["model"], gpu=asked["gpu"], budget_gpus=8, max_model_len=8192)
    assert time.process_time() - started < 0.5
    assert str(refused.value).endswith(f" is 1000000 characters long; a {kind} name is at most {MAX_NAME_CHARACTERS}")
    at_limit = "x" * MAX_NAME_CHARACTERS  # as long as a name may be: looked up, and unknown
    with pytest.raises(QueryError, match=f"^unknown {kind} "):
        (load_catalog().model if keyword == "model" else load_catalog().gpu)(at_limit)


def test_a_model_name_too_long_is_one_line_and_exit_2_in_the_command(cli: Cli):
    status, out, err = cli("--model", "q" * 5000, "--len", "8k")
    assert (status, out) == (2, "")
    assert err.startswith("solve: error: model 'qqq") and err.endswith(
        " is 5000 characters long; a model name is at most 4096\n") and err.count("\n") == 1


def test_benchmarks_readme_says_what_verl_does_with_the_temperature():
    words = " ".join((ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8").split())
    assert "the logits divided in place by the temperature" not in words
    assert ("the logits divided in place by a temperature of 1 (verl 0.9.1's FSDP engine leaves them as they are at 1 "
            "and divides into a new tensor at any other temperature, `_scale_logits_by_temperature`") in words
    assert "logits.div_(1.0)" in (ROOT / "benchmarks" / "gpu_step.py").read_text(encoding="utf-8")
