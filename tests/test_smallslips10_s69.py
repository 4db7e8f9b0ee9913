"""Small slips left by s69's reviews: `solve cluster --json`'s unplaced jobs say the one-GPU caution of their reason
in ``reason_caution_codes``, as `solve --json`'s answers do; a map's legend notes only the marks of the cells it
shows; `--explain`'s `choice` counts what the lines after it name, on which GPU counts; a pinned plan's cost is the
best with its pins; ``--gpu a100x4`` is told to give the count apart."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pydantic
import pytest
import yaml
from command_words import make_query

import solver
from solver.explain import explain
from solver.maps import cheapest_by_length
from solver.render.maps import map_text
from solver.results import GpuMap, LengthMapRow
from solver.solve import plan
from solver.tables import load_catalog

Cli = Callable[..., tuple[int, str, str]]

SHORT = "one trainer GPU: Trinity-RFT's guide strongly advises more GPUs"
CODES = ["single-gpu-advised-against"]
CATALOG = load_catalog()


def _fleet(tmp_path: Path) -> Path:
    """A node of 8 A100s with 16 GiB of host memory, and three jobs none fit: Qwen3-32B, whose reason names the
    estimates' plan on one GPU, Qwen3-14B, whose names the plan on nodes with more host memory on one GPU, and
    Qwen3-4B at 131072 tokens, whose names a plan on 8 GPUs."""
    fleet = {"pools": [{"name": "p", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8, "host_ram_gb": 16}],
             "jobs": [{"name": "k", "model": "32B", "max_model_len": 16384, "rollout_gpus": 0},
                      {"name": "m", "model": "14B", "max_model_len": 8192, "rollout_gpus": 0},
                      {"name": "j", "model": "4B", "max_model_len": 131072, "rollout_gpus": 0}]}
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(fleet), encoding="utf-8")
    return path


def test_cluster_json_gives_an_unplaced_job_the_caution_codes_its_reason_says(cli: Cli, tmp_path: Path):
    status, out, err = cli("cluster", str(_fleet(tmp_path)), "--no-estimate", "--json")
    unplaced = {job["job"]: job for job in json.loads(out)["unplaced"]}
    assert (status, err) == (1, "")
    assert (unplaced["k"]["reason"], unplaced["k"]["reason_caution_codes"]) == (
        ("p: the tables have no Qwen3-32B on A100-80GB (the memory model estimates a plan, Env + Offload on 1 GPU at "
         f"16384 tokens ({SHORT}), but with Offload it needs 664.2 GiB of host memory per node, more than the pool's "
         "host_ram_gb of 16 GiB)"), CODES)
    assert (unplaced["m"]["reason"], unplaced["m"]["reason_caution_codes"]) == (
        ("p: nothing in the tables for Qwen3-14B on A100-80GB within 8 GPUs trains with 16 GiB of host memory per "
         "node (the pool's host_ram_gb); on nodes with more host memory, Env + Offload on 1 GPU trains it (8192 "
         f"tokens; {SHORT}), and with Offload it needs 351.6 GiB of host memory per node; at the least, Env + SP=2 on "
         "4 GPUs trains it (8192 tokens), and it needs 300.6 GiB of host memory per node while the model loads"), CODES)
    # (No release named: each rank loads the model, 55.0 GiB: 4 x 55.0 beside the reference model's pinned shards on
    # 4 GPUs, 80.5, is less than vanilla's 6 x 55.0 + 67.9 on 6 GPUs, the least when rank 0 alone loaded it.)
    assert list(unplaced["j"]) == ["job", "reason", "reason_code", "pools", "reason_for_several", "fits_with"]


def test_cluster_json_reads_back_its_codes_from_their_key_and_refuses_codes_not_in_a_list(cli: Cli, tmp_path: Path):
    # The codes are the key's, not read from the reason's words (s70: reasons carry their codes as data).
    _, out, _ = cli("cluster", str(_fleet(tmp_path)), "--no-estimate", "--json")
    printed = json.loads(out)
    assert solver.ClusterResult.model_validate(printed).model_dump(mode="json") == printed
    printed["unplaced"][2]["reason_caution_codes"] = CODES
    assert solver.ClusterResult.model_validate(printed).unplaced[2].reason_caution_codes == (
        solver.CautionCode.SINGLE_GPU_ADVISED_AGAINST,)
    printed["unplaced"][2]["reason_caution_codes"] = "single-gpu-advised-against"
    with pytest.raises(pydantic.ValidationError, match="reason_caution_codes is 'single-gpu-advised-against': give"):
        solver.ClusterResult.model_validate(printed)


def test_a_map_s_legend_notes_no_mark_of_a_column_it_leaves_out():
    # Qwen3-4B at 8192 tokens on A100s: one GPU needs Env + Offload (and has the one-GPU caution), two and more train
    # it vanilla. Past one node the map leaves budget 1's column out: its legend said "O Offload (host memory per node
    # not checked ...)" for that column's cell all the same. With the column listed, the legend notes both.
    budgets = (1, 2, 4, 8, 16, 32)
    grid = cheapest_by_length(CATALOG, "A100-80GB", "Qwen3-4B", [8192], budgets)
    four_b = GpuMap(gpu="A100-80GB", by="len", model="Qwen3-4B", budget_gpus=budgets,
                    rows=(LengthMapRow(max_model_len=8192, plans=tuple(grid[8192, budget] for budget in budgets)),))
    assert map_text((four_b,)).split("\n")[-4:] == [
        "budget 1: columns left out (budgets=[...] maps them; the GpuMap has every budget)",
        "cells: setting@GPUs; evidence: documented, * inferred",  # the marks its cells carry (s87)
        "settings: E Env, O Offload, SPn Ulysses SP, van vanilla", ""]
    assert map_text((four_b.model_copy(update={"budgets_listed": True}),)).split("\n")[-4:] == [
        "cells: setting@GPUs; evidence: documented, * inferred",
        ("settings: E Env, O Offload (host memory per node not checked: host_ram_gb not given), SPn Ulysses SP, van "
         "vanilla"), f"† {SHORT}", ""]


def _explained(**request: object) -> list[tuple[str, str]]:
    """The explanation of `request`'s answer without estimates, (rule, detail) each."""
    query = make_query(CATALOG, **{"estimate": "never", **request})
    (answer,) = plan(query, CATALOG)
    return [(reason.rule, reason.detail) for reason in explain(CATALOG, query, answer)]


