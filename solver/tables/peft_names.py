"""The module names of each model type's decoder layer in transformers 5.12.1, as PEFT 0.21.2 matches a LoRA config's
``target_modules`` against them (`PEFT_NAMES_BY_MODEL_TYPE`), and what it adapts of them; those that differ in
transformers 4.57.6, Trinity 0.5.1's (`SEPARATE_NAMES_BY_MODEL_TYPE`, `separate_module_names`); an unknown model
type's are Qwen3's or Qwen3-MoE's, assumed (`peft_module_names`). Read by ``solver.tables.peft_match`` (matching),
``solver.memory`` (the adapter's parameters) and the checks alike. Every type's model has ``model.embed_tokens``,
``model.layers``, ``model.norm``, ``model.rotary_emb`` and ``lm_head`` outside its layers (its ``...Model`` and
``...ForCausalLM``)."""

from __future__ import annotations

from typing import NamedTuple


class PeftModuleNames(NamedTuple):
    """A model type's decoder-layer module names (after ``model.layers.N.``) in transformers 5.12.1, or in 4.57.6
    (`SEPARATE_NAMES_BY_MODEL_TYPE`)."""

    model_type: str
    """The ``model_type`` these are of (``qwen3`` and ``qwen3_moe`` for an unknown type's, `assumed`)."""
    adapted: tuple[str, ...]
    """The modules PEFT's ``all-linear`` adapts (``_maybe_include_all_linear_layers``, ``tuners/tuners_utils.py:2430``
    to ``:2490``): every ``nn.Linear`` (an expert layer's and a dense layer's, where the type has both); on a mixture
    of experts whose LoRA config PEFT converts (`fused` not empty) the router and the routed experts by the v4 names
    PEFT probes them with (``_MOE_TARGET_MODULE_MAPPING``, ``utils/transformers_weight_conversion.py:332`` to
    ``:345``: Mixtral's ``w1``, ``w3``, ``w2``; the others' ``gate_proj``, ``up_proj``, ``down_proj``), and no
    ``nn.Linear`` whose last name is one of those or ``gate`` (`CONVERTED_MLPS`): PEFT turns every such target name
    into the routed experts' or the router's parameter (``:444`` to ``:457``), so it adapts no such module."""
    others: tuple[str, ...]
    """The layer's other module names, which PEFT cannot adapt (``""`` the layer itself)."""
    router: str | None = None
    """The router's name where PEFT adapts it (an ``nn.Linear``, or one PEFT converts to ``gate.weight``); None for a
    dense model, or a router that is neither (Qwen2-MoE's ``Qwen2MoeTopKRouter``)."""
    fused: tuple[str, ...] = ()
    """The routed experts' two projections PEFT fuses into ``gate_up_proj`` (``_MOE_FUSED_TARGETS``, ``:348`` to
    ``:352``): a regex that names one alone fails ("Cannot convert PEFT target(s) ... because they are fused",
    ``:463`` to ``:470``); none where PEFT does not convert the type's config (its experts are no ``nn.Linear``,
    so nothing adapts them)."""
    separate_experts: bool = False
    """Whether transformers 4.57.1 holds the routed experts as ``nn.Linear``, an ``nn.ModuleList`` of gated MLPs
    (``modeling_qwen3_moe.py:197`` to ``:225``, ``modeling_mixtral.py:57`` to ``:97``), which ``all-linear`` adapts
    each, three per expert, and FSDP2 shards each over every GPU (``solver.memory.held_experts``); False for a dense
    type and for Llama 4's and GraniteMoE's experts, 3-D parameters there too (``Llama4TextExperts``,
    ``GraniteMoeParallelExperts``), which nothing adapts and FSDP2 shards as transformers 5's fused tensors."""
    assumed: bool = False
    """Whether these are assumed: Qwen3's or Qwen3-MoE's, for a model type this table does not hold."""
    expert_count: int = 0
    """Under transformers 4 (`SEPARATE_NAMES_BY_MODEL_TYPE`), the routed experts of each expert layer, whose names
    (``experts.E.``, `EXPERT_INDEX`) a regex is matched against for each ``E`` below it: the model's own count
    (``Model.peft_names_of``), `PEFT_EXPERTS` for a type's names alone; 0 where no name holds an expert index."""


