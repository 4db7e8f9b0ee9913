"""The documented tables: YAML files in, validated frozen pydantic models out.

This is the only module that reads files. Everything is checked on load; a broken file raises
`TableError` with one line naming the file, the table and the row at fault.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import numbers
import os
import re
import reprlib
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence, Sized
from collections.abc import Set as AbstractSet
from decimal import Decimal
from functools import cache
from math import ceil, floor
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Any, TypeVar, get_args

import yaml
from annotated_types import Ge, Gt, Le, Lt, MinLen
from pydantic import (
    AfterValidator,
    AllowInfNan,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Strict,
    StringConstraints,
    Tag,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

MAX_FILE_BYTES = 16 * 1024 * 1024
"""The largest file rft-solver reads (tables, cluster files, Trinity configs, config.json)."""
MAX_TOKENS = 1 << 24
"""The longest ``max_model_len`` anything may ask for (16M tokens)."""
MAX_GPUS = 1 << 16
"""The most GPUs a count, a budget or a pool may have."""
MAX_JOBS = 20_000
"""The most jobs a cluster file may list."""

Count = Annotated[int, Strict(), Gt(0)]
"""A positive whole number written as a YAML integer (not ``"4096"``, ``4096.0`` or ``true``)."""
Tokens = Annotated[int, Strict(), Gt(0), Le(MAX_TOKENS)]


def _thousands_of_tokens(value: Any) -> Any:
    """``32k`` (thousands of 1024, as ``--len`` takes them) as 32768; any other value as it is."""
    match = re.fullmatch(r"\s*(\d{1,9})\s*[kK]\s*", value) if isinstance(value, str) and value.isascii() else None
    return int(match[1]) * 1024 if match else value


AskedTokens = Annotated[Tokens, BeforeValidator(_thousands_of_tokens)]
"""A length a user asks for in a file: a whole number of tokens, or thousands of 1024 (``32k``)."""
GpuCount = Annotated[int, Strict(), Gt(0), Le(MAX_GPUS)]
MAX_GPU_MEMORY_GB = 1 << 14
"""Far more memory than any GPU has (16 TB), but finite."""
CONFIG_SHAPE = " (config shape)"
"""Added to the name of a --model-config model whose shape is not that of the catalogue model it names."""
MAX_NODE_GPUS = 16
"""The most GPUs a cluster file's node may have: one host (HGX boards have 8; the largest hosts 16). It also
bounds the ways to fill a node that the placement weighs, which grow as the partitions of its size."""
MAX_HOST_RAM_GB = 1 << 20
"""The most host memory per node a request or a pool may give (1 PB): more than any node has, but finite."""
MAX_ESTIMATED_GPUS = 64
"""The most trainer GPUs the memory model's estimates consider (eight nodes of eight)."""
Billions = Annotated[float, Strict(), Gt(0)]
Weight = Annotated[float, Strict(), Ge(0), Le(1000), AllowInfNan(False)]
"""A cost weight: how much a setting slows a step, 0 (free) to 1000 (a thousand times slower)."""
Flag = Annotated[bool, Strict()]
Multiplier = Annotated[float, Ge(0), Le(1000), AllowInfNan(False)]
"""A memory-model multiplier: finite, from 0 to 1000 (the calibration's bounds are far inside)."""
Text = Annotated[str, Strict(), MinLen(1)]


def _printable(text: str) -> str:
    """`text`, if printable (no control characters, which would reach the terminal), else `ValueError`."""
    if not text.isprintable():
        raise ValueError(f"must be printable text (no control characters), got {text!r}")
    return text


PrintableText = Annotated[Text, AfterValidator(_printable)]
"""Text that output shows as it is (a name, a source, a table's heading): no control characters."""

NO_SETTING = "-"
"""The source's cell text for "no setting trains this model at this length"."""

SETTING_GRAMMAR = "vanilla, -, or Env, Offload and SP=N joined by ' + ' in that order"

_SP_PART = re.compile(r"SP=(\d+)")


class OneLineError(ValueError):
    """An error whose message is one line: line breaks in names quoted from the input are escaped."""

    def __init__(self, message: str) -> None:
        super().__init__(message.replace("\r", "\\r").replace("\n", "\\n"))


class TableError(OneLineError):
    """A table file that cannot be read or breaks the schema; the message is one line."""


class QueryError(OneLineError):
    """A request the tables cannot take as asked (unknown name, a GPU count with no table); one line."""


class Frozen(BaseModel):
    """A frozen pydantic model that refuses unknown fields: the base of the package's data types. Field names may
    start with ``model_`` (``model_path``): pydantic before 2.10 warns of them unless no namespace is protected."""

    model_config = ConfigDict(frozen=True, extra="forbid", protected_namespaces=())


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
        """Parse a cell's text; ``-`` (nothing trains) gives None. Only the canonical form is accepted."""
        if text == NO_SETTING:
            return None
        if text == "vanilla":
            return cls()
        flags: dict[str, Any] = {}
        for part in text.split("+"):
            part = part.strip()
            where = "" if part == text else f" in {text!r}"
            sp_match = _SP_PART.fullmatch(part)
            if part in ("Env", "Offload"):
                key = part.lower()
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
"""The order in which the source document tried settings as memory ran out (vanilla, Env, each SP degree
without and with Env, then Env + Offload with each); each cell is the first that trained."""


class MoE(Frozen):
    """Mixture-of-experts shape: all experts' parameters are held, the active ones computed."""

    experts: Count
    active_experts: Count
    moe_intermediate_size: Count


Shape = tuple[int | bool | tuple[int, ...] | None, ...]
"""`Model.shape`: what two models must share for one's table cells to stand for the other's."""


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
    rope_scaling: Text | None = None
    """The model's own RoPE scaling (its config's ``rope_scaling.rope_type``, e.g. ``llama3`` for Llama 3.1),
    which its native context already relies on: YaRN must not replace it. None for a plain RoPE, or for
    YaRN itself (rft-solver writes the factor the length needs)."""
    moe: MoE | None = None
    logit_softcapping: bool = False
    """Whether the model caps its logits (Gemma-2's ``final_logit_softcapping``), which holds more copies of them."""
    qwen_yarn: Flag = True
    """Whether Qwen's model cards' validation of YaRN (`YARN_VALIDATED_FACTOR`, `YARN_VALIDATED_TOKENS`) speaks
    for the model: a Qwen model's (every model of the catalogue that YaRN extends), not one of another
    ``model_type`` read from a config.json, for which rft-solver knows of no validation."""
    tables_of: Text | None = None
    """Another model of the same shape whose table cells stand for this one where no table names it (a base
    model and its post-trained release differ only in their weights, which the memory they need does not
    depend on); None for a model that stands for itself."""

    @property
    def shape(self) -> Shape:
        """What the memory the model needs depends on: its layers' widths, counts and vocabulary (and, for a
        mixture of experts, its experts; the capping of its logits)."""
        experts = None if self.moe is None else (self.moe.experts, self.moe.active_experts,
                                                  self.moe.moe_intermediate_size)
        return (self.hidden_size, self.num_layers, self.num_attention_heads, self.num_key_value_heads,
                self.head_size, self.intermediate_size, self.vocab_size, self.tied_embeddings, experts,
                self.logit_softcapping)

    @property
    def head_size(self) -> int:
        """Width of one attention head: ``head_dim``, else hidden size / attention heads."""
        return self.head_dim or self.hidden_size // self.num_attention_heads

    def beyond_native_on_own_scaling(self, max_model_len: int) -> bool:
        """Whether a length beyond the native context rests on the model's own RoPE scaling (no YaRN is
        written for it, and nothing checks that the model handles it)."""
        return max_model_len > self.native_context and self.rope_scaling is not None

    def yarn_beyond_validated(self, max_model_len: int) -> bool:
        """Whether the YaRN a length needs goes beyond what is validated: for a Qwen model (`qwen_yarn`), a
        factor above `YARN_VALIDATED_FACTOR` or more than `YARN_VALIDATED_TOKENS`; for another, any YaRN
        (memory fits; quality is untested)."""
        factor = self.yarn_factor(max_model_len)
        return factor is not None and (not self.qwen_yarn or factor > YARN_VALIDATED_FACTOR
                                       or max_model_len > YARN_VALIDATED_TOKENS)

    def yarn_factor(self, max_model_len: int) -> float | None:
        """The YaRN factor ``max_model_len / native_context`` a length beyond the native context needs;
        None within it, and for a model with its own RoPE scaling (nothing is known to extend it)."""
        if max_model_len <= self.native_context or self.rope_scaling is not None:
            return None
        return max_model_len / self.native_context


class Source(Frozen):
    """Where a table file's numbers come from."""

    document: PrintableText
    section: PrintableText


def _printable_source(source: Source | str) -> Source | str:
    """A GPU type's `source`, if printable where it is text (a `Source`'s fields check themselves)."""
    return _printable(source) if isinstance(source, str) else source


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
        """Models named by an alias or in another case (``8B``), where the context maps names to the
        catalogue's (``names``), under the catalogue's names."""
        names = (info.context or {}).get("names")
        if not names or not isinstance(raw, dict):
            return raw

        def canonical(name: Any) -> Any:
            return names.get(_normalise(name), name) if isinstance(name, str) else name

        renamed = dict(raw)
        if isinstance(raw.get("models"), list):
            renamed["models"] = [canonical(model) for model in raw["models"]]
        if isinstance(raw.get("rows"), list):
            renamed["rows"] = []
            for row in raw["rows"]:
                if isinstance(row, dict) and isinstance(row.get("cells"), dict):
                    cells = {canonical(model): cell for model, cell in row["cells"].items()}
                    if len(cells) < len(row["cells"]):
                        twice = _first_repeated([canonical(model) for model in row["cells"]])
                        raise ValueError(f"row max_model_len={brief(row.get('max_model_len'))}: two cells for "
                                         f"{twice} (by two of its names)")
                    row = {**row, "cells": cells}
                renamed["rows"].append(row)
        return renamed

    @model_validator(mode="after")
    def _check_rows(self, info: ValidationInfo) -> Table:
        known = (info.context or {}).get("models")
        if not self.models:
            raise ValueError("the table names no models")
        for model in self.models:
            if known is not None and model not in known:
                raise ValueError(f"unknown model {model!r} in the table's models (known: {', '.join(known)})")
        twice = _first_repeated(self.models)
        if twice is not None:
            raise ValueError(f"{twice} is named twice in the table's models")
        if not self.rows:
            raise ValueError("the table has no rows")
        previous = 0
        for row in self.rows:
            where = f"row max_model_len={row.max_model_len}"
            if row.max_model_len == previous:
                raise ValueError(f"duplicate {where}")
            if row.max_model_len < previous:
                raise ValueError(f"{where} comes after max_model_len={previous}; rows must increase")
            previous = row.max_model_len
            present = [model for model, _ in row.cells]
            for model in present:
                if model not in self.models:
                    raise ValueError(
                        f"{where}: cell for unknown model {model!r} (this table's models: {', '.join(self.models)})"
                    )
            for model in self.models:
                if model not in present:
                    raise ValueError(f"{where}: no cell for {model}")
            for model, setting in row.cells:
                if setting is not None and self.gpus % setting.sp:
                    raise ValueError(
                        f"{where}, {model}: SP={setting.sp} does not divide the table's {counted(self.gpus, 'GPU')}"
                    )
        return self

    def name_for(self, model: Model) -> str | None:
        """The name this table gives `model`'s cells: its own where the table names it (cells you measured,
        `--cells`), else that of `model.tables_of` (a tabled model of its shape); None where it names neither."""
        return next((name for name in (model.name, model.tables_of) if name in self.models), None)

    def column(self, model: str) -> Table:
        """This table with only `model`'s cells."""
        rows = tuple(row.model_copy(update={"cells": ((model, row.setting(model)),)}) for row in self.rows)
        return self.model_copy(update={"models": (model,), "rows": rows})


