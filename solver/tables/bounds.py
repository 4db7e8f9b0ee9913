"""The bounds and defaults of what a person gives, and the words that read them, without pydantic: the limits of
counts, lengths and memory, host memory and interconnects as written (and what a node's host memory need holds), the
Trinity releases known, the planner's and the cluster search's limits. The argument types and the help of the
``solve`` commands need these alone, so that ``solve --help`` and a usage error build no models; the modules that
check inputs take them from here."""

from __future__ import annotations

import difflib
import numbers
import re
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from math import floor, isfinite
from typing import Any, Final, Literal, NamedTuple, get_args

from solver.tables.text import QueryError, and_joined, ascii_number, asked_tokens, brief, counted, cut, shown_number

MAX_FILE_BYTES = 16 * 1024 * 1024
"""The largest file rft-solver reads (tables, cluster files, Trinity configs, config.json)."""
MAX_CONFIG_BYTES = 256 * 1024
"""The largest Trinity config read (``solve --from-config``, `solver.api.check_config`): they run to a few KB, and the
YAML parsers written in Python take seconds per 100 KB: --write reads a config once as Trinity does (PyYAML) and once
with ruamel's round trip, which keeps the comments (twice for a config whose aliases repeat an anchor), and writes that
round trip twice (`patched_trinity_config`)."""
MAX_NAME_CHARACTERS = 4096
"""The longest name of a model or GPU type looked up (Linux's longest path, as a model may be named by its folder's):
a longer one is refused before the work of guessing what it meant, which grows with its length."""
MAX_TOKENS = 1 << 24
"""The longest ``max_model_len`` anything may ask for (16M tokens)."""
MAX_GPUS = 1 << 16
"""The most GPUs a count, a budget or a pool may have."""
MAX_LORA_RANK = 1 << 16
"""The largest LoRA rank taken: past every catalogued model's widths (PEFT takes any rank)."""
VLLM_LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)
"""The ``max_lora_rank`` values vLLM 0.19.1 takes (``MaxLoRARanks``, ``vllm/config/lora.py:24``; another fails its
``LoRAConfig`` as the engine starts): Trinity gives its rollout's vLLM the one LoRA config's ``lora_rank`` as that
(``common/config_validator.py:806`` to ``:815`` in 0.6.0), so a LoRA run with a vLLM rollout takes these alone."""


def count_range_words(name: str, most: int, given: Any) -> str:
    """How a count outside 1 to `most` is refused, `given` as it was written: ``max_model_len must be a whole number
    from 1 to 16777216, got '-2k'``."""
    return f"{name} must be a whole number from 1 to {most}, got {brief(given)}"


def asked_length(value: Any, name: str = "max_model_len") -> Any:
    """A length as `asked_tokens` reads it (``"64k"``: 65536), as the API takes one; a `QueryError` naming `name` and
    quoting `value` as written (``got '-2k'``, not the -2048 it reads as) where thousands read as no length from 1 to
    `MAX_TOKENS`; any other value as it is, for the caller's checks."""
    read = asked_tokens(value)
    if read is not value and isinstance(read, int) and not 1 <= read <= MAX_TOKENS:
        raise QueryError(count_range_words(name, MAX_TOKENS, value))
    return read


