"""Tests that kill the mutants which survived the mutation testing of session 53's names and calibration code
(guessed_name's sizes in millions and memory sizes, Calibration's poor_fit and its read-back check, ``solve calibrate
--json``'s output, the all-'-' refusal of several files, the off-grid row note of every command)."""

from __future__ import annotations

import functools
import json
import shutil
from pathlib import Path

import pytest
from pydantic import ValidationError
from test_loader import OWN_CARD

import solver
from solver.tables import (
    GpuType,
    QueryError,
    RefusedNameError,
    described_gpu_type,
    load_catalog,
    shipped_tables_directory,
)
from solver.tables.text import guessed_name

OFF_GRID_H100_CELLS = (  # 8 H100s: the second table's row typed as 65000 where 65536 was measured
    "gpu: H100-80GB\nmemory_gb: 80\nsource: mine\ntables:\n"
    "  - gpus: 4\n    section: 4 x H100\n    models: [Qwen3-8B]\n    rows:\n"
    "      - {max_model_len: 32768, cells: {Qwen3-8B: SP=4}}\n"
    "  - gpus: 8\n    section: 8 x H100\n    models: [Qwen3-8B]\n    rows:\n"
    "      - {max_model_len: 32768, cells: {Qwen3-8B: SP=2}}\n"
    "      - {max_model_len: 65000, cells: {Qwen3-8B: SP=4}}\n"
    "      - {max_model_len: 131072, cells: {Qwen3-8B: SP=8}}\n")
"""Cells of yours in two tables, the first on the grid, the second with one row off it."""


def _off_grid_note(prog: str, cells: Path) -> str:
    return (f"{prog}: note: {cells}: table gpus=8, row max_model_len=65000 is not a multiple of 1024 tokens: a row "
            "speaks for its length and the shorter ones down to the row before, so not for 65536 (64k) above it; check "
            "the row for a typo\n")


@pytest.mark.parametrize(("kind", "name", "guess"), [
    ("model", "8000m", " (did you mean Qwen3-8B?)"),  # millions that make whole billions: 8b, not 8.0b
    ("model", "qwen3-600m-instruct", " (did you mean Qwen3-0.6B?)"),  # in billions, then guessed as an extension
    ("model", "Qwen3-600M-Base", " (did you mean Qwen3-0.6B-Base?)"),
    ("gpu", "l40s-48gbx", " (did you mean L40S-48GB?)"),  # more than a memory size after the name: a guess
    ("gpu", "h20-9gb", OWN_CARD.format("H20-96GB", 96, "9")),  # a memory size of one digit is a memory size
    ("gpu", "h20-141g", OWN_CARD.format("H20-96GB", 96, "141")),  # too: another card; as g, gib or with a decimal part
    ("gpu", "h100-94gib", OWN_CARD.format("H100-80GB", 80, "94")),
    ("gpu", "h100-93.5gb", OWN_CARD.format("H100-80GB", 80, "93.5")),
    ("gpu", "ls", ""),  # a version drops only before a hyphen: not l40s's 40 (nor mi300x's 300: mix)
])
def test_a_size_in_millions_or_a_memory_size_decides_the_guess(kind: str, name: str, guess: str):
    catalog = load_catalog()
    with pytest.raises(QueryError) as raised:
        catalog.model(name) if kind == "model" else catalog.gpu(name)
    assert str(raised.value).startswith(f"unknown {'model' if kind == 'model' else 'GPU'} {name!r}{guess}; accepted: ")


@pytest.mark.parametrize(("wanted", "known", "guess"), [
    ("foo7b", "foo-1.2.3-7b", "Foo"),  # a version of three parts left out
    ("foo17b", "foo-1.2.3-7b", "Foo"),  # or cut to its major one
    ("foo7b", "foo-10-7b", "Foo"),  # a major version of two digits
    ("foox", "3-foo-x", None),  # no family before the number: no version to leave out
])
def test_a_version_left_out_of_a_name_of_ones_own_is_guessed(wanted: str, known: str, guess: str | None):
    # guessed_name on the names of a catalogue with a model of one's own (none shipped has such a version)
    assert guessed_name(wanted, {known: "Foo"}) == guess


