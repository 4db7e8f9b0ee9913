"""The memory model: arithmetic, calibration, monotonicity, estimates in the planner, its commands."""

from __future__ import annotations

import errno
import json
import re
import shlex
import shutil
from pathlib import Path

import pytest
import yaml
from cluster_api import place
from command_words import make_query
from conftest import ONE_TABLE, qwen3_8b_checkpoint
from hypothesis import example, given, settings
from hypothesis import strategies as st
from test_critic_s73 import answer as critic_answer

import solver
import solver.cli.atomic
from solver import estimate_memory
from solver.calibrate import Observation, calibrate, fit_summary, mispredicted, observations, optimistic
from solver.memory import (
    CEILING,
    GRID,
    PRIOR,
    TERMS,
    Breakdown,
    MemoryEstimate,
    Terms,
    beyond_calibration,
    breakdown,
    estimated_cells,
    estimated_counts,
    held_host_tenths,
    host_memory_gib,
    host_ram_holds,
    layer_peak_bytes,
    longest_fitting,
    pinned_rounding,
    rollout_engines,
    shown_host_gib,
    shown_host_tenths,
    token_floor_gib,
    weight_shapes,
)
from solver.render.memory import critic_states_words
from solver.results import CautionCode, MarginRoom, layout_cautions
from solver.rules import COMMAND_OPTIONS, SourceCell, tried_settings, validated_length
from solver.solve import plan
from solver.tables import (
    DEFAULT_MARGIN,
    NODE_GPUS,
    MemoryModel,
    QueryError,
    Setting,
    TableError,
    TableOrigin,
    load_catalog,
    load_fleet,
    load_gpu_type,
    load_memory_model,
    load_model_config,
    shipped_tables_directory,
    shown_parameters,
)
from solver.tables.schema import MoE

CATALOG = load_catalog()
FIXTURE = Path(__file__).parent / "data" / "model-config" / "config.json"


def test_breakdown_arithmetic_by_hand():
    # Qwen3-0.6B (hidden 1024, 28 layers, intermediate 3072, vocab 151936, 0.596 B parameters) on 2 GPUs,
    # SP=2, 8192 tokens, neither Env nor Offload, first-principles coefficients, no margin:
    # T = ceil(2 * 8192 / 2) = 8192 tokens per GPU; GiB = 2**30 bytes.
    result = breakdown(CATALOG.model("0.6B"), 80, 2, Setting(sp=2), 8192, PRIOR)
    assert result.tokens_per_gpu == 8192
    assert [term for term, _ in result.terms.items()] == [
        "states", "gathered", "checkpoints", "logits", "recompute", "sp_buffers", "fragmentation", "overhead"]
    assert result.terms["states"] == pytest.approx(16 * 0.596e9 / 2 / 2**30)   # 4.4405460 GiB
    # tied embeddings: 4 * 151936 * 1024 bytes, and 10 bytes per layer parameter, (0.596e9 - 151936 * 1024) / 28
    assert result.terms["gathered"] == pytest.approx(0.7260794)
    # checkpoints 2 * 8192 * 1024 * 28 bytes = 0.4375, logits 4 * 8192 * 151936 bytes = 4.63671875, recompute
    # 2 * 8192 * (1024 + 3072) bytes = 0.0625: together 5.13671875, below the physical floor of
    # 8192 * (2 * 1024 * (28 + 1) + 7 * 151936) bytes = 8.5673828125, whose shortfall the checkpoints take.
    assert result.terms["checkpoints"] == 8.5673828125 - 4.63671875 - 0.0625
    assert result.terms["logits"] == 4.63671875
    assert result.terms["recompute"] == 0.0625
    assert result.terms["sp_buffers"] == 0.015625       # 2 * 8192 * 1024 bytes, SP > 1
    assert result.terms["fragmentation"] == 4.63671875  # the logits again, without Env
    assert result.terms["overhead"] == 1.0
    assert result.total_gib == pytest.approx(4.4405460 + 0.7260794 + 8.5673828125 + 4.63671875 + 0.015625 + 1,
                                             abs=1e-6)
    # With the shipped coefficients the per-token terms are above the floor (it binds none of the tabled models).
    shipped = breakdown(CATALOG.model("0.6B"), 80, 2, Setting(sp=2), 8192, load_memory_model().coefficients)
    coefficients = load_memory_model().coefficients
    assert shipped.terms["checkpoints"] == pytest.approx(0.4375 * coefficients.checkpoints)
    assert result.usable_gib == pytest.approx(72.0)     # 90% of 80 GB without Env
    with_env = breakdown(CATALOG.model("0.6B"), 80, 2, Setting(env=True, offload=True, sp=2), 8192, PRIOR, 0.02)
    assert with_env.terms["states"] == 0 and with_env.terms["fragmentation"] == 0
    assert with_env.terms["gathered"] == result.terms["gathered"]  # gathered layers stay on the GPU with Offload
    assert with_env.usable_gib == pytest.approx(80 * 0.95 * 0.98)


def test_host_memory_by_hand():
    # Qwen3-0.6B with Offload on 2 GPUs of one node. FSDP2 splits each tensor's rows over the 2 GPUs; pinned blocks
    # are rounded up to powers of two. fp32 shards (bytes): embedding (tied) 75968 x 1024 x 4 = 311164928 -> 2**29;
    # per layer q 1024 x 1024 x 4 = 2**22, k and v 512 x 1024 x 4 = 2**21 each, o 512 x 2048 x 4 = 2**22, the two
    # norms 2**11 each, q_norm and k_norm 2**8 each, gate, up and down 1536 x 1024 x 4 = 6291456 -> 2**23 each:
    # 37753344 a layer, 28 layers, and the final norm 2**11: 1593966592 bytes, for the parameters, the gradients and
    # the reference model's weights (fp32 on Trinity 0.6) each. The tensors hold 596049920 values, the catalogue says
    # 0.596e9 parameters: the rounding's share is scaled to it.
    model = CATALOG.model("0.6B")
    scale = 0.596e9 / 596049920
    per_gpu = 3 * 1593966592 * scale + 8 * 0.596e9 / 2  # + Adam's moments, not pinned
    assert host_memory_gib(model, 2, 8) == pytest.approx(2 * per_gpu / 2**30)  # 13.35 GiB
    # (Loading, tied embeddings: each of the 2 ranks reads the whole fp32 model, 4 bytes a parameter, beside the
    # pinned fp32 parameter and reference shards: 4.77e9 + 6.37e9 bytes, less than training takes.)
    # Qwen3-4B (tied) on 8 GPUs of a node: loading, 8 whole fp32 copies, is the larger moment; on 8 GPUs over two
    # nodes of 4, each node has half of it. Qwen3-8B (untied) loads on every rank where no release is named (the most
    # any release loads: hostload, s84), and loading is the larger; where rank 0 alone loads it (verl's rule, Trinity
    # 0.5.0 and 0.5.1; 0.6's rank-0), training is.
    four_b = CATALOG.model("4B")
    fp32_shards = 4 * 4.022e9 * pinned_rounding(four_b, 8, 4)  # every GPU's, together; the reference's as many
    assert host_memory_gib(four_b, 8, 8) == pytest.approx((8 * 4 * 4.022e9 + 2 * fp32_shards) / 2**30)  # 162.1 GiB
    assert host_memory_gib(four_b, 8, 4) == pytest.approx(host_memory_gib(four_b, 8, 8) / 2)
    eight_b = CATALOG.model("8B")
    training = 3 * 4 * pinned_rounding(eight_b, 8, 4) * 8.191e9 + 8 * 8.191e9
    loading = 8 * 4 * 8.191e9 + 2 * 4 * pinned_rounding(eight_b, 8, 4) * 8.191e9  # 325.4 GiB
    assert loading > training and host_memory_gib(eight_b, 8, 8) == pytest.approx(loading / 2**30)
    assert host_memory_gib(eight_b, 8, 8, loading="verl") == pytest.approx(training / 2**30)
    # Qwen3-8B on 16 GPUs, nodes of 8: each node holds half of the states; rank 0's node, where it alone loads the
    # whole model, loads it beside its pinned fp32 parameter and reference shards (7.5e10 bytes), less than its half
    # of the training (9.8e10); where every rank loads it, each node loads 8 copies, more.
    training = (3 * 4 * pinned_rounding(eight_b, 16, 4) * 8.191e9 + 8 * 8.191e9) / 2
    loading = 4 * 8.191e9 + 2 * 4 * pinned_rounding(eight_b, 16, 4) * 8.191e9 / 2
    assert loading < training and host_memory_gib(eight_b, 16, 8, loading="rank-0") == pytest.approx(training / 2**30)
    assert host_memory_gib(eight_b, 16, 8) == pytest.approx((loading + 7 * 4 * 8.191e9) / 2**30)
    # On 3 GPUs the rows do not split evenly, and each shard holds the rounded-up share of them (Qwen3-0.6B, fp32):
    # q 683 x 1024 x 4 -> 2**22, k and v 342 x 1024 x 4 -> 2**21, o 342 x 2048 x 4 -> 2**22, the norms 342 x 4 -> 2**11,
    # q_norm and k_norm 43 x 4 -> 2**8, gate and up 1024 x 1024 x 4 = 2**22, down 342 x 3072 x 4 = 4202496 -> 2**23
    # (341 rows would fit 2**22): 29364736 a layer; the embedding 50646 x 1024 x 4 -> 2**28, the final norm 2**11.
    assert pinned_rounding(model, 3, 4) == pytest.approx((28 * 29364736 + 2**28 + 2**11) / (4 * 596049920 / 3))


def test_the_weight_shapes_hold_each_catalogued_models_parameters():
    # Every tensor FSDP2 shards, counted from the shapes: within 0.5% of the catalogue's parameter count (Qwen2.5's
    # q/k/v biases are left out), so no tensor kind is missing or counted twice (a MoE model's experts and router).
    for model in CATALOG.models:
        counted = sum(rows * columns * count for rows, columns, count in weight_shapes(model))
        assert counted == pytest.approx(model.parameters_b * 1e9, rel=5e-3), model.name
    # Qwen3-0.6B by hand (hidden 1024, 16 heads and 8 KV heads of 128, MLP 3072, 28 layers, tied embeddings): one
    # embedding matrix and the final norm; per layer q (2048 rows), k and v (1024 each), o, the two RMSNorms, q_norm
    # and k_norm (128 each), gate and up, down.
    assert weight_shapes(CATALOG.model("0.6B")) == (
        (151936, 1024, 1), (1024, 1, 1), (2048, 1024, 28), (1024, 1024, 56), (1024, 2048, 28), (1024, 1, 56),
        (128, 1, 56), (3072, 1024, 56), (1024, 3072, 28))
    # Qwen3-30B-A3B (48 layers, 128 experts of 768, hidden 2048): the router, then each layer's experts in two
    # tensors of a row per expert, gate_up_proj (2 x 768 x 2048 a row) and down_proj (2048 x 768), as transformers 5.
    assert weight_shapes(CATALOG.model("30B-A3B"))[-3:] == (
        (128, 2048, 48), (128, 2 * 768 * 2048, 48), (128, 2048 * 768, 48))


def test_the_readme_plans_breakdown_by_hand_with_the_shipped_coefficients():
    # Qwen3-4B (hidden 2560, 36 layers, intermediate 9728, vocab 151936, 4.022 B parameters) on 4 A100s
    # (80 GiB), Env + Offload + SP=4 at 102400: T = ceil(2 * 102400 / 4) = 51200 tokens per GPU.
    c = load_memory_model().coefficients
    tokens, hidden, layers, vocab, gib = 51200, 2560, 36, 151936, 2**30
    expected = {
        "states": 0.0,  # offloaded
        "gathered": c.gathered * (4 * vocab * hidden + 10 * (4.022e9 - vocab * hidden) / layers) / gib,  # tied
        "checkpoints": c.checkpoints * 2 * tokens * hidden * layers / gib,
        "logits": c.logits * 4 * tokens * vocab / gib,
        "recompute": c.recompute * 2 * tokens * (hidden + 9728) / gib,
        "sp_buffers": c.sp_buffers * 2 * tokens * hidden / gib,
        "fragmentation": 0.0,  # Env
        "overhead": c.overhead,
    }
    # The per-token terms clear the physical floor, 2 hidden (layers + 1) + 7 vocab bytes a token, so it adds nothing.
    per_token = expected["checkpoints"] + expected["logits"] + expected["recompute"]
    assert per_token > tokens * (2 * hidden * (layers + 1) + 7 * vocab) / gib
    result = breakdown(CATALOG.model("4B"), 80, 4, Setting(env=True, offload=True, sp=4), 102400, c, 0.01)
    assert result.tokens_per_gpu == tokens
    assert result.terms.model_dump() == {term: pytest.approx(value) for term, value in expected.items()}
    assert result.total_gib == pytest.approx(sum(expected.values())) and round(result.total_gib, 1) == 67.8
    assert result.usable_gib == pytest.approx(80 * c.usable_env * 0.99)  # the README: 5.8 GiB to spare
    assert round(result.usable_gib - result.total_gib, 1) == 5.8


def test_calibration_reproduces_the_committed_coefficients():
    coefficients, fit = calibrate(observations(CATALOG))
    committed = load_memory_model()
    assert coefficients == committed.coefficients
    assert fit == committed.fit
    assert fit.wrong_fits <= fit.observations * 0.01  # almost never predicts a fit the source saw fail
    # The range of the observations: the five Qwen3 models, both GPU types' driver-reported memory, their
    # tables' counts and SP degrees, and the most tokens per GPU of a cell's own setting (Qwen3-0.6B's
    # vanilla on one GPU at 36864: 2 x 36864 tokens).
    spans = fit.range
    assert spans is not None and (spans.largest_model_b, spans.least_memory_gib, spans.most_memory_gib,
                                  spans.most_gpus, spans.largest_sp, spans.most_tokens_per_gpu) == (
        14.768, 80.0, 95.577148, 6, 4, 73728)
    # Qwen3-0.6B to 14B: one vocabulary, dense models only.
    assert (spans.smallest_model_b, spans.least_vocab_size, spans.most_vocab_size, spans.mixture_of_experts) == (
        0.596, 151936, 151936, False)
    # From one GPU (Qwen3-0.6B's tables), and settings without SP among those that fit.
    assert (spans.fewest_gpus, spans.fit_without_sp) == (1, True)


def test_a_memory_model_file_without_its_range_still_works_and_says_nothing_of_it(tmp_path: Path):
    shipped = (shipped_tables_directory() / "memory-model.yaml").read_text(encoding="utf-8")
    older = tmp_path / "older.yaml"  # as solve calibrate wrote it before it recorded the range
    older.write_text(shipped[:shipped.index("  range:")], encoding="utf-8")
    memory = load_memory_model(older)
    assert memory.fit.range is None and memory.coefficients == load_memory_model().coefficients
    (answer,) = solver.plan("Llama-3.1-70B", gpu="h100", budget_gpus=8, objective="max_len", memory=memory)
    assert answer.plans[0].evidence == "estimated" and answer.plans[0].beyond_calibration == ()


def test_estimates_beyond_the_calibration_say_so(cli):
    (answer,) = solver.plan("Llama-3.1-70B", gpu="h100", budget_gpus=8, objective="max_len")
    assert answer.plans[0].beyond_calibration == (
        "70.5B parameters (calibrated up to 14.8B)", "a vocabulary of 128256 (calibrated on 151936)",
        "8 GPUs (calibrated up to 6)", "SP=8 (calibrated up to SP=4)")
    (answer,) = solver.plan("8B", gpu="h200", budget_gpus=4, max_model_len=32768)
    assert answer.plans[0].beyond_calibration == ("140 GiB GPUs (calibrated on 80 to 96 GiB)",)
    # Within the range: an H800's 79.6 GiB counts as 80, and Qwen2.5-7B's shape is within the Qwen3 models'.
    (answer,) = solver.plan("Qwen2.5-7B", gpu="h800", budget_gpus=4, max_model_len=32768)
    assert answer.plans[0].evidence == "estimated" and answer.plans[0].beyond_calibration == ()
    # A plan a table vouches for is not the memory model's, whatever its range.
    (answer,) = solver.plan("0.6B", gpu="a100", budget_gpus=8, max_model_len=8192)
    assert answer.plans[0].evidence != "estimated" and answer.plans[0].beyond_calibration == ()
    (answer,) = solver.plan("0.6B", gpu="h20", budget_gpus=4, exact=True, objective="max_len", estimate="only")
    assert (answer.plans[0].max_token_len_per_gpu, answer.plans[0].beyond_calibration) == (
        74240, ("74240 tokens per GPU (calibrated on fits of up to 73728)",))
    status, out, _ = cli("memory", "--model", "Llama-3.1-70B", "--gpu", "h100", "--gpus", "8", "--len", "65536",
                         "--sp", "8", "--env", "--offload")
    assert status == 0 and ("beyond the memory model's calibration: 70.5B parameters (calibrated up to 14.8B), "
                            "a vocabulary of 128256 (calibrated on 151936), 8 GPUs (calibrated up to 6), SP=8 "
                            "(calibrated up to SP=4); the prediction extrapolates there") in " ".join(out.split())
    # A mixture of experts, and a model smaller than any a fit of your own cells saw.
    (answer,) = solver.plan("30B-A3B", gpu="h100", budget_gpus=8, max_model_len=32768)
    assert ("a mixture of experts (calibrated on dense models; routed experts counted whole, as transformers 5 holds "
            "them)") in answer.plans[0].beyond_calibration
    mine = load_memory_model().model_copy(update={"fit": load_memory_model().fit.model_copy(update={
        "range": load_memory_model().fit.range.model_copy(update={"smallest_model_b": 8.19})})})
    (answer,) = solver.plan("0.6B", gpu="h100", budget_gpus=8, max_model_len=32768, memory=mine)
    assert "0.6B parameters (calibrated from 8.2B)" in answer.plans[0].beyond_calibration


def test_the_calibrated_range_holds_its_own_edges():
    # The shipped fit spans up to 14.768B parameters (Qwen3-14B), 80 to 95.6 GiB (96 as shown), up to 6 GPUs, SP=4 and
    # 73728 tokens per GPU: an estimate at each edge is within it, one past an edge is beyond it and says so.
    calibrated = load_memory_model().fit.range
    fourteen = CATALOG.model("14B")

    def beyond(model=fourteen, memory: float = 80.0, gpus: int = 6, sp: int = 4, tokens: int = 73728):
        return beyond_calibration(calibrated, model, memory, gpus, Setting(sp=sp), tokens, NODE_GPUS)

    assert beyond() == () and beyond(memory=96.0) == () and beyond(model=CATALOG.model("0.6B")) == ()
    # Each phrase comes with its code (docs/json.md's table), a Beyond of (code, words).
    assert beyond(model=CATALOG.model("32B")) == (("larger-model", "32.8B parameters (calibrated up to 14.8B)"),)
    assert beyond(memory=79.0) == (("other-gpu-memory", "79 GiB GPUs (calibrated on 80 to 96 GiB)"),)
    assert beyond(memory=97.0) == (("other-gpu-memory", "97 GiB GPUs (calibrated on 80 to 96 GiB)"),)
    assert beyond(gpus=7) == (("more-gpus", "7 GPUs (calibrated up to 6)"),)
    assert beyond(sp=8) == (("larger-sp", "SP=8 (calibrated up to SP=4)"),)
    assert beyond(tokens=73729) == (
        ("more-tokens-per-gpu", "73729 tokens per GPU (calibrated on fits of up to 73728)"),)
    # Parameters compare as shown, to 0.1B: 0.56B shows as the smallest's 0.6B (0.596), 0.54B is fewer.
    assert beyond(model=fourteen.model_copy(update={"parameters_b": 0.56})) == ()
    assert beyond(model=fourteen.model_copy(update={"parameters_b": 0.54})) == (
        ("smaller-model", "0.5B parameters (calibrated from 0.6B)"),)
    # A tiny model's count in a unit that shows it (it was "0.0B parameters"): millions, thousands, else whole.
    for parameters_b, shown in ((0.012, "12M"), (0.0042, "4.2M"), (4.2e-6, "4.2K"), (5.04e-7, "504")):
        assert beyond(model=fourteen.model_copy(update={"parameters_b": parameters_b})) == (
            ("smaller-model", f"{shown} parameters (calibrated from 0.6B)"),)
    # Each unit from its edge on (mutants57): 0.1B is shown so, as 0.05 rounds to it; 1M, 1K and 10M at their edges.
    assert [shown_parameters(parameters_b) for parameters_b in (0.1, 0.05, 0.049, 0.01, 0.001, 1e-6, 9.96e-3)] == [
        "0.1B", "0.1B", "49M", "10M", "1.0M", "1.0K", "10M"]
    # A vocabulary within VOCAB_TOLERANCE (1.1) of the calibrated 151936 either way is within it: 151936 / 1.1 =
    # 138123.6, so 138124 is within and 138123 beyond, as 167129 (151936 x 1.1 = 167129.6) is within and 167130 beyond.
    for vocab, phrase in ((138124, ()), (167129, ()),
                          (138123, (("other-vocabulary", "a vocabulary of 138123 (calibrated on 151936)"),)),
                          (167130, (("other-vocabulary", "a vocabulary of 167130 (calibrated on 151936)"),))):
        assert beyond(model=fourteen.model_copy(update={"vocab_size": vocab})) == phrase, vocab
    # A mixture of experts is beyond a fit on dense models only, not a range that does not say (a file from before the
    # range recorded it).
    moe = CATALOG.model("30B-A3B")
    unsaid = calibrated.model_copy(update={"mixture_of_experts": None})
    moe_phrase = ("mixture-of-experts", ("a mixture of experts (calibrated on dense models; routed experts counted "
                                         "whole, as transformers 5 holds them)"))
    assert moe_phrase in beyond(model=moe)
    assert moe_phrase not in beyond_calibration(unsaid, moe, 80.0, 6, Setting(sp=4), 73728, NODE_GPUS)
    # A fit from 4 GPUs and fits with SP only: 3 GPUs and SP=1 are beyond it, 4 GPUs and SP=2 within; a range
    # from before it recorded them checks neither.
    sp_only = calibrated.model_copy(update={"fewest_gpus": 4, "fit_without_sp": False})
    assert beyond_calibration(sp_only, fourteen, 80.0, 4, Setting(sp=2), 73728, NODE_GPUS) == ()
    assert beyond_calibration(sp_only, fourteen, 80.0, 3, Setting(sp=1), 73728, NODE_GPUS) == (
        ("fewer-gpus", "3 GPUs (calibrated from 4)"), ("without-sp", "SP=1 (calibrated on fits with SP only)"))
    older = calibrated.model_copy(update={"fewest_gpus": None, "fit_without_sp": None})
    assert beyond_calibration(older, fourteen, 80.0, 1, Setting(sp=1), 73728, NODE_GPUS) == ()


def test_a_tiny_models_count_shows_in_a_unit_that_shows_it_in_the_layout_and_critic_lines():
    # smalls92e: the unchecked-layout caution and the critic's line printed a tiny --model-config model's count to
    # 0.01B, "0.00B"; they word it as the calibration's line does (`shown_parameters`), as do large ones (7.6B)
    tiny = CATALOG.model("14B").model_copy(update={"parameters_b": 0.012, "unchecked_layout": "model_type exaone4"})
    assert layout_cautions(tiny) == ((
        "Qwen3-14B is read from a config.json of a kind rft-solver has not checked (model_type exaone4): it counts "
        "12M parameters, attention and a gated MLP in every layer; compare that with the model card"),)
    resident = critic_answer("resident", sp=2, env=True)
    for parameters_b, shown in ((0.012, "12M"), (resident.critic_parameters_b, "7.6B")):
        assert critic_states_words(resident.model_copy(update={"critic_parameters_b": parameters_b})).startswith(
            f"critic: {shown} parameters (the model with a value head for its output projection), 16 bytes each")

def test_the_fit_records_the_range_its_observations_span():
    # Made-up observations: Llama-3.1-8B (vocabulary 128256) trained on 2 GPUs of 80 GiB at SP=2, Qwen3-30B-A3B (a
    # mixture of experts, 151936) ran out on 8 of 141 GiB at SP=8; the SP degree and tokens are those that trained.
    llama, moe = CATALOG.model("llama-3.1-8b"), CATALOG.model("30B-A3B")
    evidence = [Observation("A100-80GB", llama, 80.0, 2, Setting(sp=2), 32768, True),
                Observation("H200", moe, 141.0, 8, Setting(sp=8), 65536, False)]
    found = fit_summary(evidence, PRIOR).range
    assert (found.least_vocab_size, found.most_vocab_size, found.mixture_of_experts) == (128256, 151936, True)
    assert (found.least_memory_gib, found.most_memory_gib, found.most_gpus, found.largest_sp) == (80.0, 141.0, 8, 2)
    assert (found.smallest_model_b, found.largest_model_b, found.most_tokens_per_gpu) == (
        llama.parameters_b, moe.parameters_b, 32768)
    # The fewest GPUs of any observation; SP=1 only where a setting without SP fit (here none did).
    assert (found.fewest_gpus, found.fit_without_sp) == (2, False)
    dense = fit_summary(evidence[:1], PRIOR).range
    assert (dense.least_vocab_size, dense.most_vocab_size, dense.mixture_of_experts) == (128256, 128256, False)

models = st.sampled_from([m.name for m in CATALOG.models])
settings_ = st.builds(Setting, env=st.booleans(), offload=st.booleans(), sp=st.sampled_from([1, 2, 4, 8]))


@settings(max_examples=200, deadline=None)
@given(model=models, memory=st.sampled_from([24, 40, 48, 80, 96, 141, 192]), gpus=st.sampled_from([1, 2, 4, 8, 16]),
       setting=settings_, length=st.integers(min_value=1024, max_value=262144))
def test_the_memory_model_is_monotone(model: str, memory: int, gpus: int, setting: Setting, length: int):
    coefficients = load_memory_model().coefficients
    shape = CATALOG.model(model)

    def fits(**changes) -> bool:
        values = dict(memory=memory, gpus=gpus, setting=setting, length=length) | changes
        return breakdown(shape, values["memory"], values["gpus"], values["setting"], values["length"], coefficients,
                         0.02).fits

    if fits():
        assert fits(memory=memory * 2) and fits(gpus=gpus * 2)
        assert fits(setting=setting.model_copy(update={"offload": True}))
        assert fits(setting=setting.model_copy(update={"env": True}))
    else:
        assert not fits(length=length * 2)


def test_longest_fitting_grows_with_gpus_and_memory():
    coefficients = load_memory_model().coefficients
    model = CATALOG.model("8B")
    setting = Setting(env=True, sp=2)
    lengths = [longest_fitting(model, 80, n, setting, coefficients) or 0 for n in (2, 4, 8, 16)]
    assert lengths == sorted(lengths)
    assert (longest_fitting(model, 80, 4, setting, coefficients) or 0) <= (
        longest_fitting(model, 141, 4, setting, coefficients) or 0)


def test_qwen25_7b_on_6_gpus_gets_sp_1_or_2_only():
    query = make_query(CATALOG, model="Qwen2.5-7B", gpu="h100", objective="max_len", budget_gpus=6, exact=True, top=20)
    (answer,) = plan(query, CATALOG)
    assert answer.plans and {p.sp for p in answer.plans} <= {1, 2}  # 28 heads: SP 3, 4 and 6 do not divide both
    assert all(p.evidence == "estimated" and p.source is None and p.headroom_gb >= 0 for p in answer.plans)


def test_estimates_skip_sp_degrees_the_kv_heads_rule_out():
    shape = CATALOG.model("4B").model_copy(update={"num_attention_heads": 24})  # 24 heads, 8 KV heads
    coefficients = load_memory_model().coefficients
    degrees = {sp for _, _, _, sp, _ in estimated_cells(shape, 141, (1, 2, 3, 4, 6, 8, 12, 24), coefficients, 0.01)}
    assert degrees == {1, 2, 4, 8, 24}  # 3, 6 and 12 divide the heads but not the 8 KV heads, nor they them


def test_estimated_plans_cover_gpu_types_counts_and_models_without_tables():
    (answer,) = plan(make_query(CATALOG, model="8B", gpu="h200", max_model_len=131072, budget_gpus=8), CATALOG)
    assert answer.plans[0].evidence == "estimated" and answer.plans[0].max_model_len == 131072
    # 8 A100s: past every table, Qwen3-4B at 131072 needs SP=8, which only the memory model speaks for.
    (answer,) = plan(make_query(CATALOG, model="4B", gpu="a100", max_model_len=131072, budget_gpus=8, exact=True),
                     CATALOG)
    assert (answer.plans[0].gpus, answer.plans[0].sp, answer.plans[0].evidence) == (8, 8, "estimated")
    (answer,) = plan(make_query(CATALOG, model="4B", gpu="a100", max_model_len=131072, budget_gpus=8, exact=True,
                                estimate="never"), CATALOG)
    assert answer.plans == ()


def test_estimates_cover_any_count_in_a_node_then_whole_nodes_up_to_64():
    assert estimated_counts(8) == (1, 2, 3, 4, 5, 6, 7, 8, 16, 24, 32, 40, 48, 56, 64)
    assert estimated_counts(4, 20) == (1, 2, 3, 4, 8, 12, 16, 20)
    assert estimated_counts(8, 6) == (1, 2, 3, 4, 5, 6)
    assert estimated_counts(128) == tuple(range(1, 65))

    def reason(**request):
        (answer,) = plan(make_query(CATALOG, model="8B", gpu="h100", max_model_len=32768, exact=True, **request),
                         CATALOG)
        return answer.plans[0].gpus if answer.plans else answer.reason

    assert reason(budget_gpus=40) == 40
    assert ": 12 GPUs span nodes of 8 (--node-gpus) but are not whole nodes; fewer trainer GPUs train" in reason(
        budget_gpus=12)
    assert reason(budget_gpus=12, node_gpus=4) == 12
    assert reason(budget_gpus=72).endswith(
        "; estimated plans go up to 64 trainer GPUs; fewer trainer GPUs train 32768 tokens: Env + SP=2 on 64 GPUs "
        "(estimated, extrapolated), the other 8 free for rollout")


def test_a_count_below_your_tables_with_no_plan_at_any_length_has_a_reason_that_says_why():
    # Your own table for 8 H800s vouches for no smaller count: 4 GPUs would need an estimate.
    with_h800 = CATALOG.with_cells(Path(__file__).parent / "data" / "cells" / "h800.yaml")

    def reason(**request):
        (answer,) = plan(make_query(with_h800, model="8B", gpu="h800", max_model_len=8192, budget_gpus=4, **request),
                         with_h800)
        return answer.reason if not answer.plans else answer.plans[0].evidence

    assert reason(exact=True, estimate="never") == (
        "no plan for exactly 4 trainer GPUs with Qwen3-8B on H800-80GB (counts with a plan at some length: 8); other "
        "counts need estimates, which --no-estimate turns off; more trainer GPUs train 8192 tokens: SP=2 on 8 GPUs "
        "(documented); the memory model estimates a plan, Env + SP=2 on 4 GPUs at 8192 tokens: drop --no-estimate")
    assert reason(estimate="never") == (
        "no plan for 4 or fewer trainer GPUs with Qwen3-8B on H800-80GB (counts with a plan at some length: 8); the "
        "memory model estimates a plan, Env + SP=2 on 4 GPUs at 8192 tokens: drop --no-estimate")
    assert reason(exact=True) == "estimated"
    # With estimates on, 4 GPUs are no count with a plan where no estimate on them fits: the reason says so.
    assert reason(exact=True, margin=0.95) == (
        "no plan for exactly 4 trainer GPUs with Qwen3-8B on H800-80GB (counts with a plan at some length: 8); the "
        "memory model estimates that nothing fits on 4 GPUs within what the tables allow; more trainer GPUs train "
        "8192 tokens: SP=2 on 8 GPUs (documented)")


def test_fewest_gpus_without_a_budget_searches_every_count_the_estimates_cover():
    (answer,) = plan(make_query(CATALOG, model="32B", gpu="h100", max_model_len=131072, objective="min_gpus"),
                     CATALOG)
    assert answer.budget_gpus == 64 and answer.plans[0].gpus == 8 and answer.plans[0].evidence == "estimated"
    for fewer in range(1, 8):
        (answer,) = plan(make_query(CATALOG, model="32B", gpu="h100", max_model_len=131072, budget_gpus=fewer,
                                    exact=True), CATALOG)
        assert answer.plans == ()
    # Without estimates too: the tables vouch for counts past their own (SP=8 on 8 GPUs from the 4-GPU
    # table's SP=4 at 32768, for Qwen3-8B on A100s).
    (answer,) = plan(make_query(CATALOG, model="8B", gpu="a100", max_model_len=65536, objective="min_gpus",
                                estimate="never"), CATALOG)
    assert answer.budget_gpus == 64 and answer.plans[0].gpus == 4
    (answer,) = plan(make_query(CATALOG, model="8B", gpu="a100", max_model_len=32768, objective="min_gpus", sp=8,
                                estimate="never"), CATALOG)
    best = answer.plans[0]
    assert (best.gpus, best.evidence, best.source) == (8, "inferred", SourceCell(model="Qwen3-8B", gpus=4, max_model_len=32768,
                                                                                 setting="SP=4"))


def test_documented_cells_win_where_tables_exist():
    (answer,) = plan(make_query(CATALOG, model="8B", gpu="a100", max_model_len=32768, budget_gpus=4, exact=True),
                     CATALOG)
    assert (answer.plans[0].setting.label, answer.plans[0].evidence) == ("SP=4", "documented")
    (estimate,) = plan(make_query(CATALOG, model="8B", gpu="a100", max_model_len=32768, budget_gpus=4, exact=True,
                                  estimate="only"), CATALOG)
    assert estimate.plans[0].evidence == "estimated"


def test_model_config_reads_a_local_config_json():
    model = load_model_config(FIXTURE)
    assert (model.name, model.num_attention_heads, model.num_key_value_heads, model.head_size) == (
        "Qwen2.5-7B-Instruct", 28, 4, 128)
    assert model.parameters_b == pytest.approx(7.616, abs=0.002)  # computed from the shapes
    assert model.native_context == 32768


HF_CONFIGS = Path(__file__).parent / "data" / "hf-configs"


@pytest.mark.parametrize(
    ("file", "shape", "parameters_b"),
    [  # (layers, hidden, heads, KV heads, head size, vocabulary, tied), and the size each model card gives
        ("Llama-3.2-1B", (16, 2048, 32, 8, 64, 128256, True), 1.24),
        ("Llama-2-7b-hf", (32, 4096, 32, 32, 128, 32000, False), 6.74),  # no num_key_value_heads: as many as heads
        ("Mistral-Nemo-Base-2407", (40, 5120, 32, 8, 128, 131072, False), 12.25),  # head_dim 128, not 5120 / 32
        ("gemma-2-9b", (42, 3584, 16, 8, 256, 256000, True), 9.24),  # tied by Gemma-2's default
        ("phi-4", (40, 5120, 40, 10, 128, 100352, False), 14.66),
        ("Qwen3-8B", (36, 4096, 32, 8, 128, 151936, False), 8.19),
        ("Qwen3-30B-A3B", (48, 2048, 32, 4, 128, 151936, False), 30.5),  # a mixture of experts: all 128 counted
        ("Mixtral-8x7B-v0.1", (32, 4096, 32, 8, 128, 32000, False), 46.7),  # and all 8 of Mixtral's
    ],
)
def test_model_config_reads_public_configs(file: str, shape: tuple, parameters_b: float):
    # Hugging Face config.json files as published (tests/data/hf-configs), read as their model cards size them.
    model = load_model_config(HF_CONFIGS / f"{file}.json")
    assert (model.num_layers, model.hidden_size, model.num_attention_heads, model.num_key_value_heads,
            model.head_size, model.vocab_size, model.tied_embeddings) == shape
    assert model.parameters_b == pytest.approx(parameters_b, rel=0.01)
    assert model.unchecked_layout is None  # model types whose counts these very files check: no caution
    assert CATALOG.with_model(model).model(file).name == (file if file != "Qwen3-8B" else CATALOG.model("8B").name)


MINISTRAL3_3B = {
    "model_type": "ministral3", "_name_or_path": "mistralai/Ministral-3-3B-Base-2512", "vocab_size": 131072,
    "hidden_size": 3072, "intermediate_size": 9216, "num_hidden_layers": 26, "num_attention_heads": 32,
    "num_key_value_heads": 8, "max_position_embeddings": 262144, "tie_word_embeddings": True,
    "rope_parameters": {"rope_type": "yarn", "rope_theta": 1000000.0, "factor": 16.0, "llama_4_scaling_beta": 0.1,
                        "original_max_position_embeddings": 16384, "beta_fast": 32.0, "beta_slow": 1.0}}
"""Ministral-3-3B-Base-2512's text_config as published, less its ``head_dim`` (128), which ``Ministral3Config``'s
default gives (transformers 5.9.0 configuration_ministral3.py:79)."""


def test_ministral3_reads_its_head_dim_and_own_yarn_from_its_class(cli, tmp_path: Path):
    # 128-wide heads, not 3072 / 32 = 96 (3.22B); its YaRN to 262144 is its own, so no factor is written over it.
    path = tmp_path / "config.json"
    path.write_text(json.dumps(MINISTRAL3_3B), encoding="utf-8")
    model = load_model_config(path)
    assert (model.head_dim, model.unchecked_layout, model.native_context, model.rope_scaling) == (
        128, None, 262144, "yarn")
    assert model.parameters_b == pytest.approx(3.4, rel=0.01)  # its card: a 3.4B language model
    # mutants47: Ministral3Config's tie_word_embeddings defaults to false (its card's config gives true)
    path.write_text(json.dumps({key: value for key, value in MINISTRAL3_3B.items() if key != "tie_word_embeddings"}),
                    encoding="utf-8")
    assert load_model_config(path).tied_embeddings is False
    path.write_text(json.dumps(MINISTRAL3_3B), encoding="utf-8")
    status, out, err = cli("memory", "--model-config", str(path), "--gpu", "h100", "--gpus", "8", "--len", "32768")
    assert (status, err) == (1, "")
    assert out.startswith("Ministral-3-3B-Base-2512 (3.4B parameters)") and "YaRN" not in out


