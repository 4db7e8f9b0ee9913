"""A `Fleet` changed with pydantic's `model_copy(update=...)` (the way to change a frozen model, which checks nothing)
is checked again by `solver.place` and `solver.buy_nodes`, as one built anew: a scheduler adding a job that repeats a
name, or naming a pool the fleet lacks, gets the one-line `QueryError`, not a job placed twice or lost unsaid."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest

import solver

FLEET = Path(__file__).resolve().parent.parent / "docs" / "examples" / "fleet.yaml"


def _changed(**update: Any) -> solver.Fleet:
    """The example fleet with `update` applied by `model_copy`, its first job's fields by ``first``."""
    fleet = solver.load_fleet(FLEET)
    first = fleet.jobs[0].model_copy(update=update.pop("first", {}))
    return fleet.model_copy(update={"jobs": (first, *fleet.jobs[1:]), **update})


@pytest.mark.parametrize(("fleet", "said"), [
    (_changed(jobs=(*solver.load_fleet(FLEET).jobs, solver.load_fleet(FLEET).jobs[0])),
     "fleet: two jobs are named 'math-4b', jobs items 1 and 5: rename one"),
    (_changed(first={"pool": "a10O"}), ("fleet: job math-4b, pool: no pool named 'a10O' (did you mean a100? pools: "
                                        "a100, h20)")),
    (_changed(first={"priority": -3}), ("fleet: job math-4b, priority: must be a whole number from 1 to 1000000, "
                                        "got -3 (a weight: the placement places the most total priority)")),
    (_changed(first={"max_model_len": 5.5}), ("fleet: job math-4b, max_model_len: must be a whole number, got 5.5 "
                                              "(tokens, or thousands of 1024: 32768 or 32k)")),
    (_changed(jobs=()), "fleet: jobs: must list at least 1, got []"),
], ids=["job-twice", "no-such-pool", "priority", "length", "no-jobs"])
@pytest.mark.parametrize("call", [solver.place, solver.buy_nodes], ids=["place", "buy_nodes"])
def test_a_fleet_changed_in_code_is_checked_again(fleet: solver.Fleet, said: str, call: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # pydantic's serializer warnings on the wrong types: none, as the API warns not
        with pytest.raises(solver.QueryError) as refused:
            call(fleet, time_limit_s=5)
    assert str(refused.value) == said


def test_a_fleet_changed_in_code_that_holds_is_placed_as_one_built_anew() -> None:
    changed = _changed(first={"priority": 2})
    built = solver.Fleet.model_validate(changed.model_dump())
    assert solver.place(changed, time_limit_s=5) == solver.place(built, time_limit_s=5)
