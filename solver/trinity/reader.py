"""Reading a user's Trinity config: its text as nested mappings (as OmegaConf, and so Trinity, reads it), and its
values as Trinity takes them (`ConfigReader`)."""

from __future__ import annotations

import os
import re
import threading
import warnings
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import yaml as pyyaml

from solver.tables import (
    MAX_GPUS,
    MAX_TOKENS,
    NUMBER_TOO_LONG,
    TableError,
    TrinityVersion,
    UniqueKeys,
    check_types,
    meant_whole_number,
    parsed_once,
    shown_number,
    thousands_of_tokens,
    trinity_release,
    unquoted_text_hint,
    whole_number_note,
    yaml_brief,
    yaml_comma_fields_problem,
    yaml_error_place,
    yaml_limit,
    yaml_tab_problem,
)
from solver.trinity.interpolation import ConfigValues, Path
from solver.trinity.keys import (
    CRITIC_ENGINE,
    CRITIC_ENGINE_DYNAMIC_KEY,
    CRITIC_MODEL_FSDP,
    DYNAMIC_BATCH_KEYS,
    LEGACY_BYPASS_MODE_KEY,
    LORA_KEYS,
    OFFLOAD_FLAGS,
    ROLE_DYNAMIC_BATCH_KEYS,
    ConfigError,
    check_environ,
    trainer_level_offload,
)

if TYPE_CHECKING:  # ruamel is imported where a config is read round trip (`load_config_mapping` given a YAML)
    from ruamel.yaml import YAML

_Key = TypeVar("_Key", bound=Path)
"""A key's path as a reader takes it: names alone (`ConfigReader.word`), or with a list's index (`ConfigReader.get`)."""

_WARNINGS_MUTED = threading.Lock()
"""Held while ruamel's warnings are muted: `warnings.catch_warnings` saves and restores the process's filters, so
two threads muting at once could leave them muted for good, silencing the caller's own warnings."""


def _free_lock_in_child() -> None:
    """A process forked while another thread muted the warnings gets the lock free: that thread is not in it."""
    global _WARNINGS_MUTED
    _WARNINGS_MUTED = threading.Lock()


os.register_at_fork(after_in_child=_free_lock_in_child)

BOOLEAN_WORDS = {"true": True, "yes": True, "y": True, "on": True, "false": False, "no": False, "n": False, "off": False}
"""The words OmegaConf takes for a boolean key of Trinity's (any case; YAML 1.1's among them, which ruamel, reading
YAML 1.2, leaves as text)."""


class _OmegaConfLoader(UniqueKeys, pyyaml.SafeLoader):  # type: ignore[misc, unused-ignore]  # Any without types-PyYAML
    """PyYAML's safe loader as OmegaConf, and so Trinity, reads a config: the pure-Python one (libyaml's takes a
    tab after a colon, which Trinity refuses), YAML 1.1 (``010000`` is the octal 4096, ``on`` and ``yes`` are
    true, ``y`` and ``n`` are text), no timestamps (a date stays text), floats without a dot (``1e-5``) too,
    and a key given twice refused; it notes the anchors its aliases repeat (`aliased`)."""

    def __init__(self, stream: str):
        super().__init__(stream)
        self.aliased: set[str] = set()

    def compose_node(self, parent: Any, index: Any) -> Any:
        """PyYAML's node, noting the anchor an alias repeats."""
        if self.check_event(pyyaml.AliasEvent):
            self.aliased.add(self.peek_event().anchor)
        return super().compose_node(parent, index)


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


class _TrinityRead(NamedTuple):
    """A config's text as Trinity reads it (`_OmegaConfLoader`): its `data`, and the anchors its aliases repeat."""

    data: Any
    aliased: frozenset[str]


_TRINITY_READ = "Trinity config"
"""`parsed_once`'s kind for a config read as Trinity reads it (`_read_as_trinity`)."""


def _read_as_trinity(text: str) -> _TrinityRead:
    """The config `text` as Trinity reads it (`_OmegaConfLoader`), and the anchors its aliases repeat; `TableError`
    naming the key where an alias holds the mapping or list it is in, which OmegaConf cannot load
    (`_held_by_itself`)."""
    loader = _OmegaConfLoader(text)
    try:
        data = loader.get_single_data()
    finally:
        loader.dispose()
    if loader.aliased and (held := _held_by_itself(data)) is not None:
        alias, holder = (".".join(path) for path in held[:2])
        kind = "list" if isinstance(held[2], list) else "mapping"
        raise TableError(f"{alias} repeats {holder or 'the whole config'}, the {kind} that holds it (an alias, or a "
                         "<<: merge, inside its own anchor's value): a value that holds itself, which OmegaConf (and "
                         f"so Trinity) cannot load, as it recurses without end; give {alias} a value of its own")
    return _TrinityRead(data, frozenset(loader.aliased))


