"""review75b's fixes (session 75): --write removing a key a section sets itself and also merges in (``<<: *anchor``)
left the anchor's value in its place (a YaRN of another factor took over): it is set to null, but for a key Trinity
0.5 refuses in any value, still removed; and the engine-nodes check names the engines that run elsewhere by
keys.REMOTE_ENGINES, as the config's reading does."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

import solver
from solver.tables import load_catalog
from solver.trinity import patched_trinity_config, trinity_config_problems
from solver.trinity.patch import _delete

CATALOG = load_catalog()

OWN_AND_MERGED = """\
base: &base {model_path: Qwen/Qwen3-4B, rope_scaling: {rope_type: yarn, factor: 4.0, \
original_max_position_embeddings: 40960}}
model: {<<: *base, max_model_len: 16384, rope_scaling: {rope_type: yarn, factor: 2.0, \
original_max_position_embeddings: 40960}}
cluster: {node_num: 1, gpu_per_node: 8}
algorithm: {algorithm_type: grpo}
"""
"""``model`` sets its own YaRN (factor 2) not needed at 16384 and merges an anchor that has another (factor 4)."""


def _dumped(data: Any) -> str:
    out = io.StringIO()
    YAML().dump(data, out)
    return out.getvalue()


def test_delete_unsets_a_key_the_mapping_sets_and_also_merges_where_asked():
    data = YAML().load("a: &a {x: 1, y: 2}\nown: {<<: *a, y: 4}\nplain: {x: 1, y: 3}\nkept: {<<: *a, y: 5}\n")
    _delete(data["own"], "y", unset=True)
    _delete(data["plain"], "y", unset=True)
    _delete(data["kept"], "y")  # removed: the anchor's shows through (0.5's refused trainer keys: warned of)
    text = _dumped(data)
    assert text == "a: &a {x: 1, y: 2}\nown: {<<: *a, y: null}\nplain: {x: 1}\nkept: {<<: *a}\n"
    # Removed, as before, `own` read back took the anchor's y (2) in place of its own: now it is null (unset).
    assert dict(YAML(typ="safe").load(text)["own"]) == {"x": 1, "y": None}


def test_the_05_patch_still_removes_a_trainer_key_its_anchor_also_gives():
    # A key Trinity 0.5 refuses in any value: set to null it would still be refused once the anchor's is removed.
    plan = solver.plan("8B", gpu="a100", max_model_len=16384, budget_gpus=6)[0].best
    assert plan is not None
    text = ("mode: both\nalgorithm: {algorithm_type: grpo}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
            "explorer: {rollout_model: {engine_num: 2, tensor_parallel_size: 1}}\n"
            "model: {model_path: Qwen/Qwen3-8B, max_model_len: 16384}\n"
            "base: &base\n  megatron: {a: 1}\ntrainer:\n  <<: *base\n  megatron: {b: 2}\n")
    patched = patched_trinity_config(text, plan, CATALOG.model("8B"), version="0.5")
    assert (patched.removed_for_05, patched.merged_for_05) == (("trainer.megatron",), ("trainer.megatron",))
    assert "trainer:\n  <<: *base\n" in patched.text and "megatron: {b: 2}" not in patched.text
    assert "megatron: null" not in patched.text and "megatron:\n" not in patched.text


def test_write_leaves_no_merged_yarn_in_place_of_the_section_s_own(cli, tmp_path: Path):
    config, written = tmp_path / "own.yaml", tmp_path / "written.yaml"
    config.write_text(OWN_AND_MERGED, encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "h200", "--write", str(written))
    assert status == 0, err
    text = written.read_text(encoding="utf-8")
    # Before: "model: {<<: *base, max_model_len: 16384}", which Trinity reads with the anchor's YaRN of factor 4.
    assert "\nmodel: {<<: *base, max_model_len: 16384, rope_scaling: null}\n" in text
    assert YAML(typ="safe").load(text)["model"]["rope_scaling"] is None
    assert text.startswith(OWN_AND_MERGED.splitlines()[0] + "\n")  # the anchor as it was


@pytest.mark.parametrize(("engine_type", "lines"), [
    ("external", 0), ("tinker", 0),
    ("vllm", 1),  # 12 GPUs on nodes of 8: not whole nodes
])
def test_engines_that_run_elsewhere_are_not_judged_across_nodes(engine_type: str, lines: int):
    mapping = {"algorithm": {"algorithm_type": "grpo"}, "model": {"model_path": "Qwen/Qwen3-8B"},
               "cluster": {"node_num": 4, "gpu_per_node": 8},
               "explorer": {"auxiliary_models": [{"model_path": "Qwen/Qwen3-32B", "engine_type": engine_type,
                                                  "tensor_parallel_size": 12}]}}
    problems = trinity_config_problems(mapping, CATALOG.model("Qwen3-8B"), 8, max_model_len=16384)
    assert [problem.code.value for problem in problems].count("engine-nodes-refused") == lines
