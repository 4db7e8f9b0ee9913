"""Session 62, a review by an infrastructure lead whose scheduler reads the JSON: what it found and what was fixed."""
from __future__ import annotations

import json

import pytest

from solver.render import json_schema

# The memory model's terms (solver/memory.py's Terms) are described by docs/memory.md's breakdown, not here.
UNDESCRIBED_HERE = {("memory", "Terms")}


def undescribed_fields(command: str) -> list[str]:
    """The properties of `command`'s JSON Schema, as `Object.field`, that carry no description."""
    schema = json.loads(json_schema(command))
    objects = {"<root>": schema, **schema.get("$defs", {})}
    return [f"{name}.{field}" for name, definition in objects.items() if (command, name) not in UNDESCRIBED_HERE
            for field, spec in definition.get("properties", {}).items() if not spec.get("description")]


@pytest.mark.parametrize("command", ["solve", "cluster", "cluster-buy", "map", "memory"])
def test_every_field_a_script_reads_is_described_in_the_schema(command: str):
    # docs/json.md promises the schemas "with each field's description, for validation or code generation": a
    # scheduler's author reads a plan's gpus, sp, cost and evidence, an answer's status and a placement's nodes there.
    assert undescribed_fields(command) == []


def test_the_core_plan_fields_say_what_they_hold():
    plan = json.loads(json_schema("solve"))["$defs"]["Plan"]["properties"]
    assert "trainer GPUs" in plan["gpus"]["description"]
    assert "trainer.ulysses_sequence_parallel_size" in plan["sp"]["description"]
    assert "compare within one GPU type" in plan["cost"]["description"]
    assert "documented" in plan["evidence"]["description"] and "estimated" in plan["evidence"]["description"]
    answer = json.loads(json_schema("solve"))["$defs"]["Answer"]["properties"]
    assert "proven" in answer["status"]["description"]
    placement = json.loads(json_schema("cluster"))["$defs"]["Placement"]["properties"]
    assert "node indexes" in placement["nodes"]["description"]
