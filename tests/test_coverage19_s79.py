"""Lines s79 changed that its tests and those of its changed functions did not run (coverage19, session 79): a best
plan on thin headroom whose second solve, at the margin its caution names, is left undecided by the time limit keeps
its answer as it was (no ``room_kept``, no ``more room`` row), rather than saying no plan keeps that room; a Qwen3-MoE
config.json whose ``mlp_only_layers`` is no list of layer indices is refused, a false or a 0 too (read as none before;
transformers' ``layer_idx not in config.mlp_only_layers`` fails on them)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_ropecheck_s79 import _qwen3_moe
from test_smallslips7_s68 import _row
from test_smallslips31_s79 import AT_32K, MORE_ROOM

from solver.tables import TableError

Cli = Callable[..., tuple[int, str, str]]


@pytest.mark.parametrize(("status", "row"), [("unknown", None), ("feasible", MORE_ROOM)])
def test_room_kept_is_said_where_its_solve_found_a_plan(cli: Cli, answers_left_open: Callable[..., None], status: str,
                                                        row: str | None) -> None:
    # The second solve (at --margin 0.04, top 1) left open by the time limit: undecided, no plan found, said as "leaves
    # no plan" it would claim what was never decided, so the view stays as without the question (test_mutants38_s79
    # asserts the API's room_kept); a plan found but unproven is said as a proven one is.
    answers_left_open(lambda query: query.margin == 0.04, status)
    status_code, out, _ = cli(*AT_32K)
    assert status_code == 0 and "0.4 GiB to spare" in " ".join(out.split())
    if row is None:
        assert "more room" not in out and "--margin 0.04" in " ".join(out.split())  # the caution's own words alone
    else:
        assert _row(out, "more room") == row


@pytest.mark.parametrize(("value", "shown"), [("0, 47", "'0, 47'"), ([0, True], "[0, true]"), ([0, 1.0], "[0, 1.0]"),
                                              (False, "false"), (0, "0"), ({}, "{}")])
def test_a_qwen3_moes_mlp_only_layers_that_are_no_list_of_indices_are_refused(tmp_path: Path, value: Any,
                                                                              shown: str) -> None:
    with pytest.raises(TableError) as refused:
        _qwen3_moe(tmp_path, mlp_only_layers=value)
    assert str(refused.value) == (f"{tmp_path / 'config.json'}: mlp_only_layers: expected a list of layer indices, got "
                                  f"{shown}")


def test_a_qwen3_moes_null_or_empty_mlp_only_layers_make_no_layer_dense(tmp_path: Path) -> None:
    for value in (None, []):
        moe = _qwen3_moe(tmp_path, mlp_only_layers=value).moe
        assert moe is not None and (moe.dense_layers, moe.dense_intermediate_size) == (0, 0)


@pytest.mark.parametrize("step", [0, True, 2.0])
def test_a_qwen3_moes_decoder_sparse_step_below_1_or_not_whole_is_refused(tmp_path: Path, step: Any) -> None:
    # transformers' (layer_idx + 1) % 0 fails; a bool or a float is refused as every whole number a config gives is
    with pytest.raises(TableError, match=r"config\.json: decoder_sparse_step: expected a whole number from 1 to "
                                         rf"\d+, got {str(step).lower()}$"):
        _qwen3_moe(tmp_path, decoder_sparse_step=step)
