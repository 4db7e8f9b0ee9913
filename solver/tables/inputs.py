"""The schema of cost weights, fleet files (pools and jobs), memory models (coefficients, calibration) and the
sections of Trinity's typed config."""

from __future__ import annotations

import re
from collections.abc import Mapping
from math import isfinite
from pathlib import Path
from typing import Annotated, Any, ClassVar, NamedTuple, get_args

from annotated_types import Ge, Gt, Le, Lt, MinLen
from pydantic import (
    AfterValidator,
    AllowInfNan,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Strict,
    StringConstraints,
    Tag,
    ValidationInfo,
    field_validator,
    model_validator,
)

from solver.tables.bounds import (
    BARE_HOST_RAM_GB,
    CRITIC_CHOICES,
    DPO_CONFLICTS,
    DPO_NO_EXPLORER,
    HOST_RAM_UNITS,
    INTERCONNECTS,
    KNOWN_PATCH_RELEASES,
    MAX_GPU_MEMORY_GB,
    MAX_GPUS,
    MAX_HOST_RAM_GB,
    MAX_JOBS,
    MAX_LORA_RANK,
    MAX_NODE_GPUS,
    MAX_TRAIN_BATCH,
    NO_CRITIC,
    TRINITY_RELEASE_FORMS,
    CriticChoice,
    CriticStates,
    NodeInterconnect,
    checked_host_ram,
    counted_critic,
    dpo_conflict,
    host_ram_text_told,
    read_host_ram,
    release_name,
    small_host_ram_note,
    trinity_release,
    vllm_lora_rank_refusal,
)
from solver.tables.peft_match import ALL_LINEAR, LORA_TARGETS_FORMS, lora_targets_pattern
from solver.tables.peft_names import LoraTargets
from solver.tables.schema import (
    GPU_NAMED,
    HOST_RAM_WRITTEN,
    TYPED,
    AskedTokens,
    Count,
    Flag,
    Frozen,
    GpuType,
    Interconnect,
    Model,
    Multiplier,
    NodeInterconnectField,
    PlainWorded,
    PrintableText,
    Text,
    TupleOf,
    Weight,
    choice_as_typed,
    described_gpu_type,
)
from solver.tables.text import (
    EVERY_JOB,
    QueryError,
    and_joined,
    count_in_name,
    counted,
    first_repeated,
    gpu_with_count,
    meant_fleet_name,
    shown_number,
    yaml_brief,
)


class Weights(Frozen):
    """Cost weights: ``cost = (1/n) * (1 + offload*r*o + c) * (1 + sp*p*(s-1)) * (1 + env*e)``, for a model of r
    parameters held per parameter active (`Model.held_per_active`: 1 for a dense model; r = 1 for every model where
    ``offload_moe_scaling`` is false), with p the `sp_pcie_factor` on a GPU type whose GPUs talk over PCIe
    (`GpuType.interconnect`), 1 on others, and c a PPO critic's work: 0 without one, else ``critic * (1 + offload*r*h)``
    with h 1 where its states are in host memory (offloaded or reloaded). A weight left out (of a file or of the
    constructor: ``offload: 2`` alone changes Offload's weight only) takes the shipped ``costs.yaml``'s value, its
    default here."""

    not_asked_here: ClassVar[dict[str, str]] = dict.fromkeys(
        ("price", "prices", "cost", "costs", "gpuprice", "gpucost", "pricepergpu", "costpergpu", "priceperhour",
         "costperhour", "gpuhourprice", "pricepergpuhour", "costpergpuhour", "hourlyprice", "hourlycost",
         "dollarsperhour", "usdperhour", "pricepertoken", "costpertoken"),
        "a weights file has no price: a cost is a relative step time, from a plan's GPUs and settings, not a GPU "
        "type's speed or price; to compare GPU types, solve --gpu a100,h200 answers for each, and solve cluster --buy "
        "names the fewest GPUs to buy")
    """Fields a weights file may be given by mistake (without case or separators), a price, and why it takes none."""

    offload: Weight = 1.0
    sp: Weight = 0.1
    env: Weight = 0.01
    offload_moe_scaling: Flag = True
    """Whether Offload's weight for a mixture of experts is multiplied by its parameters held per parameter active
    (`Model.held_per_active`); false: every model's Offload adds ``offload``, as a dense model's does."""
    sp_pcie_factor: Annotated[float, Strict(), Ge(1), Le(1000), AllowInfNan(False)] = Field(default=3.0, description=(
        "how many times SP's weight counts on a GPU type whose GPUs reach one another over PCIe (interconnect: "
        "pcie): Ulysses' all-to-all crosses PCIe, or host memory, every layer; 1 weighs it as on NVLink"))
    critic: Weight = 1.0
    """A PPO critic's work per step (its forward and its own update, on the plan's GPUs with its SP and Env) against
    the actor's step without Offload; where its states are in host memory it adds Offload's weight of its own."""


TRINITY_RELEASE = re.compile(r"\d+\.\d+\.\d+")
"""A Trinity-RFT release as ``tables/trinity-fields.yaml`` names it (``0.6.0``)."""
FIELD_NAME = re.compile(r"[a-z_][a-z0-9_]*")
"""A field name of Trinity's config dataclasses: a Python identifier in lower case (``max_model_len``)."""
SECTION_PATH = re.compile(r"(?:[a-z_][a-z0-9_]*|\*)(?:\.(?:[a-z_][a-z0-9_]*|\*))*")
"""A section's path in Trinity's typed config: field names and ``*`` (an item of a list or mapping of sections)
joined by dots (``explorer.auxiliary_models.*``); the top is ``""``."""
ITEM = "*"
"""A section path's key for any item of a list or mapping of sections (`SECTION_PATH`)."""

FieldNames = tuple[Annotated[str, Strict()], ...]
SectionPath = Annotated[str, Strict()]


def _sorted_once(where: str, items: tuple[str, ...]) -> None:
    """Refuse `items` (of `where`) unless they are sorted, each once."""
    if (repeated := first_repeated(items)) is not None:
        raise ValueError(f"{where} lists {repeated!r} twice; list each once")
    if list(items) != sorted(items):
        raise ValueError(f"{where}: not sorted; sort them")


