"""The keys a plan sets: one list drives both the fragment and the patch; and the comments both write on it."""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict

from solver.memory import (
    MemoryAnswer,
    first_even_dim_release,
    lora_parameters,
    shown_host_need,
    shown_training_host_need,
)
from solver.query import (
    ACTOR_ROLLOUT_REF,
    CRITIC_ENGINE_MICRO_BATCH_SIZES,
    CRITIC_MICRO_BATCH_SIZES,
    CRITIC_REMOVE_PADDING_KEY,
    ROLE_MICRO_BATCH_SIZES,
    ROLE_TOKEN_BUDGETS,
    TRAINER_TOKEN_BUDGET,
    ConfigAdapter,
    role_budget_sources,
    token_cap_words,
)
from solver.results import Plan, lowered_budget_undone, no_checkpoint_words, yarn_beyond_words
from solver.rules import (
    COMMAND_OPTIONS,
    DPO_PAIR_SIZES,
    OptionNames,
    host_ram_check_words,
    least_token_budget,
    lora_configs_words,
    mapped_partial_rotary,
    mapped_rope_theta,
    mapped_theta_words,
    one_sequence_per_micro_batch,
    rope_theta_to_set,
    sp_gpus_violation,
    trainer_gpus_on_node,
)
from solver.tables import (
    KNOWN_TRINITY_RELEASES,
    LOADING_RANKS,
    CriticStates,
    ExpertLayout,
    Model,
    ModelLoading,
    QueryError,
    TrinityVersion,
    and_joined,
    brief,
    counted_expert_layout,
    counted_release,
    model_loaders,
    model_loading,
    release_name,
    remove_padding_violation,
    shown_number,
    trinity_release,
    written_layout,
)
from solver.tables.peft_names import LoraTargets
from solver.trinity.keys import (
    CRITIC,
    CRITIC_BUDGETS,
    CRITIC_DYNAMIC_KEY,
    CRITIC_ENGINE,
    CRITIC_ENGINE_DYNAMIC_KEY,
    CRITIC_ENGINE_SP_KEY,
    CRITIC_MODEL_FSDP,
    CRITIC_SP_KEY,
    DEPRECATED_MICRO_BATCH_SIZES,
    DYNAMIC_BATCH_KEYS,
    FSDP_SIZE_KEYS,
    GRADIENT_CHECKPOINTING_KEY,
    IGNORED_SECTION,
    LORA_CONFIGS,
    OFFLOAD_FLAGS,
    REMOVE_PADDING_KEYS,
    ROLE_BUDGET_KEYS,
    ROLE_BUDGET_PATHS,
    ROLE_DYNAMIC_BATCH_KEYS,
    ROLE_ENGINE_SP_KEYS,
    ROLE_SP_KEYS,
    ROLES,
    ROLLOUT_MODEL,
    critic_of_another_model,
    offload_path,
    ref_forward_runs,
    trainer_level_offload,
    trains_critic,
    trains_dpo,
    value_at,
)

COMMENT_WIDTH = 100
"""The width rft-solver's comments in a Trinity config are wrapped to (a fragment's, and --write's notes): each line,
with its indentation and ``# ``, at most this long, bar a single longer word and a command to paste, kept whole; about
as long as a Trinity config's own lines."""


NUMBER_WITH_UNIT = re.compile(r"\b(\d+(?:[.,]\d+)*) (GiB|GB|MiB|TB|GPUs?|tokens?|nodes?|s)\b")
"""A number and the unit after it (``128 GiB``, ``8 GPUs``, ``131072 tokens``, ``30 s``), which a comment keeps on one
line (`comment_paragraph`)."""
_NO_BREAK = "\ue000"
"""The placeholder that stands for the space between a number and its unit while a comment is wrapped: a private-use
character, which rft-solver's comments do not hold, and which `textwrap` takes for no space."""


def comment_paragraph(words: str, indent: int, hanging: str = "") -> list[str]:
    """`words` as the lines of a comment paragraph at column `indent`, without their ``# ``: wrapped at spaces alone
    (never inside a word, a flag, a path or a URL, nor between a number and its unit, `NUMBER_WITH_UNIT`) so that
    each line, with its indentation and ``# ``, is at most `COMMENT_WIDTH` long (bar a single word longer), its further
    lines starting with `hanging`."""
    joined = NUMBER_WITH_UNIT.sub(rf"\1{_NO_BREAK}\2", words)
    return [line.replace(_NO_BREAK, " ") for line in textwrap.wrap(
        joined, COMMENT_WIDTH - indent - 2, subsequent_indent=hanging, break_long_words=False, break_on_hyphens=False)]


def trinity_06_keys_comment(version_option: str = COMMAND_OPTIONS.trinity_05) -> str:
    """The fragment's comment on a plan's offload flags under ``trainer`` itself, Trinity 0.6's keys, made for no
    Trinity release (--write's note above them where it adds them), naming the caller's `version_option` that leaves
    them out (`OptionNames.trinity_05`)."""
    return (f"these three are Trinity 0.6's (0.5 refuses them: {version_option} leaves them out); on verl before 0.8, "
            "Trinity 0.6 reads these, not the roles' fsdp_config flags")


def critic_engine_comment(version_option: str | None = COMMAND_OPTIONS.trinity_05) -> str:
    """The fragment's comment on the critic's offload flags under its FSDP engine (`CRITIC_ENGINE`), which Trinity 0.6
    on verl 0.8 or later reads (--write's note above them where it adds them): made for no Trinity release, naming the
    caller's `version_option` that leaves them out, which 0.5 refuses; None: made for 0.6."""
    refused = "" if version_option is None else f" (0.5 refuses them: {version_option} leaves them out)"
    return f"Trinity 0.6 on verl 0.8 or later reads these{refused}, not the critic's model's"


class PlanKey(BaseModel):
    """One config key a plan sets: its path, its value and the comment written beside it."""

    model_config = ConfigDict(frozen=True, protected_namespaces=())

    path: tuple[str, ...]
    value: Any
    comment: str | None = None
    default_only: bool = False
    """A value the plan suggests but the user's own choice overrides: --write sets it only where missing."""
    existing_only: bool = False
    """A value for a key of the user's config only: set where the config has it, never added."""
    after: str | None = None
    """The scalar key of the same mapping that --write adds this one right after where the mapping has it (``rope_type``
    after the legacy ``type`` it repeats); else a new key goes where --write puts new keys."""


def host_memory_comment(plan: Plan, model: Model, version: TrinityVersion | None, nodes: int | None = None,
                        rollout_gpus: int | None = None, *, host_ram_gb: float | None = None,
                        host_ram_source: str = "--host-ram") -> str | None:
    """What `plan` of `model` needs of a node's host memory under the Trinity release `version` the config is written
    for (`for_release`), as a comment says it (the fragment's header, and with Offload --write's above
    ``trainer.trainer_strategy``), and whether the plan was held to `host_ram_gb` (from `host_ram_source`;
    `host_ram_check_words`): ``host memory: 82.8 GiB per node for Offload; not checked: --host-ram not given``; on the
    layout `Plan.host_memory_words` takes; None where it says nothing."""
    host = for_release(plan, model, version).host_memory_words(nodes, rollout_gpus)
    return None if host is None else f"host memory: {host}{host_ram_check_words(host_ram_gb, host_ram_source)}"


OTHER_RELEASE_REASONS = {
    "0.6": ("the reference model in fp32 where 0.5's is bf16",
            "each pinned block by rows where 0.5's verl 0.7 places it",
            "the routed experts as transformers 5 holds them"),
    "0.5": ("the reference model in bf16 where 0.6's is fp32",
            "each pinned block as its verl 0.7 places it where 0.6's is by rows",
            "the routed experts at the larger of transformers 4's and 5's layouts"),
}
"""Why the other Trinity release's host memory need differs (`other_release_words`), by that release: how it builds
the reference model (`solver.memory.REFERENCE_BYTES`), places the pinned blocks (`pinned_rounding`'s
`first_even_dim`) and holds a mixture of experts' routed experts (`written_layout`)."""
REFERENCE_BUILT_05 = ("a reference model in bf16, which 0.5.0 and 0.5.1 build whatever the algorithm (0.5.2 where a "
                      "KL term reads it), where 0.6 builds none")
"""Why Trinity 0.5's host memory need differs from 0.6's for a run that builds no reference model on 0.6 (SFT on verl
0.8 or later, ``--no-reference``) without LoRA: 0.5.0 and 0.5.1 build one all the same, and 0.5.2 where a KL term
reads it (`solver.tables.REFERENCE_ALWAYS_RELEASES`; `_release_counts`)."""


class EstimateHost(NamedTuple):
    """A memory estimate's (`MemoryAnswer`'s) host memory counts, by a `Plan`'s names (`HostCounted`): ``solve
    memory``'s."""

    gpus: int
    trainer_nodes: int
    host_memory_gb: float | None
    offload: bool
    reference_model: bool
    lora_rank: int
    critic: CriticStates | None
    trinity_version: str | None
    expert_layout: ExpertLayout
    model_loading: ModelLoading
    compute_capability: str | None


HostCounted = Plan | EstimateHost
"""What the host memory figure of another Trinity release is counted from (`other_release_words`): a plan's fields, or
a memory estimate's as `EstimateHost` gives them."""


def estimate_other_release_words(answer: MemoryAnswer, model: Model, compute_capability: str | None) -> str:
    """`other_release_words` for the memory estimate `answer` of `model` (the catalogue's: its LoRA adapter counted on
    the answer's targets) on a GPU of `compute_capability`: where a Trinity release is named, the other release's host
    memory figure where it differs, and why, as ``solve``'s host memory row gives it; "" otherwise."""
    on_node = trainer_gpus_on_node(answer.gpus, answer.node_gpus)
    targets = (None if answer.lora_target_modules is None
               else LoraTargets(answer.lora_target_modules, answer.lora_exclude_modules))
    counted = EstimateHost(
        answer.gpus, answer.gpus // on_node, answer.host_memory_gib, answer.offload, answer.reference_model,
        answer.lora_rank, answer.critic, release_name(answer.trinity_version),
        counted_expert_layout(answer.trinity_version), answer.model_loading, compute_capability)
    version = None if answer.trinity_version is None else trinity_release("trinity_version", answer.trinity_version)
    return other_release_words(counted, model.model_copy(update={"lora_targets": targets}), version)


