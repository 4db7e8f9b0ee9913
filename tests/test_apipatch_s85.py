"""The Trinity config API (apipatch, s85): `patch_trinity_config` refuses a plan made for another catalogue model than
the config trains, as ``--write`` refuses a ``--model`` of another; results read back from their JSON compare equal
as docs/api.md says (their JSON, and their own round trip), not to the originals, whose GiB the JSON rounds; the
functions that say what the patch does refuse arguments of the wrong type in one line, as the patch does, where they
raised ``AttributeError`` or ``TypeError``."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import solver
from solver.results import Answer, Plan
from solver.tables import Model, QueryError
from solver.trinity import (
    aliases_written_out,
    anchored_keys,
    config_key_changes,
    config_keys_changed,
    config_keys_kept,
    kept_interpolated_keys,
    kept_interpolations,
    patch_trinity_config,
    patched_trinity_config,
    rope_scaling_written,
)

API_DOC = Path(__file__).resolve().parents[1] / "docs" / "api.md"
CONFIG = "model:\n  model_path: MODEL\n  max_model_len: 4096\ncluster:\n  node_num: 1\n  gpu_per_node: 4\n" \
         "mode: train\n"
"""A config whose cluster gives the trainer the 4 GPUs of `qwen3_4b`'s plan; MODEL its model path."""


@cache
def qwen3_4b() -> tuple[Answer, Plan, Model]:
    """Qwen3-4B on exactly 4 A100s at 8192 tokens: its answer, best plan and model."""
    (answer,) = solver.plan("4B", gpu="a100", max_model_len=8192, budget_gpus=4, exact=True)
    assert answer.best is not None
    return answer, answer.best, solver.load_catalog().model("4B")


def _refusal(trained: str, planned: str) -> str:
    return (f"config: the plan is {planned}'s (model), but the config trains {trained} (model.model_path), which "
            f"solver.trinity.patch_trinity_config keeps: it would give {trained} another model's plan; give it a plan "
            f"of {trained}, with that model")


@pytest.mark.parametrize("patch", [patch_trinity_config, patched_trinity_config])
def test_the_patch_refuses_a_plan_of_another_catalogue_model(patch: Any) -> None:
    _, plan, model = qwen3_4b()
    with pytest.raises(QueryError) as refused:
        patch(CONFIG.replace("MODEL", "Qwen/Qwen3-14B"), plan, model)
    assert str(refused.value) == _refusal("Qwen3-14B", "Qwen3-4B")
    # the model path as the environment gives it, as the check reads the config
    from_environment = CONFIG.replace("MODEL", "${oc.env:MODEL_PATH,Qwen/Qwen3-4B}")
    with pytest.raises(QueryError) as refused:
        patch(from_environment, plan, model, environ={"MODEL_PATH": "/models/Qwen3-8B/"})
    assert str(refused.value) == _refusal("Qwen3-8B", "Qwen3-4B")
    # the model given is the one the plan is taken to be for: Qwen3-14B's model beside a config of Qwen3-4B
    with pytest.raises(QueryError) as refused:
        patch(CONFIG.replace("MODEL", "Qwen/Qwen3-4B"), plan, solver.load_catalog().model("14B"))
    assert str(refused.value) == _refusal("Qwen3-4B", "Qwen3-14B")


def test_the_patch_takes_the_plan_of_the_configs_own_model_or_a_path_no_catalogue_model_names() -> None:
    _, plan, model = qwen3_4b()
    trainer = "trainer:\n  ulysses_sequence_parallel_size: 1\n  max_token_len_per_gpu: 16384\n"
    for path in ("Qwen/Qwen3-4B", "/models/qwen3-4b/", "${oc.env:MODEL_PATH,Qwen/Qwen3-4B}", "/ckpt/my-run"):
        config = CONFIG.replace("MODEL", path)
        assert patch_trinity_config(config, plan, model) == config.replace("4096", "8192") + trainer, path
    # the functions that say what the patch does take the plan they are given (solve --from-config --model M --json)
    other = CONFIG.replace("MODEL", "Qwen/Qwen3-14B")
    assert config_keys_changed(other, plan, model) == []
    assert [change.key for change in config_key_changes(other, plan, model)] == [
        "model.max_model_len", "trainer.ulysses_sequence_parallel_size", "trainer.max_token_len_per_gpu"]


def _round_trip(result: BaseModel) -> BaseModel:
    return type(result).model_validate_json(result.model_dump_json())


def test_results_read_back_from_json_compare_as_the_docs_say() -> None:
    answer, plan, _ = qwen3_4b()
    memory = solver.memory_answer("8B", "h100", 8, 131072, sp=8, env=True)
    (gpu_map,) = solver.map_plans("8B", gpu="h100", by="len", gpus_up_to=2)
    for result in (plan, answer, memory, gpu_map):
        rebuilt = _round_trip(result)
        # the JSON rounds the memory model's GiB: the rebuilt result holds them rounded, so it differs
        assert rebuilt != result, type(result).__name__
        assert rebuilt.model_dump(mode="json") == result.model_dump(mode="json"), type(result).__name__
        assert _round_trip(rebuilt) == rebuilt, type(result).__name__
    rebuilt_plan = _round_trip(plan)
    assert isinstance(rebuilt_plan, Plan)
    assert (rebuilt_plan.memory_gb, rebuilt_plan.headroom_gb) == (round(plan.memory_gb, 2), round(plan.headroom_gb, 2))
    assert rebuilt_plan.memory_gb != plan.memory_gb
    assert isinstance(answer, Answer) and _round_trip(answer).model_dump(mode="json") == answer.as_json()
    documented = " ".join(API_DOC.read_text(encoding="utf-8").split())
    assert ('What compares equal is the JSON: `rebuilt.model_dump(mode="json") == original.model_dump(mode="json")` '
            "(an answer's `as_json()`), and a result read back is equal to its own round trip "
            "(`solver.Plan.model_validate_json(rebuilt.model_dump_json()) == rebuilt`)") in documented


DESCRIBERS = [config_keys_changed, config_key_changes, config_keys_kept, rope_scaling_written, kept_interpolations,
              kept_interpolated_keys, aliases_written_out, anchored_keys, patch_trinity_config]


@pytest.mark.parametrize("function", DESCRIBERS, ids=lambda function: function.__name__)
def test_the_functions_that_say_what_the_patch_does_refuse_wrong_types_in_one_line(function: Any) -> None:
    _, plan, model = qwen3_4b()
    config = CONFIG.replace("MODEL", "Qwen/Qwen3-4B")
    for arguments, keywords, words in (
            ((None, plan, model), {}, "text must be a str, got None"),
            ((config.encode(), plan, model), {}, "text must be a str, got b'model:"),
            ((config, "plan", model), {}, "plan must be a Plan, got 'plan'"),
            ((config, plan, "4B"), {}, "model must be a Model, got '4B'"),
            ((config, plan, model), {"name": 3}, "name must be a str, got 3"),
            ((config, plan, model), {"environ": [("A", "1")]}, "environ must be a Mapping or None, got [('A', '1')]"),
            ((config, plan, model), {"version": "0.7"}, "version")):
        with pytest.raises(QueryError) as refused:
            function(*arguments, **keywords)
        assert str(refused.value).startswith(words) and "\n" not in str(refused.value), (arguments, keywords)
