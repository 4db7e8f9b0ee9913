"""What a mixture of experts' routing holds per token (s61): the routed copies of the hidden state in one expert
layer's peak, counted from the shape; and a config's ``output_router_logits``, read and noted, not counted."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from solver.memory import (
    GIB,
    PER_TOKEN_TERMS,
    PRIOR,
    Setting,
    breakdown,
    feed_forward_peak_bytes,
    layer_peak_bytes,
    router_logits_bytes,
    token_floor_gib,
)
from solver.tables import load_catalog, load_memory_model, load_model_config

CATALOG = load_catalog()
CONFIGS = Path(__file__).parent / "data" / "hf-configs"
NOTE_30B_A3B = (
    "sets output_router_logits, not counted: transformers then keeps every expert layer's router logits, and a "
    "load-balancing loss's softmax, until the model's forward returns (up to 48.0 KiB a token; transformers 5.12's "
    "loss also one-hots all layers' choices at once, 576.0 KiB a token more for a moment), and verl's loss does not "
    "use that loss and frees them before the backward, whose peak the estimate is; set it false, as Qwen's configs "
    "do, to spare the forward that memory")


def _config(folder: Path, source: str, **changes: object) -> Path:
    """A copy of tests/data/hf-configs/`source` in `folder`/config.json, with `changes`."""
    folder.mkdir(parents=True, exist_ok=True)
    config = {**json.loads((CONFIGS / source).read_text(encoding="utf-8")), **changes}
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


def test_qwen3_30b_a3b_layer_peak_counts_its_routed_copies_by_hand():
    # 20 h + 14 (queries 32 x 128) + 14 (keys 4 x 128) + 12 x the 8 active experts' 768, and each token's hidden state
    # copied into the 8 experts it is routed to and out of them, bf16: 4 x 8 x 2048 bytes.
    model = CATALOG.model("30B-A3B")
    assert feed_forward_peak_bytes(model) == 12 * 8 * 768 + 4 * 8 * 2048 == 139264
    assert layer_peak_bytes(model) == 20 * 2048 + 14 * 4096 + 14 * 512 + 139264 == 244736
    # At 52736 tokens per GPU the routed copies take 3.21875 GiB in that layer's peak; the logits' peak (7 bytes per
    # logit) still comes first, so the floor, and so the estimate, stay as they were.
    tokens = 52736
    assert tokens * 4 * 8 * 2048 / GIB == 3.21875
    assert token_floor_gib(model, tokens) == tokens * (2 * 2048 * 49 + 7 * 151936) / GIB
    coefficients = load_memory_model().coefficients
    terms = breakdown(model, 140.4, 8, Setting(env=True, sp=4), 105472, coefficients).terms
    assert sum(terms[term] for term in PER_TOKEN_TERMS) > token_floor_gib(model, tokens)
    assert terms["checkpoints"] == 2 * tokens * 2048 * 48 * coefficients.checkpoints / GIB


def test_a_dense_models_layer_peak_is_unchanged():
    model = CATALOG.model("8B")
    assert feed_forward_peak_bytes(model) == 12 * 12288
    assert layer_peak_bytes(model) == 20 * 4096 + 14 * 4096 + 14 * 1024 + 12 * 12288 == 301056


def test_a_small_vocabularys_mixture_of_experts_is_held_to_its_routed_copies():
    # Mixtral-8x7B's 32000 logits weigh less than one expert layer (2 experts of 14336 a token, 4096 wide): the layer
    # peak is the floor's, 20 x 4096 + 14 x 4096 + 14 x 1024 + 12 x 28672 + 4 x 2 x 4096 bytes a token.
    model = load_model_config(CONFIGS / "Mixtral-8x7B-v0.1.json")
    peak = 20 * 4096 + 14 * 4096 + 14 * 1024 + 12 * 28672 + 4 * 2 * 4096
    assert layer_peak_bytes(model) == peak == 530432
    result = breakdown(model, 79.6, 8, Setting(env=True, sp=8), 65536, PRIOR)
    assert result.tokens_per_gpu == 16384
    floor = 16384 * (2 * 4096 * 33 + peak) / GIB
    assert sum(result.terms[term] for term in PER_TOKEN_TERMS) == pytest.approx(floor, rel=1e-12)
    assert result.total_gib == pytest.approx(sum(gib for _, gib in result.terms.items()), rel=1e-12)


def test_a_dense_layer_wider_than_the_routed_ones_takes_the_peak(tmp_path: Path):
    # DeepSeek's layout: a dense first layer 200 wide against 2 experts of 16 and a shared one of 16 (48, and the
    # routed copies 4 x 2 x 64 = 512 bytes: 12 x 48 + 512 = 1088 < 12 x 200 = 2400).
    config = {"model_type": "glm4_moe", "vocab_size": 1000, "hidden_size": 64, "intermediate_size": 200,
              "moe_intermediate_size": 16, "num_hidden_layers": 3, "num_attention_heads": 2, "num_key_value_heads": 2,
              "n_routed_experts": 8, "num_experts_per_tok": 2, "n_shared_experts": 1, "first_k_dense_replace": 1,
              "max_position_embeddings": 4096, "head_dim": 32}
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    model = load_model_config(tmp_path)
    assert feed_forward_peak_bytes(model) == 12 * 200
    narrow = load_model_config(_config(tmp_path / "narrow", "Qwen3-30B-A3B.json"))
    assert feed_forward_peak_bytes(narrow) == 12 * 6144 + 4 * 8 * 2048


def test_output_router_logits_is_read_and_not_counted(tmp_path: Path):
    kept = load_model_config(_config(tmp_path / "kept", "Qwen3-30B-A3B.json", output_router_logits=True))
    dropped = load_model_config(_config(tmp_path / "dropped", "Qwen3-30B-A3B.json"))
    assert (kept.router_logits_output, dropped.router_logits_output) == (True, False)
    # 8 bytes per token, expert and expert layer at most (48 x 128), and transformers 5.12's one-hot of every layer's
    # 8 choices at once, int64 and its fp32 copy (12 x 8 x 128 x 48).
    assert router_logits_bytes(kept) == (8 * 128 * 48, 12 * 8 * 128 * 48) == (49152, 589824)
    assert router_logits_bytes(CATALOG.model("8B")) == (0, 0)
    setting = Setting(env=True, sp=4)
    assert (breakdown(kept, 140.4, 8, setting, 105472, PRIOR)
            == breakdown(dropped, 140.4, 8, setting, 105472, PRIOR))
    # A dense model has no router: the key says nothing of it.
    dense = load_model_config(_config(tmp_path / "dense", "Qwen3-8B.json", output_router_logits=True))
    assert dense.router_logits_output is False


def test_output_router_logits_of_a_catalogue_models_config_is_kept(tmp_path: Path):
    model = load_model_config(_config(tmp_path / "Qwen3-30B-A3B", "Qwen3-30B-A3B.json", output_router_logits=True,
                                      _name_or_path="Qwen/Qwen3-30B-A3B"))
    added = CATALOG.with_model(model).model("Qwen3-30B-A3B")
    assert (added.name, added.router_logits_output, added.parameters_b) == ("Qwen3-30B-A3B", True, 30.5)


def test_solve_memory_notes_output_router_logits(tmp_path: Path, cli: Callable[..., tuple[int, str, str]]):
    args = ("--gpu", "h200", "--gpus", "8", "--len", "105472", "--sp", "4", "--env")
    folder = _config(tmp_path / "a3b", "Qwen3-30B-A3B.json")
    status, without, err = cli("memory", "--model-config", str(folder), *args)
    assert (status, err) == (1, "")
    _config(folder, "Qwen3-30B-A3B.json", output_router_logits=True)
    status, out, err = cli("memory", "--model-config", str(folder), *args)
    assert (status, out) == (1, without)
    assert err == f"solve memory: note: a3b {NOTE_30B_A3B}\n"


@pytest.mark.parametrize("value", ["true", 1, [True]])
def test_output_router_logits_must_be_true_false_or_null(tmp_path: Path, value: object,
                                                         cli: Callable[..., tuple[int, str, str]]):
    folder = _config(tmp_path, "Qwen3-30B-A3B.json", output_router_logits=value)
    status, out, err = cli("memory", "--model-config", str(folder), "--gpu", "h200", "--gpus", "8", "--len", "8192")
    assert (status, out) == (2, "")
    assert err.startswith(f"solve memory: error: --model-config {folder / 'config.json'}: output_router_logits: "
                          "expected true, false or null, "
                          "got ")
    assert len(err.splitlines()) == 1
    assert load_model_config(_config(tmp_path / "null", "Qwen3-30B-A3B.json",
                                     output_router_logits=None)).router_logits_output is False
