"""Docs true to the code after session 75's last merges: the cluster no-room reason's PPO critic (docs/cluster.md),
--write's keys merged from an anchor (a rollout that merges `model` loses its stale YaRN with it; Trinity 0.5's
trainer key both set and merged: the own removed and noted, the anchor's warned of), `enable_lora` among the typed
keys whose null every release refuses (docs/trinity.md), and vLLM's LoRA slots counted at 1024 at most
(docs/memory.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from test_lead_s75 import ANCHORED_ROPE  # a rollout model merging `model`, whose YaRN 16384 tokens do not need

import solver
from solver.tables import load_catalog
from solver.trinity import patch_trinity_config, read_trinity_config
from solver.trinity.config import MAX_LORA_SLOTS
from solver.trinity.keys import NOT_OPTIONAL_KEYS, OFFLOAD_FLAGS

ROOT = Path(__file__).resolve().parent.parent


def _page(name: str) -> str:
    """docs/NAME with its lines joined by single spaces, so that a phrase may be found across a wrap."""
    return " ".join((ROOT / "docs" / name).read_text(encoding="utf-8").split())


def _between(text: str, start: str, end: str) -> str:
    """The part of `text` from `start` up to `end`."""
    first = text.index(start)
    return text[first:text.index(end, first)]


def test_the_no_room_reason_s_critic_is_the_one_cluster_md_shows(cli, tmp_path: Path):
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump({
        "pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}],
        "jobs": [{"name": "first", "model": "Qwen3-8B", "max_model_len": 16384, "priority": 10},
                 {"name": "crit", "model": "Qwen3-14B", "max_model_len": 65536, "critic": "resident"}]}),
        encoding="utf-8")
    status, out, _ = cli("cluster", str(path), "--json")
    [left] = json.loads(out)["unplaced"]
    shown = "`it needs at least 8 GPUs of one node, with its PPO critic (resident) counted`"
    assert status == 1 and shown.strip("`") in left["reason"]
    assert "each one's PPO critic (resident) counted" in left["reason_for_several"]
    # Before, the page named the critic only in the reasons why a pool has no plan.
    assert shown in _page("cluster.md")


def test_a_rollout_merging_the_model_loses_its_stale_yarn_with_it_as_trinity_md_says():
    plan = solver.plan("4B", gpu="h200", max_model_len=16384, budget_gpus=4, exact=True)[0].best
    assert plan is not None
    written = yaml.safe_load(patch_trinity_config(ANCHORED_ROPE, plan, load_catalog().model("4B")))
    assert "rope_scaling" not in written["model"] and "rope_scaling" not in written["explorer"]["rollout_model"]
    assert ("one that merges `model`'s mapping, `rollout_model: {<<: *m}` beside `model: &m`, loses it with it"
            in _page("trinity.md"))


TRAINER_KEY_SET_AND_MERGED = """\
mode: both
algorithm: {algorithm_type: grpo}
cluster: {node_num: 1, gpu_per_node: 8}
explorer: {rollout_model: {engine_num: 2, tensor_parallel_size: 1}}
model: {model_path: Qwen/Qwen3-8B, max_model_len: 16384}
base: &base
  megatron: {a: 1}
trainer:
  <<: *base
  megatron: {b: 2}
"""
"""A config whose `trainer` sets Trinity 0.6's `megatron` itself and merges one from an anchor."""


@pytest.mark.parametrize("own", [True, False])
def test_a_05_trainer_key_set_and_merged_is_noted_as_removed_and_warned_of(cli, tmp_path: Path, own: bool):
    config, written = tmp_path / "config.yaml", tmp_path / "written.yaml"
    config.write_text(TRAINER_KEY_SET_AND_MERGED if own else TRAINER_KEY_SET_AND_MERGED.replace(
        "  megatron: {b: 2}\n", ""), encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "A100-80GB", "--trinity-version", "0.5", "--write",
                         str(written))
    assert status == 0, err
    notes = [line for line in err.splitlines() if line.startswith("solve: note: ") and " removed: " in line]
    warnings = [line for line in err.splitlines() if line.startswith(f"solve: warning: {written}: trainer.megatron: ")]
    assert len(warnings) == 1 and "a '<<: *anchor' merges it into trainer" in warnings[0]
    # Its own removed, the note names it; merged only, the note does not (docs/trinity.md said "does not" of both).
    assert [("trainer.megatron" in note) for note in notes] == ([True] if own else [])
    assert "trainer:\n  <<: *base\n" in written.read_text(encoding="utf-8")
    assert ("Where `trainer` sets such a key itself too, its own is removed (the note names it) and the anchor's "
            "shows through, named in the warning" in _page("trinity.md"))


def test_every_typed_key_whose_null_is_refused_is_named_in_trinity_md():
    paragraph = _between(_page("trinity.md"), "**A null where Trinity's own config takes no null**", "A whole section")
    # Two groups are named as such: the rollout's parallel sizes and Trinity 0.6's offload flags under trainer.
    grouped = {("explorer", "rollout_model", f"{kind}_parallel_size"): "its parallel sizes"
               for kind in ("tensor", "data", "pipeline")} | {
        ("trainer", flag): "Trinity 0.6's offload flags" for flag in OFFLOAD_FLAGS}
    unnamed = [".".join(path) for path in NOT_OPTIONAL_KEYS
               if f"`{path[-1]}`" not in paragraph and f"`{'.'.join(path)}`" not in paragraph
               and grouped.get(path, "\0") not in paragraph]
    assert unnamed == [], unnamed  # explorer.rollout_model.enable_lora was left out when its null became refused


def _lora_engine_config(max_loras: int) -> str:
    return ("model: {model_path: Qwen/Qwen3-8B, max_model_len: 8192}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
            "algorithm: {algorithm_type: grpo}\nexplorer:\n  rollout_model:\n    engine_num: 2\n    enable_lora: true\n"
            f"    extra_engine_args: {{max_loras: {max_loras}}}\n")


def test_lora_slots_past_1024_are_counted_at_1024_as_memory_md_says():
    engines = [read_trinity_config(_lora_engine_config(slots), "c.yaml", {}).vllm_rollout for slots in (4, 5000)]
    assert [None if engine is None else engine.max_loras for engine in engines] == [4, MAX_LORA_SLOTS] == [4, 1024]
    assert "with as many slots as its `max_loras`, else 1, counted at 1024 past that, a lower bound" in _page(
        "memory.md")
