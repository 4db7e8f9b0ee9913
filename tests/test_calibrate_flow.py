"""A user's calibration on their own hardware, as docs/memory.md walks it: mistakes in the cells file that get a note
(a row off the 1024-token grid), and the fitted model used in ``solve``."""

from __future__ import annotations

from pathlib import Path

import pytest

OFF_GRID_CELLS = (  # 8 H100s, the middle row typed as 65000 where 65536 (64k) was measured
    "gpu: H100-80GB\nmemory_gb: 80\nsource: mine\ntables:\n"
    "  - gpus: 8\n    section: 8 x H100\n    models: [Qwen3-8B]\n    rows:\n"
    "      - {max_model_len: 32768, cells: {Qwen3-8B: SP=2}}\n"
    "      - {max_model_len: 65000, cells: {Qwen3-8B: SP=4}}\n"
    "      - {max_model_len: 131072, cells: {Qwen3-8B: SP=8}}\n")
"""Cells of yours with one row off the grid."""


@pytest.mark.parametrize("command", [("calibrate",), ("--model", "8B", "--gpu", "h100", "--gpus", "8", "--len", "64k"),
                                     ("tables", "--gpu", "h100", "--gpus", "8")])
def test_a_row_off_the_grid_gets_a_note_on_every_command_that_reads_the_cells(cli, tmp_path: Path,
                                                                              command: tuple[str, ...]):
    # 65000 is no multiple of 1024: the row speaks for no 64k, which falls to the 131072 row (SP=8, not the SP=4 the
    # user measured there): a typo that a note names. On the grid (65536) there is no note, and the row decides.
    cells = tmp_path / "mine.yaml"
    cells.write_text(OFF_GRID_CELLS, encoding="utf-8")
    prog = "solve" if command[0].startswith("--") else f"solve {command[0]}"
    status, out, err = cli(*command, "--cells", str(cells))
    note = (f"{prog}: note: {cells}: table gpus=8, row max_model_len=65000 is not a multiple of 1024 tokens: a row "
            "speaks for its length and the shorter ones down to the row before, so not for 65536 (64k) above it; check "
            "the row for a typo\n")
    assert status == 0 and err.endswith(note) and err.count("note:") == 1
    if prog == "solve":
        assert "plan           SP=8 on 8 of 8 GPUs" in out
    cells.write_text(OFF_GRID_CELLS.replace("65000", "65536"), encoding="utf-8")
    status, out, err = cli(*command, "--cells", str(cells))
    assert status == 0 and "not a multiple" not in err
    if prog == "solve":
        assert "plan           SP=4 on 8 of 8 GPUs" in out


def test_rows_off_the_grid_are_counted_after_the_first(cli, tmp_path: Path):
    cells = tmp_path / "mine.yaml"
    cells.write_text(OFF_GRID_CELLS.replace("32768", "32000").replace("131072", "131000"), encoding="utf-8")
    status, _, err = cli("calibrate", "--cells", str(cells))
    assert status == 0 and (f"solve calibrate: note: {cells}: table gpus=8, row max_model_len=32000 (and 2 more rows) "
                            "is not a multiple of 1024 tokens: a row speaks for its length and the shorter ones down to "
                            "the row before, so not for 32768 (32k) above it") in err
