"""read_trinity_config: what rft-solver needs from a user's Trinity config (`TrinityConfig`): the model, the GPUs
(the rollout engines' among them), SP, Offload and the length, with notes on what the verdict does not show."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from functools import partial
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import Field, TypeAdapter, ValidationError

from solver.query import (
    ACTOR_ROLLOUT_REF,
    CRITIC_ENGINE_MICRO_BATCH_SIZES,
    CRITIC_MICRO_BATCH_SIZES,
    DEFAULT_TRAIN_BATCH_SOURCE,
    DPO_DOUBLED_WORDS,
    NODE_SIZE_PATH,
    ROLE_MICRO_BATCH_SIZES,
    ROLE_TOKEN_BUDGETS,
    TRAIN_BATCH_KEY,
    TRAIN_BATCH_PATH,
    ConfigProblem,
    ConfigProblemCode,
    TrinityConfig,
    VllmRollout,
    legacy_release_words,
    lora_targets_given,
)
from solver.results import ALLOC_CONF_VARIABLES, ENV_EXPORT, env_when, expandable_segments
from solver.rules import (
    API_OPTIONS,
    TRANSFORMERS_OF,
    OptionNames,
    saved_split,
    saved_split_models,
    saved_split_words,
)
from solver.tables import (
    MAX_GPUS,
    MAX_NODE_GPUS,
    MAX_TRAIN_BATCH,
    NO_CRITIC,
    VLLM_LORA_RANKS,
    CriticChoice,
    CriticStates,
    HeldExperts,
    Model,
    QueryError,
    TrinityVersion,
    and_joined,
    check_types,
    consecutive_runs,
    counted,
    it_or_them,
    looks_like,
    model_name_from_path,
    vllm_lora_rank_refusal,
    vllm_lora_rank_words,
    yaml_brief,
)
from solver.tables.peft_match import (
    ALL_LINEAR,
    EXCLUDED_FORM,
    TargetMatch,
    adapts_all,
    adapts_the_same,
    all_linear,
    peft_regex,
    peft_target_match,
    peft_target_refusal,
)
from solver.tables.peft_names import (
    PEFT_NAMES_BY_MODEL_TYPE,
    SEPARATE_NAMES_BY_MODEL_TYPE,
    LoraTargets,
    PeftModuleNames,
)
from solver.tables.text import config_path_given
from solver.trinity.interpolation import Path, VariablesRead, VariableUnset, dotted
from solver.trinity.keys import (
    AUXILIARY_MODELS,
    CRITIC,
    CRITIC_BUDGETS,
    CRITIC_ENGINE,
    CRITIC_ENGINE_DYNAMIC_KEY,
    CRITIC_MODEL_FSDP,
    DEPRECATED_MICRO_BATCH_SIZES,
    DYNAMIC_BATCH_KEYS,
    ENGINE_KEY_TYPES,
    ENGINE_KEYS_05_LACKS,
    ENTROPY_KEYS,
    IGNORED_SECTION,
    LEGACY_BYPASS_MODE_KEY,
    LORA_CONFIGS,
    LORA_KEYS,
    NO_TRAINER_MODES,
    NOT_OPTIONAL_KEYS,
    NOT_OPTIONAL_SECTIONS,
    OFFLOAD_FLAGS,
    REMOTE_ENGINES,
    REMOVE_PADDING_KEYS,
    ROLE_DYNAMIC_BATCH_KEYS,
    ROLE_SP_KEYS,
    ROLES,
    ROLLOUT_MODEL,
    TRAINER_CONFIG_NULLS,
    TRAINER_CONFIG_SECTIONS,
    TRAINER_SP_KEY,
    TRINITY_06_OFFLOAD,
    ColocateRefused,
    ConfigError,
    check_mode,
    critic_of_another_model,
    keys_05_refuses,
    offload_path,
    ref_forward_runs,
    sp_key_in_effect,
    started_rollout_engine,
    trainer_level_offload,
    trains_critic,
    trains_dpo,
    trinity_06_offload_off,
)
from solver.trinity.reader import (
    ConfigReader,
    actor_update_in_rows,
    check_config_arguments,
    critic_engine_in_rows,
    load_config_mapping,
    lora_key_before_08,
    omegaconf_integer,
    read_or_none,
    recompute_may_run,
    releases_may_be,
    rollout_flag_left_none,
    sequence_counted_roles,
    trainer_strategy,
    turned_off,
    turns_lora_on,
    unset_strategy_words,
)

STAGE_SECTIONS = ("mode", "algorithm", "buffer", "explorer", "trainer")
"""A stage's fields that, set (not null), replace the config's own for that stage (Trinity's ``Config.__iter__``,
``trinity/common/config.py:977`` in 0.6.0, ``:901`` in 0.5.2, which runs only the stages where there are any): its
trainer, the GPUs the explorer leaves it, or the train batch it must divide."""

def _rollout_gpus(reader: ConfigReader, mode: str | None) -> tuple[int, int, int]:
    """GPUs the explorer holds: (all of them, one rollout engine's GPUs, the auxiliary models' GPUs); all =
    rollout engines times their GPUs, plus the auxiliary models'. An engine's GPUs are its tensor-parallel
    size, times its ``data_parallel_size`` and ``pipeline_parallel_size`` where given (Trinity 0.6).

    Trinity's defaults apply to missing keys (``engine_num`` 1, the sizes 1); in ``mode: train`` there is no
    explorer and no rollout GPU. An engine of ``engine_type`` tinker or external runs elsewhere and takes no GPU
    here (Trinity 0.6 sets its ``gpu_per_engine`` to 0).
    """
    if mode == "train":
        return 0, 1, 0

    def engine_gpus(sub: ConfigReader, prefix: tuple[str, ...]) -> int:
        if sub.word((*prefix, "engine_type")) in REMOTE_ENGINES:
            return 0
        return math.prod(sub.count((*prefix, key), 1)
                         for key in ("tensor_parallel_size", "data_parallel_size", "pipeline_parallel_size"))

    rollout = ("explorer", "rollout_model")
    per_engine = engine_gpus(reader, rollout)
    engines = reader.count((*rollout, "engine_num"), 1, minimum=0) * per_engine
    auxiliary_gpus = 0
    listed = AUXILIARY_MODELS
    auxiliary = reader.get(listed) or []
    if not isinstance(auxiliary, list):
        raise ConfigError(f"{reader.where(listed)} must be a list, got {yaml_brief(auxiliary)}")
    for index in range(len(auxiliary)):
        if not isinstance(reader.get((*listed, index)), Mapping):
            raise ConfigError(f"{reader.where((*listed, index))} must be a mapping")
        sub = ConfigReader(reader.data, reader.name, reader.environ, base=(*listed, index))
        auxiliary_gpus += sub.count(("engine_num",), 1, minimum=0) * engine_gpus(sub, ())
    return engines + auxiliary_gpus, per_engine, auxiliary_gpus


FLOAT32_DTYPES = ("float32", "float")
"""vLLM's ``dtype`` values that load the weights in float32 (4 bytes a value; its others take 2)."""


VLLM_DEFAULT_LORA_RANK = 16
"""vLLM 0.19.1's ``max_lora_rank`` where none is given (``LoRAConfig``, ``vllm/config/lora.py:32``): a config that
sets ``explorer.rollout_model.enable_lora`` without ``model.lora_configs`` starts its engines at it (Trinity gives
vLLM ``enable_lora`` as the config has it, ``common/models/vllm_model.py:169`` in 0.6.0)."""


def _read_vllm_rollout(reader: ConfigReader) -> VllmRollout | None:
    """The rollout's vLLM engine as `VllmRollout` (Trinity's defaults where unset: ``tensor_parallel_size`` 1,
    ``dtype`` bfloat16; LoRA as `_rollout_lora` reads it); None where none starts (``mode: train``, an
    ``engine_type`` not vLLM's, ``engine_num`` 0),
    where its weights are split other than by tensor parallelism (``pipeline_parallel_size`` above 1,
    ``enable_expert_parallel``), or where a key it reads cannot be read or is out of vLLM's range (a
    ``gpu_memory_utilization`` not above 0 and at most 1, a LoRA keyword of ``extra_engine_args`` vLLM refuses,
    `RolloutLora.refused`): its memory is then not checked."""
    if _rollout_engine(reader) != "vllm":
        return None
    try:
        size = reader.count((*ROLLOUT_MODEL, "tensor_parallel_size"), 1)
        if reader.count((*ROLLOUT_MODEL, "pipeline_parallel_size"), 1) > 1 or reader.flag(
                (*ROLLOUT_MODEL, "enable_expert_parallel")):
            return None
        utilization = reader.get((*ROLLOUT_MODEL, "gpu_memory_utilization"))
        dtype = reader.word((*ROLLOUT_MODEL, "dtype"))
        length = reader.integer((*ROLLOUT_MODEL, "max_model_len"))
        lora = _rollout_lora(reader)
    except ConfigError:
        return None
    if lora.refused:  # vLLM never starts the engine
        return None
    if utilization is not None and (isinstance(utilization, bool) or not isinstance(utilization, int | float)
                                    or not 0 < utilization <= 1):
        return None
    return VllmRollout(tensor_parallel_size=size, gpu_memory_utilization=utilization,
                       value_bytes=4 if dtype in FLOAT32_DTYPES else 2, max_model_len=length, lora_rank=lora.rank,
                       max_loras=lora.max_loras)


def _rollout_engine(reader: ConfigReader) -> str | None:
    """The rollout engine the config starts (`started_rollout_engine`: ``vllm``, another ``engine_type``, or None),
    its keys as `reader` reads them."""
    return started_rollout_engine(lambda path: read_or_none(reader.word, path),
                                  lambda path: read_or_none(lambda key: reader.count(key, 1, minimum=0), path))


def _vllm_lora_rank_notes(reader: ConfigReader) -> list[ConfigProblem]:
    """The line on a ``max_lora_rank`` the config's vLLM rollout (`_rollout_engine`) is given (`_rollout_lora`) that
    vLLM refuses (`vllm_lora_rank_refusal`: vLLM 0.19.1's ``LoRAConfig`` takes a few ranks alone), which fails the
    rollout as it starts (`ConfigProblemCode.LORA_RANK_VLLM_REFUSED`): the one LoRA config's ``lora_rank``, 0 where
    it is not above 0 beside a ``path`` (Trinity gives vLLM the largest rank above 0, none); none without LoRA, or
    where the rank cannot be read (other lines say why). An ``extra_engine_args.max_lora_rank`` beside
    ``enable_lora`` that vLLM refuses is `_engine_args_twice_notes`' line (`RolloutLora.refused`)."""
    if _rollout_engine(reader) != "vllm":
        return []
    try:
        lora = _rollout_lora(reader)
    except ConfigError:
        return []
    if lora.rank == 0 and lora.key == LORA_CONFIG_RANK_KEY:
        rank = omegaconf_integer(_lora_config_value(reader, "lora_rank"))
        return [] if rank is None else [ConfigProblem(ConfigProblemCode.LORA_RANK_VLLM_REFUSED, (
            f"{lora.key} {rank} beside a path: Trinity turns the rollout's LoRA "
            "on and gives vLLM the largest lora_rank above 0 as its max_lora_rank, here 0, which vLLM 0.19.1 refuses "
            "as the rollout starts: give the adapter's rank (1, 8, 16, 32, 64, 128, 256, 320 or 512), or mode: "
            "train where no vLLM rollout starts"))]
    refusal = vllm_lora_rank_refusal(lora.rank, lora_on=bool(lora.key))
    return [] if refusal is None else [ConfigProblem(ConfigProblemCode.LORA_RANK_VLLM_REFUSED, (
        f"{lora.key} {refusal}: give one of those, or mode: train where no vLLM rollout starts"))]


ENGINE_ARGS = (*ROLLOUT_MODEL, "extra_engine_args")
"""The keyword arguments a config gives the rollout's engine beside Trinity's own: Trinity 0.6.0 passes them to
vLLM's ``AsyncEngineArgs`` after its own keywords and ``lora_kwargs`` (``common/models/vllm_model.py:142`` to
``:178``), so a keyword given twice fails the call (``TypeError``: got multiple values) as the engine starts."""
ENGINE_GIVEN_KEYS = {
    "model": "model.model_path",
    "enforce_eager": "explorer.rollout_model.enforce_eager",
    "worker_cls": "",
    "tensor_parallel_size": "explorer.rollout_model.tensor_parallel_size",
    "pipeline_parallel_size": "explorer.rollout_model.pipeline_parallel_size",
    "data_parallel_size": "explorer.rollout_model.data_parallel_size",
    "enable_expert_parallel": "explorer.rollout_model.enable_expert_parallel",
    "seed": "explorer.rollout_model.seed",
    "distributed_executor_backend": "",
    "max_model_len": "model.max_model_len",
    "enable_prefix_caching": "explorer.rollout_model.enable_prefix_caching",
    "enable_chunked_prefill": "explorer.rollout_model.enable_chunked_prefill",
    "dtype": "explorer.rollout_model.dtype",
    "trust_remote_code": "",
    "gpu_memory_utilization": "explorer.rollout_model.gpu_memory_utilization",
    "override_generation_config": ("model.temperature, model.top_p, model.top_k, model.max_response_tokens and "
                                   "model.repetition_penalty"),
    "enable_return_routed_experts": "algorithm.enable_router_replay",
    "reasoning_parser": "explorer.rollout_model.reasoning_parser",
    "disable_log_stats": "",
    "enable_log_requests": "explorer.rollout_model.enable_log_requests",
    "enable_lora": "explorer.rollout_model.enable_lora, which model.lora_configs turns on",
    "logprobs_mode": "",
    "nnodes": "",
    "node_rank": "",
    "async_scheduling": "",
    "weight_transfer_config": "synchronizer.sync_method",
}
"""The keywords Trinity 0.6.0 always gives vLLM's ``AsyncEngineArgs`` itself (``common/models/vllm_model.py:142`` to
``:172``), each with the config key it takes it from (``set_if_none`` from ``model``'s where the rollout model's is
unset, ``common/config_validator.py:672`` to ``:690``), "" where Trinity fixes it (its worker class, executor
backend, logging, logprobs mode, scheduling, and the engine's nodes, which it derives from the engine's GPUs)."""
ENGINE_LORA_KEYWORDS = ("max_loras", "max_lora_rank")
"""The keywords Trinity gives vLLM in ``lora_kwargs`` where ``model.lora_configs`` turns LoRA on
(``common/config_validator.py:806`` to ``:815``; ``vllm/engine/arg_utils.py:517`` to ``:518`` in 0.19.1), taken from
it (`_lora_configs_loaded`)."""
ENGINE_ROPE_KEYS = (("model", "rope_scaling"), ("model", "rope_theta"), (*ROLLOUT_MODEL, "rope_scaling"),
                    (*ROLLOUT_MODEL, "rope_theta"))
"""The keys from which Trinity gives vLLM ``hf_overrides`` (``vllm_model.py:132`` to ``:139``), where one is set."""


LORA_CONFIG_RANK_KEY = f"{dotted(LORA_CONFIGS)}[0].lora_rank"
"""The one LoRA config's rank, as a line names it."""


class RolloutLora(NamedTuple):
    """vLLM's LoRA in the rollout's engines (`_rollout_lora`): its ``max_lora_rank`` (0 with LoRA off, or where
    Trinity gives 0), its ``max_loras``, the dotted key that gives the rank ("" with LoRA off), and the lines on the
    values of ``extra_engine_args`` that vLLM refuses (`_engine_argument_refusal`: its engine then never starts, and the
    rank and slots are their defaults)."""

    rank: int
    max_loras: int
    key: str
    refused: tuple[ConfigProblem, ...] = ()


def _rollout_lora(reader: ConfigReader) -> RolloutLora:
    """vLLM's LoRA for the rollout's engines: where ``model.lora_configs`` turns LoRA on and Trinity loads it, it sets
    ``explorer.rollout_model.enable_lora`` and gives vLLM ``max_loras`` 1 and the largest ``lora_rank`` above 0
    (`_lora_rank`; 0 where none is) as ``max_lora_rank`` (``common/config_validator.py:780`` to ``:817`` in 0.6.0,
    ``:700`` and ``:726`` to ``:727`` in 0.5.2); else, where the config sets ``enable_lora`` itself, vLLM takes
    ``extra_engine_args``' ``max_lora_rank`` and ``max_loras`` (`ENGINE_ARGS`), `VLLM_DEFAULT_LORA_RANK` and 1 where
    unset (``vllm/config/lora.py:32`` to ``:34``), read as vLLM reads them (`_engine_argument`: one it refuses is
    `RolloutLora.refused`); `ConfigError` where the rank or ``enable_lora`` cannot be read."""
    if _lora_configs_loaded(reader):
        return RolloutLora(max(_lora_rank(reader), 0), 1, LORA_CONFIG_RANK_KEY)
    if not reader.flag((*ROLLOUT_MODEL, "enable_lora")):
        return RolloutLora(0, 1, "")
    arguments = read_or_none(reader.get, ENGINE_ARGS)
    given = arguments if isinstance(arguments, Mapping) else {}
    defaults = {"max_lora_rank": VLLM_DEFAULT_LORA_RANK, "max_loras": 1}
    read = {key: _engine_argument(given, key, default) for key, default in defaults.items()}
    rank, slots = (defaults[key] if value is None else value for key, value in read.items())
    return RolloutLora(rank, min(slots, MAX_LORA_SLOTS), dotted((*ENGINE_ARGS, "max_lora_rank")), tuple(
        _engine_argument_refusal(key, given[key]) for key, value in read.items() if value is None))


def _lora_configs_loaded(reader: ConfigReader) -> bool:
    """Whether ``model.lora_configs`` turns LoRA on (`_lora_key`) and Trinity loads it (`_lora_configs_refusal`): it
    then turns the rollout's LoRA on and gives vLLM ``lora_kwargs`` (`_rollout_lora`)."""
    return _lora_key(reader) == LORA_KEYS[0] and _lora_configs_refusal(reader) is None


MAX_LORA_SLOTS = 1024
"""The most LoRA slots (vLLM's ``max_loras``) an engine's memory is counted for: far past any rollout's (a larger
``max_loras``, which vLLM takes, is counted at this: a lower bound of its memory, as the memory model's figures are)."""

_VLLM_LORA_RANK: Any = Literal[VLLM_LORA_RANKS]
VLLM_LORA_FIELDS: dict[str, TypeAdapter[Any]] = {
    "max_lora_rank": TypeAdapter(_VLLM_LORA_RANK),
    "max_loras": TypeAdapter(Annotated[int, Field(ge=1)]),
}
"""vLLM 0.19.1's types of the two LoRA keywords ``extra_engine_args`` may give it (``LoRAConfig``,
``vllm/config/lora.py:32`` to ``:35``: ``MaxLoRARanks``, a ``Literal`` of `VLLM_LORA_RANKS`, and an int of at least
1), which its engine arguments hand ``LoRAConfig`` as they are where LoRA is on (``engine/arg_utils.py:1845`` to
``:1860``): a pydantic dataclass (``config/utils.py:52``), in pydantic's lax mode, as these read them (vLLM needs
pydantic 2.12 or later)."""