def _held_by_itself(data: Any) -> tuple[tuple[str, ...], tuple[str, ...], Any] | None:
    """The first path in `data` (a config as read) at which a mapping or list is inside itself (``extra: &x {b: *x}``:
    an alias inside its own anchor's value), that mapping's or list's own path, and it; None where none is."""
    walking: dict[int, tuple[str, ...]] = {}  # the mappings and lists on the way to the value walked: their paths
    done: set[int] = set()  # each walked once, so that aliases of aliases cost no more than the text
    stack: list[tuple[Any, tuple[str, ...], bool]] = [(data, (), False)]
    while stack:
        value, path, leaving = stack.pop()
        if leaving:
            del walking[id(value)]
            done.add(id(value))
        elif id(value) in walking:
            return path, walking[id(value)], value
        elif id(value) not in done and isinstance(value, Mapping | list):
            walking[id(value)] = path
            items = value.items() if isinstance(value, Mapping) else enumerate(value)
            stack.extend([(value, path, True), *reversed([(item, (*path, str(key)), False) for key, item in items])])
    return None


def _ruamel_errors(yaml: YAML | None) -> tuple[type[Exception], ...]:
    """ruamel's YAML error, where `yaml` (ruamel's round trip, imported by whoever made it) reads the config; none
    where PyYAML alone does, so that reading a config as Trinity does loads no ruamel."""
    if yaml is None:
        return ()
    from ruamel.yaml.error import YAMLError

    return (YAMLError,)


_UNKNOWN_YAML_1_DIRECTIVE = re.compile(r"^%YAML[ \t]+1\.(?![12](?![0-9]))[0-9]+(?![0-9.])", re.MULTILINE)
"""A ``%YAML 1.x`` directive of a minor version other than 1 and 2 (``%YAML 1.3``): Trinity's PyYAML reads it as any
YAML 1 document, ruamel's round trip asserts on it (``version minor part can only be 2 or 1``), so ruamel is given
``%YAML 1.2`` in its place, as it reads a config without a directive (the text written keeps the config's own)."""


def load_config_mapping(text: str, name: str, yaml: YAML | None = None) -> Any:
    """A Trinity config's text as nested mappings, or `ConfigError`, one line naming the file, for text that
    is not YAML or not a mapping, or holds a value that holds itself (`_held_by_itself`): as Trinity reads it
    (`_OmegaConfLoader`; within `parsing_once`, read once and the same mappings given to every caller, which none may
    change), or with `yaml`, ruamel's round trip, for a copy to patch (read anew: the patch changes it)."""
    check_types(("text", text, str), ("name", name, str))
    try:
        if yaml is None:
            data = parsed_once(_TRINITY_READ, text, _read_as_trinity).data
        else:
            with _WARNINGS_MUTED, warnings.catch_warnings():  # ruamel's warnings (a reused anchor) span lines
                warnings.simplefilter("ignore")
                data = yaml.load(_UNKNOWN_YAML_1_DIRECTIVE.sub("%YAML 1.2", text))
    except TableError as error:  # a key given twice, or one that is not a plain value
        raise ConfigError(f"{name}: {error}") from None
    except (RecursionError, ValueError) as error:  # a limit, or a scalar that cannot be built
        raise ConfigError(f"{name}: {yaml_limit(error) or 'malformed YAML: ' + ' '.join(str(error).split())}") from None
    except (pyyaml.YAMLError, *_ruamel_errors(yaml)) as error:
        at = yaml_error_place(error, text)
        problem = getattr(error, "problem", None) or str(error).strip().splitlines()[0]
        first = getattr(error, "context_mark", None)
        if problem == "second occurrence" and first is not None:  # PyYAML's anchor defined twice
            problem = f"{str(getattr(error, 'context', '')).split(';')[0]} (first on line {first.line + 1})"
        problem = " ".join(str(problem).split())
        said = yaml_tab_problem(error, text) or yaml_comma_fields_problem(error, text) or f"malformed YAML: {problem}"
        raise ConfigError(f"{name}: {at}{said}") from None
    if not isinstance(data, Mapping):
        kind = "an empty document" if data is None else "a list" if isinstance(data, list) else yaml_brief(data)
        raise ConfigError(f"{name}: a Trinity config is a mapping of sections (model, cluster, trainer, ...), got {kind}")
    return data