DRIVER_SHARE = (0.85, 1.05)
"""The driver's MiB over the GB a GPU is sold with, times 1024: 0.937 (L40S) to 1.0 in the catalogue."""
LEAST_DRIVER_MIB = 8192
"""The least memory a GPU type of your own may report: below it, no whole GB is sure to be its."""
LEAST_GPU_MEMORY_GB = LEAST_DRIVER_MIB // 1024
"""The least memory as sold a GPU type of your own may have, the same floor: smaller cards lie far outside what
the memory model was fitted on."""


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


class GpuType(Frozen):
    """A GPU type with its documented tables, one per trainer GPU count (YAML key ``gpu`` names it)."""

    name: Text = Field(alias="gpu")
    memory_gb: Annotated[Count, Le(MAX_GPU_MEMORY_GB)] = Field(description=(
        "memory as the vendor sells it, in GB (the name's number)"))
    memory_mib: Annotated[Count, Le(MAX_GPU_MEMORY_GB * 1024)] | None = Field(default=None, description=(
        "memory as the driver reports it (nvidia-smi's or amd-smi's total, MiB): what CUDA allocates from"))
    aliases: tuple[Text, ...] = ()
    source: Annotated[Source | Text, AfterValidator(_printable_source)]
    tables: tuple[Table, ...] = ()
    rocm: bool = Field(default=False, description=(
        "an AMD GPU, which PyTorch runs through ROCm (its allocator reads PYTORCH_HIP_ALLOC_CONF too)"))

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, protected_namespaces=())

    @model_validator(mode="after")
    def _check_tables(self) -> GpuType:
        problem = gpu_type_problem(self.name, self.memory_gb, self.memory_mib)
        if problem:
            raise ValueError(problem)
        counts = [table.gpus for table in self.tables]
        repeated = _first_repeated(counts)
        if repeated is not None:
            raise ValueError(f"two tables for {repeated} trainer GPUs")
        return self

    @property
    def memory_gib(self) -> float:
        """The memory the memory model works with, GiB: the driver's figure, or the nominal GB taken as GiB
        where the catalogue does not give one."""
        return self.memory_mib / 1024 if self.memory_mib is not None else float(self.memory_gb)

    def __hash__(self) -> int:
        """By name and memory only (equal types hash equally; equality still compares everything): the
        planner's caches key on GPU types, and hashing every cell of their tables each query was slow."""
        return hash((self.name, self.memory_gb, self.memory_mib, len(self.tables)))


def described_gpu_type(name: str, memory_gb: int | None = None, memory_mib: int | None = None, *,
                       source: str = "your own") -> GpuType:
    """A GPU type the catalogue lacks, by its name and memory: GB as sold (taken as GiB), nvidia-smi's MiB
    (what the memory model uses), or both; no tables, so its plans are estimates, unless the MiB are a tabled GPU
    type's (`Catalog.tables_for`; `Catalog.with_gpu_types` adds it). `QueryError` for a name that is blank
    or not printable (it is written into configs' comments), for two figures that cannot be one GPU's, and for a
    value of the wrong type."""
    check_types(("name", name, str), ("memory_gb", memory_gb, int | None), ("memory_mib", memory_mib, int | None),
                ("source", source, str))
    if memory_gb is None and memory_mib is None:
        raise QueryError(f"{brief(name)}: give its memory in GB or MiB")
    unnamed = gpu_type_problem(name, None, None)  # the name first: the messages below show it
    if unnamed:
        raise QueryError(unnamed)
    if memory_gb is not None and not LEAST_GPU_MEMORY_GB <= memory_gb <= MAX_GPU_MEMORY_GB:
        raise QueryError(f"{name.strip()}: its memory must be from {LEAST_GPU_MEMORY_GB} to {MAX_GPU_MEMORY_GB} GB, got "
                         f"{memory_gb} GB")
    if memory_mib is not None and not LEAST_DRIVER_MIB <= memory_mib <= MAX_GPU_MEMORY_GB * 1024:
        raise QueryError(f"{name.strip()}: its memory must be from {LEAST_DRIVER_MIB} MiB ({LEAST_DRIVER_MIB // 1024} "
                         f"GiB) to {MAX_GPU_MEMORY_GB * 1024} MiB, got {memory_mib} MiB")
    problem = gpu_type_problem(name, memory_gb, memory_mib)
    if problem:
        raise QueryError(problem)
    if memory_gb is None:  # sold as the GB nearest the driver's figure that may be its
        gib = (memory_mib or 0) / 1024
        memory_gb = min(max(round(gib), ceil(gib / DRIVER_SHARE[1])), floor(gib / DRIVER_SHARE[0]))
    return GpuType(gpu=name.strip(), memory_gb=memory_gb, memory_mib=memory_mib, source=source)


class _GpusFile(Frozen):
    gpus: tuple[GpuType, ...] = Field(min_length=1)


class _ModelsFile(Frozen):
    source: Text
    models: tuple[Model, ...]

    @model_validator(mode="after")
    def _check_tables_of(self) -> _ModelsFile:
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


class Weights(Frozen):
    """Cost weights: ``cost = (1/n) * (1 + offload*o) * (1 + sp*(s-1)) * (1 + env*e)``."""

    offload: Weight
    sp: Weight
    env: Weight


_UNION_TAGS = ("<tokens>", "<at_least>")
"""The tags of `Job.max_model_len`'s two forms, which pydantic puts in an error's location."""


class AtLeast(Frozen):
    """A length the solver may raise: at least this many tokens, longer when a plan allows."""

    at_least: AskedTokens


class Pool(Frozen):
    """A pool of identical nodes in the fleet."""

    name: PrintableText
    gpu: Text
    nodes: GpuCount
    gpus_per_node: Annotated[int, Strict(), Gt(0), Le(MAX_NODE_GPUS)] = Field(description=(
        "GPUs of one node (a host, Trinity's cluster.gpu_per_node); the largest hosts have 16"))
    host_ram_gb: Annotated[float, Strict(), Gt(0), Le(MAX_HOST_RAM_GB), AllowInfNan(False)] | None = Field(
        default=None, description=(
            "host memory of one node (GB as RAM is sold: GiB): the jobs on a node load their models there, and "
            "keep their offloaded states there together; absent, it is not checked"))
    gpu_memory_gb: Annotated[Count, Le(MAX_GPU_MEMORY_GB)] | None = Field(default=None, description=(
        "for a GPU type the catalogue lacks: its memory in GB as sold (taken as GiB), as --gpu-memory 64"))
    gpu_memory_mib: Annotated[Count, Le(MAX_GPU_MEMORY_GB * 1024)] | None = Field(default=None, description=(
        "for a GPU type the catalogue lacks: nvidia-smi's total, MiB, as --gpu-memory 65536MiB"))

    @model_validator(mode="after")
    def _check_gpu_memory(self) -> Pool:
        self.gpu_type  # noqa: B018 - a name and memory that cannot describe a GPU type are refused here
        return self

    @property
    def gpu_type(self) -> GpuType | None:
        """The GPU type this pool describes by its memory (None when it gives none)."""
        if self.gpu_memory_gb is None and self.gpu_memory_mib is None:
            return None
        return described_gpu_type(self.gpu, self.gpu_memory_gb, self.gpu_memory_mib, source="a cluster file's pool")


class _JobFields(Frozen):
    """What a job gives besides its model: its name, length, rollout GPUs, weight and pool."""

    name: Annotated[str, Strict(), StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", max_length=100)] = Field(
        description="letters, digits, '.', '_' and '-', at most 100 (it names the job's config file)")
    max_model_len: Annotated[
        Annotated[AskedTokens, Tag(_UNION_TAGS[0])] | Annotated[AtLeast, Tag(_UNION_TAGS[1])],
        Discriminator(lambda value: _UNION_TAGS[1] if isinstance(value, dict | AtLeast) else _UNION_TAGS[0]),
    ]
    rollout_gpus: Annotated[int, Strict(), Ge(0), Le(MAX_GPUS)] = 0
    priority: Annotated[int, Strict(), Gt(0), Le(1_000_000)] = 1
    pool: Text | None = None


class Job(_JobFields):
    """One Trinity training job to place: its model, length, rollout GPUs and weight."""

    model: Text


class _JobEntry(_JobFields):
    """A job as a cluster file gives it: its model by name, or by a config.json."""

    model: Text | None = Field(default=None, description="a catalogue model (4B, Qwen3-8B, ...), or model_config")
    config_path: Text | None = Field(default=None, alias="model_config", description=(
        "instead of model: a dense model's local Hugging Face config.json (or its folder), relative to the "
        "cluster file (as --model-config)"))

    @model_validator(mode="after")
    def _one_model(self) -> _JobEntry:
        if self.model is None and self.config_path is None:
            raise ValueError("missing field 'model' (a catalogue model, e.g. 4B) or 'model_config' (a config.json)")
        if self.model is not None and self.config_path is not None:
            raise ValueError("model and model_config both name the model: give one")
        return self


def _check_fleet_names(pools: tuple[Pool, ...], jobs: tuple[_JobFields, ...]) -> None:
    """`ValueError` for two pools or two jobs of one name, or a job's pool that does not exist."""
    for kind, names in (("pool", [p.name for p in pools]), ("job", [j.name for j in jobs])):
        repeated = _first_repeated(names)
        if repeated is not None:
            raise ValueError(f"two {kind}s are named {repeated!r}")
    folded = _first_repeated(job.name.casefold() for job in jobs)  # one file of --emit-dir on macOS and Windows
    if folded is not None:
        same = [job.name for job in jobs if job.name.casefold() == folded]
        raise ValueError(f"jobs {same[0]!r} and {same[1]!r} differ only in case: their --emit-dir files would be "
                         "one on macOS and Windows; rename one")
    pool_names = [pool.name for pool in pools]
    for job in jobs:
        if job.pool is not None and job.pool not in pool_names:
            raise ValueError(f"job {job.name}: pool: no pool named {job.pool!r} (pools: {', '.join(pool_names)})")


