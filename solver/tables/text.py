"""One-line errors (and `Undecided`, a question left open) and the helpers that word them: printable text, names as
matched, brief (yaml_brief for a file's values), cut, numbers as shown, counted, and_more."""

from __future__ import annotations

import datetime
import difflib
import math
import numbers
import os
import re
import reprlib
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence, Sized
from collections.abc import Set as AbstractSet
from decimal import Decimal
from functools import lru_cache, wraps
from typing import Any, Generic, TypeVar, get_args


def require_printable(text: str) -> str:
    """`text`, if printable (no control characters, which would reach the terminal), else `ValueError`."""
    if not text.isprintable():
        raise ValueError(f"must be printable text (no control characters), got {text!r}")
    return text


class Undecided(Exception):
    """A question CP-SAT could not decide within its time limit: neither a plan nor the proof that none exists."""


class OneLineError(ValueError):
    """An error whose message is one line: line breaks in names quoted from the input are escaped."""

    def __init__(self, message: str) -> None:
        super().__init__(message.replace("\r", "\\r").replace("\n", "\\n"))


class TableError(OneLineError):
    """A table file that cannot be read or breaks the schema; the message is one line."""


class QueryError(OneLineError):
    """A request the tables cannot take as asked (unknown name, a GPU count with no table); one line."""


class RefusedNameError(QueryError):
    """A name the catalogue knows and refuses (a GPU type without bf16, a list of names it knows where one is asked,
    or a GPU type it knows with a count: ``a100x4``), or one longer than any name may be: no GPU type or model of
    one's own stands for it."""


class ListedNamesError(RefusedNameError):
    """A list of names the catalogue knows (``8B,14B``) where one name is asked for."""


def with_own_hint(error: QueryError, hint: str) -> str:
    """`error`'s message with `hint` (how to give a GPU type or model of one's own) after it, unless it refuses a
    name the catalogue knows (`RefusedNameError`), which no GPU type of one's own may take."""
    return f"{error}{hint}" if not isinstance(error, RefusedNameError) else str(error)


_Forms = TypeVar("_Forms")
_Held = TypeVar("_Held")


class ByIdentity(Generic[_Held]):
    """An object as a cache's key: by identity (the cache keeps it, so no other takes its id), where hashing all of
    it takes longer than the lookup saves, as a catalogue's does (an object equal to it but another is another
    key)."""

    __slots__ = ("held",)

    def __init__(self, held: _Held) -> None:
        self.held = held

    def __hash__(self) -> int:
        return id(self.held)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ByIdentity) and other.held is self.held

CACHED_NAME_LENGTH = 256
"""The longest name that the caches of names' forms keep (every catalogue's is far shorter): a longer one, a user's,
is worked out anew each time, so that many requests of long names do not fill the caches with them (4096 names of a
megabyte each held gigabytes)."""


def cached_names(forms: Callable[[str], _Forms]) -> Callable[[str], _Forms]:
    """`forms` with an LRU cache of the last 4096 names of at most `CACHED_NAME_LENGTH` characters: a cache of a
    function of names that users give, bounded however many and however long they are."""
    cached = lru_cache(maxsize=4096)(forms)

    @wraps(forms)
    def named(name: str) -> _Forms:
        return cached(name) if len(name) <= CACHED_NAME_LENGTH else forms(name)
    return named


HUB_CACHE_SNAPSHOT = re.compile(r"(?:^|[\\/])models--(?:[^\\/]*--)?([^\\/]+)[\\/]snapshots[\\/][^\\/]+$")
"""A snapshot's folder in Hugging Face's cache (``.../models--Qwen--Qwen3-8B/snapshots/<commit>``): its repository's
name is group 1 (a repository's name has no ``--``)."""


def model_name_from_path(model_path: str) -> str:
    """The model's name in a Hugging Face id or a local path: its last part (``Qwen/Qwen3-8B`` -> ``Qwen3-8B``), or,
    for a snapshot in Hugging Face's cache, whose last part is a commit, its repository's
    (``~/.cache/huggingface/hub/models--Qwen--Qwen3-8B/snapshots/<commit>`` -> ``Qwen3-8B``)."""
    path = model_path.strip().rstrip("/\\")
    snapshot = HUB_CACHE_SNAPSHOT.search(path)
    return snapshot.group(1) if snapshot else re.split(r"[\\/]", path)[-1]


@cached_names
def normalise(name: str) -> str:
    """A name as it is matched: any case, spaces and underscores as hyphens (``A100 80GB`` = ``a100-80gb``); cached,
    as every lookup by name normalises the catalogue's names again."""
    return re.sub(r"[\s_]+", "-", name.strip().casefold())


def guessed_name(wanted: str, names: Mapping[str, str]) -> str | None:
    """The name that `wanted` (normalised) was likely meant to be, among `names` (each known name or alias,
    normalised, to the name it stands for), or None where no single one is likely: a name the same but for letters
    that pass for digits (`digits_read`: h10o, H100), else one `_guessed_name` finds for it as written or with those
    letters read as digits (h2o: H20-96GB; a100-4o: A100-40GB), else one with two adjacent characters swapped
    (`_transposed`: h02, H20-96GB's alias h20; h20-69gb: H20-96GB; a memory size of another card, h20-141gb, is no
    slip, nor a model's other size, qwen3-41b), and only one: none where two names are as close."""
    read = digits_read(wanted)
    same = {entry for known, entry in names.items() if digits_read(known) == read}
    if same:
        return same.pop() if len(same) == 1 else None
    guess = _guessed_name(wanted, names) or (_guessed_name(read, names) if read != wanted else None)
    if guess is not None:
        return guess
    # Only where a known name is as long: a long name makes no copies of itself.
    swapped = {names[known] for known in _transposed(wanted) | _transposed(read) if known in names
               } if any(len(known) == len(wanted) for known in names) else set()
    return swapped.pop() if len(swapped) == 1 else None


_DIGIT_LIKE = re.compile(r"(?<=\d)[oil]|[oil](?=\d)")
"""A letter that passes for a digit (o for 0, i and l for 1) next to a digit."""


def digits_read(name: str) -> str:
    """`name` (in lower case) with each letter that passes for a digit next to a digit read as that digit, as far
    as the digits run (``h2o``: h20, ``a1oo``: a100, ``hl00``: h100; ``pool``, ``l40s`` with its letter l: 140s)."""
    while (read := _DIGIT_LIKE.sub(lambda letter: "0" if letter[0] == "o" else "1", name)) != name:
        name = read
    return name