def aliased_anchors(text: str) -> frozenset[str]:
    """The anchors that aliases repeat (``*anchor``) in the config `text`, which `load_config_mapping` has read as
    Trinity reads it (its `ConfigError`s said): within the same `parsing_once`, from that read itself."""
    return parsed_once(_TRINITY_READ, text, _read_as_trinity).aliased


class ConfigReader:
    """Reads a Trinity config's values as Trinity does (interpolations resolved, types checked), naming the key
    in each `ConfigError`; the keys under `base` (an entry of a list, say), named from the config's top."""

    def __init__(self, data: Mapping[str, Any], name: str, environ: Mapping[str, str], base: Path = ()):
        self.data, self.name, self.environ, self.base = data, name, environ, base
        self.values = ConfigValues(data, environ, name)

    def where(self, path: Path) -> str:
        """`path` as messages name it: the config's name, then the dotted key."""
        return self.values.where((*self.base, *path))

    def get(self, path: Path) -> Any:
        """The value at `path` (interpolations resolved, those of sections above too), None when it or a section
        above is absent."""
        return self.values.get((*self.base, *path))

    def integer(self, path: tuple[str, ...], default: int | None = None, minimum: int = 1,
                maximum: int = MAX_TOKENS) -> int | None:
        """The whole number at `path` (a digit string too), within `minimum` to `maximum`; `default` where it is
        absent. One written otherwise (``8.0``) is told how to write it, or, out of range (``-2.0``), the bound."""
        value = self.get(path)
        if value is None:
            return default
        if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
            try:
                value = int(value)
            except ValueError:  # longer than Python converts (4300 digits)
                raise ConfigError(f"{self.where(path)}: {NUMBER_TOO_LONG}") from None
        shown: Any = value
        if isinstance(value, bool) or not isinstance(value, int):
            tokens = thousands_of_tokens(value) if isinstance(value, str) else None
            number = meant_whole_number(value)  # as the CLI's counts are refused: 8.0, 32_768
            if isinstance(tokens, int) or number is None or minimum <= number <= maximum:
                meant = whole_number_note(value)
                written = (f" (Trinity reads no thousands of 1024: write {tokens})" if isinstance(tokens, int)
                           else f" ({meant})" if meant else "")
                raise ConfigError(f"{self.where(path)} must be a whole number, got {yaml_brief(value)}{written}")
            value, shown = number, yaml_brief(value)  # -2.0: told its bound, which writing -2 would not mend
        if value < minimum:
            raise ConfigError(f"{self.where(path)} must be at least {minimum}, got {shown}")
        if value > maximum:
            raise ConfigError(f"{self.where(path)} must be at most {maximum}, got {shown}")
        return value

    def count(self, path: tuple[str, ...], default: int, minimum: int = 1) -> int:
        """A count of GPUs or nodes at `path` (`integer`, at most `MAX_GPUS`); `default` where it is absent."""
        value = self.integer(path, default, minimum, maximum=MAX_GPUS)
        return default if value is None else value

    def flag(self, path: tuple[str, ...]) -> bool:
        """The boolean at `path` (`boolean`); false where it is absent."""
        return self.boolean(path, self.get(path))

    def boolean(self, path: tuple[str, ...], value: Any) -> bool:
        """`value`, read at `path`, as Trinity (OmegaConf) reads a boolean (`omegaconf_boolean`); missing is
        false."""
        if value is None:
            return False
        read = omegaconf_boolean(value)
        if read is None:
            raise ConfigError(f"{self.where(path)} must be true or false, got {yaml_brief(value)}")
        return read

    def word(self, path: tuple[str, ...]) -> str | None:
        """The text at `path`, stripped (`text`); None where it is absent or blank."""
        return (self.text(path) or "").strip() or None

    def text(self, path: tuple[str, ...]) -> str | None:
        """The text at `path`; None where it is absent."""
        value = self.get(path)
        if value is None:
            return None
        if not isinstance(value, str):
            raise ConfigError(f"{self.where(path)} must be text, got {yaml_brief(value)}{unquoted_text_hint(value)}")
        return value


