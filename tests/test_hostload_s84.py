"""Which ranks load the whole model at start-up, counted honestly (hostload, s84): Trinity 0.5.0 and 0.5.1 keep verl's
rule (rank 0 for an untied model, every rank for a tied one), 0.5.2 loads it on every rank, 0.6 on rank 0 alone with
FSDP2 where the GPU's major compute capability is 9 or more and on every rank otherwise; with no release named,
every rank (the most any release loads). docs/memory.md, "Which ranks load the model"."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from config_cases import with_key, written
from test_hostref_s71 import BF16_PINNED_GIB

from solver.memory import host_moments_gib
from solver.tables import (
    TableError,
    load_catalog,
    loading_ranks,
    lower_host_count_hint,
    lower_host_count_words,
    model_loaders,
    model_loading,
    read_cells_files,
)
from solver.tables.schema import GpusFile

Cli = Callable[..., tuple[int, str, str]]

A100, H100, MI300X = "8.0", "9.0", "9.4"

GIB = 2**30
QWEN3_8B_LOAD_GIB = 4 * 8.191e9 / GIB
"""Qwen3-8B's 8.191B parameters in fp32 (tables/models.yaml), one rank's load: 30.514 GiB."""


@pytest.mark.parametrize(("release", "strategy", "capability", "expected"), [
    ("0.5.0", None, A100, "verl"), ("0.5.1", None, H100, "verl"), ("v0.5.1", "fsdp2", H100, "verl"),
    ("0.5.2", None, H100, "every-rank"), ("0.5.2", "fsdp2", H100, "every-rank"),
    ("0.5", None, H100, "every-rank"),  # no patch: the most its releases load, 0.5.2's
    ("0.6", "fsdp", H100, "every-rank"), ("0.6.0", "fsdp", A100, "every-rank"),  # FSDP1
    ("0.6", "fsdp2", A100, "every-rank"), ("0.6", None, A100, "every-rank"),  # below compute capability 9
    ("0.6", "fsdp2", H100, "rank-0"), ("0.6.0", None, H100, "rank-0"),  # 0.6's default strategy is fsdp2
    ("0.6", None, MI300X, "rank-0"), ("0.6", None, "10.0", "rank-0"), ("0.6", None, "12.0", "rank-0"),
    ("0.6", None, None, "every-rank"),  # a GPU type of your own: capability not known
    (None, None, H100, "every-rank"), (None, "fsdp2", A100, "every-rank"),  # no release named: every rank
])
def test_model_loading_by_release_strategy_and_capability(release: str | None, strategy: str | None,
                                                          capability: str | None, expected: str) -> None:
    assert model_loading(release, strategy, capability) == expected


def test_offload_is_fsdp2_whatever_the_strategy_says() -> None:
    """A plan with Offload writes trainer_strategy: fsdp2, so a config's fsdp counts as FSDP2 there."""
    assert model_loading("0.6", "fsdp", H100, offload=True) == "rank-0"
    assert model_loading("0.6", "fsdp", H100, offload=False) == "every-rank"
    assert model_loading("0.6", "fsdp", A100, offload=True) == "every-rank"


@pytest.mark.parametrize(("loading", "tied", "ranks"), [
    ("verl", False, 1), ("verl", True, 8), ("every-rank", False, 8), ("every-rank", True, 8),
    ("rank-0", False, 1), ("rank-0", True, 1),
])
def test_loading_ranks_of_a_node_of_eight(loading: str, tied: bool, ranks: int) -> None:
    assert loading_ranks(loading, tied, 8) == ranks  # type: ignore[arg-type]
    assert model_loaders(loading, tied) == ("rank-0" if ranks == 1 else "every-rank")  # type: ignore[arg-type]