_MODEL_SIZE_PART = re.compile(r"(?<![^-])\d+(?:\.\d+)?[bm](?=-|$)")
"""A model's size, a part of its own (``qwen3-14b``: 14b), whose digits `_transposed` keeps in their order."""


def _transposed(name: str) -> set[str]:
    """`name` with two adjacent different characters swapped, each way it has (``h02``: 0h2, h20; ``h20-69gb``:
    h20-96gb, ...), but for two digits of a model's size (``qwen3-41b`` is no slip of Qwen3-14B: another size)."""
    sizes = [range(size.start(), size.end()) for size in _MODEL_SIZE_PART.finditer(name)]
    return {name[:at] + name[at + 1] + name[at] + name[at + 2:] for at in range(len(name) - 1)
            if name[at] != name[at + 1] and not (name[at:at + 2].isdigit() and any(at in size for size in sizes))}


def _guessed_name(wanted: str, names: Mapping[str, str]) -> str | None:
    """`guessed_name`'s guess by the name's parts, as written."""
    # A guess only where one name extends the other (30B: 30B-A3B, whose base model's name extends it in turn;
    # Qwen3-8B-Instruct: Qwen3-8B; not by a memory size or kind: h20-141gb and h20-3e are not the H20-96GB; but
    # rather a name with every part of it and more: qwen3-4b-instruct is Qwen3-4B-Instruct-2507, and qwen3-4b-2507
    # either of two, so no guess, not Qwen3-4B), or ends
    # with it as its last part (70B: Llama-3.1-70B), or is it after a prefix (Meta-Llama-3.1-8B-Instruct, Hugging Face's
    # older id: llama-3.1-8b-instruct; not after a short form, as 8B ends it too), or is it with one keystroke doubled
    # (a1000: a100) or other hyphens (qwen-3-8b: qwen3-8b; tried first), or with its version left out or cut to the
    # major one (qwen8b: qwen3-8b, llama3-8b: llama-3.1-8b), or its size in millions (600m: 0.6b) or without its
    # decimal point after a zero (06b: 0.6b; not 17b, which may be another size), and only one does:
    # a name one character away otherwise is often another thing (v100 is not h100, 5B is not 8B). Ollama's tags
    # put a colon before the size (qwen3:32b, llama3.1:8b): they are tried as the name with a hyphen there.
    in_billions = _MILLIONS.sub(lambda size: f"{int(size[1]) / 1000:g}b", wanted.replace(":", "-"))
    in_billions = _SIZE_WITHOUT_POINT.sub(r"0.\1b", in_billions)
    if in_billions != wanted:
        return names.get(in_billions) or _guessed_name(in_billions, names)
    completions = sorted((known for known in names if known.startswith(wanted)), key=len)
    # Only where a known name is one key shorter: a long name makes no copies of itself.
    undoubled = {wanted[:at] + wanted[at + 1:] for at in range(1, len(wanted)) if wanted[at] == wanted[at - 1]
                 } if any(len(known) == len(wanted) - 1 for known in names) else set()
    # The name but for its hyphens first (l40-s: L40S-48GB's alias l40s, nearer than L40-48GB's l40 it extends).
    close = {entry for known, entry in names.items() if _unhyphenated(known) == _unhyphenated(wanted)} or (
        {names[known] for known in completions if not known.startswith(completions[0])} | {
            names[completions[0]]} if completions else (  # completions, last parts, extensions, then doubled keys
            {entry for known, entry in names.items() if known.endswith("-" + wanted)}
            or {entry for known, entry in names.items() if set(wanted.split("-")) < set(known.split("-"))
                and not any(_MEMORY_SIZE.fullmatch(part) for part in wanted.split("-"))}
            or {entry for known, entry in names.items()  # a memory size with a letter for a digit too (a100-4o)
                if wanted.startswith(known + "-") and not _MEMORY_SIZE.fullmatch(digits_read(wanted[len(known) + 1:]))}
            or {entry for known, entry in names.items()
                if wanted.endswith("-" + known) and not _is_short_form(known, entry)}
            or {entry for known, entry in names.items() if known in undoubled}
            or {entry for known, entry in names.items() if _unhyphenated(wanted) in _without_version(known)}))
    return close.pop() if len(close) == 1 else None


FLEET_NAME_CUTOFF = 0.8
"""How alike (difflib's ratio) a name must be to one of a fleet's to be taken for it with a slip (agent8b: agent-8b),
as a file's unknown field is taken for a field."""


def meant_fleet_name(wanted: str, names: Iterable[str]) -> str | None:
    """The one of a fleet's pool or job `names` that `wanted` (not among them) was likely meant to be: the same but for
    case, zeros before a number (``J8``, ``j8``: j08) and letters that pass for digits (`digits_read`: ``h2o``: h20),
    else the one alike at least `FLEET_NAME_CUTOFF` with the same
    numbers (``agent8b``: agent-8b; not job-2 for job-1, nor h200 for h100); None where none or more than one is."""
    names = list(names)
    close = [name for name in names if _fleet_form(name) == _fleet_form(wanted)]
    if not close:
        alike = {name.casefold(): name for name in names if _numbers(name) == _numbers(wanted)}
        close = [alike[near] for near in difflib.get_close_matches(wanted.casefold(), alike, n=2,
                                                                   cutoff=FLEET_NAME_CUTOFF)]
    return close[0] if len(close) == 1 else None


def _fleet_form(name: str) -> str:
    """A fleet's name as `meant_fleet_name` matches it first: in any case, with letters that pass for digits read as
    them and no zeros before a number (``H2O``, ``h020``: h20)."""
    return _unpadded(digits_read(name.casefold()))


def _unpadded(name: str) -> str:
    """`name` without the zeros before each number in it (``j08``: j8, ``pool-000``: pool-0)."""
    return re.sub(r"\d+", lambda number: number[0].lstrip("0") or "0", name)


def _numbers(name: str) -> list[str]:
    """The numbers in `name`, in order, without the zeros before them (``qwen3-08b``: 3, 8)."""
    return re.findall(r"\d+", _unpadded(name))


