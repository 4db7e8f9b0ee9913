"""--write keeps the rollout model's length and YaRN consistent with the model's (session 71, helper writeyarn): a
rollout ``max_model_len`` that was the model's is set with it (one of its own is left, and still warned of); a rollout
``rope_scaling: ${model.rope_scaling}`` goes with a stale model one (it would resolve to nothing); and a YaRN of the
config's own that reaches the plan's length (Qwen's model cards' factor 4 over 32768 at 131072) is kept, saying so;
the guide's own form, its factor stale from a longer length, is set anew."""

from pathlib import Path

import pytest

YARN = "  rope_scaling:\n    rope_type: yarn\n    factor: 1.6\n    original_max_position_embeddings: 40960\n"
"""The model section's YaRN for 65536 tokens over Qwen3's 40960."""


def _config(length: int, rollout: str, rope: str = "") -> str:
    """Qwen3-8B at `length` tokens (with `rope`, the model's RoPE scaling lines) on 6 trainer GPUs and 2 rollout
    GPUs, its rollout model given the lines `rollout` after its engines; GRPO (no critic)."""
    return ("algorithm: {algorithm_type: grpo}\n"
            f"model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: {length}\n{rope}cluster:\n  node_num: 1\n"
            f"  gpu_per_node: 8\nexplorer:\n  rollout_model:\n    engine_num: 2\n{rollout}")


@pytest.fixture(autouse=True)
def _env_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """No allocator setting in this shell: the verdict, and the command the written file's note gives, read none."""
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)


def _write(cli, tmp_path: Path, text: str, *options: str) -> tuple[str, str]:
    """The config `text` written (--write) with the best plan for the `options` (--gpu, --len): the file and stderr."""
    config, patched = tmp_path / "trinity.yaml", tmp_path / "patched.yaml"
    config.write_text(text, encoding="utf-8")
    status, _, err = cli("--from-config", str(config), *options, "--write", str(patched))
    assert status == 0, err
    return patched.read_text(encoding="utf-8"), err


def test_a_rollout_length_that_was_the_models_is_written_with_it_shorter_and_longer(cli, tmp_path: Path):
    # 65536 left past the native 40960 was refused by vLLM; a longer plan's length left at 32768 stopped each sequence.
    written, err = _write(cli, tmp_path, _config(65536, "    max_model_len: 65536\n", YARN), "--gpu", "h20", "--len",
                          "32k")
    assert written == _config(32768, "    max_model_len: 32768\n").replace(
        "  max_model_len: 32768\n", "  # To check this file as its plan was made:\n"
        f"  #   solve --from-config {tmp_path / 'patched.yaml'} --check --gpu H20-96GB\n  max_model_len: 32768\n", 1
    ) + "trainer:\n  ulysses_sequence_parallel_size: 2\n  max_token_len_per_gpu: 32768\n"
    assert "warning" not in err
    written, err = _write(cli, tmp_path, _config(32768, "    max_model_len: 32768\n"), "--gpu", "h20", "--len", "60k")
    assert "\n    engine_num: 2\n    max_model_len: 61440\ntrainer:\n" in written and "rollout_model" not in err


def test_a_rollout_length_of_its_own_is_left_and_still_warned_of(cli, tmp_path: Path):
    written, err = _write(cli, tmp_path, _config(32768, "    max_model_len: 65536\n"), "--gpu", "h20", "--len", "16k")
    assert "\n    engine_num: 2\n    max_model_len: 65536\ntrainer:\n" in written
    assert err.startswith(
        f"solve: warning: {tmp_path / 'patched.yaml'}: explorer.rollout_model.max_model_len 65536 is beyond Qwen3-8B's "
        "native context of 40960, which the rollout's vLLM takes as its longest length: the rollout's vLLM refuses it "
        "unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set before Ray starts; set it (and check that the model handles "
        "this length), or lower explorer.rollout_model.max_model_len to 40960\n")


