"""Fuzzing, bounded to stay fast: random command lines and mutated or random input files never crash.
`benchmarks/fuzz.py` runs the same targets for longer."""

from __future__ import annotations

import pytest
from fuzz_targets import TARGETS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.mark.parametrize("target", TARGETS)
@FAST
@given(data=st.data())
def test_the_target_keeps_the_contract(target: str, data: st.DataObject, tmp_path_factory):
    # Command lines end with 0, 1 or 2 (2: one line, no traceback); files load or are refused in one line.
    strategy, check = TARGETS[target]
    check(data.draw(strategy), tmp_path_factory.mktemp("input"))
