"""Session 66, helper persona13: what three new users (an ops engineer on AMD MI300X nodes, a researcher with a
config.json of their own on two RTX 4090s, a platform team scripting the JSON and the Python API) tripped on."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

import solver
from solver.render import json_schema
from solver.tables import QueryError

AMD_OWN = ("--model", "8B", "--gpu", "mi250x", "--gpu-memory", "128", "--len", "32k", "--gpus", "8", "--json")
"""An AMD GPU the catalogue lacks (MI250X, 128 GB), Env's plan at 32768 tokens on 8 of them."""


@pytest.mark.parametrize(("interconnect", "rocm"), [("infinity-fabric", True), ("nvlink", False), ("pcie", False),
                                                    (None, False)])
def test_a_gpu_type_described_with_infinity_fabric_is_an_amd_one(interconnect: str | None, rocm: bool):
    # Infinity Fabric GPU-to-GPU links are AMD's alone; the shipped MI300X and MI325X give rocm: true beside them.
    described = solver.described_gpu_type("card-x", memory_gb=128, interconnect=interconnect)  # type: ignore[arg-type]
    assert described.rocm is rocm


@pytest.mark.parametrize("name", ["MI250X", "my-mi300x", "mi325x-box", "AMD Instinct MI210", "instinct-lab",
                                  "radeon-pro-w7900"])
@pytest.mark.parametrize("interconnect", ["infinity-fabric", "nvlink", "pcie", None])
def test_a_gpu_type_whose_name_says_amds_is_an_amd_one_on_any_interconnect(name: str, interconnect: str | None):
    # smalls93: my-mi300x got no ROCm caution where the catalogue's MI300X does, and an MI250X on PCIe could not be
    # stated AMD's at all: infinity-fabric alone made one
    described = solver.described_gpu_type(name, memory_gb=128, interconnect=interconnect)  # type: ignore[arg-type]
    assert described.rocm is True


@pytest.mark.parametrize("name", ["m1300x", "semi300", "mi3", "xiaomi-30", "amdgpu-less"])
def test_a_name_that_holds_no_amd_word_is_not_an_amd_gpu(name: str):
    assert solver.described_gpu_type(name, memory_gb=128).rocm is False


def test_env_on_an_amd_gpu_of_your_own_is_cautioned_as_on_rocm(cli: Callable[..., tuple[int, str, str]]):
    # Before: a user's MI250X stated as infinity-fabric got Env with no word of PYTORCH_HIP_ALLOC_CONF, which the
    # catalogue's MI300X gets.
    status, out, _ = cli(*AMD_OWN, "--gpu-interconnect", "infinity-fabric")
    (answer,) = json.loads(out)
    assert (status, answer["plans"][0]["env"]) == (0, True)
    assert "rocm-env-may-not-apply" in answer["plans"][0]["caution_codes"]
    # smalls93: its name says AMD's (mi250x): on PCIe too, it is cautioned; a name that does not, stated pcie, is not
    status, out, _ = cli(*AMD_OWN, "--gpu-interconnect", "pcie")
    (answer,) = json.loads(out)
    assert (status, answer["plans"][0]["env"]) == (0, True)
    assert "rocm-env-may-not-apply" in answer["plans"][0]["caution_codes"]
    status, out, _ = cli(*[("card-x" if word == "mi250x" else word) for word in AMD_OWN], "--gpu-interconnect", "pcie")
    (answer,) = json.loads(out)
    assert (status, answer["plans"][0]["env"]) == (0, True)
    assert "rocm-env-may-not-apply" not in answer["plans"][0]["caution_codes"]


def test_a_cluster_pool_of_an_amd_gpu_of_your_own_cautions_env(cli: Callable[..., tuple[int, str, str]],
                                                               tmp_path: Path):
    fleet = tmp_path / "fleet.yaml"
    for gpu, interconnect in (("MI250X", "infinity-fabric"), ("my-mi250x", "pcie")):  # smalls93: by its name too
        fleet.write_text(f"pools:\n  - {{name: lab, gpu: {gpu}, gpu_memory_gb: 128, gpu_interconnect: {interconnect}, "
                         "nodes: 1, gpus_per_node: 8}\njobs:\n  - {name: d, model: 8B, max_model_len: 32768, "
                         "rollout_gpus: 2}\n", encoding="utf-8")
        status, out, err = cli("cluster", str(fleet), "--json")
        (placement,) = json.loads(out)["placements"]
        assert (status, err, placement["plan"]["env"]) == (0, "", True)
        assert "rocm-env-may-not-apply" in placement["plan"]["caution_codes"]


def test_a_json_schema_of_no_command_is_refused_naming_the_commands():
    # Before: KeyError('nope').
    with pytest.raises(QueryError) as refused:
        json_schema("nope")
    assert str(refused.value) == ("command must be one of solve, cluster, cluster-buy, memory, map, calibrate, "
                                  "got 'nope'")


def test_a_margin_that_is_no_number_is_told_the_forms_a_margin_takes(cli: Callable[..., tuple[int, str, str]]):
    # Before: "expected a number", which did not say that 3% is taken, nor that 3 is not.
    status, out, err = cli("--model-config", "docs/examples/my-model", "--gpu", "4090", "--gpus", "2", "--len", "4k",
                           "--margin", "abc")
    assert (status, out) == (2, "")
    assert err.splitlines()[-1] == ("solve: error: argument --margin: expected a fraction from 0 to below 1 (0.03) or "
                                    "a percentage (3%), got 'abc'")


@pytest.mark.parametrize(("command", "link", "meant"), [
    ((), "xgmi", "did you mean 'infinity-fabric'? (amd-smi's and rocm-smi's XGMI links are AMD's Infinity Fabric)"),
    (("memory",), "XGMI", ("did you mean 'infinity-fabric'? (amd-smi's and rocm-smi's XGMI links are AMD's "
                           "Infinity Fabric)")),
    (("map",), "nvswitch", "did you mean 'nvlink'? (NVSwitch joins a node's GPUs by NVLink)")])
def test_a_link_by_the_name_amd_smi_prints_is_told_the_interconnect_it_is(
        cli: Callable[..., tuple[int, str, str]], command: tuple[str, ...], link: str, meant: str):
    # rocm-smi --showtopo and amd-smi topology name the MI250X's and MI300X's links XGMI.
    length = () if command == ("map",) else ("--len", "32k", "--gpus", "8")
    status, out, err = cli(*command, "--model", "8B", "--gpu", "mi250x", "--gpu-memory", "128", *length,
                           "--gpu-interconnect", link)
    prog = " ".join(("solve", *command))
    assert (status, out) == (2, "")
    assert err.splitlines()[-1] == (f"{prog}: error: argument --gpu-interconnect: invalid choice: {link!r} (choose "
                                    f"from 'nvlink', 'infinity-fabric', 'pcie'); {meant}")


def test_a_cells_files_gpu_type_whose_name_says_amds_is_an_amd_one_unless_it_says_otherwise():
    # smalls93: as a GPU type described by its memory is (above); rocm: false, written, stays
    from solver.tables.schema import GpuType

    given = {"gpu": "my-mi300x", "memory_gb": 192, "source": "measured here"}
    assert [GpuType.model_validate(raw).rocm for raw in (given, {**given, "rocm": False}, {**given, "gpu": "card-x"})
            ] == [True, False, False]
    # mutants59: made by its field's name (name=, as populate_by_name takes it), not the YAML key: the same
    assert GpuType.model_validate({"name": "my-mi300x", "memory_gb": 192, "source": "measured here"}).rocm is True
