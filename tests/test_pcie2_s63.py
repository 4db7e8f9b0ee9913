"""SP over PCIe, the gaps session 62 left (session 63): ``solve memory --sp`` on a PCIe GPU gave no caution, and a GPU
type of your own could state its interconnect in a cells file only, not by --gpu-memory or a cluster file's pool; the
L20's and H20's interconnect lines cited pages nobody had read."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

import solver
from solver.results import CautionCode
from solver.rules import COMMAND_OPTIONS
from solver.tables import INTERCONNECTS, GpuType, QueryError, described_gpu_type, load_catalog, load_cells

Cli = Callable[..., tuple[int, str, str]]

PCIE_CAUTION = (
    "SP=2 on RTX-4090-24GB cards, which reach one another over PCIe: Ulysses' all-to-all crosses it, or host memory "
    "where the cards cannot reach one another directly, in every layer; the cost weighs that above NVLink's by a "
    "ranking weight, not a measured time, so a plan without SP that fits (--sp 1) may train faster: time a step of "
    "each")
"""The caution a plan with SP=2 on RTX 4090s gets (`solver.results.sp_over_pcie_caution`), word for word."""

MEMORY_PCIE_CAUTION = PCIE_CAUTION.replace(
    "; the cost weighs that above NVLink's by a ranking weight, not a measured time, so a plan without SP that fits "
    "(--sp 1) may", ", so the same run without SP, where it fits (--sp 1), may")
"""The same caution in `solve memory`'s breakdown, which shows no cost (session 64: it spoke of the cost's weight)."""

LONGEST_PCIE_CAUTION = PCIE_CAUTION.replace(
    ", so a plan without SP that fits (--sp 1) may train faster: time a step of each",
    ", and no plan without SP fits 15360 tokens here at Trinity's default token budget, but one with a lowered budget "
    "does (--sp 1 with --token-budget auto): it may train faster, so time a step of each")
"""The caution of the planner's longest plan of Qwen3-1.7B on two RTX 4090s (SP=2 at 15360 tokens), where no plan
without SP reaches its length at Trinity's default budget (session 73), but one with a lowered budget does (session
93)."""

FITS_ON_4090S = ("memory", "--model", "1.7B", "--gpu", "4090", "--gpus", "2", "--len", "15360", "--env", "--offload")
"""A setting that fits on two RTX 4090s with SP=2: the planner's longest 1.7B plan there."""

OWN_3090 = ("--gpu", "rtx-3090", "--gpu-memory", "24576MiB")
"""A GPU type of your own, by --gpu-memory."""


def test_solve_memory_cautions_sp_on_pcie_cards_as_a_plan_is(cli: Cli):
    status, out, _ = cli(*FITS_ON_4090S, "--sp", "2", "--json")
    estimate = json.loads(out)
    assert status == 0 and estimate["fits"]
    assert estimate["caution_codes"] == ["thin-headroom", "sp-over-pcie"]
    assert estimate["cautions"][-1] == MEMORY_PCIE_CAUTION != PCIE_CAUTION
    status, text, _ = cli(*FITS_ON_4090S, "--sp", "2")
    assert status == 0
    # the words wrap at the terminal's width
    assert " ".join(text.split()).count(f"caution: {MEMORY_PCIE_CAUTION}") == 1
    # The planner's plan for the same setting carries the words of the same function, with the cost's weight.
    (answer,) = solver.plan("1.7B", gpu="4090", budget_gpus=2, objective="max_len", option_names=COMMAND_OPTIONS)
    assert answer.plans[0].cautions[-1] == LONGEST_PCIE_CAUTION
    (answer,) = solver.plan("1.7B", gpu="4090", budget_gpus=2, objective="max_len")  # the API's own words
    assert answer.plans[0].cautions[-1] == LONGEST_PCIE_CAUTION.replace(
        "(--sp 1 with --token-budget auto)", '(sp=1 with token_budget="auto")')


def test_solve_memory_cautions_a_setting_that_does_not_fit_too_and_exits_1(cli: Cli):
    status, out, _ = cli("memory", "--model", "1.7B", "--gpu", "4090", "--gpus", "4", "--len", "8192", "--sp", "2",
                         "--json")
    estimate = json.loads(out)
    assert status == 1 and not estimate["fits"]
    assert estimate["caution_codes"] == ["sp-over-pcie"]


