"""RoPE loose ends of the rollout (session 74, helper ropeseven): --write completes the rollout model's copy of
``model.rope_scaling`` as it does the model's (``rope_type`` beside a ``type`` alone, the original length), so that
the file it writes passes --check; ``rope_type`` goes right after the legacy ``type``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from solver.trinity import load_config_mapping

CARD = "{type: yarn, factor: 4.0, original_max_position_embeddings: 32768}"
"""Qwen's model cards' YaRN, its type in the legacy ``type`` alone: it reaches 131072 tokens over 32768."""
SHORT = "{type: yarn, factor: 2.0}"
"""A YaRN of the legacy form short of 131072 tokens, without its original length: the guide's takes its place."""


def _config(model_rope: str, rollout_rope: str) -> str:
    """Qwen3-4B at 131072 tokens on 4 trainer and 4 rollout GPUs, the model's and the rollout's RoPE scaling given."""
    return (f"model:\n  model_path: Qwen/Qwen3-4B\n  max_model_len: 131072\n  rope_scaling: {model_rope}\n"
            "cluster:\n  node_num: 1\n  gpu_per_node: 8\nexplorer:\n  rollout_model:\n    engine_num: 4\n"
            f"    rope_scaling: {rollout_rope}\n")


@pytest.fixture(autouse=True)
def _env_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)


def _write_then_check(cli, tmp_path: Path, text: str) -> tuple[str, dict[str, object]]:
    """`text` written (--write, H200) and the written file checked (--check --json): its text and the verdict."""
    config, written = tmp_path / "trinity.yaml", tmp_path / "written.yaml"
    config.write_text(text, encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "h200", "--write", str(written))
    assert status == 0, err
    status, out, err = cli("--from-config", str(written), "--gpu", "h200", "--check", "--json")
    assert status == 0, err
    return written.read_text(encoding="utf-8"), json.loads(out)[0]["current"]


@pytest.mark.parametrize(("given", "rope"), [
    # kept (it reaches the length): rope_type joins it, right after type
    (CARD, "{type: yarn, rope_type: yarn, factor: 4.0, original_max_position_embeddings: 32768}"),
    # short of the length: the guide's factor over the native 40960, the original length added to the copy too
    (SHORT, "{type: yarn, rope_type: yarn, factor: 3.2, original_max_position_embeddings: 40960}"),
])
def test_the_rollouts_copy_is_completed_as_the_models_and_the_written_file_passes_check(cli, tmp_path: Path,
                                                                                        given: str, rope: str):
    # Before, the copy got only the keys it had (rope_type and the original length were left out), and the fragment
    # behind --write broke its own check: an internal error, exit status 70, and no file.
    written, current = _write_then_check(cli, tmp_path, _config(given, given))
    assert f"  rope_scaling: {rope}\n" in written and f"    rope_scaling: {rope}\n" in written
    assert current["refused"] is False
    assert not {"rope-type-missing-refused", "rope-scaling-unbuilt-refused", "rollout-rope-scaling-differs"} & {
        *current["config_problem_codes"]}


def test_an_aliased_rollout_rope_scaling_is_written_once_and_passes_check(cli, tmp_path: Path):
    text = _config(SHORT, SHORT).replace(f"  rope_scaling: {SHORT}\n", "  rope_scaling: &rope\n    type: yarn\n"
                                         "    factor: 2.0\n", 1).replace(f"    rope_scaling: {SHORT}\n",
                                                                         "    rope_scaling: *rope\n")
    written, current = _write_then_check(cli, tmp_path, text)
    assert ("  rope_scaling: &rope\n    type: yarn\n    rope_type: yarn\n    factor: 3.2\n"
            "    original_max_position_embeddings: 40960\n") in written and "    rope_scaling: *rope\n" in written
    assert current["refused"] is False


def test_a_rollout_rope_scaling_of_its_own_is_left(cli, tmp_path: Path):
    # not the model's: --write leaves it (and --check still says what vLLM makes of it)
    config, written = tmp_path / "trinity.yaml", tmp_path / "written.yaml"
    config.write_text(_config(CARD, SHORT), encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "h200", "--write", str(written))
    assert status == 0, err
    assert f"    rope_scaling: {SHORT}\n" in written.read_text(encoding="utf-8")


def test_rope_type_goes_right_after_type_in_a_block_mapping_too(cli, tmp_path: Path):
    text = _config(SHORT, SHORT).replace(f"  rope_scaling: {SHORT}\n", "  rope_scaling:\n    type: yarn  # the card's\n"
                                         "    factor: 2.0\n# after the YaRN\n", 1)
    text = text.replace(f"    rope_scaling: {SHORT}\n", "")
    written, _ = _write_then_check(cli, tmp_path, text)
    assert ("  rope_scaling:\n    type: yarn  # the card's\n    rope_type: yarn\n    factor: 3.2\n"
            "    original_max_position_embeddings: 40960\n# after the YaRN\ncluster:\n") in written
    assert load_config_mapping(written, "w")["model"]["rope_scaling"] == {
        "type": "yarn", "rope_type": "yarn", "factor": 3.2, "original_max_position_embeddings": 40960}


def test_rope_type_without_a_type_goes_where_new_keys_go(cli, tmp_path: Path):
    text = _config("{factor: 2.0}", "{factor: 2.0}")
    written, _ = _write_then_check(cli, tmp_path, text)
    assert "  rope_scaling: {factor: 3.2, rope_type: yarn, original_max_position_embeddings: 40960}\n" in written
