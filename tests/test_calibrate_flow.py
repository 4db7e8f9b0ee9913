"""A user's calibration on their own hardware, as docs/memory.md walks it: mistakes in the cells file that get a note
(a row off the 1024-token grid), and the fitted model used in ``solve``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from solver.tables import load_memory_model

OFF_GRID_CELLS = (  # 8 H100s, the middle row typed as 65000 where 65536 (64k) was measured
    "gpu: H100-80GB\nmemory_gb: 80\nsource: mine\ntables:\n"
    "  - gpus: 8\n    section: 8 x H100\n    models: [Qwen3-8B]\n    rows:\n"
    "      - {max_model_len: 32768, cells: {Qwen3-8B: SP=2}}\n"
    "      - {max_model_len: 65000, cells: {Qwen3-8B: SP=4}}\n"
    "      - {max_model_len: 131072, cells: {Qwen3-8B: SP=8}}\n")
"""Cells of yours with one row off the grid."""
EIGHT_GPU_CELLS = OFF_GRID_CELLS.replace("65000", "65536")
"""Cells of yours of 8 H100s alone, every setting that trained with SP."""
H100_FLEET = ("pools:\n  - {name: h100, gpu: H100-80GB, nodes: 1, gpus_per_node: 8}\n"
              "jobs:\n  - {name: small, model: Qwen3-8B, max_model_len: 8192, rollout_gpus: 6}\n")
"""A node of 8 H100s and one job whose trainer the rollout leaves 2 of them: an estimate (no table has 2 H100s)."""


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
    assert status == 0 and (f"solve calibrate: note: {cells}: table gpus=8, row max_model_len=32000 (and 2 more "
                            "rows) is not a multiple of 1024 tokens: a row speaks for its length and the shorter "
                            "ones down to the row before, so not for 32768 (32k) above it") in err


def test_a_fit_on_cells_of_8_gpus_says_an_estimate_on_2_or_without_sp_lies_beyond_it(cli, tmp_path: Path):
    cells, fitted = tmp_path / "mine.yaml", tmp_path / "mine-model.yaml"
    cells.write_text(EIGHT_GPU_CELLS, encoding="utf-8")
    assert cli("calibrate", "--cells", str(cells), "--out", str(fitted))[0] == 0
    spans = load_memory_model(fitted).fit.range
    assert spans is not None and (spans.fewest_gpus, spans.most_gpus, spans.fit_without_sp) == (8, 8, False)

    def codes(gpus: str, length: str, *pins: str) -> tuple[list[str], list[str]]:
        status, out, _ = cli("--model", "8B", "--gpu", "h100", "--gpus", gpus, "--exact", "--estimate", "--len",
                             length, *pins, "--memory-model", str(fitted), "--json")
        assert status == 0
        (plan,) = json.loads(out)[0]["plans"]
        return plan["beyond_calibration_codes"], plan["beyond_calibration"]

    # On the 8 GPUs and with the SP the cells measured, the estimate is within them; on 2, or at SP=1, it is not.
    assert codes("8", "32768", "--sp", "2") == ([], [])
    assert codes("2", "32768", "--sp", "2") == (["fewer-gpus"], ["2 GPUs (calibrated from 8)"])
    assert codes("1", "8192", "--offload") == (
        ["fewer-gpus", "without-sp"], ["1 GPU (calibrated from 8)", "SP=1 (calibrated on fits with SP only)"])
    status, out, _ = cli("--model", "8B", "--gpu", "h100", "--gpus", "2", "--len", "8192",
                         "--memory-model", str(fitted))
    said = "beyond its calibration: 2 GPUs (calibrated from 8), SP=1 (calibrated on fits with SP only)"
    assert status == 0 and said in " ".join(out.split())


def test_the_map_and_the_cluster_name_the_memory_model_of_your_own(cli, tmp_path: Path):
    cells, fitted, fleet = tmp_path / "mine.yaml", tmp_path / "mine-model.yaml", tmp_path / "fleet.yaml"
    cells.write_text(EIGHT_GPU_CELLS, encoding="utf-8")
    fleet.write_text(H100_FLEET, encoding="utf-8")
    assert cli("calibrate", "--cells", str(cells), "--out", str(fitted))[0] == 0
    mapped = ("map", "--gpu", "h100", "--model", "8B", "--gpus-up-to", "2")
    # The map's title and the line under the cluster's status name it, as solve's memory line does; their JSON too.
    status, out, _ = cli(*mapped, "--memory-model", str(fitted))
    assert status == 0 and out.splitlines()[0] == (
        "H100-80GB: longest context per model and GPU budget, memory model: calibrated on mine.yaml")
    status, out, _ = cli(*mapped, "--memory-model", str(fitted), "--json")
    (gpu_map,) = json.loads(out)
    assert status == 0 and gpu_map["memory_model_source"] == "calibrated on mine.yaml"
    status, out, _ = cli("cluster", str(fleet), "--memory-model", str(fitted))
    assert status == 0 and out.splitlines()[1] == "memory model: calibrated on mine.yaml"
    status, out, _ = cli("cluster", str(fleet), "--memory-model", str(fitted), "--json")
    placed = json.loads(out)
    assert status == 0 and placed["memory_model_source"] == "calibrated on mine.yaml"
    assert placed["placements"][0]["plan"]["beyond_calibration_codes"] == ["fewer-gpus", "without-sp"]
    # The shipped memory model goes unnamed: the map's JSON leaves the key out, the cluster's gives null.
    status, out, _ = cli(*mapped)
    assert status == 0 and "memory model:" not in out
    status, out, _ = cli(*mapped, "--json")
    assert status == 0 and "memory_model_source" not in json.loads(out)[0]
    status, out, _ = cli("cluster", str(fleet))
    assert status == 0 and "memory model:" not in out
    status, out, _ = cli("cluster", str(fleet), "--json")
    assert status == 0 and json.loads(out)["memory_model_source"] is None


def test_cells_that_record_no_setting_running_out_of_memory_get_a_note(cli, tmp_path: Path):
    # persona91c: a file of cells that all trained as they are (vanilla) says nothing of where memory runs out, which
    # only the fit's counts (0 negatives) showed; cells that record one (SP=2 at the longest: vanilla and Env ran out there)
    # get none.
    cells = tmp_path / "mine.yaml"
    cells.write_text(EIGHT_GPU_CELLS.replace("SP=2", "vanilla").replace("SP=4", "vanilla").replace("SP=8", "vanilla"),
                     encoding="utf-8")
    note = ("solve calibrate: note: none of your cells says a setting ran out of memory (each is vanilla, the first "
            "setting tried, or one outside the order cells are read in): they bound the memory a run takes from above "
            "alone, so nothing in them raises an estimate; add a length where a setting ran out (the cell of the one "
            "that trained next, or '-'), or fit with the documented ones too (--with-tables)\n")
    status, out, err = cli("calibrate", "--cells", str(cells), "--json")
    printed = json.loads(out)
    assert (status, printed["memory_model"]["fit"]["negatives"]) == (0, 0) and err.startswith(note)
    # calib91: the logits off 1 are the physical floor per token's, not the cells' (the text said the fit moved
    # them); and what the shipped fit has otherwise, from what to what.
    assert printed["at_token_floor"] == ["logits"] and "logits" not in printed["first_principles"]
    assert "sp_buffers 6.46 to 1" in printed["from_shipped"] and printed["from_shipped"][-1] == "usable_env 0.928 to 0.9"
    cells.write_text(EIGHT_GPU_CELLS.replace("SP=2", "vanilla").replace("SP=4", "vanilla").replace("SP=8", "SP=2"),
                     encoding="utf-8")
    status, _, err = cli("calibrate", "--cells", str(cells))
    assert status == 0 and "ran out of memory" not in err


def test_cells_that_contradict_the_documented_tables_are_not_offered_to_plan_with(cli, tmp_path: Path):
    # persona91c: A800 cells (the A100's memory, whose tables speak for it) that contradict the A100's table for 6
    # GPUs fitted without a word, and the command printed to plan with the fit gave --cells, which solve refuses.
    cells, fitted = tmp_path / "a800.yaml", tmp_path / "fit.yaml"
    cells.write_text("gpu: A800-80GB\nmemory_gb: 80\nsource: mine\ntables:\n  - gpus: 4\n    section: 4 x A800\n"
                     "    models: [Qwen3-8B]\n    rows:\n      - {max_model_len: 32768, cells: {Qwen3-8B: Env}}\n",
                     encoding="utf-8")
    status, out, err = cli("calibrate", "--cells", str(cells), "--out", str(fitted))
    assert status == 0 and err.startswith(
        "solve calibrate: warning: your cells contradict the documented tables (5 contradictions), and planning with "
        "them as tables (--cells) refuses them: A800-80GB, Qwen3-8B at 32768: Env trains on 4 GPUs but 6 GPUs (the "
        "A100-80GB's table) need Env + SP=2 (more GPUs only shard the states further); and 4 more\n")
    assert out.splitlines()[-1] == (
        f"plan with it: solve --model M --gpu A800-80GB --len L --memory-model {fitted} (the fit estimates; your cells "
        "vouch as tables, with --cells, once they no longer contradict the documented tables)")
    assert cli("--model", "8B", "--gpu", "a800", "--gpus", "4", "--len", "32k", "--cells", str(cells))[0] == 2
    # calib91: beside h800.yaml's cells, whose fit takes 3 only without the margin, the counts offered --cells for
    # those too, which planning refuses as it refuses the A800 cells.
    h800 = Path(__file__).parent / "data" / "cells" / "h800.yaml"
    status, out, _ = cli("calibrate", "--cells", str(cells), "--cells", str(h800), "--out", str(fitted))
    assert status == 0 and out.splitlines()[0].endswith(
        "and 3 that fit but not within the default safety margin of 0.01 (plans take them with --margin 0)")
