"""Session 85, otherwords: the host memory row's clause on the other Trinity release gives a reason only where that
part of the other release's count alone moves its figure (its reference model's precision, its pinned blocks'
placement, its experts' layout, its loading), and names the patch whose loading it counts where the patches of a
minor version differ (0.5.2's every rank, where 0.5.0 and 0.5.1 load an untied model on rank 0); the caution that
nothing checks the host need says which moment the figure is and which ranks load the model."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from test_smallslips37_s80 import _row

import solver
from solver.cluster.options import job_options
from solver.memory import shown_host_need
from solver.tables import load_catalog

Cli = Callable[..., tuple[int, str, str]]


def _host_row(cli: Cli, *argv: str) -> str:
    """`solve`'s host memory row for `argv` at 16384 tokens within 1000 GiB of host memory, its lines joined."""
    status, out, _ = cli(*argv, "--len", "16k", "--host-ram", "1000")
    assert status == 0
    return _row(out, "host memory")


def test_eight_gpus_split_every_block_evenly_so_the_placement_is_no_reason(cli: Cli) -> None:
    assert _host_row(cli, "--model", "8B", "--gpus", "8", "--gpu", "a100", "--trinity-version", "0.5.2") == (
        "264.5 GiB per node while the model loads (every rank loading the model), within --host-ram 1000 GiB; "
        "Trinity 0.6 needs 284.8 (the reference model in fp32 where 0.5's is bf16)")
    # on 6 GPUs the 8B's down_proj (4096 x 12288) is placed by its columns under 0.5: the placement is a reason there
    assert _host_row(cli, "--model", "8B", "--gpus", "6", "--gpu", "a100", "--trinity-version", "0.5.2") == (
        "200.5 GiB per node while the model loads (every rank loading the model), within --host-ram 1000 GiB; "
        "Trinity 0.6 needs 224.6 (the reference model in fp32 where 0.5's is bf16; each pinned block by rows where "
        "0.5's verl 0.7 places it)")


def test_the_placement_alone_moves_the_figure_on_6_gpus_not_on_8() -> None:
    model = load_catalog().model("Qwen3-8B")
    for gpus, moved in ((6, True), (8, False)):
        placed, by_rows = (shown_host_need(model, gpus, 8, False, "0.5", loading="every-rank", placed=placed)
                           for placed in (True, False))
        assert (placed != by_rows) is moved
        assert placed == shown_host_need(model, gpus, 8, False, "0.5", loading="every-rank")  # 0.5's own placement


def test_one_gpu_loads_on_its_one_rank_so_the_loading_is_no_reason(cli: Cli) -> None:
    status, out, _ = cli("--model", "14B", "--len", "16k", "--minimize", "gpus", "--dpo", "--gpu", "h20",
                         "--trinity-version", "0.6")
    assert status == 0
    assert _row(out, "host memory").endswith(
        "Trinity 0.5 needs 311.3 (the reference model in bf16 where 0.6's is fp32)")


def test_the_other_family_names_the_patch_whose_loading_it_counts(cli: Cli) -> None:
    # 0.5 without its patch counts every rank, 0.5.2's loading; 0.5.0 and 0.5.1 load the untied 8B on rank 0
    assert _host_row(cli, "--model", "8B", "--gpus", "6", "--gpu", "h100", "--trinity-version", "0.6") == (
        "72.0 GiB per node while the model loads (rank 0 loading the model), within --host-ram 1000 GiB; Trinity 0.5 "
        "needs 200.5 (the reference model in bf16 where 0.6's is fp32; each pinned block as its verl 0.7 places it "
        "where 0.6's is by rows; the model loaded on every rank as 0.5.2 loads it where 0.6's loads it on rank 0)")
    # every 0.5 patch loads the tied 4B on every rank: the minor version alone is named
    assert _host_row(cli, "--model", "4B", "--gpus", "6", "--gpu", "h100", "--trinity-version", "0.6").endswith(
        "Trinity 0.5 needs 97.9 (the reference model in bf16 where 0.6's is fp32; the model loaded on every rank "
        "where 0.6's loads it on rank 0)")