class TrinitySections(Frozen, defer_build=True):
    """The sections of a typed config of Trinity-RFT's, as ``benchmarks/trinity_fields.py`` reads them from a
    release's wheel (its ``Config``, or the ``veRLConfig`` of `TrinityRelease.verl_legacy`)."""

    sections: Annotated[dict[SectionPath, Annotated[FieldNames, MinLen(1)]], MinLen(1)]
    """Each dataclass section's path (`SECTION_PATH`; ``""``: the top) -> its field names."""
    open: dict[SectionPath, FieldNames]
    """Each field typed ``Any`` or ``dict`` (OmegaConf keeps what a config writes there) -> its default's keys."""
    null: tuple[SectionPath, ...]
    """The sections, open fields and lists of sections whose default is null: nothing is below them where a config
    leaves them out."""

    @model_validator(mode="after")
    def _paths_well_formed(self) -> TrinitySections:
        if "" not in self.sections:
            raise ValueError('sections: the top, "", is missing; give its field names')
        for kind, paths in (("sections", self.sections), ("open", self.open), ("null", self.null)):
            malformed = (path for path in paths if not SECTION_PATH.fullmatch(path) and (path or kind != "sections"))
            if (wrong := next(malformed, None)) is not None:
                raise ValueError(f"{kind}: {wrong!r} is no section path (field names or * joined by dots)")
        for kind, paths in (("sections", self.sections), ("open", self.open)):
            for path, names in paths.items():
                if (wrong := next((name for name in names if not FIELD_NAME.fullmatch(name)), None)) is not None:
                    raise ValueError(f'{kind}, "{path}": {wrong!r} is no field name (lower-case letters, digits and '
                                     "'_', not starting with a digit)")
                _sorted_once(f'{kind}, "{path}"', names)
        if (both := next((path for path in self.open if path in self.sections), None)) is not None:
            raise ValueError(f"{both!r} is both a section and open; it is one of them")
        _sorted_once("null", self.null)
        if (unknown := next((path for path in self.null if path not in self.sections and path not in self.open
                             and f"{path}.{ITEM}" not in self.sections), None)) is not None:
            raise ValueError(f"null: {unknown!r} is no section, open field or list of sections; name one of theirs")
        return self

    def fills(self, path: tuple[str | int, ...], lacking: int) -> bool:
        """Whether this release's merge gives the reference `path` a value where the config has its first
        ``lacking - 1`` keys and lacks the next: that key is a field of the section holding it (or its default's,
        where that is open), and so is each key below it, in sections the merge fills with their defaults (none
        below a section whose default is null)."""
        section = ""
        for key in path[:lacking - 1]:
            section = self._child(section, key)
        for depth in range(lacking - 1, len(path)):
            if depth >= lacking and section in self.null:
                return False
            if path[depth] not in self.sections.get(section, self.open.get(section, ())):
                return False
            section = self._child(section, path[depth])
        return True

    def lacked(self, config: Mapping[str, Any]) -> tuple[tuple[str | int, ...], ...]:
        """The paths of `config`'s keys that these typed sections lack, in the config's order (a release's ``Config``:
        its merge refuses them; a `TrinityRelease.verl_legacy`: its builder drops them; a `TrinityRelease.verl_merged`:
        its merge refuses them): each section's keys checked, and its sections' below the keys it has (a field typed
        ``Any`` or ``dict`` keeps any key; an item of a list or mapping of sections is checked as a section). A key
        YAML reads as no text (``1:``, ``true:``, ``null:``), which no section has, is lacked too, named as YAML writes
        it."""
        return tuple(path for path, has in self._walked(config) if not has)

    def held(self, config: Mapping[str, Any]) -> tuple[tuple[str | int, ...], ...]:
        """The paths of `config`'s keys that these typed sections have, in the config's order, each where `lacked`'s
        walk stops below it: a field that holds a value, one typed ``Any`` or ``dict`` (its keys are not walked), or
        a section the config gives no mapping."""
        return tuple(path for path, has in self._walked(config) if has)

    def _walked(self, config: Mapping[str, Any]) -> list[tuple[tuple[str | int, ...], bool]]:
        """Each path where the walk of `config` by these sections stops (`lacked`, `held`), in the config's order,
        with whether the section holding its key has it."""
        walked: list[tuple[tuple[str | int, ...], bool]] = []

        def walk(node: Any, section: str, at: tuple[str | int, ...]) -> None:
            item = f"{section}.{ITEM}".removeprefix(".")
            if item in self.sections:
                items = node.items() if isinstance(node, Mapping) else enumerate(node) if isinstance(node, list) else ()
                for key, value in items:
                    walk(value, item, (*at, key))
            elif section in self.sections and isinstance(node, Mapping):
                for key, value in node.items():
                    if not isinstance(key, str):
                        walked.append(((*at, _yaml_key_text(key)), False))
                    elif key not in self.sections[section]:
                        walked.append(((*at, key), False))
                    elif self._walks_into(f"{section}.{key}".removeprefix("."), value):
                        walk(value, f"{section}.{key}".removeprefix("."), (*at, key))
                    else:
                        walked.append(((*at, key), True))

        walk(config, "", ())
        return walked

    def _walks_into(self, section: str, node: Any) -> bool:
        """Whether the walk (`_walked`) goes below the field at `section` that holds `node`: a section given a
        mapping, or a list or mapping of sections given one."""
        if f"{section}.{ITEM}" in self.sections:
            return isinstance(node, (Mapping, list))
        return section in self.sections and isinstance(node, Mapping)

    def fields_at(self, path: tuple[str | int, ...]) -> tuple[str, ...]:
        """The field names of the section that holds the key at `path` (its last key), as `lacked` walks the
        sections; none where the keys above it lead to no section."""
        section = ""
        for key in path[:-1]:
            section = self._child(section, key)
        return self.sections.get(section, ())

    def _child(self, section: str, key: str | int) -> str:
        """The path of the section at `key` in `section` (its items', where `section` holds sections as items)."""
        item = f"{section}.{ITEM}".removeprefix(".")
        return item if item in self.sections else f"{section}.{key}".removeprefix(".")


class TrinityRelease(TrinitySections, defer_build=True):
    """The sections of one Trinity-RFT release's typed ``Config`` (``trinity/common/config.py``), as
    ``benchmarks/trinity_fields.py`` reads them from its wheel: what ``load_config``'s merge gives a key a config
    leaves out."""

    algorithms: Annotated[FieldNames, MinLen(1)]
    """The algorithm types its ``ALGORITHM_TYPE`` registry maps (``trinity/algorithm/__init__.py``): it refuses any
    other ``algorithm.algorithm_type`` without a dot (a dotted one is a class's import path, which it imports) as it
    loads the config (``Invalid module key``, ``utils/registry.py:81`` in 0.5.2)."""
    verl_legacy: TrinitySections | None = None
    """The typed ``veRLConfig`` that the release's trainer on verl before 0.8 builds ``trainer.trainer_config`` into
    (0.6.0's ``trainer/verl_legacy/verl_config.py``; paths below ``trainer.trainer_config``), with
    ``build_dataclass_from_mapping``, which drops a key a section lacks: its `lacked` keys are dropped, not refused.
    Its open fields hold those typed as verl's own dataclasses too, whose keys (the installed verl's) are not judged.
    None for a release that builds none (0.5's, which has `verl_merged`)."""
    verl_merged: TrinitySections | None = None
    """The typed ``veRLConfig`` that a release without `verl_legacy` merges ``trainer.trainer_config`` into as it
    loads the config (``OmegaConf.merge`` of ``OmegaConf.structured(veRLConfig)``: 0.5.0's and 0.5.1's
    ``common/verl_config.py``, 0.5.2's ``trainer/verl/verl_config.py``), which refuses a key a section lacks: its
    `lacked` keys are refused. Its open fields are as `verl_legacy`'s."""

    @model_validator(mode="after")
    def _algorithms_and_one_verl_config(self) -> TrinityRelease:
        if (wrong := next((name for name in self.algorithms if not FIELD_NAME.fullmatch(name)), None)) is not None:
            raise ValueError(f"algorithms: {wrong!r} is no algorithm type (lower-case letters, digits and '_')")
        _sorted_once("algorithms", self.algorithms)
        if self.verl_legacy is not None and self.verl_merged is not None:
            raise ValueError("verl_legacy and verl_merged are both given; a release builds one of them")
        return self

    def verl_config(self) -> TrinitySections | None:
        """The typed ``veRLConfig`` the release builds ``trainer.trainer_config`` into (`verl_legacy` or
        `verl_merged`), None where the table gives neither."""
        return self.verl_legacy or self.verl_merged