def other_release_words(plan: HostCounted, model: Model, version: TrinityVersion | None) -> str:
    """Where a Trinity release `version` is named (None: none, "") and the other release (0.6 for 0.5, 0.5 for 0.6)
    needs another host memory figure for `plan` of `model` (a `Plan`, or a memory estimate's counts: `HostCounted`; as
    `for_release` counts it), that one and why, as a clause after the
    need (`Plan.host_memory_words`) and its check: ``; Trinity 0.6 needs 351.6 (the reference model in fp32 where
    0.5's is bf16; ...)``; each reason only where it alone moves the other release's figure (that figure with this
    release's reference model, placement of the pinned blocks, experts' layout or loading in its stead differs:
    `_other_release_reasons`); "" otherwise. ``solve``'s host memory row gives it, and ``solve memory``'s host memory
    line (`estimate_other_release_words`), where runs for either release are compared; a config written for one
    release says its own figure alone."""
    if version is None or plan.host_memory_gb is None or plan.trainer_nodes is None:
        return ""
    other: TrinityVersion = "0.6" if version == "0.5" else "0.5"
    here, there = (shown_host_need(**counts) for counts in (_host_counts(plan, model, version),
                                                            _release_counts(plan, model, other)))
    if f"{here:.1f}" == f"{there:.1f}":
        return ""
    reasons = _other_release_reasons(plan, model, version, other)
    return f"; Trinity {other} needs {there:.1f}" + (f" ({'; '.join(reasons)})" if reasons else "")


def _other_release_reasons(plan: HostCounted, model: Model, version: TrinityVersion,
                           other: TrinityVersion) -> list[str]:
    """Why the Trinity release `other` needs another host memory figure for `plan` of `model` than `version`, in words
    (`OTHER_RELEASE_REASONS`, and which ranks each loads the model on, naming the release whose loading each counts,
    `_loading_release`, where `other`'s is not the whole minor version's): each part of `other`'s count (its reference
    model's precision, its pinned blocks' placement, its experts' layout, its loading) whose replacement by
    `version`'s alone changes `other`'s figure as shown."""
    counted, own = _release_counts(plan, model, other), _host_counts(plan, model, version)
    there = shown_host_need(**counted)
    built = counted["reference"] != own["reference"]  # a reference model `version` builds none of for the plan
    swaps: list[dict[str, Any]] = [  # the reference model's bytes alone: `other`'s placement kept
        {"reference": own["reference"]} if built else {"version": version, "placed": first_even_dim_release(other)},
        {"placed": first_even_dim_release(version)}, {"experts": own["experts"]}, {"loading": own["loading"]}]
    reference, blocks, experts = OTHER_RELEASE_REASONS[other]
    reference = REFERENCE_BUILT_05 if built else reference
    ranks = [LOADING_RANKS[model_loaders(counts["loading"], model.tied_embeddings)] for counts in (counted, own)]
    loader = _loading_release(plan, model, other)
    loading = (f"the model loaded on {ranks[0]}{'' if loader == other else f' as {loader} loads it'} where "
               f"{_loading_release(plan, model, version)}'s loads it on {ranks[1]}")
    return [words for words, swap in zip((reference, blocks, experts, loading), swaps, strict=True)
            if shown_host_need(**{**counted, **swap}) != there]


def _release_counts(plan: HostCounted, model: Model, other: TrinityVersion) -> dict[str, Any]:
    """`_host_counts` of `plan` under the other Trinity release `other` (`other_release_words`), with the reference
    model that release builds: the plan's, and under 0.5 one for any plan without LoRA, as 0.5 builds one whatever the
    algorithm (`solver.trinity.config.builds_reference_model`), where a plan for 0.6 may count none (SFT)."""
    counts = _host_counts(plan, model, other)
    return {**counts, "reference": counts["reference"] or (other == "0.5" and not plan.lora_rank)}


def _host_counts(plan: HostCounted, model: Model, version: TrinityVersion | None) -> dict[str, Any]:
    """What `for_release` counts of `plan` of `model` under the Trinity release `version`, as `shown_host_need` and
    `shown_training_host_need` take it by name (`plan.trainer_nodes` given)."""
    return {"model": model, "gpus": plan.gpus, "node_gpus": plan.gpus // (plan.trainer_nodes or 1),
            "offload": plan.offload, "version": version, "reference": plan.reference_model,
            "lora_rank": plan.lora_rank, "critic": plan.critic,
            "experts": written_layout(version, plan.expert_layout), "loading": _release_loading(plan, model, version)}


def _loading_release(plan: HostCounted, model: Model, version: TrinityVersion) -> str:
    """The Trinity release whose loading of `plan`'s `model` at start-up the figure for `version` counts
    (`counted_release`, `_release_loading`), as the words name it: that one where it names a patch, or where the
    patches of `version` all load it alike; else the patches that load it as counted (0.5 without its patch counts
    every rank, 0.5.2's loading, where 0.5.0 and 0.5.1 load an untied model on rank 0 alone)."""
    release = counted_release(version, plan.expert_layout, plan.trinity_version) or version
    if release != version:
        return release
    counted = model_loaders(_release_loading(plan, model, version), model.tied_embeddings)
    patches = {patch: model_loaders(loading_under(plan, model, patch), model.tied_embeddings)
               for patch in (f"{version}.{number}" for number in KNOWN_TRINITY_RELEASES[version])}
    if len(set(patches.values())) == 1:
        return version
    return and_joined([patch for patch, loading in patches.items() if loading == counted])


def _release_loading(plan: HostCounted, model: Model, version: TrinityVersion | None) -> ModelLoading:
    """Which ranks load `plan`'s `model` at start-up under the Trinity release `version`: the plan's own where it was
    counted for a release of `version` (`counted_release`), else that release's on the plan's GPU, with Offload or
    the release's default strategy (`Plan.model_loading`, `solver.tables.model_loading`)."""
    return loading_under(plan, model, counted_release(version, plan.expert_layout, plan.trinity_version))


def loading_under(plan: HostCounted, model: Model, release: str | None) -> ModelLoading:
    """Which ranks load `plan`'s `model` at start-up under the Trinity `release` (a release's name; None: none named):
    the plan's own where it was counted for that release, else the release's on the plan's GPU, with Offload or the
    release's default strategy (`Plan.model_loading`, `solver.tables.model_loading`)."""
    if release == plan.trinity_version:
        return plan.model_loading
    return model_loaders(model_loading(release, None, plan.compute_capability, plan.offload), model.tied_embeddings)


def for_release(plan: Plan, model: Model, version: TrinityVersion | None) -> Plan:
    """`plan` of `model` with the host memory need (`Plan.host_memory_gb`, where it has one) of the Trinity release
    `version` (None: 0.6's), and what training holds where that is less (`Plan.host_training_gb`), whose reference
    model's shards differ (`solver.memory.REFERENCE_BYTES`): a plan made for
    no release, or another, gets the figure a config written for `version` holds, with a reference model where the
    plan counted one (`Plan.reference_model`) and its critic (`Plan.critic`), on the nodes its trainer fills
    (`Plan.trainer_nodes`; a plan from JSON made before that field keeps its own figure), its routed experts laid out
    as the plan counted them where `version` holds them so (`Plan.expert_layout`: 0.5.1's separate under 0.5), and
    the ranks loading the model at start-up the plan counted where its release is of `version`, else `version`'s on
    the plan's GPU (`Plan.model_loading`, `solver.tables.model_loading`)."""
    if plan.host_memory_gb is None or plan.trainer_nodes is None:
        return plan
    counted = _host_counts(plan, model, version)
    return plan.model_copy(update={"host_memory_gb": shown_host_need(**counted),
                                   "host_training_gb": shown_training_host_need(**counted)})


def evidence_comment(plan: Plan, model: Model, gpu: str | None) -> str:
    """What `plan` of `model` on `gpu` rests on (`Plan.evidence_text`) as a comment says it: the fragment's header, and
    where the plan is not documented, --write's note above ``model.max_model_len``."""
    return f"evidence: {plan.evidence_text(gpu or '', model.name)}"


def caution_comment(caution: str) -> str:
    """One of a plan's cautions as a comment says it: the fragment's header, and --write's note on a thin headroom."""
    return f"caution: {caution}"


def check_gpu_name(gpu: str | None) -> None:
    """`QueryError` for a `gpu` name that is not printable text: a line break would end the comment it goes into."""
    if gpu is not None and not gpu.isprintable():
        raise QueryError(f"gpu must be printable text, got {brief(gpu)}")


