"""The memory model's terms, hand-computed for the cases past the tables that an FSDP2/Ulysses audit checked (session
71): Qwen3-8B on 8 H100s at 32768 and 131072 tokens, SP 1/2/4/8, Env and Offload on and off; Qwen3-30B-A3B's layer
peak; Llama-3.1-70B on 16 GPUs over two nodes. Each figure is worked out by hand from the models' config.json counts
(hidden, layers, vocabulary, widths) and the byte counts docs/memory.md gives, not by calling the formulas again."""

from __future__ import annotations

import pytest

from solver.memory import (
    beyond_calibration,
    breakdown,
    calibrated_terms,
    layer_peak_bytes,
    optimizer_step_gib,
    token_features,
    token_floor_gib,
)
from solver.results import BeyondCode
from solver.tables import Setting, load_catalog, load_memory_model

CATALOG = load_catalog()
SHIPPED = load_memory_model()

# Qwen3-8B: hidden 4096, 36 layers, vocabulary 151936, MLP 12288, untied embeddings, 8.191B parameters. Per GPU, the
# per-token terms for T tokens, in GiB (2**30 bytes): checkpoints 2 T 4096 36, logits 4 T 151936, recompute
# 2 T (4096 + 12288), SP buffers 2 T 4096; T = ceil(2 L / SP).
QWEN3_8B_PER_TOKEN = {  # T: (checkpoints, logits, recompute, sp_buffers at SP > 1)
    8192: (2.25, 4.63671875, 0.25, 0.0625),
    16384: (4.5, 9.2734375, 0.5, 0.125),
    32768: (9.0, 18.546875, 1.0, 0.25),
    65536: (18.0, 37.09375, 2.0, 0.5),
    131072: (36.0, 74.1875, 4.0, 1.0),
    262144: (72.0, 148.375, 8.0, 2.0),
}
# 16 bytes per parameter over 8 GPUs: 16 x 8.191e9 / 8 = 16.382e9 bytes.
QWEN3_8B_STATES_ON_8 = 16.382e9 / 2**30
# 4 x 151936 x 4096 = 2489319424 bytes of the output matrix with its gradient, and 10 bytes per parameter of one
# layer: (8.191e9 - 2 x 622329856) / 36 = 192953896.89 parameters, 1929538968.9 bytes.
QWEN3_8B_GATHERED = (2489319424 + 1929538968.9) / 2**30


@pytest.mark.parametrize("length", [32768, 131072])
@pytest.mark.parametrize("sp", [1, 2, 4, 8])
@pytest.mark.parametrize(("env", "offload"), [(False, False), (True, False), (False, True), (True, True)])
def test_qwen3_8b_terms_on_8_gpus_match_the_hand_count(length: int, sp: int, env: bool, offload: bool) -> None:
    tokens = 2 * length // sp
    checkpoints, logits, recompute, sp_buffers = QWEN3_8B_PER_TOKEN[tokens]
    raw = token_features(CATALOG.model("Qwen3-8B"), 8, Setting(env=env, offload=offload, sp=sp), tokens)
    assert raw == pytest.approx({
        "states": 0.0 if offload else QWEN3_8B_STATES_ON_8,
        "gathered": QWEN3_8B_GATHERED,
        "checkpoints": checkpoints,
        "logits": logits,
        "recompute": recompute,
        "sp_buffers": sp_buffers if sp > 1 else 0.0,
        "fragmentation": 0.0 if env else logits,
        "overhead": 1.0,
    }, rel=1e-9)


def test_qwen3_8b_optimizer_step_is_twenty_bytes_a_parameter_and_the_overhead() -> None:
    # 20 x 8.191e9 / 8 = 20.4775e9 bytes (fp32 weights, gradients, Adam's two moments and foreach AdamW's square
    # root), and the 1 GiB overhead; none with Offload, whose step runs on the CPU.
    model = CATALOG.model("Qwen3-8B")
    assert optimizer_step_gib(model, 8, Setting(env=True, sp=8), SHIPPED.coefficients) == pytest.approx(
        20.4775e9 / 2**30 + 1.0, rel=1e-9)
    assert optimizer_step_gib(model, 8, Setting(env=True, offload=True, sp=8), SHIPPED.coefficients) == 0.0


def test_qwen3_30b_a3b_layer_peak_is_below_its_logits_peak() -> None:
    # hidden 2048, 32 heads and 4 KV heads of 128, 8 active experts of 768: 20 x 2048 + 14 x 4096 + 14 x 512 +
    # 12 x 6144 + 4 x 8 x 2048 = 244736 bytes a token, against 7 x 151936 = 1063552 at the logits: the floor takes
    # the logits' peak, and one layer recomputed at 16384 tokens is 2 x 16384 x (2048 + 6144) bytes, a quarter GiB.
    model = CATALOG.model("Qwen3-30B-A3B")
    assert layer_peak_bytes(model) == 244736
    assert token_floor_gib(model, 16384) == pytest.approx(16384 * (2 * 2048 * 49 + 1063552) / 2**30, rel=1e-12)
    assert token_features(model, 8, Setting(env=True, sp=4), 16384)["recompute"] == 0.25


def test_llama_70b_on_two_nodes_is_held_to_the_physical_floor_and_says_so() -> None:
    # Llama-3.1-70B: hidden 8192, 80 layers, vocabulary 128256, 70.55B parameters. Env + Offload + SP=4 on 16 GPUs
    # at 32768 tokens holds 16384 a GPU. The floor: 81 bf16 hidden states (2 x 8192 x 81 = 1327104 bytes a token)
    # and 7 bytes a logit (897792): 2224896 x 16384 bytes, 33.94921875 GiB, which the fitted per-token terms fall
    # short of, so they are raised to it. The gathered layers before calibration: 4 x 128256 x 8192 = 4202692608
    # bytes, and 10 bytes per parameter of a layer, (70.55e9 - 2101346304) / 80 x 10 = 8556081712.
    model = CATALOG.model("Llama-3.1-70B")
    setting = Setting(env=True, offload=True, sp=4)
    terms = calibrated_terms(model, 16, setting, 16384, SHIPPED.coefficients)
    assert sum(terms[term] for term in ("checkpoints", "logits", "recompute")) == pytest.approx(33.94921875, rel=1e-12)
    assert token_features(model, 16, setting, 16384)["gathered"] == pytest.approx(
        (4202692608 + 8556081712) / 2**30, rel=1e-9)
    estimate = breakdown(model, 79.6, 16, setting, 32768, SHIPPED.coefficients)
    assert estimate.terms["states"] == 0.0 and estimate.step_gib == 0.0
    codes = [beyond.code for beyond in beyond_calibration(SHIPPED.fit.range, model, 79.6, 16, setting, 16384, 8)]
    assert BeyondCode.MORE_NODES in codes and BeyondCode.LARGER_MODEL in codes