def _yaml_key_text(key: object) -> str:
    """A mapping key YAML read as no text, as YAML writes it (``true``, ``null``, ``1.5``)."""
    return "null" if key is None else str(key).lower() if isinstance(key, bool) else str(key)


class TrinityFields(Frozen, defer_build=True):
    """The sections of Trinity-RFT's typed ``Config``, per release (`TrinityRelease`), as read from each release's
    wheel (``tables/trinity-fields.yaml``)."""

    releases: Annotated[dict[Annotated[str, Strict()], TrinityRelease], MinLen(1)]
    """Each release (``0.6.0``) -> its sections; only releases whose rules rft-solver knows (`KNOWN_PATCH_RELEASES`:
    another is refused, so that ``--check`` uses none that ``--trinity-version`` refuses)."""

    @field_validator("releases")
    @classmethod
    def _releases_named(cls, releases: dict[str, TrinityRelease]) -> dict[str, TrinityRelease]:
        if (wrong := next((release for release in releases if not TRINITY_RELEASE.fullmatch(release)), None)):
            raise ValueError(f"{wrong!r} is no release: name one as 0.6.0 is")
        if (unknown := next((release for release in releases if release not in KNOWN_PATCH_RELEASES), None)):
            raise ValueError(f"{unknown!r} is a release whose rules rft-solver does not know (it knows "
                             f"{and_joined(KNOWN_PATCH_RELEASES)}): add it to KNOWN_TRINITY_RELEASES in "
                             "solver/tables/bounds.py with its rules first (docs/tables.md, A new Trinity release), or "
                             "remove it")
        return releases

    def fills(self, path: tuple[str | int, ...], lacking: int, minor: str | None = None) -> bool:
        """Whether some release (of the `minor` version, ``0.5``, where given) gives the reference `path` a value
        where the config lacks its key at ``lacking - 1`` (`TrinityRelease.fills`)."""
        return any(release.fills(path, lacking) for name, release in self.releases.items()
                   if minor is None or name.startswith(f"{minor}."))

    def lacking(self, config: Mapping[str, Any]) -> dict[tuple[str | int, ...], tuple[str, ...]]:
        """Each path of `config`'s keys that some release's typed sections lack (`TrinityRelease.lacked`: it refuses
        the config as it loads it), with the releases that lack it, in the table's order (one that lacks a key above
        it lacks it too); the paths in the config's order, as the first release that lacks each walks it."""
        return _lacking_by({name: release.lacked(config) for name, release in self.releases.items()})

    def verl_lacking(self, section: Mapping[str, Any]) -> dict[tuple[str | int, ...], tuple[str, ...]]:
        """As `lacking`, for ``trainer.trainer_config``'s `section` and each release's typed ``veRLConfig``
        (`TrinityRelease.verl_config`; a release without one is left out): paths below the section."""
        return _lacking_by({name: typed.lacked(section) for name, release in self.releases.items()
                            if (typed := release.verl_config()) is not None})

    def algorithm_releases(self, algorithm: str) -> tuple[str, ...]:
        """The releases whose registry has `algorithm` (`TrinityRelease.algorithms`), in the table's order."""
        return tuple(name for name, release in self.releases.items() if algorithm in release.algorithms)


def _lacking_by(lacked: dict[str, tuple[tuple[str | int, ...], ...]]) -> dict[tuple[str | int, ...], tuple[str, ...]]:
    """Each path `lacked` by some release (release -> the paths it lacks), with the releases that lack it or a key
    above it, in `lacked`'s order; the paths in the order first found."""
    held = {name: frozenset(paths) for name, paths in lacked.items()}
    return {path: tuple(name for name, theirs in held.items()
                        if any(path[:depth] in theirs for depth in range(1, len(path) + 1)))
            for path in dict.fromkeys(path for paths in lacked.values() for path in paths)}


UNION_TAGS = ("<tokens>", "<at_least>")
"""The tags of `Job.max_model_len`'s two forms, which pydantic puts in an error's location."""

POOL_GPU_SOURCE = "a cluster file's pool"
"""The source of a GPU type a pool describes by its memory (`Pool.gpu_type`), which tells it from others."""

MAX_PRIORITY = 1_000_000
"""The largest weight a job's ``priority`` may have (a whole number from 1)."""


class AtLeast(Frozen, defer_build=True):
    """A length the solver may raise: at least this many tokens, longer when a plan allows, up to `at_most` if
    given."""

    at_least: AskedTokens
    at_most: AskedTokens | None = Field(default=None, description=(
        "the longest the solver may raise it to, tokens (from at_least up); absent, what the model is known to handle "
        "(or at_least, if more)"))

    @model_validator(mode="after")
    def _cap_above_least(self) -> AtLeast:
        if self.at_most is not None and self.at_most < self.at_least:
            raise ValueError(f"at_most must be at least at_least ({self.at_least}), got {self.at_most}")
        return self


def _without_outer_spaces(name: str) -> str:
    """`name`, unless it is blank or starts or ends with a space (`ValueError`): output does not show those, and two
    names that differ only by them would read as one."""
    if not name.strip(" "):
        raise ValueError(f"must not be blank, got {name!r}")
    if name != name.strip(" "):
        raise ValueError(f"must not start or end with a space (output does not show it), got {name!r}")
    return name


def _ascending(indexes: tuple[int, ...]) -> tuple[int, ...]:
    """Node indexes in ascending order, as a pool's ``down`` is read (and so shown, and compared), whatever the order
    the file gives."""
    return tuple(sorted(indexes))