def power_of_two_cut(length: int | None) -> int | None:
    """The power of two of tokens that `length`, N thousands of 1024, likely meant, N being its thousands cut (131k,
    134144 tokens: 131072, which is 128k); None where it is no such length."""
    if length is None or length % 1024:
        return None
    meant = next((2 ** power for power in range(10, MAX_TOKENS.bit_length()) if 2 ** power // 1000 == length // 1024),
                 None)
    return meant if meant != length else None


def cut_thousands_note(given: str, length: int, written: Callable[[int], str]) -> str | None:
    """Where `length` tokens, given as N thousands of 1024 (`given`, in words: ``--len 131k``), are a power of two of
    tokens with its thousands cut (`power_of_two_cut`), that they likely meant it, and how to write it (`written`, given
    its thousands of 1024: ``--len 128k``, ``max_model_len=131072``), as ``solve`` notes it on stderr and
    `solver.plan`'s answers hold it (`Answer.notes`); else None."""
    meant = power_of_two_cut(length)
    if meant is None:
        return None
    return f"{given} is {length} tokens (k is 1024); for {meant} tokens write {written(meant // 1024)}"


SHORT_LENGTH_NOTED = 256
"""The longest length that gets a note suggesting thousands (``--len 256`` may well mean ``256k``)."""


def short_length_note(given: str, length: int, written: Callable[[int], str]) -> str | None:
    """Where `length` tokens (`given`, in words: ``--len``, ``max_model_len``) are at most `SHORT_LENGTH_NOTED`, that
    they may have been meant as thousands, and how to write that (`written`, given its thousands of 1024: ``--len
    64k``, ``max_model_len=65536``): the power of two whose thousands they cut where they do (`power_of_two_cut`:
    ``131`` is written ``128k``, which `cut_thousands_note` says of ``131k``), as ``solve`` notes it on stderr and
    `solver.plan`'s answers hold it (`Answer.notes`); else None."""
    if length > SHORT_LENGTH_NOTED:
        return None
    meant = power_of_two_cut(length * 1024) or length * 1024
    return f"{given} {length} is {counted(length, 'token')}; for {meant} tokens write {written(meant // 1024)}"


def vllm_lora_rank_refusal(rank: int, lora_on: bool = False) -> str | None:
    """Why a LoRA run of `rank` (above 0) cannot start a vLLM rollout (`VLLM_LORA_RANKS`), in words that follow the
    rank's name; None for a rank vLLM takes, and for 0 (no LoRA) unless `lora_on` (vLLM is given 0 with LoRA on)."""
    if rank == 0 and not lora_on or rank in VLLM_LORA_RANKS:
        return None
    return vllm_lora_rank_words(str(rank))


def vllm_lora_rank_words(shown: str) -> str:
    """Why vLLM refuses the ``max_lora_rank`` written `shown` (`VLLM_LORA_RANKS`), in words that follow the rank's
    name."""
    return (f"{shown}, which Trinity gives the rollout's vLLM as its max_lora_rank: vLLM 0.19.1 takes "
            f"{', '.join(map(str, VLLM_LORA_RANKS[:-1]))} or {VLLM_LORA_RANKS[-1]} alone, and fails as the rollout "
            "starts")


MAX_JOBS = 20_000
"""The most jobs a cluster file may list."""
MAX_CELLS = 2048
"""The most cells one GPU type's tables may have (a cells file's: each is a measured run; the shipped files have
about 270): `solve calibrate` fits 2048 within a minute (docs/tables.md), and its linear program grows faster than
the cells."""
MAX_TRAIN_BATCH = 1 << 24
"""The largest train batch (experiences per training step) a query, a job or a Trinity config may give."""

MAX_GPU_MEMORY_GB = 1 << 12
"""Far more memory than any GPU has (4 TB), and below the least MiB a GPU type may report (`LEAST_DRIVER_MIB`): a
driver's MiB figure given as GB (nvidia-smi's 15360 for a T4) is never taken for a GPU's GB (`mib_as_gb_hint`)."""
CONFIG_SHAPE = " (config shape)"
"""Added to the name of a --model-config model whose shape is not that of the catalogue model it names."""
MAX_NODE_GPUS = 16
"""The most GPUs a node may have, as ``--node-gpus``, the API's ``node_gpus``, a Trinity config's
``cluster.gpu_per_node`` and a cluster file's ``gpus_per_node`` give it: one host (HGX boards have 8; the largest
hosts 16). It also bounds the ways to fill a node that the placement weighs, which grow as the partitions of its
size."""
NODE_IS_ONE_HOST = (f"a node is one host, Trinity's cluster.gpu_per_node, and the largest hosts have {MAX_NODE_GPUS} "
                    "GPUs: give more GPUs as more nodes")
"""Why a node of more than `MAX_NODE_GPUS` is refused, and what to give instead."""


def node_gpus_range_words(name: str, given: Any) -> str:
    """How a node size outside 1 to `MAX_NODE_GPUS` is refused (`count_range_words`), one above it with why
    (`NODE_IS_ONE_HOST`): ``node_gpus must be a whole number from 1 to 16, got 64 (a node is one host, ...)``."""
    above = isinstance(given, int) and given > MAX_NODE_GPUS
    return count_range_words(name, MAX_NODE_GPUS, given) + (f" ({NODE_IS_ONE_HOST})" if above else "")
MAX_HOST_RAM_GB = 48 * 1024
"""The most host memory per node a request or a pool may give, GiB (48 TB): the most one system is sold with (HPE's
Superdome Flex, 32 sockets: 48 TB; its successor, the Compute Scale-up Server 3200: 32 TB), far past any plan's host
need, so a larger node loses nothing by giving it. It is below ``free -m``'s total (MiB) of a node from 64 GB, so
that figure given as GB (515870 for 512 GB) is refused with both readings (`host_mib_as_gb_hint`), not taken."""
MAX_ESTIMATED_GPUS = 64
"""The most trainer GPUs the memory model's estimates consider (eight nodes of eight)."""

DRIVER_SHARE = (0.85, 1.05)
"""The driver's MiB over the GB a GPU is sold with, times 1024: 0.937 (L40S) to 1.0 in the catalogue."""
LEAST_DRIVER_MIB = 8192
"""The least memory a GPU type of your own may report: below it, no whole GB is sure to be its."""
LEAST_GPU_MEMORY_GB = LEAST_DRIVER_MIB // 1024
"""The least memory as sold a GPU type of your own may have, the same floor: smaller cards lie far outside what
the memory model was fitted on."""


def mib_as_gb_hint(value: int, mib_form: str) -> str:
    """For a figure given as GB past `MAX_GPU_MEMORY_GB` that a GPU's driver may report in MiB (nvidia-smi's total):
    `` (no GPU has 15360 GB; if it is nvidia-smi's total in MiB, 15.0 GiB, give 15360MiB)``, with `mib_form`, how
    to give it in MiB; "" for any other figure."""
    if not MAX_GPU_MEMORY_GB < value <= MAX_GPU_MEMORY_GB * 1024 or value < LEAST_DRIVER_MIB:
        return ""
    return f" (no GPU has {value} GB; if it is nvidia-smi's total in MiB, {value / 1024:.1f} GiB, give {mib_form})"


def tenths_down(gib: float) -> float:
    """`gib` rounded down to a tenth: a node's host memory read from a finer unit, never more than the node has."""
    return floor(gib * 10) / 10


BARE_HOST_RAM_GB = 4096
"""The most GB a node's host memory written as a bare number is taken as (4 TB), wherever a person writes it:
``--host-ram`` without a unit and a cluster file's ``host_ram_gb`` (`read_host_ram`). ``free -m``'s total of any node of
more than 4 GB is past it, and so is ``/proc/meminfo``'s of any node, so a bigger number is refused naming the unit
each reading needs, not taken as GB; a node of more than 4 TB is given with its unit (``6TB``, ``6144GB``). Python's
numbers (the API's ``host_ram_gb=``, a `Pool` built in Python) are GiB up to `MAX_HOST_RAM_GB`."""
HOST_MEMORY_UNITS = {"t": 1024.0, "g": 1.0, "m": 1 / 1024, "k": 1 / 1024**2}
"""What `read_host_ram` reads a unit's first letter as, in GiB: GB as RAM is sold are GiB, and so TB, MB (``free -m``'s
MiB) and kB (``/proc/meminfo``'s KiB) are binary too."""
HOST_MEMORY_UNIT = re.compile(r"\s*([tgm](?:ib|b|i)?|kib|kb)\s*$", flags=re.IGNORECASE)
"""A unit `read_host_ram` takes after the number: TB, GB, MB (or MiB, ``free -h``'s Gi, M) and kB (or KiB; a ``k``
alone is not one: ``--len 32k`` counts thousands)."""
HOST_MEMORY_FORMS = "512, 512GB, 512GiB, 2TB, 503Gi (free -h), 515870MiB (free -m) or 528280000kB (/proc/meminfo)"
"""The forms `read_host_ram` accepts, as its refusals name them."""
LOADING_HOST_NEED = "the model while it loads, beside the reference model's pinned shards"
"""What a node's host memory need holds without Offload (`solver.memory.host_memory_gib`): verl reads the model in
fp32 before FSDP shards it (`LOADING_HOST_DETAIL`), while the reference model's pinned shards, built first, are held."""
LOADING_HOST_DETAIL = "verl reads it in fp32 before FSDP shards it, beside the reference model's pinned shards"
"""How the model's load takes a node's host memory (`LOADING_HOST_NEED`), where a line about loading says it."""
OFFLOAD_HOST_NEED = ("the actor's states and the reference model's shards, or the model while it loads beside both "
                     "models' pinned shards, whichever is more")
"""What a node's host memory need holds with Offload (`solver.memory.host_memory_gib`): its share of the states
while training, or what loading takes with the actor's pinned parameter shards there too."""
LOADING_ALONE_DETAIL = "verl reads it in fp32 before FSDP shards it; no reference model"
"""`LOADING_HOST_DETAIL` for a run that builds no reference model (``--no-reference``)."""
OFFLOAD_ALONE_NEED = ("the actor's states, or the model while it loads beside the actor's pinned shards, whichever is "
                      "more; no reference model")
"""`OFFLOAD_HOST_NEED` for a run that builds no reference model (``--no-reference``)."""
LOADING_ALONE_NEED = "the model while it loads; no reference model"
"""`LOADING_HOST_NEED` for a run that builds no reference model (``--no-reference``)."""
HOST_NEED_WORDS = f"{LOADING_HOST_NEED}; with Offload, {OFFLOAD_HOST_NEED}"
"""What a node's host memory need holds, with Offload or not, where one text says both."""


SMALL_HOST_RAM_GIB = 8
"""The host memory per node (GiB) below which a figure gets a note that it reads as GiB: no GPU node has less, so
``--host-ram 256MB`` (0.2 GiB: MB are ``free -m``'s MiB) was likely meant as 256 GB, and a pool's ``host_ram_gb: 1.5``
as 1.5 TB (`_likely_host_ram`)."""


HOST_RAM_UNITS = "GB as sold; MB are free -m's MiB"
"""How --host-ram and a pool's host_ram_gb read a figure, for the note on one too small (`small_host_ram_note`)."""


def _likely_host_ram(gib: float, as_written: str = "") -> tuple[float, str]:
    """What a node's host memory of `gib` GiB, below any GPU node's, was likely meant as, from the figure as written
    (`as_written`, ``--host-ram``'s text; "" for a number of GB): that figure a unit up, as its amount and unit:
    ``256MB`` (``free -m``'s MiB, read to a tenth of a GiB) as ``(256, "GB")``, ``2`` or ``2GB`` as ``(2, "TB")``;
    a figure in TB as its GiB in TB."""
    unit = HOST_MEMORY_UNIT.search(as_written)
    scale = HOST_MEMORY_UNITS[unit[1][0].lower()] if unit else 1
    if unit is None or scale >= 1:
        return gib, "TB"
    return ascii_number(as_written[:unit.start()]) * scale * 1024, "GB"


def host_ram_text_told(gib: float, as_written: str) -> bool:
    """Whether the figure `as_written` (``256MB``), read as `gib` GiB, tells the note on a host memory too small
    (`small_host_ram_note`) more than `gib` does: a unit below GB, whose figure the likely meaning keeps (the note's
    ``for 256 GB``, not the ``0.2 TB`` of its GiB). Where not (``2TB``, ``256GB``, ``515870MiB``), the text adds
    nothing to the GiB figure."""
    return gib < SMALL_HOST_RAM_GIB and _likely_host_ram(gib, as_written) != _likely_host_ram(gib)


def small_host_ram_note(given: str, gib: float, written: Callable[[float, str], str], units: str,
                        as_written: str = "") -> str | None:
    """Where `gib` of host memory per node (`given`, in words: ``--host-ram``) is below `SMALL_HOST_RAM_GIB`, that it
    reads as GiB (`units` saying how the figure is read), and how to write what it likely meant (`_likely_host_ram`,
    from the figure `as_written`, where known), given its amount and unit (`written`: ``--host-ram 256GB``,
    ``host_ram_gb=2048``); else None."""
    if gib >= SMALL_HOST_RAM_GIB:
        return None
    amount, unit = _likely_host_ram(gib, as_written)
    return (f"{given} reads as {shown_number(gib)} GiB per node, less than any GPU node has ({units}); for "
            f"{shown_number(amount)} {unit} write {written(amount, unit)}")


def host_need_purpose(offload: bool, critic: CriticStates | None = None) -> str:
    """What a node's host memory need is for, in words, as a plan's ``host memory`` row and ``solve memory``'s line
    say it: ``for Offload``, ``for Offload and the critic's offloaded states`` (a PPO `critic` whose states are in host
    memory while the actor trains, `HOST_HELD_CRITICS`), ``for the critic's offloaded states`` without Offload, else
    ``while the model loads``."""
    held = critic in HOST_HELD_CRITICS
    if offload:
        return "for Offload and the critic's offloaded states" if held else "for Offload"
    return "for the critic's offloaded states" if held else "while the model loads"


def host_moment_words(training_gib: float | None, loading: ModelLoading, offload: bool,
                      critic: CriticStates | None) -> str:
    """Which moment a host memory need is, with the ranks that load the model (`LOADING_WORDS`) where it is the load's,
    in words: where training holds less than loading at start-up (`training_gib`, as shown; None: training is the
    peak, or there is none of its own), ``at start-up, every rank loading the model; 1308.8 while training``; where
    there is no training moment (no Offload, no critic held in host memory), ``every rank loading the model``; ""
    otherwise."""
    if training_gib is not None:
        return f"at start-up, {LOADING_WORDS[loading]}; {training_gib:.1f} while training"
    return "" if offload or critic in HOST_HELD_CRITICS else LOADING_WORDS[loading]


def host_need_detail(offload: bool, reference_model: bool, critic: CriticStates | None = None,
                     critic_gib: float | None = None) -> str:
    """What a node's host memory need holds, for a line that says why it is so large: with `offload`, the states or the
    load (`OFFLOAD_HOST_NEED`), without, the load (`LOADING_HOST_DETAIL`), each with the reference model's shards
    where the run builds one (`reference_model`) and naming that there is none where not; with a PPO `critic` whose
    states are in host memory while the actor trains (`HOST_HELD_CRITICS`), its states too (with their share of a
    node's, `critic_gib`, where given: ``the critic's states (131.4 GiB)``), or the load."""
    if critic in HOST_HELD_CRITICS:
        critics = "the critic's states" if critic_gib is None else f"the critic's states ({critic_gib:.1f} GiB)"
        if not reference_model:
            states = f"the actor's states and {critics}" if offload else critics
            beside = " beside the actor's pinned shards" if offload else ""
            return f"{states}, or the model while it loads{beside}, whichever is more; no reference model"
        states = f"the actor's states, {critics}" if offload else critics
        pinned = "both models'" if offload else "the reference model's"
        return (f"{states} and the reference model's shards, or the model while it loads beside {pinned} pinned "
                "shards, whichever is more")
    if offload:
        return OFFLOAD_HOST_NEED if reference_model else OFFLOAD_ALONE_NEED
    return LOADING_HOST_DETAIL if reference_model else LOADING_ALONE_DETAIL


def read_host_ram(text: str) -> float:
    """A node's host memory as a person writes it (``--host-ram``, a cluster file's ``host_ram_gb``), in GiB: GB as RAM
    is sold (binary, so GiB): ``512``, ``512GB`` or ``512GiB``; or in TB, as sold (``2TB`` or ``2TiB``: 2048 GiB);
    ``free -h``'s ``503Gi`` and ``1.5Ti`` too; ``free -m``'s total with its unit (``515870MiB``), ``/proc/meminfo``'s
    too (``528280000kB``), to a tenth of a GiB (rounded down, as messages show it: ``--host-ram 503.7 GiB``). Without a
    unit, at most `BARE_HOST_RAM_GB`: past it, the refusal names the unit each reading of the number needs. At most
    `MAX_HOST_RAM_GB` in all. `QueryError`, naming the amount as given, for anything else."""
    unit = HOST_MEMORY_UNIT.search(text)
    amount = text if unit is None else text[:unit.start()]
    try:
        scale = HOST_MEMORY_UNITS[unit[1][0].lower()] if unit else 1
        value = ascii_number(amount) * scale
    except QueryError:
        raise QueryError(f"expected {HOST_MEMORY_FORMS}, got {brief(text)}") from None
    if scale < 1 and isfinite(value):  # MiB or kB: to a tenth of a GiB, rounded down (never more than the node has)
        value = tenths_down(value)
    return checked_host_ram(value, text.strip(), bare=unit is None)


def checked_host_ram(value: float, written: str, *, bare: bool) -> float:
    """`value` GiB of a node's host memory, as a person wrote it (`written`; `bare`: a number without a unit, which is
    GB up to `BARE_HOST_RAM_GB`); `QueryError` naming it as written past that (with the unit each reading of it needs)
    or outside 0 to `MAX_HOST_RAM_GB` (as `check_host_ram`, but naming the amount as given: -1TB, not -1024)."""
    readings = _unit_readings(written, value) if bare and value > BARE_HOST_RAM_GB else ""
    if readings:
        raise QueryError(f"a number without a unit is GB up to {BARE_HOST_RAM_GB}, got {cut(written)}: give its "
                         f"unit, {readings}")
    if not 0 < value <= MAX_HOST_RAM_GB:
        raise QueryError(f"must be above 0 and at most {MAX_HOST_RAM_GB} GB, got {cut(written)}")
    return value


def host_ram_argument(gib: float) -> str:
    """``--host-ram``'s argument that `read_host_ram` reads as `gib`: the number, with its unit past
    `BARE_HOST_RAM_GB` (``6144GB``), which a bare number is not taken as."""
    return f"{shown_number(gib)}{'GB' if gib > BARE_HOST_RAM_GB else ''}"


def _unit_readings(amount: str, value: float) -> str:
    """What a number `amount` (`value`, past `BARE_HOST_RAM_GB`) given without a unit may be, each with the unit that
    says so and its GiB where that is not the number: ``free -m``'s MiB and ``/proc/meminfo``'s kB (for a whole number
    that they make at least 1 GiB and at most `MAX_HOST_RAM_GB`), GB (at most that), joined by "or"; "" for none."""
    whole = amount.isdigit()
    readings = [f"{amount}{unit} if it is {source} ({tenths_down(value * scale):.1f} GiB)"
                for unit, source, scale in (("MiB", "free -m's total", 1 / 1024),
                                            ("kB", "/proc/meminfo's MemTotal", 1 / 1024**2))
                if whole and 1 <= value * scale <= MAX_HOST_RAM_GB]
    readings += [f"{amount}GB if it is GB"] if value <= MAX_HOST_RAM_GB else []
    return " or ".join(readings)


def host_mib_as_gb_hint(value: float, gib_form: str) -> str:
    """For a node's host memory given as GB past `MAX_HOST_RAM_GB` that ``free -m`` may print in MiB: `` (no node has
    515870 GB; if it is free -m's total in MiB, 503.7 GiB, give --host-ram 503.7)``, with `gib_form`, how to give an
    amount (``--host-ram ``), before the GiB, cut to tenths (never more than the node has); "" for any other figure."""
    if not MAX_HOST_RAM_GB < value <= MAX_HOST_RAM_GB * 1024:
        return ""
    gib = shown_number(tenths_down(value / 1024))
    return f" (no node has {shown_number(value)} GB; if it is free -m's total in MiB, {gib} GiB, give {gib_form}{gib})"


InterconnectName = Literal["nvlink", "infinity-fabric", "pcie"]
"""The interconnects a GPU type may state, by name (`Interconnect` checks one as a field)."""

NodeInterconnect = Literal["infiniband", "roce", "ethernet"]
"""How a pool's nodes reach one another, as a cluster file states it (``node_interconnect``)."""

FAST_NODE_INTERCONNECTS: tuple[NodeInterconnect, ...] = ("infiniband", "roce")
"""The node interconnects fast enough for a trainer across nodes, whose FSDP gathers and reduces every layer between
them every step: no caution then (`solver.results.trainer_spans_nodes_caution`)."""

INTERCONNECTS: tuple[str, ...] = get_args(InterconnectName)
"""The interconnects a GPU type may state, as a refusal of another lists them."""

INTERCONNECTS_BY_OTHER_NAMES = {
    "xgmi": ("infinity-fabric", "amd-smi's and rocm-smi's XGMI links are AMD's Infinity Fabric"),
    "nvswitch": ("nvlink", "NVSwitch joins a node's GPUs by NVLink"),
}
"""Links by another tool's name (rocm-smi --showtopo's XGMI), with the interconnect each is and why: a refusal of one
(``--gpu-interconnect``, a pool's ``gpu_interconnect``, a cells file's ``interconnect``, `described_gpu_type`) names
the interconnect meant (`interconnect_meant`)."""


NODE_INTERCONNECTS_BY_OTHER_NAMES = {
    "ib": ("infiniband", "IB is InfiniBand"),
    "rocev2": ("roce", "RoCE v2 is RoCE"),
    "roce v2": ("roce", "RoCE v2 is RoCE"),
    "eth": ("ethernet", "eth is Ethernet"),
    "tcp": ("ethernet", "NCCL over TCP sockets runs on Ethernet"),
}
"""Node interconnects by the short names admins write (``IB``), with the one each is and why: a pool's
``node_interconnect`` refused names the one meant (`interconnect_meant`)."""


def interconnect_meant(written: object,
                       other_names: dict[str, tuple[str, str]] = INTERCONNECTS_BY_OTHER_NAMES) -> str:
    """For an interconnect `written` by another name (`other_names`, in any case: a GPU's links by default, or
    `NODE_INTERCONNECTS_BY_OTHER_NAMES`), the guess of the one it is: ``did you mean 'infinity-fabric'? (...)``; ""
    otherwise."""
    other = other_names.get(written.strip().lower()) if isinstance(written, str) else None
    return f"did you mean {other[0]!r}? ({other[1]})" if other else ""


MEMORY_MODEL_FILE = "memory-model.yaml"
"""The shipped memory model's file in the tables, which `solve calibrate --out` regenerates."""

TrinityVersion = Literal["0.5", "0.6"]
"""The Trinity-RFT releases whose offload keys differ: 0.6 has them under ``trainer`` too, 0.5 refuses those."""

CriticStates = Literal["resident", "offloaded", "reloaded"]
"""Where a PPO critic trained beside the actor keeps its states, by its own FSDP offload flags (verl 0.9.1 and Trinity
0.5's worker alike): on the trainer GPUs throughout (``resident``: no flags); in host memory throughout, its own pass
gathering each layer from there (``offloaded``: FSDP2's ``offload_policy``, which turns the other two flags off,
``engine/fsdp/transformer_impl.py:459-463``; rft-solver writes all three); or in host memory between its own passes and
back on the GPUs for them (``reloaded``: ``param_offload`` and ``optimizer_offload`` without ``offload_policy``, which
its update loads back, ``engine/base.py:314-335``)."""
CRITIC_STATES: tuple[CriticStates, ...] = ("resident", "offloaded", "reloaded")
"""The values of `CriticStates`, as a choice lists them."""
HOST_HELD_CRITICS: tuple[CriticStates, ...] = ("offloaded", "reloaded")
"""The `CriticStates` whose states are in host memory while the actor trains."""
NO_CRITIC: Final = "none"
"""The ``--critic`` value (the API's ``critic=``) that leaves a critic out: a Trinity config's own, which the verdict
and the plans otherwise count as its flags hold it (`TrinityConfig.critic`); where no config is read, the same as none
given."""
CriticChoice = Literal["none", "resident", "offloaded", "reloaded"]
"""What ``--critic`` takes: `NO_CRITIC` or one of `CriticStates`."""
CRITIC_CHOICES: tuple[CriticChoice, ...] = (NO_CRITIC, *CRITIC_STATES)
"""The values of `CriticChoice`, as the option lists them."""


CRITIC_CHOICES_MEANT: Final = {**dict.fromkeys(("cpu", "host", "host-memory", "ram"), "offloaded"),
                               **dict.fromkeys(("gpu", "gpus", "true", "yes", "on"), "resident"),
                               **dict.fromkeys(("false", "no", "off"), "none")}
"""Other words for a critic's choice (`CRITIC_CHOICES`), lower case, hyphens for underscores, with the choice they
mean (`critic_meant`): ``cpu``, 'offloaded', its states in host memory; ``gpu``, ``true``, 'resident', on the GPUs;
``no``, 'none'. ``--critic`` (`solver.cli.parser.OPTION_CHOICES_MEANT`), the API's ``critic=`` and a cluster file's
``critic:`` guess alike, and a choice misspelt (``resdent``) alike too."""


CHOICES_MEANT: Final = {
    **dict.fromkeys(("context", "ctx", "context-len", "context-length", "length", "max-len", "max-length",
                     "max-model-len", "seq", "seq-len", "seqlen", "sequence", "sequence-length", "tokens"), "len"),
    **dict.fromkeys(("gpu", "num-gpus", "gpu-count", "devices", "cards", "trainer-gpus"), "gpus"),
    **dict.fromkeys(("node", "num-nodes", "hosts", "machines", "servers"), "nodes"),
    **dict.fromkeys(("gpu-time", "gpuhours", "gpu-hour", "gpu-h", "gpu-cost", "gpu-seconds"), "gpu-hours"),
    **dict.fromkeys(("models", "model-name"), "model"),
}
"""Choices by other words for them (``--maximize context``, ``--minimize devices``, ``solve map --by context``), hyphens
for underscores, with the choice they mean: a refusal names it where the option takes it, or else where another
option or command takes it (`solver.cli.parser.Parser.elsewhere`: ``solve --minimize hosts``, solve cluster's --minimize
nodes); the API's choices guess alike (`choice_meant`: ``by="length"``, 'len')."""


def choice_meant(value: object, accepted: Iterable[object],
                 other_words: Mapping[str, str] = CHOICES_MEANT) -> str | None:
    """The str choice of `accepted` that `value`, one of none of them, means by another word (`other_words`, in any
    case, underscores for hyphens: ``length``, 'len'; a boolean, as YAML reads ``critic: yes``, as its word), or else
    is closest to in spelling (``min-gpus``: 'min_gpus'): how the command's choices are guessed (``solve map --by
    length``) and the API's (`chosen`); None where it means none."""
    word = str(value).lower() if isinstance(value, bool | str) else ""
    choices = [choice for choice in accepted if isinstance(choice, str)]
    meant = other_words.get(word.replace("_", "-"))
    close = difflib.get_close_matches(word, choices, n=1)
    return meant if meant in choices else (close[0] if close else None)


def critic_meant(value: object) -> str | None:
    """The critic's choice that `value`, one of none of them, means by another word (`CRITIC_CHOICES_MEANT`: ``cpu``,
    'offloaded'; ``critic: yes``, 'resident') or else is closest to in spelling (``resdent``: 'resident'), as
    `choice_meant` guesses; None where it means none."""
    return choice_meant(value, CRITIC_CHOICES, CRITIC_CHOICES_MEANT)


def check_critic(name: str, critic: object) -> None:
    """`QueryError` unless `critic` (given as `name`) is None or one of `CRITIC_CHOICES` (`check_choice`), guessing
    the choice another word for it means (`critic_meant`: ``critic='yes'``, did you mean 'resident'?)."""
    check_choice(name, critic, (None, *CRITIC_CHOICES), meant=lambda: critic_meant(critic))


def counted_critic(choice: CriticChoice | None) -> CriticStates | None:
    """The critic a ``--critic`` `choice` counts where no config is read: None for `NO_CRITIC` and for none given."""
    return None if choice is None or choice == NO_CRITIC else choice


DPO_CONFLICTS: Final = {"critic": "trains no PPO critic (Trinity's dpo algorithm uses none)",
                        "reference": "without LoRA builds a reference model (Trinity's dpo algorithm uses one)"}
"""What a DPO run does that it is said not to (`dpo_conflict`), in words that follow what says it trains DPO."""
DPO_NO_EXPLORER: Final = ("Trinity trains DPO on a dataset in mode train alone, with no explorer to use them "
                          "(it refuses mode both)")
"""Why a DPO run keeps no rollout GPUs (a cluster job's rollout_gpus, --rollout-gpus), in words that follow them:
``algorithm/algorithm.py:291`` in Trinity 0.6.0, ``:248`` in 0.5.2."""


def dpo_conflict(dpo: bool, critic: CriticChoice | None, reference_model: bool | None,
                 lora_rank: int) -> Literal["critic", "reference"] | None:
    """Why a DPO run (`dpo`) cannot be as said, a key of `DPO_CONFLICTS`: it is said to train a PPO `critic`
    (``critic``), or without LoRA (`lora_rank` 0) to build no reference model (`reference_model` False:
    ``reference``), where Trinity's dpo algorithm (``DPOAlgorithm``) uses no critic and a reference model; None where
    neither (or not `dpo`)."""
    if not dpo:
        return None
    if counted_critic(critic):
        return "critic"
    return "reference" if reference_model is False and not lora_rank else None

TRINITY_RELEASE = re.compile(r"[vV]?([0-9]+\.[0-9]+)(?:\.([0-9]+))?((?:[.-]?(?:a|b|rc|dev|post)[0-9]*)*)(?:\+[\w.]+)?")
"""A Trinity-RFT release as users write it, its minor version the first group, its patch the second (None where
not written) and its pre- and post-release suffixes the third: ``0.5``, ``0.5.2`` (``pip show trinity-rft``),
``v0.6.0`` (a git tag), ``0.6.0.dev0``, ``0.6.0rc1``, ``0.6.0.post1``, ``0.6.0+cu121`` (a local build)."""
PRE_RELEASE = re.compile(r"a|b|rc|dev")
"""A pre-release's marks in `TRINITY_RELEASE`'s suffixes (``0.6.0.dev0``, ``0.6.0rc1``, ``0.6.0.post1.dev0``): code
from before its release, whose rules may differ from it, so `trinity_release` refuses it as it refuses an unknown
patch; a post-release (``0.6.0.post1``) and a local build (``0.6.0+cu121``) are their release's."""

KNOWN_TRINITY_RELEASES: dict[str, tuple[str, ...]] = {"0.5": ("0", "1", "2"), "0.6": ("0",)}
"""The Trinity releases whose rules rft-solver knows (each wheel's METADATA and code read): each minor version
(`TrinityVersion`) and its patches. Another patch (``0.5.3``, ``0.6.1``) may change them, and is refused."""

HeldExperts = Literal["fused", "separate"]
"""How transformers holds a mixture of experts' routed experts, which decides how FSDP2 shards them (and what a LoRA
adapter on ``all-linear`` adapts of them: ``solver.memory.adapted_shapes``): ``fused``
(transformers 5: ``MixtralExperts``, ``Qwen3MoeExperts``, one ``gate_up_proj`` and one ``down_proj`` tensor per layer
with a row per expert, ``modeling_mixtral.py:70-71`` in 5.12.1, ``:71-72`` in 5.0.0), whose shards by rows hold whole
experts (the fullest GPU the rounded-up count of them), or under Trinity 0.5 are placed as verl 0.7 places them
(``solver.memory.expert_padding``); ``separate`` (transformers 4: an ``nn.ModuleList`` of one gated MLP of
three ``nn.Linear`` per expert, ``modeling_mixtral.py:63-65``, ``:97`` in 4.57.1; ``modeling_qwen3_moe.py:203-205``,
``:222``), each weight sharded over every GPU by its first dimension the GPUs divide, else by its rows padded to a
multiple of them (Trinity 0.5.1's placement: ``solver.memory.shard_padding``)."""
ExpertLayout = Literal["fused", "separate", "either"]
"""How a Trinity release's transformers holds a mixture of experts' routed experts (`HeldExperts`): ``fused`` alone
(0.6's transformers 5), ``separate`` (0.5.1's transformers 4, where the model's type makes them ``nn.Linear``:
``solver.memory.held_experts``), or ``either`` where the release takes transformers 4 or 5 (0.5.0, 0.5.2, 0.5
without its patch), which the memory model counts at the larger of the two: the states' padding and the pinned
host blocks of the layout that holds more on the GPU count, each as verl 0.7 places it
(``solver.memory.expert_padding``), a LoRA adapter as whichever layout adapts more of the model
(``solver.memory.adapter_experts``)."""
LAYOUTS_TAKEN: dict[ExpertLayout, tuple[HeldExperts, ...]] = {
    "fused": ("fused",), "separate": ("separate",), "either": ("fused", "separate")}
"""The layouts (`HeldExperts`) a release holding the routed experts as each `ExpertLayout` may run with: 0.5.0's and
0.5.2's ``either`` transformers 5's and 4's, whose module names LoRA's ``target_modules`` is matched against
(``solver.trinity.checks.lora_targets_problem``, ``solver.query.given_lora_targets``, the LoRA note)."""
SEPARATE_EXPERT_RELEASES = (("0.5", "1"),)
"""The Trinity releases (minor version, patch) whose transformers pin holds the routed experts `separate` alone:
0.5.1's ``transformers<5.0.0,>=4.51.0``. 0.5.0 (``transformers>=4.51.0``) and 0.5.2 (``<=5.3.0,>=4.51.0``) take
transformers 4 or 5, so 0.5 without its patch takes both; 0.6.0 needs ``>=5.12.1``, `fused` alone (each wheel's
METADATA; their verl, 0.7.0 and 0.7.1, pins no transformers). Their ``vllm`` extras pin 4 through vLLM (0.5.2's 0.17.0
to 0.19.0 and 0.5.0's newest, 0.15.1: ``transformers<5,>=4.56.0``), which a trainer's environment may lack."""
EITHER_EXPERT_MINORS = ("0.5",)
"""The minor versions whose other releases (0.5.0, 0.5.2: not `SEPARATE_EXPERT_RELEASES`) take transformers 4 or 5,
and so hold the routed experts `either` way."""

KNOWN_PATCH_RELEASES = tuple(f"{minor}.{patch}" for minor, patches in KNOWN_TRINITY_RELEASES.items()
                             for patch in patches)
"""`KNOWN_TRINITY_RELEASES`, each release with its patch (``0.5.0``, ... ``0.6.0``): the releases
``tables/trinity-fields.yaml`` gives, each of them and no other (`solver.tables.load_trinity_fields`)."""

KNOWN_RELEASE_NAMES = tuple(release for minor, patches in KNOWN_TRINITY_RELEASES.items()
                            for release in (minor, *(f"{minor}.{patch}" for patch in patches)))
"""`KNOWN_TRINITY_RELEASES` as written: ``0.5``, ``0.5.0``, ... ``0.6.0``."""

PATCH_RELEASES_NEWEST_FIRST = tuple(reversed([name for name in KNOWN_RELEASE_NAMES if name.count(".") == 2]))
"""The releases of `KNOWN_RELEASE_NAMES` with a patch, newest first (``0.6.0``, ``0.5.2``, ... ``0.5.0``): the ones
a question that names none may be asked again under, each counting its own host memory."""


def patch_releases_to_ask(named: str | None) -> tuple[str, ...]:
    """The releases of `PATCH_RELEASES_NEWEST_FIRST` that a question naming the Trinity release `named` (as
    `release_name` names it; None: none named) may be asked again under, each counting its own host memory: every one
    where none is named, the patches of a minor version named without its patch (``0.5``, which counts every rank
    loading the model, the most its patches load: 0.5.2, 0.5.1, 0.5.0), none where a patch is named."""
    if named is None:
        return PATCH_RELEASES_NEWEST_FIRST
    return tuple(release for release in PATCH_RELEASES_NEWEST_FIRST if release.startswith(f"{named}."))


TRINITY_RELEASE_FORMS = f"{', '.join(KNOWN_RELEASE_NAMES[:-1])} or {KNOWN_RELEASE_NAMES[-1]} (or a tag of one, v0.5.2)"
"""The releases `trinity_release` takes, as its refusals name them: ``0.5, 0.5.0, 0.5.1, 0.5.2, 0.6 or 0.6.0 (or a
tag of one, v0.5.2)``."""


def counted_expert_layout(value: str | None) -> ExpertLayout:
    """The `ExpertLayout` the memory model counts for the Trinity release `value` (as `trinity_release` takes it;
    None: none named): `separate` where the release's transformers pin allows that alone
    (`SEPARATE_EXPERT_RELEASES`), `either` where it allows both (`EITHER_EXPERT_MINORS`: 0.5, 0.5.0, 0.5.2), else
    `fused` (0.6, none named). A value `trinity_release` refuses counts `fused`."""
    release = _minor_and_patch(value)
    if release is None:
        return "fused"
    if release in SEPARATE_EXPERT_RELEASES:
        return "separate"
    return "either" if release[0] in EITHER_EXPERT_MINORS else "fused"


GPUS_DIVIDE_BATCH_RELEASES = (("0.5", "0"), ("0.5", "1"))
"""The Trinity releases (minor version, patch) that refuse a train batch the trainer GPUs do not divide
(``trinity/common/config_validator.py:860`` in 0.5.0, ``:859`` in 0.5.1); 0.5.2 and 0.6 need only the data-parallel
ranks (GPUs / SP) to divide it (``trinity/trainer/verl/verl_config.py:424`` in 0.5.2)."""

BatchDivisor = Literal["ranks", "gpus", "unsure"]
"""What must divide a run's train batch for its Trinity release (`counted_batch_divisor`): the data-parallel ranks
alone (``ranks``: 0.5.2, 0.6, none named), the trainer GPUs too (``gpus``: 0.5.0 and 0.5.1, a rule the planner keeps
to), or the ranks alone with a caution where the GPUs do not divide it (``unsure``: 0.5 without its patch)."""


def counted_batch_divisor(value: str | None) -> BatchDivisor:
    """The `BatchDivisor` of the Trinity release `value` (as `trinity_release` takes it; None: none named): ``gpus`` for
    the releases that refuse a train batch the trainer GPUs do not divide (`GPUS_DIVIDE_BATCH_RELEASES`), ``unsure``
    for 0.5 without its patch, else ``ranks``. A value `trinity_release` refuses counts ``ranks``."""
    release = _minor_and_patch(value)
    if release in GPUS_DIVIDE_BATCH_RELEASES:
        return "gpus"
    return "unsure" if release == ("0.5", None) else "ranks"


ModelLoading = Literal["verl", "every-rank", "rank-0"]
"""Which of a node's trainer ranks build the whole model on the CPU, in fp32, at start-up (`model_loading`): ``verl``,
verl's own workers' rule, rank 0 for an untied model and every rank for one with tied embeddings (Trinity 0.5.0 and
0.5.1, ``trainer/verl/fsdp_workers.py:379-380`` in 0.5.1); ``every-rank``, tied or not (0.5.2,
``trainer/verl/fsdp_workers.py:386``; 0.6 with FSDP1 or below compute capability 9); ``rank-0``, tied or not (0.6
with FSDP2 where the GPU's major compute capability is 9 or more: ``trainer/verl/monkey_patch.py:111-116`` in 0.6.0,
the legacy workers' ``trainer/verl_legacy/fsdp_workers.py:413-424``)."""
MODEL_LOADINGS: tuple[ModelLoading, ...] = ("verl", "every-rank", "rank-0")
"""The values of `ModelLoading`."""
REFERENCE_ALWAYS_RELEASES = (("0.5", "0"), ("0.5", "1"))
"""The Trinity releases (minor version, patch) that build a reference model without LoRA whatever the algorithm and
its KL terms: verl 0.7.0's ``need_reference_policy`` asks only whether the trainer's role map holds ``RefPolicy``
(``trainer/ppo/utils.py:76``), which Trinity's always does (``trainer/verl_trainer.py:233`` in 0.5.0, ``:231`` in
0.5.1). 0.5.2's verl 0.7.1 builds one only where a KL term reads it (``use_kl_in_reward or use_kl_loss``,
``trainer/ppo/utils.py:76``), which Trinity sets from ``algorithm.kl_penalty_fn`` and ``kl_loss_fn`` other than
``none`` (``trainer/verl/verl_config.py:665-666`` in 0.5.2; dpo forces ``kl_loss_fn`` to k2)."""
REFERENCE_ALWAYS = ("Trinity 0.5.0 and 0.5.1 (verl 0.7.0) build a reference model whatever the algorithm, but with "
                    "LoRA")
"""Why a run on `REFERENCE_ALWAYS_RELEASES` is not said to build no reference model, in a refusal's words."""


def builds_reference_anyway(value: str | None) -> bool:
    """Whether the Trinity release `value` (as `trinity_release` takes it; None: none named) is one of
    `REFERENCE_ALWAYS_RELEASES`, or may be (0.5 without its patch)."""
    release = _minor_and_patch(value)
    return release in REFERENCE_ALWAYS_RELEASES or release == ("0.5", None)


VERL_LOADING_RELEASES = (("0.5", "0"), ("0.5", "1"))
"""The Trinity releases (minor version, patch) whose workers load the model as verl's own do (`ModelLoading`
``verl``); 0.5.2 builds it on every rank."""
RANK_0_LOADING_MINORS = ("0.6",)
"""The minor versions that build the model on rank 0 alone with FSDP2 on a GPU of major compute capability
`RANK_0_LOADING_MAJOR` or more (their default strategy fsdp2)."""
RANK_0_LOADING_MAJOR = 9
"""The least major compute capability (``torch.cuda.get_device_capability(0)[0]``) on which Trinity 0.6 builds the
model on rank 0 alone under FSDP2: Hopper (9.0) and newer; AMD's MI300X and MI325X report HIP's 9.4 (gfx942)."""


def model_loading(release: str | None, strategy: str | None = None, compute_capability: str | None = None,
                  offload: bool = False) -> ModelLoading:
    """Which of a node's trainer ranks load the whole model at start-up (`ModelLoading`) under the Trinity `release`
    (as `trinity_release` takes it; None: none named), its trainer's `strategy` (``fsdp``, ``fsdp2``; None: the
    release's default, fsdp2 from 0.6; with `offload`, FSDP2's CPU offload, fsdp2 whatever it says, as the plans
    write it) on a GPU of `compute_capability` (``9.0``; None: not known). With no release named, a release
    `trinity_release` refuses, or 0.5 without its patch, ``every-rank``: the most any release loads, so that the count
    holds whatever release runs; a capability not known counts below 9."""
    known = _minor_and_patch(release)
    if known in VERL_LOADING_RELEASES:
        return "verl"
    major = re.match(r"\d+", compute_capability or "")
    fsdp2 = offload or (strategy or "fsdp2") == "fsdp2"
    if (known is not None and known[0] in RANK_0_LOADING_MINORS and fsdp2
            and major is not None and int(major.group()) >= RANK_0_LOADING_MAJOR):
        return "rank-0"
    return "every-rank"


def model_loaders(loading: ModelLoading, tied_embeddings: bool) -> ModelLoading:
    """Which ranks `loading` has load a model with `tied_embeddings` or not, ``rank-0`` or ``every-rank``: ``verl``'s
    rule is rank 0 for an untied model, every rank for a tied one."""
    if loading == "verl":
        return "every-rank" if tied_embeddings else "rank-0"
    return loading


def loading_ranks(loading: ModelLoading, tied_embeddings: bool, ranks_on_node: int) -> int:
    """How many of a node's `ranks_on_node` trainer ranks load the whole model at start-up as `loading` says, for a
    model with `tied_embeddings` or not (`model_loaders`): one, or all of them."""
    return 1 if model_loaders(loading, tied_embeddings) == "rank-0" else ranks_on_node


LOWER_HOST_COUNT_MINORS: dict[str, str] = {
    "0.5": "verl 0.7 builds the reference model in bf16 and places the pinned blocks"}
"""The minor versions whose own count of a node's host memory may be below what no release named counts (0.6's: its
reference model in fp32, its pinned blocks by rows: `solver.memory.REFERENCE_BYTES`, `FIRST_EVEN_DIM_RELEASES`), and
why, in words (`lower_host_count_words`): a need that counts a reference model's shards is lower, bf16's half."""


RANK_0_WORDS = "rank 0 alone loads the model"
"""Why a release whose rank 0 alone loads the model counts less where every rank's load is the need, in words."""


def lower_host_count_words(release: str, tied_embeddings: bool, compute_capability: str | None, *,
                           loading_counts: bool = True, reference_counts: bool = True) -> list[str]:
    """Why the Trinity `release` (a name of `KNOWN_RELEASE_NAMES`) may count a node's host memory below what no release
    named counts, for a model with `tied_embeddings` or not on a GPU of `compute_capability`, each in words: its rank 0
    alone loads the model, with Offload or without (`model_loading`, `model_loaders`), where the need counts every
    rank's load (`loading_counts`), and its minor version's own count (`LOWER_HOST_COUNT_MINORS`), where it counts a
    reference model's shards (`reference_counts`); none where it counts as no release named does. The one table of the
    releases that may lift a host memory limit no release named sets (`solver.solve`'s no-plan words) or lower a need
    (`lower_host_count_hint`)."""
    rank_0 = loading_counts and any(
        model_loaders(model_loading(release, None, compute_capability, offload), tied_embeddings) == "rank-0"
        for offload in (False, True))
    minor = _minor_and_patch(release)
    own = LOWER_HOST_COUNT_MINORS.get(minor[0]) if minor is not None and reference_counts else None
    return [words for words in (RANK_0_WORDS if rank_0 else None, own) if words]


def lower_host_count_clause(release: str, tied_embeddings: bool, compute_capability: str | None,
                            named: str | None = None) -> str:
    """Why the Trinity `release` counts a node's host memory below what no release named counts
    (`lower_host_count_words`, each reason), as a clause after the release: ``whose rank 0 alone loads the model and
    whose verl 0.7 builds the reference model in bf16 and places the pinned blocks``; "" where it does not. Where the
    question names `release`'s minor version without its patch (`named`, ``0.5``: `patch_releases_to_ask`), that
    minor version's own count is the question's too: the loading alone says why."""
    why = lower_host_count_words(release, tied_embeddings, compute_capability, reference_counts=named is None)
    return " and ".join(f"whose {words}" for words in why)


@lru_cache(maxsize=1024)
def lower_host_count_hint(release_named: bool, loading: ModelLoading, ranks_on_node: int, load_is_need: bool,
                          reference: bool, tied_embeddings: bool, compute_capability: str | None,
                          release_option: str) -> str:
    """Where no Trinity release is named (`release_named`) and some release counts a node's host memory need lower, that
    naming one counts its own, and why each that does counts less, in words (`lower_host_count_words`, the releases
    of `PATCH_RELEASES_NEWEST_FIRST`): its rank 0 alone loading the model, where the need is the
    model's load at start-up (`load_is_need`) on every rank (`loading`, the most any release loads) of more than one
    trainer rank there (`ranks_on_node`), and its minor version's own count, where the need counts a reference model
    (`reference`), the loading first, each minor version all of whose patches count so named alone
    (`_minors_whole`): ``; --trinity-version counts a release's own, less where rank 0 alone loads the model (0.5.1 and
    0.5.0) or verl 0.7 builds the reference model in bf16 and places the pinned blocks (0.5)`` (naming the release
    as the caller does: `release_option`): the host memory rows' and the unchecked need's caution's; "" otherwise.
    Cached: a pure function of a few plain values, which every plan's cautions ask."""
    if release_named:
        return ""
    loads = loading == "every-rank" and ranks_on_node > 1 and load_is_need
    releases: dict[str, list[str]] = {}
    for release in PATCH_RELEASES_NEWEST_FIRST:
        for words in lower_host_count_words(release, tied_embeddings, compute_capability, loading_counts=loads,
                                            reference_counts=reference):
            releases.setdefault(words, []).append(release)
    if not releases:
        return ""
    why = " or ".join(f"{words} ({and_joined(_minors_whole(named))})"
                      for words, named in sorted(releases.items(), key=lambda item: item[0] != RANK_0_WORDS))
    return f"; {release_option} counts a release's own, less where {why}"


def _minors_whole(releases: list[str]) -> list[str]:
    """`releases` (names of `KNOWN_RELEASE_NAMES` with a patch, in order) with each minor version all of whose patches
    they hold (`KNOWN_TRINITY_RELEASES`) named alone, where its newest was: ``0.6.0, 0.5.1, 0.5.0`` as ``0.6, 0.5.1,
    0.5.0``; ``0.5.2, 0.5.1, 0.5.0`` as ``0.5``."""
    whole = {f"{minor}.{patch}": minor for minor, patches in KNOWN_TRINITY_RELEASES.items()
             if all(f"{minor}.{patch}" in releases for patch in patches) for patch in patches}
    return list(dict.fromkeys(whole.get(release, release) for release in releases))


LOADING_RANKS: dict[ModelLoading, str] = {
    "every-rank": "every rank", "rank-0": "rank 0", "verl": "rank 0 (every rank if tied)"}
"""Which ranks a `ModelLoading` has load the model, in words."""
LOADING_WORDS: dict[ModelLoading, str] = {loading: f"{ranks} loading the model"
                                          for loading, ranks in LOADING_RANKS.items()}
"""`LOADING_RANKS` after ``at start-up``: ``every rank loading the model``."""


def _minor_and_patch(value: object) -> tuple[str, str | None] | None:
    """The minor version and the patch (None where not written) of the Trinity release `value` as `TRINITY_RELEASE`
    reads it; None for a value that is no release, a pre-release (`PRE_RELEASE`), or none rft-solver knows
    (`KNOWN_TRINITY_RELEASES`)."""
    release = _written_release(value)
    if (release is None or PRE_RELEASE.search(release[3]) or release[1] not in KNOWN_TRINITY_RELEASES
            or release[2] not in (None, *KNOWN_TRINITY_RELEASES[release[1]])):
        return None
    return release[1], release[2]


def _written_release(value: object) -> re.Match[str] | None:
    """`value` read as `TRINITY_RELEASE` reads a release (None: it is none), known or not."""
    return TRINITY_RELEASE.fullmatch(value.strip()) if isinstance(value, str) and value.isascii() else None


def release_name(value: str | None) -> str | None:
    """The Trinity release `value` names (as `trinity_release` takes it; None: none named) as rft-solver names it back,
    in a plan's JSON and its check command: its minor version and its patch where written, without a ``v``, a
    post-release's suffix or a local build's label (``v0.5.1``: ``0.5.1``; ``0.6.0+cu121``: ``0.6.0``; ``0.5``); None
    for a value that is no release, or one `trinity_release` refuses (``0.6.0.dev0``, ``0.6.1``, ``0.7``)."""
    release = _minor_and_patch(value)
    return None if release is None else release[0] if release[1] is None else f"{release[0]}.{release[1]}"


def releases_agree(asked: str, running: str) -> bool:
    """Whether a job asked to run on the Trinity release `asked` may run on `running` (each as `release_name` names
    it) without a restart: the same release, or one a patch of the other (``0.5`` and ``0.5.2``); 0.5.1 and 0.5.2, or
    0.5 and 0.6, differ."""
    return asked == running or running.startswith(f"{asked}.") or asked.startswith(f"{running}.")


def release_words(value: str) -> str:
    """The Trinity release `value` (as `trinity_release` takes it) in words: as given, with the release whose rules
    it is read by where that is named otherwise (a post-release, a local build: ``0.6.0+cu121 (read as 0.6.0)``)."""
    given, name = value.strip(), release_name(value)
    return given if name is None or given.lstrip("vV") == name else f"{given} (read as {name})"


def counted_release(version: TrinityVersion | None, experts: ExpertLayout, planned: str | None = None) -> str | None:
    """The release that names what a plan made for the release `planned` (`release_name`'s; None: none named or not
    known) counted, written for the minor version `version` (None: none), its routed experts laid out as `experts`:
    `planned` where it is a release of `version`, as `release_name` names it (``0.5.0``, whose batch rule 0.5 alone
    only cautions; ``0.5.1`` for ``0.5.1.post1``, as a plan's JSON may hold it); else the patch
    that lays them out `separate` alone (``0.5.1``, `SEPARATE_EXPERT_RELEASES`) where they were counted so, else
    `version`; `counted_expert_layout` of it is `experts` where a release of `version` holds them so (0.6's: fused)."""
    release = _minor_and_patch(planned)
    if release is not None and release[0] == version:
        return release_name(planned)
    for minor, patch in SEPARATE_EXPERT_RELEASES:
        if experts == "separate" and minor == version:
            return f"{minor}.{patch}"
    return version


class ReleaseCounts(NamedTuple):
    """What plans for a Trinity release count (`release_counts`): its minor version (`TrinityVersion`, its rules;
    None: none named, 0.6's counts), how its transformers holds the routed experts (`counted_expert_layout`), what must
    divide a train batch (`counted_batch_divisor`), and its name as plans give it back (`release_name`)."""

    version: TrinityVersion | None
    expert_layout: ExpertLayout
    batch_divisor: BatchDivisor
    name: str | None


def release_counts(value: str | None) -> ReleaseCounts:
    """What plans for the Trinity release `value` (as `trinity_release` takes it, whose `QueryError` it raises; None:
    none named) count."""
    return ReleaseCounts(trinity_release("trinity_version", value), counted_expert_layout(value),
                         counted_batch_divisor(value), release_name(value))


def written_layout(version: TrinityVersion | None, experts: ExpertLayout) -> ExpertLayout:
    """How a config written for the minor version `version` holds the routed experts of a plan that counted them as
    `experts` (`counted_release`): 0.5.1's `separate` under 0.5, `fused` under 0.6."""
    return counted_expert_layout(counted_release(version, experts))


def trinity_release(name: str, value: object) -> TrinityVersion | None:
    """The Trinity release `value` names (None: none named) as the minor version whose rules rft-solver knows:
    ``0.5.2`` and ``v0.5.2`` are 0.5. `QueryError` for another release (``0.4.2``, ``0.5.3``, ``0.7``:
    `KNOWN_TRINITY_RELEASES`), a pre-release of any (``0.6.0.dev0``, ``0.6.0rc1``: `PRE_RELEASE`) or a value that is
    no release, naming `name` (the argument it was given as) and the releases taken."""
    if value is None:
        return None
    if not isinstance(value, str):  # a float 0.5 is told to pass the string, as the releases taken are named
        number = isinstance(value, numbers.Number) and not isinstance(value, bool | int)
        hint = (f" (a {type(value).__name__}: pass the string {str(value)!r})"
                if number and str(value) in KNOWN_RELEASE_NAMES else "")
        raise QueryError(f"{name} takes {TRINITY_RELEASE_FORMS}, as a string, or None, got {brief(value)}{hint}")
    release = _minor_and_patch(value)
    known: tuple[TrinityVersion, ...] = get_args(TrinityVersion)
    for minor in known:
        if release is not None and release[0] == minor:
            return minor
    written = _written_release(value)
    why = ""
    if written is not None:
        mark = PRE_RELEASE.search(written[3])
        before = written[0][:written.start(3) + mark.start()].lstrip("vV").rstrip(".-") if mark else ""
        pre_release = f"a pre-release of {before}, whose rules may differ from that release's: " if mark else ""
        why = f" ({pre_release}rft-solver knows the rules of these releases alone)"
    raise QueryError(f"{name} takes {TRINITY_RELEASE_FORMS}, got {brief(value)}{why}")


def planned_release(value: str | None, planned: str = "the plan") -> TrinityVersion | None:
    """The minor version of the Trinity release `value` a plan was counted for (`planned`'s: ``the answer's plan``,
    as `Plan.trinity_version` keeps it; None: none named), as `trinity_release` reads it. `QueryError` for one it
    refuses, as a plan's JSON made before rft-solver knew the patches may name (``0.6.1``, counted by 0.6's rules),
    saying to pass the release to write for (its minor version, whose rules counted it, where rft-solver knows that)
    or to plan it again."""
    try:
        return trinity_release("trinity_version", value)
    except QueryError:
        written = _written_release(value)
        minor = written[1] if written is not None and written[1] in get_args(TrinityVersion) else None
        counted = f"pass version='{minor}' to write it for {minor}, whose rules counted it, or " if minor else (
            "pass version= the release to write it for, or ")
        raise QueryError(f"{planned} was counted for Trinity {brief(value)}, a release whose rules rft-solver does "
                         f"not know: {counted}plan it again with one it knows, {TRINITY_RELEASE_FORMS}") from None


TokenBudgetMode = Literal["default", "auto"]
"""``default``: every plan at Trinity's default ``max_token_len_per_gpu``, ``ceil(2L/s)``, which the tables
measured; ``auto``: an estimated plan whose default does not fit takes a lower one (`lowered_token_budget`)."""

MAX_WORKERS = 1024
"""The most CP-SAT search workers a query may ask for (CP-SAT refuses more than 10000; more than the
machine's cores only slow it down)."""

MAX_TIME_LIMIT_S = 1e9
"""The longest time limit, in seconds (about 30 years): finite, and a number CP-SAT takes."""

DETERMINISTIC_PER_SECOND = 0.6
"""The work the cluster's placement search is given per second of its time limit, in CP-SAT's deterministic time
(`max_deterministic_time`: the solver's count of its work, the same on every run whatever the machine's load), shared
among its stages as `solver.cluster.search.solve_stages` says, so that the same fleet, options and seed give the same
placement on every run; the wall clock (the time limit, less the time the jobs' ways took) is only a safety net, and
the answer names each step it stopped first (`ClusterResult.wall_clock_stopped`). Calibrated on
benchmarks/cluster.py's fleets on the 2-core development machine (benchmarks/README.md): at 0.6 the 1000-job fleet's
search ends in about 5 s of the default 10 s and the 5000-job fleet's in about 50 s of its 60 s, both on their budget,
not the wall clock, with room for a slower machine; 1.0 proves the 1000-job fleet's length and cost stages too (4% more
length) but takes about 8 s there, and leaves the 5000-job fleet to the wall clock on every run."""

WAYS_QUESTIONS_PER_SECOND = 100
"""The planner's new questions that working out the jobs' ways may ask (`solver.cluster.options.fleet_options`), per
second of the time limit: a count, so that where it cuts them short the answer is the same on every run, whatever the
machine's load. They took 2 to 10 ms each on the 2-core development machine (2026-12-04, busy: 498 questions in 2.3 s
for 500 jobs, 460 in 4.5 s for 100), so the count ends them within about half the limit; 1.3 to 2.2 ms at a load of
about 3 (2026-12-05: 1206 in 1.5 s for tests/data/cluster-40-jobs.yaml, 460 in 0.8 s and 738 in 1.6 s for
benchmarks/cluster.py's 100 and 1000 jobs; 5 to 6 ms of wall clock at a load of 12). Kept at 100: a higher count
would not change benchmarks/cluster.py's fleets (they ask 738, the 5000 jobs too, under the 1000 of 10 s), and would
leave the fleets it cuts less of the wall clock for the search after them (and the reasons' share of the ways' time),
so that a busy machine's wall clock would stop more of them first, with answers that differ from run to run; where it
cuts them, the answer names a limit that would likely work them all out (`ClusterResult.ways_time_limit_s`)."""

BUY_WAYS_FACTOR = 2
"""How many times `WAYS_QUESTIONS_PER_SECOND` new questions per second `solve cluster --buy`'s ways may ask: it asks
each job's ways at every evidence tier (the tables' counts, every count on them alone, the estimates' up to 64 trainer
GPUs), since which tier a pool weighs depends on the nodes bought, about one and a half to two times a placement's
(tests/data/cluster-40-jobs.yaml: 1452 against the placement's 1206). At 100 its ways at the default 10 s were cut
after 1031 and no purchase was searched for (`unknown`), though a placement's note names the command; at 200 they
are whole, in about 2.5 s of CPU at a load of 8, and the purchase comes out, its bound proven (216 GPUs of 216)."""

WAYS_WALL_SHARE = 0.6
"""The share of the time limit by which working out the jobs' ways ends on the wall clock, the safety net behind
`WAYS_QUESTIONS_PER_SECOND` (a busy machine): `solver.cluster.options.WaysLimit`."""

AS_IT_RUNS_FLOOR_S = 1.0
"""The seconds of the wall clock from its start that each of the questions asked past the jobs' ways' limit, for a
running job's way as it runs (`solver.cluster.options.fleet_options`), may take where the run's time limit leaves it
fewer (or none: it has passed): a millisecond may leave a mixture of experts' question no answer on a busy machine
(the job would then be told to stop for want of time); a whole ``--time-limit`` each would let a few of them run far
past it. They take milliseconds, so that a second lets each end on its proof, the same answer on every run."""

HINTS_QUESTIONS_PER_SECOND = 20
"""The planner's new questions that the smaller asks of the jobs left out (`solver.cluster.reasons.SmallerAsks`) may
ask, per second of the time limit: a count, so that where it ends them the answer is the same on every run, whatever
the machine's load (the wall clock, until the time kept for the reasons, is the safety net). Their questions are the
ways' kind, a few milliseconds each; a job's asks took 2 to 6 in the fleets measured (docs/examples/smaller-asks.yaml:
6), and benchmarks/cluster.py's fleets none (no idle room): 200 at the default 10 s, a second or two."""

REASONS_QUESTIONS_PER_SECOND = 5
"""The planner's new questions that the reasons of the jobs left out, asked after the search (why the other pools a
job with ways may use have none: `solver.cluster.reasons.unplaced_reasons`), may ask, per second of the time limit: a
count, so that where it ends them the answer is the same on every run (the wall clock, until the time limit, is the
safety net). Their questions are explained, tens of milliseconds each (0.06 to 0.27 s on the busy 2-core development
machine, 2026-12-05: 2 to 3 per job shape); benchmarks/cluster.py's fleets ask 2 to 6 of them: 50 at the default
10 s."""

MAX_TOP = 100
"""The most ranked plans one query may ask for."""

SMALL_CARD_GIB = 48.0
"""On cards of at most this much memory, estimates run optimistic by about `SMALL_CARD_OPTIMISM_GIB`: the usable
fraction's reserve scales with the card, and the CUDA context, NCCL and cuBLAS workspaces do not (docs/memory.md,
"Where we expect the extrapolation to err")."""

NODE_GPUS = 8
"""GPUs per node unless the request says otherwise (a trainer on more GPUs spans nodes)."""

DEFAULT_MARGIN = 0.01
"""The safety margin estimates keep by default: a plan must fit in 99% of the usable memory."""

PAST_NODE_COLUMNS = 5
"""The most budget columns a map of budgets 1 to N past one node shows (those holding N and the four largest powers of
two below it, `doubling_budgets`); fewer, down to `PAST_NODE_FEWEST_COLUMNS`, where these would make it wider than
its width (`map_views`)."""

PAST_NODE_WIDTH = 120
"""The width a map past one node fits where none is given (a pipe without ``COLUMNS``, where a one-node map is whole):
a terminal's usual 120 columns, its model names (up to `MODEL_NAME_WIDTH`) and cells as long as they get."""


def folded_choice(value: Any, accepted: Iterable[object]) -> Any:
    """The str choice of `accepted` that `value` names in another case (``'Resident'``: ``'resident'``), as the
    command takes an option's choices (``--critic Resident``); any other value as it is, for `check_choice` to
    judge."""
    choices = tuple(accepted)
    if not isinstance(value, str) or value in choices:
        return value
    return next((choice for choice in choices
                 if isinstance(choice, str) and choice.casefold() == value.casefold()), value)


def chosen(name: str, value: Any, accepted: tuple[object, ...]) -> Any:
    """The choice of `accepted` that `value` names, in any case, as the command takes an option's choices
    (`folded_choice`: ``objective="Max_Len"`` is ``"max_len"``); `QueryError` naming `name` where it names none
    (`check_choice`), with the choice it likely meant as the command guesses it (`choice_meant`: ``by="length"``, did
    you mean 'len'?)."""
    value = folded_choice(value, accepted)
    check_choice(name, value, accepted, meant=lambda: choice_meant(value, accepted))
    return value


def check_choice(name: str, value: object, accepted: tuple[object, ...], note: str = "", *,
                 meant: Callable[[], str | None] | None = None) -> None:
    """`QueryError` unless `value` is one of `accepted` (and of its type: ``0.5`` is not ``"0.5"``; an array,
    whose ``==`` answers elementwise, is none of them), naming a non-str value that reads as a str choice, else
    saying `note` (in brackets) where given; ending with the choice `meant` guesses where it guesses one (``; did you
    mean 'resident'?``: asked only of a value refused, as guessing compares spellings)."""
    if any(isinstance(value, type(choice)) and value == choice for choice in accepted):
        return
    hint = f" ({note})" if note else ""
    strings = [choice for choice in accepted if isinstance(choice, str)]
    if isinstance(value, numbers.Number) and not isinstance(value, int) and str(value) in strings:  # no 10**5000
        hint = f" (a {type(value).__name__}: pass the string {str(value)!r})"
    guessed = meant() if meant is not None else None
    guess = f"; did you mean {guessed!r}?" if guessed else ""
    raise QueryError(f"{name} must be one of {', '.join(map(str, accepted))}, got {brief(value)}{hint}{guess}")