class LoraTargets(NamedTuple):
    """A LoRA adapter's ``target_modules`` regex other than ``all-linear`` and its ``exclude_modules`` regex (None:
    unset), as a Trinity config gives them, whose matched modules its adapter is counted on
    (``solver.memory.adapted_shapes``)."""

    pattern: str
    excluded: str | None = None


ATTENTION = ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj")
"""The attention's linear layers of most types (``...Attention``: ``q_proj``, ``k_proj``, ``v_proj``, ``o_proj``)."""
MLP = ("mlp.gate_proj", "mlp.up_proj", "mlp.down_proj")
"""A gated MLP's linear layers under ``mlp`` (``...MLP``)."""
LAYER = ("", "self_attn", "mlp", "mlp.act_fn", "input_layernorm", "post_attention_layernorm")
"""A Llama-like decoder layer's other modules: itself, its attention and MLP blocks, the activation and two norms."""
GATE_UP_LAYER = (*LAYER[:3], "mlp.activation_fn", *LAYER[4:])
"""Phi-3's and GLM-4's decoder layer's other modules: `LAYER`'s, the MLP's activation ``activation_fn`` (``Phi3MLP``,
``Glm4MLP``, in transformers 5.12.1 and 4.57.6 alike)."""
QK_NORMS = ("self_attn.q_norm", "self_attn.k_norm")
"""Qwen3's, OLMo 2's, OLMoE's and others' query and key norms."""
FEEDFORWARD_NORMS = ("pre_feedforward_layernorm", "post_feedforward_layernorm")
"""Gemma 2's and Gemma 3's norms around the MLP."""
QWEN2_EXPERTS = ("mlp.gate", "mlp.experts.gate_proj", "mlp.experts.up_proj", "mlp.experts.down_proj")
"""The router and routed experts PEFT adapts of a type it converts as Qwen2-MoE's (``conversion_mapping.py:39`` to
``:65`` in transformers 5.12.1): their v4 names."""
QWEN2_FUSED = ("experts.gate_proj", "experts.up_proj")
"""The experts' projections PEFT fuses for a type it converts as Qwen2-MoE's."""
MIXTRAL_EXPERTS = ("mlp.gate", "mlp.experts.w1", "mlp.experts.w3", "mlp.experts.w2")
"""The router and routed experts PEFT adapts of a type it converts as Mixtral's (Mixtral's, MiniMax-M2's:
``conversion_mapping.py:41`` to ``:42`` in transformers 5.12.1): their v4 names."""
MIXTRAL_FUSED = ("experts.w1", "experts.w3")
"""The experts' projections PEFT fuses for a type it converts as Mixtral's."""
EXPERT_OTHERS = ("mlp.experts", "mlp.experts.act_fn")
"""A mixture of experts' experts module (``...Experts``, fused parameters, no ``nn.Linear``) and its activation."""
SHARED_EXPERTS = ("mlp.shared_experts.gate_proj", "mlp.shared_experts.up_proj", "mlp.shared_experts.down_proj")
"""DeepSeek's, GLM-4-MoE's and ERNIE-4.5's shared experts (one gated MLP, ``shared_experts``)."""
MLA_ATTENTION = ("self_attn.q_proj", "self_attn.q_a_proj", "self_attn.q_b_proj", "self_attn.kv_a_proj_with_mqa",
                 "self_attn.kv_b_proj", "self_attn.o_proj")