def test_a_type_transformers_4_lacks_is_cautioned_under_trinity_0_5_alone(cli, tmp_path: Path):
    # Ministral 3's class is new in transformers 5.0: 0.5.1's transformers 4 loads it only by remote code; 0.6's has it.
    path = tmp_path / "config.json"
    path.write_text(json.dumps(MINISTRAL3_3B), encoding="utf-8")
    asked = ("memory", "--model-config", str(path), "--gpu", "h100", "--gpus", "8", "--len", "8192")
    status, out, err = cli(*asked, "--trinity-version", "0.5.1")
    assert (status, err) == (0, "")
    assert ("caution: Ministral-3-3B-Base-2512 is of model_type ministral3, whose transformers class is new in 5.0 "
            "(none in 4.57.6, one in 5.3.0): on transformers 4, which Trinity 0.5.1 pins, the trainer loads it only by "
            "the checkpoint's own modeling code (trust_remote_code, where its auto_map names one): use Trinity 0.5.2 "
            "on transformers 5 (up to 5.3.0) or 0.6") in " ".join(out.split())
    codes = {version: json.loads(cli(*asked, "--trinity-version", version, "--json")[1])["caution_codes"]
             for version in ("0.5.2", "0.6")}
    assert ("transformers-4-no-class" in codes["0.5.2"], "transformers-4-no-class" in codes["0.6"]) == (True, False)


CWM = {"model_type": "cwm", "vocab_size": 128256, "hidden_size": 6144, "intermediate_size": 21504,
       "num_hidden_layers": 64, "num_attention_heads": 48, "num_key_value_heads": 8, "max_position_embeddings": 131072}
"""``CwmConfig``'s defaults (transformers 5.12.1 configuration_cwm.py:63-84): CWM's 32B shape, without the keys whose
class defaults are read (head_dim 128, untied embeddings, llama3 RoPE, a window of 8192 on three layers of four)."""


def test_cwm_reads_as_llama_with_its_class_defaults(tmp_path: Path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**CWM, "rope_theta": 10000.0}), encoding="utf-8")
    model = load_model_config(path)
    layer = 6144 * 128 * (2 * 48 + 2 * 8) + 3 * 6144 * 21504 + 2 * 6144
    assert model.parameters_b * 1e9 == pytest.approx(64 * layer + 2 * 128256 * 6144 + 6144, abs=1)  # 32.58B
    # Its class's llama3 RoPE at base 1000000 (a top-level rope_theta does not change it); vLLM runs it as Llama,
    # windowing the 48 sliding layers of 64 (every fourth from the first full); Llama's module names.
    assert (model.head_dim, model.tied_embeddings, model.unchecked_layout, model.native_context, model.rope_scaling,
            model.rope_theta, model.vllm_sliding_window, model.peft_names.assumed) == (
        128, False, None, 131072, "llama3", 1e6, (8192, 48), False)
    path.write_text(json.dumps({**CWM, "head_dim": None}), encoding="utf-8")  # null: 6144 / 48, as its class takes
    assert load_model_config(path).head_dim == 128
    path.write_text(json.dumps({**CWM, "num_attention_heads": 64, "head_dim": None}), encoding="utf-8")
    assert load_model_config(path).head_dim == 96
    path.write_text(json.dumps({**CWM, "num_attention_heads": 64}), encoding="utf-8")  # mutants47: left out, 128
    assert load_model_config(path).head_dim == 128
    # mutants47: RoPE parameters a config gives are its own, not the class's
    path.write_text(json.dumps({**CWM, "rope_parameters": {"rope_type": "default", "rope_theta": 500000.0}}),
                    encoding="utf-8")
    given = load_model_config(path)
    assert (given.rope_scaling, given.rope_theta) == (None, 5e5)


@pytest.mark.parametrize("model_type", ["nemotron_h", "falcon_h1", "bamba", "zamba", "zamba2", "jamba",
                                        "granitemoehybrid", "lfm2", "plamo2", "recurrent_gemma"])
def test_every_hybrid_model_type_is_refused(tmp_path: Path, model_type: str):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": model_type, "hidden_size": 4096, "num_hidden_layers": 32}),
                    encoding="utf-8")
    with pytest.raises(TableError, match=rf"config.json: model_type {model_type}: a hybrid of attention with "
                                         r"state-space \(Mamba\), convolution or recurrent layers; "):
        load_model_config(path)


@pytest.mark.parametrize("model_type", ["llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "gemma3_text", "phi3",
                                        "granite", "olmo", "olmo2", "stablelm", "glm4", "internlm2"])
def test_a_config_of_a_checked_kind_is_read_without_a_caution(tmp_path: Path, model_type: str):
    config = json.loads((HF_CONFIGS / "Mistral-Nemo-Base-2407.json").read_text(encoding="utf-8"))
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**config, "model_type": model_type}), encoding="utf-8")
    assert load_model_config(path).unchecked_layout is None


@pytest.mark.parametrize(("model_type", "words"), [("exaone4", "model_type exaone4"), (None, "no model_type")])
def test_a_config_of_a_kind_whose_counts_are_unchecked_is_planned_with_a_caution(cli, tmp_path: Path,
                                                                                 model_type: str | None, words: str):
    # Read as attention and a gated MLP in every layer, as any config is, but its plans and breakdowns say so, with
    # the count to compare with the model card: a kind not checked may be laid out otherwise (a hybrid, MLA, ...).
    config = json.loads((HF_CONFIGS / "Mistral-Nemo-Base-2407.json").read_text(encoding="utf-8"))
    config.pop("model_type")
    config.update({"_name_or_path": "my-model", **({"model_type": model_type} if model_type else {})})
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    assert load_model_config(path).unchecked_layout == words
    caution = (f"my-model is read from a config.json of a kind rft-solver has not checked ({words}): it counts 12.2B "
               "parameters, attention and a gated MLP in every layer; compare that with the model card")
    status, out, _ = cli("--model-config", str(path), "--gpu", "h100", "--gpus", "8", "--len", "32768", "--json")
    assert status == 0 and json.loads(out)[0]["plans"][0]["cautions"][0] == caution
    status, out, _ = cli("memory", "--model-config", str(path), "--gpu", "h100", "--gpus", "8", "--len", "32768",
                         "--env", "--sp", "2", "--json")
    assert status == 0 and json.loads(out)["cautions"] == [caution]
    assert json.loads(out)["model_parameters_b"] == 12.248  # its count, the title's too: to check against the card
    _, out, _ = cli("memory", "--model-config", str(path), "--gpu", "h100", "--gpus", "8", "--len", "32768")
    assert out.startswith("my-model (12.2B parameters) on 8 x H100-80GB (79.6 GiB), vanilla, 32768 tokens")
    status, out, _ = cli("memory", "--model-config", str(HF_CONFIGS / "Mistral-Nemo-Base-2407.json"), "--gpu", "h100",
                         "--gpus", "8", "--len", "32768", "--env", "--sp", "2", "--json")
    assert status == 0 and json.loads(out)["cautions"] == []  # a mistral config: its kind is checked


@pytest.mark.parametrize(
    ("file", "message"),
    [
        ("Nemotron-H-8B-Base-8K", "model_type nemotron_h: a hybrid of attention with state-space"),  # was 17 B, not 8
        ("Qwen-7B", "model_type qwen: the first Qwen's remote-code config"),  # was 12 B, not 7.7
        ("Phi-3-vision-128k-instruct", r"a multimodal config \(img_processor\)"),  # was its text model alone
    ],
)
def test_model_config_refuses_public_configs_it_would_miscount(file: str, message: str):
    with pytest.raises(TableError, match=message):
        load_model_config(HF_CONFIGS / f"{file}.json")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "not JSON"),
        ("\ufeff{}", "starts with a byte-order mark, which JSON readers refuse: save it without one$"),
        ('{"hidden_size": 1024, "hidden_size": 2048}', r"key 'hidden_size' appears twice \(JSON readers keep the last\)$"),
        ("[1, 2]", "a config.json is a JSON object"),
        # A mixture of experts is read where its routed experts are all its MLPs (`test_mixture_of_experts_configs`).
        ('{"n_routed_experts": 64, "n_shared_experts": 2, "hidden_size": 2048}',  # DeepSeek-MoE's shared experts
         (r"n_shared_experts 2: shared experts beside the routed ones, which would go uncounted; rft-solver reads a "
          r"mixture of experts with routed experts in every layer \(Qwen3-MoE's, Mixtral's\), besides them only "
          r"Qwen2-MoE's shared expert, DeepSeek's and GLM-4-MoE's shared experts and first dense layers "
          r"\(model_type deepseek, deepseek_v2, deepseek_v3, glm4_moe\), Qwen3-MoE's dense layers \(model_type "
          r"qwen3_moe: mlp_only_layers, decoder_sparse_step\), and ERNIE-4.5's, Hunyuan's and Llama 4's "
          r"layouts \(ernie4_5_moe, hunyuan_v1_moe, llama4_text\)$")),
        ('{"num_experts": 64, "first_k_dense_replace": 1, "hidden_size": 2048}',  # DeepSeek-MoE's dense first layer
         r"first_k_dense_replace 1: some layers dense, the others mixtures of experts; rft-solver reads a mixture"),
        ('{"num_experts": 128, "mlp_only_layers": [0, 47], "hidden_size": 2048}',
         r"mlp_only_layers \[0, 47\]: some layers dense, the others mixtures of experts; "),
        ('{"num_experts": 128, "decoder_sparse_step": 2, "hidden_size": 2048}',
         r"decoder_sparse_step 2: some layers dense, the others mixtures of experts; "),
        ('{"num_experts": 16, "expert_layer_period": 2, "expert_layer_offset": 1, "hidden_size": 4096}',  # Jamba's
         r"expert_layer_period 2: some layers dense, the others mixtures of experts; "),
        ('{"num_local_experts": 62, "shared_intermediate_size": 1024, "hidden_size": 1536}',  # Granite 4.0's
         r"shared_intermediate_size 1024: shared experts beside the routed ones, which would go uncounted; "),
        ('{"text_config": {"hidden_size": 8}}', r"a multimodal config \(text_config\); only a text model"),
        ('{"hidden_size": 3584, "num_hidden_layers": 28, "vision_config": {"depth": 32}}',  # Qwen2-VL's layout
         r"a multimodal config \(vision_config\)"),
        ('{"hidden_size": 1024}', (r"missing num_hidden_layers: a model's config.json gives it \(a whole number from 1 "
                                   r"to 16384\)")),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"x": ' + "1" * 5000 + "}", "a number too long to read"),
        (('{"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 8, '
          '"vocab_size": 1000, "max_position_embeddings": 4096, "tie_word_embeddings": "false"}'),
         "tie_word_embeddings: expected true or false, got 'false'"),  # a string is not taken as true
        ('{"hidden_size": -1, "num_hidden_layers": 2}', "hidden_size: expected a whole number from 1 to 1048576, got -1"),
        ('{"hidden_size": 1' + '0' * 200 + '}', r"hidden_size: expected a whole number from 1 to 1048576, got 1000+\.\.\.$"),
        ('{"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 128}',
         "head_dim: not given, and hidden_size 64 over 128 attention heads leaves none"),
        ('{"hidden_size": 4096, "num_hidden_layers": 2, "num_attention_heads": 32, "num_key_value_heads": 5}',
         r"num_key_value_heads: expected a divisor of num_attention_heads \(32\), got 5"),
        ('{"hidden_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 8, "intermediate_size": 2048, '
         '"vocab_size": 1000, "max_position_embeddings": 4096, "tie_word_embeddings": false, "rope_scaling": "yarn"}',
         r"rope_scaling: expected an object such as \{\"rope_type\": \"yarn\", \.\.\.\} or null, got 'yarn'"),
        (('{"hidden_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 8, "intermediate_size": 2048, '
          '"vocab_size": 1000, "max_position_embeddings": 4096, "model_type": "llama", "rope_scaling": {"type": ["yarn"]}}'),
         r"rope_scaling: rope_type: expected text such as \"yarn\" or \"llama3\", got \['yarn'\]"),
        ('{"model_type": ["gpt_neox"], "hidden_size": 64}', r"model_type: expected text such as \"llama\", got \['gpt_neox'\]"),
        # Kinds are shown in cautions: empty or unprintable ones are refused (they broke the model's schema, or would
        # reach the terminal as they are).
        ('{"model_type": "", "hidden_size": 64}', r"model_type: expected text such as \"llama\", got ''$"),
        ('{"model_type": "x\\u001b[2J", "hidden_size": 64}',
         r"model_type: expected text such as \"llama\", got 'x\\x1b\[2J'$"),
        (('{"hidden_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 8, "intermediate_size": 2048, '
          '"vocab_size": 1000, "model_type": "llama", "rope_scaling": {"rope_type": null, "type": ""}}'),
         r"rope_scaling: rope_type: expected text such as \"yarn\" or \"llama3\", got ''$"),
        ('{"final_logit_softcapping": 0, "hidden_size": 64}',
         "final_logit_softcapping: expected a finite number above 0 or null, got 0"),
        ('{"final_logit_softcapping": "30", "hidden_size": 64}',
         "final_logit_softcapping: expected a finite number above 0 or null, got '30'"),
        ('{"model_type": "gpt_neox", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32}',
         (r"model_type gpt_neox: its MLP has two matrices, not the three of a gated MLP \(gate, up, down\) that "
          r"rft-solver counts; it reads gated-MLP models \(Llama, Qwen, Mistral, Gemma, Phi-3 and the like\)$")),
        ('{"model_type": "arcee", "hidden_size": 2560, "num_hidden_layers": 36, "num_attention_heads": 20}',
         "model_type arcee: its MLP has two matrices"),  # AFM-4.5B's ReLU² MLP: counted as 6.3 B
        ('{"model_type": "apertus", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32}',
         "model_type apertus: its MLP has two matrices"),  # Apertus-8B's xIELU MLP: counted as 10.9 B
        ('{"model_type": "falcon_h1", "hidden_size": 3072, "num_hidden_layers": 44}',
         (r"model_type falcon_h1: a hybrid of attention with state-space \(Mamba\), convolution or recurrent layers; "
          "rft-solver counts attention and a gated MLP in every layer$")),
        ('{"model_type": "chatglm", "hidden_size": 4096, "num_layers": 28, "padded_vocab_size": 65024}',
         r"model_type chatglm: ChatGLM's remote-code config, whose keys \(num_layers, "),  # was: no num_hidden_layers
        ('{"model_type": "dbrx", "d_model": 6144, "ffn_config": {"moe_num_experts": 16}}',
         "model_type dbrx: DBRX's config, a mixture of experts whose experts sit in ffn_config"),
        ('{"model_type": "minicpm3", "hidden_size": 2560, "kv_lora_rank": 256, "q_lora_rank": 768}',
         (r"kv_lora_rank: multi-head latent attention \(MiniCPM3's\), whose projections are not the query, key, "
          r"value and output ones rft-solver counts; it reads DeepSeek-V2's and V3's \(model_type deepseek_v2 or "
          r"deepseek_v3\)$")),
        ('{"model_type": "llava", "hidden_size": 4096, "mm_vision_tower": "openai/clip-vit-large-patch14-336"}',
         r"a multimodal config \(mm_vision_tower\)"),  # LLaVA-1.5's own layout, its text model's keys on top
        ('{"model_type": "phi4mm", "hidden_size": 3072, "audio_processor": {"name": "cascades"}}',
         r"a multimodal config \(audio_processor\)"),  # Phi-4-multimodal's audio tower
        (('{"hidden_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 8, "intermediate_size": 2048, '
          '"vocab_size": 1000, "max_position_embeddings": 4096, "tie_word_embeddings": false, '
          '"rope_parameters": "yarn"}'),
         r"rope_parameters: expected an object such as \{\"rope_type\": \"yarn\", \.\.\.\} or null, got 'yarn'$"),
        (('{"hidden_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 8, "intermediate_size": 2048, '
          '"vocab_size": 1000, "model_type": "llama", "rope_parameters": {"rope_type": 3}}'),
         r"rope_parameters: rope_type: expected text such as \"yarn\" or \"llama3\", got 3$"),
        *((('{"hidden_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 8, "intermediate_size": 2048, '
            '"vocab_size": 1000, "model_type": "llama", "rope_scaling": {"rope_type": "yarn", "factor": '
            + factor + "}}"),
           rf"rope_scaling: factor: expected a number of at least 1, got {shown} \(transformers refuses it too\)$")
          for factor, shown in (('"x"', "'x'"), ("0.5", r"0\.5"), ("true", "true"))),
    ],
)
def test_bad_model_configs_are_refused(tmp_path: Path, text: str, message: str):
    path = tmp_path / "config.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TableError, match=message):
        load_model_config(path)


@pytest.mark.parametrize("factor", ["1", "1.0"])
def test_a_rope_scaling_factor_of_exactly_1_is_read(tmp_path: Path, factor: str):
    # transformers refuses a factor below 1; 1 itself it takes (as YaRN from the native context on).
    path = tmp_path / "config.json"
    path.write_text('{"hidden_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 8, '
                    '"intermediate_size": 2048, '
                    '"vocab_size": 1000, "model_type": "llama", "max_position_embeddings": 4096, '
                    '"rope_scaling": {"rope_type": "yarn", "factor": ' + factor + '}}', encoding="utf-8")
    model = load_model_config(path)
    assert (model.name, model.native_context, model.rope_scaling) == (tmp_path.name, 4096, None)


def test_a_rope_scaling_with_a_type_of_its_own_is_not_read_per_layer_type(tmp_path: Path):
    # transformers 5 gives one per layer type (full_attention, ...) without a rope_type beside them; one with a
    # rope_type is that scaling, whatever else it holds.
    path = tmp_path / "config.json"
    path.write_text('{"hidden_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 8, '
                    '"intermediate_size": 2048, '
                    '"vocab_size": 1000, "model_type": "llama", "max_position_embeddings": 4096, "rope_parameters": '
                    '{"rope_type": "linear", "factor": 2.0, "full_attention": {"rope_type": "yarn", "factor": 4.0}}}',
                    encoding="utf-8")
    assert load_model_config(path).rope_scaling == "linear"


def test_bad_catalogue_files_are_refused(tmp_path: Path):
    shutil.copytree(shipped_tables_directory(), tmp_path, dirs_exist_ok=True)
    gpus = tmp_path / "gpus.yaml"
    gpus.write_text(gpus.read_text(encoding="utf-8").replace("memory_gb: 141", "memory_gb: -141"), encoding="utf-8")
    with pytest.raises(TableError, match=r"gpus.yaml: gpu H200-141GB, memory_gb: must be above 0"):
        load_catalog(tmp_path)
    gpus.write_text("gpus:\n  - {name: H100-80GB, memory_gb: 80, memory_mib: 0, source: x}\n", encoding="utf-8")
    with pytest.raises(TableError, match=r"gpus.yaml: gpu H100-80GB, memory_mib: must be above 0"):
        load_catalog(tmp_path)
    gpus.write_text("gpus:\n  - {name: A100-80GB, memory_gb: 40, source: x, interconnect: nvlink, "
                    "interconnect_source: x, compute_capability: '8.0'}\n", encoding="utf-8")
    with pytest.raises(TableError, match=(r"GPU A100-80GB: memory_gb 80 is not the catalogue's 40 for A100-80GB: "
                                          r"write that, or give another card a name of its own$")):
        load_catalog(tmp_path)
    gpus.write_text("gpus:\n  - {name: H100-80GB, memory_gb: 80, source: x, interconnect: nvlink, "
                    "interconnect_source: x, compute_capability: '9.0'}\n", encoding="utf-8")
    with pytest.raises(TableError, match=r"a100-80gb.yaml: GPU A100-80GB is not in gpus.yaml; add it there$"):
        load_catalog(tmp_path)


def test_the_memory_model_works_with_the_memory_the_driver_reports(tmp_path: Path):
    assert all(gpu.memory_mib is not None for gpu in CATALOG.gpu_types)
    h100, l40s = CATALOG.gpu("h100"), CATALOG.gpu("l40s")
    assert (h100.memory_gb, h100.memory_gib) == (80, 81559 / 1024)
    assert (l40s.memory_gb, l40s.memory_gib) == (48, 46068 / 1024)  # ECC GDDR6: 3 GiB less than the name says
    assert h100.model_copy(update={"memory_mib": None}).memory_gib == 80.0  # nominal GB taken as GiB
    cells = shipped_tables_directory() / "feasibility" / "h20-96gb.yaml"
    assert load_gpu_type(cells, CATALOG.models).memory_gib == 96.0  # alone, the file gives only the nominal GB
    assert load_gpu_type(cells, CATALOG.models, CATALOG.gpu_types).memory_gib == 97871 / 1024  # as catalogued
    mine = tmp_path / "h20.yaml"
    mine.write_text(cells.read_text(encoding="utf-8").replace("memory_gb: 96", "memory_gb: 96\nmemory_mib: 98000"),
                    encoding="utf-8")
    with pytest.raises(TableError, match=r"h20.yaml: GPU H20-96GB: memory_mib 98000 is not the catalogue's 97871 for "
                                         r"H20-96GB \(leave it out to take that\)$"):
        load_gpu_type(mine, CATALOG.models, CATALOG.gpu_types)
    assert load_gpu_type(mine, CATALOG.models).memory_gib == 98000 / 1024  # a GPU type of the user's own
    mine.write_text(cells.read_text(encoding="utf-8").replace("memory_gb: 96", "memory_gb: 96\nmemory_mib: 97871"),
                    encoding="utf-8")
    assert load_gpu_type(mine, CATALOG.models, CATALOG.gpu_types).memory_gib == 97871 / 1024  # the catalogue's own
    by_alias = tmp_path / "h100.yaml"  # a GPU type named by its alias is the catalogue's
    by_alias.write_text((Path(__file__).parent.parent / "docs" / "examples" / "my-cells.yaml").read_text(
        encoding="utf-8").replace("gpu: H100-80GB", "gpu: h100"), encoding="utf-8")
    loaded = load_gpu_type(by_alias, CATALOG.models, CATALOG.gpu_types)
    assert (loaded.name, loaded.memory_gib) == ("H100-80GB", 81559 / 1024)


def test_a_plans_memory_figures_are_rounded_once_as_solve_memory_rounds_them(cli):
    # solve memory gives 11.548 GiB to spare: the plan's text says 11.5 (not 11.6, from the JSON's 11.55), so that
    # 61.7 predicted and 11.5 to spare make the 73.2 usable; the JSON keeps two decimals.
    query = ["--model", "Qwen2.5-32B", "--gpu", "h800", "--gpus", "8", "--len", "32768", "--sp", "2"]
    _, out, _ = cli("memory", *query, "--env", "--offload", "--json")
    estimate = json.loads(out)
    assert (estimate["total_gib"], estimate["headroom_gib"], estimate["usable_gib"]) == (61.6629, 11.548, 73.2109)
    _, out, _ = cli(*query, "--exact", "--env", "--offload")
    assert "memory         61.7 GiB per GPU predicted, 11.5 GiB to spare (memory model)\n" in out
    _, out, _ = cli(*query, "--exact", "--env", "--offload", "--json")
    plan = json.loads(out)[0]["plans"][0]
    assert (plan["memory_gb"], plan["headroom_gb"]) == (61.66, 11.55)


def test_cli_memory_needs_one_way_to_name_the_model(cli):
    flags = ["memory", "--gpu", "h100", "--gpus", "8", "--len", "8k"]
    assert cli(*flags) == (2, "", "solve memory: error: which model? give --model M (e.g. 4B) or --model-config PATH\n")
    assert cli(*flags, "--model", "8B", "--model-config", str(FIXTURE)) == (
        2, "", "solve memory: error: --model and --model-config both name the model: give one\n")
    # Cells that name a catalogue model and one of yours are read with yours alone: the refusal says what plans the
    # catalogue's with cells (they refuse its model without that config, whose hint led here), for solve and map too.
    cells = Path(__file__).parent.parent / "docs" / "examples" / "my-cells.yaml"
    cause = ("both name the model: give one (cells that name a model of your own are read with its --model-config, "
             "which then is the model planned: for --model's, give its cells in a file that names no model of yours)\n")
    for command, said in ((flags, "solve memory"), (["--len", "8k"], "solve"), (["map"], "solve map")):
        assert cli(*command, "--model", "8B", "--model-config", str(FIXTURE), "--cells", str(cells)) == (
            2, "", f"{said}: error: --model and --model-config {cause}")


def test_cli_memory_refuses_a_trainer_on_part_of_a_node_past_the_first_naming_the_counts_allowed(cli):
    # Llama-3.1-70B on 12 H100s: Trinity's trainer that spans nodes takes whole ones; the line names the nearest.
    assert cli("memory", "--model", "Llama-3.1-70B", "--gpu", "h100", "--gpus", "12", "--len", "32k", "--sp", "4",
               "--env") == (2, "", ("solve memory: error: --gpus 12 is not allowed: 12 GPUs span nodes of 8 "
                                    "(--node-gpus) but are not whole nodes (the counts allowed: 1 to 8, then whole "
                                    "nodes: 8 and 16 are the nearest)\n"))
    assert cli("memory", "--model", "Llama-3.1-70B", "--gpu", "h100", "--gpus", "12", "--len", "32k", "--sp", "4",
               "--env", "--offload", "--node-gpus", "12")[0] == 0  # nodes of 12: one node


def test_cli_memory_keeps_sp_groups_inside_a_node(cli):
    flags = ["memory", "--model", "8B", "--gpu", "h100", "--gpus", "16", "--len", "128k", "--sp", "16"]
    assert cli(*flags) == (2, "", "solve memory: error: --sp 16 is not allowed: 16 GPUs span nodes of 8 (--node-gpus), "
                                  "and SP=16 does not divide a node: rft-solver's rule, not Trinity's or verl's, which "
                                  "run it with its all-to-all crossing nodes; the tables measured SP within one node "
                                  "(the degrees that divide the 16 trainer GPUs, that Qwen3-8B's heads allow and "
                                  "that keep an SP group in a node of 8 GPUs: 1, 2, 4, 8)\n")
    status, out, _ = cli(*flags, "--node-gpus", "16", "--json")
    assert status == 0 and json.loads(out)["node_gpus"] == 16


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--model", "4B", "--gpus", "4", "--sp", "3"],
         ("--sp 3 is not allowed for Qwen3-4B: SP=3 does not divide its 32 attention heads (the degrees that divide "
          "the 4 trainer GPUs, that Qwen3-4B's heads allow and that keep an SP group in a node of 8 GPUs: 1, 2, 4)")),
        (["--model", "4B", "--gpus", "6", "--sp", "4"],
         ("--sp 4 is not allowed: SP=4 does not divide 6 GPUs (the degrees that divide the 6 trainer GPUs, that "
          "Qwen3-4B's heads allow and that keep an SP group in a node of 8 GPUs: 1, 2)")),
        (["--model", "8B", "--gpus", "16", "--sp", "16"],
         ("--sp 16 is not allowed: 16 GPUs span nodes of 8 (--node-gpus), and SP=16 does not divide a node: "
          "rft-solver's rule, not Trinity's or verl's, which run it with its all-to-all crossing nodes; the tables "
          "measured SP within one node (the degrees that divide the 16 trainer GPUs, that Qwen3-8B's heads allow and "
          "that keep an SP group in a "
          "node of 8 GPUs: 1, 2, 4, 8)")),
    ],
)
def test_cli_memory_refuses_an_sp_degree_naming_the_degrees_allowed(cli, flags: list[str], message: str):
    # As the planner's --sp refusals do: the user learns which degree to give instead.
    assert cli("memory", "--gpu", "h100", "--len", "32k", *flags) == (2, "", f"solve memory: error: {message}\n")


@pytest.mark.parametrize("sp", ["3", "6", "16", "64"])
def test_solve_memory_and_an_exact_plan_refuse_an_sp_degree_in_the_same_words(cli, sp: str):
    # Qwen3-32B on 32 H100s: heads, a node of 8 and the count refuse these alike in both commands.
    flags = ["--model", "32B", "--gpu", "h100", "--gpus", "32", "--len", "64k", "--sp", sp]
    memory_status, _, memory_error = cli("memory", *flags)
    plan_status, _, plan_error = cli(*flags, "--exact")
    assert memory_status == plan_status == 2
    assert memory_error.startswith(f"solve memory: error: --sp {sp} is not allowed")
    assert "(the degrees that divide the 32 trainer GPUs, that Qwen3-32B's heads allow" in memory_error
    assert memory_error.removeprefix("solve memory: ") == plan_error.removeprefix("solve: ")


def test_cli_memory_help_names_the_forms_of_a_model_and_a_length_as_the_planners_does(cli, monkeypatch):
    # The two commands take the same forms (4B, qwen3-4b; 32k): their --help says so alike (a line each, unwrapped).
    monkeypatch.setenv("COLUMNS", "200")
    def lines(*argv: str) -> list[str]:
        return [line.split("  ")[-1].strip() for line in cli(*argv, "--help")[1].splitlines()
                if line.lstrip().startswith(("--model M", "--len L"))]

    assert lines("memory") == ["model: Qwen3-4B, 4B, qwen3-4b, ... (or --model-config)",
                               "max_model_len in tokens (32768 or 32k)"]
    assert lines()[1] == lines("memory")[1] and lines()[0].startswith("model: Qwen3-4B, 4B, qwen3-4b, ... (default: ")


def test_cli_memory_takes_the_planners_no_env_and_no_offload_spellings(cli):
    # A command copied from solve's --no-env --no-offload means what it says here too: without them (the default).
    flags = ["memory", "--model", "4B", "--gpu", "a100", "--gpus", "2", "--len", "32k", "--sp", "2", "--json"]
    status, out, err = cli(*flags, "--no-env", "--no-offload")
    assert (status, out, err) == cli(*flags) and status == 1
    assert (json.loads(out)["env"], json.loads(out)["offload"]) == (False, False)
    assert cli(*flags, "--env", "--no-env") == (2, "", ("usage: solve memory [options] (--help lists them)\n"
                                                        "solve memory: error: --env and --no-env contradict each "
                                                        "other: give one of them\n"))


@pytest.mark.parametrize(("flag", "most", "why"), [
    ("--gpus", 65536, ""), ("--sp", 65536, ""),
    ("--node-gpus", 16, (" (a node is one host, Trinity's cluster.gpu_per_node, and the largest hosts have 16 GPUs: "
                         "give more GPUs as more nodes)"))])
def test_cli_memory_refuses_a_count_past_its_bound_naming_both(cli, flag: str, most: int, why: str):
    # --node-gpus stops where a cluster pool's gpus_per_node does: one host.
    flags = {"--gpus": "8", "--sp": "1", "--node-gpus": "8", flag: str(most + 1)}
    assert cli("memory", "--model", "4B", "--gpu", "h100", "--len", "8k", *[t for f in flags.items() for t in f]) == (
        2, "", ("usage: solve memory [options] (--help lists them)\nsolve memory: error: "
                f"argument {flag}: must be a whole number from 1 to {most}, got {most + 1}{why}\n"))


def test_cli_memory_breakdown_and_exit_codes(cli):
    status, out, err = cli("memory", "--model", "4B", "--gpu", "a100-80g", "--gpus", "4", "--len", "102400", "--sp",
                           "4",
                           "--env", "--offload")
    assert (status, err) == (0, "")
    # The breakdown adds up by hand: its terms make the total, and what is to spare is the usable less the total.
    rows = re.findall(r"^│ ([a-z ]+?) +│ +([\d.]+) │$", out, re.MULTILINE)
    gib = {name.strip(): float(value) for name, value in rows}
    total, usable = gib.pop("total"), gib.pop("usable")
    assert list(gib) == ["states", "gathered", "checkpoints", "logits", "recompute", "sp buffers", "fragmentation",
                         "overhead"] and abs(sum(gib.values()) - total) <= 0.005 * len(gib)
    spare = float(re.search(r"^fits \(estimated\): ([\d.]+) GiB to spare of the usable memory ", out, re.MULTILINE)[1])
    assert abs(spare - (usable - total)) <= 0.01
    # ceil(2 x 102400 / 4) = 51200 tokens per GPU; the setting as asked, its SP degree too.
    assert " ".join(out.split()).startswith("Qwen3-4B (4.0B parameters) on 4 x A100-80GB (80.0 GiB), Env + Offload + "
                                            "SP=4, 102400 tokens (51200 per GPU), margin 0.01 ")
    status, out, _ = cli("memory", "--model", "14B", "--gpu", "4090", "--gpus", "1", "--len", "32k", "--json")
    result = json.loads(out)
    assert status == 1 and result["fits"] is False and result["headroom_gib"] < 0
    assert result["memory_gib"] == round(24564 / 1024, 4)
    # A 24 GiB card's default margin: 0.01 + 1 GiB of 23.99 x 0.9 = 21.59 usable (0.0463), rounded up: 0.06.
    assert {k: result[k] for k in ("model", "gpu", "gpus", "max_model_len", "sp", "env", "offload", "margin")} == {
        "model": "Qwen3-14B", "gpu": "RTX-4090-24GB", "gpus": 1, "max_model_len": 32768, "sp": 1, "env": False,
        "offload": False, "margin": 0.06}
    status, out, err = cli("memory", "--model", "4B", "--gpu", "a100-80g", "--gpus", "6", "--len", "8192", "--sp", "4")
    assert status == 2 and err.startswith("solve memory: error: --sp 4 is not allowed: SP=4 does not divide 6 GPUs (")
    status, out, err = cli("memory", "--model", "4B", "--gpu", "a100-80g", "--gpus", "4", "--len", str(1 << 30))
    assert (status, out, err) == (2, "", ("usage: solve memory [options] (--help lists them)\nsolve memory: error: "
                                          "argument --len: must be a whole number of tokens from 1 to 16777216, got "
                                          "1073741824\n"))
    # A length within the cap whose default token budget (2 x L / SP) is past it: the flags that set it are named.
    status, out, err = cli("memory", "--model", "0.6B", "--gpu", "a100-80g", "--gpus", "1", "--len", "9000000")
    assert (status, out, err) == (2, "", ("solve memory: error: --len 9000000 with --sp 1 makes Trinity's default "
                                          "token budget, ceil(2 x 9000000 / 1) = 18000000, more than 16777216 tokens "
                                          "per GPU: raise --sp, or give --token-budget\n"))
    status, out, err = cli("memory", "--model-config", str(FIXTURE), "--gpu", "h100", "--gpus", "8", "--len", "65536",
                           "--sp", "2")
    assert (status, err) == (1, "") and " ".join(out.split()).startswith(
        "Qwen2.5-7B-Instruct (7.6B parameters) on 8 x H100-80GB (79.6 GiB), SP=2, 65536 tokens (65536 per GPU), "
        "margin 0.01 ")
    assert "\ndoes not fit (estimated): " in out


def test_cli_memory_json_gives_the_token_budget_and_the_memory_model_as_asked(cli):
    flags = ("memory", "--model", "4B", "--gpu", "a100", "--gpus", "4", "--len", "32k", "--json")
    result = json.loads(cli(*flags)[1])  # Trinity's default budget, 2 x 32768 tokens per GPU at SP=1
    assert (result["max_token_len_per_gpu"], result["memory_model"], result["tokens_per_gpu"]) == (None, None, 65536)
    shipped = shipped_tables_directory() / "memory-model.yaml"
    result = json.loads(cli(*flags, "--token-budget", "40000", "--memory-model", str(shipped))[1])
    assert (result["max_token_len_per_gpu"], result["memory_model"], result["tokens_per_gpu"]) == (
        40000, str(shipped), 40000)

@pytest.mark.parametrize(("model", "gpu", "gpus", "sp", "env", "offload"), [
    ("8B", "h100", 8, 4, True, False), ("4B", "a100", 4, 4, True, True), ("0.6B", "h20", 1, 1, False, False)])
def test_estimate_memory_gives_the_longest_length_that_fits(model, gpu, gpus, sp, env, offload):
    setting = {"sp": sp, "env": env, "offload": offload}
    longest = solver.estimate_memory(model, gpu, gpus, 4096, **setting).longest_len
    assert longest is not None and longest % 1024 == 0
    assert solver.estimate_memory(model, gpu, gpus, longest, **setting).fits
    assert not solver.estimate_memory(model, gpu, gpus, longest + 1024, **setting).fits
    assert solver.estimate_memory(model, gpu, gpus, 10 * longest, **setting).longest_len == longest


def test_cli_memory_says_the_longest_length_that_fits(cli):
    status, out, _ = cli("memory", "--model", "8B", "--gpu", "h100", "--gpus", "8", "--len", "131072", "--sp", "4",
                         "--env")
    longest = solver.estimate_memory("8B", "h100", 8, 131072, sp=4, env=True).longest_len
    assert status == 1 and f"longest length the memory model fits with this setting: {longest} tokens" in out
    status, out, _ = cli("memory", "--model", "32B", "--gpu", "4090", "--gpus", "1", "--len", "4096")
    assert status == 1 and "no length fits with this setting, by the memory model" in out
    _, out, _ = cli("memory", "--model", "32B", "--gpu", "4090", "--gpus", "1", "--len", "4096", "--json")
    assert json.loads(out)["longest_len"] is None


def test_cli_memory_says_its_verdict_is_estimated_and_its_json_what_the_verdict_rests_on(cli):
    # s90 (persona): the verdict line is the memory model's estimate and says so, as a plan's evidence row does;
    # where a cell speaks, the tables line still says what it says (and decides), and --json's evidence is the cell's:
    # inferred here (the 6-GPU table's cell), estimated where no table speaks (the A10 has none).
    flags = ("memory", "--model", "8B", "--gpu", "A100-80GB", "--gpus", "8", "--len", "32k", "--sp", "2", "--env")
    status, out, _ = cli(*flags)
    lines = " ".join(out.split()).split(" tables: ")
    assert status == 0 and "\nfits (estimated): 9.10 GiB to spare of the usable memory" in out
    assert lines[1] == "it trains (inferred: the A100-80GB table for 6 GPUs says 'Env + SP=2' at 32768)"
    assert json.loads(cli(*flags, "--json")[1])["evidence"] == "inferred"
    status, out, _ = cli("memory", "--model", "32B", "--gpu", "a10", "--gpus", "2", "--len", "32k", "--json")
    result = json.loads(out)
    assert (status, result["tables"], result["fits"], result["evidence"]) == (1, None, False, "estimated")


