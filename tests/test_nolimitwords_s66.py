"""transformers' "no limit" ``model_max_length`` (``int(1e30)``) in words (review s66, helper smallfix): every view
that gives the length vLLM derives says "no limit" for it (`solver.results.vllm_length_words`), never its 31 digits;
a ``model_max_length`` that is a length still shows as a number."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from solver.results import NO_LIMIT_WORDS, length_key_words
from solver.tables import load_model_config

LLAMA_3_1 = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
             "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
             "intermediate_size": 14336, "vocab_size": 128256, "tie_word_embeddings": False,
             "max_position_embeddings": 131072, "_name_or_path": "nolimit",
             "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                              "original_max_position_embeddings": 8192, "rope_type": "llama3"}}
DIGITS = "1000000000000000019884624838656"
PLAN = ("--gpu", "h800", "--len", "160k", "--gpus", "8")
CHECK_CONFIG = """\
project: p
name: n
mode: both
algorithm: {algorithm_type: grpo, repeat_times: 8}
model:
  model_path: MODEL
  max_model_len: 163840
  rope_scaling: {rope_type: linear, factor: 2.0}
cluster: {node_num: 4, gpu_per_node: 8}
buffer: {total_epochs: 1, batch_size: 32, train_batch_size: 256}
explorer:
  rollout_model: {engine_type: vllm, engine_num: 2, tensor_parallel_size: 8}
trainer: {trainer_type: verl, trainer_strategy: fsdp2, ulysses_sequence_parallel_size: 8}
"""


def _model_folder(tmp_path: Path, model_max_length: str = "1e30") -> Path:
    """Llama 3.1's shape and llama3 RoPE scaling, with a model_max_length written as JSON's text (1e30: a float)."""
    folder = tmp_path / "nolimit"
    folder.mkdir()
    text = json.dumps(LLAMA_3_1).removesuffix("}") + f', "model_max_length": {model_max_length}}}'
    (folder / "config.json").write_text(text, encoding="utf-8")
    return folder


def _shown(text: str) -> str:
    """`text` with its wrapping undone (table cells and comment lines joined)."""
    return " ".join(word for word in text.split() if word != "#")


def test_the_plans_caution_says_no_limit_in_text_and_json(cli, tmp_path: Path):
    folder = str(_model_folder(tmp_path))
    follows = (f"no YaRN written; vLLM's rollout takes it: the longest length it derives from the model's config is "
               f"{NO_LIMIT_WORDS}; check the model handles it")
    caution = f"beyond the native 131072, which nolimit's own llama3 RoPE scaling provides: {follows}"
    status, out, err = cli("--model-config", folder, *PLAN)
    assert (status, err) == (0, "") and DIGITS not in out and "1e30" not in out
    # the max_model_len row, which names the native context first (s67)
    assert f"past the native 131072, which nolimit's own llama3 RoPE scaling provides ({follows})" in _shown(out)
    status, out, err = cli("--model-config", folder, *PLAN, "--json")
    assert (status, err) == (0, "") and DIGITS not in out
    assert caution in json.loads(out)[0]["plans"][0]["cautions"]


def test_the_fragments_note_says_no_limit_without_a_factor_applied(cli, tmp_path: Path):
    status, out, err = cli("--model-config", str(_model_folder(tmp_path)), *PLAN, "--emit", "trinity")
    assert (status, err) == (0, "") and DIGITS not in out and "1e30" not in out
    assert (f"vLLM (the explorer's rollout) derives a longest max_model_len of {NO_LIMIT_WORDS} from the model's "
            "config.json: it takes this one. Check that the model handles this length") in _shown(out)


def test_the_check_of_a_rope_scaling_replacing_the_own_one_says_no_limit(cli, tmp_path: Path):
    config = tmp_path / "run.yaml"
    config.write_text(CHECK_CONFIG.replace("MODEL", str(_model_folder(tmp_path))), encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h800", "--trinity-version", "0.6", "--check",
                           "--json")
    assert (status, err) == (0, "") and DIGITS not in out and "e30" not in out
    (problem,) = json.loads(out)[0]["current"]["config_problems"]
    assert problem == ("model.rope_scaling ('linear') would replace nolimit's own llama3 RoPE scaling: the rollout's "
                       f"vLLM takes the given one, not the config.json's, and derives {NO_LIMIT_WORDS} from it as its "
                       f"longest length (from the config.json's: {NO_LIMIT_WORDS}); remove it")


@pytest.mark.parametrize(("written", "length"), [("1e30", NO_LIMIT_WORDS), ("200000", "200000")])
def test_the_length_key_in_words_says_no_limit_only_for_no_limit(tmp_path: Path, written: str, length: str):
    assert (length_key_words(load_model_config(_model_folder(tmp_path, written)))
            == f"its model_max_length of {length}, which vLLM takes in place of the others")