_MILLIONS = re.compile(r"(?<![\d.])(\d+)m(?=-|$)")
"""A model's size in millions of parameters (``600m``), which `guessed_name` tries in billions (``0.6b``)."""
_SIZE_WITHOUT_POINT = re.compile(r"(?<![\d.])0(\d+)b(?=-|$)")
"""A model's size in billions written without the decimal point after its zero (``06b``), which `guessed_name` tries
with it (``0.6b``): no size starts with a zero."""
_MEMORY_SIZE = re.compile(r"\d+(\.\d+)?g(i?b)?|\d{1,3}(\.\d+)?|(hbm)?\d+e")
"""A memory size or kind as a GPU's name ends with it (``141gb``, ``96g``, or bare: ``141``; ``3e``, ``hbm3e``: the
H20-3e is the H20 with 141GB of HBM3e): another card than the name before it."""
_VERSIONED = re.compile(r"([a-z][a-z-]*?)-?(\d+)((?:\.\d+)+)?(-.+)")
"""A name with a version after its family's (``llama-3.1-8b``: ``llama``, ``3``, ``.1``, ``-8b``)."""


def _without_version(name: str) -> set[str]:
    """`name` unhyphenated without the version after its family's, and, for a version with a minor part, with its
    major version alone (``llama-3.1-8b``: llama8b and llama38b); empty for a name without such a version."""
    versioned = _VERSIONED.fullmatch(name)
    if versioned is None:
        return set()
    family, major, minor, rest = versioned.groups()
    return {_unhyphenated(family + rest), *([_unhyphenated(family + major + rest)] if minor else [])}


def _is_short_form(alias: str, name: str) -> bool:
    """Whether `alias` is the end of `name` (``8B`` of Qwen3-8B), which guesses at a misspelt name pass over."""
    return normalise(name).endswith("-" + normalise(alias))


def _unhyphenated(name: str) -> str:
    """A name without its hyphens, underscores and spaces (qwen-3-8b and qwen3_8b are qwen38b)."""
    return re.sub(r"[-_ ]", "", name)


_FORM_FACTOR_AFTER = r"(?:-|(?<=\d)|(?<=\d[a-z]))"
"""Where a GPU's form factor follows its model: after a hyphen (``h100-sxm``, nvidia-smi's ``H100 PCIe``) or, as
people write it, right after the model's number or the one letter after it (``h100sxm``, ``a100sxm4``, ``h100pcie``,
``l40spcie``)."""
SMI_WORDS = re.compile(rf"^(nvidia|amd)-|(instinct|geforce|tesla)-|{_FORM_FACTOR_AFTER}(sxm\d*|pcie)(?=-|$)"
                       r"|(?:(?<=\dg)|(?<=\dgb))-hbm\d*e?(?=-|$)")
"""What nvidia-smi and amd-smi add to a GPU's name: the vendor, the product line, the form factor (hyphenated or
not: `_FORM_FACTOR_AFTER`), and the memory's kind after its size (``80GB HBM3``; not without a size: ``H20 HBM3e`` is
the 141GB H20, not the H20-96GB)."""


def says_pcie(name: str) -> bool:
    """Whether a GPU name says the PCIe form factor, as `SMI_WORDS` drops it (``h100-pcie``, ``h100pcie``, ``NVIDIA
    H100 PCIe``)."""
    return re.search(rf"(^|{_FORM_FACTOR_AFTER})pcie(?=-|$)", normalise(name)) is not None


_NVL_AFTER = re.compile(r"(?:(?<=\d)|(?<=\d[a-z]))-?nvl(?=-|$)")
"""An NVL board's word after its model, hyphenated or not (``h200-nvl``, ``h200nvl``, nvidia-smi's ``H200 NVL``): PCIe
cards that NVLink bridges join in small groups, not the SXM boards' all-to-all NVLink."""


def says_nvl(name: str) -> bool:
    """Whether a GPU name says an NVL board, as `_NVL_AFTER` finds it (``h200-nvl``, ``NVIDIA H200 NVL``)."""
    return _NVL_AFTER.search(smi_name_form(name)) is not None


_AMD_WORDS = re.compile(r"(?:^|[^a-z0-9])(?:amd|instinct|radeon|mi\d{2,3}[a-z]?)(?=[^a-z0-9]|$)")
"""What says a GPU name is AMD's, as a word of it: the vendor, its Instinct and Radeon lines, or an Instinct model
(``MI250X``, ``my-mi300x``, ``mi325x-256gb``; not ``mi300`` inside another word)."""


def says_amd(name: str) -> bool:
    """Whether a GPU name says an AMD card (`_AMD_WORDS`: ``my-mi300x``, ``AMD Instinct MI250``), which PyTorch runs
    through ROCm."""
    return _AMD_WORDS.search(normalise(name)) is not None


def smi_name_form(name: str) -> str:
    """A GPU name as nvidia-smi or amd-smi prints it, less the words `SMI_WORDS` names (``NVIDIA A100-SXM4-80GB``
    -> ``a100-80gb``, ``AMD Instinct MI300X`` -> ``mi300x``); other names come back normalised."""
    return SMI_WORDS.sub("", normalise(name))


@cached_names
def gpu_name_forms(name: str) -> tuple[str, ...]:
    """The forms a GPU name is matched by, in turn, wherever one is read (--gpu, a cluster file's pools, a cells
    file): `normalise`'s, then `smi_name_form`'s where it differs (``L40S PCIe``, ``l40spcie``: l40s), then with an NVL
    board's word hyphenated (``h100nvl``, ``H200 NVL``: h100-nvl, the H100 NVL's alias; h200-nvl, the alias that takes
    the H200 NVL as the SXM boards' GPU type, which a command notes). The word is not dropped: an NVL board the
    catalogue names no alias of (``a100 nvl``) is no GPU type it has."""
    smi = smi_name_form(name)
    return tuple(dict.fromkeys((normalise(name), smi, _NVL_AFTER.sub("-nvl", smi))))


_SIZE_IN_G = re.compile(r"(?<=\d)g$")
"""A memory size's ``G`` at the end of a GPU name (``a100-40g``), read as ``GB``."""


@cached_names
def sized_gpu_form(name: str) -> str:
    """A GPU name as `sized_gpu_names` are matched: normalised, a memory size's ``G`` at its end read as ``GB``
    (``RTX4090-24G``, ``rtx4090 24gb``: ``rtx4090-24gb``)."""
    return _SIZE_IN_G.sub("gb", normalise(name))