"""A latent attention's linear layers (``DeepseekV2Attention``: ``q_proj`` without a ``q_lora_rank``, ``q_a_proj``
and ``q_b_proj`` with one: `latent_query_names` keeps those the config makes)."""
MLA_OTHERS = ("self_attn.q_a_layernorm", "self_attn.kv_a_layernorm")
"""A latent attention's norms."""
CONVERTED_MLPS = (*MLP, *SHARED_EXPERTS)
"""A dense layer's MLP and the shared experts of a mixture of experts whose LoRA config PEFT converts as Qwen2-MoE's
(DeepSeek's, GLM-4-MoE's, ERNIE-4.5's): ``nn.Linear`` layers that no ``target_modules`` adapts, ``all-linear``
included, since PEFT maps their last names (``gate_proj``, ``up_proj``, ``down_proj``) to the routed experts'
``gate_up_proj`` and ``down_proj`` parameters (``_convert_peft_config_moe``, ``utils/transformers_weight_conversion.py:
444`` to ``:457`` in peft 0.21.2), whose names theirs (``mlp.shared_experts.down_proj.weight``) do not end in
(``_inject_parameters``, ``tuners/tuners_utils.py:1245`` to ``:1252``): checked with tiny random DeepSeek-V3,
GLM-4-MoE and Hunyuan-MoE models, whose adapters hold the attention, the router and the routed experts alone."""
HUNYUAN_LAYER = (*LAYER[:3], *LAYER[4:], "self_attn.query_layernorm", "self_attn.key_layernorm", "mlp.gate")
"""Hunyuan-MoE's decoder layer's other modules: `LAYER`'s but an activation under ``mlp`` (every layer's
``HunYuanMoEV1Moe``, no dense layer), its query and key norms and the router's module (``HunYuanMoEV1Gate``)."""
HUNYUAN_SHARED = ("mlp.shared_mlp.gate_proj", "mlp.shared_mlp.up_proj", "mlp.shared_mlp.down_proj")
"""Hunyuan-MoE's shared expert's linear layers (``shared_mlp``), which ``all-linear`` adapts under transformers 4
alone (`CONVERTED_MLPS`' reason under 5)."""
DEEPSEEK_OTHERS = (*LAYER, *MLA_OTHERS, *EXPERT_OTHERS, "mlp.shared_experts", "mlp.shared_experts.act_fn",
                   *CONVERTED_MLPS)
"""A DeepSeek-V2/V3 layer's other modules."""


def _llama_like(model_type: str, *others: str) -> PeftModuleNames:
    """A dense type laid out as Llama (`ATTENTION`, `MLP`, `LAYER`) with `others` besides."""
    return PeftModuleNames(model_type, (*ATTENTION, *MLP), (*LAYER, *others))