def keys_for_plan(plan: Plan, model: Model, config: Any = None, environ: Mapping[str, str] | None = None,
                  version: TrinityVersion | None = None,
                  version_option: str = COMMAND_OPTIONS.trinity_05, gpu: str | None = None,
                  dpo: bool | None = None, config_lora: bool = False, token_cap: str | None = None) -> list[PlanKey]:
    """The keys `plan` sets, in the fragment's order (model section first, then trainer); the offload flags under each
    role's ``fsdp_config``, and without Offload the flags `config` (the user's, None for none) has, set to false;
    Trinity 0.6's flags under ``trainer`` with Offload or where `config` has them (never for 0.5); dynamic batch sizes
    (for DPO the trainer's and the actor's off, `_dynamic_batch_keys`), gradient checkpointing and remove padding back
    on where `config` turns them off (its interpolations resolved from `environ`; not Trinity 0.6's
    ``trainer.use_remove_padding`` for 0.5, which refuses it), remove padding off for a model it would train wrong
    (`remove_padding_violation`; the critic's own too, but for 0.6, which ignores it), and for that model dynamic batch
    sizes off (the critic's own too where `config` has it, but for 0.6) with one sequence per micro-batch
    (`_micro_batch_keys`: the critic's where the algorithm trains one, not DPO's; for DPO, the actor's one pair by
    `version`: `dpo`, whether the plan counted a pair, an answer's `Answer.dpo_pairs`, or else where `config` trains DPO
    in `environ`, `config_trains_dpo`); for DPO the actor's one pair for any model, its update in rows as a config has
    it off on a release `version` may be (`config_dpo_in_rows`) or as the keys turn it off (`turns_dpo_rows`, and for a
    config that has it on): its micro-batches hold rows, not a token budget, and the plan counts one pair, Trinity's
    default budget (`solver.query.check_dpo_budget_unread`); no LoRA config where `config` sets LoRA or the plan's LoRA
    is a config's own that it keeps (`config_lora`: `solver.query.Query.config_lora`), whose adapter it would replace;
    a role's ``fsdp_size`` -1 where `config` has one that does not shard over every trainer GPU (`_fsdp_size_keys`).
    For `version` 0.5, none that 0.5 refuses (`keys_05_refuses`, `KEYS_05_LACKS`); `version_option`: the caller's
    name for that, as the comment on 0.6's flags says it (`trinity_06_keys_comment`); `gpu`: the plan's GPU type, as
    the comment on no Hugging Face checkpoint says it (`no_checkpoint_words`; None: not known); `token_cap`: how the
    comment on a budget the plan's cap binds names the cap (`solver.results.Answer.token_cap_words`; None: not known,
    either source)."""
    readings = _config_readings(config, environ)
    padded = one_sequence_per_micro_batch(model)
    # DPO's actor update in rows of one pair, as the plans count it (`solver.api`'s budget: the default's): a config's
    # dynamic batch sizes, on, split its pairs (``dpo-pair-dynamic``), so they are turned off as without a config
    rows_off = turns_dpo_rows(plan, model, config, bool(dpo)) or (_trains_dpo(readings) and not padded)
    pair = bool(dpo) or _trains_dpo(readings) or rows_off
    rows = rows_off or (pair and _actor_update_in_rows(readings, version))
    # without a config: ppo, Trinity's default, but for a plan that counted DPO's pair (DPO trains no critic)
    critic = trains_critic(readings.value(("algorithm", "algorithm_type"))) and not pair
    return [
        *_model_keys(plan, model, config, readings, version, config_lora or _sets_lora(config, environ)),
        *_trainer_keys(plan, version, gpu, padded, token_cap),
        *_dynamic_batch_keys(readings, DYNAMIC_BATCH_KEYS[:1], padded,  # the trainer's own
                             pair and DPO_PAIR_SIZES[version == "0.5"] == 2, pair, rows_off),
        *(_remove_padding_keys(model, readings, REMOVE_PADDING_KEYS[0], version,
                               version_option if version is None else "")
          if version != "0.5" else []),  # a key 0.5 refuses
        *_trainer_offload_flags(plan, config, version, version_option),
        # verl's model keys, under trainer_config before the roles' keys there
        *_turned_back_on(readings, [GRADIENT_CHECKPOINTING_KEY]),
        # verl's own key, commented where 0.5 reads it
        *_remove_padding_keys(model, readings, REMOVE_PADDING_KEYS[1], version, commented=version == "0.5"),
        # a role's keys together, a section's together (the fragment nests them)
        *(key for role in ROLES
          for key in _role_keys(plan, role, config, readings, version, padded, pair, rows, rows_off)),
        *_dynamic_batch_keys(readings, [ROLE_DYNAMIC_BATCH_KEYS["rollout"]], padded),  # read before verl 0.8
        *([] if padded or pair else _rollout_rows_flag_keys(readings, version)),
        *_own_budget_keys(plan, "rollout", readings, version),
        *(_micro_batch_keys("rollout") if padded or rows else []),
        # the critic's own, which 0.5 reads
        *(_remove_padding_keys(model, readings, CRITIC_REMOVE_PADDING_KEY, version, commented=False)
          if padded and version != "0.6" else []),
        *(_dynamic_batch_keys(readings, [CRITIC_DYNAMIC_KEY], padded) if version != "0.6" else []),
        # its model's keys beside the one above (the fragment nests them)
        *_grouped([*_critic_keys(plan, version, version_option, readings), *_critic_sp_keys(plan, readings, version),
                   *_fsdp_size_keys(CRITIC, version, plan, readings),
                   *(_critic_engine_micro_batch_keys(version, version_option) if padded and critic else []),
                   # the engine's own dynamic batch sizes as a role's own (0.5 refuses the section)
                   *(_dynamic_batch_keys(readings, [CRITIC_ENGINE_DYNAMIC_KEY], padded) if version != "0.5" else [])]),
        *_own_budget_keys(plan, "critic", readings, version),  # where the algorithm trains a critic
        *(_micro_batch_keys("critic") if padded and critic else []),
        *(_deprecated_size_keys("critic") if critic else []),
    ]


Path = tuple[str, ...]
"""A config key's path (``("trainer", "max_token_len_per_gpu")``)."""


class _ConfigReadings(NamedTuple):
    """What the plan's keys read of the user's config, its interpolations resolved: a value (None where absent or not
    resolved), whether a flag is off (as Trinity reads a boolean), the number a key holds (text read as a typed
    key's; None for none), and a value read so that one not resolved raises its `ConfigError` (`get`)."""

    value: Callable[[Path], Any]
    turned_off: Callable[[Path], bool]
    number: Callable[[Path], float | None]
    get: Callable[[Path], Any]


_NO_CONFIG = _ConfigReadings(value=lambda path: None, turned_off=lambda path: False, number=lambda path: None,
                             get=lambda path: None)
"""The readings of no config: no value, no flag off, no number."""


def _config_readings(config: Any, environ: Mapping[str, str] | None) -> _ConfigReadings:
    """`_ConfigReadings` of `config` (None for none: `_NO_CONFIG`), its interpolations resolved from `environ`."""
    if config is None:
        return _NO_CONFIG
    # ruamel (the interpolations' grammar, YAML scalars): only where a config is read
    from solver.trinity.interpolation import ConfigValues, NoEnvironment, VariableUnset, decode_scalar, dotted
    from solver.trinity.reader import read_or_none, turned_off

    values = ConfigValues(config, {} if environ is None else environ)  # an empty one read as given (`NoEnvironment`)

    def read(path: Path) -> Any:
        try:
            return values.get(path)
        except VariableUnset as unset:  # read in no environment: the fragment's header names the key
            if isinstance(environ, NoEnvironment):
                environ.left_unread(dotted(path), unset)
            raise

    def value(path: Path) -> Any:
        return read_or_none(read, path)

    def number(path: Path) -> float | None:
        read = value(path)
        read = decode_scalar(read) if isinstance(read, str) else read
        return read if isinstance(read, (int, float)) and not isinstance(read, bool) else None

    return _ConfigReadings(value=value, turned_off=lambda path: turned_off(value(path)), number=number, get=read)


def _model_keys(plan: Plan, model: Model, config: Any, readings: _ConfigReadings,
                version: TrinityVersion | None, config_lora: bool = False) -> list[PlanKey]:
    """The model section's keys (LoRA's worded for the Trinity release `version`): the length (and
    ``explorer.rollout_model.max_model_len`` where `config` gives the rollout model the model's, as `readings` read
    them: a length of the rollout's own is left; unset, Trinity gives it the model's, ``set_if_none``,
    ``common/config_validator.py:680`` to ``:685`` in 0.6.0, ``:594`` in 0.5.0), and YaRN's rope scaling where the
    length needs it (`PlanKey.default_only` where `config`'s, of its own form, reaches the length, `_yarn_reaches`:
    --write keeps it, as the model cards' factor 4 over 32768), its type under ``rope_type``, which the rollout's vLLM
    reads alone (Trinity hands it the mapping as it is, past the filling-in that would copy the legacy ``type`` over:
    `solver.trinity.checks.HANDED_PAST_WORDS`), and under ``type`` too where `config` has that key (the model cards'
    form), and ``model.rope_theta`` where vLLM would otherwise rotate the model at another base
    (`Model.vllm_rope_theta_lost`; a config's own is kept); the same, where present, under
    ``explorer.rollout_model.rope_scaling`` where `config` gives the rollout model the one it gives the model, so that
    the two still agree."""
    length, native = plan.max_model_len, model.native_context
    rollout_length = (*ROLLOUT_MODEL, "max_model_len")
    given_length = readings.number(("model", "max_model_len"))
    same_length = given_length is not None and readings.number(rollout_length) == given_length
    keys = [PlanKey(path=("model", "max_model_len"), value=length),
            *([PlanKey(path=rollout_length, value=length, existing_only=True)] if same_length else []),
            *_lora_keys(plan, model, config_lora, version)]
    factor = model.yarn_factor(length)
    if factor is None:
        return keys
    kept = _yarn_reaches(readings.value, length, native)  # the user's own, which --write keeps
    rope = ("model", "rope_scaling")
    given = value_at(config, rope)
    factor_words = f"max_model_len / {native}" + (f"; {yarn_beyond_words(model)}" if plan.yarn_beyond_validated
                                                  else "")
    lost, theta = model.vllm_rope_theta_lost, rope_theta_to_set(model)
    theta_keys = [PlanKey(path=("model", "rope_theta"), value=theta, default_only=True,
                          comment=f"{model.name}'s own; the rollout's vLLM takes {lost[1]:.0f} "
                          "where the rope_scaling comes without it")] if lost is not None and theta is not None else []
    rollout_rope = (*ROLLOUT_MODEL, "rope_scaling")
    agreed = isinstance(given, Mapping) and value_at(config, rollout_rope) == given
    mapped = mapped_rope_theta(model)
    mapped_words = mapped_theta_words(counted_release(version, plan.expert_layout, plan.trinity_version))
    rollout_keys = _yarn_keys(rollout_rope, model, factor, kept, mapped) if agreed else []
    return [*keys, *_yarn_keys(rope, model, factor, kept, mapped, factor_words, mapped_words), *theta_keys,
            *rollout_keys]