def test_the_releases_whose_rank_0_alone_loads_the_model() -> None:
    # s87: some_release_loads_on_rank_0 is gone; lower_host_count_words says it per release, its loading alone here
    def rank_0(tied: bool, capability: str | None) -> list[str]:
        return [release for release in ("0.5.0", "0.5.1", "0.5.2", "0.6.0")
                if lower_host_count_words(release, tied, capability, reference_counts=False)]
    assert rank_0(False, A100) == ["0.5.0", "0.5.1"]  # verl's rule: an untied model on rank 0
    assert rank_0(True, A100) == []  # a tied model on an A100: every rank under each
    assert rank_0(True, H100) == ["0.6.0"]  # 0.6 with FSDP2 on an H100
    assert rank_0(True, None) == []  # a GPU type of your own
    assert lower_host_count_words("0.5.1", False, A100, loading_counts=False) == [
        "verl 0.7 builds the reference model in bf16 and places the pinned blocks"]


def test_the_hint_names_every_reason_a_release_counts_less() -> None:
    # s87: the hint said "counts a release's own loading" alone; 0.5's bf16 reference model lowers every need that
    # counts one, loading or not, and a need of one rank's load names no loading
    assert lower_host_count_hint(False, "every-rank", 8, True, True, False, H100, "--trinity-version") == (
        "; --trinity-version counts a release's own, less where rank 0 alone loads the model (0.6, 0.5.1 and 0.5.0) "
        "or verl 0.7 builds the reference model in bf16 and places the pinned blocks (0.5)")  # each 0.5 patch: 0.5
    assert lower_host_count_hint(False, "every-rank", 8, False, True, True, A100, "trinity_version") == (
        "; trinity_version counts a release's own, less where verl 0.7 builds the reference model in bf16 and places "
        "the pinned blocks (0.5)")  # training is the need: loading lowers nothing
    assert lower_host_count_hint(False, "every-rank", 1, True, False, False, A100, "x") == ""  # 1 rank, no reference
    assert lower_host_count_hint(True, "every-rank", 8, True, True, False, H100, "x") == ""  # a release named


def test_every_catalogue_gpu_type_gives_its_compute_capability() -> None:
    capabilities = {gpu.name: gpu.compute_capability for gpu in load_catalog().gpu_types}
    assert (capabilities["A100-80GB"], capabilities["H20-96GB"], capabilities["H100-80GB"], capabilities["L40S-48GB"],
            capabilities["B200"], capabilities["MI300X"]) == ("8.0", "9.0", "9.0", "8.9", "10.0", "9.4")
    assert all(capabilities.values())


def _gpus_file(**row: object) -> dict[str, object]:
    gpu = {"name": "X-80GB", "memory_gb": 80, "interconnect": "nvlink", "interconnect_source": "a datasheet",
           "source": "a datasheet", **row}
    return {"gpus": [{key: value for key, value in gpu.items() if value is not None}]}


def test_the_schema_refuses_a_gpu_type_without_a_compute_capability_or_with_one_not_major_minor() -> None:
    assert GpusFile.model_validate(_gpus_file(compute_capability="9.0")).gpus[0].compute_capability == "9.0"
    with pytest.raises(ValueError, match="X-80GB: give its compute_capability"):
        GpusFile.model_validate(_gpus_file())
    with pytest.raises(ValueError, match="'9' is no compute capability"):
        GpusFile.model_validate(_gpus_file(compute_capability="9"))


def test_a_cells_file_stating_another_compute_capability_is_refused(tmp_path: Path) -> None:
    cells = tmp_path / "a100.yaml"
    cells.write_text(yaml.safe_dump({
        "gpu": "A100-80GB", "memory_gb": 80, "compute_capability": "9.0", "source": "my runs",
        "tables": [{"gpus": 8, "section": "mine", "models": ["Qwen3-8B"], "rows": [{"max_model_len": 8192,
                                                                                    "cells": {"Qwen3-8B": "vanilla"}}]}]}))
    with pytest.raises(TableError, match="compute_capability 9.0, where the catalogue's A100-80GB has 8.0"):
        read_cells_files(load_catalog(), [cells])


def _plan(cli: Cli, *argv: str) -> dict[str, object]:
    status, out, err = cli("--model", "8B", "--gpus", "8", "--exact", "--len", "8192", *argv, "--json")
    assert status == 0, err
    plan: dict[str, object] = json.loads(out)[0]["plans"][0]
    return plan