class Pool(PlainWorded, defer_build=True):
    """A pool of identical nodes in the fleet."""

    not_asked_here: ClassVar[dict[str, str]] = {
        **dict.fromkeys(("priority", "model", "modelconfig", "maxmodellen", "rolloutgpus", "required", "pool"),
                        "a job's field, not a pool's: give it to the job, under jobs"),
        **dict.fromkeys(("price", "cost", "costperhour", "pricepernode", "costpernode", "pricepergpu", "costpergpu"),
                        "a pool has no price: --buy adds the fewest GPUs, then nodes"),
    }
    """Fields a pool may be given by mistake (without case or separators), a job's or a price, and why it takes
    none."""

    name: Annotated[PrintableText, AfterValidator(_without_outer_spaces)]
    gpu: Text
    nodes: Annotated[int, Strict(), Ge(0), Le(MAX_GPUS)] = Field(description=(
        "the pool's nodes; 0 for a pool out of service, or of a GPU type you have none of yet (nothing runs there, "
        "and --buy weighs buying its nodes)"))
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
    gpu_interconnect: Interconnect | None = Field(default=None, description=(
        "for a GPU type the catalogue lacks, with its memory: how its GPUs in a node reach one another, nvlink, "
        "infinity-fabric or pcie, as --gpu-interconnect; absent, not stated: its SP is weighed as on NVLink, and an SP "
        "plan is cautioned to state it"))
    node_interconnect: NodeInterconnectField | None = Field(default=None, description=(
        "how the pool's nodes reach one another: infiniband or roce (a fast fabric), or ethernet; absent, not "
        "stated: a job whose trainer spans nodes there is cautioned (trainer-spans-nodes), as on ethernet"))
    down: Annotated[tuple[Annotated[int, Strict(), Ge(0), Le(MAX_GPUS)], ...], AfterValidator(_ascending)] = Field(
        default=(), description=(
            "the pool's nodes that are down, by index (0 to nodes - 1, as --current's placement numbers them), in any "
            "order (read in ascending order): they take no job, a job running there moves (node-down) or stops, and "
            "the others keep their numbers; absent, none"))

    @model_validator(mode="before")
    @classmethod
    def _count_in_gpu_name(cls, value: Any, info: ValidationInfo) -> Any:
        """In a cluster file, a pool without ``gpus_per_node`` whose ``gpu`` gives a catalogue GPU type with a count
        (``a100x8``, ``8x a100``) is told where the count goes, not only that ``gpus_per_node`` is missing."""
        named = (info.context or {}).get(GPU_NAMED)
        if named is None or not isinstance(value, dict) or "gpus_per_node" in value:  # a pool of 5: its type's words
            return value
        gpu = value.get("gpu")
        if not isinstance(gpu, str) or named(gpu):
            return value
        for part, count in gpu_with_count(gpu):
            if named(part):
                raise ValueError("missing field 'gpus_per_node': gpu " + count_in_name(
                    gpu, str(named(part)), count, f"gpu: {part}, gpus_per_node: {count}", "the count per node"))
        return value

    @field_validator("gpu", mode="before")
    @classmethod
    def _gpu_number_as_name(cls, value: Any, info: ValidationInfo) -> Any:
        """In a cluster file, a whole number YAML read unquoted (``gpu: 4090``) as the name it is written as, where
        that names a GPU type of the catalogue (`GPU_NAMED` in the context); else as it is, which ``gpu`` refuses
        with the hint to quote it."""
        named = (info.context or {}).get(GPU_NAMED)
        if named is None or not isinstance(value, int) or isinstance(value, bool):
            return value
        return str(value) if named(str(value)) else value

    @field_validator("host_ram_gb", mode="before")
    @classmethod
    def _host_ram_as_typed(cls, value: Any, info: ValidationInfo) -> Any:
        """In a file (`TYPED` in the context), a node's host memory as ``--host-ram`` takes it (`read_host_ram`): text
        with its unit (``6TB``, ``64214MiB``), or a number, GB up to `BARE_HOST_RAM_GB`; a number past it is refused
        naming the unit each reading needs. Built in Python, a number of GiB up to `MAX_HOST_RAM_GB`. A text that
        tells more than its GiB (`host_ram_text_told`: ``256MB``) goes by the pool's name into the context's
        `HOST_RAM_WRITTEN`, where it has one (`Fleet.host_ram_written`)."""
        context = info.context or {}
        if not context.get(TYPED):
            return value
        if isinstance(value, str):
            gib = read_host_ram(value)
            written = context.get(HOST_RAM_WRITTEN)
            if written is not None and "name" in info.data and host_ram_text_told(gib, value):
                written[info.data["name"]] = value
            return gib
        if isinstance(value, int | float) and isfinite(value) and value > BARE_HOST_RAM_GB:  # True is 1: not past it
            checked_host_ram(value, shown_number(value), bare=True)
        return value

    @field_validator("gpu_interconnect", "node_interconnect", mode="before")
    @classmethod
    def _link_as_typed(cls, value: Any, info: ValidationInfo) -> Any:
        """In a file, an interconnect in any case, as ``--gpu-interconnect`` takes it (`choice_as_typed`)."""
        return choice_as_typed(value, info, (*INTERCONNECTS, *get_args(NodeInterconnect)))

    @model_validator(mode="after")
    def _check_gpu_memory(self) -> Pool:
        if self.gpu_interconnect is not None and self.gpu_memory_gb is None and self.gpu_memory_mib is None:
            raise ValueError("gpu_interconnect states the interconnect of a GPU type of your own: give its memory too "
                             "(gpu_memory_gb or gpu_memory_mib), or drop it (the catalogue's GPU types state theirs)")
        self.gpu_type  # noqa: B018 - a name and memory that cannot describe a GPU type are refused here
        self._check_down()
        return self

    def _check_down(self) -> None:
        """`ValueError` where `down` names a node the pool lacks, one twice, or every node."""
        for node in self.down:
            if node >= self.nodes:
                lacked = (f"node {node}, which the pool lacks: its nodes are numbered 0 to {self.nodes - 1}"
                          if self.nodes else
                          "nodes of a pool of none (nodes: 0): drop down, or give the pool its nodes")
                raise ValueError(f"down names {lacked}")
        repeated = sorted({node for node in self.down if self.down.count(node) > 1})
        if repeated:
            raise ValueError(f"down names node {repeated[0]} twice: name each node that is down once")
        if self.nodes and len(self.down) == self.nodes:
            raise ValueError("down names every node of the pool: give it nodes: 0 for a pool out of service")

    @property
    def up_nodes(self) -> int:
        """The nodes that take jobs: the pool's less those `down`."""
        return self.nodes - len(self.down)

    @property
    def up_node_indexes(self) -> tuple[int, ...]:
        """The indexes of the nodes that take jobs (not `down`), in order."""
        return tuple(node for node in range(self.nodes) if node not in self.down)

    @property
    def gpu_type(self) -> GpuType | None:
        """The GPU type this pool describes by its memory (None when it gives none)."""
        if self.gpu_memory_gb is None and self.gpu_memory_mib is None:
            return None
        return described_gpu_type(self.gpu, self.gpu_memory_gb, self.gpu_memory_mib, source=POOL_GPU_SOURCE,
                                  interconnect=self.gpu_interconnect)


WINDOWS_DEVICE_NAMES = frozenset({"CON", "PRN", "AUX", "NUL",
                                  *(f"{port}{digit}" for port in ("COM", "LPT") for digit in range(10))})
"""Names Windows keeps for devices, with any extension: a file ``CON.yaml`` cannot be made there."""


def _known_release(value: str) -> str | None:
    """A job's ``trinity_version`` as rft-solver names the release back (`release_name`: ``v0.5.2`` is ``0.5.2``);
    `trinity_release`'s refusal, naming the releases taken, for one it does not know (the key named before it)."""
    try:
        trinity_release("trinity_version", value)
    except QueryError as error:
        raise ValueError(str(error).removeprefix("trinity_version ")) from None
    return release_name(value)