def omegaconf_boolean(value: Any) -> bool | None:
    """`value` as OmegaConf 2.3.0's bool field takes it (``BooleanNode._validate_and_convert_impl``,
    ``omegaconf/nodes.py:394`` to ``:414``): a boolean as it is; a whole number, false at 0 alone; text that Python's
    ``int()`` reads (spaces around it, a sign, ``_`` between digits) likewise; else one of `BOOLEAN_WORDS`, in any case
    but with no spaces around it. None where OmegaConf refuses it (other text, a float, anything else)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value != 0
    if not isinstance(value, str):
        return None
    try:
        return int(value) != 0
    except ValueError:  # not a whole number (or longer than Python converts, as in OmegaConf)
        return BOOLEAN_WORDS.get(value.lower())


def omegaconf_integer(value: Any) -> int | None:
    """`value` as OmegaConf 2.3.0's int field takes it (``IntegerNode._validate_and_convert_impl``,
    ``omegaconf/nodes.py:265`` to ``:274``): a whole number as it is, text that Python's ``int()`` reads (spaces
    around it, a sign, ``_`` between digits) as that number. None where OmegaConf refuses it: a boolean, a float
    (``8.0``, ``1e3``, ``.inf``), other text (``'8.0'``, ``'0x10'``), a list or a mapping."""
    if type(value) not in (int, str):
        return None
    try:
        return int(value)
    except ValueError:  # not a whole number (or longer than Python converts, as in OmegaConf)
        return None


def turned_off(value: Any) -> bool:
    """Whether a config's flag is off as Trinity (OmegaConf) reads it (`omegaconf_boolean`): false, YAML 1.1's
    ``no``, ``off`` and ``n`` in any case, or 0."""
    return omegaconf_boolean(value) is False


def sequence_counted_roles(flag: Callable[[Path], Any], version: TrinityVersion | None) -> frozenset[str]:
    """The roles (`ROLE_DYNAMIC_BATCH_KEYS`) whose passes run with dynamic batch sizes off on every release `version`
    may be, their keys read by `flag` (`turned_off`): verl then fills their micro-batches with a number of sequences
    and reads no token budget (Trinity 0.5.0 ``trainer/verl/dp_actor.py:103``, 0.6.0 ``verl_legacy/dp_actor.py:486``,
    verl 0.9.1 ``workers/engine/utils.py:108``). A role takes its own key where set (the rollout the actor's where its
    own is unset), else ``trainer.use_dynamic_bsz`` (true unset), as Trinity 0.5 does; Trinity 0.6 sets the actor's
    and the critic's to the trainer's, and on verl 0.8 or later every role's."""
    trainer_off = turned_off(flag(DYNAMIC_BATCH_KEYS[0]))
    if version != "0.5" and not trainer_off:  # Trinity 0.6 on verl 0.8 or later gives each role the trainer's
        return frozenset()

    def off(role: str) -> bool:
        if version == "0.6" and role in ("actor", "critic"):
            return True  # the trainer's, off
        own = flag(ROLE_DYNAMIC_BATCH_KEYS[role])
        if own is None and role == "rollout":
            own = flag(ROLE_DYNAMIC_BATCH_KEYS["actor"])
        return trainer_off if own is None else turned_off(own)

    return frozenset(role for role in ROLE_DYNAMIC_BATCH_KEYS if off(role))


def rollout_flag_left_none(flag: Callable[[Path], Any], version: TrinityVersion | None) -> bool:
    """Whether Trinity 0.6 on verl before 0.8 (a release `version` may be) leaves the rollout's own dynamic batch size
    flag none, its keys read by `flag`: neither it nor the actor's own is set (``set_if_none`` takes the actor's as
    written, before setting that to the trainer's: 0.6.0 ``trainer/verl_legacy/verl_config.py:692``, ``:701``), and
    ``compute_log_prob`` (``verl_legacy/fsdp_workers.py:1009``) hands verl 0.7.1 the none, which it reads as off
    (``workers/actor/dp_actor.py:453``, ``:466``): the actor's log-prob recompute runs in rows of the rollout's
    micro-batch size (`solver.trinity.config.micro_batch_counts`), whatever ``trainer.use_dynamic_bsz`` says; where
    its legacy trainer runs that recompute at all (`LEGACY_BYPASS_MODE_KEY` false: true, its default, takes the
    rollout's log-probs)."""
    return version != "0.5" and turned_off(flag(LEGACY_BYPASS_MODE_KEY)) and all(
        flag(ROLE_DYNAMIC_BATCH_KEYS[role]) is None for role in ("rollout", "actor"))