def test_cli_memory_json_says_which_peak_the_headroom_is_at(cli):
    # step_binds: the optimizer step has the less room (headroom_gib is its room), as a plan's headroom_at_step.
    status, out, _ = cli("memory", "--model", "14B", "--gpu", "a100", "--gpus", "2", "--len", "4096", "--json")
    result = json.loads(out)
    assert (status, result["step_binds"], result["headroom_gib"]) == (
        1, True, round(result["step_usable_gib"] - result["step_gib"], 4)) and result["headroom_gib"] < 0
    assert list(result)[-6:] == ["fits", "headroom_gib", "step_binds", "host_fits", "trains", "evidence"]
    # a cell says it runs out of memory, the 2-GPU table's 'Env + Offload' at 4096: documented
    assert result["tables"]["trains"] is False and result["evidence"] == "documented"
    status, out, _ = cli("memory", "--model", "8B", "--gpu", "a100", "--gpus", "4", "--len", "32k", "--sp", "4",
                         "--json")
    result = json.loads(out)
    assert (status, result["step_binds"], result["headroom_gib"], result["evidence"]) == (
        0, False, 10.215, "documented")
    [answer] = json.loads(cli("--model", "8B", "--gpu", "a100", "--gpus", "4", "--len", "32k", "--exact", "--json")[1])
    assert (answer["plans"][0]["sp"], answer["plans"][0]["headroom_at_step"]) == (4, False)


def test_the_longest_length_asked_about_is_said_to_be_at_least_that(cli):
    # 64 GPUs of 512 GB on nodes of 16 with SP=16 fit more of Qwen3-0.6B than the 2097152 tokens the memory model is
    # asked about.
    flags = ("--model", "0.6B", "--gpu", "big", "--gpu-memory", "512", "--gpus", "64", "--node-gpus", "16")
    status, out, _ = cli("memory", *flags, "--sp", "16", "--env", "--len", "4000000")
    assert status == 1 and ("longest length the memory model fits with this setting: at least 2097152 tokens (on a "
                            "1024-token grid; 2097152 tokens is the longest length the memory model is asked about; "
                            "more may fit)") in " ".join(out.split())
    status, out, _ = cli(*flags, "--maximize", "len")
    assert status == 0 and ("(at least: 2097152 tokens is the longest length the memory model is asked about; more may "
                            "fit)") in " ".join(out.split())
    status, out, _ = cli("memory", *flags, "--sp", "16", "--env", "--len", "4000000", "--json")
    assert json.loads(out)["longest_len"] == 2097152


def test_a_lowered_token_budget_reaches_no_further_than_the_longest_length_asked_about(cli):
    # With --token-budget auto a lowered budget reaches twice an estimate's longest length at Trinity's default; where
    # that passes the 2097152 tokens the memory model is asked about, the plan stops there (SP=16's default reaches
    # 1123328 tokens, lowered to 140288 tokens per GPU it reaches 2097152), not at twice 1123328.
    [answer] = json.loads(cli("--model", "0.6B", "--gpu", "b200", "--gpus", "64", "--node-gpus", "16", "--maximize",
                              "len", "--token-budget", "auto", "--json")[1])
    best = answer["plans"][0]
    assert (best["max_model_len"], best["gpus"], best["sp"], best["env"], best["offload"]) == (
        2097152, 64, 16, True, False)
    assert (best["max_token_len_per_gpu"], best["lowered_budget"], best["evidence"]) == (140288, True, "estimated")


def test_cli_calibrate_out_that_cannot_be_written_names_out(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # The disk fills as the model is written: one line naming the option, exit 74 (a full disk, which a pipeline may
    # retry, not bad input's 2), the file left as it was.
    target = tmp_path / "mine.yaml"
    target.write_text("old\n", encoding="utf-8")

    def full(descriptor: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(solver.cli.atomic.os, "fsync", full)
    assert cli("calibrate", "--out", str(target)) == (
        74, "", f"solve calibrate: error: --out {target}: cannot write: No space left on device\n")
    assert [(path.name, path.read_text(encoding="utf-8")) for path in tmp_path.iterdir()] == [("mine.yaml", "old\n")]


def test_cli_planner_with_a_model_config_and_estimate_flags(cli):
    status, out, err = cli("--model-config", str(FIXTURE), "--gpu", "h20", "--gpus", "6", "--len", "65536", "--json")
    (answer,) = json.loads(out)
    assert (status, err) == (0, "") and answer["model"] == "Qwen2.5-7B-Instruct"  # the catalogue model of that name and shape
    assert answer["plans"][0]["evidence"] == "estimated" and answer["plans"][0]["source"] is None
    # Without estimates, 8 A100s get what the tables for fewer GPUs vouch for, and no more.
    status, out, _ = cli("--model", "4B", "--gpu", "a100", "--gpus", "8", "--exact", "--len", "8192", "--no-estimate")
    assert status == 0 and "inferred: the A100-80GB table for 6 GPUs says 'vanilla' at 8192" in " ".join(out.split())
    status, out, _ = cli("--model", "4B", "--gpu", "a100", "--gpus", "8", "--exact", "--len", "128k", "--no-estimate")
    assert status == 1 and ("131072 tokens is beyond what the tables allow for Qwen3-4B on A100-80GB on exactly 8 "
                            "GPUs: the longest is 102400") in " ".join(out.split())
    status, _, err = cli("--model", "4B", "--len", "8192", "--estimate", "--no-estimate")
    assert status == 2 and "--estimate and --no-estimate contradict each other: give one of them" in err
    status, _, err = cli("--model", "4B", "--len", "8192", "--margin", "1.50")
    assert status == 2 and err.splitlines()[-1] == ("solve: error: argument --margin: must be a fraction from 0 to "
                                                    "below 1, got 1.50 (as a percentage, 1.5% is 0.015)")


def test_cli_calibrate_prints_a_memory_model_file(cli, tmp_path: Path):
    status, out, err = cli("calibrate")
    assert (status, err) == (0, "")
    assert MemoryModel.model_validate(yaml.safe_load(out)) == load_memory_model()
    target = tmp_path / "mine.yaml"
    cells = shipped_tables_directory() / "feasibility" / "h20-96gb.yaml"
    status, out, _ = cli("calibrate", "--cells", str(cells), "--out", str(target))
    assert status == 0 and out.startswith(f"wrote {target}: ")
    assert load_memory_model(target).source == "calibrated on h20-96gb.yaml"
    (answer,) = solver.plan("8B", gpu="h200", budget_gpus=4, max_model_len=32768, memory=load_memory_model(target))
    assert answer.plans[0].beyond_calibration == ("140 GiB GPUs (calibrated on 96 GiB)",)  # one GPU type's memory
    example = Path(__file__).parent.parent / "docs" / "examples" / "my-cells.yaml"  # the format memory.md shows
    status, out, err = cli("calibrate", "--cells", str(example), "--out", str(target))
    # 6 cells on 8 GPUs: 6 positive observations and 33 negative ones (the settings before each in the order);
    # the example's cells are what the shipped model predicts, so a fit on them alone gets all of them right
    fit = load_memory_model(target).fit
    assert (status, err) == (0, "") and (fit.observations, fit.wrong_fits, fit.wrong_failures) == (39, 0, 0)
    assert fit.range is not None and fit.range.largest_sp == 8
    # Nothing in them needs Env to free memory beyond the 90% without it, so the fit gives it none (it was free to
    # take 0.98 of an H100: a plan then filled 97% of it)
    assert load_memory_model(target).coefficients.usable_env == 0.9
    # one cell, Env: vanilla failed, Env trained; nothing pins usable_env below 1, and with the per-token terms
    # held to their physical floor the fit makes room by the states
    one = tmp_path / "one.yaml"
    one.write_text("gpu: H100-80GB\nmemory_gb: 80\nsource: mine\ntables:\n  - gpus: 8\n    section: '8 x H100'\n"
                   "    models: [Qwen3-8B]\n    rows:\n      - {max_model_len: 65536, cells: {Qwen3-8B: Env}}\n",
                   encoding="utf-8")
    status, out, err = cli("calibrate", "--cells", str(one), "--out", str(target))
    assert err == ("solve calibrate: warning: states 0.5, usable_env 1 ended at the edge of the plausible range: 2 "
                   "observations do not pin the model down; add cells, or --with-tables to fit with the documented ones "
                   "too\n"  # and even there the cell is out of reach: 131072 tokens per GPU without SP
                   # below 16 bytes per parameter, and no layer gathered: not physical either
                   "solve calibrate: warning: states 0.5 is below its physical range, 1 to 1.25: 16 to 20 bytes per "
                   "parameter, from mixed-precision Adam's fp32 master weights and two moments with bf16 weights and "
                   "gradients (ZeRO's count) to fp32 gradients and bf16 copies of both besides; gathered 0 is below "
                   "its physical range, at least 0.4: 4 of its 10 bytes per layer parameter, the bf16 weights and "
                   "gradients of the layer that FSDP computes; likely too few cells to pin the model down (2 "
                   "observations; add cells, or fit with the documented ones too: --with-tables), or cells measured "
                   "with another framework or precision than verl's FSDP with bf16 and Adam: estimates from this fit "
                   "may not hold\n"
                   "solve calibrate: warning: the fit predicts your only cell the other way: Qwen3-8B on 8 x H100-80GB "
                   "at 65536, cell 'Env': Env trained there, predicted 175.5 GiB of 79.6 usable (usable: before any "
                   f"safety margin; solve memory --memory-model {target} breaks each down); check it for typos\n")
    # Env + Offload trained where every SP degree before it ran out of memory: the range's SP degree is 1, a
    # failure at SP=8 says nothing of where a prediction to fit holds.
    one.write_text(one.read_text(encoding="utf-8").replace("Qwen3-8B: Env}", "Qwen3-8B: Env + Offload}"), encoding="utf-8")
    assert cli("calibrate", "--cells", str(one), "--out", str(target))[0] == 0
    fit = load_memory_model(target).fit
    assert fit.range is not None and (fit.negatives, fit.range.largest_sp) == (8, 1)
    status, out, err = cli("calibrate", "--cells", str(example), "--with-tables", "--out", str(target))
    assert (status, err) == (0, "") and load_memory_model(target).fit.observations == 39 + 2134
    assert load_memory_model(target).source == "calibrated on my-cells.yaml and the documented tables"
    assert cli("calibrate", "--with-tables") == (
        2, "", "solve calibrate: error: --with-tables adds the shipped tables to the cells of --cells FILE\n")


def test_host_ram_rules_out_offload_plans_whose_states_do_not_fit():
    # Qwen3-14B on 1 A100 at 8192 needs Env + Offload (documented); its offloaded states take 351.6 GiB of host
    # memory on that node (the actor's states and the reference model's fp32 weights, pinned blocks rounded up to
    # powers of two: `test_host_memory_by_hand`).
    (answer,) = plan(make_query(CATALOG, model="14B", gpu="a100", max_model_len=8192, budget_gpus=1), CATALOG)
    assert answer.plans[0].setting.label == "Env + Offload"
    (answer,) = plan(make_query(CATALOG, model="14B", gpu="a100", max_model_len=8192, budget_gpus=1, host_ram_gb=200),
                     CATALOG)
    assert answer.plans == () and answer.reason == (
        "nothing in the tables and the memory model's estimates for Qwen3-14B on A100-80GB within 1 GPU trains "
        "with --host-ram 200 GiB; without --host-ram, Env + Offload on 1 GPU trains it (8192 tokens; one trainer GPU: "
        "Trinity-RFT's guide strongly advises more GPUs), and with Offload it needs 351.6 GiB of host memory per node")
    (answer,) = plan(make_query(CATALOG, model="14B", gpu="a100", max_model_len=8192, budget_gpus=1, host_ram_gb=512),
                     CATALOG)
    assert answer.plans[0].setting.label == "Env + Offload"


def test_a_memory_model_may_take_all_of_a_gpus_memory_as_usable(tmp_path: Path):
    path = tmp_path / "mine.yaml"
    path.write_text((shipped_tables_directory() / "memory-model.yaml").read_text(encoding="utf-8").replace(
        "usable: 0.9", "usable: 1.0").replace("usable_env: 0.928472", "usable_env: 1.0"), encoding="utf-8")
    coefficients = load_memory_model(path).coefficients
    assert (coefficients.usable, coefficients.usable_env) == (1.0, 1.0)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("  logits: ", "  logits: .inf  # "), "coefficients, logits: must be a finite number, got .inf"),
        (("  states: ", "  states: -1  # "), "coefficients, states: must be at least 0, got -1"),
        (("  states: ", "  states: many  # "), "coefficients, states: must be a number, got 'many'"),
        # Quoted, a number is text, as in every other file of numbers (and as margin's was already).
        (("  states: ", "  states: '1.5'  # "),
         "coefficients, states: must be a number, got '1.5' (quoted, YAML reads it as text: write it without quotes)"),
        (("  usable: ", "  usable: \"0.9\"  # "),
         "coefficients, usable: must be a number, got '0.9' (quoted, YAML reads it as text: write it without quotes)"),
        (("  usable_env: ", "  usable_env: '1'  # "), ("coefficients, usable_env: must be a number, got '1' (quoted, "
                                                       "YAML reads it as text: write it without quotes)")),
        (("margin: 0.01", "margin: '0.01'"),
         "margin: must be a number, got '0.01' (quoted, YAML reads it as text: write it without quotes)"),
        (("  usable: ", "  usable: true  # "), "coefficients, usable: must be a number, got true"),
        (("margin: 0.01", "margin: 1.0"), "margin: must be below 1, got 1.0"),  # no room left to fit in
        (("  usable_env: ", "  usable_env: 0.5  # "),
         "coefficients: usable_env (0.5) is below usable (0.9): Env would make plans stop fitting"),
        (("least_memory_gib: 80.0", "least_memory_gib: .nan"),
         "fit, range, least_memory_gib: must be a finite number, got .nan"),
        (("least_memory_gib: 80.0", "least_memory_gib: 500.0"),
         "fit, range: least_memory_gib (500) is above most_memory_gib (95.5771)"),
        # The range's true-or-false fields are flags, as every other: quoted, a YAML boolean is text.
        (("mixture_of_experts: false", "mixture_of_experts: 'false'"), (
            "fit, range, mixture_of_experts: must be true or false, got 'false' (quoted, YAML reads it as text: write "
            "it without quotes)")),
        (("fit_without_sp: true", "fit_without_sp: \"yes\""), (
            "fit, range, fit_without_sp: must be true or false, got 'yes' (quoted, YAML reads it as text: write it "
            "without quotes)")),
    ],
)
def test_a_bad_memory_model_file_exits_2_with_one_line(cli, tmp_path: Path, change: tuple[str, str], message: str):
    path = tmp_path / "mine.yaml"
    path.write_text((shipped_tables_directory() / "memory-model.yaml").read_text(encoding="utf-8").replace(*change),
                    encoding="utf-8")
    status, out, err = cli("memory", "--model", "8B", "--gpu", "h100", "--gpus", "8", "--len", "8k",
                           "--memory-model", str(path))
    assert (status, out) == (2, "") and err == f"solve memory: error: --memory-model {path}: {message}\n"


def test_a_cells_file_with_an_impossible_length_is_refused_naming_the_row(tmp_path: Path):
    path = tmp_path / "cells.yaml"
    path.write_text((Path(__file__).parent.parent / "docs" / "examples" / "my-cells.yaml").read_text(encoding="utf-8")
                    .replace("max_model_len: 131072", "max_model_len: 100000000000000000000000"), encoding="utf-8")
    with pytest.raises(TableError, match=r"cells.yaml: table gpus=8, row max_model_len=100000000000000000000000, "
                                         r"max_model_len: must be at most 16777216"):
        load_gpu_type(path, CATALOG.models)


def test_a_checkpoint_of_a_tabled_models_shape_is_planned_from_that_models_cells(cli, tmp_path: Path):
    # A fine-tuned Qwen3-8B in a folder of its own name: the Qwen3-8B cells stand for it, and say so.
    folder = qwen3_8b_checkpoint(tmp_path / "my-sft")
    status, out, err = cli("--model-config", str(folder), "--gpu", "a100-80g", "--gpus", "4", "--len", "32k")
    assert (status, err) == (0, "") and out.startswith("A100-80GB · my-sft · cheapest plan for 32768 tokens")
    assert ("evidence documented: the A100-80GB table for 4 GPUs says 'SP=4' at 32768 for Qwen3-8B, of the same "
            "shape") in " ".join(out.split())
    flags = ["memory", "--model-config", str(folder), "--gpu", "a100-80g", "--gpus", "4", "--len", "24k", "--sp", "2"]
    status, out, _ = cli(*flags)
    assert status == 1 and ("tables: it runs out of memory (the A100-80GB table for 4 GPUs says 'Env + SP=2' at 24576 "
                            "for Qwen3-8B, of the same shape:") in " ".join(out.split())
    assert json.loads(cli(*flags, "--json")[1])["tables"]["source"] == {
        "model": "Qwen3-8B", "gpus": 4, "max_model_len": 24576, "setting": "Env + SP=2"}


def test_a_checkpoint_of_a_tabled_models_shape_has_that_models_memory(cli, tmp_path: Path):
    # One shape, one memory: the checkpoint's config.json counts 8.1907B parameters, the catalogue's Qwen3-8B (with
    # which the memory model was calibrated) 8.191B; the checkpoint takes the catalogue's, as Qwen3-8B-Base does.
    folder = qwen3_8b_checkpoint(tmp_path / "my-sft")
    flags = ["--gpu", "mi300x", "--gpus", "1", "--len", "17408", "--env", "--json"]
    checkpoint = json.loads(cli("memory", "--model-config", str(folder), *flags)[1])
    catalogued = json.loads(cli("memory", "--model", "8B", *flags)[1])
    assert (checkpoint["model"], checkpoint["terms"]["states"], checkpoint["total_gib"]) == (
        "my-sft", catalogued["terms"]["states"], catalogued["total_gib"]) == ("my-sft", 125.596, 175.3956)
    planned = [json.loads(cli(*named, "--gpu", "a100", "--gpus", "7", "--len", "4096", "--top", "3", "--json")[1])[0]
               for named in (["--model-config", str(folder)], ["--model", "8B"])]
    checkpoint, catalogued = ([plan["memory_gb"] for plan in answer["plans"]] for answer in planned)
    assert checkpoint == catalogued == [34.49, 37.48, 41.67]


@pytest.mark.parametrize("model", ["8B-Base", "my-sft"])
def test_cells_of_a_models_own_name_are_its_tables_where_they_are(cli, tmp_path: Path, model: str):
    # Cells measured for the base model, or the checkpoint, on 8 H100s decide there; on the A100 the
    # Qwen3-8B cells still stand in for it.
    example = Path(__file__).parent.parent / "docs" / "examples" / "my-cells.yaml"
    name = "Qwen3-8B-Base" if model == "8B-Base" else model
    cells = tmp_path / "cells.yaml"
    cells.write_text(example.read_text(encoding="utf-8").replace("Qwen3-8B", name), encoding="utf-8")
    named = ["--model", model] if model == "8B-Base" else ["--model-config", str(qwen3_8b_checkpoint(tmp_path / model))]
    status, out, _ = cli(*named, "--cells", str(cells), "--gpu", "h100", "--gpus", "8", "--len", "64k", "--json")
    [best] = json.loads(out)[0]["plans"]
    mine = {"table_source": "my measurements, 2026-11"}  # each cell of these is cited with their source
    assert status == 0 and (best["sp"], best["env"], best["evidence"], best["source"]) == (
        4, False, "documented", {"model": name, "gpus": 8, "max_model_len": 65536, "setting": "SP=4", **mine})
    status, out, _ = cli(*named, "--cells", str(cells), "--gpu", "a100", "--gpus", "4", "--len", "32k", "--json")
    [best] = json.loads(out)[0]["plans"]
    assert status == 0 and (best["evidence"], best["source"]["model"]) == ("documented", "Qwen3-8B")
    # Cells of its own for 8 A100s join the A100's tables: the shipped Qwen3-8B cells still stand in for it
    # on 4 GPUs (at 102400, Env + Offload + SP=4), its own decide on 8.
    cells.write_text(example.read_text(encoding="utf-8").replace("Qwen3-8B", name).replace(
        "gpu: H100-80GB", "gpu: A100-80GB"), encoding="utf-8")
    for gpus, length, source in ((4, "100k", {"model": "Qwen3-8B", "gpus": 4, "max_model_len": 102400,
                                              "setting": "Env + Offload + SP=4"}),
                                 (8, "64k", {"model": name, "gpus": 8, "max_model_len": 65536, "setting": "SP=4",
                                             **mine})):
        status, out, _ = cli(*named, "--cells", str(cells), "--gpu", "a100", "--gpus", str(gpus), "--exact", "--len",
                             length, "--json")
        assert status == 0 and json.loads(out)[0]["plans"][0]["source"] == source


def test_cells_of_an_untabled_release_stand_for_its_variants_and_checkpoints_in_any_order(cli, tmp_path: Path):
    # Cells for Qwen3-8B only on 8 H800s (tests/data/cells/h800.yaml): the 8B base model and a checkpoint of
    # its shape under another name take them, whether the catalogue got the checkpoint before or after them.
    cells = Path(__file__).parent / "data" / "cells" / "h800.yaml"
    sft = qwen3_8b_checkpoint(tmp_path / "my-sft")
    for named in (["--model", "8B-Base"], ["--model-config", str(sft)]):
        status, out, _ = cli(*named, "--cells", str(cells), "--gpu", "h800", "--gpus", "8", "--len", "64k",
                             "--no-estimate", "--json")
        [best] = json.loads(out)[0]["plans"]
        assert status == 0 and best["source"] == {"model": "Qwen3-8B", "gpus": 8, "max_model_len": 65536,
                                                  "setting": "SP=4", "table_source": (
                                                      "made-up measurements for the tests: 8 x H800, Qwen3-8B and "
                                                      "Qwen3-14B")}
    checkpoint = load_model_config(sft)
    assert CATALOG.with_cells(cells).with_model(checkpoint) == CATALOG.with_model(checkpoint).with_cells(cells)
    assert CATALOG.with_model(checkpoint).model("my-sft").tables_of == "Qwen3-8B"
    # A MoE variant names its release too, whose cells you may measure.
    moe = cells.read_text(encoding="utf-8").replace("8B", "30B-A3B").replace("14B", "32B")
    (tmp_path / "moe.yaml").write_text(moe, encoding="utf-8")
    status, out, _ = cli("--model", "30B-A3B-Instruct-2507", "--cells", str(tmp_path / "moe.yaml"), "--gpu", "h800",
                         "--gpus", "8", "--len", "64k", "--no-estimate", "--json")
    assert status == 0 and json.loads(out)[0]["plans"][0]["source"]["model"] == "Qwen3-30B-A3B"


def test_a_model_config_gives_its_own_rope_scaling_and_its_name(tmp_path: Path):
    config = json.loads(FIXTURE.read_text(encoding="utf-8"))
    del config["_name_or_path"]
    config["rope_scaling"] = {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192,
                              "low_freq_factor": 1.0, "high_freq_factor": 4.0}
    path = tmp_path / "my-llama.json"  # not a config.json in a model folder: the file names the model
    path.write_text(json.dumps(config), encoding="utf-8")
    model = load_model_config(path)
    assert (model.name, model.rope_scaling, model.yarn_factor(65536)) == ("my-llama", "llama3", None)
    assert load_model_config(FIXTURE).rope_scaling is None and load_model_config(FIXTURE).yarn_factor(65536) == 2.0


@pytest.mark.parametrize(("extra", "qwen"), [
    ({}, True),  # the fixture gives no model_type: its architectures, Qwen2ForCausalLM, say it is Qwen's
    ({"model_type": "qwen3"}, True),
    ({"model_type": "mistral", "architectures": ["MistralForCausalLM"]}, False),
    ({"model_type": "llama"}, False),  # the model_type decides where it is given
])
def test_yarn_is_validated_for_qwen_models_only(cli, tmp_path: Path, extra: dict, qwen: bool):
    # Qwen's model cards validate YaRN up to a factor of 4 for Qwen models; for others nothing is known, so
    # any YaRN is cautioned, and the cluster keeps their lengths to the native context where it may.
    path = tmp_path / "my-model" / "config.json"  # not named as a catalogue model, whose own it would take
    path.parent.mkdir()
    config = {**json.loads(FIXTURE.read_text(encoding="utf-8")), **extra}
    del config["_name_or_path"]
    path.write_text(json.dumps(config), encoding="utf-8")
    model = load_model_config(path)
    assert (model.qwen_yarn, model.yarn_beyond_validated(65536), model.yarn_beyond_validated(32768)) == (
        qwen, not qwen, False)
    assert validated_length(model) == (131072 if qwen else 32768)
    status, out, _ = cli("--model-config", str(path), "--gpu", "h100", "--gpus", "8", "--len", "65536", "--json")
    [answer] = json.loads(out)
    assert (status, answer["plans"][0]["rope_scaling_factor"], answer["plans"][0]["yarn_beyond_validated"]) == (
        0, 2.0, not qwen)
    _, out, _ = cli("--model-config", str(path), "--gpu", "h100", "--gpus", "8", "--len", "65536")
    assert ("(YaRN rope scaling, factor 2.0)" if qwen else (
        "(YaRN rope scaling, factor 2.0; rft-solver knows of no validation of YaRN on a model that is not Qwen's)"
        )) in " ".join(out.split())
    _, out, _ = cli("--model-config", str(path), "--gpu", "h100", "--gpus", "8", "--len", "65536", "--emit", "trinity")
    assert ("    factor: 2.0  # max_model_len / 32768\n" if qwen else
            "    # max_model_len / 32768; YaRN on a model that is not Qwen's, for which rft-solver knows of no\n"
            "    # validation\n    factor: 2.0\n") in out


def test_the_known_length_is_the_native_one_with_a_scaling_of_its_own_and_at_most_131072_by_yarn(tmp_path: Path):
    # Qwen's cards validate their YaRN over the native context; a config with another scaling (llama3) gets none.
    path = tmp_path / "my-model" / "config.json"
    path.parent.mkdir()
    config = {**json.loads(FIXTURE.read_text(encoding="utf-8")), "model_type": "qwen3", "rope_scaling": {
        "rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192, "low_freq_factor": 1.0,
        "high_freq_factor": 4.0}}
    del config["_name_or_path"]
    path.write_text(json.dumps(config), encoding="utf-8")
    model = load_model_config(path)
    assert (model.qwen_yarn, model.rope_scaling, validated_length(model)) == (True, "llama3", 32768)
    # Qwen3-8B's 40960 native tokens: four times that is past the 131072 the cards validate, which is the most.
    assert validated_length(load_catalog().model("8B")) == 131072
    # and a native context past that most is known as it is (Qwen3-4B-Instruct-2507's 262144)
    assert validated_length(load_catalog().model("Qwen3-4B-Instruct-2507")) == 262144


@pytest.mark.parametrize(("key", "beside"), [
    ("rope_scaling", {}),
    ("rope_parameters", {}),  # transformers 5 saves rope_parameters
    ("rope_parameters", {"rope_scaling": None}),  # a null rope_scaling gives none: rope_parameters does
    ("rope_scaling", {"rope_parameters": {"rope_theta": 1000000.0}}),  # a rope_scaling given is read before them
])
def test_a_model_config_with_yarn_of_its_own_is_rescaled_from_its_original_context(tmp_path: Path, key: str,
                                                                                   beside: dict):
    config = json.loads(FIXTURE.read_text(encoding="utf-8"))
    config.update({"max_position_embeddings": 131072, **beside, key: {"rope_type": "yarn", "factor": 4.0,
                                                                      "original_max_position_embeddings": 32768}})
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    model = load_model_config(path)
    assert (model.native_context, model.rope_scaling, model.yarn_factor(204800)) == (32768, None, 6.25)


@pytest.mark.parametrize(("full_attention", "own"), [({"rope_type": "linear", "factor": 8.0}, "linear"),
                                                     ({"rope_type": "default"}, None)])
def test_rope_parameters_per_layer_type_are_read_from_the_full_attention_layers(tmp_path: Path, full_attention: dict,
                                                                                own: str | None):
    # transformers 5 gives Gemma-3 one RoPE per layer type; the full-attention layers' sets the context (a YaRN
    # written over Gemma-3's own linear scaling would replace it), the sliding window's does not.
    config = json.loads((HF_CONFIGS / "gemma-2-9b.json").read_text(encoding="utf-8"))
    config.update({"model_type": "gemma3_text", "max_position_embeddings": 131072, "rope_parameters": {
        "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
        "full_attention": {**full_attention, "rope_theta": 1000000.0}}})
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    model = load_model_config(path)
    assert (model.rope_scaling, model.native_context) == (own, 131072)


@pytest.mark.parametrize(("extra", "tied"), [
    ({"model_type": "gemma2"}, True),  # Gemma-2's config.json gives no tie_word_embeddings: its class ties them
    ({"model_type": "llama"}, False),
    ({"model_type": "gemma2", "tie_word_embeddings": False}, False),  # the key decides where it is given
    ({"model_type": "mamba", "tie_word_embeddings": None}, False),  # null: untied, as transformers reads it
])
def test_tied_embeddings_default_as_the_model_types_class_says(tmp_path: Path, extra: dict, tied: bool):
    path = tmp_path / "config.json"
    shape = {"hidden_size": 3584, "intermediate_size": 14336, "num_hidden_layers": 42, "num_attention_heads": 16,
             "num_key_value_heads": 8, "head_dim": 256, "vocab_size": 256000, "max_position_embeddings": 8192}
    path.write_text(json.dumps({**shape, **extra}), encoding="utf-8")
    model = load_model_config(path)
    # 42 layers of (3584 x 256 x 48 attention + 3 x 3584 x 14336 MLP + 2 x 3584 norms), the 256000 x 3584
    # embedding once or twice, and the final norm: Gemma-2-9B's 9.24 billion when tied
    layers = 42 * (3584 * 256 * 48 + 3 * 3584 * 14336 + 2 * 3584)
    assert model.tied_embeddings is tied
    assert model.parameters_b == pytest.approx((layers + 256000 * 3584 * (1 if tied else 2) + 3584) / 1e9)


@pytest.mark.parametrize("model_type", [None, "internlm2"])
def test_a_model_config_without_tie_word_embeddings_of_an_unknown_type_is_refused(cli, tmp_path: Path,
                                                                                  model_type: str | None):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
                                "num_attention_heads": 8, "vocab_size": 1000, "max_position_embeddings": 4096,
                                **({"model_type": model_type} if model_type else {})}), encoding="utf-8")
    which = "model_type 'internlm2'" if model_type else "no model_type"
    status, out, err = cli("--model-config", str(path), "--gpu", "a100", "--len", "8k")
    assert (status, out) == (2, "")
    assert err == (f"solve: error: --model-config {path}: tie_word_embeddings is not given, and with {which} its "
                   "default is not known here: add \"tie_word_embeddings\": true or false (transformers' default is "
                   "true unless the model's class says otherwise; Llama's and Qwen's say false, Gemma's true)\n")


def test_small_models_odd_names_and_null_defaults_in_a_model_config(tmp_path: Path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"_name_or_path": "org/tiny\nmodel", "hidden_size": 64, "intermediate_size": 128,
                                "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": None,
                                "head_dim": None, "vocab_size": 1000, "max_position_embeddings": 4096,
                                "tie_word_embeddings": None}),
                    encoding="utf-8")
    model = load_model_config(path)
    # 2 layers of (64 x 8 x 32 attention + 3 x 64 x 128 MLP + 128 norms) + 1000 x 64 x 2 + 64 = 210240
    assert (model.name, model.num_key_value_heads, model.head_dim) == ("tiny model", 8, 8)
    assert model.parameters_b == pytest.approx(210240 / 1e9)


