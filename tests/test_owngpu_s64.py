"""A GPU type of your own whose interconnect is not stated (session 64): its SP plans are weighed as on NVLink, as
before, and now cautioned, naming what states PCIe where the GPU type was described (--gpu-memory's flag, a pool's
key, the API's keyword, a cells file's key); `solve memory`'s PCIe caution no longer speaks of a cost it does not
show; a feasibility or cells file of a catalogue GPU type takes its ROCm from the catalogue, and one that states
another ROCm or workstation host memory is refused."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import fragment_comment

import solver
from solver.results import CautionCode, interconnect_unstated_caution
from solver.rules import COMMAND_OPTIONS
from solver.tables import TableError, described_gpu_type, load_catalog, shipped_tables_directory

Cli = Callable[..., tuple[int, str, str]]

UNSTATED = ("SP=4 on rtx-3090 cards, whose interconnect is not stated, so the cost weighs SP as over NVLink; cards "
            "without NVLink (GeForce, most workstation cards) reach one another over PCIe alone, where SP costs more: "
            "if these do, say so (--gpu-interconnect pcie)")
"""The caution an SP=4 plan on --gpu rtx-3090 --gpu-memory 24576MiB gets, word for word."""

OWN_3090 = ("--gpu", "rtx-3090", "--gpu-memory", "24576MiB", "--model", "1.7B", "--gpus", "4", "--maximize", "len")
"""The longest 1.7B plan on four 3090s of your own: Env + Offload + SP=4 at 30720 tokens."""

CODE = CautionCode.INTERCONNECT_NOT_STATED.value


def flat(text: str) -> str:
    """`text` with its runs of spaces and line breaks as one space: the text wraps at the terminal's width."""
    return " ".join(text.split())


def test_an_own_gpu_s_sp_plan_is_cautioned_that_its_interconnect_is_not_stated(cli: Cli):
    status, out, _ = cli(*OWN_3090, "--json")
    [plan] = json.loads(out)[0]["plans"]
    assert status == 0 and plan["sp"] == 4
    assert plan["caution_codes"] == ["thin-headroom", CODE]
    assert plan["cautions"][-1] == UNSTATED
    status, text, _ = cli(*OWN_3090)
    assert status == 0 and flat(text).count(f"caution {UNSTATED}") == 1


def test_the_trinity_fragment_of_such_a_plan_carries_the_caution(cli: Cli):
    status, out, _ = cli(*OWN_3090, "--emit", "trinity")
    assert status == 0 and fragment_comment(f"caution: {UNSTATED}") in out


@pytest.mark.parametrize(("link", "codes"), [("nvlink", ["thin-headroom"]),
                                             ("pcie", ["thin-headroom", "sp-over-pcie"])])
def test_a_stated_interconnect_takes_the_caution_away(cli: Cli, link: str, codes: list[str]):
    status, out, _ = cli(*OWN_3090, "--gpu-interconnect", link, "--json")
    [plan] = json.loads(out)[0]["plans"]
    assert status == 0 and plan["sp"] == 4 and plan["caution_codes"] == codes


def test_no_caution_without_sp_or_on_a_catalogue_gpu_type(cli: Cli):
    status, out, _ = cli(*OWN_3090, "--sp", "1", "--json")
    [plan] = json.loads(out)[0]["plans"]
    assert status == 0 and plan["sp"] == 1 and CODE not in plan["caution_codes"]
    status, out, _ = cli("--gpu", "a100", "--model", "8B", "--gpus", "8", "--len", "64k", "--json")
    [plan] = json.loads(out)[0]["plans"]
    assert status == 0 and plan["sp"] > 1 and CODE not in plan["caution_codes"]
    assert interconnect_unstated_caution(described_gpu_type("mine", 24), 1) is None


def test_solve_memory_s_breakdown_is_not_cautioned_on_the_interconnect(cli: Cli):
    # A breakdown shows no cost, and its memory does not depend on the interconnect.
    status, out, _ = cli("memory", "--gpu", "rtx-3090", "--gpu-memory", "24576MiB", "--model", "1.7B", "--gpus", "4",
                         "--len", "8192", "--sp", "2", "--env", "--offload", "--json")
    assert status == 0 and json.loads(out)["caution_codes"] == []


FLEET = """\
pools:
  - {{name: lab, gpu: RTX-PRO-5000, gpu_memory_gb: 48, {link}nodes: 1, gpus_per_node: 4}}
jobs:
  - {{name: a, model: Qwen3-8B, max_model_len: {{at_least: 16384}}}}
"""
"""A fleet of one pool of a GPU type of your own (`link`: its gpu_interconnect field, with its comma, or "")."""