def _no_device_name(name: str) -> str:
    """`name`, unless Windows keeps it for a device (`WINDOWS_DEVICE_NAMES`; `ValueError`): the job's --emit-dir
    file, ``NAME.yaml``, could not be written there."""
    if name.split(".", 1)[0].upper() in WINDOWS_DEVICE_NAMES:
        raise ValueError(f"{name!r} names a device on Windows (CON, PRN, AUX, NUL, COM0-9, LPT0-9, with any "
                         "extension), where its --emit-dir file could not be written: rename it")
    return name


RunningTraining = tuple[int, CriticStates | None, bool, str | None, str | None]
"""What a job trains, as a running job's plan gives it and `JobTraining.as_running` compares it: its LoRA rank (0:
full fine-tuning), PPO critic (None: none), whether it trains DPO, and its LoRA ``target_modules`` regex (None:
all-linear) and ``exclude_modules`` regex (None: none)."""


class JobTraining(NamedTuple):
    """What a cluster job's plans count besides its model and length (`_JobFields.training`), as the planner's
    questions take it: the train batch its data-parallel ranks divide (None: not checked), its LoRA rank (0: full
    fine-tuning), whether its run builds a reference model (None: unless LoRA), where the PPO critic it trains
    beside the actor keeps its states (None: it trains none), whether it trains DPO, its LoRA targets and the Trinity
    release its plans are counted for."""

    train_batch_size: int | None = None
    lora_rank: int = 0
    reference_model: bool | None = None
    critic: CriticStates | None = None
    dpo: bool = False
    lora_targets: str | None = None
    """The modules its LoRA adapter adapts, as the job gives them (`LORA_TARGETS_FORMS`; None: ``all-linear``)."""
    lora_exclude_modules: str | None = None
    """The ``exclude_modules`` regex of the modules its LoRA adapter leaves out of those (None: none)."""
    trinity_version: str | None = None
    """The Trinity release its plans are counted for, as `solver.tables.release_name` names it (None: the run's)."""

    @property
    def counted_targets(self) -> LoraTargets | None:
        """The ``target_modules`` regex its LoRA adapter is counted on (`lora_targets_pattern`; ``all-linear`` where
        only exclusions are given) and its ``exclude_modules``, as `Catalog.with_lora_targets` takes them (checked on
        the job's model by ``solver.query.given_lora_targets`` before it is planned); None for ``all-linear`` without
        exclusions."""
        pattern = None if self.lora_targets is None else lora_targets_pattern(self.lora_targets)
        if pattern is None and self.lora_exclude_modules is None:
            return None
        return LoraTargets(ALL_LINEAR if pattern is None else pattern, self.lora_exclude_modules)

    @property
    def as_running(self) -> RunningTraining:
        """Its LoRA rank, critic, DPO, LoRA ``target_modules`` regex and ``exclude_modules`` (`counted_targets`; None:
        ``all-linear``, none), as a running job's (`solver.tables.fleets.RunningJob.training`) are compared with
        them."""
        targets = self.counted_targets
        return (self.lora_rank, self.critic, self.dpo, None if targets is None else targets.pattern,
                None if targets is None else targets.excluded)


NO_LORA_REFERENCE = ("no Trinity release builds a reference model for a LoRA run (the actor with its adapter "
                     "disabled gives the ref's log-probs)")
"""Why a LoRA run is not said to build a reference model: Trinity 0.6 on verl 0.8 or later sets ``ref_in_actor`` for
a LoRA rank above 0 (``trainer/verl/trainer.py:250`` to ``:258`` in 0.6.0, so no ``ActorRolloutRef`` role), and verl
before 0.8 (Trinity 0.5, and 0.6's legacy trainer, ``verl_legacy/verl_trainer.py:412``) initialises no reference
worker where ``ref_in_actor`` (``ray_trainer.py:360`` in verl 0.9.1 sets it the same way)."""


ONE_POOL = "a job names one pool, or none to be placed in any"
"""What a job's ``pool`` takes, where it names several (a list, or names joined by commas)."""