def test_a_model_config_that_borrows_a_catalogue_name_gets_no_tables(cli, tmp_path: Path):
    # A 70B-shaped config in a folder named Qwen3-4B must not take Qwen3-4B's documented cells; the real
    # Qwen3-4B's shape does.
    folder = tmp_path / "Qwen3-4B"
    folder.mkdir()
    shape = {"model_type": "llama", "hidden_size": 8192, "intermediate_size": 28672, "num_hidden_layers": 80, "num_attention_heads": 64,
             "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 131072}
    (folder / "config.json").write_text(json.dumps(shape), encoding="utf-8")
    flags = ["--gpu", "a100", "--gpus", "4", "--len", "8k", "--json"]
    status, out, _ = cli("--model-config", str(folder), *flags)
    [answer] = json.loads(out)
    assert answer["model"] == "Qwen3-4B (config shape)" and all(p["evidence"] == "estimated" for p in answer["plans"])
    qwen = CATALOG.model("Qwen3-4B")
    shape = {"hidden_size": qwen.hidden_size, "intermediate_size": qwen.intermediate_size,
             "num_hidden_layers": qwen.num_layers, "num_attention_heads": qwen.num_attention_heads,
             "num_key_value_heads": qwen.num_key_value_heads, "head_dim": qwen.head_dim, "vocab_size": qwen.vocab_size,
             "tie_word_embeddings": qwen.tied_embeddings, "max_position_embeddings": qwen.native_context}
    (folder / "config.json").write_text(json.dumps(shape), encoding="utf-8")
    status, out, _ = cli("--model-config", str(folder), *flags)
    [answer] = json.loads(out)
    assert (status, answer["model"], answer["plans"][0]["evidence"]) == (0, "Qwen3-4B", "documented")
    # Named in another case (a folder ``qwen3-4b``), it is still Qwen3-4B, whose tables know it by that name.
    lower = tmp_path / "qwen3-4b"
    folder.rename(lower)
    status, out, _ = cli("--model-config", str(lower), *flags)
    [answer] = json.loads(out)
    assert (status, answer["model"], answer["plans"][0]["evidence"]) == (0, "Qwen3-4B", "documented")


def test_a_host_memory_note_only_when_host_memory_is_the_limit():
    # 8B at 65536 within 4 A100s needs Offload (203.4 GiB of host memory per node, every rank of the 4 loading the
    # model where no release is named): --host-ram 170 is what stops it (it holds the 162.7 GiB the plan without
    # Offload on 4 GPUs needs while the model loads, 4 x 30.51 beside the reference model's 40.63 of pinned shards);
    # Trinity 0.5.1 loads the untied model on rank 0 alone, and its Offload plan needs 162.6 (0.5.0's too; 0.5.2's,
    # every rank loading it, 183.0: not enough).
    (answer,) = plan(make_query(CATALOG, model="8B", gpu="a100", max_model_len=65536, budget_gpus=4, host_ram_gb=170),
                     CATALOG)
    assert answer.reason.endswith("the longest is 51200 (Env + SP=4 on 4 GPUs, documented); without --host-ram, "
                                  "Env + Offload + SP=4 on 4 GPUs trains it (65536 tokens), and with Offload it needs "
                                  "203.4 GiB of host memory per node; with --trinity-version 0.5.1, whose rank 0 alone loads "
                                  "the model and whose verl 0.7 builds the reference model in bf16 and places the pinned "
                                  "blocks, Env + Offload + SP=4 on 4 GPUs trains it (65536 tokens), and with Offload "
                                  "it needs 162.6 GiB of host memory per node; 0.5.0 counts less host memory too, "
                                  "enough for that plan; 0.5.2 counts less too, but not enough for that plan; "
                                  "--token-budget auto trains 65536 tokens: Env + "
                                  "SP=4 on 4 GPUs with "
                                  "max_token_len_per_gpu = 25600 (estimated)")  # the tokens per GPU of the documented cell at 51200
    # The need is rounded up (203.4 GiB, 203.31 unrounded): 203.3 does not train it, 203.4 does.
    for host_ram, trains in ((203.3, False), (203.4, True)):
        (answer,) = plan(make_query(CATALOG, model="8B", gpu="a100", max_model_len=65536, budget_gpus=4,
                                    host_ram_gb=host_ram), CATALOG)
        assert bool(answer.plans) == trains
    # 32B at 65536 on two A100s with SP=2 pinned: 38912 at most (the per-token floor binds for 32B), with or
    # without host memory to spare.
    (answer,) = plan(make_query(CATALOG, model="32B", gpu="a100", max_model_len=65536, budget_gpus=2, sp=2,
                                host_ram_gb=2000), CATALOG)
    assert answer.plans == () and "the longest is 38912" in answer.reason and "host memory" not in answer.reason


def test_cli_calibrate_names_cells_that_contradict_the_tables_and_files_given_twice(cli, tmp_path: Path):
    mine = tmp_path / "mine.yaml"
    mine.write_text('gpu: A100-80GB\nmemory_gb: 80\nsource: mine\ntables:\n  - gpus: 4\n    section: "4 x A100"\n'
                    '    models: [Qwen3-8B]\n    rows:\n'
                    '      - {max_model_len: 4096, cells: {Qwen3-8B: Env}}\n'  # the table says vanilla
                    '      - {max_model_len: 8192, cells: {Qwen3-8B: Env}}\n'  # the table says vanilla
                    '      - {max_model_len: 12288, cells: {Qwen3-8B: Env}}\n', encoding="utf-8")  # agrees
    status, out, err = cli("calibrate", "--cells", str(mine), "--with-tables")
    assert status == 0 and out.startswith("# Memory-model coefficients") and err.startswith(
        "solve calibrate: warning: your cells contradict the documented tables (2 contradictions), and the fit takes "
        "both sides: A100-80GB, 4 GPUs, Qwen3-8B at 4096: yours 'Env', the table's 'vanilla'; and 1 more\n")
    # Alone, the fit takes no side, but planning with them refuses them (persona91c: it said nothing)
    status, out, err = cli("calibrate", "--cells", str(mine))
    assert status == 0 and err.startswith(
        "solve calibrate: warning: your cells contradict the documented tables (2 contradictions), and planning with "
        "them as tables (--cells) refuses them: A100-80GB, 4 GPUs, Qwen3-8B at 4096: yours 'Env', the table's "
        "'vanilla'; and 1 more\n")
    # Across GPU counts too: Env + Offload on 8 A100s where the tables for fewer train vanilla.
    more = tmp_path / "more.yaml"
    more.write_text('gpu: A100-80GB\nmemory_gb: 80\nsource: mine\ntables:\n  - gpus: 8\n    section: "8 x A100"\n'
                    '    models: [Qwen3-4B]\n    rows:\n      - {max_model_len: 8192, cells: {Qwen3-4B: Env + Offload}}\n',
                    encoding="utf-8")
    status, _, err = cli("calibrate", "--cells", str(more), "--with-tables")
    assert status == 0 and (
        "solve calibrate: warning: your cells contradict the documented tables (3 contradictions), and the fit takes "
        "both sides: A100-80GB, Qwen3-4B at 8192: vanilla trains on 2 GPUs but 8 GPUs need Env + Offload (more GPUs "
        "only shard the states further); and 2 more\n") in err and "mend the contradictions above, or check them" in err
    # Each file's cells are checked across GPU counts, the second's too.
    h100 = tmp_path / "h100.yaml"
    h100.write_text("gpu: H100-80GB\nmemory_gb: 80\nsource: mine\ntables:\n  - gpus: 2\n    section: x\n"
                    "    models: [8B]\n    rows:\n      - {max_model_len: 16384, cells: {8B: Env + Offload}}\n",
                    encoding="utf-8")
    status, _, err = cli("calibrate", "--cells", str(h100), "--with-tables")
    assert status == 0 and "contradict" not in err
    status, _, err = cli("calibrate", "--cells", str(h100), "--cells", str(more), "--with-tables")
    assert status == 0 and (
        "solve calibrate: warning: your cells contradict the documented tables (3 contradictions), and the fit takes "
        "both sides: A100-80GB, Qwen3-4B at 8192: vanilla trains on 2 GPUs but 8 GPUs need Env + Offload") in err
    assert cli("calibrate", "--cells", str(mine), "--cells", str(tmp_path / "." / "mine.yaml")) == (
        2, "", f"solve calibrate: error: --cells {tmp_path / '.' / 'mine.yaml'}: the same file is given twice; give "
               "each file once\n")


def test_calibrate_refuses_cells_that_contradict_themselves_as_planning_does(cli, tmp_path: Path):
    # '-' at 4096 and 8192 under Env at 12288 (memory only grows with the length): refused alone and beside the
    # documented tables (which contradict it too), in the words planning with them refuses them, and nothing written.
    mine = tmp_path / "mine.yaml"
    mine.write_text('gpu: A100-80GB\nmemory_gb: 80\nsource: mine\ntables:\n  - gpus: 4\n    section: "4 x A100"\n'
                    '    models: [Qwen3-8B]\n    rows:\n'
                    '      - {max_model_len: 4096, cells: {Qwen3-8B: "-"}}\n'
                    '      - {max_model_len: 8192, cells: {Qwen3-8B: "-"}}\n'
                    '      - {max_model_len: 12288, cells: {Qwen3-8B: Env}}\n', encoding="utf-8")
    refused = (f"--cells {mine}: A100-80GB, 4 GPUs, Qwen3-8B: - at 4096 but Env trains at the longer 12288 (memory "
               "only grows with the length); and 1 more; check the cells\n")
    out = tmp_path / "fit.yaml"
    for tables in ((), ("--with-tables",)):
        assert cli("calibrate", "--cells", str(mine), *tables, "--out", str(out)) == (
            2, "", f"solve calibrate: error: {refused}") and not out.exists()
    # A typo in a user's H100 cells (8B on 8 GPUs at 32768 as Env + Offload + SP=8, where 4 GPUs train it with
    # Env + SP=4): calibrating refused it as planning does (it wrote a model with gathered 12.2 and said so in a
    # warning only).
    h100 = tmp_path / "h100.yaml"
    h100.write_text("gpu: H100-80GB\nmemory_gb: 80\nsource: mine\ntables:\n"
                    "  - gpus: 4\n    section: x\n    models: [8B]\n    rows:\n"
                    "      - {max_model_len: 32768, cells: {8B: Env + SP=4}}\n"
                    "  - gpus: 8\n    section: y\n    models: [8B]\n    rows:\n"
                    "      - {max_model_len: 32768, cells: {8B: Env + Offload + SP=8}}\n", encoding="utf-8")
    said = (f"--cells {h100}: H100-80GB, Qwen3-8B at 32768: Env + SP=4 trains on 4 GPUs but 8 GPUs need Env + "
            "Offload + SP=8 (more GPUs only shard the states further)")
    assert cli("calibrate", "--cells", str(h100), "--out", str(out)) == (
        2, "", f"solve calibrate: error: {said}; check the cells\n") and not out.exists()
    assert cli("--model", "8B", "--gpu", "h100", "--gpus", "8", "--len", "32k", "--cells", str(h100)) == (
        2, "", f"solve: error: {said}; check the cells\n")
    # From Python: the same refusal, naming the file without the option.
    with pytest.raises(TableError) as refusal:
        solver.calibrate_memory_model([h100])
    assert str(refusal.value) == f"{said.removeprefix('--cells ')}; check the cells"


def test_calibrate_names_the_check_that_lists_every_contradiction_where_it_can(cli, tmp_path: Path):
    # H100 cells (no shipped tables) with two contradictions: the refusal names the first and, as planning's does,
    # the command that lists them all, which does. A100 cells for 4 GPUs (above) it does not: solve tables cannot read
    # them (the A100 has a table for 4 GPUs), so it names none.
    mine = tmp_path / "mine.yaml"
    mine.write_text('gpu: H100-80GB\nmemory_gb: 80\nsource: mine\ntables:\n  - gpus: 4\n    section: "4 x H100"\n'
                    '    models: [Qwen3-8B]\n    rows:\n'
                    '      - {max_model_len: 4096, cells: {Qwen3-8B: "-"}}\n'
                    '      - {max_model_len: 8192, cells: {Qwen3-8B: "-"}}\n'
                    '      - {max_model_len: 12288, cells: {Qwen3-8B: Env}}\n', encoding="utf-8")
    first, second = (f"H100-80GB, 4 GPUs, Qwen3-8B: - at {length} but Env trains at the longer 12288 (memory only "
                     "grows with the length)" for length in (4096, 8192))
    assert cli("calibrate", "--cells", str(mine)) == (2, "", (
        f"solve calibrate: error: --cells {mine}: {first}; and 1 more (solve tables --check, with the same --cells "
        "and --model-config, lists them); check the cells\n"))
    assert cli("tables", "--cells", str(mine), "--check") == (
        1, (f"solve tables: warning: {first}\nsolve tables: warning: {second}\n2 contradictions in 563 "
            f"cells: 3 of {mine}'s, 560 of the shipped tables\n"), "")
    # Beside A100 cells for 4 GPUs, which solve tables cannot read, the same refusal names no command.
    a100 = tmp_path / "a100.yaml"
    a100.write_text('gpu: A100-80GB\nmemory_gb: 80\nsource: mine\ntables:\n  - gpus: 4\n    section: "4 x A100"\n'
                    '    models: [Qwen3-8B]\n    rows:\n      - {max_model_len: 4096, cells: {Qwen3-8B: vanilla}}\n',
                    encoding="utf-8")
    assert cli("calibrate", "--cells", str(mine), "--cells", str(a100)) == (2, "", (
        f"solve calibrate: error: --cells {mine}: {first}; and 1 more; check the cells\n"))
    status, _, err = cli("tables", "--cells", str(mine), "--cells", str(a100), "--check")
    assert status == 2 and "A100-80GB has a table for 4 GPUs already" in err


def test_cells_that_contradict_themselves_or_show_no_limit_are_refused(cli, tmp_path: Path):
    # A plan on cells that say vanilla trains at 32768 but needed Env + Offload at 16384 could run out of
    # memory: the planners refuse them, and calibrate does (above). Cells that are all '-' give no fit.
    contra, dashes = tmp_path / "contra.yaml", tmp_path / "dashes.yaml"
    head = "gpu: H100-80GB\nmemory_gb: 80\nsource: mine\ntables:\n  - gpus: 2\n    section: '2 x H100'\n" \
           "    models: [Qwen3-8B]\n    rows:\n"
    contra.write_text(head + "      - {max_model_len: 16384, cells: {Qwen3-8B: Env + Offload}}\n"
                      "      - {max_model_len: 32768, cells: {Qwen3-8B: vanilla}}\n", encoding="utf-8")
    dashes.write_text(head + "      - {max_model_len: 16384, cells: {Qwen3-8B: '-'}}\n", encoding="utf-8")
    for command in (["--model", "8B", "--len", "16k", "--gpu", "h100", "--gpus", "2"],
                    ["memory", "--model", "8B", "--len", "16k", "--gpu", "h100", "--gpus", "2"]):
        assert cli(*command, "--cells", str(contra)) == (2, "", (
            f"solve{' memory' if command[0] == 'memory' else ''}: error: --cells {contra}: H100-80GB, 2 GPUs, "
            "Qwen3-8B: Env + Offload at 16384 but vanilla trains at the longer 32768 (memory only grows with the "
            "length); check the cells\n"))
    # Past the source's SP degrees the order goes on in its pattern: SP=8 comes before Env + SP=8.
    contra.write_text(head.replace("2", "8") + "      - {max_model_len: 32768, cells: {Qwen3-8B: Env + SP=8}}\n"
                      "      - {max_model_len: 65536, cells: {Qwen3-8B: SP=8}}\n", encoding="utf-8")
    assert cli("--model", "8B", "--len", "64k", "--gpu", "h100", "--gpus", "8", "--cells", str(contra)) == (2, "", (
        f"solve: error: --cells {contra}: H100-80GB, 8 GPUs, Qwen3-8B: Env + SP=8 at 32768 but SP=8 trains at the "
        "longer 65536 (memory only grows with the length); check the cells\n"))
    # Offload without Env, which the source never tried, says nothing of the settings it did try.
    contra.write_text(head + "      - {max_model_len: 8192, cells: {Qwen3-8B: Env + Offload}}\n"
                      "      - {max_model_len: 16384, cells: {Qwen3-8B: Offload}}\n", encoding="utf-8")
    status, out, _ = cli("--model", "8B", "--len", "16k", "--gpu", "h100", "--gpus", "2", "--cells", str(contra), "--json")
    assert status == 0 and json.loads(out)[0]["plans"][0]["evidence"] == "documented"
    # Two models of one shape (a release and its base model) measured apart must agree.
    contra.write_text(head.replace("2", "8").replace("[Qwen3-8B]", "[Qwen3-8B, Qwen3-8B-Base]")
                      + "      - {max_model_len: 32768, cells: {Qwen3-8B: Env + Offload + SP=4, Qwen3-8B-Base: SP=2}}\n",
                      encoding="utf-8")
    assert cli("--model", "8B", "--len", "32k", "--gpu", "h100", "--gpus", "8", "--cells", str(contra)) == (2, "", (
        f"solve: error: --cells {contra}: H100-80GB, 8 GPUs: Qwen3-8B and Qwen3-8B-Base differ at 32768: Env + "
        "Offload + SP=4 and SP=2 (they have one shape, and memory depends on the shape alone); check the cells\n"))
    out = tmp_path / "fit.yaml"
    assert cli("calibrate", "--cells", str(dashes), "--out", str(out)) == (2, "", (
        f"solve calibrate: error: --cells {dashes}: no cell names a setting that trained (all are '-'): nothing shows "
        "how much memory a run may take; add cells that trained\n")) and not out.exists()
    # A cells file without tables is refused as --cells refuses it, also beside a file with cells (it was left out
    # without a word, and alone said "no cells to calibrate on", naming no file).
    empty = tmp_path / "empty.yaml"
    empty.write_text("gpu: H100-80GB\nmemory_gb: 80\nsource: mine\ntables: []\n", encoding="utf-8")
    refused = f"--cells {empty}: no tables: a cells file gives at least one (gpus, models, rows)\n"
    assert cli("calibrate", "--cells", str(empty), "--out", str(out)) == (
        2, "", f"solve calibrate: error: {refused}") and not out.exists()
    assert cli("calibrate", "--cells", str(dashes), "--cells", str(empty)) == (2, "", f"solve calibrate: error: {refused}")
    assert cli("--model", "8B", "--gpu", "h100", "--len", "8k", "--cells", str(empty)) == (2, "", f"solve: error: {refused}")


def test_cells_on_more_gpus_follow_the_sources_order_in_its_pattern(tmp_path: Path):
    # On 8 GPUs a cell SP=8 says vanilla, Env, SP=2, Env + SP=2, SP=4 and Env + SP=4 failed; Offload
    # without Env lies outside the order and is positive evidence alone.
    mine = tmp_path / "mine.yaml"
    mine.write_text("gpu: H100-80GB\nmemory_gb: 80\nsource: mine\ntables:\n  - gpus: 8\n    section: '8 x H100'\n"
                    "    models: [Qwen3-8B]\n    rows:\n      - {max_model_len: 131072, cells: {Qwen3-8B: SP=8}}\n"
                    "      - {max_model_len: 262144, cells: {Qwen3-8B: Offload + SP=8}}\n", encoding="utf-8")
    found = observations(CATALOG, gpu_types=[load_gpu_type(mine, CATALOG.models, CATALOG.gpu_types)])
    assert [(o.max_model_len, o.setting.label, o.fits) for o in found] == [
        (131072, "vanilla", False), (131072, "Env", False), (131072, "SP=2", False), (131072, "Env + SP=2", False),
        (131072, "SP=4", False), (131072, "Env + SP=4", False), (131072, "SP=8", True), (262144, "Offload + SP=8", True)]


def test_the_extended_order_keeps_sp_groups_inside_a_node():
    # 16 GPUs on nodes of 8: of the degrees Qwen3-32B's 64 heads allow, only 1, 2, 4 and 8 keep a group in a node.
    settings = tried_settings(CATALOG.model("Qwen3-32B"), 16)
    assert sorted({s.sp for s in settings}) == [1, 2, 4, 8]
    assert [s.label for s in settings if s.sp == 8] == ["SP=8", "Env + SP=8", "Env + Offload + SP=8"]


def test_estimates_turn_env_on_unless_it_is_pinned_off(cli):
    shape, memory_gib, coefficients = CATALOG.model("14B"), CATALOG.gpu("h100").memory_gib, load_memory_model().coefficients
    cells = estimated_cells(shape, memory_gib, (1, 2, 4, 8), coefficients, DEFAULT_MARGIN)
    assert {(env, offload) for _, env, offload, _, _ in cells} == {(1, 0), (1, 1)}
    without_env = estimated_cells(shape, memory_gib, (1, 2, 4, 8), coefficients, DEFAULT_MARGIN, without_env=True)
    assert {(env, offload) for _, env, offload, _, _ in without_env} == {(0, 0), (0, 1), (1, 0), (1, 1)}
    # Qwen3-32B on 8 H100s at 32768 needs Offload; the estimate is Env + Offload, never Offload alone
    # (which would save Env's nominal cost for less room) unless Env is pinned off.
    (answer,) = plan(make_query(CATALOG, model="32B", gpu="h100", max_model_len=32768, budget_gpus=8), CATALOG)
    assert (answer.plans[0].setting.label, answer.plans[0].evidence) == ("Env + Offload + SP=2", "estimated")
    status, out, _ = cli("--model", "32B", "--gpu", "h100", "--len", "32k", "--gpus", "8", "--no-env", "--json")
    (plan_without_env,) = json.loads(out)[0]["plans"]
    assert status == 0 and (plan_without_env["env"], plan_without_env["offload"], plan_without_env["sp"]) == (False, True, 2)
    assert plan_without_env["evidence"] == "estimated" and plan_without_env["memory_gb"] > answer.plans[0].memory_gb


def test_cli_memory_names_the_cell_that_vouches_and_lets_it_decide(cli, tmp_path: Path):
    # The H20 table for 2 GPUs says SP=2 trains Qwen3-8B at 16384; the memory model predicts it does not fit.
    flags = ["memory", "--model", "8B", "--gpu", "h20", "--gpus", "2", "--len", "16384", "--sp", "2"]
    status, out, _ = cli(*flags)
    assert status == 0 and "does not fit (estimated): 7.30 GiB over" in out
    assert ("tables: it trains (documented: the H20-96GB table for 2 GPUs says 'SP=2' at 16384); where the memory "
            "model disagrees, the table, a measurement, decides") in " ".join(out.split())
    result = json.loads(cli(*flags, "--json")[1])
    assert (result["fits"], result["tables"]) == (False, {
        "trains": True, "evidence": "documented", "source": {"model": "Qwen3-8B", "gpus": 2, "max_model_len": 16384, "setting": "SP=2"}})
    # On 5 GPUs (no table), Env + Offload at 24576 rests on the 4-GPU table's cell; on an H100, on nothing.
    result = json.loads(cli("memory", "--model", "14B", "--gpu", "a100", "--gpus", "5", "--len", "24576", "--env",
                            "--offload", "--json")[1])
    assert result["tables"] == {"trains": True, "evidence": "inferred",
                                "source": {"model": "Qwen3-14B", "gpus": 4, "max_model_len": 24576, "setting": "Env + Offload"}}
    result = json.loads(cli("memory", "--model", "8B", "--gpu", "h200", "--gpus", "2", "--len", "16384", "--sp", "2",
                            "--json")[1])
    assert result["tables"] is None
    # On an H100, the A100's table (its GPU has at least the H100's memory) says SP=2 ran out of memory there: the
    # source's cells read so, as it comes before the 'Env + Offload' at 8192 in their order.
    flags = ["memory", "--model", "8B", "--gpu", "h100", "--gpus", "2", "--len", "16384", "--sp", "2"]
    assert json.loads(cli(*flags, "--json")[1])["tables"] == {"trains": False, "evidence": "inferred", "source": {
        "model": "Qwen3-8B", "gpus": 2, "max_model_len": 8192, "setting": "Env + Offload", "gpu": "A100-80GB"}}
    assert ("tables: it runs out of memory (the A100-80GB table for 2 GPUs (its GPU has at least the memory of "
            "H100-80GB) says 'Env + Offload' at 8192: the source's cells read as the first setting that "
            "trained") in " ".join(cli(*flags)[1].split())
    # The A100 table for 4 GPUs says Env at 12288 for Qwen3-8B: vanilla ran out of memory there first, and its row
    # at 32768 (SP=4) documents that it does there too; the memory model agrees (62.85 GiB over), exit status 1.
    flags = ["memory", "--model", "8B", "--gpu", "a100", "--gpus", "4", "--len", "32k"]
    status, out, _ = cli(*flags)
    assert status == 1 and ("tables: it runs out of memory (the A100-80GB table for 4 GPUs says 'Env' at 12288: the "
                            "source's cells read as the first setting that trained in their order, '-' where none "
                            "did, so this setting, or one that includes it, ran out of memory there)") in " ".join(
                                out.split())
    assert json.loads(cli(*flags, "--json")[1])["tables"] == {
        "trains": False, "evidence": "documented", "source": {"model": "Qwen3-8B", "gpus": 4, "max_model_len": 12288,
                                                              "setting": "Env"}}
    # A table of your cells that says so: your cells say it, not the source's.
    cells = tmp_path / "own.yaml"
    cells.write_text("gpu: Own-80GB\nmemory_gb: 80\nsource: made up\ntables:\n  - gpus: 4\n    section: 4 x Own\n"
                     "    models: [4B]\n    rows:\n      - {max_model_len: 32768, cells: {4B: Env + Offload + SP=4}}\n"
                     "      - {max_model_len: 65536, cells: {4B: '-'}}\n", encoding="utf-8")
    status, out, _ = cli("memory", "--model", "4B", "--gpu", "own-80gb", "--gpus", "4", "--len", "64k", "--sp", "4",
                         "--env", "--offload", "--cells", str(cells))
    assert status == 1 and ("tables: it runs out of memory (the Own-80GB table for 4 GPUs of your cells (made up) says "
                            "'-' at 65536: your cells read as the first setting that trained in their order, '-' "
                            "where none did, so this setting, or one that includes it, ran out of memory "
                            "there)") in " ".join(out.split())


def test_cli_memory_evidence_says_how_the_tables_say_it_runs_out_of_memory(cli):
    # The A100's 1-GPU table says '-' at 32768 for Qwen3-8B: that cell documents it (evidence was null before).
    answer = json.loads(cli("memory", "--model", "8B", "--gpu", "A100-80GB", "--gpus", "1", "--len", "32768",
                            "--json")[1])
    assert (answer["trains"], answer["evidence"], answer["tables"]["evidence"]) == (False, "documented", "documented")
    # No table for 3 GPUs: the 4-GPU table's 'Env' at 4096 says vanilla ran out of memory on more GPUs, inferred.
    answer = json.loads(cli("memory", "--model", "14B", "--gpu", "a100", "--gpus", "3", "--len", "4096",
                            "--json")[1])
    assert (answer["trains"], answer["evidence"], answer["tables"]["source"]["gpus"]) == (False, "inferred", 4)
    # The cells measured the actor alone: with a critic the same cell's refutation is inferred.
    answer = json.loads(cli("memory", "--model", "8B", "--gpu", "a100", "--gpus", "4", "--len", "32k", "--critic",
                            "resident", "--json")[1])
    assert (answer["trains"], answer["evidence"]) == (False, "inferred")


@pytest.mark.parametrize(("model", "gpu", "rollout", "length", "size", "weights", "kv_cache", "room", "fits"), [
    # bf16 weights 2 x 8.191e9 B = 15.26 GiB; KV cache 2 (K, V) x 36 layers x 8 KV heads x 128 x 2 B x 131072
    # tokens = 18 GiB; vLLM takes 0.9 x 80 GiB, less 1 GiB of CUDA context: 71 GiB, of which half is 35.5.
    ("8B", "a100", 2, 131072, 1, 15.26, 18.0, 71.0, True),
    # 2 x 32.762e9 B = 61.02 GiB would leave one H100 (79.65 GiB) no room; at 2 GPUs, 30.51 GiB and half of
    # the 64-layer KV cache (8 GiB at 32768) each.
    ("32B", "h100", 8, 32768, 2, 30.51, 4.0, 70.68, True),
    ("30B-A3B", "a100", 4, 32768, 2, 28.41, 1.5, 71.0, True),  # a MoE holds every expert's weights
    ("Llama-3.1-70B", "h100", 2, 32768, 2, 65.70, 5.0, 70.68, False),  # the largest size 2 GPUs allow
    ("32B", "h100", 8, 65536, 4, 15.25, 4.0, 70.68, True),  # twice the length, twice the KV cache: size 4, not 2
    ("32B", "h100", 3, 32768, 1, 61.02, 8.0, 70.68, False),  # 3 GPUs allow size 1 only (3 does not divide 64 heads)
    ("Llama-3.1-70B", "a100-40gb", 16, 32768, 8, 16.43, 1.25, 35.0, False),  # an engine stays in a node of 8
    # Qwen3-30B-A3B has 4 KV heads: at size 8 each is held by two GPUs, so a GPU holds a quarter of the KV cache
    # (2 x 48 layers x 4 x 128 x 2 B x 1048576 tokens = 96 GiB), not an eighth: 24 GiB beside 7.10 GiB of weights.
    # At size 4, 14.20 + 24 GiB is more than half of 71.
    ("30B-A3B", "a100", 8, 1048576, 8, 7.10, 24.0, 71.0, True),
])
def test_rollout_engines_take_the_smallest_size_whose_gpus_hold_the_weights_and_a_sequence(
        model, gpu, rollout, length, size, weights, kv_cache, room, fits):
    engines = rollout_engines(CATALOG.model(model), CATALOG.gpu(gpu).memory_gib, rollout, length)
    assert (engines.size, engines.fits) == (size, fits)
    assert (engines.weights_gib, engines.kv_cache_gib, engines.room_gib) == pytest.approx(
        (weights, kv_cache, room), abs=0.01)


def test_emitted_rollout_engines_are_sized_for_the_model(cli):
    status, out, err = cli("--model", "32B", "--gpu", "h100", "--len", "32k", "--gpus", "8", "--exact",
                           "--rollout-gpus", "8", "--emit", "trinity")
    assert status == 0 and "engine_num: 4  # 2 GPUs each\n    tensor_parallel_size: 2\n" in out
    # What vLLM takes is checkable by hand: 0.9 x 79.65 GiB, less 1 GiB for the CUDA context.
    assert err == ("solve: note: rollout engines of tensor-parallel size 2: Qwen3-32B's bf16 weights (30.5 GiB) and "
                   "one sequence's KV cache (4.0 GiB) per GPU take at most half of what vLLM takes of one H100-80GB "
                   "(70.7 GiB: 90% of its memory, less 1 GiB for the CUDA context), leaving the rest to sequences in "
                   "flight\n")
    status, out, err = cli("--model", "8B", "--gpu", "a100-80g", "--len", "32k", "--gpus", "4", "--rollout-gpus", "4",
                           "--emit", "trinity")
    assert (status, err) == (0, "") and "engine_num: 4  # one GPU each\n    tensor_parallel_size: 1\n" in out
    status, out, err = cli("--model", "32B", "--gpu", "l40s", "--gpus", "8", "--len", "16k", "--rollout-gpus", "3",
                           "--emit", "trinity", "--node-gpus", "16")  # 3 GPUs: tensor-parallel size 1 only
    # s91: engines that cannot hold the model are the plan's caution, which the fragment's header says (no note)
    assert status == 0 and "tensor_parallel_size: 1\n" in out and err == "" and (
        "caution: 3 rollout GPUs: Qwen3-32B's bf16 weights (61.0 GiB) and one sequence's KV cache (4.0 GiB) per GPU at "
        "tensor-parallel size 1 take more than vLLM takes of one L40S-48GB (39.5 GiB: 90% of its memory, less 1 GiB "
        "for the CUDA context): the engines cannot hold them; give the rollout more GPUs, a count that a larger "
        "tensor-parallel size divides") in " ".join(out.replace("\n#", " ").split())
    status, _, err = cli("--model", "Llama-3.1-70B", "--gpu", "4090", "--gpus", "8", "--len", "8k", "--rollout-gpus",
                         "8", "--emit", "trinity")  # engines of a whole node already: more GPUs would not help
    assert status == 0 and err == (
        "solve: note: Llama-3.1-70B's bf16 weights (16.4 GiB) and one sequence's KV cache (0.3 GiB) per GPU at "
        "tensor-parallel size 8 take more than half of what vLLM takes of one RTX-4090-24GB (20.6 GiB: 90% of its "
        "memory, less 1 GiB for the CUDA context): little room for sequences in flight; no larger tensor-parallel size "
        "stays in a node and suits the heads: the rollout needs GPUs with more memory\n")


def test_a_plan_whose_rollout_gpus_cannot_hold_the_model_says_so_without_emit(cli):
    # s91 (purchase91): Qwen3-32B's 61 GiB of weights on the one rollout GPU of 2 RTX 4090s: only --emit trinity's
    # note said the engine cannot load; the plan carries it as a caution now (its JSON too), and so does the for
    # rollout row where it keeps that one GPU for the rollout.
    unheld = ("1 rollout GPU: Qwen3-32B's bf16 weights (61.0 GiB) and one sequence's KV cache (1.0 GiB) per GPU at "
              "tensor-parallel size 1 take more than vLLM takes of one RTX-4090-24GB (20.6 GiB: 90% of its memory, "
              "less 1 GiB for the CUDA context): the engines cannot hold them; give the rollout more GPUs, a count "
              "that a larger tensor-parallel size divides")
    status, out, _ = cli("--gpu", "4090", "--total-gpus", "2", "--rollout-gpus", "1", "--model", "32B", "--len", "4k",
                         "--json")
    (answer,) = json.loads(out)
    codes = dict(zip(answer["plans"][0]["caution_codes"], answer["plans"][0]["cautions"]))
    assert status == 0 and answer["plans"][0]["rollout_gpus"] == 1 and codes["rollout-engines-unheld"] == unheld
    status, out, _ = cli("--gpu", "4090", "--gpus", "2", "--model", "32B", "--len", "4k")
    assert status == 0 and (f"for rollout --total-gpus 2 --rollout-gpus 1 keeps 1 of the 2 for it: Env + Offload on 1 "
                            f"trainer GPU, 4096 tokens, 2.00x the relative step time (estimated, extrapolated; one "
                            f"trainer GPU: Trinity-RFT's guide strongly advises more GPUs); caution: {unheld}"
                            ) in " ".join(out.split())
    status, out, _ = cli("--gpu", "4090", "--total-gpus", "4", "--rollout-gpus", "2", "--model", "14B", "--len", "4k",
                         "--json")  # 2 rollout GPUs: engines of 2 hold Qwen3-14B's 27.5 GiB
    assert status == 0 and "rollout-engines-unheld" not in json.loads(out)[0]["plans"][0]["caution_codes"]


def test_the_memory_model_estimates_where_a_counts_own_table_is_silent():
    # The H20 tables say 'SP=2' for Qwen3-4B at 32768 on 2, 4 and 6 GPUs: Env + Offload without SP was never
    # tried there. The memory model estimates it, as on 3, 5 and 8 GPUs, so more GPUs never make it stop
    # fitting (it used to train on 1, 3, 5 and 8 GPUs and not on 2, 4 and 6).
    evidence = []
    for gpus in range(1, 9):
        (answer,) = plan(make_query(CATALOG, model="4B", gpu="h20", max_model_len=32768, budget_gpus=gpus, exact=True,
                                    env=True, offload=True, sp=1), CATALOG)
        evidence.append(answer.plans[0].evidence if answer.plans else None)
    assert evidence == ["documented"] + ["estimated"] * 7


def test_where_a_counts_own_table_says_a_setting_ran_out_of_memory_that_stands():
    # Without a margin the memory model fits Env + Offload + SP=4 for Qwen3-4B on 4 A100s at 112640 tokens,
    # where the 4-GPU table says '-': nothing trained there, so no estimate stands in for it.
    flags = ["--model", "4B", "--gpu", "a100", "--gpus", "4", "--len", "112640", "--env", "--offload", "--sp", "4",
             "--margin", "0"]
    query = make_query(CATALOG, model="4B", gpu="a100", max_model_len=112640, budget_gpus=4, exact=True, env=True,
                       offload=True, sp=4, margin=0.0)
    (answer,) = plan(query, CATALOG)
    assert answer.plans == ()
    memory = breakdown(CATALOG.model("4B"), 80, 4, Setting(env=True, offload=True, sp=4), 112640,
                       load_memory_model().coefficients)
    assert memory.fits
    assert solver.cli.main(["memory", *flags]) == 1  # solve memory lets the table decide, and says so


def test_an_estimate_at_an_asked_length_needs_it_to_fit_not_a_grid_step():
    # The memory model fits Qwen3-14B on 16 B200s with Env + SP=4 at 199800 tokens, past the last
    # 1024-token step that fits (199680): the plan is there at the asked length.
    setting = Setting(env=True, offload=False, sp=4)
    coefficients = load_memory_model().coefficients
    shape, memory_gib = CATALOG.model("14B"), CATALOG.gpu("b200").memory_gib
    assert breakdown(shape, memory_gib, 16, setting, 199800, coefficients, DEFAULT_MARGIN).fits
    assert longest_fitting(shape, memory_gib, 16, setting, coefficients, DEFAULT_MARGIN) == 199680
    (answer,) = plan(make_query(CATALOG, model="14B", gpu="b200", max_model_len=199800, budget_gpus=16, exact=True,
                                env=True, offload=False, sp=4), CATALOG)
    assert [(p.setting, p.max_model_len, p.evidence) for p in answer.plans] == [(setting, 199800, "estimated")]


def test_an_estimate_vouches_for_exactly_its_sp_degree_not_a_higher_one():
    # With SP buffers dear enough (a memory model of one's own), Qwen3-8B on two H200s fits shorter at SP=2 than at
    # SP=1: a plan pinned to SP=2 rests on SP=2's own estimate, not on SP=1's longer one (which SP=2 includes).
    shipped = load_memory_model()
    memory = shipped.model_copy(update={"coefficients": shipped.coefficients.model_copy(update={"sp_buffers": 300.0})})
    shape, memory_gib = CATALOG.model("8B"), CATALOG.gpu("h200").memory_gib
    longest = {sp: longest_fitting(shape, memory_gib, 2, Setting(env=True, sp=sp), memory.coefficients, DEFAULT_MARGIN)
               for sp in (1, 2)}
    assert longest == {1: 23552, 2: 16384}
    (answer,) = plan(make_query(CATALOG, model="8B", gpu="h200", objective="max_len", budget_gpus=2, exact=True, sp=2,
                                offload=False, memory=memory), CATALOG)
    assert [(p.setting, p.max_model_len, p.evidence) for p in answer.plans] == [
        (Setting(env=True, sp=2), 16384, "estimated")]


def test_the_longest_fitting_length_is_searched_for_where_the_breakdown_disagrees_with_its_closed_form(monkeypatch):
    # longest_fitting solves the breakdown's linear form for the most tokens, then checks the length with
    # `breakdown` itself: where the two disagree (rounding), it searches for the last length that fits.
    shape, setting, coefficients = CATALOG.model("8B"), Setting(env=True, sp=2), load_memory_model().coefficients
    closed = longest_fitting(shape, 80, 4, setting, coefficients)
    assert closed is not None and closed % GRID == 0
    exact = solver.memory.breakdown

    def shorter(model, memory_gib, gpus, setting, length, *rest):  # fits up to 5000 tokens less than it says
        return exact(model, memory_gib, gpus, setting, length if length <= closed - 5000 else CEILING * 4, *rest)

    monkeypatch.setattr(solver.memory, "breakdown", shorter)
    assert longest_fitting(shape, 80, 4, setting, coefficients) == closed - 5 * GRID
    monkeypatch.setattr(solver.memory, "breakdown", lambda *args: exact(*args[:4], CEILING * 4, *args[5:]))
    assert longest_fitting(shape, 80, 4, setting, coefficients) is None  # not even one token fits


def test_the_longest_fitting_length_is_the_last_that_fits_on_its_grid():
    coefficients = load_memory_model().coefficients
    for name, gpu, gpus, setting in [("0.6B", "a100", 1, Setting(env=False, offload=False, sp=1)),
                                     ("32B", "h100", 8, Setting(env=True, offload=True, sp=8)),
                                     ("8B", "h20", 6, Setting(env=True, offload=False, sp=2))]:
        shape, memory_gib = CATALOG.model(name), CATALOG.gpu(gpu).memory_gib
        for grid in (1, 1024):
            longest = longest_fitting(shape, memory_gib, gpus, setting, coefficients, DEFAULT_MARGIN, grid=grid)
            assert longest is not None and longest % grid == 0
            assert breakdown(shape, memory_gib, gpus, setting, longest, coefficients, DEFAULT_MARGIN).fits
            assert not breakdown(shape, memory_gib, gpus, setting, longest + grid, coefficients, DEFAULT_MARGIN).fits
    # One grid step is a length too: Qwen3-0.6B fits on one A100 far past 1024 tokens, so with the ceiling at one step
    # that step is the longest; with the ceiling short of a step, no step fits.
    shape, memory_gib = CATALOG.model("0.6B"), CATALOG.gpu("a100").memory_gib
    assert longest_fitting(shape, memory_gib, 1, Setting(), coefficients, DEFAULT_MARGIN, ceiling=GRID) == GRID
    assert longest_fitting(shape, memory_gib, 1, Setting(), coefficients, DEFAULT_MARGIN, ceiling=GRID - 1) is None


def test_the_memory_breakdown_gives_the_host_memory_a_node_needs(cli):
    # Under Trinity 0.6 on H100s (compute capability 9.0, FSDP2), which loads the model on rank 0 alone (hostload,
    # s84); with no release named every rank's load is counted (8 x 55.02 GiB, 601.2 with Offload).
    flags = ["memory", "--model", "14B", "--gpu", "h100", "--gpus", "8", "--len", "65536", "--sp", "8", "--env",
             "--trinity-version", "0.6"]
    expected = host_memory_gib(CATALOG.model("14B"), 8, version="0.6", loading="rank-0")
    assert round(expected, 2) == 351.53  # 3 x 80.50 GiB of pinned fp32 shards and Adam's 110.03
    assert round(host_memory_gib(CATALOG.model("14B"), 8), 2) == 601.12  # 8 x 55.02 beside 2 x 80.50: the load
    status, out, _ = cli(*flags, "--offload")
    assert status == 0 and "host memory: 351.6 GiB per node for Offload" in out
    _, data, _ = cli(*flags, "--offload", "--json")
    assert json.loads(data)["host_memory_gib"] == 351.6  # rounded up to a tenth, as the line says it (351.53)
    # Without Offload, the model while it loads: 14.8B parameters in fp32 on one rank (untied embeddings), beside the
    # reference model's pinned fp32 shards (80.50 GiB: 4 bytes a parameter and the rounding).
    loading = 4 * CATALOG.model("14B").parameters_b * 1e9 / 2**30
    reference = 4 * pinned_rounding(CATALOG.model("14B"), 8, 4) * CATALOG.model("14B").parameters_b * 1e9 / 2**30
    assert round(loading, 2) == 55.02 and round(reference, 2) == 80.50
    assert host_memory_gib(CATALOG.model("14B"), 8, offload=False, version="0.6", loading="rank-0") == pytest.approx(
        loading + reference)
    _, out, _ = cli(*flags)
    _, data, _ = cli(*flags, "--json")
    assert "host memory: 135.6 GiB per node while the model loads" in out  # 135.52, rounded up: 135.5 would not hold it
    assert json.loads(data)["host_memory_gib"] == 135.6
    status, out, _ = cli(*flags, "--host-ram", "135")
    assert status == 1 and "more than --host-ram 135 GiB: it does not train there" in " ".join(out.split())
    # The need as given decides: 135.55 GiB of host memory does not hold what is said to need 135.6.
    assert cli(*flags, "--host-ram", "135.55")[0] == 1 and cli(*flags, "--host-ram", "135.6")[0] == 0
    # Host memory that holds it, given without Offload, is said to, as with Offload (the plan summary's words).
    status, out, _ = cli(*flags, "--host-ram", "160")
    assert status == 0 and ("host memory: 135.6 GiB per node while the model loads (verl reads it in fp32 before FSDP "
                            "shards it, beside the reference model's pinned shards; here rank 0 loading the model), "
                            "within --host-ram 160 GiB") in " ".join(out.split())


def test_a_memory_model_that_costs_nothing_per_token_is_held_to_the_physical_floor():
    # A memory model of your own may fit nothing to the per-token terms: a token still costs a bf16 hidden
    # state per layer (and the embedding's) and 7 bytes per logit, so not every length fits.
    free = PRIOR.model_copy(update={term: 0.0 for term in ("checkpoints", "logits", "recompute", "sp_buffers",
                                                           "fragmentation")})
    shape, setting = CATALOG.model("4B"), Setting(env=True, offload=False, sp=1)
    longest = longest_fitting(shape, 80, 8, setting, free)
    assert longest is not None and longest < CEILING
    per_token = (2 * 2560 * (36 + 1) + 7 * 151936) / 2**30
    at_longest = breakdown(shape, 80, 8, setting, longest, free)
    assert at_longest.fits and not breakdown(shape, 80, 8, setting, longest + GRID, free).fits
    assert at_longest.terms["checkpoints"] == pytest.approx(2 * longest * per_token)
    assert longest_fitting(shape, 80, 8, setting, free.model_copy(update={"overhead": 200.0})) is None


def test_a_small_vocabulary_is_held_to_one_layers_peak_not_the_logits(tmp_path: Path):
    # A Llama-2-7B-shaped model (hidden 4096, 32 heads of 128, 32 KV heads, MLP 11008, vocabulary 32000): one
    # layer's recompute and backward, 20 * 4096 + 14 * 4096 + 14 * 4096 + 12 * 11008 = 328704 bytes a token, is
    # more than its logits' 7 * 32000 = 224000, so the floor counts the layer (Qwen's 151936-entry logits win).
    config = tmp_path / "config.json"
    config.write_text(json.dumps({
        "architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "intermediate_size": 11008,
        "num_attention_heads": 32, "num_key_value_heads": 32, "num_hidden_layers": 32, "vocab_size": 32000,
        "max_position_embeddings": 4096, "tie_word_embeddings": False}), encoding="utf-8")
    model = load_model_config(config)
    assert layer_peak_bytes(model) == 328704
    assert token_floor_gib(model, 1024) == 1024 * (2 * 4096 * 33 + 328704) / 2**30
    qwen = CATALOG.model("8B")
    assert token_floor_gib(qwen, 1024) == 1024 * (2 * 4096 * 37 + 7 * 151936) / 2**30


def test_a_cells_file_may_name_models_as_the_command_line_does(tmp_path: Path):
    # 8B and qwen3-4b are Qwen3-8B and Qwen3-4B; two names of one model in a row are refused.
    mine = tmp_path / "mine.yaml"
    text = ("gpu: H100-80GB\nmemory_gb: 80\nsource: mine\ntables:\n  - gpus: 2\n    section: '2 x H100'\n"
            "    models: [8B, qwen3-4b]\n    rows:\n"
            "      - {max_model_len: 4096, cells: {8B: vanilla, qwen3-4b: vanilla}}\n")
    mine.write_text(text, encoding="utf-8")
    (table,) = load_gpu_type(mine, CATALOG.models, CATALOG.gpu_types).tables
    assert table.models == ("Qwen3-8B", "Qwen3-4B") and table.rows[0].cells == (
        ("Qwen3-8B", Setting()), ("Qwen3-4B", Setting()))
    mine.write_text(text.replace("[8B, qwen3-4b]", "[8B, qwen3-8b]"), encoding="utf-8")
    with pytest.raises(TableError, match="table gpus=2: Qwen3-8B is named twice in the table's models"):
        load_gpu_type(mine, CATALOG.models, CATALOG.gpu_types)
    mine.write_text(text.replace("qwen3-4b: vanilla", "qwen3-4b: vanilla, Qwen3-8B: Env"), encoding="utf-8")
    with pytest.raises(TableError, match="table gpus=2: row max_model_len=4096: two cells for Qwen3-8B"):
        load_gpu_type(mine, CATALOG.models, CATALOG.gpu_types)


def test_a_model_configs_folder_is_an_input_its_config_json_never_overwritten(cli, tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch):
    # --model-config DIR reads DIR/config.json: writing there would replace the file just read.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mdl").mkdir()
    config = tmp_path / "mdl" / "config.json"
    config.write_bytes(FIXTURE.read_bytes())
    for flags in (["--model-config", "mdl", "--len", "8k", "--gpu", "a100", "--out", "mdl/config.json"],
                  ["--model-config", "mdl/", "--len", "8k", "--gpu", "a100", "--out", "./mdl/config.json"]):
        message = f"solve: error: --out {Path(flags[-1])} would overwrite the file of --model-config: write to another file\n"
        assert cli(*flags) == (2, "", message)
    trinity = Path(__file__).parent.parent / "docs" / "examples" / "trinity.yaml"
    message = "solve: error: --write mdl/config.json would overwrite the file of --model-config: write to another file\n"
    assert cli("--from-config", str(trinity), "--model-config", "mdl", "--gpu", "a100", "--write",
               "mdl/config.json") == (2, "", message)
    assert config.read_bytes() == FIXTURE.read_bytes()


@pytest.mark.parametrize(("name", "shown"), [("ü🚀.yaml", "ü🚀.yaml"), ("x\x85\u2028\"'#: [y].yaml", None),
                                             ("not-utf-8-\udcff.yaml", "not-utf-8-\\xff.yaml")])
def test_a_calibrated_memory_model_file_loads_back_whatever_the_cells_file_is_called(cli, tmp_path: Path,
                                                                                     name: str, shown: str | None):
    # The source line named the cells file in JSON's escapes: a surrogate pair for 🚀, which YAML refuses.
    # A name that is not UTF-8 is named by its byte's escape, as text (as the wrote lines name it).
    cells = tmp_path / name
    cells.write_bytes((Path(__file__).parent.parent / "docs" / "examples" / "my-cells.yaml").read_bytes())
    target = tmp_path / "mine.yaml"
    assert cli("calibrate", "--cells", str(cells), "--out", str(target))[0] == 0
    assert load_memory_model(target).source == f"calibrated on {shown or name}"


def test_a_token_budget_of_ones_own_sets_the_tokens_per_gpu():
    # Trinity-RFT #398: Qwen2.5-7B at 131072 on 6 H20s, SP capped at 2 by the 28 heads; half the default
    # budget (65536 per GPU, the least that holds a 131072-token sequence on SP=2) halves the per-token terms.
    default = solver.estimate_memory("qwen2.5-7b", "h20", 6, 131072, sp=2, env=True, offload=True)
    half = solver.estimate_memory("qwen2.5-7b", "h20", 6, 131072, sp=2, env=True, offload=True,
                                  max_token_len_per_gpu=65536)
    assert (default.tokens_per_gpu, half.tokens_per_gpu) == (131072, 65536)
    for term in ("checkpoints", "logits", "recompute", "sp_buffers"):
        assert half.terms[term] == pytest.approx(default.terms[term] / 2)
    assert half.terms["gathered"] == default.terms["gathered"]
    # It does not fit: the longest length at this budget is then none; at a budget that fits, what SP holds.
    assert (half.fits, half.longest_len) == (False, None)
    small = solver.estimate_memory("4B", "a100", 4, 32768, sp=2, max_token_len_per_gpu=16384)
    assert small.fits and small.longest_len == 32768
    # Given, the default budget is a budget too: the longest length it holds, off the grid; the tables,
    # measured at it, speak.
    default = solver.estimate_memory("4B", "a100", 4, 32768, sp=2, max_token_len_per_gpu=32768)
    assert (default.longest_len, default.tables.evidence) == (65536, "documented")
    assert solver.estimate_memory("4B", "a100", 1, 512, max_token_len_per_gpu=700).longest_len == 700
    with pytest.raises(QueryError, match=r"max_token_len_per_gpu=16383 holds no sequence of 32768 tokens with SP=2: "
                                         r"it must be at least ceil\(32768 / 2\) = 16384"):
        solver.estimate_memory("4B", "a100", 4, 32768, sp=2, max_token_len_per_gpu=16383)


def test_the_tables_speak_of_a_token_budget_only_where_they_vouch_for_as_many_tokens():
    # 8B on 4 A100s: vanilla (SP=1) first ran out of memory at the 12288 row, 24576 tokens per GPU; that
    # refutes any budget of as many tokens or more, and says nothing of fewer.
    assert solver.estimate_memory("8B", "a100", 4, 32768).tables.source.max_model_len == 12288
    assert solver.estimate_memory("8B", "a100", 4, 32768, max_token_len_per_gpu=32768).tables.trains is False
    assert solver.estimate_memory("8B", "a100", 4, 16384, max_token_len_per_gpu=16384).tables is None
    # A budget whose tokens no length's default equals (16385 at SP=1) is judged at the shortest length whose
    # default holds as many, 8193: the 8192 row vouches for 16384 tokens, not one more.
    assert solver.estimate_memory("8B", "a100", 4, 4096, max_token_len_per_gpu=16384).tables.trains
    one_more = solver.estimate_memory("8B", "a100", 4, 4096, max_token_len_per_gpu=16385).tables
    assert (one_more.trains, one_more.source.max_model_len) == (False, 12288)
    # SP=4 trains at 16384 per GPU at 32768, so at 8192 too; at the 51200 row (25600 per GPU) the table
    # says Env + SP=4: SP=4 ran out of memory with fewer tokens than a budget of 32768.
    assert solver.estimate_memory("8B", "a100", 4, 32768, sp=4, max_token_len_per_gpu=8192).tables.trains
    refuted = solver.estimate_memory("8B", "a100", 4, 32768, sp=4, max_token_len_per_gpu=32768).tables
    assert (refuted.trains, refuted.source.max_model_len) == (False, 51200)
    # At the default budget the next row up decides, as in the planner: vanilla at 10000 is refuted by the
    # 12288 row, though that row's default holds more tokens than 10000's.
    between = solver.estimate_memory("8B", "a100", 4, 10000)
    assert (between.tables.trains, between.tables.source.max_model_len) == (False, 12288)
    assert solver.estimate_memory("8B", "a100", 4, 10000, max_token_len_per_gpu=20000).tables == between.tables
    # The same tokens per GPU by a budget or by the length: the same verdict (8B, SP=2, 2 H20s, 16384).
    by_length = solver.estimate_memory("8B", "h20", 2, 16384, sp=2)
    by_budget = solver.estimate_memory("8B", "h20", 2, 8192, sp=2, max_token_len_per_gpu=16384)
    assert by_length.tables == by_budget.tables and by_budget.tables.trains


def test_a_token_budget_between_rows_is_refuted_by_the_next_row_up_as_the_planner_takes_it():
    # 0.6B on 2 H20s, Env + Offload + SP=2: Env + SP=2 trained at the 71680 row, '-' at 81920. A budget of 72704
    # is the default of 72704 tokens, whose next row up, 81920, says nothing trained; 71680 is that row's own.
    args = ("0.6B", "h20", 2, 70000)
    flags = {"sp": 2, "env": True, "offload": True}
    above = solver.estimate_memory(*args, **flags, max_token_len_per_gpu=72704).tables
    assert (above.trains, above.source.max_model_len, above.source.setting) == (False, 81920, "-")
    assert solver.estimate_memory(*args, **flags, max_token_len_per_gpu=71680).tables.trains
    # and the planner lowers the budget no further than the row's: 71680 at 81920
    (answer,) = solver.plan("0.6B", gpu="h20", max_model_len=81920, budget_gpus=2, exact=True, sp=2, offload=True,
                            token_budget="auto")
    assert answer.plans[0].max_token_len_per_gpu == 71680


@pytest.mark.parametrize(("model", "gpu", "gpus", "length"), [
    ("8B", "h20", 4, 131072), ("14B", "a100", 4, 102400), ("0.6B", "a100", 6, 100000), ("Qwen2.5-7B", "h20", 6, 131072),
    ("4B", "h100", 8, 200000), ("14B", "h20", 2, 65536)])
def test_every_lowered_plan_fits_by_solve_memory_at_its_budget(model: str, gpu: str, gpus: int, length: int):
    (answer,) = solver.plan(model, gpu=gpu, max_model_len=length, budget_gpus=gpus, token_budget="auto", top=10)
    lowered = [planned for planned in answer.plans if planned.lowered_budget]
    assert lowered
    for planned in lowered:
        estimate = solver.estimate_memory(model, gpu, planned.gpus, length, sp=planned.sp, env=planned.env,
                                          offload=planned.offload, max_token_len_per_gpu=planned.max_token_len_per_gpu)
        assert estimate.fits and (planned.memory_gb, planned.headroom_gb) == (estimate.total_gib, estimate.headroom_gib)
        assert estimate.tables is None or estimate.tables.trains, (planned, estimate.tables)


def test_cli_memory_with_a_token_budget(cli):
    flags = ["memory", "--model", "qwen2.5-7b", "--gpu", "h20", "--gpus", "6", "--len", "128k", "--sp", "2", "--env",
             "--offload"]
    status, out, _ = cli(*flags, "--token-budget", "64k")
    assert status == 1 and "(65536 per GPU, your token budget)" in out and "no length fits with this setting and " \
        "token budget" in " ".join(out.split())
    status, out, _ = cli(*flags, "--token-budget", "64k", "--json")
    assert (status, json.loads(out)["max_token_len_per_gpu"], json.loads(out)["tokens_per_gpu"]) == (1, 65536, 65536)
    _, out, _ = cli("memory", "--model", "8B", "--gpu", "a100", "--gpus", "4", "--len", "4096", "--env",
                    "--token-budget", "24576")
    assert "says 'Env' at 12288) (a row is taken for its tokens per GPU, 24576 by your budget, not for the length)" \
        in " ".join(out.split())
    status, out, err = cli(*flags, "--token-budget", "60000")
    assert (status, out) == (2, "") and "must be at least ceil(131072 / 2) = 65536" in err
    # A length that SP does not divide: the least budget rounds up.
    odd = ("memory", "--model", "4B", "--gpu", "h100", "--gpus", "2", "--len", "10001", "--sp", "2")
    assert cli(*odd, "--token-budget", "5000") == (2, "", (
        "solve memory: error: --token-budget 5000 holds no sequence of 10001 tokens with SP=2: it must be at least "
        "ceil(10001 / 2) = 5001\n"))
    status, out, _ = cli(*odd, "--token-budget", "5001", "--json")
    assert (status, json.loads(out)["tokens_per_gpu"]) == (0, 5001)


@pytest.mark.parametrize("mode", ["auto", "default"])
def test_cli_memory_refuses_a_planner_token_budget_mode_saying_whose_it_is(cli, mode: str):
    # The planner's --token-budget takes default, auto or a cap (solve cluster's, a mode alone, points here); this one
    # takes tokens.
    error = (f"argument --token-budget: expected tokens per GPU (32768 or 32k), got '{mode}' (leave it out for "
             "Trinity's default; auto is the planner's: solve --token-budget auto)")
    assert cli("memory", "--model", "4B", "--gpu", "a100", "--gpus", "4", "--len", "8k", "--token-budget", mode) == (
        2, "", f"usage: solve memory [options] (--help lists them)\nsolve memory: error: {error}\n")


@pytest.mark.parametrize(("head", "message"), [
    ('gpu: "a\\nb"\nmemory_gb: 64', "a GPU type's name is printable text, got 'a\\nb'"),
    ("gpu: ' '\nmemory_gb: 64", "a GPU type's name is printable text, got ' '"),
    ("gpu: mine\nmemory_gb: 64\nmemory_mib: 100000",
     "mine: 100000 MiB is not what a GPU sold as 64 GB reports (from 55706 to 68812 MiB): give one of the two"),
])
def test_a_cells_files_gpu_type_is_checked_as_one_given_by_its_memory(tmp_path: Path, head: str, message: str):
    cells = tmp_path / "cells.yaml"
    cells.write_text(head + "\nsource: mine\ntables:\n  - gpus: 2\n    section: s\n    models: [4B]\n    rows:\n"
                     "      - {max_model_len: 8192, cells: {4B: Env}}\n", encoding="utf-8")
    with pytest.raises(TableError) as caught:
        load_gpu_type(cells, CATALOG.models, CATALOG.gpu_types)
    assert str(caught.value) == f"{cells}: {message}"


def test_a_config_is_known_by_its_folder_too(cli, tmp_path: Path):
    # A checkpoint of Qwen3-8B's shape whose _name_or_path is a snapshot's hash, in a folder Qwen3-8B: the
    # same model (its tables) however it is given.
    qwen = CATALOG.model("8B")
    folder = tmp_path / "models" / "Qwen3-8B"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({
        "_name_or_path": "3c0a9e1f", "model_type": "qwen3", "hidden_size": qwen.hidden_size, "intermediate_size": qwen.intermediate_size,
        "num_hidden_layers": qwen.num_layers, "num_attention_heads": qwen.num_attention_heads,
        "num_key_value_heads": qwen.num_key_value_heads, "head_dim": qwen.head_dim, "vocab_size": qwen.vocab_size,
        "max_position_embeddings": qwen.native_context}), encoding="utf-8")
    assert load_model_config(folder).aliases == ("Qwen3-8B",)
    for path in (folder, folder / "config.json", folder / "."):
        status, out, _ = cli("--model-config", str(path), "--gpu", "a100", "--gpus", "4", "--len", "32k", "--json")
        [answer] = json.loads(out)
        assert (status, answer["model"], answer["plans"][0]["evidence"]) == (0, "Qwen3-8B", "documented"), path
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools: [{name: a, gpu: a100, nodes: 1, gpus_per_node: 8}]\n"
                     "jobs: [{name: j, model_config: models/Qwen3-8B, max_model_len: 32768}]\n", encoding="utf-8")
    assert [job.model for job in load_fleet(fleet, CATALOG).jobs] == ["Qwen3-8B"]


