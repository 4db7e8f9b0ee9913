"""Reading a Hugging Face config.json (--model-config) as a `Model`."""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeGuard

from solver.tables.peft_names import DENSE_MLP_MODEL_TYPE
from solver.tables.reading import (
    API_FILE_READERS,
    NUMBER_TOO_LONG,
    FileReaders,
    given_path,
    read_user_file,
    yaml_looks_like,
)
from solver.tables.schema import MLA, VLLM_UNSCALED_ROPE_TYPES, Model, MoE
from solver.tables.text import TableError, cut, either, first_repeated, json_brief, model_name_from_path

QWEN_MODEL_TYPES = ("qwen2", "qwen2_moe", "qwen3", "qwen3_moe")
"""The ``model_type`` of the Qwen models whose YaRN Qwen's model cards validate (`Model.qwen_yarn`)."""
MOE_CONFIG_KEYS = ("num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts")
"""Keys by which a Hugging Face config declares a mixture of experts (Qwen-MoE, Mixtral, DeepSeek, ...): the number of
routed experts."""
MOE_ONLY_KEYS = ("num_experts_per_tok", "moe_intermediate_size")
"""Keys that only a mixture of experts' config gives (the experts a token takes, each one's width): with neither of
`MOE_CONFIG_KEYS` beside them, the expert count is missing, and the config would read as a far smaller dense model."""
MOE_MODEL_TYPES = ("deepseek_v2", "deepseek_v3", "ernie4_5_moe", "glm4_moe", "gpt_oss", "granitemoe", "hunyuan_v1_moe",
                   "llama4_text", "minimax_m2", "mixtral", "olmoe", "phimoe", "qwen2_moe", "qwen3_moe")
"""Model types whose transformers class is a mixture of experts: a config of one without a key of `MOE_CONFIG_KEYS`
is refused rather than read as a dense model (Qwen3-30B-A3B's without num_experts: 3.34B parameters, not 30.5B)."""
DENSE_MODEL_TYPES = ("gemma", "gemma2", "gemma3_text", "glm4", "granite", "llama", "mistral", "olmo", "olmo2", "phi3",
                     "qwen2", "qwen3", "stablelm")
"""Model types whose transformers class is dense: neither their config class nor their model reads a key of
`MOE_CONFIG_KEYS` or `MOE_ONLY_KEYS` (transformers 4.57.1 ``models/<type>/configuration_<type>.py`` and
``modeling_<type>.py``; ``PretrainedConfig.__init__`` keeps such a key as an attribute no layer reads,
``configuration_utils.py:342-344``), and the model type picks the class (``AutoModelForCausalLM``'s mapping,
``models/auto/modeling_auto.py``): a config of one is counted dense, whatever such keys it carries."""
EXPERT_WIDTH_MODEL_TYPES = ("deepseek", "deepseek_v2", "deepseek_v3", "ernie4_5_moe", "glm4_moe", "qwen2_moe",
                            "qwen3_moe")
"""Model types whose config gives each expert's width as ``moe_intermediate_size``, its ``intermediate_size`` being
another MLP's (a dense layer's, or none): a config of one without it is refused rather than read with Mixtral's
``intermediate_size`` (Qwen3-30B-A3B's 6144 for its experts' 768 would count 233B parameters)."""
SHARED_EXPERT_KEYS = ("shared_expert_intermediate_size", "n_shared_experts", "num_shared_experts",
                      "moe_num_shared_experts", "shared_intermediate_size")
"""Keys by which a mixture-of-experts config gives experts that every token passes through beside the routed ones
(Qwen2-MoE's shared expert, DeepSeek's, ERNIE's, Granite-MoE's): refused above 0, but for the model types
`READ_SHARED_EXPERT_KEYS` reads them of."""
SHARED_EXPERT_LAYOUT = ("qwen2_moe", "shared_expert_intermediate_size")
"""The ``model_type`` whose shared expert `load_model_config` counts, and its key: Qwen2-MoE's (Qwen1.5-MoE,
Qwen2-57B-A14B), a gated MLP of that width in every layer with a gate of one output (transformers'
``Qwen2MoeSparseMoeBlock``)."""
DEEPSEEK_LAYOUT_MODEL_TYPES = ("deepseek", "deepseek_v2", "deepseek_v3", "glm4_moe")
"""Model types laid out as DeepSeek-MoE: the first ``first_k_dense_replace`` layers dense (a gated MLP of
``intermediate_size``), the others routed experts with ``n_shared_experts`` ungated shared experts beside them, one
gated MLP ``n_shared_experts * moe_intermediate_size`` wide (transformers' ``DeepseekV2Moe``, ``Glm4MoeMoE``;
DeepSeek-MoE-16B's remote code): `load_model_config` counts them."""
READ_SHARED_EXPERT_KEYS = {SHARED_EXPERT_LAYOUT[0]: SHARED_EXPERT_LAYOUT[1], "ernie4_5_moe": "moe_num_shared_experts",
                           **dict.fromkeys(DEEPSEEK_LAYOUT_MODEL_TYPES, "n_shared_experts")}
"""The one key of `SHARED_EXPERT_KEYS` that a model type's shared experts are counted by, by model type."""
ERNIE_MOE_DEFAULTS = {"moe_num_shared_experts": 2, "moe_layer_start_index": 1, "moe_layer_end_index": -1,
                      "moe_layer_interval": 1}
"""ERNIE-4.5-MoE's layout keys and their defaults in transformers' ``Ernie4_5_MoeConfig``
(configuration_ernie4_5_moe.py): layer ``i`` holds the experts where ``(i + 1) % moe_layer_interval == 0`` and
``moe_layer_start_index <= i <= moe_layer_end_index`` (-1: the last layer), a dense gated MLP of
``intermediate_size`` otherwise; ``moe_num_shared_experts`` shared experts beside the routed ones, one gated MLP
``moe_num_shared_experts * moe_intermediate_size`` wide without a gate (modeling_ernie4_5_moe.py,
``Ernie4_5_MoeSparseMoeBlock`` and ``Ernie4_5_MoeDecoderLayer``)."""
INTERMEDIATE_WIDTH_EXPERT_MODEL_TYPES = ("hunyuan_v1_moe", "llama4_text")
"""Model types whose transformers class holds, in each expert layer, routed experts and one shared expert, all gated
MLPs ``intermediate_size`` wide, the shared one without a gate (modeling_hunyuan_v1_moe.py's ``HunYuanMoEV1Moe``,
modeling_llama4.py's ``Llama4TextMoe``); Llama 4's other layers (outside ``moe_layers``, every
``interleave_moe_layer_step``-th by default) a dense gated MLP ``intermediate_size_mlp`` wide."""
LLAMA4_DENSE_WIDTH = 16384
"""``Llama4TextConfig``'s default ``intermediate_size_mlp``, its dense layers' width (configuration_llama4.py)."""
PEFT_CONVERTED_MODEL_TYPES = ("afmoe", "cohere2_moe", "deepseek_v2", "deepseek_v3", "deepseek_v32", "dots1",
                              "ernie4_5_moe", "exaone_moe", "flex_olmo", "glm4_moe", "glm4_moe_lite", "glm4v_moe",
                              "glm_moe_dsa", "hunyuan_v1_moe", "longcat_flash", "mellum", "minimax", "minimax_m2",
                              "mixtral", "olmoe", "qwen3_moe", "qwen3_next", "qwen3_omni_moe", "qwen3_omni_moe_thinker",
                              "solar_open")
"""Mixture-of-experts model types whose LoRA config PEFT 0.21.2 converts for transformers 5's fused experts
(`MoE.peft_converts_experts`): those transformers 5.12.1 maps to Mixtral's or Qwen2-MoE's conversion
(``_MODEL_TO_CONVERSION_PATTERN``, ``conversion_mapping.py:39`` to ``:65``), and ``mixtral``, which PEFT adds
(``utils/transformers_weight_conversion.py:44`` to ``:45``); not ``qwen2_moe`` itself, nor ``granitemoe``, ``phimoe``
or ``llama4_text``, whose configs ``_convert_peft_config_moe`` returns unchanged (``:414`` to ``:416``)."""
EVERY_EXPERT_MODEL_TYPES = ("llama4_text",)
"""Model types whose transformers class computes every expert for every token (`MoE.computes_every_expert`):
modeling_llama4.py's ``Llama4TextMoe`` (transformers 5.25 lines 169-177, 5.12.1 lines 167-175) repeats the hidden
states once per expert, scales each copy by its router score (0 for the experts the router did not choose), and
``Llama4TextExperts`` runs one ``bmm`` through all of them (5.25 lines 66-84); verl's FSDP trainer and Trinity load that
class unpatched."""
MLA_MODEL_TYPES = ("deepseek_v2", "deepseek_v3")
"""Model types whose ``kv_lora_rank`` `load_model_config` reads as multi-head latent attention (`MLA`), as
transformers' ``DeepseekV2Attention`` lays it out; another's (MiniCPM3's) is refused."""
TRAINED_YARN_MODEL_TYPES = (*MLA_MODEL_TYPES, "gpt_oss", "ministral3")
"""Model types whose YaRN ``rope_scaling`` is the model's own, trained with it over ``max_position_embeddings``
(`_trained_yarn`): DeepSeek-V2's and V3's; gpt-oss's (factor 32 over 4096 positions, 131072 in all) and Ministral 3's
(factor 16 over 16384, 262144 in all), whose transformers 5.9.0 config classes set that YaRN where a config gives
none (``configuration_gpt_oss.py:80-88``, ``configuration_ministral3.py:94-106``)."""
MLA_KEYS = ("kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")
"""The keys a latent attention's config must give (besides ``q_lora_rank``, null for a full query projection)."""
MTP_MODEL_TYPES = ("deepseek_v3", "ernie4_5_moe", "glm4_moe")
"""Model types whose ``num_nextn_predict_layers`` (multi-token prediction layers stored after the model's own) is
read but not counted (`Model.uncounted_mtp_layers`): their transformers classes build ``num_hidden_layers`` decoder
layers and drop the MTP layers' weights on load (``_keys_to_ignore_on_load_unexpected`` in modeling_deepseek_v3.py,
modeling_glm4_moe.py, modeling_ernie4_5_moe.py; only generation's ``MtpModel`` loads them, modeling_layers.py), and
verl's FSDP trainer loads that class (``from_pretrained``), zeroing the key while ``model.mtp.enable`` is off, its
default (verl/workers/config/model.py); only its Megatron trainer trains MTP layers."""
UNREAD_MTP = ("multi-token prediction layers, which this model_type's class does not declare (DeepSeek-V3's, "
              "GLM-4.5's and ERNIE-4.5's are read, their weights not loaded): set it to 0")
"""Why ``num_nextn_predict_layers`` above 0 is refused in a `DEEPSEEK_LAYOUT_MODEL_TYPES` config not of
`MTP_MODEL_TYPES` (DeepSeek-MoE's remote code, which rft-solver has not read; DeepSeek-V2's class)."""
QUANTIZED = ("quantized weights (DeepSeek-V3's fp8), which transformers loads frozen (its FP8 layers pass no gradient "
             "to their weights, integrations/finegrained_fp8.py) and verl's Megatron trainer refuses; rft-solver "
             "counts bf16 full training: point at the bf16 checkpoint's config.json")
"""Why a config with a ``quantization_config`` (any, even empty) is refused."""
DENSE_LAYER_KEYS: dict[str, object] = {"mlp_only_layers": [], "decoder_sparse_step": 1, "first_k_dense_replace": 0,
                                       "moe_layer_freq": 1, "expert_layer_period": 1}
"""Keys by which a mixture-of-experts config makes some of its layers dense (Qwen-MoE's, DeepSeek's, Jamba's), each
with the value that makes none so: another is refused, since `load_model_config` counts the routed experts in every
layer, but for `DEEPSEEK_LAYOUT_MODEL_TYPES`' ``first_k_dense_replace`` (their ``moe_layer_freq`` is refused too:
transformers' DeepSeek-V2 code ignores it, the remote code makes every other layer dense with it)."""
MULTIMODAL_CONFIG_KEYS = ("text_config", "vision_config", "audio_config", "speech_config", "img_processor",
                          "mm_vision_tower", "audio_processor")
"""Keys by which a Hugging Face config declares a multimodal model (Qwen2-VL, LLaVA, Qwen2-Audio; Phi-3-vision's
``img_processor``, the original LLaVA's ``mm_vision_tower``, Phi-4-multimodal's ``audio_processor``, ...)."""
TIED_BY_MODEL_TYPE = {"ernie4_5_moe": True, "hunyuan_v1_moe": False, "llama4_text": False, "gpt_oss": False,
                      "minimax_m2": False, "ministral3": False, "cwm": False,
                      "gemma": True, "gemma2": True, "gemma3_text": True, "granite": False, "llama": False,
                      "mistral": False, "mixtral": False, "olmo": False, "olmo2": False, "phi3": False, "qwen2": False,
                      "qwen2_moe": False, "deepseek": False, "deepseek_v2": False, "deepseek_v3": False,
                      "glm4_moe": False, "qwen3": False, "qwen3_moe": False, "stablelm": False}
