"""An infrastructure engineer's nightly script on the Python API (session 76, persona44): the fewest GPUs' default
budget is open, as docs/api.md now says; a list of GPU types with one of the script's own answers as `solve --gpu
LIST --gpu-memory` does, figure for figure; and a placement fed back as `current=`, as a result or as its saved JSON,
keeps every job where it runs, as `solve cluster --current` does."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

import solver
from solver.rules import COMMAND_OPTIONS

Cli = Callable[..., tuple[int, str, str]]
ROOT = Path(__file__).resolve().parent.parent
OWN_GPU = ("RTX-PRO-6000", 96)
"""The nightly's GPU type the catalogue lacks: its name and GB as sold, on PCIe."""
NIGHTLY_GPUS = ["a100", "h20", "h100", OWN_GPU[0]]


def _catalog() -> solver.Catalog:
    """The shipped catalogue with the nightly's own GPU type."""
    own = solver.described_gpu_type(OWN_GPU[0], memory_gb=OWN_GPU[1], interconnect="pcie")
    return solver.load_catalog().with_gpu_types([own])


def test_the_fewest_gpus_without_a_budget_weigh_every_count_and_the_page_says_so() -> None:
    fewest = solver.plan("32B", gpu=["a100", "h100"], objective="min_gpus", max_model_len=131072)
    assert [(answer.budget_gpus, answer.open_budget) for answer in fewest] == [(64, True), (64, True)]
    cheapest = solver.plan("8B", gpu=["a100", "h100"], max_model_len=32768)
    assert [(answer.budget_gpus, answer.open_budget) for answer in cheapest] == [(6, False), (6, False)]
    (alone,) = solver.plan("8B", gpu="h100", max_model_len=32768)
    assert (alone.budget_gpus, alone.open_budget) == (8, False)
    page = " ".join((ROOT / "docs" / "api.md").read_text(encoding="utf-8").split())
    assert ("`budget_gpus` (`None`: with `objective=\"min_gpus\"` or `\"min_gpu_hours\"` an open budget, every count "
            "the planner weighs, 64, "
            "`Answer.open_budget` true, as `--minimize gpus` without `--gpus`; else the largest GPU count of the GPU "
            "types' tables, 8 for one without tables)") in page


def test_a_list_with_a_gpu_type_of_ones_own_answers_as_the_command(cli: Cli) -> None:
    answers = solver.plan("32B", gpu=NIGHTLY_GPUS, objective="max_len", budget_gpus=8, catalog=_catalog(),
                          option_names=COMMAND_OPTIONS)
    status, out, _ = cli("--model", "32B", "--gpu", ",".join(NIGHTLY_GPUS), "--gpu-memory", str(OWN_GPU[1]),
                         "--gpu-interconnect", "pcie", "--maximize", "len", "--gpus", "8", "--json")
    assert status == 0
    applied = [answer.model_copy(update={"apply": solver.ApplySettings.of(solver.trinity_settings(answer, _catalog()))})
               for answer in answers]
    assert json.loads(out) == [answer.as_json() for answer in applied]
    assert [(answer.gpu, answer.best and (answer.best.gpus, answer.best.max_model_len)) for answer in answers] == [
        ("A100-80GB", (8, 158720)), ("H20-96GB", (8, 193536)), ("H100-80GB", (8, 158720)),
        ("RTX-PRO-6000", (8, 194560))]


@pytest.fixture(scope="module")
def nightly_fleet() -> solver.Fleet:
    """Twelve jobs built in code, by short names, on an A100 and an H100 pool."""
    shapes = [(model, length) for model in ("4B", "8B", "14B", "32B", "30B-A3B", "1.7B") for length in (16384, 32768)]
    jobs = [solver.Job(name=f"job{index:02d}", model=model, max_model_len=length, rollout_gpus=2,
                       priority=1 + index % 3) for index, (model, length) in enumerate(shapes)]
    pools = (solver.Pool(name="a100", gpu="a100", nodes=4, gpus_per_node=8, host_ram_gb=1024.0),
             solver.Pool(name="h100", gpu="h100", nodes=3, gpus_per_node=8))
    return solver.Fleet(pools=pools, jobs=tuple(jobs))


def test_yesterdays_placement_as_current_keeps_every_job_as_the_command_does(
        nightly_fleet: solver.Fleet, tmp_path: Path, cli: Cli) -> None:
    yesterday = solver.place(nightly_fleet, option_names=COMMAND_OPTIONS)
    assert (yesterday.status, yesterday.wall_clock_stopped, yesterday.unplaced) == ("optimal", (), ())
    assert [(placed.job, placed.pool, placed.trainer_gpus) for placed in yesterday.placements] == [
        ("job00", "a100", 2), ("job01", "a100", 2), ("job02", "h100", 2), ("job03", "h100", 2), ("job04", "a100", 2),
        ("job05", "a100", 2), ("job06", "a100", 2), ("job07", "a100", 2), ("job08", "h100", 6), ("job09", "h100", 6),
        ("job10", "a100", 2), ("job11", "a100", 2)]
    saved = tmp_path / "yesterday.json"
    saved.write_text(yesterday.model_dump_json(), encoding="utf-8")
    from_result = solver.place(nightly_fleet, option_names=COMMAND_OPTIONS, current=yesterday)
    from_file = solver.place(nightly_fleet, option_names=COMMAND_OPTIONS, current=saved)
    assert from_result.model_dump(mode="json") == from_file.model_dump(mode="json")
    assert {placed.current for placed in from_file.placements} == {"stays"}
    assert [(placed.job, placed.nodes, placed.gpu_indexes) for placed in from_file.placements] == [
        (placed.job, placed.nodes, placed.gpu_indexes) for placed in yesterday.placements]
    fleet_file = tmp_path / "fleet.yaml"
    fleet_file.write_text(json.dumps(nightly_fleet.model_dump(mode="json", exclude_defaults=True)), encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet_file), "--current", str(saved), "--json")
    assert status == 0
    assert json.loads(out) == from_file.model_dump(mode="json")