def _yarn_keys(rope: Path, model: Model, factor: float, kept: bool, mapped: float | None,
               factor_words: str | None = None, mapped_words: str | None = None) -> list[PlanKey]:
    """The YaRN keys of `model`'s RoPE scaling mapping at `rope` (``model.rope_scaling``, or the rollout model's copy
    of it): `factor` over its native context, each only where missing where the mapping is the user's own that
    reaches the length (`kept`), its type under ``rope_type``, which the rollout's vLLM reads alone (added right after
    a legacy ``type``), and under ``type`` too only where the mapping has that key; and the model's own
    ``partial_rotary_factor`` where missing and vLLM's class would take another, or the trainer's another
    (`mapped_partial_rotary`: Trinity has no key of its own for it), and its own ``rope_theta`` where missing,
    `mapped` (`mapped_rope_theta`: the release's trainer fails without it on transformers 5, `mapped_words`,
    `mapped_theta_words`). Comments (`factor_words` on the factor) on ``model.rope_scaling``'s alone."""
    partial = mapped_partial_rotary(model)
    return [
        PlanKey(path=(*rope, "rope_type"), value="yarn", default_only=kept, after="type"),
        PlanKey(path=(*rope, "type"), value="yarn", existing_only=True),
        PlanKey(path=(*rope, "factor"), value=factor, default_only=kept, comment=factor_words),
        PlanKey(path=(*rope, "original_max_position_embeddings"), value=model.native_context, default_only=kept),
        *([PlanKey(path=(*rope, "partial_rotary_factor"), value=partial[0], default_only=True,
                   comment=None if factor_words is None else partial[1])]
          if partial is not None else []),
        *([PlanKey(path=(*rope, "rope_theta"), value=mapped, default_only=True,
                   comment=None if factor_words is None else f"{model.name}'s own" + (
                       f"; {mapped_words}" if mapped_words else ""))]
          if mapped is not None else []),
    ]


def _sets_lora(config: Any, environ: Mapping[str, str] | None) -> bool:
    """Whether `config` (None for none) turns LoRA on, read in `environ` (`solver.trinity.config.written_lora`)."""
    if config is None:
        return False
    from solver.trinity.config import written_lora  # the config's reader: only where a config is given

    return written_lora(config, "config", {} if environ is None else environ) is not None


def _lora_keys(plan: Plan, model: Model, config_lora: bool, version: TrinityVersion | None) -> list[PlanKey]:
    """The LoRA config that turns on LoRA at the rank `plan` counted (`Plan.lora_rank`), for a fragment made without a
    config with LoRA (not `config_lora`: a cluster job's, one planned with --lora-rank alone, or beside a config that
    trains fully, which would otherwise train what the plan did not count), which every release reads
    (``model.lora_configs``: Trinity 0.6 on verl 0.8 or later reads no other LoRA key, and before 0.8, as 0.5, it fills
    verl's ``lora_rank`` from it); Trinity then makes a new adapter on the plan's ``target_modules`` where it has
    them (`Plan.lora_config`), else on its default, ``all-linear``, which the plans count, and builds no reference
    model (its comment: `lora_configs_words` of `model` and `version`).
    None for full fine-tuning, or where a config sets LoRA (beside the fragment, or the one the plans' query was read
    from, whose adapter the fragment would replace)."""
    if not plan.lora_rank or config_lora:
        return []
    return [PlanKey(path=LORA_CONFIGS, value=[plan.lora_config], comment=lora_configs_words(
        model, version, written_layout(version, plan.expert_layout), plan.lora_targets))]


def _yarn_reaches(value: Callable[[Path], Any], length: int, native: int) -> bool:
    """Whether a config's ``model.rope_scaling`` (`value` reads the config, its interpolations resolved) is a YaRN of
    its own form (over other than the guide's `native` positions, as the model cards' over 32768) whose positions
    reach `length` (factor x original at least it), as ``rope-scaling-off-guide`` says: --write keeps it; not where
    it is none, of another type, lacks a number, or is the guide's own form (its factor, stale from another length,
    is set for this one)."""
    rope = ("model", "rope_scaling")
    given = value(rope)
    named = [key for key in ("rope_type", "type") if isinstance(given, Mapping) and key in given]
    if not named or any(value((*rope, key)) != "yarn" for key in named):  # vLLM refuses two types that differ
        return False
    factor, original = (value((*rope, key)) for key in ("factor", "original_max_position_embeddings"))
    numbers = all(isinstance(number, (int, float)) and not isinstance(number, bool) and math.isfinite(number)
                  for number in (factor, original))
    return numbers and original != native and factor * original >= length


def _trainer_keys(plan: Plan, version: TrinityVersion | None, gpu: str | None, padded: bool,
                  token_cap: str | None) -> list[PlanKey]:
    """The trainer's own keys: SP and the token budget (where its micro-batches are `padded`, one sequence each,
    which leaves it unread, only in place of a config's own, at Trinity's default: its checks read it; the plan's
    where the roles' own budgets cap it too, so that Trinity 0.6 on verl 0.8 or later, which ignores the roles' keys,
    runs the budget the plan's figures are for), and with Offload FSDP2 and no Hugging Face checkpoints (its
    comment as for a plan on `gpu`: `no_checkpoint_words`). A lowered budget's comment says, unless `version` is 0.6,
    that Trinity 0.5.0 raises it back to the default (`lowered_budget_undone`), and where the plan's cap binds, whose
    cap it is (`token_cap`: its answer's words; None: `token_cap_words` names either source)."""
    length = plan.max_model_len
    strategy = PlanKey(path=("trainer", "trainer_strategy"), value="fsdp2", comment="CPU offload needs FSDP2")
    undone = lowered_budget_undone(plan, version)
    cap = plan.token_budget_cap
    why = f": {token_cap or token_cap_words(cap, None, None)}" if cap else ", which does not fit"
    lowered = (f"below Trinity's default ceil(2 * {length} / {plan.sp}){why}; at least "
               f"ceil({length} / {plan.sp})" + (f"; {undone}" if undone else ""))
    no_checkpoint = PlanKey(
        path=("trainer", "save_hf_checkpoint"),
        value="never",
        comment=f"no Hugging Face weights saved, {no_checkpoint_words(gpu)}",
        default_only=True,
    )
    default = f"ceil(2 * {length} / {plan.sp}), Trinity's default"
    budget = PlanKey(
        path=("trainer", "max_token_len_per_gpu"),
        value=plan.max_token_len_per_gpu,
        comment=(f"{default}; unread with dynamic batch sizes off, one sequence per micro-batch" if padded
                 else lowered if plan.lowered_budget else f"{default}, written out"),
        existing_only=padded,
    )
    return [
        *([strategy] if plan.offload else []),
        PlanKey(path=("trainer", "ulysses_sequence_parallel_size"), value=plan.sp),
        budget,
        *([no_checkpoint] if plan.offload else []),
    ]


def _turned_back_on(readings: _ConfigReadings, paths: Iterable[Path]) -> list[PlanKey]:
    """The keys of `paths` that the config turns off, back on: the plan's token budget applies only with dynamic
    batch sizes, and its memory only with gradient checkpointing and remove padding."""
    return [PlanKey(path=path, value=True, existing_only=True) for path in paths if readings.turned_off(path)]


def _dynamic_batch_keys(readings: _ConfigReadings, paths: Iterable[Path], padded: bool,
                        actor_pair: bool = False, dpo: bool = False, dpo_rows: bool = False) -> list[PlanKey]:
    """The dynamic batch size keys of `paths`: back on where the config turns them off (`_turned_back_on`), but for
    `dpo` the trainer's and the actor's, which off keep the actor's pairs whole (``dpo-pair-dynamic``,
    `solver.trinity.checks._check_dpo_pair_dynamic`): where the actor's update is to run in rows (`dpo_rows`), off: the
    trainer's always, with why (Trinity's default is on; the actor's unset takes it), so that a fragment holds it, the
    actor's own where the config has it on (Trinity 0.5 reads it); for a model whose micro-batches are `padded` (remove
    padding off, `remove_padding_violation`), off: the trainer's always, with why (where the actor's size below is DPO's
    2, `actor_pair`, saying so), a role's where the config has it (unset, it takes the trainer's)."""
    if dpo_rows:
        return [PlanKey(path=path, value=False, comment=DPO_DYNAMIC_BATCH_WORDS) if len(path) == 2
                else PlanKey(path=path, value=False, existing_only=True)
                for path in paths if path == DYNAMIC_BATCH_KEYS[0]
                or path == DYNAMIC_BATCH_KEYS[1] and not readings.turned_off(path)]
    if not padded:
        return _turned_back_on(readings, [path for path in paths if not (dpo and path in DYNAMIC_BATCH_KEYS[:2])])
    comment = PADDED_DPO_DYNAMIC_BATCH_WORDS if actor_pair else PADDED_DYNAMIC_BATCH_WORDS
    return [PlanKey(path=path, value=False, comment=comment) if len(path) == 2
            else PlanKey(path=path, value=False, existing_only=True) for path in paths]


def _rollout_rows_flag_keys(readings: _ConfigReadings, version: TrinityVersion | None) -> list[PlanKey]:
    """The rollout's own dynamic batch size flag, true, where Trinity 0.6 on verl before 0.8 (a release `version` may
    be) would leave it none, so that verl runs the actor's log-prob recompute in rows
    (`solver.trinity.reader.rollout_flag_left_none`), of more than one sequence (the rollout's micro-batch size, unset
    the actor's), which the token budget does not bound; set, that pass takes the budget on every release."""
    from solver.trinity.reader import rollout_flag_left_none  # ruamel: only where a config is read

    size = next((number for path in ROLE_MICRO_BATCH_SIZES[2::-2] if (number := readings.number(path)) is not None), 1)
    # the dynamic batch size keys are names alone, as `readings` take them (a reader's paths may hold list indices)
    if size <= 1 or not rollout_flag_left_none(lambda path: readings.value(tuple(map(str, path))), version):
        return []
    return [PlanKey(path=ROLE_DYNAMIC_BATCH_KEYS["rollout"], value=True, comment=ROLLOUT_ROWS_FLAG_WORDS)]