def _engine_argument(arguments: Mapping[Any, Any], key: str, default: int) -> int | None:
    """The LoRA keyword `key` (``max_lora_rank`` or ``max_loras``) of the rollout's ``extra_engine_args``
    (`arguments`, which Trinity types ``Dict[str, Any]`` and passes to vLLM as they are) as vLLM reads it
    (`VLLM_LORA_FIELDS`: ``max_loras`` 4.0 and ``"4"`` are 4, and a ``max_lora_rank`` 16.0 is 16, but ``"16"`` is no
    rank), `default` where unset; None for a value vLLM refuses (`_engine_argument_refusal`). Read whole from the
    section, whose other keys are vLLM's to judge."""
    if key not in arguments:
        return default
    value = arguments[key]
    if isinstance(value, bool) or (isinstance(value, float) and value.is_integer()):
        value = int(value)  # pydantic 2.12's Literal takes 16.0 as 16 and true as 1 (vLLM 0.19.1 needs 2.12 or later);
        # an earlier pydantic, which rft-solver also runs on, refuses both
    try:
        return int(VLLM_LORA_FIELDS[key].validate_python(value))
    except ValidationError:
        return None


def _engine_argument_refusal(key: str, value: Any) -> ConfigProblem:
    """The line on the LoRA keyword `key` of the rollout's ``extra_engine_args`` whose `value` vLLM refuses
    (`_engine_argument`), which fails the rollout as it starts: a rank not of `VLLM_LORA_RANKS`
    (`ConfigProblemCode.LORA_RANK_VLLM_REFUSED`), ``max_loras`` not a whole number of at least 1
    (`ConfigProblemCode.ENGINE_ARGS_LORA_REFUSED`)."""
    given = f"{dotted((*ENGINE_ARGS, key))} {yaml_brief(value)}"
    if key == "max_lora_rank":
        return ConfigProblem(ConfigProblemCode.LORA_RANK_VLLM_REFUSED, (
            f"{vllm_lora_rank_words(given)}: give one of those{' as a number' if isinstance(value, str) else ''}, "
            "or mode: train where no vLLM rollout starts"))
    return ConfigProblem(ConfigProblemCode.ENGINE_ARGS_LORA_REFUSED, (
        f"{given}: vLLM 0.19.1 takes a whole number of at least 1 as max_loras (the LoRA adapters each engine holds "
        "at once) and fails as the rollout starts: give one, or remove it (vLLM's default 1)"))


def _engine_args_twice_notes(reader: ConfigReader, version: TrinityVersion | None) -> list[ConfigProblem]:
    """The line on keywords of the vLLM rollout's ``extra_engine_args`` that Trinity 0.6 gives vLLM itself
    (`_given_twice`): passed beside them, each fails the engine as it starts (``TypeError``: got multiple values for
    keyword argument), so the config is refused (`ConfigProblemCode.ENGINE_ARGS_REPEATED_REFUSED`), naming the config
    key that sets each instead; else, where vLLM takes ``max_lora_rank`` and ``max_loras`` from ``extra_engine_args``
    (`_rollout_lora`), a value of them it refuses (`RolloutLora.refused`). None where no vLLM rollout starts
    (`_rollout_engine`), and with `version` 0.5, which has no ``extra_engine_args`` (another line refuses the key)."""
    arguments = read_or_none(reader.get, ENGINE_ARGS)
    if version == "0.5" or _rollout_engine(reader) != "vllm" or not isinstance(arguments, Mapping):
        return []
    twice = _given_twice(reader, arguments)
    if not twice:
        try:
            return list(_rollout_lora(reader).refused)
        except ConfigError:  # other lines say why
            return []
    keys = and_joined([dotted((*ENGINE_ARGS, key)) for key in twice])
    by_source: dict[str, list[str]] = {}
    for key, source in twice.items():
        by_source.setdefault(source, []).append(key)
    sources = "; ".join(f"{and_joined(keys)} {f'from {source}' if source else 'fixed by Trinity'}"
                        for source, keys in by_source.items())
    named = len(by_source) - ("" in by_source)
    instead = f" (and set the {'key' if named == 1 else 'keys'} named instead)" if named else ""
    return [ConfigProblem(ConfigProblemCode.ENGINE_ARGS_REPEATED_REFUSED, (
        f"{keys}: Trinity gives vLLM {'this keyword' if len(twice) == 1 else 'these keywords'} itself ({sources}) "
        "and passes extra_engine_args beside, so vLLM's engine arguments get a keyword twice and the rollout fails "
        f"as it starts (TypeError): remove {it_or_them(len(twice))} from extra_engine_args{instead}"))]


def _given_twice(reader: ConfigReader, arguments: Mapping[Any, Any]) -> dict[str, str]:
    """The keys of ``extra_engine_args`` `arguments` that Trinity 0.6 gives vLLM too, each with the config key it
    takes it from ("" where Trinity fixes it), in Trinity's order: `ENGINE_GIVEN_KEYS` always, ``hf_overrides`` where
    a RoPE key is set (`ENGINE_ROPE_KEYS`), `ENGINE_LORA_KEYWORDS` where ``model.lora_configs`` turns LoRA on."""
    given = dict(ENGINE_GIVEN_KEYS)
    if any(read_or_none(reader.get, path) is not None for path in ENGINE_ROPE_KEYS):
        given["hf_overrides"] = and_joined([dotted(path) for path in ENGINE_ROPE_KEYS[:2]])
    if _lora_configs_loaded(reader):
        given.update(dict.fromkeys(ENGINE_LORA_KEYWORDS, dotted(LORA_CONFIGS)))
    return {key: source for key, source in given.items() if key in arguments}


def _sglang_lora_notes(reader: ConfigReader) -> list[ConfigProblem]:
    """The line on LoRA with an SGLang rollout (`_rollout_engine`: ``engine_type`` sglang, in a mode that explores,
    ``engine_num`` not 0) where the config turns the rollout's LoRA on (``model.lora_configs``, `_lora_configs_loaded`,
    or ``enable_lora``):
    Trinity 0.6.0 starts SGLang without LoRA (``common/models/sglang_patch/server_patch.py:314`` to ``:343``), and its
    SGLang engine (``common/models/sglang_model.py``) has no ``get_lora_request``, which the model wrapper calls on
    each ``generate`` and ``chat`` with LoRA on (``common/models/model.py:504`` to ``:532``, ``:605`` to ``:614``), so
    the rollout fails there (`ConfigProblemCode.SGLANG_LORA_REFUSED`). None otherwise: no vLLM LoRA slots are counted
    for an engine not vLLM's (`_rollout_engine`), and an ``external`` one serves elsewhere."""
    if _rollout_engine(reader) != "sglang":
        return []
    try:
        if not (_lora_configs_loaded(reader) or reader.flag((*ROLLOUT_MODEL, "enable_lora"))):
            return []
    except ConfigError:  # other lines say why
        return []
    return [ConfigProblem(ConfigProblemCode.SGLANG_LORA_REFUSED, (
        "explorer.rollout_model.engine_type sglang with LoRA: Trinity 0.6 starts SGLang without LoRA and its SGLang "
        "engine cannot give the adapter's request, which each generation with LoRA on asks for, so the rollout "
        "fails at its first: leave engine_type unset (vllm) for LoRA, or drop LoRA"))]


def model_path_needed(names: OptionNames) -> str:
    """What a config without ``model.model_path`` is told: the model comes from it, and a fragment rft-solver wrote
    (as `names` name what writes one) has none."""
    return (": set it to the model, by its Hugging Face name (organisation/model) or a local checkpoint's folder (a "
            f"fragment that {names.fragment_writers} wrote leaves it to your config: check the config you merge the "
            "fragment into)")


def _read_model(reader: ConfigReader, names: OptionNames) -> tuple[str, str]:
    """The config's ``model.model_path`` (stripped) and the model name it ends in (`ConfigError` without one, naming
    what writes a fragment as `names` do)."""
    model_path = reader.get(("model", "model_path"))
    if model_path is None or (isinstance(model_path, str) and not model_path.strip()):
        raise ConfigError(f"{reader.name}: missing model.model_path"
                          f"{looks_like(reader.data, None, names.file_readers) or model_path_needed(names)}")
    if not isinstance(model_path, str):
        raise ConfigError(f"{reader.where(('model', 'model_path'))} must be a path, got {yaml_brief(model_path)}")
    model = model_name_from_path(model_path)
    if not model:
        raise ConfigError(f"{reader.where(('model', 'model_path'))}: no model name in {model_path!r}")
    return model_path.strip(), model


def _read_mode(reader: ConfigReader, names: OptionNames) -> str | None:
    """The config's ``mode`` (None where unset); `ConfigError` for one that runs no trainer rft-solver plans (for
    ``colocate``, how to plan its trainer, as `names` name the option: `colocate_words`), or that Trinity lacks
    (`check_mode`)."""
    name, mode = reader.name, reader.word(("mode",))
    if mode in NO_TRAINER_MODES:
        raise ConfigError(f"{name}: mode {mode} runs no trainer, so there is nothing to plan (rft-solver "
                          "plans the trainer of mode both or train)")
    if mode == "colocate":
        raise ColocateRefused(f"{name}: ", "; it plans the trainer of mode both or train", names)
    check_mode(mode, name)
    return mode


def _check_one_trainer(reader: ConfigReader) -> None:
    """`ConfigError` for ``stages`` of which one sets a section of `STAGE_SECTIONS`: Trinity runs that stage with
    its own in place of the config's, which the verdict, the plan and ``--write`` are for."""
    stages = reader.get(("stages",))
    if stages is None:
        return
    if not isinstance(stages, list):
        raise ConfigError(f"{reader.where(('stages',))} must be a list of stages, got {yaml_brief(stages)}")
    for index in range(len(stages)):
        if not isinstance(reader.get(("stages", index)), Mapping):
            raise ConfigError(f"{reader.where(('stages', index))} must be a mapping")
        replaced = [section for section in STAGE_SECTIONS if reader.get(("stages", index, section)) is not None]
        if replaced:
            raise ConfigError(
                f"{reader.where(('stages', index))} sets {and_joined(replaced)}: Trinity runs that stage with "
                f"{it_or_them(len(replaced))} in place of the config's own, whole, so not the trainer rft-solver "
                "plans from the config (or not on its GPUs, or at its batch); plan each stage from a config of its "
                "own, with that stage's sections in place of the config's")


def _check_verl_trainer(reader: ConfigReader) -> None:
    """`ConfigError` unless verl's trainer trains the config (not the Tinker service, nor another trainer type)."""
    trainer_type = (reader.text(("trainer", "trainer_type")) or "verl").strip()
    if reader.flag(("model", "tinker", "enable")) or trainer_type == "tinker":
        raise ConfigError(f"{reader.name}: the Tinker service trains this config (model.tinker.enable or "
                          "trainer.trainer_type tinker), so there is no trainer GPU to plan (rft-solver plans verl's "
                          "FSDP trainer)")
    if trainer_type != "verl":
        raise ConfigError(f"{reader.where(('trainer', 'trainer_type'))} must be verl (or tinker), as Trinity takes it, "
                          f"got {yaml_brief(trainer_type)}")


def _check_local_rollout(reader: ConfigReader, mode: str | None) -> None:
    """`ConfigError` for an external rollout model outside ``mode: train``: it is for mode bench, whose trainer
    Trinity gives no GPU."""
    if mode != "train" and (reader.word(("explorer", "rollout_model", "engine_type")) == "external"
                            or reader.flag(("model", "external_model", "enable"))):
        raise ConfigError(f"{reader.name}: an external rollout model (explorer.rollout_model.engine_type external, or "
                          "model.external_model.enable) is for mode bench: Trinity then gives the trainer no GPU, so "
                          "there is nothing to plan")


def _read_trainer_gpus(reader: ConfigReader, rollout: int, names: OptionNames) -> tuple[int | None, int | None]:
    """``cluster.gpu_per_node`` and the cluster's GPUs left to the trainer after the `rollout` GPUs (both None
    without ``gpu_per_node``); `ConfigError` for a node above `MAX_NODE_GPUS` (one host) or a cluster above
    `MAX_GPUS`, or one that leaves the trainer none (of one GPU: with Trinity's mode colocate besides, as `names` name
    its option, `colocate_words`)."""
    gpu_per_node = reader.integer(NODE_SIZE_PATH, maximum=MAX_NODE_GPUS)
    if gpu_per_node is None:
        return None, None
    total = reader.count(("cluster", "node_num"), 1) * gpu_per_node
    if total > MAX_GPUS:
        raise ConfigError(f"{reader.name}: cluster.node_num x cluster.gpu_per_node = {total} GPUs; at most {MAX_GPUS}")
    trainer_gpus = total - rollout
    if trainer_gpus < 1:
        refused = (f"{reader.name}: cluster.node_num x cluster.gpu_per_node = {counted(total, 'GPU')}: no trainer GPU "
                   f"is left after {counted(rollout, 'rollout GPU')} (explorer.rollout_model.engine_num x each "
                   "engine's GPUs): the trainer takes GPUs of its own beside the rollout's, so ")
        if total > 1:
            raise ConfigError(f"{refused}give the rollout at most {total - 1} of the {total}")
        raise ColocateRefused(f"{refused}the cluster needs 2 GPUs at least, one for each; or, with one, ", "", names)
    return gpu_per_node, trainer_gpus


class ClusterGpus(NamedTuple):
    """The GPUs a Trinity config's cluster gives (`cluster_trainer_gpus`): the trainer's (`read_trinity_config`'s
    ``trainer_gpus``) and a node's (``cluster.gpu_per_node``), both None without ``cluster.gpu_per_node``, and the
    rollout's."""

    trainer_gpus: int | None
    node_gpus: int | None
    rollout_gpus: int


def cluster_trainer_gpus(data: Any, name: str, environ: Mapping[str, str], names: OptionNames) -> ClusterGpus:
    """The GPUs a Trinity config's cluster gives the trainer, a node and the rollout, read from the config as nested
    mappings (`data`, named `name`, its ``${oc.env:...}`` from `environ`); `ConfigError` as `read_trinity_config`
    raises it for these keys."""
    reader = ConfigReader(data, name, VariablesRead(environ))
    rollout = _rollout_gpus(reader, _read_mode(reader, names))[0]
    node_gpus, trainer_gpus = _read_trainer_gpus(reader, rollout, names)
    return ClusterGpus(trainer_gpus=trainer_gpus, node_gpus=node_gpus, rollout_gpus=rollout)


def _actor_note_flags(reader: ConfigReader) -> dict[str, bool]:
    """The actor's offload flags in its ``fsdp_config`` that can be read for the notes (``actor.fsdp_config.<flag>``:
    on or off); every role's flags are checked (`_flag_for_notes`)."""
    read = {f"{role}.fsdp_config.{flag}": _flag_for_notes(reader, offload_path(role, flag)) for role in ROLES
            for flag in OFFLOAD_FLAGS}
    return {flag: on for flag, on in read.items() if on is not None and flag.startswith("actor.")}


def _policies_disagree_note(trainer_policy: bool, actor_policy: bool, names: OptionNames) -> str:
    """The note on Trinity 0.6's ``trainer.offload_policy`` and the actor's own set differently (naming the patch as
    `names` do)."""
    return (f"trainer.offload_policy is {str(trainer_policy).lower()} but "
            f"{'.'.join(offload_path('actor', 'offload_policy'))} is {str(actor_policy).lower()}: Trinity 0.6 takes "
            "the trainer's with verl before 0.8 and the actor's with verl 0.8 or later, so the verdict takes Offload "
            f"as off; set both alike{names.write_does()}")


def _manual_offload_note(manual: list[str], where: str) -> str:
    """The note on offload flags `manual` (under `where`) that are on without ``offload_policy``."""
    return (f"{' and '.join(manual)} without offload_policy (under {where}): verl loads those states back onto the "
            "GPUs for each step, so the verdict takes Offload as off; the tables' Offload is FSDP2's "
            "CPUOffloadPolicy, which offload_policy: true turns on")


def _offload_without_fsdp2_note(strategy: str, given: str | None, version: TrinityVersion | None) -> str:
    """The note on offload flags set for a trainer whose `strategy` (the config's `given` one, or the default of the
    release `version`, `unset_strategy_words`) is not fsdp2."""
    # (the reference model's param_offload is FSDP1's too, and saves memory whatever the strategy)
    named = f"is {strategy}, not fsdp2" if given else f"is not set ({unset_strategy_words(version)})"
    return (f"the offload flags are set, but trainer.trainer_strategy {named}: the tables' Offload is FSDP2's "
            "CPU offload, so the verdict takes Offload as off")


def _trainer_policy_on(reader: ConfigReader) -> bool:
    """Whether the config has Trinity 0.6's offload flags under ``trainer`` (`trainer_level_offload`) with its
    ``offload_policy`` on: an actor ``offload_policy`` written null then turns Offload off (`_read_offload`)."""
    return trainer_level_offload(reader.data) and bool(read_or_none(reader.flag, ("trainer", "offload_policy")))


def _engine_section_notes(reader: ConfigReader, version: TrinityVersion | None,
                          names: OptionNames) -> list[ConfigProblem]:
    """A note on the roles' offload flags under their ``engine`` (`IGNORED_SECTION`), which Trinity never reads
    (none where there are none, and with `version` 0.5, which refuses the key: `KEYS_05_LACKS`, said by the checks),
    naming the patch as `names` do."""
    unread = [f"{role}.{IGNORED_SECTION}.{flag}" for role in ROLES for flag in OFFLOAD_FLAGS
              if read_or_none(reader.get, offload_path(role, flag, IGNORED_SECTION)) is not None]
    if not unread or version == "0.5":
        return []
    return [ConfigProblem(ConfigProblemCode.OFFLOAD_FLAGS_UNDER_ENGINE, (
        f"{', '.join(unread)} (under {'.'.join(ACTOR_ROLLOUT_REF)}): Trinity reads a role's offload flags "
        "from its fsdp_config, never its engine (Trinity 0.5 refuses the key, 0.6 drops it, and verl 0.8 "
        "or later replaces it with fsdp_config), so the verdict leaves them out; set them under "
        f"fsdp_config{names.write_does()}"))]


def _read_offload(reader: ConfigReader, given: str | None, strategy: str, version: TrinityVersion | None,
                  names: OptionNames) -> tuple[bool, list[ConfigProblem]]:
    """Whether the trainer runs with the tables' Offload (`strategy` fsdp2 with ``offload_policy`` on), and the notes
    on the offload flags (`given`: the config's ``trainer.trainer_strategy``). Where the releases read the actor's and
    Trinity 0.6's ``trainer`` policy apart, Offload is off unless both are on: an actor's written null counts as off,
    as verl 0.8 reads it (its `ConfigProblemCode.TYPED_NULL` line says so, `_trainer_config_null_notes`)."""
    # Under FSDP2, verl offloads the actor to host memory through CPUOffloadPolicy when offload_policy is on (and
    # then ignores param_offload and optimizer_offload); the reference model gets it whatever the flags say.
    flags = _actor_note_flags(reader)
    where = ".".join(ACTOR_ROLLOUT_REF)
    # The verdict's flag is read as strictly as Trinity reads it (the notes' may be left unread).
    actor_policy = offload_path("actor", "offload_policy")
    policy, actor_sets_policy = reader.flag(actor_policy), reader.get(actor_policy) is not None
    notes: list[ConfigProblem] = []
    disagree = False
    # Trinity 0.6's flags under trainer itself: verl before 0.8 takes these, 0.8 and later the actor's own.
    if trainer_level_offload(reader.data) and version != "0.5":
        flags = {flag: reader.flag(("trainer", flag)) for flag in OFFLOAD_FLAGS}
        where = "trainer, where Trinity 0.6 keeps them"
        # The actor's written null: verl 0.8 or later reads it as false, so it disagrees (said by its typed-null line).
        null_policy = _written_null(reader, actor_policy)
        merged = bool(policy) if null_policy else policy if actor_sets_policy else flags["offload_policy"]
        disagree = merged != flags["offload_policy"] and strategy == "fsdp2"
        if disagree and not null_policy:
            notes.append(ConfigProblem(ConfigProblemCode.OFFLOAD_POLICIES_DISAGREE,
                                       _policies_disagree_note(flags["offload_policy"], policy, names)))
        policy = merged and flags["offload_policy"]
    elif policy and strategy == "fsdp2" and version == "0.6":  # verl before 0.8 reads the trainer's: unset, off
        notes.append(ConfigProblem(ConfigProblemCode.TRAINER_OFFLOAD_FLAGS_UNSET,
                                   trinity_06_offload_off(names.write_does())))
        policy, disagree = False, True
    elif policy and strategy == "fsdp2" and version is None:
        notes.append(ConfigProblem(ConfigProblemCode.TRAINER_OFFLOAD_FLAGS_UNSET, TRINITY_06_OFFLOAD))
    manual = [flag for flag, on in flags.items() if on and not flag.endswith("offload_policy")]
    if strategy == "fsdp2" and manual and not policy and not disagree:
        notes.append(ConfigProblem(ConfigProblemCode.OFFLOAD_WITHOUT_POLICY, _manual_offload_note(manual, where)))
    if any(flags.values()) and strategy != "fsdp2":
        notes.append(ConfigProblem(ConfigProblemCode.OFFLOAD_NEEDS_FSDP2,
                                   _offload_without_fsdp2_note(strategy, given, version)))
    return strategy == "fsdp2" and policy, notes + _engine_section_notes(reader, version, names)


