"""Tidy of known findings (session 58): the pronoun for a count of things said in one helper (`it_or_them`)."""

from __future__ import annotations

import pytest

from solver.tables import it_or_them


@pytest.mark.parametrize(("count", "pronoun"), [(1, "it"), (2, "them"), (5, "them")])
def test_one_thing_is_it_and_more_are_them(count: int, pronoun: str):
    assert it_or_them(count) == pronoun