class _JobFields(PlainWorded, defer_build=True):
    """What a job gives besides its model: its name, length, rollout GPUs, weight and pool."""

    name: Annotated[str, Strict(), StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", max_length=100),
                    AfterValidator(_no_device_name)] = Field(description=(
        "ASCII letters and digits (A-Z, a-z, 0-9), '.', '_' and '-', starting with a letter or digit, at most 100 (it "
        "names the job's config file), not a Windows device name"))
    max_model_len: Annotated[
        Annotated[AskedTokens, Tag(UNION_TAGS[0])] | Annotated[AtLeast, Tag(UNION_TAGS[1])],
        Discriminator(lambda value: UNION_TAGS[1] if isinstance(value, dict | AtLeast) else UNION_TAGS[0]),
    ]
    rollout_gpus: Annotated[int, Strict(), Ge(0), Le(MAX_GPUS)] = 0
    priority: Annotated[int, Strict(), Gt(0), Le(MAX_PRIORITY)] = 1
    pool: Text | None = None
    required: Flag = Field(default=False, description=(
        "true: the job must be placed (a placement that cannot is infeasible, naming it; --buy buys for it); "
        "false (the default): placed where room is left, by priority"))
    train_batch_size: Annotated[int, Strict(), Gt(0), Le(MAX_TRAIN_BATCH)] | None = Field(default=None, description=(
        "experiences per training step (Trinity's buffer.train_batch_size): only trainers whose data-parallel ranks "
        "(GPUs / SP) divide it, as --train-batch-size; absent, it is not checked"))
    lora_rank: Annotated[int, Strict(), Ge(0), Le(MAX_LORA_RANK)] = Field(default=0, description=(
        "the rank of the LoRA adapter the job trains (Trinity's model.lora_configs), as --lora-rank: its plans count "
        "the frozen base's fp32 weights and the adapter's states; 0 (the default): full fine-tuning; with "
        "rollout_gpus, one vLLM takes as its max_lora_rank (1, 8, 16, 32, 64, 128, 256, 320 or 512)"))
    lora_targets: Text | None = Field(default=None, description=(
        "with a lora_rank: the modules the job's LoRA adapter adapts (Trinity's model.lora_configs' target_modules), "
        f"as --lora-targets: {LORA_TARGETS_FORMS}; its plans count the adapter on those modules; absent: all-linear"))
    lora_exclude_modules: Text | None = Field(default=None, description=(
        "with a lora_rank: a regular expression of the modules the job's LoRA adapter leaves out of its lora_targets "
        "(Trinity's model.lora_configs' exclude_modules), which PEFT matches whole module names with "
        "(.*\\.layers\\.0\\..*), as a --from-config config's: its plans count the adapter on the modules left; "
        "absent: none"))
    reference_model: Flag | None = Field(default=None, description=(
        "whether the job's run builds a reference model, whose pinned shards its host memory need counts, as "
        "--reference/--no-reference; absent, counted but with a lora_rank"))
    critic: CriticChoice = Field(default=NO_CRITIC, description=(
        "the PPO critic the job's run trains beside the actor, as --critic: resident, its states on the trainer GPUs; "
        "offloaded, in host memory; reloaded, in host memory but back on the GPUs for its own update; none (the "
        "default): no critic"))
    dpo: Flag = Field(default=False, description=(
        "true: the job's run trains DPO (Trinity's algorithm_type dpo), as --dpo: for a model trained one padded "
        "sequence per micro-batch, its plans count a pair per micro-batch, a chosen and a rejected sequence, and its "
        "--emit-dir config writes the actor's micro-batch size for it; refused beside a critic, beside rollout_gpus "
        "above 0 (Trinity trains DPO on a dataset in mode train alone), and without a lora_rank beside "
        "reference_model false; false (the default): not DPO"))
    trinity_version: Annotated[str, Strict(), AfterValidator(_known_release)] | None = Field(
        default=None, description=(
            f"the Trinity-RFT release the job runs on, as --trinity-version: {TRINITY_RELEASE_FORMS}; its plans are "
            "counted for it (host memory, routed experts, train batch rule, cautions); absent: the one its plan names "
            "where --current runs it, else the run's --trinity-version"))

    @field_validator("pool", mode="before")
    @classmethod
    def _one_pool(cls, value: Any) -> Any:
        """A list of pools refused in words that say a job names one pool or none (pydantic's said only "must be
        text")."""
        if not isinstance(value, list | tuple):
            return value
        raise ValueError(f"{ONE_POOL}, got {yaml_brief(list(value))}")  # pydantic's words for a file: no TypeError

    @field_validator("critic", mode="before")
    @classmethod
    def _critic_as_typed(cls, value: Any, info: ValidationInfo) -> Any:
        """In a file, the critic in any case, as ``--critic`` takes it (`choice_as_typed`)."""
        return choice_as_typed(value, info, CRITIC_CHOICES)

    @model_validator(mode="after")
    def _dpo_as_trinity_trains_it(self) -> _JobFields:
        """A DPO job said to train a PPO critic, or without LoRA to build no reference model (`dpo_conflict`), as
        ``solve --dpo`` refuses it."""
        conflict = dpo_conflict(self.dpo, self.critic, self.reference_model, self.lora_rank)
        if conflict is not None:
            drop = f"critic {self.critic}" if conflict == "critic" else "reference_model false, or give a lora_rank"
            raise ValueError(f"dpo true {DPO_CONFLICTS[conflict]}: drop {drop}")
        return self

    @model_validator(mode="after")
    def _dpo_without_rollout(self) -> _JobFields:
        """A DPO job that keeps rollout GPUs: Trinity trains DPO on a dataset in mode ``train`` alone, with no explorer,
        and refuses mode ``both`` (``algorithm/algorithm.py:291`` in 0.6.0, ``:248`` in 0.5.2), so they would be GPUs
        held for nothing. Refused rather than dropped: a file that asks for them asks for something its run never
        uses."""
        if self.dpo and self.rollout_gpus:
            raise ValueError(f"dpo true with rollout_gpus {self.rollout_gpus}: {DPO_NO_EXPLORER}: drop rollout_gpus, "
                             "or give 0")
        return self

    @model_validator(mode="after")
    def _no_reference_with_lora(self) -> _JobFields:
        if self.lora_rank and self.reference_model:
            raise ValueError(f"reference_model true with lora_rank {self.lora_rank}: {NO_LORA_REFERENCE}; give "
                             "reference_model false, or leave it out")
        return self

    @model_validator(mode="after")
    def _vllm_lora_rank(self) -> _JobFields:
        """A LoRA rank the job's vLLM rollout refuses as its ``max_lora_rank`` (`vllm_lora_rank_refusal`), where the
        job has one (rollout_gpus above 0; its placement counts the engine's LoRA slots), as ``solve --lora-rank``'s
        check."""
        refusal = vllm_lora_rank_refusal(self.lora_rank) if self.rollout_gpus else None
        if refusal is not None:
            raise ValueError(f"lora_rank {refusal}: give one of those, or rollout_gpus 0 for a trainer alone")
        return self

    @property
    def training(self) -> JobTraining:
        """What the job's plans count besides its model and length: its train batch, LoRA rank, reference model,
        critic, DPO, LoRA targets and exclusions, and Trinity release."""
        return JobTraining(self.train_batch_size, self.lora_rank, self.reference_model, counted_critic(self.critic),
                           self.dpo, self.lora_targets, self.lora_exclude_modules, self.trinity_version)

    @property
    def rollout_gpus_given(self) -> bool:
        """Whether the job gives its rollout_gpus (without, it gets 0: no explorer beside its trainer)."""
        return "rollout_gpus" in self.model_fields_set

    def may_use(self, pool: Pool) -> bool:
        """Whether the job may run in `pool`: the pool it names, or any where it names none."""
        return self.pool in (None, pool.name)

    def may_run_in(self, pool: Pool) -> bool:
        """Whether the job may run in `pool` now (`may_use`) and the pool has nodes (``nodes: 0``: out of service)."""
        return self.may_use(pool) and pool.nodes > 0

    @property
    def asked_max_model_len(self) -> int:
        """The length the job asks for: its `max_model_len` exactly, or its ``at_least``."""
        return self.max_model_len.at_least if isinstance(self.max_model_len, AtLeast) else self.max_model_len

    @property
    def at_most(self) -> int | None:
        """The longest the job may be stretched to: its ``at_most``, where it gives one (else None)."""
        return self.max_model_len.at_most if isinstance(self.max_model_len, AtLeast) else None


class Job(_JobFields):
    """One Trinity training job to place: its model, length, rollout GPUs and weight."""

    model: Text


class JobEntry(_JobFields):
    """A job as a cluster file gives it: its model by name, or by a config.json."""

    not_asked_here: ClassVar[dict[str, str]] = {
        **dict.fromkeys(
            ("trainergpus", "gpus", "numgpus", "nodes", "numnodes", "sp", "ulysses", "offload", "env"),
            "the placement chooses a job's trainer GPUs, nodes and settings; rollout_gpus keeps GPUs for its explorer"),
        **dict.fromkeys(
            ("node", "nodeindex", "nodeindexes", "gpuindexes", "cudavisibledevices"),
            "the placement chooses a job's nodes and GPUs: to keep a running job where it runs, give solve cluster "
            "--current PLACEMENT.json (an earlier solve cluster --json); to keep it to a pool, pool: NAME"),
        **dict.fromkeys(
            ("gpu", "gputype", "gpuspernode", "hostramgb", "gpumemorygb", "gpumemorymib", "gpuinterconnect",
             "nodeinterconnect", "down"),
            "a pool's field, not a job's: to keep a job to a pool, give it pool: NAME"),
        "nodegpus": ("a node's GPUs are its pool's gpus_per_node (solve's --node-gpus), not a job's: to keep a job to "
                     "a pool, give it pool: NAME"),
        **{field: f"solve cluster's {option} gives it, for every job of the file" for field, option in (
            ("margin", "--margin F"), ("safetymargin", "--margin F"), ("memorymodel", "--memory-model FILE"),
            ("tokenbudget", "--token-budget MODE|N"), ("estimate", "--estimate or --no-estimate"),
            ("cells", "--cells FILE"))},
        **dict.fromkeys(
            ("ep", "epsize", "expertparallel", "expertparallelsize", "expertmodelparallelsize"),
            "verl's FSDP trainer has no expert parallelism: FSDP shards the experts over the trainer GPUs the "
            "placement chooses, like every other weight"),
        **dict.fromkeys(("lora", "uselora", "enablelora"),
                        "a LoRA job gives its adapter's rank: lora_rank: RANK (absent or 0: full fine-tuning)"),
        **dict.fromkeys(
            ("algorithm", "algorithmtype"),
            "a job is counted as GRPO trains it: the actor and a reference model (none with lora_rank), no critic; "
            "critic: WHERE adds PPO's critic, dpo: true plans DPO and reference_model: false a run without one"),
    }
    """Fields a job may be given by mistake (without case or separators): for what the placement chooses, a pool's,
    solve cluster's options, or what other fields give (LoRA, the algorithm); and why it takes none."""

    model: Text | None = Field(default=None, description="a catalogue model (4B, Qwen3-8B, ...), or model_config")
    config_path: Text | None = Field(default=None, alias="model_config", description=(
        "instead of model: a dense model's or a mixture of experts' local Hugging Face config.json (or its folder), "
        "relative to the cluster file (as --model-config)"))

    @model_validator(mode="after")
    def _one_model(self) -> JobEntry:
        if self.model is None and self.config_path is None:
            raise ValueError("missing field 'model' (a catalogue model, e.g. 4B) or 'model_config' (a config.json)")
        if self.model is not None and self.config_path is not None:
            raise ValueError("model and model_config both name the model: give one")
        return self


