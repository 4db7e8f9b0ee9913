"""An engineer with H20-96GB nodes who checks the answers cell by cell against Trinity-RFT's guide (persona76, s85)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

PLAN = ("--model", "14B", "--gpu", "h20", "--len", "64k")
"""The fewest H20s question's plan: Qwen3-14B at 65536 tokens."""


def _h20_cells(tmp_path: Path, cell_14b_at_65536: str) -> Path:
    """Made-up 8 x H20 cells of Qwen3-14B at 65536 tokens, a length between the 4-GPU table's rows 61440 and
    71680."""
    cells = tmp_path / "h20-8.yaml"
    cells.write_text("gpu: H20-96GB\nmemory_gb: 96\nsource: mine\ntables:\n"
                     "  - {gpus: 8, section: 8 x H20, models: [Qwen3-14B], rows: [{max_model_len: 65536, "
                     f"cells: {{Qwen3-14B: '{cell_14b_at_65536}'}}}}]}}\n", encoding="utf-8")
    return cells


def test_more_gpus_refused_at_a_length_between_the_rows_of_the_table_for_fewer(cli, tmp_path: Path):
    # The H20's 4-GPU table trains Qwen3-14B with Env + Offload + SP=4 at 71680, the row that 65536 falls to, so it
    # trains at 65536 on 4 GPUs and on 8: cells saying '-' on 8 GPUs at 65536 contradict it (--check found none, and
    # planning took them, answering that nothing trains on exactly 8).
    cells = _h20_cells(tmp_path, "-")
    said = ("H20-96GB, Qwen3-14B at 65536: Env + Offload + SP=4 trains on 4 GPUs (at 71680, the row 65536 falls to) "
            "but 8 GPUs need - (more GPUs only shard the states further)")
    assert cli("tables", "--gpu", "h20", "--cells", str(cells), "--check") == (
        1, (f"solve tables: warning: {said}\n1 contradiction in 296 cells: 1 of {cells}'s, 295 of the "
            "shipped tables\n"), "")
    assert cli("--model", "14B", "--gpu", "h20", "--gpus", "8", "--exact", "--len", "64k", "--cells", str(cells)) == (
        2, "", f"solve: error: --cells {cells}: {said}; check the cells\n")
    # Cells that agree (Env + SP=8 comes before Env + Offload + SP=4 on 8 GPUs) are still taken.
    agreeing = _h20_cells(tmp_path, "Env + SP=8")
    assert cli("tables", "--gpu", "h20", "--cells", str(agreeing), "--check") == (
        0, f"0 contradictions in 296 cells: 1 of {agreeing}'s, 295 of the shipped tables\n", "")


@pytest.mark.parametrize(("given", "meant"), [
    (("--format", "yaml"), "--emit trinity"), (("--format=yaml",), "--emit trinity"),
    (("--output-format", "trinity"), "--emit trinity"), (("--yaml",), "--emit trinity"), (("--yml",), "--emit trinity"),
    (("--format", "json"), "--json"), (("--format",), "--json"),
])
def test_yaml_asked_for_with_another_tools_option_is_told_emit_trinity(cli, given: tuple[str, ...], meant: str):
    # A script that reads YAML: --format yaml was told --json, and --yaml no option at all.
    status, out, err = cli(*PLAN, *given)
    assert (status, out, err.splitlines()[-1]) == (
        2, "", f"solve: error: unrecognized arguments: {' '.join(given)} (did you mean {meant}?)")


def test_a_cluster_asked_for_yaml_is_told_emit_dir(cli):
    fleet = Path(__file__).resolve().parent.parent / "docs" / "examples" / "fleet.yaml"
    for given in (("--format", "yaml"), ("--yaml",)):
        status, _, err = cli("cluster", str(fleet), *given)
        assert (status, err.splitlines()[-1]) == (
            2, f"solve cluster: error: unrecognized arguments: {' '.join(given)} (did you mean --emit-dir?)")


