"""check_trinity_config: Trinity's (and verl's) own rules on a config given as nested mappings (the problems' words;
`trinity_config_problems`: each with its code)."""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple, get_args

from solver.memory import rollout_sizes
from solver.query import (
    ACTOR_ROLLOUT_REF,
    BYPASS_OLD_LOGPROBS_KEY,
    CRITIC_ENGINE_MICRO_BATCH_SIZES,
    CRITIC_MICRO_BATCH_SIZES,
    CRITIC_REMOVE_PADDING_KEY,
    NODE_SIZE_KEY,
    NODE_SIZE_PATH,
    ROLE_MICRO_BATCH_SIZES,
    ROLE_TOKEN_BUDGETS,
    TRAIN_BATCH_KEY,
    ConfigProblem,
    ConfigProblemCode,
    TrinityConfig,
    check_trinity_version,
    legacy_release_words,
    legacy_releases_listed,
)
from solver.results import LONG_LENGTH_VARIABLE, length_key_words, vllm_length_words
from solver.rules import (
    API_OPTIONS,
    ENGINE_MINI_BATCH_ASSERT_LINES,
    PINNED_BY,
    TARGETS_FIX,
    TRANSFORMERS_OF,
    OptionNames,
    batch_over_trainer_gpus_words,
    batch_split_violation,
    dividing_batch_words,
    excluded_adapted_words,
    least_token_budget,
    lora_moe_unsaved_words,
    mapped_partial_rotary,
    mapped_rope_theta,
    micro_batch_stop_words,
    model_kind_words,
    model_type_words,
    nearest_dividing_batches,
    one_transformers_words,
    other_layout,
    raised_budget_stop_words,
    rope_theta_to_set,
    sp_gpus_violation,
    splits_batch,
    transformers_4_way_out,
    transformers_5_words,
    whole_nodes_violation,
)
from solver.tables import (
    LAYOUTS_TAKEN,
    BatchDivisor,
    Catalog,
    ExpertLayout,
    HeldExperts,
    Model,
    QueryError,
    TrinityVersion,
    and_joined,
    asked_length,
    check_types,
    chosen,
    counted,
    counted_batch_divisor,
    either,
    it_or_them,
    load_catalog,
    load_trinity_fields,
    remove_padding_violation,
    shown_number,
    sp_attention_violation,
    sp_rule_violation,
    whole_number_note,
    yaml_brief,
)
from solver.tables.model_config import (
    LEGACY_ROPE_TYPES,
    VLLM_ROPE_TYPE_KEYS,
    rope_scaling_problem,
    vllm_rope_problem,
)
from solver.tables.peft_match import (
    ALL_LINEAR,
    EXCLUDE_FEWER,
    MATCHES_NO_MODULE,
    NO_MATCH,
    ModuleLayers,
    all_linear,
    converted_target_names,
    every_target_excluded,
    peft_target_match,
    peft_target_refusal,
    routed_target_names,
    same_modules_regex,
    shown_module_names,
)
from solver.tables.peft_names import LoraTargets, PeftModuleNames
from solver.tables.rope_types import TrainerFailure
from solver.trinity.interpolation import (
    MISSING,
    ConfigValues,
    MissingValue,
    Path,
    ResolvesToNothing,
    VariablesRead,
    decode_scalar,
    dotted,
)
from solver.trinity.keys import (
    AUXILIARY_MODELS,
    CRITIC,
    CRITIC_ENGINE,
    CRITIC_ENGINE_DYNAMIC_KEY,
    CRITIC_ENGINE_FSDP_SIZE,
    CRITIC_ENGINE_SP_KEY,
    CRITIC_FORWARD_WHOLE_SIZE,
    CRITIC_FSDP_SIZE,
    CRITIC_MODEL_FSDP,
    CRITIC_SP_KEY,
    DEPRECATED_MICRO_BATCH_SIZES,
    DYNAMIC_BATCH_KEYS,
    ENGINE_KEYS_05_LACKS,
    ENTROPY_KEYS,
    EXTERNAL_MODEL,
    FORWARD_BUDGETS,
    FSDP_SIZE_KEYS,
    GRADIENT_CHECKPOINTING_KEY,
    KEYS_05_LACKS,
    LEGACY_BYPASS_MODE_KEY,
    LORA_CONFIGS,
    LORA_KEYS,
    MICRO_BATCH_SIZES_TYPED_INT,
    MICRO_BATCH_UNSET_ON_08,
    MISSING_KEPT_SECTIONS,
    MULTIPLIED_AS_LOADED,
    NUMBER_KEYS,
    OFFLOAD_FLAGS,
    OWN_SP_ROLES,
    READ_KEYS,
    REMOTE_ENGINES,
    REMOVE_PADDING_KEYS,
    ROLE_BUDGET_KEYS,
    ROLE_BUDGET_PATHS,
    ROLE_DYNAMIC_BATCH_KEYS,
    ROLE_ENGINE_SP_KEYS,
    ROLE_KEY_SCOPES,
    ROLE_SP_KEYS,
    ROLES,
    ROLLOUT_MODEL,
    SET_TO_TRAINERS_BY_06,
    TRAINER_INPUT_LINES,
    TRAINER_INPUT_PATH,
    TRAINER_SP_KEY,
    UNTYPED_SECTIONS,
    VERL_LORA_RANK,
    ConfigError,
    check_environ,
    check_mode,
    critic_of_another_model,
    keys_05_refuses,
    keys_05_refuses_words,
    offload_path,
    ref_forward_runs,
    rope_type_key,
    sp_key_in_effect,
    started_rollout_engine,
    trains_critic,
    trains_dpo,
    value_at,
)
from solver.trinity.reader import (
    OneLimit,
    critic_engine_in_rows,
    limit_at_length_words,
    lora_key_before_08,
    omegaconf_boolean,
    omegaconf_integer,
    overlong_words,
    recompute_may_run,
    releases_may_be,
    sequence_counted_roles,
    trainer_strategy,
    turned_off,
    unset_strategy_words,
)

if TYPE_CHECKING:
    from solver.tables.inputs import TrinityFields
    from solver.trinity.config import NewAdapter


_ROPE_SCALING = ("model", "rope_scaling")


class _ConfigChecks:
    """The problems `check_trinity_config` finds in a config given as nested `mapping`s, and its values as Trinity
    reads them (interpolations resolved from `environ`): one that cannot be read is a problem too."""

    def __init__(self, mapping: Mapping[str, Any], environ: Mapping[str, str], option_names: OptionNames,
                 version: TrinityVersion | None = None, length_from_option: bool = False,
                 experts: ExpertLayout = "fused", catalog: Catalog | None = None):
        self.variables = VariablesRead(environ)
        """The environment variables the checks' interpolations found set (`VariablesRead.found`)."""
        self.mapping, self.environ, self.config = mapping, environ, ConfigValues(mapping, self.variables)
        self.names = option_names
        """How the problems' words name the caller's options (the patch's, the length's)."""
        self.length_from_option = length_from_option
        """Whether the length judged is the caller's option's (``--len``), not the config's own."""
        self.version = version
        """The Trinity version the checks judge for (None: any release)."""
        self.experts = experts
        """How that release holds a mixture of experts' routed experts (`Query.expert_layout`: 0.5.1's separate)."""
        self.catalog = catalog
        """The catalogue the run was given, whose models a critic of another model may name (None: the shipped)."""
        self.problems: list[ConfigProblem] = []
        self.unreadable: set[Path] = set()
        self._values: dict[Path, Any] = {}
        self._resolved: dict[Path, Any] = {}
        self._numbers: dict[Path, float | None] = {}
        self.flags_judged: set[Path] = set()
        """The flags whose type a check has judged (`_check_flag_on`), which `_check_read_type` leaves alone."""
        self.critic_sps: tuple[int, ...] = ()
        """Where a trained critic may run at another SP than the trainer's (`_check_critic_sp`): every SP the releases
        judged for may run it at, the trainer's among them where one does; () where each runs it there."""
        self.critic_sp_lines: list[CriticSpLine] = []
        """The ``role-sp-differs`` lines on the critic's SP said, as data (`CriticSpLine`)."""
        self.refused_sp_roles: set[str] = set()
        """The roles (`ROLES`) whose SP the releases judged for that run verl before 0.8 refuse as they load the config
        (`_check_sequence_parallel`, `_check_legacy_role_sps`): the actor's only where it is not the verdict's."""
        self.unread_deciding: set[Path] = set()
        """The keys that cannot be read and decide whether a pass fails (`forward_unread_keys`)."""
        self.state_groups: dict[str, int] = {}
        """The roles (the actor, the critic) whose states on the GPUs a verl line shards over groups of fewer GPUs than
        the trainer's (``fsdp-size-hybrid``), each with the smallest such group (`fsdp_state_groups`)."""
        self.hybrid_lines: list[HybridLine] = []
        """The ``fsdp-size-hybrid`` lines said, as data (`HybridLine`)."""
        self.missing_said: set[Path] = set()
        """The places of the ``???`` said so far, refused (`refuse_missing`) or not judged: each is said once, however
        many values read it."""

    def length_words(self, length: float, key: str = "model.max_model_len") -> str:
        """The length judged, `length`, in words: as the config's `key` (``model.max_model_len 16384``), or, judged at
        the caller's option's, as that option's (``--len's 16384``: `OptionNames.length_at`)."""
        shown = shown_number(length)
        return self.names.length_at(shown) if self.length_from_option else f"{key} {shown}"

    def rope_length_words(self, length: float) -> str:
        """The head of a line on ``model.rope_scaling`` at the length judged, `length` (`length_words`):
        ``model.rope_scaling: max_model_len 49152``, or ``model.rope_scaling: --len's 49152``."""
        return f"model.rope_scaling: {self.length_words(length, 'max_model_len')}"

    def lower_length_words(self, longest: float) -> str:
        """The fix that lowers the length judged to `longest` tokens, in words: the config's ``max_model_len``
        (``lower max_model_len to 131072``), or, judged at the caller's option's, a plan for that length
        (``plan for 131072 tokens or fewer (--len 131072)``)."""
        tokens = math.floor(longest)
        if self.length_from_option:
            return f"plan for {tokens} tokens or fewer ({self.names.valued(self.names.length, tokens)})"
        return f"lower max_model_len to {tokens}"

    def add(self, code: ConfigProblemCode, words: str) -> None:
        """Report a problem: its `code` and its `words` (a key two checks read is said once: each path is read once,
        `value`, and each number, `number`)."""
        self.problems.append(ConfigProblem(code, words))

    def value(self, path: Path) -> Any:
        """The value at `path`, resolved and decoded (None where absent, or not resolved: a problem, in
        `unreadable`); each path is read once, so its problem is said once however often the checks look."""
        if path not in self._values:
            self._values[path] = self._read(path)
        return self._values[path]

    def read(self) -> frozenset[Path]:
        """The paths read so far (`value`)."""
        return frozenset(self._values)

    def _read(self, path: Path) -> Any:
        raw = value_at(self.mapping, path)
        try:
            resolved = self.config.get(path)
        except ConfigError as error:
            if isinstance(error, MissingValue):
                self.say_missing(error)
            elif isinstance(error, ResolvesToNothing) and not _schema_fills(error, self.version):
                self.refuse_unresolved(error)
            else:
                self.add(ConfigProblemCode.UNRESOLVED_VALUE, f"cannot check {error}")
            self.unreadable.add(path)
            return None
        self._resolved[path] = resolved
        decoded = decode_scalar(resolved) if isinstance(resolved, str) else resolved
        if path[:2] in UNTYPED_SECTIONS and isinstance(resolved, str) and not isinstance(decoded, str):
            why, fix = (("oc.decode leaves it text, as OmegaConf's grammar reads it",
                         "write the number as that grammar spells one (no leading zero, 0x or .inf)")
                        if isinstance(raw, str) and "oc.decode" in raw else
                        ("an oc.env value stays text there", "write the number, or ${oc.decode:...} around it"))
            self.add(ConfigProblemCode.NUMBER_AS_TEXT, (
                f"{dotted(path)} is the text {yaml_brief(resolved)}: {dotted(path[:2])} reaches the model as written "
                f"({why}); {fix}"))
        return decoded

    def refuse_unresolved(self, error: ResolvesToNothing) -> None:
        """Say that the release checked for refuses the config for a value that resolves to nothing, `error`, as it
        loads it (``unresolved-value-refused``); once for each message, however many values lead to it."""
        releases = f"Trinity {self.version}" if self.version else "every Trinity release"
        words = (f"{error}{_schema_lacks_words(error, self.version, releases)}; {releases} refuses the config as it "
                 "loads it (OmegaConf resolves each value then)")
        if all(problem.words != words for problem in self.problems):
            self.add(ConfigProblemCode.UNRESOLVED_VALUE_REFUSED, words)

    def say_missing(self, error: MissingValue) -> None:
        """Say the ``???`` that `error` read, once for its place however many values read it: refused inside one of
        `MISSING_KEPT_SECTIONS` (`refuse_missing`), else not judged (a typed field's: the merge keeps its default)."""
        if _kept_missing(error.at):
            self.refuse_missing(error.at)
        elif error.at not in self.missing_said:
            self.missing_said.add(error.at)
            self.add(ConfigProblemCode.UNRESOLVED_VALUE, f"cannot check {error}")

    def refuse_missing(self, at: Path) -> None:
        """Say that every release refuses the config for the ``???`` at `at`, inside one of `MISSING_KEPT_SECTIONS`
        (once for each place, however many values read it)."""
        if at in self.missing_said:
            return
        self.missing_said.add(at)
        section = next(section for section in MISSING_KEPT_SECTIONS if _kept_missing(at, section))
        self.add(ConfigProblemCode.UNRESOLVED_VALUE_REFUSED, (
            f"{dotted(at)} is ???, a value missing: every Trinity release refuses the config as it loads it "
            f"({dotted(section)} is no typed section, so the merge keeps the ??? and OmegaConf.to_object raises on "
            "it); give it a value, or remove the key"))

    def flag(self, path: Path) -> Any:
        """The value at `path` as resolved, its text not decoded (`value`), as OmegaConf's bool field reads it
        (`omegaconf_boolean`: text is a boolean only as written, no spaces around a word); None where absent or
        unreadable."""
        self.value(path)
        return self._resolved.get(path)

    def absent(self, path: tuple[str, ...]) -> bool:
        """Whether the config gives nothing at `path`: absent, or null (not a value that cannot be read)."""
        return self.value(path) is None and path not in self.unreadable

    def written_null(self, path: tuple[str, ...]) -> bool:
        """Whether the config writes null at `path` (or an interpolation there gives it): `absent`, but its section, as
        written, holds the key."""
        section = value_at(self.mapping, path[:-1])
        return self.absent(path) and isinstance(section, Mapping) and path[-1] in section

    def number(self, path: Path) -> float | None:
        """The number at `path` (`value`); None where absent or unreadable, or not a number (a problem, said once
        however often the checks look). A key that Trinity types ``int`` (`NUMBER_KEYS`) is read as OmegaConf's int
        field reads it (`whole_number`)."""
        if path not in self._numbers:
            self._numbers[path] = self._number(path)
        return self._numbers[path]

    def _number(self, path: Path) -> float | None:
        raw = self.value(path)
        if raw is None:
            return None
        if path[-1] in NUMBER_KEYS:
            return self.whole_number(path)
        if isinstance(raw, bool) or not isinstance(raw, (int, float)):
            self.add(ConfigProblemCode.NOT_A_NUMBER, f"{dotted(path)} must be a number, got {yaml_brief(raw)}")
            return None
        if not math.isfinite(raw):  # OmegaConf's inf or nan: no count of tokens, GPUs or positions
            self.add(ConfigProblemCode.NOT_A_NUMBER, f"{dotted(path)} must be a finite number, got {yaml_brief(raw)}")
            return None
        return raw

    def whole_number(self, path: Path) -> int | None:
        """The value at `path` (read, not absent) as the typed int field Trinity gives it reads it, OmegaConf's
        (`omegaconf_integer`: text as ``int()`` reads it, no float); None where that field refuses it, a problem:
        refused where Trinity's typed config refuses it as it loads the config (`_schema_refuses`: under
        `UNCHECKED_SECTION` with Trinity 0.5 alone), else what Trinity 0.6 does with it. Text it takes is a problem
        too where Trinity 0.6 computes with the value as it loads the config (`MULTIPLIED_AS_LOADED`)."""
        resolved = self._resolved[path]
        whole = omegaconf_integer(resolved)
        if whole is not None:
            if isinstance(resolved, str) and path in MULTIPLIED_AS_LOADED and self.version != "0.5":
                self.add(ConfigProblemCode.NUMBER_AS_TEXT, (
                    f"{dotted(path)} is the text {yaml_brief(resolved)}: Trinity 0.6 on verl before 0.8 keeps it as "
                    "written and refuses the config as it loads it, where it multiplies the role's token budget by "
                    "its SP to compare with model.max_model_len (a TypeError; Trinity 0.5's typed config reads the "
                    "number); write the number, or ${oc.decode:...} around it"))
            return whole
        meant = whole_number_note(resolved)  # 8.0, '8.0': write 8.0 as 8, as the command line's counts are told
        wrong = f"{dotted(path)} must be a whole number, got {yaml_brief(resolved)}{f' ({meant})' if meant else ''}"
        if _schema_refuses(path, self.version):
            self.add(ConfigProblemCode.WRONG_TYPE_REFUSED, f"{wrong}: {_typed_field_refuses_words(path, 'int')}")
        else:
            self.add(ConfigProblemCode.NOT_A_NUMBER, f"{wrong}: " + _unchecked_words(self.version, (
                "keeps it as written, which its trainer's typed config (OmegaConf's int field) refuses as the trainer "
                "starts")) + "; the notes that read it are not judged")
        return None

    def rope_type(self, rope_path: Path = _ROPE_SCALING) -> Any:
        """The type of the RoPE scaling at `rope_path` (``model.rope_scaling``'s by default; `value`) as the rollout's
        vLLM reads it (`rope_type_key`); None where it is no mapping. Where it has both keys, the legacy ``type`` is
        read too (a problem where it cannot be): vLLM compares the two."""
        rope = self.value(rope_path)
        if not isinstance(rope, Mapping):
            return None
        rope_type = self.value((*rope_path, rope_type_key(rope)))
        if "type" in rope:
            self.value((*rope_path, "type"))
        return rope_type


def _kept_missing(at: Path, section: Path | None = None) -> bool:
    """Whether a ``???`` at `at` lies inside one of `MISSING_KEPT_SECTIONS` (or `section` alone), where OmegaConf's
    merge keeps it, so that every release refuses the config (the section itself is a typed field, whose default the
    merge keeps)."""
    sections = (section,) if section else MISSING_KEPT_SECTIONS
    return any(len(at) > len(each) and at[:len(each)] == each for each in sections)


def _check_missing_kept(checks: _ConfigChecks) -> None:
    """Check every value in `MISSING_KEPT_SECTIONS` (in their mappings and lists, as written) for OmegaConf's ``???``,
    which every release refuses there, read by rft-solver or not (`_ConfigChecks.refuse_missing`)."""
    def walk(node: Any, at: Path) -> None:
        if node == MISSING and _kept_missing(at):
            checks.refuse_missing(at)
        items = node.items() if isinstance(node, Mapping) else enumerate(node) if isinstance(node, list) else ()
        for key, value in items:
            walk(value, (*at, key))

    for section in MISSING_KEPT_SECTIONS:
        walk(value_at(checks.mapping, section), section)


def _check_unread_references(checks: _ConfigChecks) -> None:
    """Check each value of the config that rft-solver does not read (not `_ConfigChecks.read`) and that holds an
    interpolation for one that resolves to nothing whatever the environment (`ResolvesToNothing`: a key the config and
    Trinity's typed ``Config`` lack, a cycle, an ``oc.decode`` OmegaConf refuses): Trinity's ``load_config`` resolves
    every value (``OmegaConf.to_object``, ``trinity/common/config.py:1059`` in 0.6.0), so it refuses the config
    (`_ConfigChecks.refuse_unresolved`). A value that depends on the environment (an ``oc.env`` without a default,
    another resolver) is left to the run's. Each mapping and list is walked once, at its first place: an alias repeats
    it, and aliases of aliases would repeat it exponentially often."""
    read = checks.read()
    values = ConfigValues(checks.mapping, checks.environ)  # its own: the variables these read are not the checks'
    walked: set[int] = set()

    def walk(node: Any, at: Path) -> None:
        if isinstance(node, str) and "${" in node and at not in read:
            try:
                values.get(at)
            except ResolvesToNothing as error:
                if not _schema_fills(error, checks.version):
                    checks.refuse_unresolved(error)
            except ConfigError:
                pass  # the run's environment decides it, or rft-solver cannot: not judged
        if isinstance(node, (Mapping, list)):
            if id(node) in walked:
                return
            walked.add(id(node))
        items = node.items() if isinstance(node, Mapping) else enumerate(node) if isinstance(node, list) else ()
        for key, value in items:
            if isinstance(key, (str, int)):
                walk(value, (*at, key))

    walk(checks.mapping, ())


def _schema_fills(error: ResolvesToNothing, version: TrinityVersion | None) -> bool:
    """Whether Trinity's typed ``Config`` may give what the reference of `error` lacks a default as it loads the
    config, so that the reference resolves there: in some release of `version` (None: any release;
    `solver.tables.load_trinity_fields`), the key the config lacks (`ResolvesToNothing.lacking`) is a field of the
    section holding it, and each key the reference reads below it (`ResolvesToNothing.below`) a field of the section
    the merge fills in with its defaults (OmegaConf raises on a key those lack); inside a field typed ``Any`` or
    ``dict`` (``trainer.trainer_config``), only its default's keys."""
    lacking = error.lacking
    return lacking is not None and load_trinity_fields().fills((*lacking, *error.below), len(lacking), version)


def _schema_lacks_words(error: ResolvesToNothing, version: TrinityVersion | None, releases: str) -> str:
    """Where the key the config lacks (`ResolvesToNothing.lacking`) is a section that Trinity's typed ``Config`` fills
    in with its defaults (a field of the section holding it in `version`'s releases) and the reference of `error`
    reads keys below it (`ResolvesToNothing.below`), that those defaults lack them, in words (``, which the typed
    config of Trinity 0.5 fills in with its defaults, with no megatron``); "" otherwise."""
    lacking = error.lacking
    if lacking is None or not error.below or not load_trinity_fields().fills(lacking, len(lacking), version):
        return ""
    return f", which the typed config of {releases} fills in with its defaults, with no {'.'.join(error.below)}"


def _check_sequence_parallel(checks: _ConfigChecks, model: Model, trainer_gpus: int, version: TrinityVersion | None,
                             batch: TrainBatch) -> tuple[int, dict[str, int]]:
    """Check the SP the trainer runs at (`sp_key_in_effect`: the trainer's, or with Trinity 0.5 the actor's own)
    against `trainer_gpus` and `model`'s heads; return it and each of `OWN_SP_ROLES`' SP, by name (1 where unset or
    below 1). With `version` 0.5, check each of those roles' SP alike where another key gives it (its own where set,
    else the trainer's), and that its data-parallel ranks divide the train `batch` (`_check_sp_key`): Trinity 0.5
    checks each role's SP so (``_check_parallel_config``) and refuses the config, and raises the role's token budget
    at it (``_adjust_token_len_if_needed``); else each role's is the trainer's."""
    path = sp_key_in_effect(checks.mapping, version)
    sp = _check_sp_key(checks, path, model, trainer_gpus, "", divisor=batch.divisor)
    role_sps = {role.name: sp for role in OWN_SP_ROLES}
    if version != "0.5":
        _check_legacy_role_sps(checks, model, trainer_gpus, sp, version, batch)
        _check_role_engine_sps(checks, model, trainer_gpus, sp, batch, version)
        return sp, role_sps | _check_critic_sp(checks, model, trainer_gpus, sp, version, batch)
    keys = {role.name: role.sp_key if value_at(checks.mapping, role.sp_key) is not None else TRAINER_SP_KEY
            for role in OWN_SP_ROLES}
    for key in dict.fromkeys(keys.values()):  # each key once: the trainer's may be given to both roles
        if key == path:
            continue
        names = [name for name, given in keys.items() if given == key]
        given = (f"checks the {names[0]}'s SP" if key != TRAINER_SP_KEY else
                 f"gives it to the {' and the '.join(names)}, whose SP{'s' if len(names) > 1 else ''} it checks")
        heads = names != ["critic"] or not critic_of_another_model(checks.value)
        role_sps |= dict.fromkeys(names, _check_sp_key(
            checks, key, model, trainer_gpus, f", and Trinity 0.5 {given} as the actor's: it refuses the config",
            heads=heads, batch=batch))
    if legacy_sp_refusals(model, trainer_gpus, role_sps["ref"], batch):
        checks.refused_sp_roles.add("ref")
    _check_critic_sp(checks, model, trainer_gpus, sp, version, batch, role_sps["critic"])
    return sp, role_sps


def _check_legacy_role_sps(checks: _ConfigChecks, model: Model, trainer_gpus: int, sp: int,
                           version: TrinityVersion | None, batch: TrainBatch) -> None:
    """For a release that may be Trinity 0.6 (`version` 0.6, or none given), say where Trinity with verl before 0.8
    refuses the actor's or the ref's own SP (`ROLE_SP_KEYS`), set to another than the trainer's `sp`, as Trinity 0.5
    does (`legacy_sp_refusals`: 0.6.0's ``synchronize_config`` takes each over the trainer's, ``set_if_none``,
    ``trainer/verl_legacy/verl_config.py:554`` and ``:577``, and checks each as the actor's, ``:555`` and ``:578``, the
    ref being the actor's model), in a ``role-sp-differs`` line (Trinity 0.6 on verl 0.8 or later freezes both to the
    trainer's, ``FROZEN_KEYS``, ``trainer/verl/config.py:717`` and ``:724``), and mark the role refused
    (`_ConfigChecks.refused_sp_roles`): the reading's line on its SP, which says how it runs, and (the ref's) the
    sizing of its micro-batches are moot then."""
    who = legacy_release_words(version)
    for role, key in zip(ROLES, ROLE_SP_KEYS, strict=True):
        own = checks.number(key)
        role_sp = sp if own is None else max(1, int(own))  # Trinity sets one below 1 to 1
        refusals = legacy_sp_refusals(model, trainer_gpus, role_sp, batch) if role_sp != sp else []
        if not refusals:
            continue
        checks.refused_sp_roles.add(role)
        checked = "the actor's SP" if role == "actor" else "the ref's SP as the actor's"
        checks.add(ConfigProblemCode.ROLE_SP_DIFFERS, (
            f"{dotted(key)} {role_sp} is not trainer.ulysses_sequence_parallel_size {sp}: {who} checks {checked} "
            f"and refuses the config ({refusals[0].words}); Trinity 0.6 on verl 0.8 or later runs the {role} at SP "
            f"{sp}; the verdict is at SP {sp}: set them alike{checks.names.write_does()}"))


def _check_role_engine_sps(checks: _ConfigChecks, model: Model, trainer_gpus: int, sp: int, batch: TrainBatch,
                           version: TrinityVersion | None) -> None:
    """Say where the actor's or the ref's FSDP engine SP (`ROLE_ENGINE_SP_KEYS`), set to another than the trainer's
    `sp`, runs the role (``role-sp-differs``; under a Megatron trainer, which drops it, nothing): Trinity 0.6 on verl
    0.8 or later at it where `sp` is 1 (`_role_engine_sp`), checking it against nothing, and there why verl fails
    (`_engine_failure`: on the `trainer_gpus`, and for the actor the train `batch` at its first update; and `model`'s
    heads, which verl's Ulysses patch asserts as it loads the model, ``models/transformers/monkey_patch.py:338`` in verl
    0.8.0, ``:343`` in 0.9.1); else at `sp`, which verl puts over it. Not refused: verl before 0.8, where Trinity 0.6
    drops the key, runs the role at the trainer's SP (without `version`, the line adds that Trinity 0.5 refuses the
    key, `KEYS_05_LACKS`, which says so with 0.5). The verdict is at `sp`; ``--write`` sets the key to the plan's
    SP. No ref runs where the algorithm uses none or under LoRA on verl 0.8 (`_no_ref_engine_08`): the ref's line says
    so."""
    if _megatron_trainer(checks):
        return
    before_08 = ("Trinity 0.6 drops it (and Trinity 0.5 refuses it: its FSDPConfig has no such key)" if version is None
                 else "Trinity 0.6 drops it")
    for role, key in zip(ROLES, ROLE_ENGINE_SP_KEYS, strict=True):
        own = checks.number(key)
        engine_sp = _role_engine_sp(checks, role, sp)
        if own is None or max(1, int(own)) == sp:
            continue
        no_ref = _no_ref_engine_08(checks, version) if role == "ref" else None
        if no_ref:
            runs = f"Trinity 0.6 on verl 0.8 or later builds no ref engine, so nothing reads it ({no_ref})"
        elif engine_sp == sp:
            runs = (f"Trinity 0.6 on verl 0.8 or later runs the {role} at SP {sp} all the same (verl puts the role's "
                    "own SP, which Trinity sets to the trainer's, over its engine's where above 1: workers/config/"
                    "actor.py:320-321 in verl 0.8.0, :328-329 in 0.9.1)")
        else:
            heads = sp_rule_violation(model.num_attention_heads, model.num_key_value_heads, engine_sp)
            update = f"the {role}'s first update" if role == "actor" else None
            fails = _engine_failure(trainer_gpus, engine_sp, batch, update) or (
                f"{heads} of {model.name}, which verl asserts as it loads the model: it fails there" if heads else None)
            runs = (f"Trinity 0.6 on verl 0.8 or later runs the {role} at SP {engine_sp}, its engine's over the "
                    f"trainer's 1 (checking it against nothing){f', where {fails}' if fails else ''}")
        checks.add(ConfigProblemCode.ROLE_SP_DIFFERS, (
            f"{dotted(key)} {max(1, int(own))} is not trainer.ulysses_sequence_parallel_size {sp}: {runs}, and with "
            f"verl before 0.8 {before_08}; the verdict is at SP {sp}: set them alike{checks.names.write_does()}"))


def _no_ref_engine_08(checks: _ConfigChecks, version: TrinityVersion | None) -> str | None:
    """Why Trinity 0.6 on verl 0.8 or later builds no ref engine for the config, in words: its algorithm uses no ref
    (`ref_forward_runs`), or it runs LoRA (`solver.trinity.config.lora_on_08`), the actor without its adapter giving
    the ref's log-probs (``ref_in_actor``); None where it builds one."""
    from solver.trinity.config import lora_on_08

    algorithm = checks.value(("algorithm", "algorithm_type"))
    if not ref_forward_runs(algorithm, version):
        return f"algorithm_type {algorithm} uses no ref model"
    if lora_on_08(checks.value):
        return "LoRA, model.lora_configs: the actor's engine without its adapter gives the ref's log-probs"
    return None


def _check_critic_sp(checks: _ConfigChecks, model: Model, trainer_gpus: int, sp: int, version: TrinityVersion | None,
                     batch: TrainBatch, critic_sp: int | None = None) -> dict[str, int]:
    """Say where a critic's SP other than the one the trainer runs at, `sp`, runs it, and that the verdict counts its
    update there, the plans at `sp` (``role-sp-differs``, `critic_sp_counted_words`; the SPs it may run at in
    `_ConfigChecks.critic_sps`). With `version` 0.5, the critic's own SP as 0.5 takes it (`critic_sp`),
    which Trinity 0.5 runs it at, raising its budget there where its passes read it; not where 0.5 refuses it, which
    `_check_sequence_parallel` says, nor the trainer's given to it (the line on the actor's own SP says that one).
    For a release that may be Trinity 0.6 (`version` 0.6, or none given), the critic's own SP (`CRITIC_SP_KEY`), set
    to another than the trainer's `sp` (a line that refuses nothing:
    Trinity 0.6 on verl 0.8 or later ignores the key, ``FROZEN_KEYS``, ``trainer/verl/config.py:740`` in 0.6.0, and
    runs the critic's engine at `CRITIC_ENGINE_SP_KEY`, the trainer's where unset, ``:514``): Trinity with verl before
    0.8 takes it over the trainer's (``set_if_none``, ``verl_legacy/verl_config.py:604``), checks it against the
    trainer GPUs, the train `batch` and the critic's heads as the actor's, refusing the config (`legacy_sp_refusals`,
    ``:609``; not the heads of a critic of another model, `critic_of_another_model`), raises the critic's token
    budget at it (``:613``) and runs the critic there (``verl_legacy/fsdp_workers.py:1287``). Where verl before 0.8
    refuses it and verl 0.8's engine fails at the engine's SP (`_engine_failure`), no verl line runs the critic:
    both lines are ``role-sp-differs-refused``. Return the critic's SP by name where it is another (its budgets are
    judged there, `_check_token_budgets`), else none. Only where the algorithm trains a critic (`trains_critic`); the
    engine's SP too (`_check_critic_engine_sp`)."""
    if not trains_critic(checks.value(("algorithm", "algorithm_type"))):
        return {}
    another = critic_of_another_model(checks.value)
    if version == "0.5":  # the trainer's SP given to the critic: the actor's own SP has a line of its own
        if (critic_sp is not None and critic_sp != sp and checks.number(CRITIC_SP_KEY) is not None
                and not legacy_sp_refusals(model, trainer_gpus, critic_sp, batch, heads=not another)):
            checks.critic_sps = (critic_sp,)
            # 0.5.0 raises its budget to hold two sequences (the verdict counts that), where its passes read one
            two = "critic" not in sequence_counted_roles(checks.flag, version)
            raising = ", raising its token budget to hold a sequence there (0.5.0 two)" if two else ""
            _add_critic_sp_line(checks, sp, (
                f"{dotted(CRITIC_SP_KEY)} {critic_sp} is not the actor's SP {sp}: Trinity 0.5 runs the critic at SP "
                f"{critic_sp}{raising}; "),
                f": {_critic_sp_fix(checks, another, critic_sp, trainer_gpus)}",
                raised=RAISED_TO_TWO if two else READ_NONE)
        return {}
    engine = checks.number(CRITIC_ENGINE_SP_KEY)
    engine_sp = sp if engine is None else max(1, int(engine))  # Trinity 0.6 on verl 0.8 or later runs it there
    engine_fails = _engine_failure(trainer_gpus, engine_sp, batch) if engine_sp != sp else None  # but where it fails
    own = checks.number(CRITIC_SP_KEY)
    legacy_sp = sp if own is None else max(1, int(own))  # and with verl before 0.8 here, where not refused
    refusals = legacy_sp_refusals(model, trainer_gpus, legacy_sp, batch, heads=not another) if legacy_sp != sp else []
    runs_at = sorted({*(() if engine_fails else (engine_sp,)), *(() if refusals else (legacy_sp,))})
    checks.critic_sps = tuple(runs_at) if runs_at != [sp] else ()
    who = legacy_release_words(version)
    # Where verl before 0.8 refuses the critic's own SP and verl 0.8's engine fails at its, no verl line runs it.
    refused = None if runs_at else "the config runs on no verl"
    _check_critic_engine_sp(checks, sp, another, (trainer_gpus, batch), None if refused is None else (
        f"{who} refuses the critic's own SP {legacy_sp} ({dotted(CRITIC_SP_KEY)}), so {refused}"))
    if legacy_sp == sp:
        return {}
    engine_words = f"SP {sp}" if engine is None else f"SP {engine_sp} ({dotted(CRITIC_ENGINE_SP_KEY)})"
    on_08 = f"Trinity 0.6 on verl 0.8 or later ignores the key and runs the critic at {engine_words}" + (
        f", where {engine_fails}" if engine_fails else "")
    reads = _critic_budget_reads(checks, version)
    if refusals:
        runs = f"{who} checks the critic's SP as the actor's and refuses the config ({refusals[0].words}); {on_08}"
    else:
        runs = f"{who} runs the critic at SP {legacy_sp}{_critic_raise_read_words(reads)}; {on_08}"
    _add_critic_sp_line(checks, sp, (
        f"{dotted(CRITIC_SP_KEY)} {legacy_sp} is not trainer.ulysses_sequence_parallel_size {sp}: {runs}; "),
        f": {_critic_sp_fix(checks, another, legacy_sp, trainer_gpus)}", refused,
        RAISED_TO_ONE if any(reads) else READ_NONE)
    return {"critic": legacy_sp}


def _critic_budget_reads(checks: _ConfigChecks, version: TrinityVersion | None) -> list[bool]:
    """Whether the critic's passes read a token budget, dynamic batch sizes on (`sequence_counted_roles`), on each
    release `version` may be (verl fills its micro-batches by count where they are off: ``dp_critic.py:211-218`` in
    verl 0.7.0)."""
    return ["critic" not in sequence_counted_roles(checks.flag, release) for release in releases_may_be(version)]


def _critic_raise_read_words(reads: list[bool]) -> str:
    """That Trinity with verl before 0.8 raises the critic's token budget at its own SP, in words after that SP, where
    its passes read it on the releases the config may run on (`reads`, `_critic_budget_reads`): on every one, said
    plainly; on some, only there; on none, nothing."""
    if not any(reads):
        return ""
    return ", raising its token budget to hold a sequence there" + (
        "" if all(reads) else " where its passes read it (dynamic batch sizes on)")


RAISED_TO_ONE = "its token budget raised to hold a sequence there"
"""How the verdict counts the critic's token budget raised at an SP of its own, in words: to the least every release
raises it to, ``ceil(L/SP)`` (`solver.api`'s ``_critic_raised``)."""
RAISED_TO_TWO = "its token budget raised as Trinity 0.5.0 raises it, to hold two sequences there"
"""`RAISED_TO_ONE` with Trinity 0.5, where the critic's passes read their budget: 0.5.0's ``ceil(2L/SP)``."""
READ_NONE = "one sequence per micro-batch there (its passes read no token budget)"
"""`RAISED_TO_ONE` where the critic's passes run with dynamic batch sizes off on every release the config may run on:
verl reads no budget there, and the verdict counts a sequence per micro-batch (`solver.api`'s ``_critic_raised``)."""


class CriticSpLine(NamedTuple):
    """A ``role-sp-differs`` line on the critic's SP (`_check_critic_sp`, `_check_critic_engine_sp`) as data: the SPs
    the releases may run the critic at (`_ConfigChecks.critic_sps`), the trainer's SP, the line's words before and
    after what the verdict and the plans count of the critic (`words`) and how the verdict counts its budget raised
    there (`RAISED_TO_ONE`, `RAISED_TO_TWO`, `READ_NONE`)."""

    critic_sps: tuple[int, ...]
    sp: int
    head: str
    tail: str
    raised: str = RAISED_TO_ONE

    def words(self, counted: str | None = None) -> str:
        """The line's words, `counted` saying what the verdict and the plans count of the critic (None: as
        `critic_sp_counted_words` says it without a need)."""
        said = critic_sp_counted_words(self.critic_sps, self.sp, raised=self.raised) if counted is None else counted
        return f"{self.head}{said}{self.tail}"


def _add_critic_sp_line(checks: _ConfigChecks, sp: int, head: str, tail: str, refused: str | None = None,
                        raised: str = RAISED_TO_ONE) -> None:
    """Say a line on the critic's SP, with the trainer's at `sp`, from its words before and after what the verdict
    counts (its budget raised as `raised` says): ``role-sp-differs`` (kept as data too, `CriticSpLine`, for the
    verdict's words), or, where no verl line runs the critic, ``role-sp-differs-refused`` with `refused`, why, in its
    stead."""
    if refused is not None:
        checks.add(ConfigProblemCode.ROLE_SP_DIFFERS_REFUSED, f"{head}{refused}{tail}")
        return
    line = CriticSpLine(checks.critic_sps, sp, head, tail, raised)
    checks.critic_sp_lines.append(line)
    checks.add(ConfigProblemCode.ROLE_SP_DIFFERS, line.words())


def critic_sp_counted_words(critic_sps: tuple[int, ...], sp: int, need: str = "", raised: str = RAISED_TO_ONE) -> str:
    """What the verdict and the plans count of a critic that may run at `critic_sps` (`_ConfigChecks.critic_sps`;
    () where the releases run it at the trainer's `sp` alone), in words: the verdict its update at the
    one of them that needs the most (`need`: how much that is, in words after the SP, where known), at the tokens
    `raised` says (`RAISED_TO_ONE`, `RAISED_TO_TWO`, `READ_NONE`), and so do the figures of the verdict's own plan
    (``current.plan``, `solver.api`'s ``_critic_at_own_sp``); the planner's plans at `sp` (``--write`` sets the
    critic's SP to the plan's)."""
    if not critic_sps:
        return f"the verdict and the plans count the critic at SP {sp}"
    at = (f"SP {critic_sps[0]}" if len(critic_sps) == 1 else
          f"the one of SP {' and SP '.join(map(str, critic_sps))} that needs the most")
    return (f"the verdict and its plan count the critic's update at {at}{need}, {raised}, and the planner's plans at "
            f"SP {sp}")


class CriticRuns(NamedTuple):
    """Where a config's PPO critic runs (`critic_run_sps`): the SPs, and the lines on its SP that say so."""

    sps: tuple[int, ...]
    lines: tuple[CriticSpLine, ...]


def critic_run_sps(mapping: Mapping[str, Any], model: Model, trainer_gpus: int, *,
                   environ: Mapping[str, str] | None = None, version: TrinityVersion | None = None,
                   train_batch_size: int | None = None, train_batch_source: str = TRAIN_BATCH_KEY,
                   option_names: OptionNames = API_OPTIONS, catalog: Catalog | None = None) -> CriticRuns:
    """Every SP a PPO critic the config (nested `mapping`s, Env read from `environ`) trains on `trainer_gpus` may run
    at where the config gives it its own that is not the trainer's, as the releases of `version` (None: any) take it
    (`_check_critic_sp`: its own where not refused, a train batch of `train_batch_size`, where known, from
    `train_batch_source`, judged too; its engine's on verl 0.8 or later, else the trainer's); () where each runs it
    at the trainer's SP, or the algorithm trains none; with the ``role-sp-differs`` lines on its SP (`CriticSpLine`),
    worded as `option_names` name the options (a critic of another model by `catalog`'s, the run's: None, the
    shipped catalogue)."""
    checks = _sequence_parallel_checked(mapping, model, trainer_gpus, environ, version,
                                        TrainBatch(train_batch_size, train_batch_source), option_names, catalog)
    return CriticRuns(checks.critic_sps, tuple(checks.critic_sp_lines))


def refused_sp_roles(mapping: Mapping[str, Any], model: Model, trainer_gpus: int, *,
                     environ: Mapping[str, str] | None = None, version: TrinityVersion | None = None,
                     train_batch_size: int | None = None, train_batch_source: str = TRAIN_BATCH_KEY) -> frozenset[str]:
    """The roles (`ROLES`) whose SP of the config (nested `mapping`s, Env read from `environ`) on `trainer_gpus` every
    release of `version` (None: any) that runs verl before 0.8 refuses, with a train batch of `train_batch_size` where
    known (from `train_batch_source`), as it loads it (`legacy_sp_refusals`): the ref's, with 0.5 its own else the
    trainer's, otherwise its own where another than the trainer's (then none of them sizes the ref's micro-batches at
    it); the actor's own, where another than the trainer's that the verdict judges (not with 0.5, whose verdict is
    at it)."""
    return frozenset(_sequence_parallel_checked(mapping, model, trainer_gpus, environ, version,
                                                TrainBatch(train_batch_size, train_batch_source)).refused_sp_roles)


def _sequence_parallel_checked(mapping: Mapping[str, Any], model: Model, trainer_gpus: int,
                               environ: Mapping[str, str] | None, version: TrinityVersion | None,
                               batch: TrainBatch, option_names: OptionNames = API_OPTIONS,
                               catalog: Catalog | None = None) -> _ConfigChecks:
    """The checks of the config's SPs alone (`_check_sequence_parallel`), for what they found of the roles', worded
    as `option_names` name the options (a critic of another model by `catalog`'s)."""
    checks = _ConfigChecks(mapping, environ or {}, option_names, version, catalog=catalog)
    _check_sequence_parallel(checks, model, trainer_gpus, version, batch)
    return checks


def _critic_sp_fix(checks: _ConfigChecks, another: bool, critic_sp: int, trainer_gpus: int) -> str:
    """What a ``role-sp-differs`` line on the critic's SP `critic_sp` says to do, as ``--write`` does it
    (`solver.trinity.plan_keys`' ``_critic_sp_keys``): set it to the plan's; for a critic of `another` model, whose
    heads rft-solver does not know, only where `critic_sp` does not divide the `trainer_gpus`, else keep it."""
    write = checks.names.write
    if not another:
        return f"set them alike{checks.names.write_does()}"
    heads = _another_critic_words(checks.value(("model", "critic_model_path")), checks.catalog)
    broken = sp_gpus_violation(trainer_gpus, critic_sp) if trainer_gpus > 0 else None
    if broken:
        return (f"{write} sets it" if checks.names.write_offered else "set it") + (
            f" to the plan's SP, as {broken} ({heads}: check that the plan's SP divides them)")
    return f"{write} keeps it: {heads}" if checks.names.write_offered else f"keep it: {heads}"


def _another_critic_words(critic_path: Any, catalog: Catalog | None) -> str:
    """Whose a critic of another model (``model.critic_model_path``, `critic_path`) is, in words: the model of
    `catalog` (the run's; None: the shipped catalogue) it names (``Qwen/Qwen3-14B``, as a Hugging Face id or a path by
    its last part), with its attention heads, to which the plans hold no SP (rft-solver counts the critic as the
    actor's model); where it names none, that rft-solver does not know its heads."""
    try:
        critic = (catalog if catalog is not None else load_catalog()).model(critic_path)
    except QueryError:
        return "the critic is model.critic_model_path's, whose heads rft-solver does not know"
    return (f"the critic is model.critic_model_path's, {critic.name}, of {critic.num_attention_heads} attention heads "
            f"({critic.num_key_value_heads} key-value), to which rft-solver, counting the critic as the actor's "
            "model, holds no SP")


def _engine_failure(trainer_gpus: int, engine_sp: int, batch: TrainBatch,
                    update: str | None = "the critic's first update") -> str | None:
    """Why verl 0.8's FSDP engine fails a role (the critic, `update` naming its first update; None for a role that
    updates nothing, the ref) at SP `engine_sp` on `trainer_gpus`, in words (after "where"): as it
    starts, where SP does not divide them, as it builds its Ulysses mesh of ``trainer_gpus // engine_sp`` x
    `engine_sp` GPUs (``_init_device_mesh``, ``workers/engine/fsdp/transformer_impl.py:220-226`` in verl 0.8.0), which
    leaves the remainder out, and each GPU left out fails on the mesh's SP group
    (``self.ulysses_device_mesh["sp"].get_group()``, ``:226``: an ``IndexError`` in torch's ``DeviceMesh.get_group``,
    read on torch 2.13 with gloo); else at `update`, where its data-parallel ranks there do not divide the train
    `batch` (where known): Trinity 0.6 gives the critic and the actor the batch as their mini-batch
    (``critic.ppo_mini_batch_size``, ``actor.ppo_mini_batch_size``, ``FROZEN_KEYS``, ``trainer/verl/config.py:458``,
    ``:285``, ``:734`` and ``:709`` in 0.6.0), which
    verl asserts its ranks divide (``train_mini_batch``, ``workers/engine_workers.py:258`` in verl 0.8.0), with the
    nearest batches they divide. None where it runs (or the GPUs are not known)."""
    if trainer_gpus < 1:
        return None
    if broken := sp_gpus_violation(trainer_gpus, engine_sp):
        meshed = trainer_gpus // engine_sp * engine_sp
        return (f"{broken}: its engine's SP mesh holds {meshed} of them and it fails as it starts on the "
                f"{trainer_gpus - meshed} left out")
    split = batch_split_violation(batch.size, trainer_gpus, engine_sp, batch.source) if update else None
    if split is None:
        return None
    return (f"{split}, which verl asserts at {update} (verl 0.8.0 workers/engine_workers.py:258): it "
            f"fails there; {dividing_batch_words(trainer_gpus, engine_sp, False, batch.size)} runs it")


def _check_critic_engine_sp(checks: _ConfigChecks, sp: int, another: bool, layout: tuple[int, TrainBatch],
                            refused: str | None) -> None:
    """Say where the critic's engine's SP (`CRITIC_ENGINE_SP_KEY`), set to another than the trainer's `sp`, runs the
    critic: Trinity 0.6 on verl 0.8 or later at it; with verl before 0.8 no release reads it. The line says what the
    verdict counts (``role-sp-differs``, `CriticSpLine`), or, where no verl line runs the critic, `refused`: why the
    config runs on none (``role-sp-differs-refused``); where verl 0.8 fails the
    critic at it on the trainer GPUs or with the train batch of `layout` (`_engine_failure`), why. The line says what
    to do (`_critic_sp_fix`: a critic of `another` model's kept where it divides the trainer GPUs)."""
    engine = checks.number(CRITIC_ENGINE_SP_KEY)
    if engine is None or max(1, int(engine)) == sp:
        return
    engine_sp = max(1, int(engine))
    trainer_gpus, batch = layout
    fails = _engine_failure(trainer_gpus, engine_sp, batch)
    runs = (f"Trinity 0.6 on verl 0.8 or later takes SP {engine_sp}, its engine's over the trainer's (checking it "
            f"against nothing), where {fails}" if fails else
            f"Trinity 0.6 on verl 0.8 or later runs the critic at SP {engine_sp}, its engine's over the trainer's "
            f"(checking it against nothing)")
    _add_critic_sp_line(checks, sp, (
        f"{dotted(CRITIC_ENGINE_SP_KEY)} {engine_sp} is not trainer.ulysses_sequence_parallel_size {sp}: "
        f"{runs}, and with verl before 0.8 no release reads it; "),
        f": {_critic_sp_fix(checks, another, engine_sp, trainer_gpus)}", refused)


def _check_batch_over_trainer_gpus(checks: _ConfigChecks, trainer_gpus: int, batch: TrainBatch, sp: int,
                                   role_sps: Iterable[int]) -> None:
    """Where the release may refuse a train `batch` its trainer GPUs do not divide (`TrainBatch.divisor` ``unsure``:
    0.5, whose 0.5.0 and 0.5.1 refuse it and 0.5.2 takes it), caution that they do not, where the data-parallel ranks
    at the trainer's SP `sp` and at each of `role_sps` divide it (where one does not, or SP does not divide the GPUs,
    all of 0.5 refuses the config, said elsewhere). Nothing for a release that takes it (``ranks``: 0.5.2, 0.6), nor
    for one that refuses it (``gpus``: 0.5.0, 0.5.1), whose verdict says it breaks that rule."""
    size, sps = batch.size, (sp, *role_sps)
    if (batch.divisor != "unsure" or size is None or trainer_gpus < 1 or size % trainer_gpus == 0
            or any(trainer_gpus % each or not splits_batch(size, trainer_gpus, each) for each in sps)):
        return
    checks.add(ConfigProblemCode.BATCH_DIVIDES_TRAINER_GPUS,
               batch_over_trainer_gpus_words(size, batch.source, trainer_gpus, sp))


class TrainBatch(NamedTuple):
    """A config's train batch, where known (`size`; None: not known), the keys or flag it came from (`source`), as
    messages name them, and what must divide it for the release judged for (`divisor`, `counted_batch_divisor`)."""

    size: int | None = None
    source: str = TRAIN_BATCH_KEY
    divisor: BatchDivisor = "ranks"


def _check_sp_key(checks: _ConfigChecks, path: tuple[str, ...], model: Model, trainer_gpus: int, whose: str, *,
                  heads: bool = True, batch: TrainBatch | None = None, divisor: BatchDivisor = "ranks") -> int:
    """Check the SP at `path` against `trainer_gpus`, (with `heads`) `model`'s heads and attention and (where `batch`
    is known) the train batch, which its data-parallel ranks must divide (`sp_gpus_violation`, `sp_rule_violation`,
    `sp_attention_violation`, `batch_split_violation`: the trainer's own SP breaking the last is the verdict's rule,
    so it is left to the caller); `whose` follows the problems' words; an SP below 1 is said as the release (`batch`'s
    divisor, else `divisor`) reads it (`_sp_below_1_line`); return the SP (1 where unset or below 1)."""
    key = ".".join(path)
    sp_value = checks.number(path)
    sp = int(sp_value) if sp_value is not None else 1
    if sp < 1:
        checks.add(*_sp_below_1_line(path, sp, batch.divisor if batch else divisor, trainer_gpus))
        sp = 1
    if trainer_gpus < 1 and not whose:  # said once, with the trainer's SP
        checks.add(ConfigProblemCode.VALUE_OUT_OF_RANGE, f"the trainer needs at least 1 GPU, got {trainer_gpus}")
    refusals = legacy_sp_refusals(model, trainer_gpus, sp, batch, heads=heads)
    for code, words in refusals:
        trainers = " (the trainer's)" if code is ConfigProblemCode.SP_DIVIDES_GPUS else ""
        checks.add(code, f"{key}: {words}{trainers}{whose}")
    if (heads and all(code is not ConfigProblemCode.SP_MODEL_HEADS for code, _ in refusals)
            and (unreached := sp_attention_violation(model, sp))):  # no release refuses it, as `whose` would say
        checks.add(ConfigProblemCode.SP_MODEL_ATTENTION, f"{key}: {unreached} ({model.name})")
    return sp


def _sp_below_1_line(path: tuple[str, ...], sp: int, divisor: BatchDivisor,
                     trainer_gpus: int) -> tuple[ConfigProblemCode, str]:
    """The line on the SP `sp`, below 1, at `path`. The trainer's Trinity sets to 1 with a warning as it loads the
    config (``value-out-of-range``, the verdict at SP 1). So does Trinity 0.5.2's ``_check_parallel_config`` a role's
    own (``trainer/verl/verl_config.py:411-414``, as 0.6.0's on verl before 0.8,
    ``verl_legacy/verl_config.py:418-421``), but 0.5.0's and 0.5.1's keep it (`_sp_kept_words`: what they do with
    the value given on `trainer_gpus`). A role's own, which is checked so only for Trinity 0.5
    (`_check_sequence_parallel`), by the release the train batch's `divisor` stands for
    (`solver.tables.bounds.counted_batch_divisor`): refused for 0.5.0 and 0.5.1 (``gpus``), a ``but:`` line for a
    bare 0.5 (``unsure``), ``value-out-of-range`` for 0.5.2."""
    below = f"{'.'.join(path)} must be at least 1, got {sp}"
    set_to_1 = "sets it to 1 with a warning as it loads the config"
    if path == TRAINER_SP_KEY:
        return ConfigProblemCode.VALUE_OUT_OF_RANGE, (
            f"{below}: Trinity {set_to_1} (config_validator.py:1271 in 0.6.0, :1174 in 0.5.2), and the verdict is at "
            "SP 1")
    if divisor == "ranks":  # 0.5.2
        return ConfigProblemCode.VALUE_OUT_OF_RANGE, (
            f"{below}: Trinity 0.5.2 {set_to_1} (trainer/verl/verl_config.py:411-414), and the verdict is at SP 1")
    kept = _sp_kept_words(path, sp, trainer_gpus)
    if divisor == "gpus":
        return ConfigProblemCode.ROLE_SP_BELOW_ONE_REFUSED, f"{below}: Trinity {kept}: set it to 1 or more"
    return ConfigProblemCode.ROLE_SP_BELOW_ONE, (
        f"{below}: Trinity 0.5.2 {set_to_1} (trainer/verl/verl_config.py:411-414), at which the verdict is, but "
        f"{kept}: set it to 1 or more")


def _sp_kept_words(path: tuple[str, ...], sp: int, trainer_gpus: int) -> str:
    """What Trinity 0.5.0 and 0.5.1, which keep a role's own SP below 1 (at `path`), do with the value given, `sp`, on
    `trainer_gpus`, in words: ``_check_parallel_config`` takes ``world_size % sp_size`` (``common/verl_config.py:411``
    in 0.5.0, ``:413`` in 0.5.1), which divides by zero at 0 and refuses a negative SP whose size does not divide the
    GPUs (Python's ``%`` takes the divisor's sign: ``8 % -3`` is -1); one whose size does passes it, the token budget
    then set below 0 (``math.ceil(required_min / seq_parallel)``, ``:469``, ``:471``), and the actor's worker fails as
    it starts on its mini-batch per data-parallel rank, ``GPUs // SP``, below 0 (``assert ppo_mini_batch_size > 0``,
    ``trainer/verl/fsdp_workers.py:218`` in 0.5.0, ``:220`` in 0.5.1)."""
    source = "common/verl_config.py:411 in 0.5.0, :413 in 0.5.1"
    if sp == 0:
        return ("0.5.0 and 0.5.1 keep it and fail on it (at 0, world_size % sp_size divides by zero as they load the "
                f"config: {source})")
    remainder = trainer_gpus % sp
    if remainder != 0:  # Python's %, on the count as given (one below 1 has a line of its own too)
        return (f"0.5.0 and 0.5.1 keep it and refuse the config as they load it (Python's {trainer_gpus} % {sp} is "
                f"{remainder}, not 0: the trainer GPUs must be divisible by it, {source})")
    passed = (f"0.5.0 and 0.5.1 keep it ({trainer_gpus} % {sp} is 0 in Python, which passes their check, {source}) "
              "and set its token budget below 0 (a length over it: common/verl_config.py:469 in 0.5.0, :471 in 0.5.1)")
    if path != ROLE_SP_KEYS[0]:
        return passed
    return (f"{passed}; their actor's worker then fails as it starts, its mini-batch per data-parallel rank below 0 "
            f"({trainer_gpus} // {sp} = {trainer_gpus // sp} ranks: trainer/verl/fsdp_workers.py:218 in 0.5.0, :220 "
            "in 0.5.1)")


def legacy_sp_refusals(model: Model, trainer_gpus: int, sp: int, batch: TrainBatch | None = None, *,
                       heads: bool = True) -> list[ConfigProblem]:
    """Why Trinity with verl before 0.8 refuses a role's SP `sp` as it loads the config, each with its code, in the
    order it checks them (``_check_parallel_config``, ``trainer/verl_legacy/verl_config.py:405`` in 0.6.0, the same
    code as 0.5.2's ``trainer/verl/verl_config.py:399``, run on the actor, the ref and the critic alike): SP divides
    the `trainer_gpus` (``:423``; not judged where they are not known, below 1), its data-parallel ranks divide the
    train `batch` where known (``:430``), and (with `heads`: not for a critic of another model, whose heads
    rft-solver does not know) `model`'s heads (`sp_rule_violation`: its attention heads, ``:447``, then its KV heads
    and SP dividing one another, as with the trainer's SP); [] where it takes it."""
    refusals = []
    if trainer_gpus >= 1 and (broken := sp_gpus_violation(trainer_gpus, sp)):
        refusals.append(ConfigProblem(ConfigProblemCode.SP_DIVIDES_GPUS, broken))
    elif trainer_gpus >= 1 and batch and (split := batch_split_violation(batch.size, trainer_gpus, sp, batch.source)):
        refusals.append(ConfigProblem(ConfigProblemCode.BATCH_DIVIDES, split))
    violation = sp_rule_violation(model.num_attention_heads, model.num_key_value_heads, sp) if heads else None
    if violation:
        refusals.append(ConfigProblem(ConfigProblemCode.SP_MODEL_HEADS, f"{violation} of {model.name}"))
    return refusals


def _trinity_raises(path: tuple[str, ...], subject: str) -> bool:
    """Whether Trinity with verl before 0.8 raises the token budget at `path` where it holds no sequence: every one
    but a forward's own (`FORWARD_BUDGETS`), which is filled from a raised one; a role's (`subject` not "it", the
    trainer's that the role takes) is."""
    return subject != "it" or path not in FORWARD_BUDGETS


def _budget_effect(path: tuple[str, ...], length: float, role_sp: int, subject: str,
                   version: TrinityVersion | None, *, read_on_08: bool, raised: bool = True) -> str:
    """What the release (`version`, None where not known) does with the token budget at `path`, judged at `role_sp`
    and too small to hold a sequence of `length`, in words (`subject`: the budget Trinity raises, "it" or a role's).
    A forward's budget (`_trinity_raises`) is never raised, and verl stops there as `micro_batch_stop_words` says with
    Trinity 0.5 (or no release); Trinity 0.6.0 on verl before 0.8 at the first sequence longer, as 0.5.2. A raised
    budget holds every sequence, but with Trinity 0.5.1 not every padded batch: a line of its own
    (`raised_budget_stop_words`). With 0.6 the words name that release alone, not 0.5.0's raise. verl 0.8 or later
    reads the trainer's budget only where `read_on_08` (its dynamic batch sizes on); verl before 0.8 raises it at
    `role_sp` only where `raised` (a role that takes it runs there, `_check_token_budgets`)."""
    # verl needs a micro-batch to hold the longest sequence: Trinity with older verl raises a budget to that (Trinity
    # 0.5.0's _adjust_token_len_if_needed to twice that, its default).
    who = legacy_release_words(version)  # the Trinity that raises a budget holding no sequence
    least = least_token_budget(length, role_sp)
    default_050 = (f" (Trinity 0.5.0 to its default, ceil(2 x {shown_number(length)} / {role_sp}) = "
                   f"{math.ceil(2 * length / role_sp)})")
    raised_words = (f"{who} raises {subject} to ceil({shown_number(length)} / {role_sp}) = {least}"
                    + ("" if version == "0.6" else default_050))
    if subject != "it":  # a role's, taken from the trainer's
        return raised_words
    if not _trinity_raises(path, subject):  # filled from a raised budget, never raised itself
        forward = FORWARD_BUDGETS[path].forward
        if version == "0.5":
            return (f"Trinity 0.5 never raises it, and in {forward} its verl (before 0.8) "
                    f"{micro_batch_stop_words('Trinity 0.5.2')}")
        if version is None:  # 0.5.0 and 0.5.1 too
            return (f"in {forward} verl before 0.8 {micro_batch_stop_words('Trinity 0.5.2 and 0.6')}, and Trinity 0.6 "
                    "on verl 0.8 or later ignores the key")
        return (f"verl before 0.8 stops at the first sequence longer than that in {forward}, and Trinity 0.6 on verl "
                "0.8 or later ignores the key")
    if version == "0.5":  # its verl is before 0.8: it reads the roles' own keys
        return raised_words
    on_08 = f"{'' if version == '0.6' else 'Trinity 0.6 '}on verl 0.8 or later"
    if path in ROLE_BUDGET_KEYS:
        return f"{raised_words}, and {on_08} ignores the key"
    if not read_on_08:
        return f"{raised_words}, and {on_08} reads no token budget with dynamic batch sizes off"
    stops = "verl 0.8 or later stops at the first sequence longer than that"
    if not raised:
        return f"{stops}; on verl before 0.8 each role that takes it runs at an SP of its own"
    return f"{stops}, and {raised_words}"


def _idle_roles(checks: _ConfigChecks, version: TrinityVersion | None) -> set[str]:
    """The roles (`ROLE_BUDGET_PATHS`') whose passes never run under the config's algorithm as the Trinity release
    `version` runs it, so that nothing reads their budgets (Trinity raises them all the same, to no effect): the
    critic where the algorithm trains none (`trains_critic`), the ref where it computes no ref log-probs
    (`ref_forward_runs`; with LoRA it does, the actor without its adapter taking the ref's budget), the rollout where
    no old log-prob recompute runs (`recompute_may_run`: ``rollout_correction.bypass_mode`` true, its default; on
    verl 0.8 or later that pass reads the trainer's budget, not the rollout's)."""
    algorithm = checks.value(("algorithm", "algorithm_type"))
    return {role for role, idle in (("critic", not trains_critic(algorithm)),
                                    ("ref", not ref_forward_runs(algorithm, version)),
                                    ("rollout", not recompute_may_run(checks.config.get))) if idle}


def _own_budget_set(checks: _ConfigChecks, role: str) -> bool:
    """Whether `role` (`ROLE_BUDGET_PATHS`') sets a token budget of its own: a pass that reads a budget takes the
    trainer's where it sets none (the rollout the actor's, where set, first)."""
    paths = ROLE_BUDGET_PATHS[role][:1] + (ROLE_BUDGET_PATHS["actor"] if role == "rollout" else ())
    return any(checks.number(path) is not None for path in paths)


def _trainer_budget_readers(checks: _ConfigChecks, version: TrinityVersion | None) -> dict[str, list[str]]:
    """With ``trainer.use_dynamic_bsz`` off: the roles whose own key turns dynamic batch sizes back on (not
    `sequence_counted_roles` of a release `version` may be; nor one whose passes never run, `_idle_roles`) and that
    read the trainer's budget, setting none of their own (`_own_budget_set`), each with those releases in words."""
    readers: dict[str, list[str]] = {}
    for release in (version,) if version is not None else _LEGACY_RELEASES:
        on = set(ROLE_BUDGET_PATHS) - sequence_counted_roles(checks.flag, release) - _idle_roles(checks, release)
        for role in sorted(on, key=list(ROLE_BUDGET_PATHS).index):
            if not _own_budget_set(checks, role):
                readers.setdefault(role, []).append(_LEGACY_RELEASES[release])
    return readers


_LEGACY_RELEASES: dict[TrinityVersion, str] = {"0.5": legacy_release_words("0.5"), "0.6": legacy_release_words("0.6")}
"""The releases whose roles' own dynamic batch size keys count (`ROLE_DYNAMIC_BATCH_KEYS`), in words."""


def _trainer_dynamic_off_words(checks: _ConfigChecks, version: TrinityVersion | None) -> str:
    """Why ``trainer.use_dynamic_bsz`` must be on, said where it is off: verl then ignores the token budget, but in
    the passes of roles whose own key turns dynamic batch sizes back on and that read the trainer's budget
    (`_trainer_budget_readers`), on the releases where they do."""
    readers = _trainer_budget_readers(checks, version)
    if not readers:
        return _DYNAMIC_OFF_WORDS
    passes = and_joined([f"the {role}'s ({' and '.join(releases)})" for role, releases in readers.items()])
    on_08 = "" if version == "0.5" else "; on Trinity 0.6 with verl 0.8 or later every pass follows this key"
    return (f"verl then fills micro-batches by sequence count, ignoring the token budget (max_token_len_per_gpu), "
            f"which the tables measured and the plan sets, in every pass but {passes}, whose own key turns dynamic "
            f"batch sizes back on and which take{'s' if len(readers) == 1 else ''} this budget, setting none of "
            f"{'its' if len(readers) == 1 else 'their'} own{on_08}: set it to true")


_DYNAMIC_OFF_WORDS = ("verl then ignores the token budget (max_token_len_per_gpu), which the tables measured and "
                      "the plan sets, and fills micro-batches by sequence count: set it to true")
"""Why a dynamic batch size key must be on, said where it is off (the trainer's: `_trainer_dynamic_off_words`)."""


def _legacy_role_sps(checks: _ConfigChecks, version: TrinityVersion | None) -> dict[str, int]:
    """For a release that may be Trinity 0.6 on verl before 0.8 (`version` 0.6, or none given), the actor's and the
    ref's own SP (`ROLE_SP_KEYS`), by name, where set to a whole number of at least 1: that path takes each over the
    trainer's (``set_if_none``, ``trainer/verl_legacy/verl_config.py:554``, ``:577`` in 0.6.0, as 0.5.2's
    ``trainer/verl/verl_config.py:546``, ``:569``) and raises the role's token budget at it
    (``_adjust_token_len_if_needed``, reading the role's SP at ``:484``, called at ``:563``, ``:586``), and verl
    0.7.1 fills each of the role's micro-batches with its budget x that SP (``workers/actor/dp_actor.py:72``,
    ``:467``, ``:559``); Trinity 0.6 on verl 0.8 or later freezes both to the trainer's (``FROZEN_KEYS``,
    ``trainer/verl/config.py:717``, ``:724``). Trinity 0.5's are `_check_sequence_parallel`'s."""
    if version == "0.5":
        return {}
    sps = {name: checks.number(key) for name, key in zip(ROLES, ROLE_SP_KEYS, strict=True)}
    return {name: int(own) for name, own in sps.items() if own is not None and own >= 1}  # read whole (NUMBER_KEYS)


def _check_token_budgets(checks: _ConfigChecks, length: float | None, sp: int, role_sps: Mapping[str, int],
                         version: TrinityVersion | None) -> None:
    """Check that ``trainer.max_token_len_per_gpu`` and the roles' own budgets (`ROLE_BUDGET_KEYS`), where set, hold a
    sequence of `length` at `sp`; the budget of the actor, of each of `OWN_SP_ROLES` (and of its forward,
    `FORWARD_BUDGETS`) at its own SP (`role_sps`, and verl before 0.8's own SP of the actor and the ref,
    `_legacy_role_sps`) where that is another, and there the trainer's too where such a role takes it (it sets none
    of its own), the trainer's at `sp` only where a role that takes it runs there or verl 0.8 reads it; the critic's
    only where the algorithm trains one (`trains_critic`); the words are `version`'s
    (`_budget_effect`), each raised budget's followed by a line on Trinity 0.5.1's padded width but with 0.6
    (`raised_budget_stop_words`). Only a role's whose passes run (not `_idle_roles`) and read a budget (not
    `sequence_counted_roles`), and the trainer's where one of them sets none of its own."""
    trainer_path: tuple[str, ...] = ("trainer", "max_token_len_per_gpu")
    counted = sequence_counted_roles(checks.flag, version) | _idle_roles(checks, version)
    if counted >= set(ROLE_BUDGET_PATHS):  # every pass fills its micro-batches by sequence count
        return
    unread = {path for role in counted for path in ROLE_BUDGET_PATHS[role]}
    # Trinity 0.6 on verl 0.8 or later gives each pass the trainer's, where that reads one (dynamic batch sizes on).
    read_on_08 = version != "0.5" and not turned_off(checks.flag(DYNAMIC_BATCH_KEYS[0]))
    roles = [role for role in OWN_SP_ROLES if role.name not in counted]
    budgets = {path: checks.number(path) for path in (trainer_path, *ROLE_BUDGET_KEYS) if path not in unread}
    owners = {role.budget_key: role.name for role in roles} | {
        path: forward.role for path, forward in FORWARD_BUDGETS.items() if path in budgets}
    role_sps = {**role_sps, **_legacy_role_sps(checks, version)}
    takers = [(role.name, role.budget_key) for role in roles]
    if "actor" not in counted:
        owners[ROLE_TOKEN_BUDGETS[0]] = "actor"
        takers.insert(0, ("actor", ROLE_TOKEN_BUDGETS[0]))
    at_own_sp = {path: name for path, name in owners.items() if role_sps.get(name, sp) != sp}
    # verl before 0.8 hands the trainer's budget to each role that sets none, at that role's SP (the rollout's pass at
    # the actor's), so it judges the trainer's at `sp` only where such a role runs there; verl 0.8 or later reads it
    # at `sp` where its dynamic batch sizes are on
    taken_at_sp = any(not _own_budget_set(checks, role) and role_sps.get("actor" if role == "rollout" else role, sp)
                      == sp for role in set(ROLE_BUDGET_PATHS) - counted)
    judged = [(path, role_sps[at_own_sp[path]], f" (the {at_own_sp[path]}'s)", "it") if path in at_own_sp
              else (path, sp, "", "it") for path in budgets
              if path != trainer_path or taken_at_sp or read_on_08]
    taking: dict[int, list[str]] = {}  # the roles at another SP that take the trainer's budget, by that SP
    for name, budget_key in takers:
        if budget_key in at_own_sp and budgets[budget_key] is None:
            taking.setdefault(role_sps[name], []).append(name)
    for role_sp, names in taking.items():
        whose = " and ".join(f"the {name}'s" for name in names)
        sets = "sets no budget of its own" if len(names) == 1 else "set no budget of their own"
        judged.append((trainer_path, role_sp, f" ({whose}, which {sets})", whose))
    for path, role_sp, named, subject in judged:
        budget, raised = budgets[path], path != trainer_path or subject != "it" or taken_at_sp
        if budget is not None and length is not None and budget < least_token_budget(length, role_sp):
            checks.add(
                ConfigProblemCode.TOKEN_BUDGET_BELOW_LENGTH,
                f"{'.'.join(path)} {shown_number(budget)} x SP {role_sp}{named} is below "
                f"{checks.length_words(length)}: "
                f"{_budget_effect(path, length, role_sp, subject, version, read_on_08=read_on_08, raised=raised)}"
            )
            if version != "0.6" and raised and _trinity_raises(path, subject):
                checks.add(ConfigProblemCode.TOKEN_BUDGET_BELOW_LENGTH, raised_budget_stop_words(
                    f"{'.'.join(path)}{named}", least_token_budget(length, role_sp), role_sp))


def _check_prompt_and_response(checks: _ConfigChecks, length: float | None) -> None:
    """Check ``model.max_prompt_tokens`` and ``max_response_tokens``: at least 0, together within `length`, and one
    set alone below it (`limit_at_length_words`: Trinity lowers it and leaves the other 1 token; ``--write``
    refuses to write it so)."""
    prompt, response = checks.number(("model", "max_prompt_tokens")), checks.number(("model", "max_response_tokens"))
    for key, tokens in (("max_prompt_tokens", prompt), ("max_response_tokens", response)):
        if tokens is not None and tokens < 0:
            checks.add(ConfigProblemCode.VALUE_OUT_OF_RANGE,
                       f"model.{key} must be at least 0, got {shown_number(tokens)}")
    alone = [(key, tokens) for key, tokens in (("max_prompt_tokens", prompt), ("max_response_tokens", response))
             if tokens is not None]
    if len(alone) == 1 and length is not None:
        (key, tokens), whole = alone[0], math.floor(length)
        words = limit_at_length_words(OneLimit(key, math.floor(tokens), whole), checks.length_words(length))
        if words is not None:
            checks.add(ConfigProblemCode.PROMPT_OR_RESPONSE_AT_LENGTH, f"{words}: lower it below {whole}")
    if prompt is not None and response is not None and length is not None:
        overlong = overlong_words(prompt, response, length, checks.length_words(length))
        if overlong is not None:
            least = math.ceil(prompt + response)
            checks.add(ConfigProblemCode.PROMPT_RESPONSE_OVER_LENGTH, (
                f"{overlong}, which Trinity refuses to load: lower them, or plan for {least} tokens or more "
                f"({checks.names.valued(checks.names.length, least)})"))


def _yarn_setting(model: Model, wanted: float) -> str:
    """The fix that sets the YaRN ``model.rope_scaling`` of factor `wanted` over `model`'s native context, in words,
    with its ``partial_rotary_factor`` where vLLM or the trainer would otherwise rotate another share
    (`mapped_partial_rotary`) and its own ``rope_theta`` (`mapped_rope_theta`), as --write sets it."""
    theta, partial = mapped_rope_theta(model), mapped_partial_rotary(model)
    return (f"set {{rope_type: yarn, factor: {wanted!r}, original_max_position_embeddings: {model.native_context}"
            + ("" if partial is None else f", partial_rotary_factor: {partial[0]!r}")
            + ("}" if theta is None else f", rope_theta: {theta}}}"))


def _theta_setting(checks: _ConfigChecks, model: Model) -> str:
    """What the YaRN fix of a config with no ``model.rope_scaling`` sets beside it for the rollout's vLLM, as --write
    does (`solver.rules.rope_theta_to_set`): `model`'s own RoPE base, where vLLM would otherwise rotate it at another
    and the config sets no ``rope_theta`` (`_check_rope_theta` would then ask for it); "" otherwise."""
    theta = rope_theta_to_set(model)
    thetas = ((*ROLLOUT_MODEL, "rope_theta"), ("model", "rope_theta"))
    if theta is None or not all(checks.absent(path) for path in thetas):
        return ""
    return f" and model.rope_theta: {theta}"


def _check_rope_scaling(checks: _ConfigChecks, model: Model, length: float | None) -> None:
    """Check ``model.rope_scaling`` against `model` and `length`: a mapping, replacing no RoPE scaling of the model's
    own, and YaRN where, and only where, the length is beyond the native context (`_check_yarn`); past the native
    context on a scaling of the model's own that vLLM does not stretch, refused where a vLLM rollout takes it. A
    scaling by a factor on a type advised no YaRN (Phi-3's) is judged first (`_type_refuses_rope`), and where it runs,
    past the native context as a YaRN is (`Model.length_factor`)."""
    native, own_rope = model.native_context, model.rope_scaling
    rope = checks.value(_ROPE_SCALING)
    given_rope = checks.rope_type()
    if own_rope is not None and isinstance(rope, Mapping):
        _check_given_over_own(checks, model, length)
    elif own_rope is not None and rope is not None:  # no mapping: its value, which has no RoPE type
        checks.add(ConfigProblemCode.ROPE_SCALING_REPLACES_OWN, (
            f"model.rope_scaling ({yaml_brief(rope)}) would replace {model.name}'s own {own_rope} RoPE scaling: "
            "remove it"))
    wanted = model.yarn_factor(int(length)) if length is not None else None
    if (length is not None and rope is None and wanted is None and length > model.vllm_longest_length
            and _vllm_refuses_past_native(checks)):
        code = (ConfigProblemCode.PAST_NATIVE_ON_OWN_SCALING_REFUSED if own_rope is not None
                else ConfigProblemCode.PAST_DERIVED_LENGTH_REFUSED)
        checks.add(code, (
            f"{checks.length_words(length)} is beyond {_vllm_longest_words(model)}: vLLM refuses it "
            f"unless {'='.join(LONG_LENGTH_VARIABLE)} is set before Ray starts; set it (and check that the model "
            f"handles this length), or {checks.lower_length_words(model.vllm_longest_length)}"))
    if rope is not None and not isinstance(rope, Mapping):  # Trinity refuses it whatever the length, as --write does
        fix = _yarn_setting(model, wanted) if length is not None and wanted is not None else "remove it"
        checks.add(ConfigProblemCode.ROPE_SCALING_WRONG,
                   f"model.rope_scaling must be a mapping, got {yaml_brief(rope)}: {fix}")
    vllm_takes = isinstance(rope, Mapping) and _vllm_takes_rope_scaling(checks)
    # a scaling the release's trainer fails on (a PhiMoE's without its keys) stretches nothing: its refusal, alone
    fails = isinstance(rope, Mapping) and _trainer_failure(checks, model, rope) is not None
    stretch = None if fails else _unneeded_stretch(given_rope, vllm_takes)
    unneeded = length is not None and length <= native and own_rope is None and stretch is not None
    if unneeded and length is not None:
        checks.add(ConfigProblemCode.ROPE_SCALING_UNNEEDED, (
            f"{checks.rope_length_words(length)} is within {model.name}'s native context of {native}: {stretch}; "
            "remove it"))
        checks.value((*_ROPE_SCALING, "factor"))  # Trinity resolves it all the same: one it cannot is a problem too
    _check_rope_types(checks, rope)
    refused = isinstance(rope, Mapping) and _type_refuses_rope(checks, model, _ROPE_SCALING, rope, not unneeded)
    if length is not None and not refused and model.rope_advice.unadvised(given_rope):  # judged as a YaRN is
        wanted = model.length_factor(int(length))
    removed = unneeded or model.rope_advice.unadvised(given_rope) or own_rope not in (None, given_rope)
    if isinstance(rope, Mapping) and not removed:  # else another line says to remove it (refused: removed too)
        _check_mapped_theta(checks, model, rope)
    if isinstance(rope, Mapping) and vllm_takes and not refused:
        _check_vllm_rope(checks, model, _ROPE_SCALING, rope)
    elif not refused and not unneeded and (length is None or wanted is None):  # else removing it, or _check_yarn
        _check_rope_built(checks, model, rope)
    if length is not None and wanted is not None:
        if rope is None and length > model.vllm_longest_length and _vllm_refuses_past_native(checks):
            checks.add(ConfigProblemCode.ROPE_SCALING_MISSING_REFUSED, (
                f"{checks.rope_length_words(length)} is beyond {model.name}'s native context "
                f"of {native}, which the rollout's vLLM refuses unless "
                + (f"{'='.join(LONG_LENGTH_VARIABLE)} is set before Ray starts (it applies no RoPE scaling's factor "
                   f"to a Gemma 3's length): {_yarn_setting(model, wanted)}{_theta_setting(checks, model)}"
                   f"{checks.names.write_does('as ')}, and set the variable"
                   if model.vllm_skips_rope_factor else
                   f"a rope_scaling covers it or {'='.join(LONG_LENGTH_VARIABLE)} is set before Ray starts: "
                   f"{_yarn_setting(model, wanted)}{_theta_setting(checks, model)}{checks.names.write_does('as ')}")))
        elif rope is None:
            checks.add(ConfigProblemCode.ROPE_SCALING_MISSING, (
                f"{checks.rope_length_words(length)} is beyond {model.name}'s native context "
                f"of {native}: {_yarn_setting(model, wanted)}"))
        elif isinstance(rope, Mapping):
            _check_yarn(checks, native, length, wanted, model.vllm_allowed_length)
            _check_factor_skipped(checks, model, length)


def _unneeded_stretch(rope_type: object, vllm_takes: bool) -> str | None:
    """What a ``model.rope_scaling`` of `rope_type` does within the model's native context, where the config's length
    lies, in words, where it stretches the positions the model was trained on there: a YaRN and a ``linear`` one
    wherever the model is built with it, a ``dynamic`` one where the rollout's vLLM takes it (`vllm_takes`), which
    raises the RoPE base at every length to the base for its factor times the native context
    (``DynamicNTKScalingRotaryEmbedding._compute_cos_sin_cache``, ``dynamic_ntk_scaling_rope.py:56-60`` in vLLM
    0.19.1), where transformers 5.12.1 raises it past the native context alone (``_compute_dynamic_ntk_parameters``,
    ``modeling_rope_utils.py:310-322``); None where it does not."""
    if rope_type == "yarn":
        return "YaRN is not needed there (it stretches the positions the model was trained on)"
    if rope_type == "linear":
        return "a linear RoPE scaling is not needed there (it stretches the positions the model was trained on)"
    if rope_type == "dynamic" and vllm_takes:
        return ("a dynamic RoPE scaling is not needed there (the rollout's vLLM raises the RoPE base at every length, "
                "as for its factor times the native context, which turns the positions the model was trained on "
                "otherwise; the trainer's transformers, only past the native context)")
    return None


VLLM_SAME_ROPE_TYPES = (("longrope", "su"), ("default", "mrope"))
"""The ``(rope_type, type)`` pairs of a RoPE scaling that name one type, a legacy name in ``type`` beside its modern
one, as vLLM takes them from a config.json (``patch_rope_parameters_dict``, ``vllm/transformers_utils/config.py:430``
to ``:442`` in vLLM 0.19.1)."""


def _check_rope_types(checks: _ConfigChecks, rope: Any) -> None:
    """Check a ``model.rope_scaling`` mapping (`rope`) that names its type twice, in ``rope_type`` and the legacy
    ``type``, of two values (but for `VLLM_SAME_ROPE_TYPES`): the rollout's vLLM takes ``rope_type`` alone, as Trinity
    hands the mapping to it (`HANDED_PAST_WORDS`), past the comparison that refuses two that differ
    (``patch_rope_parameters_dict``, ``vllm/transformers_utils/config.py:430-442`` in vLLM 0.19.1, run on the
    config.json alone), so the config runs, the ``type`` saying what is not taken; on Trinity 0.5 with a vLLM before
    0.12, which 0.5.0 also takes, vLLM compares them and refuses the two as it starts (``patch_rope_scaling_dict``,
    ``transformers_utils/config.py:377`` in vLLM 0.11.0)."""
    paths = ((*_ROPE_SCALING, "rope_type"), (*_ROPE_SCALING, "type"))
    if not isinstance(rope, Mapping) or not all(path[-1] in rope for path in paths):
        return
    modern, legacy = (checks.value(path) for path in paths)
    if checks.unreadable & set(paths) or modern == legacy or (modern, legacy) in VLLM_SAME_ROPE_TYPES:
        return
    older = (" (on Trinity 0.5 with a vLLM before 0.12, as 0.5.0 also takes, vLLM refuses the two as it starts)"
             if checks.version == "0.5" else "")
    checks.add(ConfigProblemCode.ROPE_SCALING_WRONG, (
        f"model.rope_scaling names its type twice, rope_type {yaml_brief(modern)} and type {yaml_brief(legacy)}: "
        f"a vLLM rollout takes rope_type alone{older}; remove type, or give it rope_type's value"))


HANDED_PAST_WORDS = "Trinity hands vLLM the mapping as the model's rope_parameters, past transformers' filling-in"
"""Why the rollout's vLLM reads a RoPE scaling from Trinity as it is given, in words: Trinity hands it on as
``hf_overrides={"rope_parameters": ...}`` (``common/models/vllm_model.py:132-138`` in 0.6.0, ``:89-97`` in 0.5.0,
``:91-99`` in 0.5.2, with vLLM 0.12 or later), which vLLM sets after reading the config.json
(``vllm/config/model.py:470-478``, ``:507-508``, ``_apply_dict_overrides`` ``:413-428`` in vLLM 0.19.1), past
``patch_rope_parameters`` (``transformers_utils/config.py:786``), whose transformers' ``standardize_rope_params``
copies ``type`` to ``rope_type``, fills ``original_max_position_embeddings`` in and keeps ``rope_theta``."""


def _check_vllm_rope(checks: _ConfigChecks, model: Model, path: Path, rope: Mapping[str, Any]) -> None:
    """Check a RoPE scaling mapping `rope` (at `path`) that the rollout's vLLM takes as it is (`HANDED_PAST_WORDS`):
    one naming its type in the legacy ``type`` alone (not a Gemma 3's: vLLM reads no Gemma 3 scaling for its length),
    which ``_get_and_verify_max_len`` reads as ``rope_type`` (a KeyError, ``vllm/config/model.py:2111`` in vLLM
    0.19.1), or one vLLM builds no rotary embedding of (`vllm_rope_problem`: a yarn without
    ``original_max_position_embeddings``, a KeyError at ``:2119``), fails as vLLM starts: refused, but on Trinity 0.5,
    whose 0.5.0 also takes a vLLM before 0.12 that fills both in (`_check_rope_types`). A ``model.rope_scaling`` by a
    factor for a model whose type is advised no YaRN (Phi-3's) is judged before (`_type_refuses_rope`), and not here
    if refused; the rollout model's own, which the trainer never builds, vLLM builds as given (`BUILT_AS_GIVEN`)."""
    given = checks.rope_type(path)  # read first: what cannot be read is said there, and judged no further
    if checks.unreadable & {(*path, "rope_type"), (*path, "type")}:
        return
    rope_type = given if "rope_type" in rope else "default"  # a null one is no type vLLM builds
    if "rope_type" not in rope and "type" in rope and not model.vllm_skips_rope_factor:
        code, problem = ConfigProblemCode.ROPE_TYPE_MISSING_REFUSED, (
            f"{dotted(path)} names its type in type alone ({yaml_brief(given)}): the rollout's vLLM reads rope_type "
            f"and fails as it starts (KeyError 'rope_type'), as {HANDED_PAST_WORDS}; add rope_type: {given}")
    elif (unbuilt := vllm_rope_problem(rope_type, rope)) is not None:
        original = "original_max_position_embeddings"
        fix = ("give it one of those" if not isinstance(rope_type, str) or rope_type not in VLLM_ROPE_TYPE_KEYS else
               f"add {original}: {model.native_context}" if rope_type == "yarn" and model.rope_scaling is None
               and vllm_rope_problem(rope_type, {*rope, original}) is None else "add it")
        code, problem = ConfigProblemCode.ROPE_SCALING_UNBUILT_REFUSED, (
            f"{dotted(path)}: {unbuilt}, and fails as it starts, as {HANDED_PAST_WORDS}; {fix}")
    else:
        return
    if checks.version == "0.5":
        code, problem = ConfigProblemCode.ROPE_SCALING_WRONG, (
            f"{problem} (with vLLM 0.12 or later, every one 0.5.2 takes; a vLLM before 0.12, as 0.5.0 also takes, "
            "fills it in)")
    checks.add(code, problem)


def _type_refuses_rope(checks: _ConfigChecks, model: Model, path: Path, rope: Mapping[str, Any],
                       caution: bool = True) -> bool:
    """Check a RoPE scaling mapping `rope` (at `path`) that stretches `model` by a factor (``yarn``, ``linear``,
    ``dynamic``) where YaRN is not advised for its type (`Model.rope_advice`: a Phi-3 or PhiMoE without its LongRoPE
    factors), first, in every mode (the trainer builds the model with it where no rollout does): refused where the
    release's trainer fails on it (`RopeExtension.trainer_failure`: a PhiMoE's without the keys its rotary embedding
    reads at every step), which no other key mends; else a caution that it builds as given, a RoPE the checkpoint was
    not trained with (`BUILT_AS_GIVEN`), which ``--write`` removes, unless not `caution` (another line says to remove
    it). Whether it was refused; False too where the type cannot be read."""
    given = checks.rope_type(path)
    extension = model.rope_advice.extension
    if not model.rope_advice.unadvised(given) or checks.unreadable & {(*path, "rope_type"), (*path, "type")}:
        return False
    named = f"{dotted(path)}: {'rope_type' if 'rope_type' in rope else 'type'} {given} on {model.name}"
    failure = _trainer_failure(checks, model, rope, path)
    if failure is None:
        if caution:
            checks.add(ConfigProblemCode.ROPE_SCALING_UNTRAINED, (
                f"{named}, for whose model_type {extension.model_type} rft-solver writes no YaRN: "
                f"{extension.why_no_yarn}; remove it{checks.names.write_does('as ')}, and {extension.accepted}"))
        return False
    checks.add(ConfigProblemCode.ROPE_SCALING_UNBUILT_REFUSED, (
        f"{named} lacks {' and '.join(failure.missing)}, which the trainer reads from it at every step on transformers "
        f"{failure.read.transformers} ({failure.read.reader}): a KeyError at its first step; remove it, and "
        f"{extension.accepted}"))
    return True


def _trainer_failure(checks: _ConfigChecks, model: Model, rope: Mapping[str, Any],
                     path: Path = _ROPE_SCALING) -> TrainerFailure | None:
    """Why the trainer fails on `rope`, the RoPE scaling mapping at `path`, where it stretches `model` by a factor
    and YaRN is not advised for its type (`RopeExtension.trainer_failure` on the transformers major versions its
    release runs, `_trainer_transformers`: a PhiMoE's without the keys its rotary embedding reads); None where it does
    not, and where its type cannot be read."""
    if (not model.rope_advice.unadvised(checks.rope_type(path))
            or checks.unreadable & {(*path, "rope_type"), (*path, "type")}):
        return None
    return model.rope_advice.extension.trainer_failure(rope, _trainer_transformers(checks))


def _trainer_transformers(checks: _ConfigChecks) -> tuple[int, ...]:
    """The transformers major versions the trainer of the release checked may run on (`RopeExtension.trainer_failure`):
    5 alone on 0.6, 4 alone on 0.5.1 (its routed experts held ``separate``), 4 or 5 on 0.5.0 and 0.5.2
    (``transformers<=5.3.0,>=4.51.0`` in 0.5.2), on 0.5 named without its patch, and where no release is named."""
    if checks.version == "0.6":
        return (5,)
    return (4,) if checks.version == "0.5" and checks.experts == "separate" else (4, 5)


def _check_rope_theta(checks: _ConfigChecks, model: Model) -> None:
    """Check that the rollout's vLLM rotates `model` at its own RoPE base where it takes a RoPE scaling mapping
    without ``rope_theta`` (the rollout's own, else ``model``'s) and no ``rope_theta`` is set (the rollout model's own,
    else ``model``'s: ``set_if_none``, ``common/config_validator.py:680`` in 0.6.0): the scaling replaces the
    config.json's RoPE parameters, its base with them (`HANDED_PAST_WORDS`), and vLLM takes its class's default
    (`Model.vllm_rope_theta_lost`). The run starts and samples with RoPE at another base than the model was trained
    with (and than the trainer's): a `but:` line, since nothing refuses it."""
    lost = model.vllm_rope_theta_lost
    handed = _handed_rope(checks) if lost is not None else None
    thetas = ((*ROLLOUT_MODEL, "rope_theta"), ("model", "rope_theta"))
    if lost is None or handed is None or "rope_theta" in handed[1] or not all(checks.absent(at) for at in thetas):
        return
    path = handed[0]
    own, taken = (f"{theta:.0f}" if theta.is_integer() else repr(theta) for theta in lost)
    checks.add(ConfigProblemCode.ROPE_THETA_DROPPED, (
        f"{dotted(path)} is given and model.rope_theta is not: the rollout's vLLM takes the scaling in place of "
        f"{model.name}'s RoPE parameters, its rope_theta with them, and rotates at base {taken}, not the model's "
        f"{own}, silently ({HANDED_PAST_WORDS}){_kept_before_vllm_012(checks, 'rope_theta')}; "
        f"set model.rope_theta: {own}"))


def _check_mapped_theta(checks: _ConfigChecks, model: Model, rope: Mapping[str, Any]) -> None:
    """Check a ``model.rope_scaling`` mapping (`rope`) for its own ``rope_theta``: a release's trainer that sets the
    mapping as the model's RoPE parameters on transformers 5 then finds no base there (`mapped_rope_theta`), and fails
    as it builds the model, whatever its type. Trinity 0.6 (`checks.version` 0.6, or none named) does so on verl
    before 0.8; ``model.rope_theta`` mends it on transformers 5.12.1 alone (5.25.0 standardizes the mapping in the
    setter, before Trinity sets the base). Refused on 0.6, as a trainer failure of the release is
    (`_type_refuses_rope`); a ``but:`` line naming 0.6 where no release is named (the config may be for 0.5), and
    0.5.0's and 0.5.2's failure too, or, where ``model.rope_theta`` is set, that it mends theirs (as under 0.5). Trinity
    0.5.0 and 0.5.2 do so too on transformers 5, which they allow (0.5.2 up to 5.3.0, whose ``_compute_*_parameters``
    read the base from the mapping, ``modeling_rope_utils.py:317``, ``base ** ...`` of None at ``:375`` for YaRN),
    unless ``model.rope_theta`` is set (``trainer/verl/fsdp_workers.py:364-365`` in 0.5.2 sets the attribute that
    ``standardize_rope_params`` fills the mapping from): a ``but:`` line under 0.5, not refused, since their vllm
    extra installs transformers 4, which builds it; none under 0.5.1 (`checks.experts` ``separate``: transformers 4
    alone: `_trainer_transformers`). The fix is the model's own base (`Model.own_rope_theta`) in the mapping."""
    if 5 not in _trainer_transformers(checks) or "rope_theta" in rope:
        return
    theta = model.own_rope_theta
    fix = "the model's rope_theta" if theta is None else f"rope_theta: {mapped_rope_theta(model)}"
    add = f"add {fix} to it{checks.names.write_does('as ')}"
    harmless = f"add {fix} to it{checks.names.write_does('as ', 'harmless on transformers 4')}"  # 4 builds it
    if checks.version == "0.5":
        if checks.absent(("model", "rope_theta")):
            checks.add(ConfigProblemCode.ROPE_THETA_MISSING, (
                f"model.rope_scaling has no rope_theta: on transformers 5 (Trinity 0.5.0 allows it, 0.5.2 up to "
                f"5.3.0) Trinity 0.5's trainer sets it as {model.name}'s RoPE parameters, in which transformers finds "
                "no base, and fails as it builds the model unless model.rope_theta is set; on transformers 4, which "
                "Trinity 0.5.2's vllm extra installs (vLLM 0.17.0 to 0.19.0 require transformers below 5), it builds; "
                f"{harmless}"))
        return
    given = "" if checks.absent(("model", "rope_theta")) else " (the model.rope_theta given mends it there)"
    fails = (f"Trinity 0.6's trainer on verl before 0.8 sets it as {model.name}'s RoPE parameters, in which "
             f"transformers 5 finds no base, and fails as it builds the model (a TypeError, modeling_rope_utils.py:446 "
             f"in 5.12.1, :488 in 5.25.0) unless model.rope_theta is set and transformers is 5.12.1{given}")
    if checks.version == "0.6":
        checks.add(ConfigProblemCode.ROPE_THETA_MISSING_REFUSED, (
            f"model.rope_scaling has no rope_theta: {fails}; {add}"))
        return
    releases_05 = ("Trinity 0.5.0's and 0.5.2's fail alike on transformers 5 unless model.rope_theta is set"
                   if not given else "Trinity 0.5.0's and 0.5.2's build it on transformers 5 with the model.rope_theta "
                   "given")
    checks.add(ConfigProblemCode.ROPE_THETA_MISSING, (
        f"model.rope_scaling has no rope_theta: {fails}; {releases_05}, and 0.5's transformers 4 builds it; "
        f"{harmless}"))


def _kept_before_vllm_012(checks: _ConfigChecks, kept: str) -> str:
    """What a RoPE parameter's note adds on Trinity 0.5 (`checks.version`), whose 0.5.0 also takes a vLLM before
    0.12 (``vllm!=0.12.0,<=0.15.1,>=0.10.2``), that keeps the model's `kept` (``rope_theta``,
    ``partial_rotary_factor``): 0.5.0 hands such a vLLM the mapping as its ``rope_scaling`` engine argument
    (``common/models/vllm_model.py:99-104`` in 0.5.0), which replaces the config.json's ``rope_scaling`` alone
    (``hf_overrides_kw`` ``{"rope_scaling": ...}``, ``vllm/config/model.py:398-400`` in vLLM 0.11.0), the model's
    other attributes kept; "" for other releases (0.6 takes vLLM 0.19.1 or later)."""
    if checks.version != "0.5":
        return ""
    return (f" (on Trinity 0.5 with vLLM 0.12 or later, every one 0.5.2 takes; a vLLM before 0.12, as 0.5.0 also "
            f"takes, keeps the model's {kept}: 0.5.0 hands it the mapping as rope_scaling, which replaces the "
            "config.json's rope_scaling alone)")


def _handed_rope(checks: _ConfigChecks) -> tuple[Path, Mapping[str, Any]] | None:
    """The RoPE scaling mapping a vLLM rollout takes (`_vllm_rollout`) in place of the model's RoPE parameters
    (`HANDED_PAST_WORDS`), and its path: the rollout model's own, else ``model.rope_scaling`` (``set_if_none``,
    ``common/config_validator.py:680`` in 0.6.0); None where no vLLM rollout starts, the rollout's is ``???``
    (Trinity keeps none) or what it takes is no mapping."""
    rollout_path = (*ROLLOUT_MODEL, "rope_scaling")
    if not _vllm_rollout(checks) or value_at(checks.mapping, rollout_path) == MISSING:
        return None
    path = _ROPE_SCALING if checks.absent(rollout_path) else rollout_path
    rope = checks.value(path)
    return (path, rope) if isinstance(rope, Mapping) else None


def _check_rope_partial(checks: _ConfigChecks, model: Model) -> None:
    """Check that the rollout's vLLM rotates the share of each head's dimensions `model` rotates where it takes a RoPE
    scaling mapping without ``partial_rotary_factor`` (`_handed_rope`): the scaling replaces the config.json's RoPE
    parameters, which held the share (`HANDED_PAST_WORDS`), and vLLM's class takes its own default
    (`Model.vllm_partial_rotary_lost`); Trinity has no key of its own for it, so only the mapping can give it. The run
    starts and samples with another RoPE than the model was trained with: a `but:` line, as `_check_rope_theta`."""
    lost = model.vllm_partial_rotary_lost
    handed = _handed_rope(checks) if lost is not None else None
    if lost is None or handed is None or "partial_rotary_factor" in handed[1]:
        return
    own, taken = lost
    checks.add(ConfigProblemCode.ROPE_PARTIAL_DROPPED, (
        f"{dotted(handed[0])} is given without partial_rotary_factor: the rollout's vLLM takes the scaling in place of "
        f"{model.name}'s RoPE parameters, its partial_rotary_factor with them, and rotates at partial_rotary_factor "
        f"{taken!r} (the share of each head's dimensions RoPE rotates), not the model's {own!r}, silently "
        f"({HANDED_PAST_WORDS}){_kept_before_vllm_012(checks, 'partial_rotary_factor')}; add partial_rotary_factor: "
        f"{own!r} to it"))


def _check_rope_partial_differs(checks: _ConfigChecks, model: Model) -> None:
    """Check that the trainer and the rollout's vLLM rotate the same share of each head's dimensions where a vLLM
    rollout starts (`_vllm_rollout`): a MiniMax-M2 config.json with ``rotary_dim`` and no ``partial_rotary_factor``
    rotates whole heads in transformers' trainer and ``rotary_dim`` in vLLM (`Model.trainer_partial_rotary_differs`).
    The rollout's log-probs then differ from the trainer's: a `but:` line, as `_check_rope_partial`. The fix is the
    share in the config.json, and in the RoPE scaling mapping vLLM takes (`_handed_rope`) where it lacks it (--write
    adds it there); a mapping's own mends it on Trinity 0.5 alone, whose trainer sets the mapping as the model's RoPE
    parameters, as 0.6's does on verl before 0.8 only (on 0.8 it reads the config.json alone)."""
    differs = model.trainer_partial_rotary_differs
    if differs is None or not _vllm_rollout(checks):
        return
    handed = _handed_rope(checks)
    given = handed is not None and "partial_rotary_factor" in handed[1]
    if given and checks.version == "0.5":
        return
    trainer, rollout = differs
    if handed is None:
        mapping = ""
    elif given:
        mapping = f" ({dotted(handed[0])}'s reaches the trainer on verl before 0.8 alone)"
    else:
        adds = f" ({checks.names.write} adds it there)" if checks.names.write_offered else ""
        mapping = f" and to {dotted(handed[0])}{adds}"
    checks.add(ConfigProblemCode.ROPE_PARTIAL_DIFFERS, (
        f"{model.name}'s config.json gives rotary_dim and no partial_rotary_factor: the trainer's transformers rotates "
        f"partial_rotary_factor {trainer!r} of each head's dimensions (its {model.model_type} class reads no "
        f"rotary_dim, modeling_minimax_m2.py:187-189 in 5.9.0), the rollout's vLLM {rollout!r} (rotary_dim over "
        f"head_dim, minimax_m2.py:200-204 in 0.19.1), so the rollout's log-probs differ from the trainer's; add "
        f"partial_rotary_factor: {rollout!r} to the config.json{mapping}"))


def _check_rope_built(checks: _ConfigChecks, model: Model, rope: Any) -> None:
    """Check a ``model.rope_scaling`` mapping (`rope`) by the rule a config.json's RoPE scaling is read by
    (`rope_scaling_problem`): of a type transformers builds no RoPE scaling of, or without a key its type needs, it
    fails where a model is built with it. The model's own type under a name only its config class renames (Phi-3's
    ``su``, `LEGACY_ROPE_TYPES`) is taken as renamed, as its config.json was read."""
    paths = {(*_ROPE_SCALING, "rope_type"), (*_ROPE_SCALING, "type")}
    if not isinstance(rope, Mapping) or checks.unreadable & paths:
        return
    given = checks.rope_type()
    renamed = {legacy: modern for (_, legacy), modern in LEGACY_ROPE_TYPES.items()}
    rope_type = renamed.get(given, given) if given == model.rope_scaling else given
    problem = rope_scaling_problem("default" if rope_type is None else rope_type, rope)
    if problem is not None:
        checks.add(ConfigProblemCode.ROPE_SCALING_WRONG, f"model.rope_scaling: {problem}")


def _vllm_longest_words(model: Model) -> str:
    """The longest length the rollout's vLLM derives for `model` where no ``model.rope_scaling`` is given
    (`Model.vllm_longest_length`) and why, in words: its native context, where it has no RoPE scaling of its own or
    vLLM applies no factor of it, else the length it derives from its length key (`length_key_words`), times that
    factor."""
    if model.vllm_context is None:
        provides = f" its own {model.rope_scaling} RoPE scaling provides and" if model.rope_scaling is not None else ""
        return (f"{model.name}'s native context of {model.native_context}, which{provides} the rollout's vLLM takes "
                "as its longest length")
    why = (f"its own {model.rope_scaling} RoPE scaling's factor applied to {length_key_words(model)}"
           if model.rope_scaling is not None else length_key_words(model))
    return (f"the {shown_number(model.vllm_context)} that the rollout's vLLM derives from {model.name}'s config.json "
            f"as its longest length ({why})")


def _check_given_over_own(checks: _ConfigChecks, model: Model, length: float | None) -> None:
    """Check a ``model.rope_scaling`` mapping given for a model with a RoPE scaling of its own: one of another type
    would replace that one, and the rollout's vLLM derives its length from the given one alone, in place of the
    config.json's (`Model.vllm_longest_given`), so refuses a `length` past that where a vLLM rollout takes it."""
    given_rope = checks.rope_type()
    given = model.vllm_longest_given(given_rope, checks.number((*_ROPE_SCALING, "factor")),
                                     checks.number((*_ROPE_SCALING, "original_max_position_embeddings")))
    own = f"{model.name}'s own {model.rope_scaling} RoPE scaling"
    if given_rope != model.rope_scaling:
        checks.add(ConfigProblemCode.ROPE_SCALING_REPLACES_OWN, (
            f"model.rope_scaling ({yaml_brief(given_rope)}) would replace {own}: the rollout's vLLM takes the given "
            f"one, not the config.json's, and derives {vllm_length_words(model, given)} from it as its longest length "
            f"(from the config.json's: {vllm_length_words(model, model.vllm_longest_length)}); remove it"))
    if length is not None and length > given and _vllm_refuses_past_native(checks):
        skipped = " (it applies no RoPE scaling's factor to a Gemma 3's length)" if model.vllm_skips_rope_factor else ""
        lower = ("" if length <= model.vllm_longest_length else
                 f", and set the variable or {checks.lower_length_words(model.vllm_longest_length)}")
        checks.add(ConfigProblemCode.ROPE_SCALING_SHORT_REFUSED, (
            f"{checks.rope_length_words(length)} is beyond the {shown_number(given)} that the "
            f"rollout's vLLM derives from the model.rope_scaling given, which it takes in place of {own} in its "
            f"config.json{skipped}: it refuses it unless {'='.join(LONG_LENGTH_VARIABLE)} is set before Ray starts; "
            f"remove model.rope_scaling{lower}"))


def _check_factor_skipped(checks: _ConfigChecks, model: Model, length: float) -> None:
    """Check a ``model.rope_scaling`` given for a model whose length vLLM stretches by no factor
    (`Model.vllm_skips_rope_factor`: a Gemma 3), where it has not been refused as too short: past the model's
    longest length, refused where a vLLM rollout takes it (`_vllm_refuses_past_native`)."""
    longest = model.vllm_longest_length
    short = ConfigProblemCode.ROPE_SCALING_SHORT_REFUSED in (problem.code for problem in checks.problems)
    if model.vllm_skips_rope_factor and length > longest and not short and _vllm_refuses_past_native(checks):
        checks.add(ConfigProblemCode.ROPE_FACTOR_SKIPPED_REFUSED, (
            f"{checks.rope_length_words(length)} is beyond {model.name}'s "
            f"max_position_embeddings of {shown_number(longest)}, and the rollout's vLLM applies no RoPE scaling's "
            f"factor to a Gemma 3's length: it refuses it unless {'='.join(LONG_LENGTH_VARIABLE)} is set before Ray "
            f"starts; set it (the YaRN still stretches the positions), or {checks.lower_length_words(longest)}"))


def _vllm_refuses_past_native(checks: _ConfigChecks) -> bool:
    """Whether the config starts a vLLM rollout that refuses ``model.max_model_len`` past the model's native context
    where ``model.rope_scaling`` is unset: one that takes the RoPE scaling from ``model`` (`_vllm_takes_rope_scaling`)
    and the length too (the rollout model sets no ``max_model_len`` of its own), started without
    `LONG_LENGTH_VARIABLE` in `checks`' environment, read as vLLM reads it."""
    return (_vllm_takes_rope_scaling(checks) and checks.absent((*ROLLOUT_MODEL, "max_model_len"))
            and not _long_length_allowed(checks))


def _long_length_allowed(checks: _ConfigChecks) -> bool:
    """Whether `checks`' environment sets `LONG_LENGTH_VARIABLE` so that vLLM takes a length past the longest it
    derives (as vLLM reads it: ``1`` or ``true``, in any case)."""
    return checks.environ.get(LONG_LENGTH_VARIABLE[0], "0").strip().lower() in ("1", "true")


def _vllm_takes_rope_scaling(checks: _ConfigChecks) -> bool:
    """Whether the config starts a vLLM rollout that takes ``model.rope_scaling`` (`_vllm_rollout`), with no
    ``rope_scaling`` of the rollout model's own (Trinity gives it ``model``'s where it has none: ``set_if_none``,
    ``common/config_validator.py:680`` to ``:685`` in 0.6.0)."""
    return _vllm_rollout(checks) and checks.absent((*ROLLOUT_MODEL, "rope_scaling"))


def _rollout_engine(checks: _ConfigChecks) -> str | None:
    """The rollout engine the config starts (`started_rollout_engine`: ``vllm``, another ``engine_type``, or None:
    ``mode: train``, ``engine_num`` 0), its keys as `checks` reads them."""
    return started_rollout_engine(checks.value, checks.number)


def _vllm_rollout(checks: _ConfigChecks) -> bool:
    """Whether the config starts a vLLM rollout (`_rollout_engine`)."""
    return _rollout_engine(checks) == "vllm"


SGLANG_LONG_LENGTH_VARIABLE = ("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN", "1")
"""What an sglang rollout needs set to take a ``context_length`` past the longest it derives from the model's
config.json (``_derive_context_length``, ``sglang/srt/configs/model_config.py:556-585`` in sglang 0.5.13, which
Trinity 0.6.0 takes; an ``EnvBool``, ``srt/environ.py:591``: ``1``, ``true``, ``yes`` or ``y``, in any case)."""


def _check_sglang_length(checks: _ConfigChecks, model: Model, length: float | None) -> None:
    """Check the length an sglang rollout (`_rollout_engine`: ``engine_type: sglang``, a mode that explores,
    ``engine_num`` not 0; Trinity 0.6, as 0.5.0 has no sglang engine) takes, the rollout model's own ``max_model_len``
    else `length`: Trinity hands it to sglang as ``context_length`` and hands it no RoPE scaling
    (``common/models/sglang_model.py:490-512`` in 0.6.0: ``model.rope_scaling`` reaches the trainer alone), and sglang
    derives its longest length from the config.json (``get_context_length``,
    ``srt/utils/hf_transformers/common.py:378-395`` in 0.5.13: its length key, by a RoPE scaling's factor only where
    that names no original length, as transformers 5 fills one in for a YaRN, Llama 3's and LongRoPE; the native context
    here) and refuses one past it unless `SGLANG_LONG_LENGTH_VARIABLE` is set. Not vLLM's rules (`_vllm_rollout`), which
    do not apply to it."""
    if _rollout_engine(checks) != "sglang" or checks.version == "0.5":
        return
    own = checks.number((*ROLLOUT_MODEL, "max_model_len"))
    taken = own if own is not None else length
    allowed = checks.environ.get(SGLANG_LONG_LENGTH_VARIABLE[0], "0").strip().lower() in ("1", "true", "yes", "y")
    if taken is None or taken <= model.native_context or allowed:
        return
    variable = "=".join(SGLANG_LONG_LENGTH_VARIABLE)
    words = (checks.length_words(taken, "max_model_len") if own is None else
             f"explorer.rollout_model.max_model_len {shown_number(own)}")
    checks.add(ConfigProblemCode.SGLANG_LENGTH_REFUSED, (
        f"{words} is beyond {model.name}'s native context of {model.native_context}, the longest the rollout's sglang "
        f"derives from its config.json: sglang refuses it as it starts unless {variable} is set before Ray starts, "
        "and Trinity hands sglang no RoPE scaling (model.rope_scaling reaches the trainer alone), so it then samples "
        "past the positions the model was trained on unless explorer.rollout_model.extra_engine_args gives "
        "json_model_override_args a rope_scaling; set the variable and that, or "
        f"{checks.lower_length_words(model.native_context)}"))


def _check_rollout_model(checks: _ConfigChecks, model: Model, length: float | None) -> None:
    """Check the RoPE scaling and the length the rollout model sets of its own, which Trinity keeps where given (it
    sets each from ``model`` where unset: ``set_if_none``, ``common/config_validator.py:680`` to ``:685`` in 0.6.0,
    ``:594`` in 0.5.0) and the rollout's vLLM takes (``vllm_model.py:132`` to ``:152`` in 0.6.0): a
    ``rope_scaling`` other than ``model.rope_scaling``, which the trainer takes (``verl_legacy/verl_config.py:537`` in
    0.6.0), samples at other positions than the trainer trains at; a ``max_model_len`` below the longest sequence the
    rollout asks for (its prompt and response tokens, each its own else ``model``'s, else `length`) stops each sequence
    there (vLLM 0.19.1's ``check_stop``, ``v1/core/sched/utils.py:113``) and fails a longer prompt's request. Where a
    vLLM rollout starts (`_vllm_rollout`); a rollout RoPE scaling that is no mapping, or holds ``???``, is left alone
    (Trinity refuses both as it loads the config; the ``???`` is said by `_check_missing_kept`), and one that is ``???``
    itself is not read (the merge keeps the typed field's default: none)."""
    if not _vllm_rollout(checks):
        return
    rollout_rope_path = (*ROLLOUT_MODEL, "rope_scaling")
    rollout_rope = None if value_at(checks.mapping, rollout_rope_path) == MISSING else checks.value(rollout_rope_path)
    rope = checks.value(_ROPE_SCALING)
    if isinstance(rollout_rope, Mapping) and MISSING not in rollout_rope.values() and rollout_rope != rope:
        trainer_rope = f"model.rope_scaling, {yaml_brief(rope)}" if rope is not None else "no model.rope_scaling"
        checks.add(ConfigProblemCode.ROLLOUT_ROPE_SCALING_DIFFERS, (
            f"explorer.rollout_model.rope_scaling ({yaml_brief(rollout_rope)}) is not what the trainer takes "
            f"({trainer_rope}): the rollout's vLLM samples at other positions than the trainer trains at; remove it "
            "(Trinity gives the rollout model.rope_scaling)"))
    if isinstance(rollout_rope, Mapping) and MISSING not in rollout_rope.values():  # vLLM's alone: built as given
        _check_vllm_rope(checks, model, rollout_rope_path, rollout_rope)
    rollout_length = checks.number((*ROLLOUT_MODEL, "max_model_len"))
    prompt, response = (checks.number((*ROLLOUT_MODEL, key)) if not checks.absent((*ROLLOUT_MODEL, key))
                        else checks.number(("model", key)) for key in ("max_prompt_tokens", "max_response_tokens"))
    both = prompt is not None and response is not None
    asked = prompt + response if prompt is not None and response is not None else length
    if rollout_length is None or asked is None or rollout_length >= asked:
        return
    what = (f"the {shown_number(asked)} prompt and response tokens it asks for" if both
            else checks.length_words(asked))
    checks.add(ConfigProblemCode.ROLLOUT_LENGTH_SHORT, (
        f"explorer.rollout_model.max_model_len {shown_number(rollout_length)} is below {what}: the rollout's vLLM "
        f"stops each sequence at {shown_number(rollout_length)} tokens (a longer prompt fails its request); remove it "
        "(Trinity gives the rollout model.max_model_len)"))


ROLLOUT_TP_PATH = (*ROLLOUT_MODEL, "tensor_parallel_size")
"""The rollout engine's tensor-parallel size, which Trinity hands vLLM as it is (``common/models/vllm_model.py:146``
in 0.6.0)."""


def _check_rollout_tensor_parallel(checks: _ConfigChecks, model: Model) -> None:
    """Check that the model's heads allow the vLLM rollout's tensor-parallel size (where a vLLM rollout starts,
    `_vllm_rollout`: ``engine_num`` not 0 among its rules), as they do an SP degree (`sp_rule_violation`): vLLM 0.19.1
    refuses a size that does not divide the attention heads as the engine starts (``verify_with_parallel_config``,
    ``config/model.py:1111``), and its Qwen3 attention asserts that the size and the KV heads divide one another
    (``model_executor/models/qwen3.py:83`` to ``:90``). The words name the sizes the heads allow within a node
    (`rollout_sizes`: ``cluster.gpu_per_node``, else 8)."""
    size = checks.number(ROLLOUT_TP_PATH)
    if size is None or size < 1 or not _vllm_rollout(checks):
        return
    violation = sp_rule_violation(model.num_attention_heads, model.num_key_value_heads, int(size), degree="TP")
    if violation is None:
        return
    node = checks.number(NODE_SIZE_PATH)
    node_gpus = int(node) if node is not None and node >= 1 else 8
    where = f"within a node of {node_gpus} GPUs" if node is not None and node >= 1 else "up to 8"
    checks.add(ConfigProblemCode.ROLLOUT_TP_HEADS_REFUSED, (
        f"{dotted(ROLLOUT_TP_PATH)}: {violation} of {model.name}: the rollout's vLLM refuses it as the engine "
        f"starts; set it to {either([str(t) for t in rollout_sizes(model, node_gpus)])}, the sizes the heads allow "
        f"{where} (and the cluster's GPUs to match)"))


ENGINE_PARALLEL_KEYS = ("tensor_parallel_size", "data_parallel_size", "pipeline_parallel_size")
"""The sizes whose product is an inference engine's GPUs (Trinity 0.6's ``gpu_per_engine``)."""


class _LocalEngine(NamedTuple):
    """An inference engine the config runs on the cluster's GPUs (`_local_engines`)."""

    path: Path
    """The engine's section: ``explorer.rollout_model`` or ``explorer.auxiliary_models[i]``."""
    engine_type: str
    """Its ``engine_type`` (``vllm`` where unset, Trinity's default)."""
    sizes: tuple[float | None, ...]
    """Its `ENGINE_PARALLEL_KEYS`, as given (None where unset or unreadable)."""

    def given(self, key: str) -> float | None:
        """The size under `key` (one of `ENGINE_PARALLEL_KEYS`) as given (None where unset or unreadable)."""
        return self.sizes[ENGINE_PARALLEL_KEYS.index(key)]

    def size(self, key: str) -> int:
        """The size under `key` (one of `ENGINE_PARALLEL_KEYS`), 1 where unset (Trinity's default)."""
        size = self.given(key)
        return int(size) if size is not None else 1


def _local_engines(checks: _ConfigChecks) -> list[_LocalEngine]:
    """The inference engines whose parallel sizes Trinity 0.6 judges as it loads the config
    (``_validate_multinode_inference_models``, ``common/config_validator.py:311`` to ``:316`` in 0.6.0): the rollout
    model's and each auxiliary model's, not one that runs elsewhere (`REMOTE_ENGINES`), nor one with a size below 1
    (a size that cannot be read has its own line, and counts as unset)."""
    auxiliary = checks.value(AUXILIARY_MODELS)
    paths = [ROLLOUT_MODEL, *((*AUXILIARY_MODELS, index) for index in range(
        len(auxiliary) if isinstance(auxiliary, list) else 0))]
    engines = []
    for path in paths:
        if not isinstance(checks.value(path), Mapping):
            continue
        engine_type = str(checks.value((*path, "engine_type")) or "vllm")
        sizes = tuple(checks.number((*path, key)) for key in ENGINE_PARALLEL_KEYS)
        if engine_type not in REMOTE_ENGINES and not any(size is not None and size < 1 for size in sizes):
            engines.append(_LocalEngine(path, engine_type, sizes))
    return engines


def _check_engine_nodes(checks: _ConfigChecks) -> None:
    """Check, as Trinity 0.6 does as it loads the config (``_validate_multinode_inference_models``,
    ``common/config_validator.py:301`` to ``:339`` in 0.6.0, in every mode), each inference engine (`_local_engines`)
    wider than a node of ``cluster.gpu_per_node`` (where given): its GPUs, the product of `ENGINE_PARALLEL_KEYS` (each
    1 where unset), must be whole nodes, and a vLLM engine across nodes takes no data parallelism. Not for `version`
    0.5, which has neither rule (nor the data and pipeline parallel keys)."""
    node = checks.number(NODE_SIZE_PATH)
    if checks.version == "0.5" or node is None or node < 1:
        return
    for engine in _local_engines(checks):
        data = engine.size("data_parallel_size")
        gpus = math.prod(engine.size(key) for key in ENGINE_PARALLEL_KEYS)
        if gpus <= node:
            continue
        product = " x ".join(f"{key} {int(size)}" for size, key in zip(engine.sizes, ENGINE_PARALLEL_KEYS, strict=True)
                             if size is not None and size > 1)
        head = (f"{dotted(engine.path)}: an engine of {gpus} GPUs ({product}) spans nodes of {int(node)} "
                f"({NODE_SIZE_KEY})")
        if gpus % node:
            checks.add(ConfigProblemCode.ENGINE_NODES_REFUSED, (
                f"{head} but is not whole nodes: Trinity 0.6 refuses the config (an engine across nodes takes whole "
                f"ones); make it {int(node)} GPUs or fewer, or a multiple of {int(node)}"))
        elif data > 1 and engine.engine_type.startswith("vllm"):
            checks.add(ConfigProblemCode.ENGINE_NODES_REFUSED, (
                f"{head} with data_parallel_size {data}: Trinity 0.6 refuses the config (vLLM takes no data "
                "parallelism across nodes); keep each engine within a node, or set data_parallel_size to 1"))


def _check_sglang_parallel(checks: _ConfigChecks) -> None:
    """Check, as Trinity 0.6 does as it loads the config (``_validate_multinode_inference_models``,
    ``common/config_validator.py:341`` to ``:349`` in 0.6.0, in every mode, whatever the engine's size), that each
    SGLang engine (`_local_engines` whose ``engine_type`` is ``sglang``) has a ``tensor_parallel_size`` that is a
    multiple of its ``data_parallel_size`` (each 1 where unset, Trinity's defaults, ``common/config.py:522`` and
    ``:523``). Not for `version` 0.5, which has no SGLang engine (nor ``data_parallel_size``)."""
    if checks.version == "0.5":
        return
    for engine in _local_engines(checks):
        tensor, data = engine.size("tensor_parallel_size"), engine.size("data_parallel_size")
        if engine.engine_type != "sglang" or tensor % data == 0:
            continue
        unset = " (unset)" if engine.given("tensor_parallel_size") is None else ""
        divisors = [str(size) for size in range(1, tensor + 1) if tensor % size == 0]
        checks.add(ConfigProblemCode.SGLANG_PARALLEL_REFUSED, (
            f"{dotted(engine.path)}: the SGLang engine's tensor_parallel_size {tensor}{unset} is not a multiple of its "
            f"data_parallel_size {data}: Trinity 0.6 refuses the config as it loads it; set data_parallel_size to "
            f"{either(divisors)} (a divisor of {tensor}), or tensor_parallel_size to a multiple of {data}"))


def _check_rollout_length_refused(checks: _ConfigChecks, model: Model, length: float | None) -> None:
    """Check the length the rollout's vLLM takes against the longest it derives from the RoPE scaling it takes, where
    the rollout model sets its own ``max_model_len`` or ``rope_scaling`` (the `refused:` lines on
    ``model.rope_scaling`` judge ``model``'s pair alone, `_vllm_refuses_past_native`): Trinity keeps each where given
    and gives the rollout ``model``'s where not (`_check_rollout_model`), and hands both to vLLM (``max_model_len``,
    ``hf_overrides={"rope_parameters": ...}``, ``common/models/vllm_model.py:132`` to ``:152`` in 0.6.0), whose
    ``_get_and_verify_max_len`` judges them as it judges ``model``'s: past the longest length it derives from the
    model's config.json (`Model.vllm_longest_length`), or from the RoPE scaling given in place of the config.json's
    (`Model.vllm_longest_given`), refused where a vLLM rollout starts (`_vllm_rollout`) without
    `LONG_LENGTH_VARIABLE`. A RoPE scaling that is no mapping, holds ``???``, or whose factor or original length
    cannot be read, is left alone (said elsewhere)."""
    own_length = not checks.absent((*ROLLOUT_MODEL, "max_model_len"))
    rollout_rope_path = (*ROLLOUT_MODEL, "rope_scaling")
    if value_at(checks.mapping, rollout_rope_path) == MISSING:
        return
    own_rope = not checks.absent(rollout_rope_path)
    if not (own_length or own_rope) or not _vllm_rollout(checks) or _long_length_allowed(checks):
        return
    taken = checks.number((*ROLLOUT_MODEL, "max_model_len")) if own_length else length
    rope_path = rollout_rope_path if own_rope else _ROPE_SCALING
    rope = checks.value(rope_path)
    if rope is None:
        longest, beyond = model.vllm_longest_length, _vllm_longest_words(model)
    elif isinstance(rope, Mapping) and MISSING not in rope.values():
        scale_paths = ((*rope_path, "factor"), (*rope_path, "original_max_position_embeddings"))
        factor, original = (checks.number(path) for path in scale_paths)
        if any(number is None and not checks.absent(path) for number, path in zip((factor, original), scale_paths)):
            return
        longest = model.vllm_longest_given(checks.rope_type(rope_path), factor, original)
        replaced = f", which it takes in place of {model.name}'s own {model.rope_scaling}" if model.rope_scaling else ""
        beyond = (f"the {vllm_length_words(model, longest)} that the rollout's vLLM derives from the "
                  f"{dotted(rope_path)} given as its longest length{replaced}")
    else:
        return
    if taken is None or taken <= longest:
        return
    key = dotted((*ROLLOUT_MODEL, "max_model_len"))
    named, lower = ((f"{key} {shown_number(taken)}", f"lower {key} to {math.floor(longest)}") if own_length else
                    (f"{checks.length_words(taken, 'max_model_len')}, which the rollout takes,",
                     checks.lower_length_words(longest)))
    variable = "=".join(LONG_LENGTH_VARIABLE)
    wanted = model.yarn_factor(int(length)) if length is not None and taken <= length else None
    if rope is None and wanted is not None and not model.vllm_skips_rope_factor:  # model's YaRN, which it takes too
        unless = f"a rope_scaling covers it or {variable}"
        fix = (f"in model.rope_scaling, which the rollout takes too, {_yarn_setting(model, wanted)}"
               f"{_theta_setting(checks, model)}{checks.names.write_does('as ')}, or set the variable")
    else:
        unless, fix = variable, "set it"
    checks.add(ConfigProblemCode.ROLLOUT_LENGTH_REFUSED, (
        f"{named} is beyond {beyond}: the rollout's vLLM refuses it unless {unless} is set before Ray starts; {fix} "
        f"(and check that the model handles this length), or {lower}"))


def _check_yarn(checks: _ConfigChecks, native: int, length: float, wanted: float, allowed: int) -> None:
    """Check a ``model.rope_scaling`` mapping where `length` is beyond the `native` context: YaRN, with a factor and
    original length that cover the length as the guide sets them (factor `wanted` over `native`); one that covers
    fewer is refused where vLLM refuses it, past the `allowed` length too (`Model.vllm_allowed_length`). Its type in
    the legacy ``type`` and a missing original length are judged as the trainer takes them, filled in (where a vLLM
    rollout takes the mapping as it is, `_check_vllm_rope` refuses them): Trinity 0.5, and 0.6 on verl before 0.8, set
    it on the model's config (``actor_model_config.rope_scaling = ...``, ``trainer/verl_legacy/fsdp_workers.py:390``
    to ``:391`` in 0.6.0; 0.6 on verl 0.8 or later reads the config.json alone, ``trainer/verl/config.py:250-253``),
    and transformers 5's setter standardizes it (``configuration_utils.py:730-736`` in 5.25.0;
    ``standardize_rope_params``, ``modeling_rope_utils.py:842`` and ``:853-860``): ``rope_type`` from ``type``, the
    original length the config.json's ``max_position_embeddings``, the native context of a model without a RoPE
    scaling of its own (transformers 4.57.1 reads them so too, ``modeling_rope_utils.py:310-311``, ``:562``)."""
    rope_type = checks.rope_type()
    unread = checks.unreadable & {(*_ROPE_SCALING, "rope_type"), (*_ROPE_SCALING, "type")}  # a problem already
    if rope_type != "yarn" and not unread:
        checks.add(ConfigProblemCode.ROPE_SCALING_WRONG,
                   f"model.rope_scaling.rope_type must be yarn, got {yaml_brief(rope_type)}")
    # A value that cannot be read is a problem already (number says so): only a wrong or missing one is.
    factor_path = (*_ROPE_SCALING, "factor")
    factor = checks.number(factor_path)
    original_path = (*_ROPE_SCALING, "original_max_position_embeddings")
    original = checks.number(original_path)
    # Other values than the guide's may still cover the length (Qwen's model cards: factor 4 over 32768).
    if factor is None and checks.absent(factor_path):
        checks.add(ConfigProblemCode.ROPE_SCALING_WRONG,
                   f"model.rope_scaling.factor must be max_model_len / {native} = {wanted!r}, not given")
    if factor is not None:
        original = native if original is None else original  # missing: filled in, as above
        # vLLM's length: factor x original, or the config.json's model_max_length where longer
        refused = rope_type == "yarn" and length > allowed and _vllm_refuses_past_native(checks)
        judged = checks.length_words(length, "max_model_len")
        if problem := _yarn_coverage_problem(factor, original, native, length, judged, wanted, refused):
            checks.problems.append(problem)


def _yarn_coverage_problem(factor: float, original: float, native: int, length: float, length_words: str,
                           wanted: float, vllm_refuses: bool) -> ConfigProblem | None:
    """What is wrong with a YaRN `factor` over `original` positions for `length` (in words, `length_words`:
    `_ConfigChecks.length_words`; the guide's: `wanted` over `native`): covering fewer tokens (refused where
    `vllm_refuses` a length past what they cover: `_vllm_refuses_past_native`), or covering them otherwise than the
    guide; None where it is the guide's."""
    covers = factor * original
    guide = f"factor max_model_len / {native} = {wanted!r} over {native}"
    if covers < length:
        code, refusal = ConfigProblemCode.ROPE_SCALING_WRONG, ""
        if vllm_refuses:
            code = ConfigProblemCode.ROPE_SCALING_SHORT_REFUSED
            refusal = (f", which the rollout's vLLM refuses unless {'='.join(LONG_LENGTH_VARIABLE)} is set before Ray "
                       "starts")
        return ConfigProblem(code, (
            f"model.rope_scaling (factor {factor!r} over {original!r}) covers {shown_number(covers)} tokens, fewer "
            f"than {length_words}{refusal}: set it as Trinity-RFT's guide does, {guide}"))
    if not math.isclose(factor, wanted, rel_tol=1e-9) or original != native:
        more = ": it stretches the positions more than the length needs" if covers > length else ""
        return ConfigProblem(ConfigProblemCode.ROPE_SCALING_OFF_GUIDE, (
            f"model.rope_scaling (factor {factor!r} over {original!r}) covers the length, but not as Trinity-RFT's "
            f"guide sets it, {guide}{more}"))
    return None


UNCHECKED_SECTION = ("trainer", "trainer_config")
"""The section whose flags' types and unknown keys not every release refuses. Every release merges the config into
its typed ``Config`` (``load_config``'s ``OmegaConf.merge``: ``trinity/common/config.py:952`` in 0.5.0, ``:957`` in
0.5.1, ``:983`` in 0.5.2, ``:1058`` in 0.6.0), which refuses a key it lacks and a boolean's field given other text,
but types this one ``Any``. Trinity 0.5 merges it into its typed ``veRLConfig`` in turn (``config_validator.py:1156``
in 0.5.0, ``:1135`` in 0.5.1, ``:1185`` in 0.5.2), refusing them there too; 0.6.0 on verl before 0.8 builds it with
``build_dataclass_from_mapping`` (``trinity/common/dataclass_utils.py:7``, called at ``config_validator.py:1291``),
which drops a key it does not know and keeps a flag as written, so the config loads; ``synchronize_config``
(``:1305``) then sets two of the flags rft-solver reads to the trainer's (`SET_TO_TRAINERS_BY_06`), and the trainer
fails as it starts on any other that OmegaConf's bool field refuses (``OmegaConf.structured`` of the typed
``veRLConfig``, ``trainer/verl_legacy/verl_trainer.py:198``: ``ref.log_prob_use_dynamic_bsz``,
``rollout.log_prob_use_dynamic_bsz`` and ``model.enable_gradient_checkpointing``). On verl 0.8 or later it
deep-merges the section into verl's own (``trinity/trainer/verl/config.py:204``)."""


def _schema_refuses(path: Path, version: TrinityVersion | None) -> bool:
    """Whether every release `version` may be (None: any) refuses a key at `path` that its schema lacks, or a flag
    there that is not a boolean: outside `UNCHECKED_SECTION` all do, inside it Trinity 0.5 alone."""
    return path[:len(UNCHECKED_SECTION)] != UNCHECKED_SECTION or version == "0.5"


def _typed_field_refuses_words(path: Path, field: str) -> str:
    """That Trinity's typed config refuses, as it loads the config, a value at `path` (where `_schema_refuses`) that
    its `field` field (``int``, ``bool``, ``str``) does not take, in words: every release, or under
    `UNCHECKED_SECTION` Trinity 0.5."""
    releases = "Trinity 0.5" if path[:len(UNCHECKED_SECTION)] == UNCHECKED_SECTION else "every Trinity release"
    return f"{releases} refuses the config as it loads it (its typed config's {field} field)"


def _unchecked_words(version: TrinityVersion | None, taken: str) -> str:
    """What becomes of a wrong key or flag under `UNCHECKED_SECTION` where `version` is not 0.5 (`taken`: what Trinity
    0.6 on verl before 0.8 does with it), in words."""
    if version == "0.6":
        return f"Trinity 0.6 on verl before 0.8 {taken}"
    return f"Trinity 0.5 refuses the config, and 0.6 on verl before 0.8 {taken}"


LEGACY_OFFLOAD_FROM_TRAINER: dict[tuple[str, ...], tuple[str, ...]] = {
    (*ACTOR_ROLLOUT_REF, role, "fsdp_config", flag): ("trainer", flag) for role in ("actor", "ref")
    for flag in OFFLOAD_FLAGS}
"""The actor's and the ref's offload flags, which Trinity 0.6 on verl before 0.8 sets to the trainer's own whatever
they say (``verl_legacy/verl_config.py:645-648`` in 0.6.0), by key; on verl 0.8 or later it merges them into the
engine's config as written."""
FLAGS_UNREAD_ON_08 = frozenset({ROLE_DYNAMIC_BATCH_KEYS["ref"], ROLE_DYNAMIC_BATCH_KEYS["rollout"],
                                LEGACY_BYPASS_MODE_KEY, *((*CRITIC_MODEL_FSDP, flag) for flag in OFFLOAD_FLAGS)})
"""The flags under `UNCHECKED_SECTION` that nothing reads on Trinity 0.6 with verl 0.8 or later (besides
`SET_TO_TRAINERS_BY_06`, which it sets): the ref's and the rollout's own dynamic batch size flags, ``FROZEN_KEYS``
(``trainer/verl/config.py:724``, ``:730`` in 0.6.0); ``trainer_config.algorithm``'s, which
``_normalize_trainer_config`` does not merge (``:779-817``); and the critic's model's offload flags, merged where verl
builds the critic's engine from ``critic.fsdp`` alone (``workers/config/critic.py:213`` in verl 0.8.0)."""


def non_boolean_flag_words(path: Path, value: Any, version: TrinityVersion | None) -> str:
    """What the releases `version` may be do with a flag under `UNCHECKED_SECTION` at `path` whose `value` OmegaConf's
    bool field refuses (`omegaconf_boolean` None), in words: Trinity 0.5 refuses the config; 0.6 on verl before 0.8
    sets it to the trainer's own flag where it does so whatever it says (`SET_TO_TRAINERS_BY_06`,
    `LEGACY_OFFLOAD_FROM_TRAINER`), else keeps it as written (``build_dataclass_from_mapping``,
    ``common/dataclass_utils.py:7-22`` in 0.6.0), which ``OmegaConf.structured`` refuses by the typed config's bool
    field as the trainer starts (``verl_legacy/verl_trainer.py:198``); on verl 0.8 or later it sets the same ones to
    the trainer's, ignores `FLAGS_UNREAD_ON_08`, and hands the others to verl as written: hydra builds verl's configs
    from an untyped mapping (``omega_conf_to_dataclass``, ``utils/config.py:42-50`` in verl 0.8.0, their fields
    checked by no type), so verl takes the value by Python's truth."""
    key = tuple(map(str, path))
    trainers = SET_TO_TRAINERS_BY_06.get(key) or LEGACY_OFFLOAD_FROM_TRAINER.get(key)
    legacy = (f"sets it to {dotted(trainers)}" if trainers else
              "keeps it as written, which its trainer's typed config (OmegaConf's bool field) refuses as the trainer "
              "starts")
    if key in SET_TO_TRAINERS_BY_06:
        newer = f"sets it to {dotted(SET_TO_TRAINERS_BY_06[key])} too"
    elif path in FLAGS_UNREAD_ON_08:
        newer = "ignores it"
    else:
        newer = f"hands it to verl as written, which reads it as {'true' if value else 'false'} (Python's truth of it)"
    return f"{_unchecked_words(version, legacy)}, and on verl 0.8 or later {newer}"


def _check_false_text(checks: _ConfigChecks, path: Path, value: Any, version: TrinityVersion | None) -> None:
    """Check that a flag at `path` under `UNCHECKED_SECTION` that Trinity 0.6 on verl 0.8 or later hands to verl as
    written (not `SET_TO_TRAINERS_BY_06`, not `FLAGS_UNREAD_ON_08`; `version` not 0.5) is not text that OmegaConf's
    bool field reads as false (``'false'``, ``'no'``, ``'0'``, quoted): verl reads text by Python's truth, as true
    (`non_boolean_flag_words`)."""
    if (version == "0.5" or not isinstance(value, str) or omegaconf_boolean(value) is not False
            or path[:len(UNCHECKED_SECTION)] != UNCHECKED_SECTION or path in SET_TO_TRAINERS_BY_06
            or path in FLAGS_UNREAD_ON_08):
        return
    checks.add(ConfigProblemCode.WRONG_TYPE, (
        f"{dotted(path)} is the text {yaml_brief(value)}, which OmegaConf's bool field reads as false, but Trinity 0.6 "
        "on verl 0.8 or later hands it to verl as written, which reads it as true (Python's truth of text): write "
        "false, unquoted"))


REF_MODEL_KEY = (*ACTOR_ROLLOUT_REF, "ref", "model")
"""verl's ``ref.model`` (its ``path`` and the rest), which no Trinity release gives the ref: Trinity 0.5's typed ``Ref``
has no ``model`` (``common/verl_config.py:185`` in 0.5.0, ``:186`` in 0.5.1, ``trainer/verl/verl_config.py:187`` in
0.5.2), so its ``OmegaConf.merge`` of ``trainer_config`` (`UNCHECKED_SECTION`) refuses the key; 0.6.0 on verl before
0.8 drops it (``build_dataclass_from_mapping``, ``trinity/common/dataclass_utils.py:17`` to ``:19``; its ``Ref``, at
``verl_legacy/verl_config.py:192``, has none either), so the ref loads ``model.path``
(``verl_legacy/fsdp_workers.py:740`` to ``:747``); on verl 0.8 or later it deep-merges the key into the ref's config
(``trainer/verl/config.py:835`` to ``:838``), which verl builds with hydra as the ref starts
(``omega_conf_to_dataclass``, ``workers/engine_workers.py:514`` in verl 0.8.0): ``FSDPActorConfig`` has no ``model``
field, so it fails there."""


def _check_ref_model(checks: _ConfigChecks, version: TrinityVersion | None) -> None:
    """Check that the config gives the ref no ``model`` (`REF_MODEL_KEY`): refused with `version` 0.5, else what
    Trinity 0.6 does with it."""
    ref = value_at(checks.mapping, REF_MODEL_KEY[:-1])
    if not isinstance(ref, Mapping) or REF_MODEL_KEY[-1] not in ref:
        return
    key = ".".join(REF_MODEL_KEY)
    if version == "0.5":
        checks.add(ConfigProblemCode.REF_MODEL_REFUSED, (
            f"{key}: Trinity 0.5 refuses the config (its ref has no model key: the ref loads model.model_path); "
            "remove it"))
    else:
        checks.add(ConfigProblemCode.REF_MODEL, f"{key}: " + _unchecked_words(version, (
            "drops the key, so the ref loads model.model_path (on verl 0.8 or later a ref worker fails on it as it "
            "starts: verl's ref config has no model field)")) + "; remove it")


KL_LOSS_KEY = ("algorithm", "kl_loss_fn")
"""The key whose ``none`` leaves a run no KL loss (Trinity sets verl's ``use_kl_loss`` from it,
``trainer/verl/verl_config.py:665`` in 0.5.2, ``verl_legacy/verl_config.py:678`` in 0.6.0)."""
KL_PENALTY_KEY = ("algorithm", "kl_penalty_fn")
"""The key whose ``none`` (every algorithm's default) leaves a run no KL penalty in the reward (``use_kl_in_reward``,
``:666``, ``:679``)."""
UNBUILT_REF_RELEASES = {
    "0.5": ("Trinity 0.5.2 builds", "trainer/verl/verl_trainer.py:544 in 0.5.2",
            "0.5.0 and 0.5.1 (verl 0.7.0) build one"),
    "0.6": ("Trinity 0.6 on verl before 0.8 builds", "verl_legacy/verl_trainer.py:572 in 0.6.0",
            "on verl 0.8 or later it builds one"),
    None: ("Trinity 0.5.2, and 0.6 on verl before 0.8, build",
           "trainer/verl/verl_trainer.py:544 in 0.5.2, verl_legacy/verl_trainer.py:572 in 0.6.0",
           "0.5.0 and 0.5.1 (verl 0.7.0), and 0.6 on verl 0.8 or later, build one")}
"""Per release checked for (None: any), the releases that build no reference model for a run with no KL term, the
line where their trainer then asks for the ref's log-probs, and those that build one (`_check_unbuilt_reference`)."""


def _check_unbuilt_reference(checks: _ConfigChecks, version: TrinityVersion | None, divisor: BatchDivisor) -> None:
    """Check that a run whose algorithm uses a ref (`ref_forward_runs`; not DPO, whose ``check_config`` sets
    ``kl_loss_fn`` none to k2, ``algorithm/algorithm.py:260`` in 0.5.2, ``:303`` in 0.6.0) has a KL term or LoRA
    where verl 0.7.1 decides whether to build a reference model: Trinity 0.5.2, and 0.6 on verl before 0.8, hand it
    ``use_kl_loss`` from `KL_LOSS_KEY` and ``use_kl_in_reward`` from `KL_PENALTY_KEY`, and its
    ``need_reference_policy`` builds none where both are false (``trainer/ppo/utils.py:76``), while the trainer asks
    for the ref's log-probs each step wherever the algorithm's ``use_reference`` is true (`UNBUILT_REF_RELEASES`), from
    a ref worker it never set (``ref_policy_wg``, ``trainer/ppo/ray_trainer.py:1119``, ``:1128`` in verl 0.7.1): an
    AttributeError at the first step. With LoRA the actor stands in (`lora_key_before_08`). ``ref-not-built``, never
    refused: 0.5.0 and 0.5.1 (verl 0.7.0's ``need_reference_policy`` asks the role map) and 0.6 on verl 0.8 or later
    (``use_reference``, ``trainer/verl/trainer.py:253``) build one: nothing for 0.5.0 or 0.5.1 named (`divisor`
    ``gpus``, `counted_batch_divisor`), nor where a key it reads cannot be read here."""

    algorithm = checks.value(("algorithm", "algorithm_type"))
    if (checks.value(KL_LOSS_KEY) != "none" or checks.value(KL_PENALTY_KEY) not in (None, "none")
            or not ref_forward_runs(algorithm, version) or trains_dpo(algorithm)
            or lora_key_before_08(checks.value) is not None or (version == "0.5" and divisor == "gpus")
            or {KL_PENALTY_KEY, *LORA_KEYS} & checks.unreadable):
        return
    builds, where, others = UNBUILT_REF_RELEASES[version]
    penalty = "none (unset: every algorithm's default)" if checks.absent(KL_PENALTY_KEY) else "none"
    checks.add(ConfigProblemCode.REF_NOT_BUILT, (
        f"{dotted(KL_LOSS_KEY)} is none and kl_penalty_fn {penalty}: with no KL term {builds} no reference model "
        f"(verl 0.7.1's need_reference_policy, trainer/ppo/utils.py:76), yet algorithm_type "
        f"{algorithm or 'ppo (unset)'} uses one, so the first training step fails asking the ref worker never built "
        f"for its log-probs ({where}); {others}: remove the key for the algorithm's default, k2 "
        "(kl_loss_fn_args: {kl_coef: 0} keeps its loss without the term)"))


def _check_flag_on(checks: _ConfigChecks, path: tuple[str, ...], code: ConfigProblemCode, off: str,
                   version: TrinityVersion | None, on: bool = True, unset_on: bool = True) -> None:
    """Check that the flag at `path` is a boolean (refused where `_schema_refuses`; else what Trinity 0.6 on verl
    before 0.8 does with it, `UNCHECKED_SECTION`), and on (`off`: why it must be, said where it is false, with
    `code`); with `on` false, off (`off`: why, said where it is true, or not set where `unset_on`, Trinity's default
    true, not a role's that takes the trainer's)."""
    checks.flags_judged.add(path)
    value = checks.flag(path)
    if value is not None and omegaconf_boolean(value) is None:
        wrong = f"{'.'.join(path)} must be true or false, got {yaml_brief(value)}"
        if _schema_refuses(path, version):
            checks.add(ConfigProblemCode.FLAG_NOT_BOOLEAN_REFUSED, f"{wrong}: Trinity refuses the config")
        else:
            checks.add(ConfigProblemCode.FLAG_NOT_BOOLEAN, f"{wrong}: {non_boolean_flag_words(path, value, version)}")
    elif on and turned_off(value):
        _check_false_text(checks, path, value, version)
        checks.add(code, f"{'.'.join(path)} is false: {off}")
    elif not on and not turned_off(value) and (value is not None or (unset_on and checks.absent(path))):
        shown = "true" if value is not None else "not set, so true (Trinity's default)"
        checks.add(code, f"{'.'.join(path)} is {shown}: {off}")


def _check_flags_on(checks: _ConfigChecks, paths: Iterable[tuple[str, ...]], code: ConfigProblemCode,
                    off: str, version: TrinityVersion | None, on: bool = True, unset_on: bool = True) -> None:
    """`_check_flag_on` for each of `paths` (with `on` and `unset_on`), each `off` followed by where that key counts
    (`ROLE_KEY_SCOPES`)."""
    for path in paths:
        scope = ROLE_KEY_SCOPES.get(path)
        _check_flag_on(checks, path, code, off + (f" ({scope})" if scope else ""), version, on, unset_on)


def _check_dynamic_batch(checks: _ConfigChecks, model: Model, version: TrinityVersion | None, trainer_gpus: int,
                         sps: tuple[int, int]) -> None:
    """Check that the dynamic batch size keys (``trainer.use_dynamic_bsz`` and the roles' own, `_role_dynamic_flags`)
    are booleans, and on (but the trainer's and the actor's for DPO, which off keep its pairs whole:
    `_check_dpo_pair_dynamic`), and where they are off the critic's forward size (`_check_critic_forward_unset`) and
    its engine's (`_check_critic_engine_sizes`); off for a `model` whose micro-batches are padded
    (`remove_padding_violation`), with one sequence in each (`_check_micro_batch_sizes` on `trainer_gpus` at `sps`,
    the critic's SP and the trainer's; the critic's engine's set too); for any other model, with the trainer's off,
    the deprecated sizes of the roles that run with them off on every release (`_check_whole_batch_sizes`), which
    verl 0.8 or later refuses beside the per-GPU size whatever the model (the critic's where that is set: verl 0.8
    cuts the critic's passes by its engine's sizes, needing none of its own), and where the release may be 0.6 those
    of the roles whose own flag is on before 0.8 (`_check_whole_batch_sizes_own_on`)."""
    if remove_padding_violation(model) is None:
        trainer = DYNAMIC_BATCH_KEYS[0]
        # for DPO, off is what keeps the actor's pairs whole (`_check_dpo_pair_dynamic`)
        dpo = trains_dpo(checks.value(("algorithm", "algorithm_type")))
        _check_flags_on(checks, () if dpo else (trainer,), ConfigProblemCode.DYNAMIC_BATCH_OFF,
                        _trainer_dynamic_off_words(checks, version), version)
        _check_flags_on(checks, _role_dynamic_flags(checks, version, actor=not dpo),
                        ConfigProblemCode.DYNAMIC_BATCH_OFF, _DYNAMIC_OFF_WORDS, version)
        _check_null_micro_batch_sizes(checks, version)
        _check_critic_forward_unset(checks, version)
        _check_critic_engine_sizes(checks, version)
        if dpo and turned_off(checks.flag(trainer)):
            _check_dpo_sizes_unset(checks, version)
        if turned_off(checks.flag(trainer)):  # verl 0.8 refuses a deprecated size beside the per-GPU one, any model
            # the critic's only beside its own per-GPU size: verl 0.8 cuts its passes by its engine's, needing none
            critic = _fsdp_critic(checks) and checks.number(CRITIC_MICRO_BATCH_SIZES[0]) is not None
            roles = {"actor", "ref", *(("critic",) if critic else ())}
            counted = sequence_counted_roles(checks.flag, version)
            _check_whole_batch_sizes(checks, version, (trainer_gpus, sps), roles & counted, None)
            if version != "0.5":  # verl 0.8 gives every role the trainer's flag, off
                _check_whole_batch_sizes_own_on(checks, roles - counted)
        return
    trainer = DYNAMIC_BATCH_KEYS[0]
    why = (f"remove padding off (as {model.name} needs) pads each micro-batch to its longest sequence, and dynamic "
           "batching fills it by the sequences' own lengths, so one of uneven lengths holds more tokens than the "
           f"token budget the memory estimate counts: set it to false, with one sequence per micro-batch"
           f"{checks.names.write_does()}")
    _check_flag_on(checks, trainer, ConfigProblemCode.MICRO_BATCH_UNBOUNDED, why, version, on=False)
    _check_flags_on(checks, _role_dynamic_flags(checks, version), ConfigProblemCode.MICRO_BATCH_UNBOUNDED, why,
                    version, on=False, unset_on=False)
    if turned_off(checks.flag(trainer)):
        _check_micro_batch_sizes(checks, version, trainer_gpus, sps)
    else:
        _check_null_micro_batch_sizes(checks, version)
    _check_critic_engine_sizes(checks, version, checks.names.write_does())


def _role_dynamic_flags(checks: _ConfigChecks, version: TrinityVersion | None,
                        actor: bool = True) -> tuple[tuple[str, ...], ...]:
    """The roles' own dynamic batch size flags that `_check_dynamic_batch` judges as the trainer's
    (`ROLE_DYNAMIC_BATCH_KEYS`, each where set): the actor's (not where not `actor`: for DPO off keeps its pairs whole),
    the ref's, the rollout's, which Trinity 0.5, and 0.6 on verl before 0.8, run the actor's log-prob recompute by
    (``set_if_none`` from the actor's own, 0.5.0 ``common/verl_config.py:662``, 0.6.0
    ``trainer/verl_legacy/verl_config.py:692``; ``compute_log_prob``, 0.6.0 ``verl_legacy/fsdp_workers.py:1006-1009``;
    0.6 on verl 0.8 or later freezes it to the trainer's, ``trainer/verl/config.py:729``), a trained FSDP critic's own
    (`CRITIC_DYNAMIC_KEY`, `_fsdp_critic`) where `version` may be 0.5, which reads it (0.6 sets it to the trainer's),
    and its engine's (`_critic_engine_flags`)."""
    roles = [role for role in ROLE_DYNAMIC_BATCH_KEYS if (actor or role != "actor")
             and (role != "critic" or version != "0.6" and _fsdp_critic(checks))]
    return (*(ROLE_DYNAMIC_BATCH_KEYS[role] for role in roles), *_critic_engine_flags(checks, version))


def _critic_engine_flags(checks: _ConfigChecks, version: TrinityVersion | None) -> tuple[tuple[str, ...], ...]:
    """The critic's engine's own dynamic batch size flag (`CRITIC_ENGINE_DYNAMIC_KEY`), judged as the roles' own
    (`_check_dynamic_batch`), where the algorithm trains an FSDP critic (`_fsdp_critic`) and `version` may be Trinity
    0.6, whose verl 0.8 or later runs the critic's passes by it (0.5 refuses its section); else none."""
    return (CRITIC_ENGINE_DYNAMIC_KEY,) if version != "0.5" and _fsdp_critic(checks) else ()


def _check_null_micro_batch_sizes(checks: _ConfigChecks, version: TrinityVersion | None) -> None:
    """Check each micro-batch size that Trinity types ``int`` (`MICRO_BATCH_SIZES_TYPED_INT`; the critic's where the
    algorithm trains one) for a null, where `_check_micro_batch_sizes` does not: refused where every release `version`
    may be refuses it (`_null_micro_batch_words`: Trinity 0.5 always, else where its role runs with dynamic batch sizes
    off on every release, `sequence_counted_roles`); else a ``micro-batch-unset`` line, for Trinity 0.6 on verl 0.8 or
    later, with dynamic batch sizes on, reads no size (verl 0.9.1 ``workers/config/actor.py:199``,
    ``workers/engine_workers.py:633``, ``workers/config/critic.py:107``)."""
    critic = trains_critic(checks.value(("algorithm", "algorithm_type")))
    counted = sequence_counted_roles(checks.flag, version)
    for path in sorted(MICRO_BATCH_SIZES_TYPED_INT):
        if not checks.written_null(path) or (path[-2] == "critic" and not critic):
            continue
        fix = "set it to 1" if path[-2] in counted else "remove the key for Trinity's default (1), or write 1"
        if version == "0.5" or path[-2] in counted:
            checks.add(ConfigProblemCode.MICRO_BATCH_UNSET_REFUSED,
                       f"{dotted(path)} is null: {_null_micro_batch_words(version)}: {fix}")
            continue
        in_05 = f"{_null_micro_batch_words('0.5')}; " if version is None else ""
        checks.add(ConfigProblemCode.MICRO_BATCH_UNSET, (
            f"{dotted(path)} is null: {in_05}Trinity 0.6 fails on it as the trainer starts with verl before 0.8 (its "
            "typed config refuses it), and on verl 0.8 or later reads no micro-batch size with dynamic batch sizes "
            f"on: {fix}"))


def _check_dpo_sizes_unset(checks: _ConfigChecks, version: TrinityVersion | None) -> None:
    """For DPO with the trainer's dynamic batch sizes off on a model trained with remove padding (off keeps the actor's
    pairs whole: `_check_dynamic_batch`), check that each role's micro-batch size (`ROLE_MICRO_BATCH_SIZES`) is set,
    as `_check_micro_batch_sizes` does for a padded model: Trinity 0.6 on verl 0.8 or later hands verl none for one
    left unset, and verl refuses dynamic batch sizes off as the trainer starts (`_check_unset_size`). A null one is
    `_check_null_micro_batch_sizes`'s."""
    for path in ROLE_MICRO_BATCH_SIZES:
        if not checks.written_null(path):
            _check_unset_size(checks, path, ROLE_MICRO_BATCH_SIZES, version,
                              _micro_batch_fix(checks, path == ROLE_MICRO_BATCH_SIZES[0], version))


def _micro_batch_fix(checks: _ConfigChecks, pair: bool, version: TrinityVersion | None) -> str:
    """How to set a micro-batch size with dynamic batch sizes off, in words: the actor's one DPO pair where `pair`
    (`_one_pair_words`), else 1, each as ``--write`` writes it."""
    return _one_pair_words(version, checks.names.write_does()) if pair else f"set it to 1{checks.names.write_does()}"


def _check_micro_batch_sizes(checks: _ConfigChecks, version: TrinityVersion | None, trainer_gpus: int,
                             sps: tuple[int, int]) -> None:
    """Check, with dynamic batch sizes off, that each pass's micro-batch holds one sequence (`ROLE_MICRO_BATCH_SIZES`,
    and the critic's, `CRITIC_MICRO_BATCH_SIZES`, where the algorithm trains one): more are padded past the token
    budget; a null where every release refuses it (`MICRO_BATCH_SIZES_TYPED_INT`) is refused; unset (or null), a key
    that a release hands verl as none fails as the trainer runs (`_unset_micro_batch_words`), refused where every
    release `version` may be does so (`_fails_on_every_verl`), but for the critic's forward where its deprecated size
    replaces it (`_taken_from_whole_size`); a deprecated size for the whole batch (`DEPRECATED_MICRO_BATCH_SIZES`)
    replaces or clashes with the per-GPU one (`_check_whole_batch_size`, over the data-parallel ranks of
    `trainer_gpus` at `sps`: the critic's SP, the trainer's)."""
    critic = _fsdp_critic(checks)
    dpo = trains_dpo(checks.value(("algorithm", "algorithm_type")))
    paths = (*ROLE_MICRO_BATCH_SIZES, *(CRITIC_MICRO_BATCH_SIZES if critic else ()))
    for path in paths:
        size = checks.number(path)
        pair = dpo and path == ROLE_MICRO_BATCH_SIZES[0]
        fix = _micro_batch_fix(checks, pair, version)
        if pair and size is not None:
            _check_dpo_pair_size(checks, size, version)
        elif size is not None and size != 1:
            checks.add(ConfigProblemCode.MICRO_BATCH_UNBOUNDED, (
                f"{dotted(path)} is {shown_number(size)}: {_critic_size_scope(path, version)}with dynamic batch sizes "
                "off a micro-batch takes that many sequences, padded to the longest, which the token budget does not "
                "bound: set it to 1"))
        elif path in MICRO_BATCH_SIZES_TYPED_INT and checks.written_null(path):
            checks.add(ConfigProblemCode.MICRO_BATCH_UNSET_REFUSED, (
                f"{dotted(path)} is null: {_null_micro_batch_words(version)}: {fix}"))
        else:
            _check_unset_size(checks, path, paths, version, fix)
    _check_whole_batch_sizes(checks, version, (trainer_gpus, sps), {"actor", "ref", *(("critic",) if critic else ())},
                             2 if dpo else 1)


def _check_whole_batch_sizes(checks: _ConfigChecks, version: TrinityVersion | None, layout: tuple[int, tuple[int, int]],
                             roles: Iterable[str], vouched: int | None) -> None:
    """Check, with the trainer's dynamic batch sizes off, the deprecated size for the whole batch
    (`DEPRECATED_MICRO_BATCH_SIZES`) of each of `roles` that the config sets (`_check_whole_batch_size`, `vouched`
    sequences per micro-batch; the ranks from `layout`: trainer GPUs, and the critic's SP and the trainer's)."""
    trainer_gpus, sps = layout
    for path in DEPRECATED_MICRO_BATCH_SIZES:
        if path[-2] in roles and (size := checks.number(path)) is not None:
            role_sp = sps[0] if path[-2] == "critic" else sps[1]
            _check_whole_batch_size(checks, path, int(size), (trainer_gpus, role_sp), vouched, version)


def _check_whole_batch_sizes_own_on(checks: _ConfigChecks, roles: Iterable[str]) -> None:
    """Check, with the trainer's dynamic batch sizes off where the release may be Trinity 0.6, the deprecated size for
    the whole batch (`DEPRECATED_MICRO_BATCH_SIZES`) of each of `roles` that the config sets, roles whose own flag
    (`ROLE_DYNAMIC_BATCH_KEYS`), true, turns dynamic batch sizes on where it counts before verl 0.8 (not
    `sequence_counted_roles`): Trinity 0.6 on verl 0.8 or later gives every role the trainer's flag
    (``trainer/verl/config.py:288``, ``:359``, ``:461``, frozen, ``:710-735`` in 0.6.0), which verl 0.8.0 then reads
    (the ref's as ``ref.log_prob_use_dynamic_bsz``, ``workers/engine_workers.py:511``), so it refuses the size beside
    the per-GPU one as the trainer starts (``workers/config/actor.py:199-205``, ``workers/config/critic.py:107``):
    ``micro-batch-deprecated-size``, as `_check_whole_batch_size` says of the roles that run with them off on every
    release."""
    for path in DEPRECATED_MICRO_BATCH_SIZES:
        own = ROLE_DYNAMIC_BATCH_KEYS[path[-2]]
        if path[-2] in roles and omegaconf_boolean(checks.flag(own)) and (size := checks.number(path)) is not None:
            checks.add(ConfigProblemCode.MICRO_BATCH_DEPRECATED_SIZE, (
                f"{dotted(path)} is {shown_number(size)}: a deprecated size for the whole batch, which verl 0.8 or "
                "later refuses beside the per-GPU size as the trainer starts (a ValueError: both set), as Trinity 0.6 "
                f"gives the role there {dotted(DYNAMIC_BATCH_KEYS[0])}, false, over {dotted(own)}, true (which "
                "before verl 0.8, where it counts, reads neither size): remove it, or set it to null, read as unset"
                f"{checks.names.write_does()}"))


def _critic_size_scope(path: Path, version: TrinityVersion | None) -> str:
    """Which releases read the critic's own micro-batch size at `path` (`CRITIC_MICRO_BATCH_SIZES`), in words ending
    in ": ", where the release `version` may be Trinity 0.6: those on verl before 0.8 (`legacy_release_words`), verl
    0.8 or later cutting the critic's passes by its engine's sizes (`CRITIC_ENGINE_MICRO_BATCH_SIZES`); "" for any
    other size, or with 0.5, which reads it."""
    if path not in CRITIC_MICRO_BATCH_SIZES or version == "0.5":
        return ""
    return (f"{legacy_release_words(version)} reads it (verl 0.8 or later reads {dotted(CRITIC_ENGINE)}'s sizes "
            "instead): ")


def _check_whole_batch_size(checks: _ConfigChecks, path: Path, size: int, layout: tuple[int, int],
                            vouched: int | None, version: TrinityVersion | None) -> None:
    """Check, with dynamic batch sizes off (`_check_whole_batch_sizes`), the deprecated size for the whole batch at
    `path` (`DEPRECATED_MICRO_BATCH_SIZES`), `size`, on each verl line the release `version` may run. verl before 0.8
    takes it over the per-GPU size, divided by the data-parallel ranks (`layout`: trainer GPUs / the role's SP; no
    trainer GPUs known: whole), floored (`solver.trinity.config.micro_batch_counts`): for a padded model, more
    sequences than the verdict's estimate counts per micro-batch (`vouched`: 1, 2 for DPO's pair; None for a model
    whose micro-batches hold their sequences' own tokens, the verdict counting them all) are padded past the token
    budget (``micro-batch-unbounded``: null fits every line). verl 0.8 or later refuses it beside the per-GPU size as
    the trainer starts, for any model (``ActorConfig.__post_init__``, ``workers/config/actor.py:199-205`` in verl
    0.8.0; the ref's as an ``ActorConfig`` too, ``workers/engine_workers.py:508-515``; the critic's,
    ``workers/config/critic.py:107``), a refusal of that line alone where the release may be 0.6, whose verl before
    0.8 runs it: there a size that takes no more than the verdict counts gets ``micro-batch-deprecated-size``,
    neither a refusal nor above the verdict, its words saying what each line does; none with 0.5, whose verl runs it
    so. Below the ranks (0 per GPU) it is `_check_whole_batch_sizes_over_ranks`'."""
    trainer_gpus, sp = layout
    ranks = trainer_gpus // sp
    taken = size // ranks if ranks >= 1 else size
    within = vouched is None or taken <= vouched
    if taken < 1 or (within and version == "0.5"):
        return
    before = "Trinity 0.5's verl" if version == "0.5" else "verl before 0.8"
    over = (f"{shown_number(size)} over the {ranks} data-parallel ranks (trainer GPUs {trainer_gpus} / SP {sp}) = "
            f"{counted(taken, 'sequence')} per micro-batch" if ranks >= 1 else
            f"counted whole, {counted(taken, 'sequence')} per micro-batch, as no trainer GPUs are known to divide it "
            "by")
    on_08 = "" if version == "0.5" else (
        "verl 0.8 or later refuses it beside the per-GPU size as the trainer starts (a ValueError: both set)")
    fix = f"remove it, or set it to null, read as unset{checks.names.write_does()}"
    if not within:
        checks.add(ConfigProblemCode.MICRO_BATCH_UNBOUNDED, (
            f"{dotted(path)} is {shown_number(size)}: a deprecated size for the whole batch, which {before} takes over "
            f"the per-GPU size, {over}, padded to the longest, which the token budget does not bound"
            f"{f', and {on_08}' if on_08 else ''}: {fix}"))
    else:
        checks.add(ConfigProblemCode.MICRO_BATCH_DEPRECATED_SIZE, (
            f"{dotted(path)} is {shown_number(size)}: a deprecated size for the whole batch, which {before} takes over "
            f"the per-GPU size, {over}, as the verdict counts; but {on_08}: {fix}"))


def _check_dpo_pair_size(checks: _ConfigChecks, size: float, version: TrinityVersion | None) -> None:
    """Check, for DPO on a padded model with dynamic batch sizes off (`_check_micro_batch_sizes`), that the actor's
    micro-batch size per GPU `size` holds one pair, a chosen and a rejected sequence, on the release `version` may be
    (`solver.trinity.plan_keys.DPO_PAIR_SIZES`): 1 on Trinity 0.5, which doubles it (before verl 0.8); where the
    release may be 0.6, 2 (one pair on verl 0.8 or later, two before 0.8, where Trinity doubles it: no one size fits
    both, as ``--write``'s note says, `_check_dpo_pair_doubled`) or 1 (one pair before verl 0.8; on 0.8 or later its
    ``dpo-pair-split`` line, `_check_dpo_pairs`). Any other size holds more pairs, padded to the longest, which the
    token budget does not bound (``micro-batch-unbounded``)."""
    if size == 2 and version != "0.5":
        _check_dpo_pair_doubled(checks, version)
    if size in ((1,) if version == "0.5" else (1, 2)):
        return
    doubled = shown_number(2 * size)
    if version == "0.5":
        held = (f"Trinity 0.5 doubles it for DPO, so a micro-batch takes {doubled} sequences, padded to the longest, "
                "which the token budget does not bound")
    else:
        held = (f"a micro-batch takes that many sequences on Trinity 0.6 with verl 0.8 or later, and {doubled} where "
                f"{legacy_releases_listed(version)} doubles it for DPO, padded to the longest, which the token budget "
                "does not bound")
    checks.add(ConfigProblemCode.MICRO_BATCH_UNBOUNDED, (
        f"{dotted(ROLE_MICRO_BATCH_SIZES[0])} is {shown_number(size)} for DPO with dynamic batch sizes off: {held}: "
        f"{_one_pair_words(version)}"))


def _check_dpo_pair_doubled(checks: _ConfigChecks, version: TrinityVersion | None) -> None:
    """Say what DPO's actor micro-batch size per GPU of 2 (`_check_dpo_pair_size`) holds on each verl line where the
    release `version` may be Trinity 0.6 (None or 0.6): one pair, a chosen and a rejected sequence, on verl 0.8 or
    later, which doubles nothing (``trainer/verl/config.py`` has no DPO branch in 0.6.0); two pairs, 4 sequences
    padded to the longest, before 0.8 (Trinity 0.5, and 0.6 on verl 0.7), where Trinity doubles it
    (``trainer/verl_legacy/verl_config.py:685-688`` in 0.6.0). Trinity 0.6 takes the line of the verl it finds
    installed (``is_verl_legacy``, ``trainer/trainer.py:371-382``); it requires ``verl>=0.7.1``, so pip may give
    either. ``dpo-pair-doubled``, not a refusal: the size is right on verl 0.8 or later, and ``--write`` writes it
    (its note says this too)."""
    checks.add(ConfigProblemCode.DPO_PAIR_DOUBLED, (
        f"{dotted(ROLE_MICRO_BATCH_SIZES[0])} is 2 for DPO with dynamic batch sizes off: one pair, a chosen and a "
        "rejected sequence, on Trinity 0.6 with verl 0.8 or later; but "
        f"{legacy_releases_listed(version)} doubles it to 4 sequences, two "
        "pairs, padded to the longest, which the token budget does not bound: there set it to 1 (Trinity 0.6 takes "
        "the verl line of the verl installed beside it: pip show verl)"))


def _one_pair_words(version: TrinityVersion | None, does: str = "") -> str:
    """How to set DPO's actor micro-batch size per GPU with dynamic batch sizes off so that it holds one pair, a
    chosen and a rejected sequence, on the release `version` may be (`solver.trinity.plan_keys.DPO_PAIR_SIZES`), in
    words; with `does`, naming the one that writes that size (`` (--write does)``, `OptionNames.write_does`)."""
    if version == "0.5":
        return f"set it to 1{does}, one pair, a chosen and a rejected sequence, once doubled"
    return (f"set it to 2{does}, one pair, a chosen and a rejected sequence, on verl 0.8 or later, and to 1 before "
            "0.8, which Trinity doubles to one pair")


def _check_unset_size(checks: _ConfigChecks, path: tuple[str, ...], paths: Iterable[tuple[str, ...]],
                      version: TrinityVersion | None, fix: str) -> None:
    """Check that the micro-batch size at `path`, one of `paths` read with dynamic batch sizes off, is set where a
    release hands verl none for it (`_unset_micro_batch_words`), but for the critic's forward where its deprecated size
    replaces it (`_taken_from_whole_size`): refused where every release `version` may be fails so
    (`_fails_on_every_verl`), with `fix` said last."""
    if not checks.absent(path) or _taken_from_whole_size(checks, path):
        return
    if unset := _unset_micro_batch_words(path, version):
        everywhere = _fails_on_every_verl(checks, path, paths, version)
        code = (ConfigProblemCode.MICRO_BATCH_UNSET if everywhere is None
                else ConfigProblemCode.MICRO_BATCH_UNSET_REFUSED)
        checks.add(code, (f"{dotted(path)} is {'null' if checks.written_null(path) else 'not set'}: {unset}"
                          f"{everywhere or ''}: {fix}"))


def _check_critic_forward_unset(checks: _ConfigChecks, version: TrinityVersion | None) -> None:
    """For a model trained with dynamic batch sizes (`_check_dynamic_batch`), check the critic's value forward size per
    GPU (`CRITIC_MICRO_BATCH_SIZES`) where the algorithm trains a critic that runs with them off on every release
    `version` may be (`sequence_counted_roles`) anyway: unset, Trinity 0.5 and 0.6 on verl before 0.8 give verl 0.7.1's
    value forward none to split its batch by (``workers/critic/dp_critic.py:171``, ``DataProto.split``,
    ``protocol.py:913``: ``range(0, n, None)``, a ``TypeError`` at its first step), as `_check_unset_size` says."""
    forward = CRITIC_MICRO_BATCH_SIZES[1]
    if _fsdp_critic(checks) and "critic" in sequence_counted_roles(checks.flag, version):
        _check_unset_size(checks, forward, (forward,), version, "set it to 1, or turn dynamic batch sizes on")


def _fsdp_critic(checks: _ConfigChecks) -> bool:
    """Whether the algorithm trains a critic (`trains_critic`) that runs FSDP, whose micro-batches the checks judge: not
    under a Megatron trainer (`_check_megatron_critic`)."""
    return trains_critic(checks.value(("algorithm", "algorithm_type"))) and not _megatron_trainer(checks)


def _megatron_trainer(checks: _ConfigChecks) -> bool:
    """Whether ``trainer.trainer_strategy`` is Megatron's, as Trinity tells it (``strategy.startswith("megatron")``,
    ``trainer/verl/config.py:442`` in 0.6.0)."""
    return str(checks.value(("trainer", "trainer_strategy")) or "").startswith("megatron")


def _check_megatron_critic(checks: _ConfigChecks) -> None:
    """Say where the algorithm trains a critic under a Megatron trainer that its micro-batches are not judged
    (`_fsdp_critic`): Trinity runs the critic at the trainer's strategy, on verl 0.8 or later with ``critic.strategy``
    frozen to it and its engine ``critic.megatron`` (``critic.fsdp`` dropped: ``trainer/verl/config.py:733``,
    ``_strip_incompatible_engine_keys``, ``:753`` in 0.6.0), before 0.8 in the trainer's Megatron workers
    (``verl_legacy/verl_trainer.py:227``); rft-solver's critic checks are FSDP's. ``not-fsdp-strategy``, as the
    trainer's own note."""
    if trains_critic(checks.value(("algorithm", "algorithm_type"))) and _megatron_trainer(checks):
        checks.add(ConfigProblemCode.NOT_FSDP_STRATEGY, (
            f"trainer.trainer_strategy is {checks.value(('trainer', 'trainer_strategy'))}: Trinity runs the PPO "
            "critic at it too (on verl 0.8 or later its engine is critic.megatron, critic.fsdp dropped), so its "
            "micro-batch sizes and its engine's are not judged: rft-solver's critic checks are FSDP's"))


def _legacy_critic_worker_words(version: TrinityVersion | None) -> str:
    """The critic worker of the releases `version` may be that runs before verl 0.8 (Trinity 0.5, 0.6 on verl before
    0.8, or both), in words."""
    return {"0.5": "Trinity 0.5's critic worker", "0.6": "Trinity 0.6's critic worker on verl before 0.8"}.get(
        version or "", "the critic worker of Trinity 0.5, and of 0.6 on verl before 0.8,")


def _check_critic_strategy(checks: _ConfigChecks, version: TrinityVersion | None) -> None:
    """Check, where the algorithm trains a critic under an FSDP trainer (`_fsdp_critic`), that the critic's own
    ``critic.strategy``, where set, is FSDP's. Before verl 0.8 Trinity takes it over the trainer's (``set_if_none``,
    0.6.0 ``trainer/verl_legacy/verl_config.py:605``, 0.5.2 ``trainer/verl/verl_config.py:598``) and starts the critic
    in the worker of the actor's strategy, the trainer's FSDP one (0.6.0 ``verl_legacy/verl_trainer.py:221``, 0.5.2
    ``trainer/verl/verl_trainer.py:218``), whose ``CriticWorker`` builds fsdp or fsdp2 alone and raises
    ``NotImplementedError(f"Unknown strategy {config.strategy}")`` for any other as the critic starts (0.6.0
    ``verl_legacy/fsdp_workers.py:1593``, 0.5.2 ``trainer/verl/fsdp_workers.py:1474``, 0.5.0 ``:1456``); but with
    ``model.lora_configs`` set it resets the critic's to fsdp (0.6.0 ``verl_config.py:638-642``). Trinity 0.6 on verl
    0.8 or later ignores the key (``FROZEN_KEYS``, ``trainer/verl/config.py:733``, ``_deep_merge``, ``:824``) and runs
    the critic at the trainer's strategy. Refused (``not-fsdp-critic-strategy-refused``) where `version` is 0.5, else
    ``not-fsdp-critic-strategy``."""
    path = (*CRITIC, "strategy")
    if (not _fsdp_critic(checks) or (strategy := checks.value(path)) is None or strategy in ("fsdp", "fsdp2")
            or checks.value(LORA_CONFIGS) is not None):
        return
    given = checks.value(("trainer", "trainer_strategy"))
    trainer = yaml_brief(given) if given else f"unset: {unset_strategy_words(version)}"
    refused = version == "0.5"
    on_08 = "" if refused else ("; Trinity 0.6 on verl 0.8 or later ignores the key, running the critic at the "
                                "trainer's strategy")
    checks.add(ConfigProblemCode.NOT_FSDP_CRITIC_STRATEGY_REFUSED if refused else
               ConfigProblemCode.NOT_FSDP_CRITIC_STRATEGY, (
                   f"{dotted(path)} is {yaml_brief(strategy)} under an FSDP trainer (trainer.trainer_strategy "
                   f"{trainer}): {_legacy_critic_worker_words(version)} builds an fsdp or fsdp2 critic alone (it is "
                   f"the FSDP trainer's) and fails as the critic starts (NotImplementedError: Unknown strategy "
                   f"{strategy}){on_08}: remove it (the critic then runs at the trainer's strategy), or write fsdp or "
                   "fsdp2"))


TRAINER_STRATEGIES = ("fsdp", "fsdp2", "megatron")
"""The ``trainer.trainer_strategy`` values Trinity's trainer on verl before 0.8 starts workers for, as written (the
actor's strategy, ``verl_legacy/verl_trainer.py:221-234`` in 0.6.0, ``trainer/verl/verl_trainer.py:218-231`` in
0.5.2, ``trainer/verl_trainer.py:208-221`` in 0.5.0, ``:206-219`` in 0.5.1)."""


ACTOR_STRATEGY_KEY = (*ACTOR_ROLLOUT_REF, "actor", "strategy")
"""The actor's own strategy, which verl before 0.8 takes over ``trainer.trainer_strategy`` (``set_if_none``,
``verl_legacy/verl_config.py:552`` in 0.6.0) and starts the trainer's workers by; Trinity 0.6 on verl 0.8 or later
ignores it (``FROZEN_KEYS``, `VERL_08_SET_KEYS`)."""


def _check_trainer_strategy(checks: _ConfigChecks, version: TrinityVersion | None) -> None:
    """Check that the strategy the trainer starts its workers by is one of `TRAINER_STRATEGIES`: with verl before 0.8
    the actor's own (`ACTOR_STRATEGY_KEY`), else ``trainer.trainer_strategy``, which it takes (``set_if_none``).
    Trinity with verl before 0.8 starts workers for those alone (``verl_legacy/verl_trainer.py:221-234`` in 0.6.0,
    ``trainer/verl/verl_trainer.py:218-231`` in 0.5.2, ``trainer/verl_trainer.py:208-221`` in 0.5.0, ``:206-219`` in
    0.5.1) and raises ``NotImplementedError`` on any other (``FSDP2`` too) as its trainer starts; with
    ``model.lora_configs`` set it resets the actor's to fsdp first (``verl_legacy/verl_config.py:633-637`` in 0.6.0,
    ``trainer/verl/verl_config.py:626-630`` in 0.5.2, ``common/verl_config.py:611-615`` in 0.5.0, ``:613-617`` in
    0.5.1): nothing is said then.
    Trinity 0.6 on verl 0.8 or later ignores the actor's key and starts: it takes a trainer strategy that does not
    start with ``fsdp`` as Megatron's, building the actor, the ref and the critic on verl's ``McoreActorConfig``
    defaults (``trainer/verl/config.py:267`` to ``:282``, ``:343``, ``:441``) and dropping their ``fsdp_config``
    (``_strip_incompatible_engine_keys``, ``:761-762``), which is said where the actor's own is one of
    `TRAINER_STRATEGIES` too. Refused (``unknown-strategy-refused``) where `version` is 0.5, else
    ``unknown-strategy``."""
    if checks.value(LORA_CONFIGS) is not None:
        return
    trainer, actor = checks.value(("trainer", "trainer_strategy")), checks.value(ACTOR_STRATEGY_KEY)
    refused = version == "0.5"
    megatron_08 = ("Trinity 0.6 on verl 0.8 or later takes it as no FSDP strategy and builds a Megatron trainer at "
                   "verl's defaults, dropping the roles' fsdp_config")
    fix = "write fsdp, fsdp2 or megatron (lower case)"
    if actor is None and isinstance(trainer, str) and trainer not in TRAINER_STRATEGIES:
        on_08 = "" if refused else f"; {megatron_08}"
        checks.add(ConfigProblemCode.UNKNOWN_STRATEGY_REFUSED if refused else ConfigProblemCode.UNKNOWN_STRATEGY, (
            f"trainer.trainer_strategy is {yaml_brief(trainer)}: with {legacy_releases_listed(version)} the trainer "
            f"has workers for fsdp, fsdp2 or megatron alone, as written, and fails as it starts (NotImplementedError)"
            f"{on_08}: {fix}"))
    elif isinstance(actor, str) and actor not in TRAINER_STRATEGIES:
        on_08 = "" if refused else (
            "; Trinity 0.6 on verl 0.8 or later ignores the key, running the actor at trainer.trainer_strategy")
        checks.add(ConfigProblemCode.UNKNOWN_STRATEGY_REFUSED if refused else ConfigProblemCode.UNKNOWN_STRATEGY, (
            f"{dotted(ACTOR_STRATEGY_KEY)} is {yaml_brief(actor)}: with {legacy_releases_listed(version)} the trainer "
            f"takes it over trainer.trainer_strategy and has workers for fsdp, fsdp2 or megatron alone, as written, "
            f"and fails as it starts (NotImplementedError){on_08}: {fix}, or remove it"))
    if actor is not None and not refused and isinstance(trainer, str) and trainer not in TRAINER_STRATEGIES:
        checks.add(ConfigProblemCode.UNKNOWN_STRATEGY, (
            f"trainer.trainer_strategy is {yaml_brief(trainer)}: {megatron_08} (verl before 0.8 takes "
            f"{dotted(ACTOR_STRATEGY_KEY)} over it, which 0.8 ignores): {fix}"))


OVERWRITTEN_MODEL_PATHS = (((*ACTOR_ROLLOUT_REF, "model", "path"), ("model", "model_path")),
                           ((*CRITIC, "model", "path"), ("model", "critic_model_path")),
                           ((*CRITIC, "model", "tokenizer_path"), ("model", "critic_model_path")))
"""The model and tokenizer paths under ``trainer.trainer_config`` that Trinity sets as it loads the config, each with
the key it sets it from: the actor's (the ref's too) from ``model.model_path`` (``actor_model_config.path``,
``common/verl_config.py:514`` in 0.5.0, ``:517`` in 0.5.1, ``trainer/verl/verl_config.py:527`` in 0.5.2,
``verl_legacy/verl_config.py:536`` in 0.6.0; on verl 0.8 or later ``FROZEN_KEYS``, ``trainer/verl/config.py:698``,
built from it at ``:219``), and the critic's from ``model.critic_model_path`` (``common/verl_config.py:573`` in 0.5.0,
``:575`` in 0.5.1, ``trainer/verl/verl_config.py:587`` in 0.5.2, ``verl_legacy/verl_config.py:595`` in 0.6.0; on
verl 0.8 or later ``trainer/verl/trainer.py:347``), which the validator fills in with ``model.model_path`` where it
is unset or empty (``config_validator.py:390`` in 0.5.0, ``:389`` in 0.5.1, ``:393`` in 0.5.2, ``:447-448`` in
0.6.0). The critic's tokenizer path is set from ``model.critic_model_path`` too, the line after its model path's
(``:574``, ``:576``, ``:588``, ``:596`` alike), and its worker loads the tokenizer from it
(``verl_legacy/fsdp_workers.py:1359`` in 0.6.0); on verl 0.8 or later the critic's ``HFModelConfig`` is built from
that model path alone (``trainer/verl/trainer.py:355-362``), whose tokenizer path defaults to it (verl 0.8.0
``workers/config/model.py:153-154``). Trinity has no other key for the critic's tokenizer."""


def _check_overwritten_model_paths(checks: _ConfigChecks) -> None:
    """Caution (``model-path-overwritten``) on a model or tokenizer path under ``trainer.trainer_config`` that
    Trinity replaces with another (`OVERWRITTEN_MODEL_PATHS`), with every release and verl version: the role trains
    the model (reads the tokenizer) of the key it reads, not the one the config names there (the critic's only where
    the algorithm trains one), or where
    ``model.model_path`` is unset or empty too, Trinity's typed default ``""`` (``model_path: str = ""``,
    ``common/config.py:462`` in 0.6.0, ``:457`` in 0.5.2), an empty path that names no model."""
    for path, source in OVERWRITTEN_MODEL_PATHS:
        given = checks.value(path)
        if given is None or path[2] == "critic" and not trains_critic(checks.value(("algorithm", "algorithm_type"))):
            continue
        read = checks.value(source) or (checks.value(("model", "model_path")) if source[1] != "model_path" else None)
        if given == read:
            continue
        fallback = " (model.model_path where that is unset)" if source[1] != "model_path" else ""
        built = (yaml_brief(read) if read else
                 "an empty path, which names no model (model.model_path is unset or empty: Trinity's default is '')")
        if path[-1] == "tokenizer_path":
            outcome = (f"the critic's tokenizer is read from {built}: remove this key (Trinity reads the critic's "
                       "tokenizer from the critic's model path alone)")
        else:
            role = "the critic is" if path[2] == "critic" else "the actor and the ref are"
            outcome = f"{role} built from {built}: set {dotted(source)}: {given} in its place, and remove this key"
        checks.add(ConfigProblemCode.MODEL_PATH_OVERWRITTEN, (
            f"{dotted(path)} is {yaml_brief(given)}, but Trinity sets it from {dotted(source)}{fallback} as it loads "
            f"the config, with every release and verl version, so {outcome}"))


class _MeshReading(NamedTuple):
    """What one verl line does with an ``fsdp_size`` key (`FSDP_SIZE_KEYS`): whether Trinity checks that the GPUs
    divide it as it loads the config (`checked`), and whether it sizes the device mesh of states the memory counts
    (`meshed`)."""

    checked: bool
    meshed: bool


_FSDP_SIZE_ROLES = ("actor", "ref", "critic", "critic")
"""Each of `FSDP_SIZE_KEYS`' role, as Trinity's words name its component."""
_FSDP_SIZE_HELD = ("the actor's states", "the ref's weights", "the critic's states", "the critic's states")
"""What each of `FSDP_SIZE_KEYS` shards."""
_OTHER_CRITIC_FSDP_SIZE: dict[Path, Path] = {CRITIC_FSDP_SIZE: CRITIC_ENGINE_FSDP_SIZE,
                                             CRITIC_ENGINE_FSDP_SIZE: CRITIC_FSDP_SIZE}
"""Each of the critic's two ``fsdp_size`` keys, with the other: each verl line reads one and ignores the other."""


def _fsdp_size_lines(checks: _ConfigChecks, path: Path,
                     version: TrinityVersion | None) -> tuple[_MeshReading, _MeshReading | None]:
    """What the verl lines `version` may run do with the ``fsdp_size`` at `path` (`FSDP_SIZE_KEYS`): before verl 0.8,
    and on verl 0.8 or later (None for 0.5, which runs none). Before 0.8 Trinity checks the actor's, the ref's and the
    critic's; the actor's sizes the mesh of both the actor and the ref, the critic's its own where one is trained. On
    0.8 each engine's own sizes its mesh: the actor's, the ref's where its engine runs (not with LoRA, whose actor gives
    the ref's log-probs: `solver.trinity.config.lora_on_08`), the critic engine's where one is trained."""
    index, critic = FSDP_SIZE_KEYS.index(path), _fsdp_critic(checks)
    legacy = _MeshReading(checked=index < 3, meshed=index == 0 or (index == 2 and critic))
    engine = _MeshReading(checked=False, meshed=(True, _ref_model_runs(checks), False, critic)[index])
    return legacy, None if version == "0.5" else engine


def _ref_model_runs(checks: _ConfigChecks) -> bool:
    """Whether the config runs a ref model of its own: its algorithm's uses one (`ref_forward_runs`), and not with
    LoRA, whose actor gives the ref's log-probs without its adapter (`solver.trinity.config.lora_on_08`)."""
    from solver.trinity.config import lora_on_08

    return ref_forward_runs(checks.value(("algorithm", "algorithm_type")), "0.6") and not lora_on_08(checks.value)


def _check_fsdp_sizes(checks: _ConfigChecks, trainer_gpus: int, version: TrinityVersion | None) -> None:
    """Check each ``fsdp_size`` (`FSDP_SIZE_KEYS`) a verl line `version` may run reads (`_fsdp_size_lines`) against
    the `trainer_gpus`. -1 (the default), another below 1 or one of at least the GPUs shards over every GPU, as the
    verdict counts (before verl 0.8 Trinity reads one below 1 as the GPUs, ``verl_legacy/verl_config.py:456-457`` in
    0.6.0; verl's ``create_device_mesh`` one below 0). A size the GPUs do not divide Trinity refuses before verl 0.8
    (``:458-464``), and verl 0.8 or later builds a mesh of fewer ranks than the GPUs of it, as of 0, which it divides
    by (``workers/engine/fsdp/utils.py:52-57`` in verl 0.8.0): ``fsdp-size-mesh-refused`` where every line refuses it,
    else ``fsdp-size-mesh``. One they divide shards the states over groups of it (hybrid sharding), as a run on that
    many GPUs holds them: ``fsdp-size-hybrid``, the role's group kept (`fsdp_state_groups`) for the verdict to count
    its states so. One that cannot be read here, where a line sizes a mesh by it, is among the verdict's unread keys
    (`fsdp_state_groups`)."""
    said: list[tuple[int, ConfigProblem | HybridLine]] = []  # each line, and where its key's lines end
    for path in FSDP_SIZE_KEYS:
        if checks.value(path) is None and path not in checks.unreadable:
            continue  # unset: the default, every GPU (and a plan's own settings need not load the config's reader)
        legacy, engine = _fsdp_size_lines(checks, path, version)
        lines = [line for line in (legacy, engine) if line is not None]
        if not any(line.checked or line.meshed for line in lines):
            continue
        size = checks.number(path)
        if path in checks.unreadable and any(line.meshed for line in lines):
            checks.unread_deciding.add(path)
        if size is not None and float(size).is_integer():
            said += [(len(checks.problems), each)
                     for each in _check_fsdp_size(checks, path, int(size), trainer_gpus, (legacy, engine), version)]
    # each line in its key's order, after the lines said as the keys before it were read (one that cannot be read:
    # `unresolved-value`), a hybrid one with the group its role is counted over, known once all are read
    for at, each in reversed(said):
        if isinstance(each, HybridLine):
            each = each._replace(counted_size=checks.state_groups.get(each.role, each.size))
            checks.hybrid_lines.insert(0, each)
            checks.problems.insert(at, ConfigProblem(ConfigProblemCode.FSDP_SIZE_HYBRID, each.words()))
        else:
            checks.problems.insert(at, each)


def _check_fsdp_size(checks: _ConfigChecks, path: Path, size: int, trainer_gpus: int,
                     lines: tuple[_MeshReading, _MeshReading | None],
                     version: TrinityVersion | None) -> list[ConfigProblem | HybridLine]:
    """`_check_fsdp_sizes`' check of the ``fsdp_size`` at `path`, `size`, on the `lines` before verl 0.8 and on 0.8
    or later (None: not run): its line, if any (a hybrid one as data, `HybridLine`, for the caller to count over its
    role's group)."""
    legacy, engine = lines
    role = _FSDP_SIZE_ROLES[FSDP_SIZE_KEYS.index(path)]
    before = legacy_release_words(version)
    grouped = 1 <= size < trainer_gpus
    short = grouped and trainer_gpus % size != 0
    fix = f"set it to -1, every GPU{checks.names.write_does()}"
    trinity = (f"{before} refuses the config as it loads it (\"The number of GPUs ({trainer_gpus}) must be divisible "
               f"by `{role}.fsdp_config.fsdp_size` ({size}). Please change `{role}.fsdp_config.fsdp_size` in verl "
               "config to a reasonable value.\")")
    refusals = [trinity] if legacy.checked and short else []
    mesh = "create_device_mesh, workers/engine/fsdp/utils.py:52-57 in verl 0.8.0"
    if engine is not None and engine.meshed and size == 0:
        refusals.append(f"verl 0.8 or later divides the GPUs by it as it builds the {role}'s device mesh ({mesh}), "
                        "a ZeroDivisionError as the trainer starts")
    elif engine is not None and engine.meshed and short:
        refusals.append(f"verl 0.8 or later builds the {role}'s device mesh of {trainer_gpus // size} x {size} = "
                        f"{trainer_gpus // size * size} of the {trainer_gpus} ranks ({mesh}), leaving "
                        f"{trainer_gpus % size} out, and fails as the trainer starts")
    if refusals:
        every = len(refusals) == sum(1 for line in lines if line is not None)
        other = ("" if every else f"; {before} does not read it" if not legacy.checked
                 else f"; {before} reads it as every GPU" if size == 0 else "; verl 0.8 or later does not read it")
        return [ConfigProblem(ConfigProblemCode.FSDP_SIZE_MESH_REFUSED if every else ConfigProblemCode.FSDP_SIZE_MESH,
                              f"{dotted(path)} is {size}: {'; and '.join(refusals)}{other}: {fix}")]
    meshed = [line is not None and line.meshed for line in lines]
    if not grouped or not any(meshed):
        return []
    who = ("verl" if all(each or line is None for each, line in zip(meshed, lines, strict=True))
           else before if meshed[0] else "verl 0.8 or later")
    index = FSDP_SIZE_KEYS.index(path)
    if role != "ref":  # the ref's weights stay in host memory: its group changes no GPU's
        checks.state_groups[role] = min(size, checks.state_groups.get(role, size))
    pinned = ("verl keeps them in pinned host memory (CPUOffload), so each node holds more of them than counted, the "
              "GPUs' memory as counted")
    ref = (f"; {before} shards its ref's weights so too, and {pinned}" if index == 0 and meshed[0]
           and _ref_model_runs(checks) else "")
    # the critic's two keys: each verl line the release may run reads one and ignores the other (`_fsdp_size_lines`),
    # so no critic key groups on both
    other = (f"; {'verl 0.8 or later' if meshed[0] else before} ignores it and reads "
             f"{dotted(_OTHER_CRITIC_FSDP_SIZE[path])} instead" if role == "critic" and engine is not None else "")
    return [HybridLine(dotted(path), size, role, (
        f"{dotted(path)} is {size}: {who} shards {_FSDP_SIZE_HELD[index]} over groups of {size} of the "
        f"{trainer_gpus} trainer GPUs and keeps a copy in each of the {trainer_gpus // size} groups (hybrid "
        f"sharding), so each GPU holds {trainer_gpus // size} times the share a shard over all {trainer_gpus} "
        f"holds{other}"), f"{f'; {pinned}' if role == 'ref' else ref}", f"; {fix}", size)]


class HybridLine(NamedTuple):
    """An ``fsdp-size-hybrid`` line (`_check_fsdp_size`) as data: its ``fsdp_size`` key, dotted, the group of GPUs it
    shards a role's states over, that role (`_FSDP_SIZE_ROLES`), its words before and after how the verdict counts
    those states (`words`), its fix (-1), and the group the verdict counts the role's states over (`counted_size`:
    the smaller one of the critic's other key, which the other verl line reads, where that is smaller)."""

    key: str
    size: int
    role: str
    head: str
    tail: str
    fix: str
    counted_size: int

    def words(self, counted: str | None = None, advised: bool = True) -> str:
        """The line's words, `counted` saying how the verdict counts the states (None: as a run on `counted_size`
        GPUs holds them, `fsdp_hybrid_counted_words`), with its fix where `advised` (not where the run grouped so
        fits); the ref's line says nothing so, its weights in host memory."""
        fix = self.fix if advised else ""
        if self.role == "ref":
            return f"{self.head}{self.tail}{fix}"
        counted = fsdp_hybrid_counted_words(self.counted_size) if counted is None else counted
        fewer = (f", which shards them over groups of {self.counted_size}, fewer (each line the release may run must "
                 "fit)" if self.counted_size < self.size else "")
        return f"{self.head}{fewer}: {counted}{self.tail}{fix}"


def fsdp_hybrid_counted_words(size: int, need: str = "") -> str:
    """How the verdict counts a role's states that a hybrid ``fsdp_size`` of `size` shards over groups of it (the
    ``fsdp-size-hybrid`` line's words, which the verdict completes with the memory model's `need` there)."""
    return f"the verdict counts them so, as a run on {counted(size, 'GPU')} holds them, by the memory model{need}"


def _critic_engine_unsized(checks: _ConfigChecks, version: TrinityVersion | None) -> list[Path]:
    """The micro-batch sizes of the critic's engine (`CRITIC_ENGINE_MICRO_BATCH_SIZES`) that the config leaves without a
    value where Trinity 0.6 on verl 0.8 or later cuts the critic's passes by them: the release `version` may be 0.6,
    the algorithm trains an FSDP critic (`_fsdp_critic`) and the engine's dynamic batch sizes are off
    (`critic_engine_in_rows`: its own ``critic.fsdp.use_dynamic_bsz``, else the trainer's; true packs them by
    tokens)."""
    if version == "0.5" or not _fsdp_critic(checks) or not critic_engine_in_rows(checks.flag):
        return []
    return [path for path in CRITIC_ENGINE_MICRO_BATCH_SIZES if checks.absent(path)]


def _check_critic_engine_sizes(checks: _ConfigChecks, version: TrinityVersion | None, does: str = "") -> None:
    """Say where the critic's engine's micro-batch sizes are left without a value (`_critic_engine_unsized`): Trinity
    0.6 on verl 0.8 or later copies neither of the critic's own into its engine, and fails at the first pass cut by
    one left none (`CRITIC_ENGINE_MICRO_BATCH_SIZES`). ``micro-batch-unset``, never refused alone: 0.6 on verl before
    0.8 reads the critic's own sizes; where that fails too, the line that says so names both
    (`_fails_on_every_verl`, `_check_critic_mini_batch`). The fix sets them to 1 (`does`: ``--write`` does, for a
    padded model), else to 1 or dynamic batch sizes on; for a release that may be 0.5, which refuses the section, it
    says to leave it out there."""
    if not (unset := _critic_engine_unsized(checks, version)):
        return
    first = "value forward" if CRITIC_ENGINE_MICRO_BATCH_SIZES[1] in unset else "update"
    them = "them" if len(unset) > 1 else "it"
    fix = f"set {them} to 1{does}" if does else f"set {them} to 1, or turn dynamic batch sizes on"
    refused_05 = f"; Trinity 0.5 refuses {dotted(CRITIC_ENGINE)}, so leave it out there"
    checks.add(ConfigProblemCode.MICRO_BATCH_UNSET, (
        f"{' and '.join(map(dotted, unset))} {'are' if len(unset) > 1 else 'is'} not set: Trinity 0.6 on verl 0.8 or "
        f"later builds the critic's engine from {dotted(CRITIC_ENGINE)} and copies neither of the critic's own "
        "micro-batch sizes into it, so with dynamic batch sizes off verl cuts the critic's passes by none and fails at "
        f"its first {first} (force_group_size * None: {ENGINE_MINI_BATCH_ASSERT_LINES}): {fix}"
        f"{refused_05 if version is None else ''}"))


def _taken_from_whole_size(checks: _ConfigChecks, path: Path) -> bool:
    """Whether `path` is the critic's forward size per GPU (`CRITIC_MICRO_BATCH_SIZES`) and the config sets the critic's
    deprecated size for the whole batch, in which case the releases that leave the forward's none (verl before 0.8)
    replace it with ``forward_micro_batch_size`` over the data-parallel ranks, or fail as the critic starts where that
    is unset (`_check_critic_forward_whole_size`)."""
    return path == CRITIC_MICRO_BATCH_SIZES[1] and checks.number(DEPRECATED_MICRO_BATCH_SIZES[2]) is not None


def _check_critic_forward_whole_size(checks: _ConfigChecks, version: TrinityVersion | None) -> None:
    """Check, where the algorithm trains a critic whose deprecated size for the whole batch (``ppo_micro_batch_size``,
    `DEPRECATED_MICRO_BATCH_SIZES`) is set, that its value forward's is too (`CRITIC_FORWARD_WHOLE_SIZE`), with dynamic
    batch sizes on or off: else the critic of Trinity 0.5, and of 0.6 on verl before 0.8, fails as it starts. Refused
    (``micro-batch-unset-refused``) where `version` is 0.5, else ``micro-batch-unset``: Trinity 0.6 on verl 0.8 or
    later gives it 1."""
    whole = DEPRECATED_MICRO_BATCH_SIZES[2]
    if (not _fsdp_critic(checks) or (size := checks.number(whole)) is None
            or not checks.absent(CRITIC_FORWARD_WHOLE_SIZE)):
        return
    forward = dotted(CRITIC_FORWARD_WHOLE_SIZE)
    who = _legacy_critic_worker_words(version)
    on_08 = "" if version == "0.5" else "; Trinity 0.6 on verl 0.8 or later gives it 1"
    code = ConfigProblemCode.MICRO_BATCH_UNSET_REFUSED if version == "0.5" else ConfigProblemCode.MICRO_BATCH_UNSET
    checks.add(code, (
        f"{forward} is {'null' if checks.written_null(CRITIC_FORWARD_WHOLE_SIZE) else 'not set'} beside "
        f"{dotted(whole)} {shown_number(size)}: {who} divides both by the data-parallel ranks as it starts and fails "
        f"on the one without a value (None //= ranks, a TypeError){on_08}: add {forward} (verl's own config gives it "
        f"ppo_micro_batch_size's value, {shown_number(size)}), or remove {dotted(whole)}"))


def _check_dpo_pairs(checks: _ConfigChecks, model: Model, version: TrinityVersion | None) -> None:
    """Check, for DPO with dynamic batch sizes off where the release may be Trinity 0.6 (on verl 0.8 or later, every
    role takes the trainer's ``use_dynamic_bsz``), that the actor's micro-batch size per GPU (`ROLE_MICRO_BATCH_SIZES`)
    is even. Trinity puts each example's chosen sequence before its rejected one
    (``split_dpo_experience_to_single_turn``, ``common/experience.py:499`` in 0.6.0), and its DPO loss takes a
    micro-batch's even rows as chosen and its odd ones as rejected, each half summed over the whole micro-batch
    (``algorithm/policy_loss_fn/dpo_loss.py:30-40``, ``masked_sum``, ``algorithm/utils.py:52-55``; on verl 0.8 or later
    through ``trainer/verl/losses.py:68``). On verl before 0.8 Trinity doubles the size
    (``trainer/verl_legacy/verl_config.py:685-688``), so each micro-batch holds whole pairs; on verl 0.8 or later it
    does not (``trainer/verl/config.py`` has no DPO branch), and verl cuts the batch into micro-batches of that many
    rows in order (verl 0.9.1 ``workers/engine/utils.py:124-128``, no shuffle: ``shuffle: False``,
    ``trainer/verl/config.py:299``). An odd size splits a pair: at 1 the rejected half is empty, summed to 0, so every
    sequence is trained as a chosen one; above 1 the next micro-batch's rows are taken the other way round. It runs, but
    is not DPO: ``dpo-pair-split``, not a refusal; the even size it names is the next one, but 2, one pair, for a
    `model` whose micro-batches are padded (`remove_padding_violation`), where more are ``micro-batch-unbounded``.
    Read from the code, not run."""
    key = ROLE_MICRO_BATCH_SIZES[0]
    size = checks.number(key)
    if (version == "0.5" or not trains_dpo(checks.value(("algorithm", "algorithm_type")))
            or not turned_off(checks.flag(DYNAMIC_BATCH_KEYS[0])) or size is None or size % 2 != 1):
        return
    split = _pair_split_words(size)
    even = (f"{shown_number(size + 1)}, an even size (" if size == 1 or remove_padding_violation(model) is None else
            "2, one pair (more sequences are padded past the token budget: micro-batch-unbounded; ")
    checks.add(ConfigProblemCode.DPO_PAIR_SPLIT, (
        f"{dotted(key)} is {shown_number(size)} for DPO with dynamic batch sizes off: Trinity 0.6 on verl 0.8 or later "
        "does not double it, as Trinity on verl before 0.8 does, and Trinity's DPO loss takes a micro-batch's rows in "
        f"pairs, a chosen and a rejected sequence: {split}; it runs, but is not DPO: on verl 0.8 or later set it to "
        f"{even}on verl before 0.8, Trinity doubles what is written)"))


def _pair_split_words(size: float) -> str:
    """What Trinity's DPO loss makes of micro-batches of an odd `size` in rows (`_check_dpo_pairs`), in words."""
    if size == 1:
        return ("each micro-batch holds one sequence, so the loss finds no rejected one: it sums the empty half to 0 "
                "and trains every sequence, the rejected ones too, as a chosen one")
    return (f"each micro-batch holds {shown_number(size)} sequences, which splits a pair over two micro-batches, and "
            "the loss takes the next one's rows the other way round, its rejected sequences as chosen")


def _check_dpo_whole_size_pairs(checks: _ConfigChecks, trainer_gpus: int, sp: int,
                                version: TrinityVersion | None) -> None:
    """Check, for DPO, the actor's deprecated size for the whole batch (`DEPRECATED_MICRO_BATCH_SIZES`), for any model,
    where the actor's update runs with dynamic batch sizes off on a release `version` may be whose verl is before 0.8
    (`sequence_counted_roles`; Trinity 0.6 on verl 0.8 or later refuses the size, `_check_whole_batch_size`). Trinity
    doubles the per-GPU size for DPO as it loads the config (``trainer/verl_legacy/verl_config.py:685-688`` in 0.6.0),
    but its actor worker then puts this size over the data-parallel ranks, `trainer_gpus` / `sp`, floored, in the
    per-GPU one's place, doubled by nothing (``trainer/verl_legacy/fsdp_workers.py:247-253`` in 0.6.0,
    ``trainer/verl/fsdp_workers.py:223-229`` in 0.5.0), and the actor cuts its mini-batch into micro-batches of that
    many rows in order, which Trinity's DPO loss takes in pairs (`_check_dpo_pairs`): an odd number splits its
    pairs. It runs, but is not DPO: ``dpo-pair-split``, not a refusal; 0 per GPU is refused elsewhere
    (`_check_whole_batch_sizes_over_ranks`). Read from the code, not run."""
    path = DEPRECATED_MICRO_BATCH_SIZES[0]
    size, ranks = checks.number(path), trainer_gpus // sp
    in_rows = any("actor" in sequence_counted_roles(checks.flag, release) for release in releases_may_be(version))
    if size is None or not in_rows or not trains_dpo(checks.value(("algorithm", "algorithm_type"))):
        return
    taken = int(size) // ranks if ranks >= 1 else int(size)
    if taken < 1 or taken % 2 == 0:
        return
    over = (f"{shown_number(size)} over the {ranks} data-parallel ranks (trainer GPUs {trainer_gpus} / SP {sp}) = "
            f"{counted(taken, 'sequence')}" if ranks >= 1 else
            f"counted whole, {counted(taken, 'sequence')}, as no trainer GPUs are known to divide it by")
    checks.add(ConfigProblemCode.DPO_PAIR_SPLIT, (
        f"{dotted(path)} is {shown_number(size)} for DPO with dynamic batch sizes off: a deprecated size for the whole "
        f"batch, which {legacy_release_words(version)} takes over the per-GPU size (trainer/verl_legacy/"
        "fsdp_workers.py:247-253 in Trinity 0.6.0), after doubling that one for DPO, and does not double: "
        f"{over} per micro-batch, and Trinity's DPO loss takes a micro-batch's rows in pairs, a chosen and a rejected "
        f"sequence: {_pair_split_words(taken)}; it runs, but is not DPO: remove it, or set it to null, read as unset"
        f"{checks.names.write_does()}"))


def _check_dpo_pair_dynamic(checks: _ConfigChecks, version: TrinityVersion | None) -> None:
    """Check, for DPO, that the actor's update runs with dynamic batch sizes off on every release `version` may be
    (`sequence_counted_roles`). With them on, verl cuts each GPU's mini-batch into micro-batches balanced by sequence
    length (Trinity 0.5.1 ``trainer/verl/dp_actor.py:103-114`` through verl 0.7.0's ``prepare_dynamic_batch``; 0.5.2
    ``:108-119`` and 0.6.0 ``trainer/verl_legacy/dp_actor.py:486-497`` through their own ``rearrange_micro_batches``,
    ``trainer/verl/utils.py:308`` and ``trainer/verl_legacy/utils.py:396``; on verl 0.8 or later verl's own
    ``prepare_micro_batches``, ``workers/engine/utils.py:74-86`` in 0.8.0, ``:108-120`` in 0.9.0 and 0.9.1, the
    verl releases from 0.8 that Trinity 0.6.0's ``verl>=0.7.1`` takes, whose ``force_group_size`` Trinity leaves 1):
    Karmarkar-Karp partitions of single rows, each sorted by index, so a pair's chosen and rejected sequences land in
    different micro-batches whenever a mini-batch takes more than one. Trinity's DPO loss takes a micro-batch's even
    rows as chosen and its odd ones as rejected (``algorithm/policy_loss_fn/dpo_loss.py:30-33`` in 0.5.1, 0.5.2 and
    0.6.0); no release turns dynamic batch sizes off for DPO or groups its pairs (``DPOAlgorithm`` sets only
    ``can_balance_batch: False``, which keeps pairs whole across the data-parallel ranks). Run on CPU with verl 0.7.1's
    partitioning: 990 of 1000 random mini-batches of 4 to 32 pairs (100 to 4000 tokens, a budget of 8192) mis-pair.
    ``dpo-pair-dynamic``, not a refusal: it runs, but is not DPO."""
    if not trains_dpo(checks.value(("algorithm", "algorithm_type"))) or "actor" in sequence_counted_roles(
            checks.flag, version):
        return
    trainer, actor = DYNAMIC_BATCH_KEYS[:2]
    actor_off = turned_off(checks.flag(actor))
    key = actor if version != "0.6" and checks.flag(actor) is not None and not actor_off else trainer
    over = f"Trinity 0.6 sets {dotted(actor)} to it, over the false written there" if actor_off else ""
    default = f"true (Trinity's default{f'; {over}' if over else ''})"
    shown = (("true" + (f" ({over})" if over else "")) if checks.flag(key) is not None else
             f"unreadable here, so may be {default}" if key in checks.unreadable else f"not set, so {default}")
    checks.add(ConfigProblemCode.DPO_PAIR_DYNAMIC, (
        f"{dotted(key)} is {shown} for DPO: the actor's update then cuts each GPU's mini-batch into micro-batches "
        "balanced by sequence length (Trinity 0.5.2 trainer/verl/dp_actor.py:108-119 through its "
        "rearrange_micro_batches, trainer/verl/utils.py:308; 0.6.0 trainer/verl_legacy/dp_actor.py:486-497, and on "
        f"verl 0.8 or later verl's prepare_micro_batches, {ENGINE_MICRO_BATCHES_LINES}), which puts a "
        "pair's chosen and rejected sequences in different micro-batches wherever a mini-batch takes more than one, "
        "and Trinity's DPO loss takes a micro-batch's even rows as chosen and its odd ones as rejected "
        "(algorithm/policy_loss_fn/dpo_loss.py:30-33): it runs, but is not DPO: set trainer.use_dynamic_bsz to false"
        f"{checks.names.write_does()}{_pair_size_advice(checks.number(ROLE_MICRO_BATCH_SIZES[0]), version)}"))


ENGINE_MICRO_BATCHES_LINES = "workers/engine/utils.py:74-86 in verl 0.8.0, :108-120 in 0.9.0 and 0.9.1"
"""Where verl's engine cuts a GPU's mini-batch into micro-batches (``prepare_micro_batches``), in each verl release
from 0.8 that Trinity 0.6.0 runs (it asks for ``verl>=0.7.1``: 0.8.0, 0.9.0, 0.9.1)."""


def _pair_size_advice(size: float | None, version: TrinityVersion | None) -> str:
    """What `_check_dpo_pair_dynamic` says to set the actor's micro-batch size per GPU, now `size` (None: unset), to
    for one pair on each verl line the release `version` may run on (`_one_pair_words`), only where that changes it:
    "" where it holds one pair on all of them (1 with 0.5), the other line's size alone where it holds one on one."""
    key = dotted(ROLE_MICRO_BATCH_SIZES[0])
    if version == "0.5":
        return "" if size == 1 else f", and for {key} {_one_pair_words(version)}"
    if size == 1:
        return (f", and for {key} set it to 2, one pair, a chosen and a rejected sequence, on verl 0.8 or later (its 1 "
                "is one pair before 0.8, which Trinity doubles)")
    if size == 2:
        return (f", and for {key} set it to 1 before verl 0.8, which Trinity doubles to one pair (its 2 is one pair "
                "on verl 0.8 or later)")
    return f", and for {key} {_one_pair_words(version)}"


def _check_whole_batch_sizes_over_ranks(checks: _ConfigChecks, trainer_gpus: int, sp: int,
                                        version: TrinityVersion | None) -> None:
    """Check the actor's and the ref's deprecated size for the whole batch (`DEPRECATED_MICRO_BATCH_SIZES`), where
    its role runs with dynamic batch sizes off on every release `version` may be (`sequence_counted_roles`), against
    the data-parallel ranks, `trainer_gpus` / `sp`: Trinity's verl workers divide it by them, floored (0.6.0
    ``trainer/verl_legacy/fsdp_workers.py:247-253``, ``:278-287``; 0.5.0 ``trainer/verl/fsdp_workers.py:223-229``,
    ``:253-263``), so a size below them gives 0 sequences per GPU, on which the actor fails as the trainer starts
    (``mini_batch % 0``, 0.6.0 ``:255-263``) and the ref at its first step (``DataProto.split(0)``, verl 0.7.0
    ``protocol.py:925``), and verl 0.8 or later refuses the size whatever it is (`_check_whole_batch_size`): refused
    for any model (``micro-batch-unset-refused``). A size the ranks do not divide is floored, which verl takes and the
    verdict counts (`solver.trinity.config.micro_batch_counts`)."""
    ranks = trainer_gpus // sp
    counted = sequence_counted_roles(checks.flag, version)
    for path in DEPRECATED_MICRO_BATCH_SIZES[:2]:
        size = checks.number(path)
        if path[-2] in counted and size is not None and ranks > 0 and size < ranks:
            checks.add(ConfigProblemCode.MICRO_BATCH_UNSET_REFUSED, (
                f"{dotted(path)} is {shown_number(size)}, a deprecated size for the whole batch, below the {ranks} "
                f"data-parallel ranks (trainer GPUs {trainer_gpus} / SP {sp}): verl before 0.8 divides it by them to 0 "
                "sequences per GPU, on which the trainer fails, and verl 0.8 or later refuses it: remove it, and set "
                f"{ROLE_MICRO_BATCH_SIZES[0 if path[-2] == 'actor' else 1][-1]} instead"))


def _check_critic_whole_size_over_ranks(checks: _ConfigChecks, trainer_gpus: int, critic_sp: int,
                                        version: TrinityVersion | None) -> None:
    """Check a trained critic's deprecated size for the whole batch (`DEPRECATED_MICRO_BATCH_SIZES`), for any model,
    against its data-parallel ranks, `trainer_gpus` / `critic_sp`, where the critic runs with dynamic batch sizes off
    on a release `version` may be whose verl is before 0.8 (`sequence_counted_roles`): its worker divides the size by
    them, floored, into the per-GPU one, and asserts that this divides the mini-batch per GPU as it starts (0.6.0
    ``trainer/verl_legacy/fsdp_workers.py:1318-1331``), so a size below the ranks, 0 per GPU, fails there (``% 0``).
    Trinity 0.6 on verl 0.8 or later cuts the critic's passes by its engine's sizes (`CRITIC_ENGINE_MICRO_BATCH_SIZES`)
    and builds no check of this size over the ranks (verl's ``FSDPCriticConfig.validate``, ``workers/config/
    critic.py:221-229`` in verl 0.8.0, which Trinity does not call): refused (``micro-batch-unset-refused``) with 0.5
    alone, else ``micro-batch-unset``."""
    path = DEPRECATED_MICRO_BATCH_SIZES[2]
    size, ranks = checks.number(path), trainer_gpus // critic_sp
    failing = [release for release in releases_may_be(version)
               if "critic" in sequence_counted_roles(checks.flag, release)]
    if not _fsdp_critic(checks) or size is None or ranks < 1 or size >= ranks or not failing:
        return
    on_08 = "" if version == "0.5" else ("; Trinity 0.6 on verl 0.8 or later cuts the critic's passes by its engine's "
                                         "sizes instead")
    code = ConfigProblemCode.MICRO_BATCH_UNSET_REFUSED if version == "0.5" else ConfigProblemCode.MICRO_BATCH_UNSET
    checks.add(code, (
        f"{dotted(path)} is {shown_number(size)}, a deprecated size for the whole batch, below the {ranks} "
        f"data-parallel ranks (trainer GPUs {trainer_gpus} / SP {critic_sp}): "
        f"{_legacy_critic_worker_words(failing[0] if len(failing) == 1 else version)} divides it by them to 0 "
        "sequences per GPU with dynamic batch sizes off and fails on that as it starts (its mini-batch % 0, "
        f"trainer/verl_legacy/fsdp_workers.py:1318-1331 in 0.6.0){on_08}: remove it"
        f"{checks.names.write_does()}, and set {CRITIC_MICRO_BATCH_SIZES[0][-1]} instead"))


def _check_actor_mini_batch(checks: _ConfigChecks, trainer_gpus: int, sp: int, batch: TrainBatch,
                            version: TrinityVersion | None) -> None:
    """For the actor's update run with dynamic batch sizes off (as `version` may be: `sequence_counted_roles`), check
    its mini-batch per GPU against its micro-batch on each verl line, for any algorithm. Trinity sets
    ``ppo_mini_batch_size`` to the train `batch` (0.6.0 ``trainer/verl_legacy/verl_config.py:540`` and
    ``trainer/verl/config.py:285``, 0.5.2 ``trainer/verl/verl_config.py:531``), which the data-parallel ranks,
    `trainer_gpus` / `sp`, share. Before verl 0.8 (Trinity 0.5, and 0.6 on verl 0.7) it doubles the actor's
    micro-batch size per GPU for DPO (0.6.0 ``:685-688``, 0.5.2 ``:672-675``; its typed config gives 1 where unset,
    ``:157``), and its worker divides the mini-batch by the ranks, floored, takes the deprecated whole-batch size over
    them in place of the micro-batch size where set (`DEPRECATED_MICRO_BATCH_SIZES`), and asserts that the micro-batch
    divides the mini-batch as the trainer starts (0.6.0 ``trainer/verl_legacy/fsdp_workers.py:239-266``, 0.5.2
    ``trainer/verl/fsdp_workers.py:223-250``). On verl 0.8 or later Trinity 0.6 doubles nothing and hands verl's
    engine the mini-batch for every algorithm (``_update_actor``, ``trainer/verl/trainer.py:794-808``), and the engine
    asserts at the actor's first update that the size as written divides the mini-batch per GPU
    (`ENGINE_MINI_BATCH_ASSERT_LINES`; the mini-batch per GPU is the batch over the ranks at the actor's engine's SP,
    `_role_engine_sp`, ``workers/engine_workers.py:258-261`` in verl 0.8.0, ``:266-269`` in 0.9.0, ``:267-270`` in
    0.9.1): judged where
    the size is set and the ranks divide the batch (a size left unset, or a deprecated one, verl 0.8 refuses as the
    trainer starts, and a batch the ranks do not divide it asserts first: said elsewhere). Refused
    (``dpo-mini-batch-split-refused``, ``mini-batch-split-refused`` for other algorithms) where every release
    `version` may be fails so (each runs the actor's update in rows, the micro-batch splitting the mini-batch before
    verl 0.8, and for 0.6 on verl 0.8 or later too); else ``dpo-mini-batch-split``, ``mini-batch-split``. The words
    name only the releases and verl lines that fail, in one line where both fail on the same micro-batch (other
    algorithms, which double nothing). A mini-batch of 0 per GPU or a micro-batch of 0 is said elsewhere
    (``batch-divides``, ``micro-batch-unset-refused``)."""
    releases = releases_may_be(version)
    in_rows = [release for release in releases if "actor" in sequence_counted_roles(checks.flag, release)]
    if batch.size is None or sp < 1 or not in_rows:
        return
    dpo = trains_dpo(checks.value(("algorithm", "algorithm_type")))
    ranks = trainer_gpus // sp
    mini = batch.size // ranks if ranks > 0 else 0
    size, whole = checks.number(ROLE_MICRO_BATCH_SIZES[0]), checks.number(DEPRECATED_MICRO_BATCH_SIZES[0])
    written = int(size) if size is not None and size >= 1 else 1
    legacy = int(whole) // ranks if whole is not None and ranks > 0 else 2 * written if dpo else written
    source = (f"{dotted(DEPRECATED_MICRO_BATCH_SIZES[0])} {shown_number(whole)} over them" if whole is not None else
              f"{dotted(ROLE_MICRO_BATCH_SIZES[0])} {written}{'' if size is not None else ' (unset: 1)'}"
              + (" doubled for DPO" if dpo else ""))
    before_08 = mini >= 1 and legacy >= 1 and mini % legacy != 0
    engine_sp = _role_engine_sp(checks, "actor", sp) if "0.6" in in_rows else sp  # verl 0.8's ranks at its engine's
    engine_ranks = trainer_gpus // engine_sp
    engine_mini = batch.size // engine_ranks if engine_ranks > 0 else 0
    on_08 = ("0.6" in in_rows and engine_mini >= 1 and size is not None and size >= 1 and whole is None
             and trainer_gpus % engine_sp == 0 and batch.size % engine_ranks == 0 and engine_mini % written != 0)
    codes = ((ConfigProblemCode.MINI_BATCH_SPLIT_REFUSED, ConfigProblemCode.MINI_BATCH_SPLIT) if not dpo else
             (ConfigProblemCode.DPO_MINI_BATCH_SPLIT_REFUSED, ConfigProblemCode.DPO_MINI_BATCH_SPLIT))
    code = codes[0] if set(in_rows) == set(releases) and before_08 and (on_08 or "0.6" not in releases) else codes[1]
    engine = _engine_assert_words("the actor's first update", ", which doubles nothing," if dpo else "")
    if before_08:
        where = _legacy_assert_words(in_rows)
        if on_08 and legacy == written and engine_ranks == ranks:  # the same split on both lines: one line says both
            where += f", and 0.6 on verl 0.8 or later at the actor's first update ({ENGINE_MINI_BATCH_ASSERT_LINES})"
            on_08 = False
        checks.add(code, _mini_batch_words(_ACTOR_UPDATE, where, legacy, source, batch, mini, (ranks, trainer_gpus, sp),
                                           dpo))
    if on_08:
        checks.add(code, _mini_batch_words(_ACTOR_UPDATE, engine, written,
                                           f"{dotted(ROLE_MICRO_BATCH_SIZES[0])} {written}", batch, engine_mini,
                                           (engine_ranks, trainer_gpus, engine_sp), dpo))


def _legacy_assert_words(in_rows: Sequence[TrinityVersion]) -> str:
    """Who asserts as the trainer starts that a pass's micro-batch divides its mini-batch before verl 0.8, in words: the
    releases of `in_rows` (Trinity 0.5, 0.6 on verl before 0.8, or both), whose legacy workers do."""
    one = len(in_rows) == 1
    return f"{legacy_releases_listed(in_rows[0] if one else None)} assert{'s' if one else ''} as the trainer starts"


def _check_critic_mini_batch(checks: _ConfigChecks, trainer_gpus: int, sps: tuple[int, int], batch: TrainBatch,
                             version: TrinityVersion | None) -> None:
    """Check, where the algorithm trains an FSDP critic (`_fsdp_critic`) whose passes run with dynamic batch sizes off
    on a release `version` may be (`sequence_counted_roles`; on Trinity 0.6 with verl 0.8 or later, by its engine's
    flag, `critic_engine_in_rows`) and the train `batch` is known, its micro-batches against
    its rows per GPU on each verl line, as the actor's (`_check_actor_mini_batch`). Before verl 0.8 the legacy critic
    worker (Trinity 0.5, 0.6 on verl before 0.8) takes the batch as the critic's mini-batch
    (``critic.ppo_mini_batch_size``, ``trainer/verl/verl_config.py:591`` in 0.5.2, ``verl_legacy/verl_config.py:599``
    in 0.6.0), divides it by its data-parallel ranks at the critic's own SP (`sps`: it, then the trainer's), takes its
    ``ppo_micro_batch_size_per_gpu`` (unset: 1) or its deprecated whole size over the ranks
    (`DEPRECATED_MICRO_BATCH_SIZES`), and asserts that the micro-batch divides the mini-batch as the trainer starts
    (0.5.0 ``trainer/verl/fsdp_workers.py:1209-1214``, 0.5.2 ``:1226-1231``, 0.6.0
    ``verl_legacy/fsdp_workers.py:1328-1333``). On verl 0.8 or later Trinity 0.6 reads neither size of the critic's
    but its engine's (`CRITIC_ENGINE_MICRO_BATCH_SIZES`, at its engine's SP, `CRITIC_ENGINE_SP_KEY`, else the
    trainer's; where its engine runs in rows, `critic_engine_in_rows`), whose ``prepare_micro_batches`` asserts that
    each, where set, divides the rows each GPU takes (`ENGINE_MINI_BATCH_ASSERT_LINES`): the update's its mini-batch
    per GPU, at the critic's first update, and the
    value forward's the batch over the ranks, at its first step (judged where the ranks divide the batch: else
    `_engine_failure` says so). The update's line is refused (``mini-batch-split-refused``) where every release
    `version` may be fails: before 0.8, and for 0.6 on verl 0.8 or later by the engine's sizes, or none there
    (`_critic_engine_unsized`, whose own line says so); the value forward's is ``mini-batch-split``, never refused:
    verl before 0.8 splits it unasserted, the last micro-batch short (verl 0.7.1
    ``workers/critic/dp_critic.py:171``)."""
    releases = releases_may_be(version)
    in_rows = [release for release in releases if "critic" in sequence_counted_roles(checks.flag, release)]
    engine_in_rows = "0.6" in releases and critic_engine_in_rows(checks.flag)  # on verl 0.8 or later
    if batch.size is None or not (in_rows or engine_in_rows) or not _fsdp_critic(checks) or trainer_gpus < 1:
        return
    critic_sp, sp = sps
    ranks = trainer_gpus // critic_sp
    engine_sp = max(1, int(own)) if (own := checks.number(CRITIC_ENGINE_SP_KEY)) is not None else sp
    engine_ranks = trainer_gpus // engine_sp
    engine_rows = batch.size // engine_ranks if engine_ranks >= 1 and batch.size % engine_ranks == 0 else 0
    engine_splits = [(path, int(size)) for path in CRITIC_ENGINE_MICRO_BATCH_SIZES
                     if engine_in_rows and engine_rows
                     and (size := checks.number(path)) is not None and size >= 1 and engine_rows % int(size) != 0]
    on_08_fails = engine_in_rows and bool(engine_splits or _critic_engine_unsized(checks, version))
    size, whole = checks.number(CRITIC_MICRO_BATCH_SIZES[0]), checks.number(DEPRECATED_MICRO_BATCH_SIZES[2])
    written = int(size) if size is not None and size >= 1 else 1
    legacy = int(whole) // ranks if whole is not None and ranks >= 1 else written
    mini = batch.size // ranks if ranks >= 1 else 0
    layout = (ranks, trainer_gpus, critic_sp)
    if in_rows and mini >= 1 and legacy >= 1 and mini % legacy != 0:
        refused = set(in_rows) == set(releases) and ("0.6" not in releases or on_08_fails)
        source = (f"{dotted(DEPRECATED_MICRO_BATCH_SIZES[2])} {shown_number(whole)} over them" if whole is not None
                  else f"{dotted(CRITIC_MICRO_BATCH_SIZES[0])} {written}{'' if size is not None else ' (unset: 1)'}")
        where, on_08 = _legacy_assert_words(in_rows), ""
        if (CRITIC_ENGINE_MICRO_BATCH_SIZES[0], legacy) in engine_splits and engine_ranks == ranks:
            # the same micro-batch splits the same rows on both lines: one line says both
            engine_splits.remove((CRITIC_ENGINE_MICRO_BATCH_SIZES[0], legacy))
            where += f", and 0.6 on verl 0.8 or later at the critic's first update ({ENGINE_MINI_BATCH_ASSERT_LINES})"
            source += f"; on verl 0.8 or later {dotted(CRITIC_ENGINE_MICRO_BATCH_SIZES[0])} {legacy}"
        elif refused and "0.6" in releases:  # verl 0.8 or later fails it too, as another line says
            on_08 = (f"; {_ENGINE_UNSIZED_WORDS if not engine_splits else _ENGINE_SPLITS_WORDS}, so the config runs "
                     "on no verl")
        checks.add(ConfigProblemCode.MINI_BATCH_SPLIT_REFUSED if refused else ConfigProblemCode.MINI_BATCH_SPLIT,
                   _mini_batch_words(_CRITIC_UPDATE, where, legacy, source, batch, mini, layout) + on_08)
    for path, engine_size in engine_splits:
        role = _CRITIC_UPDATE if path == CRITIC_ENGINE_MICRO_BATCH_SIZES[0] else _CRITIC_FORWARD
        checks.add(ConfigProblemCode.MINI_BATCH_SPLIT, _mini_batch_words(
            role, _engine_assert_words(role.first), engine_size, f"{dotted(path)} {engine_size}", batch, engine_rows,
            (engine_ranks, trainer_gpus, engine_sp)))


def _check_forward_micro_batch(checks: _ConfigChecks, trainer_gpus: int, sp: int, batch: TrainBatch,
                               version: TrinityVersion | None) -> None:
    """Check, where the release `version` may be Trinity 0.6 and the trainer's dynamic batch sizes are off (on verl
    0.8 or later every role takes them: `sequence_counted_roles`), the micro-batch size per GPU of each log-prob
    forward that runs each step against the rows each GPU takes: Trinity 0.6.0 hands the whole train `batch` to the
    pass (``_compute_old_log_prob``, ``_compute_ref_log_prob``, ``trainer/verl/trainer.py:700-740``), which verl chunks
    over the data-parallel ranks of its role's engine, `trainer_gpus` / its SP (`_role_engine_sp`;
    ``make_nd_compute_dataproto_dispatch_fn``, ``workers/engine_workers.py:634`` in verl 0.8.0, ``:687`` in 0.9.0,
    ``:693`` in 0.9.1; no rollout n: Trinity's batch counts experiences), and its engine's ``infer_batch`` asserts that
    the size as written divides them (`ENGINE_MINI_BATCH_ASSERT_LINES`; ``micro_batch_size_per_gpu`` from
    ``infer_micro_batch_size_per_gpu``, ``:392`` in 0.8.0, ``:404`` in 0.9.0, ``:410`` in 0.9.1). The passes, in the
    order they run: the actor's recompute of the old log-probs, with the rollout's ``log_prob_micro_batch_size_per_gpu``
    (``:564``, ``:617``, ``:623``), where ``algorithm.bypass_old_logprobs`` is false (`BYPASS_OLD_LOGPROBS_KEY`:
    ``trainer/verl/trainer.py:517``; true by default, when none runs); then, where the algorithm uses a ref
    (`ref_forward_runs`), the ref's, with the ref's size (``:532``, ``:576``, ``:582``), or with LoRA on verl 0.8
    (`solver.trinity.config.lora_on_08`, ``ref_in_actor``) the actor's without its adapter, with the rollout's (a
    line of its own only where the recompute, which fails first, does not run). Judged where the size is set (verl 0.8
    refuses it unset, and the ref's deprecated size for the whole batch: said elsewhere) and the ranks divide the
    batch (and the engine's SP the GPUs: else it fails as it starts, `_check_role_engine_sps`). ``mini-batch-split``,
    never refused: verl before 0.8 (Trinity 0.5, and 0.6 on verl 0.7) cuts these forwards
    with ``data.split`` and no assertion, the last micro-batch short (verl 0.7.1 ``workers/actor/dp_actor.py:470``).
    On verl 0.8 the recompute reads the trainer's token budget, as the actor's update does, so it changes no memory
    counted. A trained critic's value forward and update are `_check_critic_mini_batch`'s: Trinity 0.6.0 builds
    the critic's engine from ``critic.fsdp`` (``trainer/verl/trainer.py:363-371``; ``engine = self.fsdp``,
    ``workers/config/critic.py:213`` in verl 0.8.0, ``:217`` in 0.9.0, ``:215`` in 0.9.1) and cuts them by its own
    sizes (`CRITIC_ENGINE_MICRO_BATCH_SIZES`), none of the critic's."""
    if version == "0.5" or batch.size is None or not turned_off(checks.flag(DYNAMIC_BATCH_KEYS[0])):
        return
    from solver.trinity.config import lora_on_08

    passes: list[tuple[_RowsPass, Path, str]] = []  # (pass, its size's key, the role whose engine runs it)
    recompute = turned_off(checks.flag(BYPASS_OLD_LOGPROBS_KEY))
    if recompute or BYPASS_OLD_LOGPROBS_KEY in checks.unreadable:
        passes.append((_OLD_LOG_PROB_FORWARD, ROLE_MICRO_BATCH_SIZES[2], "actor"))
    if ref_forward_runs(checks.value(("algorithm", "algorithm_type")), "0.6"):
        if lora_on_08(checks.value):
            passes.append((_LORA_REF_FORWARD, ROLE_MICRO_BATCH_SIZES[2], "actor"))
        elif checks.absent(DEPRECATED_MICRO_BATCH_SIZES[1]):
            passes.append((_REF_FORWARD, ROLE_MICRO_BATCH_SIZES[1], "ref"))
    said: set[Path] = set()
    unread_split = False  # the recompute, which an unreadable bypass_old_logprobs may run, would fail
    for role, path, engine in passes:
        engine_sp = _role_engine_sp(checks, engine, sp)
        ranks = trainer_gpus // engine_sp
        size = checks.number(path)
        if (path in said or size is None or size < 1 or ranks < 1 or trainer_gpus % engine_sp or batch.size % ranks
                or (batch.size // ranks) % int(size) == 0):  # an SP that leaves GPUs out fails first (role-sp-differs)
            continue
        if role is _OLD_LOG_PROB_FORWARD and not recompute:
            unread_split = True
            continue
        said.add(path)  # the same size on the actor's engine fails at the first of its passes
        checks.add(ConfigProblemCode.MINI_BATCH_SPLIT, _mini_batch_words(
            role, _engine_assert_words(role.first), int(size), f"{dotted(path)} {shown_number(size)}", batch,
            batch.size // ranks, (ranks, trainer_gpus, engine_sp)))
    if unread_split and ROLE_MICRO_BATCH_SIZES[2] not in said:
        checks.unread_deciding.add(BYPASS_OLD_LOGPROBS_KEY)


def forward_unread_keys(mapping: Mapping[str, Any], model: Model, trainer_gpus: int, *,
                        environ: Mapping[str, str] | None = None, version: TrinityVersion | None = None,
                        train_batch_size: int | None = None,
                        train_batch_source: str = TRAIN_BATCH_KEY) -> tuple[str, ...]:
    """The keys of the config (nested `mapping`s, Env read from `environ`) on `trainer_gpus` that cannot be read here
    and decide whether a log-prob forward fails on its rows (`_check_forward_micro_batch`, for the releases of
    `version`, a train batch of `train_batch_size` from `train_batch_source`), dotted: ``algorithm.bypass_old_logprobs``
    where the recompute it turns on would fail and nothing else fails so. Whether the config trains is then unknown
    (`CurrentSettings.unread_keys`)."""
    batch = TrainBatch(train_batch_size, train_batch_source)
    checks = _ConfigChecks(mapping, environ or {}, API_OPTIONS, version)
    sp, _ = _check_sequence_parallel(checks, model, trainer_gpus, version, batch)
    _check_forward_micro_batch(checks, trainer_gpus, sp, batch, version)
    return tuple(dotted(path) for path in sorted(checks.unread_deciding))


class StateGroups(NamedTuple):
    """The GPUs the config's ``fsdp_size`` keys shard the actor's states and the critic's over, on the verl line that
    shards them over the fewest (`fsdp_state_groups`), the ``fsdp-size-hybrid`` lines that say so (`HybridLine`, each
    key's), and the ``fsdp_size`` keys that decide a share but cannot be read here, dotted."""

    actor: int
    critic: int
    lines: tuple[HybridLine, ...]
    unread: tuple[str, ...]


def fsdp_state_groups(mapping: Mapping[str, Any], trainer_gpus: int, *, environ: Mapping[str, str] | None = None,
                      version: TrinityVersion | None = None, option_names: OptionNames = API_OPTIONS) -> StateGroups:
    """The GPUs the actor's states and the critic's are sharded over in the config (nested `mapping`s, Env read from
    `environ`) on `trainer_gpus`, on the verl lines the releases of `version` may run: `trainer_gpus`, unless a hybrid
    ``fsdp_size`` (``fsdp-size-hybrid``: `_check_fsdp_sizes`) shards them over groups of fewer, where a GPU holds them
    as a run on that many GPUs does (``create_device_mesh`` and FSDP's hybrid sharding: the parameters, their
    gradients and the optimizer's states built on them, ``workers/fsdp_workers.py:83-90``, ``:363-377``, ``:418`` in
    verl 0.5.0; ``workers/engine/fsdp/utils.py:40-57`` in 0.8.0); with the lines that say so, worded as
    `option_names` name the options, and the keys that size a device mesh on a verl line the releases may run and
    cannot be read here, whose share of the states is then unknown (`CurrentSettings.unread_keys`). The ref's weights
    stay in host memory (pinned, verl's ``CPUOffload``): its group changes no GPU's memory."""
    checks = _ConfigChecks(mapping, environ or {}, option_names, version)
    _check_fsdp_sizes(checks, trainer_gpus, version)
    actor, critic = (checks.state_groups.get(role, trainer_gpus) for role in ("actor", "critic"))
    return StateGroups(actor, critic, tuple(checks.hybrid_lines),
                       tuple(dotted(path) for path in FSDP_SIZE_KEYS if path in checks.unread_deciding))


def _role_engine_sp(checks: _ConfigChecks, role: str, sp: int) -> int:
    """The SP Trinity 0.6 on verl 0.8 or later runs `role`'s (`ROLES`) FSDP engine at, the trainer's being `sp`: its
    engine's own (`ROLE_ENGINE_SP_KEYS`; below 1 read as 1) where the trainer's is 1, which verl puts over it only
    above 1 (``FSDPActorConfig.__post_init__``, ``workers/config/actor.py:320-321`` in verl 0.8.0, ``:328-329`` in
    0.9.1, the role's own SP being the trainer's, ``FROZEN_KEYS``); else `sp`, and so under a Megatron trainer, which
    drops ``fsdp_config`` (``_strip_incompatible_engine_keys``, ``trainer/verl/config.py:753`` in 0.6.0)."""
    own = checks.number(ROLE_ENGINE_SP_KEYS[ROLES.index(role)])
    return max(1, int(own)) if sp == 1 and own is not None and not _megatron_trainer(checks) else sp


class _RowsPass(NamedTuple):
    """A pass that verl cuts into micro-batches of a number of rows (`_mini_batch_words`): its name in words (`name`),
    when verl 0.8's engine asserts the size divides its rows (`first`), and what those rows are per GPU (`rows`)."""

    name: str
    first: str
    rows: str


_ACTOR_UPDATE = _RowsPass("the actor's update", "the actor's first update", "its mini-batch per GPU")
_REF_FORWARD = _RowsPass("the ref's forward", "the ref's first forward", "the rows each GPU takes")
_CRITIC_UPDATE = _RowsPass("the critic's update", "the critic's first update", "its mini-batch per GPU")
_CRITIC_FORWARD = _RowsPass("the critic's value forward", "its first value forward", "the rows each GPU takes")
_OLD_LOG_PROB_FORWARD = _RowsPass("the actor's recompute of the old log-probs (algorithm.bypass_old_logprobs false)",
                                  "that recompute's first step", "the rows each GPU takes")
_LORA_REF_FORWARD = _RowsPass("the actor's forward for the ref's log-probs (LoRA, model.lora_configs)",
                              "that forward's first step", "the rows each GPU takes")


def _engine_assert_words(first: str, doubles: str = "") -> str:
    """Who asserts, at `first` (a pass's first step), that a pass's micro-batch divides its rows on verl 0.8 or later,
    in words (`ENGINE_MINI_BATCH_ASSERT_LINES`), with `doubles` said of Trinity (DPO's ", which doubles nothing,")."""
    return f"Trinity 0.6 on verl 0.8 or later{doubles} asserts at {first} ({ENGINE_MINI_BATCH_ASSERT_LINES})"


def _mini_batch_words(role: _RowsPass, where: str, micro: int, source: str, batch: TrainBatch, rows: int,
                      layout: tuple[int, int, int], dpo: bool = False) -> str:
    """The words of a ``mini-batch-split`` line (``dpo-mini-batch-split`` for `dpo`): `where` asserts that `role`'s
    micro-batch per GPU, `micro` sequences (from `source`), divides its rows per GPU, `rows`, the train `batch` over
    the ranks of `layout` (ranks, trainer GPUs, SP); what to set, with the nearest batch that does
    (`nearest_dividing_batches`)."""
    ranks, trainer_gpus, sp = layout
    nearest = " or ".join(map(str, nearest_dividing_batches(batch.size or 0, ranks * micro)))
    return (f"{'DPO with d' if dpo else 'D'}ynamic batch sizes off in {role.name}: {where} that its micro-batch "
            f"per GPU, {micro} sequences ({source}), divides {role.rows}, {batch.source} {batch.size} over "
            f"the {ranks} data-parallel ranks (trainer GPUs {trainer_gpus} / SP {sp}) = {rows}, which it does not: "
            f"the trainer fails there; make {batch.source} a multiple of {ranks * micro} ({ranks} ranks x {micro}; the "
            f"nearest to {batch.size}: {nearest})")


def _fails_on_every_verl(checks: _ConfigChecks, path: Path, paths: Iterable[tuple[str, ...]],
                         version: TrinityVersion | None) -> str | None:
    """Where the micro-batch size at `path`, left without a value, fails with every release `version` may be, the words
    to add to its line on what fails on verl 0.8 or later ("" where its own words say it all); None where some verl
    runs it. Only the critic's value forward can: it fails on verl before 0.8 (`_unset_micro_batch_words`), which is
    Trinity 0.5's, and else where the config leaves verl 0.8 or later none of another of `paths`
    (`MICRO_BATCH_UNSET_ON_08`), or none of the critic's engine's sizes (`_critic_engine_unsized`)."""
    if path != CRITIC_MICRO_BATCH_SIZES[1]:
        return None
    if version == "0.5":
        return ""
    if any(other in MICRO_BATCH_UNSET_ON_08 and checks.absent(other) for other in paths):
        return "; verl 0.8 or later refuses the sizes above left without one, so the config runs on no verl"
    if _critic_engine_unsized(checks, version):
        return f"; {_ENGINE_UNSIZED_WORDS}, so the config runs on no verl"
    return None


_ENGINE_UNSIZED_WORDS = "on verl 0.8 or later the critic's engine has no micro-batch size to cut its passes by (below)"
"""What a line on a failure before verl 0.8 says of the critic's engine left without its sizes
(`_critic_engine_unsized`), which fails the critic on verl 0.8 or later too."""
_ENGINE_SPLITS_WORDS = "on verl 0.8 or later its engine's micro-batch fails the critic too (below)"
"""`_ENGINE_UNSIZED_WORDS` of an engine size that does not divide its rows (`_check_critic_mini_batch`)."""


def _null_micro_batch_words(version: TrinityVersion | None) -> str:
    """What a null micro-batch size of `MICRO_BATCH_SIZES_TYPED_INT` comes to with dynamic batch sizes off on the
    releases `version` may be, in words: each refuses it."""
    in_05 = "Trinity 0.5's typed config refuses it as it loads the config (OmegaConf's int field)"
    in_06 = ("Trinity 0.6 fails on it as the trainer starts: with verl before 0.8 its typed config refuses it, and "
             "verl 0.8 or later, left with none, refuses dynamic batch sizes off")
    return {"0.5": in_05, "0.6": in_06}.get(version or "", f"{in_05}; {in_06}")


def _unset_micro_batch_words(path: Path, version: TrinityVersion | None) -> str:
    """What a micro-batch size at `path` left unset comes to with dynamic batch sizes off (`MICRO_BATCH_UNSET_ON_08`)
    on the releases `version` may be, in words; "" where each gives it 1."""
    if path in MICRO_BATCH_UNSET_ON_08:
        return "" if version == "0.5" else (
            "Trinity 0.6 on verl 0.8 or later hands verl none, which then refuses dynamic batch sizes off as the "
            "trainer starts")
    gives = "gives" if version else "give"
    return (f"{legacy_releases_listed(version)} {gives} the critic's value forward none, by which verl cannot split a "
            "batch, so it fails")


def _check_gradient_checkpointing(checks: _ConfigChecks, version: TrinityVersion | None) -> None:
    """Check that gradient checkpointing (`GRADIENT_CHECKPOINTING_KEY`), which the tables measured, is on."""
    _check_flag_on(checks, GRADIENT_CHECKPOINTING_KEY, ConfigProblemCode.GRADIENT_CHECKPOINTING_OFF, (
        "the tables measured with gradient checkpointing, Trinity's default, and the verdict and the plans assume it; "
        "without it each layer keeps its activations for the backward, many times the memory: set it to true"), version)


def _check_remove_padding(checks: _ConfigChecks, model: Model, version: TrinityVersion | None) -> None:
    """Check that remove padding (`REMOVE_PADDING_KEYS`; with `version` 0.5 verl's only: Trinity 0.6's is a key 0.5
    refuses, `_check_trainer_level_flags`), which the tables measured, is on; off for a `model` it would train wrong
    (`remove_padding_violation`), and there the critic's own too (`CRITIC_REMOVE_PADDING_KEY`) where the algorithm
    trains one of that model and the release may be 0.5, which reads it."""
    keys = REMOVE_PADDING_KEYS[1:] if version == "0.5" else REMOVE_PADDING_KEYS
    if (violation := remove_padding_violation(model, version)) is not None:
        critic = (version != "0.6" and trains_critic(checks.value(("algorithm", "algorithm_type")))
                  and not critic_of_another_model(checks.value))
        _check_flags_on(checks, (*keys, *((CRITIC_REMOVE_PADDING_KEY,) if critic else ())),
                        ConfigProblemCode.REMOVE_PADDING_ON, f"{violation}: set it to false", version, on=False)
        return
    _check_flags_on(checks, keys, ConfigProblemCode.REMOVE_PADDING_OFF, (
        "the tables measured with remove padding, Trinity's default, and the verdict and the plans assume it; without "
        "it each micro-batch is padded to its longest sequence, and verl splits no sequence over Ulysses SP: set it to "
        "true"), version)


def _check_trainer_level_flags(checks: _ConfigChecks, version: TrinityVersion | None) -> frozenset[Path]:
    """Check that a config for Trinity 0.5 has none of Trinity 0.6's keys under ``trainer`` itself that 0.5's
    ``TrainerConfig`` lacks (`keys_05_refuses`): its offload flags, and the rest. Return their paths, which
    `_check_no_such_keys` leaves to these lines."""
    present = keys_05_refuses(checks.value(("trainer",))) if version == "0.5" else ()
    offload = [f"trainer.{key}" for key in present if key in OFFLOAD_FLAGS]
    others = [f"trainer.{key}" for key in present if key not in OFFLOAD_FLAGS]
    if offload:
        checks.add(ConfigProblemCode.TRAINER_OFFLOAD_KEYS_REFUSED, (
            f"{_refused_keys_words(offload)} and set the roles' fsdp_config flags"
            + checks.names.write_does(after="the verdict reads the roles', as 0.5 would")))
    if others:
        padding = ".".join(REMOVE_PADDING_KEYS[1])
        checks.add(ConfigProblemCode.TRAINER_KEYS_REFUSED, _refused_keys_words(others) + (
            checks.names.write_does(after=f"0.5 takes remove padding from {padding}, on by default")
            if ".".join(REMOVE_PADDING_KEYS[0]) in others else checks.names.write_does()))
    return frozenset(("trainer", key) for key in present)


def _check_keys_05_lacks(checks: _ConfigChecks, version: TrinityVersion | None) -> frozenset[Path]:
    """Check that a config for Trinity 0.5 has none of the keys rft-solver reads that every 0.5 release lacks
    (`KEYS_05_LACKS`; each ``explorer.auxiliary_models`` entry's `ENGINE_KEYS_05_LACKS` too), in any value, null too
    (refused); and say `EXTERNAL_MODEL`, which 0.5.0 and 0.5.1 lack but 0.5.2 has, where it holds a value (a null is
    refused by every release, `typed-null-refused`). Return the paths of those keys the config has (said here, or
    by `typed-null-refused`), which `_check_no_such_keys` leaves to these lines."""
    if version != "0.5":
        return frozenset()
    auxiliary = checks.value(AUXILIARY_MODELS)
    entries = enumerate(auxiliary if isinstance(auxiliary, list) else [])
    written = [*(((path, checks.value(path[:-1])), lacking) for path, lacking in KEYS_05_LACKS.items()),
               *((((*AUXILIARY_MODELS, index, key), entry), KEYS_05_LACKS[ROLLOUT_MODEL + (key,)])
                 for index, entry in entries for key in ENGINE_KEYS_05_LACKS)]
    said: set[Path] = set()
    for (path, section), lacking in written:
        if isinstance(section, Mapping) and path[-1] in section:
            said.add(path)
            left = f" ({checks.names.write} leaves it to you; {lacking.instead})" if lacking.instead else ""
            checks.add(ConfigProblemCode.UNKNOWN_KEY_REFUSED,
                       f"{keys_05_refuses_words([dotted(path)], lacking)}: remove it{left}")
    model = checks.value(EXTERNAL_MODEL[:-1])
    if isinstance(model, Mapping) and EXTERNAL_MODEL[-1] in model:
        said.add(EXTERNAL_MODEL)
    if isinstance(model, Mapping) and model.get(EXTERNAL_MODEL[-1]) is not None:
        checks.add(ConfigProblemCode.UNKNOWN_KEY, (
            f"{'.'.join(EXTERNAL_MODEL)}: a key of Trinity 0.5.2's model, which 0.5.0 and 0.5.1 refuse (their "
            "ModelConfig has no such key), so they do not load the config: with those, remove it "
            f"({checks.names.write} leaves it to you)"))
    return frozenset(said)


def _refused_keys_words(keys: list[str]) -> str:
    """The words saying that Trinity 0.5 refuses `keys` (under ``trainer``, Trinity 0.6's), up to "remove them"."""
    return f"{keys_05_refuses_words(keys)}: remove {it_or_them(len(keys))}"


def _check_offload_strategy(checks: _ConfigChecks, version: TrinityVersion | None, actor_noted: bool) -> None:
    """Check that an ``offload_policy`` that is on (the trainer's, or a role's; with `actor_noted`, not the
    trainer's or the actor's) has the trainer strategy fsdp2."""
    given = checks.value(("trainer", "trainer_strategy"))
    strategy = trainer_strategy(given, checks.mapping, version)
    got = yaml_brief(given) if given else f"none ({unset_strategy_words(version)})"
    noted = (("trainer", "offload_policy"), offload_path("actor", "offload_policy")) if actor_noted else ()
    for policy in [("trainer", "offload_policy"), *(offload_path(role, "offload_policy") for role in ROLES)]:
        if policy in noted:
            continue
        if omegaconf_boolean(checks.flag(policy)) and strategy != "fsdp2":  # on as OmegaConf reads a boolean
            checks.add(ConfigProblemCode.OFFLOAD_NEEDS_FSDP2,
                       f"{'.'.join(policy)} needs trainer.trainer_strategy fsdp2, got {got}")


def _check_no_config_path(checks: _ConfigChecks, version: TrinityVersion | None) -> None:
    """Check that the config has no deprecated ``trainer.trainer_config_path``: with `version` 0.5 and an empty
    ``trainer.trainer_config`` (absent, null or ``{}``), Trinity refuses the config (0.5.2's config_validator.py raises
    where ``trainer_config`` is falsy and the path is set); 0.6 does so on verl before 0.8 only, which the config does
    not say, and never reads the path otherwise."""
    if value_at(checks.mapping, ("trainer", "trainer_config_path")) is None:
        return
    if version == "0.5" and not value_at(checks.mapping, ("trainer", "trainer_config")):
        checks.add(ConfigProblemCode.CONFIG_PATH_REFUSED, (
            "trainer.trainer_config_path is deprecated, and trainer.trainer_config is empty: Trinity 0.5 refuses the "
            "config; move its settings under trainer.trainer_config"))
    else:
        checks.add(ConfigProblemCode.DEPRECATED_CONFIG_PATH, (
            "trainer.trainer_config_path is deprecated: Trinity refuses it where trainer.trainer_config is empty (0.5, "
            "and 0.6 on verl before 0.8) and otherwise never reads it; move its settings under trainer.trainer_config"))


def _check_lora_targets(checks: _ConfigChecks, model: Model) -> None:
    """Check the ``target_modules`` regex (less its ``exclude_modules``) of the LoRA adapter Trinity makes anew from the
    config (`new_adapter`) on `model`'s module names (`new_adapter_problem`). A list, a mapping, a rank that is no whole
    number and a regex that does not compile are the config reading's refusals (``solver.trinity.config``)."""
    if checks.value(LORA_CONFIGS) is None and (checks.version != "0.5" or checks.absent(VERL_LORA_RANK)):
        return  # no adapter: a plan's own settings, checked on every answer, load no config reader
    from solver.trinity.config import new_adapter

    adapter = new_adapter(checks.value, checks.version)
    problem = new_adapter_problem(adapter, model, checks.experts)
    if problem is not None:
        checks.add(problem.code, problem.words)
    if adapter is not None and (problem is None or problem.code is ConfigProblemCode.LORA_TARGETS_ONE_TRANSFORMERS):
        _check_excluded_adapted(checks, model, adapter)


def _check_excluded_adapted(checks: _ConfigChecks, model: Model, adapter: NewAdapter) -> None:
    """Caution where the new LoRA adapter's (`adapter`'s) ``exclude_modules`` regex matches a mixture of experts'
    router or routed experts, which its ``target_modules`` regex (or ``all-linear``) adapts all the same on
    transformers 5 (`ConfigProblemCode.LORA_EXCLUDED_ADAPTED`, `excluded_adapted_words`): a ``but:`` line, since the
    run trains, on more than the exclusion's words say (and rft-solver counts it so). Not under a release on
    transformers 4 alone (`checks`' experts ``separate``, 0.5.1's), where PEFT converts nothing and excludes them, nor
    where PEFT refuses the targets on transformers 5's names (said as such), nor where a regex does not compile (the
    config reading's refusal)."""
    pattern, excluded = ALL_LINEAR if adapter.targets is None else adapter.targets, adapter.excluded
    if excluded is None:
        return
    try:
        words = excluded_adapted_words(f"{dotted((*adapter.section, 'exclude_modules'))} '{excluded}'", pattern,
                                       excluded, model, checks.version, checks.experts)
    except re.error:  # refused as such
        return
    if words is not None:
        checks.add(ConfigProblemCode.LORA_EXCLUDED_ADAPTED, words)


def new_adapter_problem(adapter: NewAdapter | None, model: Model, experts: ExpertLayout) -> ConfigProblem | None:
    """What rft-solver says of the LoRA adapter a config makes anew (`adapter`, `new_adapter`; None: none) on `model`'s
    module names, its routed experts held as `experts`: `lora_targets_problem`'s refusal or caution, naming its keys
    where the config has them; None where PEFT takes it, and where a regex does not compile (the config reading's
    refusal, whatever the model). The rule behind ``--check``'s line, the plans' rank (`config_counted_on`) and
    ``--write``'s (`new_adapter_refused`)."""
    if adapter is None:
        return None
    try:
        return lora_targets_problem(adapter.targets, adapter.excluded, model, experts, adapter.section)
    except re.error:  # refused as such
        return None


def new_adapter_refused(adapter: NewAdapter | None, model: Model, experts: ExpertLayout) -> bool:
    """Whether Trinity fails as it makes the LoRA adapter `adapter` (`new_adapter`) on `model`'s module names:
    `new_adapter_problem` refuses it (`ConfigProblemCode.LORA_CONFIGS_REFUSED`; a caution does not)."""
    problem = new_adapter_problem(adapter, model, experts)
    return problem is not None and problem.code is ConfigProblemCode.LORA_CONFIGS_REFUSED


def lora_targets_problem(targets: str | None, excluded: str | None, model: Model, experts: ExpertLayout = "fused",
                         section: Path = (*LORA_CONFIGS, 0)) -> ConfigProblem | None:
    """Whether PEFT fails on the ``target_modules`` regex `targets` (None: ``all-linear``) less the ``exclude_modules``
    regex `excluded` as Trinity makes a new adapter for `model` under a release that holds its routed experts as
    `experts` (`peft_target_refusal` on `Model.peft_names_of` that layout: transformers 5's names where ``fused``,
    transformers 4's where ``separate``, 0.5.1's; where ``either``, on each: it matches no module, a
    fused expert's half alone, or a module PEFT cannot adapt; or `excluded` leaves out every
    module it matches, "All modules were excluded" or "No modules were targeted for adaptation",
    ``tuners/tuners_utils.py:1051`` to ``:1086`` in peft 0.21.2), and what rft-solver says of it: the refusal
    (`ConfigProblemCode.LORA_CONFIGS_REFUSED`) on a model type whose names it has read, naming the type and its names
    (each layout's where they differ); a caution (`ConfigProblemCode.LORA_TARGETS_ASSUMED`) where they are assumed (a
    ``model_type`` ``solver.tables.peft_names`` does not hold), since rft-solver cannot know that PEFT fails; where
    ``either`` and one transformers' names alone take it (Mixtral's ``.*\\.w1``, 4's alone), a caution naming which
    (`ConfigProblemCode.LORA_TARGETS_ONE_TRANSFORMERS`), since the run fails on the other. None where PEFT takes it;
    `re.error` where either is no regular expression."""
    pattern = ALL_LINEAR if targets is None else targets  # "" is a regex PEFT fails on, not all-linear
    held = {layout: model.peft_names_of(layout) for layout in LAYOUTS_TAKEN[experts]}
    refusals = {names: peft_target_refusal(pattern, excluded, names) or (
        None if model.adapted_layers(names, LoraTargets(pattern, excluded)) else MATCHES_NO_MODULE)
        for names in held.values()}  # matching a module of the layers the model lacks alone (layers 40 of 36): none
    taken = [layout for layout, names in held.items() if refusals[names] is None]
    if taken and len(taken) < len(held):
        return _one_transformers_caution(pattern, excluded, model, held, refusals, taken[0], section)
    if taken:
        return None
    names = next((names for names in refusals  # where the regex alone matches, for exclude_modules' words
                  if peft_target_match(pattern, None, names) != NO_MATCH), next(iter(refusals)))
    subject, why, fix = _refusal_words(pattern, excluded, names, refusals[names] or "", section, partial(
        model.module_layers, names=names))
    shown = {layout: shown_module_names(each) for layout, each in held.items()}
    fused = shown_module_names(model.peft_names)
    names_shown = fused if set(shown.values()) == {fused} else "; ".join(
        f"transformers {TRANSFORMERS_OF[layout]}'s: {each}" for layout, each in shown.items())
    if names.assumed:
        what = model.unchecked_layout or f"model_type {model.model_type}"
        return ConfigProblem(ConfigProblemCode.LORA_TARGETS_ASSUMED, (
            f"{subject}, on {model.name} ({model_kind_words(model)}, {what}, whose module names rft-solver has not "
            f"read), {why} among {names.model_type}'s names, which it assumes ({names_shown}): peft fails as Trinity "
            "makes the adapter where they are the model's; check the regular expression against the model's own "
            "module names (model.named_modules())"))
    if fix == TARGETS_FIX and len(held) == 1:
        fix = _other_transformers_fix(pattern, excluded, model, next(iter(held))) or fix
    return ConfigProblem(ConfigProblemCode.LORA_CONFIGS_REFUSED, (
        f"{subject}, on {model.name} ({model_kind_words(model)}{model_type_words(model)}), {why}: peft matches it "
        f"whole (re.fullmatch) against each module's full name ({names_shown}), and Trinity fails as it makes the "
        f"adapter: {fix}"))


def config_counted_on(config: TrinityConfig, model: Model, experts: ExpertLayout) -> TrinityConfig:
    """`config` as its verdict and plans count it on `model`, its routed experts held as `experts`: with no LoRA
    adapter (rank 0, full fine-tuning's states; no targets) where PEFT refuses, on `model`'s module names, the targets
    the reading counts the adapter on (`counted_adapter`; `new_adapter_refused`, whose refusal `_check_lora_targets`
    says), since Trinity then fails as it makes the adapter: the reading alone assumes the first model type's names
    that PEFT takes (``.*\\.mlp\\.gate``, a Qwen3-MoE's router, on a dense Qwen3 matches no module;
    ``exclude_modules`` ``.*`` leaves none); else `config`."""
    from solver.trinity.config import counted_adapter  # the config reader: only a config's own query pays for it

    if not new_adapter_refused(counted_adapter(config), model, experts):
        return config
    return config.model_copy(update={"lora_rank": 0, "lora_targets": None})


def _other_transformers_fix(pattern: str, excluded: str | None, model: Model, held: HeldExperts) -> str | None:
    """What to do where the ``target_modules`` regex `pattern` less `excluded`, which PEFT refuses on `model`'s names as
    the release's transformers holds the routed experts (`held`), is taken on the other transformers' (an experts-only
    regex of transformers 4's names under transformers 5): the regex that adapts the same modules here
    (`same_modules_regex`), or, where none does, the transformers that takes it and what pins it; None where the
    other's names are the same or refuse it too."""
    other = other_layout(held)
    names, other_names = model.peft_names_of(held), model.peft_names_of(other)
    if other_names == names or peft_target_refusal(pattern, excluded, other_names) is not None:
        return None
    version = TRANSFORMERS_OF[other]
    same = same_modules_regex(pattern, excluded, other_names, names)
    if same is not None:
        return f"give {same}, which adapts here the modules it names on transformers {version}'s names"
    return (f"it names modules of transformers {version}'s names that no regular expression adapts here: run it with "
            f"transformers {version} ({PINNED_BY[version]})")


def _refusal_words(pattern: str, excluded: str | None, names: PeftModuleNames, why: str,
                   section: Path, layers: ModuleLayers) -> tuple[str, str, str]:
    """The key PEFT fails on for the ``target_modules`` regex `pattern` less `excluded` on `names` (`why`:
    `peft_target_refusal`'s words; the keys at `section`), why, and what to do, as `lora_targets_problem` words them:
    ``exclude_modules`` where it leaves out every module the regex alone matches in the layers that hold them
    (`layers`: ``Model.module_layers``), or where PEFT takes the regex alone (all-linear less ``.*\\.up_proj`` on
    Qwen3-MoE under transformers 5: the routed experts' gate_proj without their up_proj)."""
    targets = f"target_modules '{pattern}'"
    all_excluded = None if excluded is None else every_target_excluded(pattern, excluded, names, targets, layers)
    if all_excluded is not None:
        return dotted((*section, "exclude_modules")) + f" '{excluded}'", all_excluded, EXCLUDE_FEWER
    if excluded is not None and peft_target_refusal(pattern, None, names) is None:
        return (dotted((*section, "exclude_modules")) + f" '{excluded}'",
                f"leaves what {targets} adapts so that it {why}", EXCLUDE_FEWER)
    return dotted((*section, "target_modules")) + f" '{pattern}'", why, TARGETS_FIX


def _one_transformers_caution(pattern: str, excluded: str | None, model: Model,
                              held: dict[HeldExperts, PeftModuleNames], refusals: dict[PeftModuleNames, str | None],
                              taken: HeldExperts, section: Path) -> ConfigProblem:
    """`lora_targets_problem`'s caution (`ConfigProblemCode.LORA_TARGETS_ONE_TRANSFORMERS`) under a release that takes
    transformers 4 or 5 (0.5.0, 0.5.2) where `held`'s names of the layout `taken` alone take the regex: PEFT fails on
    the other's (`refusals`) where the run has that transformers; what to do: the regex that adapts the same modules on
    both transformers' names (`same_modules_regex`), or, where none does, that none does (not a regex that adapts
    other modules), or, for an ``exclude_modules`` that leaves out every module, to exclude fewer; the keys at
    `section` named."""
    names = held[other_layout(taken)]
    subject, why, fix = _refusal_words(pattern, excluded, names, refusals[names] or "", section, partial(
        model.module_layers, names=names))
    return ConfigProblem(ConfigProblemCode.LORA_TARGETS_ONE_TRANSFORMERS,
                         one_transformers_words(subject, why, fix, pattern, excluded, model, taken))


def _check_moe_lora_saved(checks: _ConfigChecks, model: Model) -> None:
    """Caution on LoRA (the one LoRA config, a new adapter that PEFT takes or one loaded from its ``path``) on a mixture
    of experts (`ConfigProblemCode.LORA_MOE_CONFIG_UNSAVED`, where `lora_moe_unsaved_words` cautions: not under 0.5.1,
    `checks`' experts separate): with transformers 5 (the releases of `checks`' version
    that run on it: `transformers_5_words`) PEFT converts the config of the model types it knows the fused experts of
    (`MoE.peft_converts_experts`: Qwen3-MoE's, Mixtral's, DeepSeek's, not Qwen2-MoE's), and leaves its
    ``target_parameters`` a Python set (``_convert_peft_config_moe``, ``utils/transformers_weight_conversion.py:437`` to
    ``:481`` in peft 0.21.2; ``target_modules`` a set of module names too, so that no regex is saved split:
    `converted_target_names`, which the caution names). Trinity's ``_save_lora`` turns ``target_modules`` alone into a
    list and ``json.dump``s the config, which raises on the set part-way through ``adapter_config.json`` and is caught
    and only logged (``trainer/verl/workers.py:174`` to ``:216``
    in 0.6.0; ``trainer/verl_legacy/fsdp_workers.py:1095`` to ``:1112`` alike), so each checkpoint's adapter config is
    cut short at ``"target_parameters":``; vLLM reads it with ``json.load`` (``lora/peft_helper.py:108`` to ``:109`` in
    vLLM 0.19.1) as the explorer reloads the adapter at each weight sync (``common/models/vllm_model.py:570`` to
    ``:581``), and PEFT as it loads it. Checked with a tiny random Qwen3-MoE on CPU (docs/trinity.md). Its ways out
    are the plan's caution's: under 0.5 transformers 4 first (`transformers_4_way_out`). Under 0.6, which requires
    transformers 5 (no release-level way around it), the config is refused
    (`ConfigProblemCode.LORA_MOE_CONFIG_UNSAVED_REFUSED`) unless its mode is train, whose run no explorer reloads the
    adapter in."""
    configs = checks.value(LORA_CONFIGS)
    if (lora_moe_unsaved_words(model, checks.version, checks.experts) is None or not isinstance(configs, list)
            or len(configs) != 1 or not isinstance(configs[0], Mapping)):
        return
    targets, excluded, rank, path = (checks.value((*LORA_CONFIGS, 0, key))
                                     for key in ("target_modules", "exclude_modules", "lora_rank", "path"))
    whole_rank = omegaconf_integer(rank)
    if rank is not None and (whole_rank is None or whole_rank < 1):
        return  # no LoRA, or refused as such
    made, names, parameters = "", model.peft_names, "for the routed experts"
    if path is None and not all_linear(targets):
        excluded = excluded if isinstance(excluded, str) else None
        try:
            if not isinstance(targets, str) or peft_target_refusal(targets, excluded, names) is not None:
                return  # refused, or cautioned on, as such
        except re.error:
            return
        converted = converted_target_names(targets, excluded, names)
        made = (f"; peft made that set of '{targets}': {', '.join(converted)}, "
                "which it adapts in every layer, whatever layers the regular expression names")
        if routed_target_names(names).isdisjoint(converted):
            parameters = "(an empty one here: its target_modules name neither the router nor a routed expert)"
    # Trinity 0.6 runs on transformers 5 alone: where its explorer syncs the adapter (every mode but train), no release
    # of it gets past the first weight sync, so the config is refused; elsewhere (0.5 on transformers 4, a later load
    # in mode train) it is a caution.
    refused = checks.version == "0.6" and checks.value(("mode",)) != "train"
    checks.add(ConfigProblemCode.LORA_MOE_CONFIG_UNSAVED_REFUSED if refused
               else ConfigProblemCode.LORA_MOE_CONFIG_UNSAVED, (
        f"{dotted(LORA_CONFIGS)} trains LoRA on {model.name}, a mixture of experts: "
        f"{transformers_5_words(checks.version)} peft 0.21.2 makes the adapter's target_parameters a set {parameters}, "
        "which Trinity's _save_lora cannot write as JSON; it logs the error and leaves each "
        "checkpoint's lora_adapter/adapter_config.json cut short at \"target_parameters\": (its target_modules, a "
        f"set of module names by then, are not saved split{made}), so the explorer's vLLM fails to reload the adapter "
        "at the first weight sync (json.load), and so does any later load of it: "
        f"{transformers_4_way_out(checks.version)}train {model.name} without LoRA (drop {dotted(LORA_CONFIGS)}), "
        "or patch Trinity's _save_lora to write target_parameters as a list before the run"))


def _check_whole_nodes(checks: _ConfigChecks, trainer_gpus: int) -> None:
    """Check ``cluster.gpu_per_node`` (where given) and that `trainer_gpus` wider than a node take whole nodes."""
    per_node = checks.number(NODE_SIZE_PATH)
    if per_node is not None and per_node < 1:
        checks.add(ConfigProblemCode.VALUE_OUT_OF_RANGE,
                   f"{NODE_SIZE_KEY} must be a whole number of at least 1, got {shown_number(per_node)}")
    elif per_node is not None and (spread := whole_nodes_violation(trainer_gpus, int(per_node), NODE_SIZE_KEY)):
        checks.add(ConfigProblemCode.WHOLE_NODES, spread)


def check_trinity_config(
    mapping: Mapping[str, Any], model: Model, trainer_gpus: int, *, environ: Mapping[str, str] | None = None,
    version: TrinityVersion | None = None, strategy_noted: bool = False, train_batch_size: int | None = None,
    train_batch_source: str = TRAIN_BATCH_KEY, max_model_len: int | str | None = None, length_from_option: bool = False,
    option_names: OptionNames = API_OPTIONS, experts: ExpertLayout = "fused", batch_divisor: BatchDivisor | None = None,
) -> list[str]:
    """Trinity's (and verl's) own rules on a config given as nested mappings; the problems' words, [] if none
    (`trinity_config_problems` gives each with its code)."""
    return [problem.words for problem in trinity_config_problems(
        mapping, model, trainer_gpus, environ=environ, version=version, strategy_noted=strategy_noted,
        train_batch_size=train_batch_size, train_batch_source=train_batch_source, max_model_len=max_model_len,
        length_from_option=length_from_option, option_names=option_names, experts=experts,
        batch_divisor=batch_divisor)]


def trinity_config_problems(
    mapping: Mapping[str, Any], model: Model, trainer_gpus: int, *, environ: Mapping[str, str] | None = None,
    version: TrinityVersion | None = None, strategy_noted: bool = False, train_batch_size: int | None = None,
    train_batch_source: str = TRAIN_BATCH_KEY, max_model_len: int | str | None = None, length_from_option: bool = False,
    option_names: OptionNames = API_OPTIONS, experts: ExpertLayout = "fused", batch_divisor: BatchDivisor | None = None,
    catalog: Catalog | None = None,
) -> list[ConfigProblem]:
    """Trinity's (and verl's) own rules on a config given as nested mappings; the problems, each a `ConfigProblem`
    (its `ConfigProblemCode` and its words, which `check_trinity_config` gives alone), [] if none.

    Checks: SP (the trainer's; with `version` 0.5, the actor's own where set, as Trinity 0.5 takes it) divides
    the trainer GPUs and the model's attention heads, and SP and the KV heads divide one another (with `version` 0.5,
    the ref's and the critic's SP too, each its own else the trainer's, where that is another key: `OWN_SP_ROLES`,
    whose data-parallel ranks, trainer GPUs / its SP, must also divide `train_batch_size` where given, which came
    from `train_batch_source`);
    ``max_token_len_per_gpu * sp >= max_model_len`` (a micro-batch holds the longest sequence, verl's
    ``rearrange_micro_batches``) when ``max_token_len_per_gpu`` is set (likewise the actor's and the critic's
    ``ppo_max_token_len_per_gpu``, the ref's and the rollout's ``log_prob_max_token_len_per_gpu`` when set by hand, as
    they override it: `ROLE_BUDGET_KEYS`; with `version` 0.5, the ref's and the critic's at their own SP, each its own
    budget else the trainer's, which it takes);
    ``max_prompt_tokens + max_response_tokens <= max_model_len`` when both are set; beyond the native
    context of a model without a RoPE scaling of its own, ``model.rope_scaling`` is YaRN with
    ``factor == max_model_len / native`` and ``original_max_position_embeddings == native``;
    the rollout model's own ``rope_scaling`` is ``model``'s, and its own ``max_model_len`` holds the prompt and
    response it asks for (`_check_rollout_model`); where it sets either, the length it takes is within what its vLLM
    derives from the RoPE scaling it takes (`_check_rollout_length_refused`);
    ``offload_policy`` (the trainer's, Trinity 0.6's, or a role's ``fsdp_config``) needs ``trainer_strategy:
    fsdp2``; dynamic batch sizes and gradient checkpointing stay on, and their flags and the keys rft-solver reads
    are spelt as Trinity takes them (`UNCHECKED_SECTION` says which releases refuse them); no deprecated
    ``trainer.trainer_config_path``; a trainer wider than a node uses whole nodes (when ``cluster.gpu_per_node`` is
    given).

    The length checked is `max_model_len` where given (a verdict's own: ``--len``, or prompt + response where the
    config leaves it unset), else the config's ``model.max_model_len``: given so, the key stays as the config has it,
    and a key misspelt for it is still named. With `length_from_option`, `max_model_len` is the caller's option's
    (``--len``, another than the config's own), and the words name it so (``--len's 16384``, not
    ``model.max_model_len 16384``; ``plan for 131072 tokens or fewer (--len 131072)``, not ``lower max_model_len to
    131072``).

    Interpolated values are resolved from `environ` (default: none set, so defaults apply); one that
    cannot be resolved, or is not a number, is reported as a problem. `strategy_noted` leaves out the
    ``offload_policy`` rule for the trainer's and the actor's, for a caller whose notes on the config say it
    (`TrinityConfig.notes` on the actor's offload flags, or Trinity 0.6's under ``trainer``); other roles' still
    get it.

    A ``mode`` Trinity lacks (a typo, or no text: its validator refuses it) raises `ConfigError`, in the words
    ``read_trinity_config`` refuses it with (`check_mode`).

    `option_names` names the caller's options in the problems' words: the API's keywords by default
    (`solver.rules.API_OPTIONS`: ``(solver.trinity.patch_trinity_config does)``, ``(max_model_len=4096)``),
    `COMMAND_OPTIONS` for the command's flags (``(--write does)``, ``(--len 4096)``), as it passes them.

    `experts`: how the release holds a mixture of experts' routed experts (`solver.tables.counted_expert_layout`):
    under ``separate`` (0.5.1's transformers 4) PEFT converts no LoRA config, and ``lora-moe-config-unsaved`` is not
    said.

    `batch_divisor`: what must divide the train batch for the release (`solver.tables.counted_batch_divisor` of it;
    None: of `version`): with ``unsure`` (0.5), a batch the trainer GPUs do not divide, though its data-parallel ranks
    do, gets ``batch-divides-trainer-gpus`` (0.5.0 and 0.5.1 refuse it, 0.5.2 takes it); with ``ranks`` (0.5.2, 0.6)
    or ``gpus`` (0.5.0, 0.5.1, whose verdict says the batch breaks that rule) it is not said.

    `catalog`: the catalogue the run was given, whose model a critic of another model (``model.critic_model_path``)
    is named by, with its heads (None: the shipped catalogue).
    """
    asked_len: int | None = asked_length(max_model_len)  # "64k" as plan's
    check_types(("mapping", mapping, Mapping), ("model", model, Model), ("trainer_gpus", trainer_gpus, int),
                ("train_batch_size", train_batch_size, int | None), ("max_model_len", asked_len, int | None),
                ("option_names", option_names, OptionNames), ("catalog", catalog, Catalog | None))
    check_environ(environ)
    check_trinity_version("version", version, counts_taken=True)
    experts = chosen("experts", experts, get_args(ExpertLayout))  # in any case, as every choice of the API
    batch_divisor = chosen("batch_divisor", batch_divisor, (None, *get_args(BatchDivisor)))
    divisor = batch_divisor if batch_divisor is not None else counted_batch_divisor(version)
    return _checked(mapping, model, trainer_gpus, environ or {}, version, strategy_noted,
                    TrainBatch(train_batch_size, train_batch_source, divisor), asked_len, option_names,
                    length_from_option, experts, catalog).problems


def check_environment(config: TrinityConfig, mapping: Mapping[str, Any], model: Model, trainer_gpus: int, *,
                      environ: Mapping[str, str], version: TrinityVersion | None = None,
                      max_model_len: int | None = None) -> tuple[tuple[str, str], ...]:
    """The environment variables the command that checks a config as its plan was made sets (`check_command`):
    (name, value) of each set in `environ` that an interpolation read, in a key rft-solver read for the plan
    (`config`, as `read_trinity_config` read it from `environ`: its `TrinityConfig.environment`), then in a key its
    checks read (`trinity_config_problems` on the same config as nested `mapping`s, for `model` on `trainer_gpus` at
    `max_model_len`, with `version`), in the order first read. Unset ones are left out, and so are those set to the
    default of each ``oc.env`` that reads them (`VariablesRead.or_default`): their defaults apply in any shell. The
    command reads them so, and so judges the same config in a shell without them."""
    check_trinity_version("version", version)
    checked = _checked(mapping, model, trainer_gpus, environ, version, False, TrainBatch(None, TRAIN_BATCH_KEY),
                       max_model_len, API_OPTIONS)
    return tuple({**dict(config.environment), **checked.variables.found}.items())


def _checked(mapping: Mapping[str, Any], model: Model, trainer_gpus: int, environ: Mapping[str, str],
             version: TrinityVersion | None, strategy_noted: bool, batch: TrainBatch, max_model_len: int | None,
             option_names: OptionNames, length_from_option: bool = False,
             experts: ExpertLayout = "fused", catalog: Catalog | None = None) -> _ConfigChecks:
    """`trinity_config_problems`' checks, run (their `problems`, and the variables they read)."""
    checks = _ConfigChecks(mapping, environ, option_names, version, length_from_option, experts, catalog)
    check_mode(checks.value(("mode",)), "")  # as read_trinity_config refuses it
    sp, role_sps = _check_sequence_parallel(checks, model, trainer_gpus, version, batch)
    _check_batch_over_trainer_gpus(checks, trainer_gpus, batch, sp, role_sps.values())
    _check_whole_batch_sizes_over_ranks(checks, trainer_gpus, sp, version)
    _check_critic_whole_size_over_ranks(checks, trainer_gpus, role_sps["critic"], version)
    _check_actor_mini_batch(checks, trainer_gpus, sp, batch, version)
    _check_forward_micro_batch(checks, trainer_gpus, sp, batch, version)
    _check_critic_mini_batch(checks, trainer_gpus, (role_sps["critic"], sp), batch, version)
    _check_megatron_critic(checks)
    _check_critic_strategy(checks, version)
    _check_trainer_strategy(checks, version)
    _check_overwritten_model_paths(checks)
    _check_fsdp_sizes(checks, trainer_gpus, version)
    length = max_model_len if max_model_len is not None else checks.number(("model", "max_model_len"))
    _check_token_budgets(checks, length, sp, role_sps, version)
    _check_prompt_and_response(checks, length)
    _check_rope_scaling(checks, model, length)
    _check_rollout_model(checks, model, length)
    _check_rollout_tensor_parallel(checks, model)
    _check_engine_nodes(checks)
    _check_sglang_parallel(checks)
    _check_rollout_length_refused(checks, model, length)
    _check_sglang_length(checks, model, length)
    _check_rope_theta(checks, model)
    _check_rope_partial(checks, model)
    _check_rope_partial_differs(checks, model)
    _check_dynamic_batch(checks, model, version, trainer_gpus, (role_sps["critic"], sp))
    _check_critic_forward_whole_size(checks, version)
    _check_dpo_pairs(checks, model, version)
    _check_dpo_whole_size_pairs(checks, trainer_gpus, sp, version)
    _check_dpo_pair_dynamic(checks, version)
    _check_gradient_checkpointing(checks, version)
    _check_remove_padding(checks, model, version)
    _check_lora_targets(checks, model)
    _check_moe_lora_saved(checks, model)
    said_05 = _check_trainer_level_flags(checks, version) | _check_keys_05_lacks(checks, version)
    _check_offload_strategy(checks, version, strategy_noted)
    _check_no_config_path(checks, version)
    _check_whole_nodes(checks, trainer_gpus)
    said = said_05 | _check_misspelt_keys(checks, version)
    _check_no_such_keys(checks, said, version)
    _check_verl_config_keys(checks, version, said)
    _check_verl_08_dropped(checks, version, said)
    _check_algorithm(checks, version)
    _check_algorithm_mode(checks)
    _check_trainer_input(checks)
    _check_ref_model(checks, version)
    _check_unbuilt_reference(checks, version, batch.divisor)
    _check_keys_read_elsewhere(checks, version, said_05)
    _check_missing_kept(checks)
    _check_unread_references(checks)
    return checks


FLAG_KEYS = frozenset(("enable", "use_dynamic_bsz", "log_prob_use_dynamic_bsz", "use_remove_padding", "enable_lora",
                       "enable_expert_parallel", LEGACY_BYPASS_MODE_KEY[-1], *OFFLOAD_FLAGS, *ENTROPY_KEYS))
"""The keys of `READ_KEYS` that hold a boolean."""
TEXT_KEYS = frozenset(("mode", "algorithm_type", "entropy_loss_fn", "model_path", "critic_model_path", "engine_type",
                       "trainer_type", "trainer_strategy", "save_hf_checkpoint", "lora_adapter_path", "path"))
"""The keys of `READ_KEYS` (and of the one LoRA config, `LORA_CONFIG_KEYS`) that hold text: OmegaConf's str field
takes a number or a boolean as text, not a list or a mapping."""
LORA_CONFIG_KEYS = ("path", "lora_rank")
"""The keys rft-solver reads of the one LoRA config in ``model.lora_configs`` (its rank's type is
`ConfigProblemCode.LORA_RANK_NOT_A_NUMBER_REFUSED`'s)."""


AUXILIARY_TYPED_KEYS = tuple(key for key in READ_KEYS[ROLLOUT_MODEL] if key in FLAG_KEYS | TEXT_KEYS | NUMBER_KEYS)
"""The keys of an ``explorer.auxiliary_models`` entry judged for their type as the rollout model's are (the same
``InferenceModelConfig``): the rollout model's `READ_KEYS` that hold a boolean, text or a number."""


def _keys_read(checks: _ConfigChecks) -> list[Path]:
    """Every key rft-solver reads (`READ_KEYS`, then the one LoRA config's `LORA_CONFIG_KEYS`), in a section that is a
    mapping as read (a section that cannot be read is said once, itself), then each auxiliary model's
    `AUXILIARY_TYPED_KEYS` (in an entry that is a mapping)."""
    paths: list[Path] = []
    for section, keys in READ_KEYS.items():
        if not section or isinstance(checks.value(section), Mapping):
            paths += [(*section, key) for key in keys]
    configs = checks.value(LORA_CONFIGS)
    if isinstance(configs, list) and configs and isinstance(checks.value((*LORA_CONFIGS, 0)), Mapping):
        paths += [(*LORA_CONFIGS, 0, key) for key in LORA_CONFIG_KEYS]
    auxiliary = checks.value(AUXILIARY_MODELS)
    for index in range(len(auxiliary) if isinstance(auxiliary, list) else 0):
        if isinstance(checks.value((*AUXILIARY_MODELS, index)), Mapping):
            paths += [(*AUXILIARY_MODELS, index, key) for key in AUXILIARY_TYPED_KEYS]
    return paths


def _check_keys_read_elsewhere(checks: _ConfigChecks, version: TrinityVersion | None,
                               lacked: frozenset[Path] = frozenset()) -> None:
    """Check each key rft-solver reads (`_keys_read`) that no check above read, as the reader of the config reads it
    for its notes or its plan: one whose interpolation resolves to nothing, or cannot be resolved here (`value`), and
    one whose value is not a number (`NUMBER_KEYS`), a line each; and each boolean or text, read above or not, for
    its type (`_check_read_type`, with `version`). A key the release lacks (`lacked`: said so already, the one line
    it needs) is left out."""
    judged = checks.read()
    for path in _keys_read(checks):
        key = path[-1]
        if path in lacked:
            continue
        if key in FLAG_KEYS or key in TEXT_KEYS:
            _check_read_type(checks, path, version)
        elif path in judged:
            continue
        elif key in NUMBER_KEYS:
            checks.number(path)
        else:
            checks.value(path)


def _check_read_type(checks: _ConfigChecks, path: Path, version: TrinityVersion | None) -> None:
    """Check that the boolean (`FLAG_KEYS`) or the text (`TEXT_KEYS`) at `path` is of its type (a flag whose type a
    check judged already, `_ConfigChecks.flags_judged`, is left alone): refused where Trinity's typed config refuses
    it as it loads the config (`_schema_refuses`: OmegaConf 2.3.0's bool field refuses what `omegaconf_boolean` does
    not take, its str field a list or a mapping), else the notes that read it are not judged, and a flag's words say
    what each release does with it (`non_boolean_flag_words`: ``rollout_correction.bypass_mode``, whose
    ``_RolloutCorrectionConfig`` types it bool, ``verl_legacy/verl_config.py:340`` in 0.6.0, as the others)."""
    if path in checks.flags_judged:
        return
    value = checks.flag(path) if path[-1] in FLAG_KEYS else checks.value(path)
    if path[-1] in FLAG_KEYS and value is not None and omegaconf_boolean(value) is None:
        wrong, field, code = (f"must be true or false, got {yaml_brief(value)}", "bool",
                              ConfigProblemCode.FLAG_NOT_BOOLEAN_REFUSED)
    elif path[-1] in TEXT_KEYS and isinstance(value, (Mapping, list)):
        wrong, field, code = f"must be text, got {yaml_brief(value)}", "str", ConfigProblemCode.WRONG_TYPE_REFUSED
    else:
        if path[-1] in FLAG_KEYS:
            _check_false_text(checks, path, value, version)
        return
    if _schema_refuses(path, version):
        checks.add(code, f"{dotted(path)} {wrong}: {_typed_field_refuses_words(path, field)}")
    elif path[-1] in FLAG_KEYS:
        checks.add(ConfigProblemCode.WRONG_TYPE, f"{dotted(path)} {wrong}: "
                   f"{non_boolean_flag_words(path, value, version)}; the notes that read it are not judged")
    else:
        checks.add(ConfigProblemCode.WRONG_TYPE, f"{dotted(path)} {wrong}: the notes that read it are not judged")


MISSPELT_CUTOFF = 0.9
"""How alike (difflib's ratio) a key must be to one rft-solver reads to be taken for it misspelt: 0.9 takes
``ulysses_sequence_paralel_size`` and ``trainr``, not Trinity's ``min_response_tokens`` for ``max_response_tokens``
(nor ``max_model_length`` for ``max_model_len``, 0.897, which `_words_reshaped` takes)."""
OWN_KEYS_NEAR_READ = frozenset(("ppo_infer_micro_batch_size_per_gpu",))
"""Keys of verl's own spelt almost as one rft-solver reads, which are no misspelling of it: verl 0.8's actor
``ppo_infer_micro_batch_size_per_gpu`` (``workers/config/actor.py:153``), near ``ppo_micro_batch_size_per_gpu``."""

SP_KEY_SLIPS = frozenset(("sequence_parallel_size", "sp_size", "ulysses_sp_size", "ulysses_size"))
"""Known wrong names of Ulysses SP's key (``ulysses_sequence_parallel_size``, the trainer's and each role's), keys of
no section that reads it, which neither difflib nor `_words_reshaped` take for it (a first word dropped: no rule
takes that, which would take ``batch_size`` for ``train_batch_size``)."""


def _words_reshaped(key: str, read: str) -> bool:
    """Whether `key` is the key `read` with its words (``_``-separated) spelt out or cut short (``max_model_length``,
    ``gpus_per_node``: each word the other's, or its start) or its last word dropped, two or more left
    (``tensor_parallel``). A trailing word added is no such key: Trinity's ``trainer_config_path`` is a key of its
    own beside ``trainer_config``."""
    words, read_words = key.split("_"), read.split("_")
    if len(words) >= 2 and words == read_words[:-1]:
        return True
    return len(words) == len(read_words) and all(
        word.startswith(read_word) or read_word.startswith(word) for word, read_word in zip(words, read_words))


def _misspelling_of(key: str, lacking: Iterable[str]) -> str | None:
    """The key of `lacking` (keys rft-solver reads that a section lacks) that `key`, beside them, likely misspells:
    Ulysses SP's key where `key` is a known wrong name of it (`SP_KEY_SLIPS`), else the most alike at least
    `MISSPELT_CUTOFF` (difflib's ratio), else the first that `key` reshapes the words of (`_words_reshaped`); None
    where none is."""
    lacking = list(lacking)
    if key in SP_KEY_SLIPS and TRAINER_SP_KEY[-1] in lacking:
        return TRAINER_SP_KEY[-1]
    near = difflib.get_close_matches(key, lacking, n=1, cutoff=MISSPELT_CUTOFF)
    return near[0] if near else next((read for read in lacking if _words_reshaped(key, read)), None)


def _read_elsewhere_words(key: str, section: Path) -> str:
    """Where `key`, spelt almost as a key `section` lacks, is itself a key rft-solver reads in other sections
    (`READ_KEYS`: Trinity's ``mode`` at the top, misplaced under ``actor_rollout_ref``), that it may be that key
    misplaced, in words (``; or is it mode misplaced (a key of the config's top level, read there)?``); "" otherwise."""
    places = [".".join(other) or "the config's top level" for other, keys in READ_KEYS.items()
              if other != section and key in keys]
    return f"; or is it {key} misplaced (a key of {' and of '.join(places)}, read there)?" if places else ""


def _sections_read(mapping: Mapping[str, Any]) -> list[tuple[Path, Any, tuple[str, ...]]]:
    """Each section of the config `mapping` whose keys rft-solver reads, as written (None where absent), with those
    keys: `READ_KEYS`' sections, and each ``explorer.auxiliary_models`` entry, whose keys are the rollout model's
    (Trinity's same ``InferenceModelConfig``)."""
    entries = value_at(mapping, AUXILIARY_MODELS)
    return [*((section, value_at(mapping, section) if section else mapping, known)
              for section, known in READ_KEYS.items()),
            *(((*AUXILIARY_MODELS, index), entry, READ_KEYS[ROLLOUT_MODEL])
              for index, entry in enumerate(entries if isinstance(entries, list) else []))]


def _check_misspelt_keys(checks: _ConfigChecks, version: TrinityVersion | None) -> frozenset[Path]:
    """Check for keys spelt almost as one rft-solver reads (`_sections_read`: `READ_KEYS`, and each auxiliary model's
    the rollout model's) that their section lacks: that key is then unset, whatever the misspelt one says (and
    Trinity refuses a key it does not know where `_schema_refuses`). Return their paths."""
    misspelt: set[Path] = set()
    for section, mapping, known in _sections_read(checks.mapping):
        if not isinstance(mapping, Mapping):
            continue
        lacking = [key for key in known if key not in mapping]
        for key in mapping:
            if (isinstance(key, str) and key not in known and key not in OWN_KEYS_NEAR_READ
                    and (meant := _misspelling_of(key, lacking))):
                path = (*section, key)
                misspelt.add(path)
                unset = (f"{dotted(path)}: did you mean {meant}? That key is unset, and read as such"
                         f"{_read_elsewhere_words(key, section)}")
                if _schema_refuses(path, version):
                    checks.add(ConfigProblemCode.MISSPELT_KEY_REFUSED,
                               f"{unset}; Trinity refuses the config (it knows no such key)")
                else:
                    checks.add(ConfigProblemCode.MISSPELT_KEY,
                               f"{unset} ({_unchecked_words(version, 'drops the key')})")
    return frozenset(misspelt)


def _check_no_such_keys(checks: _ConfigChecks, said: frozenset[Path], version: TrinityVersion | None) -> None:
    """Check for keys that the typed sections of every Trinity release `version` stands for (None: any release) lack
    (`TrinityFields.lacking`; ``trainer.trainer_config``, typed ``Any``, keeps any key): each of them refuses the
    config as it loads it, and the line names the releases that have the key. With a `version`, a key that some of
    its releases lack and others have (0.5.2's, not 0.5.0's) is said as a caution, naming both. A key `said` already
    (misspelt for one rft-solver reads, with the key it likely means; one of Trinity 0.6's that 0.5 lacks), and the
    keys below it, are left out."""
    fields = load_trinity_fields()
    chosen = set(_releases_of(fields, version))
    lacking = {path: releases for path, releases in fields.lacking(checks.mapping).items()
               if not any(path[:len(above)] == above for above in said)}
    refused = {path for path, releases in lacking.items() if chosen <= set(releases)}
    for path, lacked_by in lacking.items():
        having = [name for name in fields.releases if name not in lacked_by]
        if path in refused:
            checks.add(ConfigProblemCode.NO_SUCH_KEY_REFUSED, _no_such_key_words(
                path, [*fields.releases], version, having, _key_meant(checks, path, chosen)))
        elif version is not None and chosen & set(lacked_by) and not any(below[:len(path)] == path
                                                                         for below in refused):
            checks.add(ConfigProblemCode.UNKNOWN_KEY, _some_lack_words(
                dotted(path), "key there", [name for name in lacked_by if name in chosen],
                [name for name in having if name in chosen], "remove it"))


WORKER_PATH_KEY = "use_legacy_worker_impl"
"""verl 0.7's own switch between its legacy workers and its engine's (``trainer.use_legacy_worker_impl``: ``auto``,
its default, ``enable`` or ``disable``; ``trainer/config/ppo_trainer.yaml:204`` in verl 0.7.1, read at
``trainer/main_ppo.py:128`` to ``:207`` and ``trainer/ppo/ray_trainer.py:306``; verl 0.8.0 has no such key), which
no Trinity release hands verl: the ``Trainer`` of its veRLConfig lacks it (``trainer/verl_legacy/verl_config.py:359``
in 0.6.0), so 0.5 refuses it and 0.6.0 drops it before verl 0.8, whose trainer then reads ``auto``
(``OmegaConf.structured`` at ``verl_legacy/verl_trainer.py:198``; its ``disable`` branches, ``:323`` and ``:400``,
never run), and on verl 0.8 passes verl no ``trainer`` section (``trainer/verl/config.py:744``); Trinity's own
``trainer`` section has no such key in any release. The installed verl picks the workers (``is_verl_legacy``,
``trainer/trainer.py:371`` to ``:381`` in 0.6.0), so a config's line says so (`_worker_path_words`)."""


def _worker_path_words(version: TrinityVersion | None) -> str:
    """What picks verl's workers for the Trinity release `version` (None: any), whatever `WORKER_PATH_KEY` says, in
    words that end a line on that key."""
    if version == "0.5":
        return "; Trinity 0.5 runs verl 0.7's legacy workers alone, which no key changes"
    who = "Trinity 0.6" if version else "Trinity"
    return (f"; {who} picks verl's workers by the installed verl, not by a key: the legacy workers on verl before 0.8"
            f"{'' if version else ' (Trinity 0.5 runs no other)'}, the engine workers on 0.8 or later")


DROPPED_NEAR_CUTOFF = 0.8
"""How alike (difflib's ratio) a key that Trinity 0.6's ``veRLConfig`` drops must be to one its section has for the
line to name that one: 0.8 takes ``lrr`` for ``lr`` and ``ppo_mini_batchsize`` for ``ppo_mini_batch_size``."""


ARR_SECTION = ACTOR_ROLLOUT_REF[-1]
"""``actor_rollout_ref``, as a key of ``trainer.trainer_config`` (`UNCHECKED_SECTION`)."""
VERL_08_SECTIONS = ("model", "actor", "ref", "rollout", "critic")
"""The sections of ``trainer.trainer_config`` that Trinity 0.6 on verl 0.8 or later merges into verl's own config
(``_MERGEABLE_KEYS``, ``trainer/verl/config.py:744`` in 0.6.0): each as ``actor_rollout_ref``'s, else written flat in
the section itself, and the critic's as the section's own, else ``actor_rollout_ref``'s (``_normalize_trainer_config``,
``:779`` to ``:816``); it drops the rest of ``trainer.trainer_config``."""
VERL_08_SET_KEYS = frozenset((
    "model.path", "model.trust_remote_code", "model.use_remove_padding", "model.custom_chat_template",
    "model.lora_rank", "model.lora_alpha", "model.target_modules", "model.exclude_modules", "model.lora_adapter_path",
    "actor.strategy", "actor.ppo_mini_batch_size", "actor.use_dynamic_bsz", "actor.ppo_max_token_len_per_gpu",
    "actor.ppo_infer_max_token_len_per_gpu", "actor.use_kl_loss", "actor.loss_agg_mode", "actor.rollout_n",
    "actor.grad_clip", "actor.ulysses_sequence_parallel_size", "actor.use_remove_padding", "ref.strategy",
    "ref.rollout_n", "ref.log_prob_use_dynamic_bsz", "ref.log_prob_max_token_len_per_gpu",
    "ref.ulysses_sequence_parallel_size", "ref.use_remove_padding", "rollout.temperature", "rollout.n",
    "rollout.log_prob_use_dynamic_bsz", "rollout.log_prob_max_token_len_per_gpu", "critic.enable", "critic.strategy",
    "critic.ppo_mini_batch_size", "critic.use_dynamic_bsz", "critic.ppo_max_token_len_per_gpu",
    "critic.ppo_infer_max_token_len_per_gpu", "critic.rollout_n", "critic.grad_clip",
    "critic.ulysses_sequence_parallel_size", "critic.forward_max_token_len_per_gpu"))
"""The keys of `VERL_08_SECTIONS` that Trinity 0.6 on verl 0.8 or later sets from its own config, ignoring the key
``trainer.trainer_config`` gives (``FROZEN_KEYS``, ``trainer/verl/config.py:696`` to ``:742`` in 0.6.0; skipped in
``_deep_merge``, ``:819`` to ``:838``)."""


VERL_08_DROPS_WORDS = f"it passes verl {and_joined([*VERL_08_SECTIONS])} alone"
"""Why Trinity 0.6 on verl 0.8 or later drops a key of ``trainer.trainer_config`` outside `VERL_08_SECTIONS`."""


def _verl_08_role(below: Path) -> tuple[str, Path]:
    """The role of the key at `below` in ``trainer.trainer_config`` as Trinity 0.6 on verl 0.8 or later reads it (its
    first key, or ``actor_rollout_ref``'s next; a `VERL_08_SECTIONS` name where it passes verl the key, ``""`` for
    ``actor_rollout_ref`` itself), and the keys below that role."""
    if below[0] != ARR_SECTION:
        return str(below[0]), below[1:]
    return (str(below[1]), below[2:]) if len(below) > 1 else ("", ())


def _verl_08_merge(section: Mapping[str, Any], below: Path) -> tuple[str, str]:
    """Where Trinity 0.6 on verl 0.8 or later merges the key at `below` in ``trainer.trainer_config`` `section` into
    verl's own config (`VERL_08_SECTIONS`): (that section, the key's path in verl's config, dotted), or, where it
    drops or ignores the key (`VERL_08_SET_KEYS`), ("", why in words)."""
    nested, flat = section.get(ARR_SECTION), below[0] != ARR_SECTION
    role, rest = _verl_08_role(below)
    if role not in VERL_08_SECTIONS:
        return "", VERL_08_DROPS_WORDS
    if not flat and role == "critic" and "critic" in section:
        return "", "it takes the section's own critic in its place"
    if flat and role != "critic" and isinstance(nested, Mapping) and role in nested:
        return "", f"it takes {ARR_SECTION}.{role} in its place"
    keys = [role, *(str(key) for key in rest)]
    if (set_by := next((".".join(keys[:depth]) for depth in range(2, len(keys) + 1)
                        if ".".join(keys[:depth]) in VERL_08_SET_KEYS), None)) is not None:
        return "", f"it sets verl's {set_by} itself"
    return role, ".".join(keys)


def _trinity_06_words(section: Mapping[str, Any], below: Path) -> str:
    """What Trinity 0.6 does with the key at `below` in ``trainer.trainer_config`` `section` that its legacy
    ``veRLConfig`` lacks, on each path it takes (by the verl installed: ``is_verl_legacy``, ``trainer/trainer.py:371``
    to ``:381`` in 0.6.0; no key of the config chooses), in words: on verl before 0.8 it drops the key
    (`TrinityRelease.verl_legacy`); on verl 0.8 or later it drops or ignores it too where `_verl_08_merge` says so, and
    else merges it into verl's own config, which takes a key the installed verl has and, built with hydra as the
    trainer starts, fails on one it lacks (``omega_conf_to_dataclass``, ``workers/engine_workers.py:514`` in verl
    0.8.0): verl's keys, not judged."""
    role, merged = _verl_08_merge(section, below)
    if not role:
        return (f"Trinity 0.6 drops it on any verl (its veRLConfig on verl before 0.8 has no such key there, and "
                f"on 0.8 or later {merged}), so it does nothing")
    taken = (f"passes it to verl's own {role} config, which fails the trainer as it starts unless the installed verl "
             "has such a key there" if "." in merged else f"takes its keys into verl's own {role} config, which fails "
             "the trainer as it starts on any the installed verl lacks")
    return ("Trinity 0.6 drops it on verl before 0.8 (its veRLConfig has no such key there), where it does nothing, "
            f"and on verl 0.8 or later {taken} (not judged here)")


class _VerlSection(NamedTuple):
    """A ``trainer.trainer_config`` that Trinity builds a veRLConfig from (`_verl_config_sections`)."""

    at: Path
    """Its path."""
    section: Mapping[str, Any]
    """The section, as written."""
    stage: int | None
    """The stage (its index in ``stages``) at whose start Trinity builds it; None: as it loads the config."""


def _verl_config_sections(mapping: Mapping[str, Any]) -> list[_VerlSection]:
    """Each ``trainer.trainer_config`` that Trinity builds a veRLConfig from: the config's own (`UNCHECKED_SECTION`),
    then each stage's, which Trinity takes with the stage's ``trainer`` in place of the config's
    (`solver.trinity.config.STAGE_SECTIONS`). With stages, Trinity checks (and builds) each stage's config as that stage
    starts (``cli/launcher.py:399`` to ``:409`` in 0.6.0, ``:241`` to ``:251`` in 0.5.2), the config's own never: its
    section is built as the first stage that keeps its ``trainer`` starts (the first stage's start: as Trinity loads
    the config), and is left out where every stage sets one."""
    stages = value_at(mapping, ("stages",))
    listed = stages if isinstance(stages, list) else []
    keeping = [index for index, stage in enumerate(listed)
               if not (isinstance(stage, Mapping) and stage.get("trainer") is not None)]
    found: list[_VerlSection] = []
    if keeping or not listed:
        first = keeping[0] if keeping else 0
        found.append(_VerlSection(UNCHECKED_SECTION, value_at(mapping, UNCHECKED_SECTION), first or None))
    found += [_VerlSection(("stages", index, *UNCHECKED_SECTION), value_at(stage, UNCHECKED_SECTION), index)
              for index, stage in enumerate(listed) if isinstance(stage, Mapping)]
    return [found_at for found_at in found if isinstance(found_at.section, Mapping)]


def _check_verl_config_keys(checks: _ConfigChecks, version: TrinityVersion | None, said: frozenset[Path]) -> None:
    """Check for keys under ``trainer.trainer_config`` (`UNCHECKED_SECTION`, and each stage's: `_verl_config_sections`)
    that the typed ``veRLConfig`` of a release `version` may be (None: any) lacks (`TrinityFields.verl_lacking`):
    Trinity 0.5 merges the section into its own (`TrinityRelease.verl_merged`, ``OmegaConf.merge`` at
    ``common/config_validator.py:1156`` in 0.5.0, ``:1135`` in 0.5.1, ``:1185`` in 0.5.2), which refuses the config as
    it loads it (with stages, as the stage starts that builds the section: `_VerlSection.stage`): refused where every
    release of `version` does, else a caution naming those that do; 0.6.0 on verl before 0.8 builds it into its legacy
    one (`TrinityRelease.verl_legacy`) with ``build_dataclass_from_mapping``, which drops the key
    (``trinity/common/dataclass_utils.py:17`` to ``:21``), so the config loads and the key does nothing there, and the
    line says what 0.6 on verl 0.8 or later does with it (`_trinity_06_words`); without a release, one line names
    both. The line names the key of its section most alike (`DROPPED_NEAR_CUTOFF`), where one
    is (none for verl's own, `OWN_KEYS_NEAR_READ`). Below a field typed as verl's own dataclass, whose keys are the
    installed verl's, nothing is judged. Left to their own lines, in the config's own section: a key `said` (and those
    below it), one rft-solver reads (`READ_KEYS`), Trinity 0.6's keys that 0.5 lacks (`KEYS_05_LACKS`: a role's
    ``engine``) and the ref's ``model`` (`REF_MODEL_KEY`)."""
    fields = load_trinity_fields()
    chosen = _releases_of(fields, version)
    for at, section, stage in _verl_config_sections(checks.mapping):
        for below, lacked_by in fields.verl_lacking(section).items():
            path, own = (*at, *(str(key) for key in below)), (*UNCHECKED_SECTION, *(str(key) for key in below))
            lacking = [name for name in lacked_by if name in chosen]
            if not lacking or (at == UNCHECKED_SECTION and (
                    any(own[:len(above)] == above for above in said) or own[-1] in READ_KEYS.get(own[:-1], ())
                    or own in KEYS_05_LACKS or own == REF_MODEL_KEY)):
                continue
            typed = fields.releases[lacking[0]].verl_config()
            assert typed is not None  # verl_lacking judges the releases that build one alone
            known = typed.sections.get(".".join(own[len(UNCHECKED_SECTION):-1]), ())
            near = [] if path[-1] in OWN_KEYS_NEAR_READ else difflib.get_close_matches(
                str(path[-1]), known, n=1, cutoff=DROPPED_NEAR_CUTOFF)
            meant = (_worker_path_words(version) if path[-1] == WORKER_PATH_KEY
                     else f"; did you mean {near[0]}?" if near else "")
            refusing = [name for name in lacking if fields.releases[name].verl_merged is not None]
            dropping = _trinity_06_words(section, below)
            if not refusing:
                checks.add(ConfigProblemCode.KEY_DROPPED, f"{dotted(path)}: {dropping}{meant}")
                continue
            named = _releases_named(refusing)
            one = len(named) == 1
            when = (f"as {'it loads' if one else 'they load'} it" if stage is None
                    else f"as {'it starts' if one else 'they start'} {dotted(('stages', stage))}"
                         f"{', after the stages before it have run' if stage else ''}")
            refused = (f"{dotted(path)}: Trinity {and_joined(named)} {'refuses' if one else 'refuse'} the config "
                       f"{when} ({'its' if one else 'their'} veRLConfig has no such key there)")
            if refusing == chosen:
                checks.add(ConfigProblemCode.VERL_KEY_REFUSED, f"{refused}: remove it{meant}")
            else:
                also = f", and {dropping}" if len(refusing) < len(lacking) else ""
                checks.add(ConfigProblemCode.VERL_KEY, f"{refused}{also}{meant}")


def _check_verl_08_dropped(checks: _ConfigChecks, version: TrinityVersion | None, said: frozenset[Path]) -> None:
    """Check for keys under ``trainer.trainer_config`` (and each stage's: `_verl_config_sections`) that the legacy
    ``veRLConfig`` of Trinity 0.6 (`TrinityRelease.verl_legacy`, its trainer on verl before 0.8) has, so that
    `_check_verl_config_keys` says nothing of them, but that lie outside `VERL_08_SECTIONS`, which Trinity 0.6 on verl
    0.8 or later drops (``_normalize_trainer_config``, ``trainer/verl/config.py:779`` to ``:816`` in 0.6.0):
    ``trainer.balance_batch``, ``trainer.resume_mode``, ``actor_rollout_ref.hybrid_engine``, ``algorithm``'s, ...; a
    note (`ConfigProblemCode.KEY_DROPPED`) naming that verl line, and, for a key of its ``trainer`` that Trinity's own
    ``trainer`` section has too, that key, which 0.6 reads there in its place (``balance_batch`` at
    ``trainer/verl/trainer.py:493``, ``critic_warmup`` at ``:560``). Where the release `version` may be (None: any)
    has no such trainer (0.5), none; left to their own lines: a key some release of `version` lacks, and in the
    config's own section, a key `said` (and those below it) or one rft-solver reads (`READ_KEYS`)."""
    fields = load_trinity_fields()
    chosen = _releases_of(fields, version)
    legacy = next((name for name in chosen if fields.releases[name].verl_legacy is not None), None)
    if legacy is None:
        return
    typed = fields.releases[legacy].verl_legacy
    assert typed is not None  # chosen so
    trinity_trainer = fields.releases[legacy].sections.get("trainer", ())
    for at, section, _ in _verl_config_sections(checks.mapping):
        lacked = fields.verl_lacking(section)
        for below in typed.held(section):
            own = (*UNCHECKED_SECTION, *(str(key) for key in below))
            if (_verl_08_role(below)[0] in VERL_08_SECTIONS or any(name in chosen for name in lacked.get(below, ()))
                    or (at == UNCHECKED_SECTION and (any(own[:len(above)] == above for above in said)
                                                     or own[-1] in READ_KEYS.get(own[:-1], ())))):
                continue
            also = (f"; Trinity 0.6 reads its own trainer.{below[1]} there in its place"
                    if len(below) == 2 and below[0] == "trainer" and below[1] in trinity_trainer else "")
            checks.add(ConfigProblemCode.KEY_DROPPED,
                       f"{dotted((*at, *below))}: Trinity 0.6 on verl 0.8 or later drops it ({VERL_08_DROPS_WORDS}), "
                       f"so it does nothing there, though its veRLConfig on verl before 0.8 has the key{also}")


def _releases_named(names: list[str]) -> list[str]:
    """The releases `names` (the table's), in its order, each minor version whose every release is among them named
    as such (``["0.5", "0.6.0"]`` -> ``["0.5", "0.6"]``; ``["0.5.0", "0.5.1"]`` as they are)."""
    releases = list(load_trinity_fields().releases)
    named: list[str] = []
    for minor in dict.fromkeys(release.rsplit(".", 1)[0] for release in releases):
        of = [release for release in releases if release.startswith(f"{minor}.")]
        given = [release for release in of if release in names]
        named += [minor] if given == of else given
    return named


ALGORITHM_NEAR_CUTOFF = 0.8
"""How alike (difflib's ratio) an algorithm type no release of the run's has must be to one that they have for the
line to name it: 0.8 takes ``grpoo`` for ``grpo`` and ``dpoo`` for ``dpo``."""


def _check_algorithm(checks: _ConfigChecks, version: TrinityVersion | None) -> None:
    """Check that ``algorithm.algorithm_type``, where it is text without a dot (a dotted one is a class's import path,
    which Trinity imports), names an algorithm type of every release `version` may be (None: any): each release's
    ``ALGORITHM_TYPE`` registry (`TrinityRelease.algorithms`) refuses another as it loads the config (``Invalid module
    key``, ``utils/registry.py:81`` in 0.5.2, called at ``common/config_validator.py:328``): refused where every such
    release lacks it, naming the types all of them have and the releases that have it, or where none does, the type
    most alike (`ALGORITHM_NEAR_CUTOFF`); else a caution naming those that lack it and those that have it."""
    algorithm = checks.value(("algorithm", "algorithm_type"))
    if not isinstance(algorithm, str) or "." in algorithm:
        return
    fields = load_trinity_fields()
    chosen = _releases_of(fields, version)
    having = fields.algorithm_releases(algorithm)
    lacking = [name for name in chosen if name not in having]
    if not lacking:
        return
    key = f"algorithm.algorithm_type {algorithm}"
    has = _releases_named(list(having))
    if len(lacking) < len(chosen):
        checks.add(ConfigProblemCode.UNKNOWN_ALGORITHM,
                   _some_lack_words(key, "algorithm", _releases_named(lacking), has, "name another"))
        return
    taken = sorted(set.intersection(*(set(fields.releases[name].algorithms) for name in chosen)))
    near = [] if has else difflib.get_close_matches(algorithm, taken, n=1, cutoff=ALGORITHM_NEAR_CUTOFF)
    whose = (f"Trinity {version} has no such algorithm, so it refuses" if version else
             f"no release of Trinity ({min(fields.releases)} to {max(fields.releases)}) has this algorithm, so "
             "Trinity refuses")
    checks.add(ConfigProblemCode.UNKNOWN_ALGORITHM_REFUSED, (
        f"{key}: {whose} the config as it loads it: name one of {', '.join(taken)}"
        f"{f' (or run a release that has it: Trinity {and_joined(has)})' if has else ''}"
        f"{f'; did you mean {near[0]}?' if near else ''}"))


TRAIN_MODE_ALGORITHMS = {"sft": ":76 in 0.5.0 to 0.6.0", "cpt": ":76 in 0.6.0, SFT's, which CPT inherits",
                         "dpo": ":291 in 0.6.0, :248 in 0.5.0 to 0.5.2"}
"""The algorithm types Trinity trains offline, on a dataset, that the checks refuse in `ALGORITHM_REFUSED_MODES`, each
with the line of ``trinity/algorithm/algorithm.py`` whose ``check_config`` refuses those modes (called as the config
loads, ``common/config_validator.py:384`` in 0.6.0, ``:329`` in 0.5.2; CPT is 0.6's alone). In mode train the same
``check_config`` requires the dataset's ``buffer.trainer_input.experience_buffer.path``; every release's ``mode`` is
``both`` where unset."""
ALGORITHM_REFUSED_MODES = (None, "both", "explore")
"""The modes (None: unset, Trinity's ``both``) in which every release's ``check_config`` of `TRAIN_MODE_ALGORITHMS`
raises ("SFT does not support `both` mode": ``config.mode in ["both", "explore"]``, alike in 0.5.0 to 0.6.0). It
raises in no other of Trinity's modes, and no later step of Trinity's fails on these types there, so the checks say
nothing of them: ``bench`` and ``serve`` run an explorer alone (``cli/launcher.py``), and ``colocate`` runs as
``both`` on one GPU, on the explorer's rollouts (the buffer's validator turns a file dataset into a queue,
``common/config_validator.py:1112`` in 0.6.0, ``:1011`` in 0.5.2). ``--from-config`` refuses to plan all three. The
mode judged is the written one, also where Trinity switches a config to ``colocate`` by itself (a one-node one-GPU Ray
cluster, ``cluster.node_num`` or ``gpu_per_node`` unset: ``RayClusterConfigValidator``, ``:204-212`` in 0.6.0): it runs
after ``AlgorithmConfigValidator``, which calls ``check_config`` (the ``validators`` list, ``:1839`` before ``:1841`` in
0.6.0, ``:1681`` before ``:1683`` in 0.5.0)."""


def _offline_algorithm(checks: _ConfigChecks) -> str | None:
    """The config's algorithm type where Trinity trains it offline, on a dataset (`TRAIN_MODE_ALGORITHMS`), and the
    release takes the type (no ``unknown-algorithm-refused``: CPT on Trinity 0.5); else None."""
    algorithm = checks.value(("algorithm", "algorithm_type"))
    if (not isinstance(algorithm, str) or algorithm not in TRAIN_MODE_ALGORITHMS
            or any(problem.code is ConfigProblemCode.UNKNOWN_ALGORITHM_REFUSED for problem in checks.problems)):
        return None
    return algorithm


def _check_algorithm_mode(checks: _ConfigChecks) -> None:
    """Check that a config of an algorithm type Trinity trains offline (`TRAIN_MODE_ALGORITHMS`: SFT, CPT, DPO) is in
    none of the modes its ``check_config`` refuses as the config loads (`ALGORITHM_REFUSED_MODES`: ``both``, the
    default, and ``explore``). Not said where the type itself is refused (``unknown-algorithm-refused``: CPT on
    Trinity 0.5)."""
    algorithm, mode = _offline_algorithm(checks), checks.value(("mode",))
    if algorithm is None or mode not in ALGORITHM_REFUSED_MODES:
        return
    given = "both (unset: Trinity's default)" if mode is None else mode
    checks.add(ConfigProblemCode.ALGORITHM_MODE_REFUSED, (
        f"mode {given}: Trinity refuses algorithm_type {algorithm} in mode both and explore as it loads the config "
        f"(trinity/algorithm/algorithm.py{TRAIN_MODE_ALGORITHMS[algorithm]}): set mode: train, "
        "with the dataset as buffer.trainer_input.experience_buffer (its path, which mode train requires), and plan "
        "it again, as in mode train no explorer runs and the trainer takes the rollout's GPUs too"))


def _check_trainer_input(checks: _ConfigChecks) -> None:
    """Check that a config in mode train of an algorithm type Trinity trains offline (`TRAIN_MODE_ALGORITHMS`) names
    its dataset (`TRAINER_INPUT_PATH`): every release's ``check_config`` for SFT (CPT's, its subclass's) and DPO
    raises "`buffer.trainer_input.experience_buffer.path` is required" where the experience buffer is unset or null,
    or its path is (``not ...path``: null or empty text; a ``name`` or ``storage_type`` alone does not stand for it),
    as the config loads, before the buffer's validator would fill in a default path (``AlgorithmConfigValidator``
    runs before ``BufferConfigValidator``). Not said where the type is refused (``unknown-algorithm-refused``), nor
    where the path cannot be read here (its problem is said)."""
    algorithm = _offline_algorithm(checks)
    if algorithm is None or checks.value(("mode",)) != "train":
        return
    experience = checks.value(TRAINER_INPUT_PATH[:-1])
    path = checks.value(TRAINER_INPUT_PATH) if isinstance(experience, Mapping) else None
    if ((experience is not None and not isinstance(experience, Mapping)) or path not in (None, "")
            or {TRAINER_INPUT_PATH[:-1], TRAINER_INPUT_PATH} & checks.unreadable):
        return
    given = (f"{dotted(TRAINER_INPUT_PATH[:-1])} is unset" if experience is None else
             f"{dotted(TRAINER_INPUT_PATH)} is {'empty' if path == '' else 'unset'}")
    checks.add(ConfigProblemCode.TRAINER_INPUT_MISSING, (
        f"{given}: in mode train Trinity trains algorithm_type {algorithm} on the dataset at "
        f"{dotted(TRAINER_INPUT_PATH)} and refuses the config without it as it loads it "
        f"(trinity/algorithm/algorithm.py{TRAINER_INPUT_LINES[algorithm]}): set that path to the dataset"))


def _some_lack_words(subject: str, what: str, lacking: list[str], having: list[str], fix: str) -> str:
    """That the releases `lacking` the `what` (``key there``, ``algorithm``) that `subject` names (a dotted key, or
    the key and its value) refuse the config as they load it, and those `having` it take it, in words, ending in the
    `fix` to make with the former (``remove it``, ``name another``)."""
    one = len(lacking) == 1
    return (f"{subject}: Trinity {and_joined(lacking)} {'has' if one else 'have'} no such {what} "
            f"({and_joined(having)} {'has' if len(having) == 1 else 'have'} it), so "
            f"{'it refuses' if one else 'they refuse'} the config as {'it loads' if one else 'they load'} it: with "
            f"{'it' if one else 'those'}, {fix}")


def _releases_of(fields: TrinityFields, version: TrinityVersion | None) -> list[str]:
    """The releases of `fields`' table that the Trinity release `version` stands for (None: every one), in its
    order."""
    return [name for name in fields.releases if version is None or name.startswith(f"{version}.")]


def _key_meant(checks: _ConfigChecks, path: Path, releases: set[str]) -> str | None:
    """The field of the section holding the key at `path` in the typed ``Config`` of the `releases` that its key is
    most likely a slip of (difflib's ratio `DROPPED_NEAR_CUTOFF` or more), among those the config's section lacks;
    None where there is none."""
    fields = load_trinity_fields()
    known = {name for release in releases for name in fields.releases[release].fields_at(path)}
    section = value_at(checks.mapping, path[:-1]) if path[:-1] else checks.mapping
    lacking = sorted(name for name in known if not isinstance(section, Mapping) or name not in section)
    near = difflib.get_close_matches(str(path[-1]), lacking, n=1, cutoff=DROPPED_NEAR_CUTOFF)
    return near[0] if near else None


def _no_such_key_words(path: Path, releases: list[str], version: TrinityVersion | None, having: list[str],
                       meant: str | None = None) -> str:
    """Why the key at `path` is refused, in words: none of the `releases` (the table's) has it, or (`version` given)
    none of `version`'s, and those `having` it do; where the key is likely a slip of a field its section lacks,
    `meant` (`_key_meant`), the fix renames it to that. A top-level key may only park YAML anchors (``base:
    &roles``), which Trinity refuses alike (OmegaConf 2.3.0's merge into the typed ``Config`` raises
    ``ConfigKeyError``, ``trinity/common/config.py:1058`` in 0.6.0, ``:983`` in 0.5.2): its line says where they go
    instead."""
    if not having:
        anchors = ("; where it parks YAML anchors, put each anchor on the first key that uses it, then remove it"
                   if len(path) == 1 and meant is None else "")
        fix = (f"remove it{_worker_path_words(version)}" if path[-1] == WORKER_PATH_KEY
               else f"did you mean {meant}? Rename it, or remove it" if meant
               else "remove it, or move it where Trinity reads it")
        return (f"{dotted(path)}: no release of Trinity ({min(releases)} to {max(releases)}) has this "
                f"key there, so Trinity refuses the config (it knows no such key): {fix}{anchors}")
    return (f"{dotted(path)}: Trinity {version} has no such key there, so it refuses the config (it knows no such "
            f"key): remove it, or run a release that has it (Trinity {and_joined(having)})")