@pytest.mark.parametrize("asked", [
    ("--gpu", "4090", "--sp", "1"),  # no SP on PCIe
    ("--gpu", "h100", "--sp", "2"),  # SP on NVLink
    ("--gpu", "mi300x", "--sp", "2"),  # SP on Infinity Fabric
    (*OWN_3090, "--sp", "2"),  # SP on a GPU type of your own that states no interconnect
])
def test_solve_memory_gives_no_pcie_caution_without_sp_or_off_pcie(cli: Cli, asked: tuple[str, ...]):
    status, out, _ = cli("memory", "--model", "1.7B", "--gpus", "2", "--len", "8192", *asked, "--json")
    assert status in (0, 1)
    assert CautionCode.SP_OVER_PCIE.value not in json.loads(out)["caution_codes"]


def test_gpu_interconnect_states_a_gpu_type_of_your_own_s_link(cli: Cli):
    asked = (*OWN_3090, "--model", "1.7B", "--gpus", "4", "--maximize", "len", "--json")
    status, out, _ = cli(*asked)
    [unstated] = json.loads(out)[0]["plans"]
    assert status == 0
    # Not stated (the default): SP weighed as on NVLink, (1/4) 2 1.3 1.01, and (session 64) a caution saying so.
    assert (unstated["sp"], unstated["max_model_len"], unstated["cost"]) == (4, 30720, 0.6565)
    assert unstated["caution_codes"] == ["thin-headroom", "interconnect-not-stated"]
    status, out, _ = cli(*asked, "--gpu-interconnect", "pcie")
    [over_pcie] = json.loads(out)[0]["plans"]
    assert status == 0
    # Over PCIe: SP's weight 3 times, (1/4) 2 1.9 1.01, and the caution, naming the card as --gpu does.
    assert (over_pcie["sp"], over_pcie["max_model_len"], over_pcie["cost"]) == (4, 30720, 0.9595)
    assert over_pcie["caution_codes"] == ["thin-headroom", "sp-over-pcie"]
    assert over_pcie["cautions"][-1].startswith("SP=4 on rtx-3090 cards, which reach one another over PCIe: ")
    status, out, _ = cli(*asked, "--gpu-interconnect", "nvlink")
    [over_nvlink] = json.loads(out)[0]["plans"]
    assert status == 0 and over_nvlink["caution_codes"] == ["thin-headroom"]
    assert over_nvlink == {**unstated, "cautions": unstated["cautions"][:1], "caution_codes": ["thin-headroom"]}


def test_gpu_interconnect_reaches_solve_memory_and_the_planner_command_it_prints(cli: Cli):
    status, out, _ = cli("memory", *OWN_3090, "--gpu-interconnect", "pcie", "--model", "1.7B", "--gpus", "4",
                         "--len", "16384", "--sp", "2")
    assert status == 1
    assert "caution: SP=2 on rtx-3090 cards, which reach one another over PCIe" in out
    assert out.rstrip().endswith("solve --model 1.7B --gpu rtx-3090 --gpus 4 --len 16384 --gpu-memory 24576MiB "
                                 "--gpu-interconnect pcie")


def test_the_trinity_fragment_s_check_command_keeps_the_interconnect(cli: Cli):
    status, out, _ = cli(*OWN_3090, "--gpu-interconnect", "pcie", "--model", "1.7B", "--gpus", "4", "--maximize",
                         "len", "--emit", "trinity")
    assert status == 0
    assert ("solve --from-config CONFIG --check --gpu rtx-3090 --gpu-memory 24576MiB --gpu-interconnect pcie "
            "--critic none\n" in out)  # the plan counted no critic, which a fragment's PPO default would (s74)
    status, out, _ = cli(*OWN_3090, "--model", "1.7B", "--gpus", "4", "--maximize", "len", "--emit", "trinity")
    assert status == 0 and "--check --gpu rtx-3090 --gpu-memory 24576MiB --critic none\n" in out