POOL_UNSTATED = ("SP=4 on RTX-PRO-5000 cards, whose interconnect is not stated, so the cost weighs SP as over NVLink; "
                 "cards without NVLink (GeForce, most workstation cards) reach one another over PCIe alone, where SP "
                 "costs more: if these do, say so (gpu_interconnect: pcie in its pool)")


def test_a_pool_s_gpu_type_names_its_pool_key_in_text_json_and_the_api(cli: Cli, tmp_path: Path):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET.format(link=""), encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet), "--json")
    [placement] = json.loads(out)["placements"]
    assert status == 0 and placement["plan"]["sp"] == 4
    assert placement["plan"]["caution_codes"] == [CODE] and placement["plan"]["cautions"] == [POOL_UNSTATED]
    status, text, _ = cli("cluster", str(fleet))
    assert status == 0 and flat(text).count(f"caution: a: {POOL_UNSTATED}") == 1
    # The API names the pool's key too: the key is the file's (or the Pool's) whichever caller reads it.
    [placed] = solver.place(fleet).placements
    assert placed.plan.cautions == (POOL_UNSTATED,)


def test_a_pool_that_states_its_interconnect_is_not_cautioned(cli: Cli, tmp_path: Path):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET.format(link="gpu_interconnect: nvlink, "), encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet), "--json")
    [placement] = json.loads(out)["placements"]
    assert status == 0 and placement["plan"]["sp"] == 4 and placement["plan"]["caution_codes"] == []


def test_the_api_names_its_keyword():
    catalog = load_catalog().with_gpu_types([described_gpu_type("mycard", memory_mib=24576)])
    (answer,) = solver.plan("1.7B", gpu="mycard", budget_gpus=4, objective="max_len", catalog=catalog)
    assert answer.plans[0].caution_codes[-1] == CautionCode.INTERCONNECT_NOT_STATED
    assert answer.plans[0].cautions[-1].endswith(
        'if these do, say so (solver.described_gpu_type(..., interconnect="pcie"))')
    (answer,) = solver.plan("1.7B", gpu="mycard", budget_gpus=4, objective="max_len", catalog=catalog,
                            option_names=COMMAND_OPTIONS)
    assert answer.plans[0].cautions[-1].endswith("if these do, say so (--gpu-interconnect pcie)")
    stated = load_catalog().with_gpu_types([described_gpu_type("mycard", memory_mib=24576, interconnect="nvlink")])
    (answer,) = solver.plan("1.7B", gpu="mycard", budget_gpus=4, objective="max_len", catalog=stated)
    assert answer.plans[0].sp == 4 and CautionCode.INTERCONNECT_NOT_STATED not in answer.plans[0].caution_codes


def own_cells(tmp_path: Path, extra: str = "") -> Path:
    """docs/examples/my-cells.yaml as the cells of a GPU type of your own, ``my-gpu`` (with `extra` lines)."""
    cells = tmp_path / "cells.yaml"
    text = Path("docs/examples/my-cells.yaml").read_text(encoding="utf-8")
    cells.write_text(text.replace("gpu: H100-80GB ", f"gpu: my-gpu\n{extra}memory_mib: 81559\n#", 1), encoding="utf-8")
    return cells


def test_a_cells_file_s_gpu_type_names_the_cells_file_s_key(cli: Cli, tmp_path: Path):
    asked = ("--gpu", "my-gpu", "--model", "8B", "--gpus", "8", "--len", "64k", "--json")
    status, out, _ = cli(*asked, "--cells", str(own_cells(tmp_path)))
    [plan] = json.loads(out)[0]["plans"]
    assert status == 0 and (plan["sp"], plan["evidence"]) == (4, "documented")
    assert plan["caution_codes"] == [CODE]
    assert plan["cautions"][0].endswith("say so (interconnect: pcie, with its interconnect_source, in its cells file)")
    stated = own_cells(tmp_path, "interconnect: nvlink\ninterconnect_source: my bench\n")
    status, out, _ = cli(*asked, "--cells", str(stated))
    assert status == 0 and json.loads(out)[0]["plans"][0]["caution_codes"] == []


