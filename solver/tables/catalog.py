"""The catalogue: GPU types and models resolved by name, their cells, and the contradiction checks."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import NamedTuple, TypeVar, cast

from pydantic import BaseModel, Field

from solver.tables.bounds import CONFIG_SHAPE, MAX_ESTIMATED_GPUS, MAX_GPUS, MAX_NAME_CHARACTERS, NODE_GPUS
from solver.tables.inputs import Fleet, Pool
from solver.tables.peft_names import LoraTargets
from solver.tables.reading import API_FILE_READERS, FileReaders, given_path, load_cells
from solver.tables.schema import (
    ONE_TABLE_OF_TWO,
    SHAPE_TERMS,
    Frozen,
    GpuType,
    GpuWithoutBf16,
    Model,
    Setting,
    Shape,
    Table,
    TupleOf,
    cell_text,
)
from solver.tables.text import (
    ByIdentity,
    ListedNamesError,
    OneLineError,
    QueryError,
    RefusedNameError,
    TableError,
    and_joined,
    and_more,
    brief,
    check_types,
    count_in_name,
    counted,
    either,
    gpu_name_forms,
    gpu_with_count,
    guessed_name,
    memory_size_alone,
    model_name_from_path,
    normalise,
    shown_value,
    sized_gpu_form,
    sized_gpu_names,
)


class CountedGpu(NamedTuple):
    """A GPU type and a count given in one name (``a100x4``: `Catalog.counted_gpu`)."""

    given: str
    """The name as given (``a100x4``)."""
    name: str
    """Its GPU type's part, as written (``a100``)."""
    gpu_type: GpuType
    gpus: int
    """The count (``4``)."""

    def refused(self, option: str, apart: str, count_words: str = "the count", clash: str = "") -> str:
        """Why the name, given to `option` (``--gpu ``, ``gpu=``, or none), is refused (with the `clash` of its count
        with another given beside it: ``, but gpus_per_node says 4``), and how to give the GPU type and the count
        (`count_words`) `apart` (``--gpu a100 --gpus 4``), in words."""
        return option + count_in_name(self.given, self.gpu_type.name, self.gpus, apart, count_words, clash)

    def refused_in_pool(self, option: str, gpus_per_node: int, apart: Callable[[str], str]) -> str:
        """Why the name, a pool's GPU type given to `option`, is refused, and how to give the GPU type and the count
        per node apart: `apart` of the count in words (``8``; where the pool's `gpus_per_node` is another, which the
        words name, ``8 or 4, whichever a node has``), in words."""
        if gpus_per_node == self.gpus:
            return self.refused(option, apart(str(self.gpus)), "the count per node")
        either = f"{self.gpus} or {gpus_per_node}, whichever a node has"
        return self.refused(option, apart(either), "the count per node", f", but gpus_per_node says {gpus_per_node}")


class TableOrigin(NamedTuple):
    """Whose a table that speaks for a GPU type is, where not simply its own from the source document."""

    gpu: str | None
    """The GPU type whose table it is, where borrowed from another with the same memory; None for its own."""
    source: str | None
    """Where a table of measured cells (``--cells``) comes from, in words; None for the source document's."""


class Cell(Frozen, defer_build=True):
    """One documented cell, flattened: which GPU type, count, model and length, and its setting."""

    gpu: str
    gpus: int
    model: str
    max_model_len: int
    setting: Setting | None
    source: str = Field(description="where its table's numbers come from (`Table.source`, else the GPU type's)")
    section: str = Field(description="its table's heading")


_Entry = TypeVar("_Entry", bound=Model | GpuType)
_Named = Model | GpuType | GpuWithoutBf16


def _accepted(entries: tuple[_Entry, ...]) -> str:
    """The models or GPU types an error lists as accepted, without aliases, in one short line: the names that
    extend another as its variants (``Qwen3-8B(-Base)``), and names of one family with the same variants after
    its first (``Qwen3-0.6B/1.7B/8B/14B(-Base)``), where each is one part after the family's start (a name of more,
    ``RTX-6000-Ada-48GB``, is listed whole: ``RTX-6000-Ada-48GB/4090-24GB`` would read as one card)."""
    matched = [(entry, normalise(entry.name)) for entry in entries]  # each name normalised once

    def root(entry: _Entry, name: str) -> _Entry | None:
        """The shortest name that `entry`'s, `name` normalised, extends (``Qwen3-8B`` for ``Qwen3-8B-Base``), or
        None."""
        return min((other for other, other_name in matched if name.startswith(other_name + "-")),
                   key=lambda other: len(other.name), default=None)

    root_of = [(entry, root(entry, name)) for entry, name in matched]  # each entry's root, found once
    roots = [entry for entry, found in root_of if found is None]

    def starts(name: str) -> dict[str, int]:
        """The starts of `name` to a hyphen before a digit (``Qwen3-`` of ``Qwen3-30B-A3B``), any case, each with
        its length in `name` (normalising may change it: ``ß`` is ``ss``, two spaces one hyphen)."""
        return {normalise(name[:at + 1]): at + 1 for at in range(len(name) - 1)
                if name[at] == "-" and name[at + 1].isdigit()}

    starts_of = [(entry, starts(entry.name)) for entry in roots]  # each listed name's starts, found once

    def family(entry: _Entry, own: dict[str, int]) -> str:
        """The longest start of `entry`'s name (its starts: `own`) that another listed name's is too (``Qwen3-``),
        where one part of the name follows it, or its whole name."""
        shared = own.keys() & {start for other, others in starts_of if other is not entry for start in others}
        start = entry.name[:max(own[start] for start in shared)] if shared else entry.name
        return start if "-" not in entry.name[len(start):] else entry.name

    groups: dict[tuple[str, str], list[str]] = {}  # (family, variants): the names, the first whole, then the rest
    for entry, own in starts_of:
        variants = "|".join(other.name[len(entry.name):] for other, found in root_of if found is entry)
        start = family(entry, own)
        names = groups.setdefault((normalise(start), f"({variants})" if variants else ""), [])
        names.append(entry.name[len(start):] if names else entry.name)
    return ", ".join("/".join(names) + variants for (_, variants), names in groups.items())


def _one_asked_for(value: object) -> str:
    """For a list or tuple of names where one name is asked for, how to give it (its one name, or one at a time, as
    the command says of ``--gpu h100,h200``); else nothing."""
    if not isinstance(value, list | tuple) or not value or not all(isinstance(item, str) for item in value):
        return ""
    if len(value) == 1:
        return f": pass {brief(value[0])}"
    return f", which lists {len(value)} where one is asked for: give one, and ask for each in turn"


