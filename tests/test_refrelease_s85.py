"""The reference checkers count a plan's Trinity release: which ranks load the model at start-up, the reference
model's bytes, the pinned blocks' placement, the routed experts' layout and the train batch rule
(docs/memory.md, "Which ranks load the model"); placed jobs naming each release go through them."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest
from cluster_reference import best_value, check_placements, random_instance, value_of
from command_words import make_query
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import (
    TRINITY_RELEASES,
    Release,
    _host_need,
    _load_need,
    _up_to_a_tenth,
    enumerate_plans,
    ranked_alternatives,
)
from test_cluster import CATALOG, reaches_the_optimum_then_widens, solved

from solver.memory import shown_host_need
from solver.solve import plan as solve_plan
from solver.tables import counted_expert_layout, model_loading, trinity_release


def untied_8b_job(release: str | None, model: str = "Qwen3-8B") -> dict:
    """A job of `model` at 4096 tokens naming `release` (None: none), alone on its pool's trainer GPUs."""
    job = {"name": "j", "model": model, "max_model_len": 4096, "rollout_gpus": 0}
    return job if release is None else {**job, "trinity_version": release}


@pytest.mark.parametrize(("release", "gpu", "model", "need", "loading"), [
    (None, "A100-80GB", "Qwen3-8B", 284.8, "every-rank"),
    ("0.6", "A100-80GB", "Qwen3-8B", 284.8, "every-rank"),  # compute capability 8.0: every rank under 0.6
    ("0.6.0", "A100-80GB", "Qwen3-8B", 284.8, "every-rank"),
    ("0.5.2", "A100-80GB", "Qwen3-8B", 264.5, "every-rank"),  # every rank, its reference model in bf16
    ("0.5", "A100-80GB", "Qwen3-8B", 264.5, "every-rank"),  # 0.5 without its patch: every rank, the most
    ("0.5.1", "A100-80GB", "Qwen3-8B", 50.9, "rank-0"),  # verl's rule: rank 0 for an untied model
    ("0.5.0", "A100-80GB", "Qwen3-8B", 50.9, "rank-0"),
    ("0.6", "H100-80GB", "Qwen3-8B", 71.2, "rank-0"),  # FSDP2 on compute capability 9.0
    ("0.6", "H100-80GB", "Qwen3-4B", 36.2, "rank-0"),  # tied, rank 0 alone all the same
    (None, "H100-80GB", "Qwen3-4B", 141.0, "every-rank"),
    ("0.5.1", "H100-80GB", "Qwen3-4B", 130.5, "every-rank"),  # verl's rule: every rank for a tied model
])
def test_a_placed_job_s_start_up_need_is_its_release_s_in_the_product_and_the_reference(
        tmp_path: Path, release: str | None, gpu: str, model: str, need: float, loading: str):
    # One node of 8 GPUs with room for any release's need: the job takes all 8 without Offload (the cheapest), and
    # `solved` checks the placement against the reference, which counts the need alike.
    pool = {"name": "p", "gpu": gpu, "nodes": 1, "gpus_per_node": 8, "host_ram_gb": 300}
    [placed] = solved({"pools": [pool], "jobs": [untied_8b_job(release, model)]}, tmp_path)["placements"]
    plan = placed["plan"]
    assert (placed["trainer_gpus"], plan["offload"], plan["host_memory_gb"], plan["model_loading"],
            plan["trinity_version"]) == (8, False, need, loading, release)
    [best, *_] = enumerate_plans(CATALOG, objective="cheapest", gpu=gpu, model=model, budget_gpus=8, exact=True,
                                 max_model_len=4096, offload=False, host_ram_gb=300, estimates=True,
                                 trinity_version=release)
    assert (best["host_memory_gb"], best["model_loading"], best["trinity_version"]) == (need, loading, release)


def test_the_checker_refuses_a_placement_counted_for_another_release(tmp_path: Path):
    # The 0.5.1 job's placement, checked as if it named no release (or 0.5.2), is wrong: its need, its loading and
    # its release differ.
    instance = {"pools": [{"name": "p", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8, "host_ram_gb": 300}],
                "jobs": [untied_8b_job("0.5.1")]}
    result = solved(instance, tmp_path)
    for other in (None, "0.5.2"):
        problems = check_placements(CATALOG, {**instance, "jobs": [untied_8b_job(other)]}, result, estimates=True)
        assert len(problems) == 1 and "'host_memory_gb': 50.9" in problems[0] and "'model_loading': 'rank-0'" in \
            problems[0] and f"'trinity_version': {other!r}" in problems[0]


