"""Tests that kill mutants of session 52's new code which its own tests let live (docs: the report
review-s52-mutday.md): `MemoryAnswer` reading its JSON back, ..."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import ValidationError

from solver.memory import JSON_GIB_SLACK, MemoryAnswer, weight_shapes
from solver.render import json_schema
from solver.results import GpuMap
from solver.tables import load_model_config

HF_CONFIGS = Path(__file__).parent / "data" / "hf-configs"

FAR = {"total_gib": 50.0, "usable_gib": 60.0, "step_gib": 20.0, "step_usable_gib": 40.0, "host_memory_gib": 100.0,
       "host_ram_gib": 200.0}
"""An answer's figures with every comparison its verdicts rest on far from its limit: the activations have 10 GiB of
room, the optimizer step 20, the host 100."""


@pytest.fixture
def answer_json(cli) -> Any:
    """`solve memory --json`'s answer with the figures of `FAR` and the changes given, as its JSON prints it."""
    printed = json.loads(cli("memory", "--model", "8B", "--gpu", "h100", "--gpus", "2", "--len", "8k",
                             "--json")[1])
    answer = MemoryAnswer.model_validate(printed)

    def with_figures(**changes: float) -> dict[str, Any]:
        return answer.model_copy(update={**FAR, "tables": None, **changes}).model_dump(mode="json")

    return with_figures


@pytest.mark.parametrize("changes", [
    {"usable_gib": 50.0001},  # the activations' room: 0.0001 GiB
    {"step_usable_gib": 20.0001},  # the optimizer step's
    {"step_usable_gib": 30.0001},  # the step's room 0.0001 more than the activations': which binds
    {"host_memory_gib": 99.95, "host_ram_gib": 100.0001},  # as host_fits reads it: 100.0 GiB (a tenth, rounded up)
])
def test_a_verdict_at_each_limit_the_json_cannot_tell_reads_back_either_way(answer_json, changes: dict):
    # Each comparison a verdict rests on, within the JSON's rounding (JSON_GIB_SLACK) of its limit, alone: a flipped
    # yes or no there may be the rounding's, so it is read back (with the verdict the figures give), not refused.
    printed = answer_json(**changes)
    flipped = {**printed, "fits": not printed["fits"]}
    assert MemoryAnswer.model_validate(flipped).fits is printed["fits"]


@pytest.mark.parametrize("changes", [
    {"usable_gib": 50.0003}, {"step_usable_gib": 20.0003}, {"step_usable_gib": 30.0003},
    {"host_memory_gib": 99.95, "host_ram_gib": 100.0003}, {},
])
def test_a_verdict_beyond_the_jsons_rounding_of_every_limit_is_refused_flipped(answer_json, changes: dict):
    printed = answer_json(**changes)
    with pytest.raises(ValidationError, match=f"fits is {not printed['fits']!r}, but the other fields say "
                                              f"{printed['fits']!r}"):
        MemoryAnswer.model_validate({**printed, "fits": not printed["fits"]})


def test_a_yes_or_no_verdict_given_as_a_number_is_refused_even_at_a_limit(answer_json):
    far, at_limit = answer_json(), answer_json(usable_gib=50.0001)
    assert (far["fits"], at_limit["fits"]) == (True, True)
    for printed in (far, at_limit):
        with pytest.raises(ValidationError, match="fits is 1, but the other fields say True"):
            MemoryAnswer.model_validate({**printed, "fits": 1})


def test_the_headroom_reads_back_within_twice_the_rounding_and_as_a_whole_number(answer_json):
    # The headroom (10 GiB: the activations') rests on two rounded figures: read back within 2 * JSON_GIB_SLACK of
    # the figures' either way, refused beyond; a whole number is a number; true is not 1.
    printed = answer_json()
    assert printed["headroom_gib"] == 10.0
    for given in (10, 10 + 1.5 * JSON_GIB_SLACK, 10 - 1.5 * JSON_GIB_SLACK):
        assert MemoryAnswer.model_validate({**printed, "headroom_gib": given}).headroom_gib == 10.0
    for given in (10 + 2.5 * JSON_GIB_SLACK, 10 - 2.5 * JSON_GIB_SLACK):
        with pytest.raises(ValidationError, match=f"headroom_gib is {given!r}, but the other fields say 10.0"):
            MemoryAnswer.model_validate({**printed, "headroom_gib": given})
    one = answer_json(usable_gib=51.0)
    with pytest.raises(ValidationError, match="headroom_gib is True, but the other fields say 1.0"):
        MemoryAnswer.model_validate({**one, "headroom_gib": True})


def test_a_qwen2_moe_shared_experts_weights_are_laid_out_as_transformers_holds_them():
    # Qwen2MoeSparseMoeBlock's shared expert in each of the 24 layers: gate_proj and up_proj (5632 rows of 2048),
    # down_proj (2048 rows of 5632), and shared_expert_gate (1 row of 2048); FSDP2 shards each by its rows.
    model = load_model_config(HF_CONFIGS / "Qwen1.5-MoE-A2.7B.json")
    assert weight_shapes(model)[-3:] == ((5632, 2048, 48), (2048, 5632, 24), (1, 2048, 24))


def test_a_map_without_rows_is_read_as_its_schema_reads_it(cli):
    # Neither the type nor the schema asks for a row: a map with none reads back, by model or by length.
    [by_length] = json.loads(cli("map", "--gpu", "h100", "--model", "8B", "--by", "len", "--gpus-up-to", "1",
                                 "--json")[1])
    [by_model] = json.loads(cli("map", "--gpu", "h100", "--model", "8B", "--gpus-up-to", "1", "--json")[1])
    empty = [{**by_model, "rows": []}, {**by_length, "rows": []}]
    assert list(Draft202012Validator(json.loads(json_schema("map"))).iter_errors(empty)) == []
    assert [GpuMap.model_validate(gpu_map).rows for gpu_map in empty] == [(), ()]
