"""The lead's own fixes of session 75: --write's note above a flow-style ``model`` line is wrapped at the column it
is written at (the file's margin), so a later --write, which finds where each paragraph ends by a greedy wrap there,
takes all of it away (the two-peak evidence of a PPO critic's plan left its second line behind); and --write removes
a key of an anchored mapping another merges (ruamel.yaml fails at it itself: exit 70 before)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ruamel.yaml import YAML
from test_mutants26_s75 import RESIDENT_OK

import solver
from solver.tables import load_catalog
from solver.trinity.patch import _delete_merged, patch_trinity_config
from solver.trinity.plan_keys import COMMENT_WIDTH

FLOW_MODEL = RESIDENT_OK
"""A PPO config whose ``model`` is one flow-style line (mutants26's): --write's note goes above it, at column 0."""


def test_the_note_above_a_flow_style_model_is_wrapped_at_the_margin_and_rewritten_whole():
    plan = solver.plan("4B", gpu="h100", max_model_len=8192, budget_gpus=4, critic="offloaded")[0].best
    model = load_catalog().model("4B")
    written = patch_trinity_config(FLOW_MODEL, plan, model)
    lines = written.splitlines()
    start = lines.index(next(line for line in lines if line.startswith("# evidence: ")))
    note = lines[start:lines.index("model: {model_path: Qwen/Qwen3-4B, max_model_len: 8192}")]
    assert note == [
        "# evidence: estimated: the memory model predicts 38.6 GiB per GPU for the actor's pass and 21.0 for",
        "#   the critic's own update, 34.7 GiB to spare at the actor's pass, the tighter peak"]
    assert all(len(line) <= COMMENT_WIDTH for line in note)
    # Before, wrapped at column 2 (the YAML's indentation), "for" went to the second line, which a later --write did
    # not take for the paragraph's (the greedy wrap at column 0 would have kept it on the first): it stayed, twice.
    again = patch_trinity_config(written, plan, model, version="0.6")
    assert again == patch_trinity_config(FLOW_MODEL, plan, model, version="0.6")
    assert sum(line.startswith("#   the critic's own update") for line in again.splitlines()) == 1


ANCHORED_ROPE = """\
model: &m {model_path: Qwen/Qwen3-4B, max_model_len: 16384, rope_scaling: {rope_type: yarn, factor: 2.0}}
cluster: {node_num: 1, gpu_per_node: 8}
algorithm: {algorithm_type: grpo}
explorer:
  rollout_model: {<<: *m, engine_num: 4}
"""
"""A config Trinity takes whose rollout model merges ``model`` (a YAML anchor) with a YaRN not needed at 16384."""


def test_write_removes_a_key_of_an_anchored_mapping_another_merges(cli, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch):
    # ruamel.yaml fails deleting a key of a mapping another merges (KeyError: 1 in update_key_value): --write crashed
    # with exit 70 on this config (coverage15's find). Now the YaRN is gone from the anchor, and from the merge.
    config, written = tmp_path / "anchored.yaml", tmp_path / "written.yaml"
    config.write_text(ANCHORED_ROPE, encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "h200", "--write", str(written))
    assert status == 0, err
    text = written.read_text(encoding="utf-8")
    assert "model: &m {model_path: Qwen/Qwen3-4B, max_model_len: 16384}\n" in text
    assert "  rollout_model: {<<: *m, engine_num: 4}\n" in text and "rope_scaling" not in text
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    status, out, err = cli("--from-config", str(written), "--check", "--gpu", "h200")
    assert status == 0, out + err


def test_a_merging_mapping_keeps_its_own_key_or_takes_the_next_merged_ones():
    data = YAML().load("a: &a {x: 1, y: 2}\nb: &b {y: 3}\nown: {<<: *a, y: 4}\nboth: {<<: [*a, *b]}\nonly: {<<: *a}\n")
    _delete_merged(data["a"], "y")
    assert (dict(data["a"]), dict(data["own"]), dict(data["both"]), dict(data["only"])) == (
        {"x": 1}, {"x": 1, "y": 4}, {"x": 1, "y": 3}, {"x": 1})


def test_write_sets_a_key_a_section_only_merges_in_to_null(cli, tmp_path: Path):
    # `model` merges a stale YaRN from another anchor: the anchor may be others' too, so the key is set to null in
    # `model` itself (Trinity reads null as unset). Before: exit 70 (the merged-only mapping has no line data).
    config, written = tmp_path / "merged.yaml", tmp_path / "written.yaml"
    config.write_text(
        "base: &base {model_path: Qwen/Qwen3-4B, max_model_len: 16384, rope_scaling: {rope_type: yarn, factor: 2.0, "
        "original_max_position_embeddings: 40960}}\nmodel: {<<: *base}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
        "algorithm: {algorithm_type: grpo}\n", encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "h200", "--write", str(written))
    assert status == 0, err
    text = written.read_text(encoding="utf-8")
    assert "\nmodel: {<<: *base, rope_scaling: null}\n" in text
    assert text.startswith("base: &base {model_path: Qwen/Qwen3-4B, max_model_len: 16384, rope_scaling: {rope_type: "
                           "yarn, factor: 2.0, original_max_position_embeddings: 40960}}\n")


def test_a_rollout_enable_lora_not_a_boolean_is_refused_as_trinitys_typed_config_refuses_it(cli, tmp_path: Path):
    # InferenceModelConfig.enable_lora is a plain bool in every release (common/config.py:607 in 0.6.0, :575 in 0.5.2,
    # :555 in 0.5.0): OmegaConf refuses a word it does not read as one, and null. Before, no line said anything.
    lines = {}
    for value in ("maybe", "null", "yes"):
        config = tmp_path / f"{value}.yaml"
        config.write_text("model: {model_path: Qwen/Qwen3-4B, max_model_len: 16384}\ncluster: {node_num: 1, "
                          "gpu_per_node: 8}\nalgorithm: {algorithm_type: grpo}\nexplorer:\n  rollout_model: "
                          f"{{engine_num: 4, enable_lora: {value}}}\n", encoding="utf-8")
        status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--check", "--json")
        current = json.loads(out)[0]["current"]
        lines[value] = (status, current["config_problem_codes"], current["config_problems"])
    assert lines["maybe"] == (1, ["flag-not-boolean-refused"], [(
        "explorer.rollout_model.enable_lora must be true or false, got 'maybe': every Trinity release refuses the "
        "config as it loads it (its typed config's bool field)")])
    assert lines["null"][:2] == (1, ["typed-null-refused"])
    assert lines["null"][2][0].startswith("explorer.rollout_model.enable_lora is null, not true or false")
    assert lines["yes"] == (0, [], [])  # OmegaConf reads yes as true
