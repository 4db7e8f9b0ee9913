"""How each model type's RoPE reaches past its native context, as transformers 5.12.1's config classes and vLLM
0.19.1's ``get_rope`` take a ``rope_scaling`` (`ROPE_BY_MODEL_TYPE`), and the one decision of what rft-solver advises
for a model (`rope_advice`): YaRN by a factor, the model's own scaling kept, or none where its type's own scheme needs
more than a factor. An unknown model type's is Qwen3's, assumed. Read by ``solver.tables.schema`` (`Model.rope_advice`,
which every YaRN factor rft-solver writes or asks for follows) and the cautions alike."""

from __future__ import annotations

from typing import Literal, NamedTuple

FACTOR_ROPE_TYPES = ("yarn", "linear", "dynamic")
"""The RoPE scaling types that stretch a model's RoPE by a ``factor`` alone (``modeling_rope_utils.py``'s
``_validate_<type>_rope_parameters`` in transformers 5.12.1 require no more of them, a YaRN's
``original_max_position_embeddings`` filled in), which every config class takes but Phi-3's and PhiMoE's."""


class RopeExtension(NamedTuple):
    """Whether a model type takes YaRN past its native context, and where not, why and what it takes instead."""

    model_type: str
    """The ``model_type`` this is of (``qwen3`` for an unknown type's, `RopeAdvice.assumed`)."""
    takes_yarn: bool = True
    """Whether a YaRN ``rope_scaling`` (``rope_type: yarn``, ``factor``, ``original_max_position_embeddings``) extends
    the type: its transformers config class validates it by the common rule (``_validate_yarn_rope_parameters``,
    ``modeling_rope_utils.py:841``) and vLLM's ``get_rope`` builds it (``yarn_scaling_rope.py``; DeepSeek's as
    ``deepseek_yarn``)."""
    refusal: str = ""
    """Where it does not: what refuses a YaRN and what the type's own scheme needs instead, in words."""
    accepted: str = ""
    """Where it does not: the accepted way to run the model past its native context, in words."""
    factor_refusal: str = ""
    """Where it does not, and its config class refuses a ``linear`` or ``dynamic`` scaling for another reason than
    `refusal` gives: that reason, in words (`refusal_of`); "" where `refusal` says it of them too."""

    def refusal_of(self, rope_type: object) -> str | None:
        """Why the type's config class refuses a RoPE scaling of `rope_type` that stretches it by a factor
        (`FACTOR_ROPE_TYPES`), in words; None where it takes it (every type that takes YaRN takes the three)."""
        if self.takes_yarn or rope_type not in FACTOR_ROPE_TYPES:
            return None
        return self.factor_refusal if rope_type != "yarn" and self.factor_refusal else self.refusal


PHI3_REFUSAL = ("transformers' Phi-3 config class reads rope_type yarn as longrope, which needs a short_factor and a "
                "long_factor per pair of rotary dimensions that no factor gives, a KeyError as the trainer builds the "
                "model, and the rollout's vLLM refuses a yarn rope_scaling for Phi-3 as it starts")
"""Why a Phi-3 takes no YaRN (``configuration_phi3.py:101-104``, ``:107-149``; ``modeling_rope_utils.py:1020-1022``)."""
PHI3_FACTOR_REFUSAL = ("transformers' Phi-3 config class takes rope_type default or longrope alone (su and yarn read "
                       "as longrope), a ValueError for any other as the model is built")
"""Why a Phi-3 takes no ``linear`` or ``dynamic`` scaling (``configuration_phi3.py:122-123`` in transformers 5.12.1)."""
PHIMOE_REFUSAL = ("transformers' PhiMoE config class takes a rope_scaling other than default only with its "
                  "longrope's short_mscale and long_mscale, which no factor gives, a TypeError without them")
"""Why a PhiMoE takes no YaRN (``configuration_phimoe.py:83-102``)."""
LONGROPE_ACCEPTED = ("use a checkpoint whose config.json gives its own longrope rope_scaling, as Phi-3-mini-128k-"
                     "instruct's does, or plan within the native context")
"""The accepted way past a Phi-3's or PhiMoE's native context: its own trained LongRoPE factors."""

ROPE_BY_MODEL_TYPE = {extension.model_type: extension for extension in (
    *(RopeExtension(model_type) for model_type in (
        "qwen3", "qwen3_moe", "qwen2", "qwen2_moe", "llama", "mistral", "mixtral", "gemma", "gemma2", "gemma3_text",
        "granite", "granitemoe", "olmo", "olmo2", "olmoe", "stablelm", "glm4", "glm4_moe", "ernie4_5_moe",
        "hunyuan_v1_moe", "llama4_text", "deepseek_v2", "deepseek_v3")),
    RopeExtension("phi3", takes_yarn=False, refusal=PHI3_REFUSAL, accepted=LONGROPE_ACCEPTED,
                  factor_refusal=PHI3_FACTOR_REFUSAL),
    RopeExtension("phimoe", takes_yarn=False, refusal=PHIMOE_REFUSAL, accepted=LONGROPE_ACCEPTED),
)}
"""Each model type's `RopeExtension`, read from transformers 5.12.1's ``configuration_<type>.py`` (only Phi-3's and
PhiMoE's override the common RoPE validation that takes YaRN; Gemma 3's puts a scaling on its full-attention layers)
and vLLM 0.19.1's ``get_rope``; Qwen3's first. A config's ``model_type`` outside it (``internlm2``, ``deepseek``:
remote code rft-solver has not read) takes `rope_advice`'s assumed one."""

RopeKind = Literal["yarn", "own", "none"]
"""What rft-solver writes past a model's native context: YaRN by a factor, nothing over the model's own RoPE scaling,
or nothing where its type takes no YaRN."""


class RopeAdvice(NamedTuple):
    """What rft-solver advises past a model's native context (`rope_advice`)."""

    kind: RopeKind
    extension: RopeExtension
    """The type's entry that decided it (Qwen3's for an unknown type, `assumed`)."""
    assumed: bool = False
    """Whether the type is one `ROPE_BY_MODEL_TYPE` does not hold, whose YaRN is assumed from Qwen3's."""

    def refusal_of(self, rope_type: object) -> str | None:
        """Why a model so advised refuses a RoPE scaling of `rope_type` in place of none (`kind` ``none``, a Phi-3
        without its LongRoPE factors: `RopeExtension.refusal_of`), in words; None where it takes it, or has a scaling
        of its own, which another replaces (``rope-scaling-replaces-own``)."""
        return self.extension.refusal_of(rope_type) if self.kind == "none" else None


def rope_advice(model_type: str | None, own_scaling: str | None) -> RopeAdvice:
    """What rft-solver advises past the native context of a model of `model_type` (None: not known) whose config.json
    gives `own_scaling` (its own RoPE scaling's type; None for none, or a YaRN rft-solver re-derives): its own scaling
    kept (``own``, Llama 3.1's llama3), else YaRN where its type takes it (`ROPE_BY_MODEL_TYPE`; an unknown type's
    assumed as Qwen3's), else none (Phi-3's LongRoPE)."""
    known = ROPE_BY_MODEL_TYPE.get(model_type or "")
    extension = known or ROPE_BY_MODEL_TYPE["qwen3"]
    kind: RopeKind = "own" if own_scaling is not None else "yarn" if extension.takes_yarn else "none"
    return RopeAdvice(kind, extension, assumed=known is None)