def test_the_named_release_is_the_patch_counted(cli: Cli) -> None:
    assert _host_row(cli, "--model", "4B", "--gpus", "6", "--gpu", "h100", "--trinity-version", "0.5.1").endswith(
        "Trinity 0.6 needs 30.9 (the reference model in fp32 where 0.5's is bf16; the model loaded on rank 0 where "
        "0.5.1's loads it on every rank)")
    assert _host_row(cli, "--model", "8B", "--gpus", "6", "--gpu", "h100", "--trinity-version", "0.5").endswith(
        "the model loaded on rank 0 where 0.5.2's loads it on every rank)")  # 0.5 unpatched counts 0.5.2's


def test_without_a_reference_model_on_06_the_05_figure_counts_the_one_05_builds(cli: Cli) -> None:
    # Before, 0.5's figure left the reference model out too (183.1, the loading its one reason), though 0.5.0 and 0.5.1
    # build one whatever the algorithm (SFT too; 0.5.2 for a KL term, s91): its figure is 0.5's plan's own, 200.5;
    # with LoRA neither builds one.
    assert _host_row(cli, "--model", "8B", "--gpus", "6", "--gpu", "h100", "--trinity-version", "0.6",
                     "--no-reference").endswith(
        "Trinity 0.5 needs 200.5 (a reference model in bf16, which 0.5.0 and 0.5.1 build whatever the algorithm "
        "(0.5.2 where a KL term reads it), where 0.6 builds none; each pinned block as its verl 0.7 places it where 0.6's is by rows; the model loaded on every rank as "
        "0.5.2 loads it where 0.6's loads it on rank 0)")
    assert _host_row(cli, "--model", "8B", "--gpus", "6", "--gpu", "h100", "--trinity-version", "0.5").startswith(
        "200.5 GiB per node")
    assert _host_row(cli, "--model", "8B", "--gpus", "6", "--gpu", "h100", "--trinity-version", "0.6",
                     "--lora-rank", "16").endswith(
        "Trinity 0.5 needs 184.1 (the model loaded on every rank as 0.5.2 loads it where 0.6's loads it on rank 0)")


def test_the_unchecked_host_caution_says_every_rank_loads_the_model(cli: Cli) -> None:
    # the 32B's 8 ranks each loading 122 GiB in fp32: 1256.4 GiB at start-up on a node assumed to have 1 TB, which
    # training (664.2) and rank 0's loading alone would not pass; no release named counts every rank
    status, out, _ = cli("--model", "32B", "--len", "16k", "--gpus", "8", "--gpu", "a100")
    assert status == 0
    assert _row(out, "caution").startswith(
        "Offload needs 1256.4 GiB of host memory per node (157.1 GiB per trainer GPU; at start-up, every rank loading "
        "the model; 664.2 while training), more than the 1024 GiB assumed for its 8 trainer GPUs there")
    # s87: naming a release counts its own, as 0.5.0 and 0.5.1 load this untied model on rank 0 alone, and every 0.5
    # patch builds the reference model in bf16; smalls93b: the host memory row says it, the caution (which repeated it)
    # no more
    hint = ("; --trinity-version counts a release's own, less where rank 0 alone loads the model (0.5.1 and 0.5.0) or "
            "verl 0.7 builds the reference model in bf16 and places the pinned blocks (0.5)")
    assert _row(out, "caution").endswith("(free -g's total less what the OS, Ray and the rollout take) to check it")
    assert _row(out, "host memory").endswith(f"not checked: --host-ram not given{hint}")
    assert out.count("--trinity-version counts a release's own") == 1
    [answer] = json.loads(cli("--model", "32B", "--len", "16k", "--gpus", "8", "--gpu", "a100", "--json")[1])
    assert [caution for caution in answer["plans"][0]["cautions"] if caution.endswith(hint)]  # the plan's own keeps it
    status, out, _ = cli("--model", "32B", "--len", "16k", "--gpus", "8", "--gpu", "h100", "--trinity-version", "0.6")
    assert status == 0 and "caution        Offload needs" not in out  # rank 0 alone loads it: 664.2 at most