def test_a_folder_named_by_an_alias_of_another_model_does_not_rename_a_config(cli, tmp_path: Path):
    # Llama-3.1-8B's config in a folder 8B (Qwen3-8B's alias): a folder only finds a model of its shape.
    llama, qwen = CATALOG.model("Llama-3.1-8B"), CATALOG.model("8B")
    for folder, model, name_or_path in ((tmp_path / "llama" / "8B", llama, "meta-llama/Llama-3.1-8B"),
                                        (tmp_path / "qwen" / "4B", qwen, "Qwen/Qwen3-8B")):
        folder.mkdir(parents=True)
        (folder / "config.json").write_text(json.dumps({
            "_name_or_path": name_or_path, "hidden_size": model.hidden_size,
            "intermediate_size": model.intermediate_size, "num_hidden_layers": model.num_layers,
            "num_attention_heads": model.num_attention_heads, "num_key_value_heads": model.num_key_value_heads,
            "head_dim": model.head_dim, "vocab_size": model.vocab_size, "tie_word_embeddings": model.tied_embeddings,
            "max_position_embeddings": model.native_context}), encoding="utf-8")
    assert CATALOG.with_model(load_model_config(tmp_path / "llama" / "8B")).models[-1].name == "Llama-3.1-8B"
    status, out, _ = cli("--model-config", str(tmp_path / "qwen" / "4B"), "--gpu", "a100", "--gpus", "4", "--len",
                         "32k", "--json")
    [answer] = json.loads(out)
    assert (status, answer["model"], answer["plans"][0]["evidence"]) == (0, "Qwen3-8B", "documented")


def test_checkpoints_in_folders_of_one_name_are_two_models(tmp_path: Path):
    # Two jobs' configs in folders both called hf: each its own model, by its _name_or_path.
    qwen = CATALOG.model("8B")
    for name, context in (("model-a", 40960), ("model-b", 131072)):
        folder = tmp_path / name / "hf"
        folder.mkdir(parents=True)
        (folder / "config.json").write_text(json.dumps({
            "_name_or_path": f"org/{name}", "model_type": "qwen3", "hidden_size": qwen.hidden_size,
            "intermediate_size": qwen.intermediate_size, "num_hidden_layers": qwen.num_layers,
            "num_attention_heads": qwen.num_attention_heads, "num_key_value_heads": qwen.num_key_value_heads,
            "head_dim": qwen.head_dim, "vocab_size": qwen.vocab_size, "max_position_embeddings": context}),
            encoding="utf-8")
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools: [{name: a, gpu: a100, nodes: 1, gpus_per_node: 8}]\njobs:\n"
                     "  - {name: c, model_config: model-a/hf, max_model_len: 8192}\n"
                     "  - {name: d, model_config: model-b/hf, max_model_len: 8192}\n", encoding="utf-8")
    loaded = load_fleet(fleet, CATALOG)
    assert [job.model for job in loaded.jobs] == ["model-a", "model-b"]
    assert [(m.name, m.native_context, m.aliases) for m in loaded.models] == [("model-a", 40960, ()),
                                                                              ("model-b", 131072, ())]


H800_CELLS = Path(__file__).parent / "data" / "cells" / "h800.yaml"


def test_measured_cells_are_tables_that_vouch_for_plans_as_the_sources_do(cli):
    # Made-up 8 x H800 cells: calibrated on, the memory model keeps them only without its safety margin; as
    # tables (--cells), each cell is the documented answer for its row, whatever the memory model says.
    mine = yaml.safe_load(H800_CELLS.read_text(encoding="utf-8"))
    for row in mine["tables"][0]["rows"]:
        for model, setting in row["cells"].items():
            status, out, err = cli("--model", model, "--gpu", "h800", "--gpus", "8", "--exact", "--len",
                                   str(row["max_model_len"]), "--cells", str(H800_CELLS), "--json")
            best = json.loads(out)[0]["plans"][0]
            label = Setting(env=best["env"], offload=best["offload"], sp=best["sp"]).label
            assert (status, err, label, best["evidence"]) == (0, "", setting, "documented"), (model, row)
    # Without --gpu, the H800 is one of the GPU types with tables; solve memory says what the table says.
    status, out, _ = cli("--model", "14B", "--gpus", "8", "--len", "32k", "--cells", str(H800_CELLS), "--json")
    assert [answer["gpu"] for answer in json.loads(out)] == ["A100-80GB", "H20-96GB", "H800-80GB"]
    status, out, _ = cli("memory", "--model", "14B", "--gpu", "h800", "--gpus", "8", "--len", "32k", "--sp", "2",
                         "--env", "--cells", str(H800_CELLS), "--json")
    assert json.loads(out)["tables"]["evidence"] == "documented"


@pytest.mark.parametrize(("cells", "message"), [
    (["tables/feasibility/a100-80gb.yaml"],
     ("solve: error: --cells tables/feasibility/a100-80gb.yaml: A100-80GB has a table for 1, 2, 4 and 6 GPUs "
      "already; measured cells join the tables where they have none (give the GPU type a name of its own to plan "
      "with yours alone)\n")),
    ([str(H800_CELLS), str(H800_CELLS)],
     f"solve: error: --cells {H800_CELLS}: the same file is given twice; give each file once\n"),
])
def test_cells_that_would_clash_are_refused_with_one_line(cli, cells: list[str], message: str):
    flags = [flag for path in cells for flag in ("--cells", path)]
    status, out, err = cli("--model", "14B", "--gpus", "8", "--len", "32k", *flags)
    assert (status, out, err) == (2, "", message)


def test_a_table_in_two_cells_files_is_blamed_on_the_earlier_file(cli, tmp_path: Path):
    again = tmp_path / "h800-again.yaml"
    again.write_text(H800_CELLS.read_text(encoding="utf-8"), encoding="utf-8")
    status, out, err = cli("--model", "14B", "--gpus", "8", "--len", "32k", "--cells", str(H800_CELLS),
                           "--cells", str(again))
    assert (status, out, err) == (2, "", (f"solve: error: --cells {again}: a table of H800-80GB for 8 trainer GPUs, "
                                          f"which --cells {H800_CELLS} has already: {ONE_TABLE}\n"))


def test_calibrating_says_which_fits_only_hold_without_the_safety_margin(cli, tmp_path: Path):
    out_file = tmp_path / "h800-model.yaml"
    status, out, _ = cli("calibrate", "--cells", str(H800_CELLS), "--out", str(out_file))
    fit = load_memory_model(out_file).fit
    assert status == 0 and fit.wrong_failures == 0 and fit.failures_within_margin
    assert out.splitlines()[0] == (
        f"wrote {out_file}: {fit.observations} observations, 0 predicted to fit that did not, 0 predicted not to fit "
        f"that did, and {fit.failures_within_margin} that fit but not within the default safety margin of 0.01 (plans "
        "take them with --margin 0, or as tables with --cells)")
    # and --margin 0 takes them
    status, out, _ = cli("--model", "14B", "--gpu", "h800", "--gpus", "8", "--exact", "--len", "32k", "--memory-model",
                         str(out_file), "--margin", "0", "--json")
    best = json.loads(out)[0]["plans"][0]
    assert (best["env"], best["offload"], best["sp"]) == (True, False, 2)


def test_cells_may_name_a_model_config_model_and_a_gpu_by_its_nvidia_smi_name(cli, tmp_path: Path):
    config = Path(__file__).parent / "data" / "model-config" / "config.json"
    name = solver.load_model_config(config).name
    cells = tmp_path / "cells.yaml"
    cells.write_text(f"gpu: NVIDIA H800\nmemory_gb: 80\nsource: mine\ntables:\n  - gpus: 8\n    section: '8 x H800'\n"
                     f"    models: ['{name}']\n    rows:\n      - {{max_model_len: 32768, cells: {{'{name}': SP=2}}}}\n",
                     encoding="utf-8")
    status, out, err = cli("--model-config", str(config), "--cells", str(cells), "--gpu", "h800", "--gpus", "8",
                           "--exact", "--len", "32k", "--json")
    [answer] = json.loads(out)
    assert (status, err, answer["gpu"], answer["plans"][0]["evidence"]) == (0, "", "H800-80GB", "documented")


def test_a_gpu_given_by_its_memory_as_sold_has_no_twin_with_tables(cli):
    # 80 GB as sold is taken as 80 GiB, the A100-80GB's driver figure by coincidence: its tables are not its own.
    _, out, _ = cli("--model", "4B", "--gpu", "mine", "--gpu-memory", "80", "--gpus", "2", "--exact", "--len", "32k",
                    "--json")
    assert json.loads(out)[0]["plans"][0]["evidence"] == "estimated"
    # Given as the driver reports it, 81920 MiB: the A100's table for 2 GPUs says Env + SP=2 at 32768.
    _, out, _ = cli("--model", "4B", "--gpu", "mine", "--gpu-memory", "81920MiB", "--gpus", "2", "--exact", "--len",
                    "32k", "--json")
    plan = json.loads(out)[0]["plans"][0]
    assert (plan["evidence"], plan["source"]) == ("documented", {
        "model": "Qwen3-4B", "gpus": 2, "max_model_len": 32768, "setting": "Env + SP=2", "gpu": "A100-80GB"})


def test_the_optimizer_step_must_fit_too():
    # Without Offload, AdamW's step holds the states and one more fp32 value per parameter of the shard: 20
    # bytes. It may take 98% of the memory less the margin (97.02% at the default). Qwen3-8B on two A100s
    # (documented: Env trains at 4096) takes 77.28 GiB then, of the 77.62 allowed; Qwen3-32B on eight H100s
    # takes 77.28 GiB of 77.27: no length fits without Offload (without a margin it would, of 78.05).
    coefficients, margin = load_memory_model().coefficients, DEFAULT_MARGIN
    eight_b = breakdown(CATALOG.model("8B"), 80, 2, Setting(env=True), 4096, coefficients, margin)
    assert eight_b.step_gib == pytest.approx(20 * 8.191e9 / 2 / 2**30 + 1) and eight_b.step_fits
    assert eight_b.step_usable_gib == pytest.approx(0.98 * 0.99 * 80)
    h100 = CATALOG.gpu("h100").memory_gib
    big = breakdown(CATALOG.model("32B"), h100, 8, Setting(env=True, sp=4), 4096, coefficients, margin)
    assert big.total_gib <= big.usable_gib and not big.step_fits and not big.fits
    assert big.headroom_gib == pytest.approx(0.98 * 0.99 * h100 - big.step_gib)
    assert longest_fitting(CATALOG.model("32B"), h100, 8, Setting(env=True, sp=4), coefficients, margin) is None
    without_margin = breakdown(CATALOG.model("32B"), h100, 8, Setting(env=True, sp=4), 4096, coefficients)
    assert without_margin.step_fits and without_margin.step_usable_gib == pytest.approx(0.98 * h100)
    assert longest_fitting(CATALOG.model("32B"), h100, 8, Setting(env=True, sp=4), coefficients) is not None
    offloaded = breakdown(CATALOG.model("32B"), h100, 8, Setting(env=True, offload=True, sp=4), 4096, coefficients)
    assert offloaded.step_gib == 0 and offloaded.fits  # the step runs on the CPU


def test_solve_memory_says_when_only_the_optimizer_step_does_not_fit(cli):
    status, out, _ = cli("memory", "--model", "32B", "--gpu", "h100", "--gpus", "8", "--len", "4096", "--sp", "8",
                         "--env")
    assert status == 1 and "does not fit (estimated): the optimizer step is 0.01 GiB over; it takes 77.28 GiB " \
                           "of the 77.27 it may (97.0% of the memory): too much" in " ".join(out.split())
    status, out, _ = cli("memory", "--model", "32B", "--gpu", "h100", "--gpus", "8", "--len", "4096", "--sp", "8",
                         "--env", "--margin", "0")  # the margin applies to the optimizer step's share too
    assert status == 0 and "the optimizer step takes 77.28 GiB of the 78.05 it may (98.0% of the memory)" in " ".join(
        out.split())


def test_solve_memory_json_gives_the_verdict_beside_the_memory_models_own(cli):
    # The H20 table for 4 GPUs says Env + SP=4 at 61440 for Qwen3-8B, so SP=4 without Env ran out of memory
    # there, where the memory model predicts it fits: the table decides, and `trains` says so.
    status, out, _ = cli("memory", "--model", "8B", "--gpu", "h20", "--gpus", "4", "--len", "61440", "--sp", "4", "--json")
    found = json.loads(out)
    assert (status, found["fits"], found["step_fits"], found["trains"], found["tables"]["trains"]) == (
        1, True, True, False, False)
    assert (found["node_gpus"], found["memory_model"]) == (8, None)  # the inputs that change the figures


def test_headroom_is_the_room_at_the_tighter_peak():
    # Qwen3-32B on 8 GPUs of 80 GiB with Env at 1024 tokens: the activations leave 1.53 GiB, the optimizer
    # step (20 bytes per parameter of the shard, 98% of the memory less the 1% margin) only 0.34.
    gpu = CATALOG.gpu("a100")  # 80 GiB as the driver reports it
    result = breakdown(CATALOG.model("32B"), gpu.memory_gib, 8, Setting(env=True), 1024, load_memory_model().coefficients,
                       load_memory_model().margin)
    assert result.fits and result.step_binds
    assert result.headroom_gib == pytest.approx(0.98 * 0.99 * 80 - result.step_gib)
    assert result.headroom_gib < result.usable_gib - result.total_gib
    with_offload = breakdown(CATALOG.model("32B"), gpu.memory_gib, 8, Setting(env=True, offload=True), 1024,
                             load_memory_model().coefficients, load_memory_model().margin)
    assert not with_offload.step_binds and with_offload.headroom_gib == with_offload.usable_gib - with_offload.total_gib


def test_each_peak_fits_up_to_exactly_its_usable_memory_and_the_step_binds_only_with_less_room():
    # Breakdowns as written, to pin the edges: a peak exactly at its usable memory fits (it is within it); the
    # headroom is the optimizer step's only where the step has strictly less room than the activations, and never
    # with Offload (no step on the GPU), even where the activations may take more of the memory than the step's
    # 98% (Env with a usable_env of 1, which calibration allows).
    def made(total: float, usable: float, step: float, step_usable: float) -> Breakdown:
        return Breakdown(terms=Terms(**dict.fromkeys(TERMS, 0.0)), total_gib=total, usable_gib=usable, memory_gib=80.0,
                         tokens_per_gpu=1024, step_gib=step, step_usable_gib=step_usable)

    exact = made(72.0, 72.0, 78.4, 78.4)
    assert exact.fits and exact.step_fits and exact.headroom_gib == 0
    assert not exact.step_binds  # a tie: as little room at either peak
    assert not made(72.5, 72.0, 10.0, 78.4).fits and not made(10.0, 72.0, 78.5, 78.4).fits
    tight_step = made(70.0, 72.0, 77.4, 78.4)  # 1 GiB left at the step, 2 after the activations
    assert tight_step.step_binds and tight_step.headroom_gib == pytest.approx(1.0)
    offload = made(0.5, 80.0, 0.0, 78.4)
    assert not offload.step_binds and offload.headroom_gib == 79.5


def test_a_thin_caution_takes_the_room_at_the_tighter_peak_and_the_cards_whole_memory():
    # Estimates as written, beyond the calibration, for Qwen3-8B on 8 GPUs at SP=1 (8 ranks: no other caution).
    def made(total: float, usable: float, step: float, step_usable: float, memory: float) -> MemoryEstimate:
        return MemoryEstimate(terms=Terms(**dict.fromkeys(TERMS, 0.0)), total_gib=total, usable_gib=usable,
                              memory_gib=memory, tokens_per_gpu=65536, step_gib=step, step_usable_gib=step_usable,
                              longest_len=None, beyond_calibration=("made up",))

    def cautions(estimate: MemoryEstimate) -> tuple[str, ...]:
        return estimate.with_cautions(CATALOG.model("8B"), CATALOG.gpu("h100"), 8, 1, 32768, env=False,
                                      room=MarginRoom(0.01, 0.01, 74.0)).cautions

    # The optimizer step binds: 0.6 GiB left at it, though the activations leave 10.
    [thin] = cautions(made(60.0, 70.0, 76.4, 77.0, 80.0))
    assert thin.startswith("0.6 GiB to spare where the estimate extrapolates, and its error there is unmeasured")
    assert cautions(made(60.0, 70.0, 10.0, 77.0, 80.0)) == ()  # 10 GiB at the activations, the tighter peak
    # Under 1 GiB is thin on a card of at most 48 GiB as on one of 50: the GiB a small card runs optimistic by is
    # its default margin's (`default_margin`), not counted again here, so 1.5 GiB to spare is not thin on either.
    [thin] = cautions(made(44.5, 45.0, 0.0, 46.6, 48.0))
    assert thin.startswith("0.5 GiB to spare where the estimate extrapolates")
    assert cautions(made(43.5, 45.0, 0.0, 46.6, 48.0)) == cautions(made(45.5, 47.0, 0.0, 48.5, 50.0)) == ()
    # Within the calibration, however thin, no caution.
    assert made(60.0, 70.0, 76.4, 77.0, 80.0).model_copy(update={"beyond_calibration": ()}).with_cautions(
        CATALOG.model("8B"), CATALOG.gpu("h100"), 8, 1, 32768, env=False, room=MarginRoom(0.01, 0.01, 74.0)
    ).cautions == ()

def test_calibrate_fits_on_cells_of_a_model_the_catalogue_lacks(cli, tmp_path: Path):
    folder = qwen3_8b_checkpoint(tmp_path / "my-sft-8b")
    cells = tmp_path / "cells.yaml"
    cells.write_text("gpu: H100-80GB\nmemory_gb: 80\nsource: mine\ntables:\n  - gpus: 8\n    section: '8 x H100'\n"
                     "    models: [my-sft-8b]\n    rows:\n      - {max_model_len: 65536, cells: {my-sft-8b: SP=4}}\n",
                     encoding="utf-8")
    status, _, err = cli("calibrate", "--cells", str(cells))  # it says how to add the model, in one line
    assert status == 2 and err.count("\n") == 1 and err.startswith(
        f"solve calibrate: error: --cells {cells}: line 5: table gpus=8: unknown model 'my-sft-8b' in the table's "
        "models (known: ")
    own = ("a model of your own: give its config.json with --model-config, which names it by its _name_or_path's last "
           "part, else by its folder's or file's name)\n")
    assert err.endswith(f"; {own}")
    # With a config given, the cells name the model as the config does (here not as its folder): the error lists it
    # so, and says how it is named, not only to give the config that was given.
    status, _, err = cli("calibrate", "--cells", str(cells), "--model-config", str(qwen3_8b_checkpoint(
        tmp_path / "my-sft-8b-hf", _name_or_path="/ckpt/run7/global_step_500/huggingface")))
    assert status == 2 and err.endswith(f", Llama-3.1-70B, huggingface; {own}")
    fitted = tmp_path / "fit.yaml"
    status, out, _ = cli("calibrate", "--cells", str(cells), "--model-config", str(folder), "--out", str(fitted))
    # SP=4 trained at 65536 on 8 GPUs; vanilla, Env, SP=2 and Env + SP=2 did not: five observations.
    assert status == 0 and out.startswith(f"wrote {fitted}: 5 observations") and load_memory_model(fitted).fit.positives == 1
    # the command to plan with the fit names the model by its config.json (it gave --model M too, which the planner
    # refuses beside --model-config), and plans with it
    assert out.splitlines()[-1] == (
        f"plan with it: solve --model-config {folder} --gpu H100-80GB --len L --memory-model {fitted} --cells {cells} "
        "(your cells vouch for the settings they measured, as tables do; the fit estimates the rest)")
    command = out.splitlines()[-1].removeprefix("plan with it: solve ").split(" (your cells")[0].split()
    status, out, _ = cli(*[{"L": "65536"}.get(word, word) for word in command], "--gpus", "8")
    assert status == 0 and "SP=4 on 8 of 8 GPUs" in out and "documented: the H100-80GB table for 8 GPUs" in out
    assert cli("calibrate", "--model-config", str(folder)) == (
        2, "", ("solve calibrate: error: --model-config describes a model that the cells of --cells FILE name: give "
                "them too, the measurements to fit on\n"))
    others = tmp_path / "others.yaml"
    others.write_text(cells.read_text(encoding="utf-8").replace("my-sft-8b", "Qwen3-8B"), encoding="utf-8")
    status, _, err = cli("calibrate", "--cells", str(others), "--model-config", str(folder))
    assert status == 0 and err.startswith("solve calibrate: warning: no cell of yours names my-sft-8b, the model of "
                                          "--model-config")