"""Whether a config.json without ``tie_word_embeddings`` ties its embeddings, by its ``model_type``: the default of
that model's config class in transformers (its base class's is true; Llama's, Qwen's, Mistral's and others'
false; gpt-oss's, MiniMax-M2's and Ministral 3's false, ``configuration_gpt_oss.py:53``,
``configuration_minimax_m2.py:84``, ``configuration_ministral3.py:88`` in 5.9.0; CWM's false,
``configuration_cwm.py:78`` in 5.12.1)."""
SOFTCAP_BY_MODEL_TYPE = {"gemma2": 30.0}
"""A config.json's ``final_logit_softcapping`` where it gives none, by its ``model_type``: its class's default
(Gemma-2 caps the logits at 30; the others, and null, do not cap them)."""
HEAD_DIM_BY_MODEL_TYPE = {"gemma": 256, "gemma2": 256, "gemma3_text": 256, "ernie4_5": 128, "glm": 128, "glm4": 128,
                          "helium": 128, "llama4_text": 128, "qwen3": 128, "seed_oss": 128, "gpt_oss": 64,
                          "minimax_m2": 128, "ministral3": 128, "cwm": 128}
"""A config.json's ``head_dim`` where it gives none (or null), by its ``model_type``: its config class's default, the
same in transformers 4.51.3 (where the class exists), 4.57.6, 5.0.0 and 5.25.0 (``configuration_qwen3.py:160``,
``:163``, ``:133`` and ``:67``: Qwen3-4B's 128, not its 2560 / 32 = 80; Gemma's, Gemma-2's and Gemma-3 text's
256; GLM's, GLM-4's, Helium's, Llama 4 text's, ERNIE-4.5's and Seed-OSS's 128; gpt-oss's 64, not its 2880 / 64 = 45,
``configuration_gpt_oss.py:49`` in 5.9.0, ``:56`` in 5.25.0). No listed type's default differs between the majors.
MiniMax-M2's and Ministral 3's 128 exist in transformers 5 alone (their classes are new in 5.0.0:
``configuration_minimax_m2.py:75``, ``configuration_ministral3.py:79`` in 5.9.0; ``:77`` and ``:79`` in 5.25.0):
Ministral-3-3B's 128, not its 3072 / 32 = 96; CWM's 128 likewise (``configuration_cwm.py:82`` in 5.12.1, a class new
in 5.x). Other types, Qwen3-MoE's among them (``Qwen3MoeConfig`` declares no
``head_dim``, and ``modeling_qwen3_moe.py:144`` in 4.51.3 takes ``hidden_size // num_attention_heads``), take that
quotient."""
NULL_HEAD_DIM_QUOTIENT_MODEL_TYPES = ("cwm", "gpt_oss", "llama4_text", "ministral3")
"""Model types whose config class takes ``hidden_size // num_attention_heads`` for a ``head_dim`` a config.json gives
as null, in place of its `HEAD_DIM_BY_MODEL_TYPE` default (transformers 5.12.1 ``configuration_cwm.py:109-110``,
``configuration_gpt_oss.py:74``, ``configuration_llama4.py:183``, ``configuration_ministral3.py:108``); the other
types' classes keep the null, read as their default."""
CLASS_ROPE_BY_MODEL_TYPE = {"cwm": {"rope_type": "llama3", "rope_theta": 1e6, "factor": 16.0, "high_freq_factor": 4.0,
                                    "low_freq_factor": 1.0, "original_max_position_embeddings": 8192}}
"""A config.json's RoPE where it gives no ``rope_parameters`` (or null) and no ``rope_scaling`` (or null or empty), by
its ``model_type``: its transformers 5.12.1 config class's, CWM's llama3 scaling (factor 16 over 8192 positions, at a
base of 1000000, ``configuration_cwm.py:88-96``), which a top-level ``rope_theta`` does not change (the class's
dict keeps its own, ``modeling_rope_utils.py:707-717``); the other types' classes set none."""
UNGATED_MODEL_TYPES = ("apertus", "arcee", "bloom", "codegen", "falcon", "gpt2", "gpt_bigcode", "gpt_neo", "gpt_neox",
                       "gptj", "mpt", "nemotron", "opt", "persimmon", "phi", "starcoder2")
"""Model types whose MLP is two matrices (up and down), not the three of a gated MLP (gate, up and down) that
`load_model_config` counts: refused rather than counted a third too large."""
HYBRID_MODEL_TYPES = ("bamba", "falcon_h1", "granitemoehybrid", "jamba", "lfm2", "nemotron_h", "plamo2",
                      "qwen3_next", "recurrent_gemma", "zamba", "zamba2")
"""Model types whose layers mix attention with state-space (Mamba), convolution or recurrent blocks, which a
config's sizes do not describe (Nemotron-H's 52 layers hold 4 of attention): refused rather than counted as
attention and a gated MLP in every layer."""
UNREAD_MODEL_TYPES = {
    "qwen": "the first Qwen's remote-code config, whose intermediate_size is twice its MLP's width; Qwen1.5 and later "
            "(model_type qwen2, qwen3) are read",
    "chatglm": "ChatGLM's remote-code config, whose keys (num_layers, padded_vocab_size, multi_query_group_num) are "
               "not the ones rft-solver reads; GLM-4-0414 and later (model_type glm4) are read",
    "dbrx": "DBRX's config, a mixture of experts whose experts sit in ffn_config, which rft-solver does not read",
    "afmoe": "AFMoE's attention gates its output with a projection of its own (gate_proj, hidden_size x "
             "num_attention_heads x head_dim), and its first num_dense_layers layers are dense beside experts with "
             "num_shared_experts shared ones, which rft-solver does not count (transformers 5.9.0 "
             "modeling_afmoe.py:361, :436, :233)",
    "cohere2_moe": "Cohere2-MoE's dense layers (its mlp_layer_types, else its first first_k_dense_replace) are "
                   "prefix_dense_intermediate_size wide beside experts whose shared ones are intermediate_size x "
                   "num_shared_experts wide, which rft-solver does not count (transformers 5.12.1 "
                   "modeling_cohere2_moe.py:350-354, :175-179)",
    "hy_v3": "Hy-V3's dense layers are given by mlp_layer_types (its first by default), beside experts with "
             "num_shared_experts shared ones, which rft-solver does not read (transformers 5.12.1 "
             "configuration_hy_v3.py:106-108, modeling_hy_v3.py:397, :371-372)",
    "laguna": "Laguna's attention gates each head with a projection of its own (g_proj, hidden_size x heads) and "
              "takes its heads per layer (num_attention_heads_per_layer), and its dense layers are given by "
              "mlp_layer_types beside experts with a shared one, which rft-solver does not count (transformers "
              "5.12.1 modeling_laguna.py:370, :425-429, :239)",
    "longcat_flash": "each LongCat-Flash layer holds two latent attentions and two dense MLPs beside its experts, and "
                     "zero_expert_num zero-computation experts, which rft-solver does not count (transformers 5.12.1 "
                     "modeling_longcat_flash.py:466-469, :153)",
    "hrm_text": "HRM-Text runs two stacks of num_layers_per_stack layers over H_cycles x L_cycles cycles, and its "
                "attention gates its output with a projection of its own (gate_proj), which rft-solver does not "
                "count (transformers 5.12.1 modeling_hrm_text.py:431-432, :515-523, :187)"}
"""Model types refused with a reason of their own: configs whose keys would be missed or misread."""
CHECKED_MODEL_TYPES = (*TIED_BY_MODEL_TYPE, "glm4", "internlm2")
"""Model types known to be laid out as `load_model_config` counts them, attention and a gated MLP (or routed experts of
gated MLPs; DeepSeek's dense first layers and latent attention) in every layer (tests/data/hf-configs: published
llama, mistral, mixtral, gemma2, gemma3_text, phi3, qwen2_moe, qwen3, qwen3_moe, internlm2 and deepseek_v2 configs
within 1% of their model cards' sizes; tests/test_latent_moe.py: DeepSeek-V2-Lite's, DeepSeek-MoE-16B's,
DeepSeek-V3's and GLM-4.5-Air's shapes within 1% of their cards' totals; tests/test_moe_layouts.py: ERNIE-4.5-MoE's,
Hunyuan-MoE's and Llama 4 text's layouts, read from transformers' classes, within 1% of their cards' totals, and
gpt-oss-20b's and MiniMax-M2's shapes, tests/test_memory.py Ministral-3-3B's: transformers 5.9.0's gpt-oss and
MiniMax-M2 classes hold routed experts of gated MLPs ``intermediate_size`` wide in every layer beside attention of
``head_dim`` wide heads, Ministral 3's is Mistral's layout; gpt-oss's biases and attention sinks, one number a head,
which flash attention takes with no term of its own, and MiniMax-M2's query and key norms, under 0.1% of their
parameters, are left out; tests/test_memory.py CWM's, Llama's layout in transformers 5.12.1's ``modeling_cwm.py``); a
config of another reads the same way, with a caution (`Model.unchecked_layout`)."""
TRANSFORMERS_5_MODEL_TYPES = ("cwm", "minimax_m2", "ministral3")
"""Model types of `CHECKED_MODEL_TYPES` whose transformers class is new in 5.x: none in 4.57.6 (Trinity 0.5.1's
``transformers<5``, and what 0.5.2's ``vllm`` extra installs), one in 5.3.0 (0.5.2's newest) and 5.12.1
(``models/cwm``, ``models/minimax_m2``, ``models/ministral3``): a Trinity 0.5 trainer on transformers 4 loads such a
model only by its checkpoint's own code (``solver.rules.transformers_4_unloaded_words``)."""
OWN_CODE_MODEL_TYPES = ("deepseek", "internlm2")
"""Model types of `CHECKED_MODEL_TYPES` that transformers has no class of (none in 5.9.0's
``models/auto/auto_mappings.py``; verl 0.9.1 needs ``transformers>=5.5.3,<5.11``): a config of one loads only through
its checkpoint's own modeling code, which its ``auto_map`` names (``trust_remote_code``), and verl's Ulysses patch does
not reach its attention (`ULYSSES_UNREACHED`)."""
ULYSSES_UNREACHED = ("verl's Ulysses patch swaps only a module-level _flash_attention_forward or transformers' own "
                     "flash-attention function (verl 0.9.1 models/transformers/monkey_patch.py:544-552), and such code "
                     "calls flash-attention its own way (InternLM2's from a method of its attention class), so each "
                     "GPU would attend only within its own slice of the sequence, with no error")
"""Why verl's Ulysses SP trains a model of its own modeling code wrong (`Model.ulysses_unreached`): InternLM2's
(``modeling_internlm2.py``) calls ``flash_attn_func`` from a method of its attention class, as transformers' code did
before 4.42; verl asserts only the heads (``monkey_patch.py:343-350``) and slices every rank's inputs
(``workers/engine/fsdp/transformer_impl.py:1215-1230``, with no attention mask: ``:1256-1260``)."""
VLLM_LENGTH_KEYS = ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
                    "max_target_positions", "max_sequence_length", "max_seq_length", "seq_len")
"""The config.json keys vLLM 0.19.1 derives a model's length from (`_vllm_length_key`): the smallest of those it gives,
null ones skipped, a ``model_max_length`` in that one's place (``derive_max_model_len_and_key``,
``transformers_utils/model_arch_config_convertor.py:251-284``, which ``_get_and_verify_max_len`` takes,
``vllm/config/model.py:2056-2058``)."""
NO_LIMIT_LENGTH = int(1e30)
"""transformers' ``VERY_LARGE_INTEGER`` (``tokenization_utils_base.py``), the ``model_max_length`` it writes for a
model with no limit: a config.json's is no length past `CONFIG_LIMITS`, but that "no limit", which vLLM 0.19.1 takes
as the length it derives (``derive_max_model_len_and_key`` takes any ``model_max_length`` in place of the other
keys), so it refuses no length (`_vllm_length_key`)."""
SLIDING_WINDOW_DEFAULTS = {"gemma2": 4096, "gemma3_text": 4096, "mistral": 4096, "mimo": 4096, "qwen2": 4096,
                           "qwen2_moe": 4096, "qwen3": 4096, "qwen3_moe": 4096, "gpt_oss": 128,
                           "cwm": 8192}
