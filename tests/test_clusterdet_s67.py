"""`solve cluster`'s steps after the search end on counts, the same on every run (s67): the smaller asks of the jobs
left out within `HINTS_QUESTIONS_PER_SECOND` new planner questions per second of the time limit, then the reasons
asked after the search within `REASONS_QUESTIONS_PER_SECOND`, the wall clock only their safety net; what a count
leaves unasked, the answer says, and the same file gives the same JSON."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import planner_answers_shared
from test_clusterbuy_s60 import fleet_file

import solver.cluster.reasons


@pytest.fixture(autouse=True)
def _planner_answers_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test here shares the planners' answers with the others of its process (`planner_answers_shared`)."""
    planner_answers_shared(monkeypatch)


FLEET = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8},
                   {"name": "pair", "gpu": "H20-96GB", "nodes": 1, "gpus_per_node": 2}],
         "jobs": [{"name": "j1", "model": "Qwen3-14B", "max_model_len": 98304, "priority": 3},
                  *({"name": f"j{i}", "model": "Qwen3-14B", "max_model_len": length}
                    for i, length in ((2, 90112), (3, 81920), (4, 73728), (5, 65536)))]}
"""j1 takes the A100 node; j2 to j5 (four shapes) are left out for room, and each reason after the search asks the
planner why pair's two H20s have no way for it (three questions a shape); each one's smaller asks find that a shorter
length fits pair's idle GPUs (two questions a job)."""

NOT_ASKED = "no way to run in pair (why was not worked out within the time limit; raise --time-limit)"
PAIR_WORDS = ("pair: {} tokens is beyond what the tables and the memory model's estimates allow for Qwen3-14B on "
              "H20-96GB")
HINT = "at 51200 tokens (not {}) it would fit in node 0's 2 idle GPUs in pair (a trainer of 2 GPUs)"
HINT_NOT_ASKED = ("whether a shorter length would fit it in the idle room was not worked out within the time limit "
                  "(raise --time-limit)")
LENGTHS = {"j2": 90112, "j3": 81920, "j4": 73728, "j5": 65536}


def _unplaced(out: str) -> dict[str, dict]:
    result = json.loads(out)
    assert (result["status"], result["wall_clock_stopped"]) == ("optimal", [])  # the counts, not the wall clock
    assert [placement["job"] for placement in result["placements"]] == ["j1"]
    return {job["job"]: job for job in result["unplaced"]}


def test_the_reasons_count_asks_the_shapes_it_reaches_and_says_so_of_the_others(
        cli: Callable[..., tuple[int, str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # 5 questions (as at --time-limit 1, here at 10 s, so that each explained question keeps its own 10 s on a busy
    # machine): j2's shape asks 3, j3's 3 more (the count is looked at before each shape), j4's and j5's are not
    # asked. The smaller asks (200 questions) are all asked.
    monkeypatch.setattr(solver.cluster.reasons, "REASONS_QUESTIONS_PER_SECOND", 0.5)
    path = str(fleet_file(FLEET, tmp_path))
    status, out, err = cli("cluster", path, "--json")
    assert (status, err) == (1, "")
    unplaced = _unplaced(out)
    for name, length in LENGTHS.items():
        reason = unplaced[name]["reason"]
        asked = name in ("j2", "j3")
        assert (PAIR_WORDS.format(length) in reason, f"; {NOT_ASKED};" in reason) == (asked, not asked), name
        assert [pool["pool"] for pool in unplaced[name]["pools"]] == (["a100", "pair"] if asked else ["a100"])
        assert reason.endswith(f"; {HINT.format(length)}")
    assert cli("cluster", path, "--json")[1] == out  # the same file, the same answer


def test_the_smaller_asks_count_asks_the_jobs_it_reaches_and_says_so_of_the_others(
        cli: Callable[..., tuple[int, str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # 3 questions: j2's asks take 2 and find its hint; j3's first takes the third, then the count stops it: no hint
    # for j3 to j5, and their reasons say so. The reasons keep their own count (50 questions: all asked).
    monkeypatch.setattr(solver.cluster.reasons, "HINTS_QUESTIONS_PER_SECOND", 0.3)
    path = str(fleet_file(FLEET, tmp_path))
    out = cli("cluster", path, "--json")[1]
    unplaced = _unplaced(out)
    assert unplaced["j2"]["reason"].endswith(f"; {HINT.format(90112)}")
    assert [fits["max_model_len"] for fits in unplaced["j2"]["fits_with"]] == [51200]
    for name in ("j3", "j4", "j5"):
        assert unplaced[name]["reason"].endswith(f"(estimated); {HINT_NOT_ASKED}")
        assert PAIR_WORDS.format(LENGTHS[name]) in unplaced[name]["reason"]
    assert [name for name, job in unplaced.items() if job["fits_with"]] == ["j2"]
    assert unplaced["j3"]["reason_for_several"].endswith(  # for the text's row of several jobs given it
        "; whether a shorter length would fit one of them in the idle room was not worked out within the time limit "
        "(raise --time-limit)")
    assert cli("cluster", path, "--json")[1] == out


def test_the_same_file_gives_the_same_json_in_a_process_of_another_hash_seed(
        cli: Callable[..., tuple[int, str, str]], solve_script: Path, tmp_path: Path):
    # Sets and dicts of strings iterate in another order under another hash seed (this process's is drawn at random):
    # none of that reaches the answer. The process of its own keeps the real wall clock, far from binding here.
    path = str(fleet_file(FLEET, tmp_path))
    run = subprocess.run([str(solve_script), "cluster", path, "--json"], capture_output=True, text=True, timeout=120,
                         check=False, env={**os.environ, "PYTHONHASHSEED": "1"})
    assert (run.returncode, run.stderr) == (1, "")
    assert run.stdout == cli("cluster", path, "--json")[1]
    unplaced = _unplaced(run.stdout)
    assert all(PAIR_WORDS.format(length) in unplaced[name]["reason"] for name, length in LENGTHS.items())


def test_a_count_reached_between_a_jobs_lengths_and_their_fit_leaves_its_hint_unasked(
        cli: Callable[..., tuple[int, str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # 2 questions: j2's longest lengths on pair's one and two GPUs take both, so the count stops it before it asks
    # whether the shorter length fits the idle GPUs (the one hint the other count finds): no job gets a hint, and
    # each reason says what was left unasked.
    monkeypatch.setattr(solver.cluster.reasons, "HINTS_QUESTIONS_PER_SECOND", 0.2)
    out = cli("cluster", str(fleet_file(FLEET, tmp_path)), "--json")[1]
    unplaced = _unplaced(out)
    for name, length in LENGTHS.items():
        assert unplaced[name]["reason"].endswith(f"(estimated); {HINT_NOT_ASKED}"), name
        assert PAIR_WORDS.format(length) in unplaced[name]["reason"]
        assert unplaced[name]["fits_with"] == []