def test_what_runs_out_of_memory_on_more_gpus_is_not_estimated_to_fit_on_fewer(cli, tmp_path: Path):
    # 8 H100s measured SP=2 for Qwen3-8B at 16384, so vanilla and Env ran out of memory there; on 7 GPUs each
    # holds more of the states and the same tokens, so no estimate says Env (or vanilla) trains there.
    cells = tmp_path / "h8.yaml"
    cells.write_text("gpu: H100-80GB\nmemory_gb: 80\nsource: mine\ntables:\n  - gpus: 8\n    section: '8 x H100'\n"
                     "    models: [8B]\n    rows:\n      - {max_model_len: 16384, cells: {8B: SP=2}}\n", encoding="utf-8")
    status, out, _ = cli("--model", "8B", "--gpu", "h100", "--gpus", "7", "--len", "16k", "--cells", str(cells),
                         "--top", "20", "--json")
    plans = json.loads(out)[0]["plans"]
    assert status == 0 and plans and all(plan["sp"] > 1 or plan["offload"] for plan in plans)
    status, out, _ = cli("--model", "8B", "--gpu", "h100", "--gpus", "7", "--exact", "--len", "16k", "--cells",
                         str(cells), "--explain")
    assert status == 0 and ("but the H100-80GB table for 8 GPUs of your cells (mine) says it ran out of memory at "
                            "16384, and on fewer GPUs each holds more") in " ".join(out.split())


def test_cells_of_a_base_model_are_checked_against_its_releases_tables(cli, tmp_path: Path):
    # Qwen3-8B-Base has Qwen3-8B's shape: '-' at 32768 on 8 A100s contradicts the 2-, 4- and 6-GPU tables, where
    # Qwen3-8B trains there.
    cells = tmp_path / "base.yaml"
    cells.write_text("gpu: A100-80GB\nmemory_gb: 80\nsource: mine\ntables:\n  - gpus: 8\n    section: x\n"
                     "    models: [8B-Base]\n    rows:\n      - {max_model_len: 32768, cells: {8B-Base: '-'}}\n",
                     encoding="utf-8")
    assert cli("--model", "8B-Base", "--gpu", "a100", "--gpus", "8", "--len", "32k", "--cells", str(cells)) == (2, "", (
        f"solve: error: --cells {cells}: A100-80GB, Qwen3-8B at 32768: Env + Offload + SP=2 trains on 2 GPUs but 8 "
        "GPUs need - (Qwen3-8B-Base, of its shape) (more GPUs only shard the states further); and 2 more (solve "
        "tables --check, with the same --cells and --model-config, lists them); check the cells\n"))


def test_calibrate_refuses_cells_that_contradict_one_another_across_files(cli, tmp_path: Path):
    def cells(name: str, gpus: int, setting: str) -> str:
        path = tmp_path / name
        path.write_text(f"gpu: H100-80GB\nmemory_gb: 80\nsource: mine\ntables:\n  - gpus: {gpus}\n    section: x\n"
                        f"    models: [8B]\n    rows:\n      - {{max_model_len: 32768, cells: {{8B: {setting}}}}}\n",
                        encoding="utf-8")
        return str(path)

    first, fewer, more = cells("a.yaml", 8, "SP=2"), cells("c.yaml", 4, "vanilla"), cells("e.yaml", 16, "SP=2")
    out = tmp_path / "fit.yaml"
    # The second file is named: the first alone contradicts nothing.
    assert cli("calibrate", "--cells", first, "--cells", fewer, "--out", str(out)) == (2, "", (
        f"solve calibrate: error: --cells {fewer}: H100-80GB, Qwen3-8B at 32768: vanilla trains on 4 GPUs but 8 GPUs "
        "need SP=2 (more GPUs only shard the states further); check the cells\n")) and not out.exists()
    # Files with tables for other counts that agree are fitted together, each named.
    status, text, _ = cli("calibrate", "--cells", first, "--cells", more)
    assert status == 0 and '\nsource: "calibrated on a.yaml, e.yaml"\n' in text


@pytest.mark.parametrize("second", [
    ("8B", 32768, "SP=4"),  # the same cell, another setting
    ("8B", 65536, "vanilla"),  # vanilla at the longer length, where SP=2 was needed at the shorter (one file: refused)
    ("4B", 32768, "SP=2"),  # another model: the two would still be two tables for one count
])
def test_calibrate_refuses_two_files_with_a_table_for_one_gpu_count_as_planning_does(
        cli, tmp_path: Path, second: tuple[str, int, str]):
    # Planning takes one table per GPU type and count; calibrating read the second as evidence beside the first, and
    # missed contradictions between them across lengths (rc 0, a model written). Both now give the same one line.
    model, length, setting = second
    first, later, out = tmp_path / "a.yaml", tmp_path / "b.yaml", tmp_path / "fit.yaml"
    head = "gpu: H100-80GB\nmemory_gb: 80\nsource: mine\ntables:\n  - gpus: 8\n    section: x\n"
    first.write_text(head + "    models: [8B]\n    rows:\n      - {max_model_len: 32768, cells: {8B: SP=2}}\n",
                     encoding="utf-8")
    later.write_text(head + f"    models: [{model}]\n    rows:\n      - {{max_model_len: {length}, cells: "
                     f"{{{model}: {setting}}}}}\n", encoding="utf-8")
    said = (f"error: --cells {later}: a table of H100-80GB for 8 trainer GPUs, which --cells {first} has already: "
            f"{ONE_TABLE}\n")
    files = ["--cells", str(first), "--cells", str(later)]
    for tables in ([], ["--with-tables"]):
        assert cli("calibrate", *files, *tables, "--out", str(out)) == (2, "", "solve calibrate: " + said)
        assert not out.exists()
    assert cli("tables", *files) == (2, "", "solve tables: " + said)
    with pytest.raises(solver.QueryError) as refused:  # from Python, the same words without the flag
        solver.calibrate_memory_model([first, later])
    assert str(refused.value) == f"{later}: a table of H100-80GB for 8 trainer GPUs, which {first} has already: {ONE_TABLE}"


def test_calibrate_refuses_in_one_file_the_rows_that_two_files_give(cli, tmp_path: Path):
    # SP=2 at 32768 and vanilla at 65536 on the same 8 H100s, as two rows of one table: the longer needs no more.
    cells, out = tmp_path / "both.yaml", tmp_path / "fit.yaml"
    cells.write_text("gpu: H100-80GB\nmemory_gb: 80\nsource: mine\ntables:\n  - gpus: 8\n    section: x\n"
                     "    models: [8B]\n    rows:\n      - {max_model_len: 32768, cells: {8B: SP=2}}\n"
                     "      - {max_model_len: 65536, cells: {8B: vanilla}}\n", encoding="utf-8")
    assert cli("calibrate", "--cells", str(cells), "--out", str(out)) == (2, "", (
        f"solve calibrate: error: --cells {cells}: H100-80GB, 8 GPUs, Qwen3-8B: SP=2 at 32768 but vanilla trains at "
        "the longer 65536 (memory only grows with the length); check the cells\n")) and not out.exists()


def test_calibrate_names_the_file_that_gives_an_earlier_files_gpu_type_other_aliases(cli, tmp_path: Path):
    # Two files of one GPU type of your own: the first fixes its aliases, and the second's error names the second.
    body = ("memory_gb: 48\nmemory_mib: 49140\nsource: mine\ntables:\n  - gpus: {}\n    section: x\n    models: [8B]\n"
            "    rows:\n      - {{max_model_len: 8192, cells: {{8B: Env + Offload}}}}\n")
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    first.write_text("gpu: My-GPU\n" + body.format(4), encoding="utf-8")
    second.write_text("gpu: My-GPU\naliases: [mine]\n" + body.format(8), encoding="utf-8")
    assert cli("calibrate", "--cells", str(first), "--cells", str(second)) == (2, "", (
        f"solve calibrate: error: --cells {second}: aliases mine: My-GPU is known already (the catalogue's, or an "
        "earlier cells file's), whose aliases for it stand (none); give it none here\n"))


def test_a_file_that_repeats_an_earlier_files_table_and_gives_other_aliases_gets_one_message(cli, tmp_path: Path):
    # Planning gave the repeated table's message, calibrating (which takes a table twice) the aliases': now both give
    # the file's other error first, as calibrating reads it.
    first = _own_gpu_cells(tmp_path / "a.yaml", "gpu: My-GPU\nmemory_gb: 48\nmemory_mib: 49140\n", 8)
    second = _own_gpu_cells(tmp_path / "b.yaml", "gpu: My-GPU\naliases: [mine]\nmemory_gb: 48\nmemory_mib: 49140\n", 8)
    message = (f"error: --cells {second}: aliases mine: My-GPU is known already (the catalogue's, or an earlier cells "
               "file's), whose aliases for it stand (none); give it none here\n")
    assert cli("calibrate", "--cells", str(first), "--cells", str(second)) == (2, "", "solve calibrate: " + message)
    assert cli("--model", "8B", "--gpu", "my-gpu", "--len", "8192", "--cells", str(first), "--cells",
               str(second)) == (2, "", "solve: " + message)


def _own_gpu_cells(path: Path, head: str, gpus: int) -> Path:
    """A cells file of one table (Qwen3-8B on `gpus` GPUs) below `head`, its lines from ``gpu:`` to ``source:``."""
    path.write_text(head + f"source: mine\ntables:\n  - gpus: {gpus}\n    section: x\n    models: [8B]\n    rows:\n"
                    "      - {max_model_len: 8192, cells: {8B: Env + Offload}}\n", encoding="utf-8")
    return path


def test_a_memory_that_differs_from_an_earlier_cells_files_is_said_to_be_that_files(cli, tmp_path: Path):
    # The 49140 MiB is the first file's, not the catalogue's (which lacks My-GPU): planning and calibrating say so.
    first = _own_gpu_cells(tmp_path / "a.yaml", "gpu: My-GPU\nmemory_gb: 48\nmemory_mib: 49140\n", 4)
    second = _own_gpu_cells(tmp_path / "b.yaml", "gpu: My-GPU\nmemory_gb: 48\nmemory_mib: 49152\n", 8)
    said = (f"--cells {second}: GPU My-GPU: memory_mib 49152 is not the 49140 that {first} gives for My-GPU (leave it "
            "out to take that)\n")
    assert cli("tables", "--cells", str(first), "--cells", str(second)) == (2, "", f"solve tables: error: {said}")
    assert cli("calibrate", "--cells", str(first), "--cells", str(second)) == (2, "", f"solve calibrate: error: {said}")


def test_calibrate_refuses_the_cells_files_that_planning_refuses(cli, tmp_path: Path):
    # A new GPU type whose alias names another, and one GPU type with two memories, as solve --cells refuses them.
    clash = _own_gpu_cells(tmp_path / "clash.yaml", "gpu: My-GPU\naliases: [h100]\nmemory_gb: 48\n", 4)
    said = f"--cells {clash}: h100 names H100-80GB (79.6 GiB), another GPU type: give yours a name of its own\n"
    assert cli("tables", "--cells", str(clash)) == (2, "", f"solve tables: error: {said}")
    assert cli("calibrate", "--cells", str(clash)) == (2, "", f"solve calibrate: error: {said}")
    with pytest.raises(QueryError, match=r"clash.yaml: h100 names H100-80GB \(79.6 GiB\), another GPU type"):
        solver.calibrate_memory_model([clash])
    first = _own_gpu_cells(tmp_path / "a.yaml", "gpu: My-GPU\nmemory_gb: 48\nmemory_mib: 49140\n", 4)
    second = _own_gpu_cells(tmp_path / "b.yaml", "gpu: My-GPU\nmemory_gb: 48\nmemory_mib: 49152\n", 8)
    with pytest.raises(TableError, match=r"b.yaml: GPU My-GPU: memory_mib 49152 is not the 49140 that .*a.yaml gives"):
        solver.calibrate_memory_model([first, second])
    # A second file of one GPU type that agrees with the first still calibrates with it, and the A100's own cells
    # for a count its tables have are evidence to fit (planning refuses them: they would join its tables).
    agreeing = _own_gpu_cells(tmp_path / "c.yaml", "gpu: My-GPU\nmemory_gb: 48\n", 8)
    assert cli("calibrate", "--cells", str(first), "--cells", str(agreeing))[0] == 0
    mine = _own_gpu_cells(tmp_path / "a100.yaml", "gpu: A100-80GB\nmemory_gb: 80\n", 8)
    assert cli("calibrate", "--cells", str(mine))[0] == 0

def test_a_plan_says_when_its_room_is_the_optimizer_steps(cli):
    status, out, _ = cli("--model", "32B", "--gpu", "a100", "--gpus", "8", "--exact", "--len", "1024", "--env",
                         "--no-offload")
    assert status == 0 and ("GiB per GPU predicted, 0.3 GiB to spare at the optimizer step's peak, the tighter one "
                            "(memory model)") in " ".join(out.split())
    status, out, _ = cli("--model", "32B", "--gpu", "a100", "--gpus", "8", "--exact", "--len", "1024", "--env",
                         "--no-offload", "--json")
    plan = json.loads(out)[0]["plans"][0]
    assert (plan["headroom_at_step"], plan["headroom_gb"]) == (True, 0.34)


FIND_ONE = ("to find a setting that trains, run the planner, which tries every SP, Env and Offload (lower token budgets "
            "too with --token-budget auto):")


def test_solve_memory_points_to_the_planner_where_the_setting_does_not_train(cli):
    asked = ("--model", "32B", "--gpu", "h100", "--gpus", "8", "--len", "32k")
    status, out, _ = cli("memory", *asked, "--sp", "2", "--token-budget", "32k")
    assert status == 1 and "does not fit (estimated): " in out
    assert out.splitlines()[-2:] == [FIND_ONE, "  solve --model 32B --gpu h100 --gpus 8 --len 32768"]
    status, out, _ = cli(*shlex.split(out.splitlines()[-1])[1:])  # the command it gives: a setting that trains
    assert status == 0
    assert out.splitlines()[1] == "plan           Env + Offload + SP=2 on 8 of 8 GPUs (none left for rollout)"
    status, out, _ = cli("memory", *asked, "--env", "--offload", "--sp", "2")
    assert status == 0 and FIND_ONE not in out


def test_solve_memorys_planner_command_keeps_the_options_the_planner_shares(cli, tmp_path: Path):
    # The model, GPU and memory options carry over, each as the planner reads it back (--gpu-memory as given, in GB or
    # the driver's MiB; a file's name quoted for the shell); the setting's own (--sp, --env, --token-budget) are left
    # to the planner.
    coefficients = tmp_path / "my model.yaml"
    shutil.copy(shipped_tables_directory() / "memory-model.yaml", coefficients)
    asked = ("--model", "8B", "--gpu", "mine", "--gpus", "4", "--len", "16k", "--node-gpus", "4", "--host-ram", "512",
             "--margin", "0.05", "--memory-model", str(coefficients))
    for memory in ("40", "40960MiB"):
        status, out, _ = cli("memory", *asked, "--gpu-memory", memory, "--sp", "2", "--token-budget", "16k")
        command = out.splitlines()[-1]
        assert (status, command) == (1, ("  solve --model 8B --gpu mine --gpus 4 --len 16384 --gpu-memory "
                                         f"{memory} --node-gpus 4 --host-ram 512 --margin 0.05 --memory-model "
                                         f"'{coefficients}'"))
        status, out, _ = cli(*shlex.split(command)[1:], "--json")
        plan = json.loads(out)[0]["plans"][0]
        assert (status, plan["gpus"], plan["env"], plan["offload"], plan["sp"]) == (0, 4, True, True, 2)


def test_solve_memorys_planner_command_keeps_a_model_config_and_cells(cli, tmp_path: Path):
    # A checkpoint's config.json and a cells file carry over as given (the folder's name quoted for the shell).
    folder = qwen3_8b_checkpoint(tmp_path / "my sft", vocab_size=151669)
    cells = Path("tests/data/cells/h800.yaml")
    status, out, _ = cli("memory", "--model-config", str(folder), "--cells", str(cells), "--gpu", "h20", "--gpus", "1",
                         "--len", "32k", "--sp", "1")
    command = f"  solve --model-config '{folder}' --cells {cells} --gpu h20 --gpus 1 --len 32768"
    assert (status, out.splitlines()[-1]) == (1, command)


def test_solve_memorys_tables_line_says_a_fewer_gpu_offload_failure_holds_without_offload_on_more(cli):
    # Qwen3-0.6B with Env alone at 30720 on 8 A100s: the 1-GPU table says Env + Offload ran out of memory at 32768,
    # and without Offload each of the 8 holds the states besides.
    status, out, _ = cli("memory", "--model", "0.6B", "--gpu", "a100", "--gpus", "8", "--len", "30720", "--env",
                         "--sp", "1")
    assert status == 1 and ("ran out of memory there, and it ran out with Offload too, which holds as much per GPU "
                            "on 8 GPUs as on 1 (the states are on the CPU), and without Offload each GPU holds more); "
                            "where the memory model disagrees, the table, a measurement, decides") in " ".join(
        out.split())


def test_solve_memory_host_ram_decides_for_offloaded_states(cli):
    # Qwen3-8B with Env + Offload + SP=4 on four A100s at 65536: documented, and Offload needs 203.4 GiB of host
    # memory per node at start-up, every rank of the 4 loading the model where no release is named (4 x 30.51 beside
    # the pinned fp32 parameter and reference shards; hostload, s84), 183.0 while training.
    asked = ("memory", "--model", "8B", "--gpu", "a100", "--gpus", "4", "--len", "65536", "--sp", "4", "--env",
             "--offload")
    status, out, _ = cli(*asked, "--host-ram", "256GB")
    assert status == 0 and ("203.4 GiB per node for Offload (the actor's states and the reference model's shards, or "
                            "the model while it loads beside both models' pinned shards, whichever is more; here at "
                            "start-up, every rank loading the model; 183.0 while training), within --host-ram 256 GiB"
                            ) in " ".join(out.split())
    status, out, _ = cli(*asked, "--host-ram", "128")
    assert status == 1 and "more than --host-ram 128 GiB: it does not train there" in " ".join(out.split())
    # The tables' line, last but the way to a setting that trains, speaks of the GPUs' memory only, and says so.
    assert " ".join(out.split()).endswith(
        "tables: it trains (documented: the A100-80GB table for 4 GPUs says 'Env + Offload + SP=4' at 71680); that "
        f"is the GPUs' memory, and the host memory above rules it out {FIND_ONE} solve --model 8B --gpu a100 --gpus 4 "
        "--len 65536 --host-ram 128")
    # Where the tables say it runs out of memory, the host memory changes nothing they say.
    status, out, _ = cli(*asked[:8], "131072", *asked[9:], "--host-ram", "128")
    assert status == 1 and " ".join(out.split()).endswith(
        "tables: it runs out of memory (the A100-80GB table for 4 GPUs says '-' at 112640: the source's cells read as "
        "the first setting that trained in their order, '-' where none did, so this setting, or one that includes it, "
        f"ran out of memory there) {FIND_ONE} solve --model 8B --gpu a100 --gpus 4 --len 131072 --host-ram 128")
    status, out, _ = cli(*asked, "--host-ram", "256")
    assert out.rstrip().endswith("'Env + Offload + SP=4' at 71680)")
    status, out, _ = cli(*asked, "--host-ram", "128", "--json")
    found = json.loads(out)
    assert (status, found["host_ram_gib"], found["host_fits"], found["tables"]["trains"], found["trains"]) == (
        1, 128, False, True, False)
    # Without Offload the states stay on the GPUs: the model while it loads, 8.2B parameters in fp32 on each of the 4
    # ranks (no release named), beside the reference model's pinned fp32 shards: 4 x 30.51 + 40.63 GiB, rounded up.
    without_offload = (*asked[:8], "32768", *asked[9:-1], "--json")
    status, out, _ = cli(*without_offload, "--host-ram", "162.7")
    found = json.loads(out)
    assert (status, found["host_memory_gib"], found["host_fits"], found["trains"]) == (0, 162.7, True, True)
    status, out, _ = cli(*without_offload, "--host-ram", "162.6")
    assert (status, json.loads(out)["host_fits"]) == (1, False)
    status, out, err = cli(*asked, "--host-ram", "0")
    assert (status, out, err.strip().splitlines()[-1]) == (
        2, "", "solve memory: error: argument --host-ram: must be above 0 and at most 49152 GB, got 0")


def test_host_memory_exactly_the_nodes_fits_for_solve_memory_as_for_the_planner():
    # "more than host_ram_gb does not fit": exactly as much fits, in both (one rule, `host_ram_holds`).
    need = estimate_memory("8B", "a100", 4, 65536, sp=4, env=True, offload=True).host_memory_gib
    assert need is not None
    at_limit = estimate_memory("8B", "a100", 4, 65536, sp=4, env=True, offload=True, host_ram_gb=need)
    assert at_limit.host_fits and at_limit.trains
    assert not estimate_memory("8B", "a100", 4, 65536, sp=4, env=True, offload=True, host_ram_gb=need - 1e-9).host_fits
    (answer,) = plan(make_query(CATALOG, model="8B", gpu="a100", max_model_len=65536, budget_gpus=4, exact=True,
                                sp=4, env=True, offload=True, host_ram_gb=need), CATALOG)
    assert answer.plans and answer.plans[0].host_memory_gb == round(need, 1)


def test_a_mixture_of_experts_recomputes_through_its_active_experts_by_hand():
    # Qwen3-30B-A3B's own 8 active experts of 768 equal its dense intermediate_size (6144), which cannot tell the
    # two apart: with 4 active, recompute is 2 * 8192 * (2048 + 4 * 768) bytes = 0.078125 GiB (SP=1 at 4096 tokens:
    # 8192 per GPU), while the states hold every expert (30.5e9 parameters).
    shape = CATALOG.model("30B-A3B")
    assert shape.moe is not None
    fewer = shape.model_copy(update={"moe": shape.moe.model_copy(update={"active_experts": 4})})
    result = breakdown(fewer, 80, 8, Setting(), 4096, PRIOR)
    assert result.tokens_per_gpu == 8192
    assert result.terms["recompute"] == 2 * 8192 * (2048 + 4 * 768) / 2**30 == 0.078125
    assert result.terms["states"] == pytest.approx(16 * 30.5e9 / 8 / 2**30)
    assert result.terms["states"] == breakdown(shape, 80, 8, Setting(), 4096, PRIOR).terms["states"]
    # One layer's peak too: 20 * 2048 + 14 * 32 * 128 (queries) + 14 * 4 * 128 (keys) + 12 * 4 * 768 bytes a token,
    # and the 4 routed copies of the hidden state, in and out of the experts, 4 * 4 * 2048.
    assert layer_peak_bytes(fewer) == 20 * 2048 + 14 * 4096 + 14 * 512 + 12 * 3072 + 4 * 4 * 2048 == 175104


def test_estimate_memory_takes_host_ram():
    # Every rank of the 4 loading the model where no release is named: 203.31 GiB at start-up, shown 203.4.
    result = estimate_memory("8B", "a100", 4, 65536, sp=4, env=True, offload=True, host_ram_gb=128)
    assert result.host_memory_gib == pytest.approx(203.4, abs=0.01) and not result.host_fits and not result.trains
    assert estimate_memory("8B", "a100", 4, 65536, sp=4, env=True, offload=True, host_ram_gb=203.4).trains
    assert not estimate_memory("8B", "a100", 4, 65536, sp=4, env=True, offload=True, host_ram_gb=203.3).trains
    with pytest.raises(QueryError, match="host_ram_gb must be a number or None, got '128'"):
        estimate_memory("8B", "a100", 4, 65536, offload=True, host_ram_gb="128")  # type: ignore[arg-type]


# Env + Offload + SP=2 on four GPUs, never measured on four: the table for six says it ran out of memory
# ('-', or a setting tried after it) at a row that covers the length, and with Offload each GPU holds as much on
# four as on six (the states are on the CPU). The planner caps its estimates so (`within_refuting_tables`); `solve
# memory` and the tables' verdict agree.
@pytest.mark.parametrize(("model", "gpu", "length"), [
    ("4B", "h20", 65536), ("0.6B", "h20", 73728), ("1.7B", "a100", 53248), ("1.7B", "a100", 57344),
    ("4B", "a100", 53248),
])
def test_a_table_for_more_gpus_refutes_a_setting_on_fewer(model, gpu, length):
    result = estimate_memory(model, gpu, 4, length, sp=2, env=True, offload=True)
    assert result.fits and result.tables is not None and not result.trains
    assert (result.tables.trains, result.tables.source.gpus) == (False, 6)
    (answer,) = solver.plan(model, gpu=gpu, budget_gpus=4, exact=True, max_model_len=length, sp=2, env=True,
                            offload=True)
    assert answer.status == "infeasible"


def test_solve_memory_names_the_table_for_more_gpus_that_refutes_it(cli):
    asked = ("memory", "--model", "4B", "--gpu", "h20", "--gpus", "4", "--len", "65536", "--sp", "2", "--env",
             "--offload")
    status, out, _ = cli(*asked)
    assert status == 1 and ("tables: it runs out of memory (the H20-96GB table for 6 GPUs says '-' at 71680: the "
                            "source's cells read as the first setting that trained in their order, '-' where none "
                            "did, so this setting, or one that includes it, ran out of memory there, and with "
                            "Offload it holds as much per GPU on 4 GPUs as on 6 (the states are on the CPU))"
                            ) in " ".join(out.split())
    status, out, _ = cli(*asked, "--json")
    found = json.loads(out)
    assert (status, found["fits"], found["trains"], found["tables"]["source"]) == (
        1, True, False, {"model": "Qwen3-4B", "gpus": 6, "max_model_len": 71680, "setting": "-"})


def test_solve_memory_cautions_a_thin_extrapolated_fit(cli):
    # 1.48 GiB to spare at the memory model's 0.01; the 24 GiB card's default 0.06 holds back 0.05 x 23.99 x 0.928
    # = 1.11 GiB more (Env), leaving 0.4, under the 1 that is thin.
    flags = ["memory", "--model", "8B", "--gpu", "rtx-4090", "--gpus", "8", "--len", "48128", "--sp", "8", "--env",
             "--offload"]
    status, out, _ = cli(*flags)
    assert status == 0 and "caution: 0.4 GiB to spare where the estimate extrapolates" in out
    # Within the calibration (80 GiB cards, 4 GPUs), however thin: no caution.
    assert "caution" not in cli("memory", "--model", "4B", "--gpu", "a100", "--gpus", "4", "--len", "100k", "--sp", "4",
                                "--env", "--offload")[1]


def test_an_estimate_far_beyond_the_calibration_is_cautioned_for_its_margin_and_its_thin_room(cli):
    # As docs/guide.md says: Llama-3.1-70B (4.8 times the largest model fitted) with Env + SP=8 on 32 H100s at 32768
    # tokens has 11.3 GiB to spare and gets the far-beyond-calibration caution alone, the margins docs/memory.md
    # advises (s82: it got none); on 16 H200s at the longest length it fits, 0.4 GiB to spare, the thin-headroom
    # caution names the margin. Trinity 0.6 named: its rank 0 alone loads the model on H200s, so that the host memory
    # (2395.6 GiB per node with every rank loading, as counted with no release named) raises no caution of its own.
    (roomy,) = json.loads(cli("--model", "Llama-3.1-70B", "--gpu", "h100", "--gpus", "32", "--len", "32k", "--json")[1])
    plan = roomy["plans"][0]
    assert (plan["sp"], plan["env"], plan["offload"], round(plan["headroom_gb"], 1)) == (8, True, False, 11.3)
    assert plan["beyond_calibration"][0] == "70.5B parameters (calibrated up to 14.8B)"
    # s88: and the host memory's, without Offload too: each of a node's 8 ranks loading it at start-up
    assert plan["caution_codes"] == ["far-beyond-calibration", "host-memory-unchecked"]
    (thin,) = json.loads(cli("--model", "Llama-3.1-70B", "--gpu", "h200", "--gpus", "16", "--maximize", "len",
                             "--trinity-version", "0.6", "--json")[1])
    assert thin["plans"][0]["cautions"][-1].startswith("0.4 GiB to spare where the estimate extrapolates")


def test_solve_memory_cautions_data_parallel_ranks_that_are_not_a_power_of_two(cli):
    # 6 GPUs at SP=2 make 3 data-parallel ranks, which Trinity splits each batch over; `solve memory` takes no batch,
    # so it names the multiple and no flag. At SP=1 (6 ranks) likewise; 4 GPUs (4 ranks, 2 at SP=2) get none.
    flags = ["memory", "--model", "4B", "--gpu", "a100", "--len", "32k", "--json"]
    words = ("{ranks} data-parallel ranks (6 GPUs / SP={sp}): Trinity splits each training batch evenly over them, so "
             "buffer.train_batch_size (batch_size x repeat_times) must be a multiple of {ranks}")
    for gpus, sp, caution in (("6", "2", [words.format(ranks=3, sp=2)]), ("6", "1", [words.format(ranks=6, sp=1)]),
                              ("4", "1", []), ("4", "2", [])):
        assert json.loads(cli(*flags, "--gpus", gpus, "--sp", sp)[1])["cautions"] == caution


def test_solve_memory_cautions_lengths_past_what_the_model_is_known_to_handle(cli):
    # As a plan's caution does: YaRN past the 131072 tokens (a factor of 4 over 32768) Qwen validates, and a length
    # past Llama 3.1's native 131072 on its own llama3 scaling; within them, none.
    flags = ["memory", "--gpu", "h200", "--gpus", "8", "--len", "200k", "--sp", "8", "--env", "--offload", "--json"]
    assert json.loads(cli(*flags, "--model", "8B")[1])["cautions"] == [(
        "YaRN factor 5.0 at 204800 tokens: longer than YaRN is validated for (Qwen's model cards validate a factor of "
        "4 over 32768 positions: 131072 tokens): check the model's quality at this length")]
    [own] = json.loads(cli(*flags, "--model", "llama-3.1-8b")[1])["cautions"]
    assert own.startswith("beyond the native 131072, which Llama-3.1-8B's own llama3 RoPE scaling provides: no YaRN "
                          "written")
    within = [*flags[:6], "128k", *flags[7:]]
    assert json.loads(cli(*within, "--model", "8B")[1])["cautions"] == []
    # A token budget of one's own is judged at the length whose default it is (40960 x 8 / 2 = 163840 here), but the
    # length asked is still 131072, which YaRN is validated for: no caution.
    assert json.loads(cli(*within, "--model", "8B", "--token-budget", "40960")[1])["cautions"] == []


def test_the_longest_length_says_where_the_tables_refute_it(cli, tmp_path: Path):
    # Qwen3-4B on 4 A100s with Env + Offload + SP=4: the memory model fits 110592 tokens, but the 4-GPU table says
    # '-' at 112640, the row that 110592 falls to (the planner stops at 102400 there).
    flags = ["memory", "--model", "4B", "--gpu", "a100", "--gpus", "4", "--len", "100k", "--sp", "4", "--env", "--offload"]
    status, out, _ = cli(*flags)
    assert status == 0 and ("longest length the memory model fits with this setting: 110592 tokens (on a 1024-token "
                            "grid), but the tables say it runs out of memory at 112640, the row that 110592 falls to "
                            "(the A100-80GB table for 4 GPUs says '-' at 112640), and they decide: they let it train "
                            "up to 102400") in " ".join(out.split())
    estimate = json.loads(cli(*flags, "--json")[1])
    assert (estimate["longest_len"], estimate["longest_refuted"]["source"], estimate["tables_longest"]) == (
        110592, {"model": "Qwen3-4B", "gpus": 4, "max_model_len": 112640, "setting": "-"}, 102400)
    # Where the tables measured that very length (cells of your own with a row at 110592), the line says "there".
    cells = tmp_path / "own.yaml"
    cells.write_text("gpu: Own-80GB\nmemory_gb: 80\nsource: made up\ntables:\n  - gpus: 4\n    section: 4 x Own\n"
                     "    models: [4B]\n    rows:\n      - {max_model_len: 102400, cells: {4B: Env + Offload + SP=4}}\n"
                     "      - {max_model_len: 110592, cells: {4B: '-'}}\n")
    status, out, _ = cli(*flags[:4], "own-80gb", *flags[5:], "--cells", str(cells))
    assert status == 0 and ("110592 tokens (on a 1024-token grid), but the tables say it runs out of memory there (the "
                            "Own-80GB table for 4 GPUs of your cells (made up) says '-' at 110592), and they decide: "
                            "they let it train up to 102400") in " ".join(out.split())
    # Where they ran out of memory at a shorter row already (110592 is past the table), it says so, not "falls to"
    # (and at 102400, the length asked, they say it does not train).
    cells.write_text(cells.read_text().replace("110592", "65536").replace("102400", "32768"))
    status, out, _ = cli(*flags[:4], "own-80gb", *flags[5:], "--cells", str(cells))
    assert status == 1 and ("110592 tokens (on a 1024-token grid), but the tables say it runs out of memory already at "
                            "65536 (the Own-80GB table for 4 GPUs of your cells (made up) says '-' at 65536), and they "
                            "decide: they let it train up to 32768") in " ".join(out.split())
    # Qwen3-14B on 4 A100s, vanilla: the memory model fits 2048 tokens, the table's row of 4096 says 'Env', and no
    # row trains vanilla: the line ends as the others do, on what the tables let it train.
    status, out, _ = cli("memory", "--model", "14B", "--gpu", "a100", "--gpus", "4", "--len", "64k")
    assert status == 1 and ("longest length the memory model fits with this setting: 2048 tokens (on a 1024-token "
                            "grid), but the tables say it runs out of memory at 4096, the row that 2048 falls to (the "
                            "A100-80GB table for 4 GPUs says 'Env' at 4096), and they decide: they let it train at no "
                            "length host memory:") in " ".join(out.split())
    # A cell of another count's table says why it holds here: a larger table's, on fewer GPUs each holding more; a
    # smaller table's Offload '-', each of more GPUs holding as much with Offload.
    status, out, _ = cli("memory", "--model", "0.6B", "--gpu", "a100", "--gpus", "3", "--len", "100k", "--env")
    assert status == 1 and ("but the tables say it runs out of memory at 32768, the row that 29696 falls to (the "
                            "A100-80GB table for 4 GPUs says 'SP=2' at 32768, and on 3 GPUs each holds more), and they "
                            "decide: they let it train up to 28672") in " ".join(out.split())
    status, out, _ = cli("memory", "--model", "1.7B", "--gpu", "a100", "--gpus", "3", "--len", "100k", "--env",
                         "--offload")
    assert status == 1 and ("(the A100-80GB table for 1 GPU says '-' at 32768, and with Offload it holds as much per "
                            "GPU on 3 GPUs as on 1 (the states are on the CPU)), and they decide: they let it train up "
                            "to 24576") in " ".join(out.split())
    # Without Offload each of more GPUs holds the states besides: the same table's '-' holds for Env alone on 8.
    status, out, _ = cli("memory", "--model", "0.6B", "--gpu", "a100", "--gpus", "8", "--len", "100k", "--env")
    assert status == 1 and ("(the A100-80GB table for 1 GPU says '-' at 32768, and it ran out with Offload too, which "
                            "holds as much per GPU on 8 GPUs as on 1 (the states are on the CPU), and without Offload "
                            "each GPU holds more), and they decide: they let it train up to 28672"
                            ) in " ".join(out.split())
    # Where no table speaks (the H200, with more memory than any GPU type with tables), nothing more is said.
    changed = [*flags[:4], "h200", *flags[5:]]
    status, out, _ = cli(*changed)
    assert "longest length the memory model fits" in out and "the tables" not in out.split("host memory")[0]
    estimate = json.loads(cli(*changed, "--json")[1])
    assert (estimate["longest_refuted"], estimate["tables_longest"], estimate["tables_longer"]) == (None, None, None)


def test_the_longest_length_says_where_the_tables_let_the_setting_train_longer(cli):
    # Qwen3-0.6B on 2 A100s, vanilla: the memory model fits 23552 tokens, and the table's 'vanilla' at 24576 vouches
    # for more: read alone, 23552 would pass for the limit.
    flags = ["memory", "--model", "0.6B", "--gpu", "a100", "--gpus", "2", "--len", "8k"]
    status, out, _ = cli(*flags)
    assert status == 0 and ("longest length the memory model fits with this setting: 23552 tokens (on a 1024-token "
                            "grid); the tables let it train at least to 24576 (documented: the A100-80GB table for 2 "
                            "GPUs says 'vanilla' at 24576), and they decide host memory:") in " ".join(out.split())
    estimate = json.loads(cli(*flags, "--json")[1])
    assert (estimate["longest_len"], estimate["longest_refuted"], estimate["tables_longest"],
            estimate["tables_longer"]) == (23552, None, None, {
                "trains": True, "evidence": "documented",
                "source": {"model": "Qwen3-0.6B", "gpus": 2, "max_model_len": 24576, "setting": "vanilla"}})
    # Qwen3-14B with Env on 4 A100s: 3072 tokens by the memory model, 4096 documented; asked at 4096, the tables line
    # cites that cell, and the longest length points to it instead of repeating it.
    status, out, _ = cli("memory", "--model", "14B", "--gpu", "a100", "--gpus", "4", "--len", "4k", "--env")
    words = " ".join(out.split())
    assert status == 0 and ("fits with this setting: 3072 tokens (on a 1024-token grid); the tables let it train at "
                            "least to 4096 (the cell on the tables line), and they decide") in words
    assert words.count("the A100-80GB table for 4 GPUs says 'Env' at 4096") == 1


def test_the_host_memory_a_refusal_names_is_the_plans_without_the_limit():
    # Qwen3-4B's need is not monotone in the GPUs (tied embeddings load on every rank): 77.49 GiB on 3 GPUs, 162.11
    # on 8. At 200k tokens only 8 GPUs train it with Offload, so the refusal names 162.2, not the least of any count.
    assert [round(host_memory_gib(CATALOG.model("4B"), n, 8), 2) for n in (3, 8)] == [77.49, 162.11]
    (answer,) = plan(make_query(CATALOG, model="4B", gpu="a100", max_model_len=200 * 1024, budget_gpus=8,
                                host_ram_gb=100), CATALOG)
    assert answer.plans == () and ("without --host-ram, Env + Offload + SP=8 on 8 GPUs trains it (204800 tokens), and "
                                   "with Offload it needs 162.2 GiB of host memory per node") in answer.reason