def recompute_may_run(get: Callable[[tuple[str, ...]], Any]) -> bool:
    """Whether the actor's recompute of the old log-probs may run where it reads the rollout's own token budget and
    micro-batch size (Trinity 0.5, and 0.6 on verl before 0.8: `solver.query.TrinityConfig.old_log_prob_recompute`),
    the config's keys read by `get` (`ConfigError` where one cannot be read): only with `LEGACY_BYPASS_MODE_KEY` false;
    unset, it is Trinity's default, true (``_RolloutCorrectionConfig``, ``verl_legacy/verl_config.py:340`` in 0.6.0),
    and none runs. One that cannot be read, or is no boolean (which the legacy trainer refuses as it starts), is taken
    as false: the pass is counted."""
    try:
        value = get(LEGACY_BYPASS_MODE_KEY)
    except ConfigError:
        return True
    return value is not None and omegaconf_boolean(value) is not True


def critic_offload_turned_off(path: tuple[str, ...], new: Any, old: Any) -> bool:
    """Whether a plan that sets the key at `path` to `new` turns off one of the PPO critic's offload flags
    (`OFFLOAD_FLAGS` under `CRITIC_MODEL_FSDP` or `CRITIC_ENGINE`) that a config holds on (`old`, as OmegaConf's bool
    field reads it: `omegaconf_boolean`)."""
    return (path[:-1] in (CRITIC_MODEL_FSDP, CRITIC_ENGINE) and path[-1] in OFFLOAD_FLAGS and new is False
            and omegaconf_boolean(old) is True)


def critic_engine_in_rows(flag: Callable[[Path], Any]) -> bool:
    """Whether Trinity 0.6 on verl 0.8 or later cuts a trained critic's passes by its engine's micro-batch sizes
    (`solver.query.CRITIC_ENGINE_MICRO_BATCH_SIZES`), its keys read by `flag`: its engine's own dynamic batch size flag
    (`CRITIC_ENGINE_DYNAMIC_KEY`) off, or unset beside the trainer's off (Trinity builds it as the trainer's), whatever
    `sequence_counted_roles` says of the critic's own passes (which follow the trainer's there)."""
    own = flag(CRITIC_ENGINE_DYNAMIC_KEY)
    return turned_off(own if own is not None else flag(DYNAMIC_BATCH_KEYS[0]))


def actor_update_in_rows(flag: Callable[[Path], Any], version: TrinityVersion | None) -> bool:
    """Whether the actor's update runs with dynamic batch sizes off (`sequence_counted_roles`, its keys read by `flag`)
    on some release `version` may be (None: Trinity 0.5, which reads the actor's own key where set, or 0.6, which sets
    it to the trainer's): verl then reads no token budget there and cuts each GPU's mini-batch into micro-batches of
    the actor's micro-batch size per GPU in rows, in order (Trinity 0.5.1 ``trainer/verl/dp_actor.py:114``, 0.5.2
    ``:119``, 0.6.0 ``trainer/verl_legacy/dp_actor.py:497``, verl 0.7.1's own ``workers/actor/dp_actor.py:565``:
    ``mini_batch.split``), so that for DPO a micro-batch holds whole pairs only where that is even (on verl before 0.8,
    Trinity doubles it: ``solver.trinity.checks._check_dpo_pairs``)."""
    return any("actor" in sequence_counted_roles(flag, release) for release in releases_may_be(version))


def releases_may_be(version: TrinityVersion | None) -> tuple[TrinityVersion, ...]:
    """The Trinity releases a config judged for `version` may run on: that one, or for None 0.5 and 0.6."""
    return ("0.5", "0.6") if version is None else (version,)


def prompt_response_and_length(mapping: Mapping[str, Any], name: str,
                               environ: Mapping[str, str]) -> tuple[int, int, int] | None:
    """A config's ``max_prompt_tokens``, ``max_response_tokens`` and ``max_model_len`` (None where a key is absent
    or unreadable)."""
    reader = ConfigReader(mapping, name, environ)
    prompt, response, length = (read_or_none(reader.integer, ("model", key))
                                for key in ("max_prompt_tokens", "max_response_tokens", "max_model_len"))
    return None if prompt is None or response is None or length is None else (prompt, response, length)


