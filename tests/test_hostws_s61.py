"""Host memory on workstation cards (session 61): an Offload plan on a GeForce card is cautioned past the 64 GiB a
workstation commonly has for the whole box (`GpuType.workstation_host_ram_gib`), not past 128 GiB for each GPU, which
made a second card in the same 64 GB box silence the caution."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import solver
from solver.results import CautionCode, unchecked_host_need
from solver.rules import COMMAND_OPTIONS
from solver.tables import TableError
from solver.tables.reading import load_gpu_type, load_validated
from solver.tables.schema import GpusFile

CATALOG = solver.load_catalog()


REFERENCE_HINT = ("; --trinity-version counts a release's own, less where verl 0.7 builds the reference model in bf16 "
                  "and places the pinned blocks (0.5)")
"""s87: where no release is named, the caution ends as the host memory row does (`lower_host_count_hint`): 0.5's
bf16 reference model counts less."""


def workstation_caution(need: str, gpu: str = "RTX-4090-24GB", source: str = "--host-ram", hint: str = "") -> str:
    """The host-memory caution on a workstation card, as the planner words it (`hint`: `REFERENCE_HINT` where no
    release is named)."""
    return (f"Offload needs {need} GiB of host memory per node, more than the 64 GiB a workstation of {gpu} cards "
            f"commonly has (for the whole box, not each card), and nothing checks it: give {source} what a node can "
            f"spare for the trainer (free -g's total less what the OS, Ray and the rollout take) to check it{hint}")


def shown_caution(out: str, start: str) -> str:
    """The caution of `out` that starts with `start`, its wrapped lines joined."""
    lines = out.splitlines()
    first = next(index for index, line in enumerate(lines) if line.startswith(f"caution        {start}"))
    end = next(index for index in range(first + 1, len(lines)) if not lines[index].startswith(" " * 15))
    return " ".join(" ".join(lines[first:end]).split())


@pytest.mark.parametrize(("model", "need"), [("8B", "183.0"), ("4B", "93.4")])
def test_the_reviews_two_4090s_are_cautioned_past_a_workstations_64_gib(cli, model: str, need: str):
    # Before: "not checked: --host-ram not given" and no caution, for 81.3 and 41.4 GiB per GPU were within 128.
    flags = ("--gpu", "4090", "--gpus", "2", "--model", model, "--maximize", "len")
    status, out, err = cli(*flags)
    assert (status, err) == (0, "")
    assert shown_caution(out, "Offload needs ") == f"caution {workstation_caution(need, hint=REFERENCE_HINT)}"
    assert f"host memory {need} GiB per node for Offload; not checked: --host-ram not given{REFERENCE_HINT}" in (
        " ".join(out.split()))
    status, out, _ = cli(*flags, "--json")
    [best, *_] = json.loads(out)[0]["plans"]
    # (a thin headroom's caution comes first where the plan has one: the 8B's, not the 4B's at a 4090's margin; SP
    # over PCIe's last, where the plan has SP)
    assert (status, best["gpus"], best["offload"], best["host_memory_gb"], best["caution_codes"][-2:]) == (
        0, 2, True, float(need), ["host-memory-unchecked", "sp-over-pcie"])
    assert best["cautions"][-2] == workstation_caution(need, hint=REFERENCE_HINT)


def test_one_4090_is_still_cautioned_now_from_qwen3_4b_up():
    needs = {model: solver.plan(model, gpu="rtx-4090", budget_gpus=1, max_model_len=4096,
                                option_names=COMMAND_OPTIONS)[0].best
             for model in ("1.7B", "4B", "8B")}
    assert [(plan.offload, plan.host_memory_gb, plan.caution_codes) for plan in needs.values()] == [
        (True, 38.6, ()),  # within 64 GiB
        (True, 93.4, (CautionCode.HOST_MEMORY_UNCHECKED, CautionCode.SINGLE_GPU_ADVISED_AGAINST)),
        (True, 183.0, (CautionCode.HOST_MEMORY_UNCHECKED, CautionCode.SINGLE_GPU_ADVISED_AGAINST))]
    assert needs["8B"].cautions[0] == workstation_caution("183.0", hint=REFERENCE_HINT)


def test_a_5090_is_held_to_a_workstations_64_gib_too():
    (answer,) = solver.plan("8B", gpu="5090", budget_gpus=2, max_model_len=4096, option_names=COMMAND_OPTIONS)
    assert (answer.best.gpus, answer.best.host_memory_gb, answer.best.caution_codes) == (
        2, 183.0, (CautionCode.HOST_MEMORY_UNCHECKED,))
    assert answer.best.cautions[0] == workstation_caution("183.0", "RTX-5090-32GB", hint=REFERENCE_HINT)


def test_the_geforce_cards_alone_are_workstation_cards():
    # Professional and data-centre cards of 24-48 GB ship in servers of 4 and 8: 128 GiB per GPU, as before.
    assert {gpu.name: gpu.workstation_host_ram_gib for gpu in CATALOG.gpu_types
            if gpu.workstation_host_ram_gib is not None} == {"RTX-4090-24GB": 64, "RTX-5090-32GB": 64}


def test_a_server_gpus_plan_is_cautioned_as_before(cli):
    status, out, _ = cli("--gpu", "h100", "--gpus", "1", "--model", "14B", "--len", "4096")
    assert status == 0 and shown_caution(out, "Offload needs ") == (
        "caution Offload needs 351.6 GiB of host memory per node, more than the 128 GiB assumed for its one trainer "
        "GPU there (128 GiB per GPU, as servers commonly have: a DGX A100's 1 TB for 8; --node-gpus counts all of a "
        "node's GPUs), and nothing checks it: give --host-ram what a node can spare for the trainer (free -g's total "
        f"less what the OS, Ray and the rollout take) to check it{REFERENCE_HINT}")
    (answer,) = solver.plan("4B", gpu="h100", budget_gpus=2, max_model_len=4096)
    assert CautionCode.HOST_MEMORY_UNCHECKED not in answer.best.caution_codes  # 93.4 GiB on a server: no caution


def test_the_threshold_is_the_whole_boxs_however_many_cards():
    box = CATALOG.gpu("4090")
    assert unchecked_host_need(64.0, box, 1, None, True, "--host-ram") is None
    assert unchecked_host_need(64.0, box, 4, None, True, "--host-ram") is None
    assert unchecked_host_need(64.1, box, 4, None, True, "--host-ram") == workstation_caution("64.1")
    # s88: without Offload too, the start-up load (every rank loading the model) past the box's 64 GiB
    assert unchecked_host_need(64.0, box, 2, None, False, "--host-ram") is None
    assert unchecked_host_need(300.0, box, 2, None, False, "--host-ram") == (
        "the trainer needs 300.0 GiB of host memory per node while the model loads (every rank loading the model), "
        + workstation_caution("300.0").split(", ", 1)[1])
    assert unchecked_host_need(300.0, box, 2, None, True, None) is None  # host memory given: plans held to it


def test_host_ram_checks_it_instead_ruling_the_need_in_or_out(cli):
    flags = ("--gpu", "4090", "--gpus", "2", "--model", "4B", "--maximize", "len")
    status, out, _ = cli(*flags, "--host-ram", "64", "--json")
    [answer] = json.loads(out)
    assert (status, answer["status"], answer["plans"]) == (1, "infeasible", [])
    assert answer["reason"].startswith("nothing in the tables and the memory model's estimates for Qwen3-4B on "
                                       "RTX-4090-24GB within 2 GPUs trains with --host-ram 64 GiB")
    status, out, _ = cli(*flags, "--host-ram", "96", "--json")
    [best, *_] = json.loads(out)[0]["plans"]
    assert (status, best["offload"], best["host_memory_gb"], best["caution_codes"]) == (
        0, True, 93.4, ["sp-over-pcie"])


def test_solve_memory_on_a_4090_is_cautioned_past_64_gib(cli):
    flags = ("memory", "--model", "4B", "--gpu", "4090", "--gpus", "2", "--len", "4k", "--offload", "--env")
    status, out, _ = cli(*flags, "--json")
    estimate = json.loads(out)
    assert (status, estimate["host_memory_gib"], estimate["caution_codes"], estimate["cautions"]) == (
        0, 93.4, ["host-memory-unchecked"], [workstation_caution("93.4", hint=REFERENCE_HINT)])  # s87: as solve
    status, out, _ = cli(*flags, "--host-ram", "96", "--json")
    assert (status, json.loads(out)["caution_codes"]) == (0, [])


def test_a_pool_of_4090s_without_host_ram_gb_is_cautioned(cli, tmp_path: Path):
    fleet = tmp_path / "fleet.yaml"
    pool = "pools:\n  - {name: box, gpu: rtx-4090, nodes: 1, gpus_per_node: 2%s}\n"
    jobs = "jobs:\n  - {name: eight, model: 8B, max_model_len: 4096}\n"
    fleet.write_text(pool % "" + jobs)
    status, out, _ = cli("cluster", str(fleet), "--json")
    [placed] = json.loads(out)["placements"]
    assert (status, placed["plan"]["gpus"], placed["plan"]["host_memory_gb"], placed["plan"]["caution_codes"],
            placed["plan"]["cautions"]) == (
        0, 2, 183.0, ["host-memory-unchecked"],
        [workstation_caution("183.0", source="the pool's host_ram_gb",
                             hint=REFERENCE_HINT.replace(
                                 "--trinity-version", "the job's trinity_version (or the run's --trinity-version)"))])
    fleet.write_text(pool % ", host_ram_gb: 192" + jobs)
    status, out, _ = cli("cluster", str(fleet), "--json")
    [placed] = json.loads(out)["placements"]
    assert (status, placed["plan"]["host_memory_gb"], placed["plan"]["caution_codes"]) == (0, 183.0, [])


CELLS = ("gpu: RTX-3090-24GB\nmemory_gb: 24\n{field}source: mine\ntables:\n  - gpus: 2\n    section: mine\n"
         "    models: [Qwen3-4B]\n    rows:\n      - {{max_model_len: 4096, cells: {{Qwen3-4B: Env + Offload}}}}\n")


@pytest.mark.parametrize(("value", "problem"), [
    ("0", "must be above 0, got 0"),
    ("64.5", "must be a whole number, got 64.5"),
    ('"64"', "must be a whole number, got '64' (quoted, YAML reads it as text: write it without quotes)"),
    ("100000", "must be at most 49152, got 100000"),
])
def test_a_bad_workstation_host_ram_is_refused_in_one_line(cli, tmp_path: Path, value: str, problem: str):
    cells = tmp_path / "cells.yaml"
    cells.write_text(CELLS.format(field=f"workstation_host_ram_gib: {value}\n"))
    status, out, err = cli("--cells", str(cells), "--gpu", "RTX-3090-24GB", "--gpus", "2", "--model", "4B",
                           "--len", "4096")
    assert (status, out, err) == (2, "", (f"solve: error: --cells {cells}: line 3: workstation_host_ram_gib: "
                                          f"{problem}\n"))
    gpus = tmp_path / "gpus.yaml"
    gpus.write_text("gpus:\n  - {name: RTX-3090-24GB, memory_gb: 24, source: mine, workstation_host_ram_gib: "
                    f"{value}}}\n")
    with pytest.raises(TableError) as refused:
        load_validated(GpusFile, gpus)
    assert str(refused.value) == f"{gpus}: gpu RTX-3090-24GB, workstation_host_ram_gib: {problem}"


def test_a_workstation_card_of_your_own_is_cautioned_past_what_you_give(cli, tmp_path: Path):
    cells = tmp_path / "cells.yaml"
    cells.write_text(CELLS.format(field="workstation_host_ram_gib: 32\n"))
    status, out, _ = cli("--cells", str(cells), "--gpu", "RTX-3090-24GB", "--gpus", "2", "--model", "4B",
                         "--len", "4096", "--json")
    [best, *_] = json.loads(out)[0]["plans"]
    assert (status, best["host_memory_gb"], best["caution_codes"]) == (0, 93.4, ["host-memory-unchecked"])
    assert "more than the 32 GiB a workstation of RTX-3090-24GB cards commonly has" in best["cautions"][0]
    cells.write_text(CELLS.format(field=""))  # a GPU type of your own is taken as a server's: 128 GiB per GPU
    status, out, _ = cli("--cells", str(cells), "--gpu", "RTX-3090-24GB", "--gpus", "2", "--model", "4B",
                         "--len", "4096", "--json")
    assert (status, json.loads(out)[0]["plans"][0]["caution_codes"]) == (0, [])


def test_tables_of_a_workstation_card_keep_its_host_memory(tmp_path: Path):
    # A feasibility file (or cells file) for the RTX 4090 takes the catalogue's entry, as it takes its driver MiB.
    path = tmp_path / "rtx-4090.yaml"
    path.write_text(CELLS.replace("RTX-3090-24GB", "rtx-4090").format(field=""))
    tabled = load_gpu_type(path, CATALOG.models, CATALOG.gpu_types)
    assert (tabled.name, tabled.memory_mib, tabled.workstation_host_ram_gib) == ("RTX-4090-24GB", 24564, 64)
