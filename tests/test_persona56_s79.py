"""A researcher planning from a notebook, s79 (persona56): a `Fleet` built in code whose pool names a GPU type, or
whose job names a model, that the catalogue lacks is refused naming that pool or job and the way to give one of one's
own, as a cluster file's error names them (a fleet of fifteen jobs otherwise leaves the user to find which); LoRA
targets given as a list, as PEFT's ``target_modules`` takes them, are refused naming the str to pass."""

from __future__ import annotations

import re

import pytest

import solver
from solver import Job, Pool

JOBS = [Job(name="j", model="4B", max_model_len=8192), Job(name="k", model="Mistral-7B-v0.1", max_model_len=8192)]
"""Two jobs, the second of a model the shipped catalogue lacks."""


def _fleet(gpu: str, jobs: list[Job]) -> solver.Fleet:
    return solver.Fleet(pools=[Pool(name="p", gpu=gpu, nodes=1, gpus_per_node=8)], jobs=jobs)


@pytest.mark.parametrize("call", [solver.place, solver.buy_nodes])
def test_a_job_of_a_model_the_catalogue_lacks_is_named_with_the_way_to_give_it(call):
    with pytest.raises(solver.QueryError) as raised:
        call(_fleet("h20", JOBS))
    message = str(raised.value)
    assert message.startswith("job k: unknown model 'Mistral-7B-v0.1'; accepted: Qwen3-0.6B/1.7B/8B/14B(-Base), ")
    assert message.endswith("; short forms such as 4B for Qwen3-4B too; or, for a model of your own, its Hugging Face "
                            "config.json: solver.load_model_config(PATH), with "
                            "catalog=solver.load_catalog().with_model(that)")
    assert "\n" not in message


def test_the_way_the_message_names_places_the_job_with_that_catalogue():
    catalog = solver.load_catalog().with_model(solver.load_model_config("docs/examples/my-model/config.json"))
    result = solver.place(_fleet("h20", JOBS), catalog=catalog)
    assert sorted((p.job, p.model) for p in result.placements) == [("j", "Qwen3-4B"), ("k", "Mistral-7B-v0.1")]


def test_a_pool_of_a_gpu_type_the_catalogue_lacks_is_named_with_its_memory_field():
    with pytest.raises(solver.QueryError) as raised:
        solver.place(_fleet("H2O", JOBS[:1]))
    message = str(raised.value)
    assert message.startswith("pool p: unknown GPU 'H2O' (did you mean H20-96GB?); accepted: A100-40GB/80GB, ")
    assert message.endswith("; short forms such as l4 for L4-24GB too; or, for a GPU type of your own, give its "
                            "memory: gpu_memory_gb=M")
    # The field it names gives one: the pool's GPU type of its own is placed.
    own = solver.Fleet(pools=[Pool(name="p", gpu="H2O", nodes=1, gpus_per_node=8, gpu_memory_gb=96)], jobs=JOBS[:1])
    assert [(p.job, p.gpu) for p in solver.place(own).placements] == [("j", "H2O")]


def test_a_pool_gpu_with_a_count_is_named_once():
    with pytest.raises(solver.QueryError, match="^" + re.escape(
            "pool p: gpu='a100x8' gives 8 A100-80GB GPUs in one name: give the GPU type and the count per node apart: "
            "gpu='a100', gpus_per_node=8") + "$"):
        solver.place(_fleet("a100x8", JOBS[:1]))


@pytest.mark.parametrize(("targets", "shown"), [(["q_proj", "v_proj"], "['q_proj', 'v_proj'] (a list"),
                                                (("q_proj",), "('q_proj',) (a tuple")])
def test_lora_targets_as_a_list_name_the_str_to_pass(targets, shown):
    joined = ",".join(targets)
    words = f"lora_targets must be a str or None, got {shown}: pass '{joined}', the names separated by commas)"
    for call in (lambda: solver.plan("8B", gpu="h20", max_model_len=8192, lora_rank=32, lora_targets=targets),
                 lambda: solver.estimate_memory("8B", "h20", 4, 8192, lora_rank=32, lora_targets=targets)):
        with pytest.raises(solver.QueryError, match="^" + re.escape(words) + "$"):
            call()


@pytest.mark.parametrize(("targets", "shown"), [([], "[]"), ([1, 2], "[1, 2]"), (7, "7")])
def test_lora_targets_of_no_names_get_no_str_to_pass(targets, shown):
    expected = f"lora_targets must be a str or None, got {shown}"
    with pytest.raises(solver.QueryError, match="^" + re.escape(expected) + "$"):
        solver.estimate_memory("8B", "h20", 4, 8192, lora_rank=32, lora_targets=targets)


def test_the_same_names_joined_are_planned():
    (answer,) = solver.plan("8B", gpu="h20", max_model_len=8192, budget_gpus=4, lora_rank=32,
                            lora_targets="q_proj,v_proj")
    assert answer.best is not None and answer.best.lora_target_modules == r".*\.(q_proj|v_proj)"


def test_cluster_text_names_a_built_fleets_gpu_type_as_place_and_solve_cluster_do():
    fleet = _fleet("h20", JOBS[:1])
    text = solver.cluster_text(solver.place(fleet), fleet, width=100)
    assert text.splitlines()[1] == "pool p: 1 x 8 H20-96GB; 1 node and 8 of 8 GPUs used"


@pytest.mark.parametrize(("gpu", "words"), [
    ("a100", "result places job j on H20-96GB in pool p, fleet's pool p has A100-80GB: pass the fleet it placed"),
    ("H2O", "pool p: unknown GPU 'H2O' (did you mean H20-96GB?); accepted: ")])
def test_cluster_text_refuses_a_fleet_of_another_gpu_type(gpu, words):
    result = solver.place(_fleet("h20", JOBS[:1]))
    with pytest.raises(solver.QueryError, match="^" + re.escape(words)):
        solver.cluster_text(result, _fleet(gpu, JOBS[:1]))


def test_cluster_text_takes_the_catalogue_the_fleet_was_placed_with():
    catalog = solver.load_catalog().with_model(solver.load_model_config("docs/examples/my-model/config.json"))
    fleet = _fleet("h20", JOBS)
    result = solver.place(fleet, catalog=catalog)
    assert "│ k   │" in solver.cluster_text(result, fleet, width=160, catalog=catalog)
    with pytest.raises(solver.QueryError, match=r"^job k: unknown model 'Mistral-7B-v0.1'; accepted: "):
        solver.cluster_text(result, fleet)