def test_a_gpu_type_of_ones_own_that_an_alias_of_a_gpu_without_bf16_names_is_refused():
    with pytest.raises(RefusedNameError, match=r"^'v100' is a V100, which has no bf16 \(compute capability 7.0;"):
        load_catalog().with_gpu_types([GpuType(gpu="MyCard-32GB", memory_gb=32, aliases=("v100",), source="mine")])


@pytest.mark.parametrize(("gpu", "message"), [
    (5, "a GPU is named by a string, got 5"),
    (described_gpu_type("mine", 32), ("a GPU is named by a string, got a GpuType: pass its name, 'mine', with "
                                      "catalog=catalog.with_gpu_types([gpu_type])")),
])
def test_a_gpu_named_by_no_string_is_told_so_before_any_bf16_check(gpu: object, message: str):
    with pytest.raises(QueryError) as raised:
        load_catalog().gpu(gpu)  # type: ignore[arg-type]
    assert str(raised.value) == message


@pytest.mark.parametrize(("argv", "gpu", "refused"), [
    (("--len", "8k"), "Tesla P100-PCIE-16GB", "a P100, which has no bf16 (compute capability 6.0;"),
    (("memory", "--gpus", "2", "--len", "8k"), "2080ti", "an RTX-2080-Ti, which has no bf16 (compute capability 7.5;"),
    (("map", "--gpus-up-to", "2"), "p40-24gb", "a P40, which has no bf16 (compute capability 6.1;"),
])
def test_the_names_users_type_for_a_gpu_without_bf16_are_refused_without_a_hint(
        cli, argv: tuple[str, ...], gpu: str, refused: str):
    prog = f"solve {argv[0]}" if argv[0] in ("memory", "map") else "solve"
    assert cli(*argv, "--model", "8B", "--gpu", gpu) == (2, "", (
        f"{prog}: error: {gpu!r} is {refused} bf16 needs 8.0, Ampere or newer), and the verl/FSDP training rft-solver "
        "plans runs in bf16: plan for a GPU type that has it\n"))


def test_an_unknown_gpu_on_the_command_line_is_told_to_give_its_memory(cli):
    status, out, err = cli("--model", "8B", "--gpu", "a30", "--len", "8k")
    assert (status, out) == (2, "") and err.startswith("solve: error: unknown GPU 'a30'; accepted: A100-40GB/80GB, ")
    assert err.endswith("; short forms such as l4 for L4-24GB too; or, for a GPU type of your own, give its memory: "
                        "--gpu-memory SIZE\n")


def test_a_tables_folder_whose_gpus_file_lists_no_gpus_without_bf16_refuses_none(tmp_path: Path):
    tables = tmp_path / "tables"
    shutil.copytree(shipped_tables_directory(), tables)
    gpus = tables / "gpus.yaml"
    text = gpus.read_text(encoding="utf-8")
    gpus.write_text(text[:text.index("without_bf16:")], encoding="utf-8")
    with pytest.raises(QueryError) as raised:
        load_catalog(tables).gpu("v100")
    assert str(raised.value).startswith("unknown GPU 'v100'; accepted: ") and load_catalog(tables).without_bf16 == ()


@functools.cache
def _documented_calibration() -> solver.Calibration:
    """The calibration on the documented tables (made once: it takes most of a second)."""
    return solver.calibrate_memory_model([])


def _calibration_json(**fields: object) -> dict[str, object]:
    """The JSON of the calibration on the documented tables, with `fields` in place of its own."""
    return {**_documented_calibration().model_dump(mode="json"), **fields}


@pytest.mark.parametrize(("mispredicted", "your_cells", "poor"), [
    (0, 0, False), (1, 3, True), (1, 4, False), (2, 7, True), (2, 8, False), (4, 4, True)])
def test_poor_fit_is_more_than_a_quarter_of_your_cells_mispredicted(mispredicted: int, your_cells: int, poor: bool):
    raw = _calibration_json(mispredicted=[f"cell {n}" for n in range(mispredicted)], your_cells=your_cells)
    del raw["poor_fit"]
    fitted = solver.Calibration.model_validate(raw)
    assert fitted.poor_fit is poor and fitted.model_dump(mode="json")["poor_fit"] is poor
    assert solver.Calibration.model_validate({**raw, "poor_fit": poor}) == fitted
    with pytest.raises(ValidationError, match=f"poor_fit is {not poor}, but mispredicted and your_cells say {poor}"):
        solver.Calibration.model_validate({**raw, "poor_fit": not poor})


