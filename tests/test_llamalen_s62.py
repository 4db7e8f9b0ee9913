"""Llama 3.1 past its native context on its own llama3 RoPE scaling, where the config's vLLM rollout refuses the
length (review s62, helper llamalen): ``--check`` exits 1 with ``past-native-on-own-scaling-refused``; not where no
vLLM rollout takes the length, or with ``VLLM_ALLOW_LONG_MAX_MODEL_LEN`` set; ``--write``'s check command sets it."""
from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from solver.tables import load_model_config
from solver.trinity import trinity_config_problems

CONFIG = """\
project: grpo-llama
name: run-160k
mode: both
algorithm: {algorithm_type: grpo, repeat_times: 8}
model:
  model_path: /mnt/models/Llama-3.1-8B-Instruct
  max_model_len: 163840
  max_prompt_tokens: 4096
  max_response_tokens: 159744
cluster: {node_num: 4, gpu_per_node: 8}
buffer: {total_epochs: 1, batch_size: 32, train_batch_size: 256}
explorer:
  rollout_model: {engine_type: vllm, engine_num: 2, tensor_parallel_size: 8}
trainer:
  trainer_type: verl
  trainer_strategy: fsdp2
  ulysses_sequence_parallel_size: 8
"""
CHECK = ("--gpu", "h800", "--trinity-version", "0.6", "--check")
REFUSED = ("refused: model.max_model_len 163840 is beyond Llama-3.1-8B's native context of 131072, which its own "
           "llama3 RoPE scaling provides and the rollout's vLLM takes as its longest length: vLLM refuses it unless "
           "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set before Ray starts; set it (and check that the model handles this "
           "length), or lower max_model_len to 131072")
CODE = "past-native-on-own-scaling-refused"


@pytest.fixture(autouse=True)
def _no_long_length_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VLLM_ALLOW_LONG_MAX_MODEL_LEN", raising=False)


def _config(tmp_path: Path, text: str = CONFIG) -> Path:
    path = tmp_path / "grpo-llama.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_length_past_llama_3_1s_native_context_is_refused_and_check_exits_1(cli, tmp_path: Path):
    status, out, err = cli("--from-config", str(_config(tmp_path)), *CHECK)
    text = " ".join(out.split())
    assert (status, err) == (1, "")
    assert REFUSED in text and "but the config as written is refused (the problem that refuses it says why)" in text


def test_the_refusal_in_json_has_its_code(cli, tmp_path: Path):
    status, out, _ = cli("--from-config", str(_config(tmp_path)), *CHECK, "--json")
    current = json.loads(out)[0]["current"]
    assert status == 1
    assert (current["refused"], current["config_problem_codes"]) == (True, [CODE])
    assert " ".join(current["config_problems"][0].split()) == REFUSED.removeprefix("refused: ")
    assert current["plan"]["caution_codes"] == ["past-native-on-own-scaling"]  # the plan's caution stays


@pytest.mark.parametrize(("text", "codes"), [
    (CONFIG.replace("163840", "131072").replace("159744", "126976"), []),  # within the native context
    (CONFIG.replace("mode: both", "mode: train"), []),  # no explorer: no rollout starts
    # the rollout's own length: no refusal, but the rollout stops its sequences there (s66)
    (CONFIG.replace("tensor_parallel_size: 8}", "tensor_parallel_size: 8, max_model_len: 131072}"),
     ["rollout-length-short"]),
], ids=["native", "mode-train", "rollout-own-length"])  # sglang refuses it itself (s75): test_ropeeight_s75
def test_no_vllm_rollout_that_takes_the_length_is_no_line(cli, tmp_path: Path, text: str, codes: list[str]):
    status, out, _ = cli("--from-config", str(_config(tmp_path, text)), *CHECK, "--json")
    current = json.loads(out)[0]["current"]
    assert (status, current["refused"], current["config_problem_codes"]) == (0, False, codes)


