"""A comment's number and its unit on one line (review s66, helper smallfix): `comment_paragraph`, which wraps the
comments of ``--emit trinity``, ``--out`` and ``--write``, never ends a line with ``128`` and starts the next with
``GiB``; it wraps as before elsewhere, and the words are the same."""
from __future__ import annotations

import pytest

from solver.trinity.plan_keys import COMMENT_WIDTH, comment_paragraph

FILLER = "x" * (COMMENT_WIDTH - 2 - len(" 128"))  # "<filler> 128" fills the first line to the width, to the character


@pytest.mark.parametrize("unit", ["GiB", "GB", "MiB", "TB", "GPU", "GPUs", "token", "tokens", "node", "nodes", "s"])
def test_a_number_goes_to_the_next_line_with_its_unit(unit: str):
    words = f"{FILLER} 128 {unit} more"
    assert comment_paragraph(words, 0) == [FILLER, f"128 {unit} more"]
    # a decimal number too, indented (4 columns: "<filler> 82.8" fills the line), with a hanging indent further on
    indented = FILLER[5:]
    assert comment_paragraph(f"{indented} 82.8 {unit} on each", 4, hanging="  ") == [indented, f"  82.8 {unit} on each"]


def test_without_a_unit_the_number_stays_on_its_line():
    assert comment_paragraph(f"{FILLER} 128 GiBs more", 0) == [f"{FILLER} 128", "GiBs more"]
    assert comment_paragraph(f"{FILLER} 128 and more", 0) == [f"{FILLER} 128", "and more"]


def test_a_short_comment_is_one_line_with_its_spaces_as_written():
    assert comment_paragraph("Env on 8 GPUs: 128 GiB, 131072 tokens, 2 nodes, 30 s", 10) == [
        "Env on 8 GPUs: 128 GiB, 131072 tokens, 2 nodes, 30 s"]