ROLLOUT_ROWS_FLAG_WORDS = ("on: unset beside an unset actor's use_dynamic_bsz, Trinity 0.6 on verl before 0.8 leaves "
                           "it none, and verl runs the old log-prob recompute (bypass_mode false) in rows of the "
                           "micro-batch size, past the token budget")
"""The comment on the rollout's ``log_prob_use_dynamic_bsz: true`` that `_rollout_rows_flag_keys` writes."""
PADDED_DYNAMIC_BATCH_WORDS = ("off, with one sequence per micro-batch (the micro-batch sizes of 1 below), as the "
                              "caution says")
"""The comment on ``trainer.use_dynamic_bsz: false`` for a model whose micro-batches are padded."""
PADDED_DPO_DYNAMIC_BATCH_WORDS = ("off, with one sequence per micro-batch (the micro-batch sizes of 1 below; the "
                                  "actor's 2 holds one DPO pair, as its comment says), as the caution says")
"""`PADDED_DYNAMIC_BATCH_WORDS` where the actor's micro-batch size below is DPO's pair, 2 (`DPO_PAIR_SIZES`)."""
DPO_DYNAMIC_BATCH_WORDS = ("off for DPO: the actor's micro-batch then holds the size below in rows, whole pairs; "
                           "on, it is cut by tokens and its pairs split (the plan counts one pair's tokens)")
"""The comment on ``trainer.use_dynamic_bsz: false`` written without a config for DPO (`_dynamic_batch_keys`)."""


def _micro_batch_keys(section: str, dpo: bool = False, version: TrinityVersion | None = None) -> list[PlanKey]:
    """One sequence per micro-batch for `section`'s passes (a role's, the rollout's recompute: `ROLE_MICRO_BATCH_SIZES`;
    the critic's, `CRITIC_MICRO_BATCH_SIZES`, where the config's algorithm trains one or no config is given: a fragment
    is merged into a config that may train one), which a padded micro-batch needs to stay within the token budget with
    dynamic batch sizes off; but the actor's one pair for `dpo` (`DPO_PAIR_SIZES`, by the release `version`). Set
    outright: Trinity leaves some unset where verl then fails (`solver.trinity.keys.MICRO_BATCH_UNSET_ON_08`)."""
    paths = [path for path in (*ROLE_MICRO_BATCH_SIZES, *CRITIC_MICRO_BATCH_SIZES) if path[-2] == section]
    if section == "actor" and dpo:
        size = DPO_PAIR_SIZES[version == "0.5"]
        return [PlanKey(path=path, value=size, comment=DPO_PAIR_COMMENT if size == 2 else None) for path in paths]
    return [PlanKey(path=path, value=1) for path in paths]


def _deprecated_size_keys(section: str) -> list[PlanKey]:
    """`section`'s deprecated micro-batch size for the whole batch (`DEPRECATED_MICRO_BATCH_SIZES`) null, read as unset,
    where the config has it, for any model: verl before 0.8 takes it over the per-GPU size (`_micro_batch_keys`' where
    written), divided by the data-parallel ranks, not doubled for DPO (an odd number splits its pairs), and verl 0.8
    or later refuses it beside that size whatever the model (with dynamic batch sizes on, which `--write` turns back
    on for a model not padded, neither reads it)."""
    return [PlanKey(path=path, value=None, existing_only=True) for path in DEPRECATED_MICRO_BATCH_SIZES
            if path[-2] == section]


def _fsdp_size_keys(section: tuple[str, ...], version: TrinityVersion | None, plan: Plan,
                    readings: _ConfigReadings) -> list[PlanKey]:
    """The ``fsdp_size`` keys under `section` (a role's, the critic's: `FSDP_SIZE_KEYS`; not the critic engine's for
    `version` 0.5, which refuses that section) -1, sharding the states over every trainer GPU as the plan counts them,
    where the config has them: a size below the GPUs shards them over groups of fewer (or fails, where the GPUs do not
    divide it, or is 0: `solver.trinity.checks`). One that already shards them over all of `plan`'s trainer GPUs, as
    `readings` read it, is left as written: a whole number below 0 or not below them (``create_device_mesh``'s
    ``fsdp_size < 0 or fsdp_size >= world_size``, ``workers/fsdp_workers.py:102`` in verl 0.7.1,
    ``workers/engine/fsdp/utils.py:52`` in 0.8.0; ``verl_legacy/verl_config.py:456`` in Trinity 0.6.0)."""
    return [PlanKey(path=path, value=-1, existing_only=True) for path in FSDP_SIZE_KEYS
            if path[:len(section)] == section and not (version == "0.5" and path[:-1] == CRITIC_ENGINE)
            and not _shards_over_every_gpu(readings.number(path), plan.gpus)]


def _shards_over_every_gpu(size: float | None, trainer_gpus: int) -> bool:
    """Whether an ``fsdp_size`` of `size` (None: not a number read here) shards a role's states over every one of
    `trainer_gpus` on every verl line (`_fsdp_size_keys`): a whole number (Trinity's int field refuses a float) below 0
    or not below them (0 is not: verl 0.8 or later divides by it)."""
    return isinstance(size, int) and (size < 0 or size >= trainer_gpus)


def _critic_engine_micro_batch_keys(version: TrinityVersion | None, version_option: str) -> list[PlanKey]:
    """One sequence per micro-batch for the critic's engine (`CRITIC_ENGINE_MICRO_BATCH_SIZES`), where the critic's own
    sizes are set (`_micro_batch_keys`), which Trinity 0.6 on verl 0.8 or later cuts the critic's passes by, leaving
    them none unset; none for `version` 0.5, which refuses the section (made for no release, the comment names
    `version_option`, which leaves them out)."""
    if version == "0.5":
        return []
    refused = f" (0.5 refuses them: {version_option} leaves them out)" if version is None else ""
    comment = (f"Trinity 0.6 on verl 0.8 or later cuts the critic's passes by these, not the critic's own sizes, and "
               f"fails on none{refused}")
    return [PlanKey(path=path, value=1, comment=comment if index == 0 else None)
            for index, path in enumerate(CRITIC_ENGINE_MICRO_BATCH_SIZES)]


def turns_dpo_rows(plan: Plan, model: Model, config: Any, dpo: bool = False) -> bool:
    """Whether the keys of `plan` for DPO (`Plan.dpo`, or the caller's `dpo`, as `keys_for_plan`'s: the fragment of a
    plan asked with ``dpo=True``) without a `config` (None) turn the trainer's dynamic batch sizes off, the actor's
    update in rows of one pair (`DPO_PAIR_SIZES`), as ``--write`` does a DPO config's: Trinity's default, on, splits
    the pairs (``dpo-pair-dynamic``); a padded `model`'s are off already (`one_sequence_per_micro_batch`)."""
    return config is None and (plan.dpo or dpo) and not one_sequence_per_micro_batch(model)


def config_trains_dpo(config: Any, environ: Mapping[str, str] | None = None) -> bool:
    """Whether `config` (None for none) trains DPO, its ``algorithm.algorithm_type`` read in `environ` (None: without an
    environment, an interpolation's default taken) as `keys_for_plan` reads it (`trains_dpo`, as
    `solver.trinity.read_trinity_config` reads `TrinityConfig.dpo`)."""
    return _trains_dpo(_config_readings(config, environ))


def config_trains_critic(config: Any, environ: Mapping[str, str] | None = None) -> bool:
    """Whether `config` (None for none: PPO, Trinity's default) trains a critic, its ``algorithm.algorithm_type`` read
    in `environ` as `keys_for_plan` reads it (`trains_critic`: where not, the keys set none of the critic's sizes)."""
    return trains_critic(_config_readings(config, environ).value(("algorithm", "algorithm_type")))


def _trains_dpo(readings: _ConfigReadings) -> bool:
    """Whether `readings`' ``algorithm.algorithm_type`` is DPO (`trains_dpo`)."""
    return trains_dpo(readings.value(("algorithm", "algorithm_type")))


def config_dpo_in_rows(config: Any, environ: Mapping[str, str] | None, version: TrinityVersion | None) -> bool:
    """Whether `config` (None for none), read in `environ`, trains DPO (`config_trains_dpo`) with the actor's update run
    with dynamic batch sizes off on a release `version` may be (`solver.trinity.reader.actor_update_in_rows`), as
    `keys_for_plan` reads it: it then writes the actor's one pair (`DPO_PAIR_SIZES`) for any model."""
    readings = _config_readings(config, environ)
    return _trains_dpo(readings) and _actor_update_in_rows(readings, version)


def _actor_update_in_rows(readings: _ConfigReadings, version: TrinityVersion | None) -> bool:
    """`solver.trinity.reader.actor_update_in_rows` of `readings`' dynamic batch size keys."""
    from solver.trinity.reader import actor_update_in_rows  # ruamel: only where a config is read

    # the dynamic batch size keys are names alone, as `readings` take them (a reader's paths may hold list indices)
    return actor_update_in_rows(lambda path: readings.value(tuple(map(str, path))), version)