PEFT_NAMES_BY_MODEL_TYPE = {names.model_type: names for names in (
    PeftModuleNames("qwen3", (*ATTENTION, *MLP), (*LAYER[:2], *QK_NORMS, *LAYER[2:])),
    PeftModuleNames("qwen3_moe", (*ATTENTION, *QWEN2_EXPERTS),
                    (*LAYER[:2], *QK_NORMS, "mlp", *EXPERT_OTHERS, *LAYER[4:]), router="mlp.gate", fused=QWEN2_FUSED,
                    separate_experts=True),
    _llama_like("llama"), _llama_like("mistral"), _llama_like("qwen2"), _llama_like("granite"), _llama_like("olmo"),
    _llama_like("gemma"), _llama_like("gemma2", *FEEDFORWARD_NORMS),
    _llama_like("gemma3_text", *QK_NORMS, *FEEDFORWARD_NORMS),
    PeftModuleNames("olmo2", (*ATTENTION, *MLP), (*LAYER[:4], LAYER[5], *QK_NORMS, FEEDFORWARD_NORMS[1])),
    _llama_like("stablelm", "self_attn.q_layernorm", "self_attn.q_layernorm.norms", "self_attn.q_layernorm.norms.H",
                "self_attn.k_layernorm", "self_attn.k_layernorm.norms", "self_attn.k_layernorm.norms.H", "dropout"),
    PeftModuleNames("phi3", ("self_attn.qkv_proj", "self_attn.o_proj", "mlp.gate_up_proj", "mlp.down_proj"),
                    (*GATE_UP_LAYER, "resid_attn_dropout", "resid_mlp_dropout")),
    PeftModuleNames("glm4", (*ATTENTION, "mlp.gate_up_proj", "mlp.down_proj"),
                    (*GATE_UP_LAYER, "post_self_attn_layernorm", "post_mlp_layernorm")),
    PeftModuleNames("mixtral", (*ATTENTION, *MIXTRAL_EXPERTS), (*LAYER[:3], *EXPERT_OTHERS, *LAYER[4:]),
                    router="mlp.gate", fused=MIXTRAL_FUSED, separate_experts=True),
    PeftModuleNames("qwen2_moe", (*ATTENTION, "mlp.shared_expert.gate_proj", "mlp.shared_expert.up_proj",
                                  "mlp.shared_expert.down_proj", "mlp.shared_expert_gate"),
                    (*LAYER[:3], "mlp.gate", *EXPERT_OTHERS, "mlp.shared_expert", "mlp.shared_expert.act_fn",
                     *LAYER[4:]), separate_experts=True),
    PeftModuleNames("olmoe", (*ATTENTION, *QWEN2_EXPERTS), (*LAYER[:3], *QK_NORMS, *EXPERT_OTHERS, *LAYER[4:]),
                    router="mlp.gate", fused=QWEN2_FUSED, separate_experts=True),
    PeftModuleNames("deepseek_v2", (*MLA_ATTENTION, *QWEN2_EXPERTS), DEEPSEEK_OTHERS, router="mlp.gate",
                    fused=QWEN2_FUSED, separate_experts=True),
    PeftModuleNames("deepseek_v3", (*MLA_ATTENTION, *QWEN2_EXPERTS), DEEPSEEK_OTHERS, router="mlp.gate",
                    fused=QWEN2_FUSED, separate_experts=True),
    PeftModuleNames("glm4_moe", (*ATTENTION, *QWEN2_EXPERTS),
                    (*LAYER, *QK_NORMS, *EXPERT_OTHERS, "mlp.shared_experts", "mlp.shared_experts.act_fn",
                     *CONVERTED_MLPS), router="mlp.gate", fused=QWEN2_FUSED, separate_experts=True),
    PeftModuleNames("ernie4_5_moe", (*ATTENTION, *QWEN2_EXPERTS),
                    (*LAYER, *EXPERT_OTHERS, "mlp.gate.moe_statics", "mlp.shared_experts",
                     "mlp.shared_experts.act_fn", *CONVERTED_MLPS), router="mlp.gate", fused=QWEN2_FUSED,
                    separate_experts=True),
    PeftModuleNames("hunyuan_v1_moe", (*ATTENTION, "mlp.gate.wg", *QWEN2_EXPERTS[1:]),
                    (*HUNYUAN_LAYER, *EXPERT_OTHERS, "mlp.shared_mlp", "mlp.shared_mlp.act_fn", *HUNYUAN_SHARED),
                    router="mlp.gate.wg", fused=QWEN2_FUSED, separate_experts=True),
    PeftModuleNames("llama4_text", (*ATTENTION, "feed_forward.router", "feed_forward.shared_expert.gate_proj",
                                    "feed_forward.shared_expert.up_proj", "feed_forward.shared_expert.down_proj",
                                    "feed_forward.gate_proj", "feed_forward.up_proj", "feed_forward.down_proj"),
                    ("", "self_attn", "self_attn.qk_norm", "feed_forward", "feed_forward.activation_fn",
                     "feed_forward.experts", "feed_forward.experts.act_fn", "feed_forward.shared_expert",
                     "feed_forward.shared_expert.activation_fn", *LAYER[4:]), router="feed_forward.router"),
    PeftModuleNames("granitemoe", (*ATTENTION, "block_sparse_moe.router.layer"),
                    (*LAYER[:2], "block_sparse_moe", "block_sparse_moe.input_linear", "block_sparse_moe.output_linear",
                     "block_sparse_moe.router", "block_sparse_moe.activation", *LAYER[4:]),
                    router="block_sparse_moe.router.layer"),
    PeftModuleNames("phimoe", (*ATTENTION, "mlp.router"), (*LAYER[:3], *EXPERT_OTHERS, *LAYER[4:]),
                    router="mlp.router", separate_experts=True),
    PeftModuleNames("gpt_oss", ATTENTION, (*LAYER[:3], "mlp.router", "mlp.experts", *LAYER[4:])),
    PeftModuleNames("minimax_m2", (*ATTENTION, *MIXTRAL_EXPERTS), (*LAYER[:2], *QK_NORMS, "mlp", *EXPERT_OTHERS,
                                                                   *LAYER[4:]), router="mlp.gate", fused=MIXTRAL_FUSED),
    _llama_like("ministral3"), _llama_like("cwm"),
)}
"""Each model type's module names (`PeftModuleNames`), read from transformers 5.12.1's ``modeling_<type>.py``
(``...DecoderLayer``, ``...Attention``, ``...MLP``, ``...SparseMoeBlock``/``...MoE``) and PEFT 0.21.2's conversion
(``utils/transformers_weight_conversion.py``), and what ``all-linear`` adapts of a mixture of experts' router and
routed experts under transformers 4.57.1 (``separate_experts``, and `SEPARATE_NAMES_BY_MODEL_TYPE`: each type's
``...SparseMoeBlock`` or ``...MoE``); Qwen3's and Qwen3-MoE's first. gpt-oss's router (``GptOssTopKRouter``) and
experts are parameters under transformers 4.57.6 and 5.12.1 alike, and PEFT converts no ``gpt_oss`` config: its
``all-linear`` adapts the attention alone; MiniMax-M2's are converted as Mixtral's (each checked against a tiny
model's ``named_modules()`` and PEFT 0.21.2's adapter). A config's ``model_type`` outside it
(``internlm2``, ``deepseek``: remote code rft-solver has not read) takes `peft_module_names`' assumed ones."""