def test_gpu_interconnect_without_gpu_memory_is_refused_in_one_line(cli: Cli):
    status, out, err = cli("--gpu", "h100", "--gpu-interconnect", "pcie", "--model", "1.7B", "--gpus", "2",
                           "--maximize", "len")
    assert (status, out) == (2, "")
    assert err == ("solve: error: --gpu-interconnect states the interconnect of the GPU type --gpu NAME --gpu-memory "
                   "SIZE describes: give --gpu-memory too, or drop it (the catalogue's GPU types state theirs)\n")


@pytest.mark.parametrize("command", [("--gpus", "2"), ("memory", "--gpus", "2", "--len", "8192"), ("map",)])
def test_a_bad_gpu_interconnect_is_refused_naming_the_accepted_values(cli: Cli, command: tuple[str, ...]):
    status, out, err = cli(*command, *OWN_3090, "--gpu-interconnect", "pci", "--model", "1.7B")
    assert (status, out) == (2, "")
    assert "error: argument --gpu-interconnect: invalid choice: 'pci' (choose from 'nvlink', 'infinity-fabric', " \
        "'pcie')" in err
    assert "Traceback" not in err


def test_solve_cluster_sends_gpu_interconnect_to_the_pool_field(cli: Cli, tmp_path: Path):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET.format(link="pcie"), encoding="utf-8")
    status, _, err = cli("cluster", str(fleet), "--gpu-interconnect", "pcie")
    assert status == 2
    assert err.splitlines()[-1] == ("solve cluster: error: --gpu-interconnect is an option of solve, solve memory and "
                                    "solve map, not of solve cluster (the file gives it: a pool's gpu_interconnect)")


FLEET = """\
pools:
  - {{name: lab, gpu: RTX-PRO-5000, gpu_memory_gb: 48, {link}nodes: 1, gpus_per_node: 4}}
jobs:
  - {{name: a, model: Qwen3-8B, max_model_len: {{at_least: 16384}}}}
"""
"""A fleet of one pool of a GPU type of your own (`link`: its gpu_interconnect field, with its comma, or "")."""


def placed(cli: Cli, fleet: Path) -> dict[str, object]:
    """The one placement ``solve cluster --json`` gives for `fleet`."""
    status, out, _ = cli("cluster", str(fleet), "--json")
    assert status == 0
    [placement] = json.loads(out)["placements"]
    return placement["plan"]


def test_a_pool_s_gpu_interconnect_weighs_and_cautions_sp_over_pcie(cli: Cli, tmp_path: Path):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET.format(link=""), encoding="utf-8")
    unstated = placed(cli, fleet)
    fleet.write_text(FLEET.format(link="gpu_interconnect: pcie, "), encoding="utf-8")
    over_pcie = placed(cli, fleet)
    assert (unstated["sp"], unstated["cost"], over_pcie["sp"], over_pcie["cost"]) == (4, 0.6565, 4, 0.9595)
    assert "sp-over-pcie" not in unstated["caution_codes"]
    assert over_pcie["caution_codes"][-1] == "sp-over-pcie"


def test_a_placed_job_s_caution_names_sp_1_as_planned_alone(cli: Cli, tmp_path: Path):
    # clusterrelease91: a placed job's caution said "(--sp 1)", which neither solve cluster nor a job takes (the
    # placement chooses its settings): it names the planner's option, as its --emit-dir config and the API's do
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools: [{name: l, gpu: L40S, nodes: 1, gpus_per_node: 2}]\n"
                     "jobs: [{name: j, model: Qwen3-4B, max_model_len: 4096, rollout_gpus: 0}]\n", encoding="utf-8")
    status, _, _ = cli("cluster", str(fleet), "--emit-dir", str(tmp_path / "configs"))
    written = " ".join((tmp_path / "configs" / "j.yaml").read_text(encoding="utf-8").replace("#", "").split())
    assert status == 0 and "so a plan without SP that fits (solve --sp 1) may train faster" in written
    [placement] = solver.place(fleet).placements
    assert placement.plan.sp == 2 and placement.plan.cautions[-1].endswith(
        "so a plan without SP that fits (solver.plan(sp=1)) may train faster: time a step of each")


