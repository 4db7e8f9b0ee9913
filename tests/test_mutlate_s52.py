"""Tests that kill mutants of session 52's later code which its own tests let live (/work/keep/review-s52-mutlate.md):
DeepSeek's and GLM-4-MoE's configs read by --model-config (their refusals, null and zero keys, shape, tied
embeddings, YaRN), a latent attention's rollout cache, and `MemoryAnswer`'s read-back with Offload."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

import solver
from solver.memory import GIB, MemoryAnswer, rollout_engines
from solver.rules import COMMAND_OPTIONS
from solver.tables import QueryError, TableError, load_model_config
from solver.tables.schema import MoE

DEEPSEEK_V2_LITE = {
    "model_type": "deepseek_v2", "hidden_size": 2048, "intermediate_size": 10944, "moe_intermediate_size": 1408,
    "num_hidden_layers": 27, "num_attention_heads": 16, "n_routed_experts": 64, "n_shared_experts": 2,
    "num_experts_per_tok": 6, "first_k_dense_replace": 1, "q_lora_rank": None, "kv_lora_rank": 512,
    "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "vocab_size": 102400,
    "tie_word_embeddings": False, "max_position_embeddings": 163840}
"""DeepSeek-V2-Lite's shape as its config.json gives it (tests/test_latent_moe.py's, without its YaRN)."""
TINY_GLM4_MOE = {
    "model_type": "glm4_moe", "hidden_size": 64, "intermediate_size": 200, "moe_intermediate_size": 16,
    "num_hidden_layers": 3, "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 32, "n_routed_experts": 8,
    "n_shared_experts": 1, "num_experts_per_tok": 2, "first_k_dense_replace": 1, "vocab_size": 1000,
    "max_position_embeddings": 4096}
"""A small GLM-4-MoE-style config: grouped-query attention, a dense first layer wider than the experts' path."""
V2_LITE_ATTENTION = 2048 * 16 * 192 + 2048 * 576 + 512 + 512 * 16 * 256 + 16 * 128 * 2048
"""One DeepSeek-V2-Lite layer's latent attention: q_proj, kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj, o_proj."""
V2_LITE_ROUTED = 64 * (3 * 2048 * 1408 + 2048)
"""One DeepSeek-V2-Lite MoE layer's 64 routed experts with their router rows."""
V2_LITE_REST = 2 * 102400 * 2048 + 2048
"""DeepSeek-V2-Lite's untied embeddings and final norm."""