OF = "of GPU count, Env, Offload and SP"
NOT_WHOLE = "span nodes of 8 (--node-gpus) but are not whole nodes, which a trainer that spans nodes must use"


def test_the_choice_counts_the_combinations_it_weighs_and_names_the_counts_past_a_node_it_does_not():
    # Before, "each of the 10 combinations ... fails a rule:" was followed by 9-12 GPUs, which are not among the 10.
    assert _explained(gpu="a100", model="4B", max_model_len=65536, budget_gpus=12)[:2] == [
        ("choice", (f"SP=4 on 8 GPUs is the cheapest plan at 65536 tokens within 12 GPUs; each of the 10 "
                    f"combinations {OF} that would rank before it (on 7, 8 GPUs) fails a rule, as do those on 9-12 "
                    "GPUs, which the planner does not weigh:")),
        ("whole_nodes", f"9-12 GPUs {NOT_WHOLE}")]
    # Before, "no combination ... ranks before it" was followed by 9-15 GPUs.
    assert _explained(gpu="a100", model="0.6B", max_model_len=8192, budget_gpus=15) == [
        ("choice", (f"vanilla on 8 GPUs is the cheapest plan at 8192 tokens within 15 GPUs; no combination {OF} "
                    "that the planner weighs ranks before it; those on 9-15 GPUs would, and fail a rule:")),
        ("whole_nodes", f"9-15 GPUs {NOT_WHOLE}")]


