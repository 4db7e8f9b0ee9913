"""Session 62, a review by an infrastructure lead whose scheduler reads the JSON: what it found and what was fixed."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from solver.render import json_schema

ROOT = Path(__file__).resolve().parent.parent

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
    assert "compare within one model and GPU type" in plan["cost"]["description"]
    assert "documented" in plan["evidence"]["description"] and "estimated" in plan["evidence"]["description"]
    answer = json.loads(json_schema("solve"))["$defs"]["Answer"]["properties"]
    assert "proven" in answer["status"]["description"]
    placement = json.loads(json_schema("cluster"))["$defs"]["Placement"]["properties"]
    assert "node indexes" in placement["nodes"]["description"]


CROWDED_FLEET = """\
pools:
  - {name: h20, gpu: H20-96GB, nodes: 1, gpus_per_node: 8}
jobs:
  - {name: big, model: Qwen3-8B, max_model_len: 32768, rollout_gpus: 4}
  - {name: other, model: Qwen3-8B, max_model_len: 32768, rollout_gpus: 4}
"""


def test_the_exit_table_says_what_buy_exits_with(cli, tmp_path):
    # A scheduler reads docs/cli.md's exit table: a fleet that leaves a job out exits 1, and --buy, which names the
    # nodes that place it, exits 0 on the same file. The table's row for solve cluster says both.
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(CROWDED_FLEET)
    placed, _, _ = cli("cluster", str(fleet), "--json")
    bought, out, _ = cli("cluster", str(fleet), "--buy", "--json")
    assert (placed, bought, json.loads(out)["nodes"]) == (1, 0, 1)
    rows = (ROOT / "docs/cli.md").read_text().splitlines()
    row = next(line for line in rows if line.startswith("| `solve cluster`"))
    assert "with `--buy`, every required job placed once the nodes it names are added" in row
