"""Argparse types of the ``solve`` commands: counts, lengths in tokens, GPU type names, GPU and host memory, seconds,
paths."""

from __future__ import annotations

import argparse
import contextlib
import os
import re
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Literal, get_args

from solver.tables import (
    LEAST_DRIVER_MIB,
    LEAST_GPU_MEMORY_GB,
    MAX_GPU_MEMORY_GB,
    MAX_NODE_GPUS,
    MAX_TIME_LIMIT_S,
    MAX_TOKENS,
    NODE_IS_ONE_HOST,
    QueryError,
    TokenBudgetMode,
    TrinityVersion,
    and_joined,
    ascii_number,
    brief,
    counted,
    cut,
    empty_name,
    length_forms,
    meant_whole_number,
    mib_as_gb_hint,
    names_a_stream,
    percentage_hint,
    read_host_ram,
    rewritten_note,
    shown_number,
    thousands_of_tokens,
    trinity_release,
    whole_number_note,
)

WHOLE_NUMBER = re.compile(r"\s*([+-]?)([0-9]+)\s*")
"""A whole number as the command line takes it: ASCII digits, a sign, no ``_`` (which int() reads as nothing)."""
PRODUCT = re.compile(r"\s*([1-9][0-9]{0,5})\s*[x*]\s*([0-9]{1,6})\s*", re.IGNORECASE)
"""Two whole numbers multiplied (``2x8``: 2 nodes of 8 GPUs), which a count takes as their product, written out; not
a hexadecimal number (``0x20``), whose ``0`` no count is a multiple of."""


def _within(match: re.Match[str], least: int, most: int) -> int | None:
    """The whole number `match` (of `WHOLE_NUMBER`) reads, if from `least` to `most`; else None (a number of more
    digits than `most` is out of range unread: int() refuses 4300 digits)."""
    digits = match[2].lstrip("0") or "0"
    value = int(match[1] + digits) if len(digits) <= len(str(most)) else None
    return value if value is not None and least <= value <= most else None


def _gpu_words(text: str) -> str:
    """Where `text`, given for a count, names a GPU type, alone (``a100``) or with a count (``2x4090``: not a product
    to write), how to give each, in words; "" otherwise."""
    from solver.tables import load_catalog  # here, not at the top: `solve --version` and help load no pydantic

    catalog = load_catalog()
    with contextlib.suppress(QueryError):
        return f"a GPU type, {catalog.gpu(text).name}: give it to --gpu, and a count here"
    found = catalog.counted_gpu(text)
    if found is None:
        return ""
    return (f"a count and a GPU type, {counted(found.gpus, found.gpu_type.name + ' GPU')}: give the count alone, "
            f"{found.gpus}, and the GPU type to --gpu: --gpu {found.name}")


def whole_number(least: int, most: int, listed: str = "") -> Callable[[str], int]:
    """An argparse type: a whole number from `least` to `most`, written in ASCII digits; out of range, the error names
    both bounds. `listed`: what a list of such numbers (``8,16``) is told, the list in place of ``{}``."""

    def parse(text: str) -> int:
        match = WHOLE_NUMBER.fullmatch(text)
        if match is None:
            product = PRODUCT.fullmatch(text)
            gpus = _gpu_words(text)  # 2x4090: two GPUs of a type, not a product to write
            times = int(product[1]) * int(product[2]) if product and not gpus else None
            numbers = [WHOLE_NUMBER.fullmatch(part) for part in text.split(",")]
            listing = len(numbers) > 1 and all(number is not None and _within(number, least, most) is not None
                                               for number in numbers)
            number = meant_whole_number(text)
            meant = whole_number_note(text) if number is not None and least <= number <= most else ""
            several = listed.format(text.replace(" ", "")) if listed and listing else ""
            in_range = times is not None and least <= times <= most
            written = (f" ({gpus})" if gpus else f" (write the product: {times})" if in_range
                       else f" ({'; or '.join(filter(None, (meant, several)))})" if meant or several
                       else "")
            raise argparse.ArgumentTypeError(f"expected a whole number from {least} to {most}, got {brief(text)}"
                                             f"{written}")
        value = _within(match, least, most)
        if value is None:
            raise argparse.ArgumentTypeError(f"must be a whole number from {least} to {most}, got {cut(text.strip())}")
        return value

    return parse