def dpo_pair_note(name: str, model: Model, version: TrinityVersion | None,
                  version_option: str = COMMAND_OPTIONS.trinity_05, rows: bool = False) -> str | None:
    """What the actor's micro-batch size written for a DPO config (named `name`) of `model` means on each verl line,
    for the release `version` (`DPO_PAIR_SIZES`), naming the caller's `version_option` that writes 0.5's: ``--write``'s
    note, and `solver.trinity.PatchedConfig.dpo_note`; None with 0.5 (its 1, one pair there). The actor's update runs
    in rows of that size as the config has it (`rows`, `config_dpo_in_rows`; one padded sequence per micro-batch for a
    model trained so, `one_sequence_per_micro_batch`) or as what is made from it turns its dynamic batch sizes off."""
    padded = one_sequence_per_micro_batch(model)
    if version == "0.5":
        return None
    before = "Trinity 0.6 on verl 0.7" if version else "Trinity 0.5, 0.6 on verl 0.7"
    writer = "" if version else f" ({version_option} does)"
    how = (f"one padded sequence per micro-batch for {model.name}" if padded
           else "dynamic batch sizes off in the actor's update" if rows else
           "dynamic batch sizes on in the actor's update, which split its pairs")
    writes = "writes" if padded or rows else "turns them off and writes"
    return (f"{name} trains DPO with {how}, so what is made from it "
            f"{writes} {'.'.join(ROLE_MICRO_BATCH_SIZES[0])} 2, one pair, a chosen and a rejected sequence, as Trinity "
            f"0.6 on verl 0.8 or later needs; but no one size fits both verl lines: before verl 0.8 ({before}) "
            f"Trinity doubles it to 4 sequences, two pairs, so there write 1{writer}")


DPO_PAIR_COMMENT = ("2 for DPO: one pair, a chosen and a rejected sequence, as Trinity 0.6 on verl 0.8 or later "
                    "trains it (with 1 its DPO loss finds no rejected sequence); no one size fits both verl lines: "
                    "before verl 0.8 (Trinity 0.5, 0.6 on verl 0.7) Trinity doubles it to 4, two pairs, so write 1 "
                    "there")
"""The comment on the actor's micro-batch size of `DPO_PAIR_SIZES` 2."""


def _remove_padding_keys(model: Model, readings: _ConfigReadings, path: Path, version: TrinityVersion | None,
                         version_option: str = "", commented: bool = True) -> list[PlanKey]:
    """Remove padding at `path`: off for a `model` it would train wrong (`remove_padding_violation`; `commented`: with
    the comment that says why, and with a `version_option`, that Trinity 0.5 refuses the key and that option leaves it
    out; its code cited as the Trinity release `version` runs it), else back on where the config turns it off
    (`_turned_back_on`)."""
    violation = remove_padding_violation(model, version)
    if violation is None:
        return _turned_back_on(readings, [path])
    refused = f"; this key is Trinity 0.6's (0.5 refuses it: {version_option} leaves it out)" if version_option else ""
    return [PlanKey(path=path, value=False, comment=violation + refused if commented else None)]


def _trainer_offload_flags(plan: Plan, config: Any, version: TrinityVersion | None,
                           version_option: str) -> list[PlanKey]:
    """Trinity 0.6's offload flags under ``trainer``, with Offload or where `config` has them (never for 0.5; their
    comment names `version_option`)."""
    if version == "0.5" or not (plan.offload or trainer_level_offload(config)):
        return []
    # Trinity 0.6's, which it copies over the roles' on verl before 0.8 (its TrainerConfig has all three): without
    # them there, Offload would be off. Made for no release, they are the current one's, and their comment says
    # that Trinity 0.5 refuses them.
    comment = trinity_06_keys_comment(version_option) if version is None else None
    return [PlanKey(path=("trainer", flag), value=plan.offload, comment=comment if flag == OFFLOAD_FLAGS[0] else None)
            for flag in OFFLOAD_FLAGS]


def _role_keys(plan: Plan, role: str, config: Any, readings: _ConfigReadings,
               version: TrinityVersion | None, padded: bool, dpo: bool, rows: bool = False,
               rows_off: bool = False) -> list[PlanKey]:
    """A role's keys: its own SP (its engine's too, `ROLE_ENGINE_SP_KEYS`, but for `version` 0.5) and hand-set token
    budget where `config` has them, its dynamic batch sizes back
    on (off, with one sequence per micro-batch, where its micro-batches are `padded`: `_dynamic_batch_keys`; the
    actor's one pair for `dpo`: `_micro_batch_keys`, and so where the actor's update holds `rows`,
    `config_dpo_in_rows`, whatever the model, the ref's 1 beside it, which Trinity doubles to one pair before verl 0.8
    and verl 0.8 or later needs set with dynamic batch sizes off, `MICRO_BATCH_UNSET_ON_08`), and its
    offload flags (those under its ``engine`` too where `config` has them, but for `version` 0.5, which refuses that
    key: `KEYS_05_LACKS`; none for the ref where `plan` counts no reference model, `Plan.reference_model`: the run
    builds none to offload)."""
    # A role's own SP, which Trinity with verl before 0.8 takes over the trainer's, and its engine's, which verl 0.8
    # or later runs it at beside a trainer SP of 1 (0.5 refuses that key): the plan's too.
    keys = [PlanKey(path=path, value=plan.sp, existing_only=True)
            for path in (*ROLE_SP_KEYS, *(ROLE_ENGINE_SP_KEYS if version != "0.5" else ()))
            if path[len(ACTOR_ROLLOUT_REF)] == role]
    keys += _dynamic_batch_keys(
        readings, (path for path in DYNAMIC_BATCH_KEYS if path[:-1] == (*ACTOR_ROLLOUT_REF, role)), padded, dpo=dpo,
        dpo_rows=rows_off and role == "actor")
    keys += _micro_batch_keys(role, dpo, version) if padded or rows else []
    keys += _deprecated_size_keys(role)
    keys += _own_budget_keys(plan, role, readings, version)
    keys += _fsdp_size_keys((*ACTOR_ROLLOUT_REF, role), version, plan, readings)
    if role == "ref" and not plan.reference_model:
        return keys
    for section in ("fsdp_config", *([IGNORED_SECTION] if version != "0.5" else [])):
        for flag in OFFLOAD_FLAGS:
            path = offload_path(role, flag, section)
            if plan.offload and section == "fsdp_config":
                keys.append(PlanKey(path=path, value=True))
            elif config is not None and (plan.offload or role != "ref"):
                # The config's own flags elsewhere (unread, but said alike): all on; or, without Offload, the
                # actor's off. The reference model's stay as they are: the memory model counts none on the GPU,
                # so an offloaded one stays so.
                keys.append(PlanKey(path=path, value=plan.offload, existing_only=True))
    return keys


CRITIC_FLAGS: dict[CriticStates, tuple[bool, bool, bool]] = {
    "resident": (False, False, False), "reloaded": (True, True, False), "offloaded": (True, True, True)}
"""The critic's `OFFLOAD_FLAGS` that hold its states as each of `CriticStates` says (an offloaded one's all three, as
the actor's Offload: FSDP2's ``offload_policy`` turns the other two off)."""


def _critic_keys(plan: Plan, version: TrinityVersion | None, version_option: str,
                 readings: _ConfigReadings) -> list[PlanKey]:
    """The critic's offload flags where `plan` counts one (`Plan.critic`; where it counts none, `_critic_kept_keys`),
    as it counts its states (`CRITIC_FLAGS`), where the releases `version` may be read them: its own
    `CRITIC_MODEL_FSDP` (Trinity 0.5, and 0.6 on verl before 0.8) and, but for 0.5, which refuses it, its engine's
    `CRITIC_ENGINE` (0.6 on verl 0.8 or later; made for no release, its comment names `version_option`, which leaves it
    out). An offloaded one's own strategy FSDP2, which ``offload_policy`` needs (on verl 0.8 or later the critic runs
    the trainer's)."""
    if plan.critic is None:
        return _critic_kept_keys(plan, version, readings)
    comments = {CRITIC_MODEL_FSDP: f"the PPO critic's states {plan.critic}, as the plan counts them",
                CRITIC_ENGINE: critic_engine_comment(version_option if version is None else None)}
    strategy = PlanKey(path=(*CRITIC, "strategy"), value="fsdp2", comment=(
        "offload_policy needs FSDP2 (verl 0.8 or later runs the critic at trainer.trainer_strategy, fsdp2 unset in "
        "Trinity 0.6)"))
    return [*(PlanKey(path=(*section, flag), value=value,
                      comment=comments[section] if flag == OFFLOAD_FLAGS[0] else None)
              for section in (CRITIC_MODEL_FSDP, *([CRITIC_ENGINE] if version != "0.5" else []))
              for flag, value in zip(OFFLOAD_FLAGS, CRITIC_FLAGS[plan.critic], strict=True)),
            *([strategy] if plan.critic == "offloaded" else [])]


def _critic_sp_keys(plan: Plan, readings: _ConfigReadings, version: TrinityVersion | None) -> list[PlanKey]:
    """The critic's own SP (`CRITIC_SP_KEY`), and its engine's but for `version` 0.5 (`CRITIC_ENGINE_SP_KEY`, where
    Trinity 0.6 on verl 0.8 or later runs it; 0.5 refuses the section), where a config sets it and its algorithm
    trains a critic (`trains_critic`): the plan's, as a role's (`_role_keys`). Trinity with verl before 0.8 runs the
    critic at its own SP over the trainer's (``set_if_none``, ``trainer/verl/verl_config.py:597`` in 0.5.2,
    ``common/verl_config.py:585`` in 0.5.1, ``verl_legacy/verl_config.py:604`` in 0.6.0) and raises its token budget
    to hold a sequence at it (``_adjust_token_len_if_needed``, ``:610``, ``:597``, ``:617``), where the plans count
    the critic at their SP and ``--write`` judges its budgets there (`_own_budget_written`). Where the critic is
    another model (`critic_of_another_model`), whose heads the plan's SP may not divide (rft-solver does not know
    them), only a key whose SP does not divide the plan's trainer GPUs (`sp_gpus_violation`), which no release runs:
    Trinity with verl before 0.8 refuses the critic's (``_check_parallel_config``, ``verl_legacy/verl_config.py:608``
    in 0.6.0), and verl 0.8.0's engine lays its SP mesh out over GPUs // SP data-parallel ranks, which leaves GPUs
    out (``_init_device_mesh``, ``workers/engine/fsdp/transformer_impl.py:224``)."""
    if not trains_critic(readings.value(("algorithm", "algorithm_type"))):
        return []
    another = critic_of_another_model(readings.value)
    return [PlanKey(path=path, value=plan.sp, existing_only=True)
            for path in (CRITIC_SP_KEY, *([CRITIC_ENGINE_SP_KEY] if version != "0.5" else []))
            if not another or ((own := readings.number(path)) is not None
                               and sp_gpus_violation(plan.gpus, max(1, int(own))))]