def test_a_bad_pool_interconnect_is_refused_naming_the_accepted_values(cli: Cli, tmp_path: Path):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET.format(link="gpu_interconnect: pci, "), encoding="utf-8")
    status, out, err = cli("cluster", str(fleet))
    assert (status, out) == (2, "")
    assert err == (f"solve cluster: error: {fleet}: line 2: pool lab, gpu_interconnect: must be 'nvlink', "
                   "'infinity-fabric' or 'pcie', got 'pci'\n")


def test_a_pool_interconnect_without_its_memory_is_refused(cli: Cli, tmp_path: Path):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET.format(link="gpu_interconnect: pcie, ").replace("gpu_memory_gb: 48, ", ""),
                     encoding="utf-8")
    status, out, err = cli("cluster", str(fleet))
    assert (status, out) == (2, "")
    assert err == (f"solve cluster: error: {fleet}: line 2: pool lab: gpu_interconnect states the interconnect of a "
                   "GPU type of your own: give its memory too (gpu_memory_gb or gpu_memory_mib), or drop it (the "
                   "catalogue's GPU types state theirs)\n")


def test_two_pools_cannot_give_one_gpu_type_two_interconnects(cli: Cli, tmp_path: Path):
    fleet = tmp_path / "fleet.yaml"
    second = "  - {name: lab2, gpu: RTX-PRO-5000, gpu_memory_gb: 48, nodes: 1, gpus_per_node: 4}\njobs:"
    fleet.write_text(FLEET.format(link="gpu_interconnect: pcie, ").replace("jobs:", second), encoding="utf-8")
    status, out, err = cli("cluster", str(fleet))
    assert (status, out) == (2, "")
    assert err == (f"solve cluster: error: {fleet}: pool lab2: gpu RTX-PRO-5000 has gpu_interconnect none stated here "
                   "and pcie in another pool: give one GPU type one interconnect\n")


def test_described_gpu_type_takes_an_interconnect_with_its_source():
    stated = described_gpu_type("mycard", 48, interconnect="pcie")
    assert (stated.interconnect, stated.interconnect_source) == ("pcie", "your own")
    sourced = described_gpu_type("mycard", 48, source="--gpu-memory", interconnect="infinity-fabric",
                                 interconnect_source="--gpu-interconnect")
    assert (sourced.interconnect, sourced.interconnect_source) == ("infinity-fabric", "--gpu-interconnect")
    unstated = described_gpu_type("mycard", 48)
    assert (unstated.interconnect, unstated.interconnect_source) == (None, None)
    assert INTERCONNECTS == ("nvlink", "infinity-fabric", "pcie")


@pytest.mark.parametrize(("keywords", "error"), [
    ({"interconnect": "ethernet"}, "interconnect must be one of nvlink, infinity-fabric, pcie, got 'ethernet'"),
    ({"interconnect": 3}, "interconnect must be a str or None, got 3"),
    ({"interconnect": "pcie", "interconnect_source": "a\nb"}, "interconnect_source must be printable text, got 'a\\nb'"),
])
def test_described_gpu_type_refuses_a_bad_interconnect_in_one_line(keywords: dict[str, object], error: str):
    with pytest.raises(QueryError) as refused:
        described_gpu_type("mycard", 48, **keywords)  # type: ignore[arg-type]
    assert str(refused.value) == error


def test_an_own_plan_through_the_api_is_cautioned_over_pcie():
    catalog = load_catalog().with_gpu_types([described_gpu_type("mycard", memory_mib=24576, interconnect="pcie")])
    (answer,) = solver.plan("1.7B", gpu="mycard", budget_gpus=4, objective="max_len", catalog=catalog)
    assert answer.plans[0].cost == 0.9595 and answer.plans[0].caution_codes[-1] == CautionCode.SP_OVER_PCIE