def node_gpus_count(text: str) -> int:
    """An argparse type: a node's GPUs, a whole number from 1 to `MAX_NODE_GPUS` (`whole_number`); one past it is told
    why, and what to give instead (`NODE_IS_ONE_HOST`); nodes times their GPUs (``2x8``) is told to give the node's
    GPUs here and the product to --gpus, not to write the product."""
    try:
        return _NODE_GPUS(text)
    except argparse.ArgumentTypeError as error:
        product = PRODUCT.fullmatch(text)
        if product is not None and 1 <= int(product[2]) <= MAX_NODE_GPUS:
            nodes, node_gpus = int(product[1]), int(product[2])  # 2x8: two nodes of 8, not a node of 16
            raise argparse.ArgumentTypeError(
                f"expected a whole number from 1 to {MAX_NODE_GPUS}, got {brief(text)} ({nodes} nodes of {node_gpus} "
                f"GPUs: give a node's {node_gpus} here, and the trainer's GPUs in all, {nodes * node_gpus}, to --gpus)"
            ) from None
        match = WHOLE_NUMBER.fullmatch(text)
        past = match is not None and match[1] != "-" and match[2].strip("0") != ""  # above, not 0 or below
        raise argparse.ArgumentTypeError(f"{error} ({NODE_IS_ONE_HOST})" if past else str(error)) from None


_NODE_GPUS = whole_number(1, MAX_NODE_GPUS)


def whole_numbers(least: int, most: int, example: str) -> Callable[[str], tuple[int, ...]]:
    """An argparse type: whole numbers separated by commas (`example`), each as `whole_number` takes it; an empty
    one (``8,``) is refused, and so are numbers that read as one with thousands separators too (``1,024``: 1 and 24,
    or 1024, named as past `most` where it is; ``8,16,1,024`` too: `_thousands_run`), and numbers separated by spaces
    (``'8 16'``), each naming the list meant."""
    each = whole_number(least, most)
    accepted = f"give whole numbers from {least} to {most}, separated by commas ({example})"

    def parse(text: str) -> tuple[int, ...]:
        parts = text.split(",")
        if not all(part.strip() for part in parts):
            raise argparse.ArgumentTypeError(f"an empty number in {brief(text)}: {accepted}")
        spaced = text.split() if len(parts) == 1 else []
        listed = [_within(match, least, most) if (match := WHOLE_NUMBER.fullmatch(part)) else None
                  for part in spaced or parts]
        if len(listed) > 1 and None not in listed:
            meant = ",".join(map(str, listed))
            if spaced:
                raise argparse.ArgumentTypeError(f"expected whole numbers separated by commas, got {brief(text)}: "
                                                 f"give {meant}")
            if (run := _thousands_run(parts)) is not None:
                written = ",".join(part.strip() for part in parts[run[0]:run[1]])
                thousands, whole = int(written.replace(",", "")), run[1] - run[0] == len(parts)
                readings = and_joined([str(number) for number in listed])
                of = "" if whole else f"{written} "
                other = (f", or {of}as {thousands} with a thousands separator" if least <= thousands <= most
                         else f" (not {thousands}, past {most})" if whole
                         else f" ({written} is not {thousands}, past {most})")  # a reading taken is offered, no other
                raise argparse.ArgumentTypeError(f"{brief(text)} reads as {readings}{other}: give whole numbers from "
                                                 f"{least} to {most} without leading zeros, separated by commas "
                                                 f"({meant})")
        return tuple(each(part) for part in parts)

    return parse


def _thousands_run(parts: list[str]) -> tuple[int, int] | None:
    """Where the numbers of a list, `parts` (its text split at commas), read as one with thousands separators too: the
    start and end of the first run of one to three digits followed by groups of exactly three (``1,024`` in
    ``8,16,1,024``); None where none is."""
    digits = [part.strip() if part.strip().isascii() and part.strip().isdigit() else "" for part in parts]
    for start in range(len(parts) - 1):
        end = start + 1
        while end < len(parts) and len(digits[end]) == 3:
            end += 1
        if 1 <= len(digits[start]) <= 3 and end > start + 1:
            return start, end
    return None


def _names(text: str, kind: str, example: str, several: bool) -> tuple[str, ...]:
    """The names of a `kind` (``a GPU type``) that `text` gives, each stripped: with `several`, separated by commas,
    else one; an empty one (``''``, ``a100,``) is refused, in the same words for an option that takes one or several,
    with an `example` of what it takes."""
    names = tuple(name.strip() for name in text.split(",")) if several else (text.strip(),)
    if not all(names):
        more = ", or several separated by commas" if several else ""
        raise argparse.ArgumentTypeError(empty_name(brief(text), f"{kind}{more}", example))
    return names


