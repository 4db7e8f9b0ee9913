"""Where the count of the planner's questions cuts the jobs' ways short, the answer says the time limit that would
likely work them all out (`WaysLimit.covering_time_limit_s`, ``ways_time_limit_s``), the same on every run (helper
waysbudget, s72; the fleet of review-s72-persona34's item 1: tests/data/cluster-40-jobs.yaml)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from cluster_api import buy, place
from conftest import planner_answers_shared
from test_clusterbuy_s60 import fleet_file
from test_minnodes_s64 import _questions_per_second

import solver
from solver.cluster.options import Planner, WaysLimit, fleet_options
from solver.rules import COMMAND_OPTIONS
from solver.tables import BUY_WAYS_FACTOR, Fleet, Job, Pool, load_catalog, load_fleet, load_weights

CATALOG = load_catalog()
FORTY_JOBS = Path(__file__).resolve().parent / "data" / "cluster-40-jobs.yaml"
ONE_NODE = Pool(name="a", gpu="A100-80GB", nodes=1, gpus_per_node=8)
# Each of the three models asks 4 new questions of the one-node pool (test_mutants8_s65); "again" is the first's shape.
THREE_SHAPES = Fleet(pools=(ONE_NODE,), jobs=tuple(
    Job(name=name, model=model, max_model_len=8192)
    for name, model in (("first", "Qwen3-4B"), ("second", "Qwen3-8B"), ("third", "Qwen3-14B"), ("again", "Qwen3-4B"))))


def test_the_limit_counts_the_questions_asked_and_as_many_again_per_new_shape_left(monkeypatch: pytest.MonkeyPatch):
    # A count of 4 stops after the first job (4 questions); two shapes of the three jobs left are new ("again" is the
    # first's): 4 + 2 x 4 = 12 questions, each new shape's 4 raised by one part in the one shape asked (smallslips20,
    # s75: a floor where few were asked): 4 + 2 x 8 = 20, at 3 a second a count above them: 20 // 3 + 1 = 7 s.
    _questions_per_second(monkeypatch, 3)
    planner = Planner(CATALOG, load_weights(), "auto")
    ways = fleet_options(planner, THREE_SHAPES, WaysLimit(questions=4, deadline=math.inf))
    assert (ways.cut_short, planner.asked, ways.covering_time_limit_s) == ((1, 2, 3), 4, 7)
    # ... and 7 s works them all out: 12 questions ("again" asks none), under the count of 21.
    planner = Planner(CATALOG, load_weights(), "auto", time_limit_s=7)
    ways = fleet_options(planner, THREE_SHAPES, WaysLimit.of(planner, 0.0))
    assert (ways.cut_short, planner.asked, ways.covering_time_limit_s) == ((), 12, None)


def test_the_limit_counts_from_the_questions_asked_when_the_limit_began(monkeypatch: pytest.MonkeyPatch):
    # The planner had asked 4 questions (the first job's) before the limit began: its count starts there, and so do the
    # questions the estimate counts.
    _questions_per_second(monkeypatch, 3)
    planner = Planner(CATALOG, load_weights(), "auto")
    fleet_options(planner, THREE_SHAPES.model_copy(update={"jobs": THREE_SHAPES.jobs[:1]}))
    ways = fleet_options(planner, THREE_SHAPES, WaysLimit(questions=planner.asked + 4, deadline=math.inf,
                                                          since=planner.asked))
    # "first" asks nothing new, "second" 4, which reach the count: "third" and "again" are cut, one shape new. The
    # shapes asked, two, asked 4 questions: 4 + 4 / 2 raised by a half = 7, at 3 a second 7 // 3 + 1 = 3 s.
    assert (ways.cut_short, planner.asked, ways.covering_time_limit_s) == ((2, 3), 8, 3)


@pytest.mark.wall_clock  # the wall clock cuts the ways: a deadline already past
def test_where_the_wall_clock_cut_the_ways_no_limit_is_estimated():
    ways = fleet_options(Planner(CATALOG, load_weights(), "auto"), THREE_SHAPES, WaysLimit(questions=4, deadline=0.0))
    assert (ways.cut_short, ways.wall_clock_cut, ways.covering_time_limit_s) == ((0, 1, 2, 3), True, None)


def test_the_reviews_forty_jobs_cut_at_the_default_limit_are_worked_out_at_the_limit_it_names(
        monkeypatch: pytest.MonkeyPatch):
    # review-s72-persona34: 14 jobs cut short at the default 10 s (1012 questions of 1000 allowed), no limit named.
    # The estimate names 14 s; the fleet asks 1199 in all, under its 1400. The fleet names no Trinity release, so every
    # rank of a node loads the model at start-up (s84); with 0.5.1's loading (rank 0 alone for the untied 8B, 14B and
    # 32B) it asked 7 more either way, 1019 and 1206, cut and estimate the same.
    planner_answers_shared(monkeypatch)
    fleet = load_fleet(FORTY_JOBS, CATALOG)
    planner = Planner(CATALOG.for_fleet(fleet), load_weights(), "auto", time_limit_s=10)
    cut = fleet_options(planner, fleet, WaysLimit.of(planner, 0.0))
    assert (len(cut.cut_short), planner.asked, cut.covering_time_limit_s) == (14, 1012, 14)
    planner = Planner(CATALOG.for_fleet(fleet), load_weights(), "auto", time_limit_s=14)
    whole = fleet_options(planner, fleet, WaysLimit.of(planner, 0.0))
    assert (whole.cut_short, planner.asked, whole.covering_time_limit_s) == ((), 1199, None)


def test_the_command_names_the_limit_in_its_line_and_its_json(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    _questions_per_second(monkeypatch, 3)  # 1 s: a count of 3, past after the first job's 4 questions
    path = fleet_file(THREE_SHAPES.model_dump(exclude_defaults=True), tmp_path)
    status, out, err = cli("cluster", str(path), "--time-limit", "1")
    assert (status, err, " ".join(out.split()).split(" pool a: ")[0]) == (1, "", (
        "status: feasible; placed priority (of 4): 1, bound 1 on the jobs whose ways were worked out the time limit "
        "cut working out the jobs' ways short: second, third, again got none (the jobs of more priority are asked "
        "first), so the placement is not proven best (--time-limit 7 would likely work them all out)"))
    placed = json.loads(cli("cluster", str(path), "--time-limit", "1", "--json")[1])
    assert (placed["ways_cut_short"], placed["ways_time_limit_s"]) == (["second", "third", "again"], 7)
    placed = json.loads(cli("cluster", str(path), "--time-limit", "7", "--json")[1])
    assert (placed["ways_cut_short"], placed["ways_time_limit_s"]) == ([], None)
    # --buy counts twice as many (BUY_WAYS_FACTOR, s93): 6, past after the second job's; its limit at 6 a second
    bought = json.loads(cli("cluster", str(path), "--buy", "--time-limit", "1", "--json")[1])
    assert (bought["ways_cut_short"], bought["ways_time_limit_s"]) == (["third", "again"], 3)


def test_the_api_names_the_limit_in_its_words(tmp_path: Path):
    fleet = load_fleet(fleet_file({"pools": [ONE_NODE.model_dump()], "jobs": [THREE_SHAPES.jobs[0].model_dump(
        exclude_defaults=True)]}, tmp_path), CATALOG)
    cut = {"ways_cut_short": ("late",), "ways_time_limit_s": 14}
    placed = place(fleet, catalog=CATALOG, time_limit_s=5).model_copy(update=cut)
    bought = buy(fleet, catalog=CATALOG, time_limit_s=5).model_copy(update=cut)
    line = ("the time limit cut working out the jobs' ways short: late got none (the jobs of more priority are asked "
            "first), so {}")
    assert solver.cluster_text(placed, fleet, width=300).splitlines()[1] == line.format(
        "the placement is not proven best (time_limit_s=14 would likely work them all out)")
    assert solver.cluster_text(placed, fleet, width=300, option_names=COMMAND_OPTIONS).splitlines()[1] == line.format(
        "the placement is not proven best (--time-limit 14 would likely work them all out)")
    assert solver.cluster_text(bought, fleet, width=300).splitlines()[1] == line.format(
        "no purchase places them (time_limit_s=14 would likely work them all out)")


def test_buys_ways_count_twice_the_questions_and_name_their_limit_at_that_count(monkeypatch: pytest.MonkeyPatch):
    # cluster93 (s93): --buy asks every evidence tier (tests/data/cluster-40-jobs.yaml: 1452 questions, the placement
    # 1206), so 100 a second cut its ways at the default 10 s and the purchase a placement's note names ended unknown:
    # it counts BUY_WAYS_FACTOR times as many, and the limit it names for ways cut short counts at that rate too.
    _questions_per_second(monkeypatch, 3)
    planner = Planner(CATALOG, load_weights(), "auto", time_limit_s=2)
    assert WaysLimit.of(planner, 0.0, BUY_WAYS_FACTOR).questions == BUY_WAYS_FACTOR * 3 * 2 == 12
    ways = fleet_options(planner, THREE_SHAPES, WaysLimit(questions=4, deadline=math.inf, per_second=6))
    assert (ways.cut_short, planner.asked, ways.covering_time_limit_s) == ((1, 2, 3), 4, 20 // 6 + 1)