@lru_cache(maxsize=1024)
def sized_gpu_names(names: tuple[str, ...], memory_gb: int) -> frozenset[str]:
    """The forms a GPU type of `names` (its name and aliases) and `memory_gb` answers to besides those names, as
    `sized_gpu_form` reads a name given: each of them with or without its memory size after a hyphen or space
    (``-24GB``, ``-24G``, `` 24gb``): the same rule for every card, whichever aliases it lists."""
    return frozenset(sized_gpu_form(form) for name in names for form in (name, f"{name}-{memory_gb}gb"))


_MEMORY_SIZE_ALONE = re.compile(r"(\d+(?:\.\d+)?)(?:-?g(?:i?b)?)?")
"""A GPU name that is a memory size alone, in GB (``96gb``, ``96 GB``, ``141g``, or a bare number, ``96``): the
digits."""


def memory_size_alone(name: str) -> float | None:
    """The memory size in GB that a GPU name (`normalise`d) is alone (``96gb``, ``96``: 96.0), or None for any other
    name. A bare number is only guessed as a size: a name or alias that is one (``4090``) is matched first."""
    size = _MEMORY_SIZE_ALONE.fullmatch(name)
    return float(size[1]) if size else None


_COUNT_BEFORE = re.compile(r"(\d+)\s*[x\u00d7*]\s*(\S.*?)", re.IGNORECASE)
_COUNT_AFTER = re.compile(r"(\S.*?)\s*[x\u00d7*:]\s*(\d+)", re.IGNORECASE)
"""A GPU name given with a count, before it (``4xA100``, ``4 x a100``, ``4*a100``) or after it (``a100x4``,
``a100*4``, ``a100:4``)."""


def gpu_with_count(name: str) -> list[tuple[str, int]]:
    """The readings of `name` as a GPU name and a count given together (`_COUNT_BEFORE`, `_COUNT_AFTER`): ``a100x4``
    as ``("a100", 4)``; ``4090x2`` as ``("2", 4090)`` and ``("4090", 2)``; none for a name without a count. The
    names are not checked: a catalogue's name that looks so (``mi300x``) is matched first."""
    readings = [(given[2], int(given[1])) for given in [_COUNT_BEFORE.fullmatch(name.strip())] if given]
    return readings + [(given[1], int(given[2])) for given in [_COUNT_AFTER.fullmatch(name.strip())] if given]


def count_in_name(given: str, gpu_type: str, gpus: int, apart: str, count_words: str = "the count",
                  clash: str = "") -> str:
    """Why `given`, a name that gives `gpus` GPUs of `gpu_type` together (``a100x8``), is refused (with the `clash` of
    its count with another given beside it), and how to give the GPU type and `count_words` `apart`, in words."""
    return (f"{brief(given)} gives {counted(gpus, gpu_type + ' GPU')} in one name{clash}: give the GPU type and "
            f"{count_words} apart: {apart}")


def _listed(items: Sequence[str], conjunction: str) -> str:
    """`items` as a sentence lists them, the last two joined by `conjunction`: ``a``, ``a or b``, ``a, b or c``;
    empty for none."""
    return f"{', '.join(items[:-1])} {conjunction} {items[-1]}" if len(items) > 1 else "".join(items)