class _FleetFile(Frozen):
    """What a cluster file holds: the pools of nodes and the jobs to place on them."""

    pools: tuple[Pool, ...] = Field(min_length=1, max_length=256)
    jobs: tuple[_JobEntry, ...] = Field(min_length=1, max_length=MAX_JOBS)

    @model_validator(mode="after")
    def _check_names(self) -> _FleetFile:
        _check_fleet_names(self.pools, self.jobs)
        return self


class Fleet(Frozen):
    """A cluster file with its names resolved (`load_fleet`): each job names its model, and the models
    that jobs gave by ``model_config`` come with it (a catalogue gains them with `Catalog.with_models`)."""

    pools: tuple[Pool, ...] = Field(min_length=1, max_length=256)
    jobs: tuple[Job, ...] = Field(min_length=1, max_length=MAX_JOBS)
    models: tuple[Model, ...] = Field(default=(), description="the models of the jobs' model_config files")
    gpu_types: tuple[GpuType, ...] = Field(default=(), description=(
        "the GPU types that pools describe by their memory (gpu_memory_gb or gpu_memory_mib)"))
    model_config_files: tuple[Path, ...] = Field(default=(), description=(
        "the config.json files those models were read from (inputs, which no output may overwrite)"))

    @model_validator(mode="after")
    def _check_names(self) -> Fleet:
        _check_fleet_names(self.pools, self.jobs)
        return self


class Coefficients(Frozen):
    """The memory model's free numbers: a multiplier per term and the usable fractions of memory."""

    states: Multiplier
    gathered: Multiplier
    checkpoints: Multiplier
    logits: Multiplier
    recompute: Multiplier
    sp_buffers: Multiplier
    fragmentation: Multiplier
    overhead: Multiplier
    usable: float = Field(gt=0, le=1, description="fraction of GPU memory usable without Env")
    usable_env: float = Field(gt=0, le=1, description="fraction of GPU memory usable with Env")

    @model_validator(mode="after")
    def _env_never_hurts(self) -> Coefficients:
        if self.usable_env < self.usable:
            raise ValueError(f"usable_env ({self.usable_env}) is below usable ({self.usable}): Env would make plans "
                             "stop fitting")
        return self

    def multiplier(self, term: str) -> float:
        """The coefficient of one term of `TERMS`."""
        return float(getattr(self, term))


class FitSummary(Frozen):
    """How a calibration did on the observations it was fitted on."""

    observations: Annotated[int, Strict(), Ge(0)]
    positives: Annotated[int, Strict(), Ge(0)]
    negatives: Annotated[int, Strict(), Ge(0)]
    wrong_fits: Annotated[int, Strict(), Ge(0)] = Field(description="did not fit, predicted to fit (unsafe)")
    wrong_failures: Annotated[int, Strict(), Ge(0)] = Field(description="fit, predicted not to (conservative)")
    failures_within_margin: Annotated[int, Strict(), Ge(0)] | None = Field(default=None, description=(
        "fit, predicted to fit but not within the file's default safety margin, so that estimates at that margin "
        "reject them too; None in a file from before rft-solver counted them"))
    range: CalibrationRange | None = Field(default=None, description=(
        "what the observations span; None in a file from before rft-solver recorded it (its estimates then "
        "say nothing of their range)"))


_Observed = Annotated[float, Strict(), Ge(0), AllowInfNan(False)]
"""A quantity a calibration observed: a finite number, at least 0."""


class CalibrationRange(Frozen):
    """The range of the observations a memory model was calibrated on: past it, its estimates extrapolate."""

    largest_model_b: _Observed = Field(
        description="the most parameters of a model observed, billions")
    least_memory_gib: _Observed = Field(description="the smallest GPU memory observed, GiB")
    most_memory_gib: _Observed = Field(description="the largest GPU memory observed, GiB")
    most_gpus: Annotated[int, Strict(), Ge(0)] = Field(description="the most trainer GPUs observed")
    largest_sp: Annotated[int, Strict(), Ge(0)] = Field(description="the largest SP degree of a setting that fit")
    most_tokens_per_gpu: Annotated[int, Strict(), Ge(0)] = Field(
        description="the most tokens per GPU observed to fit (0 when nothing was)")
    smallest_model_b: _Observed | None = Field(default=None, description=(
        "the fewest parameters of a model observed, billions (None in a file from before it was recorded: "
        "not checked)"))
    least_vocab_size: Annotated[int, Strict(), Ge(0)] | None = Field(default=None, description=(
        "the smallest vocabulary observed (the logits scale with it; None: not checked)"))
    most_vocab_size: Annotated[int, Strict(), Ge(0)] | None = Field(default=None, description=(
        "the largest vocabulary observed (None: not checked)"))
    mixture_of_experts: Annotated[bool, Strict()] | None = Field(default=None, description=(
        "whether a mixture-of-experts model was observed (None: not checked)"))

    @model_validator(mode="after")
    def _ordered(self) -> CalibrationRange:
        pairs = (("least_memory_gib", "most_memory_gib"), ("smallest_model_b", "largest_model_b"),
                 ("least_vocab_size", "most_vocab_size"))
        for least, most in pairs:
            low, high = getattr(self, least), getattr(self, most)
            if low is not None and high is not None and low > high:
                raise ValueError(f"{least} ({low:g}) is above {most} ({high:g})")
        return self


class MemoryModel(Frozen):
    """A calibrated memory model: its coefficients, the default safety margin, and how the fit went."""

    source: Text
    coefficients: Coefficients
    margin: Annotated[float, Strict(), Ge(0), Lt(1)]
    fit: FitSummary


class Cell(Frozen):
    """One documented cell, flattened: which GPU type, count, model and length, and its setting."""

    gpu: str
    gpus: int
    model: str
    max_model_len: int
    setting: Setting | None
    source: str = Field(description="where its table's numbers come from (`Table.source`, else the GPU type's)")
    section: str = Field(description="its table's heading")


def _normalise(name: str) -> str:
    """A name as it is matched: any case, spaces and underscores as hyphens (``A100 80GB`` = ``a100-80gb``)."""
    return re.sub(r"[\s_]+", "-", name.strip().casefold())


SMI_WORDS = re.compile(r"^(nvidia|amd)-|(instinct|geforce)-|-(sxm\d*|pcie|hbm\d*e?)(?=-|$)")
"""What nvidia-smi and amd-smi add to a GPU's name: the vendor, the product line, the form factor and memory."""


def smi_name_form(name: str) -> str:
    """A GPU name as nvidia-smi or amd-smi prints it, less the words `SMI_WORDS` names (``NVIDIA A100-SXM4-80GB``
    -> ``a100-80gb``, ``AMD Instinct MI300X`` -> ``mi300x``); other names come back normalised."""
    return SMI_WORDS.sub("", _normalise(name))


def model_name_from_path(model_path: str) -> str:
    """The model's name in a Hugging Face id or a local path: its last part (``Qwen/Qwen3-8B`` -> ``Qwen3-8B``)."""
    return re.split(r"[\\/]", model_path.strip().rstrip("/\\"))[-1]


def _is_short_form(alias: str, name: str) -> bool:
    """Whether `alias` is the end of `name` (``8B`` of Qwen3-8B), which an error's list of names need not show."""
    return _normalise(name).endswith("-" + _normalise(alias))


def _accepted(entries: tuple[Any, ...]) -> str:
    """The models or GPU types an error lists as accepted: each name, with the names that extend it as
    variants (``Qwen3-8B(-Base)``), each with its aliases but short forms."""
    def root(entry: Any) -> Any:
        """The shortest name that `entry`'s extends (``Qwen3-8B`` for ``Qwen3-8B-Base``), or None."""
        return min((other for other in entries if _normalise(entry.name).startswith(_normalise(other.name) + "-")),
                   key=lambda other: len(other.name), default=None)

    def aliases(entry: Any, form: str) -> str:
        shown = [alias for alias in entry.aliases if not _is_short_form(alias, entry.name)]
        return form.format(", ".join(shown)) if shown else ""

    listed = []
    for entry in entries:
        if root(entry) is None:
            variants = "|".join(other.name[len(entry.name):] + aliases(other, " [{}]") for other in entries
                                if root(other) is entry)
            listed.append(entry.name + (f"({variants})" if variants else "") + aliases(entry, " ({})"))
    return ", ".join(listed)


def _resolve(kind: str, name: str, entries: tuple[Any, ...], wanted_name: str | None = None) -> Any:
    """The entry that `name` names (or `wanted_name`, a form of it, when given); `QueryError` naming `name`."""
    if not isinstance(name, str):
        raise QueryError(f"a {kind} is named by a string, got {brief(name)}")
    wanted = _normalise(wanted_name or name)
    for entry in entries:
        if wanted in {_normalise(entry.name), *map(_normalise, entry.aliases)}:
            return entry
    accepted = _accepted(entries)
    short = next(((alias, e.name) for e in entries for alias in e.aliases if _is_short_form(alias, e.name)), None)
    accepted += f"; short forms such as {short[0]} for {short[1]} too" if short else ""
    names = {_normalise(known): entry.name for entry in entries for known in (entry.name, *entry.aliases)}
    # A guess only where one name extends the other (30B: 30B-A3B, whose base model's name extends it in
    # turn; Qwen3-8B-Instruct: Qwen3-8B), or ends with it as its last part (70B: Llama-3.1-70B), and only one
    # does: a name one character away is often another thing (v100 is not h100, 5B is not 8B).
    completions = sorted((known for known in names if known.startswith(wanted)), key=len)
    close = {names[known] for known in completions if not known.startswith(completions[0])} | {
        names[completions[0]]} if completions else (  # completions first, then last parts, then extensions
        {entry for known, entry in names.items() if known.endswith("-" + wanted)}
        or {entry for known, entry in names.items() if wanted.startswith(known + "-")})
    guess = f" (did you mean {close.pop()}?)" if len(close) == 1 else ""
    raise QueryError(f"unknown {kind} {brief(name)}{guess}; accepted: {accepted}")


def vouches_for(table_gpus: int, gpus: int, most: int = MAX_ESTIMATED_GPUS) -> bool:
    """Whether a table for `table_gpus` GPUs may vouch for a plan on `gpus` GPUs: its own count, or more GPUs than
    a table of two or more (one GPU has no collective-communication buffers), up to `most` (the planner's
    `MAX_ESTIMATED_GPUS`; the physics, which the contradiction check applies, has no such limit)."""
    return table_gpus == gpus or 1 < table_gpus < gpus <= most


