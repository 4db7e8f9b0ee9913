"""A length past the native context with no YaRN, where the config's vLLM rollout refuses it (review s62, persona8,
item 1): ``--check`` exits 1 and JSON ``current.refused`` is true; not where no vLLM rollout takes the length."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from solver.trinity import read_trinity_config

CONFIG = """\
project: grpo-qwen3-32b
name: run-64k
mode: both
algorithm: {algorithm_type: grpo, repeat_times: 8}
model:
  model_path: /mnt/models/Qwen3-32B
  max_model_len: 65536
  max_prompt_tokens: 4096
  max_response_tokens: 61440
cluster: {node_num: 4, gpu_per_node: 8}
buffer: {total_epochs: 1, batch_size: 32, train_batch_size: 256}
explorer:
  rollout_model: {engine_type: vllm, engine_num: 2, tensor_parallel_size: 8, enable_prefix_caching: false}
trainer:
  trainer_type: verl
  trainer_strategy: fsdp2
  ulysses_sequence_parallel_size: 8
"""
YARN = "  rope_scaling: {rope_type: yarn, factor: 1.6, original_max_position_embeddings: 40960, rope_theta: 1000000}\n"
CHECK = ("--gpu", "h800", "--trinity-version", "0.6", "--check")
REFUSED = ("refused: model.rope_scaling: max_model_len 65536 is beyond Qwen3-32B's native context of 40960, which the "
           "rollout's vLLM refuses unless a rope_scaling covers it or VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set before "
           "Ray starts: set {rope_type: yarn, factor: 1.6, original_max_position_embeddings: 40960, rope_theta: "
           "1000000} (as --write does)")


@pytest.fixture(autouse=True)
def _no_long_length_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    # The refusals read the variable from this shell, as vLLM does: a developer's own setting must not pass them.
    monkeypatch.delenv("VLLM_ALLOW_LONG_MAX_MODEL_LEN", raising=False)


def _config(tmp_path: Path, text: str = CONFIG) -> Path:
    path = tmp_path / "grpo32b.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_users_config_is_refused_by_its_vllm_rollout_and_check_exits_1(cli, tmp_path: Path):
    status, out, err = cli("--from-config", str(_config(tmp_path)), *CHECK)
    text = " ".join(out.split())
    assert (status, err) == (1, "")
    assert REFUSED in text and "but the config as written is refused (the problem that refuses it says why)" in text


def test_the_users_config_in_json_is_refused_with_its_code(cli, tmp_path: Path):
    status, out, _ = cli("--from-config", str(_config(tmp_path)), *CHECK, "--json")
    [answer] = json.loads(out)
    current = answer["current"]
    assert status == 1
    assert (current["refused"], current["config_problem_codes"]) == (True, ["rope-scaling-missing-refused"])
    assert " ".join(current["config_problems"][0].split()) == REFUSED.removeprefix("refused: ")


@pytest.mark.parametrize("text", [
    CONFIG.replace("  max_model_len: 65536\n", "  max_model_len: 65536\n" + YARN),  # a YaRN that covers it
    CONFIG.replace("mode: both", "mode: train"),  # no explorer: no rollout starts
    CONFIG.replace("enable_prefix_caching: false", "enable_prefix_caching: false, max_model_len: 32768"),
], ids=["yarn", "mode-train", "rollout-own-length"])  # sglang refuses it itself (s75): test_ropeeight_s75
def test_no_vllm_rollout_that_takes_the_length_without_yarn_is_no_refusal(cli, tmp_path: Path, text: str):
    status, out, _ = cli("--from-config", str(_config(tmp_path, text)), *CHECK, "--json")
    [answer] = json.loads(out)
    assert (status, answer["current"]["refused"]) == (0, False)
    assert "rope-scaling-missing-refused" not in answer["current"]["config_problem_codes"]


@pytest.mark.parametrize("value", ["1", "true", " TRUE "])
def test_the_variable_in_this_shell_lets_vllm_take_the_length(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              value: str):
    monkeypatch.setenv("VLLM_ALLOW_LONG_MAX_MODEL_LEN", value)
    status, out, _ = cli("--from-config", str(_config(tmp_path)), *CHECK, "--json")
    [answer] = json.loads(out)
    assert (status, answer["current"]["refused"], answer["current"]["config_problem_codes"]) == (
        0, False, ["rope-scaling-missing"])


def test_the_variable_set_to_0_is_no_leave(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "0")  # vLLM reads "1" or "true" alone
    status, _, _ = cli("--from-config", str(_config(tmp_path)), *CHECK)
    assert status == 1


def test_write_fixes_it_and_the_written_config_passes_check(cli, tmp_path: Path):
    written = tmp_path / "fixed.yaml"
    status, _, _ = cli("--from-config", str(_config(tmp_path)), "--gpu", "h800", "--trinity-version", "0.6",
                       "--write", str(written))
    assert status == 0
    config = read_trinity_config(written.read_text(encoding="utf-8"), str(written), {}, "0.6")
    assert config.max_model_len == 65536
    status, out, _ = cli("--from-config", str(written), *CHECK)
    assert status == 0 and "refused:" not in out and "rope_scaling" not in out.split("plan ")[0]


SHORT_YARN = ("  rope_scaling: {rope_type: yarn, factor: 1.2, original_max_position_embeddings: 40960, "
              "rope_theta: 1000000}\n")  # with its base, which 0.6's trainer needs (ropetheta, s78)
SHORT = ("model.rope_scaling (factor 1.2 over 40960) covers 49152 tokens, fewer than max_model_len 65536, which the "
         "rollout's vLLM refuses unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set before Ray starts: set it as "
         "Trinity-RFT's guide does, factor max_model_len / 40960 = 1.6 over 40960")


def _with_short_yarn(text: str = CONFIG) -> str:
    return text.replace("  max_model_len: 65536\n", "  max_model_len: 65536\n" + SHORT_YARN)


def test_a_yarn_that_falls_short_is_refused_by_the_vllm_rollout_too(cli, tmp_path: Path):
    status, out, _ = cli("--from-config", str(_config(tmp_path, _with_short_yarn())), *CHECK, "--json")
    current = json.loads(out)[0]["current"]
    assert status == 1
    assert (current["refused"], current["config_problem_codes"]) == (True, ["rope-scaling-short-refused"])
    assert " ".join(current["config_problems"][0].split()) == SHORT


@pytest.mark.parametrize("change", [  # sglang refuses the length itself (s75): test_ropeeight_s75
    lambda text: text.replace("mode: both", "mode: train"),
])
def test_a_yarn_that_falls_short_stays_a_but_line_where_no_vllm_rollout_takes_it(cli, tmp_path: Path, change):
    _, out, _ = cli("--from-config", str(_config(tmp_path, change(_with_short_yarn()))), *CHECK, "--json")
    current = json.loads(out)[0]["current"]
    assert current["config_problem_codes"] == ["rope-scaling-wrong"] and current["refused"] is False
    assert "which the rollout's vLLM refuses" not in current["config_problems"][0]


def test_a_yarn_that_falls_short_with_the_variable_set_stays_a_but_line(cli, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "1")
    _, out, _ = cli("--from-config", str(_config(tmp_path, _with_short_yarn())), *CHECK, "--json")
    assert json.loads(out)[0]["current"]["config_problem_codes"] == ["rope-scaling-wrong"]
