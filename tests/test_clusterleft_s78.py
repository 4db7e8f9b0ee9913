"""``solve cluster``'s loose ends, s78 (clusterleft): a placement that places nothing because a required job fits
nowhere keeps the pools whose host memory it rounded up (`host_rounded`, and its warning line), as the other answers
without a placement do; two ``model_config`` files that give one name to two models of one shape but otherwise
different (another ``model_type``, another context) are refused, naming both jobs and what differs (exit status 2),
and two copies of one config are one model; the smaller card's note is one function's (`smaller_card_note`), asked
only where a GPU type's own tables say nothing and the estimate does not fit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from cluster_api import place
from conftest import qwen3_8b_checkpoint
from test_cluster import round_host_memory_always

import solver
from solver.rules import Setting, TablesVerdict, smaller_card_note, smaller_card_vouching
from solver.tables import load_fleet

CATALOG = solver.load_catalog()
ROUNDED_AND_STUCK = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8,
                                "host_ram_gb": 360}],
                     "jobs": [{"name": "big", "model": "14B", "max_model_len": 61440, "trinity_version": "0.5.1"},
                              {"name": "mid", "model": "8B", "max_model_len": 61440, "trinity_version": "0.5.1"},
                              {"name": "huge", "model": "Qwen3-14B", "max_model_len": 1048576}]}
"""Two Offload jobs whose host needs a100 rounds (with `round_host_memory_always`), and a job no pool's nodes train.
The two name Trinity 0.5.1, which loads their untied models on rank 0 alone: on every rank, no release named, their
host needs leave nothing to round."""


def _fleet_file(instance: dict, tmp_path: Path) -> Path:
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(instance), encoding="utf-8")
    return path


@pytest.mark.parametrize("minimize", ["nodes", None])
def test_a_required_job_that_fits_nowhere_keeps_the_pools_whose_host_memory_was_rounded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, minimize: str | None):
    round_host_memory_always(monkeypatch)
    instance = ROUNDED_AND_STUCK
    if minimize is None:  # not every job required: huge alone, which fits nowhere
        instance = {**instance, "jobs": [*instance["jobs"][:2], {**instance["jobs"][2], "required": True}]}
    result = place(load_fleet(_fleet_file(instance, tmp_path), CATALOG), catalog=CATALOG, minimize=minimize)
    assert (result.status, result.placements, result.host_rounded) == ("infeasible", (), ("a100",))
    assert [(entry.job, entry.reason_code) for entry in result.unplaced] == [
        ("huge", "no-way-to-run"), ("big", "another-job-fits-nowhere"), ("mid", "another-job-fits-nowhere")]


def test_the_text_of_a_fleet_infeasible_by_a_job_that_fits_nowhere_warns_of_the_rounded_host_memory(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    round_host_memory_always(monkeypatch)
    path = _fleet_file(ROUNDED_AND_STUCK, tmp_path)
    status, out, _ = cli("cluster", str(path), "--minimize", "nodes")
    assert status == 1
    assert out.splitlines()[:2] == [
        "status: infeasible",
        "host memory of the jobs rounded up into classes in a100 (the ways to fill a node were too many otherwise)"]
    status, out, _ = cli("cluster", str(path), "--minimize", "nodes", "--json")
    assert (status, json.loads(out)["host_rounded"]) == (1, ["a100"])


def _two_configs(tmp_path: Path, second: dict[str, object]) -> Path:
    """A cluster file of two jobs, one and two, each with its own model_config (folders a and b) of a Qwen3-8B
    shape named org/mine; b's config with `second` on top."""
    qwen3_8b_checkpoint(tmp_path / "a", _name_or_path="org/mine")
    qwen3_8b_checkpoint(tmp_path / "b", _name_or_path="org/mine", **second)
    path = tmp_path / "fleet.yaml"
    path.write_text("pools:\n  - {name: a, gpu: A100-80GB, nodes: 2, gpus_per_node: 8}\njobs:\n"
                    "  - {name: one, model_config: a, max_model_len: 8192}\n"
                    "  - {name: two, model_config: b, max_model_len: 8192}\n", encoding="utf-8")
    return path


def test_two_copies_of_one_config_are_one_model(tmp_path: Path):
    fleet = load_fleet(_two_configs(tmp_path, {}), CATALOG)
    assert [job.model for job in fleet.jobs] == ["mine", "mine"]
    assert [model.name for model in fleet.models] == ["mine"]
    assert fleet.models[0].model_type == "qwen3"


@pytest.mark.parametrize(("second", "differing"), [
    ({"model_type": "llama"}, "their config.json's model_type"),  # each job's model was the last config's before
    ({"max_position_embeddings": 32768}, "their config.json's max_position_embeddings"),
])
def test_two_configs_of_one_name_and_shape_that_differ_otherwise_are_refused(
        cli, tmp_path: Path, second: dict[str, object], differing: str):
    path = _two_configs(tmp_path, second)
    assert cli("cluster", str(path)) == (2, "", (
        f"solve cluster: error: {path}: job two, model_config: b names its model 'mine', as job one's does, but the "
        f"two differ in {differing}: give the folders or _name_or_path different names\n"))


def test_the_smaller_card_note_is_asked_only_where_the_tables_say_nothing_and_the_estimate_does_not_fit():
    big = CATALOG.with_gpu_types([solver.described_gpu_type("big", memory_mib=102400)])
    model, sp2 = CATALOG.model("Qwen3-8B"), Setting(env=False, offload=False, sp=2)
    vouching = smaller_card_vouching(big, "big", model, 2, sp2, 16384)
    assert vouching is not None and vouching.source.gpu == "H20-96GB"

    def note(tables: TablesVerdict | None, estimate_fits: bool) -> TablesVerdict | None:
        return smaller_card_note(big, "big", model, 2, sp2, 16384, tables=tables, estimate_fits=estimate_fits)

    assert note(None, False) == vouching
    assert (note(vouching, False), note(None, True), note(vouching, True)) == (None, None, None)