def _longer_contradictions(where: str, column: Sequence[tuple[int, Setting | None]]) -> list[str]:
    """Where a model's cells (length, setting or None for ``-``, by length) say a setting, or ``-``, at a length
    while a setting earlier in the escalation order trains at a longer one, in words prefixed by `where`."""
    return [f"{where}: {cell_text(setting)} at {length} but {later.label} trains at the longer {longer} (memory "
            "only grows with the length)"
            for index, (length, setting) in enumerate(column) for longer, later in column[index + 1:]
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
    planner takes for it (of `candidates`, vouched for) names a later setting, or ``-``, there: in words."""
    found = []
    wider_counts = (count for count in candidates if count > table.gpus and vouches_for(table.gpus, count, MAX_GPUS))
    for more in sorted(wider_counts):
        # The table for more GPUs the planner takes for the model: the first naming one of its shape.
        wider = next((t for t in candidates[more] if any(shape_of[name] == shape_of[model] for name in t.models)), None)
        if wider is None:
            continue
        whose = f" (the {origin[id(wider)]}'s table)" if id(wider) in origin else ""
        for length, setting in column:
            other = next((r for r in wider.rows if r.max_model_len == length), None)
            if other is None or setting is None or more % setting.sp:
                continue
            for twin in (name for name in wider.models if shape_of[name] == shape_of[model]):
                there = other.setting(twin)  # the model's own cell, or one of its shape's
                if there is None or there.escalation_key > setting.escalation_key:
                    shaped = "" if twin == model else f" ({twin}, of its shape)"
                    found.append(f"{gpu_type.name}, {model} at {length}: {setting.label} trains on "
                                 f"{counted(table.gpus, 'GPU')} but {more} GPUs{whose} need "
                                 f"{cell_text(there)}{shaped} (more GPUs only shard the states further)")
    return found


class Catalog(Frozen):
    """Everything the tables say: models and GPU types with their documented tables."""

    models: tuple[Model, ...]
    gpu_types: tuple[GpuType, ...]

    def model(self, name: str) -> Model:
        """Resolve a model name or alias (``4B``, ``qwen3-4b``) of any case; a Hugging Face id or a path
        (``Qwen/Qwen3-4B``) by its last part."""
        return _resolve("model", name, self.models,
                        wanted_name=model_name_from_path(name) if isinstance(name, str) else None)

    def gpu(self, name: str) -> GpuType:
        """Resolve a GPU type name or alias (``a100``, ``H20``) of any case, or the name nvidia-smi or amd-smi
        prints (``NVIDIA A100-SXM4-80GB``, ``NVIDIA H100 80GB HBM3``: `smi_name_form`)."""
        try:
            return _resolve("GPU", name, self.gpu_types)
        except QueryError:
            if not isinstance(name, str) or smi_name_form(name) == _normalise(name):
                raise
        return _resolve("GPU", name, self.gpu_types, wanted_name=smi_name_form(name))

    def with_model(self, model: Model) -> Catalog:
        """This catalogue with one more model (from ``--model-config``). Of the same shape as a model its
        name names (in any case), it is that model, with the config's native context and RoPE scaling
        (and its tables apply); of another shape, it is renamed ``NAME (config shape)``, so that no table of
        the model it names is taken for it. Its aliases (its folder's name) only find a model of its
        shape, and are not kept: two checkpoints in folders of one name are two models. Of a catalogue model's
        shape under another name (a fine-tuned checkpoint), that model's cells stand for it where no table
        names it (`Model.tables_of`)."""
        check_types(("model", model, Model))

        def names(entry: Model) -> set[str]:
            return {_normalise(name) for name in (entry.name, *entry.aliases)}

        named = [m for m in self.models if _normalise(model.name) in names(m)]
        if not named:
            aliases = {_normalise(alias) for alias in model.aliases}
            named = [m for m in self.models if aliases & names(m) and m.shape == model.shape][:1]
        if any(m.shape != model.shape for m in named):
            model, named = model.model_copy(update={"name": model.name + CONFIG_SHAPE, "aliases": ()}), []
        elif named:  # the catalogue's model, which its tables know by its name (``qwen3-8b`` is Qwen3-8B),
            # with the context the config gives it
            model = named[0].model_copy(update={"native_context": model.native_context,
                                                "rope_scaling": model.rope_scaling})
        else:
            model = model.model_copy(update={"aliases": ()})
        if not named:  # a checkpoint of a catalogue model's shape: that model's cells stand in for its own
            model = model.model_copy(update={"tables_of": next(
                (m.tables_of or m.name for m in self.models if m.shape == model.shape), None)})
        return self.model_copy(update={"models": (*(m for m in self.models if m not in named), model)})

    def with_gpu_types(self, gpu_types: Iterable[GpuType]) -> Catalog:
        """This catalogue with the GPU types it does not have yet (given by their memory, ``--gpu NAME
        --gpu-memory M`` or a pool's ``gpu_memory_gb``: no tables of their own, `tables_for`); `QueryError`
        for one whose name or alias is another's (in any case)."""
        if isinstance(gpu_types, (str, BaseModel)) or not isinstance(gpu_types, Iterable):
            raise QueryError(f"gpu_types must be a list of GpuType, got {_shown(gpu_types)}")
        gpu_types = list(gpu_types)
        check_types(*(("gpu_types", gpu_type, GpuType) for gpu_type in gpu_types))
        catalog = self
        for gpu_type in gpu_types:
            if gpu_type in catalog.gpu_types:
                continue
            for name in (gpu_type.name, *gpu_type.aliases):
                try:
                    known = catalog.gpu(name)
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
        if known is None:  # its name and aliases must be its own
            return self.with_gpu_types([gpu_type])
        if unknown := [alias for alias in gpu_type.aliases if alias not in known.aliases]:
            raise QueryError(f"aliases {', '.join(unknown)}: {known.name} is in the catalogue, whose aliases for it "
                             f"stand ({', '.join(known.aliases) or 'none'}); give it none here")
        taken = sorted({table.gpus for table in known.tables} & {table.gpus for table in gpu_type.tables})
        if taken:
            counts = ", ".join(map(str, taken[:-1])) + " and " * (len(taken) > 1) + str(taken[-1])
            raise QueryError(f"{known.name} has a table for {counts} GPU{'s' if taken != [1] else ''} already; measured "
                             "cells join the tables where they have none (give the GPU type a name of its own to "
                             "plan with yours alone)")
        # The measured tables name their own source: the GPU type's is the catalogue's.
        sourced = gpu_type.tables if gpu_type.source == known.source else tuple(
            table.model_copy(update={"source": table.source or source_words(gpu_type.source)})
            for table in gpu_type.tables)
        tables = tuple(sorted((*known.tables, *sourced), key=lambda table: table.gpus))
        merged = known.model_copy(update={"tables": tables})
        return self.model_copy(update={"gpu_types": tuple(merged if g is known else g for g in self.gpu_types)})

    def with_cells(self, path: Path | str, *, keep_contradictions: bool = False) -> Catalog:
        """This catalogue with the tables of a cells file you measured (one GPU type in the tables' format,
        as ``solve calibrate --cells`` reads), by `with_tables`: `TableError` for a bad file, and, unless
        `keep_contradictions` (taken, to be listed), for cells that contradict themselves or the tables beside them
        (`contradictions`: a typo would make plans that run out of memory); `QueryError` (naming the file) for
        tables it has already."""
        check_types(("path", path, Path | str), ("keep_contradictions", keep_contradictions, bool))
        try:
            measured = load_gpu_type(Path(path), self.models, self.gpu_types)
            if not measured.tables:
                raise TableError(f"{path}: no tables: a cells file gives at least one (gpus, models, rows)")
            catalog = self.with_tables(measured)
        except QueryError as error:
            raise QueryError(f"{path}: {error}") from None
        added = [] if keep_contradictions else self.new_contradictions(catalog, measured.name)
        if added:
            more = and_more(added) and (f"{and_more(added)} (solve tables --check, with the same --cells and "
                                        "--model-config, lists them)")
            raise TableError(f"{path}: {added[0]}{more}; check the cells")
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
        with_gpus = self.with_models(fleet.models).with_gpu_types(fleet.gpu_types)
        return with_gpus.with_gpu_types(pools_gpu_types(fleet.pools, with_gpus))

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

    def table_origins(self, gpu: str, model: Model) -> Mapping[int, str]:
        """For each GPU count whose table for `model` `tables_for` borrows for `gpu`, the GPU type whose table it
        is."""
        return MappingProxyType({table.gpus: owner for owner, table in self._speaking(gpu, model) if owner != gpu})

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
        if gpus is not None:
            counts = sorted({table.gpus for gpu_type in gpu_types for table in gpu_type.tables})
            if gpus not in counts:
                raise QueryError(f"no table for {gpus} trainer GPUs; documented counts: {', '.join(map(str, counts))}")
            gpu_types = tuple(
                gpu_type.model_copy(update={"tables": tuple(t for t in gpu_type.tables if t.gpus == gpus)})
                for gpu_type in gpu_types
            )
        if model is not None:
            resolved = self.model(model)
            documented = [m.name for m in self.models if any(m.name in t.models for g in gpu_types for t in g.tables)]
            if not any(t.name_for(resolved) for g in gpu_types for t in g.tables):
                raise QueryError(f"no documented table has {resolved.name}; documented models: {', '.join(documented)}")
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
          length (more GPUs only shard the states further), the table for more GPUs being the one the planner
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
                    found += _longer_contradictions(f"{gpu_type.name}, {counted(table.gpus, 'GPU')}, {model}", column)
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
                        alone = {*_longer_contradictions(where, column), *_longer_contradictions(where, [
                            (length, setting) for length, setting in lengths.items() if length not in dict(column)])}
                        merged = sorted([*column, *((length, setting) for length, setting in lengths.items()
                                                    if length not in dict(column))], key=lambda cell: cell[0])
                        found += [said for said in _longer_contradictions(where, merged) if said not in alone]
        return found

    def cells(self) -> Iterator[Cell]:
        """Every documented cell, by GPU type, GPU count, row and the table's model order."""
        for gpu_type in self.gpu_types:
            for table in gpu_type.tables:
                source = table.source or source_words(gpu_type.source)
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


class UniqueKeys:
    """For a PyYAML loader (before it in the bases): a mapping with the same key twice is refused (plain YAML
    keeps the last); a key that a merge key (``<<: *defaults``) brings in and the mapping sets again is not
    twice, as in YAML 1.1."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        """The loader's mapping, once every key is a plain value given once (`TableError` naming the line)."""
        seen = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=deep)  # type: ignore[attr-defined]
            if not isinstance(key, (str, int, float, bool, type(None))):
                raise TableError(f"line {key_node.start_mark.line + 1}: a key must be a plain value, "
                                 f"not a {type(key).__name__}")
            if key in seen:
                raise TableError(f"line {key_node.start_mark.line + 1}: key {key!r} appears twice")
            seen.add(key)
        return super().construct_mapping(node, deep=deep)  # type: ignore[misc]


class UniqueKeyLoader(UniqueKeys, getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """PyYAML's safe loader (libyaml's, where installed) with `UniqueKeys`: the tables' files."""


NUMBER_TOO_LONG = "a number too long to read (thousands of digits)"
"""What a message says of an integer longer than Python converts (4300 digits)."""


def yaml_limit(error: BaseException) -> str | None:
    """Which of Python's limits a YAML loader's `error` ran into, in words: nesting deeper than its recursion
    goes (said in libyaml's words for its own limit), or an integer longer than it converts; None for others."""
    if isinstance(error, RecursionError):
        return "malformed YAML: exceeded maximum nesting depth"
    if isinstance(error, ValueError) and "integer string conversion" in str(error):
        return NUMBER_TOO_LONG
    return None


def yaml_error_place(error: BaseException, text: str) -> str:
    """Where in `text` a YAML loader's `error` lies, in words before a colon: ``line N: ``, or ``at the end of the
    file: `` for a mark at its end (an unclosed bracket: its line past the last); "" without a mark."""
    mark = getattr(error, "problem_mark", None)
    if mark is None:
        return ""
    return "at the end of the file: " if mark.index >= len(text) else f"line {mark.line + 1}: "


def _read_yaml(path: Path) -> Any:
    text = read_user_file(path)
    try:
        return yaml.load(text, Loader=UniqueKeyLoader)
    except TableError as error:
        raise TableError(f"{path}: {error}") from None
    except (RecursionError, ValueError) as error:  # a limit, or a scalar that cannot be built (the date 2020-13-45)
        raise TableError(f"{path}: {yaml_limit(error) or 'malformed YAML: ' + ' '.join(str(error).split())}") from None
    except yaml.YAMLError as error:
        at = yaml_error_place(error, text)
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise TableError(f"{path}: {at}malformed YAML: {problem}") from None


_ITEM_LABELS = {
    "tables": ("table gpus={}", "gpus"),
    "rows": ("row max_model_len={}", "max_model_len"),
    "models": ("model {}", "name"),
    "pools": ("pool {}", "name"),
    "gpus": ("gpu {}", "name"),
    "jobs": ("job {}", "name"),
}
"""How to name an item of each list in an error: by the field that identifies it."""


def _describe_location(raw: Any, location: tuple[Any, ...]) -> str:
    """Turn a pydantic error location into words: ``table gpus=4, row max_model_len=8192, cells``."""
    words = []
    node = raw
    container = ""
    for position, key in enumerate(location):
        if isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node):
            node = node[key]
            label, field = _ITEM_LABELS.get(container, ("item {}", ""))
            identity = node.get(field) if isinstance(node, dict) else None
            if not isinstance(identity, (str, int, float)):  # a list or a mapping names nothing
                identity = None
            text = str(identity) if str(identity).isprintable() else repr(identity)  # no control codes raw
            shown = text if len(text) <= 40 else f"{text[:37]}..."
            words.append(label.format(shown) if identity is not None else f"{container or 'item'} item {key + 1}")
        elif isinstance(node, dict) and key in node:
            node = node[key]
            container = str(key)
            if key not in _ITEM_LABELS or position == len(location) - 1:
                words.append(str(key))
        else:
            words.append(str(key))
            node = None
    return ", ".join(words)


def _data_location(raw: Any, location: tuple[Any, ...]) -> tuple[Any, ...]:
    """The part of a pydantic location that walks the data (without union-member tags such as
    ``constrained-int`` or ``AtLeast`` that pydantic adds for a field of several types)."""
    walked, node = [], raw
    for key in location:
        if key in _UNION_TAGS and not (isinstance(node, dict) and key in node):  # a tag, not data
            continue
        if isinstance(node, dict) and key in node or isinstance(node, list) and isinstance(key, int):
            node = node[key] if isinstance(node, dict) or 0 <= key < len(node) else None
            walked.append(key)
        elif isinstance(node, (dict, list)):
            walked.append(key)  # a missing or unknown field
            node = None
    return tuple(walked)


_PLAIN_PROBLEMS = {
    "greater_than_equal": "must be at least {ge}",
    "greater_than": "must be above {gt}",
    "less_than_equal": "must be at most {le}",
    "less_than": "must be below {lt}",
    "too_short": "must list at least {min_length}",
    "string_pattern_mismatch": "must be letters, digits, '.', '_' and '-', starting with a letter or digit",
    "int_type": "must be a whole number",
    "int_from_float": "must be a whole number",
    "float_type": "must be a number",
    "finite_number": "must be a finite number",
    "bool_type": "must be true or false",
    "string_type": "must be text",
    "string_too_long": "must be at most {max_length} characters",
    "dict_type": "must be a mapping",
    "list_type": "must be a list",
    "tuple_type": "must be a list",
    "model_type": "must be a mapping",
}
"""Pydantic's error types in the words of a one-line message (a name pattern is the only one used)."""


def _fields_at(schema: type[BaseModel], location: tuple[Any, ...]) -> tuple[str, ...]:
    """The fields of the mapping at a pydantic error's `location` in data of `schema` (the names a file may
    give there, aliases as written), or () where it is not one of rft-solver's models."""
    node: Any = schema
    for key in location:
        if not (isinstance(node, type) and issubclass(node, BaseModel)):
            return ()
        if key in node.model_fields:
            node = node.model_fields[key].annotation
        elif not isinstance(key, int):  # a union member's tag, or an item's position, walks into the type
            node = next((member for member in _members(node) if getattr(member, "__name__", None) == key), node)
            continue
        node = next((member for member in _members(node) if isinstance(member, type) and issubclass(member, BaseModel)),
                    node)
    if not (isinstance(node, type) and issubclass(node, BaseModel)):
        return ()
    return tuple(field.alias or name for name, field in node.model_fields.items())


def _members(annotation: Any) -> tuple[Any, ...]:
    """The types an annotation stands for, unwrapped (Optional, unions, Annotated, the items of a tuple or list)."""
    arguments = get_args(annotation)
    if not arguments:
        return (annotation,)
    return tuple(member for argument in arguments for member in _members(argument))


def _validation_message(path: Path, raw: Any, error: ValidationError, recheck: Callable[[Any], object],
                        schema: type[BaseModel]) -> str:
    """`error` in one line (naming a mapping's fields where one is missing or unknown, `schema`'s); `recheck`
    validates other data the same way (for the hint of a number YAML reads as text, which must not suggest a
    value its field refuses)."""
    # An error at a location that holds another error's is its consequence (a list left empty by an item
    # that failed): only the innermost ones count.
    errors = [e for e in error.errors()
              if not any(len(o["loc"]) > len(e["loc"]) and tuple(o["loc"][:len(e["loc"])]) == tuple(e["loc"])
                         for o in error.errors())]
    first = errors[0]
    if first["type"] == "missing":  # a field given under another name: the unknown one beside it says more
        first = next((e for e in errors if e["type"] == "extra_forbidden" and e["loc"][:-1] == first["loc"][:-1]), first)
    location = _data_location(raw, tuple(first["loc"]))
    fields = _fields_at(schema, tuple(first["loc"][:-1])) if first["type"] in ("extra_forbidden", "missing") else ()
    accepted = f" (fields: {', '.join(fields)})" if fields else ""
    if first["type"] == "extra_forbidden":
        location, problem = location[:-1], f"unknown field {location[-1]!r}{accepted}"
    elif first["type"] == "missing":
        location, problem = location[:-1], f"missing field {location[-1]!r}{accepted}"
    elif first["type"] in _PLAIN_PROBLEMS:
        problem = _plain_problem(first) + f", got {brief(first['input'])}"
        if first["type"] in ("int_type", "float_type") and _yaml_text_number(first["input"]):
            written = _yaml_number(first["input"], first["type"] == "int_type")
            bound = _broken_bound(raw, location, yaml.safe_load(written), recheck)
            problem += f" (YAML reads it as text{f', and as a number it {bound}' if bound else f': write {written}'})"
        elif first["type"] == "string_type" and isinstance(first["input"], (bool, int, float)):
            kind = "true or false" if isinstance(first["input"], bool) else "a number"
            problem += f" (YAML reads it, unquoted, as {kind}: put it in quotes)"
    else:
        problem = first["msg"].removeprefix("Value error, ")
        if first["type"] not in ("value_error", "assertion_error") and "input" in first:
            problem += f", got {brief(first['input'])}"
    where = _describe_location(raw, location)
    more = len({_data_location(raw, tuple(e["loc"])) for e in errors}) - 1
    extra = f" (and {counted(more, 'more problem')})" if more else ""
    return f"{path}: {where + ': ' if where else ''}{problem}{extra}"


def _plain_problem(error: Any) -> str:
    """A pydantic error of `_PLAIN_PROBLEMS`' types in their words, its bounds as written (1000000, not 1e+06)."""
    context = {key: (str(int(value)) if value.is_integer() else f"{value:g}") if isinstance(value, float) else value
               for key, value in error.get("ctx", {}).items()}
    return _PLAIN_PROBLEMS[error["type"]].format(**context)


_BOUND_PROBLEMS = ("greater_than_equal", "greater_than", "less_than_equal", "less_than", "finite_number")


def _broken_bound(raw: Any, location: tuple[Any, ...], number: Any, recheck: Callable[[Any], object]) -> str | None:
    """The bound of its field that `number`, put at `location` of `raw`, breaks, in words (``must be at most
    1000000``); None when it breaks none."""
    data = copy.deepcopy(raw)
    node = data
    for key in location[:-1]:
        node = node[key]
    node[location[-1]] = number
    try:
        recheck(data)
    except ValidationError as error:
        return next((_plain_problem(e) for e in error.errors()
                     if e["type"] in _BOUND_PROBLEMS and _data_location(data, tuple(e["loc"])) == location), None)
    return None


def _yaml_text_number(value: Any) -> bool:
    """Whether `value` is text in exponent notation that YAML 1.1 does not read as a number (``1e3``,
    ``1e-3``: it wants a dot and a sign, ``1.0e+3``)."""
    return isinstance(value, str) and re.fullmatch(r"\s*[+-]?(\d+\.?\d*|\.\d+)[eE][+-]?\d+\s*", value) is not None


def _yaml_number(text: str, whole: bool) -> str:
    """How to write `text` (exponent notation, see `_yaml_text_number`) so that YAML reads a number: the
    digits for a whole number, else a dot in the mantissa and a signed exponent (``1e-3`` -> ``1.0e-3``)."""
    value = Decimal(text.strip())  # exact: 1e30 is 1 and thirty zeros, not the nearest float's digits
    if whole and value == value.to_integral_value():
        return str(int(value))
    mantissa, exponent = text.strip().lower().split("e")
    sign, digits = (mantissa[0], mantissa[1:]) if mantissa[0] in "+-" else ("", mantissa)
    mantissa = sign + ("0" if digits.startswith(".") else "") + digits + ("" if "." in digits else ".0")
    return f"{mantissa}e{exponent if exponent[0] in '+-' else '+' + exponent}"


def _validate(model: type[BaseModel], path: Path, context: dict[str, Any] | None = None) -> Any:
    """The file at `path` as `model`, or `TableError` in one line (naming the kind of file it looks like instead, where
    its top-level keys are another's: `_FILE_KINDS`)."""
    raw = _read_yaml(path)
    if not isinstance(raw, dict):
        got = "an empty file" if raw is None else f"a {type(raw).__name__}"
        raise TableError(f"{path}: expected a mapping at the top level, got {got}")
    try:
        return model.model_validate(raw, context=context)
    except ValidationError as error:
        other = next((kind for kind, (schema, keys) in _FILE_KINDS.items() if schema is not model and keys <= set(raw)),
                     None)
        hint = f" (this looks like {other})" if other else ""
        raise TableError(_validation_message(path, raw, error, lambda data: model.model_validate(data, context=context),
                                             model) + hint) from None


_FILE_KINDS: dict[str, tuple[type[BaseModel] | None, set[str]]] = {
    "a cells file, for --cells": (GpuType, {"gpu", "tables"}),
    "a memory-model file, for --memory-model, as solve calibrate --out writes": (MemoryModel, {"coefficients"}),
    "a cost-weights file, for --weights": (Weights, {"offload", "sp", "env"}),
    "a fleet file, for solve cluster": (_FleetFile, {"pools", "jobs"}),
    "a Trinity config, for --from-config": (None, {"model", "trainer"}),
}
"""The kinds of file a user gives, each by its schema and the top-level keys that tell it apart."""

_Item = TypeVar("_Item", bound=Hashable)


def _first_repeated(items: Iterable[_Item]) -> _Item | None:
    """The first item that occurs more than once, or None; linear time, so big files stay fast."""
    items = list(items)
    counts = Counter(items)
    return next((item for item in items if counts[item] > 1), None)


def load_models(path: Path) -> tuple[Model, ...]:
    """Load and check a models file (``tables/models.yaml``)."""
    models = _validate(_ModelsFile, path).models
    names = [_normalise(name) for model in models for name in (model.name, *model.aliases)]
    duplicate = _first_repeated(names)
    if duplicate is not None:
        raise TableError(f"{path}: the name {duplicate!r} is given to two models")
    return models


def load_gpu_type(path: Path, models: tuple[Model, ...], hardware: tuple[GpuType, ...] = ()) -> GpuType:
    """Load and check one GPU type's feasibility tables against the known `models`; a GPU type of the
    `hardware` catalogue (named by its name or an alias) must match its entry there, whose name, aliases
    and driver-reported memory it takes."""
    names = {_normalise(name): model.name for model in models for name in (model.name, *model.aliases)}
    tabled = _validate(GpuType, path, context={"models": [model.name for model in models], "names": names})
    by_name = {model.name: model for model in models}
    for table in tabled.tables:  # a setting no run can have: the model's heads rule its SP degree out
        for row in table.rows:
            for name, setting in row.cells:
                heads = setting and sp_rule_violation(by_name[name].num_attention_heads,
                                                      by_name[name].num_key_value_heads, setting.sp)
                if heads:
                    raise TableError(f"{path}: table gpus={table.gpus}: row max_model_len={row.max_model_len}, "
                                     f"{name}: {heads} (Trinity and verl refuse it)")
    known = next((gpu for wanted in dict.fromkeys((_normalise(tabled.name), smi_name_form(tabled.name)))
                  for gpu in hardware if wanted in {_normalise(name) for name in (gpu.name, *gpu.aliases)}), None)
    if known is None:
        return tabled
    if known.memory_gb != tabled.memory_gb:
        raise TableError(f"{path}: GPU {tabled.name}: memory_gb {tabled.memory_gb} is not the catalogue's {known.memory_gb} "
                         f"for {known.name}")
    if tabled.memory_mib not in (None, known.memory_mib):
        raise TableError(f"{path}: GPU {tabled.name}: memory_mib {tabled.memory_mib} is not the catalogue's "
                         f"{known.memory_mib} for {known.name} (leave it out to take that)")
    aliases = tuple(dict.fromkeys(alias for alias in (*known.aliases, *tabled.aliases) if alias != known.name))
    return tabled.model_copy(update={"name": known.name, "aliases": aliases, "memory_mib": known.memory_mib})


def load_catalog(directory: Path | str | None = None) -> Catalog:
    """Load the models and every GPU type's tables from `directory` (default: the shipped tables)."""
    check_types(("directory", directory, Path | str | None))
    if directory is None:
        return _shipped_catalog()
    directory = Path(directory)
    models = load_models(directory / "models.yaml")
    hardware = _validate(_GpusFile, directory / "gpus.yaml").gpus
    paths = sorted((directory / "feasibility").glob("*.yaml"))
    if not paths:
        raise TableError(f"{directory / 'feasibility'}: no GPU table files (*.yaml)")
    documented: dict[str, GpuType] = {}
    read_from: dict[str, Path] = {}
    for path in paths:
        tabled = load_gpu_type(path, models, hardware)
        if all(gpu.name != tabled.name for gpu in hardware):
            raise TableError(f"{path}: GPU {tabled.name} is not in gpus.yaml; add it there")
        if tabled.name in read_from:
            raise TableError(f"{path}: GPU {tabled.name} has tables in {read_from[tabled.name].name} too; keep one "
                             "file per GPU type")
        documented[tabled.name], read_from[tabled.name] = tabled, path
    gpu_types = tuple(documented.get(gpu.name, gpu) for gpu in hardware)
    names = [_normalise(name) for gpu in gpu_types for name in (gpu.name, *gpu.aliases)]
    duplicate = _first_repeated(names)
    if duplicate is not None:
        raise TableError(f"{directory}: the name {duplicate!r} is given to two GPU types")
    return Catalog(models=models, gpu_types=gpu_types)


def pools_gpu_types(pools: Iterable[Pool], catalog: Catalog) -> tuple[GpuType, ...]:
    """The GPU types `pools` describe by their memory (``gpu_memory_gb``/``gpu_memory_mib``), one per name;
    `QueryError` for a pool that gives the memory of a catalogue GPU type, or one name two memories."""
    described: dict[str, GpuType] = {}
    for pool in pools:
        gpu_type = pool.gpu_type
        if gpu_type is None:
            continue
        try:
            known = catalog.gpu(pool.gpu)
        except QueryError:
            known = None
        if known is not None and known.source == gpu_type.source:  # a fleet's own, added already (for_fleet)
            described.setdefault(_normalise(pool.gpu), known)
        elif known is not None:
            raise QueryError(f"pool {pool.name}: gpu {pool.gpu} names {known.name} ({known.memory_gib:.1f} GiB), a "
                             "GPU type whose memory is known: drop gpu_memory_gb and gpu_memory_mib, or give your GPU "
                             "type a name of its own")
        earlier = described.setdefault(_normalise(pool.gpu), gpu_type)
        if earlier.memory_gib != gpu_type.memory_gib:
            raise QueryError(f"pool {pool.name}: gpu {pool.gpu} has {gpu_type.memory_gib:g} GiB here and "
                             f"{earlier.memory_gib:g} GiB in another pool: give one GPU type one memory")
    return tuple(described.values())


def load_fleet(path: Path | str, catalog: Catalog) -> Fleet:
    """Load and check a cluster file; GPU and model names come back canonical (``a100`` -> ``A100-80GB``).

    Raises `TableError`, one line naming the file, the pool or job, and the field.
    """
    check_types(("path", path, Path | str), ("catalog", catalog, Catalog))
    path = Path(path)
    fleet = _validate(_FleetFile, path)
    try:
        described = pools_gpu_types(fleet.pools, catalog)
    except QueryError as error:
        raise TableError(f"{path}: {error}") from None
    with_gpus = catalog.with_gpu_types(described)
    pools = tuple(pool.model_copy(update={"gpu": _resolved(path, "pool", pool.name, "gpu", with_gpus.gpu, pool.gpu,
                                                           OWN_GPU_HINT.format("gpu_memory_gb"))})
                  for pool in fleet.pools)
    configured = _configured_models(path, fleet.jobs, catalog)
    jobs = tuple(Job(**job.model_dump(exclude={"model", "config_path"}),
                     model=configured[job.config_path].name if job.config_path is not None
                     else _resolved(path, "job", job.name, "model", catalog.model, job.model or ""))
                 for job in fleet.jobs)
    _check_one_context_per_model(path, fleet.jobs, jobs, configured, catalog)
    return Fleet(pools=pools, jobs=jobs, models=tuple({model.name: model for model in configured.values()}.values()),
                 gpu_types=described,
                 model_config_files=tuple(dict.fromkeys(model_config_file(path.parent / name) for name in configured)))


def _check_one_context_per_model(path: Path, entries: Iterable[_JobEntry], jobs: Iterable[Job],
                                 configured: dict[str, Model], catalog: Catalog) -> None:
    """`TableError` when two jobs name one model (a config of a catalogue model's shape is that model) with
    different contexts: the placement knows a model by its name, and its YaRN follows the context."""
    seen: dict[str, tuple[str, Model]] = {}
    for entry, job in zip(entries, jobs):
        model = configured[entry.config_path] if entry.config_path is not None else catalog.model(job.model)
        first, earlier = seen.setdefault(model.name, (job.name, model))
        if (earlier.native_context, earlier.rope_scaling) != (model.native_context, model.rope_scaling):
            raise TableError(
                f"{path}: job {job.name}: {model.name} has a native context of {model.native_context} here and "
                f"{earlier.native_context} in job {first}"
                f"{'' if earlier.rope_scaling == model.rope_scaling else ' (and another RoPE scaling)'}: give "
                "both jobs the same model (the same model_config, or the catalogue's by name)")


def fleet_models(path: Path | str, catalog: Catalog) -> tuple[Model, ...]:
    """The models a cluster file's jobs describe by ``model_config``, as `load_fleet` reads them (without its
    pools: GPU types that cells files define may not be in `catalog` yet)."""
    path = Path(path)
    configured = _configured_models(path, _validate(_FleetFile, path).jobs, catalog)
    return tuple({model.name: model for model in configured.values()}.values())


def _configured_models(path: Path, jobs: Iterable[_JobEntry], catalog: Catalog) -> dict[str, Model]:
    """The model of each job's ``model_config`` (a path relative to the cluster file at `path`), named as
    `Catalog.with_model` names it; `TableError` naming the job for a bad config, or for two configs
    that give one name to models of different shapes."""
    models: dict[str, Model] = {}
    read: dict[str, tuple[str, Model]] = {}  # the name a config gives, normalised: the job and model read
    for job in jobs:
        if job.config_path is None or job.config_path in models:
            continue
        try:
            found = model_config_file(path.parent / job.config_path)
            if found.exists() and not found.is_file():  # a FIFO would block: a file names files
                raise TableError(f"{found}: not a regular file")
            model = load_model_config(found)
        except TableError as error:
            raise TableError(f"{path}: job {job.name}: model_config: {error}") from None
        earlier = read.setdefault(_normalise(model.name), (job.name, model))
        if earlier[1].shape != model.shape:
            raise TableError(f"{path}: job {job.name}: model_config: {job.config_path} names its model "
                             f"{model.name!r}, as job {earlier[0]}'s does, but the two differ in shape: give the "
                             "folders or _name_or_path different names")
        catalog = catalog.with_model(model)
        models[job.config_path] = catalog.models[-1]
    return models


OWN_GPU_HINT = "; or, for a GPU type of your own, give its memory: {}"
"""What an unknown GPU's message adds where a GPU type may be given by its memory (the option's name)."""


def _resolved(path: Path, kind: str, name: str, field: str, resolve: Any, value: str, hint: str = "") -> str:
    """The canonical name of `value` (a GPU type or model); `TableError` naming the item when unknown (with
    `hint` after the accepted names)."""
    try:
        return str(resolve(value).name)
    except QueryError as error:
        raise TableError(f"{path}: {kind} {name}: {field}: {error}{hint}") from None


def _in_units(size: int) -> str:
    """A file size in MB, or in KB below one, to a tenth where that is not whole (16.2 MB, 256 KB)."""
    value, unit = (size / 2**20, "MB") if size >= 2**20 else (size / 2**10, "KB")
    return f"{value:.1f}".removesuffix(".0") + f" {unit}"


def read_user_file(path: Path, limit_bytes: int = MAX_FILE_BYTES) -> str:
    """The text of a file the user names (a Trinity config), of at most `limit_bytes`; `TableError`, one line,
    when unreadable."""
    limit = f"the limit is {_in_units(limit_bytes)}"
    try:
        size = path.stat().st_size
        if size > limit_bytes:
            raise TableError(f"{path}: {_in_units(size)} is too large ({limit})")
        with path.open("rb") as handle:  # a device or a pipe has no size: read one byte past the limit at most
            data = handle.read(limit_bytes + 1)
        if len(data) > limit_bytes:
            raise TableError(f"{path}: too large ({limit})")
        return data.decode("utf-8")  # line endings as they are (a patched copy keeps them)
    except OSError as error:
        raise TableError(f"{path}: cannot read: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise TableError(f"{path}: not a text file (UTF-8)") from None


YARN_VALIDATED_FACTOR = 4.0
YARN_VALIDATED_TOKENS = 131072
"""The YaRN Qwen's model cards validate: a factor of 4, up to 131072 tokens."""
QWEN_MODEL_TYPES = ("qwen2", "qwen2_moe", "qwen3", "qwen3_moe")
"""The ``model_type`` of the Qwen models whose YaRN Qwen's model cards validate (`Model.qwen_yarn`)."""
MOE_CONFIG_KEYS = ("num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts")
"""Keys by which a Hugging Face config declares a mixture of experts (Qwen-MoE, Mixtral, DeepSeek, ...)."""
MULTIMODAL_CONFIG_KEYS = ("text_config", "vision_config", "audio_config", "speech_config")
"""Keys by which a Hugging Face config declares a multimodal model (Qwen2-VL, LLaVA, Qwen2-Audio, ...)."""
TIED_BY_MODEL_TYPE = {"gemma": True, "gemma2": True, "gemma3_text": True, "granite": False, "llama": False,
                      "mistral": False, "olmo": False, "olmo2": False, "phi3": False, "qwen2": False, "qwen3": False,
                      "stablelm": False}
"""Whether a config.json without ``tie_word_embeddings`` ties its embeddings, by its ``model_type``: the default of
that model's config class in transformers (its base class's is true; Llama's, Qwen's, Mistral's and others'
false)."""
SOFTCAP_BY_MODEL_TYPE = {"gemma2": 30.0}
"""A config.json's ``final_logit_softcapping`` where it gives none, by its ``model_type``: its class's default
(Gemma-2 caps the logits at 30; the others, and null, do not cap them)."""
UNGATED_MODEL_TYPES = ("bloom", "codegen", "falcon", "gpt2", "gpt_bigcode", "gpt_neo", "gpt_neox", "gptj", "mpt",
                       "nemotron", "opt", "persimmon", "phi", "starcoder2")
"""Model types whose MLP is two matrices (up and down), not the three of a gated MLP (gate, up and down) that
`load_model_config` counts: refused rather than counted a third too large."""
CONFIG_LIMITS = {"hidden_size": 1 << 20, "num_hidden_layers": 1 << 14, "num_attention_heads": 1 << 14,
                 "num_key_value_heads": 1 << 14, "head_dim": 1 << 14, "intermediate_size": 1 << 22,
                 "vocab_size": 1 << 24, "max_position_embeddings": 1 << 30, "original_max_position_embeddings": 1 << 30}
"""The largest value a config.json key may have: far beyond any model, but finite."""


class _Brief(reprlib.Repr):
    """reprlib's cut repr, which picks its method by the type's name: any other mapping, a subclass of list
    or tuple, and any other set (ruamel's CommentedMap, CommentedSeq, ...) is cut as the builtin kind is,
    where reprlib would write it out whole."""

    def repr1(self, x: Any, level: int) -> str:
        if not hasattr(self, "repr_" + "_".join(type(x).__name__.split())):
            for kind, builtin in ((Mapping, "dict"), (list, "list"), (tuple, "tuple"), (AbstractSet, "set")):
                if isinstance(x, kind):
                    return str(getattr(self, f"repr_{builtin}")(x, level))
        return super().repr1(x, level)


_BRIEF = _Brief()
_BRIEF.maxlevel, _BRIEF.maxstring, _BRIEF.maxlong, _BRIEF.maxother = 3, 100, 5000, 100
_BRIEF.maxlist = _BRIEF.maxtuple = _BRIEF.maxdict = _BRIEF.maxset = 6


def cell_text(setting: Setting | None) -> str:
    """A cell's text: the setting's label, or ``-`` (nothing trained)."""
    return setting.label if setting else NO_SETTING


def sp_suits_kv_heads(kv_heads: int, sp: int) -> bool:
    """Whether SP degree `sp` and a model's KV heads divide one another (verl's Ulysses check: each rank holds
    whole KV heads, or a KV head is repeated over whole ranks)."""
    return kv_heads % sp == 0 or sp % kv_heads == 0


def sp_within_node(gpus: int, node_gpus: int, sp: int) -> bool:
    """Whether each SP group of a trainer of `gpus` GPUs stays inside a node of `node_gpus`: the trainer fits
    one node, or SP divides the node."""
    return gpus <= node_gpus or node_gpus % sp == 0


def sp_rule_violation(attention_heads: int, kv_heads: int, sp: int) -> str | None:
    """Why a model's heads rule out SP degree `sp` (Trinity and verl's checks), or None if they allow it."""
    if attention_heads % sp:
        return f"SP={sp} does not divide its {counted(attention_heads, 'attention head')}"
    if not sp_suits_kv_heads(kv_heads, sp):
        return f"SP={sp} and its {kv_heads} KV heads do not divide one another"
    return None


def and_more(items: Sized, shown: int = 1) -> str:
    """``; and 3 more`` where `items` holds more than the `shown` first ones a message names; else empty."""
    return f"; and {len(items) - shown} more" if len(items) > shown else ""


def counted(number: int | Sequence[int], noun: str) -> str:
    """``1 GPU``, ``4 GPUs``; of several numbers, ``1, 2 GPUs``."""
    numbers = [number] if isinstance(number, int) else list(number)
    return f"{', '.join(map(str, numbers))} {noun}{'s' if numbers != [1] else ''}"


def brief(value: Any) -> str:
    """`value`'s repr, cut to 60 characters (a one-line message must stay one short line). Nested lists
    and mappings are cut as they are shown, so that YAML's aliases, which can nest a value a billion times
    in a few lines, cost no more than a short value."""
    try:
        shown = _BRIEF.repr(value)
    except ValueError:  # an integer longer than Python writes out (4300 digits)
        return f"a whole number of about {int(value.bit_length() * 0.30103)} digits"
    return cut(shown)


def cut(text: str) -> str:
    """`text` cut to 60 characters, as `brief` cuts a repr: for a name or value shown as it is given."""
    return text if len(text) <= 60 else text[:57] + "..."


_KIND_WORDS: dict[object, tuple[str, ...]] = {bool: ("True", "False"), int: ("a whole number",),
                                              float: ("a number",), type(None): ("None",), Callable: ("a function",)}
"""How `check_types` names the kinds a parameter accepts (any other class: ``a Catalog``)."""


def check_types(*values: tuple[str, object, Any]) -> None:
    """`QueryError` unless each (parameter, value, kind) value is of its kind: a class, or a union of them
    (``bool | None``); `int` and `float` take no bool, and `float` takes an int too. The message shows a
    builtin value (``'32k'``), or else its type (``a Catalog``)."""
    for name, value, kind in values:
        kinds = get_args(kind) or (kind,)
        if not any(_is_kind(value, one) for one in kinds):
            words = [word for one in kinds for word in _KIND_WORDS.get(one, (_with_article(one.__name__),))]
            accepted = f"{', '.join(words[:-1])} or {words[-1]}" if len(words) > 1 else words[0]
            raise QueryError(f"{name} must be {accepted}, got {_shown(value, kinds)}")


def _shown(value: object, accepted: tuple[Any, ...] = ()) -> str:
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


def _is_kind(value: object, kind: type) -> bool:
    """Whether `value` is a `kind`, where a bool is no number and an int is a float."""
    if kind in (int, float) and isinstance(value, bool):
        return False
    return isinstance(value, (int, float) if kind is float else kind)


def model_config_file(path: Path) -> Path:
    """The file `load_model_config` reads for `path`: a model folder's ``config.json``, or `path` itself.
    `TableError` when `path` cannot be looked at (a folder on the way without search permission)."""
    try:
        return path / "config.json" if path.is_dir() else path
    except OSError as error:  # Path.is_dir raises on EACCES before Python 3.14
        raise TableError(f"{path}: cannot read: {error.strerror or error}") from None


class _RepeatedKey(Exception):
    """A JSON object names a key twice: the message is the key's repr."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's pairs as a dict, or `_RepeatedKey` for a key given twice (a typo's twin, which silently wins)."""
    repeated = _first_repeated(key for key, _ in pairs)
    if repeated is not None:
        raise _RepeatedKey(repr(repeated))
    return dict(pairs)


def load_model_config(path: Path | str) -> Model:
    """A dense model's shape from a local Hugging Face ``config.json``, or a model folder's (no network);
    its parameter count is computed from the shapes. `TableError`, one line naming the file and the key,
    when it cannot be. `Catalog.with_model` adds it to a catalogue, for ``catalog=``."""
    check_types(("path", path, Path | str))
    path = model_config_file(Path(path))
    config = _config_json(path)
    _check_dense_text_model(path, config)
    shape = _config_shape(path, config)
    name, aliases = _config_names(path, config)
    rope_type, native = _config_rope(path, config)
    return Model(name=name, aliases=aliases, **shape, native_context=native,
                 logit_softcapping=config.get("final_logit_softcapping",
                                              SOFTCAP_BY_MODEL_TYPE.get(str(config.get("model_type")))) is not None,
                 rope_scaling=str(rope_type) if rope_type not in (None, "default", "yarn") else None,
                 qwen_yarn=_is_qwen(config))


def _config_json(path: Path) -> dict:
    """The JSON object of the config.json at `path`; `TableError` for a byte-order mark, bad JSON or a non-object."""
    text = read_user_file(path)
    if text.startswith("\ufeff"):  # as transformers reads it: a JSON error
        raise TableError(f"{path}: starts with a byte-order mark, which JSON readers refuse: save it without one")
    try:
        config = json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as error:
        raise TableError(f"{path}: not JSON: {error.msg} (line {error.lineno})") from None
    except _RepeatedKey as repeated:
        raise TableError(f"{path}: key {repeated} appears twice (JSON readers keep the last)") from None
    except RecursionError:
        raise TableError(f"{path}: nested too deeply") from None
    except ValueError:  # an integer of 5000 digits
        raise TableError(f"{path}: {NUMBER_TOO_LONG}") from None
    if not isinstance(config, dict):
        raise TableError(f"{path}: a config.json is a JSON object")
    return config


def _check_dense_text_model(path: Path, config: dict) -> None:
    """`TableError` unless `config` is a dense, gated-MLP text model's: not MoE, not multimodal, with a text
    ``model_type`` and a valid ``final_logit_softcapping``."""
    if any(key in config for key in MOE_CONFIG_KEYS):  # the shipped ones, by name: read only for this message
        moe = next((model for model in load_catalog().models if model.moe is not None), None)
        named = "" if moe is None else (f" (the catalogue's mixture-of-experts models, such as {moe.name}, are planned "
                                        f"by name: --model {moe.aliases[0] if moe.aliases else moe.name})")
        raise TableError(f"{path}: a mixture-of-experts config; only a dense model's config.json is read{named}")
    if config.get("model_type") is not None and not isinstance(config["model_type"], str):
        raise TableError(f"{path}: model_type: expected text such as \"llama\", got {brief(config['model_type'])}")
    capping = config.get("final_logit_softcapping")
    if capping is not None and (isinstance(capping, bool) or not isinstance(capping, int | float) or not capping > 0):
        raise TableError(f"{path}: final_logit_softcapping: expected a number above 0 or null, got {brief(capping)}")
    if config.get("model_type") in UNGATED_MODEL_TYPES:
        raise TableError(f"{path}: model_type {config['model_type']}: its MLP has two matrices, not the three of a "
                         "gated MLP (gate, up, down) that rft-solver counts; it reads gated-MLP models (Llama, Qwen, "
                         "Mistral, Gemma, Phi-3 and the like)")
    towers = [key for key in MULTIMODAL_CONFIG_KEYS if key in config]
    if towers:
        raise TableError(f"{path}: a multimodal config ({', '.join(towers)}); only a text model's "
                         "config.json is read (the memory model has no term for a vision or audio tower or its tokens)")


def _config_number(path: Path, within: dict, key: str, default: int | None = None) -> int:
    """`within[key]` (`default` where absent or null) as a whole number within `CONFIG_LIMITS`; `TableError`
    otherwise."""
    value = within.get(key)
    value = default if value is None else value
    limit = CONFIG_LIMITS[key]
    if value is None:
        raise TableError(f"{path}: missing {key}: a model's config.json gives it (a whole number from 1 to {limit})")
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= limit:
        raise TableError(f"{path}: {key}: expected a whole number from 1 to {limit}, got {brief(value)}")
    return value


def _config_shape(path: Path, config: dict) -> dict[str, Any]:
    """The `Model` fields of a config.json's shape (sizes, tied embeddings, parameter count); `TableError` where
    one is missing or wrong."""
    hidden = _config_number(path, config, "hidden_size")
    layers = _config_number(path, config, "num_hidden_layers")
    heads = _config_number(path, config, "num_attention_heads")
    kv_heads = _config_number(path, config, "num_key_value_heads", heads)
    if heads % kv_heads:
        raise TableError(f"{path}: num_key_value_heads: expected a divisor of num_attention_heads ({heads}), "
                         f"got {kv_heads}")
    if config.get("head_dim") is None and hidden < heads:
        raise TableError(f"{path}: head_dim: not given, and hidden_size {hidden} over {heads} attention heads "
                         "leaves none")
    head_dim = _config_number(path, config, "head_dim", hidden // heads)
    intermediate, vocab = _config_number(path, config, "intermediate_size"), _config_number(path, config, "vocab_size")
    tied = _tied_embeddings(path, config)
    if not isinstance(tied, bool):
        raise TableError(f"{path}: tie_word_embeddings: expected true or false, got {brief(tied)}")
    attention = hidden * head_dim * (2 * heads + 2 * kv_heads)
    per_layer = attention + 3 * hidden * intermediate + 2 * hidden
    parameters = layers * per_layer + vocab * hidden * (1 if tied else 2) + hidden
    return {"head_dim": head_dim, "hidden_size": hidden, "num_layers": layers, "num_attention_heads": heads,
            "num_key_value_heads": kv_heads, "intermediate_size": intermediate, "vocab_size": vocab,
            "tied_embeddings": tied, "parameters_b": parameters / 1e9}


def _config_names(path: Path, config: dict) -> tuple[str, tuple[str, ...]]:
    """A config.json's model name (its ``_name_or_path``'s last part, else its folder's or file's) and aliases
    (its folder's name, where that differs)."""
    # The folder as it is named where the user points (a link's own name; "." and ".." taken away).
    folder_or_file = Path(os.path.abspath(path)).parent.name if path.name == "config.json" else path.stem

    def printable(text: str) -> str:
        return " ".join("".join(c if c.isprintable() else " " for c in text).split())

    name = printable(str(config.get("_name_or_path") or folder_or_file).rstrip("/").split("/")[-1]) or "custom"
    # Also known by its folder (a checkpoint's _name_or_path may be a snapshot's hash, its folder Qwen3-8B).
    aliases = (printable(folder_or_file),) if printable(folder_or_file) not in ("", name) else ()
    return name, aliases


def _config_rope(path: Path, config: dict) -> tuple[str | None, int]:
    """A config.json's RoPE scaling type (None without one) and native context (a YaRN model's original one);
    `TableError` where they are malformed."""
    scaling = config.get("rope_scaling")
    if scaling is not None and not isinstance(scaling, dict):
        raise TableError(f"{path}: rope_scaling: expected an object such as {{\"rope_type\": \"yarn\", ...}} or null, "
                         f"got {brief(scaling)}")
    rope_type = (scaling.get("rope_type") or scaling.get("type")) if scaling is not None else None
    if rope_type is not None and not isinstance(rope_type, str):
        raise TableError(f"{path}: rope_scaling: rope_type: expected text such as \"yarn\" or \"llama3\", got "
                         f"{brief(rope_type)}")
    native = _config_number(path, config, "max_position_embeddings")
    if (rope_type == "yarn" and isinstance(scaling, dict)
            and scaling.get("original_max_position_embeddings") is not None):
        native = _config_number(path, scaling, "original_max_position_embeddings")  # YaRN is re-derived from here
    return rope_type, native


def _is_qwen(config: dict) -> bool:
    """Whether a config.json is a Qwen model's: its ``model_type`` (`QWEN_MODEL_TYPES`), else its
    ``architectures`` (``Qwen2ForCausalLM``, ...)."""
    if "model_type" in config:
        return config["model_type"] in QWEN_MODEL_TYPES
    architectures = config.get("architectures")
    return isinstance(architectures, list) and any(str(name).startswith("Qwen") for name in architectures)


def _tied_embeddings(path: Path, config: dict) -> object:
    """A config.json's ``tie_word_embeddings`` as transformers reads it: null is untied; absent, the default of
    its ``model_type`` (`TIED_BY_MODEL_TYPE`), and `TableError` where that is not known here."""
    if "tie_word_embeddings" in config:
        tied = config["tie_word_embeddings"]
        return False if tied is None else tied
    model_type = config.get("model_type")
    if isinstance(model_type, str) and model_type in TIED_BY_MODEL_TYPE:
        return TIED_BY_MODEL_TYPE[model_type]
    which = f"model_type {brief(model_type)}" if model_type is not None else "no model_type"
    raise TableError(f"{path}: tie_word_embeddings is not given, and with {which} its default is not known here: add "
                     "\"tie_word_embeddings\": true or false (transformers' default is true unless the model's class "
                     "says otherwise; Llama's and Qwen's say false, Gemma's true)")


def load_memory_model(path: Path | str | None = None) -> MemoryModel:
    """Load memory-model coefficients from `path` (default: the shipped ``memory-model.yaml``)."""
    check_types(("path", path, Path | str | None))
    if path is None:
        return _shipped_memory_model()
    return _validate(MemoryModel, Path(path))


def load_weights(path: Path | str | None = None) -> Weights:
    """Load cost weights from `path` (default: the shipped ``costs.yaml``)."""
    check_types(("path", path, Path | str | None))
    if path is None:
        return _shipped_weights()
    return _validate(Weights, Path(path))


def shipped_tables_directory() -> Path:
    """Where the installed package keeps its tables (``tables/`` in a source checkout)."""
    spec = importlib.util.find_spec("solver.data")  # tables/, installed as package data
    if spec is None or not spec.submodule_search_locations:  # a source checkout that is not installed
        return Path(__file__).resolve().parent.parent / "tables"
    return Path(next(iter(spec.submodule_search_locations)))


@cache
def _shipped_catalog() -> Catalog:
    return load_catalog(shipped_tables_directory())


@cache
def _shipped_weights() -> Weights:
    return _validate(Weights, shipped_tables_directory() / "costs.yaml")


@cache
def _shipped_memory_model() -> MemoryModel:
    return _validate(MemoryModel, shipped_tables_directory() / "memory-model.yaml")