def _told_apart(name: str) -> str:
    """`name` quoted, with its `ascii` form beside it where it is not ASCII: case twins can print alike (``K`` and
    the Kelvin sign, U+212A)."""
    return repr(name) if name.isascii() else f"{name!r} ({name!a})"


def _check_fleet_names(pools: tuple[Pool, ...], jobs: tuple[_JobFields, ...]) -> None:
    """`ValueError` for two pools or two jobs of one name, or of names that differ only in case, or a job's pool
    that does not exist."""
    for kind, names, why in (
            ("pool", [p.name for p in pools], "output tells them apart by case alone"),
            ("job", [j.name for j in jobs], "their --emit-dir files would be one on macOS and Windows")):
        repeated = first_repeated(names)
        if repeated is not None:
            first, second = [item for item, name in enumerate(names, 1) if name == repeated][:2]
            raise ValueError(f"two {kind}s are named {repeated!r}, {kind}s items {first} and {second}: rename one")
        folded = first_repeated(name.casefold() for name in names)
        if folded is not None:
            same = [name for name in names if name.casefold() == folded]
            raise ValueError(f"{kind}s {_told_apart(same[0])} and {_told_apart(same[1])} differ only in case: {why}; "
                             "rename one")
    pool_names = [pool.name for pool in pools]
    for job in jobs:
        if job.pool is not None and job.pool not in pool_names:
            several = [name.strip() for name in job.pool.split(",") if name.strip()]
            if len(several) > 1 and set(several) <= set(pool_names):
                raise ValueError(f"job {job.name}, pool: {job.pool!r} names {len(several)} pools: {ONE_POOL} "
                                 f"(pools: {', '.join(pool_names)})")
            meant = meant_fleet_name(job.pool, pool_names)
            raise ValueError(f"job {job.name}, pool: no pool named {job.pool!r} "
                             f"({f'did you mean {meant}? ' if meant else ''}pools: {', '.join(pool_names)})")


class FleetFile(Frozen, defer_build=True):
    """What a cluster file holds: the pools of nodes and the jobs to place on them."""

    not_asked_here: ClassVar[dict[str, str]] = {
        **dict.fromkeys(("weights", "costs", "costweights"), "solve cluster's --weights FILE gives the cost weights"),
        **dict.fromkeys(("price", "prices", "gpuprice", "gpuprices"),
                        "a pool has no price: --buy adds the fewest GPUs, then nodes"),
        **dict.fromkeys(("defaults", "xdefaults", "jobdefaults", "common", "xcommon", "template", "templates"),
                        "a cluster file has no block of defaults: anchor the first job's fields, - &defaults {name: a, "
                        "...}, and merge them into the others, - {<<: *defaults, name: b}"),
    }
    """Fields a cluster file may be given by mistake at its top (without case or separators), and why it takes none: a
    block of defaults, as docker-compose files keep one (``x-defaults: &d``) for YAML anchors, is said the way to share
    fields that the file takes (the merge key, which the loader reads)."""

    pools: TupleOf[Pool] = Field(min_length=1, max_length=256)
    jobs: TupleOf[JobEntry] = Field(min_length=1, max_length=MAX_JOBS)

    @model_validator(mode="after")
    def _check_names(self) -> FleetFile:
        _check_fleet_names(self.pools, self.jobs)
        return self


class Fleet(Frozen, defer_build=True):
    """A cluster file with its names resolved (`load_fleet`): each job names its model, and the models
    that jobs gave by ``model_config`` come with it (a catalogue gains them with `Catalog.with_models`)."""

    pools: TupleOf[Pool] = Field(min_length=1, max_length=256)
    jobs: TupleOf[Job] = Field(min_length=1, max_length=MAX_JOBS)
    models: TupleOf[Model] = Field(default=(), validate_default=True, description=(
        "the models of the jobs' model_config files"))
    gpu_types: TupleOf[GpuType] = Field(default=(), validate_default=True, description=(
        "the GPU types that pools describe by their memory (gpu_memory_gb or gpu_memory_mib)"))
    model_config_files: TupleOf[Path] = Field(default=(), validate_default=True, description=(
        "the config.json files those models were read from (inputs, which no output may overwrite)"))
    model_config_of: TupleOf[tuple[str, Path]] = Field(default=(), validate_default=True, description=(
        "each job that gives its model by model_config: the job's name and the config.json file it names, which the "
        "check command in the job's config gives as --model-config (two jobs may name two files of one model)"))
    host_ram_written: TupleOf[tuple[str, str]] = Field(default=(), validate_default=True, description=(
        "each pool whose host_ram_gb the cluster file wrote as text that tells more than its GiB (256MB, too small: "
        "host_ram_text_told): its name and that text, which the note on one too small reads (small_host_ram_notes); "
        "none for a fleet built in Python, nor for a text its GiB tells (2TB, 256GB), so a fleet read with those "
        "equals one built with host_ram_gb=2048, 256"))

    @model_validator(mode="after")
    def _check_names(self) -> Fleet:
        _check_fleet_names(self.pools, self.jobs)
        return self

    def node_gpus(self, pool: str) -> int | None:
        """The GPUs per node of the fleet's pool named `pool`; None where it has none of that name."""
        return next((each.gpus_per_node for each in self.pools if each.name == pool), None)

    @property
    def small_host_ram_notes(self) -> tuple[str, ...]:
        """A note for each pool whose host_ram_gb is below what any GPU node has (`small_host_ram_note`: likely
        meant a unit up, from the figure as written), in the words of the cluster file's key: what ``solve cluster``
        prints on stderr and ``solver.place`` gives as its answer's notes."""
        written = dict(self.host_ram_written)
        notes = (small_host_ram_note(f"pool {pool.name}: host_ram_gb", pool.host_ram_gb,
                                     lambda amount, unit: f"host_ram_gb: {shown_number(amount)}{unit}", HOST_RAM_UNITS,
                                     written.get(pool.name, ""))
                 for pool in self.pools if pool.host_ram_gb is not None)
        return tuple(note for note in notes if note is not None)

    @property
    def all_names_every_job(self) -> bool:
        """Whether `EVERY_JOB` (``--required all``, the API's ``required=["all"]``) names every job of the fleet:
        unless one of its jobs is named so."""
        return all(job.name != EVERY_JOB for job in self.jobs)


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
    usable: Annotated[float, Strict()] = Field(gt=0, le=1, description="fraction of GPU memory usable without Env")
    usable_env: Annotated[float, Strict()] = Field(gt=0, le=1, description="fraction of GPU memory usable with Env")

    @model_validator(mode="after")
    def _env_never_hurts(self) -> Coefficients:
        if self.usable_env < self.usable:
            raise ValueError(f"usable_env ({self.usable_env}) is below usable ({self.usable}): Env would make plans "
                             "stop fitting")
        return self

    def multiplier(self, term: str) -> float:
        """The value of one coefficient, by its name: a term's multiplier (of `TERMS`), or ``usable`` or
        ``usable_env``."""
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
    mixture_of_experts: Flag | None = Field(default=None, description=(
        "whether a mixture-of-experts model was observed (None: not checked)"))
    fewest_gpus: Annotated[int, Strict(), Ge(0)] | None = Field(default=None, description=(
        "the fewest trainer GPUs observed (the states per GPU grow as they fall; None in a file from before it was "
        "recorded: not checked)"))
    fit_without_sp: Flag | None = Field(default=None, description=(
        "whether a setting without SP (SP=1, which has no SP buffers term) was observed to fit (None: not checked)"))

    @model_validator(mode="after")
    def _ordered(self) -> CalibrationRange:
        pairs = (("least_memory_gib", "most_memory_gib"), ("smallest_model_b", "largest_model_b"),
                 ("least_vocab_size", "most_vocab_size"), ("fewest_gpus", "most_gpus"))
        for least, most in pairs:
            low, high = getattr(self, least), getattr(self, most)
            if low is not None and high is not None and low > high:
                raise ValueError(f"{least} ({low:g}) is above {most} ({high:g})")
        return self


