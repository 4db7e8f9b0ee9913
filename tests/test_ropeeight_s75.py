"""RoPE and rollout-engine gaps (session 75, helper ropeeight): --write keeps the comment after an anchored mapping
where it was (an alias of it is not where it ends); the ``apply`` line of a config's ``model.rope_scaling`` is the
mapping --write leaves (one function, `rope_scaling_written`)."""

from __future__ import annotations

from pathlib import Path

import pytest

COMMENT = "# a comment after the anchored mapping\n"
"""The user's comment right after the anchored ``model.rope_scaling`` block."""


def _anchored(length: int) -> str:
    """Qwen3-4B at `length` tokens, its ``model.rope_scaling`` anchored and followed by `COMMENT`, the rollout
    model's an alias of it (GRPO: no critic)."""
    return ("mode: both\nalgorithm: {algorithm_type: grpo}\nmodel:\n  model_path: Qwen/Qwen3-4B\n"
            f"  max_model_len: {length}\n  rope_scaling: &rope\n    type: yarn\n    factor: 2.0\n{COMMENT}"
            "cluster:\n  node_num: 1\n  gpu_per_node: 8\nexplorer:\n  rollout_model:\n    engine_num: 4\n"
            "    rope_scaling: *rope\n")


@pytest.fixture(autouse=True)
def _env_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)


def _written(cli, tmp_path: Path, text: str) -> str:
    config, written = tmp_path / "trinity.yaml", tmp_path / "written.yaml"
    config.write_text(text, encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "h200", "--write", str(written))
    assert status == 0, err
    return written.read_text(encoding="utf-8")


def test_a_comment_after_an_anchored_mapping_stays_when_keys_are_added_to_it(cli, tmp_path: Path):
    # Before, the trainer section appended at the end took the comment from the anchor's block through the alias
    # that ended the file (explorer.rollout_model.rope_scaling: *rope), so it moved to the file's end.
    written = _written(cli, tmp_path, _anchored(131072))
    assert ("  rope_scaling: &rope\n    type: yarn\n    rope_type: yarn\n    factor: 3.2\n"
            f"    original_max_position_embeddings: 40960\n{COMMENT}cluster:\n") in written
    assert written.endswith("    rope_scaling: *rope\ntrainer:\n  ulysses_sequence_parallel_size: 4\n"
                            "  max_token_len_per_gpu: 65536\n")


def test_a_comment_after_an_anchored_mapping_stays_when_the_mapping_is_removed(cli, tmp_path: Path):
    # Within the native context the YaRN goes, the alias with it: the comment stays before cluster.
    written = _written(cli, tmp_path, _anchored(16384))
    assert "rope_scaling" not in written
    assert f"  max_model_len: 16384\n{COMMENT}cluster:\n" in written
    assert written.count(COMMENT) == 1 and written.endswith("  max_token_len_per_gpu: 32768\n")


def test_a_comment_after_a_merging_section_is_not_taken_from_the_anchor(cli, tmp_path: Path):
    # A key appended to a section that merges an anchored one (<<: *base) goes after its own last key; the comment
    # after the anchored block stays there.
    text = ("mode: both\nalgorithm: {algorithm_type: grpo}\ndefaults: &base\n  save_interval: 10\n"
            f"{COMMENT}model:\n  model_path: Qwen/Qwen3-4B\n  max_model_len: 16384\ncluster:\n  node_num: 1\n"
            "  gpu_per_node: 8\nexplorer:\n  rollout_model:\n    engine_num: 4\ntrainer:\n  <<: *base\n"
            "  trainer_type: verl\n")
    written = _written(cli, tmp_path, text)
    assert f"defaults: &base\n  save_interval: 10\n{COMMENT}model:\n" in written
    assert written.endswith("  <<: *base\n  trainer_type: verl\n  ulysses_sequence_parallel_size: 1\n"
                            "  max_token_len_per_gpu: 32768\n")


@pytest.mark.parametrize(("given", "line"), [
    # the legacy type stays beside rope_type, as --write writes it (before, the line dropped it)
    ("{type: yarn, factor: 4.0}",
     "model.rope_scaling: {type: yarn, rope_type: yarn, factor: 3.2, original_max_position_embeddings: 40960}"),
    # a key of the config's own stays too
    ("{rope_type: yarn, factor: 2.0, beta_fast: 32}",
     "model.rope_scaling: {rope_type: yarn, factor: 3.2, beta_fast: 32, original_max_position_embeddings: 40960}"),
])
def test_the_apply_line_of_a_configs_rope_scaling_is_what_write_writes(cli, tmp_path: Path, given: str, line: str):
    text = ("mode: both\nalgorithm: {algorithm_type: grpo}\nmodel:\n  model_path: Qwen/Qwen3-4B\n"
            f"  max_model_len: 131072\n  rope_scaling: {given}\ncluster:\n  node_num: 1\n  gpu_per_node: 8\n"
            "explorer:\n  rollout_model:\n    engine_num: 4\n")
    config = tmp_path / "trinity.yaml"
    config.write_text(text, encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h200")
    assert status == 0, err
    assert f"\n{line}\n" in out
    assert f"  rope_scaling: {line.removeprefix('model.rope_scaling: ')}\n" in _written(cli, tmp_path, text)


def test_without_a_config_mapping_the_apply_line_is_the_plans_own(cli, tmp_path: Path):
    text = ("mode: both\nalgorithm: {algorithm_type: grpo}\nmodel:\n  model_path: Qwen/Qwen3-4B\n"
            "  max_model_len: 131072\ncluster:\n  node_num: 1\n  gpu_per_node: 8\n"
            "explorer:\n  rollout_model:\n    engine_num: 4\n")
    config = tmp_path / "trinity.yaml"
    config.write_text(text, encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h200")
    assert status == 0, err
    line = "model.rope_scaling: {rope_type: yarn, factor: 3.2, original_max_position_embeddings: 40960}"
    assert f"\n{line}\n" in out and "  rope_scaling:\n    rope_type: yarn\n    factor: 3.2\n" in _written(
        cli, tmp_path, text)