@lru_cache(maxsize=64)
def _entries_by_name(entries: ByIdentity[tuple[_Named, ...]]) -> Mapping[str, _Named]:
    """Each name and alias of `entries`, normalised, with the first entry that has it (cached: every model and GPU
    type a command names is looked up in a catalogue's entries, thousands of times in a planner's answer)."""
    by_name: dict[str, _Named] = {}
    for entry in entries.held:
        for known in (entry.name, *entry.aliases):
            by_name.setdefault(normalise(known), entry)
    return MappingProxyType(by_name)


def _named_entry(wanted: tuple[str, ...], entries: tuple[_Entry, ...]) -> _Entry | None:
    """The entry whose name or an alias (normalised) is the first of the `wanted` forms that one's is; else the GPU
    type whose name or an alias, with or without its memory size, is one of them as `sized_gpu_names` match them
    (``RTX4090-24G``: RTX-4090-24GB); else None."""
    by_name = cast("Mapping[str, _Entry]", _entries_by_name(ByIdentity(entries)))  # of `entries`: of their type
    named = next((by_name[form] for form in wanted if form in by_name), None)
    return named or next((entry for form in wanted for entry in entries if isinstance(entry, GpuType)
                          and sized_gpu_form(form) in sized_gpu_names((entry.name, *entry.aliases), entry.memory_gb)),
                         None)


def _family(gpu_type: GpuType) -> str:
    """The name `gpu_type` shares with its cards of other memory sizes: its own, less its size (A100-40GB and
    A100-80GB: ``a100``), as `sized_gpu_form` writes it."""
    return sized_gpu_form(gpu_type.name).removesuffix(f"-{gpu_type.memory_gb}gb")


def _meant_names(wanted: str, entries: tuple[_Entry, ...], refused: tuple[GpuWithoutBf16, ...]) -> list[str]:
    """What `wanted` (normalised), a name none of `entries` has, was likely meant to be: for a GPU's memory size
    alone (``96gb``), every GPU type with that memory as sold (H20-96GB and GH200-96GB; those without bf16,
    `refused`, are none); for a name that several GPU types have before their memory sizes (``gh200``), each of
    them (GH200-96GB and GH200-144GB); else the one name `guessed_name` finds, unless it could as well be a
    `refused` name (``rtx-6000``: the Quadro RTX 6000, without bf16, as much as the RTX 6000 Ada); else none."""
    size = memory_size_alone(wanted)
    sized = [entry.name for entry in entries if isinstance(entry, GpuType) and entry.memory_gb == size]
    if sized:
        return sized
    family = [entry.name for entry in entries
              if isinstance(entry, GpuType) and _family(entry) == sized_gpu_form(wanted)]
    if family:
        return family
    names = {normalise(known): entry.name for entry in entries for known in (entry.name, *entry.aliases)}
    refused_names = {normalise(known): entry.name for entry in refused for known in (entry.name, *entry.aliases)}
    meant = guessed_name(wanted, names) if guessed_name(wanted, refused_names) is None else None
    return [meant] if meant else []


_OTHER_SIZE = re.compile(r"(.+)-(\d+(?:\.\d+)?)gi?b")
"""A GPU name (as `sized_gpu_form` writes it) with a memory size after its name (``4090-48gb``): the name, the size."""


def _other_size_words(wanted: str, entries: tuple[_Entry, ...]) -> str:
    """Where `wanted` (normalised) is a catalogue GPU type's name, alias or family with a memory size none of that
    family's cards has (``4090-48gb``, ``a100-96gb``): another card, no guess, but that it is a GPU type of one's own:
    `` (the catalogue's RTX-4090-24GB has 24 GB, not 48: a card of other memory is a GPU type of your own)``; ""
    otherwise."""
    sized = _OTHER_SIZE.fullmatch(sized_gpu_form(wanted))
    if sized is None:
        return ""
    named = _named_entry((sized[1],), entries)
    gpu_types = [entry for entry in entries if isinstance(entry, GpuType)]
    family_name = _family(named) if isinstance(named, GpuType) else sized[1]
    family = [entry for entry in gpu_types if _family(entry) == family_name]
    if not family:
        return ""
    sizes = and_joined([f"{entry.memory_gb}" for entry in family])
    return (f" (the catalogue's {and_joined([entry.name for entry in family])} ha{'s' if len(family) == 1 else 've'} "
            f"{sizes} GB, not {sized[2]}: a card of other memory is a GPU type of your own)")


def _slip_of(written: str, known: str) -> bool:
    """Whether the GPU name `written` is `known` (both normalised) with a slip that `guessed_name` takes for another
    card's name but a file that gives the card's memory does not: a key struck twice over the next one (h880 for
    h800; not rtx-3090 for rtx-4090, a digit of its own), or its memory size in GiB for GB (h800-80gib)."""
    if written.endswith("gib") and written[:-3] + "gb" == known:
        return True
    if len(written) != len(known):
        return False
    differ = [at for at, (mine, theirs) in enumerate(zip(written, known, strict=True)) if mine != theirs]
    if len(differ) != 1:
        return False
    at = differ[0]
    return written[at] in written[at - 1:at] + written[at + 1:at + 2]


def _model_name_forms(given: str) -> tuple[str, ...]:
    """The form a model's name is matched by: a Hugging Face id's or a path's last part, normalised."""
    return (normalise(model_name_from_path(given)),)


def _refuse_too_long(kind: str, name: object) -> None:
    """`RefusedNameError` for a `name` longer than `MAX_NAME_CHARACTERS`, which no entry has."""
    if isinstance(name, str) and len(name) > MAX_NAME_CHARACTERS:
        raise RefusedNameError(f"{kind} {brief(name)} is {len(name)} characters long; a {kind} name is at most "
                               f"{MAX_NAME_CHARACTERS}")


ONE_ASKED_FOR = "where one is asked for: give one, and ask for each in turn"
"""How a refusal of names the catalogue knows, given together where one is asked for (``a100,h20``), ends."""
POOL_TAKES_ONE = "where a pool takes one: give each GPU type its own pool"
"""`ONE_ASKED_FOR`, for a cluster pool's ``gpu``."""