def _grouped(keys: list[PlanKey]) -> list[PlanKey]:
    """`keys` with those of each section together (as the fragment nests them), each section where its first key
    was, its keys in their order (a section's own key where it was, not before its subsections'): the critic's engine
    SP beside its engine's offload flags."""
    first: dict[tuple[str, ...], int] = {}
    for index, key in enumerate(keys):
        for depth in range(1, len(key.path) + 1):
            first.setdefault(key.path[:depth], index)
    return sorted(keys, key=lambda key: [first[key.path[:depth]] for depth in range(1, len(key.path) + 1)])


def _critic_kept_keys(plan: Plan, version: TrinityVersion | None, readings: _ConfigReadings) -> list[PlanKey]:
    """Where `plan` counts no critic (``--critic none``) for a config whose algorithm trains one, and sets Trinity 0.6's
    flags under ``trainer`` to no Offload (`_trainer_offload_flags`): each of those the config's ``trainer`` holds on,
    under the critic's engine (`CRITIC_ENGINE`) where the config sets it not, as it was: verl 0.8 or later copies the
    trainer's flags into the critic's engine (Trinity 0.6.0's ``trainer/verl/config.py:504-506``), so the critic keeps
    where its states were held. None for 0.5, which refuses that key."""
    if version == "0.5" or plan.offload or not trains_critic(readings.value(("algorithm", "algorithm_type"))):
        return []
    held = [flag for flag in OFFLOAD_FLAGS if readings.value(("trainer", flag)) is True]
    return [PlanKey(path=(*CRITIC_ENGINE, flag), value=True, default_only=True, comment=(
        "the PPO critic's, as trainer's held them: the plan counted no critic and turns trainer's off"
        if flag == held[0] else None)) for flag in held]


def _given_budgets(readings: _ConfigReadings, ref_runs: bool) -> dict[str, float]:
    """The token budgets a config sets by hand (`readings`), by dotted key: ``trainer.max_token_len_per_gpu``
    (`TRAINER_TOKEN_BUDGET`), the roles' (`ROLE_TOKEN_BUDGETS`; the ref's only where its forward runs, `ref_runs`,
    and the rollout's only where the actor's old log-prob recompute may, `recompute_may_run`: elsewhere no pass reads
    them) and, where its algorithm trains a PPO critic (`trains_critic`), the critic's two (`CRITIC_BUDGETS`:
    elsewhere verl builds no critic to read them). ``--write`` leaves the others as they are."""
    from solver.trinity.reader import recompute_may_run  # ruamel: only where a config is read

    critic = trains_critic(readings.value(("algorithm", "algorithm_type")))
    unread = (*(() if ref_runs else ROLE_BUDGET_PATHS["ref"]),
              *(() if recompute_may_run(readings.get) else ROLE_BUDGET_PATHS["rollout"]))
    roles = (path for path in ROLE_TOKEN_BUDGETS if path not in unread)
    paths = (tuple(TRAINER_TOKEN_BUDGET.split(".")), *roles, *(CRITIC_BUDGETS if critic else ()))
    return {".".join(path): number for path in paths if (number := readings.number(path)) is not None}


_CRITIC_BUDGET, _CRITIC_FORWARD_BUDGET = (".".join(path) for path in CRITIC_BUDGETS)


def _budget_sources(own: Collection[str]) -> dict[str, str]:
    """The key each own token budget (`ROLE_BUDGET_KEYS`, by dotted key) comes from as Trinity fills it, among those a
    config sets (`own`): the roles' as `role_budget_sources` says; the critic's training's its own, else the trainer's,
    and its value forward's its own, else the critic's training's (after Trinity raised that one: ``set_if_none``,
    ``trainer/verl/verl_config.py:599-617`` in 0.5.2, ``common/verl_config.py:587-603`` in 0.5.1,
    ``trainer/verl_legacy/verl_config.py:606-624`` in 0.6.0)."""
    critic = _CRITIC_BUDGET if _CRITIC_BUDGET in own else TRAINER_TOKEN_BUDGET
    forward = _CRITIC_FORWARD_BUDGET if _CRITIC_FORWARD_BUDGET in own else critic
    return role_budget_sources(own) | {_CRITIC_BUDGET: critic, _CRITIC_FORWARD_BUDGET: forward}


class _GivenBudgets(NamedTuple):
    """The token budgets a config sets by hand (`budgets`, `_given_budgets`), whether its ref's forward runs
    (`ref_runs`, `ref_forward_runs`) and the critic's own SP where it sets one (`critic_sp`, None where not:
    `critic_sp`): what `_own_budget_written` weighs."""

    budgets: Mapping[str, float]
    ref_runs: bool
    critic_sp: int | None = None


def _read_budgets(readings: _ConfigReadings, version: TrinityVersion | None, plan: Plan) -> _GivenBudgets:
    """`_GivenBudgets` of a config (`readings`) for `plan`, its ref's forward as the Trinity release `version` runs
    it, and the critic's own SP where ``--write`` keeps it (not where it writes the plan's: `_critic_sp_keys`)."""
    own_sp = readings.number(CRITIC_SP_KEY)
    written = any(key.path == CRITIC_SP_KEY for key in _critic_sp_keys(plan, readings, version))
    kept_sp = None if own_sp is None or written else max(1, int(own_sp))
    ref_runs = ref_forward_runs(readings.value(("algorithm", "algorithm_type")), version)
    return _GivenBudgets(_given_budgets(readings, ref_runs), ref_runs, kept_sp)


def _budget_sp(plan: Plan, key: str, given: _GivenBudgets) -> int:
    """The SP the own token budget `key` (dotted) is read at: the critic's two at the critic's own SP where the config
    sets one that ``--write`` keeps (`_GivenBudgets.critic_sp`: a critic of another model, whose heads the plan's SP
    need not divide; a critic of the plan's model gets the plan's SP, `_critic_sp_keys`); else `plan`'s. Wherever the
    critic's own budgets are read, so is its SP: Trinity fills it from the trainer's only where unset
    (``set_if_none``, ``trainer/verl/verl_config.py:597`` in 0.5.2, ``trainer/verl_legacy/verl_config.py:604`` in
    0.6.0) and raises the critic's budget at it (``_adjust_token_len_if_needed``), and verl 0.7's critic runs at it,
    budget x SP tokens per micro-batch (``workers/critic/dp_critic.py:50``, ``:168``, ``:212`` in 0.7.0); Trinity 0.6
    on verl 0.8 or later reads neither (``FROZEN_KEYS``)."""
    critic = key in (_CRITIC_BUDGET, _CRITIC_FORWARD_BUDGET)
    return given.critic_sp if critic and given.critic_sp is not None else plan.sp


def _most_roles_take(plan: Plan, given: _GivenBudgets) -> float:
    """The most tokens per GPU any role whose pass runs takes as Trinity fills the roles' budgets from those a config
    sets (`given`, `role_budget_sources`): the actor's, the rollout's (the actor's recompute) and the ref's only where
    its forward runs (`_GivenBudgets.ref_runs`: an algorithm that uses no ref reads no ref budget, which the plans'
    cap, `solver.query.TrinityConfig.budget_in_effect`, leaves out alike); a role filled from the trainer's taking
    what `plan` writes there (its budget). Not the critic's, which caps no plan (a critic's own budget above the
    verdict's gets a line of its own, `solver.trinity.keys.critic_budget_note`)."""
    budgets = {**given.budgets, TRAINER_TOKEN_BUDGET: plan.max_token_len_per_gpu}  # --write sets the plan's
    ref = ".".join(ROLE_TOKEN_BUDGETS[1])
    return max(budgets[source] for role, source in role_budget_sources(set(given.budgets)).items()
               if role != ref or given.ref_runs)


def _own_budget_keys(plan: Plan, section: str, readings: _ConfigReadings,
                     version: TrinityVersion | None) -> list[PlanKey]:
    """The token budgets of `section` (a role, the rollout's for the actor's recompute, or the critic:
    `ROLE_BUDGET_PATHS`) set by hand (the critic's where the algorithm trains one, `_given_budgets`), at the value
    `_own_budget_written` gives it where that is another: the plan's, but for a lower limit of the user's own, kept
    (the ref's forward as the Trinity release `version` runs it); a critic's that `plan` leaves out (``--critic
    none``) raised only to hold a sequence."""
    given = _read_budgets(readings, version, plan)
    return [PlanKey(path=path, value=written, existing_only=True) for path in ROLE_BUDGET_PATHS[section]
            if (key := ".".join(path)) in given.budgets
            and (written := _own_budget_written(plan, key, given)) != given.budgets[key]]


def _own_budget_written(plan: Plan, key: str, given: _GivenBudgets) -> float:
    """The value ``--write`` gives the own token budget `key` (dotted, one of `ROLE_BUDGET_KEYS`: a role's or the
    critic's) that a config sets, among the budgets it sets (`given`), for `plan`. One that repeats the budget it is
    filled from (`_budget_sources`: an alias, a reference, the same number) goes with it: the trainer's becomes the
    plan's. Else it is kept where verl takes it and the plan counts as much or more: at least the least that holds a
    sequence of the plan's length at its SP (`least_token_budget`; the critic's at its own, `_budget_sp`; verl
    asserts that a micro-batch, budget x SP tokens, holds the batch's longest, ``utils/seqlen_balancing.py:382`` in
    0.7.0, and splits the batch into more micro-batches below the plan's), and at most the plan's budget, which, but
    for the critic's, is at most what the config's roles take (`_most_roles_take`: a plan asked above that,
    ``--token-budget``, would have no effect on verl before 0.8 were the roles kept below it; the critic's caps no
    plan, and the memory model counts the critic's own update at the plan's budget, `solver.memory.critic_pass_gib`,
    so a lower one of its own is kept all the same).
    Else it is the plan's: above it, the role would take more tokens per GPU than the plan counts; below the least,
    Trinity raises it (the rollout's and the critic's value forward's, filled from a raised one, it never raises:
    verl stops, `solver.trinity.keys.FORWARD_BUDGETS`); where the plan's is below that least (a critic's at its own
    lower SP), that least. A critic's that `plan` leaves out (``--critic none``, `Plan.critic`), whose figures bound
    none of its budgets, is kept but below that least, where it is raised to it."""
    budget, planned = given.budgets[key], plan.max_token_len_per_gpu
    source = _repeated_source(key, given.budgets)
    if source is not None:
        return planned if source == TRAINER_TOKEN_BUDGET else _own_budget_written(plan, source, given)
    least = least_token_budget(plan.max_model_len, _budget_sp(plan, key, given))
    critic = key in (_CRITIC_BUDGET, _CRITIC_FORWARD_BUDGET)
    if critic and plan.critic is None:  # a critic the plan leaves out (--critic none): raised only where verl stops
        return max(budget, least)
    held = least <= budget <= planned
    return budget if held and (critic or planned <= _most_roles_take(plan, given)) else max(planned, least)