@pytest.mark.parametrize(("release", "gpu", "loaders", "loading"), [
    ("0.6", "a100", 8, "every-rank"), ("0.6", "h100", 1, "rank-0"), ("0.5.1", "a100", 1, "rank-0"),
    ("0.5.2", "h100", 8, "every-rank"), (None, "h100", 8, "every-rank"),
])
def test_solve_counts_the_ranks_loading_the_model_without_offload(cli: Cli, release: str | None, gpu: str,
                                                                  loaders: int, loading: str) -> None:
    """Without Offload or a reference model the need is the load alone: the fp32 model on each loading rank of the
    node of 8, rounded up to a tenth (244.2 GiB on every rank, 30.6 on one). 0.5.1 builds a reference model whatever
    the algorithm (s91: --no-reference refused there), so its need adds the node's bf16 pinned shards (20.3 GiB)."""
    reference = () if release == "0.5.1" else ("--no-reference",)
    plan = _plan(cli, "--gpu", gpu, "--no-offload", *reference, "--host-ram", "1000",
                 *(("--trinity-version", release) if release else ()))
    expected = {8: 244.2, 1: 30.6}[loaders]
    assert abs(expected - loaders * QWEN3_8B_LOAD_GIB) < 0.1
    expected = round(expected + (0 if reference else BF16_PINNED_GIB), 1)
    assert (plan["host_memory_gb"], plan["model_loading"], plan["offload"]) == (expected, loading, False)


def test_solve_with_offload_counts_eight_loaders_under_06_on_a100_and_one_under_051(cli: Cli) -> None:
    """With Offload the start-up need adds the loads of the seven other ranks of the node under 0.6 on A100s (compute
    capability 8.0): 325.4 GiB, 7 x 30.514 more than rank 0 alone would load beside the same pinned shards, and above
    training's 183.0; on H100s (9.0) 0.6 loads on rank 0 alone, 111.8 at start-up, so training's 183.0 is the need;
    0.5.1 (verl's rule) loads the untied Qwen3-8B on rank 0 too, its need training's 162.6 (a bf16 reference)."""
    on_a100 = _plan(cli, "--gpu", "a100", "--offload", "--env", "--sp", "1", "--trinity-version", "0.6")
    on_h100 = _plan(cli, "--gpu", "h100", "--offload", "--env", "--sp", "1", "--trinity-version", "0.6")
    under_051 = _plan(cli, "--gpu", "a100", "--offload", "--env", "--sp", "1", "--trinity-version", "0.5.1")
    figures = {name: (plan["host_memory_gb"], plan["host_training_gb"], plan["model_loading"])
               for name, plan in (("a100", on_a100), ("h100", on_h100), ("0.5.1", under_051))}
    assert figures == {"a100": (325.4, 183.0, "every-rank"), "h100": (183.0, None, "rank-0"),
                       "0.5.1": (162.6, None, "rank-0")}
    model = load_catalog().model("Qwen3-8B")
    every_rank, _ = host_moments_gib(model, 8, 8, True, "0.6", loading="every-rank")
    rank_0, _ = host_moments_gib(model, 8, 8, True, "0.6", loading="rank-0")
    assert abs(every_rank - rank_0 - 7 * QWEN3_8B_LOAD_GIB) < 1e-3
    assert (round(every_rank, 1), round(rank_0, 1)) == (325.4, 111.8)


def test_host_ram_now_refuses_a_plan_it_passed_before(cli: Cli) -> None:
    """Qwen3-8B with Offload on 8 A100s under 0.6 needs 325.4 GiB a node at start-up, every rank loading it (183.0
    was counted on rank 0 alone before): --host-ram 256 refuses it; under 0.5.1, rank 0 alone, 162.6 fits."""
    asked = ("--model", "8B", "--gpu", "a100", "--gpus", "8", "--exact", "--len", "32768", "--offload",
             "--host-ram", "256")
    status, out, _ = cli(*asked, "--trinity-version", "0.6")
    assert status == 1
    assert "trains with --offload --host-ram 256 GiB" in " ".join(out.split())
    assert "it needs 325.4 GiB of host memory per node" in " ".join(out.split())
    status, out, _ = cli(*asked, "--trinity-version", "0.5.1")
    assert status == 0
    assert "162.6 GiB per node for Offload, within --host-ram 256 GiB" in " ".join(out.split())