def either(names: Sequence[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``: one of `names`, in words."""
    return _listed(names, "or")


_Item = TypeVar("_Item", bound=Hashable)


def first_repeated(items: Iterable[_Item]) -> _Item | None:
    """The first item that occurs more than once, or None; linear time, so big files stay fast."""
    items = list(items)
    counts = Counter(items)
    return next((item for item in items if counts[item] > 1), None)


class _Brief(reprlib.Repr):
    """reprlib's cut repr, which picks its method by the type's name: any other mapping, a subclass of list
    or tuple, and any other set (ruamel's CommentedMap, CommentedSeq, ...) is cut as the builtin kind is,
    where reprlib would write it out whole; a numpy number as it is typed (``2.0``, not ``np.float64(2.0)``)."""

    def repr1(self, x: Any, level: int) -> str:
        if isinstance(x, numbers.Number) and type(x).__module__ == "numpy":
            return str(x)
        if not hasattr(self, "repr_" + "_".join(type(x).__name__.split())):
            for kind, builtin in ((Mapping, "dict"), (list, "list"), (tuple, "tuple"), (AbstractSet, "set")):
                if isinstance(x, kind):
                    return str(getattr(self, f"repr_{builtin}")(x, level))
        return super().repr1(x, level)


class _YamlBrief(_Brief):
    """`_Brief` in YAML's spelling, for a value a file gave: true, false, null, a date as written (``2024-01-01``),
    ``.inf`` and ``.nan``; text quoted as Python does (``'32k'``), which YAML reads back as the same text."""

    def repr1(self, x: Any, level: int) -> str:
        if isinstance(x, bool):
            return "true" if x else "false"
        if x is None:
            return "null"
        if isinstance(x, datetime.date):  # a datetime too: YAML's timestamp, as str() writes it
            return str(x)
        if isinstance(x, float) and not math.isfinite(x):
            return ".nan" if math.isnan(x) else ".inf" if x > 0 else "-.inf"
        return super().repr1(x, level)


def _cut_like_a_message(shown: _Brief) -> _Brief:
    """`shown` with the limits of a one-line message: three levels deep, six items of a list or mapping."""
    shown.maxlevel, shown.maxstring, shown.maxlong, shown.maxother = 3, 100, 5000, 100
    shown.maxlist = shown.maxtuple = shown.maxdict = shown.maxset = 6
    return shown


_BRIEF = _cut_like_a_message(_Brief())
_YAML_BRIEF = _cut_like_a_message(_YamlBrief())


class _JsonBrief(_YamlBrief):
    """`_YamlBrief` in JSON's spelling of the numbers that are not finite (``Infinity``, ``NaN``, as Python's json
    module reads and writes them), for a value a JSON file gave."""

    def repr1(self, x: Any, level: int) -> str:
        if isinstance(x, float) and not math.isfinite(x):
            return "NaN" if math.isnan(x) else "Infinity" if x > 0 else "-Infinity"
        return super().repr1(x, level)


_JSON_BRIEF = _cut_like_a_message(_JsonBrief())


def and_more(items: Sized, shown: int = 1) -> str:
    """``; and 3 more`` where `items` holds more than the `shown` first ones a message names; else empty."""
    return f"; and {len(items) - shown} more" if len(items) > shown else ""


JOBS_NAMED = 4
"""How many jobs a line that names jobs names before it counts the rest."""

EVERY_JOB = "all"
"""The name ``--required`` (the API's `required`) takes for every job of the fleet, unless one of its jobs is named
so."""


def named_jobs(jobs: Sequence[str], noun: str = "job") -> str:
    """Jobs (or other things, `noun`) by name, the first `JOBS_NAMED` of them, the rest counted: ``a, b, c, d and 2
    more jobs``."""
    more = len(jobs) - JOBS_NAMED
    return ", ".join(jobs[:JOBS_NAMED]) + (f" and {counted(more, f'more {noun}')}" if more > 0 else "")


def counted(number: int | Sequence[int], noun: str, written: Callable[[list[int]], str] | None = None) -> str:
    """``1 GPU``, ``4 GPUs``; of several numbers, ``1, 2 GPUs``, or as `written` words them (``1-3, 5 GPUs``)."""
    numbers = [number] if isinstance(number, int) else list(number)
    return f"{written(numbers) if written else ', '.join(map(str, numbers))} {noun}{'s' if numbers != [1] else ''}"


def shown_parameters(parameters_b: float) -> str:
    """A count of parameters given in billions, in words: ``32.8B``, ``0.6B`` at one decimal where that shows it; a
    tiny model's in millions or thousands (``12M``, ``4.2K``: whole at 10 or more), else whole (``520``), not
    ``0.0B``."""
    if round(parameters_b, 1) >= 0.1:
        return f"{parameters_b:.1f}B"
    count = parameters_b * 1e9
    for unit, size in (("M", 1e6), ("K", 1e3)):
        if count >= size:
            return f"{count / size:.{0 if round(count / size, 1) >= 10 else 1}f}{unit}"
    return f"{count:.0f}"


def consecutive_runs(values: Iterable[int]) -> list[list[int]]:
    """Sorted whole numbers grouped into runs of consecutive ones: ``[3, 5, 6, 7]`` -> ``[[3], [5, 6, 7]]``."""
    runs: list[list[int]] = []
    for value in values:
        if runs and value == runs[-1][-1] + 1:
            runs[-1].append(value)
        else:
            runs.append([value])
    return runs


def and_joined(items: Sequence[str]) -> str:
    """`items` as a sentence lists them: ``a``, ``a and b``, ``a, b and c``."""
    return _listed(items, "and")


def it_or_them(count: int) -> str:
    """The pronoun for `count` things: ``it`` for one, ``them`` for more."""
    return "it" if count == 1 else "them"


def empty_name(given: str, kind: str, example: str) -> str:
    """The line refusing an empty name (``''``, ``a100,``) where `given` (``''``; in code its keyword, ``gpu=''``)
    should give `kind` (``a GPU type``, ``a GPU type, or several separated by commas``) as `example` does (``a100``):
    the same words for every command and every API call."""
    return f"an empty name in {given}: give {kind} ({example})"


def brief(value: Any) -> str:
    """`value`'s repr, cut to 60 characters (a one-line message must stay one short line). Nested lists
    and mappings are cut as they are shown, so that YAML's aliases, which can nest a value a billion times
    in a few lines, cost no more than a short value."""
    return _cut_repr(_BRIEF, value)


BOUND_PROBLEMS = {
    "greater_than_equal": "must be at least {ge}",
    "greater_than": "must be above {gt}",
    "less_than_equal": "must be at most {le}",
    "less_than": "must be below {lt}",
}
"""Pydantic's bound errors in the words of a one-line message (`plain_words`)."""

PLAIN_PROBLEMS = {
    **BOUND_PROBLEMS,
    "too_short": "must list at least {min_length}",
    "too_long": "must list at most {max_length}",
    "string_pattern_mismatch": ("must be ASCII letters and digits (A-Z, a-z, 0-9), '.', '_' and '-', starting with a "
                                "letter or digit"),  # a job's name, which names its config file
    "int_type": "must be a whole number",
    "int_from_float": "must be a whole number",
    "float_type": "must be a number",
    "float_parsing": "must be a number",  # text in a field that takes a number written in quotes too
    "finite_number": "must be a finite number",
    "bool_type": "must be true or false",
    "string_type": "must be text",
    "string_too_long": "must be at most {max_length} characters",
    "string_too_short": "must not be empty",  # text is at least a character (`Text`)
    "dict_type": "must be a mapping",
    "list_type": "must be a list",
    "tuple_type": "must be a list",
    "model_type": "must be a mapping",
    "literal_error": "must be {expected}",  # one of a field's words (a job's critic, a pool's interconnects)
}
"""Pydantic's error types in the words of a one-line message (a name pattern is the only one used)."""


def plain_words(template: str, context: Mapping[str, Any]) -> str:
    """`template` (`BOUND_PROBLEMS`' words) filled with a pydantic error's `context`, its bounds as written (1000000,
    not 1e+06)."""
    return template.format(**{key: (str(int(value)) if value.is_integer() else f"{value:g}")
                              if isinstance(value, float) else value for key, value in context.items()})


def yaml_brief(value: Any) -> str:
    """A value a YAML or JSON file gave, as `brief` shows it but in the file's spelling: ``true``, ``null``,
    ``2024-01-01`` (Python's ``True``, ``None``, ``datetime.date(2024, 1, 1)`` are not what the user wrote)."""
    return _cut_repr(_YAML_BRIEF, value)


def yaml_flow_text(text: str) -> str:
    """`text` as YAML writes it within a flow mapping (``{model_config: ckpt/step-100}``), for a message to give as a
    file's value: plain where YAML reads it back as the same text, else quoted as PyYAML's `safe_dump` quotes it
    (``'#ckpt'``, ``'a: b'``, ``'*ckpt'``, ``'true'``, ``'8'``)."""
    import yaml  # only a message that gives a file's value pays for it: a usage error loads no YAML (test_lazycli_s67)

    dumped: str = yaml.safe_dump([text], default_flow_style=True, allow_unicode=True, width=float("inf"))
    return dumped.strip()[1:-1]  # the item alone, without the list's brackets


def json_brief(value: Any) -> str:
    """A value a JSON file gave (a config.json), as `yaml_brief` shows it but with JSON's ``Infinity`` and ``NaN``."""
    return _cut_repr(_JSON_BRIEF, value)


def _cut_repr(shown: reprlib.Repr, value: Any) -> str:
    """`value` as `shown` writes it, cut to 60 characters."""
    try:
        written = shown.repr(value)
    except ValueError:  # an integer longer than Python writes out (4300 digits)
        return f"a whole number of about {int(value.bit_length() * 0.30103)} digits"
    return cut(written)


def path_text(path: os.PathLike[str] | str) -> str:
    """`path` as text that JSON and YAML take whole: a byte of its name that is not UTF-8, which Python holds as a lone
    surrogate, written as its escape (``\\xe9``), as the CLI's lines write it."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


STANDARD_STREAM_PATH = re.compile(r"^/(dev/(stdout|stderr|stdin|fd/\d+)|proc/(self|\d+)/fd/\d+)$")
"""Names of the process's own streams (``/dev/stdin``; ``/dev/fd/63``, a shell's ``<(cat fleet.yaml)``)."""


def names_a_stream(path: os.PathLike[str] | str) -> bool:
    """Whether `path` names one of the process's own streams (`STANDARD_STREAM_PATH`): a file in no folder of the
    user's, which can be read once; written by rename, it would replace what the stream is redirected to."""
    return STANDARD_STREAM_PATH.match(os.path.normpath(path)) is not None


def cut(text: str) -> str:
    """`text` cut to 60 characters, as `brief` cuts a repr: for a name or value shown as it is given."""
    return text if len(text) <= 60 else text[:57] + "..."


def ascii_number(text: str) -> float:
    """A number written in ASCII, as a command line or a file's text gives it (float() reads the digits of every script,
    and 1_0 as 10); `QueryError` for anything else."""
    if not text.isascii() or "_" in text:
        raise QueryError(f"expected a number, got {brief(text)}")
    try:
        return float(text)
    except ValueError:
        raise QueryError(f"expected a number, got {brief(text)}") from None


def shown_number(value: float) -> str:
    """A number as people write it: a whole one in digits (1048576, not :g's 1.04858e+06; a float from 1e16 on is
    not written out), else as Python writes it, less its exponent's plus and leading zeros (1e-9, not 1e-09)."""
    if isinstance(value, int) or (float(value).is_integer() and abs(value) < 1e16):
        return str(int(value))
    return re.sub(r"e\+?(-?)0*(?=\d)", r"e\1", repr(float(value)))


_KIND_WORDS: dict[object, tuple[str, ...]] = {bool: ("True", "False"), int: ("a whole number",),
                                              float: ("a number",), type(None): ("None",), Callable: ("a function",)}
"""How `check_types` names the kinds a parameter accepts (any other class: ``a Catalog``)."""


TOKEN_PARAMETERS = frozenset({"max_model_len", "max_token_len_per_gpu"})
"""The parameters that hold lengths in tokens, where `check_types` reads a str's thousands of 1024 (``'128K'``) as
``--len`` does, to say what to pass."""


def percentage_hint(value: float) -> str:
    """For a safety margin past 1 that reads as a percentage's number (``3``), its fraction: `` (as a percentage, 3%
    is 0.03)``; else nothing: ``--margin``'s and the API's ``margin``'s words."""
    return f" (as a percentage, {value:g}% is {value / 100:g})" if 1 <= value < 100 else ""


def margin_as_number_hint(value: str) -> str:
    """For a safety margin given as text where the API takes a number, the number to pass: `` (a str: pass 0.03)``
    for ``"0.03"``, `` (a fraction as a number: pass 0.03 for 3%)`` for ``"3%"``, as ``--margin`` takes both; the
    form alone where it reads as neither."""
    written = value.strip()
    percent = written.endswith("%")
    try:
        fraction = float(written.removesuffix("%")) / (100 if percent else 1) if written.isascii() else None
    except ValueError:
        fraction = None
    if fraction is None or not 0 <= fraction < 1:
        return " (a fraction as a number: 0.03 for 3%)"
    return f" (a fraction as a number: pass {fraction:g} for {written})" if percent else f" (a str: pass {fraction:g})"


HOST_RAM_AS_NUMBER = " (GB per node as a number: 2048 for 2 TB)"
"""What a node's host memory written with its unit (``2TB``, as ``--host-ram`` takes it) is told where a number is
asked: the API's ``host_ram_gb``."""


MODELS_BUILT_FOR = {"fleet": "solver.Fleet", "weights": "solver.Weights", "memory": "solver.MemoryModel"}
"""The API's keywords that take a model a notebook may hold as a dict (a fleet's pools and jobs, cost weights, a memory
model's coefficients), with the model that builds it from one (`mapping_given_hint`)."""


def mapping_given_hint(name: str) -> str:
    """For a mapping given as `name` where it takes a model built from one (`MODELS_BUILT_FOR`), how to build it:
    `` (a mapping: pass solver.Weights.model_validate(it))``; else nothing."""
    return f" (a mapping: pass {MODELS_BUILT_FOR[name]}.model_validate(it))" if name in MODELS_BUILT_FOR else ""


FILES_LOADED_BY = {"memory": "solver.load_memory_model", "weights": "solver.load_weights"}
"""The API's keywords that take what a file holds once loaded (a memory model, as ``--memory-model FILE``; cost weights,
as ``--weights FILE``), with the function that loads it: a path given there is told to pass that function's result."""


def path_given_hint(name: str, value: object) -> str:
    """For a file's path (a str or a `Path`) given where the API takes what it holds: `name`'s loader
    (`FILES_LOADED_BY`: `` (a path: pass solver.load_weights('costs.yaml'))``), or, for a Trinity config's `text`, its
    text; else nothing."""
    if name == "text" and isinstance(value, os.PathLike):
        return f" (a path: pass the config's text, {_PATH_READ.format(brief(os.fspath(value)))})"
    if name not in FILES_LOADED_BY or not isinstance(value, str | os.PathLike):
        return ""
    return f" (a path: pass {FILES_LOADED_BY[name]}({brief(os.fspath(value))}))"


_PATH_READ = "Path({}).read_text()"
"""How a config's text is read from its file, as a hint names it."""


def config_path_given(text: str) -> str | None:
    """Where a Trinity config's `text` is a file's name alone (one word ending in ``.yaml``, ``.yml`` or ``.json``):
    what to pass instead, as a refusal says it; else None."""
    word = text.strip()
    if not word or any(character.isspace() for character in word) or not word.lower().endswith(
            (".yaml", ".yml", ".json")):
        return None
    return f"text is the config's YAML, not its file's name {brief(word)}: pass {_PATH_READ.format(brief(word))}"


def thousands_of_tokens(value: Any) -> Any:
    """A length written as text, as ``--len`` and a cluster file take it, in tokens: a whole number in ASCII digits
    with a sign at most (``32768``), or thousands of 1024 (``32k``, ``32 K``: 32768); any other value as it is. A
    number of more than `MOST_TOKEN_DIGITS` digits, past every length, reads as 10 to that power, unread (int()
    refuses 4300 digits)."""
    match = _WRITTEN_TOKENS.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        return value
    sign, digits, thousands = match.groups()
    number = int(digits) if len(digits) <= MOST_TOKEN_DIGITS else 10 ** MOST_TOKEN_DIGITS
    return (-number if sign == "-" else number) * (1024 if thousands else 1)


_WRITTEN_TOKENS = re.compile(r"\s*([+-]?)0*([1-9][0-9]*|0)(?:\s*([kK]))?\s*")
"""A length as `thousands_of_tokens` reads it: ASCII digits (no ``_``, which int() reads as nothing), a sign, a k."""
MOST_TOKEN_DIGITS = 12
"""The most digits of a length that `thousands_of_tokens` reads (leading zeros aside): more are past every length."""


def asked_tokens(value: Any) -> Any:
    """A length asked for in thousands, as `thousands_of_tokens` reads it (``32k``, ``32 K``: 32768), as a cluster
    file's job and `solver.plan`'s ``max_model_len`` take it; any other value as it is, a number in quotes
    (``'32768'``) too, to be refused as every number in quotes of a file is (YAML writes numbers bare), and as the API
    takes none."""
    thousands = isinstance(value, str) and value.rstrip()[-1:] in ("k", "K")
    return thousands_of_tokens(value) if thousands else value


def length_forms(value: Any) -> str:
    """The forms a length takes, for an error on `value` that is none of them (with why a length in millions, ``1m``,
    is not taken, or how to write one with digit separators, ``131_072``): one wording for ``--len`` and a cluster
    file's."""
    millions = millions_of_tokens_note(value)
    return f"tokens, or thousands of 1024: 32768 or 32k{f'; {millions}' if millions else ''}{rewritten_note(value)}"


_REWRITTEN_DIGITS = re.compile(r"\s*(\d{1,3}(?:,\d{3})+|\d+(?:_\d+)+|\d+)(?:(?<=\d)\.0*)?\s*")
"""A whole number written otherwise than in digits alone: with digit separators, thousands separated by commas
(``32,768``) or digits by underscores, as Python writes them (``131_072``), or with a zero fraction (``16.0``, as a
float prints it); none is taken, nor read as another number."""


def rewritten_whole_number(value: Any) -> int | None:
    """The whole number `value` writes otherwise than in digits alone (`_REWRITTEN_DIGITS`: ``131_072`` is 131072,
    ``16.0`` is 16; a file's float, ``16.0`` as YAML reads it, too), of at most `MOST_TOKEN_DIGITS` digits; None for
    any other value, and for digits alone."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 10 ** MOST_TOKEN_DIGITS:
        return int(value)
    match = _REWRITTEN_DIGITS.fullmatch(value) if isinstance(value, str) and value.isascii() else None
    digits = re.sub(r"[,_]", "", match[1]) if match and not value.strip().isdigit() else ""
    return int(digits) if digits and len(digits) <= MOST_TOKEN_DIGITS else None


def rewritten_note(value: Any) -> str:
    """For a whole number written otherwise than in digits alone (``32,768``, ``131_072``, ``16.0``:
    `rewritten_whole_number`), how to write it as a refusal of it ends: ``; write 131_072 as 131072``; "" for any
    other value."""
    number = rewritten_whole_number(value)
    return f"; write {str(value).strip()} as {number}" if number is not None else ""


_COUNT_WORDS = r"x|gpus?|cards?|[\u5361\u5f20\u5f35\u5757\u584a\u4e2a\u500b\u679a\uac1c\uc7a5]{1,2}"
"""The words `_COUNT_WORD` takes after a count: x, GPU(s), card(s), and the counters 卡, 张 (張), 块 (塊), 个 (個),
枚, 개 and 장, one or two of them (``8张卡``), written as escapes: the tool prints none of them."""
_COUNT_WORD = re.compile(rf"\s*(\d{{1,6}})\s*(?:{_COUNT_WORDS})\s*", flags=re.IGNORECASE)
"""A count written with a word that counts after it, which a count is given without: ``8 GPUs``, ``8x`` (as in ``8x
H100``), ``8卡`` or ``8张`` (Chinese), ``8枚`` (Japanese), ``8개`` (Korean)."""


def counted_number(value: Any) -> int | None:
    """The count `value` writes with a word that counts after it (`_COUNT_WORD`: ``8卡`` is 8); None for any other
    value."""
    match = _COUNT_WORD.fullmatch(value) if isinstance(value, str) else None
    return int(match[1]) if match else None


def meant_whole_number(value: Any) -> int | None:
    """The whole number `value` writes otherwise than in digits alone (`rewritten_whole_number`: ``8.0``,
    ``1,024``) or with a word that counts after it (`counted_number`: ``8卡``); None for any other value."""
    rewritten = rewritten_whole_number(value)
    return counted_number(value) if rewritten is None else rewritten


def whole_number_note(value: Any) -> str:
    """How to write `value`, a whole number written otherwise (`meant_whole_number`), where a whole number is asked:
    ``write 8.0 as 8`` (`rewritten_note`'s words), ``write 8`` for a count with a word after it (``8卡``); "" for any
    other value. The command line's counts, a Trinity config's and a cells or cluster file's whole numbers say it."""
    if rewritten_whole_number(value) is not None:
        return rewritten_note(value).removeprefix("; ")
    counted = counted_number(value)
    return "" if counted is None else f"write {counted}"


def millions_of_tokens_note(value: Any) -> str | None:
    """For a length in millions (``1m``, ``0.5M``), which no length takes (1M is 1000000 tokens to some tools, 1048576
    to others): why, and the same length in thousands of 1024 where it is whole (``1024k is 1048576 tokens``); None
    for any other value."""
    match = re.fullmatch(r"\s*(\d{1,6}(?:\.\d{1,6})?|\.\d{1,6})\s*[mM]\s*", value) if (
        isinstance(value, str) and value.isascii()) else None
    if match is None:
        return None
    thousands = Decimal(match[1]) * 1024
    written = (f"{int(thousands)}k is {int(thousands) * 1024} tokens" if thousands == thousands.to_integral_value()
               else "give the tokens")
    return f"M is not taken, 1M being 1000000 tokens to some tools and 1048576 to others: {written}"


def check_types(*values: tuple[str, object, Any]) -> None:
    """`QueryError` unless each (parameter, value, kind) value is of its kind: a class, or a union of them
    (``bool | None``); `int` and `float` take no bool, and `float` takes an int too. The message shows a
    builtin value (``'32k'``), or else its type (``a Catalog``), and, for a whole number written otherwise, the
    number to pass (`_whole_number_hint`); for a mapping where a model is taken, how to build it (`mapping_given_hint`);
    for LoRA targets given as a list, the names joined (`names_joined_hint`); for job names given as one str, the list
    (`names_listed_hint`); for a file's path where what it holds is asked, how to load it (`path_given_hint`)."""
    for name, value, kind in values:
        problem = type_problem(name, value, kind)
        if problem is not None:
            raise QueryError(f"{name} {problem}")


def type_problem(name: str, value: object, kind: Any) -> str | None:
    """What `check_types` says of `value`, given as `name`, where it is not of `kind`, after the name: ``must be a
    whole number, got 'abc' (tokens, or thousands of 1024: 32768 or 32k)``, as a pydantic model's own validator says
    it too (`solver.tables.schema.AskedTokens`); None where it is of `kind`."""
    kinds = _kinds(kind)
    if any(_is_kind(value, one) for one in kinds):
        return None
    accepted = either([word for one in kinds for word in _KIND_WORDS.get(one, (_with_article(one.__name__),))])
    hint = (_whole_number_hint(name, value) if int in kinds and float not in kinds
            else HOST_RAM_AS_NUMBER if name == "host_ram_gb" and isinstance(value, str)
            else margin_as_number_hint(value) if name == "margin" and isinstance(value, str)
            else mapping_given_hint(name) if isinstance(value, Mapping)
            else names_joined_hint(value) if name == "lora_targets"
            else names_listed_hint(value) if name == "required" else path_given_hint(name, value))
    return f"must be {accepted}, got {shown_value(value, kinds)}{hint}"


def names_listed_hint(value: object) -> str:
    """For names given as one str where a list or tuple of them is taken (`solver.place`'s ``required="job-a"``, or
    ``"a,b"`` as ``--required`` takes them), the list to pass: `` (a str: pass ['job-a'], the names in a list)``; else
    nothing."""
    names = [name.strip() for name in value.split(",") if name.strip()] if isinstance(value, str) else []
    return f" (a str: pass {names!r}, the names in a list)" if names else ""


def names_joined_hint(value: object, verb: str = "pass") -> str:
    """For module names given as a list or tuple (PEFT's ``target_modules=["q_proj", "v_proj"]``) where the API (or a
    cluster file's ``lora_targets``, `verb` ``give``) takes them separated by commas, the text to give: `` (a list:
    pass 'q_proj,v_proj', the names separated by commas)``; else nothing."""
    if not isinstance(value, list | tuple) or not value or not all(isinstance(name, str) for name in value):
        return ""
    return f" (a {type(value).__name__}: {verb} {','.join(value)!r}, the names separated by commas)"


def _whole_number_hint(name: str, value: object) -> str:
    """For a whole number written as a str (``'131072'``; for a length in tokens, `TOKEN_PARAMETERS`, thousands of
    1024 too: ``'128K'``) or as a whole float (``131072.0``), the number to pass: `` (a str: pass 131072)``; for any
    other str given as ``max_model_len``, which takes thousands (`asked_tokens`), the forms a length takes, in the
    words a cluster file's job is told them (`length_forms`); else nothing."""
    if type(value) is float and value.is_integer() and abs(value) < 1e16:  # a builtin one: numpy's are named so
        return f" (a float: pass {int(value)})"
    if type(value) is not str:
        return ""
    forms = f" ({length_forms(value)})" if name == "max_model_len" else ""
    if not value.isascii():
        return forms
    tokens = thousands_of_tokens(value) if name in TOKEN_PARAMETERS else value
    digits = re.fullmatch(r"\s*(\d{1,9})\s*", value)
    number = tokens if isinstance(tokens, int) else int(digits[1]) if digits else None
    return f" (a str: pass {number})" if number is not None else forms


def shown_value(value: object, accepted: tuple[Any, ...] = ()) -> str:
    """A value as a message shows it: a builtin one itself (``'32k'``), any other by its type (``a Catalog``; a
    numpy scalar with how to pass it where its builtin kind is one of `accepted`: ``a numpy int64 (pass
    int(...))``)."""
    kind = type(value)
    if kind.__module__ == "builtins":
        return brief(value)
    if kind.__module__ != "numpy":
        return _with_article(kind.__name__)
    shown = f"a numpy {kind.__name__.rstrip('_')}"  # bool_ before numpy 2
    builtin = (bool if kind.__name__.startswith("bool") else int if isinstance(value, numbers.Integral)
               else float if isinstance(value, numbers.Real) else None)
    if builtin is None or not (builtin in accepted or (builtin is int and float in accepted)):
        return shown
    return f"{shown} (pass {builtin.__name__}(...))"


def _with_article(name: str) -> str:
    """``a Catalog``, ``an Answer``."""
    return f"{'an' if name[:1] in tuple('AEIOUaeiou') else 'a'} {name}"


@lru_cache(maxsize=256)
def _kinds(kind: Any) -> tuple[Any, ...]:
    """The classes `kind` names: those of a union (``bool | None``), else `kind` itself (a cache: every public call
    checks its arguments' kinds)."""
    return get_args(kind) or (kind,)


def _is_kind(value: object, kind: type) -> bool:
    """Whether `value` is a `kind`, where a bool is no number and an int is a float."""
    if kind in (int, float) and isinstance(value, bool):
        return False
    return isinstance(value, (int, float) if kind is float else kind)