def test_the_longest_length_s_choice_names_the_counts_that_cost_less_there_and_longer_names_every_count():
    # At 102400 tokens only 4 to 8 GPUs cost less than Env + Offload + SP=4 on 8: 1 to 3 GPUs come under `longer`
    # alone, which is why their lines come after those of 5 to 7.
    reasons = _explained(gpu="a100", model="8B", objective="max_len", budget_gpus=8)
    longer = reasons.index(("longer", "no plan reaches the next length, 112640 tokens:"))
    assert reasons[0] == ("choice", (
        "102400 tokens is the longest length with a plan within 8 GPUs, and Env + Offload + SP=4 on 8 GPUs is the "
        f"cheapest plan there; each of the 81 combinations {OF} that would rank before it (on 4-8 GPUs) fails a rule:"))
    assert [detail for _, detail in reasons[1:longer] if detail.startswith("SP must divide the trainer GPUs")] == [
        f"SP must divide the trainer GPUs: on {gpus} GPUs that rules out SP={degrees}"
        for gpus, degrees in ((4, "3"), (5, "2-4, 6, 7"), (6, "4, 5, 7, 8"), (7, "2-6, 8"), (8, "3, 5-7"))]
    assert [detail.split(":")[1] for _, detail in reasons[longer + 1:longer + 4]] == [
        " on 1 GPU that rules out SP=2-8", " on 2 GPUs that rules out SP=3-8", " on 3 GPUs that rules out SP=2, 4-8"]


def test_a_pinned_plan_s_cost_is_the_best_with_its_pins(cli: Cli):
    status, out, _ = cli("--model", "8B", "--len", "32k", "--gpu", "a100", "--sp", "4")
    lines = [line for line in out.splitlines() if line.startswith(("cost", "unpinned"))]
    assert status == 0 and lines == [
        "cost           0.325 relative step time (best with --sp 4)",
        ("unpinned       without --sp 4, the best plan is Env + SP=2 on 6 GPUs, cost 0.1852 (documented): the pin "
         "costs 1.76x the relative step time")]
    _, out, _ = cli("--model", "8B", "--len", "32k", "--gpu", "a100")
    assert "\ncost           0.1852 relative step time (best)\n" in out
    text = solver.answers_text(solver.plan("8B", gpu="a100", max_model_len=32768, budget_gpus=6, sp=4, offload=False))
    assert "\ncost           0.325 relative step time (best with sp=4, offload=False)\n" in text


@pytest.mark.parametrize(("argv", "error"), [
    (("--gpu", "a100x4", "--model", "8B", "--len", "8192"),
     ("solve: error: --gpu 'a100x4' gives 4 A100-80GB GPUs in one name: give the GPU type and the count apart: --gpu "
     "a100 --gpus 4\n")),
    (("--gpu", "h20,8 x H100", "--model", "8B", "--len", "8192"),
     ("solve: error: --gpu '8 x H100' gives 8 H100-80GB GPUs in one name: give the GPU type and the count apart: --gpu "
     "h20,H100 --gpus 8\n")),
    (("memory", "--gpu", "4*a100", "--model", "8B", "--gpus", "4", "--len", "8192"),
     ("solve memory: error: --gpu '4*a100' gives 4 A100-80GB GPUs in one name: give the GPU type and the count apart: "
     "--gpu a100 --gpus 4\n")),
    (("--gpu", "4090x2", "--model", "0.6B", "--len", "4096"),  # not 4090 GPUs of a type named 2
     ("solve: error: --gpu '4090x2' gives 2 RTX-4090-24GB GPUs in one name: give the GPU type and the count apart: "
     "--gpu 4090 --gpus 2\n")),
    (("map", "--gpu", "a100:8"),
     ("solve map: error: --gpu 'a100:8' gives 8 A100-80GB GPUs in one name: give the GPU type and the count apart: "
     "--gpu a100 --gpus-up-to 8\n")),
])
def test_a_gpu_name_with_a_count_is_told_to_give_the_count_apart(cli: Cli, argv: tuple[str, ...], error: str):
    assert cli(*argv) == (2, "", error)


def test_names_that_are_no_gpu_type_with_a_count_are_refused_or_taken_as_before(cli: Cli):
    # a100x is no count, and h900 no GPU type: the unknown name's message; MI300X is a GPU type of the catalogue.
    for name in ("a100x", "h900x4"):
        status, _, err = cli("--gpu", name, "--model", "8B", "--len", "8192")
        assert status == 2 and err.startswith(f"solve: error: unknown GPU '{name}'")
    assert cli("--gpu", "mi300x", "--model", "8B", "--len", "8192")[0] == 0
