"""A user bringing their own Hugging Face config.json files (session 70): published configs the catalogue lacks
read as their model cards size them, SP degrees their attention and KV heads rule out refused as verl refuses them,
a vision model's config refused with its text fields at the top, an empty config.json named as empty, and a logit
cap that is no finite number refused."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from solver.tables.model_config import load_model_config

HF_CONFIGS = Path(__file__).parent / "data" / "hf-configs"
Cli = Callable[..., tuple[int, str, str]]


@pytest.mark.parametrize(
    ("file", "shape", "parameters_b"),
    [  # (layers, hidden, heads, KV heads, head size, vocabulary, tied), and the size each model card gives
        ("Mistral-7B-v0.3", (32, 4096, 32, 8, 128, 32768, False), 7.25),  # sliding_window null
        ("Llama-3.2-3B", (28, 3072, 24, 8, 128, 128256, True), 3.21),  # tied, llama3 RoPE scaling
        ("Phi-3-mini-128k-instruct", (32, 3072, 32, 32, 96, 32064, False), 3.82),  # longrope
        ("Qwen2-57B-A14B", (28, 3584, 28, 4, 128, 151936, False), 57.4),  # 64 experts and a shared expert
        ("DeepSeek-V2-Lite", (27, 2048, 16, 16, 192, 102400, False), 15.7),  # latent attention, dense first layer
        ("internlm2-7b", (32, 4096, 32, 8, 128, 92544, False), 7.74),  # dynamic RoPE scaling
        ("Yi-1.5-9B", (48, 4096, 32, 4, 128, 64000, False), 8.83),
        ("gemma-3-1b-pt", (26, 1152, 4, 1, 256, 262144, True), 1.00),  # head_dim 256, not 1152 / 4; tied
    ],
)
def test_published_configs_the_catalogue_lacks_read_as_their_cards_size_them(
        file: str, shape: tuple, parameters_b: float):
    model = load_model_config(HF_CONFIGS / f"{file}.json")
    assert (model.num_layers, model.hidden_size, model.num_attention_heads, model.num_key_value_heads,
            model.head_size, model.vocab_size, model.tied_embeddings) == shape
    assert model.parameters_b == pytest.approx(parameters_b, rel=0.01)
    assert model.unchecked_layout is None


def test_qwen2_moe_shared_expert_counts_in_the_active_parameters():
    # 8 of 64 routed experts 2560 wide and the shared expert 20480 wide: 14.25B of 57.41B (docs/memory.md).
    model = load_model_config(HF_CONFIGS / "Qwen2-57B-A14B.json")
    assert (round(model.parameters_b, 2), round(model.active_parameters_b, 2)) == (57.41, 14.25)


KV_HEADS_RULE_OUT = ("SP={sp} and its {kv} KV heads do not divide one another (the degrees that divide the {gpus} "
                     "trainer GPUs, that {file}'s heads allow and that keep an SP group in a node of 8 GPUs: {left})")
HEADS_RULE_OUT = ("SP={sp} does not divide its {heads} attention heads (the degrees that divide the {gpus} trainer "
                  "GPUs, that {file}'s heads allow and that keep an SP group in a node of 8 GPUs: {left})")


@pytest.mark.parametrize(
    ("file", "gpus", "sp", "why"),
    [("Qwen2-57B-A14B", 7, 7, KV_HEADS_RULE_OUT.format(sp=7, kv=4, gpus=7, file="Qwen2-57B-A14B", left="1")),
     ("Llama-3.2-3B", 6, 3, KV_HEADS_RULE_OUT.format(sp=3, kv=8, gpus=6, file="Llama-3.2-3B", left="1, 2")),
     ("gemma-3-1b-pt", 8, 8, HEADS_RULE_OUT.format(sp=8, heads=4, gpus=8, file="gemma-3-1b-pt", left="1, 2, 4"))])
def test_an_sp_the_heads_rule_out_is_refused_naming_the_heads(cli: Cli, file: str, gpus: int, sp: int, why: str):
    # SP=7 divides Qwen2-57B-A14B's 28 attention heads, SP=3 Llama-3.2-3B's 24, but not their KV heads (verl's
    # Ulysses check: KV heads and SP divide one another).
    status, out, err = cli("memory", "--model-config", str(HF_CONFIGS / f"{file}.json"), "--gpu", "h100",
                           "--gpus", str(gpus), "--len", "32k", "--sp", str(sp))
    assert (status, out, err) == (2, "", f"solve memory: error: --sp {sp} is not allowed for {file}: {why}\n")


def test_a_vision_model_config_with_its_text_fields_at_the_top_is_refused(cli: Cli):
    # Qwen2-VL-7B's config.json gives its language model's sizes at the top level and its vision tower beside them.
    path = HF_CONFIGS / "Qwen2-VL-7B-Instruct.json"
    refused = (f"solve: error: --model-config {path}: a multimodal config (vision_config); only a text model's "
               "config.json is read (the memory model has no term for a vision or audio tower or its tokens)\n")
    assert cli("--model-config", str(path), "--gpu", "h100", "--gpus", "8", "--len", "32768") == (2, "", refused)


@pytest.mark.parametrize("text", ["", " \n"])
def test_an_empty_config_json_is_named_as_empty(cli: Cli, tmp_path: Path, text: str):
    # A cut-short download: JSON's "Expecting value (line 1)" said nothing of what the file lacks.
    path = tmp_path / "config.json"
    path.write_text(text, encoding="utf-8")
    refused = (f"solve: error: --model-config {path}: an empty file: a config.json is a JSON object, as a model's "
               "Hugging Face checkpoint gives it\n")
    assert cli("--model-config", str(tmp_path), "--gpu", "h100", "--gpus", "8", "--len", "32768") == (2, "", refused)


@pytest.mark.parametrize(("written", "shown"), [("Infinity", "Infinity"), ("1e400", "Infinity"), ("NaN", "NaN")])
def test_a_logit_cap_that_is_no_finite_number_is_refused(cli: Cli, tmp_path: Path, written: str, shown: str):
    # Gemma-2's config with its cap of 30 written as JSON's Infinity (or too large a number, read as one):
    # transformers' tanh(logits / cap) * cap would turn every logit NaN, and it was planned as capped logits.
    text = (HF_CONFIGS / "gemma-2-9b.json").read_text(encoding="utf-8")
    path = tmp_path / "config.json"
    path.write_text(text.replace('"final_logit_softcapping": 30.0', f'"final_logit_softcapping": {written}'),
                    encoding="utf-8")
    refused = (f"solve memory: error: --model-config {path}: final_logit_softcapping: expected a finite number above "
               f"0 or null, got {shown}\n")
    assert cli("memory", "--model-config", str(path), "--gpu", "h100", "--gpus", "8", "--len", "32k") == (
        2, "", refused)
