"""Every shipped cell against the source document itself.

The markdown tables in tests/data/gpu-config-guide.zh.md (a verbatim copy of the source) are parsed
here with plain string handling, independently of the YAML under tables/ and of the package's loader.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from solver.cli import main
from solver.tables import load_catalog

SOURCE = Path(__file__).parent / "data" / "gpu-config-guide.zh.md"
GPU_SECTIONS = {"A100 80GB": "A100-80GB", "H20 96GB": "H20-96GB"}
DOCUMENT = f"Trinity-RFT GPU configuration guide ({SOURCE.name})"
"""How the tables name the document (their `source.document`)."""
HEADINGS: dict[tuple[str, int], tuple[str, str]] = {}
"""(gpu, trainer gpus) -> the document's two headings over that table: the GPU type's section, the table's."""


def parse_source() -> list[tuple[str, int, str, int, str]]:
    """(gpu, trainer gpus, model, max_model_len, cell text) for every cell of the document's tables (and each
    table's `HEADINGS`)."""
    cells = []
    gpu = gpus = None
    section = ""
    models: list[str] = []
    for line in SOURCE.read_text(encoding="utf-8").splitlines():
        if heading := re.match(r"## ((.+?) 显卡配置建议)", line):
            section, gpu = heading.group(1), GPU_SECTIONS[heading.group(2)]
        elif heading := re.match(r"### ((\d+) 张 GPU)", line):
            gpus = int(heading.group(2))
            HEADINGS[gpu, gpus] = (section, heading.group(1))
        elif line.startswith("|"):
            columns = [column.strip() for column in line.strip().strip("|").split("|")]
            if columns[0] == "`max_model_len`":
                models = columns[1:]
            elif columns[0].isdigit():
                assert gpu and gpus and len(columns) == len(models) + 1
                cells += [(gpu, gpus, model, int(columns[0]), text) for model, text in zip(models, columns[1:])]
    return cells


def flags(text: str) -> dict[str, object]:
    """The JSON flags a cell's text stands for, read straight off the text."""
    if text == "-":
        return {"feasible": False, "env": None, "offload": None, "sp": None}
    parts = text.split(" + ")
    sp = [int(part.removeprefix("SP=")) for part in parts if part.startswith("SP=")]
    return {"feasible": True, "env": "Env" in parts, "offload": "Offload" in parts, "sp": sp[0] if sp else 1}


SOURCE_CELLS = parse_source()


def test_the_source_has_560_cells_81_of_them_dashes():
    assert len(SOURCE_CELLS) == 560
    assert sum(text == "-" for *_, text in SOURCE_CELLS) == 81
    assert {(gpu, gpus) for gpu, gpus, *_ in SOURCE_CELLS} == {
        (gpu, gpus) for gpu in GPU_SECTIONS.values() for gpus in (1, 2, 4, 6)
    }


def test_every_shipped_cell_reads_as_the_source_writes_it():
    shipped = [
        (cell.gpu, cell.gpus, cell.model, cell.max_model_len, cell.setting.label if cell.setting else "-")
        for cell in load_catalog().cells()
    ]
    assert shipped == SOURCE_CELLS


EXPECTED_JSON = [
    {"gpu": gpu, "gpus": gpus, "model": model, "max_model_len": length, **flags(text),
     "source": f"{DOCUMENT}, {HEADINGS[gpu, gpus][0]}", "section": HEADINGS[gpu, gpus][1]}
    for gpu, gpus, model, length, text in SOURCE_CELLS
]


def test_json_output_carries_every_cell_of_the_source(capsys: pytest.CaptureFixture[str]):
    assert main(["tables", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == EXPECTED_JSON


def test_installed_solve_prints_every_cell_from_another_directory(tmp_path: Path, solve_script: Path):
    result = subprocess.run([str(solve_script), "tables", "--json"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stderr) == (0, "")
    assert json.loads(result.stdout) == EXPECTED_JSON


def test_gpu_memory_matches_the_section_titles():
    assert {gpu.name: gpu.memory_gb for gpu in load_catalog().documented_gpu_types} == {"A100-80GB": 80, "H20-96GB": 96}
