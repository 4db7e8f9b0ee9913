"""Plans to Trinity-RFT configs and back: emit a YAML fragment, read a user's config, patch it in place.

Pure functions on text: nothing here prints or touches files (the CLI reads and writes them). The keys
and their meaning are Trinity-RFT's (``trinity/common/config.py``):

- ``model.max_model_len``, and ``model.rope_scaling`` (YaRN, ``factor = max_model_len / native context``)
  beyond the model's native context (not for a model with a RoPE scaling of its own, such as Llama 3.1's
  ``llama3``, which YaRN would replace);
- ``trainer.ulysses_sequence_parallel_size`` and ``trainer.max_token_len_per_gpu`` (``ceil(2L/sp)``);
- with Offload: ``trainer.trainer_strategy: fsdp2``, ``param_offload``, ``optimizer_offload`` and
  ``offload_policy`` under ``trainer.trainer_config.actor_rollout_ref.{actor,ref}.fsdp_config`` and, for
  Trinity 0.6, under ``trainer`` itself (in a fragment made for no config, or where a config has them), and
  ``trainer.save_hf_checkpoint: never``;
- Env is the environment variable ``PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True``, set before Ray
  starts: it is not a config key, so the fragment says it in a comment and the patch leaves it to the
  caller;
- the GPU split: ``cluster.node_num * cluster.gpu_per_node`` GPUs, of which
  ``explorer.rollout_model.engine_num * tensor_parallel_size`` (plus auxiliary models) roll out and the
  rest train.
"""

from __future__ import annotations

import contextlib
import io
import math
import re
import warnings
from collections.abc import Callable, Iterable, Mapping
from itertools import pairwise
from typing import Any, get_args

import yaml as pyyaml
from pydantic import BaseModel, ConfigDict
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import CommentMark, YAMLError
from ruamel.yaml.events import AliasEvent
from ruamel.yaml.representer import RoundTripRepresenter
from ruamel.yaml.scalarbool import ScalarBoolean
from ruamel.yaml.tokens import CommentToken

from solver.query import NODE_SIZE_KEY, TrinityVersion, check_choice
from solver.results import ENV_EXPORT, Plan, index_range, yarn_caution
from solver.rules import least_token_budget, token_budget, whole_nodes_violation
from solver.tables import (
    MAX_GPUS,
    MAX_TOKENS,
    NUMBER_TOO_LONG,
    Model,
    OneLineError,
    QueryError,
    TableError,
    UniqueKeys,
    brief,
    check_types,
    counted,
    model_name_from_path,
    sp_rule_violation,
    yaml_error_place,
    yaml_limit,
)

OFFLOAD_FLAGS = ("param_offload", "optimizer_offload", "offload_policy")
ROLES = ("actor", "ref")
_FSDP_CONFIG = ("trainer", "trainer_config", "actor_rollout_ref")
_FAST_SAFE_LOADER = getattr(pyyaml, "CSafeLoader", pyyaml.SafeLoader)
"""PyYAML's safe loader, in C where libyaml is there: it re-reads every fragment made, for the check."""


BOOLEAN_WORDS = {"true": True, "yes": True, "y": True, "on": True, "false": False, "no": False, "n": False, "off": False}
"""The words OmegaConf takes for a boolean key of Trinity's (any case; YAML 1.1's among them, which ruamel, reading
YAML 1.2, leaves as text)."""
TRAINER_MODES = ("both", "train")
"""Trinity's modes that run a trainer of their own, on GPUs rft-solver plans (``both`` is the default)."""
NO_TRAINER_MODES = ("explore", "bench", "serve")
"""Trinity modes that run no trainer."""
TRINITY_06_KEYS = ("these three are Trinity 0.6's (0.5 refuses them: --trinity-version 0.5 leaves them out); on verl "
                   "before 0.8, Trinity 0.6 reads these, not the fsdp_config flags below")
"""The fragment's comment on a plan's offload flags under ``trainer`` itself: Trinity 0.6's keys."""
TRINITY_06_OFFLOAD = ("Trinity 0.6 on verl before 0.8 replaces the roles' offload flags with trainer.param_offload, "
                      "optimizer_offload and offload_policy (false where unset): there, set those to true too")
"""What a config with the roles' offload flags alone needs for Trinity 0.6 on verl before 0.8 (Trinity before 0.6
refuses the keys)."""
REMOTE_ENGINES = ("tinker", "external")
"""Trinity engine types that run on a service elsewhere: they take none of the cluster's GPUs."""


class EngineError(OneLineError):
    """Rollout GPUs that a config's engines (their GPUs each, its auxiliary models) cannot take."""


class ConfigError(OneLineError):
    """A Trinity config that cannot be read or resolved; the message is one line naming the key at fault."""


class TrinityConfig(BaseModel):
    """What rft-solver needs from a Trinity-RFT config, interpolations resolved.

    ``trainer_gpus`` (and ``node_gpus``, its ``cluster.gpu_per_node``) is None when the config does not
    say how many GPUs there are; ``rollout_gpus`` counts the explorer's engines (and auxiliary models).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", protected_namespaces=())

    model: str
    model_path: str | None = None
    """``model.model_path`` as the config gives it (interpolations resolved); ``model`` is its last part."""
    max_model_len: int | None = None
    trainer_gpus: int | None = None
    node_gpus: int | None = None
    rollout_gpus: int = 0
    sp: int = 1
    offload: bool = False
    max_token_len_per_gpu: int | None = None
    role_token_budgets: tuple[tuple[str, int], ...] = ()
    """The per-role token budgets the config sets (`role_token_budgets`): they override the trainer's."""
    strategy: str | None = None
    rollout_engine_gpus: int = 1
    """The GPUs of one rollout engine: ``explorer.rollout_model.tensor_parallel_size`` (times Trinity 0.6's
    ``data_parallel_size`` and ``pipeline_parallel_size``, where given); 0 for engines that run elsewhere
    (``engine_type`` tinker or external)."""
    auxiliary_gpus: int = 0
    """The GPUs of ``explorer.auxiliary_models``, part of ``rollout_gpus``."""
    def budget_in_effect(self, max_model_len: int) -> int:
        """The most tokens per GPU any role takes at `max_model_len`: a role's own budget, else the trainer's,
        else Trinity's default ``ceil(2L/sp)``."""
        trainer = self.max_token_len_per_gpu or token_budget(max_model_len, self.sp)
        own = dict(self.role_token_budgets)
        return max(own.get(".".join(path), trainer) for path in ROLE_TOKEN_BUDGETS)

    notes: tuple[str, ...] = ()
    """What the reader noticed that the verdict on these settings does not show: Offload flags that do not
    all agree, or that the strategy ignores; a verl config kept in another file."""


# --------------------------------------------------------------------------------------------------
# The keys a plan sets: one list drives both the fragment and the patch.


class _Key(BaseModel):
    model_config = ConfigDict(frozen=True, protected_namespaces=())

    path: tuple[str, ...]
    value: Any
    comment: str | None = None
    default_only: bool = False
    """A value the plan suggests but the user's own choice overrides: --write sets it only where missing."""
    existing_only: bool = False
    """A value for a key of the user's config only: set where the config has it, never added."""


def _offload_path(role: str, flag: str, section: str = "fsdp_config") -> tuple[str, ...]:
    """The path of `role`'s offload `flag` under ``trainer.trainer_config.actor_rollout_ref``: in its
    ``fsdp_config``, where Trinity and verl read it, or in another `section` (``engine``, `IGNORED_SECTION`)."""
    return (*_FSDP_CONFIG, role, section, flag)


IGNORED_SECTION = "engine"
"""A role's ``engine`` mapping, where some configs put offload flags that nothing reads: Trinity 0.5 refuses the key,
Trinity 0.6 drops it on verl before 0.8, and verl 0.8 and later replaces it with the role's ``fsdp_config``."""


def trainer_level_offload(config: Any) -> bool:
    """Whether `config` (the user's, None for none) has an offload flag under ``trainer`` itself, as Trinity 0.6
    keeps them (``trainer.offload_policy``): it then copies them over the roles' own."""
    return config is not None and any(_dig(config, ("trainer", flag)) is not None for flag in OFFLOAD_FLAGS)


def _plan_keys(plan: Plan, model: Model, config: Any = None, environ: Mapping[str, str] | None = None,
               version: TrinityVersion | None = None) -> list[_Key]:
    """The keys `plan` sets, in the fragment's order (model section first, then trainer); the offload flags
    under each role's ``fsdp_config``, and without Offload the flags `config` (the user's, None for none) has,
    set to false; Trinity 0.6's flags under ``trainer`` where `version` is 0.6, or, without a version, where
    `config` has them or, for no config, with Offload (never for 0.5); dynamic batch sizes back on where
    `config` turns them off (its interpolations resolved from `environ`)."""
    length, native = plan.max_model_len, model.native_context
    keys = [_Key(path=("model", "max_model_len"), value=length)]
    factor = model.yarn_factor(length)
    if factor is not None:
        rope = ("model", "rope_scaling")
        # A config that names the type as the model cards do (``type``, without ``rope_type``) keeps that key.
        named = "type" if _dig(config, (*rope, "type")) is not None and _dig(config, (*rope, "rope_type")) is None \
            else "rope_type"
        keys += [
            _Key(path=(*rope, named), value="yarn"),
            _Key(path=(*rope, "factor"), value=factor, comment=f"max_model_len / {native}"
                 + (f"; {yarn_caution(model)}" if plan.yarn_beyond_validated else "")),
            _Key(path=(*rope, "original_max_position_embeddings"), value=native),
        ]
    if plan.offload:
        keys.append(_Key(path=("trainer", "trainer_strategy"), value="fsdp2", comment="CPU offload needs FSDP2"))
    keys += [
        _Key(path=("trainer", "ulysses_sequence_parallel_size"), value=plan.sp),
        _Key(
            path=("trainer", "max_token_len_per_gpu"),
            value=plan.max_token_len_per_gpu,
            comment=f"below Trinity's default ceil(2 * {length} / {plan.sp}), which does not fit; at least "
                    f"ceil({length} / {plan.sp})" if plan.lowered_budget
            else f"ceil(2 * {length} / {plan.sp}), Trinity's default, written out",
        ),
    ]
    if plan.offload:
        keys.append(
            _Key(
                path=("trainer", "save_hf_checkpoint"),
                value="never",
                comment="no Hugging Face weights saved, as in the source's offload measurements",
                default_only=True,
            )
        )
    def resolved(path: tuple[str, ...]) -> Any:  # the config's value there, its interpolation resolved (None: unread)
        return _leniently(lambda at: _resolve(_dig(config, at), "", environ or {}), path) if config is not None else None

    def dynamic_batches(paths: Iterable[tuple[str, ...]]) -> list[_Key]:
        # The plan's token budget applies only with dynamic batch sizes: a config that turned them off gets them back.
        return [_Key(path=path, value=True, existing_only=True) for path in paths if _turned_off(resolved(path))]

    keys += dynamic_batches(path for path in DYNAMIC_BATCH_KEYS if len(path) == 2)  # the trainer's own
    trainer_flags = {"0.5": False, "0.6": plan.offload or trainer_level_offload(config),
                     None: trainer_level_offload(config) or (config is None and plan.offload)}[version]
    if trainer_flags:
        # Trinity 0.6's, which it copies over the roles' on verl before 0.8 (its TrainerConfig has all three). A fragment
        # made for no config has them (the current release's); a config has them where it has any already.
        comment = TRINITY_06_KEYS if config is None and version is None else None
        keys += [_Key(path=("trainer", flag), value=plan.offload, comment=comment if flag == OFFLOAD_FLAGS[0] else None)
                 for flag in OFFLOAD_FLAGS]
    for role in ROLES:  # a role's keys together, a section's together (the fragment nests them)
        # A role's own SP, which Trinity with verl before 0.8 takes over the trainer's: the plan's too.
        keys += [_Key(path=path, value=plan.sp, existing_only=True) for path in ROLE_SP_KEYS if path[-2] == role]
        keys += dynamic_batches(path for path in DYNAMIC_BATCH_KEYS if path[:-1] == (*_FSDP_CONFIG, role))
        # A per-role budget set by hand overrides the trainer's for its role: one above the plan's comes down to it.
        keys += [_Key(path=path, value=plan.max_token_len_per_gpu, existing_only=True) for path in ROLE_TOKEN_BUDGETS
                 if path[:-1] == (*_FSDP_CONFIG, role) and _number_above(resolved(path), plan.max_token_len_per_gpu)]
        for section in ("fsdp_config", IGNORED_SECTION):
            for flag in OFFLOAD_FLAGS:
                path = _offload_path(role, flag, section)
                if plan.offload and section == "fsdp_config":
                    keys.append(_Key(path=path, value=True))
                elif config is not None and (plan.offload or role != "ref"):
                    # The config's own flags elsewhere (unread, but said alike): all on; or, without Offload, the
                    # actor's off. The reference model's stay as they are: the memory model counts none on the GPU,
                    # so an offloaded one stays so.
                    keys.append(_Key(path=path, value=plan.offload, existing_only=True))
    return keys