NO_ENTROPY_ALGORITHMS = ("sft", "cpt", "asymre", "raft", "sppo", "on_policy_distill", "jsd")
"""Trinity's algorithm types whose default ``entropy_loss_fn`` is ``none`` (``algorithm/algorithm.py``, 0.5.0 and
0.6.0): every other type's, ``ppo`` (the default type) among them, puts an entropy term in the loss."""
CHUNKED_ENTROPY_KEYS = (((*ACTOR_ROLLOUT_REF, "actor"), "verl before 0.8"),
                        ((*ACTOR_ROLLOUT_REF, "actor", "fsdp_config"), "verl 0.8 or later"))
"""Where verl reads the actor's ``entropy_from_logits_with_chunking`` and ``entropy_checkpointing``, and on which verl:
its dp_actor reads the actor's own; its FSDP engine (verl 0.8 or later, which Trinity 0.5 never runs) the actor's
``fsdp_config`` (``FSDPEngineConfig``), not the actor's, which Trinity 0.6 sets to false there."""


def _entropy_loss(reader: ConfigReader) -> str | None:
    """Where the config's loss has an entropy term (Trinity computes the entropy with gradients whenever its
    ``entropy_loss_fn`` is not ``none``, whatever its coefficient), what puts it there, in words; else None."""
    given = reader.word(("algorithm", "entropy_loss_fn"))
    if given is not None:
        return None if given == "none" else f"algorithm.entropy_loss_fn {given}"
    algorithm = reader.word(("algorithm", "algorithm_type"))
    if algorithm in NO_ENTROPY_ALGORITHMS:
        return None
    return (f"the entropy loss of algorithm_type {algorithm}, on by default" if algorithm else
            "the entropy loss of PPO, Trinity's algorithm where algorithm.algorithm_type is unset, on by default")


def _chunked_entropy_notes(reader: ConfigReader, version: TrinityVersion | None) -> list[ConfigProblem]:
    """A note where the actor computes its entropy in chunks (``entropy_from_logits_with_chunking`` on, without
    ``entropy_checkpointing``, where the release reads them: `CHUNKED_ENTROPY_KEYS`) for a loss with an entropy term:
    each chunk's float32 logits and softmax stay for the backward, so the logits peak holds more than the tables
    measured, not less (none where it does not)."""
    entropy = _entropy_loss(reader)
    places = CHUNKED_ENTROPY_KEYS[:1] if version == "0.5" else CHUNKED_ENTROPY_KEYS
    chunking, checkpointing = ENTROPY_KEYS
    chunked = [(section, verl) for section, verl in places if _flag_for_notes(reader, (*section, chunking))
               and not _flag_for_notes(reader, (*section, checkpointing))]
    if entropy is None or not chunked:
        return []
    return [ConfigProblem(ConfigProblemCode.CHUNKED_ENTROPY, (
        f"{'.'.join(section)}.{chunking} is true (read by {verl}) with {entropy}: verl keeps each chunk's float32 "
        "logits and softmax for the backward, about 8 bytes per logit more at the logits peak than the tables "
        f"measured, so each GPU holds more than the verdict assumes; set it to false, or {checkpointing} to true "
        "beside it")) for section, verl in chunked]


def _strategy_notes(strategy: str) -> list[ConfigProblem]:
    """A note on a trainer `strategy` other than FSDP's, which the tables and the memory model are (none for FSDP)."""
    if strategy in ("fsdp", "fsdp2"):
        return []
    return [ConfigProblem(ConfigProblemCode.NOT_FSDP_STRATEGY, (
        f"trainer.trainer_strategy is {strategy}: the tables and the memory model are "
        "FSDP's (fsdp, or fsdp2 for Offload), so the verdict and the plans are for an FSDP trainer"))]


def _read_sequence_parallel(reader: ConfigReader, version: TrinityVersion | None, skipped: RefSkip | None,
                            names: OptionNames) -> tuple[
        int, int | None, int | None, int | None, list[ConfigProblem]]:
    """The SP the trainer runs at (`sp_key_in_effect`: ``trainer.ulysses_sequence_parallel_size``, default 1, or with
    Trinity 0.5 the actor's own), the trainer's own where that is another number (`TrinityConfig.trainer_sp`: Trinity
    0.5 fills the unset token budget at it), else None, the ref's where a release on verl before 0.8 sizes its
    micro-batches at another (`TrinityConfig.ref_sp`) or, where the ref runs no forward (`skipped`,
    `_ref_step_skipped`'s), its SP where LoRA runs the actor's log-prob pass in its stead and the ref's SP is above
    the actor's (`TrinityConfig.lora_ref_sp`), each only where the actor runs at that SP, else None, and a note on
    each other SP key the config sets to another number."""
    in_effect = sp_key_in_effect(reader.data, version)
    # Trinity sets a trainer SP below 1 to 1, with a warning (its value-out-of-range line says so), and 0.5.2 an
    # actor's own too (0.5.0 and 0.5.1 keep it and fail on it: the checks' role-sp-below-one lines say so)
    trainer_sp = max(1, reader.count(TRAINER_SP_KEY, 1, minimum=-MAX_GPUS))
    given_sp = trainer_sp if in_effect == TRAINER_SP_KEY else reader.count(in_effect, 1, minimum=-MAX_GPUS)
    sp = max(1, given_sp)
    notes = []
    if in_effect != TRAINER_SP_KEY and trainer_sp != sp:  # only with Trinity 0.5 (`sp_key_in_effect`)
        notes.append(ConfigProblem(ConfigProblemCode.ROLE_SP_DIFFERS, (
            f"{'.'.join(in_effect)} {given_sp} is not trainer.ulysses_sequence_parallel_size {trainer_sp}: Trinity 0.5 "
            "runs the trainer at the actor's (it takes the trainer's only where a role sets none), so the verdict is "
            f"at SP {sp}: set them alike{names.write_does()}")))
    ref_sp = read_or_none(reader.integer, ROLE_SP_KEYS[1]) or trainer_sp
    ungrouped = version == "0.5" and ref_sp > sp == 1
    sp_named = "the actor's" if version == "0.5" else "trainer.ulysses_sequence_parallel_size"
    for path, budget_path in zip(ROLE_SP_KEYS, ROLE_TOKEN_BUDGETS, strict=False):
        role_sp = read_or_none(reader.integer, path)
        if path == in_effect or role_sp is None or role_sp == sp or (ungrouped and path == ROLE_SP_KEYS[1]):
            continue
        if skipped is not None and path == ROLE_SP_KEYS[1]:
            runs = f", but {skipped.why}, so its forward never runs"
            if skipped.from_08 is not None:
                runs += (f" there; Trinity 0.6 on verl 0.8 or later {skipped.from_08} (no LoRA) and "
                         f"runs the ref at SP {sp}")
        elif version == "0.5":
            runs = f": Trinity 0.5 runs that role's forward at SP {role_sp} within the actor's SP groups"
        else:
            runs = f": {_role_sp_runs(reader, version, path, role_sp, budget_path, sp)}"
        notes.append(ConfigProblem(ConfigProblemCode.ROLE_SP_DIFFERS, (
            f"{'.'.join(path)} {role_sp} is not {sp_named} {sp}{runs}; the verdict is at SP {sp}: set them alike"
            f"{names.write_does()}")))
    if ungrouped:
        notes.append(_ungrouped_ref_problem(reader, ref_sp, trainer_sp, skipped, names))
    # every release on verl before 0.8 sizes the ref's micro-batches at its own SP within the actor's SP groups,
    # which it builds from the actor's SP: the verdict's, but with 0.6 where the actor sets another of its own
    actor_at_sp = (read_or_none(reader.integer, ROLE_SP_KEYS[0]) or sp) == sp
    sized = ref_sp != sp and skipped is None and actor_at_sp
    # every release on verl before 0.8 runs LoRA's pass in the ref's stead at the actor's SP with the ref's budget
    by_lora = ref_sp > sp and skipped is not None and skipped.lora and actor_at_sp
    return sp, trainer_sp if trainer_sp != sp else None, ref_sp if sized else None, ref_sp if by_lora else None, notes


def _role_sp_runs(reader: ConfigReader, version: TrinityVersion | None, path: tuple[str, ...], role_sp: int,
                  budget_path: tuple[str, ...], sp: int) -> str:
    """How Trinity (`version`: 0.6, or none given; 0.5 has words of its own) runs the role SP `role_sp` at `path`, in
    words, for a role whose forward runs (a ref that runs none has words of its own, `_ref_step_skipped`): with 0.6's
    ``verl_legacy`` (verl 0.7.1) at it (the ref's forward within the actor's SP groups, which the worker builds from
    the actor's SP, ``verl_legacy/fsdp_workers.py:158-180``, as 0.5.2's), except the ref's above an actor SP of 1
    (the actor's own, else the trainer's `sp`), whose forward fails with remove padding on (`_ref_removes_padding`:
    Trinity 0.6.0's
    ``verl_legacy/fsdp_workers.py:162`` builds no SP group, and its ``dp_actor.py`` slices and gathers as verl's);
    Trinity 0.6 on verl 0.8 or later at `sp`; the legacy path named as `legacy_release_words` names it."""
    actor_sp = read_or_none(reader.integer, ROLE_SP_KEYS[0]) or sp
    removes_padding = _ref_removes_padding(reader, version)
    legacy = legacy_release_words(version)
    if path == ROLE_SP_KEYS[1] and role_sp > actor_sp == 1 and removes_padding:
        return (f"Trinity 0.6 on verl 0.8 or later runs the ref at SP {sp}, but {legacy} builds no "
                f"SP groups at the actor's SP 1, so the ref's forward at SP {role_sp} gathers none of its split "
                "micro-batches back and fails at its first step (remove padding on)")
    budget = "its own" if read_or_none(reader.integer, budget_path) is not None else "the trainer's"
    runs = f"that role at SP {role_sp} (with {budget} token budget)"
    if path == ROLE_SP_KEYS[1] and role_sp != actor_sp:
        runs = f"that role's forward at SP {role_sp} (with {budget} token budget)" + (
            " within the actor's SP groups" if removes_padding else
            ", splitting none of its micro-batches with remove padding off")
    return f"{legacy} runs {runs}, Trinity 0.6 on verl 0.8 or later at SP {sp}"


def _ref_removes_padding(reader: ConfigReader, version: TrinityVersion | None) -> bool:
    """Whether the ref's forward runs with remove padding on: for `version` 0.5 by verl's key, which its worker reads
    (``fsdp_workers.py:632`` in 0.5.2), for 0.6 by the trainer's, which it copies to verl's
    (``verl_legacy/verl_config.py:707``), with none given where neither key is off."""
    keys = {"0.5": REMOVE_PADDING_KEYS[1:], "0.6": REMOVE_PADDING_KEYS[:1]}.get(version or "", REMOVE_PADDING_KEYS)
    return not any(turned_off(read_or_none(reader.get, key)) for key in keys)


def _no_ref_algorithm(reader: ConfigReader, version: TrinityVersion | None) -> str | None:
    """Why Trinity (`version`) computes no ref log-probs at all, in words: an algorithm that uses no ref model; None
    where it computes them each step."""
    algorithm = read_or_none(reader.word, ("algorithm", "algorithm_type"))
    return None if ref_forward_runs(algorithm, version) else f"algorithm_type {algorithm} uses no ref model"


def builds_reference_model(reader: ConfigReader, version: TrinityVersion | None) -> bool:
    """Whether Trinity (`version`) builds a reference model of its own, whose pinned shards a node's host memory holds
    (`solver.memory.host_memory_gib`). Trinity 0.5 is counted as 0.5.0 and 0.5.1 (verl 0.7.0) build one, whatever
    the algorithm (verl's ``need_reference_policy``: the trainer's role map always holds ``RefPolicy``,
    ``verl_trainer.py:233`` in 0.5.0), unless LoRA is on by any of `LORA_KEYS` (``ref_in_actor``: the actor without
    its adapter stands in); 0.5.2's verl 0.7.1 builds one only where a KL term reads it
    (`solver.tables.REFERENCE_ALWAYS_RELEASES`), which this counts as its patches' larger need. Trinity 0.6
    on verl 0.8 or later builds one only for an algorithm that uses one (``use_reference``,
    `ref_forward_runs`, whatever its KL terms) and without ``model.lora_configs``, the one LoRA key it reads
    (``trainer/verl/trainer.py:252`` to ``:258`` in 0.6.0), as `version` 0.6 takes it (its fp32 shards are verl
    0.8's, `solver.memory.REFERENCE_BYTES`; on verl before 0.8, 0.6 takes 0.5's path). Without `version`, where
    either release builds one (conservative)."""
    lora = _lora_key(reader)
    on_05 = lora is None
    if version == "0.5":
        return on_05
    on_06 = _no_ref_algorithm(reader, "0.6") is None and lora != LORA_KEYS[0]
    return on_06 or version is None and on_05


class RefSkip(NamedTuple):
    """Why Trinity runs no forward of a ref model of its own (`_ref_step_skipped`): in words (`why`), whether LoRA is
    why (`lora`: the actor's log-prob pass, at the actor's SP, gives the ref's log-probs with the ref's budget), and,
    where only verl before 0.8 turns LoRA on, what Trinity 0.6 on verl 0.8 or later does instead (`from_08`,
    `_lora_from_08`), else None."""

    why: str
    lora: bool
    from_08: str | None = None


def _ref_step_skipped(reader: ConfigReader, no_ref: str | None, version: TrinityVersion | None) -> RefSkip | None:
    """Why Trinity (`version`) runs no forward of a ref model of its own: `no_ref` (`_no_ref_algorithm`), else LoRA,
    whose ref log-probs the actor without its adapter gives; None where it runs one each step. Trinity 0.6 on verl 0.8
    or later turns LoRA on from ``model.lora_configs`` alone (``trainer/verl/config.py:241`` to ``:248`` in 0.6.0): it
    ignores the user's ``lora_rank`` and ``lora_adapter_path`` (``FROZEN_KEYS``, ``:702``, ``:706``), which verl before
    0.8 reads (0.6.0's ``verl_legacy/fsdp_workers.py:181`` to ``:184``; 0.5's worker, which runs no other verl)."""
    if no_ref is not None:
        return RefSkip(no_ref, lora=False)
    lora = _lora_key(reader)
    if lora is None:
        return None
    key = ".".join(lora)
    from_08 = None if version == "0.5" else _lora_from_08(reader, lora)
    if from_08 is None:
        return RefSkip(f"with LoRA ({key}) the actor, at its own SP, gives the ref's log-probs", lora=True)
    return RefSkip(f"with verl before 0.8 LoRA ({key}) has the actor, at its own SP, give the ref's log-probs",
                   lora=True, from_08=from_08)


def _lora_from_08(reader: ConfigReader, lora: tuple[str, ...]) -> str | None:
    """What Trinity 0.6 on verl 0.8 or later does, in words, with the key of `LORA_KEYS` that turns LoRA on with verl
    before 0.8 (`lora`): it ignores ``lora_rank`` and ``lora_adapter_path`` (``FROZEN_KEYS``), and loads no adapter of
    ``model.lora_configs`` at a rank not above 0 (`_lora_config_path_from_08`); None where it turns LoRA on too."""
    return _lora_config_path_from_08(reader) if lora == LORA_KEYS[0] else f"ignores {lora[-1]}"


def _lora_key(reader: ConfigReader) -> tuple[str, ...] | None:
    """The first of `LORA_KEYS` that turns LoRA on (`lora_key_before_08`); None without LoRA."""
    return lora_key_before_08(lambda path: read_or_none(reader.get, path))


def _check_lora_variables(reader: ConfigReader) -> None:
    """`ConfigError` where a key that decides the LoRA adapter the verdict and the plans count (`LORA_KEYS`, and beside
    the one that turns LoRA on its rank, adapter path, ``target_modules`` and ``exclude_modules``) reads an
    environment variable that is unset and has no default: read as none (as a key read for a note alone is), the
    config would count full fine-tuning and a reference model, or another adapter, unsaid, where Trinity fails to
    load it unless ``trinity run`` starts with the variable set (OmegaConf resolves each value then)."""
    def read(path: tuple[str | int, ...]) -> None:
        try:
            reader.get(path)
        except VariableUnset as unset:
            raise ConfigError(f"{unset.unset}, and it decides the LoRA adapter the verdict and the plans count: "
                              f"{unset.fix}") from None
        except ConfigError:  # said, or refused, where the key is read
            pass

    for path in LORA_KEYS:
        read(path)
    lora = _lora_key(reader)
    if lora is None:
        return
    for key in (*(("lora_rank", "path") if lora == LORA_KEYS[0] else ()), "target_modules", "exclude_modules"):
        read(_lora_targets_key(lora, key))


def written_lora(data: Mapping[str, Any], name: str, environ: Mapping[str, str]) -> tuple[str, int] | None:
    """The dotted key that turns LoRA on in the config `data` (the file `name`, read in `environ`; `_lora_key`) and the
    rank it writes (`_lora_rank`: 0 for an adapter path, or a rank that is no whole number); None without LoRA."""
    reader = ConfigReader(data, name, environ)
    lora = _lora_key(reader)
    return None if lora is None else (".".join(lora), _lora_rank(reader))


def lora_configs_refused(data: Mapping[str, Any], name: str, environ: Mapping[str, str]) -> bool:
    """Whether the reading of the config `data` (the file `name`, read in `environ`) refuses its ``model.lora_configs``
    as Trinity does (`_lora_configs_refusal`), whatever the model."""
    return _lora_configs_refusal(ConfigReader(data, name, environ)) is not None


def config_counted_lora_rank(data: Mapping[str, Any], name: str, environ: Mapping[str, str],
                             version: TrinityVersion | None) -> int:
    """The LoRA rank whose states the verdict on the config `data` (the file `name`, read in `environ`) counts
    without ``--lora-rank`` (`counted_lora_rank`): 0 where it counts full fine-tuning."""
    return counted_lora_rank(ConfigReader(data, name, environ), version)