def test_an_interpolated_rollout_yarn_goes_with_a_stale_models_and_follows_a_new_one(cli, tmp_path: Path):
    text = _config(65536, "    rope_scaling: ${model.rope_scaling}\n", YARN)
    written, err = _write(cli, tmp_path, text, "--gpu", "h20", "--len", "32k")
    assert "rope_scaling" not in written and written.endswith("    engine_num: 2\ntrainer:\n"
                                                              "  ulysses_sequence_parallel_size: 2\n"
                                                              "  max_token_len_per_gpu: 32768\n")
    assert "cannot resolve" not in err and "warning" not in err
    # Where the plan's length needs YaRN, the model's is set and the interpolation stays: it gives the new one.
    written, err = _write(cli, tmp_path, text.replace("factor: 1.6", "factor: 1.2"), "--gpu", "h20", "--len", "60k")
    assert ("  rope_scaling:\n    rope_type: yarn\n    factor: 1.5\n    original_max_position_embeddings: 40960\n"
            ) in written and "    rope_scaling: ${model.rope_scaling}\n" in written and "warning" not in err


CARDS = "  rope_scaling:\n    rope_type: yarn\n    factor: 4.0\n    original_max_position_embeddings: 32768\n"
"""Qwen's model cards' YaRN: factor 4 over 32768, which reaches 131072."""


def test_a_yarn_that_reaches_the_length_is_kept_with_a_note(cli, tmp_path: Path):
    text = _config(131072, "", CARDS).replace("Qwen3-8B", "Qwen3-4B").replace("engine_num: 2", "engine_num: 4")
    written, err = _write(cli, tmp_path, text, "--gpu", "h200")
    assert CARDS in written
    patched = tmp_path / "patched.yaml"
    assert err.splitlines()[0] == (
        f"solve: note: {patched}: model.rope_scaling (factor 4.0 over 32768) covers the length, but not as "
        "Trinity-RFT's guide sets it, factor max_model_len / 40960 = 3.2 over 40960; --write kept it (one that covers "
        "the length needs no change) and added the base it lacked, Qwen3-4B's own rope_theta 1000000: Trinity 0.6's "
        "trainer on verl before 0.8 fails to build the model on a rope_scaling without it (transformers 5 finds no "
        "base)")
    # The trainer note says to add the same rope_scaling (the written one) to config.json, as the cards add theirs.
    assert err.splitlines()[1] == (
        f"solve: note: {patched}: model.rope_scaling reaches the rollout (vLLM), but on Trinity 0.6 with verl 0.8 or "
        "later not the trainer, whose model reads the checkpoint's config.json alone: to train with YaRN too, add the "
        "same rope_scaling there, the way Qwen's model cards add theirs (memory is the same either way)")


def test_a_yarn_that_falls_short_of_the_length_is_replaced_by_the_guides(cli, tmp_path: Path):
    # factor 2 over 32768 reaches 65536, short of 81920: the guide's 2.0 over 40960 in its place, and no kept note.
    written, err = _write(cli, tmp_path, _config(65536, "", CARDS.replace("4.0", "2.0")), "--gpu", "h200", "--len",
                          "80k")
    assert "  rope_scaling:\n    rope_type: yarn\n    factor: 2.0\n    original_max_position_embeddings: 40960\n" in (
        written) and "kept it" not in err


def test_the_guides_own_yarn_stale_from_a_longer_length_is_set_for_this_one(cli, tmp_path: Path):
    # The guide's form (over 40960) written for 262144 reaches 65536 too, but stretches the positions four times more
    # than 65536 needs: it is the guide's, so --write sets its factor for this length (1.6), with no kept note.
    stale = YARN.replace("factor: 1.6", "factor: 6.4")
    written, err = _write(cli, tmp_path, _config(262144, "", stale), "--gpu", "h200", "--len", "64k")
    assert YARN in written and stale not in written and "kept it" not in err and "stretches" not in err