HEAD_INDEX = "H"
"""An attention head's index in a name of a per-head module (StableLM's query and key norms, one ``nn.LayerNorm`` per
head in an ``nn.ModuleList``, ``StableLmLayerNormPerHead``, ``modeling_stablelm.py:175-187`` in transformers 5.12.1 and
alike in 4.57.6: ``self_attn.q_layernorm.norms.H``), matched for each ``H`` below `PEFT_HEADS`."""
PEFT_HEADS = 64
"""The heads whose per-head modules (`HEAD_INDEX`) a regex is matched against: more than any StableLM config gives
(StableLM 2 12B's 32 query heads)."""
EXPERT_INDEX = "E"
"""The expert's index in a name of transformers 4's routed experts (``mlp.experts.E.gate_proj``), as ``N`` is the
layer's in the names a refusal shows."""
PEFT_EXPERTS = 8
"""The routed experts a regex is matched against in each expert layer under transformers 4 where the model is not
known (the reading of a config alone, `SEPARATE_NAMES_BY_MODEL_TYPE`): as few as any known type's released models hold
(Mixtral's 8), so that what it matches there every such model holds."""
SEPARATE_EXPERTS = ("mlp.experts.E.gate_proj", "mlp.experts.E.up_proj", "mlp.experts.E.down_proj")
"""Transformers 4's routed experts of most types: an ``nn.ModuleList`` of gated MLPs (``...MLP``), three
``nn.Linear`` each."""
SEPARATE_EXPERT_OTHERS = ("mlp.experts", "mlp.experts.E", "mlp.experts.E.act_fn")
"""Transformers 4's experts module (the ``nn.ModuleList``), each expert's MLP and its activation."""
SPARSE_BLOCK = ("block_sparse_moe.gate", "block_sparse_moe.experts.E.w1", "block_sparse_moe.experts.E.w3",
                "block_sparse_moe.experts.E.w2")
"""Mixtral's and PhiMoE's router and routed experts under transformers 4 (``...SparseMoeBlock`` as
``block_sparse_moe``, each expert a ``...BlockSparseTop2MLP`` of ``w1``, ``w3`` and ``w2``)."""
SPARSE_BLOCK_OTHERS = ("block_sparse_moe", "block_sparse_moe.experts", "block_sparse_moe.experts.E",
                       "block_sparse_moe.experts.E.act_fn")
"""Mixtral's and PhiMoE's other modules of the ``block_sparse_moe`` under transformers 4."""
V4_ROTARY = "self_attn.rotary_emb"
"""Qwen2-MoE's and StableLM's attention's own rotary embedding under transformers 4 (a module, no ``nn.Linear``)."""


def _separate(names: PeftModuleNames, adapted: tuple[str, ...], others: tuple[str, ...]) -> PeftModuleNames:
    """`names` (a mixture of experts') as transformers 4 makes them: `adapted` and `others` instead, the routed
    experts among `adapted` one ``nn.Linear`` each (`PEFT_EXPERTS` of them, until `separate_module_names` gives the
    count), no conversion (PEFT converts nothing there: `PeftModuleNames.fused` empty) and no router but one of
    `adapted`."""
    router = names.router if names.router in adapted else None
    return names._replace(adapted=adapted, others=others, router=router, fused=(), expert_count=PEFT_EXPERTS)