def config_counted_lora_targets(data: Mapping[str, Any], name: str, environ: Mapping[str, str],
                                version: TrinityVersion | None) -> LoraTargets | None:
    """The targets whose modules the verdict on the config `data` (the file `name`, read in `environ`) counts its LoRA
    adapter on without ``--lora-targets`` (`counted_lora_targets`): None for all-linear's, and for no adapter."""
    return counted_lora_targets(ConfigReader(data, name, environ), version)


class NewAdapter(NamedTuple):
    """The LoRA adapter Trinity makes anew from a config as written (`new_adapter`)."""

    section: tuple[str | int, ...]
    """Where its ``target_modules`` and ``exclude_modules`` are: the one LoRA config, or verl before 0.8's
    ``actor_rollout_ref.model``."""
    targets: str | None
    """Its ``target_modules`` regex; None for ``all-linear``."""
    excluded: str | None
    """Its ``exclude_modules`` regex; None where unset."""


def new_adapter(value: Callable[[tuple[str | int, ...]], Any], version: TrinityVersion | None) -> NewAdapter | None:
    """The LoRA adapter Trinity makes anew from the config whose values `value` reads as Trinity does (None where unset
    or unreadable), whatever the model: from the one LoRA config of ``model.lora_configs`` with no ``path`` and a
    ``lora_rank`` unset or a whole number above 0; else, with `version` 0.5 (verl before 0.8, which every 0.5 release
    runs on; 0.6 on verl 0.8 ignores the key), from ``actor_rollout_ref.model.lora_rank`` above 0 without
    ``lora_adapter_path``; its ``target_modules`` a number or a boolean in either as the text Trinity's typed configs
    make of it (`_lora_targets`). None where it makes none (an adapter loaded, a rank not above 0, LoRA off), and
    where the config reading refuses or leaves alone what it would make from: a ``target_modules`` that is a list or a
    mapping, an ``exclude_modules`` that is not a string (`_lora_configs_refusal`, `_targets_uncounted`)."""
    configs = value(LORA_KEYS[0])
    if configs is not None:  # Trinity's LoRA configs fill verl's keys (`LORA_KEYS`), or it refuses them
        section: tuple[str | int, ...] = (*LORA_KEYS[0], 0)
        if (not isinstance(configs, list) or len(configs) != 1 or not isinstance(configs[0], Mapping)
                or value((*section, "path")) is not None):
            return None
        rank = value((*section, "lora_rank"))
        if rank is not None and not turns_lora_on(LORA_KEYS[1], rank):
            return None
    elif version == "0.5" and turns_lora_on(LORA_KEYS[1], value(LORA_KEYS[1])) and value(LORA_KEYS[2]) is None:
        section = LORA_KEYS[1][:-1]
    else:
        return None
    targets, excluded = value((*section, "target_modules")), value((*section, "exclude_modules"))
    if isinstance(targets, list | Mapping) or excluded is not None and not isinstance(excluded, str):
        return None
    return NewAdapter(section, None if all_linear(targets) else str(targets), excluded)


def written_adapter(data: Mapping[str, Any], name: str, environ: Mapping[str, str],
                    version: TrinityVersion | None) -> NewAdapter | None:
    """`new_adapter` of the config `data` (the file `name`, read in `environ`) under Trinity `version`."""
    reader = ConfigReader(data, name, environ)
    return new_adapter(lambda path: read_or_none(reader.get, path), version)


def counted_adapter(config: TrinityConfig) -> NewAdapter | None:
    """The LoRA adapter whose states the verdict and the plans of `config` count (`TrinityConfig.lora_rank` above 0):
    the one it makes anew (`new_adapter`), on its `TrinityConfig.lora_targets`; None where they count full
    fine-tuning."""
    if not config.lora_rank:
        return None
    targets = config.lora_targets
    section = LORA_KEYS[1][:-1] if config.lora_key == dotted(LORA_KEYS[1]) else (*LORA_KEYS[0], 0)
    return NewAdapter(section, None if targets is None or all_linear(targets.pattern) else targets.pattern,
                      None if targets is None else targets.excluded)


def lora_on_every_release(reader: ConfigReader, version: TrinityVersion | None) -> str | None:
    """The dotted key that turns LoRA on (`_lora_key`) with every release the config may run on (`version` 0.5, or
    where Trinity 0.6 on verl 0.8 or later turns it on too: `_lora_from_08`), so that none builds a reference model
    (`TrinityConfig.lora_key`); None otherwise."""
    lora = _lora_key(reader)
    if lora is None or version != "0.5" and _lora_from_08(reader, lora) is not None:
        return None
    return ".".join(lora)


def counted_lora_rank(reader: ConfigReader, version: TrinityVersion | None) -> int:
    """The rank of the LoRA run whose states the verdict and the plans count (`solver.memory.lora_states_bytes`;
    `TrinityConfig.lora_rank`): the one LoRA config's ``lora_rank`` (`LORA_CONFIG_RANK` where unset), or with verl
    before 0.8 ``actor_rollout_ref.model.lora_rank``, where the trainer makes a new adapter of that rank on Trinity's
    default ``target_modules`` (``all-linear``) with every release the config may run on; else 0, full fine-tuning
    (conservative, `_lora_uncounted`)."""
    return 0 if _lora_uncounted(reader, version) is not None else _lora_rank(reader)


def counted_lora_targets(reader: ConfigReader, version: TrinityVersion | None) -> LoraTargets | None:
    """The ``target_modules`` regex and ``exclude_modules`` of the new LoRA adapter whose states the verdict and the
    plans count (`counted_lora_rank` above 0; `TrinityConfig.lora_targets`), on whose modules they count it where the
    model is known; None for ``all-linear`` without ``exclude_modules`` (every linear layer but the output
    projection), and where no adapter is counted."""
    lora = _lora_key(reader)
    if lora is None or not counted_lora_rank(reader, version):
        return None
    targets, excluded = _lora_targets(reader, lora), _lora_excluded(reader, lora)
    if all_linear(targets) and excluded is None:
        return None
    return LoraTargets(ALL_LINEAR if all_linear(targets) else targets, excluded)


def _lora_rank(reader: ConfigReader) -> int:
    """The rank of the LoRA key that turns LoRA on (`_lora_key`), where it is a rank's: the first LoRA config's (the
    one Trinity's trainer reads, ``trainer/verl/config.py:242`` in 0.6.0, where two are refused), or verl before
    0.8's ``lora_rank``; 0 otherwise (an adapter path, no LoRA, or no whole number)."""
    lora = _lora_key(reader)
    if lora == LORA_KEYS[0]:
        configs = read_or_none(reader.get, lora)
        first = isinstance(configs, list) and isinstance(configs[0], Mapping)  # a list that turns LoRA on: not empty
        rank = read_or_none(reader.get, (*lora, 0, "lora_rank")) if first else None
        return omegaconf_integer(LORA_CONFIG_RANK if rank is None else rank) or 0
    return (omegaconf_integer(read_or_none(reader.get, LORA_KEYS[1])) or 0) if lora == LORA_KEYS[1] else 0


def _lora_uncounted(reader: ConfigReader, version: TrinityVersion | None) -> str | None:
    """Why the states counted for a config with LoRA (`_lora_key`) are full fine-tuning's, in words: Trinity refuses
    its LoRA configs (`_lora_configs_refusal`: two of them, an ``exclude_modules`` that is a list or no regex, an empty
    list or no list beside verl's ``lora_rank``, which Trinity then never reads, for it loads no config, ...;
    on the model's names, `solver.trinity.checks.config_counted_on` judges it), a release it may run on trains every
    parameter (`_lora_from_08`), it loads an adapter (whose rank is the adapter's own file's), its ``target_modules``
    are not Trinity's default ``all-linear`` (other modules may take more, the output projection's or the
    embeddings'), or the rank is no whole number (the one LoRA config's said so first, not as a rank not above 0:
    `_refused_rank`); None where LoRA's are counted, or without LoRA."""
    lora = _lora_key(reader)
    if lora is None:
        return None
    if _lora_configs_refusal(reader) is not None:  # beside another LoRA key too: Trinity loads no config then
        return f"Trinity refuses {dotted(LORA_KEYS[0])} ({ConfigProblemCode.LORA_CONFIGS_REFUSED.value} says why)"
    if lora == LORA_KEYS[0] and (rank := _config_rank_refused(reader)) is not None:
        return f"its lora_rank {rank} is not a whole number"  # which every release refuses: its own line says so
    from_08 = None if version == "0.5" else _lora_from_08(reader, lora)
    if from_08 is not None:
        return f"Trinity 0.6 on verl 0.8 or later {from_08} and trains every parameter"
    if _loads_adapter(reader, lora):
        return "it loads an adapter, whose rank is the adapter's own"
    targets = _lora_targets(reader, lora)
    uncounted = _targets_uncounted(targets, _lora_excluded(reader, lora))
    if uncounted is not None:
        return f"its target_modules {_shown_targets(targets or ALL_LINEAR)} {uncounted}"
    return None if _lora_rank(reader) > 0 else "its rank is no whole number above 0"


def _loads_adapter(reader: ConfigReader, lora: tuple[str, ...]) -> bool:
    """Whether the LoRA key `lora` that turns LoRA on (`_lora_key`) loads an adapter (``lora_adapter_path``, or the
    one LoRA config's ``path``), whose target modules are its own file's, rather than making a new one."""
    return (lora == LORA_KEYS[2] or _lora_config_path(reader) is not None
            or bool(read_or_none(reader.get, LORA_KEYS[2])))


def _lora_targets(reader: ConfigReader, lora: tuple[str, ...] | None) -> Any:
    """The ``target_modules`` of the LoRA key `lora` that turns LoRA on (`_lora_key`): the one LoRA config's, or verl
    before 0.8's ``actor_rollout_ref.model.target_modules``, a number or a boolean in either as the text Trinity's
    typed configs make of it (``LoRAConfig.target_modules: str``; Trinity 0.5's ``ActorModel.target_modules:
    Optional[str]``, ``trainer/verl/verl_config.py:52`` in 0.5.2, ``common/verl_config.py:45`` in 0.5.0, which
    ``trainer.trainer_config`` is merged into; OmegaConf 2.3.0's ``StringNode``: ``str(value)``,
    ``omegaconf/nodes.py:186`` to ``:195``), which PEFT matches whole like any regex (``'12'`` matches no module);
    None where unset."""
    targets = read_or_none(reader.get, _lora_targets_key(lora, "target_modules"))
    return str(targets) if isinstance(targets, int | float) else targets


def _lora_targets_key(lora: tuple[str, ...] | None, key: str) -> tuple[str | int, ...]:
    """The path of `key` (``target_modules`` or ``exclude_modules``) beside the LoRA key `lora` that turns LoRA on:
    the one LoRA config's, or verl before 0.8's under ``actor_rollout_ref.model``."""
    return (*LORA_KEYS[0], 0, key) if lora == LORA_KEYS[0] else (*ACTOR_ROLLOUT_REF, "model", key)


def _lora_excluded(reader: ConfigReader, lora: tuple[str, ...] | None) -> str | None:
    """The ``exclude_modules`` regex beside the LoRA key `lora` (`_lora_targets_key`), which Trinity hands PEFT with
    ``target_modules`` (``LoRAConfig.exclude_modules: Optional[str]``, ``common/config.py:114`` in 0.6.0, ``:113`` in
    0.5.2; ``utils/lora_utils.py:36`` for the dummy adapter, ``trainer/verl/config.py:246`` and
    ``trainer/verl_legacy/verl_config.py:629`` for the trainer's); None where unset or not a string (a list or a
    mapping, which `_lora_configs_refusal` refuses)."""
    excluded = read_or_none(reader.get, _lora_targets_key(lora, "exclude_modules"))
    if not isinstance(excluded, str):
        return None
    try:
        peft_regex(excluded)
    except re.error:  # refused as such (`_targets_refusal`)
        return None
    return excluded


def _shown_targets(targets: Any) -> str:
    """``target_modules`` as a line shows it: a regex in quotes as written (its backslashes single), else
    `yaml_brief`."""
    return f"'{targets}'" if isinstance(targets, str) else yaml_brief(targets)


def _targets_uncounted(targets: Any, excluded: str | None) -> str | None:
    """Why LoRA on ``target_modules`` `targets` less ``exclude_modules`` `excluded` is counted as full fine-tuning, in
    words that follow the key: no regex (a list), one PEFT cannot take or that matches no module
    (`peft_target_match` on the first type's names that PEFT takes it on, `_peft_match_taken`; where none does, what
    every type's say where they agree, ``model\\.norm``'s module outside the layers, else that none takes it, as the
    config read alone knows no model: the checks, which know it, say why), or one that matches a module outside the
    layers that ``all-linear`` leaves out (the embeddings, the output projection); None for ``all-linear``, and a
    regex that matches linear layers of the decoder layers alone (all seven, or fewer, on which alone the adapter is
    counted: `counted_lora_targets`)."""
    if not isinstance(targets, str) and not all_linear(targets):
        return "are not one regular expression, which rft-solver matches"
    try:
        taken = _peft_match_taken(targets or ALL_LINEAR, excluded)
    except re.error:
        return "is no regular expression"
    if taken is not None:
        return _match_uncounted(taken[1])
    said = {_match_uncounted(peft_target_match(targets or ALL_LINEAR, excluded, names)) for names in _EVERY_TYPES_NAMES}
    if len(said) == 1 and None not in said:
        return said.pop()
    return ("is taken on no model type's module names rft-solver holds: peft fails on it with each, and the checks "
            "on the model's names say why")


def _match_uncounted(match: TargetMatch) -> str | None:
    """Why an adapter on what a ``target_modules`` regex matches (`match`) is counted as full fine-tuning, in words
    that follow the key (`_targets_uncounted`): it matches a module ``all-linear`` leaves out, or none; None where it
    matches linear layers of the decoder layers alone."""
    if match.beyond_all_linear:
        beyond = and_joined(match.beyond_all_linear)
        return f"matches {beyond}, which all-linear leaves out and rft-solver does not count"
    return None if match.linears else "matches no module"


def _lora_counted_as_full_notes(reader: ConfigReader, version: TrinityVersion | None,
                                held: Mapping[HeldExperts, PeftModuleNames] | None = None,
                                model: Model | None = None) -> list[ConfigProblem]:
    """The line on LoRA (the first of `LORA_KEYS` that turns it on, `turns_lora_on`), which trains an adapter alone
    (`ConfigProblemCode.LORA_COUNTED_AS_FULL`): what the verdict and the plans count, LoRA's states at its rank
    (`counted_lora_rank`), or where they cannot (`_lora_uncounted`), full fine-tuning's, conservative for it by about 12
    of the 16 bytes per parameter of each GPU's shard without Offload; what a regex adapts of them said on the model's
    module names where known (`held`: each layout's the release may hold its experts in, of `model`, whose layers it
    names where it adapts fewer than all: `_fewer_targets`), in place of "every linear layer but the output projection"
    (``lm_head``), which an adapter on ``o_proj`` would seem to contradict. None without LoRA, and where Trinity does
    not load the LoRA configs (`_lora_configs_notes` refuses them), beside another LoRA key too (an empty
    ``model.lora_configs`` beside verl's ``lora_rank``)."""
    lora = _lora_key(reader)
    if lora is None or _lora_configs_refusal(reader) is not None:
        return []
    key = ".".join(lora)
    uncounted = _lora_uncounted(reader, version)
    if uncounted is None:
        fewer = _fewer_targets(reader, lora, held, model)
        where = "" if fewer else " on every linear layer but the output projection"
        return [ConfigProblem(ConfigProblemCode.LORA_COUNTED_AS_FULL, (
            f"with LoRA ({key}) the trainer holds gradients and optimizer states for the adapter alone: the verdict "
            f"and the plans count LoRA rank {_lora_rank(reader)}'s states (the frozen base's fp32 weights and the "
            f"adapter's{where}, unless --lora-rank gives another{fewer}), and the tables, which measured full "
            "fine-tuning, vouch for it by inference and refute nothing"))]
    from_08 = None if version == "0.5" or _config_rank_refused(reader) is not None else _lora_from_08(reader, lora)
    when = f"with LoRA ({key})" if from_08 is None else f"with verl before 0.8 LoRA ({key})"
    return [ConfigProblem(ConfigProblemCode.LORA_COUNTED_AS_FULL, (
        f"{when} the trainer holds gradients and optimizer states for the adapter alone, but the verdict and the "
        f"plans count full fine-tuning's, as the tables measured ({uncounted}): a LoRA run needs less memory than "
        "shown (conservative: without Offload, LoRA leaves each GPU's shard about 4 of the 16 bytes per parameter "
        "counted; solve --lora-rank RANK counts a new adapter's)"))]


def _saved_targets_notes(reader: ConfigReader, version: TrinityVersion | None) -> list[ConfigProblem]:
    """The caution on a ``target_modules`` regex from which the trainer makes a new adapter with every release the
    config may run on (`lora_on_every_release`, not `_loads_adapter`), and which PEFT takes
    (`ConfigProblemCode.LORA_TARGETS_SAVED_SPLIT`): Trinity saves it into each checkpoint as its single characters
    (``solver.rules.saved_split``), which PEFT cannot load back (`saved_split_words`). That is any model's with
    transformers 4 (`version` 0.5) and a dense model's with transformers 5; on a mixture of experts whose config PEFT
    converts, the save fails whole instead (``lora-moe-config-unsaved``), which the line says (`saved_split_models`
    for no model), as this reading of the config does not know the model's kind. None otherwise."""
    lora = _lora_key(reader)
    if (lora is None or lora_on_every_release(reader, version) is None or _loads_adapter(reader, lora)
            or lora == LORA_KEYS[0] and _lora_configs_refusal(reader) is not None):
        return []
    targets = _lora_targets(reader, lora)
    models = saved_split_models(None, version, "either")
    if not saved_split(targets) or models is None:
        return []
    return [ConfigProblem(ConfigProblemCode.LORA_TARGETS_SAVED_SPLIT, saved_split_words(
        f"{dotted(_lora_targets_key(lora, 'target_modules'))} {_shown_targets(targets)}", targets, models,
        "give all-linear"))]


def _fewer_targets(reader: ConfigReader, lora: tuple[str, ...],
                   held: Mapping[HeldExperts, PeftModuleNames] | None, model: Model | None = None) -> str:
    """The clause on a ``target_modules`` regex that adapts fewer linear layers than ``all-linear``
    (`peft_target_match`) on a model of the module names `held` (each layout's the release may hold its routed experts
    in), whose adapter the verdict and the plans count on those alone (``solver.memory.adapted_shapes`` of
    `TrinityConfig.lora_targets`; on the larger of the two layouts of 0.5.0 and 0.5.2, whose names it says each:
    `_adapted_words`, with the layers of `model` it adapts them in), naming the type whose names it assumes
    (`PeftModuleNames.assumed`); "" where it adapts all of them, or none without a refusal (the checks say why PEFT
    fails on it). Without `held` (the config read alone, which knows no model): on the first type's names on which PEFT
    takes it (`_peft_match_taken`), which the clause says it assumes, its adapter counted on what it matches of the
    model's own names once the model is known."""
    targets, excluded = _lora_targets(reader, lora), _lora_excluded(reader, lora)
    if all_linear(targets) and excluded is None:
        return ""
    pattern, counted = targets or ALL_LINEAR, "on which alone its adapter is counted"
    if held is None:
        taken = _peft_match_taken(pattern, excluded)
        assert taken is not None  # called where _lora_uncounted is None, which it is not where no type takes it
        names = taken[0]
        held = {"fused": names}
        among = f" among {names.model_type}'s module names, which the config read alone assumes, knowing no model"
        counted = "its adapter counted on what it matches of the model's own names alone"
    else:
        names = next(iter(held.values()))
        among = (f" among {names.model_type}'s module names, which it assumes for a model type it has not read"
                 if names.assumed else "")
    matches = [peft_target_match(pattern, excluded, each) for each in held.values()]
    every_layer = not any(_layers_words(pattern, excluded, each, model) for each in held.values())
    if (all(adapts_all(match, each) for match, each in zip(matches, held.values(), strict=True)) and every_layer
            or not any(match.linears for match in matches) or any(match.other is not None for match in matches)):
        return ""
    if len({match.linears for match in matches}) > 1:  # each layout's named: 0.5.0's and 0.5.2's count the larger
        counted = "its adapter counted on the larger of the two"
    less = "" if excluded is None else f" less exclude_modules '{excluded}'"
    return (f"; its target_modules {_shown_targets(pattern)}{less} matches "
            f"{_adapted_words(pattern, excluded, held, model)}{among}, {counted}")