@pytest.mark.parametrize(("emit", "hint"), [
    ("json", "did you mean --json?"), ("yaml", "did you mean 'trinity'? (--emit trinity prints the plan as Trinity YAML)"),
    ("YAML", "did you mean 'trinity'? (--emit trinity prints the plan as Trinity YAML)"), ("trinity-yaml", "did you mean 'trinity'?"),
    # a file's name: where to write the fragment, which --out takes (was "did you mean 'trinity'?"; persona92d)
    ("trinity.yaml",
     "did you mean --out trinity.yaml? (--emit trinity prints the plan as Trinity YAML; --out FILE writes it)"),
    ("Trinity.YML",
     "did you mean --out Trinity.YML? (--emit trinity prints the plan as Trinity YAML; --out FILE writes it)"),
])
def test_emit_given_a_format_names_the_option_for_it(cli, emit: str, hint: str):
    assert cli(*PLAN, "--emit", emit) == (2, "", (
        "usage: solve [options] (--help lists them)\n"
        f"solve: error: argument --emit: invalid choice: '{emit}' (choose from 'trinity'); {hint}\n"))


def test_a_file_saved_in_gbk_is_told_to_be_saved_as_utf8(cli, tmp_path: Path):
    # Chinese Windows editors save GBK: the file is text, with Chinese comments, and was refused as "not a text file".
    config = tmp_path / "gbk.yaml"
    config.write_bytes("model:\n  model_path: Qwen/Qwen3-14B\n  max_model_len: 65536  # 64K 上下文\n".encode("gbk"))
    said = f"{config}: line 3 is not UTF-8 (another encoding, such as GBK or Latin-1): save the file as UTF-8"
    assert cli("--from-config", str(config), "--gpu", "h20") == (2, "", f"solve: error: --from-config {said}\n")
    fleet = tmp_path / "fleet.yaml"
    fleet.write_bytes("# 我们的 H20 集群\npools: []\n".encode("gbk"))
    assert cli("cluster", str(fleet)) == (2, "", (
        f"solve cluster: error: {fleet}: line 1 is not UTF-8 (another encoding, such as GBK or Latin-1): save the file "
        "as UTF-8\n"))
    # A file with NUL bytes is no text at all, as before.
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"\x00\xff\xfe")
    assert cli("--from-config", str(binary), "--gpu", "h20") == (
        2, "", f"solve: error: --from-config {binary}: not a text file (UTF-8)\n")


@pytest.mark.parametrize("cell", ["—", "——", "–", "−", " - ", "OOM", "oom", "out of memory", "N/A", "x", "×"])
def test_a_cell_of_nothing_trained_written_another_way_is_told_the_dash(cli, tmp_path: Path, cell: str):
    # A Chinese input method types '——' for '-' (Shift and the hyphen key), and people log a run that ran out of
    # memory as OOM: each was an unknown setting, without the '-' that the source writes there.
    cells = _h20_cells(tmp_path, cell)
    assert cli("tables", "--gpu", "h20", "--cells", str(cells)) == (2, "", (
        f"solve tables: error: --cells {cells}: line 5: table gpus=8, row max_model_len=65536, cells: Qwen3-14B: "
        f"setting {cell!r} is not in the source's form; write '-' (no setting trained there)\n"))


def test_why_six_gpus_stop_short_names_the_row_the_next_length_falls_to(cli):
    # On exactly 6 H20s Qwen3-4B stops at 61440; the next length, 62464, falls to the '-' row 71680, which the reason
    # named as if 62464 were below what the table measured.
    status, out, _ = cli("--model", "4B", "--gpu", "h20", "--gpus", "6", "--exact", "--maximize", "len", "--explain",
                         "--json")
    explanation = [(reason["rule"], reason["detail"]) for reason in json.loads(out)[0]["explanation"]]
    assert status == 0 and explanation[-3:] == [
        ("longer", "no plan reaches the next length, 62464 tokens:"),
        ("budget", "1-5 GPUs: --exact asks for 6"),
        ("no_setting", ("the H20-96GB table for 6 GPUs says '-' for Qwen3-4B from 71680 tokens (the row that 62464 "
                        "falls to) to 81920, where its rows end: nothing trained there; nor does a cell of a table for "
                        "fewer GPUs vouch"))]
