"""Tests that kill the mutants of session 65's code that its tests let live (helper mutants9b, session 66, after
mutants9): each asserts what the code does, where a mutant of it would do otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from cluster_api import place
from test_cluster import BEYOND_ANY_NODES, CATALOG, fleet_of, out_of_work
from test_slips12_s65 import A100_NODE

import solver
from solver import QueryError, load_catalog
from solver.cluster.search import StopOnInterrupt
from solver.tables.text import meant_fleet_name


@pytest.mark.parametrize(("wanted", "names", "meant"), [
    ("agent08b", ["math-4b", "agent-8b"], "agent-8b"),  # its numbers are the same but for the zero before one
    ("agent8b", ["math-4b", "agent-08b"], "agent-08b"),
    ("agent09b", ["math-4b", "agent-8b"], None),  # another number
])
def test_a_slip_with_a_zero_before_a_number_is_the_name_with_the_same_numbers(wanted: str, names: list[str],
                                                                              meant: str | None):
    assert meant_fleet_name(wanted, names) == meant


def test_four_digits_after_a_model_name_are_no_memory_size_the_name_is_guessed():
    # A bare number of at most three digits after a name is a memory size (h20-141: another card); a date tag of
    # four (a checkpoint's, qwen3-8b-0528) is not: the name it extends is guessed.
    with pytest.raises(QueryError) as raised:
        load_catalog().model("qwen3-8b-0528")
    assert str(raised.value).startswith("unknown model 'qwen3-8b-0528' (did you mean Qwen3-8B?); accepted: ")


def test_a_required_name_a_slip_and_a_zero_from_a_job_gets_a_guess(cli, tmp_path: Path):
    jobs = [{"name": name, "model": "Qwen3-4B", "max_model_len": 8192} for name in ("math-4b", "agent-8b")]
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump({"pools": [A100_NODE], "jobs": jobs}), encoding="utf-8")
    assert cli("cluster", str(path), "--required", "agent08b") == (2, "", (
        "solve cluster: error: --required 'agent08b': no job of the fleet is named so; did you mean agent-8b? its "
        "jobs: math-4b, agent-8b; or all, for every job\n"))


def test_out_of_time_before_the_first_placement_the_greedy_one_stands_node_by_node(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # The greedy placement puts the jobs, by priority, on the first node with room, each on its way of the fewest
    # GPUs: j3 (priority 3, 2 + 2 rollout GPUs), j1 (priority 2, 1 + 1), then j0 (2, none asked) fill node 0; j2 (2 + 1)
    # takes node 1. Out of time before the search's first placement, that one stands, on the nodes it chose: each
    # node's jobs are counted in the model's first node pattern that holds them.
    monkeypatch.setattr(StopOnInterrupt, "solve", out_of_work)
    instance = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 3, "gpus_per_node": 8}], "jobs": [
        {"name": "j0", "model": "Qwen3-4B", "max_model_len": 32768, "priority": 1},
        {"name": "j1", "model": "Qwen3-1.7B", "max_model_len": 8192, "priority": 2, "rollout_gpus": 1},
        {"name": "j2", "model": "Qwen3-4B", "max_model_len": 32768, "priority": 1, "rollout_gpus": 1},
        {"name": "j3", "model": "Qwen3-0.6B", "max_model_len": 32768, "priority": 3, "rollout_gpus": 2}]}
    result = place(fleet_of(instance, tmp_path), catalog=CATALOG, widen=False)
    assert (result.status, result.objective, result.bound, result.unplaced) == ("feasible", 7, None, ())
    assert [(p.job, p.nodes, p.gpu_indexes, p.trainer_gpus, p.rollout_gpus) for p in result.placements] == [
        ("j0", (0,), (0, 1), 2, 0), ("j1", (0,), (2, 3), 1, 1), ("j2", (1,), (0, 1, 2), 2, 1),
        ("j3", (0,), (4, 5, 6, 7), 2, 2)]


OFFLOAD_NEED = ("host memory: 183.0 GiB per node for Offload (the actor's states and the reference model's shards, or "
                "the model while it loads beside both models' pinned shards, whichever is more)")


@pytest.mark.parametrize(("asked", "line"), [
    ({"offload": True}, f"{OFFLOAD_NEED}; not checked: host_ram_gb not given"),
    ({"offload": True, "host_ram_gb": 1024}, f"{OFFLOAD_NEED}, within host_ram_gb of 1024 GiB"),
    ({"host_ram_gb": 1024}, ("host memory: 71.2 GiB per node while the model loads (verl reads it in fp32 before "
                             "FSDP shards it, beside the reference model's pinned shards; here rank 0 loading the "
                             "model), within host_ram_gb of 1024 GiB")),
])
def test_memory_text_s_host_memory_that_fits_names_the_api_s_keyword(asked: dict[str, object], line: str):
    # Trinity 0.6 on H100s loads the model on rank 0 alone: the figures of before every rank's load was counted.
    answer = solver.memory_answer("8B", "h100", 8, 32768, trinity_version="0.6", **asked)  # type: ignore[arg-type]
    text = solver.memory_text(answer, width=300)
    # s87: then, as solve's row, what Trinity 0.5 needs (every rank loading it, as 0.5.2 does; its bf16 reference)
    other = (f"; Trinity 0.5 needs {'264.5' if 'offload' not in asked else '305.1'} (the reference model in bf16 where "
             "0.6's is fp32; the model loaded on every rank as 0.5.2 loads it where 0.6's loads it on rank 0)")
    [first] = [each for each in text.splitlines() if each.startswith("host memory:")]
    assert first.startswith(line) and f"{line}{other} beyond" in " ".join(text.split())


def test_the_buy_note_s_required_list_leaves_out_a_job_no_number_of_nodes_places(cli, tmp_path: Path):
    # r (required) and p are placed, c is left out for want of room: --buy names p and c beside r. huge's length is
    # beyond every number of nodes: naming it too would make a purchase for it required, which none can place.
    jobs = [{"name": "r", "model": "Qwen3-4B", "max_model_len": 8192, "rollout_gpus": 4, "required": True},
            {"name": "p", "model": "Qwen3-0.6B", "max_model_len": 4096, "rollout_gpus": 1, "priority": 3},
            {"name": "c", "model": "Qwen3-4B", "max_model_len": 8192, "rollout_gpus": 4},
            {"name": "huge", "model": "Qwen3-14B", "max_model_len": 1048576}]
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump({"pools": [A100_NODE], "jobs": jobs}), encoding="utf-8")
    status, _, err = cli("cluster", str(path))
    assert (status, err) == (1, BEYOND_ANY_NODES.format(job="huge") + (
        f"solve cluster: note: to place the jobs left out too: solve cluster {path} --buy --required p,c names the "
        "fewest GPUs, then nodes, to add to the pools (and the jobs no number of nodes runs)\n"))
