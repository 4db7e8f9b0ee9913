"""How each model type's RoPE reaches past its native context, as transformers 5.12.1's config classes and vLLM
0.19.1's ``get_rope`` take a ``rope_scaling`` (`ROPE_BY_MODEL_TYPE`), and the one decision of what rft-solver advises
for a model (`rope_advice`): YaRN by a factor, the model's own scaling kept, or none where its type's checkpoints reach
past it by a scheme of their own that no factor gives. An unknown model type's is Qwen3's, assumed. Read by
``solver.tables.schema`` (`Model.rope_advice`, which every YaRN factor rft-solver writes or asks for follows) and the
cautions alike."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Literal, NamedTuple

FACTOR_ROPE_TYPES = ("yarn", "linear", "dynamic")
"""The RoPE scaling types that stretch a model's RoPE by a ``factor`` alone (``modeling_rope_utils.py``'s
``_validate_<type>_rope_parameters`` in transformers 5.12.1 require no more of them, a YaRN's
``original_max_position_embeddings`` filled in)."""


class TrainerRead(NamedTuple):
    """Keys the trainer reads from a RoPE scaling by a factor at every step on a transformers major version, where its
    model type's rotary embedding reads more than the scaling's own type needs (`RopeExtension.trainer_reads`)."""

    transformers: int
    """The transformers major version (4, 5) whose rotary embedding reads them."""
    keys: tuple[str, ...]
    reader: str
    """What reads them, and the releases whose trainer runs on it, in words."""
    yarn_fills: tuple[str, ...] = ()
    """Those of `keys` this transformers fills in for a ``yarn`` as it builds the rotary embedding, before the step
    reads them (``standardize_rope_params``, which every RoPE type's init function runs in transformers 5)."""


class TrainerFailure(NamedTuple):
    """Why a release's trainer fails on a RoPE scaling by a factor (`RopeExtension.trainer_failure`)."""

    read: TrainerRead
    missing: tuple[str, ...]
    """The keys of `read` the scaling lacks."""


class RopeExtension(NamedTuple):
    """Whether rft-solver advises YaRN past a model type's native context, and where not, why, what it advises
    instead, and what a release's trainer fails on."""

    model_type: str
    """The ``model_type`` this is of (``qwen3`` for an unknown type's, `RopeAdvice.assumed`)."""
    yarn_advised: bool = True
    """Whether rft-solver writes a YaRN ``rope_scaling`` (``rope_type: yarn``, ``factor``,
    ``original_max_position_embeddings``) past the type's native context: its transformers config class validates it
    by the common rule (``_validate_yarn_rope_parameters``, ``modeling_rope_utils.py:841``) and vLLM's ``get_rope``
    builds it (``yarn_scaling_rope.py``; DeepSeek's as ``deepseek_yarn``). False where the type's checkpoints reach
    past it by a scheme of their own that no factor gives (Phi-3's and PhiMoE's LongRoPE)."""
    why_no_yarn: str = ""
    """Where YaRN is not advised: why, and what a scaling by a factor builds instead, in words."""
    accepted: str = ""
    """Where YaRN is not advised: the accepted way to run the model past its native context, in words."""
    trainer_reads: tuple[TrainerRead, ...] = ()
    """Where YaRN is not advised: the keys the trainer reads from a scaling by a factor at every step on each
    transformers major version, beyond those its type needs, a KeyError at the first step without them (PhiMoE's)."""

    def trainer_failure(self, rope: Mapping[str, Any], transformers: Collection[int]) -> TrainerFailure | None:
        """Why a trainer that may run on the `transformers` major versions (``solver.trinity.checks``' by its release)
        fails on `rope`, a RoPE scaling by a factor (`FACTOR_ROPE_TYPES`) of this type, the first version's that
        does; None where none does."""
        yarn = rope.get("rope_type") == "yarn"  # a legacy type alone is read as rope_type before it is filled
        for read in self.trainer_reads:
            missing = tuple(key for key in read.keys if key not in rope and not (yarn and key in read.yarn_fills))
            if missing and read.transformers in transformers:
                return TrainerFailure(read, missing)
        return None


BUILT_AS_GIVEN = ("a yarn, linear or dynamic rope_scaling is built as given by the trainer's transformers and the "
                  "rollout's vLLM, a RoPE the checkpoint was not trained with (Trinity sets it on the loaded config, "
                  "past the config class that reads yarn as longrope)")
"""What a scaling by a factor builds on a type whose checkpoints reach past their native context by LongRoPE, in
words: run (2026-12-06) on tiny Phi-3 and PhiMoE checkpoints built as Trinity 0.5.1's worker does
(``trainer/verl/fsdp_workers.py:355-356``; 0.6.0's ``trainer/verl_legacy/fsdp_workers.py:390-391``), transformers
4.57.6's ``Phi3RotaryEmbedding`` takes the type as given (``modeling_phi3.py:305-318``; the config class renames yarn
only as it is built, ``configuration_phi3.py:173-174``), as 5.12.1's and 5.25.0's do (the ``rope_scaling`` setter,
``configuration_utils.py:492-494`` in 5.12.1, runs no ``validate_rope``); vLLM sets the handed mapping after the
config's validation (``vllm/config/model.py:490-491`` in 0.15.1, ``:507-508`` in 0.19.1; ``config.update``,
``transformers_utils/config.py:631-633`` in 0.11.0) and Phi-3's Llama class builds it with ``get_rope``
(``YaRNScalingRotaryEmbedding``, ``rotary_embedding/__init__.py:199-239`` in 0.15.1, ``:233-273`` in 0.19.1)."""
PHI3_NO_YARN = ("Phi-3's checkpoints reach past their native context by LongRoPE, a short_factor and a long_factor per "
                f"pair of rotary dimensions trained with the model, which no factor gives; {BUILT_AS_GIVEN}")
"""Why rft-solver writes no YaRN for a Phi-3 (``configuration_phi3.py:107-149`` in transformers 5.12.1)."""
PHIMOE_NO_YARN = ("PhiMoE's checkpoints reach past their native context by LongRoPE with a short_mscale and a "
                  f"long_mscale trained with the model, which no factor gives; {BUILT_AS_GIVEN}")
"""Why rft-solver writes no YaRN for a PhiMoE (``configuration_phimoe.py:83-102`` in transformers 5.12.1)."""
PHIMOE_TRAINER_READS = (
    TrainerRead(4, ("original_max_position_embeddings",),
                "PhimoeRotaryEmbedding, modeling_phimoe.py:163-167 in 4.57.6; Trinity 0.5.1 pins transformers 4, 0.5.0 "
                "and 0.5.2 take it"),
    TrainerRead(5, ("original_max_position_embeddings", "short_mscale", "long_mscale"),
                "PhimoeRotaryEmbedding on verl before 0.8, modeling_phimoe.py:104-108 in 5.12.1 and 5.3.0; Trinity "
                "0.6 requires transformers 5, 0.5.0 and 0.5.2 take it; on verl 0.8 or later the trainer takes no "
                "model.rope_scaling", yarn_fills=("original_max_position_embeddings",)))
"""What a PhiMoE's trainer reads from a scaling by a factor at every step, per transformers major version: run as
`BUILT_AS_GIVEN` says (a KeyError at the first forward pass, within the native context too; transformers 5 reads
``original_max_position_embeddings`` before the mscale it picks, which its init functions fill in for a yarn alone,
``modeling_rope_utils.py:385``, ``standardize_rope_params`` ``:753-760`` in 5.12.1; 4 reads its mscales with
``get``)."""
LONGROPE_ACCEPTED = ("use a checkpoint whose config.json gives its own longrope rope_scaling, as Phi-3-mini-128k-"
                     "instruct's does, or plan within the native context")
"""The accepted way past a Phi-3's or PhiMoE's native context: its own trained LongRoPE factors."""

ROPE_BY_MODEL_TYPE = {extension.model_type: extension for extension in (
    *(RopeExtension(model_type) for model_type in (
        "qwen3", "qwen3_moe", "qwen2", "qwen2_moe", "llama", "mistral", "mixtral", "gemma", "gemma2", "gemma3_text",
        "granite", "granitemoe", "olmo", "olmo2", "olmoe", "stablelm", "glm4", "glm4_moe", "ernie4_5_moe",
        "hunyuan_v1_moe", "llama4_text", "deepseek_v2", "deepseek_v3", "gpt_oss", "minimax_m2", "ministral3", "cwm")),
    RopeExtension("phi3", yarn_advised=False, why_no_yarn=PHI3_NO_YARN, accepted=LONGROPE_ACCEPTED),
    RopeExtension("phimoe", yarn_advised=False, why_no_yarn=PHIMOE_NO_YARN, accepted=LONGROPE_ACCEPTED,
                  trainer_reads=PHIMOE_TRAINER_READS),
)}
"""Each model type's `RopeExtension`, read from transformers 5.12.1's ``configuration_<type>.py`` (only Phi-3's and
PhiMoE's override the common RoPE validation, for their LongRoPE; Gemma 3's puts a scaling on its full-attention layers)
and vLLM 0.19.1's ``get_rope``; Qwen3's first. A config's ``model_type`` outside it (``internlm2``, ``deepseek``:
remote code rft-solver has not read) takes `rope_advice`'s assumed one."""

RopeKind = Literal["yarn", "own", "none"]
"""What rft-solver writes past a model's native context: YaRN by a factor, nothing over the model's own RoPE scaling,
or nothing where YaRN is not advised for its type."""


class RopeAdvice(NamedTuple):
    """What rft-solver advises past a model's native context (`rope_advice`)."""

    kind: RopeKind
    extension: RopeExtension
    """The type's entry that decided it (Qwen3's for an unknown type, `assumed`)."""
    assumed: bool = False
    """Whether the type is one `ROPE_BY_MODEL_TYPE` does not hold, whose YaRN is assumed from Qwen3's."""

    def unadvised(self, rope_type: object) -> bool:
        """Whether a RoPE scaling of `rope_type` stretches the model by a factor (`FACTOR_ROPE_TYPES`) where YaRN is
        not advised for its type (``none``: Phi-3's LongRoPE)."""
        return self.kind == "none" and rope_type in FACTOR_ROPE_TYPES


def rope_advice(model_type: str | None, own_scaling: str | None) -> RopeAdvice:
    """What rft-solver advises past the native context of a model of `model_type` (None: not known) whose config.json
    gives `own_scaling` (its own RoPE scaling's type; None for none, or a YaRN rft-solver re-derives): its own scaling
    kept (``own``, Llama 3.1's llama3), else YaRN where it is advised for its type (`ROPE_BY_MODEL_TYPE`; an unknown
    type's assumed as Qwen3's), else none (Phi-3's LongRoPE)."""
    known = ROPE_BY_MODEL_TYPE.get(model_type or "")
    extension = known or ROPE_BY_MODEL_TYPE["qwen3"]
    kind: RopeKind = "own" if own_scaling is not None else "yarn" if extension.yarn_advised else "none"
    return RopeAdvice(kind, extension, assumed=known is None)
