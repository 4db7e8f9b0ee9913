"""Input forms users type (session 61): --gpu-memory reads the unit letters --host-ram reads (24G as 24GB, 24Gi as
24GiB, 24576MB and 24576M as nvidia-smi's MiB), and --trinity-version, the API's trinity_version and the API's
fragment version read a release (0.5.2, v0.6.0) as its minor version; other forms (and, s78, releases rft-solver does
not know: 0.5.3, 0.6.1) get one line naming those taken."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_cluster import reference_checked

import solver
from solver.cli.argtypes import gpu_memory, trinity_version
from solver.tables import load_catalog, trinity_release

CATALOG = load_catalog()
MEMORY_FORMS = ("64, 64G or 64GB (as sold, whole), 64GiB or 79.19GiB (torch's total capacity), or 65536MiB (nvidia-smi's "
                "total)")
RELEASE_FORMS = "takes 0.5, 0.5.0, 0.5.1, 0.5.2, 0.6 or 0.6.0 (or a tag of one, v0.5.2)"
UNKNOWN_MINOR = " (rft-solver knows the rules of these releases alone)"
PLANNED = ("--model", "0.6B", "--gpu", "mycard", "--gpus", "1", "--len", "4096")


@pytest.mark.parametrize(("text", "memory"), [
    ("24", (24, None)), ("24G", (24, None)), ("24GB", (24, None)), ("24gb", (24, None)), ("24 G", (24, None)),
    ("24Gi", (None, 24576)), ("24GiB", (None, 24576)), ("24 gib", (None, 24576)),
    ("24576MiB", (None, 24576)), ("24576MB", (None, 24576)), ("24576M", (None, 24576)), ("24576Mi", (None, 24576)),
    ("81559mib", (None, 81559)),
])
def test_gpu_memory_reads_each_unit_form(text: str, memory: tuple[int | None, int | None]):
    assert gpu_memory(text) == memory


@pytest.mark.parametrize(("text", "same_as"), [("24G", "24"), ("24Gi", "24GiB"), ("46068M", "46068MiB")])
def test_a_gpu_memory_form_plans_as_its_long_form(cli, text: str, same_as: str):
    status, out, err = cli(*PLANNED, "--gpu-memory", text)
    assert (status, out, err) == cli(*PLANNED, "--gpu-memory", same_as)
    assert status == 0 and out.startswith("mycard · Qwen3-0.6B")


@pytest.mark.parametrize("text", ["24T", "2TB", "24TiB", "25165824kB", "24.5MiB", "24x", "24 G B", "G24"])
def test_gpu_memory_refuses_other_forms_naming_those_taken(cli, text: str):
    status, out, err = cli(*PLANNED, "--gpu-memory", text)
    assert (status, out) == (2, "")
    assert err.splitlines()[-1] == f"solve: error: argument --gpu-memory: expected {MEMORY_FORMS}, got {text!r}"
    assert "Traceback" not in err


def test_gpu_memory_out_of_range_with_a_unit_letter_names_the_range(cli):
    status, _, err = cli(*PLANNED, "--gpu-memory", "5000G")
    assert (status, err.splitlines()[-1]) == (2, ("solve: error: argument --gpu-memory: must be from 8 to 4096 (GB), "
                                                  "got '5000G'"))
    status, _, err = cli(*PLANNED, "--gpu-memory", "81559")  # a bare figure keeps its hint of nvidia-smi's MiB
    assert err.splitlines()[-1].endswith("(no GPU has 81559 GB; if it is nvidia-smi's total in MiB, 79.6 GiB, give "
                                         "--gpu-memory 81559MiB)")


@pytest.mark.parametrize(("text", "minor"), [
    ("0.5", "0.5"), ("0.6", "0.6"), ("0.5.2", "0.5"), ("0.5.0", "0.5"), ("v0.5.2", "0.5"), ("V0.6.0", "0.6"),
    ("0.6.0", "0.6"), ("0.6.0.post1", "0.6"), ("0.6.0+cu121", "0.6"), (" 0.6 ", "0.6"),  # pre-releases: s79
])
def test_trinity_version_reads_a_release_as_its_minor_version(text: str, minor: str):
    assert trinity_version(text) == minor
    assert trinity_release("trinity_version", text) == minor


def test_a_patch_release_writes_what_its_minor_version_writes(cli):
    asked = ("--model", "4B", "--gpu", "a100", "--len", "8k", "--emit", "trinity", "--train-batch-size", "75")
    status, out, err = cli(*asked, "--trinity-version", "0.5.2")
    # 0.5's fragment but for the caution on a batch the 6 GPUs do not divide, which 0.5.2 takes (release05b, s77)
    minor_status, minor_out, minor_err = cli(*asked, "--trinity-version", "0.5")
    caution = re.search(r"# caution: --train-batch-size 75 does not divide by the 6 trainer GPUs.*?:859 in 0\.5\.1"
                        r".*?make it a multiple of 6\n", minor_out, flags=re.DOTALL)
    assert caution is not None and "caution" not in out
    # the check command names the release the plan was made for (planjson, s78: the minor version before)
    assert (status, out, err) == (minor_status, minor_out.replace(caution[0], "").replace(
        "--trinity-version 0.5\n", "--trinity-version 0.5.2\n"), minor_err)
    assert status == 0 and "--trinity-version 0.5.2\n" in out


@pytest.mark.parametrize(("text", "hint"), [
    ("0.4.2", UNKNOWN_MINOR), ("0.7", UNKNOWN_MINOR), ("v1.0.0", UNKNOWN_MINOR), ("0.55", UNKNOWN_MINOR),
    ("0.5.3", UNKNOWN_MINOR), ("v0.6.1", UNKNOWN_MINOR),
    ("0.5.x", ""), ("5", ""), ("", ""), ("latest", ""),
])
@pytest.mark.parametrize("command", [(), ("cluster", "fleet.yaml")])
def test_trinity_version_refuses_an_unknown_minor_naming_the_known(cli, text: str, hint: str,
                                                                   command: tuple[str, ...]):
    status, out, err = cli(*command, "--trinity-version", text)
    assert (status, out) == (2, "")
    prog = "solve cluster" if command else "solve"
    assert err.splitlines()[-1] == (f"{prog}: error: argument --trinity-version: {RELEASE_FORMS}, got {text!r}{hint}")


def test_make_query_and_plan_read_a_release_as_its_minor_version():
    for given, minor in (("0.5.2", "0.5"), ("v0.6.0", "0.6"), ("0.6", "0.6"), (None, None)):
        query = solver.make_query(CATALOG, model="4B", gpu="a100", max_model_len=8192, trinity_version=given)
        assert query.trinity_version == minor
    asked = {"gpu": "mi300x", "max_model_len": 32768, "budget_gpus": 6, "exact": True, "train_batch_size": 75}
    (patch,) = solver.plan("8B", trinity_version="0.5.2", **asked)
    (minor,) = solver.plan("8B", trinity_version="0.5", **asked)
    # 0.5.2 takes a batch the 6 GPUs do not divide (their 3 ranks do): 0.5's caution alone is not on its plan
    divides = solver.CautionCode.BATCH_DIVIDES_TRAINER_GPUS
    assert minor.best is not None and divides in minor.best.caution_codes
    assert patch.best is not None and divides not in patch.best.caution_codes
    assert [plan.setting for plan in patch.plans] == [plan.setting for plan in minor.plans]


@pytest.mark.parametrize(("given", "message"), [
    ("0.7", f"trinity_version {RELEASE_FORMS}, got '0.7'{UNKNOWN_MINOR}"),
    ("0.4.2", f"trinity_version {RELEASE_FORMS}, got '0.4.2'{UNKNOWN_MINOR}"),
    ("newest", f"trinity_version {RELEASE_FORMS}, got 'newest'"),
    # a float names the releases taken as strings too (persona63, s81: "None, 0.5, 0.6" left out the releases)
    (0.5, f"trinity_version {RELEASE_FORMS}, as a string, or None, got 0.5 (a float: pass the string '0.5')"),
    (0.7, f"trinity_version {RELEASE_FORMS}, as a string, or None, got 0.7"),
])
def test_make_query_refuses_an_unknown_release_in_one_line(given: object, message: str):
    with pytest.raises(solver.QueryError) as caught:
        solver.make_query(CATALOG, model="4B", gpu="a100", max_model_len=8192,
                          trinity_version=given)  # type: ignore[arg-type]
    assert str(caught.value) == message


def test_the_api_fragments_and_placements_read_a_release_as_its_minor_version():
    (answer,) = solver.plan("4B", gpu="a100", max_model_len=8192, train_batch_size=75)
    # planjson (s78): the check command names the release as given (0.5.0, whose batch rule 0.5 alone cautions)
    assert solver.trinity_config(answer, version="v0.5.0") == solver.trinity_config(answer, version="0.5").replace(
        "--trinity-version 0.5\n", "--trinity-version 0.5.0\n")
    # s77: 0.5.1 lays a mixture of experts out alone, so its check command names the patch (test_persona49_s77)
    assert solver.trinity_config(answer, version="v0.5.1") == solver.trinity_config(answer, version="0.5").replace(
        "--trinity-version 0.5\n", "--trinity-version 0.5.1\n")
    assert solver.trinity_settings(answer, version="0.6.0") == solver.trinity_settings(answer, version="0.6")
    with pytest.raises(solver.QueryError) as caught:
        solver.trinity_config(answer, version="0.4")
    assert str(caught.value) == f"version {RELEASE_FORMS}, got '0.4'{UNKNOWN_MINOR}"
    instance = {"pools": [{"name": "h100", "gpu": "H100-80GB", "nodes": 1, "gpus_per_node": 6}],
                "jobs": [{"name": "big", "model": "Qwen3-8B", "max_model_len": 32768, "rollout_gpus": 0,
                          "train_batch_size": 75}]}
    fleet = solver.Fleet.model_validate(instance)
    placed = solver.place(fleet, trinity_version="0.5")
    assert placed.placements[0].plan.caution_codes == (solver.CautionCode.BATCH_DIVIDES_TRAINER_GPUS,)
    # 0.5.2 takes the batch the 6 GPUs do not divide: the same placement, without 0.5's caution (release05b, s77)
    patch = solver.place(fleet, trinity_version="0.5.2")
    assert patch.placements[0].plan.caution_codes == ()
    assert patch.placements[0].plan.setting == placed.placements[0].plan.setting
    # a placement made for no release gets the caution in its fragment for the releases that may refuse the batch
    free = solver.place(fleet)
    for release, result in (("0.5", placed), ("0.5.2", patch), (None, free)):  # each release's batch rule
        reference_checked(instance, result.model_dump_json(), trinity_version=release)
    fragments = {version: solver.placement_configs(free, fleet, version=version)["big"]
                 for version in ("0.5.2", "0.5", "0.5.1")}
    cautioned = {version: "# caution: a train batch of 75 (the job's train_batch_size) does not divide" in fragment
                 for version, fragment in fragments.items()}
    assert cautioned == {"0.5.2": False, "0.5": True, "0.5.1": True}
    with pytest.raises(solver.QueryError, match=r"got '0\.7' \(rft-solver knows"):
        solver.buy_nodes(fleet, trinity_version="0.7")


def test_solver_trinity_functions_tell_a_patch_release_the_minor_version_to_pass():
    # trinity_fragment takes the minor version alone (read_trinity_config reads a release as plan does: smallslips47)
    (answer,) = solver.plan("8B", gpu="h100", max_model_len=4096)
    model = load_catalog().model("Qwen3-8B")
    with pytest.raises(solver.QueryError) as caught:
        solver.trinity.trinity_fragment(answer.plans[0], model, version="0.5.2")  # type: ignore[arg-type]
    assert str(caught.value) == "version must be one of None, 0.5, 0.6 (the minor version), got '0.5.2': pass '0.5'"
    with pytest.raises(solver.QueryError) as caught:
        solver.trinity.trinity_fragment(answer.plans[0], model, version="0.7")  # type: ignore[arg-type]
    assert str(caught.value) == "version must be one of None, 0.5, 0.6, got '0.7'"
    config = solver.trinity.read_trinity_config("model: {model_path: Qwen/Qwen3-8B}\n", "c.yaml", {}, "0.5.2")
    assert config.version == "0.5"


def test_a_cluster_files_memory_fields_name_their_unit_and_refuse_unit_letters(tmp_path: Path, cli):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: p, gpu: mycard, nodes: 1, gpus_per_node: 8, gpu_memory_gb: 24G}\n"
                     "jobs:\n  - {name: j, model: 4B, max_model_len: 8192}\n", encoding="utf-8")
    status, out, err = cli("cluster", str(fleet))
    assert (status, out) == (2, "")
    assert err.splitlines()[-1] == (f"solve cluster: error: {fleet}: line 2: pool p, gpu_memory_gb: must be a whole "
                                    "number, got '24G' (GB as sold, as a number: 24 for 24 GB; nvidia-smi's total in "
                                    "MiB goes in gpu_memory_mib)")
