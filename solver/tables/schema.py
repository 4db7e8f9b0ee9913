"""The schema of the tables: limits, settings, models, tables and GPU types as frozen pydantic models."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from fractions import Fraction
from functools import lru_cache
from math import ceil, floor, inf, nextafter
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Generic, TypeVar

from annotated_types import Ge, Gt, Le, MinLen
from pydantic import (
    AfterValidator,
    AllowInfNan,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    Strict,
    Tag,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

from solver.tables.bounds import (
    DRIVER_SHARE,
    INTERCONNECTS,
    INTERCONNECTS_BY_OTHER_NAMES,
    LEAST_DRIVER_MIB,
    LEAST_GPU_MEMORY_GB,
    MAX_CELLS,
    MAX_GPU_MEMORY_GB,
    MAX_GPUS,
    MAX_HOST_RAM_GB,
    MAX_TOKENS,
    NODE_INTERCONNECTS_BY_OTHER_NAMES,
    HeldExperts,
    InterconnectName,
    NodeInterconnect,
    TrinityVersion,
    folded_choice,
    interconnect_meant,
    mib_as_gb_hint,
)
from solver.tables.peft_match import adapted_modules
from solver.tables.peft_names import (
    PEFT_NAMES_BY_MODEL_TYPE,
    LoraTargets,
    PeftModuleNames,
    dense_mlp_names,
    latent_query_names,
    peft_module_names,
    separate_module_names,
)
from solver.tables.rope_types import RopeAdvice, rope_advice
from solver.tables.text import (
    BOUND_PROBLEMS,
    PLAIN_PROBLEMS,
    QueryError,
    asked_tokens,
    brief,
    check_types,
    counted,
    either,
    first_repeated,
    gpu_name_forms,
    guessed_name,
    model_name_from_path,
    normalise,
    plain_words,
    require_printable,
    says_amd,
    type_problem,
    yaml_brief,
)

Count = Annotated[int, Strict(), Gt(0)]
"""A positive whole number written as a YAML integer (not ``"4096"``, ``4096.0`` or ``true``)."""
Tokens = Annotated[int, Strict(), Gt(0), Le(MAX_TOKENS)]


def _asked_length(value: Any) -> Any:
    """A length as `asked_tokens` reads it (``32k``: 32768); else pydantic's ``int_type`` error in the words
    `solver.plan` refuses its ``max_model_len`` in (`type_problem`: ``must be a whole number, got 'abc' (tokens, or
    thousands of 1024: 32768 or 32k)``), for a `Job` built in Python, where a cluster file's reader words that error
    itself, with a file's hints (a number in quotes)."""
    read = asked_tokens(value)
    problem = type_problem("max_model_len", read, int)
    if problem is not None:
        raise PydanticCustomError("int_type", "{problem}", {"problem": problem})
    return read


