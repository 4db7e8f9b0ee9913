"""`solver.trinity.patch_trinity_config` keeps the config's cluster, as ``--write`` does: a plan on other trainer GPUs
than the cluster gives the trainer (a placement's, or one of `objective="min_gpus"`) is refused in one line, as
``--write`` refuses to plan one, not written into a config whose trainer would run it on GPUs it was not made for."""

from __future__ import annotations

from pathlib import Path

import pytest

import solver
from solver.api import answer_query, config_query
from solver.trinity import patch_trinity_config, patched_trinity_config, read_trinity_config

EXAMPLE = Path(__file__).resolve().parent.parent / "docs" / "examples" / "trinity.yaml"
TEXT = EXAMPLE.read_text(encoding="utf-8")  # 1 node of 8 GPUs, 2 engines of one GPU: 6 for the trainer
MODEL = solver.load_catalog().model("8B")


def _plan(gpus: int, **query: int) -> solver.Plan:
    """The best plan for the example's model and length on exactly `gpus` H20 trainer GPUs."""
    (answer,) = solver.plan("8B", gpu="h20", max_model_len=32768, budget_gpus=gpus, exact=True, **query)
    assert answer.best is not None and answer.best.gpus == gpus
    return answer.best


def test_a_plan_on_other_gpus_than_the_cluster_gives_the_trainer_is_refused() -> None:
    for patch in (patch_trinity_config, patched_trinity_config):
        with pytest.raises(solver.QueryError) as refused:
            patch(TEXT, _plan(4), MODEL, name="trinity.yaml")
        assert str(refused.value) == (
            "trinity.yaml: the plan is for 4 trainer GPUs, but the config's cluster gives the trainer 6 "
            "(cluster.node_num x cluster.gpu_per_node, less 2 rollout GPUs), and solver.trinity.patch_trinity_config "
            "keeps that cluster: give it a plan on exactly 6, or set the cluster for this plan (solver.trinity_config "
            "or solver.placement_configs writes a fragment with it)")
    assert "ulysses_sequence_parallel_size: 2" in patch_trinity_config(TEXT, _plan(6), MODEL, name="trinity.yaml")


def test_a_plan_with_its_own_rollout_gpus_is_told_that_a_fragment_writes_its_cluster() -> None:
    # a placement's plan has its rollout GPUs (code-8b in docs/examples/fleet.yaml: 4 + 2); so has one planned so
    plan = _plan(4, rollout_gpus=2)
    with pytest.raises(solver.QueryError) as refused:
        patch_trinity_config(TEXT, plan, MODEL)
    assert str(refused.value).endswith(
        "or set the cluster for this plan; this plan has a cluster of its own, of 4 trainer and 2 rollout GPUs "
        "(solver.trinity_config or solver.placement_configs writes a fragment with it)")


def test_the_fewest_gpus_config_query_finds_are_refused_unless_the_cluster_gives_them() -> None:
    catalog = solver.load_catalog()
    config = read_trinity_config(TEXT, "trinity.yaml", {})
    query = config_query(catalog, config, gpu="h20", objective="min_gpus")
    (answer,) = answer_query(query, catalog)
    assert answer.best is not None and answer.best.gpus == 2
    with pytest.raises(solver.QueryError, match=r"^config: the plan is for 2 trainer GPUs, but .* trainer 6 "):
        patch_trinity_config(TEXT, answer.best, MODEL)
    on_its_gpus = TEXT.replace("  engine_num: 2\n", "  engine_num: 6\n")  # 8 less 6 engines: the plan's 2
    assert "max_token_len_per_gpu" in patch_trinity_config(on_its_gpus, answer.best, MODEL)


def test_the_cluster_is_read_as_trinity_reads_it_and_one_without_a_gpu_count_takes_any_plan() -> None:
    # the environment gives the count; mode train leaves the rollout none; no gpu_per_node, no count to keep
    counted = TEXT.replace("gpu_per_node: 8", "gpu_per_node: ${oc.env:NGPUS,8}")
    assert "max_token_len_per_gpu" in patch_trinity_config(counted, _plan(4), MODEL, environ={"NGPUS": "6"})
    with pytest.raises(solver.QueryError, match=r"gives the trainer 6 \(.*, less 2 rollout GPUs\)"):
        patch_trinity_config(counted, _plan(4), MODEL)
    with pytest.raises(solver.QueryError, match=r"gives the trainer 8 \(cluster.node_num x cluster.gpu_per_node\), "):
        patch_trinity_config(TEXT.replace("mode: both", "mode: train"), _plan(4), MODEL)
    uncounted = TEXT.replace("  gpu_per_node: 8\n", "")
    assert "max_token_len_per_gpu" in patch_trinity_config(uncounted, _plan(4), MODEL)


def test_a_cluster_that_cannot_be_read_is_named() -> None:
    unset = TEXT.replace("gpu_per_node: 8", "gpu_per_node: ${oc.env:NGPUS}")
    with pytest.raises(solver.ConfigError) as refused:
        patch_trinity_config(unset, _plan(6), MODEL, name="trinity.yaml")
    assert str(refused.value) == (
        "trinity.yaml: cluster.gpu_per_node: environment variable NGPUS is not set and '${oc.env:NGPUS}' has no "
        "default: set NGPUS as trinity run will have it (Trinity fails to load the config without it), or give it a "
        "default (${oc.env:NGPUS,DEFAULT})")