_V5 = PEFT_NAMES_BY_MODEL_TYPE
"""Transformers 5's names, which `SEPARATE_NAMES_BY_MODEL_TYPE` starts from."""
SEPARATE_NAMES_BY_MODEL_TYPE = {names.model_type: names for names in (
    _separate(_V5["qwen3_moe"], (*ATTENTION, "mlp.gate", *SEPARATE_EXPERTS),
              (*LAYER[:2], *QK_NORMS, "mlp", *SEPARATE_EXPERT_OTHERS, *LAYER[4:])),
    _separate(_V5["olmoe"], (*ATTENTION, "mlp.gate", *SEPARATE_EXPERTS),
              (*LAYER[:2], *QK_NORMS, "mlp", *SEPARATE_EXPERT_OTHERS, *LAYER[4:])),
    _separate(_V5["mixtral"]._replace(router="block_sparse_moe.gate"), (*ATTENTION, *SPARSE_BLOCK),
              (*LAYER[:2], *SPARSE_BLOCK_OTHERS, *LAYER[4:])),
    _separate(_V5["phimoe"]._replace(router="block_sparse_moe.gate"), (*ATTENTION, *SPARSE_BLOCK),
              (*LAYER[:2], *SPARSE_BLOCK_OTHERS, *LAYER[4:])),
    _separate(_V5["qwen2_moe"]._replace(router="mlp.gate"), (*ATTENTION, "mlp.gate", *SEPARATE_EXPERTS,
                                                             *_V5["qwen2_moe"].adapted[4:]),
              (*LAYER[:2], V4_ROTARY, "mlp", *SEPARATE_EXPERT_OTHERS, "mlp.shared_expert", "mlp.shared_expert.act_fn",
               *LAYER[4:])),
    *(_separate(_V5[model_type], (*MLA_ATTENTION, *MLP, *SEPARATE_EXPERTS, *SHARED_EXPERTS),
                (*LAYER, *MLA_OTHERS, *SEPARATE_EXPERT_OTHERS, "mlp.gate", "mlp.shared_experts",
                 "mlp.shared_experts.act_fn")) for model_type in ("deepseek_v2", "deepseek_v3")),
    _separate(_V5["glm4_moe"], (*ATTENTION, *MLP, *SEPARATE_EXPERTS, *SHARED_EXPERTS),
              (*LAYER, *QK_NORMS, *SEPARATE_EXPERT_OTHERS, "mlp.gate", "mlp.shared_experts",
               "mlp.shared_experts.act_fn")),
    _separate(_V5["ernie4_5_moe"], (*ATTENTION, *MLP, "mlp.gate", *SEPARATE_EXPERTS, *SHARED_EXPERTS),
              (*LAYER, "mlp.moe_statics", *SEPARATE_EXPERT_OTHERS, "mlp.shared_experts", "mlp.shared_experts.act_fn")),
    _separate(_V5["hunyuan_v1_moe"], (*ATTENTION, "mlp.gate.wg", *SEPARATE_EXPERTS, *HUNYUAN_SHARED),
              (*HUNYUAN_LAYER, *SEPARATE_EXPERT_OTHERS, "mlp.shared_mlp", "mlp.shared_mlp.act_fn")),
    _V5["stablelm"]._replace(others=(*LAYER[:2], "self_attn.attention_dropout", V4_ROTARY, *LAYER[2:],
                                     *_V5["stablelm"].others[len(LAYER):])),
)}
"""The module names that differ under transformers 4.57.6 (Trinity 0.5.1's ``transformers<5``, `ExpertLayout`
``separate``; ``modeling_<type>.py``, each checked against a tiny model's ``named_modules()``): a mixture of experts'
routed experts an ``nn.ModuleList`` of ``nn.Linear`` per expert (``mlp.experts.E.gate_proj``; Mixtral's and PhiMoE's
under ``block_sparse_moe``: ``modeling_mixtral.py:63``, ``:95`` to ``:97``, ``:305``), which PEFT matches as they are
(no conversion: ``is_transformers_ge_v5`` is false, ``tuners/tuners_utils.py:833`` in peft 0.21.2), the router an
``nn.Linear`` among `PeftModuleNames.adapted` (`PeftModuleNames.router`: Mixtral's, Qwen2-MoE's, Qwen3-MoE's and most
others' ``gate``; not DeepSeek's and GLM-4-MoE's, a ``weight`` parameter of its own class, ``DeepseekV3TopkRouter``,
``modeling_deepseek_v3.py:109`` to ``:120`` in 4.57.1, which ``all-linear`` leaves as it is); ERNIE-4.5's
``moe_statics`` under ``mlp``, Qwen2-MoE's and StableLM's attention's own ``rotary_emb`` (StableLM's
``attention_dropout`` too). The other types' names, the dense types' linear layers among them, are the same in both
(``qwen3`` to ``glm4``; Llama 4's and GraniteMoE's 3-D experts; Gemma 3's ``model.rotary_emb_local`` outside the
layers is transformers 4's alone, which no regex of the checks reaches: `PEFT_OTHER_MODULES`)."""