def unused_length(mapping: Mapping[str, Any], name: str, environ: Mapping[str, str]) -> str | None:
    """Where a config's ``max_prompt_tokens + max_response_tokens`` fall short of its ``max_model_len``: the
    sequences stay within the sum, whatever the length allows, in words (None where they reach it, or a key is
    absent or unreadable)."""
    keys = prompt_response_and_length(mapping, name, environ)
    if keys is None or keys[0] + keys[1] >= keys[2]:
        return None
    prompt, response, length = keys
    return (f"model.max_prompt_tokens {prompt} + model.max_response_tokens {response} = {prompt + response}, below "
            f"model.max_model_len {length}: no sequence uses the rest; raise max_response_tokens to train at the length")


class OneLimit(NamedTuple):
    """A config that sets one of ``model.max_prompt_tokens`` and ``max_response_tokens`` alone (`one_limit`): the key
    it sets (`key`, ``max_response_tokens``), that limit (`tokens`) and ``model.max_model_len`` (`length`)."""

    key: str
    tokens: int
    length: int

    @property
    def other(self) -> str:
        """The limit the config leaves unset, which Trinity fills: ``max_prompt_tokens`` for ``max_response_tokens``."""
        return "max_prompt_tokens" if self.key == "max_response_tokens" else "max_response_tokens"

    @property
    def kept(self) -> int:
        """The limit as Trinity keeps it: below the length (at most one less), the other taking the rest
        (`_check_model_len`, ``common/config_validator.py:550-566`` in 0.5.2, ``:605-621`` in 0.6.0)."""
        return min(self.tokens, self.length - 1)


def one_limit(mapping: Mapping[str, Any], name: str, environ: Mapping[str, str]) -> OneLimit | None:
    """Where a config sets one of ``model.max_prompt_tokens`` and ``max_response_tokens`` alone and its
    ``max_model_len`` (each readable): that limit and the length (`OneLimit`); None otherwise."""
    reader = ConfigReader(mapping, name, environ)
    prompt, response, length = (read_or_none(reader.integer, ("model", key))
                                for key in ("max_prompt_tokens", "max_response_tokens", "max_model_len"))
    if length is None or (prompt is None) == (response is None):
        return None
    return (OneLimit("max_prompt_tokens", prompt, length) if prompt is not None
            else OneLimit("max_response_tokens", response, length))


def limit_at_length_words(limit: OneLimit, length_words: str | None = None) -> str | None:
    """Where the one limit a config sets (`limit`) is not below its length: that Trinity lowers it to one token less
    and leaves the other limit one token, in words, with the length's `length_words` where it is not the config's
    key (``--len's 16384``) (no refusal: `_check_model_len` warns and loads the config, whose every prompt or
    response is then one token, a prompt truncated to it as ``model.enable_prompt_truncation``, on by default, has
    it); None where it is below."""
    if limit.tokens < limit.length:
        return None
    cut = ("to which every prompt is truncated (model.enable_prompt_truncation, on by default)"
           if limit.other == "max_prompt_tokens" else "at which the rollout stops every response")
    return (f"model.{limit.key} {limit.tokens} is not below {length_words or f'model.max_model_len {limit.length}'}, "
            f"and model.{limit.other} is unset: Trinity lowers it to {limit.kept} and leaves {limit.other} 1 token, "
            f"{cut}")


def prompt_room_words(limit: OneLimit) -> str | None:
    """Where a config sets ``model.max_response_tokens`` alone (`limit`), below its length: the room Trinity gives
    prompts (the rest of the length, `OneLimit.kept`), in words, for a length --write changed, whose response limit
    it keeps; None otherwise (a ``max_prompt_tokens`` alone leaves responses the rest, which the plan's length is
    for)."""
    if limit.key != "max_response_tokens" or limit.tokens >= limit.length:
        return None
    return (f"model.max_response_tokens {limit.tokens} kept, and model.max_prompt_tokens is unset: Trinity gives "
            f"prompts the rest of model.max_model_len {limit.length}, max_prompt_tokens = {limit.length} - "
            f"{limit.tokens} = {limit.length - limit.tokens}, and the rollout stops each response at {limit.tokens} "
            "tokens; raise max_response_tokens for longer responses")


