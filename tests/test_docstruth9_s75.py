"""Docs true to the code, s75: docs/json.md's key list of `solve memory --json` whole and in order, `solve map
--json`'s optional keys all named, and `solve memory`'s tables giving no longest or longer length with a critic
(docs/api.md, docs/memory.md). docs/cluster.md's --seed, which no command takes: test_docstruth_s67."""

from __future__ import annotations

import json
import re
from pathlib import Path

import solver
from solver.results import MAP_LEFT_OUT_WHEN_NONE

ROOT = Path(__file__).resolve().parent.parent
JSON_PAGE = (ROOT / "docs" / "json.md").read_text(encoding="utf-8")


def _between(text: str, start: str, end: str) -> str:
    """The part of `text` from `start` up to `end`."""
    first = text.index(start)
    return text[first:text.index(end, first)]


def _section(text: str, heading: str) -> str:
    """The section of the Markdown `text` under the heading `heading` (of any level), up to the next heading: found by
    its heading, not by where a line of its prose breaks."""
    body = re.split(rf"^#+ {re.escape(heading)}\n", text, maxsplit=1, flags=re.MULTILINE)[1]
    return re.split(r"^#", body, maxsplit=1, flags=re.MULTILINE)[0]


def test_the_json_page_names_every_key_of_solve_memory_json_in_its_order():
    keys = list(json.loads(solver.memory_answer("8B", "h100", 8, 131072, sp=8, env=True).model_dump_json()))
    listed = _between(JSON_PAGE, "`solve memory --json` (`MemoryAnswer`) is one object", "[memory.md](memory.md) says")
    named = list(dict.fromkeys(name for name in re.findall(r"`([a-z_]+)`", listed) if name in keys))
    assert named == keys
    # It once left out the LoRA, critic and reference model keys: a list missing one fails.
    assert [key for key in keys if key not in named] == []
    assert {"lora_rank", "lora_parameters", "critic", "critic_parameters_b", "reference_model"} <= set(named)


def test_the_json_page_names_every_key_solve_map_json_leaves_out_where_it_does_not_apply():
    listed = _between(JSON_PAGE, "`solve map --json` is an array of `GpuMap`s", "MAP_LEFT_OUT_WHEN_NONE")
    named = set(re.findall(r"`([a-z_]+)`", listed))
    assert set(MAP_LEFT_OUT_WHEN_NONE) <= named
    assert "critic" in named


def test_with_a_critic_the_tables_give_solve_memory_no_longest_nor_longer_length():
    # docs/api.md and docs/memory.md: tables_longest and tables_longer are None with a critic (the tables measured
    # the actor alone), where without one the same setting gets them.
    refuted = {"sp": 4, "env": True}
    assert solver.estimate_memory("8B", "a100", 4, 32768, **refuted).tables_longest == 51200
    held = solver.estimate_memory("8B", "a100", 4, 32768, **refuted, critic="reloaded")
    assert (held.longest_len, held.longest_refuted is not None, held.tables_longest) == (55296, True, None)
    longer = solver.estimate_memory("0.6B", "a100", 2, 8192).tables_longer
    assert longer is not None and (longer.trains, longer.evidence) == (True, "documented")
    with_critic = solver.estimate_memory("0.6B", "a100", 2, 8192, critic="resident")
    assert (with_critic.longest_len, with_critic.tables_longer) == (22528, None)


def _optional_keys() -> set[str]:
    """Every key a schema of docs/schema/ leaves optional (printed where present), of any object in it."""
    optional: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("properties"), dict):
                optional.update(key for key in node["properties"] if key not in node.get("required", ()))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for path in (ROOT / "docs" / "schema").glob("*.json"):
        walk(json.loads(path.read_text(encoding="utf-8")))
    return optional


def test_the_json_page_names_every_key_a_schema_leaves_optional():
    # The list once lacked a placement's stay_reason, stay_reason_code and stopped_at_validated, its engines'
    # lora_gib, and an unplaced job's lora_rank, reference_model and critic.
    listed = _section(JSON_PAGE, "JSON Schemas")  # s93: it ended at "JSON made by a\nrelease", a line break
    listed += _between(JSON_PAGE, "`solve map --json` is an array of `GpuMap`s", "MAP_LEFT_OUT_WHEN_NONE")
    named = set(re.findall(r"`([a-z_]+)`", listed))
    assert sorted(_optional_keys() - named) == []
    assert {"stay_reason", "stopped_at_validated", "lora_gib", "critic"} <= _optional_keys()


def test_a_resident_critic_takes_the_8b_case_to_offload_at_2_56_times_the_step_time():
    # docs/memory.md said "twice the step time" of Qwen3-8B at 32768 on 4 A100s with a resident critic; then 1.7
    # times (0.5555), until s76's cost counted the critic's work: (1/4) x (1 + 1 + 1) x 1.1 x 1.01.
    (alone,) = solver.plan("8B", gpu="a100", max_model_len=32768, budget_gpus=4)
    (with_critic,) = solver.plan("8B", gpu="a100", max_model_len=32768, budget_gpus=4, critic="resident")
    assert [(answer.best.setting.label, answer.best.cost) for answer in (alone, with_critic)] == [
        ("SP=4", 0.325), ("Env + Offload + SP=2", 0.83325)]
    assert round(with_critic.best.cost / alone.best.cost, 2) == 2.56
    page = " ".join((ROOT / "docs" / "memory.md").read_text(encoding="utf-8").split())
    assert ("Env + Offload + SP=2, at cost 0.8333 with the critic's work counted "
            "([planner.md](planner.md#a-ppo-critic-in-the-cost)), 2.56 times the actor's `SP=4` alone at 0.325") in page