def _adapted_words(pattern: str, excluded: str | None, held: Mapping[HeldExperts, PeftModuleNames],
                   model: Model | None = None) -> str:
    """What the ``target_modules`` regex `pattern` less `excluded` adapts of the module names of each layout `held`
    (`peft_target_match`): its linear layers' names and ``alone`` (``q_proj and v_proj alone``), with the layers of
    `model` it adapts them in where not every one (``o_proj alone in layers 1-27``: `Model.adapted_layers`), said once
    where the layouts' are the same, else each layout's with its transformers (Mixtral's ``.*\\.w1`` under 0.5.2:
    ``experts.w1 alone under transformers 5 and experts.E.w1 alone under transformers 4``, the names less their first
    part, as `TargetMatch.linears` holds them; ``no module`` where it matches none there)."""
    adapted = {layout: peft_target_match(pattern, excluded, names).linears for layout, names in held.items()}
    words = {layout: f"{and_joined(list(linears))} alone{_layers_words(pattern, excluded, names, model)}"
             if linears else "no module" for (layout, linears), names in zip(adapted.items(), held.values(),
                                                                             strict=True)}
    if len(set(words.values())) == 1:
        return next(iter(words.values()))
    return and_joined([f"{word} under transformers {TRANSFORMERS_OF[layout]}" for layout, word in words.items()])


def _layers_words(pattern: str, excluded: str | None, names: PeftModuleNames, model: Model | None) -> str:
    """The layers of `model` (of the module names `names`) in which `pattern` less `excluded` adapts some module
    (`Model.adapted_layers`), in words after the names it adapts, a space first (``in layers 1-27``, ``in layers 0, 2
    and 4-7``, ``in layer 5``); "" where it adapts a module in every layer, or without `model`."""
    if model is None:
        return ""
    layers = model.adapted_layers(names, LoraTargets(pattern, excluded))
    if not layers or layers == tuple(range(model.num_layers)):
        return ""
    spans = [str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}" for run in consecutive_runs(layers)]
    return f" in layer{'s' if len(layers) > 1 else ''} {and_joined(spans)}"


def refused_lora_note(data: Mapping[str, Any], name: str, environ: Mapping[str, str]) -> ConfigProblem | None:
    """The line on LoRA that a config's verdict and plans count as full fine-tuning where Trinity refuses its LoRA
    configs (``lora-configs-refused``: their reading, or their ``target_modules`` on the model's names), in place of
    the reading's lines on how the adapter is counted and saved, which are moot
    (`ConfigProblemCode.LORA_COUNTED_AS_FULL`, the code of the line on what is counted for LoRA); None where the
    config `data` (the file `name`, read in `environ`) sets no LoRA (`written_lora`)."""
    own = written_lora(data, name, environ)
    if own is None:
        return None
    key = refused_lora_key(data, name, environ, own[0])
    return ConfigProblem(ConfigProblemCode.LORA_COUNTED_AS_FULL, (
        f"with {key} refused ({ConfigProblemCode.LORA_CONFIGS_REFUSED.value} says why), the verdict and the plans "
        f"count full fine-tuning, which holds more than a LoRA run: {refused_lora_fix(key, own[0])}"))


def refused_lora_key(data: Mapping[str, Any], name: str, environ: Mapping[str, str], lora: str) -> str:
    """The dotted key Trinity refuses in the config `data` (the file `name`, read in `environ`) that turns LoRA on by
    `lora` (`written_lora`'s key): ``model.lora_configs`` where its reading refuses it (`lora_configs_refused`, as an
    empty one beside verl's ``lora_rank``), else `lora` (its adapter's targets, refused on the model's names)."""
    return dotted(LORA_KEYS[0]) if lora_configs_refused(data, name, environ) else lora


def refused_lora_fix(key: str, lora: str) -> str:
    """What to do, in words, with the refused LoRA key `key` where Trinity refuses it and full fine-tuning is counted
    in its place (`refused_lora_note`; ``--write``'s note on the LoRA it keeps, `solver.trinity.patch`), LoRA turned
    on by `lora` (`written_lora`'s key: another than `key` where an empty ``model.lora_configs`` is refused beside
    verl's ``lora_rank``, which trains LoRA without it)."""
    also = "" if lora == key else f" and {lora}"
    return f"fix {key} and plan again to count the LoRA run, or remove it{also} to train every parameter"


def verdict_lora_note(note: ConfigProblem, mapping: Mapping[str, Any], name: str, environ: Mapping[str, str],
                      version: TrinityVersion | None, held: Mapping[HeldExperts, PeftModuleNames],
                      asked: int | None = None, option_names: OptionNames = API_OPTIONS,
                      targets: LoraTargets | None = None, model: Model | None = None) -> ConfigProblem:
    """`note`, one of `TrinityConfig.notes` with its code, for a verdict on a model of the module names `held`, each
    layout's the release may hold its routed experts in (`solver.Model.peft_names_of`), where the config (`mapping`,
    read as `load_config_mapping` reads `name`, its variables from `environ`) sets LoRA: its LoRA note
    (`ConfigProblemCode.LORA_COUNTED_AS_FULL`) then says what a ``target_modules`` regex adapts of those names
    (`_fewer_targets`; in the layers of `model` it adapts), not of the type the config read alone assumed, or, where the
    verdict counts another rank `asked` (``--lora-rank``, as `option_names` name it) than the config's
    (`counted_lora_rank`), or its adapter on other `targets` than the config's (``--lora-targets``'; None: all-linear's,
    as without a config), that rank's states on those targets (`_asked_lora_note`); other notes as they are."""
    if note.code is not ConfigProblemCode.LORA_COUNTED_AS_FULL:
        return note
    reader = ConfigReader(mapping, name, VariablesRead(environ))
    rank = counted_lora_rank(reader, version)
    if asked is not None and asked != rank or rank and targets != counted_lora_targets(reader, version):
        return _asked_lora_note(reader, version, rank if asked is None else asked, option_names, held, targets,
                                model)
    return next(iter(_lora_counted_as_full_notes(reader, version, held, model)), note)


def _asked_lora_note(reader: ConfigReader, version: TrinityVersion | None, asked: int, option_names: OptionNames,
                     held: Mapping[HeldExperts, PeftModuleNames], targets: LoraTargets | None,
                     model: Model | None = None) -> ConfigProblem:
    """The LoRA note (`ConfigProblemCode.LORA_COUNTED_AS_FULL`) of a config with LoRA (`_lora_key`) for a verdict
    that counts rank `asked` on `targets` (None: all-linear's; matched on the model's module names `held`, each
    layout's: `_adapted_words`) in place of what the config's reading counts (`counted_lora_rank`,
    `counted_lora_targets`): that rank's states, or for 0 full fine-tuning's, given by the options that ask for them
    (`lora_targets_given`: not a regex the config gives itself), as `option_names` name them, beside what the
    config's own would be; where those targets adapt the config's own modules (`adapts_the_same`) at its own rank,
    that it is the config's own adapter."""
    rank, own_targets = counted_lora_rank(reader, version), counted_lora_targets(reader, version)
    # another rank counts the config's own targets too (`solver.api.config_query`): targets other than them are given
    pattern, excluded = lora_targets_given(own_targets, targets) if asked else (None, None)
    rank_option, targets_option, excluded_option = option_names.lora_options
    options = [*([option_names.valued(rank_option, asked)] if asked != rank else []),
               *([option_names.valued(targets_option, f"'{pattern}'")] if pattern is not None else []),
               *([option_names.valued(excluded_option, f"'{excluded}'")] if excluded is not None else [])]
    given, counts = and_joined(options), "count" if len(options) > 1 else "counts"
    own_modules = not rank or not asked or all(
        adapts_the_same(own_targets or (ALL_LINEAR, None), targets or (ALL_LINEAR, None), names)
        for names in held.values())
    own = (f"the config's own LoRA rank {rank}'s{'' if own_modules else ' on its target_modules'}" if rank
           else f"full fine-tuning's, as the config's LoRA is counted ({_lora_uncounted(reader, version)})")
    head = (f"with LoRA ({'.'.join(_lora_key(reader) or LORA_KEYS[0])}) the trainer holds gradients and optimizer "
            "states for the adapter alone")
    if not asked:
        return ConfigProblem(ConfigProblemCode.LORA_COUNTED_AS_FULL, (
            f"{head}, but {given} {counts} full fine-tuning's, as the tables measured, in place of {own}: "
            "a LoRA run needs less memory than shown"))
    adapted = ("on every linear layer but the output projection" if targets is None else
               f"on {_adapted_words(targets.pattern, targets.excluded, held, model)}")
    instead = ("the config's own adapter's, as its target_modules adapt the same modules" if asked == rank
               and own_modules else f"in place of {own}")
    return ConfigProblem(ConfigProblemCode.LORA_COUNTED_AS_FULL, (
        f"{head}: {given} {counts} LoRA rank {asked}'s states (the frozen base's fp32 weights and the adapter's "
        f"{adapted}), {instead}, and the tables, which measured full fine-tuning, vouch for it by inference "
        "and refute nothing"))


def _lora_configs_notes(reader: ConfigReader) -> list[ConfigProblem]:
    """The line on a ``model.lora_configs`` with which Trinity does not load the config
    (`ConfigProblemCode.LORA_CONFIGS_REFUSED`): one that is not a list, which its typed ``Optional[List[LoRAConfig]]``
    refuses (``load_config``, ``trinity/common/config.py:983`` in 0.5.2), or a list of other than one LoRA config:
    ``_validate_lora`` takes the first, so an empty list raises ``IndexError``, and refuses more than one
    (``common/config_validator.py:701`` to ``:703`` in 0.5.2, ``:670`` to ``:672`` in 0.5.0, ``:782`` to ``:784`` in
    0.6.0); none where it is unset or cannot be read. Every release checks these only with ``model.tinker.enable``
    off (``:699`` in 0.5.2, ``:668`` in 0.5.0, ``:667`` in 0.5.1, ``:780`` in 0.6.0), a config rft-solver refuses
    before it reads this (`_check_verl_trainer`: Tinker trains it on no GPU of its own)."""
    refusal = _lora_configs_refusal(reader)
    return [] if refusal is None else [ConfigProblem(ConfigProblemCode.LORA_CONFIGS_REFUSED, refusal)]


def _lora_configs_refusal(reader: ConfigReader) -> str | None:
    """`_lora_configs_notes`' line (whose fix to drop it names verl's LoRA key beside it, where one turns LoRA on
    too), or None where Trinity loads ``model.lora_configs``; also refused: one LoRA config
    without a ``path`` whose ``lora_rank`` is a whole number not above 0, from which Trinity makes a dummy adapter
    (``create_dummy_lora``, ``config_validator.py:704`` to ``:706`` in 0.5.2, ``:785`` to ``:787`` in 0.6.0) that
    peft refuses (``get_peft_model``: ``r <= 0`` raises in ``LoraLayer.update_layer``, ``tuners/lora/layer.py:239``
    in peft 0.21.2); and one whose ``target_modules`` is a list or a mapping, which Trinity's ``LoRAConfig`` types a
    string (``common/config.py:113`` in 0.6.0, ``:112`` in 0.5.2), so that OmegaConf's merge refuses it as
    ``load_config`` loads the config ("Cannot convert 'ListConfig' to string", omegaconf 2.3.0)."""
    value = read_or_none(reader.get, LORA_KEYS[0])
    key = ".".join(LORA_KEYS[0])
    if value is None:
        return None
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], Mapping):
        for name in ("target_modules", "exclude_modules"):
            given = _lora_config_value(reader, name)
            if isinstance(given, list | Mapping):
                kind = "list" if isinstance(given, list) else "mapping"
                fix = (("give all-linear, or ", "") if name == "target_modules" else ("give ", ", or remove it"))
                return (f"{key}[0].{name} {yaml_brief(given)} is a {kind}: Trinity's LoRA config takes a string, so "
                        f"its typed config refuses it when it loads the config: {fix[0]}one regular expression that "
                        f"peft matches whole module names with (.*\\.(q_proj|v_proj)){fix[1]}")
        targets = _lora_config_value(reader, "target_modules")
        rank = omegaconf_integer(_lora_config_value(reader, "lora_rank"))
        unread = rank is None and _lora_config_value(reader, "lora_rank") is not None  # another line refuses it
        if _lora_config_path(reader) is not None or unread:
            return None
        if rank is None or rank > 0:
            return _targets_refusal(targets, _lora_config_value(reader, "exclude_modules"))
        return (f"{key}[0].lora_rank {rank} without a path: Trinity makes a dummy adapter of that rank, which peft "
                "refuses (\"`r` should be a positive integer value\") before the trainer starts: give a rank above 0 "
                "for LoRA, or drop model.lora_configs for no LoRA")
    why = ("is not a list: Trinity's typed config refuses it when it loads the config" if not isinstance(value, list)
           else "is an empty list: Trinity takes its first LoRA config (lora_configs[0]) and so fails to load the "
           "config" if not value else
           f"holds {yaml_brief(value[0])}, not a LoRA config (a mapping): Trinity's typed config refuses it when it "
           "loads the config" if len(value) == 1 else
           f"holds {len(value)} LoRA configs: Trinity refuses more than one (\"Only one lora adapter is supported\")")
    beside = next((dotted(path) for path in LORA_KEYS[1:] if turns_lora_on(path, read_or_none(reader.get, path))),
                  None)  # verl's LoRA keys, which a release before verl 0.8 reads where no LoRA config replaces them
    return f"{key} {why}: give it one LoRA config, or drop it{'' if beside is None else f' and {beside}'} for no LoRA"


def _targets_refusal(targets: Any, excluded: Any) -> str | None:
    """The refusal of the one LoRA config's ``target_modules`` `targets` or ``exclude_modules`` `excluded` from which
    Trinity makes a new adapter (no ``path``) where either is no regular expression: PEFT compiles both
    (``re.fullmatch``, ``check_target_module_exists``, ``tuners/tuners_utils.py:2350`` to ``:2371`` in peft 0.21.2)
    and fails (``re.error``) as Trinity's ``create_dummy_lora`` makes the adapter (``utils/lora_utils.py:38`` in
    0.6.0), whatever the model; None otherwise. What a regex matches depends on the model's module names, which this
    reading of the config does not know: the checks judge it (``solver.trinity.checks``' `lora_targets_problem`)."""
    key = f"{'.'.join(LORA_KEYS[0])}[0]"
    for name, given in (("exclude_modules", excluded), ("target_modules", targets)):
        if not isinstance(given, str) or all_linear(given) and name == "target_modules":
            continue  # a number or a boolean compiles, as does the text Trinity's typed config makes of it
        try:
            peft_regex(given)
        except re.error as error:
            fix = (EXCLUDED_FORM if name == "exclude_modules" else
                   "give all-linear, or a regular expression that matches whole names, such as .*\\.(q_proj|v_proj)")
            return (f"{key}.{name} '{given}' is no regular expression ({error}): peft matches it whole "
                    f"(re.fullmatch) against each module's full name, and Trinity fails as it makes the adapter: {fix}")
    return None


def _empty_adapter_path_notes(reader: ConfigReader, version: TrinityVersion | None) -> list[ConfigProblem]:
    """The line on an empty ``actor_rollout_ref.model.lora_adapter_path`` (`LORA_KEYS`) that no one
    ``model.lora_configs`` with a ``path`` replaces (``verl_config.py:624`` in 0.5.2: a config without one is a dummy,
    which leaves the key): the worker turns LoRA on (not null, ``fsdp_workers.py:169`` in 0.5.2) and loads the adapter
    from it through verl's ``copy_to_local`` (``:447``), whose ``src[-1]`` of an empty path raises ``IndexError``
    (``utils/fs.py:238`` in verl 0.7.0 and 0.7.1) before the trainer starts: with `version` 0.5 that refuses the config
    (`ConfigProblemCode.EMPTY_ADAPTER_PATH_REFUSED`); else Trinity 0.6 on verl 0.8 or later ignores the key
    (``FROZEN_KEYS``), so it is said (`ConfigProblemCode.EMPTY_ADAPTER_PATH`). None where the key is unset or not
    empty. The one LoRA config's empty ``path`` (not null, so no dummy: ``config_validator.py:704`` in 0.5.2) is
    taken as the adapter path alike, and loaded with every release where its rank is above 0 (verl 0.8.0,
    ``engine/fsdp/transformer_impl.py:318``), which refuses the config whatever the release."""
    if (lora_config_path := _lora_config_path(reader)) is not None:
        return _empty_lora_config_path_notes(reader, lora_config_path, version)
    if read_or_none(reader.get, LORA_KEYS[2]) != "":
        return []
    return [_line_by_release(
        (ConfigProblemCode.EMPTY_ADAPTER_PATH_REFUSED, ConfigProblemCode.EMPTY_ADAPTER_PATH), version, (
            f"{'.'.join(LORA_KEYS[2])} is empty: Trinity's worker turns LoRA on (the path is not null) and loads the "
            "adapter from it, but verl's copy_to_local fails on an empty path (IndexError) before the trainer starts"),
        "ignores the key", "give the adapter's path, or remove the key")]


def _empty_lora_config_path_notes(reader: ConfigReader, path: Any, version: TrinityVersion | None
                                  ) -> list[ConfigProblem]:
    """`_empty_adapter_path_notes`' line on the one LoRA config's ``path`` where it is empty (""): refused where every
    release loads it (a rank above 0, `LORA_CONFIG_RANK` unset) or with `version` 0.5, else said."""
    if path != "":
        return []
    return [_line_by_release(
        (ConfigProblemCode.EMPTY_ADAPTER_PATH_REFUSED, ConfigProblemCode.EMPTY_ADAPTER_PATH), version, (
            "model.lora_configs[0].path is empty: Trinity takes it as the adapter's path (it is not null, so no dummy "
            "adapter is made) and the worker loads it through verl's copy_to_local, which fails on an empty path "
            "(IndexError) before the trainer starts"),
        _lora_config_path_from_08(reader), "give the adapter's path, or remove the key for a new adapter")]


EVERY_RELEASE = "with every Trinity release and verl version"
"""Where a line's key fails (`_line_by_release`, `_null_notes`): Trinity refuses the config whatever it runs on."""