def test_the_checker_counts_a_job_naming_no_release_for_the_run_s(tmp_path: Path):
    # Placed under the run's 0.5.1 (`place`'s trinity_version, `solve cluster --trinity-version`), the job naming none
    # is counted for 0.5.1 (rank 0 loading the untied model: 50.9 GiB), and `solved` checks it so; checked as if the
    # run named none, or 0.6, it is wrong. A job's own release wins over the run's: 0.5.2's every-rank need.
    pool = {"name": "p", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8, "host_ram_gb": 300}
    instance = {"pools": [pool], "jobs": [untied_8b_job(None)]}
    result = solved(instance, tmp_path, trinity_version="0.5.1")
    [placed] = result["placements"]
    assert (placed["plan"]["host_memory_gb"], placed["plan"]["trinity_version"]) == (50.9, "0.5.1")
    for other in (None, "0.6"):
        problems = check_placements(CATALOG, instance, result, estimates=True, trinity_version=other)
        assert len(problems) == 1 and "'host_memory_gb': 50.9" in problems[0], problems
    own = {"pools": [pool], "jobs": [untied_8b_job("0.5.2")]}
    [placed] = solved(own, tmp_path, trinity_version="0.5.1")["placements"]
    assert (placed["plan"]["host_memory_gb"], placed["plan"]["trinity_version"]) == (264.5, "0.5.2")


def test_offload_counts_the_release_s_reference_bytes_and_placed_blocks(tmp_path: Path):
    # Qwen3-8B with Offload on 6 of a node's GPUs (2 for the rollout): 0.5.1 pins the bf16 reference model's blocks
    # as verl 0.7 places them, rank 0 loading the model (147.8 GiB, docs/memory.md); 0.6 on A100s every rank with the
    # fp32 reference by rows; 0.5.2 every rank with 0.5's blocks.
    pool = {"name": "p", "gpu": "A100-40GB", "nodes": 1, "gpus_per_node": 8, "host_ram_gb": 512}
    needs, placed_needs = {}, {}
    for release in ("0.5.1", "0.5.2", "0.6"):
        plans = enumerate_plans(CATALOG, objective="cheapest", gpu="A100-40GB", model="Qwen3-8B", budget_gpus=6,
                                exact=True, max_model_len=4096, offload=True, sp=1, estimates=True,
                                trinity_version=release)
        needs[release] = plans[0]["host_memory_gb"]
        job = {**untied_8b_job(release), "rollout_gpus": 2}
        [placed] = solved({"pools": [pool], "jobs": [job]}, tmp_path)["placements"]  # checked by the reference
        placed_needs[release] = (placed["trainer_gpus"], placed["plan"]["offload"], placed["plan"]["host_memory_gb"])
    assert needs == {"0.5.1": 147.8, "0.5.2": 235.2, "0.6": 266.0}
    # Placed, the job trains without Offload on the 6 GPUs (SP=2), its start-up need checked against the pool's.
    assert placed_needs == {"0.5.1": (6, False, 47.9), "0.5.2": (6, False, 200.5), "0.6": (6, False, 224.6)}


def planned_and_referenced(**query: object) -> tuple[list[dict], list[dict]]:
    """The solver's plans for `query` (estimates on, the best five) and the reference's best five."""
    (answer,) = solve_plan(make_query(CATALOG, top=5, **query), CATALOG)
    every = enumerate_plans(CATALOG, estimates=True, **query)
    return [plan.model_dump(mode="json") for plan in answer.plans], ranked_alternatives(
        every, CATALOG.model(str(query["model"])), CATALOG.gpu(str(query["gpu"])))[:5]


@pytest.mark.parametrize(("release", "memory", "host"), [
    (None, 106.98, 905.7), ("0.5", 104.66, 739.8), ("0.5.0", 104.66, 171.7), ("0.5.1", 104.66, 171.7),
    ("0.5.2", 104.66, 739.8), ("0.6", 106.98, 337.6), ("0.6.0", 106.98, 337.6)])
def test_a_mixture_of_experts_plans_are_the_references_under_each_release(release: str | None, memory: float,
                                                                          host: float):
    # Qwen3-30B-A3B on 6 H200s without Offload, a node's host memory given: the states of its routed experts as the
    # release's transformers holds them and verl 0.7 places them (0.5's: no padding on 6 GPUs, where 0.6's whole
    # experts pad 22 a GPU), the reference model's bytes and pinned blocks, the loading ranks, and the words saying
    # how the experts were counted.
    planned, referenced = planned_and_referenced(gpu="H200-141GB", model="30B-A3B", objective="cheapest",
                                                 budget_gpus=6, exact=True, offload=False, max_model_len=8192,
                                                 host_ram_gb=2048.0, trinity_version=release)
    assert planned == referenced
    assert (planned[0]["memory_gb"], planned[0]["host_memory_gb"], planned[0]["expert_layout"]) == (
        memory, host, Release.named(release).expert_layout)