def catalogue_cells(tmp_path: Path, gpu: str, memory_gb: int, extra: str = "") -> Path:
    """docs/examples/my-cells.yaml as cells of the catalogue's `gpu` (with `extra` lines)."""
    cells = tmp_path / "cells.yaml"
    text = Path("docs/examples/my-cells.yaml").read_text(encoding="utf-8")
    cells.write_text(text.replace("gpu: H100-80GB ", f"gpu: {gpu}\n{extra}#", 1).replace(
        "memory_gb: 80 ", f"memory_gb: {memory_gb} ", 1), encoding="utf-8")
    return cells


@pytest.mark.parametrize(("gpu", "memory_gb", "extra", "error"), [
    ("RTX-4090-24GB", 24, "workstation_host_ram_gib: 128\n",
     "workstation_host_ram_gib 128, where the catalogue's RTX-4090-24GB has 64"),
    ("H100-80GB", 80, "workstation_host_ram_gib: 64\n",
     "workstation_host_ram_gib 64, where the catalogue's H100-80GB has none stated"),
    ("MI300X", 192, "rocm: false\n", "rocm false, where the catalogue's MI300X has true"),
    ("H100-80GB", 80, "rocm: true\n", "rocm true, where the catalogue's H100-80GB has false"),
])
def test_a_cells_file_that_gives_a_catalogue_gpu_type_another_value_is_refused(
        cli: Cli, tmp_path: Path, gpu: str, memory_gb: int, extra: str, error: str):
    cells = catalogue_cells(tmp_path, gpu, memory_gb, extra)
    status, out, err = cli("--model", "8B", "--gpu", gpu, "--gpus", "8", "--len", "64k", "--cells", str(cells))
    assert (status, out) == (2, "")
    assert err == f"solve: error: --cells {cells}: GPU {gpu}: {error}: leave it out to take that\n"


@pytest.mark.parametrize(("gpu", "memory_gb", "extra"), [
    ("RTX-4090-24GB", 24, "workstation_host_ram_gib: 64\n"), ("MI300X", 192, "rocm: true\n"),
    ("H100-80GB", 80, "rocm: false\n"),
])
def test_a_cells_file_may_state_the_catalogue_s_own_value(cli: Cli, tmp_path: Path, gpu: str, memory_gb: int,
                                                          extra: str):
    cells = catalogue_cells(tmp_path, gpu, memory_gb, extra)
    status, _, err = cli("--model", "8B", "--gpu", gpu, "--gpus", "8", "--len", "64k", "--cells", str(cells))
    assert status in (0, 1) and "error" not in err


def test_a_feasibility_file_takes_its_gpu_type_s_rocm_from_the_catalogue(tmp_path: Path):
    tables = tmp_path / "tables"
    shutil.copytree(shipped_tables_directory(), tables)
    catalogue_cells(tables / "feasibility", "MI300X", 192).rename(tables / "feasibility" / "mi300x.yaml")
    mi300x = load_catalog(tables).gpu("mi300x")
    assert mi300x.tables and mi300x.rocm  # it was taken as not ROCm: its Env plans lost their caution
    (answer,) = solver.plan("8B", gpu="mi300x", budget_gpus=8, max_model_len=32768, env=True,
                            catalog=load_catalog(tables))
    assert CautionCode.ROCM_ENV_MAY_NOT_APPLY in answer.plans[0].caution_codes
    feasibility = tables / "feasibility" / "mi300x.yaml"
    stated = feasibility.read_text(encoding="utf-8").replace("gpu: MI300X", "gpu: MI300X\nrocm: false")
    feasibility.write_text(stated, encoding="utf-8")
    with pytest.raises(TableError, match="rocm false, where the catalogue's MI300X has true: leave it out"):
        load_catalog(tables)


def test_a_pool_s_host_memory_of_true_is_refused_as_no_number(cli: Cli, tmp_path: Path):
    # `Pool._host_ram_as_typed` lets a bool through to the field's own check (True is 1 GB: never past the bound).
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET.format(link="host_ram_gb: true, "), encoding="utf-8")
    status, out, err = cli("cluster", str(fleet))
    assert (status, out) == (2, "")
    assert err == f"solve cluster: error: {fleet}: line 2: pool lab, host_ram_gb: must be a number, got true\n"


def test_solve_memory_s_pcie_caution_names_sp_1_as_the_api_does():
    estimate = solver.estimate_memory("1.7B", "4090", 2, 15360, sp=2, env=True, offload=True)
    assert estimate.caution_codes[-1] == CautionCode.SP_OVER_PCIE
    assert estimate.cautions[-1].endswith(", so the same run without SP, where it fits (sp=1), may train faster: "
                                          "time a step of each")
    assert "cost" not in estimate.cautions[-1]