def _find_entry(kind: str, name: str, entries: tuple[_Entry, ...], forms: Callable[[str], tuple[str, ...]],
                refused: tuple[GpuWithoutBf16, ...] = (), one_asked_for: str = ONE_ASKED_FOR) -> _Entry:
    """The entry that `name` names in one of its `forms` (and each name of a list that `name` gives, which is
    refused, ending with `one_asked_for`: `RefusedNameError`); `QueryError` naming `name`, with what its last form was
    likely meant to be (`_meant_names`)."""
    if not isinstance(name, str):
        if isinstance(name, Model | GpuType):  # a config.json's model or a GPU type of your own: its name, and where
            added = "with_model(model)" if isinstance(name, Model) else "with_gpu_types([gpu_type])"
            raise QueryError(f"a {kind} is named by a string, got a {type(name).__name__}: pass its name, "
                             f"{brief(name.name)}, with catalog=catalog.{added}")
        raise QueryError(f"a {kind} is named by a string, got {shown_value(name)}{_one_asked_for(name)}")
    listed = [_named_entry(forms(part), entries) for part in name.split(",")] if "," in name else []
    if listed and all(listed):  # a list where one is asked (as solve map's --model takes them), even where its
        listed_names = ", ".join(entry.name for entry in listed if entry)  # path form names its last: not a typo
        raise ListedNamesError(f"{kind} {brief(name)} lists {len(listed)} ({listed_names}) {one_asked_for}")
    wanted = forms(name)
    found = _named_entry(wanted, entries)
    if found is not None:
        return found
    accepted = _accepted(entries)
    short = min(((alias, e.name) for e in entries for alias in e.aliases), key=lambda pair: len(pair[0]), default=None)
    accepted += f"; short forms such as {short[0]} for {short[1]} too" if short else ""
    meant = _meant_names(wanted[-1], entries, refused)
    guess = f" (did you mean {either(meant)}?)" if meant else _other_size_words(wanted[-1], entries)
    raise QueryError(f"unknown {kind} {brief(name)}{guess}; accepted: {accepted}")


def vouches_for(table_gpus: int, gpus: int, most: int = MAX_ESTIMATED_GPUS) -> bool:
    """Whether a table for `table_gpus` GPUs may vouch for a plan on `gpus` GPUs: its own count, or more GPUs than
    a table of two or more (one GPU has no collective-communication buffers), up to `most` (the planner's
    `MAX_ESTIMATED_GPUS`; the physics, which the contradiction check applies, has no such limit)."""
    return table_gpus == gpus or 1 < table_gpus < gpus <= most


def says_failures(cell: Setting | None, gpus: int) -> bool:
    """Whether a cell on `gpus` GPUs says that the settings before it in the order cells are read in ran out of
    memory: ``-``, or a setting of that order; not Offload without Env, nor an SP degree whose groups span nodes of
    `NODE_GPUS`, which say only that they trained (as the planner's `failed_settings` reads them)."""
    return cell is None or not ((cell.offload and not cell.env) or (gpus > NODE_GPUS and NODE_GPUS % cell.sp))


def _longer_contradictions(where: str, gpus: int, column: Sequence[tuple[int, Setting | None]]) -> list[str]:
    """Where a model's cells on `gpus` GPUs (length, setting or None for ``-``, by length) say a setting, or ``-``,
    at a length (`says_failures`) while a setting earlier in the escalation order trains at a longer one, in words
    prefixed by `where`. Only a cell that some longer one undercuts is compared with each longer one: linear in a
    column that agrees."""
    least_after: list[tuple[int, int, int] | None] = [None] * len(column)  # the least key of longer cells that train
    least = None
    for index in range(len(column) - 1, -1, -1):
        least_after[index] = least
        setting = column[index][1]
        if setting is not None and (least is None or setting.escalation_key < least):
            least = setting.escalation_key
    return [f"{where}: {cell_text(setting)} at {length} but {later.label} trains at the longer {longer} (memory "
            "only grows with the length)"
            for index, (length, setting) in enumerate(column)
            if (least_key := least_after[index]) is not None and (setting is None or least_key < setting.escalation_key)
            and says_failures(setting, gpus)
            for longer, later in column[index + 1:]
            if later is not None and (setting is None or later.escalation_key < setting.escalation_key)]


def _candidates_by_count(gpu_type: GpuType, others: Sequence[GpuType]) -> tuple[dict[int, list[Table]], dict[int, str]]:
    """The tables `gpu_type` may plan with, by GPU count (its own first, then those of `others`, the GPU types with
    its memory), and the name of the GPU type each borrowed table comes from, by the table's id."""
    candidates = {count: [table for table in (*gpu_type.tables, *(t for o in others for t in o.tables))
                          if table.gpus == count] for count in {t.gpus for t in gpu_type.tables}
                  | {t.gpus for o in others for t in o.tables}}  # the GPU type's own first, as planned
    origin = {id(table): other.name for other in others for table in other.tables}
    return candidates, origin


def _twin_cell_differences(gpu_type: GpuType, table: Table, shape_of: Mapping[str, Shape]) -> list[str]:
    """Where two models of one shape in `table` have different cells in a row, in words."""
    found = []
    first_of_shape: dict[Shape, str] = {}
    for model in table.models:
        twin = first_of_shape.setdefault(shape_of[model], model)
        found += [f"{gpu_type.name}, {counted(table.gpus, 'GPU')}: {twin} and {model} differ at "
                  f"{row.max_model_len}: {cell_text(row.setting(twin))} and {cell_text(row.setting(model))} "
                  "(they have one shape, and memory depends on the shape alone)"
                  for row in table.rows if twin != model and row.setting(twin) != row.setting(model)]
    return found


def _wider_table_contradictions(
    gpu_type: GpuType, table: Table, model: str, column: Sequence[tuple[int, Setting | None]],
    candidates: Mapping[int, list[Table]], origin: Mapping[int, str], shape_of: Mapping[str, Shape],
) -> list[str]:
    """Where `model`'s `column` of `table` trains a setting at a length while the table for more GPUs that the
    planner takes for it (of `candidates`, vouched for) names a later setting, or ``-``, there or at a shorter length
    that falls to that row (after the row before it): in words."""
    found = []
    wider_counts = (count for count in candidates if count > table.gpus and vouches_for(table.gpus, count, MAX_GPUS))
    for more in sorted(wider_counts):
        # The table for more GPUs the planner takes for the model: the first naming one of its shape.
        wider = next((t for t in candidates[more] if any(shape_of[name] == shape_of[model] for name in t.models)), None)
        if wider is None:
            continue
        whose = f" (the {origin[id(wider)]}'s table)" if id(wider) in origin else ""
        for index, (length, setting) in enumerate(column):
            if setting is None or more % setting.sp:
                continue
            shorter = column[index - 1][0] if index else 0  # the lengths after it fall to this row
            # the same length first, then the shorter ones that fall to this row
            for other in reversed([row for row in wider.rows if shorter < row.max_model_len <= length]):
                at = other.max_model_len
                falls = "" if at == length else f" (at {length}, the row {at} falls to)"
                for twin in (name for name in wider.models if shape_of[name] == shape_of[model]):
                    there = other.setting(twin)  # the model's own cell, or one of its shape's
                    if there is None or (says_failures(there, more) and there.escalation_key > setting.escalation_key):
                        shaped = "" if twin == model else f" ({twin}, of its shape)"
                        found.append(f"{gpu_type.name}, {model} at {at}: {setting.label} trains on "
                                     f"{counted(table.gpus, 'GPU')}{falls} but {more} GPUs{whose} need "
                                     f"{cell_text(there)}{shaped} (more GPUs only shard the states further)")
    return found