@pytest.mark.parametrize("value", ["1", "true", " TRUE "])
def test_the_variable_in_this_shell_lets_vllm_take_the_length(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              value: str):
    monkeypatch.setenv("VLLM_ALLOW_LONG_MAX_MODEL_LEN", value)
    status, out, _ = cli("--from-config", str(_config(tmp_path)), *CHECK, "--json")
    current = json.loads(out)[0]["current"]
    assert (status, current["refused"], current["config_problem_codes"]) == (0, False, [])


def test_the_variable_set_to_0_is_no_leave(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "0")  # vLLM reads "1" or "true" alone
    status, _, _ = cli("--from-config", str(_config(tmp_path)), *CHECK)
    assert status == 1


def test_a_yarn_given_is_said_to_replace_the_own_scaling_not_refused_for_the_length(cli, tmp_path: Path):
    text = CONFIG.replace("  max_model_len: 163840\n", "  max_model_len: 163840\n  rope_scaling: {rope_type: yarn, "
                          "factor: 1.25, original_max_position_embeddings: 131072}\n")
    _, out, _ = cli("--from-config", str(_config(tmp_path, text)), *CHECK, "--json")
    # and, without model.rope_theta, vLLM would rotate Llama at base 10000 (s73)
    assert json.loads(out)[0]["current"]["config_problem_codes"] == ["rope-scaling-replaces-own", "rope-theta-dropped"]


def test_write_warns_and_its_check_command_sets_the_variable_so_the_written_config_passes(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    written = tmp_path / "written.yaml"
    status, _, err = cli("--from-config", str(_config(tmp_path)), "--gpu", "h800", "--trinity-version", "0.6",
                         "--write", str(written))
    assert status == 0
    assert f"solve: warning: {written}: {REFUSED.removeprefix('refused: ')}" in " ".join(err.split())
    [command] = [line.split("#", 1)[1].strip() for line in written.read_text(encoding="utf-8").splitlines()
                 if "solve --from-config" in line]
    words = shlex.split(command)
    assert words[:2] == ["VLLM_ALLOW_LONG_MAX_MODEL_LEN=1", "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"]
    for variable in words[:2]:
        monkeypatch.setenv(*variable.split("=", 1))
    status, out, _ = cli(*words[3:])
    assert status == 0 and "refused:" not in out
    monkeypatch.delenv("VLLM_ALLOW_LONG_MAX_MODEL_LEN")
    assert cli(*words[3:])[0] == 1


def test_the_fragment_check_command_sets_the_variable(cli):
    status, out, _ = cli("--model", "llama-3.1-8b", "--gpu", "h800", "--len", "160k", "--emit", "trinity")
    assert status == 0
    assert "#   VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 " in out and "solve --from-config CONFIG --check" in out


def _config_json(tmp_path: Path, rope_scaling: dict[str, object]) -> Path:
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
              "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
              "intermediate_size": 14336, "vocab_size": 128256, "tie_word_embeddings": False,
              "max_position_embeddings": 131072, "rope_scaling": rope_scaling, "_name_or_path": "my-llama"}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


@pytest.mark.parametrize(("rope_scaling", "codes"), [
    ({"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192, "low_freq_factor": 1.0,
      "high_freq_factor": 4.0}, [CODE]),
    ({"rope_type": "longrope", "short_factor": [1.0], "long_factor": [1.0]}, [CODE]),
    ({"rope_type": "linear", "factor": 2.0}, []),  # vLLM derives 131072 x 2: it takes the length
], ids=["llama3", "longrope", "linear"])
def test_only_the_scalings_vllm_stretches_by_no_factor_are_refused(tmp_path: Path, rope_scaling, codes):
    model = load_model_config(_config_json(tmp_path, rope_scaling))
    mapping = {"mode": "both", "model": {"max_model_len": 163840}}
    assert [problem.code for problem in trinity_config_problems(mapping, model, 16)] == codes