def _line_by_release(codes: tuple[ConfigProblemCode, ConfigProblemCode], version: TrinityVersion | None,
                     fails: str, from_08: str | None, fix: str) -> ConfigProblem:
    """The line on a key that makes Trinity's trainer fail with verl before 0.8 (`fails`, in words, then `fix`): with
    the first of `codes` (the config refused) where Trinity 0.6 on verl 0.8 or later fails on it too (`from_08`
    None) or `version` is 0.5, whose releases run verl before 0.8 alone; else a line with the second (a ``but:``
    line) naming what 0.6 on verl 0.8 or later does instead (`from_08`)."""
    refused, said = codes
    if from_08 is None:
        return ConfigProblem(refused, f"{fails}, {EVERY_RELEASE}: {fix}")
    if version == "0.5":
        return ConfigProblem(refused, f"{fails}, with Trinity 0.5: {fix}")
    return ConfigProblem(said, f"{fails}, with verl before 0.8; Trinity 0.6 on verl 0.8 or later {from_08}; {fix}")


def _lora_config_path(reader: ConfigReader) -> Any:
    """The ``path`` of the one LoRA config of ``model.lora_configs`` (`LORA_KEYS`), which replaces the user's
    ``actor_rollout_ref.model.lora_adapter_path`` (``verl_config.py:624`` to ``:625`` in 0.5.2); None where there is
    no such config, it has no path (a dummy, which leaves the key), or the path cannot be read."""
    return _lora_config_value(reader, "path")


def _one_lora_config(reader: ConfigReader) -> bool:
    """Whether ``model.lora_configs`` (`LORA_KEYS`) holds one LoRA config, a mapping (none, or more than one, is what
    `_lora_configs_notes` refuses)."""
    configs = read_or_none(reader.get, LORA_KEYS[0])
    return isinstance(configs, list) and len(configs) == 1 and isinstance(configs[0], Mapping)


def _lora_config_value(reader: ConfigReader, key: str) -> Any:
    """The value of `key` in the one LoRA config of ``model.lora_configs`` (`_one_lora_config`); None where there is
    no such config, it lacks the key, or it cannot be read."""
    return read_or_none(reader.get, (*LORA_KEYS[0], 0, key)) if _one_lora_config(reader) else None


def _peft_match_taken(pattern: str, excluded: str | None) -> tuple[PeftModuleNames, TargetMatch] | None:
    """The model type's names, and `peft_target_match` on them, where PEFT takes `pattern` less `excluded`: the first
    of `PEFT_NAMES_BY_MODEL_TYPE` (a dense Qwen3's, then a Qwen3-MoE's, then the others'), then of
    `SEPARATE_NAMES_BY_MODEL_TYPE` (transformers 4's, which 0.5.1 runs: Mixtral's ``.*\\.w1``); the checks, which know
    the model and the release, refuse it where it fails (`solver.trinity.checks`); None where no type's names take
    it (no type assumed: a dense Qwen3's words, "matches no module", would be false of ``.*\\.experts\\.gate_proj``,
    a Qwen3-MoE's routed experts' half)."""
    taken = next((names for names in _EVERY_TYPES_NAMES if peft_target_refusal(pattern, excluded, names) is None), None)
    return None if taken is None else (taken, peft_target_match(pattern, excluded, taken))


_EVERY_TYPES_NAMES = (*PEFT_NAMES_BY_MODEL_TYPE.values(), *SEPARATE_NAMES_BY_MODEL_TYPE.values())
"""Every model type's module names rft-solver holds, transformers 5's first (`_peft_match_taken`'s order)."""


LORA_CONFIG_RANK = 32
"""The ``lora_rank`` of a ``model.lora_configs`` entry that sets none (``LoRAConfig``, ``common/config.py:110`` in
0.6.0)."""


def _lora_config_path_from_08(reader: ConfigReader) -> str | None:
    """What Trinity 0.6 on verl 0.8 or later does with the one LoRA config of ``model.lora_configs``' ``path``, which
    verl before 0.8 loads, in words: None where it loads it too, at a ``lora_rank`` above 0 (`LORA_CONFIG_RANK` where
    it sets none); else it loads no adapter (``engine/fsdp/transformer_impl.py:141`` in verl 0.8.0)."""
    if _config_rank_on(read_or_none(reader.get, (*LORA_KEYS[0], 0, "lora_rank"))):
        return None
    return "loads no adapter at a lora_rank not above 0"


def _config_rank_on(rank: Any) -> bool:
    """Whether the one LoRA config's ``lora_rank``, `rank` (None where unset: `LORA_CONFIG_RANK`), is above 0."""
    return turns_lora_on(LORA_KEYS[1], LORA_CONFIG_RANK if rank is None else rank)


def lora_on_08(value: Callable[[tuple[str | int, ...]], Any]) -> bool:
    """Whether Trinity 0.6 on verl 0.8 or later runs LoRA, for the config whose values `value` reads (None where unset
    or unreadable): only from ``model.lora_configs`` (`turns_lora_on`), at a ``lora_rank`` above 0 (`LORA_CONFIG_RANK`
    where it sets none), its ``ref_in_actor`` then true (``trainer/verl/trainer.py:252`` in 0.6.0): the actor without
    its adapter gives the ref's log-probs."""
    return turns_lora_on(LORA_KEYS[0], value(LORA_KEYS[0])) and _config_rank_on(value((*LORA_KEYS[0], 0, "lora_rank")))


def _refused_rank(reader: ConfigReader, path: tuple[str | int, ...]) -> str | None:
    """The LoRA rank at `path`, in words, where Trinity's typed ``lora_rank: int`` refuses it: a value OmegaConf's
    typed int field refuses (`omegaconf_integer`), or null (written so, or an interpolation that gives it), which
    OmegaConf refuses in a field that is not ``Optional`` ("Incompatible value 'None' for field of type 'int'",
    checked with omegaconf 2.3.0); None where the key is unset, taken, or cannot be read."""
    if not _written(reader, path):
        return None
    try:
        rank = reader.get(path)
    except ConfigError:  # said by the checks that read it, or not read
        return None
    return yaml_brief(rank) if omegaconf_integer(rank) is None else None  # null too: no int


def _config_rank_refused(reader: ConfigReader) -> str | None:
    """The one LoRA config's ``lora_rank`` in words where it is no whole number, a null too, which no release takes
    (`_refused_rank`: ``LoRAConfig.lora_rank: int = 32``, ``common/config.py:110`` in 0.6.0, ``:109`` in 0.5.2, no
    ``Optional``, so ``load_config``'s ``OmegaConf.merge`` refuses None, ``:1058`` in 0.6.0, ``:983`` in 0.5.2);
    None where it is unset (Trinity's default rank), taken, or cannot be read."""
    return _refused_rank(reader, (*LORA_KEYS[0], 0, "lora_rank"))


def _lora_rank_notes(reader: ConfigReader, version: TrinityVersion | None) -> list[ConfigProblem]:
    """A line on each LoRA rank that is no whole number (`_refused_rank`: ``lora_rank: true`` or ``null``, which
    rft-solver reads as no LoRA): the one LoRA config's, in Trinity's typed ``LoRAConfig`` (``common/config.py:109`` in
    0.5.2), which every release refuses as it loads the config (``load_config``'s ``OmegaConf.merge``, ``:983`` in
    0.5.2); and ``actor_rollout_ref.model.lora_rank`` (`LORA_KEYS`), typed in ``veRLConfig``'s ``ActorModel``
    (``trainer/verl/verl_config.py:50`` in 0.5.2, ``common/verl_config.py:43`` in 0.5.0), which Trinity 0.5 merges
    as it loads the config (``config_validator.py:1185`` in 0.5.2) and 0.6.0 on verl before 0.8 builds as its
    trainer starts (``verl_legacy/verl_trainer.py:198``; ``build_dataclass_from_mapping`` takes it as written
    before, a null too), unless a ``model.lora_configs`` replaces it first (``verl_legacy/verl_config.py:627`` to
    ``:630``), and 0.6.0 on verl 0.8 or later ignores (``FROZEN_KEYS``, ``trainer/verl/config.py:702``)."""
    replaced = version != "0.5" and read_or_none(reader.get, LORA_KEYS[0]) is not None
    config_rank = _refused_rank(reader, (*LORA_KEYS[0], 0, "lora_rank")) if _one_lora_config(reader) else None
    ranks = (("model.lora_configs[0].lora_rank", config_rank, None),
             (".".join(LORA_KEYS[1]), None if replaced else _refused_rank(reader, LORA_KEYS[1]), "ignores the key"))
    return [_line_by_release(
        (ConfigProblemCode.LORA_RANK_NOT_A_NUMBER_REFUSED, ConfigProblemCode.LORA_RANK_NOT_A_NUMBER), version,
        _typed_refusal_words(key, rank, "int"),
        from_08, "write the rank as a whole number")
        for key, rank, from_08 in ranks if rank is not None]


def _written(reader: ConfigReader, path: tuple[str | int, ...]) -> bool:
    """Whether the config writes the key at `path`, null too (its section, the config's top for a key there, can be
    read and holds it)."""
    section = read_or_none(reader.get, path[:-1]) if path[:-1] else reader.data
    return isinstance(section, Mapping) and path[-1] in section


def _written_null(reader: ConfigReader, path: tuple[str | int, ...]) -> bool:
    """Whether the config writes null at `path`, or an interpolation there gives it (not where it cannot be read)."""
    if not _written(reader, path):
        return False
    try:
        return reader.get(path) is None
    except ConfigError:  # said where it is read
        return False


FIELD_TYPE_WORDS = {"int": "a whole number", "float": "a number", "bool": "true or false", "str": "text"}
"""What OmegaConf's typed field of each type (`NOT_OPTIONAL_KEYS`' types) takes, in words."""


def _typed_refusal_words(key: str, shown: str, field_type: str) -> str:
    """That Trinity's typed config refuses the value `shown` (in words) of `key`, a field of `field_type`."""
    return (f"{key} is {shown}, not {FIELD_TYPE_WORDS[field_type]}: Trinity's typed config (OmegaConf's {field_type} "
            "field) refuses it")


def _typed_keys(reader: ConfigReader, version: TrinityVersion | None) -> list[tuple[tuple[str | int, ...], str]]:
    """The keys rft-solver reads that Trinity's own config types plainly, with their types: `NOT_OPTIONAL_KEYS`, and
    each of ``explorer.auxiliary_models``' (`ENGINE_KEY_TYPES`, as the rollout model's); with `version` 0.5, not those
    of Trinity 0.6's ``trainer`` that 0.5 lacks (`keys_05_refuses`), nor an inference model's `ENGINE_KEYS_05_LACKS`
    (`KEYS_05_LACKS`), which it refuses in any value (said once, by the checks)."""
    trainer = read_or_none(reader.get, ("trainer",))
    engine_lacks = ENGINE_KEYS_05_LACKS if version == "0.5" else ()
    lacking = ({("trainer", key) for key in keys_05_refuses(trainer)} | {(*ROLLOUT_MODEL, key) for key in engine_lacks}
               if version == "0.5" else set())
    auxiliary = read_or_none(reader.get, AUXILIARY_MODELS)
    entries = range(len(auxiliary)) if isinstance(auxiliary, list) else range(0)
    return [*((path, field_type) for path, field_type in NOT_OPTIONAL_KEYS.items() if path not in lacking),
            *(((*AUXILIARY_MODELS, index, key), field_type) for index in entries
              for key, field_type in ENGINE_KEY_TYPES.items() if key not in engine_lacks)]


def _null_notes(reader: ConfigReader, version: TrinityVersion | None) -> list[ConfigProblem]:
    """A line on each of the keys and sections Trinity's own config types as no ``Optional`` (`_typed_keys`,
    `NOT_OPTIONAL_SECTIONS`) that the config writes null (or an interpolation gives it), which rft-solver reads as
    unset but every release's typed config refuses as it loads the config (`ConfigProblemCode.TYPED_NULL_REFUSED`);
    then `_trainer_config_null_notes`. None where the key is unset, given a value, or cannot be read."""
    keys = [ConfigProblem(ConfigProblemCode.TYPED_NULL_REFUSED, (
        f"{_typed_refusal_words(dotted(path), 'null', field_type)}, {EVERY_RELEASE}: remove the key for Trinity's "
        f"default, or write {FIELD_TYPE_WORDS[field_type]}")) for path, field_type in _typed_keys(reader, version)
        if _written_null(reader, path)]
    sections = [ConfigProblem(ConfigProblemCode.TYPED_NULL_REFUSED, (
        f"{'.'.join(path)} is null, not {kind}: Trinity's typed config refuses it (the section is not Optional), "
        f"{EVERY_RELEASE}: remove the key for Trinity's defaults, or write {kind}"))
        for path, kind in NOT_OPTIONAL_SECTIONS.items() if _written_null(reader, path)]
    return sections + keys + _trainer_config_null_notes(reader, version)


def _trainer_config_null_notes(reader: ConfigReader, version: TrinityVersion | None) -> list[ConfigProblem]:
    """A line on each flag under ``trainer.trainer_config`` that Trinity 0.5 types as ``bool`` (`TRAINER_CONFIG_NULLS`),
    and each section there it types as no ``Optional`` (`TRAINER_CONFIG_SECTIONS`), which the config writes null (or
    an interpolation gives it), which rft-solver reads as unset: refused with `version` 0.5
    (`ConfigProblemCode.TYPED_NULL_REFUSED`); else a ``but:`` line (`ConfigProblemCode.TYPED_NULL`) saying that Trinity
    0.5 refuses it (without `version`) and what Trinity 0.6 does with it, none with `version` 0.6 where that is what
    the key unset gives; the actor's ``offload_policy``'s says that the verdict takes Offload as off where
    ``trainer.offload_policy`` is on (`_read_offload`)."""
    problems = []
    for path, in_06 in (*TRAINER_CONFIG_SECTIONS.items(), *TRAINER_CONFIG_NULLS.items()):
        key, section = ".".join(path), path in TRAINER_CONFIG_SECTIONS
        if not _written_null(reader, path) or (version == "0.6" and not in_06.differs):
            continue
        kind, refusal, default = (("a mapping", "refuses it (the section is not Optional)", "defaults") if section
                                  else ("true or false", "(OmegaConf's bool field) refuses it", "default"))
        null, fix = f"{key} is null, not {kind}", f"remove the key for Trinity's {default}, or write {kind}"
        if version == "0.5":
            problems.append(ConfigProblem(ConfigProblemCode.TYPED_NULL_REFUSED,
                                          f"{null}: Trinity's typed config {refusal}, with Trinity 0.5: {fix}"))
            continue
        refused_05 = f"Trinity 0.5's typed config {refusal}; " if version is None else ""
        verdict = (", so the verdict takes Offload as off" if path == offload_path("actor", "offload_policy")
                   and _trainer_policy_on(reader) else "")
        problems.append(ConfigProblem(ConfigProblemCode.TYPED_NULL,
                                      f"{null}: {refused_05}Trinity 0.6 {in_06.words}{verdict}; {fix}"))
    return problems


def _trailing_slash_notes(reader: ConfigReader, version: TrinityVersion | None,
                          names: OptionNames) -> list[ConfigProblem]:
    """A line on each path ending in "/" that the trainer's workers load through verl's ``copy_to_local``, whose
    ``copy_local_path_from_hdfs`` asserts ``src[-1] != "/"`` before it tells a local path from an HDFS one
    (``utils/fs.py:238`` in verl 0.7.0, 0.7.1 and 0.8.0), so the trainer fails as it starts. Refused
    (`ConfigProblemCode.TRAILING_SLASH_REFUSED`) where every release on every verl loads it: ``model.model_path``
    (the actor, ``fsdp_workers.py:643`` in 0.5.2; 0.6.0 on verl 0.8, ``trainer/verl/trainer.py:281``), a trained
    critic's ``model.critic_model_path`` (``fsdp_workers.py:1253`` in 0.5.2; 0.6.0 on verl 0.8, ``HFModelConfig``,
    ``workers/config/model.py:156`` in verl 0.8.0), the one LoRA config's ``path`` at a rank above 0
    (``fsdp_workers.py:447`` in 0.5.2; ``engine/fsdp/transformer_impl.py:318`` in verl 0.8.0). Where only verl before
    0.8 loads it, refused with `version` 0.5, else said (`ConfigProblemCode.TRAILING_SLASH`): a LoRA config's path at a
    rank not above 0 (verl 0.8's engine then loads no adapter, ``transformer_impl.py:141``), and
    ``actor_rollout_ref.model.lora_adapter_path`` that no LoRA config's path replaces (``FROZEN_KEYS`` from 0.8). The
    slash is the user's to remove: ``--write`` leaves these keys as they are."""
    lora_config_path = _lora_config_path(reader)
    critic = trains_critic(read_or_none(reader.word, ("algorithm", "algorithm_type")))
    loaded = [("model.model_path", read_or_none(reader.get, ("model", "model_path")), None),
              ("model.critic_model_path", read_or_none(reader.get, ("model", "critic_model_path")) if critic else None,
               None),
              ("model.lora_configs[0].path", lora_config_path, _lora_config_path_from_08(reader)),
              (".".join(LORA_KEYS[2]),
               read_or_none(reader.get, LORA_KEYS[2]) if lora_config_path is None else None, "ignores the key")]
    return [_line_by_release((ConfigProblemCode.TRAILING_SLASH_REFUSED, ConfigProblemCode.TRAILING_SLASH), version, (
        f"{key} ends in \"/\": the trainer's worker loads it through verl's copy_to_local, which asserts that a path "
        "does not end in \"/\", so the trainer fails as it starts"), from_08,
        f"write the path without its trailing \"/\" ({names.write} leaves it to you)")
        for key, path, from_08 in loaded if isinstance(path, str) and path.endswith("/")]


def _ungrouped_ref_problem(reader: ConfigReader, ref_sp: int, trainer_sp: int, skipped: RefSkip | None,
                           names: OptionNames) -> ConfigProblem:
    """The line on a ref SP `ref_sp` above an actor SP of 1, with Trinity 0.5 (verl 0.7.0 and 0.7.1 alike): the
    worker builds no SP group (``fsdp_workers.py:140`` in 0.5.0, ``:148`` in 0.5.2), so with remove padding on, verl's
    ref forward slices each packed micro-batch over the default group, every GPU taking the first slice
    (``utils/ulysses.py:119``, ``:120``; rank 0 without a group, ``:59``), and gathers nothing back (``:267``):
    ``pad_input`` gets fewer log-probs than tokens (``dp_actor.py:264`` in 0.7.0, ``:331`` in 0.7.1) and raises at
    the first ref step, which refuses the config (`ConfigProblemCode.REF_SP_UNGROUPED_REFUSED`) unless no such step
    runs (`skipped`: why, `_ref_step_skipped`'s words). With remove padding off, verl slices nothing
    (``dp_actor.py:346`` in 0.7.1): the ref runs where such a step does, each GPU taking whole micro-batches of its
    budget x `ref_sp` tokens (``:467``)."""
    own = read_or_none(reader.integer, ROLE_SP_KEYS[1]) is not None
    named = (f"{'.'.join(ROLE_SP_KEYS[1])} {ref_sp}" if own
             else f"trainer.ulysses_sequence_parallel_size {trainer_sp}, the ref's SP (it sets none of its own),")
    ungrouped = f"{named} is above the actor's 1: Trinity 0.5 builds no SP groups at an actor SP of 1"
    fix = f"set the ref's SP to the actor's{names.write_does()}"
    padding = REMOVE_PADDING_KEYS[1]
    if turned_off(read_or_none(reader.get, padding)):  # nothing sliced: `solver.api` gives the ref's tokens per GPU
        whole = f"{ungrouped}, and with {'.'.join(padding)} false verl 0.7 splits none of the ref's micro-batches"
        return ConfigProblem(ConfigProblemCode.ROLE_SP_DIFFERS, (
            f"{whole}, but {skipped.why}, so the ref's forward never runs; {fix}" if skipped is not None else
            f"{whole}: each GPU takes whole ones of the ref's budget x {ref_sp} tokens, padded to the longest "
            f"sequence; {fix}"))
    sliced = (f"{ungrouped}, so verl 0.7 splits each of the ref's micro-batches over all the trainer GPUs but gives "
              "every GPU the first part, and gathers none back: the ref's log-probs are fewer than its tokens")
    if skipped is not None:
        return ConfigProblem(ConfigProblemCode.ROLE_SP_DIFFERS, (
            f"{sliced}, which would fail its first step, but {skipped.why}, so it never runs; {fix}"))
    return ConfigProblem(ConfigProblemCode.REF_SP_UNGROUPED_REFUSED, (
        f"{sliced}, so the first ref step fails (remove padding on, its default): {fix}"))