# --------------------------------------------------------------------------------------------------
# trinity_fragment


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, str)):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    raise TypeError(f"no YAML form for {value!r}")


def _emit(keys: Iterable[_Key], section_comments: Mapping[tuple[str, ...], str]) -> list[str]:
    """Nested block YAML for `keys` (which must come grouped by their parent paths)."""
    lines: list[str] = []
    opened: tuple[str, ...] = ()
    seen: set[tuple[str, ...]] = set()
    for key in keys:
        parent = key.path[:-1]
        common = 0
        while common < min(len(opened), len(parent)) and opened[common] == parent[common]:
            common += 1
        for depth in range(common, len(parent)):
            prefix = parent[: depth + 1]
            if prefix in seen:
                raise ValueError(f"keys under {'.'.join(prefix)} are not grouped together")
            seen.add(prefix)
            comment = section_comments.get(prefix)
            lines.append("  " * depth + f"{parent[depth]}:" + (f"  # {comment}" if comment else ""))
        opened = parent
        line = "  " * len(parent) + f"{key.path[-1]}: {_scalar(key.value)}"
        lines.append(line + (f"  # {key.comment}" if key.comment else ""))
    return lines


def _header(plan: Plan, model: Model, rollout_gpus: int | None, gpu: str | None,
            shared_gpus: tuple[int, ...] | None = None, rocm: bool = False) -> list[str]:
    on = f" {gpu}" if gpu else ""
    left = f" ({rollout_gpus} for rollout)" if rollout_gpus else ""
    evidence = plan.evidence_text(gpu or "", model.name)
    trainer = f"{plan.gpus}{on} trainer GPU{'s' if plan.gpus != 1 else ''}{left}"
    lines = [
        f"# Trinity-RFT settings generated by rft-solver for {model.name}",
        f"# plan: {plan.setting.label} on {trainer}, max_model_len {plan.max_model_len}",
        f"# evidence: {evidence}",
        "# Merge these keys into your Trinity config; model.model_path and everything else stay yours.",
    ]
    if model.beyond_native_on_own_scaling(plan.max_model_len):
        lines += [
            "#",
            f"# max_model_len is beyond {model.name}'s native context of {model.native_context}, which its own",
            f"# {model.rope_scaling} RoPE scaling provides: no rope_scaling is written (YaRN would replace it).",
            "# vLLM (the explorer's rollout) refuses a max_model_len past what it derives from the model's config",
            "# unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set (before Ray starts). Check that the model handles this",
            "# length before you train at it.",
        ]
    if shared_gpus:
        lines += [
            "#",
            f"# The job takes GPU{'s' if len(shared_gpus) > 1 else ''} {index_range(shared_gpus)} of its node: "
            "before Ray starts,",
            f"#   export CUDA_VISIBLE_DEVICES={','.join(map(str, shared_gpus))}",
            "# Each job on the node needs a Ray of its own: start this one's after that export (ray start --head on",
            "# ports no other job's Ray uses) and set cluster.ray_address to it; the default, auto, joins whichever",
            "# Ray the node started last.",
        ]
    if plan.env:
        lines += [
            "#",
            "# Env: run this before Ray starts (before `ray start`, or before `trinity run` starts Ray):",
            f"#   {ENV_EXPORT}",
            "# It is an environment variable, not a config key.",
        ]
        if rocm:
            lines += ["# On ROCm, PyTorch reads PYTORCH_HIP_ALLOC_CONF too: set it the same, or not at all; a build",
                      "# without expandable segments ignores them with a warning (then plan with --no-env)."]
    return lines


def trinity_fragment(
    plan: Plan, model: Model, rollout_gpus: int | None = None, *, gpu: str | None = None, nodes: int = 1,
    shared_gpus: tuple[int, ...] | None = None, engines: tuple[int, int] | None = (0, 1), layout: Any = None,
    version: TrinityVersion | None = None, rocm: bool = False,
) -> str:
    """A Trinity YAML fragment (nested mappings, with comments) that applies `plan` to `model`.

    It sets ``model.max_model_len``, ``model.rope_scaling`` (YaRN) only beyond the model's native
    context, ``trainer.ulysses_sequence_parallel_size`` and ``trainer.max_token_len_per_gpu``, and with
    Offload the FSDP2 offload keys and ``trainer.save_hf_checkpoint: never``. Env is a comment block at
    the top (an environment variable, not a key). With `rollout_gpus` R (0 or more) it adds a
    ``cluster`` of `nodes` nodes (default one) sharing the trainer's GPUs and R equally
    (``gpu_per_node`` = (trainer GPUs + R) / nodes), and (for R of 1 or more) ``explorer.rollout_model`` with R engines of
    tensor-parallel size 1; `engines` = (GPUs of other models, GPUs per engine) gives instead
    (R - those GPUs) / size engines of that size (a `layout` with Trinity 0.6's data or pipeline parallel
    sizes keeps its sizes: the tensor-parallel one is not written), and None no engines at all (a config's
    own, which take the R GPUs already). `gpu` (e.g. ``A100-80GB``) only names the GPU type in the header comment;
    `shared_gpus`, the GPUs of a node the job takes part of, adds the CUDA_VISIBLE_DEVICES to set; `rocm`
    (an AMD GPU) adds to the Env comment what ROCm builds read.
    `layout`, the user's config as nested mappings, adds the keys of its own that the plan sets too (a role's
    SP and budget, the offload flags under a role's ``engine``), as `patch_trinity_config` does. The output depends
    only on the arguments: the same input gives the same bytes, checked against
    Trinity's rules (`check_trinity_config`) before it is returned.
    """
    _check_fragment_arguments(plan, model, rollout_gpus, gpu, nodes, shared_gpus, engines, version, rocm)
    keys = [key for key in _plan_keys(plan, model, layout, version=version)
            if not (key.existing_only and _dig(layout, key.path) is None)]
    model_keys = [k for k in keys if k.path[0] == "model"]
    trainer_keys = [k for k in keys if k.path[0] == "trainer"]
    cluster_keys: list[_Key] = []
    if rollout_gpus is not None:
        no_explorer = [_Key(path=("mode",), value="train",
                            comment="no explorer here: it runs elsewhere, in mode explore")]
        cluster_keys = [
            *(no_explorer if not rollout_gpus else []),
            _Key(path=("cluster", "node_num"), value=nodes),
            _Key(
                path=("cluster", "gpu_per_node"),
                value=(plan.gpus + rollout_gpus) // nodes,
                comment=f"{plan.gpus} trainer + {rollout_gpus} rollout" if rollout_gpus else (
                    f"{plan.gpus} trainer, no rollout GPU here"),
            ),
        ]
        if engines is not None and rollout_gpus:
            others, size = engines
            if not size:
                raise EngineError(f"its rollout engines run elsewhere (engine_type {' or '.join(REMOTE_ENGINES)}) and "
                                  f"take none of the {rollout_gpus - others} rollout GPUs")
            if (rollout_gpus - others) < size or (rollout_gpus - others) % size:
                raise EngineError(f"{rollout_gpus} rollout GPUs less the {others} of auxiliary models are not whole "
                                  f"engines of {counted(size, 'GPU')} each")
            cluster_keys.append(_Key(path=("explorer", "rollout_model", "engine_num"),
                                     value=(rollout_gpus - others) // size,
                                     comment="one GPU each" if size == 1 else f"{size} GPUs each"))
            if not any(_dig(layout, ("explorer", "rollout_model", key)) is not None
                       for key in ("data_parallel_size", "pipeline_parallel_size")):  # else size is their product
                cluster_keys.append(_Key(path=("explorer", "rollout_model", "tensor_parallel_size"), value=size))
    comments: dict[tuple[str, ...], str] = {
        ("model", "rope_scaling"): f"YaRN: max_model_len is beyond the native context of {model.native_context}",
    }
    body = _emit([*model_keys, *cluster_keys, *trainer_keys], comments)
    text = "\n".join([*_header(plan, model, rollout_gpus, gpu, shared_gpus, rocm), *body]) + "\n"
    problems = check_trinity_config(pyyaml.load(text, Loader=_FAST_SAFE_LOADER), model, plan.gpus)
    if problems:  # a defect of rft-solver's, never of the input: no fragment that Trinity would refuse leaves here
        raise RuntimeError(f"the Trinity config made for {plan.setting.label} breaks Trinity's rules: {problems}")
    return text


def _number(value: float) -> str:
    """A config's number as a message shows it: a whole one in digits (1048576, not 1.04858e+06), else as written."""
    return str(int(value)) if float(value).is_integer() else repr(value)