def _shape_value(value: object) -> str:
    """A term of `Model.shape` as a config.json writes it (``true``, ``151669``, ``128, 8, 768``)."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    return ", ".join(map(str, value)) if isinstance(value, tuple) else str(value)


class Catalog(Frozen):
    """Everything the tables say: models and GPU types with their documented tables."""

    models: TupleOf[Model]
    gpu_types: TupleOf[GpuType]
    without_bf16: TupleOf[GpuWithoutBf16] = Field(default=(), validate_default=True)
    """GPU types refused by name: they have no bf16 arithmetic, which the training planned here runs in."""

    def model(self, name: str) -> Model:
        """Resolve a model name or alias (``4B``, ``qwen3-4b``) of any case; a Hugging Face id or a path
        (``Qwen/Qwen3-4B``) by its last part."""
        _refuse_too_long("model", name)
        return _find_entry("model", name, self.models, _model_name_forms)

    def gpu(self, name: str, with_count: Callable[[CountedGpu], str] | None = None,
            one_asked_for: str = ONE_ASKED_FOR) -> GpuType:
        """Resolve a GPU type name or alias (``a100``, ``H20``) of any case, or the name nvidia-smi or amd-smi
        prints (``NVIDIA A100-SXM4-80GB``, ``NVIDIA H100 80GB HBM3``), its form factor hyphenated or not
        (``l40s-pcie``, ``l40spcie``): `gpu_name_forms`; a name or alias with its memory size after it
        (``RTX4090-24G``, ``A100 40G``: `sized_gpu_names`); `QueryError` for a GPU type without bf16
        (`refuse_without_bf16`), or an unknown name: `ListedNamesError` ending with `one_asked_for` where it is names
        of GPU types, apart by commas (``a100,h20``) or in one word (`gpus_in_one_word`: ``h200 mi300x``);
        `RefusedNameError` with `with_count`'s words where it is a GPU type with a count (``a100x4``:
        `counted_gpu`), or one of more than `MAX_NAME_CHARACTERS`."""
        _refuse_too_long("GPU", name)
        self.refuse_without_bf16(name)
        try:
            return _find_entry("GPU", name, self.gpu_types, gpu_name_forms, refused=self.without_bf16,
                               one_asked_for=one_asked_for)
        except RefusedNameError:
            raise
        except QueryError:
            if isinstance(name, str) and (apart := self.gpus_in_one_word(name)):
                found = and_joined([self.gpu(part).name for part in apart])
                raise ListedNamesError(f"GPU {brief(name)} names {len(apart)} GPU types in one word ({found}), "
                                       f"{one_asked_for}") from None
            if with_count is None or not isinstance(name, str) or (found_counted := self.counted_gpu(name)) is None:
                raise
            raise RefusedNameError(with_count(found_counted)) from None

    def gpus_in_one_word(self, name: str) -> tuple[str, ...]:
        """The names `name`, a GPU name the catalogue lacks, gives apart by spaces or semicolons in one word, where
        each names a GPU type it has (``'h200 mi300x'``: h200 and mi300x, which was told: did you mean H200-141GB?);
        empty otherwise (``'a100 40gb'`` is the A100-40GB; ``'h100 h2o'``: none, h2o names none)."""
        parts = tuple(re.split(r"[\s;]+", name.strip()))
        if len(parts) < 2 or any(_named_entry(gpu_name_forms(part), self.gpu_types) is None for part in parts):
            return ()
        return parts

    def sized_gpu(self, name: str, memory_gb: int) -> GpuType | None:
        """The other GPU type of `memory_gb` GB in the family of the one `name` names (`_family`: ``a100`` of 40 GB:
        A100-40GB, the card of that size where ``a100`` alone names the A100-80GB; ``a100-40gb`` of 80 GB:
        A100-80GB); None where there is none, or `name` names no GPU type."""
        with contextlib.suppress(QueryError):
            named = self.gpu(name)
            return next((gpu_type for gpu_type in self.gpu_types if gpu_type.memory_gb == memory_gb
                         and gpu_type.name != named.name and _family(gpu_type) == _family(named)), None)
        return None

    def counted_gpu(self, name: str) -> CountedGpu | None:
        """The GPU type and the count that `name`, a GPU name the catalogue lacks, gives together (``a100x4``:
        `gpu_with_count`'s first reading whose GPU part the catalogue has); None where it gives none."""
        for gpu, count in gpu_with_count(name):
            try:
                return CountedGpu(name, gpu, self.gpu(gpu), count)
            except QueryError:
                continue
        return None

    def meant_gpu_type(self, name: str, memory_gb: int | None = None) -> str | None:
        """What a GPU name the catalogue lacks (`name`, a cells file's) was likely meant to be, as --gpu's guess
        says it (`_meant_names`): the one GPU type `guessed_name` finds (H10O, with a letter O for a zero, h1000:
        H100-80GB; a100-80: A100-80GB; not RTX-3090 for RTX-4090, another card), or, for a memory size alone, the
        GPU types with it in words (``96gb``: ``H20-96GB or GH200-96GB``); else, of those with `memory_gb` (the
        file's), the one whose name or alias it is with a slip (`_slip_of`: H880 or H800-80GiB, H800-80GB); None for
        a name the catalogue has in one of its forms (h100-80g, an alias of H100-80GB; l40spcie), or one close to
        none of them."""
        forms = gpu_name_forms(name)
        if _named_entry(forms, self.gpu_types) is not None:
            return None
        meant = _meant_names(forms[-1], self.gpu_types, self.without_bf16)
        slipped = {gpu.name for gpu in self.gpu_types if gpu.memory_gb == memory_gb
                   for known in (gpu.name, *gpu.aliases) if _slip_of(forms[-1], normalise(known))}
        return either(meant) or (slipped.pop() if len(slipped) == 1 else None)

    def gpu_type_named(self, name: str) -> str | None:
        """The name of the GPU type `name` is a name or alias of in one of its forms (``h100``: H100-80GB), or
        None."""
        entry = _named_entry(gpu_name_forms(name), self.gpu_types)
        return entry.name if entry is not None else None

    def refuse_without_bf16(self, name: str) -> None:
        """`QueryError` where `name` (in any case, or as nvidia-smi prints it) names a GPU type without bf16."""
        if not isinstance(name, str):
            return
        wanted = set(gpu_name_forms(name))
        if wanted.isdisjoint(_entries_by_name(ByIdentity(self.without_bf16))):  # most names: none of theirs
            return
        for refused in self.without_bf16:
            if wanted & {normalise(known) for known in (refused.name, *refused.aliases)}:
                article = "an" if refused.name[0] in "AEFHILMNORSX" else "a"  # as the letter is said: an RTX
                raise RefusedNameError(
                    f"{brief(name)} is {article} {refused.name}, which has no bf16 (compute capability "
                    f"{refused.compute_capability}; bf16 needs 8.0, Ampere or newer), and the verl/FSDP training "
                    "rft-solver plans runs in bf16: plan for a GPU type that has it")

    def with_model(self, model: Model) -> Catalog:
        """This catalogue with one more model (from ``--model-config``). Of the same shape as a model its
        name names (in any case), it is that model, with the config's native context and RoPE scaling, and the RoPE
        base and rotated share vLLM would lose (its tables apply); of another shape, it is renamed
        ``NAME (config shape)``, so that no table of the model it names is taken for it. Its aliases (its folder's
        name) only find a model of its shape, and are not kept: two checkpoints in folders of one name are two
        models. Of a catalogue model's shape under another name (a fine-tuned checkpoint), that model's cells stand
        for it where no table names it (`Model.tables_of`), and its parameter count is that model's (the config's,
        computed from the shapes, differs in the fourth digit), so that its memory is that model's."""
        check_types(("model", model, Model))

        def names(entry: Model) -> set[str]:
            return {normalise(name) for name in (entry.name, *entry.aliases)}

        named = [m for m in self.models if normalise(model.name) in names(m)]
        if not named:
            aliases = {normalise(alias) for alias in model.aliases}
            named = [m for m in self.models if aliases & names(m) and m.shape == model.shape][:1]
        if any(m.shape != model.shape for m in named):
            model, named = model.model_copy(update={"name": model.name + CONFIG_SHAPE, "aliases": ()}), []
        elif named:  # the catalogue's model, which its tables know by its name (``qwen3-8b`` is Qwen3-8B),
            # with the context the config gives it
            model = named[0].model_copy(update={"native_context": model.native_context,
                                                "rope_scaling": model.rope_scaling,
                                                "config_yarn_factor": model.config_yarn_factor,
                                                "vllm_context": model.vllm_context,
                                                "vllm_length_key": model.vllm_length_key,
                                                "vllm_skips_rope_factor": model.vllm_skips_rope_factor,
                                                "router_logits_output": model.router_logits_output,
                                                "vllm_sliding_window": model.vllm_sliding_window,
                                                "vllm_refusal": model.vllm_refusal,
                                                "vllm_rope_theta_lost": model.vllm_rope_theta_lost,
                                                "rope_theta": model.rope_theta,
                                                "vllm_partial_rotary_lost": model.vllm_partial_rotary_lost,
                                                "trainer_partial_rotary_differs":
                                                    model.trainer_partial_rotary_differs,
                                                "model_type": model.model_type})
        else:
            model = model.model_copy(update={"aliases": ()})
        twin = next((m for m in self.models if m.shape == model.shape), None) if not named else None
        if twin is not None:  # a checkpoint of a catalogue model's shape: that model's cells stand in for its own,
            # and its parameter count (the one the memory model was calibrated with), so one shape has one memory
            model = model.model_copy(update={"tables_of": twin.tables_of or twin.name,
                                             "parameters_b": twin.parameters_b})
        return self.model_copy(update={"models": (*(m for m in self.models if m not in named), model)})

    def near_tabled_shape(self, model: Model) -> str | None:
        """For `model` where no table's cells stand for it (a checkpoint of a shape of its own, whose plans are
        estimates): where a model the tables name has its shape but for one term, that in words, the term as a
        config.json names it (``Qwen3-8B's shape but for vocab_size 151669 (Qwen3-8B's: 151936)``), saying where the
        config.json left it to its class's default (`Model.config_defaulted`: ``num_key_value_heads 40 (defaulted:
        config.json gives none; Qwen3-14B's: 8)``); None otherwise."""
        tabled = {name for gpu_type in self.documented_gpu_types for table in gpu_type.tables for name in table.models}
        if model.tables_of is not None or model.name in tabled:
            return None
        for other in (m for m in self.models if m.name in tabled):
            differing = [i for i, (mine, theirs) in enumerate(zip(model.shape, other.shape, strict=True))
                         if mine != theirs]
            if len(differing) == 1:
                [term] = differing
                defaulted = "defaulted: config.json gives none; " if SHAPE_TERMS[term] in model.config_defaulted else ""
                return (f"{other.name}'s shape but for {SHAPE_TERMS[term]} {_shape_value(model.shape[term])} "
                        f"({defaulted}{other.name}'s: {_shape_value(other.shape[term])})")
        return None

    def with_gpu_types(self, gpu_types: Iterable[GpuType]) -> Catalog:
        """This catalogue with the GPU types it does not have yet (given by their memory, ``--gpu NAME
        --gpu-memory SIZE`` or a pool's ``gpu_memory_gb``: no tables of their own, `tables_for`); `QueryError`
        for one whose name or alias is another's (in any case), or one the catalogue refuses (`RefusedNameError`: a GPU
        type without bf16, or a list of GPU types it has)."""
        if isinstance(gpu_types, (str, BaseModel)) or not isinstance(gpu_types, Iterable):
            raise QueryError(f"gpu_types must be a list of GpuType, got {shown_value(gpu_types)}")
        gpu_types = list(gpu_types)
        check_types(*(("gpu_types", gpu_type, GpuType) for gpu_type in gpu_types))
        catalog = self
        for gpu_type in gpu_types:
            if gpu_type in catalog.gpu_types:
                continue
            for name in (gpu_type.name, *gpu_type.aliases):
                try:
                    known = catalog.gpu(name)
                except RefusedNameError:  # a GPU type without bf16, or a list of GPU types: no name of one's own
                    raise
                except QueryError:  # a name of its own, as it must be
                    continue
                raise QueryError(f"{name} names {known.name} ({known.memory_gib:.1f} GiB), another GPU type: give "
                                 "yours a name of its own")
            catalog = catalog.model_copy(update={"gpu_types": (*catalog.gpu_types, gpu_type)})
        return catalog

    def with_tables(self, gpu_type: GpuType) -> Catalog:
        """This catalogue with `gpu_type`'s tables (cells you measured, in the tables' format: ``--cells``),
        which vouch for plans as the source's do: a GPU type it has gains them (`QueryError` for a GPU count
        it has a table for already: the two would disagree), and one it lacks comes with them."""
        check_types(("gpu_type", gpu_type, GpuType))
        known = next((g for g in self.gpu_types if g.name == gpu_type.name), None)
        # The measured tables name their own source (where a GPU type of the catalogue has another).
        sourced = tuple(table.model_copy(update={"source": gpu_type.table_source(table)}) for table in gpu_type.tables)
        if known is None:  # its name and aliases must be its own
            return self.with_gpu_types([gpu_type.model_copy(update={"tables": sourced})])
        if unknown := [alias for alias in gpu_type.aliases if alias not in known.aliases]:
            stand = ", ".join(known.aliases) or "none"
            raise QueryError(f"aliases {', '.join(unknown)}: {known.name} is known already (the catalogue's, or an "
                             f"earlier cells file's), whose aliases for it stand ({stand}); give it none here")
        taken = sorted({table.gpus for table in known.tables} & {table.gpus for table in gpu_type.tables})
        if taken:
            counts = and_joined([str(count) for count in taken])
            raise QueryError(f"{known.name} has a table for {counts} GPU{'s' if taken != [1] else ''} already; measured "
                             "cells join the tables where they have none (give the GPU type a name of its own to "
                             "plan with yours alone)")
        joined = gpu_type.tables if gpu_type.source == known.source else sourced
        tables = tuple(sorted((*known.tables, *joined), key=lambda table: table.gpus))
        merged = known.model_copy(update={"tables": tables})
        return self.model_copy(update={"gpu_types": tuple(merged if g is known else g for g in self.gpu_types)})

    def with_cells(self, path: Path | str, *, keep_contradictions: bool = False) -> Catalog:
        """This catalogue with the tables of a cells file you measured (one GPU type in the tables' format,
        as ``solve calibrate --cells`` reads), by `with_measured`: `TableError` for a bad file, and, unless
        `keep_contradictions` (taken, to be listed), for cells that contradict themselves or the tables beside them
        (`contradictions`: a typo would make plans that run out of memory); `QueryError` (naming the file) for
        tables it has already."""
        check_types(("keep_contradictions", keep_contradictions, bool))
        measured = load_cells(given_path("path", path), self.models, self.gpu_types)
        return self.with_measured(measured, path, keep_contradictions=keep_contradictions)

    def with_measured(self, measured: GpuType, path: Path | str, *, keep_contradictions: bool = False,
                      join: bool = True) -> Catalog:
        """`with_cells` for the cells file at `path` loaded already (`load_cells`, against this catalogue): a file
        read once (a pipe reads once). Without `join`, the catalogue gains its GPU type (its name and aliases
        checked alike) but not its tables, as `solve calibrate` reads cells: evidence to fit, not tables to plan
        with; later files are read against it (`load_cells`: the same GPU type with other memory is refused)."""
        check_types(("measured", measured, GpuType), ("path", path, Path | str),
                    ("keep_contradictions", keep_contradictions, bool), ("join", join, bool))
        try:
            catalog = self.with_tables(measured if join else measured.model_copy(update={"tables": ()}))
        except QueryError as error:
            raise QueryError(f"{path}: {error}") from None
        added = [] if keep_contradictions or not join else self.new_contradictions(catalog, measured.name)
        if added:
            raise contradictions_refused(str(path), added)
        return catalog

    def with_new_tables(self, gpu_type: GpuType) -> Catalog:
        """This catalogue with `gpu_type`'s tables for the GPU counts it has none for (`with_tables`; the
        others left out)."""
        taken = {table.gpus for known in self.gpu_types if known.name == gpu_type.name for table in known.tables}
        apart = gpu_type.model_copy(update={"tables": tuple(t for t in gpu_type.tables if t.gpus not in taken)})
        return self.with_tables(apart) if apart.tables else self

    def new_contradictions(self, merged: Catalog, gpu: str) -> list[str]:
        """The `contradictions` of GPU type `gpu`'s tables in `merged` (this catalogue with more tables of it,
        from `with_tables`) that this catalogue's lack, in words."""

        before = set(self.with_same_memory(gpu).contradictions()) if any(g.name == gpu for g in self.gpu_types) \
            else set()
        return [found for found in merged.with_same_memory(gpu).contradictions() if found not in before]

    def with_same_memory(self, gpu: str) -> Catalog:
        """This catalogue cut down to GPU type `gpu` and those with its driver-reported memory, whose tables it
        borrows (`tables_for`) and is checked against (`contradictions`)."""
        kept = self.gpu(gpu)
        return self.model_copy(update={"gpu_types": (kept, *self._same_memory(kept))})

    def for_fleet(self, fleet: Fleet) -> Catalog:
        """This catalogue with the models and GPU types `fleet` describes (`Fleet.models`, `Fleet.gpu_types`, and
        those its pools give by their memory, `pools_gpu_types`: a `Fleet` built in code need not list them);
        `QueryError` for a pool that gives the memory of a catalogue GPU type."""
        check_types(("fleet", fleet, Fleet))
        with_gpus = self.with_models(fleet.models).with_gpu_types(fleet.gpu_types)
        return with_gpus.with_gpu_types(pools_gpu_types(fleet.pools, with_gpus))

    def with_lora_targets(self, name: str, targets: LoraTargets | None) -> Catalog:
        """This catalogue with the model `name` names counting its LoRA adapter on the modules the regex `targets`
        adapts (`Model.lora_targets`: a Trinity config's), or on ``all-linear``'s for None."""
        model = self.model(name)
        if model.lora_targets == targets:
            return self
        counted = model.model_copy(update={"lora_targets": targets})
        return self.model_copy(update={"models": tuple(counted if entry is model else entry for entry in self.models)})

    def with_models(self, models: Iterable[Model]) -> Catalog:
        """This catalogue with each of `models` added by `with_model`, in order."""
        catalog = self
        for model in models:
            catalog = catalog.with_model(model)
        return catalog

    @property
    def documented_gpu_types(self) -> tuple[GpuType, ...]:
        """The GPU types that have feasibility tables."""
        return tuple(gpu_type for gpu_type in self.gpu_types if gpu_type.tables)

    def tabled_counts(self, gpu: str) -> set[int]:
        """The GPU counts with a table that speaks for `gpu` for some model: its own, and those of the other GPU
        types with tables and the same driver-reported memory (`tables_for`)."""
        own = self.gpu(gpu)
        return {table.gpus for gpu_type in (own, *self._same_memory(own)) for table in gpu_type.tables}

    def tables_for(self, gpu: str, model: Model) -> GpuType:
        """`gpu`'s GPU type with, for each GPU count, the table that speaks for `model` there (`Table.name_for`
        names it): its own, else the first of those of the other GPU types with tables and the same driver-reported
        memory, in the catalogue's order (the A100-80GB's for the A800-80GB: what fits in one's memory fits in
        the other's; memory as sold says too little); whose each borrowed table is: `table_origins`."""
        return self.gpu(gpu).model_copy(update={"tables": tuple(table for _, table in self._speaking(gpu, model))})

    def table_origins(self, gpu: str, model: Model) -> Mapping[int, TableOrigin]:
        """For each GPU count whose table for `model` `tables_for` borrows for `gpu`, or takes from measured cells
        (``--cells``), whose table it is."""
        return MappingProxyType({table.gpus: TableOrigin(owner if owner != gpu else None, table.source)
                                 for owner, table in self._speaking(gpu, model)
                                 if owner != gpu or table.source is not None})

    def _speaking(self, gpu: str, model: Model) -> list[tuple[str, Table]]:
        """(owner, table) of `tables_for`, by GPU count."""
        own = self.gpu(gpu)
        speaking: dict[int, tuple[str, Table]] = {}
        for gpu_type in (own, *self._same_memory(own)):
            for table in gpu_type.tables:
                if table.name_for(model) is not None:
                    speaking.setdefault(table.gpus, (gpu_type.name, table))
        return [speaking[count] for count in sorted(speaking)]

    def _same_memory(self, own: GpuType) -> list[GpuType]:
        """The other GPU types with tables and `own`'s driver-reported memory, in the catalogue's order."""
        if own.memory_mib is None:
            return []
        return [other for other in self.documented_gpu_types
                if other.name != own.name and other.memory_mib == own.memory_mib]

    def narrowed(
        self, gpu: str | None = None, gpus: int | None = None, model: str | None = None
    ) -> Catalog:
        """The same catalogue cut down to one GPU type, trainer GPU count and/or model column.

        Raises `QueryError`, naming the accepted values, for an unknown name or a count with no table.
        """
        gpu_types = (self.gpu(gpu),) if gpu is not None else self.documented_gpu_types
        if not any(g.tables for g in gpu_types):
            names = ", ".join(g.name for g in self.documented_gpu_types)
            origins = [other.name for other in self._same_memory(gpu_types[0])]
            whose = f", which plans with the {' and '.join(origins)}'s (the same memory)" if origins else ""
            raise QueryError(f"no tables for {gpu_types[0].name}{whose}; tables exist for {names}")
        of_gpu = f" of {gpu_types[0].name}" if gpu is not None else ""  # the tables the filters leave, in words
        if gpus is not None:
            counts = sorted({table.gpus for gpu_type in gpu_types for table in gpu_type.tables})
            if gpus not in counts:
                raise QueryError(f"no table{of_gpu} for {gpus} trainer GPUs; documented counts: "
                                 f"{', '.join(map(str, counts))}")
            gpu_types = tuple(
                gpu_type.model_copy(update={"tables": tuple(t for t in gpu_type.tables if t.gpus == gpus)})
                for gpu_type in gpu_types
            )
        if model is not None:
            resolved = self.model(model)
            documented = [m.name for m in self.models if any(m.name in t.models for g in gpu_types for t in g.tables)]
            if not any(t.name_for(resolved) for g in gpu_types for t in g.tables):
                for_gpus = f" for {gpus} trainer GPUs" if gpus is not None else ""
                raise QueryError(f"no documented table{of_gpu}{for_gpus} has {resolved.name}; documented models: "
                                 f"{', '.join(documented)}")
            gpu_types = tuple(
                g.model_copy(update={"tables": tuple(t.column(name) for t in g.tables
                                                     if (name := t.name_for(resolved)) is not None)})
                for g in gpu_types
            )
        return self.model_copy(update={"gpu_types": tuple(g for g in gpu_types if g.tables)})

    def contradictions(self) -> list[str]:
        """Where the tables contradict the semantics, in words (an empty list when they agree):

        - a setting the source names at a length, or ``-``, while a setting earlier in its escalation order
          is documented at a longer length on the same GPUs (memory only grows with the length);
        - a setting documented on fewer GPUs (two or more, as `vouches_for` says) that more GPUs could run
          (SP divides their count) while the table for more GPUs names a later setting, or ``-``, at the same
          length or a shorter one that falls to its row (more GPUs only shard the states further, and memory
          only grows with the length), the table for more GPUs being the one the planner
          takes for the model: the GPU type's own, or one it borrows of a GPU type with the same memory
          (`tables_for`);
        - two models of one shape (the same memory) with different cells in a row;
        - two GPU types with the same driver-reported memory whose tables for a GPU count disagree: a model (or
          one of its shape) with different cells at a length, or the first rule across the two tables.

        Each is said once, by the GPU type whose table is the one for fewer GPUs (or, between two tables of
        the same count, by the first of the two GPU types by name). The tables stay as the source wrote them;
        this only reports.
        """
        found = []
        shape_of = {model.name: model.shape for model in self.models}
        for gpu_type in self.gpu_types:
            others = self._same_memory(gpu_type)
            candidates, origin = _candidates_by_count(gpu_type, others)
            found += self._twin_disagreements(gpu_type, others, shape_of)
            for table in gpu_type.tables:
                found += _twin_cell_differences(gpu_type, table, shape_of)
                for model in table.models:
                    column = [(row.max_model_len, row.setting(model)) for row in table.rows]
                    found += _longer_contradictions(f"{gpu_type.name}, {counted(table.gpus, 'GPU')}, {model}",
                                                    table.gpus, column)
                    found += _wider_table_contradictions(gpu_type, table, model, column, candidates, origin, shape_of)
        return found

    def _twin_disagreements(self, gpu_type: GpuType, others: list[GpuType], shape_of: Mapping[str, Shape]
                            ) -> list[str]:
        """Where a table of `gpu_type` and one of a GPU type of `others` (the same driver-reported memory) for the
        same GPU count disagree on a model (or one of its shape): different cells at a length, or a setting that
        runs out of memory at a length in one while an earlier one trains at a longer length in the other; said by
        the first of the two GPU types by name, in words."""
        found = []
        for other in (other for other in others if gpu_type.name < other.name):
            pair = f"{gpu_type.name} and {other.name} (the same memory), "
            for mine in gpu_type.tables:
                for theirs in (table for table in other.tables if table.gpus == mine.gpus):
                    for model in mine.models:
                        twin = next((name for name in theirs.models if shape_of[name] == shape_of[model]), None)
                        if twin is None:
                            continue
                        lengths = {row.max_model_len: row.setting(twin) for row in theirs.rows}
                        whose = "" if twin == model else f" ({twin}, of its shape, in the {other.name}'s)"
                        found += [f"{pair}{counted(mine.gpus, 'GPU')}, {model} at {row.max_model_len}: "
                                  f"{cell_text(row.setting(model))} and {cell_text(lengths[row.max_model_len])}{whose}"
                                  for row in mine.rows if row.max_model_len in lengths
                                  and row.setting(model) != lengths[row.max_model_len]]
                        column = [(row.max_model_len, row.setting(model)) for row in mine.rows]
                        where = f"{pair}{counted(mine.gpus, 'GPU')}, {model}{whose}"
                        # What either table says alone (its GPU type says it already) is not said again.
                        alone = {*_longer_contradictions(where, mine.gpus, column),
                                 *_longer_contradictions(where, mine.gpus, list(lengths.items()))}
                        own_lengths = {length for length, _ in column}
                        merged = sorted([*column, *((length, setting) for length, setting in lengths.items()
                                                    if length not in own_lengths)], key=lambda cell: cell[0])
                        found += [said for said in _longer_contradictions(where, mine.gpus, merged)
                                  if said not in alone]
        return found

    def cells(self) -> Iterator[Cell]:
        """Every documented cell, by GPU type, GPU count, row and the table's model order."""
        for gpu_type in self.gpu_types:
            for table in gpu_type.tables:
                source = gpu_type.table_source(table)
                for row in table.rows:
                    for model, setting in row.cells:
                        yield Cell(
                            gpu=gpu_type.name,
                            gpus=table.gpus,
                            model=model,
                            max_model_len=row.max_model_len,
                            setting=setting,
                            source=source,
                            section=table.section,
                        )


def pools_gpu_types(pools: Iterable[Pool], catalog: Catalog) -> tuple[GpuType, ...]:
    """The GPU types `pools` describe by their memory (``gpu_memory_gb``/``gpu_memory_mib``), one per name;
    `QueryError` for a pool that gives the memory of a catalogue GPU type, or one name two memories or two
    interconnects (``gpu_interconnect``)."""
    described: dict[str, GpuType] = {}
    for pool in pools:
        gpu_type = pool.gpu_type
        if gpu_type is None:
            continue
        try:
            known = catalog.gpu(pool.gpu, one_asked_for=POOL_TAKES_ONE)
        except RefusedNameError as error:
            raise QueryError(f"pool {pool.name}, gpu: {error}") from None
        except QueryError:
            known = None
        if known is not None and known.source == gpu_type.source:  # a fleet's own, added already (for_fleet)
            described.setdefault(normalise(pool.gpu), known)
        elif known is not None:
            sized = catalog.sized_gpu(pool.gpu, gpu_type.memory_gb)
            instead = "" if sized is None else f"for the {sized.memory_gb} GB card give gpu: {sized.name}; else "
            raise QueryError(f"pool {pool.name}: gpu {pool.gpu} names {known.name} ({known.memory_gib:.1f} GiB), a "
                             f"GPU type whose memory is known: {instead}drop gpu_memory_gb and gpu_memory_mib, or give "
                             "your GPU type a name of its own")
        earlier = described.setdefault(normalise(pool.gpu), gpu_type)
        if earlier.memory_gib != gpu_type.memory_gib:
            raise QueryError(f"pool {pool.name}: gpu {pool.gpu} has {gpu_type.memory_gib:g} GiB here and "
                             f"{earlier.memory_gib:g} GiB in another pool: give one GPU type one memory")
        if earlier.interconnect != gpu_type.interconnect:
            here, there = (gpu.interconnect or "none stated" for gpu in (gpu_type, earlier))
            raise QueryError(f"pool {pool.name}: gpu {pool.gpu} has gpu_interconnect {here} here and {there} in "
                             "another pool: give one GPU type one interconnect")
    return tuple(described.values())


def contradictions_refused(path: str, found: Sequence[str], *, listed: bool = True) -> TableError:
    """The `TableError` that refuses the cells file `path` for the contradictions `found` (in words): the first, how
    many more, and where there are more, the command that lists them all, unless not `listed` (it cannot read the
    file: a table for a GPU type and count the catalogue has)."""
    more = and_more(found)
    lists = " (solve tables --check, with the same --cells and --model-config, lists them)" if more and listed else ""
    return TableError(f"{path}: {found[0]}{more}{lists}; check the cells")


def read_cells_files(catalog: Catalog, paths: Sequence[Path], *, join: bool = True, keep_contradictions: bool = False,
                     flag: str = "", file_readers: FileReaders = API_FILE_READERS,
                     ) -> tuple[Catalog, tuple[tuple[Path, GpuType], ...]]:
    """`catalog` with the cells files at `paths` (`Catalog.with_measured`, `join` and `keep_contradictions` as there),
    each read against it and the files before it (`load_cells`: a GPU type an earlier file made keeps its name,
    aliases and memory, and a memory that differs is said to be that file's); and each file with the GPU type it
    gave, as read (once: a pipe reads once). Errors name the file after `flag` (``--cells ``), a file of another
    kind given what reads it, `file_readers` (`solver.tables.looks_like`), and a table for a GPU count that an
    earlier file has already, joined or not (calibrating refuses it as planning does), names that file (after the
    file's other errors)."""
    tabled_by: dict[tuple[str, int], Path] = {}  # (GPU type, count): the file that gave its table
    made_by: dict[str, Path] = {}  # a GPU type the catalogue lacks: the file that gave it first
    loaded: list[tuple[Path, GpuType]] = []
    for path in paths:
        try:  # a TableError for the file's own content or memory, a QueryError for its names or tables
            measured = load_cells(path, catalog.models, catalog.gpu_types, made_by, file_readers)
            if all(known.name != measured.name for known in catalog.gpu_types):
                made_by[measured.name] = path
            repeated = next((t.gpus for t in measured.tables if (measured.name, t.gpus) in tabled_by), None)
            # a file repeating an earlier one's table is read as calibrating reads it: its other errors come first
            catalog = catalog.with_measured(measured, path, keep_contradictions=keep_contradictions,
                                            join=join and repeated is None)
        except OneLineError as error:
            raise type(error)(f"{flag}{error}") from None
        if repeated is not None:
            other = tabled_by[(measured.name, repeated)]
            raise QueryError(f"{flag}{path}: a table of {measured.name} for {counted(repeated, 'trainer GPU')}, which "
                             f"{flag}{other} has already: {ONE_TABLE_OF_TWO}, in one file under one source")
        tabled_by.update(dict.fromkeys(((measured.name, table.gpus) for table in measured.tables), path))
        loaded.append((path, measured))
    return catalog, tuple(loaded)