def _read(tmp_path: Path, config: dict[str, object], **changes: object) -> Any:
    """The model `load_model_config` reads from `config` with `changes` (a key changed to ``...`` left out)."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps({key: value for key, value in {**config, **changes}.items() if value is not ...}),
                    encoding="utf-8")
    return load_model_config(path)


@pytest.mark.parametrize("shared", [0, None])
def test_deepseek_v2_lite_without_shared_experts_counts_none(tmp_path: Path, shared: int | None):
    # n_shared_experts 0 or null: the 26 MoE layers hold their routed experts alone (no ungated 2 x 1408 MLP).
    model = _read(tmp_path, DEEPSEEK_V2_LITE, n_shared_experts=shared)
    total = 27 * (V2_LITE_ATTENTION + 2 * 2048) + 3 * 2048 * 10944 + 26 * V2_LITE_ROUTED + V2_LITE_REST
    assert model.parameters_b * 1e9 == pytest.approx(total, abs=1)
    assert model.moe == MoE(experts=64, active_experts=6, moe_intermediate_size=1408, shared_expert_gate=False,
                            dense_layers=1, dense_intermediate_size=10944)
    assert model.intermediate_size == 10944  # the dense layer, wider than 6 x 1408


@pytest.mark.parametrize("dense", [0, None])
def test_deepseek_v2_lite_without_dense_layers_counts_experts_in_every_layer(tmp_path: Path, dense: int | None):
    # first_k_dense_replace 0 or null: all 27 layers hold the experts and the shared ones, no dense MLP (width 0).
    model = _read(tmp_path, DEEPSEEK_V2_LITE, first_k_dense_replace=dense)
    total = 27 * (V2_LITE_ATTENTION + 2 * 2048 + V2_LITE_ROUTED + 3 * 2048 * 2816) + V2_LITE_REST
    assert total == 16210324992  # 15706484224 less the dense MLP (67239936), plus a MoE layer (571080704)
    assert model.parameters_b * 1e9 == pytest.approx(total, abs=1)
    assert model.moe == MoE(experts=64, active_experts=6, moe_intermediate_size=1408,
                            shared_expert_intermediate_size=2816, shared_expert_gate=False)
    assert model.shape[8] == (64, 6, 1408, 2816)


def test_deepseek_v2_lites_shape_names_its_shared_and_dense_widths_and_its_latent_ranks(tmp_path: Path):
    model = _read(tmp_path, DEEPSEEK_V2_LITE)
    assert model.shape == (2048, 27, 16, 16, 192, 11264, 102400, False, (64, 6, 1408, 2816, 1, 10944), False,
                           (0, 512, 128, 64, 128))


@pytest.mark.parametrize(("config", "changes", "message"), [
    # MTP layers where the class declares none (DeepSeek-MoE's remote code), DeepSeek-MoE's quantized weights: refused
    # for every DeepSeek layout, not only latent attention's.
    ({**TINY_GLM4_MOE, "model_type": "deepseek"}, {"num_nextn_predict_layers": 1},
     "num_nextn_predict_layers 1: multi-token prediction layers, which this model_type's class does not declare"),
    ({**TINY_GLM4_MOE, "model_type": "deepseek"}, {"quantization_config": {"quant_method": "fp8"}},
     r"quantization_config \{'quant_method': 'fp8'\}: quantized weights"),
    # A quantization_config given at all, even empty.
    (DEEPSEEK_V2_LITE, {"quantization_config": {}}, r"quantization_config \{\}: quantized weights"),
    # DeepSeek-MoE's expert width is moe_intermediate_size; its intermediate_size is the dense layer's.
    ({**TINY_GLM4_MOE, "model_type": "deepseek"}, {"moe_intermediate_size": ...},
     "missing moe_intermediate_size: a deepseek config gives each expert's width there"),
    # A shared expert's key other than n_shared_experts would go uncounted.
    (DEEPSEEK_V2_LITE, {"num_shared_experts": 1}, "num_shared_experts 1: shared experts beside the routed ones"),
    (DEEPSEEK_V2_LITE, {"shared_expert_intermediate_size": 1408},
     "shared_expert_intermediate_size 1408: shared experts beside the routed ones"),
])
def test_a_deepseek_layout_config_with_what_it_cannot_count_is_refused(
        tmp_path: Path, config: dict[str, object], changes: dict[str, object], message: str):
    with pytest.raises(TableError, match=message):
        _read(tmp_path, config, **changes)


def test_deepseek_moe_and_glm4_moe_configs_without_tie_word_embeddings_read_untied(tmp_path: Path):
    # DeepseekConfig's and Glm4MoeConfig's default is false: the input and output embeddings both counted.
    for model_type in ("deepseek", "glm4_moe"):
        model = _read(tmp_path, TINY_GLM4_MOE, model_type=model_type)
        assert model.tied_embeddings is False
        assert model.parameters_b * 1e9 == pytest.approx(
            3 * (64 * 32 * 20 + 2 * 64) + 3 * 64 * 200 + 2 * (8 * (3 * 64 * 16 + 64) + 3 * 64 * 16) + 2 * 1000 * 64
            + 64, abs=1e-3)


def test_a_glm4_moe_yarn_is_re_derived_as_a_qwen_models_is(tmp_path: Path):
    # Only a latent attention's YaRN is the model's own; GLM-4-MoE's context is its YaRN's original 4096, and
    # rft-solver writes the factor a length needs (2 for 8192) rather than keeping the config's.
    model = _read(tmp_path, TINY_GLM4_MOE, max_position_embeddings=16384,
                  rope_scaling={"type": "yarn", "factor": 4, "original_max_position_embeddings": 4096})
    assert (model.native_context, model.rope_scaling, model.yarn_factor(8192)) == (4096, None, 2.0)


def test_a_moes_widest_path_takes_a_dense_width_only_with_dense_layers():
    # A dense width without dense layers (a MoE built in code) is no layer's: 2 experts of 16 are the widest path.
    assert MoE(experts=8, active_experts=2, moe_intermediate_size=16, dense_intermediate_size=200).ffn_width == 32
    assert MoE(experts=8, active_experts=2, moe_intermediate_size=16, dense_layers=1,
               dense_intermediate_size=200).ffn_width == 200


@pytest.mark.parametrize(("memory_gib", "size"), [(80, 1), (40, 2), (24, 4)])
def test_a_latent_attention_engine_caches_the_whole_latent_on_each_gpu(tmp_path: Path, memory_gib: int, size: int):
    # Engines of 1, 2 and 4 GPUs (the bf16 weights, 29.26 GiB, split among them): each GPU caches the 512-wide latent
    # and the 64-wide RoPE key of all 27 layers, 2 x 27 x 576 bytes a token, not a share of them.
    engines = rollout_engines(_read(tmp_path, DEEPSEEK_V2_LITE), memory_gib, 8, 32768)
    assert (engines.size, engines.fits) == (size, True)
    assert engines.kv_cache_gib == 2 * 27 * 576 * 32768 / GIB == 0.94921875


def test_an_offload_answers_step_verdict_rests_on_no_step_room(cli):
    # With Offload no optimizer step is on the GPU (step_gib 0): step_fits rests on no comparison, so a flipped one is
    # refused even where its step_usable_gib is within the JSON's rounding of 0.
    printed = json.loads(cli("memory", "--model", "8B", "--gpu", "h100", "--gpus", "2", "--len", "8k", "--offload",
                             "--json")[1])
    answer = MemoryAnswer.model_validate(printed)
    near = answer.model_copy(update={"step_usable_gib": 0.0001}).model_dump(mode="json")
    assert (near["step_gib"], near["step_fits"]) == (0.0, True)
    with pytest.raises(ValidationError, match="step_fits is False, but the other fields say True"):
        MemoryAnswer.model_validate({**near, "step_fits": False})


def test_an_offload_answers_step_binds_rests_on_no_step_room(cli):
    # With Offload step_binds is false whatever the rooms: a step share as wide as the activations' room (their
    # difference 0, within the JSON's rounding) excuses no flipped step_binds.
    printed = json.loads(cli("memory", "--model", "8B", "--gpu", "h100", "--gpus", "2", "--len", "8k", "--offload",
                             "--json")[1])
    answer = MemoryAnswer.model_validate(printed)
    room = round(answer.usable_gib - answer.total_gib, 4)
    even = answer.model_copy(update={"step_usable_gib": room}).model_dump(mode="json")
    assert (even["step_gib"], even["step_usable_gib"], even["step_binds"]) == (0.0, room, False)
    with pytest.raises(ValidationError, match="step_binds is True, but the other fields say False"):
        MemoryAnswer.model_validate({**even, "step_binds": True})


def test_a_tabled_answers_trains_does_not_rest_on_the_estimates_room(cli):
    # Where the tables speak (Qwen3-8B on 2 GPUs at 8k: no), trains is theirs: the activations' room at the limit
    # (0.0001 GiB) excuses a flipped fits, not a flipped trains.
    printed = json.loads(cli("memory", "--model", "8B", "--gpu", "h100", "--gpus", "2", "--len", "8k", "--json")[1])
    answer = MemoryAnswer.model_validate(printed)
    at_limit = answer.model_copy(update={"usable_gib": answer.total_gib + 0.0001}).model_dump(mode="json")
    assert (at_limit["tables"]["trains"], at_limit["trains"]) == (False, False)
    assert MemoryAnswer.model_validate({**at_limit, "fits": not at_limit["fits"]}).trains is False
    with pytest.raises(ValidationError, match="trains is True, but the other fields say False"):
        MemoryAnswer.model_validate({**at_limit, "trains": True})


def test_a_host_need_the_rounding_may_hold_or_not_reads_back_either_way(cli):
    # A need of 100.0001 GiB is shown 100.1, more than --host-ram 100.05: host_fits false. The JSON's 100.0001 may
    # be rounded from 99.99995 (shown 100.0, which 100.05 holds): a flipped host_fits is the rounding's, read back.
    printed = json.loads(cli("memory", "--model", "8B", "--gpu", "h100", "--gpus", "2", "--len", "8k", "--json")[1])
    answer = MemoryAnswer.model_validate(printed)
    near = answer.model_copy(update={"host_memory_gib": 100.0001, "host_ram_gib": 100.05}).model_dump(mode="json")
    assert (near["host_memory_gib"], near["host_ram_gib"], near["host_fits"]) == (100.0001, 100.05, False)
    assert MemoryAnswer.model_validate({**near, "host_fits": True}).host_fits is False


@pytest.mark.parametrize(("need", "excused"), [(100.0002, True), (100.0003, False)])
def test_a_host_need_is_at_the_limit_within_the_jsons_slack_and_no_further(cli, need: float, excused: bool):
    # --host-ram 100 holds a need shown 100.0: within JSON_GIB_SLACK (0.0002) above 100 the need may be that one, so
    # a flipped host_fits is read back; 0.0003 above, it is refused.
    printed = json.loads(cli("memory", "--model", "8B", "--gpu", "h100", "--gpus", "2", "--len", "8k", "--json")[1])
    answer = MemoryAnswer.model_validate(printed)
    near = answer.model_copy(update={"host_memory_gib": need, "host_ram_gib": 100.0}).model_dump(mode="json")
    assert near["host_fits"] is False
    if excused:
        assert MemoryAnswer.model_validate({**near, "host_fits": True}).host_fits is False
    else:
        with pytest.raises(ValidationError, match="host_fits is True, but the other fields say False"):
            MemoryAnswer.model_validate({**near, "host_fits": True})


def test_map_plans_names_an_unknown_model_before_an_unknown_gpu_type_as_plan_does():
    # plan checks the model first: so does map_plans, each of its models before the GPU type.
    for call in (lambda: solver.plan("70Q", gpu="z100"), lambda: solver.map_plans(["8B", "70Q"], gpu="z100")):
        with pytest.raises(QueryError, match=r"^unknown model '70Q'; accepted: Qwen3-0.6B"):
            call()


def test_memory_answer_gives_a_mixture_of_experts_active_parameters_as_solve_memory_json_does(cli):
    # Qwen3-30B-A3B: 30.5B parameters, 3.321B of them active (its catalogue entry), as the command prints them. (s88:
    # the host memory given, for its 1060.3 GiB at start-up would be cautioned, naming host_ram_gb or --host-ram.)
    answer = solver.memory_answer("30B-A3B", "h100", 8, 8192, host_ram_gb=2048).model_dump(mode="json")
    printed = json.loads(cli("memory", "--model", "30B-A3B", "--gpu", "h100", "--gpus", "8", "--len", "8192",
                             "--host-ram", "2048", "--json")[1])
    assert (answer["model_parameters_b"], answer["model_active_parameters_b"]) == (30.5, 3.321)
    assert answer == printed


def test_map_plans_maps_a_model_named_twice_once(cli):
    # 8B and Qwen3-8B are one model: one row, as solve map --model 8B,Qwen3-8B prints.
    (by_model,) = solver.map_plans(["8B", "Qwen3-8B"], gpu="h100", gpus_up_to=1, option_names=COMMAND_OPTIONS)
    assert [row.model for row in by_model.rows] == ["Qwen3-8B"]
    printed = json.loads(cli("map", "--gpu", "h100", "--model", "8B,Qwen3-8B", "--gpus-up-to", "1", "--json")[1])
    assert [by_model.model_dump(mode="json")] == printed


def test_map_plans_by_length_counts_the_models_not_their_names(cli):
    # 8B, Qwen3-8B and 14B are two models: by length maps one, and the error counts two, as solve map's does.
    with pytest.raises(QueryError, match=r'^by="len" maps one model: give model one name, not 2$'):
        solver.map_plans(["8B", "Qwen3-8B", "14B"], gpu="h100", by="len")
    assert cli("map", "--gpu", "h100", "--model", "8B,Qwen3-8B,14B", "--by", "len") == (
        2, "", "solve map: error: --by len maps one model: give one to --model, not 2\n")