def _read_max_model_len(reader: ConfigReader) -> tuple[int | None, list[ConfigProblem]]:
    """``model.max_model_len``; where it is not set, ``max_prompt_tokens + max_response_tokens`` as Trinity takes it
    (with a note), where both are given; else None."""
    length = reader.integer(("model", "max_model_len"))
    if length is not None:
        return length, []
    prompt, response = (read_or_none(reader.integer, ("model", key)) for key in ("max_prompt_tokens",
                                                                                 "max_response_tokens"))
    if prompt is None or response is None:
        return None, []
    length = prompt + response
    return length, [ConfigProblem(ConfigProblemCode.LENGTH_FROM_PROMPT_RESPONSE, (
        f"model.max_model_len is not set: Trinity takes max_prompt_tokens + max_response_tokens = "
        f"{prompt} + {response} = {length}{_VERDICT_AT_SUM}"))]


_VERDICT_AT_SUM = ", as the verdict does"
"""The end of the prompt + response note (`_read_max_model_len`) where the verdict is at that sum."""


def verdict_length_note(note: ConfigProblem, config_length: int | None, length: int,
                        names: OptionNames) -> ConfigProblem:
    """`note`, one of `TrinityConfig.notes` with its code, for a verdict at `length` where the config's is
    `config_length`: the prompt + response note then says that the verdict is at the length option's `length`
    (`OptionNames.length_at`, `names`'), not at the sum Trinity takes; other notes, and that one at the sum, as they
    are."""
    if note.code is not ConfigProblemCode.LENGTH_FROM_PROMPT_RESPONSE or length == config_length:
        return note
    words = note.words.removesuffix(_VERDICT_AT_SUM)
    return ConfigProblem(note.code, f"{words}; the verdict is at {names.length_at(str(length))}")


def read_trinity_config(text: str, name: str, environ: Mapping[str, str], version: str | None = None,
                        option_names: OptionNames = API_OPTIONS) -> TrinityConfig:
    """Read what rft-solver needs from a Trinity config's text; `name` (the file name) heads messages.  Only the keys
    read are resolved here (a value elsewhere that resolves to nothing is a problem of the checks'). A value may be, or
    contain,
    ``${oc.env:VAR,default}`` or ``${oc.env:VAR}`` (resolved from `environ`, else the default; unset without a default
    is an error; those set in `environ` are given with their values, in ``environment``), possibly wrapped in
    ``${oc.decode:...}``, or a reference to another key (``${model.max_model_len}``, ``${..key}``, ``${a.b[0]}``), all
    read and resolved as OmegaConf does (`ConfigValues`; sections given as interpolations too); any other resolver
    (``${oc.select:...}``) raises `ConfigError`. Whole numbers written as text (what environment variables give) are
    converted. ``model`` is the last part of ``model.model_path`` (``Qwen/Qwen3-8B`` and ``/models/Qwen3-8B/`` give
    ``Qwen3-8B``, though the trainer fails on the latter's slash: `_trailing_slash_notes`), not yet resolved against the
    catalogue.  GPUs: ``cluster.node_num`` (default 1) times ``cluster.gpu_per_node``, minus the rollout GPUs
    (``explorer.rollout_model.engine_num`` (default 1) times an engine's GPUs, `_rollout_gpus`, plus
    ``explorer.auxiliary_models``; none in ``mode: train``). ``trainer_gpus`` is None without ``cluster.gpu_per_node``.
    The length is ``model.max_model_len``, else ``max_prompt_tokens + max_response_tokens`` (as Trinity takes it).
    Offload is on when ``trainer.trainer_strategy`` is ``fsdp2`` (unset: Trinity 0.6's default, fsdp2, where `version`
    says 0.6 or, without it, the config has 0.6's keys; else fsdp) and the actor's ``offload_policy`` is true: in its
    ``fsdp_config`` (a role's ``engine``, `IGNORED_SECTION`, is named in a note and left out), and, where the config has
    Trinity 0.6's flags under ``trainer`` itself (`trainer_level_offload`), there too (verl before 0.8 takes those, 0.8
    and later the actor's own).  `option_names` names the caller's options in the notes' words (and what writes a
    fragment, in a missing ``model.model_path``'s error): the API's keywords by default (`solver.rules.API_OPTIONS`:
    ``(solver.trinity. patch_trinity_config does)``), `COMMAND_OPTIONS` for the command's flags (``(--write does)``), as
    it passes them.  Raises `ConfigError`, one line naming the file and the key, for text that is not YAML or not a
    mapping, a missing ``model.model_path``, values that are not whole numbers, offload flags that are not booleans,
    unresolvable interpolations (in a key read only for a note, that note is skipped), configs that leave the trainer no
    GPU, and stages that replace its sections (`_check_one_trainer`); `QueryError` for arguments of the wrong type (with
    the API's `option_names`, a file's name alone as `text` too: `config_path_given`), or a
    `version` that is not a Trinity release rft-solver knows (one it knows is read as its minor version, ``0.6.0`` as
    0.6, as `plan` reads it: `check_config_arguments`)."""
    version = check_config_arguments(text, name, environ, version)
    check_types(("option_names", option_names, OptionNames))
    if option_names.keywords and (path_given := config_path_given(text)) is not None:
        raise QueryError(path_given)  # a notebook's file name in place of its text; the command reads the file
    data = load_config_mapping(text, name)
    variables = VariablesRead(environ)
    reader = ConfigReader(data, name, variables)
    model_path, model = _read_model(reader, option_names)
    mode = _read_mode(reader, option_names)
    _check_one_trainer(reader)
    _check_verl_trainer(reader)
    _check_local_rollout(reader, mode)
    _check_lora_variables(reader)
    rollout, rollout_engine_gpus, auxiliary_gpus = _rollout_gpus(reader, mode)
    gpu_per_node, trainer_gpus = _read_trainer_gpus(reader, rollout, option_names)
    given = reader.word(("trainer", "trainer_strategy"))
    strategy = trainer_strategy(given, data, version)
    offload, offload_notes = _read_offload(reader, given, strategy, version, option_names)
    length, length_notes = _read_max_model_len(reader)
    no_ref = _no_ref_algorithm(reader, version)
    skipped = _ref_step_skipped(reader, no_ref, version)
    sp, trainer_sp, ref_sp, lora_ref_sp, sp_notes = _read_sequence_parallel(reader, version, skipped, option_names)
    actor_sp = None if version == "0.5" else read_or_none(reader.integer, ROLE_SP_KEYS[0])  # 0.5 runs sp at it
    train_batch, train_batch_source, batch_notes = _read_train_batch(reader, mode)
    lenient = partial(read_or_none, reader.get)  # a key read only for a note
    ranks = trainer_gpus // sp if trainer_gpus else None  # the trainer's data-parallel ranks, where known
    counted = sequence_counted_roles(lenient, version)
    critic = _read_critic(reader, version, "critic" in counted, option_names)
    dpo = trains_dpo(reader.word(("algorithm", "algorithm_type")))
    rollout_none = "rollout" not in counted and rollout_flag_left_none(lenient, version)
    micro_batches = micro_batch_counts(reader, counted, dpo, ranks, rollout_none)
    counted_050 = sequence_counted_roles(lenient, "0.5")
    sequences_050 = None if counted_050 == counted else micro_batch_counts(reader, counted_050, dpo, ranks).sequences
    in_rows = dpo and actor_update_in_rows(lenient, version)
    notes = (*offload_notes, *_strategy_notes(strategy), *sp_notes, *length_notes, *batch_notes, *critic.notes,
             *_lora_counted_as_full_notes(reader, version), *_saved_targets_notes(reader, version),
             *_chunked_entropy_notes(reader, version),
             *_lora_configs_notes(reader),
             *_empty_adapter_path_notes(reader, version), *_trailing_slash_notes(reader, version, option_names),
             *_lora_rank_notes(reader, version), *_vllm_lora_rank_notes(reader),
             *_engine_args_twice_notes(reader, version), *_sglang_lora_notes(reader), *_null_notes(reader, version),
             *_explorer_alloc_conf_notes(reader))
    return TrinityConfig(
        model=model,
        model_path=model_path,
        max_model_len=length,
        trainer_gpus=trainer_gpus,
        node_gpus=gpu_per_node,
        rollout_gpus=rollout,
        sp=sp,
        trainer_sp=trainer_sp,
        actor_sp=actor_sp if actor_sp != sp else None,
        offload=offload,
        max_token_len_per_gpu=reader.integer(("trainer", "max_token_len_per_gpu")),
        role_token_budgets=_role_token_budgets(data, name, variables),
        strategy=given,
        notes=tuple(note.words for note in notes),
        note_codes=tuple(note.code for note in notes),
        rollout_engine_gpus=rollout_engine_gpus,
        auxiliary_gpus=auxiliary_gpus,
        vllm_rollout=_read_vllm_rollout(reader),
        train_batch_size=train_batch,
        train_batch_source=train_batch_source,
        critic_token_budgets=critic.budgets,
        critic_micro_batch_sequences=critic_rows_sequences(reader, ranks, version),
        critic=critic.states,
        critic_held=critic.held,
        version=version,
        ref_sp=ref_sp,
        lora_ref_sp=lora_ref_sp,
        reference_model=builds_reference_model(reader, version),
        lora_key=lora_on_every_release(reader, version),
        lora_rank=counted_lora_rank(reader, version),
        lora_targets=counted_lora_targets(reader, version),
        ref_forward_runs=no_ref is None,
        old_log_prob_recompute=recompute_may_run(reader.get),
        micro_batch_sequences=micro_batches.sequences,
        micro_batch_sequences_050=sequences_050,
        micro_batch_sources=micro_batches.sources,
        memory_unread=memory_unread_keys(reader, version, dpo, ranks),
        memory_unread_padded=memory_unread_keys(reader, version, dpo, ranks, padded=True),
        dpo=dpo,
        dpo_update_in_rows=in_rows,
        mode_train=mode == "train",
        remove_padding=_ref_removes_padding(reader, version),
        environment=tuple(variables.found.items()),
    )


EXPLORER_ENV_VARS = ("explorer", "env_vars")
"""The environment variables Trinity sets for the rollout's workflow runners alone (``explorer/scheduler.py:86`` in
0.6.0, ``:154`` in 0.5.2): not the trainer's, nor the Ray job's (docs/trinity.md)."""


def _explorer_alloc_conf_notes(reader: ConfigReader) -> list[ConfigProblem]:
    """A line on each allocator variable (`ALLOC_CONF_VARIABLES`) that ``explorer.env_vars`` (`EXPLORER_ENV_VARS`)
    gives an ``expandable_segments`` value: it reaches the rollout's workflow runners alone, not the trainer, whose Env
    the verdict reads from this shell, so the line says where Env must be set, as ``--write``'s Env note does
    (`ConfigProblemCode.ALLOC_CONF_IN_EXPLORER`). None where it sets none, or cannot be read."""
    variables = read_or_none(reader.get, EXPLORER_ENV_VARS)
    if not isinstance(variables, Mapping):
        return []
    several = (read_or_none(reader.integer, ("cluster", "node_num")) or 1) > 1
    settings = ((name, read_or_none(reader.get, (*EXPLORER_ENV_VARS, name)))
                for name in ALLOC_CONF_VARIABLES if name in variables)
    return [ConfigProblem(ConfigProblemCode.ALLOC_CONF_IN_EXPLORER, (
        f"{dotted(EXPLORER_ENV_VARS)} sets {name} with expandable_segments, which reaches the rollout's workflow "
        f"runners alone, not the trainer, whose Env the verdict reads from this shell: the trainer needs Env, which a "
        f"config cannot set: {ENV_EXPORT} {env_when(several)}"))
        for name, setting in settings if isinstance(setting, str) and expandable_segments(setting)]


class CriticReading(NamedTuple):
    """Where a critic's states are held as one verl that a release may run reads its flags (`_critic_readings`)."""

    states: CriticStates
    flags: str
    """The flags it reads, in words."""
    verl: str
    """Which verl reads them so ("" where every verl the release may run does)."""


def _critic_held(flags: Mapping[str, bool | None], strategy: str) -> CriticStates:
    """Where the critic's offload `flags` (`OFFLOAD_FLAGS`, None: unset, off) under `strategy` hold its states:
    offloaded with ``offload_policy`` under fsdp2 (FSDP1 ignores it), reloaded with ``param_offload`` and
    ``optimizer_offload`` (`CriticStates`), else resident."""
    if flags["offload_policy"] and strategy == "fsdp2":
        return "offloaded"
    return "reloaded" if flags["param_offload"] and flags["optimizer_offload"] else "resident"


def _critic_readings(reader: ConfigReader, version: TrinityVersion | None) -> list[CriticReading]:
    """How the releases `version` may be read the critic's offload flags (those that cannot be read count as off):
    Trinity 0.5, and 0.6 on verl before 0.8, its own `CRITIC_MODEL_FSDP` under its own strategy (unset, the
    trainer's); Trinity 0.6 on verl 0.8 or later its engine's, `CRITIC_ENGINE`, each unset the one under ``trainer``,
    under the trainer's strategy. The latter only for 0.6 (the `version` given, or without it a config with 0.6's
    keys: flags under ``trainer`` or a critic engine), as the actor's are read (`_read_offload`); the trainer's
    strategy, unset, is the release's default (`trainer_strategy`: 0.6's fsdp2, 0.5's fsdp)."""
    def flag(path: tuple[str, ...]) -> bool | None:
        value: bool | None = read_or_none(reader.flag, path)
        return value

    engine_read = version == "0.6" or (version is None and (
        trainer_level_offload(reader.data) or read_or_none(reader.get, CRITIC_ENGINE) is not None))
    trainers = trainer_strategy(reader.word(("trainer", "trainer_strategy")), reader.data,
                                "0.6" if engine_read else version)
    own_strategy = read_or_none(reader.word, (*CRITIC, "strategy")) or trainers
    own = _critic_held({name: flag((*CRITIC_MODEL_FSDP, name)) for name in OFFLOAD_FLAGS}, own_strategy)
    if not engine_read:
        return [CriticReading(own, f"its own {dotted(CRITIC_MODEL_FSDP[2:])}", "")]
    engine_flags = {name: flag((*CRITIC_ENGINE, name) if read_or_none(reader.get, (*CRITIC_ENGINE, name)) is not None
                               else ("trainer", name)) for name in OFFLOAD_FLAGS}
    engine = _critic_held(engine_flags, trainers)
    return [CriticReading(own, f"its own {dotted(CRITIC_MODEL_FSDP[2:])}", "verl before 0.8"),
            CriticReading(engine, f"{dotted(CRITIC_ENGINE[2:])}, else the trainer's", "verl 0.8 or later")]


GPU_HELD_CRITICS: tuple[CriticStates, ...] = ("offloaded", "reloaded", "resident")
"""`CriticStates` from the least held on the GPUs to the most: where the verl a release may run read a config's critic
apart, the verdict counts the one that holds the most (as it counts the actor's Offload only where both read it on)."""

CRITIC_STATES_WORDS: dict[CriticStates, str] = {
    "resident": "resident (on the GPUs throughout)",
    "offloaded": "offloaded (offload_policy under fsdp2: in host memory throughout)",
    "reloaded": "reloaded (param_offload and optimizer_offload: in host memory, back on the GPUs for its own update)",
}
"""Where a critic's states are held, as the notes say it."""


class MicroBatchCounts(NamedTuple):
    """What `micro_batch_counts` reads: `TrinityConfig.micro_batch_sequences` and `micro_batch_sources`."""

    sequences: tuple[tuple[str, int], ...]
    sources: tuple[tuple[str, str], ...]