DOCUMENTED_CALIBRATION = "calibrated on the documented tables"
"""The source of the shipped memory model, and of any fitted on the documented tables alone."""


class MemoryModel(Frozen):
    """A calibrated memory model: its coefficients, the default safety margin, and how the fit went."""

    source: Text
    coefficients: Coefficients
    margin: Annotated[float, Strict(), Ge(0), Lt(1)]
    fit: FitSummary

    @property
    def own_source(self) -> str | None:
        """Where a memory model of your own comes from (``calibrated on my-cells.yaml``); None for the one fitted on
        the documented tables, which answers need not name."""
        return None if self.source == DOCUMENTED_CALIBRATION else self.source


class _Read(BaseModel):
    """Part of a JSON file that another command printed: the fields read, the others ignored."""

    model_config = ConfigDict(extra="ignore", frozen=True, defer_build=True)


Index = Annotated[int, Strict(), Ge(0)]
"""A node's or a GPU's index, from 0 (an integer in the JSON, not a string or true)."""


class _CurrentPlan(_Read):
    """The settings of a running job's plan that a move would change."""

    max_model_len: Annotated[int, Strict(), Gt(0)]
    sp: Annotated[int, Strict(), Gt(0)]
    offload: Annotated[bool, Strict()]
    lora_rank: Annotated[int, Strict(), Ge(0)] | None = None
    """The LoRA rank it trains at (0: full fine-tuning); None where the placement gives none (not compared)."""
    critic: CriticStates | None = None
    """Where the PPO critic it trains keeps its states (None: it trains none, or the placement does not say)."""
    dpo: Annotated[bool, Strict()] = False
    """Whether it trains DPO (False: it does not, or the placement, made before plans said so, does not say)."""
    lora_target_modules: Annotated[str, Strict()] | None = None
    """Its LoRA adapter's target_modules regex (None: all-linear, or the placement, made before plans said so, does
    not say)."""
    lora_exclude_modules: Annotated[str, Strict()] | None = None
    """Its LoRA adapter's exclude_modules regex (None: none, or the placement, made before plans said so, does not
    say)."""
    trinity_version: Annotated[str, Strict()] | None = None
    """The Trinity release its figures were counted for, as `solver.tables.release_name` names it (None: none was
    named, 0.6's counts, or the placement, made before plans said so, does not say)."""


class CurrentPlacement(_Read):
    """One job of an earlier placement (an entry of ``solve cluster --json``'s ``placements``), as it runs."""

    job: Annotated[str, Strict()]
    pool: Annotated[str, Strict()]
    model: Annotated[str, Strict()] | None = None
    nodes: tuple[Index, ...] = Field(min_length=1)
    gpu_indexes: tuple[Index, ...] = Field(min_length=1)
    trainer_gpus: Annotated[int, Strict(), Gt(0)]
    rollout_gpus: Index
    plan: _CurrentPlan


class CurrentFile(_Read):
    """An earlier ``solve cluster --json`` (``--current``): its placements, each job once, each naming a node or GPU
    index once, no GPU taken twice, none using more GPUs (trainer and rollout) than its nodes and GPU indexes name."""

    schema_version: Annotated[int, Strict()] = 1
    """Its JSON's format (1: JSON made before it had the key, as docs/json.md reads it)."""
    placements: tuple[CurrentPlacement, ...]

    @model_validator(mode="after")
    def _each_gpu_once(self) -> CurrentFile:
        repeated = first_repeated([placed.job for placed in self.placements])
        if repeated is not None:
            raise ValueError(f"job {repeated} is placed twice")
        for placed in self.placements:  # counted, a node or GPU named twice would be two of them
            for key, what, indexes in (("nodes", "node", placed.nodes), ("gpu_indexes", "GPU", placed.gpu_indexes)):
                if (twice := first_repeated(indexes)) is not None:
                    raise ValueError(f"job {placed.job}, {key}: names {what} {twice} twice: a placement names each "
                                     "once")
            named, used = len(placed.nodes) * len(placed.gpu_indexes), placed.trainer_gpus + placed.rollout_gpus
            if used > named:  # fewer is a job holding more than it uses (a rollout given as asked): it moves
                raise ValueError(
                    f"job {placed.job}: trainer_gpus {placed.trainer_gpus} and rollout_gpus {placed.rollout_gpus} make "
                    f"{used} GPUs, more than the {named} its nodes and gpu_indexes name "
                    f"({counted(len(placed.gpu_indexes), 'GPU')} on {counted(len(placed.nodes), 'node')}): a job runs "
                    "on the GPUs its placement names")
        taken: dict[tuple[str, int, int], str] = {}
        for placed in self.placements:
            for spot in ((placed.pool, node, gpu) for node in placed.nodes for gpu in placed.gpu_indexes):
                other = taken.setdefault(spot, placed.job)
                if other != placed.job:
                    raise ValueError(f"jobs {other} and {placed.job} both take GPU {spot[2]} of node {spot[1]} in "
                                     f"pool {spot[0]}")
        return self