def comma_names(kind: str, example: str) -> Callable[[str], tuple[str, ...]]:
    """An argparse type: one name of a `kind` (``a GPU type``), or several separated by commas (`example`), each
    stripped; an empty one (``a100,``) is refused."""
    return lambda text: _names(text, kind, example, several=True)


def one_name(kind: str, example: str) -> Callable[[str], str]:
    """An argparse type: one name of a `kind` (``a GPU type``), as written, for the catalogue to resolve (which
    refuses a list, ``a100,h100``, naming what it lists); an empty one (``''``) is refused as `comma_names` refuses
    one."""

    def parse(text: str) -> str:
        _names(text, kind, example, several=False)
        return text

    return parse


gpu_names = comma_names("a GPU type", "a100,h100")
"""One GPU type's name, or several (``a100,h100``): the catalogue's to resolve."""
gpu_name = one_name("a GPU type", "a100")
"""One GPU type's name (``a100``), for a command that takes one."""
model_name = one_name("a model", "4B")
"""One model's name (``4B``), for a command that takes one."""


GPU_MEMORY_UNITS = {"g": "gb", "gb": "gb", "gi": "gib", "gib": "gib", "m": "mib", "mb": "mib", "mi": "mib",
                    "mib": "mib"}
"""What `gpu_memory` reads a unit as, as `host_memory` reads it where a GPU's memory keeps the meaning: GB (or G) as
the card is sold; GiB (or ``free -h``'s Gi) exactly; MiB, and MB, M or Mi, the driver's (nvidia-smi's and gpustat's
totals are MiB). No TB or kB: no GPU's memory is written so."""
GPU_MEMORY_FORMS = ("64, 64G or 64GB (as sold, whole), 64GiB or 79.19GiB (torch's total capacity), or 65536MiB "
                    "(nvidia-smi's total)")
"""The forms `gpu_memory` accepts, as its refusals name them."""


def gpu_memory(text: str) -> tuple[int | None, int | None]:
    """An argparse type: a GPU's memory as (GB as sold, the driver's MiB), one of them None: ``80``, ``80G`` or
    ``80GB`` (taken as GiB by the memory model, as for a catalogue GPU without the driver's figure), whole,
    ``81559MiB`` (nvidia-smi's total; ``81559MB`` and ``81559M`` too), whole, or ``64GiB`` (``64Gi``: 65536 MiB),
    with a fraction too (``79.19GiB``, as torch's out-of-memory error gives the total capacity: 81090 MiB, rounded
    down)."""
    match = re.fullmatch(r"\s*(\d+)(\.\d+)?\s*([a-z]*)\s*", text, flags=re.IGNORECASE) if text.isascii() else None
    unit = GPU_MEMORY_UNITS.get((match[3] or "gb").lower()) if match else None
    if match is None or unit is None or (match[2] and unit != "gib"):
        in_gib = (f" (GB as sold are whole; a total with a fraction is torch's, in GiB: {match[1]}{match[2]}GiB)"
                  if match and match[2] and unit == "gb"
                  and LEAST_GPU_MEMORY_GB <= Decimal(match[1] + match[2]) <= MAX_GPU_MEMORY_GB else "")
        raise argparse.ArgumentTypeError(f"expected {GPU_MEMORY_FORMS}, got {brief(text)}{in_gib}")
    limit = MAX_GPU_MEMORY_GB * (1024 if unit == "mib" else 1)
    least = {"mib": LEAST_DRIVER_MIB, "gib": LEAST_GPU_MEMORY_GB, "gb": LEAST_GPU_MEMORY_GB}[unit]  # described_gpu_type's
    significant = match[1].lstrip("0") or "0"  # int() refuses 4300 digits, leading zeros too
    amount = Decimal(significant + (match[2] or ""))
    if not least <= amount <= limit:
        suffix = {"mib": "MiB", "gib": "GiB", "gb": ""}[unit]
        driver = not match[3] and len(significant) <= len(str(limit * 1024))  # nvidia-smi's MiB, without its unit?
        hint = mib_as_gb_hint(int(significant), f"--gpu-memory {significant}MiB") if driver else ""
        raise argparse.ArgumentTypeError(f"must be from {least}{suffix} to {limit}{suffix or ' (GB)'}, got "
                                         f"{brief(text)}{hint}")
    return (int(amount), None) if unit == "gb" else (None, int(amount * 1024) if unit == "gib" else int(amount))