def micro_batch_counts(reader: ConfigReader, counted: frozenset[str], dpo: bool, ranks: int | None,
                       rollout_none: bool = False) -> MicroBatchCounts:
    """The sequences per micro-batch on a GPU of the roles `counted` (`sequence_counted_roles`), by their token budgets'
    keys, and where they are not the size written, whence, in words. A role's micro-batch size
    (`ROLE_MICRO_BATCH_SIZES`; 1 where unset or unreadable; the rollout's, unset, the actor's), which with `dpo`
    (``algorithm_type: dpo``) Trinity doubles for the actor and the ref before filling the rollout's from the actor's
    (0.5.0 ``common/verl_config.py:655-667``, 0.5.2 ``trainer/verl/verl_config.py:672-684``, 0.6.0
    ``trainer/verl_legacy/verl_config.py:685-697``: its DPO loss takes each micro-batch's chosen and rejected sequences
    in turn, ``algorithm/policy_loss_fn/dpo_loss.py:30-31``); Trinity 0.6 on verl 0.8 or later doubles nothing (its
    ``trainer/verl/config.py`` has no DPO branch), so the doubled count is the most any release takes. The actor's or
    the ref's deprecated size for the whole batch (`DEPRECATED_MICRO_BATCH_SIZES`), where set, replaces its size,
    doubled or not: Trinity's verl workers divide it by the data-parallel `ranks` (trainer GPUs / SP; floored) and give
    it as the size per GPU (0.5.0 ``trainer/verl/fsdp_workers.py:223-229``, ``:253-263``; 0.6.0
    ``trainer/verl_legacy/fsdp_workers.py:247-253``, ``:278-287``; verl 0.7.0's own ``workers/fsdp_workers.py:249``,
    ``:272``), after the rollout's was filled from the actor's size per GPU; verl 0.8 or later refuses it (no
    ``fsdp_workers.py`` there), so this is the one count that runs. Unknown `ranks` (no trainer GPUs) count it whole,
    one rank's; a size below the ranks, 0 per GPU, is refused (`solver.trinity.checks`) and counted as 1. The rollout's
    own deprecated size is read by no Trinity worker (its log-prob pass takes ``log_prob_micro_batch_size_per_gpu``:
    0.6.0 ``verl_legacy/fsdp_workers.py:1006-1007``), so it is not counted. With `rollout_none`
    (`solver.trinity.reader.rollout_flag_left_none`: Trinity 0.6 on verl before 0.8 runs the rollout's pass in rows
    whatever the trainer's flag), the rollout's is counted too, with words saying so, where its micro-batch holds more
    than the verdict counts (a sequence, DPO's pair): fewer are within any budget the verdict takes, and on the other
    releases the pass reads a budget."""
    actor, ref, rollout = (read_or_none(reader.integer, path) for path in ROLE_MICRO_BATCH_SIZES)
    times = 2 if dpo else 1
    sizes = {"actor": (actor or 1) * times, "ref": (ref or 1) * times,
             "rollout": (rollout or 1) if rollout is not None else (actor or 1) * times}
    sources = {role: DPO_DOUBLED_WORDS for role in sizes if dpo and (role != "rollout" or rollout is None)}
    for role, path in zip(("actor", "ref"), DEPRECATED_MICRO_BATCH_SIZES, strict=False):
        whole = read_or_none(reader.integer, path)
        if whole is None:
            continue
        sizes[role] = max(whole // (ranks or 1), 1)
        sources[role] = (f"{dotted(path)} {whole}, a deprecated size for the whole batch, over {ranks} data-parallel "
                         f"ranks, trainer GPUs / SP, as verl before 0.8 takes it" if ranks else
                         f"{dotted(path)} {whole}, a deprecated size for the whole batch, counted whole: the config "
                         "gives no trainer GPUs to divide it by")
    if rollout_none and sizes["rollout"] > times:
        counted |= {"rollout"}
        own = "its own" if rollout is not None else "the actor's"
        sources.setdefault("rollout", (  # DPO's doubled words kept (`TrinityConfig.undoubled_sequences`)
            f"{own} micro-batch size per GPU on Trinity 0.6 with verl before 0.8, whose trainer recomputes the old "
            "log-probs with rollout_correction.bypass_mode false, and where neither the rollout's "
            "log_prob_use_dynamic_bsz nor the actor's use_dynamic_bsz is set: Trinity leaves the rollout's none, which "
            "verl reads as off, whatever trainer.use_dynamic_bsz says; set the rollout's to true"))
    keys = dict(zip(sizes, (".".join(path) for path in ROLE_TOKEN_BUDGETS), strict=True))
    return MicroBatchCounts(tuple((keys[role], sizes[role]) for role in sizes if role in counted),
                            tuple((keys[role], sources[role]) for role in sources if role in counted))


_CRITIC_ENGINE = "critic's engine"
"""The passes `memory_unread_keys` counts by the critic's engine's sizes: the critic's on Trinity 0.6 with verl 0.8 or
later, where its engine runs in rows (`critic_engine_in_rows`)."""


def memory_unread_keys(reader: ConfigReader, version: TrinityVersion | None, dpo: bool,
                       ranks: int | None, padded: bool = False) -> tuple[str, ...]:
    """The keys that decide how many tokens a pass takes per GPU and that cannot be read here (an interpolation of an
    environment variable this shell lacks, say), which `read_or_none` reads as unset (`TrinityConfig.memory_unread`):
    the micro-batch sizes (`ROLE_MICRO_BATCH_SIZES`, the actor's and the ref's `DEPRECATED_MICRO_BATCH_SIZES`; where
    the algorithm trains a critic, its own, `CRITIC_MICRO_BATCH_SIZES` and its deprecated size, and but for `version`
    0.5 its engine's, `CRITIC_ENGINE_MICRO_BATCH_SIZES`, which Trinity 0.6 on verl 0.8 or later cuts it by where its
    engine runs in rows, `critic_engine_in_rows`) of the passes that may run with dynamic batch sizes off on some
    release `version` may be (`releases_may_be`, `sequence_counted_roles`, each unread flag read unset, on and off), and
    the dynamic batch size keys (``trainer.use_dynamic_bsz``, `ROLE_DYNAMIC_BATCH_KEYS`, the critic's engine's own
    `CRITIC_ENGINE_DYNAMIC_KEY` but for 0.5) where their values change which passes run so (on one
    of those releases) and such a pass's micro-batch may hold more than one sequence (`micro_batch_counts`, with `dpo`
    and the data-parallel `ranks`, and the critic's, `_critic_sequences`; one holds a sequence within any budget the
    verdict takes); for a `padded` model (`solver.rules.one_sequence_per_micro_batch`), where their values change
    which of its passes (the critic's and its engine's where the algorithm trains one) run with them on, which no
    budget bounds."""
    critic = trains_critic(read_or_none(reader.word, ("algorithm", "algorithm_type")))
    engine = critic and version != "0.5"  # the critic's engine, which Trinity 0.6 on verl 0.8 or later runs
    flags = (DYNAMIC_BATCH_KEYS[0], *ROLE_DYNAMIC_BATCH_KEYS.values(),
             *((CRITIC_ENGINE_DYNAMIC_KEY,) if engine else ()))
    sizes = dict(zip(ROLE_MICRO_BATCH_SIZES, ("actor", "ref", "rollout"), strict=True)) | dict(
        zip(DEPRECATED_MICRO_BATCH_SIZES[:2], ("actor", "ref"), strict=True)) | (
        dict.fromkeys((*CRITIC_MICRO_BATCH_SIZES, DEPRECATED_MICRO_BATCH_SIZES[2]), "critic") if critic else {}) | (
        dict.fromkeys(CRITIC_ENGINE_MICRO_BATCH_SIZES, _CRITIC_ENGINE) if engine else {})

    def unreadable(read: Callable[..., Any], path: Path) -> bool:
        try:
            read(path)
        except ConfigError:
            return True
        return False

    unread = {path for path in flags if unreadable(reader.get, path)} | {
        path for path in sizes if unreadable(reader.integer, path)}
    bypass = (dotted(LEGACY_BYPASS_MODE_KEY),) if unreadable(reader.get, LEGACY_BYPASS_MODE_KEY) and _recompute_in_rows(
        reader, version, dpo, ranks) else ()
    if not unread:
        return bypass

    def counted(reading: bool | None, release: TrinityVersion) -> frozenset[str]:
        def flag(path: Path) -> Any:
            return reading if path in unread else read_or_none(reader.get, path)
        in_rows = engine and release == "0.6" and critic_engine_in_rows(flag)
        return sequence_counted_roles(flag, release) | ({_CRITIC_ENGINE} if in_rows else set())

    by_release = [{counted(reading, release) for reading in (None, True, False)}
                  for release in releases_may_be(version)]
    roles = frozenset[str]().union(*(roles for readings in by_release for roles in readings))
    sizes_unread = [path for path in sizes if path in unread and sizes[path] in roles]
    flags_decide = any(len(readings) > 1 for readings in by_release) and (bool(sizes_unread) or any(
        sequences > 1 for _, sequences in micro_batch_counts(reader, roles, dpo, ranks).sequences)
        or critic and not roles.isdisjoint(("critic", _CRITIC_ENGINE))
        and _critic_sequences(reader, ranks, True, version != "0.5") > 1)
    # a trained critic's passes, its engine's among them (`_CRITIC_ENGINE`: on verl 0.8 or later)
    passes = frozenset(ROLE_DYNAMIC_BATCH_KEYS) - {"critic"} | ({"critic", _CRITIC_ENGINE} if critic else set())
    flags_decide |= padded and any(len({counted_roles & passes for counted_roles in readings}) > 1
                                   for readings in by_release)
    return (*(dotted(path) for path in (*(path for path in flags if path in unread and flags_decide),
                                        *sizes_unread)), *bypass)


def _recompute_in_rows(reader: ConfigReader, version: TrinityVersion | None, dpo: bool, ranks: int | None) -> bool:
    """Whether Trinity 0.6's legacy trainer, were it to recompute the old log-probs (`LEGACY_BYPASS_MODE_KEY` false),
    would run that pass in rows of more sequences than the verdict counts (`micro_batch_counts` with `rollout_none`):
    the rollout's flag left none (`rollout_flag_left_none`) where the pass is not counted in rows already. An
    unreadable `LEGACY_BYPASS_MODE_KEY` then decides the tokens per GPU (`memory_unread_keys`)."""
    def flag(path: Path) -> Any:
        return False if path == LEGACY_BYPASS_MODE_KEY else read_or_none(reader.get, path)
    counted = sequence_counted_roles(flag, version)
    return ("rollout" not in counted and rollout_flag_left_none(flag, version)
            and bool(micro_batch_counts(reader, frozenset(), dpo, ranks, True).sequences))


def unset_variables(reader: ConfigReader, keys: tuple[str, ...]) -> tuple[str, ...]:
    """The environment variables unset in `reader`'s environment, with no default, that its config's dotted `keys`
    (`memory_unread_keys`) read, each once, in their order: those to set, as the run will, for the check to read
    them."""
    variables: dict[str, None] = {}
    for key in keys:
        try:
            reader.get(tuple(key.split(".")))
        except VariableUnset as unset:
            variables[unset.variable] = None
        except ConfigError:  # unreadable otherwise: said where the key is read
            pass
    return tuple(variables)


def _critic_sequences(reader: ConfigReader, ranks: int | None, legacy: bool, engine: bool) -> int:
    """The most sequences a micro-batch of a critic's passes holds on a GPU with dynamic batch sizes off: where
    `legacy` (Trinity 0.5, 0.6 on verl before 0.8), its sizes per GPU (`CRITIC_MICRO_BATCH_SIZES`) and its deprecated
    size for the whole batch over the data-parallel `ranks` (as `micro_batch_counts` takes the actor's); where
    `engine`, its engine's (`CRITIC_ENGINE_MICRO_BATCH_SIZES`, by which alone Trinity 0.6 on verl 0.8 or later cuts its
    passes); each 1 where unset or unreadable."""
    whole = read_or_none(reader.integer, DEPRECATED_MICRO_BATCH_SIZES[2])
    paths = (*(CRITIC_MICRO_BATCH_SIZES if legacy else ()), *(CRITIC_ENGINE_MICRO_BATCH_SIZES if engine else ()))
    return max(1, *(read_or_none(reader.integer, path) or 1 for path in paths),
               1 if whole is None or not legacy else whole // (ranks or 1))


def critic_rows_sequences(reader: ConfigReader, ranks: int | None, version: TrinityVersion | None) -> int:
    """The most sequences a micro-batch of the trained critic's passes holds on a GPU on the verl lines of the
    releases `version` may be where they run with dynamic batch sizes off (`TrinityConfig.critic_micro_batch_sequences`,
    `_critic_sequences` over the data-parallel `ranks`): before verl 0.8 where `sequence_counted_roles` counts the
    critic on some release, on verl 0.8 or later where its engine runs in rows (`critic_engine_in_rows`); 0 where
    none does or the algorithm trains no critic."""
    def flag(path: Path) -> Any:
        return read_or_none(reader.get, path)

    legacy = any("critic" in sequence_counted_roles(flag, release) for release in releases_may_be(version))
    engine = version != "0.5" and critic_engine_in_rows(flag)
    if not trains_critic(read_or_none(reader.word, ("algorithm", "algorithm_type"))) or not (legacy or engine):
        return 0
    return _critic_sequences(reader, ranks, legacy, engine)


class CriticRead(NamedTuple):
    """What `_read_critic` reads of a config's critic: where its flags hold its states, which the verdict and the
    plans count unless asked otherwise (None: the algorithm trains none), its own token budgets set, and the note on
    it."""

    states: CriticStates | None
    budgets: tuple[tuple[str, int], ...]
    notes: list[ConfigProblem]
    held: str = ""
    """Where its flags hold its states, in words: each reading's where they differ (`critic_held_words`)."""


def _read_critic(reader: ConfigReader, version: TrinityVersion | None, sequence_counted: bool,
                 names: OptionNames) -> CriticRead:
    """Where the algorithm trains a critic (Trinity's ``ppo``, the one whose ``use_critic`` is true, and its default
    where ``algorithm.algorithm_type`` is unset): where its flags hold its states (`TrinityConfig.critic`, as the
    releases `version` may be read them, `_critic_readings`: where they differ, the one that holds the most on the
    GPUs, `GPU_HELD_CRITICS`), (key, value) of each of its own token budgets set (`CRITIC_BUDGETS`; none where its
    passes read none, `sequence_counted`; `ConfigError` for one that cannot be read, as for the actor's) and a note
    (`ConfigProblemCode.CRITIC_TRAINED`): verl trains it on the trainer's GPUs beside the actor, and the verdict and
    the plans count it so, which the option `names` name leaves out (`critic_note`), and where the readings differ,
    which option counts the other and that `names.write` then makes them agree; else (None, (), [])."""
    algorithm = reader.word(("algorithm", "algorithm_type"))
    if not trains_critic(algorithm):
        return CriticRead(None, (), [])
    readings = _critic_readings(reader, version)
    counted = max(readings, key=lambda reading: GPU_HELD_CRITICS.index(reading.states))
    which = ("algorithm.algorithm_type ppo" if algorithm else
             "PPO, Trinity's algorithm where algorithm.algorithm_type is unset,")
    head = f"{which} trains a critic model{_critic_model_words(reader)} beside the actor on the same trainer GPUs"
    differ = len({reading.states for reading in readings}) > 1
    sources = " and ".join(f"{reading.verl}'s of {reading.flags}" + (f" ({reading.states})" if differ else "")
                           for reading in readings)
    why = (f"as {counted.flags} holds them" if len(readings) == 1 else
           f"by the more held on the GPUs of two readings, {sources}" if differ else
           f"as both readings hold them, {sources}")
    found = ((".".join(path), reader.integer(path))  # one that cannot be read refused, as the actor's are
             for path in (() if sequence_counted else CRITIC_BUDGETS))
    budgets = tuple((key, budget) for key, budget in found if budget is not None)
    note = critic_note(head, why, counted.states, None, names)
    if differ:
        least = min(readings, key=lambda reading: GPU_HELD_CRITICS.index(reading.states))
        given = names.valued(names.named("critic"), f'"{least.states}"' if names.keywords else least.states)
        note += (f"; {given} counts it as {least.verl} reads it, and {names.write} then sets both readings' flags "
                 "to that")
    return CriticRead(counted.states, budgets, [ConfigProblem(ConfigProblemCode.CRITIC_TRAINED, note)],
                      critic_held_words(readings))


def critic_held_words(readings: list[CriticReading]) -> str:
    """Where the critic's flags hold its states, in words (`CriticRead.held`): the one place where every reading of
    `readings` agrees (``resident``), else each reading's with the verl that reads it so (``resident on verl before
    0.8 and offloaded on verl 0.8 or later``), as a verl 0.8 user who offloads it by ``critic.fsdp`` alone must be told
    that that reading offloads it."""
    if len({reading.states for reading in readings}) == 1:
        return readings[0].states
    return " and ".join(f"{reading.states} on {reading.verl}" for reading in readings)


def _critic_model_words(reader: ConfigReader) -> str:
    """Words on the critic's model for the critic's note, where ``model.critic_model_path`` names another model than
    ``model.model_path`` (`critic_of_another_model`): rft-solver sizes a critic by the actor's model alone (its
    parameters less the output projection, `solver.memory.critic_parameters`), so the note says that a critic of
    another size is counted at the actor's; "" otherwise. No semicolon: the note's head ends at its first."""
    if not critic_of_another_model(lambda path: read_or_none(reader.get, path)):
        return ""
    path = read_or_none(reader.get, ("model", "critic_model_path"))
    return (f" (model.critic_model_path's {path}, which rft-solver sizes as model.model_path's model: it counts no "
            "critic of another size, so a larger one needs more memory than counted)")


def verdict_critic_note(note: ConfigProblem, asked: CriticStates | None, counted: CriticStates | None,
                        names: OptionNames, held: str = "") -> ConfigProblem:
    """`note`, one of `TrinityConfig.notes` with its code, for a verdict that counts the critic `asked` (None: none)
    where the config's flags hold it `counted` (`TrinityConfig.critic`; in words `held`, `TrinityConfig.critic_held`,
    each reading's where they differ): its critic's note then says what was asked (`critic_note`); other notes, and
    that one where nothing else was asked, as they are."""
    if note.code is not ConfigProblemCode.CRITIC_TRAINED or asked == counted or counted is None:
        return note
    head = note.words.split("; ", 1)[0]
    return ConfigProblem(note.code, critic_note(head, "", counted, NO_CRITIC if asked is None else asked, names,
                                                held))


def critic_left_out_option(names: OptionNames) -> str:
    """The option that leaves the critic out, as `names` name it (``--critic none``, ``critic="none"``)."""
    return names.valued(names.named("critic"), f'"{NO_CRITIC}"' if names.keywords else NO_CRITIC)


def critic_note(head: str, why: str, counted: CriticStates, asked: CriticChoice | None, names: OptionNames,
                held: str = "") -> str:
    """The note on a config's critic: its `head` (what trains it, `_read_critic`; no semicolon in it), then what the
    verdict and the plans count: where not `asked` (None), where its flags hold its states (`counted`, `why` so, in
    words) and how to leave it out; else the value asked, or for `NO_CRITIC` none (as the option `names` name it:
    ``--critic none``), beside where its flags hold its states (`held`, `critic_held_words`; "": `counted`)."""
    held = held or counted
    left_out = critic_left_out_option(names)
    if asked is None:
        return (f"{head}; the verdict and the plans count its states {why}: {CRITIC_STATES_WORDS[counted]}, and its "
                f"own update as a second peak; {left_out} counts the actor alone")
    if asked == NO_CRITIC:
        return (f"{head}; {left_out} leaves it out: the verdict and the plans are for the actor alone, though the run "
                f"trains it (its flags hold its states {held})")
    given = names.valued(names.named("critic"), f'"{asked}"' if names.keywords else asked)
    return f"{head}; {given} counts its states {CRITIC_STATES_WORDS[asked]}, where its flags hold them {held}"


def _read_train_batch(reader: ConfigReader, mode: str | None) -> tuple[int | None, str, list[ConfigProblem]]:
    """Experiences per training step, the keys they come from, and a note where Trinity refuses the config for want
    of them: ``buffer.train_batch_size``, else (as Trinity derives it) ``buffer.batch_size`` times
    ``algorithm.repeat_times`` (default 1). None where the config sets neither batch size (the check is skipped on
    purpose: Trinity's default batch of 1 is no run's), and where Trinity requires ``buffer.train_batch_size``
    itself (mode train, algorithm_type sft or dpo) and it is unset."""
    given = reader.integer(TRAIN_BATCH_PATH, minimum=0)
    if given:  # 0, Trinity's default: derived from the batch size
        return given, TRAIN_BATCH_KEY, []
    algorithm = reader.word(("algorithm", "algorithm_type"))
    if mode == "train" or algorithm in ("sft", "dpo"):
        why = "mode train" if mode == "train" else f"algorithm_type {algorithm}"
        note = ConfigProblem(ConfigProblemCode.TRAIN_BATCH_REQUIRED, (
            f"{TRAIN_BATCH_KEY} is unset, which Trinity requires with {why}: it refuses the config (the verdict "
            "and the plans check no train batch)"))
        return None, TRAIN_BATCH_KEY, [note]
    batch = reader.integer(("buffer", "batch_size"))
    if batch is None:
        return None, TRAIN_BATCH_KEY, []
    source = DEFAULT_TRAIN_BATCH_SOURCE
    experiences = batch * (reader.integer(("algorithm", "repeat_times"), 1) or 1)  # `or`: the default, for the types
    if experiences > MAX_TRAIN_BATCH:
        raise ConfigError(f"{reader.name}: {source} must be at most {MAX_TRAIN_BATCH}, got {experiences}")
    return experiences, source, []


def _flag_for_notes(reader: ConfigReader, path: tuple[str, ...]) -> bool | None:
    """An offload flag read for the notes, its interpolations resolved: None where they cannot be (a missing key, a
    resolver rft-solver does not read), so no note is made of it; a value that is not a boolean is refused."""
    try:
        value = reader.get(path)
    except ConfigError:
        return None
    return reader.boolean(path, value)


def _role_token_budgets(
    mapping: Mapping[str, Any], name: str, environ: Mapping[str, str]
) -> tuple[tuple[str, int], ...]:
    """(key, value) of each per-role token budget (`ROLE_TOKEN_BUDGETS`) a config sets to a whole number
    (interpolations resolved from `environ`); `ConfigError` (one line) for one that is not a whole number in range."""
    reader = ConfigReader(mapping, name, environ)
    found = ((".".join(path), reader.integer(path)) for path in ROLE_TOKEN_BUDGETS)
    return tuple((key, value) for key, value in found if value is not None)