def test_the_host_memory_row_says_which_ranks_load_and_hints_at_the_release(cli: Cli) -> None:
    status, out, _ = cli("--model", "8B", "--gpu", "a100", "--gpus", "8", "--exact", "--len", "32768", "--offload")
    assert status == 0
    assert ("host memory 325.4 GiB per node for Offload (at start-up, every rank loading the model; 183.0 while "
            "training); not checked: --host-ram not given; --trinity-version counts a release's own, less where rank 0 "
            "alone loads the model (0.5.1 and 0.5.0) or verl 0.7 builds the reference model in bf16 and places the "
            "pinned blocks (0.5)") in (
        " ".join(out.split()))
    # s87: every release loads the tied 4B on every rank of an A100 node, but 0.5's bf16 reference model lowers the
    # need all the same: the row hinted nothing before
    status, out, _ = cli("--model", "4B", "--gpu", "a100", "--gpus", "8", "--exact", "--len", "32768", "--offload")
    assert status == 0
    assert ("93.4 while training); not checked: --host-ram not given; --trinity-version counts a release's own, less "
            "where verl 0.7 builds the reference model in bf16 and places the pinned blocks (0.5) unpinned") in (
        " ".join(out.split()))
    status, out, _ = cli("--model", "8B", "--gpu", "h100", "--gpus", "8", "--exact", "--len", "8192", "--no-offload",
                         "--host-ram", "1000", "--trinity-version", "0.6")
    assert status == 0
    assert "(rank 0 loading the model)" in " ".join(out.split())


def test_solve_memory_json_gives_the_loading_it_counts(cli: Cli) -> None:
    common = ("memory", "--model", "8B", "--gpus", "8", "--len", "8192", "--no-offload", "--json")
    counted = {}
    for gpu, release in (("a100", "0.6"), ("h100", "0.6"), ("a100", "0.5.2"), ("a100", "0.5.1"), ("a100", None)):
        status, out, _ = cli(*common, "--gpu", gpu, *(("--trinity-version", release) if release else ()))
        assert status == 0
        answer = json.loads(out)
        counted[gpu, release] = (answer["host_memory_gib"], answer["model_loading"])
    assert counted == {("a100", "0.6"): (284.8, "every-rank"), ("h100", "0.6"): (71.2, "rank-0"),
                       ("a100", "0.5.2"): (264.5, "every-rank"), ("a100", "0.5.1"): (50.9, "rank-0"),
                       ("a100", None): (284.8, "every-rank")}


@pytest.mark.parametrize(("strategy", "offload", "loading"), [
    ("fsdp", "--no-offload", "every-rank"), ("fsdp2", "--no-offload", "rank-0"), (None, "--no-offload", "rank-0"),
    ("fsdp", "--offload", "rank-0"),  # an Offload plan writes trainer_strategy: fsdp2
])
def test_from_config_counts_the_configs_strategy(cli: Cli, tmp_path: Path, strategy: str | None, offload: str,
                                                 loading: str) -> None:
    """Under 0.6 on H100s, a config's FSDP1 (trainer_strategy: fsdp) loads the model on every rank of the trainer's 4
    GPUs, its FSDP2 (0.6's default where unset) on rank 0 alone: 3 x 30.514 GiB apart without Offload."""
    config = with_key("trainer.trainer_strategy", strategy) if strategy else with_key("trainer", {})
    status, out, err = cli("--from-config", str(written(tmp_path, config)), "--gpu", "h100", "--trinity-version",
                           "0.6", "--host-ram", "1000", offload, "--json")
    assert status == 0, err
    plan = json.loads(out)[0]["plans"][0]
    assert (plan["gpus"], plan["model_loading"]) == (4, loading)
    if offload == "--no-offload":
        model = load_catalog().model("Qwen3-8B")
        need = host_moments_gib(model, 4, 8, False, "0.6", loading=loading)[0]
        assert plan["host_memory_gb"] == math.ceil(round(need * 10, 6)) / 10
        assert abs(host_moments_gib(model, 4, 8, False, "0.6", loading="every-rank")[0]
                   - host_moments_gib(model, 4, 8, False, "0.6", loading="rank-0")[0] - 3 * QWEN3_8B_LOAD_GIB) < 1e-3
