"""Tests for session 55's loose ends: --write's note on the keys it removed for Trinity 0.5 names exactly those the
patch removed (`PatchedConfig.removed_for_05`), not those a ``<<: *anchor`` merges in, which stay; a cluster's
unplaced jobs read back from JSON show the words for several jobs as the live result does; its rollout engines' GiB
are rounded in JSON as a plan's are."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import yaml
from rich.console import Console

import solver
from solver.render import cluster_json, cluster_view
from solver.trinity import PatchedConfig, patch_trinity_config, patched_trinity_config

HEAD = ("mode: both\nalgorithm: {algorithm_type: grpo}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
        "explorer: {rollout_model: {engine_num: 2, tensor_parallel_size: 1}}\n"
        "model: {model_path: Qwen/Qwen3-8B, max_model_len: 16384}\n")
"""6 trainer GPUs of A100 80GB for Qwen3-8B at 16384 tokens; the trainer section follows."""
MERGED = HEAD + "base: &base\n  balance_batch: true\ntrainer:\n  <<: *base\n  megatron: {}\n"
"""A trainer section with a key of 0.6's of its own (megatron) and one merged in from an anchor (balance_batch)."""


def test_the_patch_says_which_keys_it_removed_for_05(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    config, patched = tmp_path / "trinity.yaml", tmp_path / "patched.yaml"
    config.write_text(MERGED, encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "a100-80g", "--trinity-version", "0.5",
                         "--write", str(patched))
    written = patched.read_text(encoding="utf-8")
    # megatron, the section's own, is removed; balance_batch stays with its anchor, and the check still names it
    assert (status, "megatron" in written, "  balance_batch: true\n" in written) == (0, False, True)
    assert [line for line in err.splitlines() if "removed" in line or "warning" in line] == [
        (f"solve: warning: {patched}: trainer.balance_batch: a key of Trinity 0.6's trainer, which Trinity 0.5 "
         "refuses (its TrainerConfig has no such key), so the config does not load; a '<<: *anchor' merges it into "
         "trainer, and --write leaves the anchor as it is, since other sections may share it: remove it there"),
        (f"solve: warning: {patched}: base: no release of Trinity (0.5.0 to 0.6.0) has this key there, so Trinity "
         "refuses the config (it knows no such key): remove it, or move it where Trinity reads it; where it parks "
         "YAML anchors, put each anchor on the first key that uses it, then remove it"),  # the anchor's
        (f"solve: note: {patched}: trainer.megatron removed: a key of Trinity 0.6's trainer, which Trinity 0.5 "
         "refuses (its TrainerConfig has no such key)")]


def test_patched_config_carries_the_removed_keys_for_05_only():
    plan, model = solver.plan("8B", gpu="a100-80g", max_model_len=16384)[0].best, solver.load_catalog().model("8B")
    for_05 = patched_trinity_config(MERGED, plan, model, version="0.5")
    assert (for_05.removed_for_05, for_05.merged_for_05, for_05.text) == (
        ("trainer.megatron",), ("trainer.balance_batch",), patch_trinity_config(MERGED, plan, model, version="0.5"))
    assert patched_trinity_config(MERGED, plan, model, version="0.6").removed_for_05 == ()
    assert patched_trinity_config(HEAD + "trainer: {param_offload: false, critic_warmup: 0}\n", plan, model,
                                  version="0.5") == PatchedConfig(
        HEAD + "trainer: {ulysses_sequence_parallel_size: 1, max_token_len_per_gpu: 32768}\n",
        ("trainer.param_offload", "trainer.critic_warmup"))


def _cluster_text(result: solver.ClusterResult, fleet: solver.Fleet) -> str:
    """`solve cluster`'s view of `result`, as a terminal of 200 columns shows it."""
    console = Console(width=200, file=io.StringIO())
    console.print(cluster_view(result, fleet))
    return console.file.getvalue()


def test_a_cluster_read_back_from_json_words_a_row_of_several_jobs_as_the_live_result(tmp_path: Path):
    # One node of 8 A100s: y takes its room, x-0 and x-1 share a reason, which a row of them words for each.
    jobs = [{"name": "y", "model": "Qwen3-14B", "max_model_len": 65536, "rollout_gpus": 2, "priority": 2},
            *({"name": f"x-{index}", "model": "0.6B", "max_model_len": 8192, "rollout_gpus": 4} for index in (0, 1))]
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump({"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}],
                                    "jobs": jobs}), encoding="utf-8")
    fleet = solver.load_fleet(path)
    live = solver.place(fleet)
    text = _cluster_text(live, fleet)
    assert "x-0, x-1" in text and "each needs at least 5 GPUs" in text
    assert _cluster_text(solver.ClusterResult.model_validate_json(cluster_json(live)), fleet) == text