def test_a_cells_file_s_interconnect_is_taken_in_any_case_as_the_option_and_a_pool_s_are(tmp_path: Path):
    # interconnect: PCIe in a cells file was refused (must be 'nvlink', 'infinity-fabric' or 'pcie'), where
    # --gpu-interconnect PCIe and a pool's gpu_interconnect: PCIe are taken; built in Python, it stays exact.
    cells = tmp_path / "cells.yaml"
    cells.write_text("gpu: Zeta-77GB\nmemory_gb: 77\nmemory_mib: 78000\nsource: made up\ninterconnect: PCIe\n"
                     "interconnect_source: my box\ntables:\n  - {gpus: 2, section: '2 x Zeta', models: [Qwen3-8B], "
                     "rows: [{max_model_len: 8192, cells: {Qwen3-8B: SP=2}}]}\n", encoding="utf-8")
    catalog = load_catalog()
    assert load_cells(cells, catalog.models, catalog.gpu_types).interconnect == "pcie"
    with pytest.raises(ValueError, match="input_value='PCIe'"):
        GpuType.model_validate({"gpu": "Zeta-77GB", "memory_gb": 77, "source": "made up", "interconnect": "PCIe",
                                "interconnect_source": "my box"})


def test_a_cells_file_may_not_give_a_catalogue_gpu_type_another_interconnect(cli: Cli, tmp_path: Path):
    cells = tmp_path / "cells.yaml"
    text = Path("docs/examples/my-cells.yaml").read_text(encoding="utf-8")
    cells.write_text(text.replace("source: ", "interconnect: pcie\ninterconnect_source: mine\nsource: ", 1),
                     encoding="utf-8")
    status, out, err = cli("--model", "8B", "--gpu", "h100", "--gpus", "8", "--len", "64k", "--cells", str(cells))
    assert (status, out) == (2, "")
    assert err == (f"solve: error: --cells {cells}: GPU H100-80GB: interconnect pcie, where the catalogue's H100-80GB "
                   "has nvlink: leave it out to take that\n")
    cells.write_text(text.replace("source: ", "interconnect: nvlink\ninterconnect_source: mine\nsource: ", 1),
                     encoding="utf-8")
    status, _, _ = cli("--model", "8B", "--gpu", "h100", "--gpus", "8", "--len", "64k", "--cells", str(cells))
    assert status == 0


@pytest.mark.parametrize(("link", "meant"), [
    ("pci", ""),
    ("nvswitch", "; did you mean 'nvlink'? (NVSwitch joins a node's GPUs by NVLink)"),  # another tool's name (s66)
])
def test_a_bad_cells_file_interconnect_is_refused_naming_the_accepted_values(cli: Cli, tmp_path: Path, link: str,
                                                                             meant: str):
    cells = tmp_path / "cells.yaml"
    text = Path("docs/examples/my-cells.yaml").read_text(encoding="utf-8")
    cells.write_text(text.replace("source: ", f"interconnect: {link}\ninterconnect_source: mine\nsource: ", 1),
                     encoding="utf-8")
    status, out, err = cli("--model", "8B", "--gpu", "h100", "--gpus", "8", "--len", "64k", "--cells", str(cells))
    assert (status, out) == (2, "")
    assert err == (f"solve: error: --cells {cells}: line 9: interconnect: must be 'nvlink', 'infinity-fabric' or "
                   f"'pcie', got {link!r}{meant}\n")


def test_the_l20_and_h20_interconnect_lines_say_they_are_not_sourced():
    catalog = load_catalog()
    for name, link in (("L20-48GB", "pcie"), ("H20-96GB", "nvlink")):
        gpu = catalog.gpu(name)
        assert gpu.interconnect == link
        assert gpu.interconnect_source is not None
        assert gpu.interconnect_source.startswith("not sourced: no page stating it was at hand; from recollection of ")
        assert gpu.interconnect_source.count("not checked against them") == 1


def test_a_gpu_type_of_your_own_in_a_cells_file_is_still_refused_an_interconnect_without_its_source(
        cli: Cli, tmp_path: Path):
    cells = tmp_path / "cells.yaml"
    text = Path("docs/examples/my-cells.yaml").read_text(encoding="utf-8")
    cells.write_text(text.replace("source: ", "interconnect: pcie\nsource: ", 1), encoding="utf-8")
    status, _, err = cli("--model", "8B", "--gpu", "h100", "--gpus", "8", "--len", "64k", "--cells", str(cells))
    assert status == 2
    assert err.endswith("give interconnect and interconnect_source together (the link, and where it is stated)\n")