def kept_own_keys(plan: Plan, config: Any, environ: Mapping[str, str] | None,
                  version: TrinityVersion | None = None) -> list[tuple[str, ...]]:
    """The paths of the own token budgets (`ROLE_BUDGET_KEYS`) a `config` (its mapping, interpolations resolved from
    `environ`) sets that ``--write`` keeps at their values for `plan` (`_own_budget_written`; the ref's forward as
    the Trinity release `version` runs it), as `own_budget_changes` says, and the critic's own SP where it keeps
    that (`_GivenBudgets.critic_sp`: a trained critic of another model's): ``solver.trinity.patch`` writes one that
    a ``<<: *anchor`` merges in from a mapping it changes as its mapping's own key, so that it stays."""
    readings = _config_readings(config, environ)
    given = _read_budgets(readings, version, plan)
    critic_sp = given.critic_sp is not None and trains_critic(readings.value(("algorithm", "algorithm_type")))
    return [*(path for path in ROLE_BUDGET_KEYS if (key := ".".join(path)) in given.budgets
              and _own_budget_written(plan, key, given) == given.budgets[key]), *([CRITIC_SP_KEY] if critic_sp else [])]


def own_budget_changes(plan: Plan, config: Any, environ: Mapping[str, str] | None,
                       padded: bool = False, version: TrinityVersion | None = None) -> list[tuple[str, str]]:
    """What ``--write`` does with the token budgets a `config` (its mapping, interpolations resolved from `environ`)
    sets by hand and why, by dotted key, in words after the key and its value: each role's and, where its algorithm
    trains one, the critic's (`ROLE_BUDGET_KEYS`) that it keeps below the plan's, raises or lowers
    (`own_budget_change`; the ref's forward as the Trinity release `version` runs it, `ref_forward_runs`)."""
    given = _read_budgets(_config_readings(config, environ), version, plan)
    return [(key, change) for key in map(".".join, ROLE_BUDGET_KEYS) if key in given.budgets
            and (change := own_budget_change(plan, key, given.budgets, padded, ref_runs=given.ref_runs,
                                             critic_sp=given.critic_sp)) is not None]


def _repeated_source(key: str, given: Mapping[str, float]) -> str | None:
    """The budget the own token budget `key` is filled from (`_budget_sources`, among the budgets a config sets,
    `given`, as `_own_budget_written` takes them) where `key` repeats its value; None where it sets its own."""
    source = _budget_sources(set(given) - {key})[key]
    return source if given.get(source) == given[key] else None


def _repeated_root(key: str, given: Mapping[str, float]) -> str | None:
    """The budget whose value the own token budget `key` repeats, followed back through the budgets that repeat
    theirs (`_repeated_source`: the critic's forward that repeats the critic's training, which repeats the trainer's,
    repeats the trainer's), as one alias may repeat one value in them all; None where `key` sets its own."""
    source = _repeated_source(key, given)
    while source in _budget_sources(()) and (further := _repeated_source(source, given)) is not None:
        source = further
    return source


def own_budget_change(plan: Plan, key: str, given: Mapping[str, float], padded: bool = False, *,
                      ref_runs: bool = True, critic_sp: int | None = None) -> str | None:
    """What ``--write`` does with the own token budget `key` (a role's or the critic's) that a config sets
    (`_own_budget_written`; `given`, the budgets it sets by dotted key, and `ref_runs`, whether its ref's forward
    runs, as `_GivenBudgets` has them), and why, in words after the key and its value; None where it is the plan's
    already. A kept one of a plan whose micro-batches are `padded` (one sequence each,
    `one_sequence_per_micro_batch`) is unread."""
    budgets = _GivenBudgets(given, ref_runs, critic_sp)
    budget, written, planned = given[key], _own_budget_written(plan, key, budgets), plan.max_token_len_per_gpu
    length, sp = plan.max_model_len, _budget_sp(plan, key, budgets)
    least = least_token_budget(length, sp)
    ceiling = f"ceil({length} / {sp}) = {least}"
    at = f" at the critic's own SP {sp}" if sp != plan.sp else ""
    source = _repeated_root(key, given)
    if key in (_CRITIC_BUDGET, _CRITIC_FORWARD_BUDGET) and plan.critic is None and source is None:
        return None if written == budget else (
            f"{shown_number(budget)} raised to {ceiling}, the least that holds a sequence of the plan's length{at}, "
            "below which verl stops: the plan counts no critic (--critic none), so --write sets no more of its budgets")
    if written > planned:  # the plan's budget holds no sequence at the critic's own, lower SP
        done = "kept at" if written == budget else f"{'lowered' if budget > written else 'raised'} to"
        return (f"{shown_number(budget)} {done} {ceiling}, the least that holds a sequence of the plan's length{at}: "
                f"the plan's {planned} holds none there, so the critic takes more tokens per GPU than the plan "
                "counts")
    if written == budget:
        kept = f"{shown_number(budget)} kept, below the plan's {planned}: "
        return None if budget == planned else kept + (
            "unread, as the plan turns dynamic batch sizes off (one padded sequence per micro-batch)" if padded
            else f"it holds a sequence of the plan's length{at} ({ceiling} tokens per GPU or more), so verl takes "
                 "it, splitting that role's batch into more micro-batches of less memory, which the plan's figure "
                 "bounds")
    taken = _most_roles_take(plan, budgets)
    why = (f" with {source}, whose value it repeats" if source is not None
           else f", as below {ceiling} it holds no sequence of the plan's length{at}" if budget < least
           else f", as the plan's budget is above the most the config's roles take, {shown_number(taken)}: kept, it "
                "would leave the plan's budget without effect on verl before 0.8" if budget < planned else "")
    return (f"{shown_number(budget)} {'lowered' if budget > written else 'raised'} to the plan's {written}{why}: set "
            "by hand, it overrides trainer.max_token_len_per_gpu for its role")


def adapter_unkept(plan: Plan, model: Model, adapter: ConfigAdapter, name: str, kept_by: str,
                   option_names: OptionNames) -> str | None:
    """Where `plan` counted a LoRA adapter of `model` (its rank, ``--lora-rank``, on its targets,
    `Plan.lora_targets`, ``--lora-targets``) of fewer parameters than the config `name`'s own `adapter` (at the plan's
    rank where the config's is not counted), which what is made of the plan keeps (`kept_by`: ``--write keeps``,
    ``--emit trinity keeps``, ``these lines keep``; none writes ``model.lora_configs`` over a config's own adapter),
    so that the run would train more than the plan counted: why, in one line that starts with `name`, and what to do,
    naming the options as `option_names` do. None otherwise (no LoRA in the plan; an adapter of as many parameters or
    fewer, which the plan over-counts)."""
    rank, targets = adapter.rank or plan.lora_rank, adapter.targets
    if not plan.lora_rank or (rank, targets) == (plan.lora_rank, plan.lora_targets):
        return None
    kept, counted = (lora_parameters(model.model_copy(update={"lora_targets": each_targets}), each_rank,
                                     plan.expert_layout)
                     for each_rank, each_targets in ((rank, targets), (plan.lora_rank, plan.lora_targets)))
    if kept <= counted:
        return None
    rank_option, *targets_options = option_names.lora_options
    planned = "all-linear" if plan.lora_target_modules is None else f"'{plan.lora_target_modules}'"
    set_to = planned
    if plan.lora_exclude_modules is None:
        targets_options = targets_options[:1]
    else:  # the plan's exclusions too: the option that gave them, and the key that would say them
        set_to = f"{planned} and exclude_modules to '{plan.lora_exclude_modules}'"
        planned = f"{planned} less exclude_modules '{plan.lora_exclude_modules}'"
    targets_option = and_joined(targets_options)
    if rank == plan.lora_rank:
        return (f"{name}: the plan counted its LoRA adapter on {planned} ({counted:,} parameters), but the config's "
                f"own target_modules ({adapter.key}), which {kept_by}, adapt {kept:,}: plan on them (leave "
                f"{targets_option} out), or set them to {set_to} first")
    if targets == plan.lora_targets:
        return (f"{name}: the plan counted its LoRA adapter at rank {plan.lora_rank} ({counted:,} parameters), but "
                f"the config's own ({adapter.key}), at rank {rank}, which {kept_by}, adapts {kept:,}: plan at its "
                f"rank (leave {rank_option} out), or set its lora_rank to {plan.lora_rank} first")
    own_targets = "all-linear" if targets is None else f"'{targets.pattern}'"
    return (f"{name}: the plan counted its LoRA adapter at rank {plan.lora_rank} on {planned} ({counted:,} "
            f"parameters), but the config's own ({adapter.key}), at rank {rank} on {own_targets}, which {kept_by}, "
            f"adapts {kept:,}: plan on it (leave {and_joined([rank_option, *targets_options])} out), or set its "
            f"lora_rank to {plan.lora_rank} and its target_modules to {set_to} first")
