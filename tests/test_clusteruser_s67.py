"""A capacity planner's review of `solve cluster` (session 67): `--buy`'s jobs no purchase places are told why within
the GPUs no purchase goes past, not within the room the other jobs' ways happened to raise their pool to (the reasons
naming a job's rollout as the fleet file gives it, `rollout_gpus`, are test_cluster.py's); a pool of no nodes is what
`--buy` weighs for a GPU type you have none of."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import yaml
from cluster_api import buy

from solver.tables import load_catalog, load_fleet

CATALOG = load_catalog()

ONE_H20 = {"pools": [{"name": "h20", "gpu": "H20-96GB", "nodes": 1, "gpus_per_node": 8}],
           "jobs": [{"name": "huge", "model": "Qwen3-14B", "max_model_len": 300000, "rollout_gpus": 4},
                    {"name": "ok", "model": "Qwen3-4B", "max_model_len": 32768, "rollout_gpus": 2}]}
"""One node of 8 H20s; `huge` has no way on any number of them at Trinity's token budget, `ok` fits the node."""


def test_buy_tells_a_job_no_purchase_places_why_within_the_estimates_gpus_not_the_pool_its_peers_raised(tmp_path: Path):
    # Before, the reason was asked on the pool raised by the other jobs' largest ways (ok's: one node more), and
    # read "h20 (up to 12 of its GPUs for the trainer, beside 4 rollout GPUs): ... within 12 GPUs: the longest is
    # ...", of a pool of 8 GPUs, beside --buy's "however many": now within the 64 GPUs the estimates weigh, as
    # docs/cluster.md says, and as the question whether the job has a way was asked.
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(ONE_H20), encoding="utf-8")
    result = buy(load_fleet(path, CATALOG), catalog=CATALOG)
    assert (result.status, result.gpus) == ("optimal", 0)
    assert [(job.job, job.reason) for job in result.fits_nowhere] == [("huge", (
        "h20: 300000 tokens is beyond what the tables and the memory model's estimates allow for Qwen3-14B on "
        "H20-96GB within 64 GPUs: the longest is 226304 on the 1024-token grid (Env + Offload + SP=8 on 8 GPUs, "
        "estimated, extrapolated); --token-budget auto trains 300000 tokens: Env + Offload + SP=8 on 8 GPUs with "
        "max_token_len_per_gpu = 56320 (estimated, extrapolated)"))]


def test_a_pool_of_no_nodes_is_what_buy_weighs_for_a_gpu_type_you_have_none_of(
        tmp_path: Path, cli: Callable[..., tuple[int, str, str]]):
    # A planner who writes nodes: 0 for the GPU type they have none of yet asks --buy about it: the nodes to buy there
    # are all the pool would have (before session 69 it was refused, with a hint to give nodes: 1 instead). A
    # negative count is still refused.
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(yaml.safe_dump({**ONE_H20, "pools": [{**ONE_H20["pools"][0], "nodes": 0}]}), encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet), "--buy", "--json")
    bought = json.loads(out)
    assert (status, bought["status"], bought["gpus"]) == (1, "optimal", 8)  # 1: huge, which --buy must place, cannot
    assert [(pool["pool"], pool["nodes_bought"], pool["nodes_after"]) for pool in bought["pools"]] == [("h20", 1, 1)]
    assert [job["job"] for job in bought["fits_nowhere"]] == ["huge"]
    fleet.write_text(yaml.safe_dump({**ONE_H20, "pools": [{**ONE_H20["pools"][0], "nodes": -1}]}), encoding="utf-8")
    assert cli("cluster", str(fleet), "--buy") == (
        2, "", f"solve cluster: error: {fleet}: line 14: pool h20, nodes: must be at least 0, got -1\n")