"""`buy_nodes`' status proves the purchase: a widening question that runs out of time after the purchase is found
leaves it ``optimal``, as `place`'s widening leaves its placement's status (the count is taken before widening)."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
import yaml
from cluster_api import buy
from test_clusterbuy_s60 import FOUR_JOBS

from solver.tables import load_catalog, load_fleet

CATALOG = load_catalog()
buy_module = importlib.import_module("solver.cluster.buy")  # `solver.cluster.buy` the name is the function


def _purchase(tmp_path: Path):
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(FOUR_JOBS), encoding="utf-8")
    return buy(load_fleet(path, CATALOG), catalog=CATALOG, time_limit_s=60, seed=0)


def test_a_widening_question_left_undecided_keeps_the_purchase_optimal(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch):
    grow = buy_module.grown_placements

    def grown_with_an_undecided_question(planner, *args, **kwargs):
        grown = grow(planner, *args, **kwargs)
        planner.undecided_keys.add(("a widening question", "that ran out of time"))
        return grown

    monkeypatch.setattr(buy_module, "grown_placements", grown_with_an_undecided_question)
    result = _purchase(tmp_path)
    assert (result.status, result.gpus, result.nodes, result.bound) == ("optimal", 16, 2, 16)
    assert result.undecided_ways == 0


def test_without_the_patch_the_same_purchase_is_optimal(tmp_path: Path):
    result = _purchase(tmp_path)
    assert (result.status, result.gpus, result.nodes, result.undecided_ways) == ("optimal", 16, 2, 0)