def _memory_words(cli: Cli, *argv: str) -> str:
    """What ``solve memory`` prints for `argv`, its words joined by single spaces (wrapped lines joined)."""
    _, out, _ = cli("memory", *argv)
    return " ".join(out.split())


def test_solve_memory_names_the_other_releases_figure_as_solve_does(cli: Cli) -> None:
    # s87: solve memory's host memory line gave its own release's figure alone; the planner's row's clause
    # (other_release_words) is counted from the estimate as from a plan (HostCounted)
    clause = ("Trinity 0.6 needs 224.6 (the reference model in fp32 where 0.5's is bf16; each pinned block by rows "
              "where 0.5's verl 0.7 places it)")
    assert f"within --host-ram 1000 GiB; {clause} caution:" in _memory_words(
        cli, "--model", "8B", "--gpus", "6", "--gpu", "a100", "--len", "16k", "--sp", "2", "--host-ram", "1000",
        "--trinity-version", "0.5.2")
    assert _host_row(cli, "--model", "8B", "--gpus", "6", "--gpu", "a100", "--trinity-version", "0.5.2").endswith(
        clause)  # solve's row for the same run


def test_solve_memory_hints_at_a_release_where_none_is_named(cli: Cli) -> None:
    # s87: with no release named, its host memory line and unchecked caution end as solve's row and caution do (the
    # estimate is told whether a release was named: release_named); smalls93b: the text says it once, on the host
    # memory line (the caution repeated it word for word), as solve's rows do; the JSON's caution keeps it
    argv = ("--model", "32B", "--len", "16k", "--gpus", "8", "--gpu", "a100", "--offload", "--env")
    hint = ("--trinity-version counts a release's own, less where rank 0 alone loads the model (0.5.1 and 0.5.0) or "
            "verl 0.7 builds the reference model in bf16 and places the pinned blocks (0.5)")
    words = _memory_words(cli, *argv)
    assert f"not checked: --host-ram not given; {hint} caution: Offload needs 1256.4" in words
    assert "and the rollout take) to check it beyond" in words and words.count(hint) == 1
    status, out, _ = cli("memory", *argv, "--json")
    assert status == 0 and json.loads(out)["cautions"][0].endswith(f"to check it; {hint}")
    named = _memory_words(cli, *argv, "--trinity-version", "0.5.1")
    assert "counts a release's own" not in named
    assert ("not checked: --host-ram not given; Trinity 0.6 needs 1256.4 (the reference model in fp32 where 0.5's is "
            "bf16; the model loaded on every rank where 0.5.1's loads it on rank 0) beyond") in named


def test_a_ways_host_tenths_are_its_plans_figure_on_nodes_of_4_and_16(tmp_path: Path) -> None:
    # `Planner.host_tenths` counts no node size: every way it counts shares one node (a trainer within it, whose
    # figure the node's size leaves alone), so on nodes of 4 or 16 it gives the plan's own figure, which the
    # planner counted for that node size; a way across whole nodes is counted by the planner's question alone
    path = tmp_path / "fleet.yaml"
    path.write_text("pools:\n"
                    "  - {name: four, gpu: h100, gpus_per_node: 4, nodes: 2, host_ram_gb: 2000}\n"
                    "  - {name: sixteen, gpu: h100, gpus_per_node: 16, nodes: 1, host_ram_gb: 4000}\n"
                    "jobs:\n  - {name: a, model: Qwen3-8B, max_model_len: 8192, rollout_gpus: 1}\n", encoding="utf-8")
    fleet = solver.load_fleet(path)
    planner = solver.api._fleet_and_planner(  # type: ignore[attr-defined]
        fleet, weights=None, workers=1, memory=None, margin=None, catalog=None, progress=None, estimate="auto",
        token_budget="default", time_limit_s=10.0, seed=0, trinity_version=None, required=None,
        option_names=solver.rules.API_OPTIONS)[1]
    options = job_options(planner, fleet, 0)
    shared = [(option.pool, option.host_tenths, option.plan.host_memory_gb) for option in options if option.size]
    assert {pool for pool, _, _ in shared} == {0, 1}
    assert all(tenths == round((need or 0) * 10) > 0 for _, tenths, need in shared)