def test_a_model_that_caps_its_logits_holds_one_more_bf16_copy_of_them(tmp_path: Path):
    # Gemma-2-9B's shape, with and without its final_logit_softcapping: 2 more bytes per token and vocabulary entry.
    shape = {"model_type": "gemma2", "hidden_size": 3584, "intermediate_size": 14336, "num_hidden_layers": 42,
             "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 256, "vocab_size": 256000,
             "max_position_embeddings": 8192}
    models = []
    for cap in (None, 30.0):
        path = tmp_path / f"{cap}.json"
        path.write_text(json.dumps({**shape, "final_logit_softcapping": cap}), encoding="utf-8")
        models.append(load_model_config(path))
    plain, capped = models
    assert (plain.logit_softcapping, capped.logit_softcapping) == (False, True) and plain.shape != capped.shape
    # Gemma-2's class caps them at 30 where the config.json does not say: a config without the key caps.
    default = tmp_path / "default.json"
    default.write_text(json.dumps(shape), encoding="utf-8")
    assert load_model_config(default).logit_softcapping
    coefficients = load_memory_model().coefficients
    setting = Setting(env=True, offload=False, sp=2)
    without = breakdown(plain, 79.6, 8, setting, 16384, coefficients)
    with_cap = breakdown(capped, 79.6, 8, setting, 16384, coefficients)
    extra = 2 * 16384 * 256000 / 2**30  # 16384 tokens per GPU (ceil(2 x 16384 / 2))
    assert with_cap.terms.logits == pytest.approx(without.terms.logits + extra)
    assert with_cap.total_gib == pytest.approx(without.total_gib + extra)
    # An estimate for it says the capping lies beyond the calibration.
    calibrated = load_memory_model().fit.range
    for model, named in ((capped, True), (plain, False)):
        phrases = beyond_calibration(calibrated, model, 79.6, 8, setting, 16384, NODE_GPUS)
        assert (("capped-logits", "capped logits (their extra copy counted from first principles, not calibrated)")
                in phrases) is named


def h100_cells(gpus: int, section: str, models: str, rows: dict[int, str]) -> str:
    """A cells file of yours for one table of H100s: its GPU count, section, models (as the file lists them) and
    each row's cells (a YAML mapping, by length)."""
    lines = "".join(f"      - {{max_model_len: {length}, cells: {cells}}}\n" for length, cells in rows.items())
    return (f"gpu: H100-80GB\nmemory_gb: 80\nsource: mine\ntables:\n  - gpus: {gpus}\n    section: {section}\n"
            f"    models: [{models}]\n    rows:\n{lines}")


def test_cells_that_ran_out_where_the_memory_model_fits_get_a_note_with_the_margin_that_agrees(cli, tmp_path: Path):
    # On 8 H100s Env + SP=8 ran out of memory at 131072 (the cell is Env + Offload + SP=8), where the memory model
    # predicts 64.4 GiB of 73.2 usable: an estimate on 16 GPUs next to it may be optimistic too, and the note says the
    # margin under which the model agrees with every such cell.
    cells = tmp_path / "mine.yaml"
    cells.write_text(h100_cells(8, "8 x H100", "Qwen3-8B", {65536: "{Qwen3-8B: Env + SP=4}",
                                                            131072: "{Qwen3-8B: Env + Offload + SP=8}"}),
                     encoding="utf-8")
    asked = ("--model", "8B", "--gpu", "h100", "--gpus", "16", "--len", "131072", "--cells", str(cells), "--json")
    status, out, err = cli(*asked)
    assert (status, json.loads(out)[0]["plans"][0]["evidence"]) == (0, "estimated")
    # (Of the three settings that ran out there, the two without Env are ones the estimates never make.)
    assert err == ("solve: note: your cells say 1 setting ran out of memory where the memory model predicts a fit "
                   "(Env + SP=8 on 8 H100-80GB GPUs for Qwen3-8B at 131072: 64.4 GiB predicted of 73.2 usable), so its "
                   "estimates near them may be optimistic too: with --margin 0.13 it predicts that each of them runs "
                   "out\n")
    assert cli(*asked, "--margin", "0.13")[2] == ""
    # With --no-env the estimates go without Env: the two settings without it count too, the most optimistic first,
    # and the margin is the one under which the model agrees with all three.
    assert cli(*asked, "--no-env")[2] == (
        "solve: note: your cells say 3 settings ran out of memory where the memory model predicts a fit (Env + SP=8 "
        "on 8 H100-80GB GPUs for Qwen3-8B at 131072: 64.4 GiB predicted of 73.2 usable), so its estimates near them "
        "may be optimistic too: with --margin 0.13 it predicts that each of them runs out\n")
    # A documented answer, or cells the model agrees with, get no note.
    assert cli(*asked[:5], "8", *asked[6:])[2] == ""
    # Cells of the H800, which reports the H100's memory (and whose tables the H100 borrows), are near it too.
    h800 = tmp_path / "h800.yaml"
    h800.write_text(cells.read_text(encoding="utf-8").replace("gpu: H100-80GB", "gpu: H800-80GB"), encoding="utf-8")
    assert cli(*asked[:9], str(h800), "--json")[2].startswith(
        "solve: note: your cells say 1 setting ran out of memory where the memory model predicts a fit (Env + SP=8 "
        "on 8 H800-80GB GPUs for Qwen3-8B at 131072")


def test_the_margin_the_note_names_is_the_least_under_which_the_memory_model_agrees(cli, tmp_path: Path):
    # At 106496 tokens the memory model predicts 56.1 GiB of 73.2 usable (at --margin 0.01) for Env + SP=8, which
    # ran out there: it agrees from a margin of 1 - 0.99 x 56.1 / 73.2 = 0.241 on, so the note names 0.25 (rounded up,
    # not to the nearest hundredth), under which no note comes; under 0.24 it still comes.
    cells = tmp_path / "mine.yaml"
    cells.write_text(h100_cells(8, "8 x H100", "Qwen3-8B", {106496: "{Qwen3-8B: Env + Offload + SP=8}"}),
                     encoding="utf-8")
    asked = ("--model", "8B", "--gpu", "h100", "--gpus", "16", "--len", "106496", "--cells", str(cells), "--json")
    assert cli(*asked)[2].endswith("56.1 GiB predicted of 73.2 usable), so its estimates near them may be optimistic "
                                   "too: with --margin 0.25 it predicts that each of them runs out\n")
    assert [cli(*asked, "--margin", margin)[2] != "" for margin in ("0.24", "0.25")] == [True, False]


def test_a_missed_cell_is_named_by_the_setting_that_trained_there():
    # Made-up cell: Qwen3-0.6B SP=2 on 8 H100s at 1024, so vanilla (2048 tokens per GPU) ran out there. First
    # principles predict vanilla fits: states 1.11 GiB, gathered 0.73, overhead 1, the logits and fragmentation 1.16
    # each, and the per-token terms held to their floor, 2048 x (2 x 1024 x 29 + 7 x 151936) bytes = 2.14 GiB: 6.1 GiB
    # of 72.0 usable (90% of 80).
    shape = CATALOG.model("0.6B")
    evidence = [Observation("H100-80GB", shape, 80.0, 8, Setting(), 1024, False),
                Observation("H100-80GB", shape, 80.0, 8, Setting(sp=2), 1024, True)]
    [missed] = mispredicted(evidence, PRIOR)
    assert missed == ("Qwen3-0.6B on 8 x H100-80GB at 1024, cell 'SP=2': vanilla ran out of memory there, predicted "
                      "6.1 GiB of 72.0 usable")

def test_optimistic_cells_come_the_most_optimistic_first():
    # Made up: Env + SP=8 ran out of memory for Qwen3-8B on 8 H100s at 131072 and at 65536, and trained at 32768. The
    # shipped model predicts both failures to fit; the shorter length leaves more room at its predicted peak (memory
    # grows with the length), so it is the further off and comes first. What trained is no optimistic cell.
    h100, eight_b = CATALOG.gpu("h100"), CATALOG.model("8B")
    seen = [Observation(h100.name, eight_b, h100.memory_gib, 8, Setting(env=True, sp=8), length, fits)
            for length, fits in ((131072, False), (32768, True), (65536, False))]
    found = optimistic(seen, load_memory_model().coefficients, DEFAULT_MARGIN)
    assert [(seen.max_model_len, seen.fits) for seen, _, _ in found] == [(65536, False), (131072, False)]
    assert found[0][2] - found[0][1] > found[1][2] - found[1][1] > 0


# A dense gated-MLP shape; each test adds the keys it is about.
DENSE_SHAPE = {"hidden_size": 3072, "intermediate_size": 8192, "num_hidden_layers": 32, "num_attention_heads": 32,
               "num_key_value_heads": 32, "vocab_size": 32064, "max_position_embeddings": 4096}


def _dense_config(tmp_path: Path, **keys: object) -> Path:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**DENSE_SHAPE, **keys}), encoding="utf-8")
    return path


GENERIC_MOE = {"model_type": "custom_moe", "tie_word_embeddings": False}
"""A mixture of experts of a model type rft-solver does not know, read by its keys alone, with a caution: llama's class
is dense (it reads no experts key), so a llama config with one is counted dense."""


def test_the_token_floor_counts_the_capped_logits_copy(tmp_path: Path):
    # Gemma-2-9B's shape (its class caps the logits): per token, a bf16 hidden state per layer and the embedding
    # output, 2 * 3584 * (42 + 1) = 308224 bytes, and the logits' peak, (7 + 2) * 256000 = 2304000 bytes, which is
    # more than one layer's recompute (20*3584 + 14*4096 + 14*2048 + 12*14336 = 329728 bytes).
    gemma2 = {"model_type": "gemma2", "num_key_value_heads": 8, "vocab_size": 256000, "max_position_embeddings": 8192}
    capped = load_model_config(_dense_config(tmp_path, **gemma2, hidden_size=3584, intermediate_size=14336,
                                             num_hidden_layers=42, num_attention_heads=16, head_dim=256))
    assert capped.logit_softcapping
    assert token_floor_gib(capped, 16384) * 2**30 == pytest.approx(16384 * (308224 + 2304000))
    # A deep Gemma-2-like config whose floor binds: its checkpoints term is raised to the floor with the cap's copy.
    model = load_model_config(_dense_config(tmp_path, **gemma2, hidden_size=4096, intermediate_size=16384,
                                            num_hidden_layers=100, num_attention_heads=32, head_dim=128))
    estimate = solver.estimate_memory(model.name, "h100", 8, 8192, env=True, catalog=CATALOG.with_model(model))
    assert estimate.terms.checkpoints == pytest.approx(8.8122, abs=1e-4)  # 7.8402 with the cap left out of the floor
    assert estimate.total_gib == pytest.approx(102.269, abs=1e-3)  # 101.297 without


@pytest.mark.parametrize("model_type", ["bloom", "codegen", "falcon", "gpt2", "gpt_bigcode", "gpt_neo", "gpt_neox",
                                        "gptj", "mpt", "nemotron", "opt", "persimmon", "phi", "starcoder2"])
def test_every_model_type_with_an_ungated_mlp_is_refused(tmp_path: Path, model_type: str):
    with pytest.raises(TableError, match=rf"model_type {model_type}: its MLP has two matrices, not the three of a "
                                         r"gated MLP"):
        load_model_config(_dense_config(tmp_path, model_type=model_type, tie_word_embeddings=False))


@pytest.mark.parametrize(("model_type", "tied"), [
    ("gemma", True), ("gemma2", True), ("gemma3_text", True), ("granite", False), ("llama", False),
    ("mistral", False), ("olmo", False), ("olmo2", False), ("phi3", False), ("qwen2", False), ("qwen3", False),
    ("stablelm", False)])
def test_every_listed_model_type_ties_its_embeddings_as_its_class_does(tmp_path: Path, model_type: str, tied: bool):
    # No tie_word_embeddings: the class decides.
    model = load_model_config(_dense_config(tmp_path, model_type=model_type))
    assert model.tied_embeddings is tied


@pytest.mark.parametrize("capping", [True, False])
def test_a_boolean_logit_softcapping_is_refused(tmp_path: Path, capping: bool):
    shown = "true" if capping else "false"
    with pytest.raises(TableError,
                       match=f"final_logit_softcapping: expected a finite number above 0 or null, got {shown}"):
        load_model_config(_dense_config(tmp_path, model_type="llama", final_logit_softcapping=capping))


@pytest.mark.parametrize("key", ["num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts"])
def test_every_mixture_of_experts_key_is_read(tmp_path: Path, key: str):
    # Qwen-MoE's, Mixtral's, DeepSeek's and others' key for the routed experts: all held, num_experts_per_tok of them
    # computed, each as wide as moe_intermediate_size (Mixtral's intermediate_size, where that is not given).
    model = load_model_config(_dense_config(tmp_path, **GENERIC_MOE, num_experts_per_tok=2, **{key: 8}))
    # no model type whose LoRA config PEFT converts (test_review76b_s76)
    assert model.moe == MoE(experts=8, active_experts=2, moe_intermediate_size=8192, peft_converts_experts=False)
    assert model.intermediate_size == 2 * 8192  # the width a token passes through, as the catalogue gives it
    # Per layer: attention (4 x 3072 x 3072), 8 experts of a gated MLP (3 x 3072 x 8192) with their router rows
    # (3072 each) and two norms; the two embedding matrices and the final norm.
    layer = 4 * 3072 * 3072 + 8 * (3 * 3072 * 8192 + 3072) + 2 * 3072
    assert model.parameters_b * 1e9 == pytest.approx(32 * layer + 2 * 32064 * 3072 + 3072)
    wider = load_model_config(_dense_config(tmp_path, **GENERIC_MOE, num_experts_per_tok=2,
                                            moe_intermediate_size=1024, **{key: 8}))
    assert wider.moe == MoE(experts=8, active_experts=2, moe_intermediate_size=1024, peft_converts_experts=False)


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ({"num_experts": 8}, "missing num_experts_per_tok: a model's config.json gives it"),
        ({"num_experts": 8, "num_experts_per_tok": 9},
         r"num_experts_per_tok: expected at most num_experts \(8\), got 9$"),
        ({"num_local_experts": 0, "num_experts_per_tok": 1}, "num_local_experts: expected a whole number from 1"),
        ({"num_experts": 60, "num_experts_per_tok": 4, "shared_expert_intermediate_size": 5632},
         "shared_expert_intermediate_size 5632: shared experts beside the routed ones"),
        ({"num_experts": 8, "num_experts_per_tok": 2, "num_shared_experts": 1},
         "num_shared_experts 1: shared experts beside the routed ones"),
        ({"moe_num_experts": 64, "num_experts_per_tok": 6, "moe_num_shared_experts": 2},  # ERNIE-4.5's
         "moe_num_shared_experts 2: shared experts beside the routed ones"),
        ({"n_routed_experts": 64, "num_experts_per_tok": 6, "moe_layer_freq": 2},  # DeepSeek-MoE's every other layer
         "moe_layer_freq 2: some layers dense, the others mixtures of experts"),
        # A MoE class without its count of experts would read as a dense model of its intermediate_size.
        ({"model_type": "qwen3_moe", "num_experts_per_tok": 8, "moe_intermediate_size": 768},
         (r"missing the count of routed experts \(num_experts, num_local_experts, n_routed_experts or "
          r"moe_num_experts\): model_type qwen3_moe is a mixture of experts, which would be read as a dense model$")),
        ({"model_type": "mixtral", "num_local_experts": None, "num_experts_per_tok": 2},
         "missing the count of routed experts .*: model_type mixtral is a mixture of experts"),
        ({"num_experts_per_tok": 8}, (r"num_experts_per_tok 8 but no count of routed experts \(num_experts, "
                                      r".*\): give it, or remove the mixture of experts' keys for a dense model$")),
        ({"moe_intermediate_size": 768}, "moe_intermediate_size 768 but no count of routed experts"),
        # Qwen-MoE's intermediate_size is no expert's width: Mixtral's reading would count 233B for Qwen3-30B-A3B.
        ({"model_type": "qwen3_moe", "num_experts": 128, "num_experts_per_tok": 8},
         (r"missing moe_intermediate_size: a qwen3_moe config gives each expert's width there \(a whole number from "
          r"1 to 4194304\); its intermediate_size is not that width$")),
        ({"num_experts": 128, "num_local_experts": 8, "num_experts_per_tok": 2},
         r"num_experts 128 and num_local_experts 8: two counts of routed experts; give one$"),
    ],
)
def test_a_mixture_of_experts_that_would_be_miscounted_is_refused(tmp_path: Path, keys: dict[str, int], message: str):
    with pytest.raises(TableError, match=message):
        load_model_config(_dense_config(tmp_path, **{**GENERIC_MOE, **keys}))


def test_qwen3_30b_a3b_config_without_its_expert_count_exits_2_in_one_line(cli, tmp_path: Path):
    # The published config less num_experts read as a dense model of 3.34B parameters (a tenth of its states).
    config = json.loads((HF_CONFIGS / "Qwen3-30B-A3B.json").read_text(encoding="utf-8"))
    del config["num_experts"]
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    status, out, err = cli("memory", "--model-config", str(tmp_path), "--gpu", "mi300x", "--gpus", "8", "--len",
                           "32768", "--env")
    assert (status, out) == (2, "")
    assert err == (f"solve memory: error: --model-config {tmp_path / 'config.json'}: missing the count of routed "
                   "experts (num_experts, num_local_experts, n_routed_experts or moe_num_experts): model_type "
                   "qwen3_moe is a mixture of experts, which would be read as a dense model\n")


def test_a_qwen2_moe_shared_expert_is_counted_as_its_model_cards_say(tmp_path: Path):
    # Qwen1.5-MoE-A2.7B's published config: per layer, attention (4 x 2048 x 2048), 60 experts of a gated MLP 1408
    # wide with their router rows, the shared expert's gated MLP 5632 wide with its gate of one output, two norms;
    # 14.3B parameters and 2.7B active, as its model card says (13.5B without the shared expert).
    model = load_model_config(HF_CONFIGS / "Qwen1.5-MoE-A2.7B.json")
    layer = 4 * 2048 * 2048 + 60 * (3 * 2048 * 1408 + 2048) + 3 * 2048 * 5632 + 2048 + 2 * 2048
    assert model.parameters_b * 1e9 == pytest.approx(24 * layer + 2 * 151936 * 2048 + 2048)
    assert (round(model.parameters_b, 2), round(model.active_parameters_b, 2)) == (14.32, 2.69)
    # qwen2_moe: no model type whose LoRA config PEFT converts (test_review76b_s76)
    assert model.moe == MoE(experts=60, active_experts=4, moe_intermediate_size=1408,
                            shared_expert_intermediate_size=5632, peft_converts_experts=False)
    assert model.intermediate_size == 4 * 1408 + 5632 and model.unchecked_layout is None
    counted = sum(rows * columns * count for rows, columns, count in weight_shapes(model))
    assert counted == pytest.approx(model.parameters_b * 1e9)
    # A token passes through its 4 experts and the shared one: recompute 2 x 8192 x (2048 + 4 x 1408 + 5632) bytes.
    result = breakdown(model, 80, 8, Setting(), 4096, PRIOR)
    assert result.terms["recompute"] == 2 * 8192 * (2048 + 4 * 1408 + 5632) / 2**30
    # Qwen2-57B-A14B's shape: 57.4B and 14B active, as its model card says.
    config = json.loads((HF_CONFIGS / "Qwen1.5-MoE-A2.7B.json").read_text(encoding="utf-8"))
    config.update(hidden_size=3584, num_hidden_layers=28, num_attention_heads=28, num_key_value_heads=4,
                  num_experts=64, num_experts_per_tok=8, moe_intermediate_size=2560,
                  shared_expert_intermediate_size=20480, intermediate_size=18944)
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    larger = load_model_config(tmp_path)
    assert (round(larger.parameters_b, 2), round(larger.active_parameters_b, 2)) == (57.41, 14.25)


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ({"model_type": "qwen2_moe", "num_experts": 60, "num_experts_per_tok": 4, "moe_intermediate_size": 1408},
         (r"missing shared_expert_intermediate_size: a qwen2_moe config gives its shared expert's width there "
          r"\(0 for none\)$")),
        ({"model_type": "qwen2_moe", "num_experts": 60, "num_experts_per_tok": 4, "moe_intermediate_size": 1408,
          "shared_expert_intermediate_size": 5.5}, "shared_expert_intermediate_size: expected a whole number from 1"),
        # Another model type's shared experts stay refused: their layout is not checked (Qwen3-Next's is a hybrid).
        ({"model_type": "qwen3_moe", "num_experts": 60, "num_experts_per_tok": 4, "moe_intermediate_size": 1408,
          "shared_expert_intermediate_size": 5632}, "shared_expert_intermediate_size 5632: shared experts beside"),
        ({"model_type": "qwen3_next"}, "model_type qwen3_next: a hybrid of attention with state-space"),
    ],
)
def test_a_shared_expert_of_an_unread_kind_is_refused(tmp_path: Path, keys: dict[str, object], message: str):
    with pytest.raises(TableError, match=message):
        load_model_config(_dense_config(tmp_path, **keys))


def test_a_qwen2_moe_without_a_shared_expert_is_read_as_routed_experts_alone(tmp_path: Path):
    routed = {"num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 1024}
    none = load_model_config(_dense_config(tmp_path, model_type="qwen2_moe", shared_expert_intermediate_size=0,
                                           **routed))
    assert none.moe == MoE(experts=8, active_experts=2, moe_intermediate_size=1024, peft_converts_experts=False)
    assert none.shape == load_model_config(_dense_config(tmp_path, model_type="qwen3_moe", **routed)).shape


def test_a_mixture_of_experts_giving_its_count_twice_alike_is_read(tmp_path: Path):
    once = load_model_config(_dense_config(tmp_path, **GENERIC_MOE, num_experts=8, num_experts_per_tok=2))
    twice = load_model_config(_dense_config(tmp_path, **GENERIC_MOE, num_experts=8, num_local_experts=8,
                                            num_experts_per_tok=2))
    assert twice == once and once.moe == MoE(experts=8, active_experts=2, moe_intermediate_size=8192,
                                             peft_converts_experts=False)  # PEFT converts none


def test_a_mixture_of_experts_whose_shared_and_dense_keys_say_none_is_read(tmp_path: Path):
    # Every key of shared experts or dense layers at its value for none, and every expert taken by every token:
    # 4 experts 1024 wide in each of the 32 layers, all of them active.
    none = {"n_shared_experts": 0, "num_shared_experts": 0, "shared_expert_intermediate_size": 0,
            "moe_num_shared_experts": 0, "mlp_only_layers": [], "decoder_sparse_step": 1, "first_k_dense_replace": 0,
            "moe_layer_freq": 1}
    model = load_model_config(_dense_config(tmp_path, **GENERIC_MOE, num_experts=4, num_experts_per_tok=4,
                                            moe_intermediate_size=1024, **none))
    layer = 4 * 3072 * 3072 + 4 * (3 * 3072 * 1024 + 3072) + 2 * 3072
    assert model.parameters_b * 1e9 == pytest.approx(32 * layer + 2 * 32064 * 3072 + 3072)
    assert (model.moe, model.intermediate_size, model.active_parameters_b) == (
        MoE(experts=4, active_experts=4, moe_intermediate_size=1024, peft_converts_experts=False), 4096,
        model.parameters_b)


def test_a_dense_config_with_null_or_unused_mixture_of_experts_keys_is_read_as_dense(tmp_path: Path):
    # An experts key given as null is no mixture of experts, and the keys of shared experts and dense layers mean
    # nothing without routed experts: the config reads as the same dense model.
    dense = load_model_config(_dense_config(tmp_path, model_type="llama"))
    unused = {"num_experts": None, "n_routed_experts": None, "n_shared_experts": 2, "first_k_dense_replace": 3}
    assert load_model_config(_dense_config(tmp_path, model_type="llama", **unused)) == dense
    assert (dense.moe, dense.active_parameters_b) == (None, dense.parameters_b)


@pytest.mark.parametrize("name", ["Qwen3-8B", "Qwen2.5-7B", "Llama-3.2-1B"])
def test_a_dense_model_types_config_with_experts_keys_is_counted_dense(tmp_path: Path, name: str):
    # The model type picks transformers' class (qwen3, qwen2, llama: dense; their config and modeling code read no
    # experts key, which PretrainedConfig keeps as an unread attribute): a published dense config with a mixture of
    # experts' keys added reads as the same dense model (it was counted as 128 experts, 38.9B for Qwen3-8B's shape).
    config = json.loads((HF_CONFIGS / f"{name}.json").read_text(encoding="utf-8"))
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    dense = load_model_config(tmp_path)
    experts = {"num_experts": 128, "num_local_experts": 128, "num_experts_per_tok": 8, "moe_intermediate_size": 768}
    (tmp_path / "config.json").write_text(json.dumps({**config, **experts}), encoding="utf-8")
    assert load_model_config(tmp_path) == dense and dense.moe is None


def test_mixtral_without_tie_word_embeddings_is_untied_as_its_class_default(tmp_path: Path):
    # MixtralConfig's default: two embedding matrices, 46.70B parameters as with the published config's explicit false.
    config = json.loads((HF_CONFIGS / "Mixtral-8x7B-v0.1.json").read_text(encoding="utf-8"))
    del config["tie_word_embeddings"]
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    model = load_model_config(tmp_path)
    assert (model.tied_embeddings, round(model.parameters_b, 3)) == (False, 46.703)


def test_mixture_of_experts_configs_plan_as_the_catalogue_models_of_their_shape(cli, tmp_path: Path):
    # Qwen3-30B-A3B's published config.json is the catalogue's model; a fine-tune of its shape (Qwen3-Coder's) plans
    # as it does, under its own name; Mixtral's is estimated as a mixture of experts.
    asked = ("--gpu", "h20", "--gpus", "8", "--len", "32768", "--json")
    _, by_name, _ = cli("--model", "30B-A3B", *asked)
    status, read, _ = cli("--model-config", str(HF_CONFIGS / "Qwen3-30B-A3B.json"), *asked)
    assert status == 0 and json.loads(read) == json.loads(by_name)
    coder = json.loads((HF_CONFIGS / "Qwen3-30B-A3B.json").read_text(encoding="utf-8"))
    coder.update(_name_or_path="Qwen/Qwen3-Coder-30B-A3B-Instruct", max_position_embeddings=262144)
    (tmp_path / "config.json").write_text(json.dumps(coder), encoding="utf-8")
    status, out, _ = cli("--model-config", str(tmp_path), *asked)
    (answer,), (expected,) = json.loads(out), json.loads(by_name)
    assert status == 0 and answer["model"] == "Qwen3-Coder-30B-A3B-Instruct"
    assert answer["plans"] == expected["plans"]  # Env + SP=4 on 8 GPUs, 85.6 GiB: the same shape, the same memory
    # Qwen3-235B-A22B's shape: 94 layers of 128 experts 1536 wide, 235B parameters as its model card says.
    coder.update(_name_or_path="Qwen/Qwen3-235B-A22B", hidden_size=4096, num_hidden_layers=94, num_attention_heads=64,
                 moe_intermediate_size=1536)
    (tmp_path / "config.json").write_text(json.dumps(coder), encoding="utf-8")
    assert round(load_model_config(tmp_path).parameters_b, 2) == 235.09
    status, out, _ = cli("memory", "--model-config", str(HF_CONFIGS / "Mixtral-8x7B-v0.1.json"), "--gpu", "h100",
                         "--gpus", "8", "--len", "32768", "--env", "--offload", "--trinity-version", "0.6",
                         "--json")  # 0.6: rank 0 alone loads it on H100s, no host memory caution
    # (every rank's 1787.9 GiB)
    estimate = json.loads(out)
    assert (status, estimate["model"], estimate["model_parameters_b"]) == (0, "Mixtral-8x7B-v0.1", 46.703)
    # Its model card's 12.9B active: attention, norms, embeddings, routers and 2 experts of 8 in every layer.
    assert estimate["model_active_parameters_b"] == round(46.702792704 - 32 * 6 * 3 * 4096 * 14336 / 1e9, 3) == 12.88
    assert ("a mixture of experts (calibrated on dense models; routed experts counted whole, as transformers 5 holds "
            "them)") in estimate["beyond_calibration"]
    assert estimate["cautions"] == []  # a mixtral config: its kind is checked


def test_solve_memory_gives_a_mixture_of_experts_active_parameters_beside_its_total(cli):
    # As model cards give both (Qwen3-30B-A3B: 30.5B, 3.3B activated): 120 of its 128 experts idle in each of 48
    # layers, 3 x 2048 x 768 parameters each. A dense model's are all its parameters, and its title says nothing more.
    flags = ("--gpu", "h20", "--gpus", "8", "--len", "32768", "--sp", "4", "--env")
    status, out, _ = cli("memory", "--model", "30B-A3B", *flags)
    assert status == 0 and out.startswith("Qwen3-30B-A3B (30.5B parameters, 3.3B active) on 8 x H20-96GB (95.6 GiB)")
    asked = json.loads(cli("memory", "--model", "30B-A3B", *flags, "--json")[1])
    assert asked["model_active_parameters_b"] == round(30.5 - 48 * 120 * 3 * 2048 * 768 / 1e9, 3) == 3.321
    assert cli("memory", "--model", "8B", *flags)[1].startswith("Qwen3-8B (8.2B parameters) on 8 x H20-96GB")
    assert json.loads(cli("memory", "--model", "8B", *flags, "--json")[1])["model_active_parameters_b"] == 8.191


def test_a_mixture_of_experts_of_an_unchecked_kind_is_cautioned_in_its_own_words(cli, tmp_path: Path):
    # OLMoE's layout: 64 experts of intermediate_size 1024, 8 a token (its model card: 6.9B parameters in all).
    olmoe = {"model_type": "olmoe", "hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 16,
             "num_key_value_heads": 16, "intermediate_size": 1024, "num_experts": 64, "num_experts_per_tok": 8,
             "vocab_size": 50304, "max_position_embeddings": 4096, "tie_word_embeddings": False}
    (tmp_path / "config.json").write_text(json.dumps(olmoe), encoding="utf-8")
    status, out, _ = cli("memory", "--model-config", str(tmp_path), "--gpu", "h100", "--gpus", "8", "--len", "4096",
                         "--env", "--json")
    assert status == 0 and json.loads(out)["cautions"] == [(
        f"{tmp_path.name} is read from a config.json of a kind rft-solver has not checked (model_type olmoe): it "
        "counts 6.9B parameters, attention and 64 routed experts of gated MLPs in every layer; compare that with the "
        "model card")]


@pytest.mark.parametrize("key", ["text_config", "vision_config", "audio_config", "speech_config", "img_processor",
                                 "mm_vision_tower", "audio_processor"])
def test_every_multimodal_key_is_refused(tmp_path: Path, key: str):
    with pytest.raises(TableError, match=rf"config.json: a multimodal config \({key}\); only a text model's "):
        load_model_config(_dense_config(tmp_path, model_type="llama", **{key: {}}))


def test_a_multimodal_config_names_all_its_towers_and_mla_is_refused_by_its_kv_key(tmp_path: Path):
    # llava-hf's layout: a text_config and a vision_config, both named
    with pytest.raises(TableError, match=r"a multimodal config \(text_config, vision_config\); only a text model's"):
        load_model_config(_dense_config(tmp_path, model_type="llava", text_config={}, vision_config={}))
    # multi-head latent attention is known by its KV compression (a query rank may be null or absent)
    with pytest.raises(TableError, match=r"config.json: kv_lora_rank: multi-head latent attention"):
        load_model_config(_dense_config(tmp_path, model_type="llama", tie_word_embeddings=False, kv_lora_rank=512))


@pytest.mark.parametrize("text", ["null", "42", '"config"', "true"])
def test_a_config_json_that_is_not_an_object_is_refused(cli, tmp_path: Path, text: str):
    path = tmp_path / "config.json"
    path.write_text(text, encoding="utf-8")
    status, out, err = cli("--model-config", str(path), "--gpu", "a100", "--len", "8k")
    assert (status, out, err) == (2, "", f"solve: error: --model-config {path}: a config.json is a JSON object\n")


def test_a_config_json_that_is_not_json_names_the_line(tmp_path: Path):
    path = tmp_path / "config.json"
    path.write_text('{\n    "hidden_size": 64\n    "num_hidden_layers": 2\n}', encoding="utf-8")
    with pytest.raises(TableError, match=r"config.json: not JSON: Expecting ',' delimiter \(line 3\)$"):
        load_model_config(path)


@pytest.mark.parametrize(("key", "value", "got"), [
    ("num_hidden_layers", True, "true"),  # a JSON boolean is no count of layers
    ("hidden_size", 3072.0, "3072.0"),  # nor is a float, even a whole one
    ("num_key_value_heads", 0, "0"),  # given as 0, not absent: not as many as the attention heads
    ("max_position_embeddings", (1 << 30) + 1, "1073741825"),
    ("vocab_size", (1 << 24) + 1, "16777217"),
])
def test_a_config_number_is_a_whole_number_within_its_limit(tmp_path: Path, key: str, value: object, got: str):
    path = _dense_config(tmp_path, model_type="llama", **{key: value})
    limit = {"num_hidden_layers": 16384, "num_key_value_heads": 16384, "hidden_size": 1048576,
             "vocab_size": 16777216}.get(key, 1 << 30)
    with pytest.raises(TableError, match=rf"config.json: {key}: expected a whole number from 1 to {limit}, got {got}$"):
        load_model_config(path)


def test_a_config_reads_its_numbers_from_1_to_their_limit(tmp_path: Path):
    # One layer, one KV head (multi-query attention, as Gemma-2B's), one dimension per head, the longest context
    model = load_model_config(_dense_config(tmp_path, model_type="llama", num_hidden_layers=1, num_key_value_heads=1,
                                            hidden_size=32, max_position_embeddings=1 << 30))
    assert (model.num_layers, model.num_key_value_heads, model.head_dim, model.native_context) == (1, 1, 1, 1 << 30)


@pytest.mark.parametrize(("name_or_path", "name", "aliases"), [
    (None, "my-model", ()),  # the folder names it, once: no alias of its own name
    ("/models/Qwen3-8B-sft/", "Qwen3-8B-sft", ("my-model",)),  # a local path saved with its slash
    ("/", "custom", ("my-model",)),  # nothing to name it by
])
def test_a_model_configs_name_and_aliases(tmp_path: Path, name_or_path: str | None, name: str, aliases: tuple):
    folder = tmp_path / "my-model"
    folder.mkdir()
    _dense_config(folder, model_type="llama", **({"_name_or_path": name_or_path} if name_or_path else {}))
    model = load_model_config(folder)
    assert (model.name, model.aliases) == (name, aliases)


def test_yarn_without_an_original_context_is_scaled_from_the_max_position_embeddings(tmp_path: Path):
    model = load_model_config(_dense_config(tmp_path, model_type="llama", max_position_embeddings=32768,
                                            rope_scaling={"rope_type": "yarn", "factor": 4.0}))
    assert (model.native_context, model.rope_scaling, model.yarn_factor(65536)) == (32768, None, 2.0)


@pytest.mark.parametrize(("architectures", "qwen"), [
    (["Qwen3ForCausalLM"], True), (["Qwen2MoeForCausalLM"], True), (["LlamaForCausalLM"], False)])
def test_without_a_model_type_any_qwen_architecture_is_qwens(tmp_path: Path, architectures: list, qwen: bool):
    path = _dense_config(tmp_path, architectures=architectures, tie_word_embeddings=False)
    assert load_model_config(path).qwen_yarn is qwen
    # a null model_type is none, as for the tied embeddings' default and the unchecked layout's caution
    path = _dense_config(tmp_path, architectures=architectures, tie_word_embeddings=False, model_type=None)
    assert (load_model_config(path).qwen_yarn, load_model_config(path).unchecked_layout) == (qwen, "no model_type")


def test_an_offload_refutation_names_the_nearest_table_for_fewer_gpus():
    # Qwen3-0.6B, Env + Offload on 7 A100s at 81920: no table for 7 or more GPUs speaks; those for 1, 2 and 6 GPUs
    # say '-' (1 GPU from 32768, 6 GPUs from 71680). The nearest, 6 GPUs, is the one named.
    estimate = solver.estimate_memory("0.6B", "a100", 7, 81920, env=True, offload=True)
    assert estimate.tables is not None and not estimate.tables.trains
    assert estimate.tables.source == SourceCell(model="Qwen3-0.6B", gpus=6, max_model_len=71680, setting="-")


def test_a_table_for_fewer_gpus_refutes_only_a_setting_with_offload():
    # Qwen3-4B, vanilla on 3 A100s at 16384: the table for 2 GPUs says it ran out of memory there, but on 3 GPUs the
    # states shard wider (only with Offload does each GPU hold as much on any count); no table for 3 or more GPUs
    # says so, and none vouches for it: the tables say nothing of it.
    estimate = solver.estimate_memory("4B", "a100", 3, 16384, env=False, offload=False)
    assert estimate.tables is None


def test_a_plan_on_two_nodes_says_the_host_memory_of_one():
    (answer,) = solver.plan("14B", gpu="a100", objective="cheapest", budget_gpus=16, exact=True,
                            max_model_len=131072, offload=True)
    best = answer.best
    assert (best.gpus, best.offload) == (16, True)
    # No release named: each node's 8 ranks load the model, 8 x 55.02 GiB, beside the node's half of the pinned fp32
    # parameter and reference shards (2 x 80.50 / 2): 520.66, rounded up (training's half, 175.77, is less).
    assert best.host_memory_gb == 520.7


@pytest.mark.parametrize(("request_", "reason"), [
    # Qwen3-8B is untied: under 0.6 on H100s any plan without Offload loads it on rank 0 alone, 30.5 GiB, beside the
    # reference model's fp32 shards, 40.6 GiB on 4 GPUs as on 1 or 2, more on 3 (the rounding): no lighter plan
    # within 4.
    ({"model": "8B", "max_model_len": 8192, "host_ram_gb": 16, "budget_gpus": 4, "trinity_version": "0.6"}, (
        "nothing in the tables and the memory model's estimates for Qwen3-8B on H100-80GB within 4 GPUs trains with "
        "--host-ram 16 GiB; without --host-ram, Env on 4 GPUs trains it (8192 tokens), and it needs 71.2 GiB of host "
        "memory per node while the model loads")),
    # Without --host-ram the longest is Env + Offload + SP=8 at 221184; no plan without Offload reaches that length,
    # so no lighter plan is named (not "Env on 2 GPUs ... (1024 tokens)", which is not the same question).
    ({"model": "4B", "objective": "max_len", "host_ram_gb": 10}, (
        "nothing in the tables and the memory model's estimates for Qwen3-4B on H100-80GB within 8 GPUs trains with "
        "--host-ram 10 GiB; without --host-ram, Env + Offload + SP=8 on 8 GPUs trains it (221184 tokens), and with "
        "Offload it needs 162.2 GiB of host memory per node")),
])
def test_a_host_refusal_names_no_lighter_plan_that_needs_as_much_or_is_shorter(request_: dict, reason: str):
    (answer,) = solver.plan(gpu="h100", **{"budget_gpus": 8, **request_}, option_names=COMMAND_OPTIONS)
    assert (answer.plans, answer.reason) == ((), reason)


def test_a_host_refusal_rounds_the_need_up():
    # Qwen3-14B (14.77B parameters, untied) loads in fp32 on rank 0 alone under 0.6 on H100s, 55.02 GiB, beside the
    # reference model's fp32 shards, 80.50: 135.52 GiB, said as 135.6 (135.5 would not hold it), as the plans and
    # `solve memory` say it.
    (answer,) = solver.plan("14B", gpu="h100", budget_gpus=8, max_model_len=8192, host_ram_gb=32,
                            option_names=COMMAND_OPTIONS, trinity_version="0.6")
    assert ("without --host-ram, Env on 8 GPUs trains it (8192 tokens), and it needs 135.6 GiB of host memory per node "
            "while the model loads;") in answer.reason


def test_a_placement_on_two_nodes_says_the_host_memory_of_one(tmp_path: Path):
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump({
        "pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 2, "gpus_per_node": 8, "host_ram_gb": 1024}],
        "jobs": [{"name": "long-4b", "model": "Qwen3-4B", "max_model_len": 131072}]}), encoding="utf-8")
    result = place(load_fleet(path, CATALOG), catalog=CATALOG, widen=False)
    [placement] = result.placements
    # Qwen3-4B ties its embeddings: it loads in fp32 on each of a node's 8 ranks, 8 x 4 x 4.02e9 bytes = 119.86 GiB
    # (239.7 GiB would be both nodes' 16 ranks), beside the node's half of the reference model's fp32 shards, 10.56.
    assert (placement.trainer_gpus, placement.nodes, placement.plan.offload) == (16, (0, 1), False)
    assert placement.host_memory_gb == 130.5