"""A config.json's ``sliding_window`` where it gives no such key, by model type: its transformers 5.9.0 config class's
default (``configuration_gemma2.py:88``, ``configuration_gemma3.py:97``, ``configuration_mistral.py:80``,
``configuration_gpt_oss.py:52``, and 5.12.1's ``configuration_cwm.py:84``; Qwen's, kept only with
``use_sliding_window``, ``configuration_qwen2.py:75``,
``configuration_qwen2_moe.py:85``, ``configuration_qwen3.py:78``, ``configuration_qwen3_moe.py:100``, and MiMo's,
whose checkpoint's own config class builds on Qwen2's); the other classes' is none."""
USE_SLIDING_WINDOW_MODEL_TYPES = ("mimo", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe")
"""Model types whose transformers 5.9.0 config class drops the ``sliding_window`` unless ``use_sliding_window`` is
true, its default false (``configuration_qwen2.py:84``, ``configuration_qwen2_moe.py:105``,
``configuration_qwen3.py:87``, ``configuration_qwen3_moe.py:115``; MiMo's, built on Qwen2's): Qwen2.5's and Qwen3's
configs give a window that nothing uses."""
PER_LAYER_WINDOW_MODEL_TYPES = ("cwm", "gemma2", "gemma3_text", "llama", "mistral", "olmo2")
"""Model types whose vLLM 0.19.1 class gives each layer its own sliding window by its ``layer_types``
(``per_layer_sliding_window``: ``model_executor/models/gemma2.py``, ``gemma3.py``, ``llama.py``, which Mistral's
class builds on and CWM's is, ``registry.py:92``, ``olmo2.py``); another's, where the types mix, caches every layer
whole."""
EVEN_LAYER_WINDOW_MODEL_TYPES = ("gpt_oss",)
"""Model types whose vLLM 0.19.1 class gives the sliding window to its even layers (0, 2, ...) whatever their
``layer_types`` say, where the types mix (``gpt_oss.py:131-140``: ``per_layer_sliding_window`` where ``layer_idx % 2
== 0``), and the others none: gpt-oss's published alternation, from a local first layer, as its class derives it."""
QWEN2_MODEL_TYPES = ("mimo", "qwen2", "qwen3")
"""Model types whose vLLM 0.19.1 class builds on its ``Qwen2Model`` (``qwen2.py``, ``qwen3.py:254``, ``mimo.py:61``;
Qwen2's reward models, ``qwen2_rm.py:51``, are of ``model_type`` qwen2), which refuses layer types that mix sliding
and full attention unless ``max_window_layers`` is ``num_hidden_layers`` (``qwen2.py:373-382``, an assert, so the
engine does not start). MiMo's config class is its checkpoint's own (transformers has none), built on Qwen2's, whose
layer types it derives alike. The other classes built on it are multimodal models' language models (``qwen3_vl.py``'s
``Qwen3LLMModel``; Qwen2-VL's, Qwen2-Audio's, MiniCPM-V's and others' ``Qwen2ForCausalLM``), whose configs
`load_model_config` refuses as multimodal, and an embedding model (``voyage.py``), no rollout."""
WHOLE_WINDOW_LAYERS_MODEL_TYPES = ("seed_oss",)
"""Model types whose vLLM 0.19.1 class refuses a sliding window it takes for the whole model (the layers of one
type, `_vllm_sliding_window`) where the config.json gives a ``max_window_layers`` other than ``num_hidden_layers``
(``seed_oss.py:281-293``, an assert as Qwen2's, but on vLLM's model-wide window): transformers 5.9.0's Seed-OSS class
declares neither key (``configuration_seed_oss.py``), and keeps them as the config.json gives them."""
ROPE_TYPE_KEYS: dict[str, tuple[str, ...]] = {
    "default": (), "linear": ("factor",), "dynamic": ("factor",), "yarn": ("factor",),
    "longrope": ("short_factor", "long_factor"), "llama3": ("factor", "low_freq_factor", "high_freq_factor"),
    "proportional": ()}
"""The RoPE scaling types transformers 5.9.0 builds, and the keys a config's scaling of each must give: its
``ROPE_INIT_FUNCTIONS`` (``modeling_rope_utils.py:632-639``; another type fails to build, a KeyError, as in
``modeling_llama.py:83-86``) and ``default``, which each rotary embedding computes itself; the keys its
``_validate_<type>_rope_parameters`` requires (``:804-997``, a KeyError where one is missing, ``:1020-1022``),
but ``rope_theta`` and ``original_max_position_embeddings``, which ``standardize_rope_params`` fills in
(``:727-773``)."""
_YARN_KEYS = (("factor",), ("original_max_position_embeddings",))
VLLM_ROPE_TYPE_KEYS: dict[str, tuple[tuple[str, ...], ...]] = {
    "default": (), "proportional": (), "mllama4": (), "linear": (("factor",),), "ntk": (("factor",),),
    "dynamic": (("alpha", "factor"),), "xdrope": (("alpha",), ("xdrope_section",)),
    "llama3": (("factor",), ("low_freq_factor",), ("high_freq_factor",), ("original_max_position_embeddings",)),
    "yarn": _YARN_KEYS, "deepseek_yarn": _YARN_KEYS, "deepseek_llama_scaling": _YARN_KEYS,
    "longrope": (("short_factor",), ("long_factor",), ("original_max_position_embeddings",)),
    "openpangu": (("mrope_section",), ("mrope_interleaved",))}
"""The RoPE scaling types vLLM 0.19.1 builds a rotary embedding of, and the keys it reads from a scaling of each (one
of each group): ``get_rope`` (``model_executor/layers/rotary_embedding/__init__.py:95-338``; another type raises
"Unknown RoPE scaling type"), as it takes a mapping no one has filled in, Trinity 0.6's: it hands vLLM the rollout's
``rope_scaling`` as ``hf_overrides={"rope_parameters": ...}`` (``common/models/vllm_model.py:132-138``), which vLLM
sets after reading the config.json (``vllm/config/model.py:470-478``, ``:507-508``), past transformers'
``standardize_rope_params``, which would fill ``original_max_position_embeddings`` in
(``transformers_utils/config.py:414``, ``:786``)."""
VLLM_DEFAULT_ROPE_THETA = {"qwen2": 1e6, "mimo": 1e6, "qwen3": 1e6, "seed_oss": 1e6, "exaone4": 1e6,
                           "ernie4_5_moe": 5e5, "falcon_h1": 1e11}
"""The RoPE base (``rope_theta``) vLLM 0.19.1's model class of each ``model_type`` puts in a ``rope_parameters``
that lacks one (``set_default_rope_theta``, ``transformers_utils/config.py:368-374``: ``qwen2.py:249``, which
MiMo's class builds on, ``qwen3.py:175``, ``seed_oss.py:201``, ``exaone4.py:178``, ``ernie45_moe.py:334``,
``falcon_h1.py:223``); every other class leaves it out, and ``get_rope`` rotates at `VLLM_FALLBACK_ROPE_THETA`
(``model_executor/layers/rotary_embedding/__init__.py:60``)."""
VLLM_FALLBACK_ROPE_THETA = 10000.0
"""The RoPE base vLLM 0.19.1's ``get_rope`` takes from a ``rope_parameters`` without ``rope_theta``."""
VLLM_DEFAULT_PARTIAL_ROTARY = {"glm4": 0.5, "glm4_moe": 0.5}
"""The share of each head's dimensions RoPE rotates (``partial_rotary_factor``) that vLLM 0.19.1's model class of each
``model_type`` puts in a ``rope_parameters`` that lacks one (``glm4.py:91-97``, ``glm4_moe.py:287``; transformers'
config classes default to the same, 0.5); every other class of a checked type passes ``rope_parameters`` as it is
to ``get_rope`` (Phi-3's, ``phi3.py:10``, as Llama's, ``llama.py:245-248``), which rotates whole heads without one,
`VLLM_FALLBACK_PARTIAL_ROTARY` (``model_executor/layers/rotary_embedding/__init__.py:62``)."""
VLLM_FALLBACK_PARTIAL_ROTARY = 1.0
"""The ``partial_rotary_factor`` vLLM 0.19.1's ``get_rope`` takes from a ``rope_parameters`` without one."""
VLLM_ROTARY_DIM_MODEL_TYPES = ("minimax_m2",)
"""Model types whose vLLM 0.19.1 class puts the config's ``rotary_dim`` over its ``head_dim`` in a ``rope_parameters``
that lacks ``partial_rotary_factor`` (``minimax_m2.py:200-204``, ``rotary_dim=config.rotary_dim``, ``:267``;
MiniMax-M2's 64 of 128); transformers 5.9.0's class reads no ``rotary_dim`` (only ``partial_rotary_factor``,
``modeling_minimax_m2.py:187-189``). RoPE holds no weights, so the share changes no memory rft-solver counts, nor a
length: only what vLLM rotates where Trinity hands it a RoPE scaling (`_vllm_partial_rotary_lost`)."""
PARTIAL_ROTARY_KEYS = ("partial_rotary_factor", "rotary_pct", "rotary_emb_fraction")
"""The names vLLM 0.19.1 reads a config.json's ``partial_rotary_factor`` under, in its order
(``transformers_utils/config.py:385-386``)."""
LEGACY_ROPE_TYPES = {("phi3", "su"): "longrope"}
"""(``model_type``, ``rope_type``) pairs whose config class renames the type: Phi-3's ``su``, its LongRoPE's older
name (``models/phi3/configuration_phi3.py:101-104`` in transformers 5.9.0)."""
CONFIG_LIMITS = {"hidden_size": 1 << 20, "num_hidden_layers": 1 << 14, "num_attention_heads": 1 << 14,
                 "num_key_value_heads": 1 << 14, "head_dim": 1 << 14, "intermediate_size": 1 << 22,
                 "vocab_size": 1 << 24, "original_max_position_embeddings": 1 << 30,
                 **{key: 1 << 30 for key in VLLM_LENGTH_KEYS},
                 **{key: 1 << 16 for key in (*MOE_CONFIG_KEYS, "num_experts_per_tok", "moe_k", "moe_topk",
                                             "num_shared_expert", "interleave_moe_layer_step", "decoder_sparse_step",
                                             "num_nextn_predict_layers", *ERNIE_MOE_DEFAULTS)},
                 "moe_intermediate_size": 1 << 22, "shared_expert_intermediate_size": 1 << 22,
                 "intermediate_size_mlp": 1 << 22, "sliding_window": 1 << 30, "sliding_window_pattern": 1 << 14,
                 "max_window_layers": 1 << 14,
                 **{key: 1 << 16 for key in (*MLA_KEYS, "q_lora_rank", "n_shared_experts")}}
"""The largest value a config.json key may have: far beyond any model, but finite."""


ADAPTER_CONFIG = "adapter_config.json"
"""The file a PEFT (LoRA) adapter's folder holds in place of a model's ``config.json``."""


def model_config_file(path: Path) -> Path:
    """The file `load_model_config` reads for `path`: a model folder's ``config.json``, or `path` itself.
    `TableError` when `path` cannot be looked at (a folder on the way without search permission)."""
    try:
        return path / "config.json" if path.is_dir() else path
    except OSError as error:  # Path.is_dir raises on EACCES before Python 3.14
        raise TableError(f"{path}: cannot read: {error.strerror or error}") from None


def local_model_config(model_path: str | None) -> Path | None:
    """The config.json that a config's ``model.model_path`` names on this machine (a folder holding one, or the file
    itself; relative to the working directory, as Trinity reads it); None otherwise (a Hugging Face id, say: nothing
    is fetched; a name too long for a path, a folder it may not look into: nothing local)."""
    if model_path is None:
        return None
    try:
        file = model_config_file(Path(model_path))
        return file if file.is_file() else None
    except (OSError, TableError):
        return None


class _RepeatedKey(Exception):
    """A JSON object names a key twice: the message is the key's repr."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's pairs as a dict, or `_RepeatedKey` for a key given twice (a typo's twin, which silently wins)."""
    repeated = first_repeated(key for key, _ in pairs)
    if repeated is not None:
        raise _RepeatedKey(repr(repeated))
    return dict(pairs)


def load_model_config(path: Path | str, *, vllm_rollout: bool = True,
                      file_readers: FileReaders = API_FILE_READERS) -> Model:
    """A text model's shape from a local Hugging Face ``config.json``, or a model folder's (no network): a dense
    model's, or a mixture of experts' with routed experts in every layer (Qwen3-MoE's, Mixtral's; Qwen2-MoE's with
    its shared expert) or after dense ones (DeepSeek's, GLM-4-MoE's, with their shared experts), with DeepSeek-V2's
    latent attention or not; its parameter count is computed from the shapes. `TableError`, one line naming the
    file and the key, when it cannot be, and where a vLLM rollout serves the model (`vllm_rollout`) when vLLM
    refuses to build it (`Model.vllm_refusal`, kept there for a trainer alone); a file of another kind given is told
    what reads it, `file_readers` (`solver.tables.load_memory_model`'s). `Catalog.with_model` adds it to a
    catalogue, for ``catalog=``."""
    path = model_config_file(given_path("path", path))
    _check_no_hub_id(path)
    if (adapter_alone := adapter_alone_refusal(path)) is not None:
        raise adapter_alone
    config = _config_json(path, file_readers)
    if "peft_type" in config:
        raise _adapter_refusal(f"{path}: a LoRA/PEFT adapter's config (peft_type {json_brief(config['peft_type'])}), "
                               "not a model's", config)
    _check_text_model(path, config)
    config = _with_class_rope(config)
    shape = _config_shape(path, config)
    name, aliases = _config_names(path, config)
    rope_type, native, factor = _config_rope(path, config)
    own = rope_type not in (None, "default", "yarn") or _trained_yarn(config, rope_type)
    vllm_length_key = _vllm_length_key(path, config)
    vllm_context = _vllm_context(path, config, vllm_length_key)
    vllm_refusal = _vllm_refusal(path, config, shape["num_layers"])
    if vllm_refusal is not None and vllm_rollout:
        raise TableError(f"{path}: {vllm_refusal}")
    return Model(name=name, aliases=aliases, **shape, native_context=native,
                 logit_softcapping=config.get("final_logit_softcapping",
                                              SOFTCAP_BY_MODEL_TYPE.get(str(config.get("model_type")))) is not None,
                 rope_scaling=str(rope_type) if own else None,
                 config_yarn_factor=float(factor) if rope_type == "yarn" and not own and factor is not None else None,
                 vllm_context=vllm_context if vllm_context != native else None,
                 vllm_length_key=vllm_length_key if vllm_length_key[0] != "max_position_embeddings" else None,
                 vllm_skips_rope_factor=_vllm_skips_rope_factor(config),
                 qwen_yarn=_is_qwen(config), model_type=_model_type(config),
                 unchecked_layout=_unchecked_layout(config),
                 ulysses_unreached=_ulysses_unreached(config),
                 uncounted_mtp_layers=_mtp_layers(path, config), config_defaulted=_defaulted_terms(config, shape),
                 untyped_rope_scaling=_untyped_rope_scaling(config),
                 router_logits_output=_config_flag(path, config, "output_router_logits") and shape["moe"] is not None,
                 vllm_sliding_window=_vllm_sliding_window(path, config, shape["num_layers"]),
                 vllm_refusal=vllm_refusal, rope_theta=(rope_theta := _own_rope_theta(path, config)),
                 vllm_rope_theta_lost=_vllm_rope_theta_lost(config, rope_theta),
                 vllm_partial_rotary_lost=_vllm_partial_rotary_lost(path, config, shape["head_dim"]),
                 trainer_partial_rotary_differs=_trainer_partial_rotary_differs(config, shape["head_dim"]))


def config_keys_differing(first: Path, second: Path) -> list[str]:
    """The keys whose values differ between the config.json files `first` and `second` (as `load_model_config` reads
    them, after `model_config_file`), dotted within a section both give as an object (``rope_scaling.factor``,
    ``text_config.rope_theta``), in the order the files give them; a key one file lacks counts as differing."""
    return list(_differing_keys(_config_json(first), _config_json(second), ""))


def _differing_keys(first: Mapping[str, Any], second: Mapping[str, Any], prefix: str) -> Iterator[str]:
    """`config_keys_differing` of two JSON objects, each key after `prefix`."""
    for key in dict.fromkeys([*first, *second]):
        mine, theirs = first.get(key, _ABSENT), second.get(key, _ABSENT)
        if isinstance(mine, dict) and isinstance(theirs, dict):
            yield from _differing_keys(mine, theirs, f"{prefix}{key}.")
        elif mine != theirs or type(mine) is not type(theirs):
            yield f"{prefix}{key}"


_ABSENT = object()
"""A key a config.json does not give (`_differing_keys`)."""


def _with_class_rope(config: dict[str, Any]) -> dict[str, Any]:
    """A config.json as its config class fills its RoPE in (`CLASS_ROPE_BY_MODEL_TYPE`, without its top-level
    ``rope_theta``, which that class's RoPE replaces) where it gives none; as it is otherwise."""
    rope = CLASS_ROPE_BY_MODEL_TYPE.get(str(config.get("model_type")))
    if rope is None or config.get("rope_parameters") is not None or config.get("rope_scaling"):
        return config
    return {**{key: value for key, value in config.items() if key != "rope_theta"}, "rope_parameters": dict(rope)}


def _model_type(config: dict[str, Any]) -> str | None:
    """A config.json's ``model_type`` (`Model.model_type`); None where it gives none (its text was checked,
    `_check_text_model`)."""
    model_type = config.get("model_type")
    return None if model_type is None else str(model_type)


def _config_flag(path: Path, config: dict[str, Any], key: str) -> bool:
    """A config.json's flag `key` (False where absent or null, as transformers' config classes default
    ``output_router_logits`` and ``use_sliding_window``); `TableError` where it is not true, false or null."""
    given = config.get(key)
    if given is not None and not isinstance(given, bool):
        raise TableError(f"{path}: {key}: expected true, false or null, got {json_brief(given)}")
    return bool(given)


def _kept_window(path: Path, config: dict[str, Any]) -> object:
    """A config.json's ``sliding_window`` as transformers' config class keeps it (`SLIDING_WINDOW_DEFAULTS` where it
    gives none; None where the class drops it, `USE_SLIDING_WINDOW_MODEL_TYPES`), not yet checked."""
    model_type = str(config.get("model_type"))
    if model_type in USE_SLIDING_WINDOW_MODEL_TYPES and not _config_flag(path, config, "use_sliding_window"):
        return None
    return config.get("sliding_window", SLIDING_WINDOW_DEFAULTS.get(model_type))


def _vllm_sliding_window(path: Path, config: dict[str, Any], layers: int) -> tuple[int, int] | None:
    """The sliding window a vLLM 0.19.1 engine caches a config.json's local layers' keys and values over, and how
    many of its `layers` are local (`Model.vllm_sliding_window`); None where it caches every layer's for the whole
    sequence. The window is the one transformers' config class keeps (`_kept_window`; 0 is none,
    ``vllm/config/model.py:599-605``; a Gemma-3's of bidirectional attention halved, plus one). Where the layers'
    types (`_layer_types`) are all one, vLLM caches every layer over the window (``engine/arg_utils.py:1560-1565``
    sets it for the whole model; ``model_executor/layers/attention/attention.py:211-216``); where they mix, only the
    classes of `PER_LAYER_WINDOW_MODEL_TYPES` give their ``sliding_attention`` layers the window
    (``llama.py:184-203``, ``gemma2.py:159-160``, ``gemma3.py:163-165``), gpt-oss's its even layers
    (`EVEN_LAYER_WINDOW_MODEL_TYPES`), the others none (a class that refuses to
    build such layers, `_vllm_refusal`, none either). `TableError` for a window or layer types that are not whole
    numbers or a list of them."""
    window = _kept_window(path, config)
    if window is None or (window == 0 and not isinstance(window, bool)):
        return None
    window = _config_number(path, {"sliding_window": window}, "sliding_window")
    if config.get("model_type") == "gemma3_text" and _config_flag(path, config, "use_bidirectional_attention"):
        window = window // 2 + 1  # transformers' class halves it (configuration_gemma3.py:105-106), vLLM takes that
    types = _layer_types(path, config, layers)
    if types is None or len(set(types)) == 1:
        return window, layers
    if config.get("model_type") in EVEN_LAYER_WINDOW_MODEL_TYPES:
        return window, (layers + 1) // 2
    if config.get("model_type") not in PER_LAYER_WINDOW_MODEL_TYPES:
        return None
    return window, types.count("sliding_attention")


def _vllm_refusal(path: Path, config: dict[str, Any], layers: int) -> str | None:
    """Why vLLM 0.19.1 refuses to build the model a config.json of `layers` describes (`Model.vllm_refusal`), in
    words: layers of mixed attention in a class built on its Qwen2 model (`_qwen2_layers_refusal`), a window it
    takes for the whole model beside another ``max_window_layers`` (`_whole_window_refusal`), or no ``rotary_dim``
    where its class reads one (`_rotary_dim_refusal`); None where it builds it."""
    return (_qwen2_layers_refusal(path, config, layers) or _whole_window_refusal(path, config, layers)
            or _rotary_dim_refusal(config))


def _rotary_dim_refusal(config: dict[str, Any]) -> str | None:
    """Why vLLM 0.19.1 fails to build a `VLLM_ROTARY_DIM_MODEL_TYPES` config without ``rotary_dim``: its class reads
    ``config.rotary_dim`` with no default (``minimax_m2.py:267``), and transformers 5.9.0's config class declares no
    such key (``configuration_minimax_m2.py``), so the attribute is missing; in words; None where the key is given."""
    if config.get("model_type") not in VLLM_ROTARY_DIM_MODEL_TYPES or "rotary_dim" in config:
        return None
    return (f"no rotary_dim, which vLLM 0.19.1's {config['model_type']} class reads with no default "
            "(minimax_m2.py:267: AttributeError as it builds the model), so Trinity's rollout cannot start; accepted: "
            "rotary_dim, the dimensions of each head RoPE rotates (64 of head_dim 128 in MiniMax-M2's published "
            "config.json)")


def _whole_window_refusal(path: Path, config: dict[str, Any], layers: int) -> str | None:
    """Why vLLM 0.19.1 refuses to build a `WHOLE_WINDOW_LAYERS_MODEL_TYPES` config of `layers`: a sliding window it
    takes for the whole model (`_vllm_sliding_window`: a window, 0 none, over layers of one type) beside a given
    ``max_window_layers`` other than `layers` (``seed_oss.py:281-293``), in words; None where it builds it."""
    if config.get("model_type") not in WHOLE_WINDOW_LAYERS_MODEL_TYPES or config.get("max_window_layers") is None:
        return None
    window = _vllm_sliding_window(path, config, layers)
    max_window_layers = _config_number(path, config, "max_window_layers", lowest=0)
    if window is None or window[1] != layers or max_window_layers == layers:
        return None
    return (f"sliding_window {window[0]} with max_window_layers {max_window_layers} gives a {config['model_type']} "
            f"model a sliding window in all {layers} layers, which vLLM 0.19.1 refuses to build unless "
            f"max_window_layers is num_hidden_layers (seed_oss.py:281-293), so Trinity's rollout cannot start; "
            f"accepted: max_window_layers {layers}, or no max_window_layers, or sliding_window 0 or null")


def _qwen2_layers_refusal(path: Path, config: dict[str, Any], layers: int) -> str | None:
    """Why vLLM 0.19.1 refuses to build a `QWEN2_MODEL_TYPES` config whose `layers` mix attention types
    (`_layer_types`; without a window, `_kept_window`, transformers' class makes every layer full attention where the
    config gives no ``layer_types``) while its ``max_window_layers`` is not their number (``qwen2.py:373-382``), in
    words; None where it builds it. `TableError` for layer types or a ``max_window_layers`` that cannot be read."""
    if config.get("model_type") not in QWEN2_MODEL_TYPES:
        return None
    given = config.get("layer_types") is not None
    if _kept_window(path, config) is None and not given:
        return None
    types = _layer_types(path, config, layers) or []
    max_window_layers = _config_number(path, config, "max_window_layers", 28, lowest=0)
    if len(set(types)) < 2 or max_window_layers == layers:
        return None
    counts = ", ".join(f"{types.count(kind)} {kind}" for kind in sorted(set(types)))
    source = "layer_types give" if given else f"use_sliding_window with max_window_layers {max_window_layers} gives"
    accepted = (f"layer_types of one type, or max_window_layers {layers}" if given else
                f"max_window_layers 0 or {layers} (vLLM then windows every layer), or use_sliding_window false")
    return (f"{source} a {config.get('model_type')} model layers of mixed attention ({counts} of {layers}), which "
            f"vLLM 0.19.1 refuses to build unless max_window_layers ({max_window_layers}) is num_hidden_layers "
            f"(qwen2.py:373-382), so Trinity's rollout cannot start; accepted: {accepted}")


def _layer_types(path: Path, config: dict[str, Any], layers: int) -> list[str] | None:
    """A config.json's attention type per layer as transformers 5.9.0's config class keeps it (``full_attention``,
    ``sliding_attention``): its ``layer_types``, else the class's own (Gemma-2's and gpt-oss's every other layer local,
    ``configuration_gemma2.py:95-98``, ``configuration_gpt_oss.py:75-78``; Gemma-3's all but every
    ``sliding_window_pattern``-th, 6 by default, ``configuration_gemma3.py:109-115``; CWM's all but every fourth from
    the first, ``configuration_cwm.py:98-104`` in 5.12.1; Qwen2's, Qwen3's and MiMo's from
    ``max_window_layers`` on, with a sliding window, ``configuration_qwen2.py:88-94``; Qwen2-MoE's every other one below
    it, ``configuration_qwen2_moe.py:106-111``); None where neither gives them. `TableError` for ``layer_types`` that
    are not one type per layer."""
    given = config.get("layer_types")
    if given is not None:
        if not isinstance(given, list) or len(given) != layers or not all(_is_name(each) for each in given):
            raise TableError(f"{path}: layer_types: expected a list of num_hidden_layers ({layers}) attention types "
                             f"such as \"sliding_attention\" or \"full_attention\", got {json_brief(given)}")
        return given
    model_type = config.get("model_type")
    if model_type in ("gemma2", "gpt_oss"):
        local = [index % 2 == 0 for index in range(layers)]
    elif model_type == "cwm":
        local = [index % 4 != 0 for index in range(layers)]
    elif model_type == "gemma3_text":
        pattern = _config_number(path, config, "sliding_window_pattern", 6)
        local = [(index + 1) % pattern != 0 for index in range(layers)]
    elif model_type in (*QWEN2_MODEL_TYPES, "qwen2_moe"):
        max_window_layers = _config_number(path, config, "max_window_layers", 28, lowest=0)
        local = ([index >= max_window_layers for index in range(layers)] if model_type != "qwen2_moe"
                 else [index % 2 == 0 and index < max_window_layers for index in range(layers)])
    else:
        return None
    return ["sliding_attention" if each else "full_attention" for each in local]


def _mtp_layers(path: Path, config: dict[str, Any]) -> int:
    """A `MTP_MODEL_TYPES` config's ``num_nextn_predict_layers`` (0 where absent or null, or of another model type):
    layers transformers does not load; `TableError` where it is not a whole number."""
    if config.get("model_type") not in MTP_MODEL_TYPES or config.get("num_nextn_predict_layers") in (None, 0):
        return 0
    return _config_number(path, config, "num_nextn_predict_layers")


def _unchecked_layout(config: dict[str, Any]) -> str | None:
    """A config.json's ``model_type`` in words where it is not one of `CHECKED_MODEL_TYPES`; None where it is."""
    model_type = config.get("model_type")
    if model_type in CHECKED_MODEL_TYPES:
        return None
    return "no model_type" if model_type is None else f"model_type {model_type}"


def _ulysses_unreached(config: dict[str, Any]) -> str | None:
    """Why verl's Ulysses patch does not reach the attention of the model a config.json describes
    (`ULYSSES_UNREACHED`): one whose ``auto_map`` names an ``AutoConfig`` (transformers then runs the checkpoint's
    own code, ``models/auto/configuration_auto.py:375-395`` in 5.9.0) and whose ``model_type`` transformers has no
    class of (`OWN_CODE_MODEL_TYPES`) or rft-solver does not know (not of `CHECKED_MODEL_TYPES`); None otherwise (a
    known transformers class, loaded unless ``trust_remote_code`` is on)."""
    auto_map, model_type = config.get("auto_map"), config.get("model_type")
    if not isinstance(auto_map, dict) or "AutoConfig" not in auto_map:
        return None
    if model_type in OWN_CODE_MODEL_TYPES:
        what = f"model_type {model_type}, which transformers has no class of,"
    elif model_type in CHECKED_MODEL_TYPES:
        return None
    else:
        what = f"{_unchecked_layout(config)}, not one rft-solver knows transformers to have a class of,"
    return f"{what} runs the checkpoint's own modeling code (its auto_map); {ULYSSES_UNREACHED}"


HUB_NAME = re.compile(r"[A-Za-z0-9][\w.-]*")
"""A part of a Hugging Face id (``Qwen``, ``Qwen3-235B-A22B``): letters, digits, ``_``, ``.`` and ``-``."""


def _check_no_hub_id(path: Path) -> None:
    """`TableError` where `path` is missing, as its folder is, and reads as a Hugging Face id, two names relative to
    the working directory (``Qwen/Qwen3-235B-A22B``): nothing is fetched, so the refusal says how to fetch the
    config.json."""
    try:
        if len(path.parts) != 2 or path.is_absolute() or path.parent.exists():
            return
    except OSError:  # Path.exists raises on EACCES before Python 3.14: reading config.json says so
        return
    hub_id = "/".join(path.parts)
    if all(HUB_NAME.fullmatch(part) for part in path.parts) and path.suffix != ".json":
        raise TableError(f"{path}: no such file or folder; a local config.json (or its folder) is read, not a "
                         f"Hugging Face id, and nothing is fetched: download it first (huggingface-cli download "
                         f"{hub_id} config.json --local-dir DIR) and give DIR")


def adapter_alone_refusal(path: Path) -> TableError | None:
    """The `TableError` (naming its base model) where `path`, a folder's ``config.json``, is missing and the folder
    holds a PEFT adapter's ``adapter_config.json`` instead (a LoRA checkpoint, whose shape is its base model's);
    None otherwise. --model-config raises it, and --from-config for a ``model.model_path`` of such a folder."""
    adapter = path.with_name(ADAPTER_CONFIG)
    try:
        if path.name != "config.json" or path.exists() or not adapter.is_file():
            return None
    except OSError:  # Path.exists raises on EACCES before Python 3.14: reading config.json says so
        return None
    try:
        read = _config_json(adapter)
    except TableError:  # the adapter's own file unreadable: the refusal names no base model
        read = {}
    return _adapter_refusal(f"{path}: missing, and {ADAPTER_CONFIG} beside it is a LoRA/PEFT adapter's, not a "
                            "model's", read)


def adapter_beside(path: Path) -> tuple[int, str | None] | None:
    """The rank (``r``) and ``target_modules`` of a PEFT adapter's ``adapter_config.json`` beside the config.json
    that `path` gives (`model_config_file`), the modules as --lora-targets takes them (names joined by commas; a
    regex or ``all-linear`` as given; None where it gives neither); None where there is no such adapter, or its file
    gives no whole rank above 0 or cannot be read (--model-config counts no adapter either way)."""
    try:
        adapter = model_config_file(path).with_name(ADAPTER_CONFIG)
        keys = _config_json(adapter) if adapter.is_file() else {}
    except (OSError, TableError):
        return None
    rank, targets = keys.get("r"), keys.get("target_modules")
    if isinstance(rank, bool) or not isinstance(rank, int) or rank < 1:
        return None
    if isinstance(targets, list) and targets and all(isinstance(name, str) and name for name in targets):
        return rank, ",".join(targets)
    return rank, targets if isinstance(targets, str) and targets else None


def _adapter_refusal(what: str, adapter: dict[str, Any]) -> TableError:
    """The refusal of a PEFT adapter's config, `what` it is in words (after its path), naming its base model where
    `adapter`, its keys, gives a printable ``base_model_name_or_path``."""
    base = adapter.get("base_model_name_or_path")
    named = f" ({base})" if _is_name(base) else ""
    return TableError(f"{what}: give its base model's config.json{named}, whose shape the adapter trains")


def _config_json(path: Path, file_readers: FileReaders = API_FILE_READERS) -> dict[str, Any]:
    """The JSON object of the config.json at `path`; `TableError` for a byte-order mark, an empty file, bad JSON (a
    YAML file of another kind named in `file_readers`' words: `yaml_looks_like`) or a non-object."""
    text = read_user_file(path)
    if text.startswith("\ufeff"):  # as transformers reads it: a JSON error
        raise TableError(f"{path}: starts with a byte-order mark, which JSON readers refuse: save it without one")
    if not text.strip():  # a cut-short download, say: JSON's own "Expecting value" would not say so
        raise TableError(f"{path}: an empty file: a config.json is a JSON object, as a model's Hugging Face "
                         "checkpoint gives it")
    try:
        config = json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as error:
        kind = yaml_looks_like(text, Model, file_readers)
        raise TableError(f"{path}: not JSON: {error.msg} (line {error.lineno}){kind}") from None
    except _RepeatedKey as repeated:
        raise TableError(f"{path}: key {repeated} appears twice (JSON readers keep the last)") from None
    except RecursionError:
        raise TableError(f"{path}: nested too deeply") from None
    except ValueError:  # an integer of 5000 digits
        raise TableError(f"{path}: {NUMBER_TOO_LONG}") from None
    if not isinstance(config, dict):
        raise TableError(f"{path}: a config.json is a JSON object")
    return config


def _check_text_model(path: Path, config: dict[str, Any]) -> None:
    """`TableError` unless `config` is a gated-MLP text model's: not multimodal, with a text ``model_type`` and a
    valid ``final_logit_softcapping``; a mixture of experts with routed experts (and Qwen2-MoE's shared expert)
    in every layer."""
    if config.get("model_type") is not None and not _is_name(config["model_type"]):
        raise TableError(f"{path}: model_type: expected text such as \"llama\", got {json_brief(config['model_type'])}")
    capping = config.get("final_logit_softcapping")
    if capping is not None and (isinstance(capping, bool) or not isinstance(capping, int | float)
                                or not 0 < capping < math.inf):  # Infinity, 1e400: transformers' logits turn NaN
        raise TableError(f"{path}: final_logit_softcapping: expected a finite number above 0 or null, got "
                         f"{json_brief(capping)}")
    if config.get("model_type") in UNGATED_MODEL_TYPES:
        raise TableError(f"{path}: model_type {config['model_type']}: its MLP has two matrices, not the three of a "
                         "gated MLP (gate, up, down) that rft-solver counts; it reads gated-MLP models (Llama, Qwen, "
                         "Mistral, Gemma, Phi-3 and the like)")
    if config.get("model_type") in HYBRID_MODEL_TYPES:
        raise TableError(f"{path}: model_type {config['model_type']}: a hybrid of attention with state-space (Mamba), "
                         "convolution or recurrent layers; rft-solver counts attention and a gated MLP in every layer")
    if config.get("model_type") in UNREAD_MODEL_TYPES:
        raise TableError(f"{path}: model_type {config['model_type']}: {UNREAD_MODEL_TYPES[config['model_type']]}")
    if "kv_lora_rank" in config and config.get("model_type") not in MLA_MODEL_TYPES:
        raise TableError(f"{path}: kv_lora_rank: multi-head latent attention (MiniCPM3's), whose projections are not "
                         "the query, key, value and output ones rft-solver counts; it reads DeepSeek-V2's and V3's "
                         f"(model_type {' or '.join(MLA_MODEL_TYPES)})")
    if config.get("quantization_config") is not None:
        raise TableError(f"{path}: quantization_config {json_brief(config['quantization_config'])}: {QUANTIZED}")
    if (config.get("model_type") in DEEPSEEK_LAYOUT_MODEL_TYPES and config.get("model_type") not in MTP_MODEL_TYPES
            and config.get("num_nextn_predict_layers") not in (None, 0)):
        raise TableError(f"{path}: num_nextn_predict_layers {json_brief(config['num_nextn_predict_layers'])}: "
                         f"{UNREAD_MTP}")
    towers = [key for key in MULTIMODAL_CONFIG_KEYS if key in config]
    if towers:
        raise TableError(f"{path}: a multimodal config ({', '.join(towers)}); only a text model's "
                         "config.json is read (the memory model has no term for a vision or audio tower or its tokens)")
    _check_moe_layout(path, config)


def _config_number(path: Path, within: dict[str, Any], key: str, default: int | None = None, lowest: int = 1) -> int:
    """`within[key]` (`default` where absent or null) as a whole number from `lowest` to its `CONFIG_LIMITS`;
    `TableError` otherwise."""
    value = within.get(key)
    value = default if value is None else value
    limit = CONFIG_LIMITS[key]
    if value is None:
        raise TableError(f"{path}: missing {key}: a model's config.json gives it (a whole number from {lowest} to "
                         f"{limit})")
    if not isinstance(value, int) or isinstance(value, bool) or not lowest <= value <= limit:
        raise TableError(f"{path}: {key}: expected a whole number from {lowest} to {limit}, got {json_brief(value)}")
    return value


def _config_shape(path: Path, config: dict[str, Any]) -> dict[str, Any]:
    """The `Model` fields of a config.json's shape (sizes, tied embeddings, parameter count); `TableError` where
    one is missing or wrong."""
    hidden = _config_number(path, config, "hidden_size")
    layers = _config_number(path, config, "num_hidden_layers")
    heads = _config_number(path, config, "num_attention_heads")
    kv_heads = _config_number(path, config, "num_key_value_heads", heads)
    if heads % kv_heads:
        raise TableError(f"{path}: num_key_value_heads: expected a divisor of num_attention_heads ({heads}), "
                         f"got {kv_heads}")
    mla = _config_mla(path, config, heads, kv_heads)
    if mla is not None:  # every head its own key and value: a query's and key's width per head
        head_dim = mla.qk_head_dim
        attention = mla.attention_parameters(hidden, heads)
    else:
        class_head_dim = HEAD_DIM_BY_MODEL_TYPE.get(str(config.get("model_type")), hidden // heads)
        if "head_dim" in config and config.get("model_type") in NULL_HEAD_DIM_QUOTIENT_MODEL_TYPES:
            class_head_dim = hidden // heads
        if config.get("head_dim") is None and not class_head_dim:
            raise TableError(f"{path}: head_dim: not given, and hidden_size {hidden} over {heads} attention heads "
                             "leaves none")
        head_dim = _config_number(path, config, "head_dim", class_head_dim)
        attention = hidden * head_dim * (2 * heads + 2 * kv_heads)
    moe = _config_moe(path, config, layers)
    if moe is not None and config.get("model_type") not in PEFT_CONVERTED_MODEL_TYPES:
        moe = moe.model_copy(update={"peft_converts_experts": False})
    if moe is None:
        intermediate = _config_number(path, config, "intermediate_size")
        mlps = layers * 3 * hidden * intermediate
    else:  # the width a token passes through, as the catalogue gives a MoE model's; every expert held, and a router
        intermediate = moe.ffn_width
        mlps = (moe.dense_layers * 3 * hidden * moe.dense_intermediate_size
                + (layers - moe.dense_layers) * moe.layer_parameters(hidden))
    vocab = _config_number(path, config, "vocab_size")
    tied = _tied_embeddings(path, config)
    if not isinstance(tied, bool):
        raise TableError(f"{path}: tie_word_embeddings: expected true or false, got {json_brief(tied)}")
    parameters = layers * (attention + 2 * hidden) + mlps + vocab * hidden * (1 if tied else 2) + hidden
    return {"head_dim": head_dim, "hidden_size": hidden, "num_layers": layers, "num_attention_heads": heads,
            "num_key_value_heads": kv_heads, "intermediate_size": intermediate, "vocab_size": vocab,
            "tied_embeddings": tied, "parameters_b": parameters / 1e9, "moe": moe, "mla": mla}


def _defaulted_terms(config: dict[str, Any], shape: dict[str, Any]) -> tuple[str, ...]:
    """The terms of a config.json's `shape` (`_config_shape`'s) it leaves to its class's default
    (`Model.config_defaulted`): ``num_key_value_heads`` and, but with latent attention (its ranks give the width),
    ``head_dim`` where absent or null, and ``tie_word_embeddings`` and ``final_logit_softcapping`` where absent (null
    is untied, and no capping)."""
    read_null = ("num_key_value_heads",) if shape["mla"] is not None else ("num_key_value_heads", "head_dim")
    return (*(key for key in read_null if config.get(key) is None),
            *(key for key in ("tie_word_embeddings", "final_logit_softcapping") if key not in config))


def _config_mla(path: Path, config: dict[str, Any], heads: int, kv_heads: int) -> MLA | None:
    """A config.json's multi-head latent attention (None without ``kv_lora_rank``); `TableError` where a rank or
    width is missing or wrong, or its KV heads are not its attention heads (transformers decompresses keys and values
    into every head, and verl checks SP against ``num_key_value_heads``)."""
    if config.get("kv_lora_rank") is None and config.get("model_type") not in MLA_MODEL_TYPES:
        return None
    if kv_heads != heads:
        raise TableError(f"{path}: num_key_value_heads {kv_heads}: multi-head latent attention decompresses keys "
                         f"and values into every one of num_attention_heads ({heads}); give {heads} or leave it out")
    widths = {key: _config_number(path, config, key) for key in MLA_KEYS}
    if "q_lora_rank" not in config:
        raise TableError(f"{path}: missing q_lora_rank: a {config['model_type']} config gives it, null for a full "
                         "query projection (its class's default, 1536, would apply)")
    query_rank = 0 if config.get("q_lora_rank") is None else _config_number(path, config, "q_lora_rank")
    return MLA(q_lora_rank=query_rank, **widths)


def _config_moe(path: Path, config: dict[str, Any], layers: int) -> MoE | None:
    """A config.json's routed experts (None for a dense model): how many, how many a token takes
    (``num_experts_per_tok``, ERNIE's ``moe_k``, Hunyuan's ``moe_topk``) and each one's width
    (``moe_intermediate_size``, else Mixtral's ``intermediate_size``), with its shared experts and, of its `layers`,
    the dense ones; `TableError` where one is missing or wrong."""
    key = _experts_key(config)
    if key is None:
        _check_no_expert_count(path, config)
        return None
    active_key = next((name for name in ("moe_k", "moe_topk") if config.get(name) is not None), "num_experts_per_tok")
    experts, active = _config_number(path, config, key), _uniform_number(path, config, active_key, layers)
    for other in MOE_CONFIG_KEYS:
        if config.get(other) not in (None, experts):
            raise TableError(f"{path}: {key} {experts} and {other} {json_brief(config[other])}: two counts of routed "
                             "experts; give one")
    if active > experts:
        raise TableError(f"{path}: {active_key}: expected at most {key} ({experts}), got {active}")
    model_type = config.get("model_type")
    if model_type in INTERMEDIATE_WIDTH_EXPERT_MODEL_TYPES:
        return _intermediate_width_moe(path, config, layers, experts, active)
    if model_type in EXPERT_WIDTH_MODEL_TYPES and config.get("moe_intermediate_size") is None:
        raise TableError(f"{path}: missing moe_intermediate_size: a {model_type} config gives each expert's width "
                         f"there (a whole number from 1 to {CONFIG_LIMITS['moe_intermediate_size']}); its "
                         "intermediate_size is not that width")
    width = _config_number(path, config,
                           "moe_intermediate_size" if config.get("moe_intermediate_size") is not None
                           else "intermediate_size")
    routed = MoE(experts=experts, active_experts=active, moe_intermediate_size=width)
    if model_type in DEEPSEEK_LAYOUT_MODEL_TYPES:
        return _deepseek_moe(path, config, layers, routed)
    if model_type == "ernie4_5_moe":
        return _ernie_moe(path, config, layers, routed)
    if model_type == DENSE_MLP_MODEL_TYPE:
        dense = _dense_layers(layers, _qwen3_moe_expert_layers(path, config, layers))
        return routed.model_copy(update={**dense, "dense_intermediate_size": _config_number(
            path, config, "intermediate_size") if dense["dense_layers"] else 0})
    shared_type, shared_key = SHARED_EXPERT_LAYOUT
    if model_type == shared_type and config.get(shared_key) is None:
        raise TableError(f"{path}: missing {shared_key}: a {shared_type} config gives its shared expert's width there "
                         f"(0 for none)")
    shared = 0 if config.get(shared_key) in (None, 0) else _config_number(path, config, shared_key)
    return routed.model_copy(update={"shared_expert_intermediate_size": shared})


def _uniform_number(path: Path, config: dict[str, Any], key: str, indexed_layers: int | None = None) -> int:
    """`_config_number` of `key`, which may also be a list of one value per layer (Hunyuan's ``moe_topk``), all the
    same; `TableError` where they differ (rft-solver counts one for every layer) or, where transformers' class takes
    a layer's value by its index among `indexed_layers`, where the list has fewer (the class would fail to build)."""
    value = config.get(key)
    if not isinstance(value, list):
        return _config_number(path, config, key)
    if not value:
        raise TableError(f"{path}: {key}: expected a whole number, or one per layer, got []")
    if indexed_layers is not None and len(value) < indexed_layers:
        raise TableError(f"{path}: {key}: {len(value)} values for {indexed_layers} layers: transformers' class takes "
                         "each layer's by its index, so give one per layer (or one whole number)")
    if any(each != value[0] for each in value):
        differing = next(each for each in value if each != value[0])
        raise TableError(f"{path}: {key}: differs between layers ({json_brief(value[0])} and {json_brief(differing)}); "
                         "rft-solver counts one value for every layer")
    return _config_number(path, {key: value[0]}, key)


def _intermediate_width_moe(path: Path, config: dict[str, Any], layers: int, experts: int, active: int) -> MoE:
    """The experts of a `INTERMEDIATE_WIDTH_EXPERT_MODEL_TYPES` config (Hunyuan-MoE's, Llama 4 text's): routed and one
    shared, ``intermediate_size`` wide, with Llama 4's dense layers; `TableError` for a key that would make
    transformers' class hold other widths or counts than the config says (its ``moe_intermediate_size``,
    ``num_shared_expert``), or for ``moe_layers`` that are not layers."""
    width = _config_number(path, config, "intermediate_size")
    for key, built, words in (("moe_intermediate_size", width, f"its experts {width} wide (intermediate_size)"),
                              ("num_shared_expert", 1, "one shared expert")):
        if config.get(key) is not None and _uniform_number(path, config, key) != built:
            raise TableError(f"{path}: {key} {json_brief(config[key])}: transformers' {config['model_type']} class "
                             f"builds {words} whatever this says, so its checkpoint would not load")
    moe = MoE(experts=experts, active_experts=active, moe_intermediate_size=width,
              shared_expert_intermediate_size=width, shared_expert_gate=False,
              computes_every_expert=config["model_type"] in EVERY_EXPERT_MODEL_TYPES)
    if config["model_type"] != "llama4_text":
        return moe
    dense = _dense_layers(layers, _llama4_moe_layers(path, config, layers))
    return moe.model_copy(update={**dense, "dense_intermediate_size": _config_number(
        path, config, "intermediate_size_mlp", LLAMA4_DENSE_WIDTH) if dense["dense_layers"] else 0})


def _dense_layers(layers: int, expert_layers: set[int]) -> dict[str, Any]:
    """`MoE.dense_layers` and `MoE.dense_layer_indices` of a model of `layers` whose expert layers are
    `expert_layers`: the others, their indices where they are not the first (None where they are)."""
    dense = tuple(layer for layer in range(layers) if layer not in expert_layers)
    return {"dense_layers": len(dense), "dense_layer_indices": None if dense == tuple(range(len(dense))) else dense}


def _qwen3_moe_expert_layers(path: Path, config: dict[str, Any], layers: int) -> set[int]:
    """A Qwen3-MoE config's expert layers, as ``Qwen3MoeDecoderLayer`` builds them: those not in ``mlp_only_layers``
    whose index plus one ``decoder_sparse_step`` divides; `TableError` where ``mlp_only_layers`` is no list of layer
    indices, ``decoder_sparse_step`` no whole number from 1, or they leave no layer holding the experts."""
    only = config.get("mlp_only_layers")
    only = [] if only is None else only  # as transformers takes it: a false or a 0 is refused, not read as none
    if not isinstance(only, list) or any(not isinstance(index, int) or isinstance(index, bool) for index in only):
        raise TableError(f"{path}: mlp_only_layers: expected a list of layer indices, got {json_brief(only)}")
    step = _config_number(path, config, "decoder_sparse_step", 1)
    expert_layers = {layer for layer in range(layers) if layer not in only and (layer + 1) % step == 0}
    if not expert_layers:
        raise TableError(f"{path}: mlp_only_layers {json_brief(only)} and decoder_sparse_step {step}: leave none of "
                         f"num_hidden_layers ({layers}) holding the experts")
    return expert_layers


def _llama4_moe_layers(path: Path, config: dict[str, Any], layers: int) -> set[int]:
    """A Llama 4 text config's expert layers: its ``moe_layers``, else every ``interleave_moe_layer_step``-th layer
    (the last of each step), as ``Llama4TextConfig`` derives them; `TableError` where they are not layers of its
    `layers`, or none."""
    given = config.get("moe_layers")
    if given is None:
        step = _config_number(path, config, "interleave_moe_layer_step", 1)
        if step > layers:
            raise TableError(f"{path}: interleave_moe_layer_step {step}: leaves none of num_hidden_layers ({layers}) "
                             "holding the experts")
        return set(range(step - 1, layers, step))
    if not isinstance(given, list) or not given or any(
            not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < layers for index in given):
        raise TableError(f"{path}: moe_layers: expected a list of layer indices from 0 to {layers - 1}, or null, got "
                         f"{json_brief(given)}")
    return set(given)


def _ernie_moe(path: Path, config: dict[str, Any], layers: int, routed: MoE) -> MoE:
    """`routed`, the experts of an ERNIE-4.5-MoE config, with its shared experts and dense layers as
    `ERNIE_MOE_DEFAULTS` tells (each key's default where absent or null); `TableError` where one is wrong, or no
    layer holds the experts."""
    keys = {key: default if config.get(key) is None else config[key] for key, default in ERNIE_MOE_DEFAULTS.items()}
    for key, value in keys.items():
        lowest = -1 if key == "moe_layer_end_index" else 1 if key == "moe_layer_interval" else 0
        if not isinstance(value, int) or isinstance(value, bool) or not lowest <= value <= CONFIG_LIMITS[key]:
            raise TableError(f"{path}: {key}: expected a whole number from {lowest} to {CONFIG_LIMITS[key]}, got "
                             f"{json_brief(value)}")
    last = layers - 1 if keys["moe_layer_end_index"] == -1 else keys["moe_layer_end_index"]
    expert_layers = {index for index in range(layers) if (index + 1) % keys["moe_layer_interval"] == 0
                     and keys["moe_layer_start_index"] <= index <= last}
    if not expert_layers:
        raise TableError(f"{path}: moe_layer_start_index {keys['moe_layer_start_index']}, moe_layer_end_index "
                         f"{keys['moe_layer_end_index']} and moe_layer_interval {keys['moe_layer_interval']} leave no "
                         f"layer of {layers} holding the experts")
    dense = _dense_layers(layers, expert_layers)
    return routed.model_copy(update={
        "shared_expert_intermediate_size": keys["moe_num_shared_experts"] * routed.moe_intermediate_size,
        "shared_expert_gate": False, **dense,
        "dense_intermediate_size": _config_number(path, config, "intermediate_size") if dense["dense_layers"] else 0})


def _deepseek_moe(path: Path, config: dict[str, Any], layers: int, routed: MoE) -> MoE:
    """`routed`, the experts of a `DEEPSEEK_LAYOUT_MODEL_TYPES` config, with its ``n_shared_experts`` (one ungated
    MLP of their widths together) and its first ``first_k_dense_replace`` of `layers` dense (``intermediate_size``
    wide); `TableError` where one is wrong, or missing (the classes' defaults differ: V3's and GLM-4-MoE's dense
    layers and shared expert are V2's none)."""
    for key in ("n_shared_experts", "first_k_dense_replace"):
        if key not in config:
            raise TableError(f"{path}: missing {key}: a {config['model_type']} config gives it (0 for none; the "
                             "classes' defaults differ)")
    shared = 0 if config.get("n_shared_experts") in (None, 0) else _config_number(path, config, "n_shared_experts")
    dense = config.get("first_k_dense_replace")
    dense = 0 if dense is None else dense
    if not isinstance(dense, int) or isinstance(dense, bool) or not 0 <= dense < layers:
        raise TableError(f"{path}: first_k_dense_replace: expected a whole number from 0 to {layers - 1} (fewer than "
                         f"num_hidden_layers), got {json_brief(dense)}")
    return routed.model_copy(update={
        "shared_expert_intermediate_size": shared * routed.moe_intermediate_size, "shared_expert_gate": False,
        "dense_layers": dense, "dense_intermediate_size": _config_number(path, config, "intermediate_size") if dense
        else 0})


def _check_no_expert_count(path: Path, config: dict[str, Any]) -> None:
    """`TableError` for a config that gives no count of routed experts (`MOE_CONFIG_KEYS`) but is a mixture of
    experts by its ``model_type`` (`MOE_MODEL_TYPES`) or by a key only such a config gives (`MOE_ONLY_KEYS`), but for
    a dense model type's (`DENSE_MODEL_TYPES`), whose class reads none."""
    if config.get("model_type") in DENSE_MODEL_TYPES:
        return
    counts = either(MOE_CONFIG_KEYS)
    given = [key for key in MOE_ONLY_KEYS if config.get(key) is not None]
    if config.get("model_type") in MOE_MODEL_TYPES:
        raise TableError(f"{path}: missing the count of routed experts ({counts}): model_type "
                         f"{config['model_type']} is a mixture of experts, which would be read as a dense model")
    if given:
        raise TableError(f"{path}: {given[0]} {json_brief(config[given[0]])} but no count of routed experts "
                         f"({counts}): give it, or remove the mixture of experts' keys for a dense model")


def _experts_key(config: dict[str, Any]) -> str | None:
    """The key by which a config.json gives its routed experts (`MOE_CONFIG_KEYS`); None for a dense model, one of
    `DENSE_MODEL_TYPES` whatever keys it carries."""
    if config.get("model_type") in DENSE_MODEL_TYPES:
        return None
    return next((key for key in MOE_CONFIG_KEYS if config.get(key) is not None), None)


def _check_moe_layout(path: Path, config: dict[str, Any]) -> None:
    """`TableError` for a mixture of experts with shared experts or dense layers beside its routed experts
    (`SHARED_EXPERT_KEYS`, `DENSE_LAYER_KEYS`), which the count, routed experts in every layer, would miss."""
    if _experts_key(config) is None:
        return
    reads = ("rft-solver reads a mixture of experts with routed experts in every layer (Qwen3-MoE's, Mixtral's), "
             "besides them only Qwen2-MoE's shared expert, DeepSeek's and GLM-4-MoE's shared experts and first "
             f"dense layers (model_type {', '.join(DEEPSEEK_LAYOUT_MODEL_TYPES)}), Qwen3-MoE's dense layers "
             f"(model_type {DENSE_MLP_MODEL_TYPE}: mlp_only_layers, decoder_sparse_step), and ERNIE-4.5's, Hunyuan's "
             "and Llama 4's layouts (ernie4_5_moe, hunyuan_v1_moe, llama4_text)")
    deepseek = config.get("model_type") in DEEPSEEK_LAYOUT_MODEL_TYPES
    for shared in SHARED_EXPERT_KEYS:
        if config.get(shared) not in (None, 0) and READ_SHARED_EXPERT_KEYS.get(str(config.get("model_type"))) != shared:
            raise TableError(f"{path}: {shared} {json_brief(config[shared])}: shared experts beside the routed ones, "
                             f"which would go uncounted; {reads}")
    for dense, none_dense in DENSE_LAYER_KEYS.items():
        if (config.get(dense) not in (None, none_dense) and not (deepseek and dense == "first_k_dense_replace")
                and not (config.get("model_type") == DENSE_MLP_MODEL_TYPE
                         and dense in ("mlp_only_layers", "decoder_sparse_step"))):
            raise TableError(f"{path}: {dense} {json_brief(config[dense])}: some layers dense, the others mixtures of "
                             f"experts; {reads}")


def _config_names(path: Path, config: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
    """A config.json's model name (its ``_name_or_path``'s last part, else its folder's or file's) and aliases
    (its folder's name, where that differs)."""
    # The folder as it is named where the user points (a link's own name; "." and ".." taken away).
    # A snapshot in Hugging Face's cache is its repository's folder, not its commit's (`model_name_from_path`).
    folder_or_file = (model_name_from_path(os.path.dirname(os.path.abspath(path))) if path.name == "config.json"
                      else path.stem)

    def printable(text: str) -> str:
        return " ".join("".join(c if c.isprintable() else " " for c in text).split())

    name = printable(model_name_from_path(str(config.get("_name_or_path") or folder_or_file))) or "custom"
    # Also known by its folder (a checkpoint's _name_or_path may be a snapshot's hash, its folder Qwen3-8B).
    aliases = (printable(folder_or_file),) if printable(folder_or_file) not in ("", name) else ()
    return name, aliases


def _config_rope(path: Path, config: dict[str, Any]) -> tuple[str | None, int, float | None]:
    """A config.json's RoPE scaling type (None without one), native context (a YaRN model's original one) and
    scaling factor (None without one); `TableError` where they are malformed (or its scaling factor is not a number
    of at least 1, as transformers checks it)."""
    key = _rope_key(config)
    scaling = config.get(key)
    if _per_layer_type(scaling):
        for layer_type, each in scaling.items():
            if each is not None and not isinstance(each, dict):
                raise TableError(f"{path}: {key}.{layer_type}: expected an object such as {{\"rope_type\": "
                                 f"\"yarn\", ...}} or null, got {json_brief(each)}")
            if each is not None and layer_type != "full_attention":  # the full-attention layers' is checked below
                _check_rope_scaling(path, key, each, config)
        # One per layer type (transformers 5's Gemma-3): the full-attention layers' reaches the whole context.
        scaling = scaling["full_attention"]
    if scaling is not None and not isinstance(scaling, dict):
        raise TableError(f"{path}: {key}: expected an object such as {{\"rope_type\": \"yarn\", ...}} or null, "
                         f"got {json_brief(scaling)}")
    if scaling is not None:
        _check_rope_scaling(path, key, scaling, config)
    rope_type = _rope_type(scaling, config.get("model_type")) if scaling is not None else None
    factor = _rope_factor(path, key, scaling) if scaling is not None else None
    native = _config_number(path, config, "max_position_embeddings")
    if (rope_type == "yarn" and isinstance(scaling, dict) and not _trained_yarn(config, rope_type)
            and scaling.get("original_max_position_embeddings") is not None):
        native = _config_number(path, scaling, "original_max_position_embeddings")  # YaRN is re-derived from here
    return rope_type, native, factor


def _check_rope_scaling(path: Path, key: str, scaling: dict[str, Any], config: dict[str, Any]) -> None:
    """`TableError` for a RoPE scaling (one of a config.json's `key`) that transformers refuses to build: a
    ``rope_type`` it has no rotary embedding of, or without a key that type needs (`ROPE_TYPE_KEYS`); a Phi-3's
    that its config class refuses (`_phi3_rope_problem`)."""
    given = _rope_type(scaling)
    if given is not None and not _is_name(given):
        raise TableError(f"{path}: {key}: rope_type: expected text such as \"yarn\" or \"llama3\", got "
                         f"{json_brief(given)}")
    model_type = str(config.get("model_type"))
    read = (PHI3_ROPE_TYPES.get(given or "default", given) if model_type == "phi3"
            else LEGACY_ROPE_TYPES.get((model_type, given), given or "default"))
    problem = _phi3_rope_problem(key, scaling, config) if model_type == "phi3" else None
    if problem is None and (unbuilt := rope_scaling_problem(read, scaling)) is not None:
        problem = f"{key}: {unbuilt}"
    if problem is not None:
        raise TableError(f"{path}: {problem}")


PHI3_ROPE_TYPES = {"default": "default", "longrope": "longrope", "su": "longrope", "yarn": "longrope"}
"""The RoPE scaling types transformers 5.9.0's Phi-3 config class takes, and the type it reads each as: ``su`` and
``yarn`` as ``longrope`` (``configuration_phi3.py:101-104``; `LEGACY_ROPE_TYPES` names only ``su``, which a Trinity
config's ``model.rope_scaling`` may give a Phi-3 as its own type); another it refuses (``:122-123``)."""


def _phi3_rope_problem(key: str, scaling: dict[str, Any], config: dict[str, Any]) -> str | None:
    """What transformers 5.9.0's Phi-3 config class refuses in its config.json's RoPE `scaling` (its `key`), in words
    after the key it lies in: a type other than `PHI3_ROPE_TYPES`', or a ``short_factor`` or ``long_factor`` that is
    not a list of numbers, one per pair of its heads' rotary dimensions (``hidden_size // num_attention_heads`` times
    ``partial_rotary_factor``, the scaling's own, else the config's at its top level: half of them,
    ``configuration_phi3.py:107-149``); None where it takes it."""
    given = _rope_type(scaling) or "default"
    if given not in PHI3_ROPE_TYPES:
        return (f"{key}: rope_type {json_brief(given)}: transformers' Phi-3 config class takes none but "
                f"{either(list(PHI3_ROPE_TYPES))} (su and yarn read as longrope)")
    held_by = scaling if "partial_rotary_factor" in scaling else config
    partial = held_by.get("partial_rotary_factor", 1.0)
    if not _is_number(partial):
        where = f"{key}: " if held_by is scaling else ""
        return f"{where}partial_rotary_factor: expected a number, got {json_brief(partial)}"
    pairs = int(config["hidden_size"] // config["num_attention_heads"] * partial) // 2  # read as the shape already
    for name in ("short_factor", "long_factor"):
        factors = scaling.get(name)
        if factors is not None and (not isinstance(factors, list) or len(factors) != pairs
                                    or not all(_is_number(each) for each in factors)):
            return (f"{key}: {name}: transformers' Phi-3 config class takes a list of {pairs} numbers (one per pair "
                    f"of rotary dimensions), got {json_brief(factors)}")
    return None


def rope_scaling_problem(rope_type: object, keys: Collection[str]) -> str | None:
    """What transformers 5.9.0 refuses to build in a RoPE scaling of `rope_type` (as its config class names it) that
    gives `keys`, in words: a type it has no rotary embedding of, or a key that type needs missing (`ROPE_TYPE_KEYS`);
    None where it builds it. The one rule for a config.json's scaling and a Trinity config's ``model.rope_scaling``."""
    needs = {kind: tuple((key,) for key in keys_needed) for kind, keys_needed in ROPE_TYPE_KEYS.items()}
    return _unbuilt_rope("transformers", needs, rope_type, keys)


def vllm_rope_problem(rope_type: object, keys: Collection[str]) -> str | None:
    """What vLLM 0.19.1 fails to build in a RoPE scaling of `rope_type` that gives `keys`, handed to it as it is (as
    Trinity 0.6 hands it the rollout's, `VLLM_ROPE_TYPE_KEYS`), in words; None where it builds it."""
    return _unbuilt_rope("vLLM 0.19.1", VLLM_ROPE_TYPE_KEYS, rope_type, keys)


def _unbuilt_rope(builder: str, needs: Mapping[str, tuple[tuple[str, ...], ...]], rope_type: object,
                  keys: Collection[str]) -> str | None:
    """What `builder` fails to build in a RoPE scaling of `rope_type` that gives `keys`, in words: a type not in
    `needs`, or a key its type needs (one of each group of `needs`) missing; None where it builds it."""
    if not isinstance(rope_type, str) or rope_type not in needs:
        return (f"rope_type {json_brief(rope_type)}: {builder} builds no such RoPE scaling; it builds "
                f"{either(list(needs))}")
    missing = [" or ".join(group) for group in needs[rope_type] if not set(group) & set(keys)]
    return f"missing {missing[0]}: {builder} refuses rope_type {rope_type} without it" if missing else None


DEFAULT_ROPE_KEYS = ("rope_theta", "partial_rotary_factor")
"""The keys besides its type that transformers 5.9.0's default RoPE takes (``_validate_default_rope_parameters``,
``modeling_rope_utils.py:804-807``, and ``_check_received_keys``' ``partial_rotary_factor``, ``:1012-1014``)."""


def _untyped_rope_scaling(config: dict[str, Any]) -> str | None:
    """Where a config.json's RoPE scaling (the full-attention layers' where it gives one per layer type) names no
    type (neither ``rope_type`` nor ``type``) but gives keys besides `DEFAULT_ROPE_KEYS` (``{"factor": 4.0}``): the
    scaling, its key and JSON (`Model.untyped_rope_scaling`); None otherwise. transformers 5.9.0 builds it as no
    scaling (``standardize_rope_params`` makes its type ``default``, ``modeling_rope_utils.py:745``, whose check warns
    of the keys it does not take, ``:1024-1026``, and whose RoPE reads no factor); 4.57.1 refuses it
    (``rope_config_validation`` checks it as ``default``, which requires a ``rope_type``: a KeyError,
    ``modeling_rope_utils.py:560-565``, ``:548-550``)."""
    key = _rope_key(config)
    scaling = config.get(key)
    if _per_layer_type(scaling):
        key, scaling = f"{key}.full_attention", scaling["full_attention"]
    if not isinstance(scaling, dict) or _rope_type(scaling) is not None or set(scaling) <= set(DEFAULT_ROPE_KEYS):
        return None
    return f"{key} {cut(json.dumps(scaling))}"


def _rope_key(config: dict[str, Any]) -> str:
    """The key a config.json gives its RoPE scaling under: transformers 5 writes it as ``rope_parameters``
    (``rope_theta`` beside ``rope_type``), the versions before as ``rope_scaling``, which is read first."""
    return "rope_parameters" if config.get("rope_scaling") is None and "rope_parameters" in config else "rope_scaling"


def _per_layer_type(scaling: object) -> TypeGuard[dict[str, Any]]:
    """Whether a config.json's RoPE scaling gives one per layer type (transformers 5's Gemma-3: ``full_attention``
    and ``sliding_attention``, no ``rope_type`` beside them)."""
    return isinstance(scaling, dict) and not {"rope_type", "type"} & set(scaling) and isinstance(
        scaling.get("full_attention"), dict)


def _rope_type(scaling: dict[str, Any], model_type: object = None) -> Any:
    """A RoPE scaling's type: its ``rope_type``, else its legacy ``type``; a Phi-3's (`model_type`) ``yarn`` read as
    ``longrope``, as its config class reads it (`PHI3_ROPE_TYPES`; its ``su`` is kept, `LEGACY_ROPE_TYPES`)."""
    given = scaling.get("rope_type") or scaling.get("type")
    return "longrope" if model_type == "phi3" and given == "yarn" else given


def _rope_factor(path: Path, key: str, scaling: dict[str, Any]) -> float | None:
    """A RoPE scaling's ``factor`` (None without one); `TableError` where it is not a number of at least 1, as
    transformers checks it."""
    factor = scaling.get("factor")
    if factor is not None and (isinstance(factor, bool) or not isinstance(factor, (int, float)) or not factor >= 1):
        raise TableError(f"{path}: {key}: factor: expected a number of at least 1, got {json_brief(factor)} "
                         "(transformers refuses it too)")
    return factor


def _vllm_skips_rope_factor(config: dict[str, Any]) -> bool:
    """Whether vLLM applies no RoPE scaling's factor to the length it derives for a config.json: a Gemma 3
    ``model_type`` (``gemma3``, ``gemma3_text``), whose ``max_position_embeddings`` counts its own factor already
    (``vllm/config/model.py:2104-2106`` in vLLM 0.19.1, which looks for ``gemma3`` in the type)."""
    return "gemma3" in str(config.get("model_type") or "")


def _own_rope_theta(path: Path, config: dict[str, Any]) -> float | None:
    """A config.json's RoPE base (`Model.rope_theta`): its ``rope_theta`` (``rotary_emb_base`` as vLLM reads an older
    name, ``transformers_utils/config.py:383``), else its ``rope_parameters``' own, else transformers' default, 10000
    (``modeling_rope_utils.py:703``); None, not judged, where its RoPE parameters are per layer type; `TableError`
    where it is no positive number."""
    key = _rope_key(config)
    given = config.get(key)
    parameters: dict[str, Any] = given if isinstance(given, dict) else {}
    if _per_layer_type(parameters):
        return None
    name = next((name for name in ("rope_theta", "rotary_emb_base") if config.get(name) is not None), None)
    own = config[name] if name is not None else parameters.get("rope_theta", VLLM_FALLBACK_ROPE_THETA)
    if not isinstance(own, (int, float)) or isinstance(own, bool) or not math.isfinite(own) or own <= 0:
        raise TableError(f"{path}: {name or key + '.rope_theta'}: expected a positive number such as 1000000, got "
                         f"{json_brief(own)}")
    return float(own)


def _vllm_rope_theta_lost(config: dict[str, Any], own: float | None) -> tuple[float, float] | None:
    """A config.json's RoPE base (`own`: `_own_rope_theta`) and the one vLLM 0.19.1 rotates at where Trinity hands it
    a RoPE scaling without ``rope_theta`` (which replaces the config's ``rope_parameters``, ``rope_theta`` with them):
    its class's default (`VLLM_DEFAULT_ROPE_THETA`, else `VLLM_FALLBACK_ROPE_THETA`), where the two differ; None where
    they agree, and, not judged, where `own` is None (`Model.vllm_rope_theta_lost`)."""
    taken = VLLM_DEFAULT_ROPE_THETA.get(str(config.get("model_type")), VLLM_FALLBACK_ROPE_THETA)
    return (own, taken) if own is not None and own != taken else None


def _vllm_partial_rotary_lost(path: Path, config: dict[str, Any], head_dim: int) -> tuple[float, float] | None:
    """A config.json's share of each head's dimensions RoPE rotates and the one vLLM 0.19.1 rotates where Trinity hands
    it a RoPE scaling without ``partial_rotary_factor`` (which replaces the config's ``rope_parameters``, the share
    transformers put there with them, as `_vllm_rope_theta_lost` says of the base): its class's default
    (`VLLM_DEFAULT_PARTIAL_ROTARY`; ``rotary_dim`` over `head_dim` for `VLLM_ROTARY_DIM_MODEL_TYPES`; else
    `VLLM_FALLBACK_PARTIAL_ROTARY`), where the two differ (Phi-4-mini's 0.75 and 1.0); None where they agree, and, not
    judged, where the config's RoPE parameters are per layer type or a `VLLM_ROTARY_DIM_MODEL_TYPES` config gives no
    ``rotary_dim`` (vLLM's class reads it without a default). Its share is
    its RoPE parameters' own, else its first of `PARTIAL_ROTARY_KEYS` (which vLLM's ``patch_rope_parameters`` sets on
    the config, and transformers' ``standardize_rope_params`` adds to the RoPE parameters where they lack one,
    ``modeling_rope_utils.py:788-789`` in 5.17.0), else its class's default; `TableError` where it is not a number
    above 0 and at most 1, which vLLM refuses (``rotary_embedding/__init__.py:64-65``)."""
    key = _rope_key(config)
    given = config.get(key)
    parameters: dict[str, Any] = given if isinstance(given, dict) else {}
    by_rotary_dim = config.get("model_type") in VLLM_ROTARY_DIM_MODEL_TYPES
    rotary_dim: Any = config.get("rotary_dim")
    if _per_layer_type(parameters) or (by_rotary_dim and rotary_dim is None):
        return None
    if by_rotary_dim and (not _is_number(rotary_dim) or not 0 < rotary_dim <= head_dim):
        raise TableError(f"{path}: rotary_dim: expected a number above 0 and at most head_dim ({head_dim}) such as "
                         f"{head_dim // 2}, got {json_brief(rotary_dim)} (vLLM refuses it too)")
    taken = (rotary_dim / head_dim if by_rotary_dim
             else VLLM_DEFAULT_PARTIAL_ROTARY.get(str(config.get("model_type")), VLLM_FALLBACK_PARTIAL_ROTARY))
    names = [(f"{key}.partial_rotary_factor", parameters.get("partial_rotary_factor")),
             *((name, config.get(name)) for name in PARTIAL_ROTARY_KEYS)]
    name, own = next(((name, value) for name, value in names if value is not None), (None, taken))
    if not _is_number(own) or not 0 < own <= 1:
        raise TableError(f"{path}: {name}: expected a number above 0 and at most 1 such as 0.5, got "
                         f"{json_brief(own)} (vLLM refuses it too)")
    return (float(own), taken) if own != taken else None


def _trainer_partial_rotary_differs(config: dict[str, Any], head_dim: int) -> tuple[float, float] | None:
    """The share of each head's dimensions transformers 5.9.0's trainer rotates and the one vLLM 0.19.1's rollout
    rotates (`Model.trainer_partial_rotary_differs`) for a `VLLM_ROTARY_DIM_MODEL_TYPES` config that gives a
    ``rotary_dim`` (checked by `_vllm_partial_rotary_lost`) and no ``partial_rotary_factor`` (its own, or its RoPE
    parameters'): transformers' class reads the share alone and rotates whole heads without it
    (``modeling_minimax_m2.py:187-189``), vLLM's puts ``rotary_dim`` over `head_dim` in its place
    (``minimax_m2.py:200-204``); None where they agree or the share is given."""
    given = config.get(_rope_key(config))
    parameters: dict[str, Any] = given if isinstance(given, dict) else {}
    rotary_dim: Any = config.get("rotary_dim")
    if (config.get("model_type") not in VLLM_ROTARY_DIM_MODEL_TYPES or not _is_number(rotary_dim)
            or config.get("partial_rotary_factor") is not None or parameters.get("partial_rotary_factor") is not None):
        return None
    whole, rotated = 1.0, rotary_dim / head_dim
    return (whole, rotated) if rotated != whole else None


def _vllm_length_key(path: Path, config: dict[str, Any]) -> tuple[str, int]:
    """The key of `VLLM_LENGTH_KEYS` vLLM 0.19.1 derives a config.json's length from, and its value, before any RoPE
    scaling (``_get_and_verify_max_len``, ``vllm/config/model.py:2056-2058``, from ``derive_max_model_len_and_key``,
    ``transformers_utils/model_arch_config_convertor.py:251-284``): the smallest of those it gives (the first of them
    on a tie; null ones skipped), a ``model_max_length`` in its place (`NO_LIMIT_LENGTH` too, transformers' "no
    limit"); `TableError` for one that is not a whole number within `CONFIG_LIMITS`."""
    unlimited = _no_limit(config.get("model_max_length"))
    given = {key: _config_number(path, config, key) for key in VLLM_LENGTH_KEYS
             if config.get(key) is not None and not (unlimited and key == "model_max_length")}
    if unlimited:  # vLLM derives transformers' "no limit" itself: it refuses no length
        return "model_max_length", NO_LIMIT_LENGTH
    if "model_max_length" in given:  # Command-R's, taken as it is, above the others or below them
        return "model_max_length", given["model_max_length"]
    return min(given.items(), key=lambda item: item[1])


def _no_limit(model_max_length: object) -> bool:
    """Whether a config.json's ``model_max_length`` is transformers' "no limit" (`NO_LIMIT_LENGTH`, written as a whole
    number or as ``1e30``)."""
    return not isinstance(model_max_length, bool) and model_max_length == NO_LIMIT_LENGTH


def _vllm_context(path: Path, config: dict[str, Any], length_key: tuple[str, int]) -> float:
    """The longest ``max_model_len`` vLLM 0.19.1 takes from a config.json (``_get_and_verify_max_len``,
    ``vllm/config/model.py:2056-2058``, ``:2098-2130`` and ``:2155-2160``; `Model.vllm_context`): the length of
    `length_key` (`_vllm_length_key`), a YaRN's ``original_max_position_embeddings`` in its place (its own, else
    the config's, else ``max_position_embeddings``), times the last factor its RoPE scalings give (each layer type's
    in turn; null is 1.0), those of `VLLM_UNSCALED_ROPE_TYPES` left out; no factor for `_vllm_skips_rope_factor`;
    a ``model_max_length`` above that product where the config gives one, which vLLM takes a length up to besides."""
    length: float = length_key[1]
    allowed = length_key[1] if length_key[0] == "model_max_length" else 0
    key = _rope_key(config)
    scaling = config.get(key)
    if not isinstance(scaling, dict) or _vllm_skips_rope_factor(config):
        return length
    factor: float | None = 1.0
    for each in scaling.values() if _per_layer_type(scaling) else (scaling,):
        if not isinstance(each, dict) or _rope_type(each, config.get("model_type")) in VLLM_UNSCALED_ROPE_TYPES:
            continue
        if "factor" in each:
            factor = _rope_factor(path, key, each)
        if _rope_type(each, config.get("model_type")) == "yarn":
            original = each.get("original_max_position_embeddings", config.get("original_max_position_embeddings"))
            length = _config_number(path, {"original_max_position_embeddings": original},
                                    "original_max_position_embeddings", config["max_position_embeddings"])
    derived = length * (factor if factor is not None else 1.0)  # vLLM takes a null factor as 1.0
    if not math.isfinite(derived):
        raise TableError(f"{path}: {key}: factor: expected a number of at least 1 whose product with {int(length)} "
                         f"positions is finite, got {json_brief(factor)}")
    return max(derived, allowed)


def _trained_yarn(config: dict[str, Any], rope_type: object) -> bool:
    """Whether a config.json's RoPE scaling `rope_type` is YaRN that is the model's own, which it was trained with
    and whose context is its ``max_position_embeddings``: a `TRAINED_YARN_MODEL_TYPES` config's (DeepSeek-V2's
    factor of 40 over 4096 positions, its attention scaled by the factor's ``mscale_all_dim``; gpt-oss's 32 over
    4096), which a factor rft-solver writes must not replace."""
    return rope_type == "yarn" and config.get("model_type") in TRAINED_YARN_MODEL_TYPES


def _is_number(value: object) -> bool:
    """Whether a config.json's value is a number (an integer or a float, not true or false)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_name(value: object) -> bool:
    """Whether a config.json's value names a kind (a ``model_type``, a ``rope_type``): text, not empty, printable (it
    is shown, in cautions)."""
    return isinstance(value, str) and value.isprintable() and value != ""


def _is_qwen(config: dict[str, Any]) -> bool:
    """Whether a config.json is a Qwen model's: its ``model_type`` (`QWEN_MODEL_TYPES`), else its
    ``architectures`` (``Qwen2ForCausalLM``, ...)."""
    if config.get("model_type") is not None:  # a null model_type is none, as `_unchecked_layout` reads it
        return config["model_type"] in QWEN_MODEL_TYPES
    architectures = config.get("architectures")
    return isinstance(architectures, list) and any(str(name).startswith("Qwen") for name in architectures)


def _tied_embeddings(path: Path, config: dict[str, Any]) -> object:
    """A config.json's ``tie_word_embeddings`` as transformers reads it: null is untied; absent, the default of
    its ``model_type`` (`TIED_BY_MODEL_TYPE`), and `TableError` where that is not known here."""
    if "tie_word_embeddings" in config:
        tied = config["tie_word_embeddings"]
        return False if tied is None else tied
    model_type = config.get("model_type")
    if isinstance(model_type, str) and model_type in TIED_BY_MODEL_TYPE:
        return TIED_BY_MODEL_TYPE[model_type]
    which = f"model_type {json_brief(model_type)}" if model_type is not None else "no model_type"
    raise TableError(f"{path}: tie_word_embeddings is not given, and with {which} its default is not known here: add "
                     "\"tie_word_embeddings\": true or false (transformers' default is true unless the model's class "
                     "says otherwise; Llama's and Qwen's say false, Gemma's true)")
