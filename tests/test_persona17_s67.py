"""Session 67, helper persona17 (a new user with 8 H100s, 4 L40Ss and an RTX 4090, planning Qwen3-30B-A3B,
Qwen2.5-7B-Instruct and Llama-3.1-8B): a Hugging Face config.json given where a YAML file goes (--from-config,
--cells, a fleet file), or a Trinity config or fleet file given to --model-config, is named for the kind it looks
like; a GPU named as PCIe cards of a GPU type the catalogue has as SXM boards (nvidia-smi's ``NVIDIA H100 PCIe``),
taken as those boards and their NVLink, gets a note saying how to state PCIe."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from solver.tables import TableError, load_catalog, load_gpu_type

Cli = Callable[..., tuple[int, str, str]]

EXAMPLES = Path(__file__).parent.parent / "docs" / "examples"
HF_CONFIG = EXAMPLES / "my-model" / "config.json"
TRINITY = EXAMPLES / "trinity.yaml"
HF_KIND = " (this looks like a Hugging Face config.json, for --model-config)"
API_HF_KIND = " (this looks like a Hugging Face config.json, for solver.load_model_config and catalog.with_model)"
"""apiwords90b: as the API's loaders name it (the command's: `HF_KIND`)."""


def test_from_config_given_a_hugging_face_config_json_names_model_config(cli: Cli):
    assert cli("--from-config", str(HF_CONFIG), "--gpu", "h100") == (
        2, "", f"solve: error: --from-config {HF_CONFIG}: missing model.model_path{HF_KIND}\n")


@pytest.mark.parametrize(("given", "kind"), [(TRINITY, "a Trinity config, for --from-config"),
                                             (EXAMPLES / "fleet.yaml", "a fleet file, for solve cluster")])
def test_model_config_given_a_yaml_file_names_the_kind_it_looks_like(cli: Cli, given: Path, kind: str):
    assert cli("--model-config", str(given), "--gpu", "h100", "--len", "8k") == (
        2, "", f"solve: error: --model-config {given}: not JSON: Expecting value (line 1) (this looks like {kind})\n")


def test_a_config_json_that_is_not_json_nor_yaml_of_a_kind_is_refused_as_before(cli: Cli, tmp_path: Path):
    path = tmp_path / "config.json"
    path.write_text("hidden_size: 4096\nvocab: [1, 2\n", encoding="utf-8")  # neither JSON nor YAML
    assert cli("--model-config", str(path), "--len", "8k") == (
        2, "", f"solve: error: --model-config {path}: not JSON: Expecting value (line 1)\n")


def test_a_cells_file_or_a_fleet_file_that_is_a_config_json_names_model_config(cli: Cli):
    catalog = load_catalog()
    with pytest.raises(TableError) as caught:
        load_gpu_type(HF_CONFIG, catalog.models, catalog.gpu_types)
    assert str(caught.value).endswith(API_HF_KIND) and "\n" not in str(caught.value)
    status, out, err = cli("cluster", str(HF_CONFIG))
    assert (status, out) == (2, "") and err.endswith(f"{HF_KIND}\n") and err.count("\n") == 1


PCIE_NOTE = ("is taken as {taken}, whose GPUs reach one another over NVLink (its SXM boards'), as SP's cost weighs "
             "them; PCIe cards, which NVLink bridges join in pairs at most, are a GPU type of your own, which "
             "weighs SP over PCIe and cautions it: ")


@pytest.mark.parametrize(("written", "taken", "own"), [
    ("h100-pcie", "H100-80GB", "my-h100-pcie --gpu-memory 81559MiB --gpu-interconnect pcie (81559"),
    ("NVIDIA A100-PCIE-40GB", "A100-40GB", "my-a100-pcie --gpu-memory 40960MiB --gpu-interconnect pcie (40960")])
def test_a_gpu_named_as_pcie_cards_of_an_sxm_board_gets_a_note(cli: Cli, written: str, taken: str, own: str):
    status, _, err = cli("--model", "8B", "--gpu", written, "--gpus", "4", "--len", "8k")
    assert (status, err) == (0, (f"solve: note: --gpu {written!r} {PCIE_NOTE.format(taken=taken)}--gpu {own}: "
                                 "the SXM board's total; give nvidia-smi's)\n"))


NVL_NOTE = ("is taken as H200-141GB, whose GPUs reach one another over NVLink (its SXM boards'), as SP's cost weighs "
            "them; NVL cards are PCIe cards that NVLink bridges join in groups (the H200 NVL's: of 2 or 4), with PCIe "
            "between the groups, so an SP group past a bridge's runs over PCIe: for that, give them as a GPU type of "
            "your own, which weighs SP over PCIe and cautions it: ")


@pytest.mark.parametrize("written", ["h200 nvl", "NVIDIA H200 NVL", "h200nvl"])
def test_a_gpu_named_as_h200_nvl_cards_gets_a_note_naming_the_bridge_groups(cli: Cli, written: str):
    # smalls92c: 'h200 nvl' was told "did you mean H200-141GB?" (the SXM boards, all NVLink), and h200nvl nothing.
    status, out, err = cli("--model", "8B", "--gpu", written, "--gpus", "4", "--len", "8k")
    assert (status, out.startswith("H200-141GB · "), err) == (0, True, (
        f"solve: note: --gpu {written!r} {NVL_NOTE}--gpu my-h200-nvl --gpu-memory 143771MiB --gpu-interconnect pcie "
        "(143771: the SXM board's total; give nvidia-smi's)\n"))


def test_h100_nvl_names_are_the_h100_nvl_and_a_pools_h200_nvl_gets_the_note(cli: Cli, tmp_path: Path):
    for written in ("h100nvl", "NVIDIA H100 NVL"):
        status, out, err = cli("--model", "8B", "--gpu", written, "--gpus", "4", "--len", "8k")
        assert (status, out.startswith("H100-NVL-94GB · "), err) == (0, True, "")
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: lab, gpu: NVIDIA H200 NVL, nodes: 1, gpus_per_node: 8}\n"
                     "jobs:\n  - {name: j, model: Qwen3-8B, max_model_len: 8192}\n", encoding="utf-8")
    status, _, err = cli("cluster", str(fleet))
    assert (status, err) == (0, (f"solve cluster: note: pool lab: gpu 'NVIDIA H200 NVL' {NVL_NOTE}gpu: my-h200-nvl, "
                                 "gpu_memory_mib: 143771, gpu_interconnect: pcie (143771: the SXM board's total; give "
                                 "nvidia-smi's)\n"))


@pytest.mark.parametrize("written", ["a100 nvl", "a100-nvl", "NVIDIA L40S NVL"])
def test_another_cards_name_with_nvl_is_an_unknown_gpu(cli: Cli, written: str):
    # smalls93: the NVL word was dropped from any card's name: 'a100 nvl' was planned as A100-80GB with the H200 NVL's
    # bridge note; only the NVL boards that are (the H200 NVL, the H100 NVL) are read so
    status, out, err = cli("--model", "8B", "--gpu", written, "--gpus", "4", "--len", "8k")
    assert (status, out, err.count("\n")) == (2, "", 1)
    assert err.startswith(f"solve: error: unknown GPU {written!r} (did you mean ")
    assert "; accepted: A100-40GB/80GB, " in err
    assert "NVL cards" not in err


@pytest.mark.parametrize("gpu", [["--gpu", "NVIDIA H100 80GB HBM3"], ["--gpu", "l40s-pcie"],
                                 ["--gpu", "my-h100-pcie", "--gpu-memory", "81559MiB", "--gpu-interconnect", "pcie"]])
def test_no_pcie_note_for_an_sxm_name_a_pcie_card_or_pcie_cards_of_ones_own(cli: Cli, gpu: list[str]):
    assert cli("--model", "8B", *gpu, "--gpus", "4", "--len", "8k")[::2] == (0, "")


def test_a_cells_files_gpu_named_as_pcie_cards_of_an_sxm_board_gets_a_note(cli: Cli, tmp_path: Path):
    # calib91: cells of 'H800-PCIe-80GB' were taken as the H800-80GB's, over NVLink, with no word, where --gpu and a
    # pool get this note; the GPU type of your own it gives plans with the same cells and no note.
    text = (Path(__file__).parent / "data" / "cells" / "h800.yaml").read_text(encoding="utf-8")
    cells = tmp_path / "h800-pcie.yaml"
    cells.write_text(text.replace("gpu: H800-80GB", "gpu: H800-PCIe-80GB"), encoding="utf-8")
    status, _, err = cli("tables", "--cells", str(cells), "--gpu", "h800")
    own = ("gpu: my-h800-pcie, memory_gb: 80, memory_mib: 81559, interconnect: pcie, interconnect_source: where it is "
           "stated")
    assert (status, err) == (0, (f"solve tables: note: {cells}: gpu 'H800-PCIe-80GB' "
                                 f"{PCIE_NOTE.format(taken='H800-80GB')}{own} (81559: the SXM board's total; give "
                                 "nvidia-smi's)\n"))
    cells.write_text(text.replace("gpu: H800-80GB", own.replace(", memory_gb: 80", "").replace(", ", "\n")),
                     encoding="utf-8")  # the file gives memory_gb: 80 already
    assert cli("tables", "--cells", str(cells), "--gpu", "my-h800-pcie")[::2] == (0, "")


def test_a_pools_gpu_named_as_pcie_cards_of_an_sxm_board_gets_a_note(cli: Cli, tmp_path: Path):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: lab, gpu: NVIDIA H100 PCIe, nodes: 1, gpus_per_node: 8}\n"
                     "jobs:\n  - {name: j, model: Qwen3-8B, max_model_len: 8192}\n", encoding="utf-8")
    status, _, err = cli("cluster", str(fleet))
    assert (status, err) == (0, (f"solve cluster: note: pool lab: gpu 'NVIDIA H100 PCIe' "
                                 f"{PCIE_NOTE.format(taken='H100-80GB')}gpu: my-h100-pcie, gpu_memory_mib: 81559, "
                                 "gpu_interconnect: pcie (81559: the SXM board's total; give nvidia-smi's)\n"))


def test_a_gpu_type_as_a_cells_file_wrote_it_equals_the_catalogues():
    # fewest91: the copy carrying the name as written (a private attribute) compared unequal to the catalogue's type,
    # as pydantic's equality compares private attributes; a field still tells two GPU types apart.
    catalogue = load_catalog().gpu("H100-80GB")
    written = catalogue.as_written("H100-SXM-80GB")
    assert (written == catalogue, catalogue == written, written.written_name) == (True, True, "H100-SXM-80GB")
    assert {catalogue: "tabled"}[written] == "tabled"
    assert written != catalogue.model_copy(update={"memory_mib": 81000}) and written != catalogue.name