def test_solve_memory_on_two_nodes_says_the_host_memory_of_one():
    estimate = solver.estimate_memory("14B", "a100", 16, 131072, sp=8, env=True, offload=True, host_ram_gb=600.0)
    assert estimate.host_memory_gib == 520.7 and estimate.host_fits  # every rank of a node loading, as the plan's
    under_051 = solver.estimate_memory("14B", "a100", 16, 131072, sp=8, env=True, offload=True, host_ram_gb=200.0,
                                       trinity_version="0.5.1")  # rank 0 alone: training's half of the node's
    assert under_051.host_memory_gib is not None and under_051.host_memory_gib < 200 and under_051.host_fits


def test_a_host_need_is_given_rounded_up_to_a_tenth_and_decided_as_given():
    # Up to the next tenth, an exact tenth kept as it is (also through float noise), never down.
    assert [shown_host_gib(need) for need in (82.7755, 82.8, 0.1 + 0.2, 55.0000004, 311.28226, 0.0)] == [
        82.8, 82.8, 0.3, 55.1, 311.3, 0.0]
    # What the figure says is what a node's host memory must hold: 82.78 GiB does not hold a need given as 82.8.
    assert not host_ram_holds(82.7755, 82.78) and host_ram_holds(82.7755, 82.8) and host_ram_holds(82.7755, None)


def test_a_node_holds_whole_tenths_of_a_gib_exactly_as_its_host_ram_gb_reads():
    # A need shown as 165.6 fits a node of 165.6 (both the same binary float, a little under 165.6); 165.599609375 GiB
    # (169574 MiB) holds 1655 tenths, not 1656; 0.8 GiB holds two needs of 0.4 (4 + 4 tenths), whatever 0.4 GiB is
    # in whole MiB.
    assert [held_host_tenths(gib) for gib in (165.6, 165.599609375, 0.8, 311.3, 0.05, 1048576)] == [
        1656, 1655, 8, 3113, 0, 10485760]
    assert [shown_host_tenths(need) for need in (82.7755, 82.8, 0.1 + 0.2, 311.28226)] == [828, 828, 3, 3113]


@given(st.one_of(st.integers(1, 10_485_760).map(lambda tenths: tenths / 10),
                 st.floats(min_value=0.01, max_value=1_048_576, allow_nan=False)),
       st.integers(-2, 2))
@example(165.6, 0)
@example(165.599609375, 1)
@example(165.59999999999997, 0)
@example(3533.3999999999996, 0)  # x 10 is 35334.0 in floats, though 3533.4 is more
@example(0.8, 0)
def test_a_need_in_tenths_fits_the_node_s_tenths_just_where_host_ram_holds_says_it_fits(
        host_ram_gb: float, offset: int):
    # The placement adds up needs in tenths against `held_host_tenths`: for one need, that is the planner's rule.
    tenths = max(round(host_ram_gb * 10) + offset, 0)
    assert (tenths <= held_host_tenths(host_ram_gb)) == host_ram_holds(tenths / 10, host_ram_gb)


def test_calibrate_names_your_cells_that_the_fit_predicts_the_other_way(cli, tmp_path: Path):
    # Qwen3-14B without Offload on one 80 GB GPU cannot hold its states (16 bytes a parameter, 220 GiB): a cell that
    # says it trained is likely a typo, and calibrate names it, with what the fit predicts. Its optimizer step cannot
    # fit either, whatever the multipliers, so the fit leaves them where the other cells put them (states at 1).
    cells = tmp_path / "mine.yaml"
    cells.write_text(h100_cells(1, "one", "14B, 0.6B", {8192: "{14B: vanilla, 0.6B: vanilla}",
                                                        16384: "{14B: '-', 0.6B: vanilla}"}), encoding="utf-8")
    written = tmp_path / "model.yaml"
    status, out, err = cli("calibrate", "--cells", str(cells), "--out", str(written))
    assert status == 0 and "1 predicted not to fit that did" in out
    assert err.endswith("solve calibrate: note: of your cells, the fit predicts the other way: Qwen3-14B on 1 x "
                        "H100-80GB at 8192, cell 'vanilla': vanilla trained there, predicted 268.9 GiB of 71.7 usable "
                        f"(usable: before any safety margin; solve memory --memory-model {written} breaks each down)\n")
    # A '-' cell stands for every setting tried there (vanilla, Env, ... Env + Offload + SP=8 on 8 GPUs), each of which
    # first principles predict to fit: the cell is named once, with the first.
    cells.write_text(h100_cells(8, "eight", "0.6B", {8192: "{0.6B: '-'}"}), encoding="utf-8")
    evidence = observations(CATALOG, gpu_types=[load_gpu_type(cells, CATALOG.models, CATALOG.gpu_types)])
    assert len(evidence) == 12 and mispredicted(evidence, PRIOR) == [(
        "Qwen3-0.6B on 8 x H100-80GB at 8192, cell '-': vanilla ran out of memory there, predicted 29.2 GiB of 71.7 "
        "usable")]
    # Cells the fit gets right get no such note, and the shipped tables' own misses are not yours to check.
    mine = Path(__file__).parent.parent / "docs" / "examples" / "my-cells.yaml"
    assert "predicts the other way" not in cli("calibrate", "--cells", str(mine), "--out", str(tmp_path / "b.yaml"))[2]
    assert "predicts the other way" not in cli("calibrate", "--out", str(tmp_path / "c.yaml"))[2]


def test_calibrate_on_one_cell_it_cannot_meet_says_so_in_the_singular(cli, tmp_path: Path):
    # Qwen3-0.6B trained vanilla at 131072 on one 24 GB card: one observation (vanilla is tried first), which no
    # plausible coefficients meet (its optimizer step fits: the activations' peak decides); the fit ends at an edge,
    # and the cell is predicted not to fit.
    cells = tmp_path / "cells.yaml"
    cells.write_text("gpu: Own-24GB\nmemory_gb: 24\nsource: mine\ntables:\n  - gpus: 1\n    section: '1 x Own'\n"
                     "    models: [Qwen3-0.6B]\n    rows:\n"
                     "      - {max_model_len: 131072, cells: {Qwen3-0.6B: vanilla}}\n", encoding="utf-8")
    fitted = tmp_path / "fit.yaml"
    status, out, err = cli("calibrate", "--cells", str(cells), "--out", str(fitted))
    assert status == 0 and out.splitlines()[0] == (f"wrote {fitted}: 1 observation, 0 predicted to fit that did not, "
                                                   "1 predicted not to fit that did")
    fits_alone, first, unphysical, caution, second, note = err.splitlines()
    assert fits_alone.startswith("solve calibrate: note: none of your cells says a setting ran out of memory")
    assert note == (f"solve calibrate: note: {cells}: Own-24GB's memory_gb 24 is taken as 24 GiB; a card reports "
                    "less (an H100 80GB: 81559 MiB, 79.6 GiB), so add its memory_mib (nvidia-smi's total) where you "
                    "have it")
    assert first == ("solve calibrate: warning: states 0.5 ended at the edge of the plausible range: 1 observation "
                     "does not pin the model down; add cells, or --with-tables to fit with the documented ones too")
    assert unphysical.startswith("solve calibrate: warning: states 0.5 is below its physical range, 1 to 1.25: ")
    assert unphysical.endswith("likely too few cells to pin the model down (1 observation; add cells, or fit with the "
                               "documented ones too: --with-tables), or cells measured with another framework or "
                               "precision than verl's FSDP with bf16 and Adam: estimates from this fit may not hold")
    assert caution == ("solve calibrate: caution: fragmentation 0, down from the shipped fit's 0.343 (the term "
                       "dropped): few cells decide it, your only cell (1 observation); add cells, or fit with the "
                       "documented ones too (--with-tables); estimates from this fit may not hold")
    assert second.startswith("solve calibrate: warning: the fit predicts your only cell the other way: Qwen3-0.6B on "
                             "1 x Own-24GB at 131072, cell 'vanilla': vanilla trained there, predicted ")
    assert second.endswith(f"(usable: before any safety margin; solve memory --memory-model {fitted} breaks each "
                           "down); check it for typos")


def test_calibrate_reports_usable_env_a_hair_below_all_of_the_memory(cli, tmp_path: Path):
    # Made-up cells of a 48 GB card: an Env cell holds Env's usable fraction at 0.999837, not at its bound of 1, and
    # that is the edge all the same (Env plans would fill all but 1% of the card): the warning names it.
    cells = tmp_path / "ada.yaml"
    cells.write_text(
        "gpu: Own-48GB\nmemory_gb: 48\nmemory_mib: 49140\nsource: mine\ntables:\n  - gpus: 4\n    section: x\n"
        "    models: [Qwen3-1.7B, Qwen3-4B]\n    rows:\n"
        "      - {max_model_len: 8192, cells: {Qwen3-1.7B: vanilla, Qwen3-4B: Env}}\n"
        "      - {max_model_len: 16384, cells: {Qwen3-1.7B: Env, Qwen3-4B: SP=2}}\n"
        "      - {max_model_len: 32768, cells: {Qwen3-1.7B: SP=2, Qwen3-4B: Env + SP=4}}\n"
        "      - {max_model_len: 65536, cells: {Qwen3-1.7B: Env + SP=4, Qwen3-4B: Env + Offload + SP=4}}\n",
        encoding="utf-8")
    status, out, err = cli("calibrate", "--cells", str(cells))
    assert status == 0 and "\n  usable_env: 0.999837\n" in out
    assert err.splitlines()[0] == (
        "solve calibrate: warning: usable_env 0.999837 ended at the edge of the plausible range: 32 observations do "
        "not pin the model down; add cells, or --with-tables to fit with the documented ones too")

def test_calibrate_refuses_cells_of_a_gpu_of_your_own_that_contradict_one_another(cli, tmp_path: Path):
    # Two files give Qwen3-0.6B on one 24 GB card at 131072 as vanilla and as Env (which says vanilla ran out): refused,
    # naming the second, as two tables for one count (the fit took both sides and ended at the edges). The second
    # alone ends at the edges too, where the warning asks for more cells, with no contradiction to mend.
    files = []
    for name, cell in (("a.yaml", "vanilla"), ("b.yaml", "Env")):
        path = tmp_path / name
        path.write_text("gpu: Own-24GB\nmemory_gb: 24\nsource: mine\ntables:\n  - gpus: 1\n    section: '1 x Own'\n"
                        "    models: [Qwen3-0.6B]\n    rows:\n"
                        f"      - {{max_model_len: 131072, cells: {{Qwen3-0.6B: {cell}}}}}\n", encoding="utf-8")
        files += ["--cells", str(path)]
    assert cli("calibrate", *files) == (2, "", (
        f"solve calibrate: error: --cells {files[-1]}: a table of Own-24GB for 1 trainer GPU, which --cells "
        f"{files[1]} has already: {ONE_TABLE}\n"))
    status, _, err = cli("calibrate", *files[2:])
    assert status == 0 and err.splitlines()[0] == (
        "solve calibrate: warning: states 0.5, usable_env 1 ended at the edge of the plausible range: 2 observations "
        "do not pin the model down; add cells, or --with-tables to fit with the documented ones too")


def test_your_cells_are_counted_by_gpu_type_too(tmp_path: Path):
    # The same count, model and length on two GPU types of your own are two cells; a row's other model is a third.
    files = []
    for name in ("Own-A", "Own-B"):
        path = tmp_path / f"{name}.yaml"
        path.write_text(f"gpu: {name}\nmemory_gb: 80\nsource: mine\ntables:\n  - gpus: 8\n    section: '8 x Own'\n"
                        "    models: [Qwen3-8B, Qwen3-4B]\n    rows:\n"
                        "      - {max_model_len: 32768, cells: {Qwen3-8B: SP=2, Qwen3-4B: vanilla}}\n",
                        encoding="utf-8")
        files.append(path)
    assert solver.calibrate_memory_model(files[:1]).your_cells == 2
    assert solver.calibrate_memory_model(files).your_cells == 4

def test_calibrate_names_three_missed_cells_without_counting_more(cli, tmp_path: Path):
    # Three of your cells the fit predicts the other way (Qwen3-14B without Offload on one 80 GB GPU at 2048, 4096
    # and 8192): all three are named, and no "and 0 more" follows.
    cells = tmp_path / "mine.yaml"
    rows = {**dict.fromkeys((2048, 4096, 8192), "{14B: vanilla, 0.6B: vanilla}"), 16384: "{14B: '-', 0.6B: vanilla}"}
    cells.write_text(h100_cells(1, "one", "14B, 0.6B", rows), encoding="utf-8")
    status, _, err = cli("calibrate", "--cells", str(cells), "--out", str(tmp_path / "model.yaml"))
    missed = err.rsplit("the fit predicts 3 of your 8 cells the other way: ", 1)[-1]
    assert status == 0 and missed.count("cell 'vanilla': vanilla trained there") == 3
    # Three of eight cells: more than a quarter, so a warning that asks for cells (their optimizer step cannot fit
    # whatever the multipliers, so none ends at an edge, whose warning would have asked).
    assert " more (" not in missed and missed.endswith(
        f"(usable: before any safety margin; solve memory --memory-model {tmp_path / 'model.yaml'} breaks each down); "
        "check them for typos, add cells, or fit with the documented ones too (--with-tables)\n")
    # A fourth: three are named, and the fourth is counted.
    rows = {1024: "{14B: vanilla, 0.6B: vanilla}", **rows}
    cells.write_text(h100_cells(1, "one", "14B, 0.6B", rows), encoding="utf-8")
    status, _, err = cli("calibrate", "--cells", str(cells), "--out", str(tmp_path / "model.yaml"))
    missed = err.rsplit("the fit predicts 4 of your 10 cells the other way: ", 1)[-1]
    assert status == 0 and missed.count("cell 'vanilla': vanilla trained there") == 3
    assert "; and 1 more (usable: before any safety margin; " in missed


def test_a_fit_that_misses_most_of_your_cells_is_a_warning_that_says_how_to_mend_it(cli, tmp_path: Path):
    # Eight cells of 8 H100s for Qwen3-8B and Qwen3-32B: the fit on them alone predicts six of them not to fit where
    # they trained (no coefficient at an edge, so the advice to add cells is this warning's).
    cells = tmp_path / "mine.yaml"
    cells.write_text(h100_cells(8, "eight", "Qwen3-8B, Qwen3-32B", {
        16384: "{Qwen3-8B: vanilla, Qwen3-32B: Env + Offload}",
        32768: "{Qwen3-8B: SP=2, Qwen3-32B: Env + Offload + SP=2}",
        65536: "{Qwen3-8B: SP=4, Qwen3-32B: Env + Offload + SP=4}",
        131072: "{Qwen3-8B: Env + SP=8, Qwen3-32B: '-'}"}), encoding="utf-8")
    fitted = solver.calibrate_memory_model([cells])
    assert (len(fitted.mispredicted), fitted.your_cells, fitted.poor_fit, fitted.at_bounds) == (6, 8, True, ())
    status, _, err = cli("calibrate", "--cells", str(cells), "--out", str(tmp_path / "model.yaml"))
    assert status == 0 and err.startswith(
        "solve calibrate: warning: the fit predicts 6 of your 8 cells the other way: Qwen3-8B on 8 x H100-80GB at "
        "16384, cell 'vanilla': vanilla trained there, predicted 71.8 GiB of 71.7 usable; ")
    assert err.endswith("; check them for typos, add cells, or fit with the documented ones too (--with-tables)\n")
    assert solver.calibrate_memory_model().your_cells == 0  # the documented tables' own misses are not yours


def test_calibrate_counts_the_missed_cells_among_yours(cli, tmp_path: Path):
    # Qwen3-14B without Offload on one 80 GB GPU cannot hold its states (at the lowest plausible multiplier, 0.5 x 16
    # bytes a parameter, 110 GiB): cells that say it trained are missed; Qwen3-0.6B's beside it is not.
    cells = tmp_path / "mine.yaml"
    cells.write_text(h100_cells(1, "one", "14B, 0.6B", {8192: "{14B: vanilla, 0.6B: vanilla}"}), encoding="utf-8")
    status, _, err = cli("calibrate", "--cells", str(cells), "--out", str(tmp_path / "model.yaml"))
    assert status == 0 and ("solve calibrate: warning: the fit predicts 1 of your 2 cells the other way: Qwen3-14B on "
                            "1 x H100-80GB at 8192, cell 'vanilla': vanilla trained there") in err
    assert err.endswith("; check it for typos, add cells, or fit with the documented ones too (--with-tables)\n")
    cells.write_text(h100_cells(1, "one", "14B", {8192: "{14B: vanilla}", 16384: "{14B: vanilla}"}), encoding="utf-8")
    status, _, err = cli("calibrate", "--cells", str(cells), "--out", str(tmp_path / "model.yaml"))
    assert status == 0 and ("solve calibrate: warning: the fit predicts all 2 of your cells the other way: Qwen3-14B "
                            "on 1 x H100-80GB at 8192, cell 'vanilla': vanilla trained there") in err
    assert err.endswith("; check them for typos, add cells, or fit with the documented ones too (--with-tables)\n")


def test_two_table_files_of_one_gpu_type_are_refused(tmp_path: Path):
    # A renamed copy left beside the file (or a stale one in a build) would shadow the other: refused, both named.
    shutil.copytree(shipped_tables_directory(), tmp_path, dirs_exist_ok=True)
    feasibility = tmp_path / "feasibility"
    shutil.copy(feasibility / "a100-80gb.yaml", feasibility / "a100.yaml")
    with pytest.raises(TableError, match=r"a100.yaml: GPU A100-80GB has tables in a100-80gb.yaml too; keep one file "
                                         r"per GPU type$"):
        load_catalog(tmp_path)


def test_calibrate_with_the_tables_says_your_cells_pull_a_coefficient_to_its_edge(cli, tmp_path: Path):
    # Cells of 8 and 4 H100s that run out of memory far earlier than the tables' A100 and H20 cells suggest: beside
    # the documented tables (which alone pin every coefficient inside its range), they push usable_env to its edge.
    # More cells would not help: the warning says to check them, or to fit on them alone.
    cells = tmp_path / "h100.yaml"
    cells.write_text(
        "gpu: H100-80GB\nmemory_gb: 80\nsource: mine\ntables:\n"
        "  - gpus: 8\n    section: 8 x H100\n    models: [8B, 14B]\n    rows:\n"
        "      - {max_model_len: 16384, cells: {8B: Env, 14B: Env + SP=2}}\n"
        "      - {max_model_len: 32768, cells: {8B: Env + SP=2, 14B: Env + SP=4}}\n"
        "      - {max_model_len: 65536, cells: {8B: Env + SP=4, 14B: Env + Offload + SP=4}}\n"
        "      - {max_model_len: 131072, cells: {8B: Env + SP=8, 14B: Env + Offload + SP=8}}\n"
        "  - gpus: 4\n    section: 4 x H100\n    models: [8B, 14B]\n    rows:\n"
        "      - {max_model_len: 16384, cells: {8B: Env, 14B: Env + SP=4}}\n"
        "      - {max_model_len: 32768, cells: {8B: Env + SP=2, 14B: Env + Offload + SP=2}}\n"
        "      - {max_model_len: 65536, cells: {8B: Env + Offload + SP=4, 14B: Env + Offload + SP=4}}\n",
        encoding="utf-8")
    assert cli("calibrate")[2] == ""
    status, _, err = cli("calibrate", "--cells", str(cells), "--with-tables")
    assert status == 0 and err.splitlines()[0] == (
        "solve calibrate: warning: usable_env 1 ended at the edge of the plausible range: your cells pull it there "
        "against the documented tables; check them for typos, or fit on them alone (without --with-tables) where your "
        "hardware differs")


MY_H100_CELLS = (  # a user's 14 runs on 4 and 8 H100s, a '-' row among them
    "gpu: NVIDIA H100 80GB HBM3\nmemory_gb: 80\nsource: our node\ntables:\n"
    "  - gpus: 4\n    section: 4 x H100\n    models: [Qwen3-8B, Qwen3-14B]\n    rows:\n"
    "      - {max_model_len: 16384, cells: {Qwen3-8B: Env + SP=2, Qwen3-14B: Env + Offload}}\n"
    "      - {max_model_len: 32768, cells: {Qwen3-8B: Env + SP=4, Qwen3-14B: Env + Offload + SP=2}}\n"
    "      - {max_model_len: 65536, cells: {Qwen3-8B: Env + Offload + SP=4, Qwen3-14B: Env + Offload + SP=4}}\n"
    "      - {max_model_len: 131072, cells: {Qwen3-8B: '-', Qwen3-14B: '-'}}\n"
    "  - gpus: 8\n    section: 8 x H100\n    models: [Qwen3-8B, Qwen3-14B]\n    rows:\n"
    "      - {max_model_len: 32768, cells: {Qwen3-8B: Env + SP=2, Qwen3-14B: Env + SP=4}}\n"
    "      - {max_model_len: 65536, cells: {Qwen3-8B: Env + SP=4, Qwen3-14B: Env + SP=8}}\n"
    "      - {max_model_len: 131072, cells: {Qwen3-8B: Env + SP=8, Qwen3-14B: Env + Offload + SP=8}}\n")


def test_calibrate_says_which_multipliers_your_cells_moved_and_how_to_plan_with_them(cli, tmp_path: Path):
    # A dozen cells move two multipliers; the other six stay as derived, and the estimates lean on them there. The
    # command to plan with the fit gives the cells too, which vouch for what they measured.
    cells, fitted = tmp_path / "my h100.yaml", tmp_path / "mine.yaml"
    cells.write_text(MY_H100_CELLS, encoding="utf-8")
    status, out, err = cli("calibrate", "--cells", str(cells), "--out", str(fitted))
    coefficients = load_memory_model(fitted).coefficients
    assert (status, err) == (0, "") and (coefficients.states, coefficients.logits) == (1.203179, 1.709562)
    # calib91: the logits are where the physical floor per token puts them, not the cells (which said they moved
    # them); and each coefficient the shipped fit has otherwise is said, from what to what (sp_buffers 6.46 to 1).
    assert out.splitlines()[1:] == [
        ("the fit moved states (1.20) from first principles; logits (1.71) sits at the physical floor per token that "
         "checkpoints, logits and recompute take together, which sets it, not the cells; gathered, checkpoints, "
         "recompute, sp_buffers, fragmentation and overhead stay at 1, as derived (the cells do not move them)"),
        ("against the shipped fit (tables/memory-model.yaml): states 1.03 to 1.2, gathered 0.786 to 1, checkpoints "
         "0.627 to 1, logits 1.95 to 1.71, sp_buffers 6.46 to 1, fragmentation 0.343 to 1, usable_env 0.928 to 0.9"),
        (f"plan with it: solve --model M --gpu H100-80GB --len L --memory-model {fitted} --cells '{cells}' (your cells "
         "vouch for the settings they measured, as tables do; the fit estimates the rest)")]
    # the command plans: the measured cell is documented, and the memory line names the fit
    command = shlex.split(out.splitlines()[3].removeprefix("plan with it: ").split(" (your cells")[0])
    status, out, _ = cli(*[{"M": "8B", "L": "32768"}.get(word, word) for word in command[1:]], "--gpus", "8")
    assert status == 0 and "documented: the H100-80GB table for 8 GPUs of your cells (our node)" in out
    assert "(memory model: calibrated on my h100.yaml)" in out
    # beside the documented tables, all but one move (said in the singular)
    status, out, _ = cli("calibrate", "--cells", str(cells), "--with-tables", "--out", str(fitted))
    assert status == 0 and out.splitlines()[1].endswith(
        "; checkpoints (0.41) and logits (2.09) sit at the physical floor per token that checkpoints, logits and "
        "recompute take together, which sets their sum (the cells only how it is shared); recompute stays at 1, as "
        "derived (your cells and the documented tables do not move it)")
    # one cell moves one multiplier; regenerating the shipped model names no cells to plan with
    cells.write_text(MY_H100_CELLS.split("  - gpus: 4")[0] + "  - gpus: 8\n    section: 8 x H100\n    models: [8B]\n"
                     "    rows:\n      - {max_model_len: 32768, cells: {8B: Env + SP=2}}\n", encoding="utf-8")
    assert cli("calibrate", "--cells", str(cells), "--out", str(fitted))[1].splitlines()[1] == (
        "the fit moved no multiplier from first principles; logits (1.71) sits at the physical floor per token that "
        "checkpoints, logits and recompute take together, which sets it, not the cells; states, gathered, "
        "checkpoints, recompute, sp_buffers, fragmentation and overhead stay at 1, as derived (the cells do not move "
        "them)")
    status, out, _ = cli("calibrate", "--out", str(fitted))
    assert status == 0 and out.splitlines()[1:] == [
        ("the fit moved states (1.03), gathered (0.79), checkpoints (0.63), logits (1.95), sp_buffers (6.46) and "
         "fragmentation (0.34) from first principles; recompute and overhead stay at 1, as derived (the cells do not "
         "move them)")]
    assert fitted.read_bytes() == (shipped_tables_directory() / "memory-model.yaml").read_bytes()


def test_calibrate_on_cells_of_two_gpu_types_says_to_plan_with_either_of_them(cli, tmp_path: Path):
    # Cells of an H800 and of an H100: the command to plan with the fit names no one GPU type, but G, and both files.
    h800, h100, fitted = tmp_path / "h800.yaml", tmp_path / "h100.yaml", tmp_path / "mine.yaml"
    for path, gpu in ((h800, "H800-80GB"), (h100, "H100-80GB")):
        path.write_text(f"gpu: {gpu}\nmemory_gb: 80\nsource: our node\ntables:\n  - gpus: 8\n    section: 8 GPUs\n"
                        "    models: [Qwen3-8B]\n    rows:\n"
                        "      - {max_model_len: 32768, cells: {Qwen3-8B: Env + SP=2}}\n", encoding="utf-8")
    status, out, err = cli("calibrate", "--cells", str(h800), "--cells", str(h100), "--out", str(fitted))
    assert (status, err) == (0, "") and out.splitlines()[-1] == (
        f"plan with it: solve --model M --gpu G --len L --memory-model {fitted} --cells {h800} --cells {h100} (your "
        "cells vouch for the settings they measured, as tables do; the fit estimates the rest)")


def test_calibrate_on_cells_in_another_format_says_which_keys_a_cells_file_takes(cli, tmp_path: Path):
    # A CSV of runs reads as YAML text: the refusal says it is not 'key: value' lines and names the fields; a
    # list says it got a list. No memory-model file is written.
    runs, fitted = tmp_path / "runs.csv", tmp_path / "fit.yaml"
    runs.write_text("model,gpus,max_model_len,setting\nQwen3-8B,8,32768,Env + SP=2\n", encoding="utf-8")
    assert cli("calibrate", "--cells", str(runs), "--out", str(fitted)) == (
        2, "", (f"solve calibrate: error: --cells {runs}: expected a mapping at the top level, got text, not YAML's "
                "'key: value' lines (fields: gpu, memory_gb, memory_mib, aliases, source, tables, rocm, "
                "workstation_host_ram_gib, interconnect, interconnect_source, compute_capability)\n"))
    runs.write_text("- {model: Qwen3-8B, gpus: 8}\n", encoding="utf-8")
    assert cli("calibrate", "--cells", str(runs), "--out", str(fitted))[2].endswith(
        ": expected a mapping at the top level, got a list (fields: gpu, memory_gb, memory_mib, aliases, source, "
        "tables, rocm, workstation_host_ram_gib, interconnect, interconnect_source, compute_capability)\n")
    assert not fitted.exists()


def test_a_calibration_out_of_time_says_the_cells_are_too_many(monkeypatch: pytest.MonkeyPatch):
    # The shipped tables' 2134 observations take GLOP about a second: within a millisecond it has no fit, and the
    # error says that the cells are too many (not that something in them is wrong).
    monkeypatch.setattr("solver.calibrate.CALIBRATION_TIME_LIMIT_MS", 1)
    with pytest.raises(QueryError) as raised:
        calibrate(observations(CATALOG))
    assert str(raised.value).startswith("the calibration program found no optimal fit for 2134 observations within ")
    assert str(raised.value).endswith("; the cells are too many to fit in time: give fewer")


def test_a_cell_of_another_gpu_types_table_is_cited_as_it_is():
    # Only a cell of the answer's own GPU type's table is stamped with the origin of that table for its count.
    own = SourceCell(model="Qwen3-8B", gpus=8, max_model_len=32768, setting="-")
    larger = own.model_copy(update={"gpu": "H200-141GB"})
    origins = {8: TableOrigin(None, "my measurements")}
    assert own.cited(origins) == own.model_copy(update={"table_source": "my measurements"})
    assert larger.cited(origins) == larger
    assert larger.cited({8: TableOrigin("A100-80GB", None)}) == larger


def test_a_calibration_out_of_time_gives_its_limit_in_whole_seconds(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr("solver.calibrate.CALIBRATION_TIME_LIMIT_MS", 1)  # a millisecond: 0 whole seconds
    with pytest.raises(QueryError) as raised:
        calibrate(observations(CATALOG))
    assert re.fullmatch(r"the calibration program found no optimal fit for 2134 observations within 0 s \(GLOP status "
                        r"\d+\); the cells are too many to fit in time: give fewer", str(raised.value))


def test_answers_name_a_memory_model_of_your_own(cli, tmp_path: Path):
    # The shipped model, and one fitted on the documented tables alone, go unnamed; one calibrated on your cells is
    # named by its source in the plan's memory line and in solve memory's heading.
    assert load_memory_model().own_source is None and solver.calibrate_memory_model().memory_model.own_source is None
    example = Path(__file__).parent.parent / "docs" / "examples" / "my-cells.yaml"
    mine = tmp_path / "mine.yaml"
    assert cli("calibrate", "--cells", str(example), "--out", str(mine))[0] == 0
    flags = ["--model", "8B", "--gpu", "h100", "--gpus", "8", "--len", "64k"]
    shipped, own = (" ".join(cli(*flags, *memory)[1].split()) for memory in ([], ["--memory-model", str(mine)]))
    assert "to spare (memory model) apply" in shipped and "memory model:" not in shipped
    assert "to spare (memory model: calibrated on my-cells.yaml) apply" in own
    shipped, own = (" ".join(cli("memory", *flags, "--sp", "4", *memory)[1].split())
                    for memory in ([], ["--memory-model", str(mine)]))
    assert "margin 0.01 ┏" in shipped and "margin 0.01, memory model: calibrated on my-cells.yaml ┏" in own


def test_solve_memory_shows_host_memory_that_rules_a_setting_out_in_red(cli, coloured_screen):
    # Offload's 203.4 GiB per node (every rank loading the model, no release named) fit in 256 GiB of host memory
    # (unstyled), not in 128 (red, as the verdict it decides); the tables' line that the GPUs' memory holds but the
    # host's does not is yellow.
    asked = ("memory", "--model", "8B", "--gpu", "a100", "--gpus", "4", "--len", "65536", "--sp", "4", "--env",
             "--offload")
    assert [cli(*asked, "--host-ram", ram)[0] for ram in ("256", "128")] == [0, 1]
    lines = [line.split(" per node")[0].split(" (")[0] for line in coloured_screen.getvalue().splitlines()
             if "host memory: " in line or "tables: " in line]
    assert lines == ["host memory: 203.4 GiB", "\x1b[32mtables: it trains", "\x1b[31mhost memory: 203.4 GiB",
                     "\x1b[33mtables: it trains"]


def test_a_thin_caution_of_one_setting_stays_whatever_the_margin_and_names_the_margin_that_keeps_room():
    # Qwen3-0.6B with Env + Offload + SP=2 on 2 RTX 4090s at 16384 tokens: 1.48 GiB to spare at 0.01; the card's
    # default 0.06 holds back 0.05 x 22.26 usable (23.99 x 0.928) = 1.11 more, leaving 0.4, under the 1 that is thin.
    # Another margin moves the room to spare by 0.2226 GiB a hundredth, but the setting's room is the same: the
    # caution stays, naming the margin that keeps 1 GiB more than the default's (0.06 + 1 / 22.26, rounded up: 0.11,
    # at which it fails), and what that keeps: 0.05 x 22.26 = 1.1 GiB more.
    def estimated(margin: float | None):
        return estimate_memory("0.6B", "rtx-4090", 2, 16384, sp=2, env=True, offload=True, margin=margin,
                               option_names=COMMAND_OPTIONS)

    for margin, spare in ((None, "0.4"), (0.05, "0.6"), (0.07, "0.1")):
        assert estimated(margin).caution_codes == (CautionCode.THIN_HEADROOM, CautionCode.SP_OVER_PCIE)  # a 4090's
        caution = estimated(margin).cautions[0]
        assert caution.startswith(f"{spare} GiB to spare where the estimate extrapolates") and caution.endswith(
            "--margin 0.11 keeps 1.1 GiB more to spare than the default 0.06 here, or measure a step first")
    assert not estimated(0.11).fits


def test_what_a_raised_margin_holds_back_counts_as_room_to_spare_in_solve_memory():
    # Qwen3-1.7B with Env + Offload + SP=2 on 2 RTX 4090s at 14336 tokens: 2.38 GiB to spare at 0.01, 1.27 at the
    # card's default 0.06 (0.05 x 22.26 usable = 1.11 less), no thin caution; at --margin 0.08 it has 1.27 - 0.45 =
    # 0.82, below the 1 that is thin, but the 0.45 GiB the margin holds back beyond the default's is room too: still
    # none (only SP's over the 4090s' PCIe, session 63).
    def estimated(margin: float | None):
        return estimate_memory("1.7B", "rtx-4090", 2, 14336, sp=2, env=True, offload=True, margin=margin)

    assert [(round(estimated(margin).headroom_gib, 2), estimated(margin).caution_codes)
            for margin in (None, 0.08)] == [(1.27, (CautionCode.SP_OVER_PCIE,)), (0.82, (CautionCode.SP_OVER_PCIE,))]
    assert estimated(None).beyond_calibration  # an extrapolation, which a thin room would caution


def test_cli_memory_says_the_share_of_the_memory_that_is_usable_so_the_breakdown_checks_by_hand(cli):
    # Two RTX 4090s (23.99 GiB each): with Env 0.9285 of the memory is usable, less the 24 GiB card's default margin
    # of 0.06 (0.9285 x 0.94 = 87.3%: 20.94 GiB); without Env 0.9 (0.9 x 0.94 = 84.6%). The optimizer step's own
    # share is said beside it where the states are on the GPU (0.98 x 0.94 = 92.1%: 22.10 GiB).
    flags = ["memory", "--model", "0.6B", "--gpu", "rtx-4090", "--gpus", "2", "--len", "16k", "--sp", "2"]
    status, out, _ = cli(*flags, "--env", "--offload")
    assert status == 0 and "│ usable        │ 20.94 │" in out
    # One "usable", the share in parentheses after it, as the optimizer step's is. 1.48 GiB to spare at 0.01 less
    # 0.05 x 22.27 = 1.11: 0.37.
    assert ("fits (estimated): 0.37 GiB to spare of the usable memory (87.3% of the memory, the margin taken "
            "off)\n") in out
    # 16.75 GiB over at 0.01, and 0.05 x 23.99 x 0.9 = 1.08 more at 0.06.
    status, out, _ = cli("memory", "--model", "1.7B", "--gpu", "rtx-4090", "--gpus", "2", "--len", "8k")
    assert status == 1 and ("does not fit (estimated): 17.83 GiB over the usable memory (84.6% of the memory, "
                            "the margin taken off); the optimizer step takes 17.03 GiB of the 22.10 it may (92.1% of "
                            "the memory)") in " ".join(out.split())