READS_NAMED_FILES = "reads named files: give /dev/stdin for standard input"
"""Why a file to read is not ``-``, and how to read standard input all the same: every file an option reads (a
Trinity config, a cluster file, --cells ...) is opened by its name, which /dev/stdin is where the system has one."""
PathKind = Literal["file to read", "file or folder to read", "file to write", "folder to write in"]
PATH_WORDS: dict[PathKind, tuple[str, str]] = {
    "file to read": ("a file name", READS_NAMED_FILES),
    "file or folder to read": ("a file or folder name", READS_NAMED_FILES),
    "file to write": ("a file name", ("writes named files; what it would write goes to standard output without "
                                      "the option")),
    "folder to write in": ("a folder name", "writes its files into a named folder, not to standard output"),
}
"""Per kind of path: what `path_argument` expects, and why not ``-``."""


def path_argument(kind: PathKind) -> Callable[[str], Path]:
    """An argparse type: the path of a `kind`, not empty, nor ``-`` (which many read as standard input or output,
    and which would be a file of that name here)."""
    expected, why = PATH_WORDS[kind]

    def parse(text: str) -> Path:
        if not text.strip() or text == "-":
            reason = f" (rft-solver {why})" if text == "-" else ""
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}{reason}")
        return Path(text)

    return parse


def output_path(text: str) -> Path:
    """An argparse type: the name of a file to write (not a folder's, ``out/``, nor a standard stream's,
    ``/dev/stdout``)."""
    path = path_argument("file to write")(text)
    if text.endswith(("/", os.sep)):
        raise argparse.ArgumentTypeError(f"expected a file name, got the folder name {text!r}")
    if names_a_stream(text):
        raise argparse.ArgumentTypeError(f"expected a file name, got {text} (what it would write goes to standard "
                                         "output without the option)")
    return path


def trinity_version(text: str) -> TrinityVersion:
    """An argparse type: ``--trinity-version``, a Trinity-RFT release as `trinity_release` reads it (``0.5.2`` and
    ``v0.5.2`` are 0.5)."""
    try:
        release = trinity_release("--trinity-version", text)
    except QueryError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix("--trinity-version ")) from None
    assert release is not None  # a str names a release or is refused
    return release


def token_budget_mode(text: str) -> TokenBudgetMode:
    """An argparse type: ``solve cluster``'s ``--token-budget``, ``default`` or ``auto`` (one for every job: a cap in
    tokens per GPU is one job's, which solve and solve map take, `planner_token_budget`: `cap_is_one_jobs`)."""
    modes: tuple[TokenBudgetMode, ...] = get_args(TokenBudgetMode)
    for mode in modes:
        if text.casefold() == mode:  # in any case, as a choice (Auto)
            return mode
    from solver.query import cap_is_one_jobs  # pydantic's: only where a mode is refused (help and usage load none)
    from solver.rules import COMMAND_OPTIONS

    raise argparse.ArgumentTypeError(f"takes default or auto, got {brief(text)} ({cap_is_one_jobs(COMMAND_OPTIONS)})")


def planner_token_budget(text: str) -> TokenBudgetMode | int:
    """An argparse type: the planner's ``--token-budget``, ``default``, ``auto`` or the most tokens per GPU any plan
    takes, as `token_count` takes them (``32768`` or ``32k``)."""
    if text.casefold() in get_args(TokenBudgetMode):
        return token_budget_mode(text)
    if not isinstance(thousands_of_tokens(text), int):
        raise argparse.ArgumentTypeError(f"takes default, auto or the most tokens per GPU (a whole number: 32768 or "
                                         f"32k{rewritten_note(text)}), got {brief(text)}")
    return token_count(text)


def token_count(text: str) -> int:
    """An argparse type: a length in tokens, as a cluster file's (`thousands_of_tokens`): a whole number or
    thousands of 1024 (``32k`` = 32768)."""
    tokens = thousands_of_tokens(text)
    if not isinstance(tokens, int):
        raise argparse.ArgumentTypeError(f"expected a whole number, got {brief(text)} ({length_forms(text)})")
    if not 1 <= tokens <= MAX_TOKENS:
        raise argparse.ArgumentTypeError(f"must be a whole number of tokens from 1 to {MAX_TOKENS}, got "
                                         f"{cut(text.strip())}")
    return tokens


