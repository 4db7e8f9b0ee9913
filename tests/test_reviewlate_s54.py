"""Exact tests for the session's late changes that mutants of their new lines showed untested: each key of Trinity
0.6's trainer that 0.5 refuses, the --write note's number, the 0.5.0/0.5.1 batch line where SP does not divide the
GPUs, remove padding left unwritten for 0.5, a small card's known errors without codes, and a note's hyphens."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from solver.cli import output
from solver.results import known_errors
from solver.trinity import keys_05_refuses

HEAD = ("mode: both\nalgorithm: {algorithm_type: grpo}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
        "explorer: {rollout_model: {engine_num: 2, tensor_parallel_size: 1}}\n"
        "model: {model_path: Qwen/Qwen3-8B, max_model_len: 16384}\n")
"""6 trainer GPUs of A100 80GB for Qwen3-8B at 16384 tokens; the trainer section follows."""
REFUSED = ("{keys}: {noun} of Trinity 0.6's trainer, which Trinity 0.5 refuses (its TrainerConfig has no such key), "
           "so the config does not load: remove {pronoun} (--write does)")


def _current(cli, config: Path, *args: str) -> tuple[int, dict]:
    """The status of ``--json`` on `config` (A100 80GB) with `args`, and its current settings."""
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100-80g", "--json", *args)
    return status, json.loads(out)[0]["current"]


@pytest.mark.parametrize("key", ["balance_batch: true", "critic_warmup: 0", "grad_offload: false", "megatron: {}",
                                 "trust_remote_code: false"])
def test_each_key_of_06s_trainer_is_refused_by_05_and_removed_by_write(cli, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch, key: str):
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    config, patched = tmp_path / "trinity.yaml", tmp_path / "patched.yaml"
    config.write_text(HEAD + f"trainer: {{ulysses_sequence_parallel_size: 2, {key}}}\n", encoding="utf-8")
    name = key.split(":")[0]
    status, current = _current(cli, config, "--trinity-version", "0.5")
    assert (status, current["refused"], current["config_problem_codes"], current["config_problems"]) == (
        0, True, ["trainer-keys-refused"], [REFUSED.format(keys=f"trainer.{name}", noun="a key", pronoun="it")])
    assert _current(cli, config, "--trinity-version", "0.6")[1]["config_problem_codes"] == []
    status, _, err = cli("--from-config", str(config), "--gpu", "a100-80g", "--trinity-version", "0.5",
                         "--write", str(patched))
    assert (status, err.splitlines()[0]) == (0, (
        f"solve: note: {patched}: trainer.{name} removed: a key of Trinity 0.6's trainer, which Trinity 0.5 refuses "
        "(its TrainerConfig has no such key)"))
    assert name not in patched.read_text(encoding="utf-8")


def test_two_keys_removed_are_keys(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    config, patched = tmp_path / "trinity.yaml", tmp_path / "patched.yaml"
    config.write_text(HEAD + "trainer: {ulysses_sequence_parallel_size: 2, balance_batch: true, megatron: {}}\n",
                      encoding="utf-8")
    assert _current(cli, config, "--trinity-version", "0.5")[1]["config_problems"] == [REFUSED.format(
        keys="trainer.balance_batch, trainer.megatron", noun="keys", pronoun="them")]
    status, _, err = cli("--from-config", str(config), "--gpu", "a100-80g", "--trinity-version", "0.5",
                         "--write", str(patched))
    assert (status, err.splitlines()[0]) == (0, (
        f"solve: note: {patched}: trainer.balance_batch, trainer.megatron removed: keys of Trinity 0.6's trainer, "
        "which Trinity 0.5 refuses (its TrainerConfig has no such key)"))


def test_a_batch_line_for_05_waits_for_an_sp_that_divides_the_gpus(cli, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch):
    # SP 4 does not divide the 6 GPUs (the broken rule says so): no line on the GPUs not dividing 75 besides it.
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    config = tmp_path / "trinity.yaml"
    config.write_text(HEAD + "trainer: {ulysses_sequence_parallel_size: 4}\nbuffer: {train_batch_size: 75}\n",
                      encoding="utf-8")
    status, current = _current(cli, config, "--trinity-version", "0.5")
    assert (status, current["broken_rule"], current["config_problem_codes"]) == (0, "SP=4 does not divide 6 GPUs", [])


def test_remove_padding_is_not_written_back_for_05(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # 0.5 refuses trainer.use_remove_padding: neither the fragment nor the apply lines set it (the verdict
    # says to remove it); 0.6's do.
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    config = tmp_path / "trinity.yaml"
    config.write_text(HEAD + "trainer: {ulysses_sequence_parallel_size: 2, use_remove_padding: false}\n",
                      encoding="utf-8")
    flags = ("--from-config", str(config), "--gpu", "a100-80g", "--trinity-version")
    said = {(version, emit): "use_remove_padding" in cli(*flags, version, *emit)[1].split("\napply ")[-1]
            for version in ("0.5", "0.6") for emit in ((), ("--emit", "trinity"))}
    assert said == {("0.5", ()): False, ("0.5", ("--emit", "trinity")): False,
                    ("0.6", ()): True, ("0.6", ("--emit", "trinity")): True}


def test_keys_05_refuses_reads_only_a_mapping():
    assert (keys_05_refuses(["balance_batch"]), keys_05_refuses("megatron"), keys_05_refuses(None)) == ((), (), ())
    assert keys_05_refuses({"megatron": {}, "param_offload": False, "total_epochs": 1}) == ("param_offload", "megatron")


def test_a_small_card_without_codes_names_much_larger_models():
    assert known_errors(True, ()) == ("on cards of at most 48 GiB, as this one, it runs optimistic by about a GiB, "
                                      "which the default margin here keeps, and more for much larger models")


def test_a_wrapped_note_keeps_a_flag_with_hyphens_whole(monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]):
    monkeypatch.setattr(output, "note_width", lambda: 36)
    output.print_note("solve: note: a card reports less, so give nvidia-smi's total --gpu-memory 46068MiB for an L40S")
    assert capsys.readouterr().err == ("solve: note: a card reports less, so\n  give nvidia-smi's total\n"
                                       "  --gpu-memory 46068MiB for an L40S\n")
