"""How PEFT (0.21.2) matches a LoRA config's ``target_modules`` against a Qwen3 model's module names
(`peft_target_match`), and why it refuses one (`peft_target_refusal`): read by the config reader and the checks
alike, without the reader's other work."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

PEFT_LAYER_LINEARS = ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj", "mlp.gate_proj",
                      "mlp.up_proj", "mlp.down_proj")
"""The linear layers of a Qwen3 decoder layer (``model.layers.N.``), those PEFT's ``all-linear`` adapts
(`solver.memory.adapted_shapes`)."""
PEFT_OUTER_MODULES = ("model.embed_tokens", "lm_head")
"""The modules outside the layers that PEFT adapts where a ``target_modules`` regex names them (an embedding, and the
output projection, which ``all-linear`` leaves out: ``_maybe_include_all_linear_layers``,
``tuners/tuners_utils.py:2464`` to ``:2469`` in peft 0.21.2), whose adapters rft-solver does not count."""
PEFT_OTHER_MODULES = ("model", "model.layers", "model.norm", "model.rotary_emb")
"""A Qwen3 model's other module names outside the layers, beside `PEFT_LAYER_OTHERS`; not the model itself (``""``),
which PEFT never matches (``inject_adapter`` skips the empty name, ``tuners/tuners_utils.py:949`` to ``:950`` in peft
0.21.2), so that a regex that also matches the empty string, such as ``(.*\\.q_proj)?``, adapts what else it
matches."""
PEFT_LAYER_OTHERS = ("", "self_attn", "self_attn.q_norm", "self_attn.k_norm", "mlp", "mlp.act_fn", "input_layernorm",
                     "post_attention_layernorm")
"""A Qwen3 decoder layer's module names other than its linear layers (``""`` the layer itself)."""
PEFT_MOE_LAYER_ADAPTED = ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj", "mlp.gate",
                          "mlp.experts.gate_proj", "mlp.experts.up_proj", "mlp.experts.down_proj")
"""What PEFT 0.21.2 adapts of a Qwen3-MoE decoder layer (transformers 5.12.1) where a ``target_modules`` regex names
it (`solver.memory.adapted_shapes`): the attention's linear layers; the router, ``mlp.gate`` (a ``Qwen3MoeTopKRouter``,
no ``nn.Linear``, whose ``gate.weight`` PEFT adapts); and the routed experts, by the v4 names PEFT probes them with
(``mlp.experts.gate_proj``, ``up_proj``, ``down_proj``: the fused parameters ``gate_up_proj`` and ``down_proj``,
``utils/transformers_weight_conversion.py:375`` to ``:399``)."""
PEFT_MOE_LAYER_OTHERS = ("", "self_attn", "self_attn.q_norm", "self_attn.k_norm", "mlp", "mlp.experts",
                         "mlp.experts.act_fn", "input_layernorm", "post_attention_layernorm")
"""A Qwen3-MoE decoder layer's other module names (``""`` the layer itself)."""
FUSED_EXPERTS = ("experts.gate_proj", "experts.up_proj")
"""The experts' projections PEFT fuses into ``gate_up_proj``: a regex that names one alone fails ("Cannot convert
PEFT target(s) ... because they are fused", ``utils/transformers_weight_conversion.py:463`` to ``:470``)."""
PEFT_LAYERS = 128
"""The decoder layers whose module names a ``target_modules`` regex is matched against (``model.layers.0`` to
``model.layers.127``: more than any catalogued model has)."""
PEFT_MODULE_NAMES = ("model.layers.N.self_attn.{q,k,v,o}_proj, model.layers.N.mlp.{gate,up,down}_proj, "
                     "model.embed_tokens and lm_head")
"""The module names a ``target_modules`` regex is to match, as a refusal names them."""


class TargetMatch(NamedTuple):
    """What a ``target_modules`` regex matches whole (`peft_target_match`): the layer's linear layers
    (`PEFT_LAYER_LINEARS`, without ``self_attn.``/``mlp.``), the modules outside the layers PEFT adapts
    (`PEFT_OUTER_MODULES`) and the first other module (a norm, a layer or the model; None where none)."""

    linears: tuple[str, ...]
    outer: tuple[str, ...]
    other: str | None