def tokens_per_gpu(text: str) -> int:
    """An argparse type: ``solve memory --token-budget``, tokens per GPU as `token_count` takes them; the planner's
    modes (``default``, ``auto``) are refused saying whose they are."""
    if text.casefold() in get_args(TokenBudgetMode):
        raise argparse.ArgumentTypeError(f"expected tokens per GPU (32768 or 32k), got {brief(text)} (leave it out "
                                         "for Trinity's default; auto is the planner's: solve --token-budget auto)")
    return token_count(text)


def number(text: str) -> float:
    """An argparse type: a number written in ASCII (`ascii_number`)."""
    try:
        return ascii_number(text)
    except QueryError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def host_memory(text: str) -> float:
    """An argparse type: a node's host memory, as `read_host_ram` reads it (a bare number is GB up to
    `BARE_HOST_RAM_GB`; past it, with its unit)."""
    try:
        return read_host_ram(text)
    except QueryError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def margin_fraction(text: str) -> float:
    """An argparse type: a safety margin, a fraction from 0 to below 1 (as `resolve_margin` takes it), or a percentage
    written with its sign (``3%``: 0.03), named as typed when out of range (-1e-9, not -1e-09); a bare percentage
    (``3``) is told its fraction."""
    percent = text.strip().endswith("%")
    try:
        value = number(text.strip().removesuffix("%") if percent else text) / (100 if percent else 1)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected a fraction from 0 to below 1 (0.03) or a percentage (3%), got "
                                         f"{brief(text)}") from None
    if not 0 <= value < 1:
        hint = "" if percent else percentage_hint(value)
        raise argparse.ArgumentTypeError(f"must be a fraction from 0 to below 1, got {cut(text.strip())}{hint}")
    return value


SECONDS = re.compile(r"(.*?\d)\s*s\s*")
"""A number of seconds written with their unit, ``s`` (``10s``, ``0.5 s``): the number before it."""


OTHER_TIME_UNIT = re.compile(r"(.*?\d)\s*(ms|msecs?|milliseconds?|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?)\s*",
                             flags=re.IGNORECASE)
"""A time written with a unit other than ``s`` (``500ms``, ``10sec``, ``2m``, ``1.5 h``), which ``--time-limit``
refuses, naming the seconds meant: the number before it, and the unit."""
SECONDS_PER_UNIT = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
"""Seconds in a unit of `OTHER_TIME_UNIT`, by its first letter (``ms`` for milliseconds)."""


def positive_seconds(text: str) -> float:
    """An argparse type: a number of seconds above zero, bare or with an ``s`` (``10``, ``10s``, ``0.5s``); another
    unit (``500ms``, ``10sec``, ``2m``) is refused with the seconds meant (`seconds_meant`)."""
    unit = SECONDS.fullmatch(text)
    try:
        value = number(unit[1] if unit else text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds (10 or 10s), got {brief(text)}"
                                         f"{seconds_meant(text)}") from None
    if not 0 < value <= MAX_TIME_LIMIT_S:
        raise argparse.ArgumentTypeError(f"must be a number above 0 and at most {MAX_TIME_LIMIT_S:.0f}, "
                                         f"got {cut(text)}")
    return value


def seconds_meant(text: str) -> str:
    """For a time written with a unit other than ``s`` (`OTHER_TIME_UNIT`: ``2m``, ``500ms``), the seconds it is, as a
    refusal ends: ``: 2m is 120 seconds, give 120``; "" for anything else, and for seconds --time-limit refuses."""
    written = OTHER_TIME_UNIT.fullmatch(text)
    if written is None:
        return ""
    try:
        amount = number(written[1])
    except argparse.ArgumentTypeError:
        return ""
    unit = written[2].lower()
    seconds = round(amount * SECONDS_PER_UNIT["ms" if unit.startswith(("ms", "mil")) else unit[0]], 6)  # 500ms: 0.5
    if not 0 < seconds <= MAX_TIME_LIMIT_S:  # none that --time-limit takes
        return ""
    return f": {text.strip()} is {shown_number(seconds)} seconds, give {shown_number(seconds)}"