def _bounds_in_words(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """`Tokens`' validation of a length read (`_asked_length`), a bound it breaks said in the words a cluster file's
    reader says it in (`BOUND_PROBLEMS`: ``must be above 0, got 0``, not pydantic's ``Input should be greater than
    0``), for a `Job` built in Python; its error's type and context as pydantic's, which that reader words."""
    try:
        return handler(value)
    except ValidationError as error:
        [detail] = error.errors()  # a bound or the whole number's type, one at a time
        if detail["type"] not in BOUND_PROBLEMS:
            raise
        context = detail.get("ctx", {})
        problem = f"{plain_words(BOUND_PROBLEMS[detail['type']], context)}, got {brief(value)}"
        raise PydanticCustomError(detail["type"], "{problem}", {**context, "problem": problem}) from None


AskedTokens = Annotated[Tokens, BeforeValidator(_asked_length), WrapValidator(_bounds_in_words)]
"""A length a user asks for in a file: a whole number of tokens, or thousands of 1024 (``32k``)."""


def own_words(error: Any) -> str:
    """A pydantic error (`ValidationError.errors`' item) of a type `PLAIN_PROBLEMS` does not word (a validator's own),
    in its words, without pydantic's prefix (``Value error, ``)."""
    problem: str = error["msg"].removeprefix("Value error, ")
    return problem


def _plain_detail(detail: Any) -> Any:
    """A pydantic error (`ValidationError.errors`' item) as `PlainWorded` raises it again: pydantic's own words
    (it has a ``url``) of a type `PLAIN_PROBLEMS` words said in those, with the value given (a whole number's as
    `type_problem` says it: ``got 2.0 (a float: pass 2)``); a validator's own words kept, without pydantic's prefix
    (`own_words`)."""
    context, given = detail.get("ctx", {}), detail["input"]
    whole = detail["type"] == "int_type" and type_problem(str(detail["loc"][-1]), given, int)  # 2.0: pass 2
    plain = "url" in detail and detail["type"] in PLAIN_PROBLEMS
    words = (whole or f"{plain_words(PLAIN_PROBLEMS[detail['type']], context)}, got {brief(given)}") if plain else None
    problem = words or own_words(detail)
    return {"type": PydanticCustomError(detail["type"], "{problem}", {**context, "problem": problem}),
            "loc": detail["loc"], "input": detail["input"]}
GpuCount = Annotated[int, Strict(), Gt(0), Le(MAX_GPUS)]
Billions = Annotated[float, Strict(), Gt(0)]
Weight = Annotated[float, Strict(), Ge(0), Le(1000), AllowInfNan(False)]
"""A cost weight: how much a setting slows a step, 0 (free) to 1000 (a thousand times slower)."""
Flag = Annotated[bool, Strict()]
Multiplier = Annotated[float, Strict(), Ge(0), Le(1000), AllowInfNan(False)]
"""A memory-model multiplier: finite, from 0 to 1000 (the calibration's bounds are far inside)."""
Text = Annotated[str, Strict(), MinLen(1)]


PrintableText = Annotated[Text, AfterValidator(require_printable)]
"""Text that output shows as it is (a name, a source, a table's heading): no control characters."""

NO_SETTING = "-"
"""The source's cell text for "no setting trains this model at this length"."""

SETTING_GRAMMAR = "vanilla, -, or Env, Offload and SP=N joined by ' + ' in that order"

_SP_PART = re.compile(r"SP\s*=?\s*(\d+)")
"""An SP part of a cell, upper-cased: the source's ``SP=4``, or one written otherwise (``sp4``, ``SP = 4``), which
`Setting.parse` refuses naming the source's form."""

_SHORT_PARTS = {"e": "env", "o": "offload"}
"""The parts of a setting as `solve map` labels them (``E+O+SP4``), which `Setting.parse` refuses naming the source's
form."""

_NO_SETTING_MEANT = re.compile(r"\s*(?:-|[\u2010-\u2015\u2212]+|oom|out of memory|n/a|x|\u00d7)\s*", re.IGNORECASE)
"""Other ways of writing that no setting trained (the source's ``-``): a dash of another kind (a Chinese input
method's ``——``, an em or en dash, a minus), spaces around ``-``, or a mark of a failed run (``OOM``, ``N/A``,
``x``)."""


class Frozen(BaseModel):
    """A frozen pydantic model that refuses unknown fields: the base of the package's data types. Field names may
    start with ``model_`` (``model_path``): pydantic before 2.10 warns of them unless no namespace is protected.
    Types only some commands use (a cluster's, ``solve memory``'s, a config's settings, ``solve calibrate``'s, the
    cells of ``solve tables``) say ``defer_build=True``: pydantic builds their validators when first used, not on
    import, which the planner's start-up is spared (about 1% of its instructions). Its JSON Schema for
    serialization requires every field, defaults too, since ``model_dump`` gives them all; a type whose JSON leaves
    fields out says which (`left_out_when_none`)."""

    model_config = ConfigDict(frozen=True, extra="forbid", protected_namespaces=(),
                              json_schema_serialization_defaults_required=True)


class PlainWorded(Frozen, defer_build=True):
    """A `Frozen` model whose pydantic errors of the types a cluster file's reader words (`PLAIN_PROBLEMS`) are said in
    those words, with the value given (``must be above 0, got 0``, ``must be a whole number, got 'high'``, not
    ``Input should be greater than 0``), for one built in Python too (`Job`, `Pool`); each error's location, type,
    context and input as pydantic's, which that reader words."""

    @classmethod
    def __get_pydantic_core_schema__(cls, source: type[BaseModel], handler: GetCoreSchemaHandler) -> CoreSchema:
        """The model's schema within a validator that words its errors, around its own validators too (a
        ``model_validator`` of this class would run inside those of a subclass, so a `Job`'s cross-field check,
        ``dpo`` with a ``critic``, kept pydantic's ``Value error, ``)."""
        return core_schema.no_info_wrap_validator_function(_in_plain_words, handler(source))


def _in_plain_words(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """`handler`'s model of `value`, its errors said as `PlainWorded` says them (`_plain_detail`)."""
    try:
        return handler(value)
    except ValidationError as error:
        details = [_plain_detail(detail) for detail in error.errors()]
        raise ValidationError.from_exception_data(error.title, details) from None


_Item = TypeVar("_Item")

if TYPE_CHECKING:
    class TupleOf(Generic[_Item]):
        """A field of a `Frozen` model that holds ``tuple[_Item, ...]`` and is built from any sequence of them, a
        list too (pydantic makes it a tuple): to a type checker, a descriptor whose ``__set__`` takes a `Sequence`,
        so that ``Fleet(pools=[pool])`` passes ``mypy --strict`` (a field's ``__init__`` argument takes what its
        descriptor's ``__set__`` does, PEP 681), and whose ``__get__`` gives the tuple the model holds. A default is
        ``Field(default=(), validate_default=True)``: a default it does not validate, a type checker takes as the
        field's type, which ``()`` is not."""

        def __get__(self, instance: object, owner: type[Any]) -> tuple[_Item, ...]: ...
        def __set__(self, instance: object, value: Sequence[_Item]) -> None: ...
else:
    class TupleOf:
        """At run time, ``TupleOf[X]`` is ``tuple[X, ...]``, the type pydantic validates and holds."""

        def __class_getitem__(cls, item: Any) -> Any:
            return tuple[item, ...]


def left_out_when_none(schema: JsonSchemaValue, handler: GetJsonSchemaHandler,
                       names: Collection[str]) -> JsonSchemaValue:
    """A model's JSON Schema (`schema`, as `handler` made it in its ``__get_pydantic_json_schema__``) where its JSON
    leaves the fields `names` out when they are None: for serialization, those fields are not required and, where
    given, not null. Returns `schema`."""
    if handler.mode != "serialization":
        return schema
    resolved = handler.resolve_ref_schema(schema)
    resolved["required"] = [name for name in resolved.get("required", []) if name not in names]
    for name in names:
        field = resolved["properties"][name]
        kept = [option for option in field.pop("anyOf") if option != {"type": "null"}]
        field.pop("default", None)  # None, which the JSON never gives
        field.update(kept[0] if len(kept) == 1 else {"anyOf": kept})
    return schema


def without_none(data: dict[str, Any], names: Collection[str]) -> dict[str, Any]:
    """A model's JSON (`data`, as its serializer's handler gave it) without those of the fields `names` that are
    None: the JSON whose schema `left_out_when_none` gives."""
    return {name: value for name, value in data.items() if not (name in names and value is None)}


class LeftOutWhenNone(Frozen):
    """A `Frozen` model whose JSON leaves the fields `left_out_where_none` out where they are None (`without_none`),
    and whose JSON Schema says so (`left_out_when_none`)."""

    left_out_where_none: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")  # unannotated: a return annotation would replace the JSON schema's properties
    def _none_left_out(self, handler: SerializerFunctionWrapHandler):  # type: ignore[no-untyped-def]
        return without_none(handler(self), self.left_out_where_none)

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        """Its JSON Schema: the fields of `left_out_where_none` are optional, never null."""
        return left_out_when_none(handler(core_schema), handler, cls.left_out_where_none)


class Setting(Frozen):
    """A trainer setting: the allocator Env, FSDP2 CPU Offload and the Ulysses SP degree."""

    env: Flag = False
    offload: Flag = False
    sp: Count = 1

    @property
    def label(self) -> str:
        """The setting in the source's words, e.g. ``Env + Offload + SP=2`` or ``vanilla``."""
        parts = [name for name, on in (("Env", self.env), ("Offload", self.offload)) if on]
        if self.sp > 1:
            parts.append(f"SP={self.sp}")
        return " + ".join(parts) or "vanilla"

    def includes(self, other: Setting) -> bool:
        """Whether this setting saves at least what `other` does: Env, Offload and SP each at least its."""
        return self.env >= other.env and self.offload >= other.offload and self.sp >= other.sp

    @property
    def escalation_key(self) -> tuple[int, int, int]:
        """Sort key of the source's out-of-memory escalation, its pattern on any SP degree: Offload last, then
        more SP, then Env; Offload without Env, which the source never tries, after every setting it does."""
        return (2, 0, 0) if self.offload and not self.env else (int(self.offload), self.sp, int(self.env))

    @classmethod
    def parse(cls, text: str) -> Setting | None:
        """Parse a cell's text; ``-`` (nothing trains) gives None. Only the canonical form is accepted; another case
        or order (``env + sp=2``) is refused naming it (``write 'Env + SP=2'``)."""
        if text == NO_SETTING:
            return None
        if _NO_SETTING_MEANT.fullmatch(text):
            raise ValueError(f"setting {text!r} is not in the source's form; write '-' (no setting trained there)")
        flags: dict[str, Any] = {}
        for part in ([] if text.strip().casefold() in ("vanilla", "van") else text.split("+")):
            part = part.strip()
            where = "" if part == text else f" in {text!r}"
            sp_match = _SP_PART.fullmatch(part.upper())
            if part.casefold() in ("env", "offload", *_SHORT_PARTS):
                key = _SHORT_PARTS.get(part.casefold(), part.casefold())
            elif sp_match:
                key = "sp"
                if int(sp_match.group(1)) < 2:
                    raise ValueError(f"{part!r}{where}: an SP degree is at least 2 (no SP is written as vanilla)")
            else:
                raise ValueError(f"unknown setting {part!r}{where} (accepted: {SETTING_GRAMMAR})")
            if key in flags:
                raise ValueError(f"{part!r} appears twice{where}")
            flags[key] = int(sp_match.group(1)) if sp_match else True
        setting = cls(**flags)
        if setting.label != text:
            raise ValueError(f"setting {text!r} is not in the source's form; write {setting.label!r}")
        return setting


ESCALATION_ORDER: tuple[Setting, ...] = tuple(
    Setting(env=env, offload=offload, sp=sp)
    for env, offload, sp in (
        (False, False, 1), (True, False, 1), (False, False, 2), (True, False, 2), (False, False, 4),
        (True, False, 4), (True, True, 1), (True, True, 2), (True, True, 4),
    )
)
"""The order the source document's cells follow (vanilla, Env, each SP degree without and with Env, then Env +
Offload with each): every cell reads as the first setting in it that trained. The document does not say how it
measured; its advice to users is this escalation (start from vanilla; on OOM add Env, then SP, then Offload)."""


class MoE(Frozen):
    """Mixture-of-experts shape: all experts' parameters are held, the active ones computed; with a shared expert
    (Qwen2-MoE's, scaled by a gate of one output; DeepSeek's and GLM-4-MoE's, ungated), a gated MLP every token
    passes through besides; with dense layers (DeepSeek's ``first_k_dense_replace``), a gated MLP of their own
    width in the first layers instead of the experts."""

    experts: Count
    active_experts: Count
    moe_intermediate_size: Count
    shared_expert_intermediate_size: Annotated[int, Strict(), Ge(0)] = 0
    """The shared expert's width (DeepSeek's shared experts together); 0 for none."""
    shared_expert_gate: Flag = True
    """Whether a gate of one output scales the shared expert (Qwen2-MoE's); DeepSeek's, GLM-4-MoE's, ERNIE-4.5's,
    Hunyuan's and Llama 4's have none."""
    dense_layers: Annotated[int, Strict(), Ge(0)] = 0
    """How many layers hold a dense MLP instead of experts (DeepSeek's first ``first_k_dense_replace``; ERNIE-4.5's
    and Llama 4's outside their expert layers)."""
    dense_intermediate_size: Annotated[int, Strict(), Ge(0)] = 0
    """Those dense layers' MLP width (the config's ``intermediate_size``, Llama 4's ``intermediate_size_mlp``); 0
    without dense layers."""
    dense_layer_indices: tuple[int, ...] | None = None
    """Which layers are the dense ones where they are not the first `dense_layers` (a Qwen3-MoE config's
    ``mlp_only_layers`` and ``decoder_sparse_step``, ERNIE-4.5's and Llama 4's layers outside their expert layers),
    as many as `dense_layers`; None: the first (DeepSeek's ``first_k_dense_replace``). A LoRA regex that names layers
    is counted on them (``solver.memory.adapted_shapes``)."""
    computes_every_expert: Flag = False
    """Whether transformers' class passes every token through every expert, the ones the router did not choose with
    a weight of 0 (Llama 4's ``Llama4TextMoe``: ``hidden_states.repeat`` over the experts, then one ``bmm`` through all
    of them), so that its activations are every expert's, not the active ones'; False for a class that routes."""
    peft_converts_experts: Flag = True
    """Whether PEFT (0.21.2, on transformers 5) converts a LoRA config for this model's fused experts
    (``_convert_peft_config_moe``, ``utils/transformers_weight_conversion.py:402`` to ``:481``, for a model type
    transformers' ``_MODEL_TO_CONVERSION_PATTERN`` maps, and Mixtral: ``PEFT_CONVERTED_MODEL_TYPES``), leaving its
    ``target_parameters`` a set that Trinity's ``_save_lora`` cannot write (``lora-moe-config-unsaved``): the
    catalogue's Qwen3-MoE models; False for a config.json of another model type (Qwen2-MoE's, say), whose LoRA config
    PEFT leaves as given."""

    @model_validator(mode="after")
    def _as_many_dense_layers(self) -> MoE:
        if self.dense_layer_indices is not None and len(set(self.dense_layer_indices)) != self.dense_layers:
            raise ValueError(f"dense_layer_indices: expected {self.dense_layers} different layers (dense_layers), "
                             f"got {list(self.dense_layer_indices)}")
        return self

    def layer_indices(self, layers: int, dense: bool = False) -> tuple[int, ...]:
        """The indices of the expert layers of a model of `layers` layers (of its dense layers where `dense`):
        `dense_layer_indices`, else the first `dense_layers`, dense."""
        dense_indices = set(range(self.dense_layers) if self.dense_layer_indices is None else self.dense_layer_indices)
        return tuple(layer for layer in range(layers) if (layer in dense_indices) == dense)

    @property
    def computed_experts(self) -> int:
        """The experts a token's activations pass through in an expert layer: the active ones, or every expert
        where the class computes them all (`computes_every_expert`)."""
        return self.experts if self.computes_every_expert else self.active_experts

    @property
    def routed_width(self) -> int:
        """The feed-forward width a token passes through in an expert layer: its computed experts' (the active
        ones', or every expert's, `computed_experts`) and the shared expert's."""
        return self.computed_experts * self.moe_intermediate_size + self.shared_expert_intermediate_size

    @property
    def dense_width(self) -> int:
        """The feed-forward width of its dense layers; 0 without dense layers."""
        return self.dense_intermediate_size if self.dense_layers else 0

    @property
    def ffn_width(self) -> int:
        """The widest feed-forward width a token passes through in one layer: its computed experts' and the shared
        expert's (`routed_width`), or a dense layer's where that is wider."""
        return max(self.routed_width, self.dense_width)

    def layer_parameters(self, hidden: int) -> int:
        """The parameters of one mixture-of-experts layer's MLP: every expert's gated MLP with its router row, and
        the shared expert's with its gate where it has one."""
        shared = self.shared_expert_intermediate_size
        return (self.experts * (3 * hidden * self.moe_intermediate_size + hidden)
                + 3 * hidden * shared + hidden * (bool(shared) and self.shared_expert_gate))


class MLA(Frozen):
    """Multi-head latent attention (DeepSeek-V2's and V3's): queries through a low-rank latent (``q_lora_rank``;
    0 for a full query projection), keys and values decompressed from one latent (``kv_lora_rank``) into every
    attention head, each key of a part without RoPE and a RoPE part shared by the heads."""

    q_lora_rank: Annotated[int, Strict(), Ge(0)]
    kv_lora_rank: Count
    qk_nope_head_dim: Count
    qk_rope_head_dim: Count
    v_head_dim: Count

    @property
    def qk_head_dim(self) -> int:
        """The width of one head's query and key: the part without RoPE and the RoPE part."""
        return self.qk_nope_head_dim + self.qk_rope_head_dim

    @property
    def latent_width(self) -> int:
        """The widths of the latents a token passes through besides the heads: the query's and the keys' and
        values' with the shared RoPE key."""
        return self.q_lora_rank + self.kv_lora_rank + self.qk_rope_head_dim

    def attention_parameters(self, hidden: int, heads: int) -> int:
        """One layer's attention parameters, as transformers' DeepseekV2Attention holds them: the query projection
        (``q_a_proj``, its norm and ``q_b_proj``, or ``q_proj``), ``kv_a_proj_with_mqa``, its norm, ``kv_b_proj``
        and ``o_proj``."""
        queries = heads * self.qk_head_dim
        query = (hidden * self.q_lora_rank + self.q_lora_rank + self.q_lora_rank * queries if self.q_lora_rank
                 else hidden * queries)
        latent = hidden * (self.kv_lora_rank + self.qk_rope_head_dim) + self.kv_lora_rank
        return (query + latent + self.kv_lora_rank * heads * (self.qk_nope_head_dim + self.v_head_dim)
                + heads * self.v_head_dim * hidden)


Shape = tuple[int | bool | tuple[int, ...] | None, ...]
"""`Model.shape`: what two models must share for one's table cells to stand for the other's."""
SHAPE_TERMS = ("hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim",
               "intermediate_size", "vocab_size", "tie_word_embeddings",
               "num_experts, num_experts_per_tok and moe_intermediate_size", "final_logit_softcapping",
               "q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim and v_head_dim")
"""The terms of `Model.shape`, in its order, as a Hugging Face config.json names them."""
YARN_VALIDATED_FACTOR = 4.0
YARN_VALIDATED_TOKENS = 131072
"""The YaRN Qwen's model cards validate: a factor of 4 over their 32768 positions (original_max_position_embeddings),
131072 tokens; a YaRN factor rft-solver writes is over the model's native context (Qwen3's 40960: 3.2 at 131072)."""


VLLM_UNSCALED_ROPE_TYPES = ("su", "longrope", "llama3")
"""The RoPE scalings whose factor vLLM does not multiply the length it derives from a config.json by
(``_get_and_verify_max_len``, ``vllm/config/model.py:2113`` in vLLM 0.19.1): it takes ``max_position_embeddings``
(Llama 3.1's 131072)."""


@lru_cache(maxsize=256)
def _held_per_active(parameters_b: float, idle_expert_parameters: int) -> Fraction:
    """`Model.held_per_active` of a model holding `parameters_b` billion parameters, `idle_expert_parameters` of them
    idle for a token (cached: each plan's cost asks again, and fractions are slow)."""
    held = Fraction(repr(parameters_b))
    return held / (held - Fraction(idle_expert_parameters, 10**9))


CATALOGUE_ROPE_THETA = 1000000.0
"""The RoPE base of a catalogue model that gives no `Model.vllm_rope_theta_lost`: the Qwen3 dense and Qwen2.5 models'
1000000, which vLLM's class takes as its default (tables/models.yaml's header)."""


class Model(Frozen):
    """A model's shape, from its Hugging Face config.json."""

    name: Text
    aliases: tuple[Text, ...] = ()
    head_dim: Count | None = None
    hidden_size: Count
    num_layers: Count
    num_attention_heads: Count
    num_key_value_heads: Count
    intermediate_size: Count
    vocab_size: Count
    tied_embeddings: Flag
    parameters_b: Billions
    native_context: Count
    rope_scaling: PrintableText | None = None
    """The model's own RoPE scaling (its config's ``rope_scaling.rope_type``, e.g. ``llama3`` for Llama 3.1),
    which its native context already relies on: YaRN must not replace it. None for a plain RoPE, or for
    YaRN itself (rft-solver writes the factor the length needs)."""
    config_yarn_factor: Annotated[float, Ge(1), AllowInfNan(False)] | None = None
    """For a model read from a config.json with a YaRN ``rope_scaling`` that is not its own (`rope_scaling` is None):
    the factor the config gives, which a plan's factor, from the length, replaces; None otherwise."""
    vllm_context: Annotated[float, Ge(1), AllowInfNan(False)] | None = None
    """For a model read from a config.json: the longest ``max_model_len`` vLLM 0.19.1 derives from it, where that
    is not `native_context` (a RoPE scaling's factor times ``max_position_embeddings``, or a YaRN's
    ``original_max_position_embeddings``: a ``linear`` or ``dynamic`` scaling of the model's own, a YaRN; another
    length key in ``max_position_embeddings``' place, `vllm_length_key`); past it vLLM refuses a length unless
    ``VLLM_ALLOW_LONG_MAX_MODEL_LEN`` is set (``_get_and_verify_max_len``, ``vllm/config/model.py:2098-2130`` and
    ``:2155-2181``). None where it is the native context: no scaling, one whose factor vLLM skips (``llama3``,
    ``longrope``, ``su``; a Gemma 3's, `vllm_skips_rope_factor`), and the catalogue's models."""
    vllm_length_key: tuple[PrintableText, Count] | None = None
    """For a model read from a config.json: the length key vLLM 0.19.1 derives its length from before any RoPE
    scaling, and its value, where that is not ``max_position_embeddings``: a smaller ``n_positions``,
    ``max_seq_len``, ``seq_length``, ``max_target_positions``, ``max_sequence_length``, ``max_seq_length`` or
    ``seq_len``, or a ``model_max_length``, which vLLM takes in their place, and takes a length up to besides
    (``derive_max_model_len_and_key``, ``transformers_utils/model_arch_config_convertor.py:251-284``;
    ``vllm/config/model.py:2159-2160``); None otherwise."""
    vllm_skips_rope_factor: Flag = False
    """Whether vLLM applies no RoPE scaling's factor to the longest length it derives for the model, a YaRN that a
    config sets too: a Gemma 3 (its config.json's ``model_type`` holds ``gemma3``; ``vllm/config/model.py:2104-2106``
    in vLLM 0.19.1, its ``max_position_embeddings`` counting its own factor already)."""
    moe: MoE | None = None
    mla: MLA | None = None
    """Its multi-head latent attention (DeepSeek-V2's); None for attention of query, key and value projections.
    With it, ``head_dim`` is a query's and key's head width and every attention head is a KV head."""
    logit_softcapping: Flag = False
    """Whether the model caps its logits (Gemma-2's ``final_logit_softcapping``), which holds more copies of them."""
    qwen_yarn: Flag = True
    """Whether Qwen's model cards' validation of YaRN (`YARN_VALIDATED_FACTOR`, `YARN_VALIDATED_TOKENS`) speaks
    for the model: a Qwen model's (every model of the catalogue that YaRN extends), not one of another
    ``model_type`` read from a config.json, for which rft-solver knows of no validation."""
    model_type: PrintableText | None = None
    """For a model read from a config.json: its ``model_type``, whose module names LoRA's ``target_modules`` is
    matched against and whose linear layers its adapter is counted on (``solver.tables.peft_names``); None for the
    catalogue's models (Qwen3's and Qwen3-MoE's names) and a config.json without one."""
    lora_targets: LoraTargets | None = Field(default=None, exclude=True)
    """The ``target_modules`` regex (and ``exclude_modules``) of the LoRA adapter a Trinity config trains on this model,
    whose matched modules its adapter is counted on (``solver.memory.adapted_shapes``), set for a query read from the
    config (`Catalog.with_lora_targets`, ``solver.query.Query.lora_targets``); None: ``all-linear``'s, every linear
    layer but the output projection. Not the model's shape, nor in its JSON."""
    unchecked_layout: PrintableText | None = None
    """For a model read from a config.json of a kind rft-solver's counts were not checked on
    (`CHECKED_MODEL_TYPES`): its ``model_type`` in words (``model_type exaone``, ``no model_type``), for the
    caution that its layers were counted as attention and a gated MLP each; None otherwise."""
    ulysses_unreached: PrintableText | None = None
    """For a model read from a config.json that runs its checkpoint's own modeling code (`auto_map`): why verl's
    Ulysses patch does not reach its attention, which rules SP above 1 out (`sp_attention_violation`); None
    otherwise (the catalogue's models, transformers' own classes)."""
    uncounted_mtp_layers: Annotated[int, Strict(), Ge(0)] = 0
    """For a model read from a config.json: the multi-token prediction layers it declares
    (``num_nextn_predict_layers``), which its parameters leave out, since transformers does not load them (a note
    says so); 0 otherwise."""
    config_defaulted: tuple[PrintableText, ...] = ()
    """For a model read from a config.json: the terms of its shape (as `SHAPE_TERMS` names them) the file left out (or
    null where that is read as absent) that were taken as its class's default (``num_key_value_heads``: its attention
    heads), so that words naming one's value say it was defaulted (`Catalog.near_tabled_shape`); empty otherwise."""
    untyped_rope_scaling: PrintableText | None = None
    """For a model read from a config.json whose RoPE scaling names no type but gives keys that transformers 5's
    default RoPE leaves unused (``rope_scaling {"factor": 4.0}``): that scaling, its key and JSON, read as no scaling,
    as transformers 5 builds it (a note says so; transformers 4.57 refuses it); None otherwise."""
    router_logits_output: Flag = False
    """For a mixture of experts read from a config.json: whether it sets ``output_router_logits``, with which
    transformers keeps every expert layer's router logits and computes the load-balancing loss through the forward
    (`solver.memory.router_logits_bytes`; not counted: freed before the backward, a note says so); False otherwise."""
    vllm_sliding_window: tuple[Count, Count] | None = None
    """For a model read from a config.json with sliding-window attention that vLLM 0.19.1 honours: the window
    (tokens) and how many of its layers vLLM caches over it, not the whole sequence (Mistral-7B-v0.1's 4096 in all
    32; Gemma-2's in every other layer; `solver.memory.vllm_cached_tokens`); None otherwise (the trainer's memory
    does not depend on it)."""
    vllm_refusal: PrintableText | None = None
    """For a model read from a config.json for a trainer alone (``load_model_config(..., vllm_rollout=False)``): why
    vLLM 0.19.1 refuses to build it (a Qwen2 or Qwen3 config whose layers mix sliding and full attention), which a
    vLLM rollout of it would be refused for, in words; None otherwise."""
    vllm_rope_theta_lost: tuple[Annotated[float, Gt(0), AllowInfNan(False)],
                                Annotated[float, Gt(0), AllowInfNan(False)]] | None = None
    """The model's RoPE base (``rope_theta``) and the one vLLM 0.19.1 rotates it at instead where Trinity hands it a
    RoPE scaling without ``model.rope_theta``, where the two differ (Llama-3.1's 500000 and 10000): Trinity sets the
    scaling as the config's whole ``rope_parameters`` (``hf_overrides``, ``common/models/vllm_model.py:132-138`` in
    0.6.0, ``:89-97`` in 0.5.0, ``:91-99`` in 0.5.2, with vLLM 0.12 or later), which drops the base transformers
    put there, and vLLM's class puts its own default in its place
    (`solver.tables.model_config.VLLM_DEFAULT_ROPE_THETA`); None where they agree (the Qwen3 dense and Qwen2.5
    models, whose vLLM class defaults to their 1000000)."""
    rope_theta: Annotated[float, Gt(0), AllowInfNan(False)] | None = None
    """For a model read from a config.json: its own RoPE base (its ``rope_theta``, ``rotary_emb_base``, else its
    ``rope_parameters``' own, else transformers' default 10000), which a YaRN written for Trinity 0.6 carries
    (`own_rope_theta`); None where its RoPE parameters are per layer type (not judged), and for the catalogue's
    models, whose `own_rope_theta` the table gives."""
    vllm_partial_rotary_lost: tuple[Annotated[float, Gt(0), Le(1)], Annotated[float, Gt(0), Le(1)]] | None = None
    """The share of each head's dimensions the model's RoPE rotates (``partial_rotary_factor``) and the one vLLM 0.19.1
    rotates instead where Trinity hands it a RoPE scaling without one, where the two differ (a Phi-4-mini's 0.75 and
    1.0): the scaling replaces the config's whole ``rope_parameters``, which held the share, as it does the base
    (`vllm_rope_theta_lost`), and vLLM's class takes its own default
    (`solver.tables.model_config.VLLM_DEFAULT_PARTIAL_ROTARY`); None where they agree (every catalogue model rotates
    whole heads)."""
    trainer_partial_rotary_differs: tuple[Annotated[float, Gt(0), Le(1)], Annotated[float, Gt(0), Le(1)]] | None = None
    """For a model read from a config.json that gives ``rotary_dim`` and no ``partial_rotary_factor``, of a type whose
    vLLM 0.19.1 class rotates ``rotary_dim`` (MiniMax-M2's,
    `solver.tables.model_config.VLLM_ROTARY_DIM_MODEL_TYPES`): the share of each head's dimensions transformers'
    trainer rotates (whole heads, 1.0: its class reads no ``rotary_dim``) and the one the rollout's vLLM rotates
    (``rotary_dim`` over ``head_dim``), where they differ, so the rollout's log-probs are not the trainer's; None
    otherwise."""
    tables_of: Text | None = None
    """Another model of the same shape whose table cells stand for this one where no table names it (a base
    model and its post-trained release differ only in their weights, which the memory they need does not
    depend on); None for a model that stands for itself."""

    def module_layers(self, name: str, names: PeftModuleNames) -> tuple[int, ...]:
        """The indices of the layers that hold the layer module `name` (one of `names.adapted`, the model's
        `peft_names_of` a layout): every layer for the attention's and a dense model's; of a mixture of experts, the
        expert layers for the router, the routed and the shared experts, the dense layers for a dense MLP's
        (`MoE.layer_indices`)."""
        parts = name.split(".")
        if self.moe is None or parts[0] == "self_attn":
            return tuple(range(self.num_layers))
        expert = name == names.router or bool(
            {"experts", "shared_expert", "shared_experts", "shared_mlp", "shared_expert_gate"} & set(parts))
        return self.moe.layer_indices(self.num_layers, dense=not expert)

    def adapted_layers(self, names: PeftModuleNames, targets: LoraTargets) -> tuple[int, ...]:
        """The indices of the layers in which the regex `targets` (less its ``exclude_modules``) adapts some module of
        `names` (the model's `peft_names_of` a layout), as ``solver.memory.adapted_shapes`` counts it: `adapted_modules`
        on each layer of each module's (`module_layers`); () where it adapts none, which PEFT refuses."""
        return tuple(sorted({layer for name in names.adapted for layer in self.module_layers(name, names)
                             if adapted_modules(targets.pattern, targets.excluded, names, name, (layer,))}))

    @property
    def peft_names(self) -> PeftModuleNames:
        """The module names LoRA's ``target_modules`` is matched against and its adapter counted on under
        transformers 5 (`peft_names_of` ``fused``)."""
        return self.peft_names_of("fused")

    def peft_names_of(self, experts: HeldExperts) -> PeftModuleNames:
        """The module names LoRA's ``target_modules`` is matched against (`peft_module_names` of `model_type`) where
        transformers holds the routed experts as `experts`: ``fused`` transformers 5's, ``separate`` transformers
        4's (`separate_module_names`, each expert layer's `MoE.experts` of them); the catalogue's models' (no
        `model_type`, no `unchecked_layout`) are Qwen3's or Qwen3-MoE's; a config.json's of a type the table does not
        hold, or of none, are those assumed; a latent attention's query as its ``q_lora_rank`` makes it
        (`latent_query_names`)."""
        if self.model_type is None and self.unchecked_layout is None:
            names = PEFT_NAMES_BY_MODEL_TYPE["qwen3_moe" if self.moe is not None else "qwen3"]
        else:
            names = peft_module_names(self.model_type, self.moe is not None)
        if experts == "separate":
            names = separate_module_names(names, 0 if self.moe is None else self.moe.experts)
        names = dense_mlp_names(names, 0 if self.moe is None else self.moe.dense_layers)
        return names if self.mla is None else latent_query_names(names, self.mla.q_lora_rank > 0)

    @property
    def own_rope_theta(self) -> float | None:
        """The model's own RoPE base: a config.json's (`rope_theta`); for the catalogue's models (no `model_type`, no
        `unchecked_layout`), the first of `vllm_rope_theta_lost` where vLLM's class takes another, else
        `CATALOGUE_ROPE_THETA` (every Qwen model's, vLLM's class default, as tables/models.yaml says); None for a
        config.json whose RoPE parameters are per layer type."""
        if self.rope_theta is not None or self.model_type is not None or self.unchecked_layout is not None:
            return self.rope_theta
        return CATALOGUE_ROPE_THETA if self.vllm_rope_theta_lost is None else self.vllm_rope_theta_lost[0]

    @property
    def rope_advice(self) -> RopeAdvice:
        """What rft-solver advises past the model's native context (`rope_advice` of `model_type` and `rope_scaling`):
        the catalogue's models' (no `model_type`, no `unchecked_layout`: Qwen's, and Llama 3.1's on its own scaling)
        are read as Qwen3's; a config.json's of a type the table does not hold, or of none, takes YaRN, assumed."""
        catalogue = self.model_type is None and self.unchecked_layout is None
        return rope_advice("qwen3" if catalogue else self.model_type, self.rope_scaling)

    @property
    def shape(self) -> Shape:
        """What the memory the model needs depends on: its layers' widths, counts and vocabulary (and, for a
        mixture of experts, its experts, with a shared expert's width after them where it has one, its dense
        layers' count and width where it has them, and a last True where its class computes every expert; the
        capping of its logits; a latent attention's ranks)."""
        experts = None if self.moe is None else (
            (self.moe.experts, self.moe.active_experts, self.moe.moe_intermediate_size)
            + ((self.moe.shared_expert_intermediate_size,) if self.moe.shared_expert_intermediate_size else ())
            + ((self.moe.dense_layers, self.moe.dense_intermediate_size) if self.moe.dense_layers else ())
            + ((True,) if self.moe.computes_every_expert else ()))
        latent = None if self.mla is None else (self.mla.q_lora_rank, self.mla.kv_lora_rank,
                                                self.mla.qk_nope_head_dim, self.mla.qk_rope_head_dim,
                                                self.mla.v_head_dim)
        return (self.hidden_size, self.num_layers, self.num_attention_heads, self.num_key_value_heads,
                self.head_size, self.intermediate_size, self.vocab_size, self.tied_embeddings, experts,
                self.logit_softcapping, latent)

    @property
    def routed_expert_parameters(self) -> int:
        """Parameters of the routed experts' gated MLPs in the mixture-of-experts layers: 0 for a dense model."""
        if self.moe is None:
            return 0
        routed = (self.num_layers - self.moe.dense_layers) * self.moe.experts
        return routed * 3 * self.hidden_size * self.moe.moe_intermediate_size

    @property
    def idle_expert_parameters(self) -> int:
        """Parameters a token does not pass through: 0 for a dense model; for a mixture of experts, the gated MLPs
        of the experts it does not take in its mixture-of-experts layers."""
        if self.moe is None:
            return 0
        return self.routed_expert_parameters // self.moe.experts * (self.moe.experts - self.moe.active_experts)

    @property
    def active_parameters_b(self) -> float:
        """Parameters a token passes through, in billions: all of them for a dense model; for a mixture of experts,
        all but its `idle_expert_parameters` (what model cards call active: 3.3B of Qwen3-30B-A3B's 30.5B;
        DeepSeek's cards leave the input embeddings out besides)."""
        return self.parameters_b - self.idle_expert_parameters / 1e9

    @property
    def held_per_active(self) -> Fraction:
        """The parameters the model holds per parameter a token's compute passes through, exactly (``parameters_b``
        read as the decimal it is written as): 1 for a dense model, and for a mixture of experts whose class computes
        every expert (`MoE.computes_every_expert`: Llama 4 in transformers); 30.5B / 3.32B, about 9.18, for
        Qwen3-30B-A3B."""
        if self.moe is not None and self.moe.computes_every_expert:
            return Fraction(1)
        return _held_per_active(self.parameters_b, self.idle_expert_parameters)

    @model_validator(mode="after")
    def _check_sliding_layers(self) -> Model:
        if self.vllm_sliding_window is not None and self.vllm_sliding_window[1] > self.num_layers:
            raise ValueError(f"vllm_sliding_window: {self.vllm_sliding_window[1]} sliding-window layers of "
                             f"{self.num_layers}: expected at most num_layers")
        return self

    @model_validator(mode="after")
    def _check_active_parameters(self) -> Model:
        held = Fraction(repr(self.parameters_b)) * 10**9
        if self.idle_expert_parameters >= held:
            raise ValueError(f"parameters_b {self.parameters_b} is not more than its idle experts' "
                             f"{self.idle_expert_parameters / 1e9:.4g}B parameters (the gated MLPs of the experts a "
                             "token does not take): give every parameter the model holds, its experts' too")
        return self

    @property
    def head_size(self) -> int:
        """Width of one attention head: ``head_dim``, else hidden size / attention heads."""
        return self.head_dim or self.hidden_size // self.num_attention_heads

    def beyond_native_on_own_scaling(self, max_model_len: int) -> bool:
        """Whether a length beyond the native context rests on the model's own RoPE scaling (no YaRN is
        written for it, and nothing checks that the model handles it)."""
        return max_model_len > self.native_context and self.rope_scaling is not None

    def beyond_native_no_yarn(self, max_model_len: int) -> bool:
        """Whether a length beyond the native context gets no RoPE scaling to reach it: the model's type takes no
        YaRN, and it has no scaling of its own (`rope_advice`: a Phi-3 without its LongRoPE factors)."""
        return max_model_len > self.native_context and self.rope_advice.kind == "none"

    @property
    def vllm_longest_length(self) -> float:
        """The longest ``max_model_len`` vLLM derives from the model's config.json (`vllm_context`, else the native
        context), past which it refuses one unless ``VLLM_ALLOW_LONG_MAX_MODEL_LEN`` is set."""
        return self.native_context if self.vllm_context is None else self.vllm_context

    def vllm_longest_as_written(self, max_model_len: int) -> float:
        """The longest ``max_model_len`` vLLM derives for the model as rft-solver writes a config for
        `max_model_len`, past which it refuses one unless ``VLLM_ALLOW_LONG_MAX_MODEL_LEN`` is set: with the YaRN
        that is written (`yarn_factor`), the native context times its factor, as vLLM multiplies them, or the
        config.json's ``model_max_length`` where that is longer (`vllm_allowed_length`); where the model
        `vllm_skips_rope_factor`, and with no YaRN, `vllm_longest_length`."""
        factor = self.yarn_factor(max_model_len)
        if factor is None or self.vllm_skips_rope_factor:
            return self.vllm_longest_length
        return max(self.native_context * factor, self.vllm_allowed_length)

    def vllm_longest_given(self, rope_type: object, factor: float | None, original: float | None) -> float:
        """The longest ``max_model_len`` vLLM derives for the model, one with a RoPE scaling of its own, where a
        Trinity config gives a ``model.rope_scaling`` of `rope_type`, `factor` and `original` (its
        ``original_max_position_embeddings``): vLLM takes that one alone, in place of the config.json's (Trinity
        0.6.0 passes it as ``hf_overrides={"rope_parameters": ...}``, ``common/models/vllm_model.py:132-138``). Its
        factor (1.0 where None) times the length key's length (`vllm_length_key`, else the native context), a
        YaRN's `original` in its place (the native context where None), as ``_get_and_verify_max_len`` multiplies
        them (``vllm/config/model.py:2098-2130`` in vLLM 0.19.1); no factor for `VLLM_UNSCALED_ROPE_TYPES` or where
        the model `vllm_skips_rope_factor`; `vllm_allowed_length` where that is longer."""
        length: float = self.vllm_length_key[1] if self.vllm_length_key else self.native_context
        if not self.vllm_skips_rope_factor and rope_type not in VLLM_UNSCALED_ROPE_TYPES:
            if rope_type == "yarn":
                length = self.native_context if original is None else original
            length *= 1.0 if factor is None else factor
        return max(length, self.vllm_allowed_length)

    @property
    def vllm_allowed_length(self) -> int:
        """The config.json's ``model_max_length`` (`vllm_length_key`), up to which vLLM takes a ``max_model_len``
        past the length it derives (``vllm/config/model.py:2159-2160`` in vLLM 0.19.1); 0 without one."""
        return self.vllm_length_key[1] if self.vllm_length_key and self.vllm_length_key[0] == "model_max_length" else 0

    def yarn_beyond_validated(self, max_model_len: int) -> bool:
        """Whether the YaRN a length needs goes beyond what is validated: for a Qwen model (`qwen_yarn`), a
        factor above `YARN_VALIDATED_FACTOR` or more than `YARN_VALIDATED_TOKENS`; for another, any YaRN
        (memory fits; quality is untested)."""
        factor = self.yarn_factor(max_model_len)
        return factor is not None and (not self.qwen_yarn or factor > YARN_VALIDATED_FACTOR
                                       or max_model_len > YARN_VALIDATED_TOKENS)

    def yarn_factor(self, max_model_len: int) -> float | None:
        """The YaRN factor ``max_model_len / native_context`` a length beyond the native context needs (the float
        above it where the native context times the quotient falls short of the length, as vLLM multiplies them:
        24000 x 1.152 is 27647.999999999996, which vLLM refuses 27648 past); None within it, and for a model YaRN is
        not advised for (`rope_advice`): one with its own RoPE scaling (nothing is known to extend it), or of a type
        that is advised no YaRN (Phi-3's LongRoPE)."""
        return self.length_factor(max_model_len) if self.rope_advice.kind == "yarn" else None

    def length_factor(self, max_model_len: int) -> float | None:
        """The factor ``max_model_len / native_context`` by which a RoPE scaling covers a length beyond the native
        context (`yarn_factor`, whatever YaRN is advised for), the float above it where vLLM's product falls short;
        None within it."""
        if max_model_len <= self.native_context:
            return None
        factor = max_model_len / self.native_context
        return factor if self.native_context * factor >= max_model_len else nextafter(factor, inf)


class Source(Frozen):
    """Where a table file's numbers come from."""

    document: PrintableText
    section: PrintableText


SOURCE_TAGS = ("<text>", "<document>")
"""The tags of `GpuType.source`'s two forms (text, a `Source` mapping), which pydantic puts in an error's location:
the form is chosen by the value (a mapping, or else text), so that a problem is said of that form alone."""


def _printable_source(source: Source | str) -> Source | str:
    """A GPU type's `source`, if printable where it is text (a `Source`'s fields check themselves)."""
    return require_printable(source) if isinstance(source, str) else source


def source_words(source: Source | str) -> str:
    """Where a GPU type's numbers come from, in words: a source document and its section, or the text given."""
    return f"{source.document}, {source.section}" if isinstance(source, Source) else source


class Row(Frozen):
    """One ``max_model_len`` row of a table: each model's documented setting, None for ``-``."""

    max_model_len: Tokens
    cells: tuple[tuple[str, Setting | None], ...]

    @field_validator("cells", mode="before")
    @classmethod
    def _parse_cells(cls, raw: Any) -> Any:
        if not isinstance(raw, dict):
            raise ValueError("cells must be a mapping of model name to setting")
        parsed = []
        for model, text in raw.items():
            if not isinstance(text, str):
                raise ValueError(f"cell for {model} must be text such as 'Env + SP=2' or '-', got {text!r}")
            try:
                parsed.append((str(model), Setting.parse(text)))
            except ValueError as error:
                raise ValueError(f"{model}: {error}") from None
        return tuple(parsed)

    def setting(self, model: str) -> Setting | None:
        """The setting documented for `model` at this length (None for ``-``)."""
        return dict(self.cells)[model]


class RowProblem(ValueError):
    """A table's problem with one of its rows, which names the row by its index in the table's rows (`row_index`),
    for a refusal to give that row's line rather than the table's."""

    def __init__(self, problem: str, row_index: int) -> None:
        super().__init__(problem)
        self.row_index = row_index


class Table(Frozen):
    """The documented settings for one GPU type at one trainer GPU count."""

    gpus: GpuCount
    section: PrintableText
    source: PrintableText | None = Field(default=None, description=(
        "where the table's numbers come from, where not from its GPU type's source: a cells file's table joined "
        "to a GPU type of the catalogue (`Catalog.with_tables`) names the file's source; None otherwise"))
    models: tuple[Text, ...]
    rows: tuple[Row, ...]

    @model_validator(mode="before")
    @classmethod
    def _canonical_names(cls, raw: Any, info: ValidationInfo) -> Any:
        """Models named by an alias, in another case (``8B``) or by a Hugging Face id (``Qwen/Qwen3-8B``), where the
        context maps names to the catalogue's (``names``), under the catalogue's names."""
        names = (info.context or {}).get("names")
        if not names or not isinstance(raw, dict):
            return raw

        def canonical(name: Any) -> Any:  # a Hugging Face id or a path by its last part, as --model takes it
            if not isinstance(name, str):
                return name
            return names.get(normalise(name)) or names.get(normalise(model_name_from_path(name)), name)

        renamed = dict(raw)
        if isinstance(raw.get("models"), list):
            renamed["models"] = [canonical(model) for model in raw["models"]]
        if isinstance(raw.get("rows"), list):
            renamed["rows"] = []
            for index, row in enumerate(raw["rows"]):
                if isinstance(row, dict) and isinstance(row.get("cells"), dict):
                    cells = {canonical(model): cell for model, cell in row["cells"].items()}
                    if len(cells) < len(row["cells"]):
                        twice = first_repeated([canonical(model) for model in row["cells"]])
                        raise RowProblem(f"row max_model_len={yaml_brief(row.get('max_model_len'))}: two cells for "
                                         f"{twice} (by two of its names)", index)
                    row = {**row, "cells": cells}
                renamed["rows"].append(row)
        return renamed

    @model_validator(mode="after")
    def _check_rows(self, info: ValidationInfo) -> Table:
        context = info.context or {}
        self._check_models(context.get("models"), context.get("names") or {})
        if not self.rows:
            raise ValueError("the table has no rows")
        previous = 0
        for index, row in enumerate(self.rows):
            try:
                self._check_row(row, previous, context.get("heads") or {})
            except ValueError as problem:
                raise RowProblem(str(problem), index) from None
            previous = row.max_model_len
        return self

    def _check_models(self, known: Collection[str] | None, names: Mapping[str, str]) -> None:
        """`ValueError` unless the table names models, each once, each of the `known` ones where they are given
        (with the one an unknown name was likely meant to be, among the `names` of `guessed_name`)."""
        if not self.models:
            raise ValueError("the table names no models")
        unknown = next((model for model in self.models if known is not None and model not in known), None)
        if unknown is not None:
            meant = guessed_name(normalise(unknown), names)
            guess = f" (did you mean {meant}?)" if meant else ""
            raise ValueError(f"unknown model {unknown!r} in the table's models{guess} (known: {', '.join(known or ())};"
                             f" {OWN_MODEL_IN_CELLS})")
        twice = first_repeated(self.models)
        if twice is not None:
            raise ValueError(f"{twice} is named twice in the table's models")

    def _check_row(self, row: Row, previous: int, heads: Mapping[str, tuple[int, int]]) -> None:
        """`ValueError` unless `row` is longer than the one before it (of length `previous`), has a cell for each of
        the table's models and for no other, and each cell's SP divides the table's GPUs (`heads`: each model's
        attention and KV heads where known, for the degrees it would take)."""
        where = f"row max_model_len={row.max_model_len}"
        if row.max_model_len == previous:
            raise ValueError(f"duplicate {where}")
        if row.max_model_len < previous:
            raise ValueError(f"{where} comes after max_model_len={previous}; rows must increase")
        present = [model for model, _ in row.cells]
        stranger = next((model for model in present if model not in self.models), None)
        if stranger is not None:
            raise ValueError(f"{where}: cell for {stranger!r}, which is not among the table's models "
                             f"({', '.join(self.models)}): add it to models, or drop the cell")
        lacking = next((model for model in self.models if model not in present), None)
        if lacking is not None:
            raise ValueError(f"{where}: no cell for {lacking} (a row gives every model of its table a cell: the first "
                             "setting that trained, or '-' where none did; no cell says 'not measured', so give rows "
                             "only at lengths where you measured every model of the table)")
        for model, setting in row.cells:
            if setting is not None and self.gpus % setting.sp:
                raise ValueError(f"{where}, {model}: SP={setting.sp} does not divide the table's "
                                 f"{counted(self.gpus, 'GPU')} (it takes {self._sp_degrees(heads.get(model))})")

    def _sp_degrees(self, heads: tuple[int, int] | None) -> str:
        """The SP degrees that divide the table's GPUs, and that a model of `heads` (attention and KV heads, where
        known) allows, in words (``SP=2, SP=4 or SP=8``; ``no SP`` where none does)."""
        degrees = [f"SP={sp}" for sp in range(2, self.gpus + 1)
                   if self.gpus % sp == 0 and not (heads and sp_rule_violation(heads[0], heads[1], sp))]
        return either(degrees) or "no SP"

    def name_for(self, model: Model) -> str | None:
        """The name this table gives `model`'s cells: its own where the table names it (cells you measured,
        `--cells`), else that of `model.tables_of` (a tabled model of its shape); None where it names neither."""
        return next((name for name in (model.name, model.tables_of) if name in self.models), None)

    def column(self, model: str) -> Table:
        """This table with only `model`'s cells."""
        rows = tuple(row.model_copy(update={"cells": ((model, row.setting(model)),)}) for row in self.rows)
        return self.model_copy(update={"models": (model,), "rows": rows})


def gpu_type_problem(name: object, memory_gb: int | None, memory_mib: int | None) -> str | None:
    """What makes a GPU type's name and memory unusable, in words (None when nothing): a name that is
    blank or not printable (it is written into configs' comments), or GB and MiB that cannot be one GPU's."""
    if not isinstance(name, str) or not name.strip() or not name.isprintable():  # surrogates are not printable
        return f"a GPU type's name is printable text, got {brief(name)}"
    if memory_gb is not None and memory_mib is not None and not (
            DRIVER_SHARE[0] <= memory_mib / (memory_gb * 1024) <= DRIVER_SHARE[1]):
        return (f"{name}: {memory_mib} MiB is not what a GPU sold as {memory_gb} GB reports (from "
                f"{ceil(memory_gb * 1024 * DRIVER_SHARE[0])} to {int(memory_gb * 1024 * DRIVER_SHARE[1])} MiB): "
                "give one of the two")
    return None


TYPED = "typed"
"""The validation context's key that says the data is as a person typed it in a file (a cluster file's, a cells
file's), where a pool's ``host_ram_gb`` is read as ``--host-ram`` reads it (`solver.tables.inputs.Pool`), and a word
of a field's choices in any case (`choice_as_typed`)."""
GPU_NAMED = "gpu_named"
"""The validation context's key, beside `TYPED`, of what names the GPU type text names in the catalogue, else None
(`Catalog.gpu_type_named`): a cluster file's pool takes a whole number YAML read unquoted (``gpu: 4090``) as the name
written where it does (`solver.tables.inputs.Pool`)."""
HOST_RAM_WRITTEN = "host_ram_written"
"""The validation context's key, beside `TYPED`, of a dict that a cluster file's pools fill with the text each wrote
as its ``host_ram_gb`` where it tells more than its GiB (``256MB``), by the pool's name (`solver.tables.inputs.Pool`):
what `Fleet.host_ram_written` holds, the pool keeping only the GiB it reads as."""


def choice_as_typed(value: Any, info: ValidationInfo, choices: tuple[str, ...]) -> Any:
    """In a file (`TYPED` in the context), a word of a field's `choices` in any case, as the command line's option
    takes it (``PCIe``: pcie; ``Resident``: resident); any other value, or one built in Python, as it is."""
    return folded_choice(value, choices) if (info.context or {}).get(TYPED) else value


def _with_interconnect_meant(value: Any, handler: ValidatorFunctionWrapHandler,
                             other_names: dict[str, tuple[str, str]] = INTERCONNECTS_BY_OTHER_NAMES) -> Any:
    """Pydantic's check of an interconnect, its refusal of one by another name (`other_names`) in the words of any
    other (``must be 'nvlink', ... or 'pcie', got 'xgmi'``) ended with the one meant."""
    try:
        return handler(value)
    except ValidationError as error:
        meant = interconnect_meant(value, other_names)
        if not meant:
            raise
        raise ValueError(f"must be {error.errors()[0]['ctx']['expected']}, got {yaml_brief(value)}; {meant}") from None


def _with_node_interconnect_meant(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """`_with_interconnect_meant` for a pool's nodes: ``got 'IB'; did you mean 'infiniband'? (...)``."""
    return _with_interconnect_meant(value, handler, NODE_INTERCONNECTS_BY_OTHER_NAMES)


Interconnect = Annotated[InterconnectName, WrapValidator(_with_interconnect_meant)]
"""How a GPU type's GPUs in one node reach one another: NVLink, AMD's Infinity Fabric links, or PCIe alone (the
cost weighs SP's all-to-all more there: `solver.tables.inputs.Weights.sp_pcie_factor`)."""

NodeInterconnectField = Annotated[NodeInterconnect, WrapValidator(_with_node_interconnect_meant)]
"""How a pool's nodes reach one another, as a cluster file's field: a short name (``IB``) refused names the one
meant."""


OWN_MODEL_IN_CELLS = ("a model of your own: give its config.json with --model-config, which names it by its "
                      "_name_or_path's last part, else by its folder's or file's name")
"""How a cells file names a model the catalogue lacks, where it names one no table knows: a --model-config's
model is among the known ones, under that name, which the cells must use."""


ONE_TABLE_OF_TWO = ("give each table once: write the two as one table, naming both tables' models, each row a cell "
                    "for every model (a length one table lacks: measure it for the other's models, or leave that row "
                    "out)")
"""How two tables for one GPU type and count are combined, in one file (`GpuType` refuses them) or in two
(`read_cells_files`): they are not merged as read, since a table's rows need a cell for each of its models and a table
names one source."""


class GpuType(Frozen):
    """A GPU type with its documented tables, one per trainer GPU count (YAML key ``gpu`` names it)."""

    name: Text = Field(alias="gpu")
    memory_gb: Annotated[Count, Le(MAX_GPU_MEMORY_GB)] = Field(description=(
        "memory as the vendor sells it, in GB (the name's number)"))
    memory_mib: Annotated[Count, Le(MAX_GPU_MEMORY_GB * 1024)] | None = Field(default=None, description=(
        "memory as the driver reports it (nvidia-smi's or amd-smi's total, MiB): what CUDA allocates from"))
    aliases: tuple[Text, ...] = ()
    source: Annotated[
        Annotated[Text, Tag(SOURCE_TAGS[0])] | Annotated[Source, Tag(SOURCE_TAGS[1])],
        Discriminator(lambda value: SOURCE_TAGS[1] if isinstance(value, dict | Source) else SOURCE_TAGS[0]),
        AfterValidator(_printable_source),
    ]
    tables: tuple[Table, ...] = ()
    rocm: Flag = Field(default=False, description=(
        "an AMD GPU, which PyTorch runs through ROCm (its allocator reads PYTORCH_HIP_ALLOC_CONF too); left out, "
        "true where the name says AMD's (MI250X, my-mi300x, Instinct: solver.tables.says_amd)"))
    workstation_host_ram_gib: Annotated[Count, Le(MAX_HOST_RAM_GB)] | None = Field(default=None, description=(
        "for a card sold for desktop workstations, not servers (a GeForce): the host memory such a workstation "
        "commonly has, GiB, for the whole box however many cards it holds; an Offload plan that needs more where no "
        "host memory was given is cautioned. null for a GPU sold in servers, taken to have 128 GiB for each GPU"))
    interconnect: Interconnect | None = Field(default=None, description=(
        "how its GPUs in a node reach one another: nvlink, infinity-fabric (AMD's GPU-to-GPU links), or pcie (no "
        "NVLink: SP's all-to-all crosses PCIe, or host memory, every layer); every GPU type of the catalogue gives "
        "it; one of your own may (a cells file, --gpu-interconnect, a pool's gpu_interconnect): null, not stated, "
        "weighs its SP as on NVLink, and an SP plan is cautioned to state it"))
    interconnect_source: PrintableText | None = Field(default=None, description=(
        "where the interconnect comes from (a vendor datasheet or specification page)"))
    compute_capability: Text | None = Field(default=None, description=(
        "the GPU's compute capability as PyTorch reports it (torch.cuda.get_device_capability: CUDA's, 9.0 for an "
        "H100; HIP's for an AMD GPU, 9.4 for gfx942), which decides which ranks Trinity 0.6 loads the model on "
        "(`solver.tables.model_loading`); every GPU type of the catalogue gives it; null for one of your own: not "
        "known, counted as every rank loading it"))

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, protected_namespaces=())

    _written_name: str | None = PrivateAttr(default=None)

    @property
    def written_name(self) -> str:
        """The name as its cells file wrote it (``gpu: H800-PCIe-80GB``), where the loader took it as this catalogue
        GPU type (`solver.tables.load_cells`); the name itself otherwise."""
        return self._written_name or self.name

    def as_written(self, name: str) -> GpuType:
        """This GPU type, which a cells file named `name` (`written_name`)."""
        copy = self.model_copy()
        copy._written_name = name
        return copy

    @model_validator(mode="before")
    @classmethod
    def _known_memory(cls, raw: Any, info: ValidationInfo) -> Any:
        """A GPU type the context's catalogue has (``memory_gb_of``: its nominal GB by `normalise`d name or alias)
        without ``memory_gb``: with the catalogue's, as a cells file of it may leave it out."""
        known = (info.context or {}).get("memory_gb_of")
        if not known or not isinstance(raw, dict) or "memory_gb" in raw or not isinstance(raw.get("gpu"), str):
            return raw
        memory_gb = next((known[form] for form in gpu_name_forms(raw["gpu"]) if form in known), None)
        return raw if memory_gb is None else {**raw, "memory_gb": memory_gb}

    @model_validator(mode="before")
    @classmethod
    def _amd_by_name(cls, raw: Any) -> Any:
        """A GPU type whose name says AMD's (`says_amd`: ``my-mi300x``) without ``rocm``: an AMD one, whatever its
        interconnect (an Instinct card on PCIe too)."""
        name = raw.get("gpu", raw.get("name")) if isinstance(raw, dict) else None
        if not isinstance(name, str) or "rocm" in raw or not says_amd(name):
            return raw
        return {**raw, "rocm": True}

    @field_validator("interconnect", mode="before")
    @classmethod
    def _link_as_typed(cls, value: Any, info: ValidationInfo) -> Any:
        """In a cells file, an interconnect in any case, as ``--gpu-interconnect`` and a pool's take it
        (`choice_as_typed`)."""
        return choice_as_typed(value, info, INTERCONNECTS)

    @field_validator("compute_capability")
    @classmethod
    def _capability_form(cls, value: str | None) -> str | None:
        """A compute capability as major.minor (``8.0``, ``12.0``)."""
        if value is not None and not re.fullmatch(r"\d{1,2}\.\d", value):
            raise ValueError(f"{value!r} is no compute capability (major.minor, such as 9.0)")
        return value

    @model_validator(mode="after")
    def _check_tables(self) -> GpuType:
        problem = gpu_type_problem(self.name, self.memory_gb, self.memory_mib)
        if problem:
            raise ValueError(problem)
        if (self.interconnect is None) != (self.interconnect_source is None):
            raise ValueError("give interconnect and interconnect_source together (the link, and where it is stated)")
        counts = [table.gpus for table in self.tables]
        repeated = first_repeated(counts)
        if repeated is not None:
            raise ValueError(f"two tables for {repeated} trainer GPUs: {ONE_TABLE_OF_TWO}")
        cells = sum(len(table.rows) * len(table.models) for table in self.tables)
        if cells > MAX_CELLS:
            raise ValueError(f"{cells} cells, more than the {MAX_CELLS} a GPU type's tables may have (each is a "
                             "measured run: give the lengths you train at)")
        return self

    @property
    def memory_gib(self) -> float:
        """The memory the memory model works with, GiB: the driver's figure, or the nominal GB taken as GiB
        where the catalogue does not give one."""
        return self.memory_mib / 1024 if self.memory_mib is not None else float(self.memory_gb)

    def table_source(self, table: Table) -> str:
        """Where `table`'s numbers come from, in words: its own source (a cells file's, joined to a GPU type of the
        catalogue), else this GPU type's."""
        return table.source or source_words(self.source)

    def __eq__(self, other: object) -> bool:
        """By every field, not the name a cells file wrote (`written_name`, a private attribute, which pydantic's
        equality compares too): a catalogue GPU type `as_written` is the same GPU type."""
        if not isinstance(other, GpuType):
            return NotImplemented
        return type(self) is type(other) and self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        """By name and memory only (equal types hash equally; equality compares every field): the planner's caches
        key on GPU types, and hashing every cell of their tables each query was slow."""
        return hash((self.name, self.memory_gb, self.memory_mib, len(self.tables)))


def described_gpu_type(name: str, memory_gb: int | None = None, memory_mib: int | None = None, *,
                       source: str = "your own", interconnect: Interconnect | None = None,
                       interconnect_source: str | None = None) -> GpuType:
    """A GPU type the catalogue lacks, by its name and memory: GB as sold (taken as GiB), nvidia-smi's MiB
    (what the memory model uses), or both; no tables, so its plans are estimates, unless the MiB are a tabled GPU
    type's (`Catalog.tables_for`; `Catalog.with_gpu_types` adds it). `interconnect`: how its GPUs in a node reach
    one another (`INTERCONNECTS`), as `interconnect_source` (default: `source`) states it; None, not stated, weighs
    its SP as on NVLink (an SP plan is cautioned to state it); ``infinity-fabric``, AMD's links, makes it an AMD GPU
    (`GpuType.rocm`: its Env plans are cautioned as ROCm's), as a name that says AMD's does (`says_amd`: ``my-mi300x``,
    on any interconnect). `QueryError` for a name that is blank or not
    printable (it is written into configs' comments), a `source` that is empty or not printable, two figures that
    cannot be one GPU's, an interconnect not of `INTERCONNECTS`, and a value of the wrong type."""
    check_types(("name", name, str), ("memory_gb", memory_gb, int | None), ("memory_mib", memory_mib, int | None),
                ("source", source, str), ("interconnect", interconnect, str | None),
                ("interconnect_source", interconnect_source, str | None))
    if not source or not source.isprintable():  # as GpuType's own check, but one line
        raise QueryError(f"source must be printable text, got {brief(source)}")
    interconnect = folded_choice(interconnect, INTERCONNECTS)  # "PCIe": as --gpu-interconnect takes it
    if interconnect is not None and interconnect not in INTERCONNECTS:
        meant = interconnect_meant(interconnect)
        raise QueryError(f"interconnect must be one of {', '.join(INTERCONNECTS)}, got {brief(interconnect)}"
                         f"{f'; {meant}' if meant else ''}")
    stated_by = None if interconnect is None else interconnect_source or source
    if stated_by is not None and not stated_by.isprintable():
        raise QueryError(f"interconnect_source must be printable text, got {brief(stated_by)}")
    if memory_gb is None and memory_mib is None:
        raise QueryError(f"{brief(name)}: give its memory in GB or MiB")
    unnamed = gpu_type_problem(name, None, None)  # the name first: the messages below show it
    if unnamed:
        raise QueryError(unnamed)
    if memory_gb is not None and not LEAST_GPU_MEMORY_GB <= memory_gb <= MAX_GPU_MEMORY_GB:
        hint = mib_as_gb_hint(memory_gb, f"memory_mib={memory_gb}") if memory_mib is None else ""
        raise QueryError(f"{name.strip()}: its memory must be from {LEAST_GPU_MEMORY_GB} to {MAX_GPU_MEMORY_GB} GB, got "
                         f"{memory_gb} GB{hint}")
    if memory_mib is not None and not LEAST_DRIVER_MIB <= memory_mib <= MAX_GPU_MEMORY_GB * 1024:
        raise QueryError(f"{name.strip()}: its memory must be from {LEAST_DRIVER_MIB} MiB ({LEAST_DRIVER_MIB // 1024} "
                         f"GiB) to {MAX_GPU_MEMORY_GB * 1024} MiB, got {memory_mib} MiB")
    problem = gpu_type_problem(name, memory_gb, memory_mib)
    if problem:
        raise QueryError(problem)
    if memory_gb is None:  # sold as the GB nearest the driver's figure that may be its
        gib = (memory_mib or 0) / 1024
        memory_gb = min(max(round(gib), ceil(gib / DRIVER_SHARE[1])), floor(gib / DRIVER_SHARE[0]))
    return GpuType(gpu=name.strip(), memory_gb=memory_gb, memory_mib=memory_mib, source=source,
                   interconnect=interconnect, interconnect_source=stated_by,
                   rocm=interconnect == "infinity-fabric" or says_amd(name))


class GpuWithoutBf16(Frozen):
    """A GPU type without bf16 arithmetic (compute capability below 8.0), which the catalogue refuses by name."""

    name: Text
    compute_capability: Text
    aliases: tuple[Text, ...] = ()
    source: PrintableText

    @field_validator("compute_capability")
    @classmethod
    def _below_ampere(cls, value: str) -> str:
        """A CUDA compute capability (``7.5``) below 8.0, the first with bf16, as the refusal says."""
        if not re.fullmatch(r"\d\.\d", value) or float(value) >= 8:
            raise ValueError(f"{value!r} is no compute capability below 8.0 (such as 7.5), which bf16 needs")
        return value


class GpusFile(Frozen):
    """The shape of ``gpus.yaml``: the GPU types, and those refused for want of bf16."""

    gpus: tuple[GpuType, ...] = Field(min_length=1)
    without_bf16: tuple[GpuWithoutBf16, ...] = ()

    @model_validator(mode="after")
    def _interconnect_given(self) -> GpusFile:
        """Every GPU type of the catalogue says how its GPUs reach one another (the cost of SP depends on it) and its
        compute capability (which ranks Trinity 0.6 loads the model on depends on it)."""
        missing = next((gpu.name for gpu in self.gpus if gpu.interconnect is None), None)
        if missing is not None:
            raise ValueError(f"{missing}: give its interconnect (nvlink, infinity-fabric or pcie) and "
                             "interconnect_source")
        unknown = next((gpu.name for gpu in self.gpus if gpu.compute_capability is None), None)
        if unknown is not None:
            raise ValueError(f"{unknown}: give its compute_capability (major.minor, such as 9.0)")
        return self


class ModelsFile(Frozen):
    """The shape of ``models.yaml``: the models, each shape standing once for itself (`Model.tables_of`)."""

    source: Text
    models: tuple[Model, ...]

    @model_validator(mode="after")
    def _check_tables_of(self) -> ModelsFile:
        by_name = {model.name: model for model in self.models}
        standing: dict[Shape, str] = {}
        for model in self.models:  # one model of each shape stands for itself, and for the others of its shape
            if model.tables_of is None and standing.setdefault(model.shape, model.name) != model.name:
                raise ValueError(f"{model.name} has the shape of {standing[model.shape]}: give it tables_of: "
                                 f"{standing[model.shape]} (one model's cells stand for both)")
        for model in self.models:
            stands_for = by_name.get(model.tables_of or "")
            if model.tables_of is not None and (stands_for is None or stands_for.tables_of is not None
                                                or stands_for.shape != model.shape):
                raise ValueError(f"{model.name}: tables_of names {model.tables_of!r}, which is not another model of "
                                 "this file of the same shape (one that names no tables_of itself)")
        return self


def cell_text(setting: Setting | None) -> str:
    """A cell's text: the setting's label, or ``-`` (nothing trained)."""
    return setting.label if setting else NO_SETTING


def sp_suits_kv_heads(kv_heads: int, sp: int) -> bool:
    """Whether SP degree `sp` and a model's KV heads divide one another (verl's Ulysses check: each rank holds
    whole KV heads, or a KV head is repeated over whole ranks)."""
    return kv_heads % sp == 0 or sp % kv_heads == 0


def sp_attention_violation(model: Model, sp: int) -> str | None:
    """Why SP degree `sp` would train `model` wrong (`Model.ulysses_unreached`: each GPU would attend only within its
    own slice of the sequence), or None where verl's Ulysses patch reaches its attention, or `sp` is 1."""
    if sp == 1 or model.ulysses_unreached is None:
        return None
    return f"SP={sp} cannot shard its attention: {model.ulysses_unreached}"


PACKED_WITHOUT_MASK = "verl's remove padding packs a micro-batch's sequences into one row with no attention mask"
"""What verl's remove padding (``use_remove_padding``, on in Trinity) does, in words (`PACKED_WITHOUT_MASK_CODE` says
where): transformers' flash-attention, which verl's patch swaps (``monkey_patch.py:544-552`` in 0.9.1), splits such a
row at the sequences' bounds from their position ids; a model's own attention code that the patch does not reach
(`Model.ulysses_unreached`) does not."""

PACKED_WITHOUT_MASK_CODE: dict[TrinityVersion | None, str] = {
    "0.5": ("verl 0.7.0 workers/actor/dp_actor.py:198-205, which Trinity 0.5.0 and 0.5.1 pin; :244-251 in 0.7.1, "
            "0.5.2's"),
    "0.6": ("verl 0.9.1 workers/engine/fsdp/transformer_impl.py:1256-1260; on verl 0.7.1, which Trinity 0.6 also "
            "runs, workers/actor/dp_actor.py:244-251"),
    None: ("verl 0.9.1 workers/engine/fsdp/transformer_impl.py:1256-1260; on verl 0.7, Trinity 0.5's and 0.6's too, "
           "workers/actor/dp_actor.py:198-205 in 0.7.0, :244-251 in 0.7.1"),
}
"""Where the verl line a Trinity release runs packs a micro-batch without an attention mask (`PACKED_WITHOUT_MASK`), by
release (None: none named): Trinity 0.5 pins verl 0.7.0 (0.5.0, 0.5.1) or 0.7.1 (0.5.2), whose actor
(``DataParallelPPOActor._forward_micro_batch``, which Trinity's own subclasses) calls the model with
``attention_mask=None``; Trinity 0.6.0 requires ``verl>=0.7.1`` and runs either line, 0.8 or later through verl's
engine (each wheel's METADATA and code)."""


def remove_padding_violation(model: Model, version: TrinityVersion | None = None) -> str | None:
    """Why remove padding would train `model` wrong (`PACKED_WITHOUT_MASK`, in the code of the verl line the Trinity
    release `version` runs: its own attention code, which verl's patch does not reach, `Model.ulysses_unreached`,
    would attend across the sequences packed in a row, at any SP), or None where verl's patch reaches its
    attention."""
    if model.ulysses_unreached is None:
        return None
    return (f"{PACKED_WITHOUT_MASK} ({PACKED_WITHOUT_MASK_CODE[version]}), and {model.name}'s own attention code would "
            "attend across them")


def sp_rule_violation(attention_heads: int, kv_heads: int, sp: int, degree: str = "SP") -> str | None:
    """Why a model's heads rule out SP degree `sp` (Trinity and verl's checks), or None if they allow it; the same
    rule holds a vLLM engine's tensor-parallel size, named by `degree` (``TP``)."""
    if attention_heads % sp:
        return f"{degree}={sp} does not divide its {counted(attention_heads, 'attention head')}"
    if not sp_suits_kv_heads(kv_heads, sp):
        return f"{degree}={sp} and its {kv_heads} KV heads do not divide one another"
    return None