@pytest.mark.parametrize(("release", "plans", "cautioned"), [
    (None, 1, False), ("0.5", 1, True), ("0.5.0", 0, False), ("0.5.1", 0, False), ("0.5.2", 1, False),
    ("0.6", 1, False)])
def test_a_train_batch_the_gpus_do_not_divide_is_refused_or_cautioned_as_the_release_says(
        release: str | None, plans: int, cautioned: bool):
    # 8 GPUs at SP=2 make 4 data-parallel ranks, which divide a train batch of 12; the 8 GPUs do not, which 0.5.0 and
    # 0.5.1 refuse, and 0.5 without its patch is cautioned of.
    planned, referenced = planned_and_referenced(gpu="A100-80GB", model="4B", objective="cheapest", budget_gpus=8,
                                                 exact=True, sp=2, max_model_len=8192, train_batch_size=12,
                                                 trinity_version=release)
    assert planned == referenced and len(planned[:1]) == plans
    assert ["batch-divides-trainer-gpus" in plan["caution_codes"] for plan in planned[:1]] == [cautioned] * plans


def test_a_release_the_reference_does_not_know_is_refused():
    assert [Release.named(name).name for name in ("v0.5.2", "0.6.0")] == ["0.5.2", "0.6.0"]
    with pytest.raises(ValueError, match="unknown Trinity release '0.7'"):
        Release.named("0.7")


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(min_value=0, max_value=10_000), minimize_nodes=st.booleans(), estimates=st.booleans())
def test_random_tiny_instances_of_several_releases_reach_the_brute_force_optimum(seed: int, minimize_nodes: bool,
                                                                                 estimates: bool, tmp_path_factory):
    # test_cluster's random tiny instances, each job on a release drawn at random (or none): A100s load the model on
    # every rank under 0.6, H20s on rank 0, and the pools' host memory rules out some ways under one release alone.
    rng = random.Random(seed)
    instance = random_instance(rng)
    for job in instance["jobs"]:
        release = rng.choice((None, *TRINITY_RELEASES))
        if release is not None:
            job["trinity_version"] = release
    reaches_the_optimum_then_widens(instance, tmp_path_factory.mktemp("fleet"), minimize_nodes, estimates)


SHAPES = ("Qwen3-0.6B", "Qwen3-4B", "Qwen3-8B", "Qwen3-14B", "Qwen3-32B", "Qwen3-30B-A3B", "Qwen2.5-7B", "Qwen2.5-32B",
          "Llama-3.1-8B", "Llama-3.1-70B")
"""A catalogued model of each shape (the base, instruct and 2507 releases share their model's)."""


def test_every_catalogued_shape_s_host_need_is_the_references_under_each_release():
    # The reference writes each tensor out by name; the product counts kinds and takes the ranks from
    # `solver.tables.model_loading`. Both ways, with and without Offload, on 6 GPUs of a node (which divide few
    # dimensions: verl 0.7 places the tensors otherwise than by rows) and across two nodes of 8, on an A100 (every
    # rank under 0.6) and an H100 (rank 0 under 0.6).
    for model in map(CATALOG.model, SHAPES):
        for release in (None, *TRINITY_RELEASES):
            counted = Release.named(release)
            for gpu, gpus, offload in itertools.product(("A100-80GB", "H100-80GB"), (6, 16), (False, True)):
                capability = CATALOG.gpu(gpu).compute_capability
                loading = model_loading(release, None, capability, offload)
                product = shown_host_need(model, gpus, 8, offload, trinity_release("trinity_version", release), True,
                                          0, None, counted_expert_layout(release), loading)
                need = _host_need if offload else _load_need
                assert product == _up_to_a_tenth(need(model, gpus, 8, None, counted, capability)), (
                    model.name, release, gpu, gpus, offload)


def test_the_reference_optimum_counts_a_job_naming_no_release_for_the_run_s(tmp_path: Path):
    # Host memory of 100 GiB a node: under the run's 0.5.1, rank 0 alone loads the untied Qwen3-8B, so 6 GPUs train
    # it without Offload, the cheapest (47.9 GiB; cost 1/6: 1667); naming no release, every rank loads it and no plan
    # fits the node. `place` under 0.5.1, unwidened, reaches the reference's optimum for the run's release.
    pool = {"name": "p", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8, "host_ram_gb": 100}
    instance = {"pools": [pool], "jobs": [untied_8b_job(None)]}
    run_s = best_value(CATALOG, instance, estimates=True, trinity_version="0.5.1")
    assert run_s == best_value(CATALOG, {**instance, "jobs": [untied_8b_job("0.5.1")]}, estimates=True) == (1, 0, 1667)
    assert best_value(CATALOG, instance, estimates=True) == (0, 0, 0)
    assert value_of(CATALOG, instance, solved(instance, tmp_path, widen=False, trinity_version="0.5.1")) == run_s