@lru_cache(maxsize=512)
def peft_target_match(pattern: str, excluded: str | None = None, moe: bool = False) -> TargetMatch:
    """The modules of a Qwen3 model whose full names (``model.layers.0.self_attn.q_proj``) the ``target_modules``
    regex `pattern` matches whole, as PEFT matches a string (``re.fullmatch``, ``match_target_against_key``,
    ``utils/other.py:1516`` to ``:1521``, from ``check_target_module_exists``, ``tuners/tuners_utils.py:2370`` to
    ``:2371`` in peft 0.21.2), in any of `PEFT_LAYERS` layers, or that ``all-linear`` adapts (the layers' linear layers,
    ``_maybe_include_all_linear_layers``, ``:2430`` to ``:2490``); less those the ``exclude_modules`` regex `excluded`
    matches whole, which PEFT leaves out first (``:2350`` to ``:2353``); a Qwen3-MoE model's names where `moe`
    (`PEFT_MOE_LAYER_ADAPTED`, which PEFT resolves a regex against, ``utils/transformers_weight_conversion.py:375``
    to ``:399``); `re.error` where either is no regular expression."""
    regex = None if all_linear(pattern) else re.compile(pattern)
    exclusion = None if excluded is None else re.compile(excluded)

    def adapted(full_name: str, linear: bool) -> bool:
        if exclusion is not None and exclusion.fullmatch(full_name):
            return False
        return linear if regex is None else bool(regex.fullmatch(full_name))

    def in_a_layer(name: str, linear: bool = False) -> bool:
        return any(adapted(f"model.layers.{layer}{'.' if name else ''}{name}", linear) for layer in range(PEFT_LAYERS))

    layer_adapted, layer_others = (PEFT_MOE_LAYER_ADAPTED, PEFT_MOE_LAYER_OTHERS) if moe else (PEFT_LAYER_LINEARS,
                                                                                               PEFT_LAYER_OTHERS)
    linears = tuple(name.split(".", 1)[1] for name in layer_adapted if in_a_layer(name, linear=True))
    outer = tuple(name for name in PEFT_OUTER_MODULES if adapted(name, False))
    other = next((name for name in PEFT_OTHER_MODULES if adapted(name, False)), None)
    layer = next((f"model.layers.N{'.' if name else ''}{name}" for name in layer_others if in_a_layer(name)), None)
    return TargetMatch(linears, outer, other or layer)


ALL_ADAPTED = tuple(tuple(name.split(".", 1)[1] for name in names) for names in (PEFT_LAYER_LINEARS,
                                                                                 PEFT_MOE_LAYER_ADAPTED))
"""A dense and a Qwen3-MoE decoder layer's names a regex matches where it adapts all that ``all-linear`` adapts
(`peft_target_match`'s ``linears``)."""
NO_MATCH = TargetMatch((), (), None)
"""A ``target_modules`` regex's match where it matches no module (`peft_target_match`)."""


def excludes_every_module(excluded: str, moe: bool) -> bool:
    """Whether the ``exclude_modules`` regex `excluded` matches whole every module name of a Qwen3 model (a Qwen3-MoE
    one's where `moe`) but the model itself, which PEFT skips: PEFT then leaves every module out and raises "All
    modules were excluded" (``tuners/tuners_utils.py:1052`` to ``:1057`` in peft 0.21.2), not "No modules were
    targeted for adaptation", which it raises where some module is neither adapted nor excluded (``:1074`` to
    ``:1086``); `re.error` where it is no regular expression."""
    exclusion = re.compile(excluded)
    # A Qwen3-MoE layer's experts are one module (mlp.experts): their v4 names are no module's.
    layer_names = ((*(name for name in PEFT_MOE_LAYER_ADAPTED if not name.startswith("mlp.experts.")),
                    *PEFT_MOE_LAYER_OTHERS) if moe else (*PEFT_LAYER_LINEARS, *PEFT_LAYER_OTHERS))
    names = [*(name for name in PEFT_OTHER_MODULES if name), *PEFT_OUTER_MODULES,
             *(f"model.layers.{layer}{'.' if name else ''}{name}" for layer in range(PEFT_LAYERS)
               for name in layer_names)]
    return all(exclusion.fullmatch(name) for name in names)


MATCHES_NO_MODULE = "matches no module"
"""`peft_target_refusal`'s words for a regex that matches no module."""


def peft_target_refusal(pattern: str, excluded: str | None, moe: bool) -> str | None:
    """Why PEFT fails on a ``target_modules`` regex `pattern` less `excluded` (`peft_target_match`) for a dense Qwen3
    model, or a Qwen3-MoE one where `moe`, in words that follow the key: it matches no module, one of the experts'
    `FUSED_EXPERTS` alone (PEFT's conversion refuses it first), or a module that is no layer PEFT adapts (a norm, an
    MLP block, ``mlp.experts``, an activation, an attention block, a decoder layer, the model: ``_create_new_module``
    raises "Target module ... is not supported", ``tuners/lora/model.py:559`` in peft 0.21.2, and for ``.*`` on a
    mixture of experts "target_modules should not contain an empty string"), the first of them named; None where PEFT
    takes it; `re.error` where either is no regular expression."""
    match = peft_target_match(pattern, excluded, moe)
    if match == NO_MATCH:
        return MATCHES_NO_MODULE
    fused = [name for name in FUSED_EXPERTS if name in match.linears]
    if len(fused) == 1:
        alone, other = fused[0].split(".")[1], next(name for name in FUSED_EXPERTS if name != fused[0]).split(".")[1]
        return (f"matches the routed experts' {alone} without their {other}, which PEFT fuses into gate_up_proj "
                "(\"Cannot convert PEFT target(s) ... because they are fused\")")
    if match.other is not None:
        return (f"matches {match.other}, which PEFT cannot adapt (\"Target module ... is not supported\": it adapts "
                "linear layers and embeddings alone)")
    return None


ALL_LINEAR = "all-linear"
"""PEFT's word for every linear layer but the output projection, Trinity's default ``target_modules``."""


def all_linear(targets: object) -> bool:
    """Whether ``target_modules`` `targets` is PEFT's ``all-linear`` (unset, Trinity's default, or the word in any case:
    PEFT lowers it, ``tuners/tuners_utils.py:2439`` to ``:2442`` in peft 0.21.2)."""
    return targets is None or isinstance(targets, str) and targets.lower() == "all-linear"