def test_poor_fit_read_back_leaves_other_mistakes_to_the_fields_and_your_cells_to_its_default():
    # mispredicted of the wrong type: the field's own error, alone (not a TypeError, not poor_fit as an extra input)
    with pytest.raises(ValidationError) as raised:
        solver.Calibration.model_validate(_calibration_json(mispredicted=5))
    assert [error["loc"] for error in raised.value.errors()] == [("mispredicted",)]
    # your_cells left out is 0: one mispredicted cell of none is a poor fit
    raw = _calibration_json(mispredicted=["a cell"], poor_fit=True)
    del raw["your_cells"]
    assert solver.Calibration.model_validate(raw).your_cells == 0
    # mispredicted left out is a required field's error
    raw = _calibration_json()
    del raw["mispredicted"]
    with pytest.raises(ValidationError) as raised:
        solver.Calibration.model_validate(raw)
    assert [error["loc"] for error in raised.value.errors()] == [("mispredicted",)]


def test_calibrate_json_is_indented_by_two_and_ends_its_line(cli):
    status, out, err = cli("calibrate", "--json")
    assert (status, err) == (0, "")
    assert out.startswith('{\n  "memory_model": {\n    "source": "calibrated on the documented tables",\n    '
                          '"coefficients": {\n      "states": ')
    assert out.endswith('\n  "your_cells": 0,\n  "unphysical": [],\n  "unphysical_codes": [],\n'
                        '  "far_from_shipped": [],\n  "at_token_floor": [],\n  "from_shipped": [],\n'
                        f'  "schema_version": 1,\n  "rft_solver_version": "{solver.__version__}",\n'
                        '  "poor_fit": false\n}\n')
    assert out == json.dumps(json.loads(out), indent=2) + "\n"


def test_calibrate_on_several_files_all_dashes_names_each_file(cli, tmp_path: Path):
    head = "gpu: H100-80GB\nmemory_gb: 80\nsource: mine\ntables:\n  - gpus: {}\n    section: 'x'\n" \
           "    models: [Qwen3-8B]\n    rows:\n      - {{max_model_len: 16384, cells: {{Qwen3-8B: '-'}}}}\n"
    two, four = tmp_path / "two.yaml", tmp_path / "four.yaml"
    two.write_text(head.format(2), encoding="utf-8")
    four.write_text(head.format(4), encoding="utf-8")
    assert cli("calibrate", "--cells", str(two), "--cells", str(four)) == (2, "", (
        f"solve calibrate: error: --cells {two}, {four}: no cell names a setting that trained (all are '-'): nothing "
        "shows how much memory a run may take; add cells that trained\n"))


@pytest.mark.parametrize("command", [
    ("--model", "8B", "--gpu", "h100", "--gpus", "8", "--len", "32k"),
    ("memory", "--model", "8B", "--gpu", "h100", "--gpus", "8", "--len", "32k", "--sp", "2"),
    ("map", "--model", "8B", "--gpu", "h100", "--gpus-up-to", "8"),
    ("calibrate",),
])
def test_a_row_off_the_grid_in_a_later_table_gets_the_note_on_each_command(cli, tmp_path: Path,
                                                                           command: tuple[str, ...]):
    cells = tmp_path / "mine.yaml"
    cells.write_text(OFF_GRID_H100_CELLS, encoding="utf-8")
    prog = "solve" if command[0].startswith("--") else f"solve {command[0]}"
    status, _, err = cli(*command, "--cells", str(cells))
    assert status == 0 and err.endswith(_off_grid_note(prog, cells)) and err.count("not a multiple") == 1


def test_a_row_off_the_grid_gets_the_note_from_solve_cluster(cli, tmp_path: Path):
    cells, fleet = tmp_path / "mine.yaml", tmp_path / "fleet.yaml"
    cells.write_text(OFF_GRID_H100_CELLS, encoding="utf-8")
    fleet.write_text("pools:\n  - {name: h100, gpu: H100-80GB, nodes: 1, gpus_per_node: 8}\n"
                     "jobs:\n  - {name: job, model: Qwen3-8B, max_model_len: 32768}\n", encoding="utf-8")
    status, _, err = cli("cluster", str(fleet), "--cells", str(cells))
    assert status == 0 and err.count("not a multiple") == 1 and _off_grid_note("solve cluster", cells) in err