ENGINE_GIB = ("weights_gib", "kv_cache_gib", "room_gib")


@pytest.mark.parametrize(("gpu", "length", "whole", "shown"), [
    # Qwen3-8B's bf16 weights on one GPU: 15.2569... GiB, kept whole in the result, 15.26 in JSON (as memory_gb); its
    # KV cache of 30000 tokens, 4.1199... GiB, 4.12; vLLM's room on an A100, 71 GiB.
    ("A100-80GB", 30000, (15.25693, 4.11987, 71.0), (15.26, 4.12, 71.0)),
    # On an H100 at 40000 tokens: the KV cache of one sequence is 5.4931640625 GiB, vLLM's room 70.68271...
    ("H100", 40000, (15.25693, 5.49316, 70.68271), (15.26, 5.49, 70.68)),
])
def test_the_rollout_engines_gib_are_kept_whole_and_rounded_in_json_as_a_plans(
        tmp_path: Path, gpu: str, length: int, whole: tuple[float, ...], shown: tuple[float, ...]):
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump({"pools": [{"name": "a", "gpu": gpu, "nodes": 1, "gpus_per_node": 8}],
                                    "jobs": [{"name": "x", "model": "Qwen3-8B", "max_model_len": length,
                                              "rollout_gpus": 2}]}), encoding="utf-8")
    result = solver.place(solver.load_fleet(path))
    (placement,) = result.placements
    engines = placement.rollout_engines
    assert engines is not None and tuple(round(getattr(engines, field), 5) for field in ENGINE_GIB) == whole
    (written,) = json.loads(cluster_json(result))["placements"]
    assert (written["rollout_engines"], written["plan"]["memory_gb"]) == (
        {"size": 1, **dict(zip(ENGINE_GIB, shown)), "largest": False}, round(placement.plan.memory_gb, 2))


def test_keys_merged_in_for_05_are_one_warning_saying_write_leaves_them(cli, tmp_path: Path):
    # An offload flag and another 0.6 key, both merged in: the check's two lines (each saying --write removes them)
    # become one naming both, which says where they come from.
    config, patched = tmp_path / "trinity.yaml", tmp_path / "patched.yaml"
    config.write_text(HEAD + "base: &base\n  param_offload: false\n  critic_warmup: 0\ntrainer:\n  <<: *base\n",
                      encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "a100-80g", "--trinity-version", "0.5",
                         "--write", str(patched))
    assert (status, "  <<: *base\n" in patched.read_text(encoding="utf-8")) == (0, True)
    assert [line for line in err.splitlines() if "trainer." in line and "warning" in line] == [
        (f"solve: warning: {patched}: trainer.param_offload, trainer.critic_warmup: keys of Trinity 0.6's trainer, "
         "which Trinity 0.5 refuses (its TrainerConfig has no such key), so the config does not load; a "
         "'<<: *anchor' merges them into trainer, and --write leaves the anchor as it is, since other sections may "
         "share it: remove them there")]
    assert "(--write does" not in err