def _check_fragment_arguments(plan: Plan, model: Model, rollout_gpus: int | None, gpu: str | None, nodes: int,
                              shared_gpus: tuple[int, ...] | None, engines: tuple[int, int] | None,
                              version: TrinityVersion | None, rocm: bool) -> None:
    """`QueryError` unless `trinity_fragment`'s arguments are of their kinds and within their ranges, and the
    trainer and rollout GPUs split into `nodes` nodes on which the trainer takes one node's share or whole nodes."""
    check_types(("plan", plan, Plan), ("model", model, Model), ("rollout_gpus", rollout_gpus, int | None),
                ("gpu", gpu, str | None), ("nodes", nodes, int), ("shared_gpus", shared_gpus, tuple | None),
                ("engines", engines, tuple | None), ("rocm", rocm, bool))
    check_choice("version", version, (None, *get_args(TrinityVersion)))
    if rollout_gpus is not None and not 0 <= rollout_gpus <= MAX_GPUS:
        raise QueryError(f"rollout_gpus must be from 0 to {MAX_GPUS} (or None for no cluster section), got "
                         f"{rollout_gpus}")
    if not 1 <= nodes <= MAX_GPUS:
        raise QueryError(f"nodes must be from 1 to {MAX_GPUS}, got {nodes}")
    if engines is not None and not (len(engines) == 2 and all(type(n) is int for n in engines)
                                    and engines[0] >= 0 and engines[1] >= 0):
        raise QueryError(f"engines must be (GPUs of other models, GPUs per engine), two whole numbers of at least 0, "
                         f"got {brief(engines)}")
    if shared_gpus is not None and not all(type(n) is int and n >= 0 for n in shared_gpus):
        raise QueryError(f"shared_gpus must be GPU indices, whole numbers of at least 0, got {brief(shared_gpus)}")
    if rollout_gpus is None:
        return
    if (plan.gpus + rollout_gpus) % nodes:
        raise QueryError(f"{plan.gpus} trainer + {rollout_gpus} rollout GPUs do not split into {counted(nodes, 'node')} "
                         "of the same size")
    if violation := whole_nodes_violation(plan.gpus, (plan.gpus + rollout_gpus) // nodes, f"nodes={nodes}"):
        raise QueryError(violation)


# --------------------------------------------------------------------------------------------------
# Interpolations: ${oc.env:VAR,default}, ${oc.env:VAR}, ${oc.decode:...}


_SUPPORTED = "only ${oc.env:VAR,default} is supported"


def _closing(text: str, start: int) -> int:
    """Index of the ``}`` that closes the ``${`` at `start`, or -1."""
    depth = 0
    i = start
    while i < len(text):
        if text.startswith("${", i):
            depth += 1
            i += 2
            continue
        if text[i] == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def _decode_scalar(text: str) -> Any:
    try:
        value = YAML(typ="safe", pure=True).load(text)
    except (YAMLError, ValueError, RecursionError):  # not YAML, or not a value YAML builds: the text stays text
        return text
    return text if isinstance(value, (dict, list)) or value is None else value


def _interpolate(value: str, where: str, environ: Mapping[str, str]) -> Any:
    """Resolve every interpolation in `value`; a value that is one interpolation keeps its type."""
    parts: list[Any] = []
    i = 0
    while i < len(value):
        start = value.find("${", i)
        if start < 0:
            parts.append(value[i:])
            break
        parts.append(value[i:start])
        end = _closing(value, start)
        if end < 0:
            raise ConfigError(f"{where}: unterminated interpolation in {value!r}")
        parts.append(_resolve_one(value[start : end + 1], where, environ))
        i = end + 1
    parts = [p for p in parts if p != ""]
    if len(parts) == 1:
        return parts[0]
    # Joined into text, a value is written as OmegaConf writes it (a null default as "None").
    return "".join(p if isinstance(p, str) else "None" if p is None else _scalar(p) for p in parts)


def _resolve_one(expression: str, where: str, environ: Mapping[str, str]) -> Any:
    body = expression[2:-1].strip()
    resolver, colon, args = body.partition(":")
    resolver = resolver.strip()
    if colon and resolver == "oc.env":
        inner = _interpolate(args, where, environ) if "${" in args else args
        if not isinstance(inner, str):
            raise ConfigError(f"{where}: cannot resolve {expression!r} ({_SUPPORTED})")
        var, comma, default = inner.partition(",")
        var = var.strip()
        if not var:
            raise ConfigError(f"{where}: {expression!r} names no environment variable")
        if var in environ:
            return environ[var]
        if comma:  # OmegaConf's: text, but an unquoted null is None (the key counts as unset)
            return None if default.strip().lower() == "null" else _unquote(default)
        raise ConfigError(f"{where}: environment variable {var} is not set and {expression!r} has no default")
    if colon and resolver == "oc.decode":
        inner = _interpolate(args.strip(), where, environ)
        return _decode_scalar(inner) if isinstance(inner, str) else inner
    raise ConfigError(f"{where}: cannot resolve {expression!r} ({_SUPPORTED})")


def _resolve(value: Any, where: str, environ: Mapping[str, str]) -> Any:
    if isinstance(value, str) and "${" in value:
        return _interpolate(value, where, environ)
    return value


# --------------------------------------------------------------------------------------------------
# read_trinity_config


class _OmegaConfLoader(UniqueKeys, pyyaml.SafeLoader):
    """PyYAML's safe loader as OmegaConf, and so Trinity, reads a config: the pure-Python one (libyaml's takes a
    tab after a colon, which Trinity refuses), YAML 1.1 (``010000`` is the octal 4096, ``on`` and ``yes`` are
    true, ``y`` and ``n`` are text), no timestamps (a date stays text), floats without a dot (``1e-5``) too,
    and a key given twice refused."""


_OmegaConfLoader.yaml_implicit_resolvers = {
    first: [(tag, pattern) for tag, pattern in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in pyyaml.SafeLoader.yaml_implicit_resolvers.items()}
_OmegaConfLoader.add_implicit_resolver("tag:yaml.org,2002:float", re.compile(r"""^(?:
     [-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
    |\.[0-9_]+(?:[eE][-+][0-9]+)?
    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$""", re.VERBOSE), list("-+0123456789."))  # OmegaConf's own float rule


def load_config_mapping(text: str, name: str, yaml: YAML | None = None) -> Any:
    """A Trinity config's text as nested mappings, or `ConfigError`, one line naming the file, for text that
    is not YAML or not a mapping: as Trinity reads it (`_OmegaConfLoader`), or with `yaml`, ruamel's round
    trip, for a copy to patch."""
    try:
        if yaml is None:
            data = pyyaml.load(text, Loader=_OmegaConfLoader)
        else:
            with warnings.catch_warnings():  # ruamel's multi-line warnings (a reused anchor) are not one line
                warnings.simplefilter("ignore")
                data = yaml.load(text)
    except TableError as error:  # a key given twice, or one that is not a plain value
        raise ConfigError(f"{name}: {error}") from None
    except (RecursionError, ValueError) as error:  # a limit, or a scalar that cannot be built
        raise ConfigError(f"{name}: {yaml_limit(error) or 'not valid YAML: ' + ' '.join(str(error).split())}") from None
    except (YAMLError, pyyaml.YAMLError) as error:
        at = yaml_error_place(error, text)
        problem = getattr(error, "problem", None) or str(error).strip().splitlines()[0]
        first = getattr(error, "context_mark", None)
        if problem == "second occurrence" and first is not None:  # PyYAML's anchor defined twice
            problem = f"{str(getattr(error, 'context', '')).split(';')[0]} (first on line {first.line + 1})"
        problem = " ".join(str(problem).split())
        raise ConfigError(f"{name}: {at}not valid YAML: {problem}") from None
    if not isinstance(data, Mapping):
        kind = "an empty document" if data is None else "a list" if isinstance(data, list) else brief(data)
        raise ConfigError(f"{name}: a Trinity config is a mapping of sections (model, cluster, trainer, ...), got {kind}")
    return data


class _Reader:
    def __init__(self, data: Mapping[str, Any], name: str, environ: Mapping[str, str], prefix: str = ""):
        self.data, self.name, self.environ, self.prefix = data, name, environ, prefix

    def where(self, path: tuple[str, ...]) -> str:
        return f"{self.name}: {self.prefix}{'.'.join(path)}"

    def get(self, path: tuple[str, ...]) -> Any:
        """The value at `path` (interpolations resolved), None when it or a section above is absent."""
        node: Any = self.data
        for depth, part in enumerate(path):
            if node is None:
                return None
            if not isinstance(node, Mapping):
                raise ConfigError(f"{self.where(path[:depth])} must be a mapping, got {brief(node)}")
            node = node.get(part)
        return _resolve(node, self.where(path), self.environ)

    def integer(self, path: tuple[str, ...], default: int | None = None, minimum: int = 1,
                maximum: int = MAX_TOKENS) -> int | None:
        value = self.get(path)
        if value is None:
            return default
        if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
            try:
                value = int(value)
            except ValueError:  # longer than Python converts (4300 digits)
                raise ConfigError(f"{self.where(path)}: {NUMBER_TOO_LONG}") from None
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{self.where(path)} must be a whole number, got {brief(value)}")
        if value < minimum:
            raise ConfigError(f"{self.where(path)} must be at least {minimum}, got {value}")
        if value > maximum:
            raise ConfigError(f"{self.where(path)} must be at most {maximum}, got {value}")
        return value

    def count(self, path: tuple[str, ...], default: int, minimum: int = 1) -> int:
        value = self.integer(path, default, minimum, maximum=MAX_GPUS)
        return default if value is None else value

    def flag(self, path: tuple[str, ...]) -> bool:
        return self.boolean(path, self.get(path))

    def boolean(self, path: tuple[str, ...], value: Any) -> bool:
        """`value`, read at `path`, as Trinity (OmegaConf) reads a boolean: `BOOLEAN_WORDS` in any case, and whole
        numbers, 0 false; missing is false."""
        if value is None:
            return False
        if isinstance(value, str) and value.strip().lower() in BOOLEAN_WORDS:
            return BOOLEAN_WORDS[value.strip().lower()]
        if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
            with contextlib.suppress(ValueError):  # longer than Python converts: refused below
                value = int(value)
        if isinstance(value, int) and not isinstance(value, bool):
            return value != 0
        if not isinstance(value, bool):
            raise ConfigError(f"{self.where(path)} must be true or false, got {brief(value)}")
        return value

    def word(self, path: tuple[str, ...]) -> str | None:
        """The text at `path`, stripped (`text`); None where it is absent or blank."""
        return (self.text(path) or "").strip() or None

    def text(self, path: tuple[str, ...]) -> str | None:
        value = self.get(path)
        if value is None:
            return None
        if not isinstance(value, str):
            raise ConfigError(f"{self.where(path)} must be text, got {brief(value)}")
        return value


def _rollout_gpus(reader: _Reader, mode: str | None) -> tuple[int, int, int]:
    """GPUs the explorer holds: (all of them, one rollout engine's GPUs, the auxiliary models' GPUs); all =
    rollout engines times their GPUs, plus the auxiliary models'. An engine's GPUs are its tensor-parallel
    size, times its ``data_parallel_size`` and ``pipeline_parallel_size`` where given (Trinity 0.6).

    Trinity's defaults apply to missing keys (``engine_num`` 1, the sizes 1); in ``mode: train`` there is no
    explorer and no rollout GPU. An engine of ``engine_type`` tinker or external runs elsewhere and takes no GPU
    here (Trinity 0.6 sets its ``gpu_per_engine`` to 0).
    """
    if mode == "train":
        return 0, 1, 0

    def engine_gpus(sub: _Reader, prefix: tuple[str, ...]) -> int:
        if sub.word((*prefix, "engine_type")) in REMOTE_ENGINES:
            return 0
        return math.prod(sub.count((*prefix, key), 1)
                         for key in ("tensor_parallel_size", "data_parallel_size", "pipeline_parallel_size"))

    rollout = ("explorer", "rollout_model")
    per_engine = engine_gpus(reader, rollout)
    engines = reader.count((*rollout, "engine_num"), 1, minimum=0) * per_engine
    auxiliary_gpus = 0
    auxiliary = reader.get(("explorer", "auxiliary_models")) or []
    if not isinstance(auxiliary, list):
        raise ConfigError(f"{reader.where(('explorer', 'auxiliary_models'))} must be a list, got {brief(auxiliary)}")
    for index, entry in enumerate(auxiliary):
        if not isinstance(entry, Mapping):
            raise ConfigError(f"{reader.where(('explorer', f'auxiliary_models[{index}]'))} must be a mapping")
        sub = _Reader(entry, reader.name, reader.environ, prefix=f"explorer.auxiliary_models[{index}].")
        auxiliary_gpus += sub.count(("engine_num",), 1, minimum=0) * engine_gpus(sub, ())
    return engines + auxiliary_gpus, per_engine, auxiliary_gpus


def _number_above(value: Any, limit: int) -> bool:
    """Whether a config's value (text as OmegaConf decodes it) is a number above `limit`."""
    value = _decode_scalar(value) if isinstance(value, str) else value
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > limit


def _boolean_like(value: Any) -> bool:
    """Whether OmegaConf takes a config's value for a boolean key (`_Reader.boolean`'s forms; missing too)."""
    if isinstance(value, str):
        value = value.strip()
        return value.lower() in BOOLEAN_WORDS or re.fullmatch(r"[+-]?\d+", value) is not None
    return value is None or isinstance(value, (bool, int))


def _turned_off(value: Any) -> bool:
    """Whether a config's flag is off as verl takes it: false (YAML 1.1's ``no``, ``off`` and ``n`` too, as
    OmegaConf reads them), or 0."""
    if isinstance(value, str):
        value = _decode_scalar(value)
        value = value.strip().casefold() in ("no", "off", "n") if isinstance(value, str) else value is False or value == 0
        return value
    return value is False or (isinstance(value, (int, float)) and value == 0)


DYNAMIC_BATCH_KEYS = (("trainer", "use_dynamic_bsz"), (*_FSDP_CONFIG, "actor", "use_dynamic_bsz"),
                      (*_FSDP_CONFIG, "ref", "log_prob_use_dynamic_bsz"))
"""Dynamic batch sizes (Trinity's default, and the role keys of verl it sets): token budgets apply only with them."""
ROLE_TOKEN_BUDGETS = ((*_FSDP_CONFIG, "actor", "ppo_max_token_len_per_gpu"),
                      (*_FSDP_CONFIG, "ref", "log_prob_max_token_len_per_gpu"))
"""verl's per-role token budgets: set by hand, they override ``trainer.max_token_len_per_gpu`` for their role (on verl
before 0.8: `ROLE_KEYS_IGNORED`)."""
ROLE_KEYS_IGNORED = ("on verl before 0.8 only: Trinity 0.6 on verl 0.8 or later ignores the roles' own token budgets and "
                     "dynamic-batch keys, taking the trainer's")
"""Where the roles' own budgets and the ref's dynamic-batch key count: Trinity 0.6's verl 0.8 path freezes them."""
ROLE_KEY_SCOPES: dict[tuple[str, ...], str] = {
    DYNAMIC_BATCH_KEYS[1]: ("on Trinity before 0.6 only: Trinity 0.6 sets it to trainer.use_dynamic_bsz whatever the "
                            "verl"),
    DYNAMIC_BATCH_KEYS[2]: ROLE_KEYS_IGNORED,
    **dict.fromkeys(ROLE_TOKEN_BUDGETS, ROLE_KEYS_IGNORED),
}
"""Where each of the roles' own keys counts, in words (the trainer's count everywhere)."""
ROLE_SP_KEYS = tuple((*_FSDP_CONFIG, role, "ulysses_sequence_parallel_size") for role in ROLES)
"""The roles' own SP: Trinity with verl before 0.8 takes it over the trainer's; Trinity 0.6 on verl 0.8 or later
ignores it."""


def role_token_budgets(
    mapping: Mapping[str, Any], name: str, environ: Mapping[str, str]
) -> tuple[tuple[str, int], ...]:
    """(key, value) of each per-role token budget (`ROLE_TOKEN_BUDGETS`) a config sets to a whole number
    (interpolations resolved from `environ`); `ConfigError` (one line) for one that is not a whole number in range."""
    reader = _Reader(mapping, name, environ)
    found = ((".".join(path), reader.integer(path)) for path in ROLE_TOKEN_BUDGETS)
    return tuple((key, value) for key, value in found if value is not None)


def unused_length(mapping: Mapping[str, Any], name: str, environ: Mapping[str, str]) -> str | None:
    """Where a config's ``max_prompt_tokens + max_response_tokens`` fall short of its ``max_model_len``: the
    sequences stay within the sum, whatever the length allows, in words (None where they reach it, or a key is
    absent or unreadable)."""
    reader = _Reader(mapping, name, environ)
    length, prompt, response = (_leniently(reader.integer, ("model", key))
                                for key in ("max_model_len", "max_prompt_tokens", "max_response_tokens"))
    if length is None or prompt is None or response is None or prompt + response >= length:
        return None
    return (f"model.max_prompt_tokens {prompt} + model.max_response_tokens {response} = {prompt + response}, below "
            f"model.max_model_len {length}: no sequence uses the rest; raise max_response_tokens to train at the length")


def _leniently(read: Callable[[tuple[str, ...]], Any], path: tuple[str, ...]) -> Any:
    """A key read only for a note: what `read` gives, or None where it cannot be read (the note is skipped)."""
    try:
        return read(path)
    except ConfigError:
        return None


def _note_flag(reader: _Reader, path: tuple[str, ...]) -> bool | None:
    """An offload flag read for the notes: None where rft-solver cannot resolve it (a reference to another
    key, which Trinity resolves), so no note is made of it; a value that is not a boolean is refused."""
    try:
        value = reader.get(path)
    except ConfigError:
        return None
    return reader.boolean(path, value)


def trainer_strategy(given: str | None, mapping: Any, version: TrinityVersion | None) -> str:
    """The strategy Trinity's trainer runs: the config's `given` one, else its release's default: fsdp before 0.6,
    fsdp2 from 0.6 (the `version` given, or without it, a config with 0.6's keys: `trainer_level_offload`)."""
    if given:
        return given
    return "fsdp2" if version == "0.6" or (version is None and trainer_level_offload(mapping)) else "fsdp"


def check_config_arguments(text: str, name: str, environ: Mapping[str, str], version: TrinityVersion | None) -> None:
    """`QueryError` unless a config's `text` and `name` are strings, `environ` a mapping (``os.environ``) and
    `version` a Trinity release rft-solver knows (or None)."""
    check_types(("text", text, str), ("name", name, str), ("environ", environ, Mapping))
    for value in environ.values():
        check_types(("environ's values", value, str))
    check_choice("version", version, (None, *get_args(TrinityVersion)))


def _read_model(reader: _Reader) -> tuple[str, str]:
    """The config's ``model.model_path`` (stripped) and the model name it ends in."""
    model_path = reader.get(("model", "model_path"))
    if model_path is None or (isinstance(model_path, str) and not model_path.strip()):
        raise ConfigError(f"{reader.name}: missing model.model_path")
    if not isinstance(model_path, str):
        raise ConfigError(f"{reader.where(('model', 'model_path'))} must be a path, got {brief(model_path)}")
    model = model_name_from_path(model_path)
    if not model:
        raise ConfigError(f"{reader.where(('model', 'model_path'))}: no model name in {model_path!r}")
    return model_path.strip(), model


def _read_mode(reader: _Reader) -> str | None:
    """The config's ``mode`` (None where unset); `ConfigError` for one that runs no trainer rft-solver plans."""
    name, mode = reader.name, reader.word(("mode",))
    if mode in NO_TRAINER_MODES:
        raise ConfigError(f"{name}: mode {mode} runs no trainer, so there is nothing to plan (rft-solver "
                          "plans the trainer of mode both or train)")
    if mode == "colocate":
        raise ConfigError(f"{name}: mode colocate shares one GPU between the trainer and the rollout engine, which "
                          "the tables never measured (rft-solver plans the trainer of mode both or train)")
    if mode not in (None, *TRAINER_MODES):
        raise ConfigError(f"{reader.where(('mode',))} must be one of {', '.join(TRAINER_MODES + NO_TRAINER_MODES)} or "
                          f"colocate, as Trinity takes it, got {brief(mode)}")
    return mode


def _check_verl_trainer(reader: _Reader) -> None:
    """`ConfigError` unless verl's trainer trains the config (not the Tinker service, nor another trainer type)."""
    trainer_type = (reader.text(("trainer", "trainer_type")) or "verl").strip()
    if reader.flag(("model", "tinker", "enable")) or trainer_type == "tinker":
        raise ConfigError(f"{reader.name}: the Tinker service trains this config (model.tinker.enable or "
                          "trainer.trainer_type tinker), so there is no trainer GPU to plan (rft-solver plans verl's "
                          "FSDP trainer)")
    if trainer_type != "verl":
        raise ConfigError(f"{reader.where(('trainer', 'trainer_type'))} must be verl (or tinker), as Trinity takes it, "
                          f"got {brief(trainer_type)}")


def _check_local_rollout(reader: _Reader, mode: str | None) -> None:
    """`ConfigError` for an external rollout model outside ``mode: train``: it is for mode bench, whose trainer
    Trinity gives no GPU."""
    if mode != "train" and (reader.word(("explorer", "rollout_model", "engine_type")) == "external"
                            or reader.flag(("model", "external_model", "enable"))):
        raise ConfigError(f"{reader.name}: an external rollout model (explorer.rollout_model.engine_type external, or "
                          "model.external_model.enable) is for mode bench: Trinity then gives the trainer no GPU, so "
                          "there is nothing to plan")


def _read_trainer_gpus(reader: _Reader, rollout: int) -> tuple[int | None, int | None]:
    """``cluster.gpu_per_node`` and the cluster's GPUs left to the trainer after the `rollout` GPUs (both None
    without ``gpu_per_node``); `ConfigError` for a cluster above `MAX_GPUS`, or one that leaves the trainer none."""
    gpu_per_node = reader.integer(("cluster", "gpu_per_node"), maximum=MAX_GPUS)
    if gpu_per_node is None:
        return None, None
    total = reader.count(("cluster", "node_num"), 1) * gpu_per_node
    if total > MAX_GPUS:
        raise ConfigError(f"{reader.name}: cluster.node_num x cluster.gpu_per_node = {total} GPUs; at most {MAX_GPUS}")
    trainer_gpus = total - rollout
    if trainer_gpus < 1:
        raise ConfigError(
            f"{reader.name}: cluster.node_num x cluster.gpu_per_node = {counted(total, 'GPU')}: no trainer GPU is left "
            f"after {counted(rollout, 'rollout GPU')} (explorer.rollout_model.engine_num x each engine's GPUs)"
        )
    return gpu_per_node, trainer_gpus


def _actor_note_flags(reader: _Reader) -> dict[str, bool]:
    """The actor's offload flags in its ``fsdp_config`` that can be read for the notes (``actor.fsdp_config.<flag>``:
    on or off); every role's flags are checked (`_note_flag`)."""
    read = {f"{role}.fsdp_config.{flag}": _note_flag(reader, _offload_path(role, flag)) for role in ROLES
            for flag in OFFLOAD_FLAGS}
    return {flag: on for flag, on in read.items() if on is not None and flag.startswith("actor.")}


def _policies_disagree_note(trainer_policy: bool, actor_policy: bool) -> str:
    """The note on Trinity 0.6's ``trainer.offload_policy`` and the actor's own set differently."""
    return (f"trainer.offload_policy is {str(trainer_policy).lower()} but "
            f"{'.'.join(_offload_path('actor', 'offload_policy'))} is {str(actor_policy).lower()}: Trinity 0.6 takes "
            "the trainer's with verl before 0.8 and the actor's with verl 0.8 or later, so the verdict takes Offload "
            "as off; set both alike (--write does)")


def _manual_offload_note(manual: list[str], where: str) -> str:
    """The note on offload flags `manual` (under `where`) that are on without ``offload_policy``."""
    return (f"{' and '.join(manual)} without offload_policy (under {where}): verl loads those states back onto the "
            "GPUs for each step, so the verdict takes Offload as off; the tables' Offload is FSDP2's "
            "CPUOffloadPolicy, which offload_policy: true turns on")


def _offload_without_fsdp2_note(strategy: str, given: str | None) -> str:
    """The note on offload flags set for a trainer whose `strategy` (the config's `given` one, or the release's
    default) is not fsdp2."""
    # (the reference model's param_offload is FSDP1's too, and saves memory whatever the strategy)
    named = f"is {strategy}, not fsdp2" if given else "is not set (Trinity before 0.6 takes fsdp; 0.6, fsdp2)"
    return (f"the offload flags are set, but trainer.trainer_strategy {named}: the tables' Offload is FSDP2's "
            "CPU offload, so the verdict takes Offload as off")


def _engine_section_notes(reader: _Reader) -> list[str]:
    """A note on the roles' offload flags under their ``engine`` (`IGNORED_SECTION`), which Trinity never reads
    (none where there are none)."""
    unread = [f"{role}.{IGNORED_SECTION}.{flag}" for role in ROLES for flag in OFFLOAD_FLAGS
              if _leniently(reader.get, _offload_path(role, flag, IGNORED_SECTION)) is not None]
    if not unread:
        return []
    return [(f"{', '.join(unread)} (under {'.'.join(_FSDP_CONFIG)}): Trinity reads a role's offload flags "
             "from its fsdp_config, never its engine (Trinity 0.5 refuses the key, 0.6 drops it, and verl 0.8 "
             "or later replaces it with fsdp_config), so the verdict leaves them out; set them under "
             "fsdp_config (--write does)")]


def _read_offload(reader: _Reader, given: str | None, strategy: str,
                  version: TrinityVersion | None) -> tuple[bool, list[str]]:
    """Whether the trainer runs with the tables' Offload (`strategy` fsdp2 with ``offload_policy`` on), and the notes
    on the offload flags (`given`: the config's ``trainer.trainer_strategy``)."""
    # Under FSDP2, verl offloads the actor to host memory through CPUOffloadPolicy when offload_policy is on (and
    # then ignores param_offload and optimizer_offload); the reference model gets it whatever the flags say.
    flags = _actor_note_flags(reader)
    where = "trainer.trainer_config.actor_rollout_ref"
    # The verdict's flag is read as strictly as Trinity reads it (the notes' may be left unread).
    actor_policy = _offload_path("actor", "offload_policy")
    policy, actor_sets_policy = reader.flag(actor_policy), reader.get(actor_policy) is not None
    notes: list[str] = []
    disagree = False
    # Trinity 0.6's flags under trainer itself: verl before 0.8 takes these, 0.8 and later the actor's own.
    if trainer_level_offload(reader.data) and version != "0.5":
        flags = {flag: reader.flag(("trainer", flag)) for flag in OFFLOAD_FLAGS}
        where = "trainer, where Trinity 0.6 keeps them"
        merged = policy if actor_sets_policy else flags["offload_policy"]
        disagree = merged != flags["offload_policy"] and strategy == "fsdp2"
        if disagree:
            notes.append(_policies_disagree_note(flags["offload_policy"], policy))
        policy = merged and flags["offload_policy"]
    elif policy and strategy == "fsdp2" and version != "0.5":
        notes.append(TRINITY_06_OFFLOAD)
    manual = [flag for flag, on in flags.items() if on and not flag.endswith("offload_policy")]
    if strategy == "fsdp2" and manual and not policy and not disagree:
        notes.append(_manual_offload_note(manual, where))
    if any(flags.values()) and strategy != "fsdp2":
        notes.append(_offload_without_fsdp2_note(strategy, given))
    return strategy == "fsdp2" and policy, notes + _engine_section_notes(reader)


def _strategy_notes(strategy: str) -> list[str]:
    """A note on a trainer `strategy` other than FSDP's, which the tables and the memory model are (none for FSDP)."""
    if strategy in ("fsdp", "fsdp2"):
        return []
    return [(f"trainer.trainer_strategy is {strategy}: the tables and the memory model are "
             "FSDP's (fsdp, or fsdp2 for Offload), so the verdict and the plans are for an FSDP trainer")]


def _read_sequence_parallel(reader: _Reader) -> tuple[int, list[str]]:
    """``trainer.ulysses_sequence_parallel_size`` (default 1), and a note on each role's own SP (`ROLE_SP_KEYS`) that
    differs from it."""
    sp = reader.count(("trainer", "ulysses_sequence_parallel_size"), 1)
    notes = []
    for path in ROLE_SP_KEYS:
        role_sp = _leniently(reader.integer, path)
        if role_sp is not None and role_sp != sp:
            notes.append(f"{'.'.join(path)} {role_sp} is not trainer.ulysses_sequence_parallel_size {sp}: Trinity with "
                         f"verl before 0.8 runs that role at SP {role_sp} (with the trainer's token budget), Trinity 0.6 "
                         f"on verl 0.8 or later at SP {sp}; the verdict is at SP {sp}: set them alike (--write does)")
    return sp, notes


def _read_max_model_len(reader: _Reader) -> tuple[int | None, list[str]]:
    """``model.max_model_len``; where it is not set, ``max_prompt_tokens + max_response_tokens`` as Trinity takes it
    (with a note), where both are given; else None."""
    length = reader.integer(("model", "max_model_len"))
    if length is not None:
        return length, []
    prompt, response = (_leniently(reader.integer, ("model", key)) for key in ("max_prompt_tokens",
                                                                                "max_response_tokens"))
    if prompt is None or response is None:
        return None, []
    length = prompt + response
    return length, [(f"model.max_model_len is not set: Trinity takes max_prompt_tokens + max_response_tokens = "
                     f"{prompt} + {response} = {length}, as the verdict does")]


def read_trinity_config(text: str, name: str, environ: Mapping[str, str],
                        version: TrinityVersion | None = None) -> TrinityConfig:
    """Read what rft-solver needs from a Trinity config's text; `name` (the file name) heads messages.

    Only the keys read are resolved, so interpolations elsewhere in the file do not matter. A value may
    be, or contain, ``${oc.env:VAR,default}`` or ``${oc.env:VAR}`` (resolved from `environ`, else the
    default; unset without a default is an error), possibly wrapped in ``${oc.decode:...}`` (decoded as
    a YAML scalar); any other interpolation (references such as ``${model.max_model_len}``,
    ``${oc.select:...}``) raises `ConfigError`. Whole numbers written as text (what environment variables
    give) are converted. ``model`` is the last part of ``model.model_path`` (``Qwen/Qwen3-8B`` and
    ``/models/Qwen3-8B/`` give ``Qwen3-8B``), not yet resolved against the catalogue.

    GPUs: ``cluster.node_num`` (default 1) times ``cluster.gpu_per_node``, minus the rollout GPUs
    (``explorer.rollout_model.engine_num`` (default 1) times an engine's GPUs, `_rollout_gpus`, plus
    ``explorer.auxiliary_models``; none in ``mode: train``). ``trainer_gpus`` is None without
    ``cluster.gpu_per_node``. The length is ``model.max_model_len``, else ``max_prompt_tokens +
    max_response_tokens`` (as Trinity takes it). Offload is on when ``trainer.trainer_strategy`` is ``fsdp2``
    (unset: Trinity 0.6's default, fsdp2, where `version` says 0.6 or, without it, the config has 0.6's keys;
    else fsdp) and the actor's ``offload_policy`` is true: in its ``fsdp_config`` (a role's ``engine``, `IGNORED_SECTION`,
    is named in a note and left out), and, where the config has Trinity 0.6's flags under ``trainer`` itself
    (`trainer_level_offload`), there too (verl before 0.8 takes those, 0.8 and later the actor's own).

    Raises `ConfigError`, one line naming the file and the key, for text that is not YAML or not a
    mapping, a missing ``model.model_path``, values that are not whole numbers, offload flags that are not
    booleans, unresolvable interpolations (in a key read only for a note, that note is skipped),
    and configs that leave the trainer no GPU; `QueryError` for arguments of the wrong type, or a `version`
    that is not a Trinity release rft-solver knows.
    """
    check_config_arguments(text, name, environ, version)
    data = load_config_mapping(text, name)
    reader = _Reader(data, name, environ)
    model_path, model = _read_model(reader)
    mode = _read_mode(reader)
    _check_verl_trainer(reader)
    _check_local_rollout(reader, mode)
    rollout, rollout_engine_gpus, auxiliary_gpus = _rollout_gpus(reader, mode)
    gpu_per_node, trainer_gpus = _read_trainer_gpus(reader, rollout)
    given = reader.word(("trainer", "trainer_strategy"))
    strategy = trainer_strategy(given, data, version)
    offload, offload_notes = _read_offload(reader, given, strategy, version)
    sp, sp_notes = _read_sequence_parallel(reader)
    length, length_notes = _read_max_model_len(reader)
    return TrinityConfig(
        model=model,
        model_path=model_path,
        max_model_len=length,
        trainer_gpus=trainer_gpus,
        node_gpus=gpu_per_node,
        rollout_gpus=rollout,
        sp=sp,
        offload=offload,
        max_token_len_per_gpu=reader.integer(("trainer", "max_token_len_per_gpu")),
        role_token_budgets=role_token_budgets(data, name, environ),
        strategy=given,
        notes=(*offload_notes, *_strategy_notes(strategy), *sp_notes, *length_notes),
        rollout_engine_gpus=rollout_engine_gpus,
        auxiliary_gpus=auxiliary_gpus,
    )


# --------------------------------------------------------------------------------------------------
# patch_trinity_config: ruamel round trip, comments kept
#
# ruamel keeps a comment that follows a block (blank lines, "# next section") on the last scalar of
# that block. When a key is appended to, or removed from, the end of a block, that trailing comment is
# moved so it stays in front of whatever came after the block.


def _tail(node: Any) -> tuple[Any, Any, int] | None:
    """Where the comment after `node`'s block lives: (container, key or index, slot), or None."""
    if isinstance(node, CommentedMap) and len(node):
        last = list(node.keys())[-1]
        deeper = _tail(node[last])
        return deeper if deeper is not None else (node, last, 2)
    if isinstance(node, CommentedSeq) and len(node):
        deeper = _tail(node[-1])
        return deeper if deeper is not None else (node, len(node) - 1, 0)
    return None


def _take_trailing(node: Any) -> str:
    """Cut the lines after `node`'s last line (blank lines, comments) off its tail comment; return them."""
    where = _tail(node)
    if where is None:
        return ""
    container, key, slot = where
    entry = container.ca.items.get(key)
    token = entry[slot] if entry and len(entry) > slot else None
    if token is None or not isinstance(token, CommentToken):
        return ""
    value = token.value
    newline = value.find("\n")
    if newline < 0:
        return ""
    own, rest = value[: newline + 1], value[newline + 1 :]
    if own.strip():
        token.value = own
    else:
        entry[slot] = None
    return rest


def _give_trailing(node: Any, container: Any, key: Any, rest: str) -> None:
    """Put the lines `rest` after `node`'s block (node is ``container[key]``)."""
    if not rest:
        return
    where = _tail(node) or (container, key, 0 if isinstance(container, CommentedSeq) else 2)
    holder, holder_key, slot = where
    entry = holder.ca.items.setdefault(holder_key, [None, None, None, None])
    token = entry[slot]
    if isinstance(token, CommentToken):
        token.value = token.value + rest if token.value.endswith("\n") else token.value + "\n" + rest
    else:
        entry[slot] = CommentToken("\n" + rest, CommentMark(0), None)


def _append(mapping: CommentedMap, key: str, value: Any) -> None:
    rest = _take_trailing(mapping)
    mapping[key] = value
    _give_trailing(value, mapping, key, rest)


def _delete(mapping: CommentedMap, key: str) -> None:
    """Remove `key`; the lines after its block (which lead into what follows) go to the key before it."""
    keys = list(mapping.keys())
    wrapper = CommentedMap()
    wrapper[key] = mapping[key]
    if key in mapping.ca.items:
        wrapper.ca.items[key] = mapping.ca.items[key]
    rest = _take_trailing(wrapper)
    del mapping[key]
    mapping.ca.items.pop(key, None)
    index = keys.index(key)
    if rest and index > 0:
        previous = keys[index - 1]
        _give_trailing(mapping[previous], mapping, previous, rest)
    # deleting the first key drops those lines: ruamel keeps them with the parent's key, out of reach


def _replace(mapping: CommentedMap, key: str, value: Any, lines: list[str]) -> None:
    """Overwrite `key`'s value, keeping its end-of-line comment the same distance after the value."""
    entry = mapping.ca.items.get(key)
    token = entry[2] if entry and len(entry) > 2 else None
    mapping[key] = value
    if not isinstance(token, CommentToken) or not token.value.startswith("#"):
        return
    try:
        line_no, key_col = mapping.lc.key(key)
        line, old_col = lines[line_no], token.column
    except (AttributeError, IndexError, KeyError, TypeError):  # pragma: no cover - no position to go by
        return
    written = line[key_col:old_col].rstrip()
    gap = max(old_col - (key_col + len(written)), 1)
    token.column = key_col + len(f"{key}: {_scalar(value)}") + gap


def _set(
    root: CommentedMap, path: tuple[str, ...], value: Any, lines: list[str], *, create: bool = True
) -> None:
    """Set `path` to `value`, adding missing sections (whole, at the end of their parent) if `create`."""
    node = root
    for depth, part in enumerate(path[:-1]):
        child = node.get(part)
        if isinstance(child, CommentedMap):
            node = child
            continue
        if child is not None:
            raise ConfigError(f"{'.'.join(path[: depth + 1])} must be a mapping, got {brief(child)}")
        if not create:
            return
        subtree: Any = value
        for missing in reversed(path[depth + 1 :]):
            subtree = CommentedMap([(missing, subtree)])
        if part in node:  # an empty section (``trainer:`` with nothing under it)
            node[part] = subtree
        else:
            _append(node, part, subtree)
        return
    last = path[-1]
    if last in node:
        _replace(node, last, value, lines)
    elif create:
        _append(node, last, value)


def _indentation(text: str) -> tuple[int, int, int]:
    """The config's block indentation as ruamel wants it: (mapping, sequence, offset of the dash)."""
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    mapping = sequence = offset = None
    for above, line in pairwise(lines):
        parent_col = len(above) - len(above.lstrip())
        col = len(line) - len(line.lstrip())
        opens = re.match(r"^\s*(- )?[^#]*:\s*(#.*)?$", above)
        if not opens or col < parent_col or (col == parent_col and not line.lstrip().startswith("- ")):
            continue
        if above.lstrip().startswith("- "):
            continue
        if line.lstrip().startswith("- ") and sequence is None and col >= parent_col:
            offset = col - parent_col
            content = len(line) - len(line.lstrip()[1:].lstrip())
            sequence = content - parent_col
        elif not line.lstrip().startswith("- ") and mapping is None:
            mapping = col - parent_col
    mapping = mapping or 2
    if sequence is None:
        sequence, offset = mapping, 0
    return mapping, max(sequence, (offset or 0) + 2), offset or 0


def _round_trip_yaml(text: str) -> YAML:
    """A ruamel round trip that writes the config `text` as it is written: its indentation, its document start and
    end markers, and its nulls as ``null`` where it writes them so."""
    mapping, sequence, offset = _indentation(text)
    yaml = YAML(typ="rt", pure=True)
    yaml.preserve_quotes = True
    yaml.width = 1 << 16
    yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
    if text.lstrip().startswith("---"):
        yaml.explicit_start = True
    if text.rstrip().splitlines()[-1:] == ["..."]:
        yaml.explicit_end = True
    if NULL_WORD.search(text):
        yaml.Representer = _NullWordRepresenter
    return yaml


def _apply_plan(data: CommentedMap, reading: Any, lines: list[str], plan: Plan, model: Model,
                environ: Mapping[str, str] | None, version: TrinityVersion | None) -> None:
    """Set `plan`'s keys in `data` (the config's round trip, whose text is `lines`; `reading`: its values as Trinity
    reads them), and remove a stale ``model.rope_scaling`` and, for Trinity 0.5, 0.6's flags under ``trainer``."""
    for key in _plan_keys(plan, model, reading, environ, version):
        if _writes(key, _dig(reading, key.path), environ):
            _set(data, key.path, key.value, lines, create=not key.existing_only)
    section = data.get("model")
    if isinstance(section, CommentedMap) and "rope_scaling" in section and _stale_rope(section["rope_scaling"],
                                                                                      plan, model):
        _delete(section, "rope_scaling")
    trainer = data.get("trainer")
    if version == "0.5" and isinstance(trainer, CommentedMap):  # 0.6's flags, which 0.5 refuses
        for flag in (flag for flag in OFFLOAD_FLAGS if flag in trainer):
            _delete(trainer, flag)


def patch_trinity_config(text: str, plan: Plan, model: Model, *, name: str = "config",
                         environ: Mapping[str, str] | None = None, version: TrinityVersion | None = None) -> str:
    """The user's Trinity config `text` with `plan` applied, everything else kept (ruamel round trip), for the
    Trinity release `version` where given (`_plan_keys`: 0.6 gets the offload flags under ``trainer`` too).

    Sets exactly the keys `trinity_fragment` sets (not its ``cluster``/``explorer`` section, nor its
    header comment); every other key, the key order, the comments and the quoting stay as they were,
    so a diff against the original touches only those keys' lines (and adds lines for new keys).
    Decisions:

    - Existing keys are overwritten in place (an interpolation such as ``${oc.env:MAX_MODEL_LEN,4096}``
      becomes the plan's number, unless it resolves to that number in `environ`: then it stays); missing
      keys and sections are appended at the end of their section.
    - YaRN: beyond the native context, ``model.rope_scaling`` gets ``rope_type``, ``factor`` and
      ``original_max_position_embeddings`` (other keys in it are kept); a model with a RoPE scaling of
      its own (Llama 3.1) gets none, and a ``model.rope_scaling`` of another type is removed (it would
      replace the model's own). At or below the native
      context an existing ``model.rope_scaling`` is removed, because a kept YaRN factor would
      contradict the new length; none is added.
    - Offload: the plan decides, as asked. With Offload, ``trainer.trainer_strategy: fsdp2`` and the
      three flags under the actor's and the ref's ``fsdp_config`` (and under ``trainer`` where the config has
      Trinity 0.6's flags there; those under a role's ``engine`` alike) are set (added where missing), and
      ``trainer.save_hf_checkpoint: never`` is added where the config does not choose its own. Without Offload, the flags that exist are set to
      false and none is added; ``trainer_strategy`` and ``save_hf_checkpoint`` are left alone (FSDP2
      without offload trains too).
    - Env cannot be patched (an environment variable, set before Ray starts): tell the user.
    - Per-role token limits the user set by hand (``...actor.ppo_max_token_len_per_gpu``, `ROLE_TOKEN_BUDGETS`)
      override ``trainer.max_token_len_per_gpu`` for their role: one above the plan's budget is lowered to it
      (the role would hold more tokens per GPU than the plan assumes); one at or below it is left, and
      `check_trinity_config` reports it if it is too small for the new length (on verl before 0.8; `ROLE_KEY_SCOPES`).
      A role's own SP (`ROLE_SP_KEYS`), which Trinity with verl before 0.8 takes over the trainer's, is set to the plan's.

    Raises `ConfigError` (one line, starting with `name`) for text that is not a YAML mapping, or a
    section on the way to a key that is not a mapping.
    """
    check_types(("plan", plan, Plan), ("model", model, Model), ("environ", environ, Mapping | None))
    check_config_arguments(text, name, {} if environ is None else environ, version)
    crlf = "\r\n" in text  # the file's own line endings, kept; ruamel works on "\n"
    text = text.replace("\r\n", "\n")
    yaml = _round_trip_yaml(text)
    data = load_config_mapping(text, name, yaml)
    if not isinstance(data, CommentedMap):
        raise ConfigError(f"{name}: a Trinity config is a mapping of sections")
    reading = load_config_mapping(text, name)  # the values as Trinity reads them (YAML 1.1: 010000 is 4096)
    try:
        _apply_plan(data, reading, text.splitlines(), plan, model, environ, version)
    except ConfigError as error:
        raise ConfigError(f"{name}: {error}") from None
    out = io.StringIO()
    yaml.dump(data, out)
    patched = out.getvalue()
    if crlf:
        patched = patched.replace("\n", "\r\n")
    return ("\ufeff" + patched.lstrip("\ufeff")) if text.startswith("\ufeff") else patched


def _scalar_kind(value: Any) -> type:
    """A value's kind as YAML writes it: bool (ruamel's anchored booleans too, which are ints), int, float, str,
    else its type."""
    if isinstance(value, (bool, ScalarBoolean)):
        return bool
    return next((kind for kind in (int, float, str) if isinstance(value, kind)), type(value))


def _writes(key: _Key, current: Any, environ: Mapping[str, str] | None) -> bool:
    """Whether `patch_trinity_config` writes `key` where the config has `current` there (None: nothing): not a
    choice of the user's it keeps (`_Key.default_only`), nor a key it only sets where present
    (`_Key.existing_only`), nor the plan's value already (of its type: written again, an anchored value would
    move its anchor to an alias), nor an interpolation that gives it (`_given`)."""
    already = _scalar_kind(current) is _scalar_kind(key.value) and current == key.value
    return (not (key.default_only and current is not None) and not (key.existing_only and current is None)
            and not already and _given(current, key.path, key.value, environ or {}) is None)


UNTYPED_SECTIONS = (("model", "rope_scaling"),)
"""Sections Trinity hands on as they are (a dict, not a typed field): OmegaConf converts nothing there, so an
``oc.env`` value stays a string."""


def _given(current: Any, path: tuple[str, ...], value: Any, environ: Mapping[str, str]) -> Any:
    """What `current`, a config's interpolation (``${oc.env:MAX_LEN,32768}``) at `path`, resolves to in
    `environ` where Trinity would read that as `value`, the patch's (the user's indirection then stays);
    None otherwise. A typed key takes the text of its value (any case for a boolean); in an untyped section
    (`UNTYPED_SECTIONS`) only the value itself, of its type (``oc.decode`` gives numbers)."""
    if not (isinstance(current, str) and "${" in current):
        return None
    resolved = _leniently(lambda _: _resolve(current, "", environ), ())
    if path[:2] in UNTYPED_SECTIONS:
        same = type(resolved) is type(value) and resolved == value
    else:
        text = str(resolved).lower() if isinstance(value, bool) else str(resolved)
        same = resolved is not None and text == _scalar(value)
    return resolved if same else None


def anchored_keys(text: str, plan: Plan, model: Model, *, name: str = "config",
                  environ: Mapping[str, str] | None = None, version: TrinityVersion | None = None) -> list[str]:
    """The keys `patch_trinity_config` changes that sit on a YAML anchor other keys repeat, in words: a value
    that is one (``&len 65536``, ``*len`` elsewhere: the patch changes the key and leaves those with the old
    value), or a mapping it changes a key of (``fsdp_config: &offload``, ``*offload`` elsewhere: the change
    reaches them too). (An interpolation it keeps, `kept_interpolations`, changes nothing.)"""
    yaml = YAML(typ="rt", pure=True)
    text = text.replace("\r\n", "\n")
    data = load_config_mapping(text, name, yaml)  # for the anchors
    reading = load_config_mapping(text, name)  # for the values, as `patch_trinity_config` decides on them
    repeated = {event.anchor for event in yaml.parse(text) if isinstance(event, AliasEvent)}

    def anchor_of(node: Any) -> str | None:
        anchor = getattr(getattr(node, "anchor", None), "value", None)
        return anchor if anchor in repeated else None

    found: dict[str, str] = {}  # per anchor, once
    for key in _plan_keys(plan, model, reading, environ, version):
        value = _dig(reading, key.path)
        if value == key.value or not _writes(key, value, environ):
            continue
        if (anchor := anchor_of(_dig(data, key.path))) is not None:
            found.setdefault(anchor, f"{'.'.join(key.path)} is the anchor &{anchor}, which other keys repeat "
                                     f"(*{anchor}): the patch sets it to {key.value} and they keep {value}")
        for depth in range(1, len(key.path)):
            if (anchor := anchor_of(node := _dig(data, key.path[:depth]))) is not None:
                others = [".".join(path) for path in _paths_to(data, node) if path != key.path[:depth]]
                repeat = f"{', '.join(others)} {'repeats' if len(others) == 1 else 'repeat'}" if others else (
                    "other keys repeat")
                found.setdefault(anchor, f"{'.'.join(key.path[:depth])} is the anchor &{anchor}, which {repeat} "
                                         f"(*{anchor}): the patch's changes in it ({key.path[-1]} to "
                                         f"{_scalar(key.value)}, ...) reach {'it' if len(others) == 1 else 'them'} too")
    return list(found.values())


def _paths_to(data: Any, node: Any) -> list[tuple[str, ...]]:
    """The key paths in `data` (nested mappings and lists, as ruamel reads them) at which `node` itself is: its
    anchor's and its aliases' places. Each container is entered once (its first place), so that aliases of aliases
    cost no more than the text: what an alias repeats is said where its anchor is."""
    found: list[tuple[str, ...]] = []
    entered: set[int] = set()
    stack: list[tuple[Any, tuple[str, ...]]] = [(data, ())]
    while stack:
        value, path = stack.pop()
        if value is node:
            found.append(path)
            continue
        if id(value) in entered or not isinstance(value, Mapping | list):
            continue
        entered.add(id(value))
        items = value.items() if isinstance(value, Mapping) else enumerate(value)
        stack.extend(reversed([(item, (*path, str(key))) for key, item in items]))
    return found


def kept_interpolations(text: str, plan: Plan, model: Model, *, name: str = "config",
                        environ: Mapping[str, str] | None = None, version: TrinityVersion | None = None) -> list[str]:
    """The keys `patch_trinity_config` leaves as the config's interpolations, which give the plan's value in
    `environ` (and may give another elsewhere), in words."""
    data = load_config_mapping(text.replace("\r\n", "\n"), name)
    return [f"{'.'.join(key.path)} stays {current}, which gives {given} in this environment: the plan holds for "
            "that value" for key in _plan_keys(plan, model, data, environ, version)
            if (given := _given(current := _dig(data, key.path), key.path, key.value, environ or {})) is not None]


# --------------------------------------------------------------------------------------------------
# check_trinity_config


NULL_WORD = re.compile(r"^[^#\n]*:[ \t]+null[ \t]*(#.*)?$", re.MULTILINE)
"""A ``key: null`` line, not in a comment: a config that has one has its nulls written as ``null`` (ruamel writes
nothing)."""


class _NullWordRepresenter(RoundTripRepresenter):
    """ruamel's round-trip representer, but writing None as ``null``."""

    def represent_none(self, data: None) -> Any:
        """``null``, not ruamel's empty value."""
        return self.represent_scalar("tag:yaml.org,2002:null", "null")


_NullWordRepresenter.add_representer(type(None), _NullWordRepresenter.represent_none)


def _stale_rope(rope: Any, plan: Plan, model: Model) -> bool:
    """Whether a config's ``model.rope_scaling`` must go: YaRN within the native context (its factor would
    contradict the length), or any scaling other than the model's own for a model that has one; a null one
    sets nothing, so it stays."""
    if rope is None:
        return False
    if model.rope_scaling is None:
        return plan.max_model_len <= model.native_context
    kind = (rope.get("rope_type") or rope.get("type")) if isinstance(rope, Mapping) else None
    return kind != model.rope_scaling


def _dig(mapping: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = mapping
    for part in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(part)
    return node


_ROPE_SCALING = ("model", "rope_scaling")


class _ConfigChecks:
    """The problems `check_trinity_config` finds in a config given as nested `mapping`s, and its values as Trinity
    reads them (interpolations resolved from `environ`): one that cannot be read is a problem too."""

    def __init__(self, mapping: Mapping[str, Any], environ: Mapping[str, str]):
        self.mapping, self.environ = mapping, environ
        self.problems: list[str] = []

    def value(self, path: tuple[str, ...]) -> Any:
        """The value at `path`, resolved and decoded (None where absent, or not resolved: a problem)."""
        raw = _dig(self.mapping, path)
        try:
            resolved = _resolve(raw, ".".join(path), self.environ)
        except ConfigError as error:
            self.problems.append(f"cannot check {error}")
            return None
        decoded = _decode_scalar(resolved) if isinstance(resolved, str) else resolved
        if path[:2] in UNTYPED_SECTIONS and isinstance(resolved, str) and not isinstance(decoded, str):
            self.problems.append(f"{'.'.join(path)} is the text {brief(resolved)}: {'.'.join(path[:2])} reaches the "
                                 "model as written (an oc.env value stays text there); write the number, or "
                                 "${oc.decode:...} around it")
        return decoded

    def number(self, path: tuple[str, ...]) -> float | None:
        """The number at `path` (`value`); None where absent or unreadable, or not a number (a problem)."""
        raw = self.value(path)
        if raw is None:
            return None
        if isinstance(raw, bool) or not isinstance(raw, (int, float)):
            self.problems.append(f"{'.'.join(path)} must be a number, got {brief(raw)}")
            return None
        return raw

    def rope_type(self) -> Any:
        """``model.rope_scaling``'s type (`value`): its ``rope_type``, else its ``type``."""
        return self.value((*_ROPE_SCALING, "rope_type")) or self.value((*_ROPE_SCALING, "type"))


def _check_sequence_parallel(checks: _ConfigChecks, model: Model, trainer_gpus: int) -> int:
    """Check the trainer's SP against `trainer_gpus` and `model`'s heads; return it (1 where unset or below 1)."""
    sp_value = checks.number(("trainer", "ulysses_sequence_parallel_size"))
    sp = int(sp_value) if sp_value is not None else 1
    if sp < 1:
        checks.problems.append(f"trainer.ulysses_sequence_parallel_size must be at least 1, got {sp}")
        sp = 1
    if trainer_gpus < 1:
        checks.problems.append(f"the trainer needs at least 1 GPU, got {trainer_gpus}")
    elif trainer_gpus % sp:
        checks.problems.append(f"trainer.ulysses_sequence_parallel_size {sp} does not divide the {trainer_gpus} "
                               "trainer GPUs")
    heads = sp_rule_violation(model.num_attention_heads, model.num_key_value_heads, sp)
    if heads:
        checks.problems.append(f"trainer.ulysses_sequence_parallel_size: {heads} of {model.name}")
    return sp


def _check_token_budgets(checks: _ConfigChecks, length: float | None, sp: int) -> None:
    """Check that ``trainer.max_token_len_per_gpu`` and the roles' own budgets (`ROLE_TOKEN_BUDGETS`), where set, hold
    a sequence of `length` at `sp`."""
    for path in (("trainer", "max_token_len_per_gpu"), *ROLE_TOKEN_BUDGETS):
        budget = checks.number(path)
        if budget is not None and length is not None and budget < (least := least_token_budget(length, sp)):
            # verl needs a micro-batch to hold the longest sequence: Trinity with older verl raises a budget to that.
            raised = f"Trinity with verl before 0.8 raises it to ceil({_number(length)} / {sp}) = {least}"
            effect = (f"{raised}, and Trinity 0.6 on verl 0.8 or later ignores the key" if path in ROLE_TOKEN_BUDGETS
                      else f"verl 0.8 or later stops at the first sequence longer than that, and {raised}")
            checks.problems.append(
                f"{'.'.join(path)} {_number(budget)} x SP {sp} is below model.max_model_len {_number(length)}: "
                f"{effect} (Trinity's default is ceil(2 x {_number(length)} / {sp}) = {math.ceil(2 * length / sp)})"
            )


def _check_prompt_and_response(checks: _ConfigChecks, length: float | None) -> None:
    """Check ``model.max_prompt_tokens`` and ``max_response_tokens``: at least 0, and together within `length`."""
    prompt, response = checks.number(("model", "max_prompt_tokens")), checks.number(("model", "max_response_tokens"))
    for key, tokens in (("max_prompt_tokens", prompt), ("max_response_tokens", response)):
        if tokens is not None and tokens < 0:
            checks.problems.append(f"model.{key} must be at least 0, got {_number(tokens)}")
    if prompt is not None and response is not None and length is not None and prompt + response > length:
        checks.problems.append(
            f"model.max_prompt_tokens {_number(prompt)} + model.max_response_tokens {_number(response)} exceed "
            f"model.max_model_len {_number(length)}"
        )


def _yarn_setting(wanted: float, native: int) -> str:
    """The fix that sets the YaRN ``model.rope_scaling`` of factor `wanted` over the `native` context, in words."""
    return f"set {{rope_type: yarn, factor: {wanted!r}, original_max_position_embeddings: {native}}}"


def _check_rope_scaling(checks: _ConfigChecks, model: Model, length: float | None) -> None:
    """Check ``model.rope_scaling`` against `model` and `length`: a mapping, replacing no RoPE scaling of the model's
    own, and YaRN where, and only where, the length is beyond the native context (`_check_yarn`)."""
    native, own_rope = model.native_context, model.rope_scaling
    rope = _dig(checks.mapping, _ROPE_SCALING)
    given_rope = checks.rope_type()
    if own_rope is not None and rope is not None and given_rope != own_rope:
        checks.problems.append(f"model.rope_scaling ({brief(given_rope)}) would replace {model.name}'s own {own_rope} "
                               "RoPE scaling: remove it")
    wanted = model.yarn_factor(int(length)) if length is not None else None
    if rope is not None and not isinstance(rope, Mapping):  # Trinity refuses it whatever the length, as --write does
        fix = _yarn_setting(wanted, native) if length is not None and wanted is not None else "remove it"
        checks.problems.append(f"model.rope_scaling must be a mapping, got {brief(rope)}: {fix}")
    if length is not None and length <= native and own_rope is None and given_rope == "yarn":
        checks.problems.append(f"model.rope_scaling: max_model_len {_number(length)} is within {model.name}'s native "
                               f"context of {native}: YaRN is not needed there (it stretches the positions the model "
                               "was trained on); remove it")
        checks.value((*_ROPE_SCALING, "factor"))  # Trinity resolves it all the same: one it cannot is a problem too
    if length is not None and wanted is not None:
        if rope is None:
            checks.problems.append(f"model.rope_scaling: max_model_len {_number(length)} is beyond {model.name}'s "
                                   f"native context of {native}: {_yarn_setting(wanted, native)}")
        elif isinstance(rope, Mapping):
            _check_yarn(checks, native, length, wanted)


def _check_yarn(checks: _ConfigChecks, native: int, length: float, wanted: float) -> None:
    """Check a ``model.rope_scaling`` mapping where `length` is beyond the `native` context: YaRN, with a factor and
    original length that cover the length as the guide sets them (factor `wanted` over `native`)."""
    rope_type = checks.rope_type()
    if rope_type != "yarn":
        checks.problems.append(f"model.rope_scaling.rope_type must be yarn, got {brief(rope_type)}")
    # A value that cannot be read is a problem already (number says so): only a wrong or missing one is.
    factor_path = (*_ROPE_SCALING, "factor")
    factor = checks.number(factor_path)
    original_path = (*_ROPE_SCALING, "original_max_position_embeddings")
    original = checks.number(original_path)
    # Other values than the guide's may still cover the length (Qwen's model cards: factor 4 over 32768).
    if factor is None and _dig(checks.mapping, factor_path) is None:
        checks.problems.append(f"model.rope_scaling.factor must be max_model_len / {native} = {wanted!r}, got None")
    if original is None and _dig(checks.mapping, original_path) is None:
        checks.problems.append(f"model.rope_scaling.original_max_position_embeddings must be {native}, got None")
    if factor is not None:
        original = native if original is None else original  # missing: said above; YaRN then takes the native
        if problem := _yarn_coverage_problem(factor, original, native, length, wanted):
            checks.problems.append(problem)


def _yarn_coverage_problem(factor: float, original: float, native: int, length: float, wanted: float) -> str | None:
    """What is wrong with a YaRN `factor` over `original` positions for `length` (the guide's: `wanted` over
    `native`): covering fewer tokens, or covering them otherwise than the guide; None where it is the guide's."""
    covers = factor * original
    guide = f"factor max_model_len / {native} = {wanted!r} over {native}"
    if covers < length:
        return (f"model.rope_scaling (factor {factor!r} over {original!r}) covers {_number(covers)} tokens, fewer "
                f"than max_model_len {_number(length)}: set the guide's {guide}")
    if not math.isclose(factor, wanted, rel_tol=1e-9) or original != native:
        more = ": it stretches the positions more than the length needs" if covers > length else ""
        return (f"model.rope_scaling (factor {factor!r} over {original!r}) covers the length, but not as the guide "
                f"sets it, {guide}{more}")
    return None


def _check_dynamic_batch(checks: _ConfigChecks) -> None:
    """Check that the dynamic batch size keys (`DYNAMIC_BATCH_KEYS`) are booleans, and on."""
    for path in DYNAMIC_BATCH_KEYS:
        value = checks.value(path)  # once: an unresolvable value is one problem, not one per look
        if not _boolean_like(value):
            checks.problems.append(f"{'.'.join(path)} must be true or false, got {brief(value)}: Trinity refuses it")
        elif _turned_off(value):
            scope = ROLE_KEY_SCOPES.get(path)
            checks.problems.append(f"{'.'.join(path)} is false: verl then ignores the token budget "
                                   "(max_token_len_per_gpu), which the tables measured and the plan sets, and fills "
                                   "micro-batches by sequence count: set it to true" + (f" ({scope})" if scope else ""))


def _check_trainer_level_flags(checks: _ConfigChecks, version: TrinityVersion | None) -> None:
    """Check that a config for Trinity 0.5 has none of Trinity 0.6's offload flags under ``trainer`` itself."""
    trainer = checks.mapping.get("trainer")
    refused = [f"trainer.{flag}" for flag in OFFLOAD_FLAGS if isinstance(trainer, Mapping) and flag in trainer]
    if version == "0.5" and refused:
        keys, them = ("keys", "them") if len(refused) > 1 else ("a key", "it")
        checks.problems.append(f"{', '.join(refused)}: {keys} of Trinity 0.6's trainer, which Trinity 0.5 refuses (its "
                               f"TrainerConfig has no such key), so the config does not load: remove {them} and set "
                               "the roles' fsdp_config flags (--write does; the verdict reads the roles', as 0.5 "
                               "would)")


def _check_offload_strategy(checks: _ConfigChecks, version: TrinityVersion | None, actor_noted: bool) -> None:
    """Check that an ``offload_policy`` that is on (the trainer's, or a role's; with `actor_noted`, not the
    trainer's or the actor's) has the trainer strategy fsdp2."""
    given = checks.value(("trainer", "trainer_strategy"))
    strategy = trainer_strategy(given, checks.mapping, version)
    got = brief(given) if given else "none (Trinity before 0.6 takes fsdp)"
    noted = (("trainer", "offload_policy"), _offload_path("actor", "offload_policy")) if actor_noted else ()
    for policy in [("trainer", "offload_policy"), *(_offload_path(role, "offload_policy") for role in ROLES)]:
        if policy in noted:
            continue
        if checks.value(policy) is True and strategy != "fsdp2":
            checks.problems.append(f"{'.'.join(policy)} needs trainer.trainer_strategy fsdp2, got {got}")


def _check_no_config_path(checks: _ConfigChecks) -> None:
    """Check that the config has no deprecated ``trainer.trainer_config_path``."""
    if _dig(checks.mapping, ("trainer", "trainer_config_path")) is not None:
        checks.problems.append("trainer.trainer_config_path is deprecated: Trinity refuses it where "
                               "trainer.trainer_config is empty (0.5, and 0.6 on verl before 0.8) and otherwise never "
                               "reads it; move its settings under trainer.trainer_config")


def _check_whole_nodes(checks: _ConfigChecks, trainer_gpus: int) -> None:
    """Check ``cluster.gpu_per_node`` (where given) and that `trainer_gpus` wider than a node take whole nodes."""
    per_node = checks.number(("cluster", "gpu_per_node"))
    if per_node is not None and (per_node < 1 or not float(per_node).is_integer()):
        checks.problems.append(f"{NODE_SIZE_KEY} must be a whole number of at least 1, got {_number(per_node)}")
    elif per_node is not None and (spread := whole_nodes_violation(trainer_gpus, int(per_node), NODE_SIZE_KEY)):
        checks.problems.append(spread)


def check_trinity_config(
    mapping: Mapping[str, Any], model: Model, trainer_gpus: int, *, environ: Mapping[str, str] | None = None,
    version: TrinityVersion | None = None, strategy_noted: bool = False,
) -> list[str]:
    """Trinity's (and verl's) own rules on a config given as nested mappings; the problems, [] if none.

    Checks: SP divides the trainer GPUs and the model's attention heads, and SP and the KV heads divide
    one another; ``max_token_len_per_gpu * sp >= max_model_len`` (a micro-batch holds the longest sequence, verl's
    ``rearrange_micro_batches``) when ``max_token_len_per_gpu`` is
    set (likewise the actor's ``ppo_max_token_len_per_gpu`` and the ref's
    ``log_prob_max_token_len_per_gpu`` when set by hand, as they override it);
    ``max_prompt_tokens + max_response_tokens <= max_model_len`` when both are set; beyond the native
    context of a model without a RoPE scaling of its own, ``model.rope_scaling`` is YaRN with
    ``factor == max_model_len / native`` and ``original_max_position_embeddings == native``;
    ``offload_policy`` (the trainer's, Trinity 0.6's, or a role's ``fsdp_config``) needs ``trainer_strategy:
    fsdp2``; dynamic batch sizes stay on; no deprecated ``trainer.trainer_config_path``;
    a trainer wider than a node uses whole nodes (when ``cluster.gpu_per_node`` is given).

    Interpolated values are resolved from `environ` (default: none set, so defaults apply); one that
    cannot be resolved, or is not a number, is reported as a problem. `strategy_noted` leaves out the
    ``offload_policy`` rule for the trainer's and the actor's, for a caller whose notes on the config say it
    (`TrinityConfig.notes` on the actor's offload flags, or Trinity 0.6's under ``trainer``); other roles' still
    get it.
    """
    checks = _ConfigChecks(mapping, environ or {})
    sp = _check_sequence_parallel(checks, model, trainer_gpus)
    length = checks.number(("model", "max_model_len"))
    _check_token_budgets(checks, length, sp)
    _check_prompt_and_response(checks, length)
    _check_rope_scaling(checks, model, length)
    _check_dynamic_batch(checks)
    _check_trainer_level_flags(checks, version)
    _check_offload_strategy(checks, version, strategy_noted)
    _check_no_config_path(checks)
    _check_whole_nodes(checks, trainer_gpus)
    return checks.problems