def separate_module_names(names: PeftModuleNames, expert_count: int) -> PeftModuleNames:
    """`names` (`PEFT_NAMES_BY_MODEL_TYPE`' or `peft_module_names`' assumed ones) as transformers 4 makes them
    (`SEPARATE_NAMES_BY_MODEL_TYPE`, else `names` as they are), an expert layer holding `expert_count` routed
    experts where they are an ``nn.ModuleList``; assumed where `names` are."""
    separate = SEPARATE_NAMES_BY_MODEL_TYPE.get(names.model_type)
    if separate is None:
        return names
    return separate._replace(assumed=names.assumed, expert_count=expert_count if separate.expert_count else 0)


def peft_module_names(model_type: str | None, moe: bool) -> PeftModuleNames:
    """The module names of a model of `model_type` (`PEFT_NAMES_BY_MODEL_TYPE`); Qwen3's, or Qwen3-MoE's where `moe`,
    `assumed`, for a type the table does not hold, or none (None)."""
    names = PEFT_NAMES_BY_MODEL_TYPE.get(model_type or "")
    if names is not None:
        return names
    return PEFT_NAMES_BY_MODEL_TYPE["qwen3_moe" if moe else "qwen3"]._replace(assumed=True)


DENSE_MLP_MODEL_TYPE = "qwen3_moe"
"""The model type whose config's ``mlp_only_layers`` and ``decoder_sparse_step`` make some layers dense, a gated MLP
``intermediate_size`` wide (``Qwen3MoeMLP``) in place of the experts (``Qwen3MoeDecoderLayer``,
``modeling_qwen3_moe.py:314-320`` in transformers 5.12.1, ``:295-301`` in 4.57.6), which rft-solver reads
(``solver.tables.model_config``; their module names, `dense_mlp_names`)."""


def dense_mlp_names(names: PeftModuleNames, dense_layers: int) -> PeftModuleNames:
    """`names` of a model of `DENSE_MLP_MODEL_TYPE` with `dense_layers` dense layers, with theirs: the gated MLP's
    linear layers (`MLP`) and its activation ``mlp.act_fn`` (``Qwen3MoeMLP``, ``modeling_qwen3_moe.py:198-207`` in
    transformers 5.12.1), which ``all-linear`` adapts under transformers 4 (no conversion: `PeftModuleNames.fused`
    empty) and no ``target_modules`` adapts under 5, where PEFT maps their names to the routed experts' parameters
    (`CONVERTED_MLPS`); other `names`, and a model with no dense layer's, as they are."""
    if names.model_type != DENSE_MLP_MODEL_TYPE or not dense_layers:
        return names
    if names.fused:
        return names._replace(others=(*names.others, *MLP, "mlp.act_fn"))
    return names._replace(adapted=(*ATTENTION, *MLP, *names.adapted[len(ATTENTION):]),
                          others=(*names.others, "mlp.act_fn"))


LOW_RANK_QUERY = ("self_attn.q_a_proj", "self_attn.q_a_layernorm", "self_attn.q_b_proj")
"""A latent attention's query modules where its config sets ``q_lora_rank``, in place of ``self_attn.q_proj``."""


def latent_query_names(names: PeftModuleNames, low_rank_query: bool) -> PeftModuleNames:
    """`names` of a latent attention (`MLA_ATTENTION`) as its config makes its query: ``q_a_proj``, ``q_a_layernorm``
    and ``q_b_proj`` (`LOW_RANK_QUERY`) and no ``q_proj`` where ``q_lora_rank`` is set (`low_rank_query`), else
    ``q_proj`` alone (``DeepseekV2Attention.__init__``, ``modeling_deepseek_v2.py:310`` to ``:315`` in transformers
    5.12.1; ``modeling_deepseek_v3.py:384`` to ``:389``); other types' `names` as they are."""
    left_out = {"self_attn.q_proj"} if low_rank_query else set(LOW_RANK_QUERY)
    return names._replace(adapted=tuple(name for name in names.adapted if name not in left_out),
                          others=tuple(name for name in names.others if name not in left_out))