def overlong_sequences(mapping: Mapping[str, Any], name: str, environ: Mapping[str, str]) -> tuple[str, int] | None:
    """Where a config's ``max_prompt_tokens + max_response_tokens`` exceed its ``max_model_len``: `overlong_words` and
    their sum (None where they do not, or a key is absent or unreadable)."""
    keys = prompt_response_and_length(mapping, name, environ)
    overlong = overlong_words(*keys) if keys is not None else None
    return None if keys is None or overlong is None else (overlong, keys[0] + keys[1])


def overlong_words(prompt: float, response: float, length: float, length_words: str | None = None) -> str | None:
    """Where ``max_prompt_tokens + max_response_tokens`` exceed ``max_model_len``, which Trinity's validator refuses
    (it raises on loading the config): the keys in words, with the length's `length_words` where it is not the
    config's key (``--len's 16384``); None where they do not."""
    if prompt + response <= length:
        return None
    return (f"model.max_prompt_tokens {shown_number(prompt)} + model.max_response_tokens {shown_number(response)} = "
            f"{shown_number(prompt + response)}, above {length_words or f'model.max_model_len {shown_number(length)}'}")


def read_or_none(read: Callable[[_Key], Any], path: _Key) -> Any:
    """A key read only for a note: what `read` gives, or None where it cannot be read (the note is skipped)."""
    try:
        return read(path)
    except ConfigError:
        return None


def trainer_strategy(given: str | None, mapping: Any, version: TrinityVersion | None) -> str:
    """The strategy Trinity's trainer runs: the config's `given` one, else its release's default: fsdp before 0.6,
    fsdp2 from 0.6 (the `version` given, or without it, a config with 0.6's keys: `trainer_level_offload`)."""
    if given:
        return given
    return "fsdp2" if version == "0.6" or (version is None and trainer_level_offload(mapping)) else "fsdp"


def unset_strategy_words(version: TrinityVersion | None) -> str:
    """What Trinity's trainer runs where ``trainer.trainer_strategy`` is unset (`trainer_strategy`), in words: with
    `version` 0.5 its fsdp alone; else both defaults, fsdp before 0.6 and 0.6's fsdp2 (``config.py:807`` in 0.6.0),
    as a line that holds for the former alone names them."""
    return "Trinity 0.5 takes fsdp" if version == "0.5" else "Trinity before 0.6 takes fsdp; 0.6, fsdp2"


def check_config_arguments(text: str, name: str, environ: Mapping[str, str], version: str | None
                           ) -> TrinityVersion | None:
    """The minor version of the Trinity release `version` (``0.6.0`` and ``v0.6.0`` are 0.6, as `plan` and
    ``--trinity-version`` read it: `trinity_release`; None: none named); `QueryError` unless a config's `text` and
    `name` are strings, `environ` a mapping (``os.environ``) and `version` a release rft-solver knows (or None)."""
    check_types(("text", text, str), ("name", name, str), ("environ", environ, Mapping))
    check_environ(environ)
    return trinity_release("version", version)


def lora_key_before_08(value: Callable[[tuple[str | int, ...]], Any]) -> tuple[str, ...] | None:
    """The first of `LORA_KEYS` that turns LoRA on (`turns_lora_on`) with Trinity 0.5, and 0.6 on verl before 0.8,
    for the config whose values `value` reads (None where unset or unreadable): verl 0.7.1 then takes the ref's
    log-probs from the actor without its adapter (``ref_in_actor``, ``trainer/ppo/ray_trainer.py:298``); None without
    LoRA."""
    return next((path for path in LORA_KEYS if turns_lora_on(path, value(path))), None)


def turns_lora_on(path: tuple[str, ...], value: object) -> bool:
    """Whether the value of the `LORA_KEYS` key `path` turns LoRA on: any adapter path, an empty one too (verl's
    ``lora_adapter_path is not None``, ``fsdp_workers.py:169`` in 0.5.2), a rank above 0 (``lora_rank > 0``; a
    quoted number as the typed config reads it) or a list of LoRA configs (not an empty one, nor one that is no list:
    Trinity refuses both, `_lora_configs_notes`)."""
    if value is None:
        return False
    if path == LORA_KEYS[2]:
        return True
    if isinstance(value, bool):
        return False
    if path == LORA_KEYS[1]:
        return (omegaconf_integer(value) or 0) > 0
    return isinstance(value, list) and len(value) > 0
